//! The wire contract of the agent interfaces: every tool input and output of the MCP server
//! and every request and response body of the HTTP API, with JSON schemas derived from these
//! types (served in the MCP tool list and in `/openapi.json`).
//!
//! No input names a namespace, a read chain or a path: those come from how the server was
//! started. Inputs refuse unknown fields, so an argument like `namespace` is an error, never
//! silently ignored. Outputs mirror the app's own serialization (the pack is the contract);
//! tests check that each mirror reads back exactly what the app writes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a question should be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Decide from the question.
    #[default]
    Auto,
    /// Summaries first: "what do we know about…".
    BroadSummary,
    /// Leaves only: "when did…", "what is the…".
    ExactEvidence,
}

/// Ask memory a question. Returns the retrieval pack: known facts, constraints, gaps and the
/// evidence behind them, each item with its id, version, tree and why it was picked.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetrieveInput {
    /// The question, in the user's words.
    #[schemars(length(min = 1, max = 4096))]
    pub query: String,
    #[serde(default)]
    pub mode: Mode,
    /// At most this many evidence items (1-100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_results: Option<u32>,
    /// At most this many characters of evidence in total (100-100000).
    #[serde(default)]
    #[schemars(range(min = 100, max = 100000))]
    pub max_chars: Option<u32>,
    /// Answer as of this instant (RFC 3339): facts valid then, including since-replaced ones.
    #[serde(default)]
    pub as_of: Option<String>,
    /// Only this tree, e.g. `interaction:dana`.
    #[serde(default)]
    pub tree: Option<String>,
    /// Only these kinds of memory (fact, preference, constraint, decision, event, procedure, …).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub kinds: Vec<String>,
    /// Keep an explanation of this retrieval; the pack's `retrieval_id` names it.
    #[serde(default)]
    pub record: bool,
}

/// Full-text and semantic search over current memories; a flat list of hits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchInput {
    #[schemars(length(min = 1, max = 4096))]
    pub query: String,
    /// At most this many hits (1-100, default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// List the trees memory holds, or outline one of them.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BrowseInput {
    /// A tree id from the listing or a pack (e.g. `interaction:dana`); without it, list trees.
    #[serde(default)]
    pub tree: Option<String>,
    /// How many levels of the outline to show (1-8, default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 8))]
    pub depth: Option<u32>,
}

/// Read one memory (leaf) or summary by id, with its full text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// A `leaf-…` or `sum-…` id from a pack, a search hit or an outline.
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
}

/// Something worth remembering. Arbor decides whether to keep it, what it is about and whether
/// it replaces an older memory.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SaveInput {
    /// What happened or was said, in plain words (at most 64 KiB).
    #[schemars(length(min = 1, max = 65536))]
    pub text: String,
    /// Who said it: `user` (default), `agent`, `tool` or `integration`.
    #[serde(default)]
    pub actor: Option<String>,
    /// When it happened (RFC 3339); default now.
    #[serde(default)]
    pub observed_at: Option<String>,
    /// The host's id of the message it came from, for provenance.
    #[serde(default)]
    #[schemars(length(min = 1, max = 256))]
    pub message_id: Option<String>,
    /// The kind, if known: fact, preference, constraint, decision, event, procedure, …
    #[serde(default)]
    pub kind: Option<String>,
    /// A short title, if the host has one.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
}

/// A correction: the new text of a memory, bound to the version the caller read.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorrectInput {
    /// The memory's `leaf-…` id, as read.
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
    /// The version that was read. Over HTTP it may come in `If-Match` instead.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub version: Option<u32>,
    /// What the memory should say.
    #[schemars(length(min = 1, max = 65536))]
    pub text: String,
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
}

/// The catalog's size.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CatalogInput {
    /// At most this many characters (200-20000, default 4000, about 1000 tokens).
    #[serde(default)]
    #[schemars(range(min = 200, max = 20000))]
    pub budget_chars: Option<u32>,
}

/// Run background work now (sealing summaries, indexing).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SyncInput {
    /// At most this many jobs (1-10000, default 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    pub max_jobs: Option<u32>,
}

// ---- outputs: mirrors of the app's serialization ----

