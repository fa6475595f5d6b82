//! [`LanceIndex`]: the search-index port on LanceDB. One `docs` table holds every node's filter
//! columns, its text and its analyzed terms (full text, LanceDB's inverted index over terms
//! Arbor's own analyzer produced, so every backend searches the same words); one
//! `vectors_<embedder>_<dims>` table per embedder holds the filter columns again with the
//! vectors, so a vector search filters inside the query too. Every search is pre-filtered by
//! [`predicate`](crate::filter::predicate). Every table gets a scalar index on `id` with its
//! first write, which is how writes find the rows they replace. Searches keep their table
//! handles open; the connection checks each read against the newest version on disk, so
//! another process's commits are seen at once.
//!
//! Writes land as new fragments; every [`MAINTAIN_EVERY_WRITES`] writes (and on
//! [`optimize`](SearchIndex::optimize)) the index compacts them, folds them into the inverted
//! index, and gives a vector table that has grown past [`ANN_MIN_ROWS`] an IVF-PQ index, whose
//! candidates are re-ranked by exact distance. Rows not yet in an index are searched exactly,
//! so maintenance changes speed, never what is admitted.
//!
//! Removing really removes: deleted rows are compacted out of the data files, the inverted
//! index is rebuilt without them, and every older version of the dataset is pruned, so no file
//! under the dataset directory keeps a removed document's words.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::text::{index_tokens, query_terms};
use arbor_domain::visibility::NodeFacts;
use arbor_ports::rows::{FactsRow, node_from_str, node_to_str};
use arbor_ports::{
    EmbedderId, Error, Hit, IndexCapabilities, IndexDoc, Result, SearchIndex, TermSelection, TextQuery, VectorQuery,
    rarest_terms,
};
use arrow_array::types::Float32Type;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use futures::TryStreamExt;
use lancedb::index::Index;
use lancedb::index::scalar::{BTreeIndexBuilder, FtsIndexBuilder, FullTextSearchQuery};
use lancedb::index::vector::IvfPqIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::{CompactionOptions, Duration, OptimizeAction, OptimizeOptions};
use lancedb::{Connection, DistanceType, Table};
use tokio::sync::Mutex;

use crate::filter::{literal, predicate};

const BACKEND: &str = "lance";
const DOCS: &str = "docs";
const VECTORS_PREFIX: &str = "vectors_";
/// How many documents a term's document frequency is counted up to, for `Rarest` term
/// selection: beyond this a term is common, and common terms tie by the term itself.
const DOCUMENT_FREQUENCY_CAP: usize = 10_000;
/// Upserts and fact changes between two automatic maintenance passes: each write is a new
/// fragment (and a new version), and searches slow down as they pile up.
pub const MAINTAIN_EVERY_WRITES: usize = 64;
/// How many rows a vector table holds, by default, before it is given an approximate (IVF-PQ)
/// index; below this an exact scan is about as fast and needs no training.
pub const ANN_MIN_ROWS: usize = 50_000;
/// Candidates per wanted hit an approximate search re-ranks by exact distance.
const ANN_REFINE_FACTOR: u32 = 10;
/// Rows per data file compaction aims for: fragments this large are left as they are, so
/// past this size maintenance rewrites only what was written since (below it, the whole
/// small table).
const TARGET_ROWS_PER_FRAGMENT: usize = 1 << 17;

fn lance_error(error: lancedb::Error) -> Error {
    Error::backend(BACKEND, error)
}

fn arrow_error(error: arrow_schema::ArrowError) -> Error {
    Error::backend(BACKEND, error)
}

/// The search index on a LanceDB dataset directory.
#[derive(Clone)]
pub struct LanceIndex {
    db: Connection,
    dir: PathBuf,
    /// One writer at a time in this process: LanceDB commits are optimistic, and the index's
    /// read-modify-write steps (replace a document's vectors, rebuild after a removal) must not
    /// interleave. Holds the writes since the last maintenance pass.
    writes: Arc<Mutex<usize>>,
    /// Rows a vector table holds before maintenance gives it an approximate index.
    ann_min_rows: usize,
    /// Open table handles by name, for searches. Opening a table lists the directory and
    /// reads its manifest and schema; a kept handle only checks, at each read, whether a newer
    /// version is on disk (the connection's read consistency interval is zero), so it still
    /// sees other processes' writes.
    open: Arc<std::sync::Mutex<BTreeMap<String, Table>>>,
}

