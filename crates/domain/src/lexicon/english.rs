//! The English words the readers share. Lists are lowercase; a reader lowercases a word before
//! it looks it up.
//!
//! Why these lists hold beyond the sentences they were tried on: pronouns, transcript labels,
//! month and weekday names and number words are closed classes; kin terms are nearly closed;
//! colleagues, peers and the roles people hold for someone (a doctor, a landlord) are open but grow
//! slowly, and a missing one costs only a reading that stays "distinct".

/// Words that open a noun phrase without naming anything ("*the* Atlas budget", "*our*
/// standup").
pub const DETERMINERS: &[&str] = &["the", "a", "an", "our", "my", "his", "her", "their", "your", "this", "that", "its"];

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

/// Family, friends and the people someone lives beside (partners are [`PARTNERS`]): a
/// possessive before one of these names someone else ("Maya's sister", "my flatmate").
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
pub const WORK_ROLES: &[&str] = &["boss", "manager", "supervisor", "mentor", "intern"];

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
    "advisor",
    "adviser",
    "realtor",
    "landlord",
    "landlady",
    "nanny",
    "babysitter",
    "dog walker",
    "hairdresser",
    "barber",
    "mechanic",
];

/// Roles whose word also names a thing — a software agent, a vacuum cleaner, an AI assistant,
/// a sales lead, 3 pm — so the word alone never makes a person: "my agent is Priya Rao" fills
/// the role, "my coding agent runs on Sonnet" is about the program.
pub const ROLES_THAT_ALSO_NAME_THINGS: &[&str] = &["agent", "assistant", "cleaner", "lead", "pm"];

/// Sentence adverbs that open a sentence capitalised without naming anyone ("Apparently Derek
/// is leaving", "Honestly, the weather…"). A closed list, not a rule by ending: "Emily",
/// "Kelly", "Ahmed" and "Boeing" end as adverbs and participles do.
pub const SENTENCE_ADVERBS: &[&str] = &[
    "actually",
    "additionally",
    "admittedly",
    "apparently",
    "basically",
    "besides",
    "certainly",
    "clearly",
    "currently",
    "eventually",
    "evidently",
    "finally",
    "fortunately",
    "frankly",
    "generally",
    "honestly",
    "hopefully",
    "ideally",
    "importantly",
    "incidentally",
    "interestingly",
    "ironically",
    "lately",
    "luckily",
    "meanwhile",
    "naturally",
    "normally",
    "obviously",
    "originally",
    "otherwise",
    "personally",
    "presumably",
    "probably",
    "recently",
    "seriously",
    "sadly",
    "similarly",
    "surprisingly",
    "thankfully",
    "ultimately",
    "unfortunately",
    "usually",
    "anyway",
    "anyhow",
    "still",
    "later",
    "earlier",
    "initially",
    "lastly",
    "overall",
    "previously",
    "supposedly",
    "technically",
    "truly",
];

/// Partners, whom a person has one of at a time.
pub const PARTNERS: &[&str] =
    &["partner", "wife", "husband", "spouse", "girlfriend", "boyfriend", "fiance", "fiancee", "fiancé", "fiancée"];

/// Whether `word` (lowercase) names a role a person has one of at a time, so a new name for
/// it replaces the old ("my manager is Linda" after "my manager is Dana"): a service role (but
/// a student's: a teacher has many), the roles someone works under, a partner, a best friend;
/// not peers, friends or kin, of whom people have many.
pub fn is_role_held_one_at_a_time(word: &str) -> bool {
    (SERVICE_ROLES.contains(&word) && word != "student")
        || matches!(word, "manager" | "boss" | "supervisor" | "lead" | "mentor" | "best friend")
        || matches!(word, "agent" | "cleaner" | "pm")
        || PARTNERS.contains(&word)
}

/// The nouns the name of a group within an organisation ends in ("the design *team*", "the
/// payments *guild*"): what makes a value a team, and never a home.
pub const TEAM_NOUNS: &[&str] =
    &["team", "squad", "group", "department", "dept", "crew", "pod", "unit", "division", "org", "tribe", "guild"];

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
/// whether it is possessive. `opening` is the clause's first words (three will do), lowercase.
///
/// After a plain "user", a verb, an auxiliary or an adverb makes "the user" the clause's
/// subject ("the user prefers", "user is", "the user recently moved"); a noun makes it a
/// thing's name ("the user table has three columns", "the user service moved").
pub fn third_person_reference(opening: &[&str]) -> Option<(usize, bool)> {
    let (at, word) = match opening {
        ["the", word, ..] => (2, *word),
        [word, ..] => (1, *word),
        [] => return None,
    };
    let next = opening.get(at).copied();
    match word {
        "user's" => Some((at, true)),
        "user" if next.is_some_and(reads_as_a_predicate) => Some((at, false)),
        _ => None,
    }
}

