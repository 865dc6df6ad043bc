//! Issue 11, the gate and the model, each attack performed for real: Unicode format characters
//! and `{name}>` redirections never pass the gate, an entry that admits a dangerous command is
//! reported naming it, the model is told why a call was refused but never how to allow it,
//! and with `gate_shell_tools` the model cannot write hookd's own files.

use std::process::Command;

use crate::support::{json_lines, stderr, stdout, Project};
use hookd::config::{AllowEntry, AllowLists, Mode, Origin, Source};
use hookd::{DenyReason as R, Gate, Verdict};
use serde_json::{json, Value};

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

fn open_gate() -> Gate {
    let e = AllowEntry {
        pattern: ".*".into(),
        list: hookd::config::Mode::All,
        origin: Origin {
            file: "t".into(),
            line: 1,
            source: Source::Embedded,
        },
    };
    Gate::new(&AllowLists::from_entries([e]), "t")
}

/// Format characters (Cf) from every block the issue named, default-ignorables and non-ASCII
/// separators: refused wherever they stand, quoted or not, as `control_character`.
#[test]
fn format_characters_are_refused_wherever_they_stand() {
    let gate = open_gate();
    let chars = [
        '\u{1D173}', // musical symbol begin beam: invisible
        '\u{1D17A}',
        '\u{180E}', // Mongolian vowel separator
        '\u{0600}', // Arabic number sign
        '\u{0605}',
        '\u{06DD}',
        '\u{070F}',
        '\u{08E2}',
        '\u{13430}', // Egyptian hieroglyph joiner
        '\u{1343F}',
        '\u{2066}', // left-to-right isolate
        '\u{2069}',
        '\u{00AD}', // soft hyphen
        '\u{061C}', // Arabic letter mark
        '\u{FFF9}', // interlinear annotation
        '\u{FFFA}',
        '\u{FFFB}',
        '\u{110BD}',
        '\u{1BCA0}', // shorthand format controls
        '\u{E0001}', // language tag
        '\u{E0020}', // tag space
        '\u{E007F}', // cancel tag
        '\u{E0100}', // variation selector 17 (default-ignorable)
        '\u{1680}',  // Ogham space mark (a separator)
        '\u{2800}',  // braille blank, refused before and still
        '\u{200B}',
        '\u{FEFF}',
    ];
    for c in chars {
        for cmd in [
            format!("./fmt{c}.sh"),
            format!("echo '{c}'"),
            format!("echo \"a{c}b\""),
            format!("{c}echo x"),
            format!("echo x{c}"),
        ] {
            let Verdict::Denied(d) = gate.verdict(&cmd, Mode::Standard) else {
                panic!("U+{:04X} admitted in {cmd:?}", c as u32)
            };
            assert_eq!(d.reason, R::ControlCharacter, "{cmd:?}: {d:?}");
        }
    }
    // Letters, marks and symbols people write stay admitted, exactly.
    for (cmd, argv) in [
        ("echo é ü 日本 Ω", vec!["echo", "é", "ü", "日本", "Ω"]),
        ("echo 'ñ 🙂'", vec!["echo", "ñ 🙂"]),
        ("echo ال", vec!["echo", "ال"]),
    ] {
        let Verdict::Allowed(a) = gate.verdict(cmd, Mode::Standard) else {
            panic!("{cmd} denied")
        };
        assert_eq!(a.argv, argv);
    }
}

/// Not a sample: every code point of category Cf (and every separator but the ASCII space),
/// by the Unicode tables of the regex crate, is forbidden.
#[test]
fn every_format_character_is_forbidden() {
    let class = regex::Regex::new(r"\A[\p{Cf}\p{Z}]\z").unwrap();
    let mut buf = [0u8; 4];
    let mut n = 0;
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        if c != ' ' && class.is_match(c.encode_utf8(&mut buf)) {
            assert!(
                hookd::gate::forbidden_char(c),
                "U+{:04X} is not forbidden",
                c as u32
            );
            n += 1;
        }
    }
    assert!(n > 150, "only {n} code points checked");
}

