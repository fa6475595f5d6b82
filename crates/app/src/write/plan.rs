//! What one attempt at a write will commit: the new leaves with their text, the stored leaves
//! they retire as they will be written, the trees and entities they need, and changes a use
//! case adds. Planning reads the store and the plan itself, so a later event of a batch sees
//! what an earlier one planned.

use std::collections::BTreeMap;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{ContentHash, LeafRecord, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::supersession::ExistingLeaf;
use arbor_ports::{Change, TreeLeafQuery};

use crate::{AppResult, Arbor};

/// A new leaf planned for the commit, with its text.
pub(crate) struct PlannedLeaf {
    pub(crate) record: LeafRecord,
    pub(crate) text: String,
}

/// Everything one attempt at a batch will commit.
#[derive(Default)]
pub(crate) struct BatchPlan {
    pub(crate) leaves: Vec<PlannedLeaf>,
    /// Stored leaves this batch supersedes, as they will be written.
    pub(crate) superseded: BTreeMap<LeafId, LeafRecord>,
    /// Stored leaves that stay current with a new mark (a doubt), as they will be written.
    pub(crate) marked: BTreeMap<LeafId, LeafRecord>,
    pub(crate) new_entities: BTreeMap<(Namespace, EntitySlug), Entity>,
    pub(crate) trees: BTreeMap<(Namespace, TreeId), TreeRecord>,
    /// Changes beyond the ones every new or superseded leaf brings (e.g. a `leaf.promoted`
    /// audit event, or the edited candidate a new one replaces), committed with them.
    pub(crate) extra: Vec<Change>,
    /// How many pair judgements this attempt asked a model reasoner for.
    pub(crate) pair_judgements: std::sync::atomic::AtomicU32,
}

impl BatchPlan {
    /// Plans an entity's creation (one per namespace and slug).
    pub(crate) fn add_entity(&mut self, entity: Entity) {
        self.new_entities.insert((entity.namespace.clone(), entity.slug.clone()), entity);
    }

    /// A stored leaf as this plan will leave it.
    pub(crate) fn overlay(&self, stored: LeafRecord) -> LeafRecord {
        self.superseded.get(&stored.id).or_else(|| self.marked.get(&stored.id)).cloned().unwrap_or(stored)
    }

    /// Plans `retired` (a leaf already closed by its successor) as written: a leaf this batch
    /// planned, or a stored one it supersedes.
    pub(crate) fn retire(&mut self, retired: LeafRecord) {
        self.marked.remove(&retired.id);
        match self.leaves.iter_mut().find(|p| p.record.id == retired.id) {
            Some(planned) => planned.record = retired,
            None => {
                self.superseded.insert(retired.id.clone(), retired);
            }
        }
    }

    /// Plans `current` (a leaf that stays current, newly marked) as written.
    pub(crate) fn doubt(&mut self, current: LeafRecord) {
        match self.leaves.iter_mut().find(|p| p.record.id == current.id) {
            Some(planned) => planned.record = current,
            None if self.superseded.contains_key(&current.id) => {}
            None => {
                self.marked.insert(current.id.clone(), current);
            }
        }
    }

    pub(crate) fn planned_in(&self, namespace: &Namespace, tree: &TreeId) -> impl Iterator<Item = &PlannedLeaf> {
        self.leaves.iter().filter(move |p| &p.record.namespace == namespace && &p.record.tree_id == tree)
    }
}

impl Arbor {
    /// The leaf of `tree` that already holds `fingerprint` (rule 1 of dedup), if any: a
    /// correction, edit or promotion saying it again would be a duplicate.
    pub(crate) async fn leaf_holding_fingerprint(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        fingerprint: &ContentHash,
    ) -> AppResult<Option<LeafRecord>> {
        let query = TreeLeafQuery {
            fingerprint: Some(fingerprint.clone()),
            statuses: LeafStatus::HOLDING_FINGERPRINT.to_vec(),
            ..TreeLeafQuery::default()
        };
        Ok(self.ports.store.tree_leaves(namespace, tree, &query).await?.into_iter().next())
    }
}

pub(crate) fn existing_leaf(record: &LeafRecord) -> ExistingLeaf {
    ExistingLeaf {
        id: record.id.clone(),
        fingerprint: record.fingerprint.clone(),
        subject: record.subject.clone(),
        status: record.status,
    }
}
