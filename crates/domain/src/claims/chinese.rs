//! Claims read from Chinese: the same claims as the English reader gives, from Chinese
//! clauses. A clause ends at a comma as well as a full stop (Chinese joins clauses with
//! commas); its subject is its topic, which Chinese puts first (我, 用户, a name found by its
//! surname, 我女儿, 天穹项目, 周会), or dropped, when the clause opens with its verb (the
//! writer's, or the previous clause's); its predicate is matched against the Chinese surface
//! forms of the catalogue's attributes.
//!
//! Why this holds beyond the sentences it was tried on: Chinese states where someone lives,
//! works, what they drive and when a meeting is with verbs and their result complements (住在,
//! 搬到, 在…工作, 换成, 改到), and marks what is only planned, asked, denied or past with a
//! few function words (打算, 吗, 没, 以前); those are the grammar of the language, not the
//! phrasing of any one text.

use std::sync::LazyLock;

use regex::Regex;

use super::english::canonical_role;
use super::{Claim, FirstPerson, Hold, Polarity, Reading, Subject};
use crate::han;
use crate::lexicon::{alternation, chinese, english};

pub(super) fn read(text: &str, first_person: FirstPerson) -> Reading {
    let me = match first_person {
        FirstPerson::User => Some(Subject::me()),
        FirstPerson::Nobody => None,
    };
    let (speaker, said) = match LABEL.captures(text) {
        Some(found) => {
            let label = found.name("label").map_or("", |m| m.as_str());
            let rest = &text[found.get(0).map_or(0, |m| m.end())..];
            if chinese::PERSON_LABELS.contains(&label.to_lowercase().as_str()) {
                (Some(Subject::me()), rest)
            } else if chinese::is_program_label(&label.to_lowercase()) {
                return Reading::default();
            } else {
                (Some(Subject::named(label)), rest)
            }
        }
        None => (me, text),
    };
    let mut reader = Reader { speaker, last_person: None, reading: Reading::default() };
    for sentence in SENTENCE.split(said) {
        let asked = ASKED.is_match(sentence);
        let mut previous: Option<Subject> = None;
        for clause in CLAUSE.split(sentence) {
            if clause.trim().is_empty() {
                continue;
            }
            if let Some(subject) = reader.clause(clause.trim(), previous.as_ref(), asked) {
                previous = Some(subject);
            }
        }
    }
    reader.reading
}

/// A transcript label before a colon: the person's or a program's (in either language), or a
/// name ("小王：", "Omar:").
static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    let labels = chinese::PERSON_LABELS.iter().chain(chinese::PROGRAM_LABELS).chain(english::PROGRAM_LABELS).copied();
    Regex::new(&format!(r"^\s*(?P<label>(?i:{})|[\p{{Han}}]{{2,3}}|[A-Z][a-z]+)\s*[:：]\s*", alternation(labels)))
        .expect("label pattern compiles")
});

static SENTENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[。！？!?；;\n]+").expect("sentence pattern compiles"));
static CLAUSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[，,、]|但是|不过|而且|然后").expect("clause pattern compiles"));
static ASKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[？?]|吗\s*$|是不是|有没有|要不要|能不能").expect("question pattern compiles"));

struct Reader {
    /// Whose "我" it is (see the English reader's `Reader::speaker`).
    speaker: Option<Subject>,
    last_person: Option<Subject>,
    reading: Reading,
}

/// Words a clause may open with before its subject: time words and discourse markers.
static OPENERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:现在|目前|最近|近来|如今|这阵子|这段时间|这些天|已经|刚刚|刚|终于|总算|正式|上个?月|上周|上星期|今年|去年|前年|这个月|本月|本周|这周|昨天|前天|今天|从\S{1,8}(?:起|开始)|自从\S{1,8}|另外|对了|顺便说一下|顺便|更正一下|更正|纠正一下|纠正|补充一下|补充|更新一下|更新|其实|哦|嗯|哈哈|唉|对|好消息|坏消息|告诉你|跟你说|说一下|提一下|注意|备注|记一下|记住)[，,：:\s]*)+")
        .expect("opener pattern compiles")
});

