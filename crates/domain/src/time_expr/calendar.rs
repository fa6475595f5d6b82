//! Calendar ranges in UTC: a day, an ISO week, a weekend, months, a year.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;

use super::TimeRange;
use super::units::Unit;
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
