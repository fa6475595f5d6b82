//! Ingest: the 12-step interaction upsert of [design §write-path], one event or a batch at a time.
//!
//! - steps 1-2: validate and normalize each event into chunks, each with a stable fingerprint;
//!   assess each chunk (admission, kind, subject, entity proposal) with the reasoner;
//! - step 3: admission;
//! - steps 4-6: the `EntityDecision` matrix against a shortlist from the store;
//! - step 7: dedup and `Supersession` inside the owning tree; approval (active or candidate);
//! - steps 8-10: one atomic commit — trees, entities, leaves, supersession of older leaves,
//!   stale summaries, roots marked stale, jobs (seal, index) and audit events — after the body
//!   files are written and made durable;
//! - steps 11-12: jobs run later (index inline by default); a result per chunk.
//!
//! A batch is planned against the store *and* against what the batch itself has planned so
//! far, so a later event can supersede an earlier one in the same batch and an entity created
//! by one event is matched by the next. Bodies are written before the commit and deleted if it
//! fails: a failed batch leaves no leaf and no file; a crash between the two leaves at most
//! unreferenced files, which `fsck` removes. An invalid event is refused on its own and
//! leaves no trace; the rest of its batch goes ahead.

use std::collections::BTreeSet;

use arbor_domain::admission::{Admission, AdmissionInput, Approval, ApprovalInput, is_manual_entry};
use arbor_domain::conflict::{ClaimView, conflict_between};
use arbor_domain::decision::{EntityDecision, EntityProposal, MAX_ENTITY_SHORTLIST};
use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::event::Event;
use arbor_domain::id::{EntityId, LeafId, NodeId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    Actor, Category, ContentHash, EntityLinks, LeafRecord, POLICY_VERSION, Provenance, SubjectKey, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::reconcile::{
    CANDIDATES, Claim, PER_KEY, Resembling, changed_passages, passages, topic_floor, without_subject,
};
use arbor_domain::sensitivity::{Locality, Sensitivity, may_be_given_to};
use arbor_domain::supersession::{DuplicateJudgement, ExistingLeaf, WriteOutcome};
use arbor_domain::text::{fingerprint, query_terms, tokenize, truncate_chars};
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{
    AssessRequest, Assessment, DuplicateCandidate, DuplicateRequest, Embedding, EntityQuery, FiledQuery, JobKind,
    TermSelection, TextQuery, TreeLeafQuery, VectorQuery,
};
use serde::Serialize;

use crate::projection::Vectors;
use crate::write::{Attempt, BatchPlan, PlannedLeaf, existing_leaf};
use crate::{AppError, AppResult, Arbor};

/// The longest leaf summary kept on the metadata row; the whole text is in the body.
pub(crate) const LEAF_SUMMARY_CHARS: usize = 280;

/// How many similar leaves a reasoner is shown when judging duplicates.
const DUPLICATE_CANDIDATES: usize = 3;

/// How many of a chunk's rarest terms the near-duplicate lookup matches on: at least a sixth
/// of them. A text that repeats 85% or more of the chunk's words (the deterministic
/// reasoner's bar for "the same memory") lacks fewer than a sixth of them, so it holds at
/// least one of any sixth — the rarest sixth is just the cheapest to look up, because
/// common words have the longest posting lists.
fn duplicate_match_terms(text: &str) -> usize {
    query_terms(text).len().div_ceil(6).max(4)
}

/// What happened to one chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum IngestOutcome {
    Created {
        leaf_id: LeafId,
        status: LeafStatus,
    },
    Superseding {
        leaf_id: LeafId,
        replaces: LeafId,
        status: LeafStatus,
        /// Why the new memory replaces the old one.
        because: String,
    },
    NoopDuplicate {
        existing: LeafId,
        existing_status: LeafStatus,
    },
    NotAdmitted {
        reason: String,
    },
}

impl IngestOutcome {
    pub fn label(&self) -> &'static str {
        match self {
            IngestOutcome::Created { .. } => "created",
            IngestOutcome::Superseding { .. } => "superseding",
            IngestOutcome::NoopDuplicate { .. } => "noop_duplicate",
            IngestOutcome::NotAdmitted { .. } => "not_admitted",
        }
    }

    /// The leaf this chunk ended up as, new or existing.
    pub fn leaf_id(&self) -> Option<&LeafId> {
        match self {
            IngestOutcome::Created { leaf_id, .. } | IngestOutcome::Superseding { leaf_id, .. } => Some(leaf_id),
            IngestOutcome::NoopDuplicate { existing, .. } => Some(existing),
            IngestOutcome::NotAdmitted { .. } => None,
        }
    }
}

/// The result for one chunk: `{leaf_id, tree_id, entity_decision, outcome}` [design §write-path].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkResult {
    pub chunk: usize,
    pub namespace: Namespace,
    pub tree_id: Option<TreeId>,
    pub entity_decision: EntityDecision,
    #[serde(flatten)]
    pub outcome: IngestOutcome,
    /// Why the leaf is active or a candidate.
    pub approval: Option<&'static str>,
}

