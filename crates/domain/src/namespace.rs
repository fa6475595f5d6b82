//! Namespaces: the isolation and permission boundaries every memory node lives in [design §namespaces].
//!
//! A namespace is not a search tag. Every node belongs to exactly one namespace, and a caller
//! reads only the namespaces of its [`ReadChain`](crate::read_chain::ReadChain), which is built
//! from a trusted context and never from ids a model supplies.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::{IdError, ScopeId};

/// The kinds of namespace [design §namespaces]. How narrow each is: [`NamespaceKind::specificity`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamespaceKind {
    Global,
    Project,
    Conversation,
    Automation,
    Experiment,
    Run,
    /// An expert's or role's own experience. Off by default [design §namespaces]; a read chain includes
    /// it only when the chain policy enables agent namespaces.
    Agent,
}

impl NamespaceKind {
    pub const ALL: [NamespaceKind; 7] = [
        NamespaceKind::Global,
        NamespaceKind::Project,
        NamespaceKind::Conversation,
        NamespaceKind::Automation,
        NamespaceKind::Experiment,
        NamespaceKind::Run,
        NamespaceKind::Agent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NamespaceKind::Global => "global",
            NamespaceKind::Project => "project",
            NamespaceKind::Conversation => "conversation",
            NamespaceKind::Automation => "automation",
            NamespaceKind::Experiment => "experiment",
            NamespaceKind::Run => "run",
            NamespaceKind::Agent => "agent",
        }
    }

    pub fn parse(value: &str) -> Option<NamespaceKind> {
        NamespaceKind::ALL.into_iter().find(|kind| kind.as_str() == value)
    }

    /// How narrow a namespace of this kind is: a higher number is more specific. A more specific
    /// layer wins over a broader one on conflict [design §layer-precedence].
    pub fn specificity(self) -> u8 {
        match self {
            NamespaceKind::Global => 0,
            NamespaceKind::Project => 1,
            // An agent's experience spans conversations but is narrower than a project's.
            NamespaceKind::Agent => 2,
            NamespaceKind::Conversation => 3,
            NamespaceKind::Experiment => 3,
            NamespaceKind::Automation => 3,
            NamespaceKind::Run => 4,
        }
    }

    /// Whether memories here are produced by people (or confirmed by them) rather than by
    /// automation. Machine-produced layers never override a trusted layer's constraints.
    pub fn is_human_governed(self) -> bool {
        matches!(self, NamespaceKind::Global | NamespaceKind::Project | NamespaceKind::Conversation)
    }
}

impl fmt::Display for NamespaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One namespace: `global`, or a kind with the host's id, e.g. `project:alpha`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Namespace {
    kind: NamespaceKind,
    // Invariant: `None` exactly when `kind` is `Global`.
    scope: Option<ScopeId>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    #[error(
        "unknown namespace kind {kind:?} in {value:?}; expected one of global, project, conversation, automation, experiment, run, agent"
    )]
    UnknownKind { kind: String, value: String },
    #[error("namespace {value:?} needs an id: write it as \"{kind}:<id>\"")]
    MissingId { kind: NamespaceKind, value: String },
    #[error("the global namespace takes no id (got {value:?})")]
    GlobalWithId { value: String },
    #[error(transparent)]
    Id(#[from] IdError),
}

impl Namespace {
    pub fn global() -> Namespace {
        Namespace { kind: NamespaceKind::Global, scope: None }
    }

    /// A scoped namespace. Fails for `Global`, which has no id.
    pub fn scoped(kind: NamespaceKind, scope: ScopeId) -> Result<Namespace, NamespaceError> {
        if kind == NamespaceKind::Global {
            return Err(NamespaceError::GlobalWithId { value: format!("global:{scope}") });
        }
        Ok(Namespace { kind, scope: Some(scope) })
    }

    pub fn project(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Project, scope: Some(scope) }
    }

    pub fn conversation(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Conversation, scope: Some(scope) }
    }

    pub fn automation(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Automation, scope: Some(scope) }
    }

    pub fn experiment(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Experiment, scope: Some(scope) }
    }

    pub fn run(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Run, scope: Some(scope) }
    }

    pub fn agent(scope: ScopeId) -> Namespace {
        Namespace { kind: NamespaceKind::Agent, scope: Some(scope) }
    }

    pub fn kind(&self) -> NamespaceKind {
        self.kind
    }

    pub fn scope(&self) -> Option<&ScopeId> {
        self.scope.as_ref()
    }

    /// Parses `global` or `<kind>:<id>`.
    pub fn parse(value: &str) -> Result<Namespace, NamespaceError> {
        let (kind_str, id) = match value.split_once(':') {
            Some((kind, id)) => (kind, Some(id)),
            None => (value, None),
        };
        let kind = NamespaceKind::parse(kind_str)
            .ok_or_else(|| NamespaceError::UnknownKind { kind: kind_str.to_owned(), value: value.to_owned() })?;
        match (kind, id) {
            (NamespaceKind::Global, None) => Ok(Namespace::global()),
            (NamespaceKind::Global, Some(_)) => Err(NamespaceError::GlobalWithId { value: value.to_owned() }),
            (kind, None) => Err(NamespaceError::MissingId { kind, value: value.to_owned() }),
            (kind, Some(id)) => Namespace::scoped(kind, ScopeId::parse(id)?),
        }
    }

    /// The directory name used for this namespace under `<root>/memory/`. It is the display form
    /// (`project:alpha`), which is a single safe segment because kinds are fixed words and scope
    /// ids are validated.
    pub fn path_segment(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scope {
            None => f.write_str(self.kind.as_str()),
            Some(scope) => write!(f, "{}:{}", self.kind.as_str(), scope),
        }
    }
}

impl fmt::Debug for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Namespace({self})")
    }
}

impl FromStr for Namespace {
    type Err = NamespaceError;
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Namespace::parse(value)
    }
}

impl Serialize for Namespace {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Namespace {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Namespace::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn parses_every_kind() {
        assert_eq!(Namespace::parse("global").unwrap(), Namespace::global());
        let ns = Namespace::parse("project:alpha").unwrap();
        assert_eq!(ns.kind(), NamespaceKind::Project);
        assert_eq!(ns.to_string(), "project:alpha");
        for kind in NamespaceKind::ALL.into_iter().filter(|k| *k != NamespaceKind::Global) {
            let text = format!("{kind}:x-1");
            assert_eq!(Namespace::parse(&text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn refuses_bad_namespaces_with_clear_errors() {
        let cases = [
            ("team:alpha", "unknown namespace kind \"team\""),
            ("project", "needs an id"),
            ("global:x", "takes no id"),
            ("project:../x", "contains '/'"),
            ("project:", "scope id is empty"),
        ];
        for (input, expected) in cases {
            let err = Namespace::parse(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{input:?}: {err}");
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn display_parse_round_trip(kind in proptest::sample::select(NamespaceKind::ALL.to_vec()),
                                    id in "[a-z0-9][a-z0-9_-]{0,20}") {
            let ns = if kind == NamespaceKind::Global {
                Namespace::global()
            } else {
                Namespace::scoped(kind, ScopeId::parse(&id).unwrap()).unwrap()
            };
            prop_assert_eq!(Namespace::parse(&ns.to_string()).unwrap(), ns.clone());
            let json = serde_json::to_string(&ns).unwrap();
            prop_assert_eq!(serde_json::from_str::<Namespace>(&json).unwrap(), ns);
        }
    }
}
