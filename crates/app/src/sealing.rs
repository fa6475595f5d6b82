//! Carrying out `SealPolicy` plans: invalidating summaries above a changed leaf, re-sealing
//! stale and purged summaries, sealing full buffers, and refreshing the root — each step one
//! atomic commit, with compare-and-set on parent links and the root pointer so concurrent
//! sealers cannot corrupt a tree.

use std::collections::{BTreeMap, BTreeSet};

use arbor_domain::id::{NodeId, SummaryId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::markdown;
use arbor_domain::model::{ContentHash, LeafRecord, SummaryRecord, SummaryRole, SummaryStatus, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::seal::{ResealChild, StaleCause, StaleChild, StaleSummary};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::text::truncate_chars;
use arbor_domain::time::Timestamp;
use arbor_ports::{
    Change, ChangeSet, Job, JobKind, LeafExpect, SummarizeRequest, SummaryDraft, SummaryExpect, SummaryInput,
};
use serde::Serialize;

use crate::write::bodies::WrittenBodies;
use crate::{AppError, AppResult, Arbor};

/// What one run of the seal job did to a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct SealReport {
    pub resealed: usize,
    pub sealed: usize,
    pub root_refreshed: bool,
}

/// Jobs a commit enqueued that are worth running right away.
pub(crate) type InlineJobs = Vec<Job>;

impl Arbor {
    /// The sealed ancestors of a node, nearest first.
    pub(crate) async fn ancestors(
        &self,
        namespace: &Namespace,
        parent: Option<&SummaryId>,
    ) -> AppResult<Vec<SummaryRecord>> {
        let scope = std::slice::from_ref(namespace);
        let mut out = Vec::new();
        let mut next = parent.cloned();
        while let Some(id) = next {
            let Some(summary) = self.ports.store.summary(scope, &id).await? else { break };
            next = summary.parent.clone();
            out.push(summary);
            if out.len() > 64 {
                return Err(AppError::Internal(format!("the parent chain above {id} does not end")));
            }
        }
        Ok(out)
    }

    /// Adds to `changes` what [`SealPolicy::invalidate`](arbor_domain::seal::SealPolicy::invalidate)
    /// asks for above `leaf`: stale marks (superseded, archived) or immediate purges
    /// (forgotten). `touched` keeps one change set from updating a summary twice.
    pub(crate) async fn invalidate_above(
        &self,
        changes: &mut ChangeSet,
        touched: &mut BTreeSet<SummaryId>,
        leaf: &LeafRecord,
        cause: StaleCause,
        now: Timestamp,
    ) -> AppResult<InlineJobs> {
        let namespace = &leaf.namespace;
        let ancestors = self.ancestors(namespace, leaf.parent.as_ref()).await?;
        let tree = self.ports.store.tree(namespace, &leaf.tree_id).await?;
        let root = tree.as_ref().and_then(|t| t.root.clone());
        let ids: Vec<SummaryId> = ancestors.iter().map(|s| s.id.clone()).collect();
        let plan = self.policy.seal.invalidate(cause, &ids, root.is_some());
        let mut jobs = Vec::new();
        for summary in &ancestors {
            if !touched.insert(summary.id.clone()) {
                continue;
            }
            let expect = SummaryExpect { status: summary.status, parent: None };
            if plan.purge_now.contains(&summary.id) && summary.status != SummaryStatus::Purged {
                changes.push(Change::UpdateSummary { expect, record: summary.purged(now) });
                jobs.extend(self.unproject_jobs(now, namespace, &leaf.tree_id, summary.node_id()));
            } else if plan.mark_stale.contains(&summary.id) && summary.status == SummaryStatus::Current {
                let mut stale = summary.clone();
                stale.status = SummaryStatus::Stale;
                changes.push(Change::UpdateSummary { expect, record: stale });
            }
        }
        if let Some(root_id) = root.filter(|_| plan.root_stale) {
            if plan.purge_root && touched.insert(root_id.clone()) {
                let scope = std::slice::from_ref(namespace);
                if let Some(root) = self.ports.store.summary(scope, &root_id).await? {
                    if root.status != SummaryStatus::Retired {
                        let expect = SummaryExpect { status: root.status, parent: None };
                        changes.push(Change::UpdateSummary { expect, record: root.purged(now) });
                    }
                    jobs.extend(self.unproject_jobs(now, namespace, &leaf.tree_id, root.node_id()));
                }
                changes.push(Change::SetRoot {
                    namespace: namespace.clone(),
                    tree: leaf.tree_id.clone(),
                    expect: Some(root_id),
                    root: None,
                    stale: true,
                });
            } else if !plan.purge_root {
                changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: leaf.tree_id.clone() });
            }
        }
        for job in &jobs {
            changes.push(Change::Enqueue(job.clone()));
        }
        changes.push(Change::Enqueue(self.job(now, JobKind::Seal, namespace, Some(&leaf.tree_id), Vec::new())));
        Ok(jobs)
    }

    /// The jobs that take a node out of the index and delete its body.
    pub(crate) fn unproject_jobs(
        &self,
        now: Timestamp,
        namespace: &Namespace,
        tree: &TreeId,
        node: NodeId,
    ) -> Vec<Job> {
        vec![
            self.job(now, JobKind::Index, namespace, Some(tree), vec![node.clone()]),
            self.job(now, JobKind::Purge, namespace, Some(tree), vec![node]),
        ]
    }

    /// The seal job for one tree: re-seal what awaits it, seal full buffers until none remain,
    /// refresh the root if it is stale or missing.
    pub(crate) async fn seal_tree(&self, namespace: &Namespace, tree_id: &TreeId) -> AppResult<SealReport> {
        let mut report = SealReport { resealed: self.reseal(namespace, tree_id).await?, ..SealReport::default() };
        loop {
            let frontier = self.ports.store.frontier(namespace, tree_id).await?;
            let groups = self.policy.seal.plan_seals(&frontier);
            if groups.is_empty() {
                break;
            }
            for group in groups {
                self.seal_group(namespace, tree_id, group.height, &group.children).await?;
                report.sealed += 1;
            }
        }
        report.root_refreshed = self.refresh_root(namespace, tree_id).await?;
        Ok(report)
    }

    /// A summary awaiting a re-seal as the seal policy sees it: which of its children stay
    /// (everything but forgotten leaves and retired summaries).
    async fn stale_summary(&self, scope: &[Namespace], summary: &SummaryRecord) -> AppResult<StaleSummary> {
        let store = &self.ports.store;
        let leaf_ids: Vec<_> = summary.children.iter().filter_map(|c| c.as_leaf().cloned()).collect();
        let summary_ids: Vec<_> = summary.children.iter().filter_map(|c| c.as_summary().cloned()).collect();
        let gone_leaves: BTreeSet<NodeId> = store
            .leaves(scope, &leaf_ids)
            .await?
            .into_iter()
            .filter(|l| l.status == LeafStatus::Tombstone)
            .map(|l| l.node_id())
            .collect();
        let gone_summaries: BTreeSet<NodeId> = store
            .summaries(scope, &summary_ids)
            .await?
            .into_iter()
            .filter(|s| s.status == SummaryStatus::Retired)
            .map(|s| s.node_id())
            .collect();
        Ok(StaleSummary {
            id: summary.id.clone(),
            height: summary.height,
            children: summary
                .children
                .iter()
                .map(|c| StaleChild { node: c.clone(), keep: !gone_leaves.contains(c) && !gone_summaries.contains(c) })
                .collect(),
        })
    }

    async fn reseal(&self, namespace: &Namespace, tree_id: &TreeId) -> AppResult<usize> {
        let store = &self.ports.store;
        let scope = std::slice::from_ref(namespace);
        let awaiting = store.summaries_awaiting_reseal(namespace, tree_id).await?;
        if awaiting.is_empty() {
            return Ok(0);
        }
        let mut stale = Vec::with_capacity(awaiting.len());
        for summary in &awaiting {
            stale.push(self.stale_summary(scope, summary).await?);
        }
        let by_id: BTreeMap<SummaryId, &SummaryRecord> = awaiting.iter().map(|s| (s.id.clone(), s)).collect();
        let mut replacements: BTreeMap<SummaryId, SummaryId> = BTreeMap::new();
        let steps = self.policy.seal.plan_reseal(&stale);
        let count = steps.len();
        for step in steps {
            let old = by_id[&step.replaces];
            let now = self.now();
            let children: Vec<NodeId> = step
                .children
                .iter()
                .map(|c| match c {
                    ResealChild::Keep(node) => node.clone(),
                    ResealChild::ReplacementOf(id) => NodeId::Summary(replacements[id].clone()),
                })
                .collect();
            let mut changes = ChangeSet::new();
            let mut inline = self.unproject_jobs(now, namespace, tree_id, old.node_id());
            changes.push(Change::UpdateSummary {
                expect: SummaryExpect { status: old.status, parent: None },
                record: old.retired(now),
            });
            let mut written = None;
            if !children.is_empty() {
                let (record, body) = self
                    .write_summary(
                        namespace,
                        tree_id,
                        SummaryRole::Sealed,
                        step.height,
                        children.clone(),
                        old.parent.clone(),
                        Some(old.id.clone()),
                        now,
                    )
                    .await?;
                written = Some(body);
                self.adopt_children(&mut changes, namespace, &children, Some(&old.id), &record.id).await?;
                inline.push(self.job(now, JobKind::Index, namespace, Some(tree_id), vec![record.node_id()]));
                replacements.insert(old.id.clone(), record.id.clone());
                changes.push(Change::InsertSummary(record));
            }
            if old.parent.is_none() {
                changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: tree_id.clone() });
            }
            for job in &inline {
                changes.push(Change::Enqueue(job.clone()));
            }
            self.commit_with_bodies(changes, written).await?;
            if self.options.index_inline {
                self.run_inline(inline).await;
            }
        }
        Ok(count)
    }

    async fn seal_group(
        &self,
        namespace: &Namespace,
        tree_id: &TreeId,
        height: u8,
        children: &[NodeId],
    ) -> AppResult<()> {
        let now = self.now();
        let (record, body) = self
            .write_summary(namespace, tree_id, SummaryRole::Sealed, height, children.to_vec(), None, None, now)
            .await?;
        let mut changes = ChangeSet::new();
        self.adopt_children(&mut changes, namespace, children, None, &record.id).await?;
        let index = self.job(now, JobKind::Index, namespace, Some(tree_id), vec![record.node_id()]);
        changes.push(Change::Audit(self.audit(
            now,
            "summary.sealed",
            namespace,
            record.node_id(),
            &record.body_sha256,
        )));
        changes.push(Change::InsertSummary(record));
        changes.push(Change::MarkRootStale { namespace: namespace.clone(), tree: tree_id.clone() });
        changes.push(Change::Enqueue(index.clone()));
        self.commit_with_bodies(changes, Some(body)).await?;
        if self.options.index_inline {
            self.run_inline(vec![index]).await;
        }
        Ok(())
    }

    /// Points each child's parent link at `parent`, provided it still points at `expected`.
    async fn adopt_children(
        &self,
        changes: &mut ChangeSet,
        namespace: &Namespace,
        children: &[NodeId],
        expected: Option<&SummaryId>,
        parent: &SummaryId,
    ) -> AppResult<()> {
        let scope = std::slice::from_ref(namespace);
        let leaf_ids: Vec<_> = children.iter().filter_map(|c| c.as_leaf().cloned()).collect();
        let summary_ids: Vec<_> = children.iter().filter_map(|c| c.as_summary().cloned()).collect();
        let leaves = self.ports.store.leaves(scope, &leaf_ids).await?;
        let summaries = self.ports.store.summaries(scope, &summary_ids).await?;
        if leaves.len() + summaries.len() != children.len() {
            return Err(AppError::Port(arbor_ports::Error::Conflict {
                what: "summary children",
                id: parent.to_string(),
                expected: format!("{} children", children.len()),
                found: format!("{}", leaves.len() + summaries.len()),
            }));
        }
        for leaf in leaves {
            let expect = LeafExpect { status: leaf.status, parent: Some(expected.cloned()) };
            changes.push(Change::UpdateLeaf { expect, record: LeafRecord { parent: Some(parent.clone()), ..leaf } });
        }
        for summary in summaries {
            let expect = SummaryExpect { status: summary.status, parent: Some(expected.cloned()) };
            changes.push(Change::UpdateSummary {
                expect,
                record: SummaryRecord { parent: Some(parent.clone()), ..summary },
            });
        }
        Ok(())
    }

    async fn refresh_root(&self, namespace: &Namespace, tree_id: &TreeId) -> AppResult<bool> {
        let store = &self.ports.store;
        let Some(tree) = store.tree(namespace, tree_id).await? else { return Ok(false) };
        let frontier = store.frontier(namespace, tree_id).await?;
        if !tree.root_stale && (tree.root.is_some() || frontier.is_empty()) {
            return Ok(false);
        }
        let now = self.now();
        let scope = std::slice::from_ref(namespace);
        let old_root = match &tree.root {
            Some(id) => store.summary(scope, id).await?,
            None => None,
        };
        let mut changes = ChangeSet::new();
        let mut inline = Vec::new();
        if let Some(old) = old_root.as_ref().filter(|r| r.status != SummaryStatus::Retired) {
            changes.push(Change::UpdateSummary {
                expect: SummaryExpect { status: old.status, parent: None },
                record: old.retired(now),
            });
            inline.extend(self.unproject_jobs(now, namespace, tree_id, old.node_id()));
        }
        let mut written = None;
        let new_root = match self.policy.seal.plan_root(&frontier) {
            Some((height, children)) => {
                let (record, body) = self
                    .write_summary(
                        namespace,
                        tree_id,
                        SummaryRole::Root,
                        height,
                        children,
                        None,
                        tree.root.clone(),
                        now,
                    )
                    .await?;
                written = Some(body);
                inline.push(self.job(now, JobKind::Index, namespace, Some(tree_id), vec![record.node_id()]));
                let id = record.id.clone();
                changes.push(Change::InsertSummary(record));
                Some(id)
            }
            None => None,
        };
        changes.push(Change::SetRoot {
            namespace: namespace.clone(),
            tree: tree_id.clone(),
            expect: tree.root.clone(),
            root: new_root,
            stale: false,
        });
        for job in &inline {
            changes.push(Change::Enqueue(job.clone()));
        }
        self.commit_with_bodies(changes, written).await?;
        if self.options.index_inline {
            self.run_inline(inline).await;
        }
        Ok(true)
    }

    /// Summarizes `children` and writes the body. Only current, non-restricted children lend
    /// their words; restricted memories are never summarized.
    #[allow(clippy::too_many_arguments)]
    async fn write_summary(
        &self,
        namespace: &Namespace,
        tree_id: &TreeId,
        role: SummaryRole,
        height: u8,
        children: Vec<NodeId>,
        parent: Option<SummaryId>,
        replaces: Option<SummaryId>,
        now: Timestamp,
    ) -> AppResult<(SummaryRecord, WrittenBodies)> {
        let scope = std::slice::from_ref(namespace);
        let leaf_ids: Vec<_> = children.iter().filter_map(|c| c.as_leaf().cloned()).collect();
        let summary_ids: Vec<_> = children.iter().filter_map(|c| c.as_summary().cloned()).collect();
        let leaves = self.ports.store.leaves(scope, &leaf_ids).await?;
        let summaries = self.ports.store.summaries(scope, &summary_ids).await?;

        let (inputs, sensitivity, times) = summary_inputs(&leaves, &summaries);
        let request = SummarizeRequest { tree: tree_id.clone(), height, children: inputs };
        let draft = self.draft_summary(&request, sensitivity).await;
        let id = self.new_summary_id(now);
        let category = tree_id.category();
        let path = BodyPath::summary(namespace, category, tree_id, role.level(height), &id);
        let mut record = SummaryRecord {
            body_path: path.clone(),
            id: id.clone(),
            namespace: namespace.clone(),
            category,
            tree_id: tree_id.clone(),
            role,
            height,
            parent,
            children,
            title: arbor_domain::model::bounded_title(&draft.title),
            summary: truncate_chars(&draft.text, arbor_domain::model::MAX_SUMMARY_CHARS),
            body_sha256: ContentHash::unwritten(),
            time_range_start: times.iter().min().copied(),
            time_range_end: times.iter().max().copied(),
            sealed_at: now,
            labels: draft.labels,
            sensitivity,
            status: SummaryStatus::Current,
            retired_at: None,
            replaces,
        };
        let body = markdown::render_summary(&record, &record.summary);
        let written = self.write_bodies(vec![(path, body.into_bytes())]).await?;
        record.body_sha256 = written.hashes[0].clone();
        Ok((record, written))
    }

    /// The summary's title and text: the configured reasoner's, unless there is nothing current
    /// to summarize or the words may not go to it (then the deterministic heuristics'), or its
    /// answer is unusable (a counted fallback to the heuristics).
    async fn draft_summary(&self, request: &SummarizeRequest, sensitivity: Sensitivity) -> SummaryDraft {
        if request.children.is_empty() {
            SummaryDraft {
                title: "Nothing current".to_owned(),
                text: "Every memory under this summary has been superseded or set aside.".to_owned(),
                labels: Vec::new(),
            }
        } else if !sensitivity.may_be_given_to(self.ports.reasoner.locality()) {
            arbor_domain::heuristics::summarize(request)
        } else {
            match self.ask_reasoner("summarize", self.ports.reasoner.summarize(request)).await {
                Some(draft) => draft,
                None => arbor_domain::heuristics::summarize(request),
            }
        }
    }
}

