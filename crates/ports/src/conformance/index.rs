//! Checks of the [`SearchIndex`] contract.

use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::model::{Category, MemoryKind, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState, VisibilityFilter};

use super::fixtures::{Rng, conversation, leaf, project, scope, tree_id, ts};
use crate::index::{EmbedderId, Embedding, IndexDoc, SearchIndex, TermSelection, TextQuery, VectorQuery};

fn embedder(name: &str, dimensions: u32) -> EmbedderId {
    EmbedderId { name: name.to_owned(), dimensions }
}

fn unit(values: &[f32]) -> Vec<f32> {
    let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
    values.iter().map(|v| v / norm).collect()
}

fn doc(namespace: &Namespace, id: &str, text: &str, vector: Option<Vec<f32>>) -> IndexDoc {
    let t = tree_id("topic");
    let record = leaf(namespace, &t, id, text, 1);
    IndexDoc {
        id: NodeId::Leaf(record.id.clone()),
        facts: NodeFacts::of_leaf(&record),
        text: text.to_owned(),
        embedding: vector
            .map(|values| Embedding { embedder: embedder("test", values.len() as u32), values: unit(&values) }),
    }
}

fn chain_filter(context: TrustedContext) -> VisibilityFilter {
    let chain = ReadChain::resolve(&context, &ReadChainPolicy::default()).expect("chain resolves");
    VisibilityFilter::for_chain(&chain, ts(100))
}

fn conversation_filter() -> VisibilityFilter {
    chain_filter(TrustedContext::Conversation { conversation: scope("c1"), project: Some(scope("p1")), agent: None })
}

fn ids(hits: &[crate::index::Hit]) -> Vec<String> {
    hits.iter().map(|h| h.id.to_string()).collect()
}

fn text_query(text: &str) -> TextQuery {
    TextQuery { filter: conversation_filter(), text: text.to_owned(), limit: 10, terms: TermSelection::All }
}

fn skip_unless(index: &dyn SearchIndex, full_text: bool, vectors: bool) -> bool {
    let caps = index.capabilities();
    (full_text && !caps.full_text) || (vectors && !caps.vectors)
}

/// Text search finds documents sharing query words, and ranks documents matching more (and
/// rarer) query words higher.
pub async fn text_search_finds_and_ranks(index: &dyn SearchIndex) {
    if skip_unless(index, true, false) {
        return;
    }
    let ns = conversation("c1");
    index
        .upsert(vec![
            doc(&ns, "leaf-1", "Caroline joined the support group in May", None),
            doc(&ns, "leaf-2", "Melanie painted a sunrise over the lake", None),
            doc(&ns, "leaf-3", "The support group meets on Tuesdays", None),
            doc(&ns, "leaf-4", "Caroline researched adoption agencies", None),
        ])
        .await
        .unwrap();
    let hits = index.search_text(&text_query("Caroline support group")).await.unwrap();
    assert_eq!(hits.first().map(|h| h.id.to_string()).as_deref(), Some("leaf-1"), "best match first: {hits:?}");
    let found = ids(&hits);
    assert!(found.contains(&"leaf-3".to_owned()) && found.contains(&"leaf-4".to_owned()));
    assert!(!found.contains(&"leaf-2".to_owned()), "a document sharing no query word is not a hit");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "hits are ordered by score");
    assert!(index.search_text(&text_query("xylophone")).await.unwrap().is_empty());
    let one = TextQuery { limit: 1, ..text_query("Caroline support group") };
    assert_eq!(index.search_text(&one).await.unwrap().len(), 1);
}

