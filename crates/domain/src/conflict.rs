//! Conflicts and time [design §conflicts]: when a new memory about the subject of a current one
//! may replace it at once, when it must wait as a conflict for a person, and what each of the
//! person's answers (`ConflictResolution`) does to the validity of both.
//!
//! A newer statement from a source at least as authoritative is an update: it supersedes the
//! current memory, which keeps its history with `valid_to` set (`Supersession`). Anything else
//! is a conflict and is never applied silently: the new memory waits as a candidate that names
//! the current one (`supersedes`), the current one stays current, and a person chooses to keep
//! both, set validity, supersede, or reject.

use serde::{Deserialize, Serialize};

use crate::admission::is_manual_entry;
use crate::model::{Actor, LeafRecord, SourceRef};
use crate::time::{Timestamp, Validity};

/// How far a source is trusted to replace what another source said, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceAuthority {
    /// Copied in from elsewhere (an import, an integration's record).
    Imported,
    /// Seen in the course of work: a message, a task, a run, a conclusion, a promotion.
    Observed,
    /// Typed in by a person as a memory, or a person's correction.
    Stated,
}

impl SourceAuthority {
    /// How much weight a memory carries, by who said it and through what. Only a person's own
    /// entry ([`is_manual_entry`]) is `Stated`: an assistant or tool claiming the `user_entry`
    /// source ranks as what it is, an observation.
    pub fn of(actor: Actor, source: &SourceRef) -> SourceAuthority {
        match source {
            SourceRef::UserEntry if is_manual_entry(actor, source) => SourceAuthority::Stated,
            SourceRef::UserEntry => SourceAuthority::Observed,
            SourceRef::Import { .. } | SourceRef::Integration { .. } => SourceAuthority::Imported,
            SourceRef::Message { .. }
            | SourceRef::Save
            | SourceRef::Task { .. }
            | SourceRef::Run { .. }
            | SourceRef::ExperimentConclusion { .. }
            | SourceRef::Promotion { .. } => SourceAuthority::Observed,
        }
    }
}

/// What the conflict rule needs to know about a memory: since when it claims to hold, and who
/// said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimView {
    /// `valid_from`, or when it was observed.
    pub holds_from: Timestamp,
    pub authority: SourceAuthority,
}

impl ClaimView {
    pub fn new(validity: &Validity, observed_at: Timestamp, actor: Actor, source: &SourceRef) -> ClaimView {
        ClaimView {
            holds_from: validity.valid_from.unwrap_or(observed_at),
            authority: SourceAuthority::of(actor, source),
        }
    }

    /// What a stored leaf claims.
    pub fn of_leaf(leaf: &LeafRecord) -> ClaimView {
        ClaimView::new(&leaf.validity, leaf.observed_at, leaf.provenance.actor, &leaf.provenance.source)
    }
}

/// Why a new memory waits as a conflict instead of replacing the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictCause {
    /// It claims to hold from before the current memory did: an older statement arriving late
    /// (an import, a replayed message) must not overwrite a newer one.
    HoldsFromEarlier,
    /// It comes from a less authoritative source than the current memory (an import against
    /// what a person stated).
    LessAuthoritative,
}

impl ConflictCause {
    /// Why the new memory waits, as its approval reason.
    pub fn reason(self) -> &'static str {
        match self {
            ConflictCause::HoldsFromEarlier => {
                "conflict: it holds from before the current memory about this subject; a person decides"
            }
            ConflictCause::LessAuthoritative => {
                "conflict: its source is less authoritative than the current memory's; a person decides"
            }
        }
    }
}

/// Decides whether `new`, about the same subject as `current`, is an update (`None`) or a
/// conflict.
pub fn conflict_between(new: &ClaimView, current: &ClaimView) -> Option<ConflictCause> {
    if new.authority < current.authority {
        Some(ConflictCause::LessAuthoritative)
    } else if new.holds_from < current.holds_from {
        Some(ConflictCause::HoldsFromEarlier)
    } else {
        None
    }
}

/// A person's answer to a conflict [design §conflicts].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resolution", rename_all = "snake_case")]
pub enum ConflictResolution {
    /// Both are true: the new memory becomes current on its own, replacing nothing.
    KeepBoth,
    /// Both are true at different times: the new memory holds over `validity` and the current
    /// one's validity is trimmed where they meet (`plan_validity`).
    SetValidity { validity: Validity },
    /// The new memory replaces the current one (a confirmation). When it claims to hold from
    /// before the current one began, it holds from the current one's start (`takeover_start`)
    /// and the current one never held in valid time (it stays readable by id, superseded) —
    /// that is what saying the newcomer was right means; earlier history is untouched. To keep
    /// both in time, set validity instead.
    Supersede,
    /// The new memory is wrong: rejected, and not proposed again.
    Reject,
}

