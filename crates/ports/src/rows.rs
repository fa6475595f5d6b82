//! Records as flat rows of SQL-friendly values (text, integers, floats), and back. Every SQL
//! adapter stores the same columns; converting here, once, means each adapter only maps
//! columns to fields, and every value read back is validated by the domain's own parsers, so
//! a damaged row is an integrity error, not a panic or a leak.
//!
//! Conventions shared by the SQL backends: timestamps are nanoseconds since the Unix epoch
//! (`i64`); sensitivity is `0` normal, `1` sensitive, `2` restricted, so it orders; lists and
//! provenance are JSON text; node ids are `leaf:<id>` or `summary:<id>`.

use arbor_domain::claims::LeafClaims;
use arbor_domain::entity::{Entity, EntitySlug, EntityType};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, SummaryId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    Category, Confidence, ContentHash, EntityLinks, LeafRecord, MemoryKind, SubjectKey, SummaryRecord, SummaryRole,
    SummaryStatus, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::reconcile::{Claim, LookupKey, WordSignature};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState};

use crate::error::{Error, Result};
use crate::store::{Job, JobKind};

/// A stored value that does not parse back into a domain type.
pub fn corrupt(what: &'static str, id: &str, detail: impl std::fmt::Display) -> Error {
    Error::Integrity { what, id: id.to_owned(), detail: detail.to_string() }
}

/// Nanoseconds since the epoch, as the SQL backends store instants.
pub fn ts(at: Timestamp) -> Result<i64> {
    if !arbor_domain::time::is_storable(at) {
        let range = arbor_domain::time::STORABLE_RANGE;
        return Err(Error::invalid("timestamp", format!("{at} is outside the range Arbor stores ({range})")));
    }
    i64::try_from(at.as_nanosecond())
        .map_err(|_| Error::invalid("timestamp", format!("{at} does not fit in 64-bit nanoseconds")))
}

pub fn opt_ts(at: Option<Timestamp>) -> Result<Option<i64>> {
    at.map(ts).transpose()
}

pub fn from_ts(nanos: i64) -> Timestamp {
    // Every i64 nanosecond count is a valid timestamp.
    Timestamp::from_nanosecond(i128::from(nanos)).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A job kind as stored ([`JobKind::as_str`]).
pub fn job_kind(stored: &str) -> Option<JobKind> {
    [JobKind::Seal, JobKind::Index, JobKind::Purge].into_iter().find(|kind| kind.as_str() == stored)
}

pub fn sensitivity_code(s: Sensitivity) -> i64 {
    match s {
        Sensitivity::Normal => 0,
        Sensitivity::Sensitive => 1,
        Sensitivity::Restricted => 2,
    }
}

pub fn sensitivity_from(code: i64) -> Option<Sensitivity> {
    match code {
        0 => Some(Sensitivity::Normal),
        1 => Some(Sensitivity::Sensitive),
        2 => Some(Sensitivity::Restricted),
        _ => None,
    }
}

/// A short stable hash of a subject key, so an index over subjects holds no words.
pub fn subject_hash(subject: &SubjectKey) -> String {
    ContentHash::of(subject.as_str().as_bytes()).as_str()[..24].to_owned()
}

/// A lookup key as a backend stores it: 64 bits of the SHA-256 of the namespace and the key,
/// so an index over keys holds no words and a key of one namespace never matches another's
/// (the reads check the namespace as well).
pub fn lookup_key_hash(namespace: &Namespace, key: &LookupKey) -> i64 {
    let text = format!("{namespace}\u{0}{}", key.as_str());
    let hash = ContentHash::of(text.as_bytes());
    let hex = &hash.as_str()[..16];
    // Sixteen hex digits are 64 bits; stored as a signed integer, as SQL backends hold them.
    u64::from_str_radix(hex, 16).map_or(0, |bits| i64::from_ne_bytes(bits.to_ne_bytes()))
}

/// A leaf's entries in the lookup index ([`MetadataStore::leaves_filed_under`]): the hashes of
/// the keys it is filed under, each stored with the signature of its words.
///
/// [`MetadataStore::leaves_filed_under`]: crate::MetadataStore::leaves_filed_under
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FiledEntries {
    pub hashes: Vec<i64>,
    /// [`WordSignature`]'s bits, as SQL backends hold 64 bits.
    pub words: i64,
}

/// A leaf's entries while its status is filed ([`LeafStatus::is_filed`]: active) —
/// [`Claim::filed_under`] of its summary, and the keys of its claims
/// ([`arbor_domain::reconcile::claim_keys`]) — and none in any other status. What every backend
/// writes with the leaf's row and removes with it.
pub fn filed_entries(leaf: &LeafRecord) -> FiledEntries {
    filed_entries_of(&leaf.namespace, leaf.status, &leaf.summary, &leaf.claims.claims)
}

/// [`filed_entries`] from the columns it reads.
pub fn filed_entries_of(
    namespace: &Namespace,
    status: LeafStatus,
    summary: &str,
    claims: &[arbor_domain::claims::Claim],
) -> FiledEntries {
    if !status.is_filed() {
        return FiledEntries::default();
    }
    let mut filing = Claim::read(summary).filed_under();
    filing.keys.extend(arbor_domain::reconcile::claim_keys(claims));
    let mut hashes: Vec<i64> = filing.keys.iter().map(|key| lookup_key_hash(namespace, key)).collect();
    hashes.sort_unstable();
    hashes.dedup();
    FiledEntries { hashes, words: signature_bits(filing.words) }
}

/// The claims a stored `claims` column holds (empty for a row written before claims were
/// kept), for a backend that re-files a leaf from its columns.
pub fn stored_claims(id: &str, raw: &str) -> Result<Vec<arbor_domain::claims::Claim>> {
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    json::<LeafClaims>("leaf", id, raw).map(|c| c.claims)
}

/// A signature's 64 bits as a signed integer, and back.
pub fn signature_bits(words: WordSignature) -> i64 {
    i64::from_ne_bytes(words.0.to_ne_bytes())
}

pub fn signature_from(bits: i64) -> WordSignature {
    WordSignature(u64::from_ne_bytes(bits.to_ne_bytes()))
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::invalid("record", format!("cannot be encoded: {e}")))
}