/// The result of ingesting one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestReport {
    pub chunks: Vec<ChunkResult>,
}

/// What the reasoner and the rules made of one chunk before it is filed.
struct Reading {
    assessment: Assessment,
    /// The reasoner that made the assessment, for provenance.
    extractor: String,
    admission: Admission,
    decision: EntityDecision,
    /// The entities the decision could pick from.
    shortlist: Vec<Entity>,
    /// Whether the configured reasoner may read the chunk's text.
    shareable: bool,
}

/// Where an admitted chunk is filed, and how carefully it is held.
struct Filing {
    tree_id: TreeId,
    primary: Option<EntityId>,
    sensitivity: Sensitivity,
}

/// One event's chunk, with what is known about its event.
struct ChunkInput<'a> {
    event: &'a Event,
    index: usize,
    text: String,
    category: Category,
    observed_at: Timestamp,
    source_sha256: &'a ContentHash,
}

impl Arbor {
    /// Ingests one event into the write namespace of `chain` (its most specific layer).
    pub async fn ingest(&self, chain: &ReadChain, event: Event) -> AppResult<IngestReport> {
        let mut results = self.ingest_batch(chain, vec![event]).await?;
        results.pop().unwrap_or_else(|| Err(AppError::Internal("empty batch".into())))
    }

    /// Ingests events together: one plan, one durable write of all bodies, one commit. Each
    /// event gets its own result; an invalid event is refused without affecting the others.
    /// An error of the whole call (storage failure, contention) means none was written.
    pub async fn ingest_batch(
        &self,
        chain: &ReadChain,
        events: Vec<Event>,
    ) -> AppResult<Vec<Result<IngestReport, AppError>>> {
        let namespace = &chain.write_namespace().clone();
        let checked: Vec<Result<&Event, AppError>> =
            events.iter().map(|event| event.validate().map(|()| event).map_err(AppError::from)).collect();
        let valid = &checked.iter().filter_map(|c| c.as_ref().ok().copied()).collect::<Vec<_>>();
        let reports = self
            .replanning(|| async move {
                let now = self.now();
                let mut plan = BatchPlan::default();
                let mut reports = Vec::with_capacity(valid.len());
                let planning = std::time::Instant::now();
                for event in valid {
                    reports.push(self.plan_event(&mut plan, namespace, event, now).await?);
                }
                Attempt::of(self.commit_plan(namespace, plan, now, planning.elapsed()).await.map(|()| reports))
            })
            .await?;
        let mut reports = reports.into_iter();
        Ok(checked.into_iter().map(|c| c.map(|_| reports.next().expect("one report per valid event"))).collect())
    }

    async fn plan_event(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        event: &Event,
        now: Timestamp,
    ) -> AppResult<IngestReport> {
        let observed_at = event.observed_at.unwrap_or(now);
        let source_sha256 = ContentHash::of(event.text.as_bytes());
        let category = event.hints.category.unwrap_or(if event.actor == Actor::Integration {
            Category::Integration
        } else {
            Category::Interaction
        });
        let mut chunks = Vec::new();
        for (index, text) in self.policy.chunker.split(&event.text).into_iter().enumerate() {
            let input = ChunkInput { event, index, text, category, observed_at, source_sha256: &source_sha256 };
            chunks.push(self.plan_chunk(plan, namespace, input, now).await?);
        }
        Ok(IngestReport { chunks })
    }

    /// Plans one chunk into `plan`: read it, file it, dedup it, and plan its leaf (and the
    /// leaves it retires).
    async fn plan_chunk(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        chunk: ChunkInput<'_>,
        now: Timestamp,
    ) -> AppResult<ChunkResult> {
        let result = |tree_id, entity_decision, outcome, approval| ChunkResult {
            chunk: chunk.index,
            namespace: namespace.clone(),
            tree_id,
            entity_decision,
            outcome,
            approval,
        };
        let reading = self.read_chunk(plan, namespace, &chunk).await?;
        let sensitivity = match &reading.admission {
            Admission::Admit { sensitivity } => *sensitivity,
            Admission::Refuse { refusal } => {
                let outcome = IngestOutcome::NotAdmitted { reason: refusal.to_string() };
                return Ok(result(None, reading.decision, outcome, None));
            }
        };
        let (tree_id, primary) = self.file_under(plan, namespace, chunk.category, &reading, now).await?;

        // Step 7: dedup and supersession within the tree, against the store and this batch.
        let replaces = match self.resolve_duplicates(plan, namespace, &tree_id, &chunk.text, &reading).await? {
            WriteOutcome::NoopDuplicate { existing, existing_status } => {
                let outcome = IngestOutcome::NoopDuplicate { existing, existing_status };
                return Ok(result(Some(tree_id), reading.decision, outcome, None));
            }
            // Nothing in the tree says the same or names the same subject: does it replace a
            // current memory, wherever that was filed, the way people phrase updates?
            WriteOutcome::Created => self.reconcile(plan, namespace, &chunk.text).await?,
            WriteOutcome::Superseding { replaces } => Some((replaces, "same subject".to_owned())),
        };
        let (replaces, because) = match replaces {
            Some((id, because)) => (Some(id), because),
            None => (None, String::new()),
        };
        let replaced = match &replaces {
            Some(id) => self.current_record(plan, namespace, id).await?,
            None => None,
        };
        let filing = Filing { tree_id: tree_id.clone(), primary, sensitivity };
        let (record, approval) = self.planned_leaf(namespace, &chunk, &reading, filing, replaced.as_ref(), now);
        if record.status == LeafStatus::Active {
            self.retire_on_activation(plan, namespace, &record, replaced.as_ref(), now).await?;
        }
        let outcome = match &record.supersedes {
            Some(old) => IngestOutcome::Superseding {
                leaf_id: record.id.clone(),
                replaces: old.clone(),
                status: record.status,
                because,
            },
            None => IngestOutcome::Created { leaf_id: record.id.clone(), status: record.status },
        };
        plan.leaves.push(PlannedLeaf { record, text: chunk.text });
        Ok(result(Some(tree_id), reading.decision, outcome, Some(approval.reason)))
    }

