//! The daemon's event hub: every event goes into one ring, bounded in events and in bytes, and
//! subscribers read the ring from where they got to. A subscriber that stops reading holds no
//! events of its own (what it has not read is the ring's, or the events log's), so however many
//! stall, memory stays the ring's budget. Emitting never waits for a subscriber.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::events::{EventSink, Stamped};

/// One event as subscribers get it: its sequence number and its Server-Sent Events frame,
/// rendered once here rather than once per subscriber.
#[derive(Clone, Debug)]
pub struct Published {
    /// The event's `seq`.
    pub seq: u64,
    /// The event's session (`None` for configuration events), for per-session streams.
    pub session: Option<Arc<str>>,
    /// `id: SEQ`, `event: hookd`, `data: JSON` and the blank line that ends the frame.
    pub frame: axum::body::Bytes,
}

/// An SSE frame; `data` must be one line (event JSON is). Allocated at its exact size: the ring
/// is budgeted by frame length, and a grown buffer would hold up to twice that.
pub(crate) fn frame(id: Option<u64>, event: &str, data: &str) -> axum::body::Bytes {
    let id = id.map(|i| format!("id: {i}\n")).unwrap_or_default();
    let parts = [id.as_str(), "event: ", event, "\ndata: ", data, "\n\n"];
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(p.as_bytes());
    }
    out.into()
}

/// A size in bytes as a person writes it: a number, or one with K, M or G (powers of 1024;
/// KB, KiB… also read) after it; at least 1K.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let not_a_size = || SizeError::NotASize(s.to_string());
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(not_a_size()),
    };
    let n: u64 = n.parse().map_err(|_| not_a_size())?;
    n.checked_shl(shift)
        .filter(|v| v >> shift == n && *v >= 1024)
        .ok_or_else(|| SizeError::OutOfRange(s.to_string()))
}

/// Why [`parse_size`] did not read a size; each holds the text as given.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// Not a number with an optional K, M or G.
    #[error("`{0}` is not a size: a number of bytes, or one with K, M or G after it (e.g. 32M)")]
    NotASize(String),
    /// A size below 1K or past what 64 bits hold.
    #[error("`{0}` is out of range: from 1K up")]
    OutOfRange(String),
}

/// How much of the daemon's memory events may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budgets {
    /// Events the ring keeps at most.
    pub ring_events: usize,
    /// Bytes (of rendered frames) the ring keeps at most; the newest event is kept whatever
    /// its size.
    pub ring_bytes: usize,
    /// Bytes one subscriber is handed per write: what a subscriber that stops reading can
    /// hold on the daemon's side (with the HTTP server's own write buffer).
    pub subscriber_bytes: usize,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            ring_events: 10_000,
            ring_bytes: 32 * 1024 * 1024,
            subscriber_bytes: 256 * 1024,
        }
    }
}

impl Budgets {
    /// These budgets with others for the ring.
    pub fn ring(self, events: usize, bytes: usize) -> Self {
        Budgets {
            ring_events: events.max(1),
            ring_bytes: bytes,
            ..self
        }
    }

    /// These budgets with another one per subscriber.
    pub fn subscriber(self, bytes: usize) -> Self {
        Budgets {
            subscriber_bytes: bytes.max(1),
            ..self
        }
    }
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Counters {
    /// Events published.
    pub events: AtomicU64,
    /// Events a subscriber missed: they had left the ring and were not in the events log
    /// (summed over subscribers).
    pub dropped: AtomicU64,
    /// Subscribers connected now.
    pub subscribers: AtomicU64,
    /// Events the ring let go because it was at its byte budget.
    pub evicted_bytes: AtomicU64,
    /// Events the ring let go because it was at its event budget.
    pub evicted_events: AtomicU64,
    /// Events a subscriber read back from the events log, having fallen behind the ring.
    pub from_log: AtomicU64,
    /// The model's tool calls the gate denied (`tool_command_denied`), by reason.
    pub denials: Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Confined commands' connections through hookd's proxy (`network_request`), by verdict,
    /// and their bytes out and in.
    pub network: Mutex<std::collections::BTreeMap<String, (u64, u64, u64)>>,
}

/// The events kept, oldest first, and the bytes of their frames.
#[derive(Default)]
struct Ring {
    events: VecDeque<Published>,
    bytes: usize,
}

/// What a subscriber gets when it asks for the events after the one it got to.
#[derive(Debug, Default)]
pub struct Batch {
    /// Kept events after it, oldest first, at most a subscriber's budget of bytes (at least one
    /// event when any is newer).
    pub events: Vec<Published>,
    /// The oldest kept event when the ones between have left the ring: read them from the log
    /// (or say they were missed) before these.
    pub gap_until: Option<u64>,
}

/// Keeps the recent events within its budgets and tells subscribers when there are new ones.
pub struct Hub {
    ring: Mutex<Ring>,
    budgets: Budgets,
    /// The newest event's number (the one before the first when none was emitted yet).
    newest: watch::Sender<u64>,
    /// Counters for `/metrics`.
    pub counters: Counters,
}

impl Hub {
    /// A hub keeping events within `budgets`, whose first event will follow number `last` (a
    /// daemon restarted on its events log goes on from the log's newest).
    pub fn new(budgets: Budgets, last: u64) -> Arc<Hub> {
        Arc::new(Hub {
            ring: Mutex::new(Ring::default()),
            budgets,
            newest: watch::Sender::new(last),
            counters: Counters::default(),
        })
    }

