//! Checks of the [`MetadataStore`](crate::MetadataStore) contract: the job queue: coalescing,
//! leases, retries, dead letters, pending listings, released and deferred leases.

use arbor_domain::namespace::Namespace;

use crate::conformance::fixtures::{conversation, job, ts};
use crate::store::{Change, ChangeSet, Job, JobClaim, JobKind, MetadataStore};

/// Jobs: coalescing by key, leases, retries, dead letters and completion.
pub async fn jobs_claim_lease_retry_complete(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(job(&ns, "job-1", "seal:a", 0)))
                .with(Change::Enqueue(job(&ns, "job-2", "seal:a", 0))) // absorbed by job-1
                .with(Change::Enqueue(job(&ns, "job-3", "seal:b", 0)))
                .with(Change::Enqueue(job(&ns, "job-4", "seal:c", 50))),
        )
        .await
        .unwrap();
    let claim =
        |worker: &str, now, limit| JobClaim { worker: worker.into(), now: ts(now), lease_until: ts(now + 30), limit };
    let ids = |jobs: Vec<crate::store::Job>| jobs.into_iter().map(|j| j.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(store.claim_jobs(&claim("w1", 10, 1)).await.unwrap()), vec!["job-1"]);
    assert_eq!(
        ids(store.claim_jobs(&claim("w2", 10, 10)).await.unwrap()),
        vec!["job-3"],
        "job-1 is leased, job-4 not due"
    );
    // A new enqueue with the key of a claimed job is not absorbed: the work must run again.
    store.commit(ChangeSet::new().with(Change::Enqueue(job(&ns, "job-5", "seal:a", 0)))).await.unwrap();
    assert_eq!(ids(store.claim_jobs(&claim("w2", 11, 10)).await.unwrap()), vec!["job-5"]);
    // Leases expire.
    assert_eq!(ids(store.claim_jobs(&claim("w3", 45, 10)).await.unwrap()), vec!["job-1", "job-3", "job-5"]);
    let retry = Change::FailJob { id: job(&ns, "job-3", "", 0).id, error: "boom".into(), retry_at: Some(ts(100)) };
    let dead = Change::FailJob { id: job(&ns, "job-5", "", 0).id, error: "fatal".into(), retry_at: None };
    let done = Change::CompleteJob { id: job(&ns, "job-1", "", 0).id };
    store.commit(ChangeSet::new().with(retry).with(dead).with(done.clone())).await.unwrap();
    store.commit(ChangeSet::new().with(done)).await.expect("completing twice is harmless");
    assert_eq!(ids(store.claim_jobs(&claim("w4", 90, 10)).await.unwrap()), vec!["job-4"]);
    let retried = store.claim_jobs(&claim("w4", 110, 10)).await.unwrap();
    assert_eq!(ids(retried.clone()), vec!["job-3"], "job-4 is leased; job-5 is dead");
    assert_eq!((retried[0].attempts, retried[0].last_error.as_deref()), (1, Some("boom")));
    let counts = store.counts().await.unwrap();
    assert_eq!((counts.jobs_pending, counts.jobs_dead), (2, 1));
}

