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

use std::sync::LazyLock;

use jiff::Span;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use regex::{Captures, Regex};
use serde::Serialize;

use crate::time::Timestamp;

mod chinese;

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

/// The longest range [`calendar_terms`] spells day by day (a week); a longer one is spelt by
/// months. A full-text index weighs a memory's words by how many it has, so a mention must
/// add few terms: "last week" adds nine at most, "next month" one.
pub const MAX_DAYS_SPELT: i64 = 7;
/// The longest range spelt at all, in months: a longer one ("ten years ago") places nothing.
pub const MAX_MONTHS_SPELT: i64 = 25;

/// How a full-text index finds memories by the time they mention: one term per UTC day of the
/// range (`t20230507`) when it spans at most [`MAX_DAYS_SPELT`] days, and one per month it
/// touches (`t202305`) when it spans at most [`MAX_MONTHS_SPELT`] months. A memory holds both
/// (`for_question: false`), so a question can ask by day or by month; a question's window
/// is spelt in its own grain only (`for_question: true`): by days when it is that short, so
/// "on 3 May" does not match every mention of May, else by months. Terms are letters and
/// digits only, so every analyzer keeps them whole.
pub fn calendar_terms(range: &TimeRange, for_question: bool) -> Vec<String> {
    let (Some(start), Some(end)) = (range.start, range.end) else { return Vec::new() };
    if end <= start {
        return Vec::new();
    }
    let first = TimeZone::UTC.to_datetime(start).date();
    let last = match end.checked_sub(jiff::SignedDuration::from_nanos(1)) {
        Ok(last) => TimeZone::UTC.to_datetime(last).date(),
        Err(_) => return Vec::new(),
    };
    let Ok(days) = first.until((jiff::Unit::Day, last)).map(|span| i64::from(span.get_days()) + 1) else {
        return Vec::new();
    };
    let mut terms = Vec::new();
    let by_days = days <= MAX_DAYS_SPELT;
    if by_days {
        let mut day = first;
        while day <= last {
            terms.push(format!("t{:04}{:02}{:02}", day.year(), day.month(), day.day()));
            let Ok(next) = day.tomorrow() else { break };
            day = next;
        }
    }
    let months = (i64::from(last.year()) - i64::from(first.year())) * 12 + i64::from(last.month())
        - i64::from(first.month())
        + 1;
    if months <= MAX_MONTHS_SPELT && !(for_question && by_days) {
        let mut month = first.first_of_month();
        while month <= last {
            terms.push(format!("t{:04}{:02}", month.year(), month.month()));
            let Some(next) = Unit::Month.shift(month, 1) else { break };
            month = next;
        }
    }
    terms
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

// ---------------------------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------------------------

/// Byte offsets where a word starts: a word character after a non-word character (or the start).
/// Chinese writes no spaces, so there a word starts where the segmenter cut one ("小王*上个月*
/// 搬到…"; not the 下 of "一下周末" or the 上 of "晚上月亮"), and a digit after Han starts one
/// ("在*2023年*").
fn word_starts<'t>(text: &'t str, words: &'t HanWords) -> impl Iterator<Item = usize> + 't {
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

/// Where the segmenter's words start and end in a text with Chinese in it: a Chinese time
/// expression starts and ends where words do, so "三年前端经验" holds no "三年前" (three years
/// ago) and "这周一直" no "这周一" (this Monday).
#[derive(Debug, Default)]
struct HanWords {
    /// The start of the text, as an address: a form reads a slice of it.
    base: usize,
    starts: std::collections::BTreeSet<usize>,
    ends: std::collections::BTreeSet<usize>,
}

impl HanWords {
    fn of(text: &str) -> HanWords {
        if !crate::han::has_han(text) {
            return HanWords::default();
        }
        let words = crate::han::words(text);
        HanWords {
            base: text.as_ptr() as usize,
            starts: words.iter().map(|w| w.span.start).collect(),
            ends: words.iter().map(|w| w.span.end).collect(),
        }
    }

    /// Whether a form read `len` bytes into `rest` (a slice of the text) ends where a word
    /// does, when it ends between two Han characters.
    fn ends_a_word(&self, rest: &str, len: usize) -> bool {
        let inside = rest[..len].chars().next_back().is_some_and(crate::han::is_han)
            && rest[len..].chars().next().is_some_and(crate::han::is_han);
        !inside || self.ends.contains(&(rest.as_ptr() as usize - self.base + len))
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Compiles a pattern that must match at the very start of the text it is given. Every pattern is
/// a constant of this file, so a failure is a programming error.
fn anchored(pattern: &str) -> Regex {
    Regex::new(&format!(r"(?i)^(?:{pattern})")).expect("time expression pattern compiles")
}

/// A form matched at the start of some text: its length in bytes and the range it reads as.
#[derive(Debug, Clone, Copy)]
struct Parsed {
    len: usize,
    range: TimeRange,
}

impl Parsed {
    /// The same range, with `offset` more bytes of cue words in front of it.
    fn after(self, offset: usize) -> Parsed {
        Parsed { len: offset + self.len, ..self }
    }
}

/// The longest well-formed candidate.
fn longest(candidates: impl IntoIterator<Item = Option<Parsed>>) -> Option<Parsed> {
    candidates.into_iter().flatten().filter(|p| p.range.is_well_formed()).max_by_key(|p| p.len)
}

/// The words before a date, which decide how much the date may leave out. "May" alone is a month
/// after "in" but a verb at the start of "May I ask"; "8 May" is a date after "on" but may be a
/// count in "we had 8 may..." on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cue {
    /// Nothing: only forms that cannot be ordinary words.
    None,
    /// "on": also a day without year or ordinal ("on May 8").
    On,
    /// "in", "during", "since", "before", ...: also a bare month, year or season.
    Preposition,
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

impl Reader {
    fn new(anchor: Timestamp) -> Reader {
        let today = TimeZone::UTC.to_datetime(anchor).date();
        Reader { anchor, statement: false, today, newest: None, words: HanWords::default() }
    }

    /// The expression starting exactly at the start of `rest`; `preceding` is the text before it.
    fn read_at(&self, preceding: &str, rest: &str) -> Option<FoundTime> {
        if let Some(Parsed { len, range }) = self.range_at(rest) {
            return Some(FoundTime { expression: TimeExpression::Range { range }, phrase: rest[..len].to_string() });
        }
        let (len, relation, event) = event_at(preceding, rest)?;
        Some(FoundTime {
            expression: TimeExpression::RelativeToEvent { relation, event: event.to_string() },
            phrase: rest[..len].to_string(),
        })
    }

    /// Every range form, with or without cue words in front.
    fn range_at(&self, rest: &str) -> Option<Parsed> {
        longest([
            self.open_ended(rest),
            self.between(rest),
            self.span_from(rest),
            self.with_preposition(rest),
            self.of_year(rest),
            self.rolling(rest),
            self.date_like(rest, Cue::None),
            self.chinese(rest),
        ])
    }

    /// A closed range: a relative day or period, an "ago", a week of a day, or a date.
    fn date_like(&self, rest: &str, cue: Cue) -> Option<Parsed> {
        longest([
            self.relative_day(rest),
            self.calendar_period(rest),
            self.ago(rest),
            self.week_of(rest),
            self.weekday(rest),
            self.date(rest, cue),
            self.chinese_closed(rest),
        ])
    }

    /// "last Friday", "this past Sunday": the latest such day before the anchor's; "next
    /// Friday": the first after it. A bare "on Friday" could be either, and is left alone.
    fn weekday(&self, rest: &str) -> Option<Parsed> {
        static WEEKDAY: LazyLock<Regex> = LazyLock::new(|| {
            anchored(concat!(
                r"(?P<which>last|this\s+past|past|next)\s+",
                r"(?P<day>mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\b"
            ))
        });
        let caps = WEEKDAY.captures(rest)?;
        let wanted = match caps["day"].to_ascii_lowercase().get(..2)? {
            "mo" => jiff::civil::Weekday::Monday,
            "tu" => jiff::civil::Weekday::Tuesday,
            "we" => jiff::civil::Weekday::Wednesday,
            "th" => jiff::civil::Weekday::Thursday,
            "fr" => jiff::civil::Weekday::Friday,
            "sa" => jiff::civil::Weekday::Saturday,
            _ => jiff::civil::Weekday::Sunday,
        };
        let step: i64 = if caps["which"].eq_ignore_ascii_case("next") { 1 } else { -1 };
        let mut day = Unit::Day.shift(self.today, step)?;
        while day.weekday() != wanted {
            day = Unit::Day.shift(day, step)?;
        }
        Some(Parsed { len: caps[0].len(), range: day_range(day)? })
    }

    /// "in May", "during 2022", "on May 8", "from last summer": the date itself.
    fn with_preposition(&self, rest: &str) -> Option<Parsed> {
        static CUE: LazyLock<Regex> = LazyLock::new(|| anchored(r"(?P<word>in|during|throughout|from|on)\s+"));
        let caps = CUE.captures(rest)?;
        let cue = if caps["word"].eq_ignore_ascii_case("on") { Cue::On } else { Cue::Preposition };
        let offset = caps[0].len();
        Some(self.date_like(&rest[offset..], cue)?.after(offset))
    }

    /// "of 2023" ("photos of 2023"): a bare year only; "of May" is too often not a date.
    fn of_year(&self, rest: &str) -> Option<Parsed> {
        static OF_YEAR: LazyLock<Regex> = LazyLock::new(|| anchored(&format!(r"of\s+{YEAR}\b")));
        let caps = OF_YEAR.captures(rest)?;
        Some(Parsed { len: caps[0].len(), range: year_range(number(&caps, "year")?)? })
    }

    /// "before May 2023", "since last week", "until 2023": one end taken from a date.
    fn open_ended(&self, rest: &str) -> Option<Parsed> {
        static CUE: LazyLock<Regex> =
            LazyLock::new(|| anchored(r"(?P<word>before|after|since|until|till|prior\s+to)\s+"));
        let caps = CUE.captures(rest)?;
        let offset = caps[0].len();
        let date = self.date_like(&rest[offset..], Cue::Preposition)?;
        let TimeRange { start, end } = date.range;
        let word = caps["word"].to_ascii_lowercase();
        let range = match word.as_str() {
            "after" => TimeRange { start: end, end: None },
            "since" => TimeRange { start, end: None },
            "until" | "till" => TimeRange { start: None, end },
            _ => TimeRange { start: None, end: start }, // before, prior to
        };
        Some(Parsed { range, ..date.after(offset) })
    }

    /// "between 2021 and May 2022": from the start of the first to the end of the second.
    fn between(&self, rest: &str) -> Option<Parsed> {
        static BETWEEN: LazyLock<Regex> = LazyLock::new(|| anchored(r"between\s+"));
        static AND: LazyLock<Regex> = LazyLock::new(|| anchored(r"\s+and\s+"));
        self.span_between(rest, &BETWEEN, &AND)
    }

    /// "from May to July 2023", "from 2020 through 2022".
    fn span_from(&self, rest: &str) -> Option<Parsed> {
        static FROM: LazyLock<Regex> = LazyLock::new(|| anchored(r"from\s+"));
        static TO: LazyLock<Regex> = LazyLock::new(|| anchored(r"\s+(?:to|until|till|through|thru)\s+"));
        self.span_between(rest, &FROM, &TO)
    }

    fn span_between(&self, rest: &str, opening: &Regex, joint: &Regex) -> Option<Parsed> {
        let mut len = opening.find(rest)?.len();
        let first = self.date_like(&rest[len..], Cue::Preposition)?;
        len += first.len;
        len += joint.find(&rest[len..])?.len();
        let second = self.date_like(&rest[len..], Cue::Preposition)?;
        len += second.len;
        Some(Parsed { len, range: TimeRange { start: first.range.start, end: second.range.end } })
    }

    /// "today", "yesterday", "tonight", "the day before yesterday", ...
    fn relative_day(&self, rest: &str) -> Option<Parsed> {
        static DAY: LazyLock<Regex> = LazyLock::new(|| {
            anchored(concat!(
                r"(?:(?P<minus2>the\s+day\s+before\s+yesterday)",
                r"|(?P<plus2>the\s+day\s+after\s+tomorrow)",
                r"|(?P<today>today|tonight|this\s+(?:morning|afternoon|evening))",
                r"|(?P<minus1>yesterday|last\s+night)",
                r"|(?P<plus1>tomorrow))\b",
            ))
        });
        let caps = DAY.captures(rest)?;
        let offset = [("minus2", -2), ("plus2", 2), ("today", 0), ("minus1", -1), ("plus1", 1)]
            .into_iter()
            .find_map(|(group, days)| caps.name(group).map(|_| days))?;
        Some(Parsed { len: caps[0].len(), range: day_range(Unit::Day.shift(self.today, offset)?)? })
    }

    /// "this week", "last month", "next year", "last weekend".
    fn calendar_period(&self, rest: &str) -> Option<Parsed> {
        static PERIOD: LazyLock<Regex> =
            LazyLock::new(|| anchored(r"(?P<which>this|last|previous|next)\s+(?P<unit>weekend|week|month|year)\b"));
        let caps = PERIOD.captures(rest)?;
        let offset = match caps["which"].to_ascii_lowercase().as_str() {
            "this" => 0,
            "next" => 1,
            _ => -1,
        };
        let unit_word = caps["unit"].to_ascii_lowercase();
        let range = if unit_word == "weekend" {
            weekend_range(Unit::Week.shift(self.today, offset)?)?
        } else {
            let unit = Unit::parse(&unit_word)?;
            unit.period(unit.shift(self.today, offset)?)?
        };
        Some(Parsed { len: caps[0].len(), range })
    }

    /// "3 days ago", "a week ago", "a few days ago": the whole periods that far back.
    fn ago(&self, rest: &str) -> Option<Parsed> {
        static AGO: LazyLock<Regex> =
            LazyLock::new(|| anchored(&format!(r"(?P<count>{COUNT})\s+(?P<unit>{UNIT})s?\s+ago\b")));
        let caps = AGO.captures(rest)?;
        let unit = Unit::parse(&caps["unit"])?;
        let count = Count::parse(&caps["count"])?;
        let nearest = unit.period(unit.shift(self.today, count.fewest.checked_neg()?)?)?;
        let farthest = unit.period(unit.shift(self.today, count.most.checked_neg()?)?)?;
        Some(Parsed { len: caps[0].len(), range: TimeRange { start: farthest.start, end: nearest.end } })
    }

    /// "in the last 3 days", "over the past few weeks", "the past month": a window ending at the
    /// anchor. The article is required so that "in last week's meeting" stays a calendar week.
    fn rolling(&self, rest: &str) -> Option<Parsed> {
        static ROLLING: LazyLock<Regex> = LazyLock::new(|| {
            anchored(&format!(
                concat!(
                    r"(?:(?:in|during|over|within|for)\s+)?the\s+(?:last|past)\s+",
                    r"(?:(?P<count>{COUNT})\s+)?(?P<unit>{UNIT})(?P<plural>s)?\b"
                ),
                COUNT = COUNT,
                UNIT = UNIT
            ))
        });
        let caps = ROLLING.captures(rest)?;
        let unit = Unit::parse(&caps["unit"])?;
        // An unspecific count ("the past few days") takes its widest reading: better to look a
        // little too far back than to miss the memory asked about. Without a count the unit must be
        // singular ("the past week"): "in the last days of the war" is no window.
        let count = match caps.name("count") {
            Some(count) => Count::parse(count.as_str())?.most,
            None if caps.name("plural").is_none() => 1,
            None => return None,
        };
        let start = self.anchor.to_zoned_datetime(TimeZone::UTC).checked_sub(unit.span(count)?).ok()?.timestamp();
        Some(Parsed { len: caps[0].len(), range: TimeRange { start: Some(start), end: Some(self.anchor) } })
    }

    /// "the week of May 8, 2023": the ISO week containing a single day.
    fn week_of(&self, rest: &str) -> Option<Parsed> {
        static WEEK_OF: LazyLock<Regex> = LazyLock::new(|| anchored(r"(?:the\s+)?week\s+of\s+"));
        let offset = WEEK_OF.find(rest)?.len();
        // Only the plain date forms, not `date_like`, so that "week of week of ..." cannot recurse.
        let day = self.date(&rest[offset..], Cue::On)?;
        let first = TimeZone::UTC.to_datetime(day.range.start?).date();
        if day_range(first)? != day.range {
            return None;
        }
        Some(Parsed { range: week_range(first)?, ..day.after(offset) })
    }

    /// The date forms of [`DATE_FORMS`]; the longest that matches and reads.
    fn date(&self, rest: &str, cue: Cue) -> Option<Parsed> {
        longest(DATE_FORMS.iter().map(|form| {
            let caps = form.pattern.captures(rest)?;
            let whole = caps.get(0)?;
            let found = FormMatch { caps: &caps, cue, after: &rest[whole.end()..] };
            Some(Parsed { len: whole.len(), range: (form.read)(self, &found)? })
        }))
    }

    /// A date given without its year ("in May", "on the 8th of June") is the latest one that has
    /// begun by the anchor: asked in June 2023, "in May" is May 2023 and "in July" July 2022.
    /// Questions are mostly about the past, and a memory store holds no future.
    /// A memory, though, may speak of what is to come ("see you on May 20"): read for a
    /// statement ([`Reader::statement`]), such a date is the occurrence nearest the anchor.
    fn latest_begun(&self, build: impl Fn(i16) -> Option<TimeRange>) -> Option<TimeRange> {
        let year = self.today.year();
        if self.statement {
            return (year.checked_sub(1)?..=year.checked_add(1)?).filter_map(&build).min_by_key(|r| self.distance(r));
        }
        self.within_reach(|by| {
            let year = year_of(by);
            (0..=YEARLESS_LOOKBACK)
                .filter_map(|back| build(year.checked_sub(back)?))
                .find(|range| range.start.is_some_and(|start| start <= by))
        })
    }

    /// A question's date without its year or month: `latest_by(at)` is the latest begun by `at`.
    /// That by the anchor, unless the newest memory is too far behind it to hold it (see
    /// [`find_time_expression_knowing`]); then that by the newest memory.
    fn within_reach(&self, latest_by: impl Fn(Timestamp) -> Option<TimeRange>) -> Option<TimeRange> {
        let by_anchor = latest_by(self.anchor);
        let Some(newest) = self.newest else { return by_anchor };
        let reach = newest.checked_add(YEARLESS_REACH).unwrap_or(newest);
        match by_anchor {
            Some(range) if range.start.is_some_and(|start| start <= reach) => Some(range),
            _ => latest_by(newest).or(by_anchor),
        }
    }

    /// [`Reader::latest_begun`] for a date without its month ("on the 15th"): `build` makes the
    /// date in the month starting at its argument. A question takes the latest begun by the
    /// anchor (skipping months too short for the day); a statement the occurrence nearest it.
    fn latest_begun_month(&self, build: impl Fn(Date) -> Option<TimeRange>) -> Option<TimeRange> {
        let in_month = |base: Date, offset: i64| build(Unit::Month.shift(base, offset)?);
        if self.statement {
            return (-1..=1).filter_map(|offset| in_month(self.today, offset)).min_by_key(|r| self.distance(r));
        }
        self.within_reach(|by| {
            let base = TimeZone::UTC.to_datetime(by).date();
            (-2..=0).rev().filter_map(|offset| in_month(base, offset)).find(|r| r.start.is_some_and(|s| s <= by))
        })
    }

    /// How far `range` lies from the anchor: zero when it holds it.
    fn distance(&self, range: &TimeRange) -> jiff::SignedDuration {
        match (range.start, range.end) {
            (Some(start), _) if self.anchor < start => start.duration_since(self.anchor),
            (_, Some(end)) if end <= self.anchor => self.anchor.duration_since(end),
            _ => jiff::SignedDuration::ZERO,
        }
    }

    /// "last May": the latest that has ended; "this summer": the one under way, else this year's;
    /// "next June": the first that has not begun.
    fn occurrence(&self, which: &str, build: impl Fn(i16) -> Option<TimeRange>) -> Option<TimeRange> {
        let year = self.today.year();
        let mut around = (year.checked_sub(2)?..=year.checked_add(1)?).filter_map(build);
        match which {
            "last" | "previous" => around.rev().find(|r| r.end.is_some_and(|end| end <= self.anchor)),
            "next" => around.find(|r| r.start.is_some_and(|start| start > self.anchor)),
            _ => {
                let candidates: Vec<TimeRange> = around.collect();
                let under_way = candidates.iter().find(|r| r.contains(self.anchor));
                under_way.or_else(|| candidates.iter().find(|r| r.start.is_some_and(|s| year_of(s) == year))).copied()
            }
        }
    }
}

fn year_of(at: Timestamp) -> i16 {
    TimeZone::UTC.to_datetime(at).date().year()
}

// ---------------------------------------------------------------------------------------------
// Date forms
// ---------------------------------------------------------------------------------------------

/// Month names and their three-letter abbreviations (and "sept"), captured as `month`.
const MONTH: &str = concat!(
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?",
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
);
/// A day of the month, with an optional ordinal suffix. Larger numbers first, so "31" is not "3".
const DAY: &str = r"(?P<day>3[01]|[12][0-9]|0?[1-9])(?P<ordinal>st|nd|rd|th)?";
/// A year written in words' company: 1900..=2100, so "in 1500 words" or "in 9999" is no year.
const YEAR: &str = r"(?P<year>19[0-9]{2}|20[0-9]{2}|2100)";
const PART: &str = r"(?P<part>early|mid|late)";
const SEASON: &str = r"(?P<season>spring|summer|autumn|fall|winter)";
/// How many units: digits (at most nine, so the number fits any arithmetic), words, or vague.
const COUNT: &str = r"[0-9]{1,9}|a\s+few|a\s+couple(?:\s+of)?|couple(?:\s+of)?|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";
const UNIT: &str = r"day|week|month|year";

/// One way of writing a date: a pattern anchored at the start, and how to read a match.
struct DateForm {
    pattern: Regex,
    read: ReadForm,
}

type ReadForm = fn(&Reader, &FormMatch<'_>) -> Option<TimeRange>;

/// A date form's match: its captures, the cue before it and the text after it.
struct FormMatch<'a> {
    caps: &'a Captures<'a>,
    cue: Cue,
    after: &'a str,
}

impl FormMatch<'_> {
    fn has(&self, group: &str) -> bool {
        self.caps.name(group).is_some()
    }

    fn text(&self, group: &str) -> Option<String> {
        self.caps.name(group).map(|m| m.as_str().to_ascii_lowercase())
    }

    /// Whether the clause ends right after the match ("... on May 8?").
    fn ends_clause(&self) -> bool {
        self.after.trim_start().chars().next().is_none_or(|c| ".,;:!?)\"'".contains(c))
    }

    /// "May" and "March" are also a verb and a noun: without a year or a clear cue they must end
    /// the clause ("what did we do last May?"), so "the last may be first" is no date.
    fn month_word_is_clear(&self) -> bool {
        let ambiguous = self.text("month").is_some_and(|m| m == "may" || m == "march" || m == "mar");
        !ambiguous || self.has("year") || self.cue >= Cue::Preposition || self.ends_clause()
    }

    /// A day without a year ("May 8") is a date when something marks it as one: an ordinal, the cue
    /// "on", or the end of the clause. Otherwise "May 5 people come?" would be a date.
    fn day_is_clear(&self) -> bool {
        self.has("year") || self.has("ordinal") || self.cue >= Cue::On || self.ends_clause()
    }
}

static DATE_FORMS: LazyLock<Vec<DateForm>> = LazyLock::new(|| {
    let form = |pattern: String, read: ReadForm| DateForm { pattern: anchored(&format!(r"(?:{pattern})\b")), read };
    vec![
        form(r"(?P<iyear>[0-9]{4})-(?P<imonth>[0-9]{2})-(?P<iday>[0-9]{2})".into(), read_iso_day),
        form(r"(?P<iyear>[0-9]{4})-(?P<imonth>[0-9]{2})".into(), read_iso_month),
        form(format!(r"{MONTH}\s+{DAY}(?:,?\s+{YEAR})?"), read_day),
        form(format!(r"(?:the\s+)?{DAY}(?:\s+of)?\s+{MONTH}(?:,?\s+{YEAR})?"), read_day),
        form(format!(r"{MONTH},?\s+(?:of\s+)?{YEAR}"), read_month),
        form(format!(r"{PART}[\s-]+{MONTH}(?:,?\s+{YEAR})?"), read_part_of_month),
        form(format!(r"{PART}[\s-]+{YEAR}"), read_part_of_year),
        form(format!(r"(?:the\s+)?{SEASON}(?:\s+of)?,?\s+{YEAR}"), read_season),
        form(format!(r"(?P<which>last|previous|this|next)\s+(?:{MONTH}|{SEASON})"), read_occurrence),
        form(format!(r"the\s+{DAY}"), read_day_of_month),
        form(MONTH.into(), read_month),
        form(YEAR.into(), read_bare_year),
        form(format!(r"(?:the\s+)?{SEASON}"), read_season),
    ]
});

fn number<T: std::str::FromStr>(caps: &Captures<'_>, group: &str) -> Option<T> {
    caps.name(group)?.as_str().parse().ok()
}

fn read_iso_day(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    day_range(Date::new(number(m.caps, "iyear")?, number(m.caps, "imonth")?, number(m.caps, "iday")?).ok()?)
}

fn read_iso_month(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    months_range(number(m.caps, "iyear")?, number(m.caps, "imonth")?, 1)
}

/// "May 8, 2023", "8th May", "the 8th of May".
fn read_day(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    if !m.day_is_clear() {
        return None;
    }
    let month = month_number(&m.text("month")?)?;
    let day: i8 = number(m.caps, "day")?;
    let build = |year| day_range(Date::new(year, month, day).ok()?);
    match number(m.caps, "year") {
        Some(year) => build(year),
        None => reader.latest_begun(build),
    }
}

/// "on the 15th": a day of a month the speaker leaves unsaid, which is the month they are in or
/// next to. Only right after "on", with an ordinal, and as a whole phrase (the clause ends, or a
/// function word follows): "on the 3rd floor", "on the 2nd try" and "in the 19th century" are
/// no dates. A list or span of such days ("on the 15th and 16th", "on the 10th to the 20th")
/// is left unread rather than read as its first day, which would hide the others.
fn read_day_of_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    // Words that open the next phrase rather than name what is counted: conjunctions,
    // pronouns, prepositions and the words of another time ("on the 15th after my trip").
    const FOLLOWERS: &[&str] = &[
        "and", "at", "we", "i", "when", "with", "for", "to", "so", "but", "because", "or", "too", "as", "which",
        "after", "before", "since", "until", "in", "from", "then", "this",
    ];
    static ANOTHER_DAY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:and|or|to|through|till|until|-)\s*(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b").unwrap()
    });
    let next_word = m.after.split(|c: char| !c.is_alphanumeric()).find(|w| !w.is_empty());
    let whole_phrase = m.ends_clause() || next_word.is_some_and(|w| is_one_of(w, FOLLOWERS));
    if m.cue != Cue::On || !m.has("ordinal") || !whole_phrase || ANOTHER_DAY.is_match(m.after) {
        return None;
    }
    let day: i8 = number(m.caps, "day")?;
    reader.latest_begun_month(|first| day_range(Date::new(first.year(), first.month(), day).ok()?))
}

