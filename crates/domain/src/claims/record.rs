//! What a leaf keeps of its claims and of what reconciliation decided about it: the claims its
//! text was read into (once, when it was written), whether the text says more than them, and
//! the marks decisions leave — an automatic retirement (rule, attribute, by which memory), a
//! doubt (possibly outdated by which memory, on which attribute), and the memories a person
//! kept current beside it (a restore), which no rule may retire it for again.
//!
//! The marks hold ids, rule names and attribute ids only, never a value: the words are each
//! leaf's own claims, so forgetting one memory leaves none of its words in another's marks.

use serde::{Deserialize, Serialize};

use super::decide::{FlagReason, RetireRule};
use super::{Claim, Reading};
use crate::id::LeafId;

/// The version of the claims reader: a leaf records the one that read it, and `0` means it was
/// written before claims were read (it has none, and is never retired automatically).
pub const READER_VERSION: u32 = 4;

/// A leaf's claims and reconciliation marks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeafClaims {
    /// The reader that read them ([`READER_VERSION`]); 0 for a leaf never read.
    #[serde(default)]
    pub reader: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Claim>,
    /// Whether the text says more than its claims ([`Reading::says_more`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub says_more: bool,
    /// Set when a rule retired this memory automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired: Option<RetirementMark>,
    /// Set when a newer memory may have replaced this one, unproven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<DoubtMark>,
    /// The lineages of memories a person decided hold beside this one: no rule retires or
    /// flags the pair again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_with: Vec<LeafId>,
    /// The lineages of newer memories a model reasoner judged true beside this one where the
    /// rules would have retired it (a veto, `claims::judged`): neither consolidation's rules nor a
    /// model asked in hindsight retires the pair, whatever doubt is marked later. Unlike
    /// [`kept_with`](Self::kept_with) the pair is still shown as possibly outdated — the rules
    /// and the model disagree, and a person has not decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged_with: Vec<LeafId>,
}

impl LeafClaims {
    /// What the reader made of a text, as a new leaf keeps it.
    pub fn of(reading: &Reading) -> LeafClaims {
        LeafClaims {
            reader: READER_VERSION,
            claims: reading.claims.clone(),
            says_more: reading.says_more(),
            ..LeafClaims::default()
        }
    }

    /// The claims of a text, read now.
    pub fn read(text: &str) -> LeafClaims {
        LeafClaims::of(&super::read(text))
    }

    /// The same claims with no marks: what a copy of the memory starts with.
    pub fn unmarked(&self) -> LeafClaims {
        LeafClaims { retired: None, doubt: None, kept_with: Vec::new(), judged_with: Vec::new(), ..self.clone() }
    }

    /// Whether no rule may retire this memory for one of `lineage`: a person kept the two
    /// together, or a model reasoner judged both true.
    pub fn never_retired_for(&self, lineage: &LeafId) -> bool {
        self.kept_with(lineage) || self.judged_with.contains(lineage)
    }

    /// These claims marked as possibly outdated by memory `by` (of lineage `by_lineage`) on
    /// `attribute`, for `reason`. The mark replaces any earlier doubt; a model reasoner's veto
    /// (`JudgesDisagree`) is also recorded apart from it, in `judged_with`, so that a later
    /// doubt never lets a rule retire the pair after all.
    #[must_use]
    pub fn doubted_by(&self, by: &LeafId, by_lineage: &LeafId, attribute: &str, reason: FlagReason) -> LeafClaims {
        let mut claims = LeafClaims {
            doubt: Some(DoubtMark { by: by.clone(), attribute: attribute.to_owned(), reason }),
            ..self.clone()
        };
        if reason == FlagReason::JudgesDisagree && !claims.judged_with.contains(by_lineage) {
            claims.judged_with.push(by_lineage.clone());
        }
        claims
    }

    /// Whether a person kept this memory current beside the memory of `lineage`.
    pub fn kept_with(&self, lineage: &LeafId) -> bool {
        self.kept_with.contains(lineage)
    }
}

/// An automatic retirement: which memory retired this one, by which rule, on which attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetirementMark {
    pub by: LeafId,
    pub rule: RetireRule,
    pub attribute: String,
    /// Set when a person undid it: the memory that made this one current again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_as: Option<LeafId>,
}

/// A doubt: which newer memory may have replaced this one, on which attribute, and why it is
/// not proven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoubtMark {
    pub by: LeafId,
    pub attribute: String,
    pub reason: FlagReason,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model's veto is kept apart from the doubt mark: a later doubt replaces the mark, the
    /// veto stays, and it is recorded once however often it is given.
    #[test]
    fn a_later_doubt_replaces_the_mark_and_keeps_the_veto() {
        let (newer, lineage) = (
            LeafId::parse("leaf-01hzz0000000000000000000b1").unwrap(),
            LeafId::parse("leaf-01hzz0000000000000000000a1").unwrap(),
        );
        let vetoed = LeafClaims::default().doubted_by(&newer, &lineage, "employer", FlagReason::JudgesDisagree);
        let again = vetoed.doubted_by(&newer, &lineage, "employer", FlagReason::JudgesDisagree);
        assert_eq!(again.judged_with, std::slice::from_ref(&lineage));
        let later = again.doubted_by(&newer, &lineage, "residence", FlagReason::MaybeSameSubject);
        let mark = later.doubt.as_ref().unwrap();
        assert_eq!((mark.attribute.as_str(), mark.reason), ("residence", FlagReason::MaybeSameSubject));
        assert!(later.never_retired_for(&lineage));
    }
}
