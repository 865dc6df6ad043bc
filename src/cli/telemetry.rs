//! OpenTelemetry export for this process, from the OTEL_* variables (read here, at the binary's
//! edge, after an adapter dropped what the agent's project set) over the user's own
//! `config.yaml` `telemetry:` (which reaches an adapter whose agent strips the variables),
//! made once. A one-shot process
//! sends what it has when it ends, within a few milliseconds; the daemon sends every second.

use crate::config::LoadOptions;
use crate::otlp::{Exporter, Settings};
use std::sync::{Arc, OnceLock};

static EXPORTER: OnceLock<Option<Arc<Exporter>>> = OnceLock::new();

/// The exporter the variables and the user's `telemetry:` (of `opts`' layers) ask for, if any.
pub(super) fn exporter(opts: Option<&LoadOptions>) -> Option<Arc<Exporter>> {
    EXPORTER
        .get_or_init(|| {
            // Its problems are the configuration's warnings, said where it is loaded.
            let file = opts.map(crate::config::telemetry).unwrap_or_default();
            match Settings::from_sources(|n| std::env::var(n).ok(), |n| file.get(n)) {
                Ok(Some(s)) => Some(Exporter::new(s.with_host_name())),
                Ok(None) => None,
                Err(e) => {
                    eprintln!("hookd: OpenTelemetry export is off: {e}");
                    None
                }
            }
        })
        .clone()
}

/// Send what this process has, within its budget: a collector that is down or slow changes
/// nothing but the log line (at `HOOKD_LOG=debug`).
pub(crate) fn flush_at_exit() {
    if let Some(Some(e)) = EXPORTER.get() {
        let f = e.flush(e.one_shot_budget());
        if let Some(error) = f.error {
            tracing::debug!("OpenTelemetry export: {error}; {} lost", f.lost);
        }
    }
}
