//! The daily view [design §daily]: what was remembered on one day, across every tree a caller
//! reads — a memory's time is its metadata, never where it is filed — and the day's
//! highlights, what to read first when picking work up again.
//!
//! - [`Day`]: a calendar date at a UTC offset (the reader's own day, not the server's), and the
//!   window of observation times it covers.
//! - [`highlights`]: decisions, tasks and constraints first (what was settled and what is left
//!   to do), then by salience, then the latest (where the day left off).

use jiff::civil::{Date, Time};
use jiff::tz::{Offset, TimeZone};
use serde::Serialize;

use crate::model::{MemoryKind, Salience};
use crate::time::{Timestamp, is_storable};

/// How many highlights a day shows: a glance, not a second listing.
pub const HIGHLIGHTS: usize = 5;

/// Kinds that say what was settled or what is left to do: read first when resuming.
pub const ACTION_KINDS: [MemoryKind; 3] = [MemoryKind::Decision, MemoryKind::Task, MemoryKind::Constraint];

/// One calendar day as its reader lives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Day {
    pub date: Date,
    /// The reader's offset from UTC; the day runs from midnight to midnight there.
    #[serde(serialize_with = "offset_text")]
    pub utc_offset: Offset,
}

fn offset_text<S: serde::Serializer>(offset: &Offset, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&offset_string(*offset))
}

/// `+08:00`, `-05:30`, `+00:00`.
pub fn offset_string(offset: Offset) -> String {
    let seconds = offset.seconds();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

impl Day {
    /// `date` (`2026-05-08`) at `utc_offset` (`+08:00`, `-0530`, `Z`; UTC when absent).
    pub fn parse(date: &str, utc_offset: Option<&str>) -> Result<Day, String> {
        let not_a_date = || format!("{date:?} is not a date: write it as YYYY-MM-DD, e.g. 2026-05-08");
        let shaped = date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
        if !shaped {
            return Err(not_a_date());
        }
        let date: Date = date.parse().map_err(|_| not_a_date())?;
        let utc_offset = match utc_offset {
            None => Offset::UTC,
            Some(text) => parse_offset(text)?,
        };
        let day = Day { date, utc_offset };
        day.window().ok_or_else(|| format!("{date} is outside the dates a store holds (1678 to 2261)"))?;
        Ok(day)
    }

    /// The day a reader asks for: `date` at `utc_offset` (UTC when absent), or without a date
    /// the day `now` falls on there.
    pub fn asked(date: Option<&str>, utc_offset: Option<&str>, now: Timestamp) -> Result<Day, String> {
        match date {
            Some(date) => Day::parse(date, utc_offset),
            None => Ok(Day::containing(now, utc_offset.map(parse_offset).transpose()?.unwrap_or(Offset::UTC))),
        }
    }

    /// The day `at` falls on, at `utc_offset`.
    pub fn containing(at: Timestamp, utc_offset: Offset) -> Day {
        Day { date: utc_offset.to_datetime(at).date(), utc_offset }
    }

    /// The observation times the day covers, both ends included: its midnight, and the last
    /// instant before the next. `None` for a day outside what a store can hold.
    pub fn window(&self) -> Option<(Timestamp, Timestamp)> {
        let zone = TimeZone::fixed(self.utc_offset);
        let start = zone.to_timestamp(self.date.to_datetime(Time::midnight())).ok()?;
        let next = zone.to_timestamp(self.date.tomorrow().ok()?.to_datetime(Time::midnight())).ok()?;
        let end = next.checked_sub(jiff::SignedDuration::from_nanos(1)).ok()?;
        (is_storable(start) && is_storable(end)).then_some((start, end))
    }
}

/// A UTC offset as people write it: `+08:00`, `-0530`, `Z` or `UTC` (exactly these shapes,
/// which the API's schema states: `[+-]HH[:]MM` from -12:00 to +14:00, `Z`, `z`, `UTC`, `utc`).
pub fn parse_offset(text: &str) -> Result<Offset, String> {
    let wrong = || format!("{text:?} is not a UTC offset: write it as +08:00, -05:30 or Z");
    if matches!(text, "Z" | "z" | "UTC" | "utc") {
        return Ok(Offset::UTC);
    }
    let (sign, rest) = match text.split_at_checked(1) {
        Some(("+", rest)) => (1, rest),
        Some(("-", rest)) => (-1, rest),
        _ => return Err(wrong()),
    };
    // `HH:MM` or `HHMM`, nothing else.
    let digits: String = match rest.split_once(':') {
        Some((hours, minutes)) if hours.len() == 2 && minutes.len() == 2 => format!("{hours}{minutes}"),
        Some(_) => return Err(wrong()),
        None => rest.to_owned(),
    };
    if digits.len() != 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(wrong());
    }
    let hours: i32 = digits[..2].parse().map_err(|_| wrong())?;
    let minutes: i32 = digits[2..].parse().map_err(|_| wrong())?;
    // Real offsets run from -12:00 to +14:00.
    if hours > 14 || minutes > 59 || (sign < 0 && hours > 12) {
        return Err(wrong());
    }
    Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).map_err(|_| wrong())
}

/// What [`highlights`] reads of a memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noted {
    pub kind: MemoryKind,
    pub salience: Salience,
    pub observed_at: Timestamp,
}

