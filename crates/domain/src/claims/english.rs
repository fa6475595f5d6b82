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

use std::sync::LazyLock;

use regex::Regex;

use super::{Claim, FirstPerson, Hold, ME, Polarity, Reading, Subject, subject_key};
use crate::transcript::transcript_speaker;

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
                    .any(|w| is_verb(&w.to_lowercase()) || FIRST_PERSON.contains(&w.to_lowercase().as_str())) =>
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
    matches!(label.to_lowercase().as_str(), "user" | "human" | "me")
}

fn is_program_label(label: &str) -> bool {
    matches!(label.to_lowercase().as_str(), "assistant" | "ai" | "bot" | "system" | "tool" | "agent")
}

/// The first person's words.
const FIRST_PERSON: &[&str] = &["i", "i'm", "im", "i've", "my", "me", "we", "we're", "our"];

/// "user: …", "User: …" (which `transcript_speaker` does not take for a name).
fn strip_role_label(text: &str) -> &str {
    let trimmed = text.trim_start();
    for label in ["user:", "human:", "me:"] {
        if trimmed.get(..label.len()).is_some_and(|head| head.eq_ignore_ascii_case(label)) {
            return trimmed[label.len()..].trim_start();
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
        let names_an_attribute = ROLE_NOUNS.contains(&noun)
            || ROLE_NOUNS.contains(&head)
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
            "i" | "we" => {
                return Some(Parsed {
                    subject: self.speaker.clone()?,
                    possessed: None,
                    predicate: rest_after(1),
                    bare: false,
                });
            }
            "i'm" | "im" | "we're" => {
                return Some(Parsed {
                    subject: self.speaker.clone()?,
                    possessed: None,
                    predicate: am_predicate(clause, first_at, first),
                    bare: false,
                });
            }
            "i've" | "ive" | "we've" | "i'd" | "we'd" => {
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
        let (second_lower, second) = words.get(1).map(|(_, w)| (w.to_lowercase(), *w)).unwrap_or_default();
        if (first_lower == "user" || first_lower == "user's")
            || (first_lower == "the" && second_lower.starts_with("user"))
        {
            let at = if first_lower == "the" { 1 } else { 0 };
            let word = words[at].1.to_lowercase();
            if word == "user's" {
                return self.possessive(Subject::me(), &words, at + 1, clause);
            }
            if word == "user" {
                return Some(Parsed {
                    subject: Subject::me(),
                    possessed: None,
                    predicate: rest_after(at + 1),
                    bare: false,
                });
            }
        }
        let _ = second;
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
        // "my sister Mia moved …": the name is the subject.
        let head = noun_words.iter().position(|w| is_capitalised_name(w));
        if let Some(name_at) = head
            && name_at > 0
            && RELATIONS.contains(&noun_words[name_at - 1].to_lowercase().as_str())
        {
            let name = noun_words[name_at..].join(" ");
            return Some(Parsed { subject: Subject::named(&name), possessed: None, predicate, bare: false });
        }
        let head_noun = noun.split(' ').next_back().unwrap_or_default().to_owned();
        // "Omar's manager is Linda Park": the role filled, about Omar. "Omar's manager moved
        // to Berlin": the manager, someone else.
        let fills_role = FILLS_ROLE.is_match(predicate);
        if RELATIONS.contains(&head_noun.as_str()) && !(ROLE_NOUNS.contains(&head_noun.as_str()) && fills_role) {
            let subject =
                Subject { key: format!("{}'s {head_noun}", owner.key), name: format!("{}'s {head_noun}", owner.name) };
            return Some(Parsed { subject, possessed: None, predicate, bare: false });
        }
        Some(self.owned_noun(owner, &noun, predicate, false))
    }
}

struct Parsed<'c> {
    subject: Subject,
    possessed: Option<String>,
    predicate: &'c str,
    /// A note's value with no verb before it ("bike: 2019 Triumph").
    bare: bool,
}

/// Prepositions that open a scene-setting phrase before a clause's subject.
const SCENE_OPENERS: &[&str] = &[
    "after",
    "before",
    "since",
    "following",
    "during",
    "with",
    "in",
    "at",
    "on",
    "from",
    "for",
    "per",
    "thanks",
    "starting",
    "as",
    "when",
    "once",
    "until",
];

/// The most words a subject phrase runs to before its verb.
const MAX_SUBJECT_WORDS: usize = 6;

/// "I'm …", "she's …": the predicate as "am …".
fn am_predicate<'c>(clause: &'c str, at: usize, word: &str) -> &'c str {
    // The contraction's verb is part of the word: point the predicate at its apostrophe and
    // let the forms read "'m"/"'s"/"'re" as "is".
    let apostrophe = word.find('\'').map_or(word.len(), |i| i);
    &clause[at + apostrophe..]
}

/// Words that open a clause without being its subject: discourse markers, interjections and
/// leading time phrases ("btw", "so", "update:", "as of March,").
fn strip_openers(mut clause: &str) -> &str {
    loop {
        let before = clause;
        clause =
            clause.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '*' | '•' | '>' | '"' | '('));
        if let Some(found) = OPENER.find(clause) {
            clause = &clause[found.end()..];
        }
        if clause.len() == before.len() {
            return clause;
        }
    }
}

static OPENER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:btw|fyi|ps|so|oh|ugh|ok|okay|well|anyway|anyways|also|and|but|plus|update|note|reminder|heads up|quick update|news|fun fact|lol|haha|hey|yeah|yep|nope|hmm|welp|finally|good news|bad news|big news|side note|context|correction|actually|sorry|oops|edit|fwiw|imo|tbh|honestly|apparently|turns out|as of (?:today|now|this week|this month|\w+ \d{1,2}|\w+)|starting (?:today|now|this week|next week|monday|tuesday|wednesday|thursday|friday|\w+ \d{1,2}|\w+)|since (?:last \w+|\w+)|last (?:week|month|year|weekend|night)|this (?:week|month|year|morning)|yesterday|today|these days|nowadays|recently|lately|meanwhile|in other news)\b[\s,:;!.—–-]*)",
    )
    .expect("opener pattern compiles")
});

/// A note: "key: value", "key = value", "key -> value".
static NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<k>[^:=>→\d][^:=>→]{0,47}?)\s*(?::\s|=|->|→|=>|\s[—–]\s|\s-\s)\s*(?P<v>\S.*)$")
        .expect("note pattern compiles")
});

/// A note whose value is a measure right after its key: "window cleaner Dave £18", "grocery
/// budget £450/mo", "eye test @ Specsavers 2 Oct 11:20".
static NOTE_MEASURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?P<k>[a-z][\w'&\- ]{1,40}?)\s+(?:@\s*[\w'&\- ]{1,30}?\s+)?(?P<v>(?:[$£€¥]\s?\d|\d[\d.,]*\s?(?:kg|g|lbs?|%|mg|mcg|km|mi|°[cf]?)\b|\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\s+\d{1,2}\b).*)$")
        .expect("measure note pattern compiles")
});

/// "X mentioned (that) …", "X said …": a report of what follows.
static REPORTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?P<who>(?:the )?user|i|he|she|they|[A-Z][\w'-]+(?: [A-Z][\w'-]+)?) (?:(?:just |also |recently )?(?:mentioned|said|says|told (?:me|us|the assistant|you)|noted|shared|reported|explained|confirmed|stated|wrote|added|clarified|indicated|let (?:me|us) know|informed (?:me|us)|mentions|notes|shares|reports|confirms))(?: that)?[,:]?\s+(?P<rest>.+)$",
    )
    .expect("report pattern compiles")
});

/// What holds a clause back as a whole: a question, a plan, a hedge, a denial, the past,
/// hearsay. (A one-off exception holds only claims about what recurs: see
/// [`recurring_exception`]).
fn clause_hold(clause: &str, asked: bool) -> Option<Hold> {
    if asked || clause.contains('?') {
        return Some(Hold::Asked);
    }
    if HEARSAY.is_match(clause) {
        return Some(Hold::Hearsay);
    }
    if PLANNED.is_match(clause) && !DECIDED.is_match(clause) {
        return Some(Hold::Planned);
    }
    if PAST.is_match(clause) {
        return Some(Hold::Past);
    }
    None
}

static HEARSAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:heard (?:that|from)?|rumou?r|apparently|supposedly|allegedly|i think|i guess|not sure|i believe|word is|unconfirmed)\b")
        .expect("hearsay pattern compiles")
});

static PLANNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:might|(?-i:may)|could|would|should|(?-i:will)|won't|'ll|gonna|going to|plans?(?:ning)? (?:to|on)|thinking (?:about|of)|considering|hopes? to|hoping|wants? to|wanna|would (?:love|like)|wish(?:es|ed)?|dreams? (?:of|about)|if|unless|whether|maybe|perhaps|possibly|probably|likely|looking (?:at|into)|about to|aims? to|aiming to|intends? to|trying to|tries to|hasn't decided|haven't decided|undecided|soon|next (?:week|month|year|spring|summer|fall|autumn|winter|quarter|sprint)|in (?:a|two|three|a few|a couple of) (?:days|weeks|months|years)|by (?:the end of )?next|once (?:the|she|he|they|we|i)|eventually|someday|one day|debating|weighing)\b|\b(?:is|are|am|'s|'re|'m) (?:\w+ )?(?:moving|relocating|switching|leaving|quitting|changing|transferring|joining|starting|retiring|selling|buying|getting|taking over|migrating|upgrading|downgrading|cancell?ing)\b",
    )
    .expect("plan pattern compiles")
});

/// A change said to hold from now on, even with a modal ("will be at 10 from now on").
static DECIDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:from now on|going forward|as of (?:today|now|this week|monday|tuesday|wednesday|thursday|friday)|effective (?:immediately|today|now)|until further notice|for good|permanently|these days|nowadays)\b")
        .expect("decided pattern compiles")
});

static PAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:back in (?:\d{4}|the day|college|school|uni)|(?:\w+|\d+) (?:years|decades) ago|long ago|as a (?:kid|child|teen|teenager|student|baby)|when (?:i|he|she|they|we|you) (?:was|were)|in (?:high school|college|grad school|middle school)|growing up|previously|formerly|originally|at the time|in the past|before (?:moving|the move|that|covid|the pandemic)|(?:in|during|until|till|since) (?:19|20)\d{2}\b.*\b(?:lived|worked|was|were|had|drove|played|studied))\b",
    )
    .expect("past pattern compiles")
});

/// One-off exceptions to something that recurs: held only for recurring attributes.
static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:this (?:week|time|once|one time|monday|tuesday|wednesday|thursday|friday|saturday|sunday|sprint|round|weekend)|today|tonight|tomorrow|just (?:this once|once|for today|for this week|for the week)|for (?:today|tonight|this week|the week|one week|this one)|only (?:this|today|once|for)|one[- ]off|temporarily|temporary|because of|due to|exception|except|instead of the usual|while (?:\w+ )?(?:is|are) (?:away|out|off)|cheat day|for the offsite|for the holidays)\b",
    )
    .expect("exception pattern compiles")
});

fn recurring_exception(claim: &Claim, clause: &str) -> Option<Hold> {
    // A measure no form placed may be of something that recurs: an exception holds it too.
    let recurring = claim.definition().is_some_and(|def| def.recurring) || claim.is_loose();
    (recurring && EXCEPTION.is_match(clause) && !DECIDED.is_match(clause)).then_some(Hold::Exception)
}

/// "also works at a bakery": a second value beside the first, never a replacement of it.
fn also_for_one_value(claim: &Claim, clause: &str) -> Option<Hold> {
    let one = claim.holds() == super::Holds::One && claim.polarity == Polarity::Holds;
    (one && ALSO.is_match(clause)).then_some(Hold::Also)
}

static ALSO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:also|as well|in addition|additionally|on the side|side gig|side job|part[- ]time|moonlights?|besides)\b")
        .expect("also pattern compiles")
});

/// The time a clause says a claim holds from ("in June", "since spring", "last week").
fn when_of(clause: &str) -> Option<String> {
    WHEN.find(clause).map(|m| m.as_str().trim().to_owned())
}

static WHEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:(?:since|in|from|as of|starting|effective|on) (?:early |late |mid-?)?(?:january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|fall|autumn|winter|\d{4})(?: \d{1,2}(?:st|nd|rd|th)?)?(?:,? \d{4})?|last (?:week|weekend|month|year|spring|summer|fall|autumn|winter)|(?:this|earlier this) (?:week|month|year)|yesterday|today|recently|(?:a|two|three|a few|a couple of) (?:days|weeks|months) ago)\b",
    )
    .expect("when pattern compiles")
});

