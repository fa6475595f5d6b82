//! The Postgres adapter crate: Arbor's server backend. The metadata store, the job outbox and
//! the search index projection live in one schema of a Postgres database — hashed terms and
//! vectors as rows stamped with a change sequence, searched in each process's memory by the
//! `arbor-search` engine — so several Arbor processes, on several machines, share one store.
//!
//! [`PgDatabase::connect`] connects, checks for pgvector, creates the schema and migrates it;
//! [`PgStore`] and [`PgIndex`] share its connection pool.

mod codec;
mod config;
mod error;
mod filter;
mod index;
mod schema;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use config::{PgConfig, PgDatabase, redacted};
pub use index::PgIndex;
pub use schema::SCHEMA_VERSION;
pub use store::PgStore;
