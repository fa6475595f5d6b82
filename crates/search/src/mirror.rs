//! The in-memory mirror of the index: every document's filter columns in compact form, its
//! vector quantized to int8, grouped by namespace, and its terms in posting lists.
//!
//! Both searches run on it, with the filter *inside* the search:
//! - vector search reads only the vector groups of the read chain's namespaces and the
//!   filter's node kinds ([`crate::vectors`]) and evaluates the visibility filter during the
//!   search, on each document whose score could enter the top k; the best candidates are
//!   rescored exactly from the stored `f32` vectors by the caller;
//! - full-text search walks the posting lists of the chain's namespaces ([`crate::postings`])
//!   and asks the filter about each document that could enter the top k.
//!
//! The filter here is integer comparisons that mirror `VisibilityFilter::admits` (the
//! conformance suite checks both searches against the domain on generated data). The
//! authoritative copy of everything stays in the backend's database; the mirror is rebuilt
//! from it and caught up with other processes' writes through a change sequence, which the
//! backend reads ([`Mirror::last_seq`], [`Mirror::generation`]).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use arbor_domain::id::NodeId;
use arbor_domain::model::{Category, MemoryKind};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState, VisibilityFilter};

use crate::postings::{DocTerms, Postings, TextSearch};
use crate::vectors::{Form, Member, Offer, Relocation, Sink, VectorGroup, quantize};

/// Emptied slots are swept out once there are at least this many and they are more than a
/// quarter of all (so the cost per removal stays constant and a reindex, which replaces every
/// document, does not leave half the slots empty); small in unit tests so that random
/// operation sequences reach the sweep.
const SWEEP_AFTER: usize = if cfg!(test) { 8 } else { 1024 };

/// Interns strings (namespaces, trees, embedder ids) to small integers.
#[derive(Debug, Default)]
struct Interner {
    ids: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, value: &str) -> u32 {
        let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        *self.ids.entry(value.to_owned()).or_insert(next)
    }

    fn get(&self, value: &str) -> Option<u32> {
        self.ids.get(value).copied()
    }
}

/// A document's filter columns as integers. Open ends use `i64::MIN` / `i64::MAX`.
#[derive(Debug, Clone, Copy)]
struct Compact {
    namespace: u32,
    node: NodeKind,
    category: Category,
    tree: u32,
    kind: Option<MemoryKind>,
    state: NodeState,
    valid_from: i64,
    valid_to: i64,
    /// `None` when the node was never current.
    known_from: Option<i64>,
    known_until: i64,
    expires_at: i64,
    sensitivity: Sensitivity,
    time_start: i64,
    time_end: i64,
}

/// A vector quantized to int8, on its way into or out of a group.
#[derive(Debug)]
struct Quantized {
    embedder: u32,
    values: Box<[i8]>,
    scale: f32,
}

/// Which vectors share a [`VectorGroup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct GroupKey {
    namespace: u32,
    embedder: u32,
    node: NodeKind,
    dimensions: usize,
}

/// Where a document's vector is kept.
#[derive(Debug, Clone, Copy)]
struct StoredVector {
    group: GroupKey,
    form: Form,
    member: Member,
}

#[derive(Debug)]
struct Slot {
    rowid: i64,
    node: NodeId,
    facts: Compact,
    vector: Option<StoredVector>,
}

/// A candidate from the approximate vector scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub rowid: i64,
    pub node: NodeId,
    /// The position in the filter's layers of the layer the document is in; `None` from
    /// the unfiltered floor scan.
    pub layer: Option<usize>,
    pub approx: f32,
}

/// A heap entry: score and position only, so the scan allocates nothing per document.
#[derive(Clone, Copy)]
struct Scored {
    approx: f32,
    rowid: i64,
    slot: usize,
}

impl From<Offer> for Scored {
    fn from(offer: Offer) -> Scored {
        Scored { approx: offer.approx, rowid: offer.rowid, slot: offer.slot }
    }
}

