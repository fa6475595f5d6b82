//! Fault-injecting port wrappers, for tests of what the app does when the world fails under
//! it (and [`MaskedIndex`], for an index that lacks a capability): [`FailingStore`],
//! [`FailingIndex`] and [`FailingBodies`] wrap any adapter and, on the
//! call a shared [`FaultPlan`] names, fail it — before it takes effect, after it took effect
//! (a commit whose acknowledgement was lost), or by "crashing": that call and every later one
//! fails, as if the process died there, until the plan is told the process came back.
//!
//! Calls are counted across all the wrappers that share a plan, so "the 7th call" is a point in
//! the app's sequence of effects whatever port it falls on. A test arms a fault, runs an
//! operation, then recovers the way a restarted process would (a new engine over the same
//! inner adapters) and checks that nothing acknowledged was lost and nothing half-done shows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::model::{ContentHash, LeafRecord, SummaryRecord, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::seal::FrontierNode;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use async_trait::async_trait;

use crate::bodies::BodyStore;
use crate::error::{Error, Result};
use crate::index::{Hit, IndexCapabilities, IndexDoc, SearchIndex, TextQuery, VectorQuery};
use crate::snapshot::{AccessRecord, ContextSnapshot};
use crate::store::{
    AuditEvent, BodyIntent, ChangeSet, EntityQuery, FiledQuery, IntegrityReport, Job, JobClaim, JobKind, JobLease,
    LeafPosition, MetadataStore, Neighbours, Page, StoreCounts, TreeLeafQuery, WriteMark,
};

/// How an armed fault fails its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// The call fails with a transient error and has no effect.
    Fail,
    /// The call takes effect, then reports a transient error: a write whose success never
    /// reached the caller.
    FailAfter,
    /// The process dies at the call: it and every later call fail without effect, until
    /// [`FaultPlan::restart`].
    Crash,
}

/// Which call fails, shared by every wrapper of one simulated process.
#[derive(Debug, Default)]
pub struct FaultPlan {
    calls: AtomicU64,
    state: Mutex<PlanState>,
}

#[derive(Debug, Default)]
struct PlanState {
    armed: Option<(u64, FaultMode)>,
    crashed: bool,
    injected: u64,
    /// What the last fault hit, for messages: `store.commit`, `bodies.put_many`, …
    last: Option<&'static str>,
}

/// What a wrapper does with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Proceed,
    FailBefore,
    FailAfter,
}

impl FaultPlan {
    pub fn new() -> Arc<FaultPlan> {
        Arc::new(FaultPlan::default())
    }

    /// Arms one fault: the `nth` call from now (1 = the next one) fails as `mode`.
    pub fn arm(&self, nth: u64, mode: FaultMode) {
        let at = self.calls.load(Ordering::SeqCst) + nth.max(1);
        self.lock().armed = Some((at, mode));
    }

    /// Disarms a fault that has not fired.
    pub fn disarm(&self) {
        self.lock().armed = None;
    }

    /// The process came back: calls succeed again (a new engine should be built over the same
    /// inner adapters, as a restarted process would).
    pub fn restart(&self) {
        let mut state = self.lock();
        state.crashed = false;
        state.armed = None;
    }

    /// Whether a crash fired and the process has not come back.
    pub fn crashed(&self) -> bool {
        self.lock().crashed
    }

    /// How many faults fired so far.
    pub fn injected(&self) -> u64 {
        self.lock().injected
    }

    /// The call the last fault hit.
    pub fn last_fault(&self) -> Option<&'static str> {
        self.lock().last
    }

    /// How many calls went through the wrappers so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PlanState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn decide(&self, call: &'static str) -> Decision {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut state = self.lock();
        if state.crashed {
            return Decision::FailBefore;
        }
        match state.armed {
            Some((at, mode)) if at == number => {
                state.armed = None;
                state.injected += 1;
                state.last = Some(call);
                match mode {
                    FaultMode::Fail => Decision::FailBefore,
                    FaultMode::FailAfter => Decision::FailAfter,
                    FaultMode::Crash => {
                        state.crashed = true;
                        Decision::FailBefore
                    }
                }
            }
            _ => Decision::Proceed,
        }
    }
}

