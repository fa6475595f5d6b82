//! The search-index conformance suite against the LanceDB adapter, each check on a fresh
//! dataset directory; and the proof that a removed document's words leave every file.

use std::sync::Arc;

use arbor_adapters_lance::LanceIndex;
use arbor_ports::SearchIndex;
use arbor_ports::conformance::Fixture;

async fn index() -> (LanceIndex, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let index = LanceIndex::open(&dir.path().join("lance")).await.expect("the dataset opens");
    (index, dir)
}

mod index {
    use super::*;
    arbor_ports::search_index_conformance!(|| async {
        let (index, dir) = index().await;
        Fixture::with_guard(Arc::new(index) as Arc<dyn SearchIndex>, dir)
    });
}

mod forget {
    use super::*;
    use arbor_domain::id::{LeafId, NodeId};
    use arbor_domain::model::{Category, TreeId};
    use arbor_domain::namespace::Namespace;
    use arbor_domain::sensitivity::Sensitivity;
    use arbor_domain::time::{KnownSpan, Timestamp, Validity};
    use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState};
    use arbor_ports::{EmbedderId, Embedding, IndexDoc};

    fn doc(id: &str, text: &str, vector: [f32; 3]) -> IndexDoc {
        let at = Timestamp::from_second(1_000).unwrap();
        IndexDoc {
            id: NodeId::Leaf(LeafId::parse(id).unwrap()),
            facts: NodeFacts {
                node: NodeKind::Leaf,
                namespace: Namespace::global(),
                category: Category::Interaction,
                tree_id: TreeId::uncategorized(Category::Interaction),
                kind: None,
                state: NodeState::Current,
                validity: Validity::ALWAYS,
                known: KnownSpan::from(at),
                expires_at: None,
                sensitivity: Sensitivity::Normal,
                time_start: at,
                time_end: at,
            },
            text: text.to_owned(),
            embedding: Some(Embedding {
                embedder: EmbedderId { name: "test".into(), dimensions: 3 },
                values: vector.to_vec(),
            }),
        }
    }

    /// After `remove`, no file under the dataset directory holds the removed words — not the
    /// data files, not an older version, not the inverted index — while the other document's
    /// words are still there (so the search is not vacuous).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn removed_words_leave_every_file_of_the_dataset() {
        let (index, _dir) = index().await;
        let secret = "quetzalcoatlus-nightshade";
        index
            .upsert(vec![
                doc("leaf-1", &format!("the vault word is {secret}"), [1.0, 0.0, 0.0]),
                doc("leaf-2", "the harbour opens at dawn", [0.0, 1.0, 0.0]),
            ])
            .await
            .unwrap();
        // Versions pile up: the same document rewritten, its facts changed.
        index.upsert(vec![doc("leaf-1", &format!("the vault word is still {secret}"), [0.9, 0.1, 0.0])]).await.unwrap();
        let mut facts = doc("leaf-1", "", [0.0; 3]).facts;
        facts.sensitivity = Sensitivity::Sensitive;
        index.set_facts(vec![(NodeId::Leaf(LeafId::parse("leaf-1").unwrap()), facts)]).await.unwrap();
        assert!(index.files_contain(secret).unwrap(), "the words are on disk before the removal");

        index.remove(&[NodeId::Leaf(LeafId::parse("leaf-1").unwrap())]).await.unwrap();
        assert!(!index.files_contain(secret).unwrap(), "a removed document's words are still on disk");
        assert!(!index.files_contain("quetzalcoatlus").unwrap());
        assert!(index.files_contain("harbour").unwrap(), "the kept document is still on disk");
        assert_eq!(index.count().await.unwrap(), 1);
    }

    /// Removing the only document leaves no index file behind that could hold its words.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn removing_the_last_document_leaves_no_words_either() {
        let (index, _dir) = index().await;
        let secret = "archaeopteryx-moonwort";
        index.upsert(vec![doc("leaf-1", &format!("the only note says {secret}"), [1.0, 0.0, 0.0])]).await.unwrap();
        assert!(index.files_contain(secret).unwrap(), "the words are on disk before the removal");
        index.remove(&[NodeId::Leaf(LeafId::parse("leaf-1").unwrap())]).await.unwrap();
        assert!(!index.files_contain(secret).unwrap(), "the last document's words are still on disk");
        assert!(!index.contains_text("archaeopteryx").await.unwrap());
        assert_eq!(index.count().await.unwrap(), 0);
        // And the emptied index takes documents again.
        index.upsert(vec![doc("leaf-2", "a fresh start", [0.0, 1.0, 0.0])]).await.unwrap();
        assert_eq!(index.count().await.unwrap(), 1);
    }
}

