//! Who a text is about: the names it mentions (capitalised words that are names, not openers,
//! titles or calendar words), the speaker, relations and groups, joint subjects, and the subject of
//! a clause.

use crate::lexicon::english::{self, CHAT_PARTIES, FIRST_PERSON_SINGULAR, is_calendar_word};
use crate::text::is_stopword;

use super::{Mention, SPEAKER};

/// Adjectives that open a sentence about a common noun ("New landlord is …").
pub(super) const DESCRIBING_OPENERS: &[&str] = &["new", "old", "former", "current", "latest", "previous", "same"];

/// Verbs that make their subject a source rather than what is talked about.
pub(super) const SPEECH_VERBS: &[&str] =
    &["claims", "mentioned", "said", "says", "tells", "thinks", "told", "wrote", "writes"];

/// The member a group subject belongs to: "ivan" for "ivan's team". A group (the lexicon's
/// [`english::GROUPS`]) acts on its members' shared things ("Ivan's team moved standup to
/// 10:15" is about Ivan's standup), never on their own slots ("Maya's team moved to Berlin" is
/// not Maya moving).
pub(super) fn group_member(subject: &str) -> Option<&str> {
    let (member, relation) = subject.split_once("'s ")?;
    english::GROUPS.contains(&relation).then_some(member)
}

/// Words that join a subject to what it is.
pub(super) const COPULAS: &[&str] = &["is", "was", "are", "were"];

/// Words after which a name is someone spoken to ("thanks, Mel", "tell Maya I moved").
pub(super) const INTERJECTIONS: &[&str] = &[
    "ask",
    "asked",
    "aw",
    "aww",
    "bye",
    "congrats",
    "congratulations",
    "dear",
    "ha",
    "haha",
    "hello",
    "hey",
    "hi",
    "lol",
    "oh",
    "ok",
    "okay",
    "remind",
    "reminded",
    "sorry",
    "tell",
    "thank",
    "thanks",
    "welcome",
    "woohoo",
    "wow",
    "yeah",
    "yes",
    "yay",
    "you",
];

/// Words that open a line whose "I" was dropped: verbs and the adverbs before them.
pub(super) const IMPLIED_I_OPENERS: &[&str] = &[
    "am", "began", "bought", "finally", "found", "gave", "got", "had", "hurt", "just", "left", "lost", "made", "met",
    "quit", "sold", "spent", "started", "still", "took", "went", "was",
];

/// Words that open a line with a subject of its own, so it has not dropped an "I".
pub(super) const IMPLIED_SUBJECTS: &[&str] = &[
    "a", "an", "he", "her", "here", "his", "it", "its", "our", "she", "that", "the", "their", "there", "these", "they",
    "this", "those", "we", "you", "your",
];

/// A word that names someone through someone else, or something someone has that is not
/// them: kin, peers, the groups they belong to, their pets ("Maya's *parents*", "Ivan's
/// *team*"). A possessive before one makes a subject of its own.
pub(super) fn is_relation_word(word: &str) -> bool {
    english::KIN.contains(&word)
        || english::PARTNERS.contains(&word)
        || english::PEERS.contains(&word)
        || english::GROUPS.contains(&word)
        || RELATED_PETS.contains(&word)
}

/// The pets a possessive names ("Maya's *dog*"): someone's, not them.
pub(super) const RELATED_PETS: &[&str] = &["cat", "dog", "pets"];

/// A word that names someone by the role they fill for another ("Omar's *manager*"): a
/// possessive before one is about the role's holder, unless the clause says who fills it.
/// Partners are roles too ("Maya's wife is Ana" says who fills it).
pub(super) fn is_role_word(word: &str) -> bool {
    english::WORK_ROLES.contains(&word)
        || english::SERVICE_ROLES.contains(&word)
        || english::ROLES_THAT_ALSO_NAME_THINGS.contains(&word)
        || english::is_role_held_one_at_a_time(word)
}

/// A transcript label that is no one's name: the person's own or a program's.
fn is_label(word: &str) -> bool {
    english::is_person_label(word) || english::is_program_label(word)
}

pub(super) fn trim_word(word: &str) -> &str {
    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .trim_end_matches(['\'', '’'])
        .trim_start_matches(['\'', '’'])
}

