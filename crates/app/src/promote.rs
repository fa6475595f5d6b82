//! Promotion [design §promotion] and its rollback: a memory proposed one layer up its caller's chain
//! (`promotion::promotion_target`), as a new candidate there whose provenance names the
//! original, the reason, the evaluation and the operator. The original stays where it was.

use arbor_domain::entity::Entity;
use arbor_domain::id::{EntityId, LeafId};
use arbor_domain::lifecycle::{LeafStatus, LeafTransition};
use arbor_domain::model::{EntityLinks, LeafRecord, POLICY_VERSION, SourceRef, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::promotion::{check_promotable, check_promotion_notes, promotion_target};
use arbor_domain::read_chain::ReadChain;
use arbor_domain::seal::StaleCause;
use arbor_ports::{Change, ChangeSet, Error, JobKind, LeafExpect, TreeLeafQuery};
use serde::Serialize;

use crate::write::{Attempt, BatchPlan, PlannedLeaf};
use crate::{AppError, AppResult, Arbor};

/// A request to promote one memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promotion {
    pub id: LeafId,
    pub reason: String,
    /// How it was judged worth promoting (runs that succeeded, a test, a review).
    pub evaluation: Option<String>,
    /// Who decided.
    pub operator: String,
}

/// What a promotion wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromotionReceipt {
    /// The new candidate in the target layer.
    pub leaf_id: LeafId,
    pub namespace: Namespace,
    pub tree_id: TreeId,
    pub status: LeafStatus,
    pub from: LeafId,
    pub from_namespace: Namespace,
}

