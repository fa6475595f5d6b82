//! Retrieve [design §retrieval]: scope first, then understanding, candidates, budgets, verified bodies.
//!
//! 1. the read chain (from the trusted caller) and the request become one `VisibilityFilter`;
//! 2. the question is understood (`understand.rs`): its intent, a time range its words set
//!    (which narrows the filter), the known entities it names;
//! 3. candidates come from every channel *inside* that filter (`channels.rs`): full text,
//!    vectors, the named entities' trees, and tree structure around the strongest hits; they
//!    are fused and re-checked against the authoritative rows (an index that lags can only
//!    lose candidates, never leak them);
//! 4. broad questions put summaries first and drill into the chosen branches' leaves; exact
//!    ones use leaves only;
//! 5. conflicts between layers about the same subject are marked with the layer that wins;
//! 6. budgets per layer and in total select what fits, reading bodies from disk and verifying
//!    each against its SHA-256;
//! 7. the pack says what was found, why, and what is missing; on request a `ContextSnapshot`
//!    records it (`record.rs`).

mod channels;
mod compact;
mod doubts;
pub(crate) mod query_vectors;
mod select;
mod snapshot;
mod understand;

use std::collections::{BTreeMap, HashMap, HashSet};

use arbor_domain::id::{LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::model::{Category, LeafRecord, MemoryKind, SummaryRecord, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::ranking::Fused;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::sensitivity::may_be_given_to;
use arbor_domain::text::truncate_chars;
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::time_expr::TimeRange;
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};
use arbor_ports::{CandidateOutcome, ConsideredNode, QueryFocus, RerankCandidate, RerankRequest};
use serde::{Deserialize, Serialize};

pub use self::compact::{CompactMemory, CompactOptions, CompactPack, estimated_tokens};
use self::doubts::Outdated;
pub use self::snapshot::RetrievalExplanation;
pub use self::understand::{Understood, UnderstoodTime};
use crate::{AppResult, Arbor};

/// How many candidate rows are read from the store at a time.
const LOAD_WINDOW: usize = 16;

/// How many of the best candidates a model reranker (when configured) puts in order.
const RERANK_DEPTH: usize = 20;

/// How many levels below a chosen summary a broad question drills.
const MAX_BRANCH_DEPTH: usize = 4;

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
    /// Keep a `ContextSnapshot` of this retrieval (what was considered, selected and why) and
    /// its access records; the pack's `retrieval_id` names it for `show_retrieval`.
    #[serde(default)]
    pub record: bool,
    /// Leave out what the vectors alone found below their embedder's measured relevance floor
    /// ([`arbor_domain::ranking::relevance_floor`]), so a question memory knows nothing about
    /// is answered "nothing relevant" rather than with whatever lies closest. On by default.
    #[serde(default = "yes")]
    pub relevance_floor: bool,
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
            record: false,
            relevance_floor: true,
            query_embedding: None,
        }
    }
}

/// What the question was taken to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Intent {
    pub mode: RetrieveMode,
    /// What kind of answer it looks for: general, temporal, or a preference/constraint lookup
    /// (which adds a channel over those kinds of memory).
    pub focus: QueryFocus,
    pub reason: String,
}

/// Per-channel evidence for why an item was picked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceScores {
    pub text_rank: Option<usize>,
    /// The best rank among the vector channels (one per serving embedder).
    pub vector_rank: Option<usize>,
    /// The best rank among the channels of entities the question names.
    pub entity_rank: Option<usize>,
    /// The rank in the preference-and-constraint channel (questions with that focus).
    pub kind_rank: Option<usize>,
    /// The rank among the memories that mention the question's time window.
    pub time_rank: Option<usize>,
    /// Set for a node found next to a strong hit in its tree: that hit's fused rank.
    pub context_of_rank: Option<usize>,
    /// Its place in a model reranker's order, when one is configured and saw it.
    pub model_rank: Option<usize>,
    /// Its best similarity to the question in a vector channel (-1 to 1), when one found it.
    #[serde(serialize_with = "four_places_or_none")]
    pub similarity: Option<f32>,
    #[serde(serialize_with = "four_places")]
    pub fused: f32,
}

