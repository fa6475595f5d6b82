//! The authoritative metadata store port: what exists, who owns it, and the outbox of work.

use std::fmt;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, JobId, LeafId, NodeId, RetrievalId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{
    ContentHash, Fingerprint, LeafRecord, SubjectKey, SummaryRecord, SummaryStatus, TreeId, TreeRecord,
};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::reconcile::{Filing, LookupKey, WordSignature};
use arbor_domain::seal::FrontierNode;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::VisibilityFilter;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::snapshot::{AccessRecord, ContextSnapshot};

/// The authoritative store of leaves, summaries, trees, entities, jobs and audit events
/// [design §storage: the source of truth for what exists and who owns it].
///
/// # Contract
///
/// - **Atomic commits.** [`commit`](Self::commit) applies a [`ChangeSet`] entirely or not at
///   all. Every precondition is checked inside the same transaction as the writes; a failed
///   one returns [`Error::Conflict`](crate::Error::Conflict) (or `AlreadyExists`) and leaves
///   no trace — no row, no job, no audit event.
/// - **Scoped reads.** Every read that takes a scope returns only records whose namespace is in
///   it, and filters inside the query. A record outside the scope is indistinguishable from a
///   missing one.
/// - **Identity.** Leaf, summary, entity and job ids are unique. An entity slug is unique per
///   namespace. Per (namespace, tree) at most one *live* leaf (active, candidate or rejected)
///   has a given fingerprint: inserting another fails with `AlreadyExists`.
/// - **Compare-and-set.** Updates carry what the caller expects the record to be; a mismatch is
///   a conflict, so two writers never both win.
/// - **Outbox.** Jobs enqueued in a commit become claimable exactly when the commit is visible.
///   An enqueue whose key matches an unclaimed pending job is absorbed by it. A claimed job is
///   not handed out again until its lease expires.
/// - **Forget.** After a leaf is replaced by its tombstone and a summary by its purged record,
///   [`contains_text`](Self::contains_text) finds none of their former words anywhere in the
///   store, including in free pages or logs the backend keeps.
/// - **Visibility pushdown.** [`list_leaves`](Self::list_leaves) returns exactly the leaves
///   [`VisibilityFilter::admits`] admits (checked by the conformance suite on random data).
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait]
pub trait MetadataStore: Send + Sync + fmt::Debug {
    /// A short name for messages: `memory`, `sqlite`, `postgres`.
    fn backend(&self) -> &'static str;

    /// Applies a change set atomically.
    async fn commit(&self, changes: ChangeSet) -> Result<()>;

    /// The leaf `id` if it is in scope: [`leaves`](Self::leaves) of one id, unless a backend
    /// has a cheaper way.
    async fn leaf(&self, scope: &[Namespace], id: &LeafId) -> Result<Option<LeafRecord>> {
        Ok(self.leaves(scope, std::slice::from_ref(id)).await?.pop())
    }

    /// The leaves among `ids` that are in scope; missing ones are left out. Any order.
    async fn leaves(&self, scope: &[Namespace], ids: &[LeafId]) -> Result<Vec<LeafRecord>>;

    /// The summary `id` if it is in scope: [`summaries`](Self::summaries) of one id, unless a
    /// backend has a cheaper way.
    async fn summary(&self, scope: &[Namespace], id: &SummaryId) -> Result<Option<SummaryRecord>> {
        Ok(self.summaries(scope, std::slice::from_ref(id)).await?.pop())
    }

    async fn summaries(&self, scope: &[Namespace], ids: &[SummaryId]) -> Result<Vec<SummaryRecord>>;

    async fn tree(&self, namespace: &Namespace, tree: &TreeId) -> Result<Option<TreeRecord>>;

    /// Every tree in scope, ordered by namespace (as written, e.g. `project:alpha`) then tree id.
    async fn trees(&self, scope: &[Namespace]) -> Result<Vec<TreeRecord>>;

    async fn entity(&self, namespace: &Namespace, id: &EntityId) -> Result<Option<Entity>>;

    /// The entity with this slug in this namespace, if any (slugs are unique per namespace).
    async fn entity_by_slug(&self, namespace: &Namespace, slug: &EntitySlug) -> Result<Option<Entity>>;

