//! `arbor ingest`: events from a file or stdin — one JSON object, a JSON array, or JSON lines —
//! ingested in batches, with a result for every event. A line that is not a valid event is
//! reported with its line number and the field at fault, and leaves no trace; the others are
//! stored.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use arbor_app::{Arbor, IngestOutcome, IngestReport};
use arbor_domain::event::Event;
use arbor_domain::read_chain::ReadChain;
use serde::Serialize;

use crate::scope::ScopeArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A JSON or JSONL file of events; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Events committed together (one body sync and one transaction per batch).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    batch: u16,
    /// Leave sealing to a later `arbor jobs run`.
    #[arg(long)]
    defer_jobs: bool,
}

/// Where one event came from, for messages.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Origin {
    /// 1-based line (JSONL) or element (JSON array) number.
    pub line: usize,
}

/// The result for one input event.
#[derive(Debug, Serialize)]
pub(crate) struct EventResult {
    pub line: usize,
    #[serde(flatten)]
    pub result: EventOutcome,
}

#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum EventOutcome {
    Ingested { report: IngestReport },
    Failed { error: String },
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Totals {
    pub events: usize,
    pub failed: usize,
    pub created: usize,
    pub superseding: usize,
    pub duplicates: usize,
    pub not_admitted: usize,
}

impl Totals {
    fn add(&mut self, report: &IngestReport) {
        for chunk in &report.chunks {
            match chunk.outcome {
                IngestOutcome::Created { .. } => self.created += 1,
                IngestOutcome::Superseding { .. } => self.superseding += 1,
                IngestOutcome::NoopDuplicate { .. } => self.duplicates += 1,
                IngestOutcome::NotAdmitted { .. } => self.not_admitted += 1,
            }
        }
    }
}

/// Splits input into events: a JSON array, a single JSON object (possibly pretty-printed), or
/// JSON lines. Each entry is the event or why it is not one.
pub(crate) fn parse_events(bytes: &[u8]) -> Vec<(Origin, Result<Event, String>)> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            // Report the line holding the first invalid byte; nothing is ingested from input
            // that is not text.
            let line = bytes[..error.valid_up_to()].iter().filter(|b| **b == b'\n').count() + 1;
            return vec![(Origin { line }, Err(format!("the input is not valid UTF-8 ({error})")))];
        }
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return match serde_json::from_str::<Vec<serde_json::Value>>(text) {
            Ok(values) => values
                .into_iter()
                .enumerate()
                .map(|(i, value)| {
                    let origin = Origin { line: i + 1 };
                    let event = serde_json::from_value::<Event>(value).map_err(|e| e.to_string());
                    (origin, event)
                })
                .collect(),
            Err(error) => vec![(Origin { line: error.line() }, Err(format!("the JSON array does not parse: {error}")))],
        };
    }
    // One pretty-printed object: its first line is not a JSON value on its own.
    let first_line = trimmed.lines().next().unwrap_or_default();
    if trimmed.starts_with('{') && serde_json::from_str::<serde_json::Value>(first_line).is_err() {
        let event = serde_json::from_str::<Event>(text).map_err(|e| e.to_string());
        return vec![(Origin { line: 1 }, event)];
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let origin = Origin { line: i + 1 };
            let event = serde_json::from_str::<Event>(line).map_err(|e| e.to_string());
            (origin, event)
        })
        .collect()
}

fn read_input(file: &Option<PathBuf>) -> Result<Vec<u8>> {
    match file {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        }
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).context("reading stdin")?;
            Ok(bytes)
        }
    }
}

