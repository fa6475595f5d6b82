//! Time expressions written in Chinese, read by the same [`Reader`] as English and into the same
//! ranges: relative days (今天、昨天、前天、明天), calendar periods (上周、这个月、去年、下半年),
//! weekdays of a week (上周五、这周三、下星期一), counts back or ahead (三天前、两周前、半年前、
//! 三个月后), dates (2023年5月8日、5月8日、2023年5月、2023/5/8), parts of a period (月初、五月中旬、
//! 去年年底、上个月底), and the open forms around them (5月8日之前、去年以后、自从上个月起、
//! 直到2023年底).
//!
//! Where Chinese and English differ, Chinese is followed: 上周五 is the Friday of last week
//! (the calendar week), not the latest Friday, and a before/after word follows its date
//! (5月8日之前). Numbers are written in digits or in characters (三、十二、两) alike.
//!
//! Parts of a month are the customary thirds (上旬 1–10, 中旬 11–20, 下旬 21–end; 月初 is the
//! first third and 月底/月末 the last). Parts of a year: 年初 January–March, 年中 May–August,
//! 年底/年末 October–December, 上半年/下半年 the halves. 年底 names the year's end, so it is a
//! quarter, narrower than English's "late 2023" (September–December).

use std::sync::LazyLock;

use jiff::civil::Date;
use regex::{Captures, Regex};

use super::Reader;
use super::TimeRange;
use super::calendar::Unit;
use super::calendar::{day_range, months_range, weekend_range, year_range};
use super::scan::{Parsed, anchored};
/// A count or a day or a month: digits, or characters up to ninety-nine.
const NUM: &str = r"[0-9]{1,2}|[零〇一二两三四五六七八九十]{1,3}";

/// A number written in digits or characters: 8, 十二, 二十三, 两.
fn number(text: &str) -> Option<i64> {
    if let Ok(n) = text.parse() {
        return Some(n);
    }
    let digit = |c: char| {
        "零一二三四五六七八九".find(c).map(|at| (at / '零'.len_utf8()) as i64).or(match c {
            '〇' => Some(0),
            '两' => Some(2),
            _ => None,
        })
    };
    let chars: Vec<char> = text.chars().collect();
    match chars.as_slice() {
        [one] if *one == '十' => Some(10),
        [one] => digit(*one),
        ['十', ones] => Some(10 + digit(*ones)?),
        [tens, '十'] => Some(digit(*tens)? * 10),
        [tens, '十', ones] => Some(digit(*tens)? * 10 + digit(*ones)?),
        _ => None,
    }
}

fn group<T: TryFrom<i64>>(caps: &Captures<'_>, name: &str) -> Option<T> {
    T::try_from(number(caps.name(name)?.as_str())?).ok()
}

/// How many periods from the anchor's a relative word points: 上 −1, 上上 −2, 这/本 0, 下 +1.
fn offset_of(which: &str) -> Option<i64> {
    match which {
        "上上" => Some(-2),
        "上" => Some(-1),
        "这" | "本" | "今" => Some(0),
        "下" | "明" => Some(1),
        "下下" => Some(2),
        "去" => Some(-1),
        "前" => Some(-2),
        "后" => Some(2),
        _ => None,
    }
}

fn unit_of(word: &str) -> Option<Unit> {
    match word {
        "天" | "日" => Some(Unit::Day),
        "周" | "星期" | "礼拜" => Some(Unit::Week),
        "月" => Some(Unit::Month),
        "年" => Some(Unit::Year),
        _ => None,
    }
}

/// The days of `part` ("初", "中旬", "底" …) of a month.
fn part_of_month(year: i16, month: i8, part: &str) -> Option<TimeRange> {
    let first = Date::new(year, month, 1).ok()?;
    let (from, to) = match part {
        "初" | "上旬" => (1, 11),
        "中" | "中旬" => (11, 21),
        "下旬" | "底" | "末" => (21, 0),
        _ => return None,
    };
    let start = Date::new(year, month, from).ok()?;
    let end = if to == 0 { Unit::Month.shift(first, 1)? } else { Date::new(year, month, to).ok()? };
    super::calendar::dates_range(start, end)
}

