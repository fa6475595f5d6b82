//! The SQLite adapter crate: the embedded default: the metadata store, search index (FTS5 + vectors) and job outbox on one SQLite file (rusqlite, bundled SQLite, WAL), types prefixed `Sqlite`.
//!
//! Not implemented yet (issue 3); the crate exists so the workspace has its final shape
//! and the composition root can name it. When it lands it follows the layout every adapter
//! shares (`config.rs`, `store.rs`, `index.rs`, `error.rs`, `migrations/`) and runs the
//! whole conformance suite from `arbor-ports`.
