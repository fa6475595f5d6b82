//! Versioned migrations, recorded in the `arbor_schema` table of Arbor's schema and applied in
//! one transaction under an advisory lock, so several processes starting at once migrate once.
//! A database newer than this build is refused rather than guessed at.

use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::namespace::Namespace;
use arbor_domain::reconcile::LOOKUP_KEYS_VERSION;
use arbor_ports::rows::{corrupt, filed_entries_of, status_sql, stored_claims};
use arbor_ports::{Error, Result};
use sqlx::{Connection, PgConnection, Row};

use crate::error::{BACKEND, sql_error};

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_retrievals.sql"),
    include_str!("../migrations/0003_written_order.sql"),
    include_str!("../migrations/0004_lookup_keys.sql"),
    include_str!("../migrations/0005_lineage.sql"),
    include_str!("../migrations/0006_pending_jobs.sql"),
    include_str!("../migrations/0007_search_in_memory.sql"),
    include_str!("../migrations/0008_claims.sql"),
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

/// How many leaves a refiling reads at a time.
const REFILE_PAGE: i64 = 5_000;

/// Files every active leaf again under the lookup keys this build's rules make, if the rows
/// were made by other rules (`lookup_keys_version`); one transaction under the migration
/// lock, so several processes connecting at once file once.
pub(crate) async fn refile_lookup_keys(conn: &mut PgConnection) -> Result<()> {
    let current = i32::try_from(LOOKUP_KEYS_VERSION).unwrap_or(i32::MAX);
    let made_by = "SELECT version FROM lookup_keys_version";
    let version: i32 = sqlx::query(made_by).fetch_one(&mut *conn).await.map_err(sql_error)?.get(0);
    if version == current {
        return Ok(());
    }
    let mut tx = conn.begin().await.map_err(sql_error)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(LOCK_CLASS)
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
    let version: i32 = sqlx::query(made_by).fetch_one(&mut *tx).await.map_err(sql_error)?.get(0);
    if version == current {
        return Ok(());
    }
    sqlx::query("DELETE FROM leaf_keys").execute(&mut *tx).await.map_err(sql_error)?;
    // A page at a time, by id, so a large store is never held in memory at once.
    let select = format!(
        "SELECT id, namespace, summary, observed_at, claims FROM leaves WHERE {} AND id > $1 ORDER BY id LIMIT $2",
        status_sql::leaves_where(LeafStatus::is_filed)
    );
    let (mut after, mut filed) = (String::new(), 0usize);
    loop {
        let page = sqlx::query(&select).bind(&after).bind(REFILE_PAGE).fetch_all(&mut *tx).await.map_err(sql_error)?;
        let Some(last) = page.last() else { break };
        after = last.get(0);
        let (mut keys, mut times, mut ids, mut words) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for row in &page {
            let (id, namespace, summary, observed_at, claims): (String, String, String, i64, String) =
                (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
            let namespace = Namespace::parse(&namespace).map_err(|e| corrupt("leaf", &id, e))?;
            let claims = stored_claims(&id, &claims)?;
            let entries = filed_entries_of(&namespace, LeafStatus::Active, &summary, &claims);
            for hash in entries.hashes {
                keys.push(hash);
                times.push(observed_at);
                ids.push(id.clone());
                words.push(entries.words);
            }
        }
        sqlx::query(
            "INSERT INTO leaf_keys (key, observed_at, leaf, words)
             SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BIGINT[]) ON CONFLICT DO NOTHING",
        )
        .bind(&keys)
        .bind(&times)
        .bind(&ids)
        .bind(&words)
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
        filed += page.len();
    }
    sqlx::query("UPDATE lookup_keys_version SET version = $1")
        .bind(current)
        .execute(&mut *tx)
        .await
        .map_err(sql_error)?;
    tx.commit().await.map_err(sql_error)?;
    tracing::info!(leaves = filed, version = current, "active leaves filed under this build's lookup keys");
    Ok(())
}

#[cfg(test)]
mod tests {
    use arbor_domain::namespace::Namespace;
    use arbor_ports::conformance::fixtures::{conversation, leaf, tree, tree_id};
    use arbor_ports::{Change, ChangeSet, FiledQuery, MetadataStore};
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

    /// A store whose lookup keys were made by other rules (or before they existed) has every
    /// active leaf filed again when a process connects, once.
    #[test]
    #[cfg_attr(not(feature = "server-tests"), ignore = "needs a Postgres server: `cargo xtask ci` starts one")]
    fn active_leaves_are_filed_again_under_this_builds_keys() {
        use arbor_domain::reconcile::Claim;
        arbor_ports::conformance::block_on(async {
            let (db, _guard) = fresh_database().await;
            let ns: Namespace = conversation("c1");
            let t = tree_id("topic");
            let record = leaf(&ns, &t, "leaf-1", "Maya lives in Porto.", 1);
            let store = PgStore::new(db.clone());
            let changes = ChangeSet::new().with(Change::EnsureTree(tree(&ns, &t))).with(Change::InsertLeaf(record));
            store.commit(changes).await.unwrap();
            let lookup = Claim::read("Maya moved to Lisbon.").looked_up_by();
            let found = |db: std::sync::Arc<PgDatabase>| {
                let (ns, query) = (ns.clone(), FiledQuery::new(lookup.clone(), 12, 24));
                async move { PgStore::new(db).leaves_filed_under(&ns, &query).await.unwrap().len() }
            };
            assert_eq!(found(db.clone()).await, 1);
            let mut conn = connect(db.schema()).await;
            sqlx::raw_sql("DELETE FROM leaf_keys; UPDATE lookup_keys_version SET version = 0")
                .execute(&mut conn)
                .await
                .unwrap();
            assert_eq!(found(db.clone()).await, 0, "the rows are gone");
            let reopened = std::sync::Arc::new(PgDatabase::connect(&config(&db)).await.unwrap());
            assert_eq!(found(reopened).await, 1, "filed again on connecting");
            let version: i32 =
                sqlx::query("SELECT version FROM lookup_keys_version").fetch_one(&mut conn).await.unwrap().get(0);
            assert_eq!(version, LOOKUP_KEYS_VERSION as i32);
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