/// The most the connection's cache of opened indices (IVF partitions, full-text posting
/// blocks, scalar index pages) may hold, by Lance's own weighing of its entries: a budget for
/// that cache, not a bound on the process. Lance's default is 6 GiB; with it a million
/// memories took the bench process to 7.7 GiB (docs/performance.md has what the bound does).
/// What falls out is read again from the files, which the page cache keeps warm, so a bound
/// costs time on cold parts, never correctness.
const INDEX_CACHE_BYTES: usize = 512 * 1024 * 1024;

/// The most the connection's cache of table metadata (manifests, fragment and file
/// metadata) may hold; Lance's default is 1 GiB, far more than Arbor's few tables need.
const METADATA_CACHE_BYTES: usize = 128 * 1024 * 1024;

impl std::fmt::Debug for LanceIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanceIndex").field("dir", &self.dir).finish()
    }
}

impl LanceIndex {
    /// Opens (or starts) the index in `dir`, a directory LanceDB owns.
    pub async fn open(dir: &Path) -> Result<LanceIndex> {
        std::fs::create_dir_all(dir).map_err(|e| Error::backend(BACKEND, e))?;
        let uri = dir.to_str().ok_or_else(|| Error::invalid("lance directory", "the path is not UTF-8"))?;
        let session = lancedb::Session::new(
            INDEX_CACHE_BYTES,
            METADATA_CACHE_BYTES,
            Arc::new(lancedb::ObjectStoreRegistry::default()),
        );
        let db = lancedb::connect(uri)
            .session(Arc::new(session))
            .read_consistency_interval(std::time::Duration::ZERO)
            .execute()
            .await
            .map_err(lance_error)?;
        Ok(LanceIndex {
            db,
            dir: dir.to_owned(),
            writes: Arc::new(Mutex::new(0)),
            ann_min_rows: ANN_MIN_ROWS,
            open: Arc::default(),
        })
    }

    /// Gives vector tables their approximate index once they hold `rows` rows (default
    /// [`ANN_MIN_ROWS`]); training needs at least 256.
    pub fn with_ann_min_rows(mut self, rows: usize) -> LanceIndex {
        self.ann_min_rows = rows.max(256);
        self
    }

    /// Whether `embedder`'s vectors have their approximate index yet.
    pub async fn has_ann_index(&self, embedder: &EmbedderId) -> Result<bool> {
        match self.table(&vector_table_name(embedder)).await? {
            Some(vectors) => Self::has_index_on(&vectors, "vector").await,
            None => Ok(false),
        }
    }

    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The table named `name` for a search: its kept handle if there is one.
    async fn table(&self, name: &str) -> Result<Option<Table>> {
        match self.cached(name) {
            Some(table) => Ok(Some(table)),
            None => self.current_table(name).await,
        }
    }

    /// The table named `name` for a write, looked up and opened anew (and kept for searches).
    /// A writer never commits through a kept handle: were the table dropped and recreated by
    /// another process meanwhile, the handle would describe a dataset that is gone.
    async fn current_table(&self, name: &str) -> Result<Option<Table>> {
        let names = self.table_names().await?;
        if !names.iter().any(|n| n == name) {
            return Ok(None);
        }
        Ok(Some(self.keep(self.db.open_table(name).execute().await.map_err(lance_error)?)))
    }

