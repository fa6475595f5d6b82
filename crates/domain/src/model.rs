//! The data model [design §data-model]: the records of trees, source leaves and summary nodes
//! that the metadata store persists, and the limits they keep. The values they are made of live
//! in `values` and are re-exported here, so `model::TreeId` and `values::TreeId` are one type.

use serde::{Deserialize, Serialize};

use crate::claims::LeafClaims;
use crate::id::{EntityId, LeafId, NodeId, SummaryId, Version};
use crate::lifecycle::{IllegalTransition, LeafStatus, LeafTransition};
use crate::namespace::Namespace;
use crate::paths::BodyPath;
use crate::sensitivity::Sensitivity;
use crate::time::{KnownSpan, Timestamp, Validity};

pub use crate::values::{
    Actor, Category, ChatRole, Confidence, ConfidenceOutOfRange, ContentHash, Fingerprint, Label, MemoryKind,
    Provenance, Salience, SourceRef, SubjectKey, TreeId,
};

/// The longest title a memory or summary carries, in characters: what a caller may give
/// (`hints.title`, a correction's title) and what a model's or the heuristics' title is cut to.
pub const MAX_TITLE_CHARS: usize = 200;

/// The longest summary a sealed or root summary keeps, in characters, on its row and in its
/// body; a model's longer draft is refused.
pub const MAX_SUMMARY_CHARS: usize = 4_000;

/// The longest summary a leaf row keeps, in characters; the whole text is in its body.
pub const LEAF_SUMMARY_CHARS: usize = 280;

/// A leaf's words as its row keeps them: at most [`LEAF_SUMMARY_CHARS`] characters.
pub fn leaf_summary(text: &str) -> String {
    crate::text::truncate_chars(text, LEAF_SUMMARY_CHARS)
}

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

    /// This version as one that waits for a person: a candidate, never known to be current
    /// until someone confirms it (an edited suggestion stays a suggestion).
    #[must_use]
    pub fn waiting_for_a_person(self) -> LeafRecord {
        LeafRecord { status: LeafStatus::Candidate, known: KnownSpan::NEVER, ..self }
    }

    /// This memory confirmed as history the current memory `current` already replaced, valid
    /// over `validity` [design §supersession]: a memory of its own (its first version, replacing
    /// nothing), superseded by `current` from the start, and never known to be current.
    pub fn as_earlier_history(
        &self,
        current: &LeafId,
        validity: Validity,
        at: Timestamp,
    ) -> Result<LeafRecord, IllegalTransition> {
        Ok(LeafRecord {
            lineage: self.id.clone(),
            version: Version::FIRST,
            supersedes: None,
            validity,
            known: KnownSpan::NEVER,
            ..self.superseded_by(current, at, at)?
        })
    }

    /// This leaf as its document records it: as it was written — current, replaced by nothing,
    /// its validity open (replacing it closed it later; an end said when it was written is not
    /// told apart).
    #[must_use]
    pub fn as_written(&self) -> LeafRecord {
        let mut validity = self.validity;
        if self.status == LeafStatus::Superseded {
            validity.valid_to = None;
        }
        LeafRecord { status: LeafStatus::Active, superseded_by: None, validity, ..self.clone() }
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
    use crate::id::ScopeId;

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