/// "May 2023", or a bare "May" after a preposition.
fn read_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let month = month_number(&m.text("month")?)?;
    let build = |year| months_range(year, month, 1);
    match number(m.caps, "year") {
        Some(year) => build(year),
        None if m.cue >= Cue::Preposition => reader.latest_begun(build),
        None => None,
    }
}

/// "early May", "mid-May 2023", "late May": thirds of the month (1–10, 11–20, 21–end).
fn read_part_of_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    if !m.month_word_is_clear() {
        return None;
    }
    let month = month_number(&m.text("month")?)?;
    let part = m.text("part")?;
    let build = |year| {
        let first = Date::new(year, month, 1).ok()?;
        let (from, to) = match part.as_str() {
            "early" => (first, Unit::Day.shift(first, 10)?),
            "mid" => (Unit::Day.shift(first, 10)?, Unit::Day.shift(first, 20)?),
            _ => (Unit::Day.shift(first, 20)?, Unit::Month.shift(first, 1)?),
        };
        dates_range(from, to)
    };
    match number(m.caps, "year") {
        Some(year) => build(year),
        None => reader.latest_begun(build),
    }
}

/// "early 2023" (Jan–Apr), "mid 2023" (May–Aug), "late 2023" (Sep–Dec).
fn read_part_of_year(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let first_month = match m.text("part")?.as_str() {
        "early" => 1,
        "mid" => 5,
        _ => 9,
    };
    months_range(number(m.caps, "year")?, first_month, 4)
}

