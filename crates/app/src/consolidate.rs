//! Consolidation ("dream"): a pass over the memories written since the last pass, proposing
//! merges, updates and invalidations in hindsight (`Consolidation::propose`) and applying the
//! ones policy allows.
//!
//! - Work follows what changed: each namespace is read from the caller's mark on
//!   (`MetadataStore::leaves_written_after`), at most [`MAX_READ_PER_PASS`] leaves a pass, and
//!   each changed memory brings only the current memories of its namespace filed under what it
//!   names (`MetadataStore::leaves_filed_under`, the newest few per key), so a pass costs what
//!   changed and what is said about the same subjects, never a search of the whole store. The
//!   pass returns the mark to resume from.
//! - A proposal is applied only when the memory that stays is no less authoritative and holds
//!   from no earlier than the one it retires (`conflict_between`, as at write time); the rest
//!   are returned for a person, with the reason.
//! - Applying never deletes: the retired memory becomes history (superseded, its validity
//!   closed where the memory that stays begins), its summaries go stale and are re-sealed, its
//!   index entry follows. One change set per namespace; a concurrent write to the same memories
//!   makes the pass plan again.
//! - Idempotent: a second pass over an unchanged store finds every retired memory retired and
//!   proposes nothing. A dry run plans the same and writes nothing.
//! - With a model reasoner, each changed memory the rules propose nothing for is shown, with
//!   the earlier memories filed under what it names, to the reasoner's duplicate judgement
//!   (validated by `Consolidation::judged`), within a hard budget of calls per pass
//!   ([`ConsolidateRequest::model_calls`]); what the budget leaves unjudged is counted in the
//!   report and judged by no later pass (the rules still are). Only memories written after the
//!   mark are shown, not the margin read again, so no memory costs two passes a call. A dry run
//!   asks the model as a pass would (its plan is the pass's plan), within the same budget. The
//!   deterministic reasoner is not asked: its judgement is the rules'. Memories a remote model
//!   may not read never reach it.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::conflict::{ClaimView, conflict_between};
use arbor_domain::consolidation::{CurrentMemory, JUDGED_CANDIDATES, Proposal, ProposalKind, held_beside};
use arbor_domain::id::LeafId;
use arbor_domain::judgement::{DuplicateCandidate, DuplicateRequest};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::reconcile::Claim;
use arbor_domain::seal::StaleCause;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::NodeFacts;
use arbor_ports::{Change, ChangeSet, Error, HEURISTIC_REASONER_ID, JobKind, LeafExpect, WriteMark};
use serde::Serialize;

use crate::write::Attempt;
use crate::{AppResult, Arbor};

/// The most leaves one pass reads per namespace; the rest wait for the next pass, which
/// resumes from the mark this one returns.
pub const MAX_READ_PER_PASS: usize = 5_000;

/// What to consolidate.
#[derive(Debug, Clone)]
pub struct ConsolidateRequest {
    /// The namespaces, each with the mark the last pass returned (none: from the start).
    pub namespaces: Vec<(Namespace, Option<WriteMark>)>,
    /// Plan and report, change nothing.
    pub dry_run: bool,
    /// How far before each mark the pass reads again: a leaf's write time is when its batch
    /// was planned, which may be a while before it was committed (or come from a clock behind
    /// this one), so a batch in flight at the last pass is caught by the next.
    /// [`ConsolidateRequest::RESUME_MARGIN`] by default.
    pub resume_margin: jiff::SignedDuration,
    /// The most calls to a model reasoner the whole pass may make
    /// ([`ConsolidateRequest::MODEL_CALLS`] by default; 0: none). Each call carries one memory
    /// and at most `JUDGED_CANDIDATES` earlier ones, so the budget bounds tokens too.
    pub model_calls: usize,
    /// The most leaves the pass reads in each namespace ([`MAX_READ_PER_PASS`] by default);
    /// the rest wait for the next pass.
    pub max_read: usize,
}

impl ConsolidateRequest {
    /// Ten minutes: longer than a batch takes to plan and commit, model calls included.
    pub const RESUME_MARGIN: jiff::SignedDuration = jiff::SignedDuration::from_mins(10);

    /// A hundred calls: a pass over a day's memories of one busy user costs cents and a minute
    /// or two of a remote model's time, not an open-ended bill.
    pub const MODEL_CALLS: usize = 100;

