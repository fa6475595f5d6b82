//! In-memory reference adapters for every storage port. They pass the whole conformance suite
//! under a plain `cargo test`, keep nothing on disk, and are what the app's own tests and the
//! zero-setup quickstart run on.

mod bodies;
mod index;
mod store;

pub use bodies::InMemoryBodyStore;
pub use index::InMemorySearchIndex;
pub use store::InMemoryMetadataStore;
