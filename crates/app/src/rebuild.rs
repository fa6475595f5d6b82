//! Rebuilding a lost database from the markdown bodies (`arbor fsck --rebuild-from-bodies`):
//! every leaf document read back ([`arbor_domain::recovery::leaf_from_document`]), settled by
//! the recovery rule (never more visible than written, [`arbor_domain::recovery::settle`]),
//! and committed tree by tree with its tree and entity rows; then every tree is indexed and
//! sealed anew. Summary documents are derived: those of restored trees are replaced by the new
//! seal, and those of trees nothing was restored for are left where they are.

use std::collections::BTreeMap;

use arbor_domain::entity::{Entity, EntitySlug};
use arbor_domain::id::{EntityId, LeafId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::recovery::{RecoveredLeaf, leaf_from_document, settle};
use arbor_domain::time::{Timestamp, Validity};
use arbor_ports::{Change, ChangeSet, JobKind};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// What a rebuild restored, and what it could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RebuildReport {
    pub leaves: usize,
    /// Of those, how many came back current, and how many wait for a person again.
    pub active: usize,
    pub candidates: usize,
    pub trees: usize,
    pub entities: usize,
    /// Summary documents of restored trees, replaced by sealing them anew.
    pub summaries_replaced: usize,
    /// Documents that could not be read back as leaves, with why (left where they are).
    pub unreadable: Vec<UnreadableBody>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnreadableBody {
    pub path: String,
    pub reason: String,
}

/// The leaves a rebuild restores, by tree.
type TreesOfLeaves = BTreeMap<(Namespace, TreeId), Vec<RecoveredLeaf>>;

/// The entities the restored leaves' documents name, by namespace and id, each with the slug
/// its tree is filed by and the earliest time a leaf about it was written.
type NamedEntities = BTreeMap<(Namespace, EntityId), Entity>;

impl Arbor {
    /// Re-creates the rows of a store whose database lost them from its leaf documents, and the
    /// retirements consolidation reports recorded (`retired`: retired and kept leaf ids). The
    /// database must hold no tree: this is for a lost or replaced database, not a merge.
    pub async fn rebuild_from_bodies(&self, retired: &[(LeafId, LeafId)]) -> AppResult<RebuildReport> {
        self.rebuild(retired, &BTreeMap::new()).await
    }

    /// [`rebuild_from_bodies`](Self::rebuild_from_bodies), with what an export says of the
    /// leaves it holds taking the place of what their documents say: the status a leaf had
    /// when it was exported (a confirmed suggestion is current, though its document was
    /// written while it waited) and its validity then.
    pub(crate) async fn rebuild(
        &self,
        retired: &[(LeafId, LeafId)],
        as_exported: &BTreeMap<LeafId, AsExported>,
    ) -> AppResult<RebuildReport> {
        let store = &self.ports.store;
        let present = store.namespaces().await?;
        if !present.is_empty() {
            return Err(AppError::InvalidRequest(format!(
                "the database already holds memories (in {} namespaces); rebuilding from bodies re-creates a lost \
                 database, so it starts from an empty one: to rebuild anyway, move the database aside first (for \
                 SQLite, `arbor.db` and any `arbor.db-wal` beside it; for Postgres, point the store at a new schema)",
                present.len()
            )));
        }
        let mut report = RebuildReport::default();
        let (mut recovered, summary_documents) = self.read_leaf_documents(&mut report).await?;
        for leaf in &mut recovered {
            if let Some(exported) = as_exported.get(&leaf.record.id) {
                leaf.written_status = Some(exported.status);
            }
        }
        let mut trees: TreesOfLeaves = BTreeMap::new();
        for mut leaf in settle(recovered, retired) {
            if let Some(exported) = as_exported.get(&leaf.record.id) {
                leaf.record.validity = exported.validity;
                // The claims and reconciliation marks as the export recorded them (a restore,
                // a doubt); a document alone gives the claims, read again.
                if let Some(claims) = &exported.claims {
                    leaf.record.claims = claims.clone();
                }
            }
            trees.entry((leaf.record.namespace.clone(), leaf.record.tree_id.clone())).or_default().push(leaf);
        }
        let entities = named_entities(&trees);
        let now = self.now();
        let mut inserted_entities = std::collections::BTreeSet::new();
        for ((namespace, tree_id), leaves) in trees {
            let mut changes = ChangeSet::new();
            for leaf in &leaves {
                for id in leaf.record.entities.primary.iter().chain(&leaf.record.entities.secondary) {
                    let key = (namespace.clone(), id.clone());
                    if let Some(entity) = entities.get(&key)
                        && inserted_entities.insert(key)
                    {
                        changes.push(Change::InsertEntity(entity.clone()));
                        report.entities += 1;
                    }
                }
            }
            self.restore_tree(changes, &namespace, &tree_id, leaves, &entities, &mut report, now).await?;
        }
        self.drop_restored_summaries(summary_documents, &mut report).await?;
        Ok(report)
    }

    /// Every leaf document read back as a leaf (those that cannot be are reported and left
    /// where they are), and the summary documents beside them.
    async fn read_leaf_documents(&self, report: &mut RebuildReport) -> AppResult<(Vec<RecoveredLeaf>, Vec<BodyPath>)> {
        let mut recovered = Vec::new();
        let mut summary_documents: Vec<BodyPath> = Vec::new();
        for path in self.ports.bodies.list(arbor_domain::paths::MEMORY_DIR).await? {
            if path.as_str().contains("/summaries/") {
                summary_documents.push(path);
                continue;
            }
            let outcome = match self.ports.bodies.read_unverified(&path).await {
                Ok(bytes) => leaf_from_document(&path, &bytes).map_err(|e| e.to_string()),
                Err(error) => Err(error.to_string()),
            };
            match outcome {
                Ok(leaf) => recovered.push(leaf),
                Err(reason) => report.unreadable.push(UnreadableBody { path: path.to_string(), reason }),
            }
        }
        Ok((recovered, summary_documents))
    }

    /// Commits one restored tree: `changes` (its new entities), the tree row, its leaves with
    /// an audit event each, and the jobs that index and seal it.
    #[allow(clippy::too_many_arguments)]
    async fn restore_tree(
        &self,
        mut changes: ChangeSet,
        namespace: &Namespace,
        tree_id: &TreeId,
        mut leaves: Vec<RecoveredLeaf>,
        entities: &NamedEntities,
        report: &mut RebuildReport,
        now: Timestamp,
    ) -> AppResult<()> {
        leaves.sort_by_key(|l| (l.record.created_at, l.record.id.clone()));
        let owner = leaves.iter().find_map(|l| l.entity.as_ref().map(|e| e.id.clone()));
        let title = leaves.iter().rev().map(|l| l.tree_title.clone()).next().unwrap_or_else(|| "Uncategorized".into());
        let created_at = leaves.iter().map(|l| l.record.created_at).min().unwrap_or(now);
        changes.push(Change::EnsureTree(TreeRecord {
            namespace: namespace.clone(),
            tree_id: tree_id.clone(),
            entity: owner,
            title,
            created_at,
            root: None,
            root_stale: false,
        }));
        let mut nodes = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            let mut record = leaf.record;
            // Links to entities no document names cannot be restored.
            record.entities.secondary.retain(|id| entities.contains_key(&(namespace.clone(), id.clone())));
            report.leaves += 1;
            match record.status {
                arbor_domain::lifecycle::LeafStatus::Active => report.active += 1,
                arbor_domain::lifecycle::LeafStatus::Candidate => report.candidates += 1,
                _ => {}
            }
            nodes.push(record.node_id());
            changes.push(Change::Audit(self.audit(
                now,
                "leaf.recovered",
                namespace,
                record.node_id(),
                &record.body_sha256,
            )));
            changes.push(Change::InsertLeaf(record));
        }
        changes.push(Change::Enqueue(self.job(now, JobKind::Index, namespace, None, nodes)));
        changes.push(Change::Enqueue(self.job(now, JobKind::Seal, namespace, Some(tree_id), Vec::new())));
        self.ports.store.commit(changes).await?;
        report.trees += 1;
        Ok(())
    }

    /// The restored trees are sealed anew: their old summary documents describe rows that no
    /// longer exist, so they go. Those of trees nothing came back for stay.
    async fn drop_restored_summaries(&self, documents: Vec<BodyPath>, report: &mut RebuildReport) -> AppResult<()> {
        let store = &self.ports.store;
        let restored = store.namespaces().await?;
        for path in documents {
            let of_restored_tree = match self.ports.bodies.read_unverified(&path).await {
                Ok(bytes) => {
                    let document = std::str::from_utf8(&bytes).ok().and_then(|t| arbor_domain::markdown::parse(t).ok());
                    let field = |name: &str| {
                        document.as_ref().and_then(|d| d.meta.get(name)).and_then(|v| v.as_str()).map(str::to_owned)
                    };
                    match (field("namespace").and_then(|n| Namespace::parse(&n).ok()), field("tree")) {
                        (Some(ns), Some(tree)) if restored.contains(&ns) => match TreeId::parse(&tree) {
                            Ok(tree) => store.tree(&ns, &tree).await?.is_some(),
                            Err(_) => false,
                        },
                        _ => false,
                    }
                }
                Err(_) => false,
            };
            if of_restored_tree && self.ports.bodies.delete(&path).await? {
                report.summaries_replaced += 1;
            }
        }
        Ok(())
    }
}