impl Reader {
    fn clause(&mut self, clause: &str, previous: Option<&Subject>, asked: bool) -> Option<Subject> {
        let hold_before = clause_hold(clause, asked);
        let stripped = OPENERS.replace(clause, "");
        let clause = stripped.trim();
        if clause.is_empty() {
            return None;
        }
        let (subject, possessed, predicate) = self.subject(clause, previous)?;
        if !subject.is_me() && !subject.key.contains("'s ") && looks_like_a_person(&subject.name) {
            self.last_person = Some(subject.clone());
        }
        let mut found: Vec<(Claim, Option<Hold>)> = Vec::new();
        match &possessed {
            Some(noun) => noun_forms(noun, predicate, &subject, &mut found),
            None => verb_forms(predicate, &subject, &mut found),
        }
        for (claim, extra) in found {
            let recurring = claim.definition().is_some_and(|d| d.recurring);
            let exception = (recurring && EXCEPTION.is_match(clause)).then_some(Hold::Exception);
            let also =
                (claim.holds() == super::Holds::One && claim.polarity == Polarity::Holds && ALSO.is_match(clause))
                    .then_some(Hold::Also);
            match extra.or(hold_before).or(exception).or(also) {
                Some(hold) => self.reading.held.push((claim, hold)),
                None => self.reading.claims.push(claim),
            }
        }
        Some(subject)
    }

    /// The clause's subject, what of it is possessed (我的*地址*), and its predicate.
    fn subject<'c>(&self, clause: &'c str, previous: Option<&Subject>) -> Option<(Subject, Option<String>, &'c str)> {
        // The first person, and what is said of what it has.
        for (opening, first_person) in [("我们", true), ("咱们", true), ("我", true), ("本人", true), ("用户", false)]
        {
            if let Some(rest) = clause.strip_prefix(opening) {
                let rest = rest.trim_start();
                let owner = if first_person { self.speaker.clone()? } else { Subject::me() };
                return Some(self.owned(owner, rest));
            }
        }
        for pronoun in ["他们", "她们", "他", "她"] {
            if let Some(rest) = clause.strip_prefix(pronoun) {
                let owner = self.last_person.clone()?;
                return Some(self.owned(owner, rest.trim_start()));
            }
        }
        // A person's name first.
        if let Some(name) = han::person_names(clause).into_iter().find(|range| range.start == 0) {
            let owner = Subject::named(&clause[name.clone()]);
            return Some(self.owned(owner, &clause[name.end..]));
        }
        // A Latin name ("Kevin", "Atlas") first.
        if let Some(found) = LATIN_NAME.find(clause) {
            let name = found.as_str().trim();
            let rest = &clause[found.end()..];
            let (name, rest) = match rest
                .strip_prefix("项目")
                .or_else(|| rest.strip_prefix("系统"))
                .or_else(|| rest.strip_prefix("平台"))
            {
                Some(after) => (name, after),
                None => (name, rest),
            };
            return Some(self.owned(Subject::named(name), rest));
        }
        // "天穹项目的负责人是宋佳": a thing, and its attribute's noun.
        if let Some((thing, rest)) = clause.split_once('的')
            && thing.chars().count() <= 10
            && let Some(noun) = THING_NOUN_SUFFIXES.iter().chain(POSSESSED_NOUNS).find(|n| rest.starts_with(**n))
        {
            let thing = thing.trim_end_matches("项目").trim_end_matches("系统");
            return Some((Subject::named(thing), Some((*noun).to_owned()), &rest[noun.len()..]));
        }
        // Otherwise the subject is what comes before the first place a form reads the rest: the
        // topic ("周会|改到周四", "房租|涨到了…"), or nothing, when the clause opens with its verb
        // (the writer's, or the previous clause's: "搬到杭州了"). Chinese runs words together,
        // so the boundary is found by the forms, not by spaces.
        let boundaries = clause.char_indices().map(|(at, _)| at).take(MAX_TOPIC_CHARS + 1);
        for at in boundaries {
            let (topic, rest) = clause.split_at(at);
            if topic.ends_with('的') || !FORMS.iter().any(|form| form.pattern.is_match(rest)) {
                continue;
            }
            if topic.is_empty() {
                let subject = previous.cloned().or_else(|| self.speaker.clone())?;
                return Some((subject, None, rest));
            }
            let topic = topic.trim_end_matches("项目");
            if let Some(noun) = THING_NOUN_SUFFIXES.iter().find(|n| topic.ends_with(**n) && topic.len() > n.len()) {
                let thing = &topic[..topic.len() - noun.len()];
                return Some((Subject::named(thing.trim_end_matches('的')), Some((*noun).to_owned()), rest));
            }
            return Some((Subject::named(topic), None, rest));
        }
        None
    }

    /// After an owner: its relation ("我女儿小美…", "我妈…"), its attribute noun ("我的地址是…",
    /// "她的老板是…"), or straight on to the predicate ("我搬到…").
    fn owned<'c>(&self, owner: Subject, rest: &'c str) -> (Subject, Option<String>, &'c str) {
        let rest = rest.strip_prefix('的').unwrap_or(rest);
        // Kin before roles, each list longest spelling first ("妈妈" before "妈").
        for (relation, key_word) in chinese::KIN.iter().chain(chinese::ROLES) {
            if let Some(after) = rest.strip_prefix(relation) {
                // "我女儿小美": the name that follows is the subject.
                if let Some(name) = han::person_names(after).into_iter().find(|r| r.start == 0) {
                    return (Subject::named(&after[name.clone()]), None, &after[name.end..]);
                }
                // "我老板是王强", "她男朋友叫…": the role filled, of the owner.
                if let Some(role) = role_held_one_at_a_time(relation)
                    && (after.starts_with('是')
                        || after.starts_with('叫')
                        || after.starts_with("换成")
                        || after.starts_with("变成")
                        || after.starts_with("换了"))
                {
                    return (owner, Some(format!("has:{role}")), after);
                }
                let subject =
                    Subject { key: format!("{}'s {key_word}", owner.key), name: format!("{}{relation}", owner.name) };
                return (subject, None, after);
            }
        }
        for noun in POSSESSED_NOUNS {
            if let Some(after) = rest.strip_prefix(noun) {
                return (owner, Some((*noun).to_owned()), after);
            }
        }
        (owner, None, rest)
    }
}

