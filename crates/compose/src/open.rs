//! Creating a store and opening it with the adapters its configuration names — SQLite in the
//! directory (the default) or Postgres (feature `postgres`), the index in the store's database
//! or in LanceDB (feature `lance`), bodies always as markdown in the directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{ComposeError, Doing, DoingInEngine, DoingWith, During, Result};
use arbor_adapters_models::CoalescingEmbedder;
use arbor_adapters_sqlite::{OpenMode, SqliteConfig, SqliteDatabase, SqliteIndex, SqliteStore};
use arbor_app::{Arbor, Options, Policy, Ports};
use arbor_domain::time::Timestamp;
use arbor_ports::fs::FsBodyStore;
use arbor_ports::{RandomIds, SystemClock};

use crate::config::{
    Backend, CONFIG_FILE, DATABASE_FILE, DATABASE_URL_VAR, IndexBackend, InitOptions, StoreConfig, save_config,
};
use crate::liveness::{owner, process_state, writer_is_dead};

/// What `init` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initialized {
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
pub async fn init(root: &Path, options: &InitOptions) -> Result<(StoreConfig, Initialized)> {
    if root.join(CONFIG_FILE).exists() {
        let config = StoreConfig::load(root)?;
        if config.backend == Backend::Sqlite && !sqlite_database_present(root) {
            if let Some(bodies) = first_body(root) {
                return Err(ComposeError::Refused(lost_database(root, &bodies)));
            }
            Database::open(root, &config, OpenMode::Create).await?;
            return Ok((config, Initialized::DatabaseRecreated));
        }
        return Ok((config, Initialized::AlreadyAStore));
    }
    if root.exists() {
        let mut entries = std::fs::read_dir(root).io(|| format!("reading {}", root.display()))?;
        if entries.next().is_some() {
            return Err(ComposeError::Refused(format!(
                "{} is not empty and is not an Arbor store; choose an empty or new directory",
                root.display()
            )));
        }
    }
    if options.backend == Backend::Sqlite && (options.database_url.is_some() || options.schema.is_some()) {
        return Err(ComposeError::Refused(
            "--database-url and --schema are for --backend postgres; the sqlite backend keeps its database in the \
             store directory"
                .to_owned(),
        ));
    }
    let config = StoreConfig::new(options, options.embedder.resolve()?);
    // The database first, then the marker: a directory with arbor.json always has a database.
    let database = Database::open(root, &config, OpenMode::Create)
        .await
        .during(|| format!("creating the database for {}", root.display()))?;
    open_index(root, &config, &database).await?;
    std::fs::create_dir_all(root.join(arbor_domain::paths::MEMORY_DIR))
        .io(|| format!("creating {}", root.display()))?;
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
        let reading = || format!("reading the store at {}", root.display());
        if !store.body_intents().await.backend(reading)?.is_empty()
            || !store.namespaces().await.backend(reading)?.is_empty()
        {
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

/// The rows of a store, on the backend its configuration names.
pub enum Database {
    Sqlite(Arc<SqliteDatabase>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<arbor_adapters_postgres::PgDatabase>),
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Sqlite(_) => f.write_str("Database::Sqlite"),
            #[cfg(feature = "postgres")]
            Database::Postgres(_) => f.write_str("Database::Postgres"),
        }
    }
}

impl Database {
    /// Opens the database `config` names for the store at `root`: creating it only in
    /// [`OpenMode::Create`] (a missing or empty database of an existing store is refused, never
    /// silently made anew), migrating it unless [`OpenMode::ReadOnly`].
    pub async fn open(root: &Path, config: &StoreConfig, mode: OpenMode) -> Result<Database> {
        match config.backend {
            Backend::Sqlite => {
                if mode == OpenMode::Create {
                    std::fs::create_dir_all(root).io(|| format!("creating {}", root.display()))?;
                }
                let path = root.join(DATABASE_FILE);
                let db = match SqliteDatabase::open(&SqliteConfig::new(&path).with_mode(mode)) {
                    Ok(db) => db,
                    Err(arbor_ports::Error::NotFound { what: "database file" | "database", .. }) => {
                        match first_body(root) {
                            Some(body) => return Err(ComposeError::Refused(lost_database(root, &body))),
                            None => {
                                return Err(ComposeError::Refused(format!(
                                    "the database of the store at {} is missing or empty, and it holds no memories: \
                                     `arbor --root {} init` makes a new one",
                                    root.display(),
                                    root.display()
                                )));
                            }
                        }
                    }
                    Err(error @ arbor_ports::Error::Integrity { what: "database", .. }) => {
                        return Err(ComposeError::Damaged {
                            source: error.into(),
                            doing: format!(
                                "the database in {} is damaged: restore it from a backup, or rebuild it from the \
                                 markdown with `arbor --root {} fsck --rebuild-from-bodies` (which sets the damaged \
                                 file aside); commands that only read still work",
                                root.display(),
                                root.display()
                            ),
                        });
                    }
                    Err(error) => {
                        return Err(error).backend(|| format!("opening the database in {}", root.display()));
                    }
                };
                Ok(Database::Sqlite(Arc::new(db)))
            }
            Backend::Postgres => open_postgres(config).await,
        }
    }