    /// `Reconcile`: the current memory of the namespace, in any tree, that a chunk replaces
    /// (the same entity and attribute, with a change cue or a new value for a single-valued
    /// slot), and why. Candidates are the namespace's current leaves filed under what the chunk
    /// names (`Arbor::current_filed_under`), and what this batch planned before it; the domain
    /// picks at most one. When the rules find none, the comparison by meaning may
    /// (`Arbor::resemble`). A replacement older or less authoritative than what it replaces
    /// becomes a conflict in `planned_leaf`.
    async fn reconcile(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        text: &str,
    ) -> AppResult<Option<(LeafId, String)>> {
        if arbor_domain::reconcile::may_replace_anything(text) {
            let claim = Claim::read(text);
            if claim.may_replace() {
                let current =
                    self.current_candidates(plan, namespace, self.current_filed_under(namespace, &claim).await?);
                let claims: Vec<(LeafId, Claim)> =
                    current.into_iter().map(|leaf| (leaf.id, Claim::read(&leaf.summary))).collect();
                if let Some((id, why)) = self.policy.reconcile.best(&claim, &claims) {
                    return Ok(Some((id.clone(), why.to_string())));
                }
            }
        }
        self.resemble(plan, namespace, text).await
    }

    /// The second step of `Reconcile`, by meaning (`arbor_domain::reconcile::resemble`): the
    /// passages of `text` that say something changed are compared with the passages of the
    /// namespace's current memories nearest to it, with the configured embedder, when the
    /// domain knows the similarity at which that embedder's passages speak of one attribute
    /// (`topic_floor`) and it runs on this machine. Costs two embedding calls (the whole text,
    /// to find the nearest; then the passages), and only for a text that says something changed.
    async fn resemble(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        text: &str,
    ) -> AppResult<Option<(LeafId, String)>> {
        let embedder = &self.ports.embedder;
        let Some(floor) = topic_floor(&embedder.id().name) else { return Ok(None) };
        if embedder.locality() != Locality::Local || !self.ports.index.capabilities().vectors {
            return Ok(None);
        }
        let changed = changed_passages(text);
        if changed.is_empty() {
            return Ok(None);
        }
        let claim = Claim::read(text);
        if claim.hold.is_some() {
            return Ok(None);
        }
        let candidates = self.resemblance_candidates(plan, namespace, text, &claim).await?;
        if candidates.is_empty() {
            return Ok(None);
        }
        let reconcile = &self.policy.reconcile;
        // What is said, not of whom: each passage without its subject's name, and the new
        // one's also without the names it is agreed to share with an old one ("Vet's orders:
        // Biscuit is …" against "Biscuit eats …").
        let agreed: BTreeSet<String> =
            candidates.iter().filter_map(|(_, old)| reconcile.may_resemble(&claim, old)).collect();
        let unnamed = |passage: &String| {
            let own = without_subject(passage, claim.subject.as_deref());
            agreed.iter().fold(own, |p, subject| without_subject(&p, Some(subject)))
        };
        let mut texts: Vec<String> = changed.iter().map(unnamed).collect();
        let changed_count = texts.len();
        let mut counts = Vec::with_capacity(candidates.len());
        for (leaf, old) in &candidates {
            let own = passages(&leaf.summary);
            counts.push(own.len());
            texts.extend(own.iter().map(|p| without_subject(p, old.subject.as_deref())));
        }
        let Some(vectors) = self.embed_for_reconcile(&texts).await else { return Ok(None) };
        let (new_vectors, mut old_vectors) = vectors.split_at(changed_count);
        let mut scored = Vec::with_capacity(candidates.len());
        for ((leaf, old), count) in candidates.into_iter().zip(counts) {
            let (own, rest) = old_vectors.split_at(count);
            old_vectors = rest;
            let similarity = new_vectors
                .iter()
                .flat_map(|new| own.iter().map(move |old| dot(new, old)))
                .fold(f32::NEG_INFINITY, f32::max);
            scored.push(Resembling { claim: old, item: leaf.id, similarity });
        }
        let found = reconcile.best_resembling(&claim, &scored, floor);
        tracing::debug!(
            compared = ?scored.iter().map(|s| (s.item.as_str(), s.similarity)).collect::<Vec<_>>(),
            replaces = ?found.as_ref().map(|(id, _)| id.as_str()),
            "reconcile by meaning"
        );
        Ok(found.map(|(id, why)| (id.clone(), why.to_string())))
    }

