//! A model reasoner's word on the pairs the claims found: what it may change in the rules'
//! decision, and what it may not.
//!
//! When a model reasoner is configured, the write path shows it the new memory beside the
//! current memories its claims were compared with (the candidate pairs) and asks, of each,
//! whether the new one **updates** it (naming the attribute), **keeps** it (both stay true) or
//! **repeats** it. The answer is a proposal, checked here against the catalogue:
//!
//! - **keeps** vetoes a rules retirement of that pair: both stay current, the older marked as
//!   possibly outdated ([`FlagReason::JudgesDisagree`]) — the rules and the model disagree, so
//!   nothing is hidden and a person can see the doubt;
//! - **updates** proves a doubt the rules could not settle — the subjects are probably one, or
//!   the values could not be told apart — when the attribute it names is the doubt's and holds
//!   one value at a time, and the old memory says nothing else (every claim on that attribute,
//!   no words beyond its claims: it is retired whole) ([`RetireRule::Judged`]): a retirement,
//!   recorded and undoable like any;
//! - **updates** of a pair the rules left alone is a doubt, never a retirement
//!   ([`FlagReason::JudgedUpdate`]): a model's word alone does not hide a fact, and it only
//!   marks one when it names a catalogue attribute one of the two memories' claims fill and
//!   the two may be about one subject;
//! - a doubt the rules raised because the old memory says more than the claim replaced stays a
//!   doubt whatever the model says: retiring it would hide the rest;
//! - **repeats** changes nothing here (duplicates are the supersession step's), nor does a
//!   verdict on a memory the model was not shown.

use serde::{Deserialize, Serialize};

use super::decide::{Current, Decision, Doubt, FlagReason, RetireRule, Retirement};
use super::{Claim, Holds, SameSubject, definition};
use crate::id::LeafId;

/// The most current memories one judgement shows the model beside the new one.
pub const PAIRS_PER_JUDGEMENT: usize = 6;

/// A current memory shown to the model beside the new one.
#[derive(Debug, Clone, PartialEq)]
pub struct PairCandidate {
    pub id: LeafId,
    pub text: String,
    /// The attributes its claims fill, as the catalogue names them: a hint, and the only
    /// attributes (with the new memory's) an answer may name.
    pub attributes: Vec<String>,
}

/// What the model is asked: the new memory, the attributes its claims fill, and the current
/// memories it may replace.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRequest {
    pub text: String,
    pub attributes: Vec<String>,
    pub candidates: Vec<PairCandidate>,
}

/// The model's word on one pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum PairVerdict {
    /// The new memory replaces what the old one says of `attribute`.
    Updates { attribute: String },
    /// Both stay true.
    Keeps,
    /// The new memory says the same again.
    Repeats,
}

/// One verdict, on a candidate the model was shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairJudgement {
    pub leaf_id: LeafId,
    #[serde(flatten)]
    pub verdict: PairVerdict,
}

