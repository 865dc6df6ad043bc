//! `GET /metrics`: what the daemon did, for Grafana and alerts (dashboards/), encoded by
//! `prometheus-client` in the OpenMetrics text format. Every name here is `hookd_*`; a test
//! holds the shipped dashboard and rules to the names this exports.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::hub::Hub;
use super::Shared;
use crate::catalog::HookPoint;
use crate::dispatch::Outcome;
use crate::state::MemoryStore;

/// Latency buckets, in seconds: a dispatch with nothing due takes microseconds, one running a
/// build seconds.
const BUCKETS: [f64; 7] = [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10.0];

/// The content type of the exposition (Prometheus asks for it and reads it).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByPoint {
    point: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByStatus {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByReason {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByBudget {
    budget: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByProject {
    project: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByCode {
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByResult {
    result: &'static str,
}

/// The metrics the dispatch handler and the reloader update, and the registry that encodes
/// them with what the hub and the session store count themselves.
pub(super) struct Metrics {
    registry: Registry,
    dispatches: Family<ByPoint, Counter>,
    commands: Family<ByStatus, Counter>,
    skips: Family<ByReason, Counter>,
    durations: Family<ByPoint, Histogram, fn() -> Histogram>,
    reloads: Family<ByResult, Counter>,
    by_project: Family<ByProject, Counter>,
    projects: Gauge,
    refused: Family<ByCode, Counter>,
}

impl Metrics {
    /// Every family registered; dispatches and reloads start at 0 for each label, so a rate is
    /// defined before the first one.
    pub(super) fn new(hub: Arc<Hub>, sessions: Option<Arc<MemoryStore>>) -> Metrics {
        let mut registry = Registry::default();
        let dispatches = Family::<ByPoint, Counter>::default();
        for p in HookPoint::ALL {
            drop(dispatches.get_or_create(&ByPoint { point: p.name() }));
        }
        let commands = Family::<ByStatus, Counter>::default();
        let skips = Family::<ByReason, Counter>::default();
        let durations: Family<ByPoint, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(BUCKETS));
        let reloads = Family::<ByResult, Counter>::default();
        for result in ["ok", "invalid"] {
            drop(reloads.get_or_create(&ByResult { result }));
        }
        // (The registry ends each help text with a full stop itself.)
        registry.register(
            "hookd_dispatches",
            "Dispatches by hook point",
            dispatches.clone(),
        );
        registry.register(
            "hookd_commands",
            "Command hooks by outcome",
            commands.clone(),
        );
        registry.register(
            "hookd_commands_skipped",
            "Command hooks not run, by reason",
            skips.clone(),
        );
        registry.register(
            "hookd_dispatch_duration_seconds",
            "Dispatch duration by hook point",
            durations.clone(),
        );
        registry.register(
            "hookd_config_reloads",
            "Configuration reloads, by result",
            reloads.clone(),
        );
        let by_project = Family::<ByProject, Counter>::default();
        registry.register(
            "hookd_project_dispatches",
            "Dispatches by project (of the projects served now)",
            by_project.clone(),
        );
        let projects = Gauge::default();
        projects.set(1);
        registry.register(
            "hookd_projects",
            "Projects served, the daemon's own included",
            projects.clone(),
        );
        let refused = Family::<ByCode, Counter>::default();
        registry.register(
            "hookd_clients_refused",
            "Dispatches the daemon did not run, by the HTTP status answered (the client ran them in its own process)",
            refused.clone(),
        );
        registry.register_collector(Box::new(Counted { hub, sessions }));
        Metrics {
            registry,
            dispatches,
            commands,
            skips,
            durations,
            reloads,
            by_project,
            projects,
            refused,
        }
    }

    /// Count one dispatch for `project`.
    pub(super) fn for_project(&self, project: &str) {
        let labels = ByProject {
            project: project.to_string(),
        };
        self.by_project.get_or_create(&labels).inc();
    }

    /// The projects served now, and the one just forgotten (its series goes).
    pub(super) fn projects(&self, served: usize, forgotten: Option<&std::path::Path>) {
        self.projects.set(i64::try_from(served).unwrap_or(i64::MAX));
        if let Some(dir) = forgotten {
            let labels = ByProject {
                project: dir.display().to_string(),
            };
            self.by_project.remove(&labels);
        }
    }

    /// Count one dispatch refused with `status`.
    pub(super) fn refused(&self, status: u16) {
        self.refused.get_or_create(&ByCode { status }).inc();
    }

    /// Count one dispatch, its duration and the hooks it ran or skipped.
    pub(super) fn record(&self, point: HookPoint, outcome: &Outcome, took: Duration) {
        let point = point.name();
        self.dispatches.get_or_create(&ByPoint { point }).inc();
        for c in &outcome.commands {
            self.commands
                .get_or_create(&ByStatus {
                    status: c.status.as_str(),
                })
                .inc();
            if let Some(r) = c.reason {
                self.skips
                    .get_or_create(&ByReason { reason: r.as_str() })
                    .inc();
            }
        }
        self.durations
            .get_or_create(&ByPoint { point })
            .observe(took.as_secs_f64());
    }

    /// Count one configuration reload: applied, or refused as invalid.
    pub(super) fn reloaded(&self, applied: bool) {
        let result = if applied { "ok" } else { "invalid" };
        self.reloads.get_or_create(&ByResult { result }).inc();
    }
}

/// What others count, read at each scrape: the hub's events, subscribers and denials, and the
/// sessions kept.
struct Counted {
    hub: Arc<Hub>,
    sessions: Option<Arc<MemoryStore>>,
}

impl fmt::Debug for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counted").finish_non_exhaustive()
    }
}

impl Collector for Counted {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let c = &self.hub.counters;
        {
            let denials = c.denials.lock().unwrap_or_else(|p| p.into_inner());
            let mut family = encoder.encode_descriptor(
                "hookd_tool_calls_denied",
                "The model's tool calls the gate denied (gate_shell_tools), by reason.",
                None,
                MetricType::Counter,
            )?;
            for (reason, n) in denials.iter() {
                let labels = ByReason { reason };
                ConstCounter::new(*n).encode(family.encode_family(&labels)?)?;
            }
        }
        self.encode_network(&mut encoder)?;
        if let Some(sessions) = &self.sessions {
            let n = i64::try_from(sessions.len()).unwrap_or(i64::MAX);
            ConstGauge::new(n).encode(encoder.encode_descriptor(
                "hookd_sessions",
                "Sessions whose state is kept (idle ones expire).",
                None,
                MetricType::Gauge,
            )?)?;
        }
        ConstCounter::new(c.events.load(Ordering::Relaxed)).encode(encoder.encode_descriptor(
            "hookd_events",
            "Events published.",
            None,
            MetricType::Counter,
        )?)?;
        let subscribers = i64::try_from(c.subscribers.load(Ordering::Relaxed)).unwrap_or(i64::MAX);
        ConstGauge::new(subscribers).encode(encoder.encode_descriptor(
            "hookd_subscribers",
            "Event stream subscribers connected.",
            None,
            MetricType::Gauge,
        )?)?;
        ConstCounter::new(c.dropped.load(Ordering::Relaxed)).encode(encoder.encode_descriptor(
            "hookd_events_dropped",
            "Events subscribers missed: gone from the ring and not in the events log.",
            None,
            MetricType::Counter,
        )?)?;
        ConstCounter::new(c.from_log.load(Ordering::Relaxed)).encode(
            encoder.encode_descriptor(
                "hookd_events_read_back",
                "Events subscribers read back from the events log, having fallen behind the ring.",
                None,
                MetricType::Counter,
            )?,
        )?;
        self.encode_ring(&mut encoder)
    }
}

impl Counted {
    /// Confined commands' connections through hookd's proxy, by verdict, and their bytes.
    fn encode_network(&self, encoder: &mut DescriptorEncoder) -> Result<(), fmt::Error> {
        let network = self
            .hub
            .counters
            .network
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut family = encoder.encode_descriptor(
            "hookd_network_requests",
            "Confined commands' connections through hookd's proxy, by verdict.",
            None,
            MetricType::Counter,
        )?;
        for verdict in ["allowed", "refused"] {
            let n = network.get(verdict).map_or(0, |c| c.0);
            let labels = [("verdict", verdict)];
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "hookd_network_bytes",
            "Bytes confined commands sent (out) and received (in) through hookd's proxy.",
            None,
            MetricType::Counter,
        )?;
        let (out, inn) = network
            .values()
            .fold((0, 0), |(o, i), c| (o + c.1, i + c.2));
        for (direction, n) in [("out", out), ("in", inn)] {
            let labels = [("direction", direction)];
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }

    /// The ring's use of its budgets, and what each budget let go.
    fn encode_ring(&self, encoder: &mut DescriptorEncoder) -> Result<(), fmt::Error> {
        let (events, bytes) = self.hub.kept();
        let budgets = self.hub.budgets();
        let gauge = |n: usize| ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX));
        gauge(events).encode(encoder.encode_descriptor(
            "hookd_ring_events",
            "Events kept in memory for subscribers.",
            None,
            MetricType::Gauge,
        )?)?;
        gauge(bytes).encode(encoder.encode_descriptor(
            "hookd_ring_bytes",
            "Bytes of events kept in memory for subscribers.",
            None,
            MetricType::Gauge,
        )?)?;
        gauge(budgets.ring_bytes).encode(encoder.encode_descriptor(
            "hookd_ring_budget_bytes",
            "The most bytes of events kept in memory (--ring-bytes).",
            None,
            MetricType::Gauge,
        )?)?;
        let mut family = encoder.encode_descriptor(
            "hookd_ring_evicted",
            "Events the ring let go to stay within a budget (--ring events, --ring-bytes bytes).",
            None,
            MetricType::Counter,
        )?;
        let c = &self.hub.counters;
        for (budget, n) in [("events", &c.evicted_events), ("bytes", &c.evicted_bytes)] {
            let labels = ByBudget { budget };
            ConstCounter::new(n.load(Ordering::Relaxed)).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// The Prometheus text format's content type (version 0.0.4).
const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether the scraper's `Accept` asks for the Prometheus text format rather than OpenMetrics:
/// it names `text/plain` and not `application/openmetrics-text` (OpenMetrics otherwise, and by
/// default).
fn wants_prometheus_text(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        let a = a.to_ascii_lowercase();
        a.contains("text/plain") && !a.contains("application/openmetrics-text")
    })
}

/// OpenMetrics text as the Prometheus text format (0.0.4): no `# EOF` or `# UNIT`, and a
/// counter family named as its samples are (`hookd_dispatches_total`), as `promtool check
/// metrics` and older scrapers expect.
fn prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `GET /metrics`: OpenMetrics, or the Prometheus text format when the scraper asks for it.
pub(super) async fn metrics(
    State(state): State<Shared>,
    headers: axum::http::HeaderMap,
) -> Response {
    let mut text = String::new();
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    match prometheus_client::encoding::text::encode(&mut text, &state.metrics.registry) {
        Ok(()) if wants_prometheus_text(accept) => (
            [("content-type", PROMETHEUS_CONTENT_TYPE)],
            prometheus_text(&text),
        )
            .into_response(),
        Ok(()) => ([("content-type", CONTENT_TYPE)], text).into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the metrics could not be encoded",
        )
            .into_response(),
    }
}
