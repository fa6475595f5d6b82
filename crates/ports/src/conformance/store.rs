//! Checks of the [`MetadataStore`] contract.

use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Category, LeafRecord, MemoryKind, SummaryStatus, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::reconcile::{Claim, Filing};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};

use super::fixtures::{
    Rng, audit, conversation, entity, job, leaf, leaf_with_secret_words, project, scope, sealed_summary, tree, tree_id,
    ts,
};
use crate::error::Error;
use crate::store::{
    Change, ChangeSet, EntityQuery, FiledQuery, Job, JobClaim, JobKind, LeafExpect, LeafPosition, MetadataStore,
    Neighbours, Page, SummaryExpect, TreeLeafQuery, WriteMark,
};

fn lid(id: &str) -> LeafId {
    LeafId::parse(id).expect("valid leaf id")
}

async fn seed_tree(store: &dyn MetadataStore, namespace: &Namespace, tree_slug: &str) -> TreeId {
    let id = tree_id(tree_slug);
    store.commit(ChangeSet::new().with(Change::EnsureTree(tree(namespace, &id)))).await.expect("tree is created");
    id
}

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

/// Trees and namespaces list in the order their names are written.
pub async fn listings_are_ordered_by_name(store: &dyn MetadataStore) {
    let namespaces = [project("zeta"), conversation("c9"), Namespace::global(), project("alpha")];
    let mut changes = ChangeSet::new();
    for ns in &namespaces {
        for slug in ["b-tree", "a-tree"] {
            changes.push(Change::EnsureTree(tree(ns, &tree_id(slug))));
        }
    }
    store.commit(changes).await.unwrap();
    let names: Vec<String> = store.namespaces().await.unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(names, vec!["conversation:c9", "global", "project:alpha", "project:zeta"]);
    let listed: Vec<String> =
        store.trees(&namespaces).await.unwrap().iter().map(|t| format!("{}/{}", t.namespace, t.tree_id)).collect();
    assert_eq!(
        listed,
        vec![
            "conversation:c9/interaction:a-tree",
            "conversation:c9/interaction:b-tree",
            "global/interaction:a-tree",
            "global/interaction:b-tree",
            "project:alpha/interaction:a-tree",
            "project:alpha/interaction:b-tree",
            "project:zeta/interaction:a-tree",
            "project:zeta/interaction:b-tree",
        ]
    );
}

/// `leaves_written_after` lists one namespace's leaves, in any status, in the order they were
/// written (`created_at`, ties by id) and from just after a mark, whatever their observation
/// times: a consolidation pass resumes exactly where the last one stopped.
pub async fn leaves_are_listed_in_the_order_written(store: &dyn MetadataStore) {
    let (ns, other) = (conversation("c1"), conversation("c2"));
    let (t, u) = (seed_tree(store, &ns, "topic").await, seed_tree(store, &other, "topic").await);
    let mut changes = ChangeSet::new();
    // Written at 10, 20, 20, 30; observed in the reverse order.
    for (id, written, observed) in [("leaf-d", 30, 1), ("leaf-b", 20, 2), ("leaf-c", 20, 3), ("leaf-a", 10, 4)] {
        let mut record = leaf(&ns, &t, id, &format!("memory {id}"), observed);
        record.created_at = ts(written);
        if id == "leaf-c" {
            record.status = LeafStatus::Superseded;
        }
        changes.push(Change::InsertLeaf(record));
    }
    changes.push(Change::InsertLeaf(leaf(&other, &u, "leaf-z", "another namespace", 15)));
    store.commit(changes).await.unwrap();
    let ids =
        |leaves: Vec<arbor_domain::model::LeafRecord>| leaves.into_iter().map(|l| l.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(store.leaves_written_after(&ns, None, 10).await.unwrap()), ["leaf-a", "leaf-b", "leaf-c", "leaf-d"]);
    let mark = WriteMark { at: ts(20), id: lid("leaf-b") };
    assert_eq!(ids(store.leaves_written_after(&ns, Some(mark.clone()), 10).await.unwrap()), ["leaf-c", "leaf-d"]);
    assert_eq!(ids(store.leaves_written_after(&ns, Some(mark.clone()), 1).await.unwrap()), ["leaf-c"]);
    let last = WriteMark { at: ts(30), id: lid("leaf-d") };
    assert!(store.leaves_written_after(&ns, Some(last), 10).await.unwrap().is_empty());
}

