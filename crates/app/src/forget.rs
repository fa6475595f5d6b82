//! Forget [design §forget]: retrieval stops at once; the memory's words leave the rows,
//! the body files, the index and every summary that may have quoted them; content-free
//! tombstones with ids and hashes remain; summaries are re-sealed without it; a receipt says
//! what went.
//!
//! A memory is its whole lineage: forgetting it forgets every version (the corrections and the
//! text they replaced), since each one says much the same thing; `--only-this-version` is the
//! exception. When nothing is left in the tree the memory lived in, the tree itself goes — its
//! row, title and directory name what it was about — and so does its entity when nothing else
//! refers to it. The audit log keeps the proof: ids and fingerprints, no words.

use std::collections::BTreeSet;

use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::{ContentHash, LeafRecord, SourceRef, SummaryStatus, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{Change, ChangeSet, Error, Job, JobKind, LeafExpect, TreeLeafQuery};
use serde::Serialize;

use crate::write::Attempt;
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
    /// Every version forgotten: `leaf_id` and, unless only that version was asked for, the
    /// rest of its lineage (oldest first).
    pub versions: Vec<LeafId>,
    /// Nodes whose index entries were removed.
    pub unindexed: Vec<NodeId>,
    /// Summaries (and the root) whose words were purged because they may have quoted the leaf.
    pub purged_summaries: Vec<NodeId>,
    /// Body files deleted.
    pub bodies_deleted: usize,
    /// Whether re-sealing the tree without the leaf is queued.
    pub reseal_queued: bool,
    /// Whether the tree was removed because nothing was left in it (and with it its entity,
    /// when nothing else refers to that).
    pub tree_dissolved: bool,
}

/// Which versions of a memory a forget takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForgetScope {
    /// Every version of the memory (its lineage): the default.
    WholeMemory,
    /// Only the named version; the others stay as they are.
    OnlyThisVersion,
}

/// What [`Arbor::purge_now`] removed at once.
struct PurgedNow {
    bodies_deleted: usize,
    unindexed: Vec<NodeId>,
    /// Whether every queued job finished (otherwise the runner finishes the purge).
    all_done: bool,
}