/// A score as a reader wants it, `0.6429` rather than `0.6428571343421936` (what an `f32` reads
/// as once widened to JSON's `f64`).
fn four_places<S: serde::Serializer>(value: &f32, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((f64::from(*value) * 1e4).round() / 1e4)
}

fn four_places_or_none<S: serde::Serializer>(value: &Option<f32>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => four_places(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// Whether memory had anything bearing on the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Evidence was found.
    Found,
    /// Nothing readable in the caller's scope bears on the question. With `degraded` empty,
    /// that is a finding about memory, not a failure.
    NothingRelevant,
}

/// A part of retrieval that did not run as configured, so the pack may be missing what it
/// would have found: a vector channel whose embedder failed, a model reranker that fell back,
/// a body that failed its check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Degradation {
    /// `vector:<embedder>`, `rerank`, `body:<leaf id>`, or `index` (index jobs waiting).
    pub part: String,
    pub reason: String,
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
    /// Set when a newer current memory may have replaced this one (the same subject and
    /// attribute, by their claims) but nothing proved it, so it was not retired: the newer
    /// one's id. Such an item ranks after the newer one and is not offered as a fact; the newer
    /// one is usually in the pack too, unless the budget left it out.
    pub possibly_outdated_by: Option<LeafId>,
    /// The attribute both fill ("employer", "has:manager"), when `possibly_outdated_by` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outdated_attribute: Option<String>,
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
    /// Bodies read and verified intact (one that failed is a gap, not counted here).
    pub bodies_read: usize,
    /// Candidates not used because the budget was spent before their turn, or their layer's
    /// share was. Their bodies were never read; their rows only when the head of the ranking
    /// was read at once (for a model reranker, or a window the budget did not exhaust).
    pub unread: usize,
    /// Candidates the vectors alone found below their relevance floor, left out unread.
    pub below_relevance_floor: usize,
    pub skipped: Vec<SkippedItem>,
}

/// The retrieval pack [design §pack]: stable, serializable, explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalPack {
    /// Set when the retrieval was recorded (`RetrieveRequest::record`).
    pub retrieval_id: Option<RetrievalId>,
    pub query: String,
    /// `found`, or `nothing_relevant`.
    pub answer: Answer,
    /// What did not run as configured; empty when retrieval ran whole. A pack with nothing
    /// found and something here is "could not look everywhere", never "memory holds nothing".
    pub degraded: Vec<Degradation>,
    pub as_of: Option<Timestamp>,
    pub intent: Intent,
    pub understood: Understood,
    /// For a question about a whole subject ("what do you know about Kofi?"), what memory
    /// believes about it now, one line per attribute (`claims::profile::lines`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    pub known_facts: Vec<String>,
    pub constraints: Vec<String>,
    pub recent: Vec<String>,
    pub gaps: Vec<String>,
    pub recommended_next_source: Option<String>,
    pub evidence: Vec<EvidenceItem>,
    pub coverage: Coverage,
}

enum NodeRecord {
    Leaf(LeafRecord),
    Summary(SummaryRecord),
}

impl NodeRecord {
    fn facts(&self) -> NodeFacts {
        match self {
            NodeRecord::Leaf(l) => NodeFacts::of_leaf(l),
            NodeRecord::Summary(s) => NodeFacts::of_summary(s),
        }
    }

    fn namespace(&self) -> &Namespace {
        match self {
            NodeRecord::Leaf(l) => &l.namespace,
            NodeRecord::Summary(s) => &s.namespace,
        }
    }
}

