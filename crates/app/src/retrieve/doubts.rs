//! What a pack marks about a memory it holds: another layer's memory about the same subject
//! wins over it (`layer_conflicts`), or a newer memory may have replaced it
//! (`possibly_outdated`: the write-time doubt, the claims of the memories read together, and
//! the question answered again).

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::claims::decide;
use arbor_domain::claims::decide::Current;
use arbor_domain::claims::question::{self, answered_again};
use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::model::LeafRecord;
use arbor_domain::ranking::Fused;
use arbor_domain::read_chain::ReadChain;

use super::NodeRecord;

/// Conflicts between layers: the same subject answered in two namespaces; the loser is marked
/// with the layer that wins and the rule.
pub(super) fn layer_conflicts(chain: &ReadChain, ranked: &[(&Fused<NodeId>, NodeRecord)]) -> BTreeMap<NodeId, String> {
    let mut overridden: BTreeMap<NodeId, String> = BTreeMap::new();
    let mut by_subject: BTreeMap<String, Vec<&LeafRecord>> = BTreeMap::new();
    for (_, record) in ranked {
        if let NodeRecord::Leaf(leaf) = record
            && let Some(subject) = &leaf.subject
        {
            by_subject.entry(subject.as_str().to_owned()).or_default().push(leaf);
        }
    }
    for leaves in by_subject.values() {
        for a in leaves {
            for b in leaves {
                if a.namespace == b.namespace || a.id >= b.id {
                    continue;
                }
                if let Some(verdict) = chain.resolve_conflict((&a.namespace, a.kind), (&b.namespace, b.kind)) {
                    let loser = if verdict.winner == a.namespace { b } else { a };
                    let rule = serde_json::to_value(verdict.rule).ok().and_then(|v| v.as_str().map(str::to_owned));
                    overridden.insert(loser.node_id(), format!("{} ({})", verdict.winner, rule.unwrap_or_default()));
                }
            }
        }
    }
    overridden
}

/// How many of the ranking's first leaves are compared for memories a newer one seems to
/// replace: what a pack holds by default, and half as many again, so the check costs the same
/// at any store size.
const OUTDATED_CHECK_DEPTH: usize = 12;

/// Why a current memory may be outdated: the newer memory, and the attribute both fill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outdated {
    pub(crate) by: LeafId,
    /// The attribute both fill, when their claims say (a newer answer to the same question
    /// says no attribute).
    pub(crate) attribute: Option<String>,
}

/// Current leaves a newer current leaf may have replaced, each with the newest such leaf and
/// the attribute: those a decision marked so at write time (`claims.doubt`, while the newer is
/// still current: `current_doubters`), and, among the first read, those whose claims a newer
/// one's retire or flag (`claims::decide`) — what reconciliation at write time could not see
/// (a person confirmed both, or confirmed them out of order). A pair a person kept is never
/// marked.
pub(super) fn possibly_outdated(
    query: &str,
    ranked: &[(&Fused<NodeId>, NodeRecord)],
    current_doubters: &BTreeSet<LeafId>,
) -> BTreeMap<NodeId, Outdated> {
    let leaves: Vec<&LeafRecord> = ranked
        .iter()
        .filter_map(|(_, record)| match record {
            NodeRecord::Leaf(leaf) => Some(leaf),
            NodeRecord::Summary(_) => None,
        })
        .collect();
    let mut outdated: BTreeMap<NodeId, Outdated> = BTreeMap::new();
    let mut mark = |older: &LeafRecord, by: &LeafId, attribute: Option<&str>| {
        let found = Outdated { by: by.clone(), attribute: attribute.map(str::to_owned) };
        let entry = outdated.entry(older.node_id()).or_insert_with(|| found.clone());
        if entry.by < *by {
            *entry = found;
        }
    };
    for leaf in &leaves {
        if let Some(doubt) = &leaf.claims.doubt
            && current_doubters.contains(&doubt.by)
        {
            mark(leaf, &doubt.by, Some(&doubt.attribute));
        }
    }
    let read: Vec<&LeafRecord> = leaves.iter().take(OUTDATED_CHECK_DEPTH).copied().collect();
    for newer in &read {
        if newer.claims.claims.is_empty() {
            continue;
        }
        let earlier: Vec<&LeafRecord> = read
            .iter()
            .filter(|older| {
                older.namespace == newer.namespace
                    && (older.observed_at, &older.id) < (newer.observed_at, &newer.id)
                    && older.lineage != newer.lineage
                    && !older.claims.kept_with(&newer.lineage)
                    && !newer.claims.kept_with(&older.lineage)
            })
            .copied()
            .collect();
        let current: Vec<Current<'_, usize>> = earlier
            .iter()
            .enumerate()
            .map(|(at, leaf)| Current { item: at, claims: &leaf.claims.claims, says_more: leaf.claims.says_more })
            .collect();
        let decision = decide(&newer.claims.claims, &current);
        for (at, retirement) in decision.retire {
            mark(earlier[at], &newer.id, Some(&retirement.attribute));
        }
        for (at, doubt) in decision.flag {
            mark(earlier[at], &newer.id, Some(&doubt.attribute));
        }
    }
    // Two memories that answer the question the same way, the newer too (`claims::question`),
    // of one namespace and not kept together by a person.
    let mut by_time = read.clone();
    by_time.sort_by(|a, b| (a.observed_at, &a.id).cmp(&(b.observed_at, &b.id)));
    let answers: Vec<question::Answer<'_>> = by_time
        .iter()
        .map(|leaf| question::Answer { text: &leaf.summary, placed: leaf.claims.claims.iter().any(|c| !c.is_loose()) })
        .collect();
    for (older, newer) in answered_again(query, &answers) {
        let (older, newer) = (by_time[older], by_time[newer]);
        let together = older.namespace != newer.namespace
            || older.lineage == newer.lineage
            || older.claims.kept_with(&newer.lineage)
            || newer.claims.kept_with(&older.lineage);
        if !together {
            outdated.entry(older.node_id()).or_insert_with(|| Outdated { by: newer.id.clone(), attribute: None });
        }
    }
    outdated
}
