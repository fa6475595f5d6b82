//! The model's verdicts against the rules' decision, on memories read by the claims reader:
//! a veto keeps both, a proof needs a doubt on a one-valued attribute, a lone "updates" is a
//! doubt at most, and nothing the model says retires a pair the rules did not find.

use proptest::prelude::*;

use super::*;
use crate::claims::decide::{Current, decide};
use crate::claims::read;
use crate::testkit::proptest_config;

/// The rules' decision of `new` over `old` (oldest first), and the overruled one.
fn judged(old: &[&str], new: &str, verdicts: &[(usize, PairVerdict)]) -> (Decision<usize>, Decision<usize>) {
    let olds: Vec<_> = old.iter().map(|t| read(t)).collect();
    let new = read(new);
    let current: Vec<Current<'_, usize>> = olds
        .iter()
        .enumerate()
        .map(|(item, r)| Current { item, claims: &r.claims, says_more: r.says_more() })
        .collect();
    let rules = decide(&new.claims, &current);
    let overruled = overrule(rules.clone(), &new.claims, &current, verdicts);
    (rules, overruled)
}

fn updates(attribute: &str) -> PairVerdict {
    PairVerdict::Updates { attribute: attribute.to_owned() }
}

#[test]
fn keeps_vetoes_a_rules_retirement_and_leaves_the_doubt_visible() {
    let (rules, overruled) =
        judged(&["Maya lives in Porto."], "Maya lives in Amsterdam now.", &[(0, PairVerdict::Keeps)]);
    assert_eq!(rules.retire.len(), 1, "the rules retire the move: {rules:?}");
    assert!(overruled.retire.is_empty());
    assert_eq!(overruled.flag.len(), 1);
    assert_eq!(overruled.flag[0].1.reason, FlagReason::JudgesDisagree);
    assert_eq!(overruled.flag[0].1.attribute, rules.retire[0].1.attribute);
}

#[test]
fn a_verdict_that_agrees_or_repeats_changes_nothing() {
    for verdict in [updates("residence"), PairVerdict::Repeats] {
        let (rules, overruled) = judged(&["Maya lives in Porto."], "Maya lives in Amsterdam now.", &[(0, verdict)]);
        assert_eq!(rules, overruled);
    }
}

#[test]
fn updates_proves_a_doubt_on_the_same_one_valued_attribute() {
    let (rules, overruled) =
        judged(&["Maya lives in Porto."], "Maya Chen lives in Amsterdam now.", &[(0, updates("residence"))]);
    assert_eq!(rules.flag.len(), 1, "probably the same Maya: {rules:?}");
    assert_eq!(rules.flag[0].1.reason, FlagReason::MaybeSameSubject);
    assert_eq!(overruled.retire.len(), 1);
    assert_eq!(overruled.retire[0].1.rule, RetireRule::Judged);
    assert!(overruled.flag.is_empty());
}

#[test]
fn updates_of_another_attribute_proves_nothing() {
    let (rules, overruled) =
        judged(&["Maya lives in Porto."], "Maya Chen lives in Amsterdam now.", &[(0, updates("employer"))]);
    assert_eq!(rules, overruled);
}

#[test]
fn a_memory_that_says_more_is_never_retired_by_a_verdict() {
    let (rules, overruled) = judged(
        &["Maya lives in Porto with her two cats and volunteers at the shelter on weekends."],
        "Maya lives in Amsterdam now.",
        &[(0, updates("residence"))],
    );
    assert!(rules.retire.is_empty(), "{rules:?}");
    assert!(overruled.retire.is_empty(), "what else it says stays current: {overruled:?}");
}

/// Found by review: a maybe-same subject gives a doubt, not the says-more flag, so the proof
/// must itself check that the memory says nothing else.
#[test]
fn a_proof_never_retires_a_memory_with_other_facts_about_a_maybe_same_subject() {
    for old in [
        "Maya lives in Porto with her two cats and volunteers at the shelter on weekends.",
        "Maya lives in Porto and works at Stripe.",
    ] {
        let (rules, overruled) = judged(&[old], "Maya Chen lives in Amsterdam now.", &[(0, updates("residence"))]);
        assert!(rules.retire.is_empty(), "{rules:?}");
        assert_eq!(rules.flag.len(), 1, "the rules doubt it: {rules:?}");
        assert!(overruled.retire.is_empty(), "{old}: what else it says stays current: {overruled:?}");
    }
}

