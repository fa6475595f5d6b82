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
use arbor_domain::time_expr;
use arbor_domain::visibility::{NodeFacts, NodeKind};
use arbor_ports::{BodyStoreExt, Embedder, Embedding, IndexDoc};

use crate::{AppError, AppResult, Arbor};

/// One node ready for the index: its filter columns and searchable text.
#[derive(Debug, Clone)]
pub(crate) struct Projectable {
    pub node: NodeId,
    pub facts: NodeFacts,
    pub text: String,
}

impl Projectable {
    /// The text the full-text index holds: the node's own, and for a leaf the calendar terms of
    /// every time it mentions, read against when it was observed ("yesterday" in a message of
    /// 8 May 2023 adds `t20230507 t202305`), so a question about a day or a month finds the
    /// memory that speaks of it whenever it was written (`time_expr::calendar_terms`). Only
    /// the index sees the terms: they are never embedded, shown or stored in the body.
    fn indexed_text(&self) -> String {
        if self.facts.node != NodeKind::Leaf {
            return self.text.clone();
        }
        let terms: Vec<String> = time_expr::find_time_mentions(&self.text, self.facts.time_start)
            .iter()
            .flat_map(|mention| time_expr::calendar_terms(&mention.range, false))
            .collect();
        if terms.is_empty() { self.text.clone() } else { format!("{}\n{}", self.text, terms.join(" ")) }
    }
}

/// What the projection job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Projection {
    Upserted,
    Removed,
}

/// When a projection computes its vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vectors {
    /// In the same call: the index job that asked for it is done when it returns.
    Now,
    /// Not yet: text and filter columns only, for a node the index does not hold yet, so it
    /// is searchable by its words at once and by meaning once the job runner, which the index
    /// job stays queued for, embeds it.
    Later,
}

/// How many texts the job runner embeds in one call: the batch the local model is measured
/// at (`arbor bench`), and a bound on what one failed call has to repeat.
pub(crate) const EMBED_BATCH: usize = 64;

impl Arbor {
    /// Brings one node's index entry in line with its row: upserted (with a fresh embedding)
    /// while it has readable content, removed otherwise.
    ///
    /// The row is read again after the upsert: a writer that retired the node (a re-seal, a
    /// forget) between the first read and the upsert removed its entry before this upsert put
    /// it back, and only this job can see that and take it out again. A writer that retires it
    /// later removes the entry itself, after its own commit.
    pub(crate) async fn project(&self, namespace: &Namespace, node: &NodeId) -> AppResult<Projection> {
        self.project_with(namespace, node, Vectors::Now).await
    }

    async fn project_with(&self, namespace: &Namespace, node: &NodeId, vectors: Vectors) -> AppResult<Projection> {
        let (projected, written) = self.project_once(namespace, node, vectors).await?;
        if written.is_some() && self.indexable_facts(namespace, node).await? != written {
            // Retired, or its facts changed, meanwhile: project what the row says now.
            return Ok(self.project_once(namespace, node, vectors).await?.0);
        }
        Ok(projected)
    }

    /// Whether a write computes its nodes' vectors before it returns, or leaves them to the
    /// job runner: before, only when every embedder it would call is instant
    /// ([`Embedder::is_instant`]). A model's embedding — tens of milliseconds a text on a small
    /// CPU, or a network call — would otherwise set the pace of every write, while the job
    /// runner embeds a whole batch in one call.
    pub(crate) fn inline_vectors(&self) -> Vectors {
        let instant = self.ports.embedder.is_instant()
            && self.restricted_embedder.as_ref().is_none_or(|local| local.is_instant());
        if instant || !self.ports.index.capabilities().vectors { Vectors::Now } else { Vectors::Later }
    }

