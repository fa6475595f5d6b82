//! Consolidation reports on disk: `reports/consolidation/<at>.md` under the store, one per pass
//! that found anything new or proposed anything, named so they sort in time. The latest
//! report's front matter says where each namespace's next pass resumes; a lock file held for
//! the length of a pass lets only one run at a time per store directory (the operating system
//! releases it when the process ends, so a killed pass never blocks the next; processes on
//! other machines sharing one Postgres store are not excluded by it).

use std::collections::BTreeMap;
use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{ComposeError, Doing, DoingWith, Result};
use arbor_app::{ConsolidationRun, report_marks};
use arbor_domain::consolidation::ProposalKind;
use arbor_domain::id::LeafId;
use arbor_domain::namespace::Namespace;
use arbor_ports::WriteMark;

use crate::durable::{Readers, replace_file};

/// Where the reports live, under the store root.
pub const REPORTS_DIR: &str = "reports/consolidation";

/// Held while a consolidation pass runs; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct ConsolidationLock {
    _file: File,
}

/// Takes the store's consolidation lock, or says that another pass holds it.
pub fn lock_consolidation(root: &Path) -> Result<ConsolidationLock> {
    let dir = root.join(REPORTS_DIR);
    fs::create_dir_all(&dir).io(|| format!("creating {}", dir.display()))?;
    let path = dir.join(".lock");
    let file = lock_file(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(ConsolidationLock { _file: file }),
        Err(TryLockError::WouldBlock) => {
            Err(ComposeError::Busy("another consolidation pass is running on this store; try again later".to_owned()))
        }
        Err(TryLockError::Error(error)) => Err(error).io(|| format!("locking {}", path.display())),
    }
}

/// The file at `path` that a lock is taken on (made if missing; its content is never used).
pub(crate) fn lock_file(path: &Path) -> Result<File> {
    File::options().create(true).truncate(false).write(true).open(path).io(|| format!("opening {}", path.display()))
}

/// A report on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    pub path: PathBuf,
    pub name: String,
}

/// The reports, oldest first. Files that are not reports are passed over.
pub fn list_reports(root: &Path) -> Result<Vec<ReportFile>> {
    let dir = root.join(REPORTS_DIR);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).io(|| format!("reading {}", dir.display())),
    };
    let mut reports = Vec::new();
    for entry in entries {
        let path = entry.io(|| format!("reading {}", dir.display()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name.ends_with(".md") && !name.starts_with('.') {
            reports.push(ReportFile { path, name });
        }
    }
    reports.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(reports)
}

/// Where each namespace's next pass resumes: the newest mark any report records for it. A
/// report that cannot be read is an error, not a silent fresh start.
pub fn resume_marks(root: &Path) -> Result<BTreeMap<Namespace, WriteMark>> {
    let mut marks: BTreeMap<Namespace, WriteMark> = BTreeMap::new();
    for report in list_reports(root)? {
        let text = fs::read_to_string(&report.path).io(|| format!("reading {}", report.path.display()))?;
        let Some(found) = report_marks(&text) else {
            return Err(ComposeError::Refused(format!(
                "{} is not a consolidation report (move it out of {REPORTS_DIR})",
                report.path.display()
            )));
        };
        for (namespace, mark) in found {
            let slot = marks.entry(namespace).or_insert_with(|| mark.clone());
            if mark > *slot {
                *slot = mark;
            }
        }
    }
    Ok(marks)
}

/// Every retirement the reports record, oldest report first: what `arbor fsck
/// --rebuild-from-bodies` must retire again, since the bodies do not say it.
pub fn recorded_retirements(root: &Path) -> Result<Vec<(LeafId, LeafId)>> {
    let mut retired = Vec::new();
    for report in list_reports(root)? {
        let text = fs::read_to_string(&report.path).io(|| format!("reading {}", report.path.display()))?;
        let Some(found) = arbor_app::report_retirements(&text) else {
            return Err(ComposeError::Refused(format!(
                "{} is not a consolidation report (move it out of {REPORTS_DIR})",
                report.path.display()
            )));
        };
        retired.extend(found);
    }
    Ok(retired)
}

/// A proposal a consolidation pass left for a person, still open: both memories are current.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LeftForReview {
    pub kind: ProposalKind,
    /// The memory the pass would retire, and the one it would keep.
    pub retire: LeafId,
    pub keep: LeafId,
    /// The report that left it (the latest, if several did).
    pub report: String,
}

