//! What a monitor reads: `/metrics`, `/healthz` and `/readyz`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::metrics::Metrics;
use crate::service::ApiError;
use arbor_ports::with_causes;

use super::guards::{Gate, bearer, same_secret};
/// The gate and the counts, for the operator's endpoints.
#[derive(Debug)]
pub(super) struct Monitor {
    pub(super) gate: Arc<Gate>,
    pub(super) metrics: Arc<Metrics>,
}

/// `/metrics`: for whoever passes a single-binding server's gate (the person who runs it), and
/// on a multi-tenant server for the server's own administrator token only (`--token`): it
/// names every tenant and counts everyone's requests, which no tenant may see.
pub(super) async fn metrics(State(monitor): State<Arc<Monitor>>, headers: HeaderMap) -> Response {
    let presented = bearer(&headers);
    let allowed = match &*monitor.gate {
        Gate::Open { .. } => true,
        Gate::Token { digest, .. } | Gate::Tenants { admin: Some(digest), .. } => {
            presented.is_some_and(|p| same_secret(p.as_bytes(), digest))
        }
        Gate::Tenants { admin: None, .. } => {
            let message = "start the server with --token (its administrator's) to read metrics";
            return ApiError::new(403, "forbidden", message).into_response();
        }
    };
    if !allowed {
        return ApiError::new(401, "unauthorized", "a valid bearer token is required").into_response();
    }
    let text = monitor.metrics.render(&monitor.gate.stores().await).await;
    ([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"))], text).into_response()
}

/// `/healthz`: the process answers.
pub(super) async fn healthz() -> Response {
    axum::Json(serde_json::json!({ "status": "ok" })).into_response()
}

/// `/readyz`: the store (or the token book) answers too; 503 while it does not.
pub(super) async fn readyz(State(monitor): State<Arc<Monitor>>) -> Response {
    match monitor.gate.ready().await {
        Ok(()) => axum::Json(serde_json::json!({ "status": "ready" })).into_response(),
        Err(error) => {
            tracing::warn!(error = %with_causes(&*error), "not ready");
            ApiError::new(503, "unavailable", "the store does not answer yet").into_response()
        }
    }
}
