//! The search index port: a rebuildable projection of node text and vectors, searched inside
//! a visibility filter.

use std::fmt;

use arbor_domain::id::NodeId;
use arbor_domain::namespace::Namespace;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// BM25's term-frequency saturation, as SQLite's FTS5 fixes it: every full-text backend ranks
/// with FTS5's constants, so the same question ranks alike on every backend.
pub const BM25_K1: f64 = 1.2;
/// BM25's document-length normalization, as FTS5 fixes it (see [`BM25_K1`]).
pub const BM25_B: f64 = 0.75;

/// Which embedding model produced a vector, and its dimension. Vectors from different
/// embedders are never compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EmbedderId {
    pub name: String,
    pub dimensions: u32,
}

impl fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}d", self.name, self.dimensions)
    }
}

/// A vector with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embedding {
    pub embedder: EmbedderId,
    pub values: Vec<f32>,
}

/// One node as the index holds it: the filter columns, the searchable text, an optional vector.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    pub id: NodeId,
    pub facts: NodeFacts,
    pub text: String,
    pub embedding: Option<Embedding>,
}

/// A search hit. Higher scores are better; scales differ between backends and channels, so
/// only the order is comparable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub id: NodeId,
    /// The namespace the document is filed in (a node never moves), so a caller can tell
    /// which layer of its chain a hit belongs to before reading it.
    pub namespace: Namespace,
    pub score: f32,
}

impl Hit {
    /// The order a search returns hits in: see [`best_first`].
    pub fn best_first(a: &Hit, b: &Hit) -> std::cmp::Ordering {
        best_first((a.score, &a.id), (b.score, &b.id))
    }
}

/// The contract's order of results (and of a backend's candidates before its cut-off): best
/// score first, equal scores by [`NodeId`]'s order, so every run and every backend orders ties
/// alike.
pub fn best_first(a: (f32, &NodeId), b: (f32, &NodeId)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1))
}

#[derive(Debug, Clone, PartialEq)]
pub struct TextQuery {
    pub filter: VisibilityFilter,
    pub text: String,
    pub limit: usize,
    pub terms: TermSelection,
}

/// Which of a query's terms a full-text search matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TermSelection {
    /// Every term: a question, where each word the asker chose matters.
    #[default]
    All,
    /// Only the `n` terms that the fewest indexed documents hold, ties broken by the term;
    /// terms no document holds are passed over. For "texts like this one" lookups, where
    /// common words cost the most (the longest posting lists) and say the least. The counts
    /// are over the whole index, so they may change which admitted documents match, never
    /// admit one the filter refuses.
    Rarest(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct VectorQuery {
    pub filter: VisibilityFilter,
    pub embedding: Embedding,
    pub limit: usize,
}

/// What an index can do. Checks that need a capability are skipped where it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexCapabilities {
    pub full_text: bool,
    pub vectors: bool,
}

/// Full-text and vector search over leaves and summaries [design §projections: a rebuildable projection].
///
/// # Contract
///
/// - **Filter first.** Searches evaluate `filter` inside the query — never search everything
///   and filter afterwards — and return only documents [`VisibilityFilter::admits`] admits.
/// - **Replace by id.** [`upsert`](Self::upsert) replaces any document with the same id, text,
///   facts and vector alike ([`insert_missing`](Self::insert_missing) never does); [`set_facts`](Self::set_facts) changes only the filter columns of
///   documents that exist and ignores the rest.
/// - **Really remove.** After [`remove`](Self::remove) returns, no search returns the ids and
///   [`contains_text`](Self::contains_text) finds none of their text, in any file or version the
///   backend keeps.
/// - **One embedder per comparison.** A vector query compares only with vectors from the same
///   [`EmbedderId`]; documents without such a vector are not vector hits.
/// - **Terms.** A text query searches for [`query_terms`](arbor_domain::text::query_terms) of
///   its text (tokens without stopwords), matching documents that hold any of them, tokenized
///   with [`tokenize`](arbor_domain::text::tokenize).
/// - **Ranking.** Text hits are ordered by relevance (BM25 or equivalent: every query term
///   counts, rarer terms more); vector hits by cosine similarity, most similar first; results
///   are returned best first with equal scores ordered by id. A backend may answer vector
///   queries approximately past a size it documents (and may then miss a near neighbour),
///   never admitting what the filter refuses. Which of several equally scored
///   documents make a cut-off may differ between backends, but is the same on every run.
/// - **Fresh.** A search sees every change committed before it began, by any process. Inside
///   [`one_read`](crate::one_read) the read as a whole counts: every search of it sees what was
///   committed before the read began, and may answer from the same state as the read's
///   earlier searches (a backend that must ask a server what changed asks once per read).
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait]
pub trait SearchIndex: Send + Sync + fmt::Debug {
    fn backend(&self) -> &'static str;

    fn capabilities(&self) -> IndexCapabilities;

    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()>;

    /// Adds the documents whose ids the index does not hold, as [`upsert`](Self::upsert)
    /// would, and leaves every document it already holds as it is — text, facts and vector.
    /// A write that leaves its vectors to the job runner indexes its text this way, so when
    /// the runner got there first, its vector is not undone.
    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()>;

    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()>;

    async fn remove(&self, ids: &[NodeId]) -> Result<()>;

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>>;

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>>;

    /// Whether `needle` occurs in any indexed text. For verifying forget.
    async fn contains_text(&self, needle: &str) -> Result<bool>;

    /// How many documents the index holds.
    async fn count(&self) -> Result<usize>;

    /// Drops every document, before a rebuild from the authoritative store.
    async fn clear(&self) -> Result<()>;

    /// Folds recent writes into the index's search structures (an index that builds them in
    /// the background, or only past a size, does it now), so searches after a bulk load run
    /// at full speed. Never changes what the filter admits nor which documents a text search
    /// matches; an index whose vector search turns approximate past a size may rank near
    /// neighbours differently after it. Indexes that keep their structures current on every
    /// write have nothing to do.
    async fn optimize(&self) -> Result<()> {
        Ok(())
    }
}

/// `TermSelection::Rarest(n)` over counted terms: the `n` terms the fewest documents hold,
/// rarest first with ties broken by the term; terms no document holds are passed over.
/// `counted` is (documents holding it, term); the term's own order breaks ties, so a
/// backend can carry its stored form along with it (as `(term, lexeme)`).
pub fn rarest_terms<T: Ord>(n: usize, counted: impl IntoIterator<Item = (u64, T)>) -> Vec<(u64, T)> {
    let mut held: Vec<(u64, T)> = counted.into_iter().filter(|(documents, _)| *documents > 0).collect();
    held.sort();
    held.truncate(n);
    held
}
