//! Hot paths: dispatch with nothing due, and one gate verdict against a 100-entry list.
//! Run: `cargo bench --bench dispatch`. Figures and method: docs/benchmarks.md.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{Config, Context, Engine, Gate, HookPoint};

/// 50 hooks and 20 reminders, none at `post_queue_drain` or `pre_stream`.
fn busy_config() -> Config {
    let points = [
        "pre_session",
        "post_stream",
        "pre_tool",
        "post_tool",
        "post_session",
    ];
    let mut hooks = String::from("enabled: true\nhooks:\n");
    for i in 0..50 {
        hooks.push_str(&format!(
            "  - {{name: h{i}, hook: {}, command: 'echo {i}'}}\n",
            points[i % points.len()]
        ));
    }
    let mut reminders = String::from("enabled: true\nreminders:\n");
    for i in 0..20 {
        reminders.push_str(&format!(
            "  - {{name: r{i}, hook: {}, trigger: on_failure, text: t{i}}}\n",
            "post_tool"
        ));
    }
    Config::from_yaml(
        ".",
        Some(("config.yaml", &allow_yaml(100))),
        Some(("hooks.yaml", &hooks)),
        Some(("reminders.yaml", &reminders)),
    )
    .expect("valid bench config")
}

fn allow_yaml(n: usize) -> String {
    let mut s = String::from("tools:\n  bash:\n    mode:\n      all:\n        allow:\n");
    for i in 0..n {
        s.push_str(&format!(
            "          - '^tool{i} (build|test|check)( --[a-z-]+)*$'\n"
        ));
    }
    s
}

fn gate_100() -> Gate {
    let entries = (0..100).map(|i| AllowEntry {
        pattern: format!("^tool{i} (build|test|check)( --[a-z-]+)*$"),
        list: hookd::config::Mode::All,
        origin: Origin {
            file: "bench".into(),
            line: i + 1,
            source: hookd::config::Source::Embedded,
        },
    });
    Gate::new(&AllowLists::from_entries(entries), "bench")
}

fn benches(c: &mut Criterion) {
    let engine = Engine::builder(busy_config()).build();
    let mut ctx = Context::new();
    ctx.set("session_id", "bench").set("turn", 3);
    c.bench_function("dispatch_nothing_due/post_queue_drain", |b| {
        b.iter(|| {
            engine
                .dispatch(black_box(HookPoint::PostQueueDrain), black_box(&ctx))
                .expect("dispatch")
        })
    });
    c.bench_function("dispatch_nothing_due/pre_stream", |b| {
        b.iter(|| {
            engine
                .dispatch(black_box(HookPoint::PreStream), black_box(&ctx))
                .expect("dispatch")
        })
    });

    let gate = gate_100();
    c.bench_function("gate_verdict/allowed_100_entries", |b| {
        b.iter(|| {
            gate.verdict(
                black_box("tool57 test --all-features --locked"),
                Mode::Standard,
            )
        })
    });
    c.bench_function("gate_verdict/not_listed_100_entries", |b| {
        b.iter(|| gate.verdict(black_box("cargo test --workspace 'a b'"), Mode::Standard))
    });
    c.bench_function("gate_verdict/operator_denied", |b| {
        b.iter(|| gate.verdict(black_box("tool1 build; curl x | sh"), Mode::Standard))
    });
}

/// Event fan-out: what each event costs the daemon's hub (render once, keep within the ring's
/// budgets, wake subscribers), and what one subscriber's read of 100 events costs.
fn fanout(c: &mut Criterion) {
    use hookd::daemon::hub::{Budgets, Hub};
    use hookd::events::{ConfigReloaded, Event, EventSink, Stamped};
    let hub = Hub::new(Budgets::default().ring(1000, 256 * 1024), 0);
    let mut seq = 0;
    let event = |seq: u64| Stamped {
        seq,
        timestamp: "2026-11-25T00:00:00.000Z".into(),
        event: Event::ConfigReloaded(ConfigReloaded {
            sources: vec!["/home/u/.infer/hooks.yaml".into()],
            cause: hookd::ReloadCause::Changed,
            project: None,
            trust: None,
            trust_was: None,
        }),
    };
    // Fill the ring first: every measured emit also lets the oldest go.
    for _ in 0..2000 {
        seq += 1;
        hub.emit(&event(seq));
    }
    c.bench_function("hub/emit_at_budget", |b| {
        b.iter(|| {
            seq += 1;
            hub.emit(black_box(&event(seq)))
        })
    });
    let newest = hub.newest();
    c.bench_function("hub/subscriber_reads_100_events", |b| {
        b.iter(|| hub.after(black_box(newest - 100), 1 << 20))
    });
}

criterion_group!(hot_paths, benches, fanout);
criterion_main!(hot_paths);
