//! Full text in memory: BM25 over posting lists of hashed terms, one list per namespace and
//! term, searched for the top k by MaxScore.
//!
//! MaxScore keeps the query's terms in order of the most each could add to a document's score.
//! Once k visible documents are held, the terms whose bounds together cannot reach the k-th
//! score are *non-essential*: a document holding only those cannot enter the top k, so their
//! lists (the commonest words, the longest lists) are never walked — they are only probed, by
//! binary search, for documents an essential term brought up. A question's cost then follows
//! the documents that could answer it, not the length of its commonest word's list, which is
//! what made FTS5's `ORDER BY bm25() LIMIT k` grow with the store.
//!
//! Scores are FTS5's `bm25()`: the same constants ([`BM25_K1`], [`BM25_B`]), the same idf
//! (clamped to 1e-6 for a term in more than half of the documents), and statistics over every
//! indexed document, visible to the caller or not, exactly as FTS5 counted them. So the
//! ranking did not change when FTS5 left (`the_scores_are_fts5s` checks it against FTS5
//! itself). Terms are [`term_id`] hashes, never words; the authoritative copy of each
//! document's terms is its database row ([`DocTerms::to_bytes`]).

use std::collections::HashMap;

use arbor_domain::text::index_tokens;
use arbor_ports::rows::term_id;
use arbor_ports::{BM25_B, BM25_K1};

/// A document's terms: each distinct hashed term with how often it occurs, and how many
/// tokens the document has in all (BM25's document length).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocTerms {
    counts: Vec<(u64, u32)>,
    length: u32,
}

impl DocTerms {
    /// The terms of `text`, as every full-text index of Arbor reads it ([`index_tokens`]).
    pub fn of_text(text: &str) -> DocTerms {
        let tokens = index_tokens(text);
        let mut counts: HashMap<u64, u32> = HashMap::with_capacity(tokens.len());
        for token in &tokens {
            *counts.entry(term_id(token)).or_default() += 1;
        }
        let mut counts: Vec<(u64, u32)> = counts.into_iter().collect();
        counts.sort_unstable();
        DocTerms { counts, length: u32::try_from(tokens.len()).unwrap_or(u32::MAX) }
    }

    /// The terms of a document known only by its hashed terms and their counts (a term given
    /// twice counts the sum; counts of zero are dropped).
    pub fn from_counts(counted: impl IntoIterator<Item = (u64, u32)>) -> DocTerms {
        let mut counts: HashMap<u64, u32> = HashMap::new();
        for (term, count) in counted {
            if count > 0 {
                let held = counts.entry(term).or_default();
                *held = held.saturating_add(count);
            }
        }
        let mut counts: Vec<(u64, u32)> = counts.into_iter().collect();
        counts.sort_unstable();
        let length = counts.iter().fold(0u32, |sum, (_, count)| sum.saturating_add(*count));
        DocTerms { counts, length }
    }

    /// Whether the document holds the hashed term `term`.
    pub fn holds(&self, term: u64) -> bool {
        self.counts.binary_search_by_key(&term, |(t, _)| *t).is_ok()
    }

    /// The stored form: for each distinct term, its hash (8 bytes) and count (4 bytes), little
    /// endian, in term order. The length is the sum of the counts.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.counts.len() * 12);
        for (term, count) in &self.counts {
            bytes.extend_from_slice(&term.to_le_bytes());
            bytes.extend_from_slice(&count.to_le_bytes());
        }
        bytes
    }

    /// Reads [`to_bytes`](Self::to_bytes) back; `None` when the bytes are not that form.
    pub fn from_bytes(bytes: &[u8]) -> Option<DocTerms> {
        if !bytes.len().is_multiple_of(12) {
            return None;
        }
        let mut counts = Vec::with_capacity(bytes.len() / 12);
        let mut length: u32 = 0;
        for chunk in bytes.chunks_exact(12) {
            let term = u64::from_le_bytes(chunk[..8].try_into().ok()?);
            let count = u32::from_le_bytes(chunk[8..].try_into().ok()?);
            if count == 0 || counts.last().is_some_and(|(last, _)| *last >= term) {
                return None;
            }
            length = length.checked_add(count)?;
            counts.push((term, count));
        }
        Some(DocTerms { counts, length })
    }
}

