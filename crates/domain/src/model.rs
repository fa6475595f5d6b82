//! The data model [design §data-model]: categories, trees, kinds, confidence, provenance, and the records
//! of source leaves and summary nodes that the metadata store persists.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::claims::LeafClaims;
use crate::entity::EntitySlug;
use crate::id::{EntityId, IdError, LeafId, NodeId, ScopeId, SummaryId, Version, validate_segment};
use crate::lifecycle::{IllegalTransition, LeafStatus, LeafTransition};
use crate::namespace::Namespace;
use crate::paths::BodyPath;
use crate::sensitivity::Sensitivity;
use crate::time::{KnownSpan, Timestamp, Validity};

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

/// The longest title a memory or summary carries, in characters: what a caller may give
/// (`hints.title`, a correction's title) and what a model's or the heuristics' title is cut to.
pub const MAX_TITLE_CHARS: usize = 200;

/// The longest summary a sealed or root summary keeps, in characters, on its row and in its
/// body; a model's longer draft is refused.
pub const MAX_SUMMARY_CHARS: usize = 4_000;

/// `title` as a record keeps it: at most [`MAX_TITLE_CHARS`] characters.
pub fn bounded_title(title: &str) -> String {
    crate::text::truncate_chars(title, MAX_TITLE_CHARS)
}

/// The version of the rules in this crate, recorded in provenance and context snapshots.
pub const POLICY_VERSION: &str = concat!("arbor-policy/", env!("CARGO_PKG_VERSION"));

/// A tree's metadata row. The tree's root pointer lives here and is swapped atomically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeRecord {
    pub namespace: Namespace,
    pub tree_id: TreeId,
    /// The primary entity that owns the tree; `None` for the fallback bucket and for
    /// integration trees keyed by source lineage.
    pub entity: Option<EntityId>,
    pub title: String,
    pub created_at: Timestamp,
    pub root: Option<SummaryId>,
    /// Set when something under the root changed; cleared when a fresh root is swapped in.
    pub root_stale: bool,
}

/// Links from a leaf to entities: exactly one primary (the tree owner, absent only in the
/// fallback bucket) and any number of secondary ones, which are retrieval metadata only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EntityLinks {
    pub primary: Option<EntityId>,
    pub secondary: Vec<EntityId>,
}

/// A source leaf's metadata row [design §data-model]. The body lives on disk at `body_path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeafRecord {
    pub id: LeafId,
    /// The first leaf of this memory's version chain; equal to `id` for version 1.
    pub lineage: LeafId,
    pub version: Version,
    pub namespace: Namespace,
    pub category: Category,
    pub tree_id: TreeId,
    pub kind: MemoryKind,
    pub title: String,
    pub summary: String,
    pub subject: Option<SubjectKey>,
    pub fingerprint: Fingerprint,
    pub body_path: BodyPath,
    pub body_sha256: ContentHash,
    pub observed_at: Timestamp,
    pub created_at: Timestamp,
    pub validity: Validity,
    pub expires_at: Option<Timestamp>,
    pub known: KnownSpan,
    pub confidence: Confidence,
    pub salience: Salience,
    pub sensitivity: Sensitivity,
    pub status: LeafStatus,
    pub supersedes: Option<LeafId>,
    pub superseded_by: Option<LeafId>,
    pub provenance: Provenance,
    pub labels: Vec<Label>,
    pub entities: EntityLinks,
    /// The sealed summary this leaf sits under, once one has been sealed over it.
    pub parent: Option<SummaryId>,
    /// What its text says, as claims, and what reconciliation decided about it.
    #[serde(default)]
    pub claims: LeafClaims,
}

impl LeafRecord {
    pub fn node_id(&self) -> NodeId {
        NodeId::Leaf(self.id.clone())
    }

    /// The record once `successor` has replaced it [design §supersession]: superseded, valid until
    /// the successor became valid, no longer current from `at` on. Invalidated, never deleted
    /// and never rewritten in place (the body stays as it was).
    pub fn superseded_by(
        &self,
        successor: &LeafId,
        successor_valid_from: Timestamp,
        at: Timestamp,
    ) -> Result<LeafRecord, IllegalTransition> {
        let status = self.status.apply(LeafTransition::Supersede)?;
        Ok(LeafRecord {
            status,
            superseded_by: Some(successor.clone()),
            validity: self.validity.ended_at(successor_valid_from),
            known: self.known.closed_at(at),
            ..self.clone()
        })
    }