/// `TermSelection::Rarest(n)` matches on the `n` terms the fewest documents hold, passing
/// over terms no document holds; `All` matches on every term.
pub async fn rarest_terms_select_what_is_matched(index: &dyn SearchIndex) {
    if skip_unless(index, true, false) {
        return;
    }
    let ns = conversation("c1");
    index
        .upsert(vec![
            doc(&ns, "leaf-1", "weekly status meeting notes", None),
            doc(&ns, "leaf-2", "weekly status meeting agenda", None),
            doc(&ns, "leaf-3", "weekly status report for the meeting about the harbor", None),
            doc(&ns, "leaf-4", "the lighthouse keeper retired", None),
        ])
        .await
        .unwrap();
    let query = |text: &str, terms| TextQuery { terms, ..text_query(text) };
    // "weekly" and "status" are in three documents, "meeting" in three, "harbor" in one.
    let all = index.search_text(&query("weekly status harbor", TermSelection::All)).await.unwrap();
    assert_eq!(all.len(), 3, "every term matches: {all:?}");
    let rarest = index.search_text(&query("weekly status harbor", TermSelection::Rarest(1))).await.unwrap();
    assert_eq!(ids(&rarest), ["leaf-3"], "only the rarest term matches");
    // A term no document holds is passed over, not chosen as the "rarest".
    let absent = index.search_text(&query("zeppelin lighthouse weekly", TermSelection::Rarest(1))).await.unwrap();
    assert_eq!(ids(&absent), ["leaf-4"]);
    let nothing = index.search_text(&query("zeppelin", TermSelection::Rarest(3))).await.unwrap();
    assert!(nothing.is_empty());
    assert!(index.search_text(&query("weekly", TermSelection::Rarest(0))).await.unwrap().is_empty());
}

/// Nothing outside the filter is ever returned, however well it matches.
pub async fn text_search_never_crosses_the_filter(index: &dyn SearchIndex) {
    if skip_unless(index, true, false) {
        return;
    }
    let mut hidden = doc(&conversation("c1"), "leaf-candidate", "launch codes for the rocket", None);
    hidden.facts.state = NodeState::Hidden;
    index
        .upsert(vec![
            doc(&conversation("c2"), "leaf-other-conversation", "launch codes for the rocket", None),
            doc(&project("p2"), "leaf-other-project", "launch codes for the rocket", None),
            doc(&Namespace::run(scope("r1")), "leaf-run", "launch codes for the rocket", None),
            hidden,
            doc(&project("p1"), "leaf-visible", "the rocket launch is on Friday", None),
        ])
        .await
        .unwrap();
    let hits = index.search_text(&text_query("launch codes rocket")).await.unwrap();
    assert_eq!(ids(&hits), vec!["leaf-visible"]);
}

/// Vector search returns the most similar documents first.
pub async fn vector_search_ranks_nearest_first(index: &dyn SearchIndex) {
    if skip_unless(index, false, true) {
        return;
    }
    let ns = conversation("c1");
    index
        .upsert(vec![
            doc(&ns, "leaf-east", "east", Some(vec![1.0, 0.0, 0.0, 0.0])),
            doc(&ns, "leaf-north", "north", Some(vec![0.0, 1.0, 0.0, 0.0])),
            doc(&ns, "leaf-northeast", "northeast", Some(vec![0.7, 0.7, 0.0, 0.0])),
            doc(&ns, "leaf-none", "no vector", None),
        ])
        .await
        .unwrap();
    let query = VectorQuery {
        filter: conversation_filter(),
        embedding: Embedding { embedder: embedder("test", 4), values: unit(&[0.9, 0.3, 0.0, 0.0]) },
        limit: 2,
    };
    let hits = index.search_vector(&query).await.unwrap();
    assert_eq!(ids(&hits), vec!["leaf-east", "leaf-northeast"]);
    assert!(hits[0].score > hits[1].score);
}

/// Vectors from another embedder (or dimension) are never compared.
pub async fn vector_search_never_mixes_embedders(index: &dyn SearchIndex) {
    if skip_unless(index, false, true) {
        return;
    }
    let ns = conversation("c1");
    let mut foreign = doc(&ns, "leaf-foreign", "foreign", None);
    foreign.embedding = Some(Embedding { embedder: embedder("other", 4), values: unit(&[1.0, 0.0, 0.0, 0.0]) });
    let mut wider = doc(&ns, "leaf-wider", "wider", None);
    wider.embedding =
        Some(Embedding { embedder: embedder("test", 8), values: unit(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]) });
    index.upsert(vec![foreign, wider, doc(&ns, "leaf-same", "same", Some(vec![0.0, 1.0, 0.0, 0.0]))]).await.unwrap();
    let query = VectorQuery {
        filter: conversation_filter(),
        embedding: Embedding { embedder: embedder("test", 4), values: unit(&[1.0, 0.0, 0.0, 0.0]) },
        limit: 10,
    };
    assert_eq!(ids(&index.search_vector(&query).await.unwrap()), vec!["leaf-same"]);
}

