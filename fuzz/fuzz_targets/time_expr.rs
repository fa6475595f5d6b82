//! Fuzz target: a question's words read for a time expression ("last week", "in May 2023",
//! "since March"), relative to instants across the storable range. Never a panic, and a range
//! found is ordered.
#![no_main]

use arbor_domain::time_expr::{TimeExpression, find_time_expression};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, rest)) = input.split_first() else { return };
    let Ok(question) = std::str::from_utf8(rest) else { return };
    // Anchors from the edges of what a store holds to ordinary days.
    let anchors = [-9_214_560_000i64, -1, 0, 1_780_000_000, 9_214_646_399];
    let anchor = jiff::Timestamp::from_second(anchors[usize::from(selector) % anchors.len()]).unwrap();
    if let Some(found) = find_time_expression(question, anchor)
        && let TimeExpression::Range { range } = found.expression
        && let (Some(start), Some(end)) = (range.start, range.end)
    {
        assert!(start <= end, "{question:?} at {anchor}: {start} after {end}");
    }
});
