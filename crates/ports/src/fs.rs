//! The filesystem body store: markdown documents under a memory root, written atomically
//! (temporary file, then rename) and made durable before anything refers to them.
//!
//! One document: write a temporary file beside the target, fsync it, rename it over the target,
//! fsync the directory. A batch: write and rename every document, then one `syncfs` for the lot
//! (on Linux; elsewhere an fsync of each file and of each directory it went into)
//! — the caller commits the metadata that refers to them only after `put_many` returns, so a
//! crash in between leaves unreferenced files (which `fsck` removes), never a referenced file
//! that is missing or partial. The bodies of new nodes (`create_many`) are linked into place
//! rather than renamed, so one never replaces a file already there.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_domain::model::ContentHash;
use arbor_domain::paths::BodyPath;
use async_trait::async_trait;

use crate::bodies::{BodyStore, InterruptedWrite};
use crate::error::{Error, Result};

const BACKEND: &str = "filesystem";

/// Prefix of temporary files. A temporary file is named
/// `.arbor-tmp-<pid>-<n>-<target file name>.tmp`, so the delete of a body takes with it what an
/// interrupted write of that body left, and `fsck` can say which body a leftover was becoming.
/// Listings skip them (the name starts with a dot, which no body path segment may).
pub const TEMP_PREFIX: &str = ".arbor-tmp-";
const TEMP_SUFFIX: &str = ".tmp";

/// What a temporary file is named for `target` (a file name), by writer `pid`, the `n`th.
fn temp_name(pid: u32, n: u64, target: &str) -> String {
    format!("{TEMP_PREFIX}{pid}-{n}-{target}{TEMP_SUFFIX}")
}

/// Removes `file`; returns whether it was there (a file already gone is not an error).
fn remove_if_present(file: &Path) -> Result<bool> {
    match fs::remove_file(file) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error(file, error)),
    }
}

/// The writer pid and target file name of a temporary file's name, when it is one. Names
/// from before the target was part of them (`.arbor-tmp-<pid>-<n>`) have no target.
fn parse_temp_name(name: &str) -> Option<(Option<u32>, Option<&str>)> {
    let rest = name.strip_prefix(TEMP_PREFIX)?;
    let mut parts = rest.splitn(3, '-');
    let pid = parts.next().and_then(|p| p.parse().ok());
    let _n = parts.next();
    let target = parts.next().and_then(|t| t.strip_suffix(TEMP_SUFFIX)).filter(|t| !t.is_empty());
    Some((pid, target))
}

/// How [`FsBodyStore::put_many`] makes a batch durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchSync {
    /// One `syncfs` of the filesystem holding the root, after every rename (Linux).
    Filesystem,
    /// An fsync of each file before its rename and of each directory after (anywhere).
    EachFile,
}

/// Flushes the filesystem holding `root`: every write and rename on it is durable after this.
#[cfg(target_os = "linux")]
fn sync_filesystem(root: &Path) -> Result<()> {
    let dir = File::open(root).map_err(|e| io_error(root, e))?;
    rustix::fs::syncfs(&dir).map_err(|e| io_error(root, e.into()))
}

/// Only Linux has `syncfs`; elsewhere [`BatchSync::EachFile`] is used and this is never called.
#[cfg(not(target_os = "linux"))]
fn sync_filesystem(_root: &Path) -> Result<()> {
    Err(Error::Unsupported { operation: "syncfs", backend: BACKEND })
}

/// How a written temporary file takes its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Renamed over the target, which may exist.
    Replace,
    /// Only where nothing is: an existing target is left alone.
    New,
}

/// Puts `temp` at `target` only if nothing is there, atomically: a hard link, which refuses an
/// existing name, then the temporary name goes. On a filesystem without hard links, a check
/// then a rename (another process could, in the instant between, put a file there — on such a
/// filesystem that instant is the best this can do).
fn place_new(temp: &Path, target: &Path) -> std::io::Result<()> {
    match fs::hard_link(temp, target) {
        Ok(()) => {
            // Killed here, the temporary copy stays beside its body, and goes with it or with
            // recovery of its writer's intent, like any interrupted write.
            fs::remove_file(temp)
        }
        Err(error) if error.kind() == ErrorKind::AlreadyExists => Err(error),
        Err(_) if fs::symlink_metadata(target).is_ok() => Err(ErrorKind::AlreadyExists.into()),
        Err(_) => fs::rename(temp, target),
    }
}