/// The proposals the reports left for a person that are still open through `chain`: both
/// memories in its live layers and current (a proposal a person settled otherwise, by a
/// correction, a forget or a later pass, drops out by itself).
pub async fn left_for_review(
    arbor: &arbor_app::Arbor,
    root: &Path,
    chain: &arbor_domain::read_chain::ReadChain,
) -> Result<Vec<LeftForReview>> {
    let mut left: BTreeMap<(LeafId, LeafId), (ProposalKind, String)> = BTreeMap::new();
    for report in list_reports(root)? {
        let text = fs::read_to_string(&report.path).io(|| format!("reading {}", report.path.display()))?;
        // A stray file is the next pass's error to report; listing what waits goes on.
        let Some(found) = arbor_app::report_left_for_review(&text) else {
            tracing::warn!(file = %report.path.display(), "not a consolidation report; passed over");
            continue;
        };
        for (kind, retire, keep) in found {
            left.insert((retire, keep), (kind, report.name.clone()));
        }
    }
    // Live layers only: a frozen layer is not changed through this chain.
    let scope: Vec<Namespace> = chain.live_namespaces().cloned().collect();
    let ids: Vec<LeafId> = left.keys().flat_map(|(retire, keep)| [retire.clone(), keep.clone()]).collect();
    let current: std::collections::BTreeSet<LeafId> = arbor
        .ports()
        .store
        .leaves(&scope, &ids)
        .await
        .backend(|| "reading the memories consolidation left for review".to_owned())?
        .into_iter()
        .filter(|leaf| leaf.status == arbor_domain::lifecycle::LeafStatus::Active)
        .map(|leaf| leaf.id)
        .collect();
    Ok(left
        .into_iter()
        .filter(|((retire, keep), _)| current.contains(retire) && current.contains(keep))
        .map(|((retire, keep), (kind, report))| LeftForReview { kind, retire, keep, report })
        .collect())
}

/// Applies the open proposal to retire `retire` that a pass left for a person, as that person's
/// decision, under the store's consolidation lock, and writes its report (which a rebuild from
/// the bodies reads, as for any pass). Errors when no open proposal retires it through `chain`.
pub async fn apply_left_for_review(
    arbor: &arbor_app::Arbor,
    root: &Path,
    chain: &arbor_domain::read_chain::ReadChain,
    retire: &LeafId,
) -> Result<Pass> {
    let _lock = lock_consolidation(root)?;
    let open = left_for_review(arbor, root, chain).await?;
    let Some(proposal) = open.iter().find(|p| &p.retire == retire) else {
        return Err(ComposeError::Refused(format!(
            "no consolidation proposal waits for a person to retire {retire} here (see `arbor review list`)"
        )));
    };
    let run = arbor.apply_left_for_review(chain, proposal.kind, &proposal.retire, &proposal.keep).await?;
    let report = write_report(root, &run)?;
    Ok(Pass { run, report: Some(report) })
}

