//! Ingest: the interaction upsert of [design §write-path], one event or a batch at a time.
//!
//! - per chunk: the entity shortlist from the store (step 1), the reasoner's assessment, which
//!   picks from it (2), admission (3), the `EntityDecision` matrix (4), the claims read (5),
//!   filing and re-filing (6), dedup and `Supersession` inside the owning tree (7), the claims
//!   against the namespace's current memories (8), the planned leaf and its approval, held as
//!   a conflict where it would replace something more authoritative (9), and what an active
//!   one retires and marks (10);
//! - per batch: the bodies made durable and one atomic commit — entities, trees, retired
//!   leaves, marks, new leaves, stale summaries, audit events and jobs (11) — then the index
//!   inline by default (12) and a result per chunk (13).
//!
//! A batch is planned against the store *and* against what the batch itself has planned so
//! far, so a later event can supersede an earlier one in the same batch and an entity created
//! by one event is matched by the next. Bodies are written before the commit and deleted if it
//! fails: a failed batch leaves no leaf and no file; a crash between the two leaves at most
//! unreferenced files, which `fsck` removes. An invalid event is refused on its own and
//! leaves no trace; the rest of its batch goes ahead.

use arbor_domain::admission::{Admission, AdmissionInput, AdmissionRefusal, Approval, ApprovalInput, is_manual_entry};
use arbor_domain::claims::{FirstPerson, FlagReason, LeafClaims};
use arbor_domain::conflict::{ClaimView, conflict_between};
use arbor_domain::decision::{EntityDecision, EntityProposal, MAX_ENTITY_SHORTLIST};
use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::event::Event;
use arbor_domain::id::{EntityId, LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    Category, ContentHash, EntityLinks, LeafRecord, POLICY_VERSION, Provenance, SubjectKey, TreeId, TreeRecord,
    leaf_summary,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::reconcile::{CANDIDATES, Claim, PER_KEY};
use arbor_domain::sensitivity::{Sensitivity, may_be_given_to};
use arbor_domain::supersession::{DuplicateJudgement, ExistingLeaf, Resolution, WHOLE_MEMORY, WriteOutcome};
use arbor_domain::text::{fingerprint, query_terms, tokenize};
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{
    AssessRequest, Assessment, DuplicateCandidate, DuplicateRequest, EntityQuery, FiledQuery, TermSelection, TextQuery,
    TreeLeafQuery,
};
use serde::Serialize;

use crate::reconcile::{Doubted, Replaced, marked_doubted, marked_retired};
use crate::write::{Attempt, BatchPlan, PlannedLeaf, existing_leaf};
use crate::{AppError, AppResult, Arbor};

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
        /// Why the new memory replaces the old one; written out as the sentence it renders as.
        #[serde(serialize_with = "as_reason")]
        because: Because,
    },
    NoopDuplicate {
        existing: LeafId,
        existing_status: LeafStatus,
    },
    /// Refused: a client branches on the refusal's kind; it is written out as the sentence it
    /// renders as (`reason`).
    NotAdmitted {
        #[serde(rename = "reason", serialize_with = "as_sentence")]
        refusal: AdmissionRefusal,
    },
}

fn as_sentence<S: serde::Serializer>(refusal: &AdmissionRefusal, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(refusal)
}

fn as_reason<S: serde::Serializer>(because: &Because, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(because)
}

/// Why a new memory replaces an older one: a caller in the process branches on the kind and
/// reads the rule and both claims; JSON and people get the sentence it renders as (the rule
/// and claims go out apart, as the chunk's `replaced`).
#[derive(Debug, Clone, PartialEq)]
pub enum Because {
    /// Supersession's rule 2: the subject the caller named (`hints.subject`) is a current
    /// memory's in the same tree, and this is its newer version.
    SameSubject,
    /// A rule proved the older one replaced: the retirement, with its rule and both claims.
    Retired(arbor_domain::claims::Retirement),
}

