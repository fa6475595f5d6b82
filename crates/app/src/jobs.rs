//! The job runner: drains the outbox. Jobs are idempotent and leased, so a crash mid-job
//! only delays the work until the lease expires, and two runners never corrupt anything.

use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;
use arbor_ports::{Change, ChangeSet, Job, JobClaim, JobKind};
use serde::Serialize;

use crate::projection::{Projection, Vectors};
use crate::{AppError, AppResult, Arbor, ProcessState};

/// How many jobs are claimed at a time.
const CLAIM_BATCH: usize = 64;

/// How many times a job that lost a race (a conflict: another writer changed what it works
/// on) is run again at once before it is put back for later.
const RACE_RETRIES: u32 = 3;

/// How long a job put back after losing races waits before it is claimable again.
const DEFER_SECONDS: i64 = 2;

/// What a run of the job runner did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobsReport {
    pub completed: usize,
    pub failed: usize,
    /// Jobs that kept losing races with other writers and were put back to run again shortly
    /// (not failures: their attempts are not counted).
    pub deferred: usize,
    /// Leases of workers that are gone (killed mid-job), given back so their jobs ran now.
    pub leases_reclaimed: usize,
    /// Jobs still leased by other workers when this run ended: who holds each, and until
    /// when.
    pub held_elsewhere: Vec<arbor_ports::JobLease>,
    /// When the soonest job left waiting (put back after a lost race, or retrying) comes due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_due: Option<Timestamp>,
    pub seals: usize,
    pub summaries_sealed: usize,
    pub summaries_resealed: usize,
    pub roots_refreshed: usize,
    pub indexed: usize,
    pub unindexed: usize,
    pub bodies_purged: usize,
}

impl Arbor {
    /// Runs jobs until none are runnable (or `max_jobs` have run).
    pub async fn run_jobs(&self, max_jobs: Option<usize>) -> AppResult<JobsReport> {
        let mut report = JobsReport { leases_reclaimed: self.reclaim_dead_leases().await?, ..JobsReport::default() };
        let limit = max_jobs.unwrap_or(usize::MAX);
        while report.completed + report.failed < limit {
            let now = self.now();
            let claim = JobClaim {
                worker: self.options.worker.clone(),
                now,
                lease_until: lease_end(now, self.options.job_lease_seconds),
                limit: CLAIM_BATCH.min(limit - report.completed - report.failed),
            };
            let jobs = self.ports.store.claim_jobs(&claim).await?;
            if jobs.is_empty() {
                break;
            }
            let jobs = self.run_index_jobs_together(jobs, &mut report).await?;
            for job in jobs {
                let mut outcome = self.run_job(&job, &mut report).await;
                let mut races = 0;
                while races < RACE_RETRIES && outcome.as_ref().is_err_and(lost_a_race) {
                    races += 1;
                    outcome = self.run_job(&job, &mut report).await;
                }
                if outcome.as_ref().is_err_and(lost_a_race) {
                    tracing::debug!(job = %job.id, kind = job.kind.as_str(), "job kept losing races; put back");
                    let retry_at = lease_end(self.now(), DEFER_SECONDS);
                    self.ports
                        .store
                        .commit(ChangeSet::new().with(Change::DeferJob { id: job.id.clone(), retry_at }))
                        .await?;
                    report.deferred += 1;
                    continue;
                }
                match outcome {
                    Ok(()) => {
                        self.ports
                            .store
                            .commit(ChangeSet::new().with(Change::CompleteJob { id: job.id.clone() }))
                            .await?;
                        report.completed += 1;
                    }
                    Err(error) => {
                        let attempts = job.attempts + 1;
                        let retry_at = (attempts < self.options.max_job_attempts)
                            .then(|| lease_end(self.now(), 2i64.pow(attempts.min(10))));
                        tracing::warn!(job = %job.id, kind = job.kind.as_str(), attempts, error = %arbor_ports::with_causes(&error), "job failed");
                        let fail = Change::FailJob { id: job.id.clone(), error: error.to_string(), retry_at };
                        self.ports.store.commit(ChangeSet::new().with(fail)).await?;
                        report.failed += 1;
                    }
                }
            }
        }
        report.held_elsewhere = self
            .ports
            .store
            .job_leases()
            .await?
            .into_iter()
            .filter(|lease| lease.worker != self.options.worker && lease.until > self.now())
            .collect();
        report.next_due = self.ports.store.counts().await?.jobs_next_due;
        Ok(report)
    }