    /// Entities of one namespace whose name, an alias, or slug shares a word with `terms`
    /// (words as [`tokenize`](arbor_domain::text::tokenize) makes them), ranked by how many
    /// distinct words they share, then by id; at most `limit`. The shortlist a reasoner picks
    /// from.
    async fn find_entities(&self, namespace: &Namespace, query: &EntityQuery) -> Result<Vec<Entity>>;

    /// Leaves of one tree matching a fingerprint and/or subject, with the given statuses. What
    /// dedup and supersession look at.
    async fn tree_leaves(&self, namespace: &Namespace, tree: &TreeId, query: &TreeLeafQuery)
    -> Result<Vec<LeafRecord>>;

    /// A tree's frontier: member leaves (active, superseded, archived) and sealed summaries
    /// (current or stale) that have no sealed parent yet. Any order.
    async fn frontier(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<FrontierNode>>;

    /// Every summary of one tree, in any status (for `fsck` and export).
    async fn tree_summaries(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>>;

    /// Sealed summaries of one tree that await a replacement (stale or purged).
    async fn summaries_awaiting_reseal(&self, namespace: &Namespace, tree: &TreeId) -> Result<Vec<SummaryRecord>>;

    /// Leaves admitted by `filter`, newest observation first (ties by id, descending).
    async fn list_leaves(&self, filter: &VisibilityFilter, page: Page) -> Result<Vec<LeafRecord>>;

    /// The leaves of `namespace` written after `after` (every one when `None`), in any
    /// status, in the order they were written (`created_at`, then id), at most `limit`: what
    /// changed since a consolidation ran. Backends answer from an index on (namespace,
    /// created_at, id), so the cost follows what changed, not the size of the store.
    async fn leaves_written_after(
        &self,
        namespace: &Namespace,
        after: Option<WriteMark>,
        limit: usize,
    ) -> Result<Vec<LeafRecord>>;

    /// Every version of one memory — the leaves of `namespace` whose lineage is `lineage`, in
    /// any status and any tree — oldest version first. Backends answer from an index on
    /// (namespace, lineage).
    async fn versions(&self, namespace: &Namespace, lineage: &LeafId) -> Result<Vec<LeafRecord>>;

    /// The active leaves of `namespace` filed under `query.keys` (`Claim::filed_under` of their
    /// summaries, [`rows::filed_entries`](crate::rows::filed_entries)): of the `query.per_key`
    /// latest entries under each key (by observation time, ties by id, descending), the
    /// `query.limit` leaves ranked first by [`FiledQuery::rank`] (the most keys, then the most
    /// shared words, then the latest), each once, in that order. What a memory that may
    /// replace others compares itself with.
    ///
    /// # Contract
    /// - A leaf is filed while it is active, under the keys of its current summary: a leaf
    ///   that becomes active (a confirmed candidate, a restored version) is found from that
    ///   commit on, one that stops being active (superseded, rejected, archived, forgotten)
    ///   is not, and never a leaf of another namespace.
    /// - The cost follows `keys × per_key` index entries and `limit` rows, not the size of
    ///   the store: backends answer from an index on (key hash, observation time) that holds
    ///   hashes and signatures, never words.
    async fn leaves_filed_under(&self, namespace: &Namespace, query: &FiledQuery) -> Result<Vec<LeafRecord>>;

    /// Claims up to `claim.limit` runnable jobs (due, and unclaimed or with an expired lease),
    /// oldest first, leasing them to `claim.worker` until `claim.lease_until`.
    async fn claim_jobs(&self, claim: &JobClaim) -> Result<Vec<Job>>;

    /// Every namespace that holds at least one tree, ordered as written.
    async fn namespaces(&self) -> Result<Vec<Namespace>>;

    /// Body intents not yet cleared: body files a writer announced and may have written
    /// without committing the rows that refer to them. Oldest first.
    async fn body_intents(&self) -> Result<Vec<BodyIntent>>;

    /// Audit events in scope, newest first.
    async fn audit_events(&self, scope: &[Namespace], limit: usize) -> Result<Vec<AuditEvent>>;

    /// Whether `needle` occurs in any text the store holds. For verifying forget.
    async fn contains_text(&self, needle: &str) -> Result<bool>;

    /// Row counts, for stats and health.
    async fn counts(&self) -> Result<StoreCounts>;

    /// For each anchor, in order (exactly one answer per anchor), the leaves `filter` admits
    /// that sit next to it in its tree's timeline (same namespace and tree, ordered by
    /// `observed_at`, then id): up to `each_side` before and after it, nearest first, never the
    /// anchor itself. Retrieval's tree-structure channel: the turns around its strongest hits,
    /// asked for all at once so a server backend answers in one round trip.
    async fn leaf_neighbours(
        &self,
        filter: &VisibilityFilter,
        anchors: &[LeafPosition],
        each_side: usize,
    ) -> Result<Vec<Neighbours>>;

    /// A recorded retrieval, if its namespace is in `scope`.
    async fn retrieval(&self, scope: &[Namespace], id: &RetrievalId) -> Result<Option<ContextSnapshot>>;

    /// The latest access records of `node` (newest first), if its namespace is in `scope`.
    async fn access_records(&self, scope: &[Namespace], node: &NodeId, limit: usize) -> Result<Vec<AccessRecord>>;

    /// Every job currently leased (whatever its lease's end), with the worker holding it: so a
    /// runner can give back the leases of workers that are gone, and say who holds the rest.
    async fn job_leases(&self) -> Result<Vec<JobLease>>;

    /// The jobs of `kind` that wait to run (or are running) in the namespaces of `scope`, the
    /// most recently created first (ties by id, descending), at most `limit`; dead jobs are
    /// not pending. Index jobs are what memories written moments ago wait on for their
    /// vectors: retrieval says when there are any, and the comparison by meaning reads the
    /// leaves they name. Backends answer from an index on (kind, namespace) over pending jobs.
    async fn pending_jobs(&self, kind: JobKind, scope: &[Namespace], limit: usize) -> Result<Vec<Job>>;

    /// Checks the stored data itself rather than what it means: the engine's own consistency
    /// check (SQLite's `integrity_check`; nothing for engines that guard their pages
    /// themselves), and every row of every table decoded, each one that does not decode named.
    /// Reads everything: for `fsck`, not for every command.
    async fn check_integrity(&self) -> Result<IntegrityReport>;
}

/// A job's lease: which worker claimed it and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobLease {
    pub id: JobId,
    pub kind: JobKind,
    pub namespace: Namespace,
    /// The worker holding it: `<host>/<pid>` for the `arbor` binary.
    pub worker: String,
    pub until: Timestamp,
}

/// What [`MetadataStore::check_integrity`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IntegrityReport {
    /// The engine's own complaints, as it words them; empty when it found nothing.
    pub engine: Vec<String>,
    /// Rows that exist but do not decode.
    pub damaged_rows: Vec<DamagedRow>,
}

