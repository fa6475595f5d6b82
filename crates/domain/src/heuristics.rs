//! The deterministic judgement calls, needing no model: keyword and pattern heuristics for
//! admission, kind, subject and entity proposals, word overlap for duplicates, extractive
//! summaries, and cue words for reading a question.
//!
//! They are the default and the fallback for every model-backed step, so they are
//! conservative: a new entity only for a clearly named subject, two texts the same memory only
//! when they share nearly all their words. Their answers are proposals like any model's and
//! pass through the same rules. The `HeuristicReasoner` port adapter calls these functions.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::decision::EntityProposal;
use crate::entity::{Entity, EntityType};
use crate::judgement::{
    AssessRequest, Assessment, DuplicateRequest, QueryFocus, QueryIntent, QueryRequest, SummarizeRequest, SummaryDraft,
};
use crate::lexicon::{alternation, chinese, english};
use crate::model::{Confidence, Label, MemoryKind};
use crate::sensitivity::Sensitivity;
use crate::supersession::DuplicateJudgement;
use crate::text::{first_sentence, is_stopword, normalize_text, tokenize};
use crate::time::Timestamp;
use crate::time_expr::find_time_expression;
use crate::transcript::transcript_speaker;

/// The heuristics' id, recorded as the extractor in provenance.
pub const HEURISTIC_REASONER_ID: &str = "heuristic/1";

/// Word overlap (of the larger set of content words) at which two texts are judged the same
/// memory.
pub const SAME_MEMORY_OVERLAP: f32 = 0.85;

/// The longest summary the heuristics draft, in characters: half of what a summary may keep
/// (`MAX_SUMMARY_CHARS`), since a draft of first sentences says less per character.
const HEURISTIC_SUMMARY_CHARS: usize = 2_000;

static FILLER: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    [
        "ok", "okay", "k", "thanks", "thank", "you", "ty", "thx", "lol", "haha", "hah", "hi", "hello", "hey", "bye",
        "yes", "no", "sure", "cool", "nice", "great", "wow", "hmm", "yeah", "yep", "nope", "np", "good", "morning",
        "night", "see", "ya", "later", "awesome", "alright", "right", "oh", "ah",
    ]
    .into_iter()
    .collect()
});

/// Chat fillers in Chinese, as whole phrases: a message made of nothing else (and of the
/// English fillers, punctuation, spaces and emoji) is chit-chat. Chinese sets no word off with
/// spaces, so these are matched as phrases, longest first, not as tokens.
static ZH_FILLER: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut phrases = vec![
        "谢谢你",
        "谢谢您",
        "不客气",
        "没问题",
        "知道了",
        "辛苦了",
        "早上好",
        "下午好",
        "晚上好",
        "好的",
        "好滴",
        "好哒",
        "好嘞",
        "谢谢",
        "多谢",
        "感谢",
        "嗯嗯",
        "哈哈",
        "呵呵",
        "嘻嘻",
        "收到",
        "明白",
        "了解",
        "可以",
        "晚安",
        "早安",
        "再见",
        "拜拜",
        "没事",
        "对的",
        "是的",
        "好吧",
        "行吧",
        "你好",
        "您好",
        "好",
        "嗯",
        "哦",
        "噢",
        "啊",
        "行",
        "对",
        "哈",
        "嘿",
        "哇",
        "呀",
        "啦",
        "吧",
        "了",
        "呢",
    ];
    phrases.sort_by_key(|p| std::cmp::Reverse(p.chars().count()));
    phrases
});

/// Whether `text` says nothing but chat fillers, in English or Chinese ("ok thanks!",
/// "好的谢谢", "嗯嗯", "收到 👍"): what remains after punctuation, spaces and symbols are set
/// aside is wholly filler words and phrases.
fn is_filler_message(text: &str) -> bool {
    let kept: String = text.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
    let mut rest = kept.as_str();
    let mut any = false;
    while !rest.is_empty() {
        let latin = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
        if latin > 0 {
            // Words run together once spaces are gone ("okthanks"): a run is filler when it
            // splits into filler words.
            if !splits_into_fillers(&rest[..latin]) {
                return false;
            }
            rest = &rest[latin..];
        } else if let Some(phrase) = ZH_FILLER.iter().find(|p| rest.starts_with(**p)) {
            rest = &rest[phrase.len()..];
        } else {
            return false;
        }
        any = true;
    }
    any
}

