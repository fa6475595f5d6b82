//! Applying a change set's changes inside its transaction: runs of plain inserts batched, and
//! one function per kind of change, each checking its preconditions (an expected status,
//! version or root) under a row lock before it writes.

use std::sync::LazyLock;

use arbor_domain::entity::Entity;
use arbor_domain::id::{EntityId, JobId, NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryRecord, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use arbor_ports::rows::{
    EntityRow, FiledEntries, JobRow, LeafRow, SummaryRow, TreeRow, filed_entries, filed_entries_of, node_to_str,
    opt_ts, status_sql, stored_claims, to_json, ts,
};
use arbor_ports::{
    AccessRecord, AuditEvent, BodyIntent, Change, ContextSnapshot, Error, Job, LeafExpect, Result, SummaryExpect,
};
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};

use crate::codec::{bind_leaf, bind_summary, columns};

use super::{Failure, JOB_KEY_LOCK, conflict, leaf_columns, summary_columns};

async fn insert_leaf(conn: &mut PgConnection, leaf: &LeafRecord) -> std::result::Result<(), Failure> {
    let mut sql = QueryBuilder::<Postgres>::new(format!("INSERT INTO leaves ({}) VALUES (", leaf_columns()));
    bind_leaf(&mut sql.separated(", "), LeafRow::from_record(leaf)?);
    sql.push(")");
    sql.build().execute(&mut *conn).await?;
    file_leaf(conn, leaf.id.as_str(), ts(leaf.observed_at)?, &filed_entries(leaf)).await
}

/// Whether a change only adds a row that no other change of its set reads or locks, so a run
/// of them may be written table by table: a new leaf (with its lookup keys) or an audit entry.
pub(super) fn is_plain_insert(change: &Change) -> bool {
    matches!(change, Change::InsertLeaf(_) | Change::Audit(_))
}

/// Rows per multi-row insert: a statement may bind at most 65,535 parameters, a leaf one per
/// column.
const ROWS_PER_INSERT: usize = u16::MAX as usize / LeafRow::COLUMNS.len();

/// Writes a run of [`is_plain_insert`] changes as a few statements (the leaves, their lookup
/// keys, the audit entries) instead of two or three per change, each a round trip: an ingest
/// of a thousand events is a run of two thousand such changes. Audit entries are listed in the
/// order given (Postgres numbers the rows of a multi-row insert in list order).
pub(super) async fn insert_run(conn: &mut PgConnection, run: &[Change]) -> std::result::Result<(), Failure> {
    let leaves: Vec<&LeafRecord> =
        run.iter().filter_map(|change| if let Change::InsertLeaf(leaf) = change { Some(leaf) } else { None }).collect();
    for chunk in leaves.chunks(ROWS_PER_INSERT) {
        let rows = chunk.iter().map(|leaf| LeafRow::from_record(leaf)).collect::<Result<Vec<_>>>()?;
        let mut sql = QueryBuilder::<Postgres>::new(format!("INSERT INTO leaves ({}) ", leaf_columns()));
        sql.push_values(rows, |mut values, row| bind_leaf(&mut values, row));
        // Each run length is its own statement text: not kept prepared on every pooled connection.
        sql.build().persistent(false).execute(&mut *conn).await?;
        let (mut keys, mut stamps, mut ids, mut words) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for leaf in chunk {
            let entries = filed_entries(leaf);
            let observed_at = ts(leaf.observed_at)?;
            for key in entries.hashes {
                keys.push(key);
                stamps.push(observed_at);
                ids.push(leaf.id.as_str());
                words.push(entries.words);
            }
        }
        if !keys.is_empty() {
            sqlx::query(
                "INSERT INTO leaf_keys (key, observed_at, leaf, words)
                 SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BIGINT[]) ON CONFLICT DO NOTHING",
            )
            .bind(keys)
            .bind(stamps)
            .bind(ids)
            .bind(words)
            .execute(&mut *conn)
            .await?;
        }
    }
    let audits: Vec<&AuditEvent> =
        run.iter().filter_map(|change| if let Change::Audit(event) = change { Some(event) } else { None }).collect();
    for chunk in audits.chunks(ROWS_PER_INSERT) {
        let stamps = chunk.iter().map(|event| ts(event.at)).collect::<Result<Vec<_>>>()?;
        let mut sql = QueryBuilder::<Postgres>::new(
            "INSERT INTO audit (at, action, namespace, node, content_sha256, actor, policy_version) ",
        );
        sql.push_values(chunk.iter().zip(stamps), |mut values, (event, at)| {
            values
                .push_bind(at)
                .push_bind(event.action.clone())
                .push_bind(event.namespace.to_string())
                .push_bind(event.node.as_ref().map(node_to_str))
                .push_bind(event.content_sha256.as_ref().map(|h| h.as_str().to_owned()))
                .push_bind(event.actor.clone())
                .push_bind(event.policy_version.clone());
        });
        sql.build().persistent(false).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Files a leaf under its lookup key hashes ([`MetadataStore::leaves_filed_under`]).
async fn file_leaf(
    conn: &mut PgConnection,
    id: &str,
    observed_at: i64,
    entries: &FiledEntries,
) -> std::result::Result<(), Failure> {
    if entries.hashes.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO leaf_keys (key, observed_at, leaf, words) SELECT key, $2, $3, $4 FROM UNNEST($1::BIGINT[]) AS k(key)
         ON CONFLICT DO NOTHING",
    )
    .bind(&entries.hashes)
    .bind(observed_at)
    .bind(id)
    .bind(entries.words)
    .execute(conn)
    .await?;
    Ok(())
}

