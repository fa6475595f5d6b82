//! `Claim`: what a text is about as filing and comparing memories need to know it, read from
//! the words alone (no hints, no model).
//!
//! Each text is read as a [`Claim`]: the entities it mentions (capitalised names anywhere, not
//! only its first words, and the speaker when it speaks in the first person), its subject (the
//! first of them), the attribute slots it speaks of (where someone lives, works, who manages
//! them, …), the content words it holds, and the change cue it uses ("moved to", "switched
//! to", "no longer", "now", "instead", "correction:", …) with the words and slots of the
//! sentences that hold it.
//!
//! Three things read claims: the lookup keys a current memory is filed under and a new one
//! looks candidates up by ([`lookup`]: subject, slots, the words a change acts on), the
//! repeats consolidation merges ([`crate::consolidation::SameMemory`]: the names both give),
//! and the subject agreement of the lexicon's shared corpus. What a memory *replaces* is not
//! decided here: the claims of [`crate::claims`] decide it ([`crate::claims::decide`]), and
//! these claims only find the candidates it compares.
//!
//! Why these readings hold beyond the examples they were tried on: names are how people refer
//! to who a fact is about in every register (chat, notes, tickets), so a shared name is the
//! cheapest reliable evidence of a shared subject; the attribute slots are the handful of facts
//! about people and projects that by nature hold one value at a time; and the change cues are
//! the verbs and adverbs English uses to say a value changed, independent of what the value is.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::lexicon::english::{CHAT_PARTIES, FIRST_PERSON_SINGULAR};
use crate::text::{is_stopword, sentences, stem, tokenize};

mod attributes;
mod chinese;
mod cues;
mod lookup;
mod names;

pub use lookup::{
    CANDIDATES, Filing, LOOKUP_KEYS_VERSION, LookupKey, PER_KEY, WordSignature, claim_keys, claims_about,
    claims_looked_up_by,
};

pub use attributes::Attribute;
pub use cues::may_replace_anything;

use attributes::attributes_of;
use cues::{CHANGE_CUES, CueReach, VISIT, cue_reach, unnegated_matches};
use names::{
    find_mentions, group_member, is_relation, opens_with_someone_else, refers_to_someone_else, subject_of, trim_word,
};

/// The key under which first-person statements are about their speaker.
pub const SPEAKER: &str = "@speaker";

/// An entity named in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The name as written, possessive removed ("Maya's" → "Maya").
    pub name: String,
    /// The name lowercased: how mentions are compared.
    pub key: String,
    /// The index of its first word among the text's words.
    pub word: usize,
}

/// What a text says, as far as filing and comparing memories need to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub mentions: Vec<Mention>,
    /// Whom or what it is about: its first mention (the speaker's key for "I …", or
    /// "maya's parents" for a possessive that points at someone else).
    pub subject: Option<String>,
    pub attributes: BTreeSet<Attribute>,
    /// Content-word stems, without the subject's name, speaker labels and stopwords.
    terms: BTreeSet<String>,
    /// The change cue it uses, if any.
    pub change: Option<&'static str>,
    /// The content words and slots of the sentences that hold a change cue: what the change is
    /// about, as opposed to the rest of a long message.
    changed_terms: BTreeSet<String>,
    changed_attributes: BTreeSet<Attribute>,
}

