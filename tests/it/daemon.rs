//! `hookd serve`: dispatch over the socket and HTTP, listening, reloads, shutdown.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::daemon::{
    project, read_events, request, running_below, start, start_with, subscribe, tcp, unix,
};
use crate::support::{eventually, Project};

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
    let mut sleeper = None;
    let started = eventually(Duration::from_secs(10), || {
        sleeper = running_below(&d, "^sleep 30$");
        sleeper.is_some()
    });
    assert!(started, "the hook never started");
    let sleeper = sleeper.unwrap();
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
fn a_daemon_serves_another_project_with_that_projects_own_hooks() {
    let served = project();
    let d = start(&served, &[]);
    // Another project of the same user, its own hook: it runs, through the daemon, there.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join(".infer")).unwrap();
    std::fs::write(
        other.path().join(".infer/config.yaml"),
        "tools: {bash: {mode: {all: {allow: ['^pwd$']}}}}\n",
    )
    .unwrap();
    std::fs::write(
        other.path().join(".infer/hooks.yaml"),
        "enabled: true\nhooks: [{name: mine, hook: post_tool, command: 'pwd'}]\n",
    )
    .unwrap();
    let out = served
        .cmd(&[
            "dispatch",
            "post_tool",
            "--session-id",
            "o",
            "--daemon",
            "--events",
            "-",
        ])
        .current_dir(other.path())
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["commands"][0]["name"], "mine", "{outcome}");
    assert_eq!(
        err,
        format!(
            "hookd: dispatching through the daemon at {}; its events go to its stream (GET /v1/events)\n",
            d.socket.display()
        )
    );
    let (_, events) = unix(
        &d.socket,
        "GET",
        "/v1/events?follow=false&since=0&session=o",
        "",
    );
    let here = other.path().canonicalize().unwrap();
    assert!(
        events.contains(&format!("\"stdout\":\"{}\\n\"", here.display())),
        "{events}"
    );
    let (_, metrics) = tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_dispatches_total{point=\"post_tool\"} 1\n")
            && metrics.contains("\nhookd_projects 2\n"),
        "{metrics}"
    );
    // Another user's settings (another home): refused, said on both sides.
    let stranger = Project::new();
    let out = stranger
        .cmd(&["dispatch", "post_tool", "--session-id", "x"])
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("other settings than this client's")
            && err.contains("dispatching in this process"),
        "{err}"
    );
    let (_, events) = unix(
        &d.socket,
        "GET",
        "/v1/events?follow=false&since=0&session=x",
        "",
    );
    assert!(events.contains("\"type\":\"client_refused\""), "{events}");
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

/// SIGALRM, SIGUSR1 and SIGUSR2 ended the daemon by their default, without its stop: the
/// confined hooks it ran were left running, unsettled (attack round 9 of 2026-11-27). Each now
/// stops it as SIGTERM does: a clean exit.
#[test]
fn the_signals_whose_default_would_end_the_daemon_stop_it_cleanly() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGALRM, Signal::SIGUSR1, Signal::SIGUSR2] {
        let p = project();
        let mut d = start(&p, &[]);
        let pid = nix::unistd::Pid::from_raw(d.child.id() as i32);
        nix::sys::signal::kill(pid, sig).unwrap();
        let status = d.child.wait().unwrap();
        assert!(status.success(), "{sig}: {status}");
        assert!(!d.socket.exists(), "{sig}: the socket is left");
    }
}
