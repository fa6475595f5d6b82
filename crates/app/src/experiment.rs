//! Experiments [design §experiments]: starting (or rerunning) one freezes — or explicitly reuses — a
//! snapshot of its readable long-term memory, recorded in the experiment's audit log; settling
//! one proposes, as candidates in the experiment's namespace, the memories of the runs that
//! succeeded with evidence (`experiment::settling_runs`). Nothing a run learned becomes current
//! without a person.

use arbor_domain::experiment::{
    ChosenSnapshot, NotSettled, RUN_BOUND, RunOutcome, SETTLED, SNAPSHOT_REUSED, SNAPSHOT_TAKEN, SettlingRuns,
    SnapshotChoice, choose_snapshot, run_binding, settlement_evaluation, settling_runs,
};
use arbor_domain::id::{LeafId, ScopeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::POLICY_VERSION;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;
use arbor_ports::{AuditEvent, Change, ChangeSet, TreeLeafQuery};
use serde::Serialize;

use crate::promote::{Promotion, PromotionReceipt};
use crate::{AppError, AppResult, Arbor};

/// The most audit events read back to find an experiment's snapshots.
const SNAPSHOT_LOOKBACK: usize = 100_000;

/// What starting a run of an experiment chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExperimentStart {
    pub experiment: ScopeId,
    pub run: ScopeId,
    /// The instant its runs read the long-term layers as of (`--frozen-at`).
    pub frozen_at: Timestamp,
    /// Whether this froze a new snapshot (else it reuses an earlier one).
    pub new_snapshot: bool,
}

/// What a settlement proposed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settlement {
    pub experiment: ScopeId,
    pub frozen_at: Timestamp,
    /// New candidates in the experiment's namespace, one per memory of a settling run.
    pub proposed: Vec<PromotionReceipt>,
    /// Memories of settling runs the experiment already holds (an earlier settlement).
    pub already_held: Vec<LeafId>,
    /// Memories of settling runs that stay in their run: restricted ones.
    pub kept_in_run: Vec<LeafId>,
    /// Runs that settle nothing, and why.
    pub not_settled: Vec<(ScopeId, NotSettled)>,
}

impl Arbor {
    /// The instants `experiment` froze snapshots at, oldest first.
    pub async fn experiment_snapshots(&self, experiment: &ScopeId) -> AppResult<Vec<Timestamp>> {
        let namespace = Namespace::experiment(experiment.clone());
        let events = self.ports.store.audit_events(std::slice::from_ref(&namespace), SNAPSHOT_LOOKBACK).await?;
        let mut taken: Vec<Timestamp> = events.iter().filter(|e| e.action == SNAPSHOT_TAKEN).map(|e| e.at).collect();
        taken.sort();
        taken.dedup();
        Ok(taken)
    }

    /// Starts `run` (or a rerun) of `experiment`: a new snapshot now, or an earlier one named
    /// explicitly. The choice and the run's binding to it are recorded in the audit log.
    pub async fn start_experiment(
        &self,
        experiment: &ScopeId,
        run: &ScopeId,
        choice: SnapshotChoice,
    ) -> AppResult<ExperimentStart> {
        let taken = self.experiment_snapshots(experiment).await?;
        let now = self.now();
        let ChosenSnapshot { frozen_at, new } = choose_snapshot(experiment, choice, &taken, now)
            .map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        let experiment_ns = Namespace::experiment(experiment.clone());
        let choice = match new {
            true => self.experiment_event(SNAPSHOT_TAKEN, &experiment_ns, frozen_at, None),
            false => self.experiment_event(SNAPSHOT_REUSED, &experiment_ns, now, None),
        };
        let binding = run_binding(experiment, run, frozen_at);
        let bound = self.experiment_event(RUN_BOUND, &Namespace::run(run.clone()), now, Some(binding));
        self.ports.store.commit(ChangeSet::new().with(Change::Audit(choice)).with(Change::Audit(bound))).await?;
        Ok(ExperimentStart { experiment: experiment.clone(), run: run.clone(), frozen_at, new_snapshot: new })
    }