/// Upserting an id replaces its text, facts and vector.
pub async fn upsert_replaces_the_document(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    index.upsert(vec![doc(&ns, "leaf-1", "the meeting is on Monday", Some(vec![1.0, 0.0, 0.0, 0.0]))]).await.unwrap();
    index
        .upsert(vec![doc(&ns, "leaf-1", "the meeting moved to Thursday", Some(vec![0.0, 1.0, 0.0, 0.0]))])
        .await
        .unwrap();
    assert_eq!(index.count().await.unwrap(), 1);
    if index.capabilities().full_text {
        assert!(index.search_text(&text_query("monday")).await.unwrap().is_empty());
        assert_eq!(ids(&index.search_text(&text_query("thursday")).await.unwrap()), vec!["leaf-1"]);
    }
    if index.capabilities().vectors {
        let query = VectorQuery {
            filter: conversation_filter(),
            embedding: Embedding { embedder: embedder("test", 4), values: unit(&[0.0, 1.0, 0.0, 0.0]) },
            limit: 1,
        };
        let hits = index.search_vector(&query).await.unwrap();
        assert!(hits[0].score > 0.99, "the new vector replaced the old: {hits:?}");
    }
}

/// **Fresh**: every search of a read ([`one_read`](crate::one_read)) sees what was written
/// before the read began, the text and the vector search alike, and the next read sees what
/// was written after it.
pub async fn a_read_sees_what_was_written_before_it(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    let vector_query = |values: &[f32]| VectorQuery {
        filter: conversation_filter(),
        embedding: Embedding { embedder: embedder("test", 4), values: unit(values) },
        limit: 5,
    };
    let search_both = |text: &'static str, values: [f32; 4]| async move {
        let mut found = (Vec::new(), Vec::new());
        if index.capabilities().full_text {
            found.0 = ids(&index.search_text(&text_query(text)).await.unwrap());
        }
        if index.capabilities().vectors {
            found.1 = ids(&index.search_vector(&vector_query(&values)).await.unwrap());
        }
        found
    };
    index.upsert(vec![doc(&ns, "leaf-1", "the walrus sings at dawn", Some(vec![1.0, 0.0, 0.0, 0.0]))]).await.unwrap();
    let (text, vector) = crate::one_read(search_both("walrus", [1.0, 0.0, 0.0, 0.0])).await;
    if index.capabilities().full_text {
        assert_eq!(text, vec!["leaf-1"]);
    }
    if index.capabilities().vectors {
        assert_eq!(vector.first().map(String::as_str), Some("leaf-1"));
    }
    index.upsert(vec![doc(&ns, "leaf-2", "the heron waits at dusk", Some(vec![0.0, 1.0, 0.0, 0.0]))]).await.unwrap();
    let (text, vector) = crate::one_read(search_both("heron", [0.0, 1.0, 0.0, 0.0])).await;
    if index.capabilities().full_text {
        assert_eq!(text, vec!["leaf-2"], "the next read sees the later write");
    }
    if index.capabilities().vectors {
        assert_eq!(vector.first().map(String::as_str), Some("leaf-2"), "the next read sees the later write");
    }
}

