//! Matching a predicate against the forms: verb forms, plain-verb forms, forms about an object,
//! inverse forms ("Dana manages Omar"), measures, and loose claims a note states without a verb;
//! each found claim with its hold.

use crate::claims::{Hold, Subject, subject_key};
use std::sync::LazyLock;

use regex::Regex;

use crate::lexicon::english::{DETERMINERS, TIME_UNITS, is_calendar_word, is_role_held_one_at_a_time, number_word};

use super::clauses::{NOT_SUBJECTS, is_verb, looks_like_a_person};
use super::holds::{USED_TO, denied, ended_within};
use super::measures::{measure_attribute, measure_forms};
use super::nouns::{canonical_role, names_the_attribute, split_attribute_noun};
use super::values::{
    MONEY, QUANTITY, TIME_ANYWHERE, VERSION_ANYWHERE, content_words, dropped_words, purpose_key, refine_attribute,
    split_list, split_work_value, value_of,
};
use super::verb_forms::{Class, INVERSE, OBJECT_FORMS, TAKES_OVER, VERB_FORMS};
use super::{Found, Reader, claim};
use crate::claims::Polarity::{Ended, Holds};

/// Whether any verb or object form reads a predicate (each is anchored at its start, so a
/// miss costs a few bytes per form).
pub(super) fn any_form_reads(predicate: &str) -> bool {
    VERB_FORMS.iter().chain(OBJECT_FORMS.iter()).any(|form| form.pattern.is_match(predicate))
}

pub(super) fn verb_forms(predicate: &str, subject: &Subject, found: &mut Found) {
    // "No longer …", "doesn't … anymore": the claim within, ended.
    if let Some(inner) = ended_within(predicate) {
        let mut ended = Found::new();
        verb_forms_plain(&inner, subject, &mut ended);
        found.dropped += ended.dropped;
        for (mut claim, hold) in ended.claims {
            if claim.polarity == Holds {
                claim.polarity = Ended;
                found.push((claim, hold));
            }
        }
        return;
    }
    if let Some(negated) = denied(predicate) {
        let mut held = Found::new();
        verb_forms_plain(negated, subject, &mut held);
        found.dropped += held.dropped;
        found.extend(held.claims.into_iter().map(|(claim, _)| (claim, Some(Hold::Denied))));
        return;
    }
    if let Some(used) = USED_TO.captures(predicate) {
        // "used to live in Oslo": it held, and no longer does.
        let inner = used["rest"].to_string();
        let mut was = Found::new();
        verb_forms_plain(&inner, subject, &mut was);
        found.dropped += was.dropped;
        for (mut claim, hold) in was.claims {
            claim.polarity = Ended;
            found.push((claim, hold));
        }
        return;
    }
    verb_forms_plain(predicate, subject, found);
}

/// Whether an ending by name ends the name itself: "left Stripe last week" does; "left the
/// Stripe office late", "cancelled his Stripe subscription" end a thing the name only
/// qualifies (a lowercase noun follows it); "left Tom a note", "returned Ana her keys" give
/// something to the one named (a determiner opens a second object that is not a span of
/// time); and "left Stripe at 6pm", "left Acme for lunch", "left St Mary's early" are leaving a
/// building, not a job ([`DEPARTURE`]). These hold in any register because English puts a
/// qualifying name before its noun, puts the receiver before the thing given, and says when
/// and why one walked out with the hours of a day, never when one resigned.
fn ends_what_it_names(predicate: &str, value_start: usize, value_end: usize) -> bool {
    let rest = &predicate[value_end..];
    let written = rest.split_whitespace().next().unwrap_or_default();
    let written = written.trim_end_matches(|c: char| !c.is_alphanumeric());
    let next = written.to_lowercase();
    let qualifies_a_noun = !next.is_empty()
        && written.chars().all(char::is_lowercase)
        && rest.starts_with(' ')
        && !crate::text::is_stopword(&next)
        && !is_calendar_word(&next)
        && number_word(&next).is_none()
        && !TIME_UNITS.contains(&next.trim_end_matches('s'))
        && !AFTER_AN_ENDING.contains(&next.as_str());
    let lower_rest = rest.to_lowercase();
    let gives_to_the_named =
        rest.starts_with(' ') && DETERMINERS.contains(&next.as_str()) && !opens_a_span(&lower_rest);
    let verb = predicate[..value_start].to_lowercase();
    let walked_out = verb.split_whitespace().any(|w| w == "left") && DEPARTURE.is_match(&lower_rest);
    !qualifies_a_noun && !gives_to_the_named && !walked_out
}