/// The argv bash builds for `words` after a printing function (what bash would really run).
fn bash_argv(words: &str) -> Vec<String> {
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-c"])
        .arg(format!("__p() {{ printf '%s\\0' \"$@\"; }}\n__p {words}"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(String::from)
        .collect()
}

fn allow_everything(p: &Project) {
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./fmt.*\\.sh$', '^cmd .*']}}}}\n",
    );
}

#[test]
fn hookd_allow_refuses_format_characters_and_named_descriptors() {
    let p = Project::new();
    allow_everything(&p);
    let out = p.run(&["allow", "--", "./fmt\u{1D173}.sh"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "denied: control_character: character U+1D173 at position 6 is a control or invisible character\n  \
         hint: remove the character; control, format and invisible characters are never accepted, so what is reviewed is what runs\n"
    );
    for (cmd, named) in [
        ("cmd {fd}>/dev/null", "{fd}>"),
        ("cmd {x}>&2", "{x}>"),
        ("cmd {a}<file", "{a}<"),
    ] {
        let out = p.run(&["allow", "--", cmd]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert_eq!(
            stdout(&out),
            format!(
                "denied: redirection: `{named}` is a named-descriptor redirection: bash would assign a variable\n  \
                 hint: output is captured for the event anyway; only `2>&1`, `>/dev/null`, `2>/dev/null` and `&>/dev/null` are accepted (and dropped)\n"
            ),
            "{cmd}"
        );
    }
}

#[test]
fn check_names_the_dangerous_command_a_broad_entry_admits() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow:\n          - '.*[^y]'\n          - '^cargo test$'\n      auto:\n        allow:\n          - '^git .*'\n          - '(curl|wget) .*'\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: allow entry `.*[^y]` (.infer/config.yaml:6) is UNRESTRICTED: in modes `all` it admits `rm -rf /`, which no restricted entry should admit\n  = fix: replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each\n\
         warning: allow entry `^git .*` (.infer/config.yaml:10) is UNRESTRICTED: in mode `auto` it admits `git push --force`, which no restricted entry should admit\n  = fix: replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each\n\
         warning: allow entry `(curl|wget) .*` (.infer/config.yaml:11) is UNRESTRICTED: in mode `auto` it admits `curl x`, which no restricted entry should admit\n  = fix: replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each\n\n"
    );
    assert!(stdout(&out).ends_with("hookd check: configuration is valid (3 warnings)\n"));
}

/// A Claude Code PreToolUse payload from the project, for `tool` with `input`.
fn claude(p: &Project, tool: &str, input: Value) -> String {
    json!({
        "session_id": "s1",
        "cwd": p.path(),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": input,
    })
    .to_string()
}

/// The Claude Code adapter with the shell gate on: (its stdout as JSON, stderr, events).
fn claude_gated(p: &Project, payload: &str) -> (Value, String, Vec<Value>) {
    let events = p.path().join("events.jsonl");
    let _ = std::fs::remove_file(&events);
    let out = p.run_with_stdin(
        &[
            "adapter",
            "claude-code",
            "--gate-shell-tools",
            "--events",
            events.to_str().unwrap(),
        ],
        payload,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reply = serde_json::from_str(&stdout(&out)).unwrap();
    let logged = std::fs::read_to_string(&events).unwrap_or_default();
    (reply, stderr(&out), json_lines(&logged))
}

fn denial(reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
}

const PROTECTED_HINT: &str = "with gate_shell_tools on, the model may not write or name hookd's configuration, trust store, state or the agents' hook settings; edit the file yourself, outside the agent";

#[test]
fn the_model_cannot_write_hookds_configuration_with_a_file_tool() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^cp .*']}}}}\n",
    );
    let home = p.home.path().to_path_buf();
    let config = home.join(".infer/config.yaml");
    let write = claude(
        &p,
        "Write",
        json!({"file_path": config, "content": "tools: {bash: {mode: {all: {allow: ['.*']}}}}\n"}),
    );
    // Off by default: not hookd's business.
    let out = p.run_with_stdin(&["adapter", "claude-code"], &write);
    assert_eq!(stdout(&out).trim(), "{}");
    let (reply, err, events) = claude_gated(&p, &write);
    let infer = home.join(".infer");
    assert_eq!(
        reply,
        denial(&format!(
            "hookd refused this Write call: `{}` is inside {}, one of hookd's own files",
            config.display(),
            infer.display()
        ))
    );
    assert_eq!(err, format!("hookd: {PROTECTED_HINT}\n"));
    assert_eq!(events[0]["type"], "tool_command_denied");
    assert_eq!(events[0]["reason"], "protected_path");
    assert_eq!(events[0]["command"], config.to_str().unwrap());
    assert_eq!(events[0]["hint"], PROTECTED_HINT);

    // Every way to name a protected file: relative to the call's cwd, through a symlink, with
    // a `..` detour, `~`, and each agent's settings, trust store and state.
    std::fs::create_dir_all(&infer).unwrap();
    std::os::unix::fs::symlink(&infer, p.path().join("cfg")).unwrap();
    std::fs::create_dir_all(p.path().join("src")).unwrap();
    let state = p.state.path().join("s1.json");
    for (tool, input) in [
        (
            "Edit",
            json!({"file_path": ".infer/hooks.yaml", "old_string": "a", "new_string": "b"}),
        ),
        (
            "Write",
            json!({"file_path": "cfg/config.yaml", "content": "x"}),
        ),
        (
            "Write",
            json!({"file_path": "src/../cfg/../.claude/settings.json", "content": "x"}),
        ),
        (
            "MultiEdit",
            json!({"file_path": "~/.infer/hooks.yaml", "edits": []}),
        ),
        (
            "NotebookEdit",
            json!({"notebook_path": home.join(".claude/settings.local.json"), "new_source": "x"}),
        ),
        (
            "Write",
            json!({"file_path": home.join(".gemini/settings.json"), "content": "x"}),
        ),
        (
            "Write",
            json!({"file_path": home.join(".config/hookd/trust.json"), "content": "{}"}),
        ),
        ("Write", json!({"file_path": state, "content": "{}"})),
        ("Write", json!({"file_path": "crush.json", "content": "{}"})),
        (
            "Write",
            json!({"file_path": home.join(".config/crush/crush.json"), "content": "{}"}),
        ),
    ] {
        let (reply, _, events) = claude_gated(&p, &claude(&p, tool, input.clone()));
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "{tool} {input}: {reply}"
        );
        assert_eq!(events[0]["reason"], "protected_path", "{input}");
    }
    // Ordinary files stay the model's to write.
    // (The whole `.claude` is protected: its skills and agents declare hooks.)
    for path in ["src/main.rs", ".claude-notes/x.md", "notes/infer.md"] {
        let (reply, _, _) = claude_gated(
            &p,
            &claude(&p, "Write", json!({"file_path": path, "content": "x"})),
        );
        assert_eq!(reply, json!({}), "{path}");
    }
    assert!(!config.exists(), "nothing wrote the configuration");
}

