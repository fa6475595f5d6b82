//! The cross-crate property test on the server backend: Postgres store and index in a fresh
//! schema per sequence, bodies on disk. Every sequence also runs on the embedded backend, and
//! the two must return the same evidence, in the same order, at every retrieval: one policy
//! core, the same answers on every backend.

use arbor_tests::{check_sequence, postgres_ports, property_sequences, sqlite_ports};

#[test]
fn random_operation_sequences_keep_every_promise_and_match_sqlite() {
    property_sequences(file!(), |ops| {
        let on_postgres = check_sequence(postgres_ports, ops).map_err(|e| format!("postgres: {e}"))?;
        let on_sqlite = check_sequence(|| async { sqlite_ports() }, ops).map_err(|e| format!("sqlite: {e}"))?;
        for (pg, lite) in on_postgres.iter().zip(&on_sqlite) {
            if pg != lite {
                return Err(format!("step {}: postgres and sqlite packs differ: {pg:?} and {lite:?}", pg.0));
            }
        }
        match on_postgres.len() == on_sqlite.len() {
            true => Ok(()),
            false => Err(format!("{} retrievals on postgres, {} on sqlite", on_postgres.len(), on_sqlite.len())),
        }
    });
}

arbor_tests::acceptance_checklist!(postgres_ports);

/// Faults at random calls of random sequences on the server backend (see `fault_campaign`).
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("postgres", postgres_ports);
}

/// The campaign's shrunk case ([`arbor_tests::promotion_landed_though_reported_failed`]): it
/// failed here, where a failure after the promotion's commit hit that step's tenth call.
#[test]
fn a_promotion_reported_failed_after_it_landed_keeps_every_promise() {
    let (ops, faults) = arbor_tests::promotion_landed_though_reported_failed();
    arbor_tests::check_faulty_sequence(&postgres_ports, &ops, &faults).map(drop).unwrap_or_else(|e| panic!("{e}"));
}

/// The fault campaign's shrunk case ([`arbor_tests::jobs_after_a_failed_retrieval`]).
#[test]
fn jobs_after_a_failed_retrieval_keep_every_tree_rooted() {
    let (ops, faults) = arbor_tests::jobs_after_a_failed_retrieval();
    arbor_tests::check_faulty_sequence(&postgres_ports, &ops, &faults).map(drop).unwrap_or_else(|e| panic!("{e}"));
}

/// Export, then import into an empty store: the same answers ([`arbor_tests::export_import`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_an_empty_store_answers_the_same() {
    let (source, _a) = arbor_tests::postgres_ports().await;
    let (target, _b) = arbor_tests::postgres_ports().await;
    arbor_tests::export_import::round_trip(source, target).await;
}
