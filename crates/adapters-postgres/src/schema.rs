//! Versioned migrations, recorded in the `arbor_schema` table of Arbor's schema and applied in
//! one transaction under an advisory lock, so several processes starting at once migrate once.
//! A database newer than this build is refused rather than guessed at.

use arbor_ports::{Error, Result};
use sqlx::{Connection, PgConnection, Row};

use crate::error::{BACKEND, sql_error};

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[include_str!("../migrations/0001_initial.sql")];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The advisory lock class Arbor's locks live in (`'AR'`), with the object id second.
pub(crate) const LOCK_CLASS: i32 = 0x4152;
pub(crate) const MIGRATION_LOCK: i32 = 1;

/// Brings the schema `conn`'s `search_path` points at up to the version `migrations` reach.
pub(crate) async fn migrate(conn: &mut PgConnection, migrations: &[&str]) -> Result<()> {
    let supported = u32::try_from(migrations.len()).unwrap_or(u32::MAX);
    let mut tx = conn.begin().await.map_err(sql_error)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(LOCK_CLASS)
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS arbor_schema (
             singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
             version INTEGER NOT NULL
         )",
    )
    .execute(&mut *tx)
    .await
    .map_err(sql_error)?;
    let found: Option<i32> = sqlx::query("SELECT version FROM arbor_schema")
        .fetch_optional(&mut *tx)
        .await
        .map_err(sql_error)?
        .map(|r| r.get(0));
    let found = u32::try_from(found.unwrap_or(0)).unwrap_or(0);
    if found > supported {
        return Err(Error::SchemaTooNew { backend: BACKEND, found, supported });
    }
    for (index, sql) in migrations.iter().enumerate().skip(found as usize) {
        sqlx::raw_sql(sql).execute(&mut *tx).await.map_err(sql_error)?;
        tracing::info!(version = index + 1, "postgres schema migrated");
    }
    if found < supported {
        sqlx::query(
            "INSERT INTO arbor_schema (version) VALUES ($1)
             ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
        )
        .bind(i32::try_from(supported).unwrap_or(i32::MAX))
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
    }
    tx.commit().await.map_err(sql_error)
}
