//! Each event's JSON, field for field, against a golden file (volatile values normalized).
//! Regenerate with `UPDATE_GOLDEN=1 cargo test --test it golden`.

use std::sync::Arc;

use hookd::events::Collector;
use hookd::{Config, Context, Engine, HookPoint};

pub fn golden(name: &str, mut value: serde_json::Value) {
    for volatile in ["timestamp", "duration_ms", "started_at", "duration_ns"] {
        if value.get(volatile).is_some() {
            value[volatile] = serde_json::json!(format!("<{volatile}>"));
        }
    }
    // Code-running variables depend on the test's own environment (cargo sets LD_LIBRARY_PATH).
    if let Some(removed) = value.get_mut("env_removed").and_then(|r| r.as_array_mut()) {
        removed.retain(|r| r["cause"] != "runs_code");
    }
    let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(
        text,
        expected,
        "event {name} differs from {}",
        path.display()
    );
}

/// An engine with a reminder (`text`), a hook that runs and one the gate refuses, all at
/// `post_tool`, collecting its events.
fn engine(text: &str) -> (tempfile::TempDir, Arc<Collector>, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let reminders = format!(
        "enabled: true\nreminders:\n  - {{name: nudge, hook: post_tool, text: \"{text}\"}}\n"
    );
    let config = Config::from_yaml(
        dir.path(),
        Some((".infer/config.yaml", "tools: {bash: {mode: {all: {allow: ['^echo golden$']}}}}\n")),
        Some((
            ".infer/hooks.yaml",
            "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo golden'}\n  - {name: wipe, hook: post_tool, command: 'rm -rf build'}\n",
        )),
        Some((".infer/reminders.yaml", &reminders)),
    )
    .unwrap();
    let sink = Arc::new(Collector::default());
    // What a repository's .env set for the agent: reported as removed from the hook.
    let planted = hookd::runner::ProjectVar {
        name: "PYTHONPATH".into(),
        source: ".gemini/.env".into(),
        value: "/repo/py".into(),
        users: false,
    };
    let engine = Engine::builder(config)
        .sink(sink.clone())
        .project_env(vec![planted])
        .build();
    (dir, sink, engine)
}

#[test]
fn every_event_matches_its_golden_file() {
    let (_dir, sink, engine) = engine("after {tool_name}");
    let mut ctx = Context::new();
    ctx.set("session_id", "golden-session")
        .set("turn", 5)
        .set("tool", serde_json::json!({"name": "Bash", "failed": false}));
    let outcome = engine.dispatch(HookPoint::PostTool, &ctx).unwrap();

    let events: Vec<serde_json::Value> = sink
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(events.len(), 3);
    golden("system_reminder", events[0].clone());
    golden("hook_command", events[1].clone());
    golden("hook_command_skipped", events[2].clone());
    let mut outcome = serde_json::to_value(&outcome).unwrap();
    outcome["commands"][0]["duration_ms"] = serde_json::json!("<duration_ms>");
    golden("outcome_post_tool", outcome);
}

/// Events read back from their JSON as the same typed values (`hookd events` prints a stream or
/// a file this way), and each summarised in one line.
#[test]
fn events_read_back_from_their_json_and_summarise() {
    use hookd::events::Stamped;
    let (_dir, sink, engine) = engine("after {tool_name}\\nand more");
    let mut ctx = Context::new();
    ctx.set("session_id", "golden-session")
        .set("tool", serde_json::json!({"name": "Bash", "failed": false}));
    engine.dispatch(HookPoint::PostTool, &ctx).unwrap();
    let stamped = sink.events();
    assert_eq!(stamped.len(), 3);
    for s in &stamped {
        let json = serde_json::to_string(s).unwrap();
        let back: Stamped = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, s, "{json}");
        assert_eq!(back.event.point(), Some(HookPoint::PostTool));
        assert_eq!(back.event.session_id(), Some("golden-session"));
    }
    let summaries: Vec<String> = stamped.iter().map(|s| s.event.summary()).collect();
    assert_eq!(summaries[0], "nudge (always): after Bash and more");
    assert!(
        summaries[1].starts_with("say (exit 0, ") && summaries[1].ends_with("ms) `echo golden`"),
        "{}",
        summaries[1]
    );
    assert_eq!(summaries[2], "wipe skipped: not_allowlisted `rm -rf build`");
    let kinds: Vec<&str> = stamped.iter().map(|s| s.event.kind()).collect();
    assert_eq!(
        kinds,
        ["system_reminder", "hook_command", "hook_command_skipped"]
    );
}
