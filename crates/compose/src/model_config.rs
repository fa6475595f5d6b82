//! The embedder and reasoner sections of `arbor.json`, and building the ports they name.
//!
//! API keys are never written to `arbor.json`: the configuration names the environment
//! variable that holds one. Changing the embedder of a store that has vectors starts a
//! re-embedding: the old embedder is kept as `previous_embedder`, retrieval searches both
//! until `arbor jobs reindex` has moved every node, then the old one is dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{ComposeError, DoingWith, Result};
use arbor_adapters_models::packaged::{self, Found, MINILM_L6_V2, PACKAGED_MODELS};
use arbor_ports::{Embedder, HashingEmbedder, HeuristicReasoner, Reasoner};
use serde::{Deserialize, Serialize};

use crate::choice::Choice;

/// `arbor.json`'s `embedder` (and `previous_embedder`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum EmbedderConfig {
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
pub enum ReasonerConfig {
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteEndpoint {
    /// The API root including /v1, e.g. http://localhost:11434/v1 (Ollama) or
    /// https://api.openai.com/v1.
    pub base_url: String,
    /// The model name the endpoint knows.
    pub model: String,
    /// The environment variable holding the API key (sent as a bearer token), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Seconds a request may take.
    pub timeout_secs: u64,
    /// Retries after a connection error, timeout, 429 or 5xx.
    pub max_retries: u32,
    /// At most this many requests a second (0: no limit).
    pub requests_per_second: f64,
}

impl RemoteEndpoint {
    fn endpoint_config(&self) -> Result<arbor_adapters_models::EndpointConfig> {
        let mut config = arbor_adapters_models::EndpointConfig::new(&self.base_url, &self.model);
        config.timeout = Duration::from_secs(self.timeout_secs.max(1));
        config.max_retries = self.max_retries;
        config.requests_per_second = self.requests_per_second;
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var).map_err(|_| {
                ComposeError::Refused(format!("the model's API key is read from {var}, which is not set"))
            })?;
            config.api_key = Some(key);
        }
        Ok(config)
    }
}

impl EmbedderConfig {
    pub fn hashing() -> EmbedderConfig {
        EmbedderConfig::Hashing { dimensions: arbor_ports::DEFAULT_HASHING_DIMENSIONS }
    }

    /// The embedder this configuration names.
    pub fn build(&self) -> Result<Arc<dyn Embedder>> {
        Ok(match self {
            EmbedderConfig::Hashing { dimensions } => Arc::new(
                // Dimensions out of range are the settings' fault, not a model that failed to load.
                HashingEmbedder::new(*dimensions)
                    .map_err(|error| ComposeError::Refused(format!("configuring a hashing embedder: {error}")))?,
            ),
            EmbedderConfig::Local { model, path } => local_embedder(model, path)?,
            EmbedderConfig::OpenAi { endpoint, dimensions, batch } => Arc::new(
                arbor_adapters_models::OpenAiEmbedder::new(endpoint.endpoint_config()?, *dimensions, *batch)
                    .model(|| "configuring the remote embedder".to_owned())?,
            ),
        })
    }

    /// One line for people: what it is and where it runs.
    pub fn describe(&self) -> String {
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
        .model(|| format!("loading the local embedder {model}"))?;
    Ok(Arc::new(embedder))
}

#[cfg(not(feature = "local-embed"))]
fn local_embedder(model: &str, _path: &Path) -> Result<Arc<dyn Embedder>> {
    Err(ComposeError::Refused(format!(
        "this store embeds with the local model {model}, but this arbor was built without the `local-embed` feature; \
         rebuild it with default features"
    )))
}

impl ReasonerConfig {
    pub fn build(&self) -> Result<Arc<dyn Reasoner>> {
        Ok(match self {
            ReasonerConfig::Heuristic => Arc::new(HeuristicReasoner),
            ReasonerConfig::OpenAi { endpoint, json_output } => Arc::new(
                arbor_adapters_models::OpenAiReasoner::new(endpoint.endpoint_config()?, *json_output)
                    .model(|| "configuring the remote reasoner".to_owned())?,
            ),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            ReasonerConfig::Heuristic => "heuristic (deterministic rules, no model)".to_owned(),
            ReasonerConfig::OpenAi { endpoint, .. } => {
                format!("{} at {} (remote; restricted memories never sent)", endpoint.model, endpoint.base_url)
            }
        }
    }
}

/// Which embedder a new store gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedderChoice {
    /// The local model if it is installed (see `arbor models install`), else hashing.
    Auto,
    /// The local model; an error if it is not installed.
    Local,
    /// Feature hashing (no model).
    Hashing,
}

impl EmbedderChoice {
    pub const CHOICES: &'static [Choice<EmbedderChoice>] = &[
        Choice {
            name: "auto",
            help: "The local model if it is installed (see `arbor models install`), else hashing",
            value: EmbedderChoice::Auto,
        },
        Choice {
            name: "local",
            help: "The local model; an error if it is not installed",
            value: EmbedderChoice::Local,
        },
        Choice { name: "hashing", help: "Feature hashing (no model)", value: EmbedderChoice::Hashing },
    ];

    /// The configuration for a new store. Never downloads.
    pub fn resolve(self) -> Result<EmbedderConfig> {
        let located = || MINILM_L6_V2.locate(&packaged::default_models_dir());
        Ok(match self {
            EmbedderChoice::Hashing => EmbedderConfig::hashing(),
            EmbedderChoice::Auto if !cfg!(feature = "local-embed") => EmbedderConfig::hashing(),
            EmbedderChoice::Auto => located().map_or_else(EmbedderConfig::hashing, |found| local_config(&found)),
            EmbedderChoice::Local => match located() {
                Some(found) => local_config(&found),
                None => {
                    return Err(ComposeError::Refused(format!(
                        "the local model {} is not installed: run `arbor models install`",
                        MINILM_L6_V2.name
                    )));
                }
            },
        })
    }
}

fn local_config(found: &Found) -> EmbedderConfig {
    EmbedderConfig::Local { model: MINILM_L6_V2.name.to_owned(), path: found.dir().to_path_buf() }
}

/// A model's name from its directory: the packaged model's when it is one.
pub fn local_name(path: &Path) -> String {
    PACKAGED_MODELS.iter().find(|m| path.components().any(|c| c.as_os_str() == m.module)).map_or_else(
        || path.file_name().map_or("local".to_owned(), |n| n.to_string_lossy().into_owned()),
        |m| m.name.to_owned(),
    )
}
