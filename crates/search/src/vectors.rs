//! The mirror's vectors, quantized to int8 and grouped by namespace, embedder, node kind and
//! length, so a search reads only the groups its filter can admit, each in one pass over
//! contiguous memory.
//!
//! A group keeps each vector in one of two forms:
//! - [`DenseVectors`]: every component, one row after another; a search computes the int8 dot
//!   product of every row, reading the group's memory front to back.
//! - [`SparseVectors`]: for vectors that are mostly zeros, postings per dimension (the
//!   members with a nonzero component there and its value). A search adds up the postings of
//!   the query's nonzero dimensions only, then walks the scores once. At a million
//!   hashing-embedder vectors (a few dozen of 256 components nonzero, a handful in a question)
//!   that is well under a million additions where the dense form reads 256 MB.
//!
//! A vector is kept as postings when that takes no more memory than its dense form
//! ([`is_sparse`]) and its group is large enough for postings to pay ([`POSTINGS_FROM`]); a
//! neural embedder's components are never exactly zero, so its vectors are always dense. Both
//! forms approximate the similarity from the stored int8 components (the sparse form with the
//! question unquantized, so slightly closer), and the caller rescores the best exactly.

/// A vector's position in its group's form; stable until that form is compacted.
pub(crate) type Member = u32;

/// Marks a removed member in [`Members::slots`].
const GONE: u32 = u32::MAX;

/// Bytes one posting takes: its member (`u32`) and value (`i8`), in two parallel arrays.
const POSTING_BYTES: usize = 5;

/// Quantizes a vector to int8 with one scale: `value ≈ q * scale`.
pub(crate) fn quantize(values: &[f32]) -> (Box<[i8]>, f32) {
    let max = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if max == 0.0 {
        return (vec![0; values.len()].into_boxed_slice(), 0.0);
    }
    let scale = max / 127.0;
    let q = values.iter().map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8).collect();
    (q, scale)
}

/// Whether a quantized vector is kept as postings: when its nonzero components, at
/// [`POSTING_BYTES`] each, take no more memory than its dense form at one byte a component.
/// The rule follows from memory alone, so it holds for any embedder.
pub(crate) fn is_sparse(values: &[i8]) -> bool {
    let nonzero = values.iter().filter(|v| **v != 0).count();
    nonzero * POSTING_BYTES <= values.len()
}

/// The integer dot product, written in fixed-width chunks so the compiler keeps sixteen lanes
/// busy (about twice as fast as the plain iterator form on baseline x86-64).
#[inline(always)]
fn dot_i8_lanes(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (chunks_a, chunks_b) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 =
        chunks_a.remainder().iter().zip(chunks_b.remainder()).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}

/// [`dot_i8_lanes`] compiled for AVX2, whose wider registers and sign-extending loads make
/// the dot product about 1.5× faster than the baseline x86-64 build (the scan as a whole about
/// 1.15×: it then waits on memory).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_lanes(a, b)
}

/// The int8 dot product for the CPU this runs on: the dense search's inner loop.
#[allow(unsafe_code)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: a `#[target_feature]` function is sound to call exactly when the CPU has
        // the feature, which was just detected; the function itself is safe code.
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_lanes(a, b)
}

/// A scored member offered to the caller's top k.
pub(crate) struct Offer {
    pub slot: usize,
    pub rowid: i64,
    pub approx: f32,
}

/// Where a search's scores go: the caller's top k.
pub(crate) trait Sink {
    /// The lowest score that could still enter (`-∞` until the top k is full). A member
    /// scoring below it is passed over before its slot and rowid are even read.
    fn floor(&self) -> f32;

    /// Considers a member that scored at least [`Sink::floor`].
    fn offer(&mut self, offer: Offer);
}

/// What both forms keep per member: the mirror's slot index ([`GONE`] once removed), the
/// document's rowid and the int8 scale.
#[derive(Debug, Default)]
struct Members {
    slots: Vec<u32>,
    rowids: Vec<i64>,
    scales: Vec<f32>,
    removed: usize,
}

/// How members are renumbered by a compaction: `new[old]`, [`GONE`] for the removed.
struct Renumbering {
    new: Vec<Member>,
    /// `(slot, new member)` for each survivor whose number changed.
    moved: Vec<(usize, Member)>,
}