/// A name as far as its first shouted function or time word: in text written in capitals the
/// name pattern cannot tell "ACME" from "ACME AT 6", so an all-capital word that is a stopword,
/// a preposition or a time word ends it. The words that join one name ("BANK *OF* AMERICA",
/// "PROCTER *AND* GAMBLE") and numbers ("CAPITAL ONE") do not: cut there, what is left ("BANK")
/// would name more than was left. Mixed-case names keep their words ("Acme At Home").
fn shouted_name(raw: &str) -> &str {
    let mut end = 0;
    for (at, word) in raw.split_whitespace().enumerate() {
        let start = raw[end..].find(word).map_or(end, |found| end + found);
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        let shouted = bare.len() > 1 && bare.chars().all(|c| !c.is_lowercase());
        let lower = bare.to_lowercase();
        let joins_a_name = NAME_CONNECTORS.contains(&lower.as_str());
        let ends_the_name = !joins_a_name
            && (crate::text::is_stopword(&lower)
                || AFTER_AN_ENDING.contains(&lower.as_str())
                || is_calendar_word(&lower)
                || matches!(lower.as_str(), "around" | "until" | "till" | "near" | "early" | "late")
                || DEPARTURE.is_match(&lower));
        if at > 0 && shouted && ends_the_name {
            return raw[..start].trim_end();
        }
        end = start + word.len();
    }
    raw
}

/// Words that join the words of one name.
const NAME_CONNECTORS: &[&str] = &["of", "and", "de", "du", "des", "la", "le", "von", "van", "der", "the"];

/// The last words of a name that make it a building, not the organisation ("Acme HQ", the
/// shouted "ACME OFFICE"): leaving one is walking out of it.
const BUILDING_WORDS: &[&str] =
    &["hq", "headquarters", "office", "offices", "campus", "site", "branch", "building", "plant", "store", "shop"];

/// Whether the phrase a determiner opens after a name is a span of time ("a few weeks ago", "a
/// while back", "the same year", "this spring", "the Monday after"), which an ending may be
/// followed by, not a thing given ("a note last week": a noun comes before the time word).
/// Only words that count or qualify a span may stand before its time word.
fn opens_a_span(rest: &str) -> bool {
    let words = crate::text::tokenize(rest);
    for word in words.iter().skip(1) {
        let unit = word.trim_end_matches('s');
        if TIME_UNITS.contains(&unit)
            || is_calendar_word(word)
            || SEASONS.contains(&unit)
            || matches!(word.as_str(), "ago" | "while" | "back" | "later" | "earlier")
        {
            return true;
        }
        let counts = number_word(word).is_some()
            || word.chars().all(|c| c.is_ascii_digit())
            || SPAN_QUALIFIERS.contains(&word.as_str());
        if !counts {
            return false;
        }
    }
    false
}

/// The seasons, which name a span as months do ("this spring").
const SEASONS: &[&str] = &["spring", "summer", "autumn", "fall", "winter"];

/// Words that may stand between a determiner and the time word of a span ("a *few* weeks", "the
/// *same* year", "a *good* while", "a *couple of* months").
const SPAN_QUALIFIERS: &[&str] = &[
    "few",
    "couple",
    "of",
    "same",
    "good",
    "little",
    "long",
    "short",
    "several",
    "whole",
    "full",
    "past",
    "last",
    "next",
    "following",
    "previous",
    "prior",
    "end",
    "start",
    "beginning",
    "middle",
];