/// `insert_missing` adds the ids the index does not hold and leaves the others exactly as they
/// were — text and vector — even when it brings the same id without a vector.
pub async fn insert_missing_keeps_what_is_held(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    index.upsert(vec![doc(&ns, "leaf-1", "the meeting is on Monday", Some(vec![1.0, 0.0, 0.0, 0.0]))]).await.unwrap();
    index
        .insert_missing(vec![
            doc(&ns, "leaf-1", "the meeting moved to Thursday", None),
            doc(&ns, "leaf-2", "the walrus sings at dawn", None),
        ])
        .await
        .unwrap();
    assert_eq!(index.count().await.unwrap(), 2);
    if index.capabilities().full_text {
        assert_eq!(ids(&index.search_text(&text_query("monday")).await.unwrap()), vec!["leaf-1"]);
        assert!(index.search_text(&text_query("thursday")).await.unwrap().is_empty());
        assert_eq!(ids(&index.search_text(&text_query("walrus")).await.unwrap()), vec!["leaf-2"]);
    }
    if index.capabilities().vectors {
        let query = VectorQuery {
            filter: conversation_filter(),
            embedding: Embedding { embedder: embedder("test", 4), values: unit(&[1.0, 0.0, 0.0, 0.0]) },
            limit: 5,
        };
        assert_eq!(ids(&index.search_vector(&query).await.unwrap()), vec!["leaf-1"], "the held vector stays");
    }
}

/// Changing a document's facts changes what the filter lets through; unknown ids are ignored.
pub async fn set_facts_changes_visibility(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    let d = doc(&ns, "leaf-1", "quarterly budget approved", Some(vec![1.0, 0.0, 0.0, 0.0]));
    index.upsert(vec![d.clone()]).await.unwrap();
    let mut superseded = d.facts.clone();
    superseded.state = NodeState::Superseded;
    let unknown = NodeId::Leaf(LeafId::parse("leaf-unknown").unwrap());
    index.set_facts(vec![(d.id.clone(), superseded), (unknown, d.facts.clone())]).await.unwrap();
    assert_eq!(index.count().await.unwrap(), 1);
    let query = VectorQuery {
        filter: conversation_filter(),
        embedding: Embedding { embedder: embedder("test", 4), values: unit(&[1.0, 0.0, 0.0, 0.0]) },
        limit: 5,
    };
    if index.capabilities().full_text {
        assert!(index.search_text(&text_query("budget")).await.unwrap().is_empty());
    }
    if index.capabilities().vectors {
        assert!(index.search_vector(&query).await.unwrap().is_empty());
        // History on request brings it back.
        let mut past = query.clone();
        past.filter.as_of = Some(ts(50));
        assert_eq!(ids(&index.search_vector(&past).await.unwrap()), vec!["leaf-1"]);
    }
}

/// Removed documents are gone: not searchable, and their text is nowhere in the index.
pub async fn remove_leaves_no_text(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    let needle = "quetzalcoatl";
    index
        .upsert(vec![
            doc(&ns, "leaf-1", &format!("my {needle} password hint"), Some(vec![1.0, 0.0, 0.0, 0.0])),
            doc(&ns, "leaf-2", "unrelated but kept", Some(vec![0.0, 1.0, 0.0, 0.0])),
        ])
        .await
        .unwrap();
    assert!(index.contains_text(needle).await.unwrap());
    let gone = NodeId::Leaf(LeafId::parse("leaf-1").unwrap());
    index.remove(std::slice::from_ref(&gone)).await.unwrap();
    index.remove(&[gone]).await.expect("removing twice is harmless");
    assert!(!index.contains_text(needle).await.unwrap(), "removed text is still in the index");
    assert_eq!(index.count().await.unwrap(), 1);
    if index.capabilities().full_text {
        assert!(index.search_text(&text_query(needle)).await.unwrap().is_empty());
    }
    if index.capabilities().vectors {
        let query = VectorQuery {
            filter: conversation_filter(),
            embedding: Embedding { embedder: embedder("test", 4), values: unit(&[1.0, 0.0, 0.0, 0.0]) },
            limit: 5,
        };
        assert_eq!(ids(&index.search_vector(&query).await.unwrap()), vec!["leaf-2"]);
    }
}