/// When a memory confirmed over `replaced` (the current ones it supersedes, by when each held
/// from) starts to hold: its own start, but never before the latest of theirs. A newcomer
/// claiming to hold from earlier replaces the current memory entirely (that one never held),
/// without reaching back over history the current one had already replaced.
pub fn takeover_start(new: &Validity, new_observed: Timestamp, replaced: &[Timestamp]) -> Validity {
    let own = new.valid_from.unwrap_or(new_observed);
    let start = replaced.iter().copied().fold(own, Timestamp::max);
    match new.valid_to {
        Some(to) if to <= start => *new,
        _ => Validity { valid_from: Some(start), valid_to: new.valid_to },
    }
}

/// What setting validity does, decided against the current memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidityPlan {
    /// The new fact ended before the current one began: recorded as history the current one
    /// superseded, answering `as_of` questions about its interval.
    EarlierHistory,
    /// The new fact takes over at `from`: the current one is valid until then, and superseded.
    TakesOverAt { from: Timestamp },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidityRefusal {
    #[error(
        "valid_from {from} is in the future: the current memory stays current until a person records the change \
         when it happens"
    )]
    StartsInFuture { from: Timestamp },
    #[error(
        "valid_to {to} has passed: taking over from valid_from and ending then would leave no memory about this \
         subject current now; leave valid_to out, or record the new fact as earlier history"
    )]
    EndsBeforeNow { to: Timestamp },
    #[error(
        "the validity given overlaps the current memory's, which holds from {current_from}: give a valid_to at or before \
         it to record the new fact as earlier history, or a valid_from after it for the new fact to take over then"
    )]
    Overlaps { current_from: Timestamp },
    #[error("the validity given overlaps an earlier version about this subject, valid {from} to {to}")]
    OverlapsHistory { from: String, to: String },
}

/// Whether two half-open intervals share an instant (an empty interval shares none).
fn share_an_instant(a: &Validity, b: &Validity) -> bool {
    let empty = |v: &Validity| matches!((v.valid_from, v.valid_to), (Some(f), Some(t)) if f >= t);
    let starts_before_end = |x: &Validity, y: &Validity| match (x.valid_from, y.valid_to) {
        (Some(from), Some(to)) => from < to,
        _ => true,
    };
    !empty(a) && !empty(b) && starts_before_end(a, b) && starts_before_end(b, a)
}