fn json<T: serde::de::DeserializeOwned>(what: &'static str, id: &str, raw: &str) -> Result<T> {
    serde_json::from_str(raw).map_err(|e| corrupt(what, id, e))
}

fn known<T>(what: &'static str, id: &str, value: Option<T>, raw: &str) -> Result<T> {
    value.ok_or_else(|| corrupt(what, id, format!("unknown value {raw:?}")))
}

/// 64-bit FNV-1a of a token: its identity in the full-text indexes, which hold token hashes
/// instead of words so that no index page keeps a forgotten word.
pub fn term_id(token: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in token.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The hashed form of a token as a full-text index stores it: `t` + [`term_id`] in base 36,
/// a word any tokenizer keeps whole.
pub fn term_lexeme(token: &str) -> String {
    let mut hash = term_id(token);
    let mut digits = Vec::with_capacity(14);
    loop {
        let digit = (hash % 36) as u8;
        digits.push(if digit < 10 { b'0' + digit } else { b'a' + digit - 10 });
        hash /= 36;
        if hash == 0 {
            break;
        }
    }
    digits.push(b't');
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// A node id as stored in text columns: `leaf:<id>` or `summary:<id>`.
pub fn node_to_str(node: &NodeId) -> String {
    match node {
        NodeId::Leaf(id) => format!("leaf:{id}"),
        NodeId::Summary(id) => format!("summary:{id}"),
    }
}

pub fn node_from_str(raw: &str) -> Result<NodeId> {
    let bad = |e: &dyn std::fmt::Display| corrupt("node id", raw, e);
    match raw.split_once(':') {
        Some(("leaf", id)) => Ok(NodeId::Leaf(LeafId::parse(id).map_err(|e| bad(&e))?)),
        Some(("summary", id)) => Ok(NodeId::Summary(SummaryId::parse(id).map_err(|e| bad(&e))?)),
        _ => Err(bad(&"expected leaf:<id> or summary:<id>")),
    }
}

/// A leaf as a row. Field order is column order.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafRow {
    pub id: String,
    pub lineage: String,
    pub version: i64,
    pub namespace: String,
    pub category: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    pub summary: String,
    pub subject: Option<String>,
    pub fingerprint: String,
    pub body_path: String,
    pub body_sha256: String,
    pub observed_at: i64,
    pub created_at: i64,
    pub valid_from: Option<i64>,
    pub valid_to: Option<i64>,
    pub expires_at: Option<i64>,
    pub known_from: Option<i64>,
    pub known_until: Option<i64>,
    pub confidence: f64,
    pub salience: f64,
    pub sensitivity: i64,
    pub status: String,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub provenance: String,
    pub labels: String,
    pub entity_primary: Option<String>,
    pub entities_secondary: String,
    pub parent: Option<String>,
    /// [`subject_hash`] of the subject: what the subject index holds instead of the words.
    pub subject_hash: Option<String>,
    /// The leaf's claims and reconciliation marks, as JSON (`LeafClaims`).
    pub claims: String,
}

impl LeafRow {
    /// The columns, in field order.
    pub const COLUMNS: [&'static str; 33] = [
        "id",
        "lineage",
        "version",
        "namespace",
        "category",
        "tree_id",
        "kind",
        "title",
        "summary",
        "subject",
        "fingerprint",
        "body_path",
        "body_sha256",
        "observed_at",
        "created_at",
        "valid_from",
        "valid_to",
        "expires_at",
        "known_from",
        "known_until",
        "confidence",
        "salience",
        "sensitivity",
        "status",
        "supersedes",
        "superseded_by",
        "provenance",
        "labels",
        "entity_primary",
        "entities_secondary",
        "parent",
        "subject_hash",
        "claims",
    ];

    pub fn from_record(leaf: &LeafRecord) -> Result<LeafRow> {
        Ok(LeafRow {
            id: leaf.id.to_string(),
            lineage: leaf.lineage.to_string(),
            version: i64::from(leaf.version.get()),
            namespace: leaf.namespace.to_string(),
            category: leaf.category.as_str().to_owned(),
            tree_id: leaf.tree_id.to_string(),
            kind: leaf.kind.as_str().to_owned(),
            title: leaf.title.clone(),
            summary: leaf.summary.clone(),
            subject: leaf.subject.as_ref().map(|s| s.as_str().to_owned()),
            fingerprint: leaf.fingerprint.as_str().to_owned(),
            body_path: leaf.body_path.to_string(),
            body_sha256: leaf.body_sha256.as_str().to_owned(),
            observed_at: ts(leaf.observed_at)?,
            created_at: ts(leaf.created_at)?,
            valid_from: opt_ts(leaf.validity.valid_from)?,
            valid_to: opt_ts(leaf.validity.valid_to)?,
            expires_at: opt_ts(leaf.expires_at)?,
            known_from: opt_ts(leaf.known.known_from)?,
            known_until: opt_ts(leaf.known.known_until)?,
            confidence: f64::from(leaf.confidence.get()),
            salience: f64::from(leaf.salience.get()),
            sensitivity: sensitivity_code(leaf.sensitivity),
            status: leaf.status.as_str().to_owned(),
            supersedes: leaf.supersedes.as_ref().map(ToString::to_string),
            superseded_by: leaf.superseded_by.as_ref().map(ToString::to_string),
            provenance: to_json(&leaf.provenance)?,
            labels: to_json(&leaf.labels)?,
            entity_primary: leaf.entities.primary.as_ref().map(ToString::to_string),
            entities_secondary: to_json(&leaf.entities.secondary)?,
            parent: leaf.parent.as_ref().map(ToString::to_string),
            subject_hash: leaf.subject.as_ref().map(subject_hash),
            claims: to_json(&leaf.claims)?,
        })
    }

    pub fn into_record(self) -> Result<LeafRecord> {
        let what = "leaf";
        let raw = self.id;
        let bad = |e: &dyn std::fmt::Display| corrupt(what, &raw, e);
        let leaf_id = |r: Option<String>| -> Result<Option<LeafId>> {
            r.map(|r| LeafId::parse(&r).map_err(|e| bad(&e))).transpose()
        };
        Ok(LeafRecord {
            id: LeafId::parse(&raw).map_err(|e| bad(&e))?,
            lineage: LeafId::parse(&self.lineage).map_err(|e| bad(&e))?,
            version: known(what, &raw, u32::try_from(self.version).ok().and_then(Version::new), "version")?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            category: known(what, &raw, Category::parse(&self.category), &self.category)?,
            tree_id: TreeId::parse(&self.tree_id).map_err(|e| bad(&e))?,
            kind: known(what, &raw, MemoryKind::parse(&self.kind), &self.kind)?,
            title: self.title,
            summary: self.summary,
            subject: self.subject.map(|s| SubjectKey::parse(&s).map_err(|e| bad(&e))).transpose()?,
            fingerprint: ContentHash::parse(&self.fingerprint).map_err(|e| bad(&e))?,
            body_path: BodyPath::parse(&self.body_path).map_err(|e| bad(&e))?,
            body_sha256: ContentHash::parse(&self.body_sha256).map_err(|e| bad(&e))?,
            observed_at: from_ts(self.observed_at),
            created_at: from_ts(self.created_at),
            validity: Validity::stored(self.valid_from.map(from_ts), self.valid_to.map(from_ts))
                .map_err(|e| bad(&e))?,
            expires_at: self.expires_at.map(from_ts),
            known: KnownSpan { known_from: self.known_from.map(from_ts), known_until: self.known_until.map(from_ts) },
            confidence: Confidence::new(self.confidence as f32).map_err(|e| bad(&e))?,
            salience: Confidence::new(self.salience as f32).map_err(|e| bad(&e))?,
            sensitivity: known(what, &raw, sensitivity_from(self.sensitivity), "sensitivity")?,
            status: known(what, &raw, LeafStatus::parse(&self.status), &self.status)?,
            supersedes: leaf_id(self.supersedes)?,
            superseded_by: leaf_id(self.superseded_by)?,
            provenance: json(what, &raw, &self.provenance)?,
            labels: json(what, &raw, &self.labels)?,
            entities: EntityLinks {
                primary: self.entity_primary.map(|p| EntityId::parse(&p).map_err(|e| bad(&e))).transpose()?,
                secondary: json(what, &raw, &self.entities_secondary)?,
            },
            parent: self.parent.map(|p| SummaryId::parse(&p).map_err(|e| bad(&e))).transpose()?,
            // A row written before claims were kept holds none ("" or "{}").
            claims: if self.claims.is_empty() { LeafClaims::default() } else { json(what, &raw, &self.claims)? },
        })
    }
}

/// A summary as a row. Field order is column order.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub id: String,
    pub namespace: String,
    pub category: String,
    pub tree_id: String,
    pub role: String,
    pub height: i64,
    pub parent: Option<String>,
    pub children: String,
    pub title: String,
    pub summary: String,
    pub body_path: String,
    pub body_sha256: String,
    pub time_range_start: Option<i64>,
    pub time_range_end: Option<i64>,
    pub sealed_at: i64,
    pub labels: String,
    pub sensitivity: i64,
    pub status: String,
    pub retired_at: Option<i64>,
    pub replaces: Option<String>,
}