/// Writes `run`'s report durably under a new name and returns its path.
pub fn write_report(root: &Path, run: &ConsolidationRun) -> Result<PathBuf> {
    let dir = root.join(REPORTS_DIR);
    fs::create_dir_all(&dir).io(|| format!("creating {}", dir.display()))?;
    let stem = run.at.strftime("%Y%m%dT%H%M%S%.3fZ").to_string();
    let mut path = dir.join(format!("{stem}.md"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = dir.join(format!("{stem}-{n}.md"));
    }
    rewrite_report(&path, run)?;
    Ok(path)
}

/// Writes `run`'s report at `path` durably (over an earlier version of the same report).
fn rewrite_report(path: &Path, run: &ConsolidationRun) -> Result<()> {
    replace_file(path, run.to_markdown().as_bytes(), Readers::Anyone)
}

/// What one scheduled or requested pass came to.
#[derive(Debug)]
pub struct Pass {
    pub run: ConsolidationRun,
    /// The report written, when the pass read anything and was not a dry run.
    pub report: Option<PathBuf>,
}

/// What a consolidation pass covers, and how.
#[derive(Debug, Clone, Default)]
pub struct PassOptions {
    /// The namespaces to consolidate; `None`: every namespace of the store.
    pub namespaces: Option<Vec<Namespace>>,
    /// Plan and report, change nothing (no report file, no lock).
    pub dry_run: bool,
    /// Skip the pass (`Ok(None)`) unless at least this many memories were written since the
    /// last one — what a scheduled pass waits for; a busy lock is then a skip too, not an error.
    pub min_new: Option<usize>,
    /// The most calls to a model reasoner; `None`: `ConsolidateRequest::MODEL_CALLS`.
    pub model_calls: Option<usize>,
}

/// One consolidation pass, each namespace from where the last report left it: under the
/// store's lock unless a dry run, its report written when it read anything.
pub async fn consolidation_pass(arbor: &arbor_app::Arbor, root: &Path, options: PassOptions) -> Result<Option<Pass>> {
    let PassOptions { namespaces, dry_run, min_new, model_calls } = options;
    let _lock = match (dry_run, min_new) {
        (true, _) => None,
        (false, None) => Some(lock_consolidation(root)?),
        (false, Some(_)) => match lock_consolidation(root) {
            Ok(lock) => Some(lock),
            Err(error @ ComposeError::Busy(_)) => {
                tracing::info!(%error, "scheduled consolidation skipped");
                return Ok(None);
            }
            Err(error) => return Err(error),
        },
    };
    let marks = resume_marks(root)?;
    let store = &arbor.ports().store;
    let namespaces = match namespaces {
        Some(namespaces) => namespaces,
        None => store.namespaces().await.backend(|| "listing the store's namespaces".to_owned())?,
    };
    if let Some(min_new) = min_new {
        let mut new = 0;
        for namespace in &namespaces {
            let written = store.leaves_written_after(namespace, marks.get(namespace).cloned(), min_new - new);
            new += written.await.backend(|| format!("reading what {namespace} wrote since the last pass"))?.len();
            if new >= min_new {
                break;
            }
        }
        if new < min_new {
            return Ok(None);
        }
    }
    // A namespace at a time, its report brought up to date after each commit: what a pass
    // retired is on disk before the next namespace starts, so a failure or a kill part-way
    // leaves no committed change out of the reports (a rebuild from the bodies retires again
    // what they record).
    let budget = model_calls.unwrap_or(arbor_app::ConsolidateRequest::MODEL_CALLS);
    let mut run: Option<ConsolidationRun> = None;
    let mut report: Option<PathBuf> = None;
    for namespace in namespaces {
        let mark = marks.get(&namespace).cloned();
        let mut request = arbor_app::ConsolidateRequest::new(vec![(namespace, mark)], dry_run);
        let used = run.as_ref().and_then(|r| r.model.as_ref()).map_or(0, |m| m.calls);
        request.model_calls = budget.saturating_sub(used);
        let step = arbor.consolidate(&request).await?;
        match run.as_mut() {
            Some(so_far) => so_far.absorb(step),
            None => run = Some(step),
        }
        if let Some(so_far) = &run
            && !dry_run
            && so_far.found_anything()
        {
            match &report {
                None => report = Some(write_report(root, so_far)?),
                Some(path) => rewrite_report(path, so_far)?,
            }
        }
    }
    let now = arbor_ports::Clock::now(&*arbor.ports().clock);
    let mut run = run.unwrap_or_else(|| ConsolidationRun::empty(now, dry_run));
    if let Some(model) = run.model.as_mut() {
        model.budget = budget;
    }
    Ok(Some(Pass { run, report }))
}

#[cfg(test)]
mod tests {
    use arbor_domain::event::Event;
    use arbor_domain::read_chain::TrustedContext;

    use super::*;
    use crate::{EmbedderChoice, InitOptions, init, open};

    /// A scheduled pass waits for enough new memories and skips while another pass holds the
    /// lock; a requested one says the lock is taken; each pass resumes where the last report
    /// left off.
    #[tokio::test]
    async fn passes_wait_for_new_memories_take_turns_and_resume_from_the_last_report() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        init(&root, &InitOptions { embedder: EmbedderChoice::Hashing, ..InitOptions::default() }).await.unwrap();
        let arbor = open(&root).await.unwrap().arbor;
        let chain = arbor.read_chain(&TrustedContext::Only { namespace: Namespace::global() }).unwrap();
        for text in ["Maya lives in Porto.", "Tom plays the bass.", "Ana runs on Sundays."] {
            arbor.ingest(&chain, Event::user_message(text)).await.unwrap();
        }
        assert!(
            consolidation_pass(&arbor, &root, PassOptions { min_new: Some(4), ..PassOptions::default() })
                .await
                .unwrap()
                .is_none(),
            "3 < 4 new"
        );
        let held = lock_consolidation(&root).unwrap();
        assert!(
            consolidation_pass(&arbor, &root, PassOptions { min_new: Some(1), ..PassOptions::default() })
                .await
                .unwrap()
                .is_none(),
            "busy: skipped"
        );
        let refused = consolidation_pass(&arbor, &root, PassOptions::default()).await.unwrap_err();
        assert!(refused.to_string().contains("another consolidation pass is running"), "{refused}");
        drop(held);

        let pass = consolidation_pass(&arbor, &root, PassOptions { min_new: Some(3), ..PassOptions::default() })
            .await
            .unwrap()
            .expect("enough new");
        assert_eq!(pass.run.namespaces[0].read, 3);
        let report = pass.report.expect("written");
        assert!(report.starts_with(root.join(REPORTS_DIR)));
        assert_eq!(list_reports(&root).unwrap().len(), 1);
        let marks = resume_marks(&root).unwrap();
        assert_eq!(marks.get(&Namespace::global()), pass.run.namespaces[0].through.as_ref());
        assert!(
            consolidation_pass(&arbor, &root, PassOptions { min_new: Some(1), ..PassOptions::default() })
                .await
                .unwrap()
                .is_none(),
            "nothing new"
        );
        // A file that is not a report is an error, not a silent fresh start.
        fs::write(root.join(REPORTS_DIR).join("notes.md"), "hello").unwrap();
        assert!(resume_marks(&root).unwrap_err().to_string().contains("is not a consolidation report"));
    }

    /// What a pass leaves for a person is listed until it is settled, and a person applies it:
    /// retired as history, recorded in a report like a pass's, and no longer listed.
    #[tokio::test]
    async fn what_a_pass_leaves_for_a_person_is_listed_and_applied() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        init(&root, &InitOptions { embedder: EmbedderChoice::Hashing, ..InitOptions::default() }).await.unwrap();
        let arbor = open(&root).await.unwrap().arbor;
        let chain = arbor.read_chain(&TrustedContext::Only { namespace: Namespace::global() }).unwrap();
        // An assistant's suggestion waits for a person; an update said to hold from before it
        // is written meanwhile (nothing current to replace); the person then confirms the
        // suggestion. A pass sees the two, and leaves the update for a person: it says it
        // held from before the fact it would retire.
        let mut suggestion = Event::user_message("Omar's manager is Linda Park.");
        suggestion.actor = arbor_domain::model::Actor::Assistant;
        suggestion.source =
            arbor_domain::model::SourceRef::Message { conversation: None, message_id: "a-1".to_owned() };
        let first = arbor.ingest(&chain, suggestion).await.unwrap();
        let first = first.chunks[0].outcome.leaf_id().expect("written").clone();
        let mut backdated = Event::user_message("After the reorg Omar reports to Daniel Wu.");
        backdated.hints.valid_from = Some(jiff::Timestamp::from_second(1_000_000_000).unwrap());
        let second = arbor.ingest(&chain, backdated).await.unwrap();
        let second = second.chunks[0].outcome.leaf_id().expect("written").clone();
        arbor.confirm(&chain, &first).await.unwrap();
        let status = |id: LeafId| {
            let arbor = &arbor;
            let scope = vec![Namespace::global()];
            async move { arbor.ports().store.leaf(&scope, &id).await.unwrap().unwrap().status }
        };
        assert_eq!(status(first.clone()).await, arbor_domain::lifecycle::LeafStatus::Active);
        let pass = consolidation_pass(&arbor, &root, PassOptions::default()).await.unwrap().expect("ran");
        assert_eq!((pass.run.applied(), pass.run.left_for_review()), (0, 1), "{:#?}", pass.run);
        let open = left_for_review(&arbor, &root, &chain).await.unwrap();
        assert_eq!(open.len(), 1, "{open:?}");
        assert_eq!((&open[0].retire, &open[0].keep), (&first, &second));
        // Out of scope: nothing listed, nothing applied.
        let other = arbor
            .read_chain(&TrustedContext::Only { namespace: Namespace::parse("project:elsewhere").unwrap() })
            .unwrap();
        assert!(left_for_review(&arbor, &root, &other).await.unwrap().is_empty());
        assert!(apply_left_for_review(&arbor, &root, &other, &first).await.is_err());

        let applied = apply_left_for_review(&arbor, &root, &chain, &first).await.unwrap();
        assert_eq!(applied.run.applied(), 1);
        assert_eq!(status(first.clone()).await, arbor_domain::lifecycle::LeafStatus::Superseded);
        assert_eq!(status(second.clone()).await, arbor_domain::lifecycle::LeafStatus::Active);
        assert!(recorded_retirements(&root).unwrap().contains(&(first.clone(), second.clone())));
        assert!(left_for_review(&arbor, &root, &chain).await.unwrap().is_empty());
        assert!(apply_left_for_review(&arbor, &root, &chain, &first).await.is_err(), "applied once");
    }
}
