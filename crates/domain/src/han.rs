//! Chinese text as the rules read it: Han characters told from other scripts, words cut by a
//! dictionary segmenter (jieba, its dictionary compiled in), people's names found by their
//! surname, and the function words that say nothing about what a text is about.
//!
//! Chinese writes no spaces and no capitals, so the two things English rules lean on — word
//! boundaries and capitalised names — come from here instead. The dictionary knows words and
//! places and organisations; it knows few personal names (they are open-ended), so a name is
//! read the way a reader does: a surname from the list of common ones, one or two characters
//! after it, where a name can stand (at the start of a clause, or after a word that takes a
//! person: 和、跟、给、告诉 …), and not part of an ordinary word (周末 is a weekend, not 周).

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::LazyLock;

use jieba_rs::Jieba;

/// Whether `ch` is a Han character (CJK unified ideographs, extension A, compatibility).
pub fn is_han(ch: char) -> bool {
    matches!(ch as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Whether a text is written mainly in Chinese: at least two Han characters for every word in
/// Latin letters. A Chinese word is one to three characters, two on average, so "北斗已经从
/// MySQL 迁移到 PostgreSQL 了" is Chinese with two product names, and "Dana works at 字节跳动"
/// English with a company's name.
pub fn mostly_han(text: &str) -> bool {
    let han = text.chars().filter(|&c| is_han(c)).count();
    if han == 0 {
        return false;
    }
    let latin_words = text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).count();
    han >= 2 * latin_words
}

/// Whether a text holds any Han character.
pub fn has_han(text: &str) -> bool {
    text.chars().any(is_han)
}

/// The segmenter, with its dictionary loaded on first use (a few hundred milliseconds, once per
/// process, and only in a process that reads Chinese).
fn jieba() -> &'static Jieba {
    static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);
    &JIEBA
}

/// What kind of word a [`Word`] is, as far as the rules need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordClass {
    /// A person's name found by its surname ([`person_names`]).
    Person,
    /// A name the dictionary knows: a person (nr), a place (ns), an organisation (nt), another
    /// proper noun (nz).
    Proper,
    Noun,
    Verb,
    /// A time word: 今年、上个月、现在.
    Time,
    Number,
    /// A run of Latin letters (and digits): a product, a name, an English word.
    Latin,
    /// Punctuation and other symbols.
    Punct,
    /// Pronouns, particles, adverbs, prepositions and everything else.
    Other,
}

/// One word of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'t> {
    pub text: &'t str,
    pub class: WordClass,
    /// Where it lies in the text, in bytes.
    pub span: Range<usize>,
}

impl Word<'_> {
    /// Whether it is a noun of any kind, names included.
    pub fn is_nominal(&self) -> bool {
        matches!(self.class, WordClass::Person | WordClass::Proper | WordClass::Noun | WordClass::Latin)
    }
}

/// The words of `text`, whitespace left out: people's names first ([`person_names`]), the rest
/// as the dictionary cuts it (without guessing unknown words, which merges a name with the verb
/// after it: "赵敏喜欢" read as "赵敏喜" + "欢").
pub fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    for name in person_names(text) {
        cut_into(text, at..name.start, &mut out);
        out.push(Word { text: &text[name.clone()], class: WordClass::Person, span: name.clone() });
        at = name.end;
    }
    cut_into(text, at..text.len(), &mut out);
    out
}

fn cut_into<'t>(text: &'t str, range: Range<usize>, out: &mut Vec<Word<'t>>) {
    let piece = &text[range.clone()];
    if piece.is_empty() {
        return;
    }
    let mut offset = range.start;
    for tag in jieba().tag(piece, false) {
        let span = offset..offset + tag.word.len();
        offset = span.end;
        if tag.word.trim().is_empty() {
            continue;
        }
        out.push(Word { text: &text[span.clone()], class: class_of(tag.word, tag.tag), span });
    }
}

fn class_of(word: &str, tag: &str) -> WordClass {
    let first = word.chars().next().unwrap_or(' ');
    if first.is_ascii_alphabetic() {
        return WordClass::Latin;
    }
    if word.chars().any(|c| c.is_ascii_digit()) && word.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return WordClass::Number;
    }
    if !word.chars().any(|c| c.is_alphanumeric()) {
        return WordClass::Punct;
    }
    match tag {
        "nr" | "nrt" | "nrfg" | "ns" | "nt" | "nz" => WordClass::Proper,
        "t" | "tg" => WordClass::Time,
        "m" | "mq" => WordClass::Number,
        t if t.starts_with('n') => WordClass::Noun,
        t if t.starts_with('v') => WordClass::Verb,
        _ => WordClass::Other,
    }
}

