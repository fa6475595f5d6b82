//! Typed identifiers that are safe to use as a single path segment by construction.
//!
//! Every id that can end up in a file path (namespaces, trees, leaves, summaries, entities) is
//! validated once, when it is parsed or generated, so the body store can join ids into paths
//! without re-checking them: an id never contains a separator, never starts with a dot, never
//! contains `..`, a NUL or any other control character, and is never empty or overlong.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest id, in bytes, accepted anywhere.
pub const MAX_ID_LEN: usize = 128;

/// Why a string was refused as an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{what} is empty")]
    Empty { what: &'static str },
    #[error("{what} {value:?} is {len} bytes long; the limit is {MAX_ID_LEN}")]
    TooLong { what: &'static str, value: String, len: usize },
    #[error(
        "{what} {value:?} contains {ch:?} at byte {at}; ids may contain only ASCII letters, digits, '-', '_', '.' and ':'"
    )]
    InvalidChar { what: &'static str, value: String, ch: char, at: usize },
    #[error("{what} {value:?} must start with an ASCII letter or digit")]
    BadStart { what: &'static str, value: String },
    #[error("{what} {value:?} contains \"..\"")]
    DotDot { what: &'static str, value: String },
    #[error("{what} {value:?} is not of the form {expected}")]
    Malformed { what: &'static str, value: String, expected: &'static str },
}

/// Checks that `value` is a single, harmless path segment.
///
/// Allowed: ASCII letters and digits, `-`, `_`, `.` and `:`; the first byte is a letter or digit;
/// no `..`. `:` is allowed because tree ids read `interaction:project-alpha`; it is not a path
/// separator on the platforms Arbor supports.
pub fn validate_segment(what: &'static str, value: &str) -> Result<(), IdError> {
    if value.is_empty() {
        return Err(IdError::Empty { what });
    }
    if value.len() > MAX_ID_LEN {
        return Err(IdError::TooLong { what, value: truncate_for_error(value), len: value.len() });
    }
    for (at, ch) in value.char_indices() {
        if !(ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.' | ':')) {
            return Err(IdError::InvalidChar { what, value: truncate_for_error(value), ch, at });
        }
    }
    if !value.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(IdError::BadStart { what, value: value.to_owned() });
    }
    if value.contains("..") {
        return Err(IdError::DotDot { what, value: value.to_owned() });
    }
    Ok(())
}

fn truncate_for_error(value: &str) -> String {
    const SHOWN: usize = 64;
    if value.len() <= SHOWN {
        return value.to_owned();
    }
    let mut end = SHOWN;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &value[..end])
}

