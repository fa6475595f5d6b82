//! Archival [design §archival]: unused, low-salience candidates are set aside (`DecayPolicy::archivable`)
//! — out of the review queue, never hard-deleted — and an archived memory can be brought back
//! as a new leaf with its words: current if it had been current, otherwise back to review.

use arbor_domain::decay::ArchiveView;
use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect, TreeLeafQuery};

use crate::review::ReviewReceipt;
use crate::write::{BatchPlan, PlannedLeaf};
use crate::{AppError, AppResult, Arbor};

impl Arbor {
    /// Archives every candidate in the store that the decay policy finds unused and of low
    /// salience. A maintenance pass (like the job runner): it reads no memory's words. Returns
    /// the archived leaves; one that changed meanwhile is left for the next pass.
    pub async fn archive_unused_candidates(&self) -> AppResult<Vec<LeafId>> {
        let store = &self.ports.store;
        let waiting = TreeLeafQuery { statuses: vec![LeafStatus::Candidate], ..TreeLeafQuery::default() };
        let now = self.now();
        let mut archived = Vec::new();
        for namespace in store.namespaces().await? {
            for tree in store.trees(std::slice::from_ref(&namespace)).await? {
                for leaf in store.tree_leaves(&namespace, &tree.tree_id, &waiting).await? {
                    let view =
                        ArchiveView { status: leaf.status, salience: leaf.salience, last_touched: leaf.created_at };
                    if !self.policy.decay.archivable(&view, now) {
                        continue;
                    }
                    let record = LeafRecord { status: leaf.status.apply(LeafTransition::Archive)?, ..leaf.clone() };
                    let expect = LeafExpect { status: LeafStatus::Candidate, parent: Some(leaf.parent.clone()) };
                    let index = self.job(now, JobKind::Index, &namespace, Some(&leaf.tree_id), vec![leaf.node_id()]);
                    let changes = ChangeSet::new()
                        .with(Change::UpdateLeaf { expect, record })
                        .with(Change::Audit(self.audit(
                            now,
                            "leaf.archived",
                            &namespace,
                            leaf.node_id(),
                            &leaf.body_sha256,
                        )))
                        .with(Change::Enqueue(index.clone()));
                    match store.commit(changes).await {
                        Ok(()) => {
                            self.index_now(&namespace, &[leaf.node_id()], &index).await;
                            archived.push(leaf.id);
                        }
                        // Decided or changed since it was read: not this pass's to archive.
                        Err(error) if error.is_conflict() => {}
                        Err(error) => return Err(error.into()),
                    }
                }
            }
        }
        Ok(archived)
    }

    /// Brings back an archived memory readable through `chain` as a new leaf saying the same
    /// words: current (the next version of its memory) if it had been current, otherwise a
    /// fresh candidate awaiting review. The archived record stays as it is, so what frozen
    /// snapshots saw does not change. Refused while another memory is current about its
    /// subject (correct that one instead) or a live memory of its tree says the same words.
    pub async fn restore_archived(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ReviewReceipt> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let archived = store.leaf(&scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
        if archived.status != LeafStatus::Archived {
            return Err(AppError::InvalidRequest(format!(
                "{id} is {}; only an archived memory is brought back (a replaced version is restored with \
                 --current-version)",
                archived.status
            )));
        }
        let was_current = archived.known.known_from.is_some();
        let status = archived.status.apply(LeafTransition::Restore { was_confirmed: was_current })?;
        if let Some(twin) =
            self.leaf_holding_fingerprint(&archived.namespace, &archived.tree_id, &archived.fingerprint).await?
        {
            return Err(AppError::InvalidRequest(format!(
                "{} ({}) already says the same words in this tree; there is nothing to bring back",
                twin.id, twin.status
            )));
        }
        if status == LeafStatus::Active
            && let Some(current) =
                self.replaced_on_confirmation(&LeafRecord { status, ..archived.clone() }).await?.first()
        {
            return Err(AppError::InvalidRequest(format!(
                "{} is current about the same subject; correct it instead of bringing {id} back",
                current.id
            )));
        }
        let text = self.read_body(&archived.body_path, &archived.body_sha256).await?;
        let now = self.now();
        let new_id = self.new_leaf_id(now);
        let record = match status {
            // The next version of its memory, saying the same words about the same time: it
            // replaces nothing current (that was checked above).
            LeafStatus::Active => LeafRecord {
                supersedes: None,
                observed_at: archived.observed_at,
                validity: archived.validity,
                ..archived.next_version(new_id.clone(), now)
            },
            _ => archived.copied_as_new_memory(new_id.clone(), archived.namespace.clone(), status, now),
        };
        let tree = store
            .tree(&archived.namespace, &archived.tree_id)
            .await?
            .ok_or_else(|| Error::not_found("tree", &archived.tree_id))?;
        let mut plan = BatchPlan::default();
        plan.trees.insert((tree.namespace.clone(), tree.tree_id.clone()), tree);
        plan.extra.push(Change::Audit(self.audit(
            now,
            "leaf.unarchived",
            &archived.namespace,
            archived.node_id(),
            &archived.body_sha256,
        )));
        let receipt = ReviewReceipt {
            leaf_id: new_id,
            namespace: archived.namespace.clone(),
            tree_id: archived.tree_id.clone(),
            status,
            superseded: Vec::new(),
        };
        plan.leaves.push(PlannedLeaf { record, text });
        self.commit_plan(&archived.namespace, plan, now, std::time::Duration::ZERO).await?;
        Ok(receipt)
    }
}