/// `leaves_filed_under` finds the active leaves of one namespace filed under a query's keys:
/// of the latest `per_key` under each, those filed under the most keys first. A leaf is filed
/// while it is active (from its insert, or from the update that makes it active) and under the
/// words it holds now, never across namespaces.
pub async fn leaves_are_found_by_what_they_are_filed_under(store: &dyn MetadataStore) {
    let (ns, other) = (conversation("c1"), conversation("c2"));
    let (t, u) = (seed_tree(store, &ns, "topic").await, seed_tree(store, &other, "topic").await);
    let porto = leaf(&ns, &t, "leaf-a", "Maya lives in Porto.", 1);
    let peanuts = leaf(&ns, &t, "leaf-b", "Maya is allergic to peanuts.", 2);
    let stripe = leaf(&ns, &t, "leaf-c", "Tom works at Stripe.", 3);
    let mut lisbon = leaf(&ns, &t, "leaf-d", "Maya lives in Lisbon.", 4);
    lisbon.status = LeafStatus::Candidate;
    let elsewhere = leaf(&other, &u, "leaf-e", "Maya lives in Berlin.", 5);
    let mut changes = ChangeSet::new();
    for record in [&porto, &peanuts, &stripe, &lisbon, &elsewhere] {
        changes.push(Change::InsertLeaf(record.clone()));
    }
    store.commit(changes).await.unwrap();
    let keys = |text: &str| Claim::read(text).looked_up_by();
    async fn filed(store: &dyn MetadataStore, ns: &Namespace, query: FiledQuery) -> Vec<String> {
        let found = store.leaves_filed_under(ns, &query).await.unwrap();
        found.into_iter().map(|l| l.id.to_string()).collect()
    }
    let found =
        |lookup: Filing, per_key: usize, limit: usize| filed(store, &ns, FiledQuery::new(lookup, per_key, limit));
    let moved = keys("Maya just moved to Amsterdam.");
    // Her residence is filed under her name and the slot, her allergy under her name alone.
    assert_eq!(found(moved.clone(), 12, 24).await, ["leaf-a", "leaf-b"], "Maya's active leaves, most keys first");
    assert_eq!(found(moved.clone(), 12, 1).await, ["leaf-a"], "at most `limit`");
    // "Maya" alone is filed under her name only: the latest one of it.
    assert_eq!(found(keys("Maya"), 1, 24).await, ["leaf-b"]);
    assert!(found(Filing::default(), 12, 24).await.is_empty());
    assert!(found(keys("Nobody we know"), 12, 24).await.is_empty());

    let update = |record: LeafRecord, was: LeafStatus| Change::UpdateLeaf { expect: LeafExpect::status(was), record };
    let mut superseded = porto.clone();
    superseded.status = LeafStatus::Superseded;
    let mut confirmed = lisbon.clone();
    confirmed.status = LeafStatus::Active;
    // A seal moves a leaf under a parent and leaves it filed.
    let mut sealed = peanuts.clone();
    sealed.parent = Some(SummaryId::parse("sum-1").unwrap());
    let changes = ChangeSet::new()
        .with(update(superseded, LeafStatus::Active))
        .with(update(confirmed, LeafStatus::Candidate))
        .with(update(sealed.clone(), LeafStatus::Active));
    store.commit(changes).await.unwrap();
    assert_eq!(found(moved.clone(), 12, 24).await, ["leaf-d", "leaf-b"], "superseded out, confirmed in");

    let forget = ChangeSet::new().with(Change::UpdateLeaf {
        expect: LeafExpect { status: LeafStatus::Active, parent: Some(sealed.parent.clone()) },
        record: sealed.tombstone(ts(9)),
    });
    store.commit(forget).await.unwrap();
    assert_eq!(found(moved, 12, 24).await, ["leaf-d"], "a forgotten leaf is filed nowhere");
}

