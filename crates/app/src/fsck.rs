//! `fsck`: checks that the stored data is sound and that rows, bodies and the index agree, and
//! repairs what can be repaired without guessing. One damaged row or tree is reported and the
//! check goes on past it.
//!
//! - the store's own check (SQLite's `integrity_check`) and every row decoded;
//! - every leaf with content and every readable summary has its body, byte for byte (a
//!   mismatch is a hand edit or damage, reported, never silently accepted);
//! - forgotten leaves and purged or retired summaries have no body left;
//! - no body file exists that no row refers to, and no body intent is pending;
//! - parent links point at summaries of the same tree that list the child; each root pointer
//!   names a current root;
//! - the index holds as many documents as the store has readable nodes, no job is dead, and no
//!   job is leased by a worker that is gone.
//!
//! Repairs delete only what is provably garbage: the body of a forgotten leaf or a purged
//! summary, a summary body of a tree that was sealed anew without it, the bodies of a writer
//! that died before committing. A leaf's body that no row refers to is a memory the database
//! lost, and is kept: `arbor fsck --rebuild-from-bodies` restores its row. A file that is not an
//! Arbor body is left alone. Every finding that is not repaired says what would repair it.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::id::{NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{ContentHash, SummaryRecord, SummaryRole, SummaryStatus, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_ports::{BodyIntent, Change, ChangeSet, Error, JobKind, StoreCounts};
use serde::Serialize;

use crate::{AppResult, Arbor, ProcessState};

/// What `fsck` found wrong, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The database failed its engine's own consistency check.
    DamagedDatabase,
    /// A stored row does not decode.
    DamagedRow,
    /// A tree whose rows could not be read (see the damaged rows).
    UnreadableTree,
    /// A body a row refers to is missing.
    MissingBody,
    /// A body's bytes no longer match the hash on its row: edited by hand, or damaged.
    EditedBody,
    /// A forgotten leaf or retired summary still has a body on disk.
    LeftoverBody,
    /// A body no row refers to, which is provably garbage (its memory was forgotten, or its
    /// tree was sealed anew without it).
    OrphanBody,
    /// A leaf's body no row refers to: a memory the database lost, which
    /// `--rebuild-from-bodies` restores.
    RecoverableBody,
    /// A file under `memory/` that is not an Arbor body document.
    ForeignFile,
    /// A write announced bodies and never committed them.
    PendingIntent,
    /// A parent link that does not match its parent's children.
    BrokenParent,
    /// A tree's root pointer does not name a current root.
    BrokenRoot,
    /// The index holds a different number of documents than the store has readable nodes.
    IndexDrift,
    /// A job failed too often and was set aside.
    DeadJob,
    /// A job leased by a worker that is gone (killed mid-job).
    StaleLease,
    /// A copy of a body that a write interrupted before it was put in place left behind.
    InterruptedWrite,
    /// A damaged database a rebuild set aside: kept for whoever wants something from it, and
    /// holding whatever was in it, forgotten since or not.
    SetAsideDatabase,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// The node, body path or tree concerned.
    pub subject: String,
    pub detail: String,
    pub repaired: bool,
    /// What would repair it, when `--repair` does not (or did not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<String>,
}

impl Finding {
    /// A finding; public so the composition root can report what only it knows of (files
    /// beside the database, say).
    pub fn new(kind: FindingKind, subject: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding { kind, subject: subject.into(), detail: detail.into(), repaired: false, remedy: None }
    }

    fn repaired(mut self, repaired: bool) -> Finding {
        self.repaired = repaired;
        if repaired {
            self.remedy = None;
        }
        self
    }

    pub fn remedy(mut self, remedy: impl Into<String>) -> Finding {
        if !self.repaired {
            self.remedy = Some(remedy.into());
        }
        self
    }
}

/// The outcome of an `fsck` run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FsckReport {
    pub namespaces: usize,
    pub trees: usize,
    pub leaves: usize,
    pub summaries: usize,
    pub bodies: usize,
    pub index_documents: usize,
    pub findings: Vec<Finding>,
}

