//! Can the dashboard keep up? Headless Chromium holds the page while dispatches produce a
//! steady rate of events (default 1,000 a second for a minute, spread over 20 sessions); every
//! second the page is asked, over the DevTools protocol, how much it received and rendered, and
//! how long it takes to answer (a frozen page answers late). `scripts/dashboard-bench.sh` starts
//! the daemon and runs this.
//!
//! ```text
//! dashbench SOCKET DASHBOARD_URL [EVENTS_PER_SECOND] [SECONDS] [SESSIONS]
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hookd::daemon::client::Connection;
use serde_json::Value;

#[allow(dead_code)]
#[path = "../tests/it/cdp.rs"]
mod cdp;

/// Paced writers: `rate` dispatches a second (one event each) for `secs`, over `sessions`.
fn load(socket: &Path, rate: u64, secs: u64, sessions: u64) -> std::thread::JoinHandle<u64> {
    let socket = socket.to_path_buf();
    std::thread::spawn(move || {
        let writers = 4u64;
        let start = Instant::now();
        let threads: Vec<_> = (0..writers)
            .map(|w| {
                let socket = socket.clone();
                std::thread::spawn(move || {
                    let mut conn =
                        Connection::open(&socket, Duration::from_secs(10)).expect("connect");
                    let per = Duration::from_secs_f64(writers as f64 / rate as f64);
                    let mine = rate * secs / writers;
                    for i in 0..mine {
                        let due = start + per * i as u32;
                        if let Some(wait) = due.checked_duration_since(Instant::now()) {
                            std::thread::sleep(wait);
                        }
                        let session = format!("session-{}", (i * writers + w) % sessions);
                        let body = serde_json::json!({"point": "pre_stream",
                            "context": {"session_id": session}});
                        let (status, _) = conn
                            .request("POST", "/v1/dispatch", &[], &body.to_string())
                            .expect("dispatch");
                        assert_eq!(status, 200);
                    }
                    mine
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().expect("writer")).sum()
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(socket), Some(url)) = (args.next().map(PathBuf::from), args.next()) else {
        eprintln!("usage: dashbench SOCKET DASHBOARD_URL [EVENTS_PER_SECOND] [SECONDS] [SESSIONS]");
        std::process::exit(2);
    };
    let num = |a: Option<String>, d: u64| a.and_then(|s| s.parse().ok()).unwrap_or(d);
    let rate = num(args.next(), 1000).clamp(1, 20_000);
    let secs = num(args.next(), 60).clamp(1, 600);
    let sessions = num(args.next(), 20).max(1);
    let Some(exe) = cdp::chromium() else {
        eprintln!("chromium is not installed (apt-get install chromium)");
        std::process::exit(2);
    };
    let browser = cdp::Browser::launch(&exe);
    let mut tab = browser.open(&url);
    tab.wait_for(
        "document.getElementById('conn').className === 'live'",
        "a live stream",
    );
    let stats = |tab: &mut cdp::Tab| -> (Value, f64) {
        let asked = Instant::now();
        let v = tab.eval("window.hookdStats");
        (v, asked.elapsed().as_secs_f64() * 1000.0)
    };
    let (before, _) = stats(&mut tab);
    let first_seq = before["lastSeq"].as_u64().unwrap_or(0);
    println!("{rate} events/s for {secs} s over {sessions} sessions; the page asked every second");
    println!(
        "{:>5} {:>10} {:>10} {:>12} {:>14}",
        "s", "received", "on page", "answer ms", "worst frame ms"
    );
    let writer = load(&socket, rate, secs, sessions);
    let start = Instant::now();
    let mut answers = Vec::new();
    let mut lags = Vec::new();
    let mut t = 1;
    while !writer.is_finished() || t <= secs {
        let due = start + Duration::from_secs(t);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (s, answer) = stats(&mut tab);
        let received = s["received"].as_u64().unwrap_or(0);
        let sent_by_now = (rate * t).min(rate * secs);
        answers.push(answer);
        lags.push(
            sent_by_now.saturating_sub(s["lastSeq"].as_u64().unwrap_or(0) - first_seq) as f64,
        );
        if t % 10 == 0 || t == 1 {
            println!(
                "{t:>5} {received:>10} {:>10} {answer:>12.1} {:>14.1}",
                s["rows"],
                s["worstFrameMs"].as_f64().unwrap_or(0.0)
            );
        }
        t += 1;
    }
    let sent = writer.join().expect("load");
    // Let the last events arrive, then read the final state.
    std::thread::sleep(Duration::from_secs(2));
    let (s, _) = stats(&mut tab);
    let heap = tab.call("Performance.enable", serde_json::json!({}));
    let _ = heap;
    let metrics = tab.call("Performance.getMetrics", serde_json::json!({}));
    let heap_mb = metrics["result"]["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == "JSHeapUsedSize"))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or(0.0)
        / 1e6;
    let received = s["lastSeq"].as_u64().unwrap_or(0) - first_seq;
    let worst = answers.iter().copied().fold(0.0, f64::max);
    println!(
        "sent {sent} events in {secs} s; the page received {received} ({}), {} rows on it, worst frame gap {:.0} ms, answers to the DevTools probe median {:.1} ms, worst {worst:.1} ms, events behind at a probe median {:.0}, JS heap {heap_mb:.1} MB",
        if received == sent { "all" } else { "NOT all" },
        s["rows"],
        s["worstFrameMs"].as_f64().unwrap_or(0.0),
        median(&mut answers.clone()),
        median(&mut lags),
    );
}
