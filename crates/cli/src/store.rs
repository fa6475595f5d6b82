//! The store on disk: where it is (`--root`, then `ARBOR_ROOT`, then `./.arbor`), what marks a
//! directory as an Arbor store (`arbor.json`), and opening it with the adapters its
//! configuration names — SQLite in the directory (the default) or Postgres (cargo feature
//! `postgres`), bodies always as markdown in the directory. The composition root: the only
//! place adapters are chosen.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_adapters_models::CoalescingEmbedder;

use anyhow::{Context, Result, bail};
use arbor_adapters_sqlite::{SqliteConfig, SqliteDatabase, SqliteIndex, SqliteStore};
use arbor_app::{Arbor, Options, Policy, Ports};
use arbor_domain::time::Timestamp;
use arbor_ports::fs::FsBodyStore;
use arbor_ports::{BodyIntent, RandomIds, SystemClock};
use serde::{Deserialize, Serialize};

use crate::models::{EmbedderChoice, EmbedderConfig, ReasonerConfig};

/// The file that marks a directory as an Arbor store.
pub(crate) const CONFIG_FILE: &str = "arbor.json";
/// The SQLite database inside the store.
pub(crate) const DATABASE_FILE: &str = "arbor.db";
/// The store format this build reads and writes.
pub(crate) const FORMAT_VERSION: u32 = 1;
const FORMAT: &str = "arbor-store";

/// `arbor.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreConfig {
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
}

/// Where the search index (full text and vectors) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IndexBackend {
    /// In the store's own database (SQLite FTS5 and vectors, or Postgres with pgvector).
    #[default]
    Store,
    /// A LanceDB dataset in the store directory (`<root>/lance`), for large corpora; needs an
    /// arbor built with `--features lance`.
    Lance,
}

impl IndexBackend {
    fn is_default(&self) -> bool {
        *self == IndexBackend::Store
    }
}

/// The directory of a store's LanceDB dataset.
#[cfg(feature = "lance")]
pub(crate) const LANCE_DIR: &str = "lance";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Backend {
    /// SQLite in the store directory (embedded; nothing to run).
    Sqlite,
    /// A Postgres server with pgvector (`--database-url` or `ARBOR_DATABASE_URL`).
    Postgres,
}

/// Where a Postgres-backed store keeps its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PostgresSettings {
    /// The server, unless `ARBOR_DATABASE_URL` names it (which wins, and is never written here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The schema holding this store's tables.
    pub schema: String,
}

/// The environment variable naming the Postgres server; it overrides the configured URL.
pub(crate) const DATABASE_URL_VAR: &str = "ARBOR_DATABASE_URL";

/// How `init` creates a store.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InitOptions {
    /// Where rows live.
    #[arg(long, value_enum, default_value = "sqlite")]
    pub backend: Backend,
    /// The Postgres server (`postgres://user:password@host/db`), saved in arbor.json; or set
    /// ARBOR_DATABASE_URL, which is read on every run and never saved.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// The Postgres schema for this store's tables (one database can hold several stores);
    /// default `arbor`.
    #[arg(long, value_name = "NAME")]
    pub schema: Option<String>,
    /// How text becomes vectors: the local model when installed (`arbor models install`),
    /// else feature hashing.
    #[arg(long, value_enum, env = "ARBOR_EMBEDDER", default_value = "auto")]
    pub embedder: EmbedderChoice,
    /// Where the search index lives: the store's own database, or a LanceDB dataset beside it.
    #[arg(long, value_enum, default_value = "store")]
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
    pub(crate) fn new(options: &InitOptions, embedder: EmbedderConfig) -> StoreConfig {
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
        }
    }

    pub(crate) fn load(root: &Path) -> Result<StoreConfig> {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if !root.exists() {
                    bail!(
                        "there is no Arbor store at {}: the directory does not exist (create one with `arbor --root {} init`)",
                        root.display(),
                        root.display()
                    );
                }
                bail!(
                    "{} is not an Arbor store: it has no {CONFIG_FILE} (create one with `arbor --root {} init`)",
                    root.display(),
                    root.display()
                );
            }
            Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            bail!("{} is not an Arbor store configuration (no \"format\": \"{FORMAT}\")", path.display());
        }
        let version = value.get("format_version").and_then(|v| v.as_u64()).unwrap_or(0);
        if version > u64::from(FORMAT_VERSION) {
            bail!(
                "the store at {} was written by a newer arbor (format {version}); this build reads format {FORMAT_VERSION}: upgrade arbor",
                root.display()
            );
        }
        serde_json::from_value(value).with_context(|| format!("{} has an invalid configuration", path.display()))
    }
}

