//! Random operation sequences run through the real app against a backend, with Arbor's
//! promises checked after every step. Each backend's test file builds fresh [`Ports`] and
//! calls [`run_sequence`] with sequences from [`operations`]; the rules checked are the same
//! for every backend because they are written once, here.
//!
//! The operations interleave, across six contexts (conversations, a project, sibling runs, a
//! frozen experiment run): a person's statements, the assistant's (candidates), imports that
//! contradict what is current (conflicts), batches, confirm / reject, conflict resolutions
//! (keep both, set validity, supersede, reject), promotion and its rollback, corrections,
//! forget, jobs, waiting, and retrievals now and in the past.
//!
//! Checked after every step:
//! - no retrieval returns anything outside the caller's read chain, and none even considers a
//!   candidate from outside it — whatever channel found it (full text, vectors, a named
//!   entity's trees, the memories mentioning the time asked about, the tree neighbours of a
//!   hit) and whatever time the question names;
//! - a recorded retrieval reads back only for callers whose chain holds every namespace of
//!   the chain it was recorded under;
//! - candidates, rejected, superseded (without `as_of`) and forgotten leaves never reach a pack;
//! - budgets hold per layer and in total;
//! - at most one active leaf per (tree, subject), and every leaf's tree exists in its namespace;
//! - forgotten text is nowhere: not in the store, the index or any body.
//!
//! Checked after the jobs run: no stale or purged summary is left, and every tree with members
//! has exactly one current root.

pub mod checklist;
pub mod export_import;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arbor_app::{Arbor, IngestOutcome, Options, Policy, Ports, RetrievalPack, RetrieveRequest};
use arbor_domain::budget::DEFAULT_MAX_RESULTS;
use arbor_domain::conflict::ConflictResolution;
use arbor_domain::event::Event;
use arbor_domain::id::{LeafId, ScopeId};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{SourceRef, SummaryRole, SummaryStatus};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use arbor_domain::time::{Timestamp, Validity};
use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::faults::{FailingBodies, FailingIndex, FailingStore, FaultMode, FaultPlan};
use arbor_ports::{ManualClock, Page, SequentialIds, TreeLeafQuery};
use proptest::prelude::*;

/// One step of a sequence.
#[derive(Debug, Clone)]
pub enum Op {
    /// Ingest statement `template` (with a fresh marker) as `context`.
    Ingest {
        context: usize,
        template: usize,
        variant: usize,
    },
    /// Ingest several statements as one batch.
    IngestBatch {
        context: usize,
        items: Vec<(usize, usize)>,
    },
    /// Forget the `nth` leaf this sequence created (if it is still there), and with
    /// `with_copies` every copy promotion made of it.
    Forget {
        context: usize,
        nth: usize,
        with_copies: bool,
    },
    RunJobs,
    /// Ask `query` as `context`, now or at an earlier instant, recording it or not.
    Retrieve {
        context: usize,
        query: usize,
        past: bool,
        record: bool,
    },
    /// Let time pass.
    Wait {
        minutes: u16,
    },
    /// The assistant's own statement: a candidate awaiting review.
    IngestInferred {
        context: usize,
        template: usize,
        variant: usize,
    },
    /// Promote the `nth` leaf this sequence created one layer up `context`'s chain (where a path
    /// exists), or roll back that leaf's promotion.
    Promote {
        context: usize,
        nth: usize,
        rollback: bool,
    },
    /// A person confirms (or rejects) the `nth` leaf this sequence created, as `context`; only
    /// a candidate inside the chain can be decided.
    Review {
        context: usize,
        nth: usize,
        confirm: bool,
    },
    /// A person corrects the `nth` leaf this sequence created (the version they just read) to
    /// statement `template`/`variant`.
    Correct {
        context: usize,
        nth: usize,
        template: usize,
        variant: usize,
    },
    /// An import, observed `hours_ago`, about what the `nth` earlier person's statement of
    /// this sequence was about (same context and template, another variant): older and less
    /// authoritative than what is current, so it waits as a conflict instead of replacing it.
    IngestImported {
        nth: usize,
        variant: usize,
        hours_ago: u8,
    },
    /// A person answers the conflict of the `nth` candidate this sequence made: keep both, set
    /// it as earlier history or as taking over a minute ago, supersede, or reject (`how`
    /// modulo 5).
    Resolve {
        context: usize,
        /// As the context that made the candidate, rather than `context`.
        as_owner: bool,
        nth: usize,
        how: u8,
    },
}

/// The statements sequences are made of: some share a subject (so they supersede each
/// other), some name an entity (so they get their own tree), some are secrets.
const TEMPLATES: &[&str] = &[
    "My favorite color is {variant} {marker}.",
    "I live in {variant} now {marker}.",
    "Dana prefers {variant} meetings {marker}.",
    "Note {marker} about the {variant} garden.",
    "The team decided to use {variant} for storage {marker}.",
    "Project Alpha ships in {variant} {marker}.",
    "my password is {variant}-{marker}",
    // A time mentioned: found by a question about that day whenever it was observed.
    "Dana walked the {variant} trail yesterday {marker}.",
];

const VARIANTS: &[&str] = &["green", "blue", "Lisbon", "Berlin", "morning", "June", "sqlite"];

const QUERIES: &[&str] = &[
    "favorite color",
    "where do I live",
    "Dana meetings",
    "garden note",
    "storage decision",
    "Project Alpha",
    "password",
    // Time the question names: a range relative to its as_of, and one placed by an event.
    "what did Dana prefer in the last 2 hours",
    "where did I live before the storage decision",
    "tell me about Project Alpha last week",
    "which trail did Dana walk yesterday",
];

/// The trusted contexts sequences act as. 0-1 share project p1; 3-4 are sibling runs; 5 is an
/// experiment run frozen shortly after the start.
pub fn contexts(start: Timestamp) -> Vec<TrustedContext> {
    let id = |s: &str| ScopeId::parse(s).expect("valid scope id");
    vec![
        TrustedContext::Conversation { conversation: id("c1"), project: Some(id("p1")), agent: None },
        TrustedContext::Conversation { conversation: id("c2"), project: Some(id("p1")), agent: None },
        TrustedContext::Project { project: id("p1") },
        TrustedContext::AutomationRun {
            run: id("r1"),
            automation: id("a1"),
            conversation: None,
            project: Some(id("p1")),
        },
        TrustedContext::AutomationRun {
            run: id("r2"),
            automation: id("a1"),
            conversation: None,
            project: Some(id("p1")),
        },
        TrustedContext::ExperimentRun {
            run: id("r3"),
            experiment: id("e1"),
            project: Some(id("p1")),
            frozen_at: start.checked_add(jiff::SignedDuration::from_mins(30)).expect("in range"),
        },
    ]
}

