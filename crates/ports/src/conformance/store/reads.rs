//! Checks of the [`MetadataStore`](crate::MetadataStore) contract: what reads return: visibility
//! pushed down exactly as the domain decides, audit, recorded retrievals, counts, body intents, a
//! tree's summaries and a clean check.

use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Category, MemoryKind, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};

use crate::conformance::fixtures::{
    Rng, audit, conversation, entity, job, leaf, project, scope, sealed_summary, tree, tree_id, ts,
};
use crate::error::Error;
use crate::store::{Change, ChangeSet, LeafPosition, MetadataStore, Neighbours, Page};

use super::{lid, seed_tree};

/// `list_leaves` and `leaf_neighbours` return exactly what the domain's visibility rule admits,
/// in timeline order, on generated data across namespaces, statuses, validity, expiry,
/// sensitivity and snapshots.
pub async fn visibility_pushdown_matches_domain(store: &dyn MetadataStore) {
    let mut rng = Rng::new(0xA5B0_2026);
    let namespaces = vec![
        conversation("c1"),
        conversation("c2"),
        project("p1"),
        Namespace::global(),
        Namespace::run(scope("r1")),
        Namespace::run(scope("r2")),
        Namespace::experiment(scope("e1")),
    ];
    let trees = [tree_id("one"), tree_id("two"), TreeId::uncategorized(Category::Interaction)];
    let mut changes = ChangeSet::new();
    for ns in &namespaces {
        for t in &trees {
            changes.push(Change::EnsureTree(tree(ns, t)));
        }
    }
    let mut all = Vec::new();
    for i in 0..160 {
        let ns = rng.pick(&namespaces).clone();
        let t = rng.pick(&trees).clone();
        let at = rng.below(100) as i64;
        let mut record = leaf(&ns, &t, &format!("leaf-{i:03}"), &format!("generated fact {i}"), at);
        record.kind = *rng.pick(&MemoryKind::ALL);
        record.status = *rng.pick(&LeafStatus::ALL);
        record.known = match record.status {
            LeafStatus::Candidate | LeafStatus::Rejected => KnownSpan::NEVER,
            LeafStatus::Active => KnownSpan::from(ts(at)),
            _ => KnownSpan::from(ts(at)).closed_at(ts(at + 1 + rng.below(60) as i64)),
        };
        record.validity = match rng.below(4) {
            0 => Validity::ALWAYS,
            1 => Validity::starting(ts(rng.below(100) as i64)),
            2 => Validity::new(Some(ts(at)), Some(ts(at + 1 + rng.below(50) as i64))).unwrap(),
            _ => Validity::new(None, Some(ts(rng.below(120) as i64 + 1))).unwrap(),
        };
        if rng.chance(15) {
            record.expires_at = Some(ts(rng.below(150) as i64));
        }
        record.sensitivity =
            *rng.pick(&[Sensitivity::Normal, Sensitivity::Normal, Sensitivity::Sensitive, Sensitivity::Restricted]);
        if record.status == LeafStatus::Tombstone {
            record = record.tombstone(ts(at + 2));
        }
        all.push(record.clone());
        changes.push(Change::InsertLeaf(record));
    }
    store.commit(changes).await.expect("generated leaves are stored");

    let contexts = vec![
        TrustedContext::Conversation { conversation: scope("c1"), project: Some(scope("p1")), agent: None },
        TrustedContext::Conversation { conversation: scope("c2"), project: None, agent: None },
        TrustedContext::AutomationRun {
            run: scope("r1"),
            automation: scope("a1"),
            conversation: None,
            project: Some(scope("p1")),
        },
        TrustedContext::ExperimentRun {
            run: scope("r2"),
            experiment: scope("e1"),
            project: Some(scope("p1")),
            frozen_at: ts(40),
        },
        TrustedContext::Only { namespace: Namespace::global() },
    ];
    for round in 0..60 {
        let chain = ReadChain::resolve(rng.pick(&contexts), &ReadChainPolicy::default()).unwrap();
        let mut filter = VisibilityFilter::for_chain(&chain, ts(60 + rng.below(60) as i64));
        filter.node_kinds = vec![NodeKind::Leaf];
        if rng.chance(40) {
            filter.as_of = Some(ts(rng.below(120) as i64));
        }
        filter.include_restricted = rng.chance(30);
        if rng.chance(25) {
            filter.kinds = vec![*rng.pick(&MemoryKind::ALL), *rng.pick(&MemoryKind::ALL)];
        }
        if rng.chance(25) {
            filter.tree = Some(rng.pick(&trees).clone());
        }
        if rng.chance(25) {
            let start = rng.below(80) as i64;
            filter.time_range = Some((Some(ts(start)), if rng.chance(50) { Some(ts(start + 20)) } else { None }));
        }
        let mut expected: Vec<&arbor_domain::model::LeafRecord> =
            all.iter().filter(|l| filter.admits(&NodeFacts::of_leaf(l))).collect();
        expected.sort_by(|a, b| b.observed_at.cmp(&a.observed_at).then_with(|| b.id.cmp(&a.id)));
        let expected: Vec<String> = expected.into_iter().map(|l| l.id.to_string()).collect();
        let got: Vec<String> = store
            .list_leaves(&filter, Page::first(1_000))
            .await
            .unwrap()
            .into_iter()
            .map(|l| l.id.to_string())
            .collect();
        assert_eq!(got, expected, "round {round}: backend and domain disagree for {filter:?}");
        // Paging walks the same order.
        if expected.len() > 3 {
            let page = store.list_leaves(&filter, Page { offset: 1, limit: 2 }).await.unwrap();
            let page: Vec<String> = page.into_iter().map(|l| l.id.to_string()).collect();
            assert_eq!(page, expected[1..3].to_vec(), "round {round}: paging");
        }
        // A leaf's neighbours in its tree are the admitted leaves next to it in time, for each
        // of several anchors asked at once (in any trees, the same one possibly twice).
        let anchors: Vec<LeafPosition> = (0..rng.below(4)).map(|_| LeafPosition::of(rng.pick(&all))).collect();
        let each_side = rng.below(4) as usize;
        let expected: Vec<Neighbours> = anchors
            .iter()
            .map(|anchor| {
                let mut timeline: Vec<&arbor_domain::model::LeafRecord> = all
                    .iter()
                    .filter(|l| l.namespace == anchor.namespace && l.tree_id == anchor.tree && l.id != anchor.id)
                    .filter(|l| filter.admits(&NodeFacts::of_leaf(l)))
                    .collect();
                timeline.sort_by(|a, b| (a.observed_at, &a.id).cmp(&(b.observed_at, &b.id)));
                let split = timeline.partition_point(|l| anchor.is_after(l));
                let ids =
                    |leaves: Vec<&&arbor_domain::model::LeafRecord>| leaves.into_iter().map(|l| l.id.clone()).collect();
                Neighbours {
                    before: ids(timeline[..split].iter().rev().take(each_side).collect()),
                    after: ids(timeline[split..].iter().take(each_side).collect()),
                }
            })
            .collect();
        let got = store.leaf_neighbours(&filter, &anchors, each_side).await.unwrap();
        let named: Vec<&LeafId> = anchors.iter().map(|a| &a.id).collect();
        assert_eq!(got, expected, "round {round}: neighbours of {named:?} for {filter:?}");
    }
}

