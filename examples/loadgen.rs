//! A load generator for `hookd serve`: round-trip latency, dispatch throughput and event fan-out
//! to many SSE subscribers. Loopback only (a Unix socket), bounded in count and time.
//!
//! ```text
//! hookd serve --config-dir benches/load --socket /tmp/hookd-load.sock &
//! cargo run --release --example loadgen -- /tmp/hookd-load.sock
//! ```
//! `scripts/load.sh` does both. The configuration in `benches/load/` has nothing due at
//! `pre_tool` and one reminder (one event, no process) on every `pre_stream`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookd::daemon::client::{self, ClientError, Connection};
use std::os::unix::net::UnixStream;

/// One keep-alive connection, as an agent's adapter would hold.
struct Conn(Connection<UnixStream>);

impl Conn {
    fn open(socket: &Path) -> Result<Conn, ClientError> {
        Connection::open(socket, Duration::from_secs(10)).map(Conn)
    }

    /// POST a dispatch with nothing but a session; the status.
    fn dispatch(&mut self, point: &str, session: &str) -> Result<u16, ClientError> {
        let body = serde_json::json!({"point": point, "context": {"session_id": session}});
        Ok(self
            .0
            .request("POST", "/v1/dispatch", &[], &body.to_string())?
            .0)
    }

    /// GET /v1/health: the same HTTP round trip without a dispatch, the baseline.
    fn health(&mut self) -> Result<u16, ClientError> {
        Ok(self.0.request("GET", "/v1/health", &[], "")?.0)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Sequential requests on one connection: the round trip of a dispatch with nothing due, and
/// of `/v1/health` (the HTTP stack alone), interleaved so noise hits both alike.
fn latency(socket: &Path, n: usize) -> Result<(), ClientError> {
    let mut c = Conn::open(socket)?;
    for _ in 0..200 {
        c.dispatch("pre_tool", "warm")?;
    }
    let (mut dispatch, mut health) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        assert_eq!(c.dispatch("pre_tool", "lat")?, 200);
        dispatch.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(c.health()?, 200);
        health.push(t.elapsed());
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for (what, times) in [
        ("dispatch, nothing due", &mut dispatch),
        ("health (baseline)", &mut health),
    ] {
        times.sort();
        println!(
            "round trip, {what} ({n} sequential): p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs",
            us(percentile(times, 0.5)),
            us(percentile(times, 0.9)),
            us(percentile(times, 0.99))
        );
    }
    println!(
        "  dispatch / health p50 ratio: {:.2}",
        us(percentile(&dispatch, 0.5)) / us(percentile(&health, 0.5))
    );
    Ok(())
}

/// `clients` connections dispatching as fast as answered for `secs`: dispatches per second.
fn throughput(socket: &Path, clients: usize, secs: f64) -> Result<(), ClientError> {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let done = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let socket = socket.to_path_buf();
            let done = done.clone();
            std::thread::spawn(move || -> Result<(), ClientError> {
                let mut c = Conn::open(&socket)?;
                let session = format!("tp{i}");
                while Instant::now() < deadline {
                    assert_eq!(c.dispatch("pre_tool", &session)?, 200);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    let start = Instant::now();
    for t in threads {
        t.join().expect("client thread")?;
    }
    let n = done.load(Ordering::Relaxed);
    println!(
        "throughput, nothing due ({clients} connections, {secs} s): {:.0} dispatches/s",
        n as f64 / start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `subs` SSE subscribers while dispatches produce `rate` events/s for `secs`: what each got.
fn fanout(socket: &Path, subs: usize, rate: u64, secs: u64) -> Result<(), ClientError> {
    let mut readers = Vec::new();
    for _ in 0..subs {
        let socket = socket.to_path_buf();
        // Count events and gaps in their ids, until the stream is quiet for 2 s after the last.
        readers.push(std::thread::spawn(move || {
            let (mut got, mut gaps, mut last) = (0u64, 0u64, None::<u64>);
            let quiet = Some(Duration::from_secs(2));
            let read = client::sse(&socket, "/v1/events", quiet, |_, id, _| {
                if let Some(id) = id {
                    if last.is_some_and(|l| id != l + 1) {
                        gaps += 1;
                    }
                    last = Some(id);
                    got += 1;
                }
                true
            });
            if let Err(e) = read {
                eprintln!("a subscriber: {e}");
            }
            (got, gaps)
        }));
    }
    std::thread::sleep(Duration::from_millis(300)); // let every subscriber attach
    let total = rate * secs;
    let writers = 4u64;
    let start = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let socket = socket.to_path_buf();
            std::thread::spawn(move || -> Result<(), ClientError> {
                let mut c = Conn::open(&socket)?;
                let mine = total / writers;
                let per = Duration::from_secs_f64(writers as f64 / rate as f64);
                for i in 0..mine {
                    // Paced: the i-th dispatch of this writer is due at start + i·per.
                    let due = start + per * i as u32;
                    if let Some(wait) = due.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    assert_eq!(c.dispatch("pre_stream", &format!("fan{w}"))?, 200);
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread")?;
    }
    let sent = (total / writers) * writers;
    let elapsed = start.elapsed().as_secs_f64();
    let results: Vec<(u64, u64)> = readers
        .into_iter()
        .map(|r| r.join().expect("reader thread"))
        .collect();
    let complete = results
        .iter()
        .filter(|(g, gaps)| *g == sent && *gaps == 0)
        .count();
    let least = results.iter().map(|(g, _)| *g).min().unwrap_or(0);
    println!(
        "fan-out: {sent} events in {elapsed:.2} s ({:.0} events/s) to {subs} subscribers: {complete} got every event in order, the fewest got {least}",
        sent as f64 / elapsed
    );
    Ok(())
}

fn main() -> Result<(), ClientError> {
    let mut args = std::env::args().skip(1);
    let Some(socket) = args.next().map(PathBuf::from) else {
        eprintln!("usage: loadgen SOCKET [SUBSCRIBERS] [EVENTS_PER_SECOND] [SECONDS]");
        std::process::exit(2);
    };
    let num = |a: Option<String>, d: u64| a.and_then(|s| s.parse().ok()).unwrap_or(d);
    let subs = num(args.next(), 100).min(1000) as usize;
    let rate = num(args.next(), 5000).min(100_000);
    let secs = num(args.next(), 5).min(60);
    latency(&socket, 20_000)?;
    throughput(&socket, 1, 3.0)?;
    throughput(&socket, 4, 3.0)?;
    fanout(&socket, subs, rate, secs)
}
