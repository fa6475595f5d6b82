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
//!
//! The rooms: `handlers` (one per endpoint), `guards` (token, host, origin), `limits` (body,
//! time, MCP sessions), `probes` (metrics, health, readiness); this file builds the router and
//! runs the serve loop.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::MemoryTools;
use crate::metrics::{Metrics, observe};
use crate::serve_error::ServeError;

mod guards;
mod handlers;
mod limits;
mod probes;

pub use limits::BODY_READ_TIMEOUT;

use self::guards::{Gate, KnownHosts, authenticate, require_known_host};
use self::handlers::{
    browse, catalog, correct, daily, dream, forget, get_node, messages, method_not_allowed, not_found,
    openapi_document, profile, retrieve, review_confirm, review_list, review_reject, search, status, sync, upsert,
    upsert_batch,
};
use self::limits::{BodyLimits, MCP_SESSION_IDLE, SessionLimit, limit_mcp_sessions, read_body_strictly};
use self::probes::{Monitor, healthz, metrics, readyz};
use crate::binding::Access;
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
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    access: Access,
    options: HttpOptions,
) -> Result<(), ServeError> {
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
