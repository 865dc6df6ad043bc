//! The dashboard: the page at `/` and its read-only key, per-session streams, the sessions
//! list, and the page itself in a real headless Chromium driven over the DevTools protocol.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cdp::{chromium, Browser, Tab};
use crate::support::daemon::{request, start, tcp, Daemon};
use crate::support::{stdout, Project};

/// Two sessions' worth of what a dashboard must show: a hook that runs, one that fails, one
/// the gate skips, and a model's tool call the gate denies.
fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo [a-z]+$', '^false$', '^ls$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\ngate_shell_tools: true\nhooks:\n  - {name: fmt-check, hook: post_tool, command: 'echo formatted'}\n  - {name: deploy, hook: post_tool, command: 'curl https://example.com'}\n  - {name: tests-pass, hook: post_session, command: 'false'}\n",
    );
    p
}

/// A dispatch with the token, as the agent's adapter sends it.
pub(crate) fn dispatch(d: &Daemon, point: &str, context: Value) {
    let (status, body) = tcp(
        d,
        "POST",
        "/v1/dispatch",
        &json!({"point": point, "context": context}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
}

/// alpha (Claude Code): a tool ran (fmt-check ran, deploy skipped), a denied `rm -rf /`;
/// beta (Gemini CLI): a tool ran, then the session ended with failing tests.
fn play(d: &Daemon) {
    let bash = |c: &str| json!({"name": "Bash", "input": {"command": c}});
    dispatch(
        d,
        "post_tool",
        json!({"session_id": "alpha", "agent": "claude-code", "tool": bash("ls")}),
    );
    dispatch(
        d,
        "pre_tool",
        json!({"session_id": "alpha", "agent": "claude-code", "tool": bash("rm -rf /")}),
    );
    dispatch(
        d,
        "post_tool",
        json!({"session_id": "beta", "agent": "gemini", "tool": bash("ls")}),
    );
    dispatch(
        d,
        "post_session",
        json!({"session_id": "beta", "agent": "gemini"}),
    );
}

/// A GET as a browser would send it: the daemon's address as Host, no token.
fn get(d: &Daemon, path: &str) -> (u16, String) {
    let host = format!("127.0.0.1:{}", d.port);
    request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        "GET",
        path,
        &[("Host", host.as_str())],
        "",
    )
}

pub(crate) fn key(d: &Daemon) -> String {
    let url = d
        .dashboard
        .as_deref()
        .expect("hookd serve printed `dashboard: URL`");
    url.split_once("?key=").unwrap().1.to_string()
}

#[test]
fn serve_prints_the_dashboard_url_and_its_key_opens_only_the_page_and_its_reads() {
    let p = project();
    let marker = p.path().join("marker");
    p.write(
        "hooks.yaml",
        &format!(
            "enabled: true\nhooks:\n  - {{name: touch, hook: post_tool, command: 'touch {}'}}\n",
            marker.display()
        ),
    );
    p.write(
        "config.yaml",
        &format!(
            "tools: {{bash: {{mode: {{all: {{allow: ['^touch {}$']}}}}}}}}\n",
            marker.display()
        ),
    );
    let d = start(&p, &[]);
    let url = d.dashboard.clone().unwrap();
    assert_eq!(url, format!("http://127.0.0.1:{}/?key={}", d.port, key(&d)));
    assert_eq!(key(&d).len(), 64);
    assert!(
        !url.contains(d.token.as_deref().unwrap()),
        "the URL carries the token itself"
    );
    let k = key(&d);

    // The page and its two reads open with the key ...
    let (status, page) = get(&d, &format!("/?key={k}"));
    assert_eq!(status, 200);
    assert!(page.contains("<title>hookd dashboard</title>"));
    assert_eq!(get(&d, &format!("/v1/sessions?key={k}")).0, 200);
    assert_eq!(get(&d, &format!("/v1/events?follow=false&key={k}")).0, 200);
    // ... and nothing without it, or with another.
    for path in ["/", "/v1/sessions", "/v1/events?follow=false"] {
        assert_eq!(get(&d, path).0, 401, "{path}");
        assert_eq!(
            get(
                &d,
                &format!(
                    "{path}{}key={}",
                    if path.contains('?') { "&" } else { "?" },
                    "0".repeat(64)
                )
            )
            .0,
            401,
            "{path}"
        );
    }
    // The key never dispatches, nor reads /metrics: the hook's marker is never made.
    let host = format!("127.0.0.1:{}", d.port);
    let body = json!({"point": "post_tool", "context": {"session_id": "x"}}).to_string();
    let (status, _) = request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        "POST",
        &format!("/v1/dispatch?key={k}"),
        &[("Host", host.as_str())],
        &body,
    );
    assert_eq!(status, 401);
    assert_eq!(get(&d, &format!("/metrics?key={k}")).0, 401);
    assert!(!marker.exists(), "a dispatch ran with the dashboard key");
    // The token still dispatches (the marker proves the hook could run).
    assert_eq!(tcp(&d, "POST", "/v1/dispatch", &body).0, 200);
    assert!(marker.exists());
}