    /// `texts` embedded for the comparison by meaning, or `None` when the embedder fails: the
    /// step is an aid to the write, never a reason to refuse it, so a failure leaves the rules'
    /// answer (nothing replaced) and a warning.
    async fn embed_for_reconcile(&self, texts: &[String]) -> Option<Vec<Vec<f32>>> {
        match self.ports.embedder.embed(texts).await {
            Ok(vectors) if vectors.len() == texts.len() => Some(vectors),
            Ok(vectors) => {
                tracing::warn!(
                    texts = texts.len(),
                    vectors = vectors.len(),
                    "reconcile by meaning skipped: the embedder returned a wrong count"
                );
                None
            }
            Err(error) => {
                tracing::warn!(%error, "reconcile by meaning skipped: the embedder failed");
                None
            }
        }
    }

    /// What `Arbor::resemble` compares `claim` with, most relevant first: the nearest current
    /// leaves of the namespace by the whole text (re-checked against their rows), then what is
    /// filed under the names it mentions, as this batch leaves them, then what this batch
    /// planned that it may replace; of those, the subject's own statements and their rivals,
    /// at most [`RESEMBLANCE_CANDIDATES`], each with its claim.
    async fn resemblance_candidates(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        text: &str,
        claim: &Claim,
    ) -> AppResult<Vec<(LeafRecord, Claim)>> {
        let embedder = &self.ports.embedder;
        let Some(whole) = self.embed_for_reconcile(&[text.to_owned()]).await.and_then(|mut v| v.pop()) else {
            return Ok(Vec::new());
        };
        let filter = VisibilityFilter::current_leaves_of(namespace, self.now(), false);
        let query = VectorQuery {
            filter: filter.clone(),
            embedding: Embedding { embedder: embedder.id(), values: whole },
            limit: RESEMBLANCE_NEIGHBOURS,
        };
        let ids: Vec<LeafId> = self
            .ports
            .index
            .search_vector(&query)
            .await?
            .into_iter()
            .filter_map(|hit| match hit.id {
                NodeId::Leaf(id) => Some(id),
                NodeId::Summary(_) => None,
            })
            .collect();
        let mut nearest = self.ports.store.leaves(std::slice::from_ref(namespace), &ids).await?;
        nearest.retain(|leaf| filter.admits(&NodeFacts::of_leaf(leaf)));
        nearest.sort_by_key(|leaf| ids.iter().position(|id| id == &leaf.id));
        // …and what was written moments ago, whose vectors the job runner has yet to compute:
        // no vector search finds it, and it is what an update most often follows.
        if self.inline_vectors() == Vectors::Later {
            nearest.extend(self.awaiting_vectors(namespace, &filter).await?);
        }
        // …and what is filed under the names it mentions: in a store of many people, the
        // nearest may all be other people's facts of the kind.
        if claim.subject.is_some() {
            nearest.extend(self.current_filed_under(namespace, claim).await?);
        }
        let reconcile = &self.policy.reconcile;
        let stored =
            nearest.into_iter().map(|leaf| plan.overlay(leaf)).filter(|leaf| leaf.status == LeafStatus::Active);
        let planned = plan
            .leaves
            .iter()
            .filter(|p| &p.record.namespace == namespace && p.record.status == LeafStatus::Active)
            .map(|p| p.record.clone());
        let mut seen = BTreeSet::new();
        let mut candidates = Vec::new();
        for (leaf, from_this_batch) in stored.map(|leaf| (leaf, false)).chain(planned.map(|leaf| (leaf, true))) {
            if candidates.len() >= RESEMBLANCE_CANDIDATES {
                break;
            }
            if !seen.insert(leaf.id.clone()) {
                continue;
            }
            let old = Claim::read(&leaf.summary);
            // A batch's earlier memories are there because they were written, not because they
            // are near: only one it may replace is read.
            let wanted = if from_this_batch {
                reconcile.may_resemble(claim, &old).is_some()
            } else {
                reconcile.may_rival(claim, &old)
            };
            if wanted {
                candidates.push((leaf, old));
            }
        }
        Ok(candidates)
    }

