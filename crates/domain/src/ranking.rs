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
///
/// Ties fall by id, and the ids one `Arbor` makes sort in the order it made them
/// (`Arbor::fresh_id`), so among candidates of one kind a channel cannot tell apart the one
/// written first comes first (a leaf's id sorts before a summary's by its prefix), and the same
/// events ingested afresh rank the same. Ids made by two processes in the same millisecond
/// have no such order between them.
pub const SCORE_RESOLUTION: f32 = 1e-4;

/// The similarity a vector hit must exceed to be a candidate at all: at or below zero a text
/// shares nothing with the question (or points away from it), and offering it as evidence is
/// noise.
pub const MIN_VECTOR_SIMILARITY: f32 = 0.0;

/// The similarity below which a hit found by an embedder alone does not bear on the question,
/// for the embedders it was measured on; `None` for the rest, whose every hit above
/// [`MIN_VECTOR_SIMILARITY`] counts (a model nobody calibrated may relate texts at any
/// similarity, and leaving a relevant memory out is the worse mistake).
///
/// A hit that shares a word with the question (full text), lies in a tree of an entity it names,
/// or is of a kind it asks for bears on it whatever its similarity; this floor only decides
/// about hits the vectors alone found. Without one, every question gets an answer: "What is the
/// capital of France?" would be answered with whatever memories lie closest.
///
/// `full_text` is whether the index also searches by words: feature hashing's floor rests on
/// the full-text channel finding every hit that shares a content word, so over an index
/// without one its vectors are the only way to find anything, and every hit counts.
pub fn relevance_floor(embedder: &str, full_text: bool) -> Option<f32> {
    match embedder {
        // Feature hashing measures shared words and word pairs, stop words included. A hit that
        // shares a content word with the question is the full-text channel's too; one found by
        // the vectors alone shares only stop words ("is", "the", "of" put "What is the capital
        // of France?" at 0.38 from "Dana is leading the migration") or a bucket by chance. On
        // the LoCoMo development split, leaving those out raised R@10 from 66.1 to 67.4.
        "hashing-v1" if full_text => Some(f32::INFINITY),
        "hashing-v1" => None,
        // all-MiniLM-L6-v2: on the LoCoMo development split no evidence turn that the vectors
        // alone put in the top ten was below 0.31; off-topic questions against a project's notes
        // ("What is the capital of France?", "How do I bake sourdough bread?", "Who won the
        // 2018 World Cup?") find nothing at or above 0.2. The floor sits well under the lowest
        // evidence seen, since a missed memory costs more than a weak one shown: at 0.2 no R@10
        // figure moved; at 0.35 overall R@10 fell 0.2 points, at 0.5 2.4.
        "all-minilm-l6-v2" => Some(0.2),
        _ => None,
    }
}

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

/// How many of the best fused candidates lend context to the nodes around them in their tree.
pub const CONTEXT_ANCHORS: usize = 5;

/// How many leaves on each side of a strong hit, in its tree's timeline, inherit its score. In
/// a conversation a question and its answer are often two turns apart (asked, answered,
/// reacted to).
pub const CONTEXT_TURNS: usize = 2;

/// The share of a strong hit's fused score its tree neighbours inherit. A memory is rarely
/// complete in one turn: the answer to "when did Melanie paint a sunrise?" is often the reply
/// just after the turn that matches the words. Measured on the LoCoMo development split
/// (`arbor eval locomo`, local embedder, stemmed full text): R@10 66.7 without context, 74.4
/// with these settings. With the top 5 hits lending 0.5 of their score, one turn each side gave
/// 72.7, two 74.6, three 74.0 (measured before the preference channel existed); 3 or 8 anchors
/// and a share of 0.35 did no better. Multi-hop questions gain nothing from it (39.3 -> 38.8).
pub const CONTEXT_SHARE: f32 = 0.5;

