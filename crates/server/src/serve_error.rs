//! Why serving stopped other than by being asked to: what `serve_http` and `serve_stdio`
//! return, so a caller can tell a client that never spoke MCP from a server that failed.

/// Why a server stopped on its own.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client on stdin/stdout did not complete MCP's initialization.
    #[error("MCP initialization failed: {0}")]
    McpInitialization(String),
    /// The MCP session's task ended abnormally (it panicked or was cancelled).
    #[error("the MCP session ended abnormally: {0}")]
    McpSession(#[from] tokio::task::JoinError),
    /// The limit on open connections was closed, so no connection can be accepted.
    #[error("the connection limit was closed; no connection can be accepted")]
    ConnectionsClosed(#[from] tokio::sync::AcquireError),
}