/// Bodies under `<root>/memory/...`.
#[derive(Debug)]
pub struct FsBodyStore {
    root: PathBuf,
    /// How a batch is made durable: one `syncfs` where the platform has it (Linux), else an
    /// fsync of every file and of every directory it was renamed into.
    batch_sync: BatchSync,
    /// Directories known to exist, so a batch does not stat the same directory a thousand times.
    known_dirs: Mutex<BTreeSet<PathBuf>>,
    counter: AtomicU64,
}

fn io_error(path: &Path, error: std::io::Error) -> Error {
    Error::backend(BACKEND, std::io::Error::new(error.kind(), format!("{}: {error}", path.display())))
}

impl FsBodyStore {
    /// A body store rooted at `root` (the memory root, which holds `memory/`). The directory
    /// must exist.
    pub fn open(root: impl Into<PathBuf>) -> Result<FsBodyStore> {
        let root = root.into();
        let meta = fs::metadata(&root).map_err(|e| io_error(&root, e))?;
        if !meta.is_dir() {
            return Err(Error::invalid("body store root", format!("{} is not a directory", root.display())));
        }
        let batch_sync = if cfg!(target_os = "linux") { BatchSync::Filesystem } else { BatchSync::EachFile };
        Ok(FsBodyStore { root, batch_sync, known_dirs: Mutex::new(BTreeSet::new()), counter: AtomicU64::new(0) })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file a body path names. Built segment by segment from a validated [`BodyPath`], so
    /// it is always below the root.
    pub fn file_path(&self, path: &BodyPath) -> PathBuf {
        let mut file = self.root.clone();
        for segment in path.segments() {
            file.push(segment);
        }
        file
    }

    fn ensure_dir(&self, dir: &Path) -> Result<()> {
        let mut known = self.known_dirs.lock().unwrap_or_else(|e| e.into_inner());
        if known.contains(dir) {
            return Ok(());
        }
        fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        known.insert(dir.to_path_buf());
        Ok(())
    }

    fn temp_path(&self, target: &Path) -> PathBuf {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let target_name = target.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        target.with_file_name(temp_name(std::process::id(), n, target_name))
    }

    /// Writes `contents` to a temporary file and renames it over `target`; syncs the file first
    /// when `sync` is set.
    fn write_and_rename(&self, target: &Path, contents: &[u8], sync: bool) -> Result<()> {
        self.write_then_place(target, contents, sync, Placement::Replace)
    }

    /// Writes `contents` to a temporary file and puts it at `target` as `placement` says;
    /// syncs the file first when `sync` is set. A [`Placement::New`] onto a file that exists
    /// leaves that file as it was and fails with [`Error::AlreadyExists`].
    fn write_then_place(&self, target: &Path, contents: &[u8], sync: bool, placement: Placement) -> Result<()> {
        let dir = target.parent().ok_or_else(|| Error::invalid("body path", "has no directory"))?;
        self.ensure_dir(dir)?;
        let temp = self.temp_path(target);
        let create = || match OpenOptions::new().write(true).create_new(true).open(&temp) {
            // Another process removed the (empty) directory after its tree was dissolved, since
            // this one last saw it: make it again.
            Err(error) if error.kind() == ErrorKind::NotFound => {
                fs::create_dir_all(dir)?;
                OpenOptions::new().write(true).create_new(true).open(&temp)
            }
            other => other,
        };
        let result = (|| {
            let mut file = create()?;
            file.write_all(contents)?;
            if sync {
                file.sync_all()?;
            }
            drop(file);
            match placement {
                Placement::Replace => fs::rename(&temp, target),
                Placement::New => place_new(&temp, target),
            }
        })();
        if let Err(error) = result {
            let _ = fs::remove_file(&temp);
            if error.kind() == ErrorKind::AlreadyExists {
                return Err(Error::AlreadyExists { what: "body", id: target.display().to_string() });
            }
            return Err(io_error(target, error));
        }
        Ok(())
    }

    /// Makes the batch of files just placed in `dirs` durable, as [`BatchSync`] says.
    fn sync_batch(&self, dirs: &BTreeSet<PathBuf>) -> Result<()> {
        match self.batch_sync {
            _ if dirs.is_empty() => Ok(()),
            // One flush of the whole filesystem makes every file and rename above durable.
            BatchSync::Filesystem => sync_filesystem(&self.root),
            // Each file was synced before its rename; the renames are durable once their
            // directories are.
            BatchSync::EachFile => dirs.iter().try_for_each(|dir| Self::sync_dir(dir)),
        }
    }

    fn sync_dir(dir: &Path) -> Result<()> {
        File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_error(dir, e))
    }