/// The rules' `decision` over `candidates` (each item with its claims) after the model's
/// `verdicts` on them, by the rules in this module's header. `new` are the new memory's claims.
pub fn overrule<T: Clone + PartialEq>(
    decision: Decision<T>,
    new: &[Claim],
    candidates: &[Current<'_, T>],
    verdicts: &[(T, PairVerdict)],
) -> Decision<T> {
    // A memory is retired whole, so a verdict proves a doubt only of a memory that says
    // nothing but the doubted attribute: the rules' own bar for a retirement.
    let only_says = |item: &T, attribute: &str| {
        candidates.iter().find(|c| c.item == *item).is_some_and(|c| {
            !c.says_more && !c.claims.is_empty() && c.claims.iter().all(|claim| claim.attribute == attribute)
        })
    };
    let verdict_on = |item: &T| verdicts.iter().find(|(shown, _)| shown == item).map(|(_, v)| v);
    let mut out = Decision::default();
    for (item, retirement) in decision.retire {
        match verdict_on(&item) {
            Some(PairVerdict::Keeps) => {
                let Retirement { attribute, new, old, .. } = retirement;
                out.flag.push((item, Doubt { reason: FlagReason::JudgesDisagree, attribute, new, old }));
            }
            _ => out.retire.push((item, retirement)),
        }
    }
    for (item, doubt) in decision.flag {
        let proves = match verdict_on(&item) {
            Some(PairVerdict::Updates { attribute }) => {
                matches!(doubt.reason, FlagReason::MaybeSameSubject | FlagReason::ValuesUnclear)
                    && *attribute == doubt.attribute
                    && holds_one(attribute)
                    && only_says(&item, attribute)
            }
            _ => false,
        };
        if proves {
            let Doubt { attribute, new, old, .. } = doubt;
            out.retire.push((item, Retirement { rule: RetireRule::Judged, attribute, new, old }));
        } else {
            out.flag.push((item, doubt));
        }
    }
    for Current { item, claims: old_claims, .. } in candidates {
        let decided = out.retire.iter().any(|(i, _)| i == item) || out.flag.iter().any(|(i, _)| i == item);
        if decided {
            continue;
        }
        let Some(PairVerdict::Updates { attribute }) = verdict_on(item) else { continue };
        let Some((new_claim, old_claim)) = pair_on(attribute, new, old_claims) else { continue };
        let doubt =
            Doubt { reason: FlagReason::JudgedUpdate, attribute: attribute.clone(), new: new_claim, old: old_claim };
        out.flag.push((item.clone(), doubt));
    }
    out
}

/// Which of the `candidates` (each a current memory's claims, in the order the rules were
/// given them) a model is shown beside a new memory with claims `new`: those the rules'
/// `decision` retired or flagged, in that order, then — newest first, as candidates come
/// oldest first — those that may share a subject with it; at most [`PAIRS_PER_JUDGEMENT`].
/// Decided pairs come first because a verdict on them can change what is current; the others
/// can only be flagged.
pub fn pairs_to_show(decision: &Decision<usize>, new: &[Claim], candidates: &[&[Claim]]) -> Vec<usize> {
    let decided =
        |at: usize| decision.retire.iter().any(|(i, _)| *i == at) || decision.flag.iter().any(|(i, _)| *i == at);
    let mut shown: Vec<usize> = (0..candidates.len()).filter(|&at| decided(at)).collect();
    shown.extend((0..candidates.len()).rev().filter(|&at| !decided(at) && may_share_subject(new, candidates[at])));
    shown.truncate(PAIRS_PER_JUDGEMENT);
    shown
}

/// Whether some claim of `new` and some claim of `old` may be about one subject: the pairs
/// worth showing a model beyond those the rules decided (another person's address is not).
pub fn may_share_subject(new: &[Claim], old: &[Claim]) -> bool {
    new.iter().any(|n| old.iter().any(|o| n.subject.same_as(&o.subject) != SameSubject::No))
}

fn holds_one(attribute: &str) -> bool {
    definition(attribute).is_some_and(|def| def.holds == Holds::One)
}

/// The claims a judged update of `attribute` rests on: a catalogue attribute one of the two
/// memories fills, with the claim of the other memory on the same subject if any (else its
/// first claim). `None` when neither fills it: the model named an attribute the memories'
/// claims do not show, which marks nothing.
fn pair_on(attribute: &str, new: &[Claim], old: &[Claim]) -> Option<(Claim, Claim)> {
    definition(attribute)?;
    if !may_share_subject(new, old) {
        return None;
    }
    let on = |claims: &[Claim]| claims.iter().find(|c| c.attribute == attribute).cloned();
    match (on(new), on(old)) {
        (Some(n), Some(o)) => Some((n, o)),
        (Some(n), None) => {
            let o = old.iter().find(|c| c.subject.key == n.subject.key).or(old.first())?.clone();
            Some((n, o))
        }
        (None, Some(o)) => {
            let n = new.iter().find(|c| c.subject.key == o.subject.key).or(new.first())?.clone();
            Some((n, o))
        }
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests;