pub fn operations(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    let n = contexts(Timestamp::UNIX_EPOCH).len();
    let op = prop_oneof![
        6 => (0..n, 0..TEMPLATES.len(), 0..VARIANTS.len())
            .prop_map(|(context, template, variant)| Op::Ingest { context, template, variant }),
        2 => (0..n, proptest::collection::vec((0..TEMPLATES.len(), 0..VARIANTS.len()), 2..6))
            .prop_map(|(context, items)| Op::IngestBatch { context, items }),
        2 => (0..n, 0usize..64, any::<bool>()).prop_map(|(context, nth, with_copies)| Op::Forget { context, nth, with_copies }),
        2 => Just(Op::RunJobs),
        3 => (0..n, 0..QUERIES.len(), any::<bool>(), any::<bool>())
            .prop_map(|(context, query, past, record)| Op::Retrieve { context, query, past, record }),
        1 => (1u16..120).prop_map(|minutes| Op::Wait { minutes }),
        2 => (0..n, 0..TEMPLATES.len(), 0..VARIANTS.len())
            .prop_map(|(context, template, variant)| Op::IngestInferred { context, template, variant }),
        2 => (0..n, 0usize..64, any::<bool>()).prop_map(|(context, nth, confirm)| Op::Review { context, nth, confirm }),
        1 => (0..n, 0usize..64, any::<bool>()).prop_map(|(context, nth, rollback)| Op::Promote { context, nth, rollback }),
        1 => (0..n, 0usize..64, 0..TEMPLATES.len(), 0..VARIANTS.len())
            .prop_map(|(context, nth, template, variant)| Op::Correct { context, nth, template, variant }),
        2 => (0usize..64, 0..VARIANTS.len(), 1u8..48)
            .prop_map(|(nth, variant, hours_ago)| Op::IngestImported { nth, variant, hours_ago }),
        2 => (0..n, any::<bool>(), 0usize..64, 0u8..5)
            .prop_map(|(context, as_owner, nth, how)| Op::Resolve { context, as_owner, nth, how }),
    ];
    proptest::collection::vec(op, 1..max_len)
}

/// The fixed start of every sequence's clock.
pub fn start() -> Timestamp {
    Timestamp::from_second(1_780_000_000).expect("in range")
}

/// Builds an engine over `ports` with a manual clock and sequential ids (so a failing
/// sequence replays identically), returning the clock to drive.
pub fn engine(ports: Ports) -> (Arbor, Arc<ManualClock>) {
    engine_with(ports, |_| {})
}

/// [`engine`], with the policy adjusted by `adjust`.
pub fn engine_with(mut ports: Ports, adjust: impl FnOnce(&mut Policy)) -> (Arbor, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(start()));
    ports.clock = clock.clone();
    ports.ids = Arc::new(SequentialIds::default());
    // A small branch factor makes sealing, re-sealing and roots happen in short sequences.
    let mut policy = Policy { seal: arbor_domain::seal::SealPolicy::new(3).expect("valid"), ..Policy::default() };
    adjust(&mut policy);
    (Arbor::new(ports, policy, Options::default()), clock)
}

/// How many random sequences each backend's property test runs: `ARBOR_SEQUENCES`, else 256.
pub fn sequences() -> u32 {
    std::env::var("ARBOR_SEQUENCES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

/// What a sequence's retrievals returned: for each retrieve step, the evidence node ids in
/// pack order. Compared across backends, which must agree on membership and order.
pub type Observed = Vec<(usize, Vec<String>)>;

/// The random operation sequences of one backend's property test: [`sequences`] of them, each
/// checked by `check` (an `Err` says what broke). New failures are kept in
/// `proptest-regressions/` beside `source_file` (pass `file!()`) and run first next time. A
/// failure panics with the smallest failing sequence and then, last, why it fails, so the
/// reason is what a truncated CI log still shows.
pub fn property_sequences(source_file: &'static str, check: impl Fn(&[Op]) -> Result<(), String>) {
    use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
    // Shrinking replays sequences on a real backend, each up to seconds: bounded, so a failure
    // costs CI minutes, not the better part of an hour.
    let config =
        Config { cases: sequences(), source_file: Some(source_file), max_shrink_time: 180_000, ..Config::default() };
    // `PROPTEST_*` variables still override, as with `proptest!`.
    let mut runner = TestRunner::new(proptest::test_runner::contextualize_config(config));
    match runner.run(&operations(40), |ops| check(&ops).map_err(TestCaseError::fail)) {
        Ok(()) => {}
        Err(TestError::Fail(reason, ops)) => {
            panic!("the smallest failing sequence ({} steps):\n{ops:#?}\nit fails because: {reason}", ops.len())
        }
        Err(TestError::Abort(reason)) => panic!("the property test stopped: {reason}"),
    }
}

/// Runs one sequence on a fresh runtime over the ports `fresh` builds (with whatever must live
/// as long as they do, such as their directory or database schema).
pub fn check_sequence<Guard, Fresh>(fresh: impl FnOnce() -> Fresh, ops: &[Op]) -> Result<Observed, String>
where
    Fresh: std::future::Future<Output = (Ports, Guard)>,
{
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let (ports, _guard) = fresh().await;
        let (arbor, clock) = engine(ports);
        run_sequence(&arbor, &clock, ops).await
    })
}

/// The sequence the property test shrank a defect to: an import waiting as a conflict joins
/// the lineage of the memory it would replace, which had been promoted; forgetting the import
/// with its copies forgets that whole lineage, so the copy of its first version must go too.
pub fn forget_with_copies_of_every_version() -> Vec<Op> {
    use Op::*;
    vec![
        Ingest { context: 3, template: 0, variant: 0 },
        IngestImported { nth: 0, variant: 0, hours_ago: 1 },
        Ingest { context: 0, template: 0, variant: 0 },
        Promote { context: 3, nth: 45, rollback: false },
        Ingest { context: 0, template: 0, variant: 0 },
        Ingest { context: 0, template: 0, variant: 0 },
        IngestBatch { context: 0, items: vec![(0, 0), (0, 0), (0, 0)] },
        IngestImported { nth: 0, variant: 0, hours_ago: 1 },
        Ingest { context: 0, template: 0, variant: 0 },
        Forget { context: 3, nth: 9, with_copies: true },
    ]
}

/// The fault campaign's shrunk case of a promotion reported failed after it landed: the copy
/// exists though the call failed, so forgetting the original alone leaves its words in the
/// copy — the check must learn of the copy from the store, not from the failed call.
pub fn promotion_landed_though_reported_failed() -> (Vec<Op>, Faults) {
    use Op::*;
    let ops = vec![
        Review { context: 5, nth: 11, confirm: false },
        IngestBatch { context: 2, items: vec![(3, 0), (2, 0), (6, 0)] },
        Promote { context: 1, nth: 7, rollback: false },
        Retrieve { context: 0, query: 5, past: false, record: true },
        Resolve { context: 1, as_owner: true, nth: 11, how: 1 },
        Forget { context: 1, nth: 9, with_copies: false },
        Ingest { context: 0, template: 5, variant: 0 },
        Forget { context: 1, nth: 34, with_copies: true },
    ];
    let mut faults: Faults = vec![None; ops.len()];
    faults[2] = Some((10, FaultMode::FailAfter));
    (ops, faults)
}

