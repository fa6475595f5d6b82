//! [`SqliteIndex`]: the search index projection on SQLite.
//!
//! - Full text: BM25 over *hashed* terms. Each token of
//!   [`index_tokens`](arbor_domain::text::index_tokens) (stemmed) is stored as a hash with its
//!   count (`index_payload.terms`), and searched in posting lists in memory
//!   ([`arbor_search`]'s postings) that skip what cannot reach the top k; scores are FTS5's `bm25()`,
//!   which this index used before.
//! - Vectors: `f32` blobs in `index_payload`, mirrored in memory as int8 ([`arbor_search::Mirror`]);
//!   the scan filters inside the loop and the best candidates are rescored exactly.
//! - Both searches apply the visibility filter inside the search, against the in-memory
//!   mirror of the filter columns ([`arbor_search::Mirror`]).

use std::collections::HashMap;
use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::text::query_terms;
use arbor_domain::visibility::NodeFacts;
use arbor_ports::{Error, Hit, IndexCapabilities, IndexDoc, Result, SearchIndex, TextQuery, VectorQuery};
use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, params, params_from_iter};

use arbor_ports::rows::FactsRow;
use arbor_search::{Candidate, DocTerms, embedder_key, rescored_hits};

use crate::codec::{node_from_str, node_to_str};
use crate::config::{Gate, SqliteDatabase};
use crate::error::{BACKEND, sql_error};
use crate::filter::placeholders;
use crate::transaction::write_transaction;

/// What a write does to a document the index already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    Replace,
    Keep,
}

/// The search index on a [`SqliteDatabase`].
#[derive(Debug)]
pub struct SqliteIndex {
    db: Arc<SqliteDatabase>,
}

fn vector_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn vector_from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn next_seq(tx: &Transaction<'_>) -> Result<i64> {
    reserve_seqs(tx, 1).map(|before| before + 1)
}

/// Reserves `n` change sequence numbers; returns the one before the first.
fn reserve_seqs(tx: &Transaction<'_>, n: usize) -> Result<i64> {
    let n = i64::try_from(n).map_err(|_| Error::invalid("index batch", "too large"))?;
    tx.prepare_cached("UPDATE counters SET value = value + ? WHERE name = 'index_seq' RETURNING value - ?")
        .and_then(|mut stmt| stmt.query_row([n, n], |r| r.get(0)))
        .map_err(sql_error)
}

fn counter(conn: &Connection, name: &str) -> Result<i64> {
    conn.query_row("SELECT value FROM counters WHERE name = ?", [name], |r| r.get(0)).map_err(sql_error)
}

fn facts_values(facts: &NodeFacts) -> Result<Vec<Value>> {
    let row = FactsRow::from_facts(facts)?;
    let opt_int = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
    Ok(vec![
        Value::Text(row.node_kind),
        Value::Text(row.namespace),
        Value::Text(row.category),
        Value::Text(row.tree_id),
        row.kind.map(Value::Text).unwrap_or(Value::Null),
        Value::Text(row.state),
        opt_int(row.valid_from),
        opt_int(row.valid_to),
        opt_int(row.known_from),
        opt_int(row.known_until),
        opt_int(row.expires_at),
        Value::Integer(row.sensitivity),
        Value::Integer(row.time_start),
        Value::Integer(row.time_end),
    ])
}

const FACT_COLUMNS: [&str; 14] = FactsRow::COLUMNS;

/// Reads filter columns back, starting at `first`.
fn facts_from_row(row: &rusqlite::Row<'_>, first: usize, id: &str) -> Result<NodeFacts> {
    let text = |i: usize| -> Result<String> { row.get(first + i).map_err(sql_error) };
    let int = |i: usize| -> Result<i64> { row.get(first + i).map_err(sql_error) };
    let opt_int = |i: usize| -> Result<Option<i64>> { row.get(first + i).map_err(sql_error) };
    FactsRow {
        node_kind: text(0)?,
        namespace: text(1)?,
        category: text(2)?,
        tree_id: text(3)?,
        kind: row.get(first + 4).map_err(sql_error)?,
        state: text(5)?,
        valid_from: opt_int(6)?,
        valid_to: opt_int(7)?,
        known_from: opt_int(8)?,
        known_until: opt_int(9)?,
        expires_at: opt_int(10)?,
        sensitivity: int(11)?,
        time_start: int(12)?,
        time_end: int(13)?,
    }
    .into_facts(id)
}