/// The positions in `memories` of the day's highlights, at most `count`, best first: action
/// kinds ([`ACTION_KINDS`]) first, then higher salience, then the latest said; ties by
/// position, so the same day always gives the same highlights.
pub fn highlights(memories: &[Noted], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..memories.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&memories[a], &memories[b]);
        let action = |n: &Noted| ACTION_KINDS.contains(&n.kind);
        action(y)
            .cmp(&action(x))
            .then_with(|| y.salience.get().total_cmp(&x.salience.get()))
            .then_with(|| y.observed_at.cmp(&x.observed_at))
            .then_with(|| a.cmp(&b))
    });
    order.truncate(count);
    order
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::model::Confidence;
    use crate::testkit::proptest_config;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_day_runs_midnight_to_midnight_at_the_readers_offset() {
        let utc = Day::parse("2026-05-08", None).unwrap();
        assert_eq!(utc.window(), Some((at("2026-05-08T00:00:00Z"), at("2026-05-08T23:59:59.999999999Z"))));
        let shanghai = Day::parse("2026-05-08", Some("+08:00")).unwrap();
        assert_eq!(shanghai.window().unwrap().0, at("2026-05-07T16:00:00Z"));
        let new_york = Day::parse("2026-05-08", Some("-0400")).unwrap();
        assert_eq!(new_york.window().unwrap().0, at("2026-05-08T04:00:00Z"));
        assert_eq!(Day::parse("2026-05-08", Some("+05:30")).unwrap().utc_offset.seconds(), 5 * 3600 + 1800);
        assert_eq!(Day::parse("2026-05-08", Some("Z")).unwrap(), utc);
        assert_eq!(offset_string(shanghai.utc_offset), "+08:00");
        assert_eq!(offset_string(Day::parse("2026-05-08", Some("-09:30")).unwrap().utc_offset), "-09:30");
        // A leap day, and the day a message said just before midnight in Shanghai falls on.
        assert!(Day::parse("2028-02-29", None).is_ok());
        let late = at("2026-05-08T15:59:00Z");
        assert_eq!(Day::containing(late, shanghai.utc_offset), shanghai);
        assert_eq!(Day::containing(late, Offset::UTC), utc);
        assert_eq!(Day::asked(None, Some("+08:00"), late), Ok(shanghai));
        assert_eq!(Day::asked(None, None, late), Ok(utc));
        assert_eq!(Day::asked(Some("2026-05-08"), Some("+08:00"), at("2030-01-01T00:00:00Z")), Ok(shanghai));
        assert!(Day::asked(None, Some("+99:00"), late).is_err());
    }

    #[test]
    fn bad_dates_and_offsets_are_clear_errors() {
        for (date, offset) in [
            ("2026-02-30", None),
            ("08/05/2026", None),
            ("yesterday", None),
            ("", None),
            ("9999-01-01", None),
            ("2026-05-08", Some("8")),
            ("2026-05-08", Some("+8")),
            ("2026-05-08", Some("+25:00")),
            ("2026-05-08", Some("-13:00")),
            ("2026-05-08", Some("+08:60")),
            ("2026-05-08", Some("Asia/Shanghai")),
            ("2026-05-08", Some("+0８:00")),
            ("2026-05-08", Some("+0:800")),
            ("2026-05-08", Some("+08:0")),
            ("2026-05-08", Some("+08:00:00")),
            (" 2026-05-08", None),
            ("20260508", None),
            ("2026-05-08", Some(" +08:00")),
            ("2026-05-08", Some("Utc")),
        ] {
            let error = Day::parse(date, offset).unwrap_err();
            assert!(error.contains("YYYY-MM-DD") || error.contains("UTC offset") || error.contains("1678"), "{error}");
        }
    }

    #[test]
    fn decisions_and_tasks_come_first_then_salience_then_the_latest() {
        let noted = |kind, salience: f32, hour: i64| Noted {
            kind,
            salience: Confidence::saturating(salience),
            observed_at: Timestamp::from_second(1_778_198_400 + hour * 3600).unwrap(),
        };
        let day = [
            noted(MemoryKind::Fact, 0.9, 1),
            noted(MemoryKind::Event, 0.5, 2),
            noted(MemoryKind::Task, 0.4, 3),
            noted(MemoryKind::Decision, 0.7, 4),
            noted(MemoryKind::Event, 0.5, 5),
            noted(MemoryKind::Preference, 0.2, 6),
        ];
        assert_eq!(highlights(&day, 4), [3, 2, 0, 4]);
        assert_eq!(highlights(&day, 0), Vec::<usize>::new());
        assert_eq!(highlights(&[], 5), Vec::<usize>::new());
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Every instant lies in exactly the day `containing` names, at any offset.
        #[test]
        fn every_instant_is_in_its_own_day(second in 0i64..4_000_000_000, minutes in -720i32..=840) {
            let offset = Offset::from_seconds(minutes * 60).unwrap();
            let instant = Timestamp::from_second(second).unwrap();
            let day = Day::containing(instant, offset);
            let (start, end) = day.window().unwrap();
            prop_assert!(start <= instant && instant <= end);
            let next = Day { date: day.date.tomorrow().unwrap(), utc_offset: offset };
            prop_assert!(next.window().unwrap().0 > end);
        }

        /// Highlights are distinct positions, at most as many as asked.
        #[test]
        fn highlights_are_a_bounded_choice(saliences in proptest::collection::vec(0.0f32..1.0, 0..20), count in 0usize..8) {
            let day: Vec<Noted> = saliences
                .iter()
                .enumerate()
                .map(|(i, s)| Noted {
                    kind: MemoryKind::ALL[i % MemoryKind::ALL.len()],
                    salience: Confidence::saturating(*s),
                    observed_at: Timestamp::from_second(i as i64).unwrap(),
                })
                .collect();
            let chosen = highlights(&day, count);
            prop_assert_eq!(chosen.len(), count.min(day.len()));
            let mut unique = chosen.clone();
            unique.sort_unstable();
            unique.dedup();
            prop_assert_eq!(unique.len(), chosen.len());
        }
    }
}
