//! `arbor jobs`: background work run, listed and retried by hand.

use std::path::Path;

use anyhow::{Result, bail};
use arbor_compose as compose;

use crate::output::print_json;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum JobsCommand {
    /// Run pending jobs (sealing, indexing, purging) until none are left.
    Run {
        /// Stop after this many jobs.
        #[arg(long)]
        max: Option<usize>,
    },
    /// Rebuild the search index from the store and the bodies; after an embedder change,
    /// re-embed every node in place (retrieval keeps serving meanwhile) and finish the switch.
    Reindex,
    /// Archive candidates nobody confirmed that are old and of low salience (the decay policy):
    /// out of the review queue, never deleted; `arbor restore <id>` brings one back.
    Archive,
}

pub(crate) async fn jobs(root: &Path, command: JobsCommand, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    match command {
        JobsCommand::Run { max } => {
            let report = run_jobs_to_the_end(&opened.arbor, max).await?;
            if json {
                return print_json(&report);
            }
            crate::output::outln!(
                "{} jobs completed ({} seals: {} summaries sealed, {} re-sealed, {} roots; {} indexed, {} unindexed, {} bodies purged), {} failed",
                report.completed,
                report.seals,
                report.summaries_sealed,
                report.summaries_resealed,
                report.roots_refreshed,
                report.indexed,
                report.unindexed,
                report.bodies_purged,
                report.failed
            );
            if report.leases_reclaimed > 0 {
                crate::output::outln!(
                    "took back {} jobs leased by runners that are no longer running",
                    report.leases_reclaimed
                );
            }
            if report.deferred > 0 {
                crate::output::outln!(
                    "{} jobs kept meeting other writers and were put back; they run on the next `arbor jobs run`",
                    report.deferred
                );
            }
            for lease in &report.held_elsewhere {
                crate::output::outln!(
                    "{} job {} is being run by {} (leased until {})",
                    lease.kind.as_str(),
                    lease.id,
                    lease.worker,
                    lease.until
                );
            }
            if report.failed > 0 {
                bail!("{} jobs failed; they will be retried (see `arbor fsck`)", report.failed);
            }
        }
        JobsCommand::Reindex if opened.config.previous_embedder.is_some() => {
            let indexed = opened.arbor.reembed().await?;
            // Only now do the old vectors stop being searched: every node has a new one.
            let mut config = compose::StoreConfig::load(root)?;
            let previous = config.previous_embedder.take();
            compose::save_config(root, &config)?;
            if json {
                return print_json(&serde_json::json!({ "indexed": indexed, "embedder": config.embedder }));
            }
            crate::output::outln!("re-embedded {indexed} documents with {}", config.embedder.describe());
            if let Some(previous) = previous {
                crate::output::outln!("no longer searching vectors from {}", previous.describe());
            }
        }
        JobsCommand::Archive => {
            let archived = opened.arbor.archive_unused_candidates().await?;
            if json {
                return print_json(&serde_json::json!({ "archived": archived }));
            }
            crate::output::outln!("archived {} unused candidates", archived.len());
            for id in archived {
                crate::output::outln!("  {id}");
            }
        }
        JobsCommand::Reindex => {
            let indexed = opened.arbor.rebuild_index().await?;
            if json {
                return print_json(&serde_json::json!({ "indexed": indexed }));
            }
            crate::output::outln!("rebuilt the index: {indexed} documents");
        }
    }
    Ok(())
}

/// Runs jobs until none is left to run now, and then the ones that lost races with other
/// writers (put back for a moment, not failed) once they come due: "until none are left"
/// means that, not "until another process got in the way". Jobs that failed wait for their
/// retry, which `arbor jobs run` later (or a server's runner) takes.
pub(crate) async fn run_jobs_to_the_end(arbor: &arbor_app::Arbor, max: Option<usize>) -> Result<arbor_app::JobsReport> {
    let mut total = arbor.run_jobs(max).await?;
    for _ in 0..10 {
        if max.is_some_and(|m| total.completed + total.failed >= m) {
            break;
        }
        // Only a job due within moments is waited for: one put back after a race (here or in
        // another process), not one backing off from real failures.
        let wait = total.next_due.map(|due| due.duration_since(arbor_domain::time::Timestamp::now()));
        let Some(wait) = wait.filter(|w| *w <= jiff::SignedDuration::from_secs(3)) else { break };
        tokio::time::sleep(wait.unsigned_abs() + std::time::Duration::from_millis(50)).await;
        let more = arbor.run_jobs(max.map(|m| m.saturating_sub(total.completed + total.failed))).await?;
        total.completed += more.completed;
        total.failed += more.failed;
        total.seals += more.seals;
        total.summaries_sealed += more.summaries_sealed;
        total.summaries_resealed += more.summaries_resealed;
        total.roots_refreshed += more.roots_refreshed;
        total.indexed += more.indexed;
        total.unindexed += more.unindexed;
        total.bodies_purged += more.bodies_purged;
        total.leases_reclaimed += more.leases_reclaimed;
        total.deferred = more.deferred;
        total.held_elsewhere = more.held_elsewhere;
        total.next_due = more.next_due;
    }
    Ok(total)
}