/// `versions` lists one memory's versions, in any status and tree, oldest first, within one
/// namespace.
pub async fn versions_are_listed_by_lineage(store: &dyn MetadataStore) {
    let (ns, other) = (conversation("c1"), conversation("c2"));
    let (t, moved, u) = (
        seed_tree(store, &ns, "topic").await,
        seed_tree(store, &ns, "maya").await,
        seed_tree(store, &other, "topic").await,
    );
    let mut first = leaf(&ns, &t, "leaf-a", "Maya lives in Porto.", 1);
    first.status = LeafStatus::Superseded;
    let mut second = leaf(&ns, &moved, "leaf-b", "Maya lives in Porto, by the river.", 2);
    (second.lineage, second.version) = (first.id.clone(), arbor_domain::id::Version::new(2).unwrap());
    let unrelated = leaf(&ns, &t, "leaf-c", "Tom works at Stripe.", 3);
    let mut elsewhere = leaf(&other, &u, "leaf-d", "Maya lives in Porto.", 4);
    elsewhere.lineage = first.id.clone();
    let mut changes = ChangeSet::new();
    for record in [&second, &first, &unrelated, &elsewhere] {
        changes.push(Change::InsertLeaf(record.clone()));
    }
    store.commit(changes).await.unwrap();
    let ids = |found: Vec<LeafRecord>| found.into_iter().map(|l| l.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(store.versions(&ns, &first.id).await.unwrap()), ["leaf-a", "leaf-b"]);
    assert_eq!(ids(store.versions(&ns, &unrelated.id).await.unwrap()), ["leaf-c"]);
    assert_eq!(ids(store.versions(&other, &first.id).await.unwrap()), ["leaf-d"]);
    assert!(store.versions(&ns, &lid("leaf-z")).await.unwrap().is_empty());
}

/// An entity slug is unique within a namespace, not across namespaces.
pub async fn entity_slugs_are_unique_per_namespace(store: &dyn MetadataStore) {
    let (a, b) = (project("alpha"), project("beta"));
    store.commit(ChangeSet::new().with(Change::InsertEntity(entity(&a, "ent-1", "Dana")))).await.unwrap();
    let result = store.commit(ChangeSet::new().with(Change::InsertEntity(entity(&a, "ent-2", "DANA")))).await;
    assert!(matches!(result, Err(Error::AlreadyExists { .. })), "got {result:?}");
    store.commit(ChangeSet::new().with(Change::InsertEntity(entity(&b, "ent-3", "Dana")))).await.unwrap();
    let slug = arbor_domain::entity::EntitySlug::from_name("Dana");
    let found = store.entity_by_slug(&a, &slug).await.unwrap().map(|e| e.id.to_string());
    assert_eq!(found.as_deref(), Some("ent-1"));
    let found = store.entity_by_slug(&b, &slug).await.unwrap().map(|e| e.id.to_string());
    assert_eq!(found.as_deref(), Some("ent-3"));
    let missing = arbor_domain::entity::EntitySlug::from_name("Nobody");
    assert!(store.entity_by_slug(&a, &missing).await.unwrap().is_none());
}

/// The shortlist matches names, aliases and slugs by shared words, best first, bounded.
pub async fn entity_shortlist_matches_names_and_aliases(store: &dyn MetadataStore) {
    let ns = project("alpha");
    let mut acme = entity(&ns, "ent-acme", "Acme Robotics");
    acme.aliases = vec!["the robot shop".into()];
    let dana = entity(&ns, "ent-dana", "Dana Scully");
    let other = entity(&ns, "ent-other", "Fox Mulder");
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertEntity(acme))
                .with(Change::InsertEntity(dana))
                .with(Change::InsertEntity(other)),
        )
        .await
        .unwrap();
    let find = |terms: &[&str], limit| EntityQuery { terms: terms.iter().map(|t| t.to_string()).collect(), limit };
    let ids =
        |found: Vec<arbor_domain::entity::Entity>| found.into_iter().map(|e| e.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(store.find_entities(&ns, &find(&["dana"], 10)).await.unwrap()), vec!["ent-dana"]);
    assert_eq!(ids(store.find_entities(&ns, &find(&["ROBOT"], 10)).await.unwrap()), vec!["ent-acme"]);
    let both = ids(store.find_entities(&ns, &find(&["dana", "scully", "acme"], 10)).await.unwrap());
    assert_eq!(both, vec!["ent-dana", "ent-acme"], "more shared words rank first");
    assert_eq!(store.find_entities(&ns, &find(&["dana", "acme"], 1)).await.unwrap().len(), 1);
    assert!(store.find_entities(&ns, &find(&["nobody"], 10)).await.unwrap().is_empty());
}

