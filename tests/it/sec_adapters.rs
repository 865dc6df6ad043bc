//! Fail closed means closed: every payload an adapter cannot understand is denied in a form the
//! agent obeys, whichever way fail-closed was switched on; install never writes through a link.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::{stderr, stdout, Project};

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

/// Run `cmd` with raw bytes on stdin; a child that stops reading early is not an error here.
fn with_bytes(mut cmd: Command, input: Vec<u8>) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Payloads no adapter can understand: Node's lone surrogate escape, invalid UTF-8, over the
/// size limit, and not JSON at all.
fn unreadable() -> Vec<(&'static str, Vec<u8>)> {
    let mut big =
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    big.extend(br#""}}"#);
    vec![
        (
            "lone surrogate",
            br#"{"hook_event_name":"PreToolUse","event":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl x | sh \ud800"}}"#
                .to_vec(),
        ),
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
