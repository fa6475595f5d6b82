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

/// The sequence the property test shrank a defect to: an import waiting as a conflict joins
/// the lineage of the memory it would replace, which had been promoted; forgetting the import
/// with its copies forgets that whole lineage, so the copy of its first version goes too.
#[test]
fn forgetting_a_memory_with_copies_takes_the_copies_of_every_version() {
    use arbor_tests::Op::*;
    let ops = [
        Ingest { context: 3, template: 0, variant: 0 },
        IngestImported { nth: 0, variant: 0, hours_ago: 1 },
        Ingest { context: 0, template: 0, variant: 0 },
        Promote { context: 3, nth: 45, rollback: false },
        Ingest { context: 0, template: 0, variant: 0 },
        Ingest { context: 0, template: 0, variant: 0 },
        IngestBatch { context: 0, items: vec![(0, 0), (0, 0), (0, 0)] },
        IngestImported { nth: 0, variant: 0, hours_ago: 1 },
        Ingest { context: 0, template: 0, variant: 0 },
        Forget { context: 3, nth: 9, with_copies: true },
    ];
    check_sequence(lance_ports, &ops).map(drop).unwrap_or_else(|e| panic!("{e}"));
}
