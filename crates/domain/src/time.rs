//! Bi-temporal validity: when a fact is true in the world (`Validity`) and when the store treated
//! it as current (`KnownSpan`), plus the `as_of` selection rules built on them.
//!
//! Two clocks, on purpose [design §validity]:
//! - *valid time* (`valid_from`, `valid_to`): "the project targets an August release" was true
//!   until the team moved it to September. Queries with `as_of` select by valid time.
//! - *known time* (`known_from`, `known_until`): when Arbor started and stopped treating a leaf
//!   as the current version. Frozen experiment snapshots [design §experiments] select by known time, so a run
//!   keeps seeing what its experiment saw at start even after later corrections.

use serde::{Deserialize, Serialize};

/// An instant, UTC, nanosecond precision. Re-exported so every crate names the same type.
pub type Timestamp = jiff::Timestamp;

/// The earliest instant Arbor stores: 1678-01-01T00:00:00Z. Stores keep instants as signed
/// 64-bit nanoseconds since the Unix epoch (1677-09-21 to 2262-04-11); the range is cut to
/// whole years inside that, so it reads as a rule rather than an overflow.
pub const EARLIEST_STORABLE_SECOND: i64 = -9_214_560_000;
/// The first instant after the range Arbor stores: 2262-01-01T00:00:00Z.
pub const END_OF_STORABLE_SECOND: i64 = 9_214_646_400;

/// Whether every store can hold `at` ([`EARLIEST_STORABLE_SECOND`] up to, not including,
/// [`END_OF_STORABLE_SECOND`]). Inbound instants outside it are refused when an event is
/// validated, so no store ever meets one.
pub fn is_storable(at: Timestamp) -> bool {
    const NANOS: i128 = 1_000_000_000;
    let range = i128::from(EARLIEST_STORABLE_SECOND) * NANOS..i128::from(END_OF_STORABLE_SECOND) * NANOS;
    range.contains(&at.as_nanosecond())
}

/// The storable range as people read it, for error messages.
pub const STORABLE_RANGE: &str = "1678-01-01 to 2261-12-31";

/// Parses an RFC 3339 instant as a caller wrote it, wording an instant too far out for any
/// calendar library (year 9999, say) as the range rule, like any other instant outside
/// [`STORABLE_RANGE`], instead of as the library's arithmetic overflow. In range of the
/// library but not of the stores (year 1500) parses: [`parse_storable_instant`] refuses that too.
pub fn parse_instant(text: &str) -> Result<Timestamp, String> {
    text.parse::<Timestamp>().map_err(|error| {
        let year = text.trim_start_matches(['+', '-']).split('-').next().and_then(|y| y.parse::<i64>().ok());
        match year {
            Some(year) if !(1678..=2261).contains(&year) || text.starts_with('-') => {
                format!("{text:?} is outside the range of instants Arbor stores ({STORABLE_RANGE})")
            }
            _ => format!("{text:?} is not an RFC 3339 instant: {error}"),
        }
    })
}

/// [`parse_instant`], refusing what no store holds: for instants a request names directly
/// (`as_of`, `observed_at`), where no later validation would.
pub fn parse_storable_instant(text: &str) -> Result<Timestamp, String> {
    let at = parse_instant(text)?;
    if !is_storable(at) {
        return Err(format!("{text:?} is outside the range of instants Arbor stores ({STORABLE_RANGE})"));
    }
    Ok(at)
}

/// Reads an optional instant (`#[serde(deserialize_with = "…")]`) with [`parse_instant`].
/// Whether it is storable is judged when the event is validated, which names the field.
pub fn deserialize_optional_instant<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Timestamp>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else { return Ok(None) };
    parse_instant(&text).map(Some).map_err(serde::de::Error::custom)
}

/// A validity interval in valid time: `[valid_from, valid_to)`, either end open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Validity {
    pub valid_from: Option<Timestamp>,
    pub valid_to: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("valid_to ({valid_to}) must be after valid_from ({valid_from})")]
pub struct InvalidInterval {
    pub valid_from: Timestamp,
    pub valid_to: Timestamp,
}

impl Validity {
    /// Always valid.
    pub const ALWAYS: Validity = Validity { valid_from: None, valid_to: None };

    pub fn new(valid_from: Option<Timestamp>, valid_to: Option<Timestamp>) -> Result<Validity, InvalidInterval> {
        if let (Some(from), Some(to)) = (valid_from, valid_to)
            && to <= from
        {
            return Err(InvalidInterval { valid_from: from, valid_to: to });
        }
        Ok(Validity { valid_from, valid_to })
    }

    /// An interval read back from storage. Unlike [`Validity::new`] it accepts an empty
    /// interval (`valid_to == valid_from`), which supersession produces for a fact replaced at
    /// the very instant it became valid; it still refuses an inverted one.
    pub fn stored(valid_from: Option<Timestamp>, valid_to: Option<Timestamp>) -> Result<Validity, InvalidInterval> {
        if let (Some(from), Some(to)) = (valid_from, valid_to)
            && to < from
        {
            return Err(InvalidInterval { valid_from: from, valid_to: to });
        }
        Ok(Validity { valid_from, valid_to })
    }

