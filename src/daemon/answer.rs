//! `POST /v1/dispatch`: a client's dispatch, run with its project's engine, or refused with
//! the reason, which is also a `client_refused` event, whatever the reason (busy, too large,
//! unreadable, a project it cannot serve, other settings): a client the daemon could not answer
//! dispatched in its own process, and the daemon's stream says so.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::listen::SMALL_DISPATCH;
use super::projects::{self, Served};
use super::wire::DispatchRequest;
use super::{dashboard, error, AppState, Shared, MAX_REQUEST_BYTES};
use crate::catalog::HookPoint;
use crate::dispatch::Context;
use crate::events::Event;

/// Why the daemon did not run a client's dispatch: the status it answers and the reason.
pub(super) struct Refusal {
    pub(super) status: StatusCode,
    pub(super) reason: String,
}

pub(super) fn refusal(status: StatusCode, reason: impl Into<String>) -> Refusal {
    Refusal {
        status,
        reason: reason.into(),
    }
}

/// What the request said of itself, as far as it was read: for the refusal's event.
#[derive(Default)]
pub(super) struct Asked {
    pub(super) point: Option<HookPoint>,
    pub(super) session: String,
    pub(super) project: Option<String>,
}

/// The handler: the Outcome, or the refusal as an error answer and an event.
pub(super) async fn dispatch(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let mut asked = Asked::default();
    let taken = take(&state, &headers, body, &mut asked).await;
    answered(&state, taken, asked)
}

/// The answer, or the refusal as an error answer and a `client_refused` event.
pub(super) fn answered(
    state: &AppState,
    taken: Result<Response, Refusal>,
    asked: Asked,
) -> Response {
    match taken {
        Ok(response) => response,
        Err(Refusal { status, reason }) => {
            state.metrics.refused(status.as_u16());
            let event = crate::events::ClientRefused {
                status: status.as_u16(),
                reason: reason.clone(),
                hook: asked.point,
                session_id: asked.session,
                project: asked.project,
            };
            state
                .projects
                .home()
                .current()
                .emit(Event::ClientRefused(event));
            error(status, reason)
        }
    }
}

/// Read, check and run one dispatch.
async fn take(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    asked: &mut Asked,
) -> Result<Response, Refusal> {
    admit(headers)?;
    // Taken before the body is read: a client that sent `Expect: 100-continue` learns the
    // daemon took its dispatch only when it has a place to run.
    let Ok(_running) = state.running.clone().try_acquire_owned() else {
        return Err(refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the daemon is running {} dispatches, its limit (--max-dispatches); dispatch in-process or try again",
                state.limits.dispatches
            ),
        ));
    };
    let _bytes = take_bytes(state, headers)?;
    let (req, point, context) = read_request(state, body, asked).await?;
    same_settings(state, &req.inputs, &req.vars)?;
    let served = project(state, req.project.as_ref()).await?;
    let engine = served.current();
    gates(&engine, &req)?;
    let project = served.dir.display().to_string();
    dashboard::saw(state, &context, point, &project);
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
            state.metrics.for_project(&project);
            outcome.notices.extend(served.pending_trust());
            // Conservatively: a concurrent dispatch's lost event marks this one too.
            outcome.unrecorded = state.lost.count() != lost;
            Ok(Json(outcome).into_response())
        }
        Ok(Err(e)) => Err(refusal(StatusCode::BAD_REQUEST, e.to_string())),
        Err(e) => Err(refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the dispatch failed: {e}"),
        )),
    }
}

/// The request's body, read within its time and decoded (a large one off the async workers,
/// which other clients need).
async fn read_request(
    state: &AppState,
    body: Body,
    asked: &mut Asked,
) -> Result<(DispatchRequest, HookPoint, Context), Refusal> {
    let body = read_body(state, body, MAX_REQUEST_BYTES, too_large).await?;
    if body.len() <= SMALL_DISPATCH {
        decode(&body, asked)
    } else {
        // Parsing megabytes takes a while: off the async workers, which other clients need.
        let parsed = tokio::task::spawn_blocking(move || {
            let mut asked = Asked::default();
            (decode(&body, &mut asked), asked)
        })
        .await;
        match parsed {
            Ok((decoded, was)) => {
                *asked = was;
                decoded
            }
            Err(e) => Err(format!("the request could not be read: {e}")),
        }
    }
    .map_err(|why| refusal(StatusCode::BAD_REQUEST, why))
}

/// A request's body, at most `limit` bytes (else `too_large`), within the daemon's time for it.
pub(super) async fn read_body(
    state: &AppState,
    body: Body,
    limit: usize,
    too_large: fn() -> Refusal,
) -> Result<axum::body::Bytes, Refusal> {
    match tokio::time::timeout(state.limits.body_timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(_)) => Err(too_large()),
        Err(_) => Err(refusal(
            StatusCode::REQUEST_TIMEOUT,
            "the request's body did not arrive in time",
        )),
    }
}

/// A place among the bytes of large dispatches taken at once (`--max-dispatch-bytes`), held
/// until the dispatch is answered: its `Content-Length`, or the most a request may have when it
/// says none. A small request ([`SMALL_DISPATCH`]) needs none; one over the limit is a 503.
fn take_bytes(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, Refusal> {
    let size = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(MAX_REQUEST_BYTES);
    if size <= SMALL_DISPATCH {
        return Ok(None);
    }
    let permits = u32::try_from(size.min(MAX_REQUEST_BYTES)).unwrap_or(u32::MAX);
    match state.taking.clone().try_acquire_many_owned(permits) {
        Ok(p) => Ok(Some(p)),
        Err(_) => Err(refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the daemon takes at most {} bytes of large dispatches at once (--max-dispatch-bytes), {} are taken and this one has {size}; dispatch in-process or try again",
                state.limits.dispatch_bytes,
                state.limits.dispatch_bytes.saturating_sub(state.taking.available_permits()),
            ),
        )),
    }
}

