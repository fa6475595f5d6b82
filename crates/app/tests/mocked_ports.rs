//! The app against mocked ports (mockall): failures of the metadata store at commit time must
//! leave nothing behind, and a store that keeps conflicting must produce a clear error rather
//! than a loop.

use std::sync::Arc;

use arbor_app::{AppError, Arbor, Options, Policy, Ports};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_ports::memory::{InMemoryBodyStore, InMemorySearchIndex};
use arbor_ports::{
    BodyIntent, BodyStore, Change, ChangeSet, Error, HashingEmbedder, HeuristicReasoner, ManualClock,
    MockMetadataStore, MockReasoner, SequentialIds,
};

fn chain() -> ReadChain {
    let context =
        TrustedContext::Conversation { conversation: ScopeId::parse("c1").unwrap(), project: None, agent: None };
    ReadChain::resolve(&context, &ReadChainPolicy::default()).unwrap()
}

/// What each commit a mocked store received held, in order.
type Log = Arc<std::sync::Mutex<Vec<&'static str>>>;

fn describe(changes: &ChangeSet) -> &'static str {
    match changes.changes.first() {
        Some(Change::AddBodyIntent(_)) => "announce bodies",
        Some(Change::ClearBodyIntent { .. }) => "abandon bodies",
        _ => "rows",
    }
}

/// A store whose every read sees an empty namespace: the one place these tests say what the
/// write path may read, so a new read in it changes this function, not every test. What a test
/// is about is how its store answers `commit`.
fn empty_store() -> MockMetadataStore {
    let mut store = MockMetadataStore::new();
    store.expect_backend().return_const("mock");
    store.expect_find_entities().returning(|_, _| Ok(Vec::new()));
    store.expect_entity_by_slug().returning(|_, _| Ok(None));
    store.expect_tree().returning(|_, _| Ok(None));
    store.expect_tree_leaves().returning(|_, _, _| Ok(Vec::new()));
    // Inline indexing reads a new leaf back; finding none, it unindexes harmlessly.
    store.expect_leaf().returning(|_, _| Ok(None));
    store
}

/// An empty store that keeps body intents and fails every commit of rows as `fail` says.
fn store(fail: fn() -> Error, log: Log) -> MockMetadataStore {
    let mut store = empty_store();
    // Abandoning bodies first asks whether the failed commit landed (it cleared the intent).
    let intents = Arc::new(std::sync::Mutex::new(Vec::<BodyIntent>::new()));
    let listed = intents.clone();
    store.expect_body_intents().returning(move || Ok(listed.lock().unwrap().clone()));
    store.expect_commit().returning(move |changes| {
        let kind = describe(&changes);
        log.lock().unwrap().push(kind);
        if kind == "rows" {
            return Err(fail());
        }
        for change in changes.changes {
            match change {
                Change::AddBodyIntent(intent) => intents.lock().unwrap().push(intent),
                Change::ClearBodyIntent { id } => intents.lock().unwrap().retain(|i| i.id != id),
                _ => {}
            }
        }
        Ok(())
    });
    store
}

fn arbor(store: MockMetadataStore, bodies: Arc<InMemoryBodyStore>) -> Arbor {
    let ports = Ports {
        store: Arc::new(store),
        index: Arc::new(InMemorySearchIndex::new()),
        bodies,
        embedder: Arc::new(HashingEmbedder::default()),
        reasoner: Arc::new(HeuristicReasoner),
        clock: Arc::new(ManualClock::new(jiff::Timestamp::from_second(1_780_000_000).unwrap())),
        ids: Arc::new(SequentialIds::default()),
    };
    Arbor::new(ports, Policy::default(), Options::default())
}

#[tokio::test]
async fn a_failed_commit_leaves_no_body_behind() {
    let bodies = Arc::new(InMemoryBodyStore::new());
    let fail = || Error::backend("mock", std::io::Error::other("disk full"));
    let log = Log::default();
    let arbor = arbor(store(fail, log.clone()), bodies.clone());
    let error = arbor.ingest(&chain(), Event::user_message("I prefer tea over coffee.")).await.unwrap_err();
    assert!(matches!(error, AppError::Port(Error::Backend { .. })), "{error:?}");
    assert_eq!(*log.lock().unwrap(), vec!["announce bodies", "rows", "abandon bodies"]);
    assert!(bodies.list("").await.unwrap().is_empty(), "the body written before the commit was removed");
}