pub fn role_str(role: SummaryRole) -> &'static str {
    match role {
        SummaryRole::Sealed => "sealed",
        SummaryRole::Root => "root",
    }
}

impl SummaryRow {
    pub const COLUMNS: [&'static str; 20] = [
        "id",
        "namespace",
        "category",
        "tree_id",
        "role",
        "height",
        "parent",
        "children",
        "title",
        "summary",
        "body_path",
        "body_sha256",
        "time_range_start",
        "time_range_end",
        "sealed_at",
        "labels",
        "sensitivity",
        "status",
        "retired_at",
        "replaces",
    ];

    pub fn from_record(s: &SummaryRecord) -> Result<SummaryRow> {
        Ok(SummaryRow {
            id: s.id.to_string(),
            namespace: s.namespace.to_string(),
            category: s.category.as_str().to_owned(),
            tree_id: s.tree_id.to_string(),
            role: role_str(s.role).to_owned(),
            height: i64::from(s.height),
            parent: s.parent.as_ref().map(ToString::to_string),
            children: to_json(&s.children)?,
            title: s.title.clone(),
            summary: s.summary.clone(),
            body_path: s.body_path.to_string(),
            body_sha256: s.body_sha256.as_str().to_owned(),
            time_range_start: opt_ts(s.time_range_start)?,
            time_range_end: opt_ts(s.time_range_end)?,
            sealed_at: ts(s.sealed_at)?,
            labels: to_json(&s.labels)?,
            sensitivity: sensitivity_code(s.sensitivity),
            status: s.status.as_str().to_owned(),
            retired_at: opt_ts(s.retired_at)?,
            replaces: s.replaces.as_ref().map(ToString::to_string),
        })
    }

