//! The daemon under floods and faults, performed against a real `hookd serve` (issue 42 item 5):
//! a collector that accepts and never answers while thousands of large events flow, SIGTERM
//! with such a collector, many concurrent large dispatch bodies, observers holding every
//! connection they may. Each test measures the daemon's memory or a small dispatch's latency
//! (median) under the flood against a quiet baseline taken in the same run, and prints them
//! (docs/benchmarks.md, "Floods").

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::daemon::{start, start_with_env, subscribe, tcp, unix, Daemon};
use crate::support::Project;

const MB: u64 = 1024 * 1024;

/// A collector that accepts connections and never reads nor answers: its port.
fn mute_collector() -> u16 {
    let mute = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = mute.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in mute.incoming().flatten() {
            held.push(c);
        }
    });
    port
}

/// The daemon's resident memory, in bytes.
fn resident(d: &Daemon) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", d.child.id())).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// A project whose post_session hook prints 64 KiB on stdout and as much on stderr.
fn chatty() -> Project {
    let p = Project::new();
    let text: String = (0..65_536u32)
        .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
        .collect();
    std::fs::write(p.path().join("big.txt"), text).unwrap();
    std::fs::write(p.path().join("big.sh"), "cat big.txt\ncat big.txt >&2\n").unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sh big.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: big, hook: post_session, command: 'sh big.sh'}\n",
    );
    p
}

/// One small dispatch (no hook runs): what it took.
fn probe(d: &Daemon) -> Duration {
    let body = json!({"point": "pre_stream", "context": {"session_id": "probe"}}).to_string();
    let t = Instant::now();
    let (status, out) = unix(&d.socket, "POST", "/v1/dispatch", &body);
    assert_eq!(status, 200, "{out}");
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    assert!(!v.is_empty(), "no sample");
    v.sort();
    v[v.len() / 2]
}

/// The median of `n` probes on a quiet daemon.
fn quiet_median(d: &Daemon, n: usize) -> Duration {
    median((0..n).map(|_| probe(d)).collect())
}

/// Run `flood` while probing the daemon every 5 ms: the probes' median.
fn median_during(d: &Daemon, flood: impl FnOnce()) -> Duration {
    let done = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let prober = s.spawn(|| {
            let mut got = Vec::new();
            while !done.load(Ordering::Relaxed) {
                got.push(probe(d));
                std::thread::sleep(Duration::from_millis(5));
            }
            got
        });
        flood();
        done.store(true, Ordering::Relaxed);
        median(prober.join().unwrap())
    })
}

fn post_session(d: &Daemon, i: usize) {
    let body = json!({"point": "post_session", "context": {"session_id": format!("s{}", i % 7)}});
    let (status, out) = unix(&d.socket, "POST", "/v1/dispatch", &body.to_string());
    assert_eq!(status, 200, "{out}");
}

/// Issue 42: with a mute collector, pending log records were bounded by count (4,096), each
/// carrying a hook's whole output: 342 MiB more resident. Now 2,000 events of 128 KiB each flow
/// to a collector that never answers, and the daemon's memory grows by at most 48 MiB (its ring
/// is 4 MiB here; the exporter keeps 8 MiB of records, fields cut at 4 KiB).
#[test]
fn a_mute_collector_cannot_grow_the_daemons_memory() {
    let p = chatty();
    let port = mute_collector();
    let d = start_with_env(
        &p,
        &["--ring-bytes", "4M"],
        true,
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )],
    );
    (0..20).for_each(|i| post_session(&d, i));
    let quiet = quiet_median(&d, 60);
    let before = resident(&d);
    let flooded = median_during(&d, || {
        std::thread::scope(|s| {
            for k in 0..8 {
                let d = &d;
                s.spawn(move || (20 + k..2020).step_by(8).for_each(|i| post_session(d, i)));
            }
        })
    });
    let after = resident(&d);
    eprintln!(
        "mute collector: resident {} MiB before, {} MiB after 2,000 events of 128 KiB; probe median {quiet:?} quiet, {flooded:?} flooded",
        before / MB,
        after / MB
    );
    assert!(
        after <= before + 48 * MB,
        "resident {} MiB before, {} MiB after",
        before / MB,
        after / MB
    );
}

/// Issue 42: a mute collector held SIGTERM for about 10 s (an export under way waited its
/// whole timeout, then the last one 2 s more). Now `hookd serve` with such a collector, an
/// export under way when the signal comes, exits 0 within its grace (2 s here).
#[test]
fn sigterm_stops_the_daemon_within_its_grace_whatever_the_collector_does() {
    let p = chatty();
    let port = mute_collector();
    let mut d = start_with_env(
        &p,
        &[],
        true,
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )],
    );
    (0..50).for_each(|i| post_session(&d, i));
    // The exporter sends every second: let one export begin and hang on the collector.
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(d.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let ended = crate::support::eventually(Duration::from_secs(15), || {
        d.child.try_wait().unwrap().is_some()
    });
    let took = started.elapsed();
    eprintln!("SIGTERM with a mute collector: exited after {took:?} (grace 2 s)");
    assert!(ended, "still running after {took:?}");
    assert_eq!(d.child.wait().unwrap().code(), Some(0));
    assert!(took < Duration::from_secs(2), "{took:?}");
}
