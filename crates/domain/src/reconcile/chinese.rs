//! `Claim::read` for text written in Chinese: the same claim — mentions, subject, slots,
//! content words, change cue — read from Chinese words, so memories in either language are
//! filed, looked up and compared alike.
//!
//! What differs is only how each part is found:
//! - **Words** come from the segmenter ([`crate::han::words`]), not from spaces.
//! - **Names** are people found by surname, what the dictionary knows as proper nouns (places,
//!   organisations), Latin product names ("MySQL", "iPhone 17"), and the noun a clause opens
//!   with, which Chinese makes its topic ("天穹上线推迟了": the topic is 天穹). A kind of thing
//!   after a name is not part of it ("天穹项目" is 天穹), so the project is one subject however
//!   it is written.
//! - **Who** a relation is: "我女儿", "我的女儿" and a bare "女儿" (Chinese drops the "my" of
//!   kin) are the speaker's daughter, keyed as the English reading keys "my daughter", and
//!   "刘洋的团队" is 刘洋's team, a group acting on its member's shared things.
//! - **Clauses** end at commas too: Chinese joins clauses with them where English uses "and".
//! - **Cues** are the verbs and adverbs Chinese says a change with (搬到、换成、改到、离职、戒掉、
//!   推迟、削减到、不再、现在 …); a negated one (没有搬到) and a visit (出差、旅游) say no change of
//!   residence. Whether a change replaces anything is not read here but by
//!   `claims::chinese`.
//!
//! Why these hold beyond the sentences they were tried on: they are the grammar of the
//! language — its change verbs with their result complements (搬*到*、换*成*、改*为*), its
//! topic-first clauses and its dropped pronouns — not the phrasing of any example.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::attributes::{AttributeRule, attributes_of as english_attributes};
use super::{Attribute, Claim, Mention, SPEAKER};
use crate::han::{self, Word, WordClass};
use crate::lexicon::{chinese, english};
use crate::text::stem;

/// Nouns that open clauses without naming anything in particular: the speaker's label, people
/// in general, times.
const NOT_TOPICS: &[&str] = &[
    "用户", "助手", "大家", "别人", "有人", "人", "今天", "昨天", "明天", "现在", "最近", "时候", "事情", "东西",
    "问题", "情况", "工作", "时间", "地方", "事",
];

/// A label before a colon: "用户：…", "小王: …".
static LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([^\s：:，,。]{1,8})\s*[：:]\s*").expect("label pattern compiles"));

/// The slots of [`Attribute`], as Chinese names them.
static ATTRIBUTE_RULES: LazyLock<Vec<AttributeRule>> = LazyLock::new(|| {
    let rule = |attribute, pattern: &str| AttributeRule {
        attribute,
        pattern: Regex::new(&format!("(?i){pattern}")).expect("attribute pattern compiles"),
    };
    vec![
        // "新家具" is furniture, not a new home.
        rule(
            Attribute::Residence,
            r"住在|住到|住进|搬到|搬去|搬回|搬家|定居|老家|现居|居住在|落户|新家(?:$|[^具电居])",
        ),
        rule(Attribute::Address, r"地址|门牌"),
        rule(
            Attribute::Work,
            // Where someone works, not work in general ("工作很忙", "工作日", "工作室").
            r"在[^，。；,;]{1,12}?(?:工作|上班|做|当|担任|任职)|(?:的|找到了?|新|换了?份?)工作(?:$|[^日室量])|入职|离职|辞职|跳槽|就职|职位|岗位|单位",
        ),
        rule(Attribute::Manager, r"领导是|上司|老板是|直属|汇报给|向\S{1,6}汇报|经理是"),
        // The device, not its number or its case.
        rule(Attribute::Phone, r"手机(?:$|[^号壳膜套费])|iphone"),
        rule(Attribute::Car, r"车(?:子)?(?:是|换)|开(?:一辆|的是)|座驾|买了(?:一辆)?(?:新)?车"),
        rule(Attribute::Diet, r"吃素|素食|不吃肉|戒肉|纯素|忌口|清真|生酮"),
        rule(Attribute::Relationship, r"结婚|离婚|订婚|分手|男朋友|女朋友|男友|女友|对象|单身|恋爱|交往"),
        rule(Attribute::Children, r"儿子|女儿|孩子|宝宝|小孩"),
        rule(
            Attribute::Schooling,
            // A school year after a verb of studying ("读初二", "上高一"; "大三岁" is an age).
            r"[一二三四五六七八九十\d]年级|(?:读|上|念|升|是)(?:初[一二三]|高[一二三]|大[一二三四])|读(?:小学|初中|高中|大学|研究生|博士)|上(?:幼儿园|小学|初中|高中|大学)|幼儿园|在读|毕业|学期",
        ),
        rule(
            Attribute::TimeOfDay,
            r"[零一二两三四五六七八九十\d]{1,3}点(?:半|一刻|三刻|[零一二三四五六七八九十\d]{1,3}分?)?|\d{1,2}[:：]\d{2}",
        ),
        rule(Attribute::Date, r"\d{1,2}月\d{1,2}[日号]|上线|截止|日期|期限|发布|定在"),
        rule(
            Attribute::Cadence,
            r"每天|每日|每周|每星期|每个?(?:工作日|周[一二三四五六日末]|星期[一二三四五六日天])|每个?月|每年",
        ),
    ]
});

