//! The whole conformance suite against the SQLite adapter, each check on a fresh database file
//! in its own temporary directory.

use std::sync::Arc;

use arbor_adapters_sqlite::{SqliteConfig, SqliteDatabase, SqliteIndex, SqliteStore};
use arbor_ports::conformance::Fixture;
use arbor_ports::{MetadataStore, SearchIndex};

fn database() -> (Arc<SqliteDatabase>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = SqliteDatabase::open(&SqliteConfig::new(dir.path().join("arbor.db"))).expect("the database opens");
    (Arc::new(db), dir)
}

mod store {
    use super::*;
    arbor_ports::metadata_store_conformance!(|| async {
        let (db, dir) = database();
        Fixture::with_guard(Arc::new(SqliteStore::new(db)) as Arc<dyn MetadataStore>, dir)
    });
}

mod index {
    use super::*;
    arbor_ports::search_index_conformance!(|| async {
        let (db, dir) = database();
        Fixture::with_guard(Arc::new(SqliteIndex::new(db)) as Arc<dyn SearchIndex>, dir)
    });
}