#[test]
fn the_model_cannot_name_hookds_files_in_an_admitted_shell_command() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^cp .*', '^dd .*', '^ls( .*)?$']}}}}\n",
    );
    let home = p.home.path().to_path_buf();
    let target = home.join(".infer/config.yaml");
    let cp = format!("cp a {}", target.display());
    let (reply, err, events) = claude_gated(&p, &claude(&p, "Bash", json!({"command": cp})));
    assert_eq!(
        reply,
        denial(&format!(
            "hookd refused this Bash call: `{}` names {}, one of hookd's own files",
            target.display(),
            home.join(".infer").display()
        ))
    );
    assert_eq!(err, format!("hookd: {PROTECTED_HINT}\n"));
    assert_eq!(events[0]["command"], cp);
    for command in [
        "cp evil .infer/config.yaml".to_string(),
        "dd if=evil of=.infer/hooks.yaml".to_string(),
        format!("cp evil {}", home.join(".claude/settings.json").display()),
        format!("cp -t{}/.infer evil", home.display()),
        "cp evil ../other/.infer/hooks.yaml".to_string(),
        "ls .infer".to_string(),
    ] {
        let (reply, _, _) = claude_gated(&p, &claude(&p, "Bash", json!({"command": command})));
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command}"
        );
    }
    let (reply, _, events) = claude_gated(&p, &claude(&p, "Bash", json!({"command": "cp a b"})));
    assert_eq!(reply, json!({}));
    // The audit trail records what was allowed, and by which entry (issue 32, item 10).
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "tool_call_allowed", "{events:?}");
    assert_eq!(events[0]["command"], "cp a b");
    assert_eq!(events[0]["entries"], json!(["^cp .*"]));
    for tool in ["Read", "Edit"] {
        let (reply, _, events) =
            claude_gated(&p, &claude(&p, tool, json!({"file_path": "src/main.rs"})));
        assert_eq!(reply, json!({}));
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["type"], "tool_call_allowed", "{events:?}");
        assert_eq!(events[0]["tool"], tool);
        assert_eq!(events[0]["path"], "src/main.rs");
        assert!(events[0].get("command").is_none(), "{events:?}");
    }
}

