//! Dedup and `Supersession` [design §supersession]: is a new chunk a duplicate, a newer
//! version of something current, or a new memory?
//!
//! Rules, in order, within one tree (different trees are always different leaves):
//! 1. Same fingerprint as a live leaf (active, candidate, or rejected — a rejected suggestion is
//!    not proposed again) → `noop_duplicate`.
//! 2. Same subject as an active leaf, different content → `superseding`: a new leaf that points
//!    at the old one; the old one becomes `superseded` with `valid_to` set. Never rewritten in
//!    place, never deleted.
//! 3. A reasoner's judgement that names an active leaf of this tree with enough confidence →
//!    `noop_duplicate` (same memory), or, when it says the chunk replaces the leaf, `created`
//!    with that leaf *doubted*: a model's word is not a proof that the old memory stopped
//!    being true, so both stay current and the old one is marked as possibly outdated by the
//!    new ([`Resolution::doubted`]). Retiring takes a proof by claims (`claims::decide`, or a
//!    model's verdict the catalogue validates, `claims::judged`).
//! 4. Otherwise → `created`.
//!
//! Conservative over aggressive: a judgement that is unsure, or names a leaf it was not shown,
//! is ignored and the chunk becomes a new leaf.
//!
//! Corrections [design §corrections] are explicit supersessions: a caller names the id and the
//! version it last saw; [`Supersession::check_correction`] refuses anything but the current
//! version of a live memory, so two writers never both replace the same version.

use serde::{Deserialize, Serialize};

use crate::id::{LeafId, Version};
use crate::lifecycle::LeafStatus;
use crate::model::{Confidence, Fingerprint, SubjectKey};

/// What dedup needs to know about a leaf already in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingLeaf {
    pub id: LeafId,
    pub fingerprint: Fingerprint,
    pub subject: Option<SubjectKey>,
    pub status: LeafStatus,
}

/// A reasoner's duplicate judgement. The leaf id is a raw string because it comes from a model
/// and must be checked against what it was shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "judgement", rename_all = "snake_case")]
pub enum DuplicateJudgement {
    SameMemory { leaf_id: String, confidence: f32 },
    Supersedes { leaf_id: String, confidence: f32 },
    Distinct,
}

/// The write outcome reported to the caller [design §supersession].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WriteOutcome {
    NoopDuplicate { existing: LeafId, existing_status: LeafStatus },
    Created,
    Superseding { replaces: LeafId },
}

impl WriteOutcome {
    pub fn label(&self) -> &'static str {
        match self {
            WriteOutcome::NoopDuplicate { .. } => "noop_duplicate",
            WriteOutcome::Created => "created",
            WriteOutcome::Superseding { .. } => "superseding",
        }
    }
}

/// Which rule produced the outcome, for explanations and audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionRule {
    SameFingerprint,
    SameSubject,
    JudgedSameMemory,
    JudgedSupersedes,
    New,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolution {
    pub outcome: WriteOutcome,
    pub rule: ResolutionRule,
    /// A judgement was offered but not used (unknown leaf, not active, not confident enough).
    pub judgement_ignored: bool,
    /// The active leaf a reasoner judged the chunk replaces (rule 3): kept current, marked as
    /// possibly outdated by the new leaf.
    pub doubted: Option<LeafId>,
}

/// The attribute a doubt names when a reasoner judged two memories as a whole, with no claim
/// of either read: the memory itself.
pub const WHOLE_MEMORY: &str = "memory";

/// The dedup and supersession rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Supersession {
    /// A reasoner's judgement is used only at or above this confidence. Default 0.75.
    pub min_judgement_confidence: Confidence,
}

impl Default for Supersession {
    fn default() -> Self {
        Supersession { min_judgement_confidence: Confidence::saturating(0.75) }
    }
}