/// The error an injected fault returns: transient, as a lost connection or a full disk is.
pub fn injected_error(call: &str) -> Error {
    Error::Unavailable { backend: "fault", source: format!("fault injected at {call}").into() }
}

/// Whether `error` came from an injected fault.
pub fn is_injected(error: &dyn std::fmt::Display) -> bool {
    error.to_string().contains("fault backend") || error.to_string().contains("fault injected")
}

/// Runs one wrapped call under the plan.
async fn guarded<T>(
    plan: &FaultPlan,
    call: &'static str,
    effect: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match plan.decide(call) {
        Decision::Proceed => effect.await,
        Decision::FailBefore => Err(injected_error(call)),
        Decision::FailAfter => {
            effect.await?;
            Err(injected_error(call))
        }
    }
}

/// A [`MetadataStore`] whose calls fail as its [`FaultPlan`] says.
#[derive(Debug)]
pub struct FailingStore {
    inner: Arc<dyn MetadataStore>,
    plan: Arc<FaultPlan>,
}

impl FailingStore {
    pub fn new(inner: Arc<dyn MetadataStore>, plan: Arc<FaultPlan>) -> FailingStore {
        FailingStore { inner, plan }
    }
}

#[async_trait]
impl MetadataStore for FailingStore {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn commit(&self, changes: ChangeSet) -> Result<()> {
        guarded(&self.plan, "store.commit", self.inner.commit(changes)).await
    }
    async fn leaf(&self, scope: &[Namespace], id: &LeafId) -> Result<Option<LeafRecord>> {
        guarded(&self.plan, "store.leaf", self.inner.leaf(scope, id)).await
    }
    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.leaves", self.inner.leaves(scope, ids)).await
    }
    async fn summary(&self, scope: &[Namespace], id: &SummaryId) -> Result<Option<SummaryRecord>> {
        guarded(&self.plan, "store.summary", self.inner.summary(scope, id)).await
    }
    async fn summaries(&self, scope: &[Namespace], ids: &[SummaryId]) -> Result<Vec<SummaryRecord>> {
        guarded(&self.plan, "store.summaries", self.inner.summaries(scope, ids)).await
    }
    async fn tree(&self, namespace: &Namespace, tree: &TreeId) -> Result<Option<TreeRecord>> {
        guarded(&self.plan, "store.tree", self.inner.tree(namespace, tree)).await
    }
    async fn trees(&self, scope: &[Namespace]) -> Result<Vec<TreeRecord>> {
        guarded(&self.plan, "store.trees", self.inner.trees(scope)).await
    }
    async fn entity(&self, namespace: &Namespace, id: &EntityId) -> Result<Option<Entity>> {
        guarded(&self.plan, "store.entity", self.inner.entity(namespace, id)).await
    }
    async fn entity_by_slug(&self, namespace: &Namespace, slug: &EntitySlug) -> Result<Option<Entity>> {
        guarded(&self.plan, "store.entity_by_slug", self.inner.entity_by_slug(namespace, slug)).await
    }
    async fn find_entities(&self, namespace: &Namespace, query: &EntityQuery) -> Result<Vec<Entity>> {
        guarded(&self.plan, "store.find_entities", self.inner.find_entities(namespace, query)).await
    }
    async fn tree_leaves(
        &self,
        namespace: &Namespace,
        tree: &TreeId,
        query: &TreeLeafQuery,
    ) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.tree_leaves", self.inner.tree_leaves(namespace, tree, query)).await
    }
    async fn frontier(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<FrontierNode>> {
        guarded(&self.plan, "store.frontier", self.inner.frontier(namespace, tree)).await
    }
    async fn tree_summaries(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        guarded(&self.plan, "store.tree_summaries", self.inner.tree_summaries(namespace, tree)).await
    }
    async fn summaries_awaiting_reseal(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>> {
        guarded(&self.plan, "store.summaries_awaiting_reseal", self.inner.summaries_awaiting_reseal(namespace, tree))
            .await
    }
    async fn list_leaves(&self, filter: &VisibilityFilter, page: Page) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.list_leaves", self.inner.list_leaves(filter, page)).await
    }
    async fn leaves_written_after(
        &self,
        namespace: &Namespace,
        after: Option<WriteMark>,
        limit: usize,
    ) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.leaves_written_after", self.inner.leaves_written_after(namespace, after, limit))
            .await
    }
    async fn versions(&self, namespace: &Namespace, lineage: &LeafId) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.versions", self.inner.versions(namespace, lineage)).await
    }
    async fn leaves_filed_under(&self, namespace: &Namespace, query: &FiledQuery) -> Result<Vec<LeafRecord>> {
        guarded(&self.plan, "store.leaves_filed_under", self.inner.leaves_filed_under(namespace, query)).await
    }
    async fn claim_jobs(&self, claim: &JobClaim) -> Result<Vec<Job>> {
        guarded(&self.plan, "store.claim_jobs", self.inner.claim_jobs(claim)).await
    }
    async fn namespaces(&self) -> Result<Vec<Namespace>> {
        guarded(&self.plan, "store.namespaces", self.inner.namespaces()).await
    }
    async fn body_intents(&self) -> Result<Vec<BodyIntent>> {
        guarded(&self.plan, "store.body_intents", self.inner.body_intents()).await
    }
    async fn audit_events(&self, scope: &[Namespace], limit: usize) -> Result<Vec<AuditEvent>> {
        guarded(&self.plan, "store.audit_events", self.inner.audit_events(scope, limit)).await
    }
    async fn contains_text(&self, needle: &str) -> Result<bool> {
        // What tests use to look, not what the app does: never failed.
        self.inner.contains_text(needle).await
    }
    async fn counts(&self) -> Result<StoreCounts> {
        guarded(&self.plan, "store.counts", self.inner.counts()).await
    }
    async fn leaf_neighbours(
        &self,
        filter: &VisibilityFilter,
        anchors: &[LeafPosition],
        each_side: usize,
    ) -> Result<Vec<Neighbours>> {
        guarded(&self.plan, "store.leaf_neighbours", self.inner.leaf_neighbours(filter, anchors, each_side)).await
    }
    async fn retrieval(&self, scope: &[Namespace], id: &RetrievalId) -> Result<Option<ContextSnapshot>> {
        guarded(&self.plan, "store.retrieval", self.inner.retrieval(scope, id)).await
    }
    async fn access_records(&self, scope: &[Namespace], node: &NodeId, limit: usize) -> Result<Vec<AccessRecord>> {
        guarded(&self.plan, "store.access_records", self.inner.access_records(scope, node, limit)).await
    }
    async fn job_leases(&self) -> Result<Vec<JobLease>> {
        guarded(&self.plan, "store.job_leases", self.inner.job_leases()).await
    }
    async fn pending_jobs(&self, kind: JobKind, scope: &[Namespace], limit: usize) -> Result<Vec<Job>> {
        guarded(&self.plan, "store.pending_jobs", self.inner.pending_jobs(kind, scope, limit)).await
    }
    async fn check_integrity(&self) -> Result<IntegrityReport> {
        guarded(&self.plan, "store.check_integrity", self.inner.check_integrity()).await
    }
}

