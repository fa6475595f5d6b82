//! A captured value cut to what it names: fillers and trailing times dropped, lists split, work
//! values split into employer and role, and the attribute refined by what the value is.

use std::sync::LazyLock;

use regex::Regex;

use crate::claims::subject_key;
use crate::lexicon::english::TEAM_NOUNS;

use super::verb_forms::Class;
use super::verb_forms::Class::{Any, Email, GroupName, Money, Name, NotATime, PhoneNumber, Place, Time, Version};

pub(super) static TIME_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)s?|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|the \d{1,2}(?:st|nd|rd|th)|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b")
        .expect("time pattern compiles")
});

pub(super) static VERSION_ANYWHERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+\b").expect("version pattern compiles"));

pub(super) static QUANTITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d[\d.,]*\s?%|\b\d[\d.,]*\s?(?:kg|g|lbs?|pounds|percent|mg|mcg|ml|km|mi|miles|min|mins|minutes|hours|hrs|°[cf]?|degrees|pints?|litres?|liters?|days a week|times a week|steps|bpm|mbps|gb|tb|inches|cm|ft|feet|years old|yo)\b|\d\s?%|\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty|hundred|a dozen)\s+(?:[a-z]+\s+)?(?:approvals?|users?|people|seats?|members?|guests?|kids?|children|cats?|dogs?|pets?|days?|weeks?|months?|years?|hours?|nights?|sessions?|classes|lessons?|times?|pieces?|units?|items?|requests?|calls?|tickets?|points?|cups?|glasses?|bottles?|pills?|tablets?|doses?|puffs?|reps?|sets?|laps?|pages?|books?|copies|licen[cs]es?|instances?|nodes?|servers?|replicas?|workers?|threads?|engineers?|devs?|developers?|designers?|employees?|staff|rooms?|beds?|floors?|stops?|stations?|shifts?|runs?|games?|matches?|rounds?)\b")
        .expect("quantity pattern compiles")
});

