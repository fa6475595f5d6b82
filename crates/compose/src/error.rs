//! `ComposeError`: what opening, configuring and keeping a store on disk fails with, by kind,
//! so that a caller can tell a store another process holds from settings that need mending
//! from a disk that refused a write, and a `--json` reply can say which.
//!
//! Each error says what Arbor was doing ("opening the database in ./memory") and keeps what
//! went wrong underneath as its source, as the reports people read print them: `{:#}` gives
//! "opening the database in ./memory: database is locked".

use std::error::Error;
use std::path::PathBuf;

use arbor_app::AppError;

/// Why a store could not be opened, configured or kept.
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    /// A file or directory of the store could not be read or written.
    #[error("{doing}")]
    Io {
        doing: String,
        #[source]
        source: std::io::Error,
    },
    /// A database or index (SQLite, Postgres, LanceDB) could not be opened or created.
    #[error("{doing}")]
    Backend {
        doing: String,
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// The store's database is damaged (it failed its integrity check or cannot be read as a
    /// database); `doing` says how to restore or rebuild it.
    #[error("{doing}")]
    Damaged {
        doing: String,
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// A model (embedder or reasoner) could not be loaded.
    #[error("{doing}")]
    Model {
        doing: String,
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// The engine failed while Arbor was doing something on its behalf.
    #[error("{doing}")]
    Engine {
        doing: String,
        #[source]
        source: AppError,
    },
    /// The engine refused or failed.
    #[error(transparent)]
    App(#[from] AppError),
    /// One of the steps above failed while Arbor was doing something larger.
    #[error("{doing}")]
    During {
        doing: String,
        #[source]
        source: Box<ComposeError>,
    },
    /// The store's settings (`arbor.json`) say something Arbor cannot use; `reason` says what,
    /// naming the file.
    #[error("{reason}")]
    Settings { path: PathBuf, reason: String },
    /// The store cannot be used as asked, and the message says what to do instead (a directory
    /// that is not a store, a database that was lost, a backend this build lacks, a name that
    /// is not allowed).
    #[error("{0}")]
    Refused(String),
    /// Another process holds what this one needs (a consolidation pass).
    #[error("{0}")]
    Busy(String),
}

impl ComposeError {
    /// A short, stable name of the kind, for replies programs read (`--json`).
    pub fn code(&self) -> &'static str {
        match self {
            ComposeError::Io { .. } => "io",
            // A store that does not answer, is newer than this build or failed its integrity
            // check says so: a caller retries the first, upgrades for the second, restores for
            // the third, and cannot act on a bare "backend" for any of them.
            ComposeError::Backend { source, .. } => match port_error_below(source.as_ref()) {
                Some(port @ arbor_ports::Error::Unavailable { .. })
                | Some(port @ arbor_ports::Error::SchemaTooNew { .. }) => port.code(),
                // The database itself failed its check: restore or rebuild, as for `Damaged`.
                Some(arbor_ports::Error::Integrity { what: "database", .. }) => "damaged",
                Some(port @ arbor_ports::Error::Integrity { .. }) => port.code(),
                _ => "backend",
            },
            ComposeError::Damaged { .. } => "damaged",
            ComposeError::Model { .. } => "model",
            ComposeError::Engine { source, .. } | ComposeError::App(source) => source.code(),
            ComposeError::During { source, .. } => source.code(),
            ComposeError::Settings { .. } => "settings",
            ComposeError::Refused(_) => "refused",
            ComposeError::Busy(_) => "busy",
        }
    }

    /// What it says with every cause below it, as `{:#}` prints an `anyhow` error: "opening
    /// the database in ./memory: database is locked".
    pub fn with_causes(&self) -> String {
        arbor_ports::with_causes(self)
    }

    /// Settings that cannot be used: the file, and what is wrong with it (naming the file).
    pub(crate) fn settings(path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> ComposeError {
        ComposeError::Settings { path: path.into(), reason: reason.to_string() }
    }
}

/// The most telling port error in `error` or the causes below it: the first that is more than
/// a bare "backend failed" (an adapter may wrap an `Unavailable` in a `Backend`), else the
/// first.
fn port_error_below<'e>(error: &'e (dyn Error + Send + Sync + 'static)) -> Option<&'e arbor_ports::Error> {
    let mut first = None;
    let mut cause: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(error) = cause {
        match error.downcast_ref::<arbor_ports::Error>() {
            Some(arbor_ports::Error::Backend { .. }) => first = first.or(error.downcast_ref()),
            Some(port) => return Some(port),
            None => {}
        }
        cause = error.source();
    }
    first
}

/// `Result` with a [`ComposeError`].
pub type Result<T, E = ComposeError> = std::result::Result<T, E>;

/// What Arbor was doing when a lower layer failed, by the kind of that layer.
pub(crate) trait Doing<T> {
    /// A file or directory failed.
    fn io(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Doing<T> for std::result::Result<T, std::io::Error> {
    fn io(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ComposeError::Io { doing: doing(), source })
    }
}

/// A database, index or model failed: any error type.
pub(crate) trait DoingWith<T, E> {
    fn backend(self, doing: impl FnOnce() -> String) -> Result<T>;
    fn model(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<Box<dyn Error + Send + Sync>>> DoingWith<T, E> for std::result::Result<T, E> {
    fn backend(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ComposeError::Backend { doing: doing(), source: source.into() })
    }

    fn model(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ComposeError::Model { doing: doing(), source: source.into() })
    }
}

/// One of this crate's own steps failed while Arbor was doing something larger.
pub(crate) trait During<T> {
    fn during(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T> During<T> for Result<T> {
    fn during(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ComposeError::During { doing: doing(), source: Box::new(source) })
    }
}

/// The engine failed while Arbor was doing something.
pub(crate) trait DoingInEngine<T> {
    fn engine(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T> DoingInEngine<T> for std::result::Result<T, AppError> {
    fn engine(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ComposeError::Engine { doing: doing(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store's own kind of failure shows through the layers above it, found anywhere below.
    #[test]
    fn a_store_error_keeps_the_kind_a_caller_acts_on() {
        let kind = |source: arbor_ports::Error| {
            let error: Result<()> = Err(source).backend(|| "opening the database".to_owned());
            error.unwrap_err().code()
        };
        let unavailable =
            || arbor_ports::Error::Unavailable { backend: "postgres", source: "connection refused".into() };
        assert_eq!(kind(unavailable()), "unavailable");
        assert_eq!(
            kind(arbor_ports::Error::SchemaTooNew { backend: "sqlite", found: 9, supported: 8 }),
            "schema_too_new"
        );
        let integrity = |what| arbor_ports::Error::Integrity { what, id: "x".into(), detail: "bad".into() };
        assert_eq!(kind(integrity("database")), "damaged");
        assert_eq!(kind(integrity("leaf body")), "integrity");
        assert_eq!(kind(arbor_ports::Error::backend("sqlite", "syntax error")), "backend");
        #[derive(Debug, thiserror::Error)]
        #[error("migrating")]
        struct Wrapper(#[source] arbor_ports::Error);
        let wrapped: Result<()> = Err(Wrapper(unavailable())).backend(|| "opening the database".to_owned());
        assert_eq!(wrapped.unwrap_err().code(), "unavailable", "found below a wrapper too");
        assert_eq!(kind(arbor_ports::Error::backend("postgres", unavailable())), "unavailable", "below a bare backend");
        let during: Result<()> = Err(std::io::Error::other("x")).io(|| "writing".to_owned());
        assert_eq!(during.during(|| "saving".to_owned()).unwrap_err().code(), "io");
    }

    /// Read as people read errors (`{:#}` through anyhow), a kind says what Arbor was doing
    /// and then what went wrong, once.
    #[test]
    fn an_error_says_what_was_being_done_then_why() {
        let error = std::fs::read("/nonexistent/arbor.json").io(|| "reading /nonexistent/arbor.json".to_owned());
        let error = anyhow::Error::from(error.unwrap_err());
        let text = format!("{error:#}");
        assert!(text.starts_with("reading /nonexistent/arbor.json: "), "{text}");
        assert_eq!(text.matches("reading").count(), 1, "{text}");
        let typed = error.downcast_ref::<ComposeError>().expect("a ComposeError");
        assert_eq!(typed.code(), "io");
        assert_eq!(typed.with_causes(), text);
    }
}
