//! [`PgIndex`]: the search index projection on Postgres, searched in memory.
//!
//! `index_docs` holds each document's filter columns, its hashed terms with their counts
//! ([`DocTerms`], no word) and its vector (a pgvector `vector`); that is the authoritative copy.
//! Searches run on a [`Mirror`] of it in this process's memory — the `arbor-search` engine the
//! SQLite backend runs, so both rank alike by construction: BM25 over posting lists that skip
//! what cannot reach the top k, int8 vectors rescored exactly from the stored `f32` values, the
//! visibility filter evaluated inside both searches.
//!
//! The mirror follows the table through a change sequence. Every write stamps what it
//! changes with `nextval('index_seq')` (removals go to `index_removed`) while holding the index
//! writers' advisory lock until it commits, so sequence numbers become visible in order: a
//! mirror that has applied everything up to `n` misses nothing by next reading what is above
//! `n`. Before each search one round trip asks whether anything is; only then are the changes
//! read, in one snapshot. A search that is part of a read ([`arbor_ports::one_read`], as every
//! question is) skips the round trip when the mirror was brought up to date after the read
//! began: the answer would be the same. `clear` bumps `index_generation`, which makes every
//! mirror load afresh.
//!
//! Why not search in SQL: BM25 computed in a query scores every document that holds one of the
//! question's terms, and HNSW indexes made every write slower; both grew with the store
//! (at 100k leaves an exact question took 50 times SQLite's time, docs/performance.md).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::text::{query_terms, stem, tokenize};
use arbor_domain::visibility::NodeFacts;
use arbor_ports::rows::{FactsRow, corrupt, node_from_str, node_to_str, term_id};
use arbor_ports::{Error, Hit, IndexCapabilities, IndexDoc, Result, SearchIndex, TextQuery, VectorQuery};
use arbor_search::{DocTerms, Mirror, embedder_key, rescored_hits};
use async_trait::async_trait;
use futures::TryStreamExt;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};

use crate::codec::{StoredVector, sensitivity};
use crate::config::PgDatabase;
use crate::error::{BACKEND, sql_error};
use crate::schema::LOCK_CLASS;

/// The advisory lock object id taken by every index writer until it commits.
const INDEX_LOCK: i32 = 2;
/// Documents per multi-row statement (Postgres allows 65,535 bound values; a document binds 18).
const UPSERT_CHUNK: usize = 1_000;

/// The search index on a [`PgDatabase`].
#[derive(Debug)]
pub struct PgIndex {
    db: Arc<PgDatabase>,
}

impl PgIndex {
    pub fn new(db: Arc<PgDatabase>) -> PgIndex {
        PgIndex { db }
    }