/// Ingests `events` in batches, returning a result per event and totals. `on_batch` sees each
/// batch's results as soon as the batch is committed: what it is shown is acknowledged.
pub(crate) async fn ingest_events(
    arbor: &Arbor,
    chain: &ReadChain,
    events: Vec<(Origin, Result<Event, String>)>,
    batch: usize,
    progress: bool,
    on_batch: &mut dyn FnMut(&[EventResult]),
) -> Result<(Vec<EventResult>, Totals)> {
    let mut totals = Totals { events: events.len(), ..Totals::default() };
    let bar = progress.then(|| {
        let bar = indicatif::ProgressBar::new(events.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} events {per_sec} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut results = Vec::with_capacity(events.len());
    for chunk in events.chunks(batch) {
        let first = results.len();
        let mut valid = Vec::new();
        let mut lines = Vec::new();
        for (origin, event) in chunk {
            match event {
                Ok(event) => {
                    valid.push(event.clone());
                    lines.push(origin.line);
                }
                Err(error) => {
                    totals.failed += 1;
                    results
                        .push(EventResult { line: origin.line, result: EventOutcome::Failed { error: error.clone() } });
                }
            }
        }
        let outcomes = arbor.ingest_batch(chain, valid).await.context("ingesting a batch")?;
        for (line, outcome) in lines.into_iter().zip(outcomes) {
            let result = match outcome {
                Ok(report) => {
                    totals.add(&report);
                    EventOutcome::Ingested { report }
                }
                Err(error) => {
                    totals.failed += 1;
                    EventOutcome::Failed { error: error.to_string() }
                }
            };
            results.push(EventResult { line, result });
        }
        results[first..].sort_by_key(|r| r.line);
        on_batch(&results[first..]);
        if let Some(bar) = &bar {
            bar.inc(chunk.len() as u64);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    results.sort_by_key(|r| r.line);
    Ok((results, totals))
}

#[derive(Serialize)]
struct Output<'a> {
    results: &'a [EventResult],
    totals: &'a Totals,
    jobs: Option<arbor_app::JobsReport>,
    /// Reasoner answers that could not be used (the deterministic reasoner decided instead).
    reasoner_fallbacks: u64,
}

/// Returns whether every event was ingested.
pub(crate) async fn run(root: &std::path::Path, args: Args, json: bool) -> Result<bool> {
    let opened = crate::store::open(root).await?;
    let arbor = &opened.arbor;
    let chain = arbor.read_chain(&args.scope.context()?)?;
    let bytes = read_input(&args.file)?;
    let events = parse_events(&bytes);
    let progress = !json && std::io::stderr().is_terminal() && events.len() > usize::from(args.batch);
    // Text output streams: each event's line is printed once its batch is committed.
    let mut print_batch = |batch: &[EventResult]| {
        if json {
            return;
        }
        let mut out = std::io::stdout().lock();
        for result in batch {
            let _ = match &result.result {
                EventOutcome::Ingested { report } => crate::render::ingest_lines(report)
                    .into_iter()
                    .try_for_each(|line| writeln!(out, "line {:<5} {line}", result.line)),
                EventOutcome::Failed { error } => writeln!(out, "line {:<5} error: {error}", result.line),
            };
        }
        let _ = out.flush();
    };
    let (results, totals) =
        ingest_events(arbor, &chain, events, usize::from(args.batch), progress, &mut print_batch).await?;
    let jobs = if args.defer_jobs { None } else { Some(arbor.run_jobs(None).await?) };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&Output {
                results: &results,
                totals: &totals,
                jobs,
                reasoner_fallbacks: arbor.reasoner_fallbacks(),
            })?
        );
    } else {
        println!(
            "\n{} events into {}: {} created, {} superseding, {} duplicates, {} not admitted, {} failed",
            totals.events,
            chain.write_namespace(),
            totals.created,
            totals.superseding,
            totals.duplicates,
            totals.not_admitted,
            totals.failed
        );
        if let Some(jobs) = jobs {
            println!(
                "jobs: {} completed, {} summaries sealed, {} failed",
                jobs.completed, jobs.summaries_sealed, jobs.failed
            );
        }
        let fallbacks = arbor.reasoner_fallbacks();
        if fallbacks > 0 {
            println!(
                "reasoner: {fallbacks} answers from {} were unusable; the deterministic reasoner decided those \
                 steps (run with -v for why)",
                arbor.ports().reasoner.id()
            );
        }
    }
    Ok(totals.failed == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(input: &[u8]) -> Vec<(usize, String)> {
        parse_events(input).into_iter().filter_map(|(origin, r)| r.err().map(|e| (origin.line, e))).collect()
    }

    #[test]
    fn jsonl_errors_name_the_line_and_field() {
        let input = b"{\"text\":\"ok\"}\n{\"text\":\"x\",\"hints\":{\"kind\":\"rumour\"}}\n\n{\"txt\":\"typo\"}\n";
        let errors = errors(input);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].0, 2);
        assert!(errors[0].1.starts_with("unknown variant `rumour`"), "{}", errors[0].1);
        assert_eq!(errors[1].0, 4);
        assert!(errors[1].1.starts_with("unknown field `txt`"), "{}", errors[1].1);
    }

    #[test]
    fn arrays_objects_and_bad_bytes() {
        assert_eq!(parse_events(b"[{\"text\":\"a\"},{\"text\":\"b\"}]").len(), 2);
        let pretty = b"{\n  \"text\": \"pretty\"\n}\n";
        let parsed = parse_events(pretty);
        assert_eq!(parsed.len(), 1);
        assert!(parsed[0].1.is_ok());
        let utf8 = errors(b"{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n");
        assert_eq!(utf8[0].0, 2);
        assert!(utf8[0].1.starts_with("the input is not valid UTF-8"), "{}", utf8[0].1);
        let array = errors(b"[{\"text\":\"a\"}, {\"nope\":1}]");
        assert_eq!(array[0].0, 2);
        assert!(array[0].1.starts_with("unknown field `nope`"), "{}", array[0].1);
    }
}