/// One posting list: the documents (mirror slots, ascending) of one namespace holding a term,
/// each with the term's count there.
#[derive(Debug, Default)]
struct PostingList {
    postings: Vec<(u32, u32)>,
    /// Entries whose document has gone, skipped until they outnumber the live ones.
    dead: u32,
    /// The largest count and the shortest document among the entries ever added: with them
    /// the list's bound on what the term adds to any score holds without a walk.
    max_count: u32,
    min_length: u32,
}

/// An interned term: its document frequency over the whole index.
#[derive(Debug, Default)]
struct TermEntry {
    documents: u32,
}

/// What one search asks of the index, besides the terms.
pub(crate) struct TextSearch<'a> {
    /// The namespaces to search (each once), each with a position the caller gave it, handed
    /// back with its hits.
    pub namespaces: &'a [(u32, usize)],
    pub limit: usize,
}

/// The in-memory full-text index.
#[derive(Debug, Default)]
pub(crate) struct Postings {
    numbers: HashMap<u64, u32>,
    terms: Vec<TermEntry>,
    /// Per slot: whether it holds an indexed document (entries of lists whose document went
    /// stay until the list is compacted, and are skipped by this).
    indexed: Vec<bool>,
    /// Per slot: the document's length in tokens.
    lengths: Vec<u32>,
    /// Per slot: the interned terms of its document, to take them back out when it goes.
    held: Vec<Box<[u32]>>,
    lists: HashMap<(u32, u32), PostingList>,
    /// How many documents are indexed, and their tokens in all: BM25's N and average length.
    documents: u64,
    tokens: u64,
}

impl Postings {
    /// The heap the posting lists hold, and the heap the per-document term lists (kept to
    /// take a document's entries back out) hold: what was allocated, not only what is used.
    pub(crate) fn heap_bytes(&self) -> (usize, usize) {
        use std::mem::size_of;
        let lists = self.lists.capacity() * (size_of::<((u32, u32), PostingList)>() + 1)
            + self.lists.values().map(|l| l.postings.capacity() * size_of::<(u32, u32)>()).sum::<usize>()
            + self.numbers.capacity() * (size_of::<(u64, u32)>() + 1)
            + self.terms.capacity() * size_of::<TermEntry>();
        let documents = self.held.capacity() * size_of::<Box<[u32]>>()
            + self.held.iter().map(|held| held.len() * 4).sum::<usize>()
            + self.indexed.capacity()
            + self.lengths.capacity() * 4;
        (lists, documents)
    }
}

/// A term of a search: its bound on any document's score, its idf, and where its cursor is.
struct Cursor<'a> {
    list: &'a [(u32, u32)],
    position: usize,
    idf: f64,
    bound: f64,
    /// How many times the question holds the term (FTS5 counts a repeated phrase twice).
    weight: f64,
    /// The term's place among the question's terms: a score is summed in that order, as
    /// FTS5 sums it, so equal inputs give the same bits.
    asked: usize,
}

impl Cursor<'_> {
    fn current(&self) -> Option<u32> {
        self.list.get(self.position).map(|(slot, _)| *slot)
    }

    /// Moves to the first entry at or after `slot`; the term's count there if it is `slot`.
    fn seek(&mut self, slot: u32) -> Option<u32> {
        let rest = &self.list[self.position..];
        self.position += rest.partition_point(|(s, _)| *s < slot);
        match self.list.get(self.position) {
            Some((s, count)) if *s == slot => Some(*count),
            _ => None,
        }
    }
}

/// The best `keep` documents offered, worst on top; ties by `tie` (the caller's order of
/// equal scores, applied only on a tie).
struct Best<F: Fn(u32, u32) -> std::cmp::Ordering> {
    keep: usize,
    held: Vec<(f32, u32, usize)>,
    /// The lowest score held once `keep` are held; before that, nothing is ruled out.
    threshold: f32,
    tie: F,
}

impl<F: Fn(u32, u32) -> std::cmp::Ordering> Best<F> {
    fn new(keep: usize, tie: F) -> Self {
        // The capacity follows what is held, not what was asked: a limit may be huge.
        Best { keep, held: Vec::with_capacity(keep.min(1024)), threshold: f32::NEG_INFINITY, tie }
    }

    /// Whether `a` ranks before `b`.
    fn before(&self, a: (f32, u32), b: (f32, u32)) -> bool {
        match b.0.total_cmp(&a.0) {
            std::cmp::Ordering::Equal => (self.tie)(a.1, b.1) == std::cmp::Ordering::Less,
            other => other == std::cmp::Ordering::Less,
        }
    }