/// What a summary is written from: its current children (active leaves whose words may be
/// generated into something, current or stale summaries), the most careful sensitivity among
/// them, and every child's times (for the summary's time range, whatever the child's state).
fn summary_inputs(
    leaves: &[LeafRecord],
    summaries: &[SummaryRecord],
) -> (Vec<SummaryInput>, Sensitivity, Vec<Timestamp>) {
    let mut inputs = Vec::new();
    let mut sensitivity = Sensitivity::Normal;
    let mut times: Vec<Timestamp> = Vec::new();
    for leaf in leaves {
        times.push(leaf.observed_at);
        // Restricted words are never generated into anything automatically.
        if leaf.status == LeafStatus::Active && leaf.sensitivity.allows_automatic_generation() {
            sensitivity = sensitivity.max(leaf.sensitivity);
            inputs.push(SummaryInput {
                id: leaf.node_id(),
                title: leaf.title.clone(),
                text: leaf.summary.clone(),
                observed_at: leaf.observed_at,
            });
        }
    }
    for summary in summaries {
        times.extend(summary.time_range_start);
        times.extend(summary.time_range_end);
        if matches!(summary.status, SummaryStatus::Current | SummaryStatus::Stale) {
            sensitivity = sensitivity.max(summary.sensitivity);
            inputs.push(SummaryInput {
                id: summary.node_id(),
                title: summary.title.clone(),
                text: summary.summary.clone(),
                observed_at: summary.time_range_end.unwrap_or(summary.sealed_at),
            });
        }
    }
    (inputs, sensitivity, times)
}
