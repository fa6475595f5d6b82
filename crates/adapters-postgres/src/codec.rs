//! Reading rows into [`arbor_ports::rows`] values and binding those values into statements:
//! the only place that knows column names on the Postgres side.

use arbor_ports::Result;
use arbor_ports::rows::{EntityRow, JobRow, LeafRow, SummaryRow, TreeRow};
use sqlx::postgres::PgRow;
use sqlx::query_builder::Separated;
use sqlx::{Postgres, Row};

use crate::error::sql_error;

/// One column by name.
fn col<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(row: &'r PgRow, name: &str) -> Result<T> {
    row.try_get(name).map_err(sql_error)
}

/// `a, b, c` for a `COLUMNS` list, optionally prefixed (`l.a, l.b`).
pub(crate) fn columns(names: &[&str], prefix: &str) -> String {
    names.iter().map(|c| format!("{prefix}{c}")).collect::<Vec<_>>().join(", ")
}

pub(crate) fn leaf_row(row: &PgRow) -> Result<LeafRow> {
    Ok(LeafRow {
        id: col(row, "id")?,
        lineage: col(row, "lineage")?,
        version: col(row, "version")?,
        namespace: col(row, "namespace")?,
        category: col(row, "category")?,
        tree_id: col(row, "tree_id")?,
        kind: col(row, "kind")?,
        title: col(row, "title")?,
        summary: col(row, "summary")?,
        subject: col(row, "subject")?,
        fingerprint: col(row, "fingerprint")?,
        body_path: col(row, "body_path")?,
        body_sha256: col(row, "body_sha256")?,
        observed_at: col(row, "observed_at")?,
        created_at: col(row, "created_at")?,
        valid_from: col(row, "valid_from")?,
        valid_to: col(row, "valid_to")?,
        expires_at: col(row, "expires_at")?,
        known_from: col(row, "known_from")?,
        known_until: col(row, "known_until")?,
        confidence: col(row, "confidence")?,
        salience: col(row, "salience")?,
        sensitivity: i64::from(col::<i16>(row, "sensitivity")?),
        status: col(row, "status")?,
        supersedes: col(row, "supersedes")?,
        superseded_by: col(row, "superseded_by")?,
        provenance: col(row, "provenance")?,
        labels: col(row, "labels")?,
        entity_primary: col(row, "entity_primary")?,
        entities_secondary: col(row, "entities_secondary")?,
        parent: col(row, "parent")?,
        subject_hash: col(row, "subject_hash")?,
        claims: col(row, "claims")?,
    })
}

/// Binds a leaf's values in [`LeafRow::COLUMNS`] order.
pub(crate) fn bind_leaf(values: &mut Separated<'_, '_, Postgres, &'static str>, row: LeafRow) {
    values
        .push_bind(row.id)
        .push_bind(row.lineage)
        .push_bind(row.version)
        .push_bind(row.namespace)
        .push_bind(row.category)
        .push_bind(row.tree_id)
        .push_bind(row.kind)
        .push_bind(row.title)
        .push_bind(row.summary)
        .push_bind(row.subject)
        .push_bind(row.fingerprint)
        .push_bind(row.body_path)
        .push_bind(row.body_sha256)
        .push_bind(row.observed_at)
        .push_bind(row.created_at)
        .push_bind(row.valid_from)
        .push_bind(row.valid_to)
        .push_bind(row.expires_at)
        .push_bind(row.known_from)
        .push_bind(row.known_until)
        .push_bind(row.confidence)
        .push_bind(row.salience)
        .push_bind(sensitivity(row.sensitivity))
        .push_bind(row.status)
        .push_bind(row.supersedes)
        .push_bind(row.superseded_by)
        .push_bind(row.provenance)
        .push_bind(row.labels)
        .push_bind(row.entity_primary)
        .push_bind(row.entities_secondary)
        .push_bind(row.parent)
        .push_bind(row.subject_hash)
        .push_bind(row.claims);
}

/// Sensitivity codes are 0-2, stored as SMALLINT.
pub(crate) fn sensitivity(code: i64) -> i16 {
    i16::try_from(code).unwrap_or(i16::MAX)
}

pub(crate) fn summary_row(row: &PgRow) -> Result<SummaryRow> {
    Ok(SummaryRow {
        id: col(row, "id")?,
        namespace: col(row, "namespace")?,
        category: col(row, "category")?,
        tree_id: col(row, "tree_id")?,
        role: col(row, "role")?,
        height: col(row, "height")?,
        parent: col(row, "parent")?,
        children: col(row, "children")?,
        title: col(row, "title")?,
        summary: col(row, "summary")?,
        body_path: col(row, "body_path")?,
        body_sha256: col(row, "body_sha256")?,
        time_range_start: col(row, "time_range_start")?,
        time_range_end: col(row, "time_range_end")?,
        sealed_at: col(row, "sealed_at")?,
        labels: col(row, "labels")?,
        sensitivity: i64::from(col::<i16>(row, "sensitivity")?),
        status: col(row, "status")?,
        retired_at: col(row, "retired_at")?,
        replaces: col(row, "replaces")?,
    })
}

