//! The smaller subcommands, one file per group: `init`; reading (`retrieve`, `browse`, `show`,
//! `show-retrieval`); a person's edits (`forget`, `correct`, `restore`, `promote`); `jobs`;
//! `fsck`; reports (`stats`, `daily`, `health`, `audit`, `usage`); moving memories in and out
//! (`export`, `import`). Each prints text for people or, with `--json`, the result's own
//! serialization. The larger subcommands have files of their own beside this folder.

mod edit;
mod fsck;
mod init;
mod jobs;
mod read;
mod reports;
mod transfer;

pub(crate) use edit::{CorrectArgs, ForgetArgs, PromoteArgs, RestoreArgs, correct, forget, promote, restore};
pub(crate) use fsck::{FsckArgs, fsck};
pub(crate) use init::{InitArgs, init};
pub(crate) use jobs::{JobsCommand, jobs};
pub(crate) use read::{BrowseArgs, RetrieveArgs, ShowArgs, ShowRetrievalArgs, browse, retrieve, show, show_retrieval};
pub(crate) use reports::{AuditArgs, DailyArgs, HealthArgs, UsageArgs, audit, daily, health, stats, usage};
pub(crate) use transfer::{ExportArgs, ImportArgs, export, import};
