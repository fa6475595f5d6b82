//! `Consolidation` ("dream"): what a pass over the memories written since the last pass
//! proposes, in hindsight, for each of them against the current memories of its namespace.
//!
//! Write-time reconciliation sees only what was current and indexed when a memory arrived. A
//! pass catches what it could not: two processes writing at once, a batch indexed later,
//! history imported out of order, near-duplicates filed in different trees. For every pair of
//! current memories of one namespace where at least one was written since the last pass:
//! - **merge** (a NOOP for what is known): the two say the same thing — the same fingerprint or
//!   nearly all the same words (`heuristics::same_words`) — and the later one stays;
//! - **update**: the later one's claims retire the earlier by the claims decision
//!   (`claims::decide`: the same subject, an attribute that holds one value, another value);
//! - **invalidate**: the same, where the later one ends the earlier's value ("quit",
//!   "cancelled", "no longer", "broke up") rather than giving a new one;
//! - **add**: anything else, which is left alone.
//!
//! Each memory is retired at most once, by the latest memory that replaces it; proposals are
//! made oldest first, so a chain of updates retires each version by the next. The app applies
//! a proposal only when the later memory is no less authoritative than the earlier one
//! (`conflict_between` finds no conflict); the rest are reported for a person. Nothing is ever
//! deleted: a retired memory stays as history, closed where its successor starts.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::claims::decide::Current;
use crate::claims::{LeafClaims, RetireRule, decide};
use crate::heuristics::{content_words, same_words};
use crate::id::LeafId;
use crate::lifecycle::LeafStatus;
use crate::model::{Confidence, Fingerprint, LeafRecord};
use crate::reconcile::Claim;
use crate::sensitivity::Sensitivity;
use crate::supersession::DuplicateJudgement;
use crate::time::Timestamp;

/// What a pass may change about a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    Merge,
    Update,
    Invalidate,
}

impl ProposalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalKind::Merge => "merge",
            ProposalKind::Update => "update",
            ProposalKind::Invalidate => "invalidate",
        }
    }
}

/// One proposed change: `retire` gives way to `keep`, for `reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proposal {
    pub kind: ProposalKind,
    /// The earlier memory, retired as history.
    pub retire: LeafId,
    /// The later memory, which stays current.
    pub keep: LeafId,
    /// Why, in the rules' own words (rule and attribute names, never the memories' words, so
    /// a report keeps nothing a forget would have to find).
    pub reason: String,
    /// For an update or an invalidation by claims: the rule and the attribute it rests on.
    pub by_claims: Option<(RetireRule, String)>,
}

/// What a pass knows of one current memory.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentMemory {
    pub id: LeafId,
    pub text: String,
    pub fingerprint: Fingerprint,
    /// When it was said (its observation time): the later of two is the newer fact.
    pub observed_at: Timestamp,
    /// Written since the last pass.
    pub changed: bool,
    /// For a changed memory, the current memories most like it: the only ones it is compared
    /// with, so a pass costs what changed, not the square of what it read.
    pub like: Vec<LeafId>,
    /// Its lineage and its claims (with the memories a person kept beside it, which no pass
    /// retires it for).
    pub lineage: LeafId,
    pub claims: LeafClaims,
}

/// What the merge rule reads of a memory: its fingerprint, its content words and the people
/// and things it names. Consolidation merges by it, and health counts duplicates by it
/// (`health::repeating`), so a store reported to hold duplicates holds what a pass would merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SameMemory {
    pub fingerprint: Fingerprint,
    pub words: BTreeSet<String>,
    pub named: BTreeSet<String>,
}

impl SameMemory {
    /// `text` as `claim` read it, with its `fingerprint`.
    pub fn of(claim: &Claim, text: &str, fingerprint: &Fingerprint) -> SameMemory {
        SameMemory {
            fingerprint: fingerprint.clone(),
            words: content_words(text),
            named: claim.mentions.iter().map(|m| m.key.as_str().to_owned()).collect(),
        }
    }

    /// Why this memory says again what `other` says, if it does: the same words (the same
    /// fingerprint, or nearly all the same content words, `heuristics::same_words`) naming the
    /// same people and things (two people's identical commutes are two memories).
    pub fn repeats(&self, other: &SameMemory) -> Option<String> {
        if self.named != other.named {
            return None;
        }
        if self.fingerprint == other.fingerprint {
            return Some("the same words".to_owned());
        }
        same_words(&self.words, &other.words).map(|overlap| format!("{}% of the same words", (overlap * 100.0).round()))
    }
}