impl Arbor {
    /// Forgets a memory readable through `chain`: every version of it. A leaf outside the chain
    /// is reported as not found, exactly like a leaf that does not exist.
    pub async fn forget(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ForgetReceipt> {
        self.forget_scoped(chain, id, ForgetScope::WholeMemory).await
    }

    /// Forgets a memory for a caller bound to `chain` (an agent, through a server): only one it
    /// could open by id (anything else — a candidate, a restricted or forgotten memory, one
    /// outside the chain — is not found, as if absent), only in the chain's write namespace (a
    /// broader layer's memory is read-only to it), and only where the approval policy lets an
    /// agent's writes stand without a person (a conversation, a run): a project's or the global
    /// layer's memories were confirmed by a person, and only a person takes them away.
    /// Every version goes.
    pub async fn forget_own(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ForgetReceipt> {
        let leaf = self.own_leaf(chain, id).await?;
        if !self.policy.approval.auto_approves(leaf.namespace.kind()) {
            return Err(AppError::NeedsPerson { namespace: leaf.namespace.to_string(), id: id.to_string() });
        }
        self.forget(chain, id).await
    }

    /// Forgets a memory for a person acting through a server (an operator's token): like
    /// [`Arbor::forget_own`], but in any namespace the chain writes, since a person may take
    /// away what a person confirmed.
    pub async fn forget_as_person(&self, chain: &ReadChain, id: &LeafId) -> AppResult<ForgetReceipt> {
        self.own_leaf(chain, id).await?;
        self.forget(chain, id).await
    }

    /// The leaf `id` as a caller bound to `chain` may change it: one it could open by id
    /// (`VisibilityFilter::opens_by_id`; anything else is not found, as if absent) in the
    /// chain's write namespace (a broader layer's memory is read-only to it).
    pub(crate) async fn own_leaf(&self, chain: &ReadChain, id: &LeafId) -> AppResult<LeafRecord> {
        let readable: Vec<Namespace> = chain.namespaces().cloned().collect();
        let leaf = self.ports.store.leaf(&readable, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
        if !VisibilityFilter::for_chain(chain, self.now()).opens_by_id(&NodeFacts::of_leaf(&leaf)) {
            return Err(Error::not_found("leaf", id).into());
        }
        if &leaf.namespace != chain.write_namespace() {
            return Err(AppError::ReadOnlyLayer { namespace: leaf.namespace.to_string() });
        }
        Ok(leaf)
    }

    /// Forgets the versions of a memory `scope` names.
    pub async fn forget_scoped(&self, chain: &ReadChain, id: &LeafId, scope: ForgetScope) -> AppResult<ForgetReceipt> {
        let readable = &chain.namespaces().cloned().collect::<Vec<Namespace>>();
        self.replanning(|| async move {
            let leaf = self.ports.store.leaf(readable, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            leaf.status.apply(LeafTransition::Forget)?;
            let namespace = leaf.namespace.clone();
            let mut versions = match scope {
                ForgetScope::OnlyThisVersion => vec![leaf.clone()],
                ForgetScope::WholeMemory => self.lineage(&leaf).await?,
            };
            versions.sort_by_key(|v| (v.version, v.id.clone()));
            let now = self.now();
            let (changes, inline) = self.forget_changes(&namespace, &versions, now).await?;
            let purged_summaries: Vec<NodeId> = inline
                .iter()
                .filter(|job| job.kind == JobKind::Purge)
                .flat_map(|job| job.nodes.iter().filter(|node| matches!(node, NodeId::Summary(_))).cloned())
                .collect();
            if let Attempt::LostRace(conflict) =
                Attempt::of(self.ports.store.commit(changes).await.map_err(AppError::from))?
            {
                return Ok(Attempt::LostRace(conflict));
            }
            let PurgedNow { bodies_deleted, unindexed, all_done } = self.purge_now(&namespace, &inline).await?;
            // Only once every word is gone from bodies and index may the rows that name the
            // tree go; otherwise the runner finishes the purge and the tree stays for now.
            let tree_dissolved = all_done && self.dissolve_if_empty(&namespace, &leaf.tree_id).await?;
            Ok(Attempt::Committed(ForgetReceipt {
                leaf_id: leaf.id.clone(),
                namespace,
                tree_id: leaf.tree_id.clone(),
                fingerprint: leaf.fingerprint.clone(),
                body_sha256: leaf.body_sha256.clone(),
                versions: versions.iter().map(|v| v.id.clone()).collect(),
                unindexed,
                purged_summaries,
                bodies_deleted,
                reseal_queued: !tree_dissolved,
                tree_dissolved,
            }))
        })
        .await
    }

    /// What forgetting `versions` commits: each one tombstoned (expecting the status it was
    /// read with), the summaries above it stale and purged, its index entries and body queued
    /// for removal, the recorded retrievals that found it dropped, a content-free audit event.
    /// Also returns the jobs to run at once.
    async fn forget_changes(
        &self,
        namespace: &Namespace,
        versions: &[LeafRecord],
        now: Timestamp,
    ) -> AppResult<(ChangeSet, Vec<Job>)> {
        let mut changes = ChangeSet::new();
        let mut touched = BTreeSet::new();
        let mut inline = Vec::new();
        for version in versions {
            changes.push(Change::UpdateLeaf {
                expect: LeafExpect::status(version.status),
                record: version.tombstone(now),
            });
            inline
                .extend(self.invalidate_above(&mut changes, &mut touched, version, StaleCause::Forgotten, now).await?);
            let own = self.unproject_jobs(now, namespace, &version.tree_id, version.node_id());
            for job in &own {
                changes.push(Change::Enqueue(job.clone()));
            }
            inline.extend(own);
            // The questions that found it may quote it: their records go too.
            changes.push(Change::DropRetrievalsOf { node: version.node_id() });
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.forgotten",
                namespace,
                version.node_id(),
                &version.fingerprint,
            )));
        }
        Ok((changes, inline))
    }

    /// Privacy does not wait for the runner: the words go now. Runs the jobs a committed
    /// forget queued (index removals and body purges), completing each that finished; one that
    /// fails stays queued, and the runner finishes the purge.
    async fn purge_now(&self, namespace: &Namespace, jobs: &[Job]) -> AppResult<PurgedNow> {
        let mut purged = PurgedNow { bodies_deleted: 0, unindexed: Vec::new(), all_done: true };
        for job in jobs {
            let mut done = Ok(());
            for node in &job.nodes {
                done = match job.kind {
                    JobKind::Index => self.project(namespace, node).await.map(|_| purged.unindexed.push(node.clone())),
                    JobKind::Purge => self
                        .purge_body(namespace, node)
                        .await
                        .map(|deleted| purged.bodies_deleted += usize::from(deleted)),
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
                    purged.all_done = false;
                    tracing::warn!(job = %job.id, %error, "forget: purge step deferred to the job runner");
                }
            }
        }
        Ok(purged)
    }

    /// Every version of `leaf`'s memory that is not forgotten yet, in whichever tree it lies
    /// (re-filing in hindsight leaves the version it replaced in the fallback bucket), `leaf`
    /// among them.
    async fn lineage(&self, leaf: &LeafRecord) -> AppResult<Vec<LeafRecord>> {
        let mut versions: Vec<LeafRecord> = self
            .ports
            .store
            .versions(&leaf.namespace, &leaf.lineage)
            .await?
            .into_iter()
            .filter(|l| l.status != LeafStatus::Tombstone)
            .collect();
        if !versions.iter().any(|v| v.id == leaf.id) {
            versions.push(leaf.clone());
        }
        Ok(versions)
    }

    /// Removes a tree nothing is left in — every leaf a tombstone, every summary purged or
    /// retired — with its rows, its directory and (when nothing else refers to it) its entity,
    /// so no byte of the store names what it was about. Bodies still on disk are deleted first;
    /// the store refuses the dissolve if the tree took a new memory meanwhile. Returns whether
    /// the tree is gone.
    pub(crate) async fn dissolve_if_empty(&self, namespace: &Namespace, tree_id: &TreeId) -> AppResult<bool> {
        let store = &self.ports.store;
        let Some(tree) = store.tree(namespace, tree_id).await? else { return Ok(false) };
        let leaves = store.tree_leaves(namespace, tree_id, &TreeLeafQuery::default()).await?;
        if leaves.iter().any(|l| l.status != LeafStatus::Tombstone) {
            return Ok(false);
        }
        let summaries = store.tree_summaries(namespace, tree_id).await?;
        if summaries.iter().any(|s| matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale)) {
            return Ok(false);
        }
        let paths = leaves.iter().map(|l| &l.body_path).chain(summaries.iter().map(|s| &s.body_path));
        for path in paths {
            self.ports.bodies.delete(path).await?;
        }
        let now = self.now();
        let mut changes =
            ChangeSet::new().with(Change::DissolveTree { namespace: namespace.clone(), tree: tree_id.clone() });
        // The tree's own entity, and any its tombstones linked: each goes unless something else
        // (another tree, a live leaf) still refers to it; the store decides that atomically.
        let mut entities: BTreeSet<_> = tree.entity.iter().cloned().collect();
        for leaf in &leaves {
            entities.extend(leaf.entities.primary.iter().cloned());
            entities.extend(leaf.entities.secondary.iter().cloned());
        }
        for entity in entities {
            changes.push(Change::DeleteEntityIfUnused { namespace: namespace.clone(), id: entity });
        }
        changes.push(Change::Audit(arbor_ports::AuditEvent {
            at: now,
            action: "tree.dissolved".to_owned(),
            namespace: namespace.clone(),
            node: None,
            content_sha256: None,
            actor: self.actor(),
            policy_version: arbor_domain::model::POLICY_VERSION.to_owned(),
        }));
        match store.commit(changes).await {
            Ok(()) => {}
            // A write filed something in the tree meanwhile: it stays, rightly.
            Err(error) if error.is_conflict() => return Ok(false),
            Err(error) => return Err(error.into()),
        }
        let directory = BodyPath::tree_dir(namespace, tree_id.category(), tree_id);
        if let Err(error) = self.ports.bodies.prune_empty(&directory).await {
            tracing::warn!(%error, "could not remove the directory of a dissolved tree; fsck will report it");
        }
        Ok(true)
    }

