//! hookd as a library: the types are shareable, and dispatches from threads run side by side.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hookd::events::Collector;
use hookd::{Config, Context, Engine, Gate, HookPoint};

#[test]
fn library_types_are_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Engine>();
    shareable::<Gate>();
    shareable::<Config>();
    shareable::<hookd::Outcome>();
    shareable::<hookd::Event>();
}

#[test]
fn dispatches_of_different_sessions_run_at_the_same_time() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::from_yaml(
        dir.path(),
        Some((
            "config.yaml",
            "tools: {bash: {mode: {all: {allow: ['^sleep 0\\.5$']}}}}",
        )),
        Some((
            "hooks.yaml",
            "enabled: true\nhooks: [{name: s, hook: post_session, command: 'sleep 0.5'}]",
        )),
        None,
    )
    .unwrap();
    let sink = Arc::new(Collector::default());
    let engine = Arc::new(Engine::builder(config).sink(sink.clone()).build());
    let start = Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut ctx = Context::new();
                ctx.set("session_id", format!("s{i}"));
                engine.dispatch(HookPoint::PostSession, &ctx).unwrap()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(
            t.join().unwrap().commands[0].status,
            hookd::CommandStatus::Ok
        );
    }
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(1900),
        "four 0.5 s hooks in {took:?}: they did not overlap"
    );
    let mut seqs: Vec<u64> = sink
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["seq"].as_u64().unwrap())
        .collect();
    seqs.sort();
    assert_eq!(
        seqs,
        [1, 2, 3, 4],
        "one engine numbers its events without gaps or repeats"
    );
}

#[test]
fn a_cap_inside_a_multibyte_character_through_the_runner() {
    let spec = hookd::runner::RunSpec {
        argv: vec!["printf".into(), "aé€😀".into()],
        cwd: std::env::temp_dir(),
        stdin: Vec::new(),
        env: Vec::new(),
        timeout: Duration::from_secs(5),
        grace: Duration::from_secs(1),
        max_output: 4, // 'a' + 'é' is 3 bytes; the cap falls inside '€'
    };
    let r = hookd::runner::run(&spec);
    assert_eq!(r.stdout.text, "aé");
    assert_eq!(r.stdout.dropped, 7);
}
