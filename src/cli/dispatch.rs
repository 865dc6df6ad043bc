//! `hookd dispatch`: one point dispatched, through a running daemon or in this process.

use super::error::{Done, Error};
use super::load::{load, options, print_warnings, ConfigArgs};
use super::{given_path, out, path_arg, read_stdin, ModeArg};
use crate::catalog::HookPoint;
use crate::config::Mode;
use crate::dispatch::Context;
use crate::route::DaemonWait;
use crate::route::{self, ClientSettings, DaemonUse, Here, RouteError, Routed};
use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::Signals;
use std::path::PathBuf;

/// `hookd dispatch`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The hook point.
    #[arg(value_parser = super::PointArg, value_name = "POINT", hide_possible_values = true)]
    pub(super) point: HookPoint,
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// The mode (overrides the context's `mode`; default standard).
    #[arg(long, value_parser = ModeArg, value_name = "MODE")]
    pub(super) mode: Option<Mode>,
    /// The session (overrides the context's `session_id`).
    #[arg(long, value_name = "ID")]
    pub(super) session_id: Option<String>,
    /// The agent's turn (overrides the context's `turn`).
    #[arg(long, value_name = "N")]
    pub(super) turn: Option<u64>,
    /// Append events as JSON lines to FILE (`-` for stderr).
    #[arg(long, value_name = "FILE", env = "HOOKD_EVENTS", value_parser = path_arg())]
    pub(super) events: Option<PathBuf>,
    /// Require a running daemon (at $HOOKD_SOCKET or the default socket) to dispatch.
    #[arg(long, conflicts_with = "no_daemon")]
    pub(super) daemon: bool,
    /// Dispatch in this process even when a daemon is running.
    #[arg(long)]
    pub(super) no_daemon: bool,
    /// How long a running daemon has to take the dispatch before it runs in this process
    /// instead [default: 2000].
    #[arg(long, value_name = "MS", env = "HOOKD_DAEMON_TIMEOUT_MS", value_parser = DaemonWait::parse)]
    pub(super) daemon_timeout_ms: Option<DaemonWait>,
    /// Print the Outcome indented over several lines, for people (default: one line).
    #[arg(long)]
    pub(super) pretty: bool,
}

/// `hookd dispatch POINT`: the context from stdin, the Outcome on stdout.
pub(super) fn run(a: Args) -> Done {
    let (wait, note) = DaemonWait::wait(a.daemon_timeout_ms.as_ref());
    if let Some(note) = note {
        eprintln!("{note}");
    }
    // With --config-dir the daemon's configuration is not this call's.
    let never = a.no_daemon || a.cfg.config_dir.is_some();
    let daemon = DaemonUse::choose(never, a.daemon, wait);
    let text = read_stdin().map_err(|e| Error::Cannot(e.to_string()))?;
    let mut context = Context::from_json(&text).map_err(|e| Error::Cannot(e.to_string()))?;
    a.session_id.map(|id| context.set("session_id", id));
    a.turn.map(|t| context.set("turn", t));
    a.mode.map(|m| context.set("mode", m.name()));
    let events = given_path(a.events);
    let opts = options(&a.cfg).ok();
    let client = ClientSettings::new(opts.as_ref(), a.cfg.gate_shell_tools);
    let answered = match route::route(a.point, &context, daemon, &client) {
        Ok(Routed::Daemon { socket, outcome }) => {
            if events.is_some() {
                eprintln!("hookd: dispatching through the daemon at {}; its events go to its stream (GET /v1/events)", socket.display());
            }
            out(&outcome_text(&outcome, a.pretty));
            return Ok(0);
        }
        Ok(Routed::Here { note }) => {
            note.iter().for_each(|n| eprintln!("{n}"));
            note.is_some()
        }
        Err(e @ RouteError::Lost(_)) => return Err(Error::DaemonGone(format!("error: {e}"))),
        Err(e) => return Err(Error::Cannot(e.to_string())),
    };
    let mut here = here(events, Vec::new(), opts.as_ref());
    // No daemon answered (a note says why one that did was not used): its events file, if one
    // went away, gets this dispatch's events too.
    if daemon != DaemonUse::Never && !answered {
        if let Some((file, note)) = route::fallback_events(&client) {
            note.iter().for_each(|n| eprintln!("{n}"));
            here.daemon_events = Some(file);
        }
    }
    let config = match load(a.cfg) {
        Err(Error::Config(e)) => {
            let session = context.get("session_id").and_then(|s| s.as_str());
            if let Err(w) = here.config_failed(a.point, session.unwrap_or(""), &e, None) {
                eprintln!("hookd: {w}");
            }
            return Err(Error::Config(e));
        }
        loaded => loaded?,
    };
    print_warnings(&config);
    let cancel = here.cancel.clone();
    let engine = here.engine(config).map_err(Error::library)?;
    let (result, caught) = interruptible(&cancel, || engine.dispatch(a.point, &context));
    let outcome = result.map_err(Error::library)?;
    for n in &outcome.notices {
        eprintln!("hookd: {n}");
    }
    let json = serde_json::to_string(&outcome).unwrap_or_else(|_| "{}".into());
    out(&outcome_text(&json, a.pretty));
    caught.map_or(Ok(0), |sig| Err(Error::Interrupted(sig)))
}

/// An Outcome (or the daemon's answer) as `hookd dispatch` prints it.
fn outcome_text(json: &str, pretty: bool) -> String {
    let pretty = pretty
        .then(|| serde_json::from_str::<serde_json::Value>(json).ok())
        .flatten()
        .and_then(|v| serde_json::to_string_pretty(&v).ok());
    format!("{}\n", pretty.as_deref().unwrap_or(json.trim_end()))
}

/// How this process builds an engine: this binary is the program an agent runs a confined
/// shell call with (`hookd exec --shell`), telemetry as the variables say.
pub(super) fn here(
    events: Option<PathBuf>,
    project_env: Vec<crate::runner::ProjectVar>,
    opts: Option<&crate::config::LoadOptions>,
) -> Here {
    let mut here = Here {
        events,
        project_env,
        exec_program: std::env::current_exe().ok(),
        ..Default::default()
    };
    if let Some(e) = super::telemetry::exporter(opts) {
        here.export(e);
    }
    here
}

/// Run `f`; SIGINT/SIGTERM meanwhile kill the running hooks' groups (their events are still
/// written, what a confined one made below the project is still moved aside) and are returned
/// so the caller exits 128 + the signal. So do the other signals whose default would end this
/// process without that: a closed terminal's SIGHUP, SIGALRM, SIGUSR1 and SIGUSR2 (a hook
/// confined under a dispatcher they ended ran on; attack round 9).
pub(super) fn interruptible<T>(
    cancel: &crate::runner::Cancel,
    f: impl FnOnce() -> T,
) -> (T, Option<i32>) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2]) else {
        return (f(), None);
    };
    let handle = signals.handle();
    let cancel = cancel.clone();
    let watcher = std::thread::spawn(move || {
        let sig = signals.forever().next();
        if sig.is_some() {
            cancel.cancel();
        }
        sig
    });
    let result = f();
    handle.close();
    (result, watcher.join().ok().flatten())
}
