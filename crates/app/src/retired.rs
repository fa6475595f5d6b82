//! Automatic retirements, shown and undone. `retired` lists what the claims rules retired in
//! a chain's namespaces (at write time or in a consolidation pass): each memory with its rule,
//! its attribute, what it said and what replaced it. `restore_retired` makes a retired memory
//! current again beside the memory that retired it — both hold — and marks the pair as kept
//! together by a person, so that neither a write nor a consolidation pass retires one for the
//! other again.

use arbor_domain::claims::{LeafClaims, RetirementMark};
use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{Change, Error, LeafExpect};
use serde::Serialize;

use crate::write::{Attempt, BatchPlan, PlannedLeaf};
use crate::{AppError, AppResult, Arbor};

/// How many of the latest audit events a listing of retirements reads: weeks of an ordinary
/// store's changes, a bounded read whatever the store holds.
const RETIREMENTS_SCANNED: usize = 2_000;

/// A memory a rule retired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetiredItem {
    /// The retired memory, as history.
    pub leaf: LeafRecord,
    /// When it was retired.
    pub at: Timestamp,
    pub rule: &'static str,
    pub attribute: String,
    /// What it said of the attribute, and what the memory that retired it says.
    pub was: Option<String>,
    pub now: Option<String>,
    /// The memory that retired it, when the chain can still read it.
    pub by: Option<LeafRecord>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreReceipt {
    /// The retired memory.
    pub restored: LeafId,
    /// Its words, current again: a memory of its own.
    pub leaf_id: LeafId,
    pub namespace: Namespace,
    /// The memory that had retired it, which stays current beside it.
    pub kept_with: LeafId,
}

impl Arbor {
    /// The memories rules retired in `chain`'s namespaces since `since` (every one the latest
    /// audit events name when `None`), newest first, at most `limit`; those a person already
    /// restored are left out.
    pub async fn retired(
        &self,
        chain: &ReadChain,
        since: Option<Timestamp>,
        limit: usize,
    ) -> AppResult<Vec<RetiredItem>> {
        self.retired_where(chain, since, limit, |_| true).await
    }