/// Words that follow a name an ending ends without being a noun it qualifies ("left Stripe
/// *yesterday*", "quit Figma *ago*…"): time words the stopword list does not hold.
const AFTER_AN_ENDING: &[&str] = &[
    "ago",
    "last",
    "next",
    "this",
    "back",
    "after",
    "before",
    "since",
    "because",
    "while",
    "until",
    "once",
    "following",
    "yesterday",
    "today",
    "recently",
    "finally",
    "earlier",
    "officially",
    "already",
    "altogether",
    "entirely",
    "lol",
];

/// What says that leaving a place was walking out of it, not resigning: the hours of a day
/// (a clock time, "at 6" — an hour of the clock, not "at 30", an age —, noon, a part of the
/// day, tonight), leaving early or late, after a shift or a class, or for a meal or a train.
/// Leaving with someone or something ("with her friends", "with Sam", even "with a heavy
/// heart"), on an errand ("to pick up the kids") or for a place ("for home", "for the
/// hospital") is no proof of resigning either: people walk out so, and an ambiguous sentence
/// must not retire anything — a resignation said so is missed, which costs less. Matched on
/// the lowercased rest of the clause, so a shouted "LEFT ACME AT 8PM" reads alike.
static DEPARTURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)",
        r"|\b\d{1,2}:\d{2}\b",
        r"|\b(?:at|around|by|until|till) (?:[1-9]|1[0-2]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
        r"|\b(?:noon|midnight|midday|tonight|lunchtime|dinnertime)\b",
        r"|\b(?:this|that|in the|yesterday|tomorrow|last|every|each|one) (?:morning|afternoon|evening|night)\b|\bat night\b",
        r"|\bafter (?:his|her|my|their|the|a|our|your) (?:shift|class|meeting|lecture|practice|game|show|session|appointment)\b",
        r"|\bfor (?:lunch|dinner|breakfast|brunch|coffee|a coffee|a walk|a break|home|the (?:day|night|evening|weekend|airport|station|gym|doctor|hospital|vet|school))\b",
        r"|\bto (?:get|grab|pick up|fetch|collect|meet|see|catch|go home|head home)\b",
        r"|\bwith\b",
        r"|\b(?:after|before) (?:lunch|dinner|breakfast|work|school|class|practice|the (?:meeting|game|show|party|storm|rush))\b",
        r"|\b(?:minutes?|an hour|hours?) ago\b|\bjust now\b",
        r"|\b(?:early|late)(?:\s*$|[,.!;]|\s+(?:at|after|on|from|again|today|tonight|yesterday|for|to)\b)",
    ))
    .expect("departure pattern compiles")
});

