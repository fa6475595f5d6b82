//! The one predicate that decides whether a node may be retrieved [design §filter-first].
//!
//! Backends push this filter down into their queries (SQL `WHERE`, LanceDB predicates) so that
//! nothing outside it is ever searched; the conformance suite checks each backend's pushdown
//! against [`VisibilityFilter::admits`] on random data, so the rule is written once, here.

use serde::{Deserialize, Serialize};

use crate::lifecycle::LeafStatus;
use crate::model::{Category, LeafRecord, MemoryKind, SummaryRecord, SummaryStatus, TreeId};
use crate::namespace::Namespace;
use crate::read_chain::ReadChain;
use crate::sensitivity::Sensitivity;
use crate::time::{KnownSpan, Timestamp, Validity};

/// Leaves and summaries share indexes; this says which one a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Leaf,
    Summary,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Leaf => "leaf",
            NodeKind::Summary => "summary",
        }
    }

    pub fn parse(value: &str) -> Option<NodeKind> {
        [NodeKind::Leaf, NodeKind::Summary].into_iter().find(|kind| kind.as_str() == value)
    }
}

/// A node's retrieval state, derived from its status. Indexes store this rather than the
/// status so one column serves leaves and summaries alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    /// An active leaf, or a current or stale (still readable) summary.
    Current,
    /// A superseded leaf: history, visible only to `as_of` questions.
    Superseded,
    /// Archived: once current, now set aside. Visible only through frozen snapshots that were
    /// taken while it was current.
    Archived,
    /// Candidates, rejected leaves and retired summaries: never retrieved.
    Hidden,
    /// Forgotten: never retrieved, by anyone, through any snapshot.
    Forgotten,
}

impl NodeState {
    pub fn of_leaf(status: LeafStatus) -> NodeState {
        match status {
            LeafStatus::Active => NodeState::Current,
            LeafStatus::Superseded => NodeState::Superseded,
            LeafStatus::Archived => NodeState::Archived,
            LeafStatus::Candidate | LeafStatus::Rejected => NodeState::Hidden,
            LeafStatus::Tombstone => NodeState::Forgotten,
        }
    }

    pub fn of_summary(status: SummaryStatus) -> NodeState {
        match status {
            SummaryStatus::Current | SummaryStatus::Stale => NodeState::Current,
            SummaryStatus::Purged | SummaryStatus::Retired => NodeState::Hidden,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Current => "current",
            NodeState::Superseded => "superseded",
            NodeState::Archived => "archived",
            NodeState::Hidden => "hidden",
            NodeState::Forgotten => "forgotten",
        }
    }

    pub fn parse(value: &str) -> Option<NodeState> {
        [NodeState::Current, NodeState::Superseded, NodeState::Archived, NodeState::Hidden, NodeState::Forgotten]
            .into_iter()
            .find(|state| state.as_str() == value)
    }
}

/// What the filter looks at for one node. Indexes keep exactly these columns next to the text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    pub node: NodeKind,
    pub namespace: Namespace,
    pub category: Category,
    pub tree_id: TreeId,
    /// Leaves only.
    pub kind: Option<MemoryKind>,
    pub state: NodeState,
    pub validity: Validity,
    pub known: KnownSpan,
    pub expires_at: Option<Timestamp>,
    pub sensitivity: Sensitivity,
    /// The time the node is about: a leaf's `observed_at`; a summary's time range.
    pub time_start: Timestamp,
    pub time_end: Timestamp,
}

impl NodeFacts {
    pub fn of_leaf(leaf: &LeafRecord) -> NodeFacts {
        NodeFacts {
            node: NodeKind::Leaf,
            namespace: leaf.namespace.clone(),
            category: leaf.category,
            tree_id: leaf.tree_id.clone(),
            kind: Some(leaf.kind),
            state: NodeState::of_leaf(leaf.status),
            validity: leaf.validity,
            known: leaf.known,
            expires_at: leaf.expires_at,
            sensitivity: leaf.sensitivity,
            time_start: leaf.observed_at,
            time_end: leaf.observed_at,
        }
    }

