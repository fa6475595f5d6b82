//! The model ports: an embedder that turns text into vectors, and a reasoner that makes the
//! judgement calls of the write path (admission, entity assignment, duplicates, summaries).
//!
//! Both have deterministic implementations in this crate that need no model at all
//! ([`HashingEmbedder`](crate::HashingEmbedder), [`HeuristicReasoner`](crate::HeuristicReasoner)),
//! so Arbor runs end to end with zero setup.

use std::fmt;

pub use arbor_domain::claims::judged::{PairCandidate, PairJudgement, PairRequest, PairVerdict};
use arbor_domain::id::NodeId;
pub use arbor_domain::judgement::{
    AssessRequest, Assessment, DuplicateCandidate, DuplicateRequest, QueryFocus, QueryIntent, QueryRequest,
    RerankCandidate, RerankRequest, SummarizeRequest, SummaryDraft, SummaryInput,
};
use arbor_domain::supersession::DuplicateJudgement;
use async_trait::async_trait;

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

    /// Whether embedding costs about what reading the text costs (a computed feature hash,
    /// microseconds a text), so a write may compute its vectors before it returns. A model —
    /// tens of milliseconds a text on a small CPU, or a network round trip — says no, and
    /// writes leave their vectors to the job runner, which embeds them in batches.
    fn is_instant(&self) -> bool {
        false
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
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

    /// Whether the new memory updates, keeps or repeats each current memory it is shown beside
    /// (`claims::judged`): verdicts only on candidates shown, each at most once; one it leaves
    /// out keeps the rules' decision. The deterministic reasoner has no opinion (an empty
    /// list): the rules' decision is its own.
    async fn judge_pairs(&self, request: &PairRequest) -> Result<Vec<PairJudgement>>;

    async fn summarize(&self, request: &SummarizeRequest) -> Result<SummaryDraft>;

    /// Whether a question is broad or specific (retrieval's intent when the caller left it to
    /// Arbor).
    async fn classify_query(&self, request: &QueryRequest) -> Result<QueryIntent>;

    /// Candidate ids, best answer to the question first: only ids it was shown, each at most
    /// once. Those it leaves out keep their order after the ones it ranks. The deterministic
    /// reasoner keeps the retrieval's own order (fusion is its reranker).
    async fn rerank(&self, request: &RerankRequest) -> Result<Vec<NodeId>>;
}
