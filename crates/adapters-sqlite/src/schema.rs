//! Versioned migrations, recorded in `PRAGMA user_version`. A database newer than this build
//! is refused rather than guessed at.

use arbor_ports::{Error, Result};
use rusqlite::Connection;

use crate::error::{BACKEND, sql_error};

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] =
    &[include_str!("../migrations/0001_initial.sql"), include_str!("../migrations/0002_retrievals.sql")];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let found: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_error)?;
    if found > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { backend: BACKEND, found, supported: SCHEMA_VERSION });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as u32 + 1;
        let tx = conn.transaction().map_err(sql_error)?;
        tx.execute_batch(sql).map_err(sql_error)?;
        tx.pragma_update(None, "user_version", version).map_err(sql_error)?;
        tx.commit().map_err(sql_error)?;
        tracing::info!(version, "sqlite schema migrated");
    }
    Ok(())
}
