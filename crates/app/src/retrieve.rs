//! Retrieve [SPEC §5]: scope first, then candidates, then budgets, then verified bodies.
//!
//! 1. the read chain (from the trusted caller) and the request become one `VisibilityFilter`;
//! 2. full-text and vector candidates are fetched *inside* that filter;
//! 3. they are fused by reciprocal rank, re-checked against the authoritative rows (an index
//!    that lags can only lose candidates, never leak them);
//! 4. broad questions put summaries first, exact ones use leaves only;
//! 5. conflicts between layers about the same subject are marked with the layer that wins;
//! 6. budgets per layer and in total select what fits, reading bodies from disk and verifying
//!    each against its SHA-256;
//! 7. the pack says what was found, why, and what is missing.

use std::collections::{BTreeMap, HashMap};

use arbor_domain::budget::{BudgetItem, DEFAULT_MAX_RESULTS};
use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::model::{Category, LeafRecord, MemoryKind, SummaryRecord, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::ranking::{self, Fused, RRF_K, rank_by_score, reciprocal_rank_fusion};
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::{Sensitivity, may_leave_the_machine};
use arbor_domain::text::truncate_chars;
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};
use arbor_ports::{
    EmbedderId, Embedding, HeuristicReasoner, Locality, QueryRequest, TermSelection, TextQuery, VectorQuery,
};
use serde::{Deserialize, Serialize};

use crate::{AppResult, Arbor};

/// How many candidates each channel contributes before fusion.
const CANDIDATE_POOL: usize = 50;

/// How many candidate rows are read from the store at a time.
const LOAD_WINDOW: usize = 16;

/// How a question should be answered from memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetrieveMode {
    /// Decide from the question.
    #[default]
    Auto,
    /// Summaries first: "what do we know about…".
    BroadSummary,
    /// Leaves only: "when did…", "what is the…".
    ExactEvidence,
}

/// A retrieval request. Which namespaces it may read is not part of it: that comes from the
/// caller's read chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrieveRequest {
    pub query: String,
    #[serde(default)]
    pub mode: RetrieveMode,
    #[serde(default)]
    pub max_results: Option<usize>,
    #[serde(default)]
    pub max_chars: Option<usize>,
    #[serde(default)]
    pub as_of: Option<Timestamp>,
    #[serde(default)]
    pub categories: Vec<Category>,
    #[serde(default)]
    pub tree: Option<TreeId>,
    #[serde(default)]
    pub kinds: Vec<MemoryKind>,
    #[serde(default)]
    pub time_range: Option<(Option<Timestamp>, Option<Timestamp>)>,
    #[serde(default = "yes")]
    pub include_leaves: bool,
    /// Honoured only if the trusted caller enabled restricted reads for this context.
    #[serde(default)]
    pub include_restricted: bool,
    /// The query's embedding, if the caller already has one from the configured embedder;
    /// otherwise the query is embedded here.
    #[serde(skip)]
    pub query_embedding: Option<Vec<f32>>,
}

fn yes() -> bool {
    true
}

impl RetrieveRequest {
    pub fn new(query: impl Into<String>) -> RetrieveRequest {
        RetrieveRequest {
            query: query.into(),
            mode: RetrieveMode::Auto,
            max_results: None,
            max_chars: None,
            as_of: None,
            categories: Vec::new(),
            tree: None,
            kinds: Vec::new(),
            time_range: None,
            include_leaves: true,
            include_restricted: false,
            query_embedding: None,
        }
    }
}

/// What the question was taken to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Intent {
    pub mode: RetrieveMode,
    pub reason: String,
}

/// Per-channel evidence for why an item was picked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceScores {
    pub text_rank: Option<usize>,
    pub vector_rank: Option<usize>,
    pub fused: f32,
}

/// One piece of evidence in a pack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceItem {
    pub node_id: NodeId,
    pub node: NodeKind,
    /// Leaves: the version within the memory's lineage.
    pub version: Option<u32>,
    pub namespace: Namespace,
    /// 0 is the most specific layer of the read chain.
    pub layer: usize,
    pub tree_id: TreeId,
    pub kind: Option<MemoryKind>,
    pub title: String,
    pub text: String,
    pub observed_at: Timestamp,
    pub validity: Validity,
    /// e.g. `message:D1:3`.
    pub source: Option<String>,
    pub sensitivity: Sensitivity,
    pub scores: EvidenceScores,
    pub why: String,
    /// The older version this one replaced.
    pub supersedes: Option<LeafId>,
    /// Set when a more specific or more trusted layer's memory about the same subject wins.
    pub overridden_by: Option<String>,
}