/// The fault campaign's shrunk case (CI, Postgres) of a retrieval whose first call failed:
/// after recovery, running the jobs left the tree `interaction:uncategorized` with members and
/// no root.
pub fn jobs_after_a_failed_retrieval() -> (Vec<Op>, Faults) {
    use Op::*;
    let ops = vec![
        IngestBatch { context: 1, items: vec![(1, 2), (4, 6), (0, 3), (3, 3)] },
        Forget { context: 5, nth: 30, with_copies: true },
        Ingest { context: 2, template: 5, variant: 3 },
        IngestInferred { context: 5, template: 7, variant: 5 },
        IngestImported { nth: 5, variant: 1, hours_ago: 40 },
        IngestImported { nth: 6, variant: 1, hours_ago: 24 },
        Retrieve { context: 5, query: 1, past: false, record: false },
        Ingest { context: 1, template: 5, variant: 2 },
        IngestBatch { context: 5, items: vec![(2, 3), (7, 2), (5, 3), (7, 2), (5, 4)] },
        Retrieve { context: 1, query: 9, past: false, record: false },
        IngestBatch { context: 5, items: vec![(0, 1), (1, 0), (6, 2)] },
        Review { context: 1, nth: 1, confirm: false },
        RunJobs,
        IngestImported { nth: 11, variant: 0, hours_ago: 20 },
        Ingest { context: 3, template: 7, variant: 0 },
    ];
    let mut faults: Faults = vec![None; ops.len()];
    faults[9] = Some((1, FaultMode::Fail));
    (ops, faults)
}

/// Runs one sequence, checking every promise after every step. Returns what each retrieval
/// returned, or a description of the first violation.
pub async fn run_sequence(arbor: &Arbor, clock: &ManualClock, ops: &[Op]) -> Result<Observed, String> {
    run_steps(arbor, clock, ops, None).await
}

/// Faults for a sequence, step by step: which call of the step fails, and how.
pub type Faults = Vec<Option<(u64, FaultMode)>>;

/// Random faults for `steps` steps: about one step in two gets one, on one of its first 40
/// calls (a step makes a few to a few hundred), failing before, failing after, or crashing.
pub fn faults(steps: usize) -> impl Strategy<Value = Faults> {
    let mode = prop_oneof![Just(FaultMode::Fail), Just(FaultMode::FailAfter), Just(FaultMode::Crash)];
    let one = prop_oneof![1 => Just(None), 1 => (1u64..40, mode).prop_map(Some)];
    proptest::collection::vec(one, steps)
}

/// What a faulty run injected and recovered from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CampaignFigures {
    pub steps: u64,
    pub faults_injected: u64,
    pub crashes: u64,
    pub recoveries: u64,
}

/// How many faulty sequences each backend's fault campaign runs: `ARBOR_FAULT_SEQUENCES`,
/// else 128.
pub fn fault_sequences() -> u32 {
    std::env::var("ARBOR_FAULT_SEQUENCES").ok().and_then(|v| v.parse().ok()).unwrap_or(128)
}

/// The fault campaign on one backend: random operation sequences with faults at random calls
/// (failing before, failing after, crashing), each recovered from and checked
/// ([`check_faulty_sequence`]). Prints what it injected; panics with the first violation
/// (shrunk to a small case).
pub fn fault_campaign<Guard, Fresh>(backend: &str, fresh: impl Fn() -> Fresh)
where
    Fresh: std::future::Future<Output = (Ports, Guard)>,
{
    use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
    let strategy = operations(30).prop_flat_map(|ops| {
        let steps = ops.len();
        (Just(ops), faults(steps))
    });
    let totals = std::cell::Cell::new(CampaignFigures::default());
    let sequences = std::cell::Cell::new(0u64);
    let mut runner = TestRunner::new(Config { cases: fault_sequences(), ..Config::default() });
    let outcome = runner.run(&strategy, |(ops, faults)| {
        let figures = check_faulty_sequence(&fresh, &ops, &faults).map_err(TestCaseError::fail)?;
        let mut sum = totals.get();
        sum.steps += figures.steps;
        sum.faults_injected += figures.faults_injected;
        sum.crashes += figures.crashes;
        sum.recoveries += figures.recoveries;
        totals.set(sum);
        sequences.set(sequences.get() + 1);
        Ok(())
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(reason, (ops, faults))) => panic!(
            "fault campaign on {backend}: the smallest failing sequence:\n{ops:#?}\nwith faults {faults:?}\n\
             it fails because: {reason}"
        ),
        Err(TestError::Abort(reason)) => panic!("fault campaign on {backend} stopped: {reason}"),
    }
    let sum = totals.get();
    println!(
        "fault campaign on {backend}: {} sequences, {} steps, {} faults injected ({} crashes), {} recoveries, \
         lost 0",
        sequences.get(),
        sum.steps,
        sum.faults_injected,
        sum.crashes,
        sum.recoveries
    );
}

/// A sequence run on ports whose store, index and bodies fail as `faults` says.
struct Campaign<'a> {
    plan: Arc<FaultPlan>,
    faults: &'a Faults,
    figures: std::cell::Cell<CampaignFigures>,
    /// The ports without their fault injectors, for the test's own checks (which must neither
    /// move the plan's count of calls nor meet its faults).
    unfaulted: Ports,
}

/// Runs one sequence over `ports` (wrapped in fault injectors) with `faults`: after every step
/// in which a fault fired, the process "restarts" — a new engine over the same adapters
/// recovers, runs its jobs to the end and must find the store clean (`fsck`), every
/// acknowledged write still there, and nothing of what was forgotten anywhere.
pub fn check_faulty_sequence<Guard, Fresh>(
    fresh: &impl Fn() -> Fresh,
    ops: &[Op],
    faults: &Faults,
) -> Result<CampaignFigures, String>
where
    Fresh: std::future::Future<Output = (Ports, Guard)>,
{
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let (ports, _guard) = fresh().await;
        let plan = FaultPlan::new();
        let wrapped = Ports {
            store: Arc::new(FailingStore::new(ports.store.clone(), plan.clone())),
            index: Arc::new(FailingIndex::new(ports.index.clone(), plan.clone())),
            bodies: Arc::new(FailingBodies::new(ports.bodies.clone(), plan.clone())),
            ..ports.clone()
        };
        let (arbor, clock) = engine(wrapped);
        let campaign =
            Campaign { plan, faults, figures: std::cell::Cell::new(CampaignFigures::default()), unfaulted: ports };
        run_steps(&arbor, &clock, ops, Some(&campaign)).await?;
        Ok(campaign.figures.get())
    })
}

