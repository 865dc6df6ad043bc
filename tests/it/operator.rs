//! The first hour of an operator: nothing fails silently, and every message says what to do.
//! Each test asserts the whole line a person reads.

use serde_json::Value;

use crate::support::{stderr, stdout, with_stdin, Project};

#[test]
fn hooks_that_are_off_say_so_on_every_dispatch() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "hooks:\n  - {name: fmt, hook: post_session, command: 'true'}\n  - {name: lint, hook: post_session, command: 'true'}\n",
    );
    let out = with_stdin(p.cmd(&["dispatch", "post_session"]), "{}");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "hookd: hooks are off in .infer/hooks.yaml: its 2 hooks did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run them\n"
    );
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["commands"], serde_json::json!([]));
    assert_eq!(
        outcome["notices"][0].as_str().unwrap().split(':').next(),
        Some("hooks are off in .infer/hooks.yaml")
    );
    // On, nothing is said and the Outcome has no notices.
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: fmt, hook: post_session, command: 'true'}]\n",
    );
    let out = with_stdin(p.cmd(&["dispatch", "post_session"]), "{}");
    assert!(!stderr(&out).contains("hooks are off"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("notices"), "{}", stdout(&out));
    // The adapters say it on stderr too (the agent's reply is unchanged).
    p.write(
        "hooks.yaml",
        "hooks: [{name: fmt, hook: post_session, command: 'true'}]\n",
    );
    let out = with_stdin(
        p.cmd(&["adapter", "claude-code", "--no-daemon"]),
        r#"{"hook_event_name":"Stop","session_id":"s"}"#,
    );
    assert_eq!(stdout(&out), "{}\n");
    assert!(
        stderr(&out).contains("hookd: hooks are off in .infer/hooks.yaml: its 1 hook did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_strict_fails_when_any_hook_would_not_run() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: ok, hook: post_session, command: 'true'}\n  - {name: nope, hook: post_session, command: 'rm -rf target'}\n",
    );
    let plain = p.run(&["check"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let strict = p.run(&["check", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(
        stderr(&strict),
        "hookd check --strict: 1 hook would not run:\n  hook nope (.infer/hooks.yaml:4) would be refused by the gate\n"
    );
    // With a way around hookd as well, both are said (the first hid the second).
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(
        p.path().join(".claude/settings.json"),
        r#"{"disableAllHooks": true}"#,
    )
    .unwrap();
    let both = p.run(&["check", "--strict"]);
    assert_eq!(both.status.code(), Some(1));
    assert_eq!(
        stderr(&both),
        "hookd check --strict: the project's agent files open 1 way around hookd:\n  .claude/settings.json switches the agent's hooks off (\"disableAllHooks\": true): hookd would not run\n\
         hookd check --strict: 1 hook would not run:\n  hook nope (.infer/hooks.yaml:4) would be refused by the gate\n"
    );
    std::fs::remove_file(p.path().join(".claude/settings.json")).unwrap();
    // Untrusted, every project hook is skipped.
    let out = p.cmd_untrusted(&["check", "--strict"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("hook ok (.infer/hooks.yaml:3) would be skipped: the project is not trusted"),
        "{}",
        stderr(&out)
    );
    // Switched off.
    p.write(
        "hooks.yaml",
        "hooks: [{name: ok, hook: post_session, command: 'true'}]\n",
    );
    let out = p.run(&["check", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "hookd check --strict: 1 hook would not run:\n  hooks are off in .infer/hooks.yaml: its 1 hook did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run it\n"
    );
    // The count is of hooks, not of lines: a file switched off holds two.
    p.write(
        "hooks.yaml",
        "hooks:\n  - {name: ok, hook: post_session, command: 'true'}\n  - {name: two, hook: post_session, command: 'true'}\n",
    );
    let out = p.run(&["check", "--strict"]);
    assert_eq!(
        stderr(&out),
        "hookd check --strict: 2 hooks would not run:\n  hooks are off in .infer/hooks.yaml: its 2 hooks did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run them\n"
    );
    // All good: 0.
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: ok, hook: post_session, command: 'true'}]\n",
    );
    assert!(p.run(&["check", "--strict"]).status.success());
}

#[test]
fn allow_answers_when_hooks_yaml_is_broken() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^gofmt -w \\.$']}}}}\n",
    );
    p.write("hooks.yaml", "enabled: true\nhooks: [\n");
    let out = p.run(&["allow", "--", "gofmt -w ."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("allowed"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("(ignored: not needed for the allow-list)"),
        "{}",
        stderr(&out)
    );
    // `check` still fails on it.
    assert_eq!(p.run(&["check"]).status.code(), Some(1));
}

#[test]
fn the_hint_names_the_append_variable_only_for_entries_it_can_carry() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    let hint = |cmd: &str| {
        let out = p.run(&["allow", "--json", "--", cmd]);
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["hint"].as_str().unwrap().to_string()
    };
    assert!(hint("gofmt -w .").ends_with("or append it with INFER_TOOLS_BASH_ALLOW_APPEND"));
    let with_comma = hint("echo a,b");
    assert!(
        !with_comma.contains("INFER_TOOLS_BASH_ALLOW_APPEND"),
        "{with_comma}"
    );
    assert!(with_comma.contains("'^echo a,b$'"), "{with_comma}");
}

#[test]
fn the_headless_example_is_as_exact_as_it_claims() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/config/headless");
    let p = Project::new();
    let verdict = |cmd: &str| {
        p.run(&["allow", "--config-dir", dir, "--", cmd])
            .status
            .code()
    };
    for cmd in [
        "cat /etc/passwd",
        "ls -la /",
        "cat ../secrets",
        "cat src/../../x",
        "cat .env",
        "cat .git/config",
        "ls .infer",
        "cat -n x",
        "cat src/-n",
    ] {
        assert_eq!(verdict(cmd), Some(1), "{cmd} must be denied");
    }
    for cmd in [
        "cat src/main.rs",
        "ls -la src",
        "ls",
        "cat Cargo.toml",
        "git status",
    ] {
        assert_eq!(verdict(cmd), Some(0), "{cmd} must be allowed");
    }
}

#[test]
fn a_timed_out_hook_names_the_timeout_line_to_raise() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sleep 5$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - name: slow\n    hook: post_session\n    command: sleep 5\n    timeout: 1\n",
    );
    let out = with_stdin(p.cmd(&["dispatch", "post_session", "--events", "-"]), "{}");
    let event = stderr(&out)
        .lines()
        .find(|l| l.contains("\"type\":\"hook_command\""))
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .expect("a hook_command event");
    assert_eq!(
        event["error"],
        "timed out after 1s; the process group was killed (its limit is `timeout:` at .infer/hooks.yaml:6; raise it there if the hook needs longer)"
    );
    let check = stdout(&p.run(&["check"]));
    assert!(
        check.contains("hook slow `sleep 5` (timeout 1s, .infer/hooks.yaml:6)"),
        "{check}"
    );
}

