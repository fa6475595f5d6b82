//! What every form shares: anchored patterns, a matched length with its range, the longest
//! match, and the cue words before a date.

use regex::Regex;

use super::TimeRange;

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
