//! The values records are made of [design §data-model]: categories, tree ids and entity slugs,
//! kinds, confidence, content hashes, labels, subject keys, who spoke and where it came from.
//! A value knows no record and no rule: the records (`model`), entities, paths, text and claims
//! are built from these, never the other way round.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::{IdError, LeafId, ScopeId, validate_segment};
use crate::namespace::Namespace;

/// Ownership domains [design §data-model]: where a memory came from, not a view of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Learned from interaction between the user, agents and the workspace.
    Interaction,
    /// Synced from an external system; one tree per source lineage.
    Integration,
}

impl Category {
    pub const ALL: [Category; 2] = [Category::Interaction, Category::Integration];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Interaction => "interaction",
            Category::Integration => "integration",
        }
    }

    pub fn parse(value: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == value)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tree: `<category>:<slug>`, e.g. `interaction:project-alpha` or `interaction:uncategorized`.
/// Unique within a namespace; the same tree id in two namespaces names two different trees.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TreeId(Box<str>);

impl TreeId {
    /// The slug of every category's fallback bucket [design §entity-matrix]: leaves whose subject is not clear
    /// enough to own a tree live here until reclassified.
    pub const UNCATEGORIZED: &'static str = "uncategorized";

    pub fn new(category: Category, slug: &EntitySlug) -> TreeId {
        TreeId(format!("{}:{}", category.as_str(), slug.as_str()).into())
    }

    pub fn uncategorized(category: Category) -> TreeId {
        TreeId(format!("{}:{}", category.as_str(), TreeId::UNCATEGORIZED).into())
    }

    pub fn parse(value: &str) -> Result<TreeId, IdError> {
        validate_segment("tree id", value)?;
        let malformed = || IdError::Malformed {
            what: "tree id",
            value: value.to_owned(),
            expected: "<category>:<slug>, e.g. interaction:project-alpha",
        };
        let (category, slug) = value.split_once(':').ok_or_else(malformed)?;
        if Category::parse(category).is_none() || EntitySlug::parse(slug).is_err() {
            return Err(malformed());
        }
        Ok(TreeId(value.into()))
    }

    pub fn category(&self) -> Category {
        // Validated at construction.
        let (category, _) = self.0.split_once(':').unwrap_or(("interaction", ""));
        Category::parse(category).unwrap_or(Category::Interaction)
    }

    pub fn slug(&self) -> &str {
        self.0.split_once(':').map(|(_, slug)| slug).unwrap_or(&self.0)
    }

    pub fn is_uncategorized(&self) -> bool {
        self.slug() == TreeId::UNCATEGORIZED
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TreeId({:?})", &*self.0)
    }
}

impl Serialize for TreeId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TreeId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        TreeId::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// The controlled vocabulary of memory kinds. Extended only by a code change [design §kinds].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    Fact,
    Preference,
    Event,
    Relationship,
    Procedure,
    Decision,
    Constraint,
    Reflection,
    Task,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 9] = [
        MemoryKind::Fact,
        MemoryKind::Preference,
        MemoryKind::Event,
        MemoryKind::Relationship,
        MemoryKind::Procedure,
        MemoryKind::Decision,
        MemoryKind::Constraint,
        MemoryKind::Reflection,
        MemoryKind::Task,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Fact => "fact",
            MemoryKind::Preference => "preference",
            MemoryKind::Event => "event",
            MemoryKind::Relationship => "relationship",
            MemoryKind::Procedure => "procedure",
            MemoryKind::Decision => "decision",
            MemoryKind::Constraint => "constraint",
            MemoryKind::Reflection => "reflection",
            MemoryKind::Task => "task",
        }
    }

    pub fn parse(value: &str) -> Option<MemoryKind> {
        MemoryKind::ALL.into_iter().find(|k| k.as_str() == value)
    }

    /// Preferences, constraints and procedures do not lose rank by age alone [design §decay].
    pub fn decays_with_time(self) -> bool {
        !matches!(self, MemoryKind::Preference | MemoryKind::Constraint | MemoryKind::Procedure)
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A probability-like score in `[0, 1]`. NaN and out-of-range values are refused, so every
/// threshold comparison in the decision rules is meaningful.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct Confidence(f32);

#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("confidence {0} is not a number between 0 and 1")]
pub struct ConfidenceOutOfRange(pub f32);

impl Confidence {
    pub const ZERO: Confidence = Confidence(0.0);
    pub const ONE: Confidence = Confidence(1.0);

    pub fn new(value: f32) -> Result<Confidence, ConfidenceOutOfRange> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(Confidence(value))
        } else {
            Err(ConfidenceOutOfRange(value))
        }
    }

    /// Clamps into range; NaN becomes zero. For scores computed by heuristics, where a value a
    /// little outside the range is an artefact rather than a bad input.
    pub fn saturating(value: f32) -> Confidence {
        if value.is_nan() { Confidence(0.0) } else { Confidence(value.clamp(0.0, 1.0)) }
    }

    pub fn get(self) -> f32 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Confidence {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = f32::deserialize(deserializer)?;
        Confidence::new(raw).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2}", self.0)
    }
}

