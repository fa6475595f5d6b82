//! Claims: what a memory says, as (subject, attribute, value, polarity), read once when it is
//! written and kept with it, so that deciding whether a later memory replaces it compares what
//! the two *say*, not which words they share.
//!
//! - [`catalogue`] declares every attribute once: how many values it holds at once, what kind
//!   of subject has it, and its names in English and Chinese.
//! - [`read`] reads a text into claims ([`Reading`]): `english` and `chinese` hold each
//!   language's surface forms of the catalogue's attributes, and both give the same claims. A
//!   claim said as a plan, a wish, a question, a denial, the past, hearsay or a one-off
//!   exception is *held*: kept apart, it never decides anything.
//! - [`values`] compares two values of one attribute ("the Izmir branch" and "Izmir" are one
//!   place; "10am" and "10:00" one time).
//! - [`decide`] decides, for a new memory's claims against the current memories' claims, what
//!   is retired (proof: the same subject, an attribute that holds one value, and a different
//!   value, or an explicit ending of that value), what is only *flagged* as possibly outdated
//!   (same attribute, but the subject or the values are not certain), and what is left alone
//!   (everything else — above all, a claim on another attribute, whatever words it shares).
//!
//! A memory the catalogue cannot read has no claims, and that is fine: it is never retired
//! automatically. Precision comes first, because the two mistakes cost differently: a missed
//! update leaves both facts, dated, the newer first, and a reader can tell; a false retirement
//! hides a true fact from every later question.

use serde::{Deserialize, Serialize};

pub mod catalogue;
mod chinese;
pub mod decide;
mod english;
pub mod judged;
pub mod profile;
pub mod question;
pub mod record;
pub mod values;

pub use catalogue::{About, AttributeDef, CATALOGUE, Holds, definition};
pub use decide::{Decision, Doubt, FlagReason, RetireRule, Retirement, decide, judge};
pub use record::{DoubtMark, LeafClaims, READER_VERSION, RetirementMark};

/// The key of the person a store's first person speaks for: "I", "my", "the user", "用户".
pub const ME: &str = "@me";

/// Whom or what a claim is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    /// How subjects are compared: lowercase, determiners and possessive pronouns dropped
    /// ("maya", "maya chen", "maya's sister", "standup", "atlas launch"), or [`ME`] (or a
    /// transcript speaker's name) for the first person.
    pub key: String,
    /// How the text named it ("Maya", "the user", "our standup").
    pub name: String,
}

impl Subject {
    pub fn me() -> Subject {
        Subject { key: ME.to_owned(), name: "the user".to_owned() }
    }

    pub fn named(name: &str) -> Subject {
        Subject { key: subject_key(name), name: name.trim().to_owned() }
    }

    pub fn is_me(&self) -> bool {
        self.key == ME
    }

    /// Whether this subject and `other` are one: [`SameSubject::Yes`] when their keys agree,
    /// [`SameSubject::Maybe`] when one name is the other with words added ("Maya" and "Maya
    /// Chen", "standup" and "daily standup": the same one, often, but not by proof), and
    /// [`SameSubject::No`] otherwise — "Maya's sister" is never Maya, and two people who share
    /// a first name are two people.
    pub fn same_as(&self, other: &Subject) -> SameSubject {
        if self.key == other.key {
            return SameSubject::Yes;
        }
        let relation = |key: &str| key.contains("'s ");
        if self.key.starts_with('@') || other.key.starts_with('@') || relation(&self.key) || relation(&other.key) {
            return SameSubject::No;
        }
        let words = |key: &str| key.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let (a, b) = (words(&self.key), words(&other.key));
        let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
        // "Maya" and "Maya Chen": the shorter at the start of the longer. "Chen" and "Maya
        // Chen" too (a surname alone). Two full names differ however much they share.
        let prefix = long.starts_with(short);
        let suffix = long.ends_with(short);
        if (prefix || suffix) && short.len() < long.len() && !(short.len() >= 2 && long.len() >= 2 && prefix) {
            return SameSubject::Maybe;
        }
        if short.len() >= 2 && long.len() > short.len() && (prefix || suffix) {
            return SameSubject::Maybe;
        }
        SameSubject::No
    }
}

/// Whether two subjects are one ([`Subject::same_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SameSubject {
    No,
    Maybe,
    Yes,
}

/// Whether a claim says its value holds, or that it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Polarity {
    Holds,
    /// "quit smoking", "sold the Golf", "no longer works at Stripe", "不再吃肉".
    Ended,
}

/// One thing a memory says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Claim {
    pub subject: Subject,
    /// A catalogue id ("residence"), or `id:parameter` ("favorite:food", "has:dentist").
    pub attribute: String,
    /// The value as the text gives it ("the Izmir branch"); `None` for an ending that names
    /// none ("quit his job").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub polarity: Polarity,
    /// The time the text says it holds from, as written ("in June", "since spring"), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// For a loose claim (an attribute `~when`, `~price`, …: a measure the catalogue's forms
    /// did not place), the content words of its clause, stemmed: what the measure is said of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about: Vec<String>,
}

