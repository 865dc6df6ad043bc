//! `GET /metrics`: what the daemon did, in Prometheus' text format, for Grafana and alerts
//! (dashboards/). Every name here is `hookd_*`; a test holds the shipped dashboard and rules to
//! the names this exports.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::{AppState, Shared};
use crate::catalog::HookPoint;
use crate::dispatch::Outcome;

/// Latency buckets, in seconds: a dispatch with nothing due takes microseconds, one running a
/// build seconds.
const BUCKETS: [f64; 7] = [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10.0];

/// One point's dispatch durations.
#[derive(Default)]
struct Histogram {
    /// Counts per bucket, the last one past the largest bound.
    buckets: [u64; BUCKETS.len() + 1],
    sum: f64,
}

/// Counters the dispatch handler and the reloader update.
#[derive(Default)]
pub(super) struct Metrics {
    dispatches: BTreeMap<&'static str, u64>,
    commands: BTreeMap<String, u64>,
    skips: BTreeMap<String, u64>,
    durations: BTreeMap<&'static str, Histogram>,
    /// Configuration reloads applied.
    pub(super) reloads_applied: u64,
    /// Changed configurations refused as invalid.
    pub(super) reloads_invalid: u64,
}

/// Count one dispatch and the hooks it ran or skipped.
pub(super) fn record(state: &AppState, point: HookPoint, outcome: &Outcome, took: Duration) {
    let mut m = state.metrics.lock().unwrap_or_else(|p| p.into_inner());
    *m.dispatches.entry(point.name()).or_default() += 1;
    for c in &outcome.commands {
        let status = serde_json::to_value(c.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        *m.commands.entry(status).or_default() += 1;
        if let Some(r) = c.reason {
            *m.skips.entry(r.as_str().to_string()).or_default() += 1;
        }
    }
    let secs = took.as_secs_f64();
    let h = m.durations.entry(point.name()).or_default();
    h.sum += secs;
    let i = BUCKETS
        .iter()
        .position(|b| secs <= *b)
        .unwrap_or(BUCKETS.len());
    h.buckets[i] += 1;
}

pub(super) async fn metrics(State(state): State<Shared>) -> Response {
    let s = render(&state);
    ([("content-type", "text/plain; version=0.0.4")], s).into_response()
}

fn family(s: &mut String, name: &str, kind: &str, help: &str) {
    s.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
}

fn render(state: &AppState) -> String {
    let m = state.metrics.lock().unwrap_or_else(|p| p.into_inner());
    let mut s = String::new();
    family(
        &mut s,
        "hookd_dispatches_total",
        "counter",
        "Dispatches by hook point.",
    );
    for p in HookPoint::ALL {
        s.push_str(&format!(
            "hookd_dispatches_total{{point=\"{}\"}} {}\n",
            p.name(),
            m.dispatches.get(p.name()).unwrap_or(&0)
        ));
    }
    family(
        &mut s,
        "hookd_commands_total",
        "counter",
        "Command hooks by outcome.",
    );
    for (status, n) in &m.commands {
        s.push_str(&format!(
            "hookd_commands_total{{status=\"{status}\"}} {n}\n"
        ));
    }
    family(
        &mut s,
        "hookd_commands_skipped_total",
        "counter",
        "Command hooks not run, by reason.",
    );
    for (reason, n) in &m.skips {
        s.push_str(&format!(
            "hookd_commands_skipped_total{{reason=\"{reason}\"}} {n}\n"
        ));
    }
    family(
        &mut s,
        "hookd_tool_calls_denied_total",
        "counter",
        "The model's tool calls the gate denied (gate_shell_tools), by reason.",
    );
    {
        let denials = state
            .hub
            .counters
            .denials
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for (reason, n) in denials.iter() {
            s.push_str(&format!(
                "hookd_tool_calls_denied_total{{reason=\"{reason}\"}} {n}\n"
            ));
        }
    }
    family(
        &mut s,
        "hookd_dispatch_duration_seconds",
        "histogram",
        "Dispatch duration by hook point.",
    );
    for (point, h) in &m.durations {
        let mut cumulative = 0;
        for (i, b) in BUCKETS.iter().enumerate() {
            cumulative += h.buckets[i];
            s.push_str(&format!(
                "hookd_dispatch_duration_seconds_bucket{{point=\"{point}\",le=\"{b}\"}} {cumulative}\n"
            ));
        }
        cumulative += h.buckets[BUCKETS.len()];
        s.push_str(&format!(
            "hookd_dispatch_duration_seconds_bucket{{point=\"{point}\",le=\"+Inf\"}} {cumulative}\n\
             hookd_dispatch_duration_seconds_sum{{point=\"{point}\"}} {}\n\
             hookd_dispatch_duration_seconds_count{{point=\"{point}\"}} {cumulative}\n",
            h.sum
        ));
    }
    family(
        &mut s,
        "hookd_config_reloads_total",
        "counter",
        "Configuration reloads, by result.",
    );
    for (result, n) in [("ok", m.reloads_applied), ("invalid", m.reloads_invalid)] {
        s.push_str(&format!(
            "hookd_config_reloads_total{{result=\"{result}\"}} {n}\n"
        ));
    }
    if let Some(sessions) = &state.sessions {
        family(
            &mut s,
            "hookd_sessions",
            "gauge",
            "Sessions whose state is kept (idle ones expire).",
        );
        s.push_str(&format!("hookd_sessions {}\n", sessions.len()));
    }
    let c = &state.hub.counters;
    family(&mut s, "hookd_events_total", "counter", "Events published.");
    s.push_str(&format!(
        "hookd_events_total {}\n",
        c.events.load(Ordering::Relaxed)
    ));
    family(
        &mut s,
        "hookd_subscribers",
        "gauge",
        "Event stream subscribers connected.",
    );
    s.push_str(&format!(
        "hookd_subscribers {}\n",
        c.subscribers.load(Ordering::Relaxed)
    ));
    family(
        &mut s,
        "hookd_events_dropped_total",
        "counter",
        "Events slow subscribers missed.",
    );
    s.push_str(&format!(
        "hookd_events_dropped_total {}\n",
        c.dropped.load(Ordering::Relaxed)
    ));
    s
}
