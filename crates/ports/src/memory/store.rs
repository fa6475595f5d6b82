//! The in-memory metadata store: the reference implementation of [`MetadataStore`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryRecord, SummaryRole, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::seal::FrontierNode;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::rows::{filed_entries, lookup_key_hash, signature_from};
use crate::snapshot::{AccessRecord, ContextSnapshot};
use crate::store::{
    AuditEvent, BodyIntent, Change, ChangeSet, EntityQuery, FiledEntry, FiledQuery, Job, JobClaim, JobKind, LeafExpect,
    LeafPosition, MetadataStore, Neighbours, Page, StoreCounts, SummaryExpect, TreeLeafQuery, WriteMark,
};

const BACKEND: &str = "memory";

/// Holds everything in maps behind one lock. Commits apply changes in order and undo them all
/// if any fails, so a failed commit leaves the state exactly as it was.
#[derive(Debug, Default)]
pub struct InMemoryMetadataStore {
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone)]
struct State {
    entities: BTreeMap<EntityId, Entity>,
    trees: BTreeMap<(Namespace, TreeId), TreeRecord>,
    leaves: BTreeMap<LeafId, LeafRecord>,
    summaries: BTreeMap<SummaryId, SummaryRecord>,
    jobs: BTreeMap<JobId, JobRow>,
    audit: Vec<AuditEvent>,
    intents: BTreeMap<JobId, BodyIntent>,
    retrievals: BTreeMap<RetrievalId, ContextSnapshot>,
    /// Oldest first.
    access: Vec<AccessRecord>,
}

#[derive(Debug, Clone)]
struct JobRow {
    job: Job,
    lease: Option<(String, arbor_domain::time::Timestamp)>,
    dead: bool,
}

/// How to put back what one change altered.
enum Undo {
    Entity(EntityId, Option<Entity>),
    Tree((Namespace, TreeId), Option<TreeRecord>),
    Leaf(LeafId, Option<LeafRecord>),
    Summary(SummaryId, Option<SummaryRecord>),
    Job(JobId, Option<JobRow>),
    AuditLen(usize),
    Intent(JobId, Option<BodyIntent>),
    Retrieval(RetrievalId, usize),
    Retrievals(BTreeMap<RetrievalId, ContextSnapshot>, Vec<AccessRecord>),
}