/// The stored `f32` vectors of `candidates`, by row id, for exact rescoring.
fn exact_vectors(conn: &Connection, candidates: &[Candidate]) -> Result<HashMap<i64, Vec<f32>>> {
    let mut exact = HashMap::with_capacity(candidates.len());
    if candidates.is_empty() {
        return Ok(exact);
    }
    // Placeholders come in sizes of powers of two so the statement cache is reused.
    let slots = candidates.len().next_power_of_two();
    let sql = format!("SELECT doc, vector FROM index_payload WHERE doc IN ({})", placeholders(slots));
    let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
    let ids = candidates.iter().map(|c| c.rowid).chain(std::iter::repeat(-1)).take(slots);
    let mut rows = stmt.query(params_from_iter(ids)).map_err(sql_error)?;
    while let Some(row) = rows.next().map_err(sql_error)? {
        let rowid: i64 = row.get(0).map_err(sql_error)?;
        let bytes: Vec<u8> = row.get(1).map_err(sql_error)?;
        exact.insert(rowid, vector_from_bytes(&bytes));
    }
    Ok(exact)
}

impl SqliteIndex {
    pub fn new(db: Arc<SqliteDatabase>) -> SqliteIndex {
        SqliteIndex { db }
    }

    /// About how much heap the in-memory search engine holds now, by part.
    pub fn footprint(&self) -> arbor_search::Footprint {
        self.db.gate().mirror.footprint()
    }

