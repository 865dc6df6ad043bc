//! Issue 25: allowed means confined. Each escape is performed for real: first unconfined
//! (its marker proves it works), then through `hookd exec` and a hook, where it must fail;
//! the work a build does inside the project must still succeed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{json_lines, stderr, stdout, with_stdin, Project};

/// A project whose home, state and temporary directory are not below /tmp (the temporary
/// directory is writable in the sandbox: a home below it would be too).
pub(crate) fn project() -> (Project, PathBuf) {
    let base = crate::support::outside_tmp();
    let p = Project {
        dir: tempfile::tempdir_in(base).unwrap(),
        home: tempfile::tempdir_in(base).unwrap(),
        state: tempfile::tempdir_in(base).unwrap(),
    };
    std::fs::create_dir_all(p.infer()).unwrap();
    let tmp = p.home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(p.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::fs::create_dir_all(p.home.path().join(".ssh")).unwrap();
    std::fs::write(p.home.path().join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
    std::fs::write(p.home.path().join(".profile"), "original\n").unwrap();
    (p, tmp)
}

/// [`project`], with the home writable to confined commands too (`sandbox.write: [HOME]` in
/// the user's layer), as for an agent started in the home: its places must be held.
pub(crate) fn project_with_the_home_writable() -> (Project, PathBuf) {
    let (p, tmp) = project();
    let home = p.home.path().display().to_string();
    p.write_home(
        "config.yaml",
        &format!("sandbox: {{enabled: true, write: ['{home}']}}\n"),
    );
    (p, tmp)
}

/// Whether this machine's kernel can confine (Landlock ABI 3 and user namespaces); the tests
/// that need it say "skipped" where it cannot (the one that removes Landlock runs anywhere).
pub(crate) fn confinable() -> bool {
    let missing = hookd::sandbox::support().missing();
    if !missing.is_empty() {
        crate::support::unavailable(
            "sandbox",
            &format!(
                "this kernel cannot confine: it lacks {}",
                missing.join(" and ")
            ),
        );
    }
    missing.is_empty()
}

/// `hookd exec -- sh -c SCRIPT` in `p`.
fn sh(p: &Project, tmp: &Path, script: &str) -> Command {
    hookd(p, tmp, &["exec", "--", "sh", "-c", script])
}

/// The C program `source` built as `dir/name` (outside /tmp, which the sandbox replaces), or
/// `None`, said, where gcc cannot build one here.
fn c_program(dir: &Path, name: &str, source: &str) -> Option<PathBuf> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let built = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    if built.is_ok_and(|s| s.success()) {
        Some(exe)
    } else {
        crate::support::unavailable("gcc", "gcc cannot build a C program here");
        None
    }
}

pub(crate) fn hookd(p: &Project, tmp: &Path, args: &[&str]) -> Command {
    let mut c = p.cmd(args);
    c.env("TMPDIR", tmp);
    c
}

/// Wait (up to 10 s) until `path` exists, else fail saying `what`.
pub(crate) fn appears(path: &Path, what: &str) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::symlink_metadata(path).is_err() {
        assert!(std::time::Instant::now() < until, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The escapes, each leaving its marker in `$OUT` (a directory of the project the test reads;
/// the temporary directory of a confined command is its own) when it works.
const ESCAPES: &str = r#"
echo pwned >> "$H/.bashrc" && touch "$OUT/home"
ln -s "$H/.profile" link && echo pwned > link && touch "$OUT/symlink"
ln "$H/.profile" hard && echo pwned >> hard && touch "$OUT/hardlink"
mv .infer .infer-old && mkdir .infer && touch "$OUT/rename-infer"
echo 'touch hooked' > .git/hooks/pre-commit && touch "$OUT/git-hooks"
printf '[core]\n\tfsmonitor = touch fsm\n' >> .git/config && touch "$OUT/git-config"
cat "$H/.ssh/id_ed25519" > key && grep -q PRIVATE key && touch "$OUT/read-key"
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") && touch "$OUT/connect"
setsid sh -c 'sleep 0.3; echo late >> "$H/.bashrc" && touch "$OUT/late"' &
echo built > build-output && touch "$OUT/inside"
"#;

/// A listener on loopback, its port.
pub(crate) fn listener() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

pub(crate) fn markers(out: &Path) -> Vec<String> {
    let mut m: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    m.sort();
    m
}

/// Reset the project and home to their state before an attempt.
pub(crate) fn reset(p: &Project) {
    let root = p.path();
    for f in ["link", "hard", "key", "build-output", "hooked"] {
        let _ = std::fs::remove_file(root.join(f));
    }
    if root.join(".infer-old").exists() {
        let _ = std::fs::remove_dir_all(root.join(".infer"));
        std::fs::rename(root.join(".infer-old"), root.join(".infer")).unwrap();
    }
    let _ = std::fs::remove_file(root.join(".git/hooks/pre-commit"));
    let _ = std::fs::remove_file(p.home.path().join(".bashrc"));
    std::fs::write(p.home.path().join(".profile"), "original\n").unwrap();
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    if let Some(at) = config.find("[core]\n\tfsmonitor") {
        std::fs::write(root.join(".git/config"), &config[..at]).unwrap();
    }
}

const ALL: [&str; 10] = [
    "connect",
    "git-config",
    "git-hooks",
    "hardlink",
    "home",
    "inside",
    "late",
    "read-key",
    "rename-infer",
    "symlink",
];

#[test]
fn every_escape_works_unconfined_and_fails_under_hookd_exec() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let (_l, port) = listener();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let env = |c: &mut Command| {
        c.env("H", p.home.path())
            .env("OUT", p.path().join("out"))
            .env("PORT", port.to_string());
    };
    // Unconfined, every escape works (markers land in the temporary directory).
    std::fs::create_dir_all(p.path().join("out")).unwrap();
    let mut c = Command::new("bash");
    c.arg("-c").arg(ESCAPES).current_dir(p.path());
    env(&mut c);
    assert!(c.status().unwrap().success());
    // The delayed escape writes after 0.3 s: wait for every marker.
    let marked = p.path().join("out");
    crate::support::eventually(std::time::Duration::from_secs(5), || {
        markers(&marked) == ALL
    });
    assert_eq!(markers(&marked), ALL);
    reset(&p);
    std::fs::remove_dir_all(p.path().join("out")).unwrap();

    // Confined, only the work inside the project does.
    std::fs::create_dir_all(p.path().join("out")).unwrap();
    let mut c = hookd(&p, &tmp, &["exec", "--", "bash", "-c", ESCAPES]);
    env(&mut c);
    let o = c.output().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(markers(&p.path().join("out")), ["inside"], "{}", stderr(&o));
    assert!(!p.home.path().join(".bashrc").exists());
    assert_eq!(
        std::fs::read_to_string(p.home.path().join(".profile")).unwrap(),
        "original\n"
    );
    assert!(!std::fs::read_to_string(p.path().join(".git/config"))
        .unwrap()
        .contains("fsmonitor"));
    drop(out);
}

#[test]
fn git_work_and_a_build_succeed_confined() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::write(p.path().join("a.txt"), "a\n").unwrap();
    let script = "git add a.txt && git -c user.email=a@b -c user.name=n commit -qm one \
                  && git checkout -qb topic && mkdir -p target/debug && echo bin > target/debug/x \
                  && mv target/debug/x target/x && git log --oneline | wc -l";
    let o = sh(&p, &tmp, script).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "1");
    assert!(p.path().join("target/x").exists());
    // The exit status is passed on.
    let o = sh(&p, &tmp, "exit 7").output().unwrap();
    assert_eq!(o.status.code(), Some(7));
}

#[test]
fn a_hook_runs_confined_when_the_sandbox_is_on() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let (_l, port) = listener();
    std::fs::create_dir_all(p.path().join("out")).unwrap();
    let script = p.path().join("escape.sh");
    std::fs::write(
        &script,
        format!(
            "H='{}'\nOUT='{}'\nPORT={port}\n{ESCAPES}",
            p.home.path().display(),
            p.path().join("out").display()
        ),
    )
    .unwrap();
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\ntools: {bash: {mode: {all: {allow: ['^bash escape\\.sh$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: build, hook: post_session, command: 'bash escape.sh'}]\n",
    );
    let o = with_stdin(
        hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]),
        "{}",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(markers(&p.path().join("out")), ["inside"]);
    let events = json_lines(&stderr(&o));
    let ran: &Value = events.iter().find(|e| e["type"] == "hook_command").unwrap();
    let sandbox = ran["sandbox"].as_str().unwrap();
    assert!(sandbox.ends_with("; network: off"), "{sandbox}");
    assert!(sandbox.contains(&tmp.display().to_string()), "{sandbox}");
}

#[test]
fn a_trusted_project_cannot_switch_the_sandbox_off_or_widen_it() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^sh -c .*$']}}}}\n",
    );
    p.write(
        "config.yaml",
        "sandbox:\n  enabled: false\n  network: true\n  write: ['~']\n",
    );
    let hook = format!(
        "enabled: true\nhooks: [{{name: h, hook: post_session, command: \"sh -c 'echo x > {}/escaped'\"}}]\n",
        p.home.path().display()
    );
    p.write_home("hooks.yaml", &hook);
    let o = with_stdin(
        hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]),
        "{}",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!p.home.path().join("escaped").exists());
    assert!(
        stderr(&o).contains("warning: a project cannot widen where confined commands write; `~` is ignored\n  --> .infer/config.yaml:4:"),
        "{}",
        stderr(&o)
    );
    let ran: Value = stderr(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "hook_command")
        .unwrap();
    assert!(ran["sandbox"].as_str().unwrap().ends_with("network: off"));
}