impl Supersession {
    /// Resolves a new chunk against the leaves of its tree. `existing` may hold any leaves of
    /// the same tree; only those relevant to the rules are considered.
    pub fn resolve(
        &self,
        fingerprint: &Fingerprint,
        subject: Option<&SubjectKey>,
        existing: &[ExistingLeaf],
        judgement: Option<&DuplicateJudgement>,
    ) -> Resolution {
        let resolution = |outcome, rule| Resolution { outcome, rule, judgement_ignored: false, doubted: None };

        // Rule 1: the same content is already live. Prefer reporting the active copy.
        let duplicate_rank = |status| match status {
            LeafStatus::Active => Some(0),
            LeafStatus::Candidate => Some(1),
            LeafStatus::Rejected => Some(2),
            _ => None,
        };
        if let Some(dup) = existing
            .iter()
            .filter(|leaf| &leaf.fingerprint == fingerprint)
            .filter_map(|leaf| duplicate_rank(leaf.status).map(|rank| (rank, leaf)))
            .min_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.id.cmp(&y.id)))
            .map(|(_, leaf)| leaf)
        {
            return resolution(
                WriteOutcome::NoopDuplicate { existing: dup.id.clone(), existing_status: dup.status },
                ResolutionRule::SameFingerprint,
            );
        }

        // Rule 2: a newer version of the current memory about the same subject.
        if let Some(subject) = subject
            && let Some(current) = existing
                .iter()
                .filter(|leaf| leaf.status == LeafStatus::Active && leaf.subject.as_ref() == Some(subject))
                .max_by(|a, b| a.id.cmp(&b.id))
        {
            return resolution(WriteOutcome::Superseding { replaces: current.id.clone() }, ResolutionRule::SameSubject);
        }

        // Rule 3: a reasoner's judgement, validated.
        let mut judgement_ignored = false;
        if let Some(judgement) = judgement {
            let usable = |leaf_id: &str, confidence: f32| {
                let confident =
                    Confidence::new(confidence).map(|c| c >= self.min_judgement_confidence).unwrap_or(false);
                let target =
                    existing.iter().find(|leaf| leaf.id.as_str() == leaf_id && leaf.status == LeafStatus::Active);
                target.filter(|_| confident)
            };
            match judgement {
                DuplicateJudgement::SameMemory { leaf_id, confidence } => match usable(leaf_id, *confidence) {
                    Some(target) => {
                        return resolution(
                            WriteOutcome::NoopDuplicate { existing: target.id.clone(), existing_status: target.status },
                            ResolutionRule::JudgedSameMemory,
                        );
                    }
                    None => judgement_ignored = true,
                },
                DuplicateJudgement::Supersedes { leaf_id, confidence } => match usable(leaf_id, *confidence) {
                    Some(target) => {
                        return Resolution {
                            doubted: Some(target.id.clone()),
                            ..resolution(WriteOutcome::Created, ResolutionRule::JudgedSupersedes)
                        };
                    }
                    None => judgement_ignored = true,
                },
                DuplicateJudgement::Distinct => {}
            }
        }

        Resolution { outcome: WriteOutcome::Created, rule: ResolutionRule::New, judgement_ignored, doubted: None }
    }

    /// The active leaves that must be superseded when `activating` becomes active (at creation
    /// when auto-approved, or at confirmation of a candidate): the leaf it was planned to
    /// replace, if still active, and any active leaf with the same subject. Deciding this at
    /// activation — not at proposal time — keeps at most one active leaf per (tree, subject)
    /// even when several candidates about one subject are confirmed in any order.
    pub fn on_activation(
        &self,
        activating: &ExistingLeaf,
        planned_replacement: Option<&LeafId>,
        tree_leaves: &[ExistingLeaf],
    ) -> Vec<LeafId> {
        let mut replaced: Vec<LeafId> = tree_leaves
            .iter()
            .filter(|leaf| leaf.id != activating.id && leaf.status == LeafStatus::Active)
            .filter(|leaf| {
                Some(&leaf.id) == planned_replacement
                    || (activating.subject.is_some() && leaf.subject == activating.subject)
            })
            .map(|leaf| leaf.id.clone())
            .collect();
        replaced.sort();
        replaced
    }
}

