//! Sensitivity levels and what each allows [design §sensitivity], and the `SecretGuard` that keeps keys,
//! tokens, passwords, card numbers and private keys out of automatic memory [design §secrets].

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// How carefully a memory must be handled. Ordered: `Normal < Sensitive < Restricted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    #[default]
    Normal,
    /// Needs a person's confirmation before it becomes active; flagged in every pack.
    Sensitive,
    /// Never generated automatically, never sent to a remote model or embedder, read only when
    /// the caller explicitly enables it.
    Restricted,
}

impl Sensitivity {
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Normal => "normal",
            Sensitivity::Sensitive => "sensitive",
            Sensitivity::Restricted => "restricted",
        }
    }

    pub fn parse(value: &str) -> Option<Sensitivity> {
        [Sensitivity::Normal, Sensitivity::Sensitive, Sensitivity::Restricted].into_iter().find(|s| s.as_str() == value)
    }

    /// Whether text at this level may be sent to a model or embedder that runs elsewhere.
    pub fn may_leave_the_machine(self) -> bool {
        self != Sensitivity::Restricted
    }

    /// Whether a memory at this level may become active without a person confirming it.
    pub fn allows_auto_approval(self) -> bool {
        self == Sensitivity::Normal
    }

    /// Whether a memory at this level may be produced by inference at all.
    pub fn allows_automatic_generation(self) -> bool {
        self != Sensitivity::Restricted
    }

    /// Whether a stored memory at this level, whose words were screened when it was admitted,
    /// may be given to a model or embedder that runs at `locality`: the gate for records (text
    /// not yet screened goes through [`may_be_given_to`]).
    pub fn may_be_given_to(self, locality: Locality) -> bool {
        locality == Locality::Local || self.may_leave_the_machine()
    }

    /// Whether a reader with the given permission may see a memory at this level.
    pub fn readable_with(self, include_restricted: bool) -> bool {
        self != Sensitivity::Restricted || include_restricted
    }
}

impl fmt::Display for Sensitivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a model or embedder runs. Restricted memories and text holding a secret are never
/// given to a remote one [design §restricted].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Locality {
    /// In this process or on this machine.
    Local,
    /// Across a network.
    Remote,
}

/// The gate every text passes before a model or embedder sees it: anything may go to one on
/// this machine; to one elsewhere, only what [`may_leave_the_machine`] allows. Stored records
/// use [`Sensitivity::may_be_given_to`].
pub fn may_be_given_to(locality: Locality, declared: Option<Sensitivity>, text: &str) -> bool {
    locality == Locality::Local || may_leave_the_machine(declared, text)
}

/// Whether a text may be sent to a model or embedder that runs elsewhere: never when it is
/// declared restricted, and never when it looks like it holds a secret (it would be refused
/// admission anyway, and the refusal must not itself leak it) [design §restricted].
pub fn may_leave_the_machine(declared: Option<Sensitivity>, text: &str) -> bool {
    declared.is_none_or(Sensitivity::may_leave_the_machine) && !SecretGuard.contains_secret(text)
}

/// What kind of secret was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    ApiKey,
    Token,
    Password,
    CardNumber,
    PrivateKey,
    /// A national identity number whose check digit holds (a mainland resident ID).
    IdNumber,
    /// A passport number stated as one.
    PassportNumber,
}

impl SecretKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::ApiKey => "api key",
            SecretKind::Token => "access token",
            SecretKind::Password => "password",
            SecretKind::CardNumber => "card number",
            SecretKind::PrivateKey => "private key",
            SecretKind::IdNumber => "identity number",
            SecretKind::PassportNumber => "passport number",
        }
    }
}

/// One secret found in a text: its kind and byte range (never its value, so reports and logs
/// cannot leak it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretFinding {
    pub kind: SecretKind,
    pub start: usize,
    pub end: usize,
}

/// Detects credentials in text. Deliberately eager: a false positive costs a memory a person can
/// still save by hand as restricted; a false negative stores a credential.
#[derive(Debug, Clone, Copy, Default)]
pub struct SecretGuard;

