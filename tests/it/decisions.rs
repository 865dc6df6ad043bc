//! Hooks that steer: replies, capabilities by point, aggregation, matchers, the stop loop guard.

use crate::support::{json_lines, stderr, stdout, Project};
use serde_json::{json, Value};

/// A project whose hooks are shell scripts `./NAME.sh`, all allowed by one entry.
fn project(hooks: &str) -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./[a-z0-9_-]+\\.sh$']}}}}\n",
    );
    p.write("hooks.yaml", &format!("enabled: true\n{hooks}"));
    p
}

fn script(p: &Project, name: &str, body: &str) {
    let path = p.path().join(format!("{name}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Dispatch and return (Outcome, events).
fn dispatch(p: &Project, point: &str, ctx: Value, extra: &[&str]) -> (Value, Vec<Value>) {
    let mut args = vec!["dispatch", point, "--events", "-"];
    args.extend_from_slice(extra);
    let out = p.run_with_stdin(&args, &ctx.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (
        serde_json::from_str(&stdout(&out)).unwrap(),
        json_lines(&stderr(&out)),
    )
}

#[test]
fn a_pre_tool_deny_becomes_a_synthetic_error_result() {
    let p = project("hooks:\n  - {name: guard, hook: pre_tool, command: ./guard.sh}\n");
    script(
        &p,
        "guard",
        r#"echo '{"decision": "deny", "reason": "no network in CI"}'"#,
    );
    let (o, ev) = dispatch(
        &p,
        "pre_tool",
        json!({"tool": {"name": "Bash", "input": {"command": "curl x"}}}),
        &[],
    );
    assert_eq!(
        o["decision"],
        json!({"deny": true, "reason": "no network in CI", "synthetic_result": "hookd denied this tool call: no network in CI",
               "original_input": {"command": "curl x"}, "halt": false})
    );
    assert_eq!(ev[0]["decision"], "deny");
}

#[test]
fn exit_code_2_denies_with_stderr_as_the_reason() {
    let p = project("hooks:\n  - {name: guard, hook: pre_tool, command: ./guard.sh}\n");
    script(&p, "guard", "echo 'rm is not allowed here' >&2; exit 2");
    let (o, ev) = dispatch(&p, "pre_tool", json!({"tool": {"name": "Bash"}}), &[]);
    assert_eq!(o["decision"]["deny"], true);
    assert_eq!(o["decision"]["reason"], "rm is not allowed here");
    assert_eq!(o["commands"][0]["status"], "denied");
    assert_eq!(ev[0]["error"], "");
}

#[test]
fn input_and_prompt_rewrites_keep_the_original() {
    let p = project("hooks:\n  - {name: a, hook: pre_tool, command: ./a.sh}\n  - {name: b, hook: pre_tool, command: ./b.sh}\n  - {name: c, hook: pre_session, command: ./c.sh}\n");
    script(&p, "a", r#"echo '{"updated_input": {"command": "ls -a"}}'"#);
    script(
        &p,
        "b",
        r#"echo '{"updated_input": {"command": "ls -la"}, "context": "rewrote ls"}'"#,
    );
    script(
        &p,
        "c",
        r#"echo '{"updated_prompt": "fix the login flow (see TODO.md)"}'"#,
    );
    let (o, _) = dispatch(
        &p,
        "pre_tool",
        json!({"tool": {"name": "Bash", "input": {"command": "ls"}}}),
        &[],
    );
    assert_eq!(o["decision"]["original_input"], json!({"command": "ls"}));
    assert_eq!(
        o["decision"]["updated_input"],
        json!({"command": "ls -la"}),
        "the last writer wins"
    );
    assert_eq!(o["decision"]["context"], "rewrote ls");
    let (o, _) = dispatch(
        &p,
        "pre_session",
        json!({"prompt": "fix the login flow"}),
        &[],
    );
    assert_eq!(o["decision"]["original_prompt"], "fix the login flow");
    assert_eq!(
        o["decision"]["updated_prompt"],
        "fix the login flow (see TODO.md)"
    );
}

#[test]
fn fields_a_point_cannot_take_are_dropped_and_named_in_the_event() {
    let p = project("hooks:\n  - {name: x, hook: post_tool, command: ./x.sh}\n  - {name: o, hook: post_stream, command: ./o.sh}\n");
    script(
        &p,
        "x",
        r#"echo '{"decision": "deny", "updated_input": {"a": 1}, "context": "kept", "continue": true}'"#,
    );
    script(&p, "o", r#"echo '{"context": "no", "halt": true}'"#);
    let (o, ev) = dispatch(&p, "post_tool", json!({}), &[]);
    assert_eq!(o["decision"], json!({"context": "kept", "halt": false}));
    assert_eq!(
        ev[0]["ignored"],
        json!(["continue", "decision", "updated_input"])
    );
    let (o, ev) = dispatch(&p, "post_stream", json!({}), &[]);
    assert_eq!(o["decision"], json!({}));
    assert_eq!(ev[0]["ignored"], json!(["context", "halt"]));
}

#[test]
fn halt_is_sticky_and_later_hooks_do_not_run() {
    let p = project("hooks:\n  - {name: a, hook: pre_stream, command: ./a.sh}\n  - {name: stop, hook: pre_stream, command: ./stop.sh}\n  - {name: late, hook: pre_stream, command: ./late.sh}\n");
    script(&p, "a", r#"echo '{"context": "first"}'"#);
    script(
        &p,
        "stop",
        r#"echo '{"halt": true, "reason": "budget exhausted"}'"#,
    );
    script(&p, "late", "touch late-ran; echo '{\"context\": \"late\"}'");
    let (o, ev) = dispatch(&p, "pre_stream", json!({}), &[]);
    assert_eq!(
        o["decision"],
        json!({"context": "first", "halt": true, "halt_reason": "budget exhausted"})
    );
    assert_eq!(ev.len(), 2);
    assert!(!p.path().join("late-ran").exists());
}

#[test]
fn the_stop_loop_guard() {
    let p = project(
        "max_continues: 2\nhooks:\n  - {name: tests, hook: post_session, command: ./tests.sh}\n",
    );
    script(
        &p,
        "tests",
        r#"active=$(grep -o '"stop_hook_active":[a-z]*' | cut -d: -f2); echo "{\"continue\": true, \"reason\": \"tests fail (active=$active)\"}""#,
    );
    let events = || dispatch(&p, "post_session", json!({}), &["--session-id", "loop"]);
    let run = || events().0;
    let o = run();
    assert_eq!(
        o["decision"],
        json!({"continue": true, "reason": "tests fail (active=false)", "stop_hook_active": false})
    );
    let o = run();
    assert_eq!(
        o["decision"],
        json!({"continue": true, "reason": "tests fail (active=true)", "stop_hook_active": true})
    );
    let (o, ev) = events();
    assert_eq!(o["decision"]["continue"], false);
    let why = "hookd stopped honouring `continue` after 2 consecutive continues (max_continues in hooks.yaml)";
    assert_eq!(o["decision"]["continue_refused"], why);
    // The hook's event says what it asked; the next one says what hookd did with it.
    let kinds: Vec<_> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["hook_command", "continue_refused"]);
    assert_eq!(ev[0]["continue"], true);
    assert_eq!(ev[1]["hook"], "post_session");
    assert_eq!(ev[1]["hooks"], json!(["tests"]));
    assert_eq!(ev[1]["continues"], 2);
    assert_eq!(ev[1]["max_continues"], 2);
    assert_eq!(ev[1]["reason"], why);
    assert_eq!(ev[1]["session_id"], "loop");
    let o = run();
    assert_eq!(
        o["decision"]["continue"], true,
        "after a refusal the guard starts over"
    );
}

#[test]
fn on_error_deny_fails_closed() {
    let p = project("hooks:\n  - {name: scanner, hook: pre_tool, command: ./scanner.sh, on_error: deny}\n  - {name: missing, hook: pre_tool, command: 'curl x', on_error: deny}\n");
    script(&p, "scanner", "exit 3");
    let (o, _) = dispatch(&p, "pre_tool", json!({}), &[]);
    assert_eq!(o["decision"]["deny"], true);
    assert_eq!(
        o["decision"]["reason"],
        "hook `scanner` failed and is set to fail closed: exit status 3"
    );
    std::fs::remove_file(p.path().join("scanner.sh")).unwrap();
    script(&p, "scanner", "echo '{not json'");
    let (o, ev) = dispatch(&p, "pre_tool", json!({}), &[]);
    assert!(
        o["decision"]["reason"]
            .as_str()
            .unwrap()
            .contains("the reply is not a valid JSON object"),
        "{o}"
    );
    assert_eq!(ev[0]["exit_code"], 0);
    assert_eq!(o["commands"][0]["status"], "failed");
    // A security hook the gate refuses also fails closed.
    let p =
        project("hooks:\n  - {name: missing, hook: pre_tool, command: 'curl x', on_error: deny}\n");
    let (o, _) = dispatch(&p, "pre_tool", json!({}), &[]);
    assert!(
        o["decision"]["reason"].as_str().unwrap().starts_with(
            "hook `missing` failed and is set to fail closed: it was not run (not_allowlisted"
        ),
        "{o}"
    );
}

#[test]
fn a_failing_or_unreadable_hook_decides_nothing_by_default() {
    let p = project("hooks:\n  - {name: a, hook: pre_tool, command: ./a.sh}\n  - {name: b, hook: pre_tool, command: ./b.sh}\n");
    script(&p, "a", "echo '{\"decision\": \"deny\"'");
    script(&p, "b", "exit 1");
    let (o, ev) = dispatch(&p, "pre_tool", json!({}), &[]);
    assert_eq!(o["decision"]["deny"], false);
    assert!(ev[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("the reply is not a valid JSON object"));
    assert_eq!(ev[1]["error"], "exit status 1");
}

#[test]
fn matchers_select_tools_results_and_sub_agents() {
    let p = project(
        "hooks:\n  - {name: bash, hook: pre_tool, command: ./m.sh, matcher: Bash}\n  - {name: edits, hook: pre_tool, command: ./m.sh, matcher: 'Edit|Write'}\n  - {name: fails, hook: post_tool, command: ./m.sh, on: failure}\n  - {name: subs, hook: pre_tool, command: ./m.sh, include_sub_agents: true}\n",
    );
    script(&p, "m", "true");
    let ran = |point: &str, ctx: Value| -> Vec<String> {
        dispatch(&p, point, ctx, &[])
            .1
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ran("pre_tool", json!({"tool": {"name": "Bash"}})),
        ["bash", "subs"]
    );
    assert_eq!(
        ran("pre_tool", json!({"tool": {"name": "NotebookEdit"}})),
        ["subs"],
        "matchers match the whole name"
    );
    assert_eq!(
        ran("pre_tool", json!({"tool": {"name": "Write"}})),
        ["edits", "subs"]
    );
    assert_eq!(
        ran(
            "pre_tool",
            json!({"tool": {"name": "Bash"}, "is_sub_agent": true})
        ),
        ["subs"]
    );
    assert_eq!(
        ran(
            "post_tool",
            json!({"tool": {"name": "Bash", "failed": false}})
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        ran(
            "post_tool",
            json!({"tool": {"name": "Bash", "failed": true}})
        ),
        ["fails"]
    );
}

#[test]
fn matcher_errors_are_located() {
    let p = project("hooks:\n  - {name: a, hook: post_session, command: x, matcher: Bash}\n  - {name: b, hook: pre_tool, command: x, matcher: 'Ba(sh'}\n  - {name: c, hook: pre_tool, command: x, on: failure}\n  - {name: d, hook: post_stream, command: x, on_error: deny}\n");
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error: `matcher` selects tools, so it only works at `pre_tool` and `post_tool`\n  --> .infer/hooks.yaml:3:56"), "{err}");
    assert!(err.contains("error: matcher `Ba(sh` is not a valid regular expression\n  --> .infer/hooks.yaml:4:52"), "{err}");
    assert!(
        err.contains("error: `on` filters finished tool calls, so it only works at `post_tool`"),
        "{err}"
    );
    assert!(
        err.contains("error: `on_error: deny` has no effect at `post_stream`"),
        "{err}"
    );
}

#[test]
fn parallel_hooks_finish_in_any_order_and_decide_as_in_config_order() {
    let p = project("parallel: true\nhooks:\n  - {name: slow, hook: post_tool, command: ./slow.sh}\n  - {name: mid, hook: post_tool, command: ./mid.sh}\n  - {name: fast, hook: post_tool, command: ./fast.sh}\n");
    script(&p, "slow", r#"sleep 0.6; echo '{"context": "one"}'"#);
    script(&p, "mid", r#"sleep 0.3; echo '{"context": "two"}'"#);
    script(&p, "fast", r#"echo '{"context": "three"}'"#);
    let start = std::time::Instant::now();
    let (o, ev) = dispatch(&p, "post_tool", json!({}), &[]);
    assert!(
        start.elapsed() < std::time::Duration::from_millis(1100),
        "they ran concurrently: {:?}",
        start.elapsed()
    );
    assert_eq!(o["decision"]["context"], "one\ntwo\nthree");
    let names: Vec<_> = ev.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["slow", "mid", "fast"], "events in config order");
    // A deny in parallel short-circuits exactly as in order: the later hook does not count.
    let p = project("parallel: true\nhooks:\n  - {name: slow-deny, hook: pre_tool, command: ./d.sh}\n  - {name: fast-rewrite, hook: pre_tool, command: ./r.sh}\n");
    script(&p, "d", r#"sleep 0.3; echo '{"decision": "deny"}'"#);
    script(
        &p,
        "r",
        r#"echo '{"updated_input": {"x": 1}, "context": "late"}'"#,
    );
    let (o, _) = dispatch(&p, "pre_tool", json!({}), &[]);
    assert_eq!(o["decision"]["deny"], true);
    assert!(
        o["decision"].get("updated_input").is_none() && o["decision"].get("context").is_none(),
        "{o}"
    );
}

#[test]
fn context_files_stay_inside_the_project() {
    let p = project("hooks:\n  - {name: f, hook: post_tool, command: ./f.sh}\n");
    std::fs::create_dir_all(p.path().join("docs")).unwrap();
    std::fs::write(p.path().join("docs/ARCH.md"), "x").unwrap();
    std::fs::write(p.path().join("README.md"), "x").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), p.path().join("link")).unwrap();
    script(
        &p,
        "f",
        &format!(
            r#"echo '{{"context_files": ["README.md", "docs/ARCH.md", "./README.md", "../etc/passwd", "/etc/passwd", "link", "missing.md", "{}", "docs/../README.md"]}}'"#,
            outside.path().join("secret").display()
        ),
    );
    let (o, _) = dispatch(&p, "post_tool", json!({}), &[]);
    assert_eq!(
        o["decision"]["context_files"],
        json!(["README.md", "docs/ARCH.md"])
    );
}

#[test]
fn golden_outcome_for_each_point() {
    let p = project(
        "hooks:\n  - {name: s, hook: pre_session, command: ./s.sh}\n  - {name: t, hook: pre_tool, command: ./t.sh}\n  - {name: c, hook: pre_stream, command: ./c.sh}\n  - {name: c2, hook: post_tool, command: ./c.sh}\n  - {name: o, hook: post_stream, command: ./c.sh}\n  - {name: q1, hook: pre_queue_drain, command: ./c.sh}\n  - {name: q2, hook: post_queue_drain, command: ./c.sh}\n  - {name: e, hook: post_session, command: ./e.sh}\n",
    );
    script(
        &p,
        "s",
        r#"echo '{"updated_prompt": "better", "context": "branch: main"}'"#,
    );
    script(
        &p,
        "t",
        r#"echo '{"decision": "deny", "reason": "read-only task"}'"#,
    );
    script(&p, "c", r#"echo '{"context": ["a", "b"]}'"#);
    script(
        &p,
        "e",
        r#"echo '{"continue": true, "reason": "2 tests fail"}'"#,
    );
    let ctx = json!({"session_id": "g", "turn": 2, "prompt": "fix it", "tool": {"name": "Bash", "input": {"command": "rm x"}}});
    for point in [
        "pre_session",
        "pre_stream",
        "post_stream",
        "pre_tool",
        "post_tool",
        "pre_queue_drain",
        "post_queue_drain",
        "post_session",
    ] {
        let (mut o, _) = dispatch(&p, point, ctx.clone(), &[]);
        for c in o["commands"].as_array_mut().unwrap() {
            c["duration_ms"] = json!("<duration_ms>");
        }
        crate::golden::golden(&format!("decision_{point}"), o);
    }
}

/// Issue 42 item 5: an Outcome never echoes a large input back (a 12 MiB `Write` doubled what
/// each of 24 concurrent dispatches held and sent back): `original_input` is left out over about
/// 64 KiB, kept under it.
#[test]
fn a_large_tool_input_is_not_echoed_back() {
    let p = project("hooks:\n  - {name: a, hook: pre_tool, command: ./a.sh}\n");
    script(&p, "a", "cat >/dev/null");
    let echoed = |content: &str| {
        let input = json!({"file_path": "a.txt", "content": content});
        let (o, _) = dispatch(
            &p,
            "pre_tool",
            json!({"tool": {"name": "Write", "input": input}}),
            &[],
        );
        o["decision"].get("original_input").cloned()
    };
    assert_eq!(echoed(&"x".repeat(1 << 20)), None);
    let small = "x".repeat(60 * 1024);
    assert!(echoed(&small).is_some_and(|i| i["content"] == json!(small)));
}
