//! Health [design §health]: how much of a store repeats itself, how much is history, how many
//! of its summaries wait to be sealed again, how long suggestions have waited for a person and
//! how many bytes each current memory costs — per tree and per namespace — and the
//! `HealthThresholds` past which each figure is a warning.
//!
//! The app counts the figures from the rows and the bodies (`app::health`); what they mean
//! lives here. Duplicates are counted by the rule consolidation merges by
//! ([`SameMemory::repeats`]), so a store said to hold duplicates holds what a pass would merge.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::consolidation::SameMemory;
use crate::heuristics::SAME_MEMORY_OVERLAP;
use crate::time::Timestamp;

/// What a tree (or a namespace, or the store: figures add up) holds, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figures {
    /// Current memories.
    pub active: usize,
    /// Replaced versions, kept as history.
    pub superseded: usize,
    /// Suggestions waiting for a person.
    pub candidates: usize,
    /// When the longest-waiting suggestion was written.
    pub oldest_candidate: Option<Timestamp>,
    /// Set aside, restorable.
    pub archived: usize,
    /// Current memories that say again what an earlier current memory of their namespace
    /// says ([`repeating`]).
    pub duplicates: usize,
    /// Summaries that are read or wait to be (current, stale, purged).
    pub summaries: usize,
    /// Of those, the ones something below changed under, waiting to be sealed again.
    pub summaries_awaiting_reseal: usize,
    /// Bytes of every body document kept: every version, suggestion and summary.
    pub body_bytes: u64,
}

impl Figures {
    /// Adds `other`'s counts to these (a namespace is the sum of its trees).
    pub fn absorb(&mut self, other: &Figures) {
        self.active += other.active;
        self.superseded += other.superseded;
        self.candidates += other.candidates;
        self.oldest_candidate = match (self.oldest_candidate, other.oldest_candidate) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.archived += other.archived;
        self.duplicates += other.duplicates;
        self.summaries += other.summaries;
        self.summaries_awaiting_reseal += other.summaries_awaiting_reseal;
        self.body_bytes += other.body_bytes;
    }

    /// The share of current memories that repeat another.
    pub fn duplicate_rate(&self) -> f64 {
        share(self.duplicates, self.active)
    }

    /// The share of current and replaced versions that are history.
    pub fn superseded_share(&self) -> f64 {
        share(self.superseded, self.active + self.superseded)
    }

    /// The share of summaries waiting to be sealed again.
    pub fn stale_summary_share(&self) -> f64 {
        share(self.summaries_awaiting_reseal, self.summaries)
    }

    /// Bytes kept per current memory; every byte when nothing is current.
    pub fn bytes_per_active(&self) -> u64 {
        self.body_bytes / self.active.max(1) as u64
    }

    /// How long the longest-waiting suggestion has waited at `now`, in whole days.
    pub fn oldest_candidate_days(&self, now: Timestamp) -> Option<i64> {
        self.oldest_candidate.map(|at| (now.as_second() - at.as_second()).max(0) / 86_400)
    }
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

/// Where each figure becomes a warning. The reasons for each number are in the design
/// ([design §health]); a store's owner may set others in `arbor.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HealthThresholds {
    /// More than this share of current memories repeating another.
    pub max_duplicate_rate: f64,
    /// More than this share of versions being history.
    pub max_superseded_share: f64,
    /// More than this share of summaries waiting to be sealed again.
    pub max_stale_summary_share: f64,
    /// A suggestion waiting longer than this many days.
    pub max_candidate_wait_days: i64,
    /// More than this many body bytes kept per current memory.
    pub max_bytes_per_active: u64,
}

impl Default for HealthThresholds {
    fn default() -> HealthThresholds {
        HealthThresholds {
            max_duplicate_rate: 0.05,
            max_superseded_share: 0.8,
            max_stale_summary_share: 0.25,
            max_candidate_wait_days: 14,
            max_bytes_per_active: 16 * 1024,
        }
    }
}

