//! The HTTP server (axum): the JSON API under `/api/v1/memory/`, the MCP streamable-HTTP
//! endpoint at `/mcp`, and the OpenAPI document at `/openapi.json`.
//!
//! Every error of the API is `{"error": {"code", "message"}}` with a stable code (the MCP
//! endpoint answers transport errors the way `rmcp` does); bodies are limited in size and must
//! be JSON; only known `Host` names are served and browser requests from foreign origins are
//! refused (no DNS rebinding, no cross-site posts); a bearer token — the one configured, or any
//! an operator issued, each bound to its tenant's store and context ([`Access`]) — guards
//! everything but the OpenAPI document; corrections name the version read (in the body, and
//! optionally as `If-Match`), and a stale one is answered 412.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Extension, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::mcp::MemoryTools;
use crate::metrics::{Metrics, observe};
use crate::service::{ApiError, ApiResult, Service};
use crate::{openapi, wire};

/// Who a request acts as once its bearer token is checked: the service (store, read chain,
/// speaker) it is bound to, and whether it may decide what waits for a person.
#[derive(Debug, Clone)]
pub struct Binding {
    pub service: Arc<Service>,
    pub role: Role,
}

/// What a binding may do beyond reading and writing memory as its service's speaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reads and writes memory; nothing more.
    Agent,
    /// A person's console: also lists, confirms and rejects what waits for a person in its read
    /// chain, and forgets anything its chain writes.
    Operator,
}

/// Turns operator-issued bearer tokens into bindings. The composition root implements it (it
/// opens each tenant's store); this crate cannot open a store.
#[async_trait::async_trait]
pub trait Tokens: Send + Sync + std::fmt::Debug {
    /// The binding `token` was issued for; `None` for a token unknown or revoked.
    async fn bind(&self, token: &str) -> Result<Option<Binding>>;

    /// The stores open now, each with its tenant's name (for `/metrics`).
    async fn open_stores(&self) -> Vec<(String, Arc<arbor_app::Arbor>)>;

    /// Whether tokens can be bound now (for `/readyz`): the token book is readable.
    async fn ready(&self) -> Result<()>;
}

/// Who may call the server, and as what.
#[derive(Debug, Clone)]
pub enum Access {
    /// Anyone who reaches it (it listens on loopback): the one binding.
    Open(Binding),
    /// The holder of one token: the one binding.
    Token { token: String, binding: Binding },
    /// The holder of any token [`Tokens`] knows: the binding that token was issued for. The
    /// server's own `admin` token, if any, reads `/metrics` (which names every tenant) and
    /// nothing else.
    Tenants { tokens: Arc<dyn Tokens>, admin: Option<String> },
}

/// What to serve and how.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub mcp: bool,
    pub api: bool,
    pub max_body_bytes: usize,
    pub host: SocketAddr,
    /// More `Host` names to serve, besides loopback and the listening address.
    pub allowed_hosts: Vec<String>,
    /// How many MCP sessions may be open at once.
    pub max_mcp_sessions: usize,
    /// How long a client may take to send a request's headers ([`HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request's body ([`BODY_READ_TIMEOUT`]).
    pub body_read_timeout: Duration,
    /// The store owner's token on a single-binding server: it opens the memory centre's
    /// operator endpoints (review, health, settings…), which the server's own binding does
    /// not, even on loopback — an agent that can reach the port is not the owner.
    pub operator_token: Option<String>,
}

impl HttpOptions {
    /// Every `Host` value served: loopback names and the listening address, with and without
    /// the port, and the configured extra names.
    fn hosts(&self) -> Vec<String> {
        let port = self.host.port();
        let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()];
        let ip = self.host.ip();
        if !ip.is_unspecified() {
            names.push(if ip.is_ipv6() { format!("[{ip}]") } else { ip.to_string() });
        }
        names.extend(self.allowed_hosts.iter().cloned());
        let with_ports: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        names.extend(with_ports);
        names
    }
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

pub(crate) fn reply<T: Serialize>(result: ApiResult<T>) -> Response {
    match result {
        Ok(value) => json(&value),
        Err(error) => error.into_response(),
    }
}

/// A JSON request body, or the reason it is not one.
pub(crate) fn body<T: DeserializeOwned>(headers: &HeaderMap, bytes: Result<Bytes, BytesRejection>) -> ApiResult<T> {
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
pub(crate) fn optional_body<T: DeserializeOwned + Default>(
    headers: &HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult<T> {
    let untyped = headers.get(header::CONTENT_TYPE).is_none();
    match &bytes {
        // No body at all (and no claim of one): the defaults. A form post always has a type.
        Ok(b) if untyped && b.is_empty() => Ok(T::default()),
        _ => body(headers, bytes),
    }
}

pub(crate) fn query<T>(query: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    query.map(|Query(q)| q).map_err(|e| ApiError::invalid(format!("query string: {}", e.body_text())))
}

fn etag(version: u32) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{version}\"")).unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