    /// Of `found`, the active ones as this batch leaves them, with the active leaves this batch
    /// planned in `namespace`: oldest first (so the latest wins a tie), each once.
    fn current_candidates(&self, plan: &BatchPlan, namespace: &Namespace, found: Vec<LeafRecord>) -> Vec<LeafRecord> {
        let mut current: Vec<LeafRecord> =
            found.into_iter().map(|leaf| plan.overlay(leaf)).filter(|leaf| leaf.status == LeafStatus::Active).collect();
        current.extend(
            plan.leaves
                .iter()
                .filter(|p| &p.record.namespace == namespace && p.record.status == LeafStatus::Active)
                .map(|p| p.record.clone()),
        );
        current.sort_by(|a, b| a.observed_at.cmp(&b.observed_at).then_with(|| a.id.cmp(&b.id)));
        current.dedup_by(|a, b| a.id == b.id);
        current
    }

    /// The current memories of `namespace` that `claim` may replace or repeat: those filed
    /// under the keys it is looked up by (the names it mentions, with the slots and words it
    /// changes; `Claim::looked_up_by`), in any tree: of the latest entries under each key, those
    /// filed under the most keys, then sharing the most words. A lookup costs what is said about those names, not the size
    /// of the store. Restricted memories are left
    /// out: they are never replaced in passing, since a result naming one would tell a caller
    /// without that clearance that it exists.
    pub(crate) async fn current_filed_under(&self, namespace: &Namespace, claim: &Claim) -> AppResult<Vec<LeafRecord>> {
        let query = FiledQuery::new(claim.looked_up_by(), PER_KEY, CANDIDATES);
        let filter = VisibilityFilter::current_leaves_of(namespace, self.now(), false);
        let filed = self.ports.store.leaves_filed_under(namespace, &query).await?;
        Ok(filed.into_iter().filter(|leaf| filter.admits(&NodeFacts::of_leaf(leaf))).collect())
    }

    /// Steps 2-6 for one chunk: the entity shortlist a reasoner may pick from, its assessment,
    /// admission, and the entity decision.
    async fn read_chunk(&self, plan: &BatchPlan, namespace: &Namespace, chunk: &ChunkInput<'_>) -> AppResult<Reading> {
        let store = &self.ports.store;
        let (event, text) = (chunk.event, chunk.text.as_str());
        let mut terms = tokenize(text);
        if let Some(hint) = &event.hints.entity {
            terms.extend(tokenize(&hint.name));
        }
        let mut shortlist = store.find_entities(namespace, &EntityQuery { terms, limit: MAX_ENTITY_SHORTLIST }).await?;
        // Entities this batch is about to create are candidates too.
        shortlist.extend(plan.new_entities.iter().filter(|((ns, _), _)| ns == namespace).map(|(_, e)| e.clone()));
        let request = AssessRequest {
            text: text.to_owned(),
            actor: event.actor,
            namespace: namespace.kind(),
            hints: event.hints.clone(),
            shortlist: shortlist.clone(),
        };
        // Whether the configured reasoner may read this text at all.
        let shareable = may_be_given_to(self.ports.reasoner.locality(), event.hints.sensitivity, text);
        let (assessment, extractor) = self.assess(&request, shareable).await;
        let admission = self.policy.admission.decide(AdmissionInput {
            text,
            confidence: assessment.admission,
            manual: is_manual_entry(event.actor, &event.source),
            declared: event.hints.sensitivity,
            suggested: assessment.sensitivity,
        });
        // A proposal to create an entity whose slug is already taken in this namespace names
        // that entity: put it on the shortlist so the matrix matches it instead of creating a
        // twin (the shortlist is bounded and may not have held it).
        if let EntityProposal::CreateNew { name, .. } = &assessment.entity {
            let slug = EntitySlug::from_name(name);
            if !shortlist.iter().any(|e| e.slug == slug)
                && let Some(existing) = store.entity_by_slug(namespace, &slug).await?
            {
                shortlist.push(existing);
            }
        }
        let decision = self.policy.entities.decide(&admission, &assessment.entity, &shortlist);
        Ok(Reading { assessment, extractor, admission, decision, shortlist, shareable })
    }