/// Whether a run of ASCII letters is one or more English filler words back to back. A run
/// longer than any string of fillers a person types is not one (and costs nothing to refuse).
fn splits_into_fillers(run: &str) -> bool {
    const LONGEST: usize = 64;
    if run.len() > LONGEST {
        return false;
    }
    // reachable[i]: run[..i] splits into fillers.
    let mut reachable = [false; LONGEST + 1];
    reachable[0] = true;
    for end in 1..=run.len() {
        reachable[end] = (0..end).any(|start| reachable[start] && FILLER.contains(&run[start..end]));
    }
    reachable[run.len()]
}

struct KindRule {
    kind: MemoryKind,
    regex: Regex,
}

static KIND_RULES: LazyLock<Vec<KindRule>> = LazyLock::new(|| {
    let r = |kind, re: &str| KindRule { kind, regex: Regex::new(re).expect("kind pattern compiles") };
    // The people a relationship names: kin, partners, peers and whom someone works under (not
    // "baby", "lead" or "assistant": "the project is my baby", "our lead singer").
    let people = [english::KIN, english::PARTNERS, english::PEERS].concat();
    let relatives =
        alternation(people.into_iter().filter(|w| *w != "baby").chain(["boss", "manager", "supervisor", "mentor"]));
    let weekdays = alternation(english::WEEKDAYS.iter().copied());
    vec![
        r(
            MemoryKind::Constraint,
            r"(?i)\b(must not|must never|never (?:use|do|send|share)|do not ever|don't ever|always (?:use|include|run)|is required|are required|not allowed|forbidden)\b",
        ),
        r(
            MemoryKind::Decision,
            r"(?i)\b(we decided|i decided|decided to|we agreed|agreed to|we chose|we will go with|the decision)\b",
        ),
        r(
            MemoryKind::Preference,
            r"(?i)\b(i prefer|prefers?|i like|i love|i hate|i dislike|i enjoy|favou?rite|i'd rather|i would rather|loves?|likes?|enjoys?)\b",
        ),
        r(MemoryKind::Task, r"(?i)\b(todo|to-do|remind me|i need to|we need to|deadline|due (?:on|by))\b"),
        r(MemoryKind::Procedure, r"(?i)\b(step \d|how to|in order to|the process is|run `)"),
        // A relationship stated ("Dana is my boss", "I got engaged"), not a relative named in
        // passing ("my wife and I just left for Rome" is the trip): only the statement is the
        // high-impact kind that waits for a person.
        r(
            MemoryKind::Relationship,
            &format!(
                r"(?i)\b(?:(?:is|was|are|were) (?:my|our) (?:new |future |former |ex-)?{relatives}\b(?:$|[^'’])|(?:my (?:new |future |former |ex-)?{relatives}(?:'s name)? (?:is|was|'s) (?-i:[A-Z])\w*|i(?:'m| am| was| got| just got|'ve been| have been| recently got) (?:married|engaged|divorced|separated)|(?:married|engaged) to|(?:am|are|is|'m|'re|started|been) dating|broke up with)\b)"
            ),
        ),
        r(MemoryKind::Reflection, r"(?i)\b(i realized|i learned|lesson learned|in hindsight|i've noticed|i noticed)\b"),
        r(
            MemoryKind::Event,
            &format!(
                r"(?i)\b(yesterday|last (?:week|month|year|night|weekend)|went to|visited|attended|happened|on {weekdays}|this morning|tonight)\b"
            ),
        ),
    ]
});

static VERBISH: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    [
        "is", "was", "has", "had", "will", "would", "likes", "loves", "hates", "went", "said", "says", "works",
        "lives", "wants", "needs", "decided", "moved", "started", "finished", "launched", "ships", "shipped", "uses",
        "prefers", "owns", "runs", "leads", "joined", "left", "told", "asked", "plans", "released", "released",
    ]
    .into_iter()
    .collect()
});

