//! `hookd dispatch` end to end: what runs, what is skipped, what is emitted.

use crate::support::{json_lines, regex_escape, stderr, stdout, with_stdin, Project};

pub(crate) fn setup(p: &Project, enabled: bool, marker: &std::path::Path) {
    p.write(
        "config.yaml",
        &format!(
            "tools:\n  bash:\n    mode:\n      all:\n        allow:\n          - '^touch {}$'\n",
            regex_escape(&marker.display().to_string())
        ),
    );
    p.write(
        "hooks.yaml",
        &format!(
            "enabled: {enabled}\nhooks:\n  - name: mark\n    hook: post_session\n    command: 'touch {}'\n  - name: evil\n    hook: post_session\n    command: 'rm -rf {}'\n",
            marker.display(),
            p.path().display()
        ),
    );
}

#[test]
fn allowed_command_runs_once_and_off_list_command_is_skipped() {
    let p = Project::new();
    let marker = p.path().join("marker");
    setup(&p, true, &marker);
    let events = p.path().join("events.jsonl");
    let out = p.run_with_stdin(
        &[
            "dispatch",
            "post_session",
            "--session-id",
            "s1",
            "--turn",
            "7",
            "--events",
            events.to_str().unwrap(),
        ],
        r#"{"cwd": "/somewhere", "extra": {"k": 1}}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(marker.exists(), "the allowed command ran");
    assert!(p.path().exists(), "the off-list command did not run");

    let outcome: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["commands"][0]["status"], "ok");
    assert_eq!(outcome["commands"][1]["status"], "skipped");
    assert_eq!(outcome["commands"][1]["reason"], "not_allowlisted");

    let ev = json_lines(&std::fs::read_to_string(&events).unwrap());
    assert_eq!(ev.len(), 2);
    let run = &ev[0];
    assert_eq!(run["type"], "hook_command");
    for field in [
        "timestamp",
        "name",
        "hook",
        "command",
        "turn",
        "exit_code",
        "duration_ms",
        "output",
        "error",
        "session_id",
        "seq",
        "mode",
        "stdout",
        "stderr",
        "truncated",
        "timed_out",
        "signal",
    ] {
        assert!(
            run.get(field).is_some(),
            "hook_command lacks {field}: {run}"
        );
    }
    assert_eq!(run["name"], "mark");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["turn"], 7);
    assert_eq!(run["session_id"], "s1");
    let ts = run["timestamp"].as_str().unwrap();
    assert!(ts.ends_with('Z') && ts.len() == 24, "{ts}");
    let skip = &ev[1];
    assert_eq!(skip["type"], "hook_command_skipped");
    assert_eq!(skip["reason"], "not_allowlisted");
    assert!(
        skip["hint"]
            .as_str()
            .unwrap()
            .contains(".infer/config.yaml"),
        "{skip}"
    );
    for field in [
        "timestamp",
        "name",
        "hook",
        "command",
        "mode",
        "reason",
        "hint",
    ] {
        assert!(
            skip.get(field).is_some(),
            "hook_command_skipped lacks {field}"
        );
    }
}

#[test]
fn disabled_hooks_run_nothing_and_emit_no_command_event() {
    let p = Project::new();
    let marker = p.path().join("marker");
    setup(&p, false, &marker);
    let out = p.run(&["dispatch", "post_session", "--events", "-"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!marker.exists());
    // No event, and one line that says why nothing ran.
    assert_eq!(
        stderr(&out),
        "hookd: hooks are off in .infer/hooks.yaml: its 2 hooks did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run them\n"
    );
    let outcome: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["commands"], serde_json::json!([]));
}

#[test]
fn hooks_receive_the_context_on_stdin_and_in_the_environment() {
    let p = Project::new();
    let script = p.path().join("capture.sh");
    std::fs::write(&script, "#!/bin/sh\ncat > \"$HOOKD_PROJECT_DIR/stdin.json\"\nenv > \"$HOOKD_PROJECT_DIR/env.txt\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./capture\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: cap, hook: pre_tool, command: ./capture.sh}]\n",
    );
    let out = p
        .cmd(&["dispatch", "pre_tool", "--session-id", "abc"])
        .env("BASH_ENV", "/tmp/evil")
        .env("BASH_FUNC_ls%%", "() { echo pwned; }")
        .env("LD_LIBRARY_PATH", "/tmp/evil-libs")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(
                br#"{"tool": {"name": "Bash", "input": {"command": "ls"}}, "turn": 4}"#,
            )?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ctx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("stdin.json")).unwrap())
            .unwrap();
    assert_eq!(ctx["hook"], "pre_tool");
    assert_eq!(ctx["turn"], 4);
    assert_eq!(ctx["session_id"], "abc");
    assert_eq!(ctx["tool"]["name"], "Bash");
    let env = std::fs::read_to_string(p.path().join("env.txt")).unwrap();
    assert!(
        env.contains("HOOKD_HOOK=pre_tool\n")
            && env.contains("HOOKD_SESSION_ID=abc\n")
            && env.contains("HOOKD_TURN=4\n"),
        "{env}"
    );
    assert!(
        !env.contains("BASH_ENV") && !env.contains("BASH_FUNC") && !env.contains("LD_LIBRARY_PATH"),
        "{env}"
    );
}