impl FsckReport {
    /// Clean: nothing is wrong, or everything wrong was repaired.
    pub fn is_clean(&self) -> bool {
        self.findings.iter().all(|f| f.repaired)
    }

    /// Whether the stored data itself is damaged (as opposed to rows, bodies and index
    /// disagreeing): writers should not go on writing into it.
    pub fn is_damaged(&self) -> bool {
        self.findings.iter().any(|f| matches!(f.kind, FindingKind::DamagedDatabase | FindingKind::DamagedRow))
    }
}

/// Whether the findings so far say the stored data itself is damaged (then nothing is
/// rebuilt from it).
fn report_damaged(findings: &[Finding]) -> bool {
    findings
        .iter()
        .any(|f| matches!(f.kind, FindingKind::DamagedDatabase | FindingKind::DamagedRow | FindingKind::UnreadableTree))
}

/// How old a copy left by a write must be before `fsck --repair` takes it for abandoned when
/// nothing says its writer is gone: a write holds its copy for the milliseconds between
/// creating and renaming it, so ten minutes is far beyond any live one, even on a stalled disk.
const STALE_WRITE_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// How a body whose row the database lacks comes back. A rebuild starts from an empty
/// database (merging bodies into rows that may contradict them is not attempted), so a
/// database that still holds other memories — one restored from an older backup, say — is
/// moved aside first.
const RECOVER_ROWS: &str = "the database is older than this body (restored from a backup?): restore a newer \
     backup, or move the database aside and run `arbor fsck --rebuild-from-bodies`, which rebuilds every row \
     from the bodies (decisions recorded only in the database, such as rejections, are not in them)";

const REBUILD: &str =
    "restore the database from a backup, or rebuild the rows from the markdown with `arbor fsck --rebuild-from-bodies`";

/// What a check of the whole store gathers as it goes.
#[derive(Default)]
struct Sweep {
    findings: Vec<Finding>,
    /// Every body path a row names.
    referenced: BTreeSet<String>,
    known_trees: BTreeSet<(Namespace, String)>,
    /// Nodes whose words retrieval may read: the index should hold a document for each.
    readable_nodes: usize,
}

impl Arbor {
    /// Checks the whole store; repairs when `repair` is set. `is_dead` tells whether the writer
    /// of a pending body intent is gone (see [`Arbor::recover`]).
    pub async fn fsck(&self, repair: bool, is_dead: &(dyn Fn(&BodyIntent) -> bool + Sync)) -> AppResult<FsckReport> {
        let mut report = FsckReport::default();
        let mut sweep = Sweep::default();
        self.check_database(&mut sweep).await;
        let in_progress = self.check_intents(&mut sweep, repair, is_dead).await?;
        self.check_trees(&mut sweep, &mut report, repair).await?;

        // Bodies nothing refers to: garbage only when that can be shown.
        let on_disk = self.ports.bodies.list(arbor_domain::paths::MEMORY_DIR).await?;
        report.bodies = on_disk.len();
        for path in on_disk {
            if sweep.referenced.contains(path.as_str()) || in_progress.contains(path.as_str()) {
                continue;
            }
            sweep.findings.push(self.check_orphan(&path, &sweep.known_trees, repair).await?);
        }
        self.check_interrupted_writes(&mut sweep.findings, repair).await?;

        // The index and the jobs against the store (when the store can still be counted).
        report.index_documents = self.ports.index.count().await?;
        if let Ok(counts) = self.ports.store.counts().await {
            self.check_index_and_jobs(&mut sweep, report.index_documents, &counts, repair).await?;
        }
        sweep.findings.sort_by(|a, b| (a.kind, &a.subject).cmp(&(b.kind, &b.subject)));
        report.findings = sweep.findings;
        Ok(report)
    }

    /// The database engine's own check and every row decoded, each damaged one named.
    async fn check_database(&self, sweep: &mut Sweep) {
        let store = &self.ports.store;
        match store.check_integrity().await {
            Ok(integrity) => {
                for complaint in integrity.engine {
                    sweep
                        .findings
                        .push(Finding::new(FindingKind::DamagedDatabase, store.backend(), complaint).remedy(REBUILD));
                }
                for row in integrity.damaged_rows {
                    sweep.findings.push(
                        Finding::new(FindingKind::DamagedRow, format!("{} {}", row.table, row.key), row.detail)
                            .remedy(REBUILD),
                    );
                }
            }
            Err(error) => sweep.findings.push(
                Finding::new(
                    FindingKind::DamagedDatabase,
                    store.backend(),
                    format!("the check could not run: {error}"),
                )
                .remedy(REBUILD),
            ),
        }
    }