/// The root pointer is swapped only from the expected value.
pub async fn root_swap_is_compare_and_set(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let r1 = SummaryId::parse("sum-root-1").unwrap();
    let r2 = SummaryId::parse("sum-root-2").unwrap();
    let set = |expect: Option<SummaryId>, root: Option<SummaryId>| Change::SetRoot {
        namespace: ns.clone(),
        tree: t.clone(),
        expect,
        root,
        stale: false,
    };
    store.commit(ChangeSet::new().with(set(None, Some(r1.clone())))).await.unwrap();
    let lost_race = store.commit(ChangeSet::new().with(set(None, Some(r2.clone())))).await;
    assert!(matches!(lost_race, Err(Error::Conflict { .. })), "got {lost_race:?}");
    assert_eq!(store.tree(&ns, &t).await.unwrap().unwrap().root, Some(r1.clone()));
    store
        .commit(ChangeSet::new().with(Change::MarkRootStale { namespace: ns.clone(), tree: t.clone() }))
        .await
        .unwrap();
    assert!(store.tree(&ns, &t).await.unwrap().unwrap().root_stale);
    store.commit(ChangeSet::new().with(set(Some(r1), Some(r2.clone())))).await.unwrap();
    let swapped = store.tree(&ns, &t).await.unwrap().unwrap();
    assert_eq!((swapped.root, swapped.root_stale), (Some(r2), false));
}

/// The frontier holds member leaves (`LeafStatus::sits_in_tree`) and live sealed summaries
/// without a parent.
pub async fn frontier_lists_unsealed_members(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let active = leaf(&ns, &t, "leaf-a", "a", 1);
    let mut candidate = leaf(&ns, &t, "leaf-c", "c", 2);
    candidate.status = LeafStatus::Candidate;
    candidate.known = KnownSpan::NEVER;
    let mut superseded = leaf(&ns, &t, "leaf-s", "s", 3);
    superseded.status = LeafStatus::Superseded;
    let mut forgotten = leaf(&ns, &t, "leaf-f", "f", 4);
    forgotten = forgotten.tombstone(ts(5));
    // Archived after being current: still part of the tree. Archived as an unused candidate:
    // never was, and never joins.
    let mut retired = leaf(&ns, &t, "leaf-r", "r", 5);
    retired.status = LeafStatus::Archived;
    let mut set_aside = leaf(&ns, &t, "leaf-x", "x", 6);
    set_aside.status = LeafStatus::Archived;
    set_aside.known = KnownSpan::NEVER;
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertLeaf(active.clone()))
                .with(Change::InsertLeaf(candidate))
                .with(Change::InsertLeaf(superseded.clone()))
                .with(Change::InsertLeaf(forgotten))
                .with(Change::InsertLeaf(retired.clone()))
                .with(Change::InsertLeaf(set_aside)),
        )
        .await
        .unwrap();
    let mut ids: Vec<String> = store.frontier(&ns, &t).await.unwrap().into_iter().map(|n| n.node.to_string()).collect();
    ids.sort();
    assert_eq!(ids, vec!["leaf-a", "leaf-r", "leaf-s"]);

    // Seal the three under a summary: they leave the frontier, the summary joins it.
    let summary =
        sealed_summary(&ns, &t, "sum-1", vec![active.node_id(), superseded.node_id(), retired.node_id()], "digest");
    let mut changes = ChangeSet::new().with(Change::InsertSummary(summary.clone()));
    for child in [&active, &superseded, &retired] {
        let mut sealed = child.clone();
        sealed.parent = Some(summary.id.clone());
        changes.push(Change::UpdateLeaf {
            expect: LeafExpect { status: child.status, parent: Some(None) },
            record: sealed,
        });
    }
    store.commit(changes.clone()).await.unwrap();
    let frontier = store.frontier(&ns, &t).await.unwrap();
    assert_eq!(frontier.len(), 1);
    assert_eq!((frontier[0].node.to_string(), frontier[0].height), ("sum-1".to_owned(), 1));
    assert_eq!(frontier[0].joined_at, summary.sealed_at);
    // Sealing the same children again loses the race.
    let mut again = changes;
    again.changes.remove(0);
    assert!(matches!(store.commit(again).await, Err(Error::Conflict { .. })));
}

