//! `GET /v1/events`: the event stream as Server-Sent Events. A subscriber is a place in the
//! event numbering: each write hands it what follows that place, from the ring, or from the
//! events log once the ring has let it go, a budget of bytes at a time. A subscriber that stops
//! reading holds nothing but its place, never slows a dispatch, and when it reads again gets
//! every later event in order (told `missed` only of what neither the ring nor the log has). At
//! shutdown it gets what was left and a `shutdown` frame. `?session=ID` keeps one session's.

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
use tokio::sync::watch;

use super::backlog::LogCursor;
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
        // digest and the whole id both select it, and so does the id as `hookd events` shows it.
        (Some(w), Some(s)) => crate::state::session_selects(w, s),
    }
}

/// Counts a subscriber while its stream lives.
struct Subscriber(Arc<Hub>);

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.0.counters.subscribers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How long a subscriber's write waits for more events after the first: the most an event is
/// delayed on its way to a dashboard, and what makes a busy stream one write per batch.
const COALESCE: Duration = Duration::from_millis(2);

/// Bytes of events one write may pass over for a subscriber's session filter: a filter that
/// matches nothing in a large log costs this much per write, never the whole log at once.
const SCAN: usize = 1024 * 1024;

/// A comment line this often keeps proxies and idle timeouts from closing a quiet stream.
const PING: Duration = Duration::from_secs(15);

