//! A reasoner that asks a model only to judge the pairs a new memory's claims found, and
//! leaves every other step (assessing, duplicates, summaries, reading and ordering questions)
//! to the deterministic rules: how `arbor eval updates --reasoner-of` measures what a model's
//! pair judgements change, alone, with a model small enough to run on this machine.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Judgements asked of the model, for the report.
    calls: AtomicU64,
}

impl PairJudgeOnly {
    /// `model`, configured as `config`, which must be served on this machine (a loopback
    /// address): the wrapper is local, so nothing may leave the machine through it.
    pub fn new(model: Arc<dyn Reasoner>, config: &ReasonerConfig) -> Result<PairJudgeOnly> {
        let ReasonerConfig::OpenAi { endpoint, .. } = config else {
            bail!("the store's reasoner is the deterministic one: there is no model to judge pairs");
        };
        if !is_loopback(&endpoint.base_url) {
            bail!("the pair judge measured here must run on this machine, not at {}", endpoint.base_url);
        }
        Ok(PairJudgeOnly { model, calls: AtomicU64::new(0) })
    }

    /// How many judgements were asked of the model.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Whether `base_url` names this machine: its host (after any user, before any port or path)
/// is `localhost`, an address in 127.0.0.0/8, or `::1`.
fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback())
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
        self.calls.fetch_add(1, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn only_this_machine_is_loopback() {
        for local in ["http://127.0.0.1:8080/v1", "http://localhost/v1", "http://[::1]:9000/v1", "http://127.0.0.2"] {
            assert!(is_loopback(local), "{local}");
        }
        for remote in [
            "http://localhost.example.com/v1",
            "http://127.0.0.1.example.com/v1",
            "http://127.0.0.1@example.com/v1",
            "https://api.openai.com/v1",
            "http://[::2]/v1",
        ] {
            assert!(!is_loopback(remote), "{remote}");
        }
    }
}