    pub fn of_summary(summary: &SummaryRecord) -> NodeFacts {
        NodeFacts {
            node: NodeKind::Summary,
            namespace: summary.namespace.clone(),
            category: summary.category,
            tree_id: summary.tree_id.clone(),
            kind: None,
            state: NodeState::of_summary(summary.status),
            validity: Validity::ALWAYS,
            known: KnownSpan { known_from: Some(summary.sealed_at), known_until: summary.retired_at },
            expires_at: None,
            sensitivity: summary.sensitivity,
            time_start: summary.time_range_start.unwrap_or(summary.sealed_at),
            time_end: summary.time_range_end.unwrap_or(summary.sealed_at),
        }
    }
}

/// One readable namespace, optionally frozen at a known-time instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerFilter {
    pub namespace: Namespace,
    pub frozen_at: Option<Timestamp>,
}

/// Layers of a filter that see the same instants (see [`VisibilityFilter::layer_groups`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerGroup<'a> {
    pub frozen_at: Option<Timestamp>,
    /// The valid-time instant these layers are asked about.
    pub as_of: Timestamp,
    pub namespaces: Vec<&'a Namespace>,
}

/// Everything a retrieval may see, resolved before any candidate is fetched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisibilityFilter {
    pub layers: Vec<LayerFilter>,
    /// The present, for expiry. Set by the app from its clock.
    pub now: Timestamp,
    /// A valid-time instant asked about. `None` means "now": only current memories. `Some`
    /// asks about the past: superseded leaves that were valid then are included.
    pub as_of: Option<Timestamp>,
    pub include_restricted: bool,
    pub node_kinds: Vec<NodeKind>,
    /// Empty means every category.
    pub categories: Vec<Category>,
    pub tree: Option<TreeId>,
    /// Empty means every kind; when set, summaries (which have no kind) are excluded.
    pub kinds: Vec<MemoryKind>,
    /// Only nodes whose time overlaps `[start, end]`.
    pub time_range: Option<(Option<Timestamp>, Option<Timestamp>)>,
}

impl VisibilityFilter {
    /// The current leaves of one namespace as a write looks among them (dedup, reconciliation,
    /// re-filing, consolidation): now, no frozen layer, every category and tree, restricted
    /// ones only when asked.
    pub fn current_leaves_of(namespace: &Namespace, now: Timestamp, include_restricted: bool) -> VisibilityFilter {
        VisibilityFilter {
            layers: vec![LayerFilter { namespace: namespace.clone(), frozen_at: None }],
            now,
            as_of: None,
            include_restricted,
            node_kinds: vec![NodeKind::Leaf],
            categories: Vec::new(),
            tree: None,
            kinds: Vec::new(),
            time_range: None,
        }
    }

    /// The default filter for a read chain: current leaves and summaries, every category, no
    /// restricted memories.
    pub fn for_chain(chain: &ReadChain, now: Timestamp) -> VisibilityFilter {
        VisibilityFilter {
            layers: chain
                .layers()
                .iter()
                .map(|layer| LayerFilter { namespace: layer.namespace.clone(), frozen_at: layer.frozen_at })
                .collect(),
            now,
            as_of: None,
            include_restricted: false,
            node_kinds: vec![NodeKind::Leaf, NodeKind::Summary],
            categories: Vec::new(),
            tree: None,
            kinds: Vec::new(),
            time_range: None,
        }
    }

    pub fn layer(&self, namespace: &Namespace) -> Option<&LayerFilter> {
        self.layers.iter().find(|layer| &layer.namespace == namespace)
    }

    /// The valid-time instant used for a layer: the query's `as_of`, else the layer's freeze
    /// instant, else now.
    pub fn effective_as_of(&self, layer: &LayerFilter) -> Timestamp {
        self.as_of.or(layer.frozen_at).unwrap_or(self.now)
    }

