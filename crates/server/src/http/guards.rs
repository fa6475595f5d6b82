//! The gates in front of every route: the bearer token, known `Host` names and same-origin
//! browser requests.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::port_failure::PortFailure;
use crate::service::ApiError;
use arbor_ports::with_causes;

use crate::binding::{Access, Binding, Role, Tokens};
/// Compares digests without an early exit, so response time reveals neither how much of a
/// guess matched nor the token's length.
pub(super) fn same_secret(presented: &[u8], expected_digest: &[u8; 32]) -> bool {
    let digest: [u8; 32] = Sha256::digest(presented).into();
    digest.iter().zip(expected_digest).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer token a request presents, if any.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, token) = v.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    })
}

/// [`Access`] as the gate holds it: each token as its digest. A single-binding server may also
/// know its owner's token ([`HttpOptions::operator_token`]): a request presenting it is the
/// same binding as an operator's.
#[derive(Debug)]
pub(super) enum Gate {
    Open { binding: Binding, operator: Option<[u8; 32]> },
    Token { digest: [u8; 32], binding: Binding, operator: Option<[u8; 32]> },
    Tenants { tokens: Arc<dyn Tokens>, admin: Option<[u8; 32]> },
}

pub(super) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Gate {
    pub(super) fn new(access: Access, operator_token: Option<&str>) -> Gate {
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
    pub(super) async fn stores(&self) -> Vec<(String, Arc<arbor_app::Arbor>)> {
        match self {
            Gate::Open { binding, .. } | Gate::Token { binding, .. } => {
                vec![("default".to_owned(), binding.service.shared_arbor())]
            }
            Gate::Tenants { tokens, .. } => tokens.open_stores().await,
        }
    }

    /// Whether requests can be answered: the store (or the token book) responds.
    pub(super) async fn ready(&self) -> Result<(), PortFailure> {
        match self {
            Gate::Open { binding, .. } | Gate::Token { binding, .. } => {
                binding.service.arbor().ports().store.namespaces().await?;
                Ok(())
            }
            Gate::Tenants { tokens, .. } => tokens.ready().await,
        }
    }
}

/// Binds each request to what its token was issued for ([`Binding`], in the request's
/// extensions, where handlers and MCP tools take it from); a request with no binding goes no
/// further.
pub(super) async fn authenticate(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
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
                    tracing::error!(error = %with_causes(&*error), "could not open what a token is bound to");
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
pub(super) const OPERATOR_ACTOR: &str = "operator:http";

/// The names a request may address the server by.
#[derive(Debug)]
pub(super) struct KnownHosts {
    /// Every `Host` value served ([`HttpOptions::hosts`]).
    pub(super) hosts: Vec<String>,
    /// The names configured with `--allowed-host`: a reverse proxy's, reached by browsers on
    /// their scheme's default port, which is not the one this server listens on.
    pub(super) proxied: Vec<String>,
}

impl KnownHosts {
    /// Whether a browser at `origin` is this server's own page: its host and port are served
    /// here, or it is a configured name on its scheme's default port (the proxy in front).
    pub(super) fn admits_origin(&self, origin: &str) -> bool {
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
pub(super) async fn require_known_host(State(known): State<Arc<KnownHosts>>, request: Request, next: Next) -> Response {
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
pub(super) struct OriginAuthority {
    pub(super) host: String,
    /// `host:port`, the port the scheme's default when the origin leaves it out.
    pub(super) with_port: String,
    pub(super) on_default_port: bool,
}

/// An `Origin`'s authority (`scheme://host[:port]`), for comparing with the names served:
/// `http://localhost` is port 80, not the server's. `None` for what is not such an origin
/// (`null`, a bare name, another scheme).
pub(super) fn origin_authority(origin: &str) -> Option<OriginAuthority> {
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