#[test]
fn sandbox_settings_are_validated_at_their_line() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "sandbox:\n  enabled: yes please\n  write: [relative/dir]\n  netwrok: true\n",
    );
    let o = p.run(&["check"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("error: expected `sandbox.enabled` to be true or false, found `yes please`\n  --> .infer/config.yaml:2:12"),
        "{err}"
    );
    assert!(
        err.contains("error: `sandbox.write` entry `relative/dir` is not an absolute path\n  --> .infer/config.yaml:3:11"),
        "{err}"
    );
    assert!(err.contains("unknown key `netwrok`"), "{err}");
}

/// The landlock syscalls (444–446) fail with ENOSYS, as on a kernel without Landlock.
pub(crate) fn without_landlock(c: &mut Command) {
    use nix::libc;
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl with a filter built before fork; nothing allocates in the child.
    let filter: Vec<libc::sock_filter> = {
        let stmt = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        vec![
            // A = syscall number
            stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
            jump(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, 444, 0, 2),
            jump(libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K, 446, 1, 0),
            stmt(
                libc::BPF_RET | libc::BPF_K,
                libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
            ),
            stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
        ]
    };
    let prog = Box::leak(Box::new(libc::sock_fprog {
        len: filter.len() as u16,
        filter: Box::leak(filter.into_boxed_slice()).as_mut_ptr(),
    }));
    let prog_addr = prog as *const libc::sock_fprog as usize;
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    prog_addr,
                    0,
                    0,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn where_the_kernel_cannot_confine_nothing_runs() {
    let (p, tmp) = project();
    let marker = p.path().join("ran");
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^touch ran$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_session, command: 'touch ran'}]\n",
    );
    // hookd exec: exit 126, naming what is missing.
    let mut c = hookd(&p, &tmp, &["exec", "--", "touch", "ran"]);
    without_landlock(&mut c);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "hookd exec: not run: this kernel cannot confine it: it lacks Landlock (Linux 5.13+, enabled at boot: `lsm=…,landlock`)\n"
    );
    assert!(!marker.exists());
    // A hook: skipped, its cause saying so.
    let mut c = hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]);
    without_landlock(&mut c);
    let o = with_stdin(c, "{}");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!marker.exists());
    let skipped = json_lines(&stderr(&o))
        .into_iter()
        .find(|e| e["type"] == "hook_command_skipped")
        .unwrap();
    assert_eq!(skipped["reason"], "sandbox_unavailable");
    assert!(skipped["detail"]
        .as_str()
        .unwrap()
        .starts_with("this kernel cannot confine it: it lacks Landlock"));
    // The model's shell call: denied with the reason, not rewritten into one that cannot run.
    let payload = crate::support::pre_tool_payload(
        p.path(),
        "Bash",
        serde_json::json!({"command": "touch ran"}),
    );
    let mut c = hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
    without_landlock(&mut c);
    let o = with_stdin(c, &payload.to_string());
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny", "{r}");
    assert!(r["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .starts_with("hookd refused this Bash call: the sandbox is on and this machine's kernel cannot confine it (it lacks Landlock"));
    // `hookd check` says so, and `--strict` fails on it.
    let mut c = hookd(&p, &tmp, &["check", "--strict"]);
    without_landlock(&mut c);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("sandbox: on: hooks and `hookd exec` run confined: writes only in "),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("; network off; this kernel cannot enforce it: it lacks Landlock"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("\n  the sandbox is on and this kernel cannot enforce it (it lacks Landlock (Linux 5.13+, enabled at boot: `lsm=…,landlock`)): every hook would be skipped\n"),
        "{}",
        stderr(&o)
    );
    // Without the filter the same hook runs (where the sandbox works).
    if !confinable() {
        return;
    }
    let o = with_stdin(
        hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]),
        "{}",
    );
    assert!(o.status.success());
    assert!(marker.exists(), "{}", stderr(&o));
    let check = stdout(&p.run(&["check"]));
    assert!(
        check.contains("; network off; this kernel enforces it with Landlock ABI "),
        "{check}"
    );
}

#[test]
fn a_cargo_build_succeeds_confined_and_its_build_script_cannot_reach_home() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    // The toolchain this test was built with, found beside its cargo.
    let cargo = Path::new(env!("CARGO"));
    let bin = cargo.parent().unwrap();
    std::fs::write(
        p.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.path().join("src")).unwrap();
    std::fs::write(p.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(
        p.path().join("build.rs"),
        format!(
            "fn main() {{ let ok = std::fs::write({:?}, \"pwned\").is_ok(); println!(\"cargo:warning=home write: {{ok}}\"); }}\n",
            p.home.path().join(".bashrc")
        ),
    )
    .unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "cargo", "build", "--offline"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("CARGO_HOME", p.home.path().join(".cargo"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("home write: false"), "{}", stderr(&o));
    assert!(p.path().join("target/debug/demo").exists());
    assert!(!p.home.path().join(".bashrc").exists());
}

/// With the home writable (an agent started in it) and no `~/.cargo/config.toml` (the usual
/// case: rustup makes `~/.cargo`, not the file), cargo builds confined: the file's stand-in is
/// shown to cargo as an empty file, not as the socket it is on disk, which failed every cargo
/// command ("could not load Cargo configuration": attack round 27, F1); and nothing written
/// there stays, cargo's `rustc-wrapper` there being what the user's next build would run.
#[test]
fn a_cargo_build_succeeds_confined_in_a_writable_home_without_cargos_configuration() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    let cargo = Path::new(env!("CARGO"));
    let bin = cargo.parent().unwrap();
    std::fs::create_dir_all(p.home.path().join(".cargo/bin")).unwrap();
    std::fs::write(
        p.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.path().join("src")).unwrap();
    std::fs::write(p.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    // What is written there goes nowhere (`/dev/null`), and reads back empty.
    let script = "cargo build --offline && { printf '[build]\\nrustc-wrapper = \"/bin/true\"\\n' > ~/.cargo/config.toml; wc -c < ~/.cargo/config.toml; }";
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "0", "{}", stderr(&o));
    assert!(p.path().join("target/debug/demo").exists());
    assert!(
        p.home
            .path()
            .join(".cargo/config.toml")
            .symlink_metadata()
            .is_err(),
        "the stand-in was left, or the command made the file"
    );
}

#[test]
fn a_repository_cannot_widen_the_sandbox_through_the_agents_environment() {
    if !confinable() {
        return;
    }
    // The repository sets, for its agent, a HOME whose config.yaml lets confined commands write
    // everywhere, and a TMPDIR that is the user's home. The agent's shell then runs the
    // rewritten call with that environment.
    // The user's real home must be outside /tmp (which the sandbox lets commands write, and
    // which holds everything when the repository is checked out there): a directory below
    // this process's own home stands for it.
    let Some(base) = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_dir() && !h.starts_with("/tmp") && h != Path::new("/"))
    else {
        crate::support::unavailable(
            "home",
            "this process's HOME is not a directory outside /tmp",
        );
        return;
    };
    let real = tempfile::tempdir_in(&base).unwrap();
    let (p, tmp) = project();
    let fake = p.path().join("fakehome");
    std::fs::create_dir_all(fake.join(".infer")).unwrap();
    std::fs::write(
        fake.join(".infer/config.yaml"),
        "sandbox: {enabled: true, network: true, write: ['/']}\n",
    )
    .unwrap();
    let real_home = real.path().display().to_string();
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(
        p.path().join(".claude/settings.json"),
        serde_json::json!({"env": {"HOME": fake, "TMPDIR": real_home}}).to_string(),
    )
    .unwrap();
    let attack = format!("echo pwned > {real_home}/.bashrc");
    let o = Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(["exec", "--shell", &attack])
        .current_dir(p.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &fake)
        .env("TMPDIR", real.path())
        .env("HOOKD_STATE_DIR", p.state.path())
        .output()
        .unwrap();
    // The HOME the repository set holds a hookd configuration, which may be the user's (CI) or
    // the repository's: nothing runs (before, the command ran under the user database's home's
    // configuration and Landlock refused the write).
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("set HOME, and the HOME this process had") && err.contains("fakehome"),
        "{err}"
    );
    assert!(!real.path().join(".bashrc").exists());
    drop(tmp);
}

/// Issue 30, item 2: the model's confined command gets the scrubbed environment: what the
/// repository's files set for the agent (here git's configuration, naming a program) is gone.
#[test]
fn a_confined_model_command_does_not_get_what_the_repository_set_for_the_agent() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::write(p.path().join("fsm.sh"), "#!/bin/sh\ntouch fsmonitor-ran\n").unwrap();
    std::fs::set_permissions(
        p.path().join("fsm.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let fsm = p.path().join("fsm.sh").display().to_string();
    let env = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_0", fsm.as_str()),
    ];
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(
        p.path().join(".claude/settings.json"),
        serde_json::json!({"env": std::collections::BTreeMap::from(env)}).to_string(),
    )
    .unwrap();
    let agent_shell = |command: &str| {
        Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(p.path())
            .env("HOME", p.home.path())
            .env("TMPDIR", &tmp)
            .envs(env)
            .output()
            .unwrap()
    };
    // The agent's shell has the repository's variables: unconfined, git runs its program.
    agent_shell("git status");
    assert!(p.path().join("fsmonitor-ran").exists());
    std::fs::remove_file(p.path().join("fsmonitor-ran")).unwrap();
    // Rewritten to run confined, it does not get them.
    let decided =
        hookd::sandbox::Decided::in_project(p.path()).user_home(Some(p.home.path().to_path_buf()));
    let program = Path::new(env!("CARGO_BIN_EXE_hookd"));
    let rewritten = hookd::sandbox::shell_rewrite(program, "git status", &decided, None);
    let o = agent_shell(&rewritten);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!p.path().join("fsmonitor-ran").exists());
}