    /// This leaf moved to `tree` of its namespace (the tree of `entity`, which came into being
    /// after it was filed): the next version of the same memory, leaf `id`, with the same
    /// words, times, validity and provenance, written at `at` and replacing this placement.
    /// Its body is not written yet.
    #[must_use]
    pub fn refiled(&self, id: LeafId, tree: TreeId, entity: EntityId, at: Timestamp) -> LeafRecord {
        let moved = LeafRecord { tree_id: tree, ..self.clone() };
        LeafRecord {
            lineage: self.lineage.clone(),
            version: self.version.next(),
            supersedes: Some(self.id.clone()),
            entities: EntityLinks { primary: Some(entity), secondary: self.entities.secondary.clone() },
            ..moved.copied(id, self.namespace.clone(), LeafStatus::Active, at)
        }
    }

    /// The next version of this memory, `id`, written at `at`: the same memory (lineage,
    /// namespace, tree, kind, subject, entities, sensitivity, labels, provenance) and, until the
    /// caller gives it its own, the same words; current from `at` (active, observed, valid and
    /// known from then) and replacing this version. Its body is not written yet.
    #[must_use]
    pub fn next_version(&self, id: LeafId, at: Timestamp) -> LeafRecord {
        LeafRecord {
            lineage: self.lineage.clone(),
            version: self.version.next(),
            observed_at: at,
            validity: Validity::starting(at),
            supersedes: Some(self.id.clone()),
            ..self.copied(id, self.namespace.clone(), LeafStatus::Active, at)
        }
    }

    /// A memory of its own, `id` in `namespace` with `status`, saying what this leaf says
    /// (a promotion's copy, an archived memory brought back as a candidate): its first version,
    /// its own lineage, linked to nothing. Its body is not written yet.
    #[must_use]
    pub fn copied_as_new_memory(
        &self,
        id: LeafId,
        namespace: Namespace,
        status: LeafStatus,
        at: Timestamp,
    ) -> LeafRecord {
        LeafRecord { lineage: id.clone(), version: Version::FIRST, ..self.copied(id, namespace, status, at) }
    }

    /// This leaf's words and facts as leaf `id` of `namespace` (same tree id), created at `at`
    /// with `status` (known from `at` when active, never otherwise), linked to no other leaf or
    /// summary, its body at its own path and not written yet. The lineage is the caller's.
    fn copied(&self, id: LeafId, namespace: Namespace, status: LeafStatus, at: Timestamp) -> LeafRecord {
        LeafRecord {
            body_path: BodyPath::leaf(&namespace, self.category, &self.tree_id, &id),
            body_sha256: ContentHash::unwritten(),
            id,
            namespace,
            created_at: at,
            known: if status == LeafStatus::Active { KnownSpan::from(at) } else { KnownSpan::NEVER },
            status,
            supersedes: None,
            superseded_by: None,
            parent: None,
            claims: self.claims.unmarked(),
            ..self.clone()
        }
    }

    /// The record once a person confirms it: active and current from `at` on.
    pub fn confirmed(&self, at: Timestamp) -> Result<LeafRecord, IllegalTransition> {
        let status = self.status.apply(LeafTransition::Confirm)?;
        Ok(LeafRecord { status, known: KnownSpan::from(at), ..self.clone() })
    }

    /// The content-free record left after forgetting [design §forget]: ids, hashes,
    /// times and links survive so the forget can be audited and verified; every field that
    /// held words is emptied.
    #[must_use]
    pub fn tombstone(&self, at: Timestamp) -> LeafRecord {
        LeafRecord {
            title: String::new(),
            summary: String::new(),
            subject: None,
            labels: Vec::new(),
            claims: LeafClaims::default(),
            status: LeafStatus::Tombstone,
            known: self.known.closed_at(at),
            ..self.clone()
        }
    }
}

/// Whether a summary is a sealed inner node or the tree's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryRole {
    /// Sealed over exactly one full buffer of children at one height.
    Sealed,
    /// The single L1 node refreshed over the tree's frontier.
    Root,
}

impl SummaryRole {
    /// The level (`L<n>` in its body path) of a summary with this role at `height`: a root is
    /// `L1`; a summary sealed at height `h` (1 = over leaves) is `L{h+1}`.
    pub fn level(self, height: u8) -> u8 {
        match self {
            SummaryRole::Root => 1,
            SummaryRole::Sealed => height.saturating_add(1),
        }
    }
}

