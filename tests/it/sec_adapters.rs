//! Fail closed means closed: every payload an adapter cannot understand is denied in a form the
//! agent obeys, whichever way fail-closed was switched on; install never writes through a link.

use crate::support::{stderr, stdout, with_bytes, Project};

/// A project whose own hook would write a marker if anything were dispatched.
fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./mark\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: mark, hook: pre_tool, command: ./mark.sh}]\n",
    );
    let script = p.path().join("mark.sh");
    std::fs::write(&script, "#!/bin/sh\ntouch dispatched.marker\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p
}

/// Payloads no adapter can understand: invalid UTF-8, over the size limit, and not JSON at all.
/// (Node's lone surrogate escape is read as U+FFFD and gated: sec_review.)
fn unreadable() -> Vec<(&'static str, Vec<u8>)> {
    let mut big =
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    big.extend(br#""}}"#);
    vec![
        (
            "invalid UTF-8",
            b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \xff\xfe\"}}".to_vec(),
        ),
        ("over the size limit", big),
        ("not JSON", b"PreToolUse please".to_vec()),
    ]
}

/// (exit code, stdout) that mean "deny" to each agent for a payload without a readable event.
fn denied(agent: &str) -> (i32, &'static str) {
    match agent {
        "claude-code" => (2, r#"{"decision":"block","reason":"hookd failed: "#),
        "gemini" => (2, r#"{"decision":"deny","reason":"hookd failed: "#),
        _ => (2, ""),
    }
}

#[test]
fn fail_closed_denies_every_payload_it_cannot_read_for_every_agent() {
    let p = project();
    for agent in ["claude-code", "gemini", "crush"] {
        for (what, payload) in unreadable() {
            let out = with_bytes(
                p.cmd(&["adapter", agent, "--fail-closed", "--no-daemon"]),
                payload,
            );
            let (code, prefix) = denied(agent);
            assert_eq!(
                out.status.code(),
                Some(code),
                "{agent}, {what}: {}",
                stderr(&out)
            );
            assert!(
                stdout(&out).starts_with(prefix),
                "{agent}, {what}: {}",
                stdout(&out)
            );
            assert!(
                stderr(&out).starts_with("hookd failed: "),
                "{agent}, {what}: {}",
                stderr(&out)
            );
        }
    }
    assert!(!p.path().join("dispatched.marker").exists());
}

#[test]
fn without_fail_closed_an_unreadable_payload_lets_the_agent_go_on() {
    let p = project();
    let out = with_bytes(
        p.cmd(&["adapter", "claude-code", "--no-daemon"]),
        b"not json".to_vec(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "{}\n");
    assert!(
        stderr(&out).starts_with("hookd: the payload is not JSON: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn hookd_fail_closed_takes_every_spelling_of_on_and_fails_closed_on_nonsense() {
    let p = project();
    for value in ["1", "true", "TRUE", "yes", "on", "On"] {
        let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
        cmd.env("HOOKD_FAIL_CLOSED", value);
        let out = with_bytes(cmd, b"not json".to_vec());
        assert_eq!(out.status.code(), Some(2), "HOOKD_FAIL_CLOSED={value}");
    }
    for value in ["0", "false", "off", "no", ""] {
        let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
        cmd.env("HOOKD_FAIL_CLOSED", value);
        let out = with_bytes(cmd, b"not json".to_vec());
        assert_eq!(out.status.code(), Some(0), "HOOKD_FAIL_CLOSED={value}");
    }
    let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
    cmd.env("HOOKD_FAIL_CLOSED", "enabled");
    let out = with_bytes(cmd, b"not json".to_vec());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with(
        "hookd: HOOKD_FAIL_CLOSED=enabled is not on or off (1/true/yes/on, 0/false/no/off); taken as on\n"
    ), "{}", stderr(&out));
}

#[test]
fn the_adapters_other_variables_are_its_flags_and_a_bad_value_is_said_not_fatal() {
    let p = project();
    // Each variable stands for a flag, and `--help` says which.
    let help = p.cmd(&["adapter", "--help"]).output().unwrap();
    for (flag, var) in [
        ("--events <FILE>", "[env: HOOKD_EVENTS=]"),
        ("--fail-closed", "[env: HOOKD_FAIL_CLOSED=]"),
        ("--no-daemon", "[env: HOOKD_NO_DAEMON=]"),
        (
            "--daemon-timeout-ms <MS>",
            "[env: HOOKD_DAEMON_TIMEOUT_MS=]",
        ),
    ] {
        let text = stdout(&help);
        let at = text.find(flag).unwrap_or_else(|| panic!("{flag}: {text}"));
        let next = text[at..].find("\n\n  ").map_or(text.len(), |n| at + n);
        assert!(text[at..next].contains(var), "{flag}: {}", &text[at..next]);
    }
    // Values hookd cannot read: the agent still gets its answer (the hook's own verdict), and
    // the user a line naming the variable and what was taken instead.
    let payload = serde_json::json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": {"file_path": "x"}
    });
    let mut cmd = p.cmd(&["adapter", "claude-code"]);
    cmd.env("HOOKD_NO_DAEMON", "sometimes")
        .env("HOOKD_DAEMON_TIMEOUT_MS", "2s")
        .env("HOOKD_SOCKET", p.path().join("no.sock"));
    let out = with_bytes(cmd, payload.to_string().into_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with('{'), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains(
        "hookd: HOOKD_NO_DAEMON=sometimes is not on or off (1/true/yes/on, 0/false/no/off); taken as off\n"
    ), "{err}");
    assert!(
        err.contains(
            "hookd: HOOKD_DAEMON_TIMEOUT_MS=2s is not a number of milliseconds; 2000 used\n"
        ),
        "{err}"
    );
    // Set empty (the shell's way to unset): as if not set, without a word.
    let mut cmd = p.cmd(&["adapter", "claude-code"]);
    cmd.env("HOOKD_EVENTS", "")
        .env("HOOKD_NO_DAEMON", "")
        .env("HOOKD_DAEMON_TIMEOUT_MS", "")
        .env("HOOKD_SOCKET", p.path().join("no.sock"));
    let out = with_bytes(cmd, payload.to_string().into_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    // The flags themselves, with no value, are on.
    let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon", "--fail-closed"]);
    cmd.env_remove("HOOKD_FAIL_CLOSED");
    let out = with_bytes(cmd, b"not json".to_vec());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn fail_closed_true_in_the_users_hooks_yaml_is_fail_closed() {
    let p = project();
    p.write_home("hooks.yaml", "fail_closed: true\n");
    let out = with_bytes(
        p.cmd(&["adapter", "gemini", "--no-daemon"]),
        b"{\"hook_event_name\": \"BeforeTool\", \xff}".to_vec(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A project cannot switch it off for the user; nor, untrusted, switch it on.
    p.write("hooks.yaml", "fail_closed: false\n");
    let out = with_bytes(
        p.cmd(&["adapter", "gemini", "--no-daemon"]),
        b"garbage".to_vec(),
    );
    assert_eq!(out.status.code(), Some(2));
    p.write_home("hooks.yaml", "enabled: false\n");
    p.write("hooks.yaml", "fail_closed: true\n");
    let out = with_bytes(
        p.cmd_untrusted(&["adapter", "gemini", "--no-daemon"]),
        b"garbage".to_vec(),
    );
    assert_eq!(out.status.code(), Some(0));
}

fn settings(p: &Project) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p.path().join(".claude/settings.json")).unwrap())
        .unwrap()
}

#[test]
fn install_writes_fail_closed_and_gating_into_the_agents_command() {
    let p = Project::new();
    let out = p.run(&[
        "install",
        "claude-code",
        "--fail-closed",
        "--gate-shell-tools",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = settings(&p);
    let cmd = s["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        cmd.ends_with(" adapter claude-code --fail-closed --gate-shell-tools"),
        "{cmd}"
    );
    // Installing again without the flags updates the entries in place, never adds a second set.
    let out = p.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(0));
    let s = settings(&p);
    assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
    assert!(s["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with(" adapter claude-code"));
    p.run(&["install", "claude-code", "--fail-closed"]);
    let out = p.run(&["uninstall", "claude-code"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!p.path().join(".claude/settings.json").exists());
}

#[test]
fn install_never_writes_through_a_symlink_a_repository_planted() {
    let p = Project::new();
    let bashrc = p.home.path().join(".bashrc");
    std::fs::write(&bashrc, "# the user's shell startup file\n").unwrap();
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(p.path().join(".claude/settings.json"), "{\"x\": 1}\n").unwrap();
    // The attack: the backup path points at the user's ~/.bashrc.
    std::os::unix::fs::symlink(&bashrc, p.path().join(".claude/settings.json.hookd-backup"))
        .unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {0}/.claude/settings.json: the backup path {0}/.claude/settings.json.hookd-backup is a symbolic link; remove it, hookd changed nothing\n",
            p.path().display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "# the user's shell startup file\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join(".claude/settings.json")).unwrap(),
        "{\"x\": 1}\n"
    );
    // The settings file itself a link: refused unless asked, and then the target is written.
    std::fs::remove_file(p.path().join(".claude/settings.json.hookd-backup")).unwrap();
    std::fs::remove_file(p.path().join(".claude/settings.json")).unwrap();
    std::os::unix::fs::symlink(&bashrc, p.path().join(".claude/settings.json")).unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is a symbolic link; hookd does not write through links"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "# the user's shell startup file\n"
    );
    // The directory a link to elsewhere: refused too.
    std::fs::remove_file(p.path().join(".claude/settings.json")).unwrap();
    std::fs::remove_dir(p.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(p.home.path(), p.path().join(".claude")).unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!p.home.path().join("settings.json").exists());
    let out = p.run(&["install", "claude-code", "--follow-symlinks"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(p.home.path().join("settings.json").exists());
}

/// Issue 32, item 12: a project-scope install writes this machine's absolute path into a file
/// the team shares; where that path does not exist the agent cannot start the hook and goes on
/// without it, `--fail-closed` or not. `hookd install` warns when it writes one, and
/// `hookd check` names every installed entry whose hookd is gone.
#[test]
fn an_install_whose_hookd_is_gone_is_named_by_check() {
    let p = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("hookd");
    crate::support::copy_hookd(&copy);
    let mut install = std::process::Command::new(&copy);
    install
        .args([
            "install",
            "claude-code",
            "--fail-closed",
            "--gate-shell-tools",
        ])
        .current_dir(p.path())
        .env_clear()
        .env("HOME", p.home.path());
    let out = install.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = copy.canonicalize().unwrap();
    assert_eq!(
        stderr(&out),
        format!(
            "warning: {} is shared with everyone who clones the project, and it now runs {} by that path. On a machine where it does not exist, claude-code cannot start the hook and goes on without it (a hook that cannot start does not block), so --fail-closed cannot hold there. Install with --scope user (or local) on each machine instead, or keep hookd at this path everywhere.\n",
            p.path().join(".claude/settings.json").display(),
            copy.display()
        )
    );
    // Present: nothing to say.
    let check = p.run(&["check"]);
    assert!(
        !stderr(&check).contains("does not exist"),
        "{}",
        stderr(&check)
    );
    std::fs::remove_file(&copy).unwrap();
    let check = p.run(&["check"]);
    assert!(
        stderr(&check).contains(&format!(
            "warning: {} runs hookd at {}, which does not exist: claude-code cannot start the hook and goes on without it, so nothing is checked (not even with --fail-closed)\n  = fix: run `hookd install claude-code --scope project` again on this machine (a project-scope install names this machine's path in a file the team shares; prefer --scope user)\n",
            p.path().join(".claude/settings.json").display(),
            copy.display()
        )),
        "{}",
        stderr(&check)
    );
}