/// The keyrings of the kernel are the caller's too: a confined command reading the caller's
/// session keyring read a login's secrets (a Kerberos cache, a credential helper's token),
/// replaced one and planted another (attack round of 2026-11-27). Confined, it has a session
/// keyring of its own and no keyring call at all.
#[test]
fn a_confined_command_cannot_reach_the_callers_keyrings() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let bin = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let programs = [
        // Joins a session keyring of its own with a secret in it, as a login does, then runs
        // the rest of its arguments in it.
        (
            "plant",
            r#"int main(int c, char **v) {
  syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "hookd-test");
  syscall(__NR_add_key, "user", "secret", "TOPSECRET", 9, KEY_SPEC_SESSION_KEYRING);
  execvp(v[1], v + 1); return 1; }"#,
        ),
        // The attack: read the secret, replace it, plant another key.
        (
            "steal",
            r#"int main(void) {
  long k = syscall(__NR_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", "secret", 0);
  char b[64] = {0}; syscall(__NR_keyctl, KEYCTL_READ, k, b, 63); printf("read:%s\n", b);
  syscall(__NR_keyctl, KEYCTL_UPDATE, k, "ATTACKER", 8);
  syscall(__NR_add_key, "user", "planted", "FROM-SANDBOX", 12, KEY_SPEC_SESSION_KEYRING);
  return 0; }"#,
        ),
        // What the caller's keyring holds afterwards.
        (
            "show",
            r#"int main(void) {
  const char *n[] = {"secret", "planted"};
  for (int i = 0; i < 2; i++) {
    long k = syscall(__NR_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", n[i], 0);
    char b[64] = {0}; syscall(__NR_keyctl, KEYCTL_READ, k, b, 63); printf("%s=%s\n", n[i], b); }
  return 0; }"#,
        ),
    ];
    for (name, body) in programs {
        let head = "#define _GNU_SOURCE\n#include <stdio.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n#include <linux/keyctl.h>\n";
        if c_program(bin.path(), name, &format!("{head}{body}\n")).is_none() {
            return;
        }
    }
    let at = |name: &str| bin.path().join(name).display().to_string();
    let run = |steal: String| {
        let base = hookd(&p, &tmp, &["exec"]);
        let out = Command::new(at("plant"))
            .args(["sh", "-c"])
            .arg(format!("{steal}; '{}'", at("show")))
            .envs(base.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(p.path())
            .output()
            .unwrap();
        stdout(&out)
    };
    // Unconfined, the attack works: the marker is the caller's keyring after it.
    let hookd_bin = env!("CARGO_BIN_EXE_hookd");
    assert_eq!(
        run(format!("'{}'", at("steal"))),
        "read:TOPSECRET\nsecret=ATTACKER\nplanted=FROM-SANDBOX\n"
    );
    assert_eq!(
        run(format!("'{hookd_bin}' exec -- '{}'", at("steal"))),
        "read:\nsecret=TOPSECRET\nplanted=\n"
    );
}

/// Hidden directories share one empty tmpfs (clones of a mount made on the first): each is
/// still covered where a later cover hides the path of the first (a `read_deny` entry reached
/// through a link to another), where one is named twice or lies below another, and none can be
/// written or listed.
#[test]
fn hidden_directories_stay_hidden_however_they_overlap() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let secrets = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let s = secrets.path();
    for d in ["real", "real/inner", "other", "nested", "nested/deeper"] {
        std::fs::create_dir_all(s.join(d)).unwrap();
        std::fs::write(s.join(d).join("secret"), "SECRET\n").unwrap();
    }
    std::os::unix::fs::symlink(s.join("real"), s.join("alias")).unwrap();
    // The first entry is mounted first; the second covers the directory its path goes through.
    let deny = [
        "alias/inner",
        "real",
        "other",
        "other",
        "nested/deeper",
        "nested",
    ]
    .map(|d| format!("'{}'", s.join(d).display()))
    .join(", ");
    p.write_home(
        "config.yaml",
        &format!("sandbox:\n  enabled: true\n  read_deny: [{deny}]\n"),
    );
    let script = "for d in real real/inner other nested nested/deeper; do \
        echo \"$d: $(ls -A \"$S/$d\" 2>&1 | wc -l) $(cat \"$S/$d/secret\" 2>/dev/null)\"; \
        touch \"$S/$d/planted\" 2>/dev/null && echo \"$d: written\"; done; true";
    let read = |confined: bool| {
        let mut c = if confined {
            sh(&p, &tmp, script)
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        };
        let o = c.env("S", s).current_dir(p.path()).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    // Unconfined, every secret is read (and a marker planted, removed below).
    assert_eq!(
        read(false),
        "real: 2 SECRET\nreal: written\nreal/inner: 1 SECRET\nreal/inner: written\n\
         other: 1 SECRET\nother: written\nnested: 2 SECRET\nnested: written\n\
         nested/deeper: 1 SECRET\nnested/deeper: written\n"
    );
    for d in ["real", "real/inner", "other", "nested", "nested/deeper"] {
        std::fs::remove_file(s.join(d).join("planted")).unwrap();
    }
    assert_eq!(
        read(true),
        "real: 0 \nreal/inner: 1 \nother: 0 \nnested: 0 \nnested/deeper: 1 \n"
    );
    for d in ["real", "real/inner", "other", "nested", "nested/deeper"] {
        assert!(!s.join(d).join("planted").exists(), "{d}");
    }
}

/// x32, the other ABI of an x86_64 kernel, reaches the same calls with bit 30 of the number
/// set, under the same architecture value: a filter keyed by x86_64's numbers does not see them
/// (a kernel that runs x32 would then open the sockets and keyrings refused above). Confined,
/// every x32 call is refused, whatever its number; unconfined, an x32 `getpid` returns the pid
/// or, where the kernel runs no x32, ENOSYS.
#[cfg(target_arch = "x86_64")]
#[test]
fn every_x32_call_is_refused_to_a_confined_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let bin = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let Some(x32) = c_program(
        bin.path(),
        "x32",
        r#"#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {
  long r = syscall(__NR_getpid | 0x40000000);
  printf("%s\n", r >= 0 ? "ran" : errno == ENOSYS ? "ENOSYS" : errno == EACCES ? "EACCES" : "other");
  return 0; }
"#,
    ) else {
        return;
    };
    let unconfined = stdout(&Command::new(&x32).output().unwrap());
    assert!(
        unconfined == "ran\n" || unconfined == "ENOSYS\n",
        "{unconfined}"
    );
    let x32 = x32.display().to_string();
    let o = hookd(&p, &tmp, &["exec", "--", &x32]).output().unwrap();
    assert_eq!(stdout(&o), "EACCES\n", "{}", stderr(&o));
}

/// Other tools' credential stores, browser profiles and histories in the home are unreadable
/// to a confined command (the attack round of 2026-11-27 read each of these from one).
#[test]
fn other_tools_credential_stores_are_hidden() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let stores = [
        ".vault-token",
        ".pgpass",
        ".my.cnf",
        ".terraform.d/credentials.tfrc.json",
        ".config/github-copilot/hosts.json",
        ".config/containers/auth.json",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
        ".config/sops/age/keys.txt",
        ".local/share/opencode/auth.json",
        ".kaggle/kaggle.json",
        ".cache/huggingface/token",
        ".s3cfg",
        ".subversion/auth/svn.simple/x",
        ".mozilla/firefox/p/cookies.sqlite",
        ".config/google-chrome/Default/Cookies",
        ".local/share/atuin/history.db",
        ".viminfo",
    ];
    read_by_none_confined(&p, &tmp, &stores, &[]);
}