/// A candidate that was considered but left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedItem {
    pub node_id: NodeId,
    pub reason: String,
}

/// How much was looked at and how much came back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    pub namespaces: Vec<String>,
    pub candidates: usize,
    pub dropped_by_store_check: usize,
    pub selected: usize,
    pub chars: usize,
    pub bodies_read: usize,
    /// Candidates never read from the store: the budget was spent before their turn, or
    /// their layer's share was.
    pub unread: usize,
    pub skipped: Vec<SkippedItem>,
}

/// The retrieval pack [SPEC §5]: stable, serializable, explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalPack {
    pub query: String,
    pub as_of: Option<Timestamp>,
    pub intent: Intent,
    pub known_facts: Vec<String>,
    pub constraints: Vec<String>,
    pub recent: Vec<String>,
    pub gaps: Vec<String>,
    pub recommended_next_source: Option<String>,
    pub evidence: Vec<EvidenceItem>,
    pub coverage: Coverage,
}

enum Record {
    Leaf(LeafRecord),
    Summary(SummaryRecord),
}

impl Record {
    fn facts(&self) -> NodeFacts {
        match self {
            Record::Leaf(l) => NodeFacts::of_leaf(l),
            Record::Summary(s) => NodeFacts::of_summary(s),
        }
    }

    fn namespace(&self) -> &Namespace {
        match self {
            Record::Leaf(l) => &l.namespace,
            Record::Summary(s) => &s.namespace,
        }
    }
}

impl Arbor {
    /// The question's intent: as the caller asked, else as the reasoner reads it (the
    /// deterministic one when the question may not leave the machine or the answer is
    /// unusable).
    async fn classify(&self, request: &RetrieveRequest) -> Intent {
        let requested = |mode| Intent { mode, reason: "requested".into() };
        let query = QueryRequest { query: request.query.clone() };
        let reasoner = &self.ports.reasoner;
        let read = match request.mode {
            RetrieveMode::BroadSummary => return requested(RetrieveMode::BroadSummary),
            RetrieveMode::ExactEvidence => return requested(RetrieveMode::ExactEvidence),
            RetrieveMode::Auto
                if reasoner.locality() == Locality::Remote && !may_leave_the_machine(None, &request.query) =>
            {
                HeuristicReasoner.classify_now(&query)
            }
            RetrieveMode::Auto => match self.ask_reasoner("classify_query", reasoner.classify_query(&query)).await {
                Some(intent) => intent,
                None => HeuristicReasoner.classify_now(&query),
            },
        };
        let mode = if read.broad { RetrieveMode::BroadSummary } else { RetrieveMode::ExactEvidence };
        Intent { mode, reason: read.reason }
    }

