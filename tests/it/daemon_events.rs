//! The daemon's event stream: ids, resumption from the ring and the events log, metrics, and
//! memory that stays within its budgets whatever hooks print or subscribers fail to read.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::daemon::{project, read_events, request, start, subscribe, tcp, unix};

#[test]
fn events_stream_with_ids_and_resume_without_a_gap() {
    let p = project();
    let d = start(&p, &[]);
    let body = json!({"point": "post_tool", "context": {"session_id": "e"}}).to_string();
    let mut first = subscribe(&d, None);
    tcp(&d, "POST", "/v1/dispatch", &body);
    let got = read_events(&mut first, 1);
    assert_eq!(got[0].0, 1);
    assert_eq!(got[0].1["type"], "hook_command");
    drop(first); // the dashboard goes away...
    for _ in 0..3 {
        tcp(&d, "POST", "/v1/dispatch", &body);
    }
    // ...and comes back, resuming after the last id it saw.
    let mut again = subscribe(&d, Some(1));
    let resumed = read_events(&mut again, 3);
    assert_eq!(
        resumed.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        [2, 3, 4]
    );
    assert!(resumed.iter().all(|(i, e)| e["seq"] == *i));
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_dispatches_total{point=\"post_tool\"} 4\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hookd_commands_total{status=\"ok\"} 4\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("# TYPE hookd_dispatch_duration_seconds histogram"),
        "{metrics}"
    );
}

#[test]
fn a_stalled_subscriber_never_slows_dispatches() {
    let p = project();
    let d = start(&p, &[]);
    let _stalled = subscribe(&d, None); // connected, never read
    let body = json!({"point": "post_tool", "context": {"session_id": "s"}}).to_string();
    let start = Instant::now();
    for _ in 0..60 {
        assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    }
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn the_events_log_survives_sigkill_and_rotates() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let mut d = start(
        &p,
        &[
            "--events",
            log.to_str().unwrap(),
            "--events-max-bytes",
            "4000",
        ],
    );
    let body = json!({"point": "post_tool", "context": {"session_id": "k"}}).to_string();
    for _ in 0..12 {
        assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(d.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    d.child.wait().unwrap();
    // Every event emitted before the kill is there, complete, across the rotated files.
    let mut seqs = Vec::new();
    for f in [
        log.with_extension("jsonl.3"),
        log.with_extension("jsonl.2"),
        log.with_extension("jsonl.1"),
        log.clone(),
    ] {
        if let Ok(text) = std::fs::read_to_string(&f) {
            assert!(
                std::fs::metadata(&f).unwrap().len() <= 4000,
                "{} was not rotated",
                f.display()
            );
            for line in text.lines() {
                let e: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                seqs.push(e["seq"].as_u64().unwrap());
            }
        }
    }
    assert!(log.with_extension("jsonl.1").exists(), "the log rotated");
    let first = seqs[0];
    assert_eq!(
        seqs,
        (first..=12).collect::<Vec<_>>(),
        "the newest events are all there, in order"
    );
    assert!(
        !log.with_extension("jsonl.4").exists(),
        "at most three old files are kept"
    );
}

#[test]
fn hookd_events_prints_the_stream_from_the_daemon_and_from_the_log() {
    let p = project();
    let log = p.path().join("ev.jsonl");
    let d = start(&p, &["--events", log.to_str().unwrap()]);
    let sock = d.socket.to_str().unwrap().to_string();
    let body = json!({"point": "post_tool", "context": {"session_id": "v"}}).to_string();
    for _ in 0..3 {
        tcp(&d, "POST", "/v1/dispatch", &body);
    }
    let out = p
        .cmd(&["events", "--since", "1"])
        .env("HOOKD_SOCKET", &sock)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("#2 ")
            && lines[0].contains("post_tool")
            && lines[0].contains("say (exit 0, "),
        "{text}"
    );
    let out = p
        .cmd(&["events", "--json"])
        .env("HOOKD_SOCKET", &sock)
        .output()
        .unwrap();
    let seqs: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    // Following: a new event shows up while the command runs.
    let mut follower = p
        .cmd(&["events", "--follow", "--since", "3", "--json"])
        .env("HOOKD_SOCKET", &sock)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(follower.stdout.take().unwrap());
    // The follower is subscribed (its witness: the daemon counts it) before the event exists.
    let subscribed = crate::support::eventually(Duration::from_secs(10), || {
        tcp(&d, "GET", "/metrics", "")
            .1
            .contains("\nhookd_subscribers 1\n")
    });
    assert!(subscribed, "{}", tcp(&d, "GET", "/metrics", "").1);
    tcp(&d, "POST", "/v1/dispatch", &body);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["seq"], 4);
    follower.kill().unwrap();
    follower.wait().unwrap();
    // The same events from the file, no daemon needed.
    drop(d);
    let out = p
        .cmd(&["events", "--file", log.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 4);
    let out = p
        .cmd(&["events"])
        .env("HOOKD_SOCKET", &sock)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no hookd daemon answers"));
}

#[test]
fn metrics_are_valid_prometheus_text() {
    let p = project();
    let d = start(&p, &[]);
    let body = json!({"point": "post_tool", "context": {"session_id": "m"}}).to_string();
    for _ in 0..3 {
        tcp(&d, "POST", "/v1/dispatch", &body);
    }
    let (status, raw) = tcp(&d, "GET", "/metrics", "");
    assert_eq!(status, 200);
    let metrics = raw;
    for line in [
        "# TYPE hookd_dispatches counter",
        "hookd_dispatches_total{point=\"post_tool\"} 3",
        "hookd_dispatches_total{point=\"pre_tool\"} 0",
        "# TYPE hookd_dispatch_duration_seconds histogram",
        "hookd_dispatch_duration_seconds_count{point=\"post_tool\"} 3",
        "hookd_dispatch_duration_seconds_bucket{le=\"+Inf\",point=\"post_tool\"} 3",
        "hookd_config_reloads_total{result=\"invalid\"} 0",
        "# TYPE hookd_sessions gauge",
        "# EOF",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no line `{line}` in:\n{metrics}"
        );
    }
    // A scraper that asks for the Prometheus text format gets it, and promtool accepts it.
    let host = format!("127.0.0.1:{}", d.port);
    let auth = format!("Bearer {}", d.token.as_ref().unwrap());
    let (status, text) = request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        "GET",
        "/metrics",
        &[
            ("Host", host.as_str()),
            ("Authorization", auth.as_str()),
            ("Accept", "text/plain;version=0.0.4;q=0.9,*/*;q=0.1"),
        ],
        "",
    );
    assert_eq!(status, 200);
    for line in [
        "# TYPE hookd_dispatches_total counter",
        "hookd_dispatches_total{point=\"post_tool\"} 3",
        "# TYPE hookd_dispatch_duration_seconds histogram",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line `{line}` in:\n{text}"
        );
    }
    assert!(!text.contains("# EOF"), "{text}");
    if crate::dashboard::installed("promtool") {
        let (ok, said) = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::process::Stdio::piped())
            .output_with_stdin(text.as_bytes());
        assert!(ok, "promtool: {said}\n{text}");
    } else {
        crate::support::unavailable(
            "promtool",
            "promtool not installed (apt-get install prometheus)",
        );
    }
}

