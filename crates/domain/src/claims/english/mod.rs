//! Claims read from English: a text cut into clauses, each clause's subject found where English
//! puts it (before its verb: a name, "I", "the user", "my sister", "our standup", or dropped, as
//! notes drop it), and its predicate matched against the surface forms of the catalogue's
//! attributes, which capture the value.
//!
//! Forms are anchored at the start of the predicate, after adverbs and auxiliaries: the verb a
//! form names must be the clause's own verb, so "Jonah moved the trio rehearsals to Wednesdays"
//! says when the rehearsals are (a form for moving *something* to a time), never where Jonah
//! lives. What a clause only imagines, asks, denies, recalls or makes an exception of is read
//! the same way and held ([`Hold`]).
//!
//! Why this holds beyond the sentences it was tried on: English puts its subject before its
//! verb and says an attribute with a small set of verbs and nouns per attribute ("lives in",
//! "moved to", "is based in"; "address is"); the value classes (languages, instruments,
//! editors, car makes, times, amounts) are closed or nearly closed sets that name what kind of
//! value a word is whatever verb carries it.

use super::{Claim, FirstPerson, Hold, ME, Polarity, Reading, Subject, subject_key};
use crate::lexicon::english::{self, is_person_by_relation, is_role_held_one_at_a_time};
use crate::text::sentences;
use crate::transcript::transcript_speaker;

mod classes;
mod clauses;
mod forms;
mod holds;
mod measures;
mod nouns;
mod values;
mod verb_forms;

pub(super) use nouns::canonical_role;

use clauses::{
    CHAT_CONTRACTION, MAX_SUBJECT_WORDS, NOT_SUBJECTS, NOTE, NOTE_MEASURE, SCENE_OPENERS, am_predicate,
    chat_contraction, clauses, is_capitalised_name, is_verb, joint_people, looks_like_a_person, opens_with_a_verb,
    spread_over, strip_openers, word_spans,
};
use forms::{any_form_reads, inverse_forms, loose_claims, verb_forms};
use holds::{REPORTED, also_for_one_value, clause_hold, recurring_exception, when_of};
use nouns::{
    FILLS_ROLE, PERSON_ATTRIBUTE_NOUNS, PET_WORDS, POSSESSIONS, TIME_WORDS, bare_forms, is_attribute_noun, noun_forms,
    split_attribute_noun, strip_time_phrase,
};
use values::content_words;

