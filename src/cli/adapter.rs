//! `hookd adapter AGENT`: be the agent's hook command, payload in, reply out.

use super::dispatch::{here, interruptible};
use super::error::Done;
use super::install::Agent;
use super::load::{loading, ConfigArgs};
use super::{given_path, out, path_arg};
use crate::adapter::handle::{self, Arrival, Unloadable};
use crate::config::PolicyLayer;
use crate::config::Switch;
use crate::host::Host;
use crate::route::DaemonWait;
use std::path::PathBuf;

/// `hookd adapter`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// Append events as JSON lines to FILE (`-` for stderr).
    #[arg(long, value_name = "FILE", env = "HOOKD_EVENTS", value_parser = path_arg())]
    pub(super) events: Option<PathBuf>,
    /// If hookd itself fails, deny the tool call or block the prompt instead of letting the
    /// agent go on. A value of the variable that is neither on nor off turns it on.
    #[arg(long, env = "HOOKD_FAIL_CLOSED", num_args = 0, default_missing_value = "on", value_parser = Switch::parse, value_name = "ON")]
    pub(super) fail_closed: Option<Switch>,
    /// Dispatch in this process even when a daemon answers.
    #[arg(long, env = "HOOKD_NO_DAEMON", num_args = 0, default_missing_value = "on", value_parser = Switch::parse, value_name = "ON")]
    pub(super) no_daemon: Option<Switch>,
    /// How long a running daemon has to take the dispatch before it runs in this process
    /// instead [default: 2000].
    #[arg(long, value_name = "MS", env = "HOOKD_DAEMON_TIMEOUT_MS", value_parser = DaemonWait::parse)]
    pub(super) daemon_timeout_ms: Option<DaemonWait>,
}

/// `hookd adapter AGENT`. `early` is what `main` prepared before parsing; it is always there
/// when `hookd adapter` is the first argument, as clap requires, and prepared here otherwise.
pub(super) fn run(mut a: Args, early: Option<Arrival>) -> Done {
    let early = early.unwrap_or_else(|| Arrival::of_this_process(super::read_stdin()));
    let mut diagnostics = early.diagnostics;
    // A safety switch: a value hookd cannot read turns it on, never silently off.
    a.cfg.fail_closed = Switch::is_on(a.fail_closed.as_ref(), true);
    let no_daemon = Switch::is_on(a.no_daemon.as_ref(), false);
    let (wait, wait_note) = DaemonWait::wait(a.daemon_timeout_ms.as_ref());
    diagnostics.extend(Switch::note(
        a.fail_closed.as_ref(),
        "HOOKD_FAIL_CLOSED",
        true,
    ));
    diagnostics.extend(Switch::note(a.no_daemon.as_ref(), "HOOKD_NO_DAEMON", false));
    diagnostics.extend(wait_note);
    let flags = PolicyLayer::flags(a.cfg.gate_shell_tools, a.cfg.fail_closed);
    let opts = loading(&a.cfg, &Host::of_this_process()).map_err(Unloadable::CurrentDir);
    let call_here = here(given_path(a.events), early.project_env, opts.as_ref().ok());
    let mut call = handle::Call::new(opts, flags);
    call.unusable = (a.cfg.config_dir.as_ref())
        .filter(|d| !d.is_dir())
        .map(|d| Unloadable::NotADirectory(d.clone()));
    // With --config-dir the daemon's configuration is not this call's.
    call.daemon = (!no_daemon && a.cfg.config_dir.is_none()).then_some(wait);
    call.here = call_here;
    call.moved_places = early.moved_places;
    call.unreadable = early.unreadable;
    let cancel = call.here.cancel.clone();
    let agent = a.agent.adapter();
    let (handled, _caught) = interruptible(&cancel, || {
        handle::handle(agent, call, early.payload, diagnostics)
    });
    for line in &handled.stderr {
        eprintln!("{line}");
    }
    if !handled.reply.stdout.is_empty() {
        out(&format!("{}\n", handled.reply.stdout));
    }
    Ok(handled.reply.exit_code)
}
