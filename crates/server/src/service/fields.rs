//! Checks on the fields of wire inputs, each refusal naming its field, and the wire mirror of
//! the app's own serialization.

use arbor_domain::event::Event;
use arbor_domain::model::{MAX_TITLE_CHARS, MemoryKind, TreeId};
use arbor_domain::time::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::errors::{ApiError, ApiResult};
use crate::wire;

/// Reads the app's serialization of `value` as the wire mirror `T`.
pub(crate) fn mirror<T: DeserializeOwned>(value: &impl Serialize) -> ApiResult<T> {
    let failed = |error: serde_json::Error| {
        tracing::error!(%error, "a result does not fit its wire type");
        ApiError::new(500, "internal", "the server could not complete the request; see its log")
    };
    serde_json::from_value(serde_json::to_value(value).map_err(failed)?).map_err(failed)
}

pub(super) fn timestamp(field: &str, value: Option<&str>) -> ApiResult<Option<Timestamp>> {
    value
        .map(|v| {
            arbor_domain::time::parse_storable_instant(v).map_err(|e| ApiError::invalid(format!("`{field}`: {e}")))
        })
        .transpose()
}

pub(crate) fn kind(value: &str) -> ApiResult<MemoryKind> {
    MemoryKind::parse(value).ok_or_else(|| {
        let known: Vec<&str> = MemoryKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::invalid(format!("unknown kind {value:?}; expected one of {}", known.join(", ")))
    })
}

pub(crate) fn tree(value: &str) -> ApiResult<TreeId> {
    TreeId::parse(value).map_err(|e| ApiError::invalid(format!("`tree`: {e}")))
}

pub(super) fn title_field(title: Option<&str>) -> ApiResult<()> {
    match title {
        Some(title) if !wire::is_title(title) || title.chars().count() > MAX_TITLE_CHARS => {
            Err(ApiError::invalid(format!(
                "`title` must be 1 to {MAX_TITLE_CHARS} characters, not all whitespace, without control characters"
            )))
        }
        _ => Ok(()),
    }
}

pub(crate) fn in_range(field: &str, value: Option<u32>, min: u32, max: u32) -> ApiResult<Option<usize>> {
    match value {
        Some(v) if !(min..=max).contains(&v) => {
            Err(ApiError::invalid(format!("`{field}` must be between {min} and {max}, not {v}")))
        }
        other => Ok(other.map(|v| v as usize)),
    }
}

pub(super) fn text_field(field: &str, value: &str, max_chars: usize) -> ApiResult<()> {
    if !wire::is_some_text(value) {
        return Err(ApiError::invalid(format!("`{field}` is empty or holds a NUL character")));
    }
    if value.chars().count() > max_chars {
        return Err(ApiError::invalid(format!("`{field}` is longer than {max_chars} characters")));
    }
    Ok(())
}

/// An event the engine will take: every rule of `Event::validate` (sizes, control characters
/// in references, storable instants) checked before anything is written, so one bad item of a
/// batch refuses the request instead of landing as a per-item error beside written ones.
pub(super) fn checked(event: Event) -> ApiResult<Event> {
    event.validate().map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok(event)
}

/// A refused item of a batch, named by its place: the whole request is refused, so nothing
/// of it is half-written.
pub(super) fn at_item(field: &str, index: usize, error: ApiError) -> ApiError {
    ApiError { message: format!("`{field}[{index}]`: {}", error.message), ..error }
}

/// The most items a batch of saves or chat messages holds: one write, bounded.
pub(super) const MAX_BATCH: usize = 100;

/// A message id as the schema states it, checked even for a message nothing is kept of.
pub(super) fn message_id_field(message_id: Option<&str>) -> ApiResult<()> {
    if message_id.is_some_and(|m| m.is_empty() || m.chars().count() > 64 || m.chars().any(char::is_control)) {
        return Err(ApiError::invalid("a message id must be 1 to 64 characters, without control characters"));
    }
    Ok(())
}
