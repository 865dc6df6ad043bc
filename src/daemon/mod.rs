//! The daemon: one hookd for every agent session on the machine. Agents dispatch over a Unix
//! socket (or loopback HTTP); dashboards follow the event stream as Server-Sent Events.

mod answer;
mod auth;
mod backlog;
mod builder;
pub(crate) mod connections;
pub use builder::{announcement, Builder, DEFAULT_MAX_PROJECTS, LOG_KEEP};
pub mod client;
mod dashboard;
mod metrics;
mod observers;
mod projects;
pub use auth::{kept_token_file, new_token_file, token_file, TokenError};
pub use dashboard::key as dashboard_key;
pub use projects::{project_options, BuildEngine, Reloader, WatchFiles};
pub mod hub;
pub mod listen;
mod stream;
pub mod trail;
pub mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::dispatch::Engine;
use hub::Hub;
pub use listen::Limits;

/// The largest dispatch request the daemon reads: a context as large as the CLI reads from stdin
/// (16 MiB) plus the request around it. A client with a larger one dispatches in its own
/// process, so the verdict never depends on whether a daemon runs.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024 + 64 * 1024;

/// Why the daemon could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// Another daemon answers on the socket.
    #[error("a hookd daemon is already listening on {0}; stop it first, or pass another --socket")]
    AlreadyRunning(PathBuf),
    /// A non-loopback address without a token.
    #[error("--listen {0} is not a loopback address; hookd listens beyond this machine only with --token")]
    NotLoopback(SocketAddr),
    /// HTTP without a token (the CLI generates one when none is given).
    #[error("--listen {0} needs a token: HTTP requests must carry `Authorization: Bearer TOKEN`")]
    NoToken(SocketAddr),
    /// The HTTP token could not be generated or kept.
    #[error(transparent)]
    Token(TokenError),
    /// Binding or serving failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Where to listen.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The Unix socket (`None`: none).
    pub socket: Option<PathBuf>,
    /// A TCP address (loopback unless `token` is set).
    pub listen: Option<SocketAddr>,
    /// Required from TCP clients as `Authorization: Bearer TOKEN`; HTTP is refused without one.
    pub token: Option<String>,
    /// A file holding the generated token: kept at shutdown (unlike the socket), so the next
    /// start serves with the same token.
    pub token_file: Option<PathBuf>,
    /// Connections, header time, dispatches at once.
    pub limits: Limits,
    /// How long running dispatches may take to finish after a shutdown signal.
    pub grace: Duration,
    /// The events log and how many rotated files it keeps: subscribers resuming from before
    /// the ring's oldest event get the rest from there.
    pub log: Option<(PathBuf, usize)>,
    /// The sessions' state, counted for `/metrics`.
    pub sessions: Option<Arc<crate::state::MemoryStore>>,
    /// Counts the events the events log could not take: a dispatch during which it grew is
    /// answered `unrecorded`.
    pub lost: crate::events::Lost,
    /// The digest of the settings the configuration was loaded with
    /// ([`crate::config::LoadOptions::inputs`]): a client that sends another one gets 412
    /// and dispatches in its own process.
    pub inputs: Option<String>,
    /// The variables the configuration was loaded with
    /// ([`crate::config::LoadOptions::input_vars`]): a client that sets one to another value
    /// gets 412.
    pub input_vars: Option<std::collections::BTreeMap<String, String>>,
    /// Projects served besides the one the daemon was started in; beyond it the least
    /// recently dispatched for is forgotten (and loaded again at its next dispatch).
    pub max_projects: usize,
    /// Where the dashboard's sessions table is kept across restarts (beside the events file),
    /// so a page opened after one still names the agent and project of the sessions it replays.
    pub sessions_file: Option<PathBuf>,
}