    /// [`Arbor::retired`], of the retired memories `wanted` admits only (the memory that
    /// retired each is read only for those).
    pub(crate) async fn retired_where(
        &self,
        chain: &ReadChain,
        since: Option<Timestamp>,
        limit: usize,
        wanted: impl Fn(&LeafRecord) -> bool,
    ) -> AppResult<Vec<RetiredItem>> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let filter = VisibilityFilter::for_chain(chain, self.now());
        let opens = |leaf: &LeafRecord| filter.opens_by_id(&NodeFacts::of_leaf(leaf));
        let mut when: Vec<(LeafId, Timestamp)> = Vec::new();
        for event in store.audit_events(&scope, RETIREMENTS_SCANNED).await? {
            let retiring = matches!(event.action.as_str(), "leaf.superseded" | "leaf.invalidated");
            if let (true, Some(NodeId::Leaf(id))) = (retiring && since.is_none_or(|s| event.at >= s), event.node)
                && !when.iter().any(|(known, _)| known == &id)
            {
                when.push((id, event.at));
            }
        }
        let ids: Vec<LeafId> = when.iter().map(|(id, _)| id.clone()).collect();
        let mut items = Vec::new();
        for leaf in store.leaves(&scope, &ids).await?.into_iter().filter(|l| opens(l) && wanted(l)) {
            let Some(mark) = leaf.claims.retired.clone().filter(|m| m.restored_as.is_none()) else { continue };
            if leaf.status != LeafStatus::Superseded {
                continue;
            }
            let by = store.leaf(&scope, &mark.by).await?.filter(|l| opens(l));
            let value_of = |record: &LeafRecord| {
                record.claims.claims.iter().find(|c| c.attribute == mark.attribute).and_then(|c| c.value.clone())
            };
            let at = when.iter().find(|(id, _)| id == &leaf.id).map_or(leaf.created_at, |(_, at)| *at);
            items.push(RetiredItem {
                was: value_of(&leaf),
                now: by.as_ref().and_then(value_of),
                at,
                rule: mark.rule.as_str(),
                attribute: mark.attribute.clone(),
                by,
                leaf,
            });
        }
        items.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.leaf.id.cmp(&a.leaf.id)));
        items.truncate(limit);
        Ok(items)
    }

    /// Undoes the automatic retirement of `id` (a memory of the chain's write namespace that a
    /// rule retired): its words become current again as a memory of their own, valid from when
    /// they were first valid, beside the memory that retired it; both are marked as kept
    /// together, which no rule overrides. Refused for a memory no rule retired (a person's
    /// correction is undone by `restore`, a version at a time) and for one already restored.
    pub async fn restore_retired(&self, chain: &ReadChain, id: &LeafId) -> AppResult<RestoreReceipt> {
        self.replanning(|| async move {
            let old = self.own_leaf(chain, id).await?;
            let mark = match &old.claims.retired {
                Some(mark) if mark.restored_as.is_none() && old.status == LeafStatus::Superseded => mark.clone(),
                Some(_) => {
                    return Err(AppError::NotNow(format!("{id} was restored already or is current")));
                }
                None => {
                    return Err(AppError::NotNow(format!(
                        "{id} was not retired by a rule; a version a person replaced comes back with `restore`"
                    )));
                }
            };
            let now = self.now();
            let text = self.read_body(&old.body_path, &old.body_sha256).await?;
            let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
            let newer = self.ports.store.leaf(&scope, &mark.by).await?;
            let newer_lineage = newer.as_ref().map_or_else(|| mark.by.clone(), |n| n.lineage.clone());
            let restored_id = self.new_leaf_id(now);
            let copy = old.copied_as_new_memory(restored_id.clone(), old.namespace.clone(), LeafStatus::Active, now);
            let restored = LeafRecord {
                observed_at: old.observed_at,
                validity: Validity::new(old.validity.valid_from, None).unwrap_or(Validity::starting(old.observed_at)),
                claims: LeafClaims { kept_with: vec![newer_lineage.clone()], ..old.claims.unmarked() },
                ..copy
            };
            let mut plan = BatchPlan::default();
            let tree = self
                .ports
                .store
                .tree(&old.namespace, &old.tree_id)
                .await?
                .ok_or_else(|| Error::not_found("tree", &old.tree_id))?;
            plan.trees.insert((tree.namespace.clone(), tree.tree_id.clone()), tree);
            // The retired version stays history, now saying it was restored, and by which leaf.
            let undone = RetirementMark { restored_as: Some(restored_id.clone()), ..mark.clone() };
            let history =
                LeafRecord { claims: LeafClaims { retired: Some(undone), ..old.claims.clone() }, ..old.clone() };
            let expect = LeafExpect { status: LeafStatus::Superseded, parent: Some(old.parent.clone()) };
            plan.extra.push(Change::UpdateLeaf { expect, record: history });
            plan.extra.push(Change::Audit(self.audit(
                now,
                "leaf.restored",
                &old.namespace,
                old.node_id(),
                &old.body_sha256,
            )));
            // The memory that retired it, if still current, is kept beside it.
            if let Some(newer) = newer.filter(|n| n.status == LeafStatus::Active && n.namespace == old.namespace) {
                let mut kept = newer.claims.kept_with.clone();
                kept.push(restored_id.clone());
                let record = LeafRecord {
                    claims: LeafClaims { kept_with: kept, doubt: None, ..newer.claims.clone() },
                    ..newer.clone()
                };
                let expect = LeafExpect { status: LeafStatus::Active, parent: Some(newer.parent.clone()) };
                plan.extra.push(Change::UpdateLeaf { expect, record });
            }
            let receipt = RestoreReceipt {
                restored: old.id.clone(),
                leaf_id: restored_id.clone(),
                namespace: old.namespace.clone(),
                kept_with: mark.by.clone(),
            };
            plan.leaves.push(PlannedLeaf { record: restored, text });
            Attempt::of(self.commit_plan(&old.namespace, plan, now, std::time::Duration::ZERO).await.map(|()| receipt))
        })
        .await
    }
}
