//! Review [design §review]: inferred memories the approval policy did not auto-approve wait
//! as candidates — never retrieved — until a person confirms, edits or rejects them. Confirming makes a
//! candidate current (superseding what it replaces, by `Supersession::on_activation`); rejecting
//! keeps it as a content fingerprint, so the same suggestion is a duplicate, never proposed again.

use std::collections::BTreeSet;

use arbor_domain::conflict::{ClaimView, ConflictCause, conflict_between, takeover_start};
use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::{LeafRecord, SourceRef, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect, TreeLeafQuery};
use serde::Serialize;

use arbor_domain::supersession::CorrectionRefusal;
use arbor_domain::text::fingerprint;

use crate::correct::{Correction, validate_new_text};
use crate::write::{Attempt, BatchPlan, PlannedLeaf, existing_leaf};
use crate::{AppError, AppResult, Arbor};

/// A candidate awaiting a person, with what confirming it would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewItem {
    pub leaf: LeafRecord,
    /// Current memories confirming it would supersede (same subject in its tree, or the one
    /// it was proposed to replace): the conflict a reviewer decides.
    pub would_supersede: Vec<LeafRecord>,
    /// Why it waits instead of having replaced the current memory, when it is a conflict
    /// (`resolve_conflict` answers it).
    pub conflict: Option<ConflictCause>,
}

/// What a review decision changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewReceipt {
    pub leaf_id: LeafId,
    pub namespace: Namespace,
    pub tree_id: TreeId,
    pub status: LeafStatus,
    /// Memories the confirmation superseded.
    pub superseded: Vec<LeafId>,
}

impl Arbor {
    /// Candidates in the chain's namespaces, oldest first.
    pub async fn pending_review(&self, chain: &ReadChain) -> AppResult<Vec<ReviewItem>> {
        let store = &self.ports.store;
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let waiting = TreeLeafQuery { statuses: vec![LeafStatus::Candidate], ..TreeLeafQuery::default() };
        let mut items = Vec::new();
        for tree in store.trees(&scope).await? {
            for leaf in store.tree_leaves(&tree.namespace, &tree.tree_id, &waiting).await? {
                let would_supersede = self.replaced_on_confirmation(&leaf).await?;
                let conflict = would_supersede
                    .first()
                    .and_then(|current| conflict_between(&ClaimView::of_leaf(&leaf), &ClaimView::of_leaf(current)));
                items.push(ReviewItem { leaf, would_supersede, conflict });
            }
        }
        items.sort_by(|a, b| a.leaf.created_at.cmp(&b.leaf.created_at).then_with(|| a.leaf.id.cmp(&b.leaf.id)));
        Ok(items)
    }

    /// The current leaves that `candidate`, once active, replaces.
    pub(crate) async fn replaced_on_confirmation(&self, candidate: &LeafRecord) -> AppResult<Vec<LeafRecord>> {
        let store = &self.ports.store;
        let mut current: Vec<LeafRecord> = match &candidate.subject {
            Some(subject) => {
                let query = TreeLeafQuery {
                    subject: Some(subject.clone()),
                    statuses: vec![LeafStatus::Active],
                    ..TreeLeafQuery::default()
                };
                store.tree_leaves(&candidate.namespace, &candidate.tree_id, &query).await?
            }
            None => Vec::new(),
        };
        if let Some(planned) = &candidate.supersedes
            && !current.iter().any(|l| &l.id == planned)
            && let Some(old) = store.leaf(std::slice::from_ref(&candidate.namespace), planned).await?
            && old.status == LeafStatus::Active
        {
            current.push(old);
        }
        let views: Vec<_> = current.iter().map(existing_leaf).collect();
        let ids =
            self.policy.supersession.on_activation(&existing_leaf(candidate), candidate.supersedes.as_ref(), &views);
        current.retain(|l| ids.contains(&l.id));
        Ok(current)
    }