impl Arbor {
    /// Answers a question from the memories `chain` may read.
    pub async fn retrieve(&self, chain: &ReadChain, request: &RetrieveRequest) -> AppResult<RetrievalPack> {
        // Every search of the question is one read of the index ([`arbor_ports::one_read`]):
        // it sees what was committed before the question, and a server-backed index asks
        // what changed once, not once per search.
        arbor_ports::one_read(self.answer(chain, request)).await
    }

    async fn answer(&self, chain: &ReadChain, request: &RetrieveRequest) -> AppResult<RetrievalPack> {
        let now = self.now();
        let intent = self.classify(request).await;
        let mut filter = VisibilityFilter::for_chain(chain, now);
        filter.as_of = request.as_of;
        filter.include_restricted = request.include_restricted;
        filter.categories = request.categories.clone();
        filter.tree = request.tree.clone();
        filter.kinds = request.kinds.clone();
        filter.node_kinds = match (intent.mode, request.include_leaves) {
            (RetrieveMode::ExactEvidence, _) => vec![NodeKind::Leaf],
            (_, true) => vec![NodeKind::Summary, NodeKind::Leaf],
            (_, false) => vec![NodeKind::Summary],
        };

        // Query understanding: the time the question sets (unless the caller set one), and
        // the entities it names.
        let mut gaps = Vec::new();
        let mut understood = Understood::default();
        let entities = self.entities_named_in(chain, &request.query).await?;
        understood.entities = entities.iter().map(|e| format!("{} ({})", e.name, e.namespace)).collect();
        match request.time_range {
            Some((start, end)) => {
                filter.time_range = Some((start, end));
                let range = TimeRange { start, end };
                understood.time = Some(UnderstoodTime { phrase: "requested".into(), range, applied: true });
            }
            None => {
                let anchor = request.as_of.unwrap_or(now);
                understood.time = self.time_in_question(&request.query, &filter, anchor, &mut gaps).await?;
                filter.time_range = understood.time.as_ref().map(|t| inclusive(t.range));
            }
        }

        let mut gathered = self.gather(chain, request, &intent, &filter, &entities).await?;
        // A time read from the question's words narrows the search; when nothing at all lies
        // in it, the words probably meant something else ("moved here four years ago"), so the
        // search is widened to any time and the pack says so.
        if let Some(time) = understood.time.as_mut().filter(|t| t.phrase != "requested")
            && gathered.evidence.is_empty()
        {
            filter.time_range = None;
            gathered = self.gather(chain, request, &intent, &filter, &entities).await?;
            time.applied = false;
            gaps.push(format!(
                "nothing in memory from {} (\"{}\"); the evidence is from any time",
                time.range.describe(),
                time.phrase
            ));
        }
        gaps.append(&mut gathered.gaps);
        if let Some(degraded) = gathered.degraded.first() {
            gaps.push(format!(
                "retrieval was degraded ({}: {}); the pack may be incomplete",
                degraded.part, degraded.reason
            ));
        }
        let considered = std::mem::take(&mut gathered.considered);
        let mut pack = assemble(request, intent, understood, chain, gathered, gaps);
        // A question about a whole subject ("what do you know about Kofi?") gets what memory
        // believes about it now at the top of its pack; a question about a past time does not.
        // Nor one narrowed to a tree, a category or a kind: the profile spans them all.
        let narrowed = request.tree.is_some() || !request.categories.is_empty() || !request.kinds.is_empty();
        if request.as_of.is_none()
            && !narrowed
            && let Some(subject) = arbor_domain::claims::profile::asked_about(&request.query)
        {
            pack.profile = arbor_domain::claims::profile::lines(&self.profile(chain, Some(&subject)).await?);
        }
        if request.record {
            pack.retrieval_id = Some(self.record_retrieval(chain, request, &pack, considered).await?);
        }
        Ok(pack)
    }
}

