//! Where configuration comes from: project over home, `--config-dir` alone, environment overrides.

use crate::support::{stderr, stdout, Project};

fn allow_json(p: &Project, args: &[&str]) -> serde_json::Value {
    let out = p.run(args);
    serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)))
}

#[test]
fn project_hooks_win_over_home_hooks() {
    let p = Project::new();
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: home, hook: post_session, command: 'true'}]\n",
    );
    let out = p.run(&["check"]);
    assert!(
        stdout(&out).contains("hook home `true`"),
        "{}",
        stdout(&out)
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: proj, hook: post_session, command: 'true'}]\n",
    );
    let out = p.run(&["check"]);
    assert!(stdout(&out).contains("hook proj `true`"));
    assert!(!stdout(&out).contains("hook home"));
}

#[test]
fn config_yaml_merges_home_under_project_per_list() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^home-all$']}, plan: {allow: ['^home-plan$']}}}}\n",
    );
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {plan: {allow: ['^proj-plan$']}}}}\n",
    );
    let v = allow_json(&p, &["allow", "--mode", "plan", "--json", "--", "home-all"]);
    assert_eq!(
        v["allowed"], true,
        "home `all` list is kept: the project does not set it"
    );
    let v = allow_json(
        &p,
        &["allow", "--mode", "plan", "--json", "--", "proj-plan"],
    );
    assert_eq!(v["allowed"], true);
    let v = allow_json(
        &p,
        &["allow", "--mode", "plan", "--json", "--", "home-plan"],
    );
    assert_eq!(
        v["allowed"], false,
        "the project's plan list replaces the home one"
    );
}

#[test]
fn config_dir_reads_only_that_directory() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^proj$']}}}}\n",
    );
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^home$']}}}}\n",
    );
    let only = tempfile::tempdir().unwrap();
    std::fs::write(
        only.path().join("config.yaml"),
        "tools: {bash: {mode: {all: {allow: ['^only$']}}}}\n",
    )
    .unwrap();
    let dir = only.path().to_str().unwrap();
    for (cmd, allowed) in [("only", true), ("proj", false), ("home", false)] {
        let v = allow_json(&p, &["allow", "--config-dir", dir, "--json", "--", cmd]);
        assert_eq!(v["allowed"], allowed, "{cmd}");
    }
    let out = p.run(&["check", "--config-dir", "/nonexistent/dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: --config-dir /nonexistent/dir is not a directory\n"
    );
}

#[test]
fn allow_append_variable_adds_entries_to_every_mode() {
    let p = Project::new();
    let out = p
        .cmd(&["allow", "--mode", "plan", "--", "make lint"])
        .env(
            "INFER_TOOLS_BASH_ALLOW_APPEND",
            "^make test$,^make lint$\n^x$",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "allowed\n  by `^make lint$` (INFER_TOOLS_BASH_ALLOW_APPEND)\n  runs [\"make\", \"lint\"]\n");
}

#[test]
fn enabled_flags_come_from_the_environment() {
    let p = Project::new();
    p.write("hooks.yaml", "enabled: false\nhooks: []\n");
    let out = p
        .cmd(&["check"])
        .env("INFER_HOOKS_ENABLED", "true")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("hooks: enabled"), "{}", stdout(&out));
    p.write("hooks.yaml", "enabled: true\nhooks: []\n");
    let out = p
        .cmd(&["check"])
        .env("INFER_HOOKS_ENABLED", "0")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("hooks: disabled"));
}

#[test]
fn inline_reminders_replace_the_file() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders: [{name: file, text: from-file}]\n",
    );
    let out = p
        .cmd(&["dispatch", "pre_stream"])
        .env(
            "INFER_REMINDERS_CONFIG",
            "enabled: true\nreminders: [{name: inline, text: from-env}]",
        )
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["reminders"][0]["name"], "inline");
    assert_eq!(v["reminders"].as_array().unwrap().len(), 1);
    let out = p
        .cmd(&["dispatch", "pre_stream"])
        .env("INFER_REMINDERS_ENABLED", "false")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["reminders"], serde_json::json!([]));
}

#[test]
fn check_warns_loudly_about_unrestricted_entries() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      auto:\n        allow: ['.*']\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        "warning: allow entry `.*` (.infer/config.yaml:5) is UNRESTRICTED: in mode `auto` it admits `rm -rf /`, which no restricted entry should admit\n\n"
    );
    assert!(stdout(&out).ends_with("hookd check: configuration is valid (1 warning)\n"));
}