/// Takes a leaf out of the keys it was filed under.
async fn unfile_leaf(
    conn: &mut PgConnection,
    id: &str,
    observed_at: i64,
    hashes: &[i64],
) -> std::result::Result<(), Failure> {
    if hashes.is_empty() {
        return Ok(());
    }
    sqlx::query("DELETE FROM leaf_keys WHERE key = ANY($1) AND observed_at = $2 AND leaf = $3")
        .bind(hashes)
        .bind(observed_at)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

async fn insert_summary(conn: &mut PgConnection, summary: &SummaryRecord) -> std::result::Result<(), Failure> {
    let mut sql = QueryBuilder::<Postgres>::new(format!("INSERT INTO summaries ({}) VALUES (", summary_columns()));
    bind_summary(&mut sql.separated(", "), SummaryRow::from_record(summary)?);
    sql.push(")");
    sql.build().execute(conn).await?;
    Ok(())
}

pub(super) async fn apply(conn: &mut PgConnection, change: &Change) -> std::result::Result<(), Failure> {
    match change {
        Change::InsertEntity(entity) => insert_entity(conn, entity).await?,
        Change::EnsureTree(tree) => ensure_tree(conn, tree).await?,
        Change::InsertLeaf(leaf) => insert_leaf(conn, leaf).await?,
        Change::UpdateLeaf { expect, record } => update_leaf(conn, expect, record).await?,
        Change::InsertSummary(summary) => insert_summary(conn, summary).await?,
        Change::UpdateSummary { expect, record } => update_summary(conn, expect, record).await?,
        Change::SetRoot { namespace, tree, expect, root, stale } => {
            set_root(conn, namespace, tree, expect, root, stale).await?
        }
        Change::MarkRootStale { namespace, tree } => mark_root_stale(conn, namespace, tree).await?,
        Change::Enqueue(job) => enqueue(conn, job).await?,
        Change::CompleteJob { id } => complete_job(conn, id).await?,
        Change::FailJob { id, error, retry_at } => fail_job(conn, id, error, retry_at).await?,
        Change::AddBodyIntent(intent) => add_body_intent(conn, intent).await?,
        Change::ClearBodyIntent { id } => clear_body_intent(conn, id).await?,
        Change::RecordRetrieval(snapshot) => record_retrieval(conn, snapshot).await?,
        Change::DropRetrievalsOf { node } => drop_retrievals_of(conn, node).await?,
        Change::DissolveTree { namespace, tree } => dissolve_tree(conn, namespace, tree).await?,
        Change::ExpectEntity { namespace, id } => expect_entity(conn, namespace, id).await?,
        Change::DeleteEntityIfUnused { namespace, id } => delete_entity_if_unused(conn, namespace, id).await?,
        Change::ReleaseLease { id, worker } => release_lease(conn, id, worker).await?,
        Change::DeferJob { id, retry_at } => defer_job(conn, id, retry_at).await?,
        Change::Audit(event) => audit(conn, event).await?,
    }
    Ok(())
}

async fn insert_entity(conn: &mut PgConnection, entity: &Entity) -> std::result::Result<(), Failure> {
    let row = EntityRow::from_record(entity)?;
    sqlx::query(&format!(
        "INSERT INTO entities ({}) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        columns(&EntityRow::COLUMNS, "")
    ))
    .bind(row.id)
    .bind(row.namespace.clone())
    .bind(row.entity_type)
    .bind(row.slug)
    .bind(row.name)
    .bind(row.aliases)
    .bind(row.created_at)
    .execute(&mut *conn)
    .await?;
    let terms: Vec<String> = entity.words().into_iter().collect();
    sqlx::query(
        "INSERT INTO entity_terms (namespace, term, entity_id)
         SELECT $1, term, $2 FROM unnest($3::text[]) AS term ON CONFLICT DO NOTHING",
    )
    .bind(row.namespace)
    .bind(entity.id.as_str())
    .bind(terms)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn ensure_tree(conn: &mut PgConnection, tree: &TreeRecord) -> std::result::Result<(), Failure> {
    let row = TreeRow::from_record(tree)?;
    sqlx::query(&format!(
        "INSERT INTO trees ({}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
        columns(&TreeRow::COLUMNS, "")
    ))
    .bind(row.namespace)
    .bind(row.tree_id)
    .bind(row.entity)
    .bind(row.title)
    .bind(row.created_at)
    .bind(row.root)
    .bind(row.root_stale)
    .execute(&mut *conn)
    .await?;
    // Held until the commit: a dissolve (which locks the row for update) waits for this
    // write, or has already removed the tree, and then this write plans again. The lock
    // is the one an update of the tree's root columns takes (`FOR NO KEY UPDATE`), so a
    // write that goes on to mark the root stale never has to upgrade it: two writers of
    // one tree queue here instead of deadlocking on the upgrade.
    let lock = "SELECT 1 FROM trees WHERE namespace = $1 AND tree_id = $2 FOR NO KEY UPDATE";
    if !lock_row(conn, lock, &tree.namespace.to_string(), tree.tree_id.as_str()).await? {
        return Err(conflict("tree", &tree.tree_id, "present", "dissolved meanwhile"));
    }
    Ok(())
}

async fn update_leaf(
    conn: &mut PgConnection,
    expect: &LeafExpect,
    record: &LeafRecord,
) -> std::result::Result<(), Failure> {
    let current = sqlx::query(
        "SELECT status, parent, namespace, tree_id, summary, observed_at, claims FROM leaves WHERE id = $1 FOR UPDATE",
    )
    .bind(record.id.as_str())
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found("leaf", &record.id))?;
    let status: String = current.try_get(0)?;
    let parent: Option<String> = current.try_get(1)?;
    expect.check(&record.id, &status, parent.as_deref())?;
    let (namespace, tree): (String, String) = (current.try_get(2)?, current.try_get(3)?);
    if namespace != record.namespace.to_string() || tree != record.tree_id.as_str() {
        return Err(Error::invalid("leaf update", "a leaf never changes namespace or tree").into());
    }
    let (summary, observed_at): (String, i64) = (current.try_get(4)?, current.try_get(5)?);
    let old_claims = stored_claims(record.id.as_str(), &current.try_get::<String, _>(6)?)?;
    let mut sql = QueryBuilder::<Postgres>::new(format!("UPDATE leaves SET ({}) = ROW(", leaf_columns()));
    bind_leaf(&mut sql.separated(", "), LeafRow::from_record(record)?);
    sql.push(") WHERE id = ").push_bind(record.id.as_str().to_owned());
    sql.build().execute(&mut *conn).await?;
    // Filed anew only when what it is filed by changed (a seal moves a leaf under a
    // parent and changes none of it).
    let was_filed = LeafStatus::parse(&status).is_some_and(LeafStatus::is_filed);
    let new_observed_at = ts(record.observed_at)?;
    let same_words = summary == record.summary && old_claims == record.claims.claims;
    let is_filed = record.status.is_filed();
    if (was_filed, observed_at) != (is_filed, new_observed_at) || !same_words {
        if was_filed {
            let old = filed_entries_of(&record.namespace, LeafStatus::Active, &summary, &old_claims);
            unfile_leaf(conn, record.id.as_str(), observed_at, &old.hashes).await?;
        }
        file_leaf(conn, record.id.as_str(), new_observed_at, &filed_entries(record)).await?;
    }
    Ok(())
}

async fn update_summary(
    conn: &mut PgConnection,
    expect: &SummaryExpect,
    record: &SummaryRecord,
) -> std::result::Result<(), Failure> {
    let current = sqlx::query("SELECT status, parent FROM summaries WHERE id = $1 FOR UPDATE")
        .bind(record.id.as_str())
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| Error::not_found("summary", &record.id))?;
    let status: String = current.try_get(0)?;
    let parent: Option<String> = current.try_get(1)?;
    expect.check(&record.id, &status, parent.as_deref())?;
    let mut sql = QueryBuilder::<Postgres>::new(format!("UPDATE summaries SET ({}) = ROW(", summary_columns()));
    bind_summary(&mut sql.separated(", "), SummaryRow::from_record(record)?);
    sql.push(") WHERE id = ").push_bind(record.id.as_str().to_owned());
    sql.build().execute(&mut *conn).await?;
    Ok(())
}

