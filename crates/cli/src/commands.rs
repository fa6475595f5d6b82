//! The smaller subcommands: init, retrieve, browse, show, correct, restore, promote, forget,
//! jobs, fsck, stats, audit and usage. Each prints text for people or, with `--json`, the result's own serialization.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arbor_app::{Disclosure, NodeView, RetrieveMode, RetrieveRequest};
use arbor_compose as compose;
use arbor_domain::id::RetrievalId;
use arbor_domain::id::{LeafId, Version};
use arbor_domain::model::{Category, MemoryKind, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use serde::Serialize;

use crate::render;
use crate::scope::ScopeArgs;

pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<()> {
    crate::output::print_raw(&(serde_json::to_string_pretty(value)? + "\n"));
    Ok(())
}

/// `arbor init`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InitArgs {
    /// Where rows live.
    #[arg(long, value_parser = crate::choice(compose::Backend::CHOICES), default_value = "sqlite")]
    backend: compose::Backend,
    /// The Postgres server (`postgres://user:password@host/db`), saved in arbor.json; or set
    /// ARBOR_DATABASE_URL, which is read on every run and never saved.
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// The Postgres schema for this store's tables (one database can hold several stores);
    /// default `arbor`.
    #[arg(long, value_name = "NAME")]
    schema: Option<String>,
    /// How text becomes vectors: the local model when installed (`arbor models install`),
    /// else feature hashing.
    #[arg(long, value_parser = crate::choice(compose::EmbedderChoice::CHOICES), env = "ARBOR_EMBEDDER", default_value = "auto")]
    embedder: compose::EmbedderChoice,
    /// Where the search index lives: the store's own database, or a LanceDB dataset beside it.
    #[arg(long, value_parser = crate::choice(compose::IndexBackend::CHOICES), default_value = "store")]
    index: compose::IndexBackend,
}

impl From<InitArgs> for compose::InitOptions {
    fn from(args: InitArgs) -> compose::InitOptions {
        compose::InitOptions {
            backend: args.backend,
            database_url: args.database_url,
            schema: args.schema,
            embedder: args.embedder,
            index: args.index,
        }
    }
}

pub(crate) async fn init(root: &Path, options: &compose::InitOptions, json: bool) -> Result<()> {
    let (config, initialized) = compose::init(root, options).await?;
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            root: String,
            created: bool,
            database_recreated: bool,
            config: &'a compose::StoreConfig,
        }
        return print_json(&Output {
            root: root.display().to_string(),
            created: initialized == compose::Initialized::Created,
            database_recreated: initialized == compose::Initialized::DatabaseRecreated,
            config: &config,
        });
    }
    if initialized == compose::Initialized::DatabaseRecreated {
        crate::output::outln!(
            "{} is an Arbor store whose database was missing or empty; it held no memories, so a new database was made",
            root.display()
        );
    } else if initialized == compose::Initialized::Created {
        match &config.postgres {
            Some(pg) => {
                crate::output::outln!(
                    "created an Arbor store at {} (rows in Postgres, schema {})",
                    root.display(),
                    pg.schema
                )
            }
            None => crate::output::outln!("created an Arbor store at {}", root.display()),
        }
    } else {
        crate::output::outln!("{} is already an Arbor store", root.display());
    }
    Ok(())
}

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
            error = %format!("{error:#}"),
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
        Err(error) if config.backend == compose::Backend::Sqlite && moved_aside.is_none() => {
            let text = format!("{error:#}");
            if !text.contains("damaged") {
                return Err(error);
            }
            moved_aside = Some(compose::move_damaged_database_aside(root)?);
            compose::open_for_rebuild(root).await?
        }
        Err(error) => return Err(error),
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