/// The lifecycle of a summary. Sealed summaries are never edited: a change below produces a
/// replacement, and the old node is retired when the replacement is swapped in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryStatus {
    Current,
    /// Something below changed; still readable until its replacement is sealed.
    Stale,
    /// Something below was forgotten and this summary may quote it: its words are gone at
    /// once and it is not readable, but it still awaits its replacement.
    Purged,
    /// Replaced; never retrieved again.
    Retired,
}

impl SummaryStatus {
    pub const ALL: [SummaryStatus; 4] =
        [SummaryStatus::Current, SummaryStatus::Stale, SummaryStatus::Purged, SummaryStatus::Retired];

    pub fn as_str(self) -> &'static str {
        match self {
            SummaryStatus::Current => "current",
            SummaryStatus::Stale => "stale",
            SummaryStatus::Purged => "purged",
            SummaryStatus::Retired => "retired",
        }
    }

    /// Whether the summary still needs a replacement sealed over its children.
    pub fn awaits_reseal(self) -> bool {
        matches!(self, SummaryStatus::Stale | SummaryStatus::Purged)
    }

    /// Whether its words may still be read (a stale summary is, until its replacement).
    pub fn is_readable(self) -> bool {
        matches!(self, SummaryStatus::Current | SummaryStatus::Stale)
    }

    /// Whether it is still a node of its tree: everything but a replaced summary.
    pub fn is_tree_member(self) -> bool {
        self != SummaryStatus::Retired
    }
}

/// A summary node's metadata row [design §data-model].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRecord {
    pub id: SummaryId,
    pub namespace: Namespace,
    pub category: Category,
    pub tree_id: TreeId,
    pub role: SummaryRole,
    /// Distance from the leaves: 1 for a summary sealed over leaves.
    pub height: u8,
    pub parent: Option<SummaryId>,
    pub children: Vec<NodeId>,
    pub title: String,
    pub summary: String,
    pub body_path: BodyPath,
    pub body_sha256: ContentHash,
    pub time_range_start: Option<Timestamp>,
    pub time_range_end: Option<Timestamp>,
    pub sealed_at: Timestamp,
    pub labels: Vec<Label>,
    /// The highest sensitivity among the children whose words it contains. Restricted
    /// children are never summarized, so this is at most `sensitive`.
    pub sensitivity: Sensitivity,
    pub status: SummaryStatus,
    /// When it stopped being readable (replaced or purged).
    pub retired_at: Option<Timestamp>,
    /// The summary this one replaced, when it was produced by a re-seal.
    pub replaces: Option<SummaryId>,
}

impl SummaryRecord {
    pub fn node_id(&self) -> NodeId {
        NodeId::Summary(self.id.clone())
    }

    /// The record once a replacement has been swapped in. It keeps ids and hashes but no
    /// words: a retired summary is never read again, and words left on it would outlive a
    /// later forget of a leaf it once quoted.
    #[must_use]
    pub fn retired(&self, at: Timestamp) -> SummaryRecord {
        SummaryRecord {
            status: SummaryStatus::Retired,
            retired_at: self.retired_at.or(Some(at)),
            title: String::new(),
            summary: String::new(),
            labels: Vec::new(),
            ..self.clone()
        }
    }

    /// The record once something below it was forgotten: no words left, not readable, still
    /// awaiting its replacement. A root is never re-sealed, so a purged root is retired.
    #[must_use]
    pub fn purged(&self, at: Timestamp) -> SummaryRecord {
        let status = match self.role {
            SummaryRole::Sealed => SummaryStatus::Purged,
            SummaryRole::Root => SummaryStatus::Retired,
        };
        SummaryRecord {
            status,
            retired_at: Some(at),
            title: String::new(),
            summary: String::new(),
            labels: Vec::new(),
            ..self.clone()
        }
    }

