//! The audit trail under faults: a daemon that goes away mid-session (its clients append to its
//! events file and say so once), a log removed, replaced by a FIFO, torn by a full disk, or at
//! the end of its numbering, and a hole in it, each performed for real against `hookd serve`.

use std::io::{BufRead, Read};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::daemon::{project, start, subscribe, tcp, Daemon};
use crate::support::{stderr, with_stdin, Project};

/// The `seq` of every line of `log` that is an event (a torn line is not).
fn seqs(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

fn dispatch(d: &Daemon) {
    let body = json!({"point": "post_tool", "context": {"session_id": "a"}}).to_string();
    assert_eq!(tcp(d, "POST", "/v1/dispatch", &body).0, 200);
}

/// Claude Code's PostToolUse call, with the daemon's socket named: stderr.
fn claude_post_tool(p: &Project, socket: &Path) -> String {
    let payload = json!({"hook_event_name": "PostToolUse", "session_id": "a", "cwd": p.path(),
        "tool_name": "Bash", "tool_input": {"command": "true"}, "tool_response": {}});
    let mut cmd = p.cmd(&["adapter", "claude-code"]);
    cmd.env("HOOKD_SOCKET", socket);
    let o = with_stdin(cmd, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stderr(&o)
}

fn sigterm(d: &mut Daemon) {
    let pid = nix::unistd::Pid::from_raw(d.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(d.child.wait().unwrap().success());
}

#[test]
fn a_daemon_gone_mid_session_leaves_the_rest_of_the_session_in_its_events_file() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let mut d = start(&p, &["--events", log.to_str().unwrap()]);
    let socket = d.socket.clone();
    assert_eq!(claude_post_tool(&p, &socket), "");
    assert_eq!(seqs(&log), [1]);
    // The daemon is killed: the session's next calls dispatch here, into the same file, and
    // the first of them says so.
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    let said = claude_post_tool(&p, &socket);
    assert_eq!(
        said,
        format!(
            "hookd: no hookd daemon answers at {}; dispatching in this process from now on, its events appended to {} (said once until a daemon starts)\n",
            socket.display(),
            log.display()
        )
    );
    assert_eq!(claude_post_tool(&p, &socket), "", "said once");
    let o = p
        .cmd(&["dispatch", "post_tool", "--session-id", "a"])
        .env("HOOKD_SOCKET", &socket)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(seqs(&log), [1, 2, 3, 4]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.lines()
            .all(|l| l.contains("\"type\":\"hook_command\"")),
        "{text}"
    );
    // A daemon started again numbers after them, and a later fallback is said again.
    let mut d = start(&p, &["--events", log.to_str().unwrap()]);
    dispatch(&d);
    assert_eq!(seqs(&log), [1, 2, 3, 4, 5]);
    sigterm(&mut d);
    assert!(claude_post_tool(&p, &socket).starts_with("hookd: no hookd daemon answers at "));
    assert_eq!(seqs(&log), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn a_removed_log_is_written_anew_and_numbering_never_goes_back() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let args = ["--events", log.to_str().unwrap()];
    let mut d = start(&p, &args);
    (0..3).for_each(|_| dispatch(&d));
    std::fs::remove_file(&log).unwrap();
    dispatch(&d);
    assert_eq!(seqs(&log), [4], "not written to the removed file's inode");
    sigterm(&mut d);
    // Removed again while no daemon runs: the next one still numbers past what was served.
    std::fs::remove_file(&log).unwrap();
    let d = start(&p, &args);
    dispatch(&d);
    assert_eq!(seqs(&log), [5]);
}

/// `hookd serve` with `args` is expected to stop at once: its exit code and stderr.
fn refused_start(p: &Project, args: &[&str]) -> (Option<i32>, String) {
    let socket = p.path().join("hookd.sock");
    let mut all = vec!["serve", "--socket", socket.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut child = p
        .cmd(&all)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("hookd serve did not stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_fifo_among_the_logs_holds_up_neither_resumes_nor_dispatches() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let mut d = start(&p, &["--events", log.to_str().unwrap(), "--ring", "16"]);
    (0..40).for_each(|_| dispatch(&d));
    let fifo = p.path().join("events.jsonl.3");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Many subscribers resume from before the ring at once: each reads the log back.
    let subscribers: Vec<_> = (0..40).map(|_| subscribe(&d, Some(1))).collect();
    let started = Instant::now();
    dispatch(&d);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    for mut s in subscribers {
        let mut ids = Vec::new();
        let mut line = String::new();
        while ids.len() < 40 {
            line.clear();
            s.read_line(&mut line).unwrap();
            if let Some(id) = line.strip_prefix("id: ") {
                ids.push(id.trim().parse::<u64>().unwrap());
            }
        }
        assert_eq!(ids, (2..=41).collect::<Vec<_>>());
    }
    sigterm(&mut d);
    // A daemon started on a FIFO as its log stops at once and says why.
    std::fs::remove_file(&log).unwrap();
    nix::unistd::mkfifo(&log, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (code, err) = refused_start(&p, &["--events", log.to_str().unwrap()]);
    assert_eq!(
        (code, err),
        (
            Some(2),
            format!("error: cannot open the events file {}: it is a FIFO, not a regular file: hookd reads and writes events only in regular files (remove it)\n", log.display())
        )
    );
}

#[test]
fn a_log_whose_numbering_cannot_grow_is_refused() {
    let p = project();
    let log = p.path().join("events.jsonl");
    std::fs::write(&log, format!("{{\"seq\":{},\"type\":\"x\"}}\n", u64::MAX)).unwrap();
    let (code, err) = refused_start(&p, &["--events", log.to_str().unwrap()]);
    assert_eq!(
        (code, err),
        (
            Some(2),
            format!("error: cannot open the events file {0}: its last event is numbered 18446744073709551615, and hookd numbers events up to 9007199254740991: move {0} (and its rotated files) away to start a new log\n", log.display())
        )
    );
}

/// Limit the size of files process `pid` may write (RLIMIT_FSIZE, its soft limit).
fn limit_file_size(pid: u32, bytes: u64) {
    let limit = nix::libc::rlimit {
        rlim_cur: bytes,
        rlim_max: nix::libc::RLIM_INFINITY,
    };
    let r = unsafe {
        nix::libc::prlimit(
            pid as i32,
            nix::libc::RLIMIT_FSIZE,
            &limit,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn a_line_torn_by_a_full_disk_is_ended_before_the_next_and_its_hole_announced() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let d = start(&p, &["--events", log.to_str().unwrap(), "--ring", "16"]);
    dispatch(&d);
    // The disk fills in the middle of the next event's line (a file size limit: the write
    // stops part-way, as on a full disk).
    let size = std::fs::metadata(&log).unwrap().len();
    limit_file_size(d.child.id(), size + 40);
    dispatch(&d);
    assert_eq!(std::fs::metadata(&log).unwrap().len(), size + 40, "torn");
    limit_file_size(d.child.id(), nix::libc::RLIM_INFINITY);
    (3..=20).for_each(|_| dispatch(&d));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20, "{text}");
    assert_eq!(lines[1].len(), 40, "{text}");
    assert_eq!(seqs(&log), [vec![1], (3..=20).collect()].concat());
    // A subscriber resuming from the start reads the log back (the ring keeps the newest 16)
    // and is told of the hole.
    let mut s = subscribe(&d, Some(0));
    let mut frames = Vec::new();
    let mut line = String::new();
    while frames.len() < 5 {
        line.clear();
        s.read_line(&mut line).unwrap();
        if line.starts_with("id: ")
            || line.starts_with("event: missed")
            || line.starts_with("data: {\"missed\"")
        {
            frames.push(line.trim().to_string());
        }
    }
    assert_eq!(
        frames,
        [
            "id: 1",
            "event: missed",
            "data: {\"missed\":1,\"resume_from\":3}",
            "id: 3",
            "id: 4"
        ]
    );
}

/// Claude Code's PreToolUse call for the Bash command `command`, the audit file `log`, hookd's
/// extra flags: the reply and stderr.
fn claude_bash(p: &Project, log: &Path, command: &str, flags: &[&str]) -> (Value, String) {
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "a", "cwd": p.path(),
        "tool_name": "Bash", "tool_input": {"command": command}});
    let mut args = vec!["adapter", "claude-code", "--no-daemon"];
    args.extend_from_slice(flags);
    let mut cmd = p.cmd(&args);
    cmd.env("HOOKD_EVENTS", log);
    let o = with_stdin(cmd, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

/// The attacks on an audit file `$1` a confined `make test` made: each leaves it something other
/// than the regular file of events it was (or adds a forged event).
const ATTACKS: &[&str] = &[
    "rm -f \"$1\" && mkfifo \"$1\"",
    ": > \"$1\"",
    "mv \"$1\" \"$1.moved\" && ln -s /dev/null \"$1\"",
    "echo '{\"seq\":99,\"type\":\"tool_call_allowed\"}' >> \"$1\"",
    "rm -f \"$1.1\" && mkfifo \"$1.1\"",
];

#[test]
fn a_confined_command_cannot_touch_the_audit_file_and_later_calls_are_recorded() {
    if !crate::sandbox::confinable() {
        return;
    }
    let (p, tmp) = crate::sandbox::project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write_home("hooks.yaml", "enabled: true\ngate_shell_tools: true\n");
    let log = p.path().join("hookd-events.jsonl");
    std::fs::write(p.path().join("hookd-events.jsonl.1"), "").unwrap();
    let (reply, err) = claude_bash(&p, &log, "true", &[]);
    assert!(
        reply.to_string().contains("hookd"),
        "rewritten to run confined: {reply} {err}"
    );
    let before = std::fs::read(&log).unwrap();
    assert_eq!(seqs(&log), [1]);
    for attack in ATTACKS {
        // Unconfined, the attack works on a copy.
        let copy = p.path().join("copy.jsonl");
        std::fs::write(&copy, &before).unwrap();
        std::fs::write(p.path().join("copy.jsonl.1"), "").unwrap();
        let o = p.bash(&format!("set -- {}; {attack}", copy.display()));
        assert!(o.status.success(), "{attack}: {}", stderr(&o));
        let same = std::fs::symlink_metadata(&copy).is_ok_and(|m| m.is_file())
            && std::fs::read(&copy).unwrap() == before
            && std::fs::symlink_metadata(p.path().join("copy.jsonl.1"))
                .unwrap()
                .is_file();
        assert!(!same, "{attack} works unconfined");
        let _ = p.bash("rm -f copy.jsonl copy.jsonl.1 copy.jsonl.moved");
        // Confined, as the agent's shell runs the rewritten call (HOOKD_EVENTS in its
        // environment), it fails and the audit file is as it was.
        let script = format!("set -- {}; {attack}", log.display());
        let o = crate::sandbox::hookd(&p, &tmp, &["exec", "--", "sh", "-c", &script])
            .env("HOOKD_EVENTS", &log)
            .output()
            .unwrap();
        // (It may "succeed" against what it sees there, `/dev/null`: the file is hidden.)
        let _ = o;
        let meta = std::fs::symlink_metadata(&log).unwrap();
        assert!(meta.is_file(), "{attack}");
        assert_eq!(std::fs::read(&log).unwrap(), before, "{attack}");
        let rotated = std::fs::symlink_metadata(p.path().join("hookd-events.jsonl.1")).unwrap();
        assert!(rotated.is_file(), "{attack}");
    }
    // Later calls are still recorded, numbered after the first.
    claude_bash(&p, &log, "true", &[]);
    assert_eq!(seqs(&log), [1, 2]);
}

/// docs/headless.md's CI set-up runs `hookd serve --events $PWD/hookd-events.jsonl` and sets no
/// `HOOKD_EVENTS` for the agent: the rewritten calls' `hookd exec` did not know the daemon's
/// file, and a confined command emptied it and wrote a forged line (attack round 9 of
/// 2026-11-27, F6). `hookd exec` hides the file the running daemon's trail names.
#[test]
fn a_confined_command_cannot_touch_the_running_daemons_events_file_in_the_project() {
    if !crate::sandbox::confinable() {
        return;
    }
    let (p, tmp) = crate::sandbox::project();
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_tool, command: 'true'}]\n",
    );
    let log = p.path().join("hookd-events.jsonl");
    let d = start(&p, &["--events", log.to_str().unwrap()]);
    dispatch(&d);
    let until = Instant::now() + Duration::from_secs(10);
    while seqs(&log).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = std::fs::read_to_string(&log).unwrap();
    assert_eq!(seqs(&log), [1]);
    let attack = format!(": > {0}; echo '{{\"seq\":1}}' >> {0}", log.display());
    // Unconfined, it works on a copy.
    let copy = p.path().join("copy.jsonl");
    std::fs::write(&copy, &before).unwrap();
    let o = p.bash(&format!(": > {0}; echo forged >> {0}", copy.display()));
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "forged\n");
    // Confined, as the agent's shell runs the rewritten call (the daemon's socket named).
    let o = crate::sandbox::hookd(&p, &tmp, &["exec", "--", "sh", "-c", &attack])
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    let _ = o; // it may "succeed" against what it sees there: the file is hidden
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);
    dispatch(&d);
    while seqs(&log).len() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(seqs(&log), [1, 2]);
}

/// A confined command run before any hook made the audit file (`hookd exec -- make test` by
/// hand, `HOOKD_EVENTS` exported) made it itself and kept a second name for it: every later
/// event landed there and the second name rewrote them (attack round of 2026-11-27).
/// `hookd exec` makes the file first, so it is held; and hookd writes no events file with a
/// second name.
#[test]
fn an_audit_file_a_confined_command_would_make_first_is_hookds() {
    if !crate::sandbox::confinable() {
        return;
    }
    let (p, tmp) = crate::sandbox::project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^ls$']}}}}\n",
    );
    p.write_home("hooks.yaml", "enabled: true\ngate_shell_tools: true\n");
    let log = p.path().join("hookd-events.jsonl");
    let o = crate::sandbox::hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            ": > hookd-events.jsonl; ln hookd-events.jsonl notes.txt",
        ],
    )
    .env("HOOKD_EVENTS", &log)
    .output()
    .unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(
        !p.path().join("notes.txt").exists(),
        "a second name for the audit file"
    );
    let (reply, _) = claude_bash(&p, &log, "rm -rf /", &[]);
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(seqs(&log), [1]);
    // A file with a second name is not written to: what hookd appends could be rewritten.
    std::fs::remove_file(&log).unwrap();
    std::fs::write(&log, "").unwrap();
    std::fs::hard_link(&log, p.path().join("other-name")).unwrap();
    let (reply, err) = claude_bash(&p, &log, "ls", &["--fail-closed"]);
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "{reply}"
    );
    assert!(
        err.contains(&format!("cannot open the events file {}: it has 2 names (hard links): another name could rewrite what hookd appends; move it away and let hookd make a new one", log.display())),
        "{err}"
    );
}