/// Audit events are scoped and returned newest first.
pub async fn audit_is_scoped_and_newest_first(store: &dyn MetadataStore) {
    let (a, b) = (conversation("c1"), conversation("c2"));
    store
        .commit(
            ChangeSet::new()
                .with(Change::Audit(audit(&a, "leaf.created", 1)))
                .with(Change::Audit(audit(&b, "leaf.created", 2)))
                .with(Change::Audit(audit(&a, "leaf.superseded", 3))),
        )
        .await
        .unwrap();
    let events = store.audit_events(std::slice::from_ref(&a), 10).await.unwrap();
    assert_eq!(events.iter().map(|e| e.action.as_str()).collect::<Vec<_>>(), vec!["leaf.superseded", "leaf.created"]);
    assert_eq!(store.audit_events(&[a, b], 1).await.unwrap().len(), 1);
}

/// A recorded retrieval reads back whole inside its namespace's scope and not at all outside
/// it; its access records say which nodes entered the context; its id is never reused, and a
/// refused record leaves no access rows behind; dropping the retrievals of a node they read
/// removes them and their access records.
pub async fn retrievals_are_recorded_scoped_and_unique(store: &dyn MetadataStore) {
    use crate::snapshot::{CandidateOutcome, ConsideredNode, ContextSnapshot, SnapshotVersions};
    use arbor_domain::id::RetrievalId;
    let (a, b) = (conversation("c1"), conversation("c2"));
    let considered = |node: &str, outcome| ConsideredNode {
        node: NodeId::Leaf(lid(node)),
        namespace: Some(a.clone()),
        channels: vec![("full_text".to_owned(), 1), ("vector:hashing-v1/256d".to_owned(), 2)],
        fused: 0.25,
        outcome,
        reason: "full-text #1".to_owned(),
    };
    let snapshot = ContextSnapshot {
        id: RetrievalId::parse("ret-1").unwrap(),
        at: ts(5),
        namespace: a.clone(),
        read_chain: vec![a.to_string(), "global".to_owned()],
        actor: "cli".to_owned(),
        query: "what does eve like?".to_owned(),
        as_of: None,
        intent: "exact_evidence".to_owned(),
        intent_reason: "a specific question".to_owned(),
        understood: vec!["entity Eve".to_owned()],
        versions: SnapshotVersions {
            retriever: "r1".to_owned(),
            embedders: vec!["hashing-v1/256d".to_owned()],
            reasoner: "heuristic".to_owned(),
            policy: "p1".to_owned(),
        },
        considered: vec![
            considered("leaf-1", CandidateOutcome::Selected),
            considered("leaf-2", CandidateOutcome::Skipped),
            considered("leaf-3", CandidateOutcome::Unread),
        ],
    };
    store.commit(ChangeSet::new().with(Change::RecordRetrieval(Box::new(snapshot.clone())))).await.unwrap();
    let scope_a = std::slice::from_ref(&a);
    assert_eq!(store.retrieval(scope_a, &snapshot.id).await.unwrap(), Some(snapshot.clone()));
    assert_eq!(store.retrieval(std::slice::from_ref(&b), &snapshot.id).await.unwrap(), None, "out of scope");
    assert_eq!(store.retrieval(&[], &snapshot.id).await.unwrap(), None);

    let access = |node: &str| {
        let node = NodeId::Leaf(lid(node));
        async move { store.access_records(scope_a, &node, 10).await.unwrap() }
    };
    let selected = access("leaf-1").await;
    assert_eq!(selected.len(), 1);
    assert!(selected[0].entered_context);
    assert_eq!((selected[0].retrieval.clone(), selected[0].at), (snapshot.id.clone(), ts(5)));
    assert!(!access("leaf-2").await[0].entered_context, "read but left out");
    assert!(access("leaf-3").await.is_empty(), "never read, so never accessed");
    assert!(store.access_records(std::slice::from_ref(&b), &NodeId::Leaf(lid("leaf-1")), 10).await.unwrap().is_empty());

    let again = store.commit(ChangeSet::new().with(Change::RecordRetrieval(Box::new(snapshot.clone())))).await;
    assert!(matches!(again, Err(Error::AlreadyExists { .. })), "{again:?}");
    assert_eq!(access("leaf-1").await.len(), 1, "the refused record left no access rows");

    // Forgetting a node it never read leaves the record; one it read drops it whole.
    assert!(store.contains_text("what does eve like?").await.unwrap(), "the question is kept");
    let never_read = NodeId::Leaf(lid("leaf-3"));
    store.commit(ChangeSet::new().with(Change::DropRetrievalsOf { node: never_read })).await.unwrap();
    assert!(store.retrieval(scope_a, &snapshot.id).await.unwrap().is_some());
    let read = NodeId::Leaf(lid("leaf-2"));
    store.commit(ChangeSet::new().with(Change::DropRetrievalsOf { node: read })).await.unwrap();
    assert_eq!(store.retrieval(scope_a, &snapshot.id).await.unwrap(), None);
    assert!(access("leaf-1").await.is_empty() && access("leaf-2").await.is_empty(), "its access records went too");
    assert!(!store.contains_text("what does eve like?").await.unwrap(), "nor is its question kept");
}

