//! Candidates from every channel, inside the filter [design §channels]: full text, one vector channel per
//! serving embedder, one full-text channel per named entity (inside that entity's trees), one
//! over preferences and constraints for a question about them, then tree structure — the turns
//! around the strongest hits, and for broad questions their sealed parents — merged by node id
//! and fused.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arbor_domain::entity::Entity;
use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::model::{Category, MemoryKind, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::ranking::{
    self, CONTEXT_ANCHORS, CONTEXT_SHARE, CONTEXT_TURNS, Fused, RRF_K, lend_context, rank_by_score,
    reciprocal_rank_fusion,
};
use arbor_domain::sensitivity::may_be_given_to;
use arbor_domain::time_expr::{self, TimeRange};
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};
use arbor_ports::{
    EmbedderId, Embedding, Hit, JobKind, LeafPosition, QueryFocus, TermSelection, TextQuery, VectorQuery,
};

use super::{Degradation, RetrieveRequest};
use crate::projection::Vectors;
use crate::{AppResult, Arbor};

/// How many candidates each search channel contributes before fusion.
pub(super) const CANDIDATE_POOL: usize = 50;

/// How many of the memories mentioning a question's time window are considered: a window of
/// a day or a month is mentioned by far fewer in one scope, and the ones ranked by the
/// question's words come from among them.
const MENTION_POOL: usize = 4 * CANDIDATE_POOL;

/// What kind of evidence a channel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChannelKind {
    FullText,
    Vector,
    Entity,
    /// Memories of the kinds a focused question asks for (preferences and constraints).
    Kind,
    /// Memories that mention the time window the question names, whenever they were observed.
    Time,
    Tree,
}

/// One channel of a retrieval, for explanations: `full_text`, `vector:<embedder>`,
/// `entity:<name>`, `kind:preference+constraint`, `tree`.
#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub kind: ChannelKind,
    pub name: String,
}

/// Every candidate of a retrieval, fused, with where each came from.
#[derive(Debug, Default)]
pub(super) struct Candidates {
    pub fused: Vec<Fused<NodeId>>,
    pub channels: Vec<Channel>,
    /// Where each candidate is filed, as the index reports it: enough to pass over one whose
    /// layer's budget is spent without reading it.
    pub namespace_of: HashMap<NodeId, Namespace>,
    /// Each candidate's best similarity to the question in a vector channel.
    pub similarity: HashMap<NodeId, f32>,
    /// Candidates that bear on the question: found by a channel of words (full text, a named
    /// entity's trees, a kind asked for), or by a vector channel at or above its embedder's
    /// [`ranking::relevance_floor`].
    related: HashSet<NodeId>,
    /// How many candidates the vectors alone found below their floor, left out.
    pub unrelated: usize,
    /// Candidates whose words mention the question's time window ("last night" in a message
    /// of the next morning): admitted whenever they were observed.
    pub mention_the_window: HashSet<NodeId>,
    /// Channels that could not be searched, and why.
    pub degraded: Vec<Degradation>,
}

impl Candidates {
    /// The best rank a candidate has in channels of `kind`.
    pub(super) fn rank_in(&self, candidate: &Fused<NodeId>, kind: ChannelKind) -> Option<usize> {
        candidate
            .ranks
            .iter()
            .filter(|r| self.channels.get(r.channel).is_some_and(|c| c.kind == kind))
            .map(|r| r.rank)
            .min()
    }

    /// `(channel name, rank)` for every channel that found `candidate`.
    pub(super) fn named_ranks(&self, candidate: &Fused<NodeId>) -> Vec<(String, usize)> {
        candidate.ranks.iter().filter_map(|r| Some((self.channels.get(r.channel)?.name.clone(), r.rank))).collect()
    }

    /// A channel's hits, every one of which bears on the question when `floor` is `None`, else
    /// those at or above it.
    fn add(
        &mut self,
        (kind, name): (ChannelKind, String),
        hits: Vec<Hit>,
        ranked: Vec<NodeId>,
        floor: Option<f32>,
        lists: &mut Vec<(f32, Vec<NodeId>)>,
    ) {
        self.channels.push(Channel { kind, name });
        lists.push((1.0, ranked));
        for hit in hits {
            if floor.is_none_or(|floor| hit.score >= floor) {
                self.related.insert(hit.id.clone());
            }
            if kind == ChannelKind::Vector {
                let best = self.similarity.entry(hit.id.clone()).or_insert(hit.score);
                *best = best.max(hit.score);
            }
            self.namespace_of.insert(hit.id, hit.namespace);
        }
    }