/// A node reference as the pack writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NodeRef {
    /// `leaf` or `summary`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Intent {
    pub mode: Mode,
    /// `general`, `temporal` or `preference_or_constraint`.
    pub focus: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TimeRange {
    pub start: Option<String>,
    pub end: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UnderstoodTime {
    pub phrase: String,
    pub range: TimeRange,
    pub applied: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Understood {
    pub time: Option<UnderstoodTime>,
    pub entities: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Validity {
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

/// Per-channel ranks (1 is best) and the fused score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Scores {
    pub text_rank: Option<u32>,
    pub vector_rank: Option<u32>,
    pub entity_rank: Option<u32>,
    pub kind_rank: Option<u32>,
    pub context_of_rank: Option<u32>,
    pub model_rank: Option<u32>,
    pub fused: f64,
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Evidence {
    pub node_id: NodeRef,
    /// `leaf` or `summary`.
    pub node: String,
    pub version: Option<u32>,
    pub namespace: String,
    /// 0 is the caller's own layer; higher numbers are broader layers.
    pub layer: u32,
    pub tree_id: String,
    pub kind: Option<String>,
    pub title: String,
    pub text: String,
    pub observed_at: String,
    pub validity: Validity,
    /// Where it came from, e.g. `message:m12`.
    pub source: Option<String>,
    /// `normal`, `sensitive` or `restricted`.
    pub sensitivity: String,
    pub scores: Scores,
    pub why: String,
    pub supersedes: Option<String>,
    pub overridden_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Skipped {
    pub node_id: NodeRef,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Coverage {
    pub namespaces: Vec<String>,
    pub candidates: u32,
    pub dropped_by_store_check: u32,
    pub selected: u32,
    pub chars: u32,
    pub bodies_read: u32,
    pub unread: u32,
    pub skipped: Vec<Skipped>,
}

/// The retrieval pack: what memory knows about the question, bounded and explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pack {
    pub retrieval_id: Option<String>,
    pub query: String,
    pub as_of: Option<String>,
    pub intent: Intent,
    pub understood: Understood,
    pub known_facts: Vec<String>,
    pub constraints: Vec<String>,
    pub recent: Vec<String>,
    pub gaps: Vec<String>,
    pub recommended_next_source: Option<String>,
    pub evidence: Vec<Evidence>,
    pub coverage: Coverage,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchHit {
    pub id: String,
    /// `leaf` or `summary`.
    pub node: String,
    pub version: Option<u32>,
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub text: String,
    pub observed_at: String,
    pub score: f64,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchResult {
    pub hits: Vec<SearchHit>,
}

/// A leaf or summary with its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Node {
    pub id: String,
    /// `leaf` or `summary`.
    pub node: String,
    /// Leaves: the version within the memory's lineage; pass it back to correct it.
    pub version: Option<u32>,
    /// Leaves: the first version's id.
    pub lineage: Option<String>,
    pub namespace: String,
    pub tree_id: String,
    pub kind: Option<String>,
    pub title: String,
    /// e.g. `active`, `superseded`, `candidate`; summaries: `current`, `stale`.
    pub status: String,
    pub observed_at: Option<String>,
    pub validity: Option<Validity>,
    pub sensitivity: Option<String>,
    pub source: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    /// Summaries: their level (1 is a tree's root).
    pub level: Option<u32>,
    /// The text; absent when it was forgotten or replaced.
    pub body: Option<String>,
}

/// A tree at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TreeSummary {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub root_title: Option<String>,
    pub active_leaves: u32,
    pub leaves: u32,
    pub summaries: u32,
}

/// One node of an outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OutlineNode {
    pub id: NodeRef,
    /// `L1` for the root, `L2`… below it, `leaf` for leaves.
    pub level: String,
    pub title: String,
    pub status: String,
    pub children: Vec<OutlineNode>,
    pub hidden_children: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Outline {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub nodes: Vec<OutlineNode>,
}

/// Either the list of trees or one tree's outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Browse {
    pub trees: Vec<TreeSummary>,
    pub outline: Option<Outline>,
}

/// What happened to one chunk of a saved event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Saved {
    pub chunk: u32,
    /// `created`, `superseding`, `noop_duplicate` or `not_admitted`.
    pub outcome: String,
    /// The memory it became (or already was).
    pub leaf_id: Option<String>,
    /// `active` or `candidate` (awaiting a person).
    pub status: Option<String>,
    pub replaces: Option<String>,
    pub tree_id: Option<String>,
    pub namespace: String,
    /// Why it was not admitted, or why it is active or a candidate.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SaveResult {
    pub chunks: Vec<Saved>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Corrected {
    pub leaf_id: String,
    pub version: u32,
    pub replaces: String,
    pub replaced_version: u32,
    pub namespace: String,
    pub tree_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CatalogEntry {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub memories: u32,
    pub last_updated: Option<String>,
    pub recent_titles: Vec<String>,
    pub line: String,
}

/// A bounded one-line-per-tree digest of what memory holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Catalog {
    pub entries: Vec<CatalogEntry>,
    pub omitted_trees: u32,
    pub budget_chars: u32,
    pub text: String,
}

/// What the server is bound to and how much the store holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Status {
    pub version: String,
    /// The namespaces this server reads, most specific first; fixed at start-up.
    pub read_chain: Vec<String>,
    /// Where saves and corrections go.
    pub write_namespace: String,
    pub store_backend: String,
    pub index_backend: String,
    pub embedder: String,
    /// Trees and current memories this server can read.
    pub trees: u32,
    pub active_leaves: u32,
    /// Background jobs waiting in the store's queue (all scopes; no content).
    pub jobs_pending: u32,
    pub jobs_dead: u32,
}

/// What a sync ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Synced {
    pub completed: u32,
    pub failed: u32,
    pub seals: u32,
    pub summaries_sealed: u32,
    pub summaries_resealed: u32,
    pub roots_refreshed: u32,
    pub indexed: u32,
    pub unindexed: u32,
    pub bodies_purged: u32,
}

/// An error, with a stable machine-readable code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorDetail {
    /// One of: invalid_request, unauthorized, forbidden, not_found, method_not_allowed,
    /// precondition_failed, precondition_required, payload_too_large, unsupported_media_type,
    /// conflict, contention, unavailable, internal.
    pub code: String,
    pub message: String,
}
