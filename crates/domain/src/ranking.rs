//! Merging ranked candidate lists from several channels (full text, vectors, entities, tree
//! structure) into one ranking, by reciprocal rank fusion.

use std::collections::BTreeMap;

/// The RRF constant, measured rather than taken from the literature's 60. Arbor fuses two
/// channels of at most 50 candidates each; with k = 60 a memory both channels rank in the
/// forties outscores one that a single channel ranks first, which is usually the answer. On the
/// LoCoMo development split (`arbor eval locomo`, local embedder) R@10 was 54.4 at k = 60, 59.1
/// at 20, 62.7 at 10, 63.6 at 5 and 63.8 at 2, with R@50 unchanged (79.3-79.4); 5 keeps some
/// credit for agreement while trusting first places.
pub const RRF_K: f32 = 5.0;

/// Scores closer than this rank as equal within a channel. Backends compute the same
/// similarity or BM25 score along different floating-point paths (f32 or f64, another
/// summation order), so two candidates that tie exactly can come back a few ulps apart, in
/// either order; snapping scores to this grid and breaking ties by key makes every backend
/// rank the same candidates the same way.
pub const SCORE_RESOLUTION: f32 = 1e-4;

/// The similarity a vector hit must exceed to be a candidate at all: at or below zero a text
/// shares nothing with the question (or points away from it), and offering it as evidence is
/// noise.
pub const MIN_VECTOR_SIMILARITY: f32 = 0.0;

/// One channel's hits, best first: by score snapped to [`SCORE_RESOLUTION`], then by key.
pub fn rank_by_score<K: Ord + Clone>(hits: &[(K, f32)]) -> Vec<K> {
    let snap = |score: f32| (f64::from(score) / f64::from(SCORE_RESOLUTION)).round() as i64;
    let mut ranked: Vec<(i64, &K)> = hits.iter().map(|(key, score)| (snap(*score), key)).collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    ranked.into_iter().map(|(_, key)| key.clone()).collect()
}

/// The vector channel: hits above [`MIN_VECTOR_SIMILARITY`], ranked by [`rank_by_score`].
pub fn vector_channel<K: Ord + Clone>(hits: &[(K, f32)]) -> Vec<K> {
    let related: Vec<(K, f32)> = hits.iter().filter(|(_, score)| *score > MIN_VECTOR_SIMILARITY).cloned().collect();
    rank_by_score(&related)
}

/// One channel's contribution to a fused candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRank {
    pub channel: usize,
    /// 1-based rank within the channel.
    pub rank: usize,
}

/// A fused candidate: its key, fused score, and where it ranked in each channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub score: f32,
    pub ranks: Vec<ChannelRank>,
}

/// Reciprocal rank fusion: `score(d) = Σ_channels weight_c / (k + rank_c(d))`. Duplicates within
/// a channel count at their best rank. Output is sorted by score, then by key, so the result is
/// deterministic.
pub fn reciprocal_rank_fusion<K: Ord + Clone>(channels: &[(f32, Vec<K>)], k: f32) -> Vec<Fused<K>> {
    let mut fused: BTreeMap<K, Fused<K>> = BTreeMap::new();
    for (channel, (weight, ranked)) in channels.iter().enumerate() {
        let mut seen = std::collections::BTreeSet::new();
        for (position, key) in ranked.iter().enumerate() {
            if !seen.insert(key) {
                continue;
            }
            let rank = position + 1;
            let entry =
                fused.entry(key.clone()).or_insert_with(|| Fused { key: key.clone(), score: 0.0, ranks: Vec::new() });
            entry.score += weight / (k + rank as f32);
            entry.ranks.push(ChannelRank { channel, rank });
        }
    }
    let mut out: Vec<Fused<K>> = fused.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn scores_a_few_ulps_apart_tie_and_ties_go_by_key() {
        let (low, high) = (-0.247_793_35_f32, -0.247_793_38_f32);
        assert_eq!(super::rank_by_score(&[("c", low), ("a", high), ("b", 0.5)]), ["b", "a", "c"]);
        assert_eq!(super::rank_by_score(&[("c", high), ("a", low), ("b", 0.5)]), ["b", "a", "c"]);
        assert_eq!(super::rank_by_score(&[("a", 0.1), ("b", 0.2)]), ["b", "a"], "real differences still rank");
    }

    #[test]
    fn unrelated_vector_hits_are_not_candidates() {
        assert_eq!(super::vector_channel(&[("a", 0.0), ("b", -0.3), ("c", 0.2)]), ["c"]);
    }

    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn agreement_beats_a_single_first_place() {
        let fused = reciprocal_rank_fusion(&[(1.0, vec!["a", "b", "c"]), (1.0, vec!["b", "d", "a"])], RRF_K);
        let keys: Vec<&str> = fused.iter().map(|f| f.key).collect();
        assert_eq!(keys, vec!["b", "a", "d", "c"]);
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Every input key appears exactly once; a key first in every channel is first overall.
        #[test]
        fn fusion_keeps_every_key_once(channels in proptest::collection::vec(proptest::collection::vec(0u8..20, 0..15), 1..4)) {
            let weighted: Vec<(f32, Vec<u8>)> = channels.iter().map(|c| (1.0, c.clone())).collect();
            let fused = reciprocal_rank_fusion(&weighted, RRF_K);
            let mut keys: Vec<u8> = fused.iter().map(|f| f.key).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            prop_assert_eq!(keys.len(), n);
            let mut all: Vec<u8> = channels.iter().flatten().copied().collect();
            all.sort();
            all.dedup();
            prop_assert_eq!(keys, all);
            prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
            if channels.iter().all(|c| !c.is_empty() && c[0] == channels[0][0]) {
                prop_assert_eq!(fused[0].key, channels[0][0]);
            }
        }
    }
}
