//! Time expressions in questions ("last week", "in May 2023", "before the move") read as time ranges relative to the question's `as_of`,
//! and the times a memory mentions ("yesterday", "last Friday") read relative to when it was said.
//!
//! Retrieval's query understanding turns the first time expression of a question into a filter.
//! The words are read relative to an *anchor* (the question's `as_of`, or now), and all calendar
//! arithmetic is in UTC: a "day" is a UTC day, a "week" an ISO week starting Monday 00:00 UTC.
//!
//! How the reading works: [`find_time_expression`] walks the word starts of the question from left
//! to right and, at each one, tries every form below anchored there. The first word start where
//! any form matches wins (the earliest expression), and among the forms matching there the longest
//! wins ("in May 2023" over "in May"). A form relative to an event ("before the move") only wins
//! when no date form matches at the same place, so "before May 2023" stays a date.
//!
//! Forms read (case-insensitive, on word boundaries):
//! - days: `today`, `tonight`, `this morning|afternoon|evening`, `yesterday`, `last night`,
//!   `tomorrow`, `the day before yesterday`, `the day after tomorrow`;
//! - weekdays: `last|past|this past|next Friday` (the latest such day before the anchor's day,
//!   or the first after it; `Fri`, `Tues`, `Thurs` too);
//! - calendar periods: `this|last|previous|next week|weekend|month|year` (a weekend is Saturday
//!   00:00 to Monday 00:00 of the ISO week);
//! - ago: `N days|weeks|months|years ago` (N in digits, `one`..`twelve`, `a`, `an`) is the whole
//!   day, ISO week, month or year containing anchor − N units; `a few` spans 2..=7 units ago,
//!   `a couple (of)` 2..=3, `several` 3..=7;
//! - rolling windows: `(in|during|over|within|for) the last|past [N] days|weeks|months|years`
//!   (the article is required) is `[anchor − N units, anchor)`; without N the unit is singular
//!   and N is one (`the past week`); `few` and `several` are 7, `a couple` 3;
//! - dates: ISO `2023-05-08` and `2023-05`; `May 2023`, `May 8, 2023`, `May 8th 2023`,
//!   `8 May 2023`, `the 8th of May`, `early|mid|late May [2023]` (days 1–10, 11–20, 21–end),
//!   `early|mid|late 2023` (Jan–Apr, May–Aug, Sep–Dec), `summer 2023` (meteorological seasons,
//!   northern hemisphere; winter 2023 is Dec 2023–Feb 2024), `last|this|next May|summer`,
//!   `the week of May 8, 2023` (the ISO week containing that day);
//! - prepositions: `in|during|throughout|from` allow a bare month (`in May`), year (`in 2023`) or
//!   season (`in the summer`); `of 2023`; `on` allows a day without year (`on May 8`), and a
//!   day of the month alone with its ordinal (`on the 15th`, when the phrase ends there or a
//!   function word follows: "on the 3rd floor" is no date, nor is "on the 15th and 16th");
//! - open ranges: `before X` = `[open, start X)`, `after X` = `[end X, open)`, `since X` =
//!   `[start X, open)`, `until|till X` = `[open, end X)`, `prior to X` = before;
//! - spans: `between X and Y`, `from X to|until|through Y` = `[start X, end Y)`;
//! - events: `before|after|prior to` + words that are no date is [`TimeExpression::RelativeToEvent`].
//!
//! Deliberate limits (the notes on each rule say why):
//! - a date without a year ("in May", "June 20th") is the latest one already begun at the anchor
//!   (in a question; in a memory, the one nearest it, since a memory may speak of plans);
//!   "last May" is the latest May already ended, "next May" the first not yet begun; "on the
//!   15th" is likewise the latest 15th begun (in a memory, the one nearest it); knowing the
//!   store's newest memory, a question's yearless date that lies beyond what any memory can
//!   speak of is read against that memory instead (`find_time_expression_knowing`);
//! - a month name alone is a month only after a preposition, and "may"/"march" after `early`,
//!   `late`, `last`, ... only with a year or at the end of the clause ("May I ask" is no date);
//!   a day without a year needs an ordinal, `on`, or the end of the clause ("May 5 people");
//! - no numeric day/month orders other than ISO (`5/8/2023` is ambiguous), no abbreviations with a
//!   dot (`Jan.`), no clock times, no future spans ("in 3 days"), no "since" + event;
//! - "before"/"after" right after `ever`, `the`, `day`, `week`, `look`, `named`, ... is not an event
//!   (an adverb, a phrasal verb, or a shifted day like "a week before the wedding" that a plain
//!   before/after range would misread); "before that", "after all", "after it" are no event either;
//! - the event is taken as written, up to 8 words, and may itself contain a date ("after the move
//!   in May 2023" is the event "the move in May 2023", being the earliest expression).
//!
//! The same forms in Chinese (上周、三天前、5月8日之前 …) are read by [`chinese`], into the same
//! ranges.
//!
//! The rooms: this file holds the API, its types and the [`Reader`] (defined here so the forms
//! it reads with need not import the file that drives them); `reader` tries every form at one
//! place, relative to one anchor; `forms` holds the date patterns and what each reads as;
//! `chinese` the Chinese forms; `events` the before/after-an-event form; `counts` how many
//! units; `calendar` the UTC units and ranges; `words` where words start and end, in Chinese
//! too; `scan` what every form shares; `index` how a full-text index spells a range.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use serde::Serialize;

