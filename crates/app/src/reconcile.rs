//! Reconcile by claims: the current memories a new memory's claims are compared with, the
//! domain's decision (`arbor_domain::claims::decide`), and what it plans — retirements, each
//! marked with its rule, and doubts on the memories that may be outdated.
//!
//! The candidates are found by what the claims are about, not by words: every current memory is
//! filed under its claims' subjects and attributes (`rows::filed_entries`), so a move finds the
//! old address however long ago and in whatever words it was said, at a cost that follows what
//! is said about one subject, not the size of the store. The same claims in the same order give
//! the same decisions whatever background jobs have done: nothing here reads an index that a job
//! fills.

use std::sync::atomic::Ordering;

use arbor_domain::claims::decide::Current;
use arbor_domain::claims::judged::{PairCandidate, PairRequest, PairVerdict, overrule, pairs_to_show};
use arbor_domain::claims::{Claim, Decision, Doubt, LeafClaims, Retirement, RetirementMark, decide};
use arbor_domain::id::LeafId;
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::LeafRecord;
use arbor_domain::namespace::Namespace;
use arbor_domain::reconcile::{CANDIDATES, PER_KEY};
use arbor_domain::visibility::{NodeFacts, VisibilityFilter};
use arbor_ports::{FiledQuery, HEURISTIC_REASONER_ID};
use serde::Serialize;

use crate::write::BatchPlan;
use crate::{AppResult, Arbor};

/// A memory a new one replaced, as a save's reply names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replaced {
    pub leaf_id: LeafId,
    /// The attribute both speak of ("employer", "has:manager").
    pub attribute: String,
    /// The rule that proved it (`one_value`, `ended`).
    pub rule: &'static str,
    /// What the old memory said of it, and what the new one says ("the Ankara branch", "the
    /// Izmir branch"); `None` where a claim names no value ("quit his job").
    pub was: Option<String>,
    pub now: Option<String>,
}

/// A memory a new one may have replaced, unproven: it stays current, marked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Doubted {
    pub leaf_id: LeafId,
    pub attribute: String,
    /// Why it is not proven (`maybe_same_subject`, `values_unclear`, …).
    pub reason: &'static str,
}

/// What a new memory's claims decided.
#[derive(Debug, Default)]
pub(crate) struct Reconciled {
    /// The current memories it retires, each with its retirement, best first.
    pub(crate) retire: Vec<(LeafRecord, Retirement)>,
    /// The current memories it marks as possibly outdated.
    pub(crate) doubt: Vec<(LeafRecord, Doubt)>,
}

impl Replaced {
    pub(crate) fn of(leaf: &LeafRecord, retirement: &Retirement) -> Replaced {
        Replaced {
            leaf_id: leaf.id.clone(),
            attribute: retirement.attribute.clone(),
            rule: retirement.rule.as_str(),
            was: retirement.old.value.clone(),
            now: retirement.new.value.clone(),
        }
    }
}

impl Doubted {
    pub(crate) fn of(leaf: &LeafRecord, doubt: &Doubt) -> Doubted {
        Doubted { leaf_id: leaf.id.clone(), attribute: doubt.attribute.clone(), reason: doubt.reason.as_str() }
    }
}

impl Arbor {
    /// What `claims` (a new memory of `namespace`, of `lineage` when it continues one) do to the namespace's
    /// current memories, as this batch leaves them: the domain's decision over those filed under
    /// the same subjects and attributes, less the pairs a person kept — with a model reasoner's
    /// verdicts on those pairs when one is configured and `text` (the new memory's, when it may
    /// be shown to the reasoner) is given (`claims::judged`).
    pub(crate) async fn reconcile_claims(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        lineage: Option<&LeafId>,
        claims: &LeafClaims,
        text: Option<&str>,
    ) -> AppResult<Reconciled> {
        if claims.claims.is_empty() {
            return Ok(Reconciled::default());
        }
        let candidates = self.claim_candidates(plan, namespace, &claims.claims).await?;
        let candidates: Vec<LeafRecord> = candidates
            .into_iter()
            .filter(|old| match lineage {
                Some(lineage) => &old.lineage != lineage && !old.claims.kept_with(lineage),
                None => true,
            })
            .filter(|old| !claims.kept_with(&old.lineage))
            .collect();
        let current: Vec<Current<'_, usize>> = candidates
            .iter()
            .enumerate()
            .map(|(at, leaf)| Current { item: at, claims: &leaf.claims.claims, says_more: leaf.claims.says_more })
            .collect();
        let mut decision = decide(&claims.claims, &current);
        if let Some(text) = text {
            decision = self.judge_pairs(plan, text, &claims.claims, &candidates, decision).await;
        }
        Ok(Reconciled {
            retire: decision.retire.into_iter().map(|(at, r)| (candidates[at].clone(), r)).collect(),
            doubt: decision.flag.into_iter().map(|(at, d)| (candidates[at].clone(), d)).collect(),
        })
    }