/// The word without a possessive ending, and whether it had one.
pub(super) fn strip_possessive(word: &str) -> (&str, bool) {
    for ending in ["'s", "’s", "s'", "s’"] {
        if let Some(stem) = word.strip_suffix(ending) {
            let keep = if ending.starts_with('s') { &word[..stem.len() + 1] } else { stem };
            return (keep, true);
        }
    }
    (word, false)
}

pub(super) fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) if first.is_uppercase() => word.chars().filter(|c| c.is_alphabetic()).count() > 1,
        // iPhone, eBay: a brand written with its capital inside.
        Some(first) if first.is_lowercase() => chars.clone().next().is_some_and(char::is_uppercase),
        _ => false,
    }
}

/// The names in a text: runs of capitalised words (with a number that belongs to them, as in
/// "Pixel 7"), except sentence openers and calendar words.
pub(super) fn find_mentions(raw: &[&str]) -> Vec<Mention> {
    let mut mentions = Vec::new();
    let mut sentence_start = true;
    let mut i = 0;
    // "Caroline: I …" is Caroline speaking: her "I" is her, and her label is not a mention.
    let label = raw.first().map(|w| w.trim_end_matches(':')).filter(|name| {
        raw[0].ends_with(':')
            && is_capitalised(name)
            && name.chars().all(char::is_alphabetic)
            && !english::NOT_NAMES.contains(&name.to_lowercase().as_str())
            && !is_label(&name.to_lowercase())
    });
    if label.is_some() {
        i = 1;
    }
    let speaker = match label {
        Some(name) => Mention { name: name.to_owned(), key: name.to_lowercase(), word: 0 },
        None => Mention { name: "the speaker".to_owned(), key: SPEAKER.to_owned(), word: 0 },
    };
    while i < raw.len() {
        let word = trim_word(raw[i]);
        let ends_sentence = |w: &str| w.ends_with(['.', '!', '?', ':', ';']) || w.ends_with("—");
        let (bare, possessive) = strip_possessive(word);
        let lower = bare.to_lowercase();
        let opener = sentence_start;
        // "The user prefers …", "User's sister …": a host's memory naming the person.
        let opening: Vec<String> = raw[i..].iter().take(3).map(|w| trim_word(w).to_lowercase()).collect();
        let opening: Vec<&str> = opening.iter().map(String::as_str).collect();
        // ("User: …" is a transcript's label, read above.)
        if opener
            && let Some((len, _)) = english::third_person_reference(&opening)
            && !raw[i + len - 1].ends_with(':')
        {
            i += len - 1;
            if !mentions.iter().any(|m: &Mention| m.key == speaker.key) {
                mentions.push(Mention { word: i, ..speaker.clone() });
            }
            sentence_start = false;
            i += 1;
            continue;
        }
        let is_first_person = FIRST_PERSON_SINGULAR.contains(&word.to_lowercase().as_str());
        let previous = if i > 0 { trim_word(raw[i - 1]).to_lowercase() } else { String::new() };
        // "Thanks, Mel!", "Hey Gina!", "Caroline, so glad…": a name said to someone, who is
        // not what the message is about.
        let set_off = i > 0 && raw[i - 1].ends_with(',') && raw[i].ends_with([',', '!', '.', '?']);
        let vocative =
            INTERJECTIONS.contains(&previous.as_str()) || (opener && raw[i].ends_with([',', '!'])) || set_off;
        // "New landlord is …", "Old car was …": an adjective opening a sentence, before a common
        // noun; "New York" and "Old Trafford" go on capitalised.
        let describes_a_noun = opener
            && DESCRIBING_OPENERS.contains(&lower.as_str())
            && raw.get(i + 1).is_some_and(|next| trim_word(next).chars().next().is_some_and(char::is_lowercase));
        if is_first_person {
            if !mentions.iter().any(|m: &Mention| m.key == speaker.key) {
                mentions.push(Mention { word: i, ..speaker.clone() });
            }
        } else if !vocative
            && !describes_a_noun
            && is_capitalised(bare)
            && !is_calendar_word(&lower)
            && !(opener
                && (english::opens_without_being_a_name(&lower)
                    || is_stopword(&lower)
                    || opens_without_a_name(raw.get(i + 1).copied())))
            && !CHAT_PARTIES.contains(&lower.as_str())
        {
            let start = i;
            let mut names = vec![bare.to_owned()];
            // "Dr. Okafor" is one name: a title's period ends neither the name nor the sentence.
            let titled = |w: &str| english::TITLES.contains(&trim_word(w).to_lowercase().as_str()) && w.ends_with('.');
            let mut ended = possessive || (ends_sentence(raw[i]) && !titled(raw[i])) || raw[i].ends_with(',');
            while !ended && i + 1 < raw.len() {
                let next = trim_word(raw[i + 1]);
                let (next_bare, next_possessive) = strip_possessive(next);
                let number = next_bare.chars().all(|c| c.is_ascii_digit()) && !next_bare.is_empty();
                let name = is_capitalised(next_bare) && !is_calendar_word(&next_bare.to_lowercase());
                if !(number || name) || names.len() >= 4 {
                    break;
                }
                names.push(next_bare.to_owned());
                i += 1;
                ended =
                    next_possessive || (ends_sentence(raw[i]) && !titled(raw[i])) || raw[i].ends_with(',') || number;
            }
            let name = names.join(" ");
            let key = name.to_lowercase();
            if !mentions.iter().any(|m: &Mention| m.key == key) {
                mentions.push(Mention { name, key, word: start });
            }
        }
        sentence_start = ends_sentence(raw[i]) || CHAT_PARTIES.contains(&word.to_lowercase().as_str());
        i += 1;
    }
    // A transcript line of the person that names no one, or drops its "I" ("user: just moved
    // to Denver"), speaks of them.
    let labelled = raw.first().is_some_and(|w| matches!(w.to_lowercase().as_str(), "user:" | "human:"));
    // Only a line that opens with a verb or an adverb has dropped its "I" ("just moved…",
    // "hurt my knee…"); "maya moved…" written in lower case names someone else.
    let implied_i = raw.get(1).is_some_and(|w| {
        let w = trim_word(w).to_lowercase();
        !IMPLIED_SUBJECTS.contains(&w.as_str()) && (IMPLIED_I_OPENERS.contains(&w.as_str()) || w.ends_with("ed"))
    });
    if labelled && implied_i && !mentions.iter().any(|m| m.key == SPEAKER) {
        mentions.insert(0, Mention { name: "the speaker".to_owned(), key: SPEAKER.to_owned(), word: 0 });
    }
    mentions
}