/// On generated documents and filters, search returns exactly the documents the domain's
/// visibility rule admits (among those the query matches).
pub async fn filter_pushdown_matches_domain(index: &dyn SearchIndex) {
    let mut rng = Rng::new(0x1DE7_2026);
    let namespaces =
        vec![conversation("c1"), conversation("c2"), project("p1"), Namespace::global(), Namespace::run(scope("r1"))];
    let trees = [tree_id("one"), TreeId::uncategorized(Category::Interaction)];
    let states = [
        NodeState::Current,
        NodeState::Current,
        NodeState::Superseded,
        NodeState::Archived,
        NodeState::Hidden,
        NodeState::Forgotten,
    ];
    let mut docs = Vec::new();
    for i in 0..120 {
        let ns = rng.pick(&namespaces).clone();
        let at = rng.below(100) as i64;
        let node = if rng.chance(20) { NodeKind::Summary } else { NodeKind::Leaf };
        let id = match node {
            NodeKind::Leaf => NodeId::Leaf(LeafId::parse(&format!("leaf-{i:03}")).unwrap()),
            NodeKind::Summary => NodeId::Summary(SummaryId::parse(&format!("sum-{i:03}")).unwrap()),
        };
        let state = *rng.pick(&states);
        let facts = NodeFacts {
            node,
            namespace: ns,
            category: Category::Interaction,
            tree_id: rng.pick(&trees).clone(),
            kind: (node == NodeKind::Leaf).then(|| *rng.pick(&MemoryKind::ALL)),
            state,
            validity: match rng.below(3) {
                0 => Validity::ALWAYS,
                1 => Validity::new(Some(ts(at)), Some(ts(at + 1 + rng.below(40) as i64))).unwrap(),
                _ => Validity::starting(ts(rng.below(100) as i64)),
            },
            known: match state {
                NodeState::Hidden => KnownSpan::NEVER,
                NodeState::Current => KnownSpan::from(ts(at)),
                _ => KnownSpan::from(ts(at)).closed_at(ts(at + 1 + rng.below(50) as i64)),
            },
            expires_at: rng.chance(15).then(|| ts(rng.below(150) as i64)),
            sensitivity: *rng.pick(&[Sensitivity::Normal, Sensitivity::Sensitive, Sensitivity::Restricted]),
            time_start: ts(at),
            time_end: ts(at + rng.below(10) as i64),
        };
        let values: Vec<f32> = (0..4).map(|_| rng.below(100) as f32 / 100.0 + 0.01).collect();
        docs.push(IndexDoc {
            id,
            facts,
            text: format!("shared word and item{i}"),
            embedding: Some(Embedding { embedder: embedder("test", 4), values: unit(&values) }),
        });
    }
    index.upsert(docs.clone()).await.unwrap();
    let contexts = vec![
        TrustedContext::Conversation { conversation: scope("c1"), project: Some(scope("p1")), agent: None },
        TrustedContext::AutomationRun {
            run: scope("r1"),
            automation: scope("a1"),
            conversation: Some(scope("c2")),
            project: None,
        },
        TrustedContext::ExperimentRun {
            run: scope("r1"),
            experiment: scope("e1"),
            project: Some(scope("p1")),
            frozen_at: ts(50),
        },
    ];
    for round in 0..40 {
        let mut filter = chain_filter(rng.pick(&contexts).clone());
        filter.now = ts(50 + rng.below(80) as i64);
        if rng.chance(40) {
            filter.as_of = Some(ts(rng.below(120) as i64));
        }
        filter.include_restricted = rng.chance(30);
        if rng.chance(20) {
            filter.node_kinds = vec![*rng.pick(&[NodeKind::Leaf, NodeKind::Summary])];
        }
        if rng.chance(20) {
            filter.kinds = vec![*rng.pick(&MemoryKind::ALL)];
        }
        if rng.chance(20) {
            filter.tree = Some(rng.pick(&trees).clone());
        }
        if rng.chance(20) {
            let start = rng.below(80) as i64;
            filter.time_range = Some((Some(ts(start)), Some(ts(start + 25))));
        }
        // Each hit also names its document's namespace.
        let mut expected: Vec<(String, String)> = docs
            .iter()
            .filter(|d| filter.admits(&d.facts))
            .map(|d| (d.id.to_string(), d.facts.namespace.to_string()))
            .collect();
        expected.sort();
        let placed =
            |hits: Vec<crate::index::Hit>| hits.iter().map(|h| (h.id.to_string(), h.namespace.to_string())).collect();
        if index.capabilities().full_text {
            let query = TextQuery {
                filter: filter.clone(),
                text: "shared word".into(),
                limit: 1_000,
                terms: TermSelection::All,
            };
            let mut got: Vec<(String, String)> = placed(index.search_text(&query).await.unwrap());
            got.sort();
            assert_eq!(got, expected, "round {round}: text search and domain disagree for {filter:?}");
        }
        if index.capabilities().vectors {
            let query = VectorQuery {
                filter: filter.clone(),
                embedding: Embedding { embedder: embedder("test", 4), values: unit(&[0.5, 0.5, 0.5, 0.5]) },
                limit: 1_000,
            };
            let mut got: Vec<(String, String)> = placed(index.search_vector(&query).await.unwrap());
            got.sort();
            assert_eq!(got, expected, "round {round}: vector search and domain disagree for {filter:?}");
        }
    }
}