/// The unfiltered floor search keeps whatever scores best.
impl Sink for TopK {
    fn floor(&self) -> f32 {
        TopK::floor(self)
    }

    fn offer(&mut self, offer: Offer) {
        TopK::offer(self, Scored::from(offer));
    }
}

/// A filtered search: a document that could enter the top k is checked against the filter
/// (for the layer being searched) before it does.
struct Filtered<'a> {
    top: &'a mut TopK,
    slots: &'a [Option<Slot>],
    compiled: &'a Compiled,
    layer: &'a Layer,
}

impl Sink for Filtered<'_> {
    fn floor(&self) -> f32 {
        self.top.floor()
    }

    fn offer(&mut self, offer: Offer) {
        let scored = Scored::from(offer);
        if self.top.wants(&scored)
            // Groups hold one namespace each; `admits` checks it again anyway.
            && self.slots[scored.slot].as_ref().is_some_and(|s| self.compiled.admits(self.layer, &s.facts))
        {
            self.top.offer(scored);
        }
    }
}

/// Ordering for the bounded heap: the worst candidate on top ("greater" = worse: a lower
/// score, then a larger rowid so ties break the same way every time).
struct Worst(Scored);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.approx.total_cmp(&self.0.approx).then_with(|| self.0.rowid.cmp(&other.0.rowid))
    }
}

/// Keeps the best `keep` of what it is offered.
struct TopK {
    keep: usize,
    heap: BinaryHeap<Worst>,
}

impl TopK {
    fn new(keep: usize) -> TopK {
        TopK { keep, heap: BinaryHeap::with_capacity(keep + 1) }
    }

    /// Whether [`TopK::offer`] would keep `scored`: asked before the filter, so a document
    /// that cannot enter costs one comparison.
    fn wants(&self, scored: &Scored) -> bool {
        self.heap.len() < self.keep || self.heap.peek().is_some_and(|worst| Worst(*scored).cmp(worst) == Ordering::Less)
    }

    /// The lowest score that could still enter.
    fn floor(&self) -> f32 {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.keep => worst.0.approx,
            _ => f32::NEG_INFINITY,
        }
    }

    fn offer(&mut self, scored: Scored) {
        if self.heap.len() < self.keep {
            self.heap.push(Worst(scored));
        } else if self.heap.peek().is_some_and(|worst| Worst(scored).cmp(worst) == Ordering::Less) {
            self.heap.pop();
            self.heap.push(Worst(scored));
        }
    }
}

/// The mirror.
#[derive(Debug, Default)]
pub struct Mirror {
    /// Whether the mirror has been filled from the database.
    pub loaded: bool,
    /// The index generation (bumped by `clear`) when last synchronized.
    pub generation: i64,
    /// Highest change sequence applied.
    pub last_seq: i64,
    /// When the last synchronization that succeeded began asking what changed: every commit
    /// that finished before this instant is in the mirror. A search that is part of a read
    /// begun earlier ([`arbor_ports::one_read`]) needs no synchronization of its own.
    pub synced_at: Option<std::time::Instant>,
    interner: Interner,
    /// Slots are never reused; emptied slots are skipped and swept out once they are a
    /// quarter of all.
    slots: Vec<Option<Slot>>,
    dead: usize,
    by_rowid: HashMap<i64, usize>,
    /// Every namespace that has held a document (for the unfiltered floor search).
    namespaces: HashSet<u32>,
    /// The documents' vectors.
    vectors: HashMap<GroupKey, VectorGroup>,
    /// The documents' terms, by slot.
    text: Postings,
}

/// About how much heap a [`Mirror`] holds, by part, in bytes: what was allocated (capacities),
/// not only what is used. Allocator overhead is not in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// One slot per document (its id, rowid and filter columns) and the rowid map.
    pub documents: usize,
    /// The full-text posting lists, one per namespace and term, and the term table.
    pub posting_lists: usize,
    /// Each document's own term list and length, kept to take it back out of the lists.
    pub document_terms: usize,
    /// The int8 vectors, dense rows and sparse postings, with their members.
    pub vectors: usize,
}

