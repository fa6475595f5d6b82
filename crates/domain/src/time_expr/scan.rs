//! Where a form may start (word starts, Chinese word boundaries included), and the pieces every
//! form shares: anchored patterns, a matched length with its range, the longest match, cue words.

use regex::Regex;

use super::TimeRange;
use super::chinese::HanWords;
/// Byte offsets where a word starts: a word character after a non-word character (or the start).
/// Chinese writes no spaces, so there a word starts where the segmenter cut one ("小王*上个月*
/// 搬到…"; not the 下 of "一下周末" or the 上 of "晚上月亮"), and a digit after Han starts one
/// ("在*2023年*").
pub(super) fn word_starts<'t>(text: &'t str, words: &'t HanWords) -> impl Iterator<Item = usize> + 't {
    let mut previous_is_word = false;
    let mut previous_is_han = false;
    text.char_indices().filter_map(move |(at, c)| {
        let is_word = is_word_char(c);
        let is_han = crate::han::is_han(c);
        let starts =
            if is_han { words.starts.contains(&at) } else { is_word && (!previous_is_word || previous_is_han) };
        previous_is_word = is_word;
        previous_is_han = is_han;
        starts.then_some(at)
    })
}

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Compiles a pattern that must match at the very start of the text it is given. Every pattern is
/// a constant of this file, so a failure is a programming error.
pub(super) fn anchored(pattern: &str) -> Regex {
    Regex::new(&format!(r"(?i)^(?:{pattern})")).expect("time expression pattern compiles")
}

/// A form matched at the start of some text: its length in bytes and the range it reads as.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parsed {
    pub(super) len: usize,
    pub(super) range: TimeRange,
}

impl Parsed {
    /// The same range, with `offset` more bytes of cue words in front of it.
    pub(super) fn after(self, offset: usize) -> Parsed {
        Parsed { len: offset + self.len, ..self }
    }
}

/// The longest well-formed candidate.
pub(super) fn longest(candidates: impl IntoIterator<Item = Option<Parsed>>) -> Option<Parsed> {
    candidates.into_iter().flatten().filter(|p| p.range.is_well_formed()).max_by_key(|p| p.len)
}

/// The words before a date, which decide how much the date may leave out. "May" alone is a month
/// after "in" but a verb at the start of "May I ask"; "8 May" is a date after "on" but may be a
/// count in "we had 8 may..." on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Cue {
    /// Nothing: only forms that cannot be ordinary words.
    None,
    /// "on": also a day without year or ordinal ("on May 8").
    On,
    /// "in", "during", "since", "before", ...: also a bare month, year or season.
    Preposition,
}