fn looks_like_a_person(name: &str) -> bool {
    han::person_names(name).first().is_some_and(|r| r.start == 0 && r.end == name.len())
        || name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

static LATIN_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Z][A-Za-z0-9.+\-]*(?: [A-Z][A-Za-z0-9.+\-]*)*").expect("latin name compiles"));

/// The longest topic a clause opens with, in characters.
const MAX_TOPIC_CHARS: usize = 12;

/// Attribute nouns a thing's topic can end with ("周会时间", "房租价格").
const THING_NOUN_SUFFIXES: &[&str] =
    &["时间", "日期", "地点", "地址", "价格", "版本", "负责人", "套餐", "供应商", "状态"];

/// The role a relation names when a person has one of it at a time, as the attribute is keyed
/// ("我老板是王强" fills `has:manager`, "我对象叫小美" `has:partner`): the lexicon's English word
/// for it, read as English reads it.
fn role_held_one_at_a_time(relation: &str) -> Option<String> {
    chinese::person_word(relation).filter(|english| english::is_role_held_one_at_a_time(english)).map(canonical_role)
}

/// Nouns an owner's attribute is named by ("我的*地址*是…").
const POSSESSED_NOUNS: &[&str] = &[
    "新地址",
    "地址",
    "电话号码",
    "手机号码",
    "手机号",
    "电话",
    "邮箱",
    "生日",
    "工作",
    "职位",
    "岗位",
    "公司",
    "单位",
    "团队",
    "部门",
    "学校",
    "手机",
    "车",
    "新车",
    "座驾",
    "编辑器",
    "饮食",
    "通勤",
    "最喜欢的",
    "血型",
];

/// What holds a whole clause back.
fn clause_hold(clause: &str, asked: bool) -> Option<Hold> {
    if asked {
        return Some(Hold::Asked);
    }
    if HEARSAY.is_match(clause) {
        return Some(Hold::Hearsay);
    }
    if PLANNED.is_match(clause) {
        return Some(Hold::Planned);
    }
    if PAST.is_match(clause) {
        return Some(Hold::Past);
    }
    if DENIED.is_match(clause) {
        return Some(Hold::Denied);
    }
    None
}