impl Members {
    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4 + self.rowids.capacity() * 8 + self.scales.capacity() * 4
    }

    fn push(&mut self, slot: usize, rowid: i64, scale: f32) -> Member {
        let member = Member::try_from(self.slots.len()).unwrap_or(GONE - 1);
        self.slots.push(u32::try_from(slot).unwrap_or(GONE - 1));
        self.rowids.push(rowid);
        self.scales.push(scale);
        member
    }

    fn remove(&mut self, member: Member) {
        if let Some(slot) = self.slots.get_mut(member as usize)
            && *slot != GONE
        {
            *slot = GONE;
            self.removed += 1;
        }
    }

    fn live(&self) -> usize {
        self.slots.len() - self.removed
    }

    fn renumber_slots(&mut self, new_slot: &[Option<u32>]) {
        for slot in &mut self.slots {
            if *slot != GONE {
                *slot = new_slot.get(*slot as usize).copied().flatten().unwrap_or(GONE);
            }
        }
    }

    /// Drops removed members and says how the rest were renumbered.
    fn compact(&mut self) -> Renumbering {
        let mut new = Vec::with_capacity(self.slots.len());
        let mut moved = Vec::new();
        let mut next: Member = 0;
        for (member, slot) in self.slots.iter().enumerate() {
            if *slot == GONE {
                new.push(GONE);
            } else {
                new.push(next);
                if member as Member != next {
                    moved.push((*slot as usize, next));
                }
                next += 1;
            }
        }
        keep_survivors(&mut self.rowids, &new);
        keep_survivors(&mut self.scales, &new);
        self.slots.retain(|slot| *slot != GONE);
        self.removed = 0;
        Renumbering { new, moved }
    }

    /// Offers a live member's score, unless it is below what the sink could keep.
    #[inline]
    fn offer(&self, member: usize, approx: f32, sink: &mut impl Sink) {
        if approx < sink.floor() {
            return;
        }
        let slot = self.slots[member];
        if slot != GONE {
            sink.offer(Offer { slot: slot as usize, rowid: self.rowids[member], approx });
        }
    }
}

/// Keeps the entries of a by-member column whose member survives compaction.
fn keep_survivors<T>(column: &mut Vec<T>, new: &[Member]) {
    let mut member = 0;
    column.retain(|_| {
        member += 1;
        new[member - 1] != GONE
    });
}

/// Vectors kept whole, one row after another.
#[derive(Debug)]
pub(crate) struct DenseVectors {
    dimensions: usize,
    values: Vec<i8>,
    members: Members,
}

impl DenseVectors {
    fn new(dimensions: usize) -> DenseVectors {
        DenseVectors { dimensions, values: Vec::new(), members: Members::default() }
    }

    fn add(&mut self, slot: usize, rowid: i64, values: &[i8], scale: f32) -> Member {
        self.values.extend_from_slice(values);
        self.members.push(slot, rowid, scale)
    }

    fn values(&self, member: Member) -> (Vec<i8>, f32) {
        let start = member as usize * self.dimensions;
        (self.values[start..start + self.dimensions].to_vec(), self.members.scales[member as usize])
    }

    fn compact(&mut self) -> Vec<(usize, Member)> {
        let renumbering = self.members.compact();
        let mut kept = 0;
        for (member, now) in renumbering.new.iter().enumerate() {
            if *now != GONE {
                let from = member * self.dimensions;
                self.values.copy_within(from..from + self.dimensions, kept * self.dimensions);
                kept += 1;
            }
        }
        self.values.truncate(kept * self.dimensions);
        renumbering.moved
    }

    /// Offers every live member's score against the quantized query `(query, scale)`.
    fn search(&self, query: &[i8], scale: f32, sink: &mut impl Sink) {
        for (member, row) in self.values.chunks_exact(self.dimensions.max(1)).enumerate() {
            let approx = dot_i8(row, query) as f32 * self.members.scales[member] * scale;
            self.members.offer(member, approx, sink);
        }
    }
}

/// One dimension's postings, in member order.
#[derive(Debug, Default)]
struct List {
    members: Vec<Member>,
    values: Vec<i8>,
}

