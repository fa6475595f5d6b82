//! The cross-crate property test on the in-memory backend.

use arbor_app::Ports;
use arbor_tests::{check_sequence, property_sequences};

#[test]
fn random_operation_sequences_keep_every_promise() {
    property_sequences(file!(), |ops| check_sequence(|| async { (Ports::in_memory(), ()) }, ops).map(drop));
}

async fn fresh() -> (Ports, ()) {
    (Ports::in_memory(), ())
}

arbor_tests::acceptance_checklist!(fresh);

/// Faults at random calls of random sequences: after each, a restarted engine recovers, and
/// nothing acknowledged is lost, nothing half-done shows, fsck is clean.
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("memory", || async { (Ports::in_memory(), ()) });
}

/// The fault campaign's shrunk case ([`arbor_tests::jobs_after_a_failed_retrieval`]).
#[test]
fn jobs_after_a_failed_retrieval_keep_every_tree_rooted() {
    let (ops, faults) = arbor_tests::jobs_after_a_failed_retrieval();
    arbor_tests::check_faulty_sequence(&|| async { (Ports::in_memory(), ()) }, &ops, &faults)
        .map(drop)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Export, then import into an empty store: the same answers ([`arbor_tests::export_import`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_an_empty_store_answers_the_same() {
    let (source, _a) = fresh().await;
    let (target, _b) = fresh().await;
    arbor_tests::export_import::round_trip(source, target).await;
}
