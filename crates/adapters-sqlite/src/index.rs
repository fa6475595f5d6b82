//! [`SqliteIndex`]: the search index projection on SQLite.
//!
//! - Full text: FTS5 with BM25 over *hashed* tokens. Each token of
//!   [`index_tokens`](arbor_domain::text::index_tokens) (stemmed) is replaced by a short hash before it reaches
//!   FTS5, and queries are hashed the same way, so ranking is unchanged while the FTS index —
//!   whose internal pages SQLite does not scrub on delete — never holds a word that a forget
//!   would have to chase.
//! - Vectors: `f32` blobs in `index_payload`, mirrored in memory as int8 ([`crate::mirror`]);
//!   the scan filters inside the loop and the best candidates are rescored exactly.
//! - Both searches apply the visibility filter inside the query: the vector scan evaluates it
//!   per document, and full text calls `arbor_visible(rowid)` on each match, both against the
//!   in-memory mirror of the filter columns ([`crate::mirror`]).

use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::text::{index_tokens, query_terms};
use arbor_domain::visibility::NodeFacts;
use arbor_ports::{
    Embedding, Error, Hit, IndexCapabilities, IndexDoc, Result, SearchIndex, TermSelection, TextQuery, VectorQuery,
    rarest_terms,
};
use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, params, params_from_iter};

use arbor_ports::rows::{FactsRow, term_id, term_lexeme};

use crate::codec::{node_from_str, node_to_str};
use crate::config::{SqliteDatabase, write_transaction};
use crate::error::{BACKEND, corrupt, sql_error};
use crate::filter::placeholders;
use crate::mirror::{Candidate, Mirror};

/// How many approximate candidates are rescored exactly, per result wanted. int8 quantization
/// keeps the approximate order very close to the exact one, so twice as many is plenty.
const RESCORE_FACTOR: usize = 2;
/// The fewest candidates rescored.
const RESCORE_MIN: usize = 32;

/// The search index on a [`SqliteDatabase`].
#[derive(Debug)]
pub struct SqliteIndex {
    db: Arc<SqliteDatabase>,
}

fn hashed_terms(text: &str) -> String {
    index_tokens(text).iter().map(|t| term_lexeme(t)).collect::<Vec<_>>().join(" ")
}

/// The distinct term ids of a text, as `index_terms` counts them (stored as `i64` bits).
fn distinct_term_ids(text: &str) -> std::collections::BTreeSet<i64> {
    index_tokens(text).iter().map(|t| term_id(t).cast_signed()).collect()
}

/// Counts one more document holding each term of `text`.
fn count_terms(tx: &Transaction<'_>, text: &str) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO index_terms (term, docs) VALUES (?, 1) ON CONFLICT (term) DO UPDATE SET docs = docs + 1",
        )
        .map_err(sql_error)?;
    for term in distinct_term_ids(text) {
        stmt.execute([term]).map_err(sql_error)?;
    }
    Ok(())
}

/// Counts one document fewer for each term of the document `rowid` held; a term no document
/// holds any more leaves no row behind.
fn uncount_terms(tx: &Transaction<'_>, rowid: i64) -> Result<()> {
    let text: Option<String> = tx
        .prepare_cached("SELECT text FROM index_payload WHERE doc = ?")
        .and_then(|mut stmt| stmt.query_row([rowid], |r| r.get(0)).optional())
        .map_err(sql_error)?;
    let Some(text) = text else { return Ok(()) };
    let mut drop_last = tx.prepare_cached("DELETE FROM index_terms WHERE term = ? AND docs = 1").map_err(sql_error)?;
    let mut decrement =
        tx.prepare_cached("UPDATE index_terms SET docs = docs - 1 WHERE term = ?").map_err(sql_error)?;
    for term in distinct_term_ids(&text) {
        if drop_last.execute([term]).map_err(sql_error)? == 0 {
            decrement.execute([term]).map_err(sql_error)?;
        }
    }
    Ok(())
}

