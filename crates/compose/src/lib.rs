//! The composition root: the one place adapters are chosen. A store directory holds
//! `arbor.json` (which backend, index, models and decay policy), `arbor.db` when its rows are
//! on SQLite, and `memory/` (the bodies); [`open`] reads the configuration and builds an
//! [`arbor_app::Arbor`] on the adapters it names.
//!
//! The command line, the benchmark and the tests open stores through here; the servers take
//! an already opened `Arbor`, so nothing that answers a request can pick an adapter.

mod choice;
mod config;
mod durable;
mod error;
mod liveness;
mod model_config;
mod open;
mod reports;
mod set_aside;
mod switch;
mod tenancy;

pub use arbor_adapters_models::JsonOutput;
pub use arbor_adapters_models::packaged;
pub use choice::Choice;
pub use config::{
    Backend, CONFIG_FILE, IndexBackend, InitOptions, PostgresSettings, StoreConfig, replace_settings, resolve_root,
    save_config, settings_for_display, update_config,
};
pub use durable::{Readers, replace_file};
pub use error::{ComposeError, Result};
pub use liveness::writer_is_dead;
pub use model_config::{EmbedderChoice, EmbedderConfig, ReasonerConfig, RemoteEndpoint, local_name};
pub use open::{
    Database, Embedders, Initialized, Opened, deterministic, init, open, open_for_check, open_for_reading,
    open_for_rebuild, open_with,
};
pub use reports::{
    ConsolidationLock, LeftForReview, Pass, PassOptions, REPORTS_DIR, ReportFile, apply_left_for_review,
    consolidation_pass, left_for_review, list_reports, lock_consolidation, recorded_retirements, resume_marks,
    write_report,
};
pub use set_aside::{
    erase_from_set_aside_databases, marked_damaged, move_damaged_database_aside, set_aside_database_findings,
};
pub use switch::{EmbedderSwitch, switch_embedder};
pub use tenancy::{
    IssuedToken, NewToken, TENANTS_DIR, TOKENS_FILE, check_tenant_name, issue_token, list_tokens, new_secret,
    revoke_token, tenant_root, token_digest, write_private,
};