#[test]
fn the_page_runs_only_its_own_script() {
    let p = project();
    let d = start(&p, &[]);
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    write!(
        s,
        "GET /?key={} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        key(&d),
        d.port
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let csp = raw
        .lines()
        .find_map(|l| l.strip_prefix("content-security-policy: "))
        .expect("a Content-Security-Policy");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|n| n.split('\'').next())
        .unwrap();
    assert_eq!(nonce.len(), 32);
    assert!(
        csp.starts_with("default-src 'none'; script-src 'nonce-"),
        "{csp}"
    );
    assert!(raw.contains(&format!("<script nonce=\"{nonce}\">")));
    assert!(raw
        .to_ascii_lowercase()
        .contains("referrer-policy: no-referrer"));
    assert!(!raw.contains("__NONCE__"));
    // No resource from anywhere else: the page works offline.
    for outside in ["src=\"http", "href=\"http", "cdn", "import("] {
        assert!(!raw.contains(outside), "{outside}");
    }
}

#[test]
fn per_session_streams_and_the_sessions_list() {
    let p = project();
    let d = start(&p, &[]);
    play(&d);
    // The sessions, most recently active first, with agent and project.
    let (status, body) = tcp(&d, "GET", "/v1/sessions", "");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let rows = v["sessions"].as_array().unwrap();
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["beta", "alpha"]);
    assert_eq!(rows[0]["agent"], "gemini");
    assert_eq!(rows[1]["agent"], "claude-code");
    assert_eq!(rows[1]["dispatches"], 2);
    assert_eq!(rows[1]["last_point"], "pre_tool");
    assert_eq!(
        PathBuf::from(rows[0]["project"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        p.path().canonicalize().unwrap()
    );

    // Only alpha's events, over HTTP ...
    let (status, body) = tcp(
        &d,
        "GET",
        "/v1/events?since=0&follow=false&session=alpha",
        "",
    );
    assert_eq!(status, 200);
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["session_id"].as_str().unwrap().to_string(),
                e["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("alpha".into(), "hook_command".into()),
            ("alpha".into(), "hook_command_skipped".into()),
            ("alpha".into(), "tool_command_denied".into())
        ]
    );
    // ... resumed after its first event, the rest ...
    let first = events[0]["seq"].as_u64().unwrap();
    let host = format!("127.0.0.1:{}", d.port);
    let auth = format!("Bearer {}", d.token.as_deref().unwrap());
    let last = first.to_string();
    let (_, body) = request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        "GET",
        "/v1/events?since=0&follow=false&session=alpha",
        &[
            ("Host", host.as_str()),
            ("Authorization", auth.as_str()),
            ("Last-Event-ID", last.as_str()),
        ],
        "",
    );
    assert_eq!(body.matches("data: ").count(), 2, "{body}");
    // ... and from the CLI.
    let mut cmd = p.cmd(&["events", "--session", "beta", "--json"]);
    cmd.env("HOOKD_SOCKET", &d.socket);
    let out = cmd.output().unwrap();
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{}", stdout(&out));
    assert!(lines.iter().all(|e| e["session_id"] == "beta"));
    // The daemon takes a session cut with `…`, as `hookd events` shows a long one.
    let mut cmd = p.cmd(&["events", "--session", "bet…", "--json"]);
    cmd.env("HOOKD_SOCKET", &d.socket);
    assert_eq!(stdout(&cmd.output().unwrap()), stdout(&out));
}