/// A confined command (a backgrounded `make test`) that locked the audit file held up every
/// later hook, which then outlived the agent's hook timeout, unrecorded (attack round of
/// 2026-11-27). The file is hidden from confined commands, and a writer waits for its lock at
/// most 2 s: then the event is lost, said, and `--fail-closed` denies.
#[test]
fn a_lock_on_the_audit_file_holds_up_no_hook() {
    if !crate::sandbox::confinable() {
        return;
    }
    let (p, tmp) = crate::sandbox::project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^ls$']}}}}\n",
    );
    p.write_home("hooks.yaml", "enabled: true\ngate_shell_tools: true\n");
    let log = p.path().join("hookd-events.jsonl");
    claude_bash(&p, &log, "ls", &[]);
    let hold = "import fcntl, sys, time\nf = open(sys.argv[1], 'rb')\nfcntl.flock(f, fcntl.LOCK_SH)\nprint('locked', flush=True)\ntime.sleep(6)\n";
    std::fs::write(p.path().join("hold.py"), hold).unwrap();
    let mut holder = crate::sandbox::hookd(&p, &tmp, &["exec", "--", "python3", "hold.py"])
        .arg(&log)
        .env("HOOKD_EVENTS", &log)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "locked\n");
    // What the confined command locked is not the audit file: the call is recorded at once.
    let started = std::time::Instant::now();
    claude_bash(&p, &log, "ls", &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(seqs(&log), [1, 2]);
    let _ = holder.kill();
    let _ = holder.wait();
    // A process outside holding it: the writer gives up after 2 s; fail-closed denies.
    let f = std::fs::File::open(&log).unwrap();
    f.lock_shared().unwrap();
    let started = std::time::Instant::now();
    let (reply, err) = claude_bash(&p, &log, "ls", &["--fail-closed"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "{reply}"
    );
    assert!(
        err.contains("another process has held its lock for over 2 s"),
        "{err}"
    );
}

#[test]
fn when_events_cannot_be_written_fail_closed_denies_rather_than_decide_unrecorded() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: check, hook: pre_tool, command: 'true'}]\n",
    );
    let log = p.path().join("hookd-events.jsonl");
    let decision = |r: &Value| r["hookSpecificOutput"]["permissionDecision"].clone();
    let reason = |r: &Value| r["hookSpecificOutput"]["permissionDecisionReason"].clone();
    // The audit file was replaced by a FIFO (where nothing held it): it cannot be opened.
    nix::unistd::mkfifo(&log, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (reply, _) = claude_bash(&p, &log, "true", &["--fail-closed"]);
    assert_eq!(decision(&reply), "deny", "{reply}");
    let fifo = format!("error: cannot open the events file {}: it is a FIFO, not a regular file: hookd reads and writes events only in regular files (remove it)", log.display());
    assert!(reason(&reply).as_str().unwrap().contains(&fifo), "{reply}");
    let (reply, err) = claude_bash(&p, &log, "true", &[]);
    assert_ne!(decision(&reply), "deny", "{reply}");
    assert!(err.contains(&fifo), "{err}");
    // It opens, and the event cannot be written (its numbering cannot grow): the hook ran,
    // and with fail-closed the call is denied rather than let through unrecorded.
    std::fs::remove_file(&log).unwrap();
    std::fs::write(&log, format!("{{\"seq\":{}}}\n", u64::MAX)).unwrap();
    let (reply, err) = claude_bash(&p, &log, "true", &["--fail-closed"]);
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(
        reason(&reply)
            .as_str()
            .unwrap()
            .contains("hookd could not record this call in its events file"),
        "{reply}"
    );
    assert!(
        err.contains(&format!(
            "cannot write events to {}: its last event is numbered 18446744073709551615",
            log.display()
        )),
        "{err}"
    );
    let (reply, _) = claude_bash(&p, &log, "true", &[]);
    assert_ne!(decision(&reply), "deny", "{reply}");
}

