//! Checks of the [`MetadataStore`](crate::MetadataStore) contract: what a commit writes, and what
//! it refuses whole: read-back, namespaces, preconditions, supersession, duplicates and live
//! fingerprints.

use arbor_domain::id::{LeafId, NodeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::visibility::VisibilityFilter;

use crate::conformance::fixtures::{
    audit, conversation, entity, job, leaf, project, scope, sealed_summary, tree, tree_id, ts,
};
use crate::error::Error;
use crate::store::{Change, ChangeSet, EntityQuery, JobClaim, LeafExpect, MetadataStore, Page, TreeLeafQuery};

use super::{lid, seed_tree};

/// What is committed can be read back unchanged.
pub async fn commit_then_read(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = tree_id("alice");
    let person = entity(&ns, "ent-alice", "Alice");
    let record = leaf(&ns, &t, "leaf-1", "Alice likes green tea", 5);
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertEntity(person.clone()))
                .with(Change::EnsureTree(tree(&ns, &t)))
                .with(Change::InsertLeaf(record.clone())),
        )
        .await
        .expect("commit succeeds");
    let scope = [ns.clone()];
    assert_eq!(store.leaf(&scope, &record.id).await.unwrap(), Some(record.clone()));
    assert_eq!(store.leaves(&scope, &[record.id.clone(), lid("leaf-missing")]).await.unwrap(), vec![record]);
    assert_eq!(store.tree(&ns, &t).await.unwrap(), Some(tree(&ns, &t)));
    assert_eq!(store.trees(&scope).await.unwrap(), vec![tree(&ns, &t)]);
    assert_eq!(store.entity(&ns, &person.id).await.unwrap(), Some(person));
    assert_eq!(store.namespaces().await.unwrap(), vec![ns.clone()]);
    // A fact superseded at the instant it became valid keeps an empty validity interval.
    let mut instant = leaf(&ns, &t, "leaf-2", "valid for no time at all", 6);
    instant.validity = arbor_domain::time::Validity::starting(ts(6)).ended_at(ts(6));
    instant.status = LeafStatus::Superseded;
    store.commit(ChangeSet::new().with(Change::InsertLeaf(instant.clone()))).await.unwrap();
    assert_eq!(store.leaf(&scope, &instant.id).await.unwrap(), Some(instant));
    // EnsureTree never overwrites.
    let mut renamed = tree(&ns, &t);
    renamed.title = "another title".into();
    store.commit(ChangeSet::new().with(Change::EnsureTree(renamed))).await.unwrap();
    assert_eq!(store.tree(&ns, &t).await.unwrap(), Some(tree(&ns, &t)));
}

/// A record outside the caller's scope is indistinguishable from a missing one.
pub async fn reads_never_cross_namespaces(store: &dyn MetadataStore) {
    let (a, b) = (project("alpha"), project("beta"));
    let t = tree_id("topic");
    let leaf_a = leaf(&a, &t, "leaf-a", "alpha secret roadmap", 1);
    let summary_a = sealed_summary(&a, &t, "sum-a", vec![NodeId::Leaf(leaf_a.id.clone())], "alpha summary");
    store
        .commit(
            ChangeSet::new()
                .with(Change::EnsureTree(tree(&a, &t)))
                .with(Change::EnsureTree(tree(&b, &t)))
                .with(Change::InsertEntity(entity(&a, "ent-x", "Xavier")))
                .with(Change::InsertLeaf(leaf_a.clone()))
                .with(Change::InsertSummary(summary_a.clone()))
                .with(Change::Audit(audit(&a, "leaf.created", 1))),
        )
        .await
        .unwrap();
    let only_b = [b.clone()];
    assert_eq!(store.leaf(&only_b, &leaf_a.id).await.unwrap(), None);
    assert!(store.leaves(&only_b, std::slice::from_ref(&leaf_a.id)).await.unwrap().is_empty());
    assert_eq!(store.summary(&only_b, &summary_a.id).await.unwrap(), None);
    assert!(store.summaries(&only_b, std::slice::from_ref(&summary_a.id)).await.unwrap().is_empty());
    assert!(store.trees(&only_b).await.unwrap().iter().all(|t| t.namespace == b));
    assert_eq!(store.entity(&b, &arbor_domain::id::EntityId::parse("ent-x").unwrap()).await.unwrap(), None);
    let terms = EntityQuery { terms: vec!["Xavier".into()], limit: 10 };
    assert!(store.find_entities(&b, &terms).await.unwrap().is_empty());
    assert!(store.tree_leaves(&b, &t, &TreeLeafQuery::default()).await.unwrap().is_empty());
    assert!(store.frontier(&b, &t).await.unwrap().is_empty());
    assert!(store.audit_events(&only_b, 10).await.unwrap().is_empty());
    let chain = ReadChain::resolve(&TrustedContext::Project { project: scope("beta") }, &ReadChainPolicy::default())
        .expect("chain resolves");
    let filter = VisibilityFilter::for_chain(&chain, ts(100));
    assert!(store.list_leaves(&filter, Page::first(100)).await.unwrap().is_empty());
    // The empty scope reads nothing at all.
    assert_eq!(store.leaf(&[], &leaf_a.id).await.unwrap(), None);
}

