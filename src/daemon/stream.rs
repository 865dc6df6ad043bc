//! `GET /v1/events`: the event stream as Server-Sent Events. A subscriber resumes after the
//! event it names (from the ring, then the events log), then follows live; slow subscribers
//! lose events (counted and told), never slow a dispatch; at shutdown it gets what was left
//! and a `shutdown` frame. `?session=ID` keeps one session's events only.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::hub::{self, Hub};
use super::{error, Shared};

#[derive(Deserialize)]
pub(super) struct EventsQuery {
    since: Option<u64>,
    /// `false`: send the kept events and end (for `hookd events` without `--follow`).
    follow: Option<bool>,
    /// Only this session's events (configuration events, which belong to no session, too).
    session: Option<String>,
}

/// Whether an event of `session` goes to a subscriber that asked for `wanted`. Configuration
/// events belong to every session's view: a reload matters to all of them.
fn wanted_by(wanted: Option<&str>, session: Option<&str>) -> bool {
    match (wanted, session) {
        (None, _) | (_, None) => true,
        // Events name an over-long id by its digest (older logs may hold it whole); the
        // digest and the whole id both select it.
        (Some(w), Some(s)) => {
            w == s || crate::state::session_key(s) == crate::state::session_key(w)
        }
    }
}

/// Counts a subscriber while its stream lives.
struct Subscriber(Arc<Hub>);

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.0.counters.subscribers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// At most this many queued events go out in one write: under load a subscriber costs one
/// write per batch, not one per event.
const BATCH: usize = 256;

/// How long a subscriber's write waits for more events after the first: the most an event is
/// delayed on its way to a dashboard.
const COALESCE: Duration = Duration::from_millis(2);