/// A text's sentences: split after `.`, `!`, `?` or `;` followed by a space, and at line ends,
/// but not after a title ("Dr.") or inside a number ("v2.3", "9.30").
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        let next_space = bytes.get(end).is_none_or(|b| b.is_ascii_whitespace());
        let boundary = c == '\n' || (matches!(c, '.' | '!' | '?' | ';') && next_space);
        if !boundary {
            continue;
        }
        if c == '.' {
            let word = text[start..at].split_whitespace().next_back().unwrap_or_default().to_lowercase();
            if matches!(
                word.as_str(),
                "dr" | "mr" | "mrs" | "ms" | "st" | "prof" | "jr" | "sr" | "vs" | "approx" | "appt" | "no"
            ) {
                continue;
            }
        }
        if !text[start..end].trim().is_empty() {
            out.push(&text[start..end]);
        }
        start = end;
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// A sentence's clauses: split at ", and", ", but", ", so", " but ", dashes, semicolons, and at
/// " and " or a comma before a word that opens a clause of its own ("…, and now works at
/// Anthropic", "…, she moved to Lyon").
fn clauses(sentence: &str) -> Vec<&str> {
    let sentence = sentence.trim_end_matches(['.', '!', '?', ';', ' ']);
    let mut out = Vec::new();
    let mut start = 0;
    // ASCII case only, so every byte offset in `lower` is one in `sentence`.
    let lower = sentence.to_ascii_lowercase();
    let mut at = 0;
    while at < sentence.len() {
        let rest = &lower[at..];
        let cut = CLAUSE_BREAK.find(rest).filter(|m| m.start() == 0);
        if let Some(found) = cut {
            let after = &lower[at + found.end()..];
            let next = after.split_whitespace().next().unwrap_or_default();
            let next = next.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            let dash = found.as_str().contains(['—', '–']) || found.as_str().contains(" - ");
            // "Grandad's bday — 12 March": a dash after a key with no verb joins it to its value;
            // "The user's manager, Joost, relocated …": a comma after a noun phrase with no verb
            // sets off an apposition, not a clause of its own.
            let key_before = {
                let left = &lower[start..at];
                let words: Vec<&str> = left.split_whitespace().collect();
                words.len() <= MAX_SUBJECT_WORDS && !words.iter().any(|w| is_verb(w) && !w.ends_with("'s"))
            };
            let strong = (dash && !key_before)
                || found.as_str().contains(';')
                || found.as_str().starts_with(", but")
                || found.as_str().starts_with(" but ");
            if strong || CLAUSE_STARTERS.contains(&next) || (!key_before && opens_with_a_verb(next)) {
                out.push(&sentence[start..at]);
                start = at + found.end();
                at = start;
                continue;
            }
        }
        at += lower[at..].chars().next().map_or(1, char::len_utf8);
    }
    out.push(&sentence[start..]);
    out.retain(|c| !c.trim().is_empty());
    out
}

static CLAUSE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:,\s*(?:and|but|so|though)\s+|\s+(?:and|but|so)\s+|\s*[—–]\s*|\s+-\s+|,\s+|;\s*)")
        .expect("clause break compiles")
});

/// Words that open a clause of their own after "and" or a comma.
const CLAUSE_STARTERS: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "he",
    "she",
    "they",
    "we",
    "he's",
    "she's",
    "they're",
    "we're",
    "now",
    "then",
    "also",
    "recently",
    "finally",
    "currently",
    "since",
    "my",
    "his",
    "her",
    "their",
    "our",
    "it's",
    "still",
    "just",
];

fn word_spans(clause: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in clause.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &clause[s..at]));
            }
        } else if start.is_none() {
            start = Some(at);
        }
    }
    if let Some(s) = start {
        out.push((s, &clause[s..]));
    }
    out.into_iter()
        .map(|(at, w)| {
            let trimmed = w.trim_end_matches([',', ':', ';', '.', '!', '?', ')', '"']);
            let lead = trimmed.len() - trimmed.trim_start_matches(['(', '"']).len();
            (at + lead, &trimmed[lead..])
        })
        .filter(|(_, w)| !w.is_empty())
        .collect()
}

fn is_capitalised_name(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase)
        && word.chars().filter(|c| c.is_alphabetic()).count() > 1
        && !CAPITALISED_VERBS.contains(&word.to_lowercase().as_str())
}

/// Capitalised at a sentence start, but verbs: never a name.
const CAPITALISED_VERBS: &[&str] = &["is", "are", "was", "has", "had", "got", "moved", "just", "now", "lives", "works"];

/// Verbs and auxiliaries a predicate can open with: where a subject phrase ends.
fn is_verb(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    VERBS.contains(&word)
        || (word.len() > 4 && word.ends_with("ed") && !NOT_VERBS.contains(&word))
        || word.ends_with("n't")
}

/// Words ending in "ed" that are no verbs.
const NOT_VERBS: &[&str] = &[
    "bed", "red", "need", "speed", "seed", "feed", "shed", "hundred", "breed", "weed", "bled", "wed", "sled", "embed",
];

/// Whether a clause opening with `word` has dropped its subject (a verb first).
fn opens_with_a_verb(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    DROPPED_SUBJECT_OPENERS.contains(&word)
        || (word.len() > 4 && word.ends_with("ed") && !NOT_VERBS.contains(&word) && !NOT_OPENING_VERBS.contains(&word))
}

/// Participles that open a phrase rather than a clause whose "I" was dropped.
const NOT_OPENING_VERBS: &[&str] = &[
    "related",
    "based",
    "united",
    "limited",
    "detailed",
    "advanced",
    "interested",
    "married",
    "engaged",
    "retired",
    "divorced",
    "tired",
    "excited",
    "worried",
    "scheduled",
];

const DROPPED_SUBJECT_OPENERS: &[&str] = &[
    "moved",
    "switched",
    "started",
    "joined",
    "got",
    "bought",
    "sold",
    "quit",
    "left",
    "adopted",
    "took",
    "began",
    "became",
    "finally",
    "just",
    "officially",
    "now",
    "lives",
    "live",
    "living",
    "works",
    "work",
    "working",
    "drives",
    "driving",
    "uses",
    "using",
    "plays",
    "playing",
    "speaks",
    "studying",
    "relocated",
    "transferred",
    "stopped",
    "gave",
    "dropped",
    "ditched",
    "traded",
    "upgraded",
    "downgraded",
    "went",
    "am",
    "been",
    "still",
    "finished",
    "graduated",
    "retired",
    "cancelled",
    "canceled",
    "learning",
    "taking",
    "on",
    "off",
    "no",
    "reports",
    "married",
    "engaged",
    "divorced",
    "broke",
    "split",
];

const VERBS: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "am",
    "'s",
    "'re",
    "'m",
    "be",
    "been",
    "being",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "will",
    "would",
    "can",
    "could",
    "should",
    "may",
    "might",
    "must",
    "shall",
    "got",
    "gets",
    "get",
    "getting",
    "moved",
    "moves",
    "move",
    "lives",
    "live",
    "living",
    "works",
    "work",
    "working",
    "joined",
    "joins",
    "left",
    "leaves",
    "quit",
    "quits",
    "drives",
    "drive",
    "plays",
    "play",
    "speaks",
    "speak",
    "uses",
    "use",
    "takes",
    "take",
    "took",
    "reports",
    "leads",
    "owns",
    "runs",
    "run",
    "costs",
    "cost",
    "starts",
    "start",
    "begins",
    "began",
    "happens",
    "meets",
    "ships",
    "launches",
    "slipped",
    "slips",
    "postponed",
    "delayed",
    "pushed",
    "changed",
    "switched",
    "bumped",
    "upgraded",
    "went",
    "goes",
    "became",
    "becomes",
    "turned",
    "turns",
    "studies",
    "attends",
    "adopted",
    "sold",
    "sells",
    "stopped",
    "gave",
    "gives",
    "started",
    "loves",
    "likes",
    "prefers",
    "hates",
    "eats",
    "drinks",
    "smokes",
    "bikes",
    "cycles",
    "walks",
    "commutes",
    "relocated",
    "transferred",
    "settled",
    "married",
    "divorced",
    "broke",
    "split",
    "dating",
    "just",
    "now",
    "finally",
    "recently",
    "officially",
    "also",
    "still",
    "no",
    "never",
    "doesn't",
    "isn't",
    "didn't",
    "won't",
    "can't",
    "wasn't",
    "aren't",
    "don't",
    "haven't",
    "hasn't",
    "resides",
    "bought",
    "buys",
    "has",
    "keeps",
    "falls",
    "sits",
    "lands",
    "closes",
    "opens",
    "ends",
    "happens",
    "moving",
    "relocating",
    "switching",
    "leaving",
    "quitting",
    "joining",
    "starting",
    "migrated",
    "migrating",
    "handed",
    "passed",
    "rescheduled",
    "shifted",
    "cut",
    "raised",
    "increased",
    "reduced",
    "dropped",
    "rose",
    "fell",
    "jumped",
    "climbed",
    "needs",
    "wants",
    "plans",
    "knows",
    "teaches",
    "trains",
    "coaches",
    "hosts",
    "uses",
    "runs",
    "went",
    "rides",
    "takes",
    "flies",
    "keeps",
    "holds",
    "covers",
    "handles",
    "manages",
    "owns",
    "heads",
    "oversees",
    "ran",
    "drove",
    "played",
    "spoke",
    "studied",
    "worked",
    "lived",
    "had",
    "owned",
    "used",
    "attended",
    "says",
    "said",
    "pays",
    "paid",
    "pay",
    "spends",
    "spent",
    "charges",
    "charged",
    "rang",
    "called",
    "emailed",
    "texted",
    "told",
    "asked",
    "mentioned",
    "booked",
    "ordered",
    "signed",
    "got",
    "gets",
    "needs",
    "wants",
    "thinks",
    "feels",
    "looks",
    "seems",
    "sounds",
    "goes",
    "comes",
    "came",
    "saw",
    "sees",
    "met",
    "meets",
    "knows",
    "knew",
    "expires",
    "expired",
    "weighs",
    "weighed",
    "uses",
    "teaches",
    "taught",
    "coaches",
    "coached",
    "hosts",
    "hosted",
];

/// Phrases taken for no subject.
const NOT_SUBJECTS: &[&str] = &[
    "it",
    "this",
    "that",
    "there",
    "here",
    "everything",
    "nothing",
    "something",
    "someone",
    "everyone",
    "nobody",
    "anyone",
    "what",
    "who",
    "which",
    "you",
    "things",
    "thing",
];

/// A name that stands for a person rather than a thing: a capitalised word with no thing noun.
fn looks_like_a_person(subject: &Subject) -> bool {
    subject.name.chars().next().is_some_and(char::is_uppercase)
        && !subject.key.split(' ').any(|w| THING_NOUNS.contains(&w))
}

/// Nouns that make a phrase a thing, not a person.
const THING_NOUNS: &[&str] = &[
    "launch",
    "release",
    "api",
    "app",
    "project",
    "meeting",
    "sync",
    "standup",
    "stand-up",
    "call",
    "review",
    "demo",
    "offsite",
    "party",
    "class",
    "practice",
    "rehearsal",
    "rehearsals",
    "appointment",
    "appt",
    "plan",
    "subscription",
    "office",
    "team",
    "service",
    "server",
    "database",
    "repo",
    "site",
    "website",
    "store",
    "shop",
    "gym",
    "membership",
    "rent",
    "lease",
    "budget",
    "deadline",
    "sprint",
    "retro",
    "workshop",
    "conference",
    "event",
    "wedding",
    "dinner",
    "lunch",
    "trip",
    "flight",
    "account",
    "contract",
    "product",
    "platform",
    "pipeline",
    "cluster",
    "backend",
    "frontend",
    "dashboard",
    "board",
    "club",
    "league",
    "lesson",
    "lessons",
    "session",
    "check-in",
    "1:1",
    "one-on-one",
    "interview",
    "exam",
    "course",
    "program",
    "programme",
    "policy",
    "price",
];

/// "Is Linda Park", "has been Wen Li since March": a role filled by a name.
static FILLS_ROLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:is|'s|was|has been|became|will be|is now|changed to|switched to)\s+(?:now\s+)?(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?[A-Z]")
        .expect("fills-role pattern compiles")
});

/// People someone has: a possessive before one of these names someone else ("Maya's
/// sister"), not Maya.
const RELATIONS: &[&str] = &[
    "sister",
    "brother",
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "parents",
    "wife",
    "husband",
    "partner",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancee",
    "fiancé",
    "fiancée",
    "son",
    "daughter",
    "kid",
    "kids",
    "children",
    "child",
    "baby",
    "friend",
    "friends",
    "roommate",
    "flatmate",
    "housemate",
    "neighbor",
    "neighbour",
    "cousin",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "niece",
    "nephew",
    "boss",
    "manager",
    "colleague",
    "coworker",
    "co-worker",
    "teammate",
    "ex",
    "stepdad",
    "stepmom",
    "stepson",
    "stepdaughter",
    "in-laws",
    "mother-in-law",
    "father-in-law",
    "landlord",
    "landlady",
    "doctor",
    "dentist",
    "therapist",
    "trainer",
    "coach",
    "tutor",
    "teacher",
    "mentor",
    "accountant",
    "lawyer",
    "vet",
    "assistant",
    "nanny",
    "supervisor",
    "lead",
    "twin",
    "sibling",
    "siblings",
    "bestie",
    "bff",
    "spouse",
    "stepsister",
    "stepbrother",
];

/// Roles someone has one of at a time: "Omar's manager is Linda" fills Omar's `has:manager`.
const ROLE_NOUNS: &[&str] = &[
    "manager",
    "boss",
    "supervisor",
    "doctor",
    "gp",
    "dentist",
    "therapist",
    "landlord",
    "landlady",
    "trainer",
    "coach",
    "tutor",
    "accountant",
    "lawyer",
    "vet",
    "mentor",
    "partner",
    "wife",
    "husband",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancee",
    "fiancé",
    "fiancée",
    "spouse",
    "lead",
    "pm",
    "nanny",
    "teacher",
    "hairdresser",
    "barber",
    "physio",
    "physiotherapist",
    "psychiatrist",
    "pediatrician",
    "paediatrician",
    "optometrist",
    "dermatologist",
    "cardiologist",
    "oncologist",
    "obgyn",
    "midwife",
    "agent",
    "advisor",
    "adviser",
    "realtor",
    "mechanic",
    "cleaner",
    "dog walker",
    "babysitter",
    "piano teacher",
    "best friend",
];

/// Whether a noun phrase names a thing's attribute ("on-call lead", "budget", "deadline").
fn is_attribute_noun(noun: &str) -> bool {
    let lower = noun.trim().to_lowercase();
    let head = lower.split_whitespace().next_back().unwrap_or_default();
    NOUN_ATTRIBUTES.iter().any(|(nouns, _, _)| nouns.contains(&lower.as_str()) || nouns.contains(&head))
}

/// Times that end a thing's phrase without naming it ("the Atlas budget *for this year*").
const TIME_WORDS: &[&str] =
    &["this year", "next year", "this month", "this quarter", "the year", "now", "today", "2025", "2026", "2027"];