    /// The budgets it keeps to.
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The newest event's number (0, or the log's newest, before any).
    pub fn newest(&self) -> u64 {
        *self.newest.borrow()
    }

    /// A receiver that wakes when a newer event arrives.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.newest.subscribe()
    }

    /// The events and bytes kept now.
    pub fn kept(&self) -> (usize, usize) {
        let ring = self.ring();
        (ring.events.len(), ring.bytes)
    }

    /// The kept events after number `after`, at most `budget` bytes of them (at least one).
    pub fn after(&self, after: u64, budget: usize) -> Batch {
        let ring = self.ring();
        let Some(oldest) = ring.events.front().map(|p| p.seq) else {
            // None yet (a daemon just started on an old log): what it asks for is in the log.
            let newest = self.newest();
            return Batch {
                events: Vec::new(),
                gap_until: (after < newest).then(|| newest.saturating_add(1)),
            };
        };
        if oldest > after.saturating_add(1) && after < self.newest() {
            return Batch {
                events: Vec::new(),
                gap_until: Some(oldest),
            };
        }
        let start = ring.events.partition_point(|p| p.seq <= after);
        let mut events = Vec::new();
        let mut bytes = 0;
        for p in ring.events.range(start..) {
            if !events.is_empty() && bytes + p.frame.len() > budget {
                break;
            }
            bytes += p.frame.len();
            events.push(p.clone());
        }
        Batch {
            events,
            gap_until: None,
        }
    }

    /// Keep `p`, letting the oldest go while either budget is exceeded.
    fn keep(&self, p: Published) {
        let mut ring = self.ring();
        ring.bytes += p.frame.len();
        let seq = p.seq;
        ring.events.push_back(p);
        while ring.events.len() > 1 {
            let counter = if ring.events.len() > self.budgets.ring_events {
                &self.counters.evicted_events
            } else if ring.bytes > self.budgets.ring_bytes {
                &self.counters.evicted_bytes
            } else {
                break;
            };
            if let Some(gone) = ring.events.pop_front() {
                ring.bytes -= gone.frame.len();
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Under the ring's lock: a subscriber told of `seq` finds it kept (or already gone).
        self.newest.send_replace(seq);
    }
}

impl EventSink for Hub {
    fn emit(&self, event: &Stamped) {
        let published = Published {
            seq: event.seq,
            session: event.event.session_id().map(Arc::from),
            frame: frame(Some(event.seq), "hookd", &event.to_json()),
        };
        if let crate::events::Event::ToolCommandDenied(d) = &event.event {
            let mut denials = self
                .counters
                .denials
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            *denials.entry(d.reason.as_str()).or_default() += 1;
        }
        if let crate::events::Event::NetworkRequest(n) = &event.event {
            let mut network = self
                .counters
                .network
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let c = network.entry(n.verdict.clone()).or_default();
            *c = (c.0 + 1, c.1 + n.bytes_out, c.2 + n.bytes_in);
        }
        self.keep(published);
        self.counters.events.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn published(seq: u64, bytes: usize) -> Published {
        Published {
            seq,
            session: None,
            frame: vec![b'x'; bytes].into(),
        }
    }

    #[test]
    fn the_ring_keeps_to_both_budgets_and_reports_a_gap() {
        let hub = Hub::new(Budgets::default().ring(4, 250), 0);
        for seq in 1..=6 {
            hub.keep(published(seq, 100));
        }
        // 250 bytes hold two frames of 100: 5 and 6.
        assert_eq!(hub.kept(), (2, 200));
        assert_eq!(hub.counters.evicted_bytes.load(Ordering::Relaxed), 4);
        assert_eq!(hub.after(1, 1000).gap_until, Some(5));
        assert_eq!(hub.after(4, 1000).events.len(), 2);
        // A budget smaller than one frame still gets one.
        assert_eq!(hub.after(4, 10).events.len(), 1);
        assert!(hub.after(6, 1000).events.is_empty());
        // The newest is kept whatever its size.
        hub.keep(published(7, 10_000));
        assert_eq!(hub.kept(), (1, 10_000));
        let many = Hub::new(Budgets::default().ring(3, usize::MAX), 0);
        for seq in 1..=5 {
            many.keep(published(seq, 1));
        }
        assert_eq!(many.kept(), (3, 3));
        assert_eq!(many.counters.evicted_events.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_hub_started_after_a_log_has_no_gap_before_its_first_event() {
        let hub = Hub::new(Budgets::default(), 41);
        assert_eq!(hub.newest(), 41);
        hub.keep(published(42, 1));
        let b = hub.after(41, 100);
        assert_eq!((b.gap_until, b.events.len()), (None, 1));
    }
}
