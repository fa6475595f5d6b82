//! The change cues English uses to say a value changed ("moved to", "no longer", "now",
//! "correction:"), what keeps a word from being one (a negation before it, a span such as
//! "for a week now", a visit, a cadence), the cheap sign test before reading, and how far each
//! cue reaches. The words a cue acts on become lookup keys (`lookup`); whether the
//! change replaces anything is decided by [`crate::claims::decide`].

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::attributes::ATTRIBUTE_RULES;
use crate::lexicon::english::{self, TIME_UNITS};

/// Words and phrases English uses to say that a value changed. Each needs a word boundary on
/// both sides; `(?: \S+){0,6} to` lets the changed thing sit between the verb and its new value
/// ("cut *the Atlas budget* to", "moved *standup* to").
pub(super) static CHANGE_CUES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    let cues: &[(&'static str, &str)] = &[
        ("correction", r"\bcorrection\b"),
        // Only as a correction ("Actually, it's Tuesday"), not as an intensifier.
        ("actually", r"^\W*actually\b|\bactually,"),
        ("instead", r"\binstead\b"),
        ("no longer", r"\bno longer\b"),
        ("not anymore", r"\b(?:any ?more)\b"),
        ("now", r"\bnow\b"),
        ("these days", r"\b(?:these days|nowadays|from now on|going forward)\b"),
        ("switched", r"\b(?:switched|switching|switches|swapped)\b"),
        ("changed", r"\b(?:changed|changes|changing)(?: \S+){0,4} (?:to|from|into)\b"),
        ("moved to", r"\b(?:moved|moves|moving|relocated|relocating)(?: \S+){0,3} (?:to|off|away from)\b"),
        ("left", r"\b(?:left|leaving|quit|quitting|resigned)\b"),
        ("dropped", r"\b(?:dropped|stopped|gave up|given up|ditched|abandoned|got rid of|getting rid of|gave away)\b"),
        ("replaced", r"\b(?:replaced|replacing|upgraded|downgraded|traded(?: \S+){0,3} in|sold)\b"),
        ("cancelled", r"\b(?:cancell?ed|withdrew|withdrawn|pulled out|dropped out|called off)\b"),
        ("postponed", r"\b(?:slipped|postponed|delayed|pushed (?:back|out)|rescheduled|brought forward|moved up)\b"),
        // A new employer ("took a job with Spotify"); "joined Marco for lunch" is no job.
        ("new job", r"\btook (?:a|an|the) (?:new )?(?:job|position|role|offer)\b"),
        (
            "changed to",
            r"\b(?:cut|raised|increased|reduced|lowered|bumped|grew|fell|rose|extended|shortened|went (?:up|down))(?: \S+){0,6} to\b",
        ),
        ("migrated", r"\b(?:migrated|migrating|migrates)(?:(?: \S+){0,2} (?:off|from|away from))?\b"),
        ("handed over", r"\b(?:handed (?:over|off)|took over|taking over|takes over)\b"),
        // A new rank replaces the old one ("got promoted to senior designer").
        ("promoted", r"\b(?:got|gets|getting|was|were|been|be|is|are) (?:\S+ )?(?:promoted|demoted)(?: to)?\b"),
        // A relationship's next state ("got engaged"), not any mention of one.
        ("got engaged", r"\b(?:got|getting|just|recently) (?:engaged|married|hitched)\b"),
        // Studies end ("graduated and now works as…").
        ("graduated", r"\b(?:graduated|graduates)\b"),
        // Made again another way ("the API was rewritten in Rust").
        ("rewritten", r"\b(?:rewr(?:ote|itten|iting)|rebuilt|rebuilding|redesigned|redone|reworked)\b"),
        // Less of something, or none ("cut back on sugar", "cut her hair short", "cut out gluten").
        ("cut back", r"\bcut (?:back|down)(?: on)?\b|\bcut (?:her|his|their|my|your) \S+ short\b"),
        ("dyed", r"\b(?:dyed|bleached|shaved)\b"),
        ("broke up", r"\b(?:broke up|split up|divorced|separated)\b"),
        ("married", r"\btied the knot\b"),
        (
            "new",
            r"\bnew (?:address|job|home|house|flat|apartment|phone|number|manager|boss|role|title|car|email|employer|team|school|partner)\b",
        ),
    ];
    cues.iter().map(|(name, re)| (*name, Regex::new(&format!("(?i){re}")).expect("cue pattern compiles"))).collect()
});

/// Every change cue and every single-valued slot in one automaton: a text none of them
/// matches cannot replace anything, and is told so in one pass over it.
pub(super) static REPLACEMENT_SIGNS: LazyLock<RegexSet> = LazyLock::new(|| {
    let cues = CHANGE_CUES.iter().map(|(_, re)| re.as_str().to_owned());
    let slots =
        ATTRIBUTE_RULES.iter().filter(|r| r.attribute.is_single_valued()).map(|r| r.pattern.as_str().to_owned());
    RegexSet::new(cues.chain(slots)).expect("the cue patterns compile together")
});

