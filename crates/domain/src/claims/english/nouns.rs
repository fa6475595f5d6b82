//! The catalogue's attributes as English names them with a noun ("my address is", "her manager",
//! "our standup"): people's relations and roles, things a subject owns or runs, attribute nouns and
//! the state a noun phrase describes.

use std::sync::LazyLock;

use regex::Regex;

use crate::claims::Subject;
use crate::lexicon::alternation;
use crate::lexicon::english::{TITLES, is_role_held_one_at_a_time};

use super::clauses::{NOT_VERBS, is_verb, looks_like_a_person};
use super::measures::measure_forms;
use super::values::{dropped_words, refine_attribute, value_of};
use super::verb_forms::Class;
use super::verb_forms::Class::{Any, Email, Money, Name, NotATime, PhoneNumber, Time, Version};
use super::{Found, claim};
use crate::claims::Polarity::{Ended, Holds};

/// "Is Linda Park", "has been Wen Li since March": a role filled by a name.
pub(super) static FILLS_ROLE: LazyLock<Regex> = LazyLock::new(|| {
    let titles = alternation(TITLES.iter().copied());
    Regex::new(&format!(
        r"^(?:is|'s|was|has been|became|will be|is now|changed to|switched to)\s+(?:now\s+)?(?:(?i:{titles})\.?\s+)?[A-Z]"
    ))
    .expect("fills-role pattern compiles")
});

/// Whether a noun phrase names a thing's attribute ("on-call lead", "budget", "deadline").
pub(super) fn is_attribute_noun(noun: &str) -> bool {
    let lower = noun.trim().to_lowercase();
    let head = lower.split_whitespace().next_back().unwrap_or_default();
    NOUN_ATTRIBUTES.iter().any(|(nouns, _, _)| nouns.contains(&lower.as_str()) || nouns.contains(&head))
}

/// Times that end a thing's phrase without naming it ("the Atlas budget *for this year*").
pub(super) const TIME_WORDS: &[&str] =
    &["this year", "next year", "this month", "this quarter", "the year", "now", "today", "2025", "2026", "2027"];

/// A phrase without a time that ends it ("the Atlas budget for this year" → "the Atlas
/// budget").
pub(super) fn strip_time_phrase(phrase: &str) -> &str {
    let lower = phrase.to_ascii_lowercase();
    for ending in [
        " for this year",
        " this year",
        " for next year",
        " for the year",
        " for 2025",
        " for 2026",
        " for 2027",
        " this quarter",
        " for this quarter",
    ] {
        if let Some(stem) = lower.strip_suffix(ending) {
            return &phrase[..stem.len()];
        }
    }
    phrase
}

/// Splits a thing's phrase at the attribute noun that ends it: "the standup time" →
/// ("the standup", "time").
pub(super) fn split_attribute_noun(phrase: &str) -> Option<(&str, &str)> {
    let lower = phrase.to_ascii_lowercase();
    for noun in THING_ATTRIBUTE_NOUNS {
        if let Some(stem) = lower.strip_suffix(noun)
            && (stem.is_empty() || stem.ends_with(' ') || stem.ends_with("'s "))
        {
            let cut = stem.len();
            let thing = phrase[..cut].trim_end().trim_end_matches("'s").trim_end();
            return Some((thing, &phrase[cut..]));
        }
    }
    None
}

/// Nouns naming an attribute of a thing, at the end of its phrase.
pub(super) const THING_ATTRIBUTE_NOUNS: &[&str] = &[
    "time",
    "start time",
    "date",
    "due date",
    "deadline",
    "day",
    "venue",
    "location",
    "address",
    "lead",
    "owner",
    "version",
    "price",
    "cost",
    "fee",
    "rate",
    "plan",
    "tier",
    "status",
    "stack",
    "vendor",
    "provider",
    "supplier",
    "schedule",
    "frequency",
    "cadence",
    "room",
    "point of contact",
    "contact",
    "budget",
    "go-live",
    "release date",
    "launch date",
    "host",
    "manager",
    "pm",
    "dri",
    "on-call",
    "bill",
    "payment",
    "fee",
    "budget",
    "premium",
    "charge",
];

