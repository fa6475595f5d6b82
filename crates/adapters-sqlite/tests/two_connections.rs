//! Two handles on one database file, as two processes would have: what one writes, the
//! other's searches see, including removals and a cleared index — the in-memory vector mirror
//! catches up through the change sequence.

use std::sync::Arc;

use arbor_adapters_sqlite::{SqliteConfig, SqliteDatabase, SqliteIndex};
use arbor_domain::id::{LeafId, NodeId, ScopeId};
use arbor_domain::model::{Category, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{KnownSpan, Timestamp, Validity};
use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState, VisibilityFilter};
use arbor_ports::{EmbedderId, Embedding, IndexDoc, SearchIndex, VectorQuery};

fn doc(id: &str, values: [f32; 4]) -> IndexDoc {
    let at = Timestamp::from_second(1_780_000_000).unwrap();
    IndexDoc {
        id: NodeId::Leaf(LeafId::parse(id).unwrap()),
        facts: NodeFacts {
            node: NodeKind::Leaf,
            namespace: Namespace::conversation(ScopeId::parse("c1").unwrap()),
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
        text: id.to_owned(),
        embedding: Some(Embedding { embedder: embedder(), values: values.to_vec() }),
    }
}

fn embedder() -> EmbedderId {
    EmbedderId { name: "test".into(), dimensions: 4 }
}

fn query() -> VectorQuery {
    let context =
        TrustedContext::Conversation { conversation: ScopeId::parse("c1").unwrap(), project: None, agent: None };
    let chain = ReadChain::resolve(&context, &ReadChainPolicy::default()).unwrap();
    VectorQuery {
        filter: VisibilityFilter::for_chain(&chain, Timestamp::from_second(1_790_000_000).unwrap()),
        embedding: Embedding { embedder: embedder(), values: vec![1.0, 0.0, 0.0, 0.0] },
        limit: 10,
    }
}

async fn ids(index: &SqliteIndex) -> Vec<String> {
    index.search_vector(&query()).await.unwrap().into_iter().map(|h| h.id.to_string()).collect()
}

#[tokio::test]
async fn a_second_connection_sees_upserts_removals_and_clears() {
    let dir = tempfile::tempdir().unwrap();
    let config = SqliteConfig::new(dir.path().join("arbor.db"));
    let writer = SqliteIndex::new(Arc::new(SqliteDatabase::open(&config).unwrap()));
    let reader = SqliteIndex::new(Arc::new(SqliteDatabase::open(&config).unwrap()));

    writer.upsert(vec![doc("leaf-a", [1.0, 0.0, 0.0, 0.0]), doc("leaf-b", [0.6, 0.8, 0.0, 0.0])]).await.unwrap();
    assert_eq!(ids(&reader).await, vec!["leaf-a", "leaf-b"], "the reader loads what the writer wrote");

    writer.upsert(vec![doc("leaf-c", [0.8, 0.6, 0.0, 0.0])]).await.unwrap();
    writer.remove(&[NodeId::Leaf(LeafId::parse("leaf-a").unwrap())]).await.unwrap();
    assert_eq!(ids(&reader).await, vec!["leaf-c", "leaf-b"], "the reader catches up with both changes");

    // The reader's own writes and the writer's interleave.
    reader.upsert(vec![doc("leaf-d", [0.0, 1.0, 0.0, 0.0])]).await.unwrap();
    assert_eq!(ids(&writer).await, vec!["leaf-c", "leaf-b", "leaf-d"]);

    writer.clear().await.unwrap();
    assert!(ids(&reader).await.is_empty(), "a cleared index is empty for everyone");
    writer.upsert(vec![doc("leaf-e", [1.0, 0.0, 0.0, 0.0])]).await.unwrap();
    assert_eq!(ids(&reader).await, vec!["leaf-e"]);
}