/// Whether `text` shows any sign of replacing something (a change cue or a single-valued
/// slot): the cheap test before reading it as a claim, which most texts fail.
pub fn may_replace_anything(text: &str) -> bool {
    if crate::han::mostly_han(text) {
        return super::chinese::may_replace_anything(text);
    }
    let lower = text.to_lowercase();
    SIGN_WORDS.iter().any(|word| lower.contains(word)) && REPLACEMENT_SIGNS.is_match(text)
}

/// A word part every change cue and single-valued slot contains: substring tests that rule
/// out most texts before the automaton runs.
pub(super) const SIGN_WORDS: &[&str] = &[
    "abandon",
    "actually",
    "address",
    "any more",
    "anymore",
    "became",
    "bleach",
    "boss",
    "broke up",
    "brought forward",
    "bump",
    "called off",
    "cancel",
    "chang",
    "correction",
    "cut ",
    "days",
    "delay",
    "demot",
    "ditch",
    "divorc",
    "downgrad",
    "drop",
    "dyed",
    "engaged",
    "enroll",
    "extend",
    "fell ",
    "forward",
    "freshman",
    "gave away",
    "gave up",
    "given up",
    "grade",
    "graduat",
    "grew ",
    "hand",
    "has been",
    "hitched",
    "increas",
    "instead",
    "junior",
    "kindergarten",
    "knot",
    "leav",
    "left",
    "lives at",
    "longer",
    "lower",
    "manager",
    "married",
    "migrat",
    "mov",
    "new ",
    "now",
    "postpon",
    "promot",
    "pulled out",
    "pushed",
    "quit",
    "rais",
    "rebuil",
    "redesign",
    "redone",
    "reduc",
    "relocat",
    "replac",
    "report",
    "resched",
    "resign",
    "rework",
    "rewr",
    "rid of",
    "rose ",
    "semester",
    "senior",
    "separat",
    "shaved",
    "shorten",
    "slipp",
    "sold",
    "sophomore",
    "split up",
    "stop",
    "stud",
    "supervisor",
    "swap",
    "switch",
    "takes over",
    "taking over",
    "took a",
    "took an",
    "took over",
    "took the",
    "traded",
    "upgrad",
    "went ",
    "withdr",
    "year ",
];

/// A stay somewhere is not a move there: these keep a text off the residence slot.
pub(super) static VISIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:visit\w*|trip|vacation|holiday|conference|travell?(?:ed|ing)|stay(?:ed|ing)|temporarily|for the (?:weekend|summer|winter|holidays)|for a week)\b")
        .expect("visit pattern compiles")
});

/// Cue words in phrases that change nothing: "dropped off the cake", "stopped by the shop",
/// "left over", "now and then", "now that…", "instead of giving up", and leaving a place or a
/// thing rather than a job, a team or a habit ("left the office late", "left early", "left a
/// note").
pub(super) static NOT_A_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:dropped|stopped|dropping|stopping) (?:off|by|in|into|over|at)|left (?:over|behind)|now and then|now (?:that|i|i'm|i've|you|you're|we|they|he|she|it)|instead of \w+ing|left (?:(?:the|his|her|their|my|our|your|a|an) )?(?:\S+ )?(?:office|building|house|home|party|meeting|room|shop|store|gym|restaurant|bar|station|airport|stage|table|call|chat|keys|phone|bag|wallet|umbrella|laptop|kids?|note|message|comment|review|tip|voicemail)|left (?:early|late|at \d|for (?:lunch|dinner|the day|home|work|school|the airport))|left (?:\S+ ){0,4}?(?:at \d\w*|early|late|open|behind|unattended)|left for)\b",
    )
        .expect("not-a-cue pattern compiles")
});

/// "Now" in a phrase about time rather than a change: "right now", "for a while now", "just
/// now", "up to now". (Spans of time before "now" are [`names_a_span`]'s.)
pub(super) static NOT_NOW_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    // …and "is at the gym now", "are in the shop now": where someone or something is for the
    // moment, not a changed fact.
    Regex::new(
        r"(?i)(?:\b(?:right|just|until|till|by|for|up to|while|ago|than|even)\s+$|\b(?:is|are|'s|'re|am)\s+(?:at|in|on|with)\s+(?:the\s+|a\s+|his\s+|her\s+|their\s+|my\s+)?(?-i:[a-z])\w*\s+$)",
    )
        .expect("figurative now pattern compiles")
});

/// A cadence before "now" whose unit is plural ("every two weeks now", "each few days now"):
/// how often something happens, which "now" says has changed; not a span that has passed.
pub(super) static CADENCE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:every|each|per)\s+(?:other\s+|\d+\s+|few\s+|couple\s+of\s+|two\s+|three\s+|four\s+|five\s+|six\s+|ten\s+)?(?:year|month|week|day|hour|decade)s\s+$",
    )
    .expect("cadence pattern compiles")
});

/// Words that open a span before a singular unit: "a year", "one month", "the past week",
/// "the last decade", "a whole year", "all week".
pub(super) const SPAN_OPENERS: &[&str] = &["a", "an", "one", "past", "last", "whole", "entire", "all"];

