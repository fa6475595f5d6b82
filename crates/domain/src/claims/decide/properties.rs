//! Properties of the decision by claims over random claims: a claim on another attribute never
//! retires anything, whatever subject, value or polarity either has, and an attribute that
//! holds several values never loses one without an ending of it.

use proptest::prelude::*;

use super::*;
use crate::claims::{CATALOGUE, Subject};
use crate::testkit::proptest_config;

fn subject() -> impl Strategy<Value = Subject> {
    prop::sample::select(vec!["@me", "maya", "maya chen", "maya's sister", "kofi", "standup", "atlas launch"])
        .prop_map(|key| Subject { key: key.to_owned(), name: key.to_owned() })
}

fn value() -> impl Strategy<Value = Option<String>> {
    let values = vec![
        "Porto",
        "Lisbon",
        "the Izmir branch",
        "Izmir",
        "Twi",
        "English",
        "10am",
        "10:00",
        "Fridays at 3pm",
        "the new one",
    ];
    prop::option::weighted(0.9, prop::sample::select(values).prop_map(str::to_owned))
}

/// A catalogue attribute (some with a parameter), an ending's unnamed attribute, or a loose
/// measure.
fn attribute() -> impl Strategy<Value = String> {
    let mut ids: Vec<String> = CATALOGUE.iter().map(|def| def.id.to_owned()).collect();
    ids.extend(["has:manager", "has:dentist", "favorite:food", "for:data_work", "~when", "~price"].map(str::to_owned));
    prop::sample::select(ids)
}

fn claim(polarity: impl Strategy<Value = Polarity>) -> impl Strategy<Value = Claim> {
    (subject(), attribute(), value(), polarity).prop_map(|(subject, attribute, value, polarity)| Claim {
        about: if attribute.starts_with('~') { vec!["standup".to_owned()] } else { Vec::new() },
        subject,
        attribute,
        value,
        polarity,
        when: None,
    })
}

fn polarity() -> impl Strategy<Value = Polarity> {
    prop_oneof![Just(Polarity::Holds), Just(Polarity::Ended)]
}

fn current(claims: &[Vec<Claim>], says_more: bool) -> Vec<Current<'_, usize>> {
    claims.iter().enumerate().map(|(item, claims)| Current { item, claims, says_more }).collect()
}

/// Each memory's claims that `keep` admits; memories left with none are dropped.
fn only(memories: Vec<Vec<Claim>>, keep: impl Fn(&Claim) -> bool) -> Vec<Vec<Claim>> {
    memories
        .into_iter()
        .map(|claims| claims.into_iter().filter(|c| keep(c)).collect::<Vec<_>>())
        .filter(|claims| !claims.is_empty())
        .collect()
}

fn many_valued(claim: &Claim) -> bool {
    claim.definition().is_some_and(|def| def.holds == Holds::Many)
}

fn ids(holds: Option<Holds>) -> Vec<String> {
    CATALOGUE.iter().filter(|def| holds.is_none_or(|h| def.holds == h)).map(|def| def.id.to_owned()).collect()
}

/// Two claims that meet: the same subject and the same value (or another), on two different
/// catalogue attributes.
fn across_attributes() -> impl Strategy<Value = (Claim, Claim)> {
    (claim(polarity()), prop::sample::select(ids(None)), any::<bool>(), value()).prop_filter_map(
        "another attribute",
        |(old, attribute, same_value, value)| {
            // A loose measure's attribute is unknown: the same kind of measure is only ever
            // flagged, which `a_claim_on_another_attribute_never_retires` covers.
            (attribute != old.attribute && !old.is_loose()).then(|| {
                let value = if same_value { old.value.clone() } else { value };
                (Claim { attribute, value, polarity: Polarity::Holds, ..old.clone() }, old)
            })
        },
    )
}