impl std::fmt::Display for Because {
    /// "same subject" for a hint; for a retirement whose attribute, the rule and the two values
    /// ("maya · residence: was \"Porto\", now \"Amsterdam\" (holds one value)").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use arbor_domain::claims::RetireRule;
        let retirement = match self {
            Because::SameSubject => return f.write_str("same subject"),
            Because::Retired(retirement) => retirement,
        };
        let value = |v: &Option<String>| v.as_deref().map_or_else(|| "(none)".to_owned(), |v| format!("\"{v}\""));
        let (subject, attribute) = (&retirement.old.subject.key, &retirement.attribute);
        let (old, new) = (value(&retirement.old.value), value(&retirement.new.value));
        match retirement.rule {
            RetireRule::OneValue => write!(f, "{subject} · {attribute}: was {old}, now {new} (holds one value)"),
            RetireRule::Ended => write!(f, "{subject} · {attribute}: {old} ended"),
            RetireRule::Judged => {
                write!(f, "{subject} · {attribute}: was {old}, now {new} (judged by the model reasoner)")
            }
        }
    }
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
    /// The current memories it retired, each with the attribute, the rule and the two values:
    /// what a host tells the person ("I've updated where Elif works").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<Replaced>,
    /// The current memories it may have replaced, unproven: they stay current, marked as
    /// possibly outdated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub doubted: Vec<Doubted>,
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
    /// What the chunk says, as claims (read once, here, and kept with its leaf).
    claims: LeafClaims,
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
        let category = event.category();
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
            replaced: Vec::new(),
            doubted: Vec::new(),
        };
        let reading = self.read_chunk(plan, namespace, &chunk).await?;
        let sensitivity = match &reading.admission {
            Admission::Admit { sensitivity } => *sensitivity,
            Admission::Refuse { refusal } => {
                let outcome = IngestOutcome::NotAdmitted { refusal: refusal.clone() };
                return Ok(result(None, reading.decision, outcome, None));
            }
        };
        let (tree_id, primary) = self.file_under(plan, namespace, chunk.category, &reading, now).await?;

        // Step 7: dedup and supersession within the tree, against the store and this batch.
        let resolution = self.resolve_duplicates(plan, namespace, &tree_id, &chunk.text, &reading).await?;
        let hinted = match resolution.outcome {
            WriteOutcome::NoopDuplicate { existing, existing_status } => {
                let outcome = IngestOutcome::NoopDuplicate { existing, existing_status };
                return Ok(result(Some(tree_id), reading.decision, outcome, None));
            }
            WriteOutcome::Created => None,
            WriteOutcome::Superseding { replaces } => Some(replaces),
        };
        // Does it replace a current memory, wherever that was filed? Its claims against the
        // claims of the current memories about the same subjects and attributes.
        // Shown to a model only if admission's sensitivity allows (an assessment can restrict it).
        let shareable = reading.shareable && sensitivity.may_be_given_to(self.ports.reasoner.locality());
        let shown = shareable.then_some(chunk.text.as_str());
        let reconciled = self.reconcile_claims(plan, namespace, None, &reading.claims, shown).await?;
        let replacing = match (hinted, reconciled.retire.first()) {
            (Some(id), _) => Some((id, Because::SameSubject)),
            (None, Some((old, retirement))) => Some((old.id.clone(), Because::Retired(retirement.clone()))),
            (None, None) => None,
        };
        let replaced = match &replacing {
            Some((id, _)) => self.current_record(plan, namespace, id).await?,
            None => None,
        };
        let filing = Filing { tree_id: tree_id.clone(), primary, sensitivity };
        let (record, approval) = self.planned_leaf(namespace, &chunk, &reading, filing, replaced.as_ref(), now);
        let (mut replaced_report, mut doubted_report) = (Vec::new(), Vec::new());
        if record.status == LeafStatus::Active {
            self.retire_on_activation(plan, namespace, &record, replaced.as_ref(), now).await?;
            (replaced_report, doubted_report) = plan_reconciled(plan, &record, &reconciled, now)?;
            if let Some(id) = &resolution.doubted
                && !replaced_report.iter().any(|r| &r.leaf_id == id)
                && !doubted_report.iter().any(|d| &d.leaf_id == id)
            {
                doubted_report.extend(self.plan_judged_replacement(plan, namespace, id, &record).await?);
            }
        }
        let outcome = match replacing.filter(|(old, _)| record.supersedes.as_ref() == Some(old)) {
            Some((old, because)) => {
                IngestOutcome::Superseding { leaf_id: record.id.clone(), replaces: old, status: record.status, because }
            }
            None => IngestOutcome::Created { leaf_id: record.id.clone(), status: record.status },
        };
        plan.leaves.push(PlannedLeaf { record, text: chunk.text });
        let mut chunk_result = result(Some(tree_id), reading.decision, outcome, Some(approval.reason));
        chunk_result.replaced = replaced_report;
        chunk_result.doubted = doubted_report;
        Ok(chunk_result)
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
        let (mut assessment, extractor) = self.assess(&request, shareable).await;
        // A subject key makes a memory replace the current one with the same key in its tree
        // (`Supersession` rule 2), so only the host may give one: a key a model made up
        // ("kofi_languages" for "Kofi is learning Portuguese") would retire a true fact on a
        // guess. What replaces what otherwise takes a proof by claims.
        assessment.subject = event.hints.subject.clone();
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
        // Whose "I" the text is: the person's, unless an assistant, a tool or a program said it.
        let claims = LeafClaims::of(&arbor_domain::claims::read_as(text, FirstPerson::of(event.actor)));
        Ok(Reading { assessment, extractor, admission, decision, shortlist, shareable, claims })
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
    ) -> AppResult<Resolution> {
        let chunk_fingerprint = fingerprint(text);
        let subject = reading.assessment.subject.as_ref();
        let mut existing = self.existing_for_dedup(plan, namespace, tree_id, &chunk_fingerprint, subject).await?;
        let judgement = if existing.is_empty() {
            self.judge_duplicate(namespace, tree_id, text, subject, reading.shareable, &mut existing).await?
        } else {
            None
        };
        Ok(self.policy.supersession.resolve(&chunk_fingerprint, subject, &existing, judgement.as_ref()))
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
            approval = Approval::held_by_conflict(cause.reason());
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
            summary: leaf_summary(&chunk.text),
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
            claims: reading.claims.clone(),
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

    /// Marks leaf `id`, which a reasoner judged `record` replaces (`Resolution::doubted`), as
    /// possibly outdated by it, if it is still current: both stay current, since a judgement
    /// proves nothing by itself.
    async fn plan_judged_replacement(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        id: &LeafId,
        record: &LeafRecord,
    ) -> AppResult<Option<Doubted>> {
        let Some(old) = self.current_record(plan, namespace, id).await? else { return Ok(None) };
        if old.status != LeafStatus::Active {
            return Ok(None);
        }
        let reason = FlagReason::JudgedUpdate;
        let doubted = Doubted { leaf_id: old.id.clone(), attribute: WHOLE_MEMORY.to_owned(), reason: reason.as_str() };
        let claims = old.claims.doubted_by(&record.id, &record.lineage, WHOLE_MEMORY, reason);
        plan.doubt(LeafRecord { claims, ..old });
        Ok(Some(doubted))
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

/// Plans what the claims decided for an active new leaf `record` beyond the leaf it replaces
/// (which `retire_on_activation` retired): every retirement marked with its rule, every doubt
/// on a memory that stays current; returns both as the save's reply names them.
fn plan_reconciled(
    plan: &mut BatchPlan,
    record: &LeafRecord,
    reconciled: &crate::reconcile::Reconciled,
    now: Timestamp,
) -> AppResult<(Vec<Replaced>, Vec<Doubted>)> {
    let valid_from = record.validity.valid_from.unwrap_or(record.observed_at);
    let mut replaced = Vec::new();
    for (old, retirement) in &reconciled.retire {
        let retired = match plan.superseded.get(&old.id) {
            Some(retired) => retired.clone(),
            None => match plan.leaves.iter().find(|p| p.record.id == old.id) {
                Some(planned) if planned.record.status != LeafStatus::Active => planned.record.clone(),
                _ => old.superseded_by(&record.id, valid_from, now)?,
            },
        };
        plan.retire(marked_retired(retired, &record.id, retirement));
        replaced.push(Replaced::of(old, retirement));
    }
    let mut doubted = Vec::new();
    for (old, doubt) in &reconciled.doubt {
        if plan.superseded.contains_key(&old.id) {
            continue;
        }
        plan.doubt(marked_doubted(plan.overlay(old.clone()), &record.id, &record.lineage, doubt));
        doubted.push(Doubted::of(old, doubt));
    }
    Ok((replaced, doubted))
}
