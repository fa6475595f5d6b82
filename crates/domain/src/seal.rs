//! `SealPolicy`: how trees grow summaries [design §sealing].
//!
//! - Leaves join their tree's unsealed buffer (the *frontier*: nodes with no sealed parent).
//! - When `branch_factor` (default 8) nodes of one height are unsealed, the oldest of them are
//!   sealed under a new summary one height up. Summaries seal upward the same way.
//! - The root (L1) is refreshed over the whole frontier; a tree has at most one root.
//! - When a leaf is superseded or archived, every summary above it, and the root, go *stale*:
//!   still readable until a replacement is sealed over the same children, then swapped in.
//!   When a leaf is forgotten, those summaries may quote it, so they are purged at once and
//!   replaced without it.
//!
//! Sealed summaries are never edited. Heights never change, so neither do on-disk paths.
//! The functions here only plan; the app executes a plan through the metadata store's atomic
//! commits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::id::{NodeId, SummaryId};
use crate::time::Timestamp;

/// The default number of children sealed under one summary.
pub const DEFAULT_BRANCH_FACTOR: u8 = 8;

/// The seal rules, parameterised by branch factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealPolicy {
    branch_factor: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("branch factor {0} is out of range; it must be between 2 and 64")]
pub struct BranchFactorOutOfRange(pub u8);

impl Default for SealPolicy {
    fn default() -> Self {
        SealPolicy { branch_factor: DEFAULT_BRANCH_FACTOR }
    }
}

/// A node on a tree's frontier (no sealed parent yet), as the store reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierNode {
    pub node: NodeId,
    /// 0 for leaves; a summary's height otherwise.
    pub height: u8,
    /// When it joined the tree: a leaf's activation or a summary's seal time. Buffers are
    /// sealed oldest first.
    pub joined_at: Timestamp,
}

/// A full buffer to seal: a new summary at `height` over `children`, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SealGroup {
    pub height: u8,
    pub children: Vec<NodeId>,
}

/// Why summaries above a leaf need replacing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaleCause {
    Superseded,
    Archived,
    Forgotten,
}

/// What to do to the summaries above a changed leaf.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Invalidation {
    /// Still readable until replaced.
    pub mark_stale: Vec<SummaryId>,
    /// Must stop being readable now (they may quote forgotten text); bodies purged.
    pub purge_now: Vec<SummaryId>,
    pub root_stale: bool,
    pub purge_root: bool,
}

/// A child of a summary being re-sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleChild {
    pub node: NodeId,
    /// False for a forgotten leaf: it drops out of the replacement.
    pub keep: bool,
}

/// A stale (or purged) sealed summary to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleSummary {
    pub id: SummaryId,
    pub height: u8,
    pub children: Vec<StaleChild>,
}

/// A child of a replacement summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "child", content = "id", rename_all = "snake_case")]
pub enum ResealChild {
    /// An existing node that stays.
    Keep(NodeId),
    /// The replacement produced by the earlier step that replaces this summary.
    ReplacementOf(SummaryId),
}

/// One step of a re-seal: retire `replaces`, and (unless `children` is empty) seal a
/// replacement at the same height over `children`, then swap parent links atomically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResealStep {
    pub replaces: SummaryId,
    pub height: u8,
    pub children: Vec<ResealChild>,
}

impl SealPolicy {
    pub fn new(branch_factor: u8) -> Result<SealPolicy, BranchFactorOutOfRange> {
        if (2..=64).contains(&branch_factor) {
            Ok(SealPolicy { branch_factor })
        } else {
            Err(BranchFactorOutOfRange(branch_factor))
        }
    }

    pub fn branch_factor(&self) -> usize {
        usize::from(self.branch_factor)
    }

    /// Orders a frontier the way buffers are sealed: by height, then oldest first.
    pub fn order_frontier(&self, frontier: &mut [FrontierNode]) {
        frontier.sort_by(|a, b| (a.height, a.joined_at, &a.node).cmp(&(b.height, b.joined_at, &b.node)));
    }