/// How important a memory is for ranking, in `[0, 1]`. Same rules as [`Confidence`].
pub type Salience = Confidence;

/// A lowercase hex SHA-256 digest.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ContentHash(Box<str>);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> ContentHash {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for byte in digest.iter() {
            use fmt::Write;
            let _ = write!(hex, "{byte:02x}");
        }
        ContentHash(hex.into())
    }

    pub fn parse(value: &str) -> Result<ContentHash, IdError> {
        if value.len() == 64 && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(ContentHash(value.into()))
        } else {
            Err(IdError::Malformed { what: "sha256", value: value.to_owned(), expected: "64 lowercase hex digits" })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What a new record carries until its body is written: the hash of no bytes. The write
    /// path sets the hash of the body as written before any row that names it is committed,
    /// so no stored row carries this.
    pub fn unwritten() -> ContentHash {
        ContentHash::of(b"")
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", &self.0[..12.min(self.0.len())])
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ContentHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        ContentHash::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// The stable fingerprint of a chunk: the SHA-256 of its normalized text
/// ([`crate::text::normalize_for_fingerprint`]). Same fingerprint + same owner = same memory.
pub type Fingerprint = ContentHash;

/// A short free-form retrieval label (lowercase, at most 64 characters, no control characters).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Label(Box<str>);

impl Label {
    pub const MAX_LEN: usize = 64;

    pub fn parse(value: &str) -> Result<Label, IdError> {
        let normalized = value.trim().to_lowercase();
        if normalized.is_empty() {
            return Err(IdError::Empty { what: "label" });
        }
        if normalized.chars().count() > Label::MAX_LEN {
            return Err(IdError::TooLong { what: "label", value: normalized.clone(), len: normalized.len() });
        }
        if let Some((at, ch)) = normalized.char_indices().find(|(_, c)| c.is_control()) {
            return Err(IdError::InvalidChar { what: "label", value: normalized, ch, at });
        }
        Ok(Label(normalized.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Label::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// What a memory is about, finely enough that two memories with the same subject in the same
/// tree cannot both be current: "alice/favorite-color", "project-alpha/release-date".
///
/// Lowercase, whitespace collapsed, 1–200 characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SubjectKey(Box<str>);

impl SubjectKey {
    pub const MAX_LEN: usize = 200;

    pub fn parse(value: &str) -> Result<SubjectKey, IdError> {
        let normalized = value.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if normalized.is_empty() {
            return Err(IdError::Empty { what: "subject" });
        }
        if normalized.chars().count() > SubjectKey::MAX_LEN {
            return Err(IdError::TooLong { what: "subject", value: normalized.clone(), len: normalized.len() });
        }
        if let Some((at, ch)) = normalized.char_indices().find(|(_, c)| c.is_control()) {
            return Err(IdError::InvalidChar { what: "subject", value: normalized, ch, at });
        }
        Ok(SubjectKey(normalized.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for SubjectKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        SubjectKey::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// Who produced the event a memory came from. Used by the approval policy: an assistant's own
/// unconfirmed statements never become facts automatically [design §approval].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    User,
    /// An assistant's turn in a transcript: what it said, guesses included.
    Assistant,
    Tool,
    System,
    Integration,
    /// An agent deliberately saving or correcting through Arbor's memory tools (MCP or the
    /// HTTP API, bound as `--speaker agent`). Inferred like an assistant's words, but a choice
    /// to remember rather than a passing remark, so the namespace's approval policy applies.
    Agent,
}

/// Who wrote a message of a chat transcript, as chat clients label it (`user`, `assistant`,
/// `tool`, a `system` or `developer` prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    User,
    Assistant,
    Tool,
    Prompt,
}

impl ChatRole {
    /// Who a message with this role is from, when the trusted binding says its user's words are
    /// `speaker`'s. A role only ever lowers authority: a `user` message is the binding's
    /// speaker's (never more), an assistant's or a tool's words are theirs (suggestions until a
    /// person confirms them), and a prompt is not something that happened (`None`: not kept)
    /// [design §approval].
    pub fn actor(self, speaker: Actor) -> Option<Actor> {
        match self {
            ChatRole::User => Some(speaker),
            ChatRole::Assistant => Some(Actor::Assistant),
            ChatRole::Tool => Some(Actor::Tool),
            ChatRole::Prompt => None,
        }
    }
}

/// Where a memory came from [design §provenance]. Host-supplied references are opaque strings,
/// bounded in length by event validation; they never become paths.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SourceRef {
    /// Typed in by a person as a memory ("remember this"). The only kind that needs no source.
    UserEntry,
    Message {
        conversation: Option<ScopeId>,
        message_id: String,
    },
    Task {
        task_id: String,
        event_id: Option<String>,
    },
    Run {
        run: ScopeId,
    },
    Import {
        origin: String,
    },
    Integration {
        system: String,
        record_id: String,
    },
    ExperimentConclusion {
        experiment: ScopeId,
        conclusion_id: String,
    },
    /// Saved or corrected through Arbor's memory tools (MCP or the HTTP API) by a caller that
    /// named no message: seen in the course of work, like a message.
    Save,
    /// Promoted from a narrower layer [design §promotion]: the original, and why and by whom. Written
    /// only by promotion itself; an inbound event cannot claim it.
    Promotion {
        from: LeafId,
        from_namespace: Namespace,
        reason: String,
        evaluation: Option<String>,
        operator: String,
    },
}

impl SourceRef {
    /// A short reference for packs and listings, e.g. `message:D1:3`.
    pub fn short(&self) -> String {
        match self {
            SourceRef::UserEntry => "user-entry".to_owned(),
            SourceRef::Save => "save".to_owned(),
            SourceRef::Message { message_id, .. } => format!("message:{message_id}"),
            SourceRef::Task { task_id, .. } => format!("task:{task_id}"),
            SourceRef::Run { run } => format!("run:{run}"),
            SourceRef::Import { origin } => format!("import:{origin}"),
            SourceRef::Integration { system, record_id } => format!("{system}:{record_id}"),
            SourceRef::Promotion { from, .. } => format!("promotion:{from}"),
            SourceRef::ExperimentConclusion { experiment, conclusion_id } => {
                format!("experiment:{experiment}/{conclusion_id}")
            }
        }
    }
}

/// The full provenance of a leaf: its source, the hash of the source content, and the versions
/// of the code that extracted it and of the policy that admitted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: SourceRef,
    pub actor: Actor,
    pub source_sha256: ContentHash,
    pub extractor: String,
    pub policy_version: String,
}

/// A canonical entity slug: lowercase ASCII letters, digits and single hyphens, 1–48 bytes,
/// generated from a name by [`EntitySlug::from_name`]. Unique per namespace.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntitySlug(Box<str>);

impl EntitySlug {
    pub const MAX_LEN: usize = 48;

    /// Validates an existing slug (from storage or a tree id).
    pub fn parse(value: &str) -> Result<EntitySlug, IdError> {
        let malformed = || IdError::Malformed {
            what: "entity slug",
            value: value.to_owned(),
            expected: "lowercase letters, digits and single hyphens, at most 48 bytes",
        };
        if value.is_empty() {
            return Err(IdError::Empty { what: "entity slug" });
        }
        let well_formed = value.len() <= EntitySlug::MAX_LEN
            && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !value.starts_with('-')
            && !value.ends_with('-')
            && !value.contains("--");
        if well_formed { Ok(EntitySlug(value.into())) } else { Err(malformed()) }
    }

    /// Makes a slug from a display name: ASCII letters and digits kept (lowercased), everything
    /// else a separator, runs collapsed, at most 48 bytes cut at a word boundary when possible.
    ///
    /// A name with no ASCII letters or digits (e.g. "张伟") gets a stable hash slug
    /// `e-<8 hex>` so that every name has a slug and equal names get equal slugs.
    pub fn from_name(name: &str) -> EntitySlug {
        let mut slug = String::with_capacity(name.len());
        let mut pending_hyphen = false;
        for ch in name.chars() {
            if ch.is_ascii_alphanumeric() {
                if pending_hyphen && !slug.is_empty() {
                    slug.push('-');
                }
                pending_hyphen = false;
                slug.push(ch.to_ascii_lowercase());
            } else {
                pending_hyphen = true;
            }
        }
        if slug.len() > EntitySlug::MAX_LEN {
            let cut = slug[..EntitySlug::MAX_LEN].rfind('-').filter(|&at| at >= 16);
            slug.truncate(cut.unwrap_or(EntitySlug::MAX_LEN));
            while slug.ends_with('-') {
                slug.pop();
            }
        }
        if slug.is_empty() || slug == crate::values::TreeId::UNCATEGORIZED {
            let hash = crate::values::ContentHash::of(name.trim().to_lowercase().as_bytes());
            slug = format!("e-{}", &hash.as_str()[..8]);
        }
        EntitySlug(slug.into())
    }

    /// The first of `base`, `base-2`, `base-3`, … that `is_taken` says is free. Used when two
    /// different entities would get the same slug in one namespace.
    pub fn disambiguate(base: &EntitySlug, mut is_taken: impl FnMut(&EntitySlug) -> bool) -> EntitySlug {
        if !is_taken(base) {
            return base.clone();
        }
        for n in 2u32.. {
            let suffix = format!("-{n}");
            let mut stem = base.as_str().to_owned();
            stem.truncate(EntitySlug::MAX_LEN - suffix.len());
            while stem.ends_with('-') {
                stem.pop();
            }
            let candidate = EntitySlug(format!("{stem}{suffix}").into());
            if !is_taken(&candidate) {
                return candidate;
            }
        }
        unreachable!("u32 suffixes exhausted")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EntitySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for EntitySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntitySlug({:?})", &*self.0)
    }
}

impl Serialize for EntitySlug {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EntitySlug {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        EntitySlug::parse(&raw).map_err(serde::de::Error::custom)
    }
}
