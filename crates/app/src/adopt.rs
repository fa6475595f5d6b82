//! Adopting hand-edited markdown: a memory's document that a person changed in their editor
//! becomes the memory's next version, as the person's own correction — the edit supersedes
//! what the file said before, is indexed anew, and the replaced version stays as history.
//!
//! An edit is found as fsck finds it: the file's bytes no longer match the hash on its row.
//! What happens then is decided per file, and never half-way:
//! - a current memory whose document still parses, still names the memory, and says something
//!   new: the words under its title become the next version (`Arbor::correct`'s path, so
//!   admission, dedup and approval hold as for any correction); then the replaced version's
//!   document is written again from its row, so history reads what it said;
//! - a document whose frontmatter no longer parses, or names another memory: reported with
//!   the line, the file left as the person wrote it;
//! - a replaced version whose file holds its successor's words: an adoption a crash cut short
//!   between its commit and the history rewrite; the rewrite is finished;
//! - anything else (history, suggestions, restricted memories edited by hand): reported.
//!
//! The replaced version's document is rebuilt from its row: exact for a memory of up to 280
//! characters (the row keeps all of it); a longer one keeps the row's
//! summary (its start), which the report says, because the person's edit overwrote the rest.

use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{ContentHash, LeafRecord, SourceRef};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::supersession::CorrectionRefusal;
use arbor_ports::{Change, ChangeSet, Error, LeafExpect};
use serde::Serialize;

use crate::correct::Correction;
use crate::{AppError, AppResult, Arbor};

/// What became of one edited document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Adoption {
    /// The edit is the memory's next version.
    Adopted {
        replaced: LeafId,
        leaf_id: LeafId,
        version: u32,
        path: String,
        /// Whether the replaced version's document was rebuilt word for word (else it keeps the
        /// start of its text, the rest having been overwritten by the edit).
        history_exact: bool,
    },
    /// A replaced version's document was written again after an adoption cut short.
    HistoryRestored { leaf_id: LeafId, path: String },
    /// Left as it is, and why.
    NotAdopted { leaf_id: LeafId, path: String, reason: String },
}

impl Arbor {
    /// Finds every hand-edited leaf document in the store and adopts each edit of a current
    /// memory as its next version ([`Adoption`]). Safe to run again at any time: a document
    /// that matches its row is not touched.
    pub async fn adopt_edits(&self) -> AppResult<Vec<Adoption>> {
        let store = &self.ports.store;
        let mut adoptions = Vec::new();
        for namespace in store.namespaces().await? {
            for tree in store.trees(std::slice::from_ref(&namespace)).await? {
                let leaves = store.tree_leaves(&namespace, &tree.tree_id, &Default::default()).await?;
                for leaf in leaves {
                    if let Some(adoption) = self.adopt_edit(&namespace, &leaf).await? {
                        adoptions.push(adoption);
                    }
                }
            }
        }
        Ok(adoptions)
    }

    /// One leaf: `None` when its document is as written (or gone, which fsck reports).
    async fn adopt_edit(&self, namespace: &Namespace, leaf: &LeafRecord) -> AppResult<Option<Adoption>> {
        let bodies = &self.ports.bodies;
        let live = matches!(leaf.status, LeafStatus::Active | LeafStatus::Superseded | LeafStatus::Candidate);
        if !live {
            return Ok(None);
        }
        let bytes = match bodies.get(&leaf.body_path, &leaf.body_sha256).await {
            Ok(_) | Err(Error::NotFound { .. }) => return Ok(None),
            Err(Error::Integrity { .. }) => bodies.read_unverified(&leaf.body_path).await?,
            Err(other) => return Err(other.into()),
        };
        let path = leaf.body_path.to_string();
        let not_adopted =
            |reason: String| Ok(Some(Adoption::NotAdopted { leaf_id: leaf.id.clone(), path: path.clone(), reason }));
        let Ok(text) = String::from_utf8(bytes) else {
            return not_adopted("the file is not UTF-8 text".to_owned());
        };
        let document = match markdown::parse(&text) {
            Ok(document) => document,
            Err(error) => return not_adopted(format!("{error}; fix it and run again")),
        };
        if document.meta.get("id").and_then(|v| v.as_str()) != Some(leaf.id.as_str()) {
            return not_adopted("its frontmatter `id` no longer names this memory; put it back".to_owned());
        }
        let words = markdown::prose_after_frontmatter(&document.body);
        match leaf.status {
            LeafStatus::Active => self.adopt_current(namespace, leaf, &document.body, words).await.map(Some),
            LeafStatus::Superseded if self.successor_says(namespace, leaf, &words).await? => {
                self.rewrite_document(leaf, &leaf.summary).await?;
                Ok(Some(Adoption::HistoryRestored { leaf_id: leaf.id.clone(), path }))
            }
            _ => not_adopted(format!(
                "only a current memory's document is adopted; this one is {} (`arbor correct` or `arbor restore`)",
                leaf.status
            )),
        }
    }

