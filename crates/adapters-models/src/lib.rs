//! Model adapters for Arbor's [`Embedder`](arbor_ports::Embedder) and
//! [`Reasoner`](arbor_ports::Reasoner) ports.
//!
//! | adapter | feature | locality |
//! | --- | --- | --- |
//! | [`LocalEmbedder`]: a sentence-transformer (all-MiniLM-L6-v2) on the CPU with candle | `local-embed` | local |
//! | [`OpenAiEmbedder`]: any `/v1/embeddings` endpoint | `openai` | remote |
//! | [`OpenAiReasoner`]: any `/v1/chat/completions` endpoint, answers constrained to JSON schemas | `openai` | remote |
//!
//! [`packaged`] finds and installs models shipped as PyPI packages; it needs neither feature.
//! [`CoalescingEmbedder`] merges concurrent calls to any embedder into batches (servers).
//! Remote adapters report `Locality::Remote`, and the app never sends them restricted text.

mod coalesce;
mod error;
#[cfg(feature = "local-embed")]
mod local;
#[cfg(feature = "openai")]
pub mod openai;
pub mod packaged;

pub use coalesce::{COALESCED_BATCH, CoalescingEmbedder};
pub use error::ModelError;
#[cfg(feature = "local-embed")]
pub use local::{BATCH_SIZE, LocalEmbedder, MAX_TOKENS};
#[cfg(feature = "openai")]
pub use openai::{EndpointConfig, JsonOutput, OpenAiEmbedder, OpenAiReasoner};