/// After a step in which a fault fired: a restarted process cleans up after the dead one
/// (its body intents), runs every job to the end (retries come due as the clock moves on),
/// and finds nothing wrong.
async fn recover_after_fault(arbor: &Arbor, clock: &ManualClock, at: &str, step: usize) -> Result<(), String> {
    // A restart takes time, and the restarted process has a random source of its own. With
    // the run's sequential ids shared, the two engines minted the same ids in one millisecond
    // (a seal's cleanup deleted the other engine's body; a seal kept meeting an existing
    // summary id — `jobs_after_a_failed_retrieval`), which processes with random ids never do.
    clock.advance_seconds(1);
    let process = u16::try_from(step + 1).unwrap_or(u16::MAX);
    let ports = Ports { ids: Arc::new(SequentialIds::for_process(process)), ..arbor.ports().clone() };
    let restarted = Arbor::new(ports, arbor.policy().clone(), Options::default());
    restarted.recover(&|_| true).await.map_err(|e| format!("{at}: recovery failed: {e}"))?;
    for _ in 0..12 {
        restarted.run_jobs(None).await.map_err(|e| format!("{at}: jobs after recovery failed: {e}"))?;
        let pending = restarted.ports().store.counts().await.map_err(|e| e.to_string())?.jobs_pending;
        if pending == 0 {
            break;
        }
        // Failed jobs wait out their backoff (2^attempts seconds).
        clock.advance_seconds(120);
    }
    let report = restarted.fsck(false, &|_| true).await.map_err(|e| format!("{at}: fsck failed: {e}"))?;
    if !report.is_clean() {
        return Err(format!("{at}: after recovery fsck found {:?}", report.findings));
    }
    Ok(())
}

async fn run_steps(
    arbor: &Arbor,
    clock: &ManualClock,
    ops: &[Op],
    campaign: Option<&Campaign<'_>>,
) -> Result<Observed, String> {
    // What checks the promises reads past the fault injectors.
    let unfaulted;
    let checker = match campaign {
        Some(campaign) => {
            let ports = Ports {
                store: campaign.unfaulted.store.clone(),
                index: campaign.unfaulted.index.clone(),
                bodies: campaign.unfaulted.bodies.clone(),
                ..arbor.ports().clone()
            };
            unfaulted = Arbor::new(ports, arbor.policy().clone(), Options::default());
            &unfaulted
        }
        None => arbor,
    };
    let contexts = contexts(start());
    let chains: Vec<ReadChain> =
        contexts.iter().map(|c| arbor.read_chain(c).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let mut run = Run {
        arbor,
        clock,
        campaign,
        checker,
        chains,
        created: Vec::new(),
        waiting: Vec::new(),
        said: Vec::new(),
        forgotten: Vec::new(),
        shared: BTreeSet::new(),
        copies: BTreeSet::new(),
        observed: Observed::new(),
        forgotten_ids: BTreeSet::new(),
        injected_before: 0,
    };
    for (step, op) in ops.iter().enumerate() {
        let at = format!("step {step} ({op:?})");
        run.injected_before = campaign.map(|c| c.plan.injected()).unwrap_or(0);
        if let Some(campaign) = campaign
            && let Some(Some((nth, mode))) = campaign.faults.get(step)
        {
            campaign.plan.arm(*nth, *mode);
        }
        // Every step ends below (its fault recovered from, the store checked), whatever its
        // operation did: an operation that has nothing to do returns early.
        run.step(step, &at, op).await?;
        if run.faulted() {
            continue_after_fault(campaign, arbor, clock, &at, step).await?;
            check_acknowledged(checker, &run.created, &run.forgotten_ids, &at).await?;
        } else if let Some(campaign) = campaign {
            campaign.plan.disarm();
        }
        check_store(checker, &run.forgotten, &at).await?;
    }
    if let Some(campaign) = campaign {
        let mut figures = campaign.figures.get();
        figures.steps += ops.len() as u64;
        figures.faults_injected = campaign.plan.injected();
        campaign.figures.set(figures);
    }
    Ok(run.observed)
}

/// One sequence as it runs: the engine, the chains of its contexts, and what it has done so far
/// as the checks need to know it.
struct Run<'r> {
    arbor: &'r Arbor,
    clock: &'r ManualClock,
    campaign: Option<&'r Campaign<'r>>,
    /// What checks the promises: past the fault injectors in a campaign.
    checker: &'r Arbor,
    chains: Vec<ReadChain>,
    created: Vec<(LeafId, String)>,
    /// Candidates that would replace a current memory: the conflicts a person resolves.
    waiting: Vec<(usize, LeafId)>,
    /// What people said, as (context, template): what imports contradict.
    said: Vec<(usize, usize)>,
    forgotten: Vec<String>,
    /// Markers of statements that were promoted, so two leaves say them.
    shared: BTreeSet<String>,
    /// Leaves that are promotion copies (forgetting one with its copies leaves the original).
    copies: BTreeSet<LeafId>,
    observed: Observed,
    /// Leaves whose words a forget removed (every version a receipt named).
    forgotten_ids: BTreeSet<LeafId>,
    /// Faults injected before this step began.
    injected_before: u64,
}