/// The FTS5 expression matching `terms` as `selection` picks them; `None` when it picks none.
fn match_expression(conn: &Connection, terms: &[String], selection: TermSelection) -> Result<Option<String>> {
    let mut chosen: Vec<&String> = terms.iter().collect();
    if let TermSelection::Rarest(n) = selection {
        let mut stmt = conn.prepare_cached("SELECT docs FROM index_terms WHERE term = ?").map_err(sql_error)?;
        let mut counted = Vec::with_capacity(terms.len());
        for term in terms {
            let docs: Option<i64> =
                stmt.query_row([term_id(term).cast_signed()], |r| r.get(0)).optional().map_err(sql_error)?;
            counted.push((docs.unwrap_or(0).unsigned_abs(), term));
        }
        chosen = rarest_terms(n, counted).into_iter().map(|(_, term)| term).collect();
    }
    if chosen.is_empty() {
        return Ok(None);
    }
    Ok(Some(chosen.iter().map(|t| format!("\"{}\"", term_lexeme(t))).collect::<Vec<_>>().join(" OR ")))
}

fn vector_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn vector_from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn embedder_key(embedding: &Embedding) -> String {
    embedding.embedder.to_string()
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

/// Exact rescoring of approximate candidates from the stored `f32` vectors: the best `limit`,
/// best first.
fn rescore(
    conn: &Connection,
    candidates: Vec<Candidate>,
    query: &[f32],
    limit: usize,
) -> Result<Vec<(Candidate, f32)>> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    // Placeholders come in sizes of powers of two so the statement cache is reused.
    let slots = candidates.len().next_power_of_two();
    let sql = format!("SELECT doc, vector FROM index_payload WHERE doc IN ({})", placeholders(slots));
    let mut stmt = conn.prepare_cached(&sql).map_err(sql_error)?;
    let ids = candidates.iter().map(|c| c.rowid).chain(std::iter::repeat(-1)).take(slots);
    let mut rows = stmt.query(params_from_iter(ids)).map_err(sql_error)?;
    let mut exact = std::collections::HashMap::new();
    while let Some(row) = rows.next().map_err(sql_error)? {
        let rowid: i64 = row.get(0).map_err(sql_error)?;
        let bytes: Vec<u8> = row.get(1).map_err(sql_error)?;
        let score: f32 = vector_from_bytes(&bytes).iter().zip(query).map(|(a, b)| a * b).sum();
        exact.insert(rowid, score);
    }
    let mut scored: Vec<(Candidate, f32)> =
        candidates.into_iter().filter_map(|c| exact.get(&c.rowid).map(|score| (c, *score))).collect();
    scored.sort_by(|a, b| arbor_ports::best_first((a.1, &a.0.node), (b.1, &b.0.node)));
    scored.truncate(limit);
    Ok(scored)
}

impl SqliteIndex {
    pub fn new(db: Arc<SqliteDatabase>) -> SqliteIndex {
        SqliteIndex { db }
    }

