//! The cross-crate property test on the embedded backend: SQLite store and index, bodies on
//! disk, a fresh directory per sequence.

use arbor_tests::{check_sequence, operations, sequences, sqlite_ports};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: sequences(), ..ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_every_promise(ops in operations(40)) {
        let result = check_sequence(|| async { sqlite_ports() }, &ops);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

async fn fresh() -> (arbor_app::Ports, tempfile::TempDir) {
    sqlite_ports()
}

arbor_tests::seed_001_checklist!(fresh);

/// Faults at random calls of random sequences: after each, a restarted engine recovers, and
/// nothing acknowledged is lost, nothing half-done shows, fsck is clean.
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("sqlite", || async { sqlite_ports() });
}
