//! The app against mocked ports (mockall): failures of the metadata store at commit time must
//! leave nothing behind, a store that keeps conflicting must produce a clear error rather than
//! a loop, and a model reasoner is asked within its budget.

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
    store.expect_leaves_filed_under().returning(|_, _| Ok(Vec::new()));
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

/// A model reasoner consulted by consolidation: it answers like the deterministic one for
/// everything but duplicate judgements, where — once `judging` is set — it says the changed
/// memory replaces the first memory it was shown, and counts the call (before, at write time,
/// it finds every memory distinct).
fn judging_reasoner(
    calls: Arc<std::sync::atomic::AtomicUsize>,
    judging: Arc<std::sync::atomic::AtomicBool>,
) -> MockReasoner {
    use arbor_domain::heuristics;
    use arbor_domain::supersession::DuplicateJudgement;
    let mut reasoner = MockReasoner::new();
    reasoner.expect_id().return_const("mock-model/1".to_owned());
    reasoner.expect_locality().return_const(arbor_ports::Locality::Local);
    reasoner.expect_assess().returning(|request| Ok(heuristics::assess(request)));
    reasoner.expect_summarize().returning(|request| Ok(heuristics::summarize(request)));
    reasoner.expect_classify_query().returning(|request| Ok(heuristics::classify_query(request)));
    reasoner.expect_rerank().returning(|request| Ok(request.candidates.iter().map(|c| c.id.clone()).collect()));
    reasoner.expect_judge_duplicate().returning(move |request| {
        if !judging.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(DuplicateJudgement::Distinct);
        }
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(match request.candidates.first() {
            Some(first) => DuplicateJudgement::Supersedes { leaf_id: first.id.to_string(), confidence: 0.9 },
            None => DuplicateJudgement::Distinct,
        })
    });
    reasoner
}

/// With a model reasoner, consolidation asks it about changed memories the rules say nothing
/// of, within the pass's budget: never more calls than the budget, the rest counted as
/// unjudged in the run and its report; a budget of 0 makes no call; what the model proposes is
/// validated and applied like a rule's proposal.
#[tokio::test]
async fn consolidation_asks_a_model_within_its_budget() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use arbor_app::ConsolidateRequest;
    use arbor_domain::namespace::Namespace;
    use arbor_ports::memory::InMemoryMetadataStore;

    let (calls, judging) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let clock = Arc::new(ManualClock::new(jiff::Timestamp::from_second(1_780_000_000).unwrap()));
    let ports = Ports {
        store: Arc::new(InMemoryMetadataStore::new()),
        index: Arc::new(InMemorySearchIndex::new()),
        bodies: Arc::new(InMemoryBodyStore::new()),
        embedder: Arc::new(HashingEmbedder::default()),
        reasoner: Arc::new(judging_reasoner(calls.clone(), judging.clone())),
        clock: clock.clone(),
        ids: Arc::new(SequentialIds::default()),
    };
    let arbor = Arbor::new(ports, Policy::default(), Options::default());
    let global = arbor.read_chain(&TrustedContext::Only { namespace: Namespace::global() }).unwrap();
    // About one project, in words no rule reads as a replacement of another.
    for text in [
        "Helix keeps its build cache on the shared volume.",
        "Helix runs integration tests against a staging copy.",
        "Helix publishes nightly artifacts for the mobile team.",
        "Helix pins its toolchain in a lockfile.",
        "Helix sends alerts to the on-call channel.",
        "Helix stores secrets in the vault cluster.",
        "Helix exports traces to the tracing backend.",
    ] {
        clock.advance_seconds(3_600);
        arbor.ingest(&global, Event::user_message(text)).await.unwrap();
    }
    let request = |model_calls| ConsolidateRequest {
        model_calls,
        ..ConsolidateRequest::new(vec![(Namespace::global(), None)], true)
    };

    judging.store(true, Ordering::SeqCst);
    let none = arbor.consolidate(&request(0)).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a budget of 0 makes no call");
    let used = none.model.as_ref().expect("a model reasoner is configured");
    assert_eq!((used.reasoner.as_str(), used.calls, used.budget), ("mock-model/1", 0, 0));
    assert!(used.unjudged >= 3, "{used:?}");

    let two = arbor.consolidate(&request(2)).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2, "never more calls than the budget");
    let used = two.model.as_ref().unwrap();
    assert_eq!((used.calls, used.budget), (2, 2));
    assert!(used.unjudged >= 1, "{used:?}");
    let proposals: Vec<_> = two.namespaces[0].proposals.iter().collect();
    assert_eq!(proposals.len(), 2, "{proposals:#?}");
    assert!(
        proposals.iter().all(|p| p.applied && p.proposal.reason.starts_with("judged by the reasoner mock-model/1"))
    );
    let report = two.to_markdown();
    assert!(report.contains("The reasoner mock-model/1 was asked 2 times (budget 2)"), "{report}");
    assert!(!report.contains("Helix"), "the report holds no memory text: {report}");

    // From the mark, the pass reads the last memory again (the margin before the mark) but
    // never shows the model a memory an earlier pass could have shown it.
    let through = two.namespaces[0].through.clone();
    assert!(through.is_some());
    let resumed =
        ConsolidateRequest { model_calls: 5, ..ConsolidateRequest::new(vec![(Namespace::global(), through)], true) };
    let again = arbor.consolidate(&resumed).await.unwrap();
    assert_eq!((again.namespaces[0].read, again.namespaces[0].new), (1, 0), "{again:#?}");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "no memory re-read in the margin is judged again");
    assert_eq!(again.model.as_ref().map(|m| (m.calls, m.unjudged)), Some((0, 0)));
}
