//! Arbor's policy core: every rule of the memory engine, with no IO and no async.
//!
//! The crate is a set of small, pure decision functions over plain data. The app asks them
//! what to do and carries the answer out through the ports; adapters never decide policy.
//!
//! | rule | where |
//! | --- | --- |
//! | namespaces and `ReadChain` (scope, precedence, isolation, frozen snapshots) | [`namespace`], [`read_chain`] |
//! | retrieval visibility (status, validity, expiry, sensitivity, snapshots) | [`visibility`] |
//! | admission and approval (candidate or active) | [`admission`] |
//! | the secret guard and sensitivity levels | [`sensitivity`] |
//! | the `EntityDecision` matrix | [`decision`], [`entity`] |
//! | dedup and `Supersession` | [`supersession`] |
//! | what a memory says and what it retires: claims, the catalogue, the decision | [`claims`] |
//! | the word reading of who a text names, and the lookup keys built from it | [`reconcile`] |
//! | `Consolidation` ("dream"): merge, update or invalidate in hindsight | [`consolidation`] |
//! | the daily view: a reader's day across trees, and its highlights | [`daily`] |
//! | health: duplicates, history, stale summaries, waiting suggestions, bytes, and their thresholds | [`health`] |
//! | conflicts: update or wait for a person, and what each resolution does to validity | [`conflict`] |
//! | promotion paths up a read chain | [`promotion`] |
//! | experiment snapshots, reruns and settlement | [`experiment`] |
//! | bi-temporal validity | [`time`] |
//! | ranking decay per kind and archival of unused candidates | [`decay`] |
//! | the leaf status state machine | [`lifecycle`] |
//! | `SealPolicy`: buffers, levels, staleness, re-seal | [`seal`] |
//! | retrieval budgets per layer and in total | [`budget`] |
//! | rank fusion | [`ranking`] |
//! | chunking and fingerprints | [`text`] |
//! | Chinese words, names and function words | [`han`] |
//! | the words every reader shares, per language (pronouns, labels, kin and roles, not-names, calendar) | [`lexicon`] |
//! | transcript lines: whose "I" a labelled line speaks | [`transcript`] |
//! | inbound events, and cutting a stream of them so one bad event costs only itself | [`event`], [`event_stream`] |
//! | typed, path-safe ids and the body layout on disk | [`id`], [`paths`] |
//! | body documents (frontmatter + markdown) | [`markdown`] |
//! | rebuilding rows from body documents: never more visible than written | [`recovery`] |

#![forbid(unsafe_code)]

pub mod admission;
pub mod budget;
pub mod claims;
pub mod conflict;
pub mod consolidation;
pub mod daily;
pub mod decay;
pub mod decision;
pub mod entity;
pub mod event;
pub mod event_stream;
pub mod experiment;
pub mod han;
pub mod hand_edit;
pub mod health;
pub mod heuristics;
pub mod id;
pub mod judgement;
pub mod lexicon;
pub mod lifecycle;
pub mod markdown;
pub mod model;
pub mod namespace;
pub mod paths;
pub mod promotion;
pub mod ranking;
pub mod read_chain;
pub mod reconcile;
pub mod recovery;
pub mod seal;
pub mod sensitivity;
pub mod supersession;
pub mod text;
pub mod time;
pub mod time_expr;
pub mod transcript;
pub mod values;
pub mod visibility;

#[cfg(test)]
mod testkit;