#[test]
fn the_model_is_told_why_never_how_to_allow() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^ls$']}}}}\n",
    );
    let (reply, err, events) = claude_gated(&p, &claude(&p, "Bash", json!({"command": "curl x"})));
    let hint = "to allow exactly this command, add '^curl x$' to tools.bash.mode.standard.allow \
                (or tools.bash.mode.all.allow) in .infer/config.yaml, or append it with INFER_TOOLS_BASH_ALLOW_APPEND";
    assert_eq!(
        reply,
        denial(
            "hookd refused this Bash call: `curl x` is not on the allow-list for mode `standard`"
        )
    );
    let seen = reply.to_string();
    for taught in [
        "config.yaml",
        "allow:",
        ".allow",
        "'^curl x$'",
        "INFER_TOOLS_BASH_ALLOW_APPEND",
        "add ",
    ] {
        assert!(!seen.contains(taught), "the model sees {taught:?}: {seen}");
    }
    // The operator still gets the entry: in the event and on the adapter's stderr.
    assert_eq!(events[0]["hint"], hint);
    assert_eq!(err, format!("hookd: {hint}\n"));
    // A pipeline: the part refused and why, without "put it in a script and allow the script".
    let (reply, _, _) = claude_gated(&p, &claude(&p, "Bash", json!({"command": "ls | sh"})));
    assert_eq!(
        reply,
        denial("hookd refused this Bash call: `sh` is not on the allow-list for mode `standard`")
    );
    let (reply, _, _) = claude_gated(&p, &claude(&p, "Bash", json!({"command": "ls & sh"})));
    assert_eq!(
        reply,
        denial("hookd refused this Bash call: `&` runs a command in the background, where nothing waits for it")
    );
}

#[test]
fn a_fail_closed_hook_denial_teaches_nothing_either() {
    let p = Project::new();
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: guard, hook: pre_tool, command: 'curl x', on_error: deny}\n",
    );
    let out = p.run_with_stdin(
        &["adapter", "claude-code"],
        &claude(&p, "Bash", json!({"command": "ls"})),
    );
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        reply,
        denial("hook `guard` failed and is set to fail closed: it was not run (not_allowlisted: `curl x` is not on the allow-list for mode `standard`)")
    );
}

#[test]
fn gemini_and_crush_file_tools_are_held_too() {
    let p = Project::new();
    let config = p.home.path().join(".infer/config.yaml");
    let out = p.run_with_stdin(
        &["adapter", "gemini", "--gate-shell-tools"],
        &json!({"hook_event_name": "BeforeTool", "cwd": p.path(), "session_id": "g",
                "tool_name": "write_file", "tool_input": {"file_path": config, "content": "x"}})
        .to_string(),
    );
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
    let out = p.run_with_stdin(
        &["adapter", "crush", "--gate-shell-tools"],
        &json!({"event": "PreToolUse", "cwd": p.path(), "session_id": "c",
                "tool_name": "edit", "tool_input": {"file_path": ".infer/hooks.yaml"}})
        .to_string(),
    );
    assert_eq!(out.status.code(), Some(2));
    // Crush gives stderr to the model: the reason only.
    assert_eq!(
        stderr(&out),
        format!(
            "hookd refused this edit call: `.infer/hooks.yaml` is inside {}, one of hookd's own files\n",
            p.infer().display()
        )
    );
}

/// Why `{name}>` is refused, for real: bash drops `{fd}` from the arguments and opens a
/// descriptor, where the grammar sees an argument. Every form of it is refused.
#[test]
fn bash_really_takes_a_named_descriptor_for_a_redirection() {
    assert_eq!(bash_argv("a {fd}>&1"), ["a"]);
    assert_eq!(bash_argv("a {fd} 2>/dev/null"), ["a", "{fd}"]);
    let gate = open_gate();
    for cmd in [
        "cmd {fd}>/dev/null",
        "cmd {x}>&2",
        "cmd {a}<file",
        "cmd a {fd}>>/dev/null",
        "cmd {fd}>&-",
        "cmd {fd}<>/dev/null",
        "cmd {fd}>|/dev/null",
        "cmd {_1}>/dev/null",
    ] {
        let Verdict::Denied(d) = gate.verdict(cmd, Mode::Standard) else {
            panic!("{cmd} admitted")
        };
        assert_eq!(d.reason, R::Redirection, "{cmd}: {d:?}");
    }
    let Verdict::Allowed(a) = gate.verdict("cmd {fd} 2>/dev/null", Mode::Standard) else {
        panic!("denied")
    };
    assert_eq!(a.argv, bash_argv("cmd {fd} 2>/dev/null"));
}