    /// A pass over `namespaces`, each from its mark, with the default margin and model budget.
    pub fn new(namespaces: Vec<(Namespace, Option<WriteMark>)>, dry_run: bool) -> ConsolidateRequest {
        ConsolidateRequest {
            namespaces,
            dry_run,
            resume_margin: ConsolidateRequest::RESUME_MARGIN,
            model_calls: ConsolidateRequest::MODEL_CALLS,
            max_read: MAX_READ_PER_PASS,
        }
    }
}

/// How a pass used a model reasoner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelUse {
    /// The reasoner asked (its id).
    pub reasoner: String,
    /// The pass's budget of calls, and the calls made.
    pub budget: usize,
    pub calls: usize,
    /// New memories the rules proposed nothing for and the budget left unjudged (counted once
    /// per namespace, however many times its pass was planned).
    pub unjudged: usize,
}

/// What a model reasoner judged in one namespace's pass.
struct Judged {
    proposals: Vec<Proposal>,
    unjudged: usize,
}

/// One proposal, with what a person needs to check it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalView {
    #[serde(flatten)]
    pub proposal: Proposal,
    /// Where each memory came from (`message:m12`, `user_entry`, …).
    pub retire_source: String,
    pub keep_source: String,
    /// Applied (or, in a dry run, would be); otherwise why it waits for a person.
    pub applied: bool,
    pub left_because: Option<String>,
}

/// What a pass did in one namespace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamespacePass {
    pub namespace: Namespace,
    /// Leaves this pass read: those written since the last pass, and the last minutes before
    /// its mark again.
    pub read: usize,
    /// Of those, the ones written after the mark.
    pub new: usize,
    /// Where the next pass resumes.
    pub through: Option<WriteMark>,
    /// Whether leaves remain past `through` (more than one pass reads).
    pub more: bool,
    pub proposals: Vec<ProposalView>,
    /// New memories of this namespace a model reasoner would have been shown, had the pass's
    /// budget lasted.
    #[serde(skip_serializing_if = "is_zero")]
    pub unjudged: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a whole pass did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsolidationRun {
    pub at: Timestamp,
    pub dry_run: bool,
    pub namespaces: Vec<NamespacePass>,
    /// `None` when no model reasoner is configured (the rules alone decided).
    pub model: Option<ModelUse>,
}

impl ConsolidationRun {
    /// A pass over no namespace.
    pub fn empty(at: Timestamp, dry_run: bool) -> ConsolidationRun {
        ConsolidationRun { at, dry_run, namespaces: Vec::new(), model: None }
    }

    /// Takes in the pass `next` made over further namespaces, as one pass: its namespaces
    /// after these, its model calls and unjudged memories added to these.
    pub fn absorb(&mut self, next: ConsolidationRun) {
        self.namespaces.extend(next.namespaces);
        match (&mut self.model, next.model) {
            (Some(mine), Some(theirs)) => {
                mine.calls += theirs.calls;
                mine.unjudged += theirs.unjudged;
            }
            (None, theirs) => self.model = theirs,
            (Some(_), None) => {}
        }
    }

    /// Whether the pass saw anything new or proposed anything: what is worth a report.
    pub fn found_anything(&self) -> bool {
        self.namespaces.iter().any(|n| n.new > 0 || !n.proposals.is_empty())
    }

    pub fn applied(&self) -> usize {
        self.namespaces.iter().flat_map(|n| &n.proposals).filter(|p| p.applied).count()
    }

    pub fn left_for_review(&self) -> usize {
        self.namespaces.iter().flat_map(|n| &n.proposals).filter(|p| !p.applied).count()
    }
}

impl Arbor {
    /// One consolidation pass over `request.namespaces`, each from its mark on.
    pub async fn consolidate(&self, request: &ConsolidateRequest) -> AppResult<ConsolidationRun> {
        let reasoner = self.ports.reasoner.id();
        let model = (reasoner != HEURISTIC_REASONER_ID)
            .then(|| std::sync::Mutex::new(ModelUse { reasoner, budget: request.model_calls, calls: 0, unjudged: 0 }));
        let mut passes = Vec::with_capacity(request.namespaces.len());
        for (namespace, mark) in &request.namespaces {
            let model = model.as_ref();
            let pass = self
                .replanning(|| async move {
                    Attempt::of(self.consolidate_namespace(namespace, mark.as_ref(), request, model).await)
                })
                .await?;
            passes.push(pass);
        }
        let model = model.map(|m| {
            let mut used = m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Per namespace, from the attempt that counted: a replanned namespace is not counted twice.
            used.unjudged = passes.iter().map(|p| p.unjudged).sum();
            used
        });
        Ok(ConsolidationRun { at: self.now(), dry_run: request.dry_run, namespaces: passes, model })
    }

