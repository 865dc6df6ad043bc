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

/// The most a one-shot process spends exporting when `OTEL_EXPORTER_OTLP_TIMEOUT` is not set.
pub const ONE_SHOT_BUDGET: Duration = Duration::from_millis(20);

/// What is waiting to be sent.
#[derive(Default)]
struct Pending {
    spans: Vec<Span>,
    logs: Vec<LogRecord>,
    dropped: u64,
}

/// Collects spans (as a dispatch observer) and log records (as an event sink) and sends them.
pub struct Exporter {
    settings: Settings,
    resource: Resource,
    pending: Mutex<Pending>,
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
        })
    }

    /// What it exports where.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Send what is pending, giving up after `budget` (spent across both signals).
    pub fn flush(&self, budget: Duration) -> Flushed {
        let deadline = Instant::now() + budget;
        let (spans, logs, dropped) = {
            let mut p = self.pending();
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
            out.record(
                n,
                http::post(target, &request.encode_to_vec(), deadline),
                true,
            );
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
            out.record(
                n,
                http::post(target, &request.encode_to_vec(), deadline),
                false,
            );
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
        std::thread::spawn(move || loop {
            let stopping = !matches!(
                stop.recv_timeout(every),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            );
            // At the daemon's stop, a mute collector may hold it 2 s at most.
            let budget = if stopping {
                me.settings.timeout.min(Duration::from_secs(2))
            } else {
                me.settings.timeout
            };
            let f = me.flush(budget);
            if let Some(e) = &f.error {
                tracing::warn!(
                    "OpenTelemetry export: {e}; {} spans or records lost",
                    f.lost
                );
            }
            if stopping {
                return;
            }
        })
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
        let room = MOST_PENDING.saturating_sub(p.spans.len());
        p.dropped += spans.len().saturating_sub(room) as u64;
        p.spans.extend(spans.into_iter().take(room));
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
}

impl EventSink for Exporter {
    fn emit(&self, event: &Stamped) {
        if self.settings.logs.is_none() {
            return;
        }
        let record = map::log_record(event);
        let mut p = self.pending();
        if p.logs.len() < MOST_PENDING {
            p.logs.push(record);
        } else {
            p.dropped += 1;
        }
    }
}
