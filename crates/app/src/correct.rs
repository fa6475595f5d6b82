//! Corrections [design §corrections]: a new version of a memory, bound to the id and version
//! the caller last saw. The old version stays as history (superseded, `valid_to` set); a caller
//! that saw an older version gets a precondition failure and nothing is written. Restoring an
//! old version is a correction too: its text, as a new version.

use arbor_domain::admission::{Admission, AdmissionInput, ApprovalInput, is_manual_entry};
use arbor_domain::claims::{FirstPerson, LeafClaims};
use arbor_domain::event::Event;
use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Actor, Confidence, ContentHash, LeafRecord, SourceRef, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::supersession::CorrectionRefusal;
use arbor_domain::text::fingerprint;
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{AssessRequest, Error};
use serde::Serialize;

use crate::write::{Attempt, BatchPlan, PlannedLeaf};
use crate::{AppError, AppResult, Arbor};

/// Checks a new text and title as an inbound event's would be checked (size, NUL, control
/// characters in the title), and that a given title says something.
pub(crate) fn validate_new_text(text: &str, title: Option<&str>) -> AppResult<()> {
    if title.is_some_and(|t| t.trim().is_empty()) {
        return Err(AppError::InvalidRequest("`title` is empty".into()));
    }
    let mut event = Event::user_message(text);
    event.hints.title = title.map(str::to_owned);
    Ok(event.validate()?)
}

/// A correction: the memory as the caller saw it, and what it should say instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    pub id: LeafId,
    /// The version the caller read; anything else is a stale precondition.
    pub expected_version: Version,
    pub text: String,
    /// A new title; by default one is taken from the corrected text.
    pub title: Option<String>,
    /// Who corrected it and through what, for the new version's provenance: a person at the
    /// command line (`UserEntry`, `User`), or an agent through the API.
    pub source: SourceRef,
    pub actor: Actor,
    /// The least sensitivity the new version may have, beside the old version's: a restored
    /// version keeps at least the sensitivity it had.
    pub at_least: Sensitivity,
}

impl Correction {
    /// A correction typed by a person.
    pub fn by_person(id: LeafId, expected_version: Version, text: impl Into<String>) -> Correction {
        Correction {
            id,
            expected_version,
            text: text.into(),
            title: None,
            source: SourceRef::UserEntry,
            actor: Actor::User,
            at_least: Sensitivity::Normal,
        }
    }
}

/// How a new version follows the version it is written after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Succession {
    /// A correction: the version it follows is current and becomes history.
    Replaces,
    /// A restore of a memory another memory replaced: the version it follows is already
    /// history, and the memory that replaced it stays as it is.
    Revives,
}

/// What a correction wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CorrectionReceipt {
    /// The new version's leaf.
    pub leaf_id: LeafId,
    pub version: u32,
    /// `active`, or `candidate` when approval holds it for a person (an agent's own
    /// correction); the replaced version stays current until it is confirmed.
    pub status: LeafStatus,
    /// The version it replaced, kept as history.
    pub replaces: LeafId,
    pub replaced_version: u32,
    pub namespace: Namespace,
    pub tree_id: TreeId,
}

impl Arbor {
    /// Writes `correction` as the next version of its memory, in the same tree. The memory must
    /// be one `chain` could open by id (`VisibilityFilter::opens_by_id`; else: not found, as if
    /// it did not exist) and live in the chain's write namespace: a broader layer's memory is
    /// read-only to this caller.
    pub async fn correct(&self, chain: &ReadChain, correction: &Correction) -> AppResult<CorrectionReceipt> {
        self.write_next_version(chain, correction, Succession::Replaces).await
    }

