//! Applying a change set's changes inside its transaction: one function per kind of change,
//! each checking its preconditions (an expected status, version or root) before it writes.

use arbor_domain::entity::Entity;
use arbor_domain::id::{EntityId, JobId, NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryRecord, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use arbor_ports::rows::{FiledEntries, filed_entries, filed_entries_of, status_sql, stored_claims};
use arbor_ports::{AuditEvent, BodyIntent, Change, ContextSnapshot, Error, Job, LeafExpect, Result, SummaryExpect};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, Transaction, params, params_from_iter};

use crate::codec::{
    ENTITY_COLUMNS, JOB_COLUMNS, LEAF_COLUMNS, SUMMARY_COLUMNS, TREE_COLUMNS, entity_values, job_values, leaf_values,
    node_to_str, opt_ts, summary_values, to_json, tree_values, ts,
};
use crate::error::sql_error;
use crate::filter::placeholders;
use crate::schema::INSERT_LEAF_KEY;

use super::{execute_cached, query_row_cached};

fn insert_leaf(tx: &Transaction<'_>, leaf: &LeafRecord) -> Result<()> {
    insert_leaf_row(tx, leaf)?;
    file_leaf(tx, leaf.id.as_str(), ts(leaf.observed_at)?, &filed_entries(leaf))
}

fn insert_leaf_row(tx: &Transaction<'_>, leaf: &LeafRecord) -> Result<()> {
    let values = leaf_values(leaf)?;
    let sql = format!("INSERT INTO leaves ({LEAF_COLUMNS}) VALUES ({})", placeholders(values.len()));
    execute_cached(tx, &sql, params_from_iter(values)).map_err(sql_error)?;
    Ok(())
}

/// Files a leaf under its lookup key hashes ([`MetadataStore::leaves_filed_under`]).
fn file_leaf(tx: &Transaction<'_>, id: &str, observed_at: i64, entries: &FiledEntries) -> Result<()> {
    let mut insert = tx.prepare_cached(INSERT_LEAF_KEY).map_err(sql_error)?;
    for hash in &entries.hashes {
        insert.execute(params![hash, observed_at, id, entries.words]).map_err(sql_error)?;
    }
    Ok(())
}

/// Takes a leaf out of the keys it was filed under.
fn unfile_leaf(tx: &Transaction<'_>, id: &str, observed_at: i64, hashes: &[i64]) -> Result<()> {
    let mut delete =
        tx.prepare_cached("DELETE FROM leaf_keys WHERE key = ? AND observed_at = ? AND leaf = ?").map_err(sql_error)?;
    for hash in hashes {
        delete.execute(params![hash, observed_at, id]).map_err(sql_error)?;
    }
    Ok(())
}

fn insert_summary(tx: &Transaction<'_>, summary: &SummaryRecord) -> Result<()> {
    let values = summary_values(summary)?;
    let sql = format!("INSERT INTO summaries ({SUMMARY_COLUMNS}) VALUES ({})", placeholders(values.len()));
    execute_cached(tx, &sql, params_from_iter(values)).map_err(sql_error)?;
    Ok(())
}

/// Whether a change removes words, so the log must be truncated after the commit.
pub(super) fn scrubs(change: &Change) -> bool {
    match change {
        Change::DissolveTree { .. } | Change::DeleteEntityIfUnused { .. } => true,
        Change::UpdateLeaf { record, .. } => record.status == LeafStatus::Tombstone,
        Change::UpdateSummary { record, .. } => {
            matches!(record.status, SummaryStatus::Purged | SummaryStatus::Retired)
        }
        Change::DropRetrievalsOf { .. } => true,
        _ => false,
    }
}