impl Claim {
    pub fn definition(&self) -> Option<&'static AttributeDef> {
        catalogue::definition(&self.attribute)
    }

    pub fn holds(&self) -> Holds {
        self.definition().map_or(Holds::Many, |def| def.holds)
    }

    /// Whether it is a loose claim: a measure said of something no form named.
    pub fn is_loose(&self) -> bool {
        self.attribute.starts_with('~')
    }

    /// The kind of measure its value is, for a loose claim and for the catalogue's measure
    /// attributes alike: `when`, `price`, `version`, `amount`.
    pub fn measure(&self) -> Option<&str> {
        let base = self.attribute.trim_start_matches('~');
        matches!(base, "when" | "price" | "version" | "amount").then_some(base)
    }
}

/// Why a claim the text makes decides nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// A plan, a wish, a hedge or a condition ("thinking about moving to Berlin", "might").
    Planned,
    /// A question.
    Asked,
    /// Denied ("did not move", "isn't switching").
    Denied,
    /// Said of the past ("back in 2019", "as a kid").
    Past,
    /// Heard from someone, not known ("apparently", "rumour has it").
    Hearsay,
    /// A one-off exception to something that recurs ("this week standup is at 11").
    Exception,
    /// Added beside what holds ("also works at a bakery"): not a replacement of one value.
    Also,
}

/// What a text says: its claims, those it holds back, and who its first person is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    pub claims: Vec<Claim>,
    /// Claims the text makes without asserting them, each with why.
    pub held: Vec<(Claim, Hold)>,
    /// How many content words no claim accounts for: what else the text says.
    pub unclaimed_words: usize,
}

impl Reading {
    /// Whether the text says more than its claims ([`SAYS_MORE_WORDS`] content words or more
    /// that no claim reads): such a memory is never retired whole for one of its claims.
    pub fn says_more(&self) -> bool {
        self.unclaimed_words >= SAYS_MORE_WORDS
    }
}

/// How many unread content words make a memory say more than its claims: one stray word
/// ("officially", a name in passing) is not another fact; two are the least a fact takes
/// ("two cats", "hates mornings").
pub const SAYS_MORE_WORDS: usize = 2;

/// Whose "I" a text's first person is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstPerson {
    /// The person the store serves ([`ME`]): their own entries and messages.
    User,
    /// No one claims are kept about: an assistant's, a tool's or a program's "I".
    Nobody,
}

impl FirstPerson {
    /// Whose "I" an actor's words are: the person's for their own words and for an agent's
    /// deliberate save (said for the person, as their entry would be) and an integration's
    /// record; no one's for an assistant's, a tool's or a program's turn.
    pub fn of(actor: crate::values::Actor) -> FirstPerson {
        use crate::values::Actor;
        match actor {
            Actor::User | Actor::Integration | Actor::Agent => FirstPerson::User,
            Actor::Assistant | Actor::Tool | Actor::System => FirstPerson::Nobody,
        }
    }
}

/// Reads what `text`, written by the person the store serves, says: its first person is [`ME`],
/// unless the text is a transcript line that names its speaker ("Ana: I moved to Porto" is
/// Ana's). "The user", "用户" are [`ME`] whoever wrote them.
pub fn read(text: &str) -> Reading {
    read_as(text, FirstPerson::User)
}

/// Reads what `text` says, its first person being `first_person`'s.
pub fn read_as(text: &str, first_person: FirstPerson) -> Reading {
    let mut reading = if crate::han::mostly_han(text) {
        chinese::read(text, first_person)
    } else {
        english::read(text, first_person)
    };
    // One claim once: the same statement repeated in a text says it once.
    reading.claims.sort();
    reading.claims.dedup();
    reading.held.sort();
    reading.held.dedup();
    reading
}

/// A subject's key from a name as written: lowercase, whitespace collapsed, determiners and
/// possessive pronouns dropped ("Our Standup" → "standup").
pub fn subject_key(name: &str) -> String {
    let lower = name.to_lowercase().replace(['’', '‘'], "'");
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-' && c != '+' && c != '.'))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    let skip = words.iter().take_while(|w| crate::lexicon::english::DETERMINERS.contains(w)).count();
    // "the kids' bedtime" and "the kids's bedtime" are one possessive.
    words[skip..]
        .iter()
        .map(|w| if w.ends_with("s'") { format!("{w}s") } else { (*w).to_owned() })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(key: &str) -> Subject {
        Subject { key: key.to_owned(), name: key.to_owned() }
    }

    #[test]
    fn subjects_are_one_only_by_their_keys() {
        assert_eq!(subject("maya").same_as(&subject("maya")), SameSubject::Yes);
        assert_eq!(subject("maya").same_as(&subject("maya chen")), SameSubject::Maybe);
        assert_eq!(subject("maya chen").same_as(&subject("maya lopez")), SameSubject::No);
        assert_eq!(subject("maya").same_as(&subject("maya's sister")), SameSubject::No);
        assert_eq!(subject(ME).same_as(&subject("maya")), SameSubject::No);
        assert_eq!(subject("standup").same_as(&subject("daily standup")), SameSubject::Maybe);
        assert_eq!(subject("atlas launch").same_as(&subject("orion launch")), SameSubject::No);
        assert_eq!(subject_key("Our Standup"), "standup");
        assert_eq!(subject_key("the Atlas launch"), "atlas launch");
    }
}
