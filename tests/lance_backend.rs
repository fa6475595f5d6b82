//! The cross-crate property test and the acceptance checklist on the embedded store with the
//! LanceDB index: SQLite rows and bodies on disk, vectors and full text in a LanceDB dataset,
//! a fresh directory per sequence.

use arbor_tests::{check_sequence, lance_ports, property_sequences};

#[test]
fn random_operation_sequences_keep_every_promise() {
    property_sequences(file!(), |ops| check_sequence(lance_ports, ops).map(drop));
}

arbor_tests::acceptance_checklist!(lance_ports);

/// Faults at random calls of random sequences on SQLite with the LanceDB index (see
/// `fault_campaign`).
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("sqlite+lance", lance_ports);
}

/// The sequence the property test shrank a forget defect to
/// ([`arbor_tests::forget_with_copies_of_every_version`]).
#[test]
fn forgetting_a_memory_with_copies_takes_the_copies_of_every_version() {
    let ops = arbor_tests::forget_with_copies_of_every_version();
    check_sequence(lance_ports, &ops).map(drop).unwrap_or_else(|e| panic!("{e}"));
}

/// Export, then import into an empty store: the same answers ([`arbor_tests::export_import`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_an_empty_store_answers_the_same() {
    let (source, _a) = arbor_tests::lance_ports().await;
    let (target, _b) = arbor_tests::lance_ports().await;
    arbor_tests::export_import::round_trip(source, target).await;
}