    fn cached(&self, name: &str) -> Option<Table> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(name).cloned()
    }

    /// Keeps `table`'s handle for the searches that follow, in place of any older one.
    fn keep(&self, table: Table) -> Table {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(table.name().to_owned(), table.clone());
        table
    }

    /// Drops the table named `name`, and its cached handle (forgotten after the drop too: a
    /// search may have reopened it meanwhile).
    async fn drop_table(&self, name: &str) -> Result<()> {
        self.forget_handle(name);
        let dropped = self.db.drop_table(name, &[]).await.map_err(lance_error);
        self.forget_handle(name);
        dropped
    }

    /// Forgets the cached handle of `name`: the next call reopens it (or finds it gone).
    fn forget_handle(&self, name: &str) {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(name);
    }

    async fn table_names(&self) -> Result<Vec<String>> {
        #[allow(deprecated)]
        let names = self.db.table_names().execute().await.map_err(lance_error)?;
        Ok(names)
    }

    async fn vector_tables(&self) -> Result<Vec<Table>> {
        let mut tables = Vec::new();
        for name in self.table_names().await?.into_iter().filter(|n| n.starts_with(VECTORS_PREFIX)) {
            if let Some(table) = self.current_table(&name).await? {
                tables.push(table);
            }
        }
        Ok(tables)
    }

    async fn table_or_create(&self, name: &str, schema: SchemaRef) -> Result<Table> {
        match self.current_table(name).await? {
            Some(table) => Ok(table),
            None => Ok(self.keep(self.db.create_empty_table(name, schema).execute().await.map_err(lance_error)?)),
        }
    }

    /// Builds the inverted index over `terms` (replacing any): whitespace-separated terms as
    /// Arbor's analyzer wrote them, taken as they are.
    async fn build_text_index(table: &Table) -> Result<()> {
        let params = FtsIndexBuilder::default()
            .base_tokenizer("whitespace".to_owned())
            .lower_case(false)
            .stem(false)
            .remove_stop_words(false)
            .ascii_folding(false)
            .with_position(false)
            .max_token_length(None);
        table.create_index(&["terms"], Index::FTS(params)).replace(true).execute().await.map_err(lance_error)
    }

    async fn has_index_on(table: &Table, column: &str) -> Result<bool> {
        Ok(Self::indexed_columns(table).await?.iter().any(|c| c == column))
    }

    async fn indexed_columns(table: &Table) -> Result<Vec<String>> {
        let indices = table.list_indices().await.map_err(lance_error)?;
        Ok(indices.into_iter().flat_map(|i| i.columns).collect())
    }

    /// Gives a table that has rows the docs table's inverted index over `terms` (searches need
    /// it) and its scalar index on `id` if it lacks them. Every write finds rows by id:
    /// `merge_insert` joins on it, and replacing or removing a document deletes by it. Without
    /// the index each of those scans the whole `id` column, so building a large index by
    /// batches costs the square of its size; with it, only rows written since the last
    /// maintenance pass are scanned (maintenance folds them into the index). The `id` index is
    /// a speed-up only, so failing to build it (another process building it at the same
    /// moment, say) is logged and left to the next write; a store written before it existed
    /// gets it on its next write.
    async fn ensure_indices(table: &Table, text: bool) -> Result<()> {
        let indexed = Self::indexed_columns(table).await?;
        if text && !indexed.iter().any(|c| c == "terms") {
            Self::build_text_index(table).await?;
        }
        if !indexed.iter().any(|c| c == "id") {
            let btree = Index::BTree(BTreeIndexBuilder::default());
            if let Err(error) = table.create_index(&["id"], btree).execute().await {
                tracing::warn!(%error, table = table.name(), "could not index `id` yet; the next write tries again");
            }
        }
        Ok(())
    }

    /// Counts one (committed) write, and runs a maintenance pass when enough have piled up.
    /// A pass that fails is logged, not returned: the write it follows has committed, and
    /// the next pass (or [`optimize`](SearchIndex::optimize), which does return errors)
    /// tries again; searches stay correct without it, only slower.
    /// [`upsert`](SearchIndex::upsert) with the write lock held: the last document per id
    /// wins, as if upserted one after another.
    async fn upsert_holding(&self, writes: &mut usize, docs: Vec<IndexDoc>) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let mut latest: BTreeMap<String, &IndexDoc> = BTreeMap::new();
        for doc in &docs {
            latest.insert(node_to_str(&doc.id), doc);
        }
        let docs: Vec<&IndexDoc> = latest.into_values().collect();
        let table = self.table_or_create(DOCS, docs_schema()).await?;
        let mut merge = table.merge_insert(&["id"]);
        merge.when_matched_update_all(None).when_not_matched_insert_all();
        merge.execute(reader(docs_batch(&docs)?)).await.map_err(lance_error)?;
        Self::ensure_indices(&table, true).await?;
        // A document's vector lives in its embedder's table only: any other is dropped.
        let ids: Vec<NodeId> = docs.iter().map(|d| d.id.clone()).collect();
        for vectors in self.vector_tables().await? {
            vectors.delete(ids_predicate(&ids).as_str()).await.map_err(lance_error)?;
        }
        let mut by_embedder: BTreeMap<EmbedderId, Vec<&IndexDoc>> = BTreeMap::new();
        for doc in docs.iter().filter(|d| d.embedding.is_some()) {
            let embedder = doc.embedding.as_ref().map(|e| e.embedder.clone()).expect("filtered");
            if doc.embedding.as_ref().is_some_and(|e| e.values.len() != embedder.dimensions as usize) {
                return Err(Error::invalid("embedding", format!("{} has a vector of the wrong length", doc.id)));
            }
            by_embedder.entry(embedder).or_default().push(doc);
        }
        for (embedder, group) in by_embedder {
            let vectors =
                self.table_or_create(&vector_table_name(&embedder), vectors_schema(embedder.dimensions)).await?;
            vectors.add(vectors_batch(&group, embedder.dimensions)?).execute().await.map_err(lance_error)?;
            Self::ensure_indices(&vectors, false).await?;
        }
        self.wrote(writes).await;
        Ok(())
    }

    async fn wrote(&self, since_maintenance: &mut usize) {
        *since_maintenance += 1;
        if *since_maintenance >= MAINTAIN_EVERY_WRITES {
            *since_maintenance = 0;
            if let Err(error) = self.maintain().await {
                tracing::warn!(%error, dir = %self.dir.display(), "LanceDB index maintenance failed; retried later");
            }
        }
    }

    /// Compacts every table's small fragments, folds new rows into the indices, gives large
    /// vector tables an approximate index, and prunes versions older than a minute (younger
    /// ones may still be read by a search under way; a removal prunes them all, as it must).
    /// Call with the write lock held.
    async fn maintain(&self) -> Result<()> {
        let Some(docs) = self.current_table(DOCS).await? else {
            return Ok(());
        };
        Self::compact_and_reindex(&docs).await?;
        for vectors in self.vector_tables().await? {
            // Compacted first, so the new index is not rewritten for the compaction at once.
            Self::compact_and_reindex(&vectors).await?;
            if !Self::has_index_on(&vectors, "vector").await?
                && vectors.count_rows(None).await.map_err(lance_error)? >= self.ann_min_rows
            {
                let ivf_pq = IvfPqIndexBuilder::default().distance_type(DistanceType::Cosine);
                vectors.create_index(&["vector"], Index::IvfPq(ivf_pq)).execute().await.map_err(lance_error)?;
            }
        }
        Ok(())
    }

    async fn compact_and_reindex(table: &Table) -> Result<()> {
        let options =
            CompactionOptions { target_rows_per_fragment: TARGET_ROWS_PER_FRAGMENT, ..CompactionOptions::default() };
        table.optimize(OptimizeAction::Compact { options, remap_options: None }).await.map_err(lance_error)?;
        table.optimize(OptimizeAction::Index(OptimizeOptions::default())).await.map_err(lance_error)?;
        let a_minute = Duration::try_minutes(1).expect("a minute is a valid duration");
        table
            .optimize(OptimizeAction::Prune {
                older_than: Some(a_minute),
                delete_unverified: Some(false),
                error_if_tagged_old_versions: Some(false),
            })
            .await
            .map_err(lance_error)?;
        Ok(())
    }

    /// Rewrites the data files without deleted rows, rebuilds the inverted index if asked, and
    /// prunes every older version: nothing removed stays on disk. For a table with rows left.
    async fn purge(table: &Table, rebuild_text_index: bool) -> Result<()> {
        let options = CompactionOptions {
            materialize_deletions: true,
            materialize_deletions_threshold: 0.0,
            ..CompactionOptions::default()
        };
        table.optimize(OptimizeAction::Compact { options, remap_options: None }).await.map_err(lance_error)?;
        if rebuild_text_index {
            Self::build_text_index(table).await?;
        }
        table
            .optimize(OptimizeAction::Prune {
                older_than: Some(Duration::zero()),
                delete_unverified: Some(true),
                error_if_tagged_old_versions: Some(false),
            })
            .await
            .map_err(lance_error)?;
        Ok(())
    }

    /// Whether any file under the dataset directory holds `needle`'s bytes.
    pub fn files_contain(&self, needle: &str) -> Result<bool> {
        fn walk(dir: &Path, needle: &[u8]) -> std::io::Result<bool> {
            for entry in std::fs::read_dir(dir)? {
                let path = entry?.path();
                if path.is_dir() {
                    if walk(&path, needle)? {
                        return Ok(true);
                    }
                } else if std::fs::read(&path)?.windows(needle.len()).any(|w| w == needle) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        if needle.is_empty() || !self.dir.exists() {
            return Ok(false);
        }
        walk(&self.dir, needle.as_bytes()).map_err(|e| Error::backend(BACKEND, e))
    }
}

/// The name of the table holding `embedder`'s vectors.
fn vector_table_name(embedder: &EmbedderId) -> String {
    let name: String =
        embedder.name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("{VECTORS_PREFIX}{name}_{}", embedder.dimensions)
}

fn fact_fields() -> Vec<Field> {
    vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("namespace", DataType::Utf8, false),
        Field::new("node_kind", DataType::Utf8, false),
        Field::new("category", DataType::Utf8, false),
        Field::new("tree_id", DataType::Utf8, false),
        Field::new("kind", DataType::Utf8, true),
        Field::new("state", DataType::Utf8, false),
        Field::new("valid_from", DataType::Int64, true),
        Field::new("valid_to", DataType::Int64, true),
        Field::new("known_from", DataType::Int64, true),
        Field::new("known_until", DataType::Int64, true),
        Field::new("expires_at", DataType::Int64, true),
        Field::new("sensitivity", DataType::Int64, false),
        Field::new("time_start", DataType::Int64, false),
        Field::new("time_end", DataType::Int64, false),
    ]
}