    async fn consolidate_namespace(
        &self,
        namespace: &Namespace,
        mark: Option<&WriteMark>,
        request: &ConsolidateRequest,
        model: Option<&std::sync::Mutex<ModelUse>>,
    ) -> AppResult<NamespacePass> {
        let (written, more) = self.written_since(namespace, mark, request).await?;
        let written = &written[..];
        let through = written.last().map(WriteMark::of).max(mark.cloned());
        let is_new = |l: &LeafRecord| mark.is_none_or(|m| WriteMark::of(l) > *m);
        let new = written.iter().filter(|l| is_new(l)).count();
        let fresh: BTreeSet<&LeafId> = written.iter().filter(|l| is_new(l)).map(|l| &l.id).collect();
        let readable = |l: &&LeafRecord| arbor_domain::consolidation::reads(l);
        let mut like: BTreeMap<LeafId, Vec<LeafId>> = BTreeMap::new();
        let mut current: BTreeMap<LeafId, LeafRecord> = BTreeMap::new();
        for leaf in written.iter().filter(readable) {
            current.insert(leaf.id.clone(), leaf.clone());
            let found = self.current_like(namespace, leaf).await?;
            like.insert(leaf.id.clone(), found.iter().map(|l| l.id.clone()).collect());
            for other in found {
                current.entry(other.id.clone()).or_insert(other);
            }
        }
        let memories: Vec<CurrentMemory> = current
            .values()
            .map(|leaf| CurrentMemory {
                lineage: leaf.lineage.clone(),
                claims: leaf.claims.clone(),
                id: leaf.id.clone(),
                text: leaf.summary.clone(),
                fingerprint: leaf.fingerprint.clone(),
                observed_at: leaf.observed_at,
                changed: like.contains_key(&leaf.id),
                like: like.get(&leaf.id).cloned().unwrap_or_default(),
            })
            .collect();
        let mut proposals = self.policy.consolidation.propose(&memories);
        let mut unjudged = 0;
        if let Some(model) = model {
            let judged = self.judge_in_hindsight(&memories, &fresh, &current, &proposals, model).await;
            proposals.extend(judged.proposals);
            unjudged = judged.unjudged;
        }
        let views: Vec<ProposalView> = proposals
            .into_iter()
            .map(|proposal| {
                let (retire, keep) = (&current[&proposal.retire], &current[&proposal.keep]);
                let left_because = conflict_between(&ClaimView::of_leaf(keep), &ClaimView::of_leaf(retire))
                    .map(|c| c.reason().to_owned());
                ProposalView {
                    retire_source: retire.provenance.source.short(),
                    keep_source: keep.provenance.source.short(),
                    applied: left_because.is_none(),
                    left_because,
                    proposal,
                }
            })
            .collect();
        if !request.dry_run {
            self.apply_proposals(namespace, &current, &views).await?;
        }
        Ok(NamespacePass {
            namespace: namespace.clone(),
            read: written.len(),
            new,
            through,
            more,
            proposals: views,
            unjudged,
        })
    }

    /// The leaves of `namespace` a pass from `mark` reads (at most `request.max_read`), and
    /// whether more remain. A leaf's write time is when its batch was planned, which may be a
    /// while before it was committed (or come from a clock behind this one): a pass re-reads a
    /// margin before its mark, which costs a repeat of what it already saw and nothing else —
    /// unless more was written within the margin than half a pass reads (a bulk import):
    /// re-reading that would crowd out what is new, and a full page of it would never get past
    /// the mark, so such a pass goes on from the mark itself.
    async fn written_since(
        &self,
        namespace: &Namespace,
        mark: Option<&WriteMark>,
        request: &ConsolidateRequest,
    ) -> AppResult<(Vec<LeafRecord>, bool)> {
        let store = &self.ports.store;
        let page = request.max_read.max(1);
        let from = mark.map(|m| WriteMark {
            at: m.at.checked_sub(request.resume_margin).unwrap_or(m.at),
            id: LeafId::parse("leaf-0").unwrap_or_else(|_| m.id.clone()),
        });
        let mut written = store.leaves_written_after(namespace, from, page + 1).await?;
        let seen = written.iter().filter(|l| mark.is_some_and(|m| WriteMark::of(l) <= *m)).count();
        if written.len() > page && seen > page / 2 {
            written = store.leaves_written_after(namespace, mark.cloned(), page + 1).await?;
        }
        let more = written.len() > page;
        written.truncate(page);
        Ok((written, more))
    }

