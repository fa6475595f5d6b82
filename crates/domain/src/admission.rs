//! Admission (is this chunk worth keeping at all?) and approval (does it start as `active` or
//! as a `candidate` awaiting a person?) [design §admission].
//!
//! Admission is its own decision, taken before any entity work: a chunk that is not admitted
//! creates no leaf and no entity.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::lifecycle::LeafStatus;
use crate::model::{Actor, Confidence, MemoryKind, SourceRef};
use crate::namespace::NamespaceKind;
use crate::sensitivity::{SecretGuard, SecretKind, Sensitivity};

/// Whether a memory is a person's own entry ("remember this"): said by the user *and* typed
/// into Arbor as a memory. It is the only kind of memory admission and approval take on trust
/// (active at once, even in project or global). Both halves are needed because both are
/// claims an event makes about itself: a `user_entry` source from an assistant, a tool, the
/// system or an integration is still that speaker's statement, and a user's words quoted from a
/// conversation (`message`) are an inference about what to keep, not a request to keep it.
pub fn is_manual_entry(actor: Actor, source: &SourceRef) -> bool {
    actor == Actor::User && matches!(source, SourceRef::UserEntry)
}

/// Thresholds for admission.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdmissionPolicy {
    /// Chunks scored below this are dropped. Default 0.5.
    pub min_confidence: Confidence,
}

impl Default for AdmissionPolicy {
    fn default() -> Self {
        AdmissionPolicy { min_confidence: Confidence::saturating(0.5) }
    }
}

/// What the admission decision looks at.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionInput<'a> {
    pub text: &'a str,
    /// The reasoner's admission confidence.
    pub confidence: Confidence,
    /// A person typed this in as a memory ([`is_manual_entry`]).
    pub manual: bool,
    /// Sensitivity the caller declared, if any.
    pub declared: Option<Sensitivity>,
    /// Sensitivity the reasoner suggested.
    pub suggested: Sensitivity,
}

/// The outcome of admission.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "admission", rename_all = "snake_case")]
pub enum Admission {
    Admit { sensitivity: Sensitivity },
    Refuse { refusal: AdmissionRefusal },
}

/// Why a chunk was not admitted. Each variant renders as a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum AdmissionRefusal {
    #[error("nothing to remember: the text is empty")]
    Empty,
    #[error("not worth keeping: admission confidence {confidence:.2} is below the threshold {threshold:.2}")]
    LowConfidence { confidence: f32, threshold: f32 },
    #[error(
        "refused: the text looks like it contains {} and secrets are never stored automatically; a person may save it by hand with sensitivity \"restricted\"",
        describe(kinds)
    )]
    Secret { kinds: Vec<SecretKind> },
    #[error("refused: restricted memories are never generated automatically; only a person may save one")]
    RestrictedNeedsPerson,
}

fn describe(kinds: &[SecretKind]) -> String {
    // Every kind's name is a noun phrase; its article follows its first sound.
    let named: Vec<String> = kinds
        .iter()
        .map(|k| {
            let name = k.as_str();
            let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
            format!("{article} {name}")
        })
        .collect();
    match named.as_slice() {
        [] => "a secret".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

impl AdmissionPolicy {
    /// Decides admission. The secret check comes first and cannot be outvoted by confidence:
    /// credentials never enter memory automatically, and a person who wants one stored must
    /// say `restricted` explicitly.
    pub fn decide(&self, input: AdmissionInput<'_>) -> Admission {
        let refuse = |refusal| Admission::Refuse { refusal };
        if input.text.trim().is_empty() {
            return refuse(AdmissionRefusal::Empty);
        }
        let secrets = SecretGuard.kinds(input.text);
        let deliberately_restricted = input.manual && input.declared == Some(Sensitivity::Restricted);
        if !secrets.is_empty() && !deliberately_restricted {
            return refuse(AdmissionRefusal::Secret { kinds: secrets });
        }
        let sensitivity = input.declared.unwrap_or_default().max(input.suggested);
        if !input.manual && !sensitivity.allows_automatic_generation() {
            return refuse(AdmissionRefusal::RestrictedNeedsPerson);
        }
        // A person asking to remember something is the strongest admission signal there is.
        if !input.manual && input.confidence < self.min_confidence {
            return refuse(AdmissionRefusal::LowConfidence {
                confidence: input.confidence.get(),
                threshold: self.min_confidence.get(),
            });
        }
        Admission::Admit { sensitivity }
    }
}

/// Which admitted memories become active at once and which wait for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    /// Namespace kinds whose inferred memories are auto-approved. Global and project are not
    /// in the default set: they need explicit confirmation [design §approval].
    pub auto_approve_namespaces: BTreeSet<NamespaceKind>,
    /// Kinds that always need a person, whatever the namespace. Default: relationships, which
    /// are high-impact [design §approval].
    pub review_kinds: BTreeSet<MemoryKind>,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy {
            auto_approve_namespaces: [
                NamespaceKind::Conversation,
                NamespaceKind::Automation,
                NamespaceKind::Experiment,
                NamespaceKind::Run,
                NamespaceKind::Agent,
            ]
            .into_iter()
            .collect(),
            review_kinds: [MemoryKind::Relationship].into_iter().collect(),
        }
    }
}

