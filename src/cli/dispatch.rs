//! `hookd dispatch`: one point dispatched, through a running daemon or in this process.

use super::error::{Done, Error};
use super::load::{load, print_warnings, ConfigArgs};
use super::{given_path, parse_mode, path_arg, Millis};
use super::{out, read_stdin};
use hookd::catalog::HookPoint;
use hookd::config::{Config, LoadOptions, Mode};
use hookd::dispatch::{Context, Engine};
use hookd::events::{EventSink, JsonLines, NullSink, SharedLog};
use hookd::state::{FileStore, MemoryStore, StateStore};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::path::PathBuf;
use std::sync::Arc;

/// `hookd dispatch`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The hook point.
    #[arg(value_parser = super::PointArg, value_name = "POINT", hide_possible_values = true)]
    pub(super) point: HookPoint,
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// The mode (overrides the context's `mode`; default standard).
    #[arg(long, value_parser = parse_mode)]
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
    #[arg(long, value_name = "MS", env = "HOOKD_DAEMON_TIMEOUT_MS", value_parser = Millis::parse)]
    pub(super) daemon_timeout_ms: Option<Millis>,
    /// Print the Outcome indented over several lines, for people (default: one line).
    #[arg(long)]
    pub(super) pretty: bool,
}

/// Whether `hookd dispatch` goes through a daemon, and how long one has to take it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Daemon {
    Never,
    IfRunning(std::time::Duration),
    Required(std::time::Duration),
}

#[allow(clippy::too_many_arguments)]
/// `hookd dispatch --pretty`: the Outcome over several lines.
pub(super) static PRETTY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An Outcome (or the daemon's answer) as `hookd dispatch` prints it.
pub(super) fn outcome_text(json: &str) -> String {
    if PRETTY.load(std::sync::atomic::Ordering::Relaxed) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
            if let Ok(p) = serde_json::to_string_pretty(&v) {
                return format!("{p}\n");
            }
        }
    }
    format!("{}\n", json.trim_end())
}

pub(super) fn dispatch(
    point: HookPoint,
    cfg: ConfigArgs,
    mode: Option<Mode>,
    session_id: Option<String>,
    turn: Option<u64>,
    events: Option<PathBuf>,
    use_daemon: Daemon,
) -> Done {
    let mut context =
        match read_stdin().and_then(|t| Context::from_json(&t).map_err(|e| e.to_string())) {
            Ok(c) => c,
            Err(e) => return Err(Error::Cannot(e)),
        };
    if let Some(id) = session_id {
        context.set("session_id", id);
    }
    if let Some(t) = turn {
        context.set("turn", t);
    }
    if let Some(m) = mode {
        context.set("mode", m.name());
    }
    let daemon = match use_daemon {
        Daemon::Never => None,
        Daemon::IfRunning(wait) => Some((wait, false)),
        Daemon::Required(wait) => Some((wait, true)),
    };
    if let Some((wait, required)) = daemon {
        if let Some(done) = forward(
            point,
            &context,
            events.is_some(),
            required,
            &client_settings(&cfg),
            wait,
        ) {
            return done;
        }
    }
    let config = load(cfg)?;
    print_warnings(&config);
    let engine = engine(config, events, Vec::new())?;
    let (result, caught) = interruptible(engine.canceller(), || engine.dispatch(point, &context));
    match result {
        Ok(outcome) => {
            for n in &outcome.notices {
                eprintln!("hookd: {n}");
            }
            out(&outcome_text(
                &serde_json::to_string(&outcome).unwrap_or_else(|_| "{}".into()),
            ));
            match caught {
                Some(sig) => Err(Error::Interrupted(sig)),
                None => Ok(0),
            }
        }
        Err(e) => Err(Error::library(e)),
    }
}

/// An engine writing events to `events` (`-`: stderr), with session state in files.
/// The engine for one dispatch in this process; `project_env` is what the repository's files
/// set for the agent (an adapter's), kept from the hooks.
pub(super) fn engine(
    config: Config,
    events: Option<PathBuf>,
    project_env: Vec<hookd::runner::ProjectVar>,
) -> Result<Engine, Error> {
    let sink: Arc<dyn EventSink> = match events.as_deref() {
        None => Arc::new(NullSink),
        Some(p) if p.as_os_str() == "-" => Arc::new(JsonLines::stderr()),
        Some(p) => match SharedLog::open(p) {
            Ok(s) => Arc::new(s),
            Err(source) => {
                return Err(Error::EventsFile {
                    path: p.to_path_buf(),
                    source,
                })
            }
        },
    };
    let store: Arc<dyn StateStore> = match FileStore::default_dir() {
        Some(dir) => Arc::new(FileStore::new(dir)),
        None => Arc::new(MemoryStore::default()),
    };
    let mut builder = with_exec_program(Engine::builder(config));
    let sink = match super::telemetry::exporter() {
        Some(otlp) => {
            builder = builder.observer(otlp.clone());
            Arc::new(hookd::events::Fanout(vec![sink, otlp]))
        }
        None => sink,
    };
    Ok(builder
        .sink(sink)
        .state_store(store)
        .project_env(project_env)
        .build())
}

/// This binary is the program an agent runs a confined shell call with (`hookd exec --shell`).
pub(super) fn with_exec_program(
    b: hookd::dispatch::EngineBuilder,
) -> hookd::dispatch::EngineBuilder {
    match std::env::current_exe() {
        Ok(me) => b.exec_program(me),
        Err(_) => b,
    }
}

