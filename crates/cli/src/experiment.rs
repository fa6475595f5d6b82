//! `arbor experiment`: start a run (a new snapshot of the long-term layers, or an earlier one
//! reused — always said explicitly), list an experiment's snapshots, and settle its runs
//! (memories of runs that succeeded with evidence proposed as candidates of the experiment).

use std::path::Path;

use anyhow::{Result, bail};
use arbor_compose as compose;
use arbor_domain::experiment::{RunOutcome, SnapshotChoice};
use arbor_domain::id::ScopeId;
use arbor_domain::time::Timestamp;

use crate::output::print_json;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ExperimentCommand {
    /// Start a run or a rerun: choose exactly one of --new-snapshot, --reuse-snapshot TIME or
    /// --latest-snapshot. Prints the --frozen-at the run reads with.
    Start {
        #[arg(long, value_name = "ID")]
        experiment: String,
        /// The run being started; settlement accepts only runs started here.
        #[arg(long, value_name = "ID")]
        run: String,
        /// Freeze the long-term layers now.
        #[arg(long)]
        new_snapshot: bool,
        /// Read what an earlier run read: the snapshot taken at TIME.
        #[arg(long, value_name = "TIME")]
        reuse_snapshot: Option<Timestamp>,
        /// Reuse the most recent snapshot.
        #[arg(long)]
        latest_snapshot: bool,
    },
    /// The snapshots an experiment has taken, oldest first.
    Snapshots {
        #[arg(long, value_name = "ID")]
        experiment: String,
    },
    /// Settle the runs that read one snapshot: each active memory of a run that succeeded with
    /// evidence becomes a candidate of the experiment, for a person to confirm.
    Settle {
        #[arg(long, value_name = "ID")]
        experiment: String,
        /// The project the experiment belongs to.
        #[arg(long, value_name = "ID")]
        project: Option<String>,
        /// The snapshot the runs read.
        #[arg(long, value_name = "TIME")]
        frozen_at: Timestamp,
        /// A run that succeeded, with one piece of evidence (repeat for more): RUN=EVIDENCE.
        #[arg(long, value_name = "RUN=EVIDENCE")]
        succeeded: Vec<String>,
        /// A run that failed (repeatable).
        #[arg(long, value_name = "RUN")]
        failed: Vec<String>,
        /// Who settles it, for the proposals' provenance.
        #[arg(long, default_value = "cli")]
        operator: String,
    },
}

pub(crate) async fn run(root: &Path, command: ExperimentCommand, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let arbor = &opened.arbor;
    match command {
        ExperimentCommand::Start { experiment, run, new_snapshot, reuse_snapshot, latest_snapshot } => {
            let choice = match (new_snapshot, reuse_snapshot, latest_snapshot) {
                (true, None, false) => SnapshotChoice::New,
                (false, Some(at), false) => SnapshotChoice::Reuse { at },
                (false, None, true) => SnapshotChoice::Latest,
                _ => bail!("choose exactly one of --new-snapshot, --reuse-snapshot TIME or --latest-snapshot"),
            };
            let started = arbor.start_experiment(&ScopeId::parse(&experiment)?, &ScopeId::parse(&run)?, choice).await?;
            if json {
                return print_json(&started);
            }
            let how = if started.new_snapshot { "new snapshot" } else { "reusing the snapshot" };
            crate::output::outln!(
                "experiment {} run {}: {how} of {}",
                started.experiment,
                started.run,
                started.frozen_at
            );
            crate::output::outln!(
                "act as the run with: --experiment {} --run {} --frozen-at {}",
                started.experiment,
                started.run,
                started.frozen_at
            );
            Ok(())
        }
        ExperimentCommand::Snapshots { experiment } => {
            let taken = arbor.experiment_snapshots(&ScopeId::parse(&experiment)?).await?;
            if json {
                return print_json(&taken);
            }
            if taken.is_empty() {
                crate::output::outln!("experiment {experiment} has no snapshot yet");
            }
            for at in taken {
                crate::output::outln!("{at}");
            }
            Ok(())
        }
        ExperimentCommand::Settle { experiment, project, frozen_at, succeeded, failed, operator } => {
            let outcomes = outcomes(&succeeded, &failed)?;
            let project = project.as_deref().map(ScopeId::parse).transpose()?;
            let experiment = ScopeId::parse(&experiment)?;
            let settled = arbor.settle_experiment(&experiment, project, frozen_at, &outcomes, &operator).await?;
            if json {
                return print_json(&settled);
            }
            crate::output::outln!("experiment {} settled (snapshot {})", settled.experiment, settled.frozen_at);
            for proposed in &settled.proposed {
                crate::output::outln!(
                    "  proposed {} (from {} in {})",
                    proposed.leaf_id,
                    proposed.from,
                    proposed.from_namespace
                );
            }
            for id in &settled.already_held {
                crate::output::outln!("  already held {id}");
            }
            for id in &settled.kept_in_run {
                crate::output::outln!("  kept in its run (restricted) {id}");
            }
            for (run, why) in &settled.not_settled {
                crate::output::outln!("  run {run} settles nothing: {}", why.reason());
            }
            if !settled.proposed.is_empty() {
                crate::output::outln!(
                    "confirm with `arbor review confirm <LEAF_ID> --namespace experiment:{}`",
                    settled.experiment
                );
            }
            Ok(())
        }
    }
}

/// The run outcomes the flags describe: evidence grouped by run, in the order runs are named.
fn outcomes(succeeded: &[String], failed: &[String]) -> Result<Vec<RunOutcome>> {
    let mut outcomes: Vec<RunOutcome> = Vec::new();
    for flag in succeeded {
        let (run, evidence) = flag.split_once('=').unwrap_or((flag.as_str(), ""));
        let run = ScopeId::parse(run.trim())?;
        let outcome = match outcomes.iter_mut().position(|o| o.run == run) {
            Some(i) => &mut outcomes[i],
            None => {
                outcomes.push(RunOutcome { run, succeeded: true, evidence: Vec::new() });
                outcomes.last_mut().expect("just pushed")
            }
        };
        if !evidence.trim().is_empty() {
            outcome.evidence.push(evidence.trim().to_owned());
        }
    }
    for run in failed {
        outcomes.push(RunOutcome { run: ScopeId::parse(run.trim())?, succeeded: false, evidence: Vec::new() });
    }
    Ok(outcomes)
}
