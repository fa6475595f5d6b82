//! The `arbor` command line: parses arguments, sets up logging, and hands each subcommand to
//! its module. Exit status: 0 success, 1 failure or refused input, 2 usage error.

mod commands;
mod consolidate;
mod eval;
mod experiment;
mod ingest;
mod models;
mod output;
mod profile;
mod quickstart;
mod render;
mod review;
mod scope;
mod serve;
mod speaker;
mod tokens;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// Retrieval and ingest allocate many short-lived rows and strings; glibc's allocator spent
// a tenth of retrieval time on free-list bookkeeping where mimalloc spends almost none.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Durable, tree-native memory for AI agents.
#[derive(Debug, Parser)]
#[command(name = "arbor", version)]
struct Cli {
    /// The store directory [default: ./.arbor]
    #[arg(long, global = true, env = "ARBOR_ROOT", value_name = "DIR")]
    root: Option<PathBuf>,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,

    /// More logging (-v info, -vv debug). Logs go to stderr and never contain memory content.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a store (idempotent).
    Init(commands::InitArgs),
    /// Ingest events (JSON or JSONL) from a file or stdin.
    Ingest(ingest::Args),
    /// Answer a question with a retrieval pack.
    Retrieve(commands::RetrieveArgs),
    /// List trees, or outline one.
    Browse(commands::BrowseArgs),
    /// Show a leaf or summary with its body.
    Show(commands::ShowArgs),
    /// Explain a recorded retrieval (`retrieve --record`): what was considered, selected and why.
    ShowRetrieval(commands::ShowRetrievalArgs),
    /// Correct a memory: a new version, bound to the version you read.
    Correct(commands::CorrectArgs),
    /// Make a replaced version current again (as a new version), or bring back an archived one.
    Restore(commands::RestoreArgs),
    /// Promote a memory one layer up the chain (as a candidate there), or roll a promotion back.
    Promote(commands::PromoteArgs),
    /// Candidates waiting for a person: list, confirm, edit, reject, resolve a conflict.
    #[command(subcommand)]
    Review(review::ReviewCommand),
    /// Experiments: start a run on a new or reused snapshot, list snapshots, settle runs.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCommand),
    /// The audit log in scope: every state change, with ids and hashes, never content.
    Audit(commands::AuditArgs),
    /// How recorded retrievals used one memory: hits, whether it entered the context, last use.
    Usage(commands::UsageArgs),
    /// Export the memories in scope as JSON Lines (restricted ones only when asked).
    Export(commands::ExportArgs),
    /// Import `arbor export` output into an empty store (the same memories, versions and
    /// history), or ChatGPT's, Mem0's or a markdown folder's into a scope (`--from`).
    Import(commands::ImportArgs),
    /// Forget a leaf: its words leave the store, the index, the bodies and every summary.
    Forget(commands::ForgetArgs),
    /// Run background jobs, or rebuild the index.
    #[command(subcommand)]
    Jobs(commands::JobsCommand),
    /// The store's embedder and reasoner: list, install a local model, switch.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Consolidate ("dream"): merge, update and invalidate in hindsight what was written since
    /// the last pass, and write a report of what changed.
    Consolidate(consolidate::Args),
    /// Check that rows, bodies and the index agree (exit status 1 if not clean).
    Fsck(commands::FsckArgs),
    /// Measure quality through the real pipeline, in a store of its own: LoCoMo recall, and
    /// whether naturally phrased updates replace what they update.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// What the store believes now about the speaker, a person or a thing (every subject when
    /// none is named): each attribute's current value, when and where it was said, and what it
    /// replaced.
    Profile(profile::Args),
    /// Counts of what the store holds.
    Stats,
    /// What was remembered on one day across every tree in scope, with the day's highlights.
    Daily(commands::DailyArgs),
    /// Per namespace and tree: duplicates, history, stale summaries, waiting suggestions and
    /// bytes per current memory, with warnings past the thresholds in `arbor.json`.
    Health(commands::HealthArgs),
    /// Create a store, ingest a sample conversation, seal it, and answer questions.
    Quickstart(quickstart::Args),
    /// Serve memory to agents: MCP tools (stdio or HTTP) and the HTTP API, bound to one scope
    /// (or, with --tenants, to whatever each request's token was issued for).
    Serve(serve::Args),
    /// Bearer tokens for a multi-tenant server: create, list, revoke.
    #[command(subcommand)]
    Tokens(tokens::TokensCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            crate::output::errln!("error: could not start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let root = arbor_compose::resolve_root(cli.root);
    let json = cli.json;
    let result: anyhow::Result<bool> = runtime.block_on(async {
        match cli.command {
            Command::Init(args) => commands::init(&root, &args.into(), json).await.map(|()| true),
            Command::Ingest(args) => ingest::run(&root, args, json).await,
            Command::Retrieve(args) => commands::retrieve(&root, args, json).await.map(|()| true),
            Command::Browse(args) => commands::browse(&root, args, json).await.map(|()| true),
            Command::Show(args) => commands::show(&root, args, json).await.map(|()| true),
            Command::ShowRetrieval(args) => commands::show_retrieval(&root, args, json).await.map(|()| true),
            Command::Correct(args) => commands::correct(&root, args, json).await.map(|()| true),
            Command::Restore(args) => commands::restore(&root, args, json).await.map(|()| true),
            Command::Promote(args) => commands::promote(&root, args, json).await.map(|()| true),
            Command::Review(command) => review::run(&root, command, json).await.map(|()| true),
            Command::Experiment(command) => experiment::run(&root, command, json).await.map(|()| true),
            Command::Audit(args) => commands::audit(&root, args, json).await.map(|()| true),
            Command::Usage(args) => commands::usage(&root, args, json).await.map(|()| true),
            Command::Forget(args) => commands::forget(&root, args, json).await.map(|()| true),
            Command::Export(args) => commands::export(&root, args).await.map(|()| true),
            Command::Import(args) => commands::import(&root, args, json).await,
            Command::Jobs(command) => commands::jobs(&root, command, json).await.map(|()| true),
            Command::Models(command) => models::run(&root, command, json).await.map(|()| true),
            Command::Consolidate(args) => consolidate::run(&root, args, json).await.map(|()| true),
            Command::Fsck(args) => commands::fsck(&root, args, json).await,
            Command::Eval(command) => eval::run(command, json).await.map(|()| true),
            Command::Profile(args) => profile::run(&root, args, json).await.map(|()| true),
            Command::Stats => commands::stats(&root, json).await.map(|()| true),
            Command::Daily(args) => commands::daily(&root, args, json).await.map(|()| true),
            Command::Health(args) => commands::health(&root, args, json).await.map(|()| true),
            Command::Quickstart(args) => quickstart::run(args, json).await.map(|()| true),
            Command::Serve(args) => serve::run(&root, args).await.map(|()| true),
            Command::Tokens(command) => tokens::run(&root, command, json).await.map(|()| true),
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            if json {
                let code = error
                    .downcast_ref::<arbor_compose::ComposeError>()
                    .map(|e| e.code())
                    .or_else(|| error.downcast_ref::<arbor_app::AppError>().map(|e| e.code()))
                    .unwrap_or("error");
                output::print_raw(&format!(
                    "{}\n",
                    serde_json::json!({ "error": { "code": code, "message": format!("{error:#}") } })
                ));
            }
            crate::output::errln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// A command-line value picked from a table of [`arbor_compose::Choice`]s, with their help.
pub(crate) fn choice<T: Copy + Send + Sync + 'static>(
    choices: &'static [arbor_compose::Choice<T>],
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(choices.iter().map(|c| PossibleValue::new(c.name).help(c.help))).map(move |name| {
        // The parser above admits only the names in `choices`.
        choices.iter().find(|c| c.name == name).map(|c| c.value).unwrap_or(choices[0].value)
    })
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ARBOR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Colour only for a person at a terminal: escape codes in a log file are noise.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}
