//! OpenAI-compatible model clients: an embedder over `/v1/embeddings` and a reasoner over
//! `/v1/chat/completions`, sharing one HTTP client with timeouts, retries and a rate limit.

mod client;
mod embedder;
mod reasoner;

pub use client::EndpointConfig;
pub use embedder::OpenAiEmbedder;
pub use reasoner::{JsonOutput, OpenAiReasoner};