impl Arbor {
    /// Promotes an active or candidate memory of `chain` one layer up the chain. The new leaf is
    /// a candidate: a person confirms it (`confirm`) like any other.
    pub async fn promote(&self, chain: &ReadChain, promotion: &Promotion) -> AppResult<PromotionReceipt> {
        check_promotion_notes(&promotion.reason, promotion.evaluation.as_deref(), &promotion.operator)
            .map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let id = &promotion.id;
        let source = store.leaf(&scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
        if !matches!(source.status, LeafStatus::Active | LeafStatus::Candidate) {
            return Err(AppError::InvalidRequest(format!(
                "{id} is {}; only an active or candidate memory is promoted",
                source.status
            )));
        }
        let target = promotion_target(chain, &source.namespace)
            .map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        self.propose_in(&source, target, promotion).await
    }

    /// Writes a copy of `source` into `target` as a candidate whose provenance is the
    /// promotion: the path is the caller's to have checked (`promotion_target`, or an
    /// experiment's settlement).
    pub(crate) async fn propose_in(
        &self,
        source: &LeafRecord,
        target: Namespace,
        promotion: &Promotion,
    ) -> AppResult<PromotionReceipt> {
        check_promotable(source.sensitivity).map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        let store = &self.ports.store;
        if let Some(existing) = self.leaf_holding_fingerprint(&target, &source.tree_id, &source.fingerprint).await? {
            return Err(AppError::InvalidRequest(format!(
                "{target} already holds this memory as {} ({})",
                existing.id, existing.status
            )));
        }
        let text = self.read_body(&source.body_path, &source.body_sha256).await?;

        let now = self.now();
        let mut plan = BatchPlan::default();
        // The owning entity and tree, as they are (or will be) in the target layer.
        let primary = match &source.entities.primary {
            Some(entity_id) => Some(self.entity_in(&mut plan, &source.namespace, entity_id, &target, now).await?),
            None => None,
        };
        let tree = match store.tree(&target, &source.tree_id).await? {
            Some(tree) => tree,
            None => {
                let title = store
                    .tree(&source.namespace, &source.tree_id)
                    .await?
                    .map(|t| t.title)
                    .unwrap_or_else(|| source.tree_id.to_string());
                TreeRecord {
                    namespace: target.clone(),
                    tree_id: source.tree_id.clone(),
                    entity: primary.clone(),
                    title,
                    created_at: now,
                    root: None,
                    root_stale: false,
                }
            }
        };
        plan.trees.insert((target.clone(), source.tree_id.clone()), tree);

        let leaf_id = self.new_leaf_id(now);
        let mut provenance = source.provenance.clone();
        provenance.source = SourceRef::Promotion {
            from: source.id.clone(),
            from_namespace: source.namespace.clone(),
            reason: promotion.reason.trim().to_owned(),
            evaluation: promotion.evaluation.clone(),
            operator: promotion.operator.clone(),
        };
        provenance.policy_version = POLICY_VERSION.to_owned();
        let record = LeafRecord {
            provenance,
            entities: EntityLinks { primary, secondary: Vec::new() },
            ..source.copied_as_new_memory(leaf_id.clone(), target.clone(), LeafStatus::Candidate, now)
        };
        plan.extra.push(Change::Audit(self.audit(
            now,
            "leaf.promoted",
            &target,
            record.node_id(),
            &source.body_sha256,
        )));
        plan.leaves.push(PlannedLeaf { record, text });
        self.commit_plan(&target, plan, now, std::time::Duration::ZERO).await?;
        Ok(PromotionReceipt {
            leaf_id,
            namespace: target,
            tree_id: source.tree_id.clone(),
            status: LeafStatus::Candidate,
            from: source.id.clone(),
            from_namespace: source.namespace.clone(),
        })
    }

    /// The entity `entity_id` of `source` as it is in `target`: the one with the same slug, or a
    /// copy planned for creation.
    async fn entity_in(
        &self,
        plan: &mut BatchPlan,
        source: &Namespace,
        entity_id: &EntityId,
        target: &Namespace,
        now: arbor_domain::time::Timestamp,
    ) -> AppResult<EntityId> {
        let store = &self.ports.store;
        let entity = store.entity(source, entity_id).await?.ok_or_else(|| Error::not_found("entity", entity_id))?;
        if let Some(existing) = store.entity_by_slug(target, &entity.slug).await? {
            return Ok(existing.id);
        }
        let copy = Entity { id: self.new_entity_id(now), namespace: target.clone(), created_at: now, ..entity };
        let id = copy.id.clone();
        plan.add_entity(copy);
        Ok(id)
    }

    /// Takes back a promotion: the promoted leaf is archived (out of retrieval, restorable) —
    /// or rejected, if nobody had confirmed it — and the original was never touched. Refused once the promoted memory replaced another
    /// one — undoing that is a restore of what it replaced.
    pub async fn rollback_promotion(&self, chain: &ReadChain, id: &LeafId) -> AppResult<LeafRecord> {
        let scope = &chain.namespaces().cloned().collect::<Vec<Namespace>>();
        let store = &self.ports.store;
        self.replanning(|| async move {
            let leaf = store.leaf(scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            if !matches!(leaf.provenance.source, SourceRef::Promotion { .. }) {
                return Err(AppError::InvalidRequest(format!("{id} was not promoted; there is nothing to roll back")));
            }
            let replaced = TreeLeafQuery { statuses: vec![LeafStatus::Superseded], ..TreeLeafQuery::default() };
            if let Some(old) = store
                .tree_leaves(&leaf.namespace, &leaf.tree_id, &replaced)
                .await?
                .into_iter()
                .find(|old| old.superseded_by.as_ref() == Some(id))
            {
                return Err(AppError::InvalidRequest(format!(
                    "{id} replaced {} when it was confirmed; restore that version instead",
                    old.id
                )));
            }
            let now = self.now();
            // A confirmed copy is archived (restorable); an unconfirmed one is rejected, which
            // keeps it out of the tree (archived leaves are tree members) and out of review.
            let transition =
                if leaf.status == LeafStatus::Candidate { LeafTransition::Reject } else { LeafTransition::Archive };
            let status = leaf.status.apply(transition)?;
            let archived = LeafRecord { status, known: leaf.known.closed_at(now), ..leaf.clone() };
            let mut changes = ChangeSet::new();
            let expect = LeafExpect { status: leaf.status, parent: Some(leaf.parent.clone()) };
            changes.push(Change::UpdateLeaf { expect, record: archived.clone() });
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.promotion_rolled_back",
                &leaf.namespace,
                leaf.node_id(),
                &leaf.body_sha256,
            )));
            if leaf.status.is_tree_member() {
                let mut touched = std::collections::BTreeSet::new();
                self.invalidate_above(&mut changes, &mut touched, &leaf, StaleCause::Archived, now).await?;
                changes.push(Change::Enqueue(self.job(
                    now,
                    JobKind::Seal,
                    &leaf.namespace,
                    Some(&leaf.tree_id),
                    Vec::new(),
                )));
            }
            let index = self.job(now, JobKind::Index, &leaf.namespace, Some(&leaf.tree_id), vec![leaf.node_id()]);
            changes.push(Change::Enqueue(index.clone()));
            let committed = Attempt::of(store.commit(changes).await.map_err(AppError::from))?;
            if let Attempt::Committed(()) = committed {
                self.index_now(&leaf.namespace, &[leaf.node_id()], &index).await;
            }
            Ok(committed.map(|()| archived))
        })
        .await
    }
}