pub(super) async fn events(
    State(state): State<Shared>,
    headers: HeaderMap,
    q: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Query(q) = match q {
        Ok(q) => q,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "{}; expected ?since=SEQ (a number), ?follow=true|false and ?session=ID",
                    e.body_text()
                ),
            )
        }
    };
    let last_id = match headers
        .get("last-event-id")
        .map(|v| v.to_str().map(str::trim))
    {
        None => None,
        Some(Ok(v)) => match v.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("Last-Event-ID `{v}` is not an event number"),
                )
            }
        },
        Some(Err(_)) => {
            return error(
                StatusCode::BAD_REQUEST,
                "Last-Event-ID is not an event number",
            )
        }
    };
    // Asked to start after an event this daemon never had: say so, rather than wait in silence
    // for a number that may be far away (a daemon restarted without a log numbers from 1).
    if let Some(since) = q.since {
        let newest = state.hub.newest().unwrap_or(0);
        if since > newest {
            return error(
                StatusCode::BAD_REQUEST,
                format!("since={since} is after the newest event ({newest}); use since={newest} or less, or leave it out for new events only"),
            );
        }
    }
    // A reconnecting EventSource sends Last-Event-ID and the URL it first opened: the header,
    // which says where it got to, wins over the URL's `since`.
    let since = last_id.or(q.since).unwrap_or(u64::MAX);
    let session: Option<Arc<str>> = q.session.as_deref().map(Arc::from);
    let keep = {
        let session = session.clone();
        move |s: Option<&str>| wanted_by(session.as_deref(), s)
    };
    let hub = state.hub.clone();
    let (backlog, rx) = hub.subscribe(if since == u64::MAX { u64::MAX } else { since });
    // Resuming from before the oldest kept event: the events log has the rest, if there is
    // one; what it does not have either is counted as missed.
    let mut first = Vec::new();
    let oldest = backlog.first().map(|p| p.seq).or_else(|| hub.oldest());
    if let Some(oldest) = oldest.filter(|o| since != u64::MAX && *o > since + 1) {
        let from_log = match state.log.clone() {
            Some((path, keep)) => tokio::task::spawn_blocking(move || {
                crate::events::read_log(&path, keep, since, oldest)
            })
            .await
            .unwrap_or_default(),
            None => Vec::new(),
        };
        let resume_from = from_log.first().map_or(oldest, |(s, _)| *s);
        if resume_from > since + 1 {
            let note = json!({"missed": resume_from - since - 1, "resume_from": resume_from});
            first.extend_from_slice(&hub::frame(None, "missed", &note.to_string()));
        }
        for (seq, line) in &from_log {
            if session.is_some() {
                let of = serde_json::from_str::<serde_json::Value>(line).ok();
                let s = of.as_ref().and_then(|v| v["session_id"].as_str());
                if !keep(s) {
                    continue;
                }
            }
            first.extend_from_slice(&hub::frame(Some(*seq), "hookd", line));
        }
    }
    for p in backlog.iter().filter(|p| keep(p.session.as_deref())) {
        first.extend_from_slice(&p.frame);
    }
    hub.counters.subscribers.fetch_add(1, Ordering::Relaxed);
    let guard = Subscriber(hub.clone());
    let stopping = state.stopping.clone();
    // A comment line every 15 s keeps proxies and idle-timeouts from closing a quiet stream.
    let mut ping = tokio::time::interval(Duration::from_secs(15));
    ping.reset();
    let live = stream::unfold(
        (rx, guard, stopping, ping, false),
        move |(mut rx, guard, mut stopping, mut ping, done)| {
            let keep = keep.clone();
            async move {
                if done {
                    return None;
                }
                // Shutting down: what was published (the `interrupted` events of the runs the
                // shutdown killed among them) goes out, then a `shutdown` frame, then the end.
                let last_words = |rx: &mut tokio::sync::broadcast::Receiver<hub::Published>| {
                    let mut out = Vec::new();
                    while let Ok(p) = rx.try_recv() {
                        if keep(p.session.as_deref()) {
                            out.extend_from_slice(&p.frame);
                        }
                    }
                    out.extend_from_slice(&hub::frame(None, "shutdown", "{}"));
                    Ok::<Bytes, Infallible>(Bytes::from(out))
                };
                if *stopping.borrow() {
                    let chunk = last_words(&mut rx);
                    return Some((chunk, (rx, guard, stopping, ping, true)));
                }
                let mut out = Vec::new();
                // Wait for something to send: another session's events do not count (an empty
                // chunk is never written).
                while out.is_empty() {
                    tokio::select! {
                        r = rx.recv() => match r {
                            Ok(p) if keep(p.session.as_deref()) => out.extend_from_slice(&p.frame),
                            Ok(_) => {}
                            Err(RecvError::Lagged(n)) => missed(&guard, n, &mut out),
                            Err(RecvError::Closed) => return None,
                        },
                        _ = ping.tick() => out.extend_from_slice(b":\n\n"),
                        _ = stopping.changed() => {
                            let chunk = last_words(&mut rx);
                            return Some((chunk, (rx, guard, stopping, ping, true)));
                        }
                    }
                }
                // What arrives within COALESCE goes in the same write: at thousands of events a
                // second, one wake-up and one write per subscriber per batch instead of per event.
                let until = tokio::time::Instant::now() + COALESCE;
                for _ in 0..BATCH {
                    match rx.try_recv() {
                        Ok(p) if keep(p.session.as_deref()) => out.extend_from_slice(&p.frame),
                        Ok(_) => {}
                        Err(TryRecvError::Lagged(n)) => missed(&guard, n, &mut out),
                        Err(TryRecvError::Empty) => {
                            match tokio::time::timeout_at(until, rx.recv()).await {
                                Ok(Ok(p)) if keep(p.session.as_deref()) => {
                                    out.extend_from_slice(&p.frame)
                                }
                                Ok(Ok(_)) => {}
                                Ok(Err(RecvError::Lagged(n))) => missed(&guard, n, &mut out),
                                Ok(Err(RecvError::Closed)) | Err(_) => break,
                            }
                        }
                        Err(_) => break,
                    }
                }
                let chunk: Result<Bytes, Infallible> = Ok(Bytes::from(out));
                Some((chunk, (rx, guard, stopping, ping, false)))
            }
        },
    );
    // An empty chunk would read as the end of the body: send the head only when there is one.
    let head = stream::iter((!first.is_empty()).then(|| Ok::<_, Infallible>(Bytes::from(first))));
    let body = if q.follow.unwrap_or(true) {
        Body::from_stream(futures_util::StreamExt::chain(head, live))
    } else {
        Body::from_stream(head)
    };
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// A subscriber fell so far behind that `n` events left its queue: count them and tell it.
fn missed(guard: &Subscriber, n: u64, out: &mut Vec<u8>) {
    guard.0.counters.dropped.fetch_add(n, Ordering::Relaxed);
    out.extend_from_slice(&hub::frame(
        None,
        "missed",
        &json!({"missed": n}).to_string(),
    ));
}
