//! `POST /v1/connections`: the connections a confined model call made through the proxy of
//! `hookd exec` (which the agent's shell runs, not the daemon), reported when the call ends and
//! emitted as `network_request` events of the client's project: in the daemon's stream, its
//! metrics, the dashboard's refused hosts, its events file and its OpenTelemetry export, as a
//! hook's own connections are. Checked as a dispatch is (the same settings, a project it can
//! serve); a refusal is a `client_refused` event, and the client writes its events where it
//! would without a daemon.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::answer::{self, refusal, Asked, Refusal};
use super::wire::{Connection, ConnectionsRequest};
use super::{AppState, Shared};
use crate::catalog::HookPoint;
use crate::events::NetworkRequest;

/// The most bytes a report may have: a call's connections, a few hundred bytes each (the
/// client sends more in several reports).
pub const MAX_CONNECTIONS_BYTES: usize = 1024 * 1024;

/// The longest host and reason a report may carry, in bytes (a DNS name is at most 253).
const MAX_HOST_BYTES: usize = 1024;
const MAX_REASON_BYTES: usize = 4096;

/// The handler: `{"recorded": N}`, or the refusal as an error answer and an event.
pub(super) async fn report(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let mut asked = Asked::default();
    let taken = take(&state, &headers, body, &mut asked).await;
    answer::answered(&state, taken, asked)
}

async fn take(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    asked: &mut Asked,
) -> Result<Response, Refusal> {
    answer::admit(headers)?;
    let body = answer::read_body(state, body, MAX_CONNECTIONS_BYTES, too_large).await?;
    let req: ConnectionsRequest = serde_json::from_slice(&body).map_err(|e| {
        refusal(
            StatusCode::BAD_REQUEST,
            format!("expected {{\"session\": …, \"connections\": [{{\"host\": …, \"port\": …, \"verdict\": …}}]}}: {e}"),
        )
    })?;
    asked.point = Some(HookPoint::PreTool);
    asked.session = crate::state::session_key(&req.session).into_owned();
    asked.project = req.project.as_ref().map(|p| p.display().to_string());
    let events = events(&req, &asked.session)?;
    answer::same_settings(state, &req.inputs, &req.vars)?;
    let served = answer::project(state, req.project.as_ref()).await?;
    let engine = served.current();
    let recorded = events.len();
    engine.connections(events);
    Ok(Json(serde_json::json!({ "recorded": recorded })).into_response())
}

fn too_large() -> Refusal {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "a connections report is at most {MAX_CONNECTIONS_BYTES} bytes; send them in several"
        ),
    )
}

/// The report's connections as the events a hook's own would be (named `exec`, at `pre_tool`
/// where the call was decided), or why one cannot be (a 400).
fn events(req: &ConnectionsRequest, session: &str) -> Result<Vec<NetworkRequest>, Refusal> {
    let bad = |why: String| refusal(StatusCode::BAD_REQUEST, why);
    req.connections
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let Connection {
                host,
                port,
                verdict,
                reason,
                bytes_out,
                bytes_in,
                duration_ms,
            } = c;
            if !matches!(verdict.as_str(), "allowed" | "refused") {
                return Err(bad(format!(
                    "connection {i}: `verdict` is `allowed` or `refused`, not `{}`",
                    verdict.escape_debug()
                )));
            }
            if host.is_empty() || host.len() > MAX_HOST_BYTES {
                return Err(bad(format!(
                    "connection {i}: `host` has 1 to {MAX_HOST_BYTES} bytes"
                )));
            }
            if reason.len() > MAX_REASON_BYTES {
                return Err(bad(format!(
                    "connection {i}: `reason` has at most {MAX_REASON_BYTES} bytes"
                )));
            }
            Ok(NetworkRequest {
                host: host.clone(),
                port: *port,
                verdict: verdict.clone(),
                reason: reason.clone(),
                bytes_out: *bytes_out,
                bytes_in: *bytes_in,
                duration_ms: *duration_ms,
                name: "exec".into(),
                hook: HookPoint::PreTool,
                session_id: session.into(),
            })
        })
        .collect()
}
