//! Turning SQLite errors into the ports' backend-neutral errors.

use arbor_ports::Error;
use rusqlite::ErrorCode;

pub(crate) const BACKEND: &str = "sqlite";

/// Maps a rusqlite error: constraint violations become `AlreadyExists` (naming what was
/// duplicated), a damaged file `Integrity`, lock timeouts `Unavailable`, anything else
/// `Backend`.
pub(crate) fn sql_error(error: rusqlite::Error) -> Error {
    if let rusqlite::Error::SqliteFailure(failure, message) = &error {
        match failure.code {
            ErrorCode::ConstraintViolation => {
                let message = message.clone().unwrap_or_default();
                let what = if message.contains("leaves.fingerprint") {
                    "leaf fingerprint"
                } else if message.contains("entities.slug") {
                    "entity slug"
                } else if message.contains("leaves.id") {
                    "leaf"
                } else if message.contains("summaries.id") {
                    "summary"
                } else if message.contains("entities.id") {
                    "entity"
                } else if message.contains("jobs.id") {
                    "job"
                } else {
                    "record"
                };
                return Error::AlreadyExists { what, id: message };
            }
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                return Error::Integrity {
                    what: "database",
                    id: "sqlite".to_owned(),
                    detail: format!("the SQLite file is damaged ({error})"),
                };
            }
            ErrorCode::DiskFull => {
                let full = format!("the disk holding the database is full; nothing was written ({error})");
                return Error::Unavailable { backend: BACKEND, source: full.into() };
            }
            ErrorCode::ReadOnly => {
                let read_only = format!(
                    "the database cannot be written here (a read-only filesystem or file); commands that only read \
                     still work ({error})"
                );
                return Error::Unavailable { backend: BACKEND, source: read_only.into() };
            }
            // Opening the file, its log or its lock for writing was refused: permissions, an
            // immutable file or directory, a directory that is gone.
            ErrorCode::CannotOpen => {
                let cannot = format!(
                    "the database or its log cannot be opened for writing here (a read-only filesystem, \
                     permissions, an immutable file or directory, or a directory that is gone); commands that \
                     only read may still work ({error})"
                );
                return Error::Unavailable { backend: BACKEND, source: cannot.into() };
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                // Only after the busy timeout: writers wait for each other's lock first.
                let busy = format!(
                    "the database is busy: another process kept its write lock for longer than the busy timeout \
                     ({error})"
                );
                return Error::Unavailable { backend: BACKEND, source: busy.into() };
            }
            _ => {}
        }
    }
    Error::backend(BACKEND, error)
}

pub(crate) use arbor_ports::rows::corrupt;
