//! Trust (issue 11, items 4 and 5): the fingerprint covers the file the kernel will run, not
//! the one a lexical reading of the command names, and the review a person trusts cannot be
//! forged by control characters in a project's files.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use crate::support::{json_lines, stderr, stdout, Project};

fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A project with one post_session hook running `command`, admitted by an exact entry.
fn project_running(command: &str) -> Project {
    let p = Project::new();
    let entry = regex::escape(command);
    p.write(
        "config.yaml",
        &format!("tools:\n  bash:\n    mode:\n      all:\n        allow: ['{entry}']\n"),
    );
    p.write(
        "hooks.yaml",
        &format!(
            "enabled: true\nhooks:\n  - {{name: code, hook: post_session, command: '{command}'}}\n"
        ),
    );
    p
}

fn trust(p: &Project) -> String {
    let out = p.cmd_untrusted(&["trust"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

/// The events of one untrusted-operator dispatch at post_session.
fn dispatch(p: &Project) -> Vec<serde_json::Value> {
    let out = p
        .cmd_untrusted(&["dispatch", "post_session", "--events", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&stderr(&out))
}

#[test]
fn the_fingerprint_covers_the_file_a_symlink_then_dotdot_really_runs() {
    // `lnk` -> `sub/inner`: the kernel takes `..` from the symlink's target, so
    // `./lnk/../run.sh` is `sub/run.sh`, while a lexical reading says `./run.sh`.
    let p = project_running("./lnk/../run.sh");
    script(&p.path().join("run.sh"), "touch ran-top");
    script(&p.path().join("sub/run.sh"), "touch ran-sub");
    std::fs::create_dir_all(p.path().join("sub/inner")).unwrap();
    symlink("sub/inner", p.path().join("lnk")).unwrap();

    let review = trust(&p);
    assert!(
        review.contains(
            "over .infer/config.yaml, .infer/hooks.yaml, .infer/reminders.yaml, sub/run.sh\n"
        ),
        "{review}"
    );
    assert!(
        review.contains("\n      code fingerprinted: sub/run.sh\n"),
        "{review}"
    );
    let ev = dispatch(&p);
    assert_eq!(ev[0]["type"], "hook_command", "{ev:?}");
    assert!(p.path().join("ran-sub").exists(), "sub/run.sh is what runs");
    assert!(!p.path().join("ran-top").exists());

    // The attack: edit the file that really runs, after trust.
    script(&p.path().join("sub/run.sh"), "touch worse");
    let ev = dispatch(&p);
    assert_eq!(ev[0]["type"], "hook_command_skipped", "{ev:?}");
    assert_eq!(ev[0]["reason"], "untrusted");
    assert!(!p.path().join("worse").exists());
}

#[test]
fn retargeting_a_symlink_after_trust_untrusts_the_project() {
    let p = project_running("./lnk/run.sh");
    script(&p.path().join("good/run.sh"), "touch ran-good");
    script(&p.path().join("evil/run.sh"), "touch ran-evil");
    symlink("good", p.path().join("lnk")).unwrap();
    trust(&p);
    std::fs::remove_file(p.path().join("lnk")).unwrap();
    symlink("evil", p.path().join("lnk")).unwrap();
    let ev = dispatch(&p);
    assert_eq!(ev[0]["reason"], "untrusted", "{ev:?}");
    assert!(!p.path().join("ran-evil").exists());
}

#[test]
fn a_symlink_retargeted_between_load_and_run_is_caught_by_the_recheck() {
    // A daemon loads the configuration once: the check right before the hook runs must resolve
    // the command again, as the kernel is about to.
    let p = project_running("./lnk/run.sh");
    script(&p.path().join("good/run.sh"), "touch ran-good");
    script(&p.path().join("evil/run.sh"), "touch ran-evil");
    symlink("good", p.path().join("lnk")).unwrap();
    trust(&p);
    let opts = hookd::LoadOptions {
        config_dir: None,
        project_dir: p.path().to_path_buf(),
        home_dir: Some(p.home.path().to_path_buf()),
        env: Default::default(),
        trust_project: false,
        trust_file: Some(p.home.path().join(".config/hookd/trust.json")),
        ..Default::default()
    };
    let config = hookd::load(&opts).unwrap();
    assert!(matches!(
        config.trust,
        hookd::config::ProjectTrust::Trusted { .. }
    ));
    let engine = hookd::Engine::builder(config).build();
    std::fs::remove_file(p.path().join("lnk")).unwrap();
    symlink("evil", p.path().join("lnk")).unwrap();
    let ctx = hookd::Context::from_json("{}").unwrap();
    let outcome = engine
        .dispatch(hookd::HookPoint::PostSession, &ctx)
        .unwrap();
    assert_eq!(outcome.commands[0].status, hookd::CommandStatus::Skipped);
    assert!(!p.path().join("ran-evil").exists());
}

#[test]
fn editing_a_python_module_run_with_dash_m_untrusts_the_project() {
    let p = project_running("python3 -m tools.fmt");
    std::fs::create_dir_all(p.path().join("tools")).unwrap();
    std::fs::write(p.path().join("tools/__init__.py"), "").unwrap();
    std::fs::write(
        p.path().join("tools/fmt.py"),
        "open('ran-fmt', 'w').close()\n",
    )
    .unwrap();
    let review = trust(&p);
    assert!(
        review.contains("\n      code fingerprinted: tools/__init__.py, tools/fmt.py, tools/fmt/__init__.py, tools/fmt/__main__.py\n"),
        "{review}"
    );
    dispatch(&p);
    assert!(p.path().join("ran-fmt").exists());
    std::fs::write(
        p.path().join("tools/fmt.py"),
        "open('worse', 'w').close()\n",
    )
    .unwrap();
    let ev = dispatch(&p);
    assert_eq!(ev[0]["reason"], "untrusted", "{ev:?}");
    assert!(!p.path().join("worse").exists());
}

#[test]
fn editing_a_script_run_by_env_bash_untrusts_the_project() {
    let p = project_running("env -u DEBUG bash scripts/x.sh");
    std::fs::create_dir_all(p.path().join("scripts")).unwrap();
    std::fs::write(p.path().join("scripts/x.sh"), "touch ran-x\n").unwrap();
    trust(&p);
    dispatch(&p);
    assert!(p.path().join("ran-x").exists());
    std::fs::write(p.path().join("scripts/x.sh"), "touch worse\n").unwrap();
    let ev = dispatch(&p);
    assert_eq!(ev[0]["reason"], "untrusted", "{ev:?}");
    assert!(!p.path().join("worse").exists());
}

#[test]
fn the_review_says_which_hooks_code_the_fingerprint_cannot_see() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: n, hook: post_session, command: 'node ./lib/main'}\n  - {name: s, hook: post_session, command: \"env -S 'bash x.sh'\"}\n  - {name: g, hook: post_session, command: 'git status'}\n",
    );
    std::fs::create_dir_all(p.path().join("lib")).unwrap();
    std::fs::write(p.path().join("lib/main.js"), "").unwrap();
    let review = trust(&p);
    assert!(review.contains("`node ./lib/main`  denied (not_allowlisted) in mode standard\n      code NOT COVERED by the fingerprint: `node ./lib/main`: `./lib/main` is not an existing file, so node may run another one (an extension, an index or main file, a module) that the fingerprint does not cover; review what it runs yourself\n"), "{review}");
    assert!(review.contains("\n      code NOT COVERED by the fingerprint: `env -S` runs a command hookd does not parse; review what it runs yourself\n"), "{review}");
    assert!(
        review.contains("`git status`  denied (not_allowlisted) in mode standard\n  allow 0"),
        "a program from PATH gets no line: {review}"
    );
    let out = p.cmd_untrusted(&["check"]).output().unwrap();
    assert!(stdout(&out).contains("hint: to allow exactly this command, add '^node \\./lib/main$' to tools.bash.mode.standard.allow (or tools.bash.mode.all.allow) in .infer/config.yaml, or append it with INFER_TOOLS_BASH_ALLOW_APPEND\n    code NOT COVERED by the fingerprint: `node ./lib/main`"), "{}", stdout(&out));
}

/// Bytes a terminal acts on: a review holding any of them could be repainted.
fn assert_no_raw_controls(what: &str, text: &str) {
    for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}', '\u{7f}', '\u{9b}'] {
        assert!(!text.contains(c), "{what} prints a raw {c:?}: {text:?}");
    }
}

