//! [`PgStore`]: the metadata store on Postgres. A change set is one transaction; preconditions
//! are checked on rows locked `FOR UPDATE` inside it, so two writers in different processes
//! never both win, and any failure rolls the whole set back. A transaction that loses a
//! deadlock is run again from the start (the change set is plain data).

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryRecord, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::seal::FrontierNode;
use arbor_domain::visibility::VisibilityFilter;
use arbor_ports::rows::{
    EntityRow, FiledEntries, JobRow, LeafRow, SummaryRow, TreeRow, corrupt, filed_entries, filed_entries_of, from_ts,
    lookup_key_hash, node_from_str, node_to_str, opt_ts, signature_from, status_sql, stored_claims, subject_hash,
    to_json, ts,
};
use arbor_ports::{
    AccessRecord, AuditEvent, BodyIntent, Change, ChangeSet, ContextSnapshot, DamagedRow, EntityQuery, Error,
    FiledEntry, FiledQuery, IntegrityReport, Job, JobClaim, JobKind, JobLease, LeafPosition, MetadataStore, Neighbours,
    Page, Result, StoreCounts, TreeLeafQuery, WriteMark,
};
use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};

use crate::codec::{bind_leaf, bind_summary, columns, entity_row, job_row, leaf_row, summary_row, tree_row};
use crate::config::PgDatabase;
use crate::error::{BACKEND, is_retryable, sql_error};
use crate::filter::push_visibility;
use crate::schema::LOCK_CLASS;

/// How many times a change set that lost a deadlock is tried again.
const COMMIT_RETRIES: u32 = 8;
/// The advisory lock class for job keys: enqueues of one key are serialized, so coalescing
/// holds across processes.
const JOB_KEY_LOCK: i32 = LOCK_CLASS + 1;

/// The metadata store on a [`PgDatabase`].
#[derive(Debug, Clone)]
pub struct PgStore {
    db: Arc<PgDatabase>,
}

impl PgStore {
    pub fn new(db: Arc<PgDatabase>) -> PgStore {
        PgStore { db }
    }

    pub fn database(&self) -> &Arc<PgDatabase> {
        &self.db
    }
}

/// Why applying a change failed: the database (which may be worth a retry) or a rule.
enum Failure {
    Sql(sqlx::Error),
    Port(Error),
}

impl From<sqlx::Error> for Failure {
    fn from(error: sqlx::Error) -> Failure {
        Failure::Sql(error)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::Port(error)
    }
}

fn conflict(what: &'static str, id: impl ToString, expected: impl ToString, found: impl ToString) -> Failure {
    Failure::Port(Error::conflict(what, id, expected, found))
}

