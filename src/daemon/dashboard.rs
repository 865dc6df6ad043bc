//! The live dashboard: the page at `/` (one HTML file with its script and style, embedded, no
//! build step, no network), the sessions it lists (`GET /v1/sessions`), and the read-only key
//! in its URL. A browser's EventSource cannot send the bearer token, so the page carries a key
//! derived from it, which opens the page and the two read endpoints it uses, never a dispatch
//! or /metrics.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{error, Shared};
use crate::catalog::HookPoint;
use crate::dispatch::Context;

/// The page, served as is.
const PAGE: &str = include_str!("dashboard.html");

/// How many sessions the table keeps (the least recently active go first).
const MOST_SESSIONS: usize = 1000;

/// The longest agent name kept (agents are a handful of short names).
const MOST_AGENT_BYTES: usize = 64;

/// The dashboard key for a daemon's token: hex SHA-256 of a label and the token. It cannot be
/// turned back into the token, so a leaked dashboard URL shows events but dispatches nothing.
pub fn key(token: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"hookd-dashboard\0")
        .chain_update(token.as_bytes())
        .finalize();
    crate::display::hex(&digest)
}

/// Whether a request may use the key instead of the token: GET of the page or of the two
/// read endpoints it follows, with `?key=` equal (in constant time) to the token's key.
pub(super) fn key_opens(method: &axum::http::Method, uri: &axum::http::Uri, token: &str) -> bool {
    if method != axum::http::Method::GET
        || !matches!(uri.path(), "/" | "/v1/events" | "/v1/sessions")
    {
        return false;
    }
    let given = uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("key="))
        .unwrap_or("");
    let want = key(token);
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(want.as_bytes()),
    );
    let diff = a
        .iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0 && !given.is_empty()
}

/// One session as the dashboard lists it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Row {
    session_id: String,
    agent: Option<String>,
    project: String,
    first_seen: String,
    last_seen: String,
    last_point: HookPoint,
    dispatches: u64,
    /// Orders rows by activity (timestamps can tie).
    #[serde(skip)]
    tick: u64,
}

/// The sessions dispatches came from, kept in memory, and in a file across restarts.
#[derive(Default)]
pub(super) struct Seen {
    rows: HashMap<String, Row>,
    tick: u64,
    /// `tick` when the table was last saved.
    saved: u64,
}

/// The most a kept sessions table may weigh (1,000 small rows are far less).
const MOST_KEPT_BYTES: u64 = 4 << 20;

impl Seen {
    /// The table a daemon kept in `path`, most recently active first as written; empty when
    /// there is none (or it cannot be read, which is said on stderr).
    pub(super) fn kept(path: &std::path::Path) -> Seen {
        let rows: Vec<Row> = match crate::config::read_regular(path, MOST_KEPT_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                eprintln!(
                    "hookd: the sessions table {} is not readable ({e}); starting with none",
                    path.display()
                );
                Vec::new()
            }),
            Err(crate::config::ReadError::NotFound) => Vec::new(),
            Err(e) => {
                eprintln!(
                    "hookd: the sessions table {} is not readable ({e}); starting with none",
                    path.display()
                );
                Vec::new()
            }
        };
        let n = rows.len() as u64;
        let rows = rows
            .into_iter()
            .take(MOST_SESSIONS)
            .zip((1..=n).rev())
            .map(|(mut r, tick)| {
                r.session_id = crate::state::session_key(&r.session_id).into_owned();
                r.agent = r
                    .agent
                    .map(|a| crate::display::clip(&a, MOST_AGENT_BYTES).into_owned());
                r.tick = tick;
                (r.session_id.clone(), r)
            })
            .collect();
        Seen {
            rows,
            tick: n,
            saved: n,
        }
    }

    /// The table as JSON, most recently active first, when it changed since it was last
    /// taken so.
    pub(super) fn changed(&mut self) -> Option<Vec<u8>> {
        if self.tick == self.saved {
            return None;
        }
        self.saved = self.tick;
        let mut rows: Vec<&Row> = self.rows.values().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.tick));
        serde_json::to_vec(&rows).ok()
    }
}

/// Keep the sessions table in `path` (0600, replaced whole) if it changed.
pub(super) async fn keep(seen: &std::sync::Mutex<Seen>, path: &std::path::Path) {
    let Some(bytes) = seen.lock().unwrap_or_else(|p| p.into_inner()).changed() else {
        return;
    };
    let path = path.to_path_buf();
    let written = tokio::task::spawn_blocking(move || {
        crate::atomic::write_private(&path, &bytes).map_err(|e| (path, e))
    })
    .await;
    if let Ok(Err((path, e))) = written {
        eprintln!(
            "hookd: cannot keep the sessions table in {}: {e}",
            path.display()
        );
    }
}