async fn set_root(
    conn: &mut PgConnection,
    namespace: &Namespace,
    tree: &TreeId,
    expect: &Option<SummaryId>,
    root: &Option<SummaryId>,
    stale: &bool,
) -> std::result::Result<(), Failure> {
    let current: Option<String> =
        sqlx::query("SELECT root FROM trees WHERE namespace = $1 AND tree_id = $2 FOR UPDATE")
            .bind(namespace.to_string())
            .bind(tree.as_str())
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| Error::not_found("tree", tree))?
            .try_get(0)?;
    arbor_ports::check_root(tree, expect.as_ref(), current.as_deref())?;
    sqlx::query("UPDATE trees SET root = $1, root_stale = $2 WHERE namespace = $3 AND tree_id = $4")
        .bind(root.as_ref().map(SummaryId::as_str))
        .bind(*stale)
        .bind(namespace.to_string())
        .bind(tree.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn mark_root_stale(
    conn: &mut PgConnection,
    namespace: &Namespace,
    tree: &TreeId,
) -> std::result::Result<(), Failure> {
    let updated = sqlx::query("UPDATE trees SET root_stale = TRUE WHERE namespace = $1 AND tree_id = $2")
        .bind(namespace.to_string())
        .bind(tree.as_str())
        .execute(&mut *conn)
        .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::not_found("tree", tree).into());
    }
    Ok(())
}