    pub fn into_record(self) -> Result<SummaryRecord> {
        let what = "summary";
        let raw = self.id;
        let bad = |e: &dyn std::fmt::Display| corrupt(what, &raw, e);
        let summary_id = |r: Option<String>| -> Result<Option<SummaryId>> {
            r.map(|r| SummaryId::parse(&r).map_err(|e| bad(&e))).transpose()
        };
        let role = match self.role.as_str() {
            "sealed" => SummaryRole::Sealed,
            "root" => SummaryRole::Root,
            other => return Err(bad(&format!("unknown role {other:?}"))),
        };
        let status = match self.status.as_str() {
            "current" => SummaryStatus::Current,
            "stale" => SummaryStatus::Stale,
            "purged" => SummaryStatus::Purged,
            "retired" => SummaryStatus::Retired,
            other => return Err(bad(&format!("unknown status {other:?}"))),
        };
        Ok(SummaryRecord {
            id: SummaryId::parse(&raw).map_err(|e| bad(&e))?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            category: known(what, &raw, Category::parse(&self.category), &self.category)?,
            tree_id: TreeId::parse(&self.tree_id).map_err(|e| bad(&e))?,
            role,
            height: known(what, &raw, u8::try_from(self.height).ok(), "height")?,
            parent: summary_id(self.parent)?,
            children: json(what, &raw, &self.children)?,
            title: self.title,
            summary: self.summary,
            body_path: BodyPath::parse(&self.body_path).map_err(|e| bad(&e))?,
            body_sha256: ContentHash::parse(&self.body_sha256).map_err(|e| bad(&e))?,
            time_range_start: self.time_range_start.map(from_ts),
            time_range_end: self.time_range_end.map(from_ts),
            sealed_at: from_ts(self.sealed_at),
            labels: json(what, &raw, &self.labels)?,
            sensitivity: known(what, &raw, sensitivity_from(self.sensitivity), "sensitivity")?,
            status,
            retired_at: self.retired_at.map(from_ts),
            replaces: summary_id(self.replaces)?,
        })
    }
}

