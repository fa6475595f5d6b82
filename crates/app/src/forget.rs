//! Forget [001 §13.3, 002 §4.3]: retrieval stops at once; the leaf's words leave the row, the
//! body file, the index and every summary that may have quoted them; a content-free tombstone
//! with ids and hashes remains; summaries are re-sealed without it; a receipt says what went.

use std::collections::BTreeSet;

use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::LeafTransition;
use arbor_domain::model::{ContentHash, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect};
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
}
