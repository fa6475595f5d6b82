//! Export [design §sensitivity] and import [design §export]: the memories a chain can read,
//! with their words and the metadata another system needs, one record each, and each with its
//! body document as stored, so `import_export` can put them back into an empty store as they
//! were. Restricted memories are withheld unless the trusted caller asks for them, and counted
//! so the caller knows; history (replaced versions) only on request; candidates, rejected,
//! archived and forgotten memories never.

use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{MemoryKind, SourceRef, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::recovery::leaf_from_document;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::BodyStoreExt;
use arbor_ports::TreeLeafQuery;
use serde::{Deserialize, Serialize};

use crate::projection::body_text;
use crate::rebuild::RebuildReport;
use crate::{AppError, AppResult, Arbor};

/// What to export besides the current memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportOptions {
    /// Include restricted memories (the trusted caller enabled them).
    pub include_restricted: bool,
    /// Include replaced versions.
    pub include_history: bool,
}

/// One exported memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportedMemory {
    pub id: LeafId,
    pub lineage: LeafId,
    pub version: Version,
    pub namespace: Namespace,
    pub tree_id: TreeId,
    pub kind: MemoryKind,
    pub status: LeafStatus,
    pub title: String,
    pub text: String,
    pub observed_at: Timestamp,
    pub validity: Validity,
    pub sensitivity: Sensitivity,
    pub source: SourceRef,
    pub supersedes: Option<LeafId>,
    pub superseded_by: Option<LeafId>,
    /// Where its body document lies in a store, and the document itself as stored (front
    /// matter and text): what an import rebuilds the memory from.
    pub path: BodyPath,
    pub document: String,
    /// The embedder the exporting store searched it with (`name/dimensions`). Vectors are not
    /// carried: an import embeds anew, which gives the same vectors when the importing store's
    /// embedder is this one, and says so when it is not.
    pub embedder: String,
    /// What it says as claims, and what reconciliation decided about it (a retirement's rule,
    /// a doubt, a pair a person kept together).
    pub claims: arbor_domain::claims::LeafClaims,
}

/// What an import reads of one exported memory; the other fields of an export line are for
/// other systems.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ImportedMemory {
    pub id: LeafId,
    pub status: LeafStatus,
    pub validity: Validity,
    pub superseded_by: Option<LeafId>,
    pub path: BodyPath,
    pub document: String,
    /// Absent in exports written before it was recorded.
    #[serde(default)]
    pub embedder: Option<String>,
    /// Absent in exports written before claims were kept: the document's words are read again.
    #[serde(default)]
    pub claims: Option<arbor_domain::claims::LeafClaims>,
}

/// An export, and what it left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Export {
    pub memories: Vec<ExportedMemory>,
    /// Restricted memories in scope that were withheld.
    pub withheld_restricted: usize,
    /// What could not be read (a damaged row, a missing or altered body), each with why; the
    /// export went on past them (`arbor fsck` says more).
    pub unreadable: Vec<(String, String)>,
}

impl Arbor {
    /// The memories `chain` can read, tree by tree, each with its verified body text.
    pub async fn export(&self, chain: &ReadChain, options: ExportOptions) -> AppResult<Export> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let mut filter = VisibilityFilter::for_chain(chain, self.now());
        filter.include_restricted = true;
        let mut statuses = vec![LeafStatus::Active];
        if options.include_history {
            statuses.push(LeafStatus::Superseded);
        }
        let query = TreeLeafQuery { statuses, ..TreeLeafQuery::default() };
        let mut export = Export { memories: Vec::new(), withheld_restricted: 0, unreadable: Vec::new() };
        let embedder = self.ports.embedder.id().to_string();
        for tree in store.trees(&scope).await? {
            let mut leaves = match store.tree_leaves(&tree.namespace, &tree.tree_id, &query).await {
                Ok(leaves) => leaves,
                Err(error) => {
                    export.unreadable.push((format!("{}/{}", tree.namespace, tree.tree_id), error.to_string()));
                    continue;
                }
            };
            // In the order they were said, a memory's versions in order: the same store gives
            // the same export whatever order its backend keeps rows in (a row a write updated
            // may move).
            leaves.sort_by(|a, b| {
                (a.observed_at, &a.lineage, a.version, &a.id).cmp(&(b.observed_at, &b.lineage, b.version, &b.id))
            });
            for leaf in leaves {
                // What this chain could open by id: frozen layers show what they froze.
                if !filter.opens_by_id(&NodeFacts::of_leaf(&leaf)) {
                    continue;
                }
                if !leaf.sensitivity.readable_with(options.include_restricted) {
                    export.withheld_restricted += 1;
                    continue;
                }
                let document = match self.ports.bodies.get_string(&leaf.body_path, &leaf.body_sha256).await {
                    Ok(document) => document,
                    Err(error) => {
                        export.unreadable.push((leaf.id.to_string(), error.to_string()));
                        continue;
                    }
                };
                export.memories.push(ExportedMemory {
                    text: body_text(&document),
                    path: leaf.body_path,
                    document,
                    id: leaf.id,
                    lineage: leaf.lineage,
                    version: leaf.version,
                    namespace: leaf.namespace,
                    tree_id: leaf.tree_id,
                    kind: leaf.kind,
                    status: leaf.status,
                    title: leaf.title,
                    observed_at: leaf.observed_at,
                    validity: leaf.validity,
                    sensitivity: leaf.sensitivity,
                    source: leaf.provenance.source,
                    supersedes: leaf.supersedes,
                    superseded_by: leaf.superseded_by,
                    embedder: embedder.clone(),
                    claims: leaf.claims,
                });
            }
        }
        Ok(export)
    }
}