/// The version an `If-Match` header names: the strong tag `"3"` a read returned. `*` (any
/// current version) and an empty value add nothing to the body's `version`; a weak tag cannot
/// guard a write.
fn if_match(headers: &HeaderMap) -> ApiResult<Option<u32>> {
    let Some(value) = headers.get(header::IF_MATCH) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ApiError::invalid("If-Match is not ASCII"))?.trim();
    if text == "*" || text.is_empty() {
        return Ok(None);
    }
    let version = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).and_then(|t| t.parse::<u32>().ok());
    version.filter(|&v| v >= 1).map(Some).ok_or_else(|| {
        ApiError::invalid(format!("If-Match must be one strong ETag from a read, like \"3\", not {text:?}"))
    })
}

async fn retrieve(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.retrieve(input).await),
        Err(e) => e.into_response(),
    }
}

async fn search(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.search(input).await),
        Err(e) => e.into_response(),
    }
}

async fn upsert(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.save(input).await),
        Err(e) => e.into_response(),
    }
}

async fn upsert_batch(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.save_batch(input).await),
        Err(e) => e.into_response(),
    }
}

async fn messages(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.save_messages(input).await),
        Err(e) => e.into_response(),
    }
}

async fn correct(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let run = async {
        let input: wire::CorrectInput = body(&headers, bytes)?;
        s.service.correct(input, if_match(&headers)?, s.role == Role::Operator).await
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

async fn forget(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    match body(&headers, bytes) {
        Ok(input) => reply(s.service.forget(input, s.role == Role::Operator).await),
        Err(e) => e.into_response(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetParams {
    id: String,
}

async fn get_node(Extension(s): Extension<Binding>, params: Result<Query<GetParams>, QueryRejection>) -> Response {
    let input = match query(params) {
        Ok(GetParams { id }) => wire::ReadInput { id },
        Err(e) => return e.into_response(),
    };
    match s.service.read(input, s.role == Role::Operator).await {
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

async fn browse(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::BrowseInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.browse(input).await),
        Err(e) => e.into_response(),
    }
}

async fn catalog(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::CatalogInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.catalog(input).await),
        Err(e) => e.into_response(),
    }
}

async fn daily(Extension(s): Extension<Binding>, params: Result<Query<wire::DailyInput>, QueryRejection>) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.daily(input).await),
        Err(e) => e.into_response(),
    }
}

async fn profile(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::ProfileInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.profile(input).await),
        Err(e) => e.into_response(),
    }
}

async fn dream(Extension(s): Extension<Binding>, params: Result<Query<wire::DreamInput>, QueryRejection>) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.dream(input).await),
        Err(e) => e.into_response(),
    }
}

async fn status(Extension(s): Extension<Binding>) -> Response {
    reply(s.service.status().await)
}

async fn sync(Extension(s): Extension<Binding>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    match optional_body(&headers, bytes) {
        Ok(input) => reply(s.service.sync(input).await),
        Err(e) => e.into_response(),
    }
}

/// Reviewing, and everything else the memory centre does beyond the agent API, is a person's
/// decision: only an operator's token may.
pub(crate) fn operator(binding: &Binding) -> ApiResult<&Service> {
    match binding.role {
        Role::Operator => Ok(&binding.service),
        Role::Agent => Err(ApiError::new(
            403,
            "forbidden",
            "this needs an operator's token: the one `arbor serve` printed for its memory centre, \
             `--operator-token`, or `arbor tokens create --operator`",
        )),
    }
}

async fn review_list(Extension(s): Extension<Binding>) -> Response {
    match operator(&s) {
        Ok(service) => reply(service.pending().await),
        Err(e) => e.into_response(),
    }
}

async fn review_confirm(s: Extension<Binding>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    review(s, headers, bytes, wire::Decision::Confirm).await
}

async fn review_reject(s: Extension<Binding>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Response {
    review(s, headers, bytes, wire::Decision::Reject).await
}

/// A review decision, for an operator's token only.
async fn review(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
    decision: wire::Decision,
) -> Response {
    let run = async { operator(&s)?.review(body(&headers, bytes)?, decision).await };
    reply(run.await)
}

async fn openapi_document() -> Response {
    // The same bytes as the checked-in crates/server/openapi.json.
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], openapi::canonical_document())
        .into_response()
}

