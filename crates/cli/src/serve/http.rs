//! The HTTP server (axum): the JSON API under `/api/v1/memory/`, the MCP streamable-HTTP
//! endpoint at `/mcp`, and the OpenAPI document at `/openapi.json`.
//!
//! Every error is `{"error": {"code", "message"}}` with a stable code; bodies are limited in
//! size and must be JSON; a bearer token, when configured, guards everything but the OpenAPI
//! document; corrections name the version read (in the body, and optionally as `If-Match`), and
//! a stale one is answered 412.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::mcp::MemoryTools;
use super::service::{ApiError, ApiResult, Service};
use super::{openapi, wire};

/// What to serve and how.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub mcp: bool,
    pub api: bool,
    pub token: Option<String>,
    pub max_body_bytes: usize,
    pub host: SocketAddr,
}

#[derive(Debug, Clone)]
struct AppState {
    service: Arc<Service>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(self.body())).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

fn json<T: Serialize>(value: &T) -> Response {
    axum::Json(value).into_response()
}

fn reply<T: Serialize>(result: ApiResult<T>) -> Response {
    match result {
        Ok(value) => json(&value),
        Err(error) => error.into_response(),
    }
}

/// A JSON request body, or the reason it is not one.
fn body<T: DeserializeOwned>(headers: &HeaderMap, bytes: Result<Bytes, BytesRejection>) -> ApiResult<T> {
    let bytes = bytes.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(413, "payload_too_large", "the request body is too large"),
        _ => ApiError::invalid(format!("could not read the request body: {rejection}")),
    })?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(ApiError::new(415, "unsupported_media_type", "the request body must be application/json"));
    }
    // Through a value first: serde would read a struct from a JSON array, which no schema here
    // allows.
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| ApiError::invalid(format!("request body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid("the request body must be a JSON object"));
    }
    serde_json::from_value(value).map_err(|e| ApiError::invalid(format!("request body: {e}")))
}

/// Like [`body`], but an empty body means the defaults.
fn optional_body<T: DeserializeOwned + Default>(
    headers: &HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult<T> {
    match &bytes {
        Ok(b) if b.iter().all(u8::is_ascii_whitespace) => Ok(T::default()),
        _ => body(headers, bytes),
    }
}

fn query<T>(query: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    query.map(|Query(q)| q).map_err(|e| ApiError::invalid(format!("query string: {}", e.body_text())))
}

fn etag(version: u32) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{version}\"")).unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

/// The version an `If-Match` header names: `"3"` (or `W/"3"`, or bare `3`).
fn if_match(headers: &HeaderMap) -> ApiResult<Option<u32>> {
    let Some(value) = headers.get(header::IF_MATCH) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ApiError::invalid("If-Match is not ASCII"))?.trim();
    let tag = text.strip_prefix("W/").unwrap_or(text).trim_matches('"');
    tag.parse::<u32>().map(Some).map_err(|_| {
        ApiError::invalid(format!("If-Match must name one version, like \"3\" (the ETag of a read), not {text:?}"))
    })
}

async fn retrieve(State(s): State<AppState>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.retrieve(input).await),
        Err(e) => e.into_response(),
    }
}

async fn search(State(s): State<AppState>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.search(input).await),
        Err(e) => e.into_response(),
    }
}

async fn upsert(State(s): State<AppState>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.save(input).await),
        Err(e) => e.into_response(),
    }
}

async fn correct(State(s): State<AppState>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    let run = async {
        let input: wire::CorrectInput = body(&headers, bytes)?;
        s.service.correct(input, if_match(&headers)?).await
    };
    match run.await {
        Ok(corrected) => {
            let mut response = json(&corrected);
            response.headers_mut().insert(header::ETAG, etag(corrected.version));
            response
        }
        Err(e) => e.into_response(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetParams {
    id: String,
}

async fn get_node(State(s): State<AppState>, params: Result<Query<GetParams>, QueryRejection>) -> Response {
    let input = match query(params) {
        Ok(GetParams { id }) => wire::ReadInput { id },
        Err(e) => return e.into_response(),
    };
    match s.service.read(input).await {
        Ok(node) => {
            let version = node.version;
            let mut response = json(&node);
            if let Some(version) = version {
                response.headers_mut().insert(header::ETAG, etag(version));
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn browse(State(s): State<AppState>, params: Result<Query<wire::BrowseInput>, QueryRejection>) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.browse(input).await),
        Err(e) => e.into_response(),
    }
}

async fn catalog(State(s): State<AppState>, params: Result<Query<wire::CatalogInput>, QueryRejection>) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.catalog(input).await),
        Err(e) => e.into_response(),
    }
}

async fn status(State(s): State<AppState>) -> Response {
    reply(s.service.status().await)
}

async fn sync(State(s): State<AppState>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    match optional_body(&headers, bytes) {
        Ok(input) => reply(s.service.sync(input).await),
        Err(e) => e.into_response(),
    }
}

async fn openapi_document() -> Response {
    json(&openapi::document())
}

async fn not_found() -> Response {
    ApiError::new(404, "not_found", "no such endpoint; see /openapi.json").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(405, "method_not_allowed", "this endpoint does not take that method; see /openapi.json")
        .into_response()
}

/// Compares without an early exit, so response time does not reveal how much of a guess matched.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(presented) if same_secret(presented.as_bytes(), token.as_bytes()) => next.run(request).await,
        _ => ApiError::new(401, "unauthorized", "a valid bearer token is required").into_response(),
    }
}

/// The router for `options`, over `service`.
pub(crate) fn router(service: Arc<Service>, options: &Options) -> Router {
    let state = AppState { service: service.clone() };
    let mut guarded = Router::new();
    if options.api {
        let api = Router::new()
            .route("/retrieve", post(retrieve))
            .route("/search", post(search))
            .route("/get", get(get_node))
            .route("/upsert", post(upsert))
            .route("/correct", post(correct))
            .route("/browse", get(browse))
            .route("/catalog", get(catalog))
            .route("/status", get(status))
            .route("/sync", post(sync))
            .method_not_allowed_fallback(method_not_allowed)
            .with_state(state);
        guarded = guarded.nest("/api/v1/memory", api);
    }
    if options.mcp {
        let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
        hosts.push(options.host.to_string());
        hosts.push(options.host.ip().to_string());
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_max_request_body_bytes(options.max_body_bytes);
        let tools = service.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(MemoryTools::new(tools.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        guarded = guarded.nest_service("/mcp", mcp);
    }
    if let Some(token) = &options.token {
        guarded = guarded.layer(middleware::from_fn_with_state(Arc::<str>::from(token.as_str()), require_token));
    }
    let mut app = guarded;
    if options.api {
        app = app.route("/openapi.json", get(openapi_document));
    }
    app.fallback(not_found).layer(DefaultBodyLimit::max(options.max_body_bytes))
}

/// Serves until the process is stopped (Ctrl-C or SIGTERM end it cleanly).
pub(crate) async fn serve(listener: tokio::net::TcpListener, service: Arc<Service>, options: Options) -> Result<()> {
    let app = router(service, &options);
    axum::serve(listener, app).with_graceful_shutdown(shutdown()).await?;
    Ok(())
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = interrupt => {},
            _ = terminate.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