    /// Applies a proposal a pass left for a person, now that a person approved it: `retire`
    /// gives way to `keep` as the pass would have done, both read through `chain`'s live layers
    /// and both still current in one namespace (otherwise not found, or invalid: the proposal is out of date).
    /// Returns a run holding the one applied change, for its report.
    pub async fn apply_left_for_review(
        &self,
        chain: &ReadChain,
        kind: ProposalKind,
        retire: &LeafId,
        keep: &LeafId,
    ) -> AppResult<ConsolidationRun> {
        // Only a live layer: a frozen one is seen as of the chain's start and is not changed
        // through it.
        let scope: &[Namespace] = &chain.live_namespaces().cloned().collect::<Vec<_>>();
        if retire == keep {
            return Err(
                Error::Invalid { what: "proposal", reason: format!("{retire} cannot give way to itself") }.into()
            );
        }
        self.replanning(|| async move {
            let store = &self.ports.store;
            let old = store.leaf(scope, retire).await?.ok_or_else(|| Error::not_found("leaf", retire))?;
            let new = store.leaf(scope, keep).await?.ok_or_else(|| Error::not_found("leaf", keep))?;
            if old.status != LeafStatus::Active || new.status != LeafStatus::Active || old.namespace != new.namespace {
                let reason = format!("{retire} and {keep} are no longer both current in one namespace");
                return Err(Error::Invalid { what: "proposal", reason }.into());
            }
            let namespace = old.namespace.clone();
            let view = ProposalView {
                proposal: Proposal {
                    kind,
                    retire: retire.clone(),
                    keep: keep.clone(),
                    reason: "approved by a person".to_owned(),
                    by_claims: None,
                },
                retire_source: old.provenance.source.short(),
                keep_source: new.provenance.source.short(),
                applied: true,
                left_because: None,
            };
            let current = BTreeMap::from([(old.id.clone(), old), (new.id.clone(), new)]);
            if let Attempt::LostRace(conflict) =
                Attempt::of(self.apply_proposals(&namespace, &current, std::slice::from_ref(&view)).await)?
            {
                return Ok(Attempt::LostRace(conflict));
            }
            let pass = NamespacePass {
                namespace,
                read: 0,
                new: 0,
                through: None,
                more: false,
                proposals: vec![view],
                unjudged: 0,
            };
            Ok(Attempt::Committed(ConsolidationRun {
                at: self.now(),
                dry_run: false,
                namespaces: vec![pass],
                model: None,
            }))
        })
        .await
    }

