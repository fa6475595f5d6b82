//! Experiment isolation [design §experiments]: which snapshot a (re)run reads, and which runs' memories an
//! experiment's settlement may propose as its conclusions.
//!
//! - Starting an experiment freezes a snapshot of its readable long-term memory: an instant,
//!   after which nothing new in the project and global layers is visible to its runs
//!   (`TrustedContext::ExperimentRun::frozen_at`).
//! - A rerun chooses explicitly between an existing snapshot and a new one (`SnapshotChoice`);
//!   reusing names a snapshot that was taken, never an arbitrary instant. Each run is bound to
//!   its experiment and snapshot when it starts (`run_binding`).
//! - Settlement proposes memories only from runs started in the experiment on that snapshot
//!   that succeeded *and* name their evidence (`settling_runs`); what it proposes are candidates a person confirms — the best run's
//!   temporary experience is never made current automatically.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::id::ScopeId;
use crate::model::ContentHash;
use crate::promotion::MAX_PROMOTION_NOTE_BYTES;
use crate::time::Timestamp;

/// Audit action that records a snapshot taken at the event's instant.
pub const SNAPSHOT_TAKEN: &str = "experiment.snapshot_taken";
/// Audit action that records a rerun reusing an earlier snapshot (at the rerun's instant; the
/// run's binding names the snapshot).
pub const SNAPSHOT_REUSED: &str = "experiment.snapshot_reused";
/// Audit action, in the run's namespace, binding a run to its experiment and snapshot: its
/// content hash is [`run_binding`].
pub const RUN_BOUND: &str = "experiment.run_bound";
/// Audit action of a settlement.
pub const SETTLED: &str = "experiment.settled";

/// The most evidence references one run may cite, and the longest reference.
pub const MAX_EVIDENCE: usize = 32;
pub const MAX_EVIDENCE_CHARS: usize = 500;

/// Which snapshot a run of an experiment reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "snapshot", rename_all = "snake_case")]
pub enum SnapshotChoice {
    /// Freeze the long-term layers now.
    New,
    /// Read what an earlier run of the same experiment read: the snapshot taken at `at`.
    Reuse { at: Timestamp },
    /// The most recent snapshot taken.
    Latest,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotRefusal {
    #[error("experiment {experiment} has no snapshot yet; start it with a new snapshot")]
    NoSnapshot { experiment: ScopeId },
    #[error("experiment {experiment} has no snapshot taken at {at}; its snapshots: {taken}")]
    Unknown { experiment: ScopeId, at: Timestamp, taken: String },
}

/// What a run's binding record hashes: the experiment, the run and the snapshot it reads. A
/// settlement accepts only runs whose binding it can recompute.
pub fn run_binding(experiment: &ScopeId, run: &ScopeId, frozen_at: Timestamp) -> ContentHash {
    ContentHash::of(format!("experiment:{experiment}/run:{run}@{frozen_at}").as_bytes())
}

/// The instant the runs will read as of, and whether it is a new snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChosenSnapshot {
    pub frozen_at: Timestamp,
    pub new: bool,
}

/// Resolves `choice` against the snapshots the experiment has taken (`taken`, any order).
pub fn choose_snapshot(
    experiment: &ScopeId,
    choice: SnapshotChoice,
    taken: &[Timestamp],
    now: Timestamp,
) -> Result<ChosenSnapshot, SnapshotRefusal> {
    match choice {
        SnapshotChoice::New => Ok(ChosenSnapshot { frozen_at: now, new: true }),
        SnapshotChoice::Latest => taken
            .iter()
            .max()
            .map(|at| ChosenSnapshot { frozen_at: *at, new: false })
            .ok_or_else(|| SnapshotRefusal::NoSnapshot { experiment: experiment.clone() }),
        SnapshotChoice::Reuse { at } if taken.contains(&at) => Ok(ChosenSnapshot { frozen_at: at, new: false }),
        SnapshotChoice::Reuse { at } => {
            let mut listed: Vec<String> = taken.iter().map(ToString::to_string).collect();
            listed.sort();
            if listed.is_empty() {
                return Err(SnapshotRefusal::NoSnapshot { experiment: experiment.clone() });
            }
            Err(SnapshotRefusal::Unknown { experiment: experiment.clone(), at, taken: listed.join(", ") })
        }
    }
}