/// Stale and purged sealed summaries are listed for re-sealing (retired ones are not); a
/// status precondition guards updates.
pub async fn summaries_awaiting_reseal_are_listed(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let s1 = sealed_summary(&ns, &t, "sum-1", vec![], "one");
    let s2 = sealed_summary(&ns, &t, "sum-2", vec![], "two");
    let s3 = sealed_summary(&ns, &t, "sum-3", vec![], "three");
    let s4 = sealed_summary(&ns, &t, "sum-4", vec![], "four");
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertSummary(s1.clone()))
                .with(Change::InsertSummary(s2.clone()))
                .with(Change::InsertSummary(s3.clone()))
                .with(Change::InsertSummary(s4.clone())),
        )
        .await
        .unwrap();
    let mut stale = s1.clone();
    stale.status = SummaryStatus::Stale;
    let expect_current = SummaryExpect { status: SummaryStatus::Current, parent: None };
    store
        .commit(
            ChangeSet::new()
                .with(Change::UpdateSummary { expect: expect_current.clone(), record: stale.clone() })
                .with(Change::UpdateSummary { expect: expect_current.clone(), record: s3.purged(ts(5)) })
                .with(Change::UpdateSummary { expect: expect_current.clone(), record: s4.retired(ts(5)) }),
        )
        .await
        .unwrap();
    let mut awaiting = store.summaries_awaiting_reseal(&ns, &t).await.unwrap();
    awaiting.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(awaiting, vec![stale.clone(), s3.purged(ts(5))]);
    let again =
        store.commit(ChangeSet::new().with(Change::UpdateSummary { expect: expect_current, record: stale })).await;
    assert!(matches!(again, Err(Error::Conflict { .. })), "got {again:?}");
    assert_eq!(store.summary(std::slice::from_ref(&ns), &s2.id).await.unwrap(), Some(s2));
}

/// Jobs: coalescing by key, leases, retries, dead letters and completion.
pub async fn jobs_claim_lease_retry_complete(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(job(&ns, "job-1", "seal:a", 0)))
                .with(Change::Enqueue(job(&ns, "job-2", "seal:a", 0))) // absorbed by job-1
                .with(Change::Enqueue(job(&ns, "job-3", "seal:b", 0)))
                .with(Change::Enqueue(job(&ns, "job-4", "seal:c", 50))),
        )
        .await
        .unwrap();
    let claim =
        |worker: &str, now, limit| JobClaim { worker: worker.into(), now: ts(now), lease_until: ts(now + 30), limit };
    let ids = |jobs: Vec<crate::store::Job>| jobs.into_iter().map(|j| j.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(store.claim_jobs(&claim("w1", 10, 1)).await.unwrap()), vec!["job-1"]);
    assert_eq!(
        ids(store.claim_jobs(&claim("w2", 10, 10)).await.unwrap()),
        vec!["job-3"],
        "job-1 is leased, job-4 not due"
    );
    // A new enqueue with the key of a claimed job is not absorbed: the work must run again.
    store.commit(ChangeSet::new().with(Change::Enqueue(job(&ns, "job-5", "seal:a", 0)))).await.unwrap();
    assert_eq!(ids(store.claim_jobs(&claim("w2", 11, 10)).await.unwrap()), vec!["job-5"]);
    // Leases expire.
    assert_eq!(ids(store.claim_jobs(&claim("w3", 45, 10)).await.unwrap()), vec!["job-1", "job-3", "job-5"]);
    let retry = Change::FailJob { id: job(&ns, "job-3", "", 0).id, error: "boom".into(), retry_at: Some(ts(100)) };
    let dead = Change::FailJob { id: job(&ns, "job-5", "", 0).id, error: "fatal".into(), retry_at: None };
    let done = Change::CompleteJob { id: job(&ns, "job-1", "", 0).id };
    store.commit(ChangeSet::new().with(retry).with(dead).with(done.clone())).await.unwrap();
    store.commit(ChangeSet::new().with(done)).await.expect("completing twice is harmless");
    assert_eq!(ids(store.claim_jobs(&claim("w4", 90, 10)).await.unwrap()), vec!["job-4"]);
    let retried = store.claim_jobs(&claim("w4", 110, 10)).await.unwrap();
    assert_eq!(ids(retried.clone()), vec!["job-3"], "job-4 is leased; job-5 is dead");
    assert_eq!((retried[0].attempts, retried[0].last_error.as_deref()), (1, Some("boom")));
    let counts = store.counts().await.unwrap();
    assert_eq!((counts.jobs_pending, counts.jobs_dead), (2, 1));
}

