//! Browsing and showing: the inspection side of memory (`memory_browse`, `arbor show`). Reads
//! go through the caller's read chain like retrieval does; an id outside it is not found.
//!
//! Two audiences: the operator at the terminal owns the store and sees every status
//! ([`Disclosure::Everything`]); an agent sees what its chain could retrieve, plus history by
//! id ([`Disclosure::Retrievable`], `VisibilityFilter::opens_by_id`) — never candidates,
//! rejected, forgotten, expired or restricted memories, nor what a frozen layer did not see.

use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{ContentHash, LeafRecord, MemoryKind, SummaryRecord, SummaryStatus, TreeId, TreeRecord};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};
use arbor_ports::{BodyStoreExt, Error, Page, StoreCounts};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// How much of what the chain's namespaces hold a caller may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disclosure {
    /// Every status: the person who owns the store, at its command line.
    Everything,
    /// What the chain could retrieve now, plus superseded versions opened by id: agents and
    /// API clients.
    Retrievable,
}

/// A tree at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeOverview {
    pub tree: TreeRecord,
    pub root_title: Option<String>,
    pub leaves: usize,
    pub active_leaves: usize,
    pub summaries: usize,
}

/// One node of a tree outline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlineNode {
    pub id: NodeId,
    /// `L1` for the root, `L{h+1}` for sealed summaries, `leaf` for leaves.
    pub level: String,
    pub title: String,
    pub status: String,
    pub children: Vec<OutlineNode>,
    /// Children not shown because the outline stops at its depth.
    pub hidden_children: usize,
}

/// A tree's structure from its root down.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeOutline {
    pub tree: TreeRecord,
    pub nodes: Vec<OutlineNode>,
}

/// A node with its body document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "node", rename_all = "snake_case")]
pub enum NodeView {
    Leaf { record: Box<LeafRecord>, body: Option<String> },
    Summary { record: Box<SummaryRecord>, body: Option<String> },
}

/// How big a store is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub store_backend: &'static str,
    pub index_backend: &'static str,
    pub counts: StoreCounts,
    pub index_documents: usize,
    pub bodies: usize,
}

/// Which current memories the owner lists ([`Arbor::current_memories`]).
#[derive(Debug, Clone, Default)]
pub struct MemoryListing {
    pub tree: Option<TreeId>,
    /// Empty means every kind.
    pub kinds: Vec<MemoryKind>,
    pub offset: usize,
    pub limit: usize,
}

impl Arbor {
    /// The current memories `chain` reads, newest observation first: the owner's list (the
    /// memory centre), so restricted ones are among them. What waits for a person is
    /// [`Arbor::pending_review`]; history is reached from a memory by id.
    pub async fn current_memories(&self, chain: &ReadChain, listing: &MemoryListing) -> AppResult<Vec<LeafRecord>> {
        let mut filter = VisibilityFilter::for_chain(chain, self.now());
        filter.node_kinds = vec![NodeKind::Leaf];
        filter.include_restricted = true;
        filter.tree = listing.tree.clone();
        filter.kinds = listing.kinds.clone();
        let page = Page { offset: listing.offset, limit: listing.limit };
        Ok(self.ports.store.list_leaves(&filter, page).await?)
    }

