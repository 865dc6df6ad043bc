//! What a configuration will do, written for people: the reports `hookd check`, `hookd trust`
//! and `hookd allow` print. Built here so a program embedding hookd shows the same words; the
//! caller prints them and picks the exit code.

mod check;
mod hooks;
mod lines;
mod trust;
mod verdict;

pub(crate) use crate::display::plural;

pub use check::check;
pub use trust::trust_review;
pub use verdict::{command_verdict, model_verdict};

use crate::host::Host;

/// What a report reads of the process it runs in, read by the caller (the binary's edge):
/// the process as a [`Host`], and where telemetry goes.
#[derive(Clone, Debug, Default)]
pub struct Around {
    /// The process: its directory and its environment.
    pub host: Host,
    /// Where OpenTelemetry export goes, if anywhere (one line, header names only).
    pub telemetry: Option<String>,
}
