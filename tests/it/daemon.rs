//! `hookd serve`: a real daemon on a temporary socket and port 0, driven over raw HTTP/1.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::Project;

pub(crate) struct Daemon {
    pub(crate) child: Child,
    pub(crate) socket: PathBuf,
    pub(crate) port: u16,
    /// The generated HTTP token (`None` when the test gave --token).
    pub(crate) token: Option<String>,
    /// The dashboard's URL, as `hookd serve` printed it.
    pub(crate) dashboard: Option<String>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start(p: &Project, extra: &[&str]) -> Daemon {
    start_with(p, extra, true)
}

/// `trusted: false` starts it as a user would, without HOOKD_TRUST_PROJECT.
pub(crate) fn start_with(p: &Project, extra: &[&str], trusted: bool) -> Daemon {
    let socket = p.path().join("hookd.sock");
    let mut args = vec![
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--grace",
        "2",
    ];
    if !extra.contains(&"--listen") {
        args.extend(["--listen", "127.0.0.1:0"]);
    }
    args.extend_from_slice(extra);
    let mut cmd = if trusted {
        p.cmd(&args)
    } else {
        p.cmd_untrusted(&args)
    };
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("hookd: listening on unix:"), "{line}");
    let port = line.trim().rsplit(':').next().unwrap().parse().unwrap();
    // With HTTP: the token line, then `dashboard: URL`.
    let mut dashboard = None;
    if line.contains("http://") {
        for _ in 0..2 {
            line.clear();
            err.read_line(&mut line).unwrap();
            if let Some(url) = line.trim().strip_prefix("dashboard: ") {
                dashboard = Some(url.to_string());
            }
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let token = std::fs::read_to_string(p.path().join("hookd.token")).ok();
    Daemon {
        child,
        socket,
        port,
        token,
        dashboard,
    }
}

/// One request; `Host: hookd` and, on a POST, `Content-Type: application/json` unless
/// `headers` give their own.
pub(crate) fn request(
    stream: &mut (impl Read + Write),
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    hookd::daemon::client::exchange(stream, method, path, headers, body).unwrap()
}

/// Over HTTP as a legitimate client: the daemon's address as Host, its generated token.
pub(crate) fn tcp(d: &Daemon, method: &str, path: &str, body: &str) -> (u16, String) {
    let host = format!("127.0.0.1:{}", d.port);
    let auth = d.token.as_ref().map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Host", host.as_str())];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        method,
        path,
        &headers,
        body,
    )
}

pub(crate) fn unix(socket: &Path, method: &str, path: &str, body: &str) -> (u16, String) {
    request(
        &mut UnixStream::connect(socket).unwrap(),
        method,
        path,
        &[],
        body,
    )
}

fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo [a-z0-9]+$', '^sleep 30$']}}}}\n",
    );
    p.write("hooks.yaml", "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo hello'}\n  - {name: long, hook: post_session, command: 'sleep 30'}\n");
    p
}

/// Read SSE `id:`/`data:` pairs from an open event stream until `n` events arrived.
fn read_events(reader: &mut impl BufRead, n: usize) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    let mut id = None;
    let mut line = String::new();
    while out.len() < n {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(v) = line.strip_prefix("id: ") {
            id = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("data: ") {
            if let (Some(i), Ok(json)) = (id.take(), serde_json::from_str(v.trim())) {
                out.push((i, json));
            }
        }
    }
    out
}

fn subscribe(d: &Daemon, last_id: Option<u64>) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let last = last_id
        .map(|i| format!("Last-Event-ID: {i}\r\n"))
        .unwrap_or_default();
    let auth = d
        .token
        .as_ref()
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!(
            "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}{last}\r\n",
            d.port
        )
        .as_bytes(),
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    r
}

