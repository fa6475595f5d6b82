//! Adopting hand-edited markdown: a memory's document that someone changed in an editor
//! becomes the memory's next version, and the replaced version stays as history.
//!
//! An edit is found as fsck finds it: the file's bytes no longer match the hash on its row.
//! Who made it decides what it becomes ([`EditsBy`]): run by the person at the store's command
//! line (`arbor fsck --adopt-edits`), it is their correction, current at once; seen by a running
//! server, which cannot tell a person's editor from a script or an agent with file access, it is
//! a suggestion that waits for the person in the memory centre. Every file is decided on its
//! own, and never half-way:
//! - the words under the title changed, and nothing else but the title or a raised sensitivity:
//!   the next version (through `Arbor::correct`'s path, so admission, dedup and approval hold);
//!   once it is current, the replaced version's document is written again from its row;
//! - the frontmatter no longer parses, names another memory, or changes what a file cannot
//!   change (`domain::hand_edit`): reported with the line or the field, the file left exactly
//!   as it is;
//! - the words are what the memory already says: reported, the file left as it is;
//! - a replaced version whose file holds its successor's words (an adoption confirmed, or cut
//!   short by a crash before the history rewrite): the rewrite is done;
//! - anything else (history, suggestions, archived memories edited by hand): reported.
//!
//! The replaced version's document is rebuilt from its row, which keeps a memory's first 280
//! characters: word for word for a memory that short, its start for a longer one (the edit
//! overwrote the rest), which [`Adoption::Adopted`] says.

use arbor_domain::hand_edit::{self, HandEdit};
use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{Actor, ContentHash, LeafRecord, SourceRef};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::text::fingerprint;
use arbor_ports::{Change, ChangeSet, Error, LeafExpect};
use serde::Serialize;

use crate::correct::Correction;
use crate::{AppError, AppResult, Arbor};

/// Who made the edits an adoption finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditsBy {
    /// The person who owns the store, at its command line: each edit is their correction.
    Person,
    /// Someone with access to the store's files — a person's editor, a script, an agent: each
    /// edit is a suggestion that waits for the person.
    Unknown,
}

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
        /// Whether the replaced version's document keeps every word (else its first 280
        /// characters: the edit overwrote the rest).
        history_exact: bool,
    },
    /// The edit waits for the person as a suggestion to replace the memory.
    Suggested { replaces: LeafId, leaf_id: LeafId, path: String },
    /// A replaced version's document was written again from its row.
    HistoryRestored { leaf_id: LeafId, path: String },
    /// Left exactly as it is, and why.
    NotAdopted { leaf_id: LeafId, path: String, reason: String },
}

impl Arbor {
    /// Finds every hand-edited leaf document in `namespaces` (every namespace when empty) and
    /// adopts each edit of a current memory as `by` says ([`Adoption`]). Safe to run again at
    /// any time: a document that matches its row is not touched, and one file that cannot be
    /// read is reported without stopping the rest.
    pub async fn adopt_edits(&self, namespaces: &[Namespace], by: EditsBy) -> AppResult<Vec<Adoption>> {
        let store = &self.ports.store;
        let namespaces = if namespaces.is_empty() { store.namespaces().await? } else { namespaces.to_vec() };
        let mut adoptions = Vec::new();
        for namespace in namespaces {
            for tree in store.trees(std::slice::from_ref(&namespace)).await? {
                let leaves = store.tree_leaves(&namespace, &tree.tree_id, &Default::default()).await?;
                for leaf in &leaves {
                    let outcome = match self.adopt_edit(&namespace, leaf, &leaves, by).await {
                        Ok(outcome) => outcome,
                        Err(error) => Some(Adoption::NotAdopted {
                            leaf_id: leaf.id.clone(),
                            path: leaf.body_path.to_string(),
                            reason: format!("could not be adopted now: {error}"),
                        }),
                    };
                    adoptions.extend(outcome);
                }
            }
        }
        Ok(adoptions)
    }

    /// One leaf: `None` when its document is as written (or gone, which fsck reports).
    async fn adopt_edit(
        &self,
        namespace: &Namespace,
        leaf: &LeafRecord,
        tree: &[LeafRecord],
        by: EditsBy,
    ) -> AppResult<Option<Adoption>> {
        if leaf.status == LeafStatus::Tombstone {
            return Ok(None);
        }
        let bodies = &self.ports.bodies;
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
        let edit = match hand_edit::read_edit(&document, leaf) {
            Ok(edit) => edit,
            Err(why) => return not_adopted(why),
        };
        match leaf.status {
            LeafStatus::Active => self.adopt_current(namespace, leaf, tree, edit, by).await.map(Some),
            LeafStatus::Superseded if self.successor_says(namespace, leaf, &edit.words).await? => {
                self.rewrite_document(leaf).await?;
                Ok(Some(Adoption::HistoryRestored { leaf_id: leaf.id.clone(), path }))
            }
            LeafStatus::Candidate => not_adopted(
                "a suggestion's words are changed in review (`arbor review edit`, or Edit in the memory centre)"
                    .to_owned(),
            ),
            other => not_adopted(format!(
                "only a current memory's document is adopted; this one is {other} (`arbor restore` brings a \
                 replaced version back)"
            )),
        }
    }