#[test]
fn injected_payload_does_not_run() {
    let p = Project::new();
    let marker = p.path().join("pwned");
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['echo( .*)?']}}}}\n",
    );
    let payloads = [
        format!("echo hi; touch {}", marker.display()),
        format!("echo $(touch {})", marker.display()),
        format!("echo `touch {}`", marker.display()),
        format!("echo hi && touch {}", marker.display()),
        format!("echo hi | touch {}", marker.display()),
        format!("echo hi\ntouch {}", marker.display()),
        format!("echo hi > {}", marker.display()),
    ];
    let hooks: String = payloads
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "  - name: h{i}\n    hook: post_session\n    command: {}\n",
                serde_json::to_string(c).unwrap()
            )
        })
        .collect();
    p.write("hooks.yaml", &format!("enabled: true\nhooks:\n{hooks}"));
    let out = p.run(&["dispatch", "post_session", "--events", "-"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!marker.exists());
    let ev = json_lines(&stderr(&out));
    assert_eq!(ev.len(), payloads.len());
    assert!(
        ev.iter().all(|e| e["type"] == "hook_command_skipped"),
        "{ev:?}"
    );
}

#[test]
fn interval_reminder_fires_on_the_right_turns_across_processes() {
    let p = Project::new();
    p.write("reminders.yaml", "enabled: true\nreminders:\n  - {name: every3, hook: pre_stream, trigger: interval, interval: 3, text: 'turn check'}\n  - {name: first, hook: pre_stream, trigger: once, text: hello}\n");
    let mut fired = Vec::new();
    let mut once = Vec::new();
    for turn in 1..=10 {
        let out = p.run(&["dispatch", "pre_stream", "--session-id", "sess-A"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["session_turn"], turn);
        let names: Vec<String> = v["reminders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        if names.contains(&"every3".to_string()) {
            fired.push(turn);
        }
        if names.contains(&"first".to_string()) {
            once.push(turn);
        }
    }
    assert_eq!(fired, [3, 6, 9]);
    assert_eq!(once, [1]);
    // Another session starts afresh.
    let out = p.run(&["dispatch", "pre_stream", "--session-id", "sess-B"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["reminders"][0]["name"], "first");
    // An explicit turn wins over the count.
    let out = p.run(&[
        "dispatch",
        "pre_stream",
        "--session-id",
        "sess-C",
        "--turn",
        "6",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(v["reminders"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "every3"));
}

#[test]
fn concurrent_dispatches_of_one_session_count_every_turn() {
    let p = Project::new();
    p.write("reminders.yaml", "enabled: true\nreminders: [{name: x, hook: post_tool, trigger: interval, interval: 1000, text: t}]\n");
    let children: Vec<_> = (0..12)
        .map(|_| {
            p.cmd(&["dispatch", "pre_stream", "--session-id", "par"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        assert!(c.wait_with_output().unwrap().status.success());
    }
    let out = p.run(&["dispatch", "pre_stream", "--session-id", "par"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["session_turn"], 13);
}

#[test]
fn reminders_fill_placeholders_and_emit_events() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - {name: fail, trigger: on_failure, text: '{tool_name} failed'}\n  - {name: rep, trigger: on_repeated_failure, threshold: 2, text: '{tool_name} x{count}'}\n  - {name: mode, trigger: on_mode_change, text: 'from {prev_mode} to {new_mode}: {guidance}', guidance: {plan: 'read only'}}\n  - {name: cut, trigger: on_truncation, text: 'continue'}\n",
    );
    let ctx = r#"{"tool": {"name": "Bash", "input": {"command": "ls /x"}, "failed": true}}"#;
    let run = |point: &str, stdin: &str, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["dispatch", point, "--session-id", "ph", "--events", "-"];
        args.extend_from_slice(extra);
        let out = p.run_with_stdin(&args, stdin);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let v = run("post_tool", ctx, &[]);
    assert_eq!(
        v["reminders"],
        serde_json::json!([{"name": "fail", "text": "Bash failed", "role": "user"}])
    );
    let v = run("post_tool", ctx, &[]);
    assert_eq!(
        v["reminders"][1],
        serde_json::json!({"name": "rep", "text": "Bash x2", "role": "tool"})
    );
    run("pre_stream", "{}", &["--mode", "standard"]);
    let v = run("pre_stream", "{}", &["--mode", "plan"]);
    assert_eq!(
        v["reminders"][0]["text"],
        "from standard to plan: read only"
    );
    let v = run("post_stream", r#"{"finish_reason": "length"}"#, &[]);
    assert_eq!(v["reminders"][0]["name"], "cut");
    let v = run("post_stream", r#"{"finish_reason": "stop"}"#, &[]);
    assert_eq!(v["reminders"], serde_json::json!([]));
}

#[test]
fn bad_context_and_unknown_point_exit_2() {
    let p = Project::new();
    let out = p.run_with_stdin(&["dispatch", "pre_tool"], "[1, 2]");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: invalid dispatch context: expected a JSON object, found a list\n"
    );
    let out = p.run_with_stdin(&["dispatch", "pre_tool"], r#"{"turn": "three"}"#);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: invalid dispatch context: `turn` must be a whole number ≥ 0, found a string\n"
    );
    // One rule for every field hookd reads (a bad `todo_count` used to count as 0).
    for (ctx, message) in [
        (
            r#"{"todo_count": "none"}"#,
            "`todo_count` must be a whole number ≥ 0, found a string",
        ),
        (
            r#"{"tool": {"name": 7}}"#,
            "`tool.name` must be a string, found a number",
        ),
        (
            r#"{"is_sub_agent": "yes"}"#,
            "`is_sub_agent` must be true or false, found a string",
        ),
    ] {
        let out = p.run_with_stdin(&["dispatch", "pre_tool"], ctx);
        assert_eq!(out.status.code(), Some(2), "{ctx}");
        assert_eq!(
            stderr(&out),
            format!("error: invalid dispatch context: {message}\n")
        );
    }
    let out = p.run(&["dispatch", "post_sesion"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown hook point `post_sesion` (did you mean `post_session`?)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn commands_report_the_sessions_counted_turn_when_the_agent_sends_none() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: t, hook: post_session, command: 'true'}]\n",
    );
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders: [{name: r, trigger: interval, interval: 5, text: x}]\n",
    );
    for _ in 0..3 {
        assert!(p
            .run(&["dispatch", "pre_stream", "--session-id", "turns"])
            .status
            .success());
    }
    let out = p.run(&[
        "dispatch",
        "post_session",
        "--session-id",
        "turns",
        "--events",
        "-",
    ]);
    let ev = json_lines(&stderr(&out));
    assert_eq!(ev[0]["type"], "hook_command");
    assert_eq!(ev[0]["turn"], 3, "{}", ev[0]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (v["turn"].as_u64(), v["session_turn"].as_u64()),
        (Some(3), Some(3))
    );
}

/// Issue 32, item 6 and issue 26's bug: placeholders are filled in one pass over the template,
/// so what the agent supplied is never filled again: a tool named `X{new_mode}Y{count}Z` is
/// shown as written, and a tool name that repeats `{todo_list}` next to a large todo list no
/// longer multiplies the reply (a 122 KB payload made a 200 MB reply). A filled reminder is cut
/// at 64 KiB whatever the template says.
#[test]
fn placeholders_are_filled_once_and_a_reminder_is_bounded() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - {name: fail, trigger: on_failure, text: '{tool_name} failed {todo_list}'}\n",
    );
    let run = |ctx: &serde_json::Value| -> serde_json::Value {
        let out = p.run_with_stdin(
            &["dispatch", "post_tool", "--session-id", "amp"],
            &ctx.to_string(),
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(out.stdout.len() < 200 * 1024, "{} bytes", out.stdout.len());
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let v = run(&serde_json::json!({"tool": {"name": "X{new_mode}Y{count}Z", "failed": true}}));
    assert_eq!(v["reminders"][0]["text"], "X{new_mode}Y{count}Z failed ");
    let v = run(&serde_json::json!({
        "tool": {"name": "Bash", "failed": true}, "incomplete_todos": ["a {count}", "b"],
    }));
    assert_eq!(v["reminders"][0]["text"], "Bash failed - a {count}\n- b\n");
    let todos: Vec<String> = (0..2000).map(|i| format!("todo number {i}")).collect();
    let v = run(&serde_json::json!({
        "tool": {"name": "{todo_list}".repeat(10_000), "failed": true},
        "incomplete_todos": todos,
    }));
    let text = v["reminders"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("{todo_list}{todo_list}"),
        "{}",
        &text[..40]
    );
    assert!(text.len() <= 64 * 1024 + 4, "{}", text.len());
}

#[test]
fn one_shot_processes_number_a_shared_events_file_in_one_sequence() {
    // An agent starts one hookd per event; they append to the same file, some at once.
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: a, hook: post_session, command: 'true'}\n  - {name: b, hook: post_session, command: 'true'}\n",
    );
    let events = p.path().join("events.jsonl");
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut c = p.cmd(&[
                "dispatch",
                "post_session",
                "--session-id",
                &format!("s{i}"),
                "--events",
                events.to_str().unwrap(),
            ]);
            c.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let adapter = with_stdin(
        p.cmd(&[
            "adapter",
            "claude-code",
            "--no-daemon",
            "--events",
            events.to_str().unwrap(),
        ]),
        r#"{"hook_event_name":"Stop","session_id":"claude"}"#,
    );
    assert!(adapter.status.success(), "{}", stderr(&adapter));
    let lines = json_lines(&std::fs::read_to_string(&events).unwrap());
    let seqs: Vec<u64> = lines.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=18).collect::<Vec<u64>>());
    // Each process's own events are in its order: a before b.
    for s in (0..8).map(|i| format!("s{i}")).chain(["claude".into()]) {
        let names: Vec<_> = lines
            .iter()
            .filter(|e| e["session_id"] == s.as_str())
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"], "{s}");
    }
}
