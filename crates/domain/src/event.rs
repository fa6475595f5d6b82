//! Inbound events [design §events]: what a host sends Arbor. Events are inbound only; they are
//! normalized into chunks, and only admitted chunks become leaves.
//!
//! An event names no namespace: where it is written comes from the caller's trusted context.

use serde::{Deserialize, Serialize};

use crate::entity::EntityType;
use crate::model::{Actor, Category, Label, MAX_TITLE_CHARS, MemoryKind, SourceRef, SubjectKey};
use crate::sensitivity::Sensitivity;
use crate::time::{STORABLE_RANGE, Timestamp, Validity, is_storable};

/// The largest event text accepted, in bytes. Memories are small; whole documents and long
/// tool outputs are not memories [design §events].
pub const MAX_EVENT_TEXT_BYTES: usize = 64 * 1024;

/// The longest host-supplied reference (message id, task id, record id, …), in bytes.
pub const MAX_REFERENCE_BYTES: usize = 256;

/// The most labels one event may carry.
pub const MAX_LABELS: usize = 32;

/// One inbound event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub text: String,
    #[serde(default = "default_actor")]
    pub actor: Actor,
    /// When it happened; defaults to the time of ingest.
    #[serde(default, deserialize_with = "crate::time::deserialize_optional_instant")]
    pub observed_at: Option<Timestamp>,
    #[serde(default = "default_source")]
    pub source: SourceRef,
    #[serde(default)]
    pub hints: EventHints,
}

fn default_actor() -> Actor {
    Actor::User
}

fn default_source() -> SourceRef {
    SourceRef::UserEntry
}

/// Optional facts the host already knows. A reasoner fills in whatever is missing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventHints {
    #[serde(default)]
    pub category: Option<Category>,
    #[serde(default)]
    pub kind: Option<MemoryKind>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub subject: Option<SubjectKey>,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default, deserialize_with = "crate::time::deserialize_optional_instant")]
    pub valid_from: Option<Timestamp>,
    #[serde(default, deserialize_with = "crate::time::deserialize_optional_instant")]
    pub valid_to: Option<Timestamp>,
    #[serde(default, deserialize_with = "crate::time::deserialize_optional_instant")]
    pub expires_at: Option<Timestamp>,
    #[serde(default)]
    pub sensitivity: Option<Sensitivity>,
    /// The entity the host knows this is about. Matched against existing entities by name;
    /// it is a hint for the decision matrix, never an id.
    #[serde(default)]
    pub entity: Option<EntityHint>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityHint {
    pub name: String,
    pub entity_type: EntityType,
}