/// `Command::output` with `input` on stdin: (success, stdout and stderr).
trait OutputWithStdin {
    fn output_with_stdin(&mut self, input: &[u8]) -> (bool, String);
}

impl OutputWithStdin for std::process::Command {
    fn output_with_stdin(&mut self, input: &[u8]) -> (bool, String) {
        use std::io::Write;
        let mut child = self
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let o = child.wait_with_output().unwrap();
        (
            o.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    }
}

#[test]
fn resuming_from_before_the_ring_reads_the_events_log_and_numbering_survives_a_restart() {
    let p = project();
    let log = p.path().join("events.jsonl");
    let args = ["--events", log.to_str().unwrap(), "--ring", "16"];
    let d = start(&p, &args);
    let body = json!({"point": "post_tool", "context": {"session_id": "l"}}).to_string();
    for _ in 0..40 {
        assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    }
    // Events 3..=24 are no longer in memory (the ring keeps 16); the log has them.
    let mut again = subscribe(&d, Some(2));
    let got = read_events(&mut again, 38);
    assert_eq!(
        got.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        (3..=40).collect::<Vec<_>>()
    );
    assert!(got
        .iter()
        .all(|(i, e)| e["seq"] == *i && e["type"] == "hook_command"));
    drop(again);
    drop(d);

    // A new daemon on the same log goes on from 40, so ids keep meaning one event.
    let d = start(&p, &args);
    assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    let mut s = subscribe(&d, Some(39));
    let got = read_events(&mut s, 2);
    assert_eq!(got.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [40, 41]);
}

/// The daemon's resident memory, in bytes.
fn resident(d: &crate::support::daemon::Daemon) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", d.child.id())).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// The `id:`s of a stream's events until `last`, and how many `missed` frames came.
fn ids_until(reader: &mut impl BufRead, last: u64) -> (Vec<u64>, usize) {
    let (mut ids, mut missed) = (Vec::new(), 0);
    let mut line = String::new();
    while ids.last().is_none_or(|i| *i < last) {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(id) = line.strip_prefix("id: ") {
            ids.push(id.trim().parse().unwrap());
        } else if line.starts_with("event: missed") {
            missed += 1;
        }
    }
    (ids, missed)
}

/// The load of issue 29, for real: 1,200 dispatches whose hook prints 65 KB, five subscribers
/// that never read. The daemon's memory grows by at most 64 MB, and a subscriber resuming after
/// an early id still gets every later event, in order (read back from the events log).
#[test]
fn memory_stays_within_its_budgets_whatever_hooks_print_and_subscribers_leave_unread() {
    let p = crate::support::Project::new();
    let text: String = (0..66_560u32)
        .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
        .collect();
    std::fs::write(p.path().join("big.txt"), text).unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^cat big.txt$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: big, hook: post_session, command: 'cat big.txt'}\n",
    );
    let log = p.path().join("events.jsonl");
    let d = start(&p, &["--events", log.to_str().unwrap()]);
    let dispatch = |i: usize| {
        let body =
            json!({"point": "post_session", "context": {"session_id": format!("s{}", i % 7)}});
        let (status, out) = unix(&d.socket, "POST", "/v1/dispatch", &body.to_string());
        assert_eq!(status, 200, "{out}");
    };
    (0..10).for_each(dispatch);
    std::thread::sleep(Duration::from_millis(300));
    let before = resident(&d);
    let stalled: Vec<_> = (0..5).map(|_| subscribe(&d, None)).collect();
    std::thread::scope(|s| {
        for k in 0..8 {
            s.spawn(move || (10 + k..1210).step_by(8).for_each(dispatch));
        }
    });
    let loaded = resident(&d);
    let (_, health) = tcp(&d, "GET", "/v1/health", "");
    let newest = serde_json::from_str::<Value>(&health).unwrap()["events"]
        .as_u64()
        .unwrap();
    assert_eq!(newest, 1210, "one hook_command per dispatch: {health}");
    let mut resumed = subscribe(&d, Some(5));
    let (ids, missed) = ids_until(&mut resumed, newest);
    assert_eq!(missed, 0);
    assert!(
        ids == (6..=newest).collect::<Vec<_>>(),
        "{:?}…",
        &ids[..ids.len().min(20)]
    );
    let after = resident(&d);
    eprintln!(
        "resident: {} KiB before, {} KiB after the load, {} KiB after the resume",
        before / 1024,
        loaded / 1024,
        after / 1024
    );
    const MB: u64 = 1024 * 1024;
    assert!(
        loaded.max(after) <= before + 64 * MB,
        "resident {} MB before, {} MB after the load, {} MB after the resume",
        before / MB,
        loaded / MB,
        after / MB
    );
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    let value = |name: &str| -> u64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {metrics}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(value("hookd_ring_bytes ") <= 32 * MB);
    assert!(value("hookd_ring_evicted_total{budget=\"bytes\"}") > 0);
    // The ring holds about 500 of these events: the rest came from the log.
    assert!(value("hookd_events_read_back_total ") >= 600);
    assert_eq!(value("hookd_events_dropped_total "), 0);
    drop(stalled);
}

