//! Trust covers the file that will really run: paths resolved as execve resolves them, modules
//! run with `python3 -m`, programs behind `env`; what it cannot cover, the review says.

use crate::support::{json_lines, stderr, stdout, Project};

fn executable(p: &Project, rel: &str, body: &str) {
    let path = p.path().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn project(command: &str, entry: &str) -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        &format!("tools: {{bash: {{mode: {{all: {{allow: ['{entry}']}}}}}}}}\n"),
    );
    p.write(
        "hooks.yaml",
        &format!("enabled: true\nhooks: [{{name: h, hook: post_session, command: '{command}'}}]\n"),
    );
    p
}

/// Dispatch post_session as a user who trusted the project with `hookd trust`.
fn dispatch(p: &Project) -> Vec<serde_json::Value> {
    let out = p
        .cmd_untrusted(&["dispatch", "post_session", "--events", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&stderr(&out))
}

fn trust(p: &Project) -> String {
    let out = p.cmd_untrusted(&["trust"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn the_file_execve_runs_through_a_symlink_and_dotdot_is_the_one_hashed() {
    // `lnk` points into sub/deeper, so `./lnk/../run.sh` is sub/run.sh to the kernel, while a
    // lexical tidy-up says ./run.sh.
    let p = project("./lnk/../run.sh", "^\\./lnk/\\.\\./run\\.sh$");
    std::fs::create_dir_all(p.path().join("sub/deeper")).unwrap();
    std::os::unix::fs::symlink("sub/deeper", p.path().join("lnk")).unwrap();
    executable(&p, "sub/run.sh", "#!/bin/sh\ntouch reviewed.marker\n");
    executable(&p, "run.sh", "#!/bin/sh\ntouch decoy.marker\n");
    trust(&p);
    let ev = dispatch(&p);
    assert_eq!(ev[0]["type"], "hook_command", "{ev:?}");
    assert!(p.path().join("reviewed.marker").exists());
    assert!(!p.path().join("decoy.marker").exists());
    // The attack: edit the file that really runs after the review.
    executable(&p, "sub/run.sh", "#!/bin/sh\ntouch evil.marker\n");
    let ev = dispatch(&p);
    assert_eq!(ev[0]["type"], "hook_command_skipped", "{ev:?}");
    assert_eq!(ev[0]["reason"], "untrusted");
    assert!(!p.path().join("evil.marker").exists());
}

#[test]
fn a_python_module_and_a_script_behind_env_are_covered() {
    for (command, entry, file) in [
        (
            "python3 -m pkg.tool",
            "^python3 -m pkg\\.tool$",
            "pkg/tool.py",
        ),
        (
            "env -i bash scripts/x.sh",
            "^env -i bash scripts/x\\.sh$",
            "scripts/x.sh",
        ),
    ] {
        let p = project(command, entry);
        executable(&p, file, "import os\nopen('reviewed.marker', 'w')\n");
        if file.ends_with(".sh") {
            executable(&p, file, "touch reviewed.marker\n");
        }
        let review = trust(&p);
        assert!(review.contains(file), "{command}: {review}");
        assert!(!review.contains("NOT COVERED"), "{review}");
        executable(&p, file, "import os\nopen('evil.marker', 'w')\n");
        if file.ends_with(".sh") {
            executable(&p, file, "touch evil.marker\n");
        }
        let ev = dispatch(&p);
        assert_eq!(ev[0]["reason"], "untrusted", "{command}: {ev:?}");
        assert!(!p.path().join("evil.marker").exists(), "{command}");
    }
}

#[test]
fn the_review_says_when_a_hooks_code_is_not_covered() {
    let p = project("make fmt", "^make fmt$");
    std::fs::write(p.path().join("Makefile"), "fmt:\n\ttrue\n").unwrap();
    let review = trust(&p);
    assert!(
        review.contains(
            "    post_session     h              `make fmt`  allowed by `^make fmt$` (.infer/config.yaml:1)\n      NOT COVERED: `make` runs code from the project's build files (Makefile, package.json, …), which the fingerprint does not hash; review that code yourself, and re-run `hookd trust` after it changes\n"
        ),
        "{review}"
    );
}
