//! Gate holes found from outside: Unicode format characters and named-descriptor redirections.

use crate::support::{json_lines, stdout, Project};

fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo( .*)?$', '^\\./fmt.*\\.sh$']}}}}\n",
    );
    p
}

fn verdict(p: &Project, command: &str) -> serde_json::Value {
    let out = p.run(&["allow", "--json", "--", command]);
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn unicode_format_characters_are_refused_everywhere() {
    let p = project();
    for c in [
        '\u{1D173}',
        '\u{180E}',
        '\u{0600}',
        '\u{13430}',
        '\u{2066}',
        '\u{00AD}',
        '\u{061C}',
        '\u{FFF9}',
        '\u{E0001}',
        '\u{E0041}',
        '\u{200D}',
        '\u{2028}',
        '\u{E000}',
        '\u{10FFFD}',
    ] {
        for command in [
            format!("./fmt{c}.sh"),
            format!("echo '{c}'"),
            format!("echo \"a{c}\""),
        ] {
            let v = verdict(&p, &command);
            assert_eq!(v["allowed"], false, "{command:?}");
            assert_eq!(v["reason"], "control_character", "{command:?}: {v}");
        }
    }
    // Letters of other scripts are not hidden characters.
    for command in ["echo héllo", "echo 日本語", "echo Ωmega"] {
        assert_eq!(verdict(&p, command)["allowed"], true, "{command}");
    }
}

#[test]
fn a_look_alike_script_name_never_runs_instead_of_the_reviewed_one() {
    let p = project();
    let fake = format!("./fmt{}.sh", '\u{1D173}');
    for (name, marker) in [("fmt.sh", "reviewed"), (&fake[2..], "lookalike")] {
        let path = p.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {marker}.marker\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    p.write(
        "hooks.yaml",
        &format!("enabled: true\nhooks: [{{name: fmt, hook: post_session, command: '{fake}'}}]\n"),
    );
    let out = p.run(&["dispatch", "post_session", "--events", "-"]);
    assert_eq!(out.status.code(), Some(0));
    let events = json_lines(&crate::support::stderr(&out));
    assert_eq!(events[0]["type"], "hook_command_skipped");
    assert_eq!(events[0]["reason"], "control_character");
    assert!(!p.path().join("lookalike.marker").exists());
    assert!(!p.path().join("reviewed.marker").exists());
}

#[test]
fn named_descriptor_redirections_are_refused() {
    let p = project();
    for command in [
        "echo {fd}>/dev/null",
        "echo {x}>&2",
        "echo {fd}>>/dev/null",
        "echo {a}<f",
        "echo hi {fd_2}>/dev/null",
    ] {
        let v = verdict(&p, command);
        assert_eq!(v["allowed"], false, "{command}");
        assert_eq!(v["reason"], "redirection", "{command}: {v}");
    }
    let v = verdict(&p, "echo {fd}>/dev/null");
    assert_eq!(
        v["detail"]
            .as_str()
            .or(v["message"].as_str())
            .unwrap_or_default(),
        "`{fd}>` is a named-descriptor redirection: bash would assign a variable",
        "{v}"
    );
    // Not a named descriptor in bash: a word that only contains braces, or a digit name.
    for command in ["echo a{fd}>/dev/null", "echo {fd}", "echo {1}>/dev/null"] {
        assert_eq!(verdict(&p, command)["allowed"], true, "{command}");
    }
}