impl InMemoryMetadataStore {
    pub fn new() -> InMemoryMetadataStore {
        InMemoryMetadataStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-applied commit (commits undo
        // themselves before returning), so the state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn in_scope(scope: &[Namespace], namespace: &Namespace) -> bool {
    scope.contains(namespace)
}

/// Statuses that hold a fingerprint: at most one leaf per (namespace, tree) may be in one.
fn is_live(status: LeafStatus) -> bool {
    matches!(status, LeafStatus::Active | LeafStatus::Candidate | LeafStatus::Rejected)
}

impl State {
    /// Whether another live leaf of the same tree has this leaf's fingerprint.
    fn live_twin(&self, leaf: &LeafRecord) -> bool {
        self.leaves.values().any(|l| {
            l.id != leaf.id
                && l.namespace == leaf.namespace
                && l.tree_id == leaf.tree_id
                && l.fingerprint == leaf.fingerprint
                && is_live(l.status)
        })
    }

    fn apply(&mut self, change: Change, undo: &mut Vec<Undo>) -> Result<()> {
        match change {
            Change::InsertEntity(entity) => self.insert_entity(entity, undo)?,
            Change::EnsureTree(tree) => self.ensure_tree(tree, undo)?,
            Change::InsertLeaf(leaf) => self.insert_leaf(leaf, undo)?,
            Change::UpdateLeaf { expect, record } => self.update_leaf(expect, record, undo)?,
            Change::InsertSummary(summary) => self.insert_summary(summary, undo)?,
            Change::UpdateSummary { expect, record } => self.update_summary(expect, record, undo)?,
            Change::SetRoot { namespace, tree, expect, root, stale } => {
                self.set_root(namespace, tree, expect, root, stale, undo)?
            }
            Change::MarkRootStale { namespace, tree } => self.mark_root_stale(namespace, tree, undo)?,
            Change::Enqueue(job) => self.enqueue(job, undo)?,
            Change::CompleteJob { id } => self.complete_job(id, undo)?,
            Change::FailJob { id, error, retry_at } => self.fail_job(id, error, retry_at, undo)?,
            Change::Audit(event) => self.audit(event, undo)?,
            Change::RecordRetrieval(snapshot) => self.record_retrieval(snapshot, undo)?,
            Change::DropRetrievalsOf { node } => self.drop_retrievals_of(node, undo)?,
            Change::AddBodyIntent(intent) => self.add_body_intent(intent, undo)?,
            Change::ClearBodyIntent { id } => self.clear_body_intent(id, undo)?,
            Change::DissolveTree { namespace, tree } => self.dissolve_tree(namespace, tree, undo)?,
            Change::ExpectEntity { namespace, id } => self.expect_entity(namespace, id)?,
            Change::DeleteEntityIfUnused { namespace, id } => self.delete_entity_if_unused(namespace, id, undo)?,
            Change::ReleaseLease { id, worker } => self.release_lease(id, worker, undo)?,
            Change::DeferJob { id, retry_at } => self.defer_job(id, retry_at, undo)?,
        }
        Ok(())
    }

    fn insert_entity(&mut self, entity: Entity, undo: &mut Vec<Undo>) -> Result<()> {
        if self.entities.contains_key(&entity.id) {
            return Err(Error::AlreadyExists { what: "entity", id: entity.id.to_string() });
        }
        if self.entities.values().any(|e| e.namespace == entity.namespace && e.slug == entity.slug) {
            return Err(Error::AlreadyExists {
                what: "entity slug",
                id: format!("{}/{}", entity.namespace, entity.slug),
            });
        }
        undo.push(Undo::Entity(entity.id.clone(), None));
        self.entities.insert(entity.id.clone(), entity);
        Ok(())
    }

    fn ensure_tree(&mut self, tree: TreeRecord, undo: &mut Vec<Undo>) -> Result<()> {
        let key = (tree.namespace.clone(), tree.tree_id.clone());
        if let std::collections::btree_map::Entry::Vacant(slot) = self.trees.entry(key.clone()) {
            slot.insert(tree);
            undo.push(Undo::Tree(key, None));
        }
        Ok(())
    }

    fn insert_leaf(&mut self, leaf: LeafRecord, undo: &mut Vec<Undo>) -> Result<()> {
        if self.leaves.contains_key(&leaf.id) {
            return Err(Error::AlreadyExists { what: "leaf", id: leaf.id.to_string() });
        }
        if is_live(leaf.status) && self.live_twin(&leaf) {
            return Err(Error::AlreadyExists {
                what: "leaf fingerprint",
                id: format!("{}/{}/{}", leaf.namespace, leaf.tree_id, leaf.fingerprint),
            });
        }
        undo.push(Undo::Leaf(leaf.id.clone(), None));
        self.leaves.insert(leaf.id.clone(), leaf);
        Ok(())
    }

    fn update_leaf(&mut self, expect: LeafExpect, record: LeafRecord, undo: &mut Vec<Undo>) -> Result<()> {
        let current = self.leaves.get(&record.id).ok_or_else(|| Error::not_found("leaf", &record.id))?;
        expect.check(&record.id, current.status.as_str(), current.parent.as_ref().map(SummaryId::as_str))?;
        if current.namespace != record.namespace || current.tree_id != record.tree_id {
            return Err(Error::invalid("leaf update", "a leaf never changes namespace or tree"));
        }
        if is_live(record.status) && !is_live(current.status) && self.live_twin(&record) {
            return Err(Error::AlreadyExists {
                what: "leaf fingerprint",
                id: format!("{}/{}/{}", record.namespace, record.tree_id, record.fingerprint),
            });
        }
        undo.push(Undo::Leaf(record.id.clone(), Some(current.clone())));
        self.leaves.insert(record.id.clone(), record);
        Ok(())
    }

    fn insert_summary(&mut self, summary: SummaryRecord, undo: &mut Vec<Undo>) -> Result<()> {
        if self.summaries.contains_key(&summary.id) {
            return Err(Error::AlreadyExists { what: "summary", id: summary.id.to_string() });
        }
        undo.push(Undo::Summary(summary.id.clone(), None));
        self.summaries.insert(summary.id.clone(), summary);
        Ok(())
    }

    fn update_summary(&mut self, expect: SummaryExpect, record: SummaryRecord, undo: &mut Vec<Undo>) -> Result<()> {
        let current = self.summaries.get(&record.id).ok_or_else(|| Error::not_found("summary", &record.id))?;
        expect.check(&record.id, current.status.as_str(), current.parent.as_ref().map(SummaryId::as_str))?;
        undo.push(Undo::Summary(record.id.clone(), Some(current.clone())));
        self.summaries.insert(record.id.clone(), record);
        Ok(())
    }

    fn set_root(
        &mut self,
        namespace: Namespace,
        tree: TreeId,
        expect: Option<SummaryId>,
        root: Option<SummaryId>,
        stale: bool,
        undo: &mut Vec<Undo>,
    ) -> Result<()> {
        let key = (namespace, tree);
        let current = self.trees.get(&key).ok_or_else(|| Error::not_found("tree", &key.1))?;
        crate::store::check_root(&key.1, expect.as_ref(), current.root.as_ref().map(SummaryId::as_str))?;
        undo.push(Undo::Tree(key.clone(), Some(current.clone())));
        let updated = TreeRecord { root, root_stale: stale, ..current.clone() };
        self.trees.insert(key, updated);
        Ok(())
    }

    fn mark_root_stale(&mut self, namespace: Namespace, tree: TreeId, undo: &mut Vec<Undo>) -> Result<()> {
        let key = (namespace, tree);
        let current = self.trees.get(&key).ok_or_else(|| Error::not_found("tree", &key.1))?;
        if !current.root_stale {
            undo.push(Undo::Tree(key.clone(), Some(current.clone())));
            let updated = TreeRecord { root_stale: true, ..current.clone() };
            self.trees.insert(key, updated);
        }
        Ok(())
    }

    fn enqueue(&mut self, job: Job, undo: &mut Vec<Undo>) -> Result<()> {
        if self.jobs.contains_key(&job.id) {
            return Err(Error::AlreadyExists { what: "job", id: job.id.to_string() });
        }
        let absorbed = self.jobs.values().any(|row| row.job.key == job.key && row.lease.is_none() && !row.dead);
        if !absorbed {
            undo.push(Undo::Job(job.id.clone(), None));
            self.jobs.insert(job.id.clone(), JobRow { job, lease: None, dead: false });
        }
        Ok(())
    }

    fn complete_job(&mut self, id: JobId, undo: &mut Vec<Undo>) -> Result<()> {
        if let Some(row) = self.jobs.remove(&id) {
            undo.push(Undo::Job(id, Some(row)));
        }
        Ok(())
    }

    fn fail_job(&mut self, id: JobId, error: String, retry_at: Option<Timestamp>, undo: &mut Vec<Undo>) -> Result<()> {
        if let Some(row) = self.jobs.get(&id).cloned() {
            undo.push(Undo::Job(id.clone(), Some(row.clone())));
            let mut updated = row;
            updated.job.attempts += 1;
            updated.job.last_error = Some(error);
            updated.lease = None;
            match retry_at {
                Some(at) => updated.job.run_after = at,
                None => updated.dead = true,
            }
            self.jobs.insert(id, updated);
        }
        Ok(())
    }

    fn audit(&mut self, event: AuditEvent, undo: &mut Vec<Undo>) -> Result<()> {
        undo.push(Undo::AuditLen(self.audit.len()));
        self.audit.push(event);
        Ok(())
    }

    fn record_retrieval(&mut self, snapshot: Box<ContextSnapshot>, undo: &mut Vec<Undo>) -> Result<()> {
        if self.retrievals.contains_key(&snapshot.id) {
            return Err(Error::AlreadyExists { what: "retrieval", id: snapshot.id.to_string() });
        }
        undo.push(Undo::Retrieval(snapshot.id.clone(), self.access.len()));
        self.access.extend(snapshot.access_records());
        self.retrievals.insert(snapshot.id.clone(), *snapshot);
        Ok(())
    }

    fn drop_retrievals_of(&mut self, node: NodeId, undo: &mut Vec<Undo>) -> Result<()> {
        let dropped: BTreeSet<RetrievalId> =
            self.access.iter().filter(|a| a.node == node).map(|a| a.retrieval.clone()).collect();
        if !dropped.is_empty() {
            undo.push(Undo::Retrievals(self.retrievals.clone(), self.access.clone()));
            self.retrievals.retain(|id, _| !dropped.contains(id));
            self.access.retain(|a| !dropped.contains(&a.retrieval));
        }
        Ok(())
    }

    fn add_body_intent(&mut self, intent: BodyIntent, undo: &mut Vec<Undo>) -> Result<()> {
        if self.intents.contains_key(&intent.id) {
            return Err(Error::AlreadyExists { what: "body intent", id: intent.id.to_string() });
        }
        undo.push(Undo::Intent(intent.id.clone(), None));
        self.intents.insert(intent.id.clone(), intent);
        Ok(())
    }

    fn clear_body_intent(&mut self, id: JobId, undo: &mut Vec<Undo>) -> Result<()> {
        if let Some(old) = self.intents.remove(&id) {
            undo.push(Undo::Intent(id, Some(old)));
        }
        Ok(())
    }

    fn dissolve_tree(&mut self, namespace: Namespace, tree: TreeId, undo: &mut Vec<Undo>) -> Result<()> {
        let key = (namespace.clone(), tree.clone());
        let Some(record) = self.trees.get(&key).cloned() else { return Ok(()) };
        let in_tree = |ns: &Namespace, t: &TreeId| ns == &namespace && t == &tree;
        if let Some(live) =
            self.leaves.values().find(|l| in_tree(&l.namespace, &l.tree_id) && l.status != LeafStatus::Tombstone)
        {
            return Err(Error::conflict("tree", &tree, "only tombstones", format!("leaf {} {}", live.id, live.status)));
        }
        if let Some(readable) = self.summaries.values().find(|s| {
            in_tree(&s.namespace, &s.tree_id) && matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale)
        }) {
            return Err(Error::conflict("tree", &tree, "no readable summary", format!("summary {}", readable.id)));
        }
        if let Some(purge) = self.jobs.values().find(|row| {
            row.job.kind == crate::store::JobKind::Purge
                && row.job.namespace == namespace
                && row.job.tree.as_ref() == Some(&tree)
        }) {
            return Err(Error::conflict("tree", &tree, "no pending purge", format!("job {}", purge.job.id)));
        }
        let leaves: Vec<LeafId> =
            self.leaves.values().filter(|l| in_tree(&l.namespace, &l.tree_id)).map(|l| l.id.clone()).collect();
        for id in leaves {
            let old = self.leaves.remove(&id);
            undo.push(Undo::Leaf(id, old));
        }
        let summaries: Vec<SummaryId> =
            self.summaries.values().filter(|s| in_tree(&s.namespace, &s.tree_id)).map(|s| s.id.clone()).collect();
        for id in summaries {
            let old = self.summaries.remove(&id);
            undo.push(Undo::Summary(id, old));
        }
        let seals: Vec<JobId> = self
            .jobs
            .values()
            .filter(|row| row.job.namespace == namespace && row.job.tree.as_ref() == Some(&tree))
            .map(|row| row.job.id.clone())
            .collect();
        for id in seals {
            let old = self.jobs.remove(&id);
            undo.push(Undo::Job(id, old));
        }
        self.trees.remove(&key);
        undo.push(Undo::Tree(key, Some(record)));
        Ok(())
    }

    fn expect_entity(&mut self, namespace: Namespace, id: EntityId) -> Result<()> {
        if self.entities.get(&id).is_none_or(|e| e.namespace != namespace) {
            return Err(Error::conflict("entity", &id, "present", "gone"));
        }
        Ok(())
    }

    fn delete_entity_if_unused(&mut self, namespace: Namespace, id: EntityId, undo: &mut Vec<Undo>) -> Result<()> {
        let Some(entity) = self.entities.get(&id).filter(|e| e.namespace == namespace).cloned() else {
            return Ok(());
        };
        let named_by_tree = self.trees.values().any(|t| t.namespace == namespace && t.entity.as_ref() == Some(&id));
        let linked = self.leaves.values().any(|l| {
            l.namespace == namespace
                && l.status != LeafStatus::Tombstone
                && (l.entities.primary.as_ref() == Some(&id) || l.entities.secondary.contains(&id))
        });
        if !named_by_tree && !linked {
            self.entities.remove(&id);
            undo.push(Undo::Entity(id, Some(entity)));
        }
        Ok(())
    }

    fn release_lease(&mut self, id: JobId, worker: String, undo: &mut Vec<Undo>) -> Result<()> {
        if let Some(row) = self.jobs.get(&id).cloned()
            && row.lease.as_ref().is_some_and(|(holder, _)| holder == &worker)
        {
            undo.push(Undo::Job(id.clone(), Some(row.clone())));
            self.jobs.insert(id, JobRow { lease: None, ..row });
        }
        Ok(())
    }

    fn defer_job(&mut self, id: JobId, retry_at: Timestamp, undo: &mut Vec<Undo>) -> Result<()> {
        if let Some(row) = self.jobs.get(&id).cloned() {
            undo.push(Undo::Job(id.clone(), Some(row.clone())));
            let mut updated = row;
            updated.lease = None;
            updated.job.run_after = retry_at;
            self.jobs.insert(id, updated);
        }
        Ok(())
    }

    fn undo(&mut self, undo: Undo) {
        fn restore<K: Ord, V>(map: &mut BTreeMap<K, V>, key: K, value: Option<V>) {
            match value {
                Some(value) => map.insert(key, value),
                None => map.remove(&key),
            };
        }
        match undo {
            Undo::Entity(id, old) => restore(&mut self.entities, id, old),
            Undo::Tree(key, old) => restore(&mut self.trees, key, old),
            Undo::Leaf(id, old) => restore(&mut self.leaves, id, old),
            Undo::Summary(id, old) => restore(&mut self.summaries, id, old),
            Undo::Job(id, old) => restore(&mut self.jobs, id, old),
            Undo::AuditLen(len) => self.audit.truncate(len),
            Undo::Intent(id, old) => restore(&mut self.intents, id, old),
            Undo::Retrieval(id, access_len) => {
                self.retrievals.remove(&id);
                self.access.truncate(access_len);
            }
            Undo::Retrievals(retrievals, access) => {
                self.retrievals = retrievals;
                self.access = access;
            }
        }
    }
}

#[async_trait]
impl MetadataStore for InMemoryMetadataStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn commit(&self, changes: ChangeSet) -> Result<()> {
        let mut state = self.lock();
        let mut undo = Vec::with_capacity(changes.len());
        for change in changes.changes {
            if let Err(error) = state.apply(change, &mut undo) {
                while let Some(step) = undo.pop() {
                    state.undo(step);
                }
                return Err(error);
            }
        }
        Ok(())
    }

