//! What confinement costs a command: `true` run by the runner unconfined, and confined (the
//! confinement prepared and entered for each run, as a hook's is). Same process, same run,
//! so the ratio is what to read. Run: `cargo bench --bench sandbox`; whole-process figures
//! (`hookd exec -- true` against `codex sandbox`) come from `scripts/bench.sh sandbox`.
//! Results: docs/benchmarks.md.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use hookd::config::SandboxPolicy;
use hookd::runner::{run, RunSpec};

fn spec(confinement: Option<Arc<hookd::sandbox::Confinement>>, dir: &std::path::Path) -> RunSpec {
    RunSpec {
        argv: vec!["true".into()],
        cwd: dir.to_path_buf(),
        stdin: Vec::new(),
        env: Vec::new(),
        environment: Default::default(),
        timeout: Duration::from_secs(10),
        grace: Duration::from_secs(1),
        max_output: 4096,
        confinement,
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary project");
    let missing = hookd::sandbox::support().missing();
    let mut g = c.benchmark_group("run_true");
    g.bench_function("unconfined", |b| b.iter(|| run(&spec(None, dir.path()))));
    if missing.is_empty() {
        let mut policy = SandboxPolicy::default();
        policy.enabled = true;
        policy.network = std::env::var_os("NET").is_some();
        g.bench_function("confined", |b| {
            b.iter(|| {
                let c = hookd::sandbox::prepare(&policy, dir.path()).expect("this kernel confines");
                run(&spec(Some(Arc::new(c)), dir.path()))
            })
        });
    } else {
        eprintln!(
            "confined: skipped: this kernel lacks {}",
            missing.join(" and ")
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