/// Words that count: with one of them just before "a year", the phrase is a quantity per unit
/// ("two videos a week", "a pack a day", "twice a month"); before plural units they make a span
/// ("couple of hours", "several weeks").
/// (Number words to twelve are the lexicon's.)
pub(super) const COUNT_WORDS: &[&str] = &[
    "a", "an", "fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred",
    "thousand", "million", "half", "dozen", "couple", "few", "several", "many", "once", "twice", "thrice", "times",
];

/// Whether a word of text is a number, an amount ("90k", "$2,100") or a count word.
pub(super) fn counts(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '$' | '€' | '£' | '¥'))
        || english::number_word(word).is_some()
        || COUNT_WORDS.contains(&word)
}

/// Whether the text before a "now" ends in a span of time, which says how long something has
/// held, not that it changed: "for just under a year now", "a decade now", "for the past year
/// now", "all week now", "seven years now", "for hours now". A quantity per unit is a rate,
/// which "now" does say changed: "three days a week now", "90k a year now", "one coffee a day
/// now", "every two weeks now". So a singular unit is a span after an opener ("a", "the past",
/// "all"), unless one of the three words before "a" counts something; a plural unit is a span
/// after a count or "for"/"been"/"past"/"last" ("I work days now" is a change).
pub(super) fn names_a_span(before: &str) -> bool {
    if CADENCE_BEFORE.is_match(before) {
        return false;
    }
    // The clause's last words, newest first; a comma or a full stop ends the clause.
    let mut words = Vec::new();
    for token in before.split_whitespace().rev() {
        if !words.is_empty() && token.ends_with([',', ';', ':', '.', '!', '?']) {
            break;
        }
        words.push(token.trim_matches(|c: char| c.is_ascii_punctuation() && c != '$').to_lowercase());
        if words.len() == 7 {
            break;
        }
    }
    let Some((unit, rest)) = words.split_first() else { return false };
    if unit.strip_suffix('s').is_some_and(|u| TIME_UNITS.contains(&u)) {
        return rest.iter().take(2).any(|w| counts(w) || matches!(w.as_str(), "for" | "been" | "past" | "last"));
    }
    if !TIME_UNITS.contains(&unit.as_str()) {
        return false;
    }
    // "a good year", "a solid month": one plain adjective may stand between opener and unit.
    let mut rest = rest.iter();
    let opener = match rest.next() {
        Some(w) if SPAN_OPENERS.contains(&w.as_str()) => w,
        Some(w) if w.chars().all(|c| c.is_ascii_alphabetic()) => match rest.next() {
            Some(opener) if SPAN_OPENERS.contains(&opener.as_str()) => opener,
            _ => return false,
        },
        _ => return false,
    };
    if !matches!(opener.as_str(), "a" | "an" | "one") {
        return true;
    }
    !rest.take(3).any(|w| counts(w))
}

/// A change verb before "anymore": what stopped is the change, not the fact.
pub(super) static CALLED_OFF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:mov|switch|chang|leav|quit|relocat|transferr?)\w*\b").expect("called-off pattern compiles")
});

/// A negation before a cue in its clause: "is not moving to", "didn't end up switching", "no
/// change", and what did not happen either ("decided against moving", "nearly quit", "refused
/// to switch"); not for "no longer" and "anymore", which need one to say a thing ended.
pub(super) static NEGATION_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:\bno\s+(?:\S+\s+)?$|\bnot\b|\bnever\b|n't\b|\b(?:nearly|almost)\s+$|\b(?:decided against|refused|declined)\s+(?:to\s+)?$)",
    )
        .expect("negation pattern compiles")
});

/// How far a change cue's meaning reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CueReach {
    /// "Correction: …" revises the whole text.
    Text,
    /// An adverb ("now", "these days", "instead", "anymore", "no longer") changes its clause.
    Clause,
    /// A verb ("left", "quit", "slipped", "moved … to") acts on the words next to it.
    Verb,
}

pub(super) fn cue_reach(cue: &str) -> CueReach {
    match cue {
        "correction" | "actually" => CueReach::Text,
        "now" | "these days" | "instead" | "not anymore" | "no longer" => CueReach::Clause,
        _ => CueReach::Verb,
    }
}

/// Whether `re` matches somewhere not negated just before.
pub(super) fn unnegated_matches<'t>(re: &Regex, text: &'t str) -> impl Iterator<Item = regex::Match<'t>> {
    re.find_iter(text).filter(move |m| {
        if NOT_A_CUE.is_match(&text[m.start()..]) {
            return false;
        }
        let before = &text[..m.start()];
        if m.as_str().eq_ignore_ascii_case("now") && (NOT_NOW_BEFORE.is_match(before) || names_a_span(before)) {
            return false;
        }
        // "isn't moving to Berlin anymore": a change called off, not a fact ended.
        if m.as_str().to_lowercase().starts_with("any") && CALLED_OFF.is_match(before) {
            return false;
        }
        let cue = m.as_str().to_lowercase();
        let ends_with_negation = cue.starts_with("no longer") || cue.starts_with("any");
        let negated = NEGATION_BEFORE.is_match(before) && !ends_with_negation;
        !negated
    })
}
