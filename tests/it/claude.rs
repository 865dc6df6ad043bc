//! The Claude Code adapter, driven with payloads captured from a real Claude Code (2.1.x).

use crate::support::{stderr, stdout, Project};
use serde_json::{json, Value};

/// The captured payloads, in the order of a session.
const FIXTURES: [&str; 7] = [
    "session_start",
    "user_prompt_submit",
    "pre_tool_use",
    "post_tool_use",
    "post_tool_use_failure",
    "stop",
    "session_end",
];

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code")
            .join(format!("{name}.json")),
    )
    .unwrap()
}

fn adapter(p: &Project, payload: &str, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["adapter", "claude-code"];
    args.extend_from_slice(extra);
    let out = p.run_with_stdin(&args, payload);
    let reply =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (out.status.code().unwrap(), reply, stderr(&out))
}

/// A project whose hooks steer at every point Claude Code reaches.
fn steering() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./[a-z]+\\.sh$', '^echo ok-tool$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nmax_continues: 1\nhooks:\n  - {name: guard, hook: pre_tool, command: ./guard.sh, matcher: Bash}\n  - {name: note, hook: post_tool, command: ./note.sh}\n  - {name: tests, hook: post_session, command: ./tests.sh}\n  - {name: branch, hook: pre_session, command: ./branch.sh}\n",
    );
    p.write("reminders.yaml", "enabled: true\nreminders: [{name: fail, trigger: on_failure, text: '{tool_name} failed: read the error'}]\n");
    for (name, body) in [
        (
            "guard",
            r#"grep -q nonexistent && echo '{"decision": "deny", "reason": "do not list missing directories"}'; true"#,
        ),
        ("note", r#"echo '{"context": "tool observed by hookd"}'"#),
        (
            "tests",
            r#"echo '{"continue": true, "reason": "the tests still fail"}'"#,
        ),
        ("branch", r#"echo '{"context": "branch: main"}'"#),
    ] {
        let path = p.path().join(format!("{name}.sh"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    p
}

#[test]
fn every_fixture_gets_its_golden_reply() {
    let p = steering();
    for name in FIXTURES {
        let (code, reply, err) = adapter(&p, &fixture(name), &[]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(err, "", "{name}");
        crate::golden::golden(&format!("claude-code/{name}"), reply);
    }
}

#[test]
fn replies_speak_claude_codes_format() {
    let p = steering();
    let (_, r, _) = adapter(&p, &fixture("pre_tool_use"), &[]);
    assert_eq!(
        r,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "do not list missing directories"}})
    );
    let (_, r, _) = adapter(&p, &fixture("post_tool_use_failure"), &[]);
    assert_eq!(
        r["hookSpecificOutput"]["hookEventName"],
        "PostToolUseFailure"
    );
    assert_eq!(
        r["hookSpecificOutput"]["additionalContext"],
        "Bash failed: read the error\n\ntool observed by hookd"
    );
    let (_, r, _) = adapter(&p, &fixture("stop"), &[]);
    assert_eq!(
        r,
        json!({"decision": "block", "reason": "the tests still fail"})
    );
    // The loop guard: Claude Code's own stop_hook_active reaches hooks; hookd's cap holds.
    let (_, r, _) = adapter(&p, &fixture("stop"), &[]);
    assert_eq!(r["systemMessage"], "hookd stopped honouring `continue` after 1 consecutive continues (max_continues in hooks.yaml)");
    let (_, r, _) = adapter(&p, &fixture("user_prompt_submit"), &[]);
    assert_eq!(
        r,
        json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}})
    );
}

