//! The markdown documents bodies are stored as [design §bodies]: a YAML frontmatter block with
//! the node's metadata as it was when the node was written, then the text.
//!
//! Bodies are immutable once written, so the frontmatter records the leaf as it was written; a
//! leaf's status, validity end and parent live in the metadata store, which is authoritative
//! for them — and for how a person settled a conflict candidate (keep both: its own lineage and
//! no shared subject; set validity: its interval), which the frontmatter shows as proposed. Values are written as
//! JSON scalars and arrays, which are valid YAML, so any YAML reader can read the files and
//! this module can parse its own output exactly.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::entity::EntityType;
use crate::model::{LeafRecord, SummaryRecord};

/// What a leaf's document records about where it was filed, beyond the leaf's own row: the
/// tree's title and the entity it is about, so the rows can be rebuilt from the documents
/// alone (`arbor fsck --rebuild-from-bodies`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filing<'a> {
    pub tree_title: &'a str,
    /// The primary entity's name and type, when the leaf has one.
    pub entity: Option<(&'a str, EntityType)>,
}

/// Renders a leaf body document.
pub fn render_leaf(leaf: &LeafRecord, body: &str, filing: Filing<'_>) -> String {
    let mut meta: Vec<(&str, Value)> = vec![
        ("id", json!(leaf.id)),
        ("lineage", json!(leaf.lineage)),
        ("version", json!(leaf.version.get())),
        ("namespace", json!(leaf.namespace)),
        ("category", json!(leaf.category)),
        ("tree", json!(leaf.tree_id)),
        ("kind", json!(leaf.kind)),
        ("title", json!(leaf.title)),
    ];
    if let Some(subject) = &leaf.subject {
        meta.push(("subject", json!(subject)));
    }
    meta.push(("observed_at", json!(leaf.observed_at)));
    meta.push(("created_at", json!(leaf.created_at)));
    if let Some(from) = leaf.validity.valid_from {
        meta.push(("valid_from", json!(from)));
    }
    if let Some(to) = leaf.validity.valid_to {
        meta.push(("valid_to", json!(to)));
    }
    meta.push(("confidence", json!(round2(leaf.confidence.get()))));
    meta.push(("salience", json!(round2(leaf.salience.get()))));
    meta.push(("sensitivity", json!(leaf.sensitivity)));
    meta.push(("source", json!(leaf.provenance.source.short())));
    meta.push(("source_sha256", json!(leaf.provenance.source_sha256)));
    meta.push(("extractor", json!(leaf.provenance.extractor)));
    if let Some(entity) = &leaf.entities.primary {
        meta.push(("entity", json!(entity)));
    }
    if !leaf.labels.is_empty() {
        meta.push(("labels", json!(leaf.labels)));
    }
    if let Some(old) = &leaf.supersedes {
        meta.push(("supersedes", json!(old)));
    }
    // Enough to rebuild the row from this document alone. `status` is the status the leaf was
    // written with; the store holds what a person decided since.
    meta.push(("status", json!(leaf.status)));
    meta.push(("actor", json!(leaf.provenance.actor)));
    meta.push(("provenance", json!(leaf.provenance.source)));
    meta.push(("policy_version", json!(leaf.provenance.policy_version)));
    meta.push(("fingerprint", json!(leaf.fingerprint)));
    if let Some(expires) = leaf.expires_at {
        meta.push(("expires_at", json!(expires)));
    }
    if !leaf.entities.secondary.is_empty() {
        meta.push(("secondary_entities", json!(leaf.entities.secondary)));
    }
    meta.push(("tree_title", json!(filing.tree_title)));
    if let Some((name, entity_type)) = filing.entity {
        meta.push(("entity_name", json!(name)));
        meta.push(("entity_type", json!(entity_type)));
    }
    document(&meta, &format!("# {}\n\n{}\n", one_line(&leaf.title), body.trim_end()))
}

/// Renders a summary body document.
pub fn render_summary(summary: &SummaryRecord, body: &str) -> String {
    let mut meta: Vec<(&str, Value)> = vec![
        ("id", json!(summary.id)),
        ("namespace", json!(summary.namespace)),
        ("category", json!(summary.category)),
        ("tree", json!(summary.tree_id)),
        ("role", json!(summary.role)),
        ("level", json!(summary.level())),
        ("height", json!(summary.height)),
        ("children", json!(summary.children.iter().map(|c| c.as_str()).collect::<Vec<_>>())),
        ("sealed_at", json!(summary.sealed_at)),
    ];
    if let Some(start) = summary.time_range_start {
        meta.push(("time_range_start", json!(start)));
    }
    if let Some(end) = summary.time_range_end {
        meta.push(("time_range_end", json!(end)));
    }
    if let Some(old) = &summary.replaces {
        meta.push(("replaces", json!(old)));
    }
    document(&meta, &format!("# {}\n\n{}\n", one_line(&summary.title), body.trim_end()))
}

