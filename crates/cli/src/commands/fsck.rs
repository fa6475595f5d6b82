//! `arbor fsck`: the store checked against itself, and rebuilt from its markdown bodies.

use std::path::Path;

use anyhow::{Context, Result};
use arbor_compose as compose;
use serde::Serialize;

use crate::output::print_json;
use crate::render;

#[derive(Debug, clap::Args)]
pub(crate) struct FsckArgs {
    /// Repair what can be repaired without guessing.
    #[arg(long)]
    repair: bool,
    /// Re-create the rows of a database that lost them (missing, emptied or damaged) from the
    /// markdown bodies: every memory comes back, never more visible than it was written (a
    /// suggestion waits for a person again); the trees are sealed anew. A damaged SQLite file is
    /// moved aside first, never deleted.
    #[arg(long, conflicts_with = "repair")]
    rebuild_from_bodies: bool,
    /// Record each memory document a person edited as that memory's next version (their
    /// correction; the replaced version stays as history), then check the store. A document
    /// whose frontmatter no longer parses is reported with its line and left as it is.
    #[arg(long, conflicts_with = "rebuild_from_bodies")]
    adopt_edits: bool,
}

/// Returns whether the store is clean.
pub(crate) async fn fsck(root: &Path, args: FsckArgs, json: bool) -> Result<bool> {
    if args.rebuild_from_bodies {
        return rebuild_from_bodies(root, json).await;
    }
    let adoptions = if args.adopt_edits {
        let opened = compose::open(root).await?;
        let adoptions = opened.arbor.adopt_edits(&[], arbor_app::EditsBy::Person).await?;
        opened.arbor.run_jobs(None).await?;
        Some(adoptions)
    } else {
        None
    };
    let opened = compose::open_for_check(root, args.repair).await?;
    let mut report = opened.arbor.fsck(args.repair, &compose::writer_is_dead).await?;
    report.findings.extend(compose::set_aside_database_findings(root)?);
    if json {
        match adoptions {
            Some(adoptions) => print_json(&serde_json::json!({ "adopted_edits": adoptions, "fsck": report }))?,
            None => print_json(&report)?,
        }
    } else {
        if let Some(adoptions) = &adoptions {
            crate::output::out!("{}", render::adoptions(adoptions));
        }
        crate::output::out!("{}", render::fsck(&report));
    }
    Ok(report.is_clean())
}

/// `arbor fsck --rebuild-from-bodies`.
async fn rebuild_from_bodies(root: &Path, json: bool) -> Result<bool> {
    let config = compose::StoreConfig::load(root)?;
    let mut moved_aside = None;
    if config.backend == compose::Backend::Sqlite && compose::marked_damaged(root) {
        moved_aside = Some(compose::move_damaged_database_aside(root)?);
    }
    let opened = match compose::open_for_rebuild(root).await {
        Ok(opened) => opened,
        // A file too damaged to open at all: set aside, like one that failed its check.
        Err(error) if config.backend == compose::Backend::Sqlite && moved_aside.is_none() && is_damage(&error) => {
            moved_aside = Some(compose::move_damaged_database_aside(root)?);
            compose::open_for_rebuild(root).await?
        }
        Err(error) => return Err(error.into()),
    };
    // Damage nothing has looked for yet (no fsck since it happened): the engine's own check
    // finds it, and the file is set aside as if fsck had.
    let opened = if config.backend == compose::Backend::Sqlite && moved_aside.is_none() {
        let damaged = match opened.arbor.ports().store.check_integrity().await {
            Ok(integrity) => !integrity.engine.is_empty(),
            Err(arbor_ports::Error::Integrity { .. }) => true,
            // Busy, or the disk failing a read: no reason to set a healthy file aside.
            Err(error) => return Err(error).context("checking the database before a rebuild"),
        };
        if damaged {
            drop(opened);
            moved_aside = Some(compose::move_damaged_database_aside(root)?);
            compose::open_for_rebuild(root).await?
        } else {
            opened
        }
    } else {
        opened
    };
    // What consolidation retired is in its reports, not in the bodies.
    let retired = compose::recorded_retirements(root)?;
    let report = opened.arbor.rebuild_from_bodies(&retired).await?;
    let jobs = opened.arbor.run_jobs(None).await?;
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            rebuilt: &'a arbor_app::RebuildReport,
            damaged_database_moved_to: Option<String>,
            jobs: arbor_app::JobsReport,
        }
        print_json(&Output {
            rebuilt: &report,
            damaged_database_moved_to: moved_aside.map(|p| p.display().to_string()),
            jobs,
        })?;
        return Ok(report.unreadable.is_empty());
    }
    if let Some(aside) = &moved_aside {
        crate::output::outln!("the damaged database was moved to {}", aside.display());
    }
    crate::output::outln!(
        "rebuilt {} memories from their bodies ({} current, {} waiting for a person again) in {} trees, {} entities",
        report.leaves,
        report.active,
        report.candidates,
        report.trees,
        report.entities
    );
    crate::output::outln!(
        "sealed anew: {} summaries; {} old summary files replaced; {} indexed",
        jobs.summaries_sealed,
        report.summaries_replaced,
        jobs.indexed
    );
    for unreadable in &report.unreadable {
        crate::output::outln!("  not restored: {}: {}", unreadable.path, unreadable.reason);
    }
    if report.candidates > 0 {
        crate::output::outln!("review them with `arbor review list` (with the scope they belong to)");
    }
    Ok(report.unreadable.is_empty())
}

/// Whether opening failed on a damaged file, wherever in the chain of causes the damage was
/// found: at open (`ComposeError::Damaged`), or later by recovery or the index (an integrity
/// error of the port underneath).
fn is_damage(error: &compose::ComposeError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if matches!(error.downcast_ref::<compose::ComposeError>(), Some(compose::ComposeError::Damaged { .. }))
            || matches!(error.downcast_ref::<arbor_ports::Error>(), Some(arbor_ports::Error::Integrity { .. }))
        {
            return true;
        }
        cause = error.source();
    }
    false
}