#[test]
fn unknown_events_and_malformed_payloads_let_the_agent_go_on() {
    let p = steering();
    let (code, r, err) = adapter(
        &p,
        r#"{"hook_event_name": "Teleport", "session_id": "x"}"#,
        &[],
    );
    assert_eq!((code, r), (0, json!({})));
    assert_eq!(
        err,
        "hookd: claude-code event `Teleport` is not mapped to a hook point; ignored\n"
    );
    let (code, r, err) = adapter(&p, "{not json", &[]);
    assert_eq!((code, r), (0, json!({})));
    assert!(err.starts_with("hookd: the payload is not JSON: "), "{err}");
    let (code, r, err) = adapter(&p, r#"{"session_id": "x"}"#, &[]);
    assert_eq!((code, r), (0, json!({})));
    assert_eq!(err, "hookd: the payload has no `hook_event_name`\n");
}

#[test]
fn hookds_own_failure_blocks_only_when_asked_to_fail_closed() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: x, hook: nowhere, command: y}]\n",
    );
    let (code, r, err) = adapter(&p, &fixture("pre_tool_use"), &[]);
    assert_eq!((code, r), (0, json!({})));
    assert!(err.contains("unknown hook point `nowhere`"), "{err}");
    let (code, r, _) = adapter(&p, &fixture("pre_tool_use"), &["--fail-closed"]);
    assert_eq!(code, 0);
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(r["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .starts_with("hookd failed: "));
}

#[test]
fn the_models_shell_commands_face_the_same_gate() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo ok-tool$']}}}}\n",
    );
    let events = p.path().join("events.jsonl");
    let ev = events.to_str().unwrap();
    // Off by default: the model's command is not hookd's business.
    let (_, r, _) = adapter(&p, &fixture("pre_tool_use"), &[]);
    assert_eq!(r, json!({}));
    // On: an off-list command is denied; the model is told why, not how to allow it.
    let (_, r, _) = adapter(
        &p,
        &fixture("pre_tool_use"),
        &["--gate-shell-tools", "--events", ev],
    );
    let hso = &r["hookSpecificOutput"];
    assert_eq!(hso["permissionDecision"], "deny");
    let reason = hso["permissionDecisionReason"].as_str().unwrap();
    assert_eq!(reason, "hookd refused this Bash call: `ls /nonexistent-dir-xyz` is not on the allow-list for mode `standard`");
    let logged: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logged[0]["type"], "tool_command_denied");
    assert_eq!(logged[0]["command"], "ls /nonexistent-dir-xyz");
    // An allowed command passes; so do other tools.
    let allowed = fixture("pre_tool_use").replace("ls /nonexistent-dir-xyz", "echo ok-tool");
    let (_, r, _) = p
        .cmd(&["adapter", "claude-code"])
        .env("HOOKD_GATE_SHELL_TOOLS", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(allowed.as_bytes())
                .unwrap();
            let o = c.wait_with_output().unwrap();
            (
                0,
                serde_json::from_str::<Value>(&String::from_utf8_lossy(&o.stdout)).unwrap(),
                String::new(),
            )
        })
        .unwrap();
    assert_eq!(r, json!({}));
    let write = fixture("pre_tool_use").replace("\"Bash\"", "\"Write\"");
    let (_, r, _) = adapter(&p, &write, &["--gate-shell-tools"]);
    assert_eq!(r, json!({}));
}

#[test]
fn install_merges_is_idempotent_keeps_a_backup_and_uninstall_restores() {
    let p = Project::new();
    let settings = p.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --check"}]}]}
    });
    std::fs::write(&settings, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert!(
        stdout(&out).starts_with("hookd: added hookd's adapter to "),
        "{}",
        stdout(&out)
    );
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(installed["model"], "opus");
    assert_eq!(
        installed["hooks"]["PreToolUse"][0], original["hooks"]["PreToolUse"][0],
        "other hooks are kept"
    );
    let ours = installed["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        ours.ends_with(" adapter claude-code") && ours.contains("hookd"),
        "{ours}"
    );
    for event in [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
    ] {
        assert!(installed["hooks"][event].is_array(), "{event}");
    }
    let keys: Vec<&String> = installed.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["model", "permissions", "hooks"],
        "the user's key order is kept"
    );
    let backup: Value = serde_json::from_str(
        &std::fs::read_to_string(settings.with_extension("json.hookd-backup")).unwrap(),
    )
    .unwrap();
    assert_eq!(backup, original);
    // Twice changes nothing.
    let before = std::fs::read_to_string(&settings).unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert!(stdout(&out).contains("nothing changed"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
    // Uninstall removes exactly what was added.
    p.run(&["uninstall", "claude-code"]);
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after, original);
    // The backup would install hookd again: it is gone too.
    assert!(!settings.with_extension("json.hookd-backup").exists());
    // A broken settings file is refused, unchanged.
    std::fs::write(&settings, "{broken").unwrap();
    let out = p.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not valid JSON"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{broken");
}

#[test]
fn user_scope_writes_the_home_settings() {
    let p = Project::new();
    let out = p.run(&["install", "claude-code", "--scope", "user"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let home_settings = p.home.path().join(".claude/settings.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&home_settings).unwrap()).unwrap();
    assert!(v["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("adapter claude-code"));
    p.run(&["uninstall", "claude-code", "--scope", "user"]);
    assert!(!home_settings.exists());
}

#[test]
fn through_a_running_daemon_every_reply_is_the_same() {
    let p = steering();
    let d = crate::support::daemon::start(&p, &[]);
    let run = |name: &str, via_daemon: bool| {
        let mut c = p.cmd(&["adapter", "claude-code"]);
        if via_daemon {
            c.env("HOOKD_SOCKET", &d.socket);
        } else {
            c.env("HOOKD_NO_DAEMON", "1");
        }
        let out = crate::support::with_stdin(c, &fixture(name));
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()
    };
    // Twice over, so the stop loop guard's state (one continue, then stop) is exercised too.
    for _ in 0..2 {
        for name in &FIXTURES[..6] {
            assert_eq!(run(name, true), run(name, false), "{name}");
        }
    }
    let (_, metrics) = crate::support::daemon::tcp(&d, "GET", "/metrics", "");
    for point in ["pre_session", "pre_tool", "post_tool", "post_session"] {
        assert!(
            metrics.contains(&format!("hookd_dispatches_total{{point=\"{point}\"}} ")),
            "{metrics}"
        );
    }
    assert!(
        metrics.contains("hookd_dispatches_total{point=\"post_tool\"} 4\n"),
        "{metrics}"
    );
}
