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
//! authoritative copy of everything stays in SQLite; the mirror is rebuilt from it and caught
//! up with other processes' writes through a change sequence.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use arbor_domain::id::NodeId;
use arbor_domain::model::{Category, MemoryKind};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::visibility::{NodeFacts, NodeKind, NodeState, VisibilityFilter};

use crate::postings::{DocTerms, Postings, TextSearch};
use crate::vectors::{Form, Member, Offer, Sink, VectorGroup, quantize};

/// How many emptied slots are tolerated before they are swept out, as long as they do not
/// outnumber the live ones; small in unit tests so that random operation sequences reach the
/// sweep.
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
pub(crate) struct Candidate {
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
pub(crate) struct Mirror {
    /// Whether the mirror has been filled from the database.
    pub loaded: bool,
    /// `PRAGMA data_version` when last synchronized.
    pub data_version: i64,
    /// The index generation (bumped by `clear`) when last synchronized.
    pub generation: i64,
    /// Highest change sequence applied.
    pub last_seq: i64,
    interner: Interner,
    /// Slots are never reused, so each appears in exactly one namespace list; emptied slots are
    /// skipped and swept out once they outnumber the live ones.
    slots: Vec<Option<Slot>>,
    dead: usize,
    by_rowid: HashMap<i64, usize>,
    by_namespace: HashMap<u32, Vec<usize>>,
    /// The documents' vectors.
    vectors: HashMap<GroupKey, VectorGroup>,
    /// The documents' terms, by slot.
    text: Postings,
}

/// A full-text hit from the mirror.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextHit {
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
    pub(crate) fn reset(&mut self) {
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
    pub(crate) fn put(
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
        let (form, member) = self.vectors.entry(group).or_insert_with(|| VectorGroup::new(group.dimensions)).add(
            index,
            slot.rowid,
            &vector.values,
            vector.scale,
        );
        slot.vector = Some(StoredVector { group, form, member });
    }

    /// Takes a vector out of its group.
    fn take_vector(&mut self, stored: StoredVector) -> Option<Quantized> {
        let (values, scale) = self.vectors.get(&stored.group)?.values(stored.form, stored.member);
        self.forget_vector(stored);
        Some(Quantized { embedder: stored.group.embedder, values: values.into_boxed_slice(), scale })
    }

    /// Removes a vector from its group, following the members a compaction renumbers.
    fn forget_vector(&mut self, stored: StoredVector) {
        let Some(group) = self.vectors.get_mut(&stored.group) else { return };
        for (index, member) in group.remove(stored.form, stored.member) {
            if let Some(Slot { vector: Some(moved), .. }) = self.slots.get_mut(index).and_then(Option::as_mut) {
                moved.member = member;
            }
        }
    }

    fn push(&mut self, slot: Slot) -> usize {
        let index = self.slots.len();
        self.by_rowid.insert(slot.rowid, index);
        self.by_namespace.entry(slot.facts.namespace).or_default().push(index);
        self.slots.push(Some(slot));
        index
    }

    /// Updates the facts of a document the mirror holds.
    pub(crate) fn set_facts(&mut self, rowid: i64, facts: &NodeFacts) {
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

    pub(crate) fn remove(&mut self, rowid: i64) {
        if let Some(index) = self.by_rowid.remove(&rowid)
            && let Some(slot) = self.slots[index].take()
        {
            self.text.remove(index, slot.facts.namespace);
            if let Some(stored) = slot.vector {
                self.forget_vector(stored);
            }
            self.dead += 1;
        }
        if self.dead > SWEEP_AFTER && self.dead > self.by_rowid.len() {
            self.sweep();
        }
    }

    /// Drops emptied slots and renumbers the rest.
    fn sweep(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        let mut new_slot: Vec<Option<u32>> = Vec::with_capacity(slots.len());
        self.by_rowid.clear();
        self.by_namespace.clear();
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
    pub(crate) fn documents_holding(&self, token: &str) -> u64 {
        self.text.documents_holding(token)
    }

    /// The best `limit` documents under `filter` by BM25 over `terms`, best first (equal
    /// scores in node order, as the search port orders them).
    pub(crate) fn search_text(&self, filter: &VisibilityFilter, terms: &[String], limit: usize) -> Vec<TextHit> {
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
    pub(crate) fn search_text_all(&self, terms: &[String], limit: usize) -> usize {
        let namespaces: Vec<(u32, usize)> = self.by_namespace.keys().map(|n| (*n, 0)).collect();
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
    pub(crate) fn scan_all(&mut self, embedder: &str, query: &[f32], keep: usize) -> Vec<Candidate> {
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
    pub(crate) fn scan(
        &mut self,
        filter: &VisibilityFilter,
        embedder: &str,
        query: &[f32],
        keep: usize,
    ) -> Vec<Candidate> {
        let Some(embedder) = self.interner.get(embedder) else { return Vec::new() };
        let Some(compiled) = self.compile(filter) else { return Vec::new() };
        let mut top = TopK::new(keep);
        let slots = &self.slots;
        for layer in &compiled.layers {
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
            node_kinds: filter.node_kinds.clone(),
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
        if !self.node_kinds.contains(&f.node) {
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
    use proptest::prelude::*;

    use super::*;

    /// A vector whose int8 form is exact: integer components over 127, the largest ±127.
    fn exact(components: &[i8]) -> Vec<f32> {
        components.iter().map(|c| f32::from(*c) / 127.0).collect()
    }

    fn vector_strategy() -> impl Strategy<Value = Vec<i8>> {
        // Sparse (at most 3 of 16 nonzero: stored as postings) or dense (none zero).
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
        prop_oneof![sparse, dense]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put { id: u8, namespace: bool, vector: Option<Vec<i8>> },
        Remove { id: u8 },
        Move { id: u8 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..40, any::<bool>(), prop::option::weighted(0.9, vector_strategy()))
                .prop_map(|(id, namespace, vector)| Op::Put { id, namespace, vector }),
            2 => (0u8..40).prop_map(|id| Op::Remove { id }),
            1 => (0u8..40).prop_map(|id| Op::Move { id }),
        ]
    }

    fn facts(namespace: bool) -> NodeFacts {
        use arbor_domain::id::ScopeId;
        use arbor_domain::model::TreeId;
        use arbor_domain::namespace::Namespace;
        use arbor_domain::time::{KnownSpan, Timestamp, Validity};
        let at = Timestamp::from_second(1_780_000_000).unwrap();
        NodeFacts {
            node: NodeKind::Leaf,
            namespace: Namespace::conversation(ScopeId::parse(if namespace { "c1" } else { "c2" }).unwrap()),
            category: Category::Interaction,
            tree_id: TreeId::uncategorized(Category::Interaction),
            kind: None,
            state: NodeState::Current,
            validity: Validity::ALWAYS,
            known: KnownSpan::from(at),
            expires_at: None,
            sensitivity: Sensitivity::Normal,
            time_start: at,
            time_end: at,
        }
    }

    fn filter(namespaces: &[bool]) -> VisibilityFilter {
        use arbor_domain::visibility::LayerFilter;
        VisibilityFilter {
            layers: namespaces
                .iter()
                .map(|n| LayerFilter { namespace: facts(*n).namespace, frozen_at: None })
                .collect(),
            now: arbor_domain::time::Timestamp::from_second(1_790_000_000).unwrap(),
            as_of: None,
            include_restricted: false,
            node_kinds: vec![NodeKind::Leaf],
            categories: Vec::new(),
            tree: None,
            kinds: Vec::new(),
            time_range: None,
        }
    }

    proptest! {
        /// After any sequence of writes, removals and moves (enough to sweep slots and compact
        /// the postings), the vector scan returns the top k an exhaustive search over the
        /// live documents would, whether their vectors are kept dense or as postings.
        #[test]
        fn the_scan_is_exhaustive_over_dense_and_sparse_vectors(
            ops in prop::collection::vec(op(), 1..160),
            query in vector_strategy(),
            keep in 1usize..12,
            chain in prop_oneof![Just(vec![true]), Just(vec![false]), Just(vec![true, false])],
        ) {
            let mut mirror = Mirror::default();
            // id → (rowid, namespace, vector)
            let mut live: HashMap<u8, (i64, bool, Option<Vec<i8>>)> = HashMap::new();
            let mut next_rowid = 0;
            let node = |id: u8| NodeId::Leaf(arbor_domain::id::LeafId::parse(&format!("leaf-{id}")).unwrap());
            for op in ops {
                match op {
                    Op::Put { id, namespace, vector } => {
                        if let Some((rowid, ..)) = live.remove(&id) {
                            mirror.remove(rowid);
                        }
                        next_rowid += 1;
                        let values = vector.as_deref().map(exact);
                        mirror.put(next_rowid, node(id), &facts(namespace), &DocTerms::of_text(""), values.as_deref().map(|v| ("e", v)));
                        live.insert(id, (next_rowid, namespace, vector));
                    }
                    Op::Remove { id } => {
                        if let Some((rowid, ..)) = live.remove(&id) {
                            mirror.remove(rowid);
                        }
                    }
                    Op::Move { id } => {
                        if let Some((rowid, namespace, _)) = live.get_mut(&id) {
                            *namespace = !*namespace;
                            mirror.set_facts(*rowid, &facts(*namespace));
                        }
                    }
                }
            }
            let mut expected: Vec<i32> = live
                .values()
                .filter(|(_, namespace, vector)| vector.is_some() && chain.contains(namespace))
                .map(|(_, _, vector)| {
                    vector.as_ref().unwrap().iter().zip(&query).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum()
                })
                .collect();
            expected.sort_unstable_by(|a, b| b.cmp(a));
            expected.truncate(keep);
            let found = mirror.scan(&filter(&chain), "e", &exact(&query), keep);
            let by_rowid: HashMap<i64, bool> = live.values().map(|(rowid, namespace, _)| (*rowid, *namespace)).collect();
            for candidate in &found {
                let namespace = by_rowid.get(&candidate.rowid).copied();
                prop_assert!(namespace.is_some_and(|n| chain.contains(&n)), "{candidate:?} is outside the chain");
            }
            let got: Vec<i32> = found.iter().map(|c| (c.approx * 127.0 * 127.0).round() as i32).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
