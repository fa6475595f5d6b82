//! The pack as a model reads it ([`CompactPack`]): each memory once, with its date, id, version
//! and a short why; nothing null; what was left out as a count, its ids only when asked; and
//! [`CompactPack::render`], a few lines of text for a model's context. The full pack repeats a
//! memory in up to four places and explains every channel rank; that is for people and tools,
//! and costs a model many times the evidence it carries.

use arbor_domain::text::truncate_chars;
use arbor_domain::visibility::NodeKind;
use serde::Serialize;

use super::{Answer, Degradation, EvidenceItem, RetrievalPack, SkippedItem};

/// What a compact pack may hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactOptions {
    /// At most about this many tokens of rendered text ([`estimated_tokens`]); memories past it
    /// are counted in `more`. `None`: as many as the pack holds.
    pub max_tokens: Option<usize>,
    /// List the candidates the budget passed over, by id and reason.
    pub include_skipped: bool,
}

/// One memory, once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactMemory {
    /// `leaf-…` (a memory) or `sum-…` (a summary): what to cite, read or correct.
    pub id: String,
    /// A memory's version, for `memory_correct`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// When it was said (a summary: the last thing it covers), `YYYY-MM-DD`.
    pub date: String,
    /// When it stopped holding, for an answer as of an earlier time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub text: String,
    /// Why it was picked, in a few words; and what to beware of (outdated, overridden,
    /// sensitive).
    pub why: String,
}

/// A retrieval pack for a model's context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactPack {
    pub answer: Answer,
    /// What memory believes now about the subject a question asks everything about, one line
    /// per attribute: first, since it is the answer in brief.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<CompactMemory>,
    /// What the reader should know beside the memories: a time the question named that holds
    /// nothing, evidence that may be outdated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Parts of retrieval that did not run: with `nothing_relevant`, "could not look", not
    /// "memory holds nothing".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<Degradation>,
    /// Relevant candidates left out by the budgets.
    #[serde(skip_serializing_if = "is_zero")]
    pub more: usize,
    /// Those candidates, when asked for ([`CompactOptions::include_skipped`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedItem>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// About how many tokens `text` costs a model, counted in quarter tokens: an ASCII letter is a
/// quarter (English words run four to five letters a token), a digit or punctuation mark a half
/// (numbers and ids split into short pieces: `leaf-01m8q9…` is a token per two characters or
/// so), whitespace nothing (it rides with the next word), any other character a token and a
/// quarter (a Han character is one token or two). Errs high, so a budget is kept.
pub fn estimated_tokens(text: &str) -> usize {
    let quarters: usize = text
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphabetic() => 1,
            c if c.is_ascii_whitespace() => 0,
            c if c.is_ascii() => 2,
            _ => 5,
        })
        .sum();
    quarters.div_ceil(4)
}

/// A few words on why an item was picked and what to beware of.
fn short_why(item: &EvidenceItem, pack: &RetrievalPack) -> String {
    let scores = &item.scores;
    let mut why: Vec<String> = Vec::new();
    if scores.text_rank.is_some() || scores.kind_rank.is_some() {
        why.push("words".into());
    }
    if scores.vector_rank.is_some() {
        why.push("meaning".into());
    }
    if scores.entity_rank.is_some() {
        why.push("named".into());
    }
    if scores.time_rank.is_some() {
        why.push("mentions the time".into());
    }
    if why.is_empty() && scores.context_of_rank.is_some() {
        why.push("next to a match".into());
    }
    if item.node == NodeKind::Summary {
        why.push("summary".into());
    }
    if let Some(newer) = &item.possibly_outdated_by {
        why.push(outdated_note(item, newer, pack));
    }
    if let Some(winner) = &item.overridden_by {
        why.push(format!("overridden by {winner}"));
    }
    if item.sensitivity != arbor_domain::sensitivity::Sensitivity::Normal {
        why.push("sensitive: confirm before repeating".into());
    }
    why.join(", ")
}

/// "may be outdated (where they live): Elif got transferred to the Izmir branch, 2026-06-12":
/// the newer memory's words and date when the pack holds it, its id otherwise.
fn outdated_note(item: &EvidenceItem, newer: &arbor_domain::id::LeafId, pack: &RetrievalPack) -> String {
    let about = item
        .outdated_attribute
        .as_deref()
        .map(|a| format!(" ({})", arbor_domain::claims::catalogue::english_name(a)))
        .unwrap_or_default();
    let newer_id = arbor_domain::id::NodeId::Leaf(newer.clone());
    match pack.evidence.iter().find(|e| e.node_id == newer_id) {
        Some(found) => {
            let words = truncate_chars(found.text.trim(), OUTDATED_NOTE_CHARS).replace('\n', " ");
            format!("may be outdated{about}: {words}, {}", found.observed_at.strftime("%Y-%m-%d"))
        }
        None => format!("may be outdated{about} by {newer}"),
    }
}