fn docs_schema() -> SchemaRef {
    let mut fields = fact_fields();
    fields.push(Field::new("text", DataType::Utf8, false));
    fields.push(Field::new("terms", DataType::Utf8, false));
    Arc::new(Schema::new(fields))
}

fn vector_field(dimensions: u32) -> Field {
    Field::new(
        "vector",
        DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dimensions as i32),
        false,
    )
}

fn vectors_schema(dimensions: u32) -> SchemaRef {
    let mut fields = fact_fields();
    fields.push(vector_field(dimensions));
    Arc::new(Schema::new(fields))
}

/// The filter columns of `rows`, in `fact_fields` order.
fn fact_columns(rows: &[(&NodeId, &NodeFacts)]) -> Result<Vec<ArrayRef>> {
    let facts: Vec<(String, FactsRow)> =
        rows.iter().map(|(id, facts)| Ok((node_to_str(id), FactsRow::from_facts(facts)?))).collect::<Result<_>>()?;
    let strings = |f: &dyn Fn(&(String, FactsRow)) -> &str| -> ArrayRef {
        Arc::new(StringArray::from(facts.iter().map(f).collect::<Vec<_>>()))
    };
    let times = |f: &dyn Fn(&FactsRow) -> Option<i64>| -> ArrayRef {
        Arc::new(Int64Array::from(facts.iter().map(|(_, row)| f(row)).collect::<Vec<_>>()))
    };
    Ok(vec![
        strings(&|(id, _)| id),
        strings(&|(_, row)| &row.namespace),
        strings(&|(_, row)| &row.node_kind),
        strings(&|(_, row)| &row.category),
        strings(&|(_, row)| &row.tree_id),
        Arc::new(StringArray::from(facts.iter().map(|(_, row)| row.kind.as_deref()).collect::<Vec<_>>())),
        strings(&|(_, row)| &row.state),
        times(&|row| row.valid_from),
        times(&|row| row.valid_to),
        times(&|row| row.known_from),
        times(&|row| row.known_until),
        times(&|row| row.expires_at),
        times(&|row| Some(row.sensitivity)),
        times(&|row| Some(row.time_start)),
        times(&|row| Some(row.time_end)),
    ])
}