/// The most common surnames of one character (together, the family names of most people in
/// mainland China and Taiwan).
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝";

/// Surnames of two characters.
const COMPOUND_SURNAMES: &[&str] = &[
    "欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "令狐", "慕容", "尉迟", "公孙", "夏侯", "长孙", "宇文", "司徒",
    "端木",
];

/// Characters that are never part of a given name: particles, prepositions, pronouns and the
/// like, which is what follows a name in a sentence ("陈静的手机", "张伟在腾讯").
const NEVER_IN_A_NAME: &str = "的了在是把被从对也都已还又就说和跟与给让这那有没不很着过吗呢吧啊呀哦嗯我你您他她它们个之其而及或等于为以由向往到上下里中会要能可去来每今昨将正刚才曾最再";

/// Characters that end a one-character given name when they follow it: besides the
/// particles, the verbs a statement about someone most often opens with ("王芳住在…",
/// "李明说…", "陈静换了…").
const AFTER_A_NAME: &str = "住搬换改离戒吃喝看读学写做用当打买养开跑带请叫想问觉认知得升转迁辞入负参加拿收发送见约";

/// Words after which a name can stand mid-sentence: they take a person ("和王芳", "告诉李明").
const BEFORE_A_NAME: &[&str] = &[
    "和",
    "跟",
    "与",
    "同",
    "给",
    "让",
    "叫",
    "找",
    "问",
    "被",
    "对",
    "向",
    "是",
    "说",
    "及",
    "或",
    "、",
    "告诉",
    "谢谢",
    "感谢",
    "恭喜",
    "祝贺",
    "听说",
    "通知",
    "提醒",
    "联系",
    "认识",
    "遇到",
    "见到",
    "碰到",
    "同事",
    "朋友",
    "老板",
    "经理",
    "领导",
    "老师",
    "同学",
    "室友",
    "邻居",
    "女儿",
    "儿子",
    "妻子",
    "丈夫",
    "老婆",
    "老公",
    "男友",
    "女友",
    "男朋友",
    "女朋友",
];

/// The people's names in `text`, as byte ranges, in order: a common surname where a name can
/// stand, then a given name of one or two characters (or 小/老 before a surname: 小王、老李).
pub fn person_names(text: &str) -> Vec<Range<usize>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(text.len(), |(at, _)| *at);
    let mut names = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        // "祝贺张伟…": a word that takes a person is not the start of one.
        let takes_a_person = BEFORE_A_NAME.iter().any(|w| w.len() > 3 && text[chars[i].0..].starts_with(w));
        if !name_can_start(text, chars[i].0) || takes_a_person {
            i += 1;
            continue;
        }
        let found = familiar_name(&chars, i).or_else(|| full_name(text, &chars, i));
        match found {
            Some(len) => {
                names.push(chars[i].0..end_of(i + len));
                i += len;
            }
            None => i += 1,
        }
    }
    names
}

/// "小王", "老李": a surname after 小 or 老, as people call a friend or a colleague.
fn familiar_name(chars: &[(usize, char)], i: usize) -> Option<usize> {
    let (_, first) = chars[i];
    let (_, second) = *chars.get(i + 1)?;
    let next = chars.get(i + 2).map(|(_, c)| *c);
    // "小王子" is a little prince, "老王八" no one: the next character must not go on with it;
    // and "老师", "小米", "小白" are words of their own.
    let ends = next.is_none_or(|c| !is_han(c) || NEVER_IN_A_NAME.contains(c) || AFTER_A_NAME.contains(c));
    let familiar = matches!(first, '小' | '老') && SURNAMES.contains(second) && ends;
    (familiar && !is_ordinary_word(&format!("{first}{second}"))).then_some(2)
}

/// A surname and a given name of one or two characters, unless the dictionary reads the
/// characters as an ordinary word (周末, 高兴, 马上).
fn full_name(text: &str, chars: &[(usize, char)], i: usize) -> Option<usize> {
    let rest = &text[chars[i].0..];
    let surname = COMPOUND_SURNAMES
        .iter()
        .find(|s| rest.starts_with(**s))
        .map(|_| 2)
        .or_else(|| SURNAMES.contains(chars[i].1).then_some(1))?;
    let given = |k: usize| chars.get(i + surname + k).map(|(_, c)| *c).filter(|&c| is_han(c));
    given(0).filter(|c| !NEVER_IN_A_NAME.contains(*c))?;
    let span = |len: usize| &text[chars[i].0..chars.get(i + len).map_or(text.len(), |(at, _)| *at)];
    // "谢谢", "常常": a doubled character is a word, not a surname and a name; "明白了": a
    // sentence particle does not follow a name.
    let doubled = surname == 1 && given(0) == Some(chars[i].1);
    let particle_after = |len: usize| chars.get(i + len).is_some_and(|(_, c)| "了吗吧啊呢呀".contains(*c));
    if is_ordinary_word(span(surname + 1)) || doubled || particle_after(surname + 1) {
        return None;
    }
    // A second given character, unless it is a particle or a verb, or opens a dictionary word
    // ("赵敏喜欢": 喜欢; "张伟周末": 周末).
    let second_at = i + surname + 1;
    let two = match given(1) {
        Some(c) if !NEVER_IN_A_NAME.contains(c) && !AFTER_A_NAME.contains(c) => {
            let from = &text[chars[second_at].0..];
            !opens_a_word(from) && !is_ordinary_word(span(surname + 2))
        }
        _ => false,
    };
    Some(surname + if two { 2 } else { 1 })
}