    /// The full buffers on this frontier, each to be sealed one height up. Only existing nodes
    /// are grouped; after executing these, plan again to cascade upward.
    pub fn plan_seals(&self, frontier: &[FrontierNode]) -> Vec<SealGroup> {
        let mut frontier = frontier.to_vec();
        self.order_frontier(&mut frontier);
        let mut by_height: BTreeMap<u8, Vec<NodeId>> = BTreeMap::new();
        for node in frontier {
            by_height.entry(node.height).or_default().push(node.node);
        }
        let b = self.branch_factor();
        let mut groups = Vec::new();
        for (height, nodes) in by_height {
            for chunk in nodes.chunks_exact(b) {
                groups.push(SealGroup { height: height.saturating_add(1), children: chunk.to_vec() });
            }
        }
        groups
    }

    /// The children of a fresh root over a frontier with no full buffer left: every frontier
    /// node, oldest first within each height, higher heights first. `None` for an empty tree,
    /// which has no root.
    pub fn plan_root(&self, frontier: &[FrontierNode]) -> Option<(u8, Vec<NodeId>)> {
        if frontier.is_empty() {
            return None;
        }
        let mut frontier = frontier.to_vec();
        self.order_frontier(&mut frontier);
        frontier.sort_by_key(|node| std::cmp::Reverse(node.height));
        let height = frontier[0].height.saturating_add(1);
        Some((height, frontier.into_iter().map(|n| n.node).collect()))
    }

    /// What happens to the summaries above a leaf that changed. `ancestors` are its sealed
    /// ancestors from the nearest up; `has_root` whether the tree has a root.
    pub fn invalidate(&self, cause: StaleCause, ancestors: &[SummaryId], has_root: bool) -> Invalidation {
        match cause {
            StaleCause::Forgotten => Invalidation {
                mark_stale: Vec::new(),
                purge_now: ancestors.to_vec(),
                root_stale: has_root,
                purge_root: has_root,
            },
            StaleCause::Superseded | StaleCause::Archived => Invalidation {
                mark_stale: ancestors.to_vec(),
                purge_now: Vec::new(),
                root_stale: has_root,
                purge_root: false,
            },
        }
    }

