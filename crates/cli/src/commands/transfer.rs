//! Moving memories in and out: `export` and `import` (Arbor's own export, JSONL, markdown folders).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arbor_compose as compose;
use arbor_domain::time::Timestamp;
use serde::Serialize;

use crate::output::print_json;
use crate::render;
use crate::scope::ScopeArgs;

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
        // A reader sees the old file or the whole new one, never a part; an export holds
        // memories, so it is this user's alone, as the store is.
        Some(path) => arbor_compose::replace_file(path, lines.as_bytes(), arbor_compose::Readers::OwnerOnly)?,
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
