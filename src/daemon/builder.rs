//! A daemon a program can embed: the wiring `hookd serve` does (the event hub and log, the
//! sessions' state, engines rebuilt on reload with what outlives them, the HTTP token) as a
//! builder, run until a future of the caller's completes. The binary only parses flags into it.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::hub::{Budgets, Hub};
use super::{DaemonError, Limits, Reloader, ServeOptions};
use crate::config::{self, Config, LoadOptions};
use crate::dispatch::{DispatchObserver, Engine};
use crate::events::{EventSink, Fanout, RotatingLog, Stream};
use crate::state::{MemoryStore, StateStore};

/// What a daemon says when it listens (one line each): where, how to authenticate HTTP
/// requests (the `token_file` generated, or the token given), the dashboard's address with its
/// read-only `key`.
pub fn announcement(
    listening: &[String],
    token_file: Option<&std::path::Path>,
    key: Option<&str>,
) -> Vec<String> {
    let mut lines = vec![format!("hookd: listening on {}", listening.join(", "))];
    if let Some(url) = listening.iter().find(|l| l.starts_with("http://")) {
        let how = match token_file {
            Some(f) => format!("\"Authorization: Bearer $(cat {})\"", f.display()),
            None => "\"Authorization: Bearer $HOOKD_TOKEN\" (the --token given)".into(),
        };
        lines.push(format!(
            "hookd: HTTP requests to {url} need the token: curl -H {how} {url}/v1/health"
        ));
        // The page's URL carries a read-only key derived from the token (shows events,
        // dispatches nothing); keep it to yourself all the same.
        if let Some(key) = key {
            lines.push(format!("dashboard: {url}/?key={key}"));
        }
    }
    lines
}

/// Projects served besides the daemon's own, by default (`--max-projects`).
pub const DEFAULT_MAX_PROJECTS: usize = 64;

/// Rotated events files kept beside the current one (`FILE.1` … `FILE.3`).
pub const LOG_KEEP: usize = 3;

/// Builds and runs a daemon for one configuration (`LoadOptions`), reloaded as it changes.
pub struct Builder {
    load: LoadOptions,
    config: Config,
    serve: ServeOptions,
    events: Option<(PathBuf, u64)>,
    budgets: Budgets,
    session_idle: Duration,
    max_sessions: usize,
    exec_program: Option<PathBuf>,
    observer: Option<Arc<dyn DispatchObserver>>,
    sinks: Vec<Arc<dyn EventSink>>,
    #[cfg(feature = "otlp")]
    exporter: Option<Arc<crate::otlp::Exporter>>,
}

impl Builder {
    /// Load the configuration `load` describes (its warnings are in [`Builder::config`]).
    pub fn new(load: LoadOptions) -> Result<Builder, config::ConfigError> {
        let config = config::load(&load)?;
        Ok(Builder {
            load,
            config,
            serve: ServeOptions {
                grace: Duration::from_secs(10),
                max_projects: DEFAULT_MAX_PROJECTS,
                ..ServeOptions::default()
            },
            events: None,
            budgets: Budgets::default(),
            session_idle: Duration::from_secs(86_400),
            max_sessions: 10_000,
            exec_program: None,
            observer: None,
            sinks: Vec::new(),
            #[cfg(feature = "otlp")]
            exporter: None,
        })
    }