mod approximate {
    use super::*;
    use arbor_domain::id::NodeId;
    use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
    use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
    use arbor_ports::conformance::fixtures::{Rng, conversation, leaf, scope, tree_id, ts};
    use arbor_ports::{EmbedderId, Embedding, IndexDoc, VectorQuery};

    const DIMENSIONS: u32 = 32;

    pub(super) fn embedder() -> EmbedderId {
        EmbedderId { name: "test".into(), dimensions: DIMENSIONS }
    }

    fn unit(values: Vec<f32>) -> Vec<f32> {
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        values.into_iter().map(|v| v / norm).collect()
    }

    pub(super) fn doc(conversation_id: &str, id: &str, rng: &mut Rng) -> IndexDoc {
        let record = leaf(&conversation(conversation_id), &tree_id("topic"), id, "a note", 1);
        let values = unit((0..DIMENSIONS).map(|_| rng.below(1000) as f32 - 500.0).collect());
        IndexDoc {
            id: NodeId::Leaf(record.id.clone()),
            facts: NodeFacts::of_leaf(&record),
            text: format!("note {id}"),
            embedding: Some(Embedding { embedder: embedder(), values }),
        }
    }

    pub(super) fn nearest_to(doc: &IndexDoc, limit: usize) -> VectorQuery {
        let context = TrustedContext::Conversation { conversation: scope("c1"), project: None, agent: None };
        let chain = ReadChain::resolve(&context, &ReadChainPolicy::default()).expect("chain resolves");
        VectorQuery {
            filter: VisibilityFilter::for_chain(&chain, ts(100)),
            embedding: doc.embedding.clone().expect("every doc here has a vector"),
            limit,
        }
    }

    /// Past its threshold a vector table gets an IVF-PQ index; searches through it still
    /// find a document's own vector first with its exact score, never cross the filter, and
    /// still see rows written after the index was trained.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn approximate_search_keeps_the_filter_and_exact_scores() {
        let (index, _dir) = index().await;
        let index = index.with_ann_min_rows(512);
        let mut rng = Rng::new(0xA22);
        let mine: Vec<IndexDoc> = (0..400).map(|i| doc("c1", &format!("leaf-a{i}"), &mut rng)).collect();
        let others: Vec<IndexDoc> = (0..400).map(|i| doc("c2", &format!("leaf-b{i}"), &mut rng)).collect();
        index.upsert(mine.iter().chain(&others).cloned().collect()).await.unwrap();
        assert!(!index.has_ann_index(&embedder()).await.unwrap());
        index.optimize().await.unwrap();
        assert!(index.has_ann_index(&embedder()).await.unwrap(), "800 rows are past the threshold of 512");

