//! The memory centre's (an operator's) reads and writes: health, usage, audit, the memory list,
//! edits and restores, recently replaced memories, settings.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::retrieve::Validity;
use super::shapes::{NODE_ID, SOME_TEXT, STORABLE_YEAR, TITLE, TREE_ID, required_whole_number, whole_number};

/// Counts of one namespace or tree ([`Health`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HealthFigures {
    /// Current memories.
    pub active: u32,
    /// Replaced versions, kept as history.
    pub superseded: u32,
    /// Suggestions waiting for a person, and when the longest-waiting was written.
    pub candidates: u32,
    pub oldest_candidate: Option<String>,
    pub archived: u32,
    /// Current memories that say again what another current memory says.
    pub duplicates: u32,
    pub summaries: u32,
    /// Summaries something below changed under, waiting to be sealed again.
    pub summaries_awaiting_reseal: u32,
    /// Bytes of every body document kept (every version, suggestion and summary).
    pub body_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TreeHealth {
    pub tree_id: String,
    pub figures: HealthFigures,
    /// What is past its threshold, and what to do about it.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NamespaceHealth {
    pub namespace: String,
    pub figures: HealthFigures,
    pub warnings: Vec<String>,
    pub trees: Vec<TreeHealth>,
}

/// The health of every namespace the read chain reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Health {
    pub at: String,
    pub namespaces: Vec<NamespaceHealth>,
    /// Trees or bodies that could not be read (`arbor fsck` says more), with why.
    pub unreadable: Vec<String>,
}

/// Which memory's use to show.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsageInput {
    /// A `leaf-…` or `sum-…` id.
    #[schemars(pattern(NODE_ID))]
    pub id: String,
    /// Of the latest this many recorded retrievals (1-1000, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// One recorded retrieval that considered a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UsageRecord {
    pub retrieval: String,
    pub at: String,
    /// Whether it went into the context the retrieval returned.
    pub entered_context: bool,
}

/// How a memory has been used by retrievals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Usage {
    pub id: String,
    pub retrievals: u32,
    pub entered_context: u32,
    pub last_used: Option<String>,
    /// Newest first.
    pub records: Vec<UsageRecord>,
}

/// How many audit events to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditInput {
    /// At most this many, newest first (1-1000, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// One thing done to memory in scope: what, to which node, by whom. No words of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AuditEntry {
    pub at: String,
    /// e.g. `leaf.created`, `leaf.superseded`, `leaf.forgotten`, `summary.sealed`.
    pub action: String,
    pub namespace: String,
    pub node: Option<String>,
    pub actor: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Audit {
    pub events: Vec<AuditEntry>,
}

/// Which current memories to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoriesInput {
    /// Only this tree's.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// Only this kind (`fact`, `preference`, `decision`, …).
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub kind: Option<String>,
    /// Skip this many (0-100000, default 0).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(max = 100000))]
    pub offset: Option<u32>,
    /// At most this many, newest first (1-500, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// A current memory as its owner sees it in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MemoryRow {
    pub id: String,
    pub version: u32,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// The start of its text.
    pub summary: String,
    pub sensitivity: String,
    pub status: String,
    pub observed_at: String,
    pub validity: Validity,
    pub confidence: f32,
    pub salience: f32,
    /// Who said it.
    pub actor: String,
    pub source: String,
    /// The version it replaced, if any.
    pub supersedes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Memories {
    pub memories: Vec<MemoryRow>,
    /// More follow (ask again with a larger `offset`).
    pub more: bool,
}

/// New words for a suggestion before anyone confirms it: it stays a suggestion.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditCandidateInput {
    /// The candidate's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// What it should say.
    #[schemars(length(min = 1, max = 16384), pattern(SOME_TEXT))]
    pub text: String,
    #[serde(default)]
    #[schemars(length(min = 1, max = arbor_domain::model::MAX_TITLE_CHARS), pattern(TITLE))]
    pub title: Option<String>,
}

/// Make a replaced version current again.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestoreInput {
    /// The replaced version's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// The memory's current (or latest) version as read: the restore is bound to it.
    #[serde(deserialize_with = "required_whole_number")]
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub current_version: u32,
}

/// Which automatic retirements to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetiredInput {
    /// Only those retired since this time (RFC 3339).
    #[serde(default)]
    #[schemars(length(max = 40), extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub since: Option<String>,
    /// At most this many, newest first (1-500, default 50).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// What rules retired automatically, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredList {
    pub items: Vec<RetiredEntry>,
}

/// A memory a rule retired: what it said, by which rule, on which attribute, and what replaced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredEntry {
    pub leaf_id: String,
    pub namespace: String,
    pub text: String,
    pub said_at: String,
    pub retired_at: String,
    /// `one_value`, `ended` or `judged`.
    pub rule: String,
    pub attribute: String,
    pub attribute_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// The memory that retired it, when the chain can read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<RetiredBy>,
}

/// The memory that retired another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredBy {
    pub leaf_id: String,
    pub text: String,
}

/// Undo an automatic retirement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestoreRetiredInput {
    /// The retired memory's `leaf-…` id, as the list gives it.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// What undoing a retirement did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RestoredRetired {
    /// The retired memory.
    pub restored: String,
    /// Its words, current again as a memory of their own.
    pub leaf_id: String,
    pub namespace: String,
    /// The memory that had retired it, current beside it.
    pub kept_with: String,
}

/// The store's settings file (`arbor.json`), as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Settings {
    /// The file's JSON, as written.
    pub text: String,
    /// Whether a change written here takes effect only when the server starts again.
    pub applies_on_restart: bool,
}

/// New settings: the whole file, checked as `arbor` checks it when it opens the store.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SettingsInput {
    #[schemars(length(min = 2, max = 65536))]
    pub text: String,
}
