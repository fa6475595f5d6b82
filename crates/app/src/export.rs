//! Export [design §sensitivity]: the memories a chain can read, with their words and the
//! metadata another system needs, one record each. Restricted memories are withheld unless the
//! trusted caller asks for them, and counted so the caller knows; history (replaced versions)
//! only on request; candidates, rejected, archived and forgotten memories never.

use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{MemoryKind, SourceRef, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::TreeLeafQuery;
use serde::Serialize;

use crate::{AppResult, Arbor};

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
        for tree in store.trees(&scope).await? {
            let leaves = match store.tree_leaves(&tree.namespace, &tree.tree_id, &query).await {
                Ok(leaves) => leaves,
                Err(error) => {
                    export.unreadable.push((format!("{}/{}", tree.namespace, tree.tree_id), error.to_string()));
                    continue;
                }
            };
            for leaf in leaves {
                // What this chain could open by id: frozen layers show what they froze.
                if !filter.opens_by_id(&NodeFacts::of_leaf(&leaf)) {
                    continue;
                }
                if !leaf.sensitivity.readable_with(options.include_restricted) {
                    export.withheld_restricted += 1;
                    continue;
                }
                let text = match self.read_body(&leaf.body_path, &leaf.body_sha256).await {
                    Ok(text) => text,
                    Err(error) => {
                        export.unreadable.push((leaf.id.to_string(), error.to_string()));
                        continue;
                    }
                };
                export.memories.push(ExportedMemory {
                    text,
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
                });
            }
        }
        Ok(export)
    }
}
