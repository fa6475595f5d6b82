//! The attribute slots a fact fills (where someone lives, works, who manages them, …), the patterns
//! that name each, and which slots hold one value at a time.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// A slot a fact fills. `strong` slots are named by their own words (an address, a manager);
/// the others are value types (a time of day, a date, a cadence) that only break ties, because
/// two different facts about one person easily both hold a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribute {
    Residence,
    Address,
    Work,
    Manager,
    Phone,
    Car,
    Diet,
    Relationship,
    Children,
    Schooling,
    TimeOfDay,
    Date,
    Cadence,
}

impl Attribute {
    pub fn as_str(self) -> &'static str {
        match self {
            Attribute::Residence => "residence",
            Attribute::Address => "address",
            Attribute::Work => "work",
            Attribute::Manager => "manager",
            Attribute::Phone => "phone",
            Attribute::Car => "car",
            Attribute::Diet => "diet",
            Attribute::Relationship => "relationship",
            Attribute::Children => "children",
            Attribute::Schooling => "schooling",
            Attribute::TimeOfDay => "time of day",
            Attribute::Date => "date",
            Attribute::Cadence => "cadence",
        }
    }

    /// Named by its own words, so sharing it is evidence of speaking of the same thing.
    pub(super) fn is_strong(self) -> bool {
        !matches!(self, Attribute::TimeOfDay | Attribute::Date | Attribute::Cadence)
    }

    /// Holds one value at a time, so a new value replaces the old one even without a cue.
    pub(super) fn is_single_valued(self) -> bool {
        matches!(self, Attribute::Address | Attribute::Manager | Attribute::Schooling)
    }
}

pub(super) struct AttributeRule {
    pub(super) attribute: Attribute,
    pub(super) pattern: Regex,
}

pub(super) static ATTRIBUTE_RULES: LazyLock<Vec<AttributeRule>> = LazyLock::new(|| {
    let rule = |attribute, pattern: &str| AttributeRule {
        attribute,
        pattern: Regex::new(&format!("(?i){pattern}")).expect("attribute pattern compiles"),
    };
    vec![
        rule(
            Attribute::Residence,
            // A move to a place (a name, or a new home), not to a new team or a new phone.
            r"\b(?:lives?|lived|living|(?:moved|moving|moves|relocated|relocating) (?:back )?to (?:(?-i:[A-Z])|a new (?:city|country|town|place|home|house|flat|apartment))|based in|resides?|hometown|home town)",
        ),
        // Someone's address ("Lucia's new address", "my address is"), not a keynote or an email
        // address.
        rule(
            Attribute::Address,
            r"(?:['’]s|\b(?:my|his|her|their|our|your|new|home|postal|mailing|street)) address\b|\b(?:my|his|her|their|our|your|the) address is\b|\blives at\b",
        ),
        rule(
            Attribute::Work,
            r"\b(?:(?:works?|worked|working) (?:at|for|as)|job|employer|employed|hired|careers?|profession|occupation)\b",
        ),
        // Someone's manager ("Omar's manager", "my new boss") or whom they report to; not being a
        // manager ("Omar is a manager at Google").
        rule(
            Attribute::Manager,
            r"(?:['’]s|\b(?:my|his|her|their|our|your)) (?:new |old |current )?(?:manager|boss|supervisor)\b|\b(?:manager|boss|supervisor) (?:is|has been|became)\b|\b(?:has|got|have) a new (?:manager|boss|supervisor)\b|\breports? (?:to|directly to)\b|\breporting to\b",
        ),
        rule(Attribute::Phone, r"\b(?:phone|smartphone|iphone|pixel|galaxy s\d+)\b"),
        rule(Attribute::Car, r"\b(?:car|cars|drives|drove|(?:drive|driving) (?:a|an|the)|vehicle)\b"),
        // What someone eats, as a kind of diet or the foods eaten or given up ("gave up meat";
        // not "buys meat for her dog").
        rule(
            Attribute::Diet,
            r"\b(?:vegetarian|vegan|pescatarian|keto|paleo|diet|gluten|dairy|(?:eats?|eating|ate|gave up|given up|giving up|quit|off) (?:meat|red meat|steak|beef|pork|fish)|eats (?:everything|anything))\b",
        ),
        rule(
            Attribute::Relationship,
            r"\b(?:dating|boyfriend|girlfriend|married|engaged|single(?:\s*[.,!;]|\s*$| again\b| now\b| (?:mom|mum|dad|parent|mother|father)\b)|divorced|broke up|separated|fianc[eé]e?|in a relationship)",
        ),
        rule(Attribute::Children, r"\b(?:child|children|kids?|sons?|daughters?|baby)\b"),
        rule(
            Attribute::Schooling,
            r"\b(?:(?:\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) grade|grade \d+|kindergarten|year \d+ at|semester|(?:is|am|are|was) (?:studying|a student)|student at|enrolled (?:at|in)|graduated)\b|(?:\b(?:a|is|am|was)|['’]s) (?:a )?(?:freshman|sophomore|junior|senior)(?: year\b|\s+(?:at|in) (?-i:[A-Z])|\s+now\b|\s*[.,!;]|\s*$)",
        ),
        rule(Attribute::TimeOfDay, r"\b(?:\d{1,2}[:.]\d{2}|\d{1,2} ?(?:am|pm)|noon|midnight)\b"),
        rule(
            Attribute::Date,
            r"\b(?:\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}(?:st|nd|rd|th)?|scheduled|deadline|launch(?:es)?|opens?)\b",
        ),
        rule(
            Attribute::Cadence,
            r"\b(?:daily|weekly|monthly|yearly|biweekly|fortnightly|every (?:day|week|month|year|other|two|three|\w+day)|once a|twice a)\b",
        ),
    ]
});

/// The slots a text speaks of; a visit keeps it off the residence slot.
pub(super) fn attributes_of(text: &str, visit: bool) -> BTreeSet<Attribute> {
    ATTRIBUTE_RULES
        .iter()
        .filter(|rule| !(rule.attribute == Attribute::Residence && visit))
        .filter(|rule| rule.pattern.is_match(text))
        .map(|rule| rule.attribute)
        .collect()
}
