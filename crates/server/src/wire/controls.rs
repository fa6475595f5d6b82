//! A person's controls over what is kept: forget, the review queue, correct.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{REFERENCE, SOME_TEXT, TITLE, required_whole_number};

/// Forget a memory: every version of it, from rows, bodies, index and summaries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetInput {
    /// The memory's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// What a forget removed: ids and counts, none of the words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Forgotten {
    pub leaf_id: String,
    pub namespace: String,
    /// How many versions of the memory were forgotten (all of them).
    pub versions: u32,
    /// The fingerprint of the forgotten text, kept on the tombstone so the forget can be
    /// verified later. What else went (summaries purged, files deleted, a tree left empty) is
    /// the store's business: it could tell about memories the caller cannot read.
    pub fingerprint: String,
}

/// What waits for a person in the binding's read chain, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pending {
    pub items: Vec<PendingItem>,
}

/// A candidate, and what confirming it would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct PendingItem {
    pub id: String,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// The start of its text.
    pub summary: String,
    pub sensitivity: String,
    /// Who said it: `user`, `agent`, `assistant`, `tool`, …
    pub actor: String,
    pub source: String,
    pub created_at: String,
    /// Current memories confirming it would replace.
    pub would_supersede: Vec<String>,
    /// Why it waits as a conflict instead of having replaced one of them, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
}

/// A review decision on one candidate.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewInput {
    /// The candidate's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// Confirm or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Confirm,
    Reject,
}

/// What a review decision changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Reviewed {
    pub leaf_id: String,
    pub namespace: String,
    /// `active` (confirmed) or `rejected`.
    pub status: String,
    /// Memories the confirmation replaced.
    pub superseded: Vec<String>,
}

/// A correction: the new text of a memory, bound to the version the caller read.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorrectInput {
    /// The memory's `leaf-…` id, as read.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// The version read (over HTTP, `If-Match` must agree).
    #[serde(deserialize_with = "required_whole_number")]
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub version: u32,
    /// What the memory should say.
    #[schemars(length(min = 1, max = 16384), pattern(SOME_TEXT))]
    pub text: String,
    #[serde(default)]
    #[schemars(length(min = 1, max = arbor_domain::model::MAX_TITLE_CHARS), pattern(TITLE))]
    pub title: Option<String>,
    /// The id of the message that asked for the correction, for provenance only.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), pattern(REFERENCE))]
    pub message_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Corrected {
    pub leaf_id: String,
    pub version: u32,
    /// `active`, or `candidate` (an agent's own correction, awaiting a person).
    pub status: String,
    pub replaces: String,
    pub replaced_version: u32,
    pub namespace: String,
    pub tree_id: String,
}
