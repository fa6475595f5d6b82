//! The search port's queries answered on a [`Mirror`]: what every row-backed index does the
//! same way, so it is written once — which terms a text query matches on, hits named by the
//! layer they were found in, and exact rescoring of the approximate vector candidates.

use std::collections::HashMap;

use arbor_domain::text::query_terms;
use arbor_ports::rows::corrupt;
use arbor_ports::{Embedding, Hit, Result, TermSelection, TextQuery, VectorQuery, rarest_terms};

use crate::mirror::{Candidate, Mirror};

/// How many approximate candidates are rescored exactly, per result wanted. int8 quantization
/// keeps the approximate order very close to the exact one, so twice as many is plenty.
const RESCORE_FACTOR: usize = 2;
/// The fewest candidates rescored.
const RESCORE_MIN: usize = 32;

/// How many approximate candidates a vector search keeps for exact rescoring when `limit`
/// results are wanted.
pub fn rescore_pool(limit: usize) -> usize {
    limit.saturating_mul(RESCORE_FACTOR).max(RESCORE_MIN)
}

/// The key vectors of one embedder are grouped under (its name and dimension).
pub fn embedder_key(embedding: &Embedding) -> String {
    embedding.embedder.to_string()
}

impl Mirror {
    /// The terms of `terms` a text search matches on, as `selection` picks them.
    pub fn chosen_terms(&self, terms: Vec<String>, selection: TermSelection) -> Vec<String> {
        match selection {
            TermSelection::All => terms,
            TermSelection::Rarest(n) => {
                let counted = terms.into_iter().map(|term| (self.documents_holding(&term), term));
                rarest_terms(n, counted).into_iter().map(|(_, term)| term).collect()
            }
        }
    }

    /// A full-text query answered: BM25 inside the filter, best first.
    pub fn text_hits(&self, query: &TextQuery) -> Vec<Hit> {
        let terms = query_terms(&query.text);
        if terms.is_empty() || query.limit == 0 {
            return Vec::new();
        }
        let terms = self.chosen_terms(terms, query.terms);
        let mut hits: Vec<Hit> = self
            .search_text(&query.filter, &terms, query.limit)
            .into_iter()
            .map(|hit| Hit {
                id: hit.node,
                namespace: query.filter.layers[hit.layer].namespace.clone(),
                score: hit.score,
            })
            .collect();
        hits.sort_by(Hit::best_first);
        hits
    }

    /// The approximate candidates of a vector query, for [`rescored_hits`].
    pub fn vector_candidates(&mut self, query: &VectorQuery) -> Vec<Candidate> {
        if query.limit == 0 {
            return Vec::new();
        }
        let embedder = embedder_key(&query.embedding);
        self.scan(&query.filter, &embedder, &query.embedding.values, rescore_pool(query.limit))
    }
}

/// Exact similarity of a stored vector with a question's: the dot product of unit vectors,
/// which is their cosine.
pub fn exact_similarity(stored: &[f32], question: &[f32]) -> f32 {
    stored.iter().zip(question).map(|(a, b)| a * b).sum()
}

/// The best `query.limit` of `candidates` by exact similarity (the dot product of unit vectors:
/// cosine) with the stored vectors in `exact` (by row id; a candidate whose vector is gone
/// meanwhile, or is no longer of the question's length, is dropped), best first.
pub fn rescored_hits(
    query: &VectorQuery,
    candidates: Vec<Candidate>,
    exact: &HashMap<i64, Vec<f32>>,
) -> Result<Vec<Hit>> {
    let mut scored: Vec<(Candidate, f32)> = candidates
        .into_iter()
        .filter_map(|c| {
            let vector = exact.get(&c.rowid).filter(|v| v.len() == query.embedding.values.len())?;
            Some((c, exact_similarity(vector, &query.embedding.values)))
        })
        .collect();
    scored.sort_by(|a, b| arbor_ports::best_first((a.1, &a.0.node), (b.1, &b.0.node)));
    scored.truncate(query.limit);
    scored
        .into_iter()
        .map(|(candidate, score)| {
            let layer = candidate.layer.and_then(|i| query.filter.layers.get(i)).ok_or_else(|| {
                corrupt("index document", &candidate.rowid.to_string(), "scanned outside the filter's layers")
            })?;
            Ok(Hit { id: candidate.node, namespace: layer.namespace.clone(), score })
        })
        .collect()
}
