//! The profile: what Arbor believes now, subject by subject — for the speaker, each person and
//! each thing the memories speak of, the current value of each attribute (when it was said and
//! from which source), and its history (what a newer memory replaced or ended, and when).
//!
//! It is built from the claims the current memories were read into and the marks retirements
//! left, never from generated text, so every line of it points at the memory that says it and
//! a person can check every decision reconciliation made at a glance. Nothing is hidden here
//! either: where an attribute that holds one value has two current values (a replacement that
//! could not be proven), both are shown, the newer first and the older marked as possibly
//! outdated by it. Loose measures (a time or a price said of something the catalogue did not
//! name) and claims held back (plans, questions, the past) are not beliefs, and are left out.

use std::collections::BTreeMap;

use serde::Serialize;

use super::catalogue::{Holds, chinese_name, english_name};
use super::values::{ValueMatch, compare};
use super::{Claim, Polarity, Subject, subject_key};
use crate::id::LeafId;
use crate::model::LeafRecord;
use crate::time::Timestamp;

/// What Arbor believes now about every subject its memories speak of.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Profile {
    /// The speaker first, then everyone and everything else by name.
    pub subjects: Vec<SubjectProfile>,
}

/// One subject's attributes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubjectProfile {
    pub subject: Subject,
    /// In the catalogue's order.
    pub facts: Vec<ProfileFact>,
}

/// One attribute of a subject: its current values and what they replaced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileFact {
    /// The catalogue id ("residence", "has:dentist").
    pub attribute: String,
    /// How people name it, in English and in Chinese.
    pub name: String,
    pub name_zh: String,
    pub holds: Holds,
    /// What holds now, the newest first. One value for an attribute that holds one, unless a
    /// replacement was not proven: then the older are marked `possibly_outdated_by`.
    pub current: Vec<ProfileValue>,
    /// What a newer memory replaced or ended, the most recently ended first.
    pub history: Vec<ProfileChange>,
}

/// A value as a memory said it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileValue {
    pub value: String,
    /// The memory that says it, and when it was said.
    pub leaf: LeafId,
    pub said_at: Timestamp,
    /// Where it came from (`message:D1:3`, `user-entry`).
    pub source: String,
    /// The time the text says it holds from, as written ("since June").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// A newer memory that gives this attribute another value, unproven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub possibly_outdated_by: Option<LeafId>,
    /// Said in a memory marked sensitive: to be confirmed before it is repeated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
    /// The memory's lineage and the lineages a person kept current beside it: a pair a person
    /// kept is never shown as one doubting the other.
    #[serde(skip)]
    lineage: LeafId,
    #[serde(skip)]
    kept_with: Vec<LeafId>,
}

/// A value that no longer holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileChange {
    /// What was said (none for an ending that named no value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The memory that said it, and when.
    pub leaf: LeafId,
    pub said_at: Timestamp,
    /// The memory that replaced or ended it, and when that was said.
    pub changed_by: LeafId,
    pub changed_at: Timestamp,
    /// `one_value` (replaced by another value) or `ended`.
    pub rule: &'static str,
}

/// A memory no longer current because a rule retired it, with the memory that did, when the
/// reader may see it.
#[derive(Debug, Clone, Copy)]
pub struct Retired<'a> {
    pub leaf: &'a LeafRecord,
    pub by: Option<&'a LeafRecord>,
}