/// Reads an English text. A transcript's lines are read each with its own speaker ("Omar: I'm
/// on the Android team\nJo: I'm still backend" holds one claim of Omar's and one of Jo's); a
/// line with no label goes on with the speaker before it.
pub(super) fn read(text: &str, first_person: FirstPerson) -> Reading {
    let normalized = text.replace(['’', '‘'], "'").replace(['“', '”'], "\"");
    let normalized = CHAT_CONTRACTION.replace_all(&normalized, |c: &regex::Captures<'_>| chat_contraction(&c[0]));
    let me = match first_person {
        FirstPerson::User => Some(Subject::me()),
        FirstPerson::Nobody => None,
    };
    let mut reader = Reader { speaker: me.clone(), last_person: None, skipping: false, reading: Reading::default() };
    for line in normalized.lines() {
        let said = match transcript_speaker(line) {
            Some(found) if is_person_label(found.speaker) => {
                reader.speaker = Some(Subject::me());
                found.said
            }
            // A program's turn is no one's statement: its lines are skipped until a person's.
            Some(found) if is_program_label(found.speaker) => {
                reader.speaker = None;
                reader.skipping = true;
                continue;
            }
            // "Dentist: Dr. Okafor, Tues 4pm": a note's key, not someone speaking — what
            // follows the colon has no verb.
            Some(found)
                if !found
                    .said
                    .split_whitespace()
                    .any(|w| is_verb(&w.to_lowercase()) || english::is_first_person(&w.to_lowercase())) =>
            {
                reader.speaker = me.clone();
                line
            }
            Some(found) => {
                reader.speaker = Some(Subject::named(found.speaker));
                found.said
            }
            None if reader.skipping => continue,
            None => strip_role_label(line),
        };
        reader.skipping = false;
        for sentence in sentences(said) {
            reader.sentence(sentence);
        }
    }
    reader.reading
}

fn is_person_label(label: &str) -> bool {
    english::is_person_label(&label.to_lowercase())
}

fn is_program_label(label: &str) -> bool {
    english::is_program_label(&label.to_lowercase())
}

/// "user: …", "User: …" (which `transcript_speaker` does not take for a name).
fn strip_role_label(text: &str) -> &str {
    let trimmed = text.trim_start();
    for label in english::PERSON_LABELS {
        let after =
            trimmed.get(..label.len()).filter(|head| head.eq_ignore_ascii_case(label)).map(|_| &trimmed[label.len()..]);
        if let Some(rest) = after.and_then(|rest| rest.strip_prefix(':')) {
            return rest.trim_start();
        }
    }
    trimmed
}

struct Reader {
    /// Whose "I" it is: the person the store serves, a transcript line's speaker, or no one
    /// the claims are about (an assistant's or a program's "I").
    speaker: Option<Subject>,
    /// The last person a clause was about: whom "he", "she" and "they" point at.
    last_person: Option<Subject>,
    /// Inside a program's turn, whose lines say nothing about anyone.
    skipping: bool,
    reading: Reading,
}

impl Reader {
    fn sentence(&mut self, sentence: &str) {
        let asked = sentence.trim_end().ends_with('?');
        let mut previous: Option<Subject> = None;
        for clause in clauses(sentence) {
            let found = self.clause(clause, previous.as_ref(), asked);
            if found.is_some() {
                previous = found;
            }
        }
    }

    /// Reads one clause; returns its subject, which a following clause without one inherits.
    fn clause(&mut self, clause: &str, previous: Option<&Subject>, asked: bool) -> Option<Subject> {
        let original = clause.trim();
        let hold_before = clause_hold(original, asked);
        let mut clause = strip_openers(original);
        // "The user mentioned (that) they …", "Maya said Tom …": the reporter is a source, and
        // a pronoun in what they report is them.
        let mut reporter = None;
        if let Some(found) = REPORTED.captures(clause)
            && let Some(rest) = found.name("rest")
        {
            let who = found.name("who").map_or("", |m| m.as_str());
            reporter = self.subject_of_name(who);
            clause = rest.as_str();
            clause = strip_openers(clause);
        }
        let parsed = self.note(clause).or_else(|| self.subject(clause, previous, reporter.as_ref()));
        let Some(Parsed { subject, possessed, predicate, bare }) = parsed else {
            // Said of no one the reader can name: still something the text says.
            self.reading.unclaimed_words += content_words(clause);
            return None;
        };
        if subject.key != ME && !subject.key.contains("'s ") && looks_like_a_person(&subject) {
            self.last_person = Some(subject.clone());
        }
        // "Maya had lunch with Tom. He …": "he" may be either, so it points at no one. Even
        // "I met Tom. He …" may point back at someone said before, so it points at no one too.
        if names_someone_in_company(predicate) {
            self.last_person = None;
        }
        let mut found = Found::new();
        match &possessed {
            Some(noun) => noun_forms(noun, predicate, &subject, bare, &mut found),
            None if bare => bare_forms(predicate, &subject, &mut found),
            None => {
                verb_forms(predicate, &subject, &mut found);
                inverse_forms(predicate, &subject, self, &mut found);
            }
        }
        if found.claims.is_empty() {
            self.reading.unclaimed_words += content_words(predicate);
        } else {
            self.reading.unclaimed_words += found.dropped;
        }
        loose_claims(original, &subject, &mut found);
        // "Kofi and Ama both live in Accra": what is said holds for each of them; "she" after
        // it points at neither.
        let people = joint_people(&subject);
        if people.len() > 1 {
            self.last_person = None;
            found.claims = spread_over(&people, found.claims);
        }
        for (mut claim, extra_hold) in found.claims {
            if claim.when.is_none() {
                claim.when = when_of(clause);
            }
            let hold = extra_hold.or(hold_before).or_else(|| recurring_exception(&claim, original));
            let hold = hold.or_else(|| also_for_one_value(&claim, original));
            match hold {
                Some(hold) => self.reading.held.push((claim, hold)),
                None => self.reading.claims.push(claim),
            }
        }
        Some(subject)
    }

    /// A note's key and value: "bike: 2019 Triumph", "grocery budget = £450/mo", "dentist appt
    /// -> Thu 16 May 9am", "window cleaner Dave £18". The key is the subject (or, possessed,
    /// an attribute of its owner: "Grandad's bday — 12 March"); the value follows as "is …".
    fn note<'c>(&self, clause: &'c str) -> Option<Parsed<'c>> {
        let found = NOTE.captures(clause).or_else(|| NOTE_MEASURE.captures(clause))?;
        let (key, value) = (found.name("k")?, found.name("v")?);
        let key_words = word_spans(key.as_str());
        if key_words.is_empty()
            || key_words.len() > MAX_SUBJECT_WORDS
            || key_words.iter().any(|(_, w)| is_verb(&w.to_lowercase()) && !w.ends_with("'s"))
        {
            return None;
        }
        // The note's value, read as the predicate "is <value>".
        let predicate = &clause[value.start()..];
        let lower = key.as_str().to_lowercase();
        let (owner, noun) = match lower.split_once("'s ") {
            Some((owner, noun)) if !owner.contains(' ') || owner == "the user" => {
                (Some(owner.to_owned()), noun.to_owned())
            }
            _ => (
                None,
                lower.trim_start_matches("my ").trim_start_matches("our ").trim_start_matches("the user's ").to_owned(),
            ),
        };
        let owner = match owner.as_deref() {
            Some("user" | "the user") => Subject::me(),
            Some("my" | "our") | None => self.speaker.clone().unwrap_or_else(Subject::me),
            Some(_) => Subject::named(key.as_str().split("'s ").next().unwrap_or_default()),
        };
        let noun = noun.trim().to_owned();
        Some(self.owned_noun(owner, &noun, predicate, true))
    }

    /// What an owner's noun phrase stands for: one of the owner's attributes ("address",
    /// "manager", "car"), or a thing of theirs that is a subject itself ("rent", "standup",
    /// "grocery budget": the speaker's own things go by their name alone).
    fn owned_noun<'c>(&self, owner: Subject, noun: &str, predicate: &'c str, bare: bool) -> Parsed<'c> {
        let noun = noun.replacen("fav ", "favorite ", 1).replacen("fave ", "favorite ", 1);
        let noun = noun.as_str();
        let head = noun.split(' ').next_back().unwrap_or_default();
        let first = noun.split(' ').next().unwrap_or_default();
        let names_an_attribute = is_role_held_one_at_a_time(noun)
            || is_role_held_one_at_a_time(head)
            || noun.starts_with("favorite ")
            || noun.starts_with("favourite ")
            || PET_WORDS.contains(&first)
            || PERSON_ATTRIBUTE_NOUNS.iter().any(|(nouns, _, _)| nouns.contains(&noun) || nouns.contains(&head))
            || POSSESSIONS.contains(&head);
        if names_an_attribute {
            return Parsed { subject: owner, possessed: Some(noun.to_owned()), predicate, bare };
        }
        // A thing of someone's goes by both names ("Orion's API rate limit" and "the Orion API
        // rate limit" are one thing).
        let thing = if owner.is_me() { noun.to_owned() } else { format!("{} {noun}", owner.name) };
        let (thing, possessed) = match split_attribute_noun(&thing) {
            Some((thing, attribute)) if !thing.is_empty() => (thing.to_owned(), Some(attribute.trim().to_lowercase())),
            _ => (thing, None),
        };
        Parsed { subject: Subject::named(&thing), possessed, predicate, bare }
    }

    /// A subject for a reporter's name ("the user", "Maya"), if it is one.
    fn subject_of_name(&self, who: &str) -> Option<Subject> {
        let key = subject_key(who);
        if key.is_empty() {
            return None;
        }
        if matches!(key.as_str(), "user" | "the user") {
            return Some(Subject::me());
        }
        if key == "i" {
            return self.speaker.clone();
        }
        if matches!(key.as_str(), "he" | "she" | "they") {
            return self.last_person.clone();
        }
        Some(Subject::named(who))
    }

    /// The subject a clause opens with, what of it is possessed ("Maya's *address*"), and the
    /// predicate that follows.
    fn subject<'c>(
        &self,
        clause: &'c str,
        previous: Option<&Subject>,
        reporter: Option<&Subject>,
    ) -> Option<Parsed<'c>> {
        let words: Vec<(usize, &str)> = word_spans(clause);
        let (first_at, first) = *words.first()?;
        let first_lower = first.to_lowercase();
        let rest_after = |i: usize| -> &'c str { words.get(i).map_or("", |(at, _)| &clause[*at..]) };
        let pronoun = |reporter: Option<&Subject>| reporter.cloned().or_else(|| self.last_person.clone());
        // The first person.
        match first_lower.as_str() {
            "i'm" | "im" | "we're" => {
                return Some(Parsed {
                    subject: self.speaker.clone()?,
                    possessed: None,
                    predicate: am_predicate(clause, first_at, first),
                    bare: false,
                });
            }
            // "I", "we", "I've", "I'll": the predicate is what follows.
            word if english::FIRST_PERSON_SUBJECTS.contains(&word) => {
                return Some(Parsed {
                    subject: self.speaker.clone()?,
                    possessed: None,
                    predicate: rest_after(1),
                    bare: false,
                });
            }
            "my" | "our" => return self.possessive(self.speaker.clone()?, &words, 1, clause),
            "he" | "she" | "they" => {
                let subject = pronoun(reporter)?;
                return Some(Parsed { subject, possessed: None, predicate: rest_after(1), bare: false });
            }
            "he's" | "she's" | "they're" => {
                let subject = pronoun(reporter)?;
                return Some(Parsed {
                    subject,
                    possessed: None,
                    predicate: am_predicate(clause, first_at, first),
                    bare: false,
                });
            }
            "his" | "her" | "their" => {
                let subject = pronoun(reporter)?;
                return self.possessive(subject, &words, 1, clause);
            }
            _ => {}
        }
        // "The user", "User", "the user's".
        let opening: Vec<String> = words.iter().take(3).map(|(_, w)| w.to_lowercase()).collect();
        let opening: Vec<&str> = opening.iter().map(String::as_str).collect();
        if let Some((len, possessive)) = english::third_person_reference(&opening) {
            if possessive {
                return self.possessive(Subject::me(), &words, len, clause);
            }
            return Some(Parsed { subject: Subject::me(), possessed: None, predicate: rest_after(len), bare: false });
        }
        // A dropped subject: a note or a line that opens with its verb ("moved to Denver last
        // weekend", "finally sold the Golf") is the writer's, or the previous clause's ("… and
        // now works at Anthropic").
        if opens_with_a_verb(&first_lower) {
            let subject = previous.cloned().or_else(|| self.speaker.clone())?;
            return Some(Parsed { subject, possessed: None, predicate: clause, bare: false });
        }
        // A noun phrase up to the verb: a name ("Maya", "Dr. Okafor"), a possessive ("Maya's
        // address", "Omar's sister"), or a thing ("our standup", "the Atlas launch", "Rent").
        // Where the predicate starts: the first known verb, or else the first place a form
        // reads what follows ("Helix *stores its events in MongoDB*", "Nimbus releases *ship
        // every two weeks*"): English verbs are an open class, the forms are not.
        let verb_at = words
            .iter()
            .position(|(_, w)| is_verb(&w.to_lowercase()) && !is_capitalised_name(w))
            .or_else(|| (1..words.len().min(MAX_SUBJECT_WORDS + 1)).find(|&i| any_form_reads(&clause[words[i].0..])))?;
        if verb_at == 0 || verb_at > MAX_SUBJECT_WORDS {
            return None;
        }
        let phrase_end = words[verb_at - 1].0 + words[verb_at - 1].1.len();
        // "After the reorg Omar …": a phrase opened by a preposition sets the scene; the
        // subject is the name after it.
        let mut first_at = first_at;
        let mut first_word = 0;
        if SCENE_OPENERS.contains(&first_lower.as_str()) {
            let name = (1..verb_at).find(|&i| is_capitalised_name(words[i].1))?;
            first_at = words[name].0;
            first_word = name;
        }
        let phrase = &clause[first_at..phrase_end];
        let predicate = &clause[words[verb_at].0..];
        // A possessive inside the phrase ("Maya's address", "Omar's new manager").
        if let Some(split) = words[first_word..verb_at]
            .iter()
            .position(|(_, w)| w.ends_with("'s") || w.ends_with("s'"))
            .map(|i| i + first_word)
            && split + 1 < verb_at
        {
            let cut = if words[split].1.ends_with("s'") { 1 } else { 2 };
            let owner_text = &clause[first_at..words[split].0 + words[split].1.len() - cut];
            let owner = match subject_key(owner_text).as_str() {
                "user" | "the user" => Subject::me(),
                _ => Subject::named(owner_text),
            };
            return self.possessive(
                owner,
                &words[..verb_at].iter().copied().chain(words[verb_at..].iter().copied()).collect::<Vec<_>>(),
                split + 1,
                clause,
            );
        }
        let key = subject_key(phrase);
        if key.is_empty() || NOT_SUBJECTS.contains(&key.as_str()) || key.split(' ').all(crate::text::is_stopword) {
            return None;
        }
        let phrase = strip_time_phrase(phrase);
        // "The on-call lead for Atlas", "the budget of the Orion project": the thing after the
        // preposition, and the attribute's noun before it.
        if let Some((noun, thing)) = phrase.split_once(" for ").or_else(|| phrase.split_once(" of "))
            && let Some((_, attribute)) =
                split_attribute_noun(noun).or_else(|| Some(("", noun)).filter(|(_, n)| is_attribute_noun(n)))
            && !subject_key(thing).is_empty()
            && !TIME_WORDS.contains(&subject_key(thing).as_str())
        {
            return Some(Parsed {
                subject: Subject::named(thing),
                possessed: Some(attribute.trim().to_lowercase()),
                predicate,
                bare: false,
            });
        }
        // A thing with its attribute's noun at the end ("the standup time", "the launch date").
        let (subject_text, possessed) = match split_attribute_noun(phrase) {
            Some((thing, noun)) if !thing.is_empty() => (thing, Some(noun)),
            _ => (phrase, None),
        };
        let subject = Subject::named(subject_text);
        match possessed {
            Some(noun) => Some(Parsed { subject, possessed: Some(noun.to_owned()), predicate, bare: false }),
            None => Some(Parsed { subject, possessed: None, predicate, bare: false }),
        }
    }

    /// "my sister …", "Maya's address …", "the user's new manager …": the owner and what the
    /// phrase after the possessive names, from word `at` on.
    fn possessive<'c>(
        &self,
        owner: Subject,
        words: &[(usize, &'c str)],
        at: usize,
        clause: &'c str,
    ) -> Option<Parsed<'c>> {
        let verb_at =
            (at..words.len()).find(|&i| is_verb(&words[i].1.to_lowercase()) && !is_capitalised_name(words[i].1))?;
        if verb_at == at || verb_at - at > MAX_SUBJECT_WORDS {
            return None;
        }
        let noun_words: Vec<&str> = words[at..verb_at].iter().map(|(_, w)| *w).collect();
        let predicate = &clause[words[verb_at].0..];
        let noun = noun_words.join(" ").to_lowercase();
        let noun = noun.trim_start_matches("new ").trim_start_matches("current ").trim_start_matches("old ").to_owned();
        // "Maya's sister's manager is Raj": the manager of Maya's sister, not Maya's.
        let (owner, noun) = match noun.split_once("'s ").or_else(|| noun.split_once("’s ")) {
            Some((between, rest)) if !between.is_empty() && !rest.is_empty() => {
                let owner =
                    Subject { key: format!("{}'s {between}", owner.key), name: format!("{}'s {between}", owner.name) };
                (owner, rest.to_owned())
            }
            _ => (owner, noun),
        };
        // "my sister Mia moved …": the name is the subject.
        let head = noun_words.iter().position(|w| is_capitalised_name(w));
        if let Some(name_at) = head
            && name_at > 0
            && is_person_by_relation(&noun_words[name_at - 1].to_lowercase())
        {
            let name = noun_words[name_at..].join(" ");
            return Some(Parsed { subject: Subject::named(&name), possessed: None, predicate, bare: false });
        }
        let head_noun = noun.split(' ').next_back().unwrap_or_default().to_owned();
        // "Omar's manager is Linda Park": the role filled, about Omar. "Omar's manager moved
        // to Berlin": the manager, someone else.
        let fills_role = FILLS_ROLE.is_match(predicate);
        if is_person_by_relation(head_noun.as_str()) && !(is_role_held_one_at_a_time(head_noun.as_str()) && fills_role)
        {
            let subject =
                Subject { key: format!("{}'s {head_noun}", owner.key), name: format!("{}'s {head_noun}", owner.name) };
            return Some(Parsed { subject, possessed: None, predicate, bare: false });
        }
        Some(self.owned_noun(owner, &noun, predicate, false))
    }
}

