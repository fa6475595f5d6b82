//! The app's error type: port failures, refused input, and refused state changes, each with a
//! message a user can act on.

use arbor_domain::event::EventError;
use arbor_domain::lifecycle::IllegalTransition;
use arbor_domain::read_chain::ReadChainError;
use arbor_domain::supersession::CorrectionRefusal;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Port(#[from] arbor_ports::Error),
    #[error("invalid event: {0}")]
    InvalidEvent(#[from] EventError),
    #[error(transparent)]
    ReadChain(#[from] ReadChainError),
    #[error(transparent)]
    Transition(#[from] IllegalTransition),
    /// The caller's request cannot be carried out as asked; the message says why and what would.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// Something the engine or its store should never hold or do: stored data that breaks an
    /// invariant, an adapter that broke its contract. Not the caller's doing (HTTP 500); the
    /// message is for the operator's log.
    #[error("internal error: {0}")]
    Internal(String),
    /// A correction that names a version other than the current one, or history.
    #[error(transparent)]
    Correction(#[from] CorrectionRefusal),
    /// The caller reads this layer but writes only its own.
    #[error("this memory belongs to {namespace}, which this context reads but does not write")]
    ReadOnlyLayer { namespace: String },
    /// The caller writes this layer, but only a person may take its memories away: its
    /// approval policy holds what is written there for a person, so what a person confirmed
    /// is not an agent's to forget.
    #[error(
        "only a person may forget memories in {namespace} ({id}): with an operator's token, or `arbor forget` on the store"
    )]
    NeedsPerson { namespace: String, id: String },
    /// Well asked, but what it names is not in a state it applies to (a decision on what is
    /// not a suggestion, a conflict where there is none): the message says what it is.
    #[error("{0}")]
    NotNow(String),
    /// The store kept changing under us; the operation was retried and gave up.
    #[error("gave up after {attempts} attempts: the store kept changing ({last})")]
    Contention { attempts: u32, last: String },
}

impl AppError {
    /// A stable machine-readable code for JSON output and exit statuses.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Port(e) => e.code(),
            AppError::InvalidEvent(_) | AppError::InvalidRequest(_) => "invalid",
            AppError::ReadChain(_) | AppError::ReadOnlyLayer { .. } | AppError::NeedsPerson { .. } => "forbidden",
            AppError::Correction(refusal) if refusal.is_stale() => "stale_version",
            AppError::Correction(_) => "illegal_transition",
            AppError::Transition(_) | AppError::NotNow(_) => "illegal_transition",
            AppError::Contention { .. } => "contention",
            AppError::Internal(_) => "internal",
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, AppError::Port(arbor_ports::Error::NotFound { .. }))
    }
}

pub type AppResult<T> = Result<T, AppError>;
