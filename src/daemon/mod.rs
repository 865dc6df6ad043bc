//! The daemon: one hookd for every agent session on the machine. Agents dispatch over a Unix
//! socket (or loopback HTTP); dashboards follow the event stream as Server-Sent Events.

mod auth;
mod backlog;
mod builder;
pub use builder::{announcement, Builder, LOG_KEEP};
pub mod client;
mod dashboard;
mod metrics;
pub use auth::{kept_token_file, new_token_file, token_file, TokenError};
pub use dashboard::key as dashboard_key;
pub mod hub;
pub mod listen;
mod stream;
pub mod trail;
pub mod wire;

use wire::DispatchRequest;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::catalog::HookPoint;
use crate::config::ConfigError;
use crate::dispatch::{Context, Engine};
use crate::events::Event;
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
}

/// The engine in use; a reload swaps it, dispatches already running finish on the old one.
type Current = Arc<RwLock<Arc<Engine>>>;

fn current(engine: &Current) -> Arc<Engine> {
    // A panic while holding the lock cannot leave the `Arc` half-written: use it anyway.
    engine.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// How the daemon rebuilds its engine when its configuration changes.
pub struct Reloader {
    /// Load the configuration again and build an engine that shares the running one's sink,
    /// session state and sequence counter.
    pub build: Box<dyn Fn() -> Result<Engine, ConfigError> + Send + Sync>,
    /// Files whose appearance, disappearance or change (time or size) triggers a reload.
    pub watch: Vec<PathBuf>,
}

type Snapshot = Vec<Option<(std::time::SystemTime, u64)>>;

fn snapshot(files: &[PathBuf]) -> Snapshot {
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.modified().ok()?, m.len()))
        })
        .collect()
}

/// Load the configuration again; a valid one replaces the engine, an invalid one is reported
/// (event and stderr) and the running configuration stays.
async fn reload(state: &AppState, reloader: &Arc<Reloader>, cause: crate::kinds::ReloadCause) {
    let engine = &state.engine;
    let r = reloader.clone();
    let built = match tokio::task::spawn_blocking(move || (r.build)()).await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("hookd: reloading panicked; keeping the running configuration: {e}");
            return;
        }
    };
    let was = current(engine).config().trust.state();
    let (replacement, event) = match built {
        Ok(new) => {
            let event = reloaded(&new, cause, was);
            (Some(Arc::new(new)), Event::ConfigReloaded(event))
        }
        Err(e) => {
            let (event, pending) = kept(&e, cause, was);
            *state
                .pending_trust
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = pending;
            (None, Event::ConfigError(event))
        }
    };
    let applied = replacement.is_some();
    if applied {
        *state
            .pending_trust
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }
    match replacement {
        // Announced before the swap: no event of the new configuration precedes the news of it.
        Some(new) => {
            new.emit(event);
            *engine.write().unwrap_or_else(|e| e.into_inner()) = new;
        }
        None => current(engine).emit(event),
    }
    state.metrics.reloaded(applied);
}

/// A valid configuration reloaded: said on stderr, and its event, with the project's trust and
/// what it was when the reload changed it.
fn reloaded(
    new: &Engine,
    cause: crate::kinds::ReloadCause,
    was: crate::events::TrustState,
) -> crate::events::ConfigReloaded {
    for w in &new.config().warnings {
        eprintln!("{w}\n");
    }
    let sources = new.config().sources.clone();
    let trust = new.config().trust.state();
    let changed = trust != was;
    let change = if changed {
        format!(
            "; the project's trust is now {} (was {})",
            trust.name(),
            was.name()
        )
    } else {
        String::new()
    };
    eprintln!(
        "hookd: configuration reloaded ({}) from {}{change}",
        cause.name(),
        sources.join(", ")
    );
    crate::events::ConfigReloaded {
        sources,
        cause,
        trust: Some(trust),
        trust_was: changed.then_some(was),
    }
}