        for wanted in mine.iter().step_by(40) {
            let hits = index.search_vector(&nearest_to(wanted, 10)).await.unwrap();
            assert_eq!(hits.first().map(|h| &h.id), Some(&wanted.id), "its own vector is nearest");
            assert!(hits[0].score > 0.999, "re-ranked by exact distance: {}", hits[0].score);
            let ours: Vec<&NodeId> = mine.iter().map(|d| &d.id).collect();
            assert!(hits.iter().all(|h| ours.contains(&&h.id)), "a hit from outside the chain: {hits:?}");
        }
        for outside in others.iter().step_by(40) {
            let hits = index.search_vector(&nearest_to(outside, 10)).await.unwrap();
            assert!(hits.iter().all(|h| h.id != outside.id), "the filter was crossed");
            assert_eq!(hits.len(), 10, "the chain's own documents still answer");
        }
        // Written after training: searched exactly until the next pass folds it in.
        let late = doc("c1", "leaf-late", &mut rng);
        index.upsert(vec![late.clone()]).await.unwrap();
        let hits = index.search_vector(&nearest_to(&late, 5)).await.unwrap();
        assert_eq!(hits.first().map(|h| &h.id), Some(&late.id));
        index.optimize().await.unwrap();
        let hits = index.search_vector(&nearest_to(&late, 5)).await.unwrap();
        assert_eq!(hits.first().map(|h| &h.id), Some(&late.id));
    }
}

mod shared_directory {
    use super::approximate::{doc, nearest_to};
    use super::*;
    use arbor_domain::id::NodeId;
    use arbor_ports::conformance::fixtures::Rng;
    use arbor_ports::{TermSelection, TextQuery};

    fn ids(hits: Vec<arbor_ports::Hit>) -> Vec<NodeId> {
        hits.into_iter().map(|h| h.id).collect()
    }

    /// Two indexes on one directory, as two processes have: the reader keeps its table
    /// handles open between searches, and still answers with what the writer committed
    /// since, including after the writer emptied the index (dropping its tables) and wrote
    /// anew. A kept handle never answers from a version the writer replaced.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reader_sees_the_other_writers_changes_through_its_kept_handles() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("lance");
        let writer = LanceIndex::open(&path).await.unwrap();
        let reader = LanceIndex::open(&path).await.unwrap();
        let mut rng = Rng::new(0x5EE);

        let first = doc("c1", "leaf-1", &mut rng);
        writer.upsert(vec![first.clone()]).await.unwrap();
        assert_eq!(ids(reader.search_vector(&nearest_to(&first, 5)).await.unwrap()), std::slice::from_ref(&first.id));
        assert_eq!(reader.count().await.unwrap(), 1);

        let second = doc("c1", "leaf-2", &mut rng);
        writer.upsert(vec![second.clone()]).await.unwrap();
        let hits = ids(reader.search_vector(&nearest_to(&second, 5)).await.unwrap());
        assert_eq!(hits.first(), Some(&second.id), "the newer write is seen: {hits:?}");
        assert_eq!(hits.len(), 2);
        assert_eq!(reader.count().await.unwrap(), 2);

        writer.clear().await.unwrap();
        assert_eq!(reader.count().await.unwrap(), 0, "the emptied index is seen empty");
        assert!(reader.search_vector(&nearest_to(&second, 5)).await.unwrap().is_empty());

        let third = doc("c1", "leaf-3", &mut rng);
        writer.upsert(vec![third.clone()]).await.unwrap();
        assert_eq!(ids(reader.search_vector(&nearest_to(&third, 5)).await.unwrap()), std::slice::from_ref(&third.id));

        // Emptied and written again with no search of the reader's in between: the kept
        // handle describes a dataset that was dropped and made anew, at a lower version.
        writer.clear().await.unwrap();
        let fourth = doc("c1", "leaf-4", &mut rng);
        writer.upsert(vec![fourth.clone()]).await.unwrap();
        assert_eq!(ids(reader.search_vector(&nearest_to(&fourth, 5)).await.unwrap()), std::slice::from_ref(&fourth.id));
        assert_eq!(reader.count().await.unwrap(), 1);
        writer.clear().await.unwrap();
        let third = doc("c1", "leaf-3", &mut rng);
        writer.upsert(vec![third.clone()]).await.unwrap();
        let words = TextQuery {
            filter: nearest_to(&third, 5).filter,
            text: "note".to_owned(),
            limit: 5,
            terms: TermSelection::All,
        };
        assert_eq!(
            ids(reader.search_text(&words).await.unwrap()),
            std::slice::from_ref(&third.id),
            "no removed document answers"
        );
        assert_eq!(reader.count().await.unwrap(), 1);
    }
}
