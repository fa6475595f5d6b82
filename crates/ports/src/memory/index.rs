//! The in-memory search index: the reference implementation of [`SearchIndex`], with BM25 over
//! the documents the filter admits and exact cosine similarity.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use arbor_domain::id::NodeId;
use arbor_domain::text::{index_tokens, query_terms};
use arbor_domain::visibility::NodeFacts;
use async_trait::async_trait;

use crate::error::Result;
use crate::index::{Hit, IndexCapabilities, IndexDoc, SearchIndex, TermSelection, TextQuery, VectorQuery};

const BACKEND: &str = "memory";
const BM25_K1: f32 = crate::index::BM25_K1 as f32;
const BM25_B: f32 = crate::index::BM25_B as f32;

#[derive(Debug, Default)]
pub struct InMemorySearchIndex {
    docs: Mutex<BTreeMap<NodeId, Stored>>,
}

#[derive(Debug, Clone)]
struct Stored {
    doc: IndexDoc,
    tokens: Vec<String>,
}

impl InMemorySearchIndex {
    pub fn new() -> InMemorySearchIndex {
        InMemorySearchIndex::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<NodeId, Stored>> {
        self.docs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn sort_hits(hits: &mut Vec<Hit>, limit: usize) {
    hits.sort_by(Hit::best_first);
    hits.truncate(limit);
}

#[async_trait]
impl SearchIndex for InMemorySearchIndex {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> IndexCapabilities {
        IndexCapabilities { full_text: true, vectors: true }
    }

    async fn upsert(&self, docs: Vec<IndexDoc>) -> Result<()> {
        let mut stored = self.lock();
        for doc in docs {
            let tokens = index_tokens(&doc.text);
            stored.insert(doc.id.clone(), Stored { doc, tokens });
        }
        Ok(())
    }

    async fn insert_missing(&self, docs: Vec<IndexDoc>) -> Result<()> {
        let mut stored = self.lock();
        for doc in docs {
            if !stored.contains_key(&doc.id) {
                let tokens = index_tokens(&doc.text);
                stored.insert(doc.id.clone(), Stored { doc, tokens });
            }
        }
        Ok(())
    }

    async fn set_facts(&self, updates: Vec<(NodeId, NodeFacts)>) -> Result<()> {
        let mut stored = self.lock();
        for (id, facts) in updates {
            if let Some(entry) = stored.get_mut(&id) {
                entry.doc.facts = facts;
            }
        }
        Ok(())
    }

    async fn remove(&self, ids: &[NodeId]) -> Result<()> {
        let mut stored = self.lock();
        for id in ids {
            stored.remove(id);
        }
        Ok(())
    }

    async fn search_text(&self, query: &TextQuery) -> Result<Vec<Hit>> {
        let mut terms: BTreeSet<String> = query_terms(&query.text).into_iter().collect();
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let stored = self.lock();
        if let TermSelection::Rarest(n) = query.terms {
            terms = rarest(&stored, &terms, n);
        }
        // Filter first, then score: corpus statistics come from what the caller may see.
        let admitted: Vec<&Stored> = stored.values().filter(|s| query.filter.admits(&s.doc.facts)).collect();
        let n = admitted.len() as f32;
        let avg_len = admitted.iter().map(|s| s.tokens.len() as f32).sum::<f32>() / n.max(1.0);
        let mut df: BTreeMap<&str, f32> = BTreeMap::new();
        for s in &admitted {
            let unique: BTreeSet<&str> = s.tokens.iter().map(String::as_str).filter(|t| terms.contains(*t)).collect();
            for t in unique {
                *df.entry(t).or_default() += 1.0;
            }
        }
        let mut hits: Vec<Hit> = admitted
            .iter()
            .filter_map(|s| {
                let len = s.tokens.len() as f32;
                let score: f32 = terms
                    .iter()
                    .map(|term| {
                        let tf = s.tokens.iter().filter(|t| *t == term).count() as f32;
                        if tf == 0.0 {
                            return 0.0;
                        }
                        let df = df.get(term.as_str()).copied().unwrap_or(0.0);
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * len / avg_len.max(1.0)))
                    })
                    .sum();
                (score > 0.0).then(|| Hit { id: s.doc.id.clone(), namespace: s.doc.facts.namespace.clone(), score })
            })
            .collect();
        sort_hits(&mut hits, query.limit);
        Ok(hits)
    }

    async fn search_vector(&self, query: &VectorQuery) -> Result<Vec<Hit>> {
        let stored = self.lock();
        let mut hits: Vec<Hit> = stored
            .values()
            .filter(|s| query.filter.admits(&s.doc.facts))
            .filter_map(|s| {
                let embedding = s.doc.embedding.as_ref()?;
                if embedding.embedder != query.embedding.embedder
                    || embedding.values.len() != query.embedding.values.len()
                {
                    return None;
                }
                let score = embedding.values.iter().zip(&query.embedding.values).map(|(a, b)| a * b).sum();
                Some(Hit { id: s.doc.id.clone(), namespace: s.doc.facts.namespace.clone(), score })
            })
            .collect();
        sort_hits(&mut hits, query.limit);
        Ok(hits)
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        Ok(self.lock().values().any(|s| s.doc.text.contains(needle)))
    }

    async fn count(&self) -> Result<usize> {
        Ok(self.lock().len())
    }

    async fn clear(&self) -> Result<()> {
        self.lock().clear();
        Ok(())
    }
}

/// The `n` terms of `terms` the fewest stored documents hold (over the whole index), ties by
/// term; terms no document holds are passed over.
fn rarest(stored: &BTreeMap<NodeId, Stored>, terms: &BTreeSet<String>, n: usize) -> BTreeSet<String> {
    let counted = terms.iter().map(|term| (stored.values().filter(|s| s.tokens.contains(term)).count() as u64, term));
    crate::index::rarest_terms(n, counted).into_iter().map(|(_, term)| term.clone()).collect()
}