    /// The configuration as loaded.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Listen on this Unix socket (mode 0600, the user's own).
    pub fn socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.serve.socket = Some(path.into());
        self
    }

    /// Also serve HTTP here, requiring `token` (loopback without one: see [`Builder::token_file`]).
    pub fn listen(mut self, addr: SocketAddr, token: Option<String>) -> Self {
        self.serve.listen = Some(addr);
        self.serve.token = token;
        self
    }

    /// For HTTP on loopback without a token: the one kept in a 0600 file beside the socket by
    /// an earlier start, else a new one written there (kept at shutdown; see
    /// [`super::kept_token_file`]); its path, or `None` when a token was given or there is no
    /// HTTP.
    pub fn token_file(&mut self) -> Result<Option<PathBuf>, DaemonError> {
        self.kept_token_file(false)
    }

    /// [`Builder::token_file`], with a new token when `rotate` is set (`hookd serve
    /// --new-token`).
    pub fn kept_token_file(&mut self, rotate: bool) -> Result<Option<PathBuf>, DaemonError> {
        let (Some(addr), None) = (self.serve.listen, &self.serve.token) else {
            return Ok(None);
        };
        if !addr.ip().is_loopback() {
            return Ok(None);
        }
        let Some(socket) = self.serve.socket.as_deref() else {
            return Err(DaemonError::NoToken(addr));
        };
        let (token, path) = super::kept_token_file(socket, rotate).map_err(DaemonError::Token)?;
        self.serve.token = Some(token);
        self.serve.token_file = Some(path.clone());
        Ok(Some(path))
    }

    /// The token HTTP requests must carry, once given or generated.
    pub fn token(&self) -> Option<&str> {
        self.serve.token.as_deref()
    }

    /// Append events to `path`, rotated past `max_bytes`; subscribers that fall behind the ring
    /// read them back from there, and numbering goes on from its newest.
    pub fn events(mut self, path: impl Into<PathBuf>, max_bytes: u64) -> Self {
        self.events = Some((path.into(), max_bytes));
        self
    }

    /// The memory events may hold.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Connections, header time and dispatches at once.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.serve.limits = limits;
        self
    }

    /// How long running dispatches may take to finish at shutdown before their hooks are killed.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.serve.grace = grace;
        self
    }

    /// Serve at most `max` projects besides the daemon's own: beyond it, the least recently
    /// dispatched for is forgotten, and loaded again at its next dispatch.
    pub fn max_projects(mut self, max: usize) -> Self {
        self.serve.max_projects = max;
        self
    }

    /// Forget a session idle this long; keep at most `max` sessions.
    pub fn sessions(mut self, idle: Duration, max: usize) -> Self {
        self.session_idle = idle;
        self.max_sessions = max;
        self
    }

    /// See [`crate::dispatch::EngineBuilder::exec_program`].
    pub fn exec_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.exec_program = Some(program.into());
        self
    }

    /// Tell `observer` of every dispatch (OpenTelemetry traces).
    pub fn observer(mut self, observer: Arc<dyn DispatchObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Also send every event to `sink`.
    pub fn sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Export every dispatch and event to OpenTelemetry through `exporter`, flushed every
    /// second from a thread of its own while the daemon runs, and once more at its stop.
    #[cfg(feature = "otlp")]
    pub fn export(mut self, exporter: Arc<crate::otlp::Exporter>) -> Self {
        self.observer = Some(exporter.clone());
        self.sinks.push(exporter.clone());
        self.exporter = Some(exporter);
        self
    }

    /// Serve on a runtime of its own until SIGTERM or SIGINT (how `hookd serve` runs); `ready`
    /// as for [`Builder::run`].
    pub fn run_until_signalled(self, ready: impl FnOnce(Vec<String>)) -> Result<(), DaemonError> {
        let io = |what: &str| {
            let what = what.to_string();
            move |source| DaemonError::Io { what, source }
        };
        // A file size limit reached while writing events fails the write (EFBIG), handled as
        // a full disk is (the torn line ended later); it must not kill the daemon.
        // SAFETY: setting a signal's disposition to SIG_IGN runs no handler code.
        let _ = unsafe {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGXFSZ,
                nix::sys::signal::SigHandler::SigIgn,
            )
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(io("cannot start the runtime"))?;
        runtime.block_on(async {
            // Handlers first: a SIGTERM sent as soon as the address is announced is a clean stop.
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).map_err(io("cannot handle SIGTERM"))?;
            // The other signals whose default would end the daemon without its stop (its
            // confined hooks then ended unsettled: attack round 9) stop it as SIGTERM does.
            let mut alarm = signal(SignalKind::alarm()).map_err(io("cannot handle SIGALRM"))?;
            let mut usr1 =
                signal(SignalKind::user_defined1()).map_err(io("cannot handle SIGUSR1"))?;
            let mut usr2 =
                signal(SignalKind::user_defined2()).map_err(io("cannot handle SIGUSR2"))?;
            let stop = async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = alarm.recv() => {}
                    _ = usr1.recv() => {}
                    _ = usr2.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            };
            self.run(stop, ready).await
        })
    }

    /// Serve until `shutdown` completes (then stop as at SIGTERM: running dispatches get the
    /// grace period, streams end); `ready` is told what is being listened on. SIGHUP reloads.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()>,
        ready: impl FnOnce(Vec<String>),
    ) -> Result<(), DaemonError> {
        let (hub, stream, trail, lost) = events_out(
            self.serve.socket.clone(),
            self.events.as_ref(),
            self.budgets,
            self.sinks,
        )?;
        // What outlives a reload: where events go, the sessions' state, the numbering, and
        // the one token that stops every engine's runs at shutdown.
        let memory =
            Arc::new(MemoryStore::idle_expiry(self.session_idle).max_sessions(self.max_sessions));
        let store: Arc<dyn StateStore> = memory.clone();
        let cancel = crate::runner::Cancel::new();
        let (observer, exec) = (self.observer, self.exec_program);
        let engine_for = move |config: Config| {
            let mut b = Engine::builder(config)
                .stream(stream.clone())
                .cancel(cancel.clone())
                .state_store(store.clone());
            if let Some(o) = &observer {
                b = b.observer(o.clone());
            }
            if let Some(p) = &exec {
                b = b.exec_program(p.clone());
            }
            b.build()
        };
        let engine = engine_for(self.config);
        let load = self.load;
        let mut serve = self.serve;
        serve.inputs = Some(load.inputs());
        serve.input_vars = Some(load.input_vars());
        serve.sessions = Some(memory);
        serve.sessions_file = self.events.as_ref().map(|(p, _)| sessions_file(p));
        serve.lost = lost;
        serve.log = self.events.map(|(p, _)| (p, LOG_KEEP));
        // Every project is loaded as a dispatch in it would load it in its own process.
        let watch_load = load.clone();
        let reloader = Reloader {
            watch: Box::new(move |dir| super::project_options(&watch_load, dir).watched_files()),
            build: Box::new(move |dir| {
                Ok(engine_for(config::load(&super::project_options(
                    &load, dir,
                ))?))
            }),
        };
        #[cfg(feature = "otlp")]
        let exporting = self.exporter.as_ref().map(|e| {
            let (stop, stopped) = std::sync::mpsc::channel();
            (stop, e.run_periodically(Duration::from_secs(1), stopped))
        });
        // Said once the socket is this daemon's (not before: another may be running).
        let said = |listening| {
            trail.keep();
            ready(listening)
        };
        // At the stop, an export under way (a mute or slow collector) ends within the
        // exporter's stop budget, while the dispatches finish.
        #[cfg(feature = "otlp")]
        let (exporter, budget) = (self.exporter.clone(), crate::otlp::stop_budget(serve.grace));
        let shutdown = async move {
            shutdown.await;
            #[cfg(feature = "otlp")]
            if let Some(e) = &exporter {
                e.stop_by(std::time::Instant::now() + budget);
            }
        };
        let served = super::serve_until(engine, reloader, hub, serve, said, shutdown).await;
        if served.is_ok() {
            trail.keep();
        }
        #[cfg(feature = "otlp")]
        if let Some(exporting) = exporting {
            stop_exporting(exporting, budget).await;
        }
        served
    }
}