impl Arbor {
    /// Lets the configured (remote) reasoner reorder the first [`RERANK_DEPTH`] loaded
    /// candidates by their titles and short summaries. Candidates whose text may not leave the
    /// machine (restricted, or holding a secret) are not shown and keep their places; the ones
    /// shown take the shown ones' places in the model's order, those it left out after the
    /// ones it ranked. Any unusable answer or a late one leaves the order as it was (a counted
    /// fallback, returned as the reason). Returns each shown candidate's place in the model's
    /// order.
    async fn rerank_with_model(
        &self,
        query: &str,
        ranked: &mut Vec<(&Fused<NodeId>, NodeRecord)>,
    ) -> Result<HashMap<NodeId, usize>, String> {
        let locality = self.ports.reasoner.locality();
        if !may_be_given_to(locality, None, query) {
            return Ok(HashMap::new());
        }
        let head = ranked.len().min(RERANK_DEPTH);
        let mut slots = Vec::new();
        let mut candidates = Vec::new();
        for (slot, (candidate, record)) in ranked[..head].iter().enumerate() {
            let (sensitivity, text) = match record {
                NodeRecord::Leaf(leaf) => (leaf.sensitivity, format!("{}\n{}", leaf.title, leaf.summary)),
                NodeRecord::Summary(summary) => {
                    (summary.sensitivity, format!("{}\n{}", summary.title, summary.summary))
                }
            };
            if may_be_given_to(locality, Some(sensitivity), &text) {
                slots.push(slot);
                candidates.push(RerankCandidate { id: candidate.key.clone(), text });
            }
        }
        if candidates.len() < 2 {
            return Ok(HashMap::new());
        }
        let request = RerankRequest { query: query.to_owned(), candidates };
        let Some(order) = self.ask_reasoner("rerank", self.ports.reasoner.rerank(&request)).await else {
            return Err("the model reranker failed or was late; the fused order stands".into());
        };
        let shown: HashSet<&NodeId> = request.candidates.iter().map(|c| &c.id).collect();
        let mut seen = HashSet::new();
        if order.iter().any(|id| !shown.contains(id) || !seen.insert(id)) {
            let why = "the order names a candidate it was not shown, or one twice";
            self.note_reasoner_fallback("rerank", &why);
            return Err(format!("the model reranker's answer was unusable ({why}); the fused order stands"));
        }
        let places: HashMap<NodeId, usize> = order.iter().enumerate().map(|(i, id)| (id.clone(), i + 1)).collect();
        let keys: Vec<NodeId> = ranked[..head].iter().map(|(candidate, _)| candidate.key.clone()).collect();
        // The shown slots, in the order their candidates should take them.
        let mut by_model = slots.clone();
        by_model.sort_by_key(|&slot| (places.get(&keys[slot]).copied().unwrap_or(usize::MAX), slot));
        let mut taken: Vec<Option<(&Fused<NodeId>, NodeRecord)>> = ranked.drain(..head).map(Some).collect();
        let mut next = by_model.into_iter();
        let mut head_order = Vec::with_capacity(head);
        for slot in 0..head {
            let from = if slots.contains(&slot) { next.next().unwrap_or(slot) } else { slot };
            head_order.extend(taken[from].take());
        }
        ranked.splice(0..0, head_order);
        Ok(places)
    }
}

impl Arbor {
    /// Decay [design §decay]: what was read is reordered by fused score times the age factor of
    /// `DecayPolicy::rank_factor` (episodes and plans age; preferences, constraints and
    /// procedures never by time alone; summaries not at all), relative to the instant each
    /// layer is read at (the question's, or a frozen layer's freeze). A stable sort, and none at all when no kind decays (the default).
    fn decay(&self, filter: &VisibilityFilter, ranked: &mut [(&Fused<NodeId>, NodeRecord)]) {
        if !self.policy.decay.decays_anything() {
            return;
        }
        let decayed = |(candidate, record): &(&Fused<NodeId>, NodeRecord)| match record {
            NodeRecord::Leaf(leaf) => {
                // The instant the leaf's layer is read at: the question's, or its freeze.
                let as_of = filter.layer(&leaf.namespace).map_or(filter.now, |layer| filter.effective_as_of(layer));
                candidate.score * self.policy.decay.rank_factor(leaf.kind, leaf.observed_at, as_of)
            }
            NodeRecord::Summary(_) => candidate.score,
        };
        ranked.sort_by(|a, b| decayed(b).total_cmp(&decayed(a)));
    }
}

