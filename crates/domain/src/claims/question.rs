//! Two memories that answer the same question: at retrieval, when a newer memory answers with
//! the same words of the question as an older one (and more), about the same people, the
//! older is *flagged* as possibly outdated — shown after the newer, marked, never hidden.
//!
//! This is the reader's rule of thumb for a question ("where does she park?": two answers, the
//! later one is likely the current one), used only where the claims could not tell: it never
//! retires anything, since a question's words say what is asked, not which attribute each
//! memory fills. What keeps it from doubting true facts: the newer must cover every word of the
//! question the older answers (a second fact about the same person shares the person, not the
//! question: "what instrument does Jonah play?" is answered by "Jonah plays bass", not by
//! "Jonah moved the trio rehearsals"), both must name whoever the question names, and a newer
//! memory that only adds ("also", "another", "a second"), plans, asks, denies, recalls the past
//! or makes a one-off exception flags nothing; and the newer must give an answer of the kind
//! the question asks for that the older does not ("who": a name; "where": a place; "when": a
//! time or a date; "how much": a number; "how often": a frequency) — a newer memory about the
//! same thing that answers something else ("the mortgage rate is 4.09%" to "who is the
//! mortgage with?") is no newer answer.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::lexicon::english::{self, is_calendar_word};
use crate::text::{is_stopword, stem, tokenize};

/// A memory as the question rule reads it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub text: &'a str,
    /// Whether its claims place it (its attribute is known): such a memory is left to the
    /// claims decision, which knows better.
    pub placed: bool,
}

/// The older memories of `answers` (oldest first) a newer one answers `question` again, each
/// as `(older, newer)` indices, the newest such newer one.
pub fn answered_again(question: &str, answers: &[Answer<'_>]) -> Vec<(usize, usize)> {
    let (topic, names) = question_terms(question);
    if topic.is_empty() {
        return Vec::new();
    }
    let kind = answer_kind(question);
    let words: Vec<BTreeSet<String>> = answers.iter().map(|a| stems(a.text)).collect();
    let lower: Vec<String> = answers.iter().map(|a| a.text.to_lowercase()).collect();
    let names_all = |i: usize| names.iter().all(|name| words[i].contains(name) || lower[i].contains(name.as_str()));
    let mut out = Vec::new();
    for older in 0..answers.len() {
        if !names_all(older) {
            continue;
        }
        let answered: BTreeSet<&String> = topic.iter().filter(|t| words[older].contains(*t)).collect();
        if answered.is_empty() {
            continue;
        }
        if answer_values(answers[older].text, kind).is_empty() {
            continue;
        }
        let newer = (older + 1..answers.len()).rev().find(|&newer| {
            let old_values = answer_values(answers[older].text, kind);
            names_all(newer)
                && !(answers[older].placed && answers[newer].placed)
                && answered.iter().all(|t| words[newer].contains(*t))
                && !ADDS_OR_HEDGES.is_match(&lower[newer])
                && answer_values(answers[newer].text, kind)
                    .iter()
                    .any(|v| !old_values.contains(v) && !names.contains(v))
        });
        if let Some(newer) = newer {
            out.push((older, newer));
        }
    }
    out
}

/// What kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AnswerKind {
    /// "who", "what is … called": a name.
    Name,
    /// "where": a place (a name, or "at the …").
    Place,
    /// "when", "what time", "what day": a time, a day or a date.
    Time,
    /// "how much", "how many", "what dose": a number.
    Quantity,
    /// "how often": a frequency.
    Frequency,
    /// Anything else: a name or a number.
    Any,
}

fn answer_kind(question: &str) -> AnswerKind {
    let q = question.to_lowercase();
    let has = |w: &str| q.contains(w);
    if has("how often") || has("how frequently") {
        AnswerKind::Frequency
    } else if q.starts_with("when")
        || has("what time")
        || has("what day")
        || has("which day")
        || has("what date")
        || has(" when ")
    {
        AnswerKind::Time
    } else if has("how much")
        || has("how many")
        || has("how old")
        || has("how long")
        || has("how far")
        || has("what dose")
        || has("what rate")
        || has("what price")
        || has("what temperature")
    {
        AnswerKind::Quantity
    } else if q.starts_with("where") || has(" where ") {
        AnswerKind::Place
    } else if q.starts_with("who") || has(" who ") || has("whose") || has("called") || has("named") || has(" name") {
        AnswerKind::Name
    } else {
        AnswerKind::Any
    }
}

