//! Turning Postgres errors into the ports' backend-neutral errors.

use arbor_ports::Error;

pub(crate) const BACKEND: &str = "postgres";

/// What a unique constraint protects, by its name in the schema.
fn duplicated(constraint: &str) -> &'static str {
    match constraint {
        "leaves_pkey" => "leaf",
        "leaves_live_fingerprint" => "leaf fingerprint",
        "entities_pkey" => "entity",
        "entities_slug" => "entity slug",
        "summaries_pkey" => "summary",
        "jobs_pkey" => "job",
        "body_intents_pkey" => "body intent",
        "retrievals_pkey" => "retrieval",
        _ => "record",
    }
}

/// Maps a sqlx error: unique violations become `AlreadyExists` (naming what was duplicated);
/// deadlocks, serialization failures, lost connections and pool timeouts `Unavailable` (the
/// operation may be retried); anything else `Backend`.
pub(crate) fn sql_error(error: sqlx::Error) -> Error {
    match &error {
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            if code == "23505" {
                let what = duplicated(db.constraint().unwrap_or_default());
                return Error::AlreadyExists { what, id: db.message().to_owned() };
            }
            // 40001 serialization failure, 40P01 deadlock, 55P03 lock not available, 57P01-3
            // shutdown, 08xxx connection exceptions.
            if matches!(&*code, "40001" | "40P01" | "55P03" | "57P01" | "57P02" | "57P03") || code.starts_with("08") {
                return Error::Unavailable { backend: BACKEND, source: Box::new(error) };
            }
        }
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => {
            return Error::Unavailable { backend: BACKEND, source: Box::new(error) };
        }
        _ => {}
    }
    Error::backend(BACKEND, error)
}

/// Whether a failed transaction may simply be run again: it lost a deadlock or a
/// serialization race, and nothing of it was applied.
pub(crate) fn is_retryable(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40001" | "40P01")))
}