    /// The person's words as the memory's next version, then the replaced version's document
    /// rebuilt from its row.
    async fn adopt_current(
        &self,
        namespace: &Namespace,
        leaf: &LeafRecord,
        after_frontmatter: &str,
        words: String,
    ) -> AppResult<Adoption> {
        let path = leaf.body_path.to_string();
        let chain = self.read_chain(&TrustedContext::Only { namespace: namespace.clone() })?;
        // A changed `# title` line is the person's new title.
        let heading = after_frontmatter.trim_start().strip_prefix("# ").and_then(|t| t.lines().next()).map(str::trim);
        let title = heading.filter(|h| !h.is_empty() && *h != leaf.title).map(str::to_owned);
        let correction = Correction {
            title,
            source: SourceRef::UserEntry,
            ..Correction::by_person(leaf.id.clone(), leaf.version, words)
        };
        let receipt = match self.correct(&chain, &correction).await {
            Ok(receipt) => receipt,
            Err(AppError::Correction(CorrectionRefusal::Unchanged { existing, .. })) if existing == leaf.id => {
                // Only the layout changed (spacing, frontmatter): the words stand as recorded,
                // so the document is written again as the store writes it.
                self.rewrite_document(leaf, &correction.text).await?;
                let reason = "its words are unchanged; the document was written again as recorded".to_owned();
                return Ok(Adoption::NotAdopted { leaf_id: leaf.id.clone(), path, reason });
            }
            Err(error) if is_refusal(&error) => {
                return Ok(Adoption::NotAdopted { leaf_id: leaf.id.clone(), path, reason: error.to_string() });
            }
            Err(error) => return Err(error),
        };
        let history_exact = self.rewrite_document(leaf, &leaf.summary).await?;
        Ok(Adoption::Adopted {
            replaced: leaf.id.clone(),
            leaf_id: receipt.leaf_id,
            version: receipt.version,
            path,
            history_exact,
        })
    }

    /// Whether `leaf`'s successor says `words`: its document is what an adoption left.
    async fn successor_says(&self, namespace: &Namespace, leaf: &LeafRecord, words: &str) -> AppResult<bool> {
        let Some(next) = &leaf.superseded_by else { return Ok(false) };
        let Some(successor) = self.ports.store.leaf(std::slice::from_ref(namespace), next).await? else {
            return Ok(false);
        };
        Ok(self.read_body(&successor.body_path, &successor.body_sha256).await.is_ok_and(|said| said == words))
    }

    /// Writes `leaf`'s document again saying `words` (as it was written: the status it was
    /// written with, its filing), and records the new hash when that is not the document first
    /// written. Returns whether it is.
    async fn rewrite_document(&self, leaf: &LeafRecord, words: &str) -> AppResult<bool> {
        let store = &self.ports.store;
        let tree = store.tree(&leaf.namespace, &leaf.tree_id).await?;
        let entity = match &leaf.entities.primary {
            Some(id) => store.entity(&leaf.namespace, id).await?,
            None => None,
        };
        let tree_title = tree.as_ref().map(|t| t.title.as_str()).unwrap_or("Uncategorized");
        let filing = markdown::Filing { tree_title, entity: entity.as_ref().map(|e| (e.name.as_str(), e.entity_type)) };
        // A document records the status its leaf was written with: a replaced version was
        // written current (or as a suggestion, which never reaches here).
        let as_written = LeafRecord { status: LeafStatus::Active, superseded_by: None, ..leaf.clone() };
        let document = markdown::render_leaf(&as_written, words, filing);
        let hash = ContentHash::of(document.as_bytes());
        let exact = hash == leaf.body_sha256;
        if !exact {
            // Rows first: a crash after it leaves a file the next run writes again; the other
            // order could leave a row that no file matches and nothing that says why.
            let current = store.leaf(std::slice::from_ref(&leaf.namespace), &leaf.id).await?;
            let Some(current) = current else { return Ok(false) };
            let expect = LeafExpect { status: current.status, parent: Some(current.parent.clone()) };
            let record = LeafRecord { body_sha256: hash, ..current };
            let mut changes = ChangeSet::new();
            changes.push(Change::UpdateLeaf { expect, record });
            store.commit(changes).await?;
        }
        self.ports.bodies.put(&leaf.body_path, document.as_bytes()).await?;
        Ok(exact)
    }
}

/// A correction refused for what it says or where it is, which the person can act on; the
/// rest (the store failing) stops the run.
fn is_refusal(error: &AppError) -> bool {
    matches!(
        error,
        AppError::InvalidRequest(_)
            | AppError::InvalidEvent(_)
            | AppError::Correction(_)
            | AppError::ReadOnlyLayer { .. }
            | AppError::NeedsPerson { .. }
            | AppError::Port(Error::NotFound { .. })
    )
}
