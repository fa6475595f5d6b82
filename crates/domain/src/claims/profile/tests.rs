//! Tests of the profile: current values from current memories' claims, history from the marks
//! retirements left, an unproven replacement shown as a doubt, and the subject a caller asks for.

use super::*;
use crate::claims::decide::RetireRule;
use crate::claims::{LeafClaims, RetirementMark};
use crate::lifecycle::LeafStatus;
use crate::model::tests::leaf_record;

fn at(day: i64) -> Timestamp {
    Timestamp::from_second(1_780_000_000 + day * 86_400).unwrap()
}

fn memory(id: &str, day: i64, text: &str) -> LeafRecord {
    LeafRecord { claims: LeafClaims::read(text), ..leaf_record(id, at(day)) }
}

fn retired_by(mut leaf: LeafRecord, by: &LeafRecord, attribute: &str, rule: RetireRule) -> LeafRecord {
    leaf.status = LeafStatus::Superseded;
    leaf.claims.retired =
        Some(RetirementMark { by: by.id.clone(), rule, attribute: attribute.into(), restored_as: None });
    leaf
}

fn fact<'a>(profile: &'a Profile, subject: &str, attribute: &str) -> &'a ProfileFact {
    let subject = profile.subjects.iter().find(|s| s.subject.key == subject).expect("subject");
    subject.facts.iter().find(|f| f.attribute == attribute).expect("attribute")
}

#[test]
fn a_replaced_value_is_history_and_the_new_one_current() {
    let old = memory("leaf-01", 0, "Elif works at the Ankara branch.");
    let new = memory("leaf-02", 30, "Elif got transferred to the Izmir branch in June.");
    let attribute = new.claims.claims[0].attribute.clone();
    let old = retired_by(old, &new, &attribute, RetireRule::OneValue);
    let profile = build(std::slice::from_ref(&new), &[Retired { leaf: &old, by: Some(&new) }], None);
    // Replaced by a memory the reader cannot read: nothing of the change is told.
    let unseen = build(std::slice::from_ref(&new), &[Retired { leaf: &old, by: None }], None);
    assert!(unseen.subjects[0].facts[0].history.is_empty(), "{unseen:?}");
    let fact = fact(&profile, "elif", &attribute);
    assert_eq!(fact.current.len(), 1);
    assert!(fact.current[0].value.contains("Izmir"));
    assert_eq!(fact.current[0].possibly_outdated_by, None);
    assert_eq!(fact.history.len(), 1);
    assert!(fact.history[0].value.as_deref().unwrap().contains("Ankara"));
    assert_eq!(fact.history[0].changed_by, new.id);
    assert_eq!(fact.history[0].changed_at, at(30));
}

#[test]
fn two_current_values_of_a_one_valued_attribute_are_both_shown_the_older_doubted() {
    let old = memory("leaf-01", 0, "Maya lives in Porto.");
    let new = memory("leaf-02", 9, "Maya lives in Lisbon.");
    let profile = build(&[old.clone(), new.clone()], &[], None);
    let fact = fact(&profile, "maya", "residence");
    let values: Vec<&str> = fact.current.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(values, ["Lisbon", "Porto"]);
    assert_eq!(fact.current[1].possibly_outdated_by, Some(new.id.clone()));
    // A pair a person kept current together doubts nothing.
    let mut kept = old.clone();
    kept.claims.kept_with = vec![new.lineage.clone()];
    let profile = build(&[kept, new.clone()], &[], None);
    assert!(fact_of(&profile, "maya", "residence").current.iter().all(|v| v.possibly_outdated_by.is_none()));
}

fn fact_of<'a>(profile: &'a Profile, subject: &str, attribute: &str) -> &'a ProfileFact {
    fact(profile, subject, attribute)
}

#[test]
fn a_many_valued_attribute_keeps_every_value_undoubted() {
    let first = memory("leaf-01", 0, "Kofi speaks Twi and English.");
    let second = memory("leaf-02", 5, "Kofi speaks French.");
    let profile = build(&[first, second], &[], None);
    let fact = fact(&profile, "kofi", "languages");
    assert!(fact.current.len() >= 2, "{fact:?}");
    assert!(fact.current.iter().all(|v| v.possibly_outdated_by.is_none()));
}

