//! Turning a plan into what is kept: the leaves' markdown bodies written durably under an
//! intent, then one change set — entities, trees, the leaves retired before the new leaves, stale
//! summaries, audit events, one index job and a seal job per grown tree — committed together
//! with the intent's clearing; then, when configured, the new leaves indexed from the text in
//! hand.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::entity::Entity;
use arbor_domain::id::{EntityId, NodeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{ContentHash, POLICY_VERSION, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::seal::StaleCause;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::NodeFacts;
use arbor_ports::{AuditEvent, Change, ChangeSet, Job, JobKind, LeafExpect};

use super::BatchPlan;
use crate::projection::{Projectable, Vectors};
use crate::{AppResult, Arbor};

impl Arbor {
    /// Writes the bodies durably under an intent, then commits everything in one change set
    /// (clearing the intent); removes the bodies again if the commit fails. Indexes the new
    /// leaves right away when configured.
    /// `planned_in` is how long planning took, for the debug log of where a batch's time went.
    pub(crate) async fn commit_plan(
        &self,
        namespace: &Namespace,
        mut plan: BatchPlan,
        now: Timestamp,
        planned_in: std::time::Duration,
    ) -> AppResult<()> {
        if plan.leaves.is_empty() {
            return Ok(());
        }
        let mut documents = Vec::with_capacity(plan.leaves.len());
        let mut known_entities: BTreeMap<EntityId, Option<Entity>> =
            plan.new_entities.values().map(|e| (e.id.clone(), Some(e.clone()))).collect();
        for planned in &plan.leaves {
            let record = &planned.record;
            let path = record.body_path.clone();
            // What the document records of its filing, so the rows can be rebuilt from it.
            let entity = match &record.entities.primary {
                Some(id) => {
                    if !known_entities.contains_key(id) {
                        let stored = self.ports.store.entity(&record.namespace, id).await?;
                        known_entities.insert(id.clone(), stored);
                    }
                    known_entities.get(id).cloned().flatten()
                }
                None => None,
            };
            let tree_title = plan
                .trees
                .get(&(record.namespace.clone(), record.tree_id.clone()))
                .map(|t| t.title.as_str())
                .unwrap_or("Uncategorized");
            let filing =
                markdown::Filing { tree_title, entity: entity.as_ref().map(|e| (e.name.as_str(), e.entity_type)) };
            documents.push((path, markdown::render_leaf(record, &planned.text, filing).into_bytes()));
        }
        let phase = std::time::Instant::now();
        let written = self.write_bodies(documents).await?;
        let bodies_took = phase.elapsed();
        for (planned, hash) in plan.leaves.iter_mut().zip(&written.hashes) {
            planned.record.body_sha256 = hash.clone();
        }
        let phase = std::time::Instant::now();
        let (changes, jobs) = self.build_changes(namespace, &plan, now).await?;
        self.commit_with_bodies(changes, Some(written)).await?;
        let commit_took = phase.elapsed();
        let phase = std::time::Instant::now();
        if self.options.index_inline {
            self.index_planned(&plan, jobs).await;
        }
        tracing::debug!(
            leaves = plan.leaves.len(),
            plan_ms = planned_in.as_millis(),
            bodies_ms = bodies_took.as_millis(),
            commit_ms = commit_took.as_millis(),
            index_ms = phase.elapsed().as_millis(),
            "ingest batch committed"
        );
        Ok(())
    }

    /// The change set a plan commits, and the index jobs it enqueues.
    async fn build_changes(
        &self,
        namespace: &Namespace,
        plan: &BatchPlan,
        now: Timestamp,
    ) -> AppResult<(ChangeSet, Vec<Job>)> {
        let mut changes = ChangeSet::new();
        for entity in plan.new_entities.values() {
            changes.push(Change::InsertEntity(entity.clone()));
        }
        for tree in plan.trees.values() {
            changes.push(Change::EnsureTree(tree.clone()));
        }
        // Entities the batch files leaves under without creating them must still be there at
        // the commit (forgetting a tree's last memory deletes an entity nothing refers to).
        let mut matched = BTreeSet::new();
        for planned in &plan.leaves {
            let links = &planned.record.entities;
            for entity in links.primary.iter().chain(&links.secondary) {
                let created = plan.new_entities.values().any(|e| &e.id == entity);
                if !created && matched.insert(entity.clone()) {
                    changes
                        .push(Change::ExpectEntity { namespace: planned.record.namespace.clone(), id: entity.clone() });
                }
            }
        }
        let mut grown: BTreeSet<(Namespace, TreeId)> = BTreeSet::new();
        let mut to_index = Vec::with_capacity(plan.leaves.len() + plan.superseded.len());
        // Stored leaves the batch replaces are retired before the new leaves go in: a batch
        // may replace a memory and then restate it word for word, and the store holds one live
        // leaf per tree and fingerprint at every step of a commit, not only at its end.
        let mut touched = BTreeSet::new();
        for old in plan.superseded.values() {
            // As read: active, under the same parent (a seal in between re-plans the batch).
            let expect = LeafExpect { status: LeafStatus::Active, parent: Some(old.parent.clone()) };
            changes.push(Change::UpdateLeaf { expect, record: old.clone() });
            changes.push(Change::Audit(self.audit(now, "leaf.superseded", namespace, old.node_id(), &old.body_sha256)));
            to_index.push(old.node_id());
            self.invalidate_above(&mut changes, &mut touched, old, StaleCause::Superseded, now).await?;
        }
        // Current leaves newly marked (possibly outdated) stay as they are but for the mark.
        for current in plan.marked.values() {
            let expect = LeafExpect { status: LeafStatus::Active, parent: Some(current.parent.clone()) };
            changes.push(Change::UpdateLeaf { expect, record: current.clone() });
        }
        for planned in &plan.leaves {
            let record = &planned.record;
            changes.push(Change::InsertLeaf(record.clone()));
            for action in audited_as(record) {
                changes.push(Change::Audit(self.audit(now, action, namespace, record.node_id(), &record.body_sha256)));
            }
            to_index.push(record.node_id());
            if record.status.is_tree_member() {
                grown.insert((record.namespace.clone(), record.tree_id.clone()));
            }
        }
        for change in &plan.extra {
            changes.push(change.clone());
        }
        // One index job for the whole batch: the guarantee behind the inline indexing below.
        let index_job = self.job(now, JobKind::Index, namespace, None, to_index);
        changes.push(Change::Enqueue(index_job.clone()));
        for (ns, tree_id) in &grown {
            let tree = &plan.trees[&(ns.clone(), tree_id.clone())];
            if tree.root.is_some() && !tree.root_stale {
                changes.push(Change::MarkRootStale { namespace: ns.clone(), tree: tree_id.clone() });
            }
            changes.push(Change::Enqueue(self.job(now, JobKind::Seal, ns, Some(tree_id), Vec::new())));
        }
        Ok((changes, vec![index_job]))
    }

    /// Indexes what a batch just committed, from the text in hand (no body re-read), with one
    /// embedding call and one index write; then completes the jobs. Anything that fails stays
    /// queued for the runner. When vectors wait for the runner ([`Arbor::inline_vectors`]), the
    /// text is indexed now and the jobs stay queued for the runner to embed.
    async fn index_planned(&self, plan: &BatchPlan, jobs: Vec<Job>) {
        let items = plan
            .leaves
            .iter()
            .map(|p| Projectable {
                node: p.record.node_id(),
                facts: NodeFacts::of_leaf(&p.record),
                text: format!("{}\n{}", p.record.title, p.text),
            })
            .collect();
        let vectors = self.inline_vectors();
        match self.index_documents(items, vectors).await {
            Ok(()) => {
                let superseded: Vec<_> =
                    plan.superseded.values().map(|l| (l.node_id(), NodeFacts::of_leaf(l))).collect();
                if let Err(error) = self.ports.index.set_facts(superseded).await {
                    tracing::warn!(error = %arbor_ports::with_causes(&error), "could not update superseded leaves in the index; the runner will");
                    return;
                }
                if vectors == Vectors::Later {
                    return;
                }
                let mut done = ChangeSet::new();
                for job in &jobs {
                    done.push(Change::CompleteJob { id: job.id.clone() });
                }
                if let Err(error) = self.ports.store.commit(done).await {
                    tracing::warn!(error = %arbor_ports::with_causes(&error), "could not complete inline index jobs; the runner will repeat them");
                }
            }
            Err(error) => {
                tracing::warn!(error = %arbor_ports::with_causes(&error), "inline indexing failed; left for the job runner")
            }
        }
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
            actor: self.actor(),
            policy_version: POLICY_VERSION.to_owned(),
        }
    }

    /// A job over `nodes` (or the whole tree when there are none). Jobs about one node, or one
    /// tree, share a key so pending duplicates coalesce; a job over several nodes is its own.
    pub(crate) fn job(
        &self,
        now: Timestamp,
        kind: JobKind,
        namespace: &Namespace,
        tree: Option<&TreeId>,
        nodes: Vec<NodeId>,
    ) -> Job {
        let id = self.new_job_id(now);
        let key = match (nodes.as_slice(), tree) {
            ([node], _) => format!("{}:{}", kind.as_str(), node),
            ([], Some(tree)) => format!("{}:{}:{}", kind.as_str(), namespace, tree),
            ([], None) => format!("{}:{}", kind.as_str(), namespace),
            (_, _) => format!("{}:{}", kind.as_str(), id),
        };
        Job {
            id,
            kind,
            namespace: namespace.clone(),
            tree: tree.cloned(),
            nodes,
            key,
            attempts: 0,
            run_after: now,
            created_at: now,
            last_error: None,
        }
    }
}

/// What the audit log says of a new leaf: created, and — when a later event of the same batch
/// replaced it, so that it is written as history at once — replaced too, so that the log (and
/// `review retired`) says it was.
fn audited_as(record: &arbor_domain::model::LeafRecord) -> &'static [&'static str] {
    if record.status == LeafStatus::Superseded { &["leaf.created", "leaf.superseded"] } else { &["leaf.created"] }
}
