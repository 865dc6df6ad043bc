//! Observers (event streams, the dashboard, `/v1/sessions`, `/metrics`) never take the
//! connections dispatches need: each listener serves at most
//! [`super::Limits::observers_per_listener`] of them at once, at most half its connections;
//! one more is answered 503 and its connection closed. An event stream holds its place for as
//! long as it is open.

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;

use super::{error, Shared};

/// Whether `path` is an observer's: what reads the daemon rather than dispatching to it.
fn observes(path: &str) -> bool {
    matches!(path, "/" | "/v1/events" | "/v1/sessions" | "/metrics")
}

/// Every request: an observer's takes a place among this listener's observers for as long as
/// its answer is being sent (a stream: until it ends), or is refused when none is free.
pub(super) async fn admit(
    State(state): State<Shared>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !observes(req.uri().path()) {
        return next.run(req).await;
    }
    let Ok(place) = state.observers.clone().try_acquire_owned() else {
        let mut refused = error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the daemon serves {} observers (event streams, dashboards, /metrics) on this listener, its limit (--max-observers, at most half of --max-connections): the other connections are kept for dispatches; close one, or try again",
                state.limits.observers_per_listener()
            ),
        );
        // Its connection goes too: a kept one would hold a place dispatches need.
        refused
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return refused;
    };
    let streams = req.uri().path() == "/v1/events";
    let response = next.run(req).await;
    if !streams {
        // The others' answers are whole now: the place is free again.
        return response;
    }
    let (parts, body) = response.into_parts();
    // The place is held by the body: released when the answer is sent or the stream ends.
    let body = futures_util::StreamExt::map(body.into_data_stream(), move |chunk| {
        let _held = &place;
        chunk
    });
    Response::from_parts(parts, axum::body::Body::from_stream(body))
}