use crate::time::Timestamp;

mod calendar;
mod chinese;
mod counts;
mod events;
mod forms;
mod index;
mod reader;
mod scan;
#[cfg(test)]
mod tests;
mod words;

pub use index::{MAX_DAYS_SPELT, MAX_MONTHS_SPELT, calendar_terms};

use scan::{Cue, Parsed, longest};
use words::{HanWords, word_starts};

/// A half-open range [start, end) of instants; either end may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeRange {
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeExpression {
    /// A range fixed by the words alone (given the anchor).
    Range { range: TimeRange },
    /// "before the move", "after we met Jane": relative to an event the memory must locate; `event`
    /// is the words after the preposition, trimmed (e.g. "the move").
    RelativeToEvent { relation: Relation, event: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    Before,
    After,
}

/// One time expression found in a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoundTime {
    pub expression: TimeExpression,
    /// the words matched, as written
    pub phrase: String,
}

/// Reads expressions relative to one anchor.
struct Reader {
    anchor: Timestamp,
    /// Reading a memory rather than a question: see [`Reader::latest_begun`].
    statement: bool,
    /// The anchor's UTC calendar day.
    today: Date,
    /// When the store's newest memory was observed, if before the anchor
    /// ([`find_time_expression_knowing`]).
    newest: Option<Timestamp>,
    /// Where the Chinese words of the text being read end ([`HanWords`]).
    words: HanWords,
}

/// The first time expression in `question`, read relative to `anchor` (the question's as_of, or now).
pub fn find_time_expression(question: &str, anchor: Timestamp) -> Option<FoundTime> {
    find_time_expression_knowing(question, anchor, None)
}

/// [`find_time_expression`] for a store whose newest memory was observed at `newest`. A date
/// given without its year ("in July", "on Aug 15th") is the latest one begun by the anchor,
/// unless that lies beyond [`YEARLESS_REACH`] after the newest memory, where no memory can
/// have been observed or have spoken of it: then it is the latest begun by the newest memory.
/// Asked in 2026 of a store that ends in October 2023, "in July" is July 2023, not July 2026;
/// asked a week after a memory planning "Rome in July", it is the coming July still. Relative
/// times ("last week", "this summer") stay relative to `anchor`: they speak of the asker's
/// present.
pub fn find_time_expression_knowing(question: &str, anchor: Timestamp, newest: Option<Timestamp>) -> Option<FoundTime> {
    let mut reader = Reader::new(anchor);
    reader.newest = newest.filter(|newest| *newest < anchor);
    reader.words = HanWords::of(question);
    word_starts(question, &reader.words).find_map(|at| reader.read_at(&question[..at], &question[at..]))
}