    async fn leaf(&self, scope: &[Namespace], id: &LeafId) -> Result<Option<LeafRecord>> {
        Ok(self.lock().leaves.get(id).filter(|l| in_scope(scope, &l.namespace)).cloned())
    }

    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>> {
        let state = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| state.leaves.get(id))
            .filter(|l| in_scope(scope, &l.namespace))
            .cloned()
            .collect())
    }

    async fn summary(&self, scope: &[Namespace], id: &SummaryId) -> Result<Option<SummaryRecord>> {
        Ok(self.lock().summaries.get(id).filter(|s| in_scope(scope, &s.namespace)).cloned())
    }

    async fn summaries(&self, scope: &[Namespace], ids: &[SummaryId]) -> Result<Vec<SummaryRecord>> {
        let state = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| state.summaries.get(id))
            .filter(|s| in_scope(scope, &s.namespace))
            .cloned()
            .collect())
    }

    async fn tree(&self, namespace: &Namespace, tree: &TreeId) -> Result<Option<TreeRecord>> {
        Ok(self.lock().trees.get(&(namespace.clone(), tree.clone())).cloned())
    }

    async fn trees(&self, scope: &[Namespace]) -> Result<Vec<TreeRecord>> {
        let mut trees: Vec<TreeRecord> =
            self.lock().trees.values().filter(|t| in_scope(scope, &t.namespace)).cloned().collect();
        trees.sort_by(|a, b| (a.namespace.to_string(), &a.tree_id).cmp(&(b.namespace.to_string(), &b.tree_id)));
        Ok(trees)
    }

    async fn entity(&self, namespace: &Namespace, id: &EntityId) -> Result<Option<Entity>> {
        Ok(self.lock().entities.get(id).filter(|e| &e.namespace == namespace).cloned())
    }

    async fn entity_by_slug(&self, namespace: &Namespace, slug: &EntitySlug) -> Result<Option<Entity>> {
        Ok(self.lock().entities.values().find(|e| &e.namespace == namespace && &e.slug == slug).cloned())
    }

    async fn find_entities(&self, namespace: &Namespace, query: &EntityQuery) -> Result<Vec<Entity>> {
        let terms: BTreeSet<String> = query.words().into_iter().collect();
        let state = self.lock();
        let mut scored: Vec<(usize, &Entity)> = state
            .entities
            .values()
            .filter(|e| &e.namespace == namespace)
            .filter_map(|e| {
                let shared = e.words().intersection(&terms).count();
                (shared > 0).then_some((shared, e))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        Ok(scored.into_iter().take(query.limit).map(|(_, e)| e.clone()).collect())
    }

    async fn tree_leaves(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        query: &TreeLeafQuery,
    ) -> Result<Vec<LeafRecord>> {
        let state = self.lock();
        Ok(state
            .leaves
            .values()
            .filter(|l| &l.namespace == namespace && &l.tree_id == tree)
            .filter(|l| query.fingerprint.as_ref().is_none_or(|f| &l.fingerprint == f))
            .filter(|l| query.subject.as_ref().is_none_or(|s| l.subject.as_ref() == Some(s)))
            .filter(|l| query.statuses.is_empty() || query.statuses.contains(&l.status))
            .cloned()
            .collect())
    }

    async fn frontier(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<FrontierNode>> {
        let state = self.lock();
        let leaves = state
            .leaves
            .values()
            .filter(|l| &l.namespace == namespace && &l.tree_id == tree)
            .filter(|l| l.status.sits_in_tree(l.known.known_from.is_some()) && l.parent.is_none())
            .map(|l| FrontierNode {
                node: NodeId::Leaf(l.id.clone()),
                height: 0,
                joined_at: l.known.known_from.unwrap_or(l.created_at),
            });
        let summaries = state
            .summaries
            .values()
            .filter(|s| &s.namespace == namespace && &s.tree_id == tree)
            .filter(|s| s.role == SummaryRole::Sealed && s.status != SummaryStatus::Retired && s.parent.is_none())
            .map(|s| FrontierNode { node: NodeId::Summary(s.id.clone()), height: s.height, joined_at: s.sealed_at });
        Ok(leaves.chain(summaries).collect())
    }

    async fn tree_summaries(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let state = self.lock();
        Ok(state.summaries.values().filter(|s| &s.namespace == namespace && &s.tree_id == tree).cloned().collect())
    }

    async fn summaries_awaiting_reseal(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        let state = self.lock();
        Ok(state
            .summaries
            .values()
            .filter(|s| &s.namespace == namespace && &s.tree_id == tree)
            .filter(|s| s.role == SummaryRole::Sealed && s.status.awaits_reseal())
            .cloned()
            .collect())
    }

    async fn list_leaves(&self, filter: &VisibilityFilter, page: Page) -> Result<Vec<LeafRecord>> {
        let state = self.lock();
        let mut admitted: Vec<&LeafRecord> =
            state.leaves.values().filter(|l| filter.admits(&NodeFacts::of_leaf(l))).collect();
        admitted.sort_by(|a, b| b.observed_at.cmp(&a.observed_at).then_with(|| b.id.cmp(&a.id)));
        Ok(admitted.into_iter().skip(page.offset).take(page.limit).cloned().collect())
    }

    async fn leaves_written_after(
        &self,
        namespace: &Namespace,
        after: Option<WriteMark>,
        limit: usize,
    ) -> Result<Vec<LeafRecord>> {
        let state = self.lock();
        let mut written: Vec<&LeafRecord> = state
            .leaves
            .values()
            .filter(|l| &l.namespace == namespace && after.as_ref().is_none_or(|mark| WriteMark::of(l) > *mark))
            .collect();
        written.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(written.into_iter().take(limit).cloned().collect())
    }

    async fn versions(&self, namespace: &Namespace, lineage: &LeafId) -> Result<Vec<LeafRecord>> {
        let state = self.lock();
        let mut versions: Vec<LeafRecord> =
            state.leaves.values().filter(|l| &l.namespace == namespace && &l.lineage == lineage).cloned().collect();
        versions.sort_by(|a, b| (a.version, &a.id).cmp(&(b.version, &b.id)));
        Ok(versions)
    }

    async fn leaves_filed_under(&self, namespace: &Namespace, query: &FiledQuery) -> Result<Vec<LeafRecord>> {
        // No index here: every active leaf of the namespace is read for its entries, which is
        // what the SQL backends' rows hold.
        let wanted: BTreeSet<i64> = query.keys.iter().map(|key| lookup_key_hash(namespace, key)).collect();
        let state = self.lock();
        let mut filed: BTreeMap<i64, Vec<FiledEntry>> = BTreeMap::new();
        for leaf in state.leaves.values().filter(|l| &l.namespace == namespace) {
            let entries = filed_entries(leaf);
            for hash in entries.hashes.into_iter().filter(|h| wanted.contains(h)) {
                let words = signature_from(entries.words);
                filed.entry(hash).or_default().push(FiledEntry {
                    leaf: leaf.id.clone(),
                    observed_at: leaf.observed_at,
                    words,
                });
            }
        }
        let mut found = Vec::new();
        for mut entries in filed.into_values() {
            entries.sort_by(|a, b| (b.observed_at, &b.leaf).cmp(&(a.observed_at, &a.leaf)));
            found.extend(entries.into_iter().take(query.per_key));
        }
        let ranked = query.rank(&found);
        let leaves = ranked.iter().filter_map(|id| state.leaves.get(id).cloned()).collect();
        Ok(FiledQuery::in_rank_order(&ranked, leaves))
    }

    async fn claim_jobs(&self, claim: &JobClaim) -> Result<Vec<Job>> {
        let mut state = self.lock();
        let mut runnable: Vec<&mut JobRow> = state
            .jobs
            .values_mut()
            .filter(|row| !row.dead && row.job.run_after <= claim.now)
            .filter(|row| row.lease.as_ref().is_none_or(|(_, until)| *until <= claim.now))
            .collect();
        runnable.sort_by(|a, b| (a.job.run_after, &a.job.id).cmp(&(b.job.run_after, &b.job.id)));
        Ok(runnable
            .into_iter()
            .take(claim.limit)
            .map(|row| {
                row.lease = Some((claim.worker.clone(), claim.lease_until));
                row.job.clone()
            })
            .collect())
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>> {
        let state = self.lock();
        let mut out: Vec<Namespace> = state.trees.keys().map(|(ns, _)| ns.clone()).collect();
        out.sort_by_key(ToString::to_string);
        out.dedup();
        Ok(out)
    }

    async fn body_intents(&self) -> Result<Vec<BodyIntent>> {
        let state = self.lock();
        let mut intents: Vec<BodyIntent> = state.intents.values().cloned().collect();
        intents.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(intents)
    }

    async fn audit_events(&self, scope: &[Namespace], limit: usize) -> Result<Vec<AuditEvent>> {
        let state = self.lock();
        Ok(state.audit.iter().rev().filter(|e| in_scope(scope, &e.namespace)).take(limit).cloned().collect())
    }

    async fn leaf_neighbours(
        &self,
        filter: &VisibilityFilter,
        anchors: &[LeafPosition],
        each_side: usize,
    ) -> Result<Vec<Neighbours>> {
        let state = self.lock();
        let around = |anchor: &LeafPosition| {
            let mut timeline: Vec<&LeafRecord> = state
                .leaves
                .values()
                .filter(|l| l.namespace == anchor.namespace && l.tree_id == anchor.tree && l.id != anchor.id)
                .filter(|l| filter.admits(&NodeFacts::of_leaf(l)))
                .collect();
            timeline.sort_by(|a, b| (a.observed_at, &a.id).cmp(&(b.observed_at, &b.id)));
            let split = timeline.partition_point(|l| anchor.is_after(l));
            Neighbours {
                before: timeline[..split].iter().rev().take(each_side).map(|l| l.id.clone()).collect(),
                after: timeline[split..].iter().take(each_side).map(|l| l.id.clone()).collect(),
            }
        };
        Ok(anchors.iter().map(around).collect())
    }

    async fn retrieval(&self, scope: &[Namespace], id: &RetrievalId) -> Result<Option<ContextSnapshot>> {
        let state = self.lock();
        Ok(state.retrievals.get(id).filter(|s| in_scope(scope, &s.namespace)).cloned())
    }

    async fn access_records(&self, scope: &[Namespace], node: &NodeId, limit: usize) -> Result<Vec<AccessRecord>> {
        let state = self.lock();
        Ok(state
            .access
            .iter()
            .rev()
            .filter(|a| &a.node == node && in_scope(scope, &a.namespace))
            .take(limit)
            .cloned()
            .collect())
    }

    async fn job_leases(&self) -> Result<Vec<crate::store::JobLease>> {
        let state = self.lock();
        Ok(state
            .jobs
            .values()
            .filter_map(|row| {
                let (worker, until) = row.lease.as_ref()?;
                Some(crate::store::JobLease {
                    id: row.job.id.clone(),
                    kind: row.job.kind,
                    namespace: row.job.namespace.clone(),
                    worker: worker.clone(),
                    until: *until,
                })
            })
            .collect())
    }

    async fn pending_jobs(&self, kind: JobKind, scope: &[Namespace], limit: usize) -> Result<Vec<Job>> {
        let state = self.lock();
        let mut pending: Vec<Job> = state
            .jobs
            .values()
            .filter(|r| !r.dead && r.job.kind == kind && scope.contains(&r.job.namespace))
            .map(|r| r.job.clone())
            .collect();
        pending.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        pending.truncate(limit);
        Ok(pending)
    }

    async fn check_integrity(&self) -> Result<crate::store::IntegrityReport> {
        // Typed values in memory: nothing can fail to decode.
        Ok(crate::store::IntegrityReport::default())
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        let state = self.lock();
        let leaf_has = |l: &LeafRecord| {
            l.title.contains(needle)
                || l.summary.contains(needle)
                || l.subject.as_ref().is_some_and(|s| s.as_str().contains(needle))
                || l.labels.iter().any(|label| label.as_str().contains(needle))
        };
        let summary_has = |s: &SummaryRecord| {
            s.title.contains(needle)
                || s.summary.contains(needle)
                || s.labels.iter().any(|label| label.as_str().contains(needle))
        };
        Ok(state.leaves.values().any(leaf_has)
            || state.summaries.values().any(summary_has)
            || state.entities.values().any(|e| e.name.contains(needle))
            || state.trees.values().any(|t| t.title.contains(needle))
            || state.retrievals.values().any(|r| r.query.contains(needle)))
    }

    async fn counts(&self) -> Result<StoreCounts> {
        let state = self.lock();
        let mut by_status: BTreeMap<LeafStatus, usize> = BTreeMap::new();
        for leaf in state.leaves.values() {
            *by_status.entry(leaf.status).or_default() += 1;
        }
        let summaries = |status| state.summaries.values().filter(|s| s.status == status).count();
        let mut namespaces: Vec<&Namespace> = state.trees.keys().map(|(ns, _)| ns).collect();
        namespaces.dedup();
        Ok(StoreCounts {
            namespaces: namespaces.len(),
            trees: state.trees.len(),
            entities: state.entities.len(),
            leaves_by_status: by_status.into_iter().collect(),
            summaries_current: summaries(SummaryStatus::Current),
            summaries_stale: summaries(SummaryStatus::Stale),
            summaries_purged: summaries(SummaryStatus::Purged),
            summaries_retired: summaries(SummaryStatus::Retired),
            jobs_pending: state.jobs.values().filter(|r| !r.dead).count(),
            jobs_dead: state.jobs.values().filter(|r| r.dead).count(),
            jobs_next_due: state.jobs.values().filter(|r| !r.dead && r.lease.is_none()).map(|r| r.job.run_after).min(),
            audit_events: state.audit.len(),
        })
    }
}