/// Counts reflect what was committed.
pub async fn counts_reflect_contents(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let mut candidate = leaf(&ns, &t, "leaf-2", "two", 2);
    candidate.status = LeafStatus::Candidate;
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertLeaf(leaf(&ns, &t, "leaf-1", "one", 1)))
                .with(Change::InsertLeaf(candidate))
                .with(Change::InsertSummary(sealed_summary(&ns, &t, "sum-1", vec![], "s")))
                .with(Change::InsertEntity(entity(&ns, "ent-1", "Eve")))
                .with(Change::Audit(audit(&ns, "x", 1))),
        )
        .await
        .unwrap();
    let counts = store.counts().await.unwrap();
    assert_eq!((counts.namespaces, counts.trees, counts.entities), (1, 1, 1));
    let mut by_status = counts.leaves_by_status.clone();
    by_status.sort();
    assert_eq!(by_status, vec![(LeafStatus::Candidate, 1), (LeafStatus::Active, 1)]);
    assert_eq!((counts.summaries_current, counts.summaries_stale, counts.summaries_retired), (1, 0, 0));
    assert_eq!(counts.audit_events, 1);
}

/// Body intents are recorded, listed oldest first, and cleared; a cleared intent is gone and
/// clearing twice is harmless.
pub async fn body_intents_round_trip(store: &dyn MetadataStore) {
    use arbor_domain::paths::BodyPath;
    let ns = conversation("c1");
    let t = tree_id("topic");
    let path =
        |id: &str| BodyPath::leaf(&ns, arbor_domain::model::Category::Interaction, &t, &LeafId::parse(id).unwrap());
    let intent = |id: &str, at: i64, paths: Vec<BodyPath>| crate::store::BodyIntent {
        id: arbor_domain::id::JobId::parse(id).unwrap(),
        owner: "host/42".to_owned(),
        created_at: ts(at),
        paths,
    };
    let late = intent("job-late", 5, vec![path("leaf-3")]);
    let early = intent("job-early", 1, vec![path("leaf-1"), path("leaf-2")]);
    store
        .commit(ChangeSet::new().with(Change::AddBodyIntent(late.clone())).with(Change::AddBodyIntent(early.clone())))
        .await
        .unwrap();
    assert_eq!(store.body_intents().await.unwrap(), vec![early.clone(), late.clone()]);
    let again = store.commit(ChangeSet::new().with(Change::AddBodyIntent(early.clone()))).await;
    assert!(matches!(again, Err(Error::AlreadyExists { .. })), "got {again:?}");
    let clear = Change::ClearBodyIntent { id: early.id.clone() };
    store.commit(ChangeSet::new().with(clear.clone())).await.unwrap();
    store.commit(ChangeSet::new().with(clear)).await.expect("clearing twice is harmless");
    assert_eq!(store.body_intents().await.unwrap(), vec![late]);
}

/// `tree_summaries` lists a tree's summaries in every status, and nothing of other trees.
pub async fn tree_summaries_lists_every_status(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let other = seed_tree(store, &ns, "other").await;
    let current = sealed_summary(&ns, &t, "sum-1", vec![], "one");
    let retired = sealed_summary(&ns, &t, "sum-2", vec![], "two").retired(ts(9));
    let elsewhere = sealed_summary(&ns, &other, "sum-3", vec![], "three");
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertSummary(current.clone()))
                .with(Change::InsertSummary(retired.clone()))
                .with(Change::InsertSummary(elsewhere)),
        )
        .await
        .unwrap();
    let mut listed = store.tree_summaries(&ns, &t).await.unwrap();
    listed.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(listed, vec![current, retired]);
}

/// A store that holds only what it wrote checks clean.
pub async fn a_sound_store_checks_clean(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertEntity(entity(&ns, "ent-a", "Alice")))
                .with(Change::InsertLeaf(leaf(&ns, &t, "leaf-1", "Alice likes tea", 1)))
                .with(Change::Enqueue(job(&ns, "job-1", "seal:a", 0))),
        )
        .await
        .unwrap();
    let report = store.check_integrity().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
}