    /// Runs the index jobs among `jobs` together, namespace by namespace: every node of them
    /// projected in one pass, so texts are embedded in batches ([`Arbor::project_nodes`])
    /// rather than one call per job — what keeps up with writes that left their vectors to
    /// the runner. Jobs of a namespace whose pass failed are returned with the other jobs, to
    /// be run one by one (and failed or retried one by one).
    async fn run_index_jobs_together(&self, jobs: Vec<Job>, report: &mut JobsReport) -> AppResult<Vec<Job>> {
        let (index, mut rest): (Vec<Job>, Vec<Job>) =
            jobs.into_iter().partition(|job| job.kind == JobKind::Index && !job.nodes.is_empty());
        let mut by_namespace: std::collections::BTreeMap<Namespace, Vec<Job>> = std::collections::BTreeMap::new();
        for job in index {
            by_namespace.entry(job.namespace.clone()).or_default().push(job);
        }
        for (namespace, jobs) in by_namespace {
            let nodes: Vec<arbor_domain::id::NodeId> = jobs.iter().flat_map(|job| job.nodes.iter().cloned()).collect();
            match self.project_nodes(&namespace, &nodes, Vectors::Now).await {
                Ok((upserted, removed)) => {
                    let mut done = ChangeSet::new();
                    for job in &jobs {
                        done.push(Change::CompleteJob { id: job.id.clone() });
                    }
                    self.ports.store.commit(done).await?;
                    report.indexed += upserted;
                    report.unindexed += removed;
                    report.completed += jobs.len();
                }
                Err(error) => {
                    tracing::debug!(%namespace, jobs = jobs.len(), error = %arbor_ports::with_causes(&error), "index jobs run together failed; running them one by one");
                    rest.extend(jobs);
                }
            }
        }
        Ok(rest)
    }

    /// Gives back the leases of workers known to be gone (a runner killed mid-job), so their
    /// jobs run now instead of when the lease would have ended. A worker that may be alive
    /// (on another host, or when that cannot be told) keeps its lease until it ends.
    pub(crate) async fn reclaim_dead_leases(&self) -> AppResult<usize> {
        let now = self.now();
        let mut changes = ChangeSet::new();
        for lease in self.ports.store.job_leases().await? {
            let expired = lease.until <= now;
            if !expired
                && lease.worker != self.options.worker
                && self.process_state(&lease.worker) == ProcessState::Gone
            {
                tracing::info!(job = %lease.id, worker = %lease.worker, "reclaiming the lease of a worker that is gone");
                changes.push(Change::ReleaseLease { id: lease.id, worker: lease.worker });
            }
        }
        let reclaimed = changes.len();
        if reclaimed > 0 {
            self.ports.store.commit(changes).await?;
        }
        Ok(reclaimed)
    }

    async fn run_job(&self, job: &Job, report: &mut JobsReport) -> AppResult<()> {
        match job.kind {
            JobKind::Seal => {
                let tree = job
                    .tree
                    .as_ref()
                    .ok_or_else(|| AppError::Internal(format!("seal job {} names no tree", job.id)))?;
                let sealed = self.seal_tree(&job.namespace, tree).await?;
                report.seals += 1;
                report.summaries_sealed += sealed.sealed;
                report.summaries_resealed += sealed.resealed;
                report.roots_refreshed += usize::from(sealed.root_refreshed);
            }
            JobKind::Index | JobKind::Purge => self.run_node_job(job, report).await?,
        }
        Ok(())
    }

    /// Index and purge jobs: their nodes, no further jobs.
    async fn run_node_job(&self, job: &Job, report: &mut JobsReport) -> AppResult<()> {
        if job.nodes.is_empty() {
            return Err(AppError::Internal(format!("{} job {} names no node", job.kind.as_str(), job.id)));
        }
        for node in &job.nodes {
            match job.kind {
                JobKind::Index => match self.project(&job.namespace, node).await? {
                    Projection::Upserted => report.indexed += 1,
                    Projection::Removed => report.unindexed += 1,
                },
                JobKind::Purge => {
                    if self.purge_body(&job.namespace, node).await? {
                        report.bodies_purged += 1;
                    }
                }
                JobKind::Seal => {}
            }
        }
        Ok(())
    }

    /// Runs index and purge jobs a commit just enqueued, right away, and completes them. A
    /// failure is logged and the job stays queued for the runner; seal jobs are always left to
    /// the runner.
    pub(crate) async fn run_inline(&self, jobs: Vec<Job>) {
        let mut report = JobsReport::default();
        let vectors = self.inline_vectors();
        for job in jobs.into_iter().filter(|job| job.kind != JobKind::Seal) {
            if job.kind == JobKind::Index && vectors == Vectors::Later {
                // Searchable by its words now; the job stays queued for the runner to embed.
                if let Err(error) = self.project_nodes(&job.namespace, &job.nodes, Vectors::Later).await {
                    tracing::warn!(job = %job.id, error = %arbor_ports::with_causes(&error), "inline indexing failed; left for the runner");
                }
                continue;
            }
            match self.run_node_job(&job, &mut report).await {
                Ok(()) => {
                    let done = ChangeSet::new().with(Change::CompleteJob { id: job.id.clone() });
                    if let Err(error) = self.ports.store.commit(done).await {
                        tracing::warn!(job = %job.id, error = %arbor_ports::with_causes(&error), "could not complete an inline job; the runner will repeat it");
                    }
                }
                Err(error) => {
                    tracing::warn!(job = %job.id, error = %arbor_ports::with_causes(&error), "inline job failed; left for the runner")
                }
            }
        }
    }
}

/// Whether a job failed only because another writer changed what it works on meanwhile: worth
/// running again, and no failure of the job.
fn lost_a_race(error: &AppError) -> bool {
    match error {
        AppError::Port(port) => port.is_conflict(),
        AppError::Contention { .. } => true,
        _ => false,
    }
}

fn lease_end(now: Timestamp, seconds: i64) -> Timestamp {
    now.checked_add(jiff::SignedDuration::from_secs(seconds)).unwrap_or(now)
}
