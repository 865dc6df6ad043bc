//! Issue 40 items 5, 7 and 8, issue 39 item 4: what a command hookd runs inherits from its
//! caller (no controlling terminal, no descriptor, no capability, no view of the caller's
//! processes) and what can outlive it (nothing, detached or not). Each attack is performed for
//! real; a marker that must not appear, or an errno, says it failed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::sandbox::{confinable, hookd, project};
use crate::support::{json_lines, stderr, stdout, with_stdin, Project};

/// `program` run as hookd's caller in `p` (the environment `hookd(p, tmp, …)` has).
fn as_caller(p: &Project, tmp: &Path, program: &str) -> Command {
    let hookd = hookd(p, tmp, &[]);
    let mut c = Command::new(program);
    c.env_clear()
        .envs(hookd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(p.path());
    c
}

/// The python3 the tests drive a terminal with (not a version manager's shim, which needs the
/// real home).
const PYTHON: &str = "/usr/bin/python3";

/// Run `prefix python3 -c INJECT` in a bash that has a pseudo-terminal as its controlling
/// terminal (python3's `pty.fork`), then let that bash read one character: what INJECT said and
/// what the bash read.
fn on_a_terminal(p: &Project, tmp: &Path, prefix: &str) -> String {
    const DRIVER: &str = r#"
import os, pty, sys, select
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "-c", sys.argv[1] + ' /usr/bin/python3 -c "$INJECT"; read -t 1 -n 1 c; echo "shell read: [$c]"'])
out = b""
while True:
    try:
        r, _, _ = select.select([fd], [], [], 5)
        if not r:
            break
        d = os.read(fd, 1024)
        if not d:
            break
        out += d
    except OSError:
        break
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    // Pushes `Z` into the terminal's input, as if typed: the shell would read it.
    const INJECT: &str = "import fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b'Z')\n    print('injected')\nexcept OSError as e:\n    print('refused', e.errno)\n";
    let o = as_caller(p, tmp, PYTHON)
        .args(["-c", DRIVER, prefix])
        .env("INJECT", INJECT)
        .output()
        .unwrap();
    stdout(&o).replace('\r', "")
}

#[test]
fn a_confined_command_cannot_type_into_the_callers_terminal() {
    if !confinable() || !Path::new(PYTHON).exists() {
        return;
    }
    let (p, tmp) = project();
    // Unconfined, the injection works: the shell reads what the command pushed.
    let out = on_a_terminal(&p, &tmp, "");
    assert!(
        out.contains("injected\n") && out.contains("shell read: [Z]"),
        "{out}"
    );
    // Through `hookd exec` (as docs/headless.md runs it, in a terminal): refused, by the
    // seccomp filter (EACCES, `sandbox_sockets::terminal_injection_is_refused`) before the new
    // session's missing controlling terminal would (EPERM).
    let out = on_a_terminal(
        &p,
        &tmp,
        concat!("'", env!("CARGO_BIN_EXE_hookd"), "' exec --"),
    );
    assert!(
        out.contains("refused 13\n") || out.contains("refused 1\n"),
        "{out}"
    );
    assert!(out.contains("shell read: []"), "{out}");
}

/// Background children, plain and detached, that would leave markers in `$OUT` later.
const LEAVE_BEHIND: &str = r#"
(sleep 1; touch "$OUT/background") &
setsid sh -c 'sleep 1; touch "$OUT/setsid"' &
nohup sh -c 'sleep 1; touch "$OUT/nohup"' >/dev/null 2>&1 &
echo started
"#;

#[test]
fn nothing_a_confined_command_starts_outlives_it() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tmp.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // Unconfined, each survives its shell.
    let ok = Command::new("sh")
        .args(["-c", LEAVE_BEHIND])
        .env("OUT", &out)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::thread::sleep(Duration::from_millis(1500));
    let survived = crate::sandbox::markers(&out);
    assert_eq!(survived, ["background", "nohup", "setsid"]);
    for m in survived {
        std::fs::remove_file(out.join(m)).unwrap();
    }
    let started = Instant::now();
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", LEAVE_BEHIND])
        .env("OUT", &out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "started\n");
    // It did not wait for them either.
    assert!(started.elapsed() < Duration::from_millis(900));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(crate::sandbox::markers(&out), Vec::<String>::new());
    // A signal that ends the command is its exit status, as a shell reports it.
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", "kill -KILL $$"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
}