/// The next configuration event on `events` (others passed over): its type, `trust`, `trust_was`, `trust_pending`.
fn next_config_event(events: &mut impl BufRead) -> (String, Value, Value, Value) {
    let e = loop {
        let (_, e) = crate::support::daemon::read_events(events, 1).remove(0);
        if e["type"].as_str().unwrap().starts_with("config_") {
            break e;
        }
    };
    let s = |k: &str| e[k].clone();
    (
        e["type"].as_str().unwrap().to_string(),
        s("trust"),
        s("trust_was"),
        s("trust_pending"),
    )
}

#[test]
fn configuration_events_say_the_projects_trust_and_whether_a_change_took_effect() {
    let p = project();
    let d = crate::support::daemon::start_with(&p, &[], false);
    let mut events = subscribe(&d, None);
    let ev = |t: &str, trust: &str, was: Value, pending: Value| {
        (t.to_string(), json!(trust), was, pending)
    };
    // `hookd trust`, and at once an error in the user's file: the reload that follows keeps
    // the untrusted configuration, and says that the trust given did not take effect.
    assert!(p
        .cmd_untrusted(&["trust"])
        .output()
        .unwrap()
        .status
        .success());
    p.write_home("hooks.yaml", "enabled: [\n");
    assert_eq!(
        next_config_event(&mut events),
        ev("config_error", "untrusted", Value::Null, json!("trusted"))
    );
    // So do the dispatches' notices, which an adapter prints for the operator.
    let body = json!({"point": "post_tool", "context": {"session_id": "t"}}).to_string();
    let (_, out) = crate::support::daemon::unix(&d.socket, "POST", "/v1/dispatch", &body);
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        outcome["notices"][0],
        "the project's trust is trusted since, but the changed configuration has errors (`hookd check` shows them): the daemon keeps the previous configuration, where it is untrusted, until they are fixed",
        "{outcome}"
    );
    // The error fixed: the trust takes effect, said with what it was.
    std::fs::remove_file(p.home.path().join(".infer/hooks.yaml")).unwrap();
    assert_eq!(
        next_config_event(&mut events),
        ev(
            "config_reloaded",
            "trusted",
            json!("untrusted"),
            Value::Null
        )
    );
    let (_, out) = crate::support::daemon::unix(&d.socket, "POST", "/v1/dispatch", &body);
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["notices"], Value::Null, "none: {outcome}");
    // A covered file changed: untrusted again, and said.
    p.write("hooks.yaml", "enabled: true\nhooks: []\n");
    assert_eq!(
        next_config_event(&mut events),
        ev("config_reloaded", "changed", json!("trusted"), Value::Null)
    );
}

