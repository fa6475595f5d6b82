//! Asking and reading: retrieve, ask, search, browse and read, their inputs and the pack, hits,
//! nodes and outlines they answer with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{NODE_ID, SOME_TEXT, STORABLE_YEAR, TREE_ID, kinds_schema, whole_number};

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
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    #[serde(default)]
    pub mode: Mode,
    /// At most this many evidence items (1-100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 100))]
    pub max_results: Option<u32>,
    /// At most this many characters of evidence in total (100-100000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 100, max = 100000))]
    pub max_chars: Option<u32>,
    /// Answer as of this instant (RFC 3339, in the years a store holds): facts valid then,
    /// including since-replaced ones.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub as_of: Option<String>,
    /// Only this tree, e.g. `interaction:dana`.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// Only these kinds of memory.
    #[serde(default)]
    #[schemars(schema_with = "kinds_schema")]
    pub kinds: Vec<String>,
    /// Keep an explanation of this retrieval; the pack's `retrieval_id` names it.
    #[serde(default)]
    pub record: bool,
    /// `full` (default): the explained pack; `compact`: each memory once with a short why,
    /// and the text a model reads.
    #[serde(default)]
    pub format: PackFormat,
    /// About this many tokens at most (50-20000): the evidence text (unless `max_chars` says
    /// otherwise), and for a compact pack its whole text.
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 50, max = 20000))]
    pub max_tokens: Option<u32>,
    /// With `compact`: also list the candidates the budget left out (a full pack always does).
    #[serde(default)]
    pub include_skipped: bool,
}

/// How a pack is returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PackFormat {
    #[default]
    Full,
    Compact,
}

/// Ask memory a question, as a model does: the answer comes back as a few lines of text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskInput {
    /// The question, in the user's words.
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    /// Token budget (default 1000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 50, max = 20000))]
    pub max_tokens: Option<u32>,
    /// Answer as of this instant (RFC 3339).
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub as_of: Option<String>,
}

/// Full-text and semantic search over current memories; a flat list of hits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchInput {
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    /// At most this many hits (1-100, default 10).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// List the trees memory holds, or outline one of them.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BrowseInput {
    /// A tree id from the listing or a pack (e.g. `interaction:dana`); without it, list trees.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// How many levels of the outline to show (1-8, default 3).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 8))]
    pub depth: Option<u32>,
}

/// Read one memory (leaf) or summary by id, with its full text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// A `leaf-…` or `sum-…` id from a pack, a search hit or an outline.
    #[schemars(pattern(NODE_ID))]
    pub id: String,
}

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
    /// Among the memories that mention the time window the question names.
    pub time_rank: Option<u32>,
    pub context_of_rank: Option<u32>,
    pub model_rank: Option<u32>,
    /// The best vector similarity to the question, when a vector channel found it.
    pub similarity: Option<f64>,
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
    /// A newer memory in this pack that seems to replace this one: it ranks after it and is
    /// not offered as a fact.
    pub possibly_outdated_by: Option<String>,
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
    /// Candidates the vectors alone found below their relevance floor, left out.
    pub below_relevance_floor: u32,
    pub skipped: Vec<Skipped>,
}

/// A part of retrieval that did not run as configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Degradation {
    /// `vector:<embedder>`, `rerank` or `body:<leaf id>`.
    pub part: String,
    pub reason: String,
}

/// One memory of a compact pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CompactMemory {
    /// What to cite, read or correct: `leaf-…` or `sum-…`.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// `YYYY-MM-DD`.
    pub date: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub text: String,
    pub why: String,
}

/// The pack as a model reads it: each memory once, nothing null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CompactPack {
    /// `found` or `nothing_relevant`.
    pub answer: String,
    /// What memory believes now about the subject a question asks everything about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<CompactMemory>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<Degradation>,
    /// Relevant memories the budget left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// The same, as the few lines of text a model reads.
    pub text: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The retrieval pack: what memory knows about the question, bounded and explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pack {
    pub retrieval_id: Option<String>,
    pub query: String,
    /// `found` or `nothing_relevant`.
    pub answer: String,
    /// What did not run as configured; empty when retrieval ran whole.
    pub degraded: Vec<Degradation>,
    pub as_of: Option<String>,
    pub intent: Intent,
    pub understood: Understood,
    /// For a question about a whole subject ("what do you know about Kofi?"), what memory
    /// believes about it now, one line per attribute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    pub known_facts: Vec<String>,
    pub constraints: Vec<String>,
    pub recent: Vec<String>,
    pub gaps: Vec<String>,
    pub recommended_next_source: Option<String>,
    pub evidence: Vec<Evidence>,
    pub coverage: Coverage,
}

/// A retrieval's answer, in the format asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Retrieved {
    Full(Box<Pack>),
    Compact(CompactPack),
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
    /// Who said it, for a leaf: `user`, `agent` (saved through these tools), `assistant`,
    /// `tool`, `system` or `integration`.
    pub actor: Option<String>,
    pub source: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    /// Summaries: their level (1 is a tree's root).
    pub level: Option<u32>,
    /// The text; absent when it was forgotten or replaced.
    pub body: Option<String>,
    /// For the store's owner (an operator's token) only: the prose of `body`, without its
    /// frontmatter and title line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
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