    /// [`project`](Self::project) for many nodes of one namespace, [`EMBED_BATCH`] at a time:
    /// each batch's bodies read, its texts embedded in one call (or not at all, with
    /// [`Vectors::Later`]), one index write, and then each of its nodes checked against its
    /// row, so a node retired or changed meanwhile is projected again alone, as `project`
    /// does, before the next batch begins. Returns (upserted, removed).
    pub(crate) async fn project_nodes(
        &self,
        namespace: &Namespace,
        nodes: &[NodeId],
        vectors: Vectors,
    ) -> AppResult<(usize, usize)> {
        let mut seen = std::collections::BTreeSet::new();
        let unique: Vec<&NodeId> = nodes.iter().filter(|node| seen.insert(*node)).collect();
        let (mut upserted, mut removed) = (0, 0);
        for batch in unique.chunks(EMBED_BATCH) {
            let mut items = Vec::with_capacity(batch.len());
            for node in batch {
                match self.projectable(namespace, node).await? {
                    Some(item) => items.push(item),
                    None => {
                        self.unindex(node).await?;
                        removed += 1;
                    }
                }
            }
            let written: Vec<(NodeId, NodeFacts)> = items.iter().map(|i| (i.node.clone(), i.facts.clone())).collect();
            self.index_documents(items, vectors).await?;
            upserted += written.len();
            for (node, facts) in written {
                if self.indexable_facts(namespace, &node).await?.as_ref() != Some(&facts) {
                    self.project_with(namespace, &node, vectors).await?;
                }
            }
        }
        Ok((upserted, removed))
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
    async fn project_once(
        &self,
        namespace: &Namespace,
        node: &NodeId,
        vectors: Vectors,
    ) -> AppResult<(Projection, Option<NodeFacts>)> {
        let Some(item) = self.projectable(namespace, node).await? else {
            return Ok((self.unindex(node).await?, None));
        };
        let facts = item.facts.clone();
        self.index_documents(vec![item], vectors).await?;
        Ok((Projection::Upserted, Some(facts)))
    }

    /// The node as the index should hold it, read from its row and verified body; `None`
    /// when it has no readable content (forgotten, retired), so its entry must go.
    async fn projectable(&self, namespace: &Namespace, node: &NodeId) -> AppResult<Option<Projectable>> {
        let scope = std::slice::from_ref(namespace);
        Ok(match node {
            NodeId::Leaf(id) => match self.ports.store.leaf(scope, id).await? {
                Some(leaf) if leaf.status != LeafStatus::Tombstone => {
                    let body = self.read_body(&leaf.body_path, &leaf.body_sha256).await?;
                    let text = format!("{}\n{}", leaf.title, body);
                    Some(Projectable { node: node.clone(), facts: NodeFacts::of_leaf(&leaf), text })
                }
                _ => None,
            },
            NodeId::Summary(id) => match self.ports.store.summary(scope, id).await? {
                Some(s) if matches!(s.status, SummaryStatus::Current | SummaryStatus::Stale) => {
                    let text = format!("{}\n{}", s.title, s.summary);
                    Some(Projectable { node: node.clone(), facts: NodeFacts::of_summary(&s), text })
                }
                _ => None,
            },
        })
    }

    /// Embeds (with [`Vectors::Now`]) and upserts documents, in one call each. Restricted text
    /// is embedded only by an embedder on this machine, or not at all (it stays searchable by
    /// full text).
    pub(crate) async fn index_documents(&self, items: Vec<Projectable>, vectors: Vectors) -> AppResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        let mut embeddings: Vec<Option<Embedding>> = vec![None; items.len()];
        if vectors == Vectors::Later {
            // Only what the index does not hold yet: a runner that projected the node first,
            // vector and all, is not undone; one that comes later brings everything up to date.
            let docs = items
                .into_iter()
                .map(|item| IndexDoc { text: item.indexed_text(), id: item.node, facts: item.facts, embedding: None })
                .collect();
            return Ok(self.ports.index.insert_missing(docs).await?);
        }
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
            .map(|(item, embedding)| IndexDoc {
                text: item.indexed_text(),
                id: item.node,
                facts: item.facts,
                embedding,
            })
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
    markdown::prose(document)
}