#[test]
fn dispatch_over_the_socket_and_http_gives_the_cli_outcome() {
    let p = project();
    let d = start(&p, &[]);
    let mode = std::fs::metadata(&d.socket).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    let body = json!({"point": "post_tool", "context": {"session_id": "a", "turn": 2}}).to_string();
    let (s1, o1) = unix(&d.socket, "POST", "/v1/dispatch", &body);
    let (s2, o2) = tcp(&d, "POST", "/v1/dispatch", &body);
    assert_eq!((s1, s2), (200, 200));
    let cli = p.run_with_stdin(
        &["dispatch", "post_tool", "--session-id", "a", "--turn", "2"],
        "{}",
    );
    let strip = |t: &str| {
        let mut v: Value = serde_json::from_str(t).unwrap();
        v["commands"][0]["duration_ms"] = json!(0);
        v
    };
    assert_eq!(strip(&o1), strip(&o2));
    assert_eq!(strip(&o1), strip(&String::from_utf8_lossy(&cli.stdout)));
    let (s, h) = tcp(&d, "GET", "/v1/health", "");
    assert_eq!(s, 200);
    assert_eq!(serde_json::from_str::<Value>(&h).unwrap()["status"], "ok");
}

#[test]
fn one_kept_connection_carries_dispatches_streams_and_errors_in_turn() {
    // As an agent's adapter or the load generator holds it: answers with a length, chunked
    // answers (the event stream, read to its end), HEAD and an error, one after another.
    let p = project();
    let d = start(&p, &[]);
    let mut c =
        hookd::daemon::client::Connection::open(&d.socket, Duration::from_secs(10)).unwrap();
    let body = json!({"point": "post_tool", "context": {"session_id": "k"}}).to_string();
    for _ in 0..3 {
        let (status, outcome) = c.request("POST", "/v1/dispatch", &[], &body).unwrap();
        assert_eq!(status, 200, "{outcome}");
        let v: Value = serde_json::from_str(&outcome).unwrap();
        assert_eq!(v["commands"][0]["status"], "ok", "{v}");
        let (status, events) = c
            .request("GET", "/v1/events?follow=false&since=0&session=k", &[], "")
            .unwrap();
        assert_eq!(status, 200);
        assert!(events.contains("\"type\":\"hook_command\""), "{events}");
        assert_eq!(c.request("HEAD", "/v1/health", &[], "").unwrap().0, 200);
        let (status, error) = c.request("POST", "/v1/dispatch", &[], "{").unwrap();
        assert_eq!(status, 400, "{error}");
        let (status, health) = c.request("GET", "/v1/health", &[], "").unwrap();
        assert_eq!((status, health.contains("\"ok\"")), (200, true), "{health}");
    }
}

