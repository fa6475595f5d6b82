//! The English words the readers share. Lists are lowercase; a reader lowercases a word before
//! it looks it up.
//!
//! Why these lists hold beyond the sentences they were tried on: pronouns, transcript labels,
//! month and weekday names and number words are closed classes; kin terms are nearly closed;
//! colleagues, peers and the roles people hold for someone (a doctor, a landlord) are open but grow
//! slowly, and a missing one costs only a reading that stays "distinct".

/// "I" and its forms: the speaker alone.
pub const FIRST_PERSON_SINGULAR: &[&str] =
    &["i", "i'm", "im", "i've", "ive", "i'd", "i'll", "me", "my", "mine", "myself"];

/// "We" and its forms: the speaker with others (a team, a household).
pub const FIRST_PERSON_PLURAL: &[&str] = &["we", "we're", "we've", "we'd", "we'll", "us", "our", "ours", "ourselves"];

/// "I" and "we" as a clause's subject, alone or joined to an auxiliary ("I'll", "we've"); the
/// forms joined to "am"/"are" ("I'm", "we're") are among them.
pub const FIRST_PERSON_SUBJECTS: &[&str] =
    &["i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll"];

/// Pronouns of a third person (someone named earlier, or no one in particular).
pub const THIRD_PERSON: &[&str] = &["he", "she", "him", "his", "her", "hers", "they", "them", "their", "he's", "she's"];

/// Transcript labels and words that stand for the person whose memory this is.
pub const PERSON_LABELS: &[&str] = &["user", "human", "me"];

/// Transcript labels of a program's turn: no one's statement about themselves.
pub const PROGRAM_LABELS: &[&str] = &["assistant", "system", "ai", "bot", "agent", "tool", "model"];

/// The words a text uses for the two sides of a chat (the person and the program), which are
/// neither names nor what a statement is about: the labels that are not also ordinary words
/// ("me", "agent", "tool", "model" are).
pub const CHAT_PARTIES: &[&str] = &["user", "human", "assistant", "system", "ai", "bot"];

/// Family, partners, friends and the people someone lives beside: a possessive before one of
/// these names someone else ("Maya's sister", "my flatmate").
pub const KIN: &[&str] = &[
    "sister",
    "sisters",
    "brother",
    "brothers",
    "sibling",
    "siblings",
    "twin",
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "parents",
    "wife",
    "husband",
    "partner",
    "spouse",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancee",
    "fiancé",
    "fiancée",
    "ex",
    "son",
    "daughter",
    "kid",
    "kids",
    "child",
    "children",
    "baby",
    "stepdad",
    "stepmom",
    "stepson",
    "stepdaughter",
    "stepsister",
    "stepbrother",
    "in-laws",
    "mother-in-law",
    "father-in-law",
    "cousin",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "niece",
    "nephew",
    "friend",
    "friends",
    "best friend",
    "bestie",
    "bff",
    "roommate",
    "flatmate",
    "flatmates",
    "housemate",
    "neighbor",
    "neighbors",
    "neighbour",
    "neighbours",
];

/// The people someone works beside, of whom they have many: a possessive before one names
/// someone else ("Maya's teammate").
pub const PEERS: &[&str] =
    &["colleague", "colleagues", "coworker", "coworkers", "co-worker", "teammate", "teammates", "employees"];

/// The people someone works for or who work for them, by the role they fill ("Omar's manager
/// is Linda Park" says who fills it, about Omar).
/// ("Employer" is not among them: it names a firm, and "my employer is Acme" says where
/// someone works.)
pub const WORK_ROLES: &[&str] = &["boss", "manager", "supervisor", "lead", "mentor", "assistant", "intern"];

/// People by the service they give someone ("my dentist", "Omar's landlord"). ("Editor" is
/// not among them: "my favourite editor is Zed" names a program.)
pub const SERVICE_ROLES: &[&str] = &[
    "doctor",
    "gp",
    "dentist",
    "therapist",
    "psychiatrist",
    "pediatrician",
    "paediatrician",
    "optometrist",
    "dermatologist",
    "cardiologist",
    "oncologist",
    "obgyn",
    "midwife",
    "physio",
    "physiotherapist",
    "vet",
    "trainer",
    "coach",
    "tutor",
    "teacher",
    "piano teacher",
    "student",
    "accountant",
    "lawyer",
    "agent",
    "advisor",
    "adviser",
    "realtor",
    "landlord",
    "landlady",
    "nanny",
    "babysitter",
    "dog walker",
    "cleaner",
    "hairdresser",
    "barber",
    "mechanic",
    "pm",
];