impl IntegrityReport {
    pub fn is_clean(&self) -> bool {
        self.engine.is_empty() && self.damaged_rows.is_empty()
    }
}

/// One stored row that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DamagedRow {
    /// The table (or collection) it is in: `leaves`, `summaries`, `trees`, …
    pub table: String,
    /// Its key as stored (an id, or `namespace/tree`), or its position when even that is
    /// unreadable.
    pub key: String,
    pub detail: String,
}

/// Where a leaf sits in its tree's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafPosition {
    pub namespace: Namespace,
    pub tree: TreeId,
    pub observed_at: Timestamp,
    pub id: LeafId,
}

impl LeafPosition {
    pub fn of(leaf: &LeafRecord) -> LeafPosition {
        LeafPosition {
            namespace: leaf.namespace.clone(),
            tree: leaf.tree_id.clone(),
            observed_at: leaf.observed_at,
            id: leaf.id.clone(),
        }
    }

    /// Whether `leaf` comes before this position in the timeline.
    pub fn is_after(&self, leaf: &LeafRecord) -> bool {
        (leaf.observed_at, &leaf.id) < (self.observed_at, &self.id)
    }
}

/// A leaf's neighbours in its tree, nearest first on each side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    pub before: Vec<LeafId>,
    pub after: Vec<LeafId>,
}

/// What [`MetadataStore::leaves_filed_under`] looks up: `Claim::looked_up_by`'s keys and
/// signature, how many entries under each key are read, and how many leaves are returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiledQuery {
    pub keys: Vec<LookupKey>,
    pub words: WordSignature,
    pub per_key: usize,
    pub limit: usize,
}

/// One entry a lookup read: a leaf found under one of the keys, with what it was stored with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiledEntry {
    pub leaf: LeafId,
    pub observed_at: Timestamp,
    pub words: WordSignature,
}