/// Pending jobs are listed by kind and namespace, newest first: claimed ones still count (their
/// work is not done), completed and dead ones do not, nor any outside the scope asked about.
pub async fn pending_jobs_are_listed_by_kind_and_scope(store: &dyn MetadataStore) {
    let (c1, c2) = (conversation("c1"), conversation("c2"));
    let index = |ns: &Namespace, id: &str, at: i64| Job {
        kind: JobKind::Index,
        created_at: ts(at),
        ..job(ns, id, &format!("index:{id}"), 0)
    };
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(index(&c1, "job-1", 1)))
                .with(Change::Enqueue(index(&c1, "job-2", 3)))
                .with(Change::Enqueue(index(&c2, "job-3", 2)))
                .with(Change::Enqueue(job(&c1, "job-4", "seal:a", 0))),
        )
        .await
        .unwrap();
    let pending = |kind, scope: Vec<Namespace>, limit| async move {
        let jobs = store.pending_jobs(kind, &scope, limit).await.unwrap();
        jobs.into_iter().map(|j| j.id.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(pending(JobKind::Index, vec![c1.clone()], 10).await, ["job-2", "job-1"]);
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 10).await, ["job-2", "job-3", "job-1"]);
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 2).await, ["job-2", "job-3"]);
    assert_eq!(pending(JobKind::Seal, vec![c1.clone()], 10).await, ["job-4"]);
    assert!(pending(JobKind::Index, vec![conversation("c3")], 10).await.is_empty());
    assert!(pending(JobKind::Index, Vec::new(), 10).await.is_empty());
    assert!(pending(JobKind::Index, vec![c1.clone()], 0).await.is_empty());
    let claim = JobClaim { worker: "w".into(), now: ts(4), lease_until: ts(60), limit: 10 };
    assert_eq!(store.claim_jobs(&claim).await.unwrap().len(), 4);
    assert_eq!(pending(JobKind::Index, vec![c1.clone()], 10).await, ["job-2", "job-1"], "claimed is not done");
    let done = Change::CompleteJob { id: index(&c1, "job-1", 0).id };
    let dead = Change::FailJob { id: index(&c1, "job-2", 0).id, error: "fatal".into(), retry_at: None };
    store.commit(ChangeSet::new().with(done).with(dead)).await.unwrap();
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 10).await, ["job-3"]);
}

/// After a leaf becomes its tombstone and a summary is purged, none of their words remain.
pub async fn tombstone_leaves_no_text(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let t = seed_tree(store, &ns, "topic").await;
    let needle = "zanzibar";
    let record = leaf_with_secret_words(&ns, &t, "leaf-1", needle);
    let summary = sealed_summary(&ns, &t, "sum-1", vec![record.node_id()], &format!("about {needle}"));
    store
        .commit(ChangeSet::new().with(Change::InsertLeaf(record.clone())).with(Change::InsertSummary(summary.clone())))
        .await
        .unwrap();
    assert!(store.contains_text(needle).await.unwrap(), "the needle is stored before forgetting");
    let expect = SummaryExpect { status: SummaryStatus::Current, parent: None };
    store
        .commit(
            ChangeSet::new()
                .with(Change::UpdateLeaf {
                    expect: LeafExpect::status(LeafStatus::Active),
                    record: record.tombstone(ts(9)),
                })
                .with(Change::UpdateSummary { expect, record: summary.purged(ts(9)) }),
        )
        .await
        .unwrap();
    assert!(!store.contains_text(needle).await.unwrap(), "forgotten words remain in the store");
    let tomb = store.leaf(&[ns], &record.id).await.unwrap().expect("the tombstone remains");
    assert_eq!(tomb.status, LeafStatus::Tombstone);
    assert_eq!(tomb.fingerprint, record.fingerprint, "hashes survive");
}

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

