//! A deterministic embedder that needs no model: feature hashing of words and word pairs into
//! a fixed number of signed buckets, L2-normalized. Texts that share words get similar
//! vectors; it knows nothing of synonyms. For tests, zero-setup runs, and as a floor to beat.

use std::collections::BTreeMap;

use arbor_domain::text::tokenize;
use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::index::EmbedderId;
use crate::model_ports::{Embedder, Locality};

/// The default dimension: large enough that unrelated short texts rarely collide.
pub const DEFAULT_HASHING_DIMENSIONS: u32 = 256;

#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dimensions: u32,
}

impl Default for HashingEmbedder {
    fn default() -> Self {
        HashingEmbedder { dimensions: DEFAULT_HASHING_DIMENSIONS }
    }
}

impl HashingEmbedder {
    pub fn new(dimensions: u32) -> Result<HashingEmbedder> {
        if !(8..=4096).contains(&dimensions) {
            return Err(Error::invalid("embedder dimensions", format!("{dimensions} is not between 8 and 4096")));
        }
        Ok(HashingEmbedder { dimensions })
    }

    /// The embedding of one text; pure and synchronous.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let tokens = tokenize(text);
        let mut features: BTreeMap<String, f32> = BTreeMap::new();
        for token in &tokens {
            *features.entry(token.clone()).or_default() += 1.0;
        }
        for pair in tokens.windows(2) {
            *features.entry(format!("{} {}", pair[0], pair[1])).or_default() += 0.5;
        }
        let mut vector = vec![0.0f32; self.dimensions as usize];
        for (feature, count) in features {
            let hash = fnv1a(feature.as_bytes());
            let bucket = (hash % u64::from(self.dimensions)) as usize;
            let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
            // Sublinear term frequency: repeating a word helps, but less each time.
            vector[bucket] += sign * (1.0 + count.ln());
        }
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            vector.iter_mut().for_each(|v| *v /= norm);
        }
        vector
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[async_trait]
impl Embedder for HashingEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId { name: "hashing-v1".to_owned(), dimensions: self.dimensions }
    }

    fn locality(&self) -> Locality {
        Locality::Local
    }

    fn is_instant(&self) -> bool {
        true
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn shared_words_are_closer_than_unrelated_text() {
        let e = HashingEmbedder::default();
        let cat = e.embed_one("the cat sits on the mat");
        let cat2 = e.embed_one("a cat sits on a mat");
        let stocks = e.embed_one("stock markets fell today");
        assert!(cosine(&cat, &cat2) > 0.5);
        assert!(cosine(&cat, &stocks).abs() < 0.3);
        assert!(e.embed_one("").iter().all(|v| *v == 0.0));
    }
}
