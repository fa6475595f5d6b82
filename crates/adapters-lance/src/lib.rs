//! The LanceDB adapter crate: an index projection on LanceDB (lancedb + arrow) for large corpora and object storage, composed with an authoritative SQLite or Postgres store, types prefixed `Lance`.
//!
//! Not implemented yet (issue 9); the crate exists so the workspace has its final shape
//! and the composition root can name it. When it lands it follows the layout every adapter
//! shares (`config.rs`, `store.rs`, `index.rs`, `error.rs`, `migrations/`) and runs the
//! whole conformance suite from `arbor-ports`.