#[test]
fn bad_requests_get_a_4xx_that_says_what_was_wrong() {
    let p = project();
    let d = start(&p, &[]);
    let (s, b) = tcp(&d, "POST", "/v1/dispatch", r#"{"point": "post_sesion"}"#);
    assert_eq!(s, 400);
    assert!(
        b.contains("unknown hook point `post_sesion` (did you mean `post_session`?)"),
        "{b}"
    );
    let (s, b) = tcp(&d, "POST", "/v1/dispatch", "not json");
    assert_eq!(s, 400);
    assert!(b.starts_with(r#"{"error":"expected {\"point\""#), "{b}");
    let (s, _) = tcp(
        &d,
        "POST",
        "/v1/dispatch",
        r#"{"point": "pre_tool", "context": [1]}"#,
    );
    assert_eq!(s, 400);
    let (s, b) = tcp(
        &d,
        "POST",
        "/v1/dispatch",
        r#"{"point": "pre_tool", "context": {"turn": "x"}}"#,
    );
    assert_eq!(s, 400);
    assert!(b.contains("`turn` must be a whole number"), "{b}");
}

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
fn a_live_daemon_is_not_replaced_and_a_stale_socket_is() {
    let p = project();
    let d = start(&p, &[]);
    let out = p
        .cmd(&["serve", "--socket", d.socket.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: a hookd daemon is already listening on {}; stop it first, or pass another --socket\n", d.socket.display())
    );
    drop(d);
    // The killed daemon left its socket behind: the next one takes it over.
    let stale = p.path().join("hookd.sock");
    assert!(stale.exists());
    let d2 = start(&p, &[]);
    assert_eq!(unix(&d2.socket, "GET", "/v1/health", "").0, 200);
}

#[test]
fn only_loopback_without_a_token_and_the_token_is_enforced() {
    let p = project();
    let out = p
        .cmd(&[
            "serve",
            "--socket",
            p.path().join("x.sock").to_str().unwrap(),
            "--listen",
            "0.0.0.0:0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "is not a loopback address; hookd listens beyond this machine only with --token"
    ));
    let d = start(&p, &["--token", "s3cret"]);
    assert_eq!(tcp(&d, "GET", "/v1/events", "").0, 401);
    assert_eq!(
        tcp(&d, "POST", "/v1/dispatch", r#"{"point":"pre_tool"}"#).0,
        401
    );
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    assert_eq!(
        request(
            &mut s,
            "POST",
            "/v1/dispatch",
            &[
                ("Authorization", "Bearer s3cret"),
                ("Host", &format!("127.0.0.1:{}", d.port))
            ],
            r#"{"point":"pre_tool"}"#
        )
        .0,
        200
    );
    // The Unix socket is protected by its file mode instead.
    assert_eq!(
        unix(&d.socket, "POST", "/v1/dispatch", r#"{"point":"pre_tool"}"#).0,
        200
    );
}

#[test]
fn sigterm_with_a_hook_running_leaves_no_process_and_no_socket() {
    let p = project();
    let mut d = start(&p, &[]);
    let socket = d.socket.clone();
    let body = json!({"point": "post_session", "context": {"session_id": "t"}}).to_string();
    let sock2 = socket.clone();
    let client = std::thread::spawn(move || unix(&sock2, "POST", "/v1/dispatch", &body));
    // Wait for the hook's `sleep 30` to be running.
    let start = Instant::now();
    let sleeper = loop {
        // The daemon's own child: other tests may run a `sleep 30` of their own meanwhile.
        let out = std::process::Command::new("pgrep")
            .args(["-P", &d.child.id().to_string(), "-f", "^sleep 30$"])
            .output()
            .unwrap();
        if let Some(pid) = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
        {
            break pid.parse::<i32>().unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the hook never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(d.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = d.child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
    assert!(!socket.exists(), "the socket was removed");
    let alive = std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
        .map(|s| !s.rsplit(')').next().unwrap().trim_start().starts_with('Z'))
        .unwrap_or(false);
    assert!(!alive, "the hook's process survived the daemon");
    let _ = client.join();
}

#[test]
fn hookd_dispatch_forwards_to_a_running_daemon() {
    let p = project();
    let d = start(&p, &[]);
    let sock = d.socket.to_str().unwrap().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["dispatch", "post_tool", "--session-id", "f"];
        args.extend_from_slice(extra);
        p.cmd(&args).env("HOOKD_SOCKET", &sock).output().unwrap()
    };
    let out = run(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["commands"][0]["status"], "ok");
    assert!(run(&["--no-daemon"]).status.success());
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_dispatches_total{point=\"post_tool\"} 1\n"),
        "only the forwarded one: {metrics}"
    );
    drop(d);
    let out = p
        .cmd(&["dispatch", "post_tool", "--daemon"])
        .env("HOOKD_SOCKET", &sock)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: no hookd daemon for this project answers at {sock}; start one here with `hookd serve`\n")
    );
    // Without --daemon, no daemon means in-process.
    assert!(p
        .cmd(&["dispatch", "post_tool"])
        .env("HOOKD_SOCKET", &sock)
        .output()
        .unwrap()
        .status
        .success());
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
    std::thread::sleep(Duration::from_millis(200));
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
fn a_changed_configuration_is_reloaded_and_an_invalid_one_is_reported_and_ignored() {
    let p = project();
    let d = start(&p, &[]);
    let mut events = subscribe(&d, None);
    let body = json!({"point": "post_tool", "context": {"session_id": "r"}}).to_string();
    let ran = |events: &mut BufReader<TcpStream>| {
        tcp(&d, "POST", "/v1/dispatch", &body);
        let e = read_events(events, 1).remove(0).1;
        assert_eq!(e["type"], "hook_command", "{e}");
        e["command"].as_str().unwrap().to_string()
    };
    assert_eq!(ran(&mut events), "echo hello");

    // An edit is picked up without a restart, and said so on the stream.
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo reloaded'}\n",
    );
    let e = read_events(&mut events, 1).remove(0).1;
    assert_eq!(e["type"], "config_reloaded", "{e}");
    assert_eq!(e["cause"], "changed");
    assert!(
        e["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().ends_with("hooks.yaml")),
        "{e}"
    );
    assert_eq!(ran(&mut events), "echo reloaded");

    // A broken edit names the file and line, and the running configuration stays.
    p.write("hooks.yaml", "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo broken'}\n  - {name: x, hook: nowhere, command: 'echo x'}\n");
    let e = read_events(&mut events, 1).remove(0).1;
    assert_eq!(e["type"], "config_error", "{e}");
    assert!(e["file"].as_str().unwrap().ends_with("hooks.yaml"), "{e}");
    assert_eq!(e["line"], 4, "{e}");
    assert!(e["message"].as_str().unwrap().contains("nowhere"), "{e}");
    assert!(
        e["diagnostics"].as_str().unwrap().contains("hooks.yaml:4"),
        "{e}"
    );
    assert_eq!(ran(&mut events), "echo reloaded");

    // SIGHUP reloads on demand; session state and numbering carry over.
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo hup'}\n",
    );
    let _ = read_events(&mut events, 1); // the change itself is noticed too
    let status = std::process::Command::new("kill")
        .args(["-HUP", &d.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let e = read_events(&mut events, 1).remove(0);
    assert_eq!(e.1["type"], "config_reloaded", "{}", e.1);
    assert_eq!(e.1["cause"], "sighup");
    assert_eq!(e.0, 7, "seq continues across reloads: {}", e.1);
    assert_eq!(ran(&mut events), "echo hup");
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_config_reloads_total{result=\"ok\"} 3\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hookd_config_reloads_total{result=\"invalid\"} 1\n"),
        "{metrics}"
    );
}

#[test]
fn an_idle_session_is_forgotten_after_session_idle() {
    let p = project();
    p.write(
        "reminders.yaml",
        "enabled: true\nreminders:\n  - {name: first, hook: pre_stream, trigger: once, text: hello}\n  - {name: rare, hook: pre_stream, trigger: interval, interval: 100, text: hi}\n",
    );
    let d = start(&p, &["--session-idle", "1"]);
    let turn = |session: &str| {
        let body = json!({"point": "pre_stream", "context": {"session_id": session}}).to_string();
        let (status, out) = unix(&d.socket, "POST", "/v1/dispatch", &body);
        assert_eq!(status, 200, "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        (
            v["session_turn"].as_u64().unwrap(),
            v["reminders"].as_array().unwrap().len(),
        )
    };
    assert_eq!(turn("s"), (1, 1));
    assert_eq!(turn("s"), (2, 0), "`once` fired already");
    assert_eq!(turn("other"), (1, 1), "sessions are separate");
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(
        turn("s"),
        (1, 1),
        "after the idle time the session starts over"
    );
    let (_, metrics) = unix(&d.socket, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_sessions 1\n"),
        "`other` expired too: {metrics}"
    );

    let out = p.run(&["serve", "--session-idle", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--session-idle"));
}

/// /metrics is encoded by prometheus-client (OpenMetrics text): the lines dashboards and alerts
/// read are asserted exactly here; a real Prometheus parses the whole of it in
/// `dashboard::a_real_prometheus_scrapes_hookd_with_the_token_file` (promtool's `check metrics`
/// reads only the older text format).
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
        eprintln!("promtool: skipped: not installed (apt-get install prometheus)");
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

#[test]
fn sessions_dispatching_at_once_do_not_wait_for_each_other() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sleep 0\\.5$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: s, hook: post_session, command: 'sleep 0.5'}]\n",
    );
    let d = start(&p, &[]);
    let started = Instant::now();
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let socket = d.socket.clone();
            std::thread::spawn(move || {
                let body =
                    json!({"point": "post_session", "context": {"session_id": format!("c{i}")}});
                unix(&socket, "POST", "/v1/dispatch", &body.to_string())
            })
        })
        .collect();
    for c in clients {
        let (status, out) = c.join().unwrap();
        assert_eq!(status, 200, "{out}");
        assert!(out.contains("\"status\":\"ok\""), "{out}");
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(1800),
        "four 0.5 s hooks took {took:?}: they queued"
    );
}

#[test]
fn editing_a_trusted_hook_script_under_a_running_daemon_untrusts_it_at_once() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./hook\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_tool, command: ./hook.sh}]\n",
    );
    let script = p.path().join("hook.sh");
    std::fs::write(&script, "#!/bin/sh\necho reviewed\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(p
        .cmd_untrusted(&["trust"])
        .output()
        .unwrap()
        .status
        .success());
    let d = start_with(&p, &[], false);
    let body = json!({"point": "post_tool", "context": {"session_id": "t"}}).to_string();
    let status_of = || {
        let (_, out) = unix(&d.socket, "POST", "/v1/dispatch", &body);
        let v: Value = serde_json::from_str(&out).unwrap();
        (
            v["commands"][0]["status"].as_str().unwrap().to_string(),
            v["commands"][0]["reason"].clone(),
        )
    };
    assert_eq!(status_of().0, "ok", "trusted by record");
    // The agent rewrites the script the user reviewed; the very next dispatch must not run it,
    // not even in the second before the daemon's watcher reloads.
    std::fs::write(&script, "#!/bin/sh\ntouch pwned\n").unwrap();
    let (status, reason) = status_of();
    assert_eq!((status.as_str(), reason), ("skipped", json!("untrusted")));
    assert!(!p.path().join("pwned").exists());
    // After the reload the project is untrusted as a whole, and stays so.
    std::thread::sleep(Duration::from_millis(1600));
    let (status, reason) = status_of();
    assert_eq!((status.as_str(), reason), ("skipped", json!("untrusted")));
    assert!(!p.path().join("pwned").exists());
}

