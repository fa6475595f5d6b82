//! Arbor's use cases, composed from ports: ingest (the 12-step upsert), the job runner (seal,
//! index, purge), retrieve (scope first, fused candidates, budgets, verified bodies),
//! corrections, review of candidates, promotion, the catalog, browsing, and forget.
//!
//! The app decides nothing by itself: every rule comes from `arbor-domain`, every effect goes
//! through a port. It holds no state between calls beyond counters, so any number of `Arbor`
//! values may share one set of adapters.

mod adopt;
mod archive;
mod audit;
mod browse;
mod catalog;
mod conflict;
mod consolidate;
mod correct;
mod daily;
mod error;
mod experiment;
mod export;
mod forget;
mod fsck;
mod health;
pub mod importers;
mod ingest;
mod jobs;
mod profile;
mod projection;
mod promote;
mod rebuild;
mod reconcile;
mod refile;
mod retired;
mod retrieve;
mod review;
mod sealing;
mod write;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_domain::admission::{AdmissionPolicy, ApprovalPolicy};
use arbor_domain::budget::RetrievalBudget;
use arbor_domain::consolidation::Consolidation;
use arbor_domain::decay::DecayPolicy;
use arbor_domain::decision::EntityDecisionMatrix;
use arbor_domain::health::HealthThresholds;
use arbor_domain::id::{EntityId, JobId, LeafId, RetrievalId, SummaryId};
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy, TrustedContext};
use arbor_domain::seal::SealPolicy;
use arbor_domain::supersession::Supersession;
use arbor_domain::text::Chunker;
use arbor_domain::time::Timestamp;
use arbor_ports::memory::{InMemoryBodyStore, InMemoryMetadataStore, InMemorySearchIndex};
use arbor_ports::{
    BodyStore, Clock, Embedder, HashingEmbedder, HeuristicReasoner, IdSource, MetadataStore, RandomIds, Reasoner,
    SearchIndex, SystemClock,
};
use serde::Serialize;

pub use adopt::{Adoption, EditsBy};
pub use arbor_ports::JobLease;
pub use audit::Usage;
pub use browse::{Disclosure, MemoryListing, NodeView, OutlineNode, Stats, TreeOutline, TreeOverview};
pub use catalog::{CATALOG_TITLES_PER_TREE, Catalog, CatalogEntry, DEFAULT_CATALOG_CHARS};
pub use consolidate::{
    ConsolidateRequest, ConsolidationRun, MAX_READ_PER_PASS, ModelUse, NamespacePass, ProposalView, REPORT_MARKER,
    report_for, report_left_for_review, report_marks, report_retirements,
};
pub use correct::{Correction, CorrectionReceipt};
pub use daily::{DEFAULT_DAY_LIMIT, DailyView, DayMemory};
pub use error::{AppError, AppResult};
pub use experiment::{ExperimentStart, Settlement};
pub use export::{Export, ExportOptions, ExportedMemory, ImportedMemory};
pub use forget::{ForgetReceipt, ForgetScope};
pub use fsck::{Finding, FindingKind, FsckReport};
pub use health::{HealthReport, NamespaceHealth, TreeHealth};
pub use ingest::{Because, ChunkResult, IngestOutcome, IngestReport};
pub use jobs::JobsReport;
pub use promote::{Promotion, PromotionReceipt};
pub use rebuild::{RebuildReport, UnreadableBody};
pub use reconcile::{Doubted, Replaced};
pub use retired::{RestoreReceipt, RetiredItem};
pub use retrieve::{
    Answer, CompactMemory, CompactOptions, CompactPack, Coverage, Degradation, EvidenceItem, EvidenceScores, Intent,
    RetrievalExplanation, RetrievalPack, RetrieveMode, RetrieveRequest, SkippedItem, Understood, UnderstoodTime,
    estimated_tokens,
};
pub use review::{ReviewItem, ReviewReceipt};
pub use write::bodies::RecoveryReport;

/// The adapters an [`Arbor`] runs on.
#[derive(Debug, Clone)]
pub struct Ports {
    pub store: Arc<dyn MetadataStore>,
    pub index: Arc<dyn SearchIndex>,
    pub bodies: Arc<dyn BodyStore>,
    pub embedder: Arc<dyn Embedder>,
    pub reasoner: Arc<dyn Reasoner>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdSource>,
}

