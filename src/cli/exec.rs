//! `hookd exec`: run anything confined by the configured sandbox, for people and scripts.

use super::error::{Done, Error};
use super::load::{load, ConfigArgs};
use std::os::unix::process::ExitStatusExt;

/// `hookd exec`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub(super) argv: Vec<String>,
}

/// `hookd exec -- ARGV`: the configured `sandbox:` (confined even where `enabled` is off; the
/// policy's `write`, `network` and `read_deny` apply), stdio inherited, its exit status passed
/// on (128 + N when signal N ended it). Exit 126 when it cannot be confined, naming what the
/// kernel lacks: it never runs unconfined.
pub(super) fn run(a: Args) -> Done {
    let config = load(a.cfg)?;
    let confinement =
        hookd::sandbox::Confinement::prepare(&config.policy.sandbox, &config.project_dir)
            .map_err(|e| Error::Confine(e.to_string()))?;
    let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
    let mut cmd = hookd::sandbox::command(std::sync::Arc::new(confinement), &a.argv, &cwd);
    let status = cmd
        .status()
        .map_err(|e| Error::Cannot(format!("`{}` could not start confined: {e}", a.argv[0])))?;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}
