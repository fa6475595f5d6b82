//! One tree per subject, even in hindsight: when an entity comes into being, the current
//! memories of its namespace that name it but were filed in the fallback bucket (before anyone
//! knew it was a subject) move into its tree. Each moves as a new version of the same memory
//! in the entity's tree (same words, times, validity and provenance), the old placement kept as
//! history; the fallback tree's summaries go stale and the entity's tree grows, so sealing and
//! the index follow through the usual commit. Memories filed under another entity stay there:
//! they are about that one.

use arbor_domain::entity::Entity;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Category, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::VisibilityFilter;
use arbor_ports::{Error, TermSelection, TextQuery};

use crate::write::{BatchPlan, PlannedLeaf};
use crate::{AppError, AppResult, Arbor};

/// The most earlier memories one new entity brings into its tree at its creation: the few a
/// subject gathers before it is recognised as one. Any beyond stay where they are, still found
/// by full text and vectors.
const MAX_REFILED_PER_ENTITY: usize = 50;

/// Whether `text` names `entity` as written (whole words, its capitals kept): a person "Will"
/// is not every "will", nor "Mark" every "mark".
fn names(text: &str, entity: &Entity) -> bool {
    std::iter::once(&entity.name).chain(&entity.aliases).map(|n| n.trim()).filter(|n| !n.is_empty()).any(|name| {
        text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
        })
    })
}

impl Arbor {
    /// Moves the fallback bucket's current memories of `namespace` that name `entity` into its
    /// tree `tree`, in `plan`: stored ones as new versions (the old placement retired), ones
    /// this batch planned before by changing their filing.
    pub(crate) async fn refile_into(
        &self,
        plan: &mut BatchPlan,
        namespace: &Namespace,
        category: Category,
        entity: &Entity,
        tree: &TreeId,
        now: Timestamp,
    ) -> AppResult<()> {
        let bucket = TreeId::uncategorized(category);
        // Planned earlier in this batch: nothing is stored yet, so the filing just changes.
        for planned in plan.leaves.iter_mut().filter(|p| &p.record.namespace == namespace && p.record.tree_id == bucket)
        {
            if names(&planned.text, entity) {
                let record = &mut planned.record;
                record.tree_id = tree.clone();
                record.body_path = arbor_domain::paths::BodyPath::leaf(namespace, category, tree, &record.id);
                record.entities.primary = Some(entity.id.clone());
            }
        }
        if !self.ports.index.capabilities().full_text {
            return Ok(());
        }
        let filter = VisibilityFilter {
            categories: vec![category],
            tree: Some(bucket.clone()),
            ..VisibilityFilter::current_leaves_of(namespace, now, true)
        };
        let query =
            TextQuery { filter, text: entity.name.clone(), limit: MAX_REFILED_PER_ENTITY, terms: TermSelection::All };
        let ids: Vec<_> =
            self.ports.index.search_text(&query).await?.iter().filter_map(|h| h.id.as_leaf().cloned()).collect();
        for stored in self.ports.store.leaves(std::slice::from_ref(namespace), &ids).await? {
            let leaf = plan.overlay(stored);
            if leaf.status != LeafStatus::Active || leaf.tree_id != bucket || plan.superseded.contains_key(&leaf.id) {
                continue;
            }
            // A body that is damaged or missing stays where it is, for fsck to report:
            // re-filing is a tidy-up, and the write that triggered it must not fail for it. A
            // failure to read at all (the disk, a fault) fails the write, which can be retried.
            let text = match self.read_body(&leaf.body_path, &leaf.body_sha256).await {
                Ok(text) => text,
                Err(error @ AppError::Port(Error::NotFound { .. } | Error::Integrity { .. })) => {
                    tracing::warn!(leaf = %leaf.id, %error, "re-filing skips a memory whose body cannot be read");
                    continue;
                }
                Err(other) => return Err(other),
            };
            if !names(&text, entity) {
                continue;
            }
            let moved = leaf.refiled(self.new_leaf_id(now), tree.clone(), entity.id.clone(), now);
            // The old placement is history, its validity closed where the new one's starts (the
            // same instant: the new placement holds the fact for all of its time), as a rebuild
            // from the bodies would leave it.
            let from = moved.validity.valid_from.unwrap_or(moved.observed_at);
            plan.superseded.insert(leaf.id.clone(), leaf.superseded_by(&moved.id, from, now)?);
            plan.leaves.push(PlannedLeaf { record: moved, text });
        }
        Ok(())
    }
}
