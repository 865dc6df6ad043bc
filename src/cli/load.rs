//! Where configuration comes from: the flags every loading subcommand shares, and loading.

use super::error::Error;
use crate::config::{self, Config, LoadOptions};
use crate::host::Host;
use std::path::PathBuf;

/// Where configuration comes from (shared by the subcommands that load it).
#[derive(Debug, Clone, clap::Args)]
pub(super) struct ConfigArgs {
    /// Read only this directory instead of ~/.infer and ./.infer.
    #[arg(long, value_name = "DIR")]
    pub(super) config_dir: Option<PathBuf>,
    /// Act on the project's .infer/ without a trust record: for CI on your own repository
    /// (also HOOKD_TRUST_PROJECT=1). A repository you did not write could run anything it allows.
    #[arg(long)]
    pub(super) trust_project: bool,
    /// At pre_tool, deny a shell tool call (Bash and its kin) whose command the allow-list does
    /// not admit (also HOOKD_GATE_SHELL_TOOLS=1, or `gate_shell_tools: true` in hooks.yaml).
    #[arg(long)]
    pub(super) gate_shell_tools: bool,
    /// The adapter's `--fail-closed` (its own flag), for the policy's command-line layer.
    #[arg(skip)]
    pub(super) fail_closed: bool,
}

/// The configuration and the mode whose allow-list decides (`check`, `allow`).
#[derive(Debug, Clone, clap::Args)]
pub(super) struct GateArgs {
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// The mode whose allow-list decides the verdicts.
    #[arg(long, default_value = "standard", value_parser = super::ModeArg)]
    pub(super) mode: crate::config::Mode,
}

pub(super) fn load(cfg: ConfigArgs) -> Result<Config, Error> {
    load_for(cfg, false)
}

/// `allow_lists_only`: errors in hooks.yaml and reminders.yaml are warnings (`hookd allow`).
pub(super) fn load_for(cfg: ConfigArgs, allow_lists_only: bool) -> Result<Config, Error> {
    let mut opts = checked_options(&cfg)?;
    opts.allow_lists_only = allow_lists_only;
    config::load(&opts).map_err(Error::Config)
}

/// [`options`], refusing a `--config-dir` that is not a directory.
pub(super) fn checked_options(cfg: &ConfigArgs) -> Result<LoadOptions, Error> {
    let opts = options(cfg)?;
    not_a_directory(cfg).map_or(Ok(opts), Err)
}

/// A `--config-dir` that is not a directory, as the error loading stops with.
pub(super) fn not_a_directory(cfg: &ConfigArgs) -> Option<Error> {
    let dir = cfg.config_dir.as_ref().filter(|d| !d.is_dir())?;
    Some(Error::NotADirectory(dir.clone()))
}

/// What loading reads, from the process and these flags: the flags are the policy's
/// command-line layer, which `config::load` resolves with the files (and a daemon's reloads
/// with it).
pub(super) fn options(cfg: &ConfigArgs) -> Result<LoadOptions, Error> {
    options_for(cfg, &Host::of_this_process())
}

/// [`options`] for the process `host`.
pub(super) fn options_for(cfg: &ConfigArgs, host: &Host) -> Result<LoadOptions, Error> {
    loading(cfg, host).map_err(Error::CurrentDir)
}

/// [`options_for`], failing only where the host's directory cannot be read.
pub(super) fn loading(cfg: &ConfigArgs, host: &Host) -> std::io::Result<LoadOptions> {
    let mut opts = LoadOptions::from_host(host, cfg.config_dir.clone())?;
    opts.trust_project = cfg.trust_project;
    opts.flags = config::PolicyLayer::flags(cfg.gate_shell_tools, cfg.fail_closed);
    Ok(opts)
}

/// The configuration's warnings, on stderr.
pub(super) fn print_warnings(config: &Config) {
    config.warning_lines().iter().for_each(|w| eprintln!("{w}"));
}