    /// The layers grouped by the instants they see — freeze instant and effective `as_of` —
    /// in chain order: layers in one group share every time condition, so a backend can test
    /// their namespaces together (usually the whole chain is one group).
    pub fn layer_groups(&self) -> Vec<LayerGroup<'_>> {
        let mut groups: Vec<LayerGroup<'_>> = Vec::new();
        for layer in &self.layers {
            let as_of = self.effective_as_of(layer);
            match groups.iter_mut().find(|g| g.frozen_at == layer.frozen_at && g.as_of == as_of) {
                Some(group) => group.namespaces.push(&layer.namespace),
                None => {
                    groups.push(LayerGroup { frozen_at: layer.frozen_at, as_of, namespaces: vec![&layer.namespace] })
                }
            }
        }
        groups
    }

    /// Whether a caller reading through this filter may open a node by its id (an agent's
    /// `memory_read`, the target of a correction): what it could retrieve, plus the superseded
    /// versions of its memories, since history stays inspectable. Never candidates, rejected or
    /// forgotten nodes, restricted ones (unless enabled), expired ones, or anything a frozen
    /// layer did not see.
    pub fn opens_by_id(&self, facts: &NodeFacts) -> bool {
        if facts.state != NodeState::Superseded {
            return self.admits(facts);
        }
        let as_current = NodeFacts { state: NodeState::Current, validity: Validity::ALWAYS, ..facts.clone() };
        match self.layer(&facts.namespace) {
            // A frozen layer decides by what was current when it froze, whatever the state now.
            Some(layer) if layer.frozen_at.is_some() => self.admits(facts),
            _ => self.admits(&as_current),
        }
    }

    /// The node states a layer shows: the current ones; with `as_of`, the superseded too (the
    /// past is asked about); in a frozen layer anything that was ever current, which the caller
    /// narrows to what was current when the layer froze (`KnownSpan::was_current_at`). Hidden
    /// and forgotten nodes never. Backends write their state conditions from this.
    pub fn visible_states(&self, frozen: bool) -> &'static [NodeState] {
        if frozen {
            &[NodeState::Current, NodeState::Superseded, NodeState::Archived]
        } else if self.as_of.is_some() {
            &[NodeState::Current, NodeState::Superseded]
        } else {
            &[NodeState::Current]
        }
    }

    /// [`visible_states`](Self::visible_states) as the leaf statuses stored for them.
    pub fn visible_leaf_statuses(&self, frozen: bool) -> Vec<LeafStatus> {
        let states = self.visible_states(frozen);
        LeafStatus::ALL.into_iter().filter(|status| states.contains(&NodeState::of_leaf(*status))).collect()
    }

    /// Whether a node may be retrieved under this filter. Scope first: a node outside the
    /// layers is refused before anything else is looked at.
    pub fn admits(&self, facts: &NodeFacts) -> bool {
        let Some(layer) = self.layer(&facts.namespace) else {
            return false;
        };
        if !self.node_kinds.contains(&facts.node) {
            return false;
        }
        // A frozen layer shows what was current when it froze, whatever happened since.
        let state_ok = self.visible_states(layer.frozen_at.is_some()).contains(&facts.state)
            && layer.frozen_at.is_none_or(|frozen_at| facts.known.was_current_at(frozen_at));
        if !state_ok {
            return false;
        }
        if !facts.validity.contains(self.effective_as_of(layer)) {
            return false;
        }
        if facts.expires_at.is_some_and(|expires| expires <= self.now) {
            return false;
        }
        if !facts.sensitivity.readable_with(self.include_restricted) {
            return false;
        }
        if !self.categories.is_empty() && !self.categories.contains(&facts.category) {
            return false;
        }
        if self.tree.as_ref().is_some_and(|tree| tree != &facts.tree_id) {
            return false;
        }
        if !self.kinds.is_empty() && !facts.kind.is_some_and(|kind| self.kinds.contains(&kind)) {
            return false;
        }
        if let Some((start, end)) = self.time_range
            && (start.is_some_and(|start| facts.time_end < start) || end.is_some_and(|end| facts.time_start > end))
        {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ScopeId;
    use crate::read_chain::{ReadChainPolicy, TrustedContext};
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn facts(namespace: Namespace, state: NodeState) -> NodeFacts {
        NodeFacts {
            node: NodeKind::Leaf,
            namespace,
            category: Category::Interaction,
            tree_id: TreeId::uncategorized(Category::Interaction),
            kind: Some(MemoryKind::Fact),
            state,
            validity: Validity::ALWAYS,
            known: KnownSpan::from(ts(100)),
            expires_at: None,
            sensitivity: Sensitivity::Normal,
            time_start: ts(100),
            time_end: ts(100),
        }
    }

    fn chain() -> ReadChain {
        ReadChain::resolve(
            &TrustedContext::Conversation {
                conversation: ScopeId::parse("c1").unwrap(),
                project: Some(ScopeId::parse("p1").unwrap()),
                agent: None,
            },
            &ReadChainPolicy::default(),
        )
        .unwrap()
    }

    #[test]
    fn scope_status_validity_expiry_sensitivity() {
        let filter = VisibilityFilter::for_chain(&chain(), ts(1000));
        let project = Namespace::project(ScopeId::parse("p1").unwrap());
        let other = Namespace::project(ScopeId::parse("p2").unwrap());
        assert!(filter.admits(&facts(project.clone(), NodeState::Current)));
        assert!(!filter.admits(&facts(other, NodeState::Current)), "outside the chain");
        for hidden in [NodeState::Hidden, NodeState::Forgotten, NodeState::Archived, NodeState::Superseded] {
            assert!(!filter.admits(&facts(project.clone(), hidden)), "{hidden:?}");
        }
        let mut expired = facts(project.clone(), NodeState::Current);
        expired.expires_at = Some(ts(999));
        assert!(!filter.admits(&expired));
        let mut restricted = facts(project.clone(), NodeState::Current);
        restricted.sensitivity = Sensitivity::Restricted;
        assert!(!filter.admits(&restricted));
        assert!(VisibilityFilter { include_restricted: true, ..filter.clone() }.admits(&restricted));
        // History on request: a superseded fact valid at `as_of` comes back.
        let mut old = facts(project, NodeState::Superseded);
        old.validity = Validity::new(Some(ts(0)), Some(ts(500))).unwrap();
        assert!(!filter.admits(&old));
        assert!(VisibilityFilter { as_of: Some(ts(400)), ..filter.clone() }.admits(&old));
        assert!(!VisibilityFilter { as_of: Some(ts(600)), ..filter }.admits(&old));
    }

    #[test]
    fn opening_by_id_adds_history_and_nothing_else() {
        let filter = VisibilityFilter::for_chain(&chain(), ts(1000));
        let project = Namespace::project(ScopeId::parse("p1").unwrap());
        let mut old = facts(project.clone(), NodeState::Superseded);
        old.validity = Validity::new(Some(ts(0)), Some(ts(500))).unwrap();
        assert!(filter.opens_by_id(&old), "a replaced version can be read by id");
        assert!(filter.opens_by_id(&facts(project.clone(), NodeState::Current)));
        for never in [NodeState::Hidden, NodeState::Forgotten, NodeState::Archived] {
            assert!(!filter.opens_by_id(&facts(project.clone(), never)), "{never:?}");
        }
        let mut restricted = old.clone();
        restricted.sensitivity = Sensitivity::Restricted;
        assert!(!filter.opens_by_id(&restricted));
        assert!(!filter.opens_by_id(&facts(Namespace::project(ScopeId::parse("p2").unwrap()), NodeState::Current)));
    }

    #[test]
    fn frozen_layers_see_what_was_current_when_frozen() {
        let run = ScopeId::parse("r1").unwrap();
        let chain = ReadChain::resolve(
            &TrustedContext::ExperimentRun {
                run,
                experiment: ScopeId::parse("e1").unwrap(),
                project: Some(ScopeId::parse("p1").unwrap()),
                frozen_at: ts(500),
            },
            &ReadChainPolicy::default(),
        )
        .unwrap();
        let filter = VisibilityFilter::for_chain(&chain, ts(1000));
        let project = Namespace::project(ScopeId::parse("p1").unwrap());
        // Superseded after the freeze: the run still sees it.
        let mut later_superseded = facts(project.clone(), NodeState::Superseded);
        later_superseded.known = KnownSpan::from(ts(100)).closed_at(ts(700));
        assert!(filter.admits(&later_superseded));
        // Learned after the freeze: invisible to the run.
        let mut learned_later = facts(project.clone(), NodeState::Current);
        learned_later.known = KnownSpan::from(ts(600));
        assert!(!filter.admits(&learned_later));
        // Forgotten after the freeze: forget wins over every snapshot.
        let mut forgotten = facts(project, NodeState::Forgotten);
        forgotten.known = KnownSpan::from(ts(100)).closed_at(ts(700));
        assert!(!filter.admits(&forgotten));
    }

    fn version_chain(starts: &[i64]) -> Vec<crate::model::LeafRecord> {
        use crate::id::LeafId;
        let base = crate::model::tests::leaf_record("leaf-0", ts(starts[0]));
        let mut chain = vec![base];
        for (i, start) in starts.iter().enumerate().skip(1) {
            let mut next = crate::model::tests::leaf_record(&format!("leaf-{i}"), ts(*start));
            next.supersedes = Some(chain[i - 1].id.clone());
            let previous = chain[i - 1]
                .superseded_by(&LeafId::parse(&format!("leaf-{i}")).unwrap(), ts(*start), ts(*start))
                .unwrap();
            chain[i - 1] = previous;
            next.known = KnownSpan::from(ts(*start));
            chain.push(next);
        }
        chain
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Whatever the filter, a node outside its layers, forgotten, hidden or archived is never
        /// admitted, and a restricted one only when restricted reads are enabled.
        #[test]
        fn never_outside_scope_never_hidden(state in proptest::sample::select(vec![
                NodeState::Current, NodeState::Superseded, NodeState::Archived, NodeState::Hidden, NodeState::Forgotten]),
            inside in any::<bool>(), as_of in proptest::option::of(0i64..2000), restricted in any::<bool>(),
            sensitivity in proptest::sample::select(vec![Sensitivity::Normal, Sensitivity::Sensitive, Sensitivity::Restricted])) {
            let mut filter = VisibilityFilter::for_chain(&chain(), ts(1000));
            filter.as_of = as_of.map(ts);
            filter.include_restricted = restricted;
            let namespace = if inside { Namespace::global() } else { Namespace::project(ScopeId::parse("elsewhere").unwrap()) };
            let mut node = facts(namespace, state);
            node.sensitivity = sensitivity;
            let admitted = filter.admits(&node);
            if !inside || matches!(state, NodeState::Hidden | NodeState::Forgotten | NodeState::Archived) {
                prop_assert!(!admitted);
            }
            if sensitivity == Sensitivity::Restricted && !restricted {
                prop_assert!(!admitted);
            }
        }

        /// Along a chain of versions, each superseding the last: with no `as_of` only the
        /// newest is admitted; with an `as_of`, exactly the version valid then (none before the
        /// first began).
        #[test]
        fn as_of_selects_the_version_valid_then(gaps in proptest::collection::vec(1i64..500, 1..6), probe in 0i64..4000) {
            let mut starts = vec![100i64];
            for gap in &gaps {
                starts.push(starts.last().unwrap() + gap);
            }
            let versions = version_chain(&starts);
            let now = ts(10_000);
            let filter = VisibilityFilter::for_chain(&chain(), now);
            let current: Vec<usize> = (0..versions.len()).filter(|&i| filter.admits(&NodeFacts::of_leaf(&versions[i]))).collect();
            prop_assert_eq!(current, vec![versions.len() - 1]);

            let past = VisibilityFilter { as_of: Some(ts(probe)), ..filter };
            let admitted: Vec<usize> = (0..versions.len()).filter(|&i| past.admits(&NodeFacts::of_leaf(&versions[i]))).collect();
            let expected: Vec<usize> = match starts.iter().rposition(|&start| start <= probe) {
                Some(i) => vec![i],
                None => vec![],
            };
            prop_assert_eq!(admitted, expected);
        }
    }
}