#[test]
fn a_hook_whose_program_is_missing_says_why_and_fails_check_strict() {
    // The README's first example on a machine without the formatter.
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^gofmtx -l \\.$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: fmt, hook: post_session, command: 'gofmtx -l .'}\n",
    );
    let out = with_stdin(p.cmd(&["dispatch", "post_session"]), "{}");
    assert!(out.status.success(), "{}", stderr(&out));
    let why = "`gofmtx` was not found on PATH; is it installed?";
    assert_eq!(
        stderr(&out),
        format!("hookd: hook `fmt` (.infer/hooks.yaml:3) did not start: {why}\n")
    );
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["commands"][0]["status"], "not_started");
    assert_eq!(outcome["commands"][0]["error"], why);
    // The adapters say it to the operator too; the agent's reply is unchanged.
    let out = with_stdin(
        p.cmd(&["adapter", "claude-code", "--no-daemon"]),
        r#"{"hook_event_name":"Stop","session_id":"s"}"#,
    );
    assert_eq!(stdout(&out), "{}\n");
    assert!(stderr(&out).contains(why), "{}", stderr(&out));
    // `check` shows it before any session, and `--strict` fails on it.
    let check = p.run(&["check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(
        stdout(&check).contains(&format!("    ! WOULD NOT START: {why}\n")),
        "{}",
        stdout(&check)
    );
    let strict = p.run(&["check", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(
        stderr(&strict),
        format!("hookd check --strict: 1 hook would not run:\n  hook fmt (.infer/hooks.yaml:3) would not start: {why}\n")
    );
    // Installed (here: a program of the project, given by path), it passes.
    std::fs::create_dir_all(p.path().join("bin")).unwrap();
    std::fs::write(p.path().join("bin/gofmtx"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        p.path().join("bin/gofmtx"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^bin/gofmtx -l \\.$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: fmt, hook: post_session, command: 'bin/gofmtx -l .'}\n",
    );
    let strict = p.run(&["check", "--strict"]);
    assert!(strict.status.success(), "{}", stderr(&strict));
}

/// `hookd check`'s stderr for a project whose hooks.yaml is `text`, which must be invalid.
fn check_error(text: &str) -> String {
    let p = Project::new();
    p.write("hooks.yaml", text);
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    stderr(&out)
}

#[test]
fn a_tab_in_indentation_is_called_a_tab_at_its_own_line() {
    assert_eq!(
        check_error("enabled: true\nhooks:\n  - name: x\n\t  hook: post_session\n    command: 'true'\n"),
        "error: invalid YAML: a tab in the indentation; YAML indents with spaces only\n  --> .infer/hooks.yaml:4:1\n  |\n4 | \\t  hook: post_session\n  | ^\n  = help: replace the tab with spaces (as many as the lines around it use)\n\nhookd: the configuration has 1 error\n"
    );
}

#[test]
fn an_agents_event_name_as_a_point_suggests_the_point_it_maps_to() {
    assert_eq!(
        check_error("enabled: true\nhooks:\n  - name: fmt\n    hook: Stop\n    command: 'true'\n"),
        "error: unknown hook point `Stop`\n  --> .infer/hooks.yaml:4:11\n  |\n4 |     hook: Stop\n  |           ^^^^\n  = help: `Stop` is an agent's event name; hookd's point for it is `post_session`: write `hook: post_session`\n\nhookd: the configuration has 1 error\n"
    );
}

#[test]
fn hookd_log_debug_tells_the_story_of_a_dispatch() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: fmt, hook: post_tool, command: 'true', matcher: Bash}\n  - {name: other, hook: post_tool, command: 'true', matcher: Edit}\n  - {name: rm, hook: post_tool, command: 'rm -rf x'}\n",
    );
    let mut cmd = p.cmd(&["dispatch", "post_tool"]);
    cmd.env("HOOKD_LOG", "debug");
    let out = with_stdin(cmd, r#"{"session_id":"s","tool":{"name":"Bash"}}"#);
    let log = stderr(&out);
    for line in [
        "DEBUG hookd::config: configuration loaded sources=[\".infer/config.yaml\", \".infer/hooks.yaml\"] trust=TrustedByFlag hooks=3 reminders=0",
        "DEBUG hookd::dispatch: dispatch point=post_tool session=\"s\" mode=standard",
        "DEBUG hookd::command: selected hook=fmt",
        "DEBUG hookd::command: not selected: the tool does not match hook=other tool=\"Bash\" matcher=\"^(?:Edit)$\"",
        "DEBUG hookd::command: skipped hook=rm reason=not_allowlisted detail=`rm -rf x` is not on the allow-list for mode `standard`",
        " INFO hookd::dispatch: dispatched point=post_tool session=\"s\" reminders=0 commands=2 skipped=1",
    ] {
        assert!(log.lines().any(|l| l == line), "missing {line:?} in:\n{log}");
    }
    assert!(
        log.lines().any(|l| l.starts_with("DEBUG hookd::command: ran hook=fmt argv=[\"true\"] allowed_by=^true$ (.infer/config.yaml:1) exit_code=Some(0) timed_out=false")),
        "{log}"
    );
    // At the default level, nothing.
    let out = with_stdin(
        p.cmd(&["dispatch", "post_tool"]),
        r#"{"session_id":"s","tool":{"name":"Bash"}}"#,
    );
    assert_eq!(stderr(&out), "");
}

/// A repository with a hook that marks where it ran.
fn repository() -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".git")).unwrap();
    std::fs::create_dir_all(p.path().join("src/deep")).unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^touch ran\\.marker$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: mark, hook: post_session, command: 'touch ran.marker'}, {name: mark2, hook: pre_tool, command: 'touch ran.marker'}]\n",
    );
    p
}

