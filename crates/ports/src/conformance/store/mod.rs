//! Checks of the [`MetadataStore`] contract, one file per part of it; the port's macro names each
//! check
//! as `store::<check>`, so every check is re-exported here.

mod jobs;
mod listings;
mod reads;
mod trees;
mod writes;

pub use jobs::*;
pub use listings::*;
pub use reads::*;
pub use trees::*;
pub use writes::*;

use arbor_domain::id::LeafId;
use arbor_domain::model::TreeId;
use arbor_domain::namespace::Namespace;

use super::fixtures::{tree, tree_id};
use crate::store::{Change, ChangeSet, MetadataStore};

fn lid(id: &str) -> LeafId {
    LeafId::parse(id).expect("valid leaf id")
}

async fn seed_tree(store: &dyn MetadataStore, namespace: &Namespace, tree_slug: &str) -> TreeId {
    let id = tree_id(tree_slug);
    store.commit(ChangeSet::new().with(Change::EnsureTree(tree(namespace, &id)))).await.expect("tree is created");
    id
}
