//! The model ports: an embedder that turns text into vectors, and a reasoner that makes the
//! judgement calls of the write path (admission, entity assignment, duplicates, summaries).
//!
//! Both have deterministic implementations in this crate that need no model at all
//! ([`HashingEmbedder`](crate::HashingEmbedder), [`HeuristicReasoner`](crate::HeuristicReasoner)),
//! so Arbor runs end to end with zero setup.

use std::fmt;

use arbor_domain::decision::EntityProposal;
use arbor_domain::entity::Entity;
use arbor_domain::event::EventHints;
use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::model::{Actor, Confidence, Label, MemoryKind, SubjectKey, TreeId};
use arbor_domain::namespace::NamespaceKind;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::supersession::DuplicateJudgement;
use arbor_domain::time::Timestamp;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::index::EmbedderId;

pub use arbor_domain::sensitivity::Locality;

/// Turns text into vectors.
///
/// # Contract
///
/// - One vector per input text, in order, each of exactly [`EmbedderId::dimensions`] values.
/// - Vectors are unit length (cosine similarity is their dot product); an input with nothing
///   to embed gives the zero vector.
/// - The same text gives the same vector from the same embedder id.
/// - Callers never pass restricted text to an embedder whose locality is `Remote`.
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait]
pub trait Embedder: Send + Sync + fmt::Debug {
    fn id(&self) -> EmbedderId;

    fn locality(&self) -> Locality;

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// The input of [`Reasoner::assess`]: one chunk, what the host said about it, and the only
/// entities the reasoner may pick from.
#[derive(Debug, Clone, PartialEq)]
pub struct AssessRequest {
    pub text: String,
    pub actor: Actor,
    pub namespace: NamespaceKind,
    pub hints: EventHints,
    /// At most [`MAX_ENTITY_SHORTLIST`](arbor_domain::decision::MAX_ENTITY_SHORTLIST) entities.
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

/// Makes the judgement calls of the write path, and reads questions.
///
/// # Contract
///
/// - Answers are proposals; the caller validates every one with the domain's rules, so a
///   reasoner can be wrong but cannot break an invariant (pick an entity it was not shown,
///   create an unstable entity, merge across trees).
/// - An error means "no answer": the caller falls back to the deterministic reasoner for that
///   step and counts the fallback. Reasoners never need to panic.
/// - Callers never pass restricted text to a reasoner whose locality is `Remote`.
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait]
pub trait Reasoner: Send + Sync + fmt::Debug {
    /// Name and version, recorded in provenance: e.g. `heuristic/1`.
    fn id(&self) -> String;

    fn locality(&self) -> Locality;

    async fn assess(&self, request: &AssessRequest) -> Result<Assessment>;

    async fn judge_duplicate(&self, request: &DuplicateRequest) -> Result<DuplicateJudgement>;

    async fn summarize(&self, request: &SummarizeRequest) -> Result<SummaryDraft>;

    /// Whether a question is broad or specific (retrieval's intent when the caller left it to
    /// Arbor).
    async fn classify_query(&self, request: &QueryRequest) -> Result<QueryIntent>;

    /// Candidate ids, best answer to the question first: only ids it was shown, each at most
    /// once. Those it leaves out keep their order after the ones it ranks. The deterministic
    /// reasoner keeps the retrieval's own order (fusion is its reranker).
    async fn rerank(&self, request: &RerankRequest) -> Result<Vec<NodeId>>;
}