pub(super) async fn events(
    State(state): State<Shared>,
    headers: HeaderMap,
    q: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let (q, last_id) = match request(&headers, q) {
        Ok(r) => r,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let newest = state.hub.newest();
    // Asked to start after an event this daemon never had: say so, rather than wait in silence
    // for a number that may be far away (a daemon restarted without a log numbers from 1).
    if let Some(since) = q.since.filter(|s| *s > newest) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("since={since} is after the newest event ({newest}); use since={newest} or less, or leave it out for new events only"),
        );
    }
    // A reconnecting EventSource sends Last-Event-ID and the URL it first opened: the header,
    // which says where it got to, wins over the URL's `since`. A Last-Event-ID this daemon has
    // not reached is from before a restart without a log: new events, then.
    let cursor = last_id
        .filter(|l| *l <= newest)
        .or(q.since)
        .unwrap_or(newest);
    let follower = Follower::new(&state, cursor, q.session.as_deref());
    // `follow=false`: what there is now, then the end (for `hookd events` without --follow).
    let follow = q.follow.unwrap_or(true);
    let until = (!follow).then_some(newest);
    let body = stream::unfold((follower, until), |(mut f, until)| async move {
        let chunk = f.next(until).await?;
        Some((Ok::<Bytes, Infallible>(chunk), (f, until)))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// The query and the `Last-Event-ID` header, or what is wrong with them (for a 400).
fn request(
    headers: &HeaderMap,
    q: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<(EventsQuery, Option<u64>), String> {
    let Query(q) = q.map_err(|e| {
        format!(
            "{}; expected ?since=SEQ (a number), ?follow=true|false and ?session=ID",
            e.body_text()
        )
    })?;
    let last_id = match headers
        .get("last-event-id")
        .map(|v| v.to_str().map(str::trim))
    {
        None => None,
        Some(Ok(v)) => Some(
            v.parse::<u64>()
                .map_err(|_| format!("Last-Event-ID `{v}` is not an event number"))?,
        ),
        Some(Err(_)) => return Err("Last-Event-ID is not an event number".into()),
    };
    Ok((q, last_id))
}

/// One subscriber: where it got to, what it wants, and what wakes it.
struct Follower {
    guard: Subscriber,
    /// The last event it was given or passed over.
    cursor: u64,
    session: Option<Arc<str>>,
    /// The events log, where what left the ring is read back (`None`: no log; missed).
    log: Option<LogCursor>,
    newest: watch::Receiver<u64>,
    stopping: watch::Receiver<bool>,
    ping: tokio::time::Interval,
    budget: usize,
    done: bool,
}

impl Follower {
    fn new(state: &super::AppState, cursor: u64, session: Option<&str>) -> Follower {
        let hub = state.hub.clone();
        hub.counters.subscribers.fetch_add(1, Ordering::Relaxed);
        let mut ping = tokio::time::interval(PING);
        ping.reset();
        Follower {
            cursor,
            session: session.map(Arc::from),
            log: state
                .log
                .clone()
                .map(|(path, keep)| LogCursor::new(path, keep)),
            newest: hub.watch(),
            stopping: state.stopping.clone(),
            ping,
            budget: hub.budgets().subscriber_bytes,
            done: false,
            guard: Subscriber(hub),
        }
    }

    fn hub(&self) -> &Hub {
        &self.guard.0
    }

    /// The next write: what follows the cursor (waiting for it), a ping, or at shutdown what
    /// is left and then the `shutdown` frame. `until`: end once past it (`follow=false`).
    async fn next(&mut self, until: Option<u64>) -> Option<Bytes> {
        loop {
            if self.done || until.is_some_and(|u| self.cursor >= u) {
                return None;
            }
            self.newest.borrow_and_update();
            let mut out = Vec::new();
            let before = self.cursor;
            self.fill(&mut out).await;
            // Only events its session filter passes over: an `id:` line alone moves its resume
            // point on (EventSource keeps it for Last-Event-ID), and the next write goes on.
            if out.is_empty() && self.cursor != before {
                return Some(Bytes::from(format!("id: {}\n\n", self.cursor)));
            }
            if !out.is_empty() {
                // What arrives within COALESCE goes in the same write.
                let deadline = tokio::time::Instant::now() + COALESCE;
                while out.len() < self.budget && !*self.stopping.borrow() {
                    match tokio::time::timeout_at(deadline, self.newest.changed()).await {
                        Ok(Ok(())) => self.fill(&mut out).await,
                        _ => break,
                    }
                }
                return Some(out.into());
            }
            if *self.stopping.borrow() {
                self.done = true;
                return Some(hub::frame(None, "shutdown", "{}"));
            }
            tokio::select! {
                changed = self.newest.changed() => changed.ok()?,
                _ = self.ping.tick() => return Some(Bytes::from_static(b":\n\n")),
                _ = self.stopping.changed() => {}
            }
        }
    }

    /// Append what follows the cursor to `out`, up to the subscriber's budget: the ring's
    /// events, or first those that left it, read back from the log. Events its session filter
    /// passes over count too, up to [`SCAN`] bytes: then it returns, whatever `out` holds.
    async fn fill(&mut self, out: &mut Vec<u8>) {
        let mut scanned = 0;
        while out.len() < self.budget && scanned < SCAN {
            let batch = self.hub().after(self.cursor, self.budget - out.len());
            if let Some(oldest) = batch.gap_until {
                scanned += self.read_back(oldest, out).await;
                continue;
            }
            if batch.events.is_empty() {
                return;
            }
            for p in &batch.events {
                scanned += p.frame.len();
                self.cursor = p.seq;
                if wanted_by(self.session.as_deref(), p.session.as_deref()) {
                    out.extend_from_slice(&p.frame);
                }
            }
        }
    }

    /// The events between the cursor and `oldest` (the ring's oldest), from the log as far as
    /// the budget goes; what the log does not have either is missed, and the subscriber told.
    /// Returns the bytes read back.
    async fn read_back(&mut self, oldest: u64, out: &mut Vec<u8>) -> usize {
        let lines = match self.log.take() {
            Some(mut log) => {
                let (after, budget) = (self.cursor, self.budget.saturating_sub(out.len()));
                let read = super::backlog::off_the_dispatch_pool(move || {
                    let lines = log.read(after, oldest, budget);
                    (log, lines)
                })
                .await;
                match read {
                    Some((log, lines)) => {
                        self.log = Some(log);
                        lines
                    }
                    None => Vec::new(),
                }
            }
            None => Vec::new(),
        };
        let read_all = lines.is_empty();
        let scanned = lines.iter().map(|l| l.json.len()).sum();
        let counters = &self.guard.0.counters;
        counters
            .from_log
            .fetch_add(lines.len() as u64, Ordering::Relaxed);
        // An older hookd may have written a line out of order: never go back, nor send twice.
        for l in lines {
            if l.seq <= self.cursor {
                continue;
            }
            // A hole in the log (lines lost to a full disk, a log removed and written anew):
            // said, never skipped in silence.
            if l.seq > self.cursor + 1 {
                self.missed(l.seq, out);
            }
            self.cursor = l.seq;
            if wanted_by(self.session.as_deref(), l.session.as_deref()) {
                out.extend_from_slice(&hub::frame(Some(l.seq), "hookd", &l.json));
            }
        }
        // The log has nothing more before the ring's oldest: what is between was lost.
        if read_all && oldest > self.cursor + 1 {
            self.missed(oldest, out);
        }
        scanned
    }

    /// The events before `resume_from` after the cursor are in neither the ring nor the log:
    /// count them, tell the subscriber, and go on from there.
    fn missed(&mut self, resume_from: u64, out: &mut Vec<u8>) {
        let n = resume_from - self.cursor - 1;
        self.guard
            .0
            .counters
            .dropped
            .fetch_add(n, Ordering::Relaxed);
        let note = json!({"missed": n, "resume_from": resume_from});
        out.extend_from_slice(&hub::frame(None, "missed", &note.to_string()));
        self.cursor = resume_from - 1;
    }
}
