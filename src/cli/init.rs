//! `hookd init`: a first `~/.infer/` from the shipped configurations, never over a file that
//! is there, and optionally the agent's hooks.

use super::error::{Done, Error};
use super::install::{self, Agent};
use super::out;
use crate::adapter::Scope;
use crate::config::{next_step, write_starter, Starter};
use crate::host::Host;
use std::path::PathBuf;

/// `hookd init`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The unattended configuration (config/headless: an exact allow-list, the model's shell
    /// commands gated, hookd's failures denied, the sandbox on) instead of the example.
    #[arg(long)]
    headless: bool,
    /// Also install this agent's hooks for your user (as `hookd install AGENT --scope user`,
    /// with --fail-closed --gate-shell-tools when --headless).
    #[arg(long, value_enum)]
    agent: Option<Agent>,
    /// Write here instead of ~/.infer.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
}

/// `hookd init`.
pub(super) fn run(a: Args) -> Done {
    let home = || Host::of_this_process().home().map(|h| h.join(".infer"));
    let dir = a
        .config_dir
        .clone()
        .or_else(home)
        .ok_or_else(|| Error::Cannot("HOME is not set: give --config-dir DIR".into()))?;
    let starter = [Starter::Example, Starter::Headless][usize::from(a.headless)];
    let wrote = write_starter(&dir, starter).map_err(|e| Error::Cannot(e.to_string()))?;
    out(&wrote.iter().map(|w| format!("{w}\n")).collect::<String>());
    if let Some(agent) = a.agent {
        install::run(install::Args {
            agent,
            scope: Scope::User,
            fail_closed: a.headless,
            gate_shell_tools: a.headless,
            follow_symlinks: false,
            force: false,
        })?;
    }
    out(&next_step(a.config_dir.as_deref(), a.agent.is_some()));
    Ok(0)
}