    /// Leaves out the candidates that do not bear on the question ([`Candidates::related`]).
    fn keep_related(&mut self) {
        let before = self.fused.len();
        let related = &self.related;
        self.fused.retain(|candidate| related.contains(&candidate.key));
        self.unrelated = before - self.fused.len();
    }
}

impl Arbor {
    /// Searches every channel inside `filter` and fuses what they found.
    pub(super) async fn candidates(
        &self,
        request: &RetrieveRequest,
        focus: QueryFocus,
        filter: &VisibilityFilter,
        entities: &[Entity],
        scope: &[Namespace],
    ) -> AppResult<Candidates> {
        let index = &self.ports.index;
        let mut found = Candidates::default();
        let mut lists: Vec<(f32, Vec<NodeId>)> = Vec::new();
        let has_words = !request.query.trim().is_empty();
        let capabilities = index.capabilities();
        // The full-text search and the count of waiting index jobs do not depend on each
        // other: on a server backend each is a round trip, so they go out together.
        let text = async {
            if capabilities.full_text && has_words {
                self.text_hits(filter, &request.query).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let waiting = async { if capabilities.vectors { self.waiting_index_jobs(filter).await } else { None } };
        let (text, waiting) = tokio::join!(text, waiting);
        if let Some(hits) = text? {
            let ranked = rank_by_score(&scores(&hits));
            found.add((ChannelKind::FullText, "full_text".into()), hits, ranked, None, &mut lists);
        }
        if waiting.is_some_and(|waiting| waiting > 0) {
            self.note_pending_index_jobs(&mut found);
        }

        self.add_vector_channels(request, filter, &mut found, &mut lists).await?;
        if index.capabilities().full_text && has_words {
            self.add_entity_channels(request, filter, entities, &mut found, &mut lists).await?;
        }
        // A question about preferences or rules: those kinds of memory, by the question's words.
        if index.capabilities().full_text && has_words && focus == QueryFocus::PreferenceOrConstraint {
            let wanted = [MemoryKind::Preference, MemoryKind::Constraint];
            let mut of_kind = filter.clone();
            of_kind.kinds = match filter.kinds.as_slice() {
                [] => wanted.to_vec(),
                asked => asked.iter().copied().filter(|k| wanted.contains(k)).collect(),
            };
            if !of_kind.kinds.is_empty() {
                let hits = self.text_hits(&of_kind, &request.query).await?;
                let ranked = rank_by_score(&scores(&hits));
                let channel = (ChannelKind::Kind, "kind:preference+constraint".into());
                found.add(channel, hits, ranked, None, &mut lists);
            }
        }
        if index.capabilities().full_text && has_words && request.time_range.is_none() {
            self.add_time_mention_channel(request, filter, &mut found, &mut lists).await?;
        }
        found.fused = reciprocal_rank_fusion(&lists, RRF_K);
        // A question that names a time window ("what did we talk about yesterday?") is answered
        // by what lies in the window, which the filter already holds to: nearness of meaning is
        // not what makes those memories bear on it.
        if request.relevance_floor && filter.time_range.is_none() {
            found.keep_related();
        }
        self.lend_tree_context(&mut found, filter, scope).await?;
        Ok(found)
    }

    /// One vector channel per embedder serving the index: the configured one, and while a
    /// re-embedding is under way the one it replaces, whose vectors still cover the nodes not
    /// yet re-embedded; and, for a request that includes restricted memories, the local
    /// embedder that gave them their vectors when the configured one may not see them. Each
    /// compares only with its own vectors.
    async fn add_vector_channels(
        &self,
        request: &RetrieveRequest,
        filter: &VisibilityFilter,
        found: &mut Candidates,
        lists: &mut Vec<(f32, Vec<NodeId>)>,
    ) -> AppResult<()> {
        let index = &self.ports.index;
        let mut searched: Vec<EmbedderId> = Vec::new();
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
            if !index.capabilities().vectors || !may_be_given_to(embedder.locality(), None, &request.query) {
                continue;
            }
            let channel = format!("vector:{}", embedder.id());
            let vector = match given {
                Some(vector) => Some(vector.clone()),
                // A failing embedder costs its channel, not the answer: the others still
                // search, and the pack says what was missing.
                None => match self.embed_question(embedder, &request.query).await {
                    Ok(vector) => vector,
                    Err(error) => {
                        // The cause (an endpoint, a path) stays in the log: the pack goes to
                        // callers who need to know only that a channel was missing.
                        tracing::warn!(error = %arbor_ports::with_causes(&error), %channel, "could not embed the question; searching without it");
                        let reason = "the embedder failed, so nothing was searched by meaning".to_owned();
                        found.degraded.push(Degradation { part: channel, reason });
                        continue;
                    }
                },
            };
            if let Some(values) = vector.filter(|v| v.iter().any(|x| *x != 0.0)) {
                let query = VectorQuery {
                    filter: filter.clone(),
                    embedding: Embedding { embedder: embedder.id(), values },
                    limit: CANDIDATE_POOL,
                };
                let hits = index.search_vector(&query).await?;
                let ranked = ranking::vector_channel(&scores(&hits));
                let floor = ranking::relevance_floor(&embedder.id().name, index.capabilities().full_text);
                found.add((ChannelKind::Vector, channel), hits, ranked, floor, lists);
            }
        }
        Ok(())
    }

    /// The question's vector from `embedder`: remembered from an earlier asking when the
    /// embedder is a model ([`QueryVectors`](super::query_vectors::QueryVectors)), computed
    /// otherwise.
    async fn embed_question(
        &self,
        embedder: &Arc<dyn arbor_ports::Embedder>,
        question: &str,
    ) -> arbor_ports::Result<Option<Vec<f32>>> {
        let id = embedder.id();
        if !embedder.is_instant()
            && let Some(vector) = self.query_vectors.get(&id, question)
        {
            return Ok(Some(vector));
        }
        let vector = embedder.embed(&[question.to_owned()]).await?.pop();
        if let Some(vector) = &vector
            && !embedder.is_instant()
        {
            self.query_vectors.put(&id, question, vector.clone());
        }
        Ok(vector)
    }

    /// How many index jobs wait in the namespaces `filter` searches (at most one is counted),
    /// or `None` when the store cannot say. The count is informational: a store that cannot
    /// answer costs the note in the pack, not the answer.
    async fn waiting_index_jobs(&self, filter: &VisibilityFilter) -> Option<usize> {
        let scope: Vec<Namespace> = filter.layers.iter().map(|layer| layer.namespace.clone()).collect();
        match self.ports.store.pending_jobs(JobKind::Index, &scope, 1).await {
            Ok(waiting) => Some(waiting.len()),
            Err(error) => {
                tracing::warn!(error = %arbor_ports::with_causes(&error), "could not count pending index jobs; the pack does not say whether any wait");
                None
            }
        }
    }

    /// Says in the pack that index jobs wait in the namespaces searched: memories just written
    /// whose vectors the job runner has yet to compute ([`Vectors::Later`]) are found by their
    /// words only until it has, and a write whose indexing failed not at all. It names no
    /// count, so it says no more about the namespace than that something is new.
    fn note_pending_index_jobs(&self, found: &mut Candidates) {
        let reason = match self.inline_vectors() {
            Vectors::Later => "memories written moments ago are found by their words, and by meaning once \
                               their vectors are computed"
                .to_owned(),
            Vectors::Now => "memories written moments ago are still being indexed and may be missing".to_owned(),
        };
        found.degraded.push(Degradation { part: "index".into(), reason });
    }

    /// A named entity's own trees, searched by the question's words: what is filed under Dana
    /// ranks by what the question asks about Dana.
    async fn add_entity_channels(
        &self,
        request: &RetrieveRequest,
        filter: &VisibilityFilter,
        entities: &[Entity],
        found: &mut Candidates,
        lists: &mut Vec<(f32, Vec<NodeId>)>,
    ) -> AppResult<()> {
        for entity in entities {
            let categories =
                if filter.categories.is_empty() { Category::ALL.to_vec() } else { filter.categories.clone() };
            let mut hits = Vec::new();
            for category in categories {
                let tree = TreeId::new(category, &entity.slug);
                if filter.tree.as_ref().is_some_and(|wanted| wanted != &tree) {
                    continue;
                }
                let mut in_tree = filter.clone();
                in_tree.tree = Some(tree);
                hits.extend(
                    self.text_hits(&in_tree, &request.query)
                        .await?
                        .into_iter()
                        .filter(|h| h.namespace == entity.namespace),
                );
            }
            let ranked = rank_by_score(&scores(&hits));
            found.add((ChannelKind::Entity, format!("entity:{}", entity.name)), hits, ranked, None, lists);
        }
        Ok(())
    }

    /// A question whose words name a time window ("what did Maria cook on 3 May?") is asked
    /// of the memories observed in it, by every other channel, and here of those that mention
    /// it, observed at any time ("we made dinner last night", said on 4 May): the index holds
    /// each leaf's mentions as calendar terms (`Projectable::indexed_text`), so the question's
    /// words and its window's terms rank the leaves holding at least one of the window's
    /// terms. A window too long to spell (`time_expr::calendar_terms`) or set by the caller
    /// rather than the words adds nothing.
    async fn add_time_mention_channel(
        &self,
        request: &RetrieveRequest,
        filter: &VisibilityFilter,
        found: &mut Candidates,
        lists: &mut Vec<(f32, Vec<NodeId>)>,
    ) -> AppResult<()> {
        let Some((start, end)) = filter.time_range else { return Ok(()) };
        let terms = time_expr::calendar_terms(&TimeRange { start, end }, true);
        if terms.is_empty() {
            return Ok(());
        }
        let any_time = VisibilityFilter { time_range: None, ..filter.clone() };
        let window = terms.join(" ");
        let mentioning = TextQuery {
            filter: any_time.clone(),
            text: window.clone(),
            limit: MENTION_POOL,
            terms: TermSelection::All,
        };
        let mentioning: HashSet<NodeId> =
            self.ports.index.search_text(&mentioning).await?.into_iter().map(|hit| hit.id).collect();
        if mentioning.is_empty() {
            return Ok(());
        }
        let mut hits = self.text_hits(&any_time, &format!("{} {window}", request.query)).await?;
        hits.retain(|hit| mentioning.contains(&hit.id));
        found.mention_the_window.extend(hits.iter().map(|hit| hit.id.clone()));
        let ranked = rank_by_score(&scores(&hits));
        found.add((ChannelKind::Time, "time:mentions".into()), hits, ranked, None, lists);
        Ok(())
    }

    async fn text_hits(&self, filter: &VisibilityFilter, text: &str) -> AppResult<Vec<Hit>> {
        let query = TextQuery {
            filter: filter.clone(),
            text: text.to_owned(),
            limit: CANDIDATE_POOL,
            terms: TermSelection::All,
        };
        Ok(self.ports.index.search_text(&query).await?)
    }

    /// The tree-structure channel: the leaves just before and after each of the strongest
    /// leaf hits in its tree's timeline (and, when summaries may be returned, the sealed
    /// summary each belongs to) inherit a share of its score. Everything it adds comes from
    /// the store inside `filter`, and is re-checked like any other candidate.
    async fn lend_tree_context(
        &self,
        found: &mut Candidates,
        filter: &VisibilityFilter,
        scope: &[Namespace],
    ) -> AppResult<()> {
        let anchors: Vec<LeafId> =
            found.fused.iter().filter_map(|f| f.key.as_leaf().cloned()).take(CONTEXT_ANCHORS).collect();
        if anchors.is_empty() || !filter.node_kinds.contains(&NodeKind::Leaf) {
            return Ok(());
        }
        let summaries_wanted = filter.node_kinds.contains(&NodeKind::Summary);
        let mut links: Vec<(NodeId, NodeId)> = Vec::new();
        let mut anchors = self.ports.store.leaves(scope, &anchors).await?;
        anchors.retain(|anchor| filter.admits(&NodeFacts::of_leaf(anchor)));
        let positions: Vec<LeafPosition> = anchors.iter().map(LeafPosition::of).collect();
        let neighbours = self.ports.store.leaf_neighbours(filter, &positions, CONTEXT_TURNS).await?;
        for (anchor, around) in anchors.into_iter().zip(neighbours) {
            let key = anchor.node_id();
            for neighbour in around.before.into_iter().chain(around.after) {
                let neighbour = NodeId::Leaf(neighbour);
                found.namespace_of.insert(neighbour.clone(), anchor.namespace.clone());
                links.push((key.clone(), neighbour));
            }
            if let Some(parent) = anchor.parent.clone().filter(|_| summaries_wanted) {
                let parent = NodeId::Summary(parent);
                found.namespace_of.insert(parent.clone(), anchor.namespace.clone());
                links.push((key.clone(), parent));
            }
        }
        if links.is_empty() {
            return Ok(());
        }
        found.channels.push(Channel { kind: ChannelKind::Tree, name: "tree".into() });
        let fused = std::mem::take(&mut found.fused);
        found.fused = lend_context(fused, &links, found.channels.len() - 1, CONTEXT_SHARE);
        Ok(())
    }
}

fn scores(hits: &[Hit]) -> Vec<(NodeId, f32)> {
    hits.iter().map(|h| (h.id.clone(), h.score)).collect()
}