    /// Writes `docs`, replacing documents the index holds unless `keep_existing`, which
    /// leaves them as they are. Writers take the index lock first, so which ids exist cannot
    /// change between looking and writing.
    async fn write_docs(&self, docs: Vec<IndexDoc>, keep_existing: bool) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        for doc in &docs {
            if let Some(embedding) = &doc.embedding
                && embedding.values.len() != embedding.embedder.dimensions as usize
            {
                return Err(Error::invalid(
                    "embedding",
                    format!("{} has {} values, not {}", doc.id, embedding.values.len(), embedding.embedder.dimensions),
                ));
            }
        }
        let mut tx = self.db.pool().begin().await.map_err(sql_error)?;
        lock_index(&mut tx).await?;
        // The last copy of an id in the batch wins, as if upserted one after another.
        let mut latest: BTreeMap<String, &IndexDoc> = BTreeMap::new();
        for doc in &docs {
            latest.insert(node_to_str(&doc.id), doc);
        }
        if keep_existing {
            let held: Vec<String> = sqlx::query_scalar("SELECT node_id FROM index_docs WHERE node_id = ANY($1)")
                .bind(latest.keys().cloned().collect::<Vec<_>>())
                .fetch_all(&mut *tx)
                .await
                .map_err(sql_error)?;
            for node in held {
                latest.remove(&node);
            }
            if latest.is_empty() {
                return tx.commit().await.map_err(sql_error);
            }
        }
        let batch: Vec<(&String, &&IndexDoc)> = latest.iter().collect();
        for chunk in batch.chunks(UPSERT_CHUNK) {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "INSERT INTO index_docs (node_id, {FACT_COLUMNS}, doc_terms, embedder, embedding, seq) "
            ));
            let mut failed = None;
            sql.push_values(chunk.iter(), |mut values, (node, doc)| {
                values.push_bind((*node).clone());
                if let Err(error) = push_facts(&mut values, &doc.facts) {
                    failed = Some(error);
                }
                values
                    .push_bind(DocTerms::of_text(&doc.text).to_bytes())
                    .push_bind(doc.embedding.as_ref().map(embedder_key))
                    .push_bind(doc.embedding.as_ref().map(|e| e.values.clone()))
                    .push_unseparated("::real[]::vector")
                    .push("nextval('index_seq')");
            });
            if let Some(error) = failed {
                return Err(error);
            }
            sql.push(
                " ON CONFLICT (node_id) DO UPDATE SET (node_kind, namespace, category, tree_id, kind, state, valid_from,
                   valid_to, known_from, known_until, expires_at, sensitivity, time_start, time_end, doc_terms,
                   embedder, embedding, seq, terms, term_count) = (EXCLUDED.node_kind, EXCLUDED.namespace,
                   EXCLUDED.category, EXCLUDED.tree_id, EXCLUDED.kind, EXCLUDED.state, EXCLUDED.valid_from,
                   EXCLUDED.valid_to, EXCLUDED.known_from, EXCLUDED.known_until, EXCLUDED.expires_at,
                   EXCLUDED.sensitivity, EXCLUDED.time_start, EXCLUDED.time_end, EXCLUDED.doc_terms,
                   EXCLUDED.embedder, EXCLUDED.embedding, EXCLUDED.seq, NULL, NULL)",
            );
            // The statement's text depends on the chunk's length: not worth a prepared copy on
            // every pooled connection.
            sql.build().persistent(false).execute(&mut *tx).await.map_err(sql_error)?;
        }
        tx.commit().await.map_err(sql_error)
    }

    /// Brings `mirror` up to date with the table: one round trip when nothing changed; else
    /// the changes since its last look (everything, the first time or after a clear), read in
    /// one snapshot and applied in sequence order.
    async fn sync(&self, mirror: &mut Mirror) -> Result<()> {
        if let (Some(read_began), Some(synced_at)) = (arbor_ports::read_began(), mirror.synced_at)
            && synced_at >= read_began
        {
            // The mirror was brought up to date after the read began (by this read's first
            // search or any other): it holds every commit this search must see.
            return Ok(());
        }
        let asked_at = std::time::Instant::now();
        let mut conn = self.db.pool().acquire().await.map_err(sql_error)?;
        let (generation, newest): (i64, Option<i64>) = sqlx::query_as(
            "SELECT value, GREATEST((SELECT max(seq) FROM index_docs), (SELECT max(seq) FROM index_removed))
             FROM index_generation",
        )
        .fetch_one(&mut *conn)
        .await
        .map_err(sql_error)?;
        if mirror.loaded && generation == mirror.generation && newest.is_none_or(|n| n <= mirror.last_seq) {
            mirror.synced_at = Some(asked_at);
            return Ok(());
        }
        let mut tx = sqlx::Connection::begin(&mut *conn).await.map_err(sql_error)?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(sql_error)?;
        // `clear` truncates, and TRUNCATE is not MVCC-safe: a snapshot taken before it commits
        // would read the tables as empty afterwards while the generation still looks old. The
        // locks are taken before the snapshot (LOCK takes none), so a clear either finished
        // before it or waits for this read.
        sqlx::query("LOCK TABLE index_generation, index_docs, index_removed IN ACCESS SHARE MODE")
            .execute(&mut *tx)
            .await
            .map_err(sql_error)?;
        let generation: i64 =
            sqlx::query_scalar("SELECT value FROM index_generation").fetch_one(&mut *tx).await.map_err(sql_error)?;
        let full_load = !mirror.loaded || generation != mirror.generation;
        if full_load {
            mirror.reset();
        }
        // Rows of the table at seq 0 (written before the change sequence) are read on a first load.
        let since = if full_load { i64::MIN } else { mirror.last_seq };
        let mut last_seq = if full_load { 0 } else { mirror.last_seq };
        let mut events: Vec<(i64, Change)> = Vec::new();
        {
            let sql = format!(
                "SELECT seq, doc, node_id, {FACT_COLUMNS}, doc_terms,
                        CASE WHEN doc_terms IS NULL AND terms IS NOT NULL THEN ARRAY(
                            SELECT lexeme || ':' || GREATEST(cardinality(positions), 1) FROM unnest(terms)) END,
                        embedder, embedding
                 FROM index_docs WHERE seq > $1"
            );
            let mut rows = sqlx::query(&sql).bind(since).fetch(&mut *tx);
            while let Some(row) = rows.try_next().await.map_err(sql_error)? {
                let (seq, change) = change_from_row(&row)?;
                if full_load {
                    // A load holds one row per document and nothing removed: applied as it
                    // streams, so it never holds the table's `f32` vectors all at once.
                    last_seq = last_seq.max(seq);
                    change.apply(mirror);
                } else {
                    events.push((seq, change));
                }
            }
        }
        if !full_load {
            let removed: Vec<(i64, i64)> = sqlx::query_as("SELECT seq, doc FROM index_removed WHERE seq > $1")
                .bind(since)
                .fetch_all(&mut *tx)
                .await
                .map_err(sql_error)?;
            events.extend(removed.into_iter().map(|(seq, doc)| (seq, Change::Remove { doc })));
        }
        tx.commit().await.map_err(sql_error)?;
        // Replayed in sequence order: a document removed and its node indexed again ends up
        // as the later write.
        events.sort_by_key(|(seq, _)| *seq);
        for (seq, change) in events {
            last_seq = last_seq.max(seq);
            change.apply(mirror);
        }
        mirror.last_seq = last_seq;
        mirror.generation = generation;
        mirror.loaded = true;
        mirror.synced_at = Some(asked_at);
        Ok(())
    }

    /// The stored `f32` vectors of the documents `docs` by `embedder` (a document embedded
    /// again by another one meanwhile is left out), by document number.
    async fn exact_vectors(&self, docs: Vec<i64>, embedder: &str) -> Result<HashMap<i64, Vec<f32>>> {
        if docs.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<(i64, StoredVector)> = sqlx::query_as(
            "SELECT doc, embedding FROM index_docs
             WHERE doc = ANY($1) AND embedder = $2 AND embedding IS NOT NULL",
        )
        .bind(docs)
        .bind(embedder)
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        Ok(rows.into_iter().map(|(doc, vector)| (doc, vector.0)).collect())
    }
}