/// A phrase without a time that ends it ("the Atlas budget for this year" → "the Atlas
/// budget").
fn strip_time_phrase(phrase: &str) -> &str {
    let lower = phrase.to_ascii_lowercase();
    for ending in [
        " for this year",
        " this year",
        " for next year",
        " for the year",
        " for 2025",
        " for 2026",
        " for 2027",
        " this quarter",
        " for this quarter",
    ] {
        if let Some(stem) = lower.strip_suffix(ending) {
            return &phrase[..stem.len()];
        }
    }
    phrase
}

/// Splits a thing's phrase at the attribute noun that ends it: "the standup time" →
/// ("the standup", "time").
fn split_attribute_noun(phrase: &str) -> Option<(&str, &str)> {
    let lower = phrase.to_ascii_lowercase();
    for noun in THING_ATTRIBUTE_NOUNS {
        if let Some(stem) = lower.strip_suffix(noun)
            && (stem.is_empty() || stem.ends_with(' ') || stem.ends_with("'s "))
        {
            let cut = stem.len();
            let thing = phrase[..cut].trim_end().trim_end_matches("'s").trim_end();
            return Some((thing, &phrase[cut..]));
        }
    }
    None
}

/// Nouns naming an attribute of a thing, at the end of its phrase.
const THING_ATTRIBUTE_NOUNS: &[&str] = &[
    "time",
    "start time",
    "date",
    "due date",
    "deadline",
    "day",
    "venue",
    "location",
    "address",
    "lead",
    "owner",
    "version",
    "price",
    "cost",
    "fee",
    "rate",
    "plan",
    "tier",
    "status",
    "stack",
    "vendor",
    "provider",
    "supplier",
    "schedule",
    "frequency",
    "cadence",
    "room",
    "point of contact",
    "contact",
    "budget",
    "go-live",
    "release date",
    "launch date",
    "host",
    "manager",
    "pm",
    "dri",
    "on-call",
    "bill",
    "payment",
    "fee",
    "budget",
    "premium",
    "charge",
];

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

/// Adverbs and auxiliaries a predicate may open with before its verb.
const ADVERBS: &str = r"(?:(?:just|recently|finally|now|officially|already|actually|currently|eventually|then|really|definitely|basically|mostly|still|also|fully|newly|happily|permanently|only|even|apparently|somehow|quietly|formally|technically|full[- ]time|has|have|had|'s|'ve|been|is|are|was|were|am|'m|'re|got|gotten|did|does|do)\s+)*";

/// Whether any verb or object form reads a predicate (each is anchored at its start, so a
/// miss costs a few bytes per form).
fn any_form_reads(predicate: &str) -> bool {
    VERB_FORMS.iter().chain(OBJECT_FORMS.iter()).any(|form| form.pattern.is_match(predicate))
}

/// A form: a pattern over a predicate whose group `v` is the value, the attribute it fills,
/// and whether it says the value holds or ended.
struct Form {
    attribute: &'static str,
    polarity: Polarity,
    pattern: Regex,
    /// What the value must look like, if anything.
    class: Class,
    /// Whether the form reads the past tense of a state (it held once, not now).
    past: bool,
}

/// What a captured value must look like for the form to count.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Any,
    /// Not a time, a day or a date (a place, an organisation).
    NotATime,
    /// A time, a day or a date.
    Time,
    /// An amount of money.
    Money,
    /// A version number.
    Version,
    /// A person's name (capitalised).
    Name,
    /// A phone number.
    PhoneNumber,
    /// An email address.
    Email,
}

fn compile(attribute: &'static str, polarity: Polarity, class: Class, past: bool, pattern: &str) -> Form {
    let pattern = pattern
        .replace("{A}", ADVERBS)
        .replace("{THE}", r"(?:(?:the|a|an|his|her|their|my|our|your|its|this|that|some|new|old|brand new|used|second-hand|secondhand)\s+)*")
        .replace("{V}", r"(?P<v>.+)")
        .replace("{LANG}", LANGUAGES)
        .replace("{INSTRUMENT}", INSTRUMENTS)
        .replace("{SPORT}", SPORTS)
        .replace("{PET}", PETS)
        .replace("{EDITOR}", EDITORS)
        .replace("{OS}", SYSTEMS)
        .replace("{PHONE}", PHONES)
        .replace("{CAR}", CARS)
        .replace("{DIET}", DIETS)
        .replace("{TECH}", TECH)
        .replace("{ROLE}", ROLE_TITLES);
    Form {
        attribute,
        polarity,
        pattern: Regex::new(&format!("(?i)^{pattern}"))
            .unwrap_or_else(|e| panic!("form for {attribute} compiles: {e}")),
        class,
        past,
    }
}

use Class::{Any, Email, Money, Name, NotATime, PhoneNumber, Time, Version};
use Polarity::{Ended, Holds};

