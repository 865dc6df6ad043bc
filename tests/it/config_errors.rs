//! What a user sees when configuration is wrong: whole messages, with file, line and column.

use crate::support::{stderr, stdout, Project};

#[test]
fn misspelt_hook_point_names_file_line_and_suggestion() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - name: fmt\n    hook: post_sesion\n    command: gofmt -w .\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: unknown hook point `post_sesion`\n  --> .infer/hooks.yaml:4:11\n  |\n4 |     hook: post_sesion\n  |           ^^^^^^^^^^^\n  = help: did you mean `post_session`? valid hook points: pre_session, pre_stream, post_stream, pre_tool, post_tool, pre_queue_drain, post_queue_drain, post_session\n\nhookd: the configuration has 1 error\n"
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn every_error_is_reported_not_just_the_first() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - name: a\n    hook: post_session\n    command: '  '\n  - name: a\n    hook: pre_tool\n    command: x\n  - name: b\n    hook: pre_tool\n    command: y\n    timeout: -5\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("error: command is empty\n  --> .infer/hooks.yaml:5:14"),
        "{err}"
    );
    assert!(
        err.contains(
            "error: duplicate hook name `a` (first defined on line 3)\n  --> .infer/hooks.yaml:6:5"
        ),
        "{err}"
    );
    assert!(
        err.contains("error: timeout is negative (-5)\n  --> .infer/hooks.yaml:12:14"),
        "{err}"
    );
    assert!(
        err.ends_with("hookd: the configuration has 3 errors\n"),
        "{err}"
    );
}

#[test]
fn unknown_keys_are_warnings_with_suggestions() {
    let p = Project::new();
    p.write("hooks.yaml", "enabled: true\nhooks:\n  - name: a\n    hook: post_session\n    command: 'true'\n    timout: 5\n");
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: unknown key `timout` in a hook is ignored\n  --> .infer/hooks.yaml:6:5\n  |\n6 |     timout: 5\n  |     ^^^^^^\n  = help: did you mean `timeout`? (known keys: name, hook, command, timeout, max_output, matcher, on, include_sub_agents, on_error, parallel, description)\n\n"
    );
    assert!(stdout(&out).contains("hookd check: configuration is valid (1 warning)"));
}

#[test]
fn yaml_syntax_errors_are_located() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - name: x\n    text: [unclosed\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("error: invalid YAML: "), "{err}");
    assert!(err.contains("--> .infer/reminders.yaml:"), "{err}");
}

#[test]
fn alias_bomb_and_huge_files_get_clear_errors_fast() {
    let p = Project::new();
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..15 {
        let r = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![r; 10].join(", ")));
    }
    p.write("hooks.yaml", &bomb);
    let start = std::time::Instant::now();
    let out = p.run(&["check"]);
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("error: the document expands to more than 100000 nodes (an alias bomb?)"),
        "{}",
        stderr(&out)
    );

    p.write(
        "hooks.yaml",
        &format!("enabled: true\n# {}\n", "x".repeat(3 * 1024 * 1024)),
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("error: the file is 3145745 bytes; configuration files are limited to 1048576 bytes\n  --> .infer/hooks.yaml:1:1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn reminder_trigger_pairing_is_validated() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - name: f\n    text: t\n    hook: pre_stream\n    trigger: on_failure\n  - name: o\n    text: t\n    trigger: once_after\n  - name: u\n    text: t\n    trigger: every\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error: trigger `on_failure` only fires at `post_tool`, not at `pre_stream`\n  --> .infer/reminders.yaml:5:11"), "{err}");
    assert!(
        err.contains("= help: set `hook: post_tool` or leave `hook` out"),
        "{err}"
    );
    assert!(err.contains("error: trigger `once_after` needs `threshold` greater than 0\n  --> .infer/reminders.yaml:7:5"), "{err}");
    assert!(
        err.contains("error: unknown trigger `every`\n  --> .infer/reminders.yaml:12:14"),
        "{err}"
    );
}