/// One change the mirror replays.
enum Change {
    Put { doc: i64, node: NodeId, facts: NodeFacts, terms: DocTerms, vector: Option<(String, Vec<f32>)> },
    Remove { doc: i64 },
}

impl Change {
    fn apply(self, mirror: &mut Mirror) {
        match self {
            Change::Put { doc, node, facts, terms, vector } => {
                mirror.put(doc, node, &facts, &terms, vector.as_ref().map(|(e, v)| (e.as_str(), v.as_slice())));
            }
            Change::Remove { doc } => mirror.remove(doc),
        }
    }
}

/// A document row read by [`PgIndex::sync`], as the change it makes. A row that cannot be
/// read (its facts or terms damaged) is left out of searches rather than stopping them all,
/// in every process, until someone rewrites it: it becomes the removal of its document, the
/// way a search already drops a hit the store no longer admits.
fn change_from_row(row: &sqlx::postgres::PgRow) -> Result<(i64, Change)> {
    let seq: i64 = row.try_get(0).map_err(sql_error)?;
    let doc: i64 = row.try_get(1).map_err(sql_error)?;
    match put_from_row(row, doc) {
        Ok(change) => Ok((seq, change)),
        Err(error) => {
            let node: Option<String> = row.try_get(2).ok();
            tracing::warn!(%error, node = node.as_deref().unwrap_or("?"), "an index row cannot be read; it is left out of searches");
            Ok((seq, Change::Remove { doc }))
        }
    }
}