impl FiledQuery {
    /// The query `Claim::looked_up_by` makes for `lookup`.
    pub fn new(lookup: Filing, per_key: usize, limit: usize) -> FiledQuery {
        FiledQuery { keys: lookup.keys.into_iter().collect(), words: lookup.words, per_key, limit }
    }

    /// The leaves to return, from the entries the keys found: those found under the most keys
    /// first, then those sharing the most of the query's words, then the latest, then by id
    /// (descending), each once, at most `limit`. Every backend orders by this, once.
    pub fn rank(&self, found: &[FiledEntry]) -> Vec<LeafId> {
        let mut hits: std::collections::BTreeMap<&LeafId, (usize, &FiledEntry)> = std::collections::BTreeMap::new();
        for entry in found {
            hits.entry(&entry.leaf).or_insert((0, entry)).0 += 1;
        }
        let score = |(keys, entry): &(usize, &FiledEntry)| (*keys, self.words.shared(entry.words), entry.observed_at);
        let mut ranked: Vec<(&LeafId, (usize, &FiledEntry))> = hits.into_iter().collect();
        ranked.sort_by(|(a, found_a), (b, found_b)| score(found_b).cmp(&score(found_a)).then_with(|| b.cmp(a)));
        ranked.into_iter().take(self.limit).map(|(leaf, _)| leaf.clone()).collect()
    }

    /// The leaves read for `ranked` ([`FiledQuery::rank`]), in its order, those whose status is
    /// not filed (an entry left behind) dropped: a stale entry can hide a leaf, never show one.
    pub fn in_rank_order(ranked: &[LeafId], leaves: Vec<LeafRecord>) -> Vec<LeafRecord> {
        let mut by_id: std::collections::BTreeMap<LeafId, LeafRecord> =
            leaves.into_iter().filter(|l| l.status.is_filed()).map(|l| (l.id.clone(), l)).collect();
        ranked.iter().filter_map(|id| by_id.remove(id)).collect()
    }
}

/// What to match entities against.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntityQuery {
    pub terms: Vec<String>,
    pub limit: usize,
}

impl EntityQuery {
    /// The distinct words the query matches on, sorted (as `tokenize` makes them).
    pub fn words(&self) -> Vec<String> {
        let mut words: Vec<String> = self.terms.iter().flat_map(|t| arbor_domain::text::tokenize(t)).collect();
        words.sort();
        words.dedup();
        words
    }
}

/// Which leaves of a tree to return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeLeafQuery {
    pub fingerprint: Option<Fingerprint>,
    pub subject: Option<SubjectKey>,
    /// Empty means every status.
    pub statuses: Vec<LeafStatus>,
}

/// A position in the order leaves were written: their `created_at`, then their id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WriteMark {
    pub at: Timestamp,
    pub id: LeafId,
}

impl WriteMark {
    pub fn of(leaf: &LeafRecord) -> WriteMark {
        WriteMark { at: leaf.created_at, id: leaf.id.clone() }
    }
}

/// A page of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Page {
    pub fn first(limit: usize) -> Page {
        Page { offset: 0, limit }
    }
}

/// What the caller expects a leaf to look like before an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafExpect {
    pub status: LeafStatus,
    /// `Some(p)`: the parent link must currently be `p`. `None`: not checked.
    pub parent: Option<Option<SummaryId>>,
}

impl LeafExpect {
    pub fn status(status: LeafStatus) -> LeafExpect {
        LeafExpect { status, parent: None }
    }

    /// The compare-and-set of [`Change::UpdateLeaf`], against the stored row's status and
    /// parent as the backend holds them (their `as_str` forms): every store refuses the same
    /// way, with the same [`Error::Conflict`](crate::Error::Conflict).
    pub fn check(&self, id: &LeafId, status: &str, parent: Option<&str>) -> Result<()> {
        check_row("leaf", id.as_str(), (self.status.as_str(), &self.parent), (status, parent))
    }
}

/// What the caller expects a summary to look like before an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryExpect {
    pub status: SummaryStatus,
    pub parent: Option<Option<SummaryId>>,
}

impl SummaryExpect {
    /// The compare-and-set of [`Change::UpdateSummary`]; see [`LeafExpect::check`].
    pub fn check(&self, id: &SummaryId, status: &str, parent: Option<&str>) -> Result<()> {
        check_row("summary", id.as_str(), (self.status.as_str(), &self.parent), (status, parent))
    }
}

