//! `LookupKey`: where a current memory is filed so that a later memory finds it among the few
//! it may replace, at a cost that follows what is said about one subject, not the size of the
//! store.
//!
//! A memory that changes or repeats another names the subject it speaks of (that is how people
//! say a change) and shares an attribute slot or a content word with it. So a memory is filed
//! ([`Claim::filed_under`]) under:
//! - its subject, in every whole-word form ("daniel wu", "daniel", "wu"): the broad key, read
//!   latest first;
//! - its subject with each attribute slot it fills ("maya|residence"), so a move finds the old
//!   address however long ago it was said and whatever words it used ("I moved to Amsterdam"
//!   after "I live in Porto");
//! - for a memory that names no one, bands of its content words (a MinHash signature, two words
//!   a band), so two near-duplicate notes share a key with high probability;
//!
//! and every entry carries a [`WordSignature`] of the memory's content words. A memory that may
//! replace something is looked up ([`Claim::looked_up_by`]) under every name it mentions (the
//! subject it shares with the old memory may be any of them), alone and with the slots it
//! changes, with the signature of the words it changes: of the latest [`PER_KEY`] entries under
//! each key (read from the index alone), the [`CANDIDATES`] that share the most keys, then the
//! most words, are read. One lookup costs a bounded number of index entries and rows whatever
//! the store holds, and a memory costs the store one entry per name form and slot — not one per
//! word, which would make every write scatter a dozen inserts across the index.
//!
//! The keys are words; a backend stores them hashed with the namespace (`rows::lookup_key_hash`),
//! so no index page keeps a forgotten name.

use std::collections::BTreeSet;

use super::{Claim, GENERIC_STEMS, SPEAKER, group_member, is_relation};
use crate::lexicon::english;

/// The version of the rules that make keys and signatures: a store keeps the version its
/// entries were made by, and files every current memory again when it differs (a change to
/// [`Claim::filed_under`], the name forms, the signature or the band hashes must raise it).
pub const LOOKUP_KEYS_VERSION: u32 = 9;

/// How many of the latest entries under one key a lookup reads (the index alone, a few pages):
/// what was said about one subject over weeks of ordinary use, where the slot keys reach
/// further back for the facts that fill a slot.
pub const PER_KEY: usize = 64;

/// How many current memories a lookup returns: those filed under the most of its keys, then
/// sharing the most words. More than a subject's current facts that share a slot or a word
/// with one statement.
pub const CANDIDATES: usize = 24;

/// The most content words a signature holds, the longest first: a statement of one fact holds
/// about eight, and the rules ask one shared word per eight of the old statement's.
const SIGNATURE_TERMS: usize = 8;

/// The most keys one lookup reads: every name's forms with the slots it changes fit within it.
const MAX_LOOKUP_KEYS: usize = 24;

/// Words that open or close a name without telling one name from another: honorifics (with the
/// lexicon's titles) and the nouns of organisations and places (not kin: "Grandma" alone names someone). Never a name form on their own.
const NAME_TITLES: &[&str] = &[
    "professor",
    "sir",
    "st",
    "saint",
    "mt",
    "mount",
    "project",
    "team",
    "the",
    "company",
    "inc",
    "ltd",
    "llc",
    "corp",
    "group",
    "lake",
    "river",
    "street",
    "avenue",
    "road",
    "city",
    "new",
    "san",
    "los",
    "las",
    "la",
    "le",
    "de",
    "del",
    "van",
    "von",
    "jr",
    "sr",
];

/// MinHash bands for memories about no one: four bands of two words find two texts that share
/// 85% of their words (the duplicate bar) with probability ~0.95, while two texts sharing a
/// third of their words share a band less than a third of the time.
const BANDS: u64 = 4;
const ROWS_PER_BAND: usize = 2;

/// One key a memory is filed under (or looked up by). Its text names the subject, so it is
/// hashed before it is stored.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LookupKey(String);

impl LookupKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn subject(form: &str) -> LookupKey {
        LookupKey(format!("s:{form}"))
    }

    fn slot(subject: &str, slot: super::Attribute) -> LookupKey {
        LookupKey(format!("a:{subject}|{}", slot.as_str()))
    }
}

/// A memory's content words as 64 bits (each word sets two, by the band hashes): how many bits
/// two signatures share says how many words two memories likely share, without storing a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WordSignature(pub u64);