/// Attack round 9 (2026-11-27) read each of these from a confined command: the agents' own keys
/// where their documentation has them (`~/.gemini/.env`, `~/.env`, Crush's `crush.json`, Claude
/// Code's `settings.json` `env`), the agents' histories beside their hidden transcripts, more
/// tools' credentials at their default paths, and the stores each tool's own variable moves.
#[test]
fn the_agents_keys_and_histories_and_moved_stores_are_hidden() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let stores = [
        ".gemini/.env",
        ".env",
        ".local/share/crush/crush.json",
        ".config/crush/crush.json",
        ".claude/settings.json",
        ".qwen/oauth_creds.json",
        // Attack round 10: copies and the other agents' settings with keys.
        ".claude.json.backup",
        ".claude/backups/.claude.json.backup.1",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".qwen/.env",
        ".qwen/settings.json",
        ".config/opencode/opencode.json",
        ".config/goose/config.yaml",
        ".cursor/mcp.json",
        ".aider.conf.yml",
        ".claude/history.jsonl",
        ".claude/file-history/x/1",
        ".claude/shell-snapshots/snapshot-bash.sh",
        ".claude/todos/t.json",
        ".codex/history.jsonl",
        ".codex/log/codex-tui.log",
        ".m2/settings.xml",
        ".terraformrc",
        ".config/rclone/rclone.conf",
        ".yarnrc.yml",
        ".config/pip/pip.conf",
        ".bundle/config",
        ".nuget/NuGet/NuGet.Config",
        ".minikube/profiles/minikube/client.key",
        ".cloudflared/cert.pem",
        ".supabase/access-token",
        ".ollama/id_ed25519",
        // Attack round 16 (F5): the keys of the other agents round 11 named.
        ".copilot/mcp-config.json",
        ".copilot/config.json",
        ".kiro/settings/mcp.json",
        ".config/opencode/opencode.jsonc",
        ".config/opencode/config.json",
        ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        ".config/Code/User/globalStorage/kilocode.kilo-code/settings/mcp_settings.json",
        // Attack round 17 (F4): the other builds and servers of the editor, Cline's CLI,
        // OpenCode's MCP tokens, the other agents' histories.
        ".config/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/Windsurf/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        ".vscode-server/data/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".cline/data/secrets.json",
        ".local/share/opencode/mcp-auth.json",
        ".copilot/session-state/s.json",
        ".copilot/logs/l.log",
        ".local/share/kiro-cli/data.sqlite3",
        ".local/share/amazon-q/data.sqlite3",
        // Attack round 18 (F4).
        ".vscode-server-insiders/data/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".var/app/com.visualstudio.code/config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        // Attack round 19 (F6): the other builds and their servers; Flatpak's and snap's
        // browsers' profiles.
        ".var/app/com.vscodium.codium/config/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".var/app/org.mozilla.firefox/.mozilla/firefox/p/cookies.sqlite",
        ".config/Trae/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/Trae/User/mcp.json",
        ".config/Antigravity/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/Void/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/Positron/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".antigravity-server/data/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".trae-server/data/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".trae-server/data/Machine/mcp.json",
        ".local/share/code-server/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ".config/code-server/config.yaml",
        "snap/firefox/common/.mozilla/firefox/p/cookies.sqlite",
        // Where the tools' variables below point.
        "moved/gcloud/credentials.db",
        "moved/azure/msal_token_cache.json",
        "moved/gradle/gradle.properties",
        "moved/npmrc",
        "moved/hf/token",
        "moved/pass/site.gpg",
        "moved/pulumi/credentials.json",
        "moved/tfrc",
        "moved/age.txt",
        "moved/sa.json",
        "moved/cc/.claude.json",
        "moved/cc/debug/d.txt",
        "moved/cc/todos/t.json",
    ];
    let vars = [
        ("CLOUDSDK_CONFIG", "moved/gcloud"),
        ("AZURE_CONFIG_DIR", "moved/azure"),
        ("GRADLE_USER_HOME", "moved/gradle"),
        ("NPM_CONFIG_USERCONFIG", "moved/npmrc"),
        ("HF_HOME", "moved/hf"),
        ("PASSWORD_STORE_DIR", "moved/pass"),
        ("PULUMI_HOME", "moved/pulumi"),
        ("TF_CLI_CONFIG_FILE", "moved/tfrc"),
        ("SOPS_AGE_KEY_FILE", "moved/age.txt"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "moved/sa.json"),
        ("CLAUDE_CONFIG_DIR", "moved/cc"),
    ];
    read_by_none_confined(&p, &tmp, &stores, &vars);
}

/// Each of `stores` (paths below the home) made holding a marker, read by a command that reads
/// every file of the home, with `vars` naming paths below the home: unconfined it reads every
/// marker (the attack works), confined none.
fn read_by_none_confined(p: &Project, tmp: &Path, stores: &[&str], vars: &[(&str, &str)]) {
    let h = p.home.path();
    for s in stores {
        let path = h.join(s);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("SECRET:{s}\n")).unwrap();
    }
    let script = "for f in $(cd \"$HOME\" && find . -type f); do cat \"$HOME/$f\"; done 2>/dev/null | grep SECRET: | sort";
    let read = |confined: bool| {
        let mut c = if confined {
            sh(p, tmp, script)
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", script]).env("HOME", h);
            c
        };
        for (k, v) in vars {
            c.env(k, h.join(v));
        }
        stdout(&c.current_dir(p.path()).output().unwrap())
    };
    assert_eq!(read(false).lines().count(), stores.len());
    assert_eq!(read(true), "", "read confined");
}

/// A CI runner's container or pod secrets (`/run/secrets/*`, a Kubernetes service account's
/// token under `/var/run/secrets`) were read by a confined command, `--read-only` too (attack
/// round 9, F9). Performed in a mount namespace of the test's own (a tmpfs over `/run` there:
/// nothing on the machine changes), so as root only.
#[test]
fn a_containers_secrets_under_run_are_hidden() {
    if !confinable() {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        crate::support::unavailable("root", "a mount namespace of the test's own needs root");
        return;
    }
    let (p, tmp) = project();
    let hookd_bin = env!("CARGO_BIN_EXE_hookd");
    let read = "cat /run/secrets/db_password /var/run/secrets/kubernetes.io/serviceaccount/token";
    let script = format!(
        "mount -t tmpfs none /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && \
         echo SECRET-db > /run/secrets/db_password && \
         echo SECRET-sa > /run/secrets/kubernetes.io/serviceaccount/token && \
         {read} && echo --- && \
         {hookd_bin} exec -- sh -c '{read}'; {hookd_bin} exec --read-only -- sh -c '{read}'; true"
    );
    let c = hookd(&p, &tmp, &[]);
    let envs: Vec<(std::ffi::OsString, std::ffi::OsString)> = c
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    let Ok(o) = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env_clear()
        .envs(envs)
        .current_dir(p.path())
        .output()
    else {
        crate::support::unavailable("unshare", "util-linux's unshare is not installed");
        return;
    };
    let out = stdout(&o);
    // Unconfined, both are read; confined, neither.
    assert!(
        out.starts_with("SECRET-db\nSECRET-sa\n---\n"),
        "{out}{}",
        stderr(&o)
    );
    assert!(
        !out.trim_start_matches("SECRET-db\nSECRET-sa\n---\n")
            .contains("SECRET"),
        "{out}"
    );
}

/// With the agent started in the home (the project is the home), a confined command made
/// `~/.config/hookd/`, which did not exist yet, and wrote a trust record there for a hostile
/// repository; the user's own hookd then honoured it (attack round of 2026-11-27). hookd's own
/// directories are made before the command runs, and hidden as they are where they exist.
#[test]
fn a_confined_command_cannot_make_hookds_own_places_in_a_writable_home() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let home = p.home.path();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    for place in [
        ".config/hookd",
        ".local/state/hookd",
        ".local/state",
        ".config",
    ] {
        let _ = std::fs::remove_dir(home.join(place));
    }
    assert!(!home.join(".config").exists());
    let script = "mkdir -p .config/hookd .local/state/hookd; echo forged > .config/hookd/trust.json; echo forged > .local/state/hookd/x; cat .config/hookd/trust.json";
    let o = exec_in_home(&p, &tmp, script).output().unwrap();
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert!(!home.join(".config/hookd/trust.json").exists());
    assert!(!home.join(".local/state/hookd/x").exists());
    assert!(home.join(".config/hookd").is_dir(), "made by hookd");
}

/// The same, raced: pid 1 made itself non-dumpable only once the command was started, and a
/// command that traced its parent at once (a compiled program's first call) got pid 1 in 64 of
/// 200 runs (review of 2026-11-27): stopped, pid 1 would never report; written to, it could
/// report an end while what the command started runs on, its stand-ins then removed under it.
/// Pid 1 is non-dumpable before the command exists. Unconfined, the same program traces its
/// parent (where Yama lets a process trace more than its descendants).
#[test]
fn the_sandboxs_pid_one_cannot_be_traced_by_the_command_even_at_its_first_call() {
    if !confinable() {
        return;
    }
    let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").ok();
    if yama.as_deref().is_some_and(|s| s.trim() != "0") {
        crate::support::unavailable("ptrace", "Yama lets a process trace its descendants only");
        return;
    }
    let (p, tmp) = project();
    let bin = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let Some(exe) = c_program(
        bin.path(),
        "trace_parent",
        r#"#include <stdio.h>
#include <sys/ptrace.h>
#include <unistd.h>
int main(void) {
  pid_t parent = getppid();
  for (int i = 0; i < 2000; i++)
    if (ptrace(PTRACE_SEIZE, parent, 0, 0) == 0) { ptrace(PTRACE_DETACH, parent, 0, 0); printf("traced\n"); return 0; }
  printf("refused\n"); return 0; }
"#,
    ) else {
        return;
    };
    // Unconfined, its parent (a shell) is traced.
    let o = Command::new("sh").arg("-c").arg(&exe).output().unwrap();
    assert_eq!(stdout(&o), "traced\n", "{}", stderr(&o));
    let exe = exe.to_str().unwrap();
    let mut traced = 0;
    for _ in 0..200 {
        let o = hookd(&p, &tmp, &["exec", "--", exe]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        match stdout(&o).as_str() {
            "refused\n" => {}
            "traced\n" => traced += 1,
            other => panic!("{other}{}", stderr(&o)),
        }
    }
    assert_eq!(
        traced, 0,
        "the command traced the sandbox's pid 1 in {traced} of 200 runs"
    );
}

/// Two confined commands in one project at once: the first one's end removed its stand-ins
/// (it held their directory's lock alone) while the second one's preparation, which had listed
/// them, took them for places of their own and held nothing there; the second one then made
/// `.envrc` at the root, where direnv runs it at the user's next `cd` (23 of 150 runs, review of
/// 2026-11-27). A stand-in gone since the listing is made again under the lock. Both commands
/// run many times, the second one started at every offset within the first one's run.
#[test]
fn two_confined_commands_at_once_cannot_make_a_protected_name_at_the_root() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let envrc = p.path().join(".envrc");
    // Unconfined, the name is made.
    let made = Command::new("sh")
        .args(["-c", "touch .envrc"])
        .current_dir(p.path())
        .status()
        .unwrap();
    assert!(made.success() && envrc.exists());
    std::fs::remove_file(&envrc).unwrap();
    let attack = "touch .envrc 2>/dev/null; true";
    let start = std::time::Instant::now();
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = start.elapsed();
    let mut made = Vec::new();
    for round in 0..120u32 {
        let mut first = hookd(&p, &tmp, &["exec", "--", "true"]).spawn().unwrap();
        std::thread::sleep(run * (round % 60) / 60);
        let o = sh(&p, &tmp, attack).output().unwrap();
        assert!(first.wait().unwrap().success());
        assert!(o.status.success(), "{}", stderr(&o));
        if envrc.symlink_metadata().is_ok() {
            made.push(round);
            std::fs::remove_file(&envrc).unwrap();
        }
    }
    assert!(
        made.is_empty(),
        "the second command made .envrc in rounds {made:?}"
    );
}

