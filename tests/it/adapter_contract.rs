//! What the adapter redesign fixed: Crush's deny reason is exactly the hook's reason, install
//! honours the agents' own config-location variables, and install recognises its own entries by
//! the parsed command (another path, a path with spaces).

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{stderr, stdout, with_stdin, Project};

#[test]
fn crushs_deny_reason_is_exactly_the_hooks_reason_whatever_hookd_warns_about() {
    let p = Project::new();
    // An empty allow entry is a configuration warning, printed on stderr by other commands.
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['', '^\\./guard\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: guard, hook: pre_tool, command: ./guard.sh}]\n",
    );
    let guard = p.path().join("guard.sh");
    std::fs::write(&guard, "#!/bin/sh\necho 'no rm -rf' >&2\nexit 2\n").unwrap();
    std::fs::set_permissions(&guard, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let payload = json!({"event": "PreToolUse", "session_id": "c1", "tool_name": "bash",
                         "tool_input": {"command": "rm -rf /"}});
    let out = with_stdin(p.cmd(&["adapter", "crush"]), &payload.to_string());
    assert_eq!(out.status.code(), Some(2));
    // Crush shows this to the model: the hook's reason and nothing of hookd's own.
    assert_eq!(stderr(&out), "no rm -rf\n");
    // Claude Code reads the reason from stdout, so its stderr keeps the warning for the operator.
    let claude = json!({"hook_event_name": "PreToolUse", "session_id": "c1", "tool_name": "Bash",
                        "tool_input": {"command": "rm -rf /"}});
    let out = with_stdin(p.cmd(&["adapter", "claude-code"]), &claude.to_string());
    assert!(
        stderr(&out).contains("empty allow entry is ignored"),
        "{}",
        stderr(&out)
    );
}

fn settings(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn user_scope_install_honours_the_agents_own_config_location_variables() {
    let p = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let cases = [
        ("crush", "CRUSH_GLOBAL_CONFIG", "crush-config", "crush.json"),
        (
            "gemini",
            "GEMINI_CLI_HOME",
            "gemini-home",
            ".gemini/settings.json",
        ),
        (
            "claude-code",
            "CLAUDE_CONFIG_DIR",
            "claude-config",
            "settings.json",
        ),
    ];
    for (agent, var, dir, file) in cases {
        let dir = elsewhere.path().join(dir);
        let out = p
            .cmd(&["install", agent, "--scope", "user"])
            .env(var, &dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{agent}: {}", stderr(&out));
        let written = dir.join(file);
        assert_eq!(
            stdout(&out),
            format!("hookd: added hookd's adapter to {}\n", written.display()),
            "{agent}"
        );
        assert!(settings(&written)["hooks"].is_object(), "{agent}");
    }
    // Nothing went to the default places under HOME: only hookd's record of where it
    // installed (protected from the model whatever the agent is told later).
    let names = |d: std::path::PathBuf| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(p.home.path().to_path_buf()), [".infer"]);
    assert_eq!(
        names(p.home.path().join(".infer")),
        ["installed.json", "installed.lock"]
    );
    let record = std::fs::read_to_string(p.home.path().join(".infer/installed.json")).unwrap();
    for dir in ["crush-config", "gemini-home", "claude-config"] {
        assert!(record.contains(dir), "{dir}: {record}");
    }
}

/// A copy of the hookd binary at `dir/hookd`.
fn hookd_at(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let bin = dir.join("hookd");
    crate::support::copy_hookd(&bin);
    bin
}

fn run_at(p: &Project, bin: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .current_dir(p.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.home.path())
        .output()
        .unwrap()
}

#[test]
fn install_from_another_path_updates_its_entries_and_uninstall_finds_quoted_paths() {
    let p = Project::new();
    let bins = tempfile::tempdir().unwrap();
    let spaced = hookd_at(&bins.path().join("with space"));
    let plain = hookd_at(&bins.path().join("plain"));
    let path = p.path().join(".claude/settings.json");
    for bin in [&spaced, &plain, &spaced] {
        let out = run_at(&p, bin, &["install", "claude-code"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v = settings(&path);
        for (event, groups) in v["hooks"].as_object().unwrap() {
            let commands: Vec<&str> = groups
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .map(|h| h["command"].as_str().unwrap())
                .collect();
            assert_eq!(
                commands.len(),
                1,
                "{event}: one entry, not one per path: {commands:?}"
            );
            assert!(
                commands[0].contains(&bin.display().to_string()),
                "{commands:?}"
            );
        }
    }
    // Installed from the path with a space (quoted in the command); the other binary removes it.
    let out = run_at(&p, &plain, &["uninstall", "claude-code"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !path.exists(),
        "{}",
        std::fs::read_to_string(&path).unwrap_or_default()
    );
}