    /// The score a document must reach to be considered; below it, it cannot enter.
    fn threshold(&self) -> f32 {
        self.threshold
    }

    fn offer(&mut self, score: f32, slot: u32, layer: usize) {
        if self.held.len() < self.keep {
            self.held.push((score, slot, layer));
            if self.held.len() == self.keep {
                self.threshold = self.held.iter().map(|h| h.0).fold(f32::INFINITY, f32::min);
            }
            return;
        }
        // `keep` is small (a channel's candidate pool), so a linear pass costs less than a heap.
        let mut worst = 0;
        for i in 1..self.held.len() {
            if self.before((self.held[worst].0, self.held[worst].1), (self.held[i].0, self.held[i].1)) {
                worst = i;
            }
        }
        if self.before((score, slot), (self.held[worst].0, self.held[worst].1)) {
            self.held[worst] = (score, slot, layer);
            self.threshold = self.held.iter().map(|h| h.0).fold(f32::INFINITY, f32::min);
        }
    }

    /// Best first.
    fn into_sorted(mut self) -> Vec<(f32, u32, usize)> {
        let mut held = std::mem::take(&mut self.held);
        held.sort_by(|a, b| {
            if self.before((a.0, a.1), (b.0, b.1)) {
                std::cmp::Ordering::Less
            } else if self.before((b.0, b.1), (a.0, a.1)) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        held
    }
}

/// FTS5's idf: `ln((N - n + 0.5) / (n + 0.5))`, and 1e-6 where that is not positive.
fn idf(documents: f64, holding: f64) -> f64 {
    let idf = ((documents - holding + 0.5) / (holding + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// What one occurrence count adds to a document's score, FTS5's arithmetic.
fn contribution(idf: f64, count: u32, length: u32, average: f64) -> f64 {
    let count = f64::from(count);
    idf * (count * (BM25_K1 + 1.0)) / (count + BM25_K1 * (1.0 - BM25_B + BM25_B * f64::from(length) / average))
}

impl Postings {
    /// Indexes the document in `slot`, filed in `namespace`.
    pub(crate) fn add(&mut self, slot: usize, namespace: u32, terms: &DocTerms) {
        let numbered: Vec<(u32, u32)> = terms
            .counts
            .iter()
            .map(|&(term, count)| {
                let next = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
                let number = *self.numbers.entry(term).or_insert(next);
                if number == next {
                    self.terms.push(TermEntry::default());
                }
                (number, count)
            })
            .collect();
        self.add_numbered(slot, namespace, &numbered, terms.length);
    }

    fn add_numbered(&mut self, slot: usize, namespace: u32, numbered: &[(u32, u32)], length: u32) {
        let Ok(slot32) = u32::try_from(slot) else { return };
        if self.lengths.len() <= slot {
            self.indexed.resize(slot + 1, false);
            self.lengths.resize(slot + 1, 0);
            self.held.resize_with(slot + 1, Default::default);
        }
        if self.indexed[slot] {
            return;
        }
        self.indexed[slot] = true;
        self.documents += 1;
        self.tokens += u64::from(length);
        self.lengths[slot] = length;
        for &(number, count) in numbered {
            self.terms[number as usize].documents += 1;
            let list = self
                .lists
                .entry((namespace, number))
                .or_insert_with(|| PostingList { min_length: u32::MAX, ..PostingList::default() });
            list.postings.push((slot32, count));
            list.max_count = list.max_count.max(count);
            list.min_length = list.min_length.min(length);
        }
        self.held[slot] = numbered.iter().map(|(number, _)| *number).collect();
    }

    /// Moves the document in slot `from` (filed in `was`) to slot `to` (filed in `now`).
    pub(crate) fn move_slot(&mut self, from: usize, was: u32, to: usize, now: u32) {
        if !self.indexed.get(from).copied().unwrap_or(false) {
            return;
        }
        let length = self.lengths[from];
        let numbered: Vec<(u32, u32)> = self.held[from]
            .iter()
            .filter_map(|number| {
                let list = &self.lists.get(&(was, *number))?.postings;
                let at = list.binary_search_by_key(&u32::try_from(from).ok()?, |(s, _)| *s).ok()?;
                Some((*number, list[at].1))
            })
            .collect();
        self.remove(from, was);
        self.add_numbered(to, now, &numbered, length);
    }

    /// Renumbers slots after the mirror swept out empty ones: `new_slot[old]` is where the
    /// document of slot `old` went, `None` for one that had gone.
    pub(crate) fn renumber(&mut self, new_slot: &[Option<u32>]) {
        let live = new_slot.iter().flatten().count();
        let mut indexed = vec![false; live];
        let mut lengths = vec![0; live];
        let mut held: Vec<Box<[u32]>> = vec![Box::default(); live];
        for (old, new) in new_slot.iter().enumerate() {
            if let Some(new) = new
                && self.indexed.get(old).copied().unwrap_or(false)
            {
                indexed[*new as usize] = true;
                lengths[*new as usize] = self.lengths[old];
                held[*new as usize] = std::mem::take(&mut self.held[old]);
            }
        }
        self.lists.retain(|_, list| {
            // Slots keep their order, so each list stays sorted.
            list.postings = list
                .postings
                .iter()
                .filter_map(|(old, count)| new_slot.get(*old as usize).copied().flatten().map(|new| (new, *count)))
                .filter(|(new, _)| indexed[*new as usize])
                .collect();
            list.dead = 0;
            !list.postings.is_empty()
        });
        (self.indexed, self.lengths, self.held) = (indexed, lengths, held);
    }

    /// Takes the document in `slot` (filed in `namespace`) out of the index.
    pub(crate) fn remove(&mut self, slot: usize, namespace: u32) {
        if !self.indexed.get(slot).copied().unwrap_or(false) {
            return;
        }
        self.indexed[slot] = false;
        self.documents -= 1;
        self.tokens -= u64::from(self.lengths[slot]);
        self.lengths[slot] = 0;
        for number in std::mem::take(&mut self.held[slot]).iter() {
            let entry = &mut self.terms[*number as usize];
            entry.documents -= 1;
            let key = (namespace, *number);
            let Some(list) = self.lists.get_mut(&key) else { continue };
            list.dead += 1;
            if list.dead as usize * 2 > list.postings.len() {
                let indexed = &self.indexed;
                list.postings.retain(|(s, _)| indexed[*s as usize]);
                list.dead = 0;
                if list.postings.is_empty() {
                    self.lists.remove(&key);
                }
            }
        }
    }

    /// How many indexed documents hold the term `token` stands for.
    pub(crate) fn documents_holding(&self, token: &str) -> u64 {
        self.numbers.get(&term_id(token)).map_or(0, |n| u64::from(self.terms[*n as usize].documents))
    }

    /// The best `search.limit` documents for `terms` in the namespaces of `search`, by BM25,
    /// among those `visible` admits (it is asked only about documents that could enter),
    /// ties ordered by `tie`. Returns (score, slot, layer position), best first.
    pub(crate) fn search(
        &self,
        terms: &[String],
        search: &TextSearch<'_>,
        visible: impl Fn(u32, usize) -> bool,
        tie: impl Fn(u32, u32) -> std::cmp::Ordering,
    ) -> Vec<(f32, u32, usize)> {
        let mut best = Best::new(search.limit, tie);
        if search.limit == 0 || self.documents == 0 {
            return Vec::new();
        }
        let documents = self.documents as f64;
        let average = self.tokens as f64 / documents;
        // Each distinct term once, with how often the question holds it.
        let mut asked: Vec<(u32, f64)> = Vec::new();
        for term in terms {
            let Some(number) = self.numbers.get(&term_id(term)) else { continue };
            match asked.iter_mut().find(|(n, _)| n == number) {
                Some((_, weight)) => *weight += 1.0,
                None => asked.push((*number, 1.0)),
            }
        }
        for &(namespace, layer) in search.namespaces {
            let mut cursors: Vec<Cursor<'_>> = asked
                .iter()
                .enumerate()
                .filter_map(|(asked, &(number, weight))| {
                    let list = self.lists.get(&(namespace, number))?;
                    let idf = idf(documents, f64::from(self.terms[number as usize].documents));
                    // A bound rounded down could rule out a document that ties the threshold.
                    let bound = weight * contribution(idf, list.max_count, list.min_length, average) * (1.0 + 1e-9);
                    Some(Cursor { list: &list.postings, position: 0, idf, bound, weight, asked })
                })
                .collect();
            if cursors.is_empty() {
                continue;
            }
            cursors.sort_by(|a, b| a.bound.total_cmp(&b.bound));
            // bounds_below[i]: the most the terms before i can add together.
            let mut bounds_below = Vec::with_capacity(cursors.len() + 1);
            let mut sum = 0.0;
            for cursor in &cursors {
                bounds_below.push(sum);
                sum += cursor.bound;
            }
            bounds_below.push(sum);
            let mut parts = vec![0.0f64; asked.len()];
            loop {
                let threshold = best.threshold();
                // The first essential term: the ones before it cannot lift a document past the
                // threshold on their own.
                let essential =
                    (0..cursors.len()).find(|&i| (bounds_below[i + 1] as f32) >= threshold).unwrap_or(cursors.len());
                let Some(slot) = cursors[essential..].iter().filter_map(Cursor::current).min() else { break };
                let (live, length) = (self.indexed[slot as usize], self.lengths[slot as usize]);
                parts.fill(0.0);
                let mut score = 0.0;
                for cursor in &mut cursors[essential..] {
                    if cursor.current() == Some(slot) {
                        if live {
                            let count = cursor.list[cursor.position].1;
                            let part = cursor.weight * contribution(cursor.idf, count, length, average);
                            parts[cursor.asked] = part;
                            score += part;
                        }
                        cursor.position += 1;
                    }
                }
                if !live {
                    continue;
                }
                let mut reachable = true;
                for i in (0..essential).rev() {
                    if ((score + bounds_below[i + 1]) as f32) < threshold {
                        reachable = false;
                        break;
                    }
                    let cursor = &mut cursors[i];
                    if let Some(count) = cursor.seek(slot) {
                        let part = cursor.weight * contribution(cursor.idf, count, length, average);
                        parts[cursor.asked] = part;
                        score += part;
                    }
                }
                // The score itself, summed in the question's order.
                let score = parts.iter().fold(0.0f64, |sum, part| sum + part) as f32;
                if reachable && score >= threshold && visible(slot, layer) {
                    best.offer(score, slot, layer);
                }
            }
        }
        best.into_sorted()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    const WORDS: &[&str] = &["amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron"];

    #[derive(Debug, Clone)]
    enum Op {
        /// A document of these words in namespace 0 or 1.
        Add(u32, Vec<usize>),
        /// Removes the n-th live document.
        Remove(usize),
        /// Renumbers slots as the mirror's sweep does.
        Sweep,
        /// Moves the n-th live document to a new slot in namespace 0 or 1.
        Move(usize, u32),
        /// The top k for these words in these namespaces, among the slots the filter admits
        /// (all, or the even ones).
        Search(Vec<usize>, Vec<u32>, usize, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        let words = proptest::collection::vec(0..WORDS.len(), 0..8);
        prop_oneof![
            6 => (0..2u32, words.clone()).prop_map(|(ns, w)| Op::Add(ns, w)),
            2 => (0..64usize).prop_map(Op::Remove),
            1 => Just(Op::Sweep),
            1 => (0..64usize, 0..2u32).prop_map(|(nth, ns)| Op::Move(nth, ns)),
            3 => (words, proptest::sample::subsequence(vec![0u32, 1], 1..=2), 1..12usize, any::<bool>())
                .prop_map(|(w, ns, k, even)| Op::Search(w, ns, k, even)),
        ]
    }

    fn text(words: &[usize]) -> String {
        words.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" ")
    }

    /// Every document scored by the formula, no list, no bound: what the search must return.
    fn exhaustive(
        live: &BTreeMap<u32, (u32, DocTerms)>,
        terms: &[String],
        namespaces: &[u32],
        k: usize,
        admits: impl Fn(u32) -> bool,
    ) -> Vec<(f32, u32)> {
        let documents = live.len() as f64;
        let average = live.values().map(|(_, t)| f64::from(t.length)).sum::<f64>() / documents;
        let mut scored: Vec<(f32, u32)> = live
            .iter()
            .filter(|(slot, (ns, _))| namespaces.contains(ns) && admits(**slot))
            .filter_map(|(slot, (_, doc))| {
                let mut score = 0.0;
                let mut matched = false;
                for term in terms {
                    let id = term_id(term);
                    let holding = live.values().filter(|(_, d)| d.counts.iter().any(|(t, _)| *t == id)).count();
                    if let Some((_, count)) = doc.counts.iter().find(|(t, _)| *t == id) {
                        matched = true;
                        score += contribution(idf(documents, holding as f64), *count, doc.length, average);
                    }
                }
                matched.then_some((score as f32, *slot))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(k);
        scored
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Whatever is added, removed and renumbered, the top k is the exhaustive top k, to the
        /// bit: the bounds skip only what could not have entered.
        #[test]
        fn the_top_k_is_the_exhaustive_top_k(ops in proptest::collection::vec(op(), 1..40)) {
            let mut postings = Postings::default();
            let mut live: BTreeMap<u32, (u32, DocTerms)> = BTreeMap::new();
            let mut next_slot = 0u32;
            for op in ops {
                match op {
                    Op::Add(ns, words) => {
                        let terms = DocTerms::of_text(&text(&words));
                        postings.add(next_slot as usize, ns, &terms);
                        live.insert(next_slot, (ns, terms));
                        next_slot += 1;
                    }
                    Op::Remove(nth) => {
                        if let Some(slot) = live.keys().nth(nth % live.len().max(1)).copied() {
                            let (ns, _) = live.remove(&slot).unwrap();
                            postings.remove(slot as usize, ns);
                        }
                    }
                    Op::Sweep => {
                        let mut new_slot = vec![None; next_slot as usize];
                        let mut renumbered = BTreeMap::new();
                        for (new, (old, doc)) in live.into_iter().enumerate() {
                            new_slot[old as usize] = Some(new as u32);
                            renumbered.insert(new as u32, doc);
                        }
                        postings.renumber(&new_slot);
                        next_slot = renumbered.len() as u32;
                        live = renumbered;
                    }
                    Op::Move(nth, ns) => {
                        if let Some(slot) = live.keys().nth(nth % live.len().max(1)).copied() {
                            let (was, terms) = live.remove(&slot).unwrap();
                            postings.move_slot(slot as usize, was, next_slot as usize, ns);
                            live.insert(next_slot, (ns, terms));
                            next_slot += 1;
                        }
                    }
                    Op::Search(words, namespaces, k, even) => {
                        let admits = |slot: u32| !even || slot.is_multiple_of(2);
                        let terms = arbor_domain::text::query_terms(&text(&words));
                        let searched: Vec<(u32, usize)> = namespaces.iter().map(|ns| (*ns, *ns as usize)).collect();
                        let search = TextSearch { namespaces: &searched, limit: k };
                        let found: Vec<(f32, u32)> = postings
                            .search(&terms, &search, |slot, _| admits(slot), |a, b| a.cmp(&b))
                            .into_iter()
                            .map(|(score, slot, _)| (score, slot))
                            .collect();
                        let expected = if live.is_empty() { Vec::new() } else { exhaustive(&live, &terms, &namespaces, k, admits) };
                        prop_assert_eq!(found, expected);
                    }
                }
                prop_assert_eq!(postings.documents, live.len() as u64);
                for word in WORDS {
                    let id = term_id(word);
                    let holding = live.values().filter(|(_, d)| d.counts.iter().any(|(t, _)| *t == id)).count();
                    prop_assert_eq!(postings.documents_holding(word), holding as u64);
                }
            }
        }

        /// A term list reads back as it was stored, and anything else is refused.
        #[test]
        fn terms_round_trip_through_their_stored_form(words in proptest::collection::vec(0..WORDS.len(), 0..20)) {
            let terms = DocTerms::of_text(&text(&words));
            prop_assert_eq!(DocTerms::from_bytes(&terms.to_bytes()), Some(terms.clone()));
            prop_assert_eq!(terms.length as usize, words.len());
            let bytes = terms.to_bytes();
            if !bytes.is_empty() {
                prop_assert_eq!(DocTerms::from_bytes(&bytes[1..]), None);
                let mut zero = bytes.clone();
                zero[8..12].copy_from_slice(&0u32.to_le_bytes());
                prop_assert_eq!(DocTerms::from_bytes(&zero), None);
            }
        }
    }

    /// Only a visible document takes a place in the top k: one the filter refuses leaves its
    /// place to the next.
    #[test]
    fn a_refused_document_leaves_its_place_to_the_next() {
        let mut postings = Postings::default();
        for (slot, words) in ["amber amber", "amber", "amber basil", "cedar"].iter().enumerate() {
            postings.add(slot, 0, &DocTerms::of_text(words));
        }
        let search = TextSearch { namespaces: &[(0, 0)], limit: 1 };
        let terms = vec!["amber".to_owned()];
        let all: Vec<u32> =
            postings.search(&terms, &search, |_, _| true, |a, b| a.cmp(&b)).iter().map(|h| h.1).collect();
        assert_eq!(all, [0]);
        let but_0: Vec<u32> =
            postings.search(&terms, &search, |slot, _| slot != 0, |a, b| a.cmp(&b)).iter().map(|h| h.1).collect();
        assert_eq!(but_0, [1]);
    }
}
