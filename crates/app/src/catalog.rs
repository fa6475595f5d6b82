//! The catalog [design §catalog]: a bounded, deterministic digest of what memory holds, one
//! line per tree, small enough to sit in an agent's prompt however large memory grows. Content
//! is disclosed on demand (retrieve, read); the catalog only says where to look.
//!
//! Deterministic and model-free: the same store and chain give the same catalog, byte for byte.

use arbor_domain::model::TreeId;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::text::truncate_chars;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::TreeLeafQuery;
use serde::Serialize;

use crate::{AppResult, Arbor};

/// The default size of a catalog: about 1,000 tokens [design §catalog].
pub const DEFAULT_CATALOG_CHARS: usize = 4_000;

/// The most recent memory titles a catalog line shows [design §catalog].
pub const CATALOG_TITLES_PER_TREE: usize = 5;

/// The longest one catalog line may be, so one busy tree cannot crowd out the others (and the
/// smallest budget an API accepts, 200, always fits one).
const MAX_LINE_CHARS: usize = 200;

/// One tree in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogEntry {
    pub namespace: Namespace,
    pub tree_id: TreeId,
    pub title: String,
    /// Current memories in the tree.
    pub memories: usize,
    pub last_updated: Option<Timestamp>,
    /// Titles of the most recent current memories, newest first.
    pub recent_titles: Vec<String>,
    /// The entry as one line of text.
    pub line: String,
}

/// A bounded digest of the trees a chain can read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog {
    pub entries: Vec<CatalogEntry>,
    /// Trees left out because the budget was spent.
    pub omitted_trees: usize,
    pub budget_chars: usize,
    /// The lines joined, at most `budget_chars` characters.
    pub text: String,
}

impl Arbor {
    /// The catalog of the trees `chain` reads, most specific layer first and, within a layer,
    /// the most recently updated tree first; at most `budget_chars` characters of text. Only
    /// current memories count; restricted ones are never named.
    pub async fn catalog(&self, chain: &ReadChain, budget_chars: usize) -> AppResult<Catalog> {
        let store = &self.ports.store;
        // What the chain could retrieve: current, unexpired, not restricted, and in a frozen
        // layer only what was current when it froze.
        let filter = VisibilityFilter::for_chain(chain, self.now());
        let mut entries = Vec::new();
        for namespace in chain.namespaces() {
            let mut layer = Vec::new();
            for tree in store.trees(std::slice::from_ref(namespace)).await? {
                let mut leaves: Vec<_> = store
                    .tree_leaves(namespace, &tree.tree_id, &TreeLeafQuery::default())
                    .await?
                    .into_iter()
                    .filter(|leaf| filter.admits(&NodeFacts::of_leaf(leaf)))
                    .collect();
                if leaves.is_empty() {
                    continue;
                }
                leaves.sort_by(|a, b| b.observed_at.cmp(&a.observed_at).then_with(|| a.id.cmp(&b.id)));
                let recent_titles: Vec<String> =
                    leaves.iter().take(CATALOG_TITLES_PER_TREE).map(|l| truncate_chars(&l.title, 80)).collect();
                let last_updated = leaves.first().map(|l| l.observed_at);
                let line =
                    catalog_line(namespace, &tree.tree_id, &tree.title, leaves.len(), last_updated, &recent_titles);
                layer.push(CatalogEntry {
                    namespace: namespace.clone(),
                    tree_id: tree.tree_id.clone(),
                    title: tree.title.clone(),
                    memories: leaves.len(),
                    last_updated,
                    recent_titles,
                    line,
                });
            }
            layer.sort_by(|a, b| b.last_updated.cmp(&a.last_updated).then_with(|| a.tree_id.cmp(&b.tree_id)));
            entries.extend(layer);
        }
        Ok(bound_catalog(entries, budget_chars))
    }
}

fn catalog_line(
    namespace: &Namespace,
    tree: &TreeId,
    title: &str,
    memories: usize,
    last_updated: Option<Timestamp>,
    recent: &[String],
) -> String {
    let day = last_updated.map(|t| t.to_string().chars().take(10).collect::<String>()).unwrap_or_default();
    let line =
        format!("{tree} ({namespace}) — {title}: {memories} memories, updated {day}; recent: {}", recent.join(" | "));
    truncate_chars(&line, MAX_LINE_CHARS)
}

/// Keeps whole lines, in order, while they fit in `budget_chars`.
fn bound_catalog(entries: Vec<CatalogEntry>, budget_chars: usize) -> Catalog {
    let mut kept = Vec::new();
    let mut used = 0;
    let total = entries.len();
    for entry in entries {
        let cost = entry.line.chars().count() + usize::from(!kept.is_empty());
        if used + cost > budget_chars {
            break;
        }
        used += cost;
        kept.push(entry);
    }
    let text = kept.iter().map(|e| e.line.as_str()).collect::<Vec<_>>().join("\n");
    Catalog { omitted_trees: total - kept.len(), budget_chars, text, entries: kept }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tree: &str, line_len: usize) -> CatalogEntry {
        CatalogEntry {
            namespace: Namespace::parse("global").unwrap(),
            tree_id: TreeId::parse(tree).unwrap(),
            title: tree.to_owned(),
            memories: 1,
            last_updated: None,
            recent_titles: Vec::new(),
            line: "x".repeat(line_len),
        }
    }

    #[test]
    fn the_catalog_keeps_whole_lines_within_its_budget() {
        let entries = vec![entry("interaction:a", 10), entry("interaction:b", 10), entry("interaction:c", 10)];
        let catalog = bound_catalog(entries.clone(), 21);
        assert_eq!(catalog.entries.len(), 2);
        assert_eq!(catalog.omitted_trees, 1);
        assert_eq!(catalog.text.chars().count(), 21);
        let none = bound_catalog(entries, 5);
        assert!(none.entries.is_empty() && none.text.is_empty());
        assert_eq!(none.omitted_trees, 3);
    }
}