/// A full-text hit from the mirror.
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    pub node: NodeId,
    /// The position in the filter's layers of the layer the document is in.
    pub layer: usize,
    pub score: f32,
}

/// Time in nanoseconds, as the database stores it.
fn nanos(t: jiff::Timestamp) -> i64 {
    i64::try_from(t.as_nanosecond()).unwrap_or(if t.as_nanosecond() < 0 { i64::MIN } else { i64::MAX })
}

impl Mirror {
    /// About how much heap the mirror holds, by part ([`Footprint`]).
    pub fn footprint(&self) -> Footprint {
        use std::mem::size_of;
        let ids: usize = self.slots.iter().flatten().map(|slot| slot.node.as_str().len()).sum();
        let documents = self.slots.capacity() * size_of::<Option<Slot>>()
            + ids
            + self.by_rowid.capacity() * (size_of::<(i64, usize)>() + 1);
        let (posting_lists, document_terms) = self.text.heap_bytes();
        let vectors = self.vectors.values().map(VectorGroup::heap_bytes).sum();
        Footprint { documents, posting_lists, document_terms, vectors }
    }

    pub fn reset(&mut self) {
        *self = Mirror::default();
    }

    fn compact(&mut self, facts: &NodeFacts) -> Compact {
        Compact {
            namespace: self.interner.intern(&facts.namespace.to_string()),
            node: facts.node,
            category: facts.category,
            tree: self.interner.intern(facts.tree_id.as_str()),
            kind: facts.kind,
            state: facts.state,
            valid_from: facts.validity.valid_from.map(nanos).unwrap_or(i64::MIN),
            valid_to: facts.validity.valid_to.map(nanos).unwrap_or(i64::MAX),
            known_from: facts.known.known_from.map(nanos),
            known_until: facts.known.known_until.map(nanos).unwrap_or(i64::MAX),
            expires_at: facts.expires_at.map(nanos).unwrap_or(i64::MAX),
            sensitivity: facts.sensitivity,
            time_start: nanos(facts.time_start),
            time_end: nanos(facts.time_end),
        }
    }

    /// Inserts or replaces a document: its facts, its terms, and its vector if it has one.
    pub fn put(
        &mut self,
        rowid: i64,
        node: NodeId,
        facts: &NodeFacts,
        terms: &DocTerms,
        vector: Option<(&str, &[f32])>,
    ) {
        self.remove(rowid);
        let facts = self.compact(facts);
        let vector = vector.map(|(embedder, values)| {
            let (values, scale) = quantize(values);
            Quantized { embedder: self.interner.intern(embedder), values, scale }
        });
        let namespace = facts.namespace;
        let index = self.push(Slot { rowid, node, facts, vector: None });
        if let Some(vector) = vector {
            self.store_vector(index, vector);
        }
        self.text.add(index, namespace, terms);
    }

    /// Puts slot `index`'s vector in its group.
    fn store_vector(&mut self, index: usize, vector: Quantized) {
        let Some(slot) = self.slots[index].as_mut() else { return };
        let group = GroupKey {
            namespace: slot.facts.namespace,
            embedder: vector.embedder,
            node: slot.facts.node,
            dimensions: vector.values.len(),
        };
        let ((form, member), moved) = self
            .vectors
            .entry(group)
            .or_insert_with(|| VectorGroup::new(group.dimensions))
            .add(index, slot.rowid, &vector.values, vector.scale);
        slot.vector = Some(StoredVector { group, form, member });
        self.follow(moved);
    }

    /// Points slots at the members their group moved them to.
    fn follow(&mut self, moved: Vec<Relocation>) {
        for relocation in moved {
            if let Some(Slot { vector: Some(stored), .. }) =
                self.slots.get_mut(relocation.slot).and_then(Option::as_mut)
            {
                stored.form = relocation.form;
                stored.member = relocation.member;
            }
        }
    }

