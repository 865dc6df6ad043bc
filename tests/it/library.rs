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
        environment: Default::default(),
        timeout: Duration::from_secs(5),
        grace: Duration::from_secs(1),
        max_output: 4, // 'a' + 'é' is 3 bytes; the cap falls inside '€'
        confinement: None,
    };
    let r = hookd::runner::run(&spec);
    assert_eq!(r.stdout.text, "aé");
    assert_eq!(r.stdout.dropped, 7);
}

/// A daemon's answer is read back into an `Outcome` (the adapters forward to the daemon): every
/// golden Outcome, one per point and decision shape, survives JSON and back unchanged.
#[test]
fn outcomes_read_back_from_their_json() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("decision_") || name.starts_with("outcome_")) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"<duration_ms>\"", "7");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let outcome: hookd::Outcome =
            serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(serde_json::to_value(&outcome).unwrap(), json, "{name}");
        n += 1;
    }
    assert_eq!(n, 9);
    // A decision of the wrong shape for its point is an error, not a silent default.
    let bad = r#"{"hook":"pre_tool","session_id":"","turn":0,"session_turn":0,"mode":"standard","reminders":[],"commands":[],"decision":{"deny":"yes"}}"#;
    assert!(serde_json::from_str::<hookd::Outcome>(bad).is_err());
}

#[test]
fn concurrent_dispatches_deliver_events_numbered_in_order_without_gaps() {
    let dir = tempfile::tempdir().unwrap();
    // Command hooks emit outside any session lock, where dispatches really overlap.
    let config = Config::from_yaml(
        dir.path(),
        Some((
            "config.yaml",
            "tools: {bash: {mode: {all: {allow: ['^true$']}}}}",
        )),
        Some((
            "hooks.yaml",
            "enabled: true\nhooks: [{name: t, hook: post_tool, command: 'true'}]",
        )),
        Some((
            "reminders.yaml",
            "enabled: true\nreminders: [{name: r, hook: post_tool, text: hello}]",
        )),
    )
    .unwrap();
    let log = dir.path().join("events.jsonl");
    let file = hookd::events::SharedLog::open(&log).unwrap();
    let sink = Arc::new(Collector::default());
    let both = hookd::events::Fanout(vec![sink.clone(), Arc::new(file)]);
    let engine = Arc::new(Engine::builder(config).sink(Arc::new(both)).build());
    std::thread::scope(|s| {
        for i in 0..8 {
            let engine = engine.clone();
            s.spawn(move || {
                let mut ctx = Context::new();
                ctx.set("session_id", format!("s{i}"));
                for _ in 0..25 {
                    engine.dispatch(HookPoint::PostTool, &ctx).unwrap();
                }
            });
        }
    });
    let delivered: Vec<u64> = sink.events().iter().map(|e| e.seq).collect();
    assert_eq!(delivered, (1..=400).collect::<Vec<u64>>());
    let logged: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(logged, delivered, "the log has the same order");
}

/// A runner that starts nothing: every command "exits 2 with `scripted deny`".
struct Scripted(std::sync::Mutex<Vec<Vec<String>>>);

impl hookd::runner::Runner for Scripted {
    fn run(
        &self,
        spec: &hookd::runner::RunSpec,
        _: &hookd::runner::Cancel,
    ) -> hookd::runner::RunReport {
        self.0.lock().unwrap().push(spec.argv.clone());
        hookd::runner::RunReport {
            exit_code: Some(2),
            stderr: hookd::runner::Captured {
                text: "scripted deny".into(),
                dropped: 0,
            },
            ..Default::default()
        }
    }
}

fn guarded(dir: &std::path::Path) -> Config {
    Config::from_yaml(
        dir,
        Some(("config.yaml", "tools: {bash: {mode: {all: {allow: ['^\\./guard\\.sh( .*)?$', '^true$']}}}}")),
        Some((
            "hooks.yaml",
            "enabled: true\nhooks:\n  - {name: guard, hook: pre_tool, command: './guard.sh --strict'}\n  - {name: t, hook: post_session, command: 'true'}",
        )),
        None,
    )
    .unwrap()
}