/// The verb forms of the catalogue's attributes, most specific first: where two forms read
/// the same words, the first wins.
static VERB_FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    let f = |a, p, c, pat: &str| compile(a, p, c, false, pat);
    let past = |a, p, c, pat: &str| compile(a, p, c, true, pat);
    vec![
        // Endings first: "no longer works at", "quit smoking", "sold the Golf".
        f(
            "habits",
            Ended,
            Any,
            r"{A}(?:quit|stopped|gave up|given up|kicked|ditched|dropped) (?P<v>smoking|vaping|drinking|alcohol|booze|caffeine|coffee|sugar|soda|energy drinks|cigarettes|weed|gambling|nicotine|chewing gum|gum|nail biting|biting (?:his|her|my|their) nails|junk food|meat|red meat|dairy|gluten|carbs)\b",
        ),
        f(
            "habits",
            Ended,
            Any,
            r"{A}(?:went|is|'s|am|'m|are|'re) (?:now )?(?P<v>sober|teetotal|alcohol[- ]free|caffeine[- ]free|smoke[- ]free|nicotine[- ]free)\b",
        ),
        f(
            "employer",
            Ended,
            Any,
            r"{A}(?:quit|left|lost|resigned from|walked away from) (?:his|her|their|my|the|a|this|that) (?:old )?(?:job|position|role)\b",
        ),
        f("employer", Ended, Any, r"{A}(?:was|got|been) (?:laid off|let go|fired|made redundant)\b"),
        f("employer", Ended, Any, r"{A}(?:retired|resigned)\s*$"),
        f("has:partner", Ended, Name, r"{A}(?:broke up|split up|split|separated) (?:with|from) {V}"),
        f("has:partner", Ended, Name, r"{A}(?:divorced|dumped) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\s*$"),
        f("relationship", Holds, Any, r"{A}(?P<v>broke up|split up|got divorced|got separated)\b"),
        f(
            "car",
            Ended,
            Any,
            r"{A}(?:sold|got rid of|gave away|scrapped|totaled|totalled|wrote off|returned) {THE}(?P<v>car|ride|(?:\w+ )?{CAR}(?: \w+)?)\b",
        ),
        f(
            "pets",
            Ended,
            Any,
            r"{A}(?:gave away|rehomed|re-homed|lost|had to put down|put down) {THE}(?P<v>(?:\w+ )?{PET}(?: [A-Z]\w+)?)\b",
        ),
        f(
            "instruments",
            Ended,
            Any,
            r"{A}(?:stopped playing|quit playing|gave up playing|gave up|quit|sold|no longer plays|doesn't play|does not play) {THE}(?P<v>{INSTRUMENT})\b",
        ),
        f(
            "activities",
            Ended,
            Any,
            r"{A}(?:stopped|quit|gave up|dropped out of|no longer does|doesn't do) (?:playing |doing |going )?(?P<v>{SPORT})\b",
        ),
        f(
            "learning",
            Ended,
            Any,
            r"{A}(?:stopped|quit|gave up(?: on)?|dropped) (?:learning |studying |taking )?(?P<v>{LANG})(?: lessons| classes)?\b",
        ),
        f(
            "medication",
            Ended,
            Any,
            r"{A}(?:stopped taking|quit taking|came off|went off|got off|is off|'s off|stopped|weaned off|tapered off) (?:of )?(?P<v>[\w\- ]{3,40}?)(?: now|$|\s+(?:after|because|since|last|this|in|a|two|three|for)\b)",
        ),
        f(
            "allergies",
            Ended,
            Any,
            r"{A}(?:outgrew|outgrown|grew out of) (?:his|her|their|my|the)? ?(?P<v>[\w\- ]+?) allerg(?:y|ies)",
        ),
        f(
            "subscriptions",
            Ended,
            Any,
            r"{A}(?:cancell?ed|unsubscribed from|ended|dropped|let) {THE}(?P<v>[A-Z][\w+\-]*(?: [A-Z+][\w+\-]*)?)(?: subscription| membership| account| plan)?(?: lapse| expire)?\b",
        ),
        f(
            "tools",
            Ended,
            Any,
            r"{A}(?:stopped using|no longer uses|doesn't use|quit using|uninstalled|deleted|ditched|dropped|abandoned) {THE}(?P<v>[\w+.#\- ]{2,30}?)(?: for| because| after| since|$)",
        ),
        f(
            "*",
            Ended,
            Any,
            r"{A}(?:switched|moved|migrated|went|changed|converted) (?:away )?(?:over )?from {THE}(?P<v>[\w+.#\- ]{2,30}?) (?:to|over to|onto) ",
        ),
        f("*", Ended, Any, r"{A}(?:replaced|swapped) {THE}(?P<v>[\w+.#\- ]{2,30}?) (?:with|for) "),
        f("*", Ended, Any, r"{A}(?:traded|sold) (?:in )?{THE}(?P<v>[\w+.#\- ]{2,30}?) (?:in )?for "),
        f(
            "*",
            Ended,
            NotATime,
            r"{A}(?:left|quit|moved out of|moved away from|resigned from|retired from|was laid off from|got laid off from|got fired from|dropped out of|graduated from|withdrew from|withdrawn from|pulled out of|dropped out of|backed out of|sold|cancell?ed|ditched|dumped|abandoned|closed|returned|gave away) {THE}(?P<v>[A-Z][\w'&.\-]*(?: (?:[A-Z][\w'&.\-]*|of|de|&))*)",
        ),
        // Where someone lives.
        f("address", Holds, Any, r"{A}(?:lives|live|living|is living) at (?P<v>\d.+)"),
        past("residence", Holds, NotATime, r"{A}(?:lived) (?:in|at) {V}"),
        f(
            "residence",
            Holds,
            NotATime,
            r"{A}(?:lives|live|living|resides|reside|is living|are living|settled(?: down)?|is settled|is based|are based|based|is now based|'s based) (?:in|at|out of) {V}",
        ),
        f(
            "residence",
            Holds,
            NotATime,
            r"{A}(?:moved|relocated|moves|relocates|has moved|finally moved|just moved|moved back|moved over|emigrated|immigrated) (?:back |over |out |up |down )?(?:to|into|in) {V}",
        ),
        f("residence", Holds, NotATime, r"{A}calls (?P<v>.+?) home\b"),
        f(
            "residence",
            Holds,
            NotATime,
            r"{A}(?:bought|rented|renting|rents|rent|owns|own|got|found) (?:a |an |the )?(?:new )?(?:little |tiny |small )?(?:house|flat|apartment|place|condo|home|studio) (?:in|near) {V}",
        ),
        // Work.
        f(
            "workplace",
            Holds,
            Any,
            r"{A}(?:works?|working|worked|is working|based|is based|sits|sitting) (?:at|from|out of|in) (?:the |our |their )?(?P<v>[\w'&.\- ]+? (?:office|branch|site|campus|store|location|hq|headquarters|clinic|hospital|lab|plant|depot|warehouse|studio|factory|school|ward|station))\b",
        ),
        f(
            "workplace",
            Holds,
            Any,
            r"{A}(?:got |been |was |were )?(?:transferred|moved|relocated|reassigned|posted|sent) (?:over )?to (?:the |our |their )?(?P<v>[\w'&.\- ]+? (?:office|branch|site|campus|store|location|hq|headquarters|clinic|hospital|lab|plant|depot|warehouse|studio|factory|ward|station))\b",
        ),
        f(
            "team",
            Holds,
            Any,
            r"{A}(?:got |been |was |were )?(?:transferred|moved|switched|reassigned|joined|is on|'s on|is in|'s in|on|in|part of|is part of|works on|working on) (?:to |over to )?(?:the |a )?(?P<v>[\w&\- ]+? (?:team|squad|group|department|dept|crew|pod|unit|org|division|tribe|guild))\b",
        ),
        f("role", Holds, Any, r"{A}(?:got |been |was )?promoted to {V}"),
        f(
            "role",
            Holds,
            Any,
            r"{A}(?:works?|working|is working|is employed|started|starts|began|now works|took a job|got a job|was hired|got hired|signed on|joined) as (?:a |an |the |our |their )?{V}",
        ),
        past("role", Holds, Any, r"{A}(?:worked|was employed) as (?:a |an |the )?{V}"),
        f(
            "role",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|became|become|becomes|turned|is now|'s now) (?:now )?(?:a |an |the |our |their |lead |head )(?P<v>(?:[\w\-]+ ){0,3}{ROLE})\b",
        ),
        f(
            "employer",
            Holds,
            NotATime,
            r"{A}(?:works?|working|is working|'s working|been working|is employed|employed|interns?|interning) (?:at|for|with) {V}",
        ),
        past("employer", Holds, NotATime, r"{A}(?:worked|was employed|interned) (?:at|for|with) {V}"),
        f(
            "employer",
            Holds,
            NotATime,
            r"{A}(?:joined|started at|started with|started working at|started working for|started a (?:new )?job at|started a new role at|got (?:a |the )?(?:new )?(?:job|position|role|offer|gig) (?:at|with)|took (?:a |the )?(?:new )?(?:job|position|role|offer|gig) (?:at|with)|accepted (?:a |an |the )?(?:job|offer|position|role) (?:at|from|with)|was hired (?:at|by)|got hired (?:at|by)|signed with|landed (?:a |the )?(?:job|role|position) at|is now at|'s now at|went to work (?:at|for)) (?P<v>[A-Z][\w'&.\-]*(?: (?:[A-Z][\w'&.\-]*|of|&))*|a [\w\- ]+?(?:startup|company|firm|agency|bank|hospital|school|bakery|restaurant|studio|lab|clinic|nonprofit))",
        ),
        f(
            "school",
            Holds,
            Any,
            r"{A}(?:studies|is studying|studying|is a student|'s a student|is enrolled|enrolled|attends|is attending|started (?:kindergarten|school|college|university|uni|preschool|daycare|nursery|middle school|high school) at|goes to (?:school|college|uni|university|kindergarten|daycare|preschool) at|transferred to|got into|was accepted (?:at|to|into)|got accepted (?:at|to|into)) (?:at |in )?{V}",
        ),
        f(
            "school",
            Holds,
            Any,
            r"{A}goes to (?P<v>[\w'\- ]+? (?:school|college|university|academy|elementary|kindergarten|preschool|daycare|nursery|high|montessori))\b",
        ),
        f(
            "grade",
            Holds,
            Any,
            r"{A}(?:is|'s|are|am|started|starts|moved up to|is in|'s in|in|is now in|'s now in|teaches|teach|is teaching|'m teaching) (?:now )?(?:in )?(?P<v>(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) grade|grade \d{1,2}|year \d{1,2}|kindergarten|preschool|pre-k|reception)\b",
        ),
        f("grade", Holds, Any, r"{A}(?:is|'s|are|am) (?:now )?a (?P<v>freshman|sophomore|junior|senior)\b"),
        f("school", Ended, Any, r"{A}(?P<v>graduated)\b"),
        // People in someone's life.
        f("has:manager", Holds, Name, r"{A}(?:reports|reporting|report|now reports) (?:directly )?to {V}"),
        f(
            "has:partner",
            Holds,
            Name,
            r"{A}(?:is |'s |are |'re |am |'m )?(?:now )?(?:dating|seeing|engaged to|married to|in a relationship with|going out with) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        ),
        f(
            "has:partner",
            Holds,
            Name,
            r"{A}(?:married|got married to|got engaged to|proposed to|moved in with) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        ),
        f(
            "relationship",
            Holds,
            Any,
            r"{A}(?:is|'s|are|'re|am|'m|got|just got|recently got|became) (?:now )?(?P<v>single|married|engaged|divorced|separated|widowed|in a relationship|hitched)\b",
        ),
        // Things someone uses.
        f(
            "phone",
            Holds,
            Any,
            r"{A}(?:uses|use|using|has|have|got|bought|switched to|upgraded to|moved to|went to|is using|'s using|carries|picked up|is on|'s on|on|rocking|rocks) {THE}(?P<v>{PHONE})",
        ),
        f(
            "car",
            Holds,
            Any,
            r"{A}(?:drives|drive|driving|is driving|got|bought|leased|leases|owns|picked up|switched to|upgraded to|has|have) {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)",
        ),
        past("car", Holds, Any, r"{A}drove {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)"),
        f("car", Holds, Any, r"{A}traded .{1,40}? (?:in )?for {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)"),
        f(
            "editor",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is using|'s using|codes in|writes code in|works in|switched to|moved to|moved over to|went back to|switched back to|is back on|back on|is on|'s on|been on|on|lives in|swears by|prefers|picked up|tried) (?P<v>{EDITOR})\b",
        ),
        f(
            "os",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is using|'s using|runs|switched to|moved to|went back to|is on|'s on|been on|on|daily drives|daily-drives) (?P<v>{OS})\b",
        ),
        f(
            "commute",
            Holds,
            Any,
            r"{A}(?P<v>bikes|cycles|walks|drives|runs|skates|scooters|carpools|takes the (?:train|bus|subway|tube|metro|tram|ferry|light rail)|rides (?:the|a|his|her|my) \w+|commutes by \w+(?: \w+)?) to (?:work|the office|school)\b",
        ),
        f("commute", Holds, Any, r"{A}commutes by (?P<v>\w+(?: \w+)?)"),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|'re|went|gone|has gone|became|become|turned|eats|eating|stays|keeps) (?:fully |strictly |mostly |now |a |an |100% )*(?P<v>{DIET})\b",
        ),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:follows|is on|'s on|started|does|is doing|tries|sticks to) (?:a |an |the )?(?P<v>[\w\- ]+?) diet\b",
        ),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:started eating|eats|is eating|eating) (?P<v>meat|fish|chicken|pork|beef|everything|anything) (?:again|now)\b",
        ),
        f(
            "age",
            Holds,
            Any,
            r"{A}(?:is|'s|turned|just turned|will be|is now|'s now) (?P<v>\d{1,3})(?: years old| yrs old| yo)?\s*(?:now|today|yesterday|last \w+|this \w+)?\s*$",
        ),
        f(
            "activities",
            Holds,
            Any,
            r"{A}(?:is |'s |am |'m |are |'re )?(?:training for|signed up for|registered for|entered|is doing|doing) {THE}(?P<v>[A-Z][\w'\-]*(?: [\w'\-]+){0,4}? (?:marathon|10k|5k|triathlon|race|ride|challenge|trek|tournament|open|cup))\b",
        ),
        f(
            "children_count",
            Holds,
            Any,
            r"{A}(?:has|have|had|now has|now have) (?P<v>(?:one|two|three|four|five|six|\d+) (?:child|children|kids?|sons?|daughters?))\b",
        ),
        // Many values.
        f(
            "languages",
            Holds,
            Any,
            r"{A}(?:speaks|speak|is fluent in|'s fluent in|fluent in|is native in|is bilingual in|knows|can speak|grew up speaking|speaks fluent|is a native (?:\w+ )?speaker of) (?P<v>{LANG}(?:(?:,| and| &| as well as|, and) {LANG})*)",
        ),
        past("languages", Holds, Any, r"{A}spoke (?P<v>{LANG}(?:(?:,| and| &) {LANG})*)"),
        f(
            "learning",
            Holds,
            Any,
            r"{A}(?:is |'s |am |'m |are |'re )?(?:now )?(?:learning|studying|taking (?:a |an )?(?:class|classes|lessons|course) in|started learning|began learning|picked up|started|takes) (?P<v>{LANG})(?: lessons| classes)?\b",
        ),
        f(
            "instruments",
            Holds,
            Any,
            r"{A}(?:plays|play|playing|is playing|'s playing|started playing|took up|picked up|is learning|learning|started learning|has been playing|practices|practises) (?:the )?(?P<v>{INSTRUMENT})\b",
        ),
        past("instruments", Holds, Any, r"{A}played (?:the )?(?P<v>{INSTRUMENT})\b"),
        f(
            "activities",
            Holds,
            Any,
            r"{A}(?:plays|play|playing|is playing|started playing|took up|picked up|does|do|is into|'s into|got into|into|loves|enjoys|goes|started|practices|practises|trains|competes in) (?P<v>{SPORT})\b",
        ),
        f(
            "pets",
            Holds,
            Any,
            r"{A}(?:has|have|got|adopted|owns|rescued|took in|brought home|fosters|welcomed) (?:a |an |two |three |four |\d+ |a new |another |a little |a rescue |an adorable )?(?P<v>(?:[\w\-]+ )?{PET}s?(?: (?:named|called) [A-Z]\w+)?)",
        ),
        f(
            "children",
            Holds,
            Any,
            r"{A}(?:has|have|had|welcomed) (?:a |an |one |two |three |four |\d+ |a new |another |baby )?(?:new |baby |little |newborn )?(?P<v>sons?|daughters?|kids|children|child|baby(?: boy| girl)?|twins|boy|girl)\b",
        ),
        f(
            "allergies",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|'re|turned out to be|found out (?:she|he|they) (?:is|are)) (?:severely |mildly |very |deathly |super |really |highly |slightly |quite |now |also )*allergic to {V}",
        ),
        f(
            "allergies",
            Holds,
            Any,
            r"{A}(?:has|have|developed|got) (?:a |an )?(?:severe |mild |bad |serious )?(?P<v>[\w\- ]+?) allerg(?:y|ies)\b",
        ),
        f(
            "conditions",
            Holds,
            Any,
            r"{A}(?:was |got |has been |is |been )?(?:diagnosed with|suffers from|is living with|lives with|has|have) (?P<v>asthma|diabetes|type [12] diabetes|adhd|autism|migraines?|eczema|celiac|coeliac(?: disease)?|ibs|crohn's|arthritis|high blood pressure|hypertension|anxiety|depression|epilepsy|lupus|ms|pcos|endometriosis|insomnia|sleep apnea|sleep apnoea|long covid|tinnitus|gout|psoriasis|a heart condition|hypothyroidism|hyperthyroidism|anemia|anaemia|glaucoma|dyslexia|a bad back|back pain|a thyroid condition)\b",
        ),
        f("conditions", Holds, Any, r"{A}(?:was |got |has been |been )?diagnosed with {V}"),
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:takes|take|taking|is taking|'s taking|is on|'s on|started taking|started on|was put on|got put on|was prescribed|got prescribed|is prescribed) (?P<v>[\w\- ]{3,30}?) (?:for|daily|every|twice|once|each|at night|in the morning|\d)",
        ),
        // "Uses a … for …" is mostly not medicine ("uses a Zipcar membership for errands"):
        // only what is used as medicine.
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:uses|use|is using|'s using|started using) (?:an? |the |her |his |their |my )?(?P<v>(?:[\w\-]+ )?(?:inhaler|nasal spray|eye drops|cpap(?: machine)?|insulin pump|nicotine patch(?:es)?))\b",
        ),
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:takes|take|taking|is taking|'s taking|is on|'s on|started taking|started on|was put on|got put on|was prescribed|got prescribed) (?P<v>metformin|insulin|ibuprofen|aspirin|lexapro|zoloft|prozac|sertraline|adderall|ritalin|levothyroxine|synthroid|prednisone|melatonin|lisinopril|warfarin|statins?|atorvastatin|antidepressants|antibiotics|birth control|the pill|an inhaler|vitamin [a-z]\d?|iron supplements?|omeprazole|amlodipine|metoprolol|gabapentin|wellbutrin|bupropion|lithium|ozempic|wegovy)\b",
        ),
        f("habits", Holds, Any, r"{A}(?P<v>smokes|vapes|is a smoker|'s a smoker|drinks coffee|drinks alcohol)\b"),
        f(
            "subscriptions",
            Holds,
            Any,
            r"{A}(?:subscribes to|is subscribed to|subscribed to|pays for|signed up for|has a subscription to|got a subscription to) (?P<v>[A-Z][\w+\-]*(?: [A-Z+][\w+\-]*)?)",
        ),
        // Things and events, about an object the subject acts on ("moved the trio rehearsals
        // to Wednesdays") come from `object_forms`; here, their own predicates.
        f(
            "when",
            Holds,
            Time,
            r"{A}(?:been |got |was |were |is |are )?(?:moved|pushed(?: back| out)?|shifted|changed|rescheduled|bumped|switched|slipped|postponed|delayed|brought forward|moved up|pulled in|pulled forward|reset) (?:back )?(?:to|until|till|for) {V}",
        ),
        f(
            "when",
            Holds,
            Time,
            r"{A}(?:is|'s|are|happens|runs|takes place|starts|begins|meets|will be|kicks off|falls|lands|ships|launches|goes live|is due|due|ends|closes|opens|is scheduled|is set|is planned|'s scheduled|is scheduled to \w+|is due to \w+|is set to \w+|now opens|now starts|opens|starts) (?:now |always |usually |normally |still |officially |set |scheduled )?(?:at|on|for|from|every|by|in)? ?{V}",
        ),
        f(
            "cadence",
            Holds,
            Any,
            r"{A}(?:is|'s|are|happens|runs|meets|ship|ships|go out|goes out|are released|is released|moved to|moves to|moving to|switched to|changed to|went|goes|going|now happens|happen) (?:now )?(?:a |an )?(?P<v>daily|weekly|biweekly|bi-weekly|fortnightly|monthly|quarterly|yearly|annually|every (?:other |two |three |four |\d+ )?(?:day|week|month|quarter|year|weekday)s?|twice a (?:week|month|year)|once a (?:week|month|year)|three times a week)\b",
        ),
        f(
            "lead",
            Holds,
            Name,
            r"{A}(?:is |'s |are |was |has been |been |got )?(?:now )?(?:led|owned|run|managed|handled|driven|coordinated|headed|chaired|hosted|taken over|picked up) by {V}",
        ),
        f(
            "lead",
            Holds,
            Name,
            r"{A}(?:been |was |got |is |has been )?(?:handed|passed|given|transferred|reassigned|assigned|moved) (?:over |off )?to {V}",
        ),
        f(
            "version",
            Holds,
            Version,
            r"{A}(?:is |'s |are |'re )?(?:now )?(?:on|at|running|runs|uses|pinned to|locked to|bumped to|upgraded to|updated to|moved to|released|shipped|rolled out|cut|tagged) (?:version |release )?{V}",
        ),
        f(
            "price",
            Holds,
            Money,
            r"{A}(?:is|'s|are|costs|cost|runs|goes for|sells for|is priced at|'s priced at|comes to|now costs|went up to|went down to|rose to|fell to|dropped to|increased to|decreased to|jumped to|climbed to|was raised to|got raised to|was cut to|is going up to|will be|charges|bills|is billed at) (?:now |only |just |about |around )?(?:at |to )?{V}",
        ),
        f(
            "tier",
            Holds,
            Any,
            r"{A}(?:is|'s|are|'re|am|'m|got|been|was) (?:now )?(?:on|moved to|upgraded to|downgraded to|switched to) (?:the |a )?(?P<v>[\w+\- ]+?) (?:plan|tier|subscription|package|license|licence|membership)\b",
        ),
        f(
            "tier",
            Holds,
            Any,
            r"{A}(?:upgraded|downgraded|switched|moved|changed|went) (?:to |from [\w\-+ ]+? to )(?:the )?(?P<v>[\w+\- ]+?) (?:plan|tier|subscription|package|license|licence)\b",
        ),
        f(
            "status",
            Holds,
            Any,
            r"{A}(?:is |'s |are |was |has been |got |been |just |now )*(?:now |officially )?(?P<v>on hold|paused|cancell?ed|shelved|scrapped|killed|live|launched|shipped|done|complete|completed|finished|in beta|in review|blocked|deprecated|archived|sunset|sunsetted|frozen|approved|rejected|signed|closed|in progress|underway|green-?lit|out|delayed|postponed)\b\s*(?:now)?\s*$",
        ),
        f(
            "stack",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is built (?:on|with|in)|built (?:on|with|in)|runs on|is written in|written in|is hosted on|hosted on|is deployed (?:on|to)|deployed (?:on|to)|lives on|sits on|is on|'s on|moved to|migrated to|switched to|ported to|rewritten in|rewrote (?:it )?in|moved over to|is now on|now on|now runs on|runs) (?P<v>{TECH})\b",
        ),
        f(
            "stack",
            Holds,
            Any,
            r"{A}(?:stores|keeps|puts|saves|logs|writes|are|is) (?:its |their |the |our )?[\w\- ]{0,20}?(?:in|on|to) (?P<v>{TECH})\b",
        ),
        f(
            "for",
            Holds,
            Any,
            r"{A}(?:prefers|uses|likes|relies on|swears by|switched to|has switched to|moved to|went with|picked|chose|codes in|writes) (?P<v>[A-Z][\w+#.\-]*(?: [A-Z0-9][\w+#.\-]*)?) for (?P<p>(?:all |most |everything |any )?(?:her |his |their |my |the )?[\w\- ]{3,30}?)\s*(?:;|,|\.|$|now|these days)",
        ),
        f(
            "location",
            Holds,
            NotATime,
            r"{A}(?:is|'s|are) (?:now )?(?:located )?(?:at|on) (?P<v>\d+\s.+|[A-Z][\w'\-]*(?: [A-Z][\w'\-]*)* (?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|square|plaza|place)\b.*)",
        ),
    ]
});

