//! The one error type every port returns: backend-neutral and structured, so the app can
//! react to what happened (a conflict, a missing node, a broken body) without knowing which
//! backend it talks to. Adapters keep their own error enums and convert at the boundary.

/// A boxed error from a backend library, kept as the source of [`Error::Backend`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Nothing by that id is visible to the caller. Deliberately says nothing about whether it
    /// exists outside the caller's scope.
    #[error("{what} {id} was not found")]
    NotFound { what: &'static str, id: String },

    /// A precondition of an atomic change failed: the record changed since it was read. The
    /// whole change set was rolled back. HTTP 412 semantics.
    #[error("{what} {id} has changed: expected {expected}, found {found}")]
    Conflict { what: &'static str, id: String, expected: String, found: String },

    /// A record with that identity already exists. The whole change set was rolled back.
    #[error("{what} {id} already exists")]
    AlreadyExists { what: &'static str, id: String },

    /// The request itself is malformed.
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },

    /// The backend does not do this.
    #[error("{operation} is not supported by the {backend} backend")]
    Unsupported { operation: &'static str, backend: &'static str },

    /// Stored data failed verification (a body's SHA-256, a row that does not parse).
    #[error("integrity check failed for {what} {id}: {detail}")]
    Integrity { what: &'static str, id: String, detail: String },

    /// The store's schema is newer than this build understands.
    #[error("the {backend} store has schema version {found}; this build understands up to {supported}; upgrade arbor")]
    SchemaTooNew { backend: &'static str, found: u32, supported: u32 },

    /// A transient failure (connection lost, lock timeout): the operation may be retried.
    #[error("the {backend} backend is unavailable")]
    Unavailable {
        backend: &'static str,
        #[source]
        source: BoxError,
    },

    /// Any other backend failure.
    #[error("the {backend} backend failed")]
    Backend {
        backend: &'static str,
        #[source]
        source: BoxError,
    },
}

impl Error {
    pub fn not_found(what: &'static str, id: impl ToString) -> Error {
        Error::NotFound { what, id: id.to_string() }
    }

    /// A compare-and-set that found `found` where the caller expected `expected`.
    pub fn conflict(what: &'static str, id: impl ToString, expected: impl ToString, found: impl ToString) -> Error {
        Error::Conflict { what, id: id.to_string(), expected: expected.to_string(), found: found.to_string() }
    }

    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Error {
        Error::Invalid { what, reason: reason.into() }
    }

    pub fn backend(backend: &'static str, source: impl Into<BoxError>) -> Error {
        Error::Backend { backend, source: source.into() }
    }

    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflict { .. } | Error::AlreadyExists { .. })
    }

    /// A stable machine-readable code, for JSON errors and exit codes.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NotFound { .. } => "not_found",
            Error::Conflict { .. } => "precondition_failed",
            Error::AlreadyExists { .. } => "already_exists",
            Error::Invalid { .. } => "invalid",
            Error::Unsupported { .. } => "unsupported",
            Error::Integrity { .. } => "integrity",
            Error::SchemaTooNew { .. } => "schema_too_new",
            Error::Unavailable { .. } => "unavailable",
            Error::Backend { .. } => "backend",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