/// A tree as a row.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    pub namespace: String,
    pub tree_id: String,
    pub entity: Option<String>,
    pub title: String,
    pub created_at: i64,
    pub root: Option<String>,
    pub root_stale: bool,
}

impl TreeRow {
    pub const COLUMNS: [&'static str; 7] =
        ["namespace", "tree_id", "entity", "title", "created_at", "root", "root_stale"];

    pub fn from_record(tree: &TreeRecord) -> Result<TreeRow> {
        Ok(TreeRow {
            namespace: tree.namespace.to_string(),
            tree_id: tree.tree_id.to_string(),
            entity: tree.entity.as_ref().map(ToString::to_string),
            title: tree.title.clone(),
            created_at: ts(tree.created_at)?,
            root: tree.root.as_ref().map(ToString::to_string),
            root_stale: tree.root_stale,
        })
    }

    pub fn into_record(self) -> Result<TreeRecord> {
        let raw = self.tree_id;
        let bad = |e: &dyn std::fmt::Display| corrupt("tree", &raw, e);
        Ok(TreeRecord {
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            entity: self.entity.map(|e| EntityId::parse(&e).map_err(|err| bad(&err))).transpose()?,
            title: self.title,
            created_at: from_ts(self.created_at),
            root: self.root.map(|r| SummaryId::parse(&r).map_err(|e| bad(&e))).transpose()?,
            root_stale: self.root_stale,
            tree_id: TreeId::parse(&raw).map_err(|e| bad(&e))?,
        })
    }
}

/// An entity as a row.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityRow {
    pub id: String,
    pub namespace: String,
    pub entity_type: String,
    pub slug: String,
    pub name: String,
    pub aliases: String,
    pub created_at: i64,
}

