//! What a hook inherits (no descriptor its caller leaked to hookd, no hookd secret) and what a
//! hook's escaped helper can cost (not its verdict, not a thread, not a zombie).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{json_lines, stderr, stdout, Project};

#[test]
fn a_hook_inherits_no_leaked_descriptor_and_no_token() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./peek\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: peek, hook: post_session, command: ./peek.sh}]\n",
    );
    let script = p.path().join("peek.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nfor f in /proc/$$/fd/*; do readlink \"$f\"; done > fds.txt\nenv > env.txt\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The caller leaks a descriptor (opened without close-on-exec) to hookd.
    let secret = p.home.path().join("leaked-secret-file");
    std::fs::write(&secret, "secret").unwrap();
    let leaked = std::fs::File::open(&secret).unwrap();
    nix::fcntl::fcntl(
        &leaked,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .unwrap();
    let out = p
        .cmd(&["dispatch", "post_session"])
        .env("HOOKD_TOKEN", "s3cr3t-token-value")
        .output()
        .unwrap();
    drop(leaked);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fds = std::fs::read_to_string(p.path().join("fds.txt")).unwrap();
    assert!(!fds.contains("leaked-secret-file"), "{fds}");
    assert!(fds.contains("fds.txt"), "the listing works: {fds}");
    let env = std::fs::read_to_string(p.path().join("env.txt")).unwrap();
    assert!(!env.contains("s3cr3t-token-value"), "{env}");
    assert!(
        env.contains("HOOKD_HOOK=post_session") || env.contains("PATH="),
        "{env}"
    );
}

/// A project whose `pre_tool` hooks are `./NAME.sh` scripts.
fn scripted(hooks: &str, scripts: &[(&str, &str)]) -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./[a-z]+\\.sh$']}}}}\n",
    );
    p.write("hooks.yaml", &format!("enabled: true\nhooks:\n{hooks}"));
    for (name, body) in scripts {
        let path = p.path().join(format!("{name}.sh"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

/// Kill the helpers a test's hooks left outside hookd's reach (their pids are in `helpers`).
struct Helpers(std::path::PathBuf);

impl Drop for Helpers {
    fn drop(&mut self) {
        for pid in std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .split_whitespace()
        {
            if let Ok(pid) = pid.parse() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// Prints its verdict, then leaves a helper in its own session holding stdout, which would
/// leave its marker 2 s later.
const HOLD: &str = "setsid sh -c 'sleep 2; touch helper-ran' &\necho $! >> helpers";

#[test]
fn a_guard_whose_setsid_helper_holds_stdout_keeps_its_deny_and_the_helper_ends_with_it() {
    let p = scripted(
        "  - {name: guard, hook: pre_tool, command: ./guard.sh}\n",
        &[(
            "guard",
            &format!("echo '{{\"decision\": \"deny\", \"reason\": \"not today\"}}'\n{HOLD}"),
        )],
    );
    let _helpers = Helpers(p.path().join("helpers"));
    let started = Instant::now();
    let out = p.run_with_stdin(
        &["dispatch", "pre_tool", "--events", "-"],
        r#"{"tool": {"name": "Bash", "input": {"command": "curl x"}}}"#,
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["decision"]["deny"], true, "{outcome}");
    assert_eq!(outcome["decision"]["reason"], "not today", "{outcome}");
    let ev = &json_lines(&stderr(&out))[0];
    // The helper was killed when the guard ended (its waiter is a child subreaper): what the
    // guard printed is all there is.
    assert_eq!(ev["leaked"], true, "{ev}");
    assert_eq!(ev["held_open"], false, "{ev}");
    assert_eq!(ev["error"], "", "{ev}");
    assert_eq!(ev["decision"], "deny", "{ev}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        !p.path().join("helper-ran").exists(),
        "the helper outlived its hook"
    );
}

/// `(threads, open descriptors, zombie children)` of process `pid`.
fn footprint(pid: u32) -> (usize, usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    let zombies = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
        .filter(|stat| {
            // After the command's `(name)`: state, then the parent's pid.
            let mut rest = stat
                .rsplit_once(')')
                .map(|(_, r)| r)
                .unwrap_or("")
                .split_whitespace();
            rest.next() == Some("Z") && rest.next() == Some(&pid.to_string())
        })
        .count();
    (threads, fds, zombies)
}

#[test]
fn escaped_helpers_cost_the_daemon_no_thread_no_descriptor_and_no_zombie() {
    // Each run leaves one helper holding the hook's output for 30 s and one that exits at once;
    // both left the hook's group; the hook's waiter kills them when it ends (where it could
    // not, the daemon, a child subreaper, would adopt them).
    let p = scripted(
        "  - {name: leak, hook: post_tool, command: ./leak.sh}\n",
        &[(
            "leak",
            "setsid sleep 30 &\necho $! >> helpers\nsetsid true </dev/null >/dev/null 2>&1 &",
        )],
    );
    let _helpers = Helpers(p.path().join("helpers"));
    let d = crate::support::daemon::start(&p, &[]);
    let body = r#"{"point": "post_tool", "context": {"session_id": "s"}}"#;
    let (code, _) = crate::support::daemon::unix(&d.socket, "POST", "/v1/dispatch", body);
    assert_eq!(code, 200);
    std::thread::sleep(Duration::from_millis(1500));
    let before = footprint(d.child.id());
    std::thread::scope(|s| {
        for _ in 0..5 {
            s.spawn(|| {
                for _ in 0..4 {
                    let (code, out) =
                        crate::support::daemon::unix(&d.socket, "POST", "/v1/dispatch", body);
                    assert_eq!(code, 200, "{out}");
                    assert!(out.contains(r#""status":"ok""#), "{out}");
                }
            });
        }
    });
    let helpers = std::fs::read_to_string(p.path().join("helpers")).unwrap();
    assert_eq!(helpers.split_whitespace().count(), 21, "{helpers}");
    // The daemon reaps adopted children after each dispatch and every second.
    std::thread::sleep(Duration::from_millis(1500));
    let after = footprint(d.child.id());
    assert_eq!(
        after.2, 0,
        "zombies under the daemon: before {before:?}, after {after:?}"
    );
    // The async runtime's blocking pool keeps a thread per concurrent dispatch for a while (5
    // here, more when the machine is loaded and dispatches overlap longer); 20 held pipes used
    // to keep 40 reader threads and 40 descriptors.
    assert!(
        after.0 <= before.0 + 10,
        "threads: before {before:?}, after {after:?}"
    );
    assert!(
        after.1 <= before.1 + 2,
        "descriptors: before {before:?}, after {after:?}"
    );
}
