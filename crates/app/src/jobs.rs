//! The job runner: drains the outbox. Jobs are idempotent and leased, so a crash mid-job
//! only delays the work until the lease expires, and two runners never corrupt anything.

use arbor_domain::time::Timestamp;
use arbor_ports::{Change, ChangeSet, Job, JobClaim, JobKind};
use serde::Serialize;

use crate::projection::Projection;
use crate::{AppError, AppResult, Arbor};

/// How many jobs are claimed at a time.
const CLAIM_BATCH: usize = 64;

/// What a run of the job runner did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobsReport {
    pub completed: usize,
    pub failed: usize,
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
        let mut report = JobsReport::default();
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
            for job in jobs {
                match self.run_job(&job, &mut report).await {
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
                        tracing::warn!(job = %job.id, kind = job.kind.as_str(), attempts, %error, "job failed");
                        let fail = Change::FailJob { id: job.id.clone(), error: error.to_string(), retry_at };
                        self.ports.store.commit(ChangeSet::new().with(fail)).await?;
                        report.failed += 1;
                    }
                }
            }
        }
        Ok(report)
    }

    async fn run_job(&self, job: &Job, report: &mut JobsReport) -> AppResult<()> {
        match job.kind {
            JobKind::Seal => {
                let tree = job
                    .tree
                    .as_ref()
                    .ok_or_else(|| AppError::InvalidRequest(format!("seal job {} names no tree", job.id)))?;
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
            return Err(AppError::InvalidRequest(format!("{} job {} names no node", job.kind.as_str(), job.id)));
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
        for job in jobs.into_iter().filter(|job| job.kind != JobKind::Seal) {
            match self.run_node_job(&job, &mut report).await {
                Ok(()) => {
                    let done = ChangeSet::new().with(Change::CompleteJob { id: job.id.clone() });
                    if let Err(error) = self.ports.store.commit(done).await {
                        tracing::warn!(job = %job.id, %error, "could not complete an inline job; the runner will repeat it");
                    }
                }
                Err(error) => tracing::warn!(job = %job.id, %error, "inline job failed; left for the runner"),
            }
        }
    }
}

fn lease_end(now: Timestamp, seconds: i64) -> Timestamp {
    now.checked_add(jiff::SignedDuration::from_secs(seconds)).unwrap_or(now)
}