    /// Body intents never committed: each reported (and, with `repair`, recovered when its
    /// writer is gone). Returns the paths live writers are still writing, which are not orphans.
    async fn check_intents(
        &self,
        sweep: &mut Sweep,
        repair: bool,
        is_dead: &(dyn Fn(&BodyIntent) -> bool + Sync),
    ) -> AppResult<BTreeSet<String>> {
        let intents = match self.ports.store.body_intents().await {
            Ok(intents) => intents,
            Err(error) => {
                sweep
                    .findings
                    .push(Finding::new(FindingKind::UnreadableTree, "body intents", error.to_string()).remedy(REBUILD));
                Vec::new()
            }
        };
        let in_progress: BTreeSet<String> = intents
            .iter()
            .filter(|i| i.owner != self.options.owner && !is_dead(i))
            .flat_map(|i| i.paths.iter().map(ToString::to_string))
            .collect();
        if intents.is_empty() {
            return Ok(in_progress);
        }
        let recovered = if repair { Some(self.recover(is_dead).await?) } else { None };
        for intent in &intents {
            let writer_alive = intent.owner != self.options.owner && !is_dead(intent);
            let detail = format!(
                "{} bodies announced by {} at {} were never committed{}",
                intent.paths.len(),
                intent.owner,
                intent.created_at,
                if writer_alive { " (the writer is still running)" } else { "" }
            );
            sweep.findings.push(
                Finding::new(FindingKind::PendingIntent, intent.id.to_string(), detail)
                    .repaired(recovered.is_some() && !writer_alive)
                    .remedy(if writer_alive { "wait for the writer to finish" } else { "run `arbor fsck --repair`" }),
            );
        }
        Ok(in_progress)
    }

    /// Every tree, each on its own: one that cannot be read is reported, and the rest checked.
    async fn check_trees(&self, sweep: &mut Sweep, report: &mut FsckReport, repair: bool) -> AppResult<()> {
        let store = &self.ports.store;
        let namespaces = match store.namespaces().await {
            Ok(namespaces) => namespaces,
            Err(error) => {
                sweep
                    .findings
                    .push(Finding::new(FindingKind::UnreadableTree, "trees", error.to_string()).remedy(REBUILD));
                Vec::new()
            }
        };
        report.namespaces = namespaces.len();
        for namespace in &namespaces {
            let trees = match store.trees(std::slice::from_ref(namespace)).await {
                Ok(trees) => trees,
                Err(error) => {
                    sweep.findings.push(
                        Finding::new(FindingKind::UnreadableTree, namespace.to_string(), error.to_string())
                            .remedy(REBUILD),
                    );
                    continue;
                }
            };
            for tree in trees {
                report.trees += 1;
                sweep.known_trees.insert((namespace.clone(), tree.tree_id.to_string()));
                self.check_tree(sweep, report, namespace, &tree, repair).await?;
            }
        }
        Ok(())
    }