/// Binds a summary's values in [`SummaryRow::COLUMNS`] order.
pub(crate) fn bind_summary(values: &mut Separated<'_, '_, Postgres, &'static str>, row: SummaryRow) {
    values
        .push_bind(row.id)
        .push_bind(row.namespace)
        .push_bind(row.category)
        .push_bind(row.tree_id)
        .push_bind(row.role)
        .push_bind(row.height)
        .push_bind(row.parent)
        .push_bind(row.children)
        .push_bind(row.title)
        .push_bind(row.summary)
        .push_bind(row.body_path)
        .push_bind(row.body_sha256)
        .push_bind(row.time_range_start)
        .push_bind(row.time_range_end)
        .push_bind(row.sealed_at)
        .push_bind(row.labels)
        .push_bind(sensitivity(row.sensitivity))
        .push_bind(row.status)
        .push_bind(row.retired_at)
        .push_bind(row.replaces);
}

pub(crate) fn tree_row(row: &PgRow) -> Result<TreeRow> {
    Ok(TreeRow {
        namespace: col(row, "namespace")?,
        tree_id: col(row, "tree_id")?,
        entity: col(row, "entity")?,
        title: col(row, "title")?,
        created_at: col(row, "created_at")?,
        root: col(row, "root")?,
        root_stale: col(row, "root_stale")?,
    })
}

pub(crate) fn entity_row(row: &PgRow) -> Result<EntityRow> {
    Ok(EntityRow {
        id: col(row, "id")?,
        namespace: col(row, "namespace")?,
        entity_type: col(row, "entity_type")?,
        slug: col(row, "slug")?,
        name: col(row, "name")?,
        aliases: col(row, "aliases")?,
        created_at: col(row, "created_at")?,
    })
}

pub(crate) fn job_row(row: &PgRow) -> Result<JobRow> {
    Ok(JobRow {
        id: col(row, "id")?,
        kind: col(row, "kind")?,
        namespace: col(row, "namespace")?,
        tree_id: col(row, "tree_id")?,
        nodes: col(row, "nodes")?,
        key: col(row, "key")?,
        attempts: col(row, "attempts")?,
        run_after: col(row, "run_after")?,
        created_at: col(row, "created_at")?,
        last_error: col(row, "last_error")?,
    })
}

/// A pgvector `vector` read as it is sent, not cast to `real[]`: the binary form is a `u16`
/// dimension, a `u16` pgvector leaves unused, and the components as big-endian `f32`, half
/// the bytes of an array (which frames every element) and no per-element work on either side.
/// Reading the candidates' vectors this way took a search's largest statement from about 0.7
/// to 0.2 ms of server time at 100 rows (docs/performance.md).
#[derive(Debug)]
pub(crate) struct StoredVector(pub Vec<f32>);

impl sqlx::Type<Postgres> for StoredVector {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        sqlx::postgres::PgTypeInfo::with_name("vector")
    }
}

impl<'r> sqlx::Decode<'r, Postgres> for StoredVector {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> std::result::Result<Self, sqlx::error::BoxDynError> {
        match value.format() {
            sqlx::postgres::PgValueFormat::Binary => {
                let bytes = value.as_bytes()?;
                let (head, components) = bytes.split_at_checked(4).ok_or("a vector shorter than its header")?;
                let dimensions = usize::from(u16::from_be_bytes([head[0], head[1]]));
                if components.len() != dimensions * 4 {
                    return Err(format!("a vector of {dimensions} dimensions in {} bytes", components.len()).into());
                }
                Ok(StoredVector(
                    components.chunks_exact(4).map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect(),
                ))
            }
            // `[1,2.5,3]`, as a simple (unprepared) query returns it.
            sqlx::postgres::PgValueFormat::Text => {
                let text = value.as_str()?.trim();
                let inner =
                    text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).ok_or("a vector not in brackets")?;
                if inner.trim().is_empty() {
                    return Ok(StoredVector(Vec::new()));
                }
                let components: std::result::Result<Vec<f32>, _> =
                    inner.split(',').map(|c| c.trim().parse::<f32>()).collect();
                Ok(StoredVector(components?))
            }
        }
    }
}
