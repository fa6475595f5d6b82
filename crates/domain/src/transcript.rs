//! Transcript lines: who a line of a multi-party chat log says is speaking ("Jon: lost my job
//! yesterday"), so that one speaker's "my job" is never taken for another's.
//!
//! The label is content, not authority: the trusted caller still decides the actor (and so
//! what the line may do); the label only says whose first person "I" and "my" are. A label is
//! read only when it looks like a name — one to three capitalised words right before a colon
//! at the very start — and is none of the words people put before a colon in notes ("Note:",
//! "Update:", "TODO:", "Q:", "Monday:"), so a note is never mistaken for a speaker.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::lexicon::english;

/// A line of a transcript, split at its speaker label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TranscriptLine<'t> {
    /// The speaker's name, as written ("Jon", "Mary Ann").
    pub speaker: &'t str,
    /// What they said, after the colon.
    pub said: &'t str,
}

/// The most words a speaker's name may have: "Mary Ann Lee" is a name, "The plan for Monday"
/// is a heading.
const MAX_NAME_WORDS: usize = 3;

/// Words that open a note's heading, not a person's name, in the form they take before a
/// colon (compared case-insensitively; roles and dates are the lexicon's, see [`not_a_speaker`]).
static NOT_SPEAKERS: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    [
        "you",
        "us",
        "them",
        // Note headings.
        "note",
        "notes",
        "update",
        "updates",
        "reminder",
        "todo",
        "to-do",
        "summary",
        "subject",
        "question",
        "answer",
        "edit",
        "correction",
        "important",
        "warning",
        "caution",
        "decision",
        "action",
        "actions",
        "status",
        // A life's headings ("Work: …", "Career change: …"), which no one is named.
        "work",
        "career",
        "job",
        "home",
        "life",
        "health",
        "family",
        "travel",
        "school",
        "money",
        "finance",
        "change",
        "changes",
        "project",
        "personal",
        "misc",
        "other",
        "result",
        "results",
        "error",
        "tip",
        "example",
        "context",
        "background",
        "goal",
        "goals",
        "task",
        "tasks",
        "problem",
        "solution",
        "fix",
        "issue",
        "bug",
        "idea",
        "ideas",
        "thought",
        "thoughts",
        "re",
        "fwd",
        "fw",
        "ps",
        "fyi",
        "info",
        "news",
        "plan",
        "plans",
        "agenda",
        "minutes",
        "recap",
        "overview",
        "details",
        "source",
        "sources",
        "link",
        "links",
        "quote",
        "request",
        "response",
        "reply",
        "feedback",
        "comment",
        "comments",
        "observation",
        "lesson",
        "takeaway",
        "takeaways",
        "conclusion",
        "next",
        "step",
        "steps",
        "also",
        "and",
        "but",
        "so",
        "then",
        "well",
        "ok",
        "okay",
        "yes",
        "no",
        "hi",
        "hey",
        "hello",
        "dear",
        "attention",
        "pros",
        "cons",
        "price",
        "address",
        "phone",
        "email",
        "name",
        "date",
        "time",
        "location",
        "place",
        "where",
        "when",
        "who",
        "what",
        "why",
        "how",
        "here",
        "there",
        "this",
        "that",
        "it",
        "the",
        "a",
        "an",
        "my",
        "our",
        "your",
        "new",
        "old",
        // Times, which head a diary's entries.
        "today",
        "tonight",
        "yesterday",
        "tomorrow",
        "morning",
        "afternoon",
        "evening",
        "night",
        "weekend",
        "week",
    ]
    .into_iter()
    .collect()
});

/// Whether a word of a label (any case) says the label is no one's name: one of
/// [`NOT_SPEAKERS`], a role (the person's or a program's turn is the actor's business, not a
/// name) or a date.
fn not_a_speaker(word: &str) -> bool {
    let lower = word.to_lowercase();
    NOT_SPEAKERS.contains(lower.as_str())
        || english::is_person_label(&lower)
        || english::is_program_label(&lower)
        || english::is_calendar_word(&lower)
}

/// Whether `text` opens with the label of a turn that is not the caller's own speech
/// ("Assistant: …", "System: …"): its "I" and "my" are nobody the caller vouches for.
pub fn opens_with_a_program_turn(text: &str) -> bool {
    let text = text.trim_start();
    let Some((label, rest)) = text.split_once(':') else { return false };
    rest.starts_with(char::is_whitespace) && english::is_program_label(&label.trim().to_lowercase())
}

