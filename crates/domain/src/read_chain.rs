//! `ReadChain`: the ordered namespaces a caller may read [design §read-chains], built only from a
//! [`TrustedContext`] that the host application supplies — never from ids a model names.
//!
//! | context | chain (most specific first) |
//! | --- | --- |
//! | conversation | conversation → (agent) → (project) → global |
//! | automation run | run → automation → (conversation) → (project) → global |
//! | experiment run | run → experiment@frozen → (project@frozen) → global@frozen |
//! | project | project → global |
//! | one namespace | exactly that namespace (operators and background jobs) |
//!
//! The run layer of an experiment is live (its own notes); every other layer is the snapshot
//! frozen when the experiment started [design §experiments]. A chain holds at most one run namespace — the
//! caller's own — so a run can never read a sibling run.

use serde::{Deserialize, Serialize};

use crate::id::ScopeId;
use crate::model::MemoryKind;
use crate::namespace::{Namespace, NamespaceKind};
use crate::time::Timestamp;

/// Who is reading, as established by the host application (its own session, automation or
/// experiment records), not by anything a model said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "context", rename_all = "snake_case")]
pub enum TrustedContext {
    Conversation {
        conversation: ScopeId,
        project: Option<ScopeId>,
        /// The agent (expert role) the conversation runs as; read only when agent namespaces
        /// are enabled.
        agent: Option<ScopeId>,
    },
    AutomationRun {
        run: ScopeId,
        automation: ScopeId,
        conversation: Option<ScopeId>,
        project: Option<ScopeId>,
    },
    ExperimentRun {
        run: ScopeId,
        experiment: ScopeId,
        project: Option<ScopeId>,
        /// When the experiment started; every layer but the run is frozen at this instant.
        frozen_at: Timestamp,
    },
    Project {
        project: ScopeId,
    },
    /// Exactly one namespace, nothing inherited. For operators and background jobs.
    Only {
        namespace: Namespace,
    },
}

/// Switches that change which chains may be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadChainPolicy {
    /// Agent namespaces are off by default [design §namespaces].
    pub agent_namespaces: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadChainError {
    #[error("agent namespaces are disabled; enable them in the read-chain policy to read agent:{agent}")]
    AgentNamespacesDisabled { agent: ScopeId },
}

/// One layer of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLayer {
    pub namespace: Namespace,
    /// For frozen snapshot layers: the known-time instant the layer shows.
    pub frozen_at: Option<Timestamp>,
}

/// The ordered, de-duplicated namespaces a caller may read; index 0 is the most specific.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadChain {
    layers: Vec<ChainLayer>,
}

impl ReadChain {
    /// Builds the chain for a trusted context.
    pub fn resolve(context: &TrustedContext, policy: &ReadChainPolicy) -> Result<ReadChain, ReadChainError> {
        let live = |namespace| ChainLayer { namespace, frozen_at: None };
        let mut layers = Vec::with_capacity(5);
        match context {
            TrustedContext::Conversation { conversation, project, agent } => {
                layers.push(live(Namespace::conversation(conversation.clone())));
                if let Some(agent) = agent {
                    if !policy.agent_namespaces {
                        return Err(ReadChainError::AgentNamespacesDisabled { agent: agent.clone() });
                    }
                    layers.push(live(Namespace::agent(agent.clone())));
                }
                if let Some(project) = project {
                    layers.push(live(Namespace::project(project.clone())));
                }
                layers.push(live(Namespace::global()));
            }
            TrustedContext::AutomationRun { run, automation, conversation, project } => {
                layers.push(live(Namespace::run(run.clone())));
                layers.push(live(Namespace::automation(automation.clone())));
                if let Some(conversation) = conversation {
                    layers.push(live(Namespace::conversation(conversation.clone())));
                }
                if let Some(project) = project {
                    layers.push(live(Namespace::project(project.clone())));
                }
                layers.push(live(Namespace::global()));
            }
            TrustedContext::ExperimentRun { run, experiment, project, frozen_at } => {
                let frozen = |namespace| ChainLayer { namespace, frozen_at: Some(*frozen_at) };
                layers.push(live(Namespace::run(run.clone())));
                layers.push(frozen(Namespace::experiment(experiment.clone())));
                if let Some(project) = project {
                    layers.push(frozen(Namespace::project(project.clone())));
                }
                layers.push(frozen(Namespace::global()));
            }
            TrustedContext::Project { project } => {
                layers.push(live(Namespace::project(project.clone())));
                layers.push(live(Namespace::global()));
            }
            TrustedContext::Only { namespace } => {
                if let (NamespaceKind::Agent, Some(agent)) = (namespace.kind(), namespace.scope())
                    && !policy.agent_namespaces
                {
                    return Err(ReadChainError::AgentNamespacesDisabled { agent: agent.clone() });
                }
                layers.push(live(namespace.clone()));
            }
        }
        Ok(ReadChain { layers })
    }

