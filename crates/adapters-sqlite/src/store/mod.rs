//! [`SqliteStore`]: the metadata store on SQLite. A change set is one transaction; every
//! precondition is checked inside it, and any failure rolls the whole set back.

use std::collections::BTreeSet;
use std::sync::Arc;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryRecord, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::seal::FrontierNode;
use arbor_domain::visibility::VisibilityFilter;
use arbor_ports::rows::{lookup_key_hash, signature_from, status_sql};
use arbor_ports::{
    AccessRecord, AuditEvent, BodyIntent, ChangeSet, ContextSnapshot, DamagedRow, EntityQuery, Error, FiledEntry,
    FiledQuery, IntegrityReport, Job, JobClaim, JobKind, JobLease, LeafPosition, MetadataStore, Neighbours, Page,
    Result, StoreCounts, TreeLeafQuery, WriteMark,
};
use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};

use crate::codec::{
    ENTITY_COLUMNS, JOB_COLUMNS, LEAF_COLUMNS, SUMMARY_COLUMNS, TREE_COLUMNS, entity_from_row, from_ts, job_from_row,
    leaf_from_row, node_from_str, node_to_str, subject_hash, summary_from_row, tree_from_row, ts,
};
use crate::config::SqliteDatabase;
use crate::error::{BACKEND, sql_error};
use crate::filter::{leaf_visibility_sql, placeholders};
use crate::transaction::write_transaction;

mod changes;

use changes::{apply, scrubs};

/// The metadata store on a [`SqliteDatabase`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    db: Arc<SqliteDatabase>,
}

impl SqliteStore {
    pub fn new(db: Arc<SqliteDatabase>) -> SqliteStore {
        SqliteStore { db }
    }

    pub fn database(&self) -> &Arc<SqliteDatabase> {
        &self.db
    }

    /// [`MetadataStore::leaf_neighbours`] of one anchor.
    fn neighbours_of(&self, filter: &VisibilityFilter, anchor: &LeafPosition, each_side: usize) -> Result<Neighbours> {
        let mut out = Neighbours::default();
        if each_side == 0 {
            return Ok(out);
        }
        let at = ts(anchor.observed_at)?;
        for (side, comparison, order) in [(&mut out.before, "<", "DESC"), (&mut out.after, ">", "ASC")] {
            let mut params = Vec::new();
            let condition = leaf_visibility_sql(filter, &mut params)?;
            params.extend([
                Value::Text(anchor.namespace.to_string()),
                Value::Text(anchor.tree.to_string()),
                Value::Integer(at),
                Value::Integer(at),
                Value::Integer(at),
                Value::Text(anchor.id.to_string()),
                Value::Integer(i64::try_from(each_side).unwrap_or(i64::MAX)),
            ]);
            // The plain `observed_at <=` / `>=` bound is implied by the one after it, but it is
            // what lets the index seek to the anchor: without it the search walks the tree's
            // index from one end to the anchor, half a tree per question on average.
            let sql = format!(
                "SELECT id FROM leaves WHERE {condition} AND namespace = ? AND tree_id = ?
                   AND observed_at {comparison}= ?
                   AND (observed_at {comparison} ? OR (observed_at = ? AND id {comparison} ?))
                 ORDER BY observed_at {order}, id {order} LIMIT ?"
            );
            let conn = self.db.lock();
            let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
            let mut rows = stmt.query(params_from_iter(params)).map_err(sql_error)?;
            while let Some(row) = rows.next().map_err(sql_error)? {
                let id: String = row.get(0).map_err(sql_error)?;
                side.push(LeafId::parse(&id).map_err(|e| crate::error::corrupt("leaf", &id, e))?);
            }
        }
        Ok(out)
    }
}

/// Runs a write through the connection's statement cache: the write path issues the same few
/// statements for every event, and parsing each one again was a sixth of a commit's time.
fn execute_cached(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// [`Connection::query_row`] through the statement cache, as [`execute_cached`].
fn query_row_cached<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(sql)?.query_row(params, read)
}

