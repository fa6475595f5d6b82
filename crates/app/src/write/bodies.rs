//! Writing bodies so that a crash never leaves one unreferenced: announce them (a body intent,
//! committed first), write them durably, then commit the rows that refer to them together
//! with clearing the intent. If anything fails the bodies are removed; if the process dies,
//! [`Arbor::recover`] finds the intent and removes them.

use arbor_domain::id::{JobId, NodeId};
use arbor_domain::model::ContentHash;
use arbor_domain::paths::BodyPath;
use arbor_ports::{BodyIntent, Change, ChangeSet};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// Bodies written under an intent, waiting for the commit that refers to them.
#[derive(Debug)]
pub(crate) struct WrittenBodies {
    intent: JobId,
    paths: Vec<BodyPath>,
    pub(crate) hashes: Vec<ContentHash>,
}

/// What recovery cleaned up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Intents of writers that died before committing.
    pub intents_cleared: usize,
    /// Body files those writers had written.
    pub bodies_removed: usize,
    /// Copies of their text those writers left while being interrupted mid-write.
    pub interrupted_writes_removed: usize,
    /// Intents left alone because their writer may still be running.
    pub intents_in_progress: usize,
}

impl Arbor {
    /// Announces, then durably writes, `documents`.
    pub(crate) async fn write_bodies(&self, documents: Vec<(BodyPath, Vec<u8>)>) -> AppResult<WrittenBodies> {
        let now = self.now();
        let intent = BodyIntent {
            id: self.new_job_id(now),
            owner: self.options.owner.clone(),
            created_at: now,
            paths: documents.iter().map(|(path, _)| path.clone()).collect(),
        };
        let id = intent.id.clone();
        let paths = intent.paths.clone();
        self.ports.store.commit(ChangeSet::new().with(Change::AddBodyIntent(intent))).await?;
        // New bodies never replace a file: what abandon and recovery remove is then only ever
        // what this writer made.
        match self.ports.bodies.create_many(&documents).await {
            Ok(hashes) => Ok(WrittenBodies { intent: id, paths, hashes }),
            // A path already held a body (two writers chose one id): that file is another
            // writer's, and none of these were left, so only the intent goes.
            Err(error @ arbor_ports::Error::AlreadyExists { .. }) => {
                tracing::warn!(error = %arbor_ports::with_causes(&error), "a new body's path was taken; nothing was written");
                let clear = ChangeSet::new().with(Change::ClearBodyIntent { id });
                if let Err(error) = self.ports.store.commit(clear).await {
                    tracing::warn!(error = %arbor_ports::with_causes(&error), "could not clear a body intent; recovery will");
                }
                Err(error.into())
            }
            Err(error) => {
                self.abandon(WrittenBodies { intent: id, paths, hashes: Vec::new() }).await;
                Err(error.into())
            }
        }
    }

    /// Commits `changes` and clears the intent of `written` in the same transaction; if the
    /// commit fails, removes the bodies and the intent.
    pub(crate) async fn commit_with_bodies(
        &self,
        mut changes: ChangeSet,
        written: Option<WrittenBodies>,
    ) -> AppResult<()> {
        if let Some(written) = &written {
            changes.push(Change::ClearBodyIntent { id: written.intent.clone() });
        }
        match self.ports.store.commit(changes).await {
            Ok(()) => Ok(()),
            Err(error) => {
                if let Some(written) = written {
                    self.abandon(written).await;
                }
                Err(AppError::Port(error))
            }
        }
    }

    /// Removes bodies whose rows will never be committed, then their intent. Failures are left
    /// for recovery, which repeats exactly this.
    ///
    /// A commit that reported an error may still have landed (a connection lost while the
    /// server committed): its rows then refer to these bodies, and the same commit cleared
    /// the intent. So the intent is looked up first, and bodies are removed only while it is
    /// still there; when that cannot be told, they are left for recovery to decide.
    async fn abandon(&self, written: WrittenBodies) {
        match self.ports.store.body_intents().await {
            Ok(intents) if !intents.iter().any(|i| i.id == written.intent) => {
                tracing::warn!(intent = %written.intent, "a commit reported failure but landed; its bodies stay");
                return;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(error = %arbor_ports::with_causes(&error), "could not tell whether a failed commit landed; recovery will clean up");
                return;
            }
        }
        for path in &written.paths {
            if let Err(error) = self.ports.bodies.delete(path).await {
                tracing::warn!(path = %path, error = %arbor_ports::with_causes(&error), "could not remove an uncommitted body; recovery will");
                return;
            }
        }
        let clear = ChangeSet::new().with(Change::ClearBodyIntent { id: written.intent });
        if let Err(error) = self.ports.store.commit(clear).await {
            tracing::warn!(error = %arbor_ports::with_causes(&error), "could not clear a body intent; recovery will");
        }
    }

    /// Whether a committed leaf or summary has its body at `path`.
    async fn body_is_referenced(&self, path: &BodyPath) -> AppResult<bool> {
        let Some((namespace, node)) = path.node() else { return Ok(false) };
        let scope = std::slice::from_ref(&namespace);
        let at = match node {
            NodeId::Leaf(id) => self.ports.store.leaf(scope, &id).await?.map(|leaf| leaf.body_path),
            NodeId::Summary(id) => self.ports.store.summary(scope, &id).await?.map(|summary| summary.body_path),
        };
        Ok(at.as_ref() == Some(path))
    }

    /// Cleans up after writers that died between announcing bodies and committing them.
    /// `is_dead` decides, per intent, whether its writer is gone (the caller knows how to tell
    /// on its platform); intents of live writers are left alone.
    pub async fn recover(&self, is_dead: &(dyn Fn(&BodyIntent) -> bool + Sync)) -> AppResult<RecoveryReport> {
        let mut report = RecoveryReport::default();
        for intent in self.ports.store.body_intents().await? {
            if intent.owner != self.options.owner && !is_dead(&intent) {
                report.intents_in_progress += 1;
                continue;
            }
            // A writer killed between writing a body's temporary copy and putting it in place
            // left the copy, holding the text, where no body is.
            let writer_pid = intent.owner.rsplit_once('/').and_then(|(_, pid)| pid.parse::<u32>().ok());
            for path in &intent.paths {
                // A body a committed row refers to is not the dead writer's to remove, whatever
                // its intent says (two writers that chose one id: the other one's commit won).
                if !self.body_is_referenced(path).await? && self.ports.bodies.delete(path).await? {
                    report.bodies_removed += 1;
                }
                if let Some(pid) = writer_pid {
                    report.interrupted_writes_removed +=
                        self.ports.bodies.remove_interrupted_writes_of(path, pid).await?;
                }
            }
            self.ports.store.commit(ChangeSet::new().with(Change::ClearBodyIntent { id: intent.id })).await?;
            report.intents_cleared += 1;
        }
        Ok(report)
    }
}
