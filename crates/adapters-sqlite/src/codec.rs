//! Reading rows into [`arbor_ports::rows`] values and back: the only place that knows column
//! positions on the SQLite side. The conversion to and from domain records (and its
//! validation: a damaged row is an integrity error, not a panic or a leak) is shared with every
//! SQL backend.

use arbor_domain::entity::Entity;
use arbor_domain::model::{LeafRecord, SummaryRecord, TreeRecord};
use arbor_ports::rows::{EntityRow, JobRow, LeafRow, SummaryRow, TreeRow};
pub(crate) use arbor_ports::rows::{from_ts, node_from_str, node_to_str, opt_ts, subject_hash, to_json, ts};
use arbor_ports::{Job, Result};
use rusqlite::Row;
use rusqlite::types::Value;

/// Reads one column, mapping a rusqlite error into the ports error.
fn col<T: rusqlite::types::FromSql>(row: &Row<'_>, index: usize) -> Result<T> {
    row.get(index).map_err(crate::error::sql_error)
}

/// [`LeafRow::COLUMNS`], as SQL.
pub(crate) const LEAF_COLUMNS: &str = "id, lineage, version, namespace, category, tree_id, kind, title, summary, \
     subject, fingerprint, body_path, body_sha256, observed_at, created_at, valid_from, valid_to, expires_at, \
     known_from, known_until, confidence, salience, sensitivity, status, supersedes, superseded_by, provenance, \
     labels, entity_primary, entities_secondary, parent, subject_hash, claims";

pub(crate) fn leaf_from_row(row: &Row<'_>) -> Result<LeafRecord> {
    LeafRow {
        id: col(row, 0)?,
        lineage: col(row, 1)?,
        version: col(row, 2)?,
        namespace: col(row, 3)?,
        category: col(row, 4)?,
        tree_id: col(row, 5)?,
        kind: col(row, 6)?,
        title: col(row, 7)?,
        summary: col(row, 8)?,
        subject: col(row, 9)?,
        fingerprint: col(row, 10)?,
        body_path: col(row, 11)?,
        body_sha256: col(row, 12)?,
        observed_at: col(row, 13)?,
        created_at: col(row, 14)?,
        valid_from: col(row, 15)?,
        valid_to: col(row, 16)?,
        expires_at: col(row, 17)?,
        known_from: col(row, 18)?,
        known_until: col(row, 19)?,
        confidence: col(row, 20)?,
        salience: col(row, 21)?,
        sensitivity: col(row, 22)?,
        status: col(row, 23)?,
        supersedes: col(row, 24)?,
        superseded_by: col(row, 25)?,
        provenance: col(row, 26)?,
        labels: col(row, 27)?,
        entity_primary: col(row, 28)?,
        entities_secondary: col(row, 29)?,
        parent: col(row, 30)?,
        subject_hash: col(row, 31)?,
        claims: col(row, 32)?,
    }
    .into_record()
}

/// The values of a leaf, in [`LEAF_COLUMNS`] order.
pub(crate) fn leaf_values(leaf: &LeafRecord) -> Result<Vec<Value>> {
    let r = LeafRow::from_record(leaf)?;
    Ok(vec![
        r.id.into(),
        r.lineage.into(),
        r.version.into(),
        r.namespace.into(),
        r.category.into(),
        r.tree_id.into(),
        r.kind.into(),
        r.title.into(),
        r.summary.into(),
        r.subject.into(),
        r.fingerprint.into(),
        r.body_path.into(),
        r.body_sha256.into(),
        r.observed_at.into(),
        r.created_at.into(),
        r.valid_from.into(),
        r.valid_to.into(),
        r.expires_at.into(),
        r.known_from.into(),
        r.known_until.into(),
        r.confidence.into(),
        r.salience.into(),
        r.sensitivity.into(),
        r.status.into(),
        r.supersedes.into(),
        r.superseded_by.into(),
        r.provenance.into(),
        r.labels.into(),
        r.entity_primary.into(),
        r.entities_secondary.into(),
        r.parent.into(),
        r.subject_hash.into(),
        r.claims.into(),
    ])
}

/// [`SummaryRow::COLUMNS`], as SQL.
pub(crate) const SUMMARY_COLUMNS: &str = "id, namespace, category, tree_id, role, height, parent, children, title, \
     summary, body_path, body_sha256, time_range_start, time_range_end, sealed_at, labels, sensitivity, status, \
     retired_at, replaces";

pub(crate) fn summary_from_row(row: &Row<'_>) -> Result<SummaryRecord> {
    SummaryRow {
        id: col(row, 0)?,
        namespace: col(row, 1)?,
        category: col(row, 2)?,
        tree_id: col(row, 3)?,
        role: col(row, 4)?,
        height: col(row, 5)?,
        parent: col(row, 6)?,
        children: col(row, 7)?,
        title: col(row, 8)?,
        summary: col(row, 9)?,
        body_path: col(row, 10)?,
        body_sha256: col(row, 11)?,
        time_range_start: col(row, 12)?,
        time_range_end: col(row, 13)?,
        sealed_at: col(row, 14)?,
        labels: col(row, 15)?,
        sensitivity: col(row, 16)?,
        status: col(row, 17)?,
        retired_at: col(row, 18)?,
        replaces: col(row, 19)?,
    }
    .into_record()
}