/// A change set whose precondition fails leaves no trace: no row, no job, no audit event.
pub async fn failed_precondition_leaves_nothing(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let existing = leaf(&ns, &t, "leaf-old", "old fact", 1);
    store.commit(ChangeSet::new().with(Change::InsertLeaf(existing.clone()))).await.unwrap();

    let new = leaf(&ns, &t, "leaf-new", "new fact", 2);
    let mut wrongly_expected = existing.clone();
    wrongly_expected.status = LeafStatus::Superseded;
    let result = store
        .commit(
            ChangeSet::new()
                .with(Change::InsertLeaf(new.clone()))
                .with(Change::Enqueue(job(&ns, "job-1", "seal:x", 0)))
                .with(Change::Audit(audit(&ns, "leaf.created", 2)))
                .with(Change::InsertEntity(entity(&ns, "ent-1", "Bob")))
                // Expects the leaf to be a candidate; it is active.
                .with(Change::UpdateLeaf {
                    expect: LeafExpect::status(LeafStatus::Candidate),
                    record: wrongly_expected,
                }),
        )
        .await;
    assert!(matches!(result, Err(Error::Conflict { .. })), "expected a conflict, got {result:?}");
    let scope = [ns.clone()];
    assert_eq!(store.leaf(&scope, &new.id).await.unwrap(), None, "the inserted leaf was rolled back");
    assert_eq!(store.leaf(&scope, &existing.id).await.unwrap(), Some(existing));
    let claim = JobClaim { worker: "w".into(), now: ts(10), lease_until: ts(20), limit: 10 };
    assert!(store.claim_jobs(&claim).await.unwrap().is_empty(), "the job was rolled back");
    assert!(store.audit_events(&scope, 10).await.unwrap().is_empty(), "the audit event was rolled back");
    assert!(store.find_entities(&ns, &EntityQuery { terms: vec!["bob".into()], limit: 5 }).await.unwrap().is_empty());
}

/// Supersession swaps old and new in one commit; a second attempt from a stale read conflicts
/// and creates nothing.
pub async fn supersede_is_atomic(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let old = leaf(&ns, &t, "leaf-old", "release in August", 1);
    store.commit(ChangeSet::new().with(Change::InsertLeaf(old.clone()))).await.unwrap();

    let supersede = |new_id: &str, text: &str| {
        let mut new = leaf(&ns, &t, new_id, text, 5);
        new.supersedes = Some(old.id.clone());
        let mut retired = old.clone();
        retired.status = LeafStatus::Superseded;
        retired.superseded_by = Some(new.id.clone());
        retired.validity = retired.validity.ended_at(ts(5));
        retired.known = retired.known.closed_at(ts(5));
        (
            new.clone(),
            retired.clone(),
            ChangeSet::new()
                .with(Change::InsertLeaf(new))
                .with(Change::UpdateLeaf { expect: LeafExpect::status(LeafStatus::Active), record: retired }),
        )
    };
    let (new, retired, changes) = supersede("leaf-new", "release in September");
    store.commit(changes).await.expect("first supersession succeeds");
    let scope = [ns.clone()];
    assert_eq!(store.leaf(&scope, &new.id).await.unwrap(), Some(new));
    assert_eq!(store.leaf(&scope, &old.id).await.unwrap(), Some(retired));

    let (late, _, changes) = supersede("leaf-late", "release in October");
    let result = store.commit(changes).await;
    assert!(matches!(result, Err(Error::Conflict { .. })), "a stale supersession must conflict, got {result:?}");
    assert_eq!(store.leaf(&scope, &late.id).await.unwrap(), None);
}

/// Ids are unique; a refused insert changes nothing.
pub async fn duplicate_ids_are_refused(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let first = leaf(&ns, &t, "leaf-1", "first", 1);
    store.commit(ChangeSet::new().with(Change::InsertLeaf(first.clone()))).await.unwrap();
    let impostor = leaf(&ns, &t, "leaf-1", "impostor", 2);
    let result = store.commit(ChangeSet::new().with(Change::InsertLeaf(impostor))).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    assert_eq!(store.leaf(std::slice::from_ref(&ns), &first.id).await.unwrap(), Some(first));

    let summary = sealed_summary(&ns, &t, "sum-1", vec![], "s");
    store.commit(ChangeSet::new().with(Change::InsertSummary(summary.clone()))).await.unwrap();
    let result = store.commit(ChangeSet::new().with(Change::InsertSummary(summary))).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    let job = job(&ns, "job-1", "k", 0);
    store.commit(ChangeSet::new().with(Change::Enqueue(job.clone()))).await.unwrap();
    let result = store.commit(ChangeSet::new().with(Change::Enqueue(job))).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
}