/// What approval looks at.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalInput {
    pub namespace: NamespaceKind,
    pub kind: MemoryKind,
    pub sensitivity: Sensitivity,
    pub actor: Actor,
    pub manual: bool,
}

/// The initial status of an admitted memory and the rule that chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Approval {
    pub status: LeafStatus,
    pub reason: &'static str,
}

impl Approval {
    /// A memory that conflicts with a current one waits for a person, whatever the policy
    /// said of it alone [design §approval]; `reason` names the conflict.
    pub fn held_by_conflict(reason: &'static str) -> Approval {
        Approval { status: LeafStatus::Candidate, reason }
    }
}

impl ApprovalPolicy {
    /// Whether inferred memories in namespaces of `kind` become current without a person.
    /// Where they do, what an agent may write it may also take back (forget); where they do
    /// not, taking a memory away needs the person who would have confirmed it.
    pub fn auto_approves(&self, kind: NamespaceKind) -> bool {
        self.auto_approve_namespaces.contains(&kind)
    }

    pub fn decide(&self, input: ApprovalInput) -> Approval {
        let candidate = |reason| Approval { status: LeafStatus::Candidate, reason };
        let active = |reason| Approval { status: LeafStatus::Active, reason };
        if input.manual {
            return active("entered by a person");
        }
        if !input.sensitivity.allows_auto_approval() {
            return candidate("sensitive memories always need a person's confirmation");
        }
        if matches!(input.actor, Actor::Assistant | Actor::Tool) {
            return candidate("an assistant's or tool's own statements are never confirmed automatically");
        }
        // An agent's deliberate save (`Actor::Agent`) is an inference like any other: current
        // at once where the namespace auto-approves (a conversation), waiting for a person in a
        // project or the global layer.
        if self.review_kinds.contains(&input.kind) {
            return candidate("this kind of memory always needs confirmation");
        }
        if input.actor == Actor::Integration {
            return active("synced from an integration, the system of record");
        }
        if !self.auto_approves(input.namespace) {
            return candidate("memories in this namespace need explicit confirmation");
        }
        active("auto-approved within its own namespace")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn sensitivity() -> impl Strategy<Value = Sensitivity> {
        prop_oneof![Just(Sensitivity::Normal), Just(Sensitivity::Sensitive), Just(Sensitivity::Restricted)]
    }

    fn actor() -> impl Strategy<Value = Actor> {
        prop_oneof![
            Just(Actor::User),
            Just(Actor::Assistant),
            Just(Actor::Tool),
            Just(Actor::System),
            Just(Actor::Integration),
            Just(Actor::Agent)
        ]
    }

    #[test]
    fn refusal_messages_are_actionable() {
        let policy = AdmissionPolicy::default();
        let input = AdmissionInput {
            text: "the wifi password is hunter2!",
            confidence: Confidence::ONE,
            manual: false,
            declared: None,
            suggested: Sensitivity::Normal,
        };
        let Admission::Refuse { refusal } = policy.decide(input) else { panic!("admitted a password") };
        assert_eq!(
            refusal.to_string(),
            "refused: the text looks like it contains a password and secrets are never stored automatically; a person may save it by hand with sensitivity \"restricted\""
        );
        // A person may store it deliberately, as restricted.
        let manual = AdmissionInput { manual: true, declared: Some(Sensitivity::Restricted), ..input };
        assert_eq!(policy.decide(manual), Admission::Admit { sensitivity: Sensitivity::Restricted });
    }

    #[test]
    fn global_and_project_need_confirmation_by_default() {
        let policy = ApprovalPolicy::default();
        for (namespace, expected) in [
            (NamespaceKind::Global, LeafStatus::Candidate),
            (NamespaceKind::Project, LeafStatus::Candidate),
            (NamespaceKind::Conversation, LeafStatus::Active),
            (NamespaceKind::Run, LeafStatus::Active),
        ] {
            // A user's words quoted by a host, and an agent's deliberate save, alike.
            for actor in [Actor::User, Actor::Agent] {
                let decided = policy.decide(ApprovalInput {
                    namespace,
                    kind: MemoryKind::Fact,
                    sensitivity: Sensitivity::Normal,
                    actor,
                    manual: false,
                });
                assert_eq!(decided.status, expected, "{namespace} {actor:?}");
            }
        }
    }

    /// A transcript's assistant turn stays a suggestion even where an agent's save is current.
    #[test]
    fn an_assistants_remark_waits_where_an_agents_save_does_not() {
        let input = |actor| ApprovalInput {
            namespace: NamespaceKind::Conversation,
            kind: MemoryKind::Preference,
            sensitivity: Sensitivity::Normal,
            actor,
            manual: false,
        };
        let policy = ApprovalPolicy::default();
        assert_eq!(policy.decide(input(Actor::Assistant)).status, LeafStatus::Candidate);
        assert_eq!(policy.decide(input(Actor::Agent)).status, LeafStatus::Active);
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Nothing with a secret in it is admitted automatically; nothing restricted is ever
        /// generated automatically; below-threshold inferred chunks are never admitted.
        #[test]
        fn admission_guards(prefix in "[a-z ]{0,30}", with_secret in any::<bool>(), manual in any::<bool>(),
                            declared in proptest::option::of(sensitivity()), suggested in sensitivity(),
                            confidence in 0.0f32..=1.0) {
            let text = if with_secret { format!("{prefix} password: swordfish42") } else { format!("{prefix} likes tea") };
            let policy = AdmissionPolicy::default();
            let decided = policy.decide(AdmissionInput {
                text: &text, confidence: Confidence::new(confidence).unwrap(), manual, declared, suggested,
            });
            if let Admission::Admit { sensitivity } = decided {
                if with_secret {
                    prop_assert!(manual && declared == Some(Sensitivity::Restricted));
                }
                if !manual {
                    prop_assert!(sensitivity != Sensitivity::Restricted);
                    prop_assert!(confidence >= policy.min_confidence.get());
                }
                prop_assert!(sensitivity >= suggested);
            }
        }

        /// Sensitive memories and an assistant's own inferences are never auto-approved, and
        /// neither is anything inferred in global or project under the default policy.
        #[test]
        fn approval_guards(namespace in proptest::sample::select(NamespaceKind::ALL.to_vec()),
                           kind in proptest::sample::select(MemoryKind::ALL.to_vec()),
                           sensitivity in sensitivity(), actor in actor(), manual in any::<bool>()) {
            let decided = ApprovalPolicy::default().decide(ApprovalInput { namespace, kind, sensitivity, actor, manual });
            prop_assert!(matches!(decided.status, LeafStatus::Active | LeafStatus::Candidate));
            if decided.status == LeafStatus::Active && !manual {
                prop_assert_eq!(sensitivity, Sensitivity::Normal);
                prop_assert!(!matches!(actor, Actor::Assistant | Actor::Tool));
                prop_assert!(kind != MemoryKind::Relationship);
                if actor != Actor::Integration {
                    prop_assert!(!matches!(namespace, NamespaceKind::Global | NamespaceKind::Project));
                }
            }
        }
    }
}
