//! Projecting nodes into the search index, and reading body text back from disk. The index
//! is derived: every projection is computed from the authoritative row and the verified body,
//! so it can be dropped and rebuilt at any time.

use std::sync::Arc;

use arbor_domain::id::NodeId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{ContentHash, SummaryStatus};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::visibility::NodeFacts;
use arbor_ports::{BodyStoreExt, Embedder, Embedding, IndexDoc};

use crate::{AppError, AppResult, Arbor};

/// One node ready for the index: its filter columns and searchable text.
#[derive(Debug, Clone)]
pub(crate) struct Projectable {
    pub node: NodeId,
    pub facts: NodeFacts,
    pub text: String,
}

/// What the projection job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Projection {
    Upserted,
    Removed,
}

impl Arbor {
    /// Brings one node's index entry in line with its row: upserted (with a fresh embedding)
    /// while it has readable content, removed otherwise.
    ///
    /// The row is read again after the upsert: a writer that retired the node (a re-seal, a
    /// forget) between the first read and the upsert removed its entry before this upsert put
    /// it back, and only this job can see that and take it out again. A writer that retires it
    /// later removes the entry itself, after its own commit.
    pub(crate) async fn project(&self, namespace: &Namespace, node: &NodeId) -> AppResult<Projection> {
        let (projected, written) = self.project_once(namespace, node).await?;
        if written.is_some() && self.indexable_facts(namespace, node).await? != written {
            // Retired, or its facts changed, meanwhile: project what the row says now.
            return Ok(self.project_once(namespace, node).await?.0);
        }
        Ok(projected)
    }

    /// The filter facts of a node while it has readable content; `None` otherwise.
    async fn indexable_facts(&self, namespace: &Namespace, node: &NodeId) -> AppResult<Option<NodeFacts>> {
        let scope = std::slice::from_ref(namespace);
        Ok(match node {
            NodeId::Leaf(id) => match self.ports.store.leaf(scope, id).await? {
                Some(leaf) if leaf.status != LeafStatus::Tombstone => Some(NodeFacts::of_leaf(&leaf)),
                _ => None,
            },
            NodeId::Summary(id) => match self.ports.store.summary(scope, id).await? {
                Some(s) if matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale) => {
                    Some(NodeFacts::of_summary(&s))
                }
                _ => None,
            },
        })
    }

    /// One projection of the node as its row reads now, with the facts it upserted.
    async fn project_once(&self, namespace: &Namespace, node: &NodeId) -> AppResult<(Projection, Option<NodeFacts>)> {
        let scope = std::slice::from_ref(namespace);
        let item = match node {
            NodeId::Leaf(id) => match self.ports.store.leaf(scope, id).await? {
                Some(leaf) if leaf.status != LeafStatus::Tombstone => {
                    let body = self.read_body(&leaf.body_path, &leaf.body_sha256).await?;
                    let text = format!("{}\n{}", leaf.title, body);
                    Projectable { node: node.clone(), facts: NodeFacts::of_leaf(&leaf), text }
                }
                _ => return Ok((self.unindex(node).await?, None)),
            },
            NodeId::Summary(id) => match self.ports.store.summary(scope, id).await? {
                Some(s) if matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale) => {
                    let text = format!("{}\n{}", s.title, s.summary);
                    Projectable { node: node.clone(), facts: NodeFacts::of_summary(&s), text }
                }
                _ => return Ok((self.unindex(node).await?, None)),
            },
        };
        let facts = item.facts.clone();
        self.index_documents(vec![item]).await?;
        Ok((Projection::Upserted, Some(facts)))
    }

    /// Embeds and upserts documents in one call each. Restricted text is embedded only by an
    /// embedder on this machine, or not at all (it stays searchable by full text).
    pub(crate) async fn index_documents(&self, items: Vec<Projectable>) -> AppResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        let mut embeddings: Vec<Option<Embedding>> = vec![None; items.len()];
        let locality = self.ports.embedder.locality();
        let (shared, kept): (Vec<usize>, Vec<usize>) =
            (0..items.len()).partition(|&i| items[i].facts.sensitivity.may_be_given_to(locality));
        self.embed_into(&self.ports.embedder, &items, &shared, &mut embeddings).await?;
        // Text that may not go to the configured embedder is embedded here, or not at all.
        if let Some(local) = &self.restricted_embedder {
            self.embed_into(local, &items, &kept, &mut embeddings).await?;
        }
        let docs = items
            .into_iter()
            .zip(embeddings)
            .map(|(item, embedding)| IndexDoc { id: item.node, facts: item.facts, text: item.text, embedding })
            .collect();
        self.ports.index.upsert(docs).await?;
        Ok(())
    }

    /// Embeds `items[i]` for every `i` in `which` with `embedder`, filling `embeddings[i]`.
    async fn embed_into(
        &self,
        embedder: &Arc<dyn Embedder>,
        items: &[Projectable],
        which: &[usize],
        embeddings: &mut [Option<Embedding>],
    ) -> AppResult<()> {
        if which.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = which.iter().map(|&i| items[i].text.clone()).collect();
        let vectors = embedder.embed(&texts).await?;
        if vectors.len() != texts.len() {
            return Err(AppError::Internal(format!(
                "the embedder returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        let id = embedder.id();
        for (&i, values) in which.iter().zip(vectors) {
            embeddings[i] = Some(Embedding { embedder: id.clone(), values });
        }
        Ok(())
    }

    async fn unindex(&self, node: &NodeId) -> AppResult<Projection> {
        self.ports.index.remove(std::slice::from_ref(node)).await?;
        Ok(Projection::Removed)
    }

    /// Deletes the body of a node whose content must go (forgotten leaf, purged or retired
    /// summary). Never touches the body of a live node. Returns whether a file was removed.
    pub(crate) async fn purge_body(&self, namespace: &Namespace, node: &NodeId) -> AppResult<bool> {
        let scope = std::slice::from_ref(namespace);
        let path = match node {
            NodeId::Leaf(id) => match self.ports.store.leaf(scope, id).await? {
                Some(leaf) if leaf.status == LeafStatus::Tombstone => leaf.body_path,
                _ => return Ok(false),
            },
            NodeId::Summary(id) => match self.ports.store.summary(scope, id).await? {
                Some(s) if matches!(s.status, SummaryStatus::Purged | SummaryStatus::Retired) => s.body_path,
                _ => return Ok(false),
            },
        };
        Ok(self.ports.bodies.delete(&path).await?)
    }

    /// The text of a body document, verified against its hash, without frontmatter or title.
    pub(crate) async fn read_body(&self, path: &BodyPath, sha256: &ContentHash) -> AppResult<String> {
        let document = self.ports.bodies.get_string(path, sha256).await?;
        Ok(body_text(&document))
    }
}

/// The prose of a body document: after the frontmatter and the `# title` line.
pub(crate) fn body_text(document: &str) -> String {
    let body = match markdown::parse(document) {
        Ok(doc) => doc.body,
        Err(_) => document.to_owned(),
    };
    let body = body.trim_start();
    let without_title = match body.strip_prefix("# ") {
        Some(rest) => rest.split_once('\n').map(|(_, after)| after).unwrap_or(""),
        None => body,
    };
    without_title.trim().to_owned()
}
