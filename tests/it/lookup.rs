//! Where configuration comes from: the user's home always, a trusted project's files added on
//! top, `--config-dir` alone, environment overrides.

use crate::support::{stderr, stdout, Project};

fn allow_json(p: &Project, args: &[&str]) -> serde_json::Value {
    let out = p.run(args);
    serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)))
}

#[test]
fn home_hooks_stay_and_a_trusted_projects_hooks_are_added() {
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
    assert!(
        stdout(&out).contains("hook home `true`"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("hook proj `true`"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).find("hook home").unwrap() < stdout(&out).find("hook proj").unwrap(),
        "the user's hooks run first"
    );
}

#[test]
fn config_yaml_adds_the_projects_entries_to_the_users_per_list() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^home-all$']}, plan: {allow: ['^home-plan$']}}}}\n",
    );
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {plan: {allow: ['^proj-plan$']}}}}\n",
    );
    for command in ["home-all", "proj-plan", "home-plan"] {
        let v = allow_json(&p, &["allow", "--mode", "plan", "--json", "--", command]);
        assert_eq!(v["allowed"], true, "{command}: {v}");
    }
    let v = allow_json(
        &p,
        &["allow", "--mode", "standard", "--json", "--", "proj-plan"],
    );
    assert_eq!(v["allowed"], false, "plan entries stay in plan");
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
fn inline_reminders_replace_the_users_file_and_the_project_adds_its_own() {
    let p = Project::new();
    p.write_home(
        "reminders.yaml",
        "enabled: true\nreminders: [{name: home-file, text: from-home}]\n",
    );
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
    let names: Vec<&str> = v["reminders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["inline", "file"]);
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
        "warning: allow entry `.*` (.infer/config.yaml:5) is UNRESTRICTED: in mode `auto` it admits `rm -rf /`, which no restricted entry should admit\n  = fix: replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each\n\n"
    );
    assert!(stdout(&out).ends_with("hookd check: configuration is valid (1 warning)\n"));
}
