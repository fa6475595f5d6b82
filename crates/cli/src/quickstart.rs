//! `arbor quickstart`: a guided first run. Ingests a bundled sample conversation through the
//! real write path, runs the jobs that seal it into trees, and answers two questions through
//! the real retrieval path.

use anyhow::{Context, Result};
use arbor_app::{Arbor, RetrieveRequest};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::read_chain::TrustedContext;
use serde::Serialize;

use crate::{compose, render};

/// The sample conversation, one event per line (the same JSON `arbor ingest` reads).
const SAMPLE: &str = include_str!("../samples/quickstart.jsonl");

/// The questions asked of it.
const QUESTIONS: [&str; 2] = ["When does Project Atlas ship to the EU region?", "Tell me about Project Atlas"];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Use a fixed clock and sequential ids so the output is identical on every run.
    #[arg(long, hide = true)]
    deterministic: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    store: &'static str,
    events: usize,
    ingest: Vec<arbor_app::ChunkResult>,
    jobs: arbor_app::JobsReport,
    counts: arbor_ports::StoreCounts,
    packs: Vec<&'a arbor_app::RetrievalPack>,
}

pub(crate) async fn run(args: Args, json: bool) -> Result<()> {
    let arbor = compose::in_memory(args.deterministic);
    let context = TrustedContext::Conversation {
        conversation: ScopeId::parse("quickstart")?,
        project: Some(ScopeId::parse("lumen-platform")?),
        agent: None,
    };
    let chain = arbor.read_chain(&context)?;
    let events = parse_sample()?;
    let mut ingest = Vec::new();
    for event in &events {
        let report = arbor.ingest(&chain, event.clone()).await.context("ingesting the sample")?;
        if !json {
            for line in render::ingest_line(&report) {
                println!("{line}");
            }
        }
        ingest.extend(report.chunks);
    }
    let jobs = arbor.run_jobs(None).await.context("running jobs")?;
    let counts = arbor.ports().store.counts().await?;
    let mut packs = Vec::new();
    for question in QUESTIONS {
        packs.push(arbor.retrieve(&chain, &RetrieveRequest::new(question)).await?);
    }
    if json {
        let output =
            Output { store: "memory", events: events.len(), ingest, jobs, counts, packs: packs.iter().collect() };
        println!("{}", serde_json::to_string_pretty(&output)?);
        return Ok(());
    }
    print_summary(&arbor, events.len(), &jobs, &counts);
    for pack in &packs {
        println!("\n{}", "─".repeat(78));
        print!("{}", render::pack(pack));
    }
    Ok(())
}

fn parse_sample() -> Result<Vec<Event>> {
    SAMPLE
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| serde_json::from_str(line).with_context(|| format!("sample line {}", i + 1)))
        .collect()
}

fn print_summary(arbor: &Arbor, events: usize, jobs: &arbor_app::JobsReport, counts: &arbor_ports::StoreCounts) {
    let leaves: usize = counts.leaves_by_status.iter().map(|(_, n)| n).sum();
    let by_status: Vec<String> = counts.leaves_by_status.iter().map(|(status, n)| format!("{n} {status}")).collect();
    println!(
        "\n{events} events -> {leaves} leaves ({}) in {} trees, {} entities; jobs sealed {} summaries and refreshed {} roots",
        by_status.join(", "),
        counts.trees,
        counts.entities,
        jobs.summaries_sealed,
        jobs.roots_refreshed,
    );
    println!("store: in memory (nothing written to disk); reasoner: {}", arbor.ports().reasoner.id());
}