    /// Steps 4-6 and 8: the tree the entity decision files the chunk under, and the entity that
    /// owns it; plans the entity and the tree when they are new.
    async fn file_under(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        category: Category,
        reading: &Reading,
        now: Timestamp,
    ) -> AppResult<(TreeId, Option<EntityId>)> {
        let mut created = None;
        let (tree_id, primary, tree_title) = match &reading.decision {
            EntityDecision::MatchedExisting { entity, .. } => {
                let entity =
                    reading.shortlist.iter().find(|e| &e.id == entity).cloned().ok_or_else(|| {
                        AppError::Internal(format!("matched entity {entity} is not on the shortlist"))
                    })?;
                (TreeId::new(category, &entity.slug), Some(entity.id.clone()), entity.name.clone())
            }
            EntityDecision::CreatedEntity { name, entity_type, slug, .. } => {
                let key = (namespace.clone(), slug.clone());
                let new = !plan.new_entities.contains_key(&key);
                let entity = plan
                    .new_entities
                    .entry(key)
                    .or_insert_with(|| Entity {
                        id: self.new_entity_id(now),
                        namespace: namespace.clone(),
                        entity_type: *entity_type,
                        slug: slug.clone(),
                        name: name.clone(),
                        aliases: Vec::new(),
                        created_at: now,
                    })
                    .clone();
                let filing = (TreeId::new(category, &entity.slug), Some(entity.id.clone()), entity.name.clone());
                if new {
                    created = Some(entity);
                }
                filing
            }
            EntityDecision::Fallback { .. } | EntityDecision::NotAdmitted => {
                (TreeId::uncategorized(category), None, "Uncategorized".to_owned())
            }
        };
        let tree_key = (namespace.clone(), tree_id.clone());
        if let std::collections::btree_map::Entry::Vacant(slot) = plan.trees.entry(tree_key) {
            let tree = match self.ports.store.tree(namespace, &tree_id).await? {
                Some(existing) => existing,
                None => TreeRecord {
                    namespace: namespace.clone(),
                    tree_id: tree_id.clone(),
                    entity: primary.clone(),
                    title: tree_title,
                    created_at: now,
                    root: None,
                    root_stale: false,
                },
            };
            slot.insert(tree);
        }
        // One tree per subject, even in hindsight: what was filed before the entity existed.
        if let Some(entity) = &created {
            self.refile_into(plan, namespace, category, entity, &tree_id, now).await?;
        }
        Ok((tree_id, primary))
    }

    /// Step 7: whether the chunk repeats, replaces or adds to what its tree holds, in the store
    /// and earlier in this batch (`Supersession::resolve`, with the reasoner's judgement when
    /// no rule decides).
    async fn resolve_duplicates(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        tree_id: &TreeId,
        text: &str,
        reading: &Reading,
    ) -> AppResult<WriteOutcome> {
        let chunk_fingerprint = fingerprint(text);
        let subject = reading.assessment.subject.as_ref();
        let mut existing = self.existing_for_dedup(plan, namespace, tree_id, &chunk_fingerprint, subject).await?;
        let judgement = if existing.is_empty() {
            self.judge_duplicate(namespace, tree_id, text, subject, reading.shareable, &mut existing).await?
        } else {
            None
        };
        Ok(self.policy.supersession.resolve(&chunk_fingerprint, subject, &existing, judgement.as_ref()).outcome)
    }

    /// The new leaf of a chunk filed under `filing`, replacing `replaced` if any, and why it is
    /// active or a candidate: approval as policy says, except that a replacement older or less
    /// authoritative than the current memory is a conflict that waits for a person instead of
    /// overwriting [design §conflicts].
    fn planned_leaf(
        &self,
        namespace: &Namespace,
        chunk: &ChunkInput<'_>,
        reading: &Reading,
        filing: Filing,
        replaced: Option<&LeafRecord>,
        now: Timestamp,
    ) -> (LeafRecord, Approval) {
        let (event, assessment, observed_at) = (chunk.event, &reading.assessment, chunk.observed_at);
        let Filing { tree_id, primary, sensitivity } = filing;
        let mut approval = self.policy.approval.decide(ApprovalInput {
            namespace: namespace.kind(),
            kind: assessment.kind,
            sensitivity,
            actor: event.actor,
            manual: is_manual_entry(event.actor, &event.source),
        });
        let id = self.new_leaf_id(now);
        let (lineage, version) = match replaced {
            Some(old) => (old.lineage.clone(), old.version.next()),
            None => (id.clone(), Version::FIRST),
        };
        let validity = Validity::new(event.hints.valid_from.or(Some(observed_at)), event.hints.valid_to)
            .unwrap_or(Validity::starting(observed_at));
        if let Some(current) = replaced.filter(|old| old.status == LeafStatus::Active)
            && let Some(cause) = conflict_between(
                &ClaimView::new(&validity, observed_at, event.actor, &event.source),
                &ClaimView::of_leaf(current),
            )
        {
            approval = Approval { status: LeafStatus::Candidate, reason: cause.reason() };
        }
        let secondary = self.policy.entities.validate_secondary(
            &assessment.secondary_entities,
            &reading.shortlist,
            primary.as_ref(),
        );
        let record = LeafRecord {
            body_path: BodyPath::leaf(namespace, chunk.category, &tree_id, &id),
            id,
            lineage,
            version,
            namespace: namespace.clone(),
            category: chunk.category,
            tree_id,
            kind: assessment.kind,
            title: arbor_domain::model::bounded_title(&assessment.title),
            summary: truncate_chars(&chunk.text, LEAF_SUMMARY_CHARS),
            subject: assessment.subject.clone(),
            fingerprint: fingerprint(&chunk.text),
            body_sha256: ContentHash::unwritten(),
            observed_at,
            created_at: now,
            validity,
            expires_at: event.hints.expires_at,
            known: if approval.status == LeafStatus::Active { KnownSpan::from(now) } else { KnownSpan::NEVER },
            confidence: assessment.admission,
            salience: assessment.salience,
            sensitivity,
            status: approval.status,
            supersedes: replaced.map(|old| old.id.clone()),
            superseded_by: None,
            provenance: Provenance {
                source: event.source.clone(),
                actor: event.actor,
                source_sha256: chunk.source_sha256.clone(),
                extractor: reading.extractor.clone(),
                policy_version: POLICY_VERSION.to_owned(),
            },
            labels: assessment.labels.clone(),
            entities: EntityLinks { primary, secondary },
            parent: None,
        };
        (record, approval)
    }

