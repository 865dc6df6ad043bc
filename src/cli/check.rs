//! `hookd check`: every file validated, what would run where, the allow-list lint, trust.

use super::error::{Done, Error};
use super::load::{load, options, print_warnings, GateArgs};
use super::{around, out, plural};

/// `hookd check`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) gate: GateArgs,
    /// Exit 1 when any hook would be refused or skipped (denied by the gate, untrusted,
    /// switched off, shadowed by one of yours of the same name, or its program missing), the
    /// project's agent files open a way around hookd, or a key would be ignored, for CI.
    #[arg(long)]
    pub(super) strict: bool,
}

/// `hookd check`: the library's review printed; invalid is its answer (exit 1).
pub(super) fn run(a: Args) -> Done {
    let opts = options(&a.gate.cfg).ok();
    let config = load(a.gate.cfg).map_err(|e| Error::Invalid(Box::new(e)))?;
    print_warnings(&config);
    let report = crate::review::check(config, a.gate.mode, &around(opts.as_ref()));
    if let Some(invalid) = report.invalid {
        return Err(Error::No(invalid));
    }
    for said in [&report.warnings, &report.notes] {
        if !said.is_empty() {
            eprintln!("{}\n", said.join("\n"));
        }
    }
    out(&report.text);
    // Both lists, when both apply: one hides nothing of the other.
    let mut failed: Vec<String> = Vec::new();
    if a.strict && !report.seams.is_empty() {
        failed.push(format!(
            "hookd check --strict: the project's agent files open {} way{} around hookd:\n  {}",
            report.seams.len(),
            plural(report.seams.len()),
            report.seams.join("\n  ")
        ));
    }
    let refused = &report.refused;
    if a.strict && !refused.is_empty() {
        failed.push(format!(
            "hookd check --strict: {} hook{} would not run:\n  {}",
            report.not_run,
            plural(report.not_run),
            refused.join("\n  ")
        ));
    }
    let ignored = &report.ignored_keys;
    if a.strict && !ignored.is_empty() {
        failed.push(format!(
            "hookd check --strict: {} unknown key{} would be ignored (an editor with hookd's schema marks {} as an error):\n  {}",
            ignored.len(),
            plural(ignored.len()),
            if ignored.len() == 1 { "it" } else { "them" },
            ignored.join("\n  ")
        ));
    }
    if !failed.is_empty() {
        return Err(Error::No(failed.join("\n")));
    }
    Ok(0)
}
