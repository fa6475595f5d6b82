//! What holds a clause back from being a current fact: a report of what someone else said, a plan,
//! a decision not yet acted on, the past, an exception to a routine, an addition for a one-valued
//! attribute, a denial and what has ended.

use std::sync::LazyLock;

use regex::Regex;

use crate::claims::{Claim, Hold, Polarity};

/// "X mentioned (that) …", "X said …": a report of what follows.
pub(super) static REPORTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?P<who>(?:the )?user|i|he|she|they|[A-Z][\w'-]+(?: [A-Z][\w'-]+)?) (?:(?:just |also |recently )?(?:mentioned|said|says|told (?:me|us|the assistant|you)|noted|shared|reported|explained|confirmed|stated|wrote|added|clarified|indicated|let (?:me|us) know|informed (?:me|us)|mentions|notes|shares|reports|confirms))(?: that)?[,:]?\s+(?P<rest>.+)$",
    )
    .expect("report pattern compiles")
});

/// What holds a clause back as a whole: a question, a plan, a hedge, a denial, the past,
/// hearsay. (A one-off exception holds only claims about what recurs: see
/// [`recurring_exception`]).
pub(super) fn clause_hold(clause: &str, asked: bool) -> Option<Hold> {
    if asked || clause.contains('?') {
        return Some(Hold::Asked);
    }
    if HEARSAY.is_match(clause) {
        return Some(Hold::Hearsay);
    }
    if PLANNED.is_match(clause) && !DECIDED.is_match(clause) {
        return Some(Hold::Planned);
    }
    if PAST.is_match(clause) {
        return Some(Hold::Past);
    }
    None
}

pub(super) static HEARSAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:heard (?:that|from)?|rumou?r|apparently|supposedly|allegedly|i think|i guess|not sure|i believe|word is|unconfirmed)\b")
        .expect("hearsay pattern compiles")
});

pub(super) static PLANNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:might|(?-i:may)|could|would|should|(?-i:will)|won't|'ll|gonna|going to|plans?(?:ning)? (?:to|on)|thinking (?:about|of)|considering|hopes? to|hoping|wants? to|wanna|would (?:love|like)|wish(?:es|ed)?|dreams? (?:of|about)|if|unless|whether|maybe|perhaps|possibly|probably|likely|looking (?:at|into)|about to|aims? to|aiming to|intends? to|trying to|tries to|hasn't decided|haven't decided|undecided|soon|next (?:week|month|year|spring|summer|fall|autumn|winter|quarter|sprint)|in (?:a|two|three|a few|a couple of) (?:days|weeks|months|years)|by (?:the end of )?next|once (?:the|she|he|they|we|i)|eventually|someday|one day|debating|weighing)\b|\b(?:is|are|am|'s|'re|'m) (?:\w+ )?(?:moving|relocating|switching|leaving|quitting|changing|transferring|joining|starting|retiring|selling|buying|getting|taking over|migrating|upgrading|downgrading|cancell?ing)\b",
    )
    .expect("plan pattern compiles")
});

/// A change said to hold from now on, even with a modal ("will be at 10 from now on").
pub(super) static DECIDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:from now on|going forward|as of (?:today|now|this week|monday|tuesday|wednesday|thursday|friday)|effective (?:immediately|today|now)|until further notice|for good|permanently|these days|nowadays)\b")
        .expect("decided pattern compiles")
});

pub(super) static PAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:back in (?:\d{4}|the day|college|school|uni)|(?:\w+|\d+) (?:years|decades) ago|long ago|as a (?:kid|child|teen|teenager|student|baby)|when (?:i|he|she|they|we|you) (?:was|were)|in (?:high school|college|grad school|middle school)|growing up|previously|formerly|originally|at the time|in the past|before (?:moving|the move|that|covid|the pandemic)|(?:in|during|until|till|since) (?:19|20)\d{2}\b.*\b(?:lived|worked|was|were|had|drove|played|studied))\b",
    )
    .expect("past pattern compiles")
});

/// One-off exceptions to something that recurs: held only for recurring attributes.
pub(super) static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:this (?:week|time|once|one time|monday|tuesday|wednesday|thursday|friday|saturday|sunday|sprint|round|weekend)|today|tonight|tomorrow|just (?:this once|once|for today|for this week|for the week)|for (?:today|tonight|this week|the week|one week|this one)|only (?:this|today|once|for)|one[- ]off|temporarily|temporary|because of|due to|exception|except|instead of the usual|while (?:\w+ )?(?:is|are) (?:away|out|off)|cheat day|for the offsite|for the holidays)\b",
    )
    .expect("exception pattern compiles")
});

pub(super) fn recurring_exception(claim: &Claim, clause: &str) -> Option<Hold> {
    // A measure no form placed may be of something that recurs: an exception holds it too.
    let recurring = claim.definition().is_some_and(|def| def.recurring) || claim.is_loose();
    (recurring && EXCEPTION.is_match(clause) && !DECIDED.is_match(clause)).then_some(Hold::Exception)
}

