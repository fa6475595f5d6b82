//! One pass of the retrieval pipeline after understanding: walk the fused ranking, reading
//! rows only as far as the budget can use them (each re-checked against the store), let a
//! remote reranker or decay reorder what was read, mark layer conflicts, then fill the budgets
//! with verified bodies — for a broad question, summaries first and then only the leaves of
//! the branches they chose — and account for every candidate.

use std::collections::{BTreeMap, HashMap, HashSet};

use arbor_domain::budget::{BudgetItem, BudgetTracker, DEFAULT_MAX_RESULTS, RetrievalBudget};
use arbor_domain::entity::Entity;
use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::model::{LeafRecord, SummaryRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::ranking::Fused;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{CandidateOutcome, ConsideredNode, Locality};

use super::channels::{Candidates, ChannelKind};
use super::doubts::{Outdated, layer_conflicts, possibly_outdated};
use super::{
    Degradation, EvidenceItem, EvidenceScores, Gathered, Intent, LOAD_WINDOW, MAX_BRANCH_DEPTH, NodeRecord,
    RERANK_DEPTH, RetrieveMode, RetrieveRequest, SkippedItem, Tally, evidence_item, explain,
};
use crate::{AppError, AppResult, Arbor};

/// A retrieval's walk down its fused ranking: the order candidates are read in (summaries
/// first for a broad question), how far rows have been read, and what became of each one.
pub(super) struct Walk<'a> {
    order: Vec<&'a Fused<NodeId>>,
    cursor: usize,
    pub(super) outcomes: HashMap<NodeId, (CandidateOutcome, String)>,
    /// Candidates the index found mentioning the question's time window
    /// ([`Candidates::mention_the_window`]).
    pub(super) mention_the_window: &'a HashSet<NodeId>,
}

impl<'a> Walk<'a> {
    fn new(found: &'a Candidates, mode: RetrieveMode) -> Walk<'a> {
        // A stable partition keeps rank order within summaries and within leaves.
        let mut order: Vec<&Fused<NodeId>> = found.fused.iter().collect();
        if mode == RetrieveMode::BroadSummary {
            order.sort_by_key(|f| f.key.as_leaf().is_some());
        }
        Walk { order, cursor: 0, outcomes: HashMap::new(), mention_the_window: &found.mention_the_window }
    }

    fn exhausted(&self) -> bool {
        self.cursor >= self.order.len()
    }

    /// The next `size` candidates of the ranking.
    fn next(&mut self, size: usize) -> Vec<&'a Fused<NodeId>> {
        let window = self.order[self.cursor..(self.cursor + size).min(self.order.len())].to_vec();
        self.cursor += window.len();
        window
    }

    /// The next window of candidates whose layer still has room (as the index files them),
    /// passing over the others unread.
    fn next_with_room(&mut self, found: &Candidates, tracker: &BudgetTracker<'_>) -> Vec<&'a Fused<NodeId>> {
        let mut window = Vec::with_capacity(LOAD_WINDOW);
        while !self.exhausted() && window.len() < LOAD_WINDOW {
            let candidate = self.order[self.cursor];
            self.cursor += 1;
            match found.namespace_of.get(&candidate.key) {
                Some(namespace) if tracker.room_for(namespace).is_err() => {}
                _ => window.push(candidate),
            }
        }
        window
    }

    fn skip(&mut self, candidate: &Fused<NodeId>, reason: String) {
        self.outcomes.insert(candidate.key.clone(), (CandidateOutcome::Skipped, reason));
    }

    /// What became of every candidate, in rank order: the pack's coverage and the recorded
    /// retrieval's considered nodes.
    fn account(mut self, found: &Candidates, bodies_read: usize) -> (Tally, Vec<ConsideredNode>) {
        let mut tally = Tally {
            candidates: found.fused.len(),
            bodies_read,
            below_relevance_floor: found.unrelated,
            ..Tally::default()
        };
        let mut considered = Vec::with_capacity(found.fused.len());
        for candidate in &found.fused {
            let (outcome, reason) = self
                .outcomes
                .remove(&candidate.key)
                .unwrap_or((CandidateOutcome::Unread, "the budget was spent first".into()));
            match outcome {
                CandidateOutcome::Dropped => tally.dropped_by_store_check += 1,
                CandidateOutcome::Unread => tally.unread += 1,
                CandidateOutcome::Skipped => {
                    tally.skipped.push(SkippedItem { node_id: candidate.key.clone(), reason: reason.clone() })
                }
                CandidateOutcome::Selected => {}
            }
            considered.push(ConsideredNode {
                node: candidate.key.clone(),
                namespace: found.namespace_of.get(&candidate.key).cloned(),
                channels: found.named_ranks(candidate),
                fused: candidate.score,
                outcome,
                reason,
            });
        }
        (tally, considered)
    }
}

/// What one retrieval pass decides by, beside its walk.
struct Pass<'a> {
    chain: &'a ReadChain,
    scope: &'a [Namespace],
    filter: &'a VisibilityFilter,
    mode: RetrieveMode,
    found: &'a Candidates,
    /// Each shown candidate's place in a model reranker's order.
    reranked: HashMap<NodeId, usize>,
    /// Candidates a more specific layer overrides, with why.
    overridden: BTreeMap<NodeId, String>,
    /// Candidates a newer one may have replaced, with its id and the attribute.
    outdated: BTreeMap<NodeId, Outdated>,
}

