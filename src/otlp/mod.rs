//! OpenTelemetry export, OTLP/HTTP with protobuf: what hookd did, for a collector that gathers
//! many machines. Traces: one agent session is one trace (its id derived from the session id,
//! so every process of the session joins it), each dispatch a span named after its point, each
//! hook command a child span. Logs: every event as a log record, its fields as attributes.
//!
//! Built on the official protobuf definitions (`opentelemetry-proto`), not the SDK's batch
//! processors: a one-shot `hookd dispatch` or adapter has all its telemetry when it ends and
//! sends it once, within a few milliseconds whatever the collector does; the daemon sends from
//! a thread of its own. Nothing here changes an outcome.

mod http;
mod map;
mod settings;

pub use settings::{Settings, SettingsError, Target};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;

use crate::dispatch::{DispatchObserver, Dispatched};
use crate::events::{EventSink, Stamped};

/// Spans, or log records, kept for the next export at most; more are dropped (and counted).
const MOST_PENDING: usize = 4096;

/// Bytes (as encoded) of spans and log records kept for the next export at most, both signals
/// together; more are dropped (and counted). With each record's fields capped
/// (`map::FIELD_BYTES`) this holds about 150 events whose hook printed much; a collector that
/// is slow or mute costs the daemon this, plus the batch being sent (as much again, encoded).
pub const MOST_PENDING_BYTES: usize = 4 * 1024 * 1024;

/// The most the daemon's stop waits for the exporter: an export under way when the stop
/// begins, and the last one, end by then (the last gets at least `LAST_EXPORT_LEAST` when
/// the collector answered before). Half the daemon's grace when that is less ([`stop_budget`]).
pub const STOP_BUDGET: Duration = Duration::from_secs(2);

/// The exporter's share of a stop whose grace is `grace`: [`STOP_BUDGET`], or half the grace
/// when that is less, so a collector never holds the daemon past its grace.
pub fn stop_budget(grace: Duration) -> Duration {
    STOP_BUDGET.min(grace / 2)
}

/// The least the last export gets at the daemon's stop, however long the stop took before it.
const LAST_EXPORT_LEAST: Duration = Duration::from_millis(500);

/// The most a one-shot process spends exporting when `OTEL_EXPORTER_OTLP_TIMEOUT` is not set.
pub const ONE_SHOT_BUDGET: Duration = Duration::from_millis(20);

/// What is waiting to be sent.
#[derive(Default)]
struct Pending {
    spans: Vec<Span>,
    logs: Vec<LogRecord>,
    /// What `spans` and `logs` weigh, encoded.
    bytes: usize,
    dropped: u64,
}

impl Pending {
    /// Whether one more item of `bytes` fits both budgets beside the `held` of its kind.
    fn fits(&self, held: usize, bytes: usize) -> bool {
        held < MOST_PENDING && self.bytes + bytes <= MOST_PENDING_BYTES
    }
}

/// Collects spans (as a dispatch observer) and log records (as an event sink) and sends them.
pub struct Exporter {
    settings: Settings,
    resource: Resource,
    pending: Mutex<Pending>,
    /// Set at the daemon's stop: no export goes on past it.
    stop_by: Mutex<Option<Instant>>,
}

/// What one export did.
#[derive(Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Flushed {
    /// Spans the collector took.
    pub spans: usize,
    /// Log records the collector took.
    pub logs: usize,
    /// Spans and records lost: refused, unanswered, or over the pending limit.
    pub lost: u64,
    /// Why, when something was lost.
    pub error: Option<String>,
}

impl Exporter {
    /// An exporter to the settings' targets.
    pub fn new(settings: Settings) -> Arc<Exporter> {
        let resource = Resource {
            attributes: settings
                .resource
                .iter()
                .map(|(k, v)| map::kv(k, map::string(v.clone())))
                .collect(),
            ..Default::default()
        };
        Arc::new(Exporter {
            settings,
            resource,
            pending: Mutex::new(Pending::default()),
            stop_by: Mutex::new(None),
        })
    }

    /// What it exports where.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The daemon stops: an export under way ends by `by` at the latest, whatever the
    /// collector does (a mute one, a slow one), and so does every later one.
    pub fn stop_by(&self, by: Instant) {
        *self.stop_by.lock().unwrap_or_else(|p| p.into_inner()) = Some(by);
    }