    /// Confirms a candidate readable through `chain`: it becomes current, superseding what it
    /// replaces; summaries above those go stale and the tree is re-sealed. Anything but a
    /// candidate is refused; an id outside the chain is not found.
    pub async fn confirm(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ReviewReceipt> {
        self.decide(chain, id, LeafTransition::Confirm).await
    }

    /// Rejects a candidate readable through `chain`: it is never retrieved, and its fingerprint
    /// makes the same suggestion a duplicate from now on.
    pub async fn reject(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ReviewReceipt> {
        self.decide(chain, id, LeafTransition::Reject).await
    }

    /// Edits a candidate before anyone confirms it: the edited text becomes a new candidate (the
    /// next version of the same memory, replacing what the original was proposed to replace),
    /// and the original suggestion is rejected, so it is not proposed again. Nothing is
    /// rewritten in place.
    pub async fn edit_candidate(
        &self,
        chain: &ReadChain,
        id: &LeafId,
        text: &str,
        title: Option<String>,
    ) -> AppResult<ReviewReceipt> {
        validate_new_text(text, title.as_deref())?;
        let scope = &chain.namespaces().cloned().collect::<Vec<Namespace>>();
        let store = &self.ports.store;
        let title = &title;
        self.replanning(|| async move {
            let old = store.leaf(scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            if old.status != LeafStatus::Candidate {
                return Err(AppError::NotNow(format!(
                    "{id} is {}; only a candidate is edited (correct a current memory instead)",
                    old.status
                )));
            }
            if let Some(existing) =
                self.leaf_holding_fingerprint(&old.namespace, &old.tree_id, &fingerprint(text)).await?
            {
                return Err(CorrectionRefusal::Unchanged { id: old.id.clone(), existing: existing.id }.into());
            }
            let now = self.now();
            let edit = Correction { title: title.clone(), ..Correction::by_person(old.id.clone(), old.version, text) };
            let sensitivity = self.admit_correction(&old, &edit)?;
            let mut record = LeafRecord {
                supersedes: old.supersedes.clone(),
                sensitivity,
                ..self.corrected_record(&old, &edit, now).waiting_for_a_person()
            };
            // A promoted candidate stays a promotion (its rollback and provenance depend on it).
            if matches!(old.provenance.source, SourceRef::Promotion { .. }) {
                record.provenance.source = old.provenance.source.clone();
            }
            let tree = store
                .tree(&old.namespace, &old.tree_id)
                .await?
                .ok_or_else(|| Error::not_found("tree", &old.tree_id))?;
            let rejected = LeafRecord { status: old.status.apply(LeafTransition::Reject)?, ..old.clone() };
            let receipt = ReviewReceipt {
                leaf_id: record.id.clone(),
                namespace: old.namespace.clone(),
                tree_id: old.tree_id.clone(),
                status: LeafStatus::Candidate,
                superseded: Vec::new(),
            };
            let mut plan = BatchPlan::default();
            plan.trees.insert((tree.namespace.clone(), tree.tree_id.clone()), tree);
            let expect = LeafExpect { status: LeafStatus::Candidate, parent: Some(old.parent.clone()) };
            plan.extra.push(Change::UpdateLeaf { expect, record: rejected });
            plan.extra.push(Change::Audit(self.audit(
                now,
                "leaf.edited",
                &old.namespace,
                old.node_id(),
                &old.body_sha256,
            )));
            plan.leaves.push(PlannedLeaf { record, text: text.to_owned() });
            Attempt::of(self.commit_plan(&old.namespace, plan, now, std::time::Duration::ZERO).await.map(|()| receipt))
        })
        .await
    }

    async fn decide(&self, chain: &ReadChain, id: &LeafId, decision: LeafTransition) -> AppResult<ReviewReceipt> {
        let scope = &chain.namespaces().cloned().collect::<Vec<Namespace>>();
        self.replanning(|| async move {
            let leaf = self.ports.store.leaf(scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            let now = self.now();
            let (decided, replaced, action) = match decision {
                LeafTransition::Confirm => {
                    let mut confirmed = leaf.confirmed(now)?;
                    let replaced = self.replaced_on_confirmation(&confirmed).await?;
                    let held_from: Vec<_> = replaced.iter().map(|old| ClaimView::of_leaf(old).holds_from).collect();
                    confirmed.validity = takeover_start(&confirmed.validity, confirmed.observed_at, &held_from);
                    let valid_from = confirmed.validity.valid_from.unwrap_or(now);
                    (confirmed, replaced.into_iter().map(|old| (old, valid_from)).collect(), "leaf.confirmed")
                }
                _ => (LeafRecord { status: leaf.status.apply(decision)?, ..leaf.clone() }, Vec::new(), "leaf.rejected"),
            };
            Attempt::of(self.commit_decision(&leaf, decided, replaced, action, now).await)
        })
        .await
    }

    /// Commits a person's decision on the candidate `leaf` (as read): its new record, and the
    /// current memories it retires, each valid until the instant given. Summaries above those
    /// go stale, a new tree member marks the root stale and asks for a seal, and everything
    /// touched is indexed at once. A conflict (the store moved on) is returned for a retry.
    pub(crate) async fn commit_decision(
        &self,
        leaf: &LeafRecord,
        decided: LeafRecord,
        retire: Vec<(LeafRecord, arbor_domain::time::Timestamp)>,
        action: &'static str,
        now: arbor_domain::time::Timestamp,
    ) -> AppResult<ReviewReceipt> {
        let namespace = leaf.namespace.clone();
        let mut changes = ChangeSet::new();
        let mut to_index = vec![leaf.node_id()];
        let mut superseded = Vec::new();
        let mut touched = BTreeSet::new();
        for (old, valid_until) in retire {
            let retired = old.superseded_by(&decided.id, valid_until, now)?;
            changes.push(Change::UpdateLeaf { expect: LeafExpect::status(LeafStatus::Active), record: retired });
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.superseded",
                &namespace,
                old.node_id(),
                &old.body_sha256,
            )));
            self.invalidate_above(&mut changes, &mut touched, &old, StaleCause::Superseded, now).await?;
            to_index.push(old.node_id());
            superseded.push(old.id);
        }
        let expect = LeafExpect { status: leaf.status, parent: Some(leaf.parent.clone()) };
        changes.push(Change::UpdateLeaf { expect, record: decided.clone() });
        changes.push(Change::Audit(self.audit(now, action, &namespace, leaf.node_id(), &leaf.body_sha256)));
        let index_job = self.job(now, JobKind::Index, &namespace, Some(&leaf.tree_id), to_index.clone());
        changes.push(Change::Enqueue(index_job.clone()));
        if decided.status.is_tree_member() {
            // A new member of the tree: its buffer may be full now, and the root is behind.
            if let Some(tree) = self.ports.store.tree(&namespace, &leaf.tree_id).await?
                && tree.root.is_some()
                && !tree.root_stale
            {
                changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: leaf.tree_id.clone() });
            }
            changes.push(Change::Enqueue(self.job(now, JobKind::Seal, &namespace, Some(&leaf.tree_id), Vec::new())));
        }
        self.ports.store.commit(changes).await?;
        // Retrieval sees the decision at once; if indexing fails here the job stays queued.
        self.index_now(&namespace, &to_index, &index_job).await;
        Ok(ReviewReceipt {
            leaf_id: decided.id.clone(),
            namespace,
            tree_id: decided.tree_id.clone(),
            status: decided.status,
            superseded,
        })
    }

    /// Projects `nodes` now and completes `job`, or leaves the job to the runner.
    pub(crate) async fn index_now(&self, namespace: &Namespace, nodes: &[NodeId], job: &arbor_ports::Job) {
        for node in nodes {
            if let Err(error) = self.project(namespace, node).await {
                tracing::warn!(%error, "review: indexing deferred to the job runner");
                return;
            }
        }
        let done = ChangeSet::new().with(Change::CompleteJob { id: job.id.clone() });
        if let Err(error) = self.ports.store.commit(done).await {
            tracing::warn!(%error, "review: the index job will be repeated by the runner");
        }
    }
}