/// Assesses one chunk: admission, kind, title, subject, sensitivity, salience and entity.
pub fn assess(request: &AssessRequest) -> Assessment {
    let text = normalize_text(&request.text);
    let tokens = tokenize(&text);
    let hints = &request.hints;
    // A transcript line's label says whose "I" and "my" the rest is; the kind and the subject
    // are read from what was said.
    let line = transcript_speaker(&text);
    let said = line.map_or(text.as_str(), |line| line.said);
    let kind = hints.kind.unwrap_or_else(|| classify_kind(said));
    let admission = if hints.kind.is_some() || hints.title.is_some() || hints.subject.is_some() {
        0.9
    } else {
        admission_score(&text, &tokens)
    };
    let title = match &hints.title {
        Some(title) => title.trim().to_owned(),
        None => first_sentence(&text, TITLE_CHARS),
    };
    // A subject key makes a memory replace the current one with the same key in its tree
    // without a word of proof: only a host that knows its memories' keys names one (a hint).
    // What a text says about whom is read into claims instead (`claims::read`), where a
    // replacement needs the same subject, attribute and another value.
    let subject = hints.subject.clone();
    let sensitivity = hints.sensitivity.unwrap_or(if crate::sensitivity::speaks_of_sensitive_matters(&text) {
        Sensitivity::Sensitive
    } else {
        Sensitivity::Normal
    });
    let mut salience: f32 = 0.5;
    if matches!(kind, MemoryKind::Preference | MemoryKind::Constraint | MemoryKind::Decision) {
        salience += 0.2;
    }
    if tokens.iter().any(|t| t.chars().all(|c| c.is_ascii_digit())) {
        salience += 0.1;
    }
    let (entity, secondary_entities) = propose_entity(request, &text);
    Assessment {
        admission: Confidence::saturating(admission),
        kind,
        title,
        subject,
        labels: hints.labels.clone(),
        sensitivity,
        salience: Confidence::saturating(salience),
        entity,
        secondary_entities,
    }
}

/// The candidate the new text repeats, by shared content words.
pub fn judge_duplicate(request: &DuplicateRequest) -> DuplicateJudgement {
    let new = content_words(&request.text);
    let best = request
        .candidates
        .iter()
        .map(|c| (overlap(&new, &content_words(&c.text)), c))
        .filter(|(score, _)| *score >= SAME_MEMORY_OVERLAP)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.id.cmp(&a.1.id)));
    match best {
        Some((score, candidate)) => {
            DuplicateJudgement::SameMemory { leaf_id: candidate.id.to_string(), confidence: score }
        }
        None => DuplicateJudgement::Distinct,
    }
}

