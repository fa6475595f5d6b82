//! The daily view [design §daily]: the current memories a chain can read that were observed on
//! one day, across all its trees, newest first, and the day's highlights
//! (`domain::daily::highlights`). What the chain could retrieve and nothing else: candidates,
//! history, restricted memories and other scopes never show.

use arbor_domain::daily::{Day, HIGHLIGHTS, Noted, highlights};
use arbor_domain::id::LeafId;
use arbor_domain::model::{MemoryKind, Salience, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::text::truncate_chars;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Page;
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// The most memories one day's view lists by default: a day's reading, not an export.
pub const DEFAULT_DAY_LIMIT: usize = 200;

/// The longest text a day's view shows of one memory (`show` opens the rest).
const DAY_TEXT_CHARS: usize = 280;

/// One memory of the day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayMemory {
    pub id: LeafId,
    pub namespace: Namespace,
    pub tree_id: TreeId,
    pub kind: MemoryKind,
    pub title: String,
    /// Its words, at most a few lines.
    pub text: String,
    pub observed_at: Timestamp,
    pub salience: Salience,
}

/// What was remembered on one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DailyView {
    pub day: Day,
    /// The observation times covered, both ends included.
    pub from: Timestamp,
    pub to: Timestamp,
    /// The day's memories, newest first, at most the limit asked.
    pub memories: Vec<DayMemory>,
    /// More memories were observed that day than the limit let through (the oldest are left
    /// out).
    pub more: bool,
    /// How many trees the listed memories lie in.
    pub trees: usize,
    /// What to read first when resuming: positions in `memories`, best first, chosen among
    /// the memories listed (with `more`, the day's earliest are not among them).
    pub highlights: Vec<usize>,
}

impl Arbor {
    /// What `chain` can read that was observed on `day`, newest first, at most `limit` (1 or
    /// more).
    pub async fn daily(&self, chain: &ReadChain, day: Day, limit: usize) -> AppResult<DailyView> {
        if limit == 0 {
            return Err(AppError::InvalidRequest("a day's view lists at least one memory".to_owned()));
        }
        let Some((from, to)) = day.window() else {
            return Err(AppError::InvalidRequest(format!("{} is outside the dates a store holds", day.date)));
        };
        let mut filter = VisibilityFilter::for_chain(chain, self.now());
        filter.node_kinds = vec![NodeKind::Leaf];
        filter.time_range = Some((Some(from), Some(to)));
        let mut leaves = self.ports.store.list_leaves(&filter, Page::first(limit.saturating_add(1))).await?;
        let more = leaves.len() > limit;
        leaves.truncate(limit);
        let memories: Vec<DayMemory> = leaves
            .into_iter()
            .map(|leaf| DayMemory {
                text: truncate_chars(&leaf.summary, DAY_TEXT_CHARS),
                id: leaf.id,
                namespace: leaf.namespace,
                tree_id: leaf.tree_id,
                kind: leaf.kind,
                title: leaf.title,
                observed_at: leaf.observed_at,
                salience: leaf.salience,
            })
            .collect();
        let mut trees: Vec<(&Namespace, &TreeId)> = memories.iter().map(|m| (&m.namespace, &m.tree_id)).collect();
        trees.sort();
        trees.dedup();
        let trees = trees.len();
        let noted: Vec<Noted> =
            memories.iter().map(|m| Noted { kind: m.kind, salience: m.salience, observed_at: m.observed_at }).collect();
        let highlights = highlights(&noted, HIGHLIGHTS);
        Ok(DailyView { day, from, to, memories, more, trees, highlights })
    }
}