/// The entities the restored leaves name, each with the slug its tree is filed by (or, for a
/// tree that is not an entity's, the slug of its name).
fn named_entities(trees: &TreesOfLeaves) -> NamedEntities {
    let mut entities: NamedEntities = BTreeMap::new();
    for ((namespace, tree_id), leaves) in trees {
        for leaf in leaves {
            let Some(found) = &leaf.entity else { continue };
            let key = (namespace.clone(), found.id.clone());
            let slug =
                arbor_domain::recovery::entity_slug(tree_id).unwrap_or_else(|| EntitySlug::from_name(&found.name));
            let created_at = leaf.record.created_at;
            let entry = entities.entry(key).or_insert_with(|| Entity {
                id: found.id.clone(),
                namespace: namespace.clone(),
                entity_type: found.entity_type,
                slug,
                name: found.name.clone(),
                aliases: Vec::new(),
                created_at,
            });
            entry.created_at = entry.created_at.min(created_at);
        }
    }
    entities
}

/// What an export says of a leaf that its document does not: its status and validity when it
/// was exported, and its claims with their marks (absent in exports written before them).
#[derive(Debug, Clone)]
pub(crate) struct AsExported {
    pub(crate) status: LeafStatus,
    pub(crate) validity: Validity,
    pub(crate) claims: Option<arbor_domain::claims::LeafClaims>,
}
