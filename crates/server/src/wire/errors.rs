//! The body of every refusal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An error, with a stable machine-readable code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorDetail {
    /// One of: invalid_request, unauthorized, forbidden, not_found, method_not_allowed,
    /// precondition_failed, payload_too_large, unsupported_media_type, conflict, unavailable,
    /// internal.
    pub code: String,
    pub message: String,
}
