//! Where a dispatch runs: through the running daemon for this project (one configuration and
//! one stream for every session), or in this process with an engine built for one call.
// Some of the choices are the command line's alone (`DaemonWait`, `DaemonUse::choose`, the
// `Never` and `Required` uses); an adapter always asks `IfRunning`.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

use crate::catalog::HookPoint;
use crate::config::{Config, LoadOptions};
use crate::daemon::client::{self, Answer, ClientError};
use crate::dispatch::{Context, DispatchObserver, Engine};
use crate::events::{EventSink, Fanout, JsonLines, NullSink, SharedLog};
use crate::runner::{Cancel, ProjectVar};
use crate::state::{FileStore, MemoryStore, StateStore};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a daemon may hold a dispatch it took: longer than any hook's timeout.
const ANSWER_WITHIN: Duration = Duration::from_secs(3700);

/// Whether a dispatch goes through a daemon, and how long one has to take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DaemonUse {
    /// In this process.
    Never,
    /// Through a daemon for this project if one takes it within the wait; here otherwise.
    IfRunning(Duration),
    /// Through a daemon, or not at all.
    Required(Duration),
}

impl DaemonUse {
    /// From a command line's choice: `never` (in this process), else `required`, else if one
    /// is running; a daemon has `wait` to take the dispatch.
    pub fn choose(never: bool, required: bool, wait: Duration) -> Self {
        match (never, required) {
            (true, _) => DaemonUse::Never,
            (false, true) => DaemonUse::Required(wait),
            (false, false) => DaemonUse::IfRunning(wait),
        }
    }
}

/// `--daemon-timeout-ms` / `HOOKD_DAEMON_TIMEOUT_MS` as given; like
/// [`crate::config::Switch`], reading never fails and the command says what it could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DaemonWait {
    /// A number of milliseconds.
    Ms(u64),
    /// Not a number: the value as given.
    Unreadable(String),
}

impl DaemonWait {
    /// How long a running daemon has to take a dispatch when nothing says otherwise: well
    /// under the agents' own hook timeouts.
    const DEFAULT: u64 = 2000;

    /// Read a value (a command-line parser's shape: it never fails).
    pub fn parse(value: &str) -> Result<DaemonWait, std::convert::Infallible> {
        Ok(match value.trim().parse::<u64>() {
            Ok(ms) => DaemonWait::Ms(ms),
            Err(_) => DaemonWait::Unreadable(value.to_string()),
        })
    }

    /// The wait, and what to tell the user about a value that is not a number.
    pub fn wait(given: Option<&DaemonWait>) -> (std::time::Duration, Option<String>) {
        let ms = |ms| std::time::Duration::from_millis(ms);
        match given {
            None => (ms(Self::DEFAULT), None),
            Some(DaemonWait::Ms(n)) => (ms(*n), None),
            // `HOOKD_DAEMON_TIMEOUT_MS=` is the shell's way to unset it.
            Some(DaemonWait::Unreadable(v)) if v.trim().is_empty() => (ms(Self::DEFAULT), None),
            Some(DaemonWait::Unreadable(v)) => (
                ms(Self::DEFAULT),
                Some(format!(
                    "hookd: HOOKD_DAEMON_TIMEOUT_MS={} is not a number of milliseconds; {} used",
                    v.escape_debug(),
                    Self::DEFAULT
                )),
            ),
        }
    }
}

/// Where the daemon is, and what it must share with this client to answer it: the digest of
/// its settings, the project, and whether it gates the model's shell commands.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ClientSettings {
    /// The daemon's socket (none: no daemon is asked).
    pub socket: Option<PathBuf>,
    /// [`LoadOptions::inputs`] of this client (none when it could not be read).
    pub inputs: Option<String>,
    /// [`LoadOptions::input_vars`] of this client.
    pub vars: Option<std::collections::BTreeMap<String, String>>,
    /// The client's project: a daemon serving another one refuses it.
    pub project: Option<PathBuf>,
    /// `--gate-shell-tools` on this client.
    pub gate_shell_tools: bool,
}

impl ClientSettings {
    /// A client that loads with `options`: the socket its variables name, its project.
    pub fn new(options: Option<&LoadOptions>, gate_shell_tools: bool) -> Self {
        let socket = options.and_then(|o| o.effective_host().socket());
        ClientSettings {
            socket,
            inputs: options.map(LoadOptions::inputs),
            vars: options.map(LoadOptions::input_vars),
            project: options.map(|o| o.project_dir.clone()),
            gate_shell_tools,
        }
    }
}

