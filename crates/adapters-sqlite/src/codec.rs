//! Converting between rows and domain records. Every value read back is validated by the same
//! parsers the domain uses, so a damaged row is an integrity error, not a panic or a leak.

use arbor_domain::entity::{Entity, EntitySlug, EntityType};
use arbor_domain::id::{EntityId, LeafId, NodeId, SummaryId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    Category, Confidence, ContentHash, EntityLinks, LeafRecord, MemoryKind, SubjectKey, SummaryRecord, SummaryRole,
    SummaryStatus, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_ports::{Error, Result};
use rusqlite::Row;

use crate::error::corrupt;

/// Nanoseconds since the epoch, as SQLite stores them.
pub(crate) fn ts(at: Timestamp) -> Result<i64> {
    i64::try_from(at.as_nanosecond())
        .map_err(|_| Error::invalid("timestamp", format!("{at} is outside the range the store can hold (1678-2261)")))
}

pub(crate) fn opt_ts(at: Option<Timestamp>) -> Result<Option<i64>> {
    at.map(ts).transpose()
}

pub(crate) fn from_ts(nanos: i64) -> Timestamp {
    // Every i64 nanosecond count is a valid timestamp.
    Timestamp::from_nanosecond(i128::from(nanos)).unwrap_or(Timestamp::UNIX_EPOCH)
}

pub(crate) fn sensitivity_code(s: Sensitivity) -> i64 {
    match s {
        Sensitivity::Normal => 0,
        Sensitivity::Sensitive => 1,
        Sensitivity::Restricted => 2,
    }
}

fn sensitivity_from(code: i64) -> Option<Sensitivity> {
    match code {
        0 => Some(Sensitivity::Normal),
        1 => Some(Sensitivity::Sensitive),
        2 => Some(Sensitivity::Restricted),
        _ => None,
    }
}

/// A short stable hash of a subject key, so the subject index holds no words.
pub(crate) fn subject_hash(subject: &SubjectKey) -> String {
    ContentHash::of(subject.as_str().as_bytes()).as_str()[..24].to_owned()
}

pub(crate) fn role_str(role: SummaryRole) -> &'static str {
    match role {
        SummaryRole::Sealed => "sealed",
        SummaryRole::Root => "root",
    }
}

fn parse<T>(what: &'static str, id: &str, value: Option<T>, raw: &str) -> Result<T> {
    value.ok_or_else(|| corrupt(what, id, format!("unknown value {raw:?}")))
}

fn json<T: serde::de::DeserializeOwned>(what: &'static str, id: &str, raw: &str) -> Result<T> {
    serde_json::from_str(raw).map_err(|e| corrupt(what, id, e))
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::backend("sqlite", e))
}

/// Reads one column, mapping a rusqlite error into the ports error.
fn col<T: rusqlite::types::FromSql>(row: &Row<'_>, index: usize) -> Result<T> {
    row.get(index).map_err(crate::error::sql_error)
}

/// The columns `leaf_from_row` reads, in order.
pub(crate) const LEAF_COLUMNS: &str = "id, lineage, version, namespace, category, tree_id, kind, title, summary, \
     subject, fingerprint, body_path, body_sha256, observed_at, created_at, valid_from, valid_to, expires_at, \
     known_from, known_until, confidence, salience, sensitivity, status, supersedes, superseded_by, provenance, \
     labels, entity_primary, entities_secondary, parent";