/// An invalid configuration, the one in use kept: said on stderr, and its event with the kept
/// configuration's trust and, when the invalid one was loaded with another (`hookd trust` run
/// meanwhile), that trust as pending; and the notice dispatches carry while it is.
fn kept(
    e: &ConfigError,
    cause: crate::kinds::ReloadCause,
    was: crate::events::TrustState,
) -> (crate::events::ConfigError, Option<String>) {
    let mut event = e.event(cause);
    event.trust_pending = event.trust.filter(|t| *t != was);
    event.trust = Some(was);
    let pending = event.trust_pending.map(|t| {
        format!(
            " (the project is {} in it; {} in the invalid one, which takes effect once its errors are fixed)",
            was.name(),
            t.name()
        )
    });
    eprintln!(
        "{}\n\nhookd: the changed configuration is invalid; still using the previous one{}",
        event.diagnostics,
        pending.unwrap_or_default()
    );
    let notice = event.trust_pending.map(|t| {
        format!(
            "the project's trust is {} since, but the changed configuration has errors (`hookd check` shows them): the daemon keeps the previous configuration, where it is {}, until they are fixed",
            t.name(),
            was.name()
        )
    });
    (event, notice)
}

#[derive(Clone)]
struct AppState {
    engine: Current,
    hub: Arc<Hub>,
    metrics: Arc<metrics::Metrics>,
    /// The sessions seen, for the dashboard (`/v1/sessions`).
    seen: Arc<Mutex<dashboard::Seen>>,
    /// The TCP side's token and address (`None` on the Unix socket, which needs neither).
    http: Option<(String, SocketAddr)>,
    log: Option<(PathBuf, usize)>,
    /// Dispatches running now, shared by both listeners: one more than the limit gets a 503.
    running: Arc<tokio::sync::Semaphore>,
    limits: Limits,
    /// Becomes true at shutdown once running dispatches are done or killed: event streams
    /// send what is left and end, so connections can close.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// See [`ServeOptions::inputs`].
    inputs: Option<String>,
    /// See [`ServeOptions::lost`].
    lost: crate::events::Lost,
    /// A trust change that did not take effect (the changed configuration is invalid): said
    /// with every dispatch's notices until a reload succeeds, so no hint misleads.
    pending_trust: Arc<Mutex<Option<String>>>,
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

/// The request's body: what to dispatch, where, with which context; or why not (a 400).
fn decode(body: &[u8]) -> Result<(DispatchRequest, HookPoint, Context), String> {
    let req: DispatchRequest = serde_json::from_slice(body)
        .map_err(|e| format!("expected {{\"point\": …, \"context\": {{…}}}}: {e}"))?;
    let point: HookPoint = req
        .point
        .parse()
        .map_err(|e| format!("{e}; valid points: {}", HookPoint::names_joined()))?;
    let context = match &req.context {
        None => Context::new(),
        Some(v @ Value::Object(_)) => {
            Context::from_json(&v.to_string()).map_err(|e| e.to_string())?
        }
        Some(_) => return Err("`context` must be a JSON object".into()),
    };
    Ok((req, point, context))
}

/// A request's headers: JSON, and not announced larger than the daemon reads.
fn admit(headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a dispatch must be sent with `Content-Type: application/json`".into(),
        ));
    }
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if length.is_some_and(|n| n > MAX_REQUEST_BYTES) {
        return Err(too_large());
    }
    Ok(())
}

fn too_large() -> (StatusCode, String) {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("a dispatch request is at most {MAX_REQUEST_BYTES} bytes; dispatch a larger one in-process (`hookd dispatch --no-daemon`)"),
    )
}

