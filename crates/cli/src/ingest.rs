//! `arbor ingest`: events from a file or stdin — JSON lines, pretty-printed objects, or one JSON
//! array — streamed in batches, with a result for every event. Each event is judged on its own
//! ([`arbor_domain::event_stream`]): one that is not valid is reported with its line number and
//! why, and leaves no trace; the others are stored. Input is read a line at a time by a
//! thread of its own, a line is never held beyond [`MAX_EVENT_BYTES`], and a batch is committed
//! as soon as it is full, so memory follows the batch, not the input.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

use anyhow::{Context, Result};
use arbor_app::{AppError, Arbor, IngestOutcome, IngestReport};
use arbor_compose as compose;
use arbor_domain::event::Event;
use arbor_domain::event_stream::{EventFramer, Framed, MAX_EVENT_BYTES, not_utf8};
use arbor_domain::read_chain::ReadChain;
use serde::Serialize;

use crate::output::outln;
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

/// The result for one input event.
#[derive(Debug, Serialize)]
pub(crate) struct EventResult {
    /// 1-based: the line the event starts on (its element number in a JSON array).
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
    /// What became of the events, for the last line of a run.
    pub(crate) fn outcomes(&self) -> String {
        format!(
            "{} created, {} superseding, {} duplicates, {} not admitted, {} failed",
            self.created, self.superseding, self.duplicates, self.not_admitted, self.failed
        )
    }

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

/// Frames a whole input held in memory (the bundled sample, tests).
pub(crate) fn parse_events(bytes: &[u8]) -> Vec<Framed> {
    arbor_domain::event_stream::frame_all(bytes)
}

/// One line as read: its bytes, or how long it was when it was too long to keep.
enum Line {
    Text(Vec<u8>),
    TooLong(usize),
}

/// Reads the next line (without its `\n` or `\r\n`), keeping at most `max` bytes of it; a
/// longer line is consumed to its end and reported by length. `None` at the end of input.
fn read_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Option<Line>> {
    let mut kept = Vec::new();
    let mut total = 0usize;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(match total {
                0 => None,
                _ if total > max => Some(Line::TooLong(total)),
                _ => Some(Line::Text(strip_cr(kept))),
            });
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        total += chunk.len();
        if total <= max {
            kept.extend_from_slice(chunk);
        }
        let consumed = done.unwrap_or(available.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(Some(if total > max { Line::TooLong(total) } else { Line::Text(strip_cr(kept)) }));
        }
    }
}

fn strip_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Reads `input` a line at a time on the calling thread and sends what the framer makes of it,
/// in order; stops early if the receiver is gone. A read error ends the stream with one
/// error item after the last line read.
fn frame_stream(input: impl BufRead, sender: tokio::sync::mpsc::Sender<Framed>) {
    let mut input = input;
    let mut framer = EventFramer::new();
    let mut number = 0usize;
    let send_all = |items: Vec<Framed>| items.into_iter().all(|item| sender.blocking_send(item).is_ok());
    loop {
        let line = match read_line(&mut input, MAX_EVENT_BYTES) {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(error) => {
                let _ = send_all(framer.finish());
                let _ = sender.blocking_send(Framed {
                    position: number + 1,
                    event: Err(format!("the input could not be read past line {number}: {error}")),
                });
                return;
            }
        };
        number += 1;
        let items = match line {
            Line::Text(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => framer.push_line(number, text),
                Err(error) => framer.push_unreadable(number, not_utf8(&error)),
            },
            Line::TooLong(length) => framer.push_unreadable(
                number,
                format!("the line is {length} bytes; an event is at most {MAX_EVENT_BYTES} bytes of JSON"),
            ),
        };
        if !send_all(items) {
            return;
        }
    }
    let _ = send_all(framer.finish());
}

/// Whether an error of a whole batch is about the store (stop: nothing further can be
/// written) rather than possibly about one of its events (retry them one by one, so an event
/// the engine cannot take, for whatever reason, fails alone).
fn is_storage_failure(error: &AppError) -> bool {
    !matches!(
        error,
        AppError::InvalidEvent(_)
            | AppError::InvalidRequest(_)
            | AppError::Internal(_)
            | AppError::Port(arbor_ports::Error::Invalid { .. })
    )
}

/// How events are cut into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Batching {
    /// Every batch full but the last: what a file holds is cut the same way on every run, so
    /// the same file gives the same decisions (a leaf planned earlier in a batch is seen by
    /// the rules, not by the index, and the two see near-duplicates differently).
    Full,
    /// A batch of whatever has arrived: a live stream (a pipe from a host) is committed as it
    /// comes, not held until a batch fills.
    AsArrived,
}