/// Why a daemon's answer could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Trouble {
    /// It took the dispatch and stopped before answering: its hooks may have run.
    #[error("the daemon took the dispatch and stopped before answering (its hooks may have run)")]
    Lost,
    /// It serves another project, or answered with a refusal (busy, other settings).
    #[error("{0}")]
    Refused(String),
    /// It could not be reached or read (slow, not this user's, not HTTP).
    #[error(transparent)]
    Client(ClientError),
}

/// A daemon that answered at `socket`, with the Outcome's JSON or why it cannot be used.
#[derive(Debug)]
pub struct Reached {
    /// Where it listens.
    pub socket: PathBuf,
    /// The Outcome's JSON as the daemon wrote it, or why it cannot be used.
    pub answer: Result<String, Trouble>,
}

/// Post a dispatch to the daemon at the default socket: `None` when none listens there.
pub fn via_daemon(
    point: HookPoint,
    context: &Context,
    client: &ClientSettings,
    accept: Duration,
) -> Option<Reached> {
    let socket = client.socket.clone()?;
    let request = crate::daemon::wire::DispatchRequest {
        point: point.name().to_string(),
        context: Some(context.to_value()),
        project: client.project.clone(),
        inputs: client.inputs.clone(),
        vars: client.vars.clone(),
        gate_shell_tools: client.gate_shell_tools,
    };
    // The daemon must take the dispatch (`accept`) well before the agent gives up on its
    // hook; a slow or saturated daemon costs this much, then the dispatch runs here.
    let answer = match client::dispatch(&socket, &request, accept, ANSWER_WITHIN) {
        Ok(Answer::Outcome(outcome)) => Ok(outcome),
        // It cannot serve this project (its configuration is invalid there, …). Said, not
        // silent: the dispatch runs here, with the same configuration.
        Ok(Answer::Refused { status: 409, error }) => Err(Trouble::Refused(error)),
        Ok(Answer::Refused { status, error }) => {
            Err(Trouble::Refused(format!("it answered {status}: {error}")))
        }
        Err(ClientError::NotRunning(_)) => return None,
        Err(ClientError::Lost) => Err(Trouble::Lost),
        Err(e) => Err(Trouble::Client(e)),
    };
    Some(Reached { socket, answer })
}

/// Hand a confined model call's connections (`hookd exec`'s proxy's) to the daemon at the
/// client's socket, in batches it takes: `None` when no daemon listens there, else whether it
/// recorded them all, or why not and how many it had recorded before (the rest are the
/// caller's to write).
pub fn daemon_connections(
    client: &ClientSettings,
    session: &str,
    requests: &[crate::sandbox::NetworkRequest],
    accept: Duration,
) -> Option<Result<(), (Trouble, usize)>> {
    /// Connections per report: well within the daemon's limit on a report's bytes.
    const BATCH: usize = 1000;
    let socket = client.socket.as_deref()?;
    for (i, batch) in requests.chunks(BATCH).enumerate() {
        let done = i * BATCH;
        let request = crate::daemon::wire::ConnectionsRequest {
            project: client.project.clone(),
            inputs: client.inputs.clone(),
            vars: client.vars.clone(),
            session: session.into(),
            connections: batch.iter().map(connection).collect(),
        };
        match client::connections(socket, &request, accept) {
            Ok(None) => {}
            Ok(Some((status, error))) => {
                let why = Trouble::Refused(format!("it answered {status}: {error}"));
                return Some(Err((why, done)));
            }
            Err(ClientError::NotRunning(_)) if done == 0 => return None,
            Err(e) => return Some(Err((Trouble::Client(e), done))),
        }
    }
    Some(Ok(()))
}

fn connection(n: &crate::sandbox::NetworkRequest) -> crate::daemon::wire::Connection {
    crate::daemon::wire::Connection {
        host: n.host.clone(),
        port: n.port,
        verdict: n.verdict.into(),
        reason: n.reason.clone(),
        bytes_out: n.bytes_out,
        bytes_in: n.bytes_in,
        duration_ms: n.duration_ms,
    }
}

/// Where a dispatch ran, or is to run.
#[derive(Debug)]
pub enum Routed {
    /// The daemon at `socket` answered with this Outcome's JSON.
    Daemon {
        /// Where it listens.
        socket: PathBuf,
        /// Its Outcome.
        outcome: String,
    },
    /// Dispatch in this process; `note` says why a daemon that answered was not used.
    Here {
        /// hookd's line for stderr, when a daemon answered and could not be used.
        note: Option<String>,
    },
}