/// A tree whose every leaf is a tombstone and every summary purged dissolves whole — its row,
/// leaves, summaries and seal jobs — and a tree with anything live (or a pending purge) does
/// not, leaving no trace of the attempt.
pub async fn dissolving_a_tree_removes_every_row_of_it(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let gone = seed_tree(store, &ns, "quentin").await;
    let kept = seed_tree(store, &ns, "maren").await;
    let leaf_gone = leaf(&ns, &gone, "leaf-q1", "Quentin keeps bees", 1);
    let leaf_kept = leaf(&ns, &kept, "leaf-m1", "Maren plays the oboe", 2);
    let summary = sealed_summary(&ns, &gone, "sum-q1", vec![leaf_gone.node_id()], "about Quentin");
    let mut seal = job(&ns, "job-seal-q", "seal:c1:quentin", 0);
    seal.tree = Some(gone.clone());
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertLeaf(leaf_gone.clone()))
                .with(Change::InsertLeaf(leaf_kept.clone()))
                .with(Change::InsertSummary(summary.clone()))
                .with(Change::Enqueue(seal)),
        )
        .await
        .unwrap();
    let dissolve = |tree: &TreeId| Change::DissolveTree { namespace: ns.clone(), tree: tree.clone() };
    let refused = store.commit(ChangeSet::new().with(dissolve(&gone))).await.unwrap_err();
    assert!(refused.is_conflict(), "a live leaf keeps its tree: {refused}");
    let expect = SummaryExpect { status: SummaryStatus::Current, parent: None };
    store
        .commit(
            ChangeSet::new()
                .with(Change::UpdateLeaf {
                    expect: LeafExpect::status(LeafStatus::Active),
                    record: leaf_gone.tombstone(ts(5)),
                })
                .with(Change::UpdateSummary { expect, record: summary.purged(ts(5)) }),
        )
        .await
        .unwrap();
    let mut purge = job(&ns, "job-purge-q", "purge:leaf-q1", 0);
    purge.kind = crate::store::JobKind::Purge;
    purge.tree = Some(gone.clone());
    purge.nodes = vec![leaf_gone.node_id()];
    store.commit(ChangeSet::new().with(Change::Enqueue(purge.clone()))).await.unwrap();
    let refused = store.commit(ChangeSet::new().with(dissolve(&gone))).await.unwrap_err();
    assert!(refused.is_conflict(), "a pending purge keeps its tree: {refused}");
    store.commit(ChangeSet::new().with(Change::CompleteJob { id: purge.id })).await.unwrap();
    store.commit(ChangeSet::new().with(dissolve(&gone))).await.expect("an emptied tree dissolves");
    let scope = [ns.clone()];
    assert_eq!(store.tree(&ns, &gone).await.unwrap(), None);
    assert_eq!(store.leaf(&scope, &leaf_gone.id).await.unwrap(), None);
    assert_eq!(store.summary(&scope, &summary.id).await.unwrap(), None);
    assert!(store.tree_leaves(&ns, &gone, &TreeLeafQuery::default()).await.unwrap().is_empty());
    assert_eq!(store.counts().await.unwrap().jobs_pending, 0, "its seal job went with it");
    assert!(store.tree(&ns, &kept).await.unwrap().is_some(), "another tree is untouched");
    assert_eq!(store.leaf(&scope, &leaf_kept.id).await.unwrap(), Some(leaf_kept));
    store.commit(ChangeSet::new().with(dissolve(&gone))).await.expect("dissolving a tree that is gone is a no-op");
}

