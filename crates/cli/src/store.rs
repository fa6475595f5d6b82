//! The store on disk: where it is (`--root`, then `ARBOR_ROOT`, then `./.arbor`), what marks a
//! directory as an Arbor store (`arbor.json`), and opening it with the adapters its
//! configuration names — SQLite in the directory (the default) or Postgres (cargo feature
//! `postgres`), bodies always as markdown in the directory. The composition root: the only
//! place adapters are chosen.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_adapters_models::CoalescingEmbedder;

use anyhow::{Context, Result, bail};
use arbor_adapters_sqlite::{OpenMode, SqliteConfig, SqliteDatabase, SqliteIndex, SqliteStore};
use arbor_app::{Arbor, Options, Policy, Ports, ProcessState};
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

/// What `init` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Initialized {
    Created,
    AlreadyAStore,
    /// The store's SQLite database was missing or empty and the store held no memories, so
    /// a new one was made.
    DatabaseRecreated,
}

/// Creates a store at `root`. Idempotent on an existing store (whatever `options` say);
/// refuses a directory that holds something else. A store whose SQLite database is gone (or
/// empty) gets a new one only if no body holds a memory; otherwise it is refused, since a new
/// database would hide them.
pub(crate) async fn init(root: &Path, options: &InitOptions) -> Result<(StoreConfig, Initialized)> {
    if root.join(CONFIG_FILE).exists() {
        let config = StoreConfig::load(root)?;
        if config.backend == Backend::Sqlite && !sqlite_database_present(root) {
            if let Some(bodies) = first_body(root) {
                bail!(lost_database(root, &bodies));
            }
            Database::open(root, &config, OpenMode::Create).await?;
            return Ok((config, Initialized::DatabaseRecreated));
        }
        return Ok((config, Initialized::AlreadyAStore));
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
    let database = Database::open(root, &config, OpenMode::Create)
        .await
        .with_context(|| format!("creating the database for {}", root.display()))?;
    open_index(root, &config, &database).await?;
    std::fs::create_dir_all(root.join(arbor_domain::paths::MEMORY_DIR))
        .with_context(|| format!("creating {}", root.display()))?;
    save_config(root, &config)?;
    Ok((config, Initialized::Created))
}

/// Whether the store's SQLite file exists and holds something (a truncated file is no
/// database).
fn sqlite_database_present(root: &Path) -> bool {
    std::fs::metadata(root.join(DATABASE_FILE)).is_ok_and(|m| m.len() > 0)
}

/// A body document under `<root>/memory`, if there is any: found without listing them all.
pub(crate) fn first_body(root: &Path) -> Option<PathBuf> {
    fn walk(dir: &Path, depth: usize) -> Option<PathBuf> {
        if depth > 8 {
            return None;
        }
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                if let Some(found) = walk(&path, depth + 1) {
                    return Some(found);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                return Some(path);
            }
        }
        None
    }
    walk(&root.join(arbor_domain::paths::MEMORY_DIR), 0)
}

/// A body the store's rows do not account for because the rows are gone: bodies on disk, yet
/// no tree and no write in flight. Looked at in this order, so a write in progress in another
/// process never looks like a loss: a body seen first belongs to a write whose intent is still
/// pending or whose rows (and tree) have committed by the time the store is read. Asked twice,
/// so a tree dissolving meanwhile (its bodies go first, then its rows) does not either.
async fn rows_lost(root: &Path, store: &dyn arbor_ports::MetadataStore) -> Result<Option<PathBuf>> {
    for _ in 0..2 {
        let Some(body) = first_body(root) else { return Ok(None) };
        if !store.body_intents().await?.is_empty() || !store.namespaces().await?.is_empty() {
            return Ok(None);
        }
        if first_body(root).is_none() {
            return Ok(None);
        }
        let _ = body;
    }
    Ok(first_body(root))
}

