//! The attacker's review of the live dashboard (issue 15): a hostile web page in the browser
//! that has the dashboard open, a hostile agent or repository whose text ends up in the events
//! the page shows, and the read-only key itself. Each test performs the attack for real; a
//! marker file proves that nothing ran.

use std::net::TcpStream;

use serde_json::{json, Value};

use crate::dashboard::{dispatch, key};
use crate::support::daemon::{request, start, tcp};
use crate::support::Project;

/// The gate on, `ls` allowed, and a post_tool hook that makes `marker` when it runs.
fn project() -> (Project, std::path::PathBuf) {
    let p = Project::new();
    let marker = p.path().join("marker");
    p.write(
        "hooks.yaml",
        &format!(
            "enabled: true\ngate_shell_tools: true\nhooks:\n  - {{name: touch, hook: post_tool, command: 'touch {}'}}\n",
            marker.display()
        ),
    );
    p.write(
        "config.yaml",
        &format!(
            "tools: {{bash: {{mode: {{all: {{allow: ['^ls$', '^touch {}$']}}}}}}}}\n",
            marker.display()
        ),
    );
    (p, marker)
}

// ---- (b) a hostile agent: what the daemon keeps for the page ----

/// An agent chooses its session ids (and says which agent it is): a megabyte of each, in a
/// few sessions, was kept whole by the sessions list (10 MiB for five sessions; 1,000
/// sessions of 16 MiB requests would be 16 GB), although the sessions' state keeps long ids
/// by their digest since issue 11.
#[test]
fn the_sessions_list_does_not_keep_megabyte_session_ids_or_agent_names() {
    let (p, _) = project();
    let d = start(&p, &[]);
    let mega = "s".repeat(1 << 20);
    for i in 0..5 {
        dispatch(
            &d,
            "pre_tool",
            json!({"session_id": format!("{i}{mega}"), "agent": format!("{i}{mega}"),
                   "tool": {"name": "Bash", "input": {"command": "ls"}}}),
        );
    }
    let (status, body) = tcp(&d, "GET", "/v1/sessions", "");
    assert_eq!(status, 200);
    assert!(
        body.len() < 16 * 1024,
        "the sessions list holds {} bytes for five sessions",
        body.len()
    );
    let v: Value = serde_json::from_str(&body).unwrap();
    let rows = v["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "five distinct sessions, still told apart");
    for r in rows {
        let id = r["session_id"].as_str().unwrap();
        assert!(id.starts_with("sha256:") && id.len() == 71, "{id}");
        assert!(r["agent"].as_str().unwrap().chars().count() <= 65);
    }
    // The name the list gives such a session selects its events (a click on the row).
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": format!("0{mega}"), "tool": {"name": "Bash", "input": {"command": "ls"}}}),
    );
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(format!("0{mega}").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let (status, events) = tcp(
        &d,
        "GET",
        &format!("/v1/events?follow=false&since=0&session=sha256:{digest}"),
        "",
    );
    assert_eq!(status, 200);
    assert!(
        events.contains("\"hook_command\""),
        "{}",
        &events[..events.len().min(400)]
    );
    let (_, other) = tcp(
        &d,
        "GET",
        &format!(
            "/v1/events?follow=false&since=0&session=sha256:{}",
            "0".repeat(64)
        ),
        "",
    );
    assert!(!other.contains("\"hook_command\""));
}

/// An id or a refused command of a megabyte went whole into every event of the session: the
/// daemon's ring keeps 10,000 events, so a hostile agent could make it hold gigabytes, and the
/// id in `HOOKD_SESSION_ID` was longer than the kernel takes for one variable, so the session's
/// hooks could not even start (E2BIG). Now the session is known by its digest everywhere and the
/// refused command is kept cut to the gate's own limit.
#[test]
fn a_megabyte_session_id_or_command_makes_no_megabyte_event_and_hooks_still_run() {
    let (p, marker) = project();
    let d = start(&p, &[]);
    let mega = "s".repeat(1 << 20);
    let id = format!("0{mega}");
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": id, "tool": {"name": "Bash", "input": {"command": "ls"}}}),
    );
    assert!(marker.exists(), "the session's hook did not run");
    dispatch(
        &d,
        "pre_tool",
        json!({"session_id": id, "tool": {"name": "Bash", "input": {"command": format!("ls {mega}")}}}),
    );
    let (status, events) = tcp(&d, "GET", "/v1/events?follow=false&since=0", "");
    assert_eq!(status, 200);
    assert!(
        events.len() < 64 * 1024,
        "two events took {} bytes",
        events.len()
    );
    assert!(events.contains("tool_command_denied"), "{events}");
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let named = format!("\"session_id\":\"sha256:{digest}\"");
    assert_eq!(events.matches(&named).count(), 2, "{events}");
}

