//! Calendar units and ranges in UTC: a day, an ISO week, a weekend, months, a year, and a unit
//! counted in "ago" and rolling windows.

use jiff::Span;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;

use super::TimeRange;
use crate::time::Timestamp;
pub(super) fn start_of(date: Date) -> Option<Timestamp> {
    TimeZone::UTC.to_timestamp(date.to_datetime(Time::midnight())).ok()
}

/// From the start of `first` to the start of `end` (exclusive).
pub(super) fn dates_range(first: Date, end: Date) -> Option<TimeRange> {
    Some(TimeRange { start: Some(start_of(first)?), end: Some(start_of(end)?) })
}

pub(super) fn day_range(date: Date) -> Option<TimeRange> {
    dates_range(date, date.tomorrow().ok()?)
}

/// The ISO week (Monday 00:00 to Monday 00:00) containing `date`.
pub(super) fn week_range(date: Date) -> Option<TimeRange> {
    let monday = monday_of(date)?;
    dates_range(monday, Unit::Day.shift(monday, 7)?)
}

/// Saturday 00:00 to Monday 00:00 of the ISO week containing `date`.
pub(super) fn weekend_range(date: Date) -> Option<TimeRange> {
    let monday = monday_of(date)?;
    dates_range(Unit::Day.shift(monday, 5)?, Unit::Day.shift(monday, 7)?)
}

pub(super) fn monday_of(date: Date) -> Option<Date> {
    Unit::Day.shift(date, -i64::from(date.weekday().to_monday_zero_offset()))
}

/// `count` whole months from the first of `month` in `year`.
pub(super) fn months_range(year: i16, month: i8, count: i64) -> Option<TimeRange> {
    let first = Date::new(year, month, 1).ok()?;
    dates_range(first, Unit::Month.shift(first, count)?)
}

pub(super) fn year_range(year: i16) -> Option<TimeRange> {
    months_range(year, 1, 12)
}

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