#[derive(Clone)]
struct AppState {
    /// The projects served, each with its engine.
    projects: Arc<projects::Projects>,
    hub: Arc<Hub>,
    metrics: Arc<metrics::Metrics>,
    /// The sessions seen, for the dashboard (`/v1/sessions`).
    seen: Arc<Mutex<dashboard::Seen>>,
    /// The TCP side's token and address (`None` on the Unix socket, which needs neither).
    http: Option<(String, SocketAddr)>,
    log: Option<(PathBuf, usize)>,
    /// Dispatches running now, shared by both listeners: one more than the limit gets a 503.
    running: Arc<tokio::sync::Semaphore>,
    /// Bytes of large dispatch requests taken now (shared by both listeners), one permit a
    /// byte: one more than the limit gets a 503.
    taking: Arc<tokio::sync::Semaphore>,
    /// Observers served now on this listener (each listener its own).
    observers: Arc<tokio::sync::Semaphore>,
    limits: Limits,
    /// Becomes true at shutdown once running dispatches are done or killed: event streams
    /// send what is left and end, so connections can close.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// See [`ServeOptions::inputs`].
    inputs: Option<String>,
    /// See [`ServeOptions::input_vars`].
    input_vars: Option<std::collections::BTreeMap<String, String>>,
    /// See [`ServeOptions::lost`].
    lost: crate::events::Lost,
}

type Shared = Arc<AppState>;

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let body = wire::ErrorBody {
        error: message.into(),
    };
    (status, Json(body)).into_response()
}

