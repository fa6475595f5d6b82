//! Memory as tools for agents, over MCP (stdio or streamable HTTP) and over a JSON HTTP API
//! with its OpenAPI document. Only this crate knows MCP and HTTP servers; it turns requests
//! into app calls and app results into the wire contract ([`wire`]).
//!
//! Trusted binding: a [`Service`] is made from an opened `Arbor`, the read chain its caller
//! resolved from its own flags (or from the operator's record of a bearer token, [`Tokens`]),
//! and who speaks. No request can name a namespace, a chain or a
//! path; an id outside the chain is answered exactly like an id that does not exist. This
//! crate depends on the app alone, so nothing that answers a request can open a store or pick
//! an adapter.

mod binding;
mod centre;
mod console;
mod http;
mod mcp;
mod metrics;
mod openapi;
mod port_failure;
mod request;
mod serve_error;
mod service;
mod settings;
mod wire;

pub use binding::{Access, Binding, Role, Tokens};
pub use http::{BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT, HttpOptions, serve_http};
pub use mcp::serve_stdio;
pub use port_failure::PortFailure;
pub use serve_error::ServeError;
pub use service::Service;
pub use settings::{SettingsFile, SettingsRefused};

/// The largest request body either server accepts, unless configured otherwise.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
