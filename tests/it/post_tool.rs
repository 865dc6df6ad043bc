//! Issue 41 item 5: after a call hookd rewrote to run confined, the agent reports the rewrite
//! (`'…/hookd' exec --shell='COMMAND'…`) at `post_tool`; hooks there see the model's command,
//! in hookd's `tool.input` and in the agent's own `tool_input`, with `tool.confined: true`.

use crate::support::{stderr, with_stdin, Project};

fn seen_by_post_tool_hook(agent: &str, payload: serde_json::Value) -> serde_json::Value {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: seen, hook: post_tool, command: ./seen.sh}\n",
    );
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./seen\\.sh$']}}}}\n",
    );
    let script = p.path().join("seen.sh");
    std::fs::write(&script, "#!/bin/sh\ncat > seen.json\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = with_stdin(p.cmd(&["adapter", agent]), &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(p.path().join("seen.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn post_tool_hooks_see_the_models_command_not_the_rewrite() {
    let hookd = std::path::Path::new("/opt/hookd dir/hookd");
    let command = "make test && echo 'done'";
    let rewritten = [
        hookd::sandbox::shell_rewrite(hookd, command, None),
        hookd::sandbox::shell_rewrite(
            hookd,
            command,
            Some(std::path::Path::new("/state/cwd/1-2-3")),
        ),
    ];
    for wrapped in &rewritten {
        let seen = seen_by_post_tool_hook(
            "claude-code",
            serde_json::json!({"session_id": "s", "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": wrapped},
                "tool_response": {"stdout": "ok"}}),
        );
        assert_eq!(seen["tool"]["input"]["command"], command, "{seen}");
        assert_eq!(seen["tool_input"]["command"], command, "{seen}");
        assert_eq!(seen["tool"]["confined"], true, "{seen}");
    }
    let seen = seen_by_post_tool_hook(
        "gemini",
        serde_json::json!({"session_id": "s", "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command", "tool_input": {"command": rewritten[0]},
            "tool_response": {"llmContent": "ok"}}),
    );
    assert_eq!(seen["tool"]["input"]["command"], command, "{seen}");
    assert_eq!(seen["tool"]["confined"], true, "{seen}");
    // A command that only looks like one (something after it) is left as the agent sent it.
    let tampered = format!("{}; curl x", rewritten[0]);
    let seen = seen_by_post_tool_hook(
        "claude-code",
        serde_json::json!({"session_id": "s", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": tampered},
            "tool_response": {"stdout": "ok"}}),
    );
    assert_eq!(seen["tool"]["input"]["command"], tampered, "{seen}");
    assert!(seen["tool"].get("confined").is_none(), "{seen}");
}

/// Issue 41 item 9: `tool_call_allowed` says whether the call was rewritten to run confined,
/// and under which policy.
#[test]
fn tool_call_allowed_names_the_policy_a_rewritten_call_runs_under() {
    let p = crate::support::gated(&["^make test$"]);
    let events = p.path().join("events.jsonl");
    let allowed = |config: &str| {
        p.write_home(
            "config.yaml",
            &format!("{config}tools: {{bash: {{mode: {{all: {{allow: ['^make test$']}}}}}}}}\n"),
        );
        let _ = std::fs::remove_file(&events);
        let mut adapter = p.cmd(&["adapter", "claude-code"]);
        adapter.env("HOOKD_EVENTS", &events).env("TMPDIR", "/tmp");
        crate::support::claude_pre_tool(
            adapter,
            p.path(),
            "Bash",
            serde_json::json!({"command": "make test"}),
        );
        let text = std::fs::read_to_string(&events).unwrap();
        crate::support::json_lines(&text)
            .into_iter()
            .find(|e| e["type"] == "tool_call_allowed")
            .unwrap()
    };
    let e = allowed("");
    assert!(e.get("sandbox").is_none(), "{e}");
    if !hookd::sandbox::support().missing().is_empty() {
        crate::support::unavailable("sandbox", "this kernel cannot confine");
        return;
    }
    let e = allowed("sandbox: {enabled: true}\n");
    assert_eq!(
        e["sandbox"],
        format!("writes: {}, /tmp; network: off", p.path().display()),
        "{e}"
    );
}