struct Pattern {
    kind: SecretKind,
    regex: Regex,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |kind, re: &str| Pattern { kind, regex: Regex::new(re).expect("secret pattern compiles") };
    vec![
        p(SecretKind::PrivateKey, r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        // Well-known vendor key shapes.
        p(SecretKind::ApiKey, r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,20}-)?[A-Za-z0-9_-]{20,}"),
        p(SecretKind::ApiKey, r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        p(SecretKind::ApiKey, r"\bAIza[0-9A-Za-z_-]{35}\b"),
        p(SecretKind::ApiKey, r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
        p(SecretKind::ApiKey, r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
        p(SecretKind::ApiKey, r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        p(SecretKind::ApiKey, r"\bglpat-[A-Za-z0-9_-]{20,}"),
        // "api key: ...", "secret=...", "client_secret ...".
        p(
            SecretKind::ApiKey,
            r"(?i)\b(?:api[ _-]?key|secret[ _-]?key|client[ _-]?secret|access[ _-]?key)\b\s*(?:is|:|=)?\s*[\x22']?[A-Za-z0-9_\-./+=]{12,}",
        ),
        // JSON web tokens and bearer credentials.
        p(SecretKind::Token, r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        p(SecretKind::Token, r"(?i)\bbearer\s+[A-Za-z0-9_\-.~+/]{16,}=*"),
        p(
            SecretKind::Token,
            r"(?i)\b(?:auth|access|refresh|session|api)[ _-]?token\b\s*(?:is|:|=)?\s*[\x22']?[A-Za-z0-9_\-./+=]{12,}",
        ),
        p(SecretKind::Token, r"(?i)\b(?:set-)?cookie\s*:\s*[^\s=;]+=[^\s;]{16,}"),
        // Passwords stated in prose or config.
        p(
            SecretKind::Password,
            r"(?i)\b(?:password|passwd|passphrase|pwd|pin code|密码)\b\s*(?:is|was|:|=|：|是)\s*[\x22']?\S{4,}",
        ),
        p(SecretKind::Password, r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]{3,}@"),
        // The same in Chinese, where no space or word boundary sets a word off: a password,
        // passphrase or one-time code followed by a value of letters, digits and symbols
        // ("我的密码是 hunter2xyz", "验证码：834921"). A value must start right after the
        // word or its "是/为/：", so "忘记密码了" and "修改密码的页面" say nothing secret.
        p(
            SecretKind::Password,
            r"(?:密码|口令|验证码|校验码|动态码|PIN码)\s*(?:是|为|:|：|=)?\s*[\x22'“「]?[A-Za-z0-9!@#$%^&*_+=.~-]{4,}",
        ),
        p(
            SecretKind::PassportNumber,
            r"(?i)(?:护照|passport)\s*(?:号码|号|no\.?|number)?\s*(?:是|为|:|：|is)?\s*[A-Z]{1,2}\d{7,8}",
        ),
    ]
});

// Digits are set off by hand, not by `\b`: beside a Han character (卡号6222…) there is no word
// boundary, and a number there is no less a card's.
static CARD_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\d[ -]?){12,18}\d").expect("card pattern compiles"));

/// A mainland resident identity number: 17 digits and a check character.
static ID_CANDIDATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d{17}[\dXx]").expect("id pattern compiles"));

impl SecretGuard {
    /// Every secret found in `text`, in order of position.
    pub fn scan(&self, text: &str) -> Vec<SecretFinding> {
        let mut findings: Vec<SecretFinding> = PATTERNS
            .iter()
            .flat_map(|pattern| {
                pattern.regex.find_iter(text).map(move |m| SecretFinding {
                    kind: pattern.kind,
                    start: m.start(),
                    end: m.end(),
                })
            })
            .collect();
        for m in CARD_CANDIDATE.find_iter(text) {
            let digits: Vec<u32> = m.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
            if stands_alone(text, m.start(), m.end()) && (13..=19).contains(&digits.len()) && luhn_valid(&digits) {
                findings.push(SecretFinding { kind: SecretKind::CardNumber, start: m.start(), end: m.end() });
            }
        }
        for m in ID_CANDIDATE.find_iter(text) {
            if stands_alone(text, m.start(), m.end()) && resident_id_valid(m.as_str()) {
                findings.push(SecretFinding { kind: SecretKind::IdNumber, start: m.start(), end: m.end() });
            }
        }
        findings.sort_by_key(|f| (f.start, f.end, f.kind));
        findings.dedup_by(|a, b| a.start == b.start && a.kind == b.kind);
        findings
    }

    pub fn contains_secret(&self, text: &str) -> bool {
        !self.scan(text).is_empty()
    }

    /// The kinds found, without positions, for error messages.
    pub fn kinds(&self, text: &str) -> Vec<SecretKind> {
        let mut kinds: Vec<SecretKind> = self.scan(text).into_iter().map(|f| f.kind).collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }
}

/// Matters a memory should be handled with care for: health, money, identity documents and
/// the law, in English and in Chinese. Words rather than patterns, because what makes these
/// sensitive is the topic, whatever is said about it.
static SENSITIVE_MATTERS: LazyLock<Regex> = LazyLock::new(|| {
    let english = r"(?i)\b(?:diagnos\w*|medication|prescription|therapy|therapist|pregnan\w*|hiv|cancer|depression|salary|debt|bank account|credit score|passport|social security|ssn|home address|lawsuit|arrested)\b";
    // A diagnosis of a person ("诊断为", "确诊"), not of a fault ("故障诊断").
    let health =
        "诊断(?:为|是|出)|确诊|病历|病情|抑郁|焦虑症|癌症|肿瘤|艾滋|怀孕|流产|处方|住院|手术|心理咨询|精神科|服药";
    let money = "工资|薪水|月薪|年薪|存款|负债|欠款|贷款|房贷|信用卡|银行卡|银行账户|征信";
    let identity = "身份证|护照|家庭住址|户口";
    let law = "起诉|诉讼|打官司|被捕|拘留|判刑|律师函|仲裁|犯罪记录";
    Regex::new(&format!("{english}|{health}|{money}|{identity}|{law}")).expect("sensitive pattern compiles")
});

/// A mainland mobile number (11 digits from 13–19, with or without +86), standing alone.
static MOBILE_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\+?86[- ]?)?1[3-9]\d(?:[- ]?\d{4}){2}").expect("mobile pattern compiles"));

/// Whether a text speaks of a sensitive matter ([`SENSITIVE_MATTERS`]) or holds a mobile
/// number: what an assessment marks [`Sensitivity::Sensitive`] unless told otherwise.
pub fn speaks_of_sensitive_matters(text: &str) -> bool {
    SENSITIVE_MATTERS.is_match(text) || MOBILE_NUMBER.find_iter(text).any(|m| stands_alone(text, m.start(), m.end()))
}

/// Whether `text[start..end]` is a whole number: no digit or Latin letter right before or after
/// (a Han character, a space or punctuation may be).
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    [before, after].into_iter().flatten().all(|c| !c.is_ascii_alphanumeric())
}

/// A mainland resident identity number (GB 11643): a birth date at digits 7–14 and an ISO 7064
/// MOD 11-2 check character. Both are required, so an order or tracking number of 18 digits is
/// almost never taken for one.
fn resident_id_valid(candidate: &str) -> bool {
    const WEIGHTS: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    const CHECK: &[u8; 11] = b"10X98765432";
    let bytes = candidate.as_bytes();
    if bytes.len() != 18 {
        return false;
    }
    let digits: Option<Vec<u32>> = bytes[..17].iter().map(|b| (*b as char).to_digit(10)).collect();
    let Some(digits) = digits else { return false };
    let (year, month, day) =
        (digits[6..10].iter().fold(0, |n, d| n * 10 + d), digits[10] * 10 + digits[11], digits[12] * 10 + digits[13]);
    if !(1900..=2100).contains(&year) || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return false;
    }
    let sum: u32 = digits.iter().zip(WEIGHTS).map(|(d, w)| d * w).sum();
    CHECK[(sum % 11) as usize] == bytes[17].to_ascii_uppercase()
}