/// How far a change cue reaches: see the English reading's `CueReach`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Text,
    Clause,
    Verb,
}

/// The verbs and adverbs Chinese says a change with: a verb with its result complement
/// ("搬到", "换成", "改为", "削减到"), the verbs of ending (离职、戒掉、不再), and the adverbs
/// of the present against the past (现在、如今).
static CHANGE_CUES: LazyLock<Vec<(&'static str, Reach, Regex)>> = LazyLock::new(|| {
    let cues: &[(&'static str, Reach, &str)] = &[
        ("更正", Reach::Text, r"更正|纠正|说错了|记错了|搞错了|写错了|其实是|实际上是"),
        ("现在", Reach::Clause, r"现在|如今|目前|眼下|这阵子"),
        ("从此", Reach::Clause, r"从此|从现在起|今后|以后都"),
        ("不再", Reach::Clause, r"不再|再也不|已经不"),
        ("搬到", Reach::Verb, r"搬(?:到|去|回|家|进)|迁(?:到|往|居)|移居"),
        ("换成", Reach::Verb, r"换(?:成|到|了|掉|用)|改用|转用|转到|转投"),
        // A date or a time moved: "改到下周五", "改期到10月", "改在周三".
        (
            "改期",
            Reach::Verb,
            r"改期(?:到|至)?|改(?:到|在|成|为)(?:[0-9]|[一二三四五六七八九十]|下|这|本|明|后|周|星期|礼拜)",
        ),
        ("改到", Reach::Verb, r"改(?:成|为|到|在|了|期)|更改|调整(?:为|到|成)"),
        ("迁移到", Reach::Verb, r"迁移(?:到|至)?"),
        ("离职", Reach::Verb, r"离职|辞职|跳槽|跳到|退出|退学|被裁|离开了|转行|改行|换(?:了份?)?工作"),
        // Something new in a slot ("新家", "新工作", "新领导"), as English's "a new job".
        (
            "新",
            Reach::Clause,
            r"新(?:家(?:$|[^具电居])|工作|公司|单位|手机(?:$|[^壳膜套])|车|地址|领导|老板|上司|男友|女友|男朋友|女朋友|号码)",
        ),
        ("戒掉", Reach::Verb, r"戒(?:掉|了)|放弃了|停掉|停了|不干了"),
        ("卖掉", Reach::Verb, r"卖(?:掉|了)|处理掉"),
        ("交给", Reach::Verb, r"交给|交接给|移交给?|转交给?|接手|接管"),
        ("取消", Reach::Verb, r"取消|撤销|作废"),
        ("推迟", Reach::Verb, r"推迟|延期|延后|推后|顺延|提前到|提前了"),
        (
            "调整到",
            Reach::Verb,
            r"(?:削减|降低|减少|下调|上调|提高|增加|涨|降|砍|缩减|增至|扩大)[^，。；,;]{0,4}?(?:到|至|为)",
        ),
        (
            "升",
            Reach::Verb,
            r"升(?:入|到|上)?(?:[一二三四五六七八九\d]年级|初[一二三]|高[一二三]|大[一二三四])|升职|晋升|提拔|升为",
        ),
        ("毕业", Reach::Verb, r"毕业了"),
        ("分手", Reach::Verb, r"分手|离婚|分开了"),
        ("结婚", Reach::Verb, r"结婚了|订婚了|领证了"),
    ];
    cues.iter().map(|(name, reach, re)| (*name, *reach, Regex::new(re).expect("cue pattern compiles"))).collect()
});