    pub fn layers(&self) -> &[ChainLayer] {
        &self.layers
    }

    pub fn namespaces(&self) -> impl Iterator<Item = &Namespace> {
        self.layers.iter().map(|layer| &layer.namespace)
    }

    /// The namespaces of the layers that are not frozen: those the caller sees as they are now,
    /// later changes included. An experiment run sees only its own this way; everything else
    /// it sees as of its start.
    pub fn live_namespaces(&self) -> impl Iterator<Item = &Namespace> {
        self.layers.iter().filter(|layer| layer.frozen_at.is_none()).map(|layer| &layer.namespace)
    }

    pub fn contains(&self, namespace: &Namespace) -> bool {
        self.namespaces().any(|ns| ns == namespace)
    }

    /// Whether this chain may read everything another caller's chain could: every one of
    /// `namespaces` is in it. What a record of that caller's retrieval may be shown under, since
    /// it names candidates from all of its layers.
    pub fn covers<'a>(&self, namespaces: impl IntoIterator<Item = &'a Namespace>) -> bool {
        namespaces.into_iter().all(|namespace| self.contains(namespace))
    }

    /// The position of a namespace in the chain: 0 is the most specific.
    pub fn precedence(&self, namespace: &Namespace) -> Option<usize> {
        self.namespaces().position(|ns| ns == namespace)
    }

    /// The namespace new memories from this context are written to: the most specific layer.
    pub fn write_namespace(&self) -> &Namespace {
        // A chain always has at least one layer.
        &self.layers[0].namespace
    }

    /// Decides which of two conflicting memories, both readable through this chain, applies
    /// [design §layer-precedence]: the more specific layer wins, except that a machine-produced layer (run,
    /// automation, experiment, agent) never overrides a constraint from a human-governed
    /// layer (conversation, project, global). Returns `None` if either namespace is not in the
    /// chain. The loser is never modified: the verdict only marks the pack.
    pub fn resolve_conflict(&self, a: (&Namespace, MemoryKind), b: (&Namespace, MemoryKind)) -> Option<LayerVerdict> {
        let (pa, pb) = (self.precedence(a.0)?, self.precedence(b.0)?);
        if pa == pb {
            return Some(LayerVerdict { winner: a.0.clone(), loser: b.0.clone(), rule: ConflictRule::SameLayer });
        }
        let (specific, broad) = if pa < pb { (a, b) } else { (b, a) };
        let protected = broad.1 == MemoryKind::Constraint
            && broad.0.kind().is_human_governed()
            && !specific.0.kind().is_human_governed();
        let verdict = if protected {
            LayerVerdict {
                winner: broad.0.clone(),
                loser: specific.0.clone(),
                rule: ConflictRule::TrustedConstraintHolds,
            }
        } else {
            LayerVerdict {
                winner: specific.0.clone(),
                loser: broad.0.clone(),
                rule: ConflictRule::SpecificOverridesBroad,
            }
        };
        Some(verdict)
    }
}