/// Whether the dictionary holds `word` as something other than a person's name.
fn is_ordinary_word(word: &str) -> bool {
    let tags = jieba().tag(word, false);
    tags.len() == 1 && !tags[0].tag.starts_with("nr")
}

/// Whether `text` opens with a word of two or three characters the dictionary knows.
fn opens_a_word(text: &str) -> bool {
    let prefix = |n: usize| text.char_indices().map(|(at, c)| at + c.len_utf8()).nth(n - 1).map(|end| &text[..end]);
    [2, 3].into_iter().filter_map(prefix).any(|p| p.chars().all(is_han) && jieba().has_word(p))
}

/// Whether a name can start at byte `at`: at the start, after anything not Han (punctuation,
/// a label's colon, a space), or after a word that takes a person.
fn name_can_start(text: &str, at: usize) -> bool {
    let before = &text[..at];
    match before.chars().next_back() {
        None => true,
        Some(c) if !is_han(c) => true,
        Some(_) => BEFORE_A_NAME.iter().any(|w| before.ends_with(w)),
    }
}

/// Function words: what every Chinese text holds whatever it is about, so never a content
/// word. Single characters and common words; the particles and pronouns first.
static STOPWORDS: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    let chars = "的了在是把被从对也都已还又就和跟与给让这那有没不很着过吗呢吧啊呀哦嗯我你您他她它们个之其而及或等于为以由向往到上下里中会要能可去来说很太更最再才刚";
    let words = [
        "我们", "你们", "他们", "她们", "它们", "自己", "这个", "那个", "这些", "那些", "什么", "怎么", "怎样", "哪里",
        "哪儿", "哪个", "多少", "几", "谁", "已经", "一个", "一些", "因为", "所以", "但是", "可是", "而且", "然后",
        "还是", "或者", "如果", "虽然", "就是", "也是", "还有", "没有", "不是", "可以", "应该", "需要", "觉得", "知道",
        "时候", "这样", "那样", "非常", "特别", "比较", "真的", "一直", "总是", "其实", "目前", "现在", "当时", "这里",
        "那里", "一下", "一样", "起来",
    ];
    let mut set: BTreeSet<&'static str> = words.into_iter().collect();
    set.extend(chars.char_indices().map(|(at, c)| &chars[at..at + c.len_utf8()]));
    set
});

/// Whether a Chinese word is a function word.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(word)
}