/// `hookd exec` returns once the command has ended without waiting for its namespaces to be
/// taken down (issue 40's cost), yet nothing the command left runs by then: pid 1 kills and
/// reaps it all before it reports. Busy writers left behind (one in the background, one in a
/// session of its own), whose file must not grow once `hookd exec` has returned.
#[test]
fn nothing_a_confined_command_left_writes_once_hookd_exec_returns() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let writers = "(while :; do echo x >> a; done) & setsid sh -c 'while :; do echo x >> b; done' & sleep 0.2";
    for _ in 0..5 {
        let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", writers])
            .current_dir(p.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let size = |f: &str| std::fs::metadata(p.path().join(f)).unwrap().len();
        let (a, b) = (size("a"), size("b"));
        assert!(a > 0 && b > 0, "the writers did not start");
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(
            (size("a"), size("b")),
            (a, b),
            "a writer ran on after hookd exec returned"
        );
    }
}

#[test]
fn a_hooks_setsid_child_is_reaped_every_time_confined_or_not() {
    // Unconfined everywhere; confined where the kernel can.
    let modes: &[bool] = if confinable() {
        &[false, true]
    } else {
        &[false]
    };
    for &sandbox in modes {
        let (p, tmp) = project();
        let out = tmp.join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(p.path().join("leave.sh"), LEAVE_BEHIND).unwrap();
        p.write_home(
            "config.yaml",
            &format!(
                "sandbox: {{enabled: {sandbox}}}\ntools: {{bash: {{mode: {{all: {{allow: ['^sh leave\\.sh$']}}}}}}}}\n"
            ),
        );
        p.write_home(
            "hooks.yaml",
            "enabled: true\nhooks: [{name: leave, hook: post_session, command: 'sh leave.sh'}]\n",
        );
        for run in 0..5 {
            let mut dispatch = hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]);
            dispatch.env("OUT", &out);
            let o = with_stdin(dispatch, "{}");
            assert!(o.status.success(), "{}", stderr(&o));
            let events = json_lines(&stderr(&o));
            let ran = events.iter().find(|e| e["type"] == "hook_command").unwrap();
            assert_eq!(ran["stdout"], "started\n", "{ran}");
            assert_eq!(ran["leaked"], true, "sandbox {sandbox}, run {run}: {ran}");
            assert_eq!(ran["sandbox"].is_string(), sandbox, "{ran}");
        }
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(
            crate::sandbox::markers(&out),
            Vec::<String>::new(),
            "sandbox: {sandbox}"
        );
    }
}