    /// Takes a vector out of its group.
    fn take_vector(&mut self, stored: StoredVector) -> Option<Quantized> {
        let (values, scale) = self.vectors.get(&stored.group)?.values(stored.form, stored.member);
        self.forget_vector(stored);
        Some(Quantized { embedder: stored.group.embedder, values: values.into_boxed_slice(), scale })
    }

    /// Removes a vector from its group, following the members a compaction renumbers, and
    /// the group once it is empty.
    fn forget_vector(&mut self, stored: StoredVector) {
        let Some(group) = self.vectors.get_mut(&stored.group) else { return };
        let moved = group.remove(stored.form, stored.member);
        if group.live() == 0 {
            self.vectors.remove(&stored.group);
        }
        self.follow(moved);
    }

    fn push(&mut self, slot: Slot) -> usize {
        let index = self.slots.len();
        self.by_rowid.insert(slot.rowid, index);
        self.namespaces.insert(slot.facts.namespace);
        self.slots.push(Some(slot));
        index
    }

    /// Updates the facts of a document the mirror holds.
    pub fn set_facts(&mut self, rowid: i64, facts: &NodeFacts) {
        let Some(&index) = self.by_rowid.get(&rowid) else { return };
        let compact = self.compact(facts);
        let Some(slot) = self.slots[index].take() else { return };
        if slot.facts.namespace == compact.namespace && slot.facts.node == compact.node {
            self.slots[index] = Some(Slot { facts: compact, ..slot });
        } else {
            // A node never changes namespace or kind; if a row says otherwise, regroup it anyway.
            self.dead += 1;
            let was = slot.facts.namespace;
            let now = compact.namespace;
            let vector = slot.vector.and_then(|stored| self.take_vector(stored));
            let moved = self.push(Slot { facts: compact, vector: None, ..slot });
            if let Some(vector) = vector {
                self.store_vector(moved, vector);
            }
            self.text.move_slot(index, was, moved, now);
        }
    }

    pub fn remove(&mut self, rowid: i64) {
        if let Some(index) = self.by_rowid.remove(&rowid)
            && let Some(slot) = self.slots[index].take()
        {
            self.text.remove(index, slot.facts.namespace);
            if let Some(stored) = slot.vector {
                self.forget_vector(stored);
            }
            self.dead += 1;
        }
        if self.dead >= SWEEP_AFTER && self.dead * 4 > self.slots.len() {
            self.sweep();
        }
    }

    /// Drops emptied slots and renumbers the rest.
    fn sweep(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        let mut new_slot: Vec<Option<u32>> = Vec::with_capacity(slots.len());
        self.by_rowid.clear();
        self.dead = 0;
        for slot in slots {
            new_slot.push(slot.map(|slot| u32::try_from(self.push(slot)).unwrap_or(u32::MAX)));
        }
        self.text.renumber(&new_slot);
        for group in self.vectors.values_mut() {
            group.renumber_slots(&new_slot);
        }
    }

    /// Compiles a filter against this mirror's interned names.
    pub(crate) fn compile(&self, filter: &VisibilityFilter) -> Option<Compiled> {
        Compiled::new(filter, &self.interner)
    }

    /// How many documents hold the term `token` stands for.
    pub fn documents_holding(&self, token: &str) -> u64 {
        self.text.documents_holding(token)
    }

