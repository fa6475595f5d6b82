//! Versioned migrations, recorded in the `arbor_schema` table of Arbor's schema and applied in
//! one transaction under an advisory lock, so several processes starting at once migrate once.
//! A database newer than this build is refused rather than guessed at.

use arbor_ports::{Error, Result};
use sqlx::{Connection, PgConnection, Row};

use crate::error::{BACKEND, sql_error};

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_retrievals.sql"),
    include_str!("../migrations/0003_written_order.sql"),
];

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

#[cfg(test)]
mod tests {
    use arbor_domain::namespace::Namespace;
    use arbor_ports::conformance::fixtures::{conversation, leaf, tree, tree_id};
    use arbor_ports::{Change, ChangeSet, MetadataStore};
    use sqlx::Connection;

    use super::*;
    use crate::config::{PgConfig, PgDatabase};
    use crate::store::PgStore;
    use crate::testing::{fresh_database, test_database_url};

    /// The unique index over live fingerprints covers exactly the statuses the rule names.
    #[test]
    fn the_live_fingerprint_index_follows_the_rule() {
        assert!(arbor_ports::rows::status_sql::holds_fingerprint_in(MIGRATIONS[0]));
    }

    /// A connection whose `search_path` is the test's schema.
    async fn connect(schema: &str) -> PgConnection {
        let mut conn = PgConnection::connect(&test_database_url()).await.unwrap();
        sqlx::query(&format!("SET search_path TO {schema}, public")).execute(&mut conn).await.unwrap();
        conn
    }

    /// The schema version recorded in `schema`.
    async fn recorded_version(schema: &str) -> i32 {
        sqlx::query("SELECT version FROM arbor_schema").fetch_one(&mut connect(schema).await).await.unwrap().get(0)
    }

    fn config(db: &PgDatabase) -> PgConfig {
        PgConfig::new(test_database_url()).with_schema(db.schema())
    }

    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_store_created_by_this_version_opens_with_the_next() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let ns: Namespace = conversation("c1");
            let t = tree_id("topic");
            let record = leaf(&ns, &t, "leaf-1", "kept across the upgrade", 1);
            let store = PgStore::new(db.clone());
            store
                .commit(
                    ChangeSet::new().with(Change::EnsureTree(tree(&ns, &t))).with(Change::InsertLeaf(record.clone())),
                )
                .await
                .unwrap();
            // The next version adds a column; running it twice (two processes starting at once)
            // applies it once.
            let next: Vec<&str> =
                MIGRATIONS.iter().copied().chain(["ALTER TABLE leaves ADD COLUMN reviewed_by TEXT"]).collect();
            for _ in 0..2 {
                migrate(&mut connect(db.schema()).await, &next).await.unwrap();
            }
            assert_eq!(recorded_version(db.schema()).await, SCHEMA_VERSION as i32 + 1);
            assert_eq!(store.leaf(std::slice::from_ref(&ns), &record.id).await.unwrap(), Some(record));
        });
    }

    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn a_newer_schema_is_refused_with_a_clear_error() {
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            sqlx::query("UPDATE arbor_schema SET version = version + 1")
                .execute(&mut connect(db.schema()).await)
                .await
                .unwrap();
            let error = PgDatabase::connect(&config(&db)).await.unwrap_err();
            assert!(
                matches!(error, Error::SchemaTooNew { found, supported, .. } if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
                "{error:?}"
            );
            assert!(error.to_string().contains("upgrade arbor"), "{error}");
            // Nothing was changed by the refusal.
            assert_eq!(recorded_version(db.schema()).await, SCHEMA_VERSION as i32 + 1);
        });
    }
}
