//! `arbor.json`: what marks a directory as an Arbor store, and which backend, index, models and
//! decay policy it names.

use std::path::{Path, PathBuf};

use crate::error::{ComposeError, Doing, Result};
use arbor_domain::time::Timestamp;
use serde::{Deserialize, Serialize};

use crate::choice::Choice;
use crate::durable::{Readers, replace_file};
use crate::model_config::{EmbedderChoice, EmbedderConfig, ReasonerConfig};

/// The file that marks a directory as an Arbor store.
pub const CONFIG_FILE: &str = "arbor.json";
/// The SQLite database inside the store.
pub(crate) const DATABASE_FILE: &str = "arbor.db";
/// The store format this build reads and writes.
pub(crate) const FORMAT_VERSION: u32 = 1;
const FORMAT: &str = "arbor-store";

/// `arbor.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    pub format: String,
    pub format_version: u32,
    pub backend: Backend,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PostgresSettings>,
    pub created_at: Timestamp,
    pub embedder: EmbedderConfig,
    /// The embedder being replaced while `arbor jobs reindex` re-embeds (searched until then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_embedder: Option<EmbedderConfig>,
    /// Embeds restricted text when `embedder` is remote (which never sees it); local only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted_embedder: Option<EmbedderConfig>,
    pub reasoner: ReasonerConfig,
    /// Where the search index lives: the store's own tables (default) or a LanceDB dataset in
    /// `<root>/lance`.
    #[serde(default, skip_serializing_if = "IndexBackend::is_default")]
    pub index: IndexBackend,
    /// How ranking ages memories and when unused candidates are archived (`DecayPolicy`);
    /// absent, nothing decays by time and candidates are archived after 90 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay: Option<arbor_domain::decay::DecayPolicy>,
    /// Where `arbor health` warns (`HealthThresholds`); absent, the defaults the design gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<arbor_domain::health::HealthThresholds>,
    /// Which inferred memories wait for a person (`ApprovalPolicy`); absent, the defaults:
    /// global and project memories and relationships wait, conversations' are current at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<arbor_domain::admission::ApprovalPolicy>,
    /// How much one retrieval pack may hold, in total and per layer, over the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<arbor_domain::budget::BudgetSettings>,
}

/// Where the search index (full text and vectors) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexBackend {
    /// In the store's own database (SQLite rows with in-memory BM25 and vectors, or Postgres with pgvector).
    #[default]
    Store,
    /// A LanceDB dataset in the store directory (`<root>/lance`), for large corpora; needs an
    /// arbor built with `--features lance`.
    Lance,
}

impl IndexBackend {
    pub const CHOICES: &'static [Choice<IndexBackend>] = &[
        Choice {
            name: "store",
            help: "In the store's own database (SQLite rows with in-memory BM25 and vectors, or Postgres with pgvector)",
            value: IndexBackend::Store,
        },
        Choice {
            name: "lance",
            help: "A LanceDB dataset in the store directory (`<root>/lance`), for large corpora; needs an \
                   arbor built with `--features lance`",
            value: IndexBackend::Lance,
        },
    ];

    fn is_default(&self) -> bool {
        *self == IndexBackend::Store
    }
}

/// The directory of a store's LanceDB dataset.
#[cfg(feature = "lance")]
pub(crate) const LANCE_DIR: &str = "lance";

/// Where a store's rows live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// SQLite in the store directory (embedded; nothing to run).
    Sqlite,
    /// A Postgres server with pgvector (`--database-url` or `ARBOR_DATABASE_URL`).
    Postgres,
}

impl Backend {
    pub const CHOICES: &'static [Choice<Backend>] = &[
        Choice {
            name: "sqlite",
            help: "SQLite in the store directory (embedded; nothing to run)",
            value: Backend::Sqlite,
        },
        Choice {
            name: "postgres",
            help: "A Postgres server with pgvector (--database-url or ARBOR_DATABASE_URL)",
            value: Backend::Postgres,
        },
    ];
}

/// Where a Postgres-backed store keeps its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSettings {
    /// The server, unless `ARBOR_DATABASE_URL` names it (which wins, and is never written here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The schema holding this store's tables.
    pub schema: String,
}

/// The environment variable naming the Postgres server; it overrides the configured URL.
pub(crate) const DATABASE_URL_VAR: &str = "ARBOR_DATABASE_URL";

/// How `init` creates a store.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Where rows live.
    pub backend: Backend,
    /// The Postgres server (`postgres://user:password@host/db`), saved in arbor.json; absent,
    /// ARBOR_DATABASE_URL is read on every run (and never saved).
    pub database_url: Option<String>,
    /// The Postgres schema for this store's tables (one database can hold several stores);
    /// absent, `arbor`.
    pub schema: Option<String>,
    /// How text becomes vectors.
    pub embedder: EmbedderChoice,
    /// Where the search index lives.
    pub index: IndexBackend,
}

impl Default for InitOptions {
    fn default() -> InitOptions {
        InitOptions {
            backend: Backend::Sqlite,
            database_url: None,
            schema: None,
            embedder: EmbedderChoice::Auto,
            index: IndexBackend::Store,
        }
    }
}

