//! Runs the whole conformance suite against the in-memory reference adapters and the
//! filesystem body store.

use std::sync::Arc;

use arbor_ports::conformance::Fixture;
use arbor_ports::memory::{InMemoryBodyStore, InMemoryMetadataStore, InMemorySearchIndex};
use arbor_ports::{BodyStore, Embedder, HashingEmbedder, MetadataStore, SearchIndex};

mod store {
    use super::*;
    arbor_ports::metadata_store_conformance!(|| async {
        Fixture::new(Arc::new(InMemoryMetadataStore::new()) as Arc<dyn MetadataStore>)
    });
}

mod index {
    use super::*;
    arbor_ports::search_index_conformance!(|| async {
        Fixture::new(Arc::new(InMemorySearchIndex::new()) as Arc<dyn SearchIndex>)
    });
}

mod bodies {
    use super::*;
    arbor_ports::body_store_conformance!(|| async {
        Fixture::new(Arc::new(InMemoryBodyStore::new()) as Arc<dyn BodyStore>)
    });
}

mod embedder {
    use super::*;
    arbor_ports::embedder_conformance!(|| async {
        Fixture::new(Arc::new(HashingEmbedder::default()) as Arc<dyn Embedder>)
    });
}

mod fs_bodies {
    use super::*;
    use arbor_ports::fs::FsBodyStore;

    arbor_ports::body_store_conformance!(|| async {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = FsBodyStore::open(dir.path()).expect("the body store opens");
        Fixture::with_guard(Arc::new(store) as Arc<dyn BodyStore>, dir)
    });
}