#[test]
fn invalid_allow_regex_is_an_error_at_its_line() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow:\n          - 'git (status'\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("error: allow entry `git (status` is not a valid regular expression\n  --> .infer/config.yaml:6:13"), "{err}");
}

#[test]
fn misspelt_mode_list_is_reported() {
    let p = Project::new();
    p.write("config.yaml", "gateway: {url: x}\ntools:\n  bash:\n    enabled: true\n    mode:\n      standrd:\n        allow: ['^ls$']\n");
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).starts_with("warning: unknown key `standrd` in tools.bash.mode is ignored\n  --> .infer/config.yaml:6:7"), "{}", stderr(&out));
}

#[test]
fn bad_environment_overrides_name_the_variable() {
    let p = Project::new();
    let out = p
        .cmd(&["check"])
        .env("INFER_HOOKS_ENABLED", "maybe")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: `maybe` is not a boolean\n  --> INFER_HOOKS_ENABLED\n  = help: use true or false\n\nhookd: the configuration has 1 error\n"
    );
    let out = p
        .cmd(&["check"])
        .env(
            "INFER_REMINDERS_CONFIG",
            "reminders: [{name: a, text: b, trigger: nope}]",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--> $INFER_REMINDERS_CONFIG:1:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn non_utf8_and_unreadable_files_are_errors() {
    let p = Project::new();
    std::fs::write(p.infer().join("hooks.yaml"), b"enabled: \xff\n").unwrap();
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("error: the file is not UTF-8 text (invalid byte at offset 9)\n  --> .infer/hooks.yaml\n"), "{}", stderr(&out));
}

#[test]
fn dispatch_with_bad_config_exits_2_and_runs_nothing() {
    let p = Project::new();
    let marker = p.path().join("ran");
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^touch .*$']}}}}\n",
    );
    p.write("hooks.yaml", &format!("enabled: true\nhooks:\n  - {{name: t, hook: post_session, command: 'touch {}'}}\n  - {{name: bad, hook: nowhere, command: x}}\n", marker.display()));
    let out = p.run(&["dispatch", "post_session"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!marker.exists());
    assert!(stderr(&out).contains("unknown hook point `nowhere`"));
}

#[test]
fn check_compiles_entries_that_only_parse() {
    let p = Project::new();
    p.write("config.yaml", "tools:\n  bash:\n    mode:\n      all:\n        allow:\n          - 'ls'\n          - '\\w{1000}\\w{1000}\\w{1000}'\n");
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("error: allow entry `\\w{1000}\\w{1000}\\w{1000}` cannot be compiled\n  --> .infer/config.yaml:7\n  = help: "), "{err}");
    assert!(
        err.ends_with("hookd: the configuration has 1 error\n"),
        "{err}"
    );
}