/// How many earlier memories a reasoner is shown with one changed memory: the newest of those
/// filed under what it names, as many as one prompt holds comfortably.
pub const JUDGED_CANDIDATES: usize = 8;

/// The consolidation rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Consolidation;

/// Whether a pass reads `leaf` at all: only current memories, and never a restricted one — a
/// proposal or report about it would tell agents that read the same namespaces without that
/// clearance that it exists.
pub fn reads(leaf: &LeafRecord) -> bool {
    leaf.status == LeafStatus::Active && leaf.sensitivity != Sensitivity::Restricted
}

impl Consolidation {
    /// The proposals for `memories` (the current memories of one namespace: those written
    /// since the last pass and those like them), oldest first.
    pub fn propose(&self, memories: &[CurrentMemory]) -> Vec<Proposal> {
        let mut order: Vec<&CurrentMemory> = memories.iter().collect();
        order.sort_by(|a, b| (a.observed_at, &a.id).cmp(&(b.observed_at, &b.id)));
        order.dedup_by(|a, b| a.id == b.id);
        let claims: Vec<Claim> = order.iter().map(|m| Claim::read(&m.text)).collect();
        let readings: Vec<SameMemory> =
            order.iter().zip(&claims).map(|(m, claim)| SameMemory::of(claim, &m.text, &m.fingerprint)).collect();
        // Who is compared with whom: each changed memory with the memories like it.
        let at: BTreeMap<&LeafId, usize> = order.iter().enumerate().map(|(i, m)| (&m.id, i)).collect();
        let mut related: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); order.len()];
        for (i, memory) in order.iter().enumerate().filter(|(_, m)| m.changed) {
            for j in memory.like.iter().filter_map(|id| at.get(id).copied()).filter(|&j| j != i) {
                related[i].insert(j);
                related[j].insert(i);
            }
        }
        let mut retired: BTreeSet<usize> = BTreeSet::new();
        let mut proposals = Vec::new();
        // From the newest down, each memory retires at most one earlier memory, the one it
        // replaces best, as at write time: a chain of updates retires each version by the next.
        for later in (0..order.len()).rev() {
            let newer = order[later];
            let earlier: Vec<usize> =
                related[later].iter().copied().filter(|&i| i < later && !retired.contains(&i)).collect();
            let merge = earlier.iter().rev().find_map(|&i| Some((i, readings[later].repeats(&readings[i])?)));
            let proposal = match merge {
                Some((i, reason)) => Some((i, ProposalKind::Merge, reason, None)),
                None => {
                    // By claims, as at write time, less the pairs a person kept together or a
                    // model reasoner judged both true; the latest earlier memory a proof retires.
                    let current: Vec<Current<'_, usize>> = earlier
                        .iter()
                        .filter(|&&i| !held_beside(order[i], newer) && order[i].lineage != newer.lineage)
                        .map(|&i| Current {
                            item: i,
                            claims: &order[i].claims.claims,
                            says_more: order[i].claims.says_more,
                        })
                        .collect();
                    let decision = decide(&newer.claims.claims, &current);
                    decision.retire.into_iter().max_by_key(|(i, _)| *i).map(|(i, retirement)| {
                        let kind = match retirement.rule {
                            RetireRule::Ended => ProposalKind::Invalidate,
                            RetireRule::OneValue | RetireRule::Judged => ProposalKind::Update,
                        };
                        let reason = format!("same subject and {}: {}", retirement.attribute, retirement.rule.as_str());
                        (i, kind, reason, Some((retirement.rule, retirement.attribute)))
                    })
                }
            };
            if let Some((i, kind, reason, by_claims)) = proposal {
                retired.insert(i);
                let retire = order[i].id.clone();
                proposals.push((i, Proposal { kind, retire, keep: newer.id.clone(), reason, by_claims }));
            }
        }
        proposals.sort_by(|a, b| (a.0, &a.1.retire).cmp(&(b.0, &b.1.retire)));
        proposals.into_iter().map(|(_, p)| p).collect()
    }

    /// A reasoner's judgement of `newer` against the earlier current memories it was `shown`,
    /// validated as at write time: it must name one of them, observed before `newer`, and say
    /// that `newer` repeats it (a merge) or replaces it (an update) with at least
    /// `min_confidence`. Anything else proposes nothing. The reason names the reasoner and its
    /// confidence, never the memories' words.
    pub fn judged(
        &self,
        newer: &CurrentMemory,
        shown: &[&CurrentMemory],
        judgement: &DuplicateJudgement,
        min_confidence: Confidence,
        reasoner: &str,
    ) -> Option<Proposal> {
        let (leaf_id, confidence, kind, verdict) = match judgement {
            DuplicateJudgement::SameMemory { leaf_id, confidence } => {
                (leaf_id, *confidence, ProposalKind::Merge, "the same memory")
            }
            DuplicateJudgement::Supersedes { leaf_id, confidence } => {
                (leaf_id, *confidence, ProposalKind::Update, "replaces it")
            }
            DuplicateJudgement::Distinct => return None,
        };
        if !Confidence::new(confidence).is_ok_and(|c| c >= min_confidence) {
            return None;
        }
        let earlier = |m: &&&CurrentMemory| (m.observed_at, &m.id) < (newer.observed_at, &newer.id);
        let target = shown.iter().filter(earlier).find(|m| m.id.as_str() == leaf_id)?;
        if held_beside(target, newer) {
            return None;
        }
        Some(Proposal {
            kind,
            retire: target.id.clone(),
            keep: newer.id.clone(),
            reason: format!("judged by the reasoner {reasoner}: {verdict} (confidence {confidence:.2})"),
            by_claims: None,
        })
    }
}