// ---- (d) the key itself ----

/// The key opens GET /, /v1/events and /v1/sessions, spelt exactly: no other method (HEAD,
/// OPTIONS, POST), no other spelling of a path (trailing slash, percent-encoding, dot segments,
/// a doubled slash), not as a bearer token, not with a foreign Host or Origin. Held: every one
/// is refused and the hook's marker is never made.
#[test]
fn the_key_opens_nothing_but_the_pages_three_reads() {
    let (p, marker) = project();
    let d = start(&p, &[]);
    let k = key(&d);
    let host = format!("127.0.0.1:{}", d.port);
    let bearer = format!("Bearer {k}");
    let body = json!({"point": "post_tool", "context": {"session_id": "x",
        "tool": {"name": "Bash", "input": {"command": "ls"}}}})
    .to_string();
    let send = |method: &str, path: &str, extra: &[(&str, &str)]| {
        let mut headers = vec![("Host", host.as_str())];
        headers.extend_from_slice(extra);
        request(
            &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
            method,
            path,
            &headers,
            if method == "POST" { &body } else { "" },
        )
        .0
    };
    for (method, path) in [
        ("POST", "/v1/dispatch?key=K"),
        ("POST", "/v1/dispatch/?key=K"),
        ("POST", "/v1/%64ispatch?key=K"),
        ("POST", "//v1/dispatch?key=K"),
        ("POST", "/v1/events/../dispatch?key=K"),
        ("POST", "/v1/events?key=K"),
        ("POST", "/?key=K"),
        ("GET", "/v1/dispatch?key=K"),
        ("GET", "/metrics?key=K"),
        ("GET", "/metrics/?key=K"),
        ("GET", "/%6Detrics?key=K"),
        ("GET", "/v1/events/../../metrics?key=K"),
        ("GET", "/v1/reload?key=K"),
        ("GET", "/v1/sessions/?key=K"),
        ("GET", "/v1/events?key=K%00"),
        ("GET", "/v1/events?%6Bey=K"),
        ("HEAD", "/?key=K"),
        ("HEAD", "/metrics?key=K"),
        ("OPTIONS", "/v1/dispatch?key=K"),
    ] {
        let path = path.replace('K', &k);
        assert_eq!(send(method, &path, &[]), 401, "{method} {path}");
    }
    // Upper-case hex is another key.
    let upper = format!("/v1/events?follow=false&key={}", k.to_ascii_uppercase());
    assert_eq!(send("GET", &upper, &[]), 401);
    // As a bearer token it is nothing.
    for (method, path) in [("POST", "/v1/dispatch"), ("GET", "/metrics")] {
        assert_eq!(
            send(method, path, &[("Authorization", bearer.as_str())]),
            401,
            "{method} {path}"
        );
    }
    // From a web page (Origin) or a rebound name (Host), even the page's reads are refused.
    let events = format!("/v1/events?follow=false&key={k}");
    assert_eq!(
        send("GET", &events, &[("Origin", "http://attacker.example")]),
        403
    );
    assert_eq!(send("GET", &events, &[("Origin", "null")]), 403);
    for rebound in ["attacker.example", "evil.localhost", "127.0.0.1.", "127.1"] {
        let h = format!("{rebound}:{}", d.port);
        let status = request(
            &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
            "GET",
            &events,
            &[("Host", h.as_str())],
            "",
        )
        .0;
        assert_eq!(status, 403, "Host {h}");
    }
    // What it does open, it opens (the refusals above are not a broken key).
    assert_eq!(send("GET", &events, &[]), 200);
    assert!(!marker.exists(), "a hook ran with the dashboard key");
    // The marker can be made: the token dispatches.
    assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    assert!(marker.exists());
}
