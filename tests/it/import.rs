//! `hookd import claude-code`: Claude Code's Bash permission rules printed as allow entries,
//! and the round trip a user makes: paste them into config.yaml, then ask the gate.

use crate::support::{stderr, stdout, Project};

const SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Bash(git diff *)", "Bash(ls)", "Bash(git:*)", "Bash",
              "Read(./src/**)", "Bash(npm test && npm run lint)", "Bash(cargo * --release)"],
    "deny": ["Bash(git push *)", "Bash(rm -rf:*)", "Read(./.env)"],
    "ask": ["Bash(git clean *)"]
  }
}"#;

fn project() -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".git")).unwrap();
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(p.path().join(".claude/settings.json"), SETTINGS).unwrap();
    p
}

#[test]
fn every_rule_form_is_printed_or_explained() {
    let p = project();
    let out = p.run(&["import", "claude-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let source = p.path().join(".claude/settings.json");
    assert_eq!(
        stdout(&out),
        format!(
            "# hookd allow entries for Claude Code's permission rules in {}\n\
             # (printed only: review them, then add what you want to your config.yaml).\n\
             # With gate_shell_tools on they judge the model's shell commands, each part of a\n\
             # compound command on its own.\n\
             tools:\n  bash:\n    mode:\n      all:\n        allow:\n\
             \x20         - '^npm run test( .*)?$'  # Bash(npm run test:*)\n\
             \x20         - '^git diff( .*)?$'  # Bash(git diff *)\n\
             \x20         - '^ls$'  # Bash(ls)\n\
             \x20         - '^git( .*)?$'  # Bash(git:*)\n\
             \x20         - '^cargo .* --release$'  # Bash(cargo * --release)\n\
             # warnings:\n\
             #   '^git( .*)?$' (Bash(git:*)) is UNRESTRICTED: it admits `git push --force`; prefer the exact commands\n\
             # not translated:\n\
             #   allow Bash: any command: its equivalent `.*` admits everything (UNRESTRICTED); list the commands instead\n\
             #   allow Read(./src/**): a `Read` rule, not a shell command: hookd gates shell commands (and protects its own files with gate_shell_tools)\n\
             #   allow Bash(npm test && npm run lint): a compound command: hookd allows each simple command on its own; import or write one rule per part\n\
             #   deny Bash(git push *): hookd has no deny list, and `^git( .*)?$` above admits `git push`, which this rule refuses in Claude Code: narrow it\n\
             #   deny Bash(rm -rf:*): hookd has no deny list: what no entry admits is refused, and no entry above admits a command this rule refuses\n\
             #   deny Read(./.env): a `Read` rule, not a shell command: hookd gates shell commands (and protects its own files with gate_shell_tools)\n\
             #   ask Bash(git clean *): hookd never asks: a command is admitted or refused; allow it or leave it out\n",
            source.display()
        )
    );
    // Nothing was written anywhere: the project's .infer/ is as it was.
    assert_eq!(std::fs::read_dir(p.infer()).unwrap().count(), 0);
}

#[test]
fn the_printed_entries_admit_what_the_rules_admit_and_refuse_their_neighbours() {
    let p = project();
    let yaml = stdout(&p.run(&["import", "claude-code"]));
    p.write("config.yaml", &yaml);
    let verdict = |cmd: &str| p.run(&["allow", "--model", "--", cmd]).status.code();
    for admitted in [
        "npm run test",
        "npm run test -- --watch",
        "git diff",
        "git diff --stat HEAD~1",
        "ls",
        "cargo build --release",
        "git diff && ls",
    ] {
        assert_eq!(verdict(admitted), Some(0), "{admitted}");
    }
    for refused in [
        "npm run testx",
        "npm run lint",
        "gitk",
        "ls -la",
        "cargo build",
        "rm -rf target",
        "git diff && rm x",
    ] {
        assert_eq!(verdict(refused), Some(1), "{refused}");
    }
}

#[test]
fn bad_input_is_named() {
    let p = Project::new();
    let out = p.run(&["import", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: no Claude Code settings in ")
            && stderr(&out).ends_with(
                "\n  = help: name the file: `hookd import claude-code ~/.claude/settings.json`\n"
            ),
        "{}",
        stderr(&out)
    );
    let bad = p.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"permissions\": [,\n").unwrap();
    let out = p.run(&["import", "claude-code", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {0} is not JSON: expected value at line 2 column 19\n  --> {0}:2:19\n",
            bad.display()
        )
    );
}

#[test]
fn json_output() {
    let p = project();
    let out = p.run(&["import", "claude-code", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["entries"][0],
        serde_json::json!({"entry": "^npm run test( .*)?$", "rule": "Bash(npm run test:*)", "unrestricted": null})
    );
    assert_eq!(v["entries"][3]["unrestricted"], "git push --force");
    assert_eq!(v["untranslated"].as_array().unwrap().len(), 7);
}

/// Issue 32, item 7: a deny rule is "covered" only when no printed entry admits any command it
/// refuses, decided over every command both match, not one sample: `^git .* main$` admits
/// `git push --force origin main`, which `Bash(git push:*)` refuses; `curl http://github.com/:*`
/// admits what `Bash(curl:*)` refuses.
#[test]
fn a_deny_rule_is_flagged_when_any_command_matches_both() {
    let p = project();
    std::fs::write(
        p.path().join(".claude/settings.json"),
        r#"{"permissions": {
            "allow": ["Bash(git * main)", "Bash(curl http://github.com/:*)", "Bash(ls:*)"],
            "deny": ["Bash(git push:*)", "Bash(curl:*)", "Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let out = stdout(&p.run(&["import", "claude-code"]));
    for line in [
        "#   deny Bash(git push:*): hookd has no deny list, and `^git .* main$` above admits `git push main`, which this rule refuses in Claude Code: narrow it\n",
        "#   deny Bash(curl:*): hookd has no deny list, and `^curl http://github\\.com/( .*)?$` above admits `curl http://github.com/`, which this rule refuses in Claude Code: narrow it\n",
        "#   deny Bash(rm:*): hookd has no deny list: what no entry admits is refused, and no entry above admits a command this rule refuses\n",
    ] {
        assert!(out.contains(line), "{line}\nnot in\n{out}");
    }
    // What was flagged is real: pasted, the entry admits the push the rule refused.
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow: ['^git .* main$']\n",
    );
    let o = p.run(&["allow", "--model", "--", "git push --force origin main"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}