/// Pending jobs are listed by kind and namespace, newest first: claimed ones still count (their
/// work is not done), completed and dead ones do not, nor any outside the scope asked about.
pub async fn pending_jobs_are_listed_by_kind_and_scope(store: &dyn MetadataStore) {
    let (c1, c2) = (conversation("c1"), conversation("c2"));
    let index = |ns: &Namespace, id: &str, at: i64| Job {
        kind: JobKind::Index,
        created_at: ts(at),
        ..job(ns, id, &format!("index:{id}"), 0)
    };
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(index(&c1, "job-1", 1)))
                .with(Change::Enqueue(index(&c1, "job-2", 3)))
                .with(Change::Enqueue(index(&c2, "job-3", 2)))
                .with(Change::Enqueue(job(&c1, "job-4", "seal:a", 0))),
        )
        .await
        .unwrap();
    let pending = |kind, scope: Vec<Namespace>, limit| async move {
        let jobs = store.pending_jobs(kind, &scope, limit).await.unwrap();
        jobs.into_iter().map(|j| j.id.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(pending(JobKind::Index, vec![c1.clone()], 10).await, ["job-2", "job-1"]);
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 10).await, ["job-2", "job-3", "job-1"]);
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 2).await, ["job-2", "job-3"]);
    assert_eq!(pending(JobKind::Seal, vec![c1.clone()], 10).await, ["job-4"]);
    assert!(pending(JobKind::Index, vec![conversation("c3")], 10).await.is_empty());
    assert!(pending(JobKind::Index, Vec::new(), 10).await.is_empty());
    assert!(pending(JobKind::Index, vec![c1.clone()], 0).await.is_empty());
    let claim = JobClaim { worker: "w".into(), now: ts(4), lease_until: ts(60), limit: 10 };
    assert_eq!(store.claim_jobs(&claim).await.unwrap().len(), 4);
    assert_eq!(pending(JobKind::Index, vec![c1.clone()], 10).await, ["job-2", "job-1"], "claimed is not done");
    let done = Change::CompleteJob { id: index(&c1, "job-1", 0).id };
    let dead = Change::FailJob { id: index(&c1, "job-2", 0).id, error: "fatal".into(), retry_at: None };
    store.commit(ChangeSet::new().with(done).with(dead)).await.unwrap();
    assert_eq!(pending(JobKind::Index, vec![c1.clone(), c2.clone()], 10).await, ["job-3"]);
}

/// Leases are listed with their worker; a lease is given back only by naming the worker that
/// holds it; a deferred job runs later with its attempts unchanged.
pub async fn leases_are_listed_released_and_deferred(store: &dyn MetadataStore) {
    let ns = conversation("c1");
    store
        .commit(
            ChangeSet::new()
                .with(Change::Enqueue(job(&ns, "job-1", "seal:a", 0)))
                .with(Change::Enqueue(job(&ns, "job-2", "seal:b", 0))),
        )
        .await
        .unwrap();
    assert!(store.job_leases().await.unwrap().is_empty());
    let claim = JobClaim { worker: "host/1".into(), now: ts(10), lease_until: ts(310), limit: 10 };
    assert_eq!(store.claim_jobs(&claim).await.unwrap().len(), 2);
    let leases = store.job_leases().await.unwrap();
    assert_eq!(leases.len(), 2);
    assert!(leases.iter().all(|l| l.worker == "host/1" && l.until == ts(310)), "{leases:?}");
    let release = |worker: &str| Change::ReleaseLease { id: job(&ns, "job-1", "", 0).id, worker: worker.into() };
    store.commit(ChangeSet::new().with(release("host/2"))).await.unwrap();
    assert_eq!(store.job_leases().await.unwrap().len(), 2, "only the holder's name gives a lease back");
    store.commit(ChangeSet::new().with(release("host/1"))).await.unwrap();
    let again = JobClaim { worker: "host/3".into(), now: ts(11), lease_until: ts(311), limit: 10 };
    let claimed = store.claim_jobs(&again).await.unwrap();
    assert_eq!(claimed.iter().map(|j| j.id.to_string()).collect::<Vec<_>>(), vec!["job-1"], "claimable at once");
    store
        .commit(ChangeSet::new().with(Change::DeferJob { id: job(&ns, "job-1", "", 0).id, retry_at: ts(100) }))
        .await
        .unwrap();
    let early = JobClaim { worker: "host/3".into(), now: ts(50), lease_until: ts(350), limit: 10 };
    assert!(store.claim_jobs(&early).await.unwrap().is_empty(), "not before it is due");
    let due = JobClaim { worker: "host/3".into(), now: ts(100), lease_until: ts(400), limit: 10 };
    let deferred = store.claim_jobs(&due).await.unwrap();
    assert_eq!(deferred.len(), 1);
    assert_eq!(deferred[0].attempts, 0, "losing a race is not a failed attempt");
}
