//! Vectors that are mostly zeros, kept as postings: for each dimension, the members with a
//! nonzero component there and its int8 value.
//!
//! A vector search over them reads only the lists of the query's nonzero dimensions and adds
//! each posting into a score per member, then walks the scores once in member order. That
//! touches `nonzero(query) × density × members` postings where a scan reads every component
//! of every vector: at a million hashing-embedder vectors (about a tenth of 256 components
//! nonzero, a few in a question) that is a few hundred thousand additions instead of 256 MB of
//! memory. The scores are the same int8 approximation the dense scan makes, so the exact
//! rescoring after it is unchanged.
//!
//! A vector goes here only when its postings take no more memory than its dense int8 form
//! ([`is_sparse`]); embedders whose vectors have no zero components (every neural one) never
//! get here.

/// A member's position in a [`SparseVectors`]; stable until [`SparseVectors::compact`].
pub(crate) type Member = u32;

/// Marks a removed member in [`SparseVectors::slots`].
const GONE: u32 = u32::MAX;

/// Bytes one posting takes: its member (`u32`) and value (`i8`), in two parallel arrays.
const POSTING_BYTES: usize = 5;

/// Whether a quantized vector is stored as postings: when its nonzero components, at
/// [`POSTING_BYTES`] each, take no more memory than its dense form at one byte a component.
/// The rule follows from memory alone, so it holds for any embedder: sparse ones (feature
/// hashing) qualify, dense ones (a neural model's components are never exactly zero) do not.
pub(crate) fn is_sparse(values: &[i8]) -> bool {
    let nonzero = values.iter().filter(|v| **v != 0).count();
    nonzero * POSTING_BYTES <= values.len()
}

/// One dimension's postings, in member order.
#[derive(Debug, Default)]
struct List {
    members: Vec<Member>,
    values: Vec<i8>,
}

/// The sparse vectors of one namespace and embedder.
#[derive(Debug)]
pub(crate) struct SparseVectors {
    dimensions: usize,
    lists: Vec<List>,
    /// By member: the mirror's slot index ([`GONE`] once removed), rowid and int8 scale.
    slots: Vec<u32>,
    rowids: Vec<i64>,
    scales: Vec<f32>,
    removed: usize,
    /// One score per member, zero between searches (kept to spare each search an allocation
    /// of the whole group).
    scores: Vec<f32>,
}

/// A scored member offered to the caller's top k.
pub(crate) struct Offer {
    pub slot: usize,
    pub rowid: i64,
    pub approx: f32,
}

impl SparseVectors {
    pub(crate) fn new(dimensions: usize) -> SparseVectors {
        SparseVectors {
            dimensions,
            lists: (0..dimensions).map(|_| List::default()).collect(),
            slots: Vec::new(),
            rowids: Vec::new(),
            scales: Vec::new(),
            removed: 0,
            scores: Vec::new(),
        }
    }

    pub(crate) fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Members still present.
    pub(crate) fn live(&self) -> usize {
        self.slots.len() - self.removed
    }

    pub(crate) fn removed(&self) -> usize {
        self.removed
    }

    /// Adds a vector (of this group's dimensions) held by mirror slot `slot`.
    pub(crate) fn add(&mut self, slot: usize, rowid: i64, values: &[i8], scale: f32) -> Member {
        debug_assert_eq!(values.len(), self.dimensions);
        let member = Member::try_from(self.slots.len()).unwrap_or(GONE - 1);
        for (dimension, value) in values.iter().enumerate() {
            if *value != 0 {
                let list = &mut self.lists[dimension];
                list.members.push(member);
                list.values.push(*value);
            }
        }
        self.slots.push(u32::try_from(slot).unwrap_or(GONE - 1));
        self.rowids.push(rowid);
        self.scales.push(scale);
        self.scores.push(0.0);
        member
    }

    /// Removes a member; its postings stay until [`SparseVectors::compact`] and are skipped.
    pub(crate) fn remove(&mut self, member: Member) {
        if let Some(slot) = self.slots.get_mut(member as usize)
            && *slot != GONE
        {
            *slot = GONE;
            self.removed += 1;
        }
    }