impl WordSignature {
    fn of<'a>(words: impl IntoIterator<Item = &'a String>) -> WordSignature {
        let bits = words
            .into_iter()
            .fold(0u64, |bits, word| bits | 1 << (band_hash(0, word) % 64) | 1 << (band_hash(1, word) % 64));
        WordSignature(bits)
    }

    /// How many bits two signatures share: about twice the words the two memories share.
    pub fn shared(self, other: WordSignature) -> u32 {
        (self.0 & other.0).count_ones()
    }
}

/// Where a memory is filed, or what it is looked up by: keys, and the signature of its words.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filing {
    pub keys: BTreeSet<LookupKey>,
    pub words: WordSignature,
}

impl Claim {
    /// Where a current memory saying this is filed.
    pub fn filed_under(&self) -> Filing {
        let mut keys = BTreeSet::new();
        let Some(subject) = &self.subject else {
            keys.extend(bands(&self.terms));
            return Filing { keys, words: WordSignature::of(signature_terms(&self.terms)) };
        };
        keys.extend(name_forms(subject).iter().map(|f| LookupKey::subject(f)));
        keys.extend(self.attributes.iter().filter(|a| a.is_strong()).map(|&a| LookupKey::slot(subject, a)));
        Filing { keys, words: WordSignature::of(signature_terms(&self.terms)) }
    }

    /// What the memories this one may replace or repeat are found by: for each name it
    /// mentions, the name's forms, alone and with the slots it changes, and the signature of
    /// the words it changes; for a text that names no one, its bands.
    pub fn looked_up_by(&self) -> Filing {
        if self.subject.is_none() {
            return self.filed_under();
        }
        // What a change shares with the memory it changes: the words and slots of its changed
        // sentences.
        let (terms, attributes) = match self.change {
            Some(_) => (&self.changed_terms, &self.changed_attributes),
            None => (&self.terms, &self.attributes),
        };
        let slots: Vec<_> = attributes.iter().filter(|a| a.is_strong()).copied().collect();
        // The subject's keys first, then every other name's forms, then their slots: a cut
        // keeps what is most likely shared with the memory replaced.
        let mut names: Vec<&str> = self.subject.iter().map(String::as_str).collect();
        names.extend(self.mentions.iter().map(|m| m.key.as_str()).filter(|k| Some(*k) != self.subject.as_deref()));
        let mut ordered = Vec::new();
        let mut narrow = Vec::new();
        for (i, name) in names.iter().enumerate() {
            for form in name_forms(name) {
                ordered.push(LookupKey::subject(&form));
                let slot_keys = slots.iter().map(|&a| LookupKey::slot(&form, a));
                if i == 0 { ordered.extend(slot_keys) } else { narrow.extend(slot_keys) }
            }
        }
        let mut keys = BTreeSet::new();
        for key in ordered.into_iter().chain(narrow) {
            if keys.len() >= MAX_LOOKUP_KEYS {
                break;
            }
            keys.insert(key);
        }
        let words = terms.iter().filter(|t| !GENERIC_STEMS.contains(*t));
        Filing { keys, words: WordSignature::of(words) }
    }
}

/// The whole-word forms a name goes by: itself, and every run of its words from its start or
/// to its end ("orion api" is also "orion" and "api"), as [`same_name`](super::names::same_name) compares names.
/// Numbers alone are not names ("pixel 7" is not "7"), nor are titles and the nouns that name
/// a kind of thing ("dr", "project"): under one of those would be filed every Dr and every
/// project, and a lookup reading the latest few would find none in particular. The speaker and
/// someone named through someone else ("maya's parents") have one form.
fn name_forms(key: &str) -> Vec<String> {
    // A group acts on its member's things ("Lena's team moved the retro"): under the member too.
    if let Some(member) = group_member(key) {
        return vec![key.to_owned(), member.to_owned()];
    }
    if key == SPEAKER || is_relation(key) {
        return vec![key.to_owned()];
    }
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    let mut forms = vec![key.to_owned()];
    for n in 1..words.len() {
        forms.push(words[..n].join(" "));
        forms.push(words[words.len() - n..].join(" "));
    }
    forms.retain(|f| {
        f == key
            || (f.chars().any(char::is_alphabetic)
                && !english::TITLES.contains(&f.as_str())
                && !NAME_TITLES.contains(&f.as_str()))
    });
    forms.sort();
    forms.dedup();
    forms
}