static HEARSAY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"听说|据说|好像|传言|谣传|似乎|不确定").expect("hearsay compiles"));
static PLANNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"打算|准备|计划|想要|想去|想搬|想换|想学|可能|也许|或许|考虑|要是|如果|假如|下个?月|下周|下星期|明年|将要|即将|快要|希望|梦想|正在考虑|犹豫|还没决定|说不定|以后|将来|争取|等.{1,8}(?:以后|之后|再)")
        .expect("plan compiles")
});
static PAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"以前|之前|曾经|过去|小时候|当年|那时候|那时|早年|读书的时候|上学的时候|大学的时候|\d{4}年(?:的时候|那会儿)|原来").expect("past compiles")
});
static DENIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"没有(?:搬|换|去|辞|离|调|改|买|卖|结婚|分手)|没(?:搬|换|去|辞|离|调|改|买|卖)|并没有|并不是|不是要|其实没|并未|没打算|谣言|假的").expect("denied compiles")
});
static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"这周|本周|这次|今天|今晚|明天|临时|暂时|因为|由于|例外|破例|只是这一次|就这一次|偶尔|这一周|这礼拜")
        .expect("exception compiles")
});
static ALSO: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"也|还在|另外|同时|兼职|副业").expect("also compiles"));

/// A form: a pattern over a Chinese predicate, group `v` the value.
struct Form {
    attribute: &'static str,
    polarity: Polarity,
    pattern: Regex,
}

fn form(attribute: &'static str, polarity: Polarity, pattern: &str) -> Form {
    let pattern = pattern.replace("{A}", ADVERBS).replace("{V}", VALUE);
    Form {
        attribute,
        polarity,
        pattern: Regex::new(&format!("^{pattern}")).unwrap_or_else(|e| panic!("{attribute}: {e}")),
    }
}

/// Adverbs before a verb.
const ADVERBS: &str = r"(?:(?:现在|目前|已经|刚刚|刚|终于|总算|正式|也|都|又|还|就|才|一直|早就|从此|以后|平时|一般|通常|主要|基本上|已)\s*)*";
/// A value: up to a clause's end or a particle that closes it.
const VALUE: &str = r"(?P<v>[^，,。！？!?；;了啦呢吧啊]+?)(?:了|啦|呢|吧|啊|的)?\s*$";

use Polarity::{Ended, Holds};

static FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    vec![
        // Endings.
        form(
            "habits",
            Ended,
            r"{A}(?:戒了|戒掉了|戒掉|戒|不再|不)(?P<v>烟|酒|咖啡|奶茶|糖|抽烟|吸烟|喝酒|喝咖啡|喝奶茶|熬夜)(?:了)?",
        ),
        form("diet", Ended, r"{A}(?:不再|不)(?P<v>吃素|是素食者|吃全素)(?:了)?"),
        form("employer", Ended, r"{A}(?:辞职|离职|被裁|被裁员|被辞退|失业|退休)(?:了)?\s*$"),
        form("*", Ended, r"{A}(?:从|离开了?|辞去了?|退出了?)(?P<v>[^，,。了]+?)(?:辞职|离职|离开|退出)?(?:了)?\s*$"),
        form("*", Ended, r"{A}把(?P<v>[^，,。]+?)(?:卖了|卖掉了|卖掉|退了|退掉了|送人了|停了|取消了|注销了)\s*$"),
        form("*", Ended, r"{A}(?:卖了|卖掉了|退了|取消了|停掉了|停了|不用|不再用|弃用了?)(?P<v>[^，,。]+?)(?:了)?\s*$"),
        form("medication", Ended, r"{A}(?:停了|停掉了|停用了?|不再吃|不吃)(?P<v>[^，,。]+?)(?:了)?\s*$"),
        form(
            "instruments",
            Ended,
            r"{A}(?:不再|不)(?:弹|拉|吹|练)(?P<v>吉他|钢琴|小提琴|大提琴|贝斯|尤克里里|古筝|二胡|琵琶|笛子|萨克斯|架子鼓|鼓|电子琴)(?:了)?",
        ),
        form(
            "activities",
            Ended,
            r"{A}(?:不再|不)(?:打|踢|练|去|玩|跑|游)(?P<v>篮球|足球|网球|羽毛球|乒乓球|排球|游泳|步|泳|瑜伽|健身房?|攀岩|拳击)(?:了)?",
        ),
        form("has:partner", Ended, r"{A}(?:和|跟)(?P<v>[^，,。]{1,6}?)(?:分手|离婚)(?:了)?"),
        form("relationship", Holds, r"{A}(?P<v>分手了|离婚了|单身了|单身|结婚了|订婚了|脱单了)"),
        // Where someone lives and works.
        form(
            "residence",
            Holds,
            r"{A}(?:住在|住|定居在|定居|搬到了|搬到|搬去了|搬去|搬回了?|搬家到了?|迁到了?|落户在?)\s*{V}",
        ),
        form(
            "workplace",
            Holds,
            r"{A}(?:被)?(?:调到了?|调去了?|派到了?|外派到了?|转到了?)(?P<v>[^，,。]+?(?:分公司|分部|办公室|分行|支行|门店|研究所|院区|分院|工厂|仓库|基地|总部|园区))(?:了|工作|上班)?",
        ),
        form(
            "team",
            Holds,
            r"{A}(?:被)?(?:调到了?|转到了?|加入了?|去了|在)(?P<v>[^，,。]+?(?:组|团队|部门|事业部|中心|小组))(?:了|工作|上班)?\s*$",
        ),
        form("employer", Holds, r"{A}(?:在)(?P<v>[^，,。]+?)(?:上班|工作|任职|实习|做事|打工)(?:了)?"),
        form(
            "employer",
            Holds,
            r"{A}(?:入职了?|加入了?|跳槽到了?|跳槽去了?|跳到了?|换到了?|去了|进了)(?P<v>[^，,。]+?)(?:了|工作|上班)?\s*$",
        ),
        form(
            "role",
            Holds,
            r"{A}(?:是|当|做|担任|升为|升职为|升职成了?|升任|晋升为|转为|转岗为|转岗成了?|成了|成为|升到了?|升成了?)(?:一名|一个|一位|名|个)?(?P<v>[^，,。]*?(?:工程师|经理|设计师|老师|教师|医生|护士|律师|会计|主管|总监|产品经理|分析师|销售|顾问|研究员|程序员|架构师|厨师|司机|编辑|记者|实习生|总裁|CEO|CTO|负责人|专员|助理|店长|主任|教授|讲师|博士生|研究生|组长|经理人|合伙人|总经理|副总|VP))(?:了)?\s*$",
        ),
        form(
            "school",
            Holds,
            r"{A}(?:在|考上了?|转学到了?|转到了?|去了|进了|上了)(?P<v>[^，,。]+?(?:大学|学院|中学|小学|幼儿园|高中|初中|附中|一中|二中|实验学校|国际学校))(?:上学|读书|念书|读|上|了)?\s*$",
        ),
        form(
            "grade",
            Holds,
            r"{A}(?:上|读|念|升|升到|升入|进入|是)了?(?P<v>[一二三四五六七八九]年级|初[一二三]|高[一二三]|大[一二三四]|研[一二三]|博[一二三])",
        ),
        form("has:manager", Holds, r"{A}(?:向|给)(?P<v>[^，,。]{1,8}?)(?:汇报|报告)"),
        form("has:partner", Holds, r"{A}(?:和|跟)(?P<v>[^，,。]{1,6}?)(?:在一起了|结婚了|订婚了|谈恋爱了?|恋爱了)"),
        // Things someone uses.
        form(
            "phone",
            Holds,
            r"{A}(?:用|换了|换成了?|买了|入手了?|在用)(?:一部|一台|部|台)?(?:新的)?(?P<v>(?:iPhone|苹果|华为|小米|三星|OPPO|oppo|vivo|荣耀|一加|Pixel|魅族|realme|红米|Mate|Galaxy)[^，,。]*?)(?:手机)?(?:了)?\s*$",
        ),
        form(
            "car",
            Holds,
            r"{A}(?:开|开的是|买了|换了|换成了?|提了|提车|入手了?)(?:一辆|辆|台)?(?:新的)?(?P<v>(?:特斯拉|比亚迪|丰田|本田|大众|宝马|奔驰|奥迪|蔚来|小鹏|理想|极氪|问界|五菱|吉利|长安|福特|马自达|日产|别克|雪佛兰|沃尔沃|保时捷|凯迪拉克|红旗|哈弗|领克|零跑|小米SU7|Model ?[3YSX]|电动车|新能源车)[^，,。]*?)(?:了)?\s*$",
        ),
        form("diet", Holds, r"{A}(?P<v>吃素|吃全素|是素食(?:主义)?者|开始吃素|生酮饮食|低碳水饮食|断食|吃肉)(?:了)?"),
        form("commute", Holds, r"{A}(?P<v>骑车|骑自行车|坐地铁|坐公交|开车|走路|打车|坐班车)(?:上班|去公司|通勤)"),
        form(
            "editor",
            Holds,
            r"{A}(?:用|改用|换成了?|在用)(?P<v>VS ?Code|VSCode|Vim|Neovim|Emacs|IntelliJ(?: IDEA)?|PyCharm|Cursor|Sublime|WebStorm|GoLand|Xcode|Android Studio|Zed)",
        ),
        // Many values.
        form("languages", Holds, r"{A}(?:会说|会讲|说|讲|精通|能说)(?P<v>[^，,。]*?(?:语|话|文))\s*$"),
        form("learning", Holds, r"{A}(?:在学|开始学|学习|报了?|上)(?P<v>[^，,。]*?(?:语|话|文))(?:课|班)?\s*$"),
        form(
            "instruments",
            Holds,
            r"{A}(?:会|在学|开始学|学|练|弹|拉|吹)(?:弹|拉|吹|打)?(?P<v>吉他|钢琴|小提琴|大提琴|贝斯|尤克里里|古筝|二胡|琵琶|笛子|萨克斯|架子鼓|鼓|电子琴|口琴|手风琴|长笛|单簧管|竖琴|葫芦丝)",
        ),
        form(
            "activities",
            Holds,
            r"{A}(?:喜欢|爱|在练|练|打|踢|玩|学|每周|常常|经常|开始|迷上了?)(?:打|踢|去|练)?(?P<v>篮球|足球|网球|羽毛球|乒乓球|排球|游泳|跑步|瑜伽|健身|爬山|登山|骑行|滑雪|攀岩|拳击|围棋|象棋|摄影|画画|书法|钓鱼|跳舞|烘焙|做饭|徒步|马拉松|普拉提|太极|飞盘|露营)",
        ),
        form(
            "pets",
            Holds,
            r"{A}(?:养了|养|有|领养了?|收养了?|捡了)(?:一只|两只|三只|只|一条|两条|条|一个)?(?P<v>[^，,。]{0,6}?(?:狗|猫|兔子|仓鼠|鹦鹉|鱼|乌龟|金毛|柯基|泰迪|柴犬|哈士奇|布偶|英短|橘猫|狗狗|猫咪|龙猫))",
        ),
        form("children", Holds, r"{A}(?:有|生了|添了)(?:一个|两个|个|一对)?(?P<v>儿子|女儿|孩子|宝宝|双胞胎|二胎)"),
        form("allergies", Holds, r"{A}对(?P<v>[^，,。]+?)过敏"),
        form("allergies", Holds, r"{A}(?P<v>[^，,。对]{1,8}?)过敏"),
        form(
            "medication",
            Holds,
            r"{A}(?:在吃|开始吃|每天吃|服用|在服用|开始服用)(?P<v>[^，,。]+?(?:药|素|片|胶囊|优甲乐|二甲双胍|胰岛素|阿司匹林|布洛芬|他汀))",
        ),
        form("habits", Holds, r"{A}(?P<v>抽烟|吸烟|喝酒|喝咖啡|熬夜)"),
        // Things and events.
        form(
            "when",
            Holds,
            r"{A}(?:改到了?|改成了?|改为|挪到了?|调到了?|推迟到了?|推到了?|提前到了?|延期到了?|延后到了?|定在了?|定于|改在|放在|安排在|改期到|在|是)(?P<v>(?:每周|每个?星期|下周|本周|周|星期|礼拜|\d{1,2}月|\d{1,2}[日号]|\d{4}年|上午|下午|晚上|早上|中午|\d{1,2}[:：点])[^，,。]*?)(?:了|举行|开|进行|上线|发布)?\s*$",
        ),
        form(
            "price",
            Holds,
            r"{A}(?:涨到了?|涨价到了?|涨成了?|降到了?|降价到了?|变成了?|调整为|调到了?|是|要|收|每月|一个月|一年)(?P<v>\d[\d,.]*\s*(?:元|块|万|千|美元|刀|欧元)?(?:/月|/年|一个月|每月|一年|每年)?)(?:了)?\s*$",
        ),
        form(
            "version",
            Holds,
            r"{A}(?:升级到了?|更新到了?|发布了?|升到了?|用的是|是|到了|上了)(?P<v>[vV]?\d+(?:\.\d+)+)(?:版本?)?(?:了)?",
        ),
        form("lead", Holds, r"{A}(?:由|归)(?P<v>[^，,。]{1,8}?)(?:负责|接手|主导|牵头|管|带)"),
        form("lead", Holds, r"{A}(?:交给了?|转给了?|移交给了?|交接给了?)(?P<v>[^，,。]{1,8}?)(?:了|负责)?\s*$"),
        form(
            "tier",
            Holds,
            r"{A}(?:升级到了?|升级成了?|换成了?|改成了?|降级到了?|用的是|是|开了|开通了?)(?P<v>[^，,。]+?)(?:套餐|版|会员|计划|档)",
        ),
        form(
            "stack",
            Holds,
            r"{A}(?:用|改用|迁移到了?|迁到了?|换成了?|切到了?|切换到了?|基于|跑在)(?P<v>(?:MySQL|PostgreSQL|Postgres|MongoDB|Redis|Kafka|Oracle|TiDB|ClickHouse|Elasticsearch|Java|Go|Python|Rust|Node|React|Vue|Kubernetes|K8s|AWS|阿里云|腾讯云|华为云|GCP|Azure|Jenkins|GitLab|GitHub|飞书|钉钉|企业微信|Jira|禅道)[^，,。]*?)(?:了)?\s*$",
        ),
        form(
            "location",
            Holds,
            r"{A}(?:在|搬到了?|迁到了?|是)(?P<v>[^，,。]+?(?:路|街|大厦|广场|中心|园区|号楼|层|楼|号))(?:了)?\s*$",
        ),
        form("status", Holds, r"{A}(?P<v>上线了|暂停了|取消了|砍掉了|搁置了|延期了|完成了|结束了|停了|黄了)"),
    ]
});

