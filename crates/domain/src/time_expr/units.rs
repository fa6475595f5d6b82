//! Relative words: the calendar units and the counts of "ago" and rolling windows.

use jiff::Span;
use jiff::civil::Date;

use super::TimeRange;
use super::calendar::{day_range, months_range, week_range, year_range};
/// A calendar unit counted in "ago" and rolling windows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unit {
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    pub(super) fn parse(word: &str) -> Option<Unit> {
        match word.to_ascii_lowercase().as_str() {
            "day" => Some(Unit::Day),
            "week" => Some(Unit::Week),
            "month" => Some(Unit::Month),
            "year" => Some(Unit::Year),
            _ => None,
        }
    }

    /// `count` of this unit, or None when jiff cannot represent that many.
    pub(super) fn span(self, count: i64) -> Option<Span> {
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
    pub(super) fn shift(self, date: Date, count: i64) -> Option<Date> {
        let base = match self {
            Unit::Day | Unit::Week => date,
            Unit::Month => date.first_of_month(),
            Unit::Year => date.first_of_year(),
        };
        base.checked_add(self.span(count)?).ok()
    }

    /// The whole UTC day, ISO week, month or year containing `date`.
    pub(super) fn period(self, date: Date) -> Option<TimeRange> {
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
pub(super) struct Count {
    pub(super) fewest: i64,
    pub(super) most: i64,
}

impl Count {
    pub(super) fn parse(text: &str) -> Option<Count> {
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