/// Why a dispatch may run neither through a daemon nor here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The daemon took it and stopped: not run again here, so no hook runs twice.
    #[error("the hookd daemon at {}: {}; not dispatched again here, so no hook runs twice", .0.display(), Trouble::Lost)]
    Lost(PathBuf),
    /// A daemon is required and none for this project answers.
    #[error("no hookd daemon for this project answers at {0}; start one here with `hookd serve`")]
    NoDaemon(String),
    /// A daemon is required and the one that answered could not be used.
    #[error("the hookd daemon at {}: {why}", socket.display())]
    Unusable {
        /// Where it listens.
        socket: PathBuf,
        /// Why.
        why: Trouble,
    },
}

/// The decision: through the daemon `daemon` allows, or here.
pub fn route(
    point: HookPoint,
    context: &Context,
    daemon: DaemonUse,
    client: &ClientSettings,
) -> Result<Routed, RouteError> {
    let (wait, required) = match daemon {
        DaemonUse::Never => return Ok(Routed::Here { note: None }),
        DaemonUse::IfRunning(wait) => (wait, false),
        DaemonUse::Required(wait) => (wait, true),
    };
    match via_daemon(point, context, client, wait) {
        Some(Reached {
            socket,
            answer: Ok(outcome),
        }) => Ok(Routed::Daemon { socket, outcome }),
        // Not run again here: its hooks may have run in the daemon already.
        Some(Reached {
            socket,
            answer: Err(Trouble::Lost),
        }) => Err(RouteError::Lost(socket)),
        Some(Reached {
            socket,
            answer: Err(why),
        }) if required => Err(RouteError::Unusable { socket, why }),
        Some(Reached {
            socket,
            answer: Err(why),
        }) => Ok(Routed::Here {
            note: Some(format!(
                "hookd: the hookd daemon at {}: {why}; dispatching in this process",
                socket.display()
            )),
        }),
        None if required => Err(RouteError::NoDaemon(
            client
                .socket
                .as_ref()
                .map(|s| s.display().to_string())
                .unwrap_or_else(|| "(no socket path: set HOOKD_SOCKET)".into()),
        )),
        None => Ok(Routed::Here { note: None }),
    }
}

/// When no daemon answers at the client's socket: the events file the daemon there was
/// writing (the trail it left, [`crate::daemon::trail`]), so this process's events join the
/// same audit trail; and, the first time since that daemon started, the line for stderr that
/// says the dispatches now run here.
pub fn fallback_events(client: &ClientSettings) -> Option<(DaemonLog, Option<String>)> {
    let socket = client.socket.as_deref()?;
    let trail = crate::daemon::trail::read(socket)?;
    let note = crate::daemon::trail::first_fallback(socket).then(|| {
        format!(
            "hookd: no hookd daemon answers at {}; dispatching in this process from now on, its events appended to {} (said once until a daemon starts)",
            socket.display(),
            trail.events.display()
        )
    });
    Some((
        DaemonLog {
            path: trail.events,
            max_bytes: trail.max_bytes,
        },
        note,
    ))
}

/// The events file of a daemon that went away, and the size past which it rotated it: a
/// client appending to it rotates it as the daemon would (numbering on across the rotation).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DaemonLog {
    /// The file.
    pub path: PathBuf,
    /// Rotated past this size, keeping [`crate::daemon::LOG_KEEP`] old files (`None`: never).
    pub max_bytes: Option<u64>,
}

/// What a dispatch in this process is built with, beyond the configuration.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Here {
    /// Append events as JSON lines to this file (`-`: stderr), shared with other processes.
    pub events: Option<PathBuf>,
    /// Also append them to this file: the events file of the daemon that went away
    /// ([`fallback_events`]), rotated as it did.
    pub daemon_events: Option<DaemonLog>,
    /// Set when an event could not be written to either file: the caller's decision went
    /// unrecorded (with `fail_closed`, an adapter then denies).
    pub lost: crate::events::Lost,
    /// What the repository's files set for the agent, kept from the hooks.
    pub project_env: Vec<ProjectVar>,
    /// The program an agent runs a confined shell call with (`hookd exec`).
    pub exec_program: Option<PathBuf>,
    /// Told of each dispatch and each event (OpenTelemetry export).
    pub telemetry: Option<(Arc<dyn DispatchObserver>, Arc<dyn EventSink>)>,
    /// Stops the engine's runs (a signal's handler holds a clone).
    pub cancel: Cancel,
}

/// The events file could not be opened for appending.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the events file {}: {source}", path.display())]
pub struct EventsFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl Here {
    /// Export this process's dispatches and events to OpenTelemetry through `exporter`.
    #[cfg(feature = "otlp")]
    pub fn export(&mut self, exporter: Arc<crate::otlp::Exporter>) {
        self.telemetry = Some((exporter.clone(), exporter));
    }

