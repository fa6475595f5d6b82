//! [`PgIndex`]: the search index projection on Postgres.
//!
//! - Full text: a `tsvector` of *hashed* tokens behind a GIN index. Each token of
//!   [`index_tokens`](arbor_domain::text::index_tokens) (stemmed) becomes its [`term_lexeme`], positions standing
//!   for occurrences, so no index page ever holds a word (GIN never drops a key once written).
//!   Ranking is BM25 computed in the query from `index_terms` (documents per term) and
//!   `index_totals` (documents and tokens), with the constants and arithmetic of FTS5's `bm25()` (which the SQLite index reproduces),
//!   so both backends rank the same documents the same way.
//! - Vectors: a pgvector `vector` column and, per embedder, a partial HNSW index over
//!   `embedding::vector(<dimensions>)` for that embedder's rows (cosine distance), created when
//!   its first vector arrives. Searches filter inside the index scan; pgvector's iterative scan
//!   keeps walking the graph until enough admitted rows are found.
//! - Writers of counts (upsert, remove, clear) take one advisory lock, so processes indexing at
//!   once never deadlock on shared term rows.

use std::collections::BTreeMap;
use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::namespace::Namespace;
use arbor_domain::text::{index_tokens, query_terms, stem, tokenize};
use arbor_domain::visibility::NodeFacts;
use arbor_ports::rows::{FactsRow, corrupt, node_from_str, node_to_str, term_id, term_lexeme};
use arbor_ports::{
    Embedding, Error, Hit, IndexCapabilities, IndexDoc, Result, SearchIndex, TermSelection, TextQuery, VectorQuery,
    rarest_terms,
};
use async_trait::async_trait;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};

use crate::codec::sensitivity;
use crate::config::PgDatabase;
use crate::error::{BACKEND, sql_error};
use crate::filter::{Target, push_visibility};
use crate::schema::LOCK_CLASS;

/// The advisory lock object id taken by writers of term counts.
const INDEX_LOCK: i32 = 2;
use arbor_ports::{BM25_B as B, BM25_K1 as K1};
/// pgvector's HNSW index takes vectors of at most this many dimensions; wider ones are
/// searched exactly, without an index.
const HNSW_MAX_DIMENSIONS: u32 = 2000;
/// tsvector keeps at most this many positions per lexeme, so term frequencies saturate here
/// (BM25 has long flattened out by then).
const MAX_POSITIONS: usize = 256;
/// Documents per multi-row statement (Postgres allows 65,535 bound values).
const UPSERT_CHUNK: usize = 1_000;

/// The search index on a [`PgDatabase`].
#[derive(Debug)]
pub struct PgIndex {
    db: Arc<PgDatabase>,
}

impl PgIndex {
    /// Writes `docs`, replacing documents the index holds unless `keep_existing`, which
    /// leaves them as they are. Index writers take the counts' lock first, so which ids exist
    /// cannot change between looking and writing.
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
        lock_counts(&mut tx).await?;
        let mut delta = CountDelta::default();
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
        let nodes: Vec<String> = latest.keys().cloned().collect();
        uncount(&mut tx, &nodes, &mut delta).await?;
        for doc in latest.values() {
            if let Some(embedding) = &doc.embedding {
                self.ensure_vector_index(&mut tx, embedding).await?;
            }
        }
        let batch: Vec<(&String, &&IndexDoc)> = latest.iter().collect();
        for chunk in batch.chunks(UPSERT_CHUNK) {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "INSERT INTO index_docs (node_id, {FACT_COLUMNS}, terms, term_count, embedder, embedding) "
            ));
            let mut failed = None;
            sql.push_values(chunk.iter(), |mut values, (node, doc)| {
                let (frequencies, tokens) = term_frequencies(&doc.text);
                values.push_bind((*node).clone());
                if let Err(error) = push_facts(&mut values, &doc.facts) {
                    failed = Some(error);
                }
                values
                    .push_bind(tsvector_literal(&frequencies))
                    .push_unseparated("::tsvector")
                    .push_bind(tokens)
                    .push_bind(doc.embedding.as_ref().map(embedder_key))
                    .push_bind(doc.embedding.as_ref().map(|e| e.values.clone()))
                    .push_unseparated("::real[]::vector");
                delta.add(frequencies.into_keys(), i64::from(tokens), 1);
            });
            if let Some(error) = failed {
                return Err(error);
            }
            sql.push(
                " ON CONFLICT (node_id) DO UPDATE SET (node_kind, namespace, category, tree_id, kind, state, valid_from,
                   valid_to, known_from, known_until, expires_at, sensitivity, time_start, time_end, terms, term_count,
                   embedder, embedding) = (EXCLUDED.node_kind, EXCLUDED.namespace, EXCLUDED.category, EXCLUDED.tree_id,
                   EXCLUDED.kind, EXCLUDED.state, EXCLUDED.valid_from, EXCLUDED.valid_to, EXCLUDED.known_from,
                   EXCLUDED.known_until, EXCLUDED.expires_at, EXCLUDED.sensitivity, EXCLUDED.time_start,
                   EXCLUDED.time_end, EXCLUDED.terms, EXCLUDED.term_count, EXCLUDED.embedder, EXCLUDED.embedding)",
            );
            sql.build().execute(&mut *tx).await.map_err(sql_error)?;
        }
        delta.apply(&mut tx).await?;
        tx.commit().await.map_err(sql_error)
    }

    pub fn new(db: Arc<PgDatabase>) -> PgIndex {
        PgIndex { db }
    }
}