    pub fn store(&self) -> Arc<dyn arbor_ports::MetadataStore> {
        match self {
            Database::Sqlite(db) => Arc::new(SqliteStore::new(db.clone())),
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Arc::new(arbor_adapters_postgres::PgStore::new(db.clone())),
        }
    }

    pub fn index(&self) -> Arc<dyn arbor_ports::SearchIndex> {
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
            let dir = root.join(crate::config::LANCE_DIR);
            let index = arbor_adapters_lance::LanceIndex::open(&dir)
                .await
                .backend(|| format!("opening the LanceDB index in {}", dir.display()))?;
            Ok(Arc::new(index))
        }
        #[cfg(not(feature = "lance"))]
        IndexBackend::Lance => {
            let _ = root;
            Err(ComposeError::Refused(
                "this store's index is LanceDB, and this arbor was built without it: rebuild with `--features lance`"
                    .to_owned(),
            ))
        }
    }
}

#[cfg(feature = "postgres")]
async fn open_postgres(config: &StoreConfig) -> Result<Database> {
    use arbor_adapters_postgres::{PgConfig, PgDatabase, redacted};
    let Some(settings) = config.postgres.as_ref() else {
        return Err(ComposeError::settings(CONFIG_FILE, "arbor.json says postgres but has no \"postgres\" settings"));
    };
    let url = match std::env::var(DATABASE_URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => settings.url.clone().ok_or_else(|| {
            ComposeError::Refused(format!(
                "this store's rows are on Postgres: set {DATABASE_URL_VAR} to the server's URL"
            ))
        })?,
    };
    let pg = PgConfig::new(url.clone()).with_schema(settings.schema.clone());
    let db = PgDatabase::connect(&pg)
        .await
        .backend(|| format!("opening schema {} on {}", settings.schema, redacted(&url)))?;
    Ok(Database::Postgres(Arc::new(db)))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_config: &StoreConfig) -> Result<Database> {
    Err(ComposeError::Refused(format!(
        "this store's rows are on Postgres ({DATABASE_URL_VAR}), but this arbor was built without Postgres \
         support; rebuild it with `cargo build --release --features postgres`"
    )))
}

/// An open store.
pub struct Opened {
    pub arbor: Arbor,
    pub root: PathBuf,
    pub config: StoreConfig,
    /// The database the rows are in (the benchmark times its floor searches beside `arbor`).
    pub database: Database,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").field("root", &self.root).field("config", &self.config).finish_non_exhaustive()
    }
}

/// Opens the store at `root` with the adapters its configuration names, for a command that
/// writes, and cleans up after any writer that died mid-write.
pub async fn open(root: &Path) -> Result<Opened> {
    open_with(root, Embedders::OneCallerAtATime, &person()).await
}

/// Opens the store at `root` for a command that only reads: nothing is written (no migration,
/// no clean-up), so a store on a read-only filesystem, or one marked damaged, can be read.
pub async fn open_for_reading(root: &Path) -> Result<Opened> {
    open_in(root, Embedders::OneCallerAtATime, &person(), OpenMode::ReadOnly, Guard::EmptiedDatabase).await
}