    /// The rules' `decision` over `candidates` after a model reasoner's verdicts on them
    /// (`claims::judged::overrule`): asked when one is configured, within the batch's budget,
    /// about the candidates `claims::judged::pairs_to_show` picks, none of which may be shown
    /// to it unless its sensitivity allows. No answer in time, or an unusable one, leaves the
    /// rules' decision.
    async fn judge_pairs(
        &self,
        plan: &BatchPlan,
        text: &str,
        new: &[Claim],
        candidates: &[LeafRecord],
        decision: Decision<usize>,
    ) -> Decision<usize> {
        let reasoner = &self.ports.reasoner;
        if reasoner.id() == HEURISTIC_REASONER_ID || candidates.is_empty() {
            return decision;
        }
        let claims: Vec<&[Claim]> = candidates.iter().map(|c| c.claims.claims.as_slice()).collect();
        let shown = pairs_to_show(&decision, new, &claims);
        if shown.is_empty() {
            return decision;
        }
        let locality = reasoner.locality();
        if shown.iter().any(|&at| !candidates[at].sensitivity.may_be_given_to(locality)) {
            return decision;
        }
        if plan.pair_judgements.fetch_add(1, Ordering::Relaxed) >= self.options.pair_judgements_per_batch {
            return decision;
        }
        let attributes = |claims: &[Claim]| {
            let names: std::collections::BTreeSet<String> =
                claims.iter().filter(|c| !c.is_loose()).map(|c| c.attribute.clone()).collect();
            names.into_iter().collect::<Vec<_>>()
        };
        let request = PairRequest {
            text: text.to_owned(),
            attributes: attributes(new),
            candidates: shown
                .iter()
                .map(|&at| PairCandidate {
                    id: candidates[at].id.clone(),
                    text: candidates[at].summary.clone(),
                    attributes: attributes(&candidates[at].claims.claims),
                })
                .collect(),
        };
        let Some(judgements) = self.ask_reasoner("judge_pairs", reasoner.judge_pairs(&request)).await else {
            return decision;
        };
        let verdicts: Vec<(usize, PairVerdict)> = judgements
            .into_iter()
            .filter_map(|j| shown.iter().find(|&&at| candidates[at].id == j.leaf_id).map(|&at| (at, j.verdict)))
            .collect();
        let pairs: Vec<Current<'_, usize>> = shown
            .iter()
            .map(|&at| Current {
                item: at,
                claims: &candidates[at].claims.claims,
                says_more: candidates[at].claims.says_more,
            })
            .collect();
        overrule(decision, new, &pairs, &verdicts)
    }

    /// The current memories of `namespace` with a claim on a subject and attribute `claims`
    /// speak of (an ending by value, on any attribute of its subject), as this batch leaves
    /// them, and those this batch planned: oldest first, each once. Restricted memories are
    /// left out: they are never replaced in passing, since a result naming one would tell a
    /// caller without that clearance that it exists.
    async fn claim_candidates(
        &self,
        plan: &BatchPlan,
        namespace: &Namespace,
        claims: &[Claim],
    ) -> AppResult<Vec<LeafRecord>> {
        let filed = self.current_filed_under_claims(namespace, claims).await?;
        let mut current: Vec<LeafRecord> =
            filed.into_iter().map(|leaf| plan.overlay(leaf)).filter(|leaf| leaf.status == LeafStatus::Active).collect();
        current.extend(
            plan.leaves
                .iter()
                .filter(|p| &p.record.namespace == namespace && p.record.status == LeafStatus::Active)
                .map(|p| p.record.clone()),
        );
        current.sort_by(|a, b| a.observed_at.cmp(&b.observed_at).then_with(|| a.id.cmp(&b.id)));
        current.dedup_by(|a, b| a.id == b.id);
        Ok(current)
    }
}

impl Arbor {
    /// The current memories of `namespace` filed under a subject and attribute `claims` speak
    /// of (`reconcile::claims_looked_up_by`), restricted ones left out, as stored.
    pub(crate) async fn current_filed_under_claims(
        &self,
        namespace: &Namespace,
        claims: &[Claim],
    ) -> AppResult<Vec<LeafRecord>> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let keys = arbor_domain::reconcile::claims_looked_up_by(claims);
        let query =
            FiledQuery::new(arbor_domain::reconcile::Filing { keys, words: Default::default() }, PER_KEY, CANDIDATES);
        let filter = VisibilityFilter::current_leaves_of(namespace, self.now(), false);
        let filed = self.ports.store.leaves_filed_under(namespace, &query).await?;
        Ok(filed.into_iter().filter(|leaf| filter.admits(&NodeFacts::of_leaf(leaf))).collect())
    }
}

/// `old` as a retirement leaves it: its mark (rule, attribute, by whom), on the record the
/// supersession already closed.
pub(crate) fn marked_retired(retired: LeafRecord, by: &LeafId, retirement: &Retirement) -> LeafRecord {
    let mark = RetirementMark {
        by: by.clone(),
        rule: retirement.rule,
        attribute: retirement.attribute.clone(),
        restored_as: None,
    };
    LeafRecord { claims: LeafClaims { retired: Some(mark), ..retired.claims.clone() }, ..retired }
}

/// `old` marked as possibly outdated by `by` (of lineage `by_lineage`), as
/// [`LeafClaims::doubted_by`] marks it.
pub(crate) fn marked_doubted(old: LeafRecord, by: &LeafId, by_lineage: &LeafId, doubt: &Doubt) -> LeafRecord {
    LeafRecord { claims: old.claims.doubted_by(by, by_lineage, &doubt.attribute, doubt.reason), ..old }
}
