//! `hookd schema`: the JSON Schema of each configuration file agrees with `hookd check` over a
//! corpus of valid and invalid files (whatever the checker rejects, the schema rejects; what it
//! accepts, the schema accepts), the shipped files name a schema that resolves and validate,
//! and every event the suite sees validates against the events schema (support::json_lines).

use std::path::Path;

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{json, Value};

use crate::support::{stderr, stdout, Project};

/// YAML as an editor's language server reads it (YAML 1.2 core types) turned into JSON.
fn to_json(y: &Yaml) -> Value {
    match y {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => json!(b),
        Yaml::Value(Scalar::Integer(i)) => json!(i),
        Yaml::Value(Scalar::FloatingPoint(f)) => json!(f.into_inner()),
        Yaml::Value(Scalar::String(s)) => json!(s.as_ref()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Mapping(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        other => panic!("unexpected YAML node {other:?}"),
    }
}

fn yaml_doc(text: &str) -> Value {
    let docs = Yaml::load_from_str(text).unwrap();
    docs.first().map(to_json).unwrap_or(Value::Null)
}

fn schema_of(which: &str) -> Value {
    let out = Project::new().run(&["schema", which]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// The schema's errors for `doc` (empty: valid).
fn violations(schema: &Value, doc: &Value) -> Vec<String> {
    // Formats asserted, as an editor's validator does (`format: regex` for matchers and entries).
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .expect("a valid draft 2020-12 schema");
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// `hookd check` on `file` holding `text` (in an otherwise empty project): whether it has errors.
fn check_rejects(file: &str, text: &str) -> (bool, String) {
    let p = Project::new();
    p.write(file, text);
    let out = p.run(&["check"]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    (out.status.code() != Some(0), said)
}

/// Each case through both: they must agree, and agree with the corpus' verdict.
fn agree(which: &str, file: &str, cases: &[(bool, &str)]) {
    let schema = schema_of(which);
    for (valid, text) in cases {
        let (rejected, said) = check_rejects(file, text);
        let schema_says = violations(&schema, &yaml_doc(text));
        assert_eq!(!rejected, *valid, "hookd check on {file}:\n{text}\n{said}");
        assert_eq!(
            schema_says.is_empty(),
            *valid,
            "the schema on {file}:\n{text}\n{schema_says:?}"
        );
    }
}

#[test]
fn the_hooks_schema_and_check_agree() {
    let hook = |rest: &str| {
        format!(
            "enabled: true\nhooks:\n  - {{name: fmt, hook: post_tool, command: 'echo hi'{rest}}}\n"
        )
    };
    let cases: Vec<(bool, String)> = vec![
        (true, "enabled: true\nhooks: []\n".into()),
        (true, "# nothing yet\n".into()),
        (true, "hooks:\n".into()),
        (true, hook("")),
        (true, hook(", timeout: 10, max_output: 1024, matcher: 'Bash|Edit', on: failure, on_error: deny, parallel: true, include_sub_agents: true, description: x")),
        (true, hook(", timeout: 0")),
        (true, "grace: 0\nmax_continues: 1000\nmax_output: 1\nfail_closed: true\ngate_shell_tools: false\nshell_tools: [sh]\nparallel: false\nenv: {keep: [RUSTC_WRAPPER, GIT_CONFIG_*]}\n".into()),
        (true, "enabled: true\nhooks:\n  - {name: a, hook: pre_tool, command: x, matcher: Bash}\n  - {name: b, hook: post_session, command: y, on_error: ignore}\n".into()),
        (false, "enabled: maybe\n".into()),
        (false, "enabled: 'true'\n".into()),
        (false, "hooks: {}\n".into()),
        (false, "hooks: [fmt]\n".into()),
        (false, "hooks:\n  - {hook: post_tool, command: x}\n".into()),
        (false, "hooks:\n  - {name: a, command: x}\n".into()),
        (false, "hooks:\n  - {name: a, hook: post_tool}\n".into()),
        (false, "hooks:\n  - {name: '  ', hook: post_tool, command: x}\n".into()),
        (false, "hooks:\n  - {name: a, hook: post_tool, command: ''}\n".into()),
        (false, "hooks:\n  - {name: a, hook: Stop, command: x}\n".into()),
        (false, "hooks:\n  - {name: a, hook: after_tool, command: x}\n".into()),
        (false, hook(", timeout: -1")),
        (false, hook(", timeout: 3601")),
        (false, hook(", timeout: soon")),
        (false, hook(", max_output: 0")),
        (false, hook(", max_output: 16777217")),
        (false, hook(", on: sometimes")),
        (false, "hooks:\n  - {name: a, hook: pre_tool, command: x, matcher: '(Bash'}\n".into()),
        (false, hook(", on_error: panic")),
        (false, hook(", parallel: 1")),
        (false, "hooks:\n  - {name: a, hook: post_session, command: x, matcher: Bash}\n".into()),
        (false, "hooks:\n  - {name: a, hook: pre_tool, command: x, on: failure}\n".into()),
        (false, "hooks:\n  - {name: a, hook: post_session, command: x, on_error: deny}\n".into()),
        (false, "grace: 61\n".into()),
        (false, "max_continues: 1001\n".into()),
        (false, "max_continues: -1\n".into()),
        (false, "shell_tools: Bash\n".into()),
        (false, "env: {keep: ['1X']}\n".into()),
        (false, "env: {keep: ['A-B']}\n".into()),
        (false, "env: {keep: [HOOKD_TOKEN]}\n".into()),
        (false, "env: {keep: ['HOOKD_*']}\n".into()),
        (false, "env: {keep: ['PA*']}\n".into()),
        (false, "[1, 2]\n".into()),
    ];
    let cases: Vec<(bool, &str)> = cases.iter().map(|(v, t)| (*v, t.as_str())).collect();
    agree("hooks", "hooks.yaml", &cases);
    // An unknown key is only a warning to the checker, an error to the schema (typos underlined).
    let schema = schema_of("hooks");
    let typo = "hooks:\n  - {name: a, hook: post_tool, comand: x, command: y}\n";
    assert!(!violations(&schema, &yaml_doc(typo)).is_empty());
    let (rejected, said) = check_rejects("hooks.yaml", typo);
    assert!(!rejected && said.contains("unknown key `comand`"), "{said}");
}

#[test]
fn the_reminders_schema_and_check_agree() {
    let r = |rest: &str| {
        format!("enabled: true\nreminders:\n  - {{name: r, text: 'stay on task'{rest}}}\n")
    };
    let cases: Vec<(bool, String)> = vec![
        (true, r("")),
        (
            true,
            r(", hook: post_tool, trigger: interval, interval: 10"),
        ),
        (true, r(", trigger: once_after, threshold: 3")),
        (true, r(", trigger: turns_before_max, threshold: 2")),
        (true, r(", trigger: on_failure, hook: post_tool")),
        (true, r(", trigger: on_repeated_failure")),
        (
            true,
            r(", trigger: on_mode_change, guidance: {plan: think, all: go}"),
        ),
        (
            true,
            r(", trigger: on_stalled_todos, threshold: 4, when: todos_empty"),
        ),
        (true, "merge: true\nreminders: []\n".into()),
        (true, "".into()),
        (false, "reminders:\n  - {text: x}\n".into()),
        (false, "reminders:\n  - {name: r}\n".into()),
        (false, r(", trigger: sometimes")),
        (false, r(", trigger: once_after")),
        (false, r(", trigger: once_after, threshold: 0")),
        (false, r(", trigger: on_repeated_failure, threshold: 0")),
        (false, r(", trigger: on_failure, hook: pre_stream")),
        (false, r(", trigger: on_mode_change, hook: post_tool")),
        (false, r(", interval: -2")),
        (false, r(", when: always")),
        (false, r(", hook: Stop")),
        (false, r(", guidance: [plan]")),
        (false, "enabled: yes please\n".into()),
        (false, "reminders: {}\n".into()),
    ];
    let cases: Vec<(bool, &str)> = cases.iter().map(|(v, t)| (*v, t.as_str())).collect();
    agree("reminders", "reminders.yaml", &cases);
}

#[test]
fn the_config_schema_and_check_agree() {
    let cases: &[(bool, &str)] = &[
        (true, "tools: {bash: {mode: {all: {allow: ['^ls$']}, plan: {allow: []}}}}\n"),
        (true, "# the agent's settings, none of hookd's\n"),
        // The agent's own keys are its business.
        (true, "model: x\ntools: {bash: {enabled: true, mode: {readonly: {allow: ['^pwd$']}}}, web: {}}\n"),
        (true, "sandbox: {enabled: true, network: false, write: ['~/.cache', /tmp/x], read_deny: ['~/secrets']}\n"),
        (true, "telemetry: {endpoint: 'http://c:4318', headers: {authorization: x}, service_name: a, resource_attributes: {team: b}, timeout: 50, protocol: http/protobuf}\n"),
        (false, "tools: {bash: {mode: {all: {allow: '^ls$'}}}}\n"),
        (false, "tools: {bash: {mode: {all: {allow: [[1]]}}}}\n"),
        (false, "tools: {bash: {mode: {all: {allow: ['^(ls$']}}}}\n"),
        (false, "sandbox: {enabled: sure}\n"),
        (false, "sandbox: {write: [relative/dir]}\n"),
        (false, "sandbox: {read_deny: 'x'}\n"),
        (false, "sandbox: [on]\n"),
        (false, "- a list\n"),
    ];
    agree("config", "config.yaml", cases);
    let schema = schema_of("config");
    let typo = "tools: {bash: {mode: {standrd: {allow: ['^ls$']}}}}\n";
    assert!(!violations(&schema, &yaml_doc(typo)).is_empty());
}

/// The shipped configurations start with a `yaml-language-server` line naming a schema that
/// exists, is what `hookd schema` prints, and validates them.
#[test]
fn shipped_files_name_their_schema_and_validate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["config/example", "config/headless"] {
        for (file, which) in [
            ("hooks.yaml", "hooks"),
            ("reminders.yaml", "reminders"),
            ("config.yaml", "config"),
        ] {
            let path = root.join(dir).join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let first = text.lines().next().unwrap_or_default();
            let rel = first
                .strip_prefix("# yaml-language-server: $schema=")
                .unwrap_or_else(|| panic!("{}: first line is {first:?}", path.display()));
            let named = path.parent().unwrap().join(rel);
            let shipped: Value = serde_json::from_str(
                &std::fs::read_to_string(&named)
                    .unwrap_or_else(|e| panic!("{}: {e}", named.display())),
            )
            .unwrap();
            assert_eq!(
                shipped,
                schema_of(which),
                "{} is not what `hookd schema {which}` prints: regenerate it",
                named.display()
            );
            let errors = violations(&shipped, &yaml_doc(&text));
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        }
    }
    let events: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schema/events.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        events,
        schema_of("events"),
        "regenerate schema/events.schema.json"
    );
}
