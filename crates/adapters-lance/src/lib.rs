//! The LanceDB adapter crate: the search-index port on LanceDB (lancedb + arrow) for large
//! corpora and object storage, composed with an authoritative SQLite or Postgres store.
//!
//! Everything here is behind the `lance` feature: without it the crate is empty, so neither
//! the default build nor `cargo build --workspace` compiles lancedb (datafusion, arrow, some
//! 400 crates). `cargo xtask conformance --backend lance` builds it and runs the whole
//! search-index conformance suite from `arbor-ports` against [`LanceIndex`].

#[cfg(feature = "lance")]
mod filter;
#[cfg(feature = "lance")]
mod index;

#[cfg(feature = "lance")]
pub use index::{ANN_MIN_ROWS, LanceIndex, MAINTAIN_EVERY_WRITES};
