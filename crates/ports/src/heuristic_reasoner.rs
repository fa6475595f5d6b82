//! The `Reasoner` port answered by the domain's deterministic [`heuristics`]: no model, no
//! IO. It is the default reasoner and the one every model-backed step falls back to.

use arbor_domain::claims::judged::{PairJudgement, PairRequest};
use arbor_domain::heuristics;
use arbor_domain::id::NodeId;
use arbor_domain::supersession::DuplicateJudgement;
use async_trait::async_trait;

use crate::error::Result;
use crate::model_ports::{
    AssessRequest, Assessment, DuplicateRequest, Locality, QueryIntent, QueryRequest, Reasoner, RerankRequest,
    SummarizeRequest, SummaryDraft,
};

pub use arbor_domain::heuristics::HEURISTIC_REASONER_ID;

/// The heuristic reasoner. Stateless.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeuristicReasoner;

#[async_trait]
impl Reasoner for HeuristicReasoner {
    fn id(&self) -> String {
        HEURISTIC_REASONER_ID.to_owned()
    }

    fn locality(&self) -> Locality {
        Locality::Local
    }

    async fn assess(&self, request: &AssessRequest) -> Result<Assessment> {
        Ok(heuristics::assess(request))
    }

    async fn judge_duplicate(&self, request: &DuplicateRequest) -> Result<DuplicateJudgement> {
        Ok(heuristics::judge_duplicate(request))
    }

    async fn judge_pairs(&self, _request: &PairRequest) -> Result<Vec<PairJudgement>> {
        Ok(Vec::new())
    }

    async fn summarize(&self, request: &SummarizeRequest) -> Result<SummaryDraft> {
        Ok(heuristics::summarize(request))
    }

    async fn classify_query(&self, request: &QueryRequest) -> Result<QueryIntent> {
        Ok(heuristics::classify_query(request))
    }

    /// Keeps the order retrieval gave: the heuristics have nothing better to go on.
    async fn rerank(&self, request: &RerankRequest) -> Result<Vec<NodeId>> {
        Ok(request.candidates.iter().map(|c| c.id.clone()).collect())
    }
}
