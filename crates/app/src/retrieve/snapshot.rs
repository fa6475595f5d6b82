//! Recorded retrievals [design §context-snapshots]: a `ContextSnapshot` of what one retrieval considered,
//! selected and why, with the versions that shaped it, kept with its access records; and
//! reading one back, inside the caller's scope, to explain it.

use std::collections::BTreeMap;

use arbor_domain::id::{LeafId, RetrievalId, SummaryId};
use arbor_domain::model::POLICY_VERSION;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{Change, ChangeSet, ConsideredNode, ContextSnapshot, SnapshotVersions};
use serde::Serialize;

use super::{RetrievalPack, RetrieveRequest, chain_names};
use crate::{AppResult, Arbor};

/// The version of the retrieval pipeline, recorded in every snapshot: bump it when channels,
/// fusion or traversal change what a question returns.
pub(crate) const RETRIEVER_VERSION: &str = "arbor-retriever/2";

/// A recorded retrieval, explained: the snapshot, and the current title of every node it
/// considered that the caller can still read (a node forgotten or no longer visible since has
/// none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalExplanation {
    pub snapshot: ContextSnapshot,
    /// By node id (`leaf-…`, `sum-…`).
    pub titles: BTreeMap<String, String>,
}

impl Arbor {
    /// Keeps the snapshot of a retrieval just answered; returns its id.
    pub(super) async fn record_retrieval(
        &self,
        chain: &ReadChain,
        request: &RetrieveRequest,
        pack: &RetrievalPack,
        considered: Vec<ConsideredNode>,
    ) -> AppResult<RetrievalId> {
        let at = self.now();
        let id = self.new_retrieval_id(at);
        let mut embedders = vec![self.ports.embedder.id().to_string()];
        embedders.extend(self.previous_embedder.iter().map(|e| e.id().to_string()));
        if request.include_restricted {
            embedders.extend(self.restricted_embedder.iter().map(|e| e.id().to_string()));
        }
        embedders.dedup();
        let intent = serde_json::to_value(pack.intent.mode).ok().and_then(|v| v.as_str().map(str::to_owned));
        let snapshot = ContextSnapshot {
            id: id.clone(),
            at,
            namespace: chain.layers()[0].namespace.clone(),
            read_chain: chain_names(chain),
            actor: self.actor(),
            query: request.query.clone(),
            as_of: request.as_of,
            intent: intent.unwrap_or_default(),
            intent_reason: pack.intent.reason.clone(),
            understood: pack.understood.lines(),
            versions: SnapshotVersions {
                retriever: RETRIEVER_VERSION.to_owned(),
                embedders,
                reasoner: self.ports.reasoner.id(),
                policy: POLICY_VERSION.to_owned(),
            },
            considered,
        };
        self.ports.store.commit(ChangeSet::new().with(Change::RecordRetrieval(Box::new(snapshot)))).await?;
        Ok(id)
    }

    /// A recorded retrieval the caller may read (every layer it was recorded under is in
    /// `chain`), explained; `None` for an id that does not exist or is out of scope, alike.
    pub async fn show_retrieval(&self, chain: &ReadChain, id: &RetrievalId) -> AppResult<Option<RetrievalExplanation>> {
        let scope: Vec<_> = chain.namespaces().cloned().collect();
        let Some(snapshot) = self.ports.store.retrieval(&scope, id).await? else { return Ok(None) };
        // A snapshot names candidates (and entities) from every layer of the chain it was
        // recorded under: it is shown only to a caller who may read all of those layers.
        let recorded_under: Result<Vec<Namespace>, _> = snapshot
            .read_chain
            .iter()
            .map(|layer| Namespace::parse(layer.split_once('@').map_or(layer.as_str(), |(namespace, _)| namespace)))
            .collect();
        if !recorded_under.is_ok_and(|namespaces| chain.covers(&namespaces)) {
            return Ok(None);
        }
        let readable = VisibilityFilter::for_chain(chain, self.now());
        let leaf_ids: Vec<LeafId> = snapshot.considered.iter().filter_map(|c| c.node.as_leaf().cloned()).collect();
        let summary_ids: Vec<SummaryId> =
            snapshot.considered.iter().filter_map(|c| c.node.as_summary().cloned()).collect();
        let mut titles = BTreeMap::new();
        for leaf in self.ports.store.leaves(&scope, &leaf_ids).await? {
            if readable.admits(&NodeFacts::of_leaf(&leaf)) {
                titles.insert(leaf.node_id().to_string(), leaf.title);
            }
        }
        for summary in self.ports.store.summaries(&scope, &summary_ids).await? {
            if readable.admits(&NodeFacts::of_summary(&summary)) {
                titles.insert(summary.node_id().to_string(), summary.title);
            }
        }
        Ok(Some(RetrievalExplanation { snapshot, titles }))
    }
}