/// The request's body: what to dispatch, where, with which context; or why not (a 400).
fn decode(body: &[u8], asked: &mut Asked) -> Result<(DispatchRequest, HookPoint, Context), String> {
    let req: DispatchRequest = serde_json::from_slice(body)
        .map_err(|e| format!("expected {{\"point\": …, \"context\": {{…}}}}: {e}"))?;
    asked.project = req.project.as_ref().map(|p| p.display().to_string());
    if let Some(Value::String(s)) = req.context.as_ref().and_then(|c| c.get("session_id")) {
        asked.session = crate::state::session_key(s).into_owned();
    }
    let point: HookPoint = req
        .point
        .parse()
        .map_err(|e| format!("{e}; valid points: {}", HookPoint::names_joined()))?;
    asked.point = Some(point);
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
pub(super) fn admit(headers: &HeaderMap) -> Result<(), Refusal> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a dispatch must be sent with `Content-Type: application/json`",
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

fn too_large() -> Refusal {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("a dispatch request is at most {MAX_REQUEST_BYTES} bytes; dispatch a larger one in-process (`hookd dispatch --no-daemon`)"),
    )
}

/// The project the client dispatches for, served now or loaded for it; 409 for one the daemon
/// cannot serve (not a directory here, named over HTTP, or its configuration is invalid).
pub(super) async fn project(
    state: &AppState,
    dir: Option<&std::path::PathBuf>,
) -> Result<Arc<Served>, Refusal> {
    let projects = &state.projects;
    let Some(dir) = dir else {
        return Ok(projects.home().clone());
    };
    // The daemon's own project as it names it (clients send the directory their process
    // found, as the daemon did): no need to ask the file system.
    if *dir == projects.home().dir {
        return Ok(projects.home().clone());
    }
    let cannot = |why: String| {
        refusal(
            StatusCode::CONFLICT,
            format!(
                "this daemon cannot serve the project {}: {why}; the client dispatched in its own process",
                dir.display()
            ),
        )
    };
    if !dir.is_absolute() {
        return Err(cannot("it is not an absolute path".into()));
    }
    let key = match projects::key(dir) {
        Ok(k) if k.is_dir() => k,
        Ok(_) => return Err(cannot("it is not a directory".into())),
        Err(e) => return Err(cannot(e.to_string())),
    };
    if projects.is_home(&key) {
        return Ok(projects.home().clone());
    }
    // Over HTTP, with a token that may be used from elsewhere: the daemon's own project only.
    if state.http.is_some() {
        return Err(cannot(format!(
            "over HTTP it dispatches only for the project it was started in ({}); clients of other projects dispatch over its Unix socket",
            projects.home().dir.display()
        )));
    }
    if let Some(served) = projects.get(&key) {
        return Ok(served);
    }
    // Loaded (and watched) where the key says, links resolved once: a link the client named,
    // retargeted later, must not move the configuration every client of this key gets.
    let p = projects.clone();
    let loaded = tokio::task::spawn_blocking(move || p.load(key.clone(), &key)).await;
    match loaded {
        Ok(Ok((served, forgotten))) => {
            state
                .metrics
                .projects(projects.count(), forgotten.as_deref());
            Ok(served)
        }
        Ok(Err(e)) => {
            let first = e.event(crate::kinds::ReloadCause::Dispatch);
            Err(cannot(format!(
                "its configuration is invalid ({}:{}: {})",
                first.file, first.line, first.message
            )))
        }
        Err(e) => Err(cannot(format!("loading its configuration failed: {e}"))),
    }
}

/// A client whose settings digest is not the daemon's is answered 412: its configuration would
/// not be this daemon's, whatever the project.
/// A variable the client lacks is not a difference: agents strip variables from their hooks
/// (Gemini CLI in CI mode), and the daemon's value, the user's, applies.
pub(super) fn same_settings(
    state: &AppState,
    inputs: &Option<String>,
    vars: &Option<std::collections::BTreeMap<String, String>>,
) -> Result<(), Refusal> {
    match (inputs, &state.inputs) {
        (Some(theirs), Some(ours)) if theirs != ours => return Err(refusal(StatusCode::PRECONDITION_FAILED, "this daemon loaded its configuration with other settings than this client's (home, --config-dir, or --trust-project); the client dispatched in its own process")),
        _ => {}
    }
    let differs = match (vars, &state.input_vars) {
        (Some(theirs), Some(ours)) => crate::config::differing_var(theirs, ours),
        _ => None,
    };
    match differs {
        Some(name) => Err(refusal(StatusCode::PRECONDITION_FAILED, format!("this daemon loaded its configuration with another value of {name} than this client's (or none); the client dispatched in its own process"))),
        None => Ok(()),
    }
}

/// A client that gates the shell tools, when the project's configuration here does not, is
/// answered 412: never an ungated verdict.
fn gates(engine: &crate::dispatch::Engine, req: &DispatchRequest) -> Result<(), Refusal> {
    if req.gate_shell_tools && !engine.config().policy.gate_shell_tools {
        return Err(refusal(StatusCode::PRECONDITION_FAILED, "the client gates the model's shell commands (--gate-shell-tools) and this daemon's configuration does not; the client dispatched in its own process: start the daemon with --gate-shell-tools, or set `gate_shell_tools: true` in ~/.infer/hooks.yaml"));
    }
    Ok(())
}
