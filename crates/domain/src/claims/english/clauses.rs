//! Where English puts a clause and its subject: clauses cut at their breaks (a text's sentences
//! are [`crate::text::sentences`]), scene-setting openers stripped, the words that are verbs (so
//! a subject is what comes before one), dropped subjects as notes drop them, chat contractions,
//! and people named together.

use std::sync::LazyLock;

use regex::Regex;

use crate::claims::{Claim, Hold, Subject};

use crate::claims::Polarity::Ended;

/// Prepositions that open a scene-setting phrase before a clause's subject.
pub(super) const SCENE_OPENERS: &[&str] = &[
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
pub(super) const MAX_SUBJECT_WORDS: usize = 6;

/// "I'm …", "she's …": the predicate as "am …".
pub(super) fn am_predicate<'c>(clause: &'c str, at: usize, word: &str) -> &'c str {
    // The contraction's verb is part of the word: point the predicate at its apostrophe and
    // let the forms read "'m"/"'s"/"'re" as "is".
    let apostrophe = word.find('\'').map_or(word.len(), |i| i);
    &clause[at + apostrophe..]
}

/// Words that open a clause without being its subject: discourse markers, interjections and
/// leading time phrases ("btw", "so", "update:", "as of March,").
pub(super) fn strip_openers(mut clause: &str) -> &str {
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

pub(super) static OPENER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:btw|fyi|ps|so|oh|ugh|ok|okay|well|anyway|anyways|also|and|but|plus|update|note|reminder|heads up|quick update|news|fun fact|lol|haha|hey|yeah|yep|nope|hmm|welp|finally|good news|bad news|big news|side note|context|correction|actually|sorry|oops|edit|fwiw|imo|tbh|honestly|apparently|turns out|as of (?:today|now|this week|this month|\w+ \d{1,2}|\w+)|starting (?:today|now|this week|next week|monday|tuesday|wednesday|thursday|friday|\w+ \d{1,2}|\w+)|since (?:last \w+|\w+)|last (?:week|month|year|weekend|night)|this (?:week|month|year|morning)|yesterday|today|these days|nowadays|recently|lately|meanwhile|in other news)\b[\s,:;!.—–-]*)",
    )
    .expect("opener pattern compiles")
});

/// A note: "key: value", "key = value", "key -> value".
pub(super) static NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<k>[^:=>→\d][^:=>→]{0,47}?)\s*(?::\s|=|->|→|=>|\s[—–]\s|\s-\s)\s*(?P<v>\S.*)$")
        .expect("note pattern compiles")
});

/// A note whose value is a measure right after its key: "window cleaner Dave £18", "grocery
/// budget £450/mo", "eye test @ Specsavers 2 Oct 11:20".
pub(super) static NOTE_MEASURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?P<k>[a-z][\w'&\- ]{1,40}?)\s+(?:@\s*[\w'&\- ]{1,30}?\s+)?(?P<v>(?:[$£€¥]\s?\d|\d[\d.,]*\s?(?:kg|g|lbs?|%|mg|mcg|km|mi|°[cf]?)\b|\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\s+\d{1,2}\b).*)$")
        .expect("measure note pattern compiles")
});

/// A sentence's clauses: split at ", and", ", but", ", so", " but ", dashes, semicolons, and at
/// " and " or a comma before a word that opens a clause of its own ("…, and now works at
/// Anthropic", "…, she moved to Lyon").
pub(super) fn clauses(sentence: &str) -> Vec<&str> {
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

pub(super) static CLAUSE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:,\s*(?:and|but|so|though)\s+|\s+(?:and|but|so)\s+|\s*[—–]\s*|\s+-\s+|,\s+|;\s*)")
        .expect("clause break compiles")
});

/// Words that open a clause of their own after "and" or a comma.
pub(super) const CLAUSE_STARTERS: &[&str] = &[
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

pub(super) fn word_spans(clause: &str) -> Vec<(usize, &str)> {
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

pub(super) fn is_capitalised_name(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase)
        && word.chars().filter(|c| c.is_alphabetic()).count() > 1
        && !CAPITALISED_VERBS.contains(&word.to_lowercase().as_str())
}

/// Capitalised at a sentence start, but verbs: never a name.
pub(super) const CAPITALISED_VERBS: &[&str] =
    &["is", "are", "was", "has", "had", "got", "moved", "just", "now", "lives", "works"];

/// Verbs and auxiliaries a predicate can open with: where a subject phrase ends.
pub(super) fn is_verb(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    VERBS.contains(&word)
        || (word.len() > 4 && word.ends_with("ed") && !NOT_VERBS.contains(&word))
        || word.ends_with("n't")
}

/// Words ending in "ed" that are no verbs.
pub(super) const NOT_VERBS: &[&str] = &[
    "bed", "red", "need", "speed", "seed", "feed", "shed", "hundred", "breed", "weed", "bled", "wed", "sled", "embed",
];

/// Whether a clause opening with `word` has dropped its subject (a verb first).
pub(super) fn opens_with_a_verb(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    DROPPED_SUBJECT_OPENERS.contains(&word)
        || (word.len() > 4 && word.ends_with("ed") && !NOT_VERBS.contains(&word) && !NOT_OPENING_VERBS.contains(&word))
}

/// Participles that open a phrase rather than a clause whose "I" was dropped.
pub(super) const NOT_OPENING_VERBS: &[&str] = &[
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

pub(super) const DROPPED_SUBJECT_OPENERS: &[&str] = &[
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

pub(super) const VERBS: &[&str] = &[
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
pub(super) const NOT_SUBJECTS: &[&str] = &[
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
pub(super) fn looks_like_a_person(subject: &Subject) -> bool {
    subject.name.chars().next().is_some_and(char::is_uppercase)
        && !subject.key.split(' ').any(|w| THING_NOUNS.contains(&w))
}

/// Nouns that make a phrase a thing, not a person.
pub(super) const THING_NOUNS: &[&str] = &[
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

/// Contractions as chat writes them, without the apostrophe ("im vegan", "i dont drive any
/// more"): spelled out so the forms read them as they read "I'm" and "don't". Only words that
/// are nothing else in English; "IM" (a message) and "wont" / "cant" (real words) are left.
pub(super) static CHAT_CONTRACTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:[iI]m|dont|doesnt|isnt|arent|didnt|havent|hasnt|wasnt|werent)\b")
        .expect("chat contraction pattern compiles")
});

pub(super) fn chat_contraction(word: &str) -> String {
    match word {
        "im" | "Im" => "I'm".to_owned(),
        other => format!("{}'t", &other[..other.len() - 1]),
    }
}

/// The people a joint subject names ("Kofi and Ama both", "Nora & Felix", "Ana, Ben and
/// Cleo"), each a subject of their own; one subject otherwise.
pub(super) fn joint_people(subject: &Subject) -> Vec<Subject> {
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
pub(super) fn spread_over(people: &[Subject], claims: Vec<(Claim, Option<Hold>)>) -> Vec<(Claim, Option<Hold>)> {
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