/// Run `f`; SIGINT/SIGTERM meanwhile kill the running hooks' groups (their events are still
/// written) and are returned so the caller exits 128 + the signal.
pub(super) fn interruptible<T>(
    cancel: &hookd::runner::Cancel,
    f: impl FnOnce() -> T,
) -> (T, Option<i32>) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
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

/// Post a dispatch to the daemon at the default socket: `None` when none listens there or it
/// serves another project; else the socket and the Outcome JSON, or why the daemon could not be
/// used (the caller then dispatches in its own process, with the verdict the daemon would give).
pub(super) fn via_daemon(
    point: HookPoint,
    context: &Context,
    client: &ClientSettings,
    accept: std::time::Duration,
) -> Option<(PathBuf, Result<String, Trouble>)> {
    use hookd::daemon::client::{self, Answer, ClientError};
    let socket = hookd::daemon::default_socket()?;
    let request = hookd::daemon::wire::DispatchRequest {
        point: point.name().to_string(),
        context: Some(context.to_value()),
        project: hookd::paths::project_here(),
        inputs: client.inputs.clone(),
        gate_shell_tools: client.gate_shell_tools,
    };
    // The daemon must take the dispatch (`accept`) well before the agent gives up on its
    // hook; a slow or saturated daemon costs this much, then the dispatch runs here.
    let answer = match client::dispatch(
        &socket,
        &request,
        accept,
        std::time::Duration::from_secs(3700),
    ) {
        Ok(Answer::Outcome(outcome)) => Ok(outcome),
        // It serves another project: its hooks are not this project's. Said, not silent: the
        // dispatch here may find no configuration and run nothing.
        Ok(Answer::Refused { status: 409, error }) => Err(Trouble::Other(error)),
        Ok(Answer::Refused { status, error }) => {
            Err(Trouble::Other(format!("it answered {status}: {error}")))
        }
        Ok(other) => Err(Trouble::Other(format!(
            "an answer it cannot read: {other:?}"
        ))),
        Err(ClientError::NotRunning(_)) => return None,
        Err(ClientError::Lost) => Err(Trouble::Lost),
        Err(e) => Err(Trouble::Other(e.to_string())),
    };
    Some((socket, answer))
}

/// What a daemon must share with this client to answer it: the digest of its settings, and
/// whether it gates the model's shell commands.
pub(super) struct ClientSettings {
    pub(super) inputs: Option<String>,
    pub(super) gate_shell_tools: bool,
}

/// This client's [`ClientSettings`].
pub(super) fn client_settings(cfg: &ConfigArgs) -> ClientSettings {
    ClientSettings {
        inputs: LoadOptions::from_process(cfg.config_dir.clone())
            .map(|mut o| {
                o.trust_project = cfg.trust_project;
                o.inputs()
            })
            .ok(),
        gate_shell_tools: cfg.gate_shell_tools,
    }
}

/// Why a daemon's answer could not be used.
#[derive(Debug)]
pub(super) enum Trouble {
    /// It took the dispatch and stopped before answering: its hooks may have run.
    Lost,
    /// Anything else (busy, slow, refused, not this user's, another project): dispatch here.
    Other(String),
}

impl std::fmt::Display for Trouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trouble::Lost => f.write_str(
                "the daemon took the dispatch and stopped before answering (its hooks may have run)",
            ),
            Trouble::Other(why) => f.write_str(why),
        }
    }
}

/// Dispatch through a running daemon: `None` when none answers (and none is required).
pub(super) fn forward(
    point: HookPoint,
    context: &Context,
    local_events: bool,
    required: bool,
    client: &ClientSettings,
    accept: std::time::Duration,
) -> Option<Done> {
    let via = via_daemon(point, context, client, accept);
    // A daemon that could not be used dispatches here, unless one is required.
    let via = match via {
        // Not run again here: its hooks may have run in the daemon already.
        Some((socket, Err(Trouble::Lost))) => {
            return Some(Err(Error::DaemonGone(format!(
            "error: the hookd daemon at {}: {}; not dispatched again here, so no hook runs twice",
            socket.display(),
            Trouble::Lost
        ))))
        }
        Some((socket, Err(e))) if !required => {
            eprintln!(
                "hookd: the hookd daemon at {}: {e}; dispatching in this process",
                socket.display()
            );
            None
        }
        via => via,
    };
    let Some((socket, answer)) = via else {
        if required {
            let at = hookd::daemon::default_socket()
                .map(|s| s.display().to_string())
                .unwrap_or_else(|| "(no socket path: set HOOKD_SOCKET)".into());
            return Some(Err(Error::Cannot(format!(
                "no hookd daemon for this project answers at {at}; start one here with `hookd serve`"
            ))));
        }
        return None;
    };
    if local_events {
        eprintln!("hookd: dispatching through the daemon at {}; its events go to its stream (GET /v1/events)", socket.display());
    }
    Some(match answer {
        Ok(outcome) => {
            out(&outcome_text(&outcome));
            Ok(0)
        }
        Err(e) => Err(Error::Cannot(format!(
            "the hookd daemon at {}: {e}",
            socket.display()
        ))),
    })
}

/// `hookd dispatch POINT`.
pub(super) fn run(a: Args) -> Done {
    PRETTY.store(a.pretty, std::sync::atomic::Ordering::Relaxed);
    let (wait, note) = Millis::wait(a.daemon_timeout_ms.as_ref());
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let use_daemon = if a.no_daemon || a.cfg.config_dir.is_some() {
        Daemon::Never
    } else if a.daemon {
        Daemon::Required(wait)
    } else {
        Daemon::IfRunning(wait)
    };
    dispatch(
        a.point,
        a.cfg,
        a.mode,
        a.session_id,
        a.turn,
        given_path(a.events),
        use_daemon,
    )
}