pub(super) fn apply(tx: &Transaction<'_>, change: Change) -> Result<()> {
    match change {
        Change::InsertEntity(entity) => insert_entity(tx, entity)?,
        Change::EnsureTree(tree) => ensure_tree(tx, tree)?,
        Change::InsertLeaf(leaf) => insert_leaf(tx, &leaf)?,
        Change::UpdateLeaf { expect, record } => update_leaf(tx, expect, record)?,
        Change::InsertSummary(summary) => insert_summary(tx, &summary)?,
        Change::UpdateSummary { expect, record } => update_summary(tx, expect, record)?,
        Change::SetRoot { namespace, tree, expect, root, stale } => set_root(tx, namespace, tree, expect, root, stale)?,
        Change::MarkRootStale { namespace, tree } => mark_root_stale(tx, namespace, tree)?,
        Change::Enqueue(job) => enqueue(tx, job)?,
        Change::CompleteJob { id } => complete_job(tx, id)?,
        Change::FailJob { id, error, retry_at } => fail_job(tx, id, error, retry_at)?,
        Change::AddBodyIntent(intent) => add_body_intent(tx, intent)?,
        Change::ClearBodyIntent { id } => clear_body_intent(tx, id)?,
        Change::RecordRetrieval(snapshot) => record_retrieval(tx, snapshot)?,
        Change::DropRetrievalsOf { node } => drop_retrievals_of(tx, node)?,
        Change::DissolveTree { namespace, tree } => dissolve_tree(tx, &namespace, &tree)?,
        Change::ExpectEntity { namespace, id } => expect_entity(tx, namespace, id)?,
        Change::DeleteEntityIfUnused { namespace, id } => delete_entity_if_unused(tx, namespace, id)?,
        Change::ReleaseLease { id, worker } => release_lease(tx, id, worker)?,
        Change::DeferJob { id, retry_at } => defer_job(tx, id, retry_at)?,
        Change::Audit(event) => audit(tx, event)?,
    }
    Ok(())
}

fn insert_entity(tx: &Transaction<'_>, entity: Entity) -> Result<()> {
    execute_cached(
        tx,
        &format!("INSERT INTO entities ({ENTITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"),
        params_from_iter(entity_values(&entity)?),
    )
    .map_err(sql_error)?;
    let namespace = entity.namespace.to_string();
    for term in entity.words() {
        execute_cached(
            tx,
            "INSERT OR IGNORE INTO entity_terms (namespace, term, entity_id) VALUES (?, ?, ?)",
            params![namespace, term, entity.id.as_str()],
        )
        .map_err(sql_error)?;
    }
    Ok(())
}

fn ensure_tree(tx: &Transaction<'_>, tree: TreeRecord) -> Result<()> {
    execute_cached(
        tx,
        &format!("INSERT OR IGNORE INTO trees ({TREE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"),
        params_from_iter(tree_values(&tree)?),
    )
    .map_err(sql_error)?;
    Ok(())
}

