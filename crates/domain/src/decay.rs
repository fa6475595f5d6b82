//! Decay and archival [design §decay]: time first lowers a memory's rank, and only later sets an
//! unused suggestion aside — never a hard delete.
//!
//! - `DecayPolicy::rank_factor`: per kind, a half-life in days; a memory observed that long
//!   before the question's instant ranks at half its score, never below `floor`. Preferences,
//!   constraints and procedures never decay by time alone (`TIMELESS_KINDS`), whatever is
//!   configured. Nothing decays by default (measured; see `Default`): `episodes_age` ages
//!   events, tasks and reflections.
//! - `DecayPolicy::archivable`: a candidate nobody has confirmed, of low salience and untouched
//!   for `archive_candidates_after_days`, is archived: out of the review queue, restorable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lifecycle::LeafStatus;
use crate::model::{Confidence, MemoryKind};
use crate::time::Timestamp;

/// Kinds that never decay by time alone, whatever the configuration says.
pub const TIMELESS_KINDS: [MemoryKind; 3] = [MemoryKind::Preference, MemoryKind::Constraint, MemoryKind::Procedure];

const SECONDS_PER_DAY: f64 = 86_400.0;

/// How ranking decays with age, per kind, and when unused candidates are archived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DecayPolicy {
    /// Half-life in days per kind; kinds not listed do not decay.
    pub half_life_days: BTreeMap<MemoryKind, u32>,
    /// The lowest factor decay reaches: an old memory is demoted, never made unreachable.
    pub floor: f32,
    /// Candidates untouched this long are archived when their salience is below
    /// `archive_below_salience`.
    pub archive_candidates_after_days: u32,
    pub archive_below_salience: Confidence,
}

impl DecayPolicy {
    /// A policy in which episodes and plans age (a year for events, half that for
    /// reflections, a quarter for tasks), for hosts whose questions are mostly about now.
    pub fn episodes_age() -> DecayPolicy {
        DecayPolicy {
            half_life_days: [(MemoryKind::Event, 365), (MemoryKind::Task, 90), (MemoryKind::Reflection, 180)]
                .into_iter()
                .collect(),
            ..DecayPolicy::default()
        }
    }
}

impl Default for DecayPolicy {
    /// No kind decays by default. Measured: with `episodes_age` on the LoCoMo development
    /// split (`arbor eval locomo`, local embedder), R@10 fell from 74.2 to 66.8 (temporal
    /// questions 79.8 to 62.2) — questions about past conversations are asked long after them,
    /// and a per-kind penalty reorders evidence by kind rather than by relevance. Hosts opt in.
    fn default() -> Self {
        DecayPolicy {
            half_life_days: BTreeMap::new(),
            floor: 0.5,
            archive_candidates_after_days: 90,
            archive_below_salience: Confidence::saturating(0.5),
        }
    }
}

/// What archival looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArchiveView {
    pub status: LeafStatus,
    pub salience: Confidence,
    /// When it was proposed, or last used by a recorded retrieval, whichever is later.
    pub last_touched: Timestamp,
}

impl DecayPolicy {
    /// The factor (in `[floor, 1]`) a memory's rank is multiplied by, for a question asked as
    /// of `as_of` about a memory of `kind` observed at `observed_at`. A memory observed after
    /// `as_of` (a question about the past) does not decay.
    pub fn rank_factor(&self, kind: MemoryKind, observed_at: Timestamp, as_of: Timestamp) -> f32 {
        if TIMELESS_KINDS.contains(&kind) {
            return 1.0;
        }
        let Some(&half_life) = self.half_life_days.get(&kind).filter(|days| **days > 0) else {
            return 1.0;
        };
        let age_days = (as_of.as_second() - observed_at.as_second()).max(0) as f64 / SECONDS_PER_DAY;
        let factor = 0.5f64.powf(age_days / f64::from(half_life)) as f32;
        factor.max(self.floor.clamp(0.0, 1.0))
    }

    /// Whether any kind decays at all.
    pub fn decays_anything(&self) -> bool {
        self.half_life_days.iter().any(|(kind, days)| *days > 0 && !TIMELESS_KINDS.contains(kind))
    }

    /// Whether a leaf is an unused, low-salience candidate old enough to archive at `now`.
    pub fn archivable(&self, leaf: &ArchiveView, now: Timestamp) -> bool {
        let idle_days = (now.as_second() - leaf.last_touched.as_second()) as f64 / SECONDS_PER_DAY;
        leaf.status == LeafStatus::Candidate
            && leaf.salience < self.archive_below_salience
            && idle_days >= f64::from(self.archive_candidates_after_days)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn day(n: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + n * 86_400).unwrap()
    }

    #[test]
    fn episodes_decay_to_half_per_half_life_and_never_below_the_floor() {
        assert_eq!(DecayPolicy::default().rank_factor(MemoryKind::Event, day(0), day(5_000)), 1.0, "off by default");
        let policy = DecayPolicy::episodes_age();
        assert_eq!(policy.rank_factor(MemoryKind::Event, day(0), day(0)), 1.0);
        assert!((policy.rank_factor(MemoryKind::Task, day(0), day(90)) - 0.5).abs() < 1e-4);
        assert_eq!(policy.rank_factor(MemoryKind::Event, day(0), day(5_000)), 0.5, "the floor");
        assert_eq!(policy.rank_factor(MemoryKind::Event, day(10), day(0)), 1.0, "observed after as_of");
        assert_eq!(policy.rank_factor(MemoryKind::Fact, day(0), day(5_000)), 1.0);
    }

    #[test]
    fn timeless_kinds_ignore_a_configured_half_life() {
        let mut policy = DecayPolicy::default();
        for kind in MemoryKind::ALL {
            policy.half_life_days.insert(kind, 1);
        }
        for kind in TIMELESS_KINDS {
            assert_eq!(policy.rank_factor(kind, day(0), day(1_000)), 1.0, "{kind:?}");
        }
        assert_eq!(policy.rank_factor(MemoryKind::Decision, day(0), day(1_000)), 0.5);
    }

    #[test]
    fn only_old_unused_low_salience_candidates_are_archivable() {
        let policy = DecayPolicy::default();
        let view = |status, salience: f32, touched| ArchiveView {
            status,
            salience: Confidence::saturating(salience),
            last_touched: day(touched),
        };
        assert!(policy.archivable(&view(LeafStatus::Candidate, 0.2, 0), day(90)));
        assert!(!policy.archivable(&view(LeafStatus::Candidate, 0.2, 1), day(90)), "too recent");
        assert!(!policy.archivable(&view(LeafStatus::Candidate, 0.8, 0), day(900)), "salient");
        assert!(!policy.archivable(&view(LeafStatus::Active, 0.1, 0), day(900)), "only candidates");
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Decay only ever demotes, within `[floor, 1]`, and never promotes an older memory of
        /// the same kind over a newer one.
        #[test]
        fn decay_is_bounded_and_monotone(kind in 0usize..9, a in 0i64..4000, b in 0i64..4000, asked in 0i64..4000) {
            let policy = DecayPolicy::episodes_age();
            let kind = MemoryKind::ALL[kind];
            let (older, newer) = (a.min(b), a.max(b));
            let f_old = policy.rank_factor(kind, day(older), day(asked));
            let f_new = policy.rank_factor(kind, day(newer), day(asked));
            prop_assert!((policy.floor..=1.0).contains(&f_old));
            prop_assert!(f_old <= f_new);
        }
    }
}
