//! Builders for the records the checks use, and a small deterministic random source for the
//! checks that compare a backend with the domain's rules on generated data.

use arbor_domain::claims::LeafClaims;
use arbor_domain::entity::{Entity, EntitySlug, EntityType};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, ScopeId, SummaryId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    Actor, Category, Confidence, ContentHash, EntityLinks, Label, LeafRecord, MemoryKind, POLICY_VERSION, Provenance,
    SourceRef, SubjectKey, SummaryRecord, SummaryRole, SummaryStatus, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::text::fingerprint;
use arbor_domain::time::{KnownSpan, Timestamp, Validity};

use crate::store::{AuditEvent, Job, JobKind};

/// An instant `seconds` after a fixed epoch in 2026, so fixtures are reproducible.
pub fn ts(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_780_000_000 + seconds).expect("fixture timestamps are in range")
}

pub fn scope(id: &str) -> ScopeId {
    ScopeId::parse(id).expect("fixture scope ids are valid")
}

pub fn conversation(id: &str) -> Namespace {
    Namespace::conversation(scope(id))
}

pub fn project(id: &str) -> Namespace {
    Namespace::project(scope(id))
}

pub fn tree_id(slug: &str) -> TreeId {
    TreeId::new(Category::Interaction, &EntitySlug::parse(slug).expect("fixture slugs are valid"))
}

pub fn tree(namespace: &Namespace, tree: &TreeId) -> TreeRecord {
    TreeRecord {
        namespace: namespace.clone(),
        tree_id: tree.clone(),
        entity: None,
        title: format!("{tree} tree"),
        created_at: ts(0),
        root: None,
        root_stale: false,
    }
}

pub fn entity(namespace: &Namespace, id: &str, name: &str) -> Entity {
    Entity {
        id: EntityId::parse(id).expect("fixture entity ids are valid"),
        namespace: namespace.clone(),
        entity_type: EntityType::Person,
        slug: EntitySlug::from_name(name),
        name: name.to_owned(),
        aliases: Vec::new(),
        created_at: ts(0),
    }
}

/// An active leaf observed and activated at `ts(at)`, whose title and summary are `text`.
pub fn leaf(namespace: &Namespace, tree: &TreeId, id: &str, text: &str, at: i64) -> LeafRecord {
    let id = LeafId::parse(id).expect("fixture leaf ids are valid");
    LeafRecord {
        lineage: id.clone(),
        version: Version::FIRST,
        namespace: namespace.clone(),
        category: Category::Interaction,
        tree_id: tree.clone(),
        kind: MemoryKind::Fact,
        title: text.to_owned(),
        summary: text.to_owned(),
        subject: None,
        fingerprint: fingerprint(text),
        body_path: BodyPath::leaf(namespace, Category::Interaction, tree, &id),
        body_sha256: ContentHash::of(text.as_bytes()),
        observed_at: ts(at),
        created_at: ts(at),
        validity: Validity::ALWAYS,
        expires_at: None,
        known: KnownSpan::from(ts(at)),
        confidence: Confidence::saturating(0.9),
        salience: Confidence::saturating(0.5),
        sensitivity: Sensitivity::Normal,
        status: LeafStatus::Active,
        supersedes: None,
        superseded_by: None,
        provenance: Provenance {
            source: SourceRef::UserEntry,
            actor: Actor::User,
            source_sha256: ContentHash::of(text.as_bytes()),
            extractor: "fixture".to_owned(),
            policy_version: POLICY_VERSION.to_owned(),
        },
        labels: Vec::new(),
        entities: EntityLinks::default(),
        parent: None,
        claims: LeafClaims::read(text),
        id,
    }
}

/// A leaf carrying `needle` in every text field, for forget checks.
pub fn leaf_with_secret_words(namespace: &Namespace, tree: &TreeId, id: &str, needle: &str) -> LeafRecord {
    let mut record = leaf(namespace, tree, id, &format!("the {needle} fact"), 1);
    record.subject = Some(SubjectKey::parse(&format!("{needle} subject")).expect("valid subject"));
    record.labels = vec![Label::parse(needle).expect("valid label")];
    record
}

pub fn sealed_summary(
    namespace: &Namespace,
    tree: &TreeId,
    id: &str,
    children: Vec<NodeId>,
    text: &str,
) -> SummaryRecord {
    let id = SummaryId::parse(id).expect("fixture summary ids are valid");
    SummaryRecord {
        namespace: namespace.clone(),
        category: Category::Interaction,
        tree_id: tree.clone(),
        role: SummaryRole::Sealed,
        height: 1,
        parent: None,
        children,
        title: text.to_owned(),
        summary: text.to_owned(),
        body_path: BodyPath::summary(namespace, Category::Interaction, tree, 2, &id),
        body_sha256: ContentHash::of(text.as_bytes()),
        time_range_start: Some(ts(1)),
        time_range_end: Some(ts(2)),
        sealed_at: ts(3),
        labels: Vec::new(),
        sensitivity: Sensitivity::Normal,
        status: SummaryStatus::Current,
        retired_at: None,
        replaces: None,
        id,
    }
}

pub fn job(namespace: &Namespace, id: &str, key: &str, run_after: i64) -> Job {
    Job {
        id: JobId::parse(id).expect("fixture job ids are valid"),
        kind: JobKind::Seal,
        namespace: namespace.clone(),
        tree: None,
        nodes: Vec::new(),
        key: key.to_owned(),
        attempts: 0,
        run_after: ts(run_after),
        created_at: ts(0),
        last_error: None,
    }
}

pub fn audit(namespace: &Namespace, action: &str, at: i64) -> AuditEvent {
    AuditEvent {
        at: ts(at),
        action: action.to_owned(),
        namespace: namespace.clone(),
        node: None,
        content_sha256: None,
        actor: "conformance".to_owned(),
        policy_version: POLICY_VERSION.to_owned(),
    }
}

/// xorshift64*: small, fast, and the same sequence on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}