impl Ports {
    /// Everything in memory, no model: the zero-setup configuration.
    pub fn in_memory() -> Ports {
        Ports {
            store: Arc::new(InMemoryMetadataStore::new()),
            index: Arc::new(InMemorySearchIndex::new()),
            bodies: Arc::new(InMemoryBodyStore::new()),
            embedder: Arc::new(HashingEmbedder::default()),
            reasoner: Arc::new(HeuristicReasoner),
            clock: Arc::new(SystemClock::default()),
            ids: Arc::new(RandomIds),
        }
    }
}

/// Every configurable rule, each defined in the domain.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Policy {
    pub admission: AdmissionPolicy,
    pub approval: ApprovalPolicy,
    pub entities: EntityDecisionMatrix,
    pub supersession: Supersession,
    pub consolidation: Consolidation,
    pub seal: SealPolicy,
    pub budget: RetrievalBudget,
    pub read_chain: ReadChainPolicy,
    pub decay: DecayPolicy,
    pub health: HealthThresholds,
    #[serde(skip)]
    pub chunker: Chunker,
}

/// Knobs that change how work is scheduled, not what is decided.
#[derive(Debug, Clone, Serialize)]
pub struct Options {
    /// Index new and changed nodes right after their commit (their jobs stay queued as the
    /// guarantee). Off, retrieval sees them once `run_jobs` has run.
    pub index_inline: bool,
    /// Name recorded on job leases.
    pub worker: String,
    /// Who this process acts for, recorded in audit events and retrieval snapshots: a person
    /// at the command line (`person:<user>`), an agent through a server (`agent:<server>`).
    pub actor: String,
    /// How many times a write is re-planned after a conflict before giving up.
    pub max_write_attempts: u32,
    /// Job lease length, in seconds.
    pub job_lease_seconds: i64,
    /// Failed jobs are retried this many times, then kept as dead.
    pub max_job_attempts: u32,
    /// Who this process is, as recorded on body intents: `<host>/<pid>`.
    pub owner: String,
    /// The longest one reasoner call may take, retries included, before the deterministic
    /// reasoner decides that step instead: what a model can add to a write or a question.
    pub reasoner_deadline: std::time::Duration,
    /// The most pair-judgement calls (`claims::judged`, one per memory, up to six pairs each)
    /// one attempt at a batch makes to a model reasoner; the memories past it are decided by
    /// the rules alone.
    pub pair_judgements_per_batch: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            index_inline: true,
            worker: "arbor".to_owned(),
            actor: "arbor".to_owned(),
            max_write_attempts: 4,
            job_lease_seconds: 300,
            max_job_attempts: 5,
            owner: format!("local/{}", std::process::id()),
            reasoner_deadline: std::time::Duration::from_secs(20),
            pair_judgements_per_batch: 32,
        }
    }
}

/// What can be told about the process an owner string names (`<host>/<pid>`, as recorded on
/// body intents and job leases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    Alive,
    /// It ended (on this host, its pid is gone): what it held may be taken back at once.
    Gone,
    /// Another host, or a platform where it cannot be told: wait for its lease to end.
    Unknown,
}

/// Tells the [`ProcessState`] of an owner string; the composition root knows how on its
/// platform.
pub type Liveness = Arc<dyn Fn(&str) -> ProcessState + Send + Sync>;

/// Counts of times a configured model's answer could not be used and the deterministic path
/// was taken instead.
#[derive(Debug, Default)]
struct Fallbacks {
    reasoner: AtomicU64,
}

/// The memory engine: use cases over a set of ports.
#[derive(Debug)]
pub struct Arbor {
    ports: Ports,
    /// The embedder being replaced, while nodes are re-embedded with `ports.embedder`
    /// ([`Arbor::reembed`]): retrieval searches its vectors too until the switch completes.
    previous_embedder: Option<Arc<dyn Embedder>>,
    /// Embeds restricted text when the configured embedder is remote (which may never see it);
    /// always on this machine. Without one, restricted text gets no vector.
    restricted_embedder: Option<Arc<dyn Embedder>>,
    policy: Policy,
    options: Options,
    fallbacks: Fallbacks,
    /// How to tell whether another process is still running; without it, none is known gone.
    liveness: Option<LivenessCheck>,
    /// The vectors of recent questions, by embedder.
    query_vectors: retrieve::query_vectors::QueryVectors,
    /// The last generated id's time and suffix, so ids come out in the order they were made.
    last_id: std::sync::Mutex<(u64, u128)>,
}