/// What filling the budgets chose.
#[derive(Default)]
struct Chosen {
    evidence: Vec<EvidenceItem>,
    gaps: Vec<String>,
    degraded: Vec<Degradation>,
    bodies_read: usize,
}

/// Moves each candidate that may be outdated to just after the newer memory that may replace
/// it, when that one ranks below it; one whose newer memory is not ranked keeps its place.
fn newer_first(ranked: &mut Vec<(&Fused<NodeId>, NodeRecord)>, outdated: &BTreeMap<NodeId, Outdated>) {
    let mut at = 0;
    let mut moves = 0;
    while at < ranked.len() && moves <= ranked.len() {
        let key = ranked[at].0.key.clone();
        let newer = outdated.get(&key).map(|o| NodeId::Leaf(o.by.clone()));
        let newer_at = newer.and_then(|n| ranked.iter().position(|(c, _)| c.key == n));
        match newer_at {
            Some(newer_at) if newer_at > at => {
                let item = ranked.remove(at);
                ranked.insert(newer_at, item);
                moves += 1;
            }
            _ => at += 1,
        }
    }
}

impl Arbor {
    /// Of the memories that marked a ranked leaf as possibly outdated at write time, those still
    /// current and visible to the caller: a mark whose newer memory was forgotten, retired or
    /// lies outside the chain says nothing.
    async fn current_doubters(
        &self,
        scope: &[Namespace],
        filter: &VisibilityFilter,
        ranked: &[(&Fused<NodeId>, NodeRecord)],
    ) -> AppResult<std::collections::BTreeSet<LeafId>> {
        let marked: Vec<LeafId> = ranked
            .iter()
            .filter_map(|(_, record)| match record {
                NodeRecord::Leaf(leaf) => leaf.claims.doubt.as_ref().map(|d| d.by.clone()),
                NodeRecord::Summary(_) => None,
            })
            .collect();
        if marked.is_empty() {
            return Ok(Default::default());
        }
        let rows = self.ports.store.leaves(scope, &marked).await?;
        Ok(rows.into_iter().filter(|leaf| filter.admits(&NodeFacts::of_leaf(leaf))).map(|leaf| leaf.id).collect())
    }