/// The months of `part` of a year.
fn part_of_year(year: i16, part: &str) -> Option<TimeRange> {
    match part {
        "初" | "年初" => months_range(year, 1, 3),
        "中" | "年中" => months_range(year, 5, 4),
        "底" | "末" | "年底" | "年末" => months_range(year, 10, 3),
        "上半年" => months_range(year, 1, 6),
        "下半年" => months_range(year, 7, 6),
        _ => None,
    }
}

impl Reader {
    /// Any Chinese form at the start of `rest`, open or closed: the longest.
    pub(super) fn chinese(&self, rest: &str) -> Option<Parsed> {
        super::longest([self.chinese_open(rest), self.chinese_closed(rest)])
    }

    /// `parsed`, if it ends where a word of the text does.
    fn whole(&self, rest: &str, parsed: Option<Parsed>) -> Option<Parsed> {
        parsed.filter(|p| self.words.ends_a_word(rest, p.len))
    }

    /// A closed Chinese form: a day, a period, a weekday, a count back or ahead, a date.
    pub(super) fn chinese_closed(&self, rest: &str) -> Option<Parsed> {
        // A period's words (上周, 去年) are time words wherever they start a word ("下周到北京"
        // is cut 下/周到); a day, a count, a weekday or a date must also end one ("今日头条",
        // "这周一直").
        super::longest([
            self.whole(rest, self.zh_relative_day(rest)),
            self.zh_period(rest),
            self.whole(rest, self.zh_weekday(rest)),
            self.whole(rest, self.zh_count(rest)),
            self.whole(rest, self.zh_date(rest)),
            self.zh_part(rest),
        ])
    }

    /// "5月8日之前", "去年以后", "上个月以来", "自从2023年起", "直到年底", "到5月为止".
    fn chinese_open(&self, rest: &str) -> Option<Parsed> {
        static OPENING: LazyLock<Regex> = LazyLock::new(|| anchored(r"(?P<word>自从|自|从|直到|到)"));
        static CLOSING: LazyLock<Regex> =
            LazyLock::new(|| anchored(r"(?P<word>之前|以前|之后|以后|以来|起|开始|为止)"));
        let opening = OPENING.captures(rest);
        let offset = opening.as_ref().map_or(0, |c| c[0].len());
        let date = self.chinese_closed(&rest[offset..])?;
        let closing = CLOSING.captures(&rest[offset + date.len..]);
        let (open_word, close_word) = (opening.map(|c| c["word"].to_owned()), closing.as_ref().map(|c| &c["word"]));
        let TimeRange { start, end } = date.range;
        let range = match (open_word.as_deref(), close_word) {
            (None, Some("之前" | "以前")) => TimeRange { start: None, end: start },
            (None, Some("之后" | "以后")) => TimeRange { start: end, end: None },
            (Some("自从" | "自" | "从"), Some("起" | "开始" | "以来"))
            | (Some("自从"), None)
            | (None, Some("以来")) => TimeRange { start, end: None },
            (Some("直到" | "到"), Some("为止")) | (Some("直到"), None) => TimeRange { start: None, end },
            _ => return None,
        };
        let len = offset + date.len + closing.map_or(0, |c| c[0].len());
        self.whole(rest, Some(Parsed { len, range }))
    }

    /// 今天、昨天、前天、大前天、明天、后天、大后天, and 今早、今晚、昨晚.
    fn zh_relative_day(&self, rest: &str) -> Option<Parsed> {
        static DAY: LazyLock<Regex> =
            LazyLock::new(|| anchored(r"大前天|前天|昨天|昨日|昨晚|今天|今日|今早|今晚|明天|明日|明早|后天|大后天"));
        let found = DAY.find(rest)?;
        let offset = match found.as_str() {
            "大前天" => -3,
            "前天" => -2,
            "昨天" | "昨日" | "昨晚" => -1,
            "今天" | "今日" | "今早" | "今晚" => 0,
            "明天" | "明日" | "明早" => 1,
            "后天" => 2,
            _ => 3,
        };
        Some(Parsed { len: found.len(), range: day_range(Unit::Day.shift(self.today, offset)?)? })
    }

