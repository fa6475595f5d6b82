//! The body store port: markdown documents, the source of truth for long text [design §bodies].

use std::fmt;

use arbor_domain::model::ContentHash;
use arbor_domain::paths::BodyPath;
use async_trait::async_trait;

use crate::error::{Error, Result};

/// Stores node bodies by [`BodyPath`].
///
/// # Contract
///
/// - **Atomic writes.** [`put`](Self::put) and [`put_many`](Self::put_many) replace each whole
///   document or leave the old one; a reader never sees a partial document, and a crash never
///   leaves one behind at `path`. When they return, the documents are durable.
/// - **Verified reads.** [`get`](Self::get) returns the bytes only if their SHA-256 equals
///   `expected`; otherwise [`Error::Integrity`]. A missing body is [`Error::NotFound`].
/// - **Contained.** Paths are relative and validated ([`BodyPath`]); nothing is read or written
///   outside the store's root.
/// - **Really delete.** After [`delete`](Self::delete), [`contains_text`](Self::contains_text)
///   finds none of the document's text. Deleting a missing body is not an error.
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait]
pub trait BodyStore: Send + Sync + fmt::Debug {
    fn backend(&self) -> &'static str;

    /// Writes a document and returns its SHA-256.
    async fn put(&self, path: &BodyPath, contents: &[u8]) -> Result<ContentHash>;

    /// Writes many documents, each atomically, all durable when this returns; returns their
    /// hashes in order. Backends override it to pay for durability once per batch.
    async fn put_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        let mut hashes = Vec::with_capacity(documents.len());
        for (path, contents) in documents {
            hashes.push(self.put(path, contents).await?);
        }
        Ok(hashes)
    }

    /// Writes documents that must be new, as [`put_many`](Self::put_many) does, but never
    /// replaces one: when a path already holds a document, that document is left as it was,
    /// none of this call's documents stay, and the error is [`Error::AlreadyExists`]. The
    /// write path uses it for the bodies of the nodes it creates, so that cleaning up after a
    /// commit that failed removes only files it made — never a body another writer's rows
    /// refer to, even if two writers were to choose one id.
    async fn create_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>>;

    async fn get(&self, path: &BodyPath, expected: &ContentHash) -> Result<Vec<u8>>;

    /// Returns whether a document was there.
    async fn delete(&self, path: &BodyPath) -> Result<bool>;

    /// Every document whose path starts with `prefix`, sorted.
    async fn list(&self, prefix: &str) -> Result<Vec<BodyPath>>;

    /// A document as stored, whatever its hash: for looking at files no row vouches for
    /// (`fsck`'s orphans, rebuilding rows from bodies). Everything else reads with
    /// [`get`](Self::get). A missing body is [`Error::NotFound`].
    async fn read_unverified(&self, path: &BodyPath) -> Result<Vec<u8>>;

    /// How many bytes a document takes, whatever its hash: for reporting what a store holds
    /// (`arbor health`). A missing body is [`Error::NotFound`]. Backends that can tell without
    /// reading the document override it.
    async fn size(&self, path: &BodyPath) -> Result<u64> {
        Ok(self.read_unverified(path).await?.len() as u64)
    }

    /// Removes what holding documents under `prefix` left behind once they are all gone (on a
    /// filesystem, the empty directories, whose names carry tree ids). Documents are never
    /// touched; a store with nothing of the kind does nothing.
    async fn prune_empty(&self, prefix: &str) -> Result<()>;

    async fn contains_text(&self, needle: &str) -> Result<bool>;

    /// What interrupted writes left behind: copies of bodies that were never put in place (on
    /// a filesystem, temporary files of a process killed before its rename). They hold the
    /// text of the body they were becoming, so `fsck` reports them and removes stale ones. A
    /// store whose writes cannot be interrupted that way has none.
    async fn interrupted_writes(&self) -> Result<Vec<InterruptedWrite>> {
        Ok(Vec::new())
    }

    /// Removes one thing [`interrupted_writes`](Self::interrupted_writes) reported; returns
    /// whether it was there.
    async fn remove_interrupted_write(&self, location: &str) -> Result<bool> {
        let _ = location;
        Ok(false)
    }

    /// Removes what process `writer_pid` left while writing `path` and being interrupted: for
    /// recovery, once that writer is known to be gone. Its body may never have been put in
    /// place, so [`delete`](Self::delete), which looks beside bodies that exist, would not find
    /// them. Another writer's copies stay. Returns how many went.
    async fn remove_interrupted_writes_of(&self, path: &BodyPath, writer_pid: u32) -> Result<usize> {
        let _ = (path, writer_pid);
        Ok(0)
    }
}

/// A copy of a body an interrupted write left (see [`BodyStore::interrupted_writes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterruptedWrite {
    /// Where it is, relative to the store's root: for messages, and for removing it.
    pub location: String,
    /// The file name of the body it was becoming, when its own name says.
    pub target: Option<String>,
    /// The process that was writing it, when its name says.
    pub writer_pid: Option<u32>,
    /// How long ago it was last written.
    pub age: std::time::Duration,
}

/// Conveniences every body store gets for free.
#[async_trait]
pub trait BodyStoreExt: BodyStore {
    /// Reads a verified document as UTF-8.
    async fn get_string(&self, path: &BodyPath, expected: &ContentHash) -> Result<String> {
        let bytes = self.get(path, expected).await?;
        String::from_utf8(bytes).map_err(|e| Error::Integrity {
            what: "body",
            id: path.to_string(),
            detail: format!("not UTF-8: {e}"),
        })
    }
}

impl<T: BodyStore + ?Sized> BodyStoreExt for T {}