fn scope_values(scope: &[Namespace]) -> Vec<Value> {
    scope.iter().map(|ns| Value::Text(ns.to_string())).collect()
}

impl SqliteStore {
    /// Runs `sql` and decodes every row with `decode`.
    fn query<T>(&self, sql: &str, params: Vec<Value>, decode: fn(&Row<'_>) -> Result<T>) -> Result<Vec<T>> {
        let conn = self.db.lock();
        let mut stmt = conn.prepare_cached(sql).map_err(sql_error)?;
        let mut rows = stmt.query(params_from_iter(params)).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            out.push(decode(row)?);
        }
        Ok(out)
    }

    fn query_leaves(&self, sql: &str, params: Vec<Value>) -> Result<Vec<LeafRecord>> {
        self.query(sql, params, leaf_from_row)
    }

    fn query_summaries(&self, sql: &str, params: Vec<Value>) -> Result<Vec<SummaryRecord>> {
        self.query(sql, params, summary_from_row)
    }

    fn query_entities(&self, sql: &str, params: Vec<Value>) -> Result<Vec<Entity>> {
        self.query(sql, params, entity_from_row)
    }
}

#[async_trait]
impl MetadataStore for SqliteStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn commit(&self, changes: ChangeSet) -> Result<()> {
        let scrubbing = changes.changes.iter().any(scrubs);
        let committed = (|| {
            let mut conn = self.db.lock();
            let tx = write_transaction(&mut conn)?;
            for change in changes.changes {
                apply(&tx, change)?;
            }
            tx.commit().map_err(sql_error)
        })();
        if let Err(error) = committed {
            // SQLite found the file damaged while writing: no process writes into it again
            // until it is repaired.
            if let Error::Integrity { what: "database", detail, .. } = &error {
                self.db.record_damage(detail);
            }
            return Err(error);
        }
        if scrubbing {
            // Best effort: if another process holds an old snapshot the log keeps old pages
            // until a later checkpoint; `contains_text` reports that honestly meanwhile.
            if let Err(error) = self.db.checkpoint() {
                tracing::warn!(%error, "could not truncate the log after removing words; will retry on the next scrub");
            }
        }
        Ok(())
    }

    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>> {
        if scope.is_empty() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut params: Vec<Value> = ids.iter().map(|id| Value::Text(id.to_string())).collect();
        params.extend(scope_values(scope));
        // `+namespace` keeps the planner on the id index: without statistics it would rather
        // walk every leaf of the namespace.
        let sql = format!(
            "SELECT {LEAF_COLUMNS} FROM leaves WHERE id IN ({}) AND +namespace IN ({})",
            placeholders(ids.len()),
            placeholders(scope.len())
        );
        self.query_leaves(&sql, params)
    }

    async fn summaries(&self, scope: &[Namespace], ids: &[SummaryId]) -> Result<Vec<SummaryRecord>> {
        if scope.is_empty() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut params: Vec<Value> = ids.iter().map(|id| Value::Text(id.to_string())).collect();
        params.extend(scope_values(scope));
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM summaries WHERE id IN ({}) AND +namespace IN ({})",
            placeholders(ids.len()),
            placeholders(scope.len())
        );
        self.query_summaries(&sql, params)
    }

    async fn tree(&self, namespace: &Namespace, tree: &TreeId) -> Result<Option<TreeRecord>> {
        let conn = self.db.lock();
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {TREE_COLUMNS} FROM trees WHERE namespace = ? AND tree_id = ?"))
            .map_err(sql_error)?;
        let mut rows = stmt.query(params![namespace.to_string(), tree.as_str()]).map_err(sql_error)?;
        match rows.next().map_err(sql_error)? {
            Some(row) => Ok(Some(tree_from_row(row)?)),
            None => Ok(None),
        }
    }

    async fn trees(&self, scope: &[Namespace]) -> Result<Vec<TreeRecord>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {TREE_COLUMNS} FROM trees WHERE namespace IN ({}) ORDER BY namespace, tree_id",
            placeholders(scope.len())
        );
        self.query(&sql, scope_values(scope), tree_from_row)
    }

    async fn entity(&self, namespace: &Namespace, id: &EntityId) -> Result<Option<Entity>> {
        let sql = format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ? AND namespace = ?");
        Ok(self.query_entities(&sql, vec![Value::Text(id.to_string()), Value::Text(namespace.to_string())])?.pop())
    }

    async fn entity_by_slug(&self, namespace: &Namespace, slug: &EntitySlug) -> Result<Option<Entity>> {
        let sql = format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ? AND slug = ?");
        Ok(self.query_entities(&sql, vec![Value::Text(namespace.to_string()), Value::Text(slug.to_string())])?.pop())
    }

    async fn find_entities(&self, namespace: &Namespace, query: &EntityQuery) -> Result<Vec<Entity>> {
        let terms = query.words();
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        // The list is padded to a power of two with a term no entity has (tokens are never
        // empty), so a handful of statements serve every query.
        let slots = terms.len().next_power_of_two();
        let mut params = vec![Value::Text(namespace.to_string())];
        params.extend(terms.iter().map(|t| Value::Text(t.clone())));
        params.resize(slots + 1, Value::Text(String::new()));
        params.push(Value::Integer(i64::try_from(query.limit).unwrap_or(i64::MAX)));
        let columns: Vec<String> = ENTITY_COLUMNS.split(", ").map(|c| format!("e.{c}")).collect();
        let sql = format!(
            "SELECT {} FROM (SELECT entity_id, COUNT(*) AS shared FROM entity_terms
                 WHERE namespace = ? AND term IN ({}) GROUP BY entity_id) AS m
             JOIN entities e ON e.id = m.entity_id
             ORDER BY m.shared DESC, e.id LIMIT ?",
            columns.join(", "),
            placeholders(slots)
        );
        self.query_entities(&sql, params)
    }

    async fn tree_leaves(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        query: &TreeLeafQuery,
    ) -> Result<Vec<LeafRecord>> {
        let mut sql = format!("SELECT {LEAF_COLUMNS} FROM leaves WHERE namespace = ? AND tree_id = ?");
        let mut params = vec![Value::Text(namespace.to_string()), Value::Text(tree.to_string())];
        if let Some(fingerprint) = &query.fingerprint {
            sql.push_str(" AND fingerprint = ?");
            params.push(Value::Text(fingerprint.to_string()));
        }
        if let Some(subject) = &query.subject {
            sql.push_str(" AND subject_hash = ? AND subject = ?");
            params.push(Value::Text(subject_hash(subject)));
            params.push(Value::Text(subject.as_str().to_owned()));
        }
        if !query.statuses.is_empty() {
            sql.push_str(&format!(" AND status IN ({})", placeholders(query.statuses.len())));
            params.extend(query.statuses.iter().map(|s| Value::Text(s.as_str().to_owned())));
        }
        self.query_leaves(&sql, params)
    }

    async fn frontier(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<FrontierNode>> {
        let conn = self.db.lock();
        let mut out = Vec::new();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT id, COALESCE(known_from, created_at) FROM leaves
                 WHERE namespace = ? AND tree_id = ? AND parent IS NULL AND {}",
                status_sql::leaf_sits_in_tree()
            ))
            .map_err(sql_error)?;
        let mut rows = stmt.query(params![namespace.to_string(), tree.as_str()]).map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let id: String = row.get(0).map_err(sql_error)?;
            let joined: i64 = row.get(1).map_err(sql_error)?;
            let id = LeafId::parse(&id).map_err(|e| crate::error::corrupt("leaf", &id, e))?;
            out.push(FrontierNode { node: id.into(), height: 0, joined_at: from_ts(joined) });
        }
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT id, height, sealed_at FROM summaries
                 WHERE namespace = ? AND tree_id = ? AND parent IS NULL AND role = 'sealed' AND {}",
                status_sql::summaries_unless(SummaryStatus::is_tree_member)
            ))
            .map_err(sql_error)?;
        let mut rows = stmt.query(params![namespace.to_string(), tree.as_str()]).map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let id: String = row.get(0).map_err(sql_error)?;
            let height: i64 = row.get(1).map_err(sql_error)?;
            let sealed: i64 = row.get(2).map_err(sql_error)?;
            let id = SummaryId::parse(&id).map_err(|e| crate::error::corrupt("summary", &id, e))?;
            out.push(FrontierNode {
                node: id.into(),
                height: u8::try_from(height).unwrap_or(u8::MAX),
                joined_at: from_ts(sealed),
            });
        }
        Ok(out)
    }

    async fn tree_summaries(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM summaries WHERE namespace = ? AND tree_id = ?");
        self.query_summaries(&sql, vec![Value::Text(namespace.to_string()), Value::Text(tree.to_string())])
    }

    async fn summaries_awaiting_reseal(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM summaries
             WHERE namespace = ? AND tree_id = ? AND role = 'sealed' AND {}",
            status_sql::summaries_where(SummaryStatus::awaits_reseal)
        );
        self.query_summaries(&sql, vec![Value::Text(namespace.to_string()), Value::Text(tree.to_string())])
    }

    async fn list_leaves(&self, filter: &VisibilityFilter, page: Page) -> Result<Vec<LeafRecord>> {
        let mut params = Vec::new();
        let condition = leaf_visibility_sql(filter, &mut params)?;
        params.push(Value::Integer(i64::try_from(page.limit).unwrap_or(i64::MAX)));
        params.push(Value::Integer(i64::try_from(page.offset).unwrap_or(i64::MAX)));
        let sql = format!(
            "SELECT {LEAF_COLUMNS} FROM leaves WHERE {condition} ORDER BY observed_at DESC, id DESC LIMIT ? OFFSET ?"
        );
        self.query_leaves(&sql, params)
    }

    async fn leaves_written_after(
        &self,
        namespace: &Namespace,
        after: Option<WriteMark>,
        limit: usize,
    ) -> Result<Vec<LeafRecord>> {
        let mut sql = format!("SELECT {LEAF_COLUMNS} FROM leaves WHERE namespace = ?");
        let mut params = vec![Value::Text(namespace.to_string())];
        if let Some(mark) = &after {
            sql.push_str(" AND (created_at > ? OR (created_at = ? AND id > ?))");
            params.extend([
                Value::Integer(ts(mark.at)?),
                Value::Integer(ts(mark.at)?),
                Value::Text(mark.id.to_string()),
            ]);
        }
        sql.push_str(" ORDER BY created_at, id LIMIT ?");
        params.push(Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        self.query_leaves(&sql, params)
    }

    async fn versions(&self, namespace: &Namespace, lineage: &LeafId) -> Result<Vec<LeafRecord>> {
        let sql = format!("SELECT {LEAF_COLUMNS} FROM leaves WHERE namespace = ? AND lineage = ? ORDER BY version, id");
        self.query_leaves(&sql, vec![Value::Text(namespace.to_string()), Value::Text(lineage.to_string())])
    }

    async fn leaves_filed_under(&self, namespace: &Namespace, query: &FiledQuery) -> Result<Vec<LeafRecord>> {
        // Per key, the latest entries of the (key, observed_at, leaf) primary key: an index
        // range each, no leaf row read until the few ranked first are.
        let hashes: BTreeSet<i64> = query.keys.iter().map(|key| lookup_key_hash(namespace, key)).collect();
        let per_key = i64::try_from(query.per_key).unwrap_or(i64::MAX);
        let mut found = Vec::new();
        {
            let conn = self.db.lock();
            let mut latest = conn
                .prepare_cached(
                    "SELECT leaf, observed_at, words FROM leaf_keys WHERE key = ? \
                     ORDER BY observed_at DESC, leaf DESC LIMIT ?",
                )
                .map_err(sql_error)?;
            for hash in hashes {
                let mut rows = latest.query(params![hash, per_key]).map_err(sql_error)?;
                while let Some(row) = rows.next().map_err(sql_error)? {
                    let leaf: String = row.get(0).map_err(sql_error)?;
                    found.push(FiledEntry {
                        leaf: LeafId::parse(&leaf).map_err(|e| crate::error::corrupt("leaf key", &leaf, e))?,
                        observed_at: from_ts(row.get(1).map_err(sql_error)?),
                        words: signature_from(row.get(2).map_err(sql_error)?),
                    });
                }
            }
        }
        let ranked = query.rank(&found);
        let leaves = self.leaves(std::slice::from_ref(namespace), &ranked).await?;
        Ok(FiledQuery::in_rank_order(&ranked, leaves))
    }

    async fn claim_jobs(&self, claim: &JobClaim) -> Result<Vec<Job>> {
        let mut conn = self.db.lock();
        let tx = write_transaction(&mut conn)?;
        let now = ts(claim.now)?;
        let mut jobs = Vec::new();
        {
            let mut stmt = tx
                .prepare_cached(&format!(
                    "SELECT {JOB_COLUMNS} FROM jobs
                     WHERE dead = 0 AND run_after <= ? AND (lease_until IS NULL OR lease_until <= ?)
                     ORDER BY run_after, id LIMIT ?"
                ))
                .map_err(sql_error)?;
            let mut rows =
                stmt.query(params![now, now, i64::try_from(claim.limit).unwrap_or(i64::MAX)]).map_err(sql_error)?;
            while let Some(row) = rows.next().map_err(sql_error)? {
                jobs.push(job_from_row(row)?);
            }
        }
        let until = ts(claim.lease_until)?;
        for job in &jobs {
            execute_cached(
                &tx,
                "UPDATE jobs SET lease_worker = ?, lease_until = ? WHERE id = ?",
                params![claim.worker, until, job.id.as_str()],
            )
            .map_err(sql_error)?;
        }
        tx.commit().map_err(sql_error)?;
        Ok(jobs)
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>> {
        let conn = self.db.lock();
        let mut stmt =
            conn.prepare_cached("SELECT DISTINCT namespace FROM trees ORDER BY namespace").map_err(sql_error)?;
        let mut rows = stmt.query([]).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let raw: String = row.get(0).map_err(sql_error)?;
            out.push(Namespace::parse(&raw).map_err(|e| crate::error::corrupt("tree", &raw, e))?);
        }
        Ok(out)
    }

    async fn body_intents(&self) -> Result<Vec<BodyIntent>> {
        let conn = self.db.lock();
        let mut stmt = conn
            .prepare_cached("SELECT id, owner, created_at, paths FROM body_intents ORDER BY created_at, id")
            .map_err(sql_error)?;
        let mut rows = stmt.query([]).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let id: String = row.get(0).map_err(sql_error)?;
            let bad = |e: &dyn std::fmt::Display| crate::error::corrupt("body intent", &id, e);
            let paths: String = row.get(3).map_err(sql_error)?;
            let paths: Vec<String> = serde_json::from_str(&paths).map_err(|e| bad(&e))?;
            out.push(BodyIntent {
                id: JobId::parse(&id).map_err(|e| bad(&e))?,
                owner: row.get(1).map_err(sql_error)?,
                created_at: from_ts(row.get(2).map_err(sql_error)?),
                paths: paths
                    .iter()
                    .map(|p| arbor_domain::paths::BodyPath::parse(p).map_err(|e| bad(&e)))
                    .collect::<Result<_>>()?,
            });
        }
        Ok(out)
    }

    async fn audit_events(&self, scope: &[Namespace], limit: usize) -> Result<Vec<AuditEvent>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let sql = format!(
            "SELECT at, action, namespace, node, content_sha256, actor, policy_version FROM audit
             WHERE namespace IN ({}) ORDER BY seq DESC LIMIT ?",
            placeholders(scope.len())
        );
        let mut params = scope_values(scope);
        params.push(Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
        let mut rows = stmt.query(params_from_iter(params)).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let namespace: String = row.get(2).map_err(sql_error)?;
            let node: Option<String> = row.get(3).map_err(sql_error)?;
            let hash: Option<String> = row.get(4).map_err(sql_error)?;
            let bad = |e: &dyn std::fmt::Display| crate::error::corrupt("audit event", &namespace, e);
            out.push(AuditEvent {
                at: from_ts(row.get(0).map_err(sql_error)?),
                action: row.get(1).map_err(sql_error)?,
                namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                node: node.map(|n| node_from_str(&n)).transpose()?,
                content_sha256: hash
                    .map(|h| arbor_domain::model::ContentHash::parse(&h).map_err(|e| bad(&e)))
                    .transpose()?,
                actor: row.get(5).map_err(sql_error)?,
                policy_version: row.get(6).map_err(sql_error)?,
            });
        }
        Ok(out)
    }

    async fn leaf_neighbours(
        &self,
        filter: &VisibilityFilter,
        anchors: &[LeafPosition],
        each_side: usize,
    ) -> Result<Vec<Neighbours>> {
        // In-process lookups cost no round trip: one anchor at a time.
        anchors.iter().map(|anchor| self.neighbours_of(filter, anchor, each_side)).collect()
    }

    async fn retrieval(&self, scope: &[Namespace], id: &RetrievalId) -> Result<Option<ContextSnapshot>> {
        if scope.is_empty() {
            return Ok(None);
        }
        let conn = self.db.lock();
        let sql =
            format!("SELECT snapshot FROM retrievals WHERE id = ? AND namespace IN ({})", placeholders(scope.len()));
        let mut params = vec![Value::Text(id.as_str().to_owned())];
        params.extend(scope_values(scope));
        let raw: Option<String> = conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| stmt.query_row(params_from_iter(params), |row| row.get(0)).optional())
            .map_err(sql_error)?;
        raw.map(|raw| serde_json::from_str(&raw).map_err(|e| crate::error::corrupt("retrieval", id.as_str(), e)))
            .transpose()
    }

    async fn access_records(&self, scope: &[Namespace], node: &NodeId, limit: usize) -> Result<Vec<AccessRecord>> {
        if scope.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let sql = format!(
            "SELECT retrieval, namespace, entered_context, at FROM access
             WHERE node = ? AND namespace IN ({}) ORDER BY seq DESC LIMIT ?",
            placeholders(scope.len())
        );
        let mut params = vec![Value::Text(node_to_str(node))];
        params.extend(scope_values(scope));
        params.push(Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
        let mut rows = stmt.query(params_from_iter(params)).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let retrieval: String = row.get(0).map_err(sql_error)?;
            let namespace: String = row.get(1).map_err(sql_error)?;
            let bad = |e: &dyn std::fmt::Display| crate::error::corrupt("access record", &retrieval, e);
            out.push(AccessRecord {
                retrieval: RetrievalId::parse(&retrieval).map_err(|e| bad(&e))?,
                node: node.clone(),
                namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                entered_context: row.get(2).map_err(sql_error)?,
                at: from_ts(row.get(3).map_err(sql_error)?),
            });
        }
        Ok(out)
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        if needle.is_empty() {
            return Ok(false);
        }
        let in_rows: bool = {
            let conn = self.db.lock();
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM leaves WHERE instr(title, ?1) OR instr(summary, ?1)
                                  OR instr(COALESCE(subject, ''), ?1) OR instr(labels, ?1))
                     OR EXISTS (SELECT 1 FROM summaries WHERE instr(title, ?1) OR instr(summary, ?1) OR instr(labels, ?1))
                     OR EXISTS (SELECT 1 FROM entities WHERE instr(name, ?1) OR instr(aliases, ?1))
                     OR EXISTS (SELECT 1 FROM trees WHERE instr(title, ?1))
                     OR EXISTS (SELECT 1 FROM retrievals WHERE instr(snapshot, ?1))",
                [needle],
                |r| r.get(0),
            )
            .map_err(sql_error)?
        };
        Ok(in_rows || self.db.files_contain(needle.as_bytes())?)
    }

    async fn pending_jobs(&self, kind: JobKind, scope: &[Namespace], limit: usize) -> Result<Vec<Job>> {
        if scope.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE dead = 0 AND kind = ? AND namespace IN ({})
             ORDER BY created_at DESC, id DESC LIMIT ?",
            placeholders(scope.len())
        );
        let mut params = vec![Value::Text(kind.as_str().to_owned())];
        params.extend(scope_values(scope));
        params.push(Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
        let mut rows = stmt.query(params_from_iter(params)).map_err(sql_error)?;
        let mut jobs = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            jobs.push(job_from_row(row)?);
        }
        Ok(jobs)
    }

    async fn job_leases(&self) -> Result<Vec<JobLease>> {
        let conn = self.db.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, kind, namespace, lease_worker, lease_until FROM jobs
                 WHERE lease_worker IS NOT NULL AND lease_until IS NOT NULL ORDER BY lease_until, id",
            )
            .map_err(sql_error)?;
        let mut rows = stmt.query([]).map_err(sql_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let id: String = row.get(0).map_err(sql_error)?;
            let bad = |e: &dyn std::fmt::Display| crate::error::corrupt("job", &id, e);
            let kind: String = row.get(1).map_err(sql_error)?;
            let namespace: String = row.get(2).map_err(sql_error)?;
            out.push(JobLease {
                id: JobId::parse(&id).map_err(|e| bad(&e))?,
                kind: arbor_ports::rows::job_kind(&kind).ok_or_else(|| bad(&format!("unknown job kind {kind:?}")))?,
                namespace: Namespace::parse(&namespace).map_err(|e| bad(&e))?,
                worker: row.get(3).map_err(sql_error)?,
                until: from_ts(row.get(4).map_err(sql_error)?),
            });
        }
        Ok(out)
    }

    async fn check_integrity(&self) -> Result<IntegrityReport> {
        let conn = self.db.lock();
        let mut report = IntegrityReport::default();
        // A file too damaged for the check to run is itself the finding.
        let engine = (|| -> rusqlite::Result<Vec<String>> {
            let mut stmt = conn.prepare("PRAGMA integrity_check")?;
            let lines = stmt.query_map([], |row| row.get::<_, String>(0))?;
            lines.collect()
        })();
        match engine {
            Ok(lines) => report.engine.extend(lines.into_iter().filter(|line| line != "ok")),
            Err(error) => report.engine.push(format!("the integrity check could not run: {error}")),
        }
        if !report.engine.is_empty() {
            // The rows of a file that fails the check are not worth decoding one by one.
            drop(conn);
            self.db.record_damage(&report.engine.join("; "));
            return Ok(report);
        }
        // Every row decoded as the store reads it; a row that does not is named by its key.
        fn scan(
            conn: &rusqlite::Connection,
            report: &mut IntegrityReport,
            table: &str,
            columns: &str,
            key: &str,
            decode: &dyn Fn(&Row<'_>) -> Result<()>,
        ) -> Result<()> {
            // The key last: the decoders read the columns from index 0.
            let sql = format!("SELECT {columns}, {key} FROM {table}");
            let key_column = columns.split(", ").count();
            let mut stmt = conn.prepare(&sql).map_err(sql_error)?;
            let mut rows = stmt.query([]).map_err(sql_error)?;
            let mut position = 0usize;
            loop {
                let row = match rows.next() {
                    Ok(Some(row)) => row,
                    Ok(None) => break,
                    Err(error) => {
                        // The engine could not even step past this row: report it and stop.
                        report.damaged_rows.push(DamagedRow {
                            table: table.to_owned(),
                            key: format!("row {}", position + 1),
                            detail: error.to_string(),
                        });
                        break;
                    }
                };
                position += 1;
                let shown = row.get::<_, String>(key_column).unwrap_or_else(|_| format!("row {position}"));
                if let Err(error) = decode(row) {
                    report.damaged_rows.push(DamagedRow {
                        table: table.to_owned(),
                        key: shown,
                        detail: error.to_string(),
                    });
                }
            }
            Ok(())
        }
        scan(&conn, &mut report, "leaves", LEAF_COLUMNS, "id", &|r| leaf_from_row(r).map(drop))?;
        scan(&conn, &mut report, "summaries", SUMMARY_COLUMNS, "id", &|r| summary_from_row(r).map(drop))?;
        scan(&conn, &mut report, "trees", TREE_COLUMNS, "namespace || '/' || tree_id", &|r| {
            tree_from_row(r).map(drop)
        })?;
        scan(&conn, &mut report, "entities", ENTITY_COLUMNS, "id", &|r| entity_from_row(r).map(drop))?;
        scan(&conn, &mut report, "jobs", JOB_COLUMNS, "id", &|r| job_from_row(r).map(drop))?;
        drop(conn);
        // A file that fails the engine's check takes no more writes, in any process, until a
        // check passes again (after it is restored from a backup, say).
        if !report.engine.is_empty() {
            self.db.record_damage(&report.engine.join("; "));
        } else if self.db.is_marked_damaged()
            && let Err(error) = self.db.clear_damage()
        {
            tracing::warn!(%error, "the database checked sound, but its damage mark could not be removed");
        }
        Ok(report)
    }

    async fn counts(&self) -> Result<StoreCounts> {
        let conn = self.db.lock();
        let count = |sql: &str| -> Result<usize> {
            let n: i64 = conn.query_row(sql, [], |r| r.get(0)).map_err(sql_error)?;
            Ok(usize::try_from(n).unwrap_or(0))
        };
        let mut by_status = Vec::new();
        {
            let mut stmt =
                conn.prepare_cached("SELECT status, COUNT(*) FROM leaves GROUP BY status").map_err(sql_error)?;
            let mut rows = stmt.query([]).map_err(sql_error)?;
            while let Some(row) = rows.next().map_err(sql_error)? {
                let status: String = row.get(0).map_err(sql_error)?;
                let n: i64 = row.get(1).map_err(sql_error)?;
                let status = LeafStatus::parse(&status)
                    .ok_or_else(|| crate::error::corrupt("leaf status", &status, "unknown"))?;
                by_status.push((status, usize::try_from(n).unwrap_or(0)));
            }
        }
        by_status.sort();
        Ok(StoreCounts {
            namespaces: count("SELECT COUNT(DISTINCT namespace) FROM trees")?,
            trees: count("SELECT COUNT(*) FROM trees")?,
            entities: count("SELECT COUNT(*) FROM entities")?,
            leaves_by_status: by_status,
            summaries_current: count(&status_sql::count_summaries_in(SummaryStatus::Current))?,
            summaries_stale: count(&status_sql::count_summaries_in(SummaryStatus::Stale))?,
            summaries_purged: count(&status_sql::count_summaries_in(SummaryStatus::Purged))?,
            summaries_retired: count(&status_sql::count_summaries_in(SummaryStatus::Retired))?,
            jobs_pending: count("SELECT COUNT(*) FROM jobs WHERE dead = 0")?,
            jobs_dead: count("SELECT COUNT(*) FROM jobs WHERE dead = 1")?,
            jobs_next_due: conn
                .query_row("SELECT MIN(run_after) FROM jobs WHERE dead = 0 AND lease_until IS NULL", [], |r| {
                    r.get::<_, Option<i64>>(0)
                })
                .map_err(sql_error)?
                .map(from_ts),
            audit_events: count("SELECT COUNT(*) FROM audit")?,
        })
    }
}