fn scope_strings(scope: &[Namespace]) -> Vec<String> {
    scope.iter().map(ToString::to_string).collect()
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn leaf_columns() -> String {
    columns(&LeafRow::COLUMNS, "")
}

fn summary_columns() -> String {
    columns(&SummaryRow::COLUMNS, "")
}

async fn insert_leaf(conn: &mut PgConnection, leaf: &LeafRecord) -> std::result::Result<(), Failure> {
    let mut sql = QueryBuilder::<Postgres>::new(format!("INSERT INTO leaves ({}) VALUES (", leaf_columns()));
    bind_leaf(&mut sql.separated(", "), LeafRow::from_record(leaf)?);
    sql.push(")");
    sql.build().execute(&mut *conn).await?;
    file_leaf(conn, leaf.id.as_str(), ts(leaf.observed_at)?, &filed_entries(leaf)).await
}

/// Whether a change only adds a row that no other change of its set reads or locks, so a run
/// of them may be written table by table: a new leaf (with its lookup keys) or an audit entry.
fn is_plain_insert(change: &Change) -> bool {
    matches!(change, Change::InsertLeaf(_) | Change::Audit(_))
}

/// Rows per multi-row insert: a statement may bind at most 65,535 parameters, a leaf one per
/// column.
const ROWS_PER_INSERT: usize = u16::MAX as usize / LeafRow::COLUMNS.len();

/// Writes a run of [`is_plain_insert`] changes as a few statements (the leaves, their lookup
/// keys, the audit entries) instead of two or three per change, each a round trip: an ingest
/// of a thousand events is a run of two thousand such changes. Audit entries are listed in the
/// order given (Postgres numbers the rows of a multi-row insert in list order).
async fn insert_run(conn: &mut PgConnection, run: &[Change]) -> std::result::Result<(), Failure> {
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

async fn apply(conn: &mut PgConnection, change: &Change) -> std::result::Result<(), Failure> {
    match change {
        Change::InsertEntity(entity) => {
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
        }
        Change::EnsureTree(tree) => {
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
        }
        Change::InsertLeaf(leaf) => insert_leaf(conn, leaf).await?,
        Change::UpdateLeaf { expect, record } => {
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
        }
        Change::InsertSummary(summary) => insert_summary(conn, summary).await?,
        Change::UpdateSummary { expect, record } => {
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
        }
        Change::SetRoot { namespace, tree, expect, root, stale } => {
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
        }
        Change::MarkRootStale { namespace, tree } => {
            let updated = sqlx::query("UPDATE trees SET root_stale = TRUE WHERE namespace = $1 AND tree_id = $2")
                .bind(namespace.to_string())
                .bind(tree.as_str())
                .execute(&mut *conn)
                .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::not_found("tree", tree).into());
            }
        }
        Change::Enqueue(job) => {
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
        }
        Change::CompleteJob { id } => {
            sqlx::query("DELETE FROM jobs WHERE id = $1").bind(id.as_str()).execute(&mut *conn).await?;
        }
        Change::FailJob { id, error, retry_at } => {
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
        }
        Change::AddBodyIntent(intent) => {
            let paths: Vec<&str> = intent.paths.iter().map(|p| p.as_str()).collect();
            sqlx::query("INSERT INTO body_intents (id, owner, created_at, paths) VALUES ($1, $2, $3, $4)")
                .bind(intent.id.as_str())
                .bind(&intent.owner)
                .bind(ts(intent.created_at)?)
                .bind(to_json(&paths)?)
                .execute(&mut *conn)
                .await?;
        }
        Change::ClearBodyIntent { id } => {
            sqlx::query("DELETE FROM body_intents WHERE id = $1").bind(id.as_str()).execute(&mut *conn).await?;
        }
        Change::RecordRetrieval(snapshot) => {
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
        }
        Change::DropRetrievalsOf { node } => {
            sqlx::query(
                "WITH dropped AS (SELECT DISTINCT retrieval FROM access WHERE node = $1),
                      gone AS (DELETE FROM retrievals WHERE id IN (SELECT retrieval FROM dropped))
                 DELETE FROM access WHERE retrieval IN (SELECT retrieval FROM dropped)",
            )
            .bind(node_to_str(node))
            .execute(&mut *conn)
            .await?;
        }
        Change::DissolveTree { namespace, tree } => dissolve_tree(conn, namespace, tree).await?,
        Change::ExpectEntity { namespace, id } => {
            let lock = "SELECT 1 FROM entities WHERE id = $1 AND namespace = $2 FOR SHARE";
            if !lock_row(conn, lock, id.as_str(), &namespace.to_string()).await? {
                return Err(conflict("entity", id, "present", "gone"));
            }
        }
        Change::DeleteEntityIfUnused { namespace, id } => {
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
        }
        Change::ReleaseLease { id, worker } => {
            sqlx::query("UPDATE jobs SET lease_worker = NULL, lease_until = NULL WHERE id = $1 AND lease_worker = $2")
                .bind(id.as_str())
                .bind(worker)
                .execute(&mut *conn)
                .await?;
        }
        Change::DeferJob { id, retry_at } => {
            sqlx::query("UPDATE jobs SET lease_worker = NULL, lease_until = NULL, run_after = $1 WHERE id = $2")
                .bind(ts(*retry_at)?)
                .bind(id.as_str())
                .execute(&mut *conn)
                .await?;
        }
        Change::Audit(event) => {
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
        }
    }
    Ok(())
}