impl Run<'_> {
    /// Whether a fault fired during this step: then its failure is the fault's, and the
    /// step's outcome is checked after recovery instead.
    fn faulted(&self) -> bool {
        self.campaign.is_some_and(|c| c.plan.injected() > self.injected_before)
    }

    async fn step(&mut self, step: usize, at: &str, op: &Op) -> Result<(), String> {
        match op {
            Op::Ingest { context, template, variant } => self.ingest(step, at, *context, *template, *variant).await,
            Op::IngestBatch { context, items } => self.ingest_batch(step, at, *context, items).await,
            Op::Forget { context, nth, with_copies } => self.forget(at, *context, *nth, *with_copies).await,
            Op::RunJobs => self.run_jobs(at).await,
            Op::Retrieve { context, query, past, record } => {
                self.retrieve(step, at, *context, *query, *past, *record).await
            }
            Op::Wait { minutes } => self.wait(*minutes).await,
            Op::IngestInferred { context, template, variant } => {
                self.ingest_inferred(step, at, *context, *template, *variant).await
            }
            Op::Promote { context, nth, rollback } => self.promote(at, *context, *nth, *rollback).await,
            Op::Review { context, nth, confirm } => self.review(at, *context, *nth, *confirm).await,
            Op::Correct { context, nth, template, variant } => {
                self.correct(step, at, *context, *nth, *template, *variant).await
            }
            Op::IngestImported { nth, variant, hours_ago } => {
                self.ingest_imported(step, at, *nth, *variant, *hours_ago).await
            }
            Op::Resolve { context, as_owner, nth, how } => self.resolve(at, *context, *as_owner, *nth, *how).await,
        }
    }

    /// A person says a statement in one context.
    async fn ingest(
        &mut self,
        step: usize,
        at: &str,
        context: usize,
        template: usize,
        variant: usize,
    ) -> Result<(), String> {
        self.said.push((context, template));
        let (event, marker) = statement(step, 0, template, variant);
        match self.arbor.ingest(&self.chains[context], event).await {
            Ok(report) => record_created(&mut self.created, report, &marker),
            Err(_) if self.faulted() => {}
            Err(e) => return Err(format!("{at}: ingest failed: {e}")),
        }
        Ok(())
    }

    /// Several statements in one batch.
    async fn ingest_batch(
        &mut self,
        step: usize,
        at: &str,
        context: usize,
        items: &[(usize, usize)],
    ) -> Result<(), String> {
        let (events, markers): (Vec<Event>, Vec<String>) =
            items.iter().enumerate().map(|(i, (template, variant))| statement(step, i, *template, *variant)).unzip();
        let results = match self.arbor.ingest_batch(&self.chains[context], events).await {
            Ok(results) => results,
            Err(_) if self.faulted() => Vec::new(),
            Err(e) => return Err(format!("{at}: batch ingest failed: {e}")),
        };
        for (result, marker) in results.into_iter().zip(markers) {
            let report = result.map_err(|e| format!("{at}: an event of the batch failed: {e}"))?;
            record_created(&mut self.created, report, &marker);
        }
        Ok(())
    }

    /// Forgets a memory (with its promoted copies, or alone); its words must be gone everywhere they were.
    async fn forget(&mut self, at: &str, context: usize, nth: usize, with_copies: bool) -> Result<(), String> {
        if self.created.is_empty() {
            return Ok(());
        }
        let (leaf, marker) = self.created[nth % self.created.len()].clone();
        let forgot = match with_copies {
            true => self.arbor.forget_with_copies(&self.chains[context], &leaf).await,
            false => self.arbor.forget(&self.chains[context], &leaf).await.map(|receipt| vec![receipt]),
        };
        match forgot {
            Ok(receipts) => {
                // Every version of the memory goes: the words of earlier versions too.
                let versions: BTreeSet<LeafId> = receipts.iter().flat_map(|r| r.versions.iter().cloned()).collect();
                self.forgotten_ids.extend(versions.iter().cloned());
                let markers: Vec<String> = self
                    .created
                    .iter()
                    .filter(|(id, _)| versions.contains(id))
                    .map(|(_, m)| m.clone())
                    .chain(std::iter::once(marker.clone()))
                    .collect();
                for marker in markers {
                    // An original forgotten with its copies: its words are nowhere any
                    // more; words a promoted copy still says are not checked.
                    let everywhere = with_copies && !self.copies.contains(&leaf);
                    if (everywhere || !self.shared.contains(&marker)) && !self.forgotten.contains(&marker) {
                        self.forgotten.push(marker);
                    }
                }
            }
            // Interrupted: it may have landed, so the memory (and its copies) may be gone.
            Err(_) if self.faulted() => {
                let store = &self.campaign.expect("faults come with a self.campaign").unfaulted.store;
                let every: Vec<Namespace> = store.namespaces().await.map_err(|e| e.to_string())?;
                let ids: Vec<LeafId> = self.created.iter().map(|(id, _)| id.clone()).collect();
                let rows = store.leaves(&every, &ids).await.map_err(|e| e.to_string())?;
                let lineage = rows.iter().find(|l| l.id == leaf).map(|l| l.lineage.clone());
                self.forgotten_ids.insert(leaf.clone());
                for row in &rows {
                    if Some(&row.lineage) == lineage.as_ref() || (with_copies && self.copies.contains(&row.id)) {
                        self.forgotten_ids.insert(row.id.clone());
                    }
                }
            }
            // Outside the chain, or already forgotten: refused, nothing changes.
            Err(e) if e.is_not_found() || matches!(e, arbor_app::AppError::Transition(_)) => {}
            Err(e) => return Err(format!("{at}: forget failed: {e}")),
        }
        Ok(())
    }

    /// Runs the jobs to the end; the trees must then be settled.
    async fn run_jobs(&mut self, at: &str) -> Result<(), String> {
        match self.arbor.run_jobs(None).await {
            Ok(_) if self.faulted() => {}
            Ok(report) if report.failed > 0 => return Err(format!("{at}: {} jobs failed", report.failed)),
            Ok(_) => check_trees_settled(self.checker, at).await?,
            Err(_) if self.faulted() => {}
            Err(e) => return Err(format!("{at}: jobs failed: {e}")),
        };
        Ok(())
    }

    /// Retrieves (now, or as of the past), recording it or not; the pack must obey every promise.
    async fn retrieve(
        &mut self,
        step: usize,
        at: &str,
        context: usize,
        query: usize,
        past: bool,
        record: bool,
    ) -> Result<(), String> {
        let mut request = RetrieveRequest::new(QUERIES[query]);
        if past {
            request.as_of = Some(start().checked_add(jiff::SignedDuration::from_mins(20)).expect("in range"));
        }
        request.record = record;
        let chain = &self.chains[context];
        let pack = match self.arbor.retrieve(chain, &request).await {
            Ok(pack) => Some(pack),
            Err(_) if self.faulted() => None,
            Err(e) => return Err(format!("{at}: retrieve failed: {e}")),
        };
        if let Some(pack) = pack {
            if !self.faulted() {
                check_pack(self.checker, chain, &request, &pack, &self.forgotten, at).await?;
                check_recorded(self.checker, &self.chains, context, &pack, at).await?;
            }
            self.observed.push((step, pack.evidence.iter().map(|e| e.node_id.to_string()).collect()));
        }
        Ok(())
    }

    /// Time passes.
    async fn wait(&mut self, minutes: u16) -> Result<(), String> {
        self.clock.advance_seconds(i64::from(minutes) * 60);
        Ok(())
    }

    /// An assistant says a statement: it may wait for a person.
    async fn ingest_inferred(
        &mut self,
        step: usize,
        at: &str,
        context: usize,
        template: usize,
        variant: usize,
    ) -> Result<(), String> {
        let (mut event, marker) = statement(step, 0, template, variant);
        event.actor = arbor_domain::model::Actor::Assistant;
        match self.arbor.ingest(&self.chains[context], event).await {
            Ok(report) => {
                record_waiting(&mut self.waiting, context, &report);
                record_created(&mut self.created, report, &marker);
            }
            Err(_) if self.faulted() => {}
            Err(e) => return Err(format!("{at}: ingest failed: {e}")),
        }
        Ok(())
    }

    /// Promotes a memory up its read chain, or rolls a promotion back.
    async fn promote(&mut self, at: &str, context: usize, nth: usize, rollback: bool) -> Result<(), String> {
        if self.created.is_empty() {
            return Ok(());
        }
        let (leaf, marker) = self.created[nth % self.created.len()].clone();
        let chain = &self.chains[context];
        if rollback {
            match self.arbor.rollback_promotion(chain, &leaf).await {
                Ok(_) => {}
                Err(_) if self.faulted() => {}
                Err(e) if e.is_not_found() || matches!(e.code(), "invalid" | "illegal_transition") => {}
                Err(e) => return Err(format!("{at}: rollback failed: {e}")),
            }
            return Ok(());
        }
        let promotion = arbor_app::Promotion {
            id: leaf.clone(),
            reason: "it held up".into(),
            evaluation: None,
            operator: "sequence".into(),
        };
        match self.arbor.promote(chain, &promotion).await {
            // The copy says the same words: forgetting one of the two leaves them in the
            // other, so those words are no longer checked for absence.
            Ok(receipt) => {
                self.shared.insert(marker.clone());
                self.copies.insert(receipt.leaf_id.clone());
                self.created.push((receipt.leaf_id, marker));
            }
            // Interrupted: the copy may have landed though the call failed (a
            // failure reported after the commit), so look for it as a reader would.
            Err(_) if self.faulted() => {
                let store = &self.campaign.expect("faults come with a self.campaign").unfaulted.store;
                let every: Vec<Namespace> = store.namespaces().await.map_err(|e| e.to_string())?;
                let everything = TreeLeafQuery::default();
                let Some(original) = store.leaf(&every, &leaf).await.map_err(|e| e.to_string())? else {
                    return Ok(());
                };
                for namespace in &every {
                    let in_tree = store
                        .tree_leaves(namespace, &original.tree_id, &everything)
                        .await
                        .map_err(|e| e.to_string())?;
                    for copy in in_tree {
                        let from_leaf = matches!(&copy.provenance.source,
                                        SourceRef::Promotion { from, .. } if from == &leaf);
                        if from_leaf && !self.copies.contains(&copy.id) {
                            self.shared.insert(marker.clone());
                            self.copies.insert(copy.id.clone());
                            self.created.push((copy.id, marker.clone()));
                        }
                    }
                }
            }
            // Outside the chain, no path up it, not live, or already there: refused.
            Err(e) if e.is_not_found() || e.code() == "invalid" => {}
            Err(e) => return Err(format!("{at}: promote failed: {e}")),
        }
        Ok(())
    }

    /// A person confirms or rejects a candidate.
    async fn review(&mut self, at: &str, context: usize, nth: usize, confirm: bool) -> Result<(), String> {
        if self.created.is_empty() {
            return Ok(());
        }
        let (leaf, _) = self.created[nth % self.created.len()].clone();
        let chain = &self.chains[context];
        let decided =
            if confirm { self.arbor.confirm(chain, &leaf).await } else { self.arbor.reject(chain, &leaf).await };
        match decided {
            Ok(receipt) => {
                let expected = if confirm { LeafStatus::Active } else { LeafStatus::Rejected };
                if receipt.status != expected {
                    return Err(format!("{at}: the decision left {leaf} {}", receipt.status));
                }
            }
            Err(_) if self.faulted() => {}
            // Outside the chain, or not a candidate: refused, nothing changes.
            Err(e) if e.is_not_found() || e.code() == "illegal_transition" => {}
            Err(e) => return Err(format!("{at}: review failed: {e}")),
        }
        Ok(())
    }

    /// A person corrects a memory to a new statement.
    async fn correct(
        &mut self,
        step: usize,
        at: &str,
        context: usize,
        nth: usize,
        template: usize,
        variant: usize,
    ) -> Result<(), String> {
        if self.created.is_empty() {
            return Ok(());
        }
        let (leaf, _) = self.created[nth % self.created.len()].clone();
        let chain = &self.chains[context];
        let version = match self.arbor.show(chain, leaf.as_str(), arbor_app::Disclosure::Everything).await {
            Ok(arbor_app::NodeView::Leaf { record, .. }) => Some(record.version),
            Ok(_) => return Err(format!("{at}: a leaf id showed a summary")),
            Err(e) if e.is_not_found() => None,
            Err(_) if self.faulted() => None,
            Err(e) => return Err(format!("{at}: show failed: {e}")),
        };
        let (event, marker) = statement(step, 0, template, variant);
        let text = event.text.clone();
        let corrected = match version {
            Some(version) => {
                self.arbor.correct(chain, &arbor_app::Correction::by_person(leaf.clone(), version, text)).await
            }
            None => Err(arbor_app::AppError::Port(arbor_ports::Error::not_found("leaf", &leaf))),
        };
        match corrected {
            Ok(receipt) => {
                if receipt.status != LeafStatus::Active {
                    return Err(format!("{at}: a person's correction left {} {}", receipt.leaf_id, receipt.status));
                }
                self.created.push((receipt.leaf_id, marker));
            }
            Err(_) if self.faulted() => {}
            // Not current (a candidate, history, forgotten), the same words, or a
            // secret: refused, nothing changes.
            Err(e)
                if e.is_not_found()
                    || matches!(e.code(), "invalid" | "illegal_transition" | "stale_version" | "forbidden") => {}
            Err(e) => return Err(format!("{at}: correct failed ({}): {e}", e.code())),
        }
        Ok(())
    }

    /// An import restates, hours ago, what someone said: it may conflict.
    async fn ingest_imported(
        &mut self,
        step: usize,
        at: &str,
        nth: usize,
        variant: usize,
        hours_ago: u8,
    ) -> Result<(), String> {
        if self.said.is_empty() {
            return Ok(());
        }
        let (context, template) = self.said[nth % self.said.len()];
        let (mut event, marker) = statement(step, 0, template, variant);
        event.source = SourceRef::Import { origin: "sequence-archive".into() };
        let observed_at = arbor_ports::Clock::now(self.clock)
            .checked_sub(jiff::SignedDuration::from_hours(i64::from(hours_ago)))
            .expect("in range");
        event.observed_at = Some(observed_at);
        match self.arbor.ingest(&self.chains[context], event).await {
            Ok(report) => {
                record_waiting(&mut self.waiting, context, &report);
                record_created(&mut self.created, report, &marker);
            }
            Err(_) if self.faulted() => {}
            Err(e) => return Err(format!("{at}: ingest failed: {e}")),
        }
        Ok(())
    }

    /// A person resolves a waiting conflict, one of five ways.
    async fn resolve(&mut self, at: &str, context: usize, as_owner: bool, nth: usize, how: u8) -> Result<(), String> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let (owner, leaf) = self.waiting[nth % self.waiting.len()].clone();
        let chain = &self.chains[if as_owner { owner } else { context }];
        let resolution = match how % 5 {
            0 => ConflictResolution::KeepBoth,
            // Earlier history: it ended when the sequence began.
            1 => {
                ConflictResolution::SetValidity { validity: Validity::new(None, Some(start())).expect("an open start") }
            }
            // It took over a minute ago.
            2 => ConflictResolution::SetValidity {
                validity: Validity::starting(
                    arbor_ports::Clock::now(self.clock)
                        .checked_sub(jiff::SignedDuration::from_mins(1))
                        .expect("in range"),
                ),
            },
            3 => ConflictResolution::Supersede,
            _ => ConflictResolution::Reject,
        };
        match self.arbor.resolve_conflict(chain, &leaf, resolution).await {
            Ok(_) => {}
            Err(_) if self.faulted() => {}
            // Outside the chain, not a candidate, nothing to place it against, or a
            // validity that overlaps the current memory: refused, nothing changes.
            Err(e) if e.is_not_found() || matches!(e.code(), "invalid" | "illegal_transition") => {}
            Err(e) => return Err(format!("{at}: resolve failed ({}): {e}", e.code())),
        }
        Ok(())
    }
}

