//! The decision: what a new memory's claims do to the current memories' claims.
//!
//! A current memory is **retired** only on proof, by one of two rules:
//! - [`RetireRule::OneValue`]: a new claim has the same subject and the same attribute as one
//!   of its claims, the attribute holds one value at a time, and the value differs ("works at
//!   the Izmir branch" after "works at the Ankara branch");
//! - [`RetireRule::Ended`]: a new claim ends that value ("quit smoking", "sold the Golf", "no
//!   longer works at Stripe"), or says a value it said had ended holds again.
//!
//! It is **flagged** as possibly outdated — kept current, shown marked beside the newer one —
//! when one of those would apply but is not proven: the subjects are only probably one
//! ("Maya" and "Maya Chen"), the values cannot be told apart ("the new one"), an ending names
//! no value of an attribute that holds several, or the old memory says more than the claim
//! the new one replaces ("lives in Porto with her two cats": the cats are still true).
//!
//! Everything else is left alone, and above all: a claim on another attribute never retires
//! or flags anything, whatever words the two memories share; a many-valued attribute never
//! loses a value without an explicit ending of that value.

use serde::{Deserialize, Serialize};

use super::values::{ValueMatch, compare};
use super::{Claim, Holds, Polarity, SameSubject};

/// Why a claim retires another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetireRule {
    /// Same subject and attribute, an attribute that holds one value, another value.
    OneValue,
    /// The value ended, or what was said to have ended holds again.
    Ended,
    /// A model reasoner proved a doubt of the rules: the same attribute, one value at a time
    /// (`claims::judged`).
    Judged,
}

impl RetireRule {
    pub fn as_str(self) -> &'static str {
        match self {
            RetireRule::OneValue => "one_value",
            RetireRule::Ended => "ended",
            RetireRule::Judged => "judged",
        }
    }
}

/// Why a pair is flagged rather than decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagReason {
    /// The subjects are probably one ("Maya", "Maya Chen"), not by proof.
    MaybeSameSubject,
    /// The values cannot be told apart or share only part of their words.
    ValuesUnclear,
    /// An ending that names no value, of an attribute that holds several.
    EndedWithoutValue,
    /// The old memory says more than the claim that is replaced.
    SaysMore,
    /// A measure of the same kind (a time, a price, an amount) said of the same thing in other
    /// words, with another value: a loose claim, which never retires.
    SameKindOfValue,
    /// The rules proved a replacement and a model reasoner judged both true (`claims::judged`).
    JudgesDisagree,
    /// A model reasoner judged it replaced where the rules saw nothing to prove
    /// (`claims::judged`).
    JudgedUpdate,
}

impl FlagReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagReason::MaybeSameSubject => "maybe_same_subject",
            FlagReason::ValuesUnclear => "values_unclear",
            FlagReason::EndedWithoutValue => "ended_without_value",
            FlagReason::SaysMore => "says_more",
            FlagReason::SameKindOfValue => "same_kind_of_value",
            FlagReason::JudgesDisagree => "judges_disagree",
            FlagReason::JudgedUpdate => "judged_update",
        }
    }
}

/// A proven replacement: the rule, and the two claims it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retirement {
    pub rule: RetireRule,
    /// The attribute both fill.
    pub attribute: String,
    pub new: Claim,
    pub old: Claim,
}

/// A replacement that is not proven: the reason, and the two claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doubt {
    pub reason: FlagReason,
    pub attribute: String,
    pub new: Claim,
    pub old: Claim,
}

/// What one claim does to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    Retire(Retirement),
    Flag(Doubt),
}