/// "summer 2023", or "the summer" after a preposition.
fn read_season(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let season = m.text("season")?;
    let build = |year| season_range(&season, year);
    match number(m.caps, "year") {
        Some(year) => build(year),
        None if m.cue >= Cue::Preposition => reader.latest_begun(build),
        None => None,
    }
}

/// "last May", "this summer", "next June".
fn read_occurrence(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    if !m.month_word_is_clear() {
        return None;
    }
    let which = m.text("which")?;
    match (m.text("month"), m.text("season")) {
        (Some(month), _) => {
            let month = month_number(&month)?;
            reader.occurrence(&which, |year| months_range(year, month, 1))
        }
        (None, Some(season)) => reader.occurrence(&which, |year| season_range(&season, year)),
        (None, None) => None,
    }
}

/// "2023" alone is only a year after a preposition: "in 2023", not "2023 people".
fn read_bare_year(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    if m.cue < Cue::Preposition {
        return None;
    }
    year_range(number(m.caps, "year")?)
}

fn month_number(name: &str) -> Option<i8> {
    const ABBREVIATIONS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let abbreviation = name.get(..3)?;
    let index = ABBREVIATIONS.iter().position(|a| *a == abbreviation)?;
    i8::try_from(index + 1).ok()
}

/// Meteorological seasons, northern hemisphere. A winter belongs to the year of its December:
/// winter 2023 is December 2023 to February 2024.
fn season_range(season: &str, year: i16) -> Option<TimeRange> {
    let first_month = match season {
        "spring" => 3,
        "summer" => 6,
        "autumn" | "fall" => 9,
        _ => 12,
    };
    months_range(year, first_month, 3)
}

