//! The operations both servers offer, bound to one read chain: wire inputs in, app calls,
//! wire outputs or an [`ApiError`] with a stable code out.
//!
//! The rooms: `errors` (ApiError and its codes), `fields` (checks on input fields), `reads`,
//! `writes`, `background` (jobs and hand edits); this file holds the `Service` and how it is
//! made.

use arbor_app::Arbor;
use arbor_domain::model::Actor;
use arbor_domain::read_chain::ReadChain;

mod background;
mod errors;
mod fields;
mod reads;
#[cfg(test)]
mod tests;
mod writes;

pub(crate) use errors::{ApiError, ApiResult};
pub(crate) use fields::{in_range, kind, mirror, tree};

/// The engine, and the read chain and speaker every request runs under.
#[derive(Debug)]
pub struct Service {
    /// Shared by every binding to the same store (a tenant's tokens).
    arbor: std::sync::Arc<Arbor>,
    chain: ReadChain,
    /// Who the words sent to this server are from, fixed when it starts.
    speaker: Actor,
    /// Where the store keeps its consolidation reports, when it has any.
    reports: Option<std::path::PathBuf>,
    /// How a person confirms what waits: at the store's command line, or (a multi-tenant
    /// server's stores) with an operator's token over HTTP.
    review: ReviewBy,
    /// The store's settings file, for the memory centre, when this server may change it.
    settings: Option<std::sync::Arc<dyn crate::settings::SettingsFile>>,
}

/// Where a candidate is confirmed, for the sentence a save answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewBy {
    CommandLine,
    OperatorToken,
}

impl Service {
    pub fn new(arbor: impl Into<std::sync::Arc<Arbor>>, chain: ReadChain, speaker: Actor) -> Service {
        Service { arbor: arbor.into(), chain, speaker, reports: None, review: ReviewBy::CommandLine, settings: None }
    }

    /// The engine this service answers from, for the maintenance its host schedules beside it.
    pub fn arbor(&self) -> &Arbor {
        &self.arbor
    }

    /// The engine, shared with every other binding to the same store.
    pub fn shared_arbor(&self) -> std::sync::Arc<Arbor> {
        self.arbor.clone()
    }

    /// The read chain every request is answered in.
    pub fn chain(&self) -> &ReadChain {
        &self.chain
    }

    /// Says that candidates are confirmed with an operator's token over HTTP (a tenant's store,
    /// which no person reaches at the command line through the server's root).
    #[must_use]
    pub fn reviewed_by_operators(self) -> Service {
        Service { review: ReviewBy::OperatorToken, ..self }
    }

    /// Serves the consolidation reports in `dir` (read-only, each cut to the chain's sections).
    #[must_use]
    pub fn with_reports(self, dir: std::path::PathBuf) -> Service {
        Service { reports: Some(dir), ..self }
    }

    /// Lets the memory centre read and rewrite the store's settings file.
    #[must_use]
    pub fn with_settings(self, settings: std::sync::Arc<dyn crate::settings::SettingsFile>) -> Service {
        Service { settings: Some(settings), ..self }
    }

    pub(crate) fn settings_file(&self) -> Option<&std::sync::Arc<dyn crate::settings::SettingsFile>> {
        self.settings.as_ref()
    }
}
