//! What an operator and a CI job read of the audit file: `hookd events` shows every event's
//! point, a hook's error and session ids that `--session` takes; `hookd events --summary` tells
//! how each session ended, and fails when one ended badly. Whole lines are asserted.

use crate::support::{json_lines, stderr, stdout, with_stdin, Project};

const SESSION: &str = "027567bf-78d4-43b7-8b98-7b6d86ce3708";

/// A user who gates the shell tools and runs a formatter that is not installed at session end.
fn project() -> Project {
    let p = Project::new();
    p.write_home(
        "hooks.yaml",
        "enabled: true\ngate_shell_tools: true\nhooks:\n  - {name: fmt, hook: post_session, command: 'gofmtx -l .'}\n",
    );
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$', '^gofmtx -l \\.$']}}}}\n",
    );
    p
}

/// Claude Code's hook call of `event` in `session`, its events appended to `log`.
fn claude(p: &Project, log: &std::path::Path, session: &str, event: serde_json::Value) {
    let mut payload = serde_json::json!({"session_id": session, "cwd": p.path()});
    for (k, v) in event.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
    cmd.env("HOOKD_EVENTS", log);
    let o = with_stdin(cmd, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A session: a call let through, one refused, a Write over hookd's own file refused, and a
/// session end whose formatter is missing.
fn a_session(p: &Project, log: &std::path::Path) {
    let bash = |c: &str| serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": c}});
    claude(p, log, SESSION, bash("true"));
    claude(p, log, SESSION, bash("curl x"));
    let hooks = p.home.path().join(".infer/hooks.yaml");
    let write = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": hooks, "content": "x"}});
    claude(p, log, SESSION, write);
    claude(
        p,
        log,
        SESSION,
        serde_json::json!({"hook_event_name": "Stop"}),
    );
}

/// `text`'s lines with the time column (`HH:MM:SS.mmm`) masked.
fn untimed(text: &str) -> String {
    text.lines()
        .map(|l| format!("{}HH:MM:SS.mmm{}\n", &l[..8], &l[20..]))
        .collect()
}

#[test]
fn hookd_events_shows_the_point_the_hooks_error_and_sessions_it_can_select() {
    let p = project();
    let log = p.path().join("events.jsonl");
    a_session(&p, &log);
    let events = json_lines(&std::fs::read_to_string(&log).unwrap());
    let ms = &events[4]["duration_ms"];
    let hooks = p.home.path().join(".infer/hooks.yaml");
    let hooks = hooks.display();
    let expected = format!(
        "#1      HH:MM:SS.mmm  027567bf-78d… pre_tool         tool_call_allowed    Bash allowed `true`\n\
         #2      HH:MM:SS.mmm  027567bf-78d… pre_tool         tool_command_denied  Bash denied: not_allowlisted `curl x`\n\
         #3      HH:MM:SS.mmm  027567bf-78d… pre_tool         tool_command_denied  Write denied: protected_path `{hooks}`\n\
         #4      HH:MM:SS.mmm  027567bf-78d… post_session     tool_result          Bash not run `true`\n\
         #5      HH:MM:SS.mmm  027567bf-78d… post_session     hook_command         fmt (exit -1, {ms}ms) `gofmtx -l .`: `gofmtx` was not found on PATH; is it installed?\n"
    );
    let file = log.to_str().unwrap();
    let all = p.run(&["events", "--file", file]);
    assert_eq!(untimed(&stdout(&all)), expected, "{}", stderr(&all));
    // The session as shown selects it; another session's events are left out.
    claude(
        &p,
        &log,
        "027567bf-other",
        serde_json::json!({"hook_event_name": "Stop"}),
    );
    for shown in ["027567bf-78d…", SESSION] {
        let one = p.run(&["events", "--file", file, "--session", shown]);
        assert_eq!(
            untimed(&stdout(&one)),
            expected,
            "{shown}: {}",
            stderr(&one)
        );
    }
    // The Write names a path, and the event says so in a field of its own.
    assert_eq!(events[2]["path"], events[2]["command"]);
    assert!(events[1].get("path").is_none(), "{}", events[1]);
    // The hook's start and duration, measured to the nanosecond.
    let started = events[4]["started_at"].as_str().unwrap();
    assert!(humantime::parse_rfc3339(started).is_ok(), "{started}");
    assert_eq!(started.len(), "2026-11-26T15:00:40.123456789Z".len());
    assert_eq!(
        events[4]["duration_ns"].as_u64().unwrap() / 1_000_000,
        events[4]["duration_ms"].as_u64().unwrap()
    );
}

#[test]
fn a_ci_job_tells_how_each_session_ended_from_the_audit_file_alone() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let file = log.to_str().unwrap();
    a_session(&p, &log);
    let o = p.run(&["events", "--file", file, "--summary"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("{SESSION}: 1 call allowed (1 not run by the agent), 2 refused, 1 hook failed, 0 skipped, 0 continues refused, 0 configuration errors; ended badly: post_session hook `fmt` failed: `gofmtx` was not found on PATH; is it installed?\n")
    );
    // Installed, the session's next end passes: the last run of each hook is what counts.
    std::fs::create_dir_all(p.path().join("bin")).unwrap();
    std::fs::write(p.path().join("bin/gofmtx"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        p.path().join("bin/gofmtx"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    p.write_home(
        "hooks.yaml",
        "enabled: true\ngate_shell_tools: true\nhooks:\n  - {name: fmt, hook: post_session, command: 'bin/gofmtx -l .'}\n",
    );
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$', '^bin/gofmtx -l \\.$']}}}}\n",
    );
    claude(
        &p,
        &log,
        SESSION,
        serde_json::json!({"hook_event_name": "Stop"}),
    );
    let o = p.run(&["events", "--file", file, "--summary"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("{SESSION}: 1 call allowed (1 not run by the agent), 2 refused, 1 hook failed, 0 skipped, 0 continues refused, 0 configuration errors\n")
    );
    // A configuration error that stops a session at its first prompt is an event of that
    // session, and the session ended badly.
    p.write("hooks.yaml", "hooks: [\n");
    let prompt = serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    claude(&p, &log, "s2", prompt);
    let events = json_lines(&std::fs::read_to_string(&log).unwrap());
    let last = events.last().unwrap();
    assert_eq!(
        (&last["type"], &last["cause"], &last["session_id"]),
        (
            &serde_json::json!("config_error"),
            &serde_json::json!("dispatch"),
            &serde_json::json!("s2")
        )
    );
    let o = p.run(&["events", "--file", file, "--summary"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("{SESSION}: 1 call allowed (1 not run by the agent), 2 refused, 1 hook failed, 0 skipped, 0 continues refused, 0 configuration errors\n\
                 s2: 0 calls allowed (0 not run by the agent), 0 refused, 0 hooks failed, 0 skipped, 0 continues refused, 1 configuration error; ended badly: the configuration did not load\n")
    );
    let shown = p.run(&["events", "--file", file, "--session", "s2"]);
    assert_eq!(
        untimed(&stdout(&shown)),
        "#7      HH:MM:SS.mmm  s2            pre_session      config_error         (dispatch) .infer/hooks.yaml:2: invalid YAML: while parsing a node, did not find expected node content (no hook ran; failing open)\n"
    );
    // Failing closed, the prompt is blocked and the event says so.
    let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon", "--fail-closed"]);
    cmd.env("HOOKD_EVENTS", &log);
    let payload = serde_json::json!({"session_id": "s3", "cwd": p.path(), "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let o = with_stdin(cmd, &payload.to_string());
    assert!(
        stdout(&o).contains(r#""decision":"block""#),
        "{}",
        stdout(&o)
    );
    let events = json_lines(&std::fs::read_to_string(&log).unwrap());
    assert_eq!(events.last().unwrap()["fail_closed"], true);
    assert_eq!(events.last().unwrap()["session_id"], "s3");
    // `hookd dispatch` says it too, and fails as it always did.
    let mut cmd = p.cmd(&["dispatch", "pre_tool", "--no-daemon", "--session-id", "s4"]);
    cmd.arg("--events").arg(&log);
    let o = with_stdin(cmd, "{}");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let shown = p.run(&["events", "--file", file, "--session", "s4"]);
    assert_eq!(
        untimed(&stdout(&shown)),
        "#9      HH:MM:SS.mmm  s4            pre_tool         config_error         (dispatch) .infer/hooks.yaml:2: invalid YAML: while parsing a node, did not find expected node content (no hook ran)\n"
    );
    // `--summary` reads events; following them or printing their JSON is something else.
    let o = p.run(&["events", "--file", file, "--summary", "--follow"]);
    assert_eq!(o.status.code(), Some(2));
}