fn verb_forms(predicate: &str, subject: &Subject, found: &mut Vec<(Claim, Option<Hold>)>) {
    // A time said after the subject ("王芳上个月搬去了成都") opens the predicate.
    let stripped = OPENERS.replace(predicate.trim(), "");
    let predicate = stripped.trim();
    // "不再…", "已经不…了": what follows, ended.
    if let Some(rest) = predicate.strip_prefix("不再").or_else(|| predicate.strip_prefix("已经不再")) {
        let mut inner = Vec::new();
        verb_forms(rest, subject, &mut inner);
        for (mut claim, hold) in inner {
            claim.polarity = Ended;
            found.push((claim, hold));
        }
        return;
    }
    for form in FORMS.iter() {
        let Some(captures) = form.pattern.captures(predicate) else { continue };
        let value = captures.name("v").map(|m| clean(m.as_str())).filter(|v| !v.is_empty());
        let values = match (&value, form.attribute) {
            (Some(v), "languages" | "allergies" | "learning") => {
                v.split(['和', '、', '跟', '及']).map(str::to_owned).filter(|s| !s.is_empty()).map(Some).collect()
            }
            _ => vec![value],
        };
        let attribute = match (form.attribute, values.first().and_then(|v| v.as_deref())) {
            ("employer", Some(v)) if WORKPLACE.is_match(v) => "workplace",
            ("employer", Some(v)) if TEAM.is_match(v) => "team",
            (attribute, _) => attribute,
        };
        for value in values {
            found.push((
                Claim {
                    subject: subject.clone(),
                    attribute: attribute.to_owned(),
                    value,
                    polarity: form.polarity,
                    when: None,
                    about: Vec::new(),
                },
                None,
            ));
        }
        return;
    }
}

static WORKPLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:分公司|分部|办公室|分行|支行|门店|研究所|院区|分院|总部|园区)$").expect("workplace compiles")
});
static TEAM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?:组|团队|部门|事业部)$").expect("team compiles"));

/// Noun forms: "我的地址是…", "天穹项目的负责人是…", "周会时间改到…".
fn noun_forms(noun: &str, predicate: &str, subject: &Subject, found: &mut Vec<(Claim, Option<Hold>)>) {
    let Some(captures) = NOUN_PREDICATE.captures(predicate.trim()) else { return };
    let value = clean(&captures["v"]);
    if value.is_empty() {
        return;
    }
    let attribute = if let Some(role) = noun.strip_prefix("has:") {
        format!("has:{role}")
    } else if let Some(kind) = noun.strip_prefix("最喜欢的") {
        format!("favorite:{kind}")
    } else {
        let attribute = match noun.trim_start_matches('新') {
            "地址" => "address",
            "电话号码" | "手机号码" | "手机号" | "电话" => "phone_number",
            "邮箱" => "email",
            "生日" => "birthday",
            "工作" | "职位" | "岗位" => "role",
            "公司" | "单位" => "employer",
            "团队" | "部门" => "team",
            "学校" => "school",
            "手机" => "phone",
            "车" | "座驾" => "car",
            "编辑器" => "editor",
            "饮食" => "diet",
            "通勤" => "commute",
            "血型" => "blood_type",
            "负责人" => "lead",
            "时间" | "日期" => "when",
            "地点" => "venue",
            "价格" => "price",
            "版本" => "version",
            "套餐" => "tier",
            "供应商" => "vendor",
            "状态" => "status",
            _ => return,
        };
        if attribute == "blood_type" {
            return;
        }
        attribute.to_owned()
    };
    found.push((
        Claim {
            subject: subject.clone(),
            attribute,
            value: Some(value),
            polarity: Holds,
            when: None,
            about: Vec::new(),
        },
        None,
    ));
}