/// An entity goes with its last reference, and not before: a tree naming it, or a leaf that is
/// not a tombstone linking it, keeps it (and its words). `ExpectEntity` fails once it is gone.
pub async fn an_entity_goes_with_its_last_reference(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    let person = entity(&ns, "ent-quentin", "Quentin Blackwood");
    let t = tree_id("quentin-blackwood");
    let mut owned = tree(&ns, &t);
    owned.entity = Some(person.id.clone());
    let other = tree_id("topic");
    let mut linking = leaf(&ns, &other, "leaf-link", "met someone at the market", 1);
    linking.entities.secondary = vec![person.id.clone()];
    store
        .commit(
            ChangeSet::new()
                .with(Change::InsertEntity(person.clone()))
                .with(Change::EnsureTree(owned))
                .with(Change::EnsureTree(tree(&ns, &other)))
                .with(Change::InsertLeaf(linking.clone())),
        )
        .await
        .unwrap();
    let expect = || Change::ExpectEntity { namespace: ns.clone(), id: person.id.clone() };
    let delete = || Change::DeleteEntityIfUnused { namespace: ns.clone(), id: person.id.clone() };
    store.commit(ChangeSet::new().with(expect())).await.expect("it exists");
    store.commit(ChangeSet::new().with(delete())).await.unwrap();
    assert!(store.entity(&ns, &person.id).await.unwrap().is_some(), "its tree still names it");
    store.commit(ChangeSet::new().with(Change::DissolveTree { namespace: ns.clone(), tree: t })).await.unwrap();
    store.commit(ChangeSet::new().with(delete())).await.unwrap();
    assert!(store.entity(&ns, &person.id).await.unwrap().is_some(), "a live leaf still links it");
    store
        .commit(ChangeSet::new().with(Change::UpdateLeaf {
            expect: LeafExpect::status(LeafStatus::Active),
            record: linking.tombstone(ts(3)),
        }))
        .await
        .unwrap();
    store.commit(ChangeSet::new().with(delete())).await.unwrap();
    assert_eq!(store.entity(&ns, &person.id).await.unwrap(), None, "nothing refers to it now");
    let query = EntityQuery { terms: vec!["quentin".into()], limit: 5 };
    assert!(store.find_entities(&ns, &query).await.unwrap().is_empty(), "its words went with it");
    assert!(!store.contains_text("Blackwood").await.unwrap());
    let gone = store.commit(ChangeSet::new().with(expect())).await.unwrap_err();
    assert!(gone.is_conflict(), "{gone}");
    store.commit(ChangeSet::new().with(delete())).await.expect("deleting what is gone is a no-op");
}

/// Leases are listed with their worker; a lease is given back only by naming the worker that
/// holds it; a deferred job runs later with its attempts unchanged.
pub async fn leases_are_listed_released_and_deferred(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(job(&ns, "job-1", "seal:a", 0)))
                .with(Change::Enqueue(job(&ns, "job-2", "seal:b", 0))),
        )
        .await
        .unwrap();
    assert!(store.job_leases().await.unwrap().is_empty());
    let claim = JobClaim { worker: "host/1".into(), now: ts(10), lease_until: ts(310), limit: 10 };
    assert_eq!(store.claim_jobs(&claim).await.unwrap().len(), 2);
    let leases = store.job_leases().await.unwrap();
    assert_eq!(leases.len(), 2);
    assert!(leases.iter().all(|l| l.worker == "host/1" && l.until == ts(310)), "{leases:?}");
    let release = |worker: &str| Change::ReleaseLease { id: job(&ns, "job-1", "", 0).id, worker: worker.into() };
    store.commit(ChangeSet::new().with(release("host/2"))).await.unwrap();
    assert_eq!(store.job_leases().await.unwrap().len(), 2, "only the holder's name gives a lease back");
    store.commit(ChangeSet::new().with(release("host/1"))).await.unwrap();
    let again = JobClaim { worker: "host/3".into(), now: ts(11), lease_until: ts(311), limit: 10 };
    let claimed = store.claim_jobs(&again).await.unwrap();
    assert_eq!(claimed.iter().map(|j| j.id.to_string()).collect::<Vec<_>>(), vec!["job-1"], "claimable at once");
    store
        .commit(ChangeSet::new().with(Change::DeferJob { id: job(&ns, "job-1", "", 0).id, retry_at: ts(100) }))
        .await
        .unwrap();
    let early = JobClaim { worker: "host/3".into(), now: ts(50), lease_until: ts(350), limit: 10 };
    assert!(store.claim_jobs(&early).await.unwrap().is_empty(), "not before it is due");
    let due = JobClaim { worker: "host/3".into(), now: ts(100), lease_until: ts(400), limit: 10 };
    let deferred = store.claim_jobs(&due).await.unwrap();
    assert_eq!(deferred.len(), 1);
    assert_eq!(deferred[0].attempts, 0, "losing a race is not a failed attempt");
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