/// Without an events file, what left the ring is gone: a subscriber resuming from before it is
/// told how many it missed and where the stream goes on, then gets the rest in order. A size
/// that is not one is refused before anything starts.
#[test]
fn without_an_events_file_a_resume_past_the_ring_is_told_what_it_missed() {
    let p = project();
    let refused = p.run(&["serve", "--ring-bytes", "lots"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        crate::support::stderr(&refused).contains(
            "`lots` is not a size: a number of bytes, or one with K, M or G after it (e.g. 32M)"
        ),
        "{}",
        crate::support::stderr(&refused)
    );
    let d = start(&p, &["--ring-bytes", "2K"]);
    let body = json!({"point": "post_tool", "context": {"session_id": "r"}}).to_string();
    for _ in 0..20 {
        assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    }
    let mut s = subscribe(&d, Some(1));
    let mut missed = None;
    let mut line = String::new();
    while missed.is_none() {
        line.clear();
        s.read_line(&mut line).unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            missed = Some(serde_json::from_str::<Value>(data).unwrap());
        }
    }
    let missed = missed.unwrap();
    let from = missed["resume_from"].as_u64().unwrap();
    assert_eq!(missed["missed"].as_u64(), Some(from - 2), "{missed}");
    assert!(from > 10, "a 2 KiB ring keeps a few small events: {missed}");
    let rest = read_events(&mut s, (20 - from + 1) as usize);
    assert_eq!(
        rest.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        (from..=20).collect::<Vec<_>>()
    );
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains(&format!("hookd_events_dropped_total {}\n", from - 2)),
        "{metrics}"
    );
}
