//! Limits on what a client may cost: body size and read time, and open MCP sessions.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::service::ApiError;
use crate::wire;

use super::guards::{bearer, digest};
/// How long a client may take to send a request's body once its headers are in: past it the
/// request is refused (408), so a client that drips a body byte by byte cannot hold a
/// connection. Thirty seconds carries the largest body allowed over the slowest link a
/// person would still use.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// What every request's body must be before a handler sees it: complete within
/// `body_read_timeout` (408), no larger than the limit (413), and, when it is JSON, without a
/// key given twice in one object (400) — a decoder would keep one of the two silently, and
/// which one the sender meant is not ours to guess. Bodies are read here once, for the API
/// and the MCP endpoint alike.
pub(super) async fn read_body_strictly(
    State(limits): State<Arc<BodyLimits>>,
    request: Request,
    next: Next,
) -> Response {
    let too_large = || ApiError::new(413, "payload_too_large", "the request body is too large").into_response();
    // Announced too large: refused before a byte of it is read.
    let announced = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|length| length > limits.max_bytes as u64) {
        return too_large();
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(limits.read_timeout, axum::body::to_bytes(body, limits.max_bytes)).await;
    let bytes = match read {
        Err(_) => {
            let mut response =
                ApiError::new(408, "request_timeout", "the request body did not arrive in time").into_response();
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        Ok(Err(error)) => {
            let too_large =
                std::error::Error::source(&error).is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            return if too_large {
                ApiError::new(413, "payload_too_large", "the request body is too large").into_response()
            } else {
                ApiError::invalid(format!("could not read the request body: {error}")).into_response()
            };
        }
        Ok(Ok(bytes)) => bytes,
    };
    if let Some(key) = wire::first_duplicate_key(&bytes) {
        return ApiError::invalid(format!("the request body gives the key {key:?} twice in one object"))
            .into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// The bounds [`read_body_strictly`] holds bodies to.
#[derive(Debug)]
pub(super) struct BodyLimits {
    pub(super) read_timeout: Duration,
    pub(super) max_bytes: usize,
}

/// How long an MCP session may sit idle before it is closed (a client that comes back later
/// starts a new one).
pub(crate) const MCP_SESSION_IDLE: Duration = Duration::from_secs(600);

/// The open MCP sessions and how many may be.
#[derive(Debug)]
pub(super) struct SessionLimit {
    pub(super) sessions: Arc<LocalSessionManager>,
    pub(super) max: usize,
    /// Requests opening a session right now: each counts against the limit until its session
    /// is in `sessions`, so many opened at once cannot all pass the same check.
    pub(super) opening: std::sync::atomic::AtomicUsize,
    /// The token (its digest) each session was opened with: a session is its opener's, and a
    /// request with another token, even a valid one, cannot use, read or close it.
    pub(super) owners: std::sync::Mutex<std::collections::HashMap<String, [u8; 32]>>,
}

/// One request opening a session, counted in [`SessionLimit::opening`] while it lives.
pub(super) struct Opening<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Refuses a request that would open an MCP session (one without `Mcp-Session-Id`) while the
/// limit is reached: 503, with the way out.
pub(super) async fn limit_mcp_sessions(
    State(limit): State<Arc<SessionLimit>>,
    request: Request,
    next: Next,
) -> Response {
    let opener = digest(bearer(request.headers()).unwrap_or(""));
    if let Some(session) = request.headers().get("mcp-session-id") {
        let session = session.to_str().unwrap_or("");
        let owner = limit.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(session).copied();
        if owner.is_some_and(|owner| owner != opener) {
            return ApiError::new(404, "not_found", "no such MCP session").into_response();
        }
        return next.run(request).await;
    }
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    // Counted before the sessions are, so of requests racing for the last place one passes.
    let opening = Opening(&limit.opening);
    let opening_now = limit.opening.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if limit.sessions.sessions.read().await.len() + opening_now > limit.max {
        let mut response = ApiError::new(
            503,
            "unavailable",
            format!(
                "this server already holds {} MCP sessions, its limit; close one (DELETE /mcp) or retry once idle ones expire",
                limit.max
            ),
        )
        .into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        return response;
    }
    let response = next.run(request).await;
    // The session (if one was opened) is among `sessions` once its response has begun.
    drop(opening);
    if let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        let open: std::collections::HashSet<String> =
            limit.sessions.sessions.read().await.keys().map(|id| id.to_string()).collect();
        let mut owners = limit.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        owners.retain(|id, _| open.contains(id));
        owners.insert(session.to_owned(), opener);
    }
    response
}