/// Forms where the clause's subject acts on an object that the claim is about: "moved *the
/// trio rehearsals* to Wednesdays", "handed *billing* over to Priya", "raised *the rent* to
/// $1,500", "we moved *Helix* to Postgres".
static OBJECT_FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    let f = |a, c, pat: &str| compile(a, Holds, c, false, pat);
    vec![
        f(
            "when",
            Time,
            r"{A}(?:moved|pushed(?: back| out)?|shifted|changed|rescheduled|bumped|switched|postponed|delayed|brought forward|moved up|pulled in) (?P<o>(?:the |our |his |her |their |my |this week's |next week's )?[\w'\- ]{2,40}?) (?:back )?(?:to|until|till) {V}",
        ),
        f(
            "lead",
            Name,
            r"{A}(?:handed|passed|gave|transferred|reassigned|assigned) (?:over |off )?(?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,40}?) (?:over |off )?to {V}",
        ),
        f(
            "price",
            Money,
            r"{A}(?:pays|pay|paying|paid|spends|spend|spending|is paying|'s paying) (?P<v>(?:[$£€¥]\s?[\d,.]+|[\d,.]+\s?(?:dollars|euros|pounds|bucks))(?:\s?(?:a|per|/)\s?(?:month|mo|week|wk|year|yr))?) (?:a month |per month |monthly |a year |each month )?(?:for|on|to) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,30}?)\s*$",
        ),
        f(
            "price",
            Money,
            r"{A}(?:raised|increased|cut|lowered|reduced|bumped|dropped|hiked|changed) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,30}?) (?:up |down )?to {V}",
        ),
        f(
            "stack",
            Any,
            r"{A}(?:moved|migrated|switched|ported|rewrote|rebuilt|rewritten) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) (?:over )?(?:to|onto|in|into) (?P<v>{TECH})\b",
        ),
        f(
            "~",
            Any,
            r"{A}(?:raised|increased|cut|lowered|reduced|bumped|dropped|hiked|changed|upped|doubled|halved|capped|set|extended|shortened) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,40}?) (?:up |down )?to {V}",
        ),
        f(
            "*",
            Any,
            r"{A}(?:finished |completed |done )?(?:migrating|moving|migrated|moved|switched|switching) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) (?:off|away from|off of|from) (?P<v>{TECH})\b",
        ),
        f(
            "version",
            Version,
            r"{A}(?:upgraded|bumped|updated|moved|pinned) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) to (?:version |v)?{V}",
        ),
    ]
});

/// Forms where the predicate names who has the subject: "Rui is *my* manager", "Priya is the
/// new lead on Atlas", "Priya took over billing", "Pho is my favourite food".
static INVERSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:is|'s|has become|became) (?:now )?(?P<owner>my|his|her|their|the user's|our|[A-Z][\w'-]*'s) (?:new |current |all-time |absolute )?(?P<role>[\w\- ]+?)(?:\s+(?:now|these days|since \w+|as of \w+))?\s*$")
        .expect("inverse pattern compiles")
});

static TAKES_OVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:just |now |officially |has |have |'s )*(?:took over|taken over|takes over|leads|owns|runs|is leading|is running|is in charge of|is responsible for|now owns|now leads|is (?:now )?the (?:new )?(?:lead|owner|pm|point of contact|dri|tech lead|product owner|manager) (?:of|for|on)) (?P<o>(?:the )?[\w'\- ]{2,40}?)\s*$")
        .expect("takes-over pattern compiles")
});

fn verb_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    // "No longer …", "doesn't … anymore": the claim within, ended.
    if let Some(inner) = ended_within(predicate) {
        let mut ended = Found::new();
        verb_forms_plain(&inner, subject, &mut ended);
        found.dropped += ended.dropped;
        for (mut claim, hold) in ended.claims {
            if claim.polarity == Holds {
                claim.polarity = Ended;
                found.push((claim, hold));
            }
        }
        return;
    }
    if let Some(negated) = denied(predicate) {
        let mut held = Found::new();
        verb_forms_plain(negated, subject, &mut held);
        found.dropped += held.dropped;
        found.extend(held.claims.into_iter().map(|(claim, _)| (claim, Some(Hold::Denied))));
        return;
    }
    if let Some(used) = USED_TO.captures(predicate) {
        // "used to live in Oslo": it held, and no longer does.
        let inner = used["rest"].to_string();
        let mut was = Found::new();
        verb_forms_plain(&inner, subject, &mut was);
        found.dropped += was.dropped;
        for (mut claim, hold) in was.claims {
            claim.polarity = Ended;
            found.push((claim, hold));
        }
        return;
    }
    verb_forms_plain(predicate, subject, found);
}

static USED_TO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:\w+\s+)?used to\s+(?P<rest>.+)$").expect("used-to pattern compiles"));

/// Contractions as chat writes them, without the apostrophe ("im vegan", "i dont drive any
/// more"): spelled out so the forms read them as they read "I'm" and "don't". Only words that
/// are nothing else in English; "IM" (a message) and "wont" / "cant" (real words) are left.
static CHAT_CONTRACTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:[iI]m|dont|doesnt|isnt|arent|didnt|havent|hasnt|wasnt|werent)\b")
        .expect("chat contraction pattern compiles")
});

fn chat_contraction(word: &str) -> String {
    match word {
        "im" | "Im" => "I'm".to_owned(),
        other => format!("{}'t", &other[..other.len() - 1]),
    }
}

/// The claim inside an ending: "no longer works at Stripe", "is no longer allergic to nuts",
/// "doesn't smoke anymore", "is not vegetarian any more", "isn't with Sam anymore".
fn ended_within(predicate: &str) -> Option<String> {
    let found = ENDED.captures(predicate)?;
    // "is no longer vegetarian", "am no longer on the board" → "is vegetarian", "is on the board".
    if let Some(rest) = found.name("rest2") {
        return Some(format!("is {}", ANYMORE.replace(rest.as_str(), "")));
    }
    let rest = found.name("rest").or(found.name("rest1"))?.as_str();
    let rest = ANYMORE.replace(rest, "").into_owned();
    // "doesn't smoke" → "smokes"; "isn't vegetarian" → "is vegetarian".
    let aux = found.name("aux").map(|m| m.as_str().to_lowercase()).unwrap_or_default();
    let rest = match aux.as_str() {
        a if ["is", "are", "am", "'s", "'m", "'re"].iter().any(|be| a.starts_with(be)) => {
            format!("is {rest}")
        }
        a if a.starts_with("does") || a.starts_with("do") => third_person(&rest),
        a if a.starts_with("has") || a.starts_with("have") => format!("has {rest}"),
        _ => rest,
    };
    Some(rest)
}

static ENDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|really|actually|also|definitely)\s+)*(?:no longer\s+(?P<rest1>.+)|(?:is|are|am|'s|'m|'re)\s+no longer\s+(?P<rest2>.+)|(?P<aux>doesn't|does not|don't|do not|isn't|is not|aren't|are not|am not|'m not|'s not|hasn't|has not|haven't|have not|not)\s+(?P<rest>.+?)\s+any ?more\b.*)$")
        .expect("ended pattern compiles")
});

static ANYMORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\s*\bany ?more\b.*$").expect("anymore pattern compiles"));

/// "smoke" → "smokes", "play guitar" → "plays guitar": a base verb as the forms read it.
fn third_person(rest: &str) -> String {
    let mut words = rest.splitn(2, ' ');
    let verb = words.next().unwrap_or_default();
    let tail = words.next().map(|t| format!(" {t}")).unwrap_or_default();
    let verb = match verb {
        "have" => "has".to_owned(),
        "do" => "does".to_owned(),
        "go" => "goes".to_owned(),
        v if v.ends_with('s') || v.ends_with("sh") || v.ends_with("ch") => format!("{v}es"),
        v => format!("{v}s"),
    };
    format!("{verb}{tail}")
}

/// The predicate of a denial ("did not move to Boston", "never lived in Oslo", "isn't moving").
fn denied(predicate: &str) -> Option<&str> {
    DENIED.captures(predicate).and_then(|c| c.name("rest")).map(|m| m.as_str())
}

static DENIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|really|actually|definitely|still)\s+)*(?:didn't|did not|doesn't|does not|don't|do not|isn't|is not|aren't|are not|wasn't|was not|weren't|'m not|am not|'s not|hasn't|has not|haven't|have not|never|won't|will not|can't|cannot|couldn't|not)\s+(?:(?:actually|end up|ended up|really|even|officially|yet)\s+)*(?P<rest>.+)$")
        .expect("denied pattern compiles")
});

fn verb_forms_plain(predicate: &str, subject: &Subject, found: &mut Found) {
    let predicate = predicate.trim();
    let mut taken = 0;
    for form in VERB_FORMS.iter() {
        let Some(captures) = form.pattern.captures(predicate) else { continue };
        let Some(raw) = captures.name("v") else {
            // A form with no value (an ending of the attribute as a whole).
            found.push((claim(subject, form.attribute, None, form.polarity), None));
            taken += 1;
            break;
        };
        let Some(value) = value_of(raw.as_str(), form.class) else { continue };
        // What ended is what the verb names, not where it went: "sold the Triumph *to a guy*".
        let value = match form.polarity {
            Ended => [" to ", " for ", " from ", ", "]
                .iter()
                .fold(value, |v, stop| v.split(stop).next().unwrap_or_default().trim().to_owned()),
            Holds => value,
        };
        if value.is_empty() {
            continue;
        }
        // "sold their car", "ditched the phone": an ending that names the attribute's own noun
        // ends whatever value it holds, as "quit his job" does.
        if form.polarity == Ended && names_the_attribute(form.attribute, &value) {
            found.push((claim(subject, form.attribute, None, Ended), None));
            taken += 1;
            break;
        }
        found.dropped += dropped_words(raw.as_str(), &value);
        // What the clause goes on to say after the form ("year 5 *at a primary school in
        // Bristol*") is said too, and no claim holds it.
        if let Some(whole) = captures.get(0) {
            found.dropped += content_words(&predicate[whole.end()..]);
        }
        // "prefers Python for data work": the tool for a purpose, one at a time (`for:data_work`).
        let purpose = captures.name("p").map(|p| purpose_key(p.as_str()));
        let owned_attribute = match (&purpose, form.attribute) {
            (Some(purpose), "for") if !purpose.is_empty() => format!("for:{purpose}"),
            (None, "for") | (Some(_), "for") => continue,
            _ => form.attribute.to_owned(),
        };
        let attribute = owned_attribute.as_str();
        let hold = form.past.then_some(Hold::Past).filter(|_| !predicate.to_lowercase().starts_with("ha"));
        let values =
            if matches!(attribute, "languages" | "allergies" | "learning") { split_list(&value) } else { vec![value] };
        for value in values {
            // "works as a backend engineer at Stripe": a role and an employer; "works at
            // Anthropic on the infrastructure team": an employer and a team.
            let (value, tail) = split_work_value(attribute, &value);
            let attribute = refine_attribute(attribute, &value);
            found.push((claim(subject, attribute, Some(value), form.polarity), hold));
            if let Some((tail_attribute, tail_value)) = tail {
                found.push((claim(subject, tail_attribute, Some(tail_value), form.polarity), hold));
            }
        }
        taken += 1;
        // "switched from Jira to Linear": the ending, then what holds now.
        if form.attribute == "*" && form.polarity == Ended {
            let after = &predicate[captures.get(0).map_or(0, |m| m.end())..];
            if let Some(new) = value_of(after, Class::Any) {
                found.push((claim(subject, "*", Some(new), Holds), None));
            }
        }
        break;
    }
    if taken == 0 {
        object_forms(predicate, found);
    }
    if found.claims.is_empty() && !looks_like_a_person(subject) && !subject.is_me() {
        measure_forms(predicate, subject, found);
    }
}

