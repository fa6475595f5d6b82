//! Opening the database: pragmas, migrations, and the one connection the store and the index
//! share.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arbor_ports::{Error, Result};
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use rusqlite::functions::FunctionFlags;

use crate::error::sql_error;
use crate::mirror::{Compiled, Mirror};
use crate::schema;

/// Prepared statements kept per connection (rusqlite keeps 16 by default).
const STATEMENT_CACHE: usize = 128;

/// How to open the database.
#[derive(Debug, Clone)]
pub struct SqliteConfig {
    pub path: PathBuf,
    /// How long to wait for another process's write lock before giving up.
    pub busy_timeout: Duration,
    /// Page cache size, in KiB.
    pub cache_kib: u32,
}

impl SqliteConfig {
    pub fn new(path: impl Into<PathBuf>) -> SqliteConfig {
        SqliteConfig { path: path.into(), busy_timeout: Duration::from_secs(10), cache_kib: 64 * 1024 }
    }
}

/// An open Arbor database. Queries are short, so they run on the calling thread under one
/// lock; other processes share the file through WAL.
#[derive(Debug)]
pub struct SqliteDatabase {
    path: PathBuf,
    conn: Mutex<Connection>,
    /// The index mirror and the filter the `arbor_visible` SQL function applies, shared by
    /// every [`SqliteIndex`](crate::SqliteIndex) on this database.
    gate: Arc<Mutex<Gate>>,
}

/// What the `arbor_visible(rowid)` SQL function consults: the in-memory mirror of the index's
/// filter columns, and the filter of the search being run (none outside a search, so the
/// function admits nothing then).
#[derive(Debug, Default)]
pub(crate) struct Gate {
    pub mirror: Mirror,
    pub compiled: Option<Compiled>,
}

impl SqliteDatabase {
    /// Opens or creates the database at `config.path` and migrates it to the current schema.
    /// Refuses a database written by a newer Arbor.
    pub fn open(config: &SqliteConfig) -> Result<SqliteDatabase> {
        let conn = Connection::open(&config.path).map_err(sql_error)?;
        conn.busy_timeout(config.busy_timeout).map_err(sql_error)?;
        // WAL lets readers in other processes work during writes; synchronous=FULL makes every
        // acknowledged commit durable; secure_delete zeroes deleted content so forgotten
        // words do not survive in free pages.
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             PRAGMA secure_delete = ON;
             PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY;
             PRAGMA cache_size = -{};",
            config.cache_kib
        ))
        .map_err(sql_error)?;
        let mut conn = conn;
        // Plans that never depend on bound values: otherwise SQLite re-prepares a statement
        // on each new binding of a parameter it planned with (an equality it estimated, a
        // `LIMIT ?`), which is most of them, including FTS5's internal lookups — and the
        // re-preparation costs more than the small queries themselves.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(sql_error)?;
        // Room for every distinct statement the adapters run, so none is parsed twice.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        schema::migrate(&mut conn)?;
        let gate = Arc::new(Mutex::new(Gate::default()));
        let shared = gate.clone();
        conn.create_scalar_function("arbor_visible", 1, FunctionFlags::SQLITE_UTF8, move |ctx| {
            let rowid: i64 = ctx.get(0)?;
            let gate = shared.lock().unwrap_or_else(|e| e.into_inner());
            Ok(gate.compiled.as_ref().is_some_and(|compiled| gate.mirror.visible(compiled, rowid)))
        })
        .map_err(sql_error)?;
        Ok(SqliteDatabase { path: config.path.clone(), conn: Mutex::new(conn), gate })
    }

    pub(crate) fn gate(&self) -> MutexGuard<'_, Gate> {
        self.gate.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic mid-query cannot leave a transaction half-applied: rusqlite rolls back an
        // unfinished transaction when it is dropped.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies the write-ahead log into the main file and truncates it, so pages that held
    /// forgotten words are overwritten in the file and gone from the log.
    pub fn checkpoint(&self) -> Result<()> {
        let conn = self.lock();
        let (busy, _, _): (i64, i64, i64) = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql_error)?;
        if busy != 0 {
            return Err(Error::Unavailable {
                backend: "sqlite",
                source: "another connection holds an old snapshot; the log could not be truncated yet".into(),
            });
        }
        Ok(())
    }

    /// Whether `needle` occurs in the database file or its write-ahead log as raw bytes — in
    /// live rows, free pages or old page images alike. For verifying that forgotten words are
    /// gone.
    pub fn files_contain(&self, needle: &[u8]) -> Result<bool> {
        if needle.is_empty() {
            return Ok(false);
        }
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        for file in [self.path.clone(), PathBuf::from(wal)] {
            match std::fs::read(&file) {
                Ok(bytes) if bytes.windows(needle.len()).any(|w| w == needle) => return Ok(true),
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(Error::backend("sqlite", error)),
            }
        }
        Ok(false)
    }
}