    /// Brings the mirror up to date: a full load the first time or after a `clear`,
    /// otherwise only what other connections changed since the last look.
    fn sync_mirror(&self, conn: &Connection, gate: &mut Gate) -> Result<()> {
        let data_version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(sql_error)?;
        let Gate { mirror, data_version: seen_version } = gate;
        if mirror.loaded && data_version == *seen_version {
            return Ok(());
        }
        let generation = counter(conn, "index_generation")?;
        if !mirror.loaded || generation != mirror.generation {
            mirror.reset();
        }
        let since = mirror.last_seq;
        // Changes since the last look, replayed in sequence order: a row removed and its rowid
        // reused by a later insert must end up as the later insert.
        enum Event {
            Put { rowid: i64, node: NodeId, facts: NodeFacts, terms: DocTerms, vector: Option<(String, Vec<f32>)> },
            Remove { rowid: i64 },
        }
        let mut events: Vec<(i64, Event)> = Vec::new();
        let columns: Vec<String> = FACT_COLUMNS.iter().map(|c| format!("d.{c}")).collect();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT d.seq, d.rowid, d.node_id, p.embedder, p.vector, p.terms,
                        CASE WHEN p.terms IS NULL THEN p.text END, {} FROM index_docs d
                 LEFT JOIN index_payload p ON p.doc = d.rowid WHERE d.seq > ?",
                columns.join(", ")
            ))
            .map_err(sql_error)?;
        let mut rows = stmt.query([since]).map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let seq: i64 = row.get(0).map_err(sql_error)?;
            let rowid: i64 = row.get(1).map_err(sql_error)?;
            let node_raw: String = row.get(2).map_err(sql_error)?;
            let embedder: Option<String> = row.get(3).map_err(sql_error)?;
            let vector: Option<Vec<u8>> = row.get(4).map_err(sql_error)?;
            let stored_terms: Option<Vec<u8>> = row.get(5).map_err(sql_error)?;
            let text: Option<String> = row.get(6).map_err(sql_error)?;
            let facts = facts_from_row(row, 7, &node_raw)?;
            let vector = embedder.zip(vector).map(|(e, bytes)| (e, vector_from_bytes(&bytes)));
            // Rows written before terms were stored are read from their text (only theirs is
            // selected); a damaged term list is read from the text too, and said, rather than
            // failing every search.
            let terms = match stored_terms.as_deref().map(DocTerms::from_bytes) {
                Some(Some(terms)) => terms,
                Some(None) => {
                    tracing::warn!(node = %node_raw, "an index row's stored terms are damaged; reading its text instead");
                    let text: Option<String> = conn
                        .query_row("SELECT text FROM index_payload WHERE doc = ?", [rowid], |r| r.get(0))
                        .optional()
                        .map_err(sql_error)?;
                    DocTerms::of_text(text.as_deref().unwrap_or_default())
                }
                None => DocTerms::of_text(text.as_deref().unwrap_or_default()),
            };
            events.push((seq, Event::Put { rowid, node: node_from_str(&node_raw)?, facts, terms, vector }));
        }
        drop(rows);
        drop(stmt);
        let mut stmt = conn.prepare_cached("SELECT seq, doc FROM index_removed WHERE seq > ?").map_err(sql_error)?;
        let mut rows = stmt.query([since]).map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            events.push((row.get(0).map_err(sql_error)?, Event::Remove { rowid: row.get(1).map_err(sql_error)? }));
        }
        drop(rows);
        drop(stmt);
        events.sort_by_key(|(seq, _)| *seq);
        let mut last_seq = since;
        for (seq, event) in events {
            last_seq = last_seq.max(seq);
            match event {
                Event::Put { rowid, node, facts, terms, vector } => {
                    mirror.put(rowid, node, &facts, &terms, vector.as_ref().map(|(e, v)| (e.as_str(), v.as_slice())));
                }
                Event::Remove { rowid } => mirror.remove(rowid),
            }
        }
        last_seq = last_seq.max(counter(conn, "index_seq")?);
        mirror.last_seq = last_seq;
        mirror.generation = generation;
        *seen_version = data_version;
        mirror.loaded = true;
        Ok(())
    }

    /// Writes `docs`, replacing or keeping documents the index already holds as `existing`
    /// says, in one transaction; then the mirror, if it is loaded.
    fn write_docs(&self, docs: Vec<IndexDoc>, existing: Existing) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let mut applied = Vec::with_capacity(docs.len());
        {
            let mut conn = self.db.lock();
            let tx = write_transaction(&mut conn)?;
            let mut seq = reserve_seqs(&tx, docs.len())?;
            let sets: Vec<String> = FACT_COLUMNS.iter().chain(["seq"].iter()).map(|c| format!("{c} = ?")).collect();
            let mut update = tx
                .prepare_cached(&format!("UPDATE index_docs SET {} WHERE rowid = ?", sets.join(", ")))
                .map_err(sql_error)?;
            let mut insert = tx
                .prepare_cached(&format!(
                    "INSERT INTO index_docs (node_id, {}, seq) VALUES ({})",
                    FACT_COLUMNS.join(", "),
                    placeholders(FACT_COLUMNS.len() + 2)
                ))
                .map_err(sql_error)?;
            let mut payload = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO index_payload (doc, text, embedder, vector, terms) VALUES (?, ?, ?, ?, ?)",
                )
                .map_err(sql_error)?;
            for doc in &docs {
                let node = node_to_str(&doc.id);
                seq += 1;
                let mut values = facts_values(&doc.facts)?;
                values.push(Value::Integer(seq));
                let rowid = match Self::rowid_of(&tx, &node)? {
                    Some(_) if existing == Existing::Keep => continue,
                    Some(rowid) => {
                        values.push(Value::Integer(rowid));
                        update.execute(params_from_iter(values)).map_err(sql_error)?;
                        rowid
                    }
                    None => {
                        values.insert(0, Value::Text(node.clone()));
                        insert.execute(params_from_iter(values)).map_err(sql_error)?;
                        tx.last_insert_rowid()
                    }
                };
                let terms = DocTerms::of_text(&doc.text);
                payload
                    .execute(params![
                        rowid,
                        doc.text,
                        doc.embedding.as_ref().map(embedder_key),
                        doc.embedding.as_ref().map(|e| vector_bytes(&e.values)),
                        terms.to_bytes(),
                    ])
                    .map_err(sql_error)?;
                applied.push((doc, rowid, terms));
            }
            drop((update, insert, payload));
            tx.commit().map_err(sql_error)?;
        }
        let mut gate = self.db.gate();
        if gate.mirror.loaded {
            for (doc, rowid, terms) in applied {
                let key = doc.embedding.as_ref().map(embedder_key);
                let vector = key.as_deref().zip(doc.embedding.as_ref().map(|e| e.values.as_slice()));
                gate.mirror.put(rowid, doc.id.clone(), &doc.facts, &terms, vector);
            }
        }
        Ok(())
    }

    fn rowid_of(tx: &Transaction<'_>, node: &str) -> Result<Option<i64>> {
        tx.prepare_cached("SELECT rowid FROM index_docs WHERE node_id = ?")
            .and_then(|mut stmt| stmt.query_row([node], |r| r.get(0)).optional())
            .map_err(sql_error)
    }
}