/// The content words of Chinese `words`, lowercased: dictionary words of two characters or
/// more; where the dictionary knew nothing and cut single characters ("开站会", "画马"), the
/// bigrams of that run, so a word it does not know is still matched by the pairs it is made of;
/// a single character standing alone (喝, 猫) as itself. Function words, punctuation and
/// bigrams holding a particle are left out. Latin words and numbers are kept as written,
/// lowercased.
pub fn content_words(words: &[Word<'_>]) -> Vec<String> {
    terms(words, false)
}

/// The terms a full-text index holds for Chinese text ([`crate::text::tokenize`]): the
/// [`content_words`], and every character too, so a question asking with one character
/// ("画什么", "车在哪") still finds the word or the pair it is part of ("画马", "新车"). A
/// question and a memory cut differently by the segmenter (a word in one, single characters in
/// the other) still share the bigrams and characters; words, rarer than characters, weigh
/// more in a ranking by rarity.
pub fn index_words(text: &str) -> Vec<String> {
    terms(&words(text), true)
}

fn terms(words: &[Word<'_>], with_characters: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, out: &mut Vec<String>| {
        let characters = run.iter().map(char::to_string).filter(|c| !is_stopword(c));
        match run.len() {
            0 => {}
            1 => out.extend(characters),
            _ => {
                out.extend(
                    run.windows(2)
                        .filter(|pair| pair.iter().all(|c| !PARTICLES.contains(*c)))
                        .map(|pair| pair.iter().collect::<String>()),
                );
                if with_characters {
                    out.extend(characters);
                }
            }
        }
        run.clear();
    };
    for word in words {
        let single_han = word.text.chars().count() == 1 && word.text.chars().all(is_han);
        if single_han && word.class != WordClass::Person {
            run.extend(word.text.chars());
            continue;
        }
        flush(&mut run, &mut out);
        match word.class {
            WordClass::Punct => {}
            _ if is_stopword(word.text) => {}
            _ => {
                out.push(word.text.to_lowercase());
                out.extend(inner_words(word.text).into_iter().filter(|w| !is_stopword(w)).map(str::to_owned));
                // A question may ask with one character of a word ("车" of "新车").
                if with_characters && word.text.chars().count() > 1 && word.text.chars().all(is_han) {
                    out.extend(word.text.chars().map(String::from).filter(|c| !is_stopword(c)));
                }
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The dictionary words inside a longer one ("喝咖啡": 咖啡; "基础架构": 基础, 架构), as a
/// search engine's segmentation adds them: a compound shares its parts with texts that say
/// them alone.
fn inner_words(word: &str) -> Vec<&str> {
    let bounds: Vec<usize> = word.char_indices().map(|(at, _)| at).chain([word.len()]).collect();
    let chars = bounds.len() - 1;
    let han = word.chars().all(is_han);
    (2..chars.min(4))
        .filter(move |_| han && chars >= 3)
        .flat_map(move |len| (0..=chars - len).map(move |from| (from, len)))
        .map(move |(from, len)| &word[bounds[from]..bounds[from + len]])
        .filter(|part| jieba().has_word(part))
        .collect()
}

/// Particles that make a bigram no word ("到了", "把站").
const PARTICLES: &str = "的了把被在是从对也都和与吗呢吧啊";

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<&str> {
        person_names(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn names_are_found_by_their_surname_where_a_name_can_stand() {
        let table: &[(&str, &[&str])] = &[
            ("张伟在腾讯做后端开发。", &["张伟"]),
            ("赵敏喜欢爵士乐。", &["赵敏"]),
            ("陈静的手机是华为 Mate 60。", &["陈静"]),
            ("刘洋每个工作日九点半开站会。", &["刘洋"]),
            ("小王住在杭州，养了一只橘猫。", &["小王"]),
            ("李明华是我的同事。", &["李明华"]),
            ("欧阳娜娜搬到了上海。", &["欧阳娜娜"]),
            ("我和王芳去看电影。", &["王芳"]),
            ("用户：我女儿在读小学三年级", &[]),
            // Ordinary words that open with a surname, and surnames inside words.
            ("周末去打羽毛球。", &[]),
            ("马上就到。", &[]),
            ("她特别喜欢画马", &[]),
            ("女儿这周升四年级了", &[]),
            ("天穹上线推迟了两周。", &[]),
            ("明白了，下周去上海", &[]),
            ("谢谢王芳帮忙", &["王芳"]),
            ("祝贺张伟升职了", &["张伟"]),
            ("老师说明天考试", &[]),
            ("小米的股价涨了", &[]),
            ("和张伟吃饭", &["张伟"]),
            ("我把车停在楼下了", &[]),
            ("帮我联系李明一下", &["李明"]),
            ("提醒王芳明天交报告", &["王芳"]),
        ];
        for (text, expected) in table {
            assert_eq!(names(text), *expected, "{text}");
        }
    }

    #[test]
    fn words_keep_names_whole_and_cut_the_rest_by_the_dictionary() {
        let cut: Vec<&str> = words("赵敏喜欢爵士乐。").iter().map(|w| w.text).collect();
        assert_eq!(cut, ["赵敏", "喜欢", "爵士乐", "。"]);
        let mixed = words("北斗已经从 MySQL 迁移到 PostgreSQL 了。");
        let latin: Vec<&str> = mixed.iter().filter(|w| w.class == WordClass::Latin).map(|w| w.text).collect();
        assert_eq!(latin, ["MySQL", "PostgreSQL"]);
    }

    #[test]
    fn content_words_pair_characters_the_dictionary_did_not_know() {
        let terms = content_words(&words("刘洋每个工作日九点半开站会。"));
        assert!(terms.contains(&"站会".to_owned()), "{terms:?}");
        assert!(terms.contains(&"工作日".to_owned()), "{terms:?}");
        assert!(!terms.iter().any(|t| t == "的" || t == "了"), "{terms:?}");
    }

    #[test]
    fn a_text_is_chinese_when_han_characters_outnumber_latin_words() {
        assert!(mostly_han("北斗已经从 MySQL 迁移到 PostgreSQL 了。"));
        assert!(!mostly_han("I moved to 深圳 last month"));
        assert!(!mostly_han("no Han at all"));
    }
}