    /// One tree's rows: every body verified (present for live nodes, gone for forgotten ones),
    /// every leaf listed by its parent, and its root a current root summary.
    async fn check_tree(
        &self,
        sweep: &mut Sweep,
        report: &mut FsckReport,
        namespace: &Namespace,
        tree: &TreeRecord,
        repair: bool,
    ) -> AppResult<()> {
        let store = &self.ports.store;
        let read = async {
            let leaves = store.tree_leaves(namespace, &tree.tree_id, &Default::default()).await?;
            let summaries = store.tree_summaries(namespace, &tree.tree_id).await?;
            Ok::<_, Error>((leaves, summaries))
        };
        let (leaves, summaries) = match read.await {
            Ok(rows) => rows,
            Err(error) => {
                let subject = format!("{namespace}/{}", tree.tree_id);
                sweep
                    .findings
                    .push(Finding::new(FindingKind::UnreadableTree, subject, error.to_string()).remedy(REBUILD));
                return Ok(());
            }
        };
        report.leaves += leaves.len();
        report.summaries += summaries.len();
        let children: BTreeMap<&SummaryId, BTreeSet<&NodeId>> =
            summaries.iter().map(|s| (&s.id, s.children.iter().collect())).collect();
        for leaf in &leaves {
            sweep.referenced.insert(leaf.body_path.to_string());
            let live = leaf.status != LeafStatus::Tombstone;
            sweep.readable_nodes += usize::from(live);
            self.check_body(&mut sweep.findings, leaf.node_id(), &leaf.body_path, &leaf.body_sha256, live, repair)
                .await?;
            if let Some(parent) = &leaf.parent
                && live
                && !children.get(parent).is_some_and(|c| c.contains(&leaf.node_id()))
            {
                sweep.findings.push(
                    Finding::new(
                        FindingKind::BrokenParent,
                        leaf.id.to_string(),
                        format!("its parent {parent} does not list it as a child"),
                    )
                    .remedy(REBUILD),
                );
            }
        }
        for summary in &summaries {
            sweep.referenced.insert(summary.body_path.to_string());
            let live = matches!(summary.status, SummaryStatus::Current | SummaryStatus::Stale);
            sweep.readable_nodes += usize::from(live);
            let node = summary.node_id();
            self.check_body(&mut sweep.findings, node, &summary.body_path, &summary.body_sha256, live, repair).await?;
        }
        self.check_root(sweep, namespace, tree, &summaries, repair).await
    }

