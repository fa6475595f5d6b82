//! Resolving conflicts [design §conflicts]: a candidate that would replace a current memory waits
//! for a person, who answers with a `ConflictResolution` — keep both, set validity, supersede
//! or reject. The answer decides the candidate's record (its status, lineage, subject and
//! validity) the way a confirmation does; its body — the words as proposed — is never
//! rewritten, and the record in the store is what says how the conflict was settled.

use arbor_domain::conflict::{ClaimView, ConflictResolution, ValidityPlan, plan_validity};
use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::time::{Timestamp, Validity};
use arbor_ports::{Error, TreeLeafQuery};

use crate::review::ReviewReceipt;
use crate::write::Attempt;
use crate::{AppError, AppResult, Arbor};

/// A candidate's decided record, the memories it retires (each valid until the instant
/// given), and the audit action.
type Decided = (LeafRecord, Vec<(LeafRecord, Timestamp)>, &'static str);

impl Arbor {
    /// Applies a person's answer to the conflict candidate `id` (readable through `chain`).
    pub async fn resolve_conflict(
        &self,
        chain: &ReadChain,
        id: &LeafId,
        resolution: ConflictResolution,
    ) -> AppResult<ReviewReceipt> {
        match resolution {
            ConflictResolution::Supersede => self.confirm(chain, id).await,
            ConflictResolution::Reject => self.reject(chain, id).await,
            ConflictResolution::KeepBoth => self.settle_candidate(chain, id, None).await,
            ConflictResolution::SetValidity { validity } => self.settle_candidate(chain, id, Some(validity)).await,
        }
    }

    /// Keeps both (`validity` none) or places the candidate in time against the memory it
    /// would replace.
    async fn settle_candidate(
        &self,
        chain: &ReadChain,
        id: &LeafId,
        validity: Option<Validity>,
    ) -> AppResult<ReviewReceipt> {
        let scope = &chain.namespaces().cloned().collect::<Vec<Namespace>>();
        let store = &self.ports.store;
        self.replanning(|| async move {
            let candidate = store.leaf(scope, id).await?.ok_or_else(|| Error::not_found("leaf", id))?;
            if candidate.status != LeafStatus::Candidate {
                return Err(AppError::NotNow(format!(
                    "{id} is {}; only a candidate's conflict is resolved",
                    candidate.status
                )));
            }
            let replaced = self.replaced_on_confirmation(&candidate).await?;
            if replaced.is_empty() {
                return Err(AppError::NotNow(format!(
                    "{id} would replace no current memory, so there is no conflict to resolve; confirm or reject it"
                )));
            }
            let now = self.now();
            let confirmed = candidate.confirmed(now)?;
            let (decided, retire, action) = match validity {
                // Both hold: a memory of its own (its own lineage, about no shared subject), so
                // neither replaces the other, now or later.
                None => (
                    LeafRecord {
                        lineage: candidate.id.clone(),
                        version: Version::FIRST,
                        subject: None,
                        supersedes: None,
                        ..confirmed
                    },
                    Vec::new(),
                    "conflict.kept_both",
                ),
                Some(validity) => self.placed_in_time(&candidate, confirmed, replaced, validity, now).await?,
            };
            Attempt::of(self.commit_decision(&candidate, decided, retire, action, now).await)
        })
        .await
    }
    /// A candidate confirmed with `validity`, against the memories it would replace (the
    /// current one first): earlier history the current memory already replaced, or the next
    /// version of it from the instant it takes over, retiring what it replaces then. Refused
    /// when `validity` cannot hold beside the subject's earlier versions.
    async fn placed_in_time(
        &self,
        candidate: &LeafRecord,
        confirmed: LeafRecord,
        replaced: Vec<LeafRecord>,
        validity: Validity,
        now: Timestamp,
    ) -> AppResult<Decided> {
        let current = &replaced[0];
        let current_from = ClaimView::of_leaf(current).holds_from;
        // Earlier versions about the subject: the new fact may not hold when they did.
        let history: Vec<Validity> = match &candidate.subject {
            Some(subject) => {
                let query = TreeLeafQuery {
                    subject: Some(subject.clone()),
                    statuses: vec![LeafStatus::Superseded],
                    ..TreeLeafQuery::default()
                };
                self.ports
                    .store
                    .tree_leaves(&candidate.namespace, &candidate.tree_id, &query)
                    .await?
                    .into_iter()
                    .map(|old| old.validity)
                    .collect()
            }
            None => Vec::new(),
        };
        let planned = plan_validity(&validity, current_from, &history, now)
            .map_err(|refusal| AppError::InvalidRequest(refusal.to_string()))?;
        Ok(match planned {
            // History the current memory already replaced: it answers `as_of` questions about
            // its interval and never a question about now. It was never current in the store,
            // so its known span is empty.
            ValidityPlan::EarlierHistory => {
                let history = confirmed.as_earlier_history(&current.id, validity, now)?;
                (history, Vec::new(), "conflict.validity_set")
            }
            // The next version of the current memory from `from` on: the current one (and
            // anything else current about the subject) holds until then.
            ValidityPlan::TakesOverAt { from } => (
                LeafRecord { validity, ..confirmed },
                replaced.into_iter().map(|old| (old, from)).collect(),
                "conflict.validity_set",
            ),
        })
    }
}
