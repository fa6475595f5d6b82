//! Write transactions: each takes the database's write lock when it begins.

use arbor_ports::{Error, Result};
use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

use crate::error::{BACKEND, sql_error};

/// Begins a write transaction: `BEGIN IMMEDIATE`, which takes the database's write lock at
/// once (waiting up to the busy timeout for another process to release it). A deferred
/// transaction would read first and ask for the lock on its first write; if another process
/// wrote in between, SQLite answers SQLITE_BUSY at once, without waiting, because the reader's
/// snapshot is already stale. Every transaction that may write starts here.
pub(crate) fn write_transaction(conn: &mut Connection) -> Result<Transaction<'_>> {
    // Read before beginning (a cached statement, about a microsecond): once the begin has
    // failed, the connection is still borrowed by it.
    let busy_timeout_ms =
        conn.prepare_cached("PRAGMA busy_timeout").and_then(|mut read| read.query_row([], |row| row.get(0))).ok();
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|error| if is_busy(&error) { still_busy(busy_timeout_ms, error) } else { sql_error(error) })
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(failure, _)
        if matches!(failure.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// The lock was not released within this connection's busy timeout: say how long that was
/// (the configured figure, read back from the connection).
fn still_busy(busy_timeout_ms: Option<i64>, error: rusqlite::Error) -> Error {
    let busy = match busy_timeout_ms {
        Some(millis) => format!(
            "the database is busy: another process kept its write lock for longer than {} ({error})",
            waited_for(millis)
        ),
        None => format!("the database is busy: another process kept its write lock too long ({error})"),
    };
    Error::Unavailable { backend: BACKEND, source: busy.into() }
}

/// A busy timeout in milliseconds as people read it: whole seconds when it is some, else ms.
fn waited_for(millis: i64) -> String {
    if millis >= 1000 && millis % 1000 == 0 { format!("{} s", millis / 1000) } else { format!("{millis} ms") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another connection holding the write lock past this one's (configured) busy timeout:
    /// the refusal is `Unavailable` and names that timeout, not the default.
    #[test]
    fn a_lock_held_past_the_configured_timeout_names_that_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.db");
        let mut holder = Connection::open(&path).unwrap();
        let held = holder.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
        let mut waiter = Connection::open(&path).unwrap();
        waiter.busy_timeout(std::time::Duration::from_millis(50)).unwrap();
        let refused = write_transaction(&mut waiter).map(|_| ()).unwrap_err();
        drop(held);
        let Error::Unavailable { source, .. } = &refused else { panic!("not unavailable: {refused:?}") };
        assert!(source.to_string().contains("longer than 50 ms"), "{source}");
        assert_eq!(waited_for(60_000), "60 s");
        assert_eq!(waited_for(1_500), "1500 ms");
    }
}