/// Whether `older` stays current beside `newer` whatever a pass finds: a person kept the two
/// together (a restore), or a model reasoner judged both true when the rules would have retired
/// `older` at write time (a veto). Neither the rules nor a judgement in hindsight retires it.
pub fn held_beside(older: &CurrentMemory, newer: &CurrentMemory) -> bool {
    older.claims.never_retired_for(&newer.lineage) || newer.claims.kept_with(&older.lineage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::fingerprint;

    fn memory(id: &str, text: &str, day: i64, changed: bool) -> CurrentMemory {
        CurrentMemory {
            lineage: LeafId::parse(id).unwrap(),
            claims: LeafClaims::read(text),
            id: LeafId::parse(id).unwrap(),
            text: text.to_owned(),
            fingerprint: fingerprint(text),
            observed_at: Timestamp::from_second(day * 86_400).unwrap(),
            changed,
            like: Vec::new(),
        }
    }

    /// Every changed memory is like every other: what the tests compare.
    fn all_alike(mut memories: Vec<CurrentMemory>) -> Vec<CurrentMemory> {
        let ids: Vec<LeafId> = memories.iter().map(|m| m.id.clone()).collect();
        for memory in &mut memories {
            memory.like = ids.clone();
        }
        memories
    }

    fn kinds(proposals: &[Proposal]) -> Vec<(&str, &str, &str)> {
        proposals.iter().map(|p| (p.kind.as_str(), p.retire.as_str(), p.keep.as_str())).collect()
    }

    #[test]
    fn merges_updates_invalidates_and_leaves_the_rest() {
        let memories = [
            memory("leaf-1", "Maya lives in Porto.", 1, false),
            memory("leaf-2", "Maya is allergic to peanuts.", 2, false),
            memory("leaf-3", "Nora is dating Felix.", 3, false),
            memory("leaf-4", "Maya just moved to Amsterdam for her new job.", 10, true),
            memory("leaf-5", "Nora and Felix broke up in August.", 11, true),
            memory("leaf-6", "Maya is allergic to peanuts!", 12, true),
            // A memory that says more than what is replaced stays current.
            memory("leaf-7", "Grace lives in Dublin with her two cats.", 13, false),
            memory("leaf-8", "Grace moved to Cork.", 14, true),
        ];
        let proposals = Consolidation.propose(&all_alike(memories.to_vec()));
        assert_eq!(
            kinds(&proposals),
            [("update", "leaf-1", "leaf-4"), ("merge", "leaf-2", "leaf-6"), ("invalidate", "leaf-3", "leaf-5")]
        );
        // The reasons hold rule names, never the memories' words.
        assert!(proposals.iter().all(|p| !p.reason.contains("maya") && !p.reason.contains("Porto")), "{proposals:?}");
    }

    /// A reasoner's answer proposes a change only when it names a memory it was shown, earlier
    /// than the changed one, confidently enough.
    #[test]
    fn a_judgement_is_validated_before_it_proposes() {
        let old = memory("leaf-1", "The Helix pipeline runs nightly.", 1, false);
        let other = memory("leaf-2", "Helix has three maintainers.", 2, false);
        let new = memory("leaf-3", "The Helix pipeline is continuous these days.", 9, true);
        let later = memory("leaf-4", "Helix pipeline notes.", 12, false);
        let shown = [&old, &other, &later];
        let min = Confidence::saturating(0.75);
        let judge = |judgement: DuplicateJudgement| Consolidation.judged(&new, &shown, &judgement, min, "m/1");
        let update = judge(DuplicateJudgement::Supersedes { leaf_id: "leaf-1".into(), confidence: 0.9 }).unwrap();
        assert_eq!(
            (update.kind, update.retire.as_str(), update.keep.as_str()),
            (ProposalKind::Update, "leaf-1", "leaf-3")
        );
        assert_eq!(update.reason, "judged by the reasoner m/1: replaces it (confidence 0.90)");
        let merge = judge(DuplicateJudgement::SameMemory { leaf_id: "leaf-2".into(), confidence: 0.8 }).unwrap();
        assert_eq!(merge.kind, ProposalKind::Merge);
        for refused in [
            DuplicateJudgement::Distinct,
            DuplicateJudgement::Supersedes { leaf_id: "leaf-1".into(), confidence: 0.5 },
            DuplicateJudgement::Supersedes { leaf_id: "leaf-9".into(), confidence: 0.9 },
            // Not earlier than the changed memory: a later one is never retired by it.
            DuplicateJudgement::Supersedes { leaf_id: "leaf-4".into(), confidence: 0.9 },
            DuplicateJudgement::Supersedes { leaf_id: "leaf-3".into(), confidence: 0.9 },
            DuplicateJudgement::SameMemory { leaf_id: "leaf-1".into(), confidence: f32::NAN },
        ] {
            assert_eq!(judge(refused.clone()), None, "{refused:?}");
        }
    }

    /// A pair a person kept together, or a model judged both true at write time, is retired
    /// neither by the rules' proof nor by a judgement in hindsight, whatever doubt it carries.
    #[test]
    fn a_pair_held_beside_is_never_proposed_by_rules_or_judgement() {
        let mut vetoed = memory("leaf-1", "Maya lives in Porto.", 1, false);
        let mut restored = memory("leaf-2", "Grace lives in Dublin.", 2, false);
        let maya = memory("leaf-3", "Maya lives in Amsterdam now.", 9, true);
        let mut grace = memory("leaf-4", "Grace lives in Cork now.", 10, true);
        vetoed.claims.judged_with.push(maya.lineage.clone());
        grace.claims.kept_with.push(restored.lineage.clone());
        // A later doubt replaced the veto's mark: the veto holds by itself.
        vetoed.claims.doubt = None;
        restored.claims.doubt = None;
        let memories = all_alike(vec![vetoed.clone(), restored.clone(), maya.clone(), grace.clone()]);
        assert_eq!(kinds(&Consolidation.propose(&memories)), []);
        let min = Confidence::saturating(0.75);
        for (newer, older) in [(&maya, &vetoed), (&grace, &restored)] {
            let supersedes = DuplicateJudgement::Supersedes { leaf_id: older.id.to_string(), confidence: 0.99 };
            assert_eq!(Consolidation.judged(newer, &[older], &supersedes, min, "m/1"), None, "{}", older.text);
        }
        // Without the marks, both pairs are proposed: the test is about the marks.
        let unmarked: Vec<CurrentMemory> = [vetoed, restored, maya, grace]
            .into_iter()
            .map(|m| CurrentMemory { claims: m.claims.unmarked(), ..m })
            .collect();
        assert_eq!(Consolidation.propose(&all_alike(unmarked)).len(), 2);
    }

    #[test]
    fn the_same_words_about_someone_else_are_another_memory() {
        let memories = [
            memory("leaf-1", "Ana takes the 7:45 train from Utrecht to Amsterdam every weekday.", 1, false),
            memory("leaf-2", "Tom takes the 7:45 train from Utrecht to Amsterdam every weekday.", 2, true),
        ];
        assert!(Consolidation.propose(&all_alike(memories.to_vec())).is_empty());
    }

    #[test]
    fn only_what_changed_since_the_last_pass_is_looked_at_and_a_chain_retires_each_version_once() {
        let unchanged = [
            memory("leaf-1", "Maya lives in Porto.", 1, false),
            memory("leaf-2", "Maya just moved to Lisbon.", 2, false),
        ];
        assert!(Consolidation.propose(&all_alike(unchanged.to_vec())).is_empty());
        let chain = [
            memory("leaf-1", "Maya lives in Porto.", 1, true),
            memory("leaf-2", "Maya just moved to Lisbon.", 2, true),
            memory("leaf-3", "Maya just moved to Amsterdam.", 3, true),
        ];
        let proposals = Consolidation.propose(&all_alike(chain.to_vec()));
        assert_eq!(kinds(&proposals), [("update", "leaf-1", "leaf-2"), ("update", "leaf-2", "leaf-3")]);
    }
}
