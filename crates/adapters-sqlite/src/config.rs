//! Opening the database: pragmas, migrations, and the one connection the store and the index
//! share.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use arbor_ports::{Error, Result};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

use crate::error::sql_error;
use crate::schema;
use arbor_search::Mirror;

/// How long a write waits for another process's write lock. Writers hold it for one batch
/// commit (milliseconds to a second or two for a batch of hundreds of events), so even a
/// queue of several busy writers clears well inside it; past it, the store is reported busy.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long truncating the log after a forget waits for readers of older snapshots (a
/// retrieval holds one for milliseconds); past it the log is truncated at the next scrub.
pub(crate) const CHECKPOINT_WAIT: Duration = Duration::from_secs(3);

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
    pub mode: OpenMode,
}

/// Whether opening may create the file, and whether this connection writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the file if it is missing, and migrate it: for a new store.
    Create,
    /// The file must exist already (a missing one is an error, never silently a new, empty
    /// database); migrate it if it is older.
    Existing,
    /// Read only: no write of any kind, not even a migration, so a store on a read-only
    /// filesystem (or one that failed an integrity check) can still be read.
    ReadOnly,
}

impl SqliteConfig {
    pub fn new(path: impl Into<PathBuf>) -> SqliteConfig {
        SqliteConfig {
            path: path.into(),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            cache_kib: 64 * 1024,
            mode: OpenMode::Create,
        }
    }

    #[must_use]
    pub fn with_mode(mut self, mode: OpenMode) -> SqliteConfig {
        self.mode = mode;
        self
    }
}

/// The file beside the database that says it failed an integrity check: writers refuse the
/// store while it exists (a damaged file must not take more writes), readers go on.
pub fn damage_marker(database: &Path) -> PathBuf {
    let mut marker = database.as_os_str().to_owned();
    marker.push(".damaged");
    PathBuf::from(marker)
}

/// Opens the file for reading only. A WAL database needs its `-shm` index; on a read-only
/// filesystem where the last writer left none (it removes both files when it closes cleanly,
/// having copied the log into the file), the file is complete, and SQLite may be told so
/// (`immutable`). With a log left behind and no index beside it, the log would be skipped,
/// so that case is refused instead.
fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    // Opening is lazy: the first read is what needs the `-shm` index.
    match conn.query_row("PRAGMA user_version", [], |_| Ok(())) {
        Ok(()) => return Ok(conn),
        Err(error) if !is_cannot_open(&error) => return Err(error),
        Err(_) => drop(conn),
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let log_left = std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0);
    if log_left {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some("the database has an unmerged log and no index beside it, and the directory is read-only".into()),
        ));
    }
    let uri = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(uri, flags)
}

fn is_cannot_open(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly))
}

/// `path` for a `file:` URI: absolute, with the characters URIs reserve escaped.
fn uri_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// An open Arbor database. Queries are short, so they run on the calling thread under one
/// lock; other processes share the file through WAL.
#[derive(Debug)]
pub struct SqliteDatabase {
    path: PathBuf,
    conn: Mutex<Connection>,
    /// The writers' busy timeout this connection was opened with, restored after a checkpoint.
    busy_timeout: Duration,
    /// The index mirror, shared by every [`SqliteIndex`](crate::SqliteIndex) on this
    /// database.
    gate: Mutex<Gate>,
}

/// The in-memory mirror of the index ([`Mirror`]), behind its own lock so searches and
/// writes of one process share one copy.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    pub mirror: Mirror,
    /// `PRAGMA data_version` when the mirror was last caught up: unchanged means no other
    /// connection has written since, so the change sequence need not be read.
    pub data_version: i64,
}

