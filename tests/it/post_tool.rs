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
    // The program that rewrote it is this hookd (the adapter's own).
    let hookd = std::fs::canonicalize(env!("CARGO_BIN_EXE_hookd")).unwrap();
    let hookd = hookd.as_path();
    let command = "make test && echo 'done'";
    let decided = hookd::sandbox::Decided::in_project("/p").starting_in("/p/web");
    let rewritten = [
        hookd::sandbox::shell_rewrite(hookd, command, &decided, None),
        hookd::sandbox::shell_rewrite(
            hookd,
            command,
            &decided,
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

/// The model's own call written as a rewrite, by a program named hookd that is not the hookd
/// that rewrites (`'/x/hookd' exec --shell='ls'`, the sandbox off: it ran unconfined, and
/// `/x/hookd` is whatever the model put there): reported as it ran, never as a confined `ls`.
#[test]
fn a_look_alike_rewrite_by_another_program_is_reported_as_it_ran() {
    let decided = hookd::sandbox::Decided::in_project("/p");
    let other = std::path::Path::new("/x/hookd");
    let look_alike = hookd::sandbox::shell_rewrite(other, "ls", &decided, None);
    let seen = seen_by_post_tool_hook(
        "claude-code",
        serde_json::json!({"session_id": "s", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": look_alike},
            "tool_response": {"stdout": "ok"}}),
    );
    assert_eq!(seen["tool"]["input"]["command"], look_alike, "{seen}");
    assert_eq!(seen["tool_input"]["command"], look_alike, "{seen}");
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
    // Under a host list, the call's connections go through hookd's proxy: said so, not "off".
    let e = allowed("sandbox: {enabled: true, network: {allow: [crates.io]}}\n");
    assert_eq!(
        e["sandbox"],
        format!(
            "writes: {}, /tmp; network: through hookd's proxy to crates.io",
            p.path().display()
        ),
        "{e}"
    );
}

/// Issue 41 item 9: each call the gate let through gets a `tool_result`: `ran` or `failed` from
/// the agent's report at `post_tool`, `not_run` at `post_session` when the agent never reported
/// it (Claude Code calls no hook for a call its own permissions refuse).
#[test]
fn each_allowed_call_ends_as_ran_failed_or_not_run() {
    let p = crate::support::gated(&["^make test$", "^make lint$", "^make build$"]);
    let events = p.path().join("events.jsonl");
    let send = |payload: serde_json::Value| {
        let mut adapter = p.cmd(&["adapter", "claude-code"]);
        adapter.env("HOOKD_EVENTS", &events);
        let o = with_stdin(adapter, &payload.to_string());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    let base = serde_json::json!({"session_id": "s9", "cwd": p.path(), "permission_mode": "default",
        "tool_name": "Bash"});
    let with = |event: &str, command: &str, extra: serde_json::Value| {
        let mut v = base.clone();
        v["hook_event_name"] = event.into();
        v["tool_input"] = serde_json::json!({"command": command});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    send(with("PreToolUse", "make test", serde_json::json!({})));
    send(with("PreToolUse", "make lint", serde_json::json!({})));
    send(with("PreToolUse", "make build", serde_json::json!({})));
    send(with(
        "PostToolUse",
        "make test",
        serde_json::json!({"tool_response": {"stdout": "ok"}}),
    ));
    send(with(
        "PostToolUseFailure",
        "make lint",
        serde_json::json!({"error": "exit 2"}),
    ));
    let mut stop = base.clone();
    stop["hook_event_name"] = "Stop".into();
    send(stop);
    let text = std::fs::read_to_string(&events).unwrap();
    let results: Vec<(String, String, String)> = crate::support::json_lines(&text)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            (
                e["command"].as_str().unwrap().to_string(),
                e["outcome"].as_str().unwrap().to_string(),
                e["hook"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("make test", "ran", "post_tool"),
        ("make lint", "failed", "post_tool"),
        ("make build", "not_run", "post_session"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(results, want, "{text}");
    // `hookd events` says it in a line.
    let o = p
        .cmd(&["events", "--file", events.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        crate::support::stdout(&o).contains("Bash not run `make build`"),
        "{}",
        crate::support::stdout(&o)
    );
}