#[test]
fn infers_old_whitelist_is_named_with_the_entries_to_write_and_admits_nothing() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    whitelist:\n      commands: [ls, make]\n      patterns: ['^git log', '^gh auth status$', 'docker ps']\n",
    );
    let out = p.run(&["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: `tools.bash.whitelist` is infer's old allow-list, which hookd does not read: nothing it lists is allowed\n  --> .infer/config.yaml:3:5\n  |\n3 |     whitelist:\n  |     ^^^^^^^^^\n  = help: write it as `tools.bash.mode.all.allow` (which infer reads too), each entry matching a whole command; as written it admitted what these admit: ['^ls( .*)?$', '^make( .*)?$', '^git log.*', '^gh auth status$'] (narrow them: `hookd check` warns about each that admits too much); `docker ps` matched anywhere in a command: write the commands it meant\n\n"
    );
    // Said on every dispatch too, and nothing it lists is admitted.
    let out = p.run(&["allow", "--", "ls"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("warning: `tools.bash.whitelist` is infer's old allow-list"),
        "{}",
        stderr(&out)
    );
    // The entries it suggests, written where it says, admit what the old list meant.
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow: ['^ls( .*)?$', '^gh auth status$']\n",
    );
    let out = p.run(&["allow", "--", "ls -la"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn mode_all_is_the_shared_list_alone() {
    // infer gives a mode that is not one of its four the shared list only; so does hookd.
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^ls$']}, standard: {allow: ['^pwd$']}}}}\n",
    );
    assert!(p
        .run(&["allow", "--mode", "all", "--", "ls"])
        .status
        .success());
    let out = p.run(&["allow", "--mode", "all", "--", "pwd"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "denied: not_allowlisted: `pwd` is not on the allow-list for mode `all`\n  hint: to allow exactly this command, add '^pwd$' to tools.bash.mode.all.allow in .infer/config.yaml, or append it with INFER_TOOLS_BASH_ALLOW_APPEND\n"
    );
    assert!(p
        .run(&["allow", "--mode", "standard", "--", "pwd"])
        .status
        .success());
    assert!(
        stdout(&p.run(&["check", "--mode", "all"])).contains("allow-list for mode all: 1 entry\n")
    );
    // An agent that says so in its context gets the same.
    let out = p.run_with_stdin(
        &["dispatch", "pre_tool"],
        r#"{"mode": "all", "tool": {"name": "Bash", "input": {"command": "pwd"}}}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""mode":"all""#), "{}", stdout(&out));
}

#[test]
fn a_guidance_key_no_mode_has_is_warned_about() {
    let p = Project::new();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - name: m\n    hook: pre_stream\n    trigger: on_mode_change\n    text: '{guidance}'\n    guidance:\n      plan: think first\n      auto-with-judge: never used\n",
    );
    let out = p.run(&["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("warning: unknown key `auto-with-judge` in `guidance` is ignored\n  --> .infer/reminders.yaml:9:7"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn diagnostics_come_in_the_order_of_their_lines_and_columns_are_never_zero() {
    let p = Project::new();
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: a, hook: post_session, command: 'true'}\n",
    );
    // The unknown key at the end is found first (the file's own keys are read before its
    // hooks); the duplicate name has a line and no column.
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: a, hook: post_session, command: 'true', tiemout: 3}\nfoo: 1\n",
    );
    let out = p.run(&["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let yours = p.home.path().join(".infer/hooks.yaml");
    let yours = yours.display();
    assert_eq!(
        stderr(&out),
        format!("warning: hook `a` has the name of your own hook at {yours}:3, which runs instead: the project's does not run\n  --> .infer/hooks.yaml:3\n  = help: rename it in the project's hooks.yaml, or remove yours from {yours}\n\n\
         warning: unknown key `tiemout` in a hook is ignored\n  --> .infer/hooks.yaml:3:52\n  |\n3 |   - {{name: a, hook: post_session, command: 'true', tiemout: 3}}\n  |                                                    ^^^^^^^\n  = help: did you mean `timeout`? (known keys: name, hook, command, timeout, max_output, matcher, on, include_sub_agents, on_error, parallel, description)\n\n\
         warning: unknown key `foo` in hooks.yaml is ignored\n  --> .infer/hooks.yaml:4:1\n  |\n4 | foo: 1\n  | ^^^\n  = help: known keys: enabled, hooks, max_output, grace, parallel, max_continues, gate_shell_tools, shell_tools, fail_closed, env\n\n")
    );
}

/// `sandbox.walk`: a depth out of range and a skip entry that is not one directory name, each
/// an error at its place with what to write instead (the user's own file: a project's is
/// ignored, `places_below.rs`).
#[test]
fn a_bad_walk_setting_names_its_place_and_the_range() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "sandbox:\n  walk:\n    depth: 0\n    skip: [vendor, web/x]\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let home = p.home.path().join(".infer/config.yaml");
    assert!(
        err.contains(&format!(
            "error: `sandbox.walk.depth` 0 is out of range\n  --> {}:3:12\n  |\n3 |     depth: 0\n  |            ^\n  = help: use 1 to 8 (default 3)\n",
            home.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "error: `sandbox.walk.skip` entry `web/x` is not a directory name\n  --> {}:4:20\n",
            home.display()
        )),
        "{err}"
    );
    assert!(
        err.ends_with("hookd: the configuration has 2 errors\n"),
        "{err}"
    );
}