pub(super) fn verb_forms_plain(predicate: &str, subject: &Subject, found: &mut Found) {
    let predicate = predicate.trim();
    let mut taken = 0;
    for form in VERB_FORMS.iter() {
        let Some(captures) = form.pattern.captures(predicate) else { continue };
        let Some(raw) = captures.name("v") else {
            // A form with no value (an ending of the attribute as a whole).
            found.push((claim(subject, form.attribute, None, form.polarity), None));
            taken += 1;
            break;
        };
        // A shouted name runs on into the words after it ("LEFT ACME AT 6"): it ends there.
        let raw_text = if form.attribute == "*" { shouted_name(raw.as_str()) } else { raw.as_str() };
        let Some(value) = value_of(raw_text, form.class) else { continue };
        // What ended is what the verb names, not where it went: "sold the Triumph *to a guy*".
        let value = match form.polarity {
            Ended => [" to ", " for ", " from ", ", "]
                .iter()
                .fold(value, |v, stop| v.split(stop).next().unwrap_or_default().trim().to_owned()),
            Holds => value,
        };
        if value.is_empty() {
            continue;
        }
        // What follows the name is read from where the value was cut, not where the pattern
        // stopped ("LEFT ACME TONIGHT": the value is "ACME", then "TONIGHT").
        let value_end = raw.start() + raw_text.find(value.as_str()).map_or(raw_text.len(), |at| at + value.len());
        if form.attribute == "*" && form.polarity == Ended {
            // "left Acme HQ": a building; "sold his Tesla", "returned her Apple Watch": a thing
            // someone owns, named by its maker — neither ends the organisation of that name.
            let last = value.split_whitespace().last().unwrap_or_default().to_lowercase();
            let owned = predicate[..raw.start()].split_whitespace().last().is_some_and(|w| {
                matches!(w.to_lowercase().as_str(), "his" | "her" | "their" | "my" | "our" | "your" | "its")
            });
            if BUILDING_WORDS.contains(&last.as_str())
                || owned
                || !ends_what_it_names(predicate, raw.start(), value_end)
            {
                continue;
            }
        }
        // "sold their car", "ditched the phone": an ending that names the attribute's own noun
        // ends whatever value it holds, as "quit his job" does.
        if form.polarity == Ended && names_the_attribute(form.attribute, &value) {
            found.push((claim(subject, form.attribute, None, Ended), None));
            taken += 1;
            break;
        }
        found.dropped += dropped_words(raw.as_str(), &value);
        // What the clause goes on to say after the form ("year 5 *at a primary school in
        // Bristol*") is said too, and no claim holds it.
        if let Some(whole) = captures.get(0) {
            found.dropped += content_words(&predicate[whole.end()..]);
        }
        // "prefers Python for data work": the tool for a purpose, one at a time (`for:data_work`).
        let purpose = captures.name("p").map(|p| purpose_key(p.as_str()));
        let owned_attribute = match (&purpose, form.attribute) {
            (Some(purpose), "for") if !purpose.is_empty() => format!("for:{purpose}"),
            (None, "for") | (Some(_), "for") => continue,
            _ => form.attribute.to_owned(),
        };
        let attribute = owned_attribute.as_str();
        let hold = form.past.then_some(Hold::Past).filter(|_| !predicate.to_lowercase().starts_with("ha"));
        let values =
            if matches!(attribute, "languages" | "allergies" | "learning") { split_list(&value) } else { vec![value] };
        for value in values {
            // "works as a backend engineer at Stripe": a role and an employer; "works at
            // Anthropic on the infrastructure team": an employer and a team.
            let (value, tail) = split_work_value(attribute, &value);
            let attribute = refine_attribute(attribute, &value);
            found.push((claim(subject, attribute, Some(value), form.polarity), hold));
            if let Some((tail_attribute, tail_value)) = tail {
                found.push((claim(subject, tail_attribute, Some(tail_value), form.polarity), hold));
            }
        }
        taken += 1;
        // "switched from Jira to Linear": the ending, then what holds now.
        if form.attribute == "*" && form.polarity == Ended {
            let after = &predicate[captures.get(0).map_or(0, |m| m.end())..];
            if let Some(new) = value_of(after, Class::Any) {
                found.push((claim(subject, "*", Some(new), Holds), None));
            }
        }
        break;
    }
    if taken == 0 {
        object_forms(predicate, found);
    }
    if found.claims.is_empty() && !looks_like_a_person(subject) && !subject.is_me() {
        measure_forms(predicate, subject, found);
    }
}