    /// Answers a question from the memories `chain` may read.
    pub async fn retrieve(&self, chain: &ReadChain, request: &RetrieveRequest) -> AppResult<RetrievalPack> {
        let now = self.now();
        let intent = self.classify(request).await;
        let mut filter = VisibilityFilter::for_chain(chain, now);
        filter.as_of = request.as_of;
        filter.include_restricted = request.include_restricted;
        filter.categories = request.categories.clone();
        filter.tree = request.tree.clone();
        filter.kinds = request.kinds.clone();
        filter.time_range = request.time_range;
        filter.node_kinds = match (intent.mode, request.include_leaves) {
            (RetrieveMode::ExactEvidence, _) => vec![NodeKind::Leaf],
            (_, true) => vec![NodeKind::Summary, NodeKind::Leaf],
            (_, false) => vec![NodeKind::Summary],
        };

        // Candidates, inside the filter.
        let index = &self.ports.index;
        let mut channels: Vec<(f32, Vec<NodeId>)> = Vec::new();
        let mut text_channel = None;
        // Where each candidate is filed, as the index reports it: enough to pass over one whose
        // layer's budget is spent without reading it.
        let mut namespace_of: HashMap<NodeId, Namespace> = HashMap::new();
        if index.capabilities().full_text && !request.query.trim().is_empty() {
            let query = TextQuery {
                filter: filter.clone(),
                text: request.query.clone(),
                limit: CANDIDATE_POOL,
                terms: TermSelection::All,
            };
            let hits = index.search_text(&query).await?;
            text_channel = Some(channels.len());
            let scored: Vec<(NodeId, f32)> = hits.iter().map(|h| (h.id.clone(), h.score)).collect();
            channels.push((1.0, rank_by_score(&scored)));
            namespace_of.extend(hits.into_iter().map(|h| (h.id, h.namespace)));
        }
        // One vector channel per embedder serving the index: the configured one, and while a
        // re-embedding is under way the one it replaces, whose vectors still cover the nodes not
        // yet re-embedded. Each compares only with its own vectors.
        let query_may_leave = may_leave_the_machine(None, &request.query);
        let mut vector_channels = Vec::new();
        let mut searched: Vec<EmbedderId> = Vec::new();
        // And, for a request that includes restricted memories, the local embedder that gave
        // them their vectors when the configured one may not see them.
        let restricted = self.restricted_embedder.iter().filter(|_| request.include_restricted);
        let serving = std::iter::once((&self.ports.embedder, request.query_embedding.as_ref()))
            .chain(self.previous_embedder.iter().map(|previous| (previous, None)))
            .chain(restricted.map(|local| (local, None)));
        for (embedder, given) in serving {
            // One channel per embedder: the same vectors twice would count twice in the fusion.
            if searched.contains(&embedder.id()) {
                continue;
            }
            searched.push(embedder.id());
            if !index.capabilities().vectors || !(query_may_leave || embedder.locality() == Locality::Local) {
                continue;
            }
            let vector = match given {
                Some(vector) => Some(vector.clone()),
                None => embedder.embed(std::slice::from_ref(&request.query)).await?.pop(),
            };
            if let Some(values) = vector.filter(|v| v.iter().any(|x| *x != 0.0)) {
                let query = VectorQuery {
                    filter: filter.clone(),
                    embedding: Embedding { embedder: embedder.id(), values },
                    limit: CANDIDATE_POOL,
                };
                let hits = index.search_vector(&query).await?;
                vector_channels.push(channels.len());
                let scored: Vec<(NodeId, f32)> = hits.iter().map(|h| (h.id.clone(), h.score)).collect();
                channels.push((1.0, ranking::vector_channel(&scored)));
                namespace_of.extend(hits.into_iter().map(|h| (h.id, h.namespace)));
            }
        }
        let fused = reciprocal_rank_fusion(&channels, RRF_K);

        // Summary-first for broad questions (a stable partition keeps rank order within each).
        let mut order: Vec<&Fused<NodeId>> = fused.iter().collect();
        if intent.mode == RetrieveMode::BroadSummary {
            order.sort_by_key(|f| f.key.as_leaf().is_some());
        }
        let max_results = request.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        let budget = self.policy.budget.with_total_at_most(Some(max_results), request.max_chars);

        // The authoritative rows decide: anything the index offers that the store does not
        // admit is dropped. Rows are read in rank order, a window at a time, only as far as
        // the budget can use them: as many as it could take at most now, and further windows
        // below only if those did not fill it.
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let wanted = budget.most_items(&scope);
        let mut ranked: Vec<(&Fused<NodeId>, Record)> = Vec::new();
        let mut cursor = 0;
        let mut dropped = 0;
        while ranked.len() < wanted && cursor < order.len() {
            let size = (wanted - ranked.len()).clamp(1, LOAD_WINDOW);
            let window = &order[cursor..(cursor + size).min(order.len())];
            cursor += window.len();
            let (loaded, missing) = self.load_window(&scope, &filter, window).await?;
            dropped += missing;
            ranked.extend(loaded);
        }

        // Conflicts between layers: the same subject answered in two namespaces.
        let mut overridden: BTreeMap<NodeId, String> = BTreeMap::new();
        let mut by_subject: BTreeMap<String, Vec<&LeafRecord>> = BTreeMap::new();
        for (_, record) in &ranked {
            if let Record::Leaf(leaf) = record
                && let Some(subject) = &leaf.subject
            {
                by_subject.entry(subject.as_str().to_owned()).or_default().push(leaf);
            }
        }
        for leaves in by_subject.values() {
            for a in leaves {
                for b in leaves {
                    if a.namespace == b.namespace || a.id >= b.id {
                        continue;
                    }
                    if let Some(verdict) = chain.resolve_conflict((&a.namespace, a.kind), (&b.namespace, b.kind)) {
                        let loser = if verdict.winner == a.namespace { b } else { a };
                        let rule = serde_json::to_value(verdict.rule).ok().and_then(|v| v.as_str().map(str::to_owned));
                        overridden
                            .insert(loser.node_id(), format!("{} ({})", verdict.winner, rule.unwrap_or_default()));
                    }
                }
            }
        }
        // Winners before losers, otherwise rank order.
        ranked.sort_by_key(|(candidate, _)| overridden.contains_key(&candidate.key));

        // Budgets, with verified bodies: a body is read only for an item that can still fit.
        let mut tracker = budget.tracker();
        let mut evidence = Vec::new();
        let mut skipped = Vec::new();
        let mut gaps = Vec::new();
        let mut bodies_read = 0;
        let mut passed_over = 0;
        let mut pending = ranked.into_iter();
        loop {
            let (candidate, record) = match pending.next() {
                Some(next) => next,
                None if cursor < order.len() && chain.namespaces().any(|ns| tracker.room_for(ns).is_ok()) => {
                    // The first rows did not fill the budget: read further down the ranking,
                    // only candidates whose layer still has room.
                    let mut window = Vec::with_capacity(LOAD_WINDOW);
                    while cursor < order.len() && window.len() < LOAD_WINDOW {
                        let candidate = order[cursor];
                        cursor += 1;
                        match namespace_of.get(&candidate.key) {
                            Some(namespace) if tracker.room_for(namespace).is_err() => passed_over += 1,
                            _ => window.push(candidate),
                        }
                    }
                    let (loaded, missing) = self.load_window(&scope, &filter, &window).await?;
                    dropped += missing;
                    pending = loaded.into_iter().collect::<Vec<_>>().into_iter();
                    continue;
                }
                None => break,
            };
            if tracker.is_full() {
                break;
            }
            if let Err(reason) = tracker.room_for(record.namespace()) {
                skipped.push(SkippedItem { node_id: candidate.key.clone(), reason: reason.explain().to_owned() });
                continue;
            }
            let text = match &record {
                Record::Leaf(leaf) => {
                    bodies_read += 1;
                    match self.read_body(&leaf.body_path, &leaf.body_sha256).await {
                        Ok(text) => text,
                        Err(error) => {
                            tracing::warn!(leaf = %leaf.id, %error, "body failed verification; left out of the pack");
                            gaps.push(format!("{} could not be read intact ({error}); run `arbor fsck`", leaf.id));
                            skipped.push(SkippedItem {
                                node_id: candidate.key.clone(),
                                reason: "body failed verification".into(),
                            });
                            continue;
                        }
                    }
                }
                Record::Summary(summary) => summary.summary.clone(),
            };
            let item = BudgetItem { namespace: record.namespace().clone(), chars: text.chars().count() };
            if let Err(reason) = tracker.offer(&item) {
                skipped.push(SkippedItem { node_id: candidate.key.clone(), reason: reason.explain().to_owned() });
                continue;
            }
            let layer = chain.precedence(record.namespace()).unwrap_or(usize::MAX);
            let rank_in = |channel: Option<usize>| {
                channel.and_then(|c| candidate.ranks.iter().find(|r| r.channel == c).map(|r| r.rank))
            };
            let scores = EvidenceScores {
                text_rank: rank_in(text_channel),
                vector_rank: vector_channels.iter().find_map(|&c| rank_in(Some(c))),
                fused: candidate.score,
            };
            let why = explain(&scores, layer, &record);
            evidence.push(match record {
                Record::Leaf(leaf) => EvidenceItem {
                    node_id: leaf.node_id(),
                    node: NodeKind::Leaf,
                    version: Some(leaf.version.get()),
                    layer,
                    tree_id: leaf.tree_id.clone(),
                    kind: Some(leaf.kind),
                    title: leaf.title.clone(),
                    text,
                    observed_at: leaf.observed_at,
                    validity: leaf.validity,
                    source: Some(leaf.provenance.source.short()),
                    sensitivity: leaf.sensitivity,
                    scores,
                    why,
                    supersedes: leaf.supersedes.clone(),
                    overridden_by: overridden.get(&leaf.node_id()).cloned(),
                    namespace: leaf.namespace,
                },
                Record::Summary(summary) => EvidenceItem {
                    node_id: summary.node_id(),
                    node: NodeKind::Summary,
                    version: None,
                    layer,
                    tree_id: summary.tree_id.clone(),
                    kind: None,
                    title: summary.title.clone(),
                    text,
                    observed_at: summary.time_range_end.unwrap_or(summary.sealed_at),
                    validity: Validity::ALWAYS,
                    source: None,
                    sensitivity: summary.sensitivity,
                    scores,
                    why,
                    supersedes: None,
                    overridden_by: None,
                    namespace: summary.namespace,
                },
            });
        }
        let tally = Tally {
            candidates: fused.len(),
            dropped_by_store_check: dropped,
            bodies_read,
            unread: passed_over + (order.len() - cursor),
            skipped,
        };
        Ok(assemble(request, intent, chain, evidence, tally, gaps))
    }
}