/// Why an event was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("field `text` is empty")]
    EmptyText,
    #[error(
        "field `text` is {bytes} bytes; the limit is {limit} bytes (memories are short; store documents elsewhere)"
    )]
    TextTooLarge { bytes: usize, limit: usize },
    #[error("field `text` contains a NUL character")]
    NulInText,
    #[error("field `{field}` is {bytes} bytes; references are limited to {limit} bytes")]
    ReferenceTooLong { field: &'static str, bytes: usize, limit: usize },
    #[error("field `{field}` contains a control character")]
    ControlCharacter { field: &'static str },
    #[error("field `hints.valid_to` ({valid_to}) must be after `hints.valid_from` ({valid_from})")]
    InvalidValidity { valid_from: Timestamp, valid_to: Timestamp },
    #[error("field `hints.labels` has {count} labels; the limit is {limit}")]
    TooManyLabels { count: usize, limit: usize },
    #[error("field `hints.title` is longer than {MAX_TITLE_CHARS} characters")]
    TitleTooLong,
    #[error("field `hints.entity.name` is empty or longer than 120 characters")]
    BadEntityName,
    #[error("field `source` may not be a promotion: only `arbor promote` writes those")]
    ReservedSource,
    #[error("field `{field}` ({at}) is outside the range of instants Arbor stores ({range})", range = STORABLE_RANGE)]
    TimeOutOfRange { field: &'static str, at: Timestamp },
}

impl Event {
    /// A plain user message with no hints.
    pub fn user_message(text: impl Into<String>) -> Event {
        Event {
            text: text.into(),
            actor: Actor::User,
            observed_at: None,
            source: SourceRef::UserEntry,
            hints: EventHints::default(),
        }
    }

    /// The category the event's memories are filed in: the caller's hint, else by who sent
    /// it — what an integration (a calendar, a ticket system) syncs is kept apart from what
    /// was said in conversation.
    pub fn category(&self) -> Category {
        self.hints.category.unwrap_or(if self.actor == Actor::Integration {
            Category::Integration
        } else {
            Category::Interaction
        })
    }

    /// Checks everything that can be checked without the store. An event that passes may still
    /// be refused by admission, but never for being malformed.
    pub fn validate(&self) -> Result<(), EventError> {
        if self.text.len() > MAX_EVENT_TEXT_BYTES {
            return Err(EventError::TextTooLarge { bytes: self.text.len(), limit: MAX_EVENT_TEXT_BYTES });
        }
        if self.text.trim().is_empty() {
            return Err(EventError::EmptyText);
        }
        if self.text.contains('\0') {
            return Err(EventError::NulInText);
        }
        if matches!(self.source, SourceRef::Promotion { .. }) {
            return Err(EventError::ReservedSource);
        }
        for (field, value) in self.references() {
            if value.len() > MAX_REFERENCE_BYTES {
                return Err(EventError::ReferenceTooLong { field, bytes: value.len(), limit: MAX_REFERENCE_BYTES });
            }
            if value.chars().any(char::is_control) {
                return Err(EventError::ControlCharacter { field });
            }
        }
        for (field, at) in [
            ("observed_at", self.observed_at),
            ("hints.valid_from", self.hints.valid_from),
            ("hints.valid_to", self.hints.valid_to),
            ("hints.expires_at", self.hints.expires_at),
        ] {
            if let Some(at) = at.filter(|at| !is_storable(*at)) {
                return Err(EventError::TimeOutOfRange { field, at });
            }
        }
        if let Err(e) = Validity::new(self.hints.valid_from, self.hints.valid_to) {
            return Err(EventError::InvalidValidity { valid_from: e.valid_from, valid_to: e.valid_to });
        }
        if self.hints.labels.len() > MAX_LABELS {
            return Err(EventError::TooManyLabels { count: self.hints.labels.len(), limit: MAX_LABELS });
        }
        if let Some(title) = &self.hints.title {
            if title.chars().count() > MAX_TITLE_CHARS {
                return Err(EventError::TitleTooLong);
            }
            if title.chars().any(char::is_control) {
                return Err(EventError::ControlCharacter { field: "hints.title" });
            }
        }
        if let Some(entity) = &self.hints.entity {
            let chars = entity.name.trim().chars().count();
            if chars == 0 || chars > 120 {
                return Err(EventError::BadEntityName);
            }
        }
        Ok(())
    }

    fn references(&self) -> Vec<(&'static str, &str)> {
        match &self.source {
            SourceRef::UserEntry | SourceRef::Save | SourceRef::Run { .. } => vec![],
            SourceRef::Message { message_id, .. } => vec![("source.message_id", message_id)],
            SourceRef::Task { task_id, event_id } => {
                let mut refs = vec![("source.task_id", task_id.as_str())];
                if let Some(event_id) = event_id {
                    refs.push(("source.event_id", event_id));
                }
                refs
            }
            SourceRef::Import { origin } => vec![("source.origin", origin)],
            SourceRef::Integration { system, record_id } => {
                vec![("source.system", system), ("source.record_id", record_id)]
            }
            SourceRef::ExperimentConclusion { conclusion_id, .. } => vec![("source.conclusion_id", conclusion_id)],
            // Refused by `validate` before references are read.
            SourceRef::Promotion { .. } => vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_minimal_event() {
        let event: Event = serde_json::from_str(r#"{"text":"I moved to Lisbon"}"#).unwrap();
        assert_eq!(event.actor, Actor::User);
        assert!(event.validate().is_ok());
    }

    #[test]
    fn parses_a_full_event() {
        let event: Event = serde_json::from_str(
            r#"{"text":"Release moved to September","actor":"user","observed_at":"2026-05-20T10:00:00Z",
               "source":{"type":"message","conversation":"c1","message_id":"m-42"},
               "hints":{"kind":"decision","subject":"alpha release date","labels":["release"],
                        "valid_from":"2026-05-20T00:00:00Z","entity":{"name":"Project Alpha","entity_type":"project"}}}"#,
        )
        .unwrap();
        assert!(event.validate().is_ok());
        assert_eq!(event.hints.kind, Some(MemoryKind::Decision));
    }

    #[test]
    fn bad_events_get_clear_errors() {
        let unknown = serde_json::from_str::<Event>(r#"{"text":"x","namespace":"global"}"#).unwrap_err();
        assert!(unknown.to_string().contains("unknown field `namespace`"), "{unknown}");
        let bad_kind = serde_json::from_str::<Event>(r#"{"text":"x","hints":{"kind":"rumour"}}"#).unwrap_err();
        assert!(bad_kind.to_string().contains("unknown variant `rumour`"), "{bad_kind}");
        let bad_scope =
            serde_json::from_str::<Event>(r#"{"text":"x","source":{"type":"run","run":"../etc"}}"#).unwrap_err();
        assert!(bad_scope.to_string().contains("scope id"), "{bad_scope}");

        let forged = r#"{"text":"x","source":{"type":"promotion","from":"leaf-01","from_namespace":"global","reason":"r","evaluation":null,"operator":"me"}}"#;
        let forged = serde_json::from_str::<Event>(forged).unwrap();
        assert_eq!(forged.validate(), Err(EventError::ReservedSource), "only promotion writes promotions");

        let mut event = Event::user_message("x".repeat(MAX_EVENT_TEXT_BYTES + 1));
        assert!(matches!(event.validate(), Err(EventError::TextTooLarge { .. })));
        event.text = "   ".into();
        assert_eq!(event.validate(), Err(EventError::EmptyText));
        event.text = "ok".into();
        event.source = SourceRef::Message { conversation: None, message_id: "a\nb".into() };
        assert_eq!(event.validate(), Err(EventError::ControlCharacter { field: "source.message_id" }));
        event.source = SourceRef::UserEntry;
        event.hints.valid_from = Some(Timestamp::from_second(10).unwrap());
        event.hints.valid_to = Some(Timestamp::from_second(5).unwrap());
        assert!(event.validate().unwrap_err().to_string().contains("must be after"));
        event.hints = EventHints::default();
        for far in ["1500-01-01T00:00:00Z", "2300-01-01T00:00:00Z", "0001-01-01T00:00:00Z"] {
            event.observed_at = Some(far.parse().unwrap());
            let error = event.validate().unwrap_err();
            assert!(matches!(error, EventError::TimeOutOfRange { field: "observed_at", .. }), "{far}: {error}");
            assert!(
                error.to_string().ends_with("is outside the range of instants Arbor stores (1678-01-01 to 2261-12-31)")
            );
        }
    }

    #[test]
    fn an_instant_beyond_any_calendar_is_worded_as_the_range_rule() {
        for far in ["9999-12-31T23:59:59Z", "-009999-01-01T00:00:00Z", "+10000-01-01T00:00:00Z"] {
            let line = format!(r#"{{"text":"x","observed_at":"{far}"}}"#);
            let error = serde_json::from_str::<Event>(&line).unwrap_err().to_string();
            assert!(error.contains("outside the range of instants Arbor stores (1678-01-01 to 2261-12-31)"), "{error}");
        }
        let error = serde_json::from_str::<Event>(r#"{"text":"x","hints":{"valid_to":"next tuesday"}}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not an RFC 3339 instant"), "{error}");
        let event: Event = serde_json::from_str(r#"{"text":"x","observed_at":null}"#).unwrap();
        assert_eq!(event.observed_at, None);
    }
}