pub(crate) fn leaf_from_row(row: &Row<'_>) -> Result<LeafRecord> {
    let id_raw: String = col(row, 0)?;
    let id = LeafId::parse(&id_raw).map_err(|e| corrupt("leaf", &id_raw, e))?;
    let what = "leaf";
    let lineage: String = col(row, 1)?;
    let version: i64 = col(row, 2)?;
    let namespace: String = col(row, 3)?;
    let category: String = col(row, 4)?;
    let tree_id: String = col(row, 5)?;
    let kind: String = col(row, 6)?;
    let subject: Option<String> = col(row, 9)?;
    let fingerprint: String = col(row, 10)?;
    let body_sha256: String = col(row, 12)?;
    let sensitivity: i64 = col(row, 22)?;
    let status: String = col(row, 23)?;
    let supersedes: Option<String> = col(row, 24)?;
    let superseded_by: Option<String> = col(row, 25)?;
    let provenance: String = col(row, 26)?;
    let labels: String = col(row, 27)?;
    let primary: Option<String> = col(row, 28)?;
    let secondary: String = col(row, 29)?;
    let parent: Option<String> = col(row, 30)?;
    let leaf_id = |raw: Option<String>| -> Result<Option<LeafId>> {
        raw.map(|r| LeafId::parse(&r).map_err(|e| corrupt(what, &id_raw, e))).transpose()
    };
    let validity =
        Validity::stored(col::<Option<i64>>(row, 15)?.map(from_ts), col::<Option<i64>>(row, 16)?.map(from_ts))
            .map_err(|e| corrupt(what, &id_raw, e))?;
    Ok(LeafRecord {
        lineage: LeafId::parse(&lineage).map_err(|e| corrupt(what, &id_raw, e))?,
        version: parse(what, &id_raw, u32::try_from(version).ok().and_then(Version::new), "version")?,
        namespace: Namespace::parse(&namespace).map_err(|e| corrupt(what, &id_raw, e))?,
        category: parse(what, &id_raw, Category::parse(&category), &category)?,
        tree_id: TreeId::parse(&tree_id).map_err(|e| corrupt(what, &id_raw, e))?,
        kind: parse(what, &id_raw, MemoryKind::parse(&kind), &kind)?,
        title: col(row, 7)?,
        summary: col(row, 8)?,
        subject: subject.map(|s| SubjectKey::parse(&s).map_err(|e| corrupt(what, &id_raw, e))).transpose()?,
        fingerprint: ContentHash::parse(&fingerprint).map_err(|e| corrupt(what, &id_raw, e))?,
        body_path: col(row, 11)?,
        body_sha256: ContentHash::parse(&body_sha256).map_err(|e| corrupt(what, &id_raw, e))?,
        observed_at: from_ts(col(row, 13)?),
        created_at: from_ts(col(row, 14)?),
        validity,
        expires_at: col::<Option<i64>>(row, 17)?.map(from_ts),
        known: KnownSpan {
            known_from: col::<Option<i64>>(row, 18)?.map(from_ts),
            known_until: col::<Option<i64>>(row, 19)?.map(from_ts),
        },
        confidence: Confidence::new(col::<f64>(row, 20)? as f32).map_err(|e| corrupt(what, &id_raw, e))?,
        salience: Confidence::new(col::<f64>(row, 21)? as f32).map_err(|e| corrupt(what, &id_raw, e))?,
        sensitivity: parse(what, &id_raw, sensitivity_from(sensitivity), "sensitivity")?,
        status: parse(what, &id_raw, LeafStatus::parse(&status), &status)?,
        supersedes: leaf_id(supersedes)?,
        superseded_by: leaf_id(superseded_by)?,
        provenance: json(what, &id_raw, &provenance)?,
        labels: json(what, &id_raw, &labels)?,
        entities: EntityLinks {
            primary: primary.map(|p| EntityId::parse(&p).map_err(|e| corrupt(what, &id_raw, e))).transpose()?,
            secondary: json(what, &id_raw, &secondary)?,
        },
        parent: parent.map(|p| SummaryId::parse(&p).map_err(|e| corrupt(what, &id_raw, e))).transpose()?,
        id,
    })
}