impl EntityRow {
    pub const COLUMNS: [&'static str; 7] = ["id", "namespace", "entity_type", "slug", "name", "aliases", "created_at"];

    pub fn from_record(entity: &Entity) -> Result<EntityRow> {
        Ok(EntityRow {
            id: entity.id.to_string(),
            namespace: entity.namespace.to_string(),
            entity_type: entity.entity_type.as_str().to_owned(),
            slug: entity.slug.to_string(),
            name: entity.name.clone(),
            aliases: to_json(&entity.aliases)?,
            created_at: ts(entity.created_at)?,
        })
    }

    pub fn into_record(self) -> Result<Entity> {
        let what = "entity";
        let raw = self.id;
        let bad = |e: &dyn std::fmt::Display| corrupt(what, &raw, e);
        Ok(Entity {
            id: EntityId::parse(&raw).map_err(|e| bad(&e))?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            entity_type: known(what, &raw, EntityType::parse(&self.entity_type), &self.entity_type)?,
            slug: EntitySlug::parse(&self.slug).map_err(|e| bad(&e))?,
            name: self.name,
            aliases: json(what, &raw, &self.aliases)?,
            created_at: from_ts(self.created_at),
        })
    }
}

/// A job as a row (without its lease, which only the store looks at).
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub id: String,
    pub kind: String,
    pub namespace: String,
    pub tree_id: Option<String>,
    pub nodes: String,
    pub key: String,
    pub attempts: i64,
    pub run_after: i64,
    pub created_at: i64,
    pub last_error: Option<String>,
}

impl JobRow {
    pub const COLUMNS: [&'static str; 10] =
        ["id", "kind", "namespace", "tree_id", "nodes", "key", "attempts", "run_after", "created_at", "last_error"];

    pub fn from_record(job: &Job) -> Result<JobRow> {
        Ok(JobRow {
            id: job.id.to_string(),
            kind: job.kind.as_str().to_owned(),
            namespace: job.namespace.to_string(),
            tree_id: job.tree.as_ref().map(ToString::to_string),
            nodes: to_json(&job.nodes.iter().map(node_to_str).collect::<Vec<_>>())?,
            key: job.key.clone(),
            attempts: i64::from(job.attempts),
            run_after: ts(job.run_after)?,
            created_at: ts(job.created_at)?,
            last_error: job.last_error.clone(),
        })
    }

    pub fn into_record(self) -> Result<Job> {
        let raw = self.id;
        let bad = |e: &dyn std::fmt::Display| corrupt("job", &raw, e);
        let nodes: Vec<String> = json("job", &raw, &self.nodes)?;
        Ok(Job {
            id: JobId::parse(&raw).map_err(|e| bad(&e))?,
            kind: job_kind(&self.kind).ok_or_else(|| bad(&format!("unknown job kind {:?}", self.kind)))?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            tree: self.tree_id.map(|t| TreeId::parse(&t).map_err(|e| bad(&e))).transpose()?,
            nodes: nodes.iter().map(|n| node_from_str(n)).collect::<Result<_>>()?,
            key: self.key,
            attempts: u32::try_from(self.attempts).unwrap_or(u32::MAX),
            run_after: from_ts(self.run_after),
            created_at: from_ts(self.created_at),
            last_error: self.last_error,
        })
    }
}

/// An index document's filter columns ([`NodeFacts`]) as every index stores them, so the
/// backends that evaluate a `VisibilityFilter` in their own query language all compare the
/// same values; read back with [`into_facts`](Self::into_facts).
#[derive(Debug, Clone, PartialEq)]
pub struct FactsRow {
    pub node_kind: String,
    pub namespace: String,
    pub category: String,
    pub tree_id: String,
    pub kind: Option<String>,
    pub state: String,
    pub valid_from: Option<i64>,
    pub valid_to: Option<i64>,
    pub known_from: Option<i64>,
    pub known_until: Option<i64>,
    pub expires_at: Option<i64>,
    pub sensitivity: i64,
    pub time_start: i64,
    pub time_end: i64,
}

impl FactsRow {
    /// The columns, in field order.
    pub const COLUMNS: [&'static str; 14] = [
        "node_kind",
        "namespace",
        "category",
        "tree_id",
        "kind",
        "state",
        "valid_from",
        "valid_to",
        "known_from",
        "known_until",
        "expires_at",
        "sensitivity",
        "time_start",
        "time_end",
    ];

