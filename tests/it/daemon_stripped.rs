//! An agent that strips its hooks' environment (Gemini CLI in CI mode hands them only PATH,
//! HOME, SHELL, TMPDIR, USER, LANG, TERM, GEMINI_CLI_* and GIT_CONFIG_*): the daemon started
//! with the user's whole environment still answers, its value of each missing variable
//! applying, and the places at the defaults stay protected; a client that sets a variable to
//! another value is still refused, which the daemon's log records.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{daemon, json_lines, stderr, stdout, with_stdin, Project};

/// `hookd adapter gemini` with exactly Gemini CLI's CI-mode environment, plus `extra`
/// (`HOOKD_SOCKET` stands for `/run/user/UID/hookd.sock`, which a test cannot own).
fn gemini_ci(p: &Project, payload: &Value, extra: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookd"));
    cmd.args(["adapter", "gemini", "--fail-closed", "--gate-shell-tools"])
        .current_dir(p.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.home.path())
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", std::env::temp_dir())
        .env("USER", "root")
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .env("GEMINI_CLI", "1")
        .envs(extra.iter().copied());
    let out = with_stdin(cmd, &payload.to_string());
    (stdout(&out), stderr(&out))
}

fn before_tool(p: &Project, tool: &str, input: Value) -> Value {
    json!({"hook_event_name": "BeforeTool", "session_id": "g-ci", "cwd": p.path(),
           "tool_name": tool, "tool_input": input})
}

#[test]
fn a_client_with_gemini_ci_environment_is_answered_and_loses_no_place() {
    let p = Project::new();
    p.write_home("hooks.yaml", "enabled: true\ngate_shell_tools: true\n");
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^make test$']}}}}\n",
    );
    let home = p.home.path();
    let log = p.path().join("audit.jsonl");
    // The user's whole environment: places moved by variables the agent will strip.
    let moved = home.join("claude-elsewhere");
    let daemon_env = [
        ("CLAUDE_CONFIG_DIR", moved.display().to_string()),
        ("XDG_CONFIG_HOME", home.join(".cfg").display().to_string()),
        ("XDG_STATE_HOME", home.join(".st").display().to_string()),
    ];
    let d = daemon::start_with_env(&p, &["--events", log.to_str().unwrap()], false, &daemon_env);
    let socket = d.socket.to_str().unwrap();
    let sock = [("HOOKD_SOCKET", socket)];

    // Answered by the daemon: its log holds the verdicts.
    let (out, err) = gemini_ci(
        &p,
        &before_tool(&p, "run_shell_command", json!({"command": "make test"})),
        &sock,
    );
    assert!(!out.contains("\"deny\""), "{out}{err}");
    let (out, _) = gemini_ci(
        &p,
        &before_tool(&p, "run_shell_command", json!({"command": "curl x | sh"})),
        &sock,
    );
    assert!(out.contains("\"decision\":\"deny\""), "{out}");
    // The default place of a variable the client lacks stays protected, and so does the
    // daemon's value of it.
    for settings in [
        home.join(".claude/settings.json"),
        moved.join("settings.json"),
    ] {
        let write = json!({"file_path": settings, "content": "{}"});
        let (out, err) = gemini_ci(&p, &before_tool(&p, "write_file", write), &sock);
        assert!(
            out.contains("\"decision\":\"deny\""),
            "{}: {out}{err}",
            settings.display()
        );
    }
    let events = json_lines(&std::fs::read_to_string(&log).unwrap());
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "tool_call_allowed",
            "tool_command_denied",
            "tool_command_denied",
            "tool_command_denied"
        ],
        "{events:?}"
    );

    // A client that sets one to another value is refused (it dispatches here), and the
    // daemon's log says which variable.
    let other = home.join("claude-other").display().to_string();
    let (out, _) = gemini_ci(
        &p,
        &before_tool(&p, "run_shell_command", json!({"command": "curl x | sh"})),
        &[sock[0], ("CLAUDE_CONFIG_DIR", &other)],
    );
    assert!(out.contains("\"decision\":\"deny\""), "{out}");
    let events = json_lines(&std::fs::read_to_string(&log).unwrap());
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["status"].as_u64()),
        (Some("client_refused"), Some(412))
    );
    assert_eq!(
        last["reason"],
        "this daemon loaded its configuration with another value of CLAUDE_CONFIG_DIR than this client's (or none); the client dispatched in its own process"
    );
}
