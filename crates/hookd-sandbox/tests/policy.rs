//! The crate alone, as a reader reuses it without hookd: a `Policy` as data, a `Confinement`
//! prepared from it, a command started by the one spawn path.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use hookd_sandbox::{Confinement, Hold, Network, Policy};

/// Whether this kernel confines; where it does not, the test passes as skipped unless
/// `HOOKD_TEST_REQUIRE` names `sandbox` (`.ci/run` sets it), and then it fails.
fn confinable() -> bool {
    let missing = hookd_sandbox::support().missing();
    if missing.is_empty() {
        return true;
    }
    let required = std::env::var("HOOKD_TEST_REQUIRE").unwrap_or_default();
    assert!(
        !required
            .split(',')
            .any(|f| f.trim() == "sandbox" || f.trim() == "all"),
        "HOOKD_TEST_REQUIRE names sandbox, which this machine lacks: {missing:?}"
    );
    eprintln!("skipped: {missing:?}");
    false
}

/// Where the tests' places go: Cargo's target directory, or /var/lib/hookd-it when that is
/// below /tmp (a confined command has a /tmp of its own, in which only writable places show).
fn outside_tmp() -> std::path::PathBuf {
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !target.starts_with("/tmp") && !target.starts_with(std::env::temp_dir()) {
        return target;
    }
    let alt = std::path::PathBuf::from("/var/lib/hookd-it");
    match std::fs::create_dir_all(&alt) {
        Ok(()) => alt,
        Err(_) => target,
    }
}

/// `script` run by `sh` confined by `policy` in `project`, with `vars`: its output.
fn run(
    policy: &Policy,
    project: &Path,
    script: &str,
    vars: &[(&str, &str)],
) -> std::process::Output {
    let confinement = Confinement::prepare(policy, project).unwrap();
    let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
    let vars = vars.iter().map(|(k, v)| (OsStr::new(*k), OsStr::new(*v)));
    hookd_sandbox::command(Arc::new(confinement), &argv, project, None, vars)
        .output()
        .unwrap()
}

#[test]
fn a_command_writes_its_project_and_nothing_the_policy_holds() {
    if !confinable() {
        return;
    }
    // Outside /tmp: the command gets a /tmp of its own.
    let base = tempfile::tempdir_in(outside_tmp()).unwrap();
    let project = base.path().join("project");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let mut policy = Policy::default();
    policy.network = Network::None;
    policy.places.by_name.push((".git".into(), Hold::Pinned));
    policy
        .places
        .by_name
        .push((".git/hooks".into(), Hold::ReadOnly));
    policy.secret = |name| name == "API_TOKEN";
    let script = format!(
        "echo in > in.txt; echo out > {}/marker; echo hook > .git/hooks/pre-commit; \
         mv .git gone; echo \"token=$API_TOKEN path=$PATH\"; echo tmp > \"$TMPDIR/t\" && echo tmp-ok",
        outside.display()
    );
    let o = run(
        &policy,
        &project,
        &script,
        &[("PATH", "/usr/bin:/bin"), ("API_TOKEN", "s3cret")],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(project.join("in.txt").exists(), "{o:?}");
    assert!(!outside.join("marker").exists(), "{o:?}");
    assert!(!project.join(".git/hooks/pre-commit").exists(), "{o:?}");
    assert!(
        project.join(".git").is_dir() && !project.join("gone").exists(),
        "{o:?}"
    );
    assert!(stdout.contains("token= path=/usr/bin:/bin\n"), "{stdout}");
    assert!(stdout.contains("tmp-ok\n"), "{stdout}");
    // Kept when the policy keeps it.
    policy.keep_env = vec!["API_*".into()];
    let o = run(
        &policy,
        &project,
        "echo \"token=$API_TOKEN\"",
        &[("API_TOKEN", "s3cret")],
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "token=s3cret\n");
}

#[test]
fn a_write_place_and_a_hidden_one_are_as_the_policy_says() {
    if !confinable() {
        return;
    }
    let base = tempfile::tempdir_in(outside_tmp()).unwrap();
    let project = base.path().join("project");
    let extra = base.path().join("extra");
    let secret = base.path().join("secret");
    for d in [&project, &extra, &secret] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(secret.join("key"), "k").unwrap();
    let mut policy = Policy::default();
    policy.write = vec![extra.clone()];
    policy.read_deny = vec![secret.clone()];
    let script = format!(
        "echo x > {}/made; cat {}/key || echo unreadable",
        extra.display(),
        secret.display()
    );
    let o = run(&policy, &project, &script, &[("PATH", "/usr/bin:/bin")]);
    assert!(extra.join("made").exists(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "unreadable\n", "{o:?}");
    // Read-only: not even the project.
    policy.read_only = true;
    let o = run(
        &policy,
        &project,
        "echo x > here || echo refused",
        &[("PATH", "/usr/bin:/bin")],
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "refused\n", "{o:?}");
    assert!(!project.join("here").exists());
}

#[test]
fn two_threads_run_confined_commands_at_once_and_the_callers_handlers_come_back() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    if !confinable() {
        return;
    }
    extern "C" fn mine(_: nix::libc::c_int) {}
    let own = SigAction::new(SigHandler::Handler(mine), SaFlags::empty(), SigSet::empty());
    // SAFETY: a handler that does nothing.
    unsafe { sigaction(Signal::SIGTERM, &own) }.unwrap();
    let dir = tempfile::tempdir_in(outside_tmp()).unwrap();
    let confinement = Arc::new(Confinement::prepare(&Policy::default(), dir.path()).unwrap());
    let started = std::time::Instant::now();
    // One clones pid 1 itself, the other (the first busy) goes by the waiter: both run at once.
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let (c, dir) = (confinement.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                let script = format!("sleep 0.5; echo {i} > out{i}; exit {i}");
                let argv = ["sh".to_string(), "-c".to_string(), script];
                hookd_sandbox::run_command(c, &argv, &dir, None, std::iter::empty()).unwrap()
            })
        })
        .collect();
    for (i, thread) in threads.into_iter().enumerate() {
        assert_eq!(thread.join().unwrap().code(), Some(i as i32));
        let out = std::fs::read_to_string(dir.path().join(format!("out{i}"))).unwrap();
        assert_eq!(out, format!("{i}\n"));
    }
    assert!(started.elapsed() < std::time::Duration::from_millis(950));
    // The caller's own handler is its again.
    // SAFETY: the same handler put back.
    let now = unsafe { sigaction(Signal::SIGTERM, &own) }.unwrap();
    let back =
        matches!(now.handler(), SigHandler::Handler(h) if h as *const () == mine as *const ());
    assert!(back, "the caller's handler was not put back");
}

