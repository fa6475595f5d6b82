//! The SQLite adapter crate: Arbor's embedded default. One SQLite file (bundled SQLite, WAL)
//! holds the metadata store, the job outbox and the search index projection — hashed terms and
//! vectors in rows, searched in memory by [`arbor_search`] (BM25 over posting lists,
//! int8-quantized vectors with exact rescoring); the markdown bodies live
//! beside it in the filesystem body store.
//!
//! [`SqliteDatabase::open`] opens (or creates) the file and brings its schema up to date;
//! [`SqliteStore`] and [`SqliteIndex`] share it.

mod codec;
mod config;
mod error;
mod filter;
mod index;
mod schema;
mod store;
mod transaction;

pub use arbor_search::Footprint;
pub use config::{DEFAULT_BUSY_TIMEOUT, OpenMode, SqliteConfig, SqliteDatabase, damage_marker};
pub use index::SqliteIndex;
pub use schema::SCHEMA_VERSION;
pub use store::SqliteStore;