#[async_trait]
impl SearchIndex for SqliteIndex {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> IndexCapabilities {
        IndexCapabilities { full_text: true, vectors: true }
    }

    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.write_docs(docs, Existing::Replace)
    }

    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.write_docs(docs, Existing::Keep)
    }

    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        let mut changed = Vec::new();
        {
            let mut conn = self.db.lock();
            let tx = write_transaction(&mut conn)?;
            for (node, facts) in &updates {
                let Some(rowid) = Self::rowid_of(&tx, &node_to_str(node))? else { continue };
                let mut values = facts_values(facts)?;
                values.push(Value::Integer(next_seq(&tx)?));
                values.push(Value::Integer(rowid));
                let sets: Vec<String> = FACT_COLUMNS.iter().chain(["seq"].iter()).map(|c| format!("{c} = ?")).collect();
                tx.execute(
                    &format!("UPDATE index_docs SET {} WHERE rowid = ?", sets.join(", ")),
                    params_from_iter(values),
                )
                .map_err(sql_error)?;
                changed.push((rowid, facts));
            }
            tx.commit().map_err(sql_error)?;
        }
        let mut gate = self.db.gate();
        if gate.mirror.loaded {
            for (rowid, facts) in changed {
                gate.mirror.set_facts(rowid, facts);
            }
        }
        Ok(())
    }

    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        let mut removed = Vec::new();
        {
            let mut conn = self.db.lock();
            let tx = write_transaction(&mut conn)?;
            for node in ids {
                let node = node_to_str(node);
                let Some(rowid) = Self::rowid_of(&tx, &node)? else { continue };
                tx.execute("DELETE FROM index_docs WHERE rowid = ?", [rowid]).map_err(sql_error)?;
                tx.execute("DELETE FROM index_payload WHERE doc = ?", [rowid]).map_err(sql_error)?;
                let seq = next_seq(&tx)?;
                tx.execute("INSERT INTO index_removed (seq, doc, node_id) VALUES (?, ?, ?)", params![seq, rowid, node])
                    .map_err(sql_error)?;
                removed.push(rowid);
            }
            tx.commit().map_err(sql_error)?;
        }
        if !removed.is_empty() {
            let mut gate = self.db.gate();
            for rowid in &removed {
                gate.mirror.remove(*rowid);
            }
            drop(gate);
            if let Err(error) = self.db.checkpoint() {
                tracing::warn!(%error, "could not truncate the log after removing index entries");
            }
        }
        Ok(())
    }

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        if query_terms(&query.text).is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let mut gate = self.db.gate();
        self.sync_mirror(&conn, &mut gate)?;
        drop(conn);
        Ok(gate.mirror.text_hits(query))
    }

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let candidates = {
            let mut gate = self.db.gate();
            self.sync_mirror(&conn, &mut gate)?;
            gate.mirror.vector_candidates(query)
        };
        let exact = exact_vectors(&conn, &candidates)?;
        rescored_hits(query, candidates, &exact)
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        if needle.is_empty() {
            return Ok(false);
        }
        let in_rows: bool = {
            let conn = self.db.lock();
            conn.query_row("SELECT EXISTS (SELECT 1 FROM index_payload WHERE instr(text, ?))", [needle], |r| r.get(0))
                .map_err(sql_error)?
        };
        Ok(in_rows || self.db.files_contain(needle.as_bytes())?)
    }

    async fn count(&self) -> Result<usize> {
        let conn = self.db.lock();
        let n: i64 = conn.query_row("SELECT COUNT(*) FROM index_docs", [], |r| r.get(0)).map_err(sql_error)?;
        usize::try_from(n).map_err(|e| Error::backend(BACKEND, e))
    }

    async fn clear(&self) -> Result<()> {
        {
            let mut conn = self.db.lock();
            let tx = write_transaction(&mut conn)?;
            tx.execute_batch(
                "DELETE FROM index_docs;
                 DELETE FROM index_payload;
                 DELETE FROM index_removed;
                 UPDATE counters SET value = value + 1 WHERE name = 'index_generation';",
            )
            .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
        }
        self.db.gate().mirror.reset();
        if let Err(error) = self.db.checkpoint() {
            tracing::warn!(%error, "could not truncate the log after clearing the index");
        }
        Ok(())
    }
}