/// The answer for a client this daemon must not dispatch for: another project (409), other
/// settings or a gate it does not have (412, said in the stream too, so an audit log that stays
/// empty shows why). The client then dispatches in its own process.
fn refuse(
    state: &AppState,
    engine: &Engine,
    req: &DispatchRequest,
    point: HookPoint,
    context: &Context,
) -> Option<Response> {
    if let Some(project) = &req.project {
        let served = &engine.config().project_dir;
        let same = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if same(project) != same(served) {
            return Some(error(
                StatusCode::CONFLICT,
                format!(
                    "this daemon serves the project {}, not {}",
                    served.display(),
                    project.display()
                ),
            ));
        }
    }
    let reason = match (&req.inputs, &state.inputs) {
        (Some(theirs), Some(ours)) if theirs != ours => "this daemon loaded its configuration with other settings than this client's (home, --config-dir, INFER_*/HOOKD_* variables, the variables naming protected places such as CLAUDE_CONFIG_DIR or XDG_STATE_HOME, or --trust-project); the client dispatched in its own process",
        _ if req.gate_shell_tools && !engine.config().policy.gate_shell_tools => "the client gates the model's shell commands (--gate-shell-tools) and this daemon's configuration does not; the client dispatched in its own process: start the daemon with --gate-shell-tools, or set `gate_shell_tools: true` in ~/.infer/hooks.yaml",
        _ => return None,
    };
    engine.emit(Event::ClientRefused(crate::events::ClientRefused {
        status: StatusCode::PRECONDITION_FAILED.as_u16(),
        reason: reason.to_string(),
        hook: point,
        session_id: crate::state::session_key(
            context
                .get("session_id")
                .and_then(|v| v.as_str())
                .unwrap_or_default(),
        )
        .into_owned(),
    }));
    Some(error(StatusCode::PRECONDITION_FAILED, reason))
}

async fn dispatch(State(state): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    if let Err((status, why)) = admit(&headers) {
        return error(status, why);
    }
    // Taken before the body is read: a client that sent `Expect: 100-continue` learns the
    // daemon took its dispatch only when it has a place to run.
    let Ok(_running) = state.running.clone().try_acquire_owned() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the daemon is running {} dispatches, its limit (--max-dispatches); dispatch in-process or try again",
                state.limits.dispatches
            ),
        );
    };
    let body = match tokio::time::timeout(
        state.limits.body_timeout,
        axum::body::to_bytes(body, MAX_REQUEST_BYTES),
    )
    .await
    {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            let (status, why) = too_large();
            return error(status, why);
        }
        Err(_) => {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "the request's body did not arrive in time",
            )
        }
    };
    let (req, point, context) = match decode(&body) {
        Ok(r) => r,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let engine = current(&state.engine);
    if let Some(response) = refuse(&state, &engine, &req, point, &context) {
        return response;
    }
    dashboard::saw(
        &state,
        &context,
        point,
        &engine.config().project_dir.display().to_string(),
    );
    let started = Instant::now();
    let lost = state.lost.count();
    // Hooks run processes: keep them off the async workers, so other sessions never wait.
    let result = tokio::task::spawn_blocking(move || {
        let outcome = engine.dispatch(point, &context);
        crate::runner::reap_orphans();
        outcome
    })
    .await;
    match result {
        Ok(Ok(mut outcome)) => {
            state.metrics.record(point, &outcome, started.elapsed());
            let pending = state
                .pending_trust
                .lock()
                .map(|p| p.clone())
                .unwrap_or_default();
            outcome.notices.extend(pending);
            // Conservatively: a concurrent dispatch's lost event marks this one too.
            outcome.unrecorded = state.lost.count() != lost;
            Json(outcome).into_response()
        }
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the dispatch failed: {e}"),
        ),
    }
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
        .route("/v1/dispatch", post(dispatch))
        .route("/v1/health", get(health))
        .route("/v1/events", get(stream::events))
        .route("/metrics", get(metrics::metrics))
        .route("/", get(dashboard::page))
        .route("/v1/sessions", get(dashboard::sessions))
        .fallback(|uri: axum::http::Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                format!("no such endpoint `{}`; the API is POST /v1/dispatch, GET /v1/events, GET /v1/sessions, GET /v1/health, GET /metrics, and the dashboard at GET /", uri.path()),
            )
        })
        .method_not_allowed_fallback(|method: axum::http::Method, uri: axum::http::Uri| async move {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("`{method} {}` is not served; POST /v1/dispatch, GET the others", uri.path()),
            )
        })
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
    let seen = Arc::new(Mutex::new(dashboard::Seen::default()));
    let running = Arc::new(tokio::sync::Semaphore::new(opts.limits.dispatches.max(1)));
    let state: Shared = Arc::new(AppState {
        engine: Arc::new(RwLock::new(Arc::new(engine))),
        hub,
        metrics: metrics.clone(),
        seen: seen.clone(),
        http: None,
        log: opts.log.clone(),
        running: running.clone(),
        limits: opts.limits,
        stopping: closing.clone(),
        inputs: opts.inputs.clone(),
        pending_trust: Arc::default(),
        lost: opts.lost.clone(),
    });
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
            listen::same_user,
            stopping.clone(),
        )));
    }
    if let Some(addr) = opts.listen {
        let (listener, local) = bind_tcp(addr).await?;
        listening.push(format!("http://{local}"));
        let tcp_state: Shared = Arc::new(AppState {
            // Port 0 picked one: Host is checked against the address really listened on.
            http: http.map(|(token, _)| (token, local)),
            ..(*state).clone()
        });
        let app = router(tcp_state);
        tasks.push(tokio::spawn(listen::serve(
            listener,
            app,
            opts.limits,
            listen::any,
            stopping,
        )));
    }
    let hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).map_err(
        |source| DaemonError::Io {
            what: "cannot handle SIGHUP".into(),
            source,
        },
    )?;
    ready(listening);
    until_shutdown(&state, reloader, hup, shutdown).await;
    wind_down(&state, &opts, running, (stopping_tx, closing_tx), tasks).await;
    Ok(())
}