impl StoreConfig {
    pub fn new(options: &InitOptions, embedder: EmbedderConfig) -> StoreConfig {
        StoreConfig {
            format: FORMAT.to_owned(),
            format_version: FORMAT_VERSION,
            backend: options.backend,
            postgres: (options.backend == Backend::Postgres).then(|| PostgresSettings {
                url: options.database_url.clone(),
                schema: options.schema.clone().unwrap_or_else(|| "arbor".to_owned()),
            }),
            created_at: Timestamp::now(),
            embedder,
            previous_embedder: None,
            restricted_embedder: None,
            reasoner: ReasonerConfig::Heuristic,
            index: options.index,
            decay: None,
            health: None,
            approval: None,
            budget: None,
        }
    }

    pub fn load(root: &Path) -> Result<StoreConfig> {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if !root.exists() {
                    return Err(ComposeError::Refused(format!(
                        "there is no Arbor store at {}: the directory does not exist (create one with `arbor --root {} init`)",
                        root.display(),
                        root.display()
                    )));
                }
                return Err(ComposeError::Refused(format!(
                    "{} is not an Arbor store: it has no {CONFIG_FILE} (create one with `arbor --root {} init`)",
                    root.display(),
                    root.display()
                )));
            }
            Err(error) => return Err(error).io(|| format!("reading {}", path.display())),
        };
        StoreConfig::parse(&text, root)
    }

    /// Settings from the text of an `arbor.json` (`root` names the store in messages): the
    /// one check every reader of the file makes.
    pub fn parse(text: &str, root: &Path) -> Result<StoreConfig> {
        let path = root.join(CONFIG_FILE);
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ComposeError::settings(&path, format!("{} is not valid JSON: {e}", path.display())))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            let reason =
                format!("{} is not an Arbor store configuration (no \"format\": \"{FORMAT}\")", path.display());
            return Err(ComposeError::settings(&path, reason));
        }
        let version = value.get("format_version").and_then(|v| v.as_u64()).unwrap_or(0);
        if version > u64::from(FORMAT_VERSION) {
            return Err(ComposeError::Refused(format!(
                "the store at {} was written by a newer arbor (format {version}); this build reads format {FORMAT_VERSION}: upgrade arbor",
                root.display()
            )));
        }
        let config: StoreConfig = serde_json::from_value(value).map_err(|e| {
            ComposeError::settings(&path, format!("{} has an invalid configuration: {e}", path.display()))
        })?;
        config.retrieval_budget().map_err(|why| ComposeError::settings(&path, format!("{}: {why}", path.display())))?;
        Ok(config)
    }

    /// The budget retrieval keeps: the defaults with this store's settings over them.
    pub fn retrieval_budget(&self) -> std::result::Result<arbor_domain::budget::RetrievalBudget, String> {
        self.budget.clone().unwrap_or_default().budget()
    }
}

/// Replaces `arbor.json` with settings a person wrote (the memory centre's Settings tab): the
/// text must be settings `arbor` opens the store with, its models must build, and it must keep
/// what moves data when it changes — the backend, its connection, the index and the embedders
/// change only through their own commands (`arbor models`, a re-index), never by an edit. The
/// file is written whole or not at all. `Ok(Err(why))` is a refusal, in words for the writer.
pub fn replace_settings(root: &Path, text: &str) -> Result<std::result::Result<StoreConfig, String>> {
    let current = StoreConfig::load(root)?;
    let mut proposed = match StoreConfig::parse(text, root) {
        Ok(proposed) => proposed,
        Err(error) => return Ok(Err(error.with_causes())),
    };
    // What `settings_for_display` hid comes back hidden: it stands for what the file holds.
    if let (Some(now), Some(asked)) = (&current.postgres, &mut proposed.postgres)
        && asked.url.as_deref() == Some(HIDDEN)
    {
        asked.url.clone_from(&now.url);
    }
    let fixed = [
        ("backend", json_of(&current.backend) == json_of(&proposed.backend)),
        ("postgres", json_of(&current.postgres) == json_of(&proposed.postgres)),
        ("index", json_of(&current.index) == json_of(&proposed.index)),
        ("embedder", json_of(&current.embedder) == json_of(&proposed.embedder)),
        ("previous_embedder", json_of(&current.previous_embedder) == json_of(&proposed.previous_embedder)),
        ("restricted_embedder", json_of(&current.restricted_embedder) == json_of(&proposed.restricted_embedder)),
        ("created_at", current.created_at == proposed.created_at),
        // Where model calls go and which secret they carry: `arbor models`, never an edit
        // made through a browser, which could send a server's secret to a host of its choosing.
        ("reasoner", json_of(&current.reasoner) == json_of(&proposed.reasoner)),
    ];
    if let Some((key, _)) = fixed.iter().find(|(_, same)| !same) {
        return Ok(Err(format!(
            "\"{key}\" cannot be changed here: it decides where memories and vectors are kept (use `arbor models` or `arbor init` for a new store)"
        )));
    }
    if let Err(error) = proposed.reasoner.build() {
        return Ok(Err(format!("\"reasoner\": {}", error.with_causes())));
    }
    save_config(root, &proposed)?;
    Ok(Ok(proposed))
}