/// A text's hashed terms: each distinct lexeme with its number of occurrences, and the
/// number of tokens.
fn term_frequencies(text: &str) -> (BTreeMap<String, usize>, i32) {
    let tokens = index_tokens(text);
    let mut frequencies = BTreeMap::new();
    for token in &tokens {
        *frequencies.entry(term_lexeme(token)).or_insert(0) += 1;
    }
    (frequencies, i32::try_from(tokens.len()).unwrap_or(i32::MAX))
}

/// A tsvector literal: each lexeme with as many (stand-in) positions as it occurs.
fn tsvector_literal(frequencies: &BTreeMap<String, usize>) -> String {
    let mut literal = String::new();
    for (lexeme, tf) in frequencies {
        if !literal.is_empty() {
            literal.push(' ');
        }
        let positions: Vec<String> = (1..=(*tf).min(MAX_POSITIONS)).map(|p| p.to_string()).collect();
        literal.push_str(&format!("'{lexeme}':{}", positions.join(",")));
    }
    literal
}

fn embedder_key(embedding: &Embedding) -> String {
    embedding.embedder.to_string()
}

/// A SQL string literal (the embedder key is inlined so the planner can match the partial
/// HNSW index to the query).
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn hnsw_index_name(key: &str) -> String {
    format!("index_docs_hnsw_{:016x}", term_id(key))
}

/// What a set of changes does to the term counts and totals.
#[derive(Debug, Default)]
struct CountDelta {
    terms: BTreeMap<String, i64>,
    docs: i64,
    tokens: i64,
}

impl CountDelta {
    fn add(&mut self, lexemes: impl IntoIterator<Item = String>, tokens: i64, sign: i64) {
        for lexeme in lexemes {
            *self.terms.entry(lexeme).or_insert(0) += sign;
        }
        self.docs += sign;
        self.tokens += sign * tokens;
    }

    /// Applies the delta; terms no document holds any more leave no row behind.
    async fn apply(self, conn: &mut PgConnection) -> Result<()> {
        let (terms, deltas): (Vec<String>, Vec<i64>) = self.terms.into_iter().filter(|(_, d)| *d != 0).unzip();
        if !terms.is_empty() {
            sqlx::query(
                "INSERT INTO index_terms (term, docs) SELECT * FROM unnest($1::text[], $2::bigint[])
                 ON CONFLICT (term) DO UPDATE SET docs = index_terms.docs + EXCLUDED.docs",
            )
            .bind(&terms)
            .bind(&deltas)
            .execute(&mut *conn)
            .await
            .map_err(sql_error)?;
            sqlx::query("DELETE FROM index_terms WHERE term = ANY($1) AND docs <= 0")
                .bind(&terms)
                .execute(&mut *conn)
                .await
                .map_err(sql_error)?;
        }
        if self.docs != 0 || self.tokens != 0 {
            sqlx::query("UPDATE index_totals SET docs = docs + $1, tokens = tokens + $2")
                .bind(self.docs)
                .bind(self.tokens)
                .execute(&mut *conn)
                .await
                .map_err(sql_error)?;
        }
        Ok(())
    }
}

/// Takes the lock every writer of counts holds until its transaction ends.
async fn lock_counts(conn: &mut PgConnection) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(LOCK_CLASS)
        .bind(INDEX_LOCK)
        .execute(conn)
        .await
        .map_err(sql_error)?;
    Ok(())
}