/// Reload when a watched file changes or at SIGHUP, reap adopted orphans, until `shutdown`.
async fn until_shutdown(
    state: &Shared,
    reloader: Reloader,
    mut hup: tokio::signal::unix::Signal,
    shutdown: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let reloader = Arc::new(reloader);
    // The configuration files, and the code a trusted project's hooks run: editing a hook's
    // script untrusts the project, and the reload says so at once.
    let watched = |engine: &Current| {
        let engine = current(engine);
        let config = engine.config();
        let mut files = reloader.watch.clone();
        if let Some(fp) = &config.fingerprint {
            files.extend(fp.files.iter().map(|f| config.project_dir.join(f)));
        }
        files.sort();
        files.dedup();
        files
    };
    let mut seen = snapshot(&watched(&state.engine));
    // Polling, not inotify: one stat per file per second costs nothing, and it sees files that
    // editors replace by rename and directories created after the daemon started.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = hup.recv() => {
                reload(state, &reloader, crate::kinds::ReloadCause::Sighup).await;
                seen = snapshot(&watched(&state.engine));
            }
            _ = tick.tick() => {
                // Hooks' descendants that left their group and then exited were adopted by this
                // process (a child subreaper); without this they would stay zombies.
                crate::runner::reap_orphans();
                if snapshot(&watched(&state.engine)) != seen {
                    // Let an editor finish writing before reading what it wrote.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    // Snapshot before reading: an edit made during the reload triggers another.
                    let before = watched(&state.engine);
                    let pre = snapshot(&before);
                    reload(state, &reloader, crate::kinds::ReloadCause::Changed).await;
                    let after = watched(&state.engine);
                    seen = if after == before { pre } else { snapshot(&after) };
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
        current(&state.engine).canceller().cancel();
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            running.clone().acquire_many_owned(permits),
        )
        .await;
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