/// A [`Liveness`] function, shown in debug output by name only.
#[derive(Clone)]
struct LivenessCheck(Liveness);

impl std::fmt::Debug for LivenessCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LivenessCheck")
    }
}

tokio::task_local! {
    /// Who the audit log names for what runs in this task, when it is not the engine's own
    /// actor ([`acting_as`]).
    static ACTING_AS: String;
}

/// Runs `work` with every audit event it writes naming `actor`: the store's owner acting
/// through a server whose own actor is an agent's, say. Work it spawns onto other tasks keeps
/// the engine's actor.
pub async fn acting_as<T>(actor: &str, work: impl std::future::Future<Output = T>) -> T {
    ACTING_AS.scope(actor.to_owned(), work).await
}

impl Arbor {
    /// Who the audit log names for work in this task ([`acting_as`], else the engine's actor).
    pub(crate) fn actor(&self) -> String {
        ACTING_AS.try_with(String::clone).unwrap_or_else(|_| self.options.actor.clone())
    }

    pub fn new(ports: Ports, policy: Policy, options: Options) -> Arbor {
        Arbor {
            ports,
            previous_embedder: None,
            restricted_embedder: None,
            policy,
            options,
            fallbacks: Fallbacks::default(),
            liveness: None,
            query_vectors: Default::default(),
            last_id: Default::default(),
        }
    }

    /// The same engine, telling with `liveness` whether the processes named on job leases are
    /// still running: the leases of those that are gone are taken back at once.
    pub fn with_liveness(mut self, liveness: Liveness) -> Arbor {
        self.liveness = Some(LivenessCheck(liveness));
        self
    }

    /// What is known about the process `owner` names: this one is alive; others as the
    /// configured [`Liveness`] tells, or unknown.
    pub(crate) fn process_state(&self, owner: &str) -> ProcessState {
        if owner == self.options.worker || owner == self.options.owner {
            return ProcessState::Alive;
        }
        self.liveness.as_ref().map(|check| (check.0)(owner)).unwrap_or(ProcessState::Unknown)
    }

    /// The same engine embedding restricted text with `local` when the configured embedder is
    /// remote, so restricted memories take part in vector search without leaving the machine
    /// (their vectors are searched only when a request includes restricted memories). Refuses
    /// an embedder that is not local.
    pub fn with_restricted_embedder(mut self, local: Arc<dyn Embedder>) -> AppResult<Arbor> {
        if local.locality() != arbor_ports::Locality::Local {
            return Err(AppError::InvalidRequest(format!(
                "the embedder for restricted text must run on this machine; {} is remote",
                local.id()
            )));
        }
        self.restricted_embedder = Some(local);
        Ok(self)
    }

    /// The same engine while the index moves from `previous` to the configured embedder:
    /// new and re-embedded nodes get the configured embedder's vectors, and retrieval also
    /// searches the vectors `previous` made, so nothing drops out of vector search before
    /// [`Arbor::reembed`] has covered it. The two never meet in one comparison.
    pub fn migrating_from(mut self, previous: Arc<dyn Embedder>) -> Arbor {
        if previous.id() != self.ports.embedder.id() {
            self.previous_embedder = Some(previous);
        }
        self
    }

    /// The same engine, embedders and all, under another policy.
    pub fn with_policy(mut self, policy: Policy) -> Arbor {
        self.policy = policy;
        self
    }

    /// An engine on in-memory adapters with default policy.
    pub fn in_memory() -> Arbor {
        Arbor::new(Ports::in_memory(), Policy::default(), Options::default())
    }

