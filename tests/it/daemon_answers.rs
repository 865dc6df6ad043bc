//! docs/daemon.md's answers, held to a running daemon's: each example there (a request in
//! backticks, then a ```json block) is sent, and the answer must have the example's shape.

use serde_json::Value;

use crate::support::daemon::{start, unix};
use crate::support::Project;

/// One example of the doc: the request's method, path and body, and the answer it shows.
struct Example {
    method: String,
    path: String,
    body: String,
    answer: Value,
}

/// Every "`METHOD PATH` [with `BODY`]…:" line followed by a ```json block.
fn examples(doc: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut lines = doc.lines().peekable();
    let mut request: Option<(String, String, String)> = None;
    while let Some(line) = lines.next() {
        if line.trim() == "```json" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            if let Some((method, path, body)) = request.take() {
                let answer = serde_json::from_str(&block.join("\n"))
                    .unwrap_or_else(|e| panic!("docs/daemon.md, {method} {path}: {e}"));
                out.push(Example {
                    method,
                    path,
                    body,
                    answer,
                });
            }
            continue;
        }
        // A paragraph that begins with a request in backticks names the next block's request.
        let Some(rest) = line.strip_prefix('`') else {
            continue;
        };
        let Some((request_line, tail)) = rest.split_once('`') else {
            continue;
        };
        let Some((method, path)) = request_line.split_once(' ') else {
            continue;
        };
        if !matches!(method, "GET" | "POST") || !path.starts_with('/') {
            continue;
        }
        let body = tail
            .strip_prefix(" with `")
            .and_then(|t| t.split_once('`'))
            .map(|(b, _)| b.to_string())
            .unwrap_or_default();
        request = Some((method.into(), path.into(), body));
    }
    out
}

/// Whether `live` has `doc`'s shape: the same keys, values of the same JSON type, every item of
/// an array like the example's first item.
fn same_shape(doc: &Value, live: &Value, at: &str) -> Result<(), String> {
    match (doc, live) {
        (Value::Object(d), Value::Object(l)) => {
            let mut dk: Vec<&String> = d.keys().collect();
            let mut lk: Vec<&String> = l.keys().collect();
            dk.sort();
            lk.sort();
            if dk != lk {
                return Err(format!(
                    "{at}: the doc shows the keys {dk:?}, the daemon answers {lk:?}"
                ));
            }
            for (k, v) in d {
                same_shape(v, &l[k], &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(d), Value::Array(l)) => {
            let Some(first) = d.first() else {
                return Ok(());
            };
            if l.is_empty() {
                return Err(format!(
                    "{at}: the doc shows items, the daemon answers none"
                ));
            }
            for (i, item) in l.iter().enumerate() {
                same_shape(first, item, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::String(_), Value::String(_))
        | (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => Ok(()),
        (d, l) => Err(format!("{at}: the doc shows {d}, the daemon answers {l}")),
    }
}

/// The data of the first `event: missed` message of an event stream's text.
fn missed(stream: &str) -> Option<Value> {
    let mut lines = stream.lines();
    lines.find(|l| *l == "event: missed")?;
    let data = lines.find_map(|l| l.strip_prefix("data: "))?;
    serde_json::from_str(data).ok()
}

#[test]
fn the_daemons_answers_have_the_shapes_its_doc_shows() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/daemon.md")).unwrap();
    let examples = examples(&doc);
    let requests: Vec<String> = examples
        .iter()
        .map(|e| format!("{} {}", e.method, e.path))
        .collect();
    for expected in [
        "POST /v1/dispatch",
        "GET /v1/sessions",
        "GET /v1/health",
        "GET /v1/events?since=1&follow=false",
    ] {
        assert!(
            requests.iter().any(|r| r == expected),
            "{expected}: {requests:?}"
        );
    }
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo done$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks:\n  - {name: done, hook: post_session, command: 'echo done'}\n",
    );
    // A small ring and no events file: what leaves memory is missed.
    let d = start(&p, &["--ring", "16"]);
    for _ in 0..20 {
        let body =
            r#"{"point": "post_session", "context": {"session_id": "s1", "agent": "claude-code"}}"#;
        assert_eq!(unix(&d.socket, "POST", "/v1/dispatch", body).0, 200);
    }
    for e in &examples {
        let (status, text) = unix(&d.socket, &e.method, &e.path, &e.body);
        let what = format!("docs/daemon.md, `{} {}` {}", e.method, e.path, e.body);
        let live = if e.path.starts_with("/v1/events") {
            missed(&text).unwrap_or_else(|| panic!("{what}: no `missed` message in {text}"))
        } else {
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{what}: {err}: {text}"))
        };
        let shows_error = e.answer.get("error").is_some();
        assert_eq!(
            (status >= 400, status),
            (shows_error, status),
            "{what}: the doc shows {}",
            e.answer
        );
        if let Err(why) = same_shape(&e.answer, &live, "the answer") {
            panic!("{what}: {why}\nthe daemon answered: {live}");
        }
    }
}