/// Vectors kept as postings.
#[derive(Debug)]
pub(crate) struct SparseVectors {
    dimensions: usize,
    /// One list per dimension, made with the first member: a store of many small namespaces
    /// whose vectors are all dense pays nothing for the form it does not use.
    lists: Vec<List>,
    members: Members,
    /// One score per member, zero between searches (kept to spare each search an allocation
    /// of the whole group).
    scores: Vec<f32>,
}

impl SparseVectors {
    fn new(dimensions: usize) -> SparseVectors {
        SparseVectors { dimensions, lists: Vec::new(), members: Members::default(), scores: Vec::new() }
    }

    fn add(&mut self, slot: usize, rowid: i64, values: &[i8], scale: f32) -> Member {
        let member = self.members.push(slot, rowid, scale);
        if self.lists.is_empty() {
            self.lists.resize_with(self.dimensions, List::default);
        }
        for (list, value) in self.lists.iter_mut().zip(values) {
            if *value != 0 {
                list.members.push(member);
                list.values.push(*value);
            }
        }
        self.scores.push(0.0);
        member
    }

    fn values(&self, member: Member) -> (Vec<i8>, f32) {
        let mut values = vec![0i8; self.dimensions];
        for (value, list) in values.iter_mut().zip(&self.lists) {
            *value = list.members.binary_search(&member).map_or(0, |at| list.values[at]);
        }
        (values, self.members.scales[member as usize])
    }

    fn compact(&mut self) -> Vec<(usize, Member)> {
        let renumbering = self.members.compact();
        for list in &mut self.lists {
            let mut kept = 0;
            for at in 0..list.members.len() {
                let now = renumbering.new[list.members[at] as usize];
                if now != GONE {
                    list.members[kept] = now;
                    list.values[kept] = list.values[at];
                    kept += 1;
                }
            }
            list.members.truncate(kept);
            list.values.truncate(kept);
        }
        self.scores.truncate(self.members.slots.len());
        renumbering.moved
    }

    /// Adds up the postings of `query`'s nonzero dimensions, then offers every live member's
    /// score in member order (resetting the scores for the next search).
    ///
    /// Members are taken a block of [`SCORE_BLOCK`] at a time: every list adds its postings
    /// for the block, then the block's scores are offered. Each list is in member order, so
    /// this is one pass over the scores, kept in cache, instead of one pass over all of them
    /// per dimension of the question.
    fn search(&mut self, query: &[f32], sink: &mut impl Sink) {
        let SparseVectors { lists, members, scores, .. } = self;
        // A component that is zero adds nothing; one that is not finite is ignored, as
        // quantizing the query for the dense form ignores it.
        let mut weighted: Vec<(&List, f32, usize)> = lists
            .iter()
            .zip(query)
            .filter(|(_, weight)| **weight != 0.0 && weight.is_finite())
            .map(|(list, weight)| (list, *weight, 0))
            .collect();
        let mut start = 0;
        while start < scores.len() {
            let end = (start + SCORE_BLOCK).min(scores.len());
            let block = &mut scores[start..end];
            for (list, weight, at) in &mut weighted {
                let count = list.members[*at..].partition_point(|member| (*member as usize) < end);
                let postings = list.members[*at..*at + count].iter().zip(&list.values[*at..*at + count]);
                for (member, value) in postings {
                    block[*member as usize - start] += *weight * f32::from(*value);
                }
                *at += count;
            }
            for (offset, score) in block.iter_mut().enumerate() {
                let approx = *score * members.scales[start + offset];
                *score = 0.0;
                members.offer(start + offset, approx, sink);
            }
            start = end;
        }
    }
}

/// Members scored together by a sparse search: 64 KiB of scores, which stay in a core's
/// second-level cache while every list of the question adds to them. Small in unit tests so
/// that searches cross blocks.
const SCORE_BLOCK: usize = if cfg!(test) { 3 } else { 16 * 1024 };

/// Which form a member is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Dense,
    Sparse,
}

/// The vectors of one namespace, embedder, node kind and length, in both forms.
#[derive(Debug)]
pub(crate) struct VectorGroup {
    dense: DenseVectors,
    sparse: SparseVectors,
    /// Whether sparse vectors go to postings; off until the group holds [`POSTINGS_FROM`]
    /// vectors.
    postings: bool,
}