#[test]
fn a_daemon_serving_another_project_is_not_used() {
    let served = project();
    let d = start(&served, &[]);
    // Another project, its own hook: it must run here, not the daemon's project's hook there.
    let other = Project::new();
    other.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo elsewhere$']}}}}\n",
    );
    other.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: mine, hook: post_tool, command: 'echo elsewhere'}]\n",
    );
    let out = other
        .cmd(&["dispatch", "post_tool", "--session-id", "o"])
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["commands"][0]["name"], "mine");
    // Not silently: the operator learns the daemon was not used, and why.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("this daemon serves the project")
            && err.contains("dispatching in this process"),
        "{err}"
    );
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_dispatches_total{point=\"post_tool\"} 0\n"),
        "{metrics}"
    );
    // Asked directly, the daemon says why.
    let body = json!({"point": "post_tool", "project": other.path()}).to_string();
    let (status, answer) = unix(&d.socket, "POST", "/v1/dispatch", &body);
    assert_eq!(status, 409);
    assert!(
        answer.contains("this daemon serves the project"),
        "{answer}"
    );
}

/// A one-shot fake daemon on a Unix socket: reads the request head, writes `answer`.
fn fake_daemon(answer: &'static [u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fake.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        // The whole head first (the client writes it in pieces), then the answer.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let _ = s.write_all(answer);
    });
    (dir, socket)
}

#[test]
fn the_client_reads_chunked_answers_and_names_a_malformed_one() {
    use hookd::daemon::client::{post, ClientError};
    let secs = Duration::from_secs(5);
    let (_d, socket) = fake_daemon(
        b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    );
    let (status, body) = post(&socket, "/v1/dispatch", "{}", secs, secs).unwrap();
    assert_eq!((status, body.as_str()), (409, "hello world"));

    let (_d, socket) = fake_daemon(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(
        post(&socket, "/v1/dispatch", "{}", secs, secs).unwrap(),
        (200, "{}".to_string())
    );

    let (_d, socket) = fake_daemon(b"SMTP ready\r\n\r\n");
    let e = post(&socket, "/v1/dispatch", "{}", secs, secs).unwrap_err();
    assert!(matches!(e, ClientError::Malformed(_)), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("the daemon's answer is malformed: "),
        "{e}"
    );

    let (_d, socket) = fake_daemon(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    let e = post(&socket, "/v1/dispatch", "{}", secs, secs).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the daemon's answer is malformed: a malformed chunk size"
    );
}
