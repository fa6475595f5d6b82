//! The Postgres adapter crate: the server backend: the metadata store and search index on Postgres (sqlx, tsvector + GIN, pgvector HNSW), a job queue several processes can drain, types prefixed `Pg`.
//!
//! Not implemented yet (issue 4); the crate exists so the workspace has its final shape
//! and the composition root can name it. When it lands it follows the layout every adapter
//! shares (`config.rs`, `store.rs`, `index.rs`, `error.rs`, `migrations/`) and runs the
//! whole conformance suite from `arbor-ports`.
