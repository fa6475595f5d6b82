//! The port through which the memory centre reads and rewrites the store's settings file.

use crate::port_failure::PortFailure;

/// The store's settings file (`arbor.json`), read and rewritten for the memory centre. The
/// composition root implements it: only it knows how `arbor` checks a settings file, so a
/// file written here is one the next start accepts.
pub trait SettingsFile: Send + Sync + std::fmt::Debug {
    /// The file as it is on disk.
    fn read(&self) -> Result<String, PortFailure>;

    /// Checks `text` as opening the store would and replaces the file with it whole, or
    /// leaves the file as it was: `Err` says why, in words for the person who wrote it.
    fn write(&self, text: &str) -> Result<(), SettingsRefused>;
}

/// Why new settings were not written.
#[derive(Debug)]
pub enum SettingsRefused {
    /// The text is not settings `arbor` would open the store with.
    Invalid(String),
    /// The file could not be written (the disk, permissions).
    Failed(PortFailure),
}