/// A [`SearchIndex`] whose calls fail as its [`FaultPlan`] says.
#[derive(Debug)]
pub struct FailingIndex {
    inner: Arc<dyn SearchIndex>,
    plan: Arc<FaultPlan>,
}

impl FailingIndex {
    pub fn new(inner: Arc<dyn SearchIndex>, plan: Arc<FaultPlan>) -> FailingIndex {
        FailingIndex { inner, plan }
    }
}

#[async_trait]
impl SearchIndex for FailingIndex {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn capabilities(&self) -> IndexCapabilities {
        self.inner.capabilities()
    }
    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        guarded(&self.plan, "index.upsert", self.inner.upsert(docs)).await
    }
    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        guarded(&self.plan, "index.insert_missing", self.inner.insert_missing(docs)).await
    }
    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        guarded(&self.plan, "index.set_facts", self.inner.set_facts(updates)).await
    }
    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        guarded(&self.plan, "index.remove", self.inner.remove(ids)).await
    }
    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        guarded(&self.plan, "index.search_text", self.inner.search_text(query)).await
    }
    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        guarded(&self.plan, "index.search_vector", self.inner.search_vector(query)).await
    }
    async fn contains_text(&self, needle: &str) -> Result<bool> {
        self.inner.contains_text(needle).await
    }
    async fn count(&self) -> Result<usize> {
        guarded(&self.plan, "index.count", self.inner.count()).await
    }
    async fn clear(&self) -> Result<()> {
        guarded(&self.plan, "index.clear", self.inner.clear()).await
    }
    async fn optimize(&self) -> Result<()> {
        guarded(&self.plan, "index.optimize", self.inner.optimize()).await
    }
}

