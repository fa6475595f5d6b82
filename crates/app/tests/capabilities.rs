//! An index without full text, or without vectors: the app skips what the index cannot do
//! (every search it should have skipped fails on the masked index) and still saves, seals and
//! answers from what the index can do.

mod common;

use arbor_app::RetrieveRequest;
use arbor_ports::IndexCapabilities;
use common::{Harness, conversation_chain, harness_masked, message};

const TEAM: [&str; 4] = [
    "Dana prefers morning meetings before ten.",
    "The staging cluster runs in Frankfurt.",
    "We keep release notes in the changelog file.",
    "Dana has a dog called Miso.",
];

async fn saved(h: &Harness) -> arbor_domain::read_chain::ReadChain {
    let chain = conversation_chain(&h.arbor, "c1", None);
    for (i, line) in TEAM.iter().enumerate() {
        h.clock.advance_seconds(60);
        let report = h.arbor.ingest(&chain, message(line, &format!("m{i}"))).await.expect("saved");
        assert!(report.chunks[0].outcome.leaf_id().is_some(), "{report:?}");
    }
    let jobs = h.arbor.run_jobs(None).await.expect("jobs run");
    assert_eq!(jobs.failed, 0, "{jobs:?}");
    chain
}

#[tokio::test]
async fn without_full_text_memories_are_found_by_vectors() {
    let h = harness_masked(IndexCapabilities { full_text: false, vectors: true });
    let chain = saved(&h).await;
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when does Dana like meetings?")).await.unwrap();
    assert!(pack.evidence.iter().any(|e| e.text.contains("morning meetings")), "{pack:#?}");
    assert!(pack.degraded.is_empty(), "nothing failed, so nothing is degraded: {:?}", pack.degraded);
}

#[tokio::test]
async fn without_vectors_memories_are_found_by_their_words() {
    let h = harness_masked(IndexCapabilities { full_text: true, vectors: false });
    let chain = saved(&h).await;
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("where does the staging cluster run?")).await.unwrap();
    assert!(pack.evidence[0].text.contains("Frankfurt"), "{pack:#?}");
    assert!(pack.degraded.is_empty(), "nothing failed, so nothing is degraded: {:?}", pack.degraded);
}

#[tokio::test]
async fn with_neither_a_save_still_lands_and_a_question_is_answered_without_an_error() {
    let h = harness_masked(IndexCapabilities { full_text: false, vectors: false });
    let chain = saved(&h).await;
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when does Dana like meetings?")).await;
    assert!(pack.is_ok(), "no search was asked of an index that has none: {pack:?}");
}