    fn walk(&self, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(io_error(dir, error)),
        };
        for entry in entries {
            let path = entry.map_err(|e| io_error(dir, e))?.path();
            if path.is_dir() {
                self.walk(&path, out)?;
            } else {
                out.push(path);
            }
        }
        Ok(())
    }

    /// Removes `dir` and every directory below it that holds no file, deepest first. A
    /// directory that holds a file (or gains one meanwhile) stays.
    fn remove_empty_below(&self, dir: &Path) -> Result<bool> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(true),
            Err(error) => return Err(io_error(dir, error)),
        };
        let mut empty = true;
        for entry in entries {
            let entry = entry.map_err(|e| io_error(dir, e))?;
            let path = entry.path();
            let is_dir = entry.file_type().map_err(|e| io_error(&path, e))?.is_dir();
            empty &= is_dir && self.remove_empty_below(&path)?;
        }
        if !empty {
            return Ok(false);
        }
        match fs::remove_dir(dir) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(true),
            // Someone wrote into it meanwhile (ENOTEMPTY): it stays.
            Err(error) if error.kind() == ErrorKind::DirectoryNotEmpty => Ok(false),
            Err(error) => Err(io_error(dir, error)),
        }
    }

    /// The temporary files interrupted writes of `file` left beside it, with their writers.
    fn temp_files_for(&self, file: &Path) -> Result<Vec<(Option<u32>, PathBuf)>> {
        let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else {
            return Ok(Vec::new());
        };
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(io_error(dir, error)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(dir, e))?;
            let entry_name = entry.file_name();
            let Some(entry_name) = entry_name.to_str() else { continue };
            if let Some((pid, Some(target))) = parse_temp_name(entry_name)
                && target == name
            {
                found.push((pid, entry.path()));
            }
        }
        Ok(found)
    }

    /// Every file under `memory/`, including temporary ones, for `fsck`.
    pub fn all_files(&self) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        self.walk(&self.root.join(arbor_domain::paths::MEMORY_DIR), &mut files)?;
        files.sort();
        Ok(files)
    }

    /// The body path of a file under the root, if it is a well-formed one.
    pub fn body_path_of(&self, file: &Path) -> Option<BodyPath> {
        let relative = file.strip_prefix(&self.root).ok()?;
        let joined = relative.iter().map(|s| s.to_str()).collect::<Option<Vec<_>>>()?.join("/");
        BodyPath::parse(&joined).ok()
    }
}

