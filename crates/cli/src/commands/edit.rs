//! A person's edits: `forget`, `correct`, `restore` and `promote`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use arbor_compose as compose;
use arbor_domain::id::{LeafId, Version};
use serde::Serialize;

use crate::output::print_json;
use crate::scope::ScopeArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct ForgetArgs {
    /// The leaf to forget.
    id: String,
    /// Also forget every copy promotion made of it in the layers above (project, global, …),
    /// so its words leave every layer they were carried to.
    #[arg(long)]
    with_copies: bool,
    /// Forget only this version, keeping the memory's other versions (by default every
    /// version goes: the corrections and the text they replaced).
    #[arg(long)]
    only_this_version: bool,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub(crate) async fn forget(root: &Path, args: ForgetArgs, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let id = LeafId::parse(&args.id)?;
    let scope = if args.only_this_version {
        arbor_app::ForgetScope::OnlyThisVersion
    } else {
        arbor_app::ForgetScope::WholeMemory
    };
    let mut receipts = match args.with_copies {
        true => opened.arbor.forget_with_copies_scoped(&chain, &id, scope).await?,
        false => vec![opened.arbor.forget_scoped(&chain, &id, scope).await?],
    };
    let copies = receipts.split_off(1);
    let receipt = receipts.remove(0);
    let jobs = opened.arbor.run_jobs(None).await?;
    let forgotten: Vec<String> =
        std::iter::once(&receipt).chain(&copies).flat_map(|r| r.versions.iter().map(|v| v.to_string())).collect();
    // The forget itself is done; a copy that cannot be checked is named by `arbor fsck`.
    let damaged_copies_removed = compose::erase_from_set_aside_databases(root, &forgotten).unwrap_or_else(|error| {
        tracing::warn!(
            error = %error.with_causes(),
            "could not check the damaged databases a rebuild set aside; `arbor fsck` names them"
        );
        Vec::new()
    });
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            receipt: &'a arbor_app::ForgetReceipt,
            copies: &'a [arbor_app::ForgetReceipt],
            jobs: arbor_app::JobsReport,
            damaged_copies_removed: &'a [PathBuf],
        }
        return print_json(&Output {
            receipt: &receipt,
            copies: &copies,
            jobs,
            damaged_copies_removed: &damaged_copies_removed,
        });
    }
    crate::output::outln!("forgot {} in {} / {}", receipt.leaf_id, receipt.namespace, receipt.tree_id);
    crate::output::outln!("  versions forgotten:    {}", receipt.versions.len());
    crate::output::outln!("  index entries removed: {}", receipt.unindexed.len());
    crate::output::outln!("  body files deleted:    {}", receipt.bodies_deleted);
    crate::output::outln!(
        "  summaries purged:      {} (re-sealed without it: {})",
        receipt.purged_summaries.len(),
        jobs.summaries_resealed
    );
    if receipt.tree_dissolved {
        crate::output::outln!("  tree removed:          nothing else was in it");
    } else {
        crate::output::outln!("  tombstone keeps:       fingerprint {}", receipt.fingerprint);
    }
    for copy in &copies {
        crate::output::outln!("  and its promoted copy {} in {}", copy.leaf_id, copy.namespace);
    }
    for file in &damaged_copies_removed {
        crate::output::outln!(
            "  damaged copy removed:  {} (set aside by a rebuild, it held this memory and cannot be edited)",
            arbor_domain::text::terminal_safe(&file.display().to_string())
        );
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct CorrectArgs {
    /// The memory's current leaf id.
    id: String,
    /// The version you read (`arbor show` prints it); anything else is refused as stale.
    #[arg(long)]
    version: u32,
    /// What the memory should say.
    #[arg(long)]
    text: String,
    /// A new title (default: taken from the text).
    #[arg(long)]
    title: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
}

fn version(value: u32) -> Result<Version> {
    Version::new(value).ok_or_else(|| anyhow::anyhow!("versions start at 1"))
}

fn print_correction(verb: &str, receipt: &arbor_app::CorrectionReceipt, json: bool) -> Result<()> {
    if json {
        return print_json(receipt);
    }
    crate::output::outln!(
        "{verb}: {} v{} replaces {} v{} in {} / {}",
        receipt.leaf_id,
        receipt.version,
        receipt.replaces,
        receipt.replaced_version,
        receipt.namespace,
        receipt.tree_id
    );
    Ok(())
}

/// `arbor correct`: a new version of a memory, bound to the version read.
pub(crate) async fn correct(root: &Path, args: CorrectArgs, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let correction = arbor_app::Correction {
        title: args.title,
        ..arbor_app::Correction::by_person(LeafId::parse(&args.id)?, version(args.version)?, args.text)
    };
    let receipt = opened.arbor.correct(&chain, &correction).await?;
    print_correction("corrected", &receipt, json)
}

#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    /// A replaced (superseded) version to make current again, or an archived memory to bring
    /// back.
    id: String,
    /// For a replaced version: the memory's current version, as you read it (for a memory
    /// another memory replaced, so that none of its versions is current: its latest version);
    /// anything else is refused as stale. Without it, `id` must be archived.
    #[arg(long = "current-version")]
    current_version: Option<u32>,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor restore`: an old version's text, written again as the memory's next version; or an
/// archived memory brought back (current again if it had been, else a candidate).
pub(crate) async fn restore(root: &Path, args: RestoreArgs, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let id = LeafId::parse(&args.id)?;
    let Some(current_version) = args.current_version else {
        let receipt = opened.arbor.restore_archived(&chain, &id).await?;
        if json {
            return print_json(&receipt);
        }
        crate::output::outln!(
            "restored {} as {} in {} / {}",
            receipt.leaf_id,
            receipt.status,
            receipt.namespace,
            receipt.tree_id
        );
        return Ok(());
    };
    let receipt = opened.arbor.restore(&chain, &id, version(current_version)?).await?;
    print_correction("restored", &receipt, json)
}

#[derive(Debug, clap::Args)]
pub(crate) struct PromoteArgs {
    /// The memory to promote (or, with --rollback, the promoted copy to take back).
    id: String,
    /// Why it deserves the broader layer (required to promote).
    #[arg(long, required_unless_present = "rollback")]
    reason: Option<String>,
    /// How it was evaluated: runs that succeeded, a test, a review.
    #[arg(long)]
    evaluation: Option<String>,
    /// Who decides [default: $USER].
    #[arg(long)]
    operator: Option<String>,
    /// Confirm the promoted candidate at once (you are the person confirming it).
    #[arg(long, conflicts_with = "rollback")]
    confirm: bool,
    /// Take back a promotion: the promoted copy is archived; the original was never touched.
    #[arg(long)]
    rollback: bool,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor promote`: a memory proposed one layer up the chain (run -> automation -> project ->
/// global, experiment -> project), as a candidate there; or a promotion taken back.
pub(crate) async fn promote(root: &Path, args: PromoteArgs, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let arbor = &opened.arbor;
    let chain = arbor.read_chain(&args.scope.context()?)?;
    let id = LeafId::parse(&args.id)?;
    if args.rollback {
        let archived = arbor.rollback_promotion(&chain, &id).await?;
        if json {
            return print_json(&archived);
        }
        crate::output::outln!("rolled back: {} is {} in {}", archived.id, archived.status, archived.namespace);
        return Ok(());
    }
    let operator = args.operator.or_else(|| std::env::var("USER").ok()).unwrap_or_else(|| "operator".to_owned());
    let promotion =
        arbor_app::Promotion { id, reason: args.reason.unwrap_or_default(), evaluation: args.evaluation, operator };
    let receipt = arbor.promote(&chain, &promotion).await?;
    let confirmed = if args.confirm { Some(arbor.confirm(&chain, &receipt.leaf_id).await?) } else { None };
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            promotion: &'a arbor_app::PromotionReceipt,
            confirmation: Option<arbor_app::ReviewReceipt>,
        }
        return print_json(&Output { promotion: &receipt, confirmation: confirmed });
    }
    let status = confirmed.as_ref().map(|c| c.status).unwrap_or(receipt.status);
    crate::output::outln!(
        "promoted {} ({}) to {} as {} ({})",
        receipt.from,
        receipt.from_namespace,
        receipt.namespace,
        receipt.leaf_id,
        status
    );
    Ok(())
}