fn update_leaf(tx: &Transaction<'_>, expect: LeafExpect, record: LeafRecord) -> Result<()> {
    type Current = (String, Option<String>, String, String, String, i64, String);
    let current: Option<Current> = query_row_cached(
        tx,
        "SELECT status, parent, namespace, tree_id, summary, observed_at, claims FROM leaves WHERE id = ?",
        [record.id.as_str()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
    )
    .optional()
    .map_err(sql_error)?;
    let (status, parent, namespace, tree, summary, observed_at, claims) =
        current.ok_or_else(|| Error::not_found("leaf", &record.id))?;
    expect.check(&record.id, &status, parent.as_deref())?;
    if namespace != record.namespace.to_string() || tree != record.tree_id.as_str() {
        return Err(Error::invalid("leaf update", "a leaf never changes namespace or tree"));
    }
    execute_cached(tx, "DELETE FROM leaves WHERE id = ?", [record.id.as_str()]).map_err(sql_error)?;
    insert_leaf_row(tx, &record)?;
    // Filed anew only when what it is filed by changed (a seal moves a leaf under a
    // parent and changes none of it).
    let was_filed = LeafStatus::parse(&status).is_some_and(LeafStatus::is_filed);
    let new_observed_at = ts(record.observed_at)?;
    let old_claims = stored_claims(record.id.as_str(), &claims)?;
    let same_words = summary == record.summary && old_claims == record.claims.claims;
    let is_filed = record.status.is_filed();
    if (was_filed, observed_at) != (is_filed, new_observed_at) || !same_words {
        if was_filed {
            let old = filed_entries_of(&record.namespace, LeafStatus::Active, &summary, &old_claims);
            unfile_leaf(tx, record.id.as_str(), observed_at, &old.hashes)?;
        }
        file_leaf(tx, record.id.as_str(), new_observed_at, &filed_entries(&record))?;
    }
    Ok(())
}

fn update_summary(tx: &Transaction<'_>, expect: SummaryExpect, record: SummaryRecord) -> Result<()> {
    let current: Option<(String, Option<String>)> =
        query_row_cached(tx, "SELECT status, parent FROM summaries WHERE id = ?", [record.id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(sql_error)?;
    let (status, parent) = current.ok_or_else(|| Error::not_found("summary", &record.id))?;
    expect.check(&record.id, &status, parent.as_deref())?;
    execute_cached(tx, "DELETE FROM summaries WHERE id = ?", [record.id.as_str()]).map_err(sql_error)?;
    insert_summary(tx, &record)?;
    Ok(())
}

fn set_root(
    tx: &Transaction<'_>,
    namespace: Namespace,
    tree: TreeId,
    expect: Option<SummaryId>,
    root: Option<SummaryId>,
    stale: bool,
) -> Result<()> {
    let current: Option<Option<String>> = query_row_cached(
        tx,
        "SELECT root FROM trees WHERE namespace = ? AND tree_id = ?",
        params![namespace.to_string(), tree.as_str()],
        |r| r.get(0),
    )
    .optional()
    .map_err(sql_error)?;
    let current = current.ok_or_else(|| Error::not_found("tree", &tree))?;
    arbor_ports::check_root(&tree, expect.as_ref(), current.as_deref())?;
    execute_cached(
        tx,
        "UPDATE trees SET root = ?, root_stale = ? WHERE namespace = ? AND tree_id = ?",
        params![root.as_ref().map(SummaryId::as_str), i64::from(stale), namespace.to_string(), tree.as_str()],
    )
    .map_err(sql_error)?;
    Ok(())
}

fn mark_root_stale(tx: &Transaction<'_>, namespace: Namespace, tree: TreeId) -> Result<()> {
    let updated = execute_cached(
        tx,
        "UPDATE trees SET root_stale = 1 WHERE namespace = ? AND tree_id = ?",
        params![namespace.to_string(), tree.as_str()],
    )
    .map_err(sql_error)?;
    if updated == 0 {
        return Err(Error::not_found("tree", &tree));
    }
    Ok(())
}

fn enqueue(tx: &Transaction<'_>, job: Job) -> Result<()> {
    let exists: bool =
        query_row_cached(tx, "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?)", [job.id.as_str()], |r| r.get(0))
            .map_err(sql_error)?;
    if exists {
        return Err(Error::AlreadyExists { what: "job", id: job.id.to_string() });
    }
    let mut values = job_values(&job)?;
    values.push(Value::Text(job.key.clone()));
    execute_cached(
        tx,
        &format!(
            "INSERT INTO jobs ({JOB_COLUMNS}, lease_worker, lease_until, dead)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0
             WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE key = ? AND lease_until IS NULL AND dead = 0)"
        ),
        params_from_iter(values),
    )
    .map_err(sql_error)?;
    Ok(())
}

fn complete_job(tx: &Transaction<'_>, id: JobId) -> Result<()> {
    execute_cached(tx, "DELETE FROM jobs WHERE id = ?", [id.as_str()]).map_err(sql_error)?;
    Ok(())
}

fn fail_job(tx: &Transaction<'_>, id: JobId, error: String, retry_at: Option<Timestamp>) -> Result<()> {
    let retry = opt_ts(retry_at)?;
    execute_cached(
        tx,
        "UPDATE jobs SET attempts = attempts + 1, last_error = ?, lease_worker = NULL, lease_until = NULL,
             run_after = COALESCE(?, run_after), dead = ? WHERE id = ?",
        params![error, retry, i64::from(retry.is_none()), id.as_str()],
    )
    .map_err(sql_error)?;
    Ok(())
}

fn add_body_intent(tx: &Transaction<'_>, intent: BodyIntent) -> Result<()> {
    let paths: Vec<&str> = intent.paths.iter().map(|p| p.as_str()).collect();
    execute_cached(
        tx,
        "INSERT INTO body_intents (id, owner, created_at, paths) VALUES (?, ?, ?, ?)",
        params![intent.id.as_str(), intent.owner, ts(intent.created_at)?, to_json(&paths)?],
    )
    .map_err(|e| match sql_error(e) {
        Error::AlreadyExists { .. } => Error::AlreadyExists { what: "body intent", id: intent.id.to_string() },
        other => other,
    })?;
    Ok(())
}

fn clear_body_intent(tx: &Transaction<'_>, id: JobId) -> Result<()> {
    execute_cached(tx, "DELETE FROM body_intents WHERE id = ?", [id.as_str()]).map_err(sql_error)?;
    Ok(())
}

fn record_retrieval(tx: &Transaction<'_>, snapshot: Box<ContextSnapshot>) -> Result<()> {
    execute_cached(
        tx,
        "INSERT INTO retrievals (id, namespace, at, snapshot) VALUES (?, ?, ?, ?)",
        params![snapshot.id.as_str(), snapshot.namespace.to_string(), ts(snapshot.at)?, to_json(&snapshot)?],
    )
    .map_err(|e| match sql_error(e) {
        Error::AlreadyExists { .. } => Error::AlreadyExists { what: "retrieval", id: snapshot.id.to_string() },
        other => other,
    })?;
    let mut insert = tx
        .prepare_cached("INSERT INTO access (retrieval, node, namespace, entered_context, at) VALUES (?, ?, ?, ?, ?)")
        .map_err(sql_error)?;
    for access in snapshot.access_records() {
        insert
            .execute(params![
                access.retrieval.as_str(),
                node_to_str(&access.node),
                access.namespace.to_string(),
                access.entered_context,
                ts(access.at)?,
            ])
            .map_err(sql_error)?;
    }
    Ok(())
}

fn drop_retrievals_of(tx: &Transaction<'_>, node: NodeId) -> Result<()> {
    let dropped: Vec<String> = {
        let mut stmt = tx.prepare_cached("SELECT DISTINCT retrieval FROM access WHERE node = ?").map_err(sql_error)?;
        let rows = stmt.query_map([node_to_str(&node)], |row| row.get(0)).map_err(sql_error)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sql_error)?
    };
    for id in dropped {
        execute_cached(tx, "DELETE FROM retrievals WHERE id = ?", [&id]).map_err(sql_error)?;
        execute_cached(tx, "DELETE FROM access WHERE retrieval = ?", [&id]).map_err(sql_error)?;
    }
    Ok(())
}

fn expect_entity(tx: &Transaction<'_>, namespace: Namespace, id: EntityId) -> Result<()> {
    let present: bool = query_row_cached(
        tx,
        "SELECT EXISTS (SELECT 1 FROM entities WHERE id = ? AND namespace = ?)",
        params![id.as_str(), namespace.to_string()],
        |r| r.get(0),
    )
    .map_err(sql_error)?;
    if !present {
        return Err(Error::conflict("entity", &id, "present", "gone"));
    }
    Ok(())
}

fn delete_entity_if_unused(tx: &Transaction<'_>, namespace: Namespace, id: EntityId) -> Result<()> {
    let holds_content = status_sql::leaves_unless(LeafStatus::has_content);
    execute_cached(
        tx,
        &format!(
            "DELETE FROM entities WHERE id = ?1 AND namespace = ?2
               AND NOT EXISTS (SELECT 1 FROM trees WHERE namespace = ?2 AND entity = ?1)
               AND NOT EXISTS (SELECT 1 FROM leaves WHERE namespace = ?2 AND {holds_content}
                                 AND (entity_primary = ?1 OR instr(entities_secondary, ?3) > 0))"
        ),
        params![id.as_str(), namespace.to_string(), format!("\"{}\"", id.as_str())],
    )
    .map_err(sql_error)?;
    // The words it was known by go with it (and stay while it does).
    execute_cached(
        tx,
        "DELETE FROM entity_terms WHERE entity_id = ?1 AND namespace = ?2
           AND NOT EXISTS (SELECT 1 FROM entities WHERE id = ?1)",
        params![id.as_str(), namespace.to_string()],
    )
    .map_err(sql_error)?;
    Ok(())
}

fn release_lease(tx: &Transaction<'_>, id: JobId, worker: String) -> Result<()> {
    execute_cached(
        tx,
        "UPDATE jobs SET lease_worker = NULL, lease_until = NULL WHERE id = ? AND lease_worker = ?",
        params![id.as_str(), worker],
    )
    .map_err(sql_error)?;
    Ok(())
}

fn defer_job(tx: &Transaction<'_>, id: JobId, retry_at: Timestamp) -> Result<()> {
    execute_cached(
        tx,
        "UPDATE jobs SET lease_worker = NULL, lease_until = NULL, run_after = ? WHERE id = ?",
        params![ts(retry_at)?, id.as_str()],
    )
    .map_err(sql_error)?;
    Ok(())
}

fn audit(tx: &Transaction<'_>, event: AuditEvent) -> Result<()> {
    execute_cached(
        tx,
        "INSERT INTO audit (at, action, namespace, node, content_sha256, actor, policy_version)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
        params![
            ts(event.at)?,
            event.action,
            event.namespace.to_string(),
            event.node.as_ref().map(node_to_str),
            event.content_sha256.as_ref().map(|h| h.as_str().to_owned()),
            event.actor,
            event.policy_version,
        ],
    )
    .map_err(sql_error)?;
    Ok(())
}

/// [`Change::DissolveTree`]: the preconditions, then every row of the tree.
fn dissolve_tree(tx: &Transaction<'_>, namespace: &Namespace, tree: &TreeId) -> Result<()> {
    let ns = namespace.to_string();
    let exists: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM trees WHERE namespace = ? AND tree_id = ?)",
            params![ns, tree.as_str()],
            |r| r.get(0),
        )
        .map_err(sql_error)?;
    if !exists {
        return Ok(());
    }
    let first = |sql: &str| -> Result<Option<String>> {
        tx.query_row(sql, params![ns, tree.as_str()], |r| r.get(0)).optional().map_err(sql_error)
    };
    if let Some(live) = first(&format!(
        "SELECT id || ' ' || status FROM leaves WHERE namespace = ? AND tree_id = ? AND {} LIMIT 1",
        status_sql::leaves_unless(LeafStatus::has_content)
    ))? {
        return Err(Error::conflict("tree", tree, "only tombstones", format!("leaf {live}")));
    }
    if let Some(readable) = first(&format!(
        "SELECT id FROM summaries WHERE namespace = ? AND tree_id = ? AND {} LIMIT 1",
        status_sql::summaries_where(SummaryStatus::is_readable)
    ))? {
        return Err(Error::conflict("tree", tree, "no readable summary", format!("summary {readable}")));
    }
    if let Some(purge) = first("SELECT id FROM jobs WHERE namespace = ? AND tree_id = ? AND kind = 'purge' LIMIT 1")? {
        return Err(Error::conflict("tree", tree, "no pending purge", format!("job {purge}")));
    }
    for sql in [
        "DELETE FROM leaves WHERE namespace = ? AND tree_id = ?",
        "DELETE FROM summaries WHERE namespace = ? AND tree_id = ?",
        "DELETE FROM jobs WHERE namespace = ? AND tree_id = ?",
        "DELETE FROM trees WHERE namespace = ? AND tree_id = ?",
    ] {
        execute_cached(tx, sql, params![ns, tree.as_str()]).map_err(sql_error)?;
    }
    Ok(())
}