/// Where the store is: `--root`, else `ARBOR_ROOT`, else `./.arbor` (clap reads the
/// environment variable into `--root`).
pub(crate) fn resolve_root(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from(".arbor"))
}

/// Creates a store at `root`. Idempotent on an existing store (whatever `options` say);
/// refuses a directory that holds something else.
pub(crate) async fn init(root: &Path, options: &InitOptions) -> Result<(StoreConfig, bool)> {
    if root.join(CONFIG_FILE).exists() {
        let config = StoreConfig::load(root)?;
        return Ok((config, false));
    }
    if root.exists() {
        let mut entries = std::fs::read_dir(root).with_context(|| format!("reading {}", root.display()))?;
        if entries.next().is_some() {
            bail!("{} is not empty and is not an Arbor store; choose an empty or new directory", root.display());
        }
    }
    if options.backend == Backend::Sqlite && (options.database_url.is_some() || options.schema.is_some()) {
        bail!(
            "--database-url and --schema are for --backend postgres; the sqlite backend keeps its database in the \
             store directory"
        );
    }
    let config = StoreConfig::new(options, options.embedder.resolve()?);
    // The database first, then the marker: a directory with arbor.json always has a database.
    let database =
        Database::open(root, &config).await.with_context(|| format!("creating the database for {}", root.display()))?;
    open_index(root, &config, &database).await?;
    std::fs::create_dir_all(root.join(arbor_domain::paths::MEMORY_DIR))
        .with_context(|| format!("creating {}", root.display()))?;
    save_config(root, &config)?;
    Ok((config, true))
}

/// Writes `arbor.json` whole or not at all (a temporary file renamed over it).
pub(crate) fn save_config(root: &Path, config: &StoreConfig) -> Result<()> {
    let marker = root.join(CONFIG_FILE);
    let temp = root.join(format!(".{CONFIG_FILE}.tmp"));
    std::fs::write(&temp, serde_json::to_string_pretty(config)? + "\n")
        .with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, &marker).with_context(|| format!("writing {}", marker.display()))
}

/// The rows of a store, on the backend its configuration names.
pub(crate) enum Database {
    Sqlite(Arc<SqliteDatabase>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<arbor_adapters_postgres::PgDatabase>),
}

impl Database {
    /// Opens (creating and migrating if needed) the database `config` names for the store at
    /// `root`.
    pub(crate) async fn open(root: &Path, config: &StoreConfig) -> Result<Database> {
        match config.backend {
            Backend::Sqlite => {
                std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
                let db = SqliteDatabase::open(&SqliteConfig::new(root.join(DATABASE_FILE)))
                    .with_context(|| format!("opening the database in {}", root.display()))?;
                Ok(Database::Sqlite(Arc::new(db)))
            }
            Backend::Postgres => open_postgres(config).await,
        }
    }

    pub(crate) fn store(&self) -> Arc<dyn arbor_ports::MetadataStore> {
        match self {
            Database::Sqlite(db) => Arc::new(SqliteStore::new(db.clone())),
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Arc::new(arbor_adapters_postgres::PgStore::new(db.clone())),
        }
    }

    pub(crate) fn index(&self) -> Arc<dyn arbor_ports::SearchIndex> {
        match self {
            Database::Sqlite(db) => Arc::new(SqliteIndex::new(db.clone())),
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Arc::new(arbor_adapters_postgres::PgIndex::new(db.clone())),
        }
    }
}

/// The search index `config` names for the store at `root`.
pub(crate) async fn open_index(
    root: &Path,
    config: &StoreConfig,
    database: &Database,
) -> Result<Arc<dyn arbor_ports::SearchIndex>> {
    match config.index {
        IndexBackend::Store => Ok(database.index()),
        #[cfg(feature = "lance")]
        IndexBackend::Lance => {
            let dir = root.join(LANCE_DIR);
            let index = arbor_adapters_lance::LanceIndex::open(&dir)
                .await
                .with_context(|| format!("opening the LanceDB index in {}", dir.display()))?;
            Ok(Arc::new(index))
        }
        #[cfg(not(feature = "lance"))]
        IndexBackend::Lance => {
            let _ = root;
            bail!("this store's index is LanceDB, and this arbor was built without it: rebuild with `--features lance`")
        }
    }
}

