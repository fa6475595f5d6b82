//! The attribute catalogue: every attribute a claim can fill, declared once, with how many
//! values it holds at once, what kind of subject has it, and its names in English and Chinese.
//!
//! The surface forms that find an attribute in a text live with each language's reader
//! (`claims::english`, `claims::chinese`), keyed by the ids declared here; a form naming an id
//! the catalogue lacks fails the readers' own tests.
//!
//! How many values an attribute holds is a fact about the world, not about any sentence: a
//! person lives in one place and works for one employer at a time, but speaks several
//! languages and has several pets. It is what decides whether a new value retires the old one
//! (one value) or joins it (many values, where only an explicit ending retires a value).

use serde::{Deserialize, Serialize};

/// How many values an attribute holds at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holds {
    /// A new value replaces the old one ("lives in Izmir" after "lives in Ankara").
    One,
    /// A new value joins the others; a value leaves only when something ends it ("quit
    /// smoking", "no longer speaks Twi").
    Many,
}

/// What kind of subject has the attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum About {
    /// A person: the speaker, someone named, someone's relative.
    Person,
    /// A thing, an event or an organisation: a meeting, a project, a plan, an office.
    Thing,
}

/// One attribute of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttributeDef {
    /// The id claims carry ("residence"); a parameterised attribute's claims carry
    /// `id:parameter` ("favorite:food", "stack:database", "has:dentist").
    pub id: &'static str,
    pub holds: Holds,
    pub about: About,
    /// What the attribute is, in English, as the profile and the flags name it.
    pub english: &'static str,
    /// The same in Chinese.
    pub chinese: &'static str,
    /// Whether it describes something that recurs (when a meeting is, what someone eats, how
    /// they commute): a one-off exception ("just this week", "tonight") does not change it.
    pub recurring: bool,
}

const fn one(id: &'static str, about: About, english: &'static str, chinese: &'static str) -> AttributeDef {
    AttributeDef { id, holds: Holds::One, about, english, chinese, recurring: false }
}

const fn many(id: &'static str, about: About, english: &'static str, chinese: &'static str) -> AttributeDef {
    AttributeDef { id, holds: Holds::Many, about, english, chinese, recurring: false }
}

const fn recurring(def: AttributeDef) -> AttributeDef {
    AttributeDef { recurring: true, ..def }
}

use About::{Person, Thing};