    /// The best `limit` documents under `filter` by BM25 over `terms`, best first (equal
    /// scores in node order, as the search port orders them).
    pub fn search_text(&self, filter: &VisibilityFilter, terms: &[String], limit: usize) -> Vec<TextHit> {
        let Some(compiled) = self.compile(filter) else { return Vec::new() };
        let mut namespaces: Vec<(u32, usize)> = Vec::new();
        for (position, layer) in compiled.layers.iter().enumerate() {
            if !namespaces.iter().any(|(namespace, _)| *namespace == layer.namespace) {
                namespaces.push((layer.namespace, position));
            }
        }
        let search = TextSearch { namespaces: &namespaces, limit };
        let visible = |slot: u32, position: usize| {
            self.slots[slot as usize].as_ref().is_some_and(|s| compiled.admits(&compiled.layers[position], &s.facts))
        };
        let ranked = self.text.search(terms, &search, visible, |a, b| self.node_order(a, b));
        ranked
            .into_iter()
            .filter_map(|(score, slot, position)| {
                let node = self.slots[slot as usize].as_ref()?.node.clone();
                Some(TextHit { node, layer: compiled.layers[position].source, score })
            })
            .collect()
    }

    /// The best `limit` documents by BM25 over `terms` in every namespace, with no filter: the
    /// floor the filtered search is measured against.
    #[cfg(feature = "bench")]
    pub fn search_text_all(&self, terms: &[String], limit: usize) -> usize {
        let namespaces: Vec<(u32, usize)> = self.namespaces.iter().map(|n| (*n, 0)).collect();
        let search = TextSearch { namespaces: &namespaces, limit };
        self.text
            .search(terms, &search, |slot, _| self.slots[slot as usize].is_some(), |a, b| self.node_order(a, b))
            .len()
    }

    /// Equal scores in node order; a slot emptied meanwhile last.
    fn node_order(&self, a: u32, b: u32) -> Ordering {
        let node = |slot: u32| self.slots.get(slot as usize).and_then(Option::as_ref).map(|s| &s.node);
        match (node(a), node(b)) {
            (Some(a), Some(b)) => a.cmp(b),
            (a, b) => b.is_some().cmp(&a.is_some()),
        }
    }

    /// The best `keep` candidates over every document with a vector, ignoring any filter: the
    /// floor the filtered scan is measured against.
    #[cfg(feature = "bench")]
    pub fn scan_all(&mut self, embedder: &str, query: &[f32], keep: usize) -> Vec<Candidate> {
        let Some(embedder) = self.interner.get(embedder) else { return Vec::new() };
        let mut top = TopK::new(keep);
        for (key, group) in &mut self.vectors {
            if key.embedder == embedder && key.dimensions == query.len() {
                group.search(query, &mut top);
            }
        }
        self.candidates(top, None)
    }

    /// The best `keep` candidates under `filter` by approximate similarity to `query`.
    ///
    /// A document's score is computed first and the filter asked only when the score could
    /// enter the top k: most documents of a large namespace never reach the filter.
    pub fn scan(&mut self, filter: &VisibilityFilter, embedder: &str, query: &[f32], keep: usize) -> Vec<Candidate> {
        let Some(embedder) = self.interner.get(embedder) else { return Vec::new() };
        let Some(compiled) = self.compile(filter) else { return Vec::new() };
        let mut top = TopK::new(keep);
        let slots = &self.slots;
        for (position, layer) in compiled.layers.iter().enumerate() {
            // A namespace in two layers is searched once, under the first, as the domain's
            // filter reads it.
            if compiled.layers[..position].iter().any(|earlier| earlier.namespace == layer.namespace) {
                continue;
            }
            for &node in &compiled.node_kinds {
                let key = GroupKey { namespace: layer.namespace, embedder, node, dimensions: query.len() };
                let Some(group) = self.vectors.get_mut(&key) else { continue };
                group.search(query, &mut Filtered { top: &mut top, slots, compiled: &compiled, layer });
            }
        }
        self.candidates(top, Some(&compiled))
    }

    fn candidates(&self, top: TopK, compiled: Option<&Compiled>) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = top
            .heap
            .into_iter()
            .filter_map(|w| {
                let slot = self.slots[w.0.slot].as_ref()?;
                let layer = compiled.and_then(|c| c.layer(slot.facts.namespace)).map(|layer| layer.source);
                Some(Candidate { rowid: slot.rowid, node: slot.node.clone(), layer, approx: w.0.approx })
            })
            .collect();
        out.sort_by(|a, b| arbor_ports::best_first((a.approx, &a.node), (b.approx, &b.node)));
        out
    }
}