pub(in crate::claims) fn canonical_role(role: &str) -> String {
    match role {
        "boss" | "supervisor" => "manager".to_owned(),
        "wife" | "husband" | "girlfriend" | "boyfriend" | "fiance" | "fiancee" | "fiancé" | "fiancée" | "spouse" => {
            "partner".to_owned()
        }
        "landlady" => "landlord".to_owned(),
        "gp" => "doctor".to_owned(),
        "physio" => "physiotherapist".to_owned(),
        "adviser" => "advisor".to_owned(),
        other => other.replace(' ', "_"),
    }
}

/// Noun forms: what a possessive names, then its predicate ("Maya's *address* is …", "my
/// *manager* is Rui", "the standup *time* moved to 9:30", "*rent* went up to $1,500").
pub(super) fn noun_forms(noun: &str, predicate: &str, subject: &Subject, bare: bool, found: &mut Found) {
    let noun = noun.trim().to_lowercase();
    let noun = noun.trim_start_matches("all-time ").trim_start_matches("absolute ");
    let captures = if bare { BARE_VALUE.captures(predicate) } else { NOUN_PREDICATE.captures(predicate) };
    let Some(captures) = captures else {
        // "My dog Biscuit passed away", "Her car was totalled": what she had is gone.
        if PASSED.is_match(predicate) {
            let head = noun.split(' ').next().unwrap_or_default();
            if PET_WORDS.contains(&head) {
                found.push((claim(subject, "pets", Some(noun.to_owned()), Ended), None));
            } else if head == "car" {
                found.push((claim(subject, "car", None, Ended), None));
            }
        }
        return;
    };
    let raw = captures.name("v").map_or("", |m| m.as_str());
    let head = noun.split(' ').next_back().unwrap_or_default();
    let (attribute, class): (String, Class) =
        if let Some(kind) = noun.strip_prefix("favorite ").or_else(|| noun.strip_prefix("favourite ")) {
            (format!("favorite:{}", kind.replace(' ', "_")), Any)
        } else if let Some((_, attribute, class)) =
            (!subject.is_me() && !looks_like_a_person(subject)).then(|| entry_for(NOUN_ATTRIBUTES, noun)).flatten()
        {
            ((*attribute).to_owned(), *class)
        } else if is_role_held_one_at_a_time(noun) || is_role_held_one_at_a_time(head) {
            let role = if is_role_held_one_at_a_time(noun) { noun } else { head };
            (format!("has:{}", canonical_role(role)), Name)
        } else if POSSESSIONS.contains(&noun)
            || (POSSESSIONS.contains(&head) && !PERSON_ATTRIBUTE_NOUNS.iter().any(|(n, _, _)| n.contains(&noun)))
        {
            (format!("own:{}", noun.replace(' ', "_")), Any)
        } else {
            let table =
                if subject.is_me() || looks_like_a_person(subject) { PERSON_ATTRIBUTE_NOUNS } else { NOUN_ATTRIBUTES };
            match entry_for(table, noun).or_else(|| entry_for(PERSON_ATTRIBUTE_NOUNS, noun)) {
                Some((_, attribute, class)) => ((*attribute).to_owned(), *class),
                None => return,
            }
        };
    // "Maya's company switched to Google Cloud", "his school moved to a new campus": an
    // organisation that acts is not replaced by what it acted on; only "is" says which it is.
    if !bare && captures.name("copula").is_none() && ORGANISATIONS.contains(&attribute.as_str()) {
        return;
    }
    let Some(value) = value_of(raw, class) else { return };
    // "the car is insured with Allianz", "my phone is in the shop": what is said of the thing,
    // not which thing it is.
    if !bare && describes_rather_than_names(&value) && !matches!(class, Time | Money | Version) {
        return;
    }
    found.dropped += dropped_words(raw, &value);
    let attribute = refine_attribute(&attribute, &value).to_owned();
    // "the standup time": a thing's attribute, of the thing.
    found.push((claim(subject, &attribute, Some(value), Holds), None));
}

/// Whether a value after "X is" says how X is rather than which it is: a participle
/// ("insured", "parked"), a preposition ("in the shop", "with Allianz"), an adjective of state.
pub(super) fn describes_rather_than_names(value: &str) -> bool {
    let first = value.split_whitespace().next().unwrap_or_default().to_lowercase();
    let participle = first.len() > 4 && first.ends_with("ed") && !NOT_VERBS.contains(&first.as_str());
    participle || STATE_OPENERS.contains(&first.as_str())
}