/// Every attribute, in the order the profile shows them.
pub const CATALOGUE: &[AttributeDef] = &[
    // Where and how someone lives.
    one("residence", Person, "where they live", "居住地"),
    one("address", Person, "address", "地址"),
    one("phone_number", Person, "phone number", "电话号码"),
    one("email", Person, "email", "邮箱"),
    one("birthday", Person, "birthday", "生日"),
    one("age", Person, "age", "年龄"),
    // Work and study.
    one("employer", Person, "employer", "工作单位"),
    one("workplace", Person, "where they work (office, branch, site)", "工作地点"),
    one("role", Person, "job or role", "职位"),
    one("team", Person, "team", "团队"),
    one("school", Person, "school", "学校"),
    one("grade", Person, "school year or grade", "年级"),
    // People around someone: one person per role ("has:manager", "has:dentist", "has:partner").
    one("has", Person, "their", "的"),
    // Things someone has one of, by name ("own:bike": "2019 Triumph Street Twin").
    one("own", Person, "their", "的"),
    // What a thing is, when a note names it ("grinder = Niche Zero").
    one("is", Thing, "which one", "是"),
    one("amount", Thing, "amount", "数量"),
    one("relationship", Person, "relationship status", "感情状况"),
    // Things someone uses, one at a time.
    one("phone", Person, "phone", "手机"),
    one("car", Person, "car", "车"),
    one("editor", Person, "code editor", "编辑器"),
    one("os", Person, "operating system", "操作系统"),
    one("commute", Person, "how they get to work", "通勤方式"),
    recurring(one("diet", Person, "diet", "饮食")),
    recurring(one("drink", Person, "usual drink", "常喝的")),
    recurring(one("routine", Person, "routine", "作息")),
    one("favorite", Person, "favourite", "最喜欢的"),
    one("provider", Person, "provider", "服务商"),
    one("plan", Person, "plan or subscription", "套餐"),
    // The tool, language or service someone uses for one purpose ("for:data_work": Python).
    one("for", Person, "what they use for", "用于"),
    one("children_count", Person, "number of children", "孩子数量"),
    // What someone has several of.
    many("languages", Person, "languages", "语言"),
    many("learning", Person, "what they are learning", "在学"),
    many("instruments", Person, "instruments", "乐器"),
    many("activities", Person, "sports and hobbies", "爱好"),
    many("pets", Person, "pets", "宠物"),
    many("children", Person, "children", "孩子"),
    many("allergies", Person, "allergies", "过敏"),
    many("conditions", Person, "health conditions", "健康状况"),
    many("medication", Person, "medication", "用药"),
    many("habits", Person, "habits", "习惯"),
    many("subscriptions", Person, "subscriptions", "订阅"),
    many("tools", Person, "tools they use", "工具"),
    many("skills", Person, "skills", "技能"),
    // Things, events and organisations.
    // When a meeting, a class, a launch or an appointment is: a day, a date, a time of day.
    recurring(one("when", Thing, "when it happens", "时间")),
    recurring(one("venue", Thing, "where it happens", "地点")),
    recurring(one("cadence", Thing, "how often", "频率")),
    one("lead", Thing, "who leads or owns it", "负责人"),
    one("version", Thing, "version", "版本"),
    one("price", Thing, "price or cost", "价格"),
    one("tier", Thing, "plan or tier", "套餐"),
    one("status", Thing, "status", "状态"),
    one("stack", Thing, "what it is built on", "技术栈"),
    one("vendor", Thing, "vendor or provider", "供应商"),
    one("location", Thing, "location or address", "地址"),
];

/// The definition of `attribute` (an id, or `id:parameter`), if the catalogue has it.
pub fn definition(attribute: &str) -> Option<&'static AttributeDef> {
    let base = attribute.split_once(':').map_or(attribute, |(base, _)| base);
    CATALOGUE.iter().find(|def| def.id == base)
}

/// How `attribute` is named for people, in English: "favourite food", "their dentist",
/// "where they live".
pub fn english_name(attribute: &str) -> String {
    let Some(def) = definition(attribute) else { return attribute.to_owned() };
    match attribute.split_once(':') {
        Some((_, parameter)) => format!("{} {}", def.english, parameter.replace('_', " ")),
        None => def.english.to_owned(),
    }
}

/// How `attribute` is named for people, in Chinese.
pub fn chinese_name(attribute: &str) -> String {
    let Some(def) = definition(attribute) else { return attribute.to_owned() };
    match attribute.split_once(':') {
        Some((_, parameter)) => format!("{}{}", def.chinese, parameter),
        None => def.chinese.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_lowercase() {
        let mut seen = std::collections::BTreeSet::new();
        for def in CATALOGUE {
            assert!(seen.insert(def.id), "{} twice", def.id);
            assert!(def.id.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}", def.id);
        }
    }

    #[test]
    fn parameterised_attributes_resolve_to_their_base() {
        assert_eq!(definition("favorite:food").map(|d| d.id), Some("favorite"));
        assert_eq!(definition("has:dentist").map(|d| d.holds), Some(Holds::One));
        assert_eq!(definition("pets").map(|d| d.holds), Some(Holds::Many));
        assert_eq!(definition("nonsense"), None);
        assert_eq!(english_name("has:dentist"), "their dentist");
        assert_eq!(english_name("favorite:food"), "favourite food");
        assert_eq!(english_name("residence"), "where they live");
    }
}
