//! The status state machine of a source leaf. Every status change in Arbor goes through
//! [`LeafStatus::apply`], which refuses illegal moves.
//!
//! ```text
//!             confirm                supersede
//! candidate ──────────▶ active ─────────────────▶ superseded
//!    │  ▲                 │  ▲
//!    │  │ reconsider      │  │ restore (was confirmed)
//!    │  │                 ▼  │
//!    │  rejected        archived ──restore (never confirmed)──▶ candidate
//!    │
//!    └──archive──▶ archived
//!
//! every status except tombstone ──forget──▶ tombstone (terminal, content-free)
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafStatus {
    /// Proposed, awaiting confirmation. Never retrieved.
    Candidate,
    /// Confirmed and current.
    Active,
    /// Refused by a person. Never retrieved; its fingerprint stops the same suggestion coming
    /// back.
    Rejected,
    /// Replaced by a newer version. Retrieved only for `as_of` questions about the past.
    Superseded,
    /// Set aside (unused, decayed); never hard-deleted, restorable.
    Archived,
    /// Forgotten: ids and hashes only, no content. Terminal.
    Tombstone,
}

impl LeafStatus {
    /// The statuses whose fingerprint is taken (`Supersession` rule 1, and the stores' unique
    /// index): a new leaf, correction, edit or promotion with the same text in the same tree
    /// is a duplicate of one of these. A rejected suggestion stays here so it is not proposed
    /// again.
    pub const HOLDING_FINGERPRINT: [LeafStatus; 3] = [LeafStatus::Active, LeafStatus::Candidate, LeafStatus::Rejected];

    pub const ALL: [LeafStatus; 6] = [
        LeafStatus::Candidate,
        LeafStatus::Active,
        LeafStatus::Rejected,
        LeafStatus::Superseded,
        LeafStatus::Archived,
        LeafStatus::Tombstone,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LeafStatus::Candidate => "candidate",
            LeafStatus::Active => "active",
            LeafStatus::Rejected => "rejected",
            LeafStatus::Superseded => "superseded",
            LeafStatus::Archived => "archived",
            LeafStatus::Tombstone => "tombstone",
        }
    }

    pub fn parse(value: &str) -> Option<LeafStatus> {
        LeafStatus::ALL.into_iter().find(|s| s.as_str() == value)
    }

    /// Whether a leaf in this status still holds content.
    pub fn has_content(self) -> bool {
        self != LeafStatus::Tombstone
    }

    /// Whether a leaf in this status is filed under its lookup keys (`reconcile::LookupKey`):
    /// only a current memory can be replaced or repeated by a new one.
    pub fn is_filed(self) -> bool {
        self == LeafStatus::Active
    }

    /// Whether a leaf in this status is part of its tree's structure (buffers and summaries).
    /// Candidates join when confirmed; rejected and forgotten leaves never count.
    pub fn is_tree_member(self) -> bool {
        matches!(self, LeafStatus::Active | LeafStatus::Superseded | LeafStatus::Archived)
    }

    /// Whether a leaf in this status sits in its tree (the frontier, and so a future summary),
    /// given whether it was ever current (`known_from` set): an archived leaf does only if it
    /// had been — a candidate archived unused never joined, and its words never reach a
    /// summary. Stores mirror this rule in their frontier query.
    pub fn sits_in_tree(self, ever_current: bool) -> bool {
        self.is_tree_member() && (self != LeafStatus::Archived || ever_current)
    }

    /// Applies a transition, or says why it is not allowed.
    pub fn apply(self, transition: LeafTransition) -> Result<LeafStatus, IllegalTransition> {
        use LeafStatus::*;
        use LeafTransition as T;
        let next = match (self, transition) {
            (Candidate, T::Confirm) => Active,
            (Candidate, T::Reject) => Rejected,
            (Rejected, T::Reconsider) => Candidate,
            (Active, T::Supersede) => Superseded,
            (Active | Candidate, T::Archive) => Archived,
            (Archived, T::Restore { was_confirmed: true }) => Active,
            (Archived, T::Restore { was_confirmed: false }) => Candidate,
            (Tombstone, T::Forget) => return Err(IllegalTransition { from: self, transition }),
            (_, T::Forget) => Tombstone,
            _ => return Err(IllegalTransition { from: self, transition }),
        };
        Ok(next)
    }
}