/// A hook whose name erases its line and paints another, through YAML double-quoted escapes.
const FORGED: &str = r#""real\e[2K\rfake\u202Eeman\u200B""#;
const SHOWN: &str = r"real\x1b[2K\rfake\u{202e}eman\u{200b}";

#[test]
fn control_characters_in_names_are_shown_escaped_everywhere() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        &format!("enabled: true\nhooks:\n  - name: {FORGED}\n    hook: post_session\n    command: \"echo \\e]0;x\"\n"),
    );
    p.write(
        "reminders.yaml",
        &format!("enabled: true\nreminders:\n  - {{name: {FORGED}, hook: pre_stream, text: hi}}\n"),
    );

    let out = p.cmd_untrusted(&["check"]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_no_raw_controls("check", &text);
    assert_no_raw_controls("check's stderr", &stderr(&out));
    assert!(
        text.contains(&format!(
            "\n  hook {SHOWN} `echo \\x1b]0;x` (timeout 30s, .infer/hooks.yaml:"
        )),
        "{text}"
    );

    let review = trust(&p);
    assert_no_raw_controls("trust", &review);
    assert!(
        review.contains(&format!(
            "\n    post_session     {SHOWN} `echo \\x1b]0;x`  denied (control_character) in mode standard\n"
        )),
        "{review}"
    );
    assert!(
        review.contains(&format!(
            "\n  inject 1 reminder into the model's context: {SHOWN}\n"
        )),
        "{review}"
    );
    let out = p.cmd_untrusted(&["check"]).output().unwrap();
    assert!(
        stdout(&out).contains(&format!("\n  reminder {SHOWN} (trigger ")),
        "{}",
        stdout(&out)
    );

    // A project directory named to repaint `trust --list`.
    let odd = p.path().join("x\u{1b}[1Ay\u{202e}");
    std::fs::create_dir_all(odd.join(".infer")).unwrap();
    std::fs::write(odd.join(".infer/hooks.yaml"), "enabled: true\nhooks: []\n").unwrap();
    let out = p
        .cmd_untrusted(&["trust"])
        .current_dir(&odd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_no_raw_controls("trust in an odd directory", &stdout(&out));
    let out = p.cmd_untrusted(&["trust", "--list"]).output().unwrap();
    let list = stdout(&out);
    assert_no_raw_controls("trust --list", &list);
    assert!(list.contains("/x\\x1b[1Ay\\u{202e}\n  trusted "), "{list}");

    // The events of a dispatch, read back for a person.
    let log = p.path().join("events.jsonl");
    let out = p
        .cmd_untrusted(&[
            "dispatch",
            "post_session",
            "--events",
            log.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = p
        .cmd_untrusted(&["events", "--file", log.to_str().unwrap()])
        .output()
        .unwrap();
    let events = stdout(&out);
    assert_no_raw_controls("events", &events);
    assert!(
        events.contains(&format!(
            " post_session     hook_command_skipped {SHOWN} skipped: control_character `echo \\x1b]0;x`\n"
        )),
        "{events}"
    );
    // The JSON form stays JSON: serde escapes the controls.
    let out = p
        .cmd_untrusted(&["events", "--file", log.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains(r#""name":"real\u001b[2K\rfake"#),
        "{}",
        stdout(&out)
    );
}
