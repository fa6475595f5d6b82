//! The memory centre: the page a store's owner opens in a browser at `/`, and the operator
//! endpoints it needs beyond the agent API (health, usage, audit, restore, what rules retired
//! and undoing it, settings).
//!
//! The page is three static files compiled into the binary: it holds no data and needs no
//! network, so it is served without a token. Everything it shows comes from the JSON API with
//! the owner's operator token (kept in the tab's session storage, sent as a bearer header, never
//! a cookie): a page on another site can neither read the answers (no CORS) nor make the
//! browser send the token, and the API refuses foreign origins and any body that is not
//! JSON — a cross-site form cannot post to it. The page's own policy forbids inline script,
//! framing and every origin but this server's.

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::binding::{Binding, operator};
use crate::request::{OperatorBody, query, reply};
use crate::wire;

const PAGE: &str = include_str!("../centre/index.html");
const SCRIPT: &str = include_str!("../centre/centre.js");
const STYLE: &str = include_str!("../centre/centre.css");

/// What the browser may do with the page: load its own script and style, talk to this server,
/// nothing inline, nothing framed.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(content_type: &'static str, text: &'static str) -> Response {
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY)),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    (headers, text).into_response()
}

/// The page and its two files, for anyone who reaches a known `Host`.
pub(crate) fn page_routes() -> Router {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", PAGE) }))
        .route("/centre/centre.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/centre/centre.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}

/// The operator endpoints, nested under `/api/v1/memory` beside the agent API.
pub(crate) fn operator_routes() -> Router {
    Router::new()
        .route("/memories", get(memories))
        .route("/health", get(health))
        .route("/usage", get(usage))
        .route("/audit", get(audit))
        .route("/restore", post(restore))
        .route("/retired", get(retired))
        .route("/retired/restore", post(restore_retired))
        .route("/review/edit", post(edit_candidate))
        .route("/review/keep_both", post(keep_both))
        .route("/settings", get(settings).put(write_settings))
}

async fn memories(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::MemoriesInput>, QueryRejection>,
) -> Response {
    let run = async { operator(&s)?.memories(query(params)?).await };
    reply(run.await)
}

async fn health(Extension(s): Extension<Binding>) -> Response {
    let run = async { operator(&s)?.health().await };
    reply(run.await)
}

async fn usage(Extension(s): Extension<Binding>, params: Result<Query<wire::UsageInput>, QueryRejection>) -> Response {
    let run = async { operator(&s)?.usage(query(params)?).await };
    reply(run.await)
}

async fn audit(Extension(s): Extension<Binding>, params: Result<Query<wire::AuditInput>, QueryRejection>) -> Response {
    let run = async { operator(&s)?.audit(query(params)?).await };
    reply(run.await)
}

async fn restore(OperatorBody { service, input }: OperatorBody<wire::RestoreInput>) -> Response {
    reply(service.restore(input).await)
}

async fn retired(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::RetiredInput>, QueryRejection>,
) -> Response {
    let run = async { operator(&s)?.retired(query(params)?).await };
    reply(run.await)
}

async fn restore_retired(OperatorBody { service, input }: OperatorBody<wire::RestoreRetiredInput>) -> Response {
    reply(service.restore_retired(input).await)
}

async fn edit_candidate(OperatorBody { service, input }: OperatorBody<wire::EditCandidateInput>) -> Response {
    reply(service.edit_candidate(input).await)
}

async fn keep_both(OperatorBody { service, input }: OperatorBody<wire::ReviewInput>) -> Response {
    reply(service.keep_both(input).await)
}

async fn settings(Extension(s): Extension<Binding>) -> Response {
    reply(operator(&s).and_then(|service| service.settings()))
}

async fn write_settings(OperatorBody { service, input }: OperatorBody<wire::SettingsInput>) -> Response {
    // Checking and writing a file blocks: off the async workers.
    match tokio::task::spawn_blocking(move || service.write_settings(input)).await {
        Ok(result) => reply(result),
        Err(_) => crate::service::ApiError::new(500, "internal", "the settings could not be written").into_response(),
    }
}