/// The pack's constraints, each as `line` quotes it. One that may be outdated is still
/// listed, marked: the cost of following a rule that no longer holds is small beside that of
/// forgetting one that does ("allergic to tree nuts" doubted by a breakfast).
fn constraints_of(evidence: &[EvidenceItem], line: impl Fn(&EvidenceItem) -> String) -> Vec<String> {
    evidence
        .iter()
        .filter(|e| e.node == NodeKind::Leaf && e.overridden_by.is_none())
        .filter(|e| e.kind == Some(MemoryKind::Constraint))
        .map(|e| match e.possibly_outdated_by {
            Some(_) => format!("{} (may be outdated)", line(e)),
            None => line(e),
        })
        .collect()
}

fn evidence_item(
    record: NodeRecord,
    text: String,
    layer: usize,
    scores: EvidenceScores,
    why: String,
    overridden_by: Option<String>,
    outdated: Option<Outdated>,
) -> EvidenceItem {
    let (possibly_outdated_by, outdated_attribute) = match outdated {
        Some(Outdated { by, attribute }) => (Some(by), attribute),
        None => (None, None),
    };
    match record {
        NodeRecord::Leaf(leaf) => EvidenceItem {
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
            overridden_by,
            possibly_outdated_by,
            outdated_attribute,
            namespace: leaf.namespace,
        },
        NodeRecord::Summary(summary) => EvidenceItem {
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
            possibly_outdated_by: None,
            outdated_attribute: None,
            namespace: summary.namespace,
        },
    }
}

/// A half-open time range as the visibility filter's inclusive bounds, each clamped to the
/// instants a store can hold (nanoseconds in an `i64`: 1677-09-21 to 2262-04-11), so "in the
/// last 500 years" or "before 1500" filter instead of failing: nothing stored lies outside.
fn inclusive(range: TimeRange) -> (Option<Timestamp>, Option<Timestamp>) {
    let storable = |at: Timestamp| {
        let nanos = at.as_nanosecond().clamp(i128::from(i64::MIN), i128::from(i64::MAX));
        Timestamp::from_nanosecond(nanos).unwrap_or(at)
    };
    let end = range.end.map(|end| end.checked_sub(jiff::SignedDuration::from_nanos(1)).unwrap_or(end));
    (range.start.map(storable), end.map(storable))
}

impl Arbor {
    /// Reads the rows of one window of candidates and keeps those the filter admits, in rank
    /// order; the others are marked dropped in the walk's outcomes. A candidate the index found
    /// mentioning the question's time window is held to the filter at any time: the words
    /// place it in the window, whenever it was observed.
    async fn load_window<'a>(
        &self,
        scope: &[Namespace],
        filter: &VisibilityFilter,
        window: &[&'a Fused<NodeId>],
        walk: &mut select::Walk<'a>,
    ) -> AppResult<Vec<(&'a Fused<NodeId>, NodeRecord)>> {
        let any_time = VisibilityFilter { time_range: None, ..filter.clone() };
        let leaf_ids: Vec<LeafId> = window.iter().filter_map(|f| f.key.as_leaf().cloned()).collect();
        let summary_ids: Vec<SummaryId> = window.iter().filter_map(|f| f.key.as_summary().cloned()).collect();
        let mut records: BTreeMap<NodeId, NodeRecord> = BTreeMap::new();
        if !leaf_ids.is_empty() {
            for leaf in self.ports.store.leaves(scope, &leaf_ids).await? {
                records.insert(leaf.node_id(), NodeRecord::Leaf(leaf));
            }
        }
        if !summary_ids.is_empty() {
            for summary in self.ports.store.summaries(scope, &summary_ids).await? {
                records.insert(summary.node_id(), NodeRecord::Summary(summary));
            }
        }
        let mut kept = Vec::with_capacity(window.len());
        for candidate in window {
            match records.remove(&candidate.key) {
                Some(record)
                    if filter.admits(&record.facts())
                        || (walk.mention_the_window.contains(&candidate.key) && any_time.admits(&record.facts())) =>
                {
                    kept.push((*candidate, record))
                }
                _ => {
                    let reason = "the index offered it; the store does not admit it".to_owned();
                    walk.outcomes.insert(candidate.key.clone(), (CandidateOutcome::Dropped, reason));
                }
            }
        }
        Ok(kept)
    }
}