impl Arbor {
    /// Puts exported memories back into an empty store: every document is checked first (it
    /// must read back as the leaf its line names, where such a leaf lies), then written, then
    /// the rows are rebuilt from them as `rebuild_from_bodies` does, with what the export says
    /// was replaced by consolidation replaced again. Nothing is written unless every memory
    /// checks; the errors name the records (1-based).
    pub async fn import_export(&self, memories: &[ImportedMemory]) -> AppResult<RebuildReport> {
        let present = self.ports.store.namespaces().await?;
        if !present.is_empty() {
            return Err(AppError::InvalidRequest(format!(
                "the store already holds memories (in {} namespaces); an export is imported into an empty store, \
                 so that its ids, versions and history stay as they were",
                present.len()
            )));
        }
        // A document already in the store would be taken into the rebuild or overwritten.
        let documents_present = self.ports.bodies.list(arbor_domain::paths::MEMORY_DIR).await?.len();
        if documents_present > 0 {
            return Err(AppError::InvalidRequest(format!(
                "the store's memory folder already holds {documents_present} documents though its database is empty: \
                 `arbor fsck` says what they are; import into a new store"
            )));
        }
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (at, memory) in memories.iter().enumerate() {
            let record = at + 1;
            match leaf_from_document(&memory.path, memory.document.as_bytes()) {
                Ok(leaf) if leaf.record.id != memory.id => {
                    problems.push(format!("record {record}: its document is of {}, not {}", leaf.record.id, memory.id))
                }
                Ok(_) if !seen.insert(memory.path.clone()) => {
                    problems.push(format!("record {record}: {} appears twice", memory.id))
                }
                Ok(_) => {}
                Err(error) => problems.push(format!("record {record} ({}): {error}", memory.id)),
            }
            // The line's validity replaces the document's, so it is held to what a store holds.
            let (from, to) = (memory.validity.valid_from, memory.validity.valid_to);
            if let Err(error) = Validity::stored(from, to) {
                problems.push(format!("record {record}: its validity: {error}"));
            }
            if [from, to].into_iter().flatten().any(|at| !arbor_domain::time::is_storable(at)) {
                problems.push(format!(
                    "record {record}: its validity lies outside the instants a store holds ({})",
                    arbor_domain::time::STORABLE_RANGE
                ));
            }
            if !matches!(memory.status, LeafStatus::Active | LeafStatus::Superseded) {
                problems.push(format!(
                    "record {record}: an export holds current memories and their history, not {}",
                    memory.status
                ));
            }
        }
        if !problems.is_empty() {
            let shown: Vec<String> = problems.iter().take(10).cloned().collect();
            let more = problems.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
            return Err(AppError::InvalidRequest(format!("nothing was imported: {}{more}", shown.join("; "))));
        }
        let documents: Vec<(BodyPath, Vec<u8>)> =
            memories.iter().map(|m| (m.path.clone(), m.document.clone().into_bytes())).collect();
        self.ports.bodies.put_many(&documents).await?;
        let retired: Vec<(LeafId, LeafId)> = memories
            .iter()
            .filter(|m| m.status == LeafStatus::Superseded)
            .filter_map(|m| Some((m.id.clone(), m.superseded_by.clone()?)))
            .collect();
        let as_exported = as_exported(memories);
        match self.rebuild(&retired, &as_exported).await {
            Ok(report) => Ok(report),
            Err(error) => {
                // Nothing committed: the documents go, and the store is as it was. Some trees
                // committed: the documents stay, so a rebuild from them can finish the work.
                if self.ports.store.namespaces().await.is_ok_and(|present| present.is_empty()) {
                    for (path, _) in &documents {
                        let _ = self.ports.bodies.delete(path).await;
                    }
                    let _ = self.ports.bodies.prune_empty(arbor_domain::paths::MEMORY_DIR).await;
                    return Err(error);
                }
                Err(AppError::Internal(format!(
                    "the import stopped part-way ({error}); the documents are all in place: move the database \
                     aside and run `arbor fsck --rebuild-from-bodies` to finish it"
                )))
            }
        }
    }
}

/// What each exported memory's line says beyond its document: its status, validity and claims.
fn as_exported(memories: &[ImportedMemory]) -> std::collections::BTreeMap<LeafId, crate::rebuild::AsExported> {
    memories
        .iter()
        .map(|m| {
            let exported =
                crate::rebuild::AsExported { status: m.status, validity: m.validity, claims: m.claims.clone() };
            (m.id.clone(), exported)
        })
        .collect()
}