    pub fn from_facts(facts: &NodeFacts) -> Result<FactsRow> {
        Ok(FactsRow {
            node_kind: facts.node.as_str().to_owned(),
            namespace: facts.namespace.to_string(),
            category: facts.category.as_str().to_owned(),
            tree_id: facts.tree_id.to_string(),
            kind: facts.kind.map(|kind| kind.as_str().to_owned()),
            state: facts.state.as_str().to_owned(),
            valid_from: opt_ts(facts.validity.valid_from)?,
            valid_to: opt_ts(facts.validity.valid_to)?,
            known_from: opt_ts(facts.known.known_from)?,
            known_until: opt_ts(facts.known.known_until)?,
            expires_at: opt_ts(facts.expires_at)?,
            sensitivity: sensitivity_code(facts.sensitivity),
            time_start: ts(facts.time_start)?,
            time_end: ts(facts.time_end)?,
        })
    }

    /// The facts a stored row holds, for the document `id` (for messages).
    pub fn into_facts(self, id: &str) -> Result<NodeFacts> {
        let bad = |e: &dyn std::fmt::Display| corrupt("index document", id, e);
        Ok(NodeFacts {
            node: NodeKind::parse(&self.node_kind)
                .ok_or_else(|| bad(&format!("unknown node kind {:?}", self.node_kind)))?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| bad(&e))?,
            category: Category::parse(&self.category).ok_or_else(|| bad(&"unknown category"))?,
            tree_id: TreeId::parse(&self.tree_id).map_err(|e| bad(&e))?,
            kind: self.kind.map(|k| MemoryKind::parse(&k).ok_or_else(|| bad(&"unknown kind"))).transpose()?,
            state: NodeState::parse(&self.state).ok_or_else(|| bad(&format!("unknown state {:?}", self.state)))?,
            validity: Validity::stored(self.valid_from.map(from_ts), self.valid_to.map(from_ts))
                .map_err(|e| bad(&e))?,
            known: KnownSpan { known_from: self.known_from.map(from_ts), known_until: self.known_until.map(from_ts) },
            expires_at: self.expires_at.map(from_ts),
            sensitivity: sensitivity_from(self.sensitivity).ok_or_else(|| bad(&"unknown sensitivity"))?,
            time_start: from_ts(self.time_start),
            time_end: from_ts(self.time_end),
        })
    }
}

/// Status conditions of SQL queries, written from the domain's status rules, so a store's
/// query asks exactly what the rule says and a status added to the domain reaches every
/// backend (the stores use these instead of status literals).
pub mod status_sql {
    use arbor_domain::lifecycle::LeafStatus;
    use arbor_domain::model::SummaryStatus;

    fn quoted(names: impl Iterator<Item = &'static str>) -> String {
        names.map(|name| format!("'{name}'")).collect::<Vec<_>>().join(", ")
    }

    /// `status IN (…)`: the leaf statuses `rule` holds for. A row whose status the domain does
    /// not know (a damaged one) does not match.
    pub fn leaves_where(rule: impl Fn(LeafStatus) -> bool) -> String {
        format!("status IN ({})", quoted(LeafStatus::ALL.into_iter().filter(|s| rule(*s)).map(LeafStatus::as_str)))
    }

    /// `status NOT IN (…)`: every leaf but those in a status `rule` refuses. A row whose status
    /// the domain does not know matches, so a check that must not destroy what it cannot read
    /// ("does any leaf still hold content?") fails closed.
    pub fn leaves_unless(rule: impl Fn(LeafStatus) -> bool) -> String {
        format!("status NOT IN ({})", quoted(LeafStatus::ALL.into_iter().filter(|s| !rule(*s)).map(LeafStatus::as_str)))
    }

    /// `status NOT IN (…)` over summaries; see [`leaves_unless`].
    pub fn summaries_unless(rule: impl Fn(SummaryStatus) -> bool) -> String {
        format!(
            "status NOT IN ({})",
            quoted(SummaryStatus::ALL.into_iter().filter(|s| !rule(*s)).map(SummaryStatus::as_str))
        )
    }

    /// `status IN (…)`: the summary statuses `rule` holds for.
    pub fn summaries_where(rule: impl Fn(SummaryStatus) -> bool) -> String {
        format!(
            "status IN ({})",
            quoted(SummaryStatus::ALL.into_iter().filter(|s| rule(*s)).map(SummaryStatus::as_str))
        )
    }

