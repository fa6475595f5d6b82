//! `arbor review`: the candidates waiting for a person, and the person's decisions — confirm
//! (the memory becomes current, superseding what it replaces), edit (a corrected candidate in
//! its place), reject (never retrieved, and not proposed again), or resolve a conflict (keep
//! both, set validity, supersede, reject); and the changes consolidation passes left for a
//! person, applied with `review apply`.

use std::path::Path;

use anyhow::Result;
use arbor_compose as compose;
use arbor_domain::conflict::ConflictResolution;
use arbor_domain::id::LeafId;
use arbor_domain::time::{Timestamp, Validity};

use crate::output::print_json;
use crate::scope::ScopeArgs;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ReviewCommand {
    /// List the candidates in scope, with source, kind, sensitivity and what confirming each
    /// would supersede.
    List {
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Confirm candidates: each becomes current, superseding what it replaces.
    Confirm {
        #[arg(required = true, value_name = "LEAF_ID")]
        ids: Vec<String>,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Edit a candidate before confirming it: the edited text becomes a new candidate and the
    /// original suggestion is rejected.
    Edit {
        #[arg(value_name = "LEAF_ID")]
        id: String,
        /// What the memory should say.
        #[arg(long)]
        text: String,
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Resolve a conflict — a candidate that would replace a current memory — in one of four
    /// ways: --keep-both, --supersede, --reject, or a validity: a --valid-to at or before the
    /// current memory's start records the new fact as earlier history (with any --valid-from);
    /// a --valid-from after that start, by now, has it take over then (the current one holds
    /// until that instant; a --valid-to, if given, must lie ahead).
    Resolve {
        #[arg(value_name = "LEAF_ID")]
        id: String,
        /// Both are true: the candidate becomes current on its own, replacing nothing.
        #[arg(long)]
        keep_both: bool,
        /// The candidate replaces the current memory (as `review confirm`).
        #[arg(long)]
        supersede: bool,
        /// The candidate is wrong (as `review reject`).
        #[arg(long)]
        reject: bool,
        /// When the candidate's fact began to hold (RFC 3339).
        #[arg(long, value_name = "TIME")]
        valid_from: Option<Timestamp>,
        /// When the candidate's fact stopped holding (RFC 3339).
        #[arg(long, value_name = "TIME")]
        valid_to: Option<Timestamp>,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// List the changes consolidation passes left for a person (a memory to retire in favour of
    /// another), still open: both memories are current.
    Proposals {
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Apply a change a consolidation pass left for a person: LEAF_ID is retired in favour of
    /// the memory the pass named, as history (nothing is deleted), with a report like a pass's.
    Apply {
        #[arg(value_name = "LEAF_ID")]
        id: String,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Reject candidates: never retrieved; the same suggestion is not proposed again.
    Reject {
        #[arg(required = true, value_name = "LEAF_ID")]
        ids: Vec<String>,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// List the memories a rule retired automatically (a newer memory proved them replaced),
    /// newest first, with the rule, the attribute and both values.
    Retired {
        /// Only those retired since this time (RFC 3339).
        #[arg(long, value_name = "TIME")]
        since: Option<Timestamp>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Undo an automatic retirement: LEAF_ID (as `review retired` lists it) becomes current again
    /// beside the memory that retired it, and no rule retires either for the other again.
    Restore {
        #[arg(value_name = "LEAF_ID")]
        id: String,
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

pub(crate) async fn run(root: &Path, command: ReviewCommand, json: bool) -> Result<()> {
    let opened = compose::open(root).await?;
    let arbor = &opened.arbor;
    match command {
        ReviewCommand::List { scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let items = arbor.pending_review(&chain).await?;
            if json {
                return print_json(&items);
            }
            let proposals = compose::left_for_review(arbor, root, &chain).await?;
            if items.is_empty() && proposals.is_empty() {
                crate::output::outln!("nothing to review");
            }
            for item in &items {
                let leaf = &item.leaf;
                crate::output::outln!(
                    "{}  {} · {} · {} · {}",
                    leaf.id,
                    leaf.namespace,
                    leaf.tree_id,
                    leaf.kind,
                    leaf.sensitivity
                );
                crate::output::outln!("    {}", leaf.summary);
                crate::output::outln!("    source {} ({:?})", leaf.provenance.source.short(), leaf.provenance.actor);
                for old in &item.would_supersede {
                    crate::output::outln!("    would supersede {}: {}", old.id, old.summary);
                }
                if let Some(cause) = item.conflict {
                    crate::output::outln!(
                        "    {} — resolve it with `arbor review resolve {}`",
                        cause.reason(),
                        leaf.id
                    );
                }
            }
            print_proposals(&proposals);
            Ok(())
        }
        ReviewCommand::Proposals { scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let proposals = compose::left_for_review(arbor, root, &chain).await?;
            if json {
                return print_json(&proposals);
            }
            if proposals.is_empty() {
                crate::output::outln!("no consolidation proposal waits for a person");
            }
            print_proposals(&proposals);
            Ok(())
        }
        ReviewCommand::Apply { id, scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let pass = compose::apply_left_for_review(arbor, root, &chain, &LeafId::parse(&id)?).await?;
            if json {
                let mut value = serde_json::to_value(&pass.run)?;
                value["report"] = serde_json::json!(pass.report.as_ref().map(|p| p.display().to_string()));
                return print_json(&value);
            }
            for proposal in pass.run.namespaces.iter().flat_map(|n| &n.proposals) {
                crate::output::outln!(
                    "{} {}: retired in favour of {}",
                    proposal.proposal.kind.as_str(),
                    proposal.proposal.retire,
                    proposal.proposal.keep
                );
            }
            if let Some(path) = &pass.report {
                crate::output::outln!("report: {}", path.display());
            }
            Ok(())
        }
        ReviewCommand::Retired { since, limit, scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let items = arbor.retired(&chain, since, limit).await?;
            if json {
                return print_json(&items);
            }
            if items.is_empty() {
                crate::output::outln!(
                    "no memory was retired by a rule{}",
                    since.map(|s| format!(" since {s}")).unwrap_or_default()
                );
            }
            for item in &items {
                let name = arbor_domain::claims::catalogue::english_name(&item.attribute);
                let value = |v: &Option<String>| v.as_deref().map_or_else(|| "—".to_owned(), |v| format!("\"{v}\""));
                crate::output::outln!(
                    "{}  {} · retired {} · {} ({})",
                    item.leaf.id,
                    item.leaf.namespace,
                    item.at,
                    name,
                    item.rule
                );
                crate::output::outln!("    was {}: {}", value(&item.was), item.leaf.summary);
                match &item.by {
                    Some(by) => crate::output::outln!("    now {} by {}: {}", value(&item.now), by.id, by.summary),
                    None => crate::output::outln!("    by a memory this scope cannot read"),
                }
                crate::output::outln!("    undo with `arbor review restore {}`", item.leaf.id);
            }
            Ok(())
        }
        ReviewCommand::Restore { id, scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let receipt = arbor.restore_retired(&chain, &LeafId::parse(&id)?).await?;
            if json {
                return print_json(&receipt);
            }
            crate::output::outln!(
                "restored {}: current again as {} in {}, kept beside {} (no rule retires either for the other)",
                receipt.restored,
                receipt.leaf_id,
                receipt.namespace,
                receipt.kept_with
            );
            Ok(())
        }
        ReviewCommand::Edit { id, text, title, scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let receipt = arbor.edit_candidate(&chain, &LeafId::parse(&id)?, &text, title).await?;
            if json {
                return print_json(&receipt);
            }
            crate::output::outln!(
                "edited {id}: now candidate {} in {} / {}",
                receipt.leaf_id,
                receipt.namespace,
                receipt.tree_id
            );
            Ok(())
        }
        ReviewCommand::Resolve { id, keep_both, supersede, reject, valid_from, valid_to, scope } => {
            let validity = (valid_from.is_some() || valid_to.is_some())
                .then(|| Validity::new(valid_from, valid_to))
                .transpose()?;
            let chosen = [keep_both, supersede, reject, validity.is_some()].into_iter().filter(|c| *c).count();
            if chosen != 1 {
                anyhow::bail!(
                    "choose exactly one resolution: --keep-both, --supersede, --reject, or a validity (--valid-from / --valid-to)"
                );
            }
            let resolution = match validity {
                Some(validity) => ConflictResolution::SetValidity { validity },
                None if keep_both => ConflictResolution::KeepBoth,
                None if supersede => ConflictResolution::Supersede,
                None => ConflictResolution::Reject,
            };
            let chain = arbor.read_chain(&scope.context()?)?;
            let receipt = arbor.resolve_conflict(&chain, &LeafId::parse(&id)?, resolution).await?;
            print_receipts(std::slice::from_ref(&receipt), json)
        }
        ReviewCommand::Confirm { ids, scope } => decide(arbor, &scope, &ids, true, json).await,
        ReviewCommand::Reject { ids, scope } => decide(arbor, &scope, &ids, false, json).await,
    }
}

async fn decide(arbor: &arbor_app::Arbor, scope: &ScopeArgs, ids: &[String], confirm: bool, json: bool) -> Result<()> {
    let chain = arbor.read_chain(&scope.context()?)?;
    // Every id is checked before any decision is written: a list with one bad id decides
    // nothing.
    let mut ids: Vec<LeafId> = ids.iter().map(|id| LeafId::parse(id)).collect::<Result<_, _>>()?;
    let mut seen = std::collections::BTreeSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    let pending: std::collections::BTreeSet<LeafId> =
        arbor.pending_review(&chain).await?.into_iter().map(|item| item.leaf.id).collect();
    if let Some(id) = ids.iter().find(|id| !pending.contains(*id)) {
        let why = match arbor.show(&chain, id.as_str(), arbor_app::Disclosure::Everything).await {
            Ok(arbor_app::NodeView::Leaf { record, .. }) => format!("{id} is {}, not a candidate", record.status),
            Ok(arbor_app::NodeView::Summary { .. }) => format!("{id} is a summary, not a candidate"),
            Err(error) => error.to_string(),
        };
        anyhow::bail!("{why}; nothing was decided");
    }
    let mut receipts = Vec::with_capacity(ids.len());
    for id in &ids {
        let receipt = if confirm { arbor.confirm(&chain, id).await? } else { arbor.reject(&chain, id).await? };
        receipts.push(receipt);
    }
    print_receipts(&receipts, json)
}

/// The changes consolidation left for a person, each with the command that applies it.
fn print_proposals(proposals: &[compose::LeftForReview]) {
    for p in proposals {
        crate::output::outln!(
            "{}  left by consolidation ({}): retire it in favour of {} (report {})",
            p.retire,
            p.kind.as_str(),
            p.keep,
            p.report
        );
        crate::output::outln!("    apply it with `arbor review apply {}`", p.retire);
    }
}

fn print_receipts(receipts: &[arbor_app::ReviewReceipt], json: bool) -> Result<()> {
    if json {
        return print_json(&receipts);
    }
    for receipt in receipts {
        crate::output::out!("{} {} in {} / {}", receipt.status, receipt.leaf_id, receipt.namespace, receipt.tree_id);
        if receipt.superseded.is_empty() {
            crate::output::outln!();
        } else {
            let old: Vec<String> = receipt.superseded.iter().map(ToString::to_string).collect();
            crate::output::outln!(" (superseded {})", old.join(", "));
        }
    }
    Ok(())
}