impl SqliteDatabase {
    /// Opens or creates the database at `config.path` and migrates it to the current schema.
    /// Refuses a database written by a newer Arbor.
    pub fn open(config: &SqliteConfig) -> Result<SqliteDatabase> {
        if config.mode != OpenMode::Create && !config.path.exists() {
            return Err(Error::NotFound { what: "database file", id: config.path.display().to_string() });
        }
        if config.mode != OpenMode::ReadOnly
            && let Ok(reason) = std::fs::read_to_string(damage_marker(&config.path))
        {
            return Err(Error::Integrity {
                what: "database",
                id: config.path.display().to_string(),
                detail: format!(
                    "it failed an integrity check ({}), so it takes no writes until it is repaired or restored",
                    reason.trim()
                ),
            });
        }
        let conn = match config.mode {
            OpenMode::Create => Connection::open(&config.path),
            OpenMode::Existing => Connection::open_with_flags(
                &config.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
            ),
            OpenMode::ReadOnly => open_read_only(&config.path),
        }
        .map_err(sql_error)?;
        conn.busy_timeout(config.busy_timeout).map_err(sql_error)?;
        // An existing store's database is never empty: an empty file is one that lost its
        // contents (truncated, replaced), not a new store, and is not silently set up anew —
        // not even its journal mode is written.
        if config.mode == OpenMode::Existing && schema::version(&conn)? == 0 {
            return Err(Error::NotFound { what: "database", id: "an empty file (no Arbor schema)".to_owned() });
        }
        // WAL lets readers in other processes work during writes; synchronous=FULL makes every
        // acknowledged commit durable; secure_delete zeroes deleted content so forgotten
        // words do not survive in free pages. (A read-only connection reads whatever journal
        // mode the file has; setting one would be a write.)
        if config.mode != OpenMode::ReadOnly {
            conn.execute_batch("PRAGMA journal_mode = WAL;").map_err(sql_error)?;
        }
        conn.execute_batch(&format!(
            "PRAGMA synchronous = FULL;
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
        // `LIMIT ?`), which is most of them — and the re-preparation costs more than the
        // small queries themselves.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(sql_error)?;
        // Room for every distinct statement the adapters run, so none is parsed twice.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        match config.mode {
            OpenMode::ReadOnly => schema::check_current(&conn)?,
            OpenMode::Create | OpenMode::Existing => schema::migrate(&mut conn)?,
        }
        let gate = Mutex::new(Gate::default());
        Ok(SqliteDatabase {
            path: config.path.clone(),
            conn: Mutex::new(conn),
            busy_timeout: config.busy_timeout,
            gate,
        })
    }

    /// Records that the file failed an integrity check (or a statement found it damaged), so
    /// writers in every process refuse it from now on. Best effort: on a read-only
    /// filesystem the damage is reported, and not recorded.
    pub fn record_damage(&self, detail: &str) {
        let marker = damage_marker(&self.path);
        let note = format!("{}: {}\n", jiff::Timestamp::now(), detail.replace('\n', " "));
        if let Err(error) = std::fs::write(&marker, note) {
            tracing::warn!(%error, marker = %marker.display(), "could not record that the database is damaged");
        }
    }

    /// Whether the file is marked as damaged ([`record_damage`](Self::record_damage)).
    pub fn is_marked_damaged(&self) -> bool {
        damage_marker(&self.path).exists()
    }

    /// Removes the damage mark, once an integrity check found the file sound again (after it
    /// was restored from a backup, say).
    pub fn clear_damage(&self) -> Result<()> {
        match std::fs::remove_file(damage_marker(&self.path)) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(Error::backend("sqlite", error)),
        }
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
    ///
    /// Waits at most [`CHECKPOINT_WAIT`] for readers of older snapshots, not the writers' busy
    /// timeout: the words are already gone from every row, and a reader that holds its
    /// snapshot for a minute should not hold the forget for one.
    pub fn checkpoint(&self) -> Result<()> {
        let conn = self.lock();
        conn.busy_timeout(CHECKPOINT_WAIT).map_err(sql_error)?;
        let checkpointed = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql_error);
        conn.busy_timeout(self.busy_timeout).map_err(sql_error)?;
        let (busy, _, _): (i64, i64, i64) = checkpointed?;
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