    /// What an active new leaf retires (`Supersession::on_activation`): the leaf it replaces
    /// and anything else current about the same subject, in the store or earlier in this
    /// batch, each valid until the new leaf is.
    async fn retire_on_activation(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        record: &LeafRecord,
        replaced: Option<&LeafRecord>,
        now: Timestamp,
    ) -> AppResult<()> {
        let mut candidates: Vec<LeafRecord> = match &record.subject {
            Some(subject) => self.active_about(plan, namespace, &record.tree_id, subject).await?,
            None => Vec::new(),
        };
        if let Some(old) = replaced.filter(|old| !candidates.iter().any(|c| c.id == old.id)) {
            candidates.push(old.clone());
        }
        let views: Vec<ExistingLeaf> = candidates.iter().map(existing_leaf).collect();
        let ids = self.policy.supersession.on_activation(&existing_leaf(record), record.supersedes.as_ref(), &views);
        let valid_from = record.validity.valid_from.unwrap_or(record.observed_at);
        for old in candidates.into_iter().filter(|l| ids.contains(&l.id)) {
            let retired = old.superseded_by(&record.id, valid_from, now)?;
            match plan.leaves.iter_mut().find(|p| p.record.id == retired.id) {
                Some(planned) => planned.record = retired,
                None => {
                    plan.superseded.insert(retired.id.clone(), retired);
                }
            }
        }
        Ok(())
    }

    /// Asks the configured reasoner, falling back to the deterministic one when the text may
    /// not leave the machine or the answer is unusable. Returns the assessment and the id of
    /// the reasoner that actually made it, for provenance.
    async fn assess(&self, request: &AssessRequest, shareable: bool) -> (Assessment, String) {
        let deterministic =
            || (arbor_domain::heuristics::assess(request), arbor_ports::HEURISTIC_REASONER_ID.to_owned());
        if !shareable {
            return deterministic();
        }
        match self.ask_reasoner("assess", self.ports.reasoner.assess(request)).await {
            Some(assessment) => (assessment, self.ports.reasoner.id()),
            None => deterministic(),
        }
    }

    /// A leaf as the batch will leave it: planned, superseded by the batch, or as stored.
    async fn current_record(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        id: &LeafId,
    ) -> AppResult<Option<LeafRecord>> {
        if let Some(planned) = plan.leaves.iter().find(|p| &p.record.id == id) {
            return Ok(Some(planned.record.clone()));
        }
        let stored = self.ports.store.leaf(std::slice::from_ref(namespace), id).await?;
        Ok(stored.map(|leaf| plan.overlay(leaf)))
    }

    /// Active leaves of a tree about `subject`, in the store and in the batch.
    async fn active_about(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        tree: &TreeId,
        subject: &SubjectKey,
    ) -> AppResult<Vec<LeafRecord>> {
        let query = TreeLeafQuery {
            subject: Some(subject.clone()),
            statuses: vec![LeafStatus::Active],
            ..TreeLeafQuery::default()
        };
        let mut out: Vec<LeafRecord> = self
            .ports
            .store
            .tree_leaves(namespace, tree, &query)
            .await?
            .into_iter()
            .map(|leaf| plan.overlay(leaf))
            .filter(|leaf| leaf.status == LeafStatus::Active)
            .collect();
        out.extend(
            plan.planned_in(namespace, tree)
                .filter(|p| p.record.status == LeafStatus::Active && p.record.subject.as_ref() == Some(subject))
                .map(|p| p.record.clone()),
        );
        Ok(out)
    }