macro_rules! path_safe_id {
    ($(#[$meta:meta])* $name:ident, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(Box<str>);

        impl $name {
            /// What this id is called in error messages.
            pub const WHAT: &'static str = $what;

            /// Parses and validates an id; see [`validate_segment`].
            pub fn parse(value: &str) -> Result<Self, IdError> {
                validate_segment($what, value)?;
                Ok(Self(value.into()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), &*self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(value: &str) -> Result<Self, IdError> {
                Self::parse(value)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        // Deserialization validates, so an id read from JSON, a database row or a file is as
        // safe as one built in code.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                Self::parse(&raw).map_err(serde::de::Error::custom)
            }
        }
    };
}

path_safe_id!(
    /// The host's id of a project, conversation, automation, experiment, run or agent: the
    /// `{id}` in `project:{id}`.
    ScopeId,
    "scope id"
);
path_safe_id!(
    /// A source leaf. Generated by code (`leaf-` + a 26-character time-ordered suffix).
    LeafId,
    "leaf id"
);
path_safe_id!(
    /// A summary node. Generated by code (`sum-` + a 26-character time-ordered suffix).
    SummaryId,
    "summary id"
);
path_safe_id!(
    /// An entity. Generated by code (`ent-` + a 26-character time-ordered suffix); a model never
    /// names one that is not on the shortlist it was given.
    EntityId,
    "entity id"
);
path_safe_id!(
    /// A job in the outbox.
    JobId,
    "job id"
);
path_safe_id!(
    /// A recorded retrieval (context snapshot).
    RetrievalId,
    "retrieval id"
);

/// Which kind of node an id names. Leaves and summaries share one id space in indexes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "type", content = "id", rename_all = "snake_case")]
pub enum NodeId {
    Leaf(LeafId),
    Summary(SummaryId),
}

impl NodeId {
    pub fn as_str(&self) -> &str {
        match self {
            NodeId::Leaf(id) => id.as_str(),
            NodeId::Summary(id) => id.as_str(),
        }
    }

    pub fn as_leaf(&self) -> Option<&LeafId> {
        match self {
            NodeId::Leaf(id) => Some(id),
            NodeId::Summary(_) => None,
        }
    }

    pub fn as_summary(&self) -> Option<&SummaryId> {
        match self {
            NodeId::Summary(id) => Some(id),
            NodeId::Leaf(_) => None,
        }
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<LeafId> for NodeId {
    fn from(id: LeafId) -> Self {
        NodeId::Leaf(id)
    }
}

impl From<SummaryId> for NodeId {
    fn from(id: SummaryId) -> Self {
        NodeId::Summary(id)
    }
}

/// The version of a memory lineage: the first leaf of a lineage is version 1 and every
/// superseding leaf (correction, supersession, restore) is the next version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Version(u32);

impl Version {
    pub const FIRST: Version = Version(1);

    pub fn new(value: u32) -> Option<Version> {
        (value >= 1).then_some(Version(value))
    }

    pub fn get(self) -> u32 {
        self.0
    }

    #[must_use]
    pub fn next(self) -> Version {
        Version(self.0.saturating_add(1))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// The prefixes of generated ids. Kept here so a reader can tell an id's kind at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdPrefix {
    Leaf,
    Summary,
    Entity,
    Job,
    Retrieval,
}

impl IdPrefix {
    pub fn as_str(self) -> &'static str {
        match self {
            IdPrefix::Leaf => "leaf",
            IdPrefix::Summary => "sum",
            IdPrefix::Entity => "ent",
            IdPrefix::Job => "job",
            IdPrefix::Retrieval => "ret",
        }
    }
}

/// Formats a generated id: `<prefix>-<26 chars>`, where the suffix is a ULID-style Crockford
/// base32 rendering of 48 bits of milliseconds and an 80-bit suffix, lowercased. Ids made this
/// way sort by creation time, which keeps buffers and listings in a stable order; the app makes
/// the suffix random for the first id of a millisecond and counts up from it after that.
///
/// The randomness comes from outside (the `IdSource` port); this function only formats it, so
/// the domain stays deterministic.
pub fn format_generated_id(prefix: IdPrefix, unix_millis: u64, random: u128) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
    let value: u128 = (u128::from(unix_millis & 0xFFFF_FFFF_FFFF) << 80) | (random & ((1u128 << 80) - 1));
    let mut suffix = [0u8; 26];
    for (i, slot) in suffix.iter_mut().enumerate() {
        let shift = 5 * (25 - i);
        *slot = ALPHABET[((value >> shift) & 0x1F) as usize];
    }
    // The alphabet is ASCII, so this cannot fail.
    let suffix = std::str::from_utf8(&suffix).unwrap_or_default();
    format!("{}-{}", prefix.as_str(), suffix)
}

macro_rules! generated {
    ($name:ident, $prefix:expr) => {
        impl $name {
            /// Builds a fresh id from a timestamp and randomness supplied by an `IdSource`.
            pub fn generate(unix_millis: u64, random: u128) -> Self {
                Self(format_generated_id($prefix, unix_millis, random).into())
            }
        }
    };
}

generated!(LeafId, IdPrefix::Leaf);
generated!(SummaryId, IdPrefix::Summary);
generated!(EntityId, IdPrefix::Entity);
generated!(JobId, IdPrefix::Job);
generated!(RetrievalId, IdPrefix::Retrieval);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_path_tricks() {
        for bad in ["", "a/b", "..", "a..b", ".hidden", "a\\b", "a\0b", "a b", "é", "-x", "a\nb"] {
            assert!(LeafId::parse(bad).is_err(), "{bad:?} should be refused");
        }
        for good in ["leaf-01", "conv-26", "a.b", "interaction:project-alpha", "X_1"] {
            assert!(LeafId::parse(good).is_ok(), "{good:?} should be accepted");
        }
    }

    #[test]
    fn error_messages_name_the_problem() {
        let err = ScopeId::parse("a/b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "scope id \"a/b\" contains '/' at byte 1; ids may contain only ASCII letters, digits, '-', '_', '.' and ':'"
        );
        let err = ScopeId::parse(&"x".repeat(200)).unwrap_err();
        assert!(err.to_string().contains("200 bytes long"), "{err}");
    }

    #[test]
    fn deserialization_validates() {
        assert!(serde_json::from_str::<LeafId>("\"../etc/passwd\"").is_err());
        assert_eq!(serde_json::from_str::<LeafId>("\"leaf-1\"").unwrap().as_str(), "leaf-1");
    }

    #[test]
    fn generated_ids_sort_by_time() {
        let a = LeafId::generate(1_000, u128::MAX);
        let b = LeafId::generate(1_001, 0);
        assert!(a < b);
        assert_eq!(a.as_str().len(), "leaf-".len() + 26);
    }

    proptest! {
        #![proptest_config(crate::testkit::proptest_config())]

        /// Whatever string is offered, an accepted id is a single harmless path segment.
        #[test]
        fn accepted_ids_are_single_safe_segments(raw in "\\PC{0,40}|[a-z0-9./:_\\\\-]{0,40}") {
            if let Ok(id) = LeafId::parse(&raw) {
                let s = id.as_str();
                prop_assert!(!s.is_empty() && s.len() <= MAX_ID_LEN);
                prop_assert!(!s.contains('/') && !s.contains('\\') && !s.contains('\0'));
                prop_assert!(!s.starts_with('.') && !s.contains(".."));
                let path = std::path::Path::new(s);
                prop_assert_eq!(path.components().count(), 1);
                prop_assert!(matches!(path.components().next(), Some(std::path::Component::Normal(_))));
            }
        }

        #[test]
        fn generated_ids_always_parse(ms in any::<u64>(), random in any::<u128>()) {
            let id = LeafId::generate(ms, random);
            prop_assert_eq!(LeafId::parse(id.as_str()), Ok(id));
        }
    }
}