/// One command's end took another running command's stand-ins, in that one's working
/// directory below the root, for places it had made and moved them aside, which freed the names
/// in the other's namespace; that one (the attacker, any benign command ending meanwhile) made
/// `.envrc`, `.mcp.json` and a repository whose `core.fsmonitor` the user's next `git status`
/// ran, and its own end did not look on its way (attack round of 2026-11-27, every run). The
/// end moves no socket aside, and looks on its way too.
#[test]
fn an_ending_command_leaves_the_stand_ins_of_another_in_its_working_directory() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let a = p.path().join("a");
    std::fs::create_dir_all(&a).unwrap();
    let marker = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let fsmonitor = marker.path().join("fsmonitor-ran");
    let benign = hookd(&p, &tmp, &["exec", "--", "sleep", "1.5"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let attack = format!(
        "sleep 2; echo 'echo PWNED' > .envrc; echo '{{}}' > .mcp.json; \
         git init -q . && git config core.fsmonitor 'touch {}'; true",
        fsmonitor.display()
    );
    let o = sh(&p, &tmp, &attack).current_dir(&a).output().unwrap();
    let benign = benign.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&benign).contains(&format!("made {}", a.display())),
        "{}",
        stderr(&benign)
    );
    for name in [".envrc", ".mcp.json", ".git"] {
        assert!(
            a.join(name).symlink_metadata().is_err(),
            "{name} was made: {}",
            stderr(&o)
        );
    }
    let _ = Command::new("git").arg("status").current_dir(&a).output();
    assert!(!fsmonitor.exists());
}

/// A place one command made below the root, held by a second command that started while it
/// was there, was moved aside at the first one's end, which freed its name in the second; the
/// second made it again and its end kept it, since a place of that name had been there at its
/// start (attack round of 2026-11-27, every run). A place is what was there at the start only
/// if it is the same object (device and inode).
#[test]
fn a_place_made_again_after_another_commands_end_moved_it_is_moved_aside_too() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let sub = p.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let a = "echo A > sub/.envrc; mkdir -p sub/.claude; echo A > sub/.claude/settings.json; \
             git init -q sub/g; sleep 3";
    let b = "sleep 3; echo B > sub/.envrc; mkdir -p sub/.claude && \
             echo B > sub/.claude/settings.json; git init -q sub/g; true";
    let first = sh(&p, &tmp, a)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let o = sh(&p, &tmp, b).output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    for place in [".envrc", ".claude", "g/.git"] {
        assert!(
            sub.join(place).symlink_metadata().is_err(),
            "{place} stayed: {}\n{}",
            stderr(&first),
            stderr(&o)
        );
    }
    assert!(
        stderr(&o).contains(&format!("made {}/.envrc", sub.display())),
        "{}",
        stderr(&o)
    );
}

/// The stand-ins' locks were held by hookd alone: a SIGKILL to it (an agent's hard timeout, the
/// OOM killer) released them for the 1 to 4 ms its sandbox still ran, and another command ending
/// then removed the stand-ins under the dying one, whose command made `.mcp.json` at the root
/// (attack round of 2026-11-27, once in 150 to 300 kills). Pid 1 keeps the locks open, so they
/// last as long as the sandbox: here it holds them while the command runs, and after a SIGKILL
/// to hookd the stand-ins stay (recorded, for the next command that ends last).
#[test]
fn the_sandboxs_pid_one_holds_the_stand_ins_locks() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let mut h = hookd(&p, &tmp, &["exec", "--", "sleep", "5"])
        .spawn()
        .unwrap();
    let envrc = p.path().join(".envrc");
    appears(&envrc, "no stand-in appeared");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", h.id())).unwrap_or_default();
    let pid1: u32 = children.split_whitespace().next().unwrap().parse().unwrap();
    let locks: Vec<String> = std::fs::read_dir(format!("/proc/{pid1}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
        .map(|l| l.display().to_string())
        .filter(|l| l.contains("/placeholders/") && l.ends_with(".lock"))
        .collect();
    assert!(!locks.is_empty(), "pid 1 {pid1} holds no lock");
    h.kill().unwrap();
    h.wait().unwrap();
    // Its sandbox ended with it (pid 1's parent-death signal); the stand-ins are left recorded,
    // and the next command there removes them when it ends.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !std::path::Path::new(&format!("/proc/{pid1}")).exists() || {
            let stat = std::fs::read_to_string(format!("/proc/{pid1}/stat")).unwrap_or_default();
            stat.contains(") Z ")
        }
    );
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(envrc.symlink_metadata().is_err(), "a stand-in was left");
}

/// A SIGKILL to `hookd exec` ends its sandbox through pid 1's parent-death signal. That was a
/// SIGKILL too: pid 1's exit closed its descriptors, the stand-ins' locks among them, before the
/// kernel killed the rest of the namespace, and another command ending in that moment could
/// take the lock and remove the stand-ins under processes still running (left open by the
/// attack round of 2026-11-27). Pid 1 now catches its parent's death, kills and reaps the
/// namespace, then exits: once the locks are free, nothing of the sandbox is left.
#[test]
fn the_stand_ins_locks_of_a_killed_hookd_are_free_only_once_its_sandbox_is_gone() {
    use std::io::BufRead;
    use std::os::fd::AsRawFd;
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = "for i in $(seq 150); do sleep 60 & done; echo ready; wait";
    let mut h = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(h.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|c| c.parse().unwrap())
            .collect()
    };
    let pid1 = children(h.id())[0];
    let mut sandbox = children(pid1);
    let mut i = 0;
    while i < sandbox.len() {
        let below = children(sandbox[i]);
        sandbox.extend(below);
        i += 1;
    }
    assert!(sandbox.len() > 150, "{sandbox:?}");
    let locks: Vec<std::fs::File> = std::fs::read_dir(format!("/proc/{pid1}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
        .filter(|l| l.to_string_lossy().contains("/placeholders/"))
        .filter(|l| l.extension().is_some_and(|e| e == "lock"))
        .map(|l| std::fs::File::open(l).unwrap())
        .collect();
    assert!(!locks.is_empty(), "pid 1 {pid1} holds no lock");
    h.kill().unwrap();
    for lock in &locks {
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(
            unsafe { nix::libc::flock(lock.as_raw_fd(), nix::libc::LOCK_EX) },
            0
        );
    }
    let left: Vec<&u32> = sandbox
        .iter()
        .filter(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
        .collect();
    h.wait().unwrap();
    assert!(
        left.is_empty(),
        "{} of the sandbox's {} processes were still there when its locks were free",
        left.len(),
        sandbox.len()
    );
}

/// A repository's `.env` that only names a variable (`KUBECONFIG=x`) made `hookd exec` drop the
/// user's own value first (what a repository sets reaches no command), and then work out the
/// places to hide without it: the kubeconfig and the GnuPG home the user's variables named, and
/// the ssh-agent socket in the user's `$TMPDIR`, were read (attack round 9 of 2026-11-27, F5).
/// They stay hidden: the values the drop took are still protected, the temporary directory
/// covered.
#[test]
fn a_variable_the_repository_only_names_leaves_the_users_store_hidden() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let h = p.home.path();
    std::fs::create_dir_all(h.join("kc")).unwrap();
    std::fs::write(h.join("kc/config"), "SECRET-kube\n").unwrap();
    std::fs::create_dir_all(h.join("gpg")).unwrap();
    std::fs::write(h.join("gpg/key"), "SECRET-gpg\n").unwrap();
    std::fs::write(tmp.join("agent.sock-stand-in"), "SECRET-tmp\n").unwrap();
    let read = format!(
        "cat {0}/kc/config {0}/gpg/key {1}/agent.sock-stand-in 2>/dev/null; true",
        h.display(),
        tmp.display()
    );
    let run = || {
        let mut c = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &read]);
        c.env("KUBECONFIG", h.join("kc/config"))
            .env("GNUPGHOME", h.join("gpg"));
        c.output().unwrap()
    };
    // Unconfined, the command reads all three.
    let o = Command::new("sh").args(["-c", &read]).output().unwrap();
    assert_eq!(stdout(&o), "SECRET-kube\nSECRET-gpg\nSECRET-tmp\n");
    // Confined, without the repository's file: nothing.
    let o = run();
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    // With it, which names the three variables: nothing either.
    std::fs::write(
        p.path().join(".env"),
        "KUBECONFIG=x\nGNUPGHOME=x\nTMPDIR=x\n",
    )
    .unwrap();
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
}