/// A figure past its threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "warning", rename_all = "snake_case")]
pub enum Warning {
    Duplicates { rate: f64, duplicates: usize },
    History { share: f64, superseded: usize },
    StaleSummaries { share: f64, awaiting: usize },
    WaitingCandidates { oldest_days: i64, candidates: usize },
    Bloat { bytes_per_active: u64 },
}

impl Warning {
    /// What the warning means, and what to do about it.
    pub fn advice(&self) -> String {
        match self {
            Warning::Duplicates { rate, duplicates } => format!(
                "{duplicates} current memories ({:.0}%) say again what another says: `arbor consolidate` merges \
                 repeats written since its last pass; older ones are for a person to forget",
                rate * 100.0
            ),
            Warning::History { share, superseded } => format!(
                "{superseded} versions ({:.0}%) are history: something rewrites the same memories over and over",
                share * 100.0
            ),
            Warning::StaleSummaries { share, awaiting } => format!(
                "{awaiting} summaries ({:.0}%) wait to be sealed again: is the job runner (`arbor jobs run`) running?",
                share * 100.0
            ),
            Warning::WaitingCandidates { oldest_days, candidates } => {
                format!("{candidates} suggestions wait for a person, the oldest {oldest_days} days: `arbor review`")
            }
            Warning::Bloat { bytes_per_active } => format!(
                "{bytes_per_active} bytes are kept per current memory: history and summaries outweigh what is current"
            ),
        }
    }
}

impl HealthThresholds {
    /// The figures past their thresholds at `now`.
    pub fn warnings(&self, figures: &Figures, now: Timestamp) -> Vec<Warning> {
        let mut warnings = Vec::new();
        if figures.duplicate_rate() > self.max_duplicate_rate {
            warnings.push(Warning::Duplicates { rate: figures.duplicate_rate(), duplicates: figures.duplicates });
        }
        if figures.superseded_share() > self.max_superseded_share {
            warnings.push(Warning::History { share: figures.superseded_share(), superseded: figures.superseded });
        }
        if figures.stale_summary_share() > self.max_stale_summary_share {
            let awaiting = figures.summaries_awaiting_reseal;
            warnings.push(Warning::StaleSummaries { share: figures.stale_summary_share(), awaiting });
        }
        if let Some(days) = figures.oldest_candidate_days(now).filter(|days| *days > self.max_candidate_wait_days) {
            warnings.push(Warning::WaitingCandidates { oldest_days: days, candidates: figures.candidates });
        }
        // A store of a few small memories has no bulk to judge: a summary over three short
        // notes can outweigh them without anything being wrong.
        if figures.body_bytes > self.max_bytes_per_active && figures.bytes_per_active() > self.max_bytes_per_active {
            warnings.push(Warning::Bloat { bytes_per_active: figures.bytes_per_active() });
        }
        warnings
    }
}

/// One current memory as the duplicate count reads it: its merge reading and when it was said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub reading: SameMemory,
    pub observed_at: Timestamp,
}

