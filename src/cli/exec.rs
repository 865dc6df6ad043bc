//! `hookd exec`: run anything confined by the configured sandbox, for people and scripts.

use super::error::{Done, Error};
use super::load::{load, ConfigArgs};
use std::os::unix::process::ExitStatusExt;

/// `hookd exec`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// Run this shell command (with bash) instead of ARGV: how an agent runs a model's shell
    /// call confined (the adapters rewrite the call to this).
    #[arg(long, value_name = "COMMAND", conflicts_with = "argv")]
    pub(super) shell: Option<String>,
    /// With --shell: write the directory the command ends in to descriptor FD (the agent's
    /// shell goes there afterwards, as it would have after the command itself).
    #[arg(long, value_name = "FD", requires = "shell")]
    pub(super) cwd_fd: Option<u8>,
    /// The program and its arguments (after `--`).
    #[arg(
        required_unless_present = "shell",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(super) argv: Vec<String>,
}

/// Before anything reads the environment: what the repository's files set for its agent
/// (`.env`, `.claude/settings*.json` `env`) is dropped, as the adapters drop it. An agent runs a
/// model's confined call through its own shell, whose environment a repository may have set:
/// its `HOME` would choose which `config.yaml` (and `sandbox.write`) applies, its `TMPDIR`
/// where confined commands may write. The working directory stays the caller's.
pub(crate) fn drop_project_env() {
    let here = std::env::current_dir();
    let _ = hookd::adapter::enter_agent_project(None);
    if let Ok(here) = here {
        let _ = std::env::set_current_dir(here);
    }
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
    let argv = match &a.shell {
        Some(command) => hookd::sandbox::shell_argv(command, a.cwd_fd),
        None => a.argv,
    };
    let mut cmd = hookd::sandbox::command(std::sync::Arc::new(confinement), &argv, &cwd);
    let status = cmd
        .status()
        .map_err(|e| Error::Cannot(format!("`{}` could not start confined: {e}", argv[0])))?;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}
