//! `fsck`: checks that rows, bodies and the index agree, and repairs what can be repaired
//! without guessing.
//!
//! - every leaf with content and every readable summary has its body, byte for byte (a
//!   mismatch is a hand edit or damage, reported, never silently accepted);
//! - forgotten leaves and purged or retired summaries have no body left;
//! - no body file exists that no row refers to (an orphan), and no body intent is pending;
//! - parent links point at summaries of the same tree that list the child; each root pointer
//!   names a current root;
//! - the index holds as many documents as the store has readable nodes, and no job is dead.
//!
//! Repairs: orphan and leftover bodies are deleted; pending intents of dead writers are
//! recovered; a broken root is queued for a fresh seal; a drifted index is rebuilt.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::id::{NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{ContentHash, SummaryRole, SummaryStatus};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_ports::{BodyIntent, Change, ChangeSet, Error, JobKind};
use serde::Serialize;

use crate::{AppResult, Arbor};

/// What `fsck` found wrong, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A body a row refers to is missing.
    MissingBody,
    /// A body's bytes no longer match the hash on its row: edited by hand, or damaged.
    EditedBody,
    /// A forgotten leaf or retired summary still has a body on disk.
    LeftoverBody,
    /// A body no row refers to.
    OrphanBody,
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// The node, body path or tree concerned.
    pub subject: String,
    pub detail: String,
    pub repaired: bool,
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
}

impl Arbor {
    /// Checks the whole store; repairs when `repair` is set. `is_dead` tells whether the writer
    /// of a pending body intent is gone (see [`Arbor::recover`]).
    pub async fn fsck(&self, repair: bool, is_dead: &(dyn Fn(&BodyIntent) -> bool + Sync)) -> AppResult<FsckReport> {
        let store = &self.ports.store;
        let bodies = &self.ports.bodies;
        let mut report = FsckReport::default();
        let mut findings = Vec::new();
        let mut referenced: BTreeSet<String> = BTreeSet::new();
        let mut readable_nodes = 0usize;

        let intents = store.body_intents().await?;
        let in_progress: BTreeSet<String> = intents
            .iter()
            .filter(|i| i.owner != self.options.owner && !is_dead(i))
            .flat_map(|i| i.paths.iter().map(ToString::to_string))
            .collect();
        if !intents.is_empty() {
            let recovered = if repair { Some(self.recover(is_dead).await?) } else { None };
            for intent in &intents {
                let writer_alive = intent.owner != self.options.owner && !is_dead(intent);
                findings.push(Finding {
                    kind: FindingKind::PendingIntent,
                    subject: intent.id.to_string(),
                    detail: format!(
                        "{} bodies announced by {} at {} were never committed{}",
                        intent.paths.len(),
                        intent.owner,
                        intent.created_at,
                        if writer_alive { " (the writer is still running)" } else { "" }
                    ),
                    repaired: recovered.is_some() && !writer_alive,
                });
            }
        }

        let namespaces = store.namespaces().await?;
        report.namespaces = namespaces.len();
        for namespace in &namespaces {
            let scope = std::slice::from_ref(namespace);
            for tree in store.trees(scope).await? {
                report.trees += 1;
                let leaves = store.tree_leaves(namespace, &tree.tree_id, &Default::default()).await?;
                let summaries = store.tree_summaries(namespace, &tree.tree_id).await?;
                report.leaves += leaves.len();
                report.summaries += summaries.len();
                let children: BTreeMap<&SummaryId, BTreeSet<&NodeId>> =
                    summaries.iter().map(|s| (&s.id, s.children.iter().collect())).collect();

                for leaf in &leaves {
                    referenced.insert(leaf.body_path.clone());
                    let live = leaf.status != LeafStatus::Tombstone;
                    readable_nodes += usize::from(live);
                    self.check_body(&mut findings, leaf.node_id(), &leaf.body_path, &leaf.body_sha256, live, repair)
                        .await?;
                    if let Some(parent) = &leaf.parent
                        && live
                        && !children.get(parent).is_some_and(|c| c.contains(&leaf.node_id()))
                    {
                        findings.push(Finding {
                            kind: FindingKind::BrokenParent,
                            subject: leaf.id.to_string(),
                            detail: format!("its parent {parent} does not list it as a child"),
                            repaired: false,
                        });
                    }
                }
                for summary in &summaries {
                    referenced.insert(summary.body_path.clone());
                    let live = matches!(summary.status, SummaryStatus::Current | SummaryStatus::Stale);
                    readable_nodes += usize::from(live);
                    let node = summary.node_id();
                    self.check_body(&mut findings, node, &summary.body_path, &summary.body_sha256, live, repair)
                        .await?;
                }
                if let Some(root) = &tree.root {
                    let ok = summaries
                        .iter()
                        .any(|s| &s.id == root && s.role == SummaryRole::Root && s.status == SummaryStatus::Current);
                    if !ok {
                        if repair {
                            let now = self.now();
                            let mut changes = ChangeSet::new();
                            changes.push(Change::MarkRootStale {
                                namespace: namespace.clone(),
                                tree: tree.tree_id.clone(),
                            });
                            changes.push(Change::Enqueue(self.job(
                                now,
                                JobKind::Seal,
                                namespace,
                                Some(&tree.tree_id),
                                Vec::new(),
                            )));
                            store.commit(changes).await?;
                        }
                        findings.push(Finding {
                            kind: FindingKind::BrokenRoot,
                            subject: format!("{namespace}/{}", tree.tree_id),
                            detail: format!("root {root} is not a current root summary of this tree"),
                            repaired: repair,
                        });
                    }
                }
            }
        }

        // Bodies nothing refers to.
        let on_disk = bodies.list(arbor_domain::paths::MEMORY_DIR).await?;
        report.bodies = on_disk.len();
        for path in on_disk {
            if referenced.contains(path.as_str()) || in_progress.contains(path.as_str()) {
                continue;
            }
            let repaired = repair && bodies.delete(&path).await?;
            findings.push(Finding {
                kind: FindingKind::OrphanBody,
                subject: path.to_string(),
                detail: "no leaf or summary refers to this file".to_owned(),
                repaired,
            });
        }

        // The index against the store.
        report.index_documents = self.ports.index.count().await?;
        let counts = store.counts().await?;
        if report.index_documents != readable_nodes && counts.jobs_pending == 0 {
            let repaired = if repair {
                self.rebuild_index().await?;
                true
            } else {
                false
            };
            findings.push(Finding {
                kind: FindingKind::IndexDrift,
                subject: "index".to_owned(),
                detail: format!(
                    "the index holds {} documents; the store has {readable_nodes} readable nodes",
                    report.index_documents
                ),
                repaired,
            });
        }
        if counts.jobs_dead > 0 {
            findings.push(Finding {
                kind: FindingKind::DeadJob,
                subject: "jobs".to_owned(),
                detail: format!("{} jobs failed too often and were set aside", counts.jobs_dead),
                repaired: false,
            });
        }
        findings.sort_by(|a, b| (a.kind, &a.subject).cmp(&(b.kind, &b.subject)));
        report.findings = findings;
        Ok(report)
    }

