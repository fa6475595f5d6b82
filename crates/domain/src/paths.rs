//! Where bodies live under a memory root [design §bodies]:
//! `memory/<namespace>/<category>/<tree_id>/leaves/<leaf_id>.md` and
//! `memory/<namespace>/<category>/<tree_id>/summaries/L<n>/<summary_id>.md`.
//!
//! A [`BodyPath`] is relative, uses `/`, and is made only of validated segments, so joining it
//! onto a root can never leave the root.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::{IdError, LeafId, NodeId, SummaryId, validate_segment};
use crate::namespace::Namespace;
use crate::values::{Category, TreeId};

/// The directory under the root that holds every body.
pub const MEMORY_DIR: &str = "memory";

/// A body's path relative to the memory root.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BodyPath(Box<str>);

impl BodyPath {
    pub fn leaf(namespace: &Namespace, category: Category, tree: &TreeId, leaf: &LeafId) -> BodyPath {
        BodyPath(
            format!("{MEMORY_DIR}/{}/{}/{}/leaves/{}.md", namespace.path_segment(), category.as_str(), tree, leaf)
                .into(),
        )
    }

    pub fn summary(
        namespace: &Namespace,
        category: Category,
        tree: &TreeId,
        level: u8,
        summary: &SummaryId,
    ) -> BodyPath {
        BodyPath(
            format!(
                "{MEMORY_DIR}/{}/{}/{}/summaries/L{level}/{}.md",
                namespace.path_segment(),
                category.as_str(),
                tree,
                summary
            )
            .into(),
        )
    }

    /// The directory holding one tree's bodies (its name carries the tree id, and so the slug
    /// of what the tree is about).
    pub fn tree_dir(namespace: &Namespace, category: Category, tree: &TreeId) -> String {
        format!("{MEMORY_DIR}/{}/{}/{}", namespace.path_segment(), category.as_str(), tree)
    }

    /// The directory holding one namespace's bodies.
    pub fn namespace_dir(namespace: &Namespace) -> String {
        format!("{MEMORY_DIR}/{}", namespace.path_segment())
    }

    /// Validates a stored path: relative, `/`-separated, every segment a safe id segment
    /// (the last may end in `.md`).
    pub fn parse(value: &str) -> Result<BodyPath, IdError> {
        if value.is_empty() {
            return Err(IdError::Empty { what: "body path" });
        }
        for segment in value.split('/') {
            validate_segment("body path segment", segment)?;
        }
        if !value.starts_with(MEMORY_DIR) || !value.ends_with(".md") {
            return Err(IdError::Malformed {
                what: "body path",
                value: value.to_owned(),
                expected: "memory/<namespace>/<category>/<tree>/…/<id>.md",
            });
        }
        Ok(BodyPath(value.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is where a summary lives (`…/summaries/L<n>/<id>.md`) rather than a leaf:
    /// told by the place, since an id alone does not say which kind of node it names.
    pub fn is_summary(&self) -> bool {
        let segments: Vec<&str> = self.0.split('/').collect();
        let n = segments.len();
        n >= 3
            && segments[n - 3] == "summaries"
            && segments[n - 2].strip_prefix('L').is_some_and(|l| l.parse::<u8>().is_ok())
    }

    /// The namespace and node a path names (`memory/<namespace>/…/<id>.md`), read back from
    /// the place: `None` for a path of another shape.
    pub fn node(&self) -> Option<(Namespace, NodeId)> {
        let segments: Vec<&str> = self.0.split('/').collect();
        let namespace = Namespace::parse(segments.get(1)?).ok()?;
        let id = segments.last()?.strip_suffix(".md")?;
        let node = match self.is_summary() {
            true => NodeId::Summary(SummaryId::parse(id).ok()?),
            false => NodeId::Leaf(LeafId::parse(id).ok()?),
        };
        Some((namespace, node))
    }

    /// The path's segments, for joining onto a filesystem root one component at a time.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for BodyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for BodyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BodyPath({:?})", &*self.0)
    }
}

impl Serialize for BodyPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for BodyPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        BodyPath::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ScopeId;

    #[test]
    fn layout() {
        let ns = Namespace::conversation(ScopeId::parse("c1").unwrap());
        let tree = TreeId::uncategorized(Category::Interaction);
        let leaf = BodyPath::leaf(&ns, Category::Interaction, &tree, &LeafId::parse("leaf-1").unwrap());
        assert_eq!(leaf.as_str(), "memory/conversation:c1/interaction/interaction:uncategorized/leaves/leaf-1.md");
        let sum = BodyPath::summary(&ns, Category::Interaction, &tree, 2, &SummaryId::parse("sum-1").unwrap());
        assert_eq!(sum.as_str(), "memory/conversation:c1/interaction/interaction:uncategorized/summaries/L2/sum-1.md");
        assert_eq!(BodyPath::parse(leaf.as_str()).unwrap(), leaf);
        assert_eq!(leaf.node(), Some((ns.clone(), NodeId::Leaf(LeafId::parse("leaf-1").unwrap()))));
        assert_eq!(sum.node(), Some((ns, NodeId::Summary(SummaryId::parse("sum-1").unwrap()))));
        assert_eq!(BodyPath::parse("memory/x.md").unwrap().node(), None);
    }

    #[test]
    fn stored_paths_cannot_escape() {
        for bad in
            ["memory/../etc/passwd.md", "/etc/passwd", "memory//x.md", "memory/a/.hidden.md", "other/x.md", "memory/x"]
        {
            assert!(BodyPath::parse(bad).is_err(), "{bad:?}");
        }
    }
}