    /// Asks the model reasoner about each new memory (`fresh`) the rules proposed nothing for
    /// (newest first), shown with the earlier memories filed under what it names that no
    /// proposal retires yet, while the pass's budget lasts; returns the validated proposals and
    /// how many memories the budget left unjudged.
    async fn judge_in_hindsight(
        &self,
        memories: &[CurrentMemory],
        fresh: &BTreeSet<&LeafId>,
        current: &BTreeMap<LeafId, LeafRecord>,
        proposals: &[Proposal],
        model: &std::sync::Mutex<ModelUse>,
    ) -> Judged {
        let locality = self.ports.reasoner.locality();
        let shareable = |id: &LeafId| current.get(id).is_some_and(|l| l.sensitivity.may_be_given_to(locality));
        let by_id: BTreeMap<&LeafId, &CurrentMemory> = memories.iter().map(|m| (&m.id, m)).collect();
        let mut settled: BTreeSet<&LeafId> = proposals.iter().flat_map(|p| [&p.retire, &p.keep]).collect();
        let mut changed: Vec<&CurrentMemory> = memories.iter().filter(|m| fresh.contains(&m.id)).collect();
        changed.sort_by(|a, b| (b.observed_at, &b.id).cmp(&(a.observed_at, &a.id)));
        let mut judged = Judged { proposals: Vec::new(), unjudged: 0 };
        for newer in changed {
            if settled.contains(&newer.id) || !shareable(&newer.id) {
                continue;
            }
            let mut shown: Vec<&CurrentMemory> = newer
                .like
                .iter()
                .filter(|id| !settled.contains(id) && shareable(id))
                .filter_map(|id| by_id.get(id).copied())
                .filter(|m| (m.observed_at, &m.id) < (newer.observed_at, &newer.id))
                // A pair kept together, or judged both true before, is not asked about again.
                .filter(|m| !held_beside(m, newer))
                .collect();
            if shown.is_empty() {
                continue;
            }
            shown.sort_by(|a, b| (b.observed_at, &b.id).cmp(&(a.observed_at, &a.id)));
            shown.truncate(JUDGED_CANDIDATES);
            {
                let mut used = model.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if used.calls >= used.budget {
                    judged.unjudged += 1;
                    continue;
                }
                used.calls += 1;
            }
            let candidates = shown
                .iter()
                .map(|m| DuplicateCandidate {
                    id: m.id.clone(),
                    title: current[&m.id].title.clone(),
                    text: m.text.clone(),
                })
                .collect();
            let request = DuplicateRequest { text: newer.text.clone(), subject: None, candidates };
            let Some(judgement) = self.ask_reasoner("consolidate", self.ports.reasoner.judge_duplicate(&request)).await
            else {
                continue;
            };
            let min = self.policy.supersession.min_judgement_confidence;
            let reasoner = self.ports.reasoner.id();
            if let Some(proposal) = self.policy.consolidation.judged(newer, &shown, &judgement, min, &reasoner) {
                let retired = shown.iter().find(|m| m.id == proposal.retire).map(|m| &m.id);
                settled.extend(retired);
                settled.insert(&newer.id);
                judged.proposals.push(proposal);
            }
        }
        judged
    }

    /// The current leaves of `namespace` that `leaf` may replace or repeat, in any tree: those
    /// filed under what it names. Restricted memories are left alone: a report about them would
    /// tell agents that read the same namespaces without that clearance that they exist.
    async fn current_like(&self, namespace: &Namespace, leaf: &LeafRecord) -> AppResult<Vec<LeafRecord>> {
        let mut found = self.current_filed_under(namespace, &Claim::read(&leaf.summary)).await?;
        // …and what is filed under its claims' subjects and attributes, which a pass decides by.
        found.extend(self.current_filed_under_claims(namespace, &leaf.claims.claims).await?);
        found.sort_by(|a, b| a.id.cmp(&b.id));
        found.dedup_by(|a, b| a.id == b.id);
        Ok(found.into_iter().filter(|l| l.id != leaf.id).collect())
    }

    /// Retires what the applied proposals retire, in one change set: each as history of the
    /// memory that stays, its summaries stale, its index entry refreshed.
    async fn apply_proposals(
        &self,
        namespace: &Namespace,
        current: &BTreeMap<LeafId, LeafRecord>,
        views: &[ProposalView],
    ) -> AppResult<()> {
        let now = self.now();
        let mut changes = ChangeSet::new();
        let mut touched = BTreeSet::new();
        let mut retired = Vec::new();
        for view in views.iter().filter(|v| v.applied) {
            let (old, keep) = (&current[&view.proposal.retire], &current[&view.proposal.keep]);
            let mut record = old.superseded_by(&keep.id, keep.validity.valid_from.unwrap_or(keep.observed_at), now)?;
            if let Some((rule, attribute)) = &view.proposal.by_claims {
                record.claims.retired = Some(arbor_domain::claims::RetirementMark {
                    by: keep.id.clone(),
                    rule: *rule,
                    attribute: attribute.clone(),
                    restored_as: None,
                });
            }
            // The memory that stays must still be current at the commit (not forgotten or
            // corrected meanwhile): an unchanged write of it, expecting it active.
            let current = LeafExpect { status: LeafStatus::Active, parent: None };
            changes.push(Change::UpdateLeaf { expect: current, record: keep.clone() });
            // As read: still active, under the same parent (a seal in between re-plans).
            let expect = LeafExpect { status: LeafStatus::Active, parent: Some(old.parent.clone()) };
            changes.push(Change::UpdateLeaf { expect, record: record.clone() });
            let action = match view.proposal.kind {
                ProposalKind::Merge => "leaf.merged",
                ProposalKind::Update => "leaf.superseded",
                ProposalKind::Invalidate => "leaf.invalidated",
            };
            changes.push(Change::Audit(self.audit(now, action, namespace, old.node_id(), &old.body_sha256)));
            self.invalidate_above(&mut changes, &mut touched, &record, StaleCause::Superseded, now).await?;
            retired.push(record);
        }
        if retired.is_empty() {
            return Ok(());
        }
        let nodes = retired.iter().map(LeafRecord::node_id).collect();
        let index_job = self.job(now, JobKind::Index, namespace, None, nodes);
        changes.push(Change::Enqueue(index_job.clone()));
        let trees: BTreeSet<_> = retired.iter().map(|l| l.tree_id.clone()).collect();
        for tree in &trees {
            changes.push(Change::Enqueue(self.job(now, JobKind::Seal, namespace, Some(tree), Vec::new())));
        }
        self.ports.store.commit(changes).await?;
        if self.options.index_inline {
            let facts: Vec<_> = retired.iter().map(|l| (l.node_id(), NodeFacts::of_leaf(l))).collect();
            match self.ports.index.set_facts(facts).await {
                Ok(()) => {
                    let done = ChangeSet::new().with(Change::CompleteJob { id: index_job.id.clone() });
                    if let Err(error) = self.ports.store.commit(done).await {
                        tracing::warn!(%error, "could not complete the consolidation's index job; the runner will");
                    }
                }
                Err(error) => tracing::warn!(%error, "consolidation: index update left for the job runner"),
            }
        }
        Ok(())
    }
}