    /// 上周、这个星期、下礼拜、上个月、本月、上周末、今年、去年、前年、明年, and 上半年、下半年.
    fn zh_period(&self, rest: &str) -> Option<Parsed> {
        static PERIOD: LazyLock<Regex> = LazyLock::new(|| {
            anchored(concat!(
                r"(?P<which>上上|上|这|本|下下|下)个?(?P<unit>周末|周|星期|礼拜|月)",
                r"|(?P<year>今|去|前|明|后)年(?P<half>上半年|下半年)?",
                r"|(?P<bare>上半年|下半年)",
            ))
        });
        let caps = PERIOD.captures(rest)?;
        let len = caps[0].len();
        // "这周围" is around here, "十周年" an anniversary: 周 opening another word.
        if caps.name("unit").is_some_and(|u| u.as_str() == "周") && rest[len..].starts_with(['围', '边', '年', '岁'])
        {
            return None;
        }
        if let Some(which) = caps.name("which") {
            let offset = offset_of(which.as_str())?;
            let range = match &caps["unit"] {
                "周末" => weekend_range(Unit::Week.shift(self.today, offset)?)?,
                unit => {
                    let unit = unit_of(unit)?;
                    unit.period(unit.shift(self.today, offset)?)?
                }
            };
            return Some(Parsed { len, range });
        }
        let year_offset = caps.name("year").map_or(Some(0), |y| offset_of(y.as_str()))?;
        let year = self.today.year().checked_add(i16::try_from(year_offset).ok()?)?;
        let range = match caps.name("half").or(caps.name("bare")) {
            Some(half) => part_of_year(year, half.as_str())?,
            None => year_range(year)?,
        };
        Some(Parsed { len, range })
    }

    /// 上周五、这周三、下星期一、本礼拜天: that day of the calendar week meant.
    fn zh_weekday(&self, rest: &str) -> Option<Parsed> {
        static WEEKDAY: LazyLock<Regex> = LazyLock::new(|| {
            anchored(r"(?P<which>上上|上|这|本|下下|下)个?(?:周|星期|礼拜)(?P<day>[一二三四五六日天])")
        });
        let caps = WEEKDAY.captures(rest)?;
        let offset = offset_of(&caps["which"])?;
        let day = match &caps["day"] {
            "日" | "天" => 7,
            d => number(d)?,
        };
        let monday = super::calendar::monday_of(Unit::Week.shift(self.today, offset)?)?;
        Some(Parsed { len: caps[0].len(), range: day_range(Unit::Day.shift(monday, day - 1)?)? })
    }

    /// 三天前、两周前、三个月前、半年前、几天前; and ahead: 三天后、两个月以后.
    fn zh_count(&self, rest: &str) -> Option<Parsed> {
        static COUNT: LazyLock<Regex> = LazyLock::new(|| {
            anchored(&format!(
                r"(?P<count>{NUM}|几|半)个?(?P<unit>天|日|周|星期|礼拜|月|年)(?P<way>以前|之前|前|以后|之后|后)"
            ))
        });
        let caps = COUNT.captures(rest)?;
        // "三年前端经验", "两年后台开发": 前 and 后 opening a word of their own.
        let way = caps.name("way").map_or("", |w| w.as_str());
        let next = rest[caps[0].len()..].chars().next();
        if way.chars().count() == 1 && next.is_some_and(|c| "端台面来".contains(c)) {
            return None;
        }
        let mut unit = unit_of(&caps["unit"])?;
        let (fewest, most) = match &caps["count"] {
            // "a few days", as English's "a few": not tomorrow, rarely beyond a week.
            "几" => (2, 7),
            // Half a year is six months.
            "半" if matches!(unit, Unit::Year) => {
                unit = Unit::Month;
                (6, 6)
            }
            "半" => return None,
            n => (number(n)?, number(n)?),
        };
        let sign = if caps["way"].ends_with('前') { -1 } else { 1 };
        let near = unit.period(unit.shift(self.today, sign * fewest)?)?;
        let far = unit.period(unit.shift(self.today, sign * most)?)?;
        let range = if sign < 0 {
            TimeRange { start: far.start, end: near.end }
        } else {
            TimeRange { start: near.start, end: far.end }
        };
        Some(Parsed { len: caps[0].len(), range })
    }