/// A [`SearchIndex`] that reports fewer capabilities than the index it wraps has, and refuses
/// the searches it says it cannot do: so a test runs the app's branches for an index without
/// full text or without vectors, and any search the app should have skipped fails loudly.
#[derive(Debug)]
pub struct MaskedIndex {
    inner: Arc<dyn SearchIndex>,
    capabilities: IndexCapabilities,
}

impl MaskedIndex {
    pub fn new(inner: Arc<dyn SearchIndex>, capabilities: IndexCapabilities) -> MaskedIndex {
        MaskedIndex { inner, capabilities }
    }

    fn refused(search: &str) -> Error {
        Error::Unavailable { backend: "masked", source: format!("{search} was called on an index without it").into() }
    }
}

#[async_trait]
impl SearchIndex for MaskedIndex {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn capabilities(&self) -> IndexCapabilities {
        self.capabilities
    }
    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.inner.upsert(docs).await
    }
    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        self.inner.insert_missing(docs).await
    }
    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        self.inner.set_facts(updates).await
    }
    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        self.inner.remove(ids).await
    }
    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        if !self.capabilities.full_text {
            return Err(MaskedIndex::refused("full-text search"));
        }
        self.inner.search_text(query).await
    }
    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        if !self.capabilities.vectors {
            return Err(MaskedIndex::refused("vector search"));
        }
        self.inner.search_vector(query).await
    }
    async fn contains_text(&self, needle: &str) -> Result<bool> {
        self.inner.contains_text(needle).await
    }
    async fn count(&self) -> Result<usize> {
        self.inner.count().await
    }
    async fn clear(&self) -> Result<()> {
        self.inner.clear().await
    }
    async fn optimize(&self) -> Result<()> {
        self.inner.optimize().await
    }
}

/// A [`BodyStore`] whose calls fail as its [`FaultPlan`] says. A batch write that "crashes"
/// part-way writes some of its documents, as a process killed between two files would.
#[derive(Debug)]
pub struct FailingBodies {
    inner: Arc<dyn BodyStore>,
    plan: Arc<FaultPlan>,
    /// Documents written by interrupted batches, for tests that look for leftovers.
    partial_writes: AtomicU64,
}

impl FailingBodies {
    pub fn new(inner: Arc<dyn BodyStore>, plan: Arc<FaultPlan>) -> FailingBodies {
        FailingBodies { inner, plan, partial_writes: AtomicU64::new(0) }
    }