/// Ingests framed events as they arrive, `batch` at a time, returning a result per event and
/// totals. `on_batch` sees each batch's results as soon as it is committed: what it is shown
/// is acknowledged. A batch the store refuses as a whole is tried again event by event, so one
/// event the store cannot take fails alone; a store that cannot take any stops the ingest,
/// after saying which lines were stored.
pub(crate) async fn ingest_stream(
    arbor: &Arbor,
    chain: &ReadChain,
    events: &mut tokio::sync::mpsc::Receiver<Framed>,
    (batch, batching): (usize, Batching),
    keep_results: bool,
    on_batch: &mut dyn FnMut(&[EventResult], &Totals),
) -> Result<(Vec<EventResult>, Totals)> {
    let mut totals = Totals::default();
    let mut kept = Vec::new();
    loop {
        let mut chunk = Vec::with_capacity(batch);
        if events.recv_many(&mut chunk, batch).await == 0 {
            break;
        }
        while batching == Batching::Full && chunk.len() < batch {
            let room = batch - chunk.len();
            if events.recv_many(&mut chunk, room).await == 0 {
                break;
            }
        }
        totals.events += chunk.len();
        let mut results = Vec::with_capacity(chunk.len());
        let mut valid: Vec<Event> = Vec::new();
        let mut lines = Vec::new();
        for framed in chunk {
            match framed.event {
                Ok(event) => {
                    valid.push(event);
                    lines.push(framed.position);
                }
                Err(error) => {
                    totals.failed += 1;
                    results.push(EventResult { line: framed.position, result: EventOutcome::Failed { error } });
                }
            }
        }
        let mut record = |line: usize, outcome: Result<IngestReport, AppError>, totals: &mut Totals| {
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
        };
        match arbor.ingest_batch(chain, valid.clone()).await {
            Ok(outcomes) => {
                for (line, outcome) in lines.into_iter().zip(outcomes) {
                    record(line, outcome, &mut totals);
                }
            }
            Err(whole) => {
                tracing::debug!(error = %whole, "a batch was refused whole; trying its events one by one");
                for (event, line) in valid.into_iter().zip(lines) {
                    match arbor.ingest_batch(chain, vec![event]).await {
                        Ok(mut outcome) => {
                            let outcome = outcome.pop().unwrap_or_else(|| {
                                Err(AppError::Internal("the engine returned no result for the event".into()))
                            });
                            record(line, outcome, &mut totals);
                        }
                        Err(error) if is_storage_failure(&error) => {
                            results.sort_by_key(|r| r.line);
                            on_batch(&results, &totals);
                            return Err(anyhow::Error::new(error).context(format!(
                                "stopped at line {line}: the store took no more events; the lines reported above \
                                 were stored, and nothing from line {line} on"
                            )));
                        }
                        Err(error) => record(line, Err(error), &mut totals),
                    }
                }
            }
        }
        results.sort_by_key(|r| r.line);
        on_batch(&results, &totals);
        if keep_results {
            kept.extend(results);
        }
    }
    Ok((kept, totals))
}

/// Ingests events already in memory (the bundled sample).
pub(crate) async fn ingest_events(
    arbor: &Arbor,
    chain: &ReadChain,
    events: Vec<Framed>,
    batch: usize,
) -> Result<(Vec<EventResult>, Totals)> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel(events.len().max(1));
    for event in events {
        sender.send(event).await.context("queueing events")?;
    }
    drop(sender);
    ingest_stream(arbor, chain, &mut receiver, (batch, Batching::Full), true, &mut |_, _| {}).await
}

#[derive(Serialize)]
struct Output<'a> {
    results: &'a [EventResult],
    totals: &'a Totals,
    jobs: Option<arbor_app::JobsReport>,
    /// Why the jobs after the ingest could not run (they are still queued), if they failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    jobs_error: Option<String>,
    /// Reasoner answers that could not be used (the deterministic reasoner decided instead).
    reasoner_fallbacks: u64,
}