/// Words that open what is said of a thing's state, not a name for it.
pub(super) const STATE_OPENERS: &[&str] = &[
    "in",
    "at",
    "on",
    "with",
    "for",
    "from",
    "by",
    "under",
    "being",
    "still",
    "broken",
    "fine",
    "ok",
    "okay",
    "great",
    "good",
    "bad",
    "ready",
    "due",
    "done",
    "getting",
    "going",
    "almost",
    "nearly",
    "so",
    "too",
    "very",
    "really",
    "super",
    "pretty",
    "quite",
    "not",
    "no",
    "always",
    "never",
    "usually",
    "mostly",
    "out",
    "off",
    "back",
    "away",
    "here",
    "there",
    "available",
    "busy",
    "closed",
    "open",
    "free",
    "full",
    "empty",
    "late",
    "early",
    "expensive",
    "cheap",
];

pub(super) static NOUN_PREDICATE: LazyLock<Regex> = LazyLock::new(|| {
    // A copula ("is", "has been", "became"), or a change verb straight before its new value
    // ("moved to", "went up to"): "the team moved standup to 10:15" acts on standup and says
    // nothing of the team.
    Regex::new(r"(?i)^(?:(?:just|now|officially|finally|recently|also|still)\s+)*(?:(?P<copula>(?:is|'s|are|was|has been|have been|became|will be|is now|'s now|remains|stays)\s+(?:now\s+|still\s+|officially\s+)?)|(?:(?:has |have |got |was |been )?(?:changed|moved|went|switched|shifted|bumped|pushed|slipped|rose|fell|increased|dropped|jumped|climbed|went up|went down|going up|goes up|is going up|raised|cut|reduced|updated|upgraded)\s+(?:back\s+)?(?:up\s+|down\s+)?(?:from .+? )?to\s+))(?P<v>.+)$")
        .expect("noun predicate compiles")
});

/// A note's value: up to a comma that starts something else.
pub(super) static BARE_VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<v>[^,;]+)").expect("bare value pattern compiles"));

/// A note's value for a thing: a measure fills its attribute (`when`, `price`, …); anything
/// else names which one the thing is (`is`: "grinder = Niche Zero").
pub(super) fn bare_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    measure_forms(predicate, subject, found);
    if !found.claims.is_empty() {
        return;
    }
    if let Some(captures) = BARE_VALUE.captures(predicate)
        && let Some(value) = value_of(&captures["v"], Class::Any)
        && names_something(&value)
    {
        found.dropped += dropped_words(predicate, &value);
        found.push((claim(subject, "is", Some(value), Holds), None));
    }
}

/// Whether a note's value names something (a name, a number, a model: "O neg", "Dr. Varga",
/// "Niche Zero") rather than saying something ("okay", "got it", "why are bananas curved").
pub(super) fn names_something(value: &str) -> bool {
    value.split_whitespace().count() <= 5
        && value.split_whitespace().any(|w| w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()))
        && !value.split_whitespace().any(|w| is_verb(&w.to_lowercase()))
}

pub(super) static PASSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|sadly|finally|recently)\s+)*(?:died|passed away|passed|was put down|had to be put down|crossed the rainbow bridge|ran away|got totaled|got totalled|was totaled|was totalled|was stolen|got stolen|was written off)\b")
        .expect("passed pattern compiles")
});

pub(super) const PET_WORDS: &[&str] = &[
    "dog", "cat", "puppy", "kitten", "rabbit", "bunny", "hamster", "parrot", "bird", "fish", "turtle", "tortoise",
    "snake", "lizard", "gecko", "horse", "pony", "ferret", "guinea", "budgie",
];

/// The attributes whose values are organisations, which act on their own ("the company
/// switched to Azure"): a change verb after one of their nouns is the organisation's act.
const ORGANISATIONS: &[&str] = &["employer", "team", "school"];

/// The entry of `table` for a possessed noun, by its longest ending that one names: "new email
/// address" is an email (by "email address"), not an address (by "address").
fn entry_for(
    table: &'static [(&[&str], &str, Class)],
    noun: &str,
) -> Option<&'static (&'static [&'static str], &'static str, Class)> {
    let words: Vec<&str> = noun.split(' ').filter(|w| !w.is_empty()).collect();
    (0..words.len()).find_map(|from| {
        let ending = words[from..].join(" ");
        table.iter().find(|(nouns, _, _)| nouns.contains(&ending.as_str()))
    })
}