/// The compare-and-set of [`Change::SetRoot`]: the tree's root must be `expected` (`None`: no
/// root yet).
pub fn check_root(tree: &TreeId, expected: Option<&SummaryId>, current: Option<&str>) -> Result<()> {
    let expected = expected.map(SummaryId::as_str);
    if expected == current {
        return Ok(());
    }
    Err(crate::Error::conflict("tree root", tree, expected.unwrap_or("none"), current.unwrap_or("none")))
}

fn check_row(
    what: &'static str,
    id: &str,
    (expected_status, expected_parent): (&str, &Option<Option<SummaryId>>),
    (status, parent): (&str, Option<&str>),
) -> Result<()> {
    if status != expected_status {
        return Err(crate::Error::conflict(what, id, expected_status, status));
    }
    if let Some(expected) = expected_parent
        && expected.as_ref().map(SummaryId::as_str) != parent
    {
        let show = |parent: Option<&str>| parent.map_or_else(|| "no parent".to_owned(), |p| format!("parent {p}"));
        return Err(crate::Error::conflict(what, id, show(expected.as_ref().map(SummaryId::as_str)), show(parent)));
    }
    Ok(())
}

/// One change inside a [`ChangeSet`].
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Insert an entity. `AlreadyExists` if its id, or its slug in its namespace, is taken.
    InsertEntity(Entity),
    /// Create a tree unless one with this (namespace, tree id) exists; never overwrites. The
    /// tree is held until the commit (a server backend locks its row), so it cannot be
    /// dissolved under a write filing leaves in it.
    EnsureTree(TreeRecord),
    /// Insert a leaf. `AlreadyExists` if the id is taken, or a live leaf of the same tree has
    /// the same fingerprint.
    InsertLeaf(LeafRecord),
    /// Replace a leaf's row, if it currently matches `expect`. The id, namespace and tree may
    /// not change. Making a leaf live again (e.g. reconsidering a rejection) fails with
    /// `AlreadyExists` if another live leaf of the tree has its fingerprint.
    UpdateLeaf {
        expect: LeafExpect,
        record: LeafRecord,
    },
    InsertSummary(SummaryRecord),
    UpdateSummary {
        expect: SummaryExpect,
        record: SummaryRecord,
    },
    /// Swap a tree's root pointer if it is currently `expect`, and set its staleness.
    SetRoot {
        namespace: Namespace,
        tree: TreeId,
        expect: Option<SummaryId>,
        root: Option<SummaryId>,
        stale: bool,
    },
    /// Mark a tree's root as needing a refresh (no-op if already marked).
    MarkRootStale {
        namespace: Namespace,
        tree: TreeId,
    },
    Enqueue(Job),
    /// Remove a finished job. No-op if it is already gone.
    CompleteJob {
        id: JobId,
    },
    /// Record a failure: retry at `retry_at`, or give up (`None`) and keep it as dead.
    FailJob {
        id: JobId,
        error: String,
        retry_at: Option<Timestamp>,
    },
    Audit(AuditEvent),
    /// Keep the record of a retrieval and the access records it implies
    /// ([`ContextSnapshot::access_records`]). `AlreadyExists` if its id is taken.
    RecordRetrieval(Box<ContextSnapshot>),
    /// Delete every recorded retrieval that read `node` (an access record names it) and all
    /// of their access records: forgetting a leaf takes the questions that found it along,
    /// since they may quote it. No-op if there are none.
    DropRetrievalsOf {
        node: NodeId,
    },
    /// Announce body files about to be written (committed on its own, before the writes).
    AddBodyIntent(BodyIntent),
    /// The announced bodies are now referenced by committed rows, or were removed.
    ClearBodyIntent {
        id: JobId,
    },
    /// Delete a tree nothing is left in, after its last memory was forgotten: the tree row,
    /// its leaves (every one a tombstone), its summaries (every one purged or retired) and its
    /// pending seal jobs, so no row keeps its id or title (which name what it was about).
    /// `Conflict` if a leaf of it is not a tombstone, a summary of it is still readable, or a
    /// purge job of it is still pending (its bodies would outlive the rows that name them).
    /// A no-op if the tree does not exist.
    DissolveTree {
        namespace: Namespace,
        tree: TreeId,
    },
    /// `Conflict` unless the entity exists, and (on a server backend) keep it from being
    /// deleted until the commit: a write that files leaves under an entity it matched expects
    /// it still to be there, since forgetting its last memory may have deleted it meanwhile.
    ExpectEntity {
        namespace: Namespace,
        id: EntityId,
    },
    /// Delete an entity and the words it is known by, unless something still refers to it: a
    /// tree of its namespace naming it, or a leaf that is not a tombstone linking it (as its
    /// primary or a secondary entity). Then, and when it does not exist, a no-op.
    DeleteEntityIfUnused {
        namespace: Namespace,
        id: EntityId,
    },
    /// Give back a job's lease if `worker` still holds it (a no-op otherwise): for the leases
    /// of workers known to be gone, so their jobs run now rather than when the lease ends.
    ReleaseLease {
        id: JobId,
        worker: String,
    },
    /// Put a claimed job back to run at `retry_at`, lease cleared and attempts unchanged: for a
    /// job that lost a race with another writer (a conflict), which is not a failure of the job.
    /// A no-op if the job is gone.
    DeferJob {
        id: JobId,
        retry_at: Timestamp,
    },
}

