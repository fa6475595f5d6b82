//! Ingest: the 12-step interaction upsert of [000 §7].
//!
//! - step 1-2: validate and normalize the event into chunks, each with a stable fingerprint;
//!   assess each chunk (admission, kind, subject, entity proposal) with the reasoner;
//! - step 3: admission;
//! - steps 4-6: the `EntityDecision` matrix against a shortlist from the store;
//! - step 7: dedup and `Supersession` inside the owning tree; approval (active or candidate);
//! - steps 8-10: one atomic commit — tree, entity, leaf, supersession of the old leaf, stale
//!   summaries, root marked stale, jobs (seal, index) and audit events — after the body files
//!   are written;
//! - steps 11-12: jobs run later (or index inline); a result per chunk.
//!
//! An event is all or nothing: its chunks are committed together. Bodies are written before the
//! commit and deleted if it fails, so a failed event leaves no leaf and no file; a crash between
//! the two leaves at most an unreferenced file, which `fsck` removes.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::admission::{Admission, AdmissionInput, ApprovalInput};
use arbor_domain::decision::{EntityDecision, EntityProposal, MAX_ENTITY_SHORTLIST};
use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::event::Event;
use arbor_domain::id::{EntityId, LeafId, NodeId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{
    Actor, Category, ContentHash, EntityLinks, LeafRecord, POLICY_VERSION, Provenance, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_domain::sensitivity::may_leave_the_machine;
use arbor_domain::supersession::{DuplicateJudgement, ExistingLeaf, WriteOutcome};
use arbor_domain::text::{fingerprint, tokenize, truncate_chars};
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_domain::visibility::{LayerFilter, NodeKind, VisibilityFilter};
use arbor_ports::{
    AssessRequest, Assessment, AuditEvent, Change, ChangeSet, DuplicateCandidate, DuplicateRequest, EntityQuery,
    HeuristicReasoner, Job, JobKind, LeafExpect, Locality, TextQuery, TreeLeafQuery,
};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// The longest leaf summary kept on the metadata row; the whole text is in the body.
const LEAF_SUMMARY_CHARS: usize = 280;

/// How many similar leaves a reasoner is shown when judging duplicates.
const DUPLICATE_CANDIDATES: usize = 3;

/// What happened to one chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum IngestOutcome {
    Created { leaf_id: LeafId, status: LeafStatus },
    Superseding { leaf_id: LeafId, replaces: LeafId, status: LeafStatus },
    NoopDuplicate { existing: LeafId, existing_status: LeafStatus },
    NotAdmitted { reason: String },
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

/// The result for one chunk: `{leaf_id, tree_id, entity_decision, outcome}` [000 §7 step 12].
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

/// A chunk planned for the commit.
struct PlannedLeaf {
    record: LeafRecord,
    body: String,
    /// Active leaves this one replaces when it becomes active now.
    replaces: Vec<LeafRecord>,
}

/// Everything one attempt at an event will commit.
#[derive(Default)]
struct EventPlan {
    results: Vec<ChunkResult>,
    leaves: Vec<PlannedLeaf>,
    new_entities: BTreeMap<EntitySlug, Entity>,
    trees: BTreeMap<TreeId, TreeRecord>,
}

impl Arbor {
    /// Ingests one event into the write namespace of `chain` (its most specific layer).
    pub async fn ingest(&self, chain: &ReadChain, event: Event) -> AppResult<IngestReport> {
        event.validate()?;
        let namespace = chain.write_namespace().clone();
        let mut last_conflict = String::new();
        for attempt in 1..=self.options.max_write_attempts {
            let now = self.now();
            let plan = self.plan_event(&namespace, &event, now).await?;
            match self.commit_plan(&namespace, plan, now).await {
                Ok(report) => return Ok(report),
                Err(AppError::Port(error)) if error.is_conflict() => {
                    tracing::debug!(attempt, %error, "ingest conflicted; planning again");
                    last_conflict = error.to_string();
                }
                Err(other) => return Err(other),
            }
        }
        Err(AppError::Contention { attempts: self.options.max_write_attempts, last: last_conflict })
    }

    async fn plan_event(&self, namespace: &Namespace, event: &Event, now: Timestamp) -> AppResult<EventPlan> {
        let observed_at = event.observed_at.unwrap_or(now);
        let source_sha256 = ContentHash::of(event.text.as_bytes());
        let category = event.hints.category.unwrap_or(if event.actor == Actor::Integration {
            Category::Integration
        } else {
            Category::Interaction
        });
        let mut plan = EventPlan::default();
        for (index, chunk) in self.policy.chunker.split(&event.text).into_iter().enumerate() {
            let result = self
                .plan_chunk(&mut plan, namespace, event, category, index, &chunk, observed_at, &source_sha256, now)
                .await?;
            plan.results.push(result);
        }
        Ok(plan)
    }

    #[allow(clippy::too_many_arguments)]
    async fn plan_chunk(
        &self,
        plan: &mut EventPlan,
        namespace: &Namespace,
        event: &Event,
        category: Category,
        index: usize,
        text: &str,
        observed_at: Timestamp,
        source_sha256: &ContentHash,
        now: Timestamp,
    ) -> AppResult<ChunkResult> {
        let store = &self.ports.store;
        // Steps 2-3: the shortlist a reasoner may pick from, then its assessment.
        let mut terms = tokenize(text);
        if let Some(hint) = &event.hints.entity {
            terms.extend(tokenize(&hint.name));
        }
        let mut shortlist = store.find_entities(namespace, &EntityQuery { terms, limit: MAX_ENTITY_SHORTLIST }).await?;
        // Entities this event is about to create are on the shortlist too.
        shortlist.extend(plan.new_entities.values().cloned());
        let request = AssessRequest {
            text: text.to_owned(),
            actor: event.actor,
            namespace: namespace.kind(),
            hints: event.hints.clone(),
            shortlist: shortlist.clone(),
        };
        let private = !may_leave_the_machine(event.hints.sensitivity, text);
        let (assessment, extractor) = self.assess(&request, private).await;

        let admission = self.policy.admission.decide(AdmissionInput {
            text,
            confidence: assessment.admission,
            manual: event.source.is_manual(),
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
        let sensitivity = match (&admission, &decision) {
            (Admission::Admit { sensitivity }, _) => *sensitivity,
            (Admission::Refuse { refusal }, _) => {
                return Ok(ChunkResult {
                    chunk: index,
                    namespace: namespace.clone(),
                    tree_id: None,
                    entity_decision: decision,
                    outcome: IngestOutcome::NotAdmitted { reason: refusal.to_string() },
                    approval: None,
                });
            }
        };

        // Steps 4-6 and 8: the owning entity and tree.
        let (tree_id, primary, tree_title) = match &decision {
            EntityDecision::MatchedExisting { entity, .. } => {
                let entity = shortlist.iter().find(|e| &e.id == entity).cloned().ok_or_else(|| {
                    AppError::InvalidRequest(format!("matched entity {entity} is not on the shortlist"))
                })?;
                (TreeId::new(category, &entity.slug), Some(entity.id.clone()), entity.name.clone())
            }
            EntityDecision::CreateNew { name, entity_type, slug, .. } => {
                let entity = match plan.new_entities.get(slug) {
                    Some(planned) => planned.clone(),
                    None => {
                        let entity = Entity {
                            id: EntityId::generate(Arbor::millis(now), self.ports.ids.random()),
                            namespace: namespace.clone(),
                            entity_type: *entity_type,
                            slug: slug.clone(),
                            name: name.clone(),
                            aliases: Vec::new(),
                            created_at: now,
                        };
                        plan.new_entities.insert(slug.clone(), entity.clone());
                        entity
                    }
                };
                (TreeId::new(category, &entity.slug), Some(entity.id.clone()), entity.name.clone())
            }
            EntityDecision::Fallback { .. } | EntityDecision::NotAdmitted => {
                (TreeId::uncategorized(category), None, "Uncategorized".to_owned())
            }
        };
        let tree = match store.tree(namespace, &tree_id).await? {
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
        plan.trees.insert(tree_id.clone(), tree);

        // Step 7: dedup and supersession within the tree.
        let chunk_fingerprint = fingerprint(text);
        let subject = assessment.subject.clone();
        let mut existing = self.existing_for_dedup(namespace, &tree_id, &chunk_fingerprint, subject.as_ref()).await?;
        for planned in plan.leaves.iter().filter(|p| p.record.tree_id == tree_id) {
            existing.push(existing_leaf(&planned.record));
        }
        let judgement = if existing.is_empty() {
            self.judge_duplicate(namespace, &tree_id, text, subject.as_ref(), private, &mut existing).await?
        } else {
            None
        };
        let resolution =
            self.policy.supersession.resolve(&chunk_fingerprint, subject.as_ref(), &existing, judgement.as_ref());
        let replaces = match resolution.outcome {
            WriteOutcome::NoopDuplicate { existing, existing_status } => {
                return Ok(ChunkResult {
                    chunk: index,
                    namespace: namespace.clone(),
                    tree_id: Some(tree_id),
                    entity_decision: decision,
                    outcome: IngestOutcome::NoopDuplicate { existing, existing_status },
                    approval: None,
                });
            }
            WriteOutcome::Created => None,
            WriteOutcome::Superseding { replaces } => Some(replaces),
        };
        // A leaf planned earlier in this same event is not replaced by a later chunk: the
        // event's chunks stand side by side.
        let replaces = replaces.filter(|id| !plan.leaves.iter().any(|p| &p.record.id == id));
        let replaced_record = match &replaces {
            Some(id) => store.leaf(std::slice::from_ref(namespace), id).await?,
            None => None,
        };

        // Approval: active now, or a candidate awaiting a person.
        let approval = self.policy.approval.decide(ApprovalInput {
            namespace: namespace.kind(),
            kind: assessment.kind,
            sensitivity,
            actor: event.actor,
            manual: event.source.is_manual(),
        });
        let id = self.new_leaf_id(now);
        let (lineage, version) = match &replaced_record {
            Some(old) => (old.lineage.clone(), old.version.next()),
            None => (id.clone(), Version::FIRST),
        };
        let validity = Validity::new(event.hints.valid_from.or(Some(observed_at)), event.hints.valid_to)
            .unwrap_or(Validity::starting(observed_at));
        let secondary =
            self.policy.entities.validate_secondary(&assessment.secondary_entities, &shortlist, primary.as_ref());
        let record = LeafRecord {
            id: id.clone(),
            lineage,
            version,
            namespace: namespace.clone(),
            category,
            tree_id: tree_id.clone(),
            kind: assessment.kind,
            title: truncate_chars(&assessment.title, 200),
            summary: truncate_chars(text, LEAF_SUMMARY_CHARS),
            subject: subject.clone(),
            fingerprint: chunk_fingerprint,
            body_path: BodyPath::leaf(namespace, category, &tree_id, &id).to_string(),
            // Set once the body is written.
            body_sha256: ContentHash::of(b""),
            observed_at,
            created_at: now,
            validity,
            expires_at: event.hints.expires_at,
            known: if approval.status == LeafStatus::Active { KnownSpan::from(now) } else { KnownSpan::NEVER },
            confidence: assessment.admission,
            salience: assessment.salience,
            sensitivity,
            status: approval.status,
            supersedes: replaced_record.as_ref().map(|old| old.id.clone()),
            superseded_by: None,
            provenance: Provenance {
                source: event.source.clone(),
                actor: event.actor,
                source_sha256: source_sha256.clone(),
                extractor,
                policy_version: POLICY_VERSION.to_owned(),
            },
            labels: assessment.labels.clone(),
            entities: EntityLinks { primary, secondary },
            parent: None,
        };

        // What the new leaf replaces if it becomes active now: the planned target and anything
        // else current about the same subject.
        let mut replaced = Vec::new();
        if record.status == LeafStatus::Active {
            let tree_leaves: Vec<LeafRecord> = match &record.subject {
                Some(subject) => {
                    let query = TreeLeafQuery {
                        subject: Some(subject.clone()),
                        statuses: vec![LeafStatus::Active],
                        ..TreeLeafQuery::default()
                    };
                    store.tree_leaves(namespace, &tree_id, &query).await?
                }
                None => Vec::new(),
            };
            let mut candidates: Vec<LeafRecord> = tree_leaves;
            if let Some(old) = &replaced_record
                && !candidates.iter().any(|l| l.id == old.id)
            {
                candidates.push(old.clone());
            }
            let views: Vec<ExistingLeaf> = candidates.iter().map(existing_leaf).collect();
            let ids =
                self.policy.supersession.on_activation(&existing_leaf(&record), record.supersedes.as_ref(), &views);
            let valid_from = record.validity.valid_from.unwrap_or(observed_at);
            for old in candidates.into_iter().filter(|l| ids.contains(&l.id)) {
                replaced.push(old.superseded_by(&record.id, valid_from, now)?);
            }
        }

        let body = markdown::render_leaf(&record, text);
        let outcome = match &record.supersedes {
            Some(old) => {
                IngestOutcome::Superseding { leaf_id: record.id.clone(), replaces: old.clone(), status: record.status }
            }
            None => IngestOutcome::Created { leaf_id: record.id.clone(), status: record.status },
        };
        plan.leaves.push(PlannedLeaf { record, body, replaces: replaced });
        Ok(ChunkResult {
            chunk: index,
            namespace: namespace.clone(),
            tree_id: Some(tree_id),
            entity_decision: decision,
            outcome,
            approval: Some(approval.reason),
        })
    }

    /// Asks the configured reasoner, falling back to the deterministic one when the text may
    /// not leave the machine or the answer is unusable. Returns the assessment and the id of
    /// the reasoner that actually made it, for provenance.
    async fn assess(&self, request: &AssessRequest, private: bool) -> (Assessment, String) {
        let deterministic = || (HeuristicReasoner.assess_now(request), arbor_ports::HEURISTIC_REASONER_ID.to_owned());
        if private && self.ports.reasoner.locality() == Locality::Remote {
            return deterministic();
        }
        match self.ports.reasoner.assess(request).await {
            Ok(assessment) => (assessment, self.ports.reasoner.id()),
            Err(error) => {
                self.note_reasoner_fallback("assess", &error);
                deterministic()
            }
        }
    }

    async fn existing_for_dedup(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        fingerprint: &ContentHash,
        subject: Option<&arbor_domain::model::SubjectKey>,
    ) -> AppResult<Vec<ExistingLeaf>> {
        let store = &self.ports.store;
        let by_fingerprint = TreeLeafQuery {
            fingerprint: Some(fingerprint.clone()),
            statuses: vec![LeafStatus::Active, LeafStatus::Candidate, LeafStatus::Rejected],
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
        Ok(leaves.iter().map(existing_leaf).collect())
    }

    /// Shows the reasoner the most similar current leaves of the tree and asks whether the new
    /// chunk repeats or replaces one of them. The leaves shown join `existing`, so the domain
    /// can check the answer names one of them.
    async fn judge_duplicate(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        text: &str,
        subject: Option<&arbor_domain::model::SubjectKey>,
        private: bool,
        existing: &mut Vec<ExistingLeaf>,
    ) -> AppResult<Option<DuplicateJudgement>> {
        if !self.ports.index.capabilities().full_text {
            return Ok(None);
        }
        let now = self.now();
        let filter = VisibilityFilter {
            layers: vec![LayerFilter { namespace: namespace.clone(), frozen_at: None }],
            now,
            as_of: None,
            include_restricted: true,
            node_kinds: vec![NodeKind::Leaf],
            categories: Vec::new(),
            tree: Some(tree.clone()),
            kinds: Vec::new(),
            time_range: None,
        };
        let hits = self
            .ports
            .index
            .search_text(&TextQuery { filter, text: text.to_owned(), limit: DUPLICATE_CANDIDATES })
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
        let remote = self.ports.reasoner.locality() == Locality::Remote;
        let shown_private = leaves.iter().any(|l| !l.sensitivity.may_leave_the_machine());
        if remote && (private || shown_private) {
            return Ok(Some(HeuristicReasoner.judge_now(&request)));
        }
        Ok(Some(match self.ports.reasoner.judge_duplicate(&request).await {
            Ok(judgement) => judgement,
            Err(error) => {
                self.note_reasoner_fallback("judge_duplicate", &error);
                HeuristicReasoner.judge_now(&request)
            }
        }))
    }

    /// Writes the bodies, then commits everything in one change set; deletes the bodies again
    /// if the commit fails.
    async fn commit_plan(&self, namespace: &Namespace, mut plan: EventPlan, now: Timestamp) -> AppResult<IngestReport> {
        if plan.leaves.is_empty() {
            return Ok(IngestReport { chunks: plan.results });
        }
        let mut written: Vec<BodyPath> = Vec::new();
        let outcome = self.write_and_commit(namespace, &mut plan, now, &mut written).await;
        match outcome {
            Ok(index_jobs) => {
                if self.options.index_inline {
                    self.run_inline(index_jobs).await;
                }
                Ok(IngestReport { chunks: plan.results })
            }
            Err(error) => {
                for path in &written {
                    if let Err(cleanup) = self.ports.bodies.delete(path).await {
                        tracing::warn!(path = %path, %cleanup, "could not remove the body of a failed write; fsck will");
                    }
                }
                Err(error)
            }
        }
    }

    async fn write_and_commit(
        &self,
        namespace: &Namespace,
        plan: &mut EventPlan,
        now: Timestamp,
        written: &mut Vec<BodyPath>,
    ) -> AppResult<Vec<Job>> {
        for planned in &mut plan.leaves {
            let path = BodyPath::parse(&planned.record.body_path)
                .map_err(|e| AppError::InvalidRequest(format!("body path: {e}")))?;
            let sha = self.ports.bodies.put(&path, planned.body.as_bytes()).await?;
            written.push(path);
            planned.record.body_sha256 = sha;
        }
        let mut changes = ChangeSet::new();
        for entity in plan.new_entities.values() {
            changes.push(Change::InsertEntity(entity.clone()));
        }
        for tree in plan.trees.values() {
            changes.push(Change::EnsureTree(tree.clone()));
        }
        let mut index_jobs = Vec::new();
        let mut sealed_trees = BTreeMap::new();
        let mut touched = BTreeSet::new();
        for planned in &plan.leaves {
            let record = &planned.record;
            changes.push(Change::InsertLeaf(record.clone()));
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.created",
                namespace,
                record.node_id(),
                &record.body_sha256,
            )));
            let job = self.job(now, JobKind::Index, namespace, Some(&record.tree_id), Some(record.node_id()));
            index_jobs.push(job.clone());
            changes.push(Change::Enqueue(job));
            for old in &planned.replaces {
                changes
                    .push(Change::UpdateLeaf { expect: LeafExpect::status(LeafStatus::Active), record: old.clone() });
                changes.push(Change::Audit(self.audit(
                    now,
                    "leaf.superseded",
                    namespace,
                    old.node_id(),
                    &old.body_sha256,
                )));
                let job = self.job(now, JobKind::Index, namespace, Some(&old.tree_id), Some(old.node_id()));
                index_jobs.push(job.clone());
                changes.push(Change::Enqueue(job));
                self.invalidate_above(&mut changes, &mut touched, old, StaleCause::Superseded, now).await?;
            }
            if record.status == LeafStatus::Active {
                sealed_trees.insert(record.tree_id.clone(), ());
            }
        }
        for tree_id in sealed_trees.keys() {
            let tree = &plan.trees[tree_id];
            if tree.root.is_some() && !tree.root_stale {
                changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: tree_id.clone() });
            }
            changes.push(Change::Enqueue(self.job(now, JobKind::Seal, namespace, Some(tree_id), None)));
        }
        self.ports.store.commit(changes).await?;
        Ok(index_jobs)
    }

    pub(crate) fn audit(
        &self,
        at: Timestamp,
        action: &str,
        namespace: &Namespace,
        node: NodeId,
        content: &ContentHash,
    ) -> AuditEvent {
        AuditEvent {
            at,
            action: action.to_owned(),
            namespace: namespace.clone(),
            node: Some(node),
            content_sha256: Some(content.clone()),
            actor: self.options.worker.clone(),
            policy_version: POLICY_VERSION.to_owned(),
        }
    }

    pub(crate) fn job(
        &self,
        now: Timestamp,
        kind: JobKind,
        namespace: &Namespace,
        tree: Option<&TreeId>,
        node: Option<NodeId>,
    ) -> Job {
        let key = match (&node, tree) {
            (Some(node), _) => format!("{}:{}", kind.as_str(), node),
            (None, Some(tree)) => format!("{}:{}:{}", kind.as_str(), namespace, tree),
            (None, None) => format!("{}:{}", kind.as_str(), namespace),
        };
        Job {
            id: self.new_job_id(now),
            kind,
            namespace: namespace.clone(),
            tree: tree.cloned(),
            node,
            key,
            attempts: 0,
            run_after: now,
            created_at: now,
            last_error: None,
        }
    }
}

pub(crate) fn existing_leaf(record: &LeafRecord) -> ExistingLeaf {
    ExistingLeaf {
        id: record.id.clone(),
        fingerprint: record.fingerprint.clone(),
        subject: record.subject.clone(),
        status: record.status,
    }
}