/// The same `.env` naming `HOME`: the user's layer comes from the user database's home, and the
/// HOME the process had (CI images set `HOME=/tmp/…`) held the user's `read_deny`, lost with it
/// (F5). Where that HOME holds a hookd configuration, whose it is cannot be told: nothing runs.
#[test]
fn a_home_the_repository_names_over_a_hookd_configuration_runs_nothing() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let marker = p.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &touch])
        .output()
        .unwrap();
    assert!(o.status.success() && marker.exists(), "{}", stderr(&o));
    std::fs::remove_file(&marker).unwrap();
    std::fs::write(p.path().join(".env"), "HOME=/x\n").unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &touch])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert!(!marker.exists());
    let home = p.home.path().display();
    assert_eq!(
        stderr(&o),
        format!("hookd exec: not run: the project's files (.env, .claude/settings*.json) set HOME, and the HOME this process had, {home}, holds a hookd configuration (.infer/) that is not the user database's home's: whose it is cannot be told (docs/security.md, \"What a repository sets for its agent\")\n")
    );
}

/// A confined hook outlived a dispatcher killed outright (SIGKILL, a closed terminal's SIGHUP):
/// its waiter had no parent-death signal, so the hook ran on with no timeout, and nothing moved
/// aside what it made below the project (attack round 9 of 2026-11-27, F7). Killed, the hook
/// ends with it; hung up on, hookd ends the hook and moves aside what it made first.
#[test]
fn a_confined_hook_ends_with_its_dispatcher_and_a_hang_up_still_moves_aside_what_it_made() {
    use std::process::Stdio;
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    std::fs::write(p.path().join("web/index.js"), "\n").unwrap();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^sh -c .*$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_session, timeout: 30, command: \"sh -c 'mkdir web/.claude && echo {} > web/.claude/settings.json; sleep 2; touch late'\"}]\n",
    );
    let settings = p.path().join("web/.claude/settings.json");
    let start = || {
        let mut c = hookd(&p, &tmp, &["dispatch", "post_session", "--no-daemon"]);
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        appears(&settings, "the hook did not start");
        child
    };
    // Hung up on: hookd exits as the signal says, the hook is ended, what it made moved aside.
    let child = start();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + 1), "{}", stderr(&o));
    assert!(!settings.exists(), "{}", stderr(&o));
    assert!(
        p.path().join("web/.claude.hookd-aside").exists(),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!p.path().join("late").exists(), "the hook ran on");
    // Killed outright: the hook ends with it.
    std::fs::remove_dir_all(p.path().join("web/.claude.hookd-aside")).unwrap();
    let mut child = start();
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!p.path().join("late").exists(), "the hook ran on");
}

/// `timeout -s ALRM`, or any signal whose default ends a process, ended `hookd exec` without its
/// end: what the command had made below the project stayed (attack round 9, F8). It is passed
/// on to the command, which it ends, and hookd's end moves that aside.
#[test]
fn an_alarm_to_hookd_exec_ends_the_command_and_still_moves_aside_what_it_made() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    let script = "mkdir web/.claude && echo {} > web/.claude/settings.json; sleep 5";
    let child = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let settings = p.path().join("web/.claude/settings.json");
    appears(&settings, "the command did not start");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGALRM,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + 14), "{}", stderr(&o));
    assert!(!settings.exists(), "{}", stderr(&o));
    assert!(
        p.path().join("web/.claude.hookd-aside").exists(),
        "{}",
        stderr(&o)
    );
}