/// Where `new` sits against the current memory, which holds from `current_from`, and the
/// earlier versions about the same subject (`history`, their validity). Two facts about one
/// subject never hold at the same instant, and one always holds now: either the new one ended
/// by the time the current one began (and meets no earlier version), or it begins after the
/// current one did, by `now`, and still holds (the current one ends where it begins).
pub fn plan_validity(
    new: &Validity,
    current_from: Timestamp,
    history: &[Validity],
    now: Timestamp,
) -> Result<ValidityPlan, ValidityRefusal> {
    match (new.valid_from, new.valid_to) {
        (_, Some(to)) if to <= current_from => match history.iter().find(|old| share_an_instant(new, old)) {
            Some(old) => Err(ValidityRefusal::OverlapsHistory {
                from: old.valid_from.map_or_else(|| "always".to_owned(), |t| t.to_string()),
                to: old.valid_to.map_or_else(|| "now".to_owned(), |t| t.to_string()),
            }),
            None => Ok(ValidityPlan::EarlierHistory),
        },
        (Some(from), to) if from > current_from => match to {
            _ if from > now => Err(ValidityRefusal::StartsInFuture { from }),
            Some(to) if to <= now => Err(ValidityRefusal::EndsBeforeNow { to }),
            _ => Ok(ValidityPlan::TakesOverAt { from }),
        },
        _ => Err(ValidityRefusal::Overlaps { current_from }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn claim(from: i64, authority: SourceAuthority) -> ClaimView {
        ClaimView { holds_from: ts(from), authority }
    }

    #[test]
    fn a_newer_statement_at_least_as_authoritative_is_an_update() {
        use SourceAuthority::*;
        assert_eq!(conflict_between(&claim(200, Observed), &claim(100, Observed)), None);
        assert_eq!(conflict_between(&claim(200, Stated), &claim(100, Observed)), None);
        assert_eq!(conflict_between(&claim(100, Observed), &claim(100, Observed)), None, "same instant: an update");
        assert_eq!(
            conflict_between(&claim(50, Observed), &claim(100, Observed)),
            Some(ConflictCause::HoldsFromEarlier)
        );
        assert_eq!(
            conflict_between(&claim(200, Imported), &claim(100, Stated)),
            Some(ConflictCause::LessAuthoritative)
        );
    }

    #[test]
    fn a_takeover_never_reaches_back_past_what_it_replaces() {
        let since = |from: i64| Validity::starting(ts(from));
        assert_eq!(takeover_start(&since(50), ts(50), &[ts(100)]), since(100));
        assert_eq!(takeover_start(&since(150), ts(150), &[ts(100)]), since(150));
        assert_eq!(takeover_start(&Validity::ALWAYS, ts(70), &[]), since(70));
        let bounded = Validity::new(Some(ts(10)), Some(ts(60))).unwrap();
        assert_eq!(takeover_start(&bounded, ts(10), &[ts(100)]), bounded, "an interval over before: left as claimed");
    }

    #[test]
    fn sources_rank_by_who_said_it() {
        assert_eq!(SourceAuthority::of(Actor::User, &SourceRef::UserEntry), SourceAuthority::Stated);
        assert_eq!(
            SourceAuthority::of(Actor::User, &SourceRef::Import { origin: "x".into() }),
            SourceAuthority::Imported
        );
        let message = SourceRef::Message { conversation: None, message_id: "m1".into() };
        assert_eq!(SourceAuthority::of(Actor::User, &message), SourceAuthority::Observed);
        assert_eq!(SourceAuthority::of(Actor::Agent, &SourceRef::Save), SourceAuthority::Observed);
        for agent in [Actor::Assistant, Actor::Tool, Actor::System, Actor::Integration, Actor::Agent] {
            assert_eq!(
                SourceAuthority::of(agent, &SourceRef::UserEntry),
                SourceAuthority::Observed,
                "{agent:?} claiming a person's entry"
            );
        }
    }

    #[test]
    fn validity_is_history_before_the_current_fact_or_a_takeover_after_its_start() {
        let window = |from: Option<i64>, to: Option<i64>| Validity::new(from.map(ts), to.map(ts)).unwrap();
        let now = ts(500);
        let plan = |new: Validity| plan_validity(&new, ts(100), &[], now);
        assert_eq!(plan(window(Some(10), Some(100))), Ok(ValidityPlan::EarlierHistory));
        assert_eq!(plan(window(None, Some(90))), Ok(ValidityPlan::EarlierHistory));
        assert_eq!(plan(window(Some(150), None)), Ok(ValidityPlan::TakesOverAt { from: ts(150) }));
        assert_eq!(plan(window(Some(150), Some(900))), Ok(ValidityPlan::TakesOverAt { from: ts(150) }));
        assert_eq!(plan(window(Some(50), Some(150))), Err(ValidityRefusal::Overlaps { current_from: ts(100) }));
        assert!(plan(window(None, None)).is_err());
        assert!(plan(window(Some(100), None)).is_err(), "same start: they would overlap");
        assert_eq!(plan(window(Some(600), None)), Err(ValidityRefusal::StartsInFuture { from: ts(600) }));
        assert_eq!(plan(window(Some(150), Some(400))), Err(ValidityRefusal::EndsBeforeNow { to: ts(400) }));
        // Earlier history must not meet an earlier version either.
        let porto = window(Some(20), Some(100));
        assert!(matches!(
            plan_validity(&window(Some(10), Some(50)), ts(100), &[porto], now),
            Err(ValidityRefusal::OverlapsHistory { .. })
        ));
        assert_eq!(plan_validity(&window(Some(5), Some(20)), ts(100), &[porto], now), Ok(ValidityPlan::EarlierHistory));
        let never_held = Validity::stored(Some(ts(30)), Some(ts(30))).unwrap();
        assert_eq!(
            plan_validity(&window(Some(5), Some(90)), ts(100), &[never_held], now),
            Ok(ValidityPlan::EarlierHistory)
        );
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Whatever validity a person sets, afterwards no two facts about the subject hold at
        /// the same instant, and one of them holds now.
        #[test]
        fn a_plan_leaves_exactly_one_fact_holding_at_any_instant_and_one_now(
            from in proptest::option::of(0i64..1000), len in 1i64..1000, open in any::<bool>(),
            current_from in 0i64..1000, earlier in proptest::option::of((0i64..1000, 1i64..500)),
            probe in 0i64..3000,
        ) {
            let now = ts(1500);
            let to = if open { None } else { Some(from.unwrap_or(0) + len) };
            let new = Validity::new(from.map(ts), to.map(ts)).unwrap();
            let current = Validity::starting(ts(current_from));
            let history: Vec<Validity> = earlier
                .map(|(start, len)| Validity::stored(Some(ts(start)), Some(ts((start + len).min(current_from).max(start)))).unwrap())
                .into_iter()
                .collect();
            if let Ok(plan) = plan_validity(&new, ts(current_from), &history, now) {
                let current = match plan {
                    ValidityPlan::EarlierHistory => current,
                    ValidityPlan::TakesOverAt { from } => current.ended_at(from),
                };
                let holding = [&new, &current].into_iter().chain(&history).filter(|v| v.contains(ts(probe))).count();
                prop_assert!(holding <= 1, "{holding} facts hold at {probe}");
                prop_assert!(new.contains(now) || current.contains(now), "nothing holds now");
            }
        }

        /// The conflict rule is a pure comparison: an update is never less authoritative and
        /// never older than what it replaces.
        #[test]
        fn an_update_is_never_older_or_less_authoritative(a in 0i64..100, b in 0i64..100, x in 0usize..3, y in 0usize..3) {
            let rank = [SourceAuthority::Imported, SourceAuthority::Observed, SourceAuthority::Stated];
            let (new, current) = (claim(a, rank[x]), claim(b, rank[y]));
            if conflict_between(&new, &current).is_none() {
                prop_assert!(new.authority >= current.authority && new.holds_from >= current.holds_from);
            }
        }
    }
}