// ---- a real browser ----

#[test]
fn the_page_shows_sessions_hooks_the_denial_and_the_skip_in_chromium() {
    let Some(exe) = chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let p = project();
    let d = start(&p, &[]);
    play(&d);
    let browser = Browser::launch(&exe);
    let mut tab = browser.open(d.dashboard.as_deref().unwrap());
    tab.wait_for(
        "document.body.innerText.includes('tests-pass') && document.querySelectorAll('#sessions tbody tr').length === 2 && document.body.innerText.includes('claude-code') && document.body.innerText.includes('gemini')",
        "the events and both sessions with their agents",
    );
    let text = tab
        .eval("document.body.innerText")
        .as_str()
        .unwrap()
        .to_string();
    for shown in [
        "alpha",
        "beta",
        "claude-code",
        "gemini", // sessions and their agents
        "hook fmt-check",
        "hook deploy",
        "hook tests-pass", // the hooks
        "not_allowlisted: `curl https://example.com` is not on the allow-list", // the skip and why
        "Bash call",
        "`rm -rf /` is not on the allow-list", // the denial and why
    ] {
        assert!(
            text.contains(shown),
            "the page does not show {shown:?}:\n{text}"
        );
    }
    // Denials and failures stand out; the skip too.
    assert_eq!(
        tab.eval("document.querySelectorAll('#timeline tr.denied').length"),
        json!(1)
    );
    assert_eq!(
        tab.eval("document.querySelectorAll('#timeline tr.failed').length"),
        json!(1)
    );
    assert_eq!(
        tab.eval("document.querySelectorAll('#timeline tr.skipped').length"),
        json!(2)
    );
    assert_eq!(
        tab.eval("document.getElementById('c-denied').textContent"),
        json!("1")
    );
    // Newest session first.
    assert_eq!(
        tab.eval("document.querySelector('#sessions tbody tr td').textContent"),
        json!("beta")
    );
    // Live: a new session appears without a reload.
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": "gamma", "agent": "crush", "tool": {"name": "bash", "input": {"command": "ls"}}}),
    );
    tab.wait_for(
        "document.querySelector('#sessions tbody tr td').textContent === 'gamma' && document.body.innerText.includes('crush')",
        "the new session gamma first, with its agent",
    );
    // The filter by session keeps one session's rows.
    tab.eval("(() => { const f = document.getElementById('f-session'); f.value = 'beta'; f.dispatchEvent(new Event('input')); return true })()");
    tab.wait_for(
        "[...document.querySelectorAll('#timeline tbody tr td:nth-child(3)')].every(td => td.textContent === 'beta') && document.querySelectorAll('#timeline tbody tr').length === 3",
        "only beta's three events",
    );
    // By status, then by hook name (the session filter cleared with the button).
    let set = |tab: &mut Tab, id: &str, value: &str| {
        tab.eval(&format!("(() => {{ const f = document.getElementById('{id}'); f.value = '{value}'; f.dispatchEvent(new Event('input')); return true }})()"));
    };
    tab.eval("document.getElementById('f-clear').click(), true");
    set(&mut tab, "f-status", "denied");
    tab.wait_for(
        "document.querySelectorAll('#timeline tbody tr').length === 1 && document.querySelector('#timeline tbody tr').className.includes('denied')",
        "only the denial",
    );
    set(&mut tab, "f-status", "");
    set(&mut tab, "f-hook", "deploy");
    tab.wait_for(
        "document.querySelectorAll('#timeline tbody tr').length === 3 && [...document.querySelectorAll('#timeline tbody tr td:nth-child(5)')].every(td => td.textContent === 'hook deploy')",
        "only the deploy hook's three skips",
    );
    set(&mut tab, "f-hook", "");
    if let Some(path) = std::env::var_os("HOOKD_DASHBOARD_SCREENSHOT") {
        tab.eval("(() => { const f = document.getElementById('f-session'); f.value = ''; f.dispatchEvent(new Event('input')); return true })()");
        std::thread::sleep(Duration::from_millis(300));
        let shot = tab.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            shot["result"]["data"].as_str().unwrap(),
        )
        .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