#[derive(Debug)]
pub(crate) struct Layer {
    namespace: u32,
    /// Its position in the filter's `layers`.
    source: usize,
    frozen_at: Option<i64>,
    as_of: i64,
}

/// A `VisibilityFilter` with its strings resolved to interned ids.
#[derive(Debug)]
pub(crate) struct Compiled {
    layers: Vec<Layer>,
    history: bool,
    now: i64,
    include_restricted: bool,
    node_kinds: Vec<NodeKind>,
    categories: Vec<Category>,
    tree: Option<u32>,
    kinds: Vec<MemoryKind>,
    time_start: Option<i64>,
    time_end: Option<i64>,
}

impl Compiled {
    /// `None` when nothing can match (e.g. a tree the mirror has never seen).
    fn new(filter: &VisibilityFilter, interner: &Interner) -> Option<Compiled> {
        let tree = match &filter.tree {
            Some(tree) => Some(interner.get(tree.as_str())?),
            None => None,
        };
        let layers = filter
            .layers
            .iter()
            .enumerate()
            .filter_map(|(source, layer)| {
                Some(Layer {
                    namespace: interner.get(&layer.namespace.to_string())?,
                    source,
                    frozen_at: layer.frozen_at.map(nanos),
                    as_of: nanos(filter.effective_as_of(layer)),
                })
            })
            .collect();
        let (time_start, time_end) = match filter.time_range {
            Some((start, end)) => (start.map(nanos), end.map(nanos)),
            None => (None, None),
        };
        Some(Compiled {
            layers,
            history: filter.as_of.is_some(),
            now: nanos(filter.now),
            include_restricted: filter.include_restricted,
            node_kinds: {
                // Each kind once: the vector search reads one group per kind.
                let mut kinds = filter.node_kinds.clone();
                kinds.sort_unstable();
                kinds.dedup();
                kinds
            },
            categories: filter.categories.clone(),
            tree,
            kinds: filter.kinds.clone(),
            time_start,
            time_end,
        })
    }

    fn layer(&self, namespace: u32) -> Option<&Layer> {
        self.layers.iter().find(|layer| layer.namespace == namespace)
    }

    /// The same decision as `VisibilityFilter::admits`, on integers.
    fn admits(&self, layer: &Layer, f: &Compact) -> bool {
        // The namespace first: both searches reach documents through structures kept per
        // namespace, and this keeps scope a property of the one predicate, not of them.
        if f.namespace != layer.namespace || !self.node_kinds.contains(&f.node) {
            return false;
        }
        let state_ok = match (f.state, layer.frozen_at) {
            (NodeState::Forgotten | NodeState::Hidden, _) => false,
            (_, Some(frozen)) => f.known_from.is_some_and(|from| from <= frozen && frozen < f.known_until),
            (NodeState::Current, None) => true,
            (NodeState::Superseded, None) => self.history,
            (NodeState::Archived, None) => false,
        };
        state_ok
            && f.valid_from <= layer.as_of
            && layer.as_of < f.valid_to
            && f.expires_at > self.now
            && (self.include_restricted || f.sensitivity != Sensitivity::Restricted)
            && (self.categories.is_empty() || self.categories.contains(&f.category))
            && self.tree.is_none_or(|tree| tree == f.tree)
            && (self.kinds.is_empty() || f.kind.is_some_and(|k| self.kinds.contains(&k)))
            && self.time_start.is_none_or(|start| f.time_end >= start)
            && self.time_end.is_none_or(|end| f.time_start <= end)
    }
}

#[cfg(test)]
mod tests {
    use arbor_domain::id::{LeafId, ScopeId, SummaryId};
    use arbor_domain::model::TreeId;
    use arbor_domain::namespace::Namespace;
    use arbor_domain::time::{KnownSpan, Timestamp, Validity};
    use arbor_domain::visibility::LayerFilter;
    use proptest::prelude::*;