    /// Valid from `from` on, with no end.
    pub fn starting(from: Timestamp) -> Validity {
        Validity { valid_from: Some(from), valid_to: None }
    }

    /// Whether the fact holds at `at` (start inclusive, end exclusive).
    pub fn contains(&self, at: Timestamp) -> bool {
        self.valid_from.is_none_or(|from| from <= at) && self.valid_to.is_none_or(|to| at < to)
    }

    /// The interval closed at `end`, as supersession does to the leaf it replaces. An end before
    /// the start collapses to an empty interval at the start (the old fact was never valid in
    /// valid time), rather than producing an inverted interval.
    #[must_use]
    pub fn ended_at(&self, end: Timestamp) -> Validity {
        let end = match self.valid_from {
            Some(from) if end < from => from,
            _ => end,
        };
        let end = match self.valid_to {
            Some(existing) if existing < end => existing,
            _ => end,
        };
        Validity { valid_from: self.valid_from, valid_to: Some(end) }
    }

    /// Whether `[valid_from, valid_to)` meets `[start, end]` (both inclusive, either open).
    pub fn overlaps(&self, start: Option<Timestamp>, end: Option<Timestamp>) -> bool {
        let starts_before_end = match (self.valid_from, end) {
            (Some(from), Some(end)) => from <= end,
            _ => true,
        };
        let ends_after_start = match (self.valid_to, start) {
            (Some(to), Some(start)) => to > start,
            _ => true,
        };
        starts_before_end && ends_after_start
    }
}

/// The span of known time during which the store treated a leaf as current.
///
/// `known_from` is set when the leaf becomes active (at creation when auto-approved, at
/// confirmation for a candidate); `known_until` when it stops being current (superseded,
/// archived, forgotten). A leaf that was never active has neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KnownSpan {
    pub known_from: Option<Timestamp>,
    pub known_until: Option<Timestamp>,
}

impl KnownSpan {
    pub const NEVER: KnownSpan = KnownSpan { known_from: None, known_until: None };

    pub fn from(at: Timestamp) -> KnownSpan {
        KnownSpan { known_from: Some(at), known_until: None }
    }

    /// Whether the leaf was the current version at known time `at`.
    pub fn was_current_at(&self, at: Timestamp) -> bool {
        match self.known_from {
            Some(from) => from <= at && self.known_until.is_none_or(|until| at < until),
            None => false,
        }
    }

    #[must_use]
    pub fn closed_at(&self, at: Timestamp) -> KnownSpan {
        KnownSpan { known_from: self.known_from, known_until: self.known_until.or(Some(at)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{proptest_config, timestamp};
    use proptest::prelude::*;

    #[test]
    fn the_storable_range_is_whole_years_inside_i64_nanoseconds() {
        let first = Timestamp::from_second(EARLIEST_STORABLE_SECOND).unwrap();
        let end = Timestamp::from_second(END_OF_STORABLE_SECOND).unwrap();
        assert_eq!(first.to_string(), "1678-01-01T00:00:00Z");
        assert_eq!(end.to_string(), "2262-01-01T00:00:00Z");
        assert!(is_storable(first) && !is_storable(end));
        assert!(!is_storable(first - jiff::SignedDuration::from_nanos(1)));
        assert!(is_storable(end - jiff::SignedDuration::from_nanos(1)));
        for at in [first, end - jiff::SignedDuration::from_nanos(1)] {
            assert!(i64::try_from(at.as_nanosecond()).is_ok(), "{at} fits a store's i64 nanoseconds");
        }
    }

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn interval_is_half_open() {
        let v = Validity::new(Some(ts(10)), Some(ts(20))).unwrap();
        assert!(!v.contains(ts(9)));
        assert!(v.contains(ts(10)));
        assert!(v.contains(ts(19)));
        assert!(!v.contains(ts(20)));
        assert!(Validity::new(Some(ts(20)), Some(ts(20))).is_err());
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Ending an interval never produces an inverted one and never extends it.
        #[test]
        fn ending_never_inverts_or_extends(from in proptest::option::of(timestamp()),
                                           to in proptest::option::of(timestamp()),
                                           end in timestamp(),
                                           probe in timestamp()) {
            let Ok(v) = Validity::new(from, to) else { return Ok(()) };
            let ended = v.ended_at(end);
            if let (Some(f), Some(t)) = (ended.valid_from, ended.valid_to) {
                prop_assert!(f <= t);
            }
            // Anything valid after ending was valid before.
            if ended.contains(probe) {
                prop_assert!(v.contains(probe));
            }
            prop_assert!(!ended.contains(end) || ended.valid_to.is_none());
        }

        /// A closed known span is current at exactly the instants between its ends.
        #[test]
        fn known_span_bounds(from in timestamp(), until in timestamp(), probe in timestamp()) {
            let span = KnownSpan::from(from).closed_at(until);
            prop_assert_eq!(span.was_current_at(probe), from <= probe && probe < until);
            prop_assert!(!KnownSpan::NEVER.was_current_at(probe));
        }
    }
}
