//! The cross-crate property test on the embedded backend: SQLite store and index, bodies on
//! disk, a fresh directory per sequence.

use arbor_tests::{check_sequence, property_sequences, sqlite_ports};

#[test]
fn random_operation_sequences_keep_every_promise() {
    property_sequences(file!(), |ops| check_sequence(|| async { sqlite_ports() }, ops).map(drop));
}

async fn fresh() -> (arbor_app::Ports, tempfile::TempDir) {
    sqlite_ports()
}

arbor_tests::acceptance_checklist!(fresh);

/// Faults at random calls of random sequences: after each, a restarted engine recovers, and
/// nothing acknowledged is lost, nothing half-done shows, fsck is clean.
#[test]
fn faults_at_random_points_lose_nothing_acknowledged() {
    arbor_tests::fault_campaign("sqlite", || async { sqlite_ports() });
}

/// A writer killed between writing a body's temporary copy and putting it in place leaves the
/// copy (holding the text) and its body intent, but no body: recovery removes that writer's
/// copy, and only that writer's. (The crash campaign in `crates/cli/tests/crash.rs` reaches the
/// same state by killing real processes, when a kill lands in that window.)
#[test]
fn recovery_removes_the_copy_a_dead_writer_left_where_its_body_never_arrived() {
    use arbor_app::{Arbor, Options, Policy};
    use arbor_domain::id::JobId;
    use arbor_domain::paths::BodyPath;
    use arbor_ports::{BodyIntent, Change, ChangeSet};

    let (ports, dir) = sqlite_ports();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let path =
            BodyPath::parse("memory/conversation:c1/interaction/interaction:uncategorized/leaves/leaf-1.md").unwrap();
        let folder = dir.path().join("memory/conversation:c1/interaction/interaction:uncategorized/leaves");
        std::fs::create_dir_all(&folder).unwrap();
        // No process has pid 4194304 (above Linux's pid_max).
        let dead_copy = folder.join(".arbor-tmp-4194304-1-leaf-1.md.tmp");
        let live_copy = folder.join(format!(".arbor-tmp-{}-1-leaf-1.md.tmp", std::process::id()));
        std::fs::write(&dead_copy, "the walrus sings").unwrap();
        std::fs::write(&live_copy, "another writer's").unwrap();
        let intent = BodyIntent {
            id: JobId::parse("job-dead-writer").unwrap(),
            owner: "elsewhere/4194304".to_owned(),
            created_at: arbor_tests::start(),
            paths: vec![path],
        };
        ports.store.commit(ChangeSet::new().with(Change::AddBodyIntent(intent))).await.unwrap();

        let arbor = Arbor::new(ports, Policy::default(), Options::default());
        let report = arbor.recover(&|_| true).await.unwrap();
        assert_eq!((report.intents_cleared, report.bodies_removed, report.interrupted_writes_removed), (1, 0, 1));
        assert!(!dead_copy.exists(), "the dead writer's copy of the text is gone");
        assert!(live_copy.exists(), "another writer's copy is not the dead writer's to remove");
        assert!(arbor.ports().store.body_intents().await.unwrap().is_empty());
    });
}

/// The sequence the property test shrank a forget defect to
/// ([`arbor_tests::forget_with_copies_of_every_version`]).
#[test]
fn forgetting_a_memory_with_copies_takes_the_copies_of_every_version() {
    let ops = arbor_tests::forget_with_copies_of_every_version();
    check_sequence(|| async { sqlite_ports() }, &ops).map(drop).unwrap_or_else(|e| panic!("{e}"));
}

/// The fault campaign's shrunk case ([`arbor_tests::promotion_landed_though_reported_failed`]).
#[test]
fn a_promotion_reported_failed_after_it_landed_keeps_every_promise() {
    let (ops, faults) = arbor_tests::promotion_landed_though_reported_failed();
    arbor_tests::check_faulty_sequence(&|| async { sqlite_ports() }, &ops, &faults)
        .map(drop)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The fault campaign's shrunk case ([`arbor_tests::jobs_after_a_failed_retrieval`]).
#[test]
fn jobs_after_a_failed_retrieval_keep_every_tree_rooted() {
    let (ops, faults) = arbor_tests::jobs_after_a_failed_retrieval();
    arbor_tests::check_faulty_sequence(&|| async { sqlite_ports() }, &ops, &faults)
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
