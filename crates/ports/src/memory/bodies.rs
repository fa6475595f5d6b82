//! The in-memory body store: the reference implementation of [`BodyStore`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use arbor_domain::model::ContentHash;
use arbor_domain::paths::BodyPath;
use async_trait::async_trait;

use crate::bodies::BodyStore;
use crate::error::{Error, Result};

const BACKEND: &str = "memory";

#[derive(Debug, Default)]
pub struct InMemoryBodyStore {
    bodies: Mutex<BTreeMap<BodyPath, Vec<u8>>>,
}

impl InMemoryBodyStore {
    pub fn new() -> InMemoryBodyStore {
        InMemoryBodyStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<BodyPath, Vec<u8>>> {
        self.bodies.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Overwrites a body without updating any hash: a stand-in for a person editing the file,
    /// or for corruption, in tests.
    pub fn tamper(&self, path: &BodyPath, contents: &[u8]) {
        self.lock().insert(path.clone(), contents.to_vec());
    }
}

#[async_trait]
impl BodyStore for InMemoryBodyStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put(&self, path: &BodyPath, contents: &[u8]) -> Result<ContentHash> {
        self.lock().insert(path.clone(), contents.to_vec());
        Ok(ContentHash::of(contents))
    }

    async fn create_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        let mut bodies = self.lock();
        // Checked before anything is written, under the one lock: all or none.
        if let Some((path, _)) = documents.iter().find(|(path, _)| bodies.contains_key(path)) {
            return Err(Error::AlreadyExists { what: "body", id: path.to_string() });
        }
        let mut hashes = Vec::with_capacity(documents.len());
        for (path, contents) in documents {
            bodies.insert(path.clone(), contents.clone());
            hashes.push(ContentHash::of(contents));
        }
        Ok(hashes)
    }

    async fn get(&self, path: &BodyPath, expected: &ContentHash) -> Result<Vec<u8>> {
        let bytes = self.lock().get(path).cloned().ok_or_else(|| Error::not_found("body", path))?;
        let actual = ContentHash::of(&bytes);
        if &actual != expected {
            return Err(Error::Integrity {
                what: "body",
                id: path.to_string(),
                detail: format!("sha256 is {actual}, expected {expected}"),
            });
        }
        Ok(bytes)
    }

    async fn delete(&self, path: &BodyPath) -> Result<bool> {
        Ok(self.lock().remove(path).is_some())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<BodyPath>> {
        Ok(self.lock().keys().filter(|p| p.as_str().starts_with(prefix)).cloned().collect())
    }

    async fn read_unverified(&self, path: &BodyPath) -> Result<Vec<u8>> {
        self.lock().get(path).cloned().ok_or_else(|| Error::not_found("body", path))
    }

    async fn prune_empty(&self, _prefix: &str) -> Result<()> {
        // Paths are keys: nothing outlives the documents.
        Ok(())
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        let needle = needle.as_bytes();
        Ok(self.lock().values().any(|bytes| !needle.is_empty() && bytes.windows(needle.len()).any(|w| w == needle)))
    }
}