/// A change set of many new leaves with audit entries between them (as an ingest of a batch
/// writes) lands whole, audit entries in order; one duplicate among them, of a stored id or of
/// another new leaf's words, refuses the whole set and leaves nothing of it behind. More than a
/// thousand leaves, so a backend that writes them in chunks crosses a chunk boundary.
pub async fn a_run_of_new_rows_lands_whole_or_not_at_all(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let scope = std::slice::from_ref(&ns);
    let run = |from: i64, to: i64| {
        let mut set = ChangeSet::new();
        for i in from..to {
            set = set
                .with(Change::InsertLeaf(leaf(&ns, &t, &format!("leaf-{i}"), &format!("memory number {i}"), i)))
                .with(Change::Audit(audit(&ns, &format!("leaf.created.{i}"), i)));
        }
        set
    };
    store.commit(run(0, 2_100)).await.unwrap();
    let ids: Vec<LeafId> = (0..2_100).map(|i| LeafId::parse(&format!("leaf-{i}")).unwrap()).collect();
    assert_eq!(store.leaves(scope, &ids).await.unwrap().len(), 2_100);
    let actions: Vec<String> = store.audit_events(scope, 3_000).await.unwrap().into_iter().map(|e| e.action).collect();
    let expected: Vec<String> = (0..2_100).rev().map(|i| format!("leaf.created.{i}")).collect();
    assert_eq!(actions, expected, "audit entries newest first, in the order they were given");

    // A stored id in the middle of a run.
    let mut clash = run(5_000, 5_010);
    clash.changes.insert(9, Change::InsertLeaf(leaf(&ns, &t, "leaf-7", "other words", 7)));
    let result = store.commit(clash).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    // Two new leaves with the same words in one tree.
    let mut twins = run(6_000, 6_010);
    twins.changes.push(Change::InsertLeaf(leaf(&ns, &t, "leaf-twin", "memory number 6004", 6_004)));
    let result = store.commit(twins).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    let refused: Vec<LeafId> =
        (5_000..5_010).chain(6_000..6_010).map(|i| LeafId::parse(&format!("leaf-{i}")).unwrap()).collect();
    assert!(store.leaves(scope, &refused).await.unwrap().is_empty(), "a refused set left leaves behind");
    assert_eq!(store.audit_events(scope, 3_000).await.unwrap().len(), 2_100, "a refused set left audit entries");
    assert_eq!(store.leaf(scope, &ids[7]).await.unwrap().map(|l| l.summary), Some("memory number 7".to_owned()));
}

/// At most one live leaf per (namespace, tree, fingerprint); other trees and dead leaves do not
/// count.
pub async fn live_fingerprints_are_unique_per_tree(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t1 = seed_tree(store, &ns, "one").await;
    let t2 = seed_tree(store, &ns, "two").await;
    let first = leaf(&ns, &t1, "leaf-1", "same words", 1);
    store.commit(ChangeSet::new().with(Change::InsertLeaf(first.clone()))).await.unwrap();
    let twin = leaf(&ns, &t1, "leaf-2", "same words", 2);
    let result = store.commit(ChangeSet::new().with(Change::InsertLeaf(twin.clone()))).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    // Another tree is another owner.
    store.commit(ChangeSet::new().with(Change::InsertLeaf(leaf(&ns, &t2, "leaf-3", "same words", 3)))).await.unwrap();
    // Once the first is superseded, the same words may live again.
    let mut superseded = first.clone();
    superseded.status = LeafStatus::Superseded;
    store
        .commit(
            ChangeSet::new()
                .with(Change::UpdateLeaf { expect: LeafExpect::status(LeafStatus::Active), record: superseded }),
        )
        .await
        .unwrap();
    store.commit(ChangeSet::new().with(Change::InsertLeaf(twin))).await.expect("a dead twin does not block");
    let query = TreeLeafQuery { fingerprint: Some(first.fingerprint.clone()), ..TreeLeafQuery::default() };
    assert_eq!(store.tree_leaves(&ns, &t1, &query).await.unwrap().len(), 2);
    let active = TreeLeafQuery { statuses: vec![LeafStatus::Active], ..query };
    let found = store.tree_leaves(&ns, &t1, &active).await.unwrap();
    assert_eq!(found.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(), vec!["leaf-2"]);
}

/// Bringing a leaf back to life is refused while a live twin holds its fingerprint.
pub async fn reviving_a_twin_is_refused(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let mut archived = leaf(&ns, &t, "leaf-1", "same words", 1);
    archived.status = LeafStatus::Archived;
    let active = leaf(&ns, &t, "leaf-2", "same words", 2);
    store
        .commit(ChangeSet::new().with(Change::InsertLeaf(archived.clone())).with(Change::InsertLeaf(active)))
        .await
        .expect("an archived leaf does not hold its fingerprint");
    let mut revived = archived.clone();
    revived.status = LeafStatus::Candidate;
    let result = store
        .commit(
            ChangeSet::new()
                .with(Change::UpdateLeaf { expect: LeafExpect::status(LeafStatus::Archived), record: revived }),
        )
        .await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    assert_eq!(store.leaf(std::slice::from_ref(&ns), &archived.id).await.unwrap(), Some(archived));
}