fn docs_batch(docs: &[&IndexDoc]) -> Result<RecordBatch> {
    let rows: Vec<(&NodeId, &NodeFacts)> = docs.iter().map(|d| (&d.id, &d.facts)).collect();
    let mut columns = fact_columns(&rows)?;
    columns.push(Arc::new(StringArray::from(docs.iter().map(|d| d.text.as_str()).collect::<Vec<_>>())));
    columns.push(Arc::new(StringArray::from(docs.iter().map(|d| index_tokens(&d.text).join(" ")).collect::<Vec<_>>())));
    RecordBatch::try_new(docs_schema(), columns).map_err(arrow_error)
}

fn vectors_batch(docs: &[&IndexDoc], dimensions: u32) -> Result<RecordBatch> {
    let rows: Vec<(&NodeId, &NodeFacts)> = docs.iter().map(|d| (&d.id, &d.facts)).collect();
    let mut columns = fact_columns(&rows)?;
    let vectors = docs.iter().map(|d| {
        let values = d.embedding.as_ref().map(|e| e.values.clone()).unwrap_or_default();
        Some(values.into_iter().map(Some).collect::<Vec<_>>())
    });
    let list = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(vectors, dimensions as i32);
    columns.push(Arc::new(list));
    RecordBatch::try_new(vectors_schema(dimensions), columns).map_err(arrow_error)
}

