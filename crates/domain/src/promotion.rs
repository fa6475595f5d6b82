//! Promotion [design §promotion]: a memory proven in a narrow layer is proposed to a broader one —
//! run → automation → project → global, and experiment conclusions → project. Never a move:
//! the original and its source stay, the target gets a new leaf whose provenance names the
//! original, the reason, the evaluation and the operator, and it lands as a candidate, so
//! project and global memories are confirmed explicitly [design §approval]. A promotion can be rolled
//! back while nothing depends on it.

use crate::namespace::{Namespace, NamespaceKind};
use crate::read_chain::ReadChain;
use crate::sensitivity::Sensitivity;

/// The longest promotion reason, evaluation or operator name, in bytes.
pub const MAX_PROMOTION_NOTE_BYTES: usize = 1024;

/// Where a memory of each kind of namespace may be promoted to.
pub const PROMOTION_PATHS: [(NamespaceKind, NamespaceKind); 4] = [
    (NamespaceKind::Run, NamespaceKind::Automation),
    (NamespaceKind::Automation, NamespaceKind::Project),
    (NamespaceKind::Project, NamespaceKind::Global),
    (NamespaceKind::Experiment, NamespaceKind::Project),
];

/// Why a promotion was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromotionRefusal {
    #[error(
        "memories of {from} namespaces are not promoted (paths: run -> automation -> project -> global, experiment -> project)"
    )]
    NoPath { from: &'static str },
    #[error("this context's read chain has no {to} layer above {from} to promote into")]
    NoTarget { from: String, to: &'static str },
    #[error("restricted memories stay where a person put them; they are not promoted")]
    Restricted,
    #[error("a promotion needs a reason")]
    NoReason,
    #[error("`{field}` is {bytes} bytes; the limit is {limit}")]
    NoteTooLong { field: &'static str, bytes: usize, limit: usize },
    #[error("`{field}` contains a control character")]
    ControlCharacter { field: &'static str },
}

/// The namespace a memory of `source` is promoted into for a caller reading `chain`: the
/// broader layer of the chain whose kind the path allows. The chain decides which project or
/// automation that is; a caller never names it.
pub fn promotion_target(chain: &ReadChain, source: &Namespace) -> Result<Namespace, PromotionRefusal> {
    let from = source.kind();
    let Some(&(_, to)) = PROMOTION_PATHS.iter().find(|(path_from, _)| *path_from == from) else {
        return Err(PromotionRefusal::NoPath { from: from.as_str() });
    };
    let mut above = chain.namespaces().skip_while(|ns| *ns != source).skip(1);
    above
        .find(|ns| ns.kind() == to)
        .cloned()
        .ok_or_else(|| PromotionRefusal::NoTarget { from: source.to_string(), to: to.as_str() })
}

/// Whether a memory of this sensitivity may be promoted at all: a restricted one may not (it
/// was kept only because a person chose its layer).
pub fn check_promotable(sensitivity: Sensitivity) -> Result<(), PromotionRefusal> {
    if sensitivity == Sensitivity::Restricted { Err(PromotionRefusal::Restricted) } else { Ok(()) }
}

/// Checks the free-text parts of a promotion: a reason is required; every note is bounded and
/// free of control characters (they are written to provenance and audit).
pub fn check_promotion_notes(reason: &str, evaluation: Option<&str>, operator: &str) -> Result<(), PromotionRefusal> {
    if reason.trim().is_empty() {
        return Err(PromotionRefusal::NoReason);
    }
    for (field, value) in [("reason", Some(reason)), ("evaluation", evaluation), ("operator", Some(operator))] {
        let Some(value) = value else { continue };
        if value.len() > MAX_PROMOTION_NOTE_BYTES {
            return Err(PromotionRefusal::NoteTooLong { field, bytes: value.len(), limit: MAX_PROMOTION_NOTE_BYTES });
        }
        if value.chars().any(|c| c.is_control() && c != '\n') {
            return Err(PromotionRefusal::ControlCharacter { field });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ScopeId;
    use crate::read_chain::{ReadChainPolicy, TrustedContext};

    fn id(s: &str) -> ScopeId {
        ScopeId::parse(s).unwrap()
    }

    fn chain(context: TrustedContext) -> ReadChain {
        ReadChain::resolve(&context, &ReadChainPolicy::default()).unwrap()
    }

    #[test]
    fn each_layer_promotes_one_step_up_its_own_chain() {
        let run = chain(TrustedContext::AutomationRun {
            run: id("r1"),
            automation: id("a1"),
            conversation: None,
            project: Some(id("p1")),
        });
        let ns = |s: &str| Namespace::parse(s).unwrap();
        assert_eq!(promotion_target(&run, &ns("run:r1")), Ok(ns("automation:a1")));
        assert_eq!(promotion_target(&run, &ns("automation:a1")), Ok(ns("project:p1")));
        assert_eq!(promotion_target(&run, &ns("project:p1")), Ok(ns("global")));
        assert!(matches!(promotion_target(&run, &ns("global")), Err(PromotionRefusal::NoPath { .. })));

        let conversation =
            chain(TrustedContext::Conversation { conversation: id("c1"), project: Some(id("p1")), agent: None });
        assert!(matches!(
            promotion_target(&conversation, &ns("conversation:c1")),
            Err(PromotionRefusal::NoPath { .. })
        ));
        // A run without an automation layer in its chain has nowhere to go.
        let experiment = chain(TrustedContext::ExperimentRun {
            run: id("r2"),
            experiment: id("e1"),
            project: Some(id("p1")),
            frozen_at: crate::time::Timestamp::UNIX_EPOCH,
        });
        assert!(matches!(promotion_target(&experiment, &ns("run:r2")), Err(PromotionRefusal::NoTarget { .. })));
        assert_eq!(promotion_target(&experiment, &ns("experiment:e1")), Ok(ns("project:p1")));
    }

    #[test]
    fn restricted_memories_are_not_promoted() {
        assert_eq!(check_promotable(Sensitivity::Restricted), Err(PromotionRefusal::Restricted));
        assert!(check_promotable(Sensitivity::Sensitive).is_ok() && check_promotable(Sensitivity::Normal).is_ok());
    }

    #[test]
    fn notes_are_required_bounded_and_printable() {
        assert_eq!(check_promotion_notes("  ", None, "ops"), Err(PromotionRefusal::NoReason));
        assert!(check_promotion_notes("worked in 3 runs", Some("3/3 green"), "dana").is_ok());
        let long = "x".repeat(MAX_PROMOTION_NOTE_BYTES + 1);
        assert!(matches!(check_promotion_notes("ok", Some(&long), "dana"), Err(PromotionRefusal::NoteTooLong { .. })));
        assert!(matches!(
            check_promotion_notes("a\u{7}b", None, "dana"),
            Err(PromotionRefusal::ControlCharacter { .. })
        ));
    }
}
