//! The words of each language that more than one reader needs, written once: who speaks and
//! who is spoken of (pronouns, transcript labels, kin, colleagues and roles, titles), words
//! that look like names but are not, and the calendar and counting words.
//!
//! Every reader of text — the claims reader ([`crate::claims`]), reconciliation
//! ([`crate::reconcile`]), the heuristics ([`crate::heuristics`]), time expressions
//! ([`crate::time_expr`]) and transcripts ([`crate::transcript`]) — takes these lists from here
//! and keeps only the words particular to its own reading (a change cue, an attribute's
//! verbs). So when a word is added (a kin term, a program's label), every reader learns it at
//! once, and two readers cannot disagree about whether "Agent:" is a person or "Today" a name.
//! A test (`agreement.rs`) holds the readers to one answer on a frozen corpus.

pub mod chinese;
pub mod english;

/// A regex alternation of `words` (a non-capturing group), longest first so a longer phrase
/// wins over its first word, each word escaped.
pub fn alternation<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    let mut words: Vec<&str> = words.into_iter().collect();
    words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    words.dedup();
    let escaped: Vec<String> = words.into_iter().map(regex::escape).collect();
    format!("(?:{})", escaped.join("|"))
}

#[cfg(test)]
mod tests {
    use super::alternation;

    #[test]
    fn an_alternation_tries_the_longer_phrase_first() {
        let pattern = regex::Regex::new(&format!("^{}", alternation(["best", "best friend", "c++"]))).unwrap();
        assert_eq!(pattern.find("best friend of mine").unwrap().as_str(), "best friend");
        assert_eq!(pattern.find("c++ dev").unwrap().as_str(), "c++");
    }
}

#[cfg(test)]
mod agreement;