/// `batch` (rows of a table, every column) with its filter columns set to each row's facts in
/// `facts` (by id); every row's id must be there.
fn with_facts(batch: &RecordBatch, facts: &BTreeMap<String, &NodeFacts>) -> Result<RecordBatch> {
    let ids = batch
        .column_by_name("id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| Error::backend(BACKEND, "a stored row has no string `id` column"))?;
    let mut ids_and_facts = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let id = node_from_str(ids.value(row))?;
        let facts = facts
            .get(ids.value(row))
            .copied()
            .ok_or_else(|| Error::backend(BACKEND, format!("{id} was read for a fact change it is not part of")))?;
        ids_and_facts.push((id, facts));
    }
    let rows: Vec<(&NodeId, &NodeFacts)> = ids_and_facts.iter().map(|(id, facts)| (id, *facts)).collect();
    let fresh = fact_columns(&rows)?;
    let fact_names: Vec<String> = fact_fields().iter().map(|f| f.name().clone()).collect();
    // Column by column, by name: a filter column gets its new values, the rest are kept.
    let schema = batch.schema();
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, field)| match fact_names.iter().position(|name| name == field.name()) {
            Some(fact) => fresh[fact].clone(),
            None => batch.column(i).clone(),
        })
        .collect();
    RecordBatch::try_new(schema, columns).map_err(arrow_error)
}

/// Runs `query` and gathers its result batches.
async fn collect(query: impl ExecutableQuery) -> Result<Vec<RecordBatch>> {
    query.execute().await.map_err(lance_error)?.try_collect().await.map_err(lance_error)
}

fn reader(batch: RecordBatch) -> Box<dyn arrow_array::RecordBatchReader + Send> {
    let schema = batch.schema();
    Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema))
}

/// `id IN (…)` for `ids`.
fn ids_predicate(ids: &[NodeId]) -> String {
    let quoted: Vec<String> = ids.iter().map(|id| literal(&node_to_str(id))).collect();
    format!("id IN ({})", quoted.join(", "))
}