/// The Luhn checksum that every payment card number satisfies.
fn luhn_valid(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| if i % 2 == 1 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn kinds(text: &str) -> Vec<SecretKind> {
        SecretGuard.kinds(text)
    }

    #[test]
    fn finds_each_kind_of_secret() {
        use SecretKind::*;
        let cases: &[(&str, SecretKind)] = &[
            ("my openai key sk-proj-abcdefghijklmnopqrstuvwxyz123456", ApiKey),
            ("AKIAIOSFODNN7EXAMPLE is the aws key", ApiKey),
            ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab", ApiKey),
            ("api_key = 9f8e7d6c5b4a39281706", ApiKey),
            ("Authorization: Bearer abcdefghijklmnop1234", Token),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", Token),
            ("the wifi password is hunter2!", Password),
            ("my password: correct-horse", Password),
            ("postgres://admin:s3cr3t@db.example.com/app", Password),
            ("card 4111 1111 1111 1111 exp 12/29", CardNumber),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", PrivateKey),
            ("-----BEGIN RSA PRIVATE KEY-----", PrivateKey),
            // Chinese, where no space sets a word off.
            ("我的密码是 hunter2xyz", Password),
            ("我的密码是hunter2xyz", Password),
            ("邮箱密码：Qw3rty!2024", Password),
            ("支付口令为 884512", Password),
            ("验证码：834921，五分钟内有效", Password),
            ("我的身份证号是110101199003074514", IdNumber),
            ("身份证 11010519491231002X 请保管好", IdNumber),
            ("卡号6222600260001072444，别告诉别人", CardNumber),
            ("我的卡号是4111111111111111", CardNumber),
            ("护照号码是E12345678", PassportNumber),
            ("passport number G12345678", PassportNumber),
        ];
        for (text, expected) in cases {
            assert!(kinds(text).contains(expected), "{text:?} should contain {expected:?}, got {:?}", kinds(text));
        }
    }

    #[test]
    fn only_what_may_leave_the_machine_is_given_to_a_remote_model() {
        let secret = "the deploy key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";
        for (declared, text, remote_ok) in [
            (None, "Dana moved to Berlin.", true),
            (Some(Sensitivity::Sensitive), "Dana moved to Berlin.", true),
            (Some(Sensitivity::Restricted), "Dana moved to Berlin.", false),
            (None, secret, false),
        ] {
            assert!(may_be_given_to(Locality::Local, declared, text), "{text}: anything may stay here");
            assert_eq!(may_be_given_to(Locality::Remote, declared, text), remote_ok, "{declared:?} {text}");
        }
        assert!(Sensitivity::Restricted.may_be_given_to(Locality::Local));
        assert!(!Sensitivity::Restricted.may_be_given_to(Locality::Remote));
        assert!(Sensitivity::Sensitive.may_be_given_to(Locality::Remote));
    }

    #[test]
    fn ordinary_memories_are_not_secrets() {
        for text in [
            "Caroline went to the LGBTQ support group on 7 May 2023.",
            "The release moved from August to September.",
            "I prefer answers in short bullet points.",
            "My phone number changed last week.",
            "Order 1234 5678 shipped", // too short for a card
            "Reset your password from the settings page.",
            "Invoice 4111111111111112 is overdue", // fails Luhn
            "我忘记密码了，怎么重置？",
            "修改密码的页面在设置里",
            "验证码没收到",
            "订单号 110101199003074515 已发货", // an 18-digit number whose check digit fails
            "快递单号 123456789012345678",      // no birth date where an ID has one
            "护照快到期了，下个月去续签",
            "我的手机号换了",
        ] {
            assert!(kinds(text).is_empty(), "{text:?} flagged as {:?}", kinds(text));
        }
    }

    #[test]
    fn sensitive_matters_in_both_languages() {
        for text in [
            "She was diagnosed with diabetes last year.",
            "医生诊断是轻度抑郁",
            "我的病历在协和医院",
            "他这个月工资还没发",
            "银行卡丢了，正在补办",
            "身份证放在抽屉里",
            "公司打算起诉那家供应商",
            "我的手机号是13812345678",
            "有事打 +86 138-1234-5678",
        ] {
            assert!(speaks_of_sensitive_matters(text), "{text:?} should be sensitive");
        }
        for text in [
            "我喜欢喝美式咖啡",
            "天穹项目的上线日期定在5月12日。",
            "订单号 2023051213812345678 已发货", // a mobile number's shape inside a longer number
            "服务器故障诊断工具",
            "I feel so much better today.",
        ] {
            assert!(!speaks_of_sensitive_matters(text), "{text:?} should not be sensitive");
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Any valid card number is found wherever it appears in a sentence.
        #[test]
        fn luhn_valid_card_numbers_are_always_found(prefix in "[a-z ]{0,20}",
                                                    body in proptest::collection::vec(0u32..10, 15)) {
            // Complete a 16-digit number with its Luhn check digit.
            let mut digits = body.clone();
            digits.insert(0, 4);
            let check = (0..10).find(|d| { let mut all = digits.clone(); all.push(*d); luhn_valid(&all) }).unwrap();
            digits.push(check);
            let number: String = digits.iter().map(|d| char::from_digit(*d, 10).unwrap()).collect();
            let text = format!("{prefix} {number} thanks");
            prop_assert!(kinds(&text).contains(&SecretKind::CardNumber));
        }

        /// Any resident ID number whose date and check character hold is found, set off by Han
        /// characters, spaces or punctuation; one digit changed, it no longer is.
        #[test]
        fn resident_id_numbers_are_found_beside_han_characters(
            region in 110000u32..660000, year in 1930u32..2020, month in 1u32..13, day in 1u32..29,
            sequence in 0u32..1000, before in "[我的身份证号是：，]{0,4}", after in "[，。请保管好 ]{0,4}",
        ) {
            let body = format!("{region:06}{year:04}{month:02}{day:02}{sequence:03}");
            let weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
            let sum: u32 = body.chars().zip(weights).map(|(c, w)| c.to_digit(10).unwrap() * w).sum();
            let check = b"10X98765432"[(sum % 11) as usize] as char;
            let text = format!("{before}{body}{check}{after}");
            prop_assert!(kinds(&text).contains(&SecretKind::IdNumber), "{}", text);
            let wrong = if check == '0' { '1' } else { '0' };
            let altered = format!("{before}{body}{wrong}{after}");
            prop_assert!(!kinds(&altered).contains(&SecretKind::IdNumber), "{}", altered);
        }

        /// Scanning never panics and reports ranges inside the text.
        #[test]
        fn findings_are_in_bounds(text in "\\PC{0,200}") {
            for f in SecretGuard.scan(&text) {
                prop_assert!(f.start < f.end && f.end <= text.len());
            }
        }
    }
}