/// How much of the newer memory's text an outdated note quotes.
const OUTDATED_NOTE_CHARS: usize = 100;

fn compact_memory(item: &EvidenceItem, pack: &RetrievalPack) -> CompactMemory {
    CompactMemory {
        id: item.node_id.to_string(),
        version: item.version,
        date: item.observed_at.strftime("%Y-%m-%d").to_string(),
        until: item.validity.valid_to.map(|at| at.strftime("%Y-%m-%d").to_string()),
        text: item.text.clone(),
        why: short_why(item, pack),
    }
}

/// What a reader of a compact pack needs beside the memories, that they do not say: a time
/// the question named that holds nothing (the memories are then from any time).
fn notes(pack: &RetrievalPack) -> Vec<String> {
    let widened = pack.understood.time.as_ref().filter(|time| !time.applied && time.phrase != "requested");
    widened
        .map(|time| {
            format!("nothing in memory from {} (\"{}\"); these are from any time", time.range.describe(), time.phrase)
        })
        .into_iter()
        .collect()
}

impl RetrievalPack {
    /// The pack as a model reads it, within `options`.
    pub fn compact(&self, options: CompactOptions) -> CompactPack {
        let mut compact = CompactPack {
            answer: self.answer,
            profile: self.profile.clone(),
            memories: Vec::new(),
            notes: notes(self),
            degraded: self.degraded.clone(),
            more: self.coverage.unread + self.coverage.skipped.len(),
            skipped: if options.include_skipped { self.coverage.skipped.clone() } else { Vec::new() },
        };
        // The "N more left out" line is reserved from the start: the budget may be what adds it.
        let reserved = CompactPack { more: compact.more.max(1), ..compact.clone() };
        let mut spent = estimated_tokens(&reserved.render());
        for item in &self.evidence {
            let memory = compact_memory(item, self);
            let cost = estimated_tokens(&render_memory(&memory));
            if options.max_tokens.is_some_and(|max| spent + cost > max) {
                compact.more += 1;
                continue;
            }
            spent += cost;
            compact.memories.push(memory);
        }
        compact
    }
}

fn render_memory(memory: &CompactMemory) -> String {
    let version = memory.version.map(|v| format!(" v{v}")).unwrap_or_default();
    let until = memory.until.as_deref().map(|until| format!(" to {until}")).unwrap_or_default();
    let text = truncate_chars(memory.text.trim(), 2_000).replace('\n', " ");
    format!("- [{}{until}, {}{version}] {text} ({})\n", memory.date, memory.id, memory.why)
}

impl CompactPack {
    /// A few lines of plain text: what memory holds for the question, each memory on a line
    /// with its date, id and version, then what was left out or could not run.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for degraded in &self.degraded {
            text.push_str(&format!(
                "Retrieval was degraded ({}: {}); memory may hold more than this shows.\n",
                degraded.part, degraded.reason
            ));
        }
        if !self.profile.is_empty() {
            text.push_str("What memory believes now (value, date said, id):\n");
            for line in &self.profile {
                text.push_str(&format!("- {line}\n"));
            }
        }
        match (self.answer, self.memories.is_empty()) {
            (Answer::NothingRelevant, _) if !self.profile.is_empty() => {
                text.push_str("No other memory bears on this question.\n")
            }
            (Answer::NothingRelevant, _) => text.push_str("Nothing relevant in memory for this question.\n"),
            (Answer::Found, true) => text.push_str("Memory holds relevant items, but none fit the token budget.\n"),
            (Answer::Found, false) => text.push_str("From memory (date, id, version; cite the id):\n"),
        }
        for memory in &self.memories {
            text.push_str(&render_memory(memory));
        }
        for note in &self.notes {
            text.push_str(&format!("Note: {note}.\n"));
        }
        if self.more > 0 {
            text.push_str(&format!("{} more relevant item(s) left out by the budget.\n", self.more));
        }
        for skipped in &self.skipped {
            text.push_str(&format!("Left out {}: {}.\n", skipped.node_id, skipped.reason));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_estimated_high_for_every_script() {
        assert_eq!(estimated_tokens(""), 0);
        // "Dana", " prefers", " tea", "." to a tokenizer.
        assert_eq!(estimated_tokens("Dana prefers tea."), 4);
        // Han text costs a token a character or more.
        assert_eq!(estimated_tokens("我喜欢喝茶"), 7);
        assert_eq!(estimated_tokens("Dana 喜欢 tea"), 5);
        // Ids and numbers split into short pieces.
        assert_eq!(estimated_tokens("leaf-01m8q900000000000000000000"), 14);
    }
}