    /// 2023年5月8日、2023/5/8、2023年5月、5月8日、五月、2023年, with a part of the month or
    /// the year after it (五月中旬、2023年底). A year given relatively counts too (去年五月).
    fn zh_date(&self, rest: &str) -> Option<Parsed> {
        static DATE: LazyLock<Regex> = LazyLock::new(|| {
            anchored(&format!(
                concat!(
                    r"(?P<y>[0-9]{{4}})[/.](?P<sm>[0-9]{{1,2}})[/.](?P<sd>[0-9]{{1,2}})",
                    r"|(?:(?P<year>[0-9]{{4}})年|(?P<rel>今|去|前|明)年)?",
                    r"(?:(?P<month>{NUM})月份?(?:(?P<day>{NUM})[日号]|(?P<mpart>初|上旬|中旬|下旬|中|底|末))?)?",
                ),
                NUM = NUM
            ))
        });
        static YEAR_PART: LazyLock<Regex> = LazyLock::new(|| anchored(r"年?(?P<part>年初|年中|年底|年末|初|底|末)"));
        let caps = DATE.captures(rest)?;
        if let Some(y) = caps.name("y") {
            let date = Date::new(y.as_str().parse().ok()?, group(&caps, "sm")?, group(&caps, "sd")?).ok()?;
            return Some(Parsed { len: caps[0].len(), range: day_range(date)? });
        }
        let year = match (caps.name("year"), caps.name("rel")) {
            (Some(y), _) => Some(y.as_str().parse::<i16>().ok()?),
            (None, Some(rel)) => Some(self.today.year().checked_add(i16::try_from(offset_of(rel.as_str())?).ok()?)?),
            (None, None) => None,
        };
        let len = caps[0].len();
        let Some(month) = group::<i8>(&caps, "month") else {
            // A year alone: only with digits ("2023年"), and its parts ("2023年底", "去年年底").
            let year = year.filter(|_| caps.name("year").is_some() || caps.name("rel").is_some())?;
            if let Some(part) = YEAR_PART.captures(&rest[len..]) {
                let range = part_of_year(year, &part["part"])?;
                return Some(Parsed { len: len + part[0].len(), range });
            }
            // "去年" alone is a period ([`Reader::zh_period`]); "2023年" is this year.
            return caps.name("year").and_then(|_| Some(Parsed { len, range: year_range(year)? }));
        };
        if !(1..=12).contains(&month) {
            return None;
        }
        let build = |year: i16| -> Option<TimeRange> {
            match (group::<i8>(&caps, "day"), caps.name("mpart")) {
                (Some(day), _) => day_range(Date::new(year, month, day).ok()?),
                (None, Some(part)) => part_of_month(year, month, part.as_str()),
                (None, None) => months_range(year, month, 1),
            }
        };
        let range = match year {
            Some(year) => build(year)?,
            None => self.latest_begun(build)?,
        };
        Some(Parsed { len, range })
    }

    /// A part of the current, last or next month or year: 月初、月底、这个月底、上个月初、年初、
    /// 年底、今年年底、明年年初.
    fn zh_part(&self, rest: &str) -> Option<Parsed> {
        static PART: LazyLock<Regex> = LazyLock::new(|| {
            anchored(concat!(
                r"(?:(?P<which>上|这|本|下)个?)?月(?P<mpart>初|底|末|中旬|上旬|下旬)",
                r"|(?:(?P<rel>今|去|明)年)?(?P<ypart>年初|年中|年底|年末)",
            ))
        });
        let caps = PART.captures(rest)?;
        let range = if let Some(part) = caps.name("mpart") {
            let offset = caps.name("which").map_or(Some(0), |w| offset_of(w.as_str()))?;
            let month = Unit::Month.shift(self.today, offset)?;
            part_of_month(month.year(), month.month(), part.as_str())?
        } else {
            let offset = caps.name("rel").map_or(Some(0), |r| offset_of(r.as_str()))?;
            part_of_year(self.today.year().checked_add(i16::try_from(offset).ok()?)?, &caps["ypart"])?
        };
        Some(Parsed { len: caps[0].len(), range })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FoundTime, TimeExpression, TimeRange, find_time_expression, find_time_mentions};
    use crate::time::Timestamp;

    /// Thursday, 15 June 2023, noon UTC (the English tests' anchor).
    fn anchor() -> Timestamp {
        "2023-06-15T12:00:00Z".parse().unwrap()
    }