    use super::*;

    /// A vector whose int8 form and every score from it are exact: integer components over
    /// 128, the largest ±127, so the int8 scale is exactly 1/128 and both forms compute
    /// `integer dot product / 2^14` without rounding (ties are then true ties, broken by rowid).
    fn exact(components: &[i8]) -> Vec<f32> {
        components.iter().map(|c| f32::from(*c) / 128.0).collect()
    }

    fn vector_strategy() -> impl Strategy<Value = Vec<i8>> {
        // Sparse (at most 3 of 16 nonzero: postings once the group is large), dense (none
        // zero), or all zeros but one (many equal scores).
        let sparse = (prop::collection::vec((0usize..16, 1i8..=127, any::<bool>()), 0..3), any::<bool>()).prop_map(
            |(entries, negative)| {
                let mut v = vec![0i8; 16];
                for (at, value, minus) in entries {
                    v[at] = if minus { -value } else { value };
                }
                let top = v.iter().position(|c| *c != 0).unwrap_or(0);
                v[top] = if negative { -127 } else { 127 };
                v
            },
        );
        let dense = (prop::collection::vec(1i8..=126, 16), 0usize..16).prop_map(|(mut v, top)| {
            v[top] = 127;
            v
        });
        let one = (0usize..16).prop_map(|at| {
            let mut v = vec![0i8; 16];
            v[at] = 127;
            v
        });
        prop_oneof![3 => sparse, 2 => dense, 1 => one]
    }