impl fmt::Display for LeafStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request to change a leaf's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafTransition {
    Confirm,
    Reject,
    /// A person takes back a rejection; the leaf is a candidate again.
    Reconsider,
    Supersede,
    Archive,
    /// Brings an archived leaf back: to active if it had been confirmed before, otherwise to
    /// candidate, so restoring never skips review.
    Restore {
        was_confirmed: bool,
    },
    Forget,
}

impl LeafTransition {
    pub fn name(self) -> &'static str {
        match self {
            LeafTransition::Confirm => "confirm",
            LeafTransition::Reject => "reject",
            LeafTransition::Reconsider => "reconsider",
            LeafTransition::Supersede => "supersede",
            LeafTransition::Archive => "archive",
            LeafTransition::Restore { .. } => "restore",
            LeafTransition::Forget => "forget",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IllegalTransition {
    pub from: LeafStatus,
    pub transition: LeafTransition,
}

impl std::fmt::Display for IllegalTransition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.from, self.transition) {
            // Asked again, after an interrupted run, say: what was asked is already done.
            (LeafStatus::Tombstone, LeafTransition::Forget) => f.write_str("the memory was already forgotten"),
            (from, transition) => write!(f, "cannot {} a leaf that is {from}", transition.name()),
        }
    }
}

impl std::error::Error for IllegalTransition {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn transition() -> impl Strategy<Value = LeafTransition> {
        prop_oneof![
            Just(LeafTransition::Confirm),
            Just(LeafTransition::Reject),
            Just(LeafTransition::Reconsider),
            Just(LeafTransition::Supersede),
            Just(LeafTransition::Archive),
            any::<bool>().prop_map(|was_confirmed| LeafTransition::Restore { was_confirmed }),
            Just(LeafTransition::Forget),
        ]
    }

    #[test]
    fn the_whole_table() {
        let mut table = String::new();
        for from in LeafStatus::ALL {
            for t in [
                LeafTransition::Confirm,
                LeafTransition::Reject,
                LeafTransition::Reconsider,
                LeafTransition::Supersede,
                LeafTransition::Archive,
                LeafTransition::Restore { was_confirmed: true },
                LeafTransition::Restore { was_confirmed: false },
                LeafTransition::Forget,
            ] {
                let to = match from.apply(t) {
                    Ok(to) => to.as_str().to_owned(),
                    Err(_) => "-".to_owned(),
                };
                table.push_str(&format!("{:<10} {:<34} {}\n", from.as_str(), format!("{t:?}"), to));
            }
        }
        insta::assert_snapshot!(table);
    }

    #[test]
    fn error_says_what_was_refused() {
        let err = LeafStatus::Superseded.apply(LeafTransition::Confirm).unwrap_err();
        assert_eq!(err.to_string(), "cannot confirm a leaf that is superseded");
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Along any sequence of transitions: a tombstone never changes again; a leaf becomes
        /// active only by confirmation or by restoring something that had been confirmed (so
        /// nothing skips review); and a superseded leaf never comes back to life.
        #[test]
        fn status_machine_invariants(steps in proptest::collection::vec(transition(), 0..40)) {
            let mut status = LeafStatus::Candidate;
            let mut ever_confirmed = false;
            for t in steps {
                // The app knows whether the leaf was ever confirmed; model that faithfully.
                let t = match t {
                    LeafTransition::Restore { .. } => LeafTransition::Restore { was_confirmed: ever_confirmed },
                    other => other,
                };
                let before = status;
                match status.apply(t) {
                    Ok(next) => {
                        prop_assert_ne!(before, LeafStatus::Tombstone);
                        if next == LeafStatus::Active && before != LeafStatus::Active {
                            let allowed = t == LeafTransition::Confirm
                                || t == LeafTransition::Restore { was_confirmed: true };
                            prop_assert!(allowed);
                        }
                        if before == LeafStatus::Superseded {
                            prop_assert_eq!(next, LeafStatus::Tombstone);
                        }
                        if t == LeafTransition::Confirm {
                            ever_confirmed = true;
                        }
                        status = next;
                    }
                    Err(err) => {
                        prop_assert_eq!(err.from, before);
                    }
                }
            }
            if status == LeafStatus::Superseded {
                prop_assert!(ever_confirmed);
            }
        }
    }
}