    /// Plans replacements for stale summaries, lowest first, so each parent's replacement can
    /// point at its children's replacements. A summary left with no children is retired
    /// without replacement and drops out of its parent.
    pub fn plan_reseal(&self, stale: &[StaleSummary]) -> Vec<ResealStep> {
        let mut ordered: Vec<&StaleSummary> = stale.iter().collect();
        ordered.sort_by(|a, b| (a.height, &a.id).cmp(&(b.height, &b.id)));
        ordered.dedup_by(|a, b| a.id == b.id);
        // For each summary already planned: whether it gets a replacement.
        let mut replaced: BTreeMap<SummaryId, bool> = BTreeMap::new();
        let mut steps = Vec::with_capacity(ordered.len());
        for summary in ordered {
            let children: Vec<ResealChild> = summary
                .children
                .iter()
                .filter(|child| child.keep)
                .filter_map(|child| match child.node.as_summary().and_then(|id| replaced.get(id).map(|r| (id, *r))) {
                    Some((id, true)) => Some(ResealChild::ReplacementOf(id.clone())),
                    Some((_, false)) => None,
                    None => Some(ResealChild::Keep(child.node.clone())),
                })
                .collect();
            replaced.insert(summary.id.clone(), !children.is_empty());
            steps.push(ResealStep { replaces: summary.id.clone(), height: summary.height, children });
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::LeafId;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A whole tree, simulated with nothing but the planning functions above, so the
    /// properties below test the rules and not a storage engine.
    #[derive(Debug, Default)]
    struct Sim {
        clock: i64,
        next: u64,
        /// Leaves: (member of the tree, forgotten).
        leaves: BTreeMap<LeafId, (bool, bool)>,
        /// Live summaries: height, children, stale.
        summaries: BTreeMap<SummaryId, (u8, Vec<NodeId>, bool)>,
        parent: BTreeMap<NodeId, SummaryId>,
        joined: BTreeMap<NodeId, Timestamp>,
        root: Option<(SummaryId, Vec<NodeId>)>,
        root_stale: bool,
        /// Summaries that had to stop being readable immediately.
        purged: BTreeSet<SummaryId>,
    }

    impl Sim {
        fn tick(&mut self) -> Timestamp {
            self.clock += 1;
            Timestamp::from_second(1_700_000_000 + self.clock).unwrap()
        }

        fn fresh_summary(&mut self) -> SummaryId {
            self.next += 1;
            SummaryId::parse(&format!("sum-{:06}", self.next)).unwrap()
        }

        fn add_leaf(&mut self) {
            self.next += 1;
            let id = LeafId::parse(&format!("leaf-{:06}", self.next)).unwrap();
            let at = self.tick();
            self.leaves.insert(id.clone(), (true, false));
            self.joined.insert(NodeId::Leaf(id), at);
            self.root_stale = true;
        }

        fn ancestors(&self, node: &NodeId) -> Vec<SummaryId> {
            let mut out = Vec::new();
            let mut at = node.clone();
            while let Some(parent) = self.parent.get(&at) {
                out.push(parent.clone());
                at = NodeId::Summary(parent.clone());
            }
            out
        }

        fn change_leaf(&mut self, policy: &SealPolicy, nth: usize, cause: StaleCause) {
            let live: Vec<LeafId> =
                self.leaves.iter().filter(|(_, (_, forgotten))| !forgotten).map(|(id, _)| id.clone()).collect();
            let Some(id) = live.get(nth % live.len().max(1)).cloned() else { return };
            let node = NodeId::Leaf(id.clone());
            let inv = policy.invalidate(cause, &self.ancestors(&node), self.root.is_some());
            for s in &inv.mark_stale {
                self.summaries.get_mut(s).unwrap().2 = true;
            }
            for s in &inv.purge_now {
                self.summaries.get_mut(s).unwrap().2 = true;
                self.purged.insert(s.clone());
            }
            self.root_stale |= inv.root_stale;
            if inv.purge_root {
                self.root = None;
            }
            if cause == StaleCause::Forgotten {
                self.leaves.get_mut(&id).unwrap().1 = true;
                if !self.parent.contains_key(&node) {
                    // Unsealed: it simply leaves the buffer.
                    self.joined.remove(&node);
                }
            }
        }

        fn frontier(&self) -> Vec<FrontierNode> {
            let mut out = Vec::new();
            for (id, (member, forgotten)) in &self.leaves {
                let node = NodeId::Leaf(id.clone());
                if *member && !*forgotten && !self.parent.contains_key(&node) {
                    out.push(FrontierNode { node: node.clone(), height: 0, joined_at: self.joined[&node] });
                }
            }
            for (id, (height, _, _)) in &self.summaries {
                let node = NodeId::Summary(id.clone());
                if !self.parent.contains_key(&node) {
                    out.push(FrontierNode { node: node.clone(), height: *height, joined_at: self.joined[&node] });
                }
            }
            out
        }

        /// Runs the seal job to completion: re-seal stale summaries, seal full buffers until
        /// none remain, refresh the root.
        fn run_jobs(&mut self, policy: &SealPolicy) {
            let stale: Vec<StaleSummary> = self
                .summaries
                .iter()
                .filter(|(_, (_, _, stale))| *stale)
                .map(|(id, (height, children, _))| StaleSummary {
                    id: id.clone(),
                    height: *height,
                    children: children
                        .iter()
                        .map(|c| StaleChild { node: c.clone(), keep: c.as_leaf().is_none_or(|l| !self.leaves[l].1) })
                        .collect(),
                })
                .collect();
            let mut replacement: BTreeMap<SummaryId, SummaryId> = BTreeMap::new();
            for step in policy.plan_reseal(&stale) {
                let old = NodeId::Summary(step.replaces.clone());
                let old_parent = self.parent.remove(&old);
                let (_, old_children, _) = self.summaries.remove(&step.replaces).unwrap();
                for child in &old_children {
                    self.parent.remove(child);
                }
                if step.children.is_empty() {
                    if let Some(p) = old_parent {
                        self.summaries.get_mut(&p).unwrap().1.retain(|c| c != &old);
                    }
                    self.joined.remove(&old);
                    continue;
                }
                let new_id = self.fresh_summary();
                let new = NodeId::Summary(new_id.clone());
                let children: Vec<NodeId> = step
                    .children
                    .iter()
                    .map(|c| match c {
                        ResealChild::Keep(node) => node.clone(),
                        ResealChild::ReplacementOf(id) => NodeId::Summary(replacement[id].clone()),
                    })
                    .collect();
                for child in &children {
                    self.parent.insert(child.clone(), new_id.clone());
                }
                if let Some(p) = old_parent {
                    self.parent.insert(new.clone(), p.clone());
                    for c in self.summaries.get_mut(&p).unwrap().1.iter_mut() {
                        if c == &old {
                            *c = new.clone();
                        }
                    }
                }
                let at = self.joined.remove(&old).unwrap();
                self.joined.insert(new, at);
                self.summaries.insert(new_id.clone(), (step.height, children, false));
                replacement.insert(step.replaces, new_id);
                self.root_stale = true;
            }
            // The forgotten leaves that were sealed are gone from every live summary now.
            self.purged.clear();
            loop {
                let groups = policy.plan_seals(&self.frontier());
                if groups.is_empty() {
                    break;
                }
                for group in groups {
                    let id = self.fresh_summary();
                    for child in &group.children {
                        self.parent.insert(child.clone(), id.clone());
                    }
                    let at = self.tick();
                    self.joined.insert(NodeId::Summary(id.clone()), at);
                    self.summaries.insert(id, (group.height, group.children, false));
                    self.root_stale = true;
                }
            }
            if self.root_stale || self.root.is_none() {
                self.root = policy.plan_root(&self.frontier()).map(|(_, children)| {
                    self.next += 1;
                    (SummaryId::parse(&format!("root-{}", self.next)).unwrap(), children)
                });
                self.root_stale = false;
            }
        }

        fn check(&self, policy: &SealPolicy) -> Result<(), TestCaseError> {
            let b = policy.branch_factor();
            // No full buffer is left unsealed.
            let mut per_height: BTreeMap<u8, usize> = BTreeMap::new();
            for node in self.frontier() {
                *per_height.entry(node.height).or_default() += 1;
            }
            prop_assert!(per_height.values().all(|&n| n < b), "a full buffer was left unsealed: {:?}", per_height);
            // Parent links and child lists agree; sizes and heights are right.
            for (id, (height, children, stale)) in &self.summaries {
                prop_assert!(!stale, "a stale summary survived the jobs");
                prop_assert!(!children.is_empty() && children.len() <= b);
                for child in children {
                    prop_assert_eq!(self.parent.get(child), Some(id));
                    let child_height = match child {
                        NodeId::Leaf(l) => {
                            prop_assert!(!self.leaves[l].1, "a live summary still covers a forgotten leaf");
                            0
                        }
                        NodeId::Summary(s) => self.summaries[s].0,
                    };
                    prop_assert_eq!(child_height + 1, *height);
                }
            }
            // Exactly one root over exactly the frontier, when the tree has members.
            let frontier: BTreeSet<NodeId> = self.frontier().into_iter().map(|n| n.node).collect();
            match &self.root {
                Some((_, children)) => {
                    let covered: BTreeSet<NodeId> = children.iter().cloned().collect();
                    prop_assert_eq!(covered, frontier);
                }
                None => prop_assert!(frontier.is_empty()),
            }
            // Every member leaf is reachable from the root exactly once.
            let mut reached = BTreeMap::new();
            let mut stack: Vec<NodeId> = self.root.as_ref().map(|(_, c)| c.clone()).unwrap_or_default();
            while let Some(node) = stack.pop() {
                match &node {
                    NodeId::Leaf(l) => *reached.entry(l.clone()).or_insert(0) += 1,
                    NodeId::Summary(s) => stack.extend(self.summaries[s].1.iter().cloned()),
                }
            }
            for (id, (member, forgotten)) in &self.leaves {
                let expected = usize::from(*member && !*forgotten);
                prop_assert_eq!(reached.get(id).copied().unwrap_or(0), expected, "leaf {}", id);
            }
            Ok(())
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        AddLeaves(u8),
        Change(usize, StaleCause),
        RunJobs,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (1u8..12).prop_map(Op::AddLeaves),
            2 => (any::<usize>(), prop_oneof![Just(StaleCause::Superseded), Just(StaleCause::Archived), Just(StaleCause::Forgotten)])
                .prop_map(|(n, c)| Op::Change(n, c)),
            2 => Just(Op::RunJobs),
        ]
    }

    #[test]
    fn sixty_four_leaves_make_two_levels() {
        let policy = SealPolicy::default();
        let mut sim = Sim::default();
        for _ in 0..64 {
            sim.add_leaf();
        }
        sim.run_jobs(&policy);
        let heights: Vec<u8> = sim.summaries.values().map(|(h, _, _)| *h).collect();
        assert_eq!(heights.iter().filter(|&&h| h == 1).count(), 8);
        assert_eq!(heights.iter().filter(|&&h| h == 2).count(), 1);
        assert_eq!(sim.root.as_ref().unwrap().1.len(), 1);
    }

    #[test]
    fn forgetting_purges_at_once_superseding_only_marks_stale() {
        let policy = SealPolicy::default();
        let ancestors = vec![SummaryId::parse("sum-1").unwrap(), SummaryId::parse("sum-2").unwrap()];
        let forgot = policy.invalidate(StaleCause::Forgotten, &ancestors, true);
        assert_eq!(forgot.purge_now, ancestors);
        assert!(forgot.purge_root && forgot.mark_stale.is_empty());
        let superseded = policy.invalidate(StaleCause::Superseded, &ancestors, true);
        assert_eq!(superseded.mark_stale, ancestors);
        assert!(superseded.root_stale && !superseded.purge_root && superseded.purge_now.is_empty());
    }

    #[test]
    fn branch_factor_bounds() {
        assert!(SealPolicy::new(1).is_err());
        assert!(SealPolicy::new(65).is_err());
        assert_eq!(SealPolicy::new(2).unwrap().branch_factor(), 2);
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// After any sequence of appends, supersessions, archivals and forgets followed by the
        /// seal jobs: one root over exactly the frontier, no full buffer unsealed, no stale
        /// summary left, every sealed summary has 1..=branch children one height down, no live
        /// summary covers a forgotten leaf, and every member leaf sits in the tree exactly once.
        #[test]
        fn seal_invariants(branch in 2u8..6, ops in proptest::collection::vec(op(), 1..40)) {
            let policy = SealPolicy::new(branch).unwrap();
            let mut sim = Sim::default();
            for op in ops {
                match op {
                    Op::AddLeaves(n) => (0..n).for_each(|_| sim.add_leaf()),
                    Op::Change(n, cause) => sim.change_leaf(&policy, n, cause),
                    Op::RunJobs => {
                        sim.run_jobs(&policy);
                        sim.check(&policy)?;
                    }
                }
                // Between jobs: a purged summary is never readable (only stale ones are).
                for purged in &sim.purged {
                    prop_assert!(sim.summaries.get(purged).is_none_or(|s| s.2));
                }
            }
            sim.run_jobs(&policy);
            sim.check(&policy)?;
        }
    }
}
