//! Embedding the engine: configuration from text, one dispatch in this process, the Outcome
//! and the events it produced. No daemon, no CLI: `hookd = { default-features = false }` is
//! enough for this.
//!
//! ```text
//! cargo run --example embed_engine
//! ```

use std::sync::Arc;

use hookd::events::Collector;
use hookd::host::Host;
use hookd::{Config, Context, Engine, HookPoint};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = std::env::temp_dir();
    // The same three files hookd reads from `.infer/`, here as text.
    let config = Config::from_yaml(
        &project,
        Some(("config.yaml", "tools: {bash: {mode: {all: {allow: ['^echo tool ran$']}}}}")),
        Some((
            "hooks.yaml",
            "enabled: true\nhooks: [{name: note, hook: post_tool, command: 'echo tool ran'}]",
        )),
        Some((
            "reminders.yaml",
            "enabled: true\nreminders: [{name: stay, hook: post_tool, trigger: on_failure, text: 'The tool failed; read its error before retrying.'}]",
        )),
    )?;
    let events = Arc::new(Collector::default());
    // The hooks' environment, their PATH and the places the gate protects come from a `Host`:
    // here this process's, read once (without it, hooks get a bare PATH and nothing else).
    let engine = Engine::builder(config)
        .host(Host::of_this_process())
        .sink(events.clone())
        .build();

    // What the agent knows at `post_tool`: a shell call that failed.
    let mut context = Context::new();
    context.set("session_id", "example");
    context.set(
        "tool",
        serde_json::json!({"name": "Bash", "input": {"command": "cargo test"}, "failed": true}),
    );
    let outcome = engine.dispatch(HookPoint::PostTool, &context)?;

    println!("{}", serde_json::to_string_pretty(&outcome)?);
    for e in events.events() {
        println!("event {} {}: {}", e.seq, e.event.kind(), e.event.summary());
    }
    Ok(())
}
