//! The ports of Arbor's hexagon: the async traits the app needs from the world, each with a
//! `# Contract`; the one error type they share; the conformance suite every adapter runs; and
//! reference implementations that need no setup (in-memory storage, a hashing embedder, a
//! heuristic reasoner).
//!
//! | port | what it is | reference implementation |
//! | --- | --- | --- |
//! | [`MetadataStore`] | authoritative rows, atomic change sets, the job outbox | [`memory::InMemoryMetadataStore`] |
//! | [`SearchIndex`] | full text + vectors, filtered inside the query | [`memory::InMemorySearchIndex`] |
//! | [`BodyStore`] | markdown bodies, verified by SHA-256 | [`memory::InMemoryBodyStore`], and `fs::FsBodyStore` (feature `fs`) on disk |
//! | [`Embedder`] | text to vectors | [`HashingEmbedder`] |
//! | [`Reasoner`] | admission, entities, duplicates, summaries | [`HeuristicReasoner`] |
//! | [`Clock`], [`IdSource`] | time and fresh ids | [`SystemClock`], [`RandomIds`] (and [`ManualClock`], [`SequentialIds`] for tests) |
//!
//! For tests of failure, `faults` (feature `faults`) wraps the store, index and body ports so a
//! chosen call fails, fails after taking effect, or crashes the simulated process.

mod bodies;
mod causes;
mod error;
#[cfg(feature = "fs")]
pub mod fs;
mod hashing_embedder;
mod heuristic_reasoner;
mod index;
pub mod memory;
mod model_ports;
mod reads;
pub mod rows;
mod snapshot;
mod store;
mod system;

#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "faults")]
pub mod faults;

pub use bodies::{BodyStore, BodyStoreExt, InterruptedWrite};
pub use causes::with_causes;
pub use error::{BoxError, Error, Result};
pub use hashing_embedder::{DEFAULT_HASHING_DIMENSIONS, HashingEmbedder};
pub use heuristic_reasoner::{HEURISTIC_REASONER_ID, HeuristicReasoner};
pub use index::{
    BM25_B, BM25_K1, EmbedderId, Embedding, Hit, IndexCapabilities, IndexDoc, SearchIndex, TermSelection, TextQuery,
    VectorQuery, best_first, rarest_terms,
};
pub use model_ports::{
    AssessRequest, Assessment, DuplicateCandidate, DuplicateRequest, Embedder, Locality, PairCandidate, PairJudgement,
    PairRequest, PairVerdict, QueryFocus, QueryIntent, QueryRequest, Reasoner, RerankCandidate, RerankRequest,
    SummarizeRequest, SummaryDraft, SummaryInput,
};
pub use reads::{one_read, read_began};
pub use snapshot::{AccessRecord, CandidateOutcome, ConsideredNode, ContextSnapshot, SnapshotVersions};
pub use store::{
    AuditEvent, BodyIntent, Change, ChangeSet, DamagedRow, EntityQuery, FiledEntry, FiledQuery, IntegrityReport, Job,
    JobClaim, JobKind, JobLease, LeafExpect, LeafPosition, MetadataStore, Neighbours, Page, StoreCounts, SummaryExpect,
    TreeLeafQuery, WriteMark, check_root,
};
pub use system::{Clock, IdSource, ManualClock, RandomIds, SequentialIds, SystemClock};

#[cfg(feature = "mocks")]
pub use bodies::MockBodyStore;
#[cfg(feature = "mocks")]
pub use index::MockSearchIndex;
#[cfg(feature = "mocks")]
pub use model_ports::{MockEmbedder, MockReasoner};
#[cfg(feature = "mocks")]
pub use store::MockMetadataStore;
