//! Comparing two values of one attribute: whether "the Izmir branch" and "Izmir" name one
//! place, "10am" and "10:00" one time, "Neovim" and "IntelliJ" two editors.
//!
//! A value is reduced to its terms: times, days and dates to canonical tokens (`t10:00`,
//! `d3` for Wednesday, `m6-3` for June 3rd), amounts to their number, words lowercased and
//! stemmed, less the words that say what kind of value it is rather than which ("branch",
//! "office", "plan", "the", "new"). Two values are the same when one's terms hold the other's
//! (the more specific says no more than the general: "Amsterdam Noord" is in Amsterdam), and
//! different when they share none. Sharing some but not all is [`ValueMatch::Partly`]: not proof
//! of a change, which is only ever flagged.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::lexicon::english::{self, MONTHS};
use crate::text::stem;

/// How two values of one attribute compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueMatch {
    /// One names what the other names, or more precisely.
    Same,
    /// Nothing in common: two values.
    Different,
    /// Something in common, something not.
    Partly,
    /// One of them has no terms to compare (a value of only generic words).
    Unknown,
}

/// Whether `a` and `b` are the same value.
pub fn compare(a: &str, b: &str) -> ValueMatch {
    let (x, y) = (terms(a), terms(b));
    if x.is_empty() || y.is_empty() {
        return ValueMatch::Unknown;
    }
    // Times and days are compared part by part: "Friday at 3pm" and "Friday at 2pm" differ,
    // though they share a day; "Fridays" and "Friday at 3pm" do not.
    let part = |set: &BTreeSet<String>, prefix: char| -> BTreeSet<String> {
        set.iter()
            .filter(|t| t.starts_with(prefix) && t[1..].starts_with(|c: char| c.is_ascii_digit()))
            .cloned()
            .collect()
    };
    // Amounts too: "200,000 dollars" and "150,000 dollars" differ though both are dollars.
    let numbers = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter().filter(|t| t.starts_with(|c: char| c.is_ascii_digit())).cloned().collect()
    };
    let (nx, ny) = (numbers(&x), numbers(&y));
    if !nx.is_empty() && !ny.is_empty() && nx.is_disjoint(&ny) {
        return ValueMatch::Different;
    }
    for prefix in ['t', 'd', 'm'] {
        let (px, py) = (part(&x, prefix), part(&y, prefix));
        if !px.is_empty() && !py.is_empty() && px.is_disjoint(&py) {
            return ValueMatch::Different;
        }
    }
    if x.is_subset(&y) || y.is_subset(&x) {
        ValueMatch::Same
    } else if x.is_disjoint(&y) {
        ValueMatch::Different
    } else {
        ValueMatch::Partly
    }
}