fn put_from_row(row: &sqlx::postgres::PgRow, doc: i64) -> Result<Change> {
    let get = sql_error;
    let node_raw: String = row.try_get(2).map_err(get)?;
    let facts = FactsRow {
        node_kind: row.try_get(3).map_err(get)?,
        namespace: row.try_get(4).map_err(get)?,
        category: row.try_get(5).map_err(get)?,
        tree_id: row.try_get(6).map_err(get)?,
        kind: row.try_get(7).map_err(get)?,
        state: row.try_get(8).map_err(get)?,
        valid_from: row.try_get(9).map_err(get)?,
        valid_to: row.try_get(10).map_err(get)?,
        known_from: row.try_get(11).map_err(get)?,
        known_until: row.try_get(12).map_err(get)?,
        expires_at: row.try_get(13).map_err(get)?,
        sensitivity: i64::from(row.try_get::<i16, _>(14).map_err(get)?),
        time_start: row.try_get(15).map_err(get)?,
        time_end: row.try_get(16).map_err(get)?,
    }
    .into_facts(&node_raw)?;
    let stored: Option<Vec<u8>> = row.try_get(17).map_err(get)?;
    let legacy: Option<Vec<String>> = row.try_get(18).map_err(get)?;
    let terms = match (stored, legacy) {
        (Some(bytes), _) => DocTerms::from_bytes(&bytes)
            .ok_or_else(|| corrupt("index document", &node_raw, "its stored terms are not a term list"))?,
        (None, Some(lexemes)) => legacy_terms(&node_raw, &lexemes)?,
        (None, None) => DocTerms::default(),
    };
    let embedder: Option<String> = row.try_get(19).map_err(get)?;
    let vector: Option<Vec<f32>> = row.try_get::<Option<StoredVector>, _>(20).map_err(get)?.map(|v| v.0);
    Ok(Change::Put { doc, node: node_from_str(&node_raw)?, facts, terms, vector: embedder.zip(vector) })
}

/// The terms of a row written before terms were stored as [`DocTerms`]: its tsvector's
/// lexemes (`t` and a term hash in base 36, see `term_lexeme`) with their occurrence counts,
/// as `lexeme:count`. (tsvector kept at most 256 positions per lexeme, so counts saturate
/// there, where BM25 has long flattened out.)
fn legacy_terms(node: &str, lexemes: &[String]) -> Result<DocTerms> {
    let parse = |entry: &String| -> Option<(u64, u32)> {
        let (lexeme, count) = entry.rsplit_once(':')?;
        let digits = lexeme.strip_prefix('t')?;
        let mut term: u64 = 0;
        for c in digits.chars() {
            term = term.checked_mul(36)?.checked_add(u64::from(c.to_digit(36)?))?;
        }
        Some((term, count.parse().ok()?))
    };
    let counted: Option<Vec<(u64, u32)>> = lexemes.iter().map(parse).collect();
    counted
        .map(DocTerms::from_counts)
        .ok_or_else(|| corrupt("index document", node, "its tsvector holds a lexeme Arbor did not write"))
}

/// Takes the lock every index writer holds until its transaction ends.
async fn lock_index(conn: &mut PgConnection) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(LOCK_CLASS)
        .bind(INDEX_LOCK)
        .execute(conn)
        .await
        .map_err(sql_error)?;
    Ok(())
}