/// How one run of an experiment ended, as its evaluator reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub run: ScopeId,
    pub succeeded: bool,
    /// What shows it succeeded: test runs, metrics, review links. A success without evidence
    /// settles nothing.
    #[serde(default)]
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettlementRefusal {
    #[error("a settlement needs at least one run outcome")]
    NoRuns,
    #[error("run {run} is reported twice")]
    DuplicateRun { run: ScopeId },
    #[error("run {run} cites {count} pieces of evidence; at most {MAX_EVIDENCE}")]
    TooMuchEvidence { run: ScopeId, count: usize },
    #[error("run {run}: each piece of evidence is one line of 1 to {MAX_EVIDENCE_CHARS} characters")]
    BadEvidence { run: ScopeId },
}

/// Why a reported run settles nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotSettled {
    Failed,
    NoEvidence,
}

impl NotSettled {
    pub fn reason(self) -> &'static str {
        match self {
            NotSettled::Failed => "the run failed",
            NotSettled::NoEvidence => "it succeeded but named no evidence",
        }
    }
}

/// Reported runs, split by whether settlement proposes their memories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettlingRuns<'a> {
    /// Succeeded, with evidence.
    pub settling: Vec<&'a RunOutcome>,
    /// The others, with the reason.
    pub not_settled: Vec<(&'a RunOutcome, NotSettled)>,
}

/// Checks the outcomes and splits them into [`SettlingRuns`].
pub fn settling_runs(outcomes: &[RunOutcome]) -> Result<SettlingRuns<'_>, SettlementRefusal> {
    if outcomes.is_empty() {
        return Err(SettlementRefusal::NoRuns);
    }
    let mut seen = BTreeSet::new();
    let (mut settling, mut not) = (Vec::new(), Vec::new());
    for outcome in outcomes {
        if !seen.insert(&outcome.run) {
            return Err(SettlementRefusal::DuplicateRun { run: outcome.run.clone() });
        }
        if outcome.evidence.len() > MAX_EVIDENCE {
            return Err(SettlementRefusal::TooMuchEvidence { run: outcome.run.clone(), count: outcome.evidence.len() });
        }
        let well_formed = |e: &String| {
            let chars = e.trim().chars().count();
            (1..=MAX_EVIDENCE_CHARS).contains(&chars) && !e.chars().any(char::is_control)
        };
        if !outcome.evidence.iter().all(well_formed) {
            return Err(SettlementRefusal::BadEvidence { run: outcome.run.clone() });
        }
        match (outcome.succeeded, outcome.evidence.is_empty()) {
            (true, false) => settling.push(outcome),
            (true, true) => not.push((outcome, NotSettled::NoEvidence)),
            (false, _) => not.push((outcome, NotSettled::Failed)),
        }
    }
    Ok(SettlingRuns { settling, not_settled: not })
}