/// What stands in for a secret in [`settings_for_display`].
pub(crate) const HIDDEN: &str = "(hidden)";

/// `arbor.json` as the memory centre shows it: the database URL (which may carry a password)
/// hidden.
pub fn settings_for_display(root: &Path) -> Result<String> {
    let config = StoreConfig::load(root)?;
    let mut value = json_of(&config);
    if let Some(url) = value.pointer_mut("/postgres/url")
        && !url.is_null()
    {
        *url = serde_json::Value::String(HIDDEN.to_owned());
    }
    pretty(root, &value)
}

fn json_of(value: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Settings as their file holds them.
fn pretty(root: &Path, value: &impl Serialize) -> Result<String> {
    let path = root.join(CONFIG_FILE);
    serde_json::to_string_pretty(value)
        .map(|text| text + "\n")
        .map_err(|e| ComposeError::settings(&path, format!("{} cannot be written: {e}", path.display())))
}

/// Loads `arbor.json`, changes it, and saves it whole; returns what was saved.
pub fn update_config(root: &Path, change: impl FnOnce(&mut StoreConfig)) -> Result<StoreConfig> {
    let mut config = StoreConfig::load(root)?;
    change(&mut config);
    save_config(root, &config)?;
    Ok(config)
}

/// Where the store is: the directory the caller names (`--root`, or `ARBOR_ROOT`), else
/// `./.arbor`.
pub fn resolve_root(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from(".arbor"))
}

/// Writes `arbor.json` whole or not at all, this user's alone (it may name a database with its
/// password).
pub fn save_config(root: &Path, config: &StoreConfig) -> Result<()> {
    let text = pretty(root, config)?;
    replace_file(&root.join(CONFIG_FILE), text.as_bytes(), Readers::OwnerOnly)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory centre's settings: the database URL is shown hidden and comes back as it
    /// was; where model calls go cannot be changed by an edit; a good edit is written whole.
    #[test]
    fn settings_hide_the_database_url_and_keep_what_an_edit_may_not_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let options = InitOptions {
            backend: Backend::Postgres,
            database_url: Some("postgres://u:s3cret@db/arbor".into()),
            ..InitOptions::default()
        };
        save_config(root, &StoreConfig::new(&options, EmbedderConfig::hashing())).unwrap();
        let shown = settings_for_display(root).unwrap();
        assert!(!shown.contains("s3cret") && shown.contains(HIDDEN), "{shown}");
        let mut edited: serde_json::Value = serde_json::from_str(&shown).unwrap();
        edited["health"] = serde_json::json!({"max_candidate_wait_days": 3});
        assert!(replace_settings(root, &edited.to_string()).unwrap().is_ok());
        let saved = StoreConfig::load(root).unwrap();
        assert_eq!(saved.postgres.unwrap().url.as_deref(), Some("postgres://u:s3cret@db/arbor"), "kept, not hidden");
        assert_eq!(saved.health.unwrap().max_candidate_wait_days, 3);
        edited["reasoner"] = serde_json::json!({
            "kind": "openai", "base_url": "https://elsewhere.example/v1", "model": "m",
            "api_key_env": "ARBOR_API_TOKEN", "timeout_secs": 5, "max_retries": 0,
            "requests_per_second": 0.0, "json_output": "object"
        });
        let refused = replace_settings(root, &edited.to_string()).unwrap().unwrap_err();
        assert!(refused.contains("\"reasoner\" cannot be changed here"), "{refused}");
        assert!(StoreConfig::load(root).unwrap().reasoner == ReasonerConfig::Heuristic, "nothing written");
        let leftovers: Vec<_> = std::fs::read_dir(root)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary file left");
    }

    /// Every variant is offered by the name it is saved under in `arbor.json`.
    #[test]
    fn each_choice_is_named_as_it_is_saved() {
        for choice in Backend::CHOICES {
            assert_eq!(serde_json::to_value(choice.value).unwrap(), choice.name);
        }
        for choice in IndexBackend::CHOICES {
            assert_eq!(serde_json::to_value(choice.value).unwrap(), choice.name);
        }
        // A new variant fails to compile here until it is listed.
        for backend in [Backend::Sqlite, Backend::Postgres] {
            match backend {
                Backend::Sqlite | Backend::Postgres => {
                    assert!(Backend::CHOICES.iter().any(|c| c.value == backend));
                }
            }
        }
        for index in [IndexBackend::Store, IndexBackend::Lance] {
            match index {
                IndexBackend::Store | IndexBackend::Lance => {
                    assert!(IndexBackend::CHOICES.iter().any(|c| c.value == index));
                }
            }
        }
        for embedder in [EmbedderChoice::Auto, EmbedderChoice::Local, EmbedderChoice::Hashing] {
            match embedder {
                EmbedderChoice::Auto | EmbedderChoice::Local | EmbedderChoice::Hashing => {
                    assert!(EmbedderChoice::CHOICES.iter().any(|c| c.value == embedder));
                }
            }
        }
    }
}