/// The roles a person has one of at a time, so a new name for one replaces the old ("my
/// manager is Linda" after "my manager is Dana"): not colleagues or friends, of whom people
/// have many. Each is also in [`KIN`], [`WORK_ROLES`] or [`SERVICE_ROLES`].
pub const ROLES_HELD_ONE_AT_A_TIME: &[&str] = &[
    "manager",
    "boss",
    "supervisor",
    "lead",
    "pm",
    "doctor",
    "gp",
    "dentist",
    "therapist",
    "psychiatrist",
    "pediatrician",
    "paediatrician",
    "optometrist",
    "dermatologist",
    "cardiologist",
    "oncologist",
    "obgyn",
    "midwife",
    "physio",
    "physiotherapist",
    "vet",
    "trainer",
    "coach",
    "tutor",
    "teacher",
    "piano teacher",
    "accountant",
    "lawyer",
    "agent",
    "advisor",
    "adviser",
    "realtor",
    "landlord",
    "landlady",
    "nanny",
    "babysitter",
    "dog walker",
    "cleaner",
    "hairdresser",
    "barber",
    "mechanic",
    "mentor",
    "partner",
    "wife",
    "husband",
    "spouse",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancee",
    "fiancé",
    "fiancée",
    "best friend",
];

/// Groups a person belongs to, whose moves are not the member's ("Ivan's team moved standup").
pub const GROUPS: &[&str] = &["band", "club", "company", "firm", "office", "school", "startup", "team"];

/// Titles written before a name ("Dr. Okafor", "Mr Petrov").
pub const TITLES: &[&str] = &["mr", "mrs", "ms", "miss", "dr", "prof"];

/// Words that open a sentence capitalised, or stand capitalised alone, without being a name:
/// articles, pronouns, question words, greetings, conjunctions, auxiliaries, imperatives
/// ("Remind", "Call") and words of time ("Today", "Last").
pub const NOT_NAMES: &[&str] = &[
    "a",
    "about",
    "actually",
    "after",
    "afterwards",
    "also",
    "an",
    "and",
    "are",
    "as",
    "ask",
    "at",
    "before",
    "but",
    "by",
    "call",
    "can",
    "check",
    "cool",
    "correction",
    "could",
    "did",
    "do",
    "does",
    "during",
    "email",
    "every",
    "finally",
    "for",
    "from",
    "get",
    "give",
    "good",
    "great",
    "he",
    "heads",
    "hello",
    "her",
    "here",
    "hey",
    "hi",
    "his",
    "how",
    "i",
    "if",
    "in",
    "is",
    "it",
    "its",
    "just",
    "keep",
    "last",
    "let",
    "make",
    "maybe",
    "meet",
    "my",
    "next",
    "nice",
    "no",
    "note",
    "now",
    "oh",
    "ok",
    "okay",
    "on",
    "or",
    "our",
    "please",
    "remember",
    "remind",
    "reminder",
    "say",
    "see",
    "send",
    "she",
    "should",
    "since",
    "so",
    "some",
    "sure",
    "take",
    "tell",
    "text",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "today",
    "tomorrow",
    "tonight",
    "update",
    "was",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "who",
    "why",
    "will",
    "with",
    "would",
    "wow",
    "yes",
    "yesterday",
    "you",
    "your",
];

/// Month names, January first.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Months as they are shortened ("Sept" as well as "Sep").
pub const MONTH_ABBREVIATIONS: &[&str] =
    &["jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"];

