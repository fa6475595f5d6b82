//! `arbor-bench`: the timings, kept out of the shipping `arbor` binary because they alone
//! search outside the visibility filter (the floor a benchmark compares against).
//! `synthetic` times a generated store (`cargo xtask bench` runs it per size and backend). The
//! quality measures (LoCoMo recall, natural updates) search only as any caller does, so they
//! ship in `arbor eval` (crate `arbor-eval`).

mod bench;

use std::io::Write;
use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

// The same allocator as `arbor`, so the figures are the shipping binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Measure Arbor: latency and throughput on synthetic stores.
#[derive(Debug, Parser)]
#[command(name = "arbor-bench", version)]
struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ingest, seal, reindex and retrieve on a synthetic store, beside the floor searches.
    Synthetic(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("ARBOR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprint(&format!("error: could not start the async runtime: {error}\n"));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Synthetic(args) => bench::run(args, cli.json).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprint(&format!("error: {error:#}\n"));
            ExitCode::FAILURE
        }
    }
}

/// A command-line value picked from a table of [`arbor_compose::Choice`]s, with their help.
fn choice<T: Copy + Send + Sync + 'static>(
    choices: &'static [arbor_compose::Choice<T>],
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(choices.iter().map(|c| PossibleValue::new(c.name).help(c.help))).map(move |name| {
        // The parser above admits only the names in `choices`.
        choices.iter().find(|c| c.name == name).map(|c| c.value).unwrap_or(choices[0].value)
    })
}

/// Writes machine-readable output to standard output as it is; a reader that went away ends
/// the process quietly.
fn print(text: &str) {
    write_or_exit(std::io::stdout().lock(), text);
}

/// Writes text for people to standard error, control characters shown.
fn eprint(text: &str) {
    write_or_exit(std::io::stderr().lock(), &arbor_domain::text::terminal_safe(text));
}

fn write_or_exit(mut stream: impl Write, text: &str) {
    if let Err(error) = stream.write_all(text.as_bytes()).and_then(|()| stream.flush())
        && error.kind() == std::io::ErrorKind::BrokenPipe
    {
        // The status of a process ended by SIGPIPE.
        std::process::exit(141);
    }
}