/// A member that moved: the mirror points slot `slot` at `(form, member)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Relocation {
    pub slot: usize,
    pub form: Form,
    pub member: Member,
}

/// How many vectors a group holds before sparse ones are kept as postings. Postings cost a
/// list per dimension before the first entry (about 50 bytes each); from this size on that is
/// about 1% of the dense rows they replace, whatever the length, and below it a dense scan of
/// the whole group takes well under a tenth of a millisecond. Small in unit tests so random
/// operation sequences cross it.
const POSTINGS_FROM: usize = if cfg!(test) { 6 } else { 4096 };

/// A form is compacted once at least this many of its members are removed and they are more
/// than a quarter of it: removed rows are still read by a search, so they must not pile up
/// (a reindex replaces every vector of a group), and compacting at a fixed share keeps the
/// cost per removal constant. Small in unit tests so random operation sequences reach it.
const COMPACT_FROM: usize = if cfg!(test) { 3 } else { 64 };

impl VectorGroup {
    /// The heap this group holds (what was allocated, not only what is used).
    pub(crate) fn heap_bytes(&self) -> usize {
        let dense = self.dense.values.capacity() + self.dense.members.heap_bytes();
        let lists: usize = self.sparse.lists.iter().map(|l| l.members.capacity() * 4 + l.values.capacity()).sum();
        let sparse = self.sparse.lists.capacity() * std::mem::size_of::<List>()
            + lists
            + self.sparse.members.heap_bytes()
            + self.sparse.scores.capacity() * 4;
        dense + sparse
    }

    pub(crate) fn new(dimensions: usize) -> VectorGroup {
        VectorGroup { dense: DenseVectors::new(dimensions), sparse: SparseVectors::new(dimensions), postings: false }
    }

    /// Members still present.
    pub(crate) fn live(&self) -> usize {
        self.dense.members.live() + self.sparse.members.live()
    }

    /// Adds a vector of this group's length, held by mirror slot `slot`, in the form that
    /// suits it. Adding may also move other members (when the group starts keeping postings),
    /// the new one included: the relocations are applied after the returned place.
    pub(crate) fn add(
        &mut self,
        slot: usize,
        rowid: i64,
        values: &[i8],
        scale: f32,
    ) -> ((Form, Member), Vec<Relocation>) {
        debug_assert_eq!(values.len(), self.dense.dimensions);
        if self.postings && is_sparse(values) {
            return ((Form::Sparse, self.sparse.add(slot, rowid, values, scale)), Vec::new());
        }
        let placed = (Form::Dense, self.dense.add(slot, rowid, values, scale));
        if self.postings || self.dense.members.live() < POSTINGS_FROM {
            return (placed, Vec::new());
        }
        // Large enough: move the dense rows that are sparse into postings.
        self.postings = true;
        let mut moved = Vec::new();
        for member in 0..self.dense.members.slots.len() {
            let slot = self.dense.members.slots[member];
            let row = &self.dense.values[member * self.dense.dimensions..(member + 1) * self.dense.dimensions];
            if slot == GONE || !is_sparse(row) {
                continue;
            }
            let (rowid, scale) = (self.dense.members.rowids[member], self.dense.members.scales[member]);
            let row = row.to_vec();
            let now = self.sparse.add(slot as usize, rowid, &row, scale);
            self.dense.members.remove(member as Member);
            moved.push(Relocation { slot: slot as usize, form: Form::Sparse, member: now });
        }
        moved.extend(self.compact_if_due(Form::Dense));
        (placed, moved)
    }

    /// A member's vector in dense form, with its scale (for the rare move to another group).
    pub(crate) fn values(&self, form: Form, member: Member) -> (Vec<i8>, f32) {
        match form {
            Form::Dense => self.dense.values(member),
            Form::Sparse => self.sparse.values(member),
        }
    }

    /// Removes a member, compacting its form when [`COMPACT_FROM`] says so; returns the
    /// members that compaction renumbered.
    pub(crate) fn remove(&mut self, form: Form, member: Member) -> Vec<Relocation> {
        match form {
            Form::Dense => self.dense.members.remove(member),
            Form::Sparse => self.sparse.members.remove(member),
        }
        self.compact_if_due(form)
    }