    async fn existing_for_dedup(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        tree: &TreeId,
        fingerprint: &ContentHash,
        subject: Option<&SubjectKey>,
    ) -> AppResult<Vec<ExistingLeaf>> {
        let store = &self.ports.store;
        let by_fingerprint = TreeLeafQuery {
            fingerprint: Some(fingerprint.clone()),
            statuses: LeafStatus::HOLDING_FINGERPRINT.to_vec(),
            ..TreeLeafQuery::default()
        };
        let mut leaves = store.tree_leaves(namespace, tree, &by_fingerprint).await?;
        if let Some(subject) = subject {
            let by_subject = TreeLeafQuery {
                subject: Some(subject.clone()),
                statuses: vec![LeafStatus::Active],
                ..TreeLeafQuery::default()
            };
            leaves.extend(store.tree_leaves(namespace, tree, &by_subject).await?);
        }
        let mut existing: Vec<ExistingLeaf> = leaves.into_iter().map(|l| existing_leaf(&plan.overlay(l))).collect();
        // Earlier chunks of this batch, under the same two questions the store was asked.
        let same = |p: &&PlannedLeaf| {
            &p.record.fingerprint == fingerprint
                || (subject.is_some() && p.record.subject.as_ref() == subject && p.record.status == LeafStatus::Active)
        };
        existing.extend(plan.planned_in(namespace, tree).filter(same).map(|p| existing_leaf(&p.record)));
        Ok(existing)
    }

    /// The current leaves of `namespace` that index jobs name, newest first, at most
    /// [`AWAITING_VECTORS`]: written moments ago, their vectors not computed yet.
    async fn awaiting_vectors(&self, namespace: &Namespace, filter: &VisibilityFilter) -> AppResult<Vec<LeafRecord>> {
        let jobs =
            self.ports.store.pending_jobs(JobKind::Index, std::slice::from_ref(namespace), AWAITING_VECTORS).await?;
        let mut ids: Vec<LeafId> = Vec::new();
        for node in jobs.iter().flat_map(|job| job.nodes.iter().rev()) {
            if let NodeId::Leaf(id) = node
                && !ids.contains(id)
                && ids.len() < AWAITING_VECTORS
            {
                ids.push(id.clone());
            }
        }
        let mut leaves = self.ports.store.leaves(std::slice::from_ref(namespace), &ids).await?;
        leaves.retain(|leaf| filter.admits(&NodeFacts::of_leaf(leaf)));
        leaves.sort_by_key(|leaf| ids.iter().position(|id| id == &leaf.id));
        Ok(leaves)
    }

    /// Shows the reasoner the most similar current leaves of the tree and asks whether the new
    /// chunk repeats or replaces one of them. The leaves shown join `existing`, so the domain
    /// can check the answer names one of them.
    async fn judge_duplicate(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        text: &str,
        subject: Option<&SubjectKey>,
        shareable: bool,
        existing: &mut Vec<ExistingLeaf>,
    ) -> AppResult<Option<DuplicateJudgement>> {
        if !self.ports.index.capabilities().full_text {
            return Ok(None);
        }
        let filter = VisibilityFilter {
            tree: Some(tree.clone()),
            ..VisibilityFilter::current_leaves_of(namespace, self.now(), true)
        };
        let hits = self
            .ports
            .index
            .search_text(&TextQuery {
                filter,
                text: text.to_owned(),
                limit: DUPLICATE_CANDIDATES,
                terms: TermSelection::Rarest(duplicate_match_terms(text)),
            })
            .await?;
        let ids: Vec<LeafId> = hits.iter().filter_map(|h| h.id.as_leaf().cloned()).collect();
        if ids.is_empty() {
            return Ok(None);
        }
        let leaves = self.ports.store.leaves(std::slice::from_ref(namespace), &ids).await?;
        let candidates: Vec<DuplicateCandidate> = leaves
            .iter()
            .filter(|l| l.status == LeafStatus::Active)
            .map(|l| DuplicateCandidate { id: l.id.clone(), title: l.title.clone(), text: l.summary.clone() })
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        existing.extend(leaves.iter().map(existing_leaf));
        let request = DuplicateRequest { text: text.to_owned(), subject: subject.cloned(), candidates };
        let locality = self.ports.reasoner.locality();
        if !shareable || leaves.iter().any(|l| !l.sensitivity.may_be_given_to(locality)) {
            return Ok(Some(arbor_domain::heuristics::judge_duplicate(&request)));
        }
        Ok(Some(match self.ask_reasoner("judge_duplicate", self.ports.reasoner.judge_duplicate(&request)).await {
            Some(judgement) => judgement,
            None => arbor_domain::heuristics::judge_duplicate(&request),
        }))
    }
}

/// How many memories still waiting for their vectors the comparison by meaning reads, the
/// newest: a server's job runner catches up within seconds, so what waits is what was said in
/// those seconds, and an update follows what it replaces closely more often than not.
const AWAITING_VECTORS: usize = 16;

/// How many of the nearest current memories the comparison by meaning reads: more than the
/// facts one statement could be about, few enough that comparing passage against passage costs
/// one small embedding call.
const RESEMBLANCE_NEIGHBOURS: usize = 8;

/// How many current statements the comparison by meaning embeds, the most relevant: more than
/// one person's facts of one kind said over months of ordinary use.
const RESEMBLANCE_CANDIDATES: usize = 12;

/// The cosine similarity of two unit vectors (the `Embedder` contract).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