/// Every TCP request: a `Host` naming this daemon and no foreign `Origin` (403), then the token
/// (401) on everything but `/v1/health`. What a web page's request cannot satisfy.
async fn guard(
    State(state): State<Shared>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Some((token, listen)) = &state.http else {
        return next.run(req).await;
    };
    let headers = req.headers();
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    match header("host") {
        Some(host) if auth::host_allowed(host, *listen) => {}
        host => {
            return error(
                StatusCode::FORBIDDEN,
                format!(
                "Host {} is not this daemon's address; use http://{listen} or http://localhost:{}",
                host.map_or("(none)".to_string(), |h| format!("`{h}`")),
                listen.port()
            ),
            )
        }
    }
    if let Some(origin) = header("origin") {
        if !auth::origin_allowed(origin, *listen) {
            return error(
                StatusCode::FORBIDDEN,
                format!("requests from the web page at `{origin}` are refused"),
            );
        }
    }
    if req.uri().path() != "/v1/health"
        && !auth::bearer_matches(header("authorization"), token)
        && !dashboard::key_opens(req.method(), req.uri(), token)
    {
        return error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer TOKEN` (the token is in the file `hookd serve` named, or the one given with --token)",
        );
    }
    next.run(req).await
}

async fn health(State(state): State<Shared>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "events": state.hub.counters.events.load(Ordering::Relaxed),
        "subscribers": state.hub.counters.subscribers.load(Ordering::Relaxed),
    }))
}

fn router(state: Shared) -> Router {
    Router::new()
        .route("/v1/dispatch", post(answer::dispatch))
        .route("/v1/connections", post(connections::report))
        .route("/v1/health", get(health))
        .route("/v1/events", get(stream::events))
        .route("/metrics", get(metrics::metrics))
        .route("/", get(dashboard::page))
        .route("/v1/sessions", get(dashboard::sessions))
        .fallback(|uri: axum::http::Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                format!("no such endpoint `{}`; the API is POST /v1/dispatch, POST /v1/connections, GET /v1/events, GET /v1/sessions, GET /v1/health, GET /metrics, and the dashboard at GET /", uri.path()),
            )
        })
        .method_not_allowed_fallback(|method: axum::http::Method, uri: axum::http::Uri| async move {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("`{method} {}` is not served; POST /v1/dispatch and /v1/connections, GET the others", uri.path()),
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            observers::admit,
        ))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Bind the TCP address; the address really listened on (port 0 picks one).
async fn bind_tcp(addr: SocketAddr) -> Result<(tokio::net::TcpListener, SocketAddr), DaemonError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| DaemonError::Io {
            what: format!("cannot listen on {addr}"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| DaemonError::Io {
        what: "local address".into(),
        source,
    })?;
    Ok((listener, local))
}

/// Bind the Unix socket: refuse when a live daemon answers, replace a stale one, mode 0600.
fn bind_socket(path: &Path) -> Result<tokio::net::UnixListener, DaemonError> {
    let io = |what: String| move |source| DaemonError::Io { what, source };
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(DaemonError::AlreadyRunning(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(io(format!(
            "cannot remove the stale socket {}",
            path.display()
        )))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .map_err(io(format!("cannot listen on {}", path.display())))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(io(format!("cannot restrict {}", path.display())))?;
    Ok(listener)
}

/// Serve until SIGTERM or SIGINT, reloading the configuration when a watched file changes or on
/// SIGHUP; `ready` is called with what is being listened on.
pub async fn serve(
    engine: Engine,
    reloader: Reloader,
    hub: Arc<Hub>,
    opts: ServeOptions,
    ready: impl FnOnce(Vec<String>),
) -> Result<(), DaemonError> {
    // Handlers first: a SIGTERM sent as soon as the address is announced is a clean stop.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| DaemonError::Io {
            what: "cannot handle SIGTERM".into(),
            source,
        })?;
    let stop = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    serve_until(engine, reloader, hub, opts, ready, stop).await
}

/// [`serve`], until `shutdown` completes rather than at a signal (SIGHUP still reloads).
pub async fn serve_until(
    engine: Engine,
    reloader: Reloader,
    hub: Arc<Hub>,
    opts: ServeOptions,
    ready: impl FnOnce(Vec<String>),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), DaemonError> {
    let http = match (opts.listen, &opts.token) {
        (Some(addr), None) if !addr.ip().is_loopback() => {
            return Err(DaemonError::NotLoopback(addr))
        }
        (Some(addr), None) => return Err(DaemonError::NoToken(addr)),
        (Some(addr), Some(t)) => Some((t.clone(), addr)),
        (None, _) => None,
    };
    // Two steps at shutdown: listeners stop taking connections (`stopping`), then, once the
    // running dispatches are done or killed, event streams send what is left and end (`closing`).
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    let (closing_tx, closing) = tokio::sync::watch::channel(false);
    let metrics = Arc::new(metrics::Metrics::new(hub.clone(), opts.sessions.clone()));
    let projects = Arc::new(projects::Projects::new(engine, reloader, opts.max_projects));
    let seen = Arc::new(Mutex::new(
        opts.sessions_file
            .as_deref()
            .map(dashboard::Seen::kept)
            .unwrap_or_default(),
    ));
    let running = Arc::new(tokio::sync::Semaphore::new(opts.limits.dispatches.max(1)));
    let state: Shared = Arc::new(AppState {
        projects,
        hub,
        metrics: metrics.clone(),
        seen: seen.clone(),
        http: None,
        log: opts.log.clone(),
        running: running.clone(),
        taking: Arc::new(tokio::sync::Semaphore::new(
            opts.limits
                .dispatch_bytes
                .min(tokio::sync::Semaphore::MAX_PERMITS),
        )),
        observers: Arc::new(tokio::sync::Semaphore::new(
            opts.limits.observers_per_listener(),
        )),
        limits: opts.limits,
        stopping: closing.clone(),
        inputs: opts.inputs.clone(),
        input_vars: opts.input_vars.clone(),
        lost: opts.lost.clone(),
    });
    let (tasks, listening) = listen_all(&state, &opts, http, stopping).await?;
    let hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).map_err(
        |source| DaemonError::Io {
            what: "cannot handle SIGHUP".into(),
            source,
        },
    )?;
    ready(listening);
    until_shutdown(&state, hup, shutdown, opts.sessions_file.as_deref()).await;
    wind_down(&state, &opts, running, (stopping_tx, closing_tx), tasks).await;
    Ok(())
}

/// The listeners `opts` names (the socket, the TCP address with its token), each serving
/// until `stopping`; and what is listened on.
async fn listen_all(
    state: &Shared,
    opts: &ServeOptions,
    http: Option<(String, SocketAddr)>,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Result<(Vec<tokio::task::JoinHandle<()>>, Vec<String>), DaemonError> {
    let mut tasks = Vec::new();
    let mut listening = Vec::new();
    if let Some(path) = &opts.socket {
        let listener = bind_socket(path)?;
        listening.push(format!("unix:{}", path.display()));
        let app = router(state.clone());
        tasks.push(tokio::spawn(listen::serve(
            listener,
            app,
            opts.limits,
            (listen::same_user, over_cap(state, "the socket")),
            stopping.clone(),
        )));
    }
    if let Some(addr) = opts.listen {
        let (listener, local) = bind_tcp(addr).await?;
        listening.push(format!("http://{local}"));
        let tcp_state: Shared = Arc::new(AppState {
            // Port 0 picked one: Host is checked against the address really listened on.
            http: http.map(|(token, _)| (token, local)),
            observers: Arc::new(tokio::sync::Semaphore::new(
                opts.limits.observers_per_listener(),
            )),
            ..(**state).clone()
        });
        let app = router(tcp_state);
        tasks.push(tokio::spawn(listen::serve(
            listener,
            app,
            opts.limits,
            (listen::any, over_cap(state, "the HTTP listener")),
            stopping,
        )));
    }
    Ok((tasks, listening))
}

/// What a listener does with a connection closed unanswered at its cap: counted
/// (`hookd_clients_refused_total{status="503"}`), and a `client_refused` event at most once a
/// second, saying how many were closed since the last one (a flood of connections must not
/// become a flood of events).
fn over_cap(state: &Shared, listener: &'static str) -> listen::OverCap {
    let state = state.clone();
    let (closed, said) = (
        Arc::new(std::sync::atomic::AtomicU64::new(0)),
        Arc::new(Mutex::new(None::<std::time::Instant>)),
    );
    Arc::new(move || {
        state.metrics.refused(503);
        let n = closed.fetch_add(1, Ordering::Relaxed) + 1;
        let mut last = said.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return;
        }
        *last = Some(std::time::Instant::now());
        closed.fetch_sub(n, Ordering::Relaxed);
        let event = crate::events::ClientRefused {
            status: 503,
            reason: format!(
                "{n} connection{} to {listener} {} closed unanswered: it had {} open, its limit (--max-connections); clients dispatched in their own process",
                if n == 1 { "" } else { "s" },
                if n == 1 { "was" } else { "were" },
                state.limits.connections
            ),
            hook: None,
            session_id: String::new(),
            project: None,
        };
        state
            .projects
            .home()
            .current()
            .emit(crate::events::Event::ClientRefused(event));
    })
}

/// Reload each project whose watched files changed, or all at SIGHUP; reap adopted orphans;
/// until `shutdown`.
async fn until_shutdown(
    state: &Shared,
    mut hup: tokio::signal::unix::Signal,
    shutdown: impl std::future::Future<Output = ()>,
    sessions_file: Option<&Path>,
) {
    tokio::pin!(shutdown);
    let mut ticks = 0u64;
    let projects = &state.projects;
    let reload = |served, cause| async move {
        let applied = projects::reload(&projects.reloader, &served, cause).await;
        state.metrics.reloaded(applied);
    };
    // Polling, not inotify: one stat per file per second costs nothing, and it sees files that
    // editors replace by rename and directories created after the daemon started.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = hup.recv() => {
                for served in projects.all() {
                    reload(served, crate::kinds::ReloadCause::Sighup).await;
                }
            }
            _ = tick.tick() => {
                // Hooks' descendants that left their group and then exited were adopted by this
                // process (a child subreaper); without this they would stay zombies.
                crate::runner::reap_orphans();
                // The sessions table, every few seconds when it changed: a daemon killed
                // without its stop loses at most that much of it.
                ticks += 1;
                if let (Some(path), 0) = (sessions_file, ticks % 3) {
                    dashboard::keep(&state.seen, path).await;
                }
                let changed: Vec<_> = projects
                    .all()
                    .into_iter()
                    .filter(|s| s.changed(&projects.reloader))
                    .collect();
                if !changed.is_empty() {
                    // Let an editor finish writing before reading what it wrote.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                for served in changed {
                    reload(served, crate::kinds::ReloadCause::Changed).await;
                }
            }
        }
    }
}

/// Stop accepting and end event streams; running dispatches get the grace period, then their
/// hooks are killed; then streams send what is left and end, the listeners finish, and the
/// socket and token file are removed.
async fn wind_down(
    state: &Shared,
    opts: &ServeOptions,
    running: Arc<tokio::sync::Semaphore>,
    (stopping, closing): (
        tokio::sync::watch::Sender<bool>,
        tokio::sync::watch::Sender<bool>,
    ),
    tasks: Vec<tokio::task::JoinHandle<()>>,
) {
    let _ = stopping.send(true);
    let permits = opts.limits.dispatches.max(1) as u32;
    if tokio::time::timeout(opts.grace, running.clone().acquire_many_owned(permits))
        .await
        .is_err()
    {
        // Engines replaced by reloads share the token: this stops every run still going, and
        // each reports its `interrupted` event before the streams end.
        state.projects.home().current().canceller().cancel();
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            running.clone().acquire_many_owned(permits),
        )
        .await;
    }
    if let Some(path) = &opts.sessions_file {
        dashboard::keep(&state.seen, path).await;
    }
    let _ = closing.send(true);
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        futures_util::future::join_all(tasks),
    )
    .await;
    // The token file stays: the next start serves with the same token (`--new-token` rotates).
    for path in opts.socket.iter() {
        let _ = std::fs::remove_file(path);
    }
}