/// A commit that reported failure but landed (the acknowledgement was lost): its rows refer to
/// the bodies, and the same commit cleared the intent, so the bodies stay.
#[tokio::test]
async fn a_commit_that_landed_despite_its_error_keeps_its_bodies() {
    let bodies = Arc::new(InMemoryBodyStore::new());
    let mut store = empty_store();
    store.expect_body_intents().returning(|| Ok(Vec::new()));
    store.expect_commit().returning(|changes| match describe(&changes) {
        "rows" => Err(Error::Unavailable { backend: "mock", source: "connection reset during COMMIT".into() }),
        _ => Ok(()),
    });
    let arbor = arbor(store, bodies.clone());
    let error = arbor.ingest(&chain(), Event::user_message("I prefer tea over coffee.")).await.unwrap_err();
    assert!(matches!(error, AppError::Port(Error::Unavailable { .. })), "{error:?}");
    assert_eq!(bodies.list("").await.unwrap().len(), 1, "the body its rows may refer to is kept for recovery to judge");
}

#[tokio::test]
async fn endless_conflicts_end_in_a_clear_error() {
    let bodies = Arc::new(InMemoryBodyStore::new());
    let conflict =
        || Error::Conflict { what: "leaf", id: "x".into(), expected: "active".into(), found: "superseded".into() };
    let attempts = Options::default().max_write_attempts as usize;
    let log = Log::default();
    let arbor = arbor(store(conflict, log.clone()), bodies.clone());
    let error = arbor.ingest(&chain(), Event::user_message("I prefer tea over coffee.")).await.unwrap_err();
    assert!(matches!(error, AppError::Contention { .. }), "{error:?}");
    assert_eq!(log.lock().unwrap().iter().filter(|k| **k == "rows").count(), attempts);
    assert!(error.to_string().starts_with(&format!("gave up after {attempts} attempts")), "{error}");
    assert!(bodies.list("").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_failing_reasoner_falls_back_to_the_deterministic_one() {
    let bodies = Arc::new(InMemoryBodyStore::new());
    let mut reasoner = MockReasoner::new();
    reasoner.expect_id().return_const("mock-model/0".to_owned());
    reasoner.expect_locality().return_const(arbor_ports::Locality::Local);
    reasoner.expect_assess().returning(|_| Err(Error::invalid("model answer", "truncated JSON")));
    let mut store = empty_store();
    // Whatever the commits are (the body intent, the rows, the index job's completion), the
    // leaf among them names the reasoner that judged it.
    let extractors = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = extractors.clone();
    store.expect_commit().returning(move |changes| {
        for change in changes.changes {
            if let Change::InsertLeaf(leaf) = change {
                seen.lock().unwrap().push(leaf.provenance.extractor);
            }
        }
        Ok(())
    });
    let ports = Ports {
        store: Arc::new(store),
        index: Arc::new(InMemorySearchIndex::new()),
        bodies,
        embedder: Arc::new(HashingEmbedder::default()),
        reasoner: Arc::new(reasoner),
        clock: Arc::new(ManualClock::new(jiff::Timestamp::from_second(1_780_000_000).unwrap())),
        ids: Arc::new(SequentialIds::default()),
    };
    let arbor = Arbor::new(ports, Policy::default(), Options::default());
    let report = arbor.ingest(&chain(), Event::user_message("I prefer tea over coffee.")).await.unwrap();
    assert_eq!(report.chunks[0].outcome.label(), "created");
    assert_eq!(arbor.reasoner_fallbacks(), 1);
    assert_eq!(
        *extractors.lock().unwrap(),
        vec!["heuristic/1".to_owned()],
        "provenance names the reasoner actually used"
    );
}