/// The same searches with no filter, no join and no policy: the floor Arbor's retrieval is
/// measured against by `arbor-bench synthetic`. Never used to answer a request.
#[cfg(feature = "bench")]
impl SqliteIndex {
    /// BM25 over the query's terms in every namespace, top `limit`, nothing else.
    pub fn floor_text_search(&self, text: &str, limit: usize) -> Result<usize> {
        let terms = query_terms(text);
        if terms.is_empty() {
            return Ok(0);
        }
        let conn = self.db.lock();
        let mut gate = self.db.gate();
        self.sync_mirror(&conn, &mut gate)?;
        Ok(gate.mirror.search_text_all(&terms, limit))
    }

    /// The int8 scan over every vector and exact rescoring, top `limit`, nothing else.
    pub fn floor_vector_search(&self, embedding: &arbor_ports::Embedding, limit: usize) -> Result<usize> {
        let conn = self.db.lock();
        let candidates = {
            let mut gate = self.db.gate();
            self.sync_mirror(&conn, &mut gate)?;
            gate.mirror.scan_all(&embedder_key(embedding), &embedding.values, arbor_search::rescore_pool(limit))
        };
        // Rescored as a filtered search is (exact vectors read, dot products, the best kept),
        // without naming layers.
        let exact = exact_vectors(&conn, &candidates)?;
        let mut scores: Vec<f32> = candidates
            .iter()
            .filter_map(|c| exact.get(&c.rowid))
            .map(|vector| arbor_search::exact_similarity(vector, &embedding.values))
            .collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.truncate(limit);
        Ok(scores.len())
    }
}

#[cfg(test)]
mod tests {
    use arbor_domain::id::{LeafId, ScopeId};
    use arbor_domain::model::{Category, TreeId};
    use arbor_domain::namespace::Namespace;
    use arbor_domain::sensitivity::Sensitivity;
    use arbor_domain::time::{KnownSpan, Timestamp, Validity};
    use arbor_domain::visibility::{LayerFilter, NodeKind, NodeState, VisibilityFilter};
    use arbor_ports::TermSelection;
    use proptest::prelude::*;