/// What `new` does to `old`: retire, flag, or (`None`) nothing.
pub fn judge(new: &Claim, old: &Claim) -> Option<Judgement> {
    if new.is_loose() || old.is_loose() {
        return judge_loose(new, old);
    }
    let any = new.attribute == "*";
    if !any && new.attribute != old.attribute {
        return ended_elsewhere(new, old);
    }
    if old.attribute == "*" {
        return None;
    }
    let same = new.subject.same_as(&old.subject);
    if same == SameSubject::No {
        return None;
    }
    let attribute = old.attribute.clone();
    let retire = |rule| {
        Some(Judgement::Retire(Retirement { rule, attribute: attribute.clone(), new: new.clone(), old: old.clone() }))
    };
    let flag = |reason| {
        Some(Judgement::Flag(Doubt { reason, attribute: attribute.clone(), new: new.clone(), old: old.clone() }))
    };
    let proven = |rule| if same == SameSubject::Yes { retire(rule) } else { flag(FlagReason::MaybeSameSubject) };
    let values = match (&new.value, &old.value) {
        (Some(a), Some(b)) => compare(a, b),
        _ => ValueMatch::Unknown,
    };
    match (new.polarity, old.polarity) {
        // An ending: of this value, or (naming none) of whatever one value the attribute holds.
        (Polarity::Ended, Polarity::Holds) => match (&new.value, values) {
            (None, _) if any => None,
            (None, _) if old.holds() == Holds::One => proven(RetireRule::Ended),
            (None, _) => flag(FlagReason::EndedWithoutValue),
            // An ending by name alone ends what held that name, not a bigger thing that only
            // begins with it: "closed Google Chrome" does not end "works at Google". Nor does it
            // end a person in someone's life: "left Tom", "returned Ana" say nothing of who
            // anyone is to them ("left Tom at the airport", "returned Ana her keys"); only a
            // relationship's own verbs end one ("broke up with Tom"). Neither is a doubt either,
            // which a model's verdict could turn into a retirement.
            (Some(ended), ValueMatch::Same)
                if any
                    && (!ends_no_more_than(ended, old.value.as_deref())
                        || is_a_person_in_their_life(&old.attribute)) =>
            {
                None
            }
            (Some(_), ValueMatch::Same) => proven(RetireRule::Ended),
            (Some(_), ValueMatch::Partly) if !any => flag(FlagReason::ValuesUnclear),
            _ => None,
        },
        // What was said to have ended holds again ("smokes again" after "quit smoking").
        (Polarity::Holds, Polarity::Ended) if !any => match values {
            ValueMatch::Same => proven(RetireRule::Ended),
            _ => None,
        },
        (Polarity::Holds, Polarity::Holds) if !any && old.holds() == Holds::One => match values {
            ValueMatch::Same => None,
            ValueMatch::Different => proven(RetireRule::OneValue),
            ValueMatch::Partly | ValueMatch::Unknown => flag(FlagReason::ValuesUnclear),
        },
        _ => None,
    }
}

/// Whether an attribute's values are beings in someone's life: the people around them
/// ("has:partner", "has:manager", "has:dentist"), their relationship, their children and their
/// pets. One leaves, returns or drops off a being by name without ending who it is to them
/// ("left Max at the kennel", "dropped Mia at school").
fn is_a_person_in_their_life(attribute: &str) -> bool {
    attribute.starts_with("has:") || matches!(attribute, "relationship" | "children" | "pets")
}

/// Whether every term of the value an ending names is a term of the value that held: "Google"
/// for "Google LLC", not "Google Chrome" for "Google".
fn ends_no_more_than(ended: &str, held: Option<&str>) -> bool {
    held.is_some_and(|held| super::values::terms(ended).is_subset(&super::values::terms(held)))
}

/// An ending by value on another attribute than the old claim's ("cancelled his FitLife
/// membership" after "Victor's gym membership is at FitLife"): the same value, ended, of the
/// same subject or a thing of theirs — flagged, since the attributes differ.
fn ended_elsewhere(new: &Claim, old: &Claim) -> Option<Judgement> {
    if new.polarity != Polarity::Ended || old.polarity != Polarity::Holds || old.is_loose() {
        return None;
    }
    let owned = old.subject.key.starts_with(&format!("{} ", new.subject.key));
    if new.subject.same_as(&old.subject) == SameSubject::No && !owned {
        return None;
    }
    let (Some(a), Some(b)) = (&new.value, &old.value) else { return None };
    (compare(a, b) == ValueMatch::Same).then(|| {
        Judgement::Flag(Doubt {
            reason: FlagReason::ValuesUnclear,
            attribute: old.attribute.clone(),
            new: new.clone(),
            old: old.clone(),
        })
    })
}