/// Whether `clause` opens with the name of someone other than `subject`.
pub(super) fn opens_with_someone_else(clause: &str, mentions: &[Mention], subject: Option<&str>) -> bool {
    let Some(first) = clause.split_whitespace().next() else { return false };
    let first = strip_possessive(trim_word(first)).0.to_lowercase();
    mentions.iter().any(|m| {
        m.key.split(' ').next() == Some(first.as_str())
            && m.key != SPEAKER
            && subject.is_some_and(|s| !same_name(&m.key, s) && !s.starts_with(&format!("{}'s", m.key)))
    })
}

/// Whether `clause` opens by referring to someone other than `subject` without naming them:
/// a relation ("Maya came over. *Her brother* just moved to Lisbon.") or a pronoun after
/// someone else was named ("Maya had lunch with Tom. *He* just moved to Lisbon."). A pronoun
/// with no one else named before it is the subject ("Ran into Wen. She left nursing…"); a
/// name after "at", "in", "from"… is a place or a firm, which no pronoun stands for.
pub(super) fn refers_to_someone_else(text: &str, clause: &str, mentions: &[Mention], subject: Option<&str>) -> bool {
    let Some(subject) = subject else { return false };
    let mut opening = clause.split_whitespace().map(|w| trim_word(w).to_lowercase());
    let first = opening.next().unwrap_or_default();
    if matches!(first.as_str(), "his" | "her" | "their" | "my" | "our") {
        let next = opening.next().unwrap_or_default();
        let next = strip_possessive(&next).0;
        return (is_relation_word(next) || is_role_word(next)) && !is_relation(subject);
    }
    if !THIRD_PERSON_OPENERS.contains(&first.as_str()) {
        return false;
    }
    let words: Vec<String> = text.split_whitespace().map(|w| trim_word(w).to_lowercase()).collect();
    // `clause` is a slice of `text`: the words before it are those before its start.
    let clause_start = (clause.as_ptr() as usize).checked_sub(text.as_ptr() as usize);
    let before = clause_start.and_then(|at| text.get(..at)).map_or(0, |b| b.split_whitespace().count());
    mentions.iter().any(|m| {
        let place = m.word.checked_sub(1).and_then(|i| words.get(i)).is_some_and(|w| PLACE_WORDS.contains(&w.as_str()));
        m.word < before && m.key != SPEAKER && !same_name(&m.key, subject) && !place
    })
}