/// The people a joint subject names ("Kofi and Ama both", "Nora & Felix", "Ana, Ben and
/// Cleo"), each a subject of their own; one subject otherwise.
fn joint_people(subject: &Subject) -> Vec<Subject> {
    if !subject.key.contains(" and ") && !subject.key.contains(" & ") && !subject.key.contains(", ") {
        return vec![subject.clone()];
    }
    let name = subject.name.replace(" & ", " and ").replace(", and ", " and ").replace(", ", " and ");
    let parts: Vec<&str> = name
        .split(" and ")
        .map(|p| p.trim().trim_end_matches(" both").trim_end_matches(" together").trim_end_matches(" all").trim())
        .collect();
    if parts.len() < 2
        || !parts.iter().all(|p| p.chars().next().is_some_and(char::is_uppercase) && p.split_whitespace().count() <= 3)
    {
        return vec![subject.clone()];
    }
    parts.iter().map(|p| Subject::named(p)).collect()
}

/// Each claim made of every one of `people`; a break-up is each one's partner ending.
fn spread_over(people: &[Subject], claims: Vec<(Claim, Option<Hold>)>) -> Vec<(Claim, Option<Hold>)> {
    let mut out = Vec::new();
    for (claim, hold) in claims {
        for person in people {
            out.push((Claim { subject: person.clone(), ..claim.clone() }, hold));
            let broke_up = claim.attribute == "relationship"
                && claim
                    .value
                    .as_deref()
                    .is_some_and(|v| matches!(v, "broke up" | "split up" | "got divorced" | "got separated"));
            if broke_up {
                for other in people.iter().filter(|o| *o != person) {
                    let ended = Claim {
                        subject: person.clone(),
                        attribute: "has:partner".to_owned(),
                        value: Some(other.name.clone()),
                        polarity: Ended,
                        when: claim.when.clone(),
                        about: Vec::new(),
                    };
                    out.push((ended, hold));
                }
            }
        }
    }
    out
}

/// The measures of a clause no form placed (a time, a price, an amount, a version), each a
/// loose claim of the clause's subject with the clause's content words: what the measure is
/// said of, so that another memory giving the same kind of measure to the same thing is
/// flagged ([`super::decide`]'s `judge_loose`).
fn loose_claims(clause: &str, subject: &Subject, found: &mut Found) {
    let lower = clause.to_ascii_lowercase();
    let placed: Vec<String> =
        found.claims.iter().filter_map(|(c, _)| c.value.as_ref().map(|v| v.to_ascii_lowercase())).collect();
    let mut measures: Vec<(usize, usize, &'static str)> = Vec::new();
    for (pattern, kind) in
        [(&*MONEY, "price"), (&*VERSION_ANYWHERE, "version"), (&*TIME_ANYWHERE, "when"), (&*QUANTITY, "amount")]
    {
        for m in pattern.find_iter(&lower) {
            if measures.iter().any(|(s, e, _)| m.start() < *e && *s < m.end()) {
                continue;
            }
            measures.push((m.start(), m.end(), kind));
        }
    }
    if measures.is_empty() {
        return;
    }
    measures.sort();
    // The clause's words, less the measures: what they are said of.
    let mut rest = lower.clone();
    for (start, end, _) in measures.iter().rev() {
        rest.replace_range(*start..*end, " ");
    }
    let subject_words = super::values::terms(&subject.key);
    let about: Vec<String> = super::values::terms(&rest)
        .into_iter()
        .filter(|t| {
            !subject_words.contains(t)
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && !is_verb(t)
                && !LOOSE_FILLERS.contains(&t.as_str())
        })
        .collect();
    if about.is_empty() {
        return;
    }
    for (start, end, kind) in measures {
        let value = clause[start..end].trim().to_owned();
        if placed.iter().any(|p| p.contains(&value.to_ascii_lowercase())) {
            continue;
        }
        let mut loose = claim(subject, &format!("~{kind}"), Some(value), Holds);
        loose.about = about.clone();
        found.push((loose, None));
    }
}

/// Words too common in statements of measures to say what a measure is of.
const LOOSE_FILLERS: &[&str] = &[
    "now", "new", "old", "just", "also", "still", "about", "around", "usual", "normal", "same", "time", "today",
    "week", "month", "year", "day",
];

/// A thing stated with a measure: a time or a date ("the eye test is 2 Oct 11:20"), an amount
/// of money ("the window cleaner is £18"), a version, a quantity ("Mochi is 4.2kg"). A thing
/// has one of each at a time: a new one replaces the old.
fn measure_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    let Some(captures) = MEASURE_PREDICATE.captures(predicate) else { return };
    let Some(raw) = captures.name("v") else { return };
    let Some(value) = value_of(raw.as_str(), Class::Any) else { return };
    // The measure opens the value ("is 200,000 dollars"), not something said before it
    // ("slipped two weeks").
    if !value.trim_start().starts_with(|c: char| c.is_ascii_digit() || "$£€¥".contains(c))
        && !TIMEISH.is_match(&value.to_ascii_lowercase())
        && !NUMBER_WORD_START.is_match(&value.to_ascii_lowercase())
    {
        return;
    }
    let Some(attribute) = measure_attribute(&value) else { return };
    found.dropped += dropped_words(raw.as_str(), &value);
    found.push((claim(subject, attribute, Some(value), Holds), None));
}

static NUMBER_WORD_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty|a dozen|a hundred|every|each|once|twice)\b")
        .expect("number word pattern compiles")
});

static MEASURE_PREDICATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)^{ADVERBS}(?:is|'s|are|was|will be|costs?|runs|comes to|went (?:up|down) to|rose to|fell to|dropped to|increased to|jumped to|changed to|moved to|switched to|is set (?:to|at|for)|set to|at|@|due|is due|are due|expires?|ends|starts|weighs|weigh-in|weighed in at|is on|on|requires|require|needs|need|takes|allows|is capped at|caps at|is limited to|holds|seats|has|have)?\s*(?:at|on|for|in|to)?\s*(?P<v>.+)$"))
        .expect("measure predicate compiles")
});

/// Which attribute a measure fills: `when` for a time or a date, `price` for money, `version`,
/// `amount` for any other quantity with a unit; `None` for a value that is no measure.
fn measure_attribute(value: &str) -> Option<&'static str> {
    let lower = value.to_lowercase();
    if MONEY.is_match(&lower) {
        return Some("price");
    }
    if VERSION_ANYWHERE.is_match(&lower) {
        return Some("version");
    }
    if TIME_ANYWHERE.is_match(&lower) {
        return Some("when");
    }
    if QUANTITY.is_match(&lower) {
        return Some("amount");
    }
    None
}

static TIME_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)s?|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|the \d{1,2}(?:st|nd|rd|th)|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b")
        .expect("time pattern compiles")
});

static VERSION_ANYWHERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+\b").expect("version pattern compiles"));

static QUANTITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d[\d.,]*\s?%|\b\d[\d.,]*\s?(?:kg|g|lbs?|pounds|percent|mg|mcg|ml|km|mi|miles|min|mins|minutes|hours|hrs|°[cf]?|degrees|pints?|litres?|liters?|days a week|times a week|steps|bpm|mbps|gb|tb|inches|cm|ft|feet|years old|yo)\b|\d\s?%|\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty|hundred|a dozen)\s+(?:[a-z]+\s+)?(?:approvals?|users?|people|seats?|members?|guests?|kids?|children|cats?|dogs?|pets?|days?|weeks?|months?|years?|hours?|nights?|sessions?|classes|lessons?|times?|pieces?|units?|items?|requests?|calls?|tickets?|points?|cups?|glasses?|bottles?|pills?|tablets?|doses?|puffs?|reps?|sets?|laps?|pages?|books?|copies|licen[cs]es?|instances?|nodes?|servers?|replicas?|workers?|threads?|engineers?|devs?|developers?|designers?|employees?|staff|rooms?|beds?|floors?|stops?|stations?|shifts?|runs?|games?|matches?|rounds?)\b")
        .expect("quantity pattern compiles")
});