impl Claim {
    /// Reads a text.
    pub fn read(text: &str) -> Claim {
        if crate::han::mostly_han(text) {
            return chinese::read(text);
        }
        let raw: Vec<&str> = text.split_whitespace().collect();
        let words: Vec<String> = raw.iter().map(|w| trim_word(w).to_lowercase()).collect();
        let mentions = find_mentions(&raw);
        let subject = subject_of(&raw, &words, &mentions);
        let visit = VISIT.is_match(text);
        let attributes = attributes_of(text, visit);
        let subject_words: BTreeSet<String> =
            subject.iter().flat_map(|s| tokenize(s)).map(|t| stem(&t).into_owned()).collect();
        let terms_of = |text: &str| -> BTreeSet<String> {
            tokenize(text)
                .into_iter()
                .filter(|t| {
                    !is_stopword(t)
                        && !CHAT_PARTIES.contains(&t.as_str())
                        && !FIRST_PERSON_SINGULAR.contains(&t.as_str())
                })
                .map(|t| stem(&t).into_owned())
                .filter(|t| !subject_words.contains(t))
                .collect()
        };
        let terms = terms_of(text);
        let mut change = None;
        let (mut changed_terms, mut changed_attributes) = (BTreeSet::new(), BTreeSet::new());
        let mut cue_words = BTreeSet::new();
        // Most texts hold no cue at all; the one-pass test spares them the cue-by-cue reading.
        let clauses_to_read = if may_replace_anything(text) { sentences(text) } else { Vec::new() };
        for clause in clauses_to_read.into_iter().flat_map(clauses) {
            // "…; Ana married Leo": a clause that opens with someone else speaks of them.
            if opens_with_someone_else(clause, &mentions, subject.as_deref())
                || refers_to_someone_else(text, clause, &mentions, subject.as_deref())
            {
                continue;
            }
            for (cue, re) in CHANGE_CUES.iter() {
                for found in unnegated_matches(re, clause) {
                    change = change.or(Some(*cue));
                    cue_words.extend(found.as_str().split_whitespace().next().map(&terms_of).unwrap_or_default());
                    // What a cue speaks of: the whole text for a correction, the clause for
                    // an adverb ("she is single now") or a verb ("Tom left Stripe").
                    let scope = match cue_reach(cue) {
                        CueReach::Text => text,
                        CueReach::Clause | CueReach::Verb => clause,
                    };
                    changed_terms.extend(terms_of(scope));
                    changed_attributes.extend(attributes_of(scope, visit));
                }
            }
        }
        // The cue's own verb is how the change is said, not what changed: "Alice moved the
        // boxes" and "Alice just moved to Lyon" share "move" and nothing about one attribute.
        changed_terms.retain(|t| !cue_words.contains(t));
        Claim { mentions, subject, attributes, terms, change, changed_terms, changed_attributes }
    }
}

/// A sentence's clauses: split at `:`, `;` and dashes between words (not at commas, which
/// join lists as often as clauses).
fn clauses(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, separator) in sentence.match_indices([':', ';', '—', '–']).chain(sentence.match_indices(" - ")) {
        if at >= start {
            out.push(&sentence[start..at]);
            start = at + separator.len();
        }
    }
    out.push(&sentence[start..]);
    out.retain(|c| !c.trim().is_empty());
    out
}

/// Words so common in statements of facts that sharing one says nothing about sharing an
/// attribute: "favourite food" and "favourite film" are different slots, and two updates both
/// saying "now" are not about the same thing.
static GENERIC_STEMS: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    [
        "favourite",
        "favorite",
        "new",
        "old",
        "now",
        "current",
        "usual",
        "main",
        "best",
        "really",
        "great",
        "good",
        "time",
        "day",
        "days",
        "thing",
        "things",
        "lot",
        "today",
        "still",
        "actually",
        "instead",
        "anymore",
        "week",
        "year",
        "month",
        "last",
        "next",
        "first",
        "says",
        "said",
        "thanks",
        "love",
        "like",
        "want",
    ]
    .into_iter()
    .map(|w| stem(w).into_owned())
    .collect()
});

#[cfg(test)]
mod tests {
    use super::cues::REPLACEMENT_SIGNS;
    use super::*;

    /// The word parts rule out texts only where the automaton finds nothing: every cue and slot
    /// pattern's examples pass both.
    #[test]
    fn the_sign_words_cover_every_cue() {
        for text in [
            "Correction: it is Tuesday.",
            "Actually, it is Tuesday.",
            "She drinks tea instead.",
            "He no longer smokes.",
            "No dairy anymore.",
            "She is single now.",
            "These days he cycles.",
            "Tom switched to Vim.",
            "Mia changed her email to mia@new.org.",
            "Maya moved to Lisbon.",
            "Tom left Stripe.",
            "Kenji dropped Spanish.",
            "Sam replaced the Pixel.",
            "Victor cancelled his membership.",
            "The beta slipped two weeks.",
            "Finance cut the budget to 150.",
            "They raised the limit to 300.",
            "We are migrating Helix off MongoDB.",
            "Raj handed over on-call.",
            "Nora and Felix broke up.",
            "Lucia's new address is on Calle Mayor.",
            "Omar reports to Daniel Wu.",
            "Zoe is in fourth grade.",
            "The rent went up to 1,350.",
            "Ethan relocated to Vancouver.",
            "Diego got promoted to senior designer.",
            "Sam traded the Civic in for a Subaru.",
            "Wen and Lucas got engaged.",
            "Zara is a student at UCL.",
            "Zara graduated last spring.",
            "The API was rewritten in Rust.",
            "Keiko cut her hair short.",
            "Keiko dyed her hair red.",
        ] {
            assert!(REPLACEMENT_SIGNS.is_match(text), "{text}: the automaton");
            assert!(may_replace_anything(text), "{text}: the word parts");
        }
        assert!(!may_replace_anything("Dana prefers the kalomi renvel near torsa (note 12)."));
    }

