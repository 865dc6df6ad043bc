//! The daemon's event hub: every event goes to a ring (for resumption by sequence number) and to
//! a broadcast channel (for live subscribers). Emitting never waits for a subscriber.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

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

/// An SSE frame; `data` must be one line (event JSON is).
pub(crate) fn frame(id: Option<u64>, event: &str, data: &str) -> axum::body::Bytes {
    let id = id.map(|i| format!("id: {i}\n")).unwrap_or_default();
    format!("{id}event: {event}\ndata: {data}\n\n").into()
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Counters {
    /// Events published.
    pub events: AtomicU64,
    /// Events a slow subscriber missed (summed over subscribers).
    pub dropped: AtomicU64,
    /// Subscribers connected now.
    pub subscribers: AtomicU64,
    /// The model's tool calls the gate denied (`tool_command_denied`), by reason.
    pub denials: Mutex<std::collections::BTreeMap<&'static str, u64>>,
}

/// Fans events out to subscribers and keeps the last ones for resumption.
pub struct Hub {
    ring: Mutex<VecDeque<Published>>,
    capacity: usize,
    tx: broadcast::Sender<Published>,
    /// Counters for `/metrics`.
    pub counters: Counters,
}

impl Hub {
    /// A hub keeping `capacity` events for resumption; a subscriber may fall `capacity` events
    /// behind before it misses any.
    pub fn new(capacity: usize) -> Arc<Hub> {
        let (tx, _) = broadcast::channel(capacity.max(16));
        Arc::new(Hub {
            ring: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
            tx,
            counters: Counters::default(),
        })
    }

    /// Subscribe: the kept events after `since` (oldest first), then the live receiver. Taking
    /// both under the ring's lock means no event falls between them.
    pub fn subscribe(&self, since: u64) -> (Vec<Published>, broadcast::Receiver<Published>) {
        let ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        let rx = self.tx.subscribe();
        let backlog = ring.iter().filter(|p| p.seq > since).cloned().collect();
        (backlog, rx)
    }

    /// The newest kept event's number.
    pub fn newest(&self) -> Option<u64> {
        self.ring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .back()
            .map(|p| p.seq)
    }

    /// The oldest sequence number still kept, if any.
    pub fn oldest(&self) -> Option<u64> {
        self.ring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .front()
            .map(|p| p.seq)
    }
}

impl EventSink for Hub {
    fn emit(&self, event: &Stamped) {
        let seq = event.seq;
        let published = Published {
            seq,
            session: event.event.session_id().map(Arc::from),
            frame: frame(Some(seq), "hookd", &event.to_json()),
        };
        if let crate::events::Event::ToolCommandDenied(d) = &event.event {
            let mut denials = self
                .counters
                .denials
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            *denials.entry(d.reason.as_str()).or_default() += 1;
        }
        let mut ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        if ring.len() == self.capacity {
            ring.pop_front();
        }
        ring.push_back(published.clone());
        // No receiver is fine; a full receiver loses its oldest events and is told so.
        let _ = self.tx.send(published);
        self.counters.events.fetch_add(1, Ordering::Relaxed);
    }
}
