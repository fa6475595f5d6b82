//! `arbor eval`: quality measured through the real pipeline, each run in a store of its own
//! (a temporary directory, or `--dir`, kept): `locomo` for retrieval recall on LoCoMo-format
//! conversations, `updates` for whether memories phrased the way people say them replace what
//! they update. The runs themselves live in `arbor-eval`; this is their command line.

use std::path::PathBuf;

use anyhow::Result;
use arbor_compose::EmbedderChoice;
use arbor_eval::beam::{self, BeamOptions};
use arbor_eval::locomo::{self, LocomoOptions};
use arbor_eval::updates::{self, UpdatesOptions};

use crate::choice;
use crate::output::print_json;
use crate::output::{errln, out};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum EvalCommand {
    /// Retrieval recall (R@k) on LoCoMo-format conversations: every turn ingested, every
    /// question asked in exact-evidence mode, within its own conversation.
    Locomo(LocomoArgs),
    /// Whether naturally phrased updates replace what they update, and keep what they do not:
    /// prints the update and keep probe counts.
    Updates(UpdatesArgs),
    /// Knowing what is current on BEAM's 100K chats (1-10 by default): whether an update ranks
    /// above the fact it updates, and whether contradicting statements both come back, marked.
    Beam(BeamArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct BeamArgs {
    /// BEAM's `chats/100K` directory (from a clone of github.com/mohammadtavakoli78/BEAM).
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// The chats to use, by number, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6,7,8,9,10")]
    chats: Vec<u32>,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct LocomoArgs {
    /// The LoCoMo JSON file (a list of conversations with their questions).
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// The cut-offs to report, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "5,10,25,50")]
    k: Vec<usize>,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct UpdatesArgs {
    /// The cases: a JSON list of `{id, namespace, events: [{observed_at, text}], probes: [{query,
    /// must_contain, must_not_contain}]}`.
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// Let the model the store at DIR is configured with (`arbor models use-reasoner`, served on
    /// this machine) judge the pairs its claims find, and nothing else; default: the rules.
    #[arg(long, value_name = "DIR")]
    reasoner_of: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
struct StoreArgs {
    /// Where to build the store (a new or empty directory, kept); default: a temporary one,
    /// removed afterwards.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The embedder: the local model when installed, else hashing.
    #[arg(long, value_parser = choice(EmbedderChoice::CHOICES), env = "ARBOR_EMBEDDER", default_value = "auto")]
    embedder: EmbedderChoice,
}

pub(crate) async fn run(command: EvalCommand, json: bool) -> Result<()> {
    let kept = match command {
        EvalCommand::Locomo(args) => {
            let options =
                LocomoOptions { data: args.data, k: args.k, dir: args.store.dir, embedder: args.store.embedder };
            let report = locomo::run(&options).await?;
            if json {
                print_json(&report)?
            } else {
                out!("{}", report.render())
            }
            options.dir
        }
        EvalCommand::Updates(args) => {
            let options = UpdatesOptions {
                data: args.data,
                dir: args.store.dir,
                embedder: args.store.embedder,
                reasoner_of: args.reasoner_of,
            };
            let report = updates::run(&options).await?;
            if json {
                print_json(&report)?
            } else {
                out!("{}", report.render())
            }
            options.dir
        }
        EvalCommand::Beam(args) => {
            let options =
                BeamOptions { data: args.data, chats: args.chats, dir: args.store.dir, embedder: args.store.embedder };
            let report =
                beam::run(&options, |chat, turns| errln!("beam: chat {chat} ingested ({turns} user turns)")).await?;
            if json {
                print_json(&report)?
            } else {
                out!("{}", report.render())
            }
            options.dir
        }
    };
    if let Some(dir) = kept {
        errln!("store kept at {}", dir.display());
    }
    Ok(())
}
