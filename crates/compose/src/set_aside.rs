//! Damaged SQLite databases: the mark a failed integrity check leaves, and the copies
//! `fsck --rebuild-from-bodies` sets aside (which a forget must still reach).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Doing, Result};
use arbor_domain::time::Timestamp;

use crate::config::DATABASE_FILE;

/// Whether the store's SQLite file carries the mark of a failed integrity check.
pub fn marked_damaged(root: &Path) -> bool {
    arbor_adapters_sqlite::damage_marker(&root.join(DATABASE_FILE)).exists()
}

/// Moves a damaged SQLite database aside (with its log), so a rebuild starts from a new one;
/// returns where it went.
pub fn move_damaged_database_aside(root: &Path) -> Result<PathBuf> {
    let stamp = Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string();
    let aside = root.join(format!("{DATABASE_FILE}.damaged-{stamp}"));
    for suffix in ["", "-wal", "-shm"] {
        let from = root.join(format!("{DATABASE_FILE}{suffix}"));
        if from.exists() {
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&from, &to).io(|| format!("moving {} aside", from.display()))?;
        }
    }
    let marker = arbor_adapters_sqlite::damage_marker(&root.join(DATABASE_FILE));
    if marker.exists() {
        std::fs::remove_file(&marker).io(|| format!("removing {}", marker.display()))?;
    }
    Ok(aside)
}

/// The damaged databases `fsck --rebuild-from-bodies` set aside in the store (each with the log
/// and shared-memory files beside it).
fn set_aside_databases(root: &Path) -> Result<Vec<PathBuf>> {
    let prefix = format!("{DATABASE_FILE}.damaged-");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).io(|| format!("reading {}", root.display()))? {
        let path = entry.io(|| format!("reading {}", root.display()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with(&prefix) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// What fsck says of each set-aside damaged database: it is there, and may hold memories
/// forgotten since (a forget removes a copy only when it finds the memory's id in it, which
/// damage can have blurred). Deleting one is the person's decision; fsck never does.
pub fn set_aside_database_findings(root: &Path) -> Result<Vec<arbor_app::Finding>> {
    let mut findings = Vec::new();
    for file in set_aside_databases(root)? {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name.ends_with("-wal") || name.ends_with("-shm") {
            continue;
        }
        let finding = arbor_app::Finding::new(
            arbor_app::FindingKind::SetAsideDatabase,
            name,
            "a damaged database a rebuild set aside; it may still hold memories forgotten since",
        )
        .remedy(format!(
            "delete it (and any -wal/-shm beside it) once nothing in it is needed: rm {}*",
            file.display()
        ));
        findings.push(finding);
    }
    Ok(findings)
}

/// Whether `file` holds any of `needles`, read a megabyte at a time (a database can be large).
fn file_holds_any(file: &Path, needles: &[&[u8]]) -> Result<bool> {
    use std::io::Read;
    let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0);
    if longest == 0 {
        return Ok(false);
    }
    let mut reader = std::fs::File::open(file).io(|| format!("reading {}", file.display()))?;
    let mut window: Vec<u8> = Vec::with_capacity((1 << 20) + longest);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let read = reader.read(&mut chunk).io(|| format!("reading {}", file.display()))?;
        if read == 0 {
            return Ok(false);
        }
        window.extend_from_slice(&chunk[..read]);
        if needles.iter().any(|n| !n.is_empty() && window.windows(n.len()).any(|w| w == *n)) {
            return Ok(true);
        }
        // Keep the tail a needle could straddle into the next read.
        let keep = window.len().min(longest - 1);
        window.drain(..window.len() - keep);
    }
}

/// Removes the set-aside damaged databases that hold any of `needles` (the ids of forgotten
/// memories): a damaged copy cannot be edited, and after a forget no file in the store may
/// keep the memory. Copies that never held it stay. Returns the files removed.
pub fn erase_from_set_aside_databases(root: &Path, needles: &[String]) -> Result<Vec<PathBuf>> {
    let needles: Vec<&[u8]> = needles.iter().map(|n| n.as_bytes()).collect();
    let files = set_aside_databases(root)?;
    let mut holding = Vec::new();
    for file in &files {
        if file_holds_any(file, &needles)? {
            holding.push(file.clone());
        }
    }
    // A copy's log and shared-memory files go with it (they are named after it).
    let copy_of = |file: &Path| {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        name.strip_suffix("-wal").or_else(|| name.strip_suffix("-shm")).map(str::to_owned).unwrap_or(name)
    };
    let doomed: BTreeSet<String> = holding.iter().map(|file| copy_of(file)).collect();
    let mut removed = Vec::new();
    for file in files.iter().filter(|file| doomed.contains(&copy_of(file))) {
        std::fs::remove_file(file).io(|| format!("removing {}", file.display()))?;
        removed.push(file.clone());
    }
    Ok(removed)
}