/// Whether `value` is only a noun that names `attribute` itself ("car" of `car`, "phone" of
/// `phone`), not a value of it.
pub(super) fn names_the_attribute(attribute: &str, value: &str) -> bool {
    let value = value.trim().to_lowercase();
    PERSON_ATTRIBUTE_NOUNS.iter().any(|(nouns, named, _)| *named == attribute && nouns.contains(&value.as_str()))
}

/// Nouns that name one of a person's attributes when possessed ("my *address* is …").
pub(super) const PERSON_ATTRIBUTE_NOUNS: &[(&[&str], &str, Class)] = &[
    (&["address", "home address", "postal address", "mailing address", "street address"], "address", Any),
    (&["email", "e-mail", "email address", "work email", "personal email"], "email", Email),
    (
        &[
            "number",
            "phone number",
            "cell",
            "cell number",
            "mobile",
            "mobile number",
            "cell phone number",
            "work number",
        ],
        "phone_number",
        PhoneNumber,
    ),
    (&["birthday", "bday", "b-day", "birth date", "date of birth"], "birthday", Any),
    (&["age"], "age", Any),
    (&["job", "job title", "title", "role", "position", "occupation", "profession"], "role", Any),
    (&["employer", "company", "workplace"], "employer", NotATime),
    (&["team", "squad", "department"], "team", Any),
    (&["school", "college", "university", "uni"], "school", Any),
    (&["grade", "year group"], "grade", Any),
    (&["phone", "smartphone"], "phone", Any),
    (&["car", "ride", "vehicle"], "car", Any),
    (&["editor", "ide", "code editor", "editor of choice"], "editor", Any),
    (&["diet"], "diet", Any),
    (&["commute"], "commute", Any),
    (&["home", "city", "hometown"], "residence", NotATime),
];

/// Nouns that name an attribute of a thing ("the standup *time*", "the *rent*").
pub(super) const NOUN_ATTRIBUTES: &[(&[&str], &str, Class)] = &[
    (
        &[
            "time",
            "start time",
            "date",
            "due date",
            "deadline",
            "day",
            "schedule",
            "go-live",
            "release date",
            "launch date",
        ],
        "when",
        Time,
    ),
    (&["venue", "room"], "venue", NotATime),
    (&["location"], "location", NotATime),
    (&["lead", "owner", "pm", "point of contact", "contact", "dri", "on-call", "host"], "lead", Name),
    (&["version"], "version", Version),
    (
        &[
            "price",
            "cost",
            "fee",
            "rate",
            "budget",
            "salary",
            "membership fee",
            "premium",
            "bill",
            "payment",
            "rent",
            "mortgage",
        ],
        "price",
        Money,
    ),
    (&["plan", "tier", "subscription"], "tier", Any),
    (&["status"], "status", Any),
    (&["stack", "database", "db", "backend", "ci", "framework", "language"], "stack", Any),
    (
        &[
            "vendor",
            "provider",
            "supplier",
            "isp",
            "carrier",
            "bank",
            "insurer",
            "insurance",
            "gym",
            "caterer",
            "courier",
            "agency",
        ],
        "vendor",
        Any,
    ),
    (&["frequency", "cadence"], "cadence", Any),
];

/// Things someone has one of, named in notes and possessives ("bike: 2019 Triumph", "my
/// laptop is a ThinkPad"): the value names which one (`own:bike`).
pub(super) const POSSESSIONS: &[&str] = &[
    "bike",
    "motorbike",
    "motorcycle",
    "scooter",
    "truck",
    "van",
    "laptop",
    "tablet",
    "ipad",
    "watch",
    "camera",
    "headphones",
    "earbuds",
    "tv",
    "console",
    "e-reader",
    "kindle",
    "guitar",
    "piano",
    "keyboard",
    "monitor",
    "desk",
    "chair",
    "mattress",
    "router",
    "printer",
    "card",
    "credit card",
    "debit card",
    "bank",
    "pharmacy",
    "gp",
    "gym",
    "grinder",
    "espresso machine",
    "inhaler",
    "wallet",
    "bag",
    "backpack",
    "stroller",
    "pram",
    "car seat",
    "boat",
    "kayak",
    "surfboard",
    "skis",
    "snowboard",
    "racket",
    "ring",
    "password manager",
];