    /// The trees the chain can read, with sizes. Under [`Disclosure::Retrievable`] only trees
    /// with something retrievable are listed, and only that is counted.
    pub async fn browse(&self, chain: &ReadChain, disclosure: Disclosure) -> AppResult<Vec<TreeOverview>> {
        let store = &self.ports.store;
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let filter = self.disclosure_filter(chain, disclosure);
        let mut out = Vec::new();
        for tree in store.trees(&scope).await? {
            let ns = std::slice::from_ref(&tree.namespace);
            let mut leaves = store.tree_leaves(&tree.namespace, &tree.tree_id, &Default::default()).await?;
            let mut summaries = store.tree_summaries(&tree.namespace, &tree.tree_id).await?;
            if let Some(filter) = &filter {
                leaves.retain(|l| filter.admits(&NodeFacts::of_leaf(l)));
                summaries.retain(|s| filter.admits(&NodeFacts::of_summary(s)));
                if leaves.is_empty() {
                    continue;
                }
            }
            let root_title = match &tree.root {
                Some(root) => store.summary(ns, root).await?.map(|s| s.title),
                None => None,
            };
            out.push(TreeOverview {
                root_title,
                leaves: leaves.iter().filter(|l| l.status != LeafStatus::Tombstone).count(),
                active_leaves: leaves.iter().filter(|l| l.status == LeafStatus::Active).count(),
                summaries: summaries.iter().filter(|s| s.status != SummaryStatus::Retired).count(),
                tree,
            });
        }
        Ok(out)
    }

    /// A tree's outline, `depth` levels deep from the root (or from its unsealed frontier if it
    /// has no root yet). Looks the tree up in the chain's namespaces, most specific first.
    /// Under [`Disclosure::Retrievable`], nodes the chain could not retrieve are left out (and
    /// counted as hidden), and a tree with nothing retrievable is not found.
    pub async fn browse_tree(
        &self,
        chain: &ReadChain,
        tree_id: &TreeId,
        depth: usize,
        disclosure: Disclosure,
    ) -> AppResult<TreeOutline> {
        let store = &self.ports.store;
        let filter = self.disclosure_filter(chain, disclosure);
        for namespace in chain.namespaces() {
            let Some(tree) = store.tree(namespace, tree_id).await? else { continue };
            let scope = std::slice::from_ref(namespace);
            if let Some(filter) = &filter {
                let leaves = store.tree_leaves(namespace, tree_id, &Default::default()).await?;
                if !leaves.iter().any(|l| filter.admits(&NodeFacts::of_leaf(l))) {
                    continue;
                }
            }
            let top: Vec<NodeId> = match &tree.root {
                Some(root) => match store.summary(scope, root).await? {
                    Some(root) => vec![root.node_id()],
                    None => Vec::new(),
                },
                None => {
                    let mut frontier = store.frontier(namespace, tree_id).await?;
                    self.policy.seal.order_frontier(&mut frontier);
                    frontier.into_iter().map(|n| n.node).collect()
                }
            };
            let mut nodes = Vec::new();
            for id in top {
                if let Some(node) = Box::pin(self.outline(namespace, &id, depth, filter.as_ref())).await? {
                    nodes.push(node);
                }
            }
            return Ok(TreeOutline { tree, nodes });
        }
        Err(Error::not_found("tree", tree_id).into())
    }

    /// One node and its children, or `None` if `filter` hides it.
    async fn outline(
        &self,
        namespace: &Namespace,
        id: &NodeId,
        depth: usize,
        filter: Option<&VisibilityFilter>,
    ) -> AppResult<Option<OutlineNode>> {
        let scope = std::slice::from_ref(namespace);
        match id {
            NodeId::Leaf(leaf_id) => {
                let leaf =
                    self.ports.store.leaf(scope, leaf_id).await?.ok_or_else(|| Error::not_found("leaf", leaf_id))?;
                if filter.is_some_and(|f| !f.admits(&NodeFacts::of_leaf(&leaf))) {
                    return Ok(None);
                }
                Ok(Some(OutlineNode {
                    id: id.clone(),
                    level: "leaf".to_owned(),
                    title: leaf.title,
                    status: leaf.status.to_string(),
                    children: Vec::new(),
                    hidden_children: 0,
                }))
            }
            NodeId::Summary(summary_id) => {
                let summary = self
                    .ports
                    .store
                    .summary(scope, summary_id)
                    .await?
                    .ok_or_else(|| Error::not_found("summary", summary_id))?;
                if filter.is_some_and(|f| !f.admits(&NodeFacts::of_summary(&summary))) {
                    return Ok(None);
                }
                let mut children = Vec::new();
                if depth > 1 {
                    for child in &summary.children {
                        if let Some(node) = Box::pin(self.outline(namespace, child, depth - 1, filter)).await? {
                            children.push(node);
                        }
                    }
                }
                Ok(Some(OutlineNode {
                    id: id.clone(),
                    level: format!("L{}", summary.level()),
                    title: summary.title.clone(),
                    status: summary.status.as_str().to_owned(),
                    hidden_children: summary.children.len() - children.len(),
                    children,
                }))
            }
        }
    }