#[test]
fn hookd_in_a_subdirectory_finds_the_projects_infer() {
    let p = repository();
    let mut cmd = p.cmd(&["dispatch", "post_session"]);
    cmd.current_dir(p.path().join("src/deep"));
    let out = with_stdin(cmd, "{}");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"name\":\"mark\""),
        "{}",
        stdout(&out)
    );
    // Hooks run in the project, where the agent works.
    assert!(p.path().join("ran.marker").exists());
    let mut cmd = p.cmd(&["check"]);
    cmd.current_dir(p.path().join("src"));
    let check = stdout(&cmd.output().unwrap());
    assert!(
        check.starts_with("sources: .infer/config.yaml, .infer/hooks.yaml"),
        "{check}"
    );
}

#[test]
fn adapters_work_in_the_agents_project_wherever_they_are_started() {
    let p = repository();
    let elsewhere = tempfile::tempdir().unwrap();
    // Claude Code's CLAUDE_PROJECT_DIR.
    let mut cmd = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
    cmd.current_dir(elsewhere.path())
        .env("CLAUDE_PROJECT_DIR", p.path());
    let out = with_stdin(cmd, r#"{"hook_event_name":"Stop","session_id":"s"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.path().join("ran.marker").exists(), "{}", stderr(&out));
    std::fs::remove_file(p.path().join("ran.marker")).unwrap();
    // Gemini CLI's payload `cwd`, a subdirectory of the project.
    let mut cmd = p.cmd(&["adapter", "gemini", "--no-daemon"]);
    cmd.current_dir(elsewhere.path());
    let payload = serde_json::json!({
        "hook_event_name": "BeforeTool", "session_id": "g", "timestamp": "t",
        "cwd": p.path().join("src/deep"), "tool_name": "read_file", "tool_input": {},
    });
    let out = with_stdin(cmd, &payload.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.path().join("ran.marker").exists(), "{}", stderr(&out));
}

#[test]
fn dispatch_pretty_prints_the_same_outcome_for_people() {
    let p = Project::new();
    let line = with_stdin(p.cmd(&["dispatch", "pre_tool", "--session-id", "s"]), "{}");
    let pretty = with_stdin(
        p.cmd(&["dispatch", "pre_tool", "--session-id", "s", "--pretty"]),
        "{}",
    );
    assert_eq!(stdout(&line).lines().count(), 1);
    assert!(
        stdout(&pretty).starts_with("{\n  \"hook\": \"pre_tool\",\n"),
        "{}",
        stdout(&pretty)
    );
    let a: Value = serde_json::from_str(&stdout(&line)).unwrap();
    let b: Value = serde_json::from_str(&stdout(&pretty)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn the_daemon_answers_every_mistake_in_json() {
    let p = Project::new();
    let d = crate::support::daemon::start(&p, &[]);
    let ask = |method: &str, path: &str, headers: &[(&str, &str)]| {
        let mut s = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
        crate::support::daemon::request(&mut s, method, path, headers, "")
    };
    for (method, path, headers, status, says) in [
        ("GET", "/nope", vec![], 404, "no such endpoint `/nope`"),
        (
            "DELETE",
            "/v1/dispatch",
            vec![],
            405,
            "`DELETE /v1/dispatch` is not served",
        ),
        (
            "GET",
            "/v1/events?since=abc",
            vec![],
            400,
            "expected ?since=SEQ (a number)",
        ),
        (
            "GET",
            "/v1/events",
            vec![("Last-Event-ID", "x")],
            400,
            "Last-Event-ID `x` is not an event number",
        ),
        (
            "GET",
            "/v1/events?since=999",
            vec![],
            400,
            "since=999 is after the newest event (0)",
        ),
    ] {
        let (code, body) = ask(method, path, &headers);
        assert_eq!(code, status, "{method} {path}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert!(v["error"].as_str().unwrap().contains(says), "{body}");
    }
}

#[test]
fn a_shutdown_reaches_followers_and_clients_with_what_happened() {
    use std::io::{BufRead, BufReader};
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sleep 30$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: slow, hook: post_session, command: 'sleep 30'}]\n",
    );
    let d = crate::support::daemon::start(&p, &[]);
    // A follower, through the CLI.
    let follower = p
        .cmd(&["events", "--follow"])
        .env("HOOKD_SOCKET", &d.socket)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let subscribed = crate::support::eventually(std::time::Duration::from_secs(10), || {
        crate::support::daemon::tcp(&d, "GET", "/metrics", "")
            .1
            .contains("\nhookd_subscribers 1\n")
    });
    assert!(subscribed, "the follower never subscribed");
    // A client whose dispatch is running when the daemon stops.
    let client = p
        .cmd(&["dispatch", "post_session", "--session-id", "mid"])
        .env("HOOKD_SOCKET", &d.socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let running = crate::support::eventually(std::time::Duration::from_secs(10), || {
        crate::support::daemon::running_below(&d, "^sleep 30$").is_some()
    });
    assert!(running, "the client's hook never started");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(d.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    // Stopped gracefully, the daemon still answers: the run was killed, and the Outcome says so.
    let client = client.wait_with_output().unwrap();
    assert_eq!(client.status.code(), Some(0), "{}", stderr(&client));
    assert!(
        stdout(&client).contains("\"status\":\"killed\""),
        "{}",
        stdout(&client)
    );
    let out = follower.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // The killed run's event reached the follower before its stream ended.
    let lines: Vec<String> = BufReader::new(&out.stdout[..])
        .lines()
        .map(Result::unwrap)
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("mid") && l.contains("hook_command") && l.contains("slow")),
        "{lines:?}"
    );
    assert!(
        stderr(&out).contains("shut down; the last event was"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_client_whose_daemon_dies_mid_dispatch_does_not_run_the_hooks_again() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sleep 3$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: slow, hook: post_session, command: 'sleep 3'}]\n",
    );
    let mut d = crate::support::daemon::start(&p, &[]);
    let client = p
        .cmd(&["dispatch", "post_session"])
        .env("HOOKD_SOCKET", &d.socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let running = crate::support::eventually(std::time::Duration::from_secs(10), || {
        crate::support::daemon::running_below(&d, "^sleep 3$").is_some()
    });
    assert!(running, "the client's hook never started");
    d.child.kill().unwrap();
    let out = client.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: the hookd daemon at {}: the daemon took the dispatch and stopped before answering (its hooks may have run); not dispatched again here, so no hook runs twice\n",
            d.socket.display()
        )
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn hookd_events_shows_the_session_in_aligned_columns() {
    let p = Project::new();
    let log = p.path().join("events.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"seq":7,"timestamp":"2026-11-22T10:00:00.123Z","type":"hook_command","hook":"post_session","name":"fmt","command":"gofmt -w .","exit_code":0,"duration_ms":41,"timed_out":false,"session_id":"027567bf-78d4-43b7-8b98-7b6d86ce3708"}"#,
            "\n",
            r#"{"seq":12,"timestamp":"2026-11-22T10:00:01.456Z","type":"tool_command_denied","hook":"pre_tool","tool":"Bash","reason":"not_allowlisted","command":"curl x","session_id":"s1"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = p.run(&["events", "--file", log.to_str().unwrap()]);
    assert_eq!(
        stdout(&out),
        "#7      10:00:00.123  027567bf-78d… post_session     hook_command         fmt (exit 0, 41ms) `gofmt -w .`\n\
         #12     10:00:01.456  s1            pre_tool         tool_command_denied  Bash denied: not_allowlisted `curl x`\n"
    );
}

#[test]
fn completions_offer_the_hook_points_and_the_manual_covers_every_subcommand() {
    let p = Project::new();
    let script = p.run(&["completions", "bash"]);
    assert!(script.status.success());
    std::fs::write(p.path().join("hookd.bash"), &script.stdout).unwrap();
    // What bash offers after `hookd dispatch pre_`, with the script loaded as a user would.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("source ./hookd.bash; COMP_WORDS=(hookd dispatch pre_); COMP_CWORD=2; COMP_LINE='hookd dispatch pre_'; COMP_POINT=${#COMP_LINE}; _hookd hookd pre_ dispatch; printf '%s\\n' \"${COMPREPLY[@]}\" | sort")
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "pre_queue_drain\npre_session\npre_stream\npre_tool\n",
        "{}",
        stderr(&o)
    );
    // After `--mode`, the modes (not the directory's files).
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("source ./hookd.bash; COMP_WORDS=(hookd dispatch pre_tool --mode ''); COMP_CWORD=4; COMP_LINE='hookd dispatch pre_tool --mode '; COMP_POINT=${#COMP_LINE}; _hookd hookd '' --mode; printf '%s\\n' \"${COMPREPLY[@]}\" | sort")
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "all\nauto\nplan\nreadonly\nstandard\n",
        "{}",
        stderr(&o)
    );
    for shell in ["zsh", "fish"] {
        let o = p.run(&["completions", shell]);
        assert!(o.status.success());
        assert!(stdout(&o).contains("post_queue_drain"), "{shell}");
        assert!(stdout(&o).contains("readonly"), "{shell}");
    }
    let man = stdout(&p.run(&["man"]));
    assert!(
        man.starts_with(".ie \\n(.g .ds Aq \\(aq") || man.contains(".TH hookd 1"),
        "{man}"
    );
    let pages: Vec<&str> = man
        .lines()
        .filter_map(|l| l.strip_prefix(".TH "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    for sub in [
        "hookd",
        "hookd-points",
        "hookd-check",
        "hookd-allow",
        "hookd-trust",
        "hookd-adapter",
        "hookd-install",
        "hookd-import",
        "hookd-uninstall",
        "hookd-serve",
        "hookd-events",
        "hookd-dispatch",
        "hookd-completions",
        "hookd-man",
        "hookd-exec",
        "hookd-import-claude-code",
    ] {
        assert!(pages.contains(&sub), "{sub} missing from {pages:?}");
    }
    // Pages name each other as the commands are typed: no `hookd-events(1)` that `man` would
    // not find, no page of a `help` subcommand.
    assert!(!man.contains("(1)"), "{man}");
    assert!(!pages.contains(&"hookd-help"), "{pages:?}");
    assert!(man.contains(".TP\n\\fBhookd events\\fR\nPrint the event stream for a person: from the running daemon, or from an events file\n"), "{man}");
    // Each synopsis is the command as typed, with the values its options take.
    let synopses: Vec<&str> = man
        .split(".SH SYNOPSIS\n")
        .skip(1)
        .map(|s| s.lines().next().unwrap())
        .collect();
    assert!(synopses.contains(&"\\fBhookd events\\fR [\\-f|\\-\\-follow] [\\-\\-since <SEQ>] [\\-\\-file <FILE>] [\\-\\-json] [\\-\\-session <ID>] [\\-\\-summary] [\\-h|\\-\\-help]"), "{synopses:?}");
    assert!(synopses.contains(&"\\fBhookd dispatch\\fR [\\-\\-config\\-dir <DIR>] [\\-\\-trust\\-project] [\\-\\-gate\\-shell\\-tools] [\\-\\-mode <MODE>] [\\-\\-session\\-id <ID>] [\\-\\-turn <N>] [\\-\\-events <FILE>] [\\-\\-daemon] [\\-\\-no\\-daemon] [\\-\\-daemon\\-timeout\\-ms <MS>] [\\-\\-pretty] [\\-h|\\-\\-help] <POINT>"), "{synopses:?}");
    assert_eq!(synopses.len(), pages.len());
}

#[test]
fn init_writes_a_first_configuration_that_check_passes_and_never_overwrites() {
    let p = Project::new();
    let o = p.run(&["init"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let infer = p.home.path().join(".infer");
    let shown = infer.display();
    assert_eq!(
        stdout(&o),
        format!("wrote {shown}/config.yaml\nwrote {shown}/schemas/config.schema.json\nwrote {shown}/hooks.yaml\nwrote {shown}/schemas/hooks.schema.json\nwrote {shown}/reminders.yaml\nwrote {shown}/schemas/reminders.schema.json\nnext: review what it runs and allows with `hookd check`, then connect an agent: `hookd install claude-code --scope user` (or gemini, crush)\n")
    );
    // The shipped files, each naming its schema, written beside it, which it validates against.
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/example");
    for (f, kind) in [
        ("config.yaml", "config"),
        ("hooks.yaml", "hooks"),
        ("reminders.yaml", "reminders"),
    ] {
        let written = std::fs::read_to_string(infer.join(f)).unwrap();
        let (first, body) = written.split_once('\n').unwrap();
        assert_eq!(
            first,
            format!("# yaml-language-server: $schema=./schemas/{kind}.schema.json")
        );
        let original = std::fs::read_to_string(shipped.join(f)).unwrap();
        assert_eq!(body, original.split_once('\n').unwrap().1);
        let schema =
            std::fs::read_to_string(infer.join(format!("schemas/{kind}.schema.json"))).unwrap();
        assert_eq!(schema, stdout(&p.run(&["schema", kind])));
    }
    let check = p.run(&["check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    // Again, with one file changed by the user: nothing is overwritten.
    std::fs::write(infer.join("hooks.yaml"), "enabled: false\n").unwrap();
    let o = p.run(&["init", "--headless"]);
    assert!(o.status.success());
    assert!(
        stdout(&o).starts_with(&format!("kept {shown}/config.yaml (it exists; not changed)\nkept {shown}/schemas/config.schema.json (it exists; not changed)\nkept {shown}/hooks.yaml (it exists; not changed)\n")),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read_to_string(infer.join("hooks.yaml")).unwrap(),
        "enabled: false\n"
    );
    // The unattended one, with the agent's hooks.
    let q = Project::new();
    let o = q.run(&["init", "--headless", "--agent", "claude-code"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let config = std::fs::read_to_string(q.home.path().join(".infer/config.yaml")).unwrap();
    assert!(config.contains("sandbox:\n  enabled: true\n"), "{config}");
    let settings = std::fs::read_to_string(q.home.path().join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("adapter claude-code --fail-closed --gate-shell-tools"),
        "{settings}"
    );
    assert!(stdout(&o).ends_with("next: review what it runs and allows with `hookd check`\n"));
}

#[test]
fn a_refused_hook_of_the_users_is_allowed_in_the_users_file_not_the_projects() {
    let p = Project::new();
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: up, hook: post_session, command: 'curl x'}\n",
    );
    // The project has a config.yaml of its own: the model's commands are allowed there.
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^true$']}}}}\n",
    );
    let home = p.home.path().join(".infer/config.yaml");
    let hint = format!("to allow exactly this command, add '^curl x$' to tools.bash.mode.standard.allow (or tools.bash.mode.all.allow) in {}, or append it with INFER_TOOLS_BASH_ALLOW_APPEND", home.display());
    let check = stdout(&p.run(&["check"]));
    assert!(check.contains(&format!("      hint: {hint}\n")), "{check}");
    let out = with_stdin(p.cmd(&["dispatch", "post_session", "--events", "-"]), "{}");
    let skipped = crate::support::json_lines(&stderr(&out))
        .into_iter()
        .find(|e| e["type"] == "hook_command_skipped")
        .unwrap();
    assert_eq!(skipped["hint"], hint.as_str());
}

/// README's completions and manual lines, copied as written into a bare home (no
/// directories made beforehand): they write what `hookd completions`/`hookd man` print, and
/// `man` (man-db) finds the page the way the README says.
#[test]
fn the_readmes_install_lines_work_in_a_bare_home() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    let readme = readme.unwrap();
    let after = readme
        .split_once("Completions and the manual page, installed for your user")
        .unwrap()
        .1;
    let block = after
        .split_once("```sh\n")
        .unwrap()
        .1
        .split_once("```\n")
        .unwrap()
        .0;
    let home = tempfile::tempdir().unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_hookd"))
        .parent()
        .unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = |script: &str| {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail\n{script}"))
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .current_dir(home.path())
            .output()
            .unwrap()
    };
    let o = run(block);
    assert!(o.status.success(), "{block}\n{}", stderr(&o));
    let p = Project::new();
    for (shell, file) in [
        ("bash", ".local/share/bash-completion/completions/hookd"),
        ("zsh", ".zfunc/_hookd"),
        ("fish", ".config/fish/completions/hookd.fish"),
    ] {
        let written = std::fs::read(home.path().join(file)).unwrap();
        assert_eq!(written, p.run(&["completions", shell]).stdout, "{file}");
    }
    let page = home.path().join(".local/share/man/man1/hookd.1");
    assert_eq!(std::fs::read(&page).unwrap(), p.run(&["man"]).stdout);
    if run("command -v man").status.success() {
        let o = run("man -l ~/.local/share/man/man1/hookd.1 | head -1");
        assert!(stdout(&o).starts_with("hookd(1)"), "{}", stderr(&o));
        // `man hookd` finds it with ~/.local/bin on PATH.
        let o = run("mkdir -p ~/.local/bin && PATH=~/.local/bin:$PATH man -w hookd");
        assert_eq!(
            stdout(&o),
            format!("{}\n", page.display()),
            "{}",
            stderr(&o)
        );
    } else {
        eprintln!("man (man-db) is not installed: the page is written, not read");
    }
}

/// Issue 42: the editor (hookd's schema) underlines an unknown key that `hookd check` only
/// warns about. The loader keeps ignoring it (the agent's files may come from a newer
/// version), and `--strict`, CI's check, fails on it as the editor does; the agent's own
/// top-level keys in config.yaml are not hookd's to judge.
#[test]
fn check_strict_fails_on_a_key_the_schema_rejects() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "gateway: {url: 'http://x'}\ntools: {bash: {mode: {all: {allow: ['^true$']}}}}\nsandbox: {enabld: true}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: ok, hook: post_tool, command: 'true', matchr: Bash}\n",
    );
    let plain = p.run(&["check"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let strict = p.run(&["check", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    let said = stderr(&strict);
    let tail = said
        .find("hookd check --strict")
        .map(|at| &said[at..])
        .unwrap_or_default();
    assert_eq!(
        tail,
        "hookd check --strict: 2 unknown keys would be ignored (an editor with hookd's schema marks them as an error):\n  \
         .infer/config.yaml:3:11: unknown key `enabld` in `sandbox` is ignored\n  \
         .infer/hooks.yaml:3:50: unknown key `matchr` in a hook is ignored\n",
        "{said}"
    );
}

/// `hookd events --file F --follow` reads on through a rotation (F renamed F.1, a new F):
/// every event once, none lost. Before it read F again by line count, so a new F longer than
/// what it had seen lost its first lines.
#[test]
fn events_follow_a_file_through_its_rotation_each_event_once() {
    let p = Project::new();
    let log = p.dir.path().join("events.jsonl");
    let event = |seq: u64| {
        format!("{{\"seq\":{seq},\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"turn_started\",\"session_id\":\"s\",\"turn\":{seq}}}\n")
    };
    std::fs::write(&log, format!("{}{}", event(1), event(2))).unwrap();
    let shown = p.dir.path().join("shown.txt");
    let mut follower = p
        .cmd(&[
            "events",
            "--file",
            log.to_str().unwrap(),
            "--follow",
            "--json",
        ])
        .stdout(std::fs::File::create(&shown).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let seqs = || -> Vec<u64> {
        std::fs::read_to_string(&shown)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok()?["seq"].as_u64())
            .collect()
    };
    let wait = std::time::Duration::from_secs(10);
    assert!(
        crate::support::eventually(wait, || seqs() == [1, 2]),
        "{:?}",
        seqs()
    );
    std::fs::rename(&log, p.dir.path().join("events.jsonl.1")).unwrap();
    std::fs::write(&log, format!("{}{}{}", event(3), event(4), event(5))).unwrap();
    let all = crate::support::eventually(wait, || seqs().len() >= 5);
    follower.kill().unwrap();
    follower.wait().unwrap();
    assert!(all, "{:?}", seqs());
    assert_eq!(seqs(), [1, 2, 3, 4, 5]);
}