/// The values of a summary, in [`SUMMARY_COLUMNS`] order.
pub(crate) fn summary_values(summary: &SummaryRecord) -> Result<Vec<Value>> {
    let r = SummaryRow::from_record(summary)?;
    Ok(vec![
        r.id.into(),
        r.namespace.into(),
        r.category.into(),
        r.tree_id.into(),
        r.role.into(),
        r.height.into(),
        r.parent.into(),
        r.children.into(),
        r.title.into(),
        r.summary.into(),
        r.body_path.into(),
        r.body_sha256.into(),
        r.time_range_start.into(),
        r.time_range_end.into(),
        r.sealed_at.into(),
        r.labels.into(),
        r.sensitivity.into(),
        r.status.into(),
        r.retired_at.into(),
        r.replaces.into(),
    ])
}

/// [`TreeRow::COLUMNS`], as SQL.
pub(crate) const TREE_COLUMNS: &str = "namespace, tree_id, entity, title, created_at, root, root_stale";

pub(crate) fn tree_from_row(row: &Row<'_>) -> Result<TreeRecord> {
    TreeRow {
        namespace: col(row, 0)?,
        tree_id: col(row, 1)?,
        entity: col(row, 2)?,
        title: col(row, 3)?,
        created_at: col(row, 4)?,
        root: col(row, 5)?,
        root_stale: col::<i64>(row, 6)? != 0,
    }
    .into_record()
}

/// The values of a tree, in [`TREE_COLUMNS`] order.
pub(crate) fn tree_values(tree: &TreeRecord) -> Result<Vec<Value>> {
    let r = TreeRow::from_record(tree)?;
    Ok(vec![
        r.namespace.into(),
        r.tree_id.into(),
        r.entity.into(),
        r.title.into(),
        r.created_at.into(),
        r.root.into(),
        i64::from(r.root_stale).into(),
    ])
}

/// [`EntityRow::COLUMNS`], as SQL.
pub(crate) const ENTITY_COLUMNS: &str = "id, namespace, entity_type, slug, name, aliases, created_at";

pub(crate) fn entity_from_row(row: &Row<'_>) -> Result<Entity> {
    EntityRow {
        id: col(row, 0)?,
        namespace: col(row, 1)?,
        entity_type: col(row, 2)?,
        slug: col(row, 3)?,
        name: col(row, 4)?,
        aliases: col(row, 5)?,
        created_at: col(row, 6)?,
    }
    .into_record()
}

/// The values of an entity, in [`ENTITY_COLUMNS`] order.
pub(crate) fn entity_values(entity: &Entity) -> Result<Vec<Value>> {
    let r = EntityRow::from_record(entity)?;
    Ok(vec![
        r.id.into(),
        r.namespace.into(),
        r.entity_type.into(),
        r.slug.into(),
        r.name.into(),
        r.aliases.into(),
        r.created_at.into(),
    ])
}

/// [`JobRow::COLUMNS`], as SQL.
pub(crate) const JOB_COLUMNS: &str =
    "id, kind, namespace, tree_id, nodes, key, attempts, run_after, created_at, last_error";

pub(crate) fn job_from_row(row: &Row<'_>) -> Result<Job> {
    JobRow {
        id: col(row, 0)?,
        kind: col(row, 1)?,
        namespace: col(row, 2)?,
        tree_id: col(row, 3)?,
        nodes: col(row, 4)?,
        key: col(row, 5)?,
        attempts: col(row, 6)?,
        run_after: col(row, 7)?,
        created_at: col(row, 8)?,
        last_error: col(row, 9)?,
    }
    .into_record()
}

/// The values of a job, in [`JOB_COLUMNS`] order.
pub(crate) fn job_values(job: &Job) -> Result<Vec<Value>> {
    let r = JobRow::from_record(job)?;
    Ok(vec![
        r.id.into(),
        r.kind.into(),
        r.namespace.into(),
        r.tree_id.into(),
        r.nodes.into(),
        r.key.into(),
        r.attempts.into(),
        r.run_after.into(),
        r.created_at.into(),
        r.last_error.into(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_lists_are_the_shared_row_layout() {
        assert_eq!(LEAF_COLUMNS, LeafRow::COLUMNS.join(", "));
        assert_eq!(SUMMARY_COLUMNS, SummaryRow::COLUMNS.join(", "));
        assert_eq!(TREE_COLUMNS, TreeRow::COLUMNS.join(", "));
        assert_eq!(ENTITY_COLUMNS, EntityRow::COLUMNS.join(", "));
        assert_eq!(JOB_COLUMNS, JobRow::COLUMNS.join(", "));
    }
}