/// Pronouns that open a clause about a person: see [`refers_to_someone_else`].
pub(super) const THIRD_PERSON_OPENERS: &[&str] =
    &["he", "she", "they", "he's", "she's", "they're", "he'd", "she'd", "they'd", "they've", "he'll", "she'll"];

/// Words before a name that make it a place or an organisation rather than a person.
pub(super) const PLACE_WORDS: &[&str] =
    &["at", "in", "from", "on", "near", "of", "to", "for", "into", "via", "about", "the"];

/// Whether the word after a capitalised sentence opener shows the opener is no name: a verb's
/// preposition ("Ran into Wen", "Went to…"), a plural's verb ("Pipelines are faster", a
/// name takes "is"), a task's end ("Cutover done."), or a heading's noun ("Funny thing: …",
/// "Bad news on …").
pub(super) fn opens_without_a_name(next: Option<&str>) -> bool {
    let Some(next) = next else { return false };
    let next = trim_word(next).to_lowercase();
    OPENER_FOLLOWERS.contains(&next.as_str()) || HEADING_NOUNS.contains(&next.as_str())
}

/// Nouns that make a capitalised opener a heading: "Funny thing:", "Bad news on …", "Quick
/// update —", "Long week.".
pub(super) const HEADING_NOUNS: &[&str] =
    &["thing", "things", "news", "update", "updates", "note", "reminder", "question", "week", "day", "story", "tip"];

/// Words that follow a verb or a plural noun, never a name: see [`opens_without_a_name`].
pub(super) const OPENER_FOLLOWERS: &[&str] =
    &["into", "to", "are", "were", "have", "look", "looked", "seem", "seemed", "done", "finished", "complete"];

/// The first mention, or the person a possessive of it points at ("Maya's parents").
pub(super) fn subject_of(raw: &[&str], words: &[String], mentions: &[Mention]) -> Option<String> {
    let first = mentions.iter().min_by_key(|m| m.word)?;
    let len = first.key.split_whitespace().count();
    let last = raw.get(first.word + len - 1).map(|w| trim_word(w)).unwrap_or_default();
    let possessive = strip_possessive(last).1 || words[first.word] == "my";
    // "Maya's sister's manager": the relation, whatever follows it.
    let next = words.get(first.word + len).map(|w| strip_possessive(w).0);
    let after = words.get(first.word + len + 1).map(String::as_str);
    // "Omar's manager is Linda", "… has been Wen Li since March": the role filled, about Omar.
    // "My boss is moving to Berlin" is the boss doing something, not the role filled.
    let then = words.get(first.word + len + 2);
    let filled = (after.is_some_and(|w| COPULAS.contains(&w)) && !then.is_some_and(|w| w.ends_with("ing")))
        || (after == Some("has") && then.is_some_and(|w| w == "been"));
    let someone_else = next.is_some_and(|n| if is_role_word(n) { !filled } else { is_relation_word(n) });
    if possessive
        && someone_else
        && let Some(next) = next
        // "Ben's landlord says the rent…" is the landlord as a source, about Ben.
        && !after.is_some_and(|w| SPEECH_VERBS.contains(&w))
    {
        // "my daughter Zoe": the name that follows is the subject.
        let named = mentions.iter().find(|m| m.word == first.word + len + 1);
        return Some(named.map(|m| m.key.clone()).unwrap_or_else(|| format!("{}'s {next}", first.key)));
    }
    Some(first.key.clone())
}

/// Two names for one entity: equal, or one the other with whole words added ("Orion" and
/// "Orion API", "Pixel" and "Pixel 7").
pub(super) fn same_name(a: &str, b: &str) -> bool {
    let longer = |a: &str, b: &str| {
        a == b
            || a.strip_prefix(b).is_some_and(|rest| rest.starts_with(' '))
            || a.strip_suffix(b).is_some_and(|rest| rest.ends_with(' '))
    };
    longer(a, b) || longer(b, a)
}

/// A subject such as "maya's parents": someone named through someone else.
pub(super) fn is_relation(subject: &str) -> bool {
    subject.contains("'s ")
}
