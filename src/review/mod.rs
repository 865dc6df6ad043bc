//! What a configuration will do, written for people: the reports `hookd check`, `hookd trust`
//! and `hookd allow` print. Built here so a program embedding hookd shows the same words; the
//! caller prints them and picks the exit code.

mod check;
mod hooks;
mod lines;
mod trust;
mod verdict;

pub(crate) use crate::display::plural;

pub use check::{check, CheckReport};
pub use trust::{trust_review, TrustReview};
pub use verdict::{command_verdict, model_verdict, verdict_json, VerdictReport};

use std::ffi::OsString;
use std::path::PathBuf;

/// What a report reads of the process it runs in, read by the caller (the binary's edge):
/// the directory it works in and its environment.
#[derive(Clone, Debug, Default)]
pub struct Around {
    /// The current directory, if it can be read.
    pub cwd: Option<PathBuf>,
    /// The environment's variables.
    pub vars: Vec<(OsString, OsString)>,
    /// Where OpenTelemetry export goes, if anywhere (one line, header names only).
    pub telemetry: Option<String>,
}

impl Around {
    /// One variable's value.
    pub fn var(&self, name: &str) -> Option<OsString> {
        self.vars
            .iter()
            .find(|(k, _)| k.as_os_str() == name)
            .map(|(_, v)| v.clone())
    }
}