    /// A batch write `operation` as the plan decides: done, dying half-way (the first half of
    /// the documents on disk), or done and then reported failed.
    async fn batch<'a, F>(
        &'a self,
        operation: &'static str,
        documents: &'a [(BodyPath, Vec<u8>)],
        write: impl Fn(&'a [(BodyPath, Vec<u8>)]) -> F,
    ) -> Result<Vec<ContentHash>>
    where
        F: std::future::Future<Output = Result<Vec<ContentHash>>>,
    {
        match self.plan.decide(operation) {
            Decision::Proceed => write(documents).await,
            Decision::FailBefore => {
                let half = documents.len() / 2;
                if half > 0 && write(&documents[..half]).await.is_ok() {
                    self.partial_writes.fetch_add(half as u64, Ordering::SeqCst);
                }
                Err(injected_error(operation))
            }
            Decision::FailAfter => {
                write(documents).await?;
                Err(injected_error(operation))
            }
        }
    }

    /// How many documents interrupted batches wrote before they failed.
    pub fn partial_writes(&self) -> u64 {
        self.partial_writes.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl BodyStore for FailingBodies {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn put(&self, path: &BodyPath, contents: &[u8]) -> Result<ContentHash> {
        guarded(&self.plan, "bodies.put", self.inner.put(path, contents)).await
    }
    async fn put_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        self.batch("bodies.put_many", documents, |docs| self.inner.put_many(docs)).await
    }
    async fn create_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        self.batch("bodies.create_many", documents, |docs| self.inner.create_many(docs)).await
    }
    async fn get(&self, path: &BodyPath, expected: &ContentHash) -> Result<Vec<u8>> {
        guarded(&self.plan, "bodies.get", self.inner.get(path, expected)).await
    }
    async fn delete(&self, path: &BodyPath) -> Result<bool> {
        guarded(&self.plan, "bodies.delete", self.inner.delete(path)).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<BodyPath>> {
        guarded(&self.plan, "bodies.list", self.inner.list(prefix)).await
    }
    async fn read_unverified(&self, path: &BodyPath) -> Result<Vec<u8>> {
        guarded(&self.plan, "bodies.read_unverified", self.inner.read_unverified(path)).await
    }
    async fn size(&self, path: &BodyPath) -> Result<u64> {
        guarded(&self.plan, "bodies.size", self.inner.size(path)).await
    }
    async fn prune_empty(&self, prefix: &str) -> Result<()> {
        guarded(&self.plan, "bodies.prune_empty", self.inner.prune_empty(prefix)).await
    }
    async fn contains_text(&self, needle: &str) -> Result<bool> {
        self.inner.contains_text(needle).await
    }
    async fn interrupted_writes(&self) -> Result<Vec<crate::bodies::InterruptedWrite>> {
        guarded(&self.plan, "bodies.interrupted_writes", self.inner.interrupted_writes()).await
    }
    async fn remove_interrupted_write(&self, location: &str) -> Result<bool> {
        guarded(&self.plan, "bodies.remove_interrupted_write", self.inner.remove_interrupted_write(location)).await
    }
    async fn remove_interrupted_writes_of(&self, path: &BodyPath, writer_pid: u32) -> Result<usize> {
        guarded(
            &self.plan,
            "bodies.remove_interrupted_writes_of",
            self.inner.remove_interrupted_writes_of(path, writer_pid),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::InMemoryMetadataStore;

    #[tokio::test]
    async fn the_nth_call_fails_as_armed_and_a_crash_lasts_until_restart() {
        let plan = FaultPlan::new();
        let store = FailingStore::new(Arc::new(InMemoryMetadataStore::new()), plan.clone());
        plan.arm(2, FaultMode::Fail);
        assert!(store.namespaces().await.is_ok());
        assert!(is_injected(&store.namespaces().await.unwrap_err()));
        assert!(store.namespaces().await.is_ok(), "one call only");
        plan.arm(1, FaultMode::Crash);
        for _ in 0..3 {
            assert!(store.namespaces().await.is_err());
        }
        assert!(plan.crashed());
        plan.restart();
        assert!(store.namespaces().await.is_ok());
        assert_eq!(plan.injected(), 2);
        assert_eq!(plan.last_fault(), Some("store.namespaces"));
    }
}