#[test]
fn the_page_resumes_after_the_daemon_restarts() {
    let Some(exe) = chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let p = project();
    let log = p.path().join("events.jsonl");
    let log = log.to_str().unwrap();
    // A fixed token keeps the dashboard's key the same across the restart.
    let token = "dashboard-test-token";
    let mut d = start(&p, &["--events", log, "--token", token]);
    d.token = Some(token.into());
    let listen = format!("127.0.0.1:{}", d.port);
    play(&d);
    let browser = Browser::launch(&exe);
    let url = d.dashboard.clone().unwrap();
    let mut tab = browser.open(&url);
    tab.wait_for(
        "document.body.innerText.includes('tests-pass')",
        "the first events",
    );
    let rows = |tab: &mut Tab| tab.eval("document.querySelectorAll('#timeline tbody tr').length");
    assert_eq!(rows(&mut tab), json!(6));
    // The daemon stops (its streams end with a `shutdown` frame) ...
    Command::new("kill")
        .args(["-TERM", &d.child.id().to_string()])
        .status()
        .unwrap();
    drop(d);
    tab.wait_for(
        "document.getElementById('conn').className === 'down'",
        "that the stream is down",
    );
    // ... and comes back on the same address, numbering on from its log.
    let mut d = start(
        &p,
        &["--events", log, "--token", token, "--listen", &listen],
    );
    d.token = Some(token.into());
    assert_eq!(d.dashboard.as_deref(), Some(url.as_str()));
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": "delta", "agent": "claude-code", "tool": {"name": "Bash", "input": {"command": "ls"}}}),
    );
    // EventSource reconnects by itself with Last-Event-ID: the new events arrive, none twice.
    // (Waited for in the timeline: the sessions table may name `delta` first.)
    tab.wait_for(
        "document.querySelectorAll('#timeline tbody tr').length >= 8",
        "the events dispatched after the restart in the timeline",
    );
    tab.wait_for(
        "document.getElementById('conn').className === 'live'",
        "the stream live again",
    );
    // A duplicate would come in the same delivery: give it the time to show, then count.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(rows(&mut tab), json!(8));
    let seqs = tab.eval("[...document.querySelectorAll('#timeline tbody tr td:first-child')].map(td => +td.textContent)");
    let seqs: Vec<u64> = serde_json::from_value(seqs).unwrap();
    assert_eq!(seqs, (1..=8).rev().collect::<Vec<u64>>());
}