/// A loose claim against another claim: the same kind of measure, the same subject or one the
/// new memory names, and everything the old one's measure is said of said again by the new
/// one ("window cleaner Dave £18" → "paid Dave £22, his new price" does not qualify; "Noah's
/// practice is Wednesdays at 5" → "Noah's Hawks practice, which is Thursdays at 5:30" does),
/// with another value: flagged, never retired — which attribute the measure fills is not known.
fn judge_loose(new: &Claim, old: &Claim) -> Option<Judgement> {
    let kind = new.measure()?;
    if old.measure() != Some(kind) || new.polarity != Polarity::Holds || old.polarity != Polarity::Holds {
        return None;
    }
    let words = |claim: &Claim| -> std::collections::BTreeSet<String> {
        claim.about.iter().cloned().chain(super::values::terms(&claim.subject.key)).collect()
    };
    let (new_words, old_words) = (words(new), words(old));
    let same = new.subject.same_as(&old.subject);
    // A thing ("the Orion beta") has one time, price or version of each kind said of it plainly;
    // a person has many ("prefers meetings before 10am", "wants status notes on Fridays"): for
    // a person, what the measure is said of must be said again.
    let a_thing = same == SameSubject::Yes && !person_like(&old.subject);
    let named = (old_words.is_subset(&new_words) && !old_words.is_empty()) || a_thing;
    if !(named && (same != SameSubject::No || old.subject.key.starts_with('@') == new.subject.key.starts_with('@'))) {
        return None;
    }
    let (Some(a), Some(b)) = (&new.value, &old.value) else { return None };
    (compare(a, b) == ValueMatch::Different).then(|| {
        Judgement::Flag(Doubt {
            reason: FlagReason::SameKindOfValue,
            attribute: kind.to_owned(),
            new: new.clone(),
            old: old.clone(),
        })
    })
}

/// Whether a subject stands for a person: the first person, someone's relative, or a name of
/// capitalised words only ("Maya Chen"; "the Orion beta", "Helix code review" are things).
fn person_like(subject: &super::Subject) -> bool {
    subject.key.starts_with('@')
        || subject.key.contains("'s ")
        || subject.name.split_whitespace().all(|w| w.chars().next().is_some_and(char::is_uppercase))
}

/// What a new memory's claims do to the current memories: each current memory retired,
/// flagged, or left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision<T> {
    /// Current memories proven replaced, each with the retirement that proves it (the first
    /// by claim order when several do).
    pub retire: Vec<(T, Retirement)>,
    /// Current memories that may be outdated, each with why.
    pub flag: Vec<(T, Doubt)>,
}

impl<T> Default for Decision<T> {
    fn default() -> Self {
        Decision { retire: Vec::new(), flag: Vec::new() }
    }
}

/// A current memory as the decision sees it: its claims, and whether its text says more than
/// its claims (words no claim accounts for).
#[derive(Debug, Clone, Copy)]
pub struct Current<'a, T> {
    pub item: T,
    pub claims: &'a [Claim],
    pub says_more: bool,
}