/// Returns whether every event was ingested.
pub(crate) async fn run(root: &std::path::Path, args: Args, json: bool) -> Result<bool> {
    let opened = compose::open(root).await?;
    let arbor = &opened.arbor;
    let chain = arbor.read_chain(&args.scope.context()?)?;
    let batch = usize::from(args.batch);
    // A file, or stdin redirected from one, is cut into full batches; a pipe as it arrives.
    let from_file = match &args.file {
        Some(path) if path.as_os_str() != "-" => true,
        _ => std::fs::metadata("/dev/stdin").is_ok_and(|m| m.is_file()),
    };
    let batching = if from_file { Batching::Full } else { Batching::AsArrived };
    let input: Box<dyn BufRead + Send> = match &args.file {
        Some(path) if path.as_os_str() != "-" => {
            let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
            if file.metadata().is_ok_and(|m| m.is_dir()) {
                anyhow::bail!("{} is a directory, not a file of events", path.display());
            }
            Box::new(std::io::BufReader::with_capacity(256 * 1024, file))
        }
        _ => Box::new(std::io::BufReader::with_capacity(256 * 1024, std::io::stdin())),
    };
    // At most two batches wait between the reader and the writer.
    let (sender, mut receiver) = tokio::sync::mpsc::channel(2 * batch);
    let reader = std::thread::spawn(move || frame_stream(input, sender));
    let progress = (!json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} events {per_sec}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar
    });
    // Text output streams: each event's line is printed once its batch is committed.
    let mut print_batch = |results: &[EventResult], totals: &Totals| {
        if let Some(bar) = &progress {
            bar.set_position(totals.events as u64);
        }
        if json {
            return;
        }
        for result in results {
            match &result.result {
                EventOutcome::Ingested { report } => {
                    for line in crate::render::ingest_lines(report) {
                        outln!("line {:<5} {line}", result.line);
                    }
                }
                EventOutcome::Failed { error } => outln!("line {:<5} error: {error}", result.line),
            }
        }
    };
    let ingested = ingest_stream(arbor, &chain, &mut receiver, (batch, batching), json, &mut print_batch).await;
    // The reader stops once nothing receives what it sends.
    drop(receiver);
    let _ = reader.join();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let (results, totals) = ingested?;
    // The events are stored: jobs that cannot run now (a busy store) are left queued, and the
    // ingest still succeeded.
    let (jobs, jobs_error) = if args.defer_jobs {
        (None, None)
    } else {
        match arbor.run_jobs(None).await {
            Ok(jobs) => (Some(jobs), None),
            Err(error) => (None, Some(format!("{error:#}"))),
        }
    };
    if json {
        let output = Output {
            results: &results,
            totals: &totals,
            jobs,
            jobs_error,
            reasoner_fallbacks: arbor.reasoner_fallbacks(),
        };
        crate::output::print_raw(&(serde_json::to_string_pretty(&output)? + "\n"));
    } else {
        outln!("\n{} events into {}: {}", totals.events, chain.write_namespace(), totals.outcomes());
        if let Some(jobs) = jobs {
            outln!(
                "jobs: {} completed, {} summaries sealed, {} failed",
                jobs.completed,
                jobs.summaries_sealed,
                jobs.failed
            );
        }
        if let Some(error) = jobs_error {
            outln!("jobs: not run now ({error}); they stay queued for `arbor jobs run`");
        }
        let fallbacks = arbor.reasoner_fallbacks();
        if fallbacks > 0 {
            outln!(
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
        parse_events(input).into_iter().filter_map(|framed| framed.event.err().map(|e| (framed.position, e))).collect()
    }

    /// Events that trickle in are cut into full batches when they come from a file, so the same
    /// file is cut the same way however fast it is read; a live stream is cut as it arrives.
    #[tokio::test]
    async fn a_file_is_cut_into_full_batches_however_slowly_it_is_read() {
        for (batching, sizes) in [(Batching::Full, vec![2, 2, 1]), (Batching::AsArrived, vec![1, 1, 1, 1, 1])] {
            let arbor = Arbor::in_memory();
            let chain = arbor
                .read_chain(&arbor_domain::read_chain::TrustedContext::Only {
                    namespace: arbor_domain::namespace::Namespace::global(),
                })
                .unwrap();
            let (sender, mut receiver) = tokio::sync::mpsc::channel(8);
            let trickle = tokio::spawn(async move {
                for n in 1..=5 {
                    let event = Ok(Event::user_message(format!("Note number {n} about the garden.")));
                    sender.send(Framed { position: n, event }).await.unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            });
            let mut seen = Vec::new();
            let record = &mut |results: &[EventResult], _: &Totals| seen.push(results.len());
            ingest_stream(&arbor, &chain, &mut receiver, (2, batching), false, record).await.unwrap();
            trickle.await.unwrap();
            assert_eq!(seen, sizes, "{batching:?}");
        }
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
        assert!(parsed[0].event.is_ok());
        let utf8 = errors(b"{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n");
        assert_eq!(utf8[0].0, 2);
        assert!(utf8[0].1.starts_with("the line is not valid UTF-8"), "{}", utf8[0].1);
        let array = errors(b"[{\"text\":\"a\"}, {\"nope\":1}]");
        assert_eq!(array[0].0, 2);
        assert!(array[0].1.starts_with("unknown field `nope`"), "{}", array[0].1);
    }

    #[test]
    fn long_lines_are_measured_not_kept() {
        let mut input = vec![b'x'; 5000];
        input.extend_from_slice(b"\nshort\r\nlast");
        let mut reader = std::io::BufReader::with_capacity(64, input.as_slice());
        assert!(matches!(read_line(&mut reader, 1000).unwrap(), Some(Line::TooLong(5000))));
        assert!(matches!(read_line(&mut reader, 1000).unwrap(), Some(Line::Text(t)) if t == b"short"));
        assert!(matches!(read_line(&mut reader, 1000).unwrap(), Some(Line::Text(t)) if t == b"last"));
        assert!(read_line(&mut reader, 1000).unwrap().is_none());
    }
}