/// Which layer's memory applies when two conflict, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerVerdict {
    pub winner: Namespace,
    pub loser: Namespace,
    pub rule: ConflictRule,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictRule {
    /// Both in one namespace: no layer precedence applies; resolution is by validity and review.
    SameLayer,
    SpecificOverridesBroad,
    TrustedConstraintHolds,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{proptest_config, timestamp};
    use proptest::prelude::*;

    fn id(s: &str) -> ScopeId {
        ScopeId::parse(s).unwrap()
    }

    fn render(chain: &ReadChain) -> String {
        chain
            .layers()
            .iter()
            .map(|l| match l.frozen_at {
                Some(t) => format!("{}@{}", l.namespace, t),
                None => l.namespace.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" -> ")
    }

    #[test]
    fn a_chain_covers_another_only_when_it_holds_every_layer() {
        let policy = ReadChainPolicy::default();
        let resolve = |project: Option<&str>| {
            let context =
                TrustedContext::Conversation { conversation: id("c1"), project: project.map(id), agent: None };
            ReadChain::resolve(&context, &policy).unwrap()
        };
        let (with_project, without) = (resolve(Some("p1")), resolve(None));
        assert!(with_project.covers(without.namespaces()));
        assert!(!without.covers(with_project.namespaces()), "conversation:c1 alone cannot read project:p1");
        assert!(without.covers([]));
    }

    #[test]
    fn chains_for_every_context() {
        let policy = ReadChainPolicy { agent_namespaces: true };
        let t = Timestamp::from_second(1_700_000_000).unwrap();
        let contexts = [
            TrustedContext::Conversation { conversation: id("c1"), project: Some(id("p1")), agent: None },
            TrustedContext::Conversation { conversation: id("c1"), project: None, agent: Some(id("coder")) },
            TrustedContext::AutomationRun {
                run: id("r1"),
                automation: id("a1"),
                conversation: Some(id("c1")),
                project: Some(id("p1")),
            },
            TrustedContext::ExperimentRun {
                run: id("r1"),
                experiment: id("e1"),
                project: Some(id("p1")),
                frozen_at: t,
            },
            TrustedContext::Project { project: id("p1") },
            TrustedContext::Only { namespace: Namespace::run(id("r9")) },
        ];
        let rendered: Vec<String> = contexts.iter().map(|c| render(&ReadChain::resolve(c, &policy).unwrap())).collect();
        insta::assert_snapshot!(rendered.join("\n"));
    }

    #[test]
    fn an_experiment_run_sees_only_its_own_layer_live() {
        let ctx = TrustedContext::ExperimentRun {
            run: id("r3"),
            experiment: id("e1"),
            project: Some(id("p1")),
            frozen_at: Timestamp::from_second(1_780_000_000).unwrap(),
        };
        let chain = ReadChain::resolve(&ctx, &ReadChainPolicy::default()).unwrap();
        assert!(chain.namespaces().count() > 1);
        assert_eq!(chain.live_namespaces().collect::<Vec<_>>(), [&Namespace::run(id("r3"))]);
        let ctx = TrustedContext::Project { project: id("p1") };
        let chain = ReadChain::resolve(&ctx, &ReadChainPolicy::default()).unwrap();
        assert!(chain.live_namespaces().eq(chain.namespaces()));
    }

    #[test]
    fn agent_namespaces_are_off_by_default() {
        let ctx = TrustedContext::Conversation { conversation: id("c1"), project: None, agent: Some(id("coder")) };
        let err = ReadChain::resolve(&ctx, &ReadChainPolicy::default()).unwrap_err();
        assert!(err.to_string().contains("agent namespaces are disabled"));
    }

    #[test]
    fn run_layers_never_override_trusted_constraints() {
        let ctx = TrustedContext::AutomationRun {
            run: id("r1"),
            automation: id("a1"),
            conversation: None,
            project: Some(id("p1")),
        };
        let chain = ReadChain::resolve(&ctx, &ReadChainPolicy::default()).unwrap();
        let run = Namespace::run(id("r1"));
        let project = Namespace::project(id("p1"));
        let v = chain.resolve_conflict((&run, MemoryKind::Fact), (&project, MemoryKind::Constraint)).unwrap();
        assert_eq!((v.winner, v.rule), (project.clone(), ConflictRule::TrustedConstraintHolds));
        let v = chain.resolve_conflict((&run, MemoryKind::Fact), (&project, MemoryKind::Fact)).unwrap();
        assert_eq!((v.winner, v.rule), (run, ConflictRule::SpecificOverridesBroad));
        let outsider = Namespace::project(id("p2"));
        assert!(chain.resolve_conflict((&outsider, MemoryKind::Fact), (&project, MemoryKind::Fact)).is_none());
    }

    fn scope() -> impl Strategy<Value = ScopeId> {
        "[a-z][a-z0-9]{0,3}".prop_map(|s| ScopeId::parse(&s).unwrap())
    }

    fn context() -> impl Strategy<Value = TrustedContext> {
        prop_oneof![
            (scope(), proptest::option::of(scope()), proptest::option::of(scope())).prop_map(
                |(conversation, project, agent)| TrustedContext::Conversation { conversation, project, agent }
            ),
            (scope(), scope(), proptest::option::of(scope()), proptest::option::of(scope())).prop_map(
                |(run, automation, conversation, project)| TrustedContext::AutomationRun {
                    run,
                    automation,
                    conversation,
                    project
                }
            ),
            (scope(), scope(), proptest::option::of(scope()), timestamp()).prop_map(
                |(run, experiment, project, frozen_at)| TrustedContext::ExperimentRun {
                    run,
                    experiment,
                    project,
                    frozen_at
                }
            ),
            scope().prop_map(|project| TrustedContext::Project { project }),
        ]
    }

    fn own_run(context: &TrustedContext) -> Option<Namespace> {
        match context {
            TrustedContext::AutomationRun { run, .. } | TrustedContext::ExperimentRun { run, .. } => {
                Some(Namespace::run(run.clone()))
            }
            _ => None,
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// A read chain never contains a sibling run: the only run namespace in it is the
        /// caller's own. Layers run from specific to broad, end at global, never repeat, and
        /// only experiment chains are frozen — every layer but the run.
        #[test]
        fn chain_invariants(context in context(), agents in any::<bool>(), sibling in scope()) {
            let policy = ReadChainPolicy { agent_namespaces: agents };
            let chain = match ReadChain::resolve(&context, &policy) {
                Ok(chain) => chain,
                Err(ReadChainError::AgentNamespacesDisabled { .. }) => {
                    prop_assert!(!agents);
                    return Ok(());
                }
            };
            let runs: Vec<&Namespace> = chain.namespaces().filter(|ns| ns.kind() == NamespaceKind::Run).collect();
            prop_assert!(runs.len() <= 1);
            prop_assert_eq!(runs.first().cloned().cloned(), own_run(&context));
            let sibling_run = Namespace::run(sibling);
            if Some(&sibling_run) != own_run(&context).as_ref() {
                prop_assert!(!chain.contains(&sibling_run));
            }
            prop_assert_eq!(chain.layers().last().map(|l| l.namespace.clone()), Some(Namespace::global()));
            let specificity: Vec<u8> = chain.namespaces().map(|ns| ns.kind().specificity()).collect();
            prop_assert!(specificity.windows(2).all(|w| w[0] >= w[1]), "{:?}", specificity);
            let mut seen = std::collections::BTreeSet::new();
            prop_assert!(chain.namespaces().all(|ns| seen.insert(ns.clone())));
            for (i, layer) in chain.layers().iter().enumerate() {
                let frozen_expected = matches!(context, TrustedContext::ExperimentRun { .. }) && i > 0;
                prop_assert_eq!(layer.frozen_at.is_some(), frozen_expected);
            }
            prop_assert_eq!(chain.write_namespace(), &chain.layers()[0].namespace);
        }

        /// Conflict verdicts do not depend on argument order.
        #[test]
        fn conflict_verdicts_are_symmetric(context in context(),
                                           i in 0usize..5, j in 0usize..5,
                                           ka in proptest::sample::select(MemoryKind::ALL.to_vec()),
                                           kb in proptest::sample::select(MemoryKind::ALL.to_vec())) {
            let chain = ReadChain::resolve(&context, &ReadChainPolicy { agent_namespaces: true }).unwrap();
            let layers: Vec<Namespace> = chain.namespaces().cloned().collect();
            let (a, b) = (&layers[i % layers.len()], &layers[j % layers.len()]);
            if a == b { return Ok(()); }
            let one = chain.resolve_conflict((a, ka), (b, kb)).unwrap();
            let two = chain.resolve_conflict((b, kb), (a, ka)).unwrap();
            prop_assert_eq!(one.winner, two.winner);
        }
    }
}