#[test]
fn the_engines_decisions_can_be_tested_with_a_runner_that_starts_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Arc::new(Scripted(Default::default()));
    let engine = Engine::builder(guarded(dir.path()))
        .runner(runner.clone())
        .build();
    let mut ctx = Context::new();
    ctx.set(
        "tool",
        serde_json::json!({"name": "Bash", "input": {"command": "ls"}}),
    );
    let outcome = engine.dispatch(HookPoint::PreTool, &ctx).unwrap();
    let decision = serde_json::to_value(&outcome.decision).unwrap();
    assert_eq!(decision["deny"], true, "{decision}");
    assert_eq!(decision["reason"], "scripted deny");
    // It was handed exactly the argv the gate admitted; ./guard.sh does not even exist.
    assert_eq!(*runner.0.lock().unwrap(), [vec!["./guard.sh", "--strict"]]);
}

#[test]
fn cancelling_one_engine_leaves_another_engines_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let a = Engine::builder(guarded(dir.path())).build();
    let b = Engine::builder(guarded(dir.path())).build();
    a.canceller().cancel();
    let ran = |e: &Engine| e.dispatch(HookPoint::PostSession, &Context::new()).unwrap();
    let (oa, ob) = (ran(&a), ran(&b));
    // The cancelled engine starts nothing; the other runs as usual (a process-wide latch used
    // to stop every later hook in the process).
    assert!(oa.commands.is_empty(), "{:?}", oa.commands);
    assert_eq!(ob.commands[0].status, hookd::CommandStatus::Ok);
}

/// An embedder's `LoadOptions` decide where hookd's and the agents' files are: the model's
/// write to `$CLAUDE_CONFIG_DIR/settings.json` named only in the options (not in this
/// process's environment) is refused, and a file beside it is not.
#[test]
fn the_places_kept_from_loading_are_the_ones_the_gate_protects() {
    let t = tempfile::tempdir().unwrap();
    let (home, project, cc) = (
        t.path().join("home"),
        t.path().join("p"),
        t.path().join("cc"),
    );
    for d in [&home, &project, &cc] {
        std::fs::create_dir_all(d).unwrap();
    }
    assert!(std::env::var_os("CLAUDE_CONFIG_DIR").is_none());
    let opts = hookd::LoadOptions {
        project_dir: project.clone(),
        home_dir: Some(home),
        env: [
            ("CLAUDE_CONFIG_DIR", cc.display().to_string()),
            ("HOOKD_GATE_SHELL_TOOLS", "1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..Default::default()
    };
    let engine = Engine::builder(hookd::load(&opts).unwrap()).build();
    let write = |path: &std::path::Path| crate::support::write_refused(&engine, path);
    assert!(
        write(&cc.join("settings.json")),
        "the agent's settings were writable"
    );
    assert!(
        !write(&cc.join("notes.txt")),
        "a file beside them was refused"
    );
}

/// An embedder's hooks.yaml and config.yaml texts are the user's layer: their policy keys
/// apply (they were once dropped, leaving `gate_shell_tools: true` silently off).
#[test]
fn a_configuration_from_text_keeps_its_policy() {
    let config = Config::from_yaml(
        ".",
        Some(("config.yaml", "sandbox: {enabled: true, network: true}")),
        Some((
            "hooks.yaml",
            "gate_shell_tools: true\nfail_closed: true\nmax_continues: 2",
        )),
        None,
    )
    .unwrap();
    let p = &config.policy;
    assert!(p.gate_shell_tools && p.fail_closed, "{p:?}");
    assert_eq!(p.max_continues, 2);
    assert!(p.sandbox.enabled && p.sandbox.network, "{p:?}");
}