/// The profile of `current` memories (each leaf current for its reader) and of the `retired`
/// ones their history holds, limited to the subjects `wanted` names when given.
pub fn build(current: &[LeafRecord], retired: &[Retired<'_>], wanted: Option<&str>) -> Profile {
    let wanted = wanted.map(Wanted::new);
    let admits = |subject: &Subject| wanted.as_ref().is_none_or(|w| w.admits(subject));
    let mut subjects: BTreeMap<(bool, String), SubjectProfile> = BTreeMap::new();
    let fact_of = |subjects: &mut BTreeMap<(bool, String), SubjectProfile>, claim: &Claim| -> usize {
        let entry = subjects
            .entry((!claim.subject.is_me(), claim.subject.key.clone()))
            .or_insert_with(|| SubjectProfile { subject: claim.subject.clone(), facts: Vec::new() });
        match entry.facts.iter().position(|f| f.attribute == claim.attribute) {
            Some(at) => at,
            None => {
                entry.facts.push(ProfileFact {
                    attribute: claim.attribute.clone(),
                    name: english_name(&claim.attribute),
                    name_zh: chinese_name(&claim.attribute),
                    holds: claim.holds(),
                    current: Vec::new(),
                    history: Vec::new(),
                });
                entry.facts.len() - 1
            }
        }
    };
    for leaf in current {
        for claim in leaf.claims.claims.iter().filter(|c| believed(c) && admits(&c.subject)) {
            let at = fact_of(&mut subjects, claim);
            let fact =
                &mut subjects.get_mut(&(!claim.subject.is_me(), claim.subject.key.clone())).expect("made").facts[at];
            match (claim.polarity, &claim.value) {
                (Polarity::Holds, Some(value)) => fact.current.push(ProfileValue {
                    value: value.clone(),
                    leaf: leaf.id.clone(),
                    said_at: leaf.observed_at,
                    source: leaf.provenance.source.short(),
                    since: claim.when.clone(),
                    possibly_outdated_by: None,
                    sensitive: leaf.sensitivity != crate::sensitivity::Sensitivity::Normal,
                    lineage: leaf.lineage.clone(),
                    kept_with: leaf.claims.kept_with.clone(),
                }),
                // An ending a current memory says: the history of the value it ended, which
                // the retired memory (if the reader sees it) names better below.
                (Polarity::Ended, value) => fact.history.push(ProfileChange {
                    value: value.clone(),
                    leaf: leaf.id.clone(),
                    said_at: leaf.observed_at,
                    changed_by: leaf.id.clone(),
                    changed_at: leaf.observed_at,
                    rule: "ended",
                }),
                (Polarity::Holds, None) => {}
            }
        }
    }
    for retired in retired {
        let Some(mark) = &retired.leaf.claims.retired else { continue };
        // Replaced by a memory this reader cannot read (restricted, forgotten, another scope):
        // the change is not told, as that memory's existence is not.
        let Some(by) = retired.by else { continue };
        let changed_at = by.observed_at;
        for claim in retired
            .leaf
            .claims
            .claims
            .iter()
            .filter(|c| c.attribute == mark.attribute && believed(c) && admits(&c.subject))
        {
            let at = fact_of(&mut subjects, claim);
            let fact =
                &mut subjects.get_mut(&(!claim.subject.is_me(), claim.subject.key.clone())).expect("made").facts[at];
            // The ending the newer memory said is this change, told better by the value.
            fact.history.retain(|h| !(h.leaf == mark.by && h.rule == "ended"));
            fact.history.push(ProfileChange {
                value: claim.value.clone(),
                leaf: retired.leaf.id.clone(),
                said_at: retired.leaf.observed_at,
                changed_by: mark.by.clone(),
                changed_at,
                rule: mark.rule.as_str(),
            });
        }
    }
    let mut out: Vec<SubjectProfile> = subjects.into_values().collect();
    for subject in &mut out {
        for fact in &mut subject.facts {
            settle(fact);
        }
        subject.facts.retain(|f| !f.current.is_empty() || !f.history.is_empty());
        subject.facts.sort_by_key(|f| (catalogue_rank(&f.attribute), f.attribute.clone()));
    }
    out.retain(|s| !s.facts.is_empty());
    Profile { subjects: out }
}

/// Orders a fact's values and history, merges a value said twice into its first saying, and
/// marks the older values of an attribute that holds one as possibly outdated by the newest.
fn settle(fact: &mut ProfileFact) {
    fact.current.sort_by(|a, b| b.said_at.cmp(&a.said_at).then_with(|| b.leaf.cmp(&a.leaf)));
    let mut merged: Vec<ProfileValue> = Vec::new();
    for value in std::mem::take(&mut fact.current) {
        match merged.iter_mut().find(|m| compare(&m.value, &value.value) == ValueMatch::Same) {
            // Said again: the newest wording stands, dated from when it was first said.
            Some(kept) => {
                if value.said_at < kept.said_at {
                    kept.said_at = value.said_at;
                    kept.since = kept.since.take().or(value.since);
                }
            }
            None => merged.push(value),
        }
    }
    if fact.holds == Holds::One
        && let Some((newest, older)) = merged.split_first_mut()
    {
        for value in older {
            let kept = value.kept_with.contains(&newest.lineage) || newest.kept_with.contains(&value.lineage);
            if !kept {
                value.possibly_outdated_by = Some(newest.leaf.clone());
            }
        }
    }
    fact.current = merged;
    fact.history.sort_by(|a, b| b.changed_at.cmp(&a.changed_at).then_with(|| b.leaf.cmp(&a.leaf)));
    fact.history.dedup_by(|a, b| a.leaf == b.leaf && a.value == b.value);
}

/// Whether a claim says something of a catalogue attribute: a loose measure or an ending of an
/// attribute the reader could not name is evidence for reconciliation, not a belief to show.
fn believed(claim: &Claim) -> bool {
    claim.definition().is_some()
}

/// The subject a question asks everything about ("what do you know about Kofi?", "tell me
/// about my sister", "who is Priya?", "关于小美你知道什么", "张伟是谁"), as asked, or `None`
/// for a question about one thing. Only these whole-subject forms: a question that names an
/// attribute ("where does Kofi live?") is answered by the memories that say it.
pub fn asked_about(question: &str) -> Option<String> {
    let q = question.trim().trim_end_matches(['?', '？', '.', '。', '!', '！']).trim();
    const OPENINGS: &[&str] = &[
        "what do you know about ",
        "what do we know about ",
        "what does memory know about ",
        "what do you remember about ",
        "what do we have on ",
        "tell me about ",
        "tell me everything about ",
        "everything about ",
        "who is ",
        "who's ",
        "profile of ",
    ];
    for opening in OPENINGS {
        // The openings are ASCII: compared without case on the question's own bytes, which a
        // lowercased copy would not keep (a Kelvin sign lowercases to a shorter "k").
        let Some(head) = q.get(..opening.len()) else { continue };
        if head.eq_ignore_ascii_case(opening) {
            let name = q[opening.len()..].trim();
            return (!name.is_empty() && name.split_whitespace().count() <= 4).then(|| name.to_owned());
        }
    }
    for (before, after) in [("关于", "你知道什么"), ("关于", "知道什么"), ("", "是谁"), ("", "的情况")]
    {
        if let Some(rest) = q.strip_prefix(before)
            && let Some(name) = rest.strip_suffix(after)
        {
            let name = name.trim();
            return (!name.is_empty() && name.chars().count() <= 12).then(|| name.to_owned());
        }
    }
    None
}

/// Whether a claim about `subject` belongs to the profile of the subject `asked` names.
pub fn is_about(asked: &str, subject: &Subject) -> bool {
    Wanted::new(asked).admits(subject)
}

/// The key a subject asked for is compared by: [`ME`](super::ME) for the speaker ("me", "I",
/// "the user", "我", "用户"), else the name's key.
pub fn asked_subject_key(asked: &str) -> String {
    Wanted::new(asked).key
}

/// A profile in a few lines a model reads: one per attribute, its current values with the day
/// each was said, what it replaced, and a doubt where one value has a rival.
pub fn lines(profile: &Profile) -> Vec<String> {
    let mut out = all_lines(profile);
    if out.len() > PACK_PROFILE_LINES {
        let more = out.len() - PACK_PROFILE_LINES;
        out.truncate(PACK_PROFILE_LINES);
        out.push(format!("… and {more} more (`arbor profile` shows them all)"));
    }
    out
}

/// How many attributes a pack's profile lines name at most, and how long a line may grow:
/// the profile is the answer in brief, and the pack's budget is for the evidence.
const PACK_PROFILE_LINES: usize = 12;
const PACK_PROFILE_LINE_CHARS: usize = 400;

fn all_lines(profile: &Profile) -> Vec<String> {
    let day = |at: &Timestamp| at.strftime("%Y-%m-%d").to_string();
    let mut out = Vec::new();
    for subject in &profile.subjects {
        for fact in &subject.facts {
            let chinese = fact.current.iter().any(|v| crate::han::mostly_han(&v.value));
            let name = if chinese { &fact.name_zh } else { &fact.name };
            let now: Vec<String> = fact
                .current
                .iter()
                .map(|v| {
                    let doubt = if v.possibly_outdated_by.is_some() { ", may be outdated" } else { "" };
                    let sensitive = if v.sensitive { ", sensitive: confirm before repeating" } else { "" };
                    format!("{} ({}, {}{doubt}{sensitive})", v.value, day(&v.said_at), v.leaf)
                })
                .collect();
            let mut line = format!(
                "{} — {name}: {}",
                subject.subject.name,
                if now.is_empty() { "nothing current".to_owned() } else { now.join("; ") }
            );
            if let Some(change) = fact.history.first().filter(|c| c.leaf != c.changed_by) {
                let how = if change.rule == "ended" { "ended" } else { "replaced" };
                let was = change.value.as_deref().unwrap_or("a value");
                line.push_str(&format!(" (was {was}, {how} {})", day(&change.changed_at)));
            } else if let Some(change) = fact.history.first() {
                let was = change.value.as_deref().unwrap_or("a value");
                line.push_str(&format!(" ({was} ended {})", day(&change.changed_at)));
            }
            out.push(crate::text::truncate_chars(&line, PACK_PROFILE_LINE_CHARS));
        }
    }
    out
}

fn catalogue_rank(attribute: &str) -> usize {
    let base = attribute.split_once(':').map_or(attribute, |(base, _)| base);
    super::CATALOGUE.iter().position(|d| d.id == base).unwrap_or(usize::MAX)
}

/// The subject a caller asked for: the speaker ("me", "I", "the user", "我", "用户"), or a name,
/// matching its subject ("Kofi" is Kofi and Kofi Mensah, not Kofi's sister).
struct Wanted {
    key: String,
}

impl Wanted {
    fn new(asked: &str) -> Wanted {
        // "my sister" is the speaker's sister, as the readers key her.
        let lower = asked.trim().to_lowercase();
        if let Some(relation) = lower.strip_prefix("my ").map(str::trim).filter(|r| !r.is_empty()) {
            return Wanted { key: format!("{}'s {}", super::ME, subject_key(relation)) };
        }
        let key = subject_key(asked);
        let me = matches!(key.as_str(), "me" | "i" | "myself" | "user" | "the user" | "我" | "用户" | "@me");
        Wanted { key: if me { super::ME.to_owned() } else { key } }
    }

    fn admits(&self, subject: &Subject) -> bool {
        let asked = Subject { key: self.key.clone(), name: self.key.clone() };
        asked.same_as(subject) != super::SameSubject::No
    }
}

#[cfg(test)]
mod tests;
