//! Versioned migrations, recorded in `PRAGMA user_version`. A database newer than this build
//! is refused rather than guessed at.

use arbor_ports::{Error, Result};
use rusqlite::Connection;

use crate::config::write_transaction;
use crate::error::{BACKEND, sql_error};

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_retrievals.sql"),
    include_str!("../migrations/0003_written_order.sql"),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// For a read-only connection: the file must be at this build's version already (a
/// migration is a write). A new, empty file (version 0) counts as no database.
pub(crate) fn check_current(conn: &Connection) -> Result<()> {
    let found: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_error)?;
    if found > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { backend: BACKEND, found, supported: SCHEMA_VERSION });
    }
    if found == 0 {
        return Err(Error::NotFound { what: "database", id: "an empty file (no Arbor schema)".to_owned() });
    }
    if found < SCHEMA_VERSION {
        return Err(Error::invalid(
            "database",
            format!(
                "it has schema version {found} and this build writes {SCHEMA_VERSION}; run a command that writes (e.g. `arbor jobs run`) once, where the store is writable, to migrate it"
            ),
        ));
    }
    Ok(())
}

/// The schema version of an open file (0: a new, empty file).
pub(crate) fn version(conn: &Connection) -> Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_error)
}

pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let found: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_error)?;
    if found > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { backend: BACKEND, found, supported: SCHEMA_VERSION });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as u32 + 1;
        let tx = write_transaction(conn)?;
        // Another process opening the same new file may have migrated it meanwhile: the
        // version is read again under the write lock, and a step already applied is skipped.
        let now: u32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_error)?;
        if now >= version {
            continue;
        }
        tx.execute_batch(sql).map_err(sql_error)?;
        tx.pragma_update(None, "user_version", version).map_err(sql_error)?;
        tx.commit().map_err(sql_error)?;
        tracing::info!(version, "sqlite schema migrated");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The unique index over live fingerprints covers exactly the statuses the rule names.
    #[test]
    fn the_live_fingerprint_index_follows_the_rule() {
        assert!(arbor_ports::rows::status_sql::holds_fingerprint_in(super::MIGRATIONS[0]));
    }
}