#[test]
fn a_value_said_twice_is_one_value_dated_from_its_first_saying() {
    let first = memory("leaf-01", 0, "I live in Leeds.");
    let again = memory("leaf-02", 40, "I live in Leeds.");
    let profile = build(&[first, again], &[], None);
    let fact = fact(&profile, crate::claims::ME, "residence");
    assert_eq!(fact.current.len(), 1);
    assert_eq!(fact.current[0].said_at, at(0));
}

#[test]
fn the_speaker_comes_first_and_a_subject_can_be_asked_for() {
    let mine = memory("leaf-01", 0, "I live in Leeds.");
    let kofi = memory("leaf-02", 1, "Kofi lives in Accra.");
    let sister = memory("leaf-03", 2, "Kofi's sister lives in Kumasi.");
    let everyone = build(&[kofi.clone(), mine.clone(), sister.clone()], &[], None);
    assert_eq!(everyone.subjects[0].subject.key, crate::claims::ME);
    let only_kofi = build(&[kofi, mine.clone(), sister], &[], Some("Kofi"));
    let keys: Vec<&str> = only_kofi.subjects.iter().map(|s| s.subject.key.as_str()).collect();
    assert_eq!(keys, ["kofi"]);
    let me = build(&[mine], &[], Some("me"));
    assert_eq!(me.subjects.len(), 1);
    let sister = memory("leaf-04", 3, "My sister lives in Galway.");
    let mine = build(&[sister], &[], Some("my sister"));
    assert_eq!(mine.subjects.iter().map(|s| s.subject.key.as_str()).collect::<Vec<_>>(), ["@me's sister"], "{mine:?}");
}

#[test]
fn plans_and_loose_measures_are_not_beliefs() {
    let plan = memory("leaf-01", 0, "I'm thinking about moving to Berlin.");
    let profile = build(&[plan], &[], None);
    assert!(profile.subjects.is_empty(), "{profile:?}");
}

#[test]
fn a_question_about_a_whole_subject_names_it() {
    assert_eq!(asked_about("What do you know about Kofi?").as_deref(), Some("Kofi"));
    assert_eq!(asked_about("tell me about Maya Chen").as_deref(), Some("Maya Chen"));
    assert_eq!(asked_about("Who is Priya?").as_deref(), Some("Priya"));
    assert_eq!(asked_about("关于小美你知道什么？").as_deref(), Some("小美"));
    assert_eq!(asked_about("张伟是谁").as_deref(), Some("张伟"));
    for one_thing in [
        "Where does Kofi live?",
        "What instrument does Jonah play?",
        "who is going to the party on friday with the kids?",
        "tell me about",
    ] {
        assert_eq!(asked_about(one_thing), None, "{one_thing}");
    }
    assert_eq!(asked_subject_key("me"), crate::claims::ME);
    assert_eq!(asked_subject_key("my sister"), "@me's sister");
    // Text whose lowercase is shorter or longer than itself is cut where it was written.
    assert_eq!(asked_about("who is \u{212A}ofi").as_deref(), Some("\u{212A}ofi"));
    assert_eq!(asked_about("who is İİİİİİİİİ").as_deref(), Some("İİİİİİİİİ"));
    assert_eq!(asked_about("İİ"), None);
    assert_eq!(asked_about("WHO IS Kofi").as_deref(), Some("Kofi"));
    assert_eq!(asked_subject_key("Kofi Mensah"), "kofi mensah");
}

#[test]
fn a_profile_reads_as_one_line_per_attribute() {
    let old = memory("leaf-01", 0, "Elif works at the Ankara branch.");
    let new = memory("leaf-02", 30, "Elif got transferred to the Izmir branch in June.");
    let attribute = new.claims.claims[0].attribute.clone();
    let old = retired_by(old, &new, &attribute, RetireRule::OneValue);
    let profile = build(std::slice::from_ref(&new), &[Retired { leaf: &old, by: Some(&new) }], None);
    let lines = lines(&profile);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("Elif — where they work"), "{lines:?}");
    assert!(lines[0].contains("Izmir branch (") && lines[0].contains("(was Ankara branch, replaced "), "{lines:?}");
}