/// The positions in `memories` (the current memories of one namespace) of those that say again
/// what one said earlier says ([`SameMemory::repeats`]); the earliest of each group is the
/// original, so a memory said three times counts two duplicates.
///
/// Near linear in the memories rather than in their pairs: a pair can only repeat each other if
/// they name the same people and things and share one of the rarest words of each (prefix
/// filtering, [`prefix_len`]), in one fixed order of words (rarest first). Memories with the
/// same fingerprint meet by it.
pub fn repeating(memories: &[Said]) -> BTreeSet<usize> {
    let mut frequency: BTreeMap<&str, usize> = BTreeMap::new();
    for memory in memories {
        for word in &memory.reading.words {
            *frequency.entry(word).or_default() += 1;
        }
    }
    // Only memories naming the same people and things can repeat each other: they meet by
    // those names as well as by a word or the fingerprint.
    let mut meets: BTreeMap<(&BTreeSet<String>, Key<'_>), Vec<usize>> = BTreeMap::new();
    for (at, memory) in memories.iter().enumerate() {
        let named = &memory.reading.named;
        meets.entry((named, Key::Fingerprint(memory.reading.fingerprint.as_str()))).or_default().push(at);
        let mut words: Vec<&str> = memory.reading.words.iter().map(String::as_str).collect();
        words.sort_by_key(|word| (frequency[word], *word));
        for word in words.iter().take(prefix_len(words.len())) {
            meets.entry((named, Key::Word(word))).or_default().push(at);
        }
    }
    let order = |at: usize| (memories[at].observed_at, at);
    let mut repeats = BTreeSet::new();
    for group in meets.values() {
        let mut group = group.clone();
        group.sort_by_key(|&at| order(at));
        // Each memory against the earlier ones of its group, until one it repeats: a memory
        // counts once, however many it repeats.
        for (i, &later) in group.iter().enumerate() {
            if repeats.contains(&later) {
                continue;
            }
            if group[..i].iter().any(|&earlier| memories[later].reading.repeats(&memories[earlier].reading).is_some()) {
                repeats.insert(later);
            }
        }
    }
    repeats
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key<'a> {
    Fingerprint(&'a str),
    Word(&'a str),
}

/// How many of a set of `n` words (rarest first) a repeat must share one of: a repeat shares
/// at least `ceil(overlap × n)` of them (the overlap is of the larger set, so of this one at
/// least), so any `n - that + 1` hold one. The margin keeps a product that is whole in exact
/// arithmetic (0.85 × 20) from rounding up past it.
fn prefix_len(n: usize) -> usize {
    let shared = (f64::from(SAME_MEMORY_OVERLAP) * n as f64 - 1e-6).ceil().max(0.0) as usize;
    (n - shared.min(n) + 1).min(n)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::reconcile::Claim;
    use crate::testkit::proptest_config;
    use crate::text::fingerprint;

    fn said(text: &str, minute: i64) -> Said {
        Said {
            reading: SameMemory::of(&Claim::read(text), text, &fingerprint(text)),
            observed_at: Timestamp::from_second(1_700_000_000 + minute * 60).unwrap(),
        }
    }

    #[test]
    fn repeats_are_the_later_sayings_of_the_same_memory() {
        let memories = [
            said("Maya and Tom are allergic to peanuts.", 0),
            said("Omar's manager is Linda Park.", 1),
            said("Tom and Maya are allergic to peanuts.", 2),
            said("Maya and Tom are allergic to peanuts!", 3),
            // The same words about other people are another memory.
            said("Nora and Felix are allergic to peanuts.", 4),
            said("We ship the billing service on Fridays.", 5),
        ];
        assert_eq!(repeating(&memories), BTreeSet::from([2, 3]));
        // Order in the input does not matter: the earliest said is the original.
        let reversed: Vec<Said> = memories.iter().rev().cloned().collect();
        assert_eq!(repeating(&reversed), BTreeSet::from([2, 3]), "positions 3 and 2 of the reversed list");
    }

    /// Thousands of short memories sharing a common word ("likes") are compared by their rare
    /// words, not all against all.
    #[test]
    fn many_short_memories_are_not_compared_pairwise() {
        let memories: Vec<Said> = (0..3000).map(|i| said(&format!("likes flavour{i}"), i)).collect();
        assert!(repeating(&memories).is_empty());
        assert_eq!(prefix_len(2), 1);
        assert_eq!(prefix_len(6), 1);
        assert_eq!(prefix_len(7), 2, "6 of 7 is 0.857: one of any two");
        assert_eq!(prefix_len(20), 4, "17 of 20 is exactly 0.85");
        assert_eq!(prefix_len(0), 0);
    }

    #[test]
    fn rates_and_thresholds() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let days_ago = |days: i64| Timestamp::from_second(1_700_000_000 - days * 86_400).unwrap();
        let healthy = Figures {
            active: 100,
            superseded: 20,
            candidates: 3,
            oldest_candidate: Some(days_ago(2)),
            duplicates: 1,
            summaries: 10,
            summaries_awaiting_reseal: 1,
            body_bytes: 100 * 900,
            ..Figures::default()
        };
        let thresholds = HealthThresholds::default();
        assert!(thresholds.warnings(&healthy, now).is_empty(), "{:?}", thresholds.warnings(&healthy, now));
        assert!((healthy.superseded_share() - 20.0 / 120.0).abs() < 1e-12);

        let sick = Figures {
            active: 10,
            superseded: 50,
            candidates: 4,
            oldest_candidate: Some(days_ago(30)),
            duplicates: 2,
            summaries: 4,
            summaries_awaiting_reseal: 2,
            body_bytes: 10 * 20_000,
            ..Figures::default()
        };
        let warnings = thresholds.warnings(&sick, now);
        assert_eq!(
            warnings,
            [
                Warning::Duplicates { rate: 0.2, duplicates: 2 },
                Warning::History { share: 50.0 / 60.0, superseded: 50 },
                Warning::StaleSummaries { share: 0.5, awaiting: 2 },
                Warning::WaitingCandidates { oldest_days: 30, candidates: 4 },
                Warning::Bloat { bytes_per_active: 20_000 },
            ]
        );
        assert!(warnings[3].advice().contains("the oldest 30 days"), "{}", warnings[3].advice());

        // An empty tree is healthy; a store with nothing current but a small summary is too.
        assert!(thresholds.warnings(&Figures::default(), now).is_empty());
        let small = Figures { summaries: 1, body_bytes: 2_000, ..Figures::default() };
        assert!(thresholds.warnings(&small, now).is_empty());
    }

    #[test]
    fn figures_add_up_and_keep_the_oldest_wait() {
        let at = |s: i64| Some(Timestamp::from_second(s).unwrap());
        let mut total = Figures { active: 2, oldest_candidate: at(500), body_bytes: 10, ..Figures::default() };
        total.absorb(&Figures { active: 3, oldest_candidate: at(100), duplicates: 1, ..Figures::default() });
        total.absorb(&Figures { candidates: 1, ..Figures::default() });
        assert_eq!((total.active, total.duplicates, total.body_bytes, total.oldest_candidate), (5, 1, 10, at(100)));
    }

    fn brute_force(memories: &[Said]) -> BTreeSet<usize> {
        (0..memories.len())
            .filter(|&later| {
                (0..memories.len()).any(|earlier| {
                    (memories[earlier].observed_at, earlier) < (memories[later].observed_at, later)
                        && memories[later].reading.repeats(&memories[earlier].reading).is_some()
                })
            })
            .collect()
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// The prefix filter finds exactly the repeats comparing every pair finds, for short
        /// and long texts, with and without names.
        #[test]
        fn the_fast_count_is_the_pairwise_count(
            texts in proptest::collection::vec(
                (proptest::collection::vec(0usize..30, 0..26), 0i64..5),
                0..14,
            ),
        ) {
            const WORDS: [&str; 30] = [
                "peanuts", "allergic", "Maya", "Berlin", "moved", "office", "garden",
                "violin", "lessons", "friday", "billing", "service", "coffee", "tea",
                "Tom", "runbook", "wiki", "deploys", "staging", "cluster", "rebuilt",
                "review", "design", "thursday", "window", "seats", "flights", "cats",
                "Lisbon", "pipeline",
            ];
            let memories: Vec<Said> = texts
                .iter()
                .map(|(words, minute)| {
                    let text: Vec<&str> = words.iter().map(|&w| WORDS[w % 30]).collect();
                    said(&text.join(" "), *minute)
                })
                .collect();
            prop_assert_eq!(repeating(&memories), brute_force(&memories));
        }
    }
}