    /// Whether `run` was started in `experiment` on the snapshot `frozen_at`.
    async fn run_was_bound(&self, experiment: &ScopeId, run: &ScopeId, frozen_at: Timestamp) -> AppResult<bool> {
        let binding = run_binding(experiment, run, frozen_at);
        let events = self.ports.store.audit_events(&[Namespace::run(run.clone())], SNAPSHOT_LOOKBACK).await?;
        Ok(events.iter().any(|e| e.action == RUN_BOUND && e.content_sha256.as_ref() == Some(&binding)))
    }

    /// Settles `experiment`'s runs that read the snapshot `frozen_at`: each active memory of a
    /// run that succeeded with evidence is proposed in the experiment's namespace as a
    /// candidate, its provenance naming the run's memory, the evidence and `operator`.
    pub async fn settle_experiment(
        &self,
        experiment: &ScopeId,
        project: Option<ScopeId>,
        frozen_at: Timestamp,
        outcomes: &[RunOutcome],
        operator: &str,
    ) -> AppResult<Settlement> {
        let SettlingRuns { settling, not_settled } =
            settling_runs(outcomes).map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        let taken = self.experiment_snapshots(experiment).await?;
        choose_snapshot(experiment, SnapshotChoice::Reuse { at: frozen_at }, &taken, frozen_at)
            .map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        // Every reported run must have been started in this experiment on this snapshot,
        // checked before anything is proposed.
        for outcome in outcomes {
            if !self.run_was_bound(experiment, &outcome.run, frozen_at).await? {
                return Err(AppError::InvalidRequest(format!(
                    "run {} was not started in experiment {experiment} on the snapshot of {frozen_at}; nothing was settled",
                    outcome.run
                )));
            }
        }
        let target = Namespace::experiment(experiment.clone());
        let mut settlement = Settlement {
            experiment: experiment.clone(),
            frozen_at,
            proposed: Vec::new(),
            already_held: Vec::new(),
            kept_in_run: Vec::new(),
            not_settled: not_settled.into_iter().map(|(o, why)| (o.run.clone(), why)).collect(),
        };
        for outcome in settling {
            let chain = self.read_chain(&TrustedContext::ExperimentRun {
                run: outcome.run.clone(),
                experiment: experiment.clone(),
                project: project.clone(),
                frozen_at,
            })?;
            let run = chain.write_namespace().clone();
            let promotion = |id: &LeafId| Promotion {
                id: id.clone(),
                reason: format!("experiment {experiment} settled"),
                evaluation: Some(settlement_evaluation(outcome)),
                operator: operator.to_owned(),
            };
            let active = TreeLeafQuery { statuses: vec![LeafStatus::Active], ..TreeLeafQuery::default() };
            for tree in self.ports.store.trees(std::slice::from_ref(&run)).await? {
                for leaf in self.ports.store.tree_leaves(&run, &tree.tree_id, &active).await? {
                    if arbor_domain::promotion::check_promotable(leaf.sensitivity).is_err() {
                        settlement.kept_in_run.push(leaf.id);
                        continue;
                    }
                    if self.leaf_holding_fingerprint(&target, &leaf.tree_id, &leaf.fingerprint).await?.is_some() {
                        settlement.already_held.push(leaf.id);
                        continue;
                    }
                    let receipt = self.propose_in(&leaf, target.clone(), &promotion(&leaf.id)).await?;
                    settlement.proposed.push(receipt);
                }
            }
        }
        let event = self.experiment_event(SETTLED, &target, self.now(), None);
        self.ports.store.commit(ChangeSet::new().with(Change::Audit(event))).await?;
        Ok(settlement)
    }

    fn experiment_event(
        &self,
        action: &str,
        namespace: &Namespace,
        at: Timestamp,
        content: Option<arbor_domain::model::ContentHash>,
    ) -> AuditEvent {
        AuditEvent {
            at,
            action: action.to_owned(),
            namespace: namespace.clone(),
            node: None,
            content_sha256: content,
            actor: self.actor(),
            policy_version: POLICY_VERSION.to_owned(),
        }
    }
}