/// A negation just before a cue: "没有搬到", "不会换", "并未离职", "不打算".
static NEGATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:没有?|不会|不想|不打算|不准备|并未|未|别|不要|不用|没能)\S{0,1}$")
        .expect("negation pattern compiles")
});

/// Helping with a change, which is someone else's: "帮朋友搬家", "陪她去换手机".
static HELPING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:帮|替|陪|协助)\S{0,6}$").expect("helping pattern compiles"));

/// A stay somewhere is not a move there.
static VISIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"出差|旅游|旅行|度假|拜访|参观|玩了|去了一趟|暂住|借住").expect("visit pattern compiles")
});

/// Every change cue and single-valued slot in Chinese, for [`super::may_replace_anything`].
pub(super) fn may_replace_anything(text: &str) -> bool {
    CHANGE_CUES.iter().any(|(_, _, re)| re.is_match(text))
        || ATTRIBUTE_RULES.iter().any(|r| r.attribute.is_single_valued() && r.pattern.is_match(text))
}

/// The words of a text split into clauses at punctuation: index ranges into the words.
fn clause_ranges(words: &[Word<'_>]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, word) in words.iter().enumerate() {
        if word.class == WordClass::Punct && word.text.chars().any(|c| "，。；！？,;!?：:\n".contains(c)) {
            if i > start {
                out.push(start..i);
            }
            start = i + 1;
        }
    }
    if start < words.len() {
        out.push(start..words.len());
    }
    out
}

/// Someone named through someone else, or what someone has that is not them (kin, the groups
/// they belong to, their pets), with the English word the English reading keys them by
/// ("maya's sister"), so a subject is one key in either language.
fn relation_of(word: &str) -> Option<&'static str> {
    chinese::KIN.iter().chain(chinese::GROUPS).chain(RELATED_PETS).find(|(zh, _)| *zh == word).map(|(_, en)| *en)
}

/// Roles someone fills for another: "张伟的领导是李明" states who fills the role, about 张伟;
/// "张伟的领导离职了" is about the manager.
/// Partners are roles too ("我对象叫小美" says who fills it).
fn role_of(word: &str) -> Option<&'static str> {
    chinese::ROLES
        .iter()
        .find(|(zh, _)| *zh == word)
        .map(|(_, en)| *en)
        .or_else(|| chinese::person_word(word).filter(|en| english::is_role_held_one_at_a_time(en)))
}

/// The pets a possessive names ("张伟的猫").
const RELATED_PETS: &[(&str, &str)] = &[("猫", "cat"), ("狗", "dog")];

/// The names a Chinese text mentions, each with the index of its word.
fn find_mentions(words: &[Word<'_>], clauses: &[std::ops::Range<usize>], first_person: &str) -> Vec<Mention> {
    let mut mentions: Vec<Mention> = Vec::new();
    let mut add = |name: String, key: String, word: usize| {
        if !mentions.iter().any(|m| m.key == key) {
            mentions.push(Mention { name, key, word });
        }
    };
    let clause_starts: BTreeSet<usize> = clauses.iter().map(|c| c.start).collect();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        let next = words.get(i + 1).map(|w| w.text);
        match word.class {
            WordClass::Person => add(word.text.to_owned(), word.text.to_owned(), i),
            // The dictionary tags some verb phrases as names ("喝咖啡"): a proper noun does
            // not open with a verb.
            WordClass::Proper if !opens_with_a_verb(word.text) => add(word.text.to_owned(), word.text.to_owned(), i),
            // A product or a name in Latin letters, with a model number after it ("iPhone 17").
            WordClass::Latin if word.text.chars().any(|c| c.is_ascii_uppercase()) => {
                let mut name = word.text.to_owned();
                if let Some(number) = words.get(i + 1).filter(|w| w.class == WordClass::Number)
                    && number.span.start <= word.span.end + 1
                {
                    name = format!("{name} {}", number.text);
                    i += 1;
                }
                add(name.clone(), name.to_lowercase(), i);
            }
            WordClass::Noun => {
                let topic = clause_starts.contains(&i) && !NOT_TOPICS.contains(&word.text);
                let kind_after = next.is_some_and(|n| chinese::KIND_NOUNS.iter().any(|(kind, _)| *kind == n));
                let possessor = next == Some("的") && !NOT_TOPICS.contains(&word.text);
                let named = topic || kind_after || possessor;
                if named && relation_of(word.text).is_none() && role_of(word.text).is_none() {
                    add(word.text.to_owned(), word.text.to_owned(), i);
                }
            }
            WordClass::Other if word.text == "我" => add("the speaker".to_owned(), first_person.to_owned(), i),
            _ => {}
        }
        i += 1;
    }
    mentions
}

