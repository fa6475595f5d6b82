//! What a store knows and has done: the catalogue, the daily digest, the profile, dreaming
//! (consolidation), the status and sync.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{DAY, UTC_OFFSET, whole_number};

/// The catalog's size.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CatalogInput {
    /// At most this many characters (200-20000, default 4000, about 1000 tokens).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 200, max = 20000))]
    pub budget_chars: Option<u32>,
}

/// Which day's memories to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DailyInput {
    /// The day, YYYY-MM-DD (default: today at `utc_offset`).
    #[serde(default)]
    #[schemars(length(max = 10), pattern(DAY))]
    pub date: Option<String>,
    /// The reader's offset from UTC, e.g. `+08:00` (default `+00:00`): the day runs from
    /// midnight to midnight there.
    #[serde(default)]
    #[schemars(length(max = 6), pattern(UTC_OFFSET))]
    pub utc_offset: Option<String>,
    /// At most this many memories, newest first (1-500, default 200).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// Whose profile to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileInput {
    /// A person's or a thing's name, or `me` for the speaker (default: every subject).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub subject: Option<String>,
}

/// How many consolidation reports to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DreamInput {
    /// At most this many, newest first (1-20, default 3).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// What consolidation passes ("dream") changed in this agent's memory: merged, superseded and
/// invalidated memories, and what waits for a person, by id and rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Dream {
    pub reports: Vec<DreamReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DreamReport {
    /// The report's file name: when the pass ran.
    pub name: String,
    /// The report in markdown, with the sections of this agent's namespaces only.
    pub markdown: String,
}

/// Run background work now (sealing summaries, indexing).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SyncInput {
    /// At most this many jobs (1-10000, default 1000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_jobs: Option<u32>,
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

/// A calendar day as its reader lives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Day {
    /// YYYY-MM-DD.
    pub date: String,
    /// e.g. `+08:00`.
    pub utc_offset: String,
}

/// One memory of the day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DayMemory {
    pub id: String,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// Its words, at most a few lines (`memory_read` opens the rest).
    pub text: String,
    pub observed_at: String,
    pub salience: f32,
}

/// What was remembered on one day, across every tree in scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Daily {
    pub day: Day,
    /// The observation times covered, both ends included.
    pub from: String,
    pub to: String,
    /// Newest first.
    pub memories: Vec<DayMemory>,
    /// More were observed that day than `limit` let through (the oldest are left out).
    pub more: bool,
    pub trees: u32,
    /// What to read first when resuming: positions in `memories`, best first (decisions,
    /// tasks and constraints, then salience, then the latest).
    pub highlights: Vec<u32>,
}

/// What memory believes now, subject by subject, from the claims of the current memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Profile {
    /// The speaker first, then everyone and everything else by name.
    pub subjects: Vec<ProfileSubject>,
}

/// One subject's attributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileSubject {
    pub subject: ProfileName,
    pub facts: Vec<ProfileFact>,
}

/// Whom or what a profile is of: `key` as subjects are compared (`@me` for the speaker), `name`
/// as a memory named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileName {
    pub key: String,
    pub name: String,
}

/// One attribute: what holds now, newest first, and what it replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileFact {
    /// The catalogue id (`residence`, `has:dentist`).
    pub attribute: String,
    /// Its name in English and in Chinese.
    pub name: String,
    pub name_zh: String,
    /// `one` (a new value replaces the old) or `many` (values join).
    pub holds: String,
    pub current: Vec<ProfileValue>,
    pub history: Vec<ProfileChange>,
}

/// A current value, and the memory that says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileValue {
    pub value: String,
    pub leaf: String,
    pub said_at: String,
    /// `user-entry`, `message:<id>`, …
    pub source: String,
    /// The time the text says it holds from, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// A newer memory that gives the attribute another value, unproven: both are shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub possibly_outdated_by: Option<String>,
}

/// A value a newer memory replaced or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub leaf: String,
    pub said_at: String,
    pub changed_by: String,
    pub changed_at: String,
    /// `one_value`, `ended` or `judged`.
    pub rule: String,
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
}

/// What a sync did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Synced {
    /// Whether the job queue was drained (false: more remain; call again).
    pub idle: bool,
}