    /// Whether `migration` declares the unique index over live fingerprints on exactly
    /// [`LeafStatus::HOLDING_FINGERPRINT`] (in any order): SQL files cannot call the rule, so
    /// each store's test holds its migration to it.
    pub fn holds_fingerprint_in(migration: &str) -> bool {
        let after = migration.split("leaves_live_fingerprint").nth(1).unwrap_or(migration);
        let Some(list) = after.split("status IN (").nth(1).and_then(|rest| rest.split(')').next()) else {
            return false;
        };
        let mut found: Vec<&str> = list.split(',').map(|s| s.trim().trim_matches('\'')).collect();
        let mut rule: Vec<&str> = LeafStatus::HOLDING_FINGERPRINT.iter().map(|s| s.as_str()).collect();
        found.sort_unstable();
        rule.sort_unstable();
        found == rule
    }

    /// How many summaries are in `status`.
    pub fn count_summaries_in(status: SummaryStatus) -> String {
        format!("SELECT COUNT(*) FROM summaries WHERE status = '{}'", status.as_str())
    }

    /// [`LeafStatus::sits_in_tree`] over a `leaves` row, whose `known_from` is set once the
    /// leaf was ever current.
    pub fn leaf_sits_in_tree() -> String {
        format!(
            "({} OR (known_from IS NOT NULL AND {}))",
            leaves_where(|s| s.sits_in_tree(false)),
            leaves_where(|s| s.sits_in_tree(true))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::fixtures::{conversation, leaf, tree_id};

    #[test]
    fn a_leaf_survives_the_round_trip() {
        let record = leaf(&conversation("c1"), &tree_id("topic"), "leaf-1", "the text", 7);
        let row = LeafRow::from_record(&record).unwrap();
        assert_eq!(row.clone().into_record().unwrap(), record);
        let damaged = LeafRow { status: "vanished".into(), ..row };
        assert!(matches!(damaged.into_record(), Err(Error::Integrity { .. })));
    }

    /// The conditions say what the rules say, and a store's migration that cannot call them
    /// (the partial unique index over live fingerprints) is held to the rule by
    /// [`status_sql::holds_fingerprint_in`].
    #[test]
    fn status_conditions_follow_the_rules() {
        assert_eq!(status_sql::leaves_unless(LeafStatus::has_content), "status NOT IN ('tombstone')");
        assert_eq!(status_sql::summaries_unless(SummaryStatus::is_tree_member), "status NOT IN ('retired')");
        assert_eq!(status_sql::summaries_where(SummaryStatus::is_readable), "status IN ('current', 'stale')");
        assert_eq!(
            status_sql::leaf_sits_in_tree(),
            "(status IN ('active', 'superseded') OR (known_from IS NOT NULL AND status IN ('active', 'superseded', 'archived')))"
        );
        assert_eq!(status_sql::summaries_where(SummaryStatus::awaits_reseal), "status IN ('stale', 'purged')");
        let migration = "CREATE UNIQUE INDEX x ON leaves (f)\n    WHERE status IN ('active', 'candidate', 'rejected');";
        assert!(status_sql::holds_fingerprint_in(migration));
        assert!(!status_sql::holds_fingerprint_in(&migration.replace(", 'rejected'", "")));
    }

    #[test]
    fn index_facts_survive_the_round_trip() {
        let record = leaf(&conversation("c1"), &tree_id("topic"), "leaf-1", "the text", 7);
        let facts = NodeFacts::of_leaf(&record);
        let row = FactsRow::from_facts(&facts).unwrap();
        assert_eq!(row.clone().into_facts("leaf-1").unwrap(), facts);
        let damaged = FactsRow { state: "vanished".into(), ..row };
        assert!(matches!(damaged.into_facts("leaf-1"), Err(Error::Integrity { .. })));
    }

    #[test]
    fn node_ids_round_trip_and_bad_ones_are_integrity_errors() {
        let node = NodeId::Leaf(LeafId::parse("leaf-1").unwrap());
        assert_eq!(node_from_str(&node_to_str(&node)).unwrap(), node);
        assert!(matches!(node_from_str("tree:x"), Err(Error::Integrity { .. })));
    }
}