/// The values of a leaf, in `LEAF_COLUMNS` order, plus the subject hash last.
pub(crate) fn leaf_values(leaf: &LeafRecord) -> Result<Vec<rusqlite::types::Value>> {
    use rusqlite::types::Value;
    let text = |s: &str| Value::Text(s.to_owned());
    let opt_text = |s: Option<&str>| s.map(|s| Value::Text(s.to_owned())).unwrap_or(Value::Null);
    let opt_int = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
    Ok(vec![
        text(leaf.id.as_str()),
        text(leaf.lineage.as_str()),
        Value::Integer(i64::from(leaf.version.get())),
        text(&leaf.namespace.to_string()),
        text(leaf.category.as_str()),
        text(leaf.tree_id.as_str()),
        text(leaf.kind.as_str()),
        text(&leaf.title),
        text(&leaf.summary),
        opt_text(leaf.subject.as_ref().map(SubjectKey::as_str)),
        text(leaf.fingerprint.as_str()),
        text(&leaf.body_path),
        text(leaf.body_sha256.as_str()),
        Value::Integer(ts(leaf.observed_at)?),
        Value::Integer(ts(leaf.created_at)?),
        opt_int(opt_ts(leaf.validity.valid_from)?),
        opt_int(opt_ts(leaf.validity.valid_to)?),
        opt_int(opt_ts(leaf.expires_at)?),
        opt_int(opt_ts(leaf.known.known_from)?),
        opt_int(opt_ts(leaf.known.known_until)?),
        Value::Real(f64::from(leaf.confidence.get())),
        Value::Real(f64::from(leaf.salience.get())),
        Value::Integer(sensitivity_code(leaf.sensitivity)),
        text(leaf.status.as_str()),
        opt_text(leaf.supersedes.as_ref().map(LeafId::as_str)),
        opt_text(leaf.superseded_by.as_ref().map(LeafId::as_str)),
        Value::Text(to_json(&leaf.provenance)?),
        Value::Text(to_json(&leaf.labels)?),
        opt_text(leaf.entities.primary.as_ref().map(EntityId::as_str)),
        Value::Text(to_json(&leaf.entities.secondary)?),
        opt_text(leaf.parent.as_ref().map(SummaryId::as_str)),
        opt_text(leaf.subject.as_ref().map(subject_hash).as_deref()),
    ])
}

pub(crate) const SUMMARY_COLUMNS: &str = "id, namespace, category, tree_id, role, height, parent, children, title, \
     summary, body_path, body_sha256, time_range_start, time_range_end, sealed_at, labels, sensitivity, status, \
     retired_at, replaces";

pub(crate) fn summary_from_row(row: &Row<'_>) -> Result<SummaryRecord> {
    let id_raw: String = col(row, 0)?;
    let what = "summary";
    let id = SummaryId::parse(&id_raw).map_err(|e| corrupt(what, &id_raw, e))?;
    let namespace: String = col(row, 1)?;
    let category: String = col(row, 2)?;
    let tree_id: String = col(row, 3)?;
    let role: String = col(row, 4)?;
    let height: i64 = col(row, 5)?;
    let parent: Option<String> = col(row, 6)?;
    let children: String = col(row, 7)?;
    let body_sha256: String = col(row, 11)?;
    let labels: String = col(row, 15)?;
    let sensitivity: i64 = col(row, 16)?;
    let status: String = col(row, 17)?;
    let replaces: Option<String> = col(row, 19)?;
    let summary_id = |raw: Option<String>| -> Result<Option<SummaryId>> {
        raw.map(|r| SummaryId::parse(&r).map_err(|e| corrupt(what, &id_raw, e))).transpose()
    };
    let role = match role.as_str() {
        "sealed" => SummaryRole::Sealed,
        "root" => SummaryRole::Root,
        other => return Err(corrupt(what, &id_raw, format!("unknown role {other:?}"))),
    };
    let status = match status.as_str() {
        "current" => SummaryStatus::Current,
        "stale" => SummaryStatus::Stale,
        "purged" => SummaryStatus::Purged,
        "retired" => SummaryStatus::Retired,
        other => return Err(corrupt(what, &id_raw, format!("unknown status {other:?}"))),
    };
    let children: Vec<NodeId> = json(what, &id_raw, &children)?;
    Ok(SummaryRecord {
        namespace: Namespace::parse(&namespace).map_err(|e| corrupt(what, &id_raw, e))?,
        category: parse(what, &id_raw, Category::parse(&category), &category)?,
        tree_id: TreeId::parse(&tree_id).map_err(|e| corrupt(what, &id_raw, e))?,
        role,
        height: parse(what, &id_raw, u8::try_from(height).ok(), "height")?,
        parent: summary_id(parent)?,
        children,
        title: col(row, 8)?,
        summary: col(row, 9)?,
        body_path: col(row, 10)?,
        body_sha256: ContentHash::parse(&body_sha256).map_err(|e| corrupt(what, &id_raw, e))?,
        time_range_start: col::<Option<i64>>(row, 12)?.map(from_ts),
        time_range_end: col::<Option<i64>>(row, 13)?.map(from_ts),
        sealed_at: from_ts(col(row, 14)?),
        labels: json(what, &id_raw, &labels)?,
        sensitivity: parse(what, &id_raw, sensitivity_from(sensitivity), "sensitivity")?,
        status,
        retired_at: col::<Option<i64>>(row, 18)?.map(from_ts),
        replaces: summary_id(replaces)?,
        id,
    })
}