/// Body files a writer is about to write. If it dies before the rows referring to them are
/// committed, recovery deletes the files; so a crash never leaves an unreferenced body behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BodyIntent {
    pub id: JobId,
    /// Who is writing: `<host>/<pid>`, so recovery can tell a dead writer from a live one.
    pub owner: String,
    pub created_at: Timestamp,
    pub paths: Vec<BodyPath>,
}

/// Changes applied atomically by [`MetadataStore::commit`], in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangeSet {
    pub changes: Vec<Change>,
}

impl ChangeSet {
    pub fn new() -> ChangeSet {
        ChangeSet::default()
    }

    pub fn push(&mut self, change: Change) -> &mut ChangeSet {
        self.changes.push(change);
        self
    }

    #[must_use]
    pub fn with(mut self, change: Change) -> ChangeSet {
        self.changes.push(change);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn len(&self) -> usize {
        self.changes.len()
    }
}

/// Kinds of background work, driven by the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Re-seal stale and purged summaries, seal full buffers and refresh the root of one tree.
    Seal,
    /// Bring one node's search-index projection in line with its row: embed and upsert it, or
    /// remove it when it no longer has readable content.
    Index,
    /// Delete the body file of a forgotten leaf or a purged or retired summary.
    Purge,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Seal => "seal",
            JobKind::Index => "index",
            JobKind::Purge => "purge",
        }
    }
}

/// A unit of background work. Jobs are idempotent: running one twice is harmless.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub id: JobId,
    pub kind: JobKind,
    pub namespace: Namespace,
    pub tree: Option<TreeId>,
    /// The nodes an index or purge job works on (one job may cover a whole ingest batch).
    pub nodes: Vec<NodeId>,
    /// Coalescing key: an enqueue with the key of an unclaimed pending job is absorbed.
    pub key: String,
    pub attempts: u32,
    pub run_after: Timestamp,
    pub created_at: Timestamp,
    pub last_error: Option<String>,
}

/// A request to lease runnable jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobClaim {
    pub worker: String,
    pub now: Timestamp,
    pub lease_until: Timestamp,
    pub limit: usize,
}

/// One state change, for the append-only audit log. Holds ids and hashes, never content
/// [design §audit].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    pub at: Timestamp,
    /// e.g. `leaf.created`, `leaf.superseded`, `leaf.forgotten`, `summary.sealed`.
    pub action: String,
    pub namespace: Namespace,
    pub node: Option<NodeId>,
    pub content_sha256: Option<ContentHash>,
    /// Who did it: `ingest`, `jobs`, `cli`, a user or operator name.
    pub actor: String,
    pub policy_version: String,
}

/// How many rows of each kind a store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreCounts {
    pub namespaces: usize,
    pub trees: usize,
    pub entities: usize,
    pub leaves_by_status: Vec<(LeafStatus, usize)>,
    pub summaries_current: usize,
    pub summaries_stale: usize,
    pub summaries_purged: usize,
    pub summaries_retired: usize,
    pub jobs_pending: usize,
    pub jobs_dead: usize,
    /// When the soonest pending job that nobody holds comes due (a job put back after a lost
    /// race, or waiting out a retry), if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_next_due: Option<Timestamp>,
    pub audit_events: usize,
}