/// (id, namespace, score) of every row of `batches`, reading the score from `score_column`
/// through `score`.
fn hits(batches: &[RecordBatch], score_column: &str, score: impl Fn(f32) -> f32) -> Result<Vec<Hit>> {
    let mut out = Vec::new();
    for batch in batches {
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| Error::backend(BACKEND, format!("a search result has no `{name}` column")))
        };
        let ids = column("id")?.as_any().downcast_ref::<StringArray>().cloned();
        let namespaces = column("namespace")?.as_any().downcast_ref::<StringArray>().cloned();
        let scores = column(score_column)?.as_any().downcast_ref::<Float32Array>().cloned();
        let (Some(ids), Some(namespaces), Some(scores)) = (ids, namespaces, scores) else {
            return Err(Error::backend(BACKEND, "a search result column has an unexpected type"));
        };
        for row in 0..batch.num_rows() {
            let namespace = arbor_domain::namespace::Namespace::parse(namespaces.value(row))
                .map_err(|e| Error::backend(BACKEND, format!("stored namespace: {e}")))?;
            out.push(Hit { id: node_from_str(ids.value(row))?, namespace, score: score(scores.value(row)) });
        }
    }
    // Best first; equal scores by id, so every run orders ties the same way.
    out.sort_by(Hit::best_first);
    Ok(out)
}

impl LanceIndex {
    /// Runs `search` on the table named `name`, or answers nothing if there is no such table.
    /// A cached handle that fails is reopened and tried once more: another process may have
    /// dropped or recreated the table since it was opened.
    async fn on_table<T: Default, F, Fut>(&self, name: &str, search: F) -> Result<T>
    where
        F: Fn(Table) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let was_cached = self.cached(name).is_some();
        let Some(table) = self.table(name).await? else {
            return Ok(T::default());
        };
        match search(table).await {
            Err(error) if was_cached => {
                tracing::debug!(%error, table = name, "a cached LanceDB table handle failed; reopening it");
                self.forget_handle(name);
                match self.table(name).await? {
                    Some(table) => search(table).await,
                    None => Ok(T::default()),
                }
            }
            outcome => outcome,
        }
    }

    async fn text_hits(docs: Table, query: &TextQuery) -> Result<Vec<Hit>> {
        let mut terms = query_terms(&query.text);
        if let TermSelection::Rarest(n) = query.terms {
            let mut counted = Vec::with_capacity(terms.len());
            for term in terms {
                counted.push((Self::document_frequency(&docs, &term).await? as u64, term));
            }
            terms = rarest_terms(n, counted).into_iter().map(|(_, term)| term).collect();
        }
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let search = FullTextSearchQuery::new(terms.join(" "));
        let batches = docs
            .query()
            .full_text_search(search)
            .only_if(predicate(&query.filter)?)
            // The score is named, not left for Lance to add: adding it logs a deprecation
            // warning on every search, which the CLI would print.
            .select(Select::columns(&["id", "namespace", "_score"]))
            .limit(query.limit);
        hits(&collect(batches).await?, "_score", |score| score)
    }

    async fn vector_hits(vectors: Table, query: &VectorQuery) -> Result<Vec<Hit>> {
        let nearest = vectors
            .query()
            .nearest_to(query.embedding.values.as_slice())
            .map_err(lance_error)?
            .column("vector")
            .distance_type(DistanceType::Cosine)
            // Used only once the table has its approximate index: the candidates are re-ranked
            // by exact distance, so scores are exact cosine either way.
            .refine_factor(ANN_REFINE_FACTOR)
            .only_if(predicate(&query.filter)?)
            .select(Select::columns(&["id", "namespace", "_distance"]))
            .limit(query.limit);
        // Cosine distance is 1 - similarity.
        hits(&collect(nearest).await?, "_distance", |distance| 1.0 - distance)
    }

    /// How many documents hold `term` (counted up to [`DOCUMENT_FREQUENCY_CAP`]).
    async fn document_frequency(docs: &Table, term: &str) -> Result<usize> {
        let holding = docs
            .query()
            .full_text_search(FullTextSearchQuery::new(term.to_owned()))
            .select(Select::columns(&["id", "_score"]))
            .limit(DOCUMENT_FREQUENCY_CAP);
        Ok(collect(holding).await?.iter().map(RecordBatch::num_rows).sum())
    }
}