#[test]
fn a_daemon_that_cannot_record_a_call_has_it_denied_by_a_client_failing_closed() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo [a-z]+$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: check, hook: pre_tool, command: 'echo checked'}]\n",
    );
    let log = p.path().join("events.jsonl");
    let d = start(&p, &["--events", log.to_str().unwrap()]);
    let call = |flags: &[&str]| {
        let payload = json!({"hook_event_name": "PreToolUse", "session_id": "a", "cwd": p.path(),
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let mut args = vec!["adapter", "claude-code"];
        args.extend_from_slice(flags);
        let mut cmd = p.cmd(&args);
        cmd.env("HOOKD_SOCKET", &d.socket);
        let o = with_stdin(cmd, &payload.to_string());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let reply: Value = serde_json::from_slice(&o.stdout).unwrap();
        reply["hookSpecificOutput"].clone()
    };
    assert_ne!(call(&["--fail-closed"])["permissionDecision"], "deny");
    assert_eq!(seqs(&log), [1]);
    // The daemon's log is replaced by a FIFO: its events can no longer be written.
    std::fs::remove_file(&log).unwrap();
    nix::unistd::mkfifo(&log, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let denied = call(&["--fail-closed"]);
    assert_eq!(denied["permissionDecision"], "deny", "{denied}");
    assert!(
        denied["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("hookd could not record this call in its events file"),
        "{denied}"
    );
    assert_ne!(call(&[])["permissionDecision"], "deny");
}

#[test]
fn a_session_filter_that_matches_nothing_scans_a_budget_per_write_and_moves_its_resume_point() {
    use std::io::Write as _;
    let p = project();
    let log = p.path().join("events.jsonl");
    // A large log of another session's events (about 6 MB).
    let pad = "x".repeat(250);
    let text: String = (1..=20_000)
        .map(|n| format!("{{\"seq\":{n},\"timestamp\":\"2026-11-25T00:00:00.000Z\",\"type\":\"system_reminder\",\"session_id\":\"other\",\"content\":\"{pad}\"}}\n"))
        .collect();
    std::fs::write(&log, text).unwrap();
    let d = start(&p, &["--events", log.to_str().unwrap(), "--ring", "16"]);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let auth = d
        .token
        .as_ref()
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET /v1/events?session=mine&since=0 HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}\r\n",
        d.port
    )
    .unwrap();
    let mut r = std::io::BufReader::new(s);
    // Nothing of the session: the resume point moves on in steps (an `id:` line alone each
    // write), not the whole log read at once.
    let mut ids = Vec::new();
    let mut line = String::new();
    while ids.last() != Some(&20_000) {
        line.clear();
        r.read_line(&mut line).unwrap();
        assert!(
            !line.starts_with("data:"),
            "no event of another session: {line}"
        );
        if let Some(id) = line.strip_prefix("id: ") {
            ids.push(id.trim().parse::<u64>().unwrap());
        }
    }
    assert!(ids.len() >= 4, "a budget per write: {ids:?}");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    // An event of the session comes through after them.
    let body = json!({"point": "post_tool", "context": {"session_id": "mine"}}).to_string();
    assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    let mut data = String::new();
    while !line.starts_with("data:") {
        line.clear();
        r.read_line(&mut line).unwrap();
        data = line.clone();
    }
    assert!(data.contains("\"seq\":20001"), "{data}");
}

/// A daemon's events file appended to by the clients that fell back while it is gone is
/// rotated as the daemon rotated it (its `--events-max-bytes`, three old files kept), and
/// numbering goes on across the rotations: the file no longer grows without bound.
#[test]
fn clients_appending_to_a_gone_daemons_log_rotate_it_as_it_did() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let d = start(
        &p,
        &[
            "--events",
            log.to_str().unwrap(),
            "--events-max-bytes",
            "1500",
        ],
    );
    let socket = d.socket.clone();
    dispatch(&d);
    drop(d); // killed: its trail stays, naming the log and its size
    for _ in 0..12 {
        let o = p
            .cmd(&["dispatch", "post_tool", "--session-id", "a"])
            .env("HOOKD_SOCKET", &socket)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let files: Vec<_> = hookd::events::log_files(&log, 3);
    let mut all = Vec::new();
    for f in &files {
        assert!(f.exists(), "{} was not made", f.display());
        let size = std::fs::metadata(f).unwrap().len();
        assert!(size <= 1500, "{}: {size} bytes", f.display());
        all.extend(seqs(f));
    }
    // The oldest went; what is kept runs on without a gap to the thirteenth event.
    assert_eq!(all.last(), Some(&13), "{all:?}");
    assert_eq!(all, (all[0]..=13).collect::<Vec<_>>());
}