/// Issue 42: "the sessions panel shows agent `—` after a restart". A page opened after the
/// daemon restarted, even from SIGKILL, replays the sessions from the events file with their
/// agent and project: the daemon keeps its sessions table beside that file.
#[test]
fn a_page_opened_after_a_restart_names_the_replayed_sessions_agents() {
    let Some(exe) = chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let p = project();
    let log = p.path().join("events.jsonl");
    let log_arg = log.to_str().unwrap().to_string();
    let d = start(&p, &["--events", &log_arg]);
    let listen = format!("127.0.0.1:{}", d.port);
    play(&d);
    // Kept within seconds, so even a daemon killed without its stop leaves it.
    let kept = p.path().join("events.jsonl.sessions.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&kept).is_ok_and(|t| t.contains("gemini")) {
        assert!(Instant::now() < deadline, "the sessions table was not kept");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mode = std::fs::metadata(&kept).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    Command::new("kill")
        .args(["-KILL", &d.child.id().to_string()])
        .status()
        .unwrap();
    drop(d);
    let d = start(&p, &["--events", &log_arg, "--listen", &listen]);
    let browser = Browser::launch(&exe);
    let mut tab = browser.open(&d.dashboard.clone().unwrap());
    // alpha goes on: the page gets what it missed from the events file, then the new events.
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": "alpha", "agent": "claude-code", "tool": {"name": "Bash", "input": {"command": "ls"}}}),
    );
    tab.wait_for(
        "document.querySelectorAll('#timeline tbody tr').length === 8 && document.querySelectorAll('#sessions tbody tr').length === 2",
        "the replayed and the new events, and both sessions",
    );
    let agents = "[...document.querySelectorAll('#sessions tbody tr')].map(tr => tr.children[0].textContent + ' ' + tr.children[1].textContent + ' ' + tr.children[2].title)";
    let here = p.path().display().to_string();
    let want = json!([
        format!("alpha claude-code {here}"),
        format!("beta gemini {here}")
    ]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while tab.eval(agents) != want {
        assert!(
            Instant::now() < deadline,
            "the sessions table shows {}",
            tab.eval(agents)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The daemon's own list has them too, and a session that goes on is counted on.
    let (_, sessions) = tcp(&d, "GET", "/v1/sessions", "");
    let sessions: Value = serde_json::from_str(&sessions).unwrap();
    assert_eq!(sessions["sessions"][0]["session_id"], "alpha");
    assert_eq!(sessions["sessions"][0]["dispatches"], 3);
    assert_eq!(sessions["sessions"][1]["agent"], "gemini");
}

/// Issue 42 item 4: the counters count the last minute by the events' own time (a replayed
/// backlog is history), and a page whose key the daemon refuses after `--new-token` says so
/// instead of "reconnecting…" for ever.
#[test]
fn the_counters_skip_history_and_a_refused_key_is_said() {
    let Some(exe) = chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let p = project();
    let log = p.path().join("events.jsonl");
    let log_arg = log.to_str().unwrap().to_string();
    let d = start(&p, &["--events", &log_arg]);
    let listen = format!("127.0.0.1:{}", d.port);
    play(&d);
    let browser = Browser::launch(&exe);
    let counted = "document.getElementById('c-events').textContent";
    let mut tab = browser.open(&d.dashboard.clone().unwrap());
    tab.wait_for(
        "document.getElementById('c-events').textContent === '6'",
        "the fresh events counted in the last minute",
    );
    drop(tab);
    // A minute later, a page opened now gets the same events replayed from the daemon's ring:
    // in its timeline, not in its last minute.
    std::thread::sleep(Duration::from_secs(61));
    let mut tab = browser.open(&d.dashboard.clone().unwrap());
    tab.wait_for(
        "document.querySelectorAll('#timeline tbody tr').length === 6",
        "the replayed events in the timeline",
    );
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(tab.eval(counted), json!("0"));
    dispatch(
        &d,
        "post_tool",
        json!({"session_id": "now", "tool": {"name": "Bash", "input": {"command": "ls"}}}),
    );
    tab.wait_for(
        "document.getElementById('c-events').textContent !== '0'",
        "the new event counted",
    );
    Command::new("kill")
        .args(["-TERM", &d.child.id().to_string()])
        .status()
        .unwrap();
    drop(d);
    let _d = start(
        &p,
        &["--events", &log_arg, "--listen", &listen, "--new-token"],
    );
    tab.wait_for(
        "document.getElementById('conn').textContent === 'key refused'",
        "the page saying its key is refused",
    );
    let note = tab.eval("document.getElementById('note').textContent");
    assert_eq!(
        note,
        json!("The daemon refused this page's key: it was started with another token (hookd serve --new-token, or --token). Open the dashboard: address it printed when it started.")
    );
}

// ---- Grafana, alerting rules, and a real Prometheus ----

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The metric families a text names (`hookd_…`; `_bucket`, `_sum` and `_count` are their
/// histogram's).
fn metric_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (i, _) in text.match_indices("hookd_") {
        if i > 0 && text.as_bytes()[i - 1].is_ascii_alphanumeric() {
            continue;
        }
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(&name);
        out.insert(family.to_string());
    }
    out
}

#[test]
fn every_metric_the_grafana_dashboard_and_the_alerts_use_is_exported() {
    let grafana = std::fs::read_to_string(repo("dashboards/grafana/hookd.json")).unwrap();
    let dash: Value = serde_json::from_str(&grafana).unwrap();
    let titles: Vec<&str> = dash["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    for wanted in [
        "Dispatch rate by point",
        "Dispatch latency by point (p50, p95)",
        "Command hooks by status",
        "Hooks skipped by reason",
        "Denied tool calls by reason",
        "Configuration reloads",
        "Sessions",
    ] {
        assert!(titles.contains(&wanted), "no panel {wanted:?}: {titles:?}");
    }
    // Importable: the data source is a variable, every query uses it.
    assert_eq!(dash["templating"]["list"][0]["type"], "datasource");
    let exprs: String = dash["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| {
            assert_eq!(t["datasource"]["uid"], "${datasource}");
            t["expr"].as_str().unwrap().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let alerts = std::fs::read_to_string(repo("dashboards/prometheus/alerts.yml")).unwrap();
    let used: std::collections::BTreeSet<String> = metric_names(&exprs)
        .union(&metric_names(&alerts))
        .cloned()
        .collect();
    assert!(used.len() >= 8, "{used:?}");

    let p = project();
    let d = start(&p, &[]);
    play(&d);
    let (status, metrics) = tcp(&d, "GET", "/metrics", "");
    assert_eq!(status, 200);
    // The names a query can use: each family's samples as OpenMetrics names them (a counter
    // `x` is sampled as `x_total`, a histogram as `x_bucket`, `x_sum`, `x_count`).
    let exported: std::collections::BTreeSet<String> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .flat_map(|(name, kind)| match kind {
            "counter" => vec![format!("{name}_total")],
            "histogram" => ["_bucket", "_sum", "_count", ""]
                .iter()
                .map(|s| format!("{name}{s}"))
                .collect(),
            _ => vec![name.to_string()],
        })
        .collect();
    let missing: Vec<&String> = used.difference(&exported).collect();
    assert!(
        missing.is_empty(),
        "used but not exported: {missing:?}\nexported: {exported:?}"
    );
    // And the ones the dashboard's panels break down by carry their labels.
    for sample in [
        "hookd_dispatches_total{point=\"post_tool\"} 2",
        "hookd_tool_calls_denied_total{reason=\"not_allowlisted\"} 1",
        "hookd_commands_skipped_total{reason=\"not_allowlisted\"} 2",
        "hookd_commands_total{status=\"failed\"} 1",
        "hookd_dispatch_duration_seconds_count{point=\"pre_tool\"} 1",
    ] {
        assert!(metrics.contains(sample), "no {sample:?} in\n{metrics}");
    }
}

/// promtool, when installed (CI installs Debian's `prometheus`, which has it).
pub(crate) fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[test]
fn the_alerting_rules_pass_promtool_and_their_unit_tests() {
    if !installed("promtool") {
        crate::support::unavailable(
            "promtool",
            "promtool not installed (apt-get install prometheus)",
        );
        return;
    }
    let dir = repo("dashboards/prometheus");
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ] {
        let out = Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET on loopback, the body (Prometheus' API).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    // HTTP/1.0: the body comes whole, not chunked.
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    raw.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

#[test]
fn a_real_prometheus_scrapes_hookd_with_the_token_file() {
    if !installed("prometheus") {
        crate::support::unavailable(
            "prometheus",
            "prometheus not installed (apt-get install prometheus)",
        );
        return;
    }
    let p = project();
    let d = start(&p, &[]);
    play(&d);
    // The token as `hookd serve` wrote it, passed the way Prometheus does: a credentials file.
    let token_file = d.socket.with_extension("token");
    assert!(token_file.exists());
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\nscrape_configs:\n  - job_name: hookd\n    authorization:\n      type: Bearer\n      credentials_file: {}\n    static_configs:\n      - targets: ['127.0.0.1:{}']\n",
            repo("dashboards/prometheus/alerts.yml").display(),
            token_file.display(),
            d.port
        ),
    )
    .unwrap();
    let port = free_port();
    let _prometheus = Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                work.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let query = |q: &str| -> Vec<Value> {
        http_get(port, &format!("/api/v1/query?query={q}"))
            .and_then(|b| serde_json::from_str::<Value>(&b).ok())
            .and_then(|v| v["data"]["result"].as_array().cloned())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let dispatches = loop {
        let r = query("hookd_dispatches_total%7Bpoint%3D%22post_tool%22%7D");
        if !r.is_empty() {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never stored hookd_dispatches_total"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(dispatches[0]["metric"]["job"], "hookd");
    assert_eq!(dispatches[0]["value"][1], "2");
    let up = query("up%7Bjob%3D%22hookd%22%7D");
    assert_eq!(up[0]["value"][1], "1", "{up:?}");
    // Prometheus' own parser read the whole exposition: the target is healthy, no error, and
    // every family it exports was stored (the histogram and a collector's counter among them).
    let targets = http_get(port, "/api/v1/targets")
        .and_then(|b| serde_json::from_str::<Value>(&b).ok())
        .unwrap();
    let target = &targets["data"]["activeTargets"][0];
    assert_eq!(target["health"], "up", "{target}");
    assert_eq!(target["lastError"], "", "{target}");
    for name in [
        "hookd_dispatch_duration_seconds_bucket",
        "hookd_config_reloads_total",
        "hookd_events_total",
        "hookd_sessions",
    ] {
        assert!(!query(name).is_empty(), "Prometheus did not store {name}");
    }
    // The rules loaded beside it: none of them fires on this healthy daemon.
    let rules = http_get(port, "/api/v1/rules").unwrap_or_default();
    assert!(rules.contains("HookdDenialsSpiking"), "{rules}");
}

/// Issue 42: the page kept up to 6,000 whole events, hooks' stdout and stderr included, and its
/// tab grew by 676 MiB over 1,400 events of chatty hooks. Now it keeps what it shows: events
/// whose hook printed 128 KiB each cost the page's list under 1 KiB each, and a long command is
/// shown cut, saying how much was left out.
#[test]
fn the_page_keeps_what_it_shows_not_whole_events() {
    let Some(exe) = chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let p = Project::new();
    let text = "x".repeat(65_536);
    std::fs::write(p.path().join("big.txt"), text).unwrap();
    std::fs::write(p.path().join("big.sh"), "cat big.txt\ncat big.txt >&2\n").unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^sh big.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\ngate_shell_tools: true\nhooks:\n  - {name: big, hook: post_session, command: 'sh big.sh'}\n",
    );
    let d = start(&p, &[]);
    for i in 0..150 {
        dispatch(
            &d,
            "post_session",
            json!({"session_id": format!("s{}", i % 5)}),
        );
    }
    let long = format!("rm {}", "a".repeat(1000));
    dispatch(
        &d,
        "pre_tool",
        json!({"session_id": "s0", "tool": {"name": "Bash", "input": {"command": long}}}),
    );
    let browser = Browser::launch(&exe);
    let mut tab = browser.open(&d.dashboard.clone().unwrap());
    // The daemon's ring holds about 128 of these events (32 MiB): the page gets those.
    tab.wait_for("lastSeq === 151", "the newest event on the page");
    let n = tab.eval("events.length").as_u64().unwrap();
    let kept = tab.eval("JSON.stringify(events).length").as_u64().unwrap();
    eprintln!(
        "the page keeps {kept} characters for {n} events (their JSON: {} KiB)",
        n * 128
    );
    assert!(n >= 100, "{n} events");
    assert!(kept < n * 1024, "{kept} characters kept for {n} events");
    let detail = tab.eval("document.querySelector('#timeline tbody tr td:last-child').textContent");
    let detail = detail.as_str().unwrap();
    assert!(detail.starts_with("not_allowlisted: `rm aaa"), "{detail}");
    assert!(detail.ends_with("a… (1773 more characters)"), "{detail}");
    assert_eq!(
        detail.chars().count(),
        300 + "… (1773 more characters)".chars().count()
    );
}