/// Whether the time `question` names depends on when the store's newest memory was observed
/// ([`find_time_expression_knowing`]): only a date without its year does, so only then is the
/// newest memory worth looking up.
pub fn depends_on_newest(question: &str, anchor: Timestamp) -> bool {
    let long_ago = anchor.checked_sub(jiff::SignedDuration::from_hours(24 * 366 * 50)).ok();
    find_time_expression_knowing(question, anchor, long_ago) != find_time_expression(question, anchor)
}

/// How far after a memory its own words can place a date said without its year: a statement's
/// "in May" is the occurrence nearest when it was said, so at most about half a year ahead; a
/// year leaves room for "next May". Beyond it, no memory can hold a question's yearless date.
const YEARLESS_REACH: jiff::SignedDuration = jiff::SignedDuration::from_hours(24 * 366);

/// How many years back a question's date without its year is looked for: February 29th
/// comes round every four.
const YEARLESS_LOOKBACK: i16 = 4;

/// A time a statement names, read relative to when it was said: "yesterday" in a message of
/// 8 May 2023 is 7 May 2023.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeMention {
    /// The words, as written.
    pub phrase: String,
    pub range: TimeRange,
}

/// Every closed time expression in `text` (a memory, not a question), left to right and not
/// overlapping, read relative to `said_at` (when the memory was observed): days ("yesterday",
/// "last night", "tomorrow"), calendar periods ("last week", "next month", "last weekend"),
/// weekdays ("last Friday", "next Sunday"), "N units ago" and dates ("on May 8", "in March 2023").
/// Open ranges ("before May") and events ("after the move") say no time of their own and are
/// left out, as are rolling windows ("the past few weeks"), too vague to place a memory.
pub fn find_time_mentions(text: &str, said_at: Timestamp) -> Vec<TimeMention> {
    let reader = Reader { statement: true, words: HanWords::of(text), ..Reader::new(said_at) };
    let mut mentions = Vec::new();
    let mut resume = 0;
    for at in word_starts(text, &reader.words) {
        if at < resume {
            continue;
        }
        let rest = &text[at..];
        let Some(Parsed { len, range }) = longest([reader.with_preposition(rest), reader.date_like(rest, Cue::None)])
        else {
            continue;
        };
        if range.start.is_some() && range.end.is_some() {
            mentions.push(TimeMention { phrase: rest[..len].to_owned(), range });
            resume = at + len;
        }
    }
    mentions
}

impl TimeRange {
    /// Whether `at` falls in the range (start inclusive, end exclusive).
    pub fn contains(&self, at: Timestamp) -> bool {
        self.start.is_none_or(|start| start <= at) && self.end.is_none_or(|end| at < end)
    }

    /// "2023-05-01..2023-06-01" style, for explanations. Ends at UTC midnight print as dates, other
    /// ends as full timestamps; an open end prints as nothing ("2023-06-01..").
    pub fn describe(&self) -> String {
        let end = |at: Option<Timestamp>| at.map(describe_instant).unwrap_or_default();
        format!("{}..{}", end(self.start), end(self.end))
    }

    /// A range is usable when it is not empty or inverted.
    fn is_well_formed(&self) -> bool {
        match (self.start, self.end) {
            (Some(start), Some(end)) => start < end,
            _ => true,
        }
    }
}

impl Relation {
    /// The range an event at `event_at` stands for: before it is `[open, event_at)`, after it is
    /// `[event_at, open)`.
    pub fn range_around(self, event_at: Timestamp) -> TimeRange {
        match self {
            Relation::Before => TimeRange { start: None, end: Some(event_at) },
            Relation::After => TimeRange { start: Some(event_at), end: None },
        }
    }
}

fn describe_instant(at: Timestamp) -> String {
    let datetime = TimeZone::UTC.to_datetime(at);
    if datetime.time() == Time::midnight() { datetime.date().to_string() } else { at.to_string() }
}