/// Why a store whose database lost its rows is refused, and what to do.
fn lost_database(root: &Path, body: &Path) -> String {
    format!(
        "the database of the store at {} is missing or holds no memories, but memory/ still holds their bodies \
         (e.g. {}). Nothing was changed. Rebuild the rows from the markdown with `arbor --root {} fsck \
         --rebuild-from-bodies`, or put back the database from a backup.",
        root.display(),
        body.strip_prefix(root).unwrap_or(body).display(),
        root.display()
    )
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
    /// Opens the database `config` names for the store at `root`: creating it only in
    /// [`OpenMode::Create`] (a missing or empty database of an existing store is refused, never
    /// silently made anew), migrating it unless [`OpenMode::ReadOnly`].
    pub(crate) async fn open(root: &Path, config: &StoreConfig, mode: OpenMode) -> Result<Database> {
        match config.backend {
            Backend::Sqlite => {
                if mode == OpenMode::Create {
                    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
                }
                let path = root.join(DATABASE_FILE);
                let db = match SqliteDatabase::open(&SqliteConfig::new(&path).with_mode(mode)) {
                    Ok(db) => db,
                    Err(arbor_ports::Error::NotFound { what: "database file" | "database", .. }) => {
                        match first_body(root) {
                            Some(body) => bail!(lost_database(root, &body)),
                            None => bail!(
                                "the database of the store at {} is missing or empty, and it holds no memories: \
                                 `arbor --root {} init` makes a new one",
                                root.display(),
                                root.display()
                            ),
                        }
                    }
                    Err(error @ arbor_ports::Error::Integrity { what: "database", .. }) => {
                        return Err(error).with_context(|| {
                            format!(
                                "the database in {} is damaged: restore it from a backup, or rebuild it from the \
                                 markdown with `arbor --root {} fsck --rebuild-from-bodies` (which sets the damaged \
                                 file aside); commands that only read still work",
                                root.display(),
                                root.display()
                            )
                        });
                    }
                    Err(error) => {
                        return Err(error).with_context(|| format!("opening the database in {}", root.display()));
                    }
                };
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

/// Opens the store at `root` with the adapters its configuration names, for a command that
/// writes, and cleans up after any writer that died mid-write.
pub(crate) async fn open(root: &Path) -> Result<Opened> {
    open_with(root, Embedders::OneCallerAtATime, &person()).await
}

/// Opens the store at `root` for a command that only reads: nothing is written (no migration,
/// no clean-up), so a store on a read-only filesystem, or one marked damaged, can be read.
pub(crate) async fn open_for_reading(root: &Path) -> Result<Opened> {
    open_in(root, Embedders::OneCallerAtATime, &person(), OpenMode::ReadOnly, Guard::EmptiedDatabase).await
}

/// Opens the store at `root` for `fsck`, which looks at whatever state it is in: a database
/// that lost its rows is reported by the check rather than refused. Writes only to repair.
pub(crate) async fn open_for_check(root: &Path, repair: bool) -> Result<Opened> {
    let mode = if repair { OpenMode::Existing } else { OpenMode::ReadOnly };
    open_in(root, Embedders::OneCallerAtATime, &person(), mode, Guard::None).await
}

/// Whether opening refuses a database that holds no memories while bodies exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guard {
    EmptiedDatabase,
    None,
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
    open_in(root, embedders, actor, OpenMode::Existing, Guard::EmptiedDatabase).await
}

async fn open_in(root: &Path, embedders: Embedders, actor: &str, mode: OpenMode, guard: Guard) -> Result<Opened> {
    let wrap = |embedder: Arc<dyn arbor_ports::Embedder>| -> Arc<dyn arbor_ports::Embedder> {
        match embedders {
            Embedders::OneCallerAtATime => embedder,
            Embedders::Coalesced => Arc::new(CoalescingEmbedder::new(embedder, arbor_adapters_models::COALESCED_BATCH)),
        }
    };
    let config = StoreConfig::load(root)?;
    let database = Database::open(root, &config, mode).await?;
    let ports = Ports {
        store: database.store(),
        index: open_index(root, &config, &database).await?,
        bodies: Arc::new(FsBodyStore::open(root)?),
        embedder: wrap(config.embedder.build()?),
        reasoner: config.reasoner.build()?,
        clock: Arc::new(SystemClock::default()),
        ids: Arc::new(RandomIds),
    };
    // One name for this process on its body intents and its job leases, so a crashed one can
    // be told apart from a running one.
    let options = Options { owner: owner(), worker: owner(), actor: actor.to_owned(), ..Options::default() };
    let policy = Policy { decay: config.decay.clone().unwrap_or_default(), ..Policy::default() };
    let mut arbor = Arbor::new(ports, policy, options).with_liveness(Arc::new(process_state));
    if let Some(previous) = &config.previous_embedder {
        arbor = arbor.migrating_from(wrap(previous.build().context("loading the embedder being replaced")?));
    }
    if let Some(local) = &config.restricted_embedder {
        arbor =
            arbor.with_restricted_embedder(wrap(local.build().context("loading the embedder for restricted text")?))?;
    }
    // A database that lost its rows while the bodies survived is not an empty store.
    if guard == Guard::EmptiedDatabase
        && let Some(body) = rows_lost(root, arbor.ports().store.as_ref()).await?
    {
        bail!(lost_database(root, &body));
    }
    if mode != OpenMode::ReadOnly {
        let recovered = arbor.recover(&writer_is_dead).await.context("recovering after an interrupted write")?;
        if recovered.intents_cleared > 0 {
            tracing::info!(
                bodies = recovered.bodies_removed,
                copies = recovered.interrupted_writes_removed,
                "cleaned up after an interrupted write"
            );
        }
    }
    Ok(Opened { arbor, root: root.to_path_buf(), config })
}

/// Opens a store whose database lost its rows, to rebuild them: the guard against an
/// emptied database is what this is for, so it is skipped. Creates a missing SQLite file.
pub(crate) async fn open_for_rebuild(root: &Path) -> Result<Opened> {
    let config = StoreConfig::load(root)?;
    let mode = if config.backend == Backend::Sqlite && !sqlite_database_present(root) {
        OpenMode::Create
    } else {
        OpenMode::Existing
    };
    open_in(root, Embedders::OneCallerAtATime, &person(), mode, Guard::None).await
}

/// Whether the store's SQLite file carries the mark of a failed integrity check.
pub(crate) fn marked_damaged(root: &Path) -> bool {
    arbor_adapters_sqlite::damage_marker(&root.join(DATABASE_FILE)).exists()
}

/// Moves a damaged SQLite database aside (with its log), so a rebuild starts from a new one;
/// returns where it went.
pub(crate) fn move_damaged_database_aside(root: &Path) -> Result<PathBuf> {
    let stamp = Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string();
    let aside = root.join(format!("{DATABASE_FILE}.damaged-{stamp}"));
    for suffix in ["", "-wal", "-shm"] {
        let from = root.join(format!("{DATABASE_FILE}{suffix}"));
        if from.exists() {
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&from, &to).with_context(|| format!("moving {} aside", from.display()))?;
        }
    }
    let marker = arbor_adapters_sqlite::damage_marker(&root.join(DATABASE_FILE));
    if marker.exists() {
        std::fs::remove_file(&marker).with_context(|| format!("removing {}", marker.display()))?;
    }
    Ok(aside)
}

/// The damaged databases `fsck --rebuild-from-bodies` set aside in the store (each with the log
/// and shared-memory files beside it).
fn set_aside_databases(root: &Path) -> Result<Vec<PathBuf>> {
    let prefix = format!("{DATABASE_FILE}.damaged-");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).with_context(|| format!("reading {}", root.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with(&prefix) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// What fsck says of each set-aside damaged database: it is there, and may hold memories
/// forgotten since (a forget removes a copy only when it finds the memory's id in it, which
/// damage can have blurred). Deleting one is the person's decision; fsck never does.
pub(crate) fn set_aside_database_findings(root: &Path) -> Result<Vec<arbor_app::Finding>> {
    let mut findings = Vec::new();
    for file in set_aside_databases(root)? {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name.ends_with("-wal") || name.ends_with("-shm") {
            continue;
        }
        let finding = arbor_app::Finding::new(
            arbor_app::FindingKind::SetAsideDatabase,
            name,
            "a damaged database a rebuild set aside; it may still hold memories forgotten since",
        )
        .remedy(format!(
            "delete it (and any -wal/-shm beside it) once nothing in it is needed: rm {}*",
            file.display()
        ));
        findings.push(finding);
    }
    Ok(findings)
}

/// Whether `file` holds any of `needles`, read a megabyte at a time (a database can be large).
fn file_holds_any(file: &Path, needles: &[&[u8]]) -> Result<bool> {
    use std::io::Read;
    let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0);
    if longest == 0 {
        return Ok(false);
    }
    let mut reader = std::fs::File::open(file).with_context(|| format!("reading {}", file.display()))?;
    let mut window: Vec<u8> = Vec::with_capacity((1 << 20) + longest);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let read = reader.read(&mut chunk).with_context(|| format!("reading {}", file.display()))?;
        if read == 0 {
            return Ok(false);
        }
        window.extend_from_slice(&chunk[..read]);
        if needles.iter().any(|n| !n.is_empty() && window.windows(n.len()).any(|w| w == *n)) {
            return Ok(true);
        }
        // Keep the tail a needle could straddle into the next read.
        let keep = window.len().min(longest - 1);
        window.drain(..window.len() - keep);
    }
}

/// Removes the set-aside damaged databases that hold any of `needles` (the ids of forgotten
/// memories): a damaged copy cannot be edited, and after a forget no file in the store may
/// keep the memory. Copies that never held it stay. Returns the files removed.
pub(crate) fn erase_from_set_aside_databases(root: &Path, needles: &[String]) -> Result<Vec<PathBuf>> {
    let needles: Vec<&[u8]> = needles.iter().map(|n| n.as_bytes()).collect();
    let files = set_aside_databases(root)?;
    let mut holding = Vec::new();
    for file in &files {
        if file_holds_any(file, &needles)? {
            holding.push(file.clone());
        }
    }
    // A copy's log and shared-memory files go with it (they are named after it).
    let copy_of = |file: &Path| {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        name.strip_suffix("-wal").or_else(|| name.strip_suffix("-shm")).map(str::to_owned).unwrap_or(name)
    };
    let doomed: BTreeSet<String> = holding.iter().map(|file| copy_of(file)).collect();
    let mut removed = Vec::new();
    for file in files.iter().filter(|file| doomed.contains(&copy_of(file))) {
        std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
        removed.push(file.clone());
    }
    Ok(removed)
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

/// Whether the process an owner string (`<host>/<pid>`) names is running: on this host, by its
/// pid; another host's, or where that cannot be told, is unknown.
pub(crate) fn process_state(owner: &str) -> ProcessState {
    let Some((host, pid)) = owner.rsplit_once('/') else { return ProcessState::Unknown };
    if host != hostname() || !cfg!(target_os = "linux") {
        return ProcessState::Unknown;
    }
    match pid.parse::<u32>() {
        Ok(pid) if pid == std::process::id() => ProcessState::Alive,
        Ok(pid) if Path::new(&format!("/proc/{pid}")).exists() => ProcessState::Alive,
        Ok(_) => ProcessState::Gone,
        Err(_) => ProcessState::Unknown,
    }
}

/// Whether the process that announced an intent is gone: on this host, by its pid; elsewhere
/// (or where that cannot be told), once the intent is an hour old.
pub(crate) fn writer_is_dead(intent: &BodyIntent) -> bool {
    let stale = Timestamp::now().duration_since(intent.created_at) > jiff::SignedDuration::from_hours(1);
    match process_state(&intent.owner) {
        ProcessState::Gone => true,
        ProcessState::Alive => false,
        ProcessState::Unknown => stale,
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