/// A work value that names two attributes at once: the role and where ("backend engineer at
/// Stripe"), or the employer and the team ("Anthropic on the infrastructure team").
pub(super) fn split_work_value(attribute: &str, value: &str) -> (String, Option<(&'static str, String)>) {
    let split = |separators: &[&str]| {
        separators.iter().find_map(|sep| {
            value.find(sep).map(|at| (value[..at].trim().to_owned(), value[at + sep.len()..].trim().to_owned()))
        })
    };
    match attribute {
        "role" | "employer" | "workplace" => {
            if let Some((head, team)) = split(&[" on the ", " in the "])
                && ends_in_a_group_noun(&team)
            {
                return (head, Some(("team", team)));
            }
            if attribute == "role"
                && let Some((role, employer)) = split(&[" at ", " for ", " with "])
                && employer.chars().next().is_some_and(|c| c.is_uppercase() || c == 'a')
            {
                let employer_attribute = refine_attribute("employer", &employer);
                return (role, Some((employer_attribute, employer)));
            }
            (value.to_owned(), None)
        }
        _ => (value.to_owned(), None),
    }
}

/// A purpose as an attribute's parameter: "all her data work" → "data_work".
pub(super) fn purpose_key(purpose: &str) -> String {
    subject_key(purpose)
        .split(' ')
        .filter(|w| {
            !matches!(*w, "all" | "most" | "any" | "everything" | "her" | "his" | "their" | "my" | "the" | "our")
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// Values of list attributes one by one: "Twi and English" → "Twi", "English".
pub(super) fn split_list(value: &str) -> Vec<String> {
    value
        .split([',', '&', '/'])
        .flat_map(|part| part.split(" and "))
        .flat_map(|part| part.split(" as well as "))
        .map(|part| part.trim().trim_start_matches("and ").trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// An attribute refined by its value: "works at the Ankara branch" is where, not for whom;
/// "lives at 12 Elm Street" an address.
pub(super) fn refine_attribute<'a>(attribute: &'a str, value: &str) -> &'a str {
    let lower = value.to_lowercase();
    let last = lower.split_whitespace().next_back().unwrap_or_default();
    match attribute {
        "employer" if WORKPLACE_NOUNS.contains(&last) && lower.split_whitespace().count() > 1 => "workplace",
        "employer" if TEAM_NOUNS.contains(&last) => "team",
        "residence" if lower.starts_with(|c: char| c.is_ascii_digit()) => "address",
        _ => attribute,
    }
}

pub(super) const WORKPLACE_NOUNS: &[&str] = &[
    "office",
    "branch",
    "site",
    "campus",
    "store",
    "location",
    "hq",
    "headquarters",
    "clinic",
    "lab",
    "plant",
    "depot",
    "warehouse",
    "factory",
    "ward",
];
/// Whether a group's name holds no word that starts another phrase (split by spaces only, so
/// "M&A" and "go-to-market" stay whole; an all-capital word is an acronym unless the whole
/// value is shouted).
fn is_one_group_name(value: &str) -> bool {
    let shouted = !value.chars().any(char::is_lowercase);
    value.split_whitespace().all(|word| {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '&');
        let acronym = !shouted && bare.len() > 1 && !bare.chars().any(char::is_lowercase);
        let lower = bare.to_lowercase();
        acronym || matches!(lower.as_str(), "and" | "of" | "&") || !crate::text::is_stopword(&lower)
    })
}

/// Whether a value's last word is a group noun ("the M&A team", "Platform Org").
pub(super) fn ends_in_a_group_noun(value: &str) -> bool {
    let last = value.split_whitespace().last().unwrap_or_default();
    let last = last.trim_end_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    TEAM_NOUNS.contains(&last.as_str())
}

/// The value a form captured, trimmed where the value ends ("Amsterdam for her new job" →
/// "Amsterdam"), or `None` when it is not of the form's class or is too long to be one value.
pub(super) fn value_of(raw: &str, class: Class) -> Option<String> {
    let mut value = raw.trim();
    // Where a value ends: a word or phrase that starts something else. (ASCII case only, so
    // offsets in `lower` are offsets in `value`.)
    let lower = value.to_ascii_lowercase();
    let mut cut = value.len();
    for stop in VALUE_STOPS.find_iter(&lower) {
        if stop.start() > 0 {
            cut = cut.min(stop.start());
            break;
        }
    }
    if class != Time
        && class != Money
        && let Some(found) = TRAILING_TIME.find(&lower[..cut])
        && found.start() > 0
    {
        cut = cut.min(found.start());
    }
    value = value[..cut].trim();
    value = value
        .trim_end_matches(|c: char| matches!(c, ',' | '.' | '!' | ')' | '"' | '\'' | ':' | ';') || c.is_whitespace());
    value = value.trim_start_matches(|c: char| matches!(c, '"' | '\'' | '(') || c.is_whitespace());
    let words = value.split_whitespace().count();
    if value.is_empty() || words > MAX_VALUE_WORDS {
        return None;
    }
    let lower = value.to_lowercase();
    let looks_like_time = TIMEISH.is_match(&lower) && !VERSION_ANYWHERE.is_match(&lower);
    let ok = match class {
        Any => true,
        NotATime => !looks_like_time && !TIME_ANYWHERE.is_match(&lower) && !lower.starts_with("the same"),
        Time => looks_like_time,
        Money => MONEY.is_match(&lower),
        Version => VERSION.is_match(&lower),
        Name => value.chars().next().is_some_and(|c| c.is_uppercase()) && words <= 4,
        PhoneNumber => value.chars().filter(|c| c.is_ascii_digit()).count() >= 6,
        Email => value.contains('@'),
        // Still ending in its group noun once cut where the value ends ("Berlin with her dance
        // group" is cut to "Berlin": a place), and one name: no function word but those that
        // join a name ("Research and Development group"), so "Lisbon to join a running group"
        // is no team. An acronym in mixed-case text is a word of the name ("the IT team").
        GroupName => ends_in_a_group_noun(value) && is_one_group_name(value),
        // A home is not a group within an organisation ("moved to the M&A team").
        Place => {
            !looks_like_time
                && !TIME_ANYWHERE.is_match(&lower)
                && !lower.starts_with("the same")
                && !ends_in_a_group_noun(value)
        }
    };
    let article_only = matches!(
        lower.as_str(),
        "a" | "an" | "the" | "it" | "that" | "this" | "there" | "here" | "them" | "him" | "her"
    );
    (ok && !article_only).then(|| value.to_owned())
}

/// The content words of `raw` a value cut from it left out, less times and fillers: what
/// else the clause says.
pub(super) fn dropped_words(raw: &str, value: &str) -> usize {
    let rest = raw.trim_start().get(value.len()..).unwrap_or_default();
    content_words(&TRAILING_TIME.replace_all(&rest.to_lowercase(), " "))
}

/// How many words of `text` say something: not function words, fillers or times.
pub(super) fn content_words(text: &str) -> usize {
    crate::text::tokenize(text)
        .into_iter()
        .filter(|w| {
            !crate::text::is_stopword(w) && !FILLERS.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit())
        })
        .count()
}

/// Words that say nothing of their own in a statement of fact.
pub(super) const FILLERS: &[&str] = &[
    "now",
    "just",
    "really",
    "also",
    "recently",
    "finally",
    "officially",
    "currently",
    "again",
    "anymore",
    "lol",
    "haha",
    "btw",
    "ok",
    "okay",
    "yeah",
    "yes",
    "too",
    "still",
    "actually",
    "basically",
    "week",
    "month",
    "year",
    "today",
    "yesterday",
    "tonight",
    "last",
    "ago",
    "since",
    "days",
    "weeks",
    "months",
    "years",
    "back",
    "new",
    "time",
    "full",
    "totally",
    "pretty",
    "super",
    "honestly",
    "literally",
    "officially",
    "fyi",
    "update",
    "note",
    "good",
    "great",
    "nice",
    "happy",
    "excited",
    "glad",
    "ugh",
    "omg",
    "wow",
    "yay",
    "thanks",
    "thank",
];

/// The most words one value runs to ("the new Hyundai Ioniq 5 in white" is six).
pub(super) const MAX_VALUE_WORDS: usize = 7;

pub(super) static VALUE_STOPS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s(?:for (?:her|his|their|my|a|an|the|work|school|now|good|\d)|with (?:her|his|their|my|a|an|the)|near|next to|close to|because|since|after|before|until|till|when|while|which|who|where|as of|starting|from now|now|these days|nowadays|full[- ]time|anymore|any more|again|instead|too|as well|though|although|lol|haha|btw|so that|so|but|and (?:now|then|she|he|they|i|we|it|is|has|her|his|my)|thanks to|due to|per (?:the|our)|if|unless|rather than|, not|not the|—|–| - |\(|\. )").expect("value stops compile")
});

pub(super) static TRAILING_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s(?:(?:last|this|next|early|late) (?:week|weekend|month|year|spring|summer|fall|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:early |late |mid-?)?(?:january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|fall|autumn|winter|\d{4})|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|tonight|recently|lately|a (?:few |couple of )?(?:days|weeks|months|years) ago|(?:\w+|\d+) (?:days|weeks|months|years) ago|at the (?:start|end|beginning) of|earlier this|over the (?:weekend|summer|holidays))\b").expect("trailing time compiles")
});

pub(super) static TIMEISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:every|each|the|next|this|on|at|from|by|mid|early|late|end of|beginning of)\s+)*(?:\d{1,2}(?::\d{2}|\.\d{2})\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}\s*$|noon|midnight|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)s?|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|\d{1,2}\s+(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|the \d{1,2}(?:st|nd|rd|th)|\d{1,2}(?:st|nd|rd|th)|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|q[1-4]|(?:the )?(?:morning|afternoon|evening)s?|tomorrow|tonight|weekends?|weekdays?)\b")
        .expect("time-ish pattern compiles")
});

pub(super) static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    // The whole amount ("£19.99", "$2,650", "£22/month", "90k a year"): a loose claim keeps it
    // as its value.
    Regex::new(r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?k\b)?(?:\s?(?:/|a |per )\s?(?:mo|month|wk|week|yr|year|night|hour|hr|day|seat|user)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:k\b|dollars|euros|pounds|bucks|usd|eur|gbp|yuan|rmb|/mo\b|/month|a month|per month|/yr\b|a year|per year))")
        .expect("money pattern compiles")
});

pub(super) static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:version |v)?\d+(?:\.\d+)+\b|^v\d+\b|^\w+ \d+(?:\.\d+)*\b").expect("version pattern compiles")
});