    /// When an export started with `deadline` must end: then, or at the stop's limit.
    fn until(&self, deadline: Instant) -> Instant {
        match *self.stop_by.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(by) => deadline.min(by),
            None => deadline,
        }
    }

    /// Send what is pending, giving up after `budget` (spent across both signals).
    pub fn flush(&self, budget: Duration) -> Flushed {
        let deadline = Instant::now() + budget;
        let deadline = || self.until(deadline);
        let (spans, logs, dropped) = {
            let mut p = self.pending();
            p.bytes = 0;
            let dropped = std::mem::take(&mut p.dropped);
            (
                std::mem::take(&mut p.spans),
                std::mem::take(&mut p.logs),
                dropped,
            )
        };
        let mut out = Flushed {
            lost: dropped,
            ..Flushed::default()
        };
        let scope = || {
            Some(InstrumentationScope {
                name: "hookd".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..Default::default()
            })
        };
        if let (Some(target), false) = (&self.settings.traces, spans.is_empty()) {
            let n = spans.len();
            let request = ExportTraceServiceRequest {
                resource_spans: vec![ResourceSpans {
                    resource: Some(self.resource.clone()),
                    scope_spans: vec![ScopeSpans {
                        scope: scope(),
                        spans,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
            };
            // Only the encoded bytes wait on the collector, not the records as well.
            let body = request.encode_to_vec();
            drop(request);
            out.record(n, http::post(target, &body, &deadline), true);
        }
        if let (Some(target), false) = (&self.settings.logs, logs.is_empty()) {
            let n = logs.len();
            let request = ExportLogsServiceRequest {
                resource_logs: vec![ResourceLogs {
                    resource: Some(self.resource.clone()),
                    scope_logs: vec![ScopeLogs {
                        scope: scope(),
                        log_records: logs,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
            };
            // Only the encoded bytes wait on the collector, not the records as well.
            let body = request.encode_to_vec();
            drop(request);
            out.record(n, http::post(target, &body, &deadline), false);
        }
        out
    }

    /// Flush every `every` on a thread of its own until `stop` says so, then once more (the
    /// daemon). Failures are logged (tracing), never raised.
    pub fn run_periodically(
        self: &Arc<Self>,
        every: Duration,
        stop: std::sync::mpsc::Receiver<()>,
    ) -> std::thread::JoinHandle<()> {
        let me = self.clone();
        std::thread::spawn(move || {
            // Whether the last export failed: the collector is in trouble.
            let mut troubled = false;
            loop {
                let stopping = !matches!(
                    stop.recv_timeout(every),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                let budget = if stopping {
                    me.last_budget(troubled)
                } else {
                    me.settings.timeout
                };
                let f = me.flush(budget);
                troubled = f.error.is_some();
                if let Some(e) = &f.error {
                    tracing::warn!(
                        "OpenTelemetry export: {e}; {} spans or records lost",
                        f.lost
                    );
                }
                if stopping {
                    return;
                }
            }
        })
    }

    /// The last export's time at the daemon's stop: what is left of the stop's budget
    /// ([`Exporter::stop_by`], else [`STOP_BUDGET`] from now); at least [`LAST_EXPORT_LEAST`]
    /// unless the collector just failed (a mute one is not waited for twice).
    fn last_budget(&self, troubled: bool) -> Duration {
        let now = Instant::now();
        let left = self.until(now + STOP_BUDGET).saturating_duration_since(now);
        let budget = if troubled {
            left
        } else {
            left.max(LAST_EXPORT_LEAST)
        }
        .min(self.settings.timeout);
        self.stop_by(now + budget);
        budget
    }

    /// The budget a one-shot process spends at its end.
    pub fn one_shot_budget(&self) -> Duration {
        if self.settings.timeout_given {
            self.settings.timeout
        } else {
            ONE_SHOT_BUDGET
        }
    }

    fn keep_spans(&self, spans: Vec<Span>) {
        if self.settings.traces.is_none() {
            return;
        }
        let mut p = self.pending();
        for span in spans {
            let bytes = span.encoded_len();
            if p.fits(p.spans.len(), bytes) {
                p.bytes += bytes;
                p.spans.push(span);
            } else {
                p.dropped += 1;
            }
        }
    }
}

impl Flushed {
    fn record(&mut self, n: usize, sent: Result<u16, String>, spans: bool) {
        match sent {
            Ok(status) if (200..300).contains(&status) => {
                if spans {
                    self.spans = n;
                } else {
                    self.logs = n;
                }
            }
            Ok(status) => {
                self.lost += n as u64;
                self.error = Some(format!("the collector answered {status}"));
            }
            Err(e) => {
                self.lost += n as u64;
                self.error = Some(e);
            }
        }
    }
}

impl DispatchObserver for Exporter {
    fn dispatched(&self, d: &Dispatched<'_>) {
        self.keep_spans(map::spans(d));
    }

    fn connected(&self, connections: &[crate::events::NetworkRequest]) {
        self.keep_spans(map::exec_spans(connections, std::time::SystemTime::now()));
    }
}

impl EventSink for Exporter {
    fn emit(&self, event: &Stamped) {
        if self.settings.logs.is_none() {
            return;
        }
        let record = map::log_record(event);
        let bytes = record.encoded_len();
        let mut p = self.pending();
        if p.fits(p.logs.len(), bytes) {
            p.bytes += bytes;
            p.logs.push(record);
        } else {
            p.dropped += 1;
        }
    }
}
