//! How a full-text index spells a time range, so a question finds memories by the days and
//! months they mention.

use jiff::tz::TimeZone;

use super::TimeRange;
use super::calendar::Unit;
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
