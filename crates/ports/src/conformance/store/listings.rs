//! Checks of the [`MetadataStore`](crate::MetadataStore) contract: how listings are ordered,
//! bounded and scoped: trees and namespaces by name, leaves in the order written or by what they
//! are filed under, versions by lineage, entities by slug and shortlist.

use arbor_domain::id::SummaryId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::reconcile::{Claim, Filing};

use crate::conformance::fixtures::{conversation, entity, leaf, project, tree, tree_id, ts};
use crate::error::Error;
use crate::store::{Change, ChangeSet, EntityQuery, FiledQuery, LeafExpect, MetadataStore, WriteMark};

use super::{lid, seed_tree};

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
