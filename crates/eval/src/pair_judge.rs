//! A reasoner that asks a model only to judge the pairs a new memory's claims found, and
//! leaves every other step (assessing, duplicates, summaries, reading and ordering questions)
//! to the deterministic rules: how `arbor eval updates --reasoner-of` measures what a model's
//! pair judgements change, alone, with a model small enough to run on this machine.

use std::sync::Arc;

use anyhow::{Result, bail};
use arbor_compose::ReasonerConfig;
use arbor_domain::id::NodeId;
use arbor_domain::supersession::DuplicateJudgement;
use arbor_ports::{
    AssessRequest, Assessment, DuplicateRequest, HeuristicReasoner, Locality, PairJudgement, PairRequest, QueryIntent,
    QueryRequest, Reasoner, RerankRequest, SummarizeRequest, SummaryDraft,
};
use async_trait::async_trait;

/// The model's pair judgements, the rules' everything else.
#[derive(Debug)]
pub struct PairJudgeOnly {
    model: Arc<dyn Reasoner>,
}

impl PairJudgeOnly {
    /// `model`, configured as `config`, which must be served on this machine (a loopback
    /// address): the wrapper is local, so nothing may leave the machine through it.
    pub fn new(model: Arc<dyn Reasoner>, config: &ReasonerConfig) -> Result<PairJudgeOnly> {
        let ReasonerConfig::OpenAi { endpoint, .. } = config else {
            bail!("the store's reasoner is the deterministic one: there is no model to judge pairs");
        };
        let host = endpoint.base_url.split("://").nth(1).unwrap_or_default();
        if !["127.0.0.1", "localhost", "[::1]"].iter().any(|h| host.starts_with(h)) {
            bail!("the pair judge measured here must run on this machine, not at {}", endpoint.base_url);
        }
        Ok(PairJudgeOnly { model })
    }
}

#[async_trait]
impl Reasoner for PairJudgeOnly {
    fn id(&self) -> String {
        format!("{} (pair judgements only)", self.model.id())
    }

    fn locality(&self) -> Locality {
        Locality::Local
    }

    async fn assess(&self, request: &AssessRequest) -> arbor_ports::Result<Assessment> {
        HeuristicReasoner.assess(request).await
    }

    async fn judge_duplicate(&self, request: &DuplicateRequest) -> arbor_ports::Result<DuplicateJudgement> {
        HeuristicReasoner.judge_duplicate(request).await
    }

    async fn judge_pairs(&self, request: &PairRequest) -> arbor_ports::Result<Vec<PairJudgement>> {
        self.model.judge_pairs(request).await
    }

    async fn summarize(&self, request: &SummarizeRequest) -> arbor_ports::Result<SummaryDraft> {
        HeuristicReasoner.summarize(request).await
    }

    async fn classify_query(&self, request: &QueryRequest) -> arbor_ports::Result<QueryIntent> {
        HeuristicReasoner.classify_query(request).await
    }

    async fn rerank(&self, request: &RerankRequest) -> arbor_ports::Result<Vec<NodeId>> {
        HeuristicReasoner.rerank(request).await
    }
}