/// Weekday names, Monday first.
pub const WEEKDAYS: &[&str] = &["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Weekdays as they are shortened in notes ("Tues 4pm").
pub const WEEKDAY_ABBREVIATIONS: &[&str] =
    &["mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun"];

/// Number words, one first: a word's value is its place plus one.
pub const NUMBER_WORDS: &[&str] =
    &["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

/// Units a span of time is counted in ("two years", "a decade").
pub const TIME_UNITS: &[&str] = &["hour", "day", "week", "month", "year", "decade"];

/// The value of a number word ("three" → 3).
pub fn number_word(word: &str) -> Option<u32> {
    NUMBER_WORDS.iter().position(|w| *w == word).and_then(|at| u32::try_from(at + 1).ok())
}

/// Month and weekday names with their plurals ("Mondays") and abbreviations: words that are
/// capitalised because they are dates, not names.
pub fn is_calendar_word(word: &str) -> bool {
    let single = word.strip_suffix('s').filter(|w| WEEKDAYS.contains(w)).unwrap_or(word);
    MONTHS.contains(&single) || MONTH_ABBREVIATIONS.contains(&single) || WEEKDAYS.contains(&single)
}

/// The day of the week `word` (lowercase) names, Monday 1: full, plural ("mondays") or
/// shortened ("tues").
pub fn weekday_number(word: &str) -> Option<u32> {
    let single = word.strip_suffix('s').filter(|w| WEEKDAYS.contains(w)).unwrap_or(word);
    let at = match WEEKDAYS.iter().position(|day| *day == single) {
        Some(at) => at,
        None if WEEKDAY_ABBREVIATIONS.contains(&word) => WEEKDAYS.iter().position(|day| day.starts_with(&word[..3]))?,
        None => return None,
    };
    u32::try_from(at + 1).ok()
}

/// How a clause that opens by naming the person in the third person, as hosts write memories
/// ("The user prefers …", "User's sister …"), names them: how many words the naming takes, and
/// whether it is possessive. `first` and `second` are the clause's first two words, lowercase.
pub fn third_person_reference(first: &str, second: Option<&str>) -> Option<(usize, bool)> {
    let (at, word) = if first == "the" { (2, second?) } else { (1, first) };
    match word {
        "user" => Some((at, false)),
        "user's" => Some((at, true)),
        _ => None,
    }
}

/// Whether `word` (lowercase) stands for a program's turn in a transcript.
pub fn is_program_label(word: &str) -> bool {
    PROGRAM_LABELS.contains(&word)
}

/// Whether `word` (lowercase) is the person's own label.
pub fn is_person_label(word: &str) -> bool {
    PERSON_LABELS.contains(&word)
}

/// Whether a capitalised word (lowercase here) that opens a sentence is, by itself, not a name:
/// one of [`NOT_NAMES`], a chat party ("User"), a calendar word ("Monday"), or an adverb or
/// participle by its ending ("Apparently", "Honestly", "Following").
pub fn opens_without_being_a_name(word: &str) -> bool {
    NOT_NAMES.contains(&word) || CHAT_PARTIES.contains(&word) || is_calendar_word(word) || reads_as_an_opener(word)
}

/// Whether a word reads, by its ending, as an adverb or a participle ("finally", "following",
/// "updated"): at a sentence's start such a word sets the scene, it does not name anyone.
pub fn reads_as_an_opener(word: &str) -> bool {
    word.len() > 4 && (word.ends_with("ing") || word.ends_with("ed") || word.ends_with("ly"))
}

/// Whether `word` (lowercase) is a form of "I" or "we".
pub fn is_first_person(word: &str) -> bool {
    FIRST_PERSON_SINGULAR.contains(&word) || FIRST_PERSON_PLURAL.contains(&word)
}

/// Whether `word` (lowercase) names someone through their tie to someone else: kin, a
/// colleague, a peer, or the role they fill.
pub fn is_person_by_relation(word: &str) -> bool {
    KIN.contains(&word) || PEERS.contains(&word) || WORK_ROLES.contains(&word) || SERVICE_ROLES.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_held_one_at_a_time_is_a_person_by_relation() {
        for role in ROLES_HELD_ONE_AT_A_TIME {
            assert!(is_person_by_relation(role), "{role} is in no list of people");
        }
    }

    #[test]
    fn first_person_subjects_are_first_person() {
        for word in FIRST_PERSON_SUBJECTS {
            assert!(is_first_person(word), "{word}");
        }
    }

    #[test]
    fn the_user_in_the_third_person() {
        assert_eq!(third_person_reference("the", Some("user")), Some((2, false)));
        assert_eq!(third_person_reference("user's", Some("sister")), Some((1, true)));
        assert_eq!(third_person_reference("the", Some("users")), None);
        assert_eq!(third_person_reference("the", None), None);
        assert_eq!(third_person_reference("maya", Some("user")), None);
    }

    #[test]
    fn chat_parties_are_labels() {
        for party in CHAT_PARTIES {
            assert!(is_person_label(party) || is_program_label(party), "{party} is not a label");
        }
    }

    #[test]
    fn lists_are_lowercase_and_without_repeats() {
        let lists: &[(&str, &[&str])] = &[
            ("KIN", KIN),
            ("PEERS", PEERS),
            ("WORK_ROLES", WORK_ROLES),
            ("SERVICE_ROLES", SERVICE_ROLES),
            ("ROLES_HELD_ONE_AT_A_TIME", ROLES_HELD_ONE_AT_A_TIME),
            ("NOT_NAMES", NOT_NAMES),
            ("GROUPS", GROUPS),
            ("TITLES", TITLES),
        ];
        for (name, list) in lists {
            let mut seen = std::collections::BTreeSet::new();
            for word in *list {
                assert_eq!(*word, word.to_lowercase(), "{name}: {word} is not lowercase");
                assert!(seen.insert(word), "{name}: {word} is listed twice");
            }
        }
    }

    #[test]
    fn number_words_and_calendar_words() {
        assert_eq!(number_word("three"), Some(3));
        assert_eq!(number_word("twelve"), Some(12));
        assert_eq!(number_word("dozen"), None);
        assert!(is_calendar_word("mondays") && is_calendar_word("sept") && is_calendar_word("may"));
        assert!(!is_calendar_word("maya") && !is_calendar_word("s"));
        assert_eq!(weekday_number("tues"), Some(2));
        assert_eq!(weekday_number("weds"), Some(3));
        assert_eq!(weekday_number("sundays"), Some(7));
        assert_eq!(weekday_number("sun"), Some(7));
        assert_eq!(weekday_number("summer"), None);
    }
}