/// A work value that names two attributes at once: the role and where ("backend engineer at
/// Stripe"), or the employer and the team ("Anthropic on the infrastructure team").
fn split_work_value(attribute: &str, value: &str) -> (String, Option<(&'static str, String)>) {
    let split = |separators: &[&str]| {
        separators.iter().find_map(|sep| {
            value.find(sep).map(|at| (value[..at].trim().to_owned(), value[at + sep.len()..].trim().to_owned()))
        })
    };
    match attribute {
        "role" | "employer" | "workplace" => {
            if let Some((head, team)) = split(&[" on the ", " in the "])
                && TEAM_NOUNS.iter().any(|n| team.to_lowercase().ends_with(n))
            {
                return (head, Some(("team", team)));
            }
            if attribute == "role"
                && let Some((role, employer)) = split(&[" at ", " for ", " with "])
                && employer.chars().next().is_some_and(|c| c.is_uppercase() || c == 'a')
            {
                let employer_attribute = refine_attribute("employer", &employer);
                return (role, Some((employer_attribute, employer)));
            }
            (value.to_owned(), None)
        }
        _ => (value.to_owned(), None),
    }
}

/// A purpose as an attribute's parameter: "all her data work" → "data_work".
fn purpose_key(purpose: &str) -> String {
    subject_key(purpose)
        .split(' ')
        .filter(|w| {
            !matches!(*w, "all" | "most" | "any" | "everything" | "her" | "his" | "their" | "my" | "the" | "our")
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// Values of list attributes one by one: "Twi and English" → "Twi", "English".
fn split_list(value: &str) -> Vec<String> {
    value
        .split([',', '&', '/'])
        .flat_map(|part| part.split(" and "))
        .flat_map(|part| part.split(" as well as "))
        .map(|part| part.trim().trim_start_matches("and ").trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// An attribute refined by its value: "works at the Ankara branch" is where, not for whom;
/// "lives at 12 Elm Street" an address.
fn refine_attribute<'a>(attribute: &'a str, value: &str) -> &'a str {
    let lower = value.to_lowercase();
    let last = lower.split_whitespace().next_back().unwrap_or_default();
    match attribute {
        "employer" if WORKPLACE_NOUNS.contains(&last) && lower.split_whitespace().count() > 1 => "workplace",
        "employer" if TEAM_NOUNS.contains(&last) => "team",
        "residence" if lower.starts_with(|c: char| c.is_ascii_digit()) => "address",
        _ => attribute,
    }
}

const WORKPLACE_NOUNS: &[&str] = &[
    "office",
    "branch",
    "site",
    "campus",
    "store",
    "location",
    "hq",
    "headquarters",
    "clinic",
    "lab",
    "plant",
    "depot",
    "warehouse",
    "factory",
    "ward",
];
const TEAM_NOUNS: &[&str] = &["team", "squad", "group", "department", "dept", "crew", "pod", "unit", "division"];

fn object_forms(predicate: &str, found: &mut Found) {
    for form in OBJECT_FORMS.iter() {
        let Some(captures) = form.pattern.captures(predicate) else { continue };
        let (Some(object), Some(raw)) = (captures.name("o"), captures.name("v")) else { continue };
        let Some(value) = value_of(raw.as_str(), form.class) else { continue };
        let key = subject_key(object.as_str());
        if key.is_empty() || NOT_SUBJECTS.contains(&key.as_str()) {
            continue;
        }
        let (thing, _) = split_attribute_noun(object.as_str()).unwrap_or((object.as_str(), ""));
        let thing = if subject_key(thing).is_empty() { object.as_str() } else { thing };
        let (attribute, polarity) = match form.attribute {
            "~" => match measure_attribute(&value) {
                Some(attribute) => (attribute, Holds),
                None => continue,
            },
            "*" => ("*", Ended),
            attribute => (attribute, Holds),
        };
        found.push((claim(&Subject::named(thing), attribute, Some(value), polarity), None));
        return;
    }
}

/// "Rui is my manager", "Pho is her favourite food", "Priya took over billing".
fn inverse_forms(predicate: &str, subject: &Subject, reader: &Reader, found: &mut Found) {
    if let Some(captures) = INVERSE.captures(predicate) {
        let owner = match captures["owner"].to_lowercase().as_str() {
            "my" | "our" => reader.speaker.clone(),
            "the user's" => Some(Subject::me()),
            "his" | "her" | "their" => reader.last_person.clone().filter(|p| p != subject),
            named => Some(Subject::named(named.trim_end_matches("'s"))),
        };
        let role = captures["role"].to_lowercase();
        if let Some(owner) = owner {
            let value = Some(subject.name.clone());
            if let Some(kind) = role.strip_prefix("favorite ").or_else(|| role.strip_prefix("favourite ")) {
                found.push((claim(&owner, &format!("favorite:{}", kind.replace(' ', "_")), value, Holds), None));
            } else if ROLE_NOUNS.contains(&role.as_str()) {
                found.push((claim(&owner, &format!("has:{}", canonical_role(&role)), value, Holds), None));
            }
        }
        return;
    }
    if let Some(captures) = TAKES_OVER.captures(predicate)
        && looks_like_a_person(subject)
        && !captures["o"].trim_start().starts_with(|c: char| c.is_ascii_digit())
    {
        let thing = subject_key(&captures["o"]);
        if !thing.is_empty() && !NOT_SUBJECTS.contains(&thing.as_str()) {
            found.push((claim(&Subject::named(&captures["o"]), "lead", Some(subject.name.clone()), Holds), None));
        }
    }
}

fn canonical_role(role: &str) -> String {
    match role {
        "boss" | "supervisor" => "manager".to_owned(),
        "wife" | "husband" | "girlfriend" | "boyfriend" | "fiance" | "fiancee" | "fiancé" | "fiancée" | "spouse" => {
            "partner".to_owned()
        }
        "landlady" => "landlord".to_owned(),
        "gp" => "doctor".to_owned(),
        "physio" => "physiotherapist".to_owned(),
        "adviser" => "advisor".to_owned(),
        other => other.replace(' ', "_"),
    }
}

/// Noun forms: what a possessive names, then its predicate ("Maya's *address* is …", "my
/// *manager* is Rui", "the standup *time* moved to 9:30", "*rent* went up to $1,500").
fn noun_forms(noun: &str, predicate: &str, subject: &Subject, bare: bool, found: &mut Found) {
    let noun = noun.trim().to_lowercase();
    let noun = noun.trim_start_matches("all-time ").trim_start_matches("absolute ");
    let captures = if bare { BARE_VALUE.captures(predicate) } else { NOUN_PREDICATE.captures(predicate) };
    let Some(captures) = captures else {
        // "My dog Biscuit passed away", "Her car was totalled": what she had is gone.
        if PASSED.is_match(predicate) {
            let head = noun.split(' ').next().unwrap_or_default();
            if PET_WORDS.contains(&head) {
                found.push((claim(subject, "pets", Some(noun.to_owned()), Ended), None));
            } else if head == "car" {
                found.push((claim(subject, "car", None, Ended), None));
            }
        }
        return;
    };
    let raw = captures.name("v").map_or("", |m| m.as_str());
    let head = noun.split(' ').next_back().unwrap_or_default();
    let (attribute, class): (String, Class) =
        if let Some(kind) = noun.strip_prefix("favorite ").or_else(|| noun.strip_prefix("favourite ")) {
            (format!("favorite:{}", kind.replace(' ', "_")), Any)
        } else if let Some((_, attribute, class)) = (!subject.is_me() && !looks_like_a_person(subject))
            .then(|| NOUN_ATTRIBUTES.iter().find(|(nouns, _, _)| nouns.contains(&noun) || nouns.contains(&head)))
            .flatten()
        {
            ((*attribute).to_owned(), *class)
        } else if ROLE_NOUNS.contains(&noun) || ROLE_NOUNS.contains(&head) {
            let role = if ROLE_NOUNS.contains(&noun) { noun } else { head };
            (format!("has:{}", canonical_role(role)), Name)
        } else if POSSESSIONS.contains(&noun)
            || (POSSESSIONS.contains(&head) && !PERSON_ATTRIBUTE_NOUNS.iter().any(|(n, _, _)| n.contains(&noun)))
        {
            (format!("own:{}", noun.replace(' ', "_")), Any)
        } else {
            let table =
                if subject.is_me() || looks_like_a_person(subject) { PERSON_ATTRIBUTE_NOUNS } else { NOUN_ATTRIBUTES };
            match table
                .iter()
                .chain(PERSON_ATTRIBUTE_NOUNS)
                .find(|(nouns, _, _)| nouns.contains(&noun) || nouns.contains(&head))
            {
                Some((_, attribute, class)) => ((*attribute).to_owned(), *class),
                None => return,
            }
        };
    let Some(value) = value_of(raw, class) else { return };
    // "the car is insured with Allianz", "my phone is in the shop": what is said of the thing,
    // not which thing it is.
    if !bare && describes_rather_than_names(&value) && !matches!(class, Time | Money | Version) {
        return;
    }
    found.dropped += dropped_words(raw, &value);
    let attribute = refine_attribute(&attribute, &value).to_owned();
    // "the standup time": a thing's attribute, of the thing.
    found.push((claim(subject, &attribute, Some(value), Holds), None));
}

/// Whether a value after "X is" says how X is rather than which it is: a participle
/// ("insured", "parked"), a preposition ("in the shop", "with Allianz"), an adjective of state.
fn describes_rather_than_names(value: &str) -> bool {
    let first = value.split_whitespace().next().unwrap_or_default().to_lowercase();
    let participle = first.len() > 4 && first.ends_with("ed") && !NOT_VERBS.contains(&first.as_str());
    participle || STATE_OPENERS.contains(&first.as_str())
}

/// Words that open what is said of a thing's state, not a name for it.
const STATE_OPENERS: &[&str] = &[
    "in",
    "at",
    "on",
    "with",
    "for",
    "from",
    "by",
    "under",
    "being",
    "still",
    "broken",
    "fine",
    "ok",
    "okay",
    "great",
    "good",
    "bad",
    "ready",
    "due",
    "done",
    "getting",
    "going",
    "almost",
    "nearly",
    "so",
    "too",
    "very",
    "really",
    "super",
    "pretty",
    "quite",
    "not",
    "no",
    "always",
    "never",
    "usually",
    "mostly",
    "out",
    "off",
    "back",
    "away",
    "here",
    "there",
    "available",
    "busy",
    "closed",
    "open",
    "free",
    "full",
    "empty",
    "late",
    "early",
    "expensive",
    "cheap",
];

static NOUN_PREDICATE: LazyLock<Regex> = LazyLock::new(|| {
    // A copula ("is", "has been", "became"), or a change verb straight before its new value
    // ("moved to", "went up to"): "the team moved standup to 10:15" acts on standup and says
    // nothing of the team.
    Regex::new(r"(?i)^(?:(?:just|now|officially|finally|recently|also|still)\s+)*(?:(?:is|'s|are|was|has been|have been|became|will be|is now|'s now|remains|stays)\s+(?:now\s+|still\s+|officially\s+)?|(?:(?:has |have |got |was |been )?(?:changed|moved|went|switched|shifted|bumped|pushed|slipped|rose|fell|increased|dropped|jumped|climbed|went up|went down|going up|goes up|is going up|raised|cut|reduced|updated|upgraded)\s+(?:back\s+)?(?:up\s+|down\s+)?(?:from .+? )?to\s+))(?P<v>.+)$")
        .expect("noun predicate compiles")
});

/// A note's value: up to a comma that starts something else.
static BARE_VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<v>[^,;]+)").expect("bare value pattern compiles"));

/// A note's value for a thing: a measure fills its attribute (`when`, `price`, …); anything
/// else names which one the thing is (`is`: "grinder = Niche Zero").
fn bare_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    measure_forms(predicate, subject, found);
    if !found.claims.is_empty() {
        return;
    }
    if let Some(captures) = BARE_VALUE.captures(predicate)
        && let Some(value) = value_of(&captures["v"], Class::Any)
        && names_something(&value)
    {
        found.dropped += dropped_words(predicate, &value);
        found.push((claim(subject, "is", Some(value), Holds), None));
    }
}

/// Whether a note's value names something (a name, a number, a model: "O neg", "Dr. Varga",
/// "Niche Zero") rather than saying something ("okay", "got it", "why are bananas curved").
fn names_something(value: &str) -> bool {
    value.split_whitespace().count() <= 5
        && value.split_whitespace().any(|w| w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()))
        && !value.split_whitespace().any(|w| is_verb(&w.to_lowercase()))
}

static PASSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|sadly|finally|recently)\s+)*(?:died|passed away|passed|was put down|had to be put down|crossed the rainbow bridge|ran away|got totaled|got totalled|was totaled|was totalled|was stolen|got stolen|was written off)\b")
        .expect("passed pattern compiles")
});

const PET_WORDS: &[&str] = &[
    "dog", "cat", "puppy", "kitten", "rabbit", "bunny", "hamster", "parrot", "bird", "fish", "turtle", "tortoise",
    "snake", "lizard", "gecko", "horse", "pony", "ferret", "guinea", "budgie",
];

/// Whether `value` is only a noun that names `attribute` itself ("car" of `car`, "phone" of
/// `phone`), not a value of it.
fn names_the_attribute(attribute: &str, value: &str) -> bool {
    let value = value.trim().to_lowercase();
    PERSON_ATTRIBUTE_NOUNS.iter().any(|(nouns, named, _)| *named == attribute && nouns.contains(&value.as_str()))
}

/// Nouns that name one of a person's attributes when possessed ("my *address* is …").
const PERSON_ATTRIBUTE_NOUNS: &[(&[&str], &str, Class)] = &[
    (&["address", "home address", "postal address", "mailing address", "street address"], "address", Any),
    (&["email", "e-mail", "email address", "work email", "personal email"], "email", Email),
    (
        &[
            "number",
            "phone number",
            "cell",
            "cell number",
            "mobile",
            "mobile number",
            "cell phone number",
            "work number",
        ],
        "phone_number",
        PhoneNumber,
    ),
    (&["birthday", "bday", "b-day", "birth date", "date of birth"], "birthday", Any),
    (&["age"], "age", Any),
    (&["job", "job title", "title", "role", "position", "occupation", "profession"], "role", Any),
    (&["employer", "company", "workplace"], "employer", NotATime),
    (&["team", "squad", "department"], "team", Any),
    (&["school", "college", "university", "uni"], "school", Any),
    (&["grade", "year group"], "grade", Any),
    (&["phone", "smartphone"], "phone", Any),
    (&["car", "ride", "vehicle"], "car", Any),
    (&["editor", "ide", "code editor", "editor of choice"], "editor", Any),
    (&["diet"], "diet", Any),
    (&["commute"], "commute", Any),
    (&["home", "city", "hometown"], "residence", NotATime),
];

/// Nouns that name an attribute of a thing ("the standup *time*", "the *rent*").
const NOUN_ATTRIBUTES: &[(&[&str], &str, Class)] = &[
    (
        &[
            "time",
            "start time",
            "date",
            "due date",
            "deadline",
            "day",
            "schedule",
            "go-live",
            "release date",
            "launch date",
        ],
        "when",
        Time,
    ),
    (&["venue", "room"], "venue", NotATime),
    (&["location"], "location", NotATime),
    (&["lead", "owner", "pm", "point of contact", "contact", "dri", "on-call", "host"], "lead", Name),
    (&["version"], "version", Version),
    (
        &[
            "price",
            "cost",
            "fee",
            "rate",
            "budget",
            "salary",
            "membership fee",
            "premium",
            "bill",
            "payment",
            "rent",
            "mortgage",
        ],
        "price",
        Money,
    ),
    (&["plan", "tier", "subscription"], "tier", Any),
    (&["status"], "status", Any),
    (&["stack", "database", "db", "backend", "ci", "framework", "language"], "stack", Any),
    (
        &[
            "vendor",
            "provider",
            "supplier",
            "isp",
            "carrier",
            "bank",
            "insurer",
            "insurance",
            "gym",
            "caterer",
            "courier",
            "agency",
        ],
        "vendor",
        Any,
    ),
    (&["frequency", "cadence"], "cadence", Any),
];

/// Things someone has one of, named in notes and possessives ("bike: 2019 Triumph", "my
/// laptop is a ThinkPad"): the value names which one (`own:bike`).
const POSSESSIONS: &[&str] = &[
    "bike",
    "motorbike",
    "motorcycle",
    "scooter",
    "truck",
    "van",
    "laptop",
    "tablet",
    "ipad",
    "watch",
    "camera",
    "headphones",
    "earbuds",
    "tv",
    "console",
    "e-reader",
    "kindle",
    "guitar",
    "piano",
    "keyboard",
    "monitor",
    "desk",
    "chair",
    "mattress",
    "router",
    "printer",
    "card",
    "credit card",
    "debit card",
    "bank",
    "pharmacy",
    "gp",
    "gym",
    "grinder",
    "espresso machine",
    "inhaler",
    "wallet",
    "bag",
    "backpack",
    "stroller",
    "pram",
    "car seat",
    "boat",
    "kayak",
    "surfboard",
    "skis",
    "snowboard",
    "racket",
    "ring",
    "password manager",
];

/// The value a form captured, trimmed where the value ends ("Amsterdam for her new job" →
/// "Amsterdam"), or `None` when it is not of the form's class or is too long to be one value.
fn value_of(raw: &str, class: Class) -> Option<String> {
    let mut value = raw.trim();
    // Where a value ends: a word or phrase that starts something else. (ASCII case only, so
    // offsets in `lower` are offsets in `value`.)
    let lower = value.to_ascii_lowercase();
    let mut cut = value.len();
    for stop in VALUE_STOPS.find_iter(&lower) {
        if stop.start() > 0 {
            cut = cut.min(stop.start());
            break;
        }
    }
    if class != Time
        && class != Money
        && let Some(found) = TRAILING_TIME.find(&lower[..cut])
        && found.start() > 0
    {
        cut = cut.min(found.start());
    }
    value = value[..cut].trim();
    value = value
        .trim_end_matches(|c: char| matches!(c, ',' | '.' | '!' | ')' | '"' | '\'' | ':' | ';') || c.is_whitespace());
    value = value.trim_start_matches(|c: char| matches!(c, '"' | '\'' | '(') || c.is_whitespace());
    let words = value.split_whitespace().count();
    if value.is_empty() || words > MAX_VALUE_WORDS {
        return None;
    }
    let lower = value.to_lowercase();
    let looks_like_time = TIMEISH.is_match(&lower) && !VERSION_ANYWHERE.is_match(&lower);
    let ok = match class {
        Any => true,
        NotATime => !looks_like_time && !TIME_ANYWHERE.is_match(&lower) && !lower.starts_with("the same"),
        Time => looks_like_time,
        Money => MONEY.is_match(&lower),
        Version => VERSION.is_match(&lower),
        Name => value.chars().next().is_some_and(|c| c.is_uppercase()) && words <= 4,
        PhoneNumber => value.chars().filter(|c| c.is_ascii_digit()).count() >= 6,
        Email => value.contains('@'),
    };
    let article_only = matches!(
        lower.as_str(),
        "a" | "an" | "the" | "it" | "that" | "this" | "there" | "here" | "them" | "him" | "her"
    );
    (ok && !article_only).then(|| value.to_owned())
}

/// The content words of `raw` a value cut from it left out, less times and fillers: what
/// else the clause says.
fn dropped_words(raw: &str, value: &str) -> usize {
    let rest = raw.trim_start().get(value.len()..).unwrap_or_default();
    content_words(&TRAILING_TIME.replace_all(&rest.to_lowercase(), " "))
}

/// How many words of `text` say something: not function words, fillers or times.
fn content_words(text: &str) -> usize {
    crate::text::tokenize(text)
        .into_iter()
        .filter(|w| {
            !crate::text::is_stopword(w) && !FILLERS.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit())
        })
        .count()
}