/// Why an item was picked, from its channels, layer and record.
fn explain(scores: &EvidenceScores, layer: usize, record: &NodeRecord) -> String {
    let mut parts = Vec::new();
    if let Some(rank) = scores.text_rank {
        parts.push(format!("full-text #{rank}"));
    }
    if let Some(rank) = scores.vector_rank {
        parts.push(format!("vector #{rank}"));
    }
    if let Some(rank) = scores.entity_rank {
        parts.push(format!("named entity #{rank}"));
    }
    if let Some(rank) = scores.kind_rank {
        parts.push(format!("preference/constraint #{rank}"));
    }
    if let Some(rank) = scores.time_rank {
        parts.push(format!("mentions the time asked about #{rank}"));
    }
    if let Some(rank) = scores.context_of_rank {
        parts.push(format!("next to hit #{rank} in its tree"));
    }
    if let Some(rank) = scores.model_rank {
        parts.push(format!("model rerank #{rank}"));
    }
    match record {
        NodeRecord::Summary(s) => parts.push(format!("summary of {} nodes", s.children.len())),
        NodeRecord::Leaf(leaf) => {
            if let Some(older) = &leaf.supersedes {
                parts.push(format!("current version; replaced {older}"));
            }
        }
    }
    parts.push(format!("layer {layer}"));
    parts.join(", ")
}

/// What one pass of the pipeline produced.
struct Gathered {
    evidence: Vec<EvidenceItem>,
    tally: Tally,
    gaps: Vec<String>,
    degraded: Vec<Degradation>,
    considered: Vec<ConsideredNode>,
}

/// What a retrieval looked at, for the pack's coverage.
#[derive(Default)]
struct Tally {
    candidates: usize,
    dropped_by_store_check: usize,
    bodies_read: usize,
    unread: usize,
    below_relevance_floor: usize,
    skipped: Vec<SkippedItem>,
}

