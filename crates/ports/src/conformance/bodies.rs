//! Checks of the [`BodyStore`] contract.

use arbor_domain::id::LeafId;
use arbor_domain::model::{Category, ContentHash};
use arbor_domain::paths::BodyPath;

use super::fixtures::{conversation, project, tree_id};
use crate::bodies::{BodyStore, BodyStoreExt};
use crate::error::Error;

fn path(namespace: &str, leaf: &str) -> BodyPath {
    let ns = if namespace.starts_with('p') { project(namespace) } else { conversation(namespace) };
    BodyPath::leaf(&ns, Category::Interaction, &tree_id("topic"), &LeafId::parse(leaf).unwrap())
}

/// A document reads back byte for byte, and its hash is the SHA-256 of its bytes.
pub async fn put_then_get(bodies: &dyn BodyStore) {
    let p = path("c1", "leaf-1");
    let text = "---\nid: \"leaf-1\"\n---\n\n# Tea\n\nAlice likes green tea. 🍵\n";
    let hash = bodies.put(&p, text.as_bytes()).await.unwrap();
    assert_eq!(hash, ContentHash::of(text.as_bytes()));
    assert_eq!(bodies.get_string(&p, &hash).await.unwrap(), text);
    let missing = bodies.get(&path("c1", "leaf-2"), &hash).await;
    assert!(matches!(missing, Err(Error::NotFound { .. })), "got {missing:?}");
}

/// A read whose bytes do not match the expected hash fails as an integrity error.
pub async fn get_verifies_the_hash(bodies: &dyn BodyStore) {
    let p = path("c1", "leaf-1");
    bodies.put(&p, b"original").await.unwrap();
    let result = bodies.get(&p, &ContentHash::of(b"something else")).await;
    assert!(matches!(result, Err(Error::Integrity { .. })), "got {result:?}");
}

/// Writing a path again replaces the whole document.
pub async fn put_replaces_whole_documents(bodies: &dyn BodyStore) {
    let p = path("c1", "leaf-1");
    bodies.put(&p, "a much longer first version of the body".as_bytes()).await.unwrap();
    let hash = bodies.put(&p, b"short").await.unwrap();
    assert_eq!(bodies.get(&p, &hash).await.unwrap(), b"short");
    assert!(!bodies.contains_text("first version").await.unwrap());
}

/// Deleting removes the text; deleting again is not an error.
pub async fn delete_is_idempotent_and_leaves_no_text(bodies: &dyn BodyStore) {
    let p = path("c1", "leaf-1");
    let hash = bodies.put(&p, b"the vault code is kept in the blue binder").await.unwrap();
    assert!(bodies.contains_text("blue binder").await.unwrap());
    assert!(bodies.delete(&p).await.unwrap());
    assert!(!bodies.delete(&p).await.unwrap());
    assert!(!bodies.contains_text("blue binder").await.unwrap());
    assert!(matches!(bodies.get(&p, &hash).await, Err(Error::NotFound { .. })));
}

/// A document's size is its length in bytes, whatever its hash; a missing one is not found.
pub async fn size_is_the_length_in_bytes(bodies: &dyn BodyStore) {
    let p = path("c1", "leaf-1");
    bodies.put(&p, "Alice likes green tea. 🍵".as_bytes()).await.unwrap();
    assert_eq!(bodies.size(&p).await.unwrap(), "Alice likes green tea. 🍵".len() as u64);
    bodies.put(&p, b"short").await.unwrap();
    assert_eq!(bodies.size(&p).await.unwrap(), 5, "the document as it is now");
    let missing = bodies.size(&path("c1", "leaf-2")).await;
    assert!(matches!(missing, Err(Error::NotFound { .. })), "got {missing:?}");
}

/// Listing by prefix returns exactly the documents under it, sorted.
pub async fn list_by_prefix(bodies: &dyn BodyStore) {
    let (a1, a2, b1) = (path("c1", "leaf-2"), path("c1", "leaf-1"), path("p1", "leaf-3"));
    for p in [&a1, &a2, &b1] {
        bodies.put(p, b"x").await.unwrap();
    }
    let listed = bodies.list("memory/conversation:c1/").await.unwrap();
    assert_eq!(listed, vec![a2, a1]);
    assert_eq!(bodies.list("memory/").await.unwrap().len(), 3);
    assert!(bodies.list("memory/global/").await.unwrap().is_empty());
}

/// A batch write stores every document, and reads back each one.
pub async fn put_many_then_get(bodies: &dyn BodyStore) {
    let docs: Vec<(BodyPath, Vec<u8>)> = (0..20)
        .map(|i| (path(if i % 2 == 0 { "c1" } else { "p1" }, &format!("leaf-{i}")), format!("body {i}").into_bytes()))
        .collect();
    let hashes = bodies.put_many(&docs).await.unwrap();
    assert_eq!(hashes.len(), docs.len());
    for ((p, contents), hash) in docs.iter().zip(&hashes) {
        assert_eq!(hash, &ContentHash::of(contents));
        assert_eq!(&bodies.get(p, hash).await.unwrap(), contents);
    }
    assert_eq!(bodies.list("memory/").await.unwrap().len(), 20);
}

/// Creating new documents never replaces one: onto a path that holds a document, the batch
/// fails as already existing, that document is as it was, and none of the batch stays.
pub async fn create_many_never_replaces(bodies: &dyn BodyStore) {
    let taken = path("c1", "leaf-8");
    let kept = bodies.put(&taken, b"a summary someone's rows refer to").await.unwrap();
    let fresh = path("c1", "leaf-9");
    let batch = vec![(fresh.clone(), b"new".to_vec()), (taken.clone(), b"a second summary".to_vec())];
    let refused = bodies.create_many(&batch).await;
    assert!(matches!(refused, Err(Error::AlreadyExists { .. })), "got {refused:?}");
    assert_eq!(bodies.get(&taken, &kept).await.unwrap(), b"a summary someone's rows refer to");
    let leftover = bodies.read_unverified(&fresh).await;
    assert!(matches!(leftover, Err(Error::NotFound { .. })), "none of the batch stays: {leftover:?}");

    let hashes = bodies.create_many(&batch[..1]).await.unwrap();
    assert_eq!(bodies.get(&fresh, &hashes[0]).await.unwrap(), b"new");
    assert!(bodies.list("memory/").await.unwrap().iter().all(|p| p == &taken || p == &fresh));
}
