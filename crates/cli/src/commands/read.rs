//! Reading the store: `retrieve`, `browse`, `show` and `show-retrieval`.

use std::path::Path;

use anyhow::Result;
use arbor_app::{Disclosure, NodeView, RetrieveMode, RetrieveRequest};
use arbor_compose as compose;
use arbor_domain::id::RetrievalId;
use arbor_domain::model::{Category, MemoryKind, TreeId};
use arbor_domain::time::Timestamp;

use crate::output::print_json;
use crate::render;
use crate::scope::ScopeArgs;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Mode {
    Auto,
    Broad,
    Exact,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RetrieveArgs {
    /// The question.
    query: String,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Summaries first (broad), leaf evidence only (exact), or decide from the question.
    #[arg(long, value_enum, default_value = "auto")]
    mode: Mode,
    /// Answer as of this instant: includes facts that were valid then and have since been
    /// superseded.
    #[arg(long, value_name = "TIME", value_parser = arbor_domain::time::parse_storable_instant)]
    as_of: Option<Timestamp>,
    /// At most this many items.
    #[arg(long)]
    max_results: Option<usize>,
    /// At most this many characters in total.
    #[arg(long)]
    max_chars: Option<usize>,
    /// Only this tree (e.g. `interaction:project-alpha`).
    #[arg(long)]
    tree: Option<String>,
    /// Only these kinds of memory.
    #[arg(long = "kind", value_name = "KIND")]
    kinds: Vec<String>,
    /// Only these categories.
    #[arg(long = "category", value_name = "CATEGORY")]
    categories: Vec<String>,
    /// Only memories about things at or after this instant.
    #[arg(long, value_parser = arbor_domain::time::parse_storable_instant)]
    since: Option<Timestamp>,
    /// Only memories about things at or before this instant.
    #[arg(long, value_parser = arbor_domain::time::parse_storable_instant)]
    until: Option<Timestamp>,
    /// Include restricted memories.
    #[arg(long)]
    include_restricted: bool,
    /// Keep a record of this retrieval (what was considered, selected and why) for
    /// `arbor show-retrieval`.
    #[arg(long)]
    record: bool,
    /// The pack as a model reads it: each memory once, with its date, id, version and why.
    #[arg(long)]
    compact: bool,
    /// With --compact: about this many tokens at most; what does not fit is counted.
    #[arg(long, value_name = "N", requires = "compact")]
    max_tokens: Option<usize>,
}

pub(crate) async fn retrieve(root: &Path, args: RetrieveArgs, json: bool) -> Result<()> {
    // Only a recorded retrieval writes.
    let opened = if args.record { compose::open(root).await? } else { compose::open_for_reading(root).await? };
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let mut request = RetrieveRequest::new(args.query);
    request.mode = match args.mode {
        Mode::Auto => RetrieveMode::Auto,
        Mode::Broad => RetrieveMode::BroadSummary,
        Mode::Exact => RetrieveMode::ExactEvidence,
    };
    request.as_of = args.as_of;
    request.max_results = args.max_results;
    request.max_chars = args.max_chars;
    request.tree = args.tree.as_deref().map(TreeId::parse).transpose()?;
    request.kinds = args
        .kinds
        .iter()
        .map(|k| MemoryKind::parse(k).ok_or_else(|| anyhow::anyhow!("unknown kind {k:?}; expected one of {}", kinds())))
        .collect::<Result<_>>()?;
    request.categories = args
        .categories
        .iter()
        .map(|c| {
            Category::parse(c)
                .ok_or_else(|| anyhow::anyhow!("unknown category {c:?}; expected interaction or integration"))
        })
        .collect::<Result<_>>()?;
    if args.since.is_some() || args.until.is_some() {
        request.time_range = Some((args.since, args.until));
    }
    request.include_restricted = args.include_restricted;
    request.record = args.record;
    let pack = opened.arbor.retrieve(&chain, &request).await?;
    if args.compact {
        let compact = pack.compact(arbor_app::CompactOptions { max_tokens: args.max_tokens, include_skipped: false });
        if json {
            return print_json(&compact);
        }
        crate::output::out!("{}", compact.render());
        return Ok(());
    }
    if json {
        return print_json(&pack);
    }
    crate::output::out!("{}", render::pack(&pack));
    Ok(())
}

fn kinds() -> String {
    MemoryKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
}

#[derive(Debug, clap::Args)]
pub(crate) struct BrowseArgs {
    /// A tree to outline (e.g. `interaction:uncategorized`); without it, list the trees.
    tree: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// How many levels of the outline to show.
    #[arg(long, default_value_t = 3)]
    depth: usize,
}

pub(crate) async fn browse(root: &Path, args: BrowseArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    match args.tree {
        None => {
            let trees = opened.arbor.browse(&chain, Disclosure::Everything).await?;
            if json {
                return print_json(&trees);
            }
            crate::output::out!("{}", render::trees(&trees));
        }
        Some(tree) => {
            let outline =
                opened.arbor.browse_tree(&chain, &TreeId::parse(&tree)?, args.depth, Disclosure::Everything).await?;
            if json {
                return print_json(&outline);
            }
            crate::output::out!("{}", render::outline(&outline));
        }
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct ShowArgs {
    /// A leaf or summary id.
    id: String,
    #[command(flatten)]
    scope: ScopeArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ShowRetrievalArgs {
    /// The id `arbor retrieve --record` printed (`ret-...`).
    id: String,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub(crate) async fn show_retrieval(root: &Path, args: ShowRetrievalArgs, json: bool) -> Result<()> {
    let id = RetrievalId::parse(&args.id)?;
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    // The same answer for an id that does not exist and one recorded in another scope.
    let Some(explanation) = opened.arbor.show_retrieval(&chain, &id).await? else {
        anyhow::bail!("no recorded retrieval {id} in this scope");
    };
    if json {
        return print_json(&explanation);
    }
    crate::output::out!("{}", render::retrieval(&explanation));
    Ok(())
}

pub(crate) async fn show(root: &Path, args: ShowArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let view = opened.arbor.show(&chain, &args.id, Disclosure::Everything).await?;
    if json {
        return print_json(&view);
    }
    match &view {
        NodeView::Leaf { record, body } => {
            crate::output::outln!("leaf {} ({}, {}, v{})", record.id, record.status, record.kind, record.version.get());
            crate::output::outln!(
                "{} · {} · source {}",
                record.namespace,
                record.tree_id,
                record.provenance.source.short()
            );
            print_body(body.as_deref());
        }
        NodeView::Summary { record, body } => {
            crate::output::outln!(
                "summary {} (L{}, {}, {} children)",
                record.id,
                record.level(),
                record.status.as_str(),
                record.children.len()
            );
            crate::output::outln!("{} · {}", record.namespace, record.tree_id);
            print_body(body.as_deref());
        }
    }
    Ok(())
}

fn print_body(body: Option<&str>) {
    match body {
        Some(body) => crate::output::outln!("\n{body}"),
        None => crate::output::outln!("\n(no body: its content was forgotten or replaced)"),
    }
}