    use super::*;
    use crate::SqliteConfig;

    fn open() -> (tempfile::TempDir, SqliteIndex) {
        let dir = tempfile::tempdir().unwrap();
        let db = SqliteDatabase::open(&SqliteConfig::new(dir.path().join("arbor.db"))).unwrap();
        (dir, SqliteIndex::new(Arc::new(db)))
    }

    fn namespace() -> Namespace {
        Namespace::conversation(ScopeId::parse("c1").unwrap())
    }

    fn doc(n: usize, text: &str) -> IndexDoc {
        let at = Timestamp::from_second(1_780_000_000).unwrap();
        IndexDoc {
            id: NodeId::Leaf(LeafId::parse(&format!("leaf-{n}")).unwrap()),
            facts: NodeFacts {
                node: NodeKind::Leaf,
                namespace: namespace(),
                category: Category::Interaction,
                tree_id: TreeId::uncategorized(Category::Interaction),
                kind: None,
                state: NodeState::Current,
                validity: Validity::ALWAYS,
                known: KnownSpan::from(at),
                expires_at: None,
                sensitivity: Sensitivity::Normal,
                time_start: at,
                time_end: at,
            },
            text: text.to_owned(),
            embedding: None,
        }
    }

    fn text_query(text: &str, limit: usize) -> TextQuery {
        TextQuery {
            filter: VisibilityFilter {
                layers: vec![LayerFilter { namespace: namespace(), frozen_at: None }],
                now: Timestamp::from_second(1_790_000_000).unwrap(),
                as_of: None,
                include_restricted: false,
                node_kinds: vec![NodeKind::Leaf],
                categories: Vec::new(),
                tree: None,
                kinds: Vec::new(),
                time_range: None,
            },
            text: text.to_owned(),
            limit,
            terms: TermSelection::All,
        }
    }