/// Words after which a capitalised name is someone the subject was with or spoke to ("had
/// lunch *with* Tom", "*met* Tom", "*told* Tom"): a person besides the subject. A relation
/// word does the same ("his *roommate* Leo", "my *sister* Emma").
const IN_COMPANY: &[&str] =
    &["with", "and", "met", "told", "asked", "called", "texted", "messaged", "emailed", "saw", "helped", "thanked"];

/// Whether a predicate names someone in the subject's company.
fn names_someone_in_company(predicate: &str) -> bool {
    let words: Vec<&str> = predicate.split_whitespace().collect();
    words.windows(2).any(|pair| {
        let word = pair[0].to_lowercase();
        let name = pair[1].trim_end_matches(|c: char| !c.is_alphanumeric());
        (IN_COMPANY.contains(&word.as_str()) || is_person_by_relation(&word)) && is_capitalised_name(name)
    })
}

struct Parsed<'c> {
    subject: Subject,
    possessed: Option<String>,
    predicate: &'c str,
    /// A note's value with no verb before it ("bike: 2019 Triumph").
    bare: bool,
}

/// What the forms found in a predicate: claims (each with what holds it back, if anything),
/// and how many content words the values left out ("Amsterdam *for her new job*").
#[derive(Default)]
struct Found {
    claims: Vec<(Claim, Option<Hold>)>,
    dropped: usize,
}

impl Found {
    fn push(&mut self, item: (Claim, Option<Hold>)) {
        self.claims.push(item);
    }

    fn extend(&mut self, items: impl IntoIterator<Item = (Claim, Option<Hold>)>) {
        self.claims.extend(items);
    }

    fn new() -> Found {
        Found::default()
    }
}

fn claim(subject: &Subject, attribute: &str, value: Option<String>, polarity: Polarity) -> Claim {
    Claim { subject: subject.clone(), attribute: attribute.to_owned(), value, polarity, when: None, about: Vec::new() }
}

#[cfg(test)]
mod tests;