/// Verbs that open phrases the dictionary lists whole ("喝咖啡", "打篮球").
const VERB_OPENERS: &str = "喝吃打看玩学做用开买卖换搬去来回住";

fn opens_with_a_verb(word: &str) -> bool {
    word.chars().count() >= 3 && word.chars().next().is_some_and(|c| VERB_OPENERS.contains(c))
}

/// Prepositions a statement that dropped its "I" opens with.
const PREPOSITIONS: &[&str] = &["和", "跟", "与", "同", "给", "对", "向", "替", "帮", "陪", "把", "被"];

/// Whom or what the text is about. Chinese puts its topic first, after any time or adverb
/// ("昨天张伟…", "已经…"): a name there, or the person a relation after it is ("我女儿",
/// "刘洋的团队"), or the speaker's kin named alone ("女儿升四年级了"); a verb there means the
/// "I" was dropped ("上个月搬到深圳了"); a pronoun, someone not named. Otherwise the first name.
fn subject_of(words: &[Word<'_>], mentions: &[Mention], first_person: &str) -> Option<String> {
    // Times and adverbs ("已经", "也") come before the topic; "我" and pronouns are it.
    let leads_in = |w: &Word<'_>| match w.class {
        WordClass::Punct | WordClass::Time => true,
        WordClass::Other => w.text != "我" && !chinese::PRONOUNS.contains(&w.text) && !PREPOSITIONS.contains(&w.text),
        _ => false,
    };
    let opener = words.iter().position(|w| !leads_in(w))?;
    // "和张伟吃饭…", "跟老板说…": a statement opening with a preposition dropped its "I".
    if PREPOSITIONS.contains(&words[opener].text) {
        return Some(first_person.to_owned());
    }
    if let Some(relation) = relation_of(words[opener].text)
        && !chinese::PERSON_WORDS_THAT_ALSO_NAME_THINGS.contains(&words[opener].text)
    {
        return Some(format!("{first_person}'s {relation}"));
    }
    if chinese::PRONOUNS.contains(&words[opener].text) {
        return None;
    }
    let first = match mentions.iter().find(|m| m.word == opener) {
        Some(at_opener) => at_opener,
        None if words[opener].class == WordClass::Verb => return Some(first_person.to_owned()),
        None => mentions.iter().min_by_key(|m| m.word)?,
    };
    let mut after = first.word + 1;
    if words.get(after).is_some_and(|w| w.text == "的") {
        after += 1;
    }
    if let Some(next) = words.get(after) {
        // "张伟的领导是李明", "我对象叫小美": the role filled, about 张伟 and me; "张伟的领导离职了":
        // the boss.
        // "叫" is "is called" ("我对象叫小美"), except before a person it asks to do something
        // ("我老板叫我周末加班" is the boss asking).
        let asks = |at: usize| words.get(at + 1).is_some_and(|w| w.text == "我" || chinese::PRONOUNS.contains(&w.text));
        let filled = words
            .get(after + 1)
            .is_some_and(|w| matches!(w.text, "是" | "换成" | "换了" | "变成") || (w.text == "叫" && !asks(after + 1)));
        // "我哥哥张强下个月结婚": the name after the relation is whom it is about.
        // (The name finder reads the rest whole: a name the segmenter split is still one.)
        let named_after = || {
            let rest: String = words[after + 1..].iter().map(|w| w.text).collect();
            han::person_names(&rest)
                .into_iter()
                .find(|name| name.start == 0)
                .map(|name| rest[name].to_owned())
                .or_else(|| mentions.iter().find(|m| m.word == after + 1).map(|m| m.key.clone()))
        };
        if let Some(role) = role_of(next.text) {
            if !filled {
                return Some(named_after().unwrap_or_else(|| format!("{}'s {role}", first.key)));
            }
        } else if let Some(relation) = relation_of(next.text) {
            return Some(named_after().unwrap_or_else(|| format!("{}'s {relation}", first.key)));
        }
    }
    Some(first.key.clone())
}