/// A value's terms (see the module docs).
pub fn terms(value: &str) -> BTreeSet<String> {
    let lower = value.to_lowercase().replace(['’', '‘'], "'");
    let mut out = BTreeSet::new();
    if crate::han::has_han(&lower) {
        return chinese_terms(&lower);
    }
    let mut rest = lower.clone();
    // Times of day: "10am", "10 a.m.", "10:30", "3:15pm", "noon".
    for found in TIME.captures_iter(&lower) {
        let hour: u32 = found.name("h").or(found.name("h2")).and_then(|h| h.as_str().parse().ok()).unwrap_or(0);
        let minute: u32 = found.name("m").or(found.name("m2")).and_then(|m| m.as_str().parse().ok()).unwrap_or(0);
        let meridiem = found.name("ap").map(|m| m.as_str().starts_with('p'));
        let hour = match meridiem {
            Some(true) if hour < 12 => hour + 12,
            Some(false) if hour == 12 => 0,
            _ => hour,
        };
        if hour < 24 && minute < 60 {
            out.insert(format!("t{hour:02}:{minute:02}"));
        }
        rest = rest.replace(&found[0], " ");
    }
    if lower.contains("noon") {
        out.insert("t12:00".to_owned());
    }
    if lower.contains("midnight") {
        out.insert("t00:00".to_owned());
    }
    // Dates: "June 3", "3 June", "June 3rd", "the 14th".
    for found in MONTH_DAY.captures_iter(&lower) {
        let month = found.name("m1").or(found.name("m2")).map(|m| month_number(m.as_str())).unwrap_or(0);
        let day: u32 = found.name("d1").or(found.name("d2")).and_then(|d| d.as_str().parse().ok()).unwrap_or(0);
        if month > 0 && (1..=31).contains(&day) {
            out.insert(format!("m{month}-{day}"));
            rest = rest.replace(&found[0], " ");
        }
    }
    for found in ORDINAL_DAY.captures_iter(&rest.clone()) {
        if let Ok(day) = found["d"].parse::<u32>()
            && (1..=31).contains(&day)
        {
            out.insert(format!("m?-{day}"));
            rest = rest.replace(&found[0], " ");
        }
    }
    // Amounts: "$1,400" and "1400" are one number.
    for word in rest.split(|c: char| c.is_whitespace() || c == '/' || c == '(' || c == ')') {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '.' | '@' | '+' | '#'));
        let word = word.trim_end_matches('.');
        if word.is_empty() {
            continue;
        }
        if let Some(day) = weekday(word) {
            out.insert(format!("d{day}"));
            continue;
        }
        if let Some(month) =
            MONTHS.iter().position(|m| *m == word || (word.len() >= 3 && m.starts_with(word) && word.len() <= m.len()))
            && word.len() >= 3
        {
            out.insert(format!("m{}", month + 1));
            continue;
        }
        let number: String = word.chars().filter(|c| *c != ',').collect();
        if number.starts_with(['$', '€', '£', '¥']) || number.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let digits = number.trim_start_matches(['$', '€', '£', '¥']);
            out.insert(digits.trim_start_matches('v').to_owned());
            continue;
        }
        // "v2.3" is version 2.3.
        if let Some(version) = word.strip_prefix('v').filter(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
            out.insert(version.to_owned());
            continue;
        }
        for part in word.split(['-', '\'']) {
            if part.is_empty() || GENERIC.contains(&part) || crate::text::is_stopword(part) {
                continue;
            }
            let canonical = SYNONYMS.iter().find(|(from, _)| *from == part).map_or(part, |(_, to)| to);
            if let Some(value) = english::number_word(canonical) {
                out.insert(value.to_string());
                continue;
            }
            out.insert(stem(canonical).into_owned());
        }
    }
    out
}

fn chinese_terms(value: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for found in TIME.captures_iter(value) {
        let hour: u32 = found.name("h").or(found.name("h2")).and_then(|h| h.as_str().parse().ok()).unwrap_or(0);
        let minute: u32 = found.name("m").or(found.name("m2")).and_then(|m| m.as_str().parse().ok()).unwrap_or(0);
        out.insert(format!("t{hour:02}:{minute:02}"));
    }
    for word in crate::han::content_words(&crate::han::words(value)) {
        if CHINESE_GENERIC.contains(&word.as_str()) {
            continue;
        }
        out.insert(word);
    }
    out
}