/// Decides what `new` (a memory's claims) does to each of `current`.
///
/// A current memory is retired when one of its claims is proven replaced and every one of its
/// other claims is too, and it says nothing its claims do not; otherwise a proven replacement
/// of one of its claims flags it ([`FlagReason::SaysMore`]): what else it says stays visible.
pub fn decide<T: Clone>(new: &[Claim], current: &[Current<'_, T>]) -> Decision<T> {
    let mut decision = Decision::default();
    for memory in current {
        let mut retirements: Vec<Retirement> = Vec::new();
        let mut doubts: Vec<Doubt> = Vec::new();
        for old in memory.claims {
            for claim in new {
                match judge(claim, old) {
                    Some(Judgement::Retire(retirement)) => {
                        retirements.push(retirement);
                        break;
                    }
                    Some(Judgement::Flag(doubt)) => doubts.push(doubt),
                    None => {}
                }
            }
        }
        if let Some(first) = retirements.first().cloned() {
            let every_claim =
                memory.claims.iter().all(|c| c.attribute == "*" || retirements.iter().any(|r| &r.old == c));
            if every_claim && !memory.says_more {
                decision.retire.push((memory.item.clone(), first));
            } else {
                let Retirement { attribute, new, old, .. } = first;
                decision.flag.push((memory.item.clone(), Doubt { reason: FlagReason::SaysMore, attribute, new, old }));
            }
        } else if let Some(doubt) = doubts.into_iter().min_by_key(|d| d.reason) {
            decision.flag.push((memory.item.clone(), doubt));
        }
    }
    decision
}

#[cfg(test)]
mod pairs;
#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::{ME, Subject};

    fn claim(subject: &str, attribute: &str, value: Option<&str>, polarity: Polarity) -> Claim {
        let subject = Subject { key: subject.to_owned(), name: subject.to_owned() };
        Claim {
            subject,
            attribute: attribute.to_owned(),
            value: value.map(str::to_owned),
            polarity,
            when: None,
            about: Vec::new(),
        }
    }

    fn holds(subject: &str, attribute: &str, value: &str) -> Claim {
        claim(subject, attribute, Some(value), Polarity::Holds)
    }

    fn rule(new: &Claim, old: &Claim) -> Option<&'static str> {
        match judge(new, old)? {
            Judgement::Retire(r) => Some(r.rule.as_str()),
            Judgement::Flag(d) => Some(d.reason.as_str()),
        }
    }

    #[test]
    fn one_value_retires_only_a_different_value_of_the_same_subject_and_attribute() {
        let old = holds("elif", "workplace", "the Ankara branch");
        assert_eq!(rule(&holds("elif", "workplace", "the Izmir branch"), &old), Some("one_value"));
        assert_eq!(rule(&holds("elif", "workplace", "Ankara"), &old), None, "the same value restated");
        assert_eq!(rule(&holds("elif", "employer", "Garanti"), &old), None, "another attribute");
        assert_eq!(rule(&holds("omar's sister", "workplace", "Izmir"), &old), None, "another subject");
        assert_eq!(rule(&holds("elif kaya", "workplace", "the Izmir branch"), &old), Some("maybe_same_subject"));
        assert_eq!(rule(&holds("elif", "workplace", "the new place"), &old), Some("values_unclear"));
    }

    #[test]
    fn many_values_join_and_leave_only_by_an_ending() {
        let twi = holds("kofi", "languages", "Twi");
        assert_eq!(rule(&holds("kofi", "languages", "Portuguese"), &twi), None);
        assert_eq!(rule(&claim("kofi", "languages", Some("Twi"), Polarity::Ended), &twi), Some("ended"));
        assert_eq!(rule(&claim("kofi", "languages", Some("Ewe"), Polarity::Ended), &twi), None);
        assert_eq!(rule(&claim("kofi", "languages", None, Polarity::Ended), &twi), Some("ended_without_value"));
    }

    #[test]
    fn an_ending_by_value_retires_whatever_attribute_held_it() {
        let stripe = holds("tom", "employer", "Stripe");
        assert_eq!(rule(&claim("tom", "*", Some("Stripe"), Polarity::Ended), &stripe), Some("ended"));
        assert_eq!(rule(&claim("tom", "*", Some("the keys"), Polarity::Ended), &stripe), None);
        assert_eq!(rule(&claim("tom", "*", Some("Anthropic"), Polarity::Holds), &stripe), None);
        let quit = claim(ME, "habits", Some("smoking"), Polarity::Ended);
        assert_eq!(rule(&holds(ME, "habits", "smokes"), &quit), Some("ended"), "smoking again");
    }

    #[test]
    fn a_memory_that_says_more_is_flagged_not_retired() {
        let porto = [holds("maya", "residence", "Porto")];
        let with_cats = [holds("maya", "residence", "Porto"), holds("maya", "pets", "two cats")];
        let new = [holds("maya", "residence", "Amsterdam")];
        let current = [
            Current { item: 1, claims: &porto, says_more: false },
            Current { item: 2, claims: &with_cats, says_more: false },
            Current { item: 3, claims: &porto, says_more: true },
        ];
        let decision = decide(&new, &current);
        assert_eq!(decision.retire.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1]);
        assert_eq!(
            decision.flag.iter().map(|(i, d)| (*i, d.reason)).collect::<Vec<_>>(),
            [(2, FlagReason::SaysMore), (3, FlagReason::SaysMore)]
        );
    }
}