/// Vectors that are mostly zeros, as a feature-hashing embedder writes them (and which an
/// index may keep in a form of its own), rank as an exhaustive search over the chain's current
/// documents ranks them, through replacements, removals and state changes.
pub async fn sparse_vectors_rank_as_exhaustive_search(index: &dyn SearchIndex) {
    if skip_unless(index, false, true) {
        return;
    }
    const DIMENSIONS: usize = 64;
    let mut rng = Rng::new(0x005B_A25E);
    let namespaces = [conversation("c1"), conversation("c2"), project("p1"), conversation("elsewhere")];
    let vector = |rng: &mut Rng, nonzero: u64| -> Vec<f32> {
        let mut values = vec![0.0f32; DIMENSIONS];
        for _ in 0..nonzero {
            values[rng.below(DIMENSIONS as u64) as usize] = rng.below(200) as f32 - 100.0;
        }
        values[rng.below(DIMENSIONS as u64) as usize] = 100.0;
        values
    };
    let mut docs: Vec<IndexDoc> = Vec::new();
    for i in 0..300 {
        // Most with a few nonzero components, some dense (as summaries of long text are).
        let nonzero = if rng.chance(10) { DIMENSIONS as u64 * 2 } else { 2 + rng.below(8) };
        let values = vector(&mut rng, nonzero);
        docs.push(doc(rng.pick(&namespaces), &format!("leaf-{i:03}"), &format!("note {i}"), Some(values)));
    }
    index.upsert(docs.clone()).await.unwrap();
    // Replace some vectors, remove some documents, supersede others.
    for i in (0..300).step_by(11) {
        let values = vector(&mut rng, 3);
        docs[i].embedding = Some(Embedding { embedder: embedder("test", DIMENSIONS as u32), values: unit(&values) });
        index.upsert(vec![docs[i].clone()]).await.unwrap();
    }
    let removed: Vec<NodeId> = (5..300).step_by(13).map(|i| docs[i].id.clone()).collect();
    index.remove(&removed).await.unwrap();
    docs.retain(|d| !removed.contains(&d.id));
    for d in docs.iter_mut().skip(2).step_by(17) {
        d.facts.state = NodeState::Superseded;
        index.set_facts(vec![(d.id.clone(), d.facts.clone())]).await.unwrap();
    }
    let filter = conversation_filter();
    for round in 0..12 {
        let nonzero = if round % 4 == 3 { DIMENSIONS as u64 } else { 1 + rng.below(4) };
        let query = unit(&vector(&mut rng, nonzero));
        let mut expected: Vec<f32> = docs
            .iter()
            .filter(|d| filter.admits(&d.facts))
            .map(|d| d.embedding.as_ref().unwrap().values.iter().zip(&query).map(|(a, b)| a * b).sum())
            .collect();
        expected.sort_by(|a, b| b.total_cmp(a));
        expected.truncate(10);
        let hits = index
            .search_vector(&VectorQuery {
                filter: filter.clone(),
                embedding: Embedding { embedder: embedder("test", DIMENSIONS as u32), values: query.clone() },
                limit: 10,
            })
            .await
            .unwrap();
        for hit in &hits {
            let d = docs.iter().find(|d| d.id == hit.id);
            assert!(d.is_some_and(|d| filter.admits(&d.facts)), "round {round}: {} is not visible", hit.id);
            assert_eq!(
                d.map(|d| &d.facts.namespace),
                Some(&hit.namespace),
                "round {round}: {} placed elsewhere",
                hit.id
            );
        }
        let got: Vec<f32> = hits.iter().map(|h| h.score).collect();
        assert_eq!(got.len(), expected.len(), "round {round}: {got:?} against {expected:?}");
        for (got, expected) in got.iter().zip(&expected) {
            assert!((got - expected).abs() < 1e-4, "round {round}: scores {got} against {expected}");
        }
    }
}

