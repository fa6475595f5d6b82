//! The whole conformance suite against the Postgres adapter, each check in a fresh schema on
//! the server `ARBOR_TEST_DATABASE_URL` names.

use std::sync::Arc;

use arbor_adapters_postgres::testing::fresh_database;
use arbor_adapters_postgres::{PgIndex, PgStore};
use arbor_ports::conformance::Fixture;
use arbor_ports::{MetadataStore, SearchIndex};

mod store {
    use super::*;
    arbor_ports::metadata_store_conformance!(|| async {
        let (db, guard) = fresh_database().await;
        Fixture::with_guard(Arc::new(PgStore::new(db)) as Arc<dyn MetadataStore>, guard)
    });
}

mod index {
    use super::*;
    arbor_ports::search_index_conformance!(|| async {
        let (db, guard) = fresh_database().await;
        Fixture::with_guard(Arc::new(PgIndex::new(db)) as Arc<dyn SearchIndex>, guard)
    });
}