/// A SIGKILL to `hookd exec` (an agent's or CI's kill of the process tree at its timeout, which
/// a command can outlast on purpose) ended the command but skipped its end: what it had made
/// below the project (`web/.claude/settings.json`) stayed, and the next confined command held it
/// read-only as it found it (attack round 9 of 2026-11-27, F8). The end's record stays in
/// hookd's state, and the next confined command's preparation settles it first.
#[test]
fn what_a_killed_hookds_command_made_below_is_moved_aside_before_the_next_command() {
    use std::os::unix::fs::MetadataExt;
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    // A command before it leaves its emptied record, which the killed one takes again.
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let records = || -> Vec<(u64, u64)> {
        std::fs::read_dir(p.state.path().join("unsettled"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap())
            .map(|m| (m.ino(), m.len()))
            .collect()
    };
    let before = records();
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].1, 0);
    let script = "mkdir web/.claude && echo {} > web/.claude/settings.json; sleep 30";
    let mut child = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .spawn()
        .unwrap();
    let settings = p.path().join("web/.claude/settings.json");
    appears(&settings, "the command did not start");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The end did not run: the place is there, and the record it took again says so.
    assert!(settings.exists());
    let during = records();
    assert_eq!(during.len(), 1);
    assert_eq!(during[0].0, before[0].0);
    assert!(during[0].1 > 0);
    // What the user makes below after the kill is theirs, not the command's: kept (attack
    // round 10 had a late end move aside the user's `.claude`, a `git init sub` and a clone's
    // `.git` made again in its place, each "made by the confined command").
    std::fs::create_dir_all(p.path().join("web2/.claude")).unwrap();
    std::fs::write(p.path().join("web2/.claude/settings.json"), "{}").unwrap();
    std::fs::create_dir_all(p.path().join("sub/.git")).unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!settings.exists(), "{}", stderr(&o));
    let aside = p.path().join("web/.claude.hookd-aside");
    assert!(aside.join("settings.json").exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the confined command made {} (a place agents, editors or git read on their own",
            p.path().join("web/.claude").display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(
        p.path().join("web2/.claude/settings.json").exists(),
        "{}",
        stderr(&o)
    );
    assert!(p.path().join("sub/.git").is_dir(), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    // Said once: the record is settled; one empty record is left, for the next command here.
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert_eq!(stderr(&o), "");
    let left: Vec<u64> = std::fs::read_dir(p.state.path().join("unsettled"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .collect();
    assert_eq!(left, [0]);
}

/// The end's records are emptied and taken again, not made and removed at every command; two
/// commands at once each have their own, and the next command keeps one idle record.
#[test]
fn the_ends_records_are_taken_again_one_per_command_running() {
    use std::os::unix::fs::MetadataExt;
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let records = || -> Vec<(u64, u64)> {
        let mut r: Vec<(u64, u64)> = std::fs::read_dir(p.state.path().join("unsettled"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap())
            .map(|m| (m.ino(), m.len()))
            .collect();
        r.sort();
        r
    };
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let first = records();
    assert_eq!(first.len(), 1);
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(), first, "the record was not taken again");
    // Two at once: each its own record, both written.
    let script = "touch started.$$; sleep 2";
    let mut a = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .spawn()
        .unwrap();
    let mut b = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while records().iter().filter(|r| r.1 > 0).count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{:?}", records());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    // Ended: both emptied; the next command keeps one of them and removes the other.
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let after = records();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0].1, 0);
}

/// The System V IPC of the user's other processes (X11's shared images, a database's segment,
/// desktop apps' queues) was open to a confined command: it read and overwrote a segment and
/// sent a message the outside process received (attack round of 2026-11-27). It has an IPC
/// namespace of its own.
#[test]
fn the_users_shared_memory_segments_and_queues_are_not_reachable() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let bin = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let key = 0x4000_0000 + std::process::id() as i32;
    let source = format!(
        r#"#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/msg.h>
struct m {{ long t; char s[64]; }};
int main(int c, char **v) {{
  key_t k = {key}; struct m msg;
  if (c > 1 && !strcmp(v[1], "make")) {{
    char *p = shmat(shmget(k, 4096, IPC_CREAT | 0600), 0, 0); strcpy(p, "SAFE"); msgget(k, IPC_CREAT | 0600); return 0; }}
  if (c > 1 && !strcmp(v[1], "show")) {{
    int id = shmget(k, 4096, 0), q = msgget(k, 0); printf("%s\n", (char *)shmat(id, 0, 0));
    if (msgrcv(q, &msg, 64, 0, IPC_NOWAIT) >= 0) printf("%s\n", msg.s);
    shmctl(id, IPC_RMID, 0); msgctl(q, IPC_RMID, 0); return 0; }}
  int id = shmget(k, 4096, 0); if (id < 0) {{ printf("none\n"); return 0; }}
  char *p = shmat(id, 0, 0); strcpy(p, "PWNED");
  msg.t = 1; strcpy(msg.s, "INJECTED"); msgsnd(msgget(k, 0), &msg, 64, 0); printf("reached\n"); return 0; }}
"#
    );
    let Some(exe) = c_program(bin.path(), "ipc", &source) else {
        return;
    };
    let ipc = |arg: &str| stdout(&Command::new(&exe).arg(arg).output().unwrap());
    // Unconfined, the attack works.
    ipc("make");
    assert_eq!(ipc("attack"), "reached\n");
    assert_eq!(ipc("show"), "PWNED\nINJECTED\n");
    ipc("make");
    let o = hookd(&p, &tmp, &["exec", "--", exe.to_str().unwrap(), "attack"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "none\n", "{}", stderr(&o));
    assert_eq!(ipc("show"), "SAFE\n");
}

/// Landlock bounds writing a file, not its metadata: a confined command made a file outside
/// setuid and world-writable, changed its time and an extended attribute, and opened the
/// user's own configuration to everyone (attack round of 2026-11-27). The rest of the
/// filesystem is read-only to it; in the project, `chmod +x` works.
#[test]
fn metadata_outside_the_writable_places_cannot_change() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let outside = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let file = outside.path().join("outside.txt");
    let script = format!(
        "chmod 4777 '{f}'; touch -d 2001-01-01 '{f}'; chmod 666 \"$HOME/.profile\"; \
         echo made > made.sh && chmod +x made.sh && echo made-executable",
        f = file.display()
    );
    let stat = |f: &Path| {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(f).unwrap();
        (m.mode() & 0o7777, m.mtime())
    };
    let setup = || {
        std::fs::write(&file, "secret\n").unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        std::fs::set_permissions(
            p.home.path().join(".profile"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        (stat(&file), stat(&p.home.path().join(".profile")))
    };
    // Unconfined, the attack works.
    let before = setup();
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(p.path())
        .env("HOME", p.home.path())
        .output()
        .unwrap();
    assert!(stdout(&o).contains("made-executable"));
    assert_ne!((stat(&file), stat(&p.home.path().join(".profile"))), before);
    let before = setup();
    let o = sh(&p, &tmp, &script).output().unwrap();
    assert_eq!(stdout(&o), "made-executable\n", "{}", stderr(&o));
    assert_eq!(
        (stat(&file), stat(&p.home.path().join(".profile"))),
        before,
        "{}",
        stderr(&o)
    );
}

/// With the agent started in the home, a confined command made `~/.config/git/config` (which
/// did not exist) and its `core.fsmonitor` ran at the user's next `git status` anywhere; so would
/// a new `~/.npmrc` or `~/.local/bin/git` (attack round of 2026-11-27). The catalog's places in a
/// writable home that are absent get stand-ins, as the project's names do.
#[test]
fn absent_places_in_a_writable_home_cannot_be_made() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let home = p.home.path();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let made = [
        ".config/git/config",
        ".npmrc",
        ".local/bin/git",
        ".kube/config",
        // Attack round 21 (F2): Python's user site, absent until a first `pip install --user`.
        ".local/lib/python3.11/site-packages/x.pth",
        ".gdbinit",
    ];
    for m in made {
        assert!(!home.join(m).exists(), "{m}");
    }
    let script = made
        .iter()
        .map(|m| format!("mkdir -p \"$(dirname {m})\"; echo planted > {m}"))
        .collect::<Vec<_>>()
        .join("; ");
    let run = |confined: bool| {
        let mut c = if confined {
            exec_in_home(&p, &tmp, &script)
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", &script]).current_dir(home);
            c
        };
        c.env_remove("HOOKD_STATE_DIR").output().unwrap()
    };
    let o = run(true);
    for m in made {
        assert!(
            !home.join(m).is_file(),
            "{m} was made confined: {}",
            stderr(&o)
        );
    }
    // Nothing is left of the stand-ins once the command has ended.
    assert!(!home.join(".config/git").exists() || home.join(".config/git").is_dir());
    // Unconfined, the same script makes them (the attack works).
    run(false);
    for m in made {
        assert!(home.join(m).is_file(), "{m}");
    }
}

/// `hookd exec -- sh -c SCRIPT` with the agent started in `p`'s home: the home is the project
/// (and the user's layer), hookd's state where it is by default.
fn exec_in_home(p: &Project, tmp: &Path, script: &str) -> Command {
    let home = p.home.path();
    let mut c = hookd(
        p,
        tmp,
        &[
            "exec",
            &format!("--project={}", home.display()),
            &format!("--user-home={}", home.display()),
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    c.env_remove("HOOKD_STATE_DIR").current_dir(home);
    c
}

/// The sandbox's pid 1 (which waits for the command and reports its end to hookd) could be
/// traced by the command, in the same domain and of the same user, and stopped: `hookd exec`
/// then never returned (attack round of 2026-11-27). It cannot be traced; the command's own
/// children can (a debugger, a test of one).
#[test]
fn the_sandboxs_pid_one_cannot_be_traced_by_the_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
own = libc.ptrace(16, child, 0, 0)
os.kill(child, signal.SIGKILL)
one = libc.ptrace(16, 1, 0, 0)
print("own", own, "pid 1", one, os.strerror(ctypes.get_errno()))
"#;
    let mut child = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Traced and stopped, pid 1 would never report: hookd exec would not return.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            panic!("hookd exec did not return: the command stopped the sandbox's pid 1");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        stdout(&o),
        "own 0 pid 1 -1 Operation not permitted\n",
        "{}",
        stderr(&o)
    );
}

/// hookd's own binary, where a confined command may write (`sandbox.write: ['~/.cargo']` with
/// hookd installed by `cargo install`, the agent started in the home), was replaced by a
/// confined `build.sh`, and the agent's next tool call ran the replacement as hookd's adapter,
/// unconfined (attack round 11, F8). The binary that prepares the sandbox is held read-only;
/// the rest of its directory stays writable.
#[test]
fn hookds_own_binary_is_not_writable_to_a_confined_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let cargo = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let bin = cargo.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let me = bin.join("hookd");
    std::fs::copy(env!("CARGO_BIN_EXE_hookd"), &me).unwrap();
    p.write_home(
        "config.yaml",
        &format!(
            "sandbox:\n  enabled: true\n  write: ['{}']\n",
            cargo.path().display()
        ),
    );
    let script = format!(
        "echo built > {b}/other && (printf '#!/bin/sh\\n' > {b}/evil; chmod +x {b}/evil; mv -f {b}/evil {b}/hookd; cat /bin/true > {b}/hookd; rm -f {b}/hookd); true",
        b = bin.display()
    );
    let mut c = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &script]);
    c.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    // The copy in the writable directory is the hookd that runs, as an installed one would.
    let mut n = Command::new(&me);
    n.args(c.get_args()).env_clear().current_dir(p.path());
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            n.env(k, v);
        }
    }
    let before = std::fs::read(&me).unwrap();
    let o = n.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(bin.join("other")).unwrap(), b"built\n");
    assert!(
        std::fs::read(&me).unwrap() == before,
        "hookd's binary was replaced: {}",
        stderr(&o)
    );
}

/// A `read_deny` entry that is a link failed the sandbox's set-up with "Invalid argument", and
/// one that holds the project with "No such file or directory", neither naming the entry (the
/// held-out replay of 2026-11-28). A link is hidden where it leads, as sandbox-runtime does;
/// an entry over the project stops the command, saying which and why.
#[test]
fn a_read_deny_link_hides_its_target_and_one_over_the_project_is_named() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("data/secrets")).unwrap();
    std::fs::write(p.path().join("data/secrets/key"), "s3cret").unwrap();
    std::os::unix::fs::symlink("data/secrets", p.path().join("secrets")).unwrap();
    let root = p.path().canonicalize().unwrap();
    p.write_home(
        "config.yaml",
        &format!(
            "sandbox:\n  enabled: true\n  read_deny: ['{}']\n",
            root.join("secrets").display()
        ),
    );
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "cat secrets/key data/secrets/key; echo ran",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(stdout(&o), "ran\n", "{}", stderr(&o));
    assert!(!stderr(&o).contains("s3cret"));
    let above = root.parent().unwrap();
    p.write_home(
        "config.yaml",
        &format!(
            "sandbox:\n  enabled: true\n  read_deny: ['{}']\n",
            above.display()
        ),
    );
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert_eq!(
        stderr(&o),
        format!(
            "hookd exec: not run: the sandbox could not be prepared: the `sandbox.read_deny` entry {} holds the project {}, which a confined command must see to run in it: list what you want hidden inside it, or beside the project, not above it\n",
            above.display(),
            root.display()
        )
    );
}

/// Crush keeps its sessions in the project (`.crush/crush.db`, `.crush/logs/`): what the agent's
/// own unconfined tools read (a key from a hidden store) was readable to a confined command,
/// and the session writable (attack round 11, F7). Hidden, as the other agents' transcripts are.
#[test]
fn crushs_sessions_in_the_project_are_hidden() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join(".crush/logs")).unwrap();
    std::fs::write(
        p.path().join(".crush/crush.db"),
        "tool result: AKIAEXAMPLEKEY",
    )
    .unwrap();
    std::fs::write(p.path().join(".crush/logs/crush.log"), "AKIAEXAMPLEKEY").unwrap();
    let script =
        "cat .crush/crush.db .crush/logs/crush.log; echo forged >> .crush/crush.db; echo ran";
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "ran\n", "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(p.path().join(".crush/crush.db")).unwrap(),
        "tool result: AKIAEXAMPLEKEY"
    );
}

