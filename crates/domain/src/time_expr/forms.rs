//! Date forms: the patterns for months, days, years, parts and seasons, and what each reads as.

use std::sync::LazyLock;

use jiff::civil::Date;
use regex::{Captures, Regex};

use super::Reader;
use super::TimeRange;
use super::calendar::Unit;
use super::calendar::{dates_range, day_range, months_range, year_range};
use super::events::is_one_of;
use super::scan::{Cue, anchored};
/// Month names and their three-letter abbreviations (and "sept"), captured as `month`.
pub(super) const MONTH: &str = concat!(
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?",
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
);
/// A day of the month, with an optional ordinal suffix. Larger numbers first, so "31" is not "3".
pub(super) const DAY: &str = r"(?P<day>3[01]|[12][0-9]|0?[1-9])(?P<ordinal>st|nd|rd|th)?";
/// A year written in words' company: 1900..=2100, so "in 1500 words" or "in 9999" is no year.
pub(super) const YEAR: &str = r"(?P<year>19[0-9]{2}|20[0-9]{2}|2100)";
pub(super) const PART: &str = r"(?P<part>early|mid|late)";
pub(super) const SEASON: &str = r"(?P<season>spring|summer|autumn|fall|winter)";
/// How many units: digits (at most nine, so the number fits any arithmetic), words, or vague.
pub(super) const COUNT: &str = r"[0-9]{1,9}|a\s+few|a\s+couple(?:\s+of)?|couple(?:\s+of)?|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";
pub(super) const UNIT: &str = r"day|week|month|year";

/// One way of writing a date: a pattern anchored at the start, and how to read a match.
pub(super) struct DateForm {
    pub(super) pattern: Regex,
    pub(super) read: ReadForm,
}

type ReadForm = fn(&Reader, &FormMatch<'_>) -> Option<TimeRange>;

/// A date form's match: its captures, the cue before it and the text after it.
pub(super) struct FormMatch<'a> {
    pub(super) caps: &'a Captures<'a>,
    pub(super) cue: Cue,
    pub(super) after: &'a str,
}

impl FormMatch<'_> {
    pub(super) fn has(&self, group: &str) -> bool {
        self.caps.name(group).is_some()
    }

    pub(super) fn text(&self, group: &str) -> Option<String> {
        self.caps.name(group).map(|m| m.as_str().to_ascii_lowercase())
    }

    /// Whether the clause ends right after the match ("... on May 8?").
    pub(super) fn ends_clause(&self) -> bool {
        self.after.trim_start().chars().next().is_none_or(|c| ".,;:!?)\"'".contains(c))
    }

    /// "May" and "March" are also a verb and a noun: without a year or a clear cue they must end
    /// the clause ("what did we do last May?"), so "the last may be first" is no date.
    pub(super) fn month_word_is_clear(&self) -> bool {
        let ambiguous = self.text("month").is_some_and(|m| m == "may" || m == "march" || m == "mar");
        !ambiguous || self.has("year") || self.cue >= Cue::Preposition || self.ends_clause()
    }

    /// A day without a year ("May 8") is a date when something marks it as one: an ordinal, the cue
    /// "on", or the end of the clause. Otherwise "May 5 people come?" would be a date.
    pub(super) fn day_is_clear(&self) -> bool {
        self.has("year") || self.has("ordinal") || self.cue >= Cue::On || self.ends_clause()
    }
}

pub(super) static DATE_FORMS: LazyLock<Vec<DateForm>> = LazyLock::new(|| {
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

pub(super) fn number<T: std::str::FromStr>(caps: &Captures<'_>, group: &str) -> Option<T> {
    caps.name(group)?.as_str().parse().ok()
}

pub(super) fn read_iso_day(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    day_range(Date::new(number(m.caps, "iyear")?, number(m.caps, "imonth")?, number(m.caps, "iday")?).ok()?)
}

pub(super) fn read_iso_month(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    months_range(number(m.caps, "iyear")?, number(m.caps, "imonth")?, 1)
}

/// "May 8, 2023", "8th May", "the 8th of May".
pub(super) fn read_day(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
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
pub(super) fn read_day_of_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
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
pub(super) fn read_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let month = month_number(&m.text("month")?)?;
    let build = |year| months_range(year, month, 1);
    match number(m.caps, "year") {
        Some(year) => build(year),
        None if m.cue >= Cue::Preposition => reader.latest_begun(build),
        None => None,
    }
}

/// "early May", "mid-May 2023", "late May": thirds of the month (1–10, 11–20, 21–end).
pub(super) fn read_part_of_month(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
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
pub(super) fn read_part_of_year(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let first_month = match m.text("part")?.as_str() {
        "early" => 1,
        "mid" => 5,
        _ => 9,
    };
    months_range(number(m.caps, "year")?, first_month, 4)
}

/// "summer 2023", or "the summer" after a preposition.
pub(super) fn read_season(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    let season = m.text("season")?;
    let build = |year| season_range(&season, year);
    match number(m.caps, "year") {
        Some(year) => build(year),
        None if m.cue >= Cue::Preposition => reader.latest_begun(build),
        None => None,
    }
}

/// "last May", "this summer", "next June".
pub(super) fn read_occurrence(reader: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
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
pub(super) fn read_bare_year(_: &Reader, m: &FormMatch<'_>) -> Option<TimeRange> {
    if m.cue < Cue::Preposition {
        return None;
    }
    year_range(number(m.caps, "year")?)
}

pub(super) fn month_number(name: &str) -> Option<i8> {
    const ABBREVIATIONS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let abbreviation = name.get(..3)?;
    let index = ABBREVIATIONS.iter().position(|a| *a == abbreviation)?;
    i8::try_from(index + 1).ok()
}

/// Meteorological seasons, northern hemisphere. A winter belongs to the year of its December:
/// winter 2023 is December 2023 to February 2024.
pub(super) fn season_range(season: &str, year: i16) -> Option<TimeRange> {
    let first_month = match season {
        "spring" => 3,
        "summer" => 6,
        "autumn" | "fall" => 9,
        _ => 12,
    };
    months_range(year, first_month, 3)
}