/// The keys a memory is filed under for its claims: each claim's subject, in every whole-word
/// form, with the claim's attribute (`c:maya|residence`, `c:maya chen|residence`), and the
/// subject alone (`cs:maya`), where an ending by value ("left Stripe", attribute unknown) looks.
pub fn claim_keys(claims: &[crate::claims::Claim]) -> BTreeSet<LookupKey> {
    let mut keys = BTreeSet::new();
    for claim in claims.iter().filter(|c| c.attribute != "*") {
        for form in claim_subject_forms(&claim.subject.key) {
            keys.insert(LookupKey(format!("c:{form}|{}", claim.attribute)));
            keys.insert(LookupKey(format!("cs:{form}")));
        }
    }
    keys
}

/// The key every memory with a claim about the subject of `key` is filed under (a profile's
/// lookup): "kofi" finds Kofi's memories and Kofi Mensah's, whose forms include it.
pub fn claims_about(key: &str) -> BTreeSet<LookupKey> {
    BTreeSet::from([LookupKey(format!("cs:{key}"))])
}

/// The keys the memories a new memory's claims may retire or flag are filed under: the same
/// subject forms with the same attribute, and for an ending by value, the subject's.
pub fn claims_looked_up_by(claims: &[crate::claims::Claim]) -> BTreeSet<LookupKey> {
    let mut keys = BTreeSet::new();
    for claim in claims {
        for form in claim_subject_forms(&claim.subject.key) {
            if claim.attribute == "*" {
                keys.insert(LookupKey(format!("cs:{form}")));
            } else {
                keys.insert(LookupKey(format!("c:{form}|{}", claim.attribute)));
            }
        }
    }
    keys
}

/// A claim subject's forms: the whole key, and for a name of several words each run of them
/// at its start or end ("maya chen": "maya", "chen"), so "Maya" finds "Maya Chen" (a subject
/// that is only maybe the same, which the decision flags rather than retires). The first
/// person and relations ("maya's sister") have one form.
fn claim_subject_forms(key: &str) -> Vec<String> {
    if key.starts_with('@') || key.contains("'s ") {
        return vec![key.to_owned()];
    }
    name_forms(key)
}

/// The content words a memory's signature holds: all but the generic ones, the longest first
/// when there are more than [`SIGNATURE_TERMS`] (long words name things; short ones are often
/// verbs in passing), so the bits stay sparse enough to tell memories apart.
fn signature_terms(terms: &BTreeSet<String>) -> Vec<&String> {
    let mut kept: Vec<&String> = terms.iter().filter(|t| !GENERIC_STEMS.contains(*t)).collect();
    kept.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    kept.truncate(SIGNATURE_TERMS);
    kept
}

/// The MinHash band keys of a set of words: for each band, the two words that hash lowest under
/// that band's hash. A set of at most two words is its own single key.
fn bands(terms: &BTreeSet<String>) -> impl Iterator<Item = LookupKey> + '_ {
    let small = terms.len() <= ROWS_PER_BAND;
    let count = if terms.is_empty() {
        0
    } else if small {
        1
    } else {
        BANDS
    };
    (0..count).map(move |band| {
        if small {
            let all: Vec<&str> = terms.iter().map(String::as_str).collect();
            return LookupKey(format!("b:{}", all.join(" ")));
        }
        let mut ranked: Vec<(u64, &str)> = terms.iter().map(|t| (band_hash(band, t), t.as_str())).collect();
        ranked.sort_unstable();
        let picked: Vec<&str> = ranked.iter().take(ROWS_PER_BAND).map(|(_, t)| *t).collect();
        LookupKey(format!("b{band}:{}", picked.join(" ")))
    })
}

