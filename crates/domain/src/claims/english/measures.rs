//! Measures a predicate states: a time or a date, an amount of money, a version or a quantity
//! ("the eye test is 2 Oct 11:20", "the window cleaner is £18", "Mochi is 4.2kg"), each the
//! attribute its kind of value names.

use std::sync::LazyLock;

use regex::Regex;

use crate::claims::Subject;

use super::values::{MONEY, QUANTITY, TIME_ANYWHERE, TIMEISH, VERSION_ANYWHERE, dropped_words, value_of};
use super::verb_forms::{ADVERBS, Class};
use super::{Found, claim};
use crate::claims::Polarity::Holds;

/// A thing stated with a measure: a time or a date ("the eye test is 2 Oct 11:20"), an amount
/// of money ("the window cleaner is £18"), a version, a quantity ("Mochi is 4.2kg"). A thing
/// has one of each at a time: a new one replaces the old.
pub(super) fn measure_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    let Some(captures) = MEASURE_PREDICATE.captures(predicate) else { return };
    let Some(raw) = captures.name("v") else { return };
    let Some(value) = value_of(raw.as_str(), Class::Any) else { return };
    // The measure opens the value ("is 200,000 dollars"), not something said before it
    // ("slipped two weeks").
    if !value.trim_start().starts_with(|c: char| c.is_ascii_digit() || "$£€¥".contains(c))
        && !TIMEISH.is_match(&value.to_ascii_lowercase())
        && !NUMBER_WORD_START.is_match(&value.to_ascii_lowercase())
    {
        return;
    }
    let Some(attribute) = measure_attribute(&value) else { return };
    found.dropped += dropped_words(raw.as_str(), &value);
    found.push((claim(subject, attribute, Some(value), Holds), None));
}

pub(super) static NUMBER_WORD_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty|a dozen|a hundred|every|each|once|twice)\b")
        .expect("number word pattern compiles")
});

pub(super) static MEASURE_PREDICATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)^{ADVERBS}(?:is|'s|are|was|will be|costs?|runs|comes to|went (?:up|down) to|rose to|fell to|dropped to|increased to|jumped to|changed to|moved to|switched to|is set (?:to|at|for)|set to|at|@|due|is due|are due|expires?|ends|starts|weighs|weigh-in|weighed in at|is on|on|requires|require|needs|need|takes|allows|is capped at|caps at|is limited to|holds|seats|has|have)?\s*(?:at|on|for|in|to)?\s*(?P<v>.+)$"))
        .expect("measure predicate compiles")
});

/// Which attribute a measure fills: `when` for a time or a date, `price` for money, `version`,
/// `amount` for any other quantity with a unit; `None` for a value that is no measure.
pub(super) fn measure_attribute(value: &str) -> Option<&'static str> {
    let lower = value.to_lowercase();
    if MONEY.is_match(&lower) {
        return Some("price");
    }
    if VERSION_ANYWHERE.is_match(&lower) {
        return Some("version");
    }
    if TIME_ANYWHERE.is_match(&lower) {
        return Some("when");
    }
    if QUANTITY.is_match(&lower) {
        return Some("amount");
    }
    None
}