    fn at(text: &str) -> Option<Timestamp> {
        (!text.is_empty()).then(|| format!("{text}T00:00:00Z").parse().unwrap())
    }

    /// (question, phrase, start, end); "" is an open end.
    fn check(cases: &[(&str, &str, &str, &str)]) {
        for &(question, phrase, start, end) in cases {
            let got = match find_time_expression(question, anchor()) {
                Some(FoundTime { expression: TimeExpression::Range { range }, phrase }) => Some((range, phrase)),
                other => panic!("{question}: {other:?}"),
            };
            let expected = (TimeRange { start: at(start), end: at(end) }, phrase.to_owned());
            assert_eq!(got, Some(expected), "{question}");
        }
    }

    #[test]
    fn relative_days_and_periods() {
        check(&[
            ("我今天吃了什么", "今天", "2023-06-15", "2023-06-16"),
            ("昨天谁打电话了", "昨天", "2023-06-14", "2023-06-15"),
            ("前天去哪了", "前天", "2023-06-13", "2023-06-14"),
            ("明天有什么安排", "明天", "2023-06-16", "2023-06-17"),
            ("上周发生了什么", "上周", "2023-06-05", "2023-06-12"),
            ("这个星期的会议", "这个星期", "2023-06-12", "2023-06-19"),
            ("下礼拜做什么", "下礼拜", "2023-06-19", "2023-06-26"),
            ("上周末去哪玩了", "上周末", "2023-06-10", "2023-06-12"),
            ("上个月买了什么", "上个月", "2023-05-01", "2023-06-01"),
            ("本月的预算", "本月", "2023-06-01", "2023-07-01"),
            ("去年搬家了吗", "去年", "2022-01-01", "2023-01-01"),
            ("今年的目标", "今年", "2023-01-01", "2024-01-01"),
            ("去年下半年的项目", "去年下半年", "2022-07-01", "2023-01-01"),
            ("这周一直在加班", "这周", "2023-06-12", "2023-06-19"),
            ("我下周到北京出差", "下周", "2023-06-19", "2023-06-26"),
        ]);
    }

    #[test]
    fn weekdays_are_days_of_the_calendar_week_meant() {
        check(&[
            // The anchor is a Thursday: 上周五 is last week's Friday, not yesterday's week.
            ("上周五开了什么会", "上周五", "2023-06-09", "2023-06-10"),
            ("这周三说了什么", "这周三", "2023-06-14", "2023-06-15"),
            ("下星期一几点开会", "下星期一", "2023-06-19", "2023-06-20"),
            ("上礼拜天去了哪里", "上礼拜天", "2023-06-11", "2023-06-12"),
        ]);
    }

    #[test]
    fn counts_back_and_ahead() {
        check(&[
            ("三天前说了什么", "三天前", "2023-06-12", "2023-06-13"),
            ("两周前的会议", "两周前", "2023-05-29", "2023-06-05"),
            ("3个月前买的", "3个月前", "2023-03-01", "2023-04-01"),
            ("半年前搬的家", "半年前", "2022-12-01", "2023-01-01"),
            ("几天前见过他", "几天前", "2023-06-08", "2023-06-14"),
            ("十二天以前", "十二天以前", "2023-06-03", "2023-06-04"),
            ("两个月后上线", "两个月后", "2023-08-01", "2023-09-01"),
        ]);
    }

    #[test]
    fn dates_and_their_parts() {
        check(&[
            ("2023年5月8日发生了什么", "2023年5月8日", "2023-05-08", "2023-05-09"),
            ("2023/5/8 的会议", "2023/5/8", "2023-05-08", "2023-05-09"),
            ("2023年5月的旅行", "2023年5月", "2023-05-01", "2023-06-01"),
            // Without a year, the latest begun (asked in June 2023).
            ("5月8日去了哪里", "5月8日", "2023-05-08", "2023-05-09"),
            ("七月份做了什么", "七月份", "2022-07-01", "2022-08-01"),
            ("十二月三号的聚会", "十二月三号", "2022-12-03", "2022-12-04"),
            ("去年五月去了哪", "去年五月", "2022-05-01", "2022-06-01"),
            ("2022年有什么大事", "2022年", "2022-01-01", "2023-01-01"),
            ("五月中旬的会议", "五月中旬", "2023-05-11", "2023-05-21"),
            ("2023年2月下旬", "2023年2月下旬", "2023-02-21", "2023-03-01"),
            ("月初交了房租", "月初", "2023-06-01", "2023-06-11"),
            ("上个月底发了奖金", "上个月底", "2023-05-21", "2023-06-01"),
            ("去年年底换了工作", "去年年底", "2022-10-01", "2023-01-01"),
            ("2022年底的计划", "2022年底", "2022-10-01", "2023-01-01"),
            ("年初定的目标", "年初", "2023-01-01", "2023-04-01"),
        ]);
    }