    /// The on-disk level: the root is `L1`; a summary sealed at height `h` is `L{h+1}`. Heights
    /// never change after sealing, so neither do paths, however tall the tree grows.
    pub fn level(&self) -> u8 {
        self.role.level(self.height)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A chat role only lowers who the binding says speaks; a prompt is not kept.
    #[test]
    fn chat_roles_never_raise_authority() {
        for speaker in [Actor::Agent, Actor::User, Actor::Integration] {
            assert_eq!(ChatRole::User.actor(speaker), Some(speaker));
            assert_eq!(ChatRole::Assistant.actor(speaker), Some(Actor::Assistant));
            assert_eq!(ChatRole::Tool.actor(speaker), Some(Actor::Tool));
            assert_eq!(ChatRole::Prompt.actor(speaker), None);
        }
    }

    /// An active leaf in the global namespace, valid and current from `at`.
    pub(crate) fn leaf_record(id: &str, at: Timestamp) -> LeafRecord {
        let id = LeafId::parse(id).unwrap();
        let tree = TreeId::uncategorized(Category::Interaction);
        LeafRecord {
            lineage: id.clone(),
            version: Version::FIRST,
            namespace: Namespace::global(),
            category: Category::Interaction,
            body_path: BodyPath::leaf(&Namespace::global(), Category::Interaction, &tree, &id),
            tree_id: tree,
            kind: MemoryKind::Fact,
            title: "t".into(),
            summary: "s".into(),
            subject: None,
            fingerprint: ContentHash::of(id.as_str().as_bytes()),
            body_sha256: ContentHash::of(b""),
            observed_at: at,
            created_at: at,
            validity: Validity::starting(at),
            expires_at: None,
            known: KnownSpan::from(at),
            confidence: Confidence::ONE,
            salience: Confidence::ONE,
            sensitivity: Sensitivity::Normal,
            status: LeafStatus::Active,
            supersedes: None,
            superseded_by: None,
            provenance: Provenance {
                source: SourceRef::UserEntry,
                actor: Actor::User,
                source_sha256: ContentHash::of(b""),
                extractor: "test".into(),
                policy_version: POLICY_VERSION.into(),
            },
            labels: Vec::new(),
            entities: EntityLinks::default(),
            parent: None,
            claims: LeafClaims::default(),
            id,
        }
    }

    #[test]
    fn tree_ids_have_category_and_slug() {
        let tree = TreeId::parse("interaction:project-alpha").unwrap();
        assert_eq!(tree.category(), Category::Interaction);
        assert_eq!(tree.slug(), "project-alpha");
        assert!(TreeId::parse("project-alpha").is_err());
        assert!(TreeId::parse("other:alpha").is_err());
        assert!(TreeId::parse("interaction:../x").is_err());
        assert!(TreeId::uncategorized(Category::Interaction).is_uncategorized());
    }

    #[test]
    fn confidence_refuses_nonsense() {
        assert!(Confidence::new(f32::NAN).is_err());
        assert!(Confidence::new(1.01).is_err());
        assert!(Confidence::new(-0.1).is_err());
        assert_eq!(Confidence::saturating(f32::NAN), Confidence::ZERO);
        assert!(serde_json::from_str::<Confidence>("2.0").is_err());
    }

    #[test]
    fn a_next_version_continues_the_memory_and_a_copy_starts_one() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let t1 = Timestamp::from_second(1_700_003_600).unwrap();
        let old = LeafRecord {
            status: LeafStatus::Superseded,
            superseded_by: Some(LeafId::parse("leaf-9").unwrap()),
            parent: Some(SummaryId::parse("sum-1").unwrap()),
            ..leaf_record("leaf-1", t0)
        };
        let new_id = LeafId::parse("leaf-2").unwrap();

        let next = old.next_version(new_id.clone(), t1);
        assert_eq!((next.lineage.clone(), next.version.get()), (old.lineage.clone(), 2));
        assert_eq!(
            (next.status, next.known, next.validity),
            (LeafStatus::Active, KnownSpan::from(t1), Validity::starting(t1))
        );
        assert_eq!(
            (next.supersedes.as_ref(), next.superseded_by.as_ref(), next.parent.as_ref()),
            (Some(&old.id), None, None)
        );
        assert!(next.body_path.as_str().ends_with("/leaf-2.md") && next.body_sha256 == ContentHash::unwritten());
        assert_eq!((next.title.as_str(), next.fingerprint.clone()), (old.title.as_str(), old.fingerprint.clone()));

        let project = Namespace::project(ScopeId::parse("p1").unwrap());
        let copy = old.copied_as_new_memory(new_id.clone(), project.clone(), LeafStatus::Candidate, t1);
        assert_eq!((copy.lineage.clone(), copy.version), (new_id, Version::FIRST));
        assert_eq!((copy.status, copy.known, copy.validity), (LeafStatus::Candidate, KnownSpan::NEVER, old.validity));
        assert_eq!((copy.supersedes, copy.superseded_by, copy.parent), (None, None, None));
        assert_eq!(copy.namespace, project);
        assert!(copy.body_path.as_str().starts_with(&format!("memory/{}/", project.path_segment())));
    }

    #[test]
    fn content_hash_is_sha256_hex() {
        assert_eq!(
            ContentHash::of(b"abc").as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(ContentHash::parse("XYZ").is_err());
    }
}