/// Words that say what kind of value a value is, not which one.
/// (Determiners and pronouns are stopwords, which the comparison drops as well.)
const GENERIC: &[&str] = &[
    // A company's legal form says what kind of organisation it is: "Acme Inc." is Acme. ("Co"
    // is left out: "Co-op" and "Co. Cork" would lose their word.)
    "inc",
    "llc",
    "ltd",
    "corp",
    "corporation",
    "gmbh",
    "plc",
    "new",
    "old",
    "current",
    "branch",
    "office",
    "site",
    "campus",
    "location",
    "hq",
    "headquarters",
    "city",
    "town",
    "place",
    "area",
    "team",
    "squad",
    "group",
    "department",
    "dept",
    "plan",
    "tier",
    "subscription",
    "package",
    "version",
    "release",
    "company",
    "firm",
    "startup",
    "job",
    "role",
    "position",
    "full",
    "time",
    "fulltime",
    "part",
    "at",
    "in",
    "on",
    "to",
    "of",
    "for",
    "with",
    "now",
    "still",
    "currently",
    "officially",
    "basically",
    "mostly",
    "just",
    "pretty",
    "very",
    "really",
    "super",
    "apartment",
    "flat",
    "house",
    "home",
    "one",
    "ones",
    "kind",
    "sort",
    "type",
    "model",
    "brand",
    "thing",
    "stuff",
    "every",
    "each",
    "week",
    "weeks",
    "weekly",
    "am",
    "pm",
    "o'clock",
    "oclock",
    "around",
    "about",
    "ish",
    "sharp",
    "local",
];

const CHINESE_GENERIC: &[&str] = &[
    "新",
    "旧",
    "现在",
    "目前",
    "公司",
    "分公司",
    "办公室",
    "城市",
    "套餐",
    "版本",
    "那边",
    "这边",
    "一家",
    "一个",
    "一台",
    "一辆",
    "一部",
];

/// Spellings of one thing.
const SYNONYMS: &[(&str, &str)] = &[
    ("nvim", "neovim"),
    ("vscode", "vs code"),
    ("mom", "mother"),
    ("mum", "mother"),
    ("dad", "father"),
    ("smoker", "smoke"),
    ("smokes", "smoke"),
    ("smoking", "smoke"),
    ("vaping", "vape"),
    ("vapes", "vape"),
    ("coffee", "coffee"),
    ("caffeine", "coffee"),
    ("postgresql", "postgres"),
    ("golang", "go"),
    ("mongo", "mongodb"),
    ("k8s", "kubernetes"),
];

fn month_number(word: &str) -> u32 {
    MONTHS.iter().position(|m| m.starts_with(&word[..word.len().min(3)])).map_or(0, |at| at as u32 + 1)
}

/// The day of the week a word names (Monday is 1), plural or abbreviated.
fn weekday(word: &str) -> Option<u32> {
    english::weekday_number(word)
}

static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s?(?P<ap>a\.?m\.?|p\.?m\.?)|\b(?P<h2>\d{1,2})[:.](?P<m2>\d{2})\b",
    )
    .expect("time pattern compiles")
});

static MONTH_DAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?P<m1>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?\b|\b(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b",
    )
    .expect("date pattern compiles")
});

static ORDINAL_DAY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bthe\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b").expect("ordinal pattern compiles"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_by_what_they_name() {
        for (a, b, expected) in [
            ("the Izmir branch", "Izmir", ValueMatch::Same),
            ("the Ankara branch", "the Izmir branch", ValueMatch::Different),
            ("10am", "10:00", ValueMatch::Same),
            ("9:30", "10", ValueMatch::Different),
            ("Fridays at 3pm", "Friday 2pm", ValueMatch::Different),
            ("Fridays", "Friday at 3pm", ValueMatch::Same),
            ("June 3", "3rd of June", ValueMatch::Same),
            ("June 3", "June 17", ValueMatch::Different),
            ("$1,400", "1400 a month", ValueMatch::Same),
            ("Neovim", "IntelliJ", ValueMatch::Different),
            ("nvim", "Neovim", ValueMatch::Same),
            ("senior designer", "designer", ValueMatch::Same),
            ("the new one", "the old one", ValueMatch::Unknown),
            ("Amsterdam Noord", "Amsterdam", ValueMatch::Same),
            ("product designer", "senior engineer", ValueMatch::Different),
            ("杭州", "上海", ValueMatch::Different),
        ] {
            assert_eq!(compare(a, b), expected, "{a:?} against {b:?}");
        }
    }
}