/// Tree-structure propagation [design §channels: candidates from tree structure]: each `(anchor,
/// neighbour)` link gives `neighbour` `share` times `anchor`'s fused score (the best such
/// anchor's, if several link to it), recorded under `channel` with the anchor's position in
/// `fused` as the rank — but never lifts it above the anchor: context ranks just below the
/// evidence it is context for (in a small tree where every hit neighbours another, uncapped
/// sharing would reshuffle the direct hits; on LoCoMo the cap costs nothing, 69.2 either way).
/// Neighbours that were not candidates join; the result is re-sorted. Links whose anchor is
/// not in `fused` are ignored.
pub fn lend_context<K: Ord + Clone>(
    mut fused: Vec<Fused<K>>,
    links: &[(K, K)],
    channel: usize,
    share: f32,
) -> Vec<Fused<K>> {
    let position: BTreeMap<&K, usize> = fused.iter().enumerate().map(|(i, f)| (&f.key, i)).collect();
    // The best anchor for each neighbour: (inherited score, anchor's score, anchor's rank).
    let mut lent: BTreeMap<K, (f32, f32, usize)> = BTreeMap::new();
    for (anchor, neighbour) in links {
        let Some(&at) = position.get(anchor) else { continue };
        if anchor == neighbour {
            continue;
        }
        let offer = (share * fused[at].score, fused[at].score, at + 1);
        let best = lent.entry(neighbour.clone()).or_insert(offer);
        if offer.0 > best.0 {
            *best = offer;
        }
    }
    let mut index: BTreeMap<K, usize> = fused.iter().enumerate().map(|(i, f)| (f.key.clone(), i)).collect();
    for (key, (score, ceiling, rank)) in lent {
        let at = *index.entry(key.clone()).or_insert_with(|| {
            fused.push(Fused { key, score: 0.0, ranks: Vec::new() });
            fused.len() - 1
        });
        let own = fused[at].score;
        fused[at].score = own.max((own + score).min(ceiling.next_down()));
        fused[at].ranks.push(ChannelRank { channel, rank });
    }
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    fused
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

    /// A calibrated floor for the embedders measured; an uncalibrated model keeps every hit;
    /// feature hashing's vectors never count alone, however close, unless the index has no full text.
    #[test]
    fn relevance_floors_are_per_embedder() {
        assert_eq!(relevance_floor("all-minilm-l6-v2", true), Some(0.2));
        assert_eq!(relevance_floor("some-new-model", true), None);
        let hashing = relevance_floor("hashing-v1", true).unwrap();
        assert!(1.0 < hashing, "even an identical text's vector alone is not enough");
        assert_eq!(relevance_floor("hashing-v1", false), None, "without full text, the vectors are all there is");
    }
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn agreement_beats_a_single_first_place() {
        let fused = reciprocal_rank_fusion(&[(1.0, vec!["a", "b", "c"]), (1.0, vec!["b", "d", "a"])], RRF_K);
        let keys: Vec<&str> = fused.iter().map(|f| f.key).collect();
        assert_eq!(keys, vec!["b", "a", "d", "c"]);
    }

    #[test]
    fn neighbours_inherit_a_share_of_their_best_anchor() {
        let fused = reciprocal_rank_fusion(&[(1.0, vec!["a", "b", "c"])], RRF_K);
        let links = [("a", "n"), ("c", "n"), ("b", "c"), ("zzz", "m"), ("a", "a")];
        let lent = lend_context(fused, &links, 7, 0.5);
        let keys: Vec<&str> = lent.iter().map(|f| f.key).collect();
        // a 1/6, b 1/7, c 1/8 + 1/14 capped just below b, n 1/12: the neighbour of the first
        // place beats the third, and context never outranks the hit that lent it.
        assert_eq!(keys, vec!["a", "b", "c", "n"]);
        let c = lent.iter().find(|f| f.key == "c").unwrap();
        assert!(c.score > 1.0 / 8.0 && c.score < 1.0 / 7.0, "{}", c.score);
        let n = lent.iter().find(|f| f.key == "n").unwrap();
        assert_eq!(n.ranks, vec![ChannelRank { channel: 7, rank: 1 }], "lent by a, the first place");
        assert!((n.score - 0.5 / 6.0).abs() < 1e-6);
        assert!(!keys.contains(&"m"), "an anchor that is not a candidate lends nothing");
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Context never removes a candidate, never lowers a score, never lifts a node above
        /// the anchor that lent to it, and a neighbour that was not a candidate ranks below it.
        #[test]
        fn lending_context_only_adds(
            ranked in proptest::collection::vec(0u8..30, 1..15),
            links in proptest::collection::vec((0u8..30, 0u8..40), 0..20),
        ) {
            let fused = reciprocal_rank_fusion(&[(1.0, ranked.clone())], RRF_K);
            let before: BTreeMap<u8, f32> = fused.iter().map(|f| (f.key, f.score)).collect();
            let order: Vec<u8> = fused.iter().map(|f| f.key).collect();
            let lent = lend_context(fused, &links, 1, CONTEXT_SHARE);
            prop_assert!(lent.windows(2).all(|w| w[0].score >= w[1].score));
            for (key, score) in &before {
                let now = lent.iter().find(|f| f.key == *key);
                prop_assert!(now.is_some_and(|f| f.score >= *score));
            }
            for f in &lent {
                let own = before.get(&f.key).copied().unwrap_or(0.0);
                for lender in f.ranks.iter().filter(|r| r.channel == 1) {
                    let anchor = order[lender.rank - 1];
                    prop_assert!(f.score <= own.max(before[&anchor]), "lifted above its anchor");
                }
            }
            for f in lent.iter().filter(|f| !before.contains_key(&f.key)) {
                let anchor_rank = f.ranks[0].rank;
                let anchor = lent.iter().position(|g| before.contains_key(&g.key) && f.score <= g.score);
                prop_assert!(anchor.is_some(), "a new neighbour (lent by #{}) outranks every candidate", anchor_rank);
            }
        }

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