/// A word's hash under band `band`: FNV-1a seeded by the band, then mixed (splitmix64's
/// finaliser) so that the bands order words independently. Stable across builds and machines,
/// since stored keys depend on it.
fn band_hash(band: u64, word: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ band.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for byte in word.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares_a_key(old: &str, new: &str) -> bool {
        let filed = Claim::read(old).filed_under().keys;
        Claim::read(new).looked_up_by().keys.iter().any(|k| filed.contains(k))
    }

    #[test]
    fn names_go_by_their_whole_word_forms() {
        assert_eq!(name_forms("maya"), ["maya"]);
        assert_eq!(name_forms("daniel wu"), ["daniel", "daniel wu", "wu"]);
        assert_eq!(name_forms("pixel 7"), ["pixel", "pixel 7"]);
        assert_eq!(name_forms("maya's parents"), ["maya's parents"]);
        assert_eq!(name_forms(SPEAKER), [SPEAKER]);
        assert_eq!(name_forms("dr linda park"), ["dr linda", "dr linda park", "linda park", "park"]);
        assert_eq!(name_forms("project atlas"), ["atlas", "project atlas"]);
        assert_eq!(name_forms("new york"), ["new york", "york"]);
        assert_eq!(name_forms("lena's team"), ["lena's team", "lena"]);
        assert_eq!(name_forms("grandma rose"), ["grandma", "grandma rose", "rose"]);
    }

    /// Updates share a key with what they update: the lookup finds the memories a change may
    /// replace or repeat.
    #[test]
    fn updates_are_found_by_a_key() {
        for (old, new) in [
            ("Maya lives in Porto with her two cats.", "Maya just moved to Amsterdam for her new job."),
            ("I live in Porto.", "I moved to Amsterdam last month."),
            ("Tom works as a backend engineer at Stripe.", "Tom left Stripe and now works at Anthropic."),
            ("The Atlas budget for this year is 200,000 dollars.", "Finance cut the Atlas budget to 150,000 dollars."),
            ("Orion's API rate limit is 100 requests per minute.", "We raised the Orion API rate limit to 300."),
            ("Omar's manager is Linda Park.", "After the reorg Omar reports to Daniel Wu."),
            ("Kenji is learning Spanish on Duolingo.", "Kenji dropped Spanish and is now learning Korean."),
            ("user: my daughter Zoe is in third grade", "user: Zoe started fourth grade this week"),
            ("Ana's favourite coffee is a flat white.", "Ana quit coffee entirely in August."),
            ("Lena's team holds its retro on Fridays.", "Lena moved the retro to Thursdays."),
            ("Grandma lives in Leeds.", "Grandma Rose moved to York."),
        ] {
            assert!(shares_a_key(old, new), "{new:?} finds {old:?}");
        }
    }

    /// A key finds candidates, not replacements: "Maya's parents" name Maya, so her memories
    /// are read (and the claims' rules turn them down); someone never named is never read.
    #[test]
    fn someone_else_is_filed_elsewhere() {
        assert!(!shares_a_key("Maya lives in Porto.", "Tom just moved to Lisbon."));
        assert!(!shares_a_key("I live in Porto.", "Tom just moved to Lisbon."));
        assert!(shares_a_key("Maya lives in Porto.", "Maya's parents moved to Lisbon."));
    }

    /// The signature ranks what shares the words a change acts on above what only shares the
    /// name.
    #[test]
    fn a_signature_counts_shared_words() {
        let new = Claim::read("Kenji dropped Spanish and is now learning Korean.").looked_up_by().words;
        let spanish = Claim::read("Kenji is learning Spanish on Duolingo.").filed_under().words;
        let cooking = Claim::read("Kenji cooks ramen on Fridays.").filed_under().words;
        assert!(new.shared(spanish) >= 4, "{}", new.shared(spanish));
        assert!(new.shared(spanish) > new.shared(cooking));
        assert_eq!(WordSignature::default().shared(spanish), 0);
    }

    #[test]
    fn notes_about_no_one_that_say_the_same_share_a_band() {
        let old = "we agreed the deploy freeze starts friday and lasts through the holidays";
        let again = "we agreed the deploy freeze starts friday and lasts through the holidays, ok";
        assert!(shares_a_key(old, again));
        assert!(!shares_a_key(old, "the coffee machine on the third floor is broken again"));
    }

    /// The keys are part of what a store holds: a change here must come with a rebuild of
    /// stored keys ([`LOOKUP_KEYS_VERSION`]).
    #[test]
    fn band_hashes_are_stable() {
        assert_eq!(band_hash(0, "coffee"), 0x24ba_fdb1_434f_06b0);
        assert_ne!(band_hash(0, "coffee"), band_hash(1, "coffee"));
    }
}