    /// Where this process's events go: the events file (or stderr), and the file of the
    /// daemon that went away, if any.
    fn file_sink(&self) -> Result<Arc<dyn EventSink>, EventsFileError> {
        let mut sinks: Vec<Arc<dyn EventSink>> = Vec::new();
        if let Some(p) = &self.events {
            sinks.push(if p.as_os_str() == "-" {
                Arc::new(JsonLines::stderr())
            } else {
                self.shared_log(p, None)?
            });
        }
        if let Some(d) = self
            .daemon_events
            .as_ref()
            .filter(|d| self.events.as_ref() != Some(&d.path))
        {
            sinks.push(self.shared_log(&d.path, d.max_bytes)?);
        }
        Ok(match sinks.len() {
            0 => Arc::new(NullSink),
            1 => sinks.remove(0),
            _ => Arc::new(Fanout(sinks)),
        })
    }

    fn shared_log(
        &self,
        path: &std::path::Path,
        rotate: Option<u64>,
    ) -> Result<Arc<dyn EventSink>, EventsFileError> {
        match SharedLog::open(path) {
            Ok(s) => {
                let s = s.reporting(self.lost.clone());
                Ok(Arc::new(match rotate {
                    Some(max) => s.rotating(max, crate::daemon::LOG_KEEP),
                    None => s,
                }))
            }
            Err(source) => {
                self.lost.set();
                let path = path.to_path_buf();
                Err(EventsFileError { path, source })
            }
        }
    }

    /// An agent's call at `point` of `session` found the configuration invalid, and no hook
    /// ran (hookd failing closed or not, when the caller decides it): said as a `config_error` event (`cause: dispatch`) where this call's events go, so
    /// that an audit trail shows a session that hookd refused from its first prompt on.
    pub fn config_failed(
        &self,
        point: HookPoint,
        session: &str,
        error: &crate::config::ConfigError,
        fail_closed: Option<bool>,
    ) -> Result<(), EventsFileError> {
        let mut event = error.event(crate::kinds::ReloadCause::Dispatch);
        event.hook = Some(point);
        event.session_id = Some(crate::state::session_key(session).into_owned());
        event.fail_closed = fail_closed;
        let sink = self.file_sink()?;
        let sink: Arc<dyn EventSink> = match &self.telemetry {
            Some((_, export)) => Arc::new(Fanout(vec![sink, export.clone()])),
            None => sink,
        };
        crate::events::Stream::new(sink, 0).emit(crate::events::Event::ConfigError(event));
        Ok(())
    }

    /// The connections a model's call made through hookd's proxy (`hookd exec --shell`), as
    /// `network_request` events where this process's events go, named `exec` at `pre_tool`
    /// (where the call was decided) in `session` (empty: not known).
    pub fn exec_connections(
        &self,
        requests: Vec<crate::sandbox::NetworkRequest>,
        session: &str,
    ) -> Result<(), EventsFileError> {
        if requests.is_empty() {
            return Ok(());
        }
        let sink = self.file_sink()?;
        let events: Vec<crate::events::NetworkRequest> = requests
            .into_iter()
            .map(|n| {
                let (name, session) = ("exec".into(), session.into());
                crate::sandbox::network_event(n, name, HookPoint::PreTool, session)
            })
            .collect();
        let sink: Arc<dyn EventSink> = match &self.telemetry {
            Some((observer, export)) => {
                observer.connected(&events);
                Arc::new(Fanout(vec![sink, export.clone()]))
            }
            None => sink,
        };
        let stream = crate::events::Stream::new(sink, 0);
        for e in events {
            stream.emit(crate::events::Event::NetworkRequest(e));
        }
        Ok(())
    }

    /// The engine for one dispatch in this process, with session state in files.
    pub fn engine(self, config: Config) -> Result<Engine, EventsFileError> {
        let sink = self.file_sink()?;
        let state = config.host().state_dir();
        let store: Arc<dyn StateStore> = match state {
            Some(dir) => Arc::new(FileStore::new(dir)),
            None => Arc::new(MemoryStore::default()),
        };
        let mut builder = Engine::builder(config).cancel(self.cancel);
        if let Some(me) = self.exec_program {
            builder = builder.exec_program(me);
        }
        let sink = match self.telemetry {
            Some((observer, export)) => {
                builder = builder.observer(observer);
                Arc::new(Fanout(vec![sink, export]))
            }
            None => sink,
        };
        Ok(builder
            .sink(sink)
            .state_store(store)
            .project_env(self.project_env)
            .build())
    }
}