    /// Brings the vector mirror up to date: a full load the first time or after a `clear`,
    /// otherwise only what other connections changed since the last look.
    fn sync_mirror(&self, conn: &Connection, mirror: &mut Mirror) -> Result<()> {
        let data_version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(sql_error)?;
        if mirror.loaded && data_version == mirror.data_version {
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
            Put { rowid: i64, node: NodeId, facts: NodeFacts, vector: Option<(String, Vec<f32>)> },
            Remove { rowid: i64 },
        }
        let mut events: Vec<(i64, Event)> = Vec::new();
        let columns: Vec<String> = FACT_COLUMNS.iter().map(|c| format!("d.{c}")).collect();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT d.seq, d.rowid, d.node_id, p.embedder, p.vector, {} FROM index_docs d
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
            let facts = facts_from_row(row, 5, &node_raw)?;
            let vector = embedder.zip(vector).map(|(e, bytes)| (e, vector_from_bytes(&bytes)));
            events.push((seq, Event::Put { rowid, node: node_from_str(&node_raw)?, facts, vector }));
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
                Event::Put { rowid, node, facts, vector } => {
                    mirror.put(rowid, node, &facts, vector.as_ref().map(|(e, v)| (e.as_str(), v.as_slice())));
                }
                Event::Remove { rowid } => mirror.remove(rowid),
            }
        }
        last_seq = last_seq.max(counter(conn, "index_seq")?);
        mirror.last_seq = last_seq;
        mirror.generation = generation;
        mirror.data_version = data_version;
        mirror.loaded = true;
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
                    "INSERT OR REPLACE INTO index_payload (doc, text, embedder, vector) VALUES (?, ?, ?, ?)",
                )
                .map_err(sql_error)?;
            let mut fts_delete = tx.prepare_cached("DELETE FROM index_fts WHERE rowid = ?").map_err(sql_error)?;
            let mut fts_insert =
                tx.prepare_cached("INSERT INTO index_fts (rowid, terms) VALUES (?, ?)").map_err(sql_error)?;
            for doc in &docs {
                let node = node_to_str(&doc.id);
                seq += 1;
                let mut values = facts_values(&doc.facts)?;
                values.push(Value::Integer(seq));
                let rowid = match Self::rowid_of(&tx, &node)? {
                    Some(rowid) => {
                        fts_delete.execute([rowid]).map_err(sql_error)?;
                        uncount_terms(&tx, rowid)?;
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
                payload
                    .execute(params![
                        rowid,
                        doc.text,
                        doc.embedding.as_ref().map(embedder_key),
                        doc.embedding.as_ref().map(|e| vector_bytes(&e.values)),
                    ])
                    .map_err(sql_error)?;
                fts_insert.execute(params![rowid, hashed_terms(&doc.text)]).map_err(sql_error)?;
                count_terms(&tx, &doc.text)?;
                applied.push(rowid);
            }
            drop((update, insert, payload, fts_delete, fts_insert));
            tx.commit().map_err(sql_error)?;
        }
        let mut gate = self.db.gate();
        if gate.mirror.loaded {
            for (doc, rowid) in docs.iter().zip(applied) {
                let key = doc.embedding.as_ref().map(embedder_key);
                let vector = key.as_deref().zip(doc.embedding.as_ref().map(|e| e.values.as_slice()));
                gate.mirror.put(rowid, doc.id.clone(), &doc.facts, vector);
            }
        }
        Ok(())
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
                tx.execute("DELETE FROM index_fts WHERE rowid = ?", [rowid]).map_err(sql_error)?;
                uncount_terms(&tx, rowid)?;
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
        let terms = query_terms(&query.text);
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let conn = self.db.lock();
        let Some(expression) = match_expression(&conn, &terms, query.terms)? else { return Ok(Vec::new()) };
        {
            let mut gate = self.db.gate();
            self.sync_mirror(&conn, &mut gate.mirror)?;
            let compiled = gate.mirror.compile(&query.filter);
            if compiled.is_none() {
                return Ok(Vec::new());
            }
            gate.compiled = compiled;
        }
        // `arbor_visible` applies the filter to each match as FTS5 produces it, before ranking
        // and the limit: nothing outside the filter is ranked, and no table row is read per
        // match.
        let rows = (|| -> rusqlite::Result<Vec<(i64, f64)>> {
            let mut stmt = conn.prepare_cached(
                "SELECT rowid, bm25(index_fts) AS rank FROM index_fts
                 WHERE index_fts MATCH ? AND arbor_visible(rowid) ORDER BY rank, rowid LIMIT ?",
            )?;
            let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
            stmt.query_map(params![expression, limit], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
        })();
        let mut gate = self.db.gate();
        let compiled = gate.compiled.take();
        let rows = rows.map_err(sql_error)?;
        let mut hits = Vec::with_capacity(rows.len());
        for (rowid, rank) in rows {
            let missing =
                || corrupt("index document", &rowid.to_string(), "matched in full text but missing from the index");
            let node = gate.mirror.node(rowid).cloned().ok_or_else(missing)?;
            let layer = compiled.as_ref().and_then(|c| gate.mirror.layer_of(c, rowid)).ok_or_else(missing)?;
            hits.push(Hit { id: node, namespace: query.filter.layers[layer].namespace.clone(), score: -rank as f32 });
        }
        hits.sort_by(Hit::best_first);
        Ok(hits)
    }

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        let embedder = embedder_key(&query.embedding);
        let conn = self.db.lock();
        let candidates = {
            let mut gate = self.db.gate();
            self.sync_mirror(&conn, &mut gate.mirror)?;
            let keep = (query.limit.saturating_mul(RESCORE_FACTOR)).max(RESCORE_MIN);
            gate.mirror.scan(&query.filter, &embedder, &query.embedding.values, keep)
        };
        let scored = rescore(&conn, candidates, &query.embedding.values, query.limit)?;
        scored
            .into_iter()
            .map(|(candidate, score)| {
                let layer = candidate.layer.and_then(|i| query.filter.layers.get(i)).ok_or_else(|| {
                    corrupt("index document", &candidate.rowid.to_string(), "scanned outside the filter's layers")
                })?;
                Ok(Hit { id: candidate.node, namespace: layer.namespace.clone(), score })
            })
            .collect()
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
                "DELETE FROM index_fts;
                 DELETE FROM index_terms;
                 DELETE FROM index_docs;
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
    /// FTS5 BM25 over the hashed query terms, top `limit`, nothing else.
    pub fn floor_text_search(&self, text: &str, limit: usize) -> Result<usize> {
        let terms = query_terms(text);
        if terms.is_empty() {
            return Ok(0);
        }
        let expression: Vec<String> = terms.iter().map(|t| format!("\"{}\"", term_lexeme(t))).collect();
        let conn = self.db.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT rowid, bm25(index_fts) AS rank FROM index_fts WHERE index_fts MATCH ? ORDER BY rank LIMIT ?",
            )
            .map_err(sql_error)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows: Vec<(i64, f64)> = stmt
            .query_map(params![expression.join(" OR "), limit], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql_error)?
            .collect::<Result<_, _>>()
            .map_err(sql_error)?;
        Ok(rows.len())
    }

    /// The int8 scan over every vector and exact rescoring, top `limit`, nothing else.
    pub fn floor_vector_search(&self, embedding: &Embedding, limit: usize) -> Result<usize> {
        let conn = self.db.lock();
        let candidates = {
            let mut gate = self.db.gate();
            self.sync_mirror(&conn, &mut gate.mirror)?;
            gate.mirror.scan_all(&embedder_key(embedding), &embedding.values, (limit * RESCORE_FACTOR).max(RESCORE_MIN))
        };
        Ok(rescore(&conn, candidates, &embedding.values, limit)?.len())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use arbor_domain::id::{LeafId, ScopeId};
    use arbor_domain::model::{Category, TreeId};
    use arbor_domain::namespace::Namespace;
    use arbor_domain::sensitivity::Sensitivity;
    use arbor_domain::time::{KnownSpan, Timestamp, Validity};
    use arbor_domain::visibility::{LayerFilter, NodeKind, NodeState, VisibilityFilter};
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

    /// `index_terms` as stored, and as recounted from the documents' text.
    fn stored_and_recounted(index: &SqliteIndex) -> (BTreeMap<i64, i64>, BTreeMap<i64, i64>) {
        let conn = index.db.lock();
        let stored = conn
            .prepare("SELECT term, docs FROM index_terms")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let texts: Vec<String> = conn
            .prepare("SELECT text FROM index_payload")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let mut recounted = BTreeMap::new();
        for text in texts {
            for term in distinct_term_ids(&text) {
                *recounted.entry(term).or_insert(0) += 1;
            }
        }
        (stored, recounted)
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
        /// documents holding it, and no term outlives the last document that held it.
        #[test]
        fn term_counts_follow_every_change(ops in proptest::collection::vec(op(), 1..12)) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (_dir, index) = open();
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
                    let (stored, recounted) = stored_and_recounted(&index);
                    prop_assert_eq!(stored, recounted);
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

    fn ids(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| h.id.to_string()).collect()
    }
}