/// Locks the row `sql` selects (with `first` and `second` bound as $1 and $2) in the lock mode
/// it names, until the commit; whether there is one.
async fn lock_row(
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

impl PgStore {
    async fn try_commit(&self, changes: &ChangeSet) -> std::result::Result<(), Failure> {
        let mut tx = self.db.pool().begin().await?;
        // Rows this change set updates are locked first, in id order: two change sets that
        // update overlapping leaves (two sealers of one tree) then queue for them instead of
        // each holding one and waiting for the other.
        let mut leaves: Vec<&str> = Vec::new();
        let mut summaries: Vec<&str> = Vec::new();
        for change in &changes.changes {
            match change {
                Change::UpdateLeaf { record, .. } => leaves.push(record.id.as_str()),
                Change::UpdateSummary { record, .. } => summaries.push(record.id.as_str()),
                _ => {}
            }
        }
        for (table, ids) in [("leaves", &mut leaves), ("summaries", &mut summaries)] {
            if ids.len() > 1 {
                ids.sort_unstable();
                sqlx::query(&format!("SELECT 1 FROM {table} WHERE id = ANY($1) ORDER BY id FOR UPDATE"))
                    .bind(&ids[..])
                    .execute(&mut *tx)
                    .await?;
            }
        }
        let mut rest = &changes.changes[..];
        while let Some(first) = rest.first() {
            let run = rest.iter().take_while(|change| is_plain_insert(change)).count();
            let result = if run > 1 {
                let (inserts, later) = rest.split_at(run);
                rest = later;
                insert_run(&mut tx, inserts).await
            } else {
                rest = &rest[1..];
                apply(&mut tx, first).await
            };
            if let Err(failure) = result {
                // Roll back now rather than when the connection is next used, so no lock
                // outlives the failed change set.
                tx.rollback().await?;
                return Err(failure);
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Runs a query and decodes every row.
    async fn query<T>(&self, mut sql: QueryBuilder<'_, Postgres>, decode: fn(&PgRow) -> Result<T>) -> Result<Vec<T>> {
        let rows = sql.build().fetch_all(self.db.pool()).await.map_err(sql_error)?;
        rows.iter().map(decode).collect()
    }

    async fn query_leaves(&self, sql: QueryBuilder<'_, Postgres>) -> Result<Vec<LeafRecord>> {
        self.query(sql, |row| leaf_row(row)?.into_record()).await
    }

    async fn query_summaries(&self, sql: QueryBuilder<'_, Postgres>) -> Result<Vec<SummaryRecord>> {
        self.query(sql, |row| summary_row(row)?.into_record()).await
    }

    async fn query_entities(&self, sql: QueryBuilder<'_, Postgres>) -> Result<Vec<Entity>> {
        self.query(sql, |row| entity_row(row)?.into_record()).await
    }

    async fn count(&self, sql: &str) -> Result<usize> {
        let n: i64 = sqlx::query(sql).fetch_one(self.db.pool()).await.map_err(sql_error)?.get(0);
        Ok(usize::try_from(n).unwrap_or(0))
    }
}

fn select(table_columns: String, table: &str) -> QueryBuilder<'static, Postgres> {
    QueryBuilder::new(format!("SELECT {table_columns} FROM {table} WHERE "))
}

#[async_trait]
impl MetadataStore for PgStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn commit(&self, changes: ChangeSet) -> Result<()> {
        let mut attempt = 0;
        loop {
            match self.try_commit(&changes).await {
                Ok(()) => return Ok(()),
                Err(Failure::Port(error)) => return Err(error),
                Err(Failure::Sql(error)) if is_retryable(&error) && attempt < COMMIT_RETRIES => {
                    attempt += 1;
                    tracing::debug!(attempt, %error, "change set lost a race; running it again");
                    tokio::time::sleep(Duration::from_millis(5 << attempt.min(6))).await;
                }
                Err(Failure::Sql(error)) => return Err(sql_error(error)),
            }
        }
    }

    async fn leaf(&self, scope: &[Namespace], id: &LeafId) -> Result<Option<LeafRecord>> {
        Ok(self.leaves(scope, std::slice::from_ref(id)).await?.pop())
    }

    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>> {
        if scope.is_empty() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = select(leaf_columns(), "leaves");
        sql.push("id = ANY(").push_bind(ids.iter().map(ToString::to_string).collect::<Vec<_>>());
        sql.push(") AND namespace = ANY(").push_bind(scope_strings(scope)).push(")");
        self.query_leaves(sql).await
    }

    async fn summary(&self, scope: &[Namespace], id: &SummaryId) -> Result<Option<SummaryRecord>> {
        Ok(self.summaries(scope, std::slice::from_ref(id)).await?.pop())
    }

    async fn summaries(&self, scope: &[Namespace], ids: &[SummaryId]) -> Result<Vec<SummaryRecord>> {
        if scope.is_empty() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = select(summary_columns(), "summaries");
        sql.push("id = ANY(").push_bind(ids.iter().map(ToString::to_string).collect::<Vec<_>>());
        sql.push(") AND namespace = ANY(").push_bind(scope_strings(scope)).push(")");
        self.query_summaries(sql).await
    }

    async fn tree(&self, namespace: &Namespace, tree: &TreeId) -> Result<Option<TreeRecord>> {
        let mut sql = select(columns(&TreeRow::COLUMNS, ""), "trees");
        sql.push("namespace = ").push_bind(namespace.to_string()).push(" AND tree_id = ").push_bind(tree.to_string());
        Ok(self.query(sql, |row| tree_row(row)?.into_record()).await?.pop())
    }

    async fn trees(&self, scope: &[Namespace]) -> Result<Vec<TreeRecord>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = select(columns(&TreeRow::COLUMNS, ""), "trees");
        sql.push("namespace = ANY(").push_bind(scope_strings(scope)).push(") ORDER BY namespace, tree_id");
        self.query(sql, |row| tree_row(row)?.into_record()).await
    }

    async fn entity(&self, namespace: &Namespace, id: &EntityId) -> Result<Option<Entity>> {
        let mut sql = select(columns(&EntityRow::COLUMNS, ""), "entities");
        sql.push("id = ").push_bind(id.to_string()).push(" AND namespace = ").push_bind(namespace.to_string());
        Ok(self.query_entities(sql).await?.pop())
    }

    async fn entity_by_slug(&self, namespace: &Namespace, slug: &EntitySlug) -> Result<Option<Entity>> {
        let mut sql = select(columns(&EntityRow::COLUMNS, ""), "entities");
        sql.push("namespace = ").push_bind(namespace.to_string()).push(" AND slug = ").push_bind(slug.to_string());
        Ok(self.query_entities(sql).await?.pop())
    }

    async fn find_entities(&self, namespace: &Namespace, query: &EntityQuery) -> Result<Vec<Entity>> {
        let terms = query.words();
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let mut sql = QueryBuilder::new(format!(
            "SELECT {} FROM (SELECT entity_id, COUNT(*) AS shared FROM entity_terms WHERE namespace = ",
            columns(&EntityRow::COLUMNS, "e.")
        ));
        sql.push_bind(namespace.to_string()).push(" AND term = ANY(").push_bind(terms);
        sql.push(
            ") GROUP BY entity_id) AS m JOIN entities e ON e.id = m.entity_id ORDER BY m.shared DESC, e.id LIMIT ",
        );
        sql.push_bind(limit(query.limit));
        self.query_entities(sql).await
    }

    async fn tree_leaves(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        query: &TreeLeafQuery,
    ) -> Result<Vec<LeafRecord>> {
        let mut sql = select(leaf_columns(), "leaves");
        sql.push("namespace = ").push_bind(namespace.to_string()).push(" AND tree_id = ").push_bind(tree.to_string());
        if let Some(fingerprint) = &query.fingerprint {
            sql.push(" AND fingerprint = ").push_bind(fingerprint.to_string());
        }
        if let Some(subject) = &query.subject {
            sql.push(" AND subject_hash = ").push_bind(subject_hash(subject));
            sql.push(" AND subject = ").push_bind(subject.as_str().to_owned());
        }
        if !query.statuses.is_empty() {
            let statuses: Vec<String> = query.statuses.iter().map(|s| s.as_str().to_owned()).collect();
            sql.push(" AND status = ANY(").push_bind(statuses).push(")");
        }
        self.query_leaves(sql).await
    }

    async fn frontier(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<FrontierNode>> {
        static FRONTIER: LazyLock<String> = LazyLock::new(|| {
            format!(
                "SELECT 'leaf' AS node, id, 0::bigint AS height, COALESCE(known_from, created_at) AS joined FROM leaves
                 WHERE namespace = $1 AND tree_id = $2 AND parent IS NULL AND {}
                 UNION ALL
                 SELECT 'summary', id, height, sealed_at FROM summaries
                 WHERE namespace = $1 AND tree_id = $2 AND parent IS NULL AND role = 'sealed' AND {}",
                status_sql::leaf_sits_in_tree(),
                status_sql::summaries_unless(SummaryStatus::is_tree_member)
            )
        });
        let rows = sqlx::query(FRONTIER.as_str())
            .bind(namespace.to_string())
            .bind(tree.as_str())
            .fetch_all(self.db.pool())
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let node: String = row.try_get(0).map_err(sql_error)?;
                let id: String = row.try_get(1).map_err(sql_error)?;
                let height: i64 = row.try_get(2).map_err(sql_error)?;
                let joined: i64 = row.try_get(3).map_err(sql_error)?;
                Ok(FrontierNode {
                    node: node_from_str(&format!("{node}:{id}"))?,
                    height: u8::try_from(height).unwrap_or(u8::MAX),
                    joined_at: from_ts(joined),
                })
            })
            .collect()
    }

    async fn tree_summaries(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let mut sql = select(summary_columns(), "summaries");
        sql.push("namespace = ").push_bind(namespace.to_string()).push(" AND tree_id = ").push_bind(tree.to_string());
        self.query_summaries(sql).await
    }

    async fn summaries_awaiting_reseal(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let mut sql = select(summary_columns(), "summaries");
        sql.push("namespace = ").push_bind(namespace.to_string()).push(" AND tree_id = ").push_bind(tree.to_string());
        sql.push(" AND role = 'sealed' AND ").push(status_sql::summaries_where(SummaryStatus::awaits_reseal));
        self.query_summaries(sql).await
    }

    async fn list_leaves(&self, filter: &VisibilityFilter, page: Page) -> Result<Vec<LeafRecord>> {
        let mut sql = select(leaf_columns(), "leaves");
        push_visibility(&mut sql, filter)?;
        sql.push(" ORDER BY observed_at DESC, id DESC LIMIT ").push_bind(limit(page.limit));
        sql.push(" OFFSET ").push_bind(limit(page.offset));
        self.query_leaves(sql).await
    }

    async fn leaves_written_after(
        &self,
        namespace: &Namespace,
        after: Option<WriteMark>,
        limit_to: usize,
    ) -> Result<Vec<LeafRecord>> {
        let mut sql = select(leaf_columns(), "leaves");
        sql.push("namespace = ").push_bind(namespace.to_string());
        if let Some(mark) = &after {
            sql.push(" AND (created_at, id) > (").push_bind(ts(mark.at)?).push(", ").push_bind(mark.id.to_string());
            sql.push(")");
        }
        sql.push(" ORDER BY created_at, id LIMIT ").push_bind(limit(limit_to));
        self.query_leaves(sql).await
    }

    async fn versions(&self, namespace: &Namespace, lineage: &LeafId) -> Result<Vec<LeafRecord>> {
        let mut sql = select(leaf_columns(), "leaves");
        sql.push("namespace = ").push_bind(namespace.to_string());
        sql.push(" AND lineage = ").push_bind(lineage.to_string());
        sql.push(" ORDER BY version, id");
        self.query_leaves(sql).await
    }

    async fn leaves_filed_under(&self, namespace: &Namespace, query: &FiledQuery) -> Result<Vec<LeafRecord>> {
        if query.keys.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let mut hashes: Vec<i64> = query.keys.iter().map(|key| lookup_key_hash(namespace, key)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        // Per key, the latest entries of the (key, observed_at, leaf) primary key: an index
        // range each, no leaf row read until the few ranked first are.
        let rows = sqlx::query(
            "SELECT filed.leaf, filed.observed_at, filed.words FROM UNNEST($1::BIGINT[]) AS wanted(key)
             CROSS JOIN LATERAL (SELECT leaf, observed_at, words FROM leaf_keys WHERE leaf_keys.key = wanted.key
                                 ORDER BY observed_at DESC, leaf DESC LIMIT $2) AS filed",
        )
        .bind(&hashes)
        .bind(limit(query.per_key))
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        let mut found = Vec::with_capacity(rows.len());
        for row in &rows {
            let (leaf, observed_at, words): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
            let leaf = LeafId::parse(&leaf).map_err(|e| corrupt("leaf key", &leaf, e))?;
            found.push(FiledEntry { leaf, observed_at: from_ts(observed_at), words: signature_from(words) });
        }
        let ranked = query.rank(&found);
        let leaves = self.leaves(std::slice::from_ref(namespace), &ranked).await?;
        Ok(FiledQuery::in_rank_order(&ranked, leaves))
    }

    async fn claim_jobs(&self, claim: &JobClaim) -> Result<Vec<Job>> {
        let now = ts(claim.now)?;
        // SKIP LOCKED: workers in other processes claiming at the same moment take other jobs
        // instead of waiting for these.
        let rows = sqlx::query(&format!(
            "UPDATE jobs SET lease_worker = $1, lease_until = $2
             WHERE id IN (SELECT id FROM jobs
                          WHERE NOT dead AND run_after <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                          ORDER BY run_after, id LIMIT $4 FOR UPDATE SKIP LOCKED)
             RETURNING {}",
            columns(&JobRow::COLUMNS, "")
        ))
        .bind(&claim.worker)
        .bind(ts(claim.lease_until)?)
        .bind(now)
        .bind(limit(claim.limit))
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        let mut jobs: Vec<Job> = rows.iter().map(|row| job_row(row)?.into_record()).collect::<Result<_>>()?;
        jobs.sort_by(|a, b| (a.run_after, &a.id).cmp(&(b.run_after, &b.id)));
        Ok(jobs)
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>> {
        let rows = sqlx::query("SELECT DISTINCT namespace FROM trees ORDER BY namespace")
            .fetch_all(self.db.pool())
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let raw: String = row.get(0);
                Namespace::parse(&raw).map_err(|e| corrupt("tree", &raw, e))
            })
            .collect()
    }

    async fn body_intents(&self) -> Result<Vec<BodyIntent>> {
        let rows = sqlx::query("SELECT id, owner, created_at, paths FROM body_intents ORDER BY created_at, id")
            .fetch_all(self.db.pool())
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let id: String = row.get(0);
                let bad = |e: &dyn std::fmt::Display| corrupt("body intent", &id, e);
                let paths: Vec<String> = serde_json::from_str(row.get::<&str, _>(3)).map_err(|e| bad(&e))?;
                Ok(BodyIntent {
                    id: JobId::parse(&id).map_err(|e| bad(&e))?,
                    owner: row.get(1),
                    created_at: from_ts(row.get(2)),
                    paths: paths
                        .iter()
                        .map(|p| arbor_domain::paths::BodyPath::parse(p).map_err(|e| bad(&e)))
                        .collect::<Result<_>>()?,
                })
            })
            .collect()
    }

    async fn audit_events(&self, scope: &[Namespace], limit_to: usize) -> Result<Vec<AuditEvent>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT at, action, namespace, node, content_sha256, actor, policy_version FROM audit
             WHERE namespace = ANY($1) ORDER BY seq DESC LIMIT $2",
        )
        .bind(scope_strings(scope))
        .bind(limit(limit_to))
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let namespace: String = row.get(2);
                let bad = |e: &dyn std::fmt::Display| corrupt("audit event", &namespace, e);
                let node: Option<String> = row.get(3);
                let hash: Option<String> = row.get(4);
                Ok(AuditEvent {
                    at: from_ts(row.get(0)),
                    action: row.get(1),
                    namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                    node: node.map(|n| node_from_str(&n)).transpose()?,
                    content_sha256: hash
                        .map(|h| arbor_domain::model::ContentHash::parse(&h).map_err(|e| bad(&e)))
                        .transpose()?,
                    actor: row.get(5),
                    policy_version: row.get(6),
                })
            })
            .collect()
    }

    async fn leaf_neighbours(
        &self,
        filter: &VisibilityFilter,
        anchors: &[LeafPosition],
        each_side: usize,
    ) -> Result<Vec<Neighbours>> {
        let mut out = vec![Neighbours::default(); anchors.len()];
        if each_side == 0 || anchors.is_empty() {
            return Ok(out);
        }
        let mut stamps = Vec::with_capacity(anchors.len());
        for anchor in anchors {
            stamps.push(ts(anchor.observed_at)?);
        }
        // Every anchor and both sides in one statement: a retrieval asks about ten anchors, and
        // twenty round trips (each planned anew for its bound values) were a third of an exact
        // question's time on Postgres. The visibility conditions are written unqualified, so
        // inside each lateral subquery they name the `leaves` row.
        let mut sql = QueryBuilder::<Postgres>::new("WITH a AS (SELECT * FROM unnest(");
        sql.push_bind(anchors.iter().map(|a| a.namespace.to_string()).collect::<Vec<_>>()).push("::text[], ");
        sql.push_bind(anchors.iter().map(|a| a.tree.to_string()).collect::<Vec<_>>()).push("::text[], ");
        sql.push_bind(stamps).push("::bigint[], ");
        sql.push_bind(anchors.iter().map(|a| a.id.to_string()).collect::<Vec<_>>());
        sql.push("::text[]) WITH ORDINALITY AS a(namespace, tree_id, observed_at, id, anchor)) ");
        for (side, comparison, order) in [(0_i32, " < ", " DESC"), (1, " > ", " ASC")] {
            if side == 1 {
                sql.push(" UNION ALL ");
            }
            sql.push("SELECT a.anchor, ").push(side.to_string());
            sql.push(", n.observed_at, n.id FROM a CROSS JOIN LATERAL (SELECT observed_at, id FROM leaves WHERE ");
            push_visibility(&mut sql, filter)?;
            sql.push(" AND namespace = a.namespace AND tree_id = a.tree_id");
            // A row comparison, so the index on (namespace, tree_id, observed_at, id) seeks to
            // the anchor instead of walking the tree from one end.
            sql.push(" AND (observed_at, id)").push(comparison).push("(a.observed_at, a.id)");
            sql.push(" ORDER BY observed_at").push(order).push(", id").push(order);
            sql.push(" LIMIT ").push_bind(limit(each_side)).push(") n");
        }
        let rows = sql.build().fetch_all(self.db.pool()).await.map_err(sql_error)?;
        let mut found: Vec<(usize, i32, i64, String)> = Vec::with_capacity(rows.len());
        for row in &rows {
            let anchor: i64 = row.try_get(0).map_err(sql_error)?;
            let anchor = usize::try_from(anchor - 1).map_err(|e| corrupt("neighbour", &anchor.to_string(), e))?;
            found.push((
                anchor,
                row.try_get(1).map_err(sql_error)?,
                row.try_get(2).map_err(sql_error)?,
                row.try_get(3).map_err(sql_error)?,
            ));
        }
        // Nearest first on each side, whatever order the rows came back in.
        found.sort_by(|a, b| {
            let nearest = if a.1 == 0 { (&b.2, &b.3).cmp(&(&a.2, &a.3)) } else { (&a.2, &a.3).cmp(&(&b.2, &b.3)) };
            (a.0, a.1).cmp(&(b.0, b.1)).then(nearest)
        });
        for (anchor, side, _, id) in found {
            let leaf = LeafId::parse(&id).map_err(|e| corrupt("leaf", &id, e))?;
            let neighbours =
                out.get_mut(anchor).ok_or_else(|| corrupt("neighbour", &anchor.to_string(), "anchor out of range"))?;
            if side == 0 { neighbours.before.push(leaf) } else { neighbours.after.push(leaf) }
        }
        Ok(out)
    }

    async fn retrieval(&self, scope: &[Namespace], id: &RetrievalId) -> Result<Option<ContextSnapshot>> {
        if scope.is_empty() {
            return Ok(None);
        }
        let raw: Option<String> =
            sqlx::query_scalar("SELECT snapshot FROM retrievals WHERE id = $1 AND namespace = ANY($2)")
                .bind(id.as_str())
                .bind(scope_strings(scope))
                .fetch_optional(self.db.pool())
                .await
                .map_err(sql_error)?;
        raw.map(|raw| serde_json::from_str(&raw).map_err(|e| corrupt("retrieval", id.as_str(), e))).transpose()
    }

    async fn access_records(&self, scope: &[Namespace], node: &NodeId, limit_to: usize) -> Result<Vec<AccessRecord>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT retrieval, namespace, entered_context, at FROM access
             WHERE node = $1 AND namespace = ANY($2) ORDER BY seq DESC LIMIT $3",
        )
        .bind(node_to_str(node))
        .bind(scope_strings(scope))
        .bind(limit(limit_to))
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let retrieval: String = row.get(0);
                let namespace: String = row.get(1);
                let bad = |e: &dyn std::fmt::Display| corrupt("access record", &retrieval, e);
                Ok(AccessRecord {
                    retrieval: RetrievalId::parse(&retrieval).map_err(|e| bad(&e))?,
                    node: node.clone(),
                    namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                    entered_context: row.get(2),
                    at: from_ts(row.get(3)),
                })
            })
            .collect()
    }

    /// Looks in every column Arbor writes words to. Postgres keeps the bytes of deleted and
    /// updated row versions in its data pages and WAL until they are reused, on the server's
    /// disk, where no client can look; see ARCHITECTURE.md for what that means for forget.
    async fn contains_text(&self, needle: &str) -> Result<bool> {
        if needle.is_empty() {
            return Ok(false);
        }
        let found: bool = sqlx::query(
            "SELECT EXISTS (SELECT 1 FROM leaves WHERE strpos(title, $1) > 0 OR strpos(summary, $1) > 0
                              OR strpos(COALESCE(subject, ''), $1) > 0 OR strpos(labels, $1) > 0)
                 OR EXISTS (SELECT 1 FROM summaries WHERE strpos(title, $1) > 0 OR strpos(summary, $1) > 0
                              OR strpos(labels, $1) > 0)
                 OR EXISTS (SELECT 1 FROM entities WHERE strpos(name, $1) > 0 OR strpos(aliases, $1) > 0)
                 OR EXISTS (SELECT 1 FROM trees WHERE strpos(title, $1) > 0)
                 OR EXISTS (SELECT 1 FROM retrievals WHERE strpos(snapshot, $1) > 0)",
        )
        .bind(needle)
        .fetch_one(self.db.pool())
        .await
        .map_err(sql_error)?
        .get(0);
        Ok(found)
    }

    async fn pending_jobs(&self, kind: JobKind, scope: &[Namespace], limit: usize) -> Result<Vec<Job>> {
        if scope.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&format!(
            "SELECT {} FROM jobs WHERE NOT dead AND kind = $1 AND namespace = ANY($2)
             ORDER BY created_at DESC, id DESC LIMIT $3",
            columns(&JobRow::COLUMNS, "")
        ))
        .bind(kind.as_str())
        .bind(scope_strings(scope))
        .bind(self::limit(limit))
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        rows.iter().map(|row| job_row(row)?.into_record()).collect()
    }

    async fn job_leases(&self) -> Result<Vec<JobLease>> {
        let rows = sqlx::query(
            "SELECT id, kind, namespace, lease_worker, lease_until FROM jobs
             WHERE lease_worker IS NOT NULL AND lease_until IS NOT NULL ORDER BY lease_until, id",
        )
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        rows.iter()
            .map(|row| {
                let id: String = row.get(0);
                let bad = |e: &dyn std::fmt::Display| corrupt("job", &id, e);
                let kind: String = row.get(1);
                let namespace: String = row.get(2);
                Ok(JobLease {
                    id: JobId::parse(&id).map_err(|e| bad(&e))?,
                    kind: arbor_ports::rows::job_kind(&kind)
                        .ok_or_else(|| bad(&format!("unknown job kind {kind:?}")))?,
                    namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                    worker: row.get(3),
                    until: from_ts(row.get(4)),
                })
            })
            .collect()
    }

    /// Postgres checks its own pages (checksums, when the cluster has them): what is left to
    /// check here is that every row decodes.
    async fn check_integrity(&self) -> Result<IntegrityReport> {
        let mut report = IntegrityReport::default();
        let tables: [(&str, String, &str, fn(&PgRow) -> Result<()>); 5] = [
            ("leaves", leaf_columns(), "id", |row| leaf_row(row)?.into_record().map(drop)),
            ("summaries", summary_columns(), "id", |row| summary_row(row)?.into_record().map(drop)),
            ("trees", columns(&TreeRow::COLUMNS, ""), "namespace || '/' || tree_id", |row| {
                tree_row(row)?.into_record().map(drop)
            }),
            ("entities", columns(&EntityRow::COLUMNS, ""), "id", |row| entity_row(row)?.into_record().map(drop)),
            ("jobs", columns(&JobRow::COLUMNS, ""), "id", |row| job_row(row)?.into_record().map(drop)),
        ];
        for (table, table_columns, key, decode) in tables {
            // The key last: the decoders read the columns by name.
            let sql = format!("SELECT {table_columns}, {key} AS arbor_row_key FROM {table}");
            let rows = sqlx::query(&sql).fetch_all(self.db.pool()).await.map_err(sql_error)?;
            for row in &rows {
                if let Err(error) = decode(row) {
                    let shown: String = row.try_get("arbor_row_key").unwrap_or_else(|_| "?".to_owned());
                    report.damaged_rows.push(DamagedRow {
                        table: table.to_owned(),
                        key: shown,
                        detail: error.to_string(),
                    });
                }
            }
        }
        Ok(report)
    }

    async fn counts(&self) -> Result<StoreCounts> {
        let rows = sqlx::query("SELECT status, COUNT(*) FROM leaves GROUP BY status")
            .fetch_all(self.db.pool())
            .await
            .map_err(sql_error)?;
        let mut by_status = Vec::new();
        for row in &rows {
            let status: String = row.get(0);
            let n: i64 = row.get(1);
            let status = LeafStatus::parse(&status).ok_or_else(|| corrupt("leaf status", &status, "unknown"))?;
            by_status.push((status, usize::try_from(n).unwrap_or(0)));
        }
        by_status.sort();
        Ok(StoreCounts {
            namespaces: self.count("SELECT COUNT(DISTINCT namespace) FROM trees").await?,
            trees: self.count("SELECT COUNT(*) FROM trees").await?,
            entities: self.count("SELECT COUNT(*) FROM entities").await?,
            leaves_by_status: by_status,
            summaries_current: self.count(&status_sql::count_summaries_in(SummaryStatus::Current)).await?,
            summaries_stale: self.count(&status_sql::count_summaries_in(SummaryStatus::Stale)).await?,
            summaries_purged: self.count(&status_sql::count_summaries_in(SummaryStatus::Purged)).await?,
            summaries_retired: self.count(&status_sql::count_summaries_in(SummaryStatus::Retired)).await?,
            jobs_pending: self.count("SELECT COUNT(*) FROM jobs WHERE NOT dead").await?,
            jobs_dead: self.count("SELECT COUNT(*) FROM jobs WHERE dead").await?,
            jobs_next_due: sqlx::query_scalar::<_, Option<i64>>(
                "SELECT MIN(run_after) FROM jobs WHERE NOT dead AND lease_until IS NULL",
            )
            .fetch_one(self.db.pool())
            .await
            .map_err(sql_error)?
            .map(from_ts),
            audit_events: self.count("SELECT COUNT(*) FROM audit").await?,
        })
    }
}