/// The speaker label a transcript line opens with, and what follows it up to the next line
/// that opens with a label of its own (a pasted log's next turn is someone else's); `None`
/// when the text does not open with a name and a colon.
pub fn transcript_speaker(text: &str) -> Option<TranscriptLine<'_>> {
    let line = opening_label(text)?;
    let mut end = line.said.len();
    let mut offset = 0;
    for next in line.said.split_inclusive('\n') {
        if offset > 0 && opening_label(next).is_some() {
            end = offset;
            break;
        }
        offset += next.len();
    }
    Some(TranscriptLine { speaker: line.speaker, said: line.said[..end].trim_end() })
}

/// [`transcript_speaker`] for the first label only, with all the text after it.
fn opening_label(text: &str) -> Option<TranscriptLine<'_>> {
    let text = text.trim_start();
    let colon = text.find(':')?;
    let (label, rest) = (&text[..colon], &text[colon + 1..]);
    // "Jon: hi", not "http://…" or "12:30".
    if !rest.starts_with(char::is_whitespace) || rest.trim().is_empty() {
        return None;
    }
    let words: Vec<&str> = label.split(' ').collect();
    if words.len() > MAX_NAME_WORDS || !words.iter().all(|w| is_name_word(w)) {
        return None;
    }
    if words.iter().any(|w| not_a_speaker(w)) {
        return None;
    }
    Some(TranscriptLine { speaker: label, said: rest.trim_start() })
}

/// A capitalised word of letters (an apostrophe, a hyphen or a dot inside allowed: "O'Neil",
/// "Jean-Luc", "St.") with at least one lowercase letter, so "TODO" or "FYI" is no name.
fn is_name_word(word: &str) -> bool {
    let mut chars = word.chars();
    let Some(first) = chars.next() else { return false };
    first.is_uppercase()
        && word.chars().all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-' | '.'))
        && word.chars().any(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn a_named_speaker_opens_a_transcript_line() {
        for (text, speaker, said) in [
            ("Jon: Lost my job as a banker yesterday.", "Jon", "Lost my job as a banker yesterday."),
            ("Mary Ann: my team won", "Mary Ann", "my team won"),
            ("  Jean-Luc:   on my way", "Jean-Luc", "on my way"),
            ("O'Neil: thanks!", "O'Neil", "thanks!"),
            ("Zoë: ça va", "Zoë", "ça va"),
            // A pasted log: the line ends where the next speaker's begins.
            ("Jon: hi\nhow are you?\nGina: fine", "Jon", "hi\nhow are you?"),
            ("Jon: the plan:\n- eat: soon", "Jon", "the plan:\n- eat: soon"),
        ] {
            assert_eq!(transcript_speaker(text), Some(TranscriptLine { speaker, said }), "{text:?}");
        }
    }

    #[test]
    fn notes_roles_times_and_other_colons_are_no_speaker() {
        for text in [
            "Note: my job is at Acme now",
            "Update: I moved to Berlin",
            "TODO: call the bank",
            "FYI: the deploy is at noon",
            "User: I prefer tea",
            "assistant: you might like jazz",
            "Monday: dentist at 3",
            "Today: gym",
            "Q: where do I live?",
            "my favourite colour: green",
            "The plan for the week: rest",
            "See https://example.com",
            "Meet at 12:30 tomorrow",
            "Jon:",
            "Jon:no space",
            "Jon Paul George Ringo: four words is a heading",
            "Project2: done",
            ": nothing before",
        ] {
            assert_eq!(transcript_speaker(text), None, "{text:?}");
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Whatever the text, a speaker found is a prefix of it and what was said follows it.
        #[test]
        fn the_label_and_the_words_are_the_text(text in "[A-Za-z :'.-]{0,40}") {
            if let Some(line) = transcript_speaker(&text) {
                let opened = text.trim_start();
                prop_assert!(opened.starts_with(line.speaker));
                prop_assert!(opened[line.speaker.len()..].starts_with(':'));
                prop_assert!(opened[line.speaker.len() + 1..].trim_start().starts_with(line.said));
                prop_assert!(!line.said.is_empty());
                prop_assert!(line.speaker.split(' ').count() <= MAX_NAME_WORDS);
            }
        }

        /// A capitalised name that is no heading word, a colon and words is always a speaker's
        /// line, and a second speaker's line after it is never part of what the first said.
        #[test]
        fn a_name_and_a_colon_is_a_speaker(
            first in "[A-Z][a-z]{3,9}",
            second in "[A-Z][a-z]{3,9}",
            said in "[a-z][a-z ,.]{0,30}",
        ) {
            prop_assume!(!not_a_speaker(&first));
            prop_assume!(!not_a_speaker(&second));
            let text = format!("{first}: {said}\n{second}: and you?");
            let line = transcript_speaker(&text);
            prop_assert_eq!(line.map(|l| l.speaker), Some(first.as_str()));
            prop_assert_eq!(line.map(|l| l.said), Some(said.trim_end()));
        }
    }
}
