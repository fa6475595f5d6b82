//! Versioned migrations, recorded in `PRAGMA user_version`. A database newer than this build
//! is refused rather than guessed at.

use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::namespace::Namespace;
use arbor_domain::reconcile::LOOKUP_KEYS_VERSION;
use arbor_ports::rows::{corrupt, filed_entries_of, status_sql, stored_claims};
use arbor_ports::{Error, Result};
use rusqlite::{Connection, params};

use crate::error::{BACKEND, sql_error};
use crate::transaction::write_transaction;

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_retrievals.sql"),
    include_str!("../migrations/0003_written_order.sql"),
    include_str!("../migrations/0004_lookup_keys.sql"),
    include_str!("../migrations/0005_lineage.sql"),
    include_str!("../migrations/0006_text_in_memory.sql"),
    include_str!("../migrations/0007_claims.sql"),
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
    refile_lookup_keys(conn)
}

/// Files every active leaf again under the lookup keys this build's rules make, if the rows
/// were made by other rules (`lookup_keys_version`); one transaction, re-checked under the
/// write lock so that several processes opening the store at once file once.
fn refile_lookup_keys(conn: &mut Connection) -> Result<()> {
    let made_by = |conn: &Connection| -> Result<i64> {
        conn.query_row("SELECT value FROM counters WHERE name = 'lookup_keys_version'", [], |r| r.get(0))
            .map_err(sql_error)
    };
    let current = i64::from(LOOKUP_KEYS_VERSION);
    if made_by(conn)? == current {
        return Ok(());
    }
    let tx = write_transaction(conn)?;
    if made_by(&tx)? == current {
        return Ok(());
    }
    tx.execute("DELETE FROM leaf_keys", []).map_err(sql_error)?;
    let mut filed = 0usize;
    {
        let mut leaves = tx
            .prepare(&format!(
                "SELECT id, namespace, summary, observed_at, claims FROM leaves WHERE {}",
                status_sql::leaves_where(LeafStatus::is_filed)
            ))
            .map_err(sql_error)?;
        let mut rows = leaves.query([]).map_err(sql_error)?;
        let mut insert = tx.prepare(INSERT_LEAF_KEY).map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let (id, namespace, summary, observed_at, claims): (String, String, String, i64, String) = (
                row.get(0).map_err(sql_error)?,
                row.get(1).map_err(sql_error)?,
                row.get(2).map_err(sql_error)?,
                row.get(3).map_err(sql_error)?,
                row.get(4).map_err(sql_error)?,
            );
            let namespace = Namespace::parse(&namespace).map_err(|e| corrupt("leaf", &id, e))?;
            let claims = stored_claims(&id, &claims)?;
            let entries = filed_entries_of(&namespace, LeafStatus::Active, &summary, &claims);
            for hash in entries.hashes {
                insert.execute(params![hash, observed_at, id, entries.words]).map_err(sql_error)?;
            }
            filed += 1;
        }
    }
    tx.execute("UPDATE counters SET value = ? WHERE name = 'lookup_keys_version'", [current]).map_err(sql_error)?;
    tx.commit().map_err(sql_error)?;
    tracing::info!(leaves = filed, version = current, "active leaves filed under this build's lookup keys");
    Ok(())
}

/// Files one leaf under one key hash.
pub(crate) const INSERT_LEAF_KEY: &str =
    "INSERT OR IGNORE INTO leaf_keys (key, observed_at, leaf, words) VALUES (?, ?, ?, ?)";

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arbor_domain::reconcile::Claim;
    use arbor_ports::conformance::fixtures::{conversation, leaf, tree, tree_id};
    use arbor_ports::{Change, ChangeSet, FiledQuery, MetadataStore};

    use crate::{SqliteConfig, SqliteDatabase, SqliteStore};

    /// A store whose lookup keys were made by other rules (or before they existed) has every
    /// active leaf filed again when a writer opens it, once.
    #[tokio::test]
    async fn active_leaves_are_filed_again_under_this_builds_keys() {
        let dir = tempfile::tempdir().unwrap();
        let config = SqliteConfig::new(dir.path().join("arbor.db"));
        let (ns, t) = (conversation("c1"), tree_id("topic"));
        let record = leaf(&ns, &t, "leaf-1", "Maya lives in Porto.", 1);
        let lookup = Claim::read("Maya moved to Lisbon.").looked_up_by();
        let found = |db: &Arc<SqliteDatabase>| {
            let (store, ns, query) =
                (SqliteStore::new(db.clone()), ns.clone(), FiledQuery::new(lookup.clone(), 12, 24));
            async move { store.leaves_filed_under(&ns, &query).await.unwrap().len() }
        };
        {
            let db = Arc::new(SqliteDatabase::open(&config).unwrap());
            let changes = ChangeSet::new().with(Change::EnsureTree(tree(&ns, &t))).with(Change::InsertLeaf(record));
            SqliteStore::new(db.clone()).commit(changes).await.unwrap();
            assert_eq!(found(&db).await, 1);
            db.lock()
                .execute_batch(
                    "DELETE FROM leaf_keys; UPDATE counters SET value = 0 WHERE name = 'lookup_keys_version'",
                )
                .unwrap();
            assert_eq!(found(&db).await, 0, "the rows are gone");
        }
        let db = Arc::new(SqliteDatabase::open(&config).unwrap());
        assert_eq!(found(&db).await, 1, "filed again on opening");
    }

    /// The unique index over live fingerprints covers exactly the statuses the rule names.
    #[test]
    fn the_live_fingerprint_index_follows_the_rule() {
        assert!(arbor_ports::rows::status_sql::holds_fingerprint_in(super::MIGRATIONS[0]));
    }
}