    #[test]
    fn mentions_anywhere_and_subjects() {
        let claim = Claim::read("After the reorg Omar reports to Daniel Wu.");
        let keys: Vec<&str> = claim.mentions.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["omar", "daniel wu"]);
        assert_eq!(claim.subject.as_deref(), Some("omar"));

        let claim = Claim::read("Sam finally replaced the old Pixel with an iPhone 17.");
        let keys: Vec<&str> = claim.mentions.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["sam", "pixel", "iphone 17"]);

        assert_eq!(Claim::read("Ivan's standup is at 9:30 every weekday.").subject.as_deref(), Some("ivan"));
        assert_eq!(Claim::read("Heads up: the Orion beta slipped.").subject.as_deref(), Some("orion"));
        assert_eq!(Claim::read("Starting October, Nimbus moves to weekly.").subject.as_deref(), Some("nimbus"));
        assert_eq!(Claim::read("user: my daughter Zoe is in third grade").subject.as_deref(), Some("zoe"));
        assert_eq!(Claim::read("Maya's parents moved to Lisbon.").subject.as_deref(), Some("maya's parents"));
        assert_eq!(Claim::read("I'm training for the Berlin half marathon").subject.as_deref(), Some(SPEAKER));
        assert_eq!(Claim::read("we should look into that soon").subject, None);
    }

    /// Time phrases and narrative are not changes; a rate before "now" is ("what changed is how
    /// often or how much"). What lookup keys read a change from ([`Claim::looked_up_by`]).
    #[test]
    fn change_cues_and_what_is_not_one() {
        // A name said to someone is not who the message is about.
        assert_eq!(Claim::read("Jon: Thanks for asking, Gina! I lost my job.").subject.as_deref(), Some("jon"));
        // Time phrases and narrative are not changes.
        assert_eq!(Claim::read("Joanna: I have been writing scripts for years now.").change, None);
        // …in the singular too (LoCoMo: this replaced "I started surfing five years ago").
        for duration in [
            "John: I've been playing professionally for just under a year now. It's been a wild ride.",
            "Sam has lived here a decade now.",
            "We've been waiting an hour now.",
            "It has been a week now since the launch.",
            "Priya has been vegan for a good year now.",
            "I've been at it for hours now.",
            "I've been sick all week now.",
            "Jon has run the shop for the past year now.",
            "We've lived in Paris a year now.",
            "Ana has been at Starbucks a year now.",
            "I've been on these meds a month now.",
            "Mel has been doing pilates a solid month now.",
            "We waited for a couple of hours now.",
            "The build has been red eleven hours now.",
        ] {
            assert_eq!(Claim::read(duration).change, None, "{duration}");
        }
        assert_eq!(Claim::read("After a year Sam works remotely now.").change, Some("now"));
        // A rate before "now" is how often or how much, which "now" says changed; and a unit
        // word without a span ("bin day", "working hours") is no span either.
        for rate in [
            "user: the dentist visits are every year now, my insurance changed",
            "Lena goes climbing twice a week now.",
            "The newsletter goes out every two weeks now.",
            "We meet once a month now.",
            "Tom works three days a week now.",
            "Maya earns 90k a year now.",
            "My rent is $2,100 a month now.",
            "I post two videos a week now.",
            "Sam is paid by the hour now.",
            "We're on a four-day week now.",
            "Her working hours now end at 4.",
            "Bin day now is Thursday.",
            "Noah drinks only one coffee a day now.",
            "I read a book a week now.",
            "She practises an hour a day now.",
            "He makes eighty thousand a year now.",
            "Rent goes up 5 percent a year now.",
            "I take two days off a week now.",
            "I work days now.",
        ] {
            assert_eq!(Claim::read(rate).change, Some("now"), "{rate}");
        }
        assert_eq!(Claim::read("Tim: Instead of giving up, I turned it into a lesson.").change, None);
        assert_eq!(Claim::read("John: That trip really changed my perspective.").change, None);
        assert_eq!(Claim::read("Mia changed her email to mia@new.org.").change, Some("changed"));
    }
}