impl Arbor {
    /// Reads the rows of one window of candidates and keeps those the filter admits, in rank
    /// order; returns them and how many were dropped.
    async fn load_window<'a>(
        &self,
        scope: &[Namespace],
        filter: &VisibilityFilter,
        window: &[&'a Fused<NodeId>],
    ) -> AppResult<(Vec<(&'a Fused<NodeId>, Record)>, usize)> {
        let leaf_ids: Vec<LeafId> = window.iter().filter_map(|f| f.key.as_leaf().cloned()).collect();
        let summary_ids: Vec<SummaryId> = window.iter().filter_map(|f| f.key.as_summary().cloned()).collect();
        let mut records: BTreeMap<NodeId, Record> = BTreeMap::new();
        if !leaf_ids.is_empty() {
            for leaf in self.ports.store.leaves(scope, &leaf_ids).await? {
                records.insert(leaf.node_id(), Record::Leaf(leaf));
            }
        }
        if !summary_ids.is_empty() {
            for summary in self.ports.store.summaries(scope, &summary_ids).await? {
                records.insert(summary.node_id(), Record::Summary(summary));
            }
        }
        let mut kept = Vec::with_capacity(window.len());
        let mut dropped = 0;
        for candidate in window {
            match records.remove(&candidate.key) {
                Some(record) if filter.admits(&record.facts()) => kept.push((*candidate, record)),
                _ => dropped += 1,
            }
        }
        Ok((kept, dropped))
    }
}

/// Decides between summaries-first and leaves-only from the wording of the question.
fn explain(scores: &EvidenceScores, layer: usize, record: &Record) -> String {
    let mut parts = Vec::new();
    if let Some(rank) = scores.text_rank {
        parts.push(format!("full-text #{rank}"));
    }
    if let Some(rank) = scores.vector_rank {
        parts.push(format!("vector #{rank}"));
    }
    if let Record::Summary(s) = record {
        parts.push(format!("summary of {} nodes", s.children.len()));
    }
    parts.push(format!("layer {layer}"));
    parts.join(", ")
}

/// What a retrieval looked at, for the pack's coverage.
struct Tally {
    candidates: usize,
    dropped_by_store_check: usize,
    bodies_read: usize,
    unread: usize,
    skipped: Vec<SkippedItem>,
}

fn assemble(
    request: &RetrieveRequest,
    intent: Intent,
    chain: &ReadChain,
    evidence: Vec<EvidenceItem>,
    tally: Tally,
    mut gaps: Vec<String>,
) -> RetrievalPack {
    let line = |e: &EvidenceItem| {
        format!("{} [{}, {}]", truncate_chars(&e.title, 160), e.namespace, e.observed_at.strftime("%Y-%m-%d"))
    };
    let current = |e: &&EvidenceItem| e.node == NodeKind::Leaf && e.overridden_by.is_none();
    let known_facts = evidence
        .iter()
        .filter(current)
        .filter(|e| !matches!(e.kind, Some(MemoryKind::Constraint)))
        .take(8)
        .map(line)
        .collect();
    let constraints =
        evidence.iter().filter(current).filter(|e| e.kind == Some(MemoryKind::Constraint)).map(line).collect();
    let mut by_time: Vec<&EvidenceItem> = evidence.iter().filter(current).collect();
    by_time.sort_by(|a, b| b.observed_at.cmp(&a.observed_at).then_with(|| a.node_id.cmp(&b.node_id)));
    let recent = by_time.into_iter().take(3).map(line).collect();
    if evidence.is_empty() {
        gaps.push(format!("nothing readable in memory matches \"{}\"", truncate_chars(&request.query, 80)));
    }
    if evidence.iter().any(|e| e.sensitivity == Sensitivity::Sensitive) {
        gaps.push("some evidence is sensitive: confirm before repeating it".to_owned());
    }
    let recommended_next_source = match evidence.iter().find(|e| e.node == NodeKind::Leaf) {
        Some(top) => top.source.as_ref().map(|s| format!("verify against the source {s}")),
        None => Some("ask the user, or the system of record".to_owned()),
    };
    let chars = evidence.iter().map(|e| e.text.chars().count()).sum();
    let namespaces = chain
        .layers()
        .iter()
        .map(|l| match l.frozen_at {
            Some(at) => format!("{}@{}", l.namespace, at),
            None => l.namespace.to_string(),
        })
        .collect();
    RetrievalPack {
        query: request.query.clone(),
        as_of: request.as_of,
        intent,
        known_facts,
        constraints,
        recent,
        gaps,
        recommended_next_source,
        coverage: Coverage {
            namespaces,
            candidates: tally.candidates,
            dropped_by_store_check: tally.dropped_by_store_check,
            selected: evidence.len(),
            chars,
            bodies_read: tally.bodies_read,
            unread: tally.unread,
            skipped: tally.skipped,
        },
        evidence,
    }
}