fn assemble(
    request: &RetrieveRequest,
    intent: Intent,
    understood: Understood,
    chain: &ReadChain,
    gathered: Gathered,
    mut gaps: Vec<String>,
) -> RetrievalPack {
    let Gathered { evidence, tally, degraded, .. } = gathered;
    let line = |e: &EvidenceItem| {
        let mut line =
            format!("{} [{}, {}]", truncate_chars(&e.title, 160), e.namespace, e.observed_at.strftime("%Y-%m-%d"));
        if e.supersedes.is_some() {
            line.push_str(" (replaces an older version)");
        }
        // Flagged wherever it is quoted, not only on the evidence item.
        match e.sensitivity {
            Sensitivity::Sensitive => line.push_str(" (sensitive)"),
            Sensitivity::Restricted => line.push_str(" (restricted)"),
            Sensitivity::Normal => {}
        }
        line
    };
    let current =
        |e: &&EvidenceItem| e.node == NodeKind::Leaf && e.overridden_by.is_none() && e.possibly_outdated_by.is_none();
    let known_facts = evidence
        .iter()
        .filter(current)
        .filter(|e| !matches!(e.kind, Some(MemoryKind::Constraint)))
        .take(8)
        .map(line)
        .collect();
    let constraints = constraints_of(&evidence, line);
    let mut by_time: Vec<&EvidenceItem> = evidence.iter().filter(current).collect();
    by_time.sort_by(|a, b| b.observed_at.cmp(&a.observed_at).then_with(|| a.node_id.cmp(&b.node_id)));
    let recent = by_time.into_iter().take(3).map(line).collect();
    note_gaps(&evidence, answer_of(&evidence, &tally), &mut gaps);
    let recommended_next_source = match evidence.iter().find(|e| e.node == NodeKind::Leaf) {
        // A save or a person's own entry has no source beyond the memory itself.
        Some(top) => match top.source.as_deref() {
            Some("save" | "user-entry") | None => Some("ask the user if it matters".to_owned()),
            Some(source) => Some(format!("verify against the source {source}")),
        },
        None if evidence.is_empty() => Some("ask the user, or the system of record".to_owned()),
        None => Some("drill into the summaries' leaves: `arbor show <summary id>`".to_owned()),
    };
    let chars = evidence.iter().map(|e| e.text.chars().count()).sum();
    RetrievalPack {
        retrieval_id: None,
        query: request.query.clone(),
        answer: answer_of(&evidence, &tally),
        degraded,
        as_of: request.as_of,
        intent,
        understood,
        profile: Vec::new(),
        known_facts,
        constraints,
        recent,
        gaps,
        recommended_next_source,
        coverage: Coverage {
            namespaces: chain_names(chain),
            candidates: tally.candidates,
            dropped_by_store_check: tally.dropped_by_store_check,
            selected: evidence.len(),
            chars,
            bodies_read: tally.bodies_read,
            unread: tally.unread,
            below_relevance_floor: tally.below_relevance_floor,
            skipped: tally.skipped,
        },
        evidence,
    }
}

/// Whether memory bears on the question: evidence was chosen, or candidates that passed the
/// store's check were left out only because the budget ran out (too small a budget is not
/// "nothing relevant").
fn answer_of(evidence: &[EvidenceItem], tally: &Tally) -> Answer {
    if evidence.is_empty() && tally.unread == 0 && tally.skipped.is_empty() {
        Answer::NothingRelevant
    } else {
        Answer::Found
    }
}

/// What the pack says it could not do or should warn about: nothing found (or nothing that
/// fit the budget), sensitive evidence, evidence another layer overrides or a newer memory may
/// have replaced.
fn note_gaps(evidence: &[EvidenceItem], answer: Answer, gaps: &mut Vec<String>) {
    match (answer, evidence.is_empty()) {
        (Answer::NothingRelevant, _) => gaps.push("nothing relevant in memory for this question".to_owned()),
        (Answer::Found, true) => gaps.push("relevant memories exist but none fit the budget; raise it".to_owned()),
        (Answer::Found, false) => {}
    }
    if evidence.iter().any(|e| e.sensitivity == Sensitivity::Sensitive) {
        gaps.push("some evidence is sensitive: confirm before repeating it".to_owned());
    }
    for e in evidence.iter().filter(|e| e.overridden_by.is_some()) {
        gaps.push(format!("{} is overridden by {}", e.node_id, e.overridden_by.as_deref().unwrap_or_default()));
    }
    for e in evidence.iter() {
        if let Some(newer) = &e.possibly_outdated_by {
            let about = e.outdated_attribute.as_deref().map(arbor_domain::claims::catalogue::english_name);
            let about = about.map_or_else(|| "the same thing".to_owned(), |name| format!("the same {name}"));
            gaps.push(format!("{} may be outdated: {newer} is newer about {about}", e.node_id));
        }
    }
}

/// The read chain as `namespace[@frozen-at]`, most specific first.
fn chain_names(chain: &ReadChain) -> Vec<String> {
    chain
        .layers()
        .iter()
        .map(|l| match l.frozen_at {
            Some(at) => format!("{}@{}", l.namespace, at),
            None => l.namespace.to_string(),
        })
        .collect()
}