fn push_facts(
    values: &mut sqlx::query_builder::Separated<'_, '_, Postgres, &'static str>,
    facts: &NodeFacts,
) -> Result<()> {
    let row = FactsRow::from_facts(facts)?;
    values
        .push_bind(row.node_kind)
        .push_bind(row.namespace)
        .push_bind(row.category)
        .push_bind(row.tree_id)
        .push_bind(row.kind)
        .push_bind(row.state)
        .push_bind(row.valid_from)
        .push_bind(row.valid_to)
        .push_bind(row.known_from)
        .push_bind(row.known_until)
        .push_bind(row.expires_at)
        .push_bind(sensitivity(row.sensitivity))
        .push_bind(row.time_start)
        .push_bind(row.time_end);
    Ok(())
}

const FACT_COLUMNS: &str = "node_kind, namespace, category, tree_id, kind, state, valid_from, valid_to, known_from, \
     known_until, expires_at, sensitivity, time_start, time_end";

#[async_trait]
impl SearchIndex for PgIndex {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> IndexCapabilities {
        IndexCapabilities { full_text: true, vectors: true }
    }

    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.write_docs(docs, false).await
    }

    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.write_docs(docs, true).await
    }

    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.pool().begin().await.map_err(sql_error)?;
        lock_index(&mut tx).await?;
        for (node, facts) in &updates {
            let mut sql = QueryBuilder::<Postgres>::new(format!("UPDATE index_docs SET ({FACT_COLUMNS}, seq) = ROW("));
            push_facts(&mut sql.separated(", "), facts)?;
            sql.push(", nextval('index_seq')) WHERE node_id = ").push_bind(node_to_str(node));
            sql.build().execute(&mut *tx).await.map_err(sql_error)?;
        }
        tx.commit().await.map_err(sql_error)
    }

    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let nodes: Vec<String> = ids.iter().map(node_to_str).collect();
        let mut tx = self.db.pool().begin().await.map_err(sql_error)?;
        lock_index(&mut tx).await?;
        sqlx::query(
            "WITH gone AS (DELETE FROM index_docs WHERE node_id = ANY($1) RETURNING doc)
             INSERT INTO index_removed (seq, doc) SELECT nextval('index_seq'), doc FROM gone",
        )
        .bind(&nodes)
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
        tx.commit().await.map_err(sql_error)
    }

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        if query_terms(&query.text).is_empty() || query.limit == 0 || query.filter.layers.is_empty() {
            return Ok(Vec::new());
        }
        let mut mirror = self.db.mirror.lock().await;
        self.sync(&mut mirror).await?;
        Ok(mirror.text_hits(query))
    }

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        let dimensions = query.embedding.embedder.dimensions;
        if query.limit == 0 || query.filter.layers.is_empty() {
            return Ok(Vec::new());
        }
        if query.embedding.values.len() != dimensions as usize {
            return Err(Error::invalid(
                "query embedding",
                format!("{} values, not {dimensions}", query.embedding.values.len()),
            ));
        }
        let candidates = {
            let mut mirror = self.db.mirror.lock().await;
            self.sync(&mut mirror).await?;
            mirror.vector_candidates(query)
        };
        let embedder = embedder_key(&query.embedding);
        let exact = self.exact_vectors(candidates.iter().map(|c| c.rowid).collect(), &embedder).await?;
        rescored_hits(query, candidates, &exact)
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        // The index holds no words, only their hashes: a needle is "in" the index while a
        // document holds every one of its hashed tokens, stemmed or (written by Arbor 0.1's
        // analyzer) as written.
        let tokens = tokenize(needle);
        if tokens.is_empty() {
            return Ok(false);
        }
        let wanted: Vec<[u64; 2]> = tokens.iter().map(|t| [term_id(&stem(t)), term_id(t)]).collect();
        let mut rows = sqlx::query(
            "SELECT node_id, doc_terms, CASE WHEN doc_terms IS NULL AND terms IS NOT NULL THEN ARRAY(
                 SELECT lexeme || ':1' FROM unnest(terms)) END FROM index_docs",
        )
        .fetch(self.db.pool());
        while let Some(row) = rows.try_next().await.map_err(sql_error)? {
            let node: String = row.get(0);
            let terms = match (row.get::<Option<Vec<u8>>, _>(1), row.get::<Option<Vec<String>>, _>(2)) {
                // Unreadable terms cannot be shown to hold nothing of the needle: an error,
                // never a "no" the forget check would take as proof.
                (Some(bytes), _) => DocTerms::from_bytes(&bytes)
                    .ok_or_else(|| corrupt("index document", &node, "its stored terms are not a term list"))?,
                (None, Some(lexemes)) => legacy_terms(&node, &lexemes)?,
                (None, None) => continue,
            };
            if wanted.iter().all(|either| either.iter().any(|t| terms.holds(*t))) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn count(&self) -> Result<usize> {
        let n: i64 =
            sqlx::query("SELECT COUNT(*) FROM index_docs").fetch_one(self.db.pool()).await.map_err(sql_error)?.get(0);
        usize::try_from(n).map_err(|e| Error::backend(BACKEND, e))
    }

    async fn clear(&self) -> Result<()> {
        let mut tx = self.db.pool().begin().await.map_err(sql_error)?;
        lock_index(&mut tx).await?;
        // TRUNCATE gives the tables new files: the old ones, and every word-free hash in them,
        // are deleted at commit.
        for statement in ["TRUNCATE index_docs, index_removed", "UPDATE index_generation SET value = value + 1"] {
            sqlx::query(statement).execute(&mut *tx).await.map_err(sql_error)?;
        }
        tx.commit().await.map_err(sql_error)?;
        self.db.mirror.lock().await.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
    use arbor_domain::text::index_tokens;
    use arbor_domain::visibility::VisibilityFilter;
    use arbor_ports::TermSelection;
    use arbor_ports::conformance::fixtures::{conversation, leaf, scope, tree_id, ts};
    use arbor_ports::rows::term_lexeme;

    use super::*;
    use crate::config::PgConfig;
    use crate::testing::{fresh_database, test_database_url};

    fn doc(n: usize, text: &str) -> IndexDoc {
        let record = leaf(&conversation("c1"), &tree_id("topic"), &format!("leaf-{n}"), text, 1);
        IndexDoc {
            id: NodeId::Leaf(record.id.clone()),
            facts: NodeFacts::of_leaf(&record),
            text: text.to_owned(),
            embedding: None,
        }
    }

    fn query(text: &str) -> TextQuery {
        let context = TrustedContext::Conversation { conversation: scope("c1"), project: None, agent: None };
        let chain = ReadChain::resolve(&context, &ReadChainPolicy::default()).unwrap();
        TextQuery {
            filter: VisibilityFilter::for_chain(&chain, ts(100)),
            text: text.to_owned(),
            limit: 10,
            terms: TermSelection::All,
        }
    }

    fn ids(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| h.id.to_string()).collect()
    }

    /// Another handle on the same schema: another process's view.
    async fn another_process(db: &PgDatabase) -> PgIndex {
        let config = PgConfig::new(test_database_url()).with_schema(db.schema());
        PgIndex::new(Arc::new(PgDatabase::connect(&config).await.unwrap()))
    }

    /// What another process writes, removes or clears reaches a loaded mirror through the
    /// change sequence, with the statistics BM25 uses: its answers are those of a process that
    /// loads the table afresh.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn another_processs_writes_reach_the_loaded_mirror() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let here = PgIndex::new(db.clone());
            let there = another_process(&db).await;
            here.upsert(vec![doc(1, "amber basil"), doc(2, "basil cedar")]).await.unwrap();
            assert_eq!(ids(&here.search_text(&query("basil")).await.unwrap()), ["leaf-1", "leaf-2"]);

            there.upsert(vec![doc(3, "basil basil delta")]).await.unwrap();
            let hits = here.search_text(&query("basil")).await.unwrap();
            assert_eq!(hits, another_process(&db).await.search_text(&query("basil")).await.unwrap());
            assert_eq!(ids(&hits)[0], "leaf-3");

            let mut superseded = doc(2, "basil cedar").facts;
            superseded.state = arbor_domain::visibility::NodeState::Superseded;
            there.set_facts(vec![(doc(2, "").id, superseded)]).await.unwrap();
            there.remove(&[doc(3, "").id]).await.unwrap();
            assert_eq!(ids(&here.search_text(&query("basil")).await.unwrap()), ["leaf-1"]);

            there.clear().await.unwrap();
            assert!(here.search_text(&query("basil")).await.unwrap().is_empty());
            there.upsert(vec![doc(4, "basil")]).await.unwrap();
            assert_eq!(ids(&here.search_text(&query("basil")).await.unwrap()), ["leaf-4"]);
        });
    }

    /// One read ([`arbor_ports::one_read`]) asks the server what changed once: here, with no
    /// other search in the process, its later searches answer from the state its first search
    /// brought in, so a commit made meanwhile is not in them, while a search outside the read,
    /// and every later read, sees it.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_read_asks_what_changed_once() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let here = PgIndex::new(db.clone());
            let there = another_process(&db).await;
            there.upsert(vec![doc(1, "amber basil")]).await.unwrap();
            let (first, later) = arbor_ports::one_read(async {
                let first = here.search_text(&query("basil")).await.unwrap();
                there.upsert(vec![doc(2, "basil cedar")]).await.unwrap();
                (first, here.search_text(&query("basil")).await.unwrap())
            })
            .await;
            assert_eq!(ids(&first), ["leaf-1"]);
            assert_eq!(ids(&later), ["leaf-1"], "the read's second search asked the server again");
            assert_eq!(ids(&here.search_text(&query("basil")).await.unwrap()), ["leaf-1", "leaf-2"]);

            there.upsert(vec![doc(3, "basil basil")]).await.unwrap();
            let next = arbor_ports::one_read(async { here.search_text(&query("basil")).await.unwrap() }).await;
            assert_eq!(ids(&next), ["leaf-3", "leaf-1", "leaf-2"], "a read begun after a commit sees it");
        });
    }

    /// Writers racing each other while a reader searches: the reader's mirror, caught up
    /// through the change sequence, ends equal to a fresh load (no change is skipped because
    /// another committed first).
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn racing_writers_leave_no_change_unseen() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let reader = PgIndex::new(db.clone());
            let writers = [another_process(&db).await, another_process(&db).await];
            let write = |w: usize| {
                let writer = &writers[w];
                async move {
                    for round in 0..20 {
                        let n = w * 1000 + round;
                        writer.upsert(vec![doc(n, &format!("shared word{round} writer{w}"))]).await.unwrap();
                        if round % 3 == 2 {
                            writer.remove(&[doc(n - 1, "").id]).await.unwrap();
                        }
                    }
                }
            };
            let read = async {
                for _ in 0..40 {
                    reader.search_text(&query("shared")).await.unwrap();
                }
            };
            tokio::join!(write(0), write(1), read);
            let mut wide = query("shared");
            wide.limit = 100;
            let seen = reader.search_text(&wide).await.unwrap();
            let fresh = another_process(&db).await.search_text(&wide).await.unwrap();
            assert_eq!(seen, fresh);
            assert_eq!(seen.len(), 2 * (20 - 6));
        });
    }

    /// A writer that stamps a sequence number and then stalls holding the writers' lock, and
    /// finally rolls back: the reader searches meanwhile without waiting for it, the writer
    /// queued behind it commits a higher number, and the gap the rollback leaves costs nothing.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_writer_that_stalls_and_rolls_back_leaves_only_a_gap() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let reader = PgIndex::new(db.clone());
            let queued = another_process(&db).await;
            reader.upsert(vec![doc(1, "basil amber")]).await.unwrap();
            assert_eq!(ids(&reader.search_text(&query("basil")).await.unwrap()), ["leaf-1"]);

            let mut stalled = db.pool().begin().await.unwrap();
            lock_index(&mut stalled).await.unwrap();
            sqlx::query("UPDATE index_docs SET seq = nextval('index_seq')").execute(&mut *stalled).await.unwrap();
            let write = queued.upsert(vec![doc(2, "basil cedar")]);
            let read_then_roll_back = async {
                assert_eq!(ids(&reader.search_text(&query("basil")).await.unwrap()), ["leaf-1"]);
                stalled.rollback().await.unwrap();
            };
            let (written, ()) = tokio::join!(write, read_then_roll_back);
            written.unwrap();
            assert_eq!(ids(&reader.search_text(&query("basil")).await.unwrap()), ["leaf-1", "leaf-2"]);
        });
    }

    /// One row whose stored terms are damaged is left out of searches, which go on answering
    /// from every other row in every process, and `contains_text` says it cannot tell rather
    /// than "not there".
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_damaged_row_is_left_out_and_stops_nothing() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let index = PgIndex::new(db.clone());
            index.upsert(vec![doc(1, "basil amber"), doc(2, "basil cedar")]).await.unwrap();
            assert_eq!(index.search_text(&query("basil")).await.unwrap().len(), 2);
            sqlx::query(
                "UPDATE index_docs SET doc_terms = '\\x0102'::bytea, seq = nextval('index_seq')
                 WHERE node_id = 'leaf:leaf-2'",
            )
            .execute(db.pool())
            .await
            .unwrap();
            assert_eq!(ids(&index.search_text(&query("basil")).await.unwrap()), ["leaf-1"]);
            assert_eq!(ids(&another_process(&db).await.search_text(&query("basil")).await.unwrap()), ["leaf-1"]);
            assert!(index.contains_text("cedar").await.is_err());
        });
    }

    /// A stored vector reads back exactly, in the binary form a prepared statement gets and in
    /// the text form of a simple query.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_stored_vector_reads_back_in_either_form() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let written = vec![0.25_f32, -1.5, 3.0e-7, 0.0];
            let binary: StoredVector =
                sqlx::query_scalar("SELECT $1::real[]::vector").bind(&written).fetch_one(db.pool()).await.unwrap();
            assert_eq!(binary.0, written);
            let row = sqlx::raw_sql("SELECT '[0.25,-1.5,3e-07,0]'::vector").fetch_one(db.pool()).await.unwrap();
            let text: StoredVector = row.try_get(0).unwrap();
            assert_eq!(text.0, written);
        });
    }

    /// A row written before terms were stored as a term list (its tsvector only) is searched,
    /// scored and found by `contains_text` as if written today.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_row_from_before_the_term_list_is_read_from_its_tsvector() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let index = PgIndex::new(db.clone());
            let text = "heron heron iris";
            index.upsert(vec![doc(1, text), doc(2, text), doc(3, "iris juniper")]).await.unwrap();
            let expected = index.search_text(&query("heron iris")).await.unwrap();
            // Leaf 1 as the previous schema wrote it: lexemes with a position per occurrence.
            let mut counts: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for token in index_tokens(text) {
                let positions = counts.entry(term_lexeme(&token)).or_default();
                positions.push((positions.len() + 1).to_string());
            }
            let tsvector: Vec<String> = counts.iter().map(|(l, p)| format!("'{l}':{}", p.join(","))).collect();
            sqlx::query("UPDATE index_docs SET doc_terms = NULL, terms = $1::tsvector WHERE node_id = 'leaf:leaf-1'")
                .bind(tsvector.join(" "))
                .execute(db.pool())
                .await
                .unwrap();
            let fresh = another_process(&db).await;
            assert_eq!(fresh.search_text(&query("heron iris")).await.unwrap(), expected);
            index.remove(&[doc(2, "").id, doc(3, "").id]).await.unwrap();
            assert!(fresh.contains_text("heron").await.unwrap());
            assert!(!fresh.contains_text("juniper").await.unwrap());
        });
    }
}
