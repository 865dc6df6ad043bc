//! A user's hook that runs a program from the project runs the project's code (issue 31):
//! `./fmt.sh` and `sh scripts/lint.sh` in `~/.infer/hooks.yaml`, meant for the user's own
//! repositories, run whatever a freshly cloned repository put under those names. The project's
//! trust decides: skipped until `hookd trust`, run after it, skipped again when a file changes.

use crate::support::{json_lines, stderr, stdout, with_stdin, Project};

/// The user's configuration, and an untrusted repository (no `.infer/` of its own) whose
/// `fmt.sh`, `scripts/lint.sh` and `black/` leave markers when run.
fn setup() -> Project {
    let p = Project::new();
    std::fs::remove_dir_all(p.infer()).unwrap();
    std::fs::create_dir_all(p.path().join(".git")).unwrap();
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./fmt\\.sh$', '^sh scripts/lint\\.sh$', '^python3 -m black$', '^echo user-ok$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: fmt, hook: post_session, command: ./fmt.sh}\n  - {name: lint, hook: post_session, command: sh scripts/lint.sh}\n  - {name: black, hook: post_session, command: python3 -m black}\n  - {name: plain, hook: post_session, command: echo user-ok}\n",
    );
    plant(&p, "fmt.sh", "fmt");
    std::fs::create_dir_all(p.path().join("scripts")).unwrap();
    plant(&p, "scripts/lint.sh", "lint");
    std::fs::create_dir_all(p.path().join("black")).unwrap();
    std::fs::write(
        p.path().join("black/__main__.py"),
        "open('black.marker', 'w').write('ran')\n",
    )
    .unwrap();
    p
}

fn plant(p: &Project, file: &str, marker: &str) {
    let path = p.path().join(file);
    std::fs::write(&path, format!("#!/bin/sh\ntouch {marker}.marker\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The markers left so far, removed.
fn markers(p: &Project) -> Vec<String> {
    crate::support::take_markers(p.path())
}

/// `hookd dispatch post_session` as the user (who has not trusted the project): the events.
fn dispatch(p: &Project) -> Vec<serde_json::Value> {
    let mut cmd = p.cmd_untrusted(&["dispatch", "post_session", "--no-daemon", "--events", "-"]);
    cmd.env("PATH", std::env::var_os("PATH").unwrap());
    let out = with_stdin(cmd, "{\"session_id\": \"s-code\"}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&stderr(&out))
}

fn skipped(events: &[serde_json::Value]) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["type"] == "hook_command_skipped")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                format!(
                    "{} | {}",
                    e["detail"].as_str().unwrap(),
                    e["hint"].as_str().unwrap()
                ),
            )
        })
        .collect()
}

#[test]
fn the_users_hooks_run_a_projects_files_only_as_the_projects_trust_covers_them() {
    let p = setup();
    // The attack itself: run as the hooks would, each program leaves its marker.
    for command in ["./fmt.sh", "sh scripts/lint.sh", "python3 -m black"] {
        let ok = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(p.path())
            .status()
            .unwrap();
        assert!(ok.success(), "{command}");
    }
    assert_eq!(markers(&p), ["black", "fmt", "lint"]);

    // Untrusted: none of the project's code runs; the user's own command does.
    let events = dispatch(&p);
    assert_eq!(markers(&p), Vec::<String>::new());
    let skips = skipped(&events);
    let names: Vec<&str> = skips.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fmt", "lint", "black"]);
    let project = p.path().canonicalize().unwrap();
    assert_eq!(
        skips[0].1,
        format!(
            "runs the project's fmt.sh: code in the project runs only when the project is trusted, and it is not | review fmt.sh, then run `hookd trust` in {}",
            p.path().display()
        )
    );
    assert!(
        skips[2]
            .1
            .starts_with("runs the project's black/__main__.py:"),
        "{}",
        skips[2].1
    );
    for e in events
        .iter()
        .filter(|e| e["type"] == "hook_command_skipped")
    {
        assert_eq!(e["reason"], "untrusted");
    }
    assert!(events
        .iter()
        .any(|e| e["type"] == "hook_command" && e["name"] == "plain"));

    // hookd check says so, on each hook's own line.
    let check = p.cmd_untrusted(&["check"]).output().unwrap();
    let text = stdout(&check);
    assert!(
        text.contains("hook fmt `./fmt.sh`")
            && text.contains("runs the project's fmt.sh: needs `hookd trust` (skipped until then)")
            && text.contains("runs the project's scripts/lint.sh: needs `hookd trust`"),
        "{text}"
    );
    assert!(text.contains("project trust: UNTRUSTED"), "{text}");
    let strict = p.cmd_untrusted(&["check", "--strict"]).output().unwrap();
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(
        stderr(&strict).contains("hook fmt (")
            && stderr(&strict).contains("would be skipped: it runs the project's code"),
        "{}",
        stderr(&strict)
    );

    // Trust: the review lists the programs, then they run.
    let trust = p.cmd_untrusted(&["trust"]).output().unwrap();
    let review = stdout(&trust);
    assert_eq!(trust.status.code(), Some(0), "{review}{}", stderr(&trust));
    assert!(
        review.contains("be run by your own hook fmt `./fmt.sh`")
            && review.contains(": scripts/lint.sh\n"),
        "{review}"
    );
    assert!(review.contains("fmt.sh"), "{review}");
    let _ = dispatch(&p);
    assert_eq!(markers(&p), ["black", "fmt", "lint"]);
    let check = p.cmd_untrusted(&["check"]).output().unwrap();
    assert!(
        stdout(&check).contains("runs the project's fmt.sh: covered by the project's trust"),
        "{}",
        stdout(&check)
    );

    // A byte changes: untrusted again, nothing of the project's runs.
    std::fs::write(
        p.path().join("scripts/lint.sh"),
        "#!/bin/sh\ntouch lint.marker\ntouch evil.marker\n",
    )
    .unwrap();
    let events = dispatch(&p);
    assert_eq!(markers(&p), Vec::<String>::new());
    assert_eq!(skipped(&events).len(), 3, "{events:?}");
    let _ = project;
}

#[test]
fn a_symlink_or_a_path_entry_into_the_project_is_the_projects_code_and_path_programs_are_not() {
    let p = setup();
    // A program name on PATH: outside the project it is the user's.
    p.write_home(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sh -c true$', '^tool$', '^\\./link\\.sh$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: sh, hook: post_session, command: 'sh -c true'}\n  - {name: tool, hook: post_session, command: tool}\n  - {name: link, hook: post_session, command: ./link.sh}\n",
    );
    // `tool` is found on a PATH entry inside the project (node_modules/.bin style).
    std::fs::create_dir_all(p.path().join("bin")).unwrap();
    plant(&p, "bin/tool", "tool");
    // `link.sh` is a symlink the repository made to a file outside it.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("real.sh");
    std::fs::write(
        &target,
        format!("#!/bin/sh\ntouch {}/link.marker\n", p.path().display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&target, p.path().join("link.sh")).unwrap();
    let mut cmd = p.cmd_untrusted(&["dispatch", "post_session", "--no-daemon", "--events", "-"]);
    let path = format!(
        "{}:{}",
        p.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    cmd.env("PATH", path);
    let out = with_stdin(cmd, "{\"session_id\": \"s\"}");
    let events = json_lines(&stderr(&out));
    assert_eq!(markers(&p), Vec::<String>::new(), "{}", stderr(&out));
    let names: Vec<String> = skipped(&events).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["tool", "link"]);
    assert!(events
        .iter()
        .any(|e| e["type"] == "hook_command" && e["name"] == "sh"));
}