// ---------------------------------------------------------------------------------------------
// Relative words
// ---------------------------------------------------------------------------------------------

/// A calendar unit counted in "ago" and rolling windows.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    fn parse(word: &str) -> Option<Unit> {
        match word.to_ascii_lowercase().as_str() {
            "day" => Some(Unit::Day),
            "week" => Some(Unit::Week),
            "month" => Some(Unit::Month),
            "year" => Some(Unit::Year),
            _ => None,
        }
    }

    /// `count` of this unit, or None when jiff cannot represent that many.
    fn span(self, count: i64) -> Option<Span> {
        let span = Span::new();
        match self {
            Unit::Day => span.try_days(count),
            Unit::Week => span.try_weeks(count),
            Unit::Month => span.try_months(count),
            Unit::Year => span.try_years(count),
        }
        .ok()
    }

    /// A day inside the period `count` units from `date`'s. Months and years step from their first
    /// day, so that "a month before March 31" is in February rather than clamped to it by chance.
    fn shift(self, date: Date, count: i64) -> Option<Date> {
        let base = match self {
            Unit::Day | Unit::Week => date,
            Unit::Month => date.first_of_month(),
            Unit::Year => date.first_of_year(),
        };
        base.checked_add(self.span(count)?).ok()
    }

    /// The whole UTC day, ISO week, month or year containing `date`.
    fn period(self, date: Date) -> Option<TimeRange> {
        match self {
            Unit::Day => day_range(date),
            Unit::Week => week_range(date),
            Unit::Month => months_range(date.year(), date.month(), 1),
            Unit::Year => year_range(date.year()),
        }
    }
}