/// The content words of `words`, as the rules compare them: Chinese words and bigrams, Latin
/// words stemmed.
fn terms_of(words: &[Word<'_>]) -> BTreeSet<String> {
    // Times and cadences ("今年", "每天") say when, not what: they are the weak slots' values.
    let words: Vec<Word<'_>> =
        words.iter().filter(|w| w.class != WordClass::Time && !w.text.starts_with('每')).cloned().collect();
    han::content_words(&words)
        .into_iter()
        .map(|t| if t.is_ascii() { stem(&t).into_owned() } else { t })
        .filter(|t| !super::is_stopword(t))
        .collect()
}

fn slots_of(text: &str, visit: bool) -> BTreeSet<Attribute> {
    let mut slots: BTreeSet<Attribute> = ATTRIBUTE_RULES
        .iter()
        .filter(|r| !(r.attribute == Attribute::Residence && visit))
        .filter(|r| r.pattern.is_match(text))
        .map(|r| r.attribute)
        .collect();
    slots.extend(english_attributes(text, visit));
    slots
}

/// Reads a Chinese text as a [`Claim`].
pub(super) fn read(text: &str) -> Claim {
    // A transcript label says whose first person the rest is.
    let (body, first_person) = match LABEL.captures(text) {
        Some(label) => {
            let name = label.get(1).map_or("", |m| m.as_str());
            let whole = label.get(0).map_or(0, |m| m.end());
            // "用户：", "user:" and a heading ("更新：") leave the first person the writer's; a
            // person's name ("小王：") makes it theirs.
            let named = han::has_han(name) && han::person_names(name).first().is_some_and(|r| r.len() == name.len());
            let own = chinese::PERSON_LABELS.contains(&name.to_lowercase().as_str()) || !named;
            let speaker = if own { SPEAKER.to_owned() } else { name.to_owned() };
            (&text[whole..], speaker)
        }
        None => (text, SPEAKER.to_owned()),
    };
    let words = han::words(body);
    let clauses = clause_ranges(&words);
    let mut mentions = find_mentions(&words, &clauses, &first_person);
    let subject = subject_of(&words, &mentions, &first_person);
    // The dropped "I" is mentioned where the statement opens.
    if subject.as_deref() == Some(first_person.as_str()) && !mentions.iter().any(|m| m.key == first_person) {
        mentions.insert(0, Mention { name: "the speaker".to_owned(), key: first_person.clone(), word: 0 });
    }
    let visit = VISIT.is_match(body);
    let attributes = slots_of(body, visit);
    // The subject's own words are not what is said of it.
    let subject_words: BTreeSet<String> = mentions
        .iter()
        .filter(|m| subject.as_deref().is_some_and(|s| s == m.key || s.starts_with(&format!("{}'s ", m.key))))
        .map(|m| m.name.to_lowercase())
        .chain(
            chinese::KIN
                .iter()
                .chain(chinese::GROUPS)
                .chain(RELATED_PETS)
                .chain(chinese::ROLES)
                .map(|(zh, _)| (*zh).to_owned()),
        )
        .collect();
    let content = |words: &[Word<'_>]| -> BTreeSet<String> {
        terms_of(words).into_iter().filter(|t| !subject_words.contains(t)).collect()
    };
    let terms = content(&words);
    let mut change = None;
    let (mut changed_terms, mut changed_attributes) = (BTreeSet::new(), BTreeSet::new());
    let mut cue_words = BTreeSet::new();
    for range in &clauses {
        let clause_words = &words[range.clone()];
        let (from, to) = (clause_words[0].span.start, clause_words[clause_words.len() - 1].span.end);
        let clause = &body[from..to];
        // A clause that opens with someone else's name speaks of them.
        let opens_with = mentions.iter().find(|m| m.word == range.start);
        if opens_with.is_some_and(|m| {
            subject.as_deref().is_some_and(|s| s != m.key && !s.starts_with(&format!("{}'s ", m.key)))
                && words[m.word].class == WordClass::Person
        }) {
            continue;
        }
        for (cue, reach, re) in CHANGE_CUES.iter() {
            for found in re.find_iter(clause) {
                let before = &clause[..found.start()];
                let negated = !cue.starts_with('不') && NEGATED.is_match(before);
                // "帮朋友搬家": helping with someone else's change.
                let for_someone_else = HELPING.is_match(before);
                if negated || for_someone_else || (*cue == "现在" && for_the_moment(&clause[found.end()..])) {
                    continue;
                }
                change = change.or(Some(*cue));
                cue_words.extend(terms_of(&han::words(found.as_str())));
                let scope = match reach {
                    Reach::Text => &words[..],
                    Reach::Clause | Reach::Verb => clause_words,
                };
                changed_terms.extend(content(scope));
                let scope_text = match reach {
                    Reach::Text => body,
                    Reach::Clause | Reach::Verb => clause,
                };
                changed_attributes.extend(slots_of(scope_text, visit));
            }
        }
    }
    changed_terms.retain(|t: &String| !cue_words.contains(t));
    Claim { mentions, subject, attributes, terms, change, changed_terms, changed_attributes }
}

/// Whether what follows "现在" says what is going on at the moment ("现在在开会", "现在正在
/// 吃饭", "现在在腾讯楼下"): the progressive 在 or a place for now, not a changed fact — unless
/// the clause names where someone works or lives ("现在在字节跳动做基础架构").
fn for_the_moment(after: &str) -> bool {
    let lasting = |slot: Attribute| ATTRIBUTE_RULES.iter().any(|r| r.attribute == slot && r.pattern.is_match(after));
    (after.starts_with('在') || after.starts_with("正在"))
        && !lasting(Attribute::Work)
        && !lasting(Attribute::Residence)
}

#[cfg(test)]
mod tests {
    use super::super::Claim;

    #[test]
    fn subjects_in_chinese() {
        let subject = |text: &str| Claim::read(text).subject;
        assert_eq!(subject("张伟在腾讯做后端开发。").as_deref(), Some("张伟"));
        assert_eq!(subject("天穹项目的上线日期定在5月12日。").as_deref(), Some("天穹"));
        assert_eq!(subject("财务把天穹的预算削减到150万元。").as_deref(), Some("财务"));
        assert_eq!(subject("用户：我女儿在读小学三年级").as_deref(), Some("@speaker's daughter"));
        assert_eq!(subject("用户：女儿这周升四年级了").as_deref(), Some("@speaker's daughter"));
        assert_eq!(subject("刘洋的团队把站会改到了十点一刻。").as_deref(), Some("刘洋's team"));
        assert_eq!(subject("上个月搬到深圳了。").as_deref(), Some("@speaker"));
        assert_eq!(subject("她特别喜欢画马").as_deref(), None);
        // The English reading keys the same relation the same way.
        assert_eq!(Claim::read("user: my daughter is in third grade").subject.as_deref(), Some("@speaker's daughter"));
    }

    proptest::proptest! {
        /// Any mix of Han, Latin, digits and the punctuation both languages use reads as a
        /// claim without panicking (every cut falls on a character boundary), and the same
        /// text reads the same way twice.
        #[test]
        fn any_chinese_text_reads_as_a_claim(
            old in "[张伟小王天穹搬到换成现在了的在是我女儿，。：:a-zA-Z0-9 ]{0,40}",
            new in "[张伟小王天穹搬到换成现在了的在是我女儿，。：:a-zA-Z0-9 ]{0,40}",
        ) {
            let (a, b) = (Claim::read(&old), Claim::read(&new));
            proptest::prop_assert_eq!(&a, &Claim::read(&old));
            proptest::prop_assert_eq!(&b, &Claim::read(&new));
        }
    }
}