#[test]
fn a_hidden_place_gone_before_the_start_is_absent_outside_and_stops_the_command_inside() {
    if !confinable() {
        return;
    }
    let base = tempfile::tempdir_in(outside_tmp()).unwrap();
    let project = base.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    // Outside the project: a history file, and a directory of sockets, hidden.
    let history = base.path().join("history");
    let sockets = base.path().join("sockets");
    let kept = base.path().join("kept");
    std::fs::write(&history, "a secret").unwrap();
    std::fs::create_dir_all(&sockets).unwrap();
    std::fs::write(&kept, "another secret").unwrap();
    let mut policy = Policy::default();
    policy.read_deny = vec![history.clone(), sockets.clone(), kept.clone()];
    let confinement = Arc::new(Confinement::prepare(&policy, &project).unwrap());
    // Gone after the preparation, before pid 1 mounts over them (another command's stand-ins
    // in the home, taken away when it ended): the command starts; they are absent to it.
    std::fs::remove_file(&history).unwrap();
    std::fs::remove_dir(&sockets).unwrap();
    let script = format!(
        "test -e {h} && echo there > out || echo absent > out; \
         test -e {s} && echo there >> out || echo absent >> out; cat {k} >> out; echo . >> out",
        h = history.display(),
        s = sockets.display(),
        k = kept.display()
    );
    let argv = ["sh".to_string(), "-c".to_string(), script];
    let path = [(OsStr::new("PATH"), OsStr::new("/usr/bin:/bin"))];
    let status = hookd_sandbox::run_command(confinement, &argv, &project, None, path).unwrap();
    assert!(status.success(), "{status:?}");
    let out = std::fs::read_to_string(project.join("out")).unwrap();
    assert_eq!(out, "absent\nabsent\n.\n");
    // Inside the project the command could make it again: it does not run.
    let inner = project.join("secret");
    std::fs::write(&inner, "s").unwrap();
    policy.read_deny = vec![inner.clone()];
    let confinement = Arc::new(Confinement::prepare(&policy, &project).unwrap());
    std::fs::remove_file(&inner).unwrap();
    let argv = ["sh".to_string(), "-c".to_string(), "touch ran".to_string()];
    let err = hookd_sandbox::run_command(confinement, &argv, &project, None, path).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
    // Said as what failed: the sandbox, not a program that is missing.
    assert_eq!(
        err.to_string(),
        "its sandbox could not be set up: No such file or directory (os error 2)"
    );
    assert!(!project.join("ran").exists());
}