    /// One pass of the pipeline after understanding: candidates inside `filter`, rows
    /// re-checked, conflicts marked, budgets applied, bodies verified.
    pub(super) async fn gather(
        &self,
        chain: &ReadChain,
        request: &RetrieveRequest,
        intent: &Intent,
        filter: &VisibilityFilter,
        entities: &[Entity],
    ) -> AppResult<Gathered> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let found = self.candidates(request, intent.focus, filter, entities, &scope).await?;
        let mut walk = Walk::new(&found, intent.mode);
        let max_results = request.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        let budget = self.policy.budget.with_total_at_most(Some(max_results), request.max_chars);
        let (mut ranked, reranked) = self.read_head(request, filter, &scope, &budget, &mut walk).await?;
        let mut degraded = found.degraded.clone();
        if let Err(reason) = &reranked {
            degraded.push(Degradation { part: "rerank".into(), reason: reason.clone() });
        }
        let reranked = reranked.unwrap_or_default();
        if intent.mode == RetrieveMode::BroadSummary {
            // The model orders by relevance alone; a broad question still reads summaries first.
            ranked.sort_by_key(|(candidate, _)| candidate.key.as_leaf().is_some());
        }
        let overridden = layer_conflicts(chain, &ranked);
        let doubters = self.current_doubters(&scope, filter, &ranked).await?;
        let outdated = possibly_outdated(&request.query, &ranked, &doubters);
        // Winners before losers, otherwise rank order; a memory that may be outdated right
        // after the newer one (never pushed to the end, where a budget would leave it out).
        ranked.sort_by_key(|(candidate, _)| overridden.contains_key(&candidate.key));
        newer_first(&mut ranked, &outdated);
        let pass =
            Pass { chain, scope: &scope, filter, mode: intent.mode, found: &found, reranked, overridden, outdated };
        let chosen = self.fill_budgets(&pass, &budget, ranked, &mut walk).await?;
        let (tally, considered) = walk.account(&found, chosen.bodies_read);
        degraded.extend(chosen.degraded);
        Ok(Gathered { evidence: chosen.evidence, tally, gaps: chosen.gaps, degraded, considered })
    }

    /// The authoritative rows decide: anything the index offers that the store does not admit
    /// is dropped. Rows are read in rank order, a window at a time, as many as the budget could
    /// take at most now (further windows are read later only if those do not fill it). A
    /// model reranker (a remote reasoner) reorders the head of the ranking, so that much is
    /// read first; without one, decay reorders what was read.
    async fn read_head<'a>(
        &self,
        request: &RetrieveRequest,
        filter: &VisibilityFilter,
        scope: &[Namespace],
        budget: &RetrievalBudget,
        walk: &mut Walk<'a>,
    ) -> AppResult<(Vec<(&'a Fused<NodeId>, NodeRecord)>, Result<HashMap<NodeId, usize>, String>)> {
        let model_rerank = self.ports.reasoner.locality() == Locality::Remote;
        let wanted = match model_rerank {
            true => budget.most_items(scope).max(RERANK_DEPTH),
            false => budget.most_items(scope),
        };
        let mut ranked: Vec<(&Fused<NodeId>, NodeRecord)> = Vec::new();
        while ranked.len() < wanted && !walk.exhausted() {
            let window = walk.next((wanted - ranked.len()).clamp(1, LOAD_WINDOW));
            ranked.extend(self.load_window(scope, filter, &window, walk).await?);
        }
        let reranked = match model_rerank {
            true => self.rerank_with_model(&request.query, &mut ranked).await,
            false => {
                self.decay(filter, &mut ranked);
                Ok(HashMap::new())
            }
        };
        Ok((ranked, reranked))
    }

    /// Budgets, with verified bodies: a body is read only for an item that can still fit. For
    /// a broad question, once summaries are chosen, leaves are read only inside their branches:
    /// the traversal drills down instead of hydrating the whole corpus. When the rows read so
    /// far run out with room left, rows further down the ranking are read, only for layers that
    /// still have room.
    async fn fill_budgets<'a>(
        &self,
        pass: &Pass<'_>,
        budget: &RetrievalBudget,
        ranked: Vec<(&'a Fused<NodeId>, NodeRecord)>,
        walk: &mut Walk<'a>,
    ) -> AppResult<Chosen> {
        let mut branches = Branches::default();
        let mut tracker = budget.tracker();
        let mut chosen = Chosen::default();
        let mut pending = ranked.into_iter();
        loop {
            let (candidate, record) = match pending.next() {
                Some(next) => next,
                None if !walk.exhausted() && pass.chain.namespaces().any(|ns| tracker.room_for(ns).is_ok()) => {
                    let window = walk.next_with_room(pass.found, &tracker);
                    let loaded = self.load_window(pass.scope, pass.filter, &window, walk).await?;
                    pending = loaded.into_iter().collect::<Vec<_>>().into_iter();
                    continue;
                }
                None => break,
            };
            if tracker.is_full() {
                break;
            }
            if let Err(reason) = tracker.room_for(record.namespace()) {
                walk.skip(candidate, reason.explain().to_owned());
                continue;
            }
            if let NodeRecord::Leaf(leaf) = &record
                && !branches.admits(leaf)
            {
                walk.skip(candidate, "outside the branches the summaries chose".into());
                continue;
            }
            let Some(text) = self.hydrate(&record, &mut chosen).await else {
                walk.skip(candidate, "body failed verification".into());
                continue;
            };
            let item = BudgetItem { namespace: record.namespace().clone(), chars: text.chars().count() };
            if let Err(reason) = tracker.offer(&item) {
                walk.skip(candidate, reason.explain().to_owned());
                continue;
            }
            if let NodeRecord::Summary(summary) = &record
                && pass.mode == RetrieveMode::BroadSummary
            {
                branches.open(self, pass.scope, summary).await?;
            }
            let layer = pass.chain.precedence(record.namespace()).unwrap_or(usize::MAX);
            let scores = scores_of(pass, candidate);
            let why = explain(&scores, layer, &record);
            walk.outcomes.insert(candidate.key.clone(), (CandidateOutcome::Selected, why.clone()));
            let conflict = pass.overridden.get(&candidate.key).cloned();
            let outdated = pass.outdated.get(&candidate.key).cloned();
            chosen.evidence.push(evidence_item(record, text, layer, scores, why, conflict, outdated));
        }
        Ok(chosen)
    }

    /// The text a record brings to the pack: a leaf's body, read and verified (and counted:
    /// the pack says how many bodies it verified), or a summary's text. A body that fails
    /// verification is left out, and the pack's gaps say so.
    async fn hydrate(&self, record: &NodeRecord, chosen: &mut Chosen) -> Option<String> {
        match record {
            NodeRecord::Leaf(leaf) => match self.read_body(&leaf.body_path, &leaf.body_sha256).await {
                Ok(text) => {
                    chosen.bodies_read += 1;
                    Some(text)
                }
                // A file changed since it was written — most often a person editing it — is
                // answered from what the store recorded of it (the start of its text), never
                // dropped without a word; a missing one cannot be.
                Err(AppError::Port(arbor_ports::Error::Integrity { .. })) => {
                    tracing::warn!(leaf = %leaf.id, "body changed on disk since it was written; answering from its row");
                    chosen.gaps.push(format!(
                        "{}'s file changed since it was written (edited by hand?); this is what the store recorded — \
                         `arbor fsck --adopt-edits` makes an edit the memory's next version",
                        leaf.id
                    ));
                    let reason = "the body changed on disk; the recorded summary stands in".to_owned();
                    chosen.degraded.push(Degradation { part: format!("body:{}", leaf.id), reason });
                    Some(leaf.summary.clone())
                }
                Err(error) => {
                    tracing::warn!(leaf = %leaf.id, error = %arbor_ports::with_causes(&error), "body failed verification; left out of the pack");
                    chosen.gaps.push(format!("{} could not be read intact; run `arbor fsck`", leaf.id));
                    let reason = "the body could not be read".to_owned();
                    chosen.degraded.push(Degradation { part: format!("body:{}", leaf.id), reason });
                    None
                }
            },
            NodeRecord::Summary(summary) => Some(summary.summary.clone()),
        }
    }
}