    /// A current memory's edited document: its next version (the person's), or a suggestion
    /// to replace it (anyone else's).
    async fn adopt_current(
        &self,
        namespace: &Namespace,
        leaf: &LeafRecord,
        tree: &[LeafRecord],
        edit: HandEdit,
        by: EditsBy,
    ) -> AppResult<Adoption> {
        let path = leaf.body_path.to_string();
        let not_adopted =
            |reason: String| Adoption::NotAdopted { leaf_id: leaf.id.clone(), path: path.clone(), reason };
        if leaf.sensitivity == Sensitivity::Restricted {
            return Ok(not_adopted(
                "a restricted memory is not adopted from its file (its words stay out of every automatic path); \
                 put the file back, or forget the memory and enter it again"
                    .to_owned(),
            ));
        }
        if !edit.new_words {
            return Ok(not_adopted(
                "its words are what the memory says (a new title, sensitivity or layout alone is not a new version: \
                 change the words, or use `arbor correct`); the file is left as it is"
                    .to_owned(),
            ));
        }
        if by == EditsBy::Unknown
            && let Some(decided) = tree.iter().find(|other| {
                other.supersedes.as_ref() == Some(&leaf.id)
                    && other.fingerprint == fingerprint(&edit.words)
                    && matches!(other.status, LeafStatus::Candidate | LeafStatus::Rejected)
            })
        {
            let reason = match decided.status {
                LeafStatus::Candidate => format!("{} already suggests it and waits for the person", decided.id),
                _ => format!("the person rejected it as {}; put the file back or change it again", decided.id),
            };
            return Ok(not_adopted(reason));
        }
        let chain = self.read_chain(&TrustedContext::Only { namespace: namespace.clone() })?;
        let (actor, source) = match by {
            EditsBy::Person => (Actor::User, SourceRef::UserEntry),
            // A tool's statement is never confirmed automatically: it waits for the person.
            EditsBy::Unknown => (Actor::Tool, SourceRef::Import { origin: format!("edited file {path}") }),
        };
        let correction = Correction {
            title: edit.title,
            source,
            actor,
            at_least: edit.sensitivity,
            ..Correction::by_person(leaf.id.clone(), leaf.version, edit.words)
        };
        let receipt = match self.correct(&chain, &correction).await {
            Ok(receipt) => receipt,
            Err(error) if is_refusal(&error) => return Ok(not_adopted(error.to_string())),
            Err(error) => return Err(error),
        };
        if receipt.status != LeafStatus::Active {
            // The memory stays as it is until the person decides; so does its file.
            return Ok(Adoption::Suggested { replaces: leaf.id.clone(), leaf_id: receipt.leaf_id, path });
        }
        let history_exact = self.rewrite_document(leaf).await?;
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

    /// Writes `leaf`'s document again from its row (as it was written: current, in its tree,
    /// saying the row's summary) and records the new document's hash on the row. Returns whether
    /// the summary is every word the memory said.
    async fn rewrite_document(&self, leaf: &LeafRecord) -> AppResult<bool> {
        let store = &self.ports.store;
        let tree = store.tree(&leaf.namespace, &leaf.tree_id).await?;
        let entity = match &leaf.entities.primary {
            Some(id) => store.entity(&leaf.namespace, id).await?,
            None => None,
        };
        let tree_title = tree.as_ref().map(|t| t.title.as_str()).unwrap_or("Uncategorized");
        let filing = markdown::Filing { tree_title, entity: entity.as_ref().map(|e| (e.name.as_str(), e.entity_type)) };
        // A document records its leaf as written (when an end said then is not told apart
        // from a later replacement, the row's hash follows the rebuilt document).
        let document = markdown::render_leaf(&leaf.as_written(), &leaf.summary, filing);
        let hash = ContentHash::of(document.as_bytes());
        if hash != leaf.body_sha256 {
            // The row first: a crash after it leaves a file the next run writes again; the
            // other order could leave a row no file matches and nothing that says why.
            let current = store.leaf(std::slice::from_ref(&leaf.namespace), &leaf.id).await?;
            let Some(current) = current else { return Ok(false) };
            let expect = LeafExpect { status: current.status, parent: Some(current.parent.clone()) };
            let mut changes = ChangeSet::new();
            changes.push(Change::UpdateLeaf { expect, record: LeafRecord { body_sha256: hash, ..current } });
            store.commit(changes).await?;
        }
        self.ports.bodies.put(&leaf.body_path, document.as_bytes()).await?;
        // The row's fingerprint is of every word: the summary says them all when it matches.
        Ok(fingerprint(&leaf.summary) == leaf.fingerprint)
    }
}

/// A correction refused for what it says or where it is, which the person can act on; the
/// rest (the store failing) is the run's error.
fn is_refusal(error: &AppError) -> bool {
    matches!(
        error,
        AppError::InvalidRequest(_)
            | AppError::InvalidEvent(_)
            | AppError::Correction(_)
            | AppError::NotNow(_)
            | AppError::ReadOnlyLayer { .. }
            | AppError::NeedsPerson { .. }
            | AppError::Port(Error::NotFound { .. })
    )
}