/// A `write` entry that is the user's own link (in a place no confined command may write) into
/// the project was re-pointed one link further by a confined command (`a/cache` made a link to
/// another repository's `.git/hooks`), and the next command wrote there (attack round 12, F4).
/// Every link met on the way to an entry counts, not only its own ancestors.
#[test]
fn a_write_entry_re_pointed_one_link_further_is_left_out() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let b = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let other = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let root = p.path().canonicalize().unwrap();
    std::fs::create_dir(b.path().join("links")).unwrap();
    std::os::unix::fs::symlink(root.join("a/cache"), b.path().join("links/cache")).unwrap();
    // What the first confined command left: `a/cache` a link to a place outside.
    std::fs::create_dir(p.path().join("a")).unwrap();
    std::os::unix::fs::symlink(other.path(), p.path().join("a/cache")).unwrap();
    let entry = b.path().join("links/cache");
    p.write_home(
        "config.yaml",
        &format!(
            "sandbox:\n  enabled: true\n  write: ['{}']\n",
            entry.display()
        ),
    );
    let script = format!("echo pwned > {}/x", entry.display());
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(!other.path().join("x").exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the `sandbox.write` entry {} is reached through the link {}, in a place confined commands may write",
            entry.display(),
            root.join("a/cache").display()
        )),
        "{}",
        stderr(&o)
    );
}

/// A confined command run from `web/` renamed `web` away: its stand-ins went with it and stayed
/// in the user's tree for good, and a new `web/` with a `.git` of the command's stood where the
/// agent works while it ran (attack round 12, F9). The directories on the way are pinned.
#[test]
fn the_directories_on_the_way_to_the_working_directory_cannot_be_moved() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir(p.path().join("web")).unwrap();
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "cd .. && mv web web.x && echo moved",
        ],
    )
    .current_dir(p.path().join("web"))
    .output()
    .unwrap();
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert!(!p.path().join("web.x").exists());
    let left: Vec<_> = std::fs::read_dir(p.path().join("web")).unwrap().collect();
    assert!(left.is_empty(), "stand-ins left: {left:?}");
}

/// Attack round 17, F5: a confined command run from `/` outside any repository took `/` for its
/// project: `/etc`, `/usr/local/bin`, every repository's `.git/hooks` and absent files of the
/// home were writable, and no name was held (3 of 3). Its project being the filesystem's root,
/// it may write nothing but its own temporary directory, as `--read-only`.
#[test]
fn a_command_run_from_the_filesystems_root_writes_nothing_outside_its_temporary_directory() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let outside = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let script = "touch \"$OUT/marker\" 2>/dev/null; touch \"$TMPDIR/own\" && echo own";
    // Unconfined, the marker is made.
    let o = Command::new("sh")
        .args(["-c", script])
        .current_dir("/")
        .env("OUT", outside.path())
        .env("TMPDIR", tmp.as_path())
        .output()
        .unwrap();
    assert!(o.status.success() && outside.path().join("marker").exists());
    std::fs::remove_file(outside.path().join("marker")).unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .current_dir("/")
        .env("OUT", outside.path())
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "own\n", "{}", stderr(&o));
    assert!(!outside.path().join("marker").exists());
}

/// `home/link` made a link to `dir` (made, holding `file` with `text`), in place of what was
/// there.
fn linked_place(home: &Path, link: &str, dir: &Path, file: &str, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), text).unwrap();
    let _ = std::fs::remove_dir_all(home.join(link));
    std::os::unix::fs::symlink(dir, home.join(link)).unwrap();
}

/// With the home writable, a held place of the home that is a link to a directory outside every
/// writable place (`~/.nvm -> /opt/nvm`, a hidden `~/.ssh -> /secure/ssh`) is out of reach where
/// it leads, and the link itself is held where it lies (bound onto itself, not followed): it
/// cannot be removed, renamed or replaced by a directory of the command's, which the user's next
/// shell (`. ~/.nvm/nvm.sh`) or `ssh` (`~/.ssh/config`) would read (attack round 27, B1: 3 of 3
/// before). The replacement is performed unconfined first, on a copy of the link.
#[test]
fn a_held_place_of_the_home_that_is_a_link_outside_cannot_be_replaced() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    let outside = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let home = p.home.path();
    for (link, dir, file) in [(".nvm", "nvm", "nvm.sh"), (".ssh", "ssh", "config")] {
        linked_place(home, link, &outside.path().join(dir), file, "# theirs\n");
    }
    let replace = |link: &str, file: &str| {
        format!("rm -f ~/{link} && mkdir ~/{link} && echo 'echo evil' > ~/{link}/{file}")
    };
    // Unconfined, on a copy of the link: replaced.
    let copy = home.join(".nvm-copy");
    std::os::unix::fs::symlink(outside.path().join("nvm"), &copy).unwrap();
    let o = Command::new("sh")
        .args(["-c", &replace(".nvm-copy", "nvm.sh")])
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!copy.symlink_metadata().unwrap().file_type().is_symlink());
    for (link, dir, file) in [(".nvm", "nvm", "nvm.sh"), (".ssh", "ssh", "config")] {
        let script = format!(
            "{} && echo replaced; mv ~/{link} ~/{link}.old && echo moved; ln -sfn /tmp ~/{link} && echo relinked; true",
            replace(link, file)
        );
        let o = sh(&p, &tmp, &script).output().unwrap();
        assert!(o.status.success(), "{link}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{link}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_link(home.join(link)).unwrap(),
            outside.path().join(dir),
            "{link}"
        );
        assert!(home.join(format!("{link}.old")).symlink_metadata().is_err());
    }
    // What the link leads to is read as before (the hidden one is not).
    let o = sh(
        &p,
        &tmp,
        "cat ~/.nvm/nvm.sh; cat ~/.ssh/config 2>/dev/null || echo hidden",
    )
    .output()
    .unwrap();
    assert_eq!(stdout(&o), "# theirs\nhidden\n", "{}", stderr(&o));
}

/// A hidden place that is a link (`~/.ssh -> dotfiles/ssh`, managed by a dotfiles tool) is
/// hidden where it leads, and the command runs: its cover was moved onto the link itself, which
/// the kernel refuses for a directory, and every confined command stopped with "Invalid
/// argument" (found in attack round 27's set-up).
#[test]
fn a_hidden_place_that_is_a_link_is_hidden_where_it_leads() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let dotfiles = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let home = p.home.path();
    for (link, dir) in [(".ssh", "ssh"), (".gnupg", "gnupg")] {
        linked_place(
            home,
            link,
            &dotfiles.path().join(dir),
            "key",
            "PRIVATE KEY\n",
        );
    }
    let o = sh(
        &p,
        &tmp,
        "cat ~/.ssh/key ~/.gnupg/key 2>/dev/null; cat \"$(readlink ~/.ssh)/key\" 2>/dev/null; echo ran",
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "ran\n", "{}", stderr(&o));
}

/// The links met on the way to a held place are held where they lie however the way goes: a
/// chain (`~/.rbenv -> l2 -> /opt/rbenv`, a hidden `~/.kube -> l4 -> dotfiles/kube`), whose
/// middle link was replaced by a directory of the command's (attack round 28, B1 and B3: 4 of 4
/// and 2 of 2); and a hidden place that is a link to nothing yet, in a place the command may
/// write (`~/.kube -> dotfiles/kube`, absent), stops the command instead of letting it make
/// what the user's next `kubectl` reads (B2, 3 of 3).
#[test]
fn links_reached_through_links_are_held_and_a_hidden_link_to_nothing_stops_the_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    let outside = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let home = p.home.path();
    std::fs::create_dir_all(outside.path().join("rbenv")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("rbenv"), home.join("l2")).unwrap();
    std::os::unix::fs::symlink("l2", home.join(".rbenv")).unwrap();
    std::fs::create_dir_all(home.join("dotfiles/kube")).unwrap();
    std::fs::write(home.join("dotfiles/kube/config"), "theirs\n").unwrap();
    std::os::unix::fs::symlink("dotfiles/kube", home.join("l4")).unwrap();
    std::os::unix::fs::symlink("l4", home.join(".kube")).unwrap();
    // Unconfined, a middle link is replaced.
    std::os::unix::fs::symlink(outside.path().join("rbenv"), home.join("l2-copy")).unwrap();
    let ok = Command::new("sh")
        .args(["-c", "rm ~/l2-copy && mkdir ~/l2-copy"])
        .env("HOME", home)
        .status()
        .unwrap();
    assert!(ok.success());
    let script = "for l in l2 l4; do rm -f ~/$l && mkdir ~/$l && echo replaced $l; done; cat ~/.kube/config 2>/dev/null; true";
    let o = sh(&p, &tmp, script).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert_eq!(
        std::fs::read_link(home.join("l2")).unwrap(),
        outside.path().join("rbenv")
    );
    assert_eq!(
        std::fs::read_link(home.join("l4")).unwrap(),
        Path::new("dotfiles/kube")
    );
    // A hidden link to nothing, where the command may write: not run, the link named.
    std::fs::remove_dir_all(home.join("dotfiles/kube")).unwrap();
    let o = sh(
        &p,
        &tmp,
        "mkdir -p ~/dotfiles/kube && echo made > ~/dotfiles/kube/config",
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a symbolic link to"),
        "{}",
        stderr(&o)
    );
    assert!(!home.join("dotfiles/kube").exists());
}