    /// A new version of `correction.id`'s memory, after it as `succession` says.
    async fn write_next_version(
        &self,
        chain: &ReadChain,
        correction: &Correction,
        succession: Succession,
    ) -> AppResult<CorrectionReceipt> {
        validate_new_text(&correction.text, correction.title.as_deref())?;
        self.replanning(|| async move {
            // Only what the caller could read by id can be corrected; anything else (forgotten,
            // restricted, a candidate, unseen by a frozen layer) is not found, as if absent.
            let old = self.own_leaf(chain, &correction.id).await?;
            self.check_succession(&old, correction.expected_version, succession)?;
            // Rule 1 of dedup holds for corrections too: one live leaf per fingerprint in a tree.
            if let Some(existing) =
                self.leaf_holding_fingerprint(&old.namespace, &old.tree_id, &fingerprint(&correction.text)).await?
            {
                return Err(CorrectionRefusal::Unchanged { id: old.id.clone(), existing: existing.id }.into());
            }
            let now = self.now();
            let sensitivity = self.admit_correction(&old, correction)?;
            // Approval as for any write: a person's correction (or one quoting the user) is
            // current at once; an agent's own waits for a person, and the old version stays
            // current meanwhile (confirming the candidate supersedes it).
            let approval = self.policy.approval.decide(ApprovalInput {
                namespace: old.namespace.kind(),
                kind: old.kind,
                sensitivity,
                actor: correction.actor,
                manual: is_manual_entry(correction.actor, &correction.source),
            });
            let mut record = LeafRecord { sensitivity, ..self.corrected_record(&old, correction, now) };
            if approval.status == LeafStatus::Candidate {
                record = record.waiting_for_a_person();
            }
            let tree = self
                .ports
                .store
                .tree(&old.namespace, &old.tree_id)
                .await?
                .ok_or_else(|| Error::not_found("tree", &old.tree_id))?;
            let receipt = CorrectionReceipt {
                leaf_id: record.id.clone(),
                version: record.version.get(),
                status: record.status,
                replaces: old.id.clone(),
                replaced_version: old.version.get(),
                namespace: old.namespace.clone(),
                tree_id: old.tree_id.clone(),
            };
            let mut plan = BatchPlan::default();
            plan.trees.insert((tree.namespace.clone(), tree.tree_id.clone()), tree);
            if record.status == LeafStatus::Active && succession == Succession::Replaces {
                plan.superseded.insert(old.id.clone(), old.superseded_by(&record.id, now, now)?);
            }
            plan.leaves.push(PlannedLeaf { record, text: correction.text.clone() });
            // The commit expects the old version still active: a concurrent correction that
            // won first makes this attempt conflict, and the next one reports it stale.
            Attempt::of(self.commit_plan(&old.namespace, plan, now, std::time::Duration::ZERO).await.map(|()| receipt))
        })
        .await
    }

    /// Whether a new version may follow `old`, as the caller saw it (`expected`).
    fn check_succession(&self, old: &LeafRecord, expected: Version, succession: Succession) -> AppResult<()> {
        let rules = &self.policy.supersession;
        match succession {
            Succession::Replaces => {
                rules.check_correction(&old.id, old.version, old.status, old.superseded_by.as_ref(), expected)?
            }
            Succession::Revives => rules.check_revival(&old.id, old.version, old.status, expected)?,
        }
        Ok(())
    }

