//! `arbor review`: the candidates waiting for a person, and the person's decisions — confirm
//! (the memory becomes current, superseding what it replaces), edit (a corrected candidate in
//! its place) or reject (never retrieved, and not proposed again).

use std::path::Path;

use anyhow::Result;
use arbor_domain::id::LeafId;

use crate::commands::print_json;
use crate::scope::ScopeArgs;
use crate::store;

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
    /// Reject candidates: never retrieved; the same suggestion is not proposed again.
    Reject {
        #[arg(required = true, value_name = "LEAF_ID")]
        ids: Vec<String>,
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

pub(crate) async fn run(root: &Path, command: ReviewCommand, json: bool) -> Result<()> {
    let opened = store::open(root).await?;
    let arbor = &opened.arbor;
    match command {
        ReviewCommand::List { scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let items = arbor.pending_review(&chain).await?;
            if json {
                return print_json(&items);
            }
            if items.is_empty() {
                println!("nothing to review");
            }
            for item in &items {
                let leaf = &item.leaf;
                println!("{}  {} · {} · {} · {}", leaf.id, leaf.namespace, leaf.tree_id, leaf.kind, leaf.sensitivity);
                println!("    {}", leaf.summary);
                println!("    source {} ({:?})", leaf.provenance.source.short(), leaf.provenance.actor);
                for old in &item.would_supersede {
                    println!("    would supersede {}: {}", old.id, old.summary);
                }
            }
            Ok(())
        }
        ReviewCommand::Edit { id, text, title, scope } => {
            let chain = arbor.read_chain(&scope.context()?)?;
            let receipt = arbor.edit_candidate(&chain, &LeafId::parse(&id)?, &text, title).await?;
            if json {
                return print_json(&receipt);
            }
            println!("edited {id}: now candidate {} in {} / {}", receipt.leaf_id, receipt.namespace, receipt.tree_id);
            Ok(())
        }
        ReviewCommand::Confirm { ids, scope } => decide(arbor, &scope, &ids, true, json).await,
        ReviewCommand::Reject { ids, scope } => decide(arbor, &scope, &ids, false, json).await,
    }
}

async fn decide(arbor: &arbor_app::Arbor, scope: &ScopeArgs, ids: &[String], confirm: bool, json: bool) -> Result<()> {
    let chain = arbor.read_chain(&scope.context()?)?;
    // Every id is checked before any decision is written.
    let ids: Vec<LeafId> = ids.iter().map(|id| LeafId::parse(id)).collect::<Result<_, _>>()?;
    let mut receipts = Vec::with_capacity(ids.len());
    for id in &ids {
        let receipt = if confirm { arbor.confirm(&chain, id).await? } else { arbor.reject(&chain, id).await? };
        receipts.push(receipt);
    }
    if json {
        return print_json(&receipts);
    }
    for receipt in &receipts {
        print!("{} {} in {} / {}", receipt.status, receipt.leaf_id, receipt.namespace, receipt.tree_id);
        if receipt.superseded.is_empty() {
            println!();
        } else {
            let old: Vec<String> = receipt.superseded.iter().map(ToString::to_string).collect();
            println!(" (superseded {})", old.join(", "));
        }
    }
    Ok(())
}
