//! `ContextSnapshot`: the record of one retrieval — what it considered, what it selected and why,
//! with which versions [design §context-snapshots] — and the access records derived from it [design §access-records].
//!
//! A snapshot holds ids, ranks and reasons, not memory bodies: a node forgotten later leaves only
//! its id behind here, as in its tombstone. It also keeps the question (the caller's own words,
//! which explain everything else in the record) and the names of the entities the question
//! named; forgetting a leaf drops the snapshots of retrievals that read it, since their question
//! may quote it. A snapshot is shown only to a caller whose read chain covers every namespace
//! of the chain it was recorded under.

use arbor_domain::id::{NodeId, RetrievalId};
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use serde::{Deserialize, Serialize};

/// What happened to one candidate of a retrieval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateOutcome {
    /// Entered the pack.
    Selected,
    /// Read, but left out: a budget was spent, it lay outside the branches a broad question
    /// chose, or its body failed verification.
    Skipped,
    /// Offered by the index, refused by the authoritative rows (stale projection).
    Dropped,
    /// Not used: the budget was full before its turn. Its body was never read (its row may
    /// have been, with the head of the ranking).
    Unread,
}

/// One candidate as a retrieval saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsideredNode {
    pub node: NodeId,
    /// The namespace the index filed it in (for access records), when known.
    pub namespace: Option<Namespace>,
    /// `(channel, rank)`, 1-based, e.g. `("full_text", 3)`.
    pub channels: Vec<(String, usize)>,
    pub fused: f32,
    pub outcome: CandidateOutcome,
    /// Why it was picked or left out.
    pub reason: String,
}

/// Versions of everything that shaped a retrieval, so a later reader can tell whether a
/// different answer today comes from different memories or a different retriever.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotVersions {
    pub retriever: String,
    pub embedders: Vec<String>,
    pub reasoner: String,
    pub policy: String,
}

/// The record of one retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextSnapshot {
    pub id: RetrievalId,
    pub at: Timestamp,
    /// The most specific layer of the caller's read chain: a snapshot is readable by callers
    /// whose scope includes it, like any other record of that namespace.
    pub namespace: Namespace,
    /// The whole read chain, most specific first, as `namespace[@frozen-at]`.
    pub read_chain: Vec<String>,
    /// Who asked: `cli`, a run id, a server binding.
    pub actor: String,
    pub query: String,
    pub as_of: Option<Timestamp>,
    /// `broad_summary` or `exact_evidence`, and why.
    pub intent: String,
    pub intent_reason: String,
    /// Filters the question itself implied (a time range, entities), in words.
    pub understood: Vec<String>,
    pub versions: SnapshotVersions,
    /// Every fused candidate, in rank order.
    pub considered: Vec<ConsideredNode>,
}

impl ContextSnapshot {
    /// The access records this retrieval implies: one per candidate that was read, saying
    /// whether it entered the context.
    pub fn access_records(&self) -> impl Iterator<Item = AccessRecord> + '_ {
        self.considered
            .iter()
            .filter(|c| matches!(c.outcome, CandidateOutcome::Selected | CandidateOutcome::Skipped))
            .filter_map(|c| {
                Some(AccessRecord {
                    retrieval: self.id.clone(),
                    node: c.node.clone(),
                    namespace: c.namespace.clone()?,
                    entered_context: c.outcome == CandidateOutcome::Selected,
                    at: self.at,
                })
            })
    }
}

/// Which retrieval read which memory, and whether it entered the context [design §access-records].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessRecord {
    pub retrieval: RetrievalId,
    pub node: NodeId,
    pub namespace: Namespace,
    pub entered_context: bool,
    pub at: Timestamp,
}
