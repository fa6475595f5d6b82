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
    EntityRow, JobRow, LeafRow, SummaryRow, TreeRow, corrupt, from_ts, lookup_key_hash, node_from_str, node_to_str,
    signature_from, status_sql, subject_hash, ts,
};
use arbor_ports::{
    AccessRecord, AuditEvent, BodyIntent, Change, ChangeSet, ContextSnapshot, DamagedRow, EntityQuery, Error,
    FiledEntry, FiledQuery, IntegrityReport, Job, JobClaim, JobKind, JobLease, LeafPosition, MetadataStore, Neighbours,
    Page, Result, StoreCounts, TreeLeafQuery, WriteMark,
};
use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{Postgres, QueryBuilder, Row};

use crate::codec::{columns, entity_row, job_row, leaf_row, summary_row, tree_row};
use crate::config::PgDatabase;
use crate::error::{BACKEND, is_retryable, sql_error};
use crate::filter::push_visibility;
use crate::schema::LOCK_CLASS;

mod changes;

use changes::{apply, insert_run, is_plain_insert};

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

    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>> {
        if scope.is_empty() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = select(leaf_columns(), "leaves");
        sql.push("id = ANY(").push_bind(ids.iter().map(ToString::to_string).collect::<Vec<_>>());
        sql.push(") AND namespace = ANY(").push_bind(scope_strings(scope)).push(")");
        self.query_leaves(sql).await
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