/// Optimizing folds many small writes into the index's search structures and changes no
/// answer; neither do the passes an index runs by itself after many writes (80 upserts and
/// some fact changes, one at a time, are enough to set them off).
pub async fn optimize_changes_no_answer(index: &dyn SearchIndex) {
    let words = ["harbour", "ledger", "orchid", "granite", "lantern", "meadow"];
    let namespaces = [conversation("c1"), conversation("c2"), project("p1")];
    let mut rng = Rng::new(0x0971);
    let mut docs = Vec::new();
    for i in 0..80 {
        let text = format!("{} {} note {i}", rng.pick(&words), rng.pick(&words));
        let vector: Vec<f32> = (0..4).map(|_| rng.below(100) as f32 + 1.0).collect();
        let d = doc(rng.pick(&namespaces), &format!("leaf-{i}"), &text, Some(vector));
        index.upsert(vec![d.clone()]).await.unwrap();
        docs.push(d);
    }
    for d in docs.iter().step_by(7) {
        let mut superseded = d.facts.clone();
        superseded.state = NodeState::Superseded;
        index.set_facts(vec![(d.id.clone(), superseded)]).await.unwrap();
    }
    let mut queries = Vec::new();
    for word in words {
        queries.push(TextQuery { limit: 100, ..text_query(word) });
    }
    let vector_query = |values: &[f32]| VectorQuery {
        filter: conversation_filter(),
        embedding: Embedding { embedder: embedder("test", 4), values: unit(values) },
        limit: 100,
    };
    let vectors = [vector_query(&[1.0, 0.0, 0.0, 0.0]), vector_query(&[3.0, 1.0, 4.0, 1.0])];
    let answers = || async {
        let mut answers: Vec<Vec<String>> = Vec::new();
        if index.capabilities().full_text {
            for query in &queries {
                let mut found = ids(&index.search_text(query).await.unwrap());
                found.sort();
                answers.push(found);
            }
        }
        if index.capabilities().vectors {
            for query in &vectors {
                answers.push(ids(&index.search_vector(query).await.unwrap()));
            }
        }
        answers
    };
    let before = answers().await;
    // What was answered was right: the chain's current documents only.
    let admitted =
        |d: &IndexDoc| conversation_filter().admits(&d.facts) && !docs.iter().step_by(7).any(|s| s.id == d.id);
    if index.capabilities().full_text {
        let mut expected: Vec<String> =
            docs.iter().filter(|d| admitted(d) && d.text.contains(words[0])).map(|d| d.id.to_string()).collect();
        expected.sort();
        assert_eq!(before[0], expected, "text search before optimizing");
    }
    index.optimize().await.unwrap();
    assert_eq!(answers().await, before, "optimizing changed an answer");
    assert_eq!(index.count().await.unwrap(), docs.len());
}

/// Clearing drops everything.
pub async fn clear_empties_the_index(index: &dyn SearchIndex) {
    let ns = conversation("c1");
    index.upsert(vec![doc(&ns, "leaf-1", "alpha", None), doc(&ns, "leaf-2", "beta", None)]).await.unwrap();
    assert_eq!(index.count().await.unwrap(), 2);
    index.clear().await.unwrap();
    assert_eq!(index.count().await.unwrap(), 0);
    assert!(!index.contains_text("alpha").await.unwrap());
}