async fn not_found() -> Response {
    ApiError::new(404, "not_found", "no such endpoint; see /openapi.json").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(405, "method_not_allowed", "this endpoint does not take that method; see /openapi.json")
        .into_response()
}

/// Compares digests without an early exit, so response time reveals neither how much of a
/// guess matched nor the token's length.
fn same_secret(presented: &[u8], expected_digest: &[u8; 32]) -> bool {
    let digest: [u8; 32] = Sha256::digest(presented).into();
    digest.iter().zip(expected_digest).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer token a request presents, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, token) = v.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    })
}

/// [`Access`] as the gate holds it: each token as its digest. A single-binding server may also
/// know its owner's token ([`HttpOptions::operator_token`]): a request presenting it is the
/// same binding as an operator's.
#[derive(Debug)]
enum Gate {
    Open { binding: Binding, operator: Option<[u8; 32]> },
    Token { digest: [u8; 32], binding: Binding, operator: Option<[u8; 32]> },
    Tenants { tokens: Arc<dyn Tokens>, admin: Option<[u8; 32]> },
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Gate {
    fn new(access: Access, operator_token: Option<&str>) -> Gate {
        let operator = operator_token.map(digest);
        match access {
            Access::Open(binding) => Gate::Open { binding, operator },
            Access::Token { token, binding } => Gate::Token { digest: digest(&token), binding, operator },
            // A tenant's operator is named in the token book, per tenant.
            Access::Tenants { tokens, admin } => Gate::Tenants { tokens, admin: admin.as_deref().map(digest) },
        }
    }
}

impl Gate {
    /// The stores this server has open, labelled for `/metrics`.
    async fn stores(&self) -> Vec<(String, Arc<arbor_app::Arbor>)> {
        match self {
            Gate::Open { binding, .. } | Gate::Token { binding, .. } => {
                vec![("default".to_owned(), binding.service.shared_arbor())]
            }
            Gate::Tenants { tokens, .. } => tokens.open_stores().await,
        }
    }

    /// Whether requests can be answered: the store (or the token book) responds.
    async fn ready(&self) -> Result<()> {
        match self {
            Gate::Open { binding, .. } | Gate::Token { binding, .. } => {
                binding.service.arbor().ports().store.namespaces().await?;
                Ok(())
            }
            Gate::Tenants { tokens, .. } => tokens.ready().await,
        }
    }
}

/// The gate and the counts, for the operator's endpoints.
#[derive(Debug)]
struct Monitor {
    gate: Arc<Gate>,
    metrics: Arc<Metrics>,
}

/// `/metrics`: for whoever passes a single-binding server's gate (the person who runs it), and
/// on a multi-tenant server for the server's own administrator token only (`--token`): it
/// names every tenant and counts everyone's requests, which no tenant may see.
async fn metrics(State(monitor): State<Arc<Monitor>>, headers: HeaderMap) -> Response {
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
async fn healthz() -> Response {
    axum::Json(serde_json::json!({ "status": "ok" })).into_response()
}

/// `/readyz`: the store (or the token book) answers too; 503 while it does not.
async fn readyz(State(monitor): State<Arc<Monitor>>) -> Response {
    match monitor.gate.ready().await {
        Ok(()) => axum::Json(serde_json::json!({ "status": "ready" })).into_response(),
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "not ready");
            ApiError::new(503, "unavailable", "the store does not answer yet").into_response()
        }
    }
}

/// Binds each request to what its token was issued for ([`Binding`], in the request's
/// extensions, where handlers and MCP tools take it from); a request with no binding goes no
/// further.
async fn authenticate(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let presented = bearer(request.headers());
    let binding = match &*gate {
        Gate::Open { binding, operator } | Gate::Token { binding, operator, .. }
            if presented.zip(operator.as_ref()).is_some_and(|(p, owner)| same_secret(p.as_bytes(), owner)) =>
        {
            Some(Binding { role: Role::Operator, ..binding.clone() })
        }
        Gate::Open { binding, .. } => Some(binding.clone()),
        Gate::Token { digest, binding, .. } => {
            presented.filter(|presented| same_secret(presented.as_bytes(), digest)).map(|_| binding.clone())
        }
        Gate::Tenants { tokens, .. } => match presented {
            Some(presented) => match tokens.bind(presented).await {
                Ok(binding) => binding,
                Err(error) => {
                    tracing::error!(error = %format!("{error:#}"), "could not open what a token is bound to");
                    return ApiError::new(503, "unavailable", "the server could not open this token's store; retry")
                        .into_response();
                }
            },
            None => None,
        },
    };
    let Some(binding) = binding else {
        return ApiError::new(401, "unauthorized", "a valid bearer token is required").into_response();
    };
    let role = binding.role;
    request.extensions_mut().insert(binding);
    match role {
        // What the owner does here is audited as the owner's, not as the server's agent.
        Role::Operator => arbor_app::acting_as(OPERATOR_ACTOR, next.run(request)).await,
        Role::Agent => next.run(request).await,
    }
}

