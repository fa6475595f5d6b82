//! How the [`Reader`] reads: every form tried at one place, relative to its anchor.

use std::sync::LazyLock;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use regex::Regex;

use super::Reader;
use super::calendar::Unit;
use super::calendar::{day_range, week_range, weekend_range, year_range};
use super::counts::Count;
use super::events::event_at;
use super::forms::{COUNT, DATE_FORMS, FormMatch, UNIT, YEAR, number};
use super::scan::{Cue, Parsed, anchored, longest};
use super::words::HanWords;
use super::{FoundTime, TimeExpression, TimeRange, YEARLESS_LOOKBACK, YEARLESS_REACH};
use crate::time::Timestamp;

impl Reader {
    pub(super) fn new(anchor: Timestamp) -> Reader {
        let today = TimeZone::UTC.to_datetime(anchor).date();
        Reader { anchor, statement: false, today, newest: None, words: HanWords::default() }
    }

    /// The expression starting exactly at the start of `rest`; `preceding` is the text before it.
    pub(super) fn read_at(&self, preceding: &str, rest: &str) -> Option<FoundTime> {
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
    pub(super) fn range_at(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn date_like(&self, rest: &str, cue: Cue) -> Option<Parsed> {
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
    pub(super) fn weekday(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn with_preposition(&self, rest: &str) -> Option<Parsed> {
        static CUE: LazyLock<Regex> = LazyLock::new(|| anchored(r"(?P<word>in|during|throughout|from|on)\s+"));
        let caps = CUE.captures(rest)?;
        let cue = if caps["word"].eq_ignore_ascii_case("on") { Cue::On } else { Cue::Preposition };
        let offset = caps[0].len();
        Some(self.date_like(&rest[offset..], cue)?.after(offset))
    }

    /// "of 2023" ("photos of 2023"): a bare year only; "of May" is too often not a date.
    pub(super) fn of_year(&self, rest: &str) -> Option<Parsed> {
        static OF_YEAR: LazyLock<Regex> = LazyLock::new(|| anchored(&format!(r"of\s+{YEAR}\b")));
        let caps = OF_YEAR.captures(rest)?;
        Some(Parsed { len: caps[0].len(), range: year_range(number(&caps, "year")?)? })
    }

    /// "before May 2023", "since last week", "until 2023": one end taken from a date.
    pub(super) fn open_ended(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn between(&self, rest: &str) -> Option<Parsed> {
        static BETWEEN: LazyLock<Regex> = LazyLock::new(|| anchored(r"between\s+"));
        static AND: LazyLock<Regex> = LazyLock::new(|| anchored(r"\s+and\s+"));
        self.span_between(rest, &BETWEEN, &AND)
    }

    /// "from May to July 2023", "from 2020 through 2022".
    pub(super) fn span_from(&self, rest: &str) -> Option<Parsed> {
        static FROM: LazyLock<Regex> = LazyLock::new(|| anchored(r"from\s+"));
        static TO: LazyLock<Regex> = LazyLock::new(|| anchored(r"\s+(?:to|until|till|through|thru)\s+"));
        self.span_between(rest, &FROM, &TO)
    }

    pub(super) fn span_between(&self, rest: &str, opening: &Regex, joint: &Regex) -> Option<Parsed> {
        let mut len = opening.find(rest)?.len();
        let first = self.date_like(&rest[len..], Cue::Preposition)?;
        len += first.len;
        len += joint.find(&rest[len..])?.len();
        let second = self.date_like(&rest[len..], Cue::Preposition)?;
        len += second.len;
        Some(Parsed { len, range: TimeRange { start: first.range.start, end: second.range.end } })
    }

    /// "today", "yesterday", "tonight", "the day before yesterday", ...
    pub(super) fn relative_day(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn calendar_period(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn ago(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn rolling(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn week_of(&self, rest: &str) -> Option<Parsed> {
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
    pub(super) fn date(&self, rest: &str, cue: Cue) -> Option<Parsed> {
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
    pub(super) fn latest_begun(&self, build: impl Fn(i16) -> Option<TimeRange>) -> Option<TimeRange> {
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
    pub(super) fn within_reach(&self, latest_by: impl Fn(Timestamp) -> Option<TimeRange>) -> Option<TimeRange> {
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
    pub(super) fn latest_begun_month(&self, build: impl Fn(Date) -> Option<TimeRange>) -> Option<TimeRange> {
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
    pub(super) fn distance(&self, range: &TimeRange) -> jiff::SignedDuration {
        match (range.start, range.end) {
            (Some(start), _) if self.anchor < start => start.duration_since(self.anchor),
            (_, Some(end)) if end <= self.anchor => self.anchor.duration_since(end),
            _ => jiff::SignedDuration::ZERO,
        }
    }

    /// "last May": the latest that has ended; "this summer": the one under way, else this year's;
    /// "next June": the first that has not begun.
    pub(super) fn occurrence(&self, which: &str, build: impl Fn(i16) -> Option<TimeRange>) -> Option<TimeRange> {
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

pub(super) fn year_of(at: Timestamp) -> i16 {
    TimeZone::UTC.to_datetime(at).date().year()
}