    /// A leaf or summary by id, with its verified body document. A node outside the chain is
    /// not found — and so, under [`Disclosure::Retrievable`], is one the chain may not open
    /// (checked before its body is read); a forgotten or retired one has no body.
    pub async fn show(&self, chain: &ReadChain, id: &str, disclosure: Disclosure) -> AppResult<NodeView> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let filter = self.disclosure_filter(chain, disclosure);
        let hidden = |facts: NodeFacts| filter.as_ref().is_some_and(|f| !f.opens_by_id(&facts));
        if let Ok(leaf_id) = LeafId::parse(id)
            && let Some(leaf) = store.leaf(&scope, &leaf_id).await?
        {
            if hidden(NodeFacts::of_leaf(&leaf)) {
                return Err(Error::not_found("node", id).into());
            }
            let text = if leaf.status == LeafStatus::Tombstone {
                None
            } else {
                self.body_if_present(&leaf.body_path, &leaf.body_sha256).await?
            };
            return Ok(NodeView::Leaf { body: text, record: Box::new(leaf) });
        }
        if let Ok(summary_id) = SummaryId::parse(id)
            && let Some(summary) = store.summary(&scope, &summary_id).await?
        {
            if hidden(NodeFacts::of_summary(&summary)) {
                return Err(Error::not_found("node", id).into());
            }
            let readable = matches!(summary.status, SummaryStatus::Current | SummaryStatus::Stale);
            let text =
                if readable { self.body_if_present(&summary.body_path, &summary.body_sha256).await? } else { None };
            return Ok(NodeView::Summary { body: text, record: Box::new(summary) });
        }
        if LeafId::parse(id).is_err() && SummaryId::parse(id).is_err() {
            return Err(AppError::InvalidRequest(format!("{id:?} is not a leaf or summary id")));
        }
        // One answer for "not there" and "not yours".
        Err(Error::not_found("node", id).into())
    }

    /// The filter a [`Disclosure`] reads through, if any.
    pub(crate) fn disclosure_filter(&self, chain: &ReadChain, disclosure: Disclosure) -> Option<VisibilityFilter> {
        match disclosure {
            Disclosure::Everything => None,
            Disclosure::Retrievable => Some(VisibilityFilter::for_chain(chain, self.now())),
        }
    }

    /// The verified body document of a node whose row says it has content. A missing file is
    /// damage, reported as such (the content is lost, not forgotten).
    async fn body_if_present(
        &self,
        path: &arbor_domain::paths::BodyPath,
        sha256: &ContentHash,
    ) -> AppResult<Option<String>> {
        match self.ports.bodies.get_string(path, sha256).await {
            Ok(text) => Ok(Some(text)),
            Err(Error::NotFound { .. }) => Err(Error::Integrity {
                what: "body",
                id: path.to_string(),
                detail: "the file is missing, though its row says it holds this memory's words (damage, not a forget; \
                         see `arbor fsck`)"
                    .to_owned(),
            }
            .into()),
            Err(other) => Err(other.into()),
        }
    }

    /// Counts of everything the store and index hold.
    pub async fn stats(&self) -> AppResult<Stats> {
        Ok(Stats {
            store_backend: self.ports.store.backend(),
            index_backend: self.ports.index.backend(),
            counts: self.ports.store.counts().await?,
            index_documents: self.ports.index.count().await?,
            bodies: self.ports.bodies.list(arbor_domain::paths::MEMORY_DIR).await?.len(),
        })
    }
}