    /// Checks one node's body: present and intact if `live`, gone otherwise.
    async fn check_body(
        &self,
        findings: &mut Vec<Finding>,
        node: NodeId,
        path: &str,
        sha256: &ContentHash,
        live: bool,
        repair: bool,
    ) -> AppResult<()> {
        let Ok(path) = BodyPath::parse(path) else {
            findings.push(Finding {
                kind: FindingKind::MissingBody,
                subject: node.to_string(),
                detail: format!("its body path {path:?} is not a valid path"),
                repaired: false,
            });
            return Ok(());
        };
        match (self.ports.bodies.get(&path, sha256).await, live) {
            (Ok(_), true) => {}
            (Err(Error::NotFound { .. }), false) => {}
            (Err(Error::NotFound { .. }), true) => findings.push(Finding {
                kind: FindingKind::MissingBody,
                subject: node.to_string(),
                detail: format!("{path} is missing"),
                repaired: false,
            }),
            (Err(Error::Integrity { detail, .. }), true) => findings.push(Finding {
                kind: FindingKind::EditedBody,
                subject: node.to_string(),
                detail: format!("{path}: {detail}"),
                repaired: false,
            }),
            (Ok(_) | Err(Error::Integrity { .. }), false) => {
                let repaired = repair && self.ports.bodies.delete(&path).await?;
                findings.push(Finding {
                    kind: FindingKind::LeftoverBody,
                    subject: node.to_string(),
                    detail: format!("{path} should have been deleted with the content it held"),
                    repaired,
                });
            }
            (Err(other), _) => return Err(other.into()),
        }
        Ok(())
    }

    /// Drops the search index and rebuilds it from the authoritative rows and verified bodies.
    pub async fn rebuild_index(&self) -> AppResult<usize> {
        self.ports.index.clear().await?;
        let indexed = self.reembed().await?;
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
            let body = self.read_body(&leaf.body_path, &leaf.body_sha256).await?;
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
            self.index_documents(batch.to_vec()).await?;
        }
        Ok(count)
    }
}