/// Whether a word (lowercase) after a subject reads as the start of what is said of it: an
/// auxiliary or modal, a negation, an adverb (by its ending), or a verb by its form (a third
/// person "-s", a past "-ed", or a common irregular past).
fn reads_as_a_predicate(word: &str) -> bool {
    const AUXILIARIES: &[&str] = &[
        "is",
        "isn't",
        "was",
        "wasn't",
        "are",
        "were",
        "has",
        "hasn't",
        "had",
        "hadn't",
        "have",
        "does",
        "doesn't",
        "did",
        "didn't",
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "will",
        "won't",
        "would",
        "wouldn't",
        "should",
        "shouldn't",
        "may",
        "might",
        "must",
        "no",
        "not",
        "never",
        "always",
        "often",
        "just",
        "also",
        "still",
        "now",
        "once",
        "sometimes",
        "rarely",
    ];
    const IRREGULAR_PAST: &[&str] = &[
        "ate", "became", "began", "bought", "brought", "came", "chose", "drank", "drove", "felt", "found", "gave",
        "got", "went", "grew", "heard", "held", "kept", "knew", "left", "lost", "made", "met", "paid", "put", "quit",
        "ran", "read", "said", "saw", "sent", "sold", "spent", "spoke", "stood", "took", "taught", "thought", "told",
        "wore", "won", "wrote",
    ];
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    AUXILIARIES.contains(&word)
        || IRREGULAR_PAST.contains(&word)
        || word.ends_with("ly")
        || (word.len() > 3 && (word.ends_with('s') || word.ends_with("ed")) && !word.ends_with("ss"))
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
    KIN.contains(&word)
        || PARTNERS.contains(&word)
        || PEERS.contains(&word)
        || WORK_ROLES.contains(&word)
        || SERVICE_ROLES.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_held_one_at_a_time_are_people_and_peers_are_not() {
        for role in ["manager", "dentist", "landlady", "wife", "best friend", "piano teacher"] {
            assert!(is_role_held_one_at_a_time(role) && is_person_by_relation(role), "{role}");
        }
        for many in ["colleague", "teammate", "friend", "sister", "student", "intern", "editor", "employer"] {
            assert!(!is_role_held_one_at_a_time(many), "{many}");
        }
        // A role that also names a thing is filled by a name, never a person on its own.
        for both in ROLES_THAT_ALSO_NAME_THINGS {
            assert!(!is_person_by_relation(both), "{both}");
        }
        assert!(is_role_held_one_at_a_time("agent") && is_role_held_one_at_a_time("lead"));
    }

    #[test]
    fn first_person_subjects_are_first_person() {
        for word in FIRST_PERSON_SUBJECTS {
            assert!(is_first_person(word), "{word}");
        }
    }

    #[test]
    fn the_user_in_the_third_person() {
        assert_eq!(third_person_reference(&["the", "user", "prefers"]), Some((2, false)));
        assert_eq!(third_person_reference(&["user", "is", "allergic"]), Some((1, false)));
        assert_eq!(third_person_reference(&["the", "user", "said"]), Some((2, false)));
        assert_eq!(third_person_reference(&["user's", "sister"]), Some((1, true)));
        assert_eq!(third_person_reference(&["the", "user's", "sister"]), Some((2, true)));
        assert_eq!(third_person_reference(&["the", "users", "are"]), None);
        assert_eq!(third_person_reference(&["the"]), None);
        assert_eq!(third_person_reference(&["maya", "user"]), None);
        // A thing named after users is not the person.
        assert_eq!(third_person_reference(&["the", "user", "table"]), None);
        assert_eq!(third_person_reference(&["the", "user", "service", "moved"]), None);
        assert_eq!(third_person_reference(&["user"]), None);
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
            ("PARTNERS", PARTNERS),
            ("NOT_NAMES", NOT_NAMES),
            ("SENTENCE_ADVERBS", SENTENCE_ADVERBS),
            ("ROLES_THAT_ALSO_NAME_THINGS", ROLES_THAT_ALSO_NAME_THINGS),
            ("GROUPS", GROUPS),
            ("TEAM_NOUNS", TEAM_NOUNS),
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