    /// For each word: how many documents the mirror says hold it, and how many stored texts
    /// do; and whether every row's stored terms are its text's.
    fn held_and_recounted(index: &SqliteIndex) -> (Vec<u64>, Vec<u64>, bool) {
        let conn = index.db.lock();
        let rows: Vec<(String, Option<Vec<u8>>)> = conn
            .prepare("SELECT text, terms FROM index_payload")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let mut gate = index.db.gate();
        index.sync_mirror(&conn, &mut gate).unwrap();
        let held =
            WORDS.iter().map(|w| gate.mirror.documents_holding(&arbor_domain::text::index_tokens(w)[0])).collect();
        let recounted = WORDS
            .iter()
            .map(|w| rows.iter().filter(|(text, _)| text.split(' ').any(|t| t == *w)).count() as u64)
            .collect();
        let stored_terms_are_the_texts = rows
            .iter()
            .all(|(text, terms)| terms.as_deref().and_then(DocTerms::from_bytes) == Some(DocTerms::of_text(text)));
        (held, recounted, stored_terms_are_the_texts)
    }

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(Vec<(usize, Vec<usize>)>),
        Remove(Vec<usize>),
        Clear,
    }

    const WORDS: &[&str] = &["amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "iris", "juniper"];

    fn op() -> impl Strategy<Value = Op> {
        let text = proptest::collection::vec(0..WORDS.len(), 0..6);
        prop_oneof![
            6 => proptest::collection::vec((0..8usize, text), 1..4).prop_map(Op::Upsert),
            3 => proptest::collection::vec(0..8usize, 1..3).prop_map(Op::Remove),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Whatever is indexed, replaced, removed or cleared, each term's count is the number of
        /// documents holding it, in this process and in one that opens the file afresh, and
        /// every row stores its own text's terms.
        #[test]
        fn term_counts_follow_every_change(ops in proptest::collection::vec(op(), 1..12)) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (dir, index) = open();
            runtime.block_on(async {
                for op in ops {
                    match op {
                        Op::Upsert(docs) => {
                            let docs = docs
                                .into_iter()
                                .map(|(n, words)| {
                                    doc(n, &words.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" "))
                                })
                                .collect();
                            index.upsert(docs).await.unwrap();
                        }
                        Op::Remove(ids) => {
                            let ids: Vec<NodeId> = ids.into_iter().map(|n| doc(n, "").id).collect();
                            index.remove(&ids).await.unwrap();
                        }
                        Op::Clear => index.clear().await.unwrap(),
                    }
                    let (held, recounted, stored) = held_and_recounted(&index);
                    prop_assert_eq!(held, recounted.clone());
                    prop_assert!(stored);
                    let fresh = SqliteIndex::new(Arc::new(
                        SqliteDatabase::open(&SqliteConfig::new(dir.path().join("arbor.db"))).unwrap(),
                    ));
                    prop_assert_eq!(held_and_recounted(&fresh).0, recounted);
                }
                Ok(())
            })?;
        }
    }

    #[tokio::test]
    async fn the_rarest_terms_of_a_long_text_find_its_near_duplicate() {
        let (_dir, index) = open();
        // Every document holds the common words; one repeats most of the long text.
        let common = "project meeting schedule budget review team update";
        let mut docs: Vec<IndexDoc> =
            (0..200).map(|n| doc(n, &format!("{common} note{n} topic{} extra{}", n % 7, n % 11))).collect();
        let long: Vec<String> = (0..40).map(|i| format!("word{i}")).collect();
        docs.push(doc(999, &format!("{common} {}", long.join(" "))));
        index.upsert(docs).await.unwrap();

        // A text dropping a few of those words and adding unseen ones: its rarest indexed
        // words are the long text's, which only the near-duplicate holds.
        let text = format!("{common} {} unseen1 unseen2", long[3..].join(" "));
        let query = TextQuery { terms: TermSelection::Rarest(8), ..text_query(&text, 3) };
        let hits = index.search_text(&query).await.unwrap();
        assert_eq!(ids(&hits), ["leaf-999"]);

        // Common words alone still match when nothing rarer is indexed.
        let query = TextQuery { terms: TermSelection::Rarest(2), ..text_query("budget review unseen3", 300) };
        assert_eq!(index.search_text(&query).await.unwrap().len(), 201);

        // Terms no document holds match nothing, whatever the selection.
        let absent: Vec<String> = (0..30).map(|i| format!("absent{i}")).collect();
        let query = TextQuery { terms: TermSelection::Rarest(8), ..text_query(&absent.join(" "), 3) };
        assert!(index.search_text(&query).await.unwrap().is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The scores and order are FTS5's `bm25()` over the same hashed terms, which this
        /// index used before: full text moved out of FTS5 without changing a ranking.
        #[test]
        fn the_scores_are_fts5s(
            texts in proptest::collection::vec(proptest::collection::vec(0..WORDS.len(), 0..10), 1..40),
            queries in proptest::collection::vec(proptest::collection::vec(0..WORDS.len(), 1..4), 1..6),
            limit in 1usize..50,
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (_dir, index) = open();
            let fts = Connection::open_in_memory().unwrap();
            fts.execute_batch("CREATE VIRTUAL TABLE t USING fts5(terms, content = '', tokenize = 'ascii')").unwrap();
            let lexemes = |text: &str| {
                arbor_domain::text::index_tokens(text).iter().map(|t| arbor_ports::rows::term_lexeme(t)).collect::<Vec<_>>()
            };
            let mut docs = Vec::new();
            for (n, words) in texts.iter().enumerate() {
                let text = words.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" ");
                fts.execute("INSERT INTO t (rowid, terms) VALUES (?, ?)", params![n as i64, lexemes(&text).join(" ")]).unwrap();
                docs.push(doc(n, &text));
            }
            runtime.block_on(index.upsert(docs)).unwrap();
            for words in queries {
                let question = words.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" ");
                let expression = query_terms(&question)
                    .iter()
                    .map(|t| format!("\"{}\"", arbor_ports::rows::term_lexeme(t)))
                    .collect::<Vec<_>>()
                    .join(" OR ");
                // Every match, as FTS5 scores it, in the port's order (node ids order ties).
                let mut expected: Vec<(String, f32)> = fts
                    .prepare("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?")
                    .unwrap()
                    .query_map([expression], |r| Ok((format!("leaf-{}", r.get::<_, i64>(0)?), -r.get::<_, f64>(1)? as f32)))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                expected.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| doc_order(&a.0, &b.0)));
                expected.truncate(limit);
                let found: Vec<(String, f32)> = runtime
                    .block_on(index.search_text(&text_query(&question, limit)))
                    .unwrap()
                    .into_iter()
                    .map(|h| (h.id.to_string(), h.score))
                    .collect();
                prop_assert_eq!(found, expected);
            }
        }
    }

    /// Rows written before terms were stored (no `terms`), and rows whose stored terms are
    /// damaged, are read from their text: a process opening the file finds them all.
    #[tokio::test]
    async fn rows_without_sound_terms_are_read_from_their_text() {
        let (dir, index) = open();
        index.upsert(vec![doc(1, "amber basil"), doc(2, "basil cedar"), doc(3, "cedar delta")]).await.unwrap();
        {
            let conn = index.db.lock();
            conn.execute("UPDATE index_payload SET terms = NULL WHERE doc = 1", []).unwrap();
            conn.execute("UPDATE index_payload SET terms = x'0102' WHERE doc = 2", []).unwrap();
        }
        let fresh =
            SqliteIndex::new(Arc::new(SqliteDatabase::open(&SqliteConfig::new(dir.path().join("arbor.db"))).unwrap()));
        assert_eq!(ids(&fresh.search_text(&text_query("basil", 5)).await.unwrap()), ["leaf-1", "leaf-2"]);
        assert_eq!(ids(&fresh.search_text(&text_query("amber", 5)).await.unwrap()), ["leaf-1"]);
        assert_eq!(held_and_recounted(&fresh).0, held_and_recounted(&index).0);
    }

    /// What another process writes reaches a loaded mirror's full text through the change
    /// sequence, with the statistics BM25 uses: an added document is found, a removed one is
    /// not, and the scores are those of a process that loaded the file afresh.
    #[tokio::test]
    async fn another_processs_writes_reach_the_loaded_text_index() {
        let (dir, here) = open();
        let path = dir.path().join("arbor.db");
        let there = SqliteIndex::new(Arc::new(SqliteDatabase::open(&SqliteConfig::new(path.clone())).unwrap()));
        here.upsert(vec![doc(1, "amber basil"), doc(2, "basil cedar")]).await.unwrap();
        assert_eq!(ids(&here.search_text(&text_query("basil", 5)).await.unwrap()), ["leaf-1", "leaf-2"]);

        there.upsert(vec![doc(3, "basil basil delta")]).await.unwrap();
        let hits = here.search_text(&text_query("basil", 5)).await.unwrap();
        let fresh = SqliteIndex::new(Arc::new(SqliteDatabase::open(&SqliteConfig::new(path)).unwrap()));
        assert_eq!(hits, fresh.search_text(&text_query("basil", 5)).await.unwrap());
        assert_eq!(ids(&hits)[0], "leaf-3");

        there.remove(&[doc(3, "").id, doc(1, "").id]).await.unwrap();
        assert_eq!(ids(&here.search_text(&text_query("basil", 5)).await.unwrap()), ["leaf-2"]);
        assert!(here.search_text(&text_query("amber", 5)).await.unwrap().is_empty());
    }

    /// The order of two documents' node ids, as the port orders ties.
    fn doc_order(a: &str, b: &str) -> std::cmp::Ordering {
        let id = |s: &str| NodeId::Leaf(LeafId::parse(s).unwrap());
        id(a).cmp(&id(b))
    }

    fn ids(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| h.id.to_string()).collect()
    }
}