/// `hookd exec -- sh -c SCRIPT` in `p`: its output.
fn exec(p: &Project, tmp: &Path, script: &str) -> String {
    let o = hookd(p, tmp, &["exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_confined_command_holds_no_capability() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let caps = exec(&p, &tmp, "grep ^Cap /proc/self/status");
    assert_eq!(
        caps,
        "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n\
         CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"
    );
    // Nor does it get one back by exec as root (the user namespace's uid 0 when run as root).
    let caps = exec(&p, &tmp, "sh -c 'grep ^CapEff /proc/self/status'");
    assert_eq!(caps, "CapEff:\t0000000000000000\n");
}

#[test]
fn a_descriptor_the_caller_opened_is_not_inherited() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let outside = p.home.path().join("outside.txt");
    let open = format!("exec 7>>'{}'", outside.display());
    // Unconfined, a program the caller runs writes through it.
    let o = as_caller(&p, &tmp, "bash")
        .args(["-c", &format!("{open}; sh -c 'echo through >&7'")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "through\n");
    std::fs::write(&outside, "").unwrap();
    let script = format!(
        "{open}; '{}' exec -- sh -c 'echo through >&7' 2>&1; echo \"status $?\"",
        env!("CARGO_BIN_EXE_hookd")
    );
    let o = as_caller(&p, &tmp, "bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.contains("7: Bad file descriptor"), "{out}");
    assert!(out.ends_with("status 2\n"), "{out}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "");
}

#[test]
fn the_callers_processes_are_out_of_its_sight() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    // This test process stands for the agent's shell that ran `hookd exec`.
    let me = std::process::id();
    let script = format!(
        "ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; \
         ls /proc/{me}/fd >/dev/null 2>&1 && echo reached || echo unreachable; echo $$"
    );
    let out = exec(&p, &tmp, &script);
    let lines: Vec<&str> = out.lines().collect();
    // pid 1 (the waiter in the namespace), the shell (2) and what it runs for the listing.
    let pids: Vec<u32> = lines[0]
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(pids.iter().all(|p| *p < 10), "{out}");
    assert_eq!(lines[1], "unreachable", "{out}");
    assert_eq!(lines[2], "2", "{out}");
}

#[test]
fn ctrl_c_in_the_terminal_reaches_the_command_and_hookd_exec_reports_how_it_ended() {
    if !confinable() || !Path::new(PYTHON).exists() {
        return;
    }
    // A bash on a terminal runs two `hookd exec`; the terminal gets Ctrl-C at 1 s and at 2 s.
    const DRIVER: &str = r#"
import os, pty, sys, select, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "-c", sys.argv[1]])
out = b""
start = time.time()
sent = 0
while True:
    if sent < 2 and time.time() - start > 1 + sent:
        os.write(fd, b"\x03")
        sent += 1
    try:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            d = os.read(fd, 1024)
            if not d:
                break
            out += d
    except OSError:
        break
    if time.time() - start > 8:
        break
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    let (p, tmp) = project();
    let exec = env!("CARGO_BIN_EXE_hookd");
    let script = format!(
        "'{exec}' exec -- sh -c 'trap \"echo got INT; exit 3\" INT; sleep 10 & wait'; \
         echo \"status $?\"; '{exec}' exec -- sleep 10; echo \"status $?\""
    );
    let started = Instant::now();
    let o = as_caller(&p, &tmp, PYTHON)
        .args(["-c", DRIVER, &script])
        .output()
        .unwrap();
    let out = stdout(&o).replace('\r', "");
    // The first command traps it and exits 3; the second dies of it (128 + 2). hookd waited for
    // each and passed on how it ended; neither `sleep 10` held the terminal.
    assert!(out.contains("got INT\nstatus 3\n"), "{out}");
    assert!(out.contains("status 130\n"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(6), "{out}");
}

/// Wait up to 10 s for `path` to exist.
fn appears(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `child`'s end, at most 10 s away.
fn ended(child: &mut std::process::Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_to_hookd_exec_alone_reaches_the_command_and_its_kill_ends_everything() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let signal = |sig: &str, pid: u32| {
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    let start = |script: &str| {
        hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // SIGTERM to hookd's own pid (a timeout's, an agent's that ends the process it started):
    // the command gets it and ends as it chooses; hookd reports that.
    let script = "trap 'echo got TERM > term-marker; exit 5' TERM; touch ready; \
                  while :; do sleep 0.05; done";
    let mut hookd_exec = start(script);
    appears(&p.path().join("ready"));
    signal("-TERM", hookd_exec.id());
    assert_eq!(ended(&mut hookd_exec).code(), Some(5));
    let marker = std::fs::read_to_string(p.path().join("term-marker")).unwrap();
    assert_eq!(marker, "got TERM\n");
    // SIGKILL to hookd: nothing it started goes on (the heartbeat stops).
    let script = "touch ready2; (while :; do echo x >> beat; sleep 0.02; done) & \
                  setsid sh -c 'while :; do echo y >> beat; sleep 0.02; done' & wait";
    let mut hookd_exec = start(script);
    appears(&p.path().join("ready2"));
    std::thread::sleep(Duration::from_millis(200));
    signal("-KILL", hookd_exec.id());
    ended(&mut hookd_exec);
    std::thread::sleep(Duration::from_millis(300));
    let beats = std::fs::read(p.path().join("beat")).unwrap().len();
    assert!(beats > 0);
    std::thread::sleep(Duration::from_millis(500));
    let later = std::fs::read(p.path().join("beat")).unwrap().len();
    assert_eq!(beats, later, "the command went on after hookd was killed");
}

#[test]
fn a_hook_that_calls_setsid_itself_cannot_leave_the_group_hookd_signals() {
    // `setsid` calls setsid() in place unless its caller leads a process group. Were the
    // command not the leader of the group hookd signals, it would leave it, the timeout would
    // reach nothing and the dispatch would wait the 30 s.
    let modes: &[bool] = if confinable() {
        &[false, true]
    } else {
        &[false]
    };
    for &sandbox in modes {
        let (p, tmp) = project();
        p.write_home(
            "config.yaml",
            &format!(
                "sandbox: {{enabled: {sandbox}}}\ntools: {{bash: {{mode: {{all: {{allow: ['^setsid sleep 30$']}}}}}}}}\n"
            ),
        );
        p.write_home(
            "hooks.yaml",
            "enabled: true\nhooks: [{name: away, hook: post_session, command: 'setsid sleep 30', timeout: 1}]\n",
        );
        let started = Instant::now();
        let o = with_stdin(
            hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]),
            "{}",
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "sandbox {sandbox}: {took:?}");
        let events = json_lines(&stderr(&o));
        let ran = events.iter().find(|e| e["type"] == "hook_command").unwrap();
        // It leads its group, so `setsid` had to fork: the forked `sleep` was left behind when
        // the command ended, and killed.
        assert_eq!(ran["leaked"], true, "{ran}");
        assert_eq!(ran["timed_out"], false, "{ran}");
    }
}

/// Pid 1 execs the confined command itself, from strings made before the fork (`vfork.rs` in
/// the sandbox crate): what the command gets is what it got when it was forked, through
/// `hookd exec` and through a hook (whose `argv[0]` is the name the hook wrote, not the path
/// hookd resolved): its name, its arguments as given, its variables, a script without a `#!`
/// run by `sh`; and a program that cannot be executed is refused naming it.
#[test]
fn a_confined_command_starts_with_its_name_arguments_and_variables() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let show = "printf '%s|' \"$0\" \"$@\"; printf '%s|' \"$KEPT\" \"$TMPDIR\"; echo\n";
    std::fs::write(p.path().join("show"), show).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(p.path().join("show"), mode).unwrap();
    let mut c = hookd(&p, &tmp, &["exec", "--", "./show", "a b", "", "*"]);
    let o = c.env("KEPT", "k v").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = tmp.display();
    assert_eq!(stdout(&o), format!("./show|a b||*|k v|{t}|\n"));
    // A hook, by the name it was written with (a link to `cat` on the hook's PATH), not the
    // path hookd resolved it to.
    let bin = p.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cat = ["/usr/bin/cat", "/bin/cat"]
        .into_iter()
        .find(|c| Path::new(c).exists());
    std::os::unix::fs::symlink(cat.unwrap(), bin.join("show-hook")).unwrap();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^show-hook .*$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: show, hook: post_session, command: 'show-hook /proc/self/cmdline'}]\n",
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut dispatch = hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]);
    dispatch.env("PATH", &path);
    let o = with_stdin(dispatch, "{}");
    assert!(o.status.success(), "{}", stderr(&o));
    let events = json_lines(&stderr(&o));
    let ran = events.iter().find(|e| e["type"] == "hook_command").unwrap();
    assert_eq!(
        ran["stdout"], "show-hook\u{0}/proc/self/cmdline\u{0}",
        "{ran}"
    );
    // Nothing to execute: refused, naming it, exit 2 as every error of hookd's own.
    for missing in ["no-such-program-here", "./no-such-file"] {
        let o = hookd(&p, &tmp, &["exec", "--", missing]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("error: `{missing}` could not start confined: No such file or directory (os error 2)\n")
        );
    }
}

/// The library's `sandbox::command` hands back a `Command` its caller may still change
/// (`hookd run --confine` removes `NO_PROXY` and sets the agent's variable after it): what the
/// confined command gets is the `Command` as spawned, not as it was when it was made.
#[test]
fn a_change_to_a_confined_command_after_it_was_made_reaches_it() {
    if !confinable() {
        return;
    }
    let dir = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let mut policy = hookd::config::SandboxPolicy::default();
    policy.enabled = true;
    let c = hookd::sandbox::prepare(&policy, dir.path()).unwrap();
    let argv = [
        "sh",
        "-c",
        "printf '%s|%s|' \"$LATE\" \"$GONE\"; echo \"$@\"",
        "sh",
        "a",
    ]
    .map(String::from);
    let vars = [("GONE".as_ref(), "still here".as_ref())];
    let mut cmd = hookd::sandbox::command(std::sync::Arc::new(c), &argv, dir.path(), None, vars);
    cmd.env("LATE", "set after").env_remove("GONE").arg("b");
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "set after||a b\n");
}