/// How many units back: one number, or a vague spread read as nearest and farthest.
#[derive(Debug, Clone, Copy)]
struct Count {
    fewest: i64,
    most: i64,
}

impl Count {
    fn parse(text: &str) -> Option<Count> {
        let lower = text.to_ascii_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        let exactly = |n| Some(Count { fewest: n, most: n });
        match words.as_slice() {
            // "a few days ago" is usually not yesterday and rarely more than a week.
            ["a", "few"] | ["few"] => Some(Count { fewest: 2, most: 7 }),
            ["a", "couple", ..] | ["couple", ..] => Some(Count { fewest: 2, most: 3 }),
            ["several"] => Some(Count { fewest: 3, most: 7 }),
            ["a" | "an" | "one"] => exactly(1),
            [word] => {
                const WORDS: [&str; 12] =
                    ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
                match WORDS.iter().position(|w| w == word) {
                    Some(index) => exactly(i64::try_from(index).ok()? + 1),
                    None => exactly(word.parse().ok()?),
                }
            }
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/// At most this many words of an event are kept: the event is a search phrase, not a sentence.
const MAX_EVENT_WORDS: usize = 8;

/// Words right before "before"/"after" that make it an adverb or part of a phrasal verb rather
/// than a preposition over an event: "ever before", "the day before", "look after the kids",
/// "named after her grandmother". "A week before the wedding" also lands here: it names a
/// shifted day, which a plain before/after range would misread, so it is better not read at all.
const NOT_EVENT_PRECEDING: &[&str] = &[
    "ever", "never", "the", "day", "days", "night", "nights", "week", "weeks", "month", "months", "year", "years",
    "morning", "evening", "time", "times", "than", "look", "looks", "looked", "looking", "take", "takes", "took",
    "taking", "named", "name", "run", "runs", "ran", "running", "chase", "chased", "went", "go", "goes", "come",
    "comes", "came", "seek", "sought",
];

/// First words that leave the event unknown: "before that", "after all", "after which".
const NOT_EVENT_START: &[&str] =
    &["that", "this", "then", "all", "which", "what", "whom", "whose", "and", "or", "but", "now"];

/// Whole events that are only a pronoun: "before it", "after you".
const NOT_EVENT_ALONE: &[&str] = &["it", "them", "him", "her", "me", "us", "you", "there", "here", "so"];

/// "before the move", "after she went to Paris": the relation, the phrase length, and the event
/// words up to the end of the clause.
fn event_at<'a>(preceding: &str, rest: &'a str) -> Option<(usize, Relation, &'a str)> {
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

fn is_one_of(word: &str, list: &[&str]) -> bool {
    list.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// The leading words of `text` up to the end of the clause ('?', ',', '.', ';', '!', ':' or a line
/// break) and at most [`MAX_EVENT_WORDS`] words, without surrounding whitespace.
fn event_words(text: &str) -> &str {
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

// ---------------------------------------------------------------------------------------------
// Calendar ranges (UTC)
// ---------------------------------------------------------------------------------------------

fn start_of(date: Date) -> Option<Timestamp> {
    TimeZone::UTC.to_timestamp(date.to_datetime(Time::midnight())).ok()
}

/// From the start of `first` to the start of `end` (exclusive).
fn dates_range(first: Date, end: Date) -> Option<TimeRange> {
    Some(TimeRange { start: Some(start_of(first)?), end: Some(start_of(end)?) })
}

fn day_range(date: Date) -> Option<TimeRange> {
    dates_range(date, date.tomorrow().ok()?)
}

/// The ISO week (Monday 00:00 to Monday 00:00) containing `date`.
fn week_range(date: Date) -> Option<TimeRange> {
    let monday = monday_of(date)?;
    dates_range(monday, Unit::Day.shift(monday, 7)?)
}

/// Saturday 00:00 to Monday 00:00 of the ISO week containing `date`.
fn weekend_range(date: Date) -> Option<TimeRange> {
    let monday = monday_of(date)?;
    dates_range(Unit::Day.shift(monday, 5)?, Unit::Day.shift(monday, 7)?)
}

fn monday_of(date: Date) -> Option<Date> {
    Unit::Day.shift(date, -i64::from(date.weekday().to_monday_zero_offset()))
}

/// `count` whole months from the first of `month` in `year`.
fn months_range(year: i16, month: i8, count: i64) -> Option<TimeRange> {
    let first = Date::new(year, month, 1).ok()?;
    dates_range(first, Unit::Month.shift(first, count)?)
}

fn year_range(year: i16) -> Option<TimeRange> {
    months_range(year, 1, 12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{proptest_config, timestamp};
    use proptest::prelude::*;

    /// (memory text, said at, [(phrase, start, end)]): what a memory mentions, resolved against
    /// the moment it was said. Anchors are fixed; the weekday of each is in its comment.
    #[test]
    fn mentions_in_memories_resolve_against_when_they_were_said() {
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str, &'a str)]);
        let cases: &[Case<'_>] = &[
            // Monday 8 May 2023.
            (
                "I went to a support group yesterday and it was so powerful.",
                "2023-05-08T13:56:00Z",
                &[("yesterday", "2023-05-07", "2023-05-08")],
            ),
            (
                "My mom and I made some dinner together last night!",
                "2023-05-08T15:18:00Z",
                &[("last night", "2023-05-07", "2023-05-08")],
            ),
            (
                "Dyed my hair last week - come see!",
                "2023-05-08T19:37:00Z",
                &[("last week", "2023-05-01", "2023-05-08")],
            ),
            (
                "My car broke down last Fri on my way to work.",
                "2023-05-08T10:00:00Z",
                &[("last Fri", "2023-05-05", "2023-05-06")],
            ),
            (
                "We went last weekend, and again three weeks ago.",
                "2023-05-08T10:00:00Z",
                &[("last weekend", "2023-05-06", "2023-05-08"), ("three weeks ago", "2023-04-17", "2023-04-24")],
            ),
            (
                "I'm stoked for my game there next month!",
                "2023-05-08T10:00:00Z",
                &[("next month", "2023-06-01", "2023-07-01")],
            ),
            (
                "See you next Sunday, or on May 20.",
                "2023-05-08T10:00:00Z",
                &[("next Sunday", "2023-05-14", "2023-05-15"), ("on May 20", "2023-05-20", "2023-05-21")],
            ),
            // Sunday 14 May 2023: "last Sunday" is a week back, never today.
            ("We met last Sunday.", "2023-05-14T10:00:00Z", &[("last Sunday", "2023-05-07", "2023-05-08")]),
            // Friday 20 January 2023: a date without a year is the one nearest when it was said.
            (
                "My colleagues and I went to a convention in November.",
                "2023-01-20T10:00:00Z",
                &[("in November", "2022-11-01", "2022-12-01")],
            ),
            ("We fly out in March.", "2023-01-20T10:00:00Z", &[("in March", "2023-03-01", "2023-04-01")]),
            // Thursday 17 August 2023: a day without its month is in the month nearest.
            (
                "I met back up with my teammates on the 15th after my trip.",
                "2023-08-17T10:00:00Z",
                &[("on the 15th", "2023-08-15", "2023-08-16")],
            ),
            (
                "The lease ends on the 2nd and we move.",
                "2023-08-29T10:00:00Z",
                &[("on the 2nd", "2023-09-02", "2023-09-03")],
            ),
            (
                "On the 30th we flew home, on the 31st of May we came.",
                "2023-02-10T10:00:00Z",
                &[("On the 30th", "2023-01-30", "2023-01-31"), ("on the 31st of May", "2023-05-31", "2023-06-01")],
            ),
            // An ordinal that counts something, or without "on", is no date.
            ("We got it on the 3rd try, on the 2nd floor, the 15th time.", "2023-08-17T10:00:00Z", &[]),
            // Nothing placed: open ranges, events, rolling windows, a bare weekday.
            ("I have been running since May and before the move.", "2023-05-08T10:00:00Z", &[]),
            ("Over the past few weeks I read a lot.", "2023-05-08T10:00:00Z", &[]),
            ("On Friday we talk.", "2023-05-08T10:00:00Z", &[]),
            ("I've had them for 3 years now.", "2023-05-08T10:00:00Z", &[]),
        ];
        for &(text, said_at, expected) in cases {
            let got: Vec<(String, TimeRange)> =
                find_time_mentions(text, at(said_at)).into_iter().map(|m| (m.phrase, m.range)).collect();
            let expected: Vec<(String, TimeRange)> =
                expected.iter().map(|&(phrase, start, end)| (phrase.to_owned(), range(start, end))).collect();
            assert_eq!(got, expected, "{text:?} said at {said_at}");
        }
    }

    #[test]
    fn calendar_terms_spell_days_and_months() {
        let day = range("2023-05-07", "2023-05-08");
        assert_eq!(calendar_terms(&day, false), ["t20230507", "t202305"]);
        assert_eq!(calendar_terms(&day, true), ["t20230507"]);
        // A week across a month's end touches both months.
        let week = range("2023-05-29", "2023-06-05");
        let terms = calendar_terms(&week, false);
        assert_eq!(terms.len(), 7 + 2);
        assert!(terms.contains(&"t20230604".to_owned()) && terms.contains(&"t202306".to_owned()));
        // A month is spelt as a month, both ways: a question about March finds "last month".
        assert_eq!(calendar_terms(&range("2023-03-01", "2023-04-01"), true), ["t202303"]);
        assert_eq!(calendar_terms(&range("2023-03-01", "2023-04-01"), false), ["t202303"]);
        // A year: months only, both ways.
        let year = calendar_terms(&range("2022-01-01", "2023-01-01"), true);
        assert_eq!(year.len(), 12);
        assert_eq!(year[0], "t202201");
        assert_eq!(calendar_terms(&range("2022-01-01", "2023-01-01"), false), year);
        // Too long, open, empty or inverted: nothing.
        assert!(calendar_terms(&range("2020-01-01", "2023-01-01"), false).is_empty());
        assert!(calendar_terms(&range("2023-05-07", ""), false).is_empty());
        assert!(calendar_terms(&range("2023-05-07", "2023-05-07"), false).is_empty());
        // Every term survives the analyzer whole.
        for term in calendar_terms(&week, false) {
            assert_eq!(crate::text::index_tokens(&term), std::slice::from_ref(&term));
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// A mention always lies in the range the question about its day asks for: the terms
        /// of a memory mentioning a day include the terms a question about that day searches.
        #[test]
        fn a_day_mentioned_is_found_by_a_question_about_that_day(said in timestamp(), back in 1i64..40) {
            let text = format!("It happened {back} days ago.");
            for mention in find_time_mentions(&text, said) {
                let memory = calendar_terms(&mention.range, false);
                let question = calendar_terms(&mention.range, true);
                prop_assert!(question.iter().all(|t| memory.contains(t)), "{memory:?} vs {question:?}");
            }
        }
    }

    /// Thursday, 15 June 2023, noon UTC.
    fn anchor() -> Timestamp {
        "2023-06-15T12:00:00Z".parse().unwrap()
    }

    fn at(text: &str) -> Timestamp {
        if text.len() == 10 { format!("{text}T00:00:00Z").parse().unwrap() } else { text.parse().unwrap() }
    }

    fn range(start: &str, end: &str) -> TimeRange {
        let end_of = |s: &str| (!s.is_empty()).then(|| at(s));
        TimeRange { start: end_of(start), end: end_of(end) }
    }

    fn found_range(question: &str) -> Option<(TimeRange, String)> {
        match find_time_expression(question, anchor())? {
            FoundTime { expression: TimeExpression::Range { range }, phrase } => Some((range, phrase)),
            other => panic!("{question:?}: expected a range, got {other:?}"),
        }
    }

    /// (question, phrase, start, end); "" is an open end.
    fn check(cases: &[(&str, &str, &str, &str)]) {
        for &(question, phrase, start, end) in cases {
            let got = found_range(question);
            let expected = (range(start, end), phrase.to_string());
            assert_eq!(
                got.as_ref(),
                Some(&expected),
                "{question:?}: got {:?}",
                got.as_ref().map(|(r, p)| (r.describe(), p))
            );
        }
    }

    #[test]
    fn relative_days() {
        check(&[
            ("what did I eat today?", "today", "2023-06-15", "2023-06-16"),
            ("Yesterday, who called?", "Yesterday", "2023-06-14", "2023-06-15"),
            ("what is planned for tomorrow", "tomorrow", "2023-06-16", "2023-06-17"),
            ("what did I read this morning", "this morning", "2023-06-15", "2023-06-16"),
            ("where are we going tonight", "tonight", "2023-06-15", "2023-06-16"),
            ("what did we watch last night", "last night", "2023-06-14", "2023-06-15"),
            ("who came the day before yesterday", "the day before yesterday", "2023-06-13", "2023-06-14"),
            ("what is due the day after tomorrow", "the day after tomorrow", "2023-06-17", "2023-06-18"),
        ]);
    }

    #[test]
    fn calendar_periods() {
        check(&[
            ("what happened this week", "this week", "2023-06-12", "2023-06-19"),
            ("what happened last week?", "last week", "2023-06-05", "2023-06-12"),
            ("plans for next week", "next week", "2023-06-19", "2023-06-26"),
            ("what did I buy this month", "this month", "2023-06-01", "2023-07-01"),
            ("what did I buy LAST MONTH", "LAST MONTH", "2023-05-01", "2023-06-01"),
            ("what did I buy the previous month", "previous month", "2023-05-01", "2023-06-01"),
            ("what is due next month", "next month", "2023-07-01", "2023-08-01"),
            ("goals this year", "this year", "2023-01-01", "2024-01-01"),
            ("goals last year", "last year", "2022-01-01", "2023-01-01"),
            ("goals next year", "next year", "2024-01-01", "2025-01-01"),
            ("what did we do last weekend", "last weekend", "2023-06-10", "2023-06-12"),
            ("plans this weekend?", "this weekend", "2023-06-17", "2023-06-19"),
            ("plans next weekend?", "next weekend", "2023-06-24", "2023-06-26"),
            ("what was said in last week's meeting", "in last week", "2023-06-05", "2023-06-12"),
        ]);
    }

    #[test]
    fn ago() {
        check(&[
            ("what happened 3 days ago", "3 days ago", "2023-06-12", "2023-06-13"),
            ("what happened three days ago", "three days ago", "2023-06-12", "2023-06-13"),
            ("one day ago", "one day ago", "2023-06-14", "2023-06-15"),
            ("a week ago, what did I say", "a week ago", "2023-06-05", "2023-06-12"),
            ("2 weeks ago", "2 weeks ago", "2023-05-29", "2023-06-05"),
            ("two months ago", "two months ago", "2023-04-01", "2023-05-01"),
            ("twelve months ago", "twelve months ago", "2022-06-01", "2022-07-01"),
            ("a year ago", "a year ago", "2022-01-01", "2023-01-01"),
            ("10 years ago", "10 years ago", "2013-01-01", "2014-01-01"),
            ("what did she say a few days ago", "a few days ago", "2023-06-08", "2023-06-14"),
            ("a couple of weeks ago", "a couple of weeks ago", "2023-05-22", "2023-06-05"),
            ("several months ago", "several months ago", "2022-11-01", "2023-04-01"),
        ]);
    }

    #[test]
    fn rolling_windows() {
        check(&[
            ("what did I do in the last 3 days", "in the last 3 days", "2023-06-12T12:00:00Z", "2023-06-15T12:00:00Z"),
            ("in the past two weeks?", "in the past two weeks", "2023-06-01T12:00:00Z", "2023-06-15T12:00:00Z"),
            ("over the past 6 months", "over the past 6 months", "2022-12-15T12:00:00Z", "2023-06-15T12:00:00Z"),
            ("the past year", "the past year", "2022-06-15T12:00:00Z", "2023-06-15T12:00:00Z"),
            ("during the last week", "during the last week", "2023-06-08T12:00:00Z", "2023-06-15T12:00:00Z"),
            ("within the last few days", "within the last few days", "2023-06-08T12:00:00Z", "2023-06-15T12:00:00Z"),
        ]);
    }

    #[test]
    fn months_and_days() {
        check(&[
            ("what happened May 2023", "May 2023", "2023-05-01", "2023-06-01"),
            ("what happened in May 2023?", "in May 2023", "2023-05-01", "2023-06-01"),
            ("in may, 2023", "in may, 2023", "2023-05-01", "2023-06-01"),
            ("trip in Sept 2021", "in Sept 2021", "2021-09-01", "2021-10-01"),
            ("who visited on May 8, 2023", "on May 8, 2023", "2023-05-08", "2023-05-09"),
            ("May 8, 2023", "May 8, 2023", "2023-05-08", "2023-05-09"),
            ("8 May 2023", "8 May 2023", "2023-05-08", "2023-05-09"),
            ("May 8th 2023 dinner", "May 8th 2023", "2023-05-08", "2023-05-09"),
            ("on 8 May, 2023?", "on 8 May, 2023", "2023-05-08", "2023-05-09"),
            ("the week of May 8, 2023", "the week of May 8, 2023", "2023-05-08", "2023-05-15"),
            ("during the week of 10 May 2023", "during the week of 10 May 2023", "2023-05-08", "2023-05-15"),
            // Without a year: the latest one already begun at the anchor.
            ("what did we do in May", "in May", "2023-05-01", "2023-06-01"),
            ("what did we do in July", "in July", "2022-07-01", "2022-08-01"),
            ("during dec", "during dec", "2022-12-01", "2023-01-01"),
            ("what happened on May 8 at work", "on May 8", "2023-05-08", "2023-05-09"),
            ("what happened May 8?", "May 8", "2023-05-08", "2023-05-09"),
            ("the 8th of May", "the 8th of May", "2023-05-08", "2023-05-09"),
            ("June 20th", "June 20th", "2022-06-20", "2022-06-21"),
            // Without its month: the latest begun, skipping months too short for the day.
            ("what did we do on the 15th?", "on the 15th", "2023-06-15", "2023-06-16"),
            ("who came on the 20th and stayed", "on the 20th", "2023-05-20", "2023-05-21"),
            ("on the 31st", "on the 31st", "2023-05-31", "2023-06-01"),
            ("early May 2023", "early May 2023", "2023-05-01", "2023-05-11"),
            ("in mid-May", "in mid-May", "2023-05-11", "2023-05-21"),
            ("late February 2024", "late February 2024", "2024-02-21", "2024-03-01"),
            ("what did we do last May?", "last May", "2023-05-01", "2023-06-01"),
            ("what did we do last April with Jane", "last April", "2023-04-01", "2023-05-01"),
            ("what is planned next July", "next July", "2023-07-01", "2023-08-01"),
        ]);
    }

    #[test]
    fn years_and_iso_dates() {
        check(&[
            ("what happened in 2023", "in 2023", "2023-01-01", "2024-01-01"),
            ("during 2022 what did we buy", "during 2022", "2022-01-01", "2023-01-01"),
            ("in early 2023", "in early 2023", "2023-01-01", "2023-05-01"),
            ("mid 2023", "mid 2023", "2023-05-01", "2023-09-01"),
            ("mid-2023", "mid-2023", "2023-05-01", "2023-09-01"),
            ("late 2023", "late 2023", "2023-09-01", "2024-01-01"),
            ("photos of 2021", "of 2021", "2021-01-01", "2022-01-01"),
            ("what happened on 2023-05-08?", "on 2023-05-08", "2023-05-08", "2023-05-09"),
            ("2023-05-08", "2023-05-08", "2023-05-08", "2023-05-09"),
            ("the 2023-05 report", "2023-05", "2023-05-01", "2023-06-01"),
        ]);
    }

    #[test]
    fn a_date_without_its_year_is_the_latest_the_memory_can_hold() {
        // Asked on 15 June 2023 of a store whose newest memory is from 20 October 2020: the
        // latest July begun by the anchor (2022) lies beyond what any memory can speak of.
        let newest = at("2020-10-20T09:00:00Z");
        let read = |question: &str, anchor: Timestamp, newest: Option<Timestamp>| match find_time_expression_knowing(
            question, anchor, newest,
        ) {
            Some(FoundTime { expression: TimeExpression::Range { range }, .. }) => range,
            other => panic!("{question:?}: no range: {other:?}"),
        };
        for (question, start, end) in [
            ("when did we go camping in July?", "2020-07-01", "2020-08-01"),
            ("what happened on Aug 15th", "2020-08-15", "2020-08-16"),
            ("who came in October", "2020-10-01", "2020-11-01"),
            ("in November", "2019-11-01", "2019-12-01"),
            ("during the summer", "2020-06-01", "2020-09-01"),
            // A day without its month: the latest begun by the newest memory.
            ("what did we do on the 25th?", "2020-09-25", "2020-09-26"),
            // A year, or a time relative to now, is what it says.
            ("in July 2022", "2022-07-01", "2022-08-01"),
            ("last week", "2023-06-05", "2023-06-12"),
        ] {
            assert_eq!(read(question, anchor(), Some(newest)), range(start, end), "{question:?}");
        }
        // Within a year of the newest memory, a memory may have planned it: asked on 2 July of
        // a store whose newest memory (28 June) says "Rome on July 20", July is this July.
        let asked = at("2023-07-02T00:00:00Z");
        assert_eq!(
            read("what are we doing in July?", asked, Some(at("2023-06-28"))),
            range("2023-07-01", "2023-08-01")
        );
        assert_eq!(read("in May", anchor(), Some(at("2022-12-01"))), range("2023-05-01", "2023-06-01"));
        // A store with newer memories than the anchor (an as_of in the past) changes nothing.
        assert_eq!(read("in July", anchor(), Some(at("2024-01-01"))), read("in July", anchor(), None));
        // February 29th is the latest there was, not none.
        assert_eq!(read("what happened on Feb 29?", anchor(), None), range("2020-02-29", "2020-03-01"));
        // Only a date without its year needs the newest memory looked up.
        for (question, depends) in
            [("in July", true), ("on the 3rd", true), ("last week", false), ("in July 2022", false)]
        {
            assert_eq!(depends_on_newest(question, anchor()), depends, "{question:?}");
        }
    }

    #[test]
    fn seasons() {
        check(&[
            ("summer 2023", "summer 2023", "2023-06-01", "2023-09-01"),
            ("in the summer of 2022", "in the summer of 2022", "2022-06-01", "2022-09-01"),
            ("winter 2022", "winter 2022", "2022-12-01", "2023-03-01"),
            ("fall 2021", "fall 2021", "2021-09-01", "2021-12-01"),
            ("in the spring", "in the spring", "2023-03-01", "2023-06-01"),
            ("in autumn", "in autumn", "2022-09-01", "2022-12-01"),
            ("what did we do last summer", "last summer", "2022-06-01", "2022-09-01"),
            ("this summer", "this summer", "2023-06-01", "2023-09-01"),
        ]);
    }

    #[test]
    fn open_ended_and_spans() {
        check(&[
            ("what did I do before May 2023", "before May 2023", "", "2023-05-01"),
            ("after May 2023", "after May 2023", "2023-06-01", ""),
            ("since May 2023", "since May 2023", "2023-05-01", ""),
            ("until 2023", "until 2023", "", "2024-01-01"),
            ("till yesterday", "till yesterday", "", "2023-06-15"),
            ("since last week", "since last week", "2023-06-05", ""),
            ("prior to 2020", "prior to 2020", "", "2020-01-01"),
            ("before the summer", "before the summer", "", "2023-06-01"),
            ("after the 8th of May", "after the 8th of May", "2023-05-09", ""),
            ("between 2021 and 2022", "between 2021 and 2022", "2021-01-01", "2023-01-01"),
            ("between May 2022 and March 2023", "between May 2022 and March 2023", "2022-05-01", "2023-04-01"),
            ("from March to May", "from March to May", "2023-03-01", "2023-06-01"),
            ("photos from 2019", "from 2019", "2019-01-01", "2020-01-01"),
        ]);
    }

    #[test]
    fn an_inverted_span_is_no_range() {
        // "from May to July 2022" reads May 2023 (no year given, latest begun) to July 2022: inverted,
        // so the span is dropped and the shorter "from May" wins.
        let (read, phrase) = found_range("from May to July 2022").unwrap();
        assert_eq!(phrase, "from May");
        assert_eq!(read, range("2023-05-01", "2023-06-01"));
    }

    #[test]
    fn events() {
        let cases: &[(&str, &str, Relation, &str)] = &[
            ("where did we live before the move?", "before the move", Relation::Before, "the move"),
            ("After the wedding, who visited?", "After the wedding", Relation::After, "the wedding"),
            (
                "what did I do before she went to Paris",
                "before she went to Paris",
                Relation::Before,
                "she went to Paris",
            ),
            ("after we met Jane", "after we met Jane", Relation::After, "we met Jane"),
            ("prior to   the  launch ;", "prior to   the  launch", Relation::Before, "the  launch"),
            (
                "before one two three four five six seven eight nine ten",
                "before one two three four five six seven eight",
                Relation::Before,
                "one two three four five six seven eight",
            ),
        ];
        for &(question, phrase, relation, event) in cases {
            let got = find_time_expression(question, anchor());
            let expected = FoundTime {
                expression: TimeExpression::RelativeToEvent { relation, event: event.to_string() },
                phrase: phrase.to_string(),
            };
            assert_eq!(got, Some(expected), "{question:?}");
        }
    }

    #[test]
    fn no_time_expression() {
        let questions = [
            "",
            "May I ask what you like?",
            // Ordinals that count, and lists or spans of days left unread rather than cut short.
            "what changed in the 19th century",
            "who lives on the 2nd and 3rd floors",
            "what did we do on the 15th and 16th?",
            "what did we do on the 2nd last try",
            "what did she say recently",
            "how many days did it take",
            "have you seen it ever before",
            "have we met before?",
            "what happened the day before the move",
            "a week before the wedding",
            "who will look after the kids",
            "she was named after her grandmother",
            "after all, what is it",
            "what did we do before that",
            "the last may be first",
            "May 5 people come?",
            "How early may I arrive?",
            "in the last days of the war",
            "in the past 999999999 years",
            "in 1500 words or less",
            "in the past, what did we do",
            "what is 2023 minus 5",
            "march on the capital",
            "999999999 days ago",
            "99999999999999999999 days ago",
            "2023-13-45",
            "9999-12-31",
            "ünïcödé 日本語 — ¿qué pasó?",
        ];
        for question in questions {
            let got = find_time_expression(question, anchor());
            assert_eq!(got, None, "{question:?}");
        }
    }

    #[test]
    fn earliest_expression_wins() {
        check(&[
            ("yesterday or last week?", "yesterday", "2023-06-14", "2023-06-15"),
            ("last week or yesterday?", "last week", "2023-06-05", "2023-06-12"),
        ]);
        let found = find_time_expression("after the move in May 2023", anchor()).unwrap();
        assert!(matches!(found.expression, TimeExpression::RelativeToEvent { .. }));
    }

    #[test]
    fn contains_is_half_open() {
        let may = range("2023-05-01", "2023-06-01");
        assert!(may.contains(at("2023-05-01")));
        assert!(may.contains(at("2023-05-31T23:59:59Z")));
        assert!(!may.contains(at("2023-06-01")));
        assert!(!may.contains(at("2023-04-30T23:59:59Z")));
        assert!(range("", "2023-06-01").contains(at("1970-01-01")));
        assert!(range("2023-06-01", "").contains(at("2099-01-01")));
    }

    #[test]
    fn describe_prints_dates_or_instants() {
        assert_eq!(range("2023-05-01", "2023-06-01").describe(), "2023-05-01..2023-06-01");
        assert_eq!(range("", "2023-05-01").describe(), "..2023-05-01");
        assert_eq!(range("2023-06-01", "").describe(), "2023-06-01..");
        assert_eq!(
            range("2023-06-12T12:00:00Z", "2023-06-15T12:00:00Z").describe(),
            "2023-06-12T12:00:00Z..2023-06-15T12:00:00Z"
        );
    }

    #[test]
    fn range_around_an_event() {
        let moved = at("2023-03-01");
        assert_eq!(Relation::Before.range_around(moved), range("", "2023-03-01"));
        assert_eq!(Relation::After.range_around(moved), range("2023-03-01", ""));
    }

    #[test]
    fn serializes_with_a_kind_tag() {
        let found = find_time_expression("in May 2023", anchor()).unwrap();
        let json = serde_json::to_value(&found).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "expression": {
                    "kind": "range",
                    "range": { "start": "2023-05-01T00:00:00Z", "end": "2023-06-01T00:00:00Z" }
                },
                "phrase": "in May 2023"
            })
        );
        let event = find_time_expression("before the move", anchor()).unwrap();
        assert_eq!(
            serde_json::to_value(&event.expression).unwrap(),
            serde_json::json!({ "kind": "relative_to_event", "relation": "before", "event": "the move" })
        );
    }

    fn assert_well_formed(found: &Option<FoundTime>) {
        if let Some(FoundTime { expression: TimeExpression::Range { range }, .. }) = found {
            assert!(range.is_well_formed(), "{range:?}");
            assert!(range.start.is_some() || range.end.is_some(), "{range:?}");
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn never_panics_on_any_text(question in any::<String>(), anchor in timestamp()) {
            assert_well_formed(&find_time_expression(&question, anchor));
        }

        #[test]
        fn never_panics_on_time_like_text(
            question in r"(?i)((in|on|before|after|since|until|between|and|from|to|the|of|last|this|next|early|mid|late|a|few|couple|ago|days?|weeks?|months?|years?|may|june|dec|summer|winter|today|yesterday|[0-9]{1,12}|-|,|\?) ?){0,10}",
            anchor in timestamp(),
        ) {
            assert_well_formed(&find_time_expression(&question, anchor));
        }

        #[test]
        fn anchor_relative_ranges_never_start_after_the_anchor(
            phrase in prop_oneof![
                Just("last week".to_string()),
                Just("last month".to_string()),
                Just("last weekend".to_string()),
                Just("this week".to_string()),
                Just("yesterday".to_string()),
                Just("a few days ago".to_string()),
                Just("in the last few weeks".to_string()),
                (0u32..5000, prop_oneof![Just("days"), Just("weeks"), Just("months"), Just("years")])
                    .prop_map(|(n, unit)| format!("{n} {unit} ago")),
            ],
            anchor in timestamp(),
        ) {
            let found = find_time_expression(&phrase, anchor);
            let Some(FoundTime { expression: TimeExpression::Range { range }, .. }) = found else {
                panic!("{phrase:?} should read as a range");
            };
            prop_assert!(range.start.is_some_and(|start| start <= anchor), "{phrase:?}: {range:?}");
            prop_assert!(range.is_well_formed());
        }
    }
}