/// Words that say nothing of their own in a statement of fact.
const FILLERS: &[&str] = &[
    "now",
    "just",
    "really",
    "also",
    "recently",
    "finally",
    "officially",
    "currently",
    "again",
    "anymore",
    "lol",
    "haha",
    "btw",
    "ok",
    "okay",
    "yeah",
    "yes",
    "too",
    "still",
    "actually",
    "basically",
    "week",
    "month",
    "year",
    "today",
    "yesterday",
    "tonight",
    "last",
    "ago",
    "since",
    "days",
    "weeks",
    "months",
    "years",
    "back",
    "new",
    "time",
    "full",
    "totally",
    "pretty",
    "super",
    "honestly",
    "literally",
    "officially",
    "fyi",
    "update",
    "note",
    "good",
    "great",
    "nice",
    "happy",
    "excited",
    "glad",
    "ugh",
    "omg",
    "wow",
    "yay",
    "thanks",
    "thank",
];

/// The most words one value runs to ("the new Hyundai Ioniq 5 in white" is six).
const MAX_VALUE_WORDS: usize = 7;

static VALUE_STOPS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s(?:for (?:her|his|their|my|a|an|the|work|school|now|good|\d)|with (?:her|his|their|my|a|an|the)|near|next to|close to|because|since|after|before|until|till|when|while|which|who|where|as of|starting|from now|now|these days|nowadays|full[- ]time|anymore|any more|again|instead|too|as well|though|although|lol|haha|btw|so that|so|but|and (?:now|then|she|he|they|i|we|it|is|has|her|his|my)|thanks to|due to|per (?:the|our)|if|unless|rather than|, not|not the|—|–| - |\(|\. )").expect("value stops compile")
});

static TRAILING_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s(?:(?:last|this|next|early|late) (?:week|weekend|month|year|spring|summer|fall|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:early |late |mid-?)?(?:january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|fall|autumn|winter|\d{4})|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|tonight|recently|lately|a (?:few |couple of )?(?:days|weeks|months|years) ago|(?:\w+|\d+) (?:days|weeks|months|years) ago|at the (?:start|end|beginning) of|earlier this|over the (?:weekend|summer|holidays))\b").expect("trailing time compiles")
});

static TIMEISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:every|each|the|next|this|on|at|from|by|mid|early|late|end of|beginning of)\s+)*(?:\d{1,2}(?::\d{2}|\.\d{2})\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}\s*$|noon|midnight|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)s?|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|\d{1,2}\s+(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|the \d{1,2}(?:st|nd|rd|th)|\d{1,2}(?:st|nd|rd|th)|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|q[1-4]|(?:the )?(?:morning|afternoon|evening)s?|tomorrow|tonight|weekends?|weekdays?)\b")
        .expect("time-ish pattern compiles")
});

static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    // The whole amount ("£19.99", "$2,650", "£22/month", "90k a year"): a loose claim keeps it
    // as its value.
    Regex::new(r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?k\b)?(?:\s?(?:/|a |per )\s?(?:mo|month|wk|week|yr|year|night|hour|hr|day|seat|user)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:k\b|dollars|euros|pounds|bucks|usd|eur|gbp|yuan|rmb|/mo\b|/month|a month|per month|/yr\b|a year|per year))")
        .expect("money pattern compiles")
});

static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:version |v)?\d+(?:\.\d+)+\b|^v\d+\b|^\w+ \d+(?:\.\d+)*\b").expect("version pattern compiles")
});

const LANGUAGES: &str = r"(?:english|spanish|french|german|italian|portuguese|brazilian portuguese|dutch|swedish|norwegian|danish|finnish|polish|czech|russian|ukrainian|greek|turkish|arabic|hebrew|persian|farsi|hindi|urdu|bengali|bangla|punjabi|tamil|telugu|marathi|gujarati|kannada|malayalam|mandarin|cantonese|chinese|japanese|korean|vietnamese|thai|indonesian|malay|tagalog|filipino|swahili|amharic|yoruba|igbo|hausa|zulu|xhosa|afrikaans|twi|ewe|ga|fante|somali|hungarian|romanian|bulgarian|serbian|croatian|bosnian|slovak|slovenian|lithuanian|latvian|estonian|icelandic|irish|gaelic|welsh|catalan|basque|galician|esperanto|latin|asl|bsl|sign language|haitian creole|creole|quechua|nepali|sinhala|burmese|khmer|lao|mongolian|kazakh|uzbek|georgian|armenian|albanian|macedonian|maltese|luxembourgish|tigrinya|wolof|lingala|kinyarwanda|malagasy|pashto|dari|kurdish)";

const INSTRUMENTS: &str = r"(?:bass guitar|electric guitar|acoustic guitar|classical guitar|upright bass|double bass|electric bass|bass|guitar|piano|keyboards?|keys|drums|drum kit|violin|viola|cello|saxophone|sax|alto sax|tenor sax|trumpet|trombone|flute|clarinet|oboe|bassoon|harp|ukulele|uke|banjo|mandolin|accordion|harmonica|synths?|synthesizer|organ|tuba|french horn|horn|xylophone|marimba|tabla|sitar|erhu|guzheng|pipa|bagpipes|recorder|didgeridoo|djembe|cajon|percussion|steel drums|lute|zither|kalimba|theremin|cornet|euphonium|piccolo)";

const SPORTS: &str = r"(?:tennis|football|soccer|basketball|baseball|volleyball|beach volleyball|badminton|squash|golf|chess|cricket|rugby|hockey|ice hockey|field hockey|table tennis|ping pong|pickleball|padel|netball|handball|softball|lacrosse|water polo|ultimate frisbee|frisbee|disc golf|bowling|darts|pool|snooker|poker|bridge|rock climbing|bouldering|climbing|running|jogging|trail running|swimming|cycling|mountain biking|hiking|yoga|hot yoga|pilates|crossfit|boxing|kickboxing|karate|judo|jiu[- ]jitsu|bjj|taekwondo|muay thai|mma|fencing|rowing|kayaking|canoeing|surfing|skiing|snowboarding|skating|ice skating|skateboarding|dancing|salsa|ballet|tango|knitting|crochet|sewing|embroidery|quilting|painting|drawing|sketching|pottery|ceramics|photography|gardening|baking|birdwatching|birding|fishing|fly fishing|woodworking|calligraphy|meditation|marathons?|triathlons?|weightlifting|lifting|powerlifting|bodybuilding|spin|spinning|archery|horse riding|riding|sailing|diving|scuba diving|scuba|snorkeling|paragliding|parkour|gymnastics|cheerleading|roller derby|sudoku|crosswords|video games|gaming|board games|dnd|d&d|dungeons (?:and|&) dragons|improv|choir|singing|karaoke|writing|journaling|blogging|podcasting|coding|origami|chess club|birdwatching|stand-up comedy|cross-country skiing|orienteering|geocaching|tai chi|qigong|aikido|kendo|lacrosse|curling)";

const PETS: &str = r"(?:dog|puppy|pup|cat|kitten|kitty|rabbit|bunny|hamster|guinea pig|parrot|budgie|cockatiel|parakeet|bird|goldfish|fish|betta|turtle|tortoise|snake|python|lizard|gecko|bearded dragon|iguana|horse|pony|ferret|chinchilla|hedgehog|rat|mouse|chickens?|hens?|goat|axolotl|tarantula|corgi|labrador|lab|retriever|golden retriever|poodle|beagle|terrier|dachshund|husky|shepherd|german shepherd|pug|bulldog|collie|border collie|chihuahua|greyhound|whippet|spaniel|schnauzer|maine coon|siamese|tabby|ragdoll)";

const EDITORS: &str = r"(?:neovim|nvim|vim|emacs|doom emacs|spacemacs|vs ?code|visual studio code|visual studio|intellij(?: idea)?|pycharm|webstorm|goland|clion|rider|rubymine|phpstorm|android studio|xcode|sublime(?: text)?|atom|cursor|zed|helix|nano|notepad\+\+|eclipse|netbeans|kate|textmate|bbedit|nova|fleet|lapce|windsurf)";

const SYSTEMS: &str = r"(?:macos|mac ?os(?: x)?|osx|windows(?: \d+)?|linux|ubuntu|fedora|arch(?: linux)?|debian|linux mint|mint|pop!?_?os|manjaro|nixos|gentoo|chromeos|chrome os|freebsd|opensuse|elementary os)";

const PHONES: &str = r"(?:iphone(?: \d+)?(?: (?:pro|max|plus|mini|se|pro max))*|pixel(?: \d+[a]?)?(?: (?:pro|xl|fold))*|galaxy(?: [sz]?\d+| note ?\d*| fold ?\d*| flip ?\d*| a\d+)?(?: (?:ultra|plus|fe))*|samsung(?: galaxy)?(?: [\w\-]+)?|oneplus(?: \d+)?|nokia(?: \w+)?|motorola(?: \w+)?|moto [a-z]\d*|xiaomi(?: \w+)?|redmi(?: \w+)?|huawei(?: \w+)?|fairphone(?: \d)?|blackberry|nothing phone(?: \(?\d\)?)?|android phone|flip phone)";

const CARS: &str = r"(?:toyota|honda|ford|tesla|subaru|volkswagen|vw|golf|polo|passat|jetta|tiguan|civic|accord|corolla|camry|prius|rav4|model [3sxy]|bmw|audi|mercedes(?:-benz)?|benz|mazda|kia|hyundai|volvo|jeep|nissan|leaf|chevy|chevrolet|bolt|fiat|renault|peugeot|citroen|citroën|skoda|seat|mini cooper|mini|porsche|lexus|jaguar|land rover|range rover|dodge|ram|gmc|buick|cadillac|lincoln|chrysler|suzuki|mitsubishi|saab|byd|polestar|rivian|lucid|dacia|alfa romeo|outback|forester|crosstrek|impreza|cr-v|crv|hr-v|f-150|f150|mustang|focus|fiesta|escape|explorer|wrangler|ioniq(?: \d)?|kona|tucson|niro|ev6|id\.?4|e-tron|miata|mx-5|cx-5|cx-50|xc90|xc60|xc40|qashqai|juke|yaris|jazz|swift|clio|megane|zoe|octavia|fabia|odyssey|sienna|highlander|tacoma|tundra|silverado|sierra|minivan|pickup|truck|suv|hatchback|sedan|station wagon|estate|convertible|electric car|hybrid|ev|e-bike|motorbike|motorcycle|scooter|vespa)";

const DIETS: &str = r"(?:vegetarian|veggie|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free|lactose[- ]free|flexitarian|plant[- ]based|carnivore|halal|kosher|low[- ]carb|low[- ]fodmap|whole30|intermittent fasting|raw vegan|omnivore)";

const TECH: &str = r"(?:postgres(?:ql)?|mysql|mariadb|sqlite|mongodb|mongo|dynamodb|cassandra|redis|elasticsearch|opensearch|clickhouse|snowflake|bigquery|redshift|cockroachdb|supabase|firebase|firestore|neo4j|oracle|sql server|mssql|rust|go|golang|python|java|kotlin|scala|typescript|javascript|ruby|php|c#|c\+\+|elixir|swift|dart|haskell|clojure|aws|gcp|google cloud|azure|heroku|vercel|netlify|fly\.io|digitalocean|linode|cloudflare(?: workers| pages)?|render|railway|hetzner|kubernetes|k8s|ecs|lambda|jenkins|github actions|gitlab ci|circleci|travis(?: ci)?|buildkite|teamcity|drone|argo(?: ?cd)?|react|vue|angular|svelte|sveltekit|next\.?js|nuxt|django|flask|fastapi|rails|ruby on rails|spring(?: boot)?|laravel|express|nestjs|phoenix|kafka|rabbitmq|sqs|pub/?sub|nats|datadog|grafana|prometheus|new relic|sentry|honeycomb|pagerduty|opsgenie|jira|linear|asana|trello|github issues|shortcut|clickup|notion|monday(?:\.com)?|slack|microsoft teams|discord|mattermost|github|gitlab|bitbucket|auth0|okta|cognito|keycloak|stripe|paypal|adyen|braintree|sendgrid|mailgun|postmark|ses|mailchimp|amplitude|mixpanel|segment|posthog|google analytics|figma|sketch|confluence|terraform|pulumi|ansible|docker|podman|nomad|vault|1password|bitwarden|lastpass|zoom|google meet|webex|hubspot|salesforce|zendesk|intercom|freshdesk|quickbooks|xero|airtable|retool|supabase|planetscale|neon|railway|deno|bun|node(?:\.?js)?)";

const ROLE_TITLES: &str = r"(?:engineer|developer|programmer|designer|nurse|doctor|physician|surgeon|teacher|professor|lecturer|manager|director|analyst|consultant|lawyer|attorney|solicitor|accountant|chef|cook|baker|barista|architect|scientist|researcher|writer|author|editor|journalist|reporter|photographer|intern|recruiter|salesperson|marketer|pharmacist|dentist|therapist|psychologist|counselor|counsellor|vet|veterinarian|paramedic|firefighter|pilot|driver|mechanic|electrician|plumber|carpenter|artist|illustrator|animator|musician|freelancer|contractor|cto|ceo|cfo|coo|vp|founder|co-founder|cofounder|sre|devops|tester|administrator|admin|librarian|cashier|clerk|waiter|waitress|server|bartender|coach|trainer|tutor|nanny|officer|specialist|coordinator|associate|technician|operator|supervisor|principal|professor|student|phd student|postdoc|resident|midwife|caregiver|carer|social worker|translator|interpreter|copywriter|strategist|producer|data scientist|pm|product manager|project manager|program manager|product owner|scrum master|team lead|tech lead|lead|head|partner|paralegal|receptionist|secretary|assistant|agent|broker|realtor|banker|trader|economist|statistician|actuary|auditor|surveyor|planner|dietitian|nutritionist|physiotherapist|optometrist|radiographer|sonographer|hygienist)s?";

#[cfg(test)]
mod tests;