/// Who the audit log names for a request made with an operator's token.
const OPERATOR_ACTOR: &str = "operator:http";

/// The names a request may address the server by.
#[derive(Debug)]
struct KnownHosts {
    /// Every `Host` value served ([`HttpOptions::hosts`]).
    hosts: Vec<String>,
    /// The names configured with `--allowed-host`: a reverse proxy's, reached by browsers on
    /// their scheme's default port, which is not the one this server listens on.
    proxied: Vec<String>,
}

impl KnownHosts {
    /// Whether a browser at `origin` is this server's own page: its host and port are served
    /// here, or it is a configured name on its scheme's default port (the proxy in front).
    fn admits_origin(&self, origin: &str) -> bool {
        let Some(authority) = origin_authority(origin) else { return false };
        let served = |name: &str| self.hosts.iter().any(|known| known.eq_ignore_ascii_case(name));
        let proxied = |name: &str| self.proxied.iter().any(|known| known.eq_ignore_ascii_case(name));
        served(&authority.with_port) || (authority.on_default_port && proxied(&authority.host))
    }
}

/// Serves only known `Host` names, and refuses browser requests sent from another origin: a
/// page elsewhere can neither rebind a domain name to this server nor post to it. A header
/// that decides who may ask (`Host`, `Origin`, `Authorization`) must come once: with two, a
/// proxy and this server could each read a different one.
async fn require_known_host(State(known): State<Arc<KnownHosts>>, request: Request, next: Next) -> Response {
    let hosts = &known.hosts;
    for name in [header::HOST, header::ORIGIN, header::AUTHORIZATION] {
        if request.headers().get_all(&name).iter().count() > 1 {
            return ApiError::invalid(format!("the request has more than one {name} header")).into_response();
        }
    }
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !hosts.iter().any(|known| known.eq_ignore_ascii_case(host)) {
        return ApiError::new(403, "forbidden", "this server does not answer to that Host name (see --allowed-host)")
            .into_response();
    }
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|origin| known.admits_origin(origin))
    {
        return ApiError::new(403, "forbidden", "requests from other origins are refused").into_response();
    }
    next.run(request).await
}

/// An `Origin`'s host, and host with port.
#[derive(Debug, PartialEq, Eq)]
struct OriginAuthority {
    host: String,
    /// `host:port`, the port the scheme's default when the origin leaves it out.
    with_port: String,
    on_default_port: bool,
}