/// The first line of every consolidation report, by which a report is told from other files.
pub const REPORT_MARKER: &str = "arbor: consolidation report";

impl ConsolidationRun {
    /// The report's front matter, which passes and rebuilds read back: where each namespace's
    /// next pass resumes, what was retired, what waits for a person.
    fn front_matter(&self) -> String {
        let mut out = format!("---\n{REPORT_MARKER}\nat: {}\ndry_run: {}\n", self.at, self.dry_run);
        for pass in &self.namespaces {
            if let Some(mark) = &pass.through {
                out.push_str(&format!("through: {} {} {}\n", pass.namespace, mark.at, mark.id));
            }
        }
        // What a rebuild from the bodies must retire again: the bodies do not say it. And what
        // waits for a person, for `review list` to find.
        if !self.dry_run {
            for p in self.namespaces.iter().flat_map(|n| &n.proposals) {
                match p.applied {
                    true => out.push_str(&format!("retired: {} {}\n", p.proposal.retire, p.proposal.keep)),
                    false => out.push_str(&format!(
                        "left: {} {} {}\n",
                        p.proposal.kind.as_str(),
                        p.proposal.retire,
                        p.proposal.keep
                    )),
                }
            }
        }
        out.push_str("---\n\n");
        out
    }

    /// The report a person reads: what was merged, superseded and invalidated, what waits for
    /// review and why, with ids and sources, and nothing of the memories' own words (a report
    /// must hold nothing a forget would have to find). Its front matter records where each
    /// namespace's next pass resumes (`through: <namespace> <written at> <leaf id>`).
    pub fn to_markdown(&self) -> String {
        let mut out = self.front_matter();
        let title = if self.dry_run { "Consolidation plan (dry run)" } else { "Consolidation" };
        out.push_str(&format!("# {title}, {}\n\n", self.at.strftime("%Y-%m-%d %H:%M UTC")));
        let read: usize = self.namespaces.iter().map(|n| n.read).sum();
        let verb = if self.dry_run { "would be applied" } else { "applied" };
        out.push_str(&format!(
            "{} {verb}, {} left for review; {read} memories written since the last pass read in {} namespaces.\n",
            plural(self.applied(), "change"),
            self.left_for_review(),
            self.namespaces.len()
        ));
        if let Some(model) = &self.model {
            out.push_str(&format!(
                "The reasoner {} was asked {} (budget {}); {} left unjudged when the budget ran out.\n",
                model.reasoner,
                plural(model.calls, "time"),
                model.budget,
                plural(model.unjudged, "memory"),
            ));
        }
        for pass in self.namespaces.iter().filter(|p| p.read > 0 || !p.proposals.is_empty()) {
            out.push_str(&format!("\n## {}\n\n", pass.namespace));
            out.push_str(&format!(
                "{} read{}.\n",
                plural(pass.read, "memory"),
                if pass.more { "; more remain for the next pass" } else { "" }
            ));
            let line = |p: &ProposalView| {
                let verb = match p.proposal.kind {
                    ProposalKind::Merge => "merged into",
                    ProposalKind::Update => "superseded by",
                    ProposalKind::Invalidate => "invalidated by",
                };
                format!(
                    "- **{}** `{}` ({}) {verb} `{}` ({}): {}\n",
                    p.proposal.kind.as_str(),
                    p.proposal.retire,
                    p.retire_source,
                    p.proposal.keep,
                    p.keep_source,
                    p.proposal.reason
                )
            };
            let applied: Vec<&ProposalView> = pass.proposals.iter().filter(|p| p.applied).collect();
            if !applied.is_empty() {
                out.push('\n');
                applied.iter().for_each(|p| out.push_str(&line(p)));
            }
            let left: Vec<&ProposalView> = pass.proposals.iter().filter(|p| !p.applied).collect();
            if !left.is_empty() {
                out.push_str("\n### Left for review\n\n");
                for p in left {
                    let mut entry = line(p);
                    entry.pop();
                    out.push_str(&format!("{entry} — {}\n", p.left_because.as_deref().unwrap_or("needs a person")));
                }
            }
        }
        out
    }
}