/// A chosen candidate's ranks in each channel, its model rank and its fused score.
fn scores_of(pass: &Pass<'_>, candidate: &Fused<NodeId>) -> EvidenceScores {
    let found = pass.found;
    EvidenceScores {
        text_rank: found.rank_in(candidate, ChannelKind::FullText),
        vector_rank: found.rank_in(candidate, ChannelKind::Vector),
        entity_rank: found.rank_in(candidate, ChannelKind::Entity),
        kind_rank: found.rank_in(candidate, ChannelKind::Kind),
        time_rank: found.rank_in(candidate, ChannelKind::Time),
        context_of_rank: found.rank_in(candidate, ChannelKind::Tree),
        model_rank: pass.reranked.get(&candidate.key).copied(),
        similarity: found.similarity.get(&candidate.key).copied(),
        fused: candidate.score,
    }
}

/// The branches a broad question drills into: the subtrees of the summaries it selected.
#[derive(Default)]
struct Branches {
    opened: bool,
    summaries: HashSet<SummaryId>,
}

impl Branches {
    /// Adds `summary` and the summaries below it (a few levels at most: a tree is shallow).
    async fn open(&mut self, arbor: &Arbor, scope: &[Namespace], summary: &SummaryRecord) -> AppResult<()> {
        self.opened = true;
        self.summaries.insert(summary.id.clone());
        let mut level: Vec<SummaryId> = summary.children.iter().filter_map(|c| c.as_summary().cloned()).collect();
        for _ in 0..MAX_BRANCH_DEPTH {
            level.retain(|id| self.summaries.insert(id.clone()));
            if level.is_empty() {
                break;
            }
            let below = arbor.ports.store.summaries(scope, &level).await?;
            level = below.iter().flat_map(|s| s.children.iter().filter_map(|c| c.as_summary().cloned())).collect();
        }
        Ok(())
    }

    /// Whether a leaf may be read: before any branch is chosen, every leaf; after, the leaves
    /// inside a chosen branch, and the unsealed ones (the newest memories, which no summary
    /// covers yet, so no branch could lead to them).
    fn admits(&self, leaf: &LeafRecord) -> bool {
        !self.opened || leaf.parent.as_ref().is_none_or(|parent| self.summaries.contains(parent))
    }
}
