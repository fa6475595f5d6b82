//! What a reasoner is asked and what it answers: the judgement calls of the write path
//! (assess a chunk, judge a duplicate, summarize children) and of the read path (read a
//! question, order candidates), as plain data. The `Reasoner` port carries them to a model;
//! [`heuristics`](crate::heuristics) answers them with no model at all. Every answer is a
//! proposal the rules validate.

use serde::{Deserialize, Serialize};

use crate::decision::EntityProposal;
use crate::entity::Entity;
use crate::event::EventHints;
use crate::id::{LeafId, NodeId};
use crate::model::{Actor, Confidence, Label, MemoryKind, SubjectKey, TreeId};
use crate::namespace::NamespaceKind;
use crate::sensitivity::Sensitivity;
use crate::time::Timestamp;

/// The input of an assessment: one chunk, what the host said about it, and the only
/// entities the reasoner may pick from.
#[derive(Debug, Clone, PartialEq)]
pub struct AssessRequest {
    pub text: String,
    pub actor: Actor,
    pub namespace: NamespaceKind,
    pub hints: EventHints,
    /// At most [`MAX_ENTITY_SHORTLIST`](crate::decision::MAX_ENTITY_SHORTLIST) entities.
    pub shortlist: Vec<Entity>,
}

/// A reasoner's view of one chunk. Every field is a proposal: the domain's rules validate it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// How clearly this is worth remembering.
    pub admission: Confidence,
    pub kind: MemoryKind,
    pub title: String,
    pub subject: Option<SubjectKey>,
    pub labels: Vec<Label>,
    pub sensitivity: Sensitivity,
    pub salience: Confidence,
    /// The primary entity: match one on the shortlist, create one, or fall back.
    pub entity: EntityProposal,
    /// Other shortlisted entities mentioned (ids as strings; validated against the shortlist).
    pub secondary_entities: Vec<String>,
}

/// A leaf the new chunk might duplicate or supersede.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateCandidate {
    pub id: LeafId,
    pub title: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateRequest {
    pub text: String,
    pub subject: Option<SubjectKey>,
    pub candidates: Vec<DuplicateCandidate>,
}

/// One child of a summary being written.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryInput {
    pub id: NodeId,
    pub title: String,
    pub text: String,
    pub observed_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SummarizeRequest {
    pub tree: TreeId,
    pub height: u8,
    pub children: Vec<SummaryInput>,
}

/// A summary's title and text, as written by a reasoner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryDraft {
    pub title: String,
    pub text: String,
    pub labels: Vec<Label>,
}

/// Candidates of a retrieval to put in order of how well they answer a question.
#[derive(Debug, Clone, PartialEq)]
pub struct RerankRequest {
    pub query: String,
    pub candidates: Vec<RerankCandidate>,
}

/// One candidate as a reranker sees it: its title and short summary, never its whole body.
#[derive(Debug, Clone, PartialEq)]
pub struct RerankCandidate {
    pub id: NodeId,
    pub text: String,
}

/// A question, before retrieval: what kind of answer does it want?
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRequest {
    pub query: String,
}

/// A reasoner's reading of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryIntent {
    /// A broad question (an overview, a catch-up, "tell me about"): answered summaries first.
    /// Otherwise a specific one, answered with leaf evidence.
    pub broad: bool,
    /// What kind of answer it looks for.
    #[serde(default)]
    pub focus: QueryFocus,
    /// Why, in a few words, for the pack.
    pub reason: String,
}

/// What kind of answer a question looks for, beyond broad or specific.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryFocus {
    #[default]
    General,
    /// When something happened, or what happened in a period: dates matter.
    Temporal,
    /// What someone prefers, or a rule that must hold: preference and constraint memories
    /// get a channel of their own.
    PreferenceOrConstraint,
}

impl QueryFocus {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryFocus::General => "general",
            QueryFocus::Temporal => "temporal",
            QueryFocus::PreferenceOrConstraint => "preference_or_constraint",
        }
    }

    pub fn parse(value: &str) -> Option<QueryFocus> {
        [QueryFocus::General, QueryFocus::Temporal, QueryFocus::PreferenceOrConstraint]
            .into_iter()
            .find(|f| f.as_str() == value)
    }
}