async fn enqueue(conn: &mut PgConnection, job: &Job) -> std::result::Result<(), Failure> {
    let row = JobRow::from_record(job)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
        .bind(JOB_KEY_LOCK)
        .bind(&row.key)
        .execute(&mut *conn)
        .await?;
    let exists: bool = sqlx::query("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)")
        .bind(&row.id)
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    if exists {
        return Err(Error::AlreadyExists { what: "job", id: row.id }.into());
    }
    sqlx::query(&format!(
        "INSERT INTO jobs ({}, lease_worker, lease_until, dead)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, NULL, FALSE
         WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE key = $6 AND lease_until IS NULL AND NOT dead)",
        columns(&JobRow::COLUMNS, "")
    ))
    .bind(row.id)
    .bind(row.kind)
    .bind(row.namespace)
    .bind(row.tree_id)
    .bind(row.nodes)
    .bind(row.key)
    .bind(row.attempts)
    .bind(row.run_after)
    .bind(row.created_at)
    .bind(row.last_error)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn complete_job(conn: &mut PgConnection, id: &JobId) -> std::result::Result<(), Failure> {
    sqlx::query("DELETE FROM jobs WHERE id = $1").bind(id.as_str()).execute(&mut *conn).await?;
    Ok(())
}

async fn fail_job(
    conn: &mut PgConnection,
    id: &JobId,
    error: &String,
    retry_at: &Option<Timestamp>,
) -> std::result::Result<(), Failure> {
    let retry = opt_ts(*retry_at)?;
    sqlx::query(
        "UPDATE jobs SET attempts = attempts + 1, last_error = $1, lease_worker = NULL, lease_until = NULL,
             run_after = COALESCE($2, run_after), dead = $3 WHERE id = $4",
    )
    .bind(error)
    .bind(retry)
    .bind(retry.is_none())
    .bind(id.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn add_body_intent(conn: &mut PgConnection, intent: &BodyIntent) -> std::result::Result<(), Failure> {
    let paths: Vec<&str> = intent.paths.iter().map(|p| p.as_str()).collect();
    sqlx::query("INSERT INTO body_intents (id, owner, created_at, paths) VALUES ($1, $2, $3, $4)")
        .bind(intent.id.as_str())
        .bind(&intent.owner)
        .bind(ts(intent.created_at)?)
        .bind(to_json(&paths)?)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn clear_body_intent(conn: &mut PgConnection, id: &JobId) -> std::result::Result<(), Failure> {
    sqlx::query("DELETE FROM body_intents WHERE id = $1").bind(id.as_str()).execute(&mut *conn).await?;
    Ok(())
}

async fn record_retrieval(conn: &mut PgConnection, snapshot: &ContextSnapshot) -> std::result::Result<(), Failure> {
    sqlx::query("INSERT INTO retrievals (id, namespace, at, snapshot) VALUES ($1, $2, $3, $4)")
        .bind(snapshot.id.as_str())
        .bind(snapshot.namespace.to_string())
        .bind(ts(snapshot.at)?)
        .bind(to_json(&snapshot)?)
        .execute(&mut *conn)
        .await?;
    let records: Vec<AccessRecord> = snapshot.access_records().collect();
    if !records.is_empty() {
        let mut insert: QueryBuilder<'_, Postgres> =
            QueryBuilder::new("INSERT INTO access (retrieval, node, namespace, entered_context, at) ");
        let mut stamps = Vec::with_capacity(records.len());
        for access in &records {
            stamps.push(ts(access.at)?);
        }
        insert.push_values(records.iter().zip(stamps), |mut row, (access, at)| {
            row.push_bind(access.retrieval.as_str())
                .push_bind(node_to_str(&access.node))
                .push_bind(access.namespace.to_string())
                .push_bind(access.entered_context)
                .push_bind(at);
        });
        insert.build().execute(&mut *conn).await?;
    }
    Ok(())
}

async fn drop_retrievals_of(conn: &mut PgConnection, node: &NodeId) -> std::result::Result<(), Failure> {
    sqlx::query(
        "WITH dropped AS (SELECT DISTINCT retrieval FROM access WHERE node = $1),
              gone AS (DELETE FROM retrievals WHERE id IN (SELECT retrieval FROM dropped))
         DELETE FROM access WHERE retrieval IN (SELECT retrieval FROM dropped)",
    )
    .bind(node_to_str(node))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn expect_entity(
    conn: &mut PgConnection,
    namespace: &Namespace,
    id: &EntityId,
) -> std::result::Result<(), Failure> {
    let lock = "SELECT 1 FROM entities WHERE id = $1 AND namespace = $2 FOR SHARE";
    if !lock_row(conn, lock, id.as_str(), &namespace.to_string()).await? {
        return Err(conflict("entity", id, "present", "gone"));
    }
    Ok(())
}

async fn delete_entity_if_unused(
    conn: &mut PgConnection,
    namespace: &Namespace,
    id: &EntityId,
) -> std::result::Result<(), Failure> {
    // Lock first, then look: each statement reads what has committed by then, so a
    // write that held the entity (ExpectEntity) and committed a leaf is seen.
    let lock = "SELECT 1 FROM entities WHERE id = $1 AND namespace = $2 FOR UPDATE";
    if lock_row(conn, lock, id.as_str(), &namespace.to_string()).await? {
        let quoted = format!("\"{}\"", id.as_str());
        static DELETE_UNUSED: LazyLock<String> = LazyLock::new(|| {
            format!(
                "WITH gone AS (
                     DELETE FROM entities WHERE id = $1 AND namespace = $2
                       AND NOT EXISTS (SELECT 1 FROM trees WHERE namespace = $2 AND entity = $1)
                       AND NOT EXISTS (SELECT 1 FROM leaves WHERE namespace = $2 AND {}
                                         AND (entity_primary = $1 OR strpos(entities_secondary, $3) > 0))
                     RETURNING id)
                 DELETE FROM entity_terms WHERE namespace = $2 AND entity_id IN (SELECT id FROM gone)",
                status_sql::leaves_unless(LeafStatus::has_content)
            )
        });
        sqlx::query(DELETE_UNUSED.as_str())
            .bind(id.as_str())
            .bind(namespace.to_string())
            .bind(quoted)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

async fn release_lease(conn: &mut PgConnection, id: &JobId, worker: &String) -> std::result::Result<(), Failure> {
    sqlx::query("UPDATE jobs SET lease_worker = NULL, lease_until = NULL WHERE id = $1 AND lease_worker = $2")
        .bind(id.as_str())
        .bind(worker)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn defer_job(conn: &mut PgConnection, id: &JobId, retry_at: &Timestamp) -> std::result::Result<(), Failure> {
    sqlx::query("UPDATE jobs SET lease_worker = NULL, lease_until = NULL, run_after = $1 WHERE id = $2")
        .bind(ts(*retry_at)?)
        .bind(id.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn audit(conn: &mut PgConnection, event: &AuditEvent) -> std::result::Result<(), Failure> {
    sqlx::query(
        "INSERT INTO audit (at, action, namespace, node, content_sha256, actor, policy_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(ts(event.at)?)
    .bind(&event.action)
    .bind(event.namespace.to_string())
    .bind(event.node.as_ref().map(node_to_str))
    .bind(event.content_sha256.as_ref().map(|h| h.as_str().to_owned()))
    .bind(&event.actor)
    .bind(&event.policy_version)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Locks the row `sql` selects (with `first` and `second` bound as $1 and $2) in the lock mode
/// it names, until the commit; whether there is one.
pub(super) async fn lock_row(
    conn: &mut PgConnection,
    sql: &'static str,
    first: &str,
    second: &str,
) -> std::result::Result<bool, sqlx::Error> {
    Ok(sqlx::query(sql).bind(first).bind(second).fetch_optional(&mut *conn).await?.is_some())
}

/// [`Change::DissolveTree`]: the tree row locked first, then the preconditions (read after the
/// lock, so a write that held the tree and committed is seen), then every row of the tree.
async fn dissolve_tree(
    conn: &mut PgConnection,
    namespace: &Namespace,
    tree: &TreeId,
) -> std::result::Result<(), Failure> {
    let ns = namespace.to_string();
    if !lock_row(conn, "SELECT 1 FROM trees WHERE namespace = $1 AND tree_id = $2 FOR UPDATE", &ns, tree.as_str())
        .await?
    {
        return Ok(());
    }
    let first =
        |sql: &'static str| sqlx::query_scalar::<_, String>(sql).bind(ns.clone()).bind(tree.as_str().to_owned());
    static LIVE_LEAF: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT id || ' ' || status FROM leaves WHERE namespace = $1 AND tree_id = $2 AND {} LIMIT 1",
            status_sql::leaves_unless(LeafStatus::has_content)
        )
    });
    static READABLE_SUMMARY: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT id FROM summaries WHERE namespace = $1 AND tree_id = $2 AND {} LIMIT 1",
            status_sql::summaries_where(SummaryStatus::is_readable)
        )
    });
    if let Some(live) = first(LIVE_LEAF.as_str()).fetch_optional(&mut *conn).await? {
        return Err(conflict("tree", tree, "only tombstones", format!("leaf {live}")));
    }
    if let Some(readable) = first(READABLE_SUMMARY.as_str()).fetch_optional(&mut *conn).await? {
        return Err(conflict("tree", tree, "no readable summary", format!("summary {readable}")));
    }
    if let Some(purge) = first("SELECT id FROM jobs WHERE namespace = $1 AND tree_id = $2 AND kind = 'purge' LIMIT 1")
        .fetch_optional(&mut *conn)
        .await?
    {
        return Err(conflict("tree", tree, "no pending purge", format!("job {purge}")));
    }
    for sql in [
        "DELETE FROM leaves WHERE namespace = $1 AND tree_id = $2",
        "DELETE FROM summaries WHERE namespace = $1 AND tree_id = $2",
        "DELETE FROM jobs WHERE namespace = $1 AND tree_id = $2",
        "DELETE FROM trees WHERE namespace = $1 AND tree_id = $2",
    ] {
        sqlx::query(sql).bind(&ns).bind(tree.as_str()).execute(&mut *conn).await?;
    }
    Ok(())
}