/// Note a dispatch for the sessions table.
pub(super) fn saw(state: &super::AppState, context: &Context, point: HookPoint, project: &str) {
    let Some(session) = context.get("session_id").and_then(|v| v.as_str()) else {
        return;
    };
    // Both come from the agent: an over-long id is kept by its digest (as the sessions' state
    // keeps it), an agent's name cut short, so a thousand rows stay a thousand small rows.
    let session = crate::state::session_key(session);
    let session = session.as_ref();
    let agent = context
        .get("agent")
        .and_then(|v| v.as_str())
        .map(|a| crate::display::clip(a, MOST_AGENT_BYTES).into_owned());
    let now = crate::events::now_rfc3339();
    let mut seen = state.seen.lock().unwrap_or_else(|p| p.into_inner());
    seen.tick += 1;
    let tick = seen.tick;
    if !seen.rows.contains_key(session) && seen.rows.len() >= MOST_SESSIONS {
        if let Some(oldest) = seen
            .rows
            .values()
            .min_by_key(|r| r.tick)
            .map(|r| r.session_id.clone())
        {
            seen.rows.remove(&oldest);
        }
    }
    let row = seen.rows.entry(session.to_string()).or_insert_with(|| Row {
        session_id: session.to_string(),
        agent: None,
        project: project.to_string(),
        first_seen: now.clone(),
        last_seen: now.clone(),
        last_point: point,
        dispatches: 0,
        tick,
    });
    if agent.is_some() {
        row.agent = agent;
    }
    row.last_seen = now;
    row.last_point = point;
    row.dispatches += 1;
    row.tick = tick;
}

#[derive(Deserialize)]
pub(super) struct SessionsQuery {
    limit: Option<usize>,
}

/// `GET /v1/sessions[?limit=N]`: the sessions, most recently active first (at most 200 unless
/// asked for up to 1000).
pub(super) async fn sessions(
    State(state): State<Shared>,
    q: Result<Query<SessionsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let limit = match q {
        Ok(Query(q)) => q.limit.unwrap_or(200).min(MOST_SESSIONS),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{}; expected ?limit=N", e.body_text()),
            )
        }
    };
    let seen = state.seen.lock().unwrap_or_else(|p| p.into_inner());
    let mut rows: Vec<&Row> = seen.rows.values().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.tick));
    rows.truncate(limit);
    Json(serde_json::json!({ "sessions": rows })).into_response()
}

/// `GET /`: the page, with a fresh nonce for its one script and one style: nothing else may
/// run or style it (events are shown as text, and even injected markup would stay inert). It
/// never sends its URL (with the key) anywhere: no referrer, no outside resources.
pub(super) async fn page() -> Response {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for the page's nonce",
        );
    }
    let nonce: String = crate::display::hex(&bytes);
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::REFERRER_POLICY, "no-referrer".to_string()),
            (
                header::CONTENT_SECURITY_POLICY,
                format!("default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
            ),
        ],
        PAGE.replace("__NONCE__", &nonce),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_table_round_trips_and_a_bad_one_is_none_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl.sessions.json");
        let mut seen = Seen::default();
        for (id, tick) in [("old", 1), ("new", 2)] {
            seen.rows.insert(
                id.into(),
                Row {
                    session_id: id.into(),
                    agent: Some("x".repeat(100)),
                    project: "/p".into(),
                    first_seen: String::new(),
                    last_seen: String::new(),
                    last_point: HookPoint::PostTool,
                    dispatches: tick,
                    tick,
                },
            );
        }
        seen.tick = 2;
        std::fs::write(&path, seen.changed().unwrap()).unwrap();
        assert!(seen.changed().is_none(), "unchanged since");
        let mut kept = Seen::kept(&path);
        let mut rows: Vec<&Row> = kept.rows.values().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.tick));
        let ids: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
        assert_eq!(ids, ["new", "old"], "most recently active first, as kept");
        // An agent name written longer than the table keeps is cut as a live one is.
        assert!(rows[0].agent.as_ref().unwrap().len() <= MOST_AGENT_BYTES + 3);
        assert!(kept.changed().is_none(), "read back is not a change");
        // Not JSON, a FIFO (no writer: reading must not block), a directory: none.
        std::fs::write(&path, "not json").unwrap();
        assert!(Seen::kept(&path).rows.is_empty());
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(Seen::kept(&path).rows.is_empty());
        assert!(Seen::kept(dir.path()).rows.is_empty());
        assert!(Seen::kept(&dir.path().join("absent")).rows.is_empty());
    }
}
