//! The one way every use case writes: plan against what the store says now, write the bodies
//! durably under an intent, commit the rows with the intent's clearing in one change set, and,
//! when the commit loses a compare-and-set to a concurrent writer, read again and plan again.
//!
//! - [`plan`]: [`BatchPlan`] — the new leaves with their text, the stored leaves they retire,
//!   the trees and entities they need, and any further changes a use case adds;
//! - [`commit`]: [`Arbor::commit_plan`] turns a plan into bodies, one change set (rows, audit
//!   events, stale summaries, seal and index jobs) and, when configured, inline indexing;
//! - [`bodies`]: the body-intent protocol under it, and recovery after a writer died;
//! - [`Arbor::replanning`] (here): the retry loop around one attempt.
//!
//! Use cases that change rows without new bodies (forget, archive, rollback) commit a
//! [`ChangeSet`](arbor_ports::ChangeSet) of their own, still through [`Arbor::replanning`].

pub(crate) mod bodies;
pub(crate) mod commit;
pub(crate) mod plan;

use std::future::Future;

use crate::{AppError, AppResult, Arbor};

pub(crate) use plan::{BatchPlan, PlannedLeaf, existing_leaf};

/// How one attempt at a write ended, when it did not fail.
pub(crate) enum Attempt<T> {
    /// It committed; this is what the use case returns.
    Committed(T),
    /// Its commit found the store changed since it read (a compare-and-set lost to a
    /// concurrent writer): nothing was written, and the write is planned again.
    LostRace(String),
}

impl<T> Attempt<T> {
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Attempt<U> {
        match self {
            Attempt::Committed(value) => Attempt::Committed(f(value)),
            Attempt::LostRace(conflict) => Attempt::LostRace(conflict),
        }
    }

    /// What the result of an attempt's commit means: its value once committed, another attempt
    /// after a lost compare-and-set, the error for anything else.
    pub(crate) fn of(result: AppResult<T>) -> AppResult<Attempt<T>> {
        match result {
            Ok(value) => Ok(Attempt::Committed(value)),
            Err(AppError::Port(error)) if error.is_conflict() => Ok(Attempt::LostRace(error.to_string())),
            Err(other) => Err(other),
        }
    }
}

impl Arbor {
    /// Runs `attempt` until it commits, at most [`Options::max_write_attempts`] times; each
    /// attempt reads the store again, so it plans against what the winner of the race wrote.
    /// Gives up with [`AppError::Contention`] naming the last conflict.
    ///
    /// [`Options::max_write_attempts`]: crate::Options::max_write_attempts
    pub(crate) async fn replanning<T, F, Fut>(&self, mut attempt: F) -> AppResult<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = AppResult<Attempt<T>>>,
    {
        let mut last_conflict = String::new();
        for number in 1..=self.options.max_write_attempts {
            match attempt().await? {
                Attempt::Committed(value) => return Ok(value),
                Attempt::LostRace(conflict) => {
                    tracing::debug!(attempt = number, %conflict, "a write lost a race; planning again");
                    last_conflict = conflict;
                }
            }
        }
        Err(AppError::Contention { attempts: self.options.max_write_attempts, last: last_conflict })
    }
}