proptest! {
    #![proptest_config(proptest_config())]

    /// A claim that holds, on another attribute than the old one's, about the same subject with
    /// the same value or another, neither retires nor flags it.
    #[test]
    fn another_attribute_of_the_same_subject_and_value_decides_nothing((new, old) in across_attributes()) {
        prop_assert_eq!(judge(&new, &old), None);
        let ended = Claim { polarity: Polarity::Ended, ..new };
        // An ending of the very value on another attribute is only ever a doubt.
        prop_assert!(!matches!(judge(&ended, &old), Some(Judgement::Retire(_))), "{ended:?} retired {old:?}");
    }

    /// A many-valued attribute's value meets another value of the same attribute, of the same
    /// subject, said to hold: both hold.
    #[test]
    fn a_value_added_to_a_many_valued_attribute_retires_none(
        attribute in prop::sample::select(ids(Some(Holds::Many))),
        (subject, old_value, new_value) in (subject(), value(), value()),
    ) {
        let old = Claim { subject: subject.clone(), attribute: attribute.clone(), value: old_value, polarity: Polarity::Holds, when: None, about: Vec::new() };
        let new = Claim { value: new_value, ..old.clone() };
        prop_assert!(!matches!(judge(&new, &old), Some(Judgement::Retire(_))), "{new:?} retired {old:?}");
        let says_more = Current { item: 0, claims: std::slice::from_ref(&old), says_more: false };
        prop_assert!(decide(std::slice::from_ref(&new), &[says_more]).retire.is_empty());
    }

    /// An ending that names no attribute ("left Stripe") retires a value only when it names
    /// that value, of the same subject.
    #[test]
    fn an_ending_by_value_retires_only_that_value(old in claim(Just(Polarity::Holds)), same_value in any::<bool>(), other in value()) {
        let value = if same_value { old.value.clone() } else { other };
        let ending = Claim { attribute: "*".to_owned(), value, polarity: Polarity::Ended, ..old.clone() };
        if let Some(Judgement::Retire(retirement)) = judge(&ending, &old) {
            let (Some(ended), Some(held)) = (&retirement.new.value, &retirement.old.value) else {
                return Err(TestCaseError::fail(format!("an ending naming no value retired {old:?}")));
            };
            prop_assert_eq!(compare(ended, held), ValueMatch::Same);
            prop_assert_eq!(retirement.new.subject.same_as(&retirement.old.subject), SameSubject::Yes);
        }
    }

    /// Whatever the subjects, values and polarities: when no new claim names an attribute of a
    /// current memory's claims, nothing is retired; and a doubt across attributes comes only
    /// from an ending of the very value, or from a loose measure of the same kind.
    #[test]
    fn a_claim_on_another_attribute_never_retires(
        new in prop::collection::vec(claim(polarity()), 1..4),
        old in prop::collection::vec(prop::collection::vec(claim(polarity()), 1..3), 1..4),
        says_more in any::<bool>(),
    ) {
        // An ending that names no attribute ("*") is an ending of a value, whatever holds it.
        let new: Vec<Claim> = new.into_iter().filter(|c| c.attribute != "*").collect();
        let old = only(old, |c| !new.iter().any(|n| n.attribute == c.attribute));
        let decision = decide(&new, &current(&old, says_more));
        prop_assert!(decision.retire.is_empty(), "{:?}", decision.retire);
        for (_, doubt) in &decision.flag {
            prop_assert!(doubt.new.polarity == Polarity::Ended || doubt.new.is_loose() || doubt.old.is_loose(), "{doubt:?}");
        }
    }

    /// A value of a many-valued attribute stays current while only values that hold are said,
    /// of the same attribute and subject or not.
    #[test]
    fn a_many_valued_attribute_never_loses_a_value_without_an_ending(
        new in prop::collection::vec(claim(Just(Polarity::Holds)), 1..4),
        old in prop::collection::vec(prop::collection::vec(claim(Just(Polarity::Holds)), 1..3), 1..4),
        says_more in any::<bool>(),
    ) {
        let old = only(old, many_valued);
        let decision = decide(&new, &current(&old, says_more));
        prop_assert!(decision.retire.is_empty(), "{:?}", decision.retire);
    }

    /// An ending retires a value of a many-valued attribute only when it names that value.
    #[test]
    fn an_ending_retires_only_the_value_it_names(
        new in prop::collection::vec(claim(polarity()), 1..4),
        old in prop::collection::vec(claim(Just(Polarity::Holds)), 1..3),
    ) {
        let old = only(old.into_iter().map(|c| vec![c]).collect(), many_valued);
        let decision = decide(&new, &current(&old, false));
        for (_, retirement) in &decision.retire {
            prop_assert_eq!(retirement.new.polarity, Polarity::Ended);
            let (Some(ended), Some(held)) = (&retirement.new.value, &retirement.old.value) else {
                return Err(TestCaseError::fail(format!("an ending naming no value retired {retirement:?}")));
            };
            prop_assert_eq!(compare(ended, held), ValueMatch::Same);
        }
    }
}
