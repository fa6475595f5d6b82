//! Forget [001 §13.3, 002 §4.3]: retrieval stops at once; the leaf's words leave the row, the
//! body file, the index and every summary that may have quoted them; a content-free tombstone
//! with ids and hashes remains; summaries are re-sealed without it; a receipt says what went.

use std::collections::BTreeSet;

use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::{ContentHash, SourceRef, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect, TreeLeafQuery};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// What a forget removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForgetReceipt {
    pub leaf_id: LeafId,
    pub namespace: Namespace,
    pub tree_id: TreeId,
    /// Hashes kept on the tombstone, so the forget can be verified later.
    pub fingerprint: ContentHash,
    pub body_sha256: ContentHash,
    /// Nodes whose index entries were removed.
    pub unindexed: Vec<NodeId>,
    /// Summaries (and the root) whose words were purged because they may have quoted the leaf.
    pub purged_summaries: Vec<NodeId>,
    /// Body files deleted.
    pub bodies_deleted: usize,
    /// Whether re-sealing the tree without the leaf is queued.
    pub reseal_queued: bool,
}

impl Arbor {
    /// Forgets a leaf readable through `chain`. A leaf outside the chain is reported as not
    /// found, exactly like a leaf that does not exist.
    pub async fn forget(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ForgetReceipt> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let mut last_conflict = String::new();
        for _ in 0..self.options.max_write_attempts {
            let leaf = self.ports.store.leaf(&scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            leaf.status.apply(LeafTransition::Forget)?;
            let now = self.now();
            let namespace = leaf.namespace.clone();
            let mut changes = ChangeSet::new();
            changes.push(Change::UpdateLeaf { expect: LeafExpect::status(leaf.status), record: leaf.tombstone(now) });
            let mut touched = BTreeSet::new();
            let mut inline =
                self.invalidate_above(&mut changes, &mut touched, &leaf, StaleCause::Forgotten, now).await?;
            let purged_summaries: Vec<NodeId> =
                inline.iter().filter(|job| job.kind == JobKind::Purge).flat_map(|job| job.nodes.clone()).collect();
            let own = self.unproject_jobs(now, &namespace, &leaf.tree_id, leaf.node_id());
            for job in &own {
                changes.push(Change::Enqueue(job.clone()));
            }
            inline.extend(own);
            // The questions that found it may quote it: their records go too.
            changes.push(Change::DropRetrievalsOf { node: leaf.node_id() });
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.forgotten",
                &namespace,
                leaf.node_id(),
                &leaf.fingerprint,
            )));
            match self.ports.store.commit(changes).await {
                Ok(()) => {}
                Err(error) if error.is_conflict() => {
                    last_conflict = error.to_string();
                    continue;
                }
                Err(error) => return Err(error.into()),
            }
            // Privacy does not wait for the runner: remove the words now. The jobs stay queued
            // if this fails, and the runner finishes the purge.
            let mut bodies_deleted = 0;
            let mut unindexed = Vec::new();
            for job in &inline {
                let mut done = Ok(());
                for node in &job.nodes {
                    done = match job.kind {
                        JobKind::Index => self.project(&namespace, node).await.map(|_| unindexed.push(node.clone())),
                        JobKind::Purge => self
                            .purge_body(&namespace, node)
                            .await
                            .map(|deleted| bodies_deleted += usize::from(deleted)),
                        JobKind::Seal => Ok(()),
                    };
                    if done.is_err() {
                        break;
                    }
                }
                match done {
                    Ok(()) => {
                        let complete = ChangeSet::new().with(Change::CompleteJob { id: job.id.clone() });
                        self.ports.store.commit(complete).await?;
                    }
                    Err(error) => {
                        tracing::warn!(job = %job.id, %error, "forget: purge step deferred to the job runner")
                    }
                }
            }
            return Ok(ForgetReceipt {
                leaf_id: leaf.id.clone(),
                namespace,
                tree_id: leaf.tree_id.clone(),
                fingerprint: leaf.fingerprint.clone(),
                body_sha256: leaf.body_sha256.clone(),
                unindexed,
                purged_summaries,
                bodies_deleted,
                reseal_queued: true,
            });
        }
        Err(AppError::Contention { attempts: self.options.max_write_attempts, last: last_conflict })
    }

    /// Forgets a leaf and every copy promotion made of it (and of those copies) that `chain`
    /// can read: the words leave every layer a promotion carried them to. The copies are found
    /// before anything is forgotten; each forget is complete on its own, so a failure part-way
    /// leaves whole forgets behind, and running it again finishes the rest.
    pub async fn forget_with_copies(&self, chain: &ReadChain, id: &LeafId) -> AppResult<Vec<ForgetReceipt>> {
        let copies = self.promoted_copies(chain, id).await?;
        let mut receipts = vec![self.forget(chain, id).await?];
        for copy in copies {
            match self.forget(chain, &copy).await {
                Ok(receipt) => receipts.push(receipt),
                // Forgotten meanwhile (or by an earlier, interrupted run): nothing left to do.
                Err(AppError::Transition(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(receipts)
    }

    /// Leaves readable through `chain` that promotion copied from `id`, transitively, oldest
    /// first. A copy keeps its original's tree id in its own layer, so only that tree is read in
    /// each namespace of the chain.
    async fn promoted_copies(&self, chain: &ReadChain, id: &LeafId) -> AppResult<Vec<LeafId>> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let original = store.leaf(&scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
        let mut copies: Vec<LeafId> = Vec::new();
        let mut sources = vec![original.id.clone()];
        let everything = TreeLeafQuery::default();
        let mut in_tree = Vec::new();
        for namespace in &scope {
            in_tree.extend(store.tree_leaves(namespace, &original.tree_id, &everything).await?);
        }
        while let Some(source) = sources.pop() {
            for leaf in &in_tree {
                if let SourceRef::Promotion { from, .. } = &leaf.provenance.source
                    && from == &source
                    && leaf.status != LeafStatus::Tombstone
                    && !copies.contains(&leaf.id)
                {
                    copies.push(leaf.id.clone());
                    sources.push(leaf.id.clone());
                }
            }
        }
        copies.sort();
        Ok(copies)
    }
}
