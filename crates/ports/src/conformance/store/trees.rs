//! Checks of the [`MetadataStore`](crate::MetadataStore) contract: the tree's own rows: the root
//! swap, the frontier, summaries awaiting a reseal, tombstones without text, a dissolving tree and
//! an entity's last reference.

use arbor_domain::id::SummaryId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{SummaryStatus, TreeId};
use arbor_domain::time::KnownSpan;

use crate::conformance::fixtures::{
    conversation, entity, job, leaf, leaf_with_secret_words, sealed_summary, tree, tree_id, ts,
};
use crate::error::Error;
use crate::store::{Change, ChangeSet, EntityQuery, LeafExpect, MetadataStore, SummaryExpect, TreeLeafQuery};

use super::seed_tree;

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