/// An `Origin`'s authority (`scheme://host[:port]`), for comparing with the names served:
/// `http://localhost` is port 80, not the server's. `None` for what is not such an origin
/// (`null`, a bare name, another scheme).
fn origin_authority(origin: &str) -> Option<OriginAuthority> {
    let (scheme, authority) = origin.split_once("://")?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
        return None;
    }
    // A port follows the last colon, unless that colon is inside an IPv6 literal.
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse::<u16>().ok()?),
        _ => (authority, default_port),
    };
    Some(OriginAuthority {
        host: host.to_owned(),
        with_port: format!("{host}:{port}"),
        on_default_port: port == default_port,
    })
}

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
async fn read_body_strictly(State(limits): State<Arc<BodyLimits>>, request: Request, next: Next) -> Response {
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
struct BodyLimits {
    read_timeout: Duration,
    max_bytes: usize,
}

/// How long an MCP session may sit idle before it is closed (a client that comes back later
/// starts a new one).
pub(crate) const MCP_SESSION_IDLE: Duration = Duration::from_secs(600);

/// The open MCP sessions and how many may be.
#[derive(Debug)]
struct SessionLimit {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    /// Requests opening a session right now: each counts against the limit until its session
    /// is in `sessions`, so many opened at once cannot all pass the same check.
    opening: std::sync::atomic::AtomicUsize,
    /// The token (its digest) each session was opened with: a session is its opener's, and a
    /// request with another token, even a valid one, cannot use, read or close it.
    owners: std::sync::Mutex<std::collections::HashMap<String, [u8; 32]>>,
}

/// One request opening a session, counted in [`SessionLimit::opening`] while it lives.
struct Opening<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Refuses a request that would open an MCP session (one without `Mcp-Session-Id`) while the
/// limit is reached: 503, with the way out.
async fn limit_mcp_sessions(State(limit): State<Arc<SessionLimit>>, request: Request, next: Next) -> Response {
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

/// The router for `options`, for the callers `access` admits; `stop` ends the MCP sessions it
/// serves.
pub(crate) fn router(access: Access, options: &HttpOptions, stop: CancellationToken) -> Router {
    let mut guarded = Router::new();
    if options.api {
        let api = Router::new()
            .route("/retrieve", post(retrieve))
            .route("/search", post(search))
            .route("/get", get(get_node))
            .route("/upsert", post(upsert))
            .route("/upsert_batch", post(upsert_batch))
            .route("/messages", post(messages))
            .route("/correct", post(correct))
            .route("/forget", post(forget))
            .route("/browse", get(browse))
            .route("/catalog", get(catalog))
            .route("/dream", get(dream))
            .route("/daily", get(daily))
            .route("/profile", get(profile))
            .route("/status", get(status))
            .route("/sync", post(sync))
            .route("/review", get(review_list))
            .route("/review/confirm", post(review_confirm))
            .route("/review/reject", post(review_reject))
            .merge(crate::centre::operator_routes())
            .method_not_allowed_fallback(method_not_allowed);
        guarded = guarded.nest("/api/v1/memory", api);
    }
    if options.mcp {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.hosts())
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_cancellation_token(stop);
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(MCP_SESSION_IDLE);
        let sessions = Arc::new(sessions);
        let mcp = StreamableHttpService::new(|| Ok(MemoryTools::per_request()), sessions.clone(), config);
        let limit = SessionLimit {
            sessions,
            max: options.max_mcp_sessions,
            opening: Default::default(),
            owners: Default::default(),
        };
        let mcp = Router::new()
            .fallback_service(mcp)
            .layer(middleware::from_fn_with_state(Arc::new(limit), limit_mcp_sessions));
        guarded = guarded.nest("/mcp", mcp);
    }
    // Inside the token check, so nobody without the token gets a body read or held.
    let body_limits = BodyLimits { read_timeout: options.body_read_timeout, max_bytes: options.max_body_bytes };
    guarded = guarded.layer(middleware::from_fn_with_state(Arc::new(body_limits), read_body_strictly));
    let gate = Arc::new(Gate::new(access, options.operator_token.as_deref()));
    let monitor = Arc::new(Monitor { gate: gate.clone(), metrics: Arc::new(Metrics::default()) });
    guarded = guarded.layer(middleware::from_fn_with_state(gate, authenticate));
    // Probes need no token and say nothing but "up" and "ready"; metrics check their own.
    let mut app = guarded
        .route("/metrics", get(metrics).with_state(monitor.clone()))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz).with_state(monitor.clone()));
    if options.api {
        app = app.route("/openapi.json", get(openapi_document)).merge(crate::centre::page_routes());
    }
    app.fallback(not_found)
        .layer(middleware::from_fn_with_state(
            Arc::new(KnownHosts { hosts: options.hosts(), proxied: options.allowed_hosts.clone() }),
            require_known_host,
        ))
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .layer(middleware::from_fn_with_state(monitor.metrics.clone(), observe))
}

/// How long a client may take to send a request's headers, and how long an idle keep-alive
/// connection is held open waiting for the next request: past it, the connection is closed,
/// so clients that open connections and send nothing cannot hold them.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How many connections are served at once; further clients wait in the listen backlog.
pub(crate) const MAX_CONNECTIONS: usize = 1024;

/// How long a stop waits for requests in flight before it closes their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves until the process is stopped: Ctrl-C or SIGTERM end open MCP sessions and then
/// the server, cleanly. Every connection has `options.header_read_timeout` (by default
/// [`HEADER_READ_TIMEOUT`]) to send each request's headers, and at most [`MAX_CONNECTIONS`]
/// are open at once.
pub async fn serve_http(listener: tokio::net::TcpListener, access: Access, options: HttpOptions) -> Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let stop = CancellationToken::new();
    let app = router(access, &options, stop.clone());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(options.header_read_timeout).keep_alive(true);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let signalled = shutdown_signal();
    tokio::pin!(signalled);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot?,
            () = &mut signalled => break,
        };
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A connection that failed before it was accepted (reset, out of file
                // descriptors): the server goes on.
                Err(error) => {
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut signalled => break,
        };
        let connection =
            http.serve_connection(TokioIo::new(stream), hyper_util::service::TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(slot);
        });
    }
    stop.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("requests still in flight after {SHUTDOWN_GRACE:?}; closing their connections");
    }
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {},
                    _ = terminate.recv() => {},
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