    pub fn ports(&self) -> &Ports {
        &self.ports
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// How many reasoner answers were replaced by the deterministic fallback.
    pub fn reasoner_fallbacks(&self) -> u64 {
        self.fallbacks.reasoner.load(Ordering::Relaxed)
    }

    /// Resolves the read chain for a trusted context under this engine's policy.
    pub fn read_chain(&self, context: &TrustedContext) -> AppResult<ReadChain> {
        Ok(ReadChain::resolve(context, &self.policy.read_chain)?)
    }

    fn now(&self) -> Timestamp {
        self.ports.clock.now()
    }

    fn millis(at: Timestamp) -> u64 {
        u64::try_from(at.as_millisecond()).unwrap_or(0)
    }

    /// A fresh id, made by `make` from its time and suffix: the suffix is random for the first
    /// id of a millisecond and the previous one plus one after it (ULID's monotonic mode), so
    /// the ids one `Arbor` makes sort in the order it made them. Rankings break exact ties by
    /// id, and this makes that order the order things were written in rather than a coin toss
    /// per run: the same events give the same answers however often they are ingested afresh.
    fn fresh_id<Id>(&self, at: Timestamp, make: impl FnOnce(u64, u128) -> Id) -> Id {
        // 79 bits of randomness leave the 80-bit suffix room to count up from its first value.
        const FIRST: u128 = (1 << 79) - 1;
        const SUFFIX: u128 = (1 << 80) - 1;
        let millis = Self::millis(at);
        let mut last = self.last_id.lock().unwrap_or_else(|e| e.into_inner());
        let next = match *last {
            (previous, suffix) if previous >= millis && suffix < SUFFIX => (previous, suffix + 1),
            // Only after 2^79 ids in one millisecond: borrow the next one rather than wrap.
            (previous, _) if previous >= millis => (previous + 1, self.ports.ids.random() & FIRST),
            _ => (millis, self.ports.ids.random() & FIRST),
        };
        *last = next;
        make(next.0, next.1)
    }

    fn new_leaf_id(&self, at: Timestamp) -> LeafId {
        self.fresh_id(at, LeafId::generate)
    }

    fn new_summary_id(&self, at: Timestamp) -> SummaryId {
        self.fresh_id(at, SummaryId::generate)
    }

    fn new_job_id(&self, at: Timestamp) -> JobId {
        self.fresh_id(at, JobId::generate)
    }

    fn new_retrieval_id(&self, at: Timestamp) -> RetrievalId {
        self.fresh_id(at, RetrievalId::generate)
    }

    fn new_entity_id(&self, at: Timestamp) -> EntityId {
        self.fresh_id(at, EntityId::generate)
    }

    fn note_reasoner_fallback(&self, step: &str, error: &dyn std::fmt::Display) {
        self.fallbacks.reasoner.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(step, %error, "reasoner answer unusable; used the deterministic reasoner");
    }

    /// The configured reasoner's answer for one step, within the deadline; `None` (counted as
    /// a fallback) when it failed, was unusable or came too late.
    async fn ask_reasoner<T>(
        &self,
        step: &str,
        call: impl std::future::Future<Output = arbor_ports::Result<T>>,
    ) -> Option<T> {
        match tokio::time::timeout(self.options.reasoner_deadline, call).await {
            Ok(Ok(answer)) => Some(answer),
            Ok(Err(error)) => {
                self.note_reasoner_fallback(step, &error);
                None
            }
            Err(_) => {
                let late = format!("no answer within {:?}", self.options.reasoner_deadline);
                self.note_reasoner_fallback(step, &late);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids made within one millisecond, or with the clock set back, still sort in the order
    /// they were made: rankings break exact ties by id, and a tie must not fall by the ids'
    /// random bits (LoCoMo recall moved from one ingest of the same turns to the next).
    #[test]
    fn ids_sort_in_the_order_they_were_made() {
        let arbor = Arbor::new(Ports::in_memory(), Policy::default(), Options::default());
        let at = Timestamp::from_second(1_780_000_000).unwrap();
        let earlier = Timestamp::from_second(1_779_999_000).unwrap();
        let later = Timestamp::from_second(1_780_000_001).unwrap();
        let mut made: Vec<String> = Vec::new();
        for when in [at, at, at, earlier, at, later, later] {
            made.push(arbor.new_leaf_id(when).as_str().to_owned());
            made.push(arbor.new_job_id(when).as_str().to_owned());
        }
        let leaves: Vec<&String> = made.iter().step_by(2).collect();
        let mut sorted = leaves.clone();
        sorted.sort();
        assert_eq!(sorted, leaves, "leaf ids in the order they were made");
        // Every kind of id shares the one sequence.
        let suffixes: Vec<&str> = made.iter().map(|id| id.rsplit('-').next().unwrap()).collect();
        assert!(suffixes.windows(2).all(|pair| pair[0] < pair[1]), "{suffixes:?}");
    }
}