/// Where a daemon's events go: its hub (streams, metrics), its log, the embedder's sinks, in
/// one stream whose numbering goes on past the highest number ever served (the log's, or the
/// trail's when the log was removed since); the trail kept beside the socket; what the log
/// found lost.
fn events_out(
    socket: Option<PathBuf>,
    log: Option<&(PathBuf, u64)>,
    budgets: Budgets,
    extra: Vec<Arc<dyn EventSink>>,
) -> Result<(Arc<Hub>, Arc<Stream>, TrailKeeper, crate::events::Lost), DaemonError> {
    let events = log.map(|(p, _)| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
    let last = events.as_deref().map_or(0, |p| {
        let served = socket.as_deref().map_or(0, |s| super::trail::served(s, p));
        crate::events::last_seq_in_log(p, LOG_KEEP).max(served)
    });
    let hub = Hub::new(budgets, last);
    let mut sinks: Vec<Arc<dyn EventSink>> = vec![hub.clone()];
    let mut lost = crate::events::Lost::default();
    if let Some((path, max)) = log {
        let log = RotatingLog::open(path, *max, LOG_KEEP).map_err(|source| DaemonError::Io {
            what: format!("cannot open the events file {}", path.display()),
            source,
        })?;
        lost = log.lost();
        sinks.push(Arc::new(log));
    }
    sinks.extend(extra);
    let stream = Stream::new(Arc::new(Fanout(sinks)), last);
    let trail = TrailKeeper {
        socket,
        max_bytes: log.map_or(0, |(_, max)| *max),
        events,
        stream: stream.clone(),
    };
    Ok((hub, stream, trail, lost))
}

/// Where the sessions panel's state is kept beside the events file `events`
/// (`FILE.sessions.json`).
fn sessions_file(events: &std::path::Path) -> PathBuf {
    let mut name = events.file_name().unwrap_or_default().to_os_string();
    name.push(".sessions.json");
    events.with_file_name(name)
}

/// Stop the exporter's thread and wait for it, bounded even where the exporter's own deadlines
/// cannot reach (a name lookup that hangs): the stop never waits for a collector longer than
/// its `budget`.
#[cfg(feature = "otlp")]
async fn stop_exporting(
    (stop, thread): (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>),
    budget: Duration,
) {
    let _ = stop.send(());
    let joined = tokio::task::spawn_blocking(move || thread.join());
    let _ = tokio::time::timeout(budget + Duration::from_secs(1), joined).await;
}

/// Keeps the trail beside the socket ([`super::trail`]): where events go and the last number.
struct TrailKeeper {
    socket: Option<PathBuf>,
    /// The events file's rotation size, for clients that append to it when the daemon is gone.
    max_bytes: u64,
    events: Option<PathBuf>,
    stream: Arc<Stream>,
}

impl TrailKeeper {
    fn keep(&self) {
        let Some(socket) = &self.socket else {
            return;
        };
        let trail = self.events.as_ref().map(|events| super::trail::Trail {
            events: events.clone(),
            seq: self.stream.last(),
            max_bytes: Some(self.max_bytes),
        });
        if let Err(e) = super::trail::write(socket, trail.as_ref()) {
            tracing::warn!(
                "cannot write {}: {e}; clients that find no daemon will not append to its events file",
                super::trail::trail_file(socket).display()
            );
        }
    }
}