static NOUN_PREDICATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:现在|目前|已经|也|都|又|还|就)\s*)*(?:是|叫|为|在|换成了?|变成了?|改成了?|改为|改到了?|换了|调到了?|调整为|涨到了?|降到了?|升级到了?|更新到了?)\s*(?P<v>[^，,。！？]+?)(?:了|啦|呢)?\s*$")
        .expect("noun predicate compiles")
});

fn clean(value: &str) -> String {
    value.trim().trim_end_matches(['了', '的', '啦', '呢', '吧']).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::{ME, read};

    fn claims(text: &str) -> Vec<String> {
        let reading = read(text);
        reading
            .claims
            .iter()
            .map(|c| {
                let polarity = if c.polarity == super::Polarity::Ended { " ended" } else { "" };
                format!("{}|{}|{}{polarity}", c.subject.key, c.attribute, c.value.clone().unwrap_or_default())
            })
            .collect()
    }

    #[test]
    fn chinese_statements_are_read_into_claims() {
        let me = ME;
        for (text, expected) in [
            ("我搬到杭州了。", vec![format!("{me}|residence|杭州")]),
            ("李伟在杭州一家医院当护士。", vec![]),
            ("我现在住在上海浦东", vec![format!("{me}|residence|上海浦东")]),
            ("用户在字节跳动上班", vec![format!("{me}|employer|字节跳动")]),
            ("周会改到周四下午三点", vec!["周会|when|周四下午三点".to_owned()]),
            ("周会改到周四下午3点", vec!["周会|when|周四下午3点".to_owned()]),
            ("我戒烟了", vec![format!("{me}|habits|烟 ended")]),
            ("王芳对花生过敏", vec!["王芳|allergies|花生".to_owned()]),
            ("我会说英语和日语", vec![format!("{me}|languages|英语"), format!("{me}|languages|日语")]),
            ("天穹项目的负责人是宋佳", vec!["天穹|lead|宋佳".to_owned()]),
            ("我打算明年搬到北京", vec![]),
            ("我以前住在成都", vec![]),
            ("我没有搬家", vec![]),
            ("我妹妹搬到了深圳", vec![format!("{me}'s sister|residence|深圳")]),
        ] {
            let mut got = claims(text);
            got.sort();
            let mut expected = expected;
            expected.sort();
            assert_eq!(got, expected, "{text}");
        }
    }
}