fn plural(n: usize, noun: &str) -> String {
    match (n, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "memory") => format!("{n} memories"),
        _ => format!("{n} {noun}s"),
    }
}

/// Where each namespace's next pass resumes, as a report's front matter records it; `None`
/// for a text that is not a consolidation report.
pub fn report_marks(report: &str) -> Option<Vec<(Namespace, WriteMark)>> {
    let mut lines = report.lines();
    if lines.next() != Some("---") || lines.next() != Some(REPORT_MARKER) {
        return None;
    }
    let mut marks = Vec::new();
    for line in lines.take_while(|l| *l != "---") {
        let Some(rest) = line.strip_prefix("through: ") else { continue };
        let mut parts = rest.split(' ');
        let (Some(namespace), Some(at), Some(id), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let namespace = Namespace::parse(namespace).ok()?;
        let at = at.parse::<Timestamp>().ok()?;
        let id = LeafId::parse(id).ok()?;
        marks.push((namespace, WriteMark { at, id }));
    }
    Some(marks)
}

/// The retirements a report records (`retired: <retired id> <kept id>`), for a rebuild from
/// the bodies; `None` for a text that is not a consolidation report.
pub fn report_retirements(report: &str) -> Option<Vec<(LeafId, LeafId)>> {
    report_marks(report)?;
    let mut retired = Vec::new();
    for line in report.lines().skip(1).take_while(|l| *l != "---") {
        let Some(rest) = line.strip_prefix("retired: ") else { continue };
        let (old, kept) = rest.split_once(' ')?;
        retired.push((LeafId::parse(old).ok()?, LeafId::parse(kept).ok()?));
    }
    Some(retired)
}

/// The proposals a report left for a person (`left: <kind> <retired id> <kept id>`);
/// `None` for a text that is not a consolidation report.
pub fn report_left_for_review(report: &str) -> Option<Vec<(ProposalKind, LeafId, LeafId)>> {
    report_marks(report)?;
    let mut left = Vec::new();
    for line in report.lines().skip(1).take_while(|l| *l != "---") {
        let Some(rest) = line.strip_prefix("left: ") else { continue };
        let mut parts = rest.split(' ');
        let (Some(kind), Some(retire), Some(keep), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let kind = [ProposalKind::Merge, ProposalKind::Update, ProposalKind::Invalidate]
            .into_iter()
            .find(|k| k.as_str() == kind)?;
        left.push((kind, LeafId::parse(retire).ok()?, LeafId::parse(keep).ok()?));
    }
    Some(left)
}

/// A report as a caller bound to `namespaces` may read it: its title and the sections of those
/// namespaces only (the run's totals span other scopes, so they are left out); `None` when the
/// report says nothing about them, or is not a report.
pub fn report_for(report: &str, namespaces: &[Namespace]) -> Option<String> {
    report_marks(report)?;
    let body = report.splitn(3, "---\n").nth(2)?;
    let title = body.lines().find(|l| l.starts_with("# "))?;
    let mut out = format!("{title}\n");
    let mut kept = false;
    for section in body.split("\n## ").skip(1) {
        let name = section.lines().next().unwrap_or_default().trim();
        if Namespace::parse(name).is_ok_and(|ns| namespaces.contains(&ns)) {
            out.push_str("\n## ");
            out.push_str(section.trim_end());
            out.push('\n');
            kept = true;
        }
    }
    kept.then_some(out)
}