    /// A member's vector in dense form, with its scale (for the rare move to another group).
    pub(crate) fn values(&self, member: Member) -> (Vec<i8>, f32) {
        let mut values = vec![0i8; self.dimensions];
        for (dimension, list) in self.lists.iter().enumerate() {
            if let Ok(at) = list.members.binary_search(&member) {
                values[dimension] = list.values[at];
            }
        }
        (values, self.scales.get(member as usize).copied().unwrap_or(0.0))
    }

    /// Renumbers mirror slots after the mirror swept its own: `new_slot[old]` is the new index.
    pub(crate) fn renumber_slots(&mut self, new_slot: &[Option<u32>]) {
        for slot in &mut self.slots {
            if *slot != GONE {
                *slot = new_slot.get(*slot as usize).copied().flatten().unwrap_or(GONE);
            }
        }
    }

    /// Drops removed members and their postings; returns each surviving member's new number
    /// with its slot, so the mirror can point its slots at them.
    pub(crate) fn compact(&mut self) -> Vec<(usize, Member)> {
        let mut renumbered: Vec<Member> = Vec::with_capacity(self.slots.len());
        let mut moved = Vec::with_capacity(self.live());
        let mut next: Member = 0;
        for (member, slot) in self.slots.iter().enumerate() {
            if *slot == GONE {
                renumbered.push(GONE);
            } else {
                renumbered.push(next);
                if member as Member != next {
                    moved.push((*slot as usize, next));
                }
                next += 1;
            }
        }
        for list in &mut self.lists {
            let mut kept = 0;
            for at in 0..list.members.len() {
                let now = renumbered[list.members[at] as usize];
                if now != GONE {
                    list.members[kept] = now;
                    list.values[kept] = list.values[at];
                    kept += 1;
                }
            }
            list.members.truncate(kept);
            list.values.truncate(kept);
        }
        keep_survivors(&mut self.rowids, &renumbered);
        keep_survivors(&mut self.scales, &renumbered);
        self.slots.retain(|slot| *slot != GONE);
        self.scores.truncate(self.slots.len());
        self.removed = 0;
        moved
    }

    /// Scores every member against `query` (of this group's dimensions) and offers each live
    /// one, in member order, to `consider` (which compares the score with its top k before
    /// asking any filter, so a member that cannot enter costs one comparison).
    pub(crate) fn search(&mut self, query: &[f32], mut consider: impl FnMut(Offer)) {
        debug_assert_eq!(query.len(), self.dimensions);
        for (list, weight) in self.lists.iter().zip(query) {
            if *weight == 0.0 {
                continue;
            }
            for (member, value) in list.members.iter().zip(&list.values) {
                self.scores[*member as usize] += weight * f32::from(*value);
            }
        }
        for (member, score) in self.scores.iter_mut().enumerate() {
            let approx = *score * self.scales[member];
            *score = 0.0;
            let slot = self.slots[member];
            if slot != GONE {
                consider(Offer { slot: slot as usize, rowid: self.rowids[member], approx });
            }
        }
    }
}

/// Keeps the entries of a by-member column whose member survives compaction.
fn keep_survivors<T>(column: &mut Vec<T>, renumbered: &[Member]) {
    let mut member = 0;
    column.retain(|_| {
        member += 1;
        renumbered[member - 1] != GONE
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn compaction_keeps_every_survivor_and_its_values() {
        let mut group = SparseVectors::new(6);
        let vectors: Vec<[i8; 6]> = (0..10).map(|i| [i as i8, 0, 0, -(i as i8), 0, 1]).collect();
        for (i, values) in vectors.iter().enumerate() {
            group.add(100 + i, i as i64, values, 0.5);
        }
        for member in [0, 3, 4, 9] {
            group.remove(member);
        }
        let moved = group.compact();
        assert_eq!(group.live(), 6);
        assert_eq!(moved.first(), Some(&(101, 0)));
        for (slot, member) in moved {
            let (values, scale) = group.values(member);
            assert_eq!(values, vectors[slot - 100].to_vec());
            assert_eq!(scale, 0.5);
        }
    }
}