/// Opens the store at `root` for `fsck`, which looks at whatever state it is in: a database
/// that lost its rows is reported by the check rather than refused. Writes only to repair.
pub async fn open_for_check(root: &Path, repair: bool) -> Result<Opened> {
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
pub enum Embedders {
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

/// A server's embedder for `config`, shared by every store it opens with the same one: a
/// multi-tenant server opens a store per tenant, and a model is then loaded once, with the
/// concurrent questions of all tenants sharing its batches.
fn shared_embedder(config: &crate::EmbedderConfig) -> Result<Arc<dyn arbor_ports::Embedder>> {
    type Shared = std::collections::BTreeMap<String, Arc<dyn arbor_ports::Embedder>>;
    static SHARED: std::sync::Mutex<Shared> = std::sync::Mutex::new(std::collections::BTreeMap::new());
    let key = serde_json::to_string(config).map_err(|e| ComposeError::settings(CONFIG_FILE, e))?;
    let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(embedder) = shared.get(&key) {
        return Ok(embedder.clone());
    }
    let embedder: Arc<dyn arbor_ports::Embedder> =
        Arc::new(CoalescingEmbedder::new(config.build()?, arbor_adapters_models::COALESCED_BATCH));
    shared.insert(key, embedder.clone());
    Ok(embedder)
}

/// [`open`], choosing how embedders are called and who the audit log records as acting.
pub async fn open_with(root: &Path, embedders: Embedders, actor: &str) -> Result<Opened> {
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
        bodies: Arc::new(FsBodyStore::open(root).backend(|| format!("opening the bodies in {}", root.display()))?),
        embedder: match embedders {
            Embedders::OneCallerAtATime => config.embedder.build()?,
            Embedders::Coalesced => shared_embedder(&config.embedder)?,
        },
        reasoner: config.reasoner.build()?,
        clock: Arc::new(SystemClock::default()),
        ids: Arc::new(RandomIds),
    };
    // One name for this process on its body intents and its job leases, so a crashed one can
    // be told apart from a running one.
    let options = Options { owner: owner(), worker: owner(), actor: actor.to_owned(), ..Options::default() };
    let policy = Policy {
        decay: config.decay.clone().unwrap_or_default(),
        health: config.health.unwrap_or_default(),
        approval: config.approval.clone().unwrap_or_default(),
        budget: config.retrieval_budget().map_err(|why| ComposeError::settings(root.join(CONFIG_FILE), why))?,
        ..Policy::default()
    };
    let mut arbor = Arbor::new(ports, policy, options).with_liveness(Arc::new(process_state));
    if let Some(previous) = &config.previous_embedder {
        arbor =
            arbor.migrating_from(wrap(previous.build().during(|| "loading the embedder being replaced".to_owned())?));
    }
    if let Some(local) = &config.restricted_embedder {
        let restricted = local.build().during(|| "loading the embedder for restricted text".to_owned())?;
        arbor = arbor.with_restricted_embedder(wrap(restricted))?;
    }
    // A database that lost its rows while the bodies survived is not an empty store.
    if guard == Guard::EmptiedDatabase
        && let Some(body) = rows_lost(root, arbor.ports().store.as_ref()).await?
    {
        return Err(ComposeError::Refused(lost_database(root, &body)));
    }
    if mode != OpenMode::ReadOnly {
        let recovered =
            arbor.recover(&writer_is_dead).await.engine(|| "recovering after an interrupted write".to_owned())?;
        if recovered.intents_cleared > 0 {
            tracing::info!(
                bodies = recovered.bodies_removed,
                copies = recovered.interrupted_writes_removed,
                "cleaned up after an interrupted write"
            );
        }
    }
    Ok(Opened { arbor, root: root.to_path_buf(), config, database })
}

/// Opens a store whose database lost its rows, to rebuild them: the guard against an
/// emptied database is what this is for, so it is skipped. Creates a missing SQLite file.
pub async fn open_for_rebuild(root: &Path) -> Result<Opened> {
    let config = StoreConfig::load(root)?;
    let mode = if config.backend == Backend::Sqlite && !sqlite_database_present(root) {
        OpenMode::Create
    } else {
        OpenMode::Existing
    };
    open_in(root, Embedders::OneCallerAtATime, &person(), mode, Guard::None).await
}

/// The same store with a fixed clock and sequential ids, so output is reproducible (tests).
pub fn deterministic(opened: &Opened) -> Result<Arbor> {
    let mut ports = opened.arbor.ports().clone();
    let start = Timestamp::from_second(1_780_000_000).unwrap_or(Timestamp::UNIX_EPOCH);
    ports.clock = Arc::new(arbor_ports::ManualClock::new(start));
    ports.ids = Arc::new(arbor_ports::SequentialIds::default());
    Ok(Arbor::new(ports, opened.arbor.policy().clone(), opened.arbor.options().clone()))
}