/// "also works at a bakery": a second value beside the first, never a replacement of it.
pub(super) fn also_for_one_value(claim: &Claim, clause: &str) -> Option<Hold> {
    let one = claim.holds() == crate::claims::Holds::One && claim.polarity == Polarity::Holds;
    (one && ALSO.is_match(clause)).then_some(Hold::Also)
}

pub(super) static ALSO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:also|as well|in addition|additionally|on the side|side gig|side job|part[- ]time|moonlights?|besides)\b")
        .expect("also pattern compiles")
});

/// The time a clause says a claim holds from ("in June", "since spring", "last week").
pub(super) fn when_of(clause: &str) -> Option<String> {
    WHEN.find(clause).map(|m| m.as_str().trim().to_owned())
}

pub(super) static WHEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:(?:since|in|from|as of|starting|effective|on) (?:early |late |mid-?)?(?:january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|fall|autumn|winter|\d{4})(?: \d{1,2}(?:st|nd|rd|th)?)?(?:,? \d{4})?|last (?:week|weekend|month|year|spring|summer|fall|autumn|winter)|(?:this|earlier this) (?:week|month|year)|yesterday|today|recently|(?:a|two|three|a few|a couple of) (?:days|weeks|months) ago)\b",
    )
    .expect("when pattern compiles")
});

pub(super) static USED_TO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:\w+\s+)?used to\s+(?P<rest>.+)$").expect("used-to pattern compiles"));

/// The claim inside an ending: "no longer works at Stripe", "is no longer allergic to nuts",
/// "doesn't smoke anymore", "is not vegetarian any more", "isn't with Sam anymore".
pub(super) fn ended_within(predicate: &str) -> Option<String> {
    let found = ENDED.captures(predicate)?;
    // "is no longer vegetarian", "am no longer on the board" → "is vegetarian", "is on the board".
    if let Some(rest) = found.name("rest2") {
        return Some(format!("is {}", ANYMORE.replace(rest.as_str(), "")));
    }
    let rest = found.name("rest").or(found.name("rest1"))?.as_str();
    let rest = ANYMORE.replace(rest, "").into_owned();
    // "doesn't smoke" → "smokes"; "isn't vegetarian" → "is vegetarian".
    let aux = found.name("aux").map(|m| m.as_str().to_lowercase()).unwrap_or_default();
    let rest = match aux.as_str() {
        a if ["is", "are", "am", "'s", "'m", "'re"].iter().any(|be| a.starts_with(be)) => {
            format!("is {rest}")
        }
        a if a.starts_with("does") || a.starts_with("do") => third_person(&rest),
        a if a.starts_with("has") || a.starts_with("have") => format!("has {rest}"),
        _ => rest,
    };
    Some(rest)
}

pub(super) static ENDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|really|actually|also|definitely)\s+)*(?:no longer\s+(?P<rest1>.+)|(?:is|are|am|'s|'m|'re)\s+no longer\s+(?P<rest2>.+)|(?P<aux>doesn't|does not|don't|do not|isn't|is not|aren't|are not|am not|'m not|'s not|hasn't|has not|haven't|have not|not)\s+(?P<rest>.+?)\s+any ?more\b.*)$")
        .expect("ended pattern compiles")
});

pub(super) static ANYMORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\s*\bany ?more\b.*$").expect("anymore pattern compiles"));

/// "smoke" → "smokes", "play guitar" → "plays guitar": a base verb as the forms read it.
pub(super) fn third_person(rest: &str) -> String {
    let mut words = rest.splitn(2, ' ');
    let verb = words.next().unwrap_or_default();
    let tail = words.next().map(|t| format!(" {t}")).unwrap_or_default();
    let verb = match verb {
        "have" => "has".to_owned(),
        "do" => "does".to_owned(),
        "go" => "goes".to_owned(),
        v if v.ends_with('s') || v.ends_with("sh") || v.ends_with("ch") => format!("{v}es"),
        v => format!("{v}s"),
    };
    format!("{verb}{tail}")
}

/// The predicate of a denial ("did not move to Boston", "never lived in Oslo", "isn't moving").
pub(super) fn denied(predicate: &str) -> Option<&str> {
    DENIED.captures(predicate).and_then(|c| c.name("rest")).map(|m| m.as_str())
}

pub(super) static DENIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:just|really|actually|definitely|still)\s+)*(?:didn't|did not|doesn't|does not|don't|do not|isn't|is not|aren't|are not|wasn't|was not|weren't|'m not|am not|'s not|hasn't|has not|haven't|have not|never|won't|will not|can't|cannot|couldn't|not)\s+(?:(?:actually|end up|ended up|really|even|officially|yet)\s+)*(?P<rest>.+)$")
        .expect("denied pattern compiles")
});