    fn compact_if_due(&mut self, form: Form) -> Vec<Relocation> {
        let members = match form {
            Form::Dense => &self.dense.members,
            Form::Sparse => &self.sparse.members,
        };
        if members.removed < COMPACT_FROM || members.removed * 4 <= members.slots.len() {
            return Vec::new();
        }
        let moved = match form {
            Form::Dense => self.dense.compact(),
            Form::Sparse => self.sparse.compact(),
        };
        moved.into_iter().map(|(slot, member)| Relocation { slot, form, member }).collect()
    }

    /// Renumbers mirror slots after the mirror swept its own: `new_slot[old]` is the new index.
    pub(crate) fn renumber_slots(&mut self, new_slot: &[Option<u32>]) {
        self.dense.members.renumber_slots(new_slot);
        self.sparse.members.renumber_slots(new_slot);
    }

    /// Scores every live member against `query` (of this group's length) and offers to
    /// `sink` those that could enter its top k.
    pub(crate) fn search(&mut self, query: &[f32], sink: &mut impl Sink) {
        if self.dense.members.live() > 0 {
            let (quantized, scale) = quantize(query);
            self.dense.search(&quantized, scale, sink);
        }
        if self.sparse.members.live() > 0 {
            self.sparse.search(query, sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whichever build of the dot product the CPU gets, it is the plain sum of products,
        /// at any length (including tails shorter than a chunk) and at the extremes of int8.
        #[test]
        fn the_dot_product_is_the_sum_of_products(
            (a, b) in (0usize..600).prop_flat_map(|n| (prop::collection::vec(any::<i8>(), n), prop::collection::vec(any::<i8>(), n)))
        ) {
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            prop_assert_eq!(dot_i8(&a, &b), plain);
            prop_assert_eq!(dot_i8_lanes(&a, &b), plain);
        }
    }

    #[test]
    fn the_dot_product_holds_at_the_int8_extremes() {
        let a = vec![-128i8; 4096];
        assert_eq!(dot_i8(&a, &a), 128 * 128 * 4096);
        assert_eq!(dot_i8(&a, &vec![127i8; 4096]), -128 * 127 * 4096);
    }

    #[test]
    fn only_vectors_smaller_as_postings_are_sparse() {
        let mut values = vec![0i8; 20];
        values[..4].fill(3);
        assert!(is_sparse(&values), "4 of 20 nonzero: 20 bytes as postings, 20 dense");
        values[4] = 1;
        assert!(!is_sparse(&values), "5 of 20 nonzero: 25 bytes as postings");
        assert!(is_sparse(&[0i8; 8]));
    }

    #[test]
    fn compaction_and_the_move_to_postings_keep_every_survivor_and_its_values() {
        for dense in [false, true] {
            let mut group = VectorGroup::new(10);
            let vectors: Vec<Vec<i8>> = (0..12)
                .map(|i| {
                    let mut v = vec![0i8; 10];
                    v[0] = i;
                    v[3] = -i;
                    if dense {
                        v.fill(i + 1);
                    }
                    v
                })
                .collect();
            // Where each vector is, as the mirror would follow it.
            let mut placed: Vec<Option<(Form, Member)>> = Vec::new();
            let follow = |placed: &mut Vec<Option<(Form, Member)>>, moved: Vec<Relocation>| {
                for relocation in moved {
                    placed[relocation.slot - 100] = Some((relocation.form, relocation.member));
                }
            };
            for (i, values) in vectors.iter().enumerate() {
                let (at, moved) = group.add(100 + i, i as i64, values, 0.5);
                placed.push(Some(at));
                follow(&mut placed, moved);
            }
            let forms: Vec<Form> = placed.iter().map(|p| p.unwrap().0).collect();
            let expected = if dense { Form::Dense } else { Form::Sparse };
            assert!(forms.iter().all(|f| *f == expected), "{forms:?}");
            for i in [0, 3, 4, 9, 10, 11, 7] {
                let (form, member) = placed[i].take().unwrap();
                let moved = group.remove(form, member);
                follow(&mut placed, moved);
            }
            assert_eq!(group.live(), 5);
            for (i, at) in placed.iter().enumerate() {
                if let Some((form, member)) = at {
                    let (values, scale) = group.values(*form, *member);
                    assert_eq!(values, vectors[i]);
                    assert_eq!(scale, 0.5);
                }
            }
        }
    }
}
