//! The Chinese words the readers share. Each person word carries the English word subjects
//! are keyed by, so "我女儿" and "my daughter" are one subject in either language.
//!
//! Why these lists hold beyond the sentences they were tried on: transcript labels, pronouns and
//! kin terms are closed or nearly closed classes; roles and the kind nouns written after a name
//! grow slowly, and a missing one costs only a reading that stays "distinct".

use crate::entity::EntityType;

/// Transcript labels that mark the person's own turn (the rest of the line is their first person).
pub const PERSON_LABELS: &[&str] = &["用户", "我", "本人", "user", "human"];

/// Transcript labels of a program's turn, in Chinese; the English ones are
/// [`super::english::PROGRAM_LABELS`].
pub const PROGRAM_LABELS: &[&str] = &["助手", "系统", "机器人"];

/// Pronouns and demonstratives that open a clause without naming anyone.
pub const PRONOUNS: &[&str] =
    &["他", "她", "它", "他们", "她们", "它们", "这", "那", "这个", "那个", "我们", "你", "你们"];

/// Family, partners, friends, colleagues and neighbours, with their English key word.
pub const KIN: &[(&str, &str)] = &[
    ("女儿", "daughter"),
    ("儿子", "son"),
    ("孩子", "kids"),
    ("妻子", "wife"),
    ("老婆", "wife"),
    ("太太", "wife"),
    ("爱人", "partner"),
    ("丈夫", "husband"),
    ("老公", "husband"),
    ("对象", "partner"),
    ("妈妈", "mother"),
    ("母亲", "mother"),
    ("我妈", "mother"),
    ("妈", "mother"),
    ("爸爸", "father"),
    ("父亲", "father"),
    ("爸", "father"),
    ("哥哥", "brother"),
    ("弟弟", "brother"),
    ("姐姐", "sister"),
    ("妹妹", "sister"),
    ("男朋友", "boyfriend"),
    ("男友", "boyfriend"),
    ("女朋友", "girlfriend"),
    ("女友", "girlfriend"),
    ("朋友", "friend"),
    ("同事", "colleague"),
    ("室友", "roommate"),
    ("邻居", "neighbour"),
    ("爷爷", "grandfather"),
    ("奶奶", "grandmother"),
    ("外公", "grandfather"),
    ("外婆", "grandmother"),
];

/// Person words that also name a thing: "对象" is a partner and an object ("对象存储",
/// "面向对象"), so it names a person only after its possessor ("我对象", "她的对象").
pub const PERSON_WORDS_THAT_ALSO_NAME_THINGS: &[&str] = &["对象"];

/// People by the role they fill for someone, with their English key word.
pub const ROLES: &[(&str, &str)] = &[
    ("老板", "boss"),
    ("领导", "boss"),
    ("上司", "boss"),
    ("经理", "manager"),
    ("主管", "manager"),
    ("导师", "mentor"),
    ("医生", "doctor"),
    ("牙医", "dentist"),
    ("房东", "landlord"),
    ("教练", "coach"),
];

/// Groups a person belongs to, with their English key word.
pub const GROUPS: &[(&str, &str)] =
    &[("团队", "team"), ("小组", "team"), ("部门", "team"), ("公司", "company"), ("乐队", "band")];

/// Kinds of thing written after a name ("天穹项目", "北斗系统", "星河科技"): not part of the
/// name, and what kind of entity the name is. Only a project's or an organisation's kind noun
/// makes the name a clear subject on its own; the others ("增长团队", "旅行计划") name too
/// loosely to open an entity.
pub const KIND_NOUNS: &[(&str, EntityType)] = &[
    ("项目", EntityType::Project),
    ("系统", EntityType::Project),
    ("平台", EntityType::Project),
    ("产品", EntityType::Project),
    ("工程", EntityType::Topic),
    ("计划", EntityType::Topic),
    ("服务", EntityType::Product),
    ("应用", EntityType::Product),
    ("App", EntityType::Product),
    ("app", EntityType::Product),
    ("公司", EntityType::Organization),
    ("集团", EntityType::Organization),
    ("科技", EntityType::Organization),
    ("团队", EntityType::Topic),
    ("小组", EntityType::Topic),
];

/// The English key word of a Chinese person word (kin or role), if it is one.
pub fn person_word(word: &str) -> Option<&'static str> {
    KIN.iter().chain(ROLES).find(|(zh, _)| *zh == word).map(|(_, en)| *en)
}

/// Whether `label` (lowercased if Latin) marks a program's turn, in either language.
pub fn is_program_label(label: &str) -> bool {
    PROGRAM_LABELS.contains(&label) || super::english::is_program_label(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_person_word_is_keyed_by_an_english_word_the_english_lists_know() {
        for (zh, en) in KIN.iter().chain(ROLES) {
            assert!(
                super::super::english::is_person_by_relation(en),
                "{zh} is keyed by {en}, which English does not list"
            );
        }
    }
}