#[cfg(feature = "postgres")]
async fn open_postgres(config: &StoreConfig) -> Result<Database> {
    use arbor_adapters_postgres::{PgConfig, PgDatabase, redacted};
    let settings = config.postgres.as_ref().context("arbor.json says postgres but has no \"postgres\" settings")?;
    let url = match std::env::var(DATABASE_URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => settings.url.clone().with_context(|| {
            format!("this store's rows are on Postgres: set {DATABASE_URL_VAR} to the server's URL")
        })?,
    };
    let pg = PgConfig::new(url.clone()).with_schema(settings.schema.clone());
    let db = PgDatabase::connect(&pg)
        .await
        .with_context(|| format!("opening schema {} on {}", settings.schema, redacted(&url)))?;
    Ok(Database::Postgres(Arc::new(db)))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_config: &StoreConfig) -> Result<Database> {
    bail!(
        "this store's rows are on Postgres ({DATABASE_URL_VAR}), but this arbor was built without Postgres \
         support; rebuild it with `cargo build --release --features postgres`"
    )
}

/// An open store.
pub(crate) struct Opened {
    pub arbor: Arbor,
    pub root: PathBuf,
    pub config: StoreConfig,
}

/// Opens the store at `root` with the adapters its configuration names, and cleans up after
/// any writer that died mid-write.
pub(crate) async fn open(root: &Path) -> Result<Opened> {
    open_with(root, Embedders::OneCallerAtATime, &person()).await
}

/// How embedders are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Embedders {
    /// As built: a command makes its calls itself, already batched.
    OneCallerAtATime,
    /// Behind a [`CoalescingEmbedder`]: a server's concurrent questions are embedded together.
    Coalesced,
}

/// Who runs this command, for the audit log: the operating-system user.
pub(crate) fn person() -> String {
    let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_else(|_| "local".to_owned());
    format!("person:{user}")
}

/// [`open`], choosing how embedders are called and who the audit log records as acting.
pub(crate) async fn open_with(root: &Path, embedders: Embedders, actor: &str) -> Result<Opened> {
    let wrap = |embedder: Arc<dyn arbor_ports::Embedder>| -> Arc<dyn arbor_ports::Embedder> {
        match embedders {
            Embedders::OneCallerAtATime => embedder,
            Embedders::Coalesced => Arc::new(CoalescingEmbedder::new(embedder, arbor_adapters_models::COALESCED_BATCH)),
        }
    };
    let config = StoreConfig::load(root)?;
    let database = Database::open(root, &config).await?;
    let ports = Ports {
        store: database.store(),
        index: open_index(root, &config, &database).await?,
        bodies: Arc::new(FsBodyStore::open(root)?),
        embedder: wrap(config.embedder.build()?),
        reasoner: config.reasoner.build()?,
        clock: Arc::new(SystemClock::default()),
        ids: Arc::new(RandomIds),
    };
    let options = Options { owner: owner(), actor: actor.to_owned(), ..Options::default() };
    let policy = Policy { decay: config.decay.clone().unwrap_or_default(), ..Policy::default() };
    let mut arbor = Arbor::new(ports, policy, options);
    if let Some(previous) = &config.previous_embedder {
        arbor = arbor.migrating_from(wrap(previous.build().context("loading the embedder being replaced")?));
    }
    if let Some(local) = &config.restricted_embedder {
        arbor =
            arbor.with_restricted_embedder(wrap(local.build().context("loading the embedder for restricted text")?))?;
    }
    let recovered = arbor.recover(&writer_is_dead).await.context("recovering after an interrupted write")?;
    if recovered.intents_cleared > 0 {
        tracing::info!(bodies = recovered.bodies_removed, "cleaned up after an interrupted write");
    }
    Ok(Opened { arbor, root: root.to_path_buf(), config })
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// This process, as recorded on body intents.
pub(crate) fn owner() -> String {
    format!("{}/{}", hostname(), std::process::id())
}

/// Whether the process that announced an intent is gone: on this host, by its pid; elsewhere
/// (or where that cannot be told), once the intent is an hour old.
pub(crate) fn writer_is_dead(intent: &BodyIntent) -> bool {
    let stale = Timestamp::now().duration_since(intent.created_at) > jiff::SignedDuration::from_hours(1);
    let Some((host, pid)) = intent.owner.rsplit_once('/') else { return stale };
    if host != hostname() {
        return stale;
    }
    match pid.parse::<u32>() {
        Ok(pid) if cfg!(target_os = "linux") => !Path::new(&format!("/proc/{pid}")).exists(),
        _ => stale,
    }
}

/// The same store with a fixed clock and sequential ids, so output is reproducible (tests).
pub(crate) fn deterministic(opened: &Opened) -> Result<Arbor> {
    let mut ports = opened.arbor.ports().clone();
    let start = Timestamp::from_second(1_780_000_000)?;
    ports.clock = Arc::new(arbor_ports::ManualClock::new(start));
    ports.ids = Arc::new(arbor_ports::SequentialIds::default());
    Ok(Arbor::new(ports, opened.arbor.policy().clone(), opened.arbor.options().clone()))
}
