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
}