/// The measures of a clause no form placed (a time, a price, an amount, a version), each a
/// loose claim of the clause's subject with the clause's content words: what the measure is
/// said of, so that another memory giving the same kind of measure to the same thing is
/// flagged ([`decide`](crate::claims::decide)'s `judge_loose`).
pub(super) fn loose_claims(clause: &str, subject: &Subject, found: &mut Found) {
    let lower = clause.to_ascii_lowercase();
    let placed: Vec<String> =
        found.claims.iter().filter_map(|(c, _)| c.value.as_ref().map(|v| v.to_ascii_lowercase())).collect();
    let mut measures: Vec<(usize, usize, &'static str)> = Vec::new();
    for (pattern, kind) in
        [(&*MONEY, "price"), (&*VERSION_ANYWHERE, "version"), (&*TIME_ANYWHERE, "when"), (&*QUANTITY, "amount")]
    {
        for m in pattern.find_iter(&lower) {
            if measures.iter().any(|(s, e, _)| m.start() < *e && *s < m.end()) {
                continue;
            }
            measures.push((m.start(), m.end(), kind));
        }
    }
    if measures.is_empty() {
        return;
    }
    measures.sort();
    // The clause's words, less the measures: what they are said of.
    let mut rest = lower.clone();
    for (start, end, _) in measures.iter().rev() {
        rest.replace_range(*start..*end, " ");
    }
    let subject_words = crate::claims::values::terms(&subject.key);
    let about: Vec<String> = crate::claims::values::terms(&rest)
        .into_iter()
        .filter(|t| {
            !subject_words.contains(t)
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && !is_verb(t)
                && !LOOSE_FILLERS.contains(&t.as_str())
        })
        .collect();
    if about.is_empty() {
        return;
    }
    for (start, end, kind) in measures {
        let value = clause[start..end].trim().to_owned();
        if placed.iter().any(|p| p.contains(&value.to_ascii_lowercase())) {
            continue;
        }
        let mut loose = claim(subject, &format!("~{kind}"), Some(value), Holds);
        loose.about = about.clone();
        found.push((loose, None));
    }
}

/// Words too common in statements of measures to say what a measure is of.
pub(super) const LOOSE_FILLERS: &[&str] = &[
    "now", "new", "old", "just", "also", "still", "about", "around", "usual", "normal", "same", "time", "today",
    "week", "month", "year", "day",
];

pub(super) fn object_forms(predicate: &str, found: &mut Found) {
    for form in OBJECT_FORMS.iter() {
        let Some(captures) = form.pattern.captures(predicate) else { continue };
        let (Some(object), Some(raw)) = (captures.name("o"), captures.name("v")) else { continue };
        let Some(value) = value_of(raw.as_str(), form.class) else { continue };
        let key = subject_key(object.as_str());
        if key.is_empty() || NOT_SUBJECTS.contains(&key.as_str()) {
            continue;
        }
        let (thing, _) = split_attribute_noun(object.as_str()).unwrap_or((object.as_str(), ""));
        let thing = if subject_key(thing).is_empty() { object.as_str() } else { thing };
        let (attribute, polarity) = match form.attribute {
            "~" => match measure_attribute(&value) {
                Some(attribute) => (attribute, Holds),
                None => continue,
            },
            "*" => ("*", Ended),
            attribute => (attribute, Holds),
        };
        found.push((claim(&Subject::named(thing), attribute, Some(value), polarity), None));
        return;
    }
}

/// "Rui is my manager", "Pho is her favourite food", "Priya took over billing".
pub(super) fn inverse_forms(predicate: &str, subject: &Subject, reader: &Reader, found: &mut Found) {
    if let Some(captures) = INVERSE.captures(predicate) {
        let owner = match captures["owner"].to_lowercase().as_str() {
            "my" | "our" => reader.speaker.clone(),
            "the user's" => Some(Subject::me()),
            "his" | "her" | "their" => reader.last_person.clone().filter(|p| p != subject),
            named => Some(Subject::named(named.trim_end_matches("'s"))),
        };
        let role = captures["role"].to_lowercase();
        if let Some(owner) = owner {
            let value = Some(subject.name.clone());
            if let Some(kind) = role.strip_prefix("favorite ").or_else(|| role.strip_prefix("favourite ")) {
                found.push((claim(&owner, &format!("favorite:{}", kind.replace(' ', "_")), value, Holds), None));
            } else if is_role_held_one_at_a_time(role.as_str()) {
                found.push((claim(&owner, &format!("has:{}", canonical_role(&role)), value, Holds), None));
            }
        }
        return;
    }
    if let Some(captures) = TAKES_OVER.captures(predicate)
        && looks_like_a_person(subject)
        && !captures["o"].trim_start().starts_with(|c: char| c.is_ascii_digit())
    {
        let thing = subject_key(&captures["o"]);
        if !thing.is_empty() && !NOT_SUBJECTS.contains(&thing.as_str()) {
            found.push((claim(&Subject::named(&captures["o"]), "lead", Some(subject.name.clone()), Holds), None));
        }
    }
}
