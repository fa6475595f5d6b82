//! Archival [001 §13.2]: unused, low-salience candidates are set aside (`DecayPolicy::archivable`)
//! — out of the review queue, never hard-deleted — and an archived memory can be restored: to
//! current if it had been current, otherwise back to review.

use arbor_domain::decay::ArchiveView;
use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::time::KnownSpan;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect, TreeLeafQuery};

use crate::review::ReviewReceipt;
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

    /// Brings back an archived memory readable through `chain`: current again if it had been
    /// current (refused while another memory is current about its subject — restore that one's
    /// history as a new version instead), otherwise a candidate awaiting review.
    pub async fn restore_archived(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ReviewReceipt> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let mut last_conflict = String::new();
        for _ in 0..self.options.max_write_attempts {
            let leaf = self.ports.store.leaf(&scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            if leaf.status != LeafStatus::Archived {
                return Err(AppError::InvalidRequest(format!(
                    "{id} is {}; only an archived memory is brought back (a replaced version is restored with \
                     --current-version)",
                    leaf.status
                )));
            }
            let was_current = leaf.known.known_from.is_some();
            let status = leaf.status.apply(LeafTransition::Restore { was_confirmed: was_current })?;
            let now = self.now();
            let restored = match status {
                LeafStatus::Active => {
                    if let Some(current) = self.replaced_on_confirmation(&leaf).await?.first() {
                        return Err(AppError::InvalidRequest(format!(
                            "{} is current about the same subject; correct it instead of bringing {id} back",
                            current.id
                        )));
                    }
                    LeafRecord { status, known: KnownSpan::from(now), ..leaf.clone() }
                }
                _ => LeafRecord { status, ..leaf.clone() },
            };
            match self.commit_decision(&leaf, restored, Vec::new(), "leaf.unarchived", now).await {
                Ok(receipt) => return Ok(receipt),
                Err(AppError::Port(error)) if error.is_conflict() => last_conflict = error.to_string(),
                Err(other) => return Err(other),
            }
        }
        Err(AppError::Contention { attempts: self.options.max_write_attempts, last: last_conflict })
    }
}