    #[test]
    fn before_after_since_and_until() {
        check(&[
            ("5月8日之前发生了什么", "5月8日之前", "", "2023-05-08"),
            ("去年以后换过几次工作", "去年以后", "2023-01-01", ""),
            ("自从上个月起一直在学日语", "自从上个月起", "2023-05-01", ""),
            ("上周以来的变化", "上周以来", "2023-06-05", ""),
            ("直到2022年底都住在杭州", "直到2022年底", "", "2023-01-01"),
            ("到5月为止的开销", "到5月为止", "", "2023-06-01"),
        ]);
    }

    #[test]
    fn what_is_not_a_time() {
        for question in [
            "张伟在腾讯做后端开发",
            "一个月多少钱",
            "这周围有什么好吃的",
            "公司成立十周年",
            "整理一下周报",
            "晚上月亮很圆",
            "我以前年轻的时候",
            "我有三年前端经验",
            "两年后端经验",
        ] {
            assert_eq!(find_time_expression(question, anchor()), None, "{question}");
        }
    }

    proptest::proptest! {
        #![proptest_config(crate::testkit::proptest_config())]

        /// "N天前" said at any moment is the day N days before it, whether N is written in
        /// digits or in characters, and a question about that day finds it.
        #[test]
        fn days_back_in_digits_and_characters_agree(said in crate::testkit::timestamp(), back in 1i64..99) {
            let characters = match (back / 10, back % 10) {
                (0, ones) => DIGITS[ones as usize].to_string(),
                (1, 0) => "十".to_owned(),
                (1, ones) => format!("十{}", DIGITS[ones as usize]),
                (tens, 0) => format!("{}十", DIGITS[tens as usize]),
                (tens, ones) => format!("{}十{}", DIGITS[tens as usize], DIGITS[ones as usize]),
            };
            let in_digits = find_time_mentions(&format!("我{back}天前搬的家"), said);
            let in_characters = find_time_mentions(&format!("我{characters}天前搬的家"), said);
            proptest::prop_assert_eq!(in_digits.len(), 1);
            proptest::prop_assert_eq!(in_digits[0].range, in_characters[0].range);
            let memory = super::super::calendar_terms(&in_digits[0].range, false);
            let question = super::super::calendar_terms(&in_digits[0].range, true);
            proptest::prop_assert!(question.iter().all(|t| memory.contains(t)));
        }

        /// Any mix of Chinese time words, digits and other text reads without panicking.
        #[test]
        fn any_chinese_text_reads(text in "[上下这本个周星期月年天日前后之以来起到直自从为止初底末旬半几两三十0-9/.小王搬家 ]{0,30}") {
            let _ = find_time_expression(&text, anchor());
            let _ = find_time_mentions(&text, anchor());
        }
    }

    const DIGITS: [char; 10] = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];

    #[test]
    fn a_memory_mentions_times_relative_to_when_it_was_said() {
        let said: Timestamp = "2023-05-08T10:00:00Z".parse().unwrap(); // a Monday
        let mentions = find_time_mentions("小王昨天说他三天前从杭州回来，5月20日再去上海", said);
        let found: Vec<(&str, Option<Timestamp>)> =
            mentions.iter().map(|m| (m.phrase.as_str(), m.range.start)).collect();
        assert_eq!(
            found,
            [("昨天", at("2023-05-07")), ("三天前", at("2023-05-05")), ("5月20日", at("2023-05-20"))],
            "a statement's date without a year is the nearest one"
        );
    }
}