pub(crate) async fn stats(root: &Path, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let stats = opened.arbor.stats().await?;
    if json {
        return print_json(&stats);
    }
    crate::output::out!("{}", render::stats(&opened.root, &stats));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct DailyArgs {
    /// The day, YYYY-MM-DD; today by default.
    #[arg(long)]
    date: Option<String>,
    /// Your offset from UTC (`+08:00`, `-05:00`): the day runs midnight to midnight there.
    #[arg(long, value_name = "OFFSET", default_value = "+00:00", allow_hyphen_values = true)]
    utc_offset: String,
    /// At most this many memories, newest first (1-10000).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    limit: u16,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor daily`: what the scope's chain can read that was observed on one day, across trees.
pub(crate) async fn daily(root: &Path, args: DailyArgs, json: bool) -> Result<()> {
    let day = arbor_domain::daily::Day::asked(args.date.as_deref(), Some(&args.utc_offset), Timestamp::now())
        .map_err(anyhow::Error::msg)?;
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let view = opened.arbor.daily(&chain, day, usize::from(args.limit)).await?;
    if json {
        return print_json(&view);
    }
    crate::output::out!("{}", render::daily(&view));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct HealthArgs {
    /// Only these namespaces (e.g. `project:p1`); every namespace the store holds by default.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    namespaces: Vec<String>,
}

/// `arbor health`: the store owner's view of every namespace (or those named), whatever chain
/// could read it, like `stats` and `fsck`.
pub(crate) async fn health(root: &Path, args: HealthArgs, json: bool) -> Result<()> {
    let namespaces = args
        .namespaces
        .iter()
        .map(|name| Namespace::parse(name).with_context(|| format!("--namespace {name:?}")))
        .collect::<Result<Vec<_>>>()?;
    let opened = compose::open_for_reading(root).await?;
    let report = opened.arbor.health(&namespaces).await?;
    if json {
        return print_json(&report);
    }
    crate::output::out!("{}", render::health(&report));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// At most this many events, newest first.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor audit`: the state changes in scope — who, what, when, ids and hashes, never content.
pub(crate) async fn audit(root: &Path, args: AuditArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let events = opened.arbor.audit_log(&chain, args.limit).await?;
    if json {
        return print_json(&events);
    }
    for event in &events {
        let node = event.node.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".to_owned());
        let hash = event.content_sha256.as_ref().map(ToString::to_string).unwrap_or_default();
        crate::output::outln!(
            "{}  {:<18} {:<30} {}  by {}  {}",
            event.at,
            event.action,
            node,
            event.namespace,
            event.actor,
            hash
        );
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct UsageArgs {
    /// The leaf or summary.
    id: String,
    /// Look at the latest this many recorded retrievals of it.
    #[arg(long, default_value_t = 100)]
    limit: usize,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor usage`: how recorded retrievals (`retrieve --record`) used one memory.
pub(crate) async fn usage(root: &Path, args: UsageArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let usage = opened.arbor.usage(&chain, &args.id, args.limit).await?;
    if json {
        return print_json(&usage);
    }
    let last = usage.last_used.map(|t| t.to_string()).unwrap_or_else(|| "never".to_owned());
    crate::output::outln!(
        "{}: considered by {} recorded retrievals, in the context of {}; last used {last}",
        usage.node,
        usage.retrievals,
        usage.entered_context
    );
    for record in &usage.records {
        let fate = if record.entered_context { "in context" } else { "considered" };
        crate::output::outln!("  {}  {}  {fate}  ({})", record.at, record.retrieval, record.namespace);
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

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Write to this file (replaced whole, never left half-written) instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Include restricted memories; they are withheld unless you ask.
    #[arg(long)]
    include_restricted: bool,
    /// Include replaced versions, not only current memories.
    #[arg(long)]
    history: bool,
    #[command(flatten)]
    scope: ScopeArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// What to import: a file `arbor export` wrote, ChatGPT's `conversations.json`, Mem0's
    /// export, or a folder of markdown notes (`-` reads a file from standard input).
    path: PathBuf,
    /// Where it comes from.
    #[arg(long, value_enum, default_value_t = ImportFormat::Arbor)]
    from: ImportFormat,
    /// With `--from mem0`: only this user's or agent's memories (an export of several owners
    /// is imported one owner at a time).
    #[arg(long, value_name = "ID")]
    owner: Option<String>,
    /// Where the memories go (not for `--from arbor`, which restores each where it was).
    #[command(flatten)]
    scope: ScopeArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ImportFormat {
    /// `arbor export` output, into an empty store: the same ids, versions and history.
    Arbor,
    /// ChatGPT's data export (`conversations.json`): your own messages.
    Chatgpt,
    /// Mem0's export (a list of memories, or `{"results": [...]}`).
    Mem0,
    /// A folder of markdown notes (an Obsidian vault): a memory per section.
    Markdown,
}

fn read_input(path: &Path) -> Result<String> {
    if path.as_os_str() == "-" {
        return std::io::read_to_string(std::io::stdin()).context("reading standard input");
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// `arbor import`: an export put back into an empty store (every line checked before anything
/// is written), or what another tool kept, through the ordinary write path into the scope.
pub(crate) async fn import(root: &Path, args: ImportArgs, json: bool) -> Result<bool> {
    use arbor_app::importers;

    let now = Timestamp::now();
    if args.owner.is_some() && args.from != ImportFormat::Mem0 {
        bail!("--owner picks whose memories a Mem0 export gives; it is for `--from mem0` only");
    }
    let imported = match args.from {
        ImportFormat::Arbor => {
            if args.scope.names_anything() {
                bail!("`--from arbor` puts every memory back where it was; it takes no scope");
            }
            return import_export(root, &args.path, json).await.map(|()| true);
        }
        // Someone's history goes where they say, never to a default conversation.
        _ if !args.scope.is_given() => bail!(
            "say where the memories go: --namespace global, --project ID or --conversation ID (they are judged there \
             as anything said there is)"
        ),
        ImportFormat::Chatgpt => importers::from_chatgpt(&read_input(&args.path)?, now).map_err(anyhow::Error::msg)?,
        ImportFormat::Mem0 => {
            importers::from_mem0(&read_input(&args.path)?, args.owner.as_deref(), now).map_err(anyhow::Error::msg)?
        }
        ImportFormat::Markdown => markdown_folder(&args.path, now)?,
    };
    let opened = compose::open(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let labels: Vec<String> = imported.records.iter().map(|r| r.label.clone()).collect();
    let framed: Vec<arbor_domain::event_stream::Framed> = imported
        .records
        .into_iter()
        .enumerate()
        .map(|(at, record)| arbor_domain::event_stream::Framed { position: at + 1, event: record.event })
        .collect();
    let (results, totals) = crate::ingest::ingest_events(&opened.arbor, &chain, framed, 256).await?;
    let jobs = opened.arbor.run_jobs(None).await?;
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            results: &'a [crate::ingest::EventResult],
            totals: &'a crate::ingest::Totals,
            passed_over: usize,
            jobs: arbor_app::JobsReport,
        }
        print_json(&Output { results: &results, totals: &totals, passed_over: imported.passed_over, jobs })?;
        return Ok(totals.failed == 0);
    }
    for result in &results {
        let label = labels.get(result.line - 1).map(String::as_str).unwrap_or("?");
        match &result.result {
            crate::ingest::EventOutcome::Ingested { report } => {
                for line in render::ingest_lines(report) {
                    crate::output::outln!("{label}: {line}");
                }
            }
            crate::ingest::EventOutcome::Failed { error } => crate::output::outln!("{label}: error: {error}"),
        }
    }
    crate::output::outln!(
        "\n{} records into {}: {}; {} messages passed over (not yours, or not text)",
        totals.events,
        chain.write_namespace(),
        totals.outcomes(),
        imported.passed_over
    );
    Ok(totals.failed == 0)
}

/// Every markdown note under `folder`, by path. Hidden folders (`.obsidian`, `.trash`) hold no
/// notes, and links (to files or folders) are not followed: a vault's notes are its own files.
/// A folder that cannot be read is an error of its own; the rest are read.
fn markdown_folder(folder: &Path, now: Timestamp) -> Result<arbor_app::importers::Imported> {
    use arbor_app::importers::{ImportRecord, Imported};

    if !folder.is_dir() {
        bail!("{} is not a folder of markdown notes", folder.display());
    }
    let relative = |path: &Path| path.strip_prefix(folder).unwrap_or(path).to_string_lossy().replace('\\', "/");
    let mut imported = Imported::default();
    let mut notes = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                imported.records.push(ImportRecord { label: relative(&dir), event: Err(format!("not read: {error}")) });
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            let Ok(kind) = entry.file_type() else { continue };
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                pending.push(entry.path());
            } else if name.ends_with(".md") || name.ends_with(".markdown") {
                notes.push(entry.path());
            }
        }
    }
    notes.sort();
    for path in notes {
        let relative = relative(&path);
        let modified =
            std::fs::metadata(&path).and_then(|m| m.modified()).ok().and_then(|m| Timestamp::try_from(m).ok());
        match std::fs::read(&path).map(String::from_utf8) {
            Ok(Ok(text)) => {
                let note = arbor_app::importers::from_markdown_note(&relative, &text, modified, now);
                imported.records.extend(note.records);
            }
            Ok(Err(_)) => imported.records.push(ImportRecord { label: relative, event: Err("not UTF-8 text".into()) }),
            Err(error) => imported.records.push(ImportRecord { label: relative, event: Err(error.to_string()) }),
        }
    }
    Ok(imported)
}

/// `--from arbor`: every line checked, then the store rebuilt from the documents.
async fn import_export(root: &Path, path: &Path, json: bool) -> Result<()> {
    let text = read_input(path)?;
    let mut memories = Vec::new();
    let mut problems = Vec::new();
    for (at, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<arbor_app::ImportedMemory>(line) {
            Ok(memory) => memories.push(memory),
            Err(error) => problems.push(format!("line {}: {error}", at + 1)),
        }
    }
    if !problems.is_empty() {
        for problem in problems.iter().take(10) {
            crate::output::errln!("{problem}");
        }
        bail!(
            "nothing was imported: {} lines are not memories `arbor export` wrote (each line is one JSON object with \
             its `id`, `status`, `path` and `document`)",
            problems.len()
        );
    }
    if memories.is_empty() {
        bail!("{} holds no memories to import", path.display());
    }
    let opened = compose::open(root).await?;
    let report = opened.arbor.import_export(&memories).await?;
    let jobs = opened.arbor.run_jobs(None).await?;
    // Vectors are made anew here: the same as the export's only with the same embedder.
    let ours = opened.arbor.ports().embedder.id().to_string();
    let mut theirs: Vec<&str> = memories.iter().filter_map(|m| m.embedder.as_deref()).filter(|e| *e != ours).collect();
    theirs.sort_unstable();
    theirs.dedup();
    if !theirs.is_empty() {
        crate::output::errln!(
            "note: exported with {}; this store embeds with {ours}, so searches by meaning may rank differently \
             than in the store it came from",
            theirs.join(", ")
        );
    }
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            imported: &'a arbor_app::RebuildReport,
            jobs: arbor_app::JobsReport,
        }
        return print_json(&Output { imported: &report, jobs });
    }
    crate::output::outln!(
        "imported {} memories ({} current) in {} trees, {} entities; {} indexed, {} summaries sealed",
        report.leaves,
        report.active,
        report.trees,
        report.entities,
        jobs.indexed,
        jobs.summaries_sealed
    );
    Ok(())
}

/// `arbor export`: the memories in scope as JSON Lines, one memory per line with its words
/// and metadata. What was withheld is said on standard error.
pub(crate) async fn export(root: &Path, args: ExportArgs) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let options =
        arbor_app::ExportOptions { include_restricted: args.include_restricted, include_history: args.history };
    let export = opened.arbor.export(&chain, options).await?;
    let mut lines = String::new();
    for memory in &export.memories {
        lines.push_str(&serde_json::to_string(memory)?);
        lines.push('\n');
    }
    match &args.out {
        Some(path) => {
            // A temporary file beside the target, synced, then renamed over it: a reader sees
            // the old file or the whole new one, never a part.
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let mut partial = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
            std::io::Write::write_all(&mut partial, lines.as_bytes())?;
            partial.as_file().sync_all()?;
            partial.persist(path).with_context(|| format!("replacing {}", path.display()))?;
        }
        None => crate::output::print_raw(&lines),
    }
    crate::output::err!("exported {} memories", export.memories.len());
    if export.withheld_restricted > 0 {
        crate::output::err!(
            "; {} restricted withheld (--include-restricted to include them)",
            export.withheld_restricted
        );
    }
    crate::output::errln!();
    if !export.unreadable.is_empty() {
        for (what, why) in &export.unreadable {
            crate::output::errln!("not exported: {what}: {why}");
        }
        bail!("{} memories or trees could not be read and were left out; see `arbor fsck`", export.unreadable.len());
    }
    Ok(())
}