/// The answers of `kind` a text gives, lowercased: its names (capitalised words that do not
/// open a sentence), its numbers, times and dates, or its frequencies.
fn answer_values(text: &str, kind: AnswerKind) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let names = || {
        let mut names = BTreeSet::new();
        let mut opens = true;
        for word in text.split_whitespace() {
            let bare = word.trim_matches(|c: char| !c.is_alphanumeric()).trim_end_matches("'s");
            let capitalised = bare.chars().next().is_some_and(char::is_uppercase) && bare.chars().count() > 1;
            let lower = bare.to_lowercase();
            // A date, the reader's label or an article is capitalised without being a name.
            if capitalised
                && !opens
                && !is_calendar_word(&lower)
                && !matches!(lower.as_str(), "user" | "the")
                && bare != "I"
            {
                names.insert(lower);
            }
            opens = word.ends_with(['.', '!', '?', ':', ';']);
        }
        // Chinese names and places carry no capitals: the segmenter's proper nouns stand in.
        if crate::han::has_han(text) {
            for word in crate::han::words(text) {
                if matches!(
                    word.class,
                    crate::han::WordClass::Person | crate::han::WordClass::Proper | crate::han::WordClass::Latin
                ) {
                    names.insert(word.text.to_lowercase());
                }
            }
        }
        names
    };
    let numbers = || NUMBER.find_iter(&text.to_lowercase()).map(|m| m.as_str().to_owned()).collect::<BTreeSet<_>>();
    match kind {
        AnswerKind::Name | AnswerKind::Place => out.extend(names()),
        AnswerKind::Time => out.extend(TIME.find_iter(&text.to_lowercase()).map(|m| m.as_str().to_owned())),
        AnswerKind::Quantity => out.extend(numbers()),
        AnswerKind::Frequency => out.extend(FREQUENCY.find_iter(&text.to_lowercase()).map(|m| m.as_str().to_owned())),
        AnswerKind::Any => {
            out.extend(names());
            out.extend(numbers());
        }
    }
    if kind == AnswerKind::Place {
        out.extend(PLACE.captures_iter(&text.to_lowercase()).map(|c| c[1].to_owned()));
    }
    out
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[$£€¥]?\d[\d,.]*%?|[一二三四五六七八九十百千万两半]+[元块个次天周月年岁]")
        .expect("number pattern compiles")
});
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\bthe \d{1,2}(?:st|nd|rd|th)\b|\d{1,2}月\d{1,2}[日号]|周[一二三四五六日天]|星期[一二三四五六日天]|\d{1,2}[点:：]\d{0,2}")
        .expect("time pattern compiles")
});
static FREQUENCY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:daily|weekly|biweekly|fortnightly|monthly|yearly|every (?:other |\d+ |two |three )?\w+|(?:once|twice|three times|\d+ times|\d+x) (?:a|per) \w+|\d+ days? a week)\b|每[天周月年]|一周\S次")
        .expect("frequency pattern compiles")
});
static PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:at|in|to|from) (?:the |a )?([a-z][\w'-]+(?: [a-z][\w'-]+)?)").expect("place pattern compiles")
});

/// A question's content words (stemmed), less the words for the person the store serves and
/// the people it names; and the names, lowercased.
fn question_terms(question: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut names = BTreeSet::new();
    for (i, word) in question.split_whitespace().enumerate() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').trim_end_matches("'s");
        let capitalised = bare.chars().next().is_some_and(char::is_uppercase) && bare.len() > 1;
        if capitalised && (i > 0 || !QUESTION_OPENERS.contains(&bare.to_lowercase().as_str())) && bare != "I" {
            names.insert(bare.to_lowercase());
        }
    }
    let topic = stems(question)
        .into_iter()
        .filter(|t| !names.contains(t) && !names_the_person(t) && !QUESTION_OPENERS.contains(&t.as_str()))
        .collect();
    (topic, names)
}

/// Words that name the person the store serves, not what is asked about them.
fn names_the_person(word: &str) -> bool {
    english::is_first_person(word) || english::is_person_label(word) || word == "person"
}

fn stems(text: &str) -> BTreeSet<String> {
    tokenize(text).into_iter().filter(|t| !is_stopword(t)).map(|t| stem(&t).into_owned()).collect()
}

/// Words that open a question and say nothing of its topic.
const QUESTION_OPENERS: &[&str] = &[
    "what",
    "where",
    "who",
    "whom",
    "whose",
    "when",
    "which",
    "how",
    "why",
    "is",
    "are",
    "does",
    "do",
    "did",
    "can",
    "could",
    "has",
    "have",
    "tell",
    "any",
    "still",
    "currently",
    "current",
    "now",
    "usual",
    "usually",
    "kind",
    "much",
    "many",
    "often",
];

/// A newer memory that adds to what was said, or only imagines, asks or denies a change.
static ADDS_OR_HEDGES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:also|too|as well|another|a second|second one|in addition|additionally|besides|might|maybe|thinking (?:about|of)|considering|planning|plan to|would love|wish|if|whether|not sure|didn't|did not|never|no longer planning|rumou?r|apparently|just this once|this once|this week|this time|this weekend|today only|for today|one-off|one off|exception|skipping|skipped|temporarily|years ago|back in|used to|throwback|when i was|as a kid|in college)\b|\?|也|还|打算|可能|也许|如果|以前|之前|曾经|这周|这次|今天|临时|暂时|吗")
        .expect("adds-or-hedges pattern compiles")
});

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(question: &str, texts: &[&str]) -> Vec<(usize, usize)> {
        let answers: Vec<Answer<'_>> = texts.iter().map(|text| Answer { text, placed: false }).collect();
        answered_again(question, &answers)
    }

    #[test]
    fn a_newer_answer_to_the_same_question_flags_the_older() {
        assert_eq!(
            flags(
                "Where does the user park?",
                &["The user parks at the Elm Street garage.", "The user parks in the Hanover Square lot these days."]
            ),
            [(0, 1)]
        );
    }

    #[test]
    fn another_fact_about_the_same_person_flags_nothing() {
        for (question, texts) in [
            (
                "What instrument does Jonah play?",
                ["Jonah plays bass in a jazz trio.", "Jonah moved the trio rehearsals to Wednesdays."],
            ),
            ("What languages does Kofi speak?", ["Kofi speaks Twi and English.", "Kofi is learning Portuguese now."]),
            (
                "Is Maya allergic to anything?",
                ["Maya is allergic to tree nuts.", "Maya switched to almond-free granola."],
            ),
            (
                "What car does the user drive?",
                ["The user drives a RAV4.", "The user moved their car insurance to NRMA."],
            ),
            ("Where does Ana live?", ["Ana lives in Lisbon.", "Ben lives in Porto now."]),
            ("What pets does the user have?", ["The user has a cat named Miso.", "The user also has a dog now."]),
        ] {
            assert_eq!(flags(question, &texts), [], "{question}");
        }
    }
}