/// Counts out the documents among `nodes` that exist (their distinct terms and tokens).
async fn uncount(conn: &mut PgConnection, nodes: &[String], delta: &mut CountDelta) -> Result<()> {
    let rows = sqlx::query("SELECT tsvector_to_array(terms), term_count FROM index_docs WHERE node_id = ANY($1)")
        .bind(nodes)
        .fetch_all(&mut *conn)
        .await
        .map_err(sql_error)?;
    for row in rows {
        let lexemes: Vec<String> = row.get(0);
        let tokens: i32 = row.get(1);
        delta.add(lexemes, i64::from(tokens), -1);
    }
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

impl PgIndex {
    /// Makes sure the HNSW index for `embedding`'s embedder exists (inside the caller's
    /// transaction, which holds the counts lock, so two processes never race to create it).
    async fn ensure_vector_index(&self, conn: &mut PgConnection, embedding: &Embedding) -> Result<()> {
        let key = embedder_key(embedding);
        let dimensions = embedding.embedder.dimensions;
        if dimensions > HNSW_MAX_DIMENSIONS || self.db.vector_indexes.lock().is_ok_and(|known| known.contains(&key)) {
            return Ok(());
        }
        sqlx::query(&format!(
            "CREATE INDEX IF NOT EXISTS {} ON index_docs USING hnsw ((embedding::vector({dimensions})) vector_cosine_ops)
             WHERE embedder = {}",
            hnsw_index_name(&key),
            literal(&key)
        ))
        .execute(&mut *conn)
        .await
        .map_err(sql_error)?;
        if let Ok(mut known) = self.db.vector_indexes.lock() {
            known.insert(key);
        }
        Ok(())
    }
}

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
        for (node, facts) in &updates {
            let mut sql = QueryBuilder::<Postgres>::new(format!("UPDATE index_docs SET ({FACT_COLUMNS}) = ROW("));
            push_facts(&mut sql.separated(", "), facts)?;
            sql.push(") WHERE node_id = ").push_bind(node_to_str(node));
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
        lock_counts(&mut tx).await?;
        let mut delta = CountDelta::default();
        uncount(&mut tx, &nodes, &mut delta).await?;
        sqlx::query("DELETE FROM index_docs WHERE node_id = ANY($1)")
            .bind(&nodes)
            .execute(&mut *tx)
            .await
            .map_err(sql_error)?;
        delta.apply(&mut tx).await?;
        tx.commit().await.map_err(sql_error)
    }

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        let terms = query_terms(&query.text);
        if terms.is_empty() || query.limit == 0 || query.filter.layers.is_empty() {
            return Ok(Vec::new());
        }
        let lexemes: Vec<String> = terms.iter().map(|t| term_lexeme(t)).collect();
        // The corpus totals and each query term's document count, in one round trip.
        let rows = sqlx::query(
            "SELECT NULL, docs, tokens FROM index_totals
             UNION ALL SELECT term, docs, NULL FROM index_terms WHERE term = ANY($1)",
        )
        .bind(&lexemes)
        .fetch_all(self.db.pool())
        .await
        .map_err(sql_error)?;
        let (mut total_docs, mut total_tokens) = (0_i64, 0_i64);
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        for row in &rows {
            match row.get::<Option<String>, _>(0) {
                Some(term) => {
                    counts.insert(term, row.get(1));
                }
                None => (total_docs, total_tokens) = (row.get(1), row.get::<Option<i64>, _>(2).unwrap_or(0)),
            }
        }
        // (documents holding it, its lexeme) for each chosen term, in query order.
        let mut chosen: Vec<(i64, String)> =
            lexemes.iter().map(|l| (counts.get(l).copied().unwrap_or(0), l.clone())).collect();
        if let TermSelection::Rarest(n) = query.terms {
            // Ties by the term itself, carrying its lexeme along.
            let counted = terms.iter().zip(chosen).map(|(term, (docs, lexeme))| (docs.unsigned_abs(), (term, lexeme)));
            chosen =
                rarest_terms(n, counted).into_iter().map(|(docs, (_, lexeme))| (docs.cast_signed(), lexeme)).collect();
        }
        if chosen.is_empty() || total_docs == 0 {
            return Ok(Vec::new());
        }
        let n = total_docs as f64;
        let idfs: Vec<f64> = chosen
            .iter()
            .map(|(docs, _)| {
                let hits = *docs as f64;
                let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        let avgdl = total_tokens as f64 / n;
        let chosen_lexemes: Vec<String> = chosen.into_iter().map(|(_, l)| l).collect();
        let tsquery = chosen_lexemes.iter().map(|l| format!("'{l}'")).collect::<Vec<_>>().join(" | ");
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT node_id, namespace, s.score FROM index_docs d CROSS JOIN LATERAL (
                 SELECT SUM(q.idf * (cardinality(u.positions) * (",
        );
        sql.push_bind(K1).push("::float8 + 1.0::float8)) / (cardinality(u.positions) + ");
        sql.push_bind(K1).push("::float8 * (1.0::float8 - ");
        sql.push_bind(B).push("::float8 + ").push_bind(B).push("::float8 * d.term_count / ");
        // Only the query's lexemes are unnested: `setweight` marks them and `ts_filter` keeps
        // them, both in C, a fraction of the cost of unnesting every lexeme of every match.
        sql.push_bind(avgdl).push("::float8))) AS score FROM unnest(ts_filter(setweight(d.terms, 'A', ");
        sql.push_bind(chosen_lexemes.clone()).push("::text[]), '{a}')) AS u JOIN unnest(");
        sql.push_bind(chosen_lexemes).push("::text[], ").push_bind(idfs);
        sql.push("::float8[]) AS q(lexeme, idf) ON q.lexeme = u.lexeme) AS s WHERE d.terms @@ ");
        sql.push_bind(tsquery).push("::tsquery AND ");
        push_visibility(&mut sql, &query.filter, Target::IndexDocs)?;
        sql.push(" ORDER BY s.score DESC, node_id LIMIT ").push_bind(i64::try_from(query.limit).unwrap_or(i64::MAX));
        let rows = sql.build().fetch_all(self.db.pool()).await.map_err(sql_error)?;
        let mut hits = rows
            .iter()
            .map(|row| hit(row.get(0), row.get(1), row.get::<f64, _>(2) as f32))
            .collect::<Result<Vec<_>>>()?;
        hits.sort_by(Hit::best_first);
        Ok(hits)
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
        // The same expression as the partial HNSW index, with the embedder inlined, so the
        // planner can use it; rows of other embedders are never cast, let alone compared.
        let cast = format!("::real[]::vector({dimensions})");
        let column = format!("embedding::vector({dimensions}) <=> ");
        let mut sql = QueryBuilder::<Postgres>::new(format!("SELECT node_id, namespace, {column}"));
        sql.push_bind(query.embedding.values.clone()).push(&cast);
        sql.push(format!(" FROM index_docs WHERE embedder = {} AND ", literal(&embedder_key(&query.embedding))));
        push_visibility(&mut sql, &query.filter, Target::IndexDocs)?;
        sql.push(format!(" ORDER BY {column}")).push_bind(query.embedding.values.clone()).push(&cast);
        sql.push(" LIMIT ").push_bind(i64::try_from(query.limit).unwrap_or(i64::MAX));
        let rows = sql.build().fetch_all(self.db.pool()).await.map_err(sql_error)?;
        // Cosine similarity from cosine distance.
        let mut hits = rows
            .iter()
            .map(|row| hit(row.get(0), row.get(1), (1.0 - row.get::<f64, _>(2)) as f32))
            .collect::<Result<Vec<_>>>()?;
        hits.sort_by(Hit::best_first);
        Ok(hits)
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        // The index holds no words, only their hashes: a needle is "in" the index while a
        // document holds every one of its hashed tokens, stemmed or (written by Arbor 0.1's
        // analyzer) as written.
        let tokens = tokenize(needle);
        if tokens.is_empty() {
            return Ok(false);
        }
        let either = |t: &String| format!("('{}' | '{}')", term_lexeme(&stem(t)), term_lexeme(t));
        let tsquery = tokens.iter().map(either).collect::<Vec<_>>().join(" & ");
        let found: bool = sqlx::query("SELECT EXISTS (SELECT 1 FROM index_docs WHERE terms @@ $1::tsquery)")
            .bind(tsquery)
            .fetch_one(self.db.pool())
            .await
            .map_err(sql_error)?
            .get(0);
        Ok(found)
    }

    async fn count(&self) -> Result<usize> {
        let n: i64 =
            sqlx::query("SELECT COUNT(*) FROM index_docs").fetch_one(self.db.pool()).await.map_err(sql_error)?.get(0);
        usize::try_from(n).map_err(|e| Error::backend(BACKEND, e))
    }

    async fn clear(&self) -> Result<()> {
        let mut tx = self.db.pool().begin().await.map_err(sql_error)?;
        lock_counts(&mut tx).await?;
        // TRUNCATE gives the tables new files: the old ones, and every word-free hash in them,
        // are deleted at commit.
        for statement in ["TRUNCATE index_docs, index_terms", "UPDATE index_totals SET docs = 0, tokens = 0"] {
            sqlx::query(statement).execute(&mut *tx).await.map_err(sql_error)?;
        }
        tx.commit().await.map_err(sql_error)
    }
}

fn hit(node: String, namespace: String, score: f32) -> Result<Hit> {
    Ok(Hit {
        id: node_from_str(&node)?,
        namespace: Namespace::parse(&namespace).map_err(|e| corrupt("index document", &node, e))?,
        score,
    })
}