/// The evaluation a settled run's proposals carry: that it succeeded and its evidence, within
/// the promotion note limit (cut at a character boundary, marked with an ellipsis).
pub fn settlement_evaluation(outcome: &RunOutcome) -> String {
    let full = format!("run {} succeeded; evidence: {}", outcome.run, outcome.evidence.join("; "));
    if full.len() <= MAX_PROMOTION_NOTE_BYTES {
        return full;
    }
    let mut cut = MAX_PROMOTION_NOTE_BYTES - '…'.len_utf8();
    while !full.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &full[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn run(id: &str, succeeded: bool, evidence: &[&str]) -> RunOutcome {
        RunOutcome {
            run: ScopeId::parse(id).unwrap(),
            succeeded,
            evidence: evidence.iter().map(|e| (*e).to_owned()).collect(),
        }
    }

    #[test]
    fn reruns_reuse_only_a_snapshot_that_was_taken() {
        let e = ScopeId::parse("e1").unwrap();
        let now = ts(900);
        assert_eq!(
            choose_snapshot(&e, SnapshotChoice::New, &[], now),
            Ok(ChosenSnapshot { frozen_at: now, new: true })
        );
        assert_eq!(
            choose_snapshot(&e, SnapshotChoice::Latest, &[ts(100), ts(300)], now),
            Ok(ChosenSnapshot { frozen_at: ts(300), new: false })
        );
        assert_eq!(
            choose_snapshot(&e, SnapshotChoice::Reuse { at: ts(100) }, &[ts(100), ts(300)], now),
            Ok(ChosenSnapshot { frozen_at: ts(100), new: false })
        );
        assert!(matches!(
            choose_snapshot(&e, SnapshotChoice::Reuse { at: ts(200) }, &[ts(100)], now),
            Err(SnapshotRefusal::Unknown { .. })
        ));
        assert!(matches!(
            choose_snapshot(&e, SnapshotChoice::Latest, &[], now),
            Err(SnapshotRefusal::NoSnapshot { .. })
        ));
    }

    #[test]
    fn only_successful_runs_with_evidence_settle() {
        let outcomes = [run("r1", true, &["ci/123 green"]), run("r2", true, &[]), run("r3", false, &["ci/124 red"])];
        let SettlingRuns { settling, not_settled: not } = settling_runs(&outcomes).unwrap();
        assert_eq!(settling.iter().map(|o| o.run.as_str()).collect::<Vec<_>>(), ["r1"]);
        assert_eq!(
            not.iter().map(|(o, why)| (o.run.as_str(), *why)).collect::<Vec<_>>(),
            [("r2", NotSettled::NoEvidence), ("r3", NotSettled::Failed)]
        );
        assert_eq!(settling_runs(&[]), Err(SettlementRefusal::NoRuns));
        assert!(matches!(
            settling_runs(&[run("r1", true, &["a"]), run("r1", false, &[])]),
            Err(SettlementRefusal::DuplicateRun { .. })
        ));
        assert!(matches!(settling_runs(&[run("r1", true, &["  "])]), Err(SettlementRefusal::BadEvidence { .. })));
        assert!(matches!(settling_runs(&[run("r1", true, &["a\nb"])]), Err(SettlementRefusal::BadEvidence { .. })));
    }

    #[test]
    fn a_settlement_evaluation_fits_a_promotion_note() {
        assert_eq!(
            settlement_evaluation(&run("r1", true, &["ci/1", "bench +4%"])),
            "run r1 succeeded; evidence: ci/1; bench +4%"
        );
        let long: Vec<String> = (0..MAX_EVIDENCE).map(|i| format!("{i}é").repeat(40)).collect();
        let outcome = RunOutcome { run: ScopeId::parse("r1").unwrap(), succeeded: true, evidence: long };
        let evaluation = settlement_evaluation(&outcome);
        assert!(evaluation.len() <= MAX_PROMOTION_NOTE_BYTES && evaluation.ends_with('…'));
        assert!(crate::promotion::check_promotion_notes("settled", Some(&evaluation), "op").is_ok());
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Every reported run lands on exactly one side, and a settling run always succeeded
        /// and cites evidence.
        #[test]
        fn every_run_is_settled_or_explained(flags in proptest::collection::vec((any::<bool>(), 0usize..3), 1..8)) {
            let outcomes: Vec<RunOutcome> = flags
                .iter()
                .enumerate()
                .map(|(i, (ok, n))| RunOutcome {
                    run: ScopeId::parse(&format!("r{i}")).unwrap(),
                    succeeded: *ok,
                    evidence: (0..*n).map(|k| format!("evidence {k}")).collect(),
                })
                .collect();
            let SettlingRuns { settling, not_settled: not } = settling_runs(&outcomes).unwrap();
            prop_assert_eq!(settling.len() + not.len(), outcomes.len());
            prop_assert!(settling.iter().all(|o| o.succeeded && !o.evidence.is_empty()));
        }
    }
}