    /// Forgets a leaf and every copy promotion made of it or of another version of its memory
    /// (and of those copies) that `chain` can read: the words leave every layer a promotion
    /// carried them to. The copies are found
    /// before anything is forgotten; each forget is complete on its own, so a failure part-way
    /// leaves whole forgets behind, and running it again finishes the rest.
    pub async fn forget_with_copies(&self, chain: &ReadChain, id: &LeafId) -> AppResult<Vec<ForgetReceipt>> {
        self.forget_with_copies_scoped(chain, id, ForgetScope::WholeMemory).await
    }

    /// [`forget_with_copies`](Self::forget_with_copies) for the versions `scope` names.
    pub async fn forget_with_copies_scoped(
        &self,
        chain: &ReadChain,
        id: &LeafId,
        scope: ForgetScope,
    ) -> AppResult<Vec<ForgetReceipt>> {
        let copies = self.promoted_copies(chain, id, scope).await?;
        let mut receipts = vec![self.forget_scoped(chain, id, scope).await?];
        for copy in copies {
            match self.forget_scoped(chain, &copy, scope).await {
                Ok(receipt) => receipts.push(receipt),
                // Forgotten meanwhile (or by an earlier, interrupted run, or with its lineage):
                // nothing left to do.
                Err(AppError::Transition(_)) => {}
                Err(error) if error.is_not_found() => {}
                Err(other) => return Err(other),
            }
        }
        Ok(receipts)
    }

    /// Leaves readable through `chain` that promotion copied from the versions of `id` that
    /// `scope` forgets, transitively, oldest first. Forgetting a memory forgets its whole
    /// lineage, so a copy of any of its versions says words that are going: a copy of the
    /// version a correction replaced goes as surely as a copy of `id` itself. A copy keeps its
    /// original's tree id in its own layer, so only the versions' trees are read in each
    /// namespace of the chain.
    async fn promoted_copies(&self, chain: &ReadChain, id: &LeafId, scope: ForgetScope) -> AppResult<Vec<LeafId>> {
        let readable: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let original = store.leaf(&readable, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
        let mut copies: Vec<LeafId> = Vec::new();
        let versions = match scope {
            ForgetScope::OnlyThisVersion => vec![original.clone()],
            ForgetScope::WholeMemory => self.lineage(&original).await?,
        };
        let trees: BTreeSet<TreeId> = versions.iter().map(|v| v.tree_id.clone()).collect();
        let mut sources: Vec<LeafId> = versions.into_iter().map(|v| v.id).collect();
        let everything = TreeLeafQuery::default();
        let mut in_tree = Vec::new();
        for namespace in &readable {
            for tree in &trees {
                in_tree.extend(store.tree_leaves(namespace, tree, &everything).await?);
            }
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