/// Why a correction was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorrectionRefusal {
    /// The caller saw another version than the one it names: a precondition failure (HTTP 412).
    #[error("stale version: {id} is version {found}, not {expected}; read it again and correct what you read")]
    StaleVersion { id: LeafId, expected: u32, found: u32 },
    /// The version the caller saw was replaced since: a precondition failure (HTTP 412).
    #[error(
        "stale version: {id} (version {version}) was replaced by {successor}; read the current version and correct that"
    )]
    Replaced { id: LeafId, version: u32, successor: LeafId },
    /// The corrected text is what the memory already says, or what another memory of the same
    /// tree says (rule 1: one live leaf per fingerprint).
    #[error("{id}: the corrected text is the same as {existing}; nothing to correct")]
    Unchanged { id: LeafId, existing: LeafId },
    /// Only a replaced version can be restored: restoring makes it current again as a new
    /// version.
    #[error("{id} is {status}; only a replaced (superseded) version can be restored")]
    NotHistory { id: LeafId, status: &'static str },
    /// Only a current memory can be corrected: history is read-only, and a candidate is
    /// edited in review before anyone relies on it.
    #[error("{id} is {status}; only an active memory can be corrected")]
    NotLive { id: LeafId, status: &'static str },
}

impl CorrectionRefusal {
    /// Whether the caller only needs to read again (a stale precondition), as opposed to a
    /// target that can never be corrected.
    pub fn is_stale(&self) -> bool {
        matches!(self, CorrectionRefusal::StaleVersion { .. } | CorrectionRefusal::Replaced { .. })
    }
}

impl Supersession {
    /// May the version `id` (in `status`) be restored, i.e. its text written again as the next
    /// version of its memory? Only a superseded version: the current one needs no restoring,
    /// and candidates, rejected and forgotten leaves were never (or are no longer) history.
    pub fn check_restore(&self, id: &LeafId, status: LeafStatus) -> Result<(), CorrectionRefusal> {
        match status {
            LeafStatus::Superseded => Ok(()),
            other => Err(CorrectionRefusal::NotHistory { id: id.clone(), status: other.as_str() }),
        }
    }

    /// May the version `id` of a memory that another memory replaced (its successor is of
    /// another lineage: an update said in passing, or consolidation) be revived — a new version
    /// of its memory written after it, the replacing memory left as it is? Only the latest
    /// version of its memory, as the caller saw it (`expected`), and only if it is history.
    pub fn check_revival(
        &self,
        id: &LeafId,
        version: Version,
        status: LeafStatus,
        expected: Version,
    ) -> Result<(), CorrectionRefusal> {
        if version != expected {
            return Err(CorrectionRefusal::StaleVersion {
                id: id.clone(),
                expected: expected.get(),
                found: version.get(),
            });
        }
        self.check_restore(id, status)
    }

    /// May `target` be replaced by a correction from a caller that last saw `expected`? Only
    /// the current version of an active memory may: a replaced version, another version than
    /// the one stated, candidates and history (rejected, archived, forgotten) are refused.
    pub fn check_correction(
        &self,
        id: &LeafId,
        version: Version,
        status: LeafStatus,
        superseded_by: Option<&LeafId>,
        expected: Version,
    ) -> Result<(), CorrectionRefusal> {
        if let Some(successor) = superseded_by {
            return Err(CorrectionRefusal::Replaced {
                id: id.clone(),
                version: version.get(),
                successor: successor.clone(),
            });
        }
        if version != expected {
            return Err(CorrectionRefusal::StaleVersion {
                id: id.clone(),
                expected: expected.get(),
                found: version.get(),
            });
        }
        match status {
            LeafStatus::Active => Ok(()),
            other => Err(CorrectionRefusal::NotLive { id: id.clone(), status: other.as_str() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ContentHash;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn fp(text: &str) -> Fingerprint {
        ContentHash::of(text.as_bytes())
    }

    fn leaf(id: &str, text: &str, subject: Option<&str>, status: LeafStatus) -> ExistingLeaf {
        ExistingLeaf {
            id: LeafId::parse(id).unwrap(),
            fingerprint: fp(text),
            subject: subject.map(|s| SubjectKey::parse(s).unwrap()),
            status,
        }
    }

    #[test]
    fn rules_in_order() {
        let s = Supersession::default();
        let existing = vec![
            leaf("leaf-1", "likes tea", Some("drink"), LeafStatus::Active),
            leaf("leaf-2", "rejected idea", None, LeafStatus::Rejected),
            leaf("leaf-3", "old home paris", Some("home"), LeafStatus::Superseded),
        ];
        let subject = |s: &str| SubjectKey::parse(s).unwrap();
        let r = s.resolve(&fp("likes tea"), None, &existing, None);
        assert_eq!(r.outcome.label(), "noop_duplicate");
        let r = s.resolve(&fp("rejected idea"), None, &existing, None);
        assert_eq!(
            r.outcome,
            WriteOutcome::NoopDuplicate {
                existing: LeafId::parse("leaf-2").unwrap(),
                existing_status: LeafStatus::Rejected
            }
        );
        let r = s.resolve(&fp("likes coffee"), Some(&subject("drink")), &existing, None);
        assert_eq!(r.outcome, WriteOutcome::Superseding { replaces: LeafId::parse("leaf-1").unwrap() });
        // Re-stating a superseded fact is new content relative to what is current.
        let r = s.resolve(&fp("old home paris"), Some(&subject("home")), &existing, None);
        assert_eq!(r.outcome, WriteOutcome::Created);
        // A judgement naming a leaf it was not shown is ignored.
        let bogus = DuplicateJudgement::Supersedes { leaf_id: "leaf-999".into(), confidence: 0.99 };
        let r = s.resolve(&fp("something"), None, &existing, Some(&bogus));
        assert_eq!(r.outcome, WriteOutcome::Created);
        assert!(r.judgement_ignored);
        // An unsure judgement is ignored too: conservative over aggressive.
        let unsure = DuplicateJudgement::SameMemory { leaf_id: "leaf-1".into(), confidence: 0.5 };
        assert_eq!(s.resolve(&fp("enjoys tea"), None, &existing, Some(&unsure)).outcome, WriteOutcome::Created);
        let sure = DuplicateJudgement::SameMemory { leaf_id: "leaf-1".into(), confidence: 0.9 };
        assert_eq!(s.resolve(&fp("enjoys tea"), None, &existing, Some(&sure)).outcome.label(), "noop_duplicate");
        // A confident "replaces" is not a proof: a new leaf, the old one doubted, not retired.
        let replaces = DuplicateJudgement::Supersedes { leaf_id: "leaf-1".into(), confidence: 0.99 };
        let r = s.resolve(&fp("likes coffee now"), None, &existing, Some(&replaces));
        assert_eq!((r.outcome, r.rule), (WriteOutcome::Created, ResolutionRule::JudgedSupersedes));
        assert_eq!(r.doubted, Some(LeafId::parse("leaf-1").unwrap()));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Upsert { text: u8, subject: Option<u8>, candidate: bool, judgement: Option<(u8, bool, f32)> },
        Confirm { nth: u8 },
        Reject { nth: u8 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..12, proptest::option::of(0u8..4), any::<bool>(),
                  proptest::option::of((0u8..30, any::<bool>(), 0.0f32..=1.0)))
                .prop_map(|(text, subject, candidate, judgement)| Op::Upsert { text, subject, candidate, judgement }),
            1 => (0u8..30).prop_map(|nth| Op::Confirm { nth }),
            1 => (0u8..30).prop_map(|nth| Op::Reject { nth }),
        ]
    }

    /// A tiny model of one tree, driven only by the rules above.
    #[derive(Default)]
    struct Tree {
        leaves: Vec<ExistingLeaf>,
        planned: BTreeMap<LeafId, LeafId>,
    }

    impl Tree {
        fn activate(&mut self, s: &Supersession, idx: usize) {
            let activating = self.leaves[idx].clone();
            let planned = self.planned.get(&activating.id).cloned();
            for old in s.on_activation(&activating, planned.as_ref(), &self.leaves) {
                let old = self.leaves.iter_mut().find(|l| l.id == old).unwrap();
                old.status = old.status.apply(crate::lifecycle::LeafTransition::Supersede).unwrap();
            }
            let leaf = &mut self.leaves[idx];
            leaf.status = leaf.status.apply(crate::lifecycle::LeafTransition::Confirm).unwrap();
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// After any sequence of upserts, confirmations and rejections there is at most one
        /// active leaf per subject and at most one live leaf per fingerprint in a tree, and
        /// every superseded leaf was superseded by something.
        #[test]
        fn one_current_leaf_per_subject(ops in proptest::collection::vec(op(), 1..60)) {
            let s = Supersession::default();
            let mut tree = Tree::default();
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Upsert { text, subject, candidate, judgement } => {
                        let fingerprint = fp(&format!("text {text}"));
                        let subject = subject.map(|n| SubjectKey::parse(&format!("subject {n}")).unwrap());
                        let judgement = judgement.map(|(n, same, confidence)| {
                            let leaf_id = format!("leaf-{n}");
                            if same { DuplicateJudgement::SameMemory { leaf_id, confidence } }
                            else { DuplicateJudgement::Supersedes { leaf_id, confidence } }
                        });
                        let r = s.resolve(&fingerprint, subject.as_ref(), &tree.leaves, judgement.as_ref());
                        let id = LeafId::parse(&format!("leaf-{step}")).unwrap();
                        match r.outcome {
                            WriteOutcome::NoopDuplicate { existing, .. } => {
                                prop_assert!(tree.leaves.iter().any(|l| l.id == existing));
                                continue;
                            }
                            WriteOutcome::Superseding { replaces } => {
                                let target = tree.leaves.iter().find(|l| l.id == replaces).unwrap();
                                prop_assert_eq!(target.status, LeafStatus::Active);
                                tree.planned.insert(id.clone(), replaces);
                            }
                            WriteOutcome::Created => {}
                        }
                        tree.leaves.push(ExistingLeaf { id, fingerprint, subject, status: LeafStatus::Candidate });
                        if !candidate {
                            let idx = tree.leaves.len() - 1;
                            tree.activate(&s, idx);
                        }
                    }
                    Op::Confirm { nth } => {
                        let candidates: Vec<usize> = (0..tree.leaves.len()).filter(|&i| tree.leaves[i].status == LeafStatus::Candidate).collect();
                        if let Some(&idx) = candidates.get(nth as usize % candidates.len().max(1)) {
                            tree.activate(&s, idx);
                        }
                    }
                    Op::Reject { nth } => {
                        let candidates: Vec<usize> = (0..tree.leaves.len()).filter(|&i| tree.leaves[i].status == LeafStatus::Candidate).collect();
                        if let Some(&idx) = candidates.get(nth as usize % candidates.len().max(1)) {
                            let leaf = &mut tree.leaves[idx];
                            leaf.status = leaf.status.apply(crate::lifecycle::LeafTransition::Reject).unwrap();
                        }
                    }
                }
                let mut active_subjects = BTreeMap::new();
                let mut live_fingerprints = BTreeMap::new();
                for leaf in &tree.leaves {
                    if leaf.status == LeafStatus::Active
                        && let Some(subject) = &leaf.subject {
                            *active_subjects.entry(subject.clone()).or_insert(0) += 1;
                        }
                    if matches!(leaf.status, LeafStatus::Active | LeafStatus::Candidate) {
                        *live_fingerprints.entry(leaf.fingerprint.clone()).or_insert(0) += 1;
                    }
                }
                prop_assert!(active_subjects.values().all(|&n| n <= 1), "two active leaves share a subject");
                prop_assert!(live_fingerprints.values().all(|&n| n <= 1), "two live leaves share a fingerprint");
            }
        }
    }

    #[test]
    fn a_correction_must_name_the_current_version_of_an_active_memory() {
        let rules = Supersession::default();
        let id = LeafId::parse("leaf-01JZ0000000000000000000001").unwrap();
        let next = LeafId::parse("leaf-01JZ0000000000000000000002").unwrap();
        let v2 = Version::new(2).unwrap();
        assert_eq!(rules.check_correction(&id, v2, LeafStatus::Active, None, v2), Ok(()));
        let stale = rules.check_correction(&id, v2, LeafStatus::Active, None, Version::FIRST).unwrap_err();
        assert!(stale.is_stale());
        assert_eq!(
            stale.to_string(),
            format!("stale version: {id} is version 2, not 1; read it again and correct what you read")
        );
        let replaced = rules.check_correction(&id, v2, LeafStatus::Superseded, Some(&next), v2).unwrap_err();
        assert_eq!(replaced, CorrectionRefusal::Replaced { id: id.clone(), version: 2, successor: next });
        assert!(replaced.is_stale());
        for status in [LeafStatus::Candidate, LeafStatus::Rejected, LeafStatus::Archived, LeafStatus::Tombstone] {
            let refused = rules.check_correction(&id, v2, status, None, v2).unwrap_err();
            assert!(!refused.is_stale(), "{status:?} is not a precondition failure but a refusal");
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Exactly one (version, status) pair passes: the current version of an active memory.
        #[test]
        fn only_the_current_live_version_can_be_corrected(
            version in 1u32..6, expected in 1u32..6, status in 0usize..6, replaced in any::<bool>(),
        ) {
            let id = LeafId::parse("leaf-01JZ0000000000000000000001").unwrap();
            let next = LeafId::parse("leaf-01JZ0000000000000000000002").unwrap();
            let status = LeafStatus::ALL[status];
            let successor = replaced.then_some(&next);
            let outcome = Supersession::default().check_correction(
                &id, Version::new(version).unwrap(), status, successor, Version::new(expected).unwrap(),
            );
            prop_assert_eq!(outcome.is_ok(), version == expected && !replaced && status == LeafStatus::Active);
        }

        /// A memory another one replaced is revived only from its latest version as the caller
        /// saw it, and only while that version is history.
        #[test]
        fn only_the_latest_replaced_version_can_be_revived(version in 1u32..6, expected in 1u32..6, status in 0usize..6) {
            let id = LeafId::parse("leaf-01JZ0000000000000000000001").unwrap();
            let status = LeafStatus::ALL[status];
            let outcome = Supersession::default().check_revival(
                &id, Version::new(version).unwrap(), status, Version::new(expected).unwrap(),
            );
            prop_assert_eq!(outcome.is_ok(), version == expected && status == LeafStatus::Superseded);
            if version != expected {
                prop_assert!(outcome.unwrap_err().is_stale());
            }
        }
    }
}