#[test]
fn a_lone_update_verdict_is_a_doubt_naming_an_attribute_the_claims_fill() {
    // The rules see two attributes of Jonah; a model that says "updates" marks, never retires.
    let old = ["Jonah plays bass in a jazz trio."];
    let new = "Jonah moved to Lisbon last spring.";
    let (rules, _) = judged(&old, new, &[]);
    assert_eq!(rules, Decision::default(), "another attribute: the rules leave it alone");
    let attribute = read(old[0]).claims[0].attribute.clone();
    let (_, overruled) = judged(&old, new, &[(0, updates(&attribute))]);
    assert!(overruled.retire.is_empty());
    assert_eq!(overruled.flag.len(), 1);
    assert_eq!(overruled.flag[0].1.reason, FlagReason::JudgedUpdate);
    // An attribute the catalogue does not hold, or neither memory fills, marks nothing.
    for named in ["instrument_of_choice", "diet"] {
        let (_, overruled) = judged(&old, new, &[(0, updates(named))]);
        assert_eq!(overruled, Decision::default(), "{named}");
    }
}

#[test]
fn a_verdict_on_a_memory_not_shown_is_ignored() {
    let (rules, overruled) =
        judged(&["Maya lives in Porto."], "Maya lives in Amsterdam now.", &[(7, PairVerdict::Keeps)]);
    assert_eq!(rules, overruled);
}

const MEMORIES: &[&str] = &[
    "Maya lives in Porto.",
    "Maya Chen lives in Lisbon.",
    "Maya works at Stripe.",
    "Maya speaks Portuguese and English.",
    "Maya is allergic to tree nuts.",
    "Maya drives a red Golf.",
    "Kofi lives in Accra.",
    "I work at the Ankara branch.",
];

fn verdict() -> impl Strategy<Value = PairVerdict> {
    prop_oneof![
        Just(PairVerdict::Keeps),
        Just(PairVerdict::Repeats),
        prop::sample::select(vec!["residence", "employer", "languages", "allergies", "car", "nonsense"])
            .prop_map(updates),
    ]
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Whatever the model says, it retires only what the rules retired or doubted, and every
    /// memory the rules retired or doubted stays either retired or doubted: a verdict moves a
    /// pair between the two, never out of sight of both.
    #[test]
    fn verdicts_only_move_pairs_the_rules_found(
        old in prop::collection::vec(prop::sample::select(MEMORIES.to_vec()), 1..5),
        new in prop::sample::select(MEMORIES.to_vec()),
        verdicts in prop::collection::vec((0usize..5, verdict()), 0..5),
    ) {
        let (rules, overruled) = judged(&old, new, &verdicts);
        let found = |d: &Decision<usize>, i: usize| d.retire.iter().any(|(x, _)| *x == i) || d.flag.iter().any(|(x, _)| *x == i);
        for (i, _) in &overruled.retire {
            prop_assert!(found(&rules, *i), "retired {i}, which the rules did not find");
        }
        for i in 0..old.len() {
            if found(&rules, i) {
                prop_assert!(found(&overruled, i));
            }
        }
    }
}

/// What a model is shown: the pairs the rules decided, then the newest of those that may share
/// a subject, never another person's, at most [`PAIRS_PER_JUDGEMENT`].
#[test]
fn the_decided_pairs_are_shown_first_then_the_newest_that_may_share_a_subject() {
    let mut texts = vec!["Maya lives in Porto.", "Omar lives in Cairo."];
    texts.extend(std::iter::repeat_n("Maya plays the cello.", PAIRS_PER_JUDGEMENT + 2));
    let olds: Vec<_> = texts.iter().map(|t| read(t)).collect();
    let new = read("Maya lives in Amsterdam now.");
    let current: Vec<Current<'_, usize>> = olds
        .iter()
        .enumerate()
        .map(|(item, r)| Current { item, claims: &r.claims, says_more: r.says_more() })
        .collect();
    let decision = decide(&new.claims, &current);
    let claims: Vec<&[Claim]> = olds.iter().map(|r| r.claims.as_slice()).collect();
    let shown = pairs_to_show(&decision, &new.claims, &claims);
    assert_eq!(shown.len(), PAIRS_PER_JUDGEMENT);
    assert_eq!(shown[0], 0, "the retired one first: {shown:?}");
    assert!(!shown.contains(&1), "another person's address is not shown: {shown:?}");
    let last = texts.len() - 1;
    assert_eq!(&shown[1..], (last - PAIRS_PER_JUDGEMENT + 2..=last).rev().collect::<Vec<_>>(), "newest first");
}
