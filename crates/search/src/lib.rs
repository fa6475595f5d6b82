//! Arbor's search engine in memory, shared by every database backend that keeps its index in
//! rows (SQLite, Postgres): a [`Mirror`] of each indexed document's filter columns, hashed
//! terms ([`DocTerms`]) and int8-quantized vector, searched with the visibility filter inside
//! the search — full text by BM25 over posting lists (MaxScore), vectors by a scan that asks the
//! filter only about documents whose score could enter the top k.
//!
//! The crate does no IO. A backend stores each document's facts, [`DocTerms::to_bytes`] and
//! `f32` vector in its own tables with a change sequence, fills the mirror from them
//! ([`Mirror::put`], [`Mirror::set_facts`], [`Mirror::remove`]), catches it up with what other
//! processes wrote since [`Mirror::last_seq`], and rescores vector [`Candidate`]s exactly from
//! the stored vectors. One engine means every backend ranks the same documents the same way.

mod mirror;
mod postings;
mod queries;
mod vectors;

pub use mirror::{Candidate, Footprint, Mirror, TextHit};
pub use postings::DocTerms;
pub use queries::{embedder_key, exact_similarity, rescore_pool, rescored_hits};