    /// What a generated document is.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Doc {
        namespace: bool,
        summary: bool,
        superseded: bool,
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put { id: u8, doc: Doc, vector: Option<Vec<i8>> },
        Remove { id: u8 },
        Move { id: u8 },
        Supersede { id: u8 },
    }

    fn op() -> impl Strategy<Value = Op> {
        let doc = (any::<bool>(), prop::bool::weighted(0.2), prop::bool::weighted(0.15))
            .prop_map(|(namespace, summary, superseded)| Doc { namespace, summary, superseded });
        prop_oneof![
            5 => (0u8..40, doc, prop::option::weighted(0.9, vector_strategy()))
                .prop_map(|(id, doc, vector)| Op::Put { id, doc, vector }),
            2 => (0u8..40).prop_map(|id| Op::Remove { id }),
            1 => (0u8..40).prop_map(|id| Op::Move { id }),
            1 => (0u8..40).prop_map(|id| Op::Supersede { id }),
        ]
    }

    fn namespace(first: bool) -> Namespace {
        Namespace::conversation(ScopeId::parse(if first { "c1" } else { "c2" }).unwrap())
    }

    fn node(id: u8, doc: Doc) -> NodeId {
        if doc.summary {
            NodeId::Summary(SummaryId::parse(&format!("sum-{id}")).unwrap())
        } else {
            NodeId::Leaf(LeafId::parse(&format!("leaf-{id}")).unwrap())
        }
    }

    fn facts(doc: Doc) -> NodeFacts {
        let at = Timestamp::from_second(1_780_000_000).unwrap();
        NodeFacts {
            node: if doc.summary { NodeKind::Summary } else { NodeKind::Leaf },
            namespace: namespace(doc.namespace),
            category: Category::Interaction,
            tree_id: TreeId::uncategorized(Category::Interaction),
            kind: None,
            state: if doc.superseded { NodeState::Superseded } else { NodeState::Current },
            validity: Validity::ALWAYS,
            known: if doc.superseded { KnownSpan::from(at).closed_at(at) } else { KnownSpan::from(at) },
            expires_at: None,
            sensitivity: Sensitivity::Normal,
            time_start: at,
            time_end: at,
        }
    }

    fn filter(chain: &[bool], node_kinds: Vec<NodeKind>) -> VisibilityFilter {
        VisibilityFilter {
            layers: chain.iter().map(|n| LayerFilter { namespace: namespace(*n), frozen_at: None }).collect(),
            now: Timestamp::from_second(1_790_000_000).unwrap(),
            as_of: None,
            include_restricted: false,
            node_kinds,
            categories: Vec::new(),
            tree: None,
            kinds: Vec::new(),
            time_range: None,
        }
    }

    proptest! {
        /// After any sequence of writes, removals, moves and state changes (enough to sweep
        /// slots, move groups to postings and compact them), the vector scan returns exactly
        /// the top k of an exhaustive search over the documents the filter admits: the same
        /// scores, the same documents (equal scores by rowid), each once, in the chain.
        #[test]
        fn the_scan_is_exhaustive_over_dense_and_sparse_vectors(
            ops in prop::collection::vec(op(), 1..200),
            query in vector_strategy(),
            keep in 1usize..12,
            chain in prop_oneof![Just(vec![true]), Just(vec![false]), Just(vec![true, false]), Just(vec![false, true, false])],
            node_kinds in prop_oneof![
                Just(vec![NodeKind::Leaf]),
                Just(vec![NodeKind::Summary]),
                Just(vec![NodeKind::Leaf, NodeKind::Summary, NodeKind::Leaf]),
            ],
        ) {
            let mut mirror = Mirror::default();
            // id → (rowid, doc, vector)
            let mut live: HashMap<u8, (i64, Doc, Option<Vec<i8>>)> = HashMap::new();
            let mut next_rowid = 0;
            for op in ops {
                match op {
                    Op::Put { id, doc, vector } => {
                        if let Some((rowid, ..)) = live.remove(&id) {
                            mirror.remove(rowid);
                        }
                        next_rowid += 1;
                        let values = vector.as_deref().map(exact);
                        mirror.put(next_rowid, node(id, doc), &facts(doc), &DocTerms::of_text(""), values.as_deref().map(|v| ("e", v)));
                        live.insert(id, (next_rowid, doc, vector));
                    }
                    Op::Remove { id } => {
                        if let Some((rowid, ..)) = live.remove(&id) {
                            mirror.remove(rowid);
                        }
                    }
                    Op::Move { id } => {
                        if let Some((rowid, doc, _)) = live.get_mut(&id) {
                            doc.namespace = !doc.namespace;
                            mirror.set_facts(*rowid, &facts(*doc));
                        }
                    }
                    Op::Supersede { id } => {
                        if let Some((rowid, doc, _)) = live.get_mut(&id) {
                            doc.superseded = true;
                            mirror.set_facts(*rowid, &facts(*doc));
                        }
                    }
                }
            }
            let filter = filter(&chain, node_kinds);
            let mut expected: Vec<(i32, i64)> = live
                .iter()
                .filter(|(_, (_, doc, vector))| vector.is_some() && filter.admits(&facts(*doc)))
                .map(|(_, (rowid, _, vector))| {
                    let dot = vector.as_ref().unwrap().iter().zip(&query).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
                    (dot, *rowid)
                })
                .collect();
            expected.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            expected.truncate(keep);
            let found = mirror.scan(&filter, "e", &exact(&query), keep);
            let by_rowid: HashMap<i64, Doc> = live.values().map(|(rowid, doc, _)| (*rowid, *doc)).collect();
            for candidate in &found {
                let doc = by_rowid.get(&candidate.rowid);
                prop_assert!(doc.is_some_and(|d| chain.contains(&d.namespace)), "{candidate:?} is outside the chain");
                let layer = candidate.layer.map(|l| chain[l]);
                prop_assert_eq!(layer, doc.map(|d| d.namespace), "{:?} is reported in another layer", candidate);
            }
            let mut got: Vec<(i32, i64)> =
                found.iter().map(|c| ((c.approx * 16384.0) as i32, c.rowid)).collect();
            got.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            prop_assert_eq!(got, expected);
        }
    }
}