fn document(meta: &[(&str, Value)], body: &str) -> String {
    let mut out = String::from("---\n");
    for (key, value) in meta {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out.push_str("---\n\n");
    out.push_str(body);
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn round2(value: f32) -> f64 {
    (f64::from(value) * 100.0).round() / 100.0
}

/// A parsed document: frontmatter fields and the text after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub meta: BTreeMap<String, Value>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkdownError {
    #[error("the document does not start with a `---` frontmatter line")]
    NoFrontmatter,
    #[error("the frontmatter is not closed by a `---` line")]
    UnclosedFrontmatter,
    #[error("frontmatter line {line}: {reason}")]
    BadLine { line: usize, reason: String },
}

/// Parses a document written by this module (or edited by a person who kept its shape).
pub fn parse(document: &str) -> Result<Document, MarkdownError> {
    let rest = document.strip_prefix("---\n").ok_or(MarkdownError::NoFrontmatter)?;
    let end = rest.find("\n---\n").ok_or(MarkdownError::UnclosedFrontmatter)?;
    let (front, after) = (&rest[..end], &rest[end + "\n---\n".len()..]);
    let mut meta = BTreeMap::new();
    for (index, line) in front.lines().enumerate() {
        let line_no = index + 2;
        if line.trim().is_empty() {
            continue;
        }
        let (key, raw) = line
            .split_once(": ")
            .ok_or_else(|| MarkdownError::BadLine { line: line_no, reason: "expected `key: value`".into() })?;
        let value: Value = serde_json::from_str(raw).map_err(|e| MarkdownError::BadLine {
            line: line_no,
            reason: format!("the value of `{}` is not JSON ({e}); text goes in double quotes", key.trim()),
        })?;
        meta.insert(key.trim().to_owned(), value);
    }
    Ok(Document { meta, body: after.trim_start_matches('\n').to_owned() })
}

/// The prose of a body document: after the frontmatter (when it parses) and the `# title`
/// line — what the memory says, as a person would correct it.
pub fn prose(document: &str) -> String {
    let body = match parse(document) {
        Ok(doc) => doc.body,
        Err(_) => document.to_owned(),
    };
    prose_after_frontmatter(&body)
}

/// [`prose`] of what follows a document's frontmatter.
pub fn prose_after_frontmatter(after_frontmatter: &str) -> String {
    let body = after_frontmatter.trim_start();
    let without_title = match body.strip_prefix("# ") {
        Some(titled) => titled.split_once('\n').map(|(_, rest)| rest).unwrap_or(""),
        None => body,
    };
    without_title.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_the_line() {
        assert_eq!(parse("# no frontmatter"), Err(MarkdownError::NoFrontmatter));
        assert_eq!(parse("---\nid: \"x\"\n"), Err(MarkdownError::UnclosedFrontmatter));
        let err = parse("---\nid: \"x\"\ntitle: unquoted\n---\n").unwrap_err();
        assert!(matches!(err, MarkdownError::BadLine { line: 3, .. }), "{err:?}");
    }

    #[test]
    fn prose_is_what_follows_the_frontmatter_and_title() {
        let doc = document(&[("title", json!("t"))], "# t\n\nDana moved to Lisbon.\n");
        assert_eq!(prose(&doc), "Dana moved to Lisbon.");
        assert_eq!(prose("no frontmatter at all"), "no frontmatter at all");
        assert_eq!(prose("---\ntitle: \"t\"\n---\n# only a title"), "");
    }

    #[test]
    fn round_trips_values() {
        let doc = document(&[("title", json!("a: \"quoted\"\nline")), ("n", json!(3))], "# t\n\nbody\n");
        let parsed = parse(&doc).unwrap();
        assert_eq!(parsed.meta["title"], json!("a: \"quoted\"\nline"));
        assert_eq!(parsed.meta["n"], json!(3));
        assert_eq!(parsed.body, "# t\n\nbody\n");
    }
}