/// A fault fired in this step: disarm, let the process come back, and recover.
async fn continue_after_fault(
    campaign: Option<&Campaign<'_>>,
    arbor: &Arbor,
    clock: &ManualClock,
    at: &str,
    step: usize,
) -> Result<(), String> {
    let Some(campaign) = campaign else { return Err(format!("{at}: no campaign, yet a fault")) };
    // Only once per step.
    let mut figures = campaign.figures.get();
    if campaign.plan.crashed() {
        figures.crashes += 1;
    }
    campaign.plan.disarm();
    campaign.plan.restart();
    if figures.recoveries < campaign.plan.injected() {
        figures.recoveries = campaign.plan.injected();
        campaign.figures.set(figures);
        recover_after_fault(arbor, clock, at, step).await?;
    }
    Ok(())
}

/// Every leaf a step acknowledged is still there (unless a forget took it since).
async fn check_acknowledged(
    arbor: &Arbor,
    created: &[(LeafId, String)],
    forgotten: &BTreeSet<LeafId>,
    at: &str,
) -> Result<(), String> {
    let store = &arbor.ports().store;
    let namespaces = store.namespaces().await.map_err(|e| e.to_string())?;
    let ids: Vec<LeafId> = created.iter().map(|(id, _)| id.clone()).filter(|id| !forgotten.contains(id)).collect();
    let found = store.leaves(&namespaces, &ids).await.map_err(|e| e.to_string())?;
    let found: BTreeSet<&LeafId> = found.iter().filter(|l| l.status != LeafStatus::Tombstone).map(|l| &l.id).collect();
    if let Some(lost) = ids.iter().find(|id| !found.contains(id)) {
        return Err(format!("{at}: acknowledged leaf {lost} is gone after a fault"));
    }
    Ok(())
}