    /// Makes the superseded version `old_id` current again: its text becomes the next version
    /// of its memory, bound to the version the caller saw (`expected_current`): the memory's
    /// current version, which it replaces, or — when another memory replaced this one and none
    /// of its versions is current — its latest, after which it is revived beside the memory that
    /// replaced it. The history between stays; nothing is rewritten.
    pub async fn restore(
        &self,
        chain: &ReadChain,
        old_id: &LeafId,
        expected_current: Version,
    ) -> AppResult<CorrectionReceipt> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let filter = VisibilityFilter::for_chain(chain, self.now());
        let readable = |leaf: &LeafRecord| filter.opens_by_id(&NodeFacts::of_leaf(leaf));
        let old = store.leaf(&scope, old_id).await?.filter(readable).ok_or_else(|| Error::not_found("leaf", old_id))?;
        self.policy.supersession.check_restore(&old.id, old.status)?;
        let text = self.read_body(&old.body_path, &old.body_sha256).await?;
        // What follows the old version: the memory's current version, corrected back to the old
        // text; or, when another memory replaced it (an update said in passing, consolidation)
        // and no version of it is current, its latest version, revived after it beside the one
        // that replaced it.
        let versions = store.versions(&old.namespace, &old.lineage).await?;
        let current = versions.iter().find(|v| v.status == LeafStatus::Active);
        let latest = versions.iter().max_by_key(|v| v.version).unwrap_or(&old);
        let (latest, succession) = match current {
            Some(current) => (current.clone(), Succession::Replaces),
            None => (latest.clone(), Succession::Revives),
        };
        let correction = Correction {
            title: Some(old.title.clone()),
            at_least: old.sensitivity,
            ..Correction::by_person(latest.id, expected_current, text)
        };
        self.write_next_version(chain, &correction, succession).await
    }

    /// Admission for a correction's text, as for any write: a secret is refused unless a person
    /// deliberately keeps it restricted, and the new version is at least as sensitive as the old
    /// one (and than `correction.at_least`) and as its own words suggest. Returns the new
    /// version's sensitivity.
    pub(crate) fn admit_correction(&self, old: &LeafRecord, correction: &Correction) -> AppResult<Sensitivity> {
        let suggested = arbor_domain::heuristics::assess(&AssessRequest {
            text: correction.text.clone(),
            actor: correction.actor,
            namespace: old.namespace.kind(),
            hints: arbor_domain::event::EventHints::default(),
            shortlist: Vec::new(),
        })
        .sensitivity;
        let admission = self.policy.admission.decide(AdmissionInput {
            text: &correction.text,
            // An explicit correction of a known memory is not a guess about what to remember.
            confidence: Confidence::saturating(1.0),
            manual: is_manual_entry(correction.actor, &correction.source),
            declared: Some(old.sensitivity.max(correction.at_least)),
            suggested,
        });
        match admission {
            Admission::Admit { sensitivity } => Ok(sensitivity),
            Admission::Refuse { refusal } => {
                Err(AppError::InvalidRequest(format!("the new text is refused: {refusal}")))
            }
        }
    }

    /// The next version of `old`: the same memory (lineage, tree, kind, subject, entities,
    /// sensitivity) saying the corrected text, current from `now`. A person's correction is
    /// a manual write, so it needs no model: the title comes from the deterministic reasoner.
    pub(crate) fn corrected_record(
        &self,
        old: &LeafRecord,
        correction: &Correction,
        now: arbor_domain::time::Timestamp,
    ) -> LeafRecord {
        let assessment = arbor_domain::heuristics::assess(&AssessRequest {
            text: correction.text.clone(),
            actor: correction.actor,
            namespace: old.namespace.kind(),
            hints: arbor_domain::event::EventHints {
                kind: Some(old.kind),
                title: correction.title.clone(),
                subject: old.subject.clone(),
                ..Default::default()
            },
            shortlist: Vec::new(),
        });
        let mut provenance = old.provenance.clone();
        provenance.source = correction.source.clone();
        provenance.actor = correction.actor;
        provenance.source_sha256 = ContentHash::of(correction.text.as_bytes());
        // New words, new claims: what the corrected text says, read as any write reads it.
        let first_person = FirstPerson::of(correction.actor);
        let claims = LeafClaims {
            kept_with: old.claims.kept_with.clone(),
            // A veto stays with the memory it protected, in whatever words it is now said.
            judged_with: old.claims.judged_with.clone(),
            ..LeafClaims::of(&arbor_domain::claims::read_as(&correction.text, first_person))
        };
        LeafRecord {
            title: arbor_domain::model::bounded_title(&assessment.title),
            summary: arbor_domain::model::leaf_summary(&correction.text),
            fingerprint: fingerprint(&correction.text),
            provenance,
            claims,
            ..old.next_version(self.new_leaf_id(now), now)
        }
    }
}
