//! An error a client can act on, and how each of the app's errors becomes one.

use arbor_app::AppError;

use crate::wire;
use arbor_ports::with_causes;

/// An error a client can act on: an HTTP status, a stable code, and a message that never
/// says whether something outside the caller's scope exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub(crate) fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "invalid_request", message)
    }

    pub(crate) fn body(&self) -> wire::ErrorBody {
        wire::ErrorBody { error: wire::ErrorDetail { code: self.code.to_owned(), message: self.message.clone() } }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl From<AppError> for ApiError {
    fn from(error: AppError) -> ApiError {
        use arbor_ports::Error as Port;
        match &error {
            AppError::Port(Port::NotFound { .. }) => ApiError::new(404, "not_found", error.to_string()),
            AppError::Port(Port::Invalid { .. }) | AppError::InvalidEvent(_) | AppError::InvalidRequest(_) => {
                ApiError::invalid(error.to_string())
            }
            AppError::Correction(refusal) if refusal.is_stale() => {
                ApiError::new(412, "precondition_failed", error.to_string())
            }
            AppError::Correction(_)
            | AppError::Transition(_)
            | AppError::NotNow(_)
            | AppError::Port(Port::Conflict { .. } | Port::AlreadyExists { .. }) => {
                ApiError::new(409, "conflict", error.to_string())
            }
            AppError::ReadOnlyLayer { .. } | AppError::NeedsPerson { .. } | AppError::ReadChain(_) => {
                ApiError::new(403, "forbidden", error.to_string())
            }
            // A file changed on disk since it was written (edited by hand): the store's, not the
            // caller's, to settle; its path stays in the log.
            AppError::Port(Port::Integrity { .. }) => ApiError::new(
                409,
                "conflict",
                "this memory's file changed on disk since it was written; the store's owner adopts the edit \
                 (`arbor fsck --adopt-edits`, or Pending in the memory centre) or puts the file back",
            ),
            AppError::Contention { .. } | AppError::Port(Port::Unavailable { .. }) => {
                ApiError::new(503, "unavailable", error.to_string())
            }
            _ => {
                // Storage internals (paths, SQL) stay in the server's log.
                tracing::error!(error = %with_causes(&error), "request failed");
                ApiError::new(500, "internal", "the server could not complete the request; see its log")
            }
        }
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;
