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
