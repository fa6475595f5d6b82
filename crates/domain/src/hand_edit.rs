//! What a hand edit of a memory's document may change [design §edited-markdown]: its words, its
//! `# title` and, upward only, its sensitivity. What the store files a memory by — its id,
//! place, lineage, version, kind, validity, labels, expiry — is not a file's to change: an edit
//! that changes it is refused whole, naming the field, so nothing of it is taken half-way.

use serde_json::{Value, json};

use crate::markdown::{self, Document};
use crate::model::LeafRecord;
use crate::sensitivity::Sensitivity;
use crate::text::fingerprint;

/// Frontmatter fields an edit may not change.
pub const FIXED_FIELDS: &[&str] =
    &["namespace", "tree", "lineage", "version", "kind", "valid_from", "valid_to", "labels", "expires_at"];

/// What an edited document asks of its memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandEdit {
    /// The words under the title.
    pub words: String,
    /// The `# title` line, when it changed.
    pub title: Option<String>,
    /// The sensitivity asked for: the memory's, or higher.
    pub sensitivity: Sensitivity,
    /// Whether the words differ from what the memory says (its fingerprint).
    pub new_words: bool,
}

/// Reads `document` as an edit of `leaf`, or says, for the person who edited it, why it is not
/// one a file may make.
pub fn read_edit(document: &Document, leaf: &LeafRecord) -> Result<HandEdit, String> {
    if document.meta.get("id").and_then(Value::as_str) != Some(leaf.id.as_str()) {
        return Err("its frontmatter `id` no longer names this memory; put it back".to_owned());
    }
    for field in FIXED_FIELDS {
        if document.meta.get(*field).cloned() != recorded(field, document, leaf) {
            return Err(format!(
                "its frontmatter `{field}` is not the memory's; a file changes only its words, its `# title` and a \
                 raised `sensitivity` — put `{field}` back"
            ));
        }
    }
    let sensitivity = match document.meta.get("sensitivity") {
        None => leaf.sensitivity,
        Some(value) => serde_json::from_value::<Sensitivity>(value.clone())
            .map_err(|_| format!("its frontmatter `sensitivity` is not one Arbor knows: {value}"))?,
    };
    if sensitivity < leaf.sensitivity {
        return Err(format!(
            "its frontmatter lowers `sensitivity` from {} to {sensitivity}: a file may only raise it",
            leaf.sensitivity
        ));
    }
    let heading = document.body.trim_start().strip_prefix("# ").and_then(|t| t.lines().next()).map(str::trim);
    let title = heading.filter(|h| !h.is_empty() && *h != leaf.title).map(str::to_owned);
    let words = markdown::prose_after_frontmatter(&document.body);
    let new_words = fingerprint(&words) != leaf.fingerprint;
    Ok(HandEdit { words, title, sensitivity, new_words })
}

/// A fixed field's value as the memory's document records it.
fn recorded(field: &str, document: &Document, leaf: &LeafRecord) -> Option<Value> {
    match field {
        "namespace" => Some(json!(leaf.namespace)),
        "tree" => Some(json!(leaf.tree_id)),
        "lineage" => Some(json!(leaf.lineage)),
        "version" => Some(json!(leaf.version.get())),
        "kind" => Some(json!(leaf.kind)),
        "valid_from" => leaf.validity.valid_from.map(|t| json!(t)),
        // A replaced version's validity was closed after its document was written.
        "valid_to" if leaf.status == crate::lifecycle::LeafStatus::Active => leaf.validity.valid_to.map(|t| json!(t)),
        "valid_to" => document.meta.get("valid_to").cloned(),
        "labels" => (!leaf.labels.is_empty()).then(|| json!(leaf.labels)),
        "expires_at" => leaf.expires_at.map(|t| json!(t)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::{Filing, parse, render_leaf};
    use crate::model::tests::leaf_record;
    use crate::time::Timestamp;

    fn leaf(text: &str) -> LeafRecord {
        let mut leaf = leaf_record("leaf-01", Timestamp::from_second(1_780_000_000).unwrap());
        leaf.title = text.to_owned();
        leaf.summary = text.to_owned();
        leaf.fingerprint = fingerprint(text);
        leaf
    }

    /// The document as written, edited by `edit`, read back as an edit.
    fn edited(leaf: &LeafRecord, edit: impl Fn(String) -> String) -> Result<HandEdit, String> {
        let written = render_leaf(leaf, &leaf.summary, Filing { tree_title: "Dana", entity: None });
        read_edit(&parse(&edit(written)).unwrap(), leaf)
    }

    #[test]
    fn an_edit_changes_words_title_and_raises_sensitivity_and_nothing_else() {
        let dana = leaf("Dana lives in Porto.");
        let unchanged = edited(&dana, |d| d).unwrap();
        assert_eq!((unchanged.new_words, unchanged.title, unchanged.sensitivity), (false, None, dana.sensitivity));
        let moved = edited(&dana, |d| d.replace("in Porto.", "in Lisbon.")).unwrap();
        assert_eq!((moved.words.as_str(), moved.new_words), ("Dana lives in Lisbon.", true));
        assert_eq!(moved.title.as_deref(), Some("Dana lives in Lisbon."), "the heading changed with the words");
        let layout = edited(&dana, |d| d.replace("in Porto.\n", "in   Porto.\n\n\n")).unwrap();
        assert!(!layout.new_words, "spacing is not new words");
        let raised = edited(&dana, |d| d.replace("sensitivity: \"normal\"", "sensitivity: \"restricted\"")).unwrap();
        assert_eq!(raised.sensitivity, Sensitivity::Restricted);

        let refused = |edit: &dyn Fn(String) -> String, says: &str| {
            let why = edited(&dana, edit).unwrap_err();
            assert!(why.contains(says), "{why}");
        };
        refused(&|d| d.replace("kind: \"fact\"", "kind: \"decision\""), "`kind`");
        refused(&|d| d.replace("version: 1", "version: 2"), "`version`");
        refused(&|d| d.replace("tree: \"interaction:uncategorized\"", "tree: \"interaction:dana\""), "`tree`");
        refused(&|d| d.replace("id: \"leaf-01\"", "id: \"leaf-02\""), "`id`");
        refused(&|d| d.replacen("---\n", "---\nlabels: [\"home\"]\n", 1), "`labels`");
        let mut sensitive = dana.clone();
        sensitive.sensitivity = Sensitivity::Sensitive;
        let lowered = read_edit(
            &parse(
                &render_leaf(&sensitive, &sensitive.summary, Filing { tree_title: "Dana", entity: None })
                    .replace("sensitivity: \"sensitive\"", "sensitivity: \"normal\""),
            )
            .unwrap(),
            &sensitive,
        );
        assert!(lowered.unwrap_err().contains("may only raise"));
    }
}
