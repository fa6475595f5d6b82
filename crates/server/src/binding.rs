//! Who a request acts as: the service (store, read chain, speaker) a bearer token binds it to,
//! with its role, and how the server was told to bind requests ([`Access`]).

use std::sync::Arc;

use crate::port_failure::PortFailure;
use crate::service::{ApiError, ApiResult, Service};

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
    async fn bind(&self, token: &str) -> Result<Option<Binding>, PortFailure>;

    /// The stores open now, each with its tenant's name (for `/metrics`).
    async fn open_stores(&self) -> Vec<(String, Arc<arbor_app::Arbor>)>;

    /// Whether tokens can be bound now (for `/readyz`): the token book is readable.
    async fn ready(&self) -> Result<(), PortFailure>;
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