#[async_trait]
impl SearchIndex for LanceIndex {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> IndexCapabilities {
        IndexCapabilities { full_text: true, vectors: true }
    }

    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        let mut writes = self.writes.lock().await;
        self.upsert_holding(&mut writes, docs).await
    }

    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        let mut writes = self.writes.lock().await;
        let ids: Vec<NodeId> = docs.iter().map(|d| d.id.clone()).collect();
        let mut held = std::collections::BTreeSet::new();
        if let Some(table) = self.current_table(DOCS).await?
            && !ids.is_empty()
        {
            for batch in collect(table.query().only_if(ids_predicate(&ids))).await? {
                let column = batch
                    .column_by_name("id")
                    .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                    .ok_or_else(|| Error::backend(BACKEND, "a stored row has no string `id` column"))?;
                held.extend((0..batch.num_rows()).map(|row| column.value(row).to_owned()));
            }
        }
        let missing = docs.into_iter().filter(|d| !held.contains(&node_to_str(&d.id))).collect();
        self.upsert_holding(&mut writes, missing).await
    }

    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let mut writes = self.writes.lock().await;
        // The last facts per id win, as if set one after another.
        let latest: BTreeMap<String, &NodeFacts> = updates.iter().map(|(id, facts)| (node_to_str(id), facts)).collect();
        let ids: Vec<NodeId> = updates.iter().map(|(id, _)| id.clone()).collect();
        let mut tables: Vec<Table> = self.current_table(DOCS).await?.into_iter().collect();
        tables.extend(self.vector_tables().await?);
        // Each table's rows for these ids, read, given their new facts and merged back: one
        // new version per table, however many ids change.
        for table in &tables {
            let rows = collect(table.query().only_if(ids_predicate(&ids))).await?;
            let rewritten: Vec<RecordBatch> =
                rows.iter().filter(|b| b.num_rows() > 0).map(|b| with_facts(b, &latest)).collect::<Result<_>>()?;
            let Some(first) = rewritten.first() else {
                continue;
            };
            let schema = first.schema();
            let source = RecordBatchIterator::new(rewritten.into_iter().map(Ok), schema);
            let mut merge = table.merge_insert(&["id"]);
            merge.when_matched_update_all(None);
            merge.execute(Box::new(source)).await.map_err(lance_error)?;
        }
        self.wrote(&mut writes).await;
        Ok(())
    }

    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let _writes = self.writes.lock().await;
        let condition = ids_predicate(ids);
        let mut tables: Vec<(Table, bool)> = self.current_table(DOCS).await?.into_iter().map(|t| (t, true)).collect();
        tables.extend(self.vector_tables().await?.into_iter().map(|t| (t, false)));
        for (table, has_text_index) in tables {
            table.delete(condition.as_str()).await.map_err(lance_error)?;
            if table.count_rows(None).await.map_err(lance_error)? == 0 {
                // An emptied table is dropped whole: an index over no rows would still be a
                // file, and could keep the removed words.
                self.drop_table(table.name()).await?;
            } else {
                Self::purge(&table, has_text_index).await?;
            }
        }
        Ok(())
    }

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        self.on_table(DOCS, |docs| Self::text_hits(docs, query)).await
    }

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        let embedder = &query.embedding.embedder;
        if query.embedding.values.len() != embedder.dimensions as usize {
            return Err(Error::invalid("embedding", "the query vector's length is not its embedder's dimension"));
        }
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        self.on_table(&vector_table_name(embedder), |vectors| Self::vector_hits(vectors, query)).await
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        let holding = format!("strpos(text, {}) > 0", literal(needle));
        let held = self
            .on_table(DOCS, |docs| {
                let holding = holding.clone();
                async move { docs.count_rows(Some(holding)).await.map_err(lance_error) }
            })
            .await?;
        if held > 0 {
            return Ok(true);
        }
        // Older versions and index files too: anything the dataset keeps on disk.
        self.files_contain(needle)
    }

    async fn count(&self) -> Result<usize> {
        self.on_table(DOCS, |docs| async move { docs.count_rows(None).await.map_err(lance_error) }).await
    }

    async fn clear(&self) -> Result<()> {
        let mut writes = self.writes.lock().await;
        for name in self.table_names().await? {
            self.drop_table(&name).await?;
        }
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
        *writes = 0;
        Ok(())
    }

    async fn optimize(&self) -> Result<()> {
        let mut writes = self.writes.lock().await;
        self.maintain().await?;
        *writes = 0;
        Ok(())
    }
}
