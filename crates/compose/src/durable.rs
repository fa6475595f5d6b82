//! Replacing a small file whole or not at all — the store's configuration, its tokens,
//! consolidation reports, an export — so a reader (or a restart after a crash) sees the old
//! file or the whole new one, never a part, and nothing acknowledged is lost to a power cut.

#[cfg(unix)]
use std::fs::File;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::error::{ComposeError, Doing, Result};

/// Who may read the file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// As the umask allows (configuration, reports, exports).
    Anyone,
    /// This user only (mode 0600): tokens and other secrets.
    OwnerOnly,
}

/// Writes `contents` to `path` durably: a temporary file of this writer's own beside it (two
/// writers never share one), synced, renamed over `path`, and the directory synced so the
/// rename itself survives a crash. On failure the temporary file is removed and `path` is as
/// it was.
pub fn replace_file(path: &Path, contents: &[u8], readers: Readers) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(ComposeError::Refused(format!("{} names no file to write", path.display())));
    };
    let temporary = dir.join(format!(".{name}.{}-{:x}.tmp", std::process::id(), writer_suffix()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if readers == Readers::OwnerOnly {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    // Only a file this call created is removed on failure: never another writer's.
    let mut file = options.open(&temporary).io(|| format!("writing {}", temporary.display()))?;
    let written = file.write_all(contents).and_then(|()| file.sync_all()).and_then(|()| {
        drop(file);
        std::fs::rename(&temporary, path)
    });
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).io(|| format!("writing {}", path.display()));
    }
    // The file is in place: a failed directory sync only leaves the rename less sure to
    // survive a power cut, so it is said, not returned as a failure of a write that happened.
    #[cfg(unix)]
    if let Err(error) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::warn!(%error, dir = %dir.display(), "could not sync the directory after replacing a file");
    }
    Ok(())
}

/// Tells this writer's temporary file from another thread's in the same process.
fn writer_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arbor.json");
        replace_file(&path, b"old", Readers::Anyone).unwrap();
        replace_file(&path, b"new", Readers::Anyone).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["arbor.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        replace_file(&path, b"{}", Readers::OwnerOnly).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        replace_file(&path, b"old", Readers::Anyone).unwrap();
        // A directory where the file should go: the rename fails.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("keep"), b"x").unwrap();
        assert!(replace_file(&blocked, b"new", Readers::Anyone).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        let temporaries = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"));
        assert_eq!(temporaries.count(), 0);
    }
}