pub(crate) fn summary_values(s: &SummaryRecord) -> Result<Vec<rusqlite::types::Value>> {
    use rusqlite::types::Value;
    let text = |v: &str| Value::Text(v.to_owned());
    let opt_int = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
    Ok(vec![
        text(s.id.as_str()),
        text(&s.namespace.to_string()),
        text(s.category.as_str()),
        text(s.tree_id.as_str()),
        text(role_str(s.role)),
        Value::Integer(i64::from(s.height)),
        s.parent.as_ref().map(|p| text(p.as_str())).unwrap_or(Value::Null),
        Value::Text(to_json(&s.children)?),
        text(&s.title),
        text(&s.summary),
        text(&s.body_path),
        text(s.body_sha256.as_str()),
        opt_int(opt_ts(s.time_range_start)?),
        opt_int(opt_ts(s.time_range_end)?),
        Value::Integer(ts(s.sealed_at)?),
        Value::Text(to_json(&s.labels)?),
        Value::Integer(sensitivity_code(s.sensitivity)),
        text(s.status.as_str()),
        opt_int(opt_ts(s.retired_at)?),
        s.replaces.as_ref().map(|r| text(r.as_str())).unwrap_or(Value::Null),
    ])
}

pub(crate) const TREE_COLUMNS: &str = "namespace, tree_id, entity, title, created_at, root, root_stale";

pub(crate) fn tree_from_row(row: &Row<'_>) -> Result<TreeRecord> {
    let namespace: String = col(row, 0)?;
    let tree_id: String = col(row, 1)?;
    let what = "tree";
    let entity: Option<String> = col(row, 2)?;
    let root: Option<String> = col(row, 5)?;
    Ok(TreeRecord {
        namespace: Namespace::parse(&namespace).map_err(|e| corrupt(what, &tree_id, e))?,
        entity: entity.map(|e| EntityId::parse(&e).map_err(|err| corrupt(what, &tree_id, err))).transpose()?,
        title: col(row, 3)?,
        created_at: from_ts(col(row, 4)?),
        root: root.map(|r| SummaryId::parse(&r).map_err(|e| corrupt(what, &tree_id, e))).transpose()?,
        root_stale: col::<i64>(row, 6)? != 0,
        tree_id: TreeId::parse(&tree_id).map_err(|e| corrupt(what, &tree_id, e))?,
    })
}

pub(crate) const ENTITY_COLUMNS: &str = "id, namespace, entity_type, slug, name, aliases, created_at";

pub(crate) fn entity_from_row(row: &Row<'_>) -> Result<Entity> {
    let id: String = col(row, 0)?;
    let what = "entity";
    let namespace: String = col(row, 1)?;
    let entity_type: String = col(row, 2)?;
    let slug: String = col(row, 3)?;
    let aliases: String = col(row, 5)?;
    Ok(Entity {
        id: EntityId::parse(&id).map_err(|e| corrupt(what, &id, e))?,
        namespace: Namespace::parse(&namespace).map_err(|e| corrupt(what, &id, e))?,
        entity_type: parse(what, &id, EntityType::parse(&entity_type), &entity_type)?,
        slug: EntitySlug::parse(&slug).map_err(|e| corrupt(what, &id, e))?,
        name: col(row, 4)?,
        aliases: json(what, &id, &aliases)?,
        created_at: from_ts(col(row, 6)?),
    })
}

/// A node id as stored in text columns: `leaf:<id>` or `summary:<id>`.
pub(crate) fn node_to_str(node: &NodeId) -> String {
    match node {
        NodeId::Leaf(id) => format!("leaf:{id}"),
        NodeId::Summary(id) => format!("summary:{id}"),
    }
}

pub(crate) fn node_from_str(raw: &str) -> Result<NodeId> {
    let bad = |e: &dyn std::fmt::Display| corrupt("node id", raw, e);
    match raw.split_once(':') {
        Some(("leaf", id)) => Ok(NodeId::Leaf(LeafId::parse(id).map_err(|e| bad(&e))?)),
        Some(("summary", id)) => Ok(NodeId::Summary(SummaryId::parse(id).map_err(|e| bad(&e))?)),
        _ => Err(bad(&"expected leaf:<id> or summary:<id>")),
    }
}