/// Statement `template` with a marker unique to this step and position.
fn statement(step: usize, position: usize, template: usize, variant: usize) -> (Event, String) {
    let marker = format!("mk{step}x{position}y");
    let text = TEMPLATES[template].replace("{variant}", VARIANTS[variant]).replace("{marker}", &marker);
    let mut event = Event::user_message(text);
    event.source = SourceRef::Message { conversation: None, message_id: format!("m{step}-{position}") };
    (event, marker)
}

fn record_waiting(waiting: &mut Vec<(usize, LeafId)>, context: usize, report: &arbor_app::IngestReport) {
    for chunk in &report.chunks {
        if let IngestOutcome::Superseding { leaf_id, status: LeafStatus::Candidate, .. } = &chunk.outcome {
            waiting.push((context, leaf_id.clone()));
        }
    }
}

fn record_created(created: &mut Vec<(LeafId, String)>, report: arbor_app::IngestReport, marker: &str) {
    for chunk in report.chunks {
        if let IngestOutcome::Created { leaf_id, .. } | IngestOutcome::Superseding { leaf_id, .. } = chunk.outcome {
            created.push((leaf_id, marker.to_owned()));
        }
    }
}

async fn check_pack(
    arbor: &Arbor,
    chain: &ReadChain,
    request: &RetrieveRequest,
    pack: &RetrievalPack,
    forgotten: &[String],
    at: &str,
) -> Result<(), String> {
    let store = &arbor.ports().store;
    let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
    let budget = &arbor.policy().budget;
    let mut per_layer: BTreeMap<&Namespace, (usize, usize)> = BTreeMap::new();
    for item in &pack.evidence {
        if !chain.contains(&item.namespace) {
            return Err(format!("{at}: pack holds {} from {}, outside the chain", item.node_id, item.namespace));
        }
        if let Some(marker) =
            forgotten.iter().find(|m| item.text.contains(m.as_str()) || item.title.contains(m.as_str()))
        {
            return Err(format!("{at}: forgotten text {marker} came back in {}", item.node_id));
        }
        if item.node == NodeKind::Leaf {
            let id = item.node_id.as_leaf().expect("a leaf id");
            let leaf = store
                .leaf(&scope, id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or(format!("{at}: evidence {id} has no row"))?;
            let allowed = match request.as_of {
                None => leaf.status == LeafStatus::Active,
                Some(_) => matches!(leaf.status, LeafStatus::Active | LeafStatus::Superseded),
            };
            let frozen = chain.layers().iter().any(|l| l.namespace == leaf.namespace && l.frozen_at.is_some());
            if !allowed && !frozen {
                return Err(format!("{at}: {} leaf {id} reached a pack", leaf.status));
            }
            if matches!(leaf.status, LeafStatus::Candidate | LeafStatus::Rejected | LeafStatus::Tombstone) {
                return Err(format!("{at}: {} leaf {id} reached a pack", leaf.status));
            }
        }
        let entry = per_layer.entry(&item.namespace).or_default();
        entry.0 += 1;
        entry.1 += item.text.chars().count();
    }
    for (namespace, (items, chars)) in per_layer {
        let layer = budget.layer(namespace.kind());
        if items > layer.max_items || chars > layer.max_chars {
            return Err(format!("{at}: layer {namespace} holds {items} items / {chars} chars, over {layer:?}"));
        }
    }
    let total_chars: usize = pack.evidence.iter().map(|e| e.text.chars().count()).sum();
    let max_items = budget.total.max_items.min(request.max_results.unwrap_or(DEFAULT_MAX_RESULTS));
    if pack.evidence.len() > max_items || total_chars > budget.total.max_chars {
        return Err(format!("{at}: pack holds {} items / {total_chars} chars, over the total", pack.evidence.len()));
    }
    Ok(())
}

/// A recorded retrieval considered nothing outside its caller's chain, and reads back exactly
/// for the callers whose chain holds every namespace of the chain it was recorded under.
async fn check_recorded(
    arbor: &Arbor,
    chains: &[ReadChain],
    caller: usize,
    pack: &RetrievalPack,
    at: &str,
) -> Result<(), String> {
    let Some(id) = &pack.retrieval_id else { return Ok(()) };
    let chain = &chains[caller];
    let explained = arbor
        .show_retrieval(chain, id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or(format!("{at}: the caller cannot read back its own retrieval {id}"))?;
    for considered in &explained.snapshot.considered {
        match &considered.namespace {
            Some(namespace) if chain.contains(namespace) => {}
            other => {
                return Err(format!("{at}: {} from {other:?} was a candidate, outside the chain", considered.node));
            }
        }
    }
    let home = &explained.snapshot.namespace;
    for (other, other_chain) in chains.iter().enumerate() {
        let seen = arbor.show_retrieval(other_chain, id).await.map_err(|e| e.to_string())?.is_some();
        if seen != other_chain.covers(chain.namespaces()) {
            return Err(format!(
                "{at}: context {other} {} retrieval {id} recorded in {home}",
                if seen { "read" } else { "could not read" }
            ));
        }
    }
    Ok(())
}

async fn check_store(arbor: &Arbor, forgotten: &[String], at: &str) -> Result<(), String> {
    let ports = arbor.ports();
    let store = &ports.store;
    let intents = store.body_intents().await.map_err(|e| e.to_string())?;
    if !intents.is_empty() {
        return Err(format!("{at}: {} body intents were left behind by writes that finished", intents.len()));
    }
    for marker in forgotten {
        if store.contains_text(marker).await.map_err(|e| e.to_string())? {
            return Err(format!("{at}: forgotten {marker} is still in the store"));
        }
        if ports.index.contains_text(marker).await.map_err(|e| e.to_string())? {
            return Err(format!("{at}: forgotten {marker} is still in the index"));
        }
        if ports.bodies.contains_text(marker).await.map_err(|e| e.to_string())? {
            return Err(format!("{at}: forgotten {marker} is still in a body file"));
        }
    }
    for namespace in store.namespaces().await.map_err(|e| e.to_string())? {
        let chain =
            arbor.read_chain(&TrustedContext::Only { namespace: namespace.clone() }).map_err(|e| e.to_string())?;
        let mut filter = VisibilityFilter::for_chain(&chain, ports.clock.now());
        filter.node_kinds = vec![NodeKind::Leaf];
        filter.include_restricted = true;
        let active = store.list_leaves(&filter, Page::first(100_000)).await.map_err(|e| e.to_string())?;
        let mut subjects = BTreeSet::new();
        for leaf in &active {
            if store.tree(&namespace, &leaf.tree_id).await.map_err(|e| e.to_string())?.is_none() {
                return Err(format!(
                    "{at}: leaf {} names tree {} which {namespace} does not have",
                    leaf.id, leaf.tree_id
                ));
            }
            if let Some(subject) = &leaf.subject
                && !subjects.insert((leaf.tree_id.clone(), subject.clone()))
            {
                return Err(format!("{at}: two active leaves about {} in {}", subject.as_str(), leaf.tree_id));
            }
        }
    }
    Ok(())
}

/// After the jobs: nothing awaits a re-seal, and each tree with members has one current root.
async fn check_trees_settled(arbor: &Arbor, at: &str) -> Result<(), String> {
    let store = &arbor.ports().store;
    for namespace in store.namespaces().await.map_err(|e| e.to_string())? {
        let scope = std::slice::from_ref(&namespace);
        for tree in store.trees(scope).await.map_err(|e| e.to_string())? {
            let awaiting =
                store.summaries_awaiting_reseal(&namespace, &tree.tree_id).await.map_err(|e| e.to_string())?;
            if !awaiting.is_empty() {
                return Err(format!("{at}: {} summaries still await re-sealing in {}", awaiting.len(), tree.tree_id));
            }
            let frontier = store.frontier(&namespace, &tree.tree_id).await.map_err(|e| e.to_string())?;
            match (&tree.root, frontier.is_empty()) {
                (None, true) => {}
                (None, false) => return Err(format!("{at}: tree {} has members but no root", tree.tree_id)),
                (Some(root), _) => {
                    let root = store.summary(scope, root).await.map_err(|e| e.to_string())?;
                    let ok = root
                        .as_ref()
                        .is_some_and(|r| r.role == SummaryRole::Root && r.status == SummaryStatus::Current);
                    if !ok || tree.root_stale {
                        return Err(format!("{at}: tree {} root is not a fresh current root: {root:?}", tree.tree_id));
                    }
                    let covered: BTreeSet<_> = root.map(|r| r.children.into_iter().collect()).unwrap_or_default();
                    let expected: BTreeSet<_> = frontier.into_iter().map(|n| n.node).collect();
                    if covered != expected {
                        return Err(format!("{at}: tree {} root does not cover exactly its frontier", tree.tree_id));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Ports on the server backend — Postgres store and index in a fresh schema of the server
/// `ARBOR_TEST_DATABASE_URL` names, bodies on disk — living as long as the returned guard.
pub async fn postgres_ports() -> (Ports, (arbor_adapters_postgres::testing::SchemaGuard, tempfile::TempDir)) {
    use arbor_adapters_postgres::{PgIndex, PgStore};
    let (db, schema) = arbor_adapters_postgres::testing::fresh_database().await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut ports = Ports::in_memory();
    ports.store = Arc::new(PgStore::new(db.clone()));
    ports.index = Arc::new(PgIndex::new(db));
    ports.bodies = Arc::new(arbor_ports::fs::FsBodyStore::open(dir.path()).expect("body store opens"));
    (ports, (schema, dir))
}

/// Ports on the embedded backend — SQLite store and index, bodies on disk — in a fresh
/// temporary directory that lives as long as the returned guard.
pub fn sqlite_ports() -> (Ports, tempfile::TempDir) {
    use arbor_adapters_sqlite::{SqliteConfig, SqliteDatabase, SqliteIndex, SqliteStore};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = Arc::new(SqliteDatabase::open(&SqliteConfig::new(dir.path().join("arbor.db"))).expect("database opens"));
    let mut ports = Ports::in_memory();
    ports.store = Arc::new(SqliteStore::new(db.clone()));
    ports.index = Arc::new(SqliteIndex::new(db));
    ports.bodies = Arc::new(arbor_ports::fs::FsBodyStore::open(dir.path()).expect("body store opens"));
    (ports, dir)
}

/// Ports on the embedded store with the LanceDB index: SQLite rows, bodies on disk, and the
/// index in a dataset directory beside them, in a fresh temporary directory.
#[cfg(feature = "lance")]
pub async fn lance_ports() -> (Ports, tempfile::TempDir) {
    let (mut ports, dir) = sqlite_ports();
    let index = arbor_adapters_lance::LanceIndex::open(&dir.path().join("lance")).await.expect("the dataset opens");
    ports.index = Arc::new(index);
    (ports, dir)
}
