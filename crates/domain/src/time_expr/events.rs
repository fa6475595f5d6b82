//! Events: "before the move", "after we met Jane" — a range relative to something the memory
//! must locate, and the words that make "before"/"after" no preposition.

use std::sync::LazyLock;

use regex::Regex;

use super::Relation;
use super::scan::anchored;
use super::words::is_word_char;
/// At most this many words of an event are kept: the event is a search phrase, not a sentence.
pub(super) const MAX_EVENT_WORDS: usize = 8;

/// Words right before "before"/"after" that make it an adverb or part of a phrasal verb rather
/// than a preposition over an event: "ever before", "the day before", "look after the kids",
/// "named after her grandmother". "A week before the wedding" also lands here: it names a
/// shifted day, which a plain before/after range would misread, so it is better not read at all.
pub(super) const NOT_EVENT_PRECEDING: &[&str] = &[
    "ever", "never", "the", "day", "days", "night", "nights", "week", "weeks", "month", "months", "year", "years",
    "morning", "evening", "time", "times", "than", "look", "looks", "looked", "looking", "take", "takes", "took",
    "taking", "named", "name", "run", "runs", "ran", "running", "chase", "chased", "went", "go", "goes", "come",
    "comes", "came", "seek", "sought",
];

/// First words that leave the event unknown: "before that", "after all", "after which".
pub(super) const NOT_EVENT_START: &[&str] =
    &["that", "this", "then", "all", "which", "what", "whom", "whose", "and", "or", "but", "now"];

/// Whole events that are only a pronoun: "before it", "after you".
pub(super) const NOT_EVENT_ALONE: &[&str] = &["it", "them", "him", "her", "me", "us", "you", "there", "here", "so"];

/// "before the move", "after she went to Paris": the relation, the phrase length, and the event
/// words up to the end of the clause.
pub(super) fn event_at<'a>(preceding: &str, rest: &'a str) -> Option<(usize, Relation, &'a str)> {
    static CUE: LazyLock<Regex> = LazyLock::new(|| anchored(r"(?P<word>before|after|prior\s+to)\s+"));
    let caps = CUE.captures(rest)?;
    let previous_word = preceding.trim_end().rsplit(|c: char| !is_word_char(c)).next().unwrap_or("");
    if is_one_of(previous_word, NOT_EVENT_PRECEDING) {
        return None;
    }
    let relation = if caps["word"].eq_ignore_ascii_case("after") { Relation::After } else { Relation::Before };
    let offset = caps[0].len();
    let event = event_words(&rest[offset..]);
    let first_word = event.split_whitespace().next()?;
    if is_one_of(first_word, NOT_EVENT_START) || is_one_of(event, NOT_EVENT_ALONE) {
        return None;
    }
    Some((offset + event.len(), relation, event))
}

pub(super) fn is_one_of(word: &str, list: &[&str]) -> bool {
    list.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// The leading words of `text` up to the end of the clause ('?', ',', '.', ';', '!', ':' or a line
/// break) and at most [`MAX_EVENT_WORDS`] words, without surrounding whitespace.
pub(super) fn event_words(text: &str) -> &str {
    let mut words = 0;
    let mut end = 0;
    let mut in_word = false;
    for (at, c) in text.char_indices() {
        if matches!(c, '?' | ',' | '.' | ';' | '!' | ':' | '\n') {
            break;
        }
        if c.is_whitespace() {
            in_word = false;
            continue;
        }
        if !in_word {
            if words == MAX_EVENT_WORDS {
                break;
            }
            words += 1;
            in_word = true;
        }
        end = at + c.len_utf8();
    }
    &text[..end]
}