#[async_trait]
impl BodyStore for FsBodyStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put(&self, path: &BodyPath, contents: &[u8]) -> Result<ContentHash> {
        let target = self.file_path(path);
        self.write_and_rename(&target, contents, true)?;
        if let Some(dir) = target.parent() {
            Self::sync_dir(dir)?;
        }
        Ok(ContentHash::of(contents))
    }

    async fn put_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        let mut hashes = Vec::with_capacity(documents.len());
        let each_file = self.batch_sync == BatchSync::EachFile;
        let mut dirs = BTreeSet::new();
        for (path, contents) in documents {
            let target = self.file_path(path);
            self.write_and_rename(&target, contents, each_file)?;
            dirs.extend(target.parent().map(Path::to_path_buf));
            hashes.push(ContentHash::of(contents));
        }
        self.sync_batch(&dirs)?;
        Ok(hashes)
    }

    async fn create_many(&self, documents: &[(BodyPath, Vec<u8>)]) -> Result<Vec<ContentHash>> {
        let mut hashes = Vec::with_capacity(documents.len());
        let each_file = self.batch_sync == BatchSync::EachFile;
        let mut dirs = BTreeSet::new();
        let mut created: Vec<PathBuf> = Vec::with_capacity(documents.len());
        for (path, contents) in documents {
            let target = self.file_path(path);
            if let Err(error) = self.write_then_place(&target, contents, each_file, Placement::New) {
                // None of this call's documents stay; what was there before is untouched.
                for file in &created {
                    let _ = remove_if_present(file);
                }
                return Err(match error {
                    Error::AlreadyExists { what, .. } => Error::AlreadyExists { what, id: path.to_string() },
                    other => other,
                });
            }
            dirs.extend(target.parent().map(Path::to_path_buf));
            created.push(target);
            hashes.push(ContentHash::of(contents));
        }
        self.sync_batch(&dirs)?;
        Ok(hashes)
    }

    async fn get(&self, path: &BodyPath, expected: &ContentHash) -> Result<Vec<u8>> {
        let file = self.file_path(path);
        let bytes = match fs::read(&file) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == ErrorKind::NotFound => return Err(Error::not_found("body", path)),
            Err(error) => return Err(io_error(&file, error)),
        };
        let actual = ContentHash::of(&bytes);
        if &actual != expected {
            return Err(Error::Integrity {
                what: "body",
                id: path.to_string(),
                detail: format!("sha256 is {actual}, expected {expected} (edited or damaged on disk)"),
            });
        }
        Ok(bytes)
    }

    async fn delete(&self, path: &BodyPath) -> Result<bool> {
        let file = self.file_path(path);
        let removed = remove_if_present(&file)?;
        // A later write of this body that was interrupted (killed between writing the
        // temporary file and renaming it over the body) left a copy of its text beside it: that
        // goes too. Looked for only when there was a body, so deleting what is already gone (a
        // purge of a large tree's old bodies) does not list its directory each time; a copy
        // left without any body is fsck's to find.
        if removed {
            for (_, leftover) in self.temp_files_for(&file)? {
                remove_if_present(&leftover)?;
            }
            if let Some(dir) = file.parent() {
                Self::sync_dir(dir)?;
            }
        }
        Ok(removed)
    }

    async fn remove_interrupted_writes_of(&self, path: &BodyPath, writer_pid: u32) -> Result<usize> {
        let file = self.file_path(path);
        let mut removed = 0;
        for (pid, leftover) in self.temp_files_for(&file)? {
            if pid == Some(writer_pid) && remove_if_present(&leftover)? {
                removed += 1;
            }
        }
        if removed > 0
            && let Some(dir) = file.parent()
        {
            Self::sync_dir(dir)?;
        }
        Ok(removed)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<BodyPath>> {
        let mut out: Vec<BodyPath> = self
            .all_files()?
            .iter()
            .filter_map(|file| self.body_path_of(file))
            .filter(|path| path.as_str().starts_with(prefix))
            .collect();
        out.sort();
        Ok(out)
    }

    async fn read_unverified(&self, path: &BodyPath) -> Result<Vec<u8>> {
        let file = self.file_path(path);
        match fs::read(&file) {
            Ok(bytes) => Ok(bytes),
            Err(error) if error.kind() == ErrorKind::NotFound => Err(Error::not_found("body", path)),
            Err(error) => Err(io_error(&file, error)),
        }
    }

    async fn size(&self, path: &BodyPath) -> Result<u64> {
        let file = self.file_path(path);
        match fs::metadata(&file) {
            Ok(meta) => Ok(meta.len()),
            Err(error) if error.kind() == ErrorKind::NotFound => Err(Error::not_found("body", path)),
            Err(error) => Err(io_error(&file, error)),
        }
    }

    async fn prune_empty(&self, prefix: &str) -> Result<()> {
        // Only below the memory root, and only paths made of valid segments.
        let mut dir = self.root.clone();
        for segment in prefix.split('/').filter(|s| !s.is_empty()) {
            if segment == "." || segment == ".." || segment.contains('\\') {
                return Err(Error::invalid("body path prefix", format!("{prefix:?} is not a plain relative path")));
            }
            dir.push(segment);
        }
        if !dir.starts_with(self.root.join(arbor_domain::paths::MEMORY_DIR)) {
            return Err(Error::invalid("body path prefix", format!("{prefix:?} is not under the memory directory")));
        }
        self.remove_empty_below(&dir)?;
        // Forget the directories this process thought existed: a later write re-creates them.
        self.known_dirs.lock().unwrap_or_else(|e| e.into_inner()).retain(|known| !known.starts_with(&dir));
        if let Some(parent) = dir.parent() {
            Self::sync_dir(parent).or_else(|e| if parent.exists() { Err(e) } else { Ok(()) })?;
        }
        Ok(())
    }

    async fn contains_text(&self, needle: &str) -> Result<bool> {
        let needle = needle.as_bytes();
        if needle.is_empty() {
            return Ok(false);
        }
        for file in self.all_files()? {
            let bytes = fs::read(&file).map_err(|e| io_error(&file, e))?;
            if bytes.windows(needle.len()).any(|w| w == needle) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn interrupted_writes(&self) -> Result<Vec<InterruptedWrite>> {
        let mut found = Vec::new();
        for file in self.all_files()? {
            let Some(name) = file.file_name().and_then(|n| n.to_str()) else { continue };
            let Some((writer_pid, target)) = parse_temp_name(name) else { continue };
            let modified = fs::metadata(&file).and_then(|m| m.modified());
            let age = match modified {
                Ok(at) => at.elapsed().unwrap_or_default(),
                // Removed meanwhile: its write finished.
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(error) => return Err(io_error(&file, error)),
            };
            let Ok(relative) = file.strip_prefix(&self.root) else { continue };
            found.push(InterruptedWrite {
                location: relative.to_string_lossy().into_owned(),
                target: target.map(str::to_owned),
                writer_pid,
                age,
            });
        }
        Ok(found)
    }

    async fn remove_interrupted_write(&self, location: &str) -> Result<bool> {
        // Only a temporary file's name, only below the memory root.
        let relative = Path::new(location);
        let is_temp = relative.file_name().and_then(|n| n.to_str()).is_some_and(|n| parse_temp_name(n).is_some());
        let plain = relative.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !is_temp || !plain || !relative.starts_with(arbor_domain::paths::MEMORY_DIR) {
            return Err(Error::invalid(
                "interrupted write",
                format!("{location:?} is not a temporary file under memory/"),
            ));
        }
        let file = self.root.join(relative);
        let removed = remove_if_present(&file)?;
        if removed && let Some(dir) = file.parent() {
            Self::sync_dir(dir)?;
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf_path() -> BodyPath {
        BodyPath::parse("memory/conversation:c1/interaction:uncategorized/tree-1/leaves/leaf-1.md").unwrap()
    }

    /// What a process killed between writing a body's temporary file and renaming it leaves.
    fn leave_interrupted_write(store: &FsBodyStore, path: &BodyPath, text: &str) -> PathBuf {
        let target = store.file_path(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        let temp = store.temp_path(&target);
        fs::write(&temp, text).unwrap();
        temp
    }

    #[test]
    fn temp_names_carry_their_writer_and_target() {
        assert_eq!(parse_temp_name(&temp_name(41, 7, "leaf-1.md")), Some((Some(41), Some("leaf-1.md"))));
        assert_eq!(parse_temp_name(".arbor-tmp-41-7"), Some((Some(41), None)), "the older form");
        assert_eq!(parse_temp_name("leaf-1.md"), None);
    }

    #[tokio::test]
    async fn creating_bodies_leaves_no_temporary_copy_whether_placed_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBodyStore::open(dir.path()).unwrap();
        let path = leaf_path();
        store.create_many(&[(path.clone(), b"first".to_vec())]).await.unwrap();
        let refused = store.create_many(&[(path.clone(), b"second".to_vec())]).await;
        assert!(matches!(refused, Err(Error::AlreadyExists { .. })), "got {refused:?}");
        assert_eq!(store.read_unverified(&path).await.unwrap(), b"first");
        assert!(store.interrupted_writes().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn an_interrupted_write_is_reported_and_goes_with_its_body() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBodyStore::open(dir.path()).unwrap();
        let path = leaf_path();
        store.put(&path, b"the walrus sings").await.unwrap();
        let temp = leave_interrupted_write(&store, &path, "the walrus sings, version two");
        let found = store.interrupted_writes().await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target.as_deref(), Some("leaf-1.md"));
        assert_eq!(found[0].writer_pid, Some(std::process::id()));
        assert!(store.list("").await.unwrap() == vec![path.clone()], "listings skip it");

        assert!(store.delete(&path).await.unwrap());
        assert!(!temp.exists(), "deleting a body deletes what an interrupted write of it left");
        assert!(!store.contains_text("walrus").await.unwrap());
        assert!(store.interrupted_writes().await.unwrap().is_empty());
    }

    /// The batch flush of platforms without `syncfs` (each file, then each directory), run
    /// here so it is built and exercised on the platform CI has.
    #[tokio::test]
    async fn a_batch_is_written_whole_with_either_flush() {
        for batch_sync in [BatchSync::Filesystem, BatchSync::EachFile] {
            let dir = tempfile::tempdir().unwrap();
            let store = FsBodyStore { batch_sync, ..FsBodyStore::open(dir.path()).unwrap() };
            let other =
                BodyPath::parse("memory/conversation:c1/interaction/interaction:uncategorized/leaves/leaf-2.md")
                    .unwrap();
            let documents = vec![(leaf_path(), b"one".to_vec()), (other.clone(), b"two".to_vec())];
            let hashes = store.put_many(&documents).await.unwrap();
            assert_eq!(hashes, vec![ContentHash::of(b"one"), ContentHash::of(b"two")], "{batch_sync:?}");
            assert_eq!(store.get(&other, &hashes[1]).await.unwrap(), b"two", "{batch_sync:?}");
            assert!(store.interrupted_writes().await.unwrap().is_empty(), "{batch_sync:?}: no temporary file stays");
        }
    }

    #[tokio::test]
    async fn a_dead_writers_copy_goes_even_when_its_body_never_arrived() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBodyStore::open(dir.path()).unwrap();
        let path = leaf_path();
        let dead = leave_interrupted_write(&store, &path, "the walrus sings");
        let target = store.file_path(&path);
        let other = target.with_file_name(temp_name(std::process::id() + 1, 1, "leaf-1.md"));
        fs::write(&other, "another writer's").unwrap();

        assert!(!store.delete(&path).await.unwrap(), "there was no body");
        assert!(dead.exists(), "a delete looks beside bodies that exist only");
        assert_eq!(store.remove_interrupted_writes_of(&path, std::process::id()).await.unwrap(), 1);
        assert!(!dead.exists());
        assert!(other.exists(), "another writer's copy is not this writer's to remove");
        assert_eq!(store.remove_interrupted_writes_of(&path, std::process::id()).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn only_temporary_files_under_memory_can_be_removed_as_interrupted_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBodyStore::open(dir.path()).unwrap();
        let path = leaf_path();
        store.put(&path, b"kept").await.unwrap();
        let temp = leave_interrupted_write(&store, &path, "partial");
        for bad in [path.as_str(), "../outside/.arbor-tmp-1-1-x.md.tmp", "config.toml"] {
            assert!(store.remove_interrupted_write(bad).await.is_err(), "{bad} is refused");
        }
        let location = store.interrupted_writes().await.unwrap().remove(0).location;
        assert!(store.remove_interrupted_write(&location).await.unwrap());
        assert!(!temp.exists());
        assert!(store.file_path(&path).exists(), "the body itself stays");
    }
}