/// Whether two texts' content words ([`content_words`], read once) make them the same memory
/// by the deterministic bar (nearly all shared), and how much they share.
pub fn same_words(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Option<f32> {
    let score = overlap(a, b);
    (score >= SAME_MEMORY_OVERLAP).then_some(score)
}

/// An extractive digest of the children, oldest first, titled by the words they share most.
pub fn summarize(request: &SummarizeRequest) -> SummaryDraft {
    let mut children = request.children.clone();
    children.sort_by(|a, b| a.observed_at.cmp(&b.observed_at).then_with(|| a.id.cmp(&b.id)));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for child in &children {
        for word in content_words(&format!("{} {}", child.title, child.text)) {
            *counts.entry(word).or_default() += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let top: Vec<String> = ranked.iter().take(4).map(|(w, _)| w.clone()).collect();
    let items = match children.len() {
        1 => "1 item".to_owned(),
        n => format!("{n} items"),
    };
    let title =
        if top.is_empty() { format!("{} ({items})", request.tree) } else { format!("{} ({items})", top.join(", ")) };
    let mut text = String::new();
    let mut included = 0;
    for child in &children {
        let line = format!("- {}\n", first_sentence(strip_bullets(&child.text), TITLE_CHARS));
        if text.chars().count() + line.chars().count() > HEURISTIC_SUMMARY_CHARS {
            break;
        }
        text.push_str(&line);
        included += 1;
    }
    if included < children.len() {
        text.push_str(&format!("- … and {} more\n", children.len() - included));
    }
    let labels = top.iter().filter_map(|w| Label::parse(w).ok()).collect();
    SummaryDraft { title, text, labels }
}

/// A child summary's text is itself a bullet list; its first item is what it leads with.
fn strip_bullets(text: &str) -> &str {
    text.trim_start().trim_start_matches(['-', '*', '•']).trim_start()
}

fn classify_kind(text: &str) -> MemoryKind {
    KIND_RULES.iter().find(|rule| rule.regex.is_match(text)).map(|rule| rule.kind).unwrap_or(MemoryKind::Fact)
}

fn admission_score(text: &str, tokens: &[String]) -> f32 {
    if tokens.is_empty() {
        return 0.0;
    }
    if tokens.iter().all(|t| FILLER.contains(t.as_str())) || is_filler_message(text) {
        return 0.2;
    }
    if tokens.len() < 3 {
        return 0.35;
    }
    let mut score: f32 = 0.6;
    let first_person = tokens.iter().any(|t| matches!(t.as_str(), "i" | "my" | "we" | "our" | "me" | "us"));
    if first_person {
        score += 0.1;
    }
    if tokens.iter().any(|t| t.chars().any(|c| c.is_ascii_digit())) {
        score += 0.05;
    }
    if text.split_whitespace().skip(1).any(|w| w.chars().next().is_some_and(char::is_uppercase)) {
        score += 0.05;
    }
    if KIND_RULES.iter().any(|rule| rule.regex.is_match(text)) {
        score += 0.1;
    }
    score.min(0.95)
}

/// How long a title read from the text may be, in characters (and a summary's line per child).
const TITLE_CHARS: usize = 100;

/// Finds the primary entity: the host's hint, else a shortlisted entity named in the text,
/// else a clearly named new subject, else the fallback bucket.
fn propose_entity(request: &AssessRequest, text: &str) -> (EntityProposal, Vec<String>) {
    if let Some(hint) = &request.hints.entity {
        if let Some(existing) = request.shortlist.iter().find(|e| e.is_named(&hint.name)) {
            return (EntityProposal::MatchExisting { entity_id: existing.id.to_string(), confidence: 0.95 }, vec![]);
        }
        let proposal = EntityProposal::CreateNew {
            name: hint.name.trim().to_owned(),
            entity_type: hint.entity_type.as_str().to_owned(),
            confidence: 0.9,
        };
        return (proposal, vec![]);
    }
    let mut mentioned: Vec<(usize, &Entity)> =
        request.shortlist.iter().filter_map(|entity| first_mention(text, entity).map(|at| (at, entity))).collect();
    mentioned.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
    if let Some((_, primary)) = mentioned.first() {
        let secondary = mentioned.iter().skip(1).map(|(_, e)| e.id.to_string()).collect();
        return (EntityProposal::MatchExisting { entity_id: primary.id.to_string(), confidence: 0.8 }, secondary);
    }
    match named_subject(text) {
        Some((name, entity_type)) => {
            (EntityProposal::CreateNew { name, entity_type: entity_type.as_str().to_owned(), confidence: 0.7 }, vec![])
        }
        None => (EntityProposal::Fallback, vec![]),
    }
}

/// Where an entity's name or an alias first occurs as whole words, case-insensitively.
fn first_mention(text: &str, entity: &Entity) -> Option<usize> {
    let lower = text.to_lowercase();
    std::iter::once(&entity.name)
        .chain(entity.aliases.iter())
        .filter(|name| !name.trim().is_empty())
        .filter_map(|name| {
            let needle = name.trim().to_lowercase();
            // Chinese writes names between other characters ("我和张伟去…"): a name in Han
            // is whole where the segmenter's words start and end (李明 is not in 李明华).
            let han = crate::han::has_han(&needle);
            let words = if han { crate::han::words(&lower) } else { Vec::new() };
            let whole_words = |at: usize, end: usize| {
                words.iter().any(|w| w.span.start == at) && words.iter().any(|w| w.span.end == end)
            };
            lower.match_indices(&needle).map(|(at, _)| at).find(|&at| {
                let end = at + needle.len();
                if han {
                    return whole_words(at, end);
                }
                let before = lower[..at].chars().next_back();
                let after = lower[end..].chars().next();
                before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
            })
        })
        .min()
}

/// A sentence that opens with a name and a verb ("Project Alpha ships in May", "Dana
/// prefers…"), or mentions "Project X": positive evidence of a clear, stable subject.
pub(crate) fn named_subject(text: &str) -> Option<(String, EntityType)> {
    if crate::han::mostly_han(text) {
        return named_subject_in_chinese(text);
    }
    static PROJECT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b[Pp]roject ([A-Z][A-Za-z0-9-]+)\b").expect("project pattern compiles"));
    if let Some(c) = PROJECT.captures(text) {
        return Some((format!("Project {}", &c[1]), EntityType::Project));
    }
    let words: Vec<&str> = text.split_whitespace().take(5).collect();
    let mut name_words = Vec::new();
    for (at, word) in words.iter().enumerate() {
        let clean = word.trim_matches(|c: char| !c.is_alphanumeric());
        let capitalized = clean.chars().next().is_some_and(char::is_uppercase) && clean.chars().count() > 1;
        let lower = clean.to_lowercase();
        // A month or a word's ending is no evidence here ("May", "Emily", "Boeing" open
        // sentences as names): only the listed words that are never names.
        let not_a_name = english::NOT_NAMES.contains(&lower.as_str())
            || english::CHAT_PARTIES.contains(&lower.as_str())
            || (at == 0 && english::SENTENCE_ADVERBS.contains(&lower.as_str()));
        if capitalized && !not_a_name && name_words.len() < 3 && clean == *word {
            name_words.push(clean);
        } else {
            break;
        }
    }
    let next = words.get(name_words.len()).map(|w| w.to_lowercase())?;
    if name_words.is_empty() || !VERBISH.contains(next.trim_matches(|c: char| !c.is_alphanumeric())) {
        return None;
    }
    let name = name_words.join(" ");
    let entity_type = match name_words.last() {
        Some(last) if ["Inc", "Corp", "Ltd", "LLC", "GmbH", "Labs"].contains(last) => EntityType::Organization,
        _ if name_words.len() == 1 => EntityType::Person,
        _ => EntityType::Topic,
    };
    Some((name, entity_type))
}

/// The clear subject of a Chinese text: a name before a kind of thing ("天穹项目的上线日期…":
/// the project 天穹), or a person's name the text opens with ("张伟在腾讯…", after a
/// transcript label). Capital letters say nothing here; the name finder and the dictionary do.
fn named_subject_in_chinese(text: &str) -> Option<(String, EntityType)> {
    use crate::han::{WordClass, words};
    let body = text.split_once(['：', ':']).filter(|(label, _)| label.chars().count() <= 8).map_or(text, |(_, b)| b);
    let words = words(body);
    for (at, pair) in words.windows(2).enumerate() {
        // Only a project's or an organisation's kind noun makes the name a clear subject.
        let kind = chinese::KIND_NOUNS
            .iter()
            .filter(|(_, kind)| matches!(kind, EntityType::Project | EntityType::Organization))
            .find(|(noun, _)| *noun == pair[1].text);
        // "一家互联网公司", "某科技公司": a kind of company, not one named.
        let counted = at > 0 && words[at - 1].text.ends_with(['家', '个', '所', '间', '某']);
        if let Some((_, entity_type)) = kind
            && !counted
            && pair[0].is_nominal()
            && pair[0].text.chars().count() >= 2
            && !crate::han::is_stopword(pair[0].text)
        {
            return Some((pair[0].text.to_owned(), *entity_type));
        }
    }
    let opener = words.iter().find(|w| !matches!(w.class, WordClass::Punct | WordClass::Time))?;
    (opener.class == WordClass::Person).then(|| (opener.text.to_owned(), EntityType::Person))
}

/// A text's content words: its tokens without stopwords.
pub fn content_words(text: &str) -> BTreeSet<String> {
    tokenize(text).into_iter().filter(|t| !is_stopword(t)).collect()
}

/// Overlap of two word sets relative to the larger: 1.0 when identical.
fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
    let larger = a.len().max(b.len());
    if larger == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f32 / larger as f32
}

/// Phrases that ask for an overview rather than a fact.
const BROAD_CUES: [&str; 8] = [
    "summar",
    "overview",
    "what do you know",
    "what do we know",
    "tell me about",
    "everything about",
    "history of",
    "catch me up",
];

/// Words that ask when: a question starting with one looks for dates.
const TEMPORAL_OPENINGS: [&str; 6] = ["when", "what time", "what date", "what year", "how long ago", "since when"];

/// Words (as tokens) that ask what someone prefers or what must hold.
const PREFERENCE_OR_CONSTRAINT_CUES: [&str; 16] = [
    "prefer",
    "prefers",
    "preference",
    "preferences",
    "favorite",
    "favourite",
    "like",
    "likes",
    "dislike",
    "dislikes",
    "hate",
    "rule",
    "rules",
    "must",
    "allowed",
    "constraint",
];

/// Reads a question: broad when it uses a phrase that asks for an overview; temporal when it
/// asks when or names a time; about preferences or constraints when it uses their words.
pub fn classify_query(request: &QueryRequest) -> QueryIntent {
    let query = request.query.to_lowercase();
    let tokens = tokenize(&query);
    let (focus, why) = if let Some(opening) = TEMPORAL_OPENINGS.iter().find(|o| query.trim_start().starts_with(**o)) {
        (QueryFocus::Temporal, format!("asks \"{opening}\""))
    } else if let Some(time) = find_time_expression(&query, Timestamp::UNIX_EPOCH) {
        (QueryFocus::Temporal, format!("names a time (\"{}\")", time.phrase))
    } else if let Some(cue) = PREFERENCE_OR_CONSTRAINT_CUES.iter().find(|c| tokens.iter().any(|t| t == *c)) {
        (QueryFocus::PreferenceOrConstraint, format!("asks about preferences or rules (\"{cue}\")"))
    } else {
        (QueryFocus::General, String::new())
    };
    let (broad, mut reason) = match BROAD_CUES.iter().find(|cue| query.contains(**cue)) {
        Some(cue) => (true, format!("broad question (\"{cue}\")")),
        None => (false, "specific question: leaf evidence".to_owned()),
    };
    if !why.is_empty() {
        reason = format!("{reason}; {why}");
    }
    QueryIntent { broad, focus, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::EntitySlug;
    use crate::event::EventHints;
    use crate::id::EntityId;
    use crate::model::{Actor, SubjectKey};
    use crate::namespace::{Namespace, NamespaceKind};

    fn request(text: &str, shortlist: Vec<Entity>) -> AssessRequest {
        AssessRequest {
            text: text.to_owned(),
            actor: Actor::User,
            namespace: NamespaceKind::Conversation,
            hints: EventHints::default(),
            shortlist,
        }
    }

    fn entity(id: &str, name: &str) -> Entity {
        Entity {
            id: EntityId::parse(id).unwrap(),
            namespace: Namespace::global(),
            entity_type: EntityType::Project,
            slug: EntitySlug::from_name(name),
            name: name.to_owned(),
            aliases: vec!["alpha".into()],
            created_at: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn filler_is_not_admitted_and_statements_are() {
        assert!(assess(&request("ok thanks!", vec![])).admission.get() < 0.5);
        assert!(assess(&request("I prefer short answers in bullet points", vec![])).admission.get() >= 0.5);
        for chit_chat in
            ["好的谢谢", "嗯嗯", "哈哈哈哈", "收到！", "OK 好的", "好的，谢谢 👍", "明白了", "thanks 谢谢你", "晚安~"]
        {
            assert!(is_filler_message(chit_chat), "{chit_chat:?} is chit-chat");
            assert!(assess(&request(chit_chat, vec![])).admission.get() < 0.5, "{chit_chat:?}");
        }
        for said in [
            "好的，我明天搬到上海",
            "谢谢你帮我订了去北京的机票",
            "我叫李雷",
            "可以的话周五开会",
            "ok, the deploy is on Friday",
            "好",
        ] {
            let filler = is_filler_message(said);
            assert_eq!(filler, said == "好", "{said:?}");
        }
        assert!(!is_filler_message(&"k".repeat(20_000)), "a long run is refused at once, not recursed into");
    }

    #[test]
    fn a_relationship_is_stated_not_mentioned_in_passing() {
        for text in [
            "Dana is my boss.",
            "Leo is my new roommate",
            "my wife's name is Sara",
            "My manager is Raj Patel now.",
            "I got engaged last weekend!",
            "I'm married to Tom.",
            "We broke up with the old landlord, and I broke up with Sam.",
            "Mia and I are dating",
            "She was my mentor",
            "He is our neighbour, and a good one.",
        ] {
            assert_eq!(classify_kind(text), MemoryKind::Relationship, "{text:?}");
        }
        for text in [
            "My wife and I just left for our European vacation!",
            "We celebrated my daughter's birthday with a concert last night.",
            "My mom and I made some dinner together last night!",
            "Last week, my grandma passed away and it's been really hard.",
            "I'm lucky to have my husband and kids.",
            "How long have you been married?",
            "my boss is on holiday",
            // The relative's, not the relative: "is my daughter's birthday".
            "Today is my daughter's birthday",
            "That was my dad’s car.",
        ] {
            assert_ne!(classify_kind(text), MemoryKind::Relationship, "{text:?}");
        }
    }

    #[test]
    fn a_subject_key_comes_only_from_a_hint() {
        for text in ["My job is at Acme now.", "Jon: my job is gone.", "I moved to Berlin last month"] {
            assert_eq!(assess(&request(text, vec![])).subject, None, "{text:?}");
        }
        let mut hinted = request("Tea is my favourite drink now.", vec![]);
        hinted.hints.subject = Some(SubjectKey::parse("my favorite drink").unwrap());
        assert_eq!(assess(&hinted).subject.unwrap().as_str(), "my favorite drink");
        // The kind is read from what was said, not a transcript line's label.
        assert_eq!(assess(&request("Maria: Dana is my boss.", vec![])).kind, MemoryKind::Relationship);
    }

    #[test]
    fn kinds_subjects_and_entities() {
        let a = assess(&request("My favorite color is green now.", vec![]));
        assert_eq!(a.kind, MemoryKind::Preference);

        let shortlist = vec![entity("ent-1", "Project Alpha")];
        let a = assess(&request("The alpha release moved to September.", shortlist));
        assert_eq!(a.entity, EntityProposal::MatchExisting { entity_id: "ent-1".into(), confidence: 0.8 });

        let a = assess(&request("Dana prefers morning meetings.", vec![]));
        assert_eq!(
            a.entity,
            EntityProposal::CreateNew { name: "Dana".into(), entity_type: "person".into(), confidence: 0.7 }
        );
        // No clear subject: fallback, never an invented entity.
        let a = assess(&request("we should probably look into that soon", vec![]));
        assert_eq!(a.entity, EntityProposal::Fallback);
    }

    /// Entities in Chinese come from names and kinds of thing, not capitals; a known one is
    /// found between other Han characters.
    #[test]
    fn entities_in_chinese() {
        let created = |text: &str| match assess(&request(text, vec![])).entity {
            EntityProposal::CreateNew { name, entity_type, .. } => Some((name, entity_type)),
            _ => None,
        };
        let table: &[(&str, Option<(&str, &str)>)] = &[
            ("张伟在腾讯做后端开发。", Some(("张伟", "person"))),
            ("用户：赵敏喜欢爵士乐", Some(("赵敏", "person"))),
            ("天穹项目的上线日期定在5月12日。", Some(("天穹", "project"))),
            ("北斗系统的数据库用的是 MySQL。", Some(("北斗", "project"))),
            ("我们下周去星河科技公司面试", Some(("星河", "organization"))),
            ("昨天下雨了，心情一般", None),
            ("她特别喜欢画马", None),
            ("我在一家互联网公司上班", None),
            ("明白了，下周去上海", None),
        ];
        for (text, expected) in table {
            let expected = expected.map(|(name, kind)| (name.to_owned(), kind.to_owned()));
            assert_eq!(created(text), expected, "{text}");
        }
        let shortlist = vec![entity("ent-1", "张伟")];
        let a = assess(&request("我和张伟周末去打羽毛球", shortlist));
        assert_eq!(a.entity, EntityProposal::MatchExisting { entity_id: "ent-1".into(), confidence: 0.8 });
        let a = assess(&request("李明华是我的同事", vec![entity("ent-2", "李明")]));
        assert!(!matches!(a.entity, EntityProposal::MatchExisting { .. }), "李明 is not in 李明华: {:?}", a.entity);
        // An English sentence naming a Chinese company is read as English.
        let a = assess(&request("Dana works at 字节跳动", vec![]));
        assert_eq!(
            a.entity,
            EntityProposal::CreateNew { name: "Dana".into(), entity_type: "person".into(), confidence: 0.7 }
        );
    }
}
