//! Two engines over one store that choose the same ids (as engines sharing a deterministic id
//! source and a stopped clock do): the second's write may fail, but it never replaces or
//! removes a body the first committed — nor does recovery after a writer that died.

mod common;

use std::sync::Arc;

use arbor_app::{Arbor, Options, Policy, Ports};
use arbor_domain::id::JobId;
use arbor_ports::memory::{InMemoryBodyStore, InMemoryMetadataStore, InMemorySearchIndex};
use arbor_ports::{
    BodyIntent, Change, ChangeSet, HashingEmbedder, HeuristicReasoner, IdSource, ManualClock, MetadataStore,
};
use common::{conversation_chain, message, start};

/// Every engine's first id in a millisecond gets the same suffix, so two engines started in
/// one millisecond make the same ids in the same order.
#[derive(Debug)]
struct SameSuffix;

impl IdSource for SameSuffix {
    fn random(&self) -> u128 {
        1
    }
}

#[tokio::test]
async fn a_second_engine_that_reuses_an_id_never_takes_the_first_ones_body() {
    let ports = Ports {
        store: Arc::new(InMemoryMetadataStore::new()),
        index: Arc::new(InMemorySearchIndex::new()),
        bodies: Arc::new(InMemoryBodyStore::new()),
        embedder: Arc::new(HashingEmbedder::default()),
        reasoner: Arc::new(HeuristicReasoner),
        clock: Arc::new(ManualClock::new(start())),
        ids: Arc::new(SameSuffix),
    };
    let first = Arbor::new(ports.clone(), Policy::default(), Options::default());
    let chain = conversation_chain(&first, "c1", None);
    let lines = ["Priya keeps the spare keys in the red tin.", "Priya's locker number is 41."];
    for (i, line) in lines.iter().enumerate() {
        first.ingest(&chain, message(line, &format!("a{i}"))).await.unwrap();
    }
    first.run_jobs(None).await.unwrap();

    // A restarted engine: the same ports, the same millisecond, no memory of the ids it gave.
    let second = Arbor::new(ports.clone(), Policy::default(), Options::default());
    let mut refused = 0;
    for (i, line) in ["Tomas waters the office ferns on Mondays.", "Tomas drives a green van."].iter().enumerate() {
        if second.ingest(&chain, message(line, &format!("b{i}"))).await.is_err() {
            refused += 1;
        }
    }
    let _ = second.run_jobs(None).await;

    let report = first.fsck(false, &|_| false).await.unwrap();
    assert!(report.is_clean(), "{refused} writes refused; {report:#?}");
    for question in ["Where are the spare keys?", "What is Priya's locker number?"] {
        let pack = first.retrieve(&chain, &arbor_app::RetrieveRequest::new(question)).await.unwrap();
        assert!(
            pack.evidence.iter().any(|e| e.text.contains("red tin") || e.text.contains("41")),
            "{question}: {:#?}",
            pack.evidence
        );
    }
}

/// A dead writer whose intent names a path another writer's committed row refers to (the two
/// chose one id, and the other's commit won): recovery clears the intent and leaves the body.
#[tokio::test]
async fn recovery_never_removes_a_body_a_committed_row_refers_to() {
    let h = common::harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let report = h.arbor.ingest(&chain, message("Priya keeps the spare keys in the red tin.", "m1")).await.unwrap();
    let id = report.chunks[0].outcome.leaf_id().cloned().unwrap();
    let namespace = chain.namespaces().next().cloned().unwrap();
    let leaf = h.store.leaf(std::slice::from_ref(&namespace), &id).await.unwrap().unwrap();
    let intent = BodyIntent {
        id: JobId::parse("job-dead-writer").unwrap(),
        owner: "another-host/4242".to_owned(),
        created_at: start(),
        paths: vec![leaf.body_path.clone()],
    };
    h.store.commit(ChangeSet::new().with(Change::AddBodyIntent(intent))).await.unwrap();

    let recovered = h.arbor.recover(&|_| true).await.unwrap();
    assert_eq!((recovered.intents_cleared, recovered.bodies_removed), (1, 0), "{recovered:?}");
    assert!(h.store.body_intents().await.unwrap().is_empty());
    let report = h.arbor.fsck(false, &|_| false).await.unwrap();
    assert!(report.is_clean(), "{report:#?}");
}