    /// A tree's root pointer names a current root summary of the tree; with `repair`, a broken
    /// one is marked stale and a seal queued, which makes a fresh root.
    async fn check_root(
        &self,
        sweep: &mut Sweep,
        namespace: &Namespace,
        tree: &TreeRecord,
        summaries: &[SummaryRecord],
        repair: bool,
    ) -> AppResult<()> {
        let Some(root) = &tree.root else { return Ok(()) };
        let ok = summaries
            .iter()
            .any(|s| &s.id == root && s.role == SummaryRole::Root && s.status == SummaryStatus::Current);
        if ok {
            return Ok(());
        }
        if repair {
            let now = self.now();
            let mut changes = ChangeSet::new();
            changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: tree.tree_id.clone() });
            changes.push(Change::Enqueue(self.job(now, JobKind::Seal, namespace, Some(&tree.tree_id), Vec::new())));
            self.ports.store.commit(changes).await?;
        }
        sweep.findings.push(
            Finding::new(
                FindingKind::BrokenRoot,
                format!("{namespace}/{}", tree.tree_id),
                format!("root {root} is not a current root summary of this tree"),
            )
            .repaired(repair)
            .remedy("run `arbor fsck --repair` (a fresh root is sealed)"),
        );
        Ok(())
    }

    /// The index holds one document per readable node once no job is pending (else it is
    /// rebuilt with `repair`); jobs set aside and leases of runners that are gone are named.
    async fn check_index_and_jobs(
        &self,
        sweep: &mut Sweep,
        index_documents: usize,
        counts: &StoreCounts,
        repair: bool,
    ) -> AppResult<()> {
        let readable_nodes = sweep.readable_nodes;
        if index_documents != readable_nodes && counts.jobs_pending == 0 && !report_damaged(&sweep.findings) {
            let repaired = if repair {
                self.rebuild_index().await?;
                true
            } else {
                false
            };
            sweep.findings.push(
                Finding::new(
                    FindingKind::IndexDrift,
                    "index",
                    format!(
                        "the index holds {index_documents} documents; the store has {readable_nodes} readable nodes"
                    ),
                )
                .repaired(repaired)
                .remedy("run `arbor fsck --repair` or `arbor jobs reindex`"),
            );
        }
        if counts.jobs_dead > 0 {
            sweep.findings.push(
                Finding::new(
                    FindingKind::DeadJob,
                    "jobs",
                    format!("{} jobs failed too often and were set aside", counts.jobs_dead),
                )
                .remedy("see why with `arbor --json fsck` and the log of `arbor -v jobs run`; fix the cause (a missing body, a model that is down), then run `arbor jobs reindex`"),
            );
        }
        let now = self.now();
        for lease in self.ports.store.job_leases().await.unwrap_or_default() {
            if lease.until > now && self.process_state(&lease.worker) == ProcessState::Gone {
                let repaired = repair && self.reclaim_dead_leases().await? > 0;
                sweep.findings.push(
                    Finding::new(
                        FindingKind::StaleLease,
                        lease.id.to_string(),
                        format!(
                            "{} job leased until {} by {}, which is no longer running",
                            lease.kind.as_str(),
                            lease.until,
                            lease.worker
                        ),
                    )
                    .repaired(repaired)
                    .remedy("run `arbor jobs run` (it takes the lease back) or `arbor fsck --repair`"),
                );
            }
        }
        Ok(())
    }

    /// Copies of bodies that interrupted writes left. Each holds the text of the body it was
    /// becoming, so it is reported; `--repair` removes it once its writer is known to be gone
    /// or it is older than [`STALE_WRITE_AGE`] (a live write holds one for milliseconds).
    async fn check_interrupted_writes(&self, findings: &mut Vec<Finding>, repair: bool) -> AppResult<()> {
        let host = self.options.owner.rsplit_once('/').map_or("", |(host, _)| host);
        for leftover in self.ports.bodies.interrupted_writes().await? {
            let writer_gone = leftover
                .writer_pid
                .is_some_and(|pid| self.process_state(&format!("{host}/{pid}")) == ProcessState::Gone);
            let stale = writer_gone || leftover.age >= STALE_WRITE_AGE;
            let repaired = repair && stale && self.ports.bodies.remove_interrupted_write(&leftover.location).await?;
            let of = leftover.target.as_deref().map(|t| format!(" of {t}")).unwrap_or_default();
            let remedy = if stale {
                "run `arbor fsck --repair`".to_owned()
            } else {
                format!(
                    "a write may still be under way; `arbor fsck --repair` removes it once it is {} minutes old",
                    STALE_WRITE_AGE.as_secs() / 60
                )
            };
            findings.push(
                Finding::new(
                    FindingKind::InterruptedWrite,
                    leftover.location,
                    format!("an interrupted write{of} left this copy of its text"),
                )
                .repaired(repaired)
                .remedy(remedy),
            );
        }
        Ok(())
    }

    /// What a body no row refers to is, and whether it may go.
    async fn check_orphan(
        &self,
        path: &BodyPath,
        known_trees: &BTreeSet<(Namespace, String)>,
        repair: bool,
    ) -> AppResult<Finding> {
        let subject = path.to_string();
        let bytes = match self.ports.bodies.read_unverified(path).await {
            Ok(bytes) => bytes,
            Err(Error::NotFound { .. }) => {
                return Ok(Finding::new(FindingKind::OrphanBody, subject, "gone while fsck ran").repaired(true));
            }
            Err(error) => return Err(error.into()),
        };
        let Ok(document) = std::str::from_utf8(&bytes).map_err(drop).and_then(|t| markdown::parse(t).map_err(drop))
        else {
            return Ok(Finding::new(FindingKind::ForeignFile, subject, "not an Arbor body document; left alone")
                .remedy("move it out of memory/ if it is yours, or delete it"));
        };
        let id = document.meta.get("id").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        let namespace = document.meta.get("namespace").and_then(|v| v.as_str()).and_then(|n| Namespace::parse(n).ok());
        let tree = document.meta.get("tree").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        let scope: Vec<Namespace> = namespace.iter().cloned().collect();
        let store = &self.ports.store;
        let leaf_id = if path.is_summary() { None } else { arbor_domain::id::LeafId::parse(&id).ok() };
        if let Some(leaf_id) = leaf_id {
            // The body of a forgotten leaf must go; that of a leaf the store does not have is a
            // memory it lost.
            let forgotten = match store.leaf(&scope, &leaf_id).await {
                Ok(Some(leaf)) => leaf.status == LeafStatus::Tombstone,
                Ok(None) | Err(_) => false,
            };
            if forgotten {
                let repaired = repair && self.ports.bodies.delete(path).await?;
                return Ok(Finding::new(FindingKind::OrphanBody, subject, format!("{leaf_id} was forgotten"))
                    .repaired(repaired)
                    .remedy("run `arbor fsck --repair`"));
            }
            return Ok(match arbor_domain::recovery::leaf_from_document(path, &bytes) {
                Ok(_) => Finding::new(
                    FindingKind::RecoverableBody,
                    subject,
                    format!("the memory {leaf_id} has a body but no row; kept"),
                )
                .remedy(RECOVER_ROWS),
                Err(why) => Finding::new(FindingKind::ForeignFile, subject, format!("{why}; left alone"))
                    .remedy("move it out of memory/ if it is yours, or delete it"),
            });
        }
        if let Some(summary_id) = path.is_summary().then(|| SummaryId::parse(&id).ok()).flatten() {
            let purged = match store.summary(&scope, &summary_id).await {
                Ok(Some(summary)) => matches!(summary.status, SummaryStatus::Purged | SummaryStatus::Retired),
                Ok(None) | Err(_) => false,
            };
            // A summary is derived from its leaves: when its tree is in the store, sealed anew
            // without it, the file is a leftover; when the tree is not, it waits for a rebuild.
            let tree_known = namespace.as_ref().is_some_and(|ns| known_trees.contains(&(ns.clone(), tree.clone())));
            if purged || tree_known {
                let repaired = repair && self.ports.bodies.delete(path).await?;
                let why = if purged { "it was purged or replaced" } else { "its tree was sealed without it" };
                return Ok(Finding::new(FindingKind::OrphanBody, subject, format!("summary {summary_id}: {why}"))
                    .repaired(repaired)
                    .remedy("run `arbor fsck --repair`"));
            }
            return Ok(Finding::new(
                FindingKind::RecoverableBody,
                subject,
                format!("summary {summary_id} of a tree the store does not have; kept"),
            )
            .remedy(RECOVER_ROWS));
        }
        Ok(Finding::new(FindingKind::ForeignFile, subject, "its frontmatter names no leaf or summary; left alone")
            .remedy("move it out of memory/ if it is yours, or delete it"))
    }

    /// Checks one node's body: present and intact if `live`, gone otherwise.
    async fn check_body(
        &self,
        findings: &mut Vec<Finding>,
        node: NodeId,
        path: &BodyPath,
        sha256: &ContentHash,
        live: bool,
        repair: bool,
    ) -> AppResult<()> {
        let lost = "its words are lost unless the file comes back from a backup; `arbor forget` the memory to clear it";
        match (self.ports.bodies.get(path, sha256).await, live) {
            (Ok(_), true) => {}
            (Err(Error::NotFound { .. }), false) => {}
            (Err(Error::NotFound { .. }), true) => findings.push(
                Finding::new(FindingKind::MissingBody, node.to_string(), format!("{path} is missing")).remedy(lost),
            ),
            (Err(Error::Integrity { detail, .. }), true) => findings.push(
                Finding::new(FindingKind::EditedBody, node.to_string(), format!("{path}: {detail}"))
                    .remedy("record the edit as the memory's next version with `arbor fsck --adopt-edits`, or put the file back as it was"),
            ),
            (Ok(_) | Err(Error::Integrity { .. }), false) => {
                let repaired = repair && self.ports.bodies.delete(path).await?;
                findings.push(
                    Finding::new(
                        FindingKind::LeftoverBody,
                        node.to_string(),
                        format!("{path} should have been deleted with the content it held"),
                    )
                    .repaired(repaired)
                    .remedy("run `arbor fsck --repair`"),
                );
            }
            (Err(other), _) => return Err(other.into()),
        }
        Ok(())
    }

    /// Drops the search index and rebuilds it from the authoritative rows and verified bodies.
    ///
    /// Crash-safe: before anything is dropped, one index job per tree naming every node to
    /// index is committed, so a rebuild killed part-way leaves the rest queued for the job
    /// runner rather than an index that silently lacks it. Each tree's job is completed once
    /// that tree is indexed.
    pub async fn rebuild_index(&self) -> AppResult<usize> {
        let store = &self.ports.store;
        let now = self.now();
        let mut planned = Vec::new();
        let mut changes = ChangeSet::new();
        for namespace in store.namespaces().await? {
            for tree in store.trees(std::slice::from_ref(&namespace)).await? {
                let leaves = store.tree_leaves(&namespace, &tree.tree_id, &Default::default()).await?;
                let summaries = store.tree_summaries(&namespace, &tree.tree_id).await?;
                let nodes: Vec<NodeId> = leaves
                    .iter()
                    .filter(|l| l.status != LeafStatus::Tombstone)
                    .map(|l| l.node_id())
                    .chain(
                        summaries
                            .iter()
                            .filter(|s| matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale))
                            .map(|s| s.node_id()),
                    )
                    .collect();
                if nodes.is_empty() {
                    continue;
                }
                let job = self.job(now, JobKind::Index, &namespace, None, nodes);
                changes.push(Change::Enqueue(job.clone()));
                planned.push((namespace.clone(), tree.tree_id.clone(), job));
                if changes.len() >= 256 {
                    store.commit(std::mem::take(&mut changes)).await?;
                }
            }
        }
        if !changes.is_empty() {
            store.commit(changes).await?;
        }
        self.ports.index.clear().await?;
        let mut indexed = 0;
        for (namespace, tree, job) in planned {
            indexed += self.reindex_tree(&namespace, &tree).await?;
            store.commit(ChangeSet::new().with(Change::CompleteJob { id: job.id })).await?;
        }
        // A bulk load: the index builds its search structures now, not on the first questions.
        self.ports.index.optimize().await?;
        Ok(indexed)
    }

    /// Re-projects every live node into the index in place, with the configured embedder's
    /// vectors: after an embedder change, this moves every node to the new embedder while
    /// retrieval keeps serving (each upsert replaces one node's document whole, and the
    /// previous embedder's vectors are searched until then; see [`Arbor::migrating_from`]).
    /// Returns how many nodes were indexed.
    pub async fn reembed(&self) -> AppResult<usize> {
        let mut indexed = 0;
        for namespace in self.ports.store.namespaces().await? {
            for tree in self.ports.store.trees(std::slice::from_ref(&namespace)).await? {
                indexed += self.reindex_tree(&namespace, &tree.tree_id).await?;
            }
        }
        Ok(indexed)
    }

    async fn reindex_tree(&self, namespace: &Namespace, tree: &arbor_domain::model::TreeId) -> AppResult<usize> {
        use crate::projection::Projectable;
        use arbor_domain::visibility::NodeFacts;
        let store = &self.ports.store;
        let mut items = Vec::new();
        for leaf in store.tree_leaves(namespace, tree, &Default::default()).await? {
            if leaf.status == LeafStatus::Tombstone {
                continue;
            }
            // A damaged body (missing, edited) is left out of the index, not a reason to leave
            // every other node out: `fsck` reports it.
            let body = match self.read_body(&leaf.body_path, &leaf.body_sha256).await {
                Ok(body) => body,
                Err(crate::AppError::Port(error @ (Error::NotFound { .. } | Error::Integrity { .. }))) => {
                    tracing::warn!(leaf = %leaf.id, error = %arbor_ports::with_causes(&error), "not indexed: its body cannot be read");
                    continue;
                }
                Err(other) => return Err(other),
            };
            items.push(Projectable {
                node: leaf.node_id(),
                facts: NodeFacts::of_leaf(&leaf),
                text: format!("{}\n{}", leaf.title, body),
            });
        }
        for summary in store.tree_summaries(namespace, tree).await? {
            if matches!(summary.status, SummaryStatus::Current | SummaryStatus::Stale) {
                items.push(Projectable {
                    node: summary.node_id(),
                    facts: NodeFacts::of_summary(&summary),
                    text: format!("{}\n{}", summary.title, summary.summary),
                });
            }
        }
        let count = items.len();
        for batch in items.chunks(256) {
            self.index_documents(batch.to_vec(), crate::projection::Vectors::Now).await?;
        }
        Ok(count)
    }
}
