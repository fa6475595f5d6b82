//! What can go wrong with a model, and how it reaches the ports: every model failure becomes a
//! backend error, which the app answers by falling back to the deterministic path.

use std::path::PathBuf;
use std::time::Duration;

/// A model adapter's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The model directory is missing a file or holds something unreadable.
    #[error("the model at {dir} cannot be used: {reason}")]
    ModelFiles { dir: PathBuf, reason: String },
    /// Installing a packaged model failed.
    #[error("installing {package} failed: {reason}")]
    Install { package: String, reason: String },
    /// The model ran and failed.
    #[error("the model failed: {0}")]
    Inference(String),
    /// The endpoint could not be reached, or the connection broke.
    #[error("{url} could not be reached: {reason}")]
    Unreachable { url: String, reason: String },
    /// No answer within the configured time.
    #[error("{url} did not answer within {timeout:?}")]
    Timeout { url: String, timeout: Duration },
    /// The endpoint answered with an error status (after any retries).
    #[error("{url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    /// The answer is not what was asked for: not JSON, the wrong shape, truncated, or naming
    /// something it was not offered.
    #[error("unusable answer: {0}")]
    Malformed(String),
    /// The configuration is invalid.
    #[error("invalid model configuration: {0}")]
    Config(String),
}

#[cfg(feature = "openai")]
impl ModelError {
    pub(crate) fn malformed(reason: impl Into<String>) -> ModelError {
        ModelError::Malformed(reason.into())
    }
}

#[cfg(feature = "local-embed")]
impl From<candle_core::Error> for ModelError {
    fn from(error: candle_core::Error) -> ModelError {
        ModelError::Inference(error.to_string())
    }
}

/// A model failure as the ports report it.
#[cfg(any(feature = "local-embed", feature = "openai"))]
pub(crate) fn to_port_error(backend: &'static str, error: ModelError) -> arbor_ports::Error {
    match error {
        ModelError::Config(reason) => arbor_ports::Error::invalid("model configuration", reason),
        other => arbor_ports::Error::backend(backend, other),
    }
}
