//! The cross-crate property test on the server backend: Postgres store and index in a fresh
//! schema per sequence, bodies on disk. Every sequence also runs on the embedded backend, and
//! the two must return the same evidence, in the same order, at every retrieval: one policy
//! core, the same answers on every backend.

use arbor_tests::{check_sequence, operations, postgres_ports, sequences, sqlite_ports};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: sequences(), ..ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_every_promise_and_match_sqlite(ops in operations(40)) {
        let on_postgres = check_sequence(postgres_ports, &ops);
        prop_assert!(on_postgres.is_ok(), "postgres: {}", on_postgres.unwrap_err());
        let on_sqlite = check_sequence(|| async { sqlite_ports() }, &ops);
        prop_assert!(on_sqlite.is_ok(), "sqlite: {}", on_sqlite.unwrap_err());
        let (on_postgres, on_sqlite) = (on_postgres.unwrap(), on_sqlite.unwrap());
        for (pg, lite) in on_postgres.iter().zip(&on_sqlite) {
            prop_assert_eq!(pg, lite, "step {}: postgres and sqlite packs differ", pg.0);
        }
        prop_assert_eq!(on_postgres.len(), on_sqlite.len());
    }
}

arbor_tests::seed_001_checklist!(postgres_ports);

/// Faults at random calls of random sequences on the server backend (see `fault_campaign`).
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("postgres", postgres_ports);
}
