//! The English reader's cases: questions and memories with the ranges they read as.

use super::*;
use crate::testkit::{proptest_config, timestamp};
use proptest::prelude::*;

/// (memory text, said at, [(phrase, start, end)]): what a memory mentions, resolved against
/// the moment it was said. Anchors are fixed; the weekday of each is in its comment.
#[test]
fn mentions_in_memories_resolve_against_when_they_were_said() {
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str, &'a str)]);
    let cases: &[Case<'_>] = &[
        // Monday 8 May 2023.
        (
            "I went to a support group yesterday and it was so powerful.",
            "2023-05-08T13:56:00Z",
            &[("yesterday", "2023-05-07", "2023-05-08")],
        ),
        (
            "My mom and I made some dinner together last night!",
            "2023-05-08T15:18:00Z",
            &[("last night", "2023-05-07", "2023-05-08")],
        ),
        ("Dyed my hair last week - come see!", "2023-05-08T19:37:00Z", &[("last week", "2023-05-01", "2023-05-08")]),
        (
            "My car broke down last Fri on my way to work.",
            "2023-05-08T10:00:00Z",
            &[("last Fri", "2023-05-05", "2023-05-06")],
        ),
        (
            "We went last weekend, and again three weeks ago.",
            "2023-05-08T10:00:00Z",
            &[("last weekend", "2023-05-06", "2023-05-08"), ("three weeks ago", "2023-04-17", "2023-04-24")],
        ),
        (
            "I'm stoked for my game there next month!",
            "2023-05-08T10:00:00Z",
            &[("next month", "2023-06-01", "2023-07-01")],
        ),
        (
            "See you next Sunday, or on May 20.",
            "2023-05-08T10:00:00Z",
            &[("next Sunday", "2023-05-14", "2023-05-15"), ("on May 20", "2023-05-20", "2023-05-21")],
        ),
        // Sunday 14 May 2023: "last Sunday" is a week back, never today.
        ("We met last Sunday.", "2023-05-14T10:00:00Z", &[("last Sunday", "2023-05-07", "2023-05-08")]),
        // Friday 20 January 2023: a date without a year is the one nearest when it was said.
        (
            "My colleagues and I went to a convention in November.",
            "2023-01-20T10:00:00Z",
            &[("in November", "2022-11-01", "2022-12-01")],
        ),
        ("We fly out in March.", "2023-01-20T10:00:00Z", &[("in March", "2023-03-01", "2023-04-01")]),
        // Thursday 17 August 2023: a day without its month is in the month nearest.
        (
            "I met back up with my teammates on the 15th after my trip.",
            "2023-08-17T10:00:00Z",
            &[("on the 15th", "2023-08-15", "2023-08-16")],
        ),
        (
            "The lease ends on the 2nd and we move.",
            "2023-08-29T10:00:00Z",
            &[("on the 2nd", "2023-09-02", "2023-09-03")],
        ),
        (
            "On the 30th we flew home, on the 31st of May we came.",
            "2023-02-10T10:00:00Z",
            &[("On the 30th", "2023-01-30", "2023-01-31"), ("on the 31st of May", "2023-05-31", "2023-06-01")],
        ),
        // An ordinal that counts something, or without "on", is no date.
        ("We got it on the 3rd try, on the 2nd floor, the 15th time.", "2023-08-17T10:00:00Z", &[]),
        // Nothing placed: open ranges, events, rolling windows, a bare weekday.
        ("I have been running since May and before the move.", "2023-05-08T10:00:00Z", &[]),
        ("Over the past few weeks I read a lot.", "2023-05-08T10:00:00Z", &[]),
        ("On Friday we talk.", "2023-05-08T10:00:00Z", &[]),
        ("I've had them for 3 years now.", "2023-05-08T10:00:00Z", &[]),
    ];
    for &(text, said_at, expected) in cases {
        let got: Vec<(String, TimeRange)> =
            find_time_mentions(text, at(said_at)).into_iter().map(|m| (m.phrase, m.range)).collect();
        let expected: Vec<(String, TimeRange)> =
            expected.iter().map(|&(phrase, start, end)| (phrase.to_owned(), range(start, end))).collect();
        assert_eq!(got, expected, "{text:?} said at {said_at}");
    }
}

#[test]
fn calendar_terms_spell_days_and_months() {
    let day = range("2023-05-07", "2023-05-08");
    assert_eq!(calendar_terms(&day, false), ["t20230507", "t202305"]);
    assert_eq!(calendar_terms(&day, true), ["t20230507"]);
    // A week across a month's end touches both months.
    let week = range("2023-05-29", "2023-06-05");
    let terms = calendar_terms(&week, false);
    assert_eq!(terms.len(), 7 + 2);
    assert!(terms.contains(&"t20230604".to_owned()) && terms.contains(&"t202306".to_owned()));
    // A month is spelt as a month, both ways: a question about March finds "last month".
    assert_eq!(calendar_terms(&range("2023-03-01", "2023-04-01"), true), ["t202303"]);
    assert_eq!(calendar_terms(&range("2023-03-01", "2023-04-01"), false), ["t202303"]);
    // A year: months only, both ways.
    let year = calendar_terms(&range("2022-01-01", "2023-01-01"), true);
    assert_eq!(year.len(), 12);
    assert_eq!(year[0], "t202201");
    assert_eq!(calendar_terms(&range("2022-01-01", "2023-01-01"), false), year);
    // Too long, open, empty or inverted: nothing.
    assert!(calendar_terms(&range("2020-01-01", "2023-01-01"), false).is_empty());
    assert!(calendar_terms(&range("2023-05-07", ""), false).is_empty());
    assert!(calendar_terms(&range("2023-05-07", "2023-05-07"), false).is_empty());
    // Every term survives the analyzer whole.
    for term in calendar_terms(&week, false) {
        assert_eq!(crate::text::index_tokens(&term), std::slice::from_ref(&term));
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    /// A mention always lies in the range the question about its day asks for: the terms
    /// of a memory mentioning a day include the terms a question about that day searches.
    #[test]
    fn a_day_mentioned_is_found_by_a_question_about_that_day(said in timestamp(), back in 1i64..40) {
        let text = format!("It happened {back} days ago.");
        for mention in find_time_mentions(&text, said) {
            let memory = calendar_terms(&mention.range, false);
            let question = calendar_terms(&mention.range, true);
            prop_assert!(question.iter().all(|t| memory.contains(t)), "{memory:?} vs {question:?}");
        }
    }
}

/// Thursday, 15 June 2023, noon UTC.
fn anchor() -> Timestamp {
    "2023-06-15T12:00:00Z".parse().unwrap()
}

fn at(text: &str) -> Timestamp {
    if text.len() == 10 { format!("{text}T00:00:00Z").parse().unwrap() } else { text.parse().unwrap() }
}

fn range(start: &str, end: &str) -> TimeRange {
    let end_of = |s: &str| (!s.is_empty()).then(|| at(s));
    TimeRange { start: end_of(start), end: end_of(end) }
}

fn found_range(question: &str) -> Option<(TimeRange, String)> {
    match find_time_expression(question, anchor())? {
        FoundTime { expression: TimeExpression::Range { range }, phrase } => Some((range, phrase)),
        other => panic!("{question:?}: expected a range, got {other:?}"),
    }
}

/// (question, phrase, start, end); "" is an open end.
fn check(cases: &[(&str, &str, &str, &str)]) {
    for &(question, phrase, start, end) in cases {
        let got = found_range(question);
        let expected = (range(start, end), phrase.to_string());
        assert_eq!(
            got.as_ref(),
            Some(&expected),
            "{question:?}: got {:?}",
            got.as_ref().map(|(r, p)| (r.describe(), p))
        );
    }
}

#[test]
fn relative_days() {
    check(&[
        ("what did I eat today?", "today", "2023-06-15", "2023-06-16"),
        ("Yesterday, who called?", "Yesterday", "2023-06-14", "2023-06-15"),
        ("what is planned for tomorrow", "tomorrow", "2023-06-16", "2023-06-17"),
        ("what did I read this morning", "this morning", "2023-06-15", "2023-06-16"),
        ("where are we going tonight", "tonight", "2023-06-15", "2023-06-16"),
        ("what did we watch last night", "last night", "2023-06-14", "2023-06-15"),
        ("who came the day before yesterday", "the day before yesterday", "2023-06-13", "2023-06-14"),
        ("what is due the day after tomorrow", "the day after tomorrow", "2023-06-17", "2023-06-18"),
    ]);
}

#[test]
fn calendar_periods() {
    check(&[
        ("what happened this week", "this week", "2023-06-12", "2023-06-19"),
        ("what happened last week?", "last week", "2023-06-05", "2023-06-12"),
        ("plans for next week", "next week", "2023-06-19", "2023-06-26"),
        ("what did I buy this month", "this month", "2023-06-01", "2023-07-01"),
        ("what did I buy LAST MONTH", "LAST MONTH", "2023-05-01", "2023-06-01"),
        ("what did I buy the previous month", "previous month", "2023-05-01", "2023-06-01"),
        ("what is due next month", "next month", "2023-07-01", "2023-08-01"),
        ("goals this year", "this year", "2023-01-01", "2024-01-01"),
        ("goals last year", "last year", "2022-01-01", "2023-01-01"),
        ("goals next year", "next year", "2024-01-01", "2025-01-01"),
        ("what did we do last weekend", "last weekend", "2023-06-10", "2023-06-12"),
        ("plans this weekend?", "this weekend", "2023-06-17", "2023-06-19"),
        ("plans next weekend?", "next weekend", "2023-06-24", "2023-06-26"),
        ("what was said in last week's meeting", "in last week", "2023-06-05", "2023-06-12"),
    ]);
}

#[test]
fn ago() {
    check(&[
        ("what happened 3 days ago", "3 days ago", "2023-06-12", "2023-06-13"),
        ("what happened three days ago", "three days ago", "2023-06-12", "2023-06-13"),
        ("one day ago", "one day ago", "2023-06-14", "2023-06-15"),
        ("a week ago, what did I say", "a week ago", "2023-06-05", "2023-06-12"),
        ("2 weeks ago", "2 weeks ago", "2023-05-29", "2023-06-05"),
        ("two months ago", "two months ago", "2023-04-01", "2023-05-01"),
        ("twelve months ago", "twelve months ago", "2022-06-01", "2022-07-01"),
        ("a year ago", "a year ago", "2022-01-01", "2023-01-01"),
        ("10 years ago", "10 years ago", "2013-01-01", "2014-01-01"),
        ("what did she say a few days ago", "a few days ago", "2023-06-08", "2023-06-14"),
        ("a couple of weeks ago", "a couple of weeks ago", "2023-05-22", "2023-06-05"),
        ("several months ago", "several months ago", "2022-11-01", "2023-04-01"),
    ]);
}

#[test]
fn rolling_windows() {
    check(&[
        ("what did I do in the last 3 days", "in the last 3 days", "2023-06-12T12:00:00Z", "2023-06-15T12:00:00Z"),
        ("in the past two weeks?", "in the past two weeks", "2023-06-01T12:00:00Z", "2023-06-15T12:00:00Z"),
        ("over the past 6 months", "over the past 6 months", "2022-12-15T12:00:00Z", "2023-06-15T12:00:00Z"),
        ("the past year", "the past year", "2022-06-15T12:00:00Z", "2023-06-15T12:00:00Z"),
        ("during the last week", "during the last week", "2023-06-08T12:00:00Z", "2023-06-15T12:00:00Z"),
        ("within the last few days", "within the last few days", "2023-06-08T12:00:00Z", "2023-06-15T12:00:00Z"),
    ]);
}

#[test]
fn months_and_days() {
    check(&[
        ("what happened May 2023", "May 2023", "2023-05-01", "2023-06-01"),
        ("what happened in May 2023?", "in May 2023", "2023-05-01", "2023-06-01"),
        ("in may, 2023", "in may, 2023", "2023-05-01", "2023-06-01"),
        ("trip in Sept 2021", "in Sept 2021", "2021-09-01", "2021-10-01"),
        ("who visited on May 8, 2023", "on May 8, 2023", "2023-05-08", "2023-05-09"),
        ("May 8, 2023", "May 8, 2023", "2023-05-08", "2023-05-09"),
        ("8 May 2023", "8 May 2023", "2023-05-08", "2023-05-09"),
        ("May 8th 2023 dinner", "May 8th 2023", "2023-05-08", "2023-05-09"),
        ("on 8 May, 2023?", "on 8 May, 2023", "2023-05-08", "2023-05-09"),
        ("the week of May 8, 2023", "the week of May 8, 2023", "2023-05-08", "2023-05-15"),
        ("during the week of 10 May 2023", "during the week of 10 May 2023", "2023-05-08", "2023-05-15"),
        // Without a year: the latest one already begun at the anchor.
        ("what did we do in May", "in May", "2023-05-01", "2023-06-01"),
        ("what did we do in July", "in July", "2022-07-01", "2022-08-01"),
        ("during dec", "during dec", "2022-12-01", "2023-01-01"),
        ("what happened on May 8 at work", "on May 8", "2023-05-08", "2023-05-09"),
        ("what happened May 8?", "May 8", "2023-05-08", "2023-05-09"),
        ("the 8th of May", "the 8th of May", "2023-05-08", "2023-05-09"),
        ("June 20th", "June 20th", "2022-06-20", "2022-06-21"),
        // Without its month: the latest begun, skipping months too short for the day.
        ("what did we do on the 15th?", "on the 15th", "2023-06-15", "2023-06-16"),
        ("who came on the 20th and stayed", "on the 20th", "2023-05-20", "2023-05-21"),
        ("on the 31st", "on the 31st", "2023-05-31", "2023-06-01"),
        ("early May 2023", "early May 2023", "2023-05-01", "2023-05-11"),
        ("in mid-May", "in mid-May", "2023-05-11", "2023-05-21"),
        ("late February 2024", "late February 2024", "2024-02-21", "2024-03-01"),
        ("what did we do last May?", "last May", "2023-05-01", "2023-06-01"),
        ("what did we do last April with Jane", "last April", "2023-04-01", "2023-05-01"),
        ("what is planned next July", "next July", "2023-07-01", "2023-08-01"),
    ]);
}

#[test]
fn years_and_iso_dates() {
    check(&[
        ("what happened in 2023", "in 2023", "2023-01-01", "2024-01-01"),
        ("during 2022 what did we buy", "during 2022", "2022-01-01", "2023-01-01"),
        ("in early 2023", "in early 2023", "2023-01-01", "2023-05-01"),
        ("mid 2023", "mid 2023", "2023-05-01", "2023-09-01"),
        ("mid-2023", "mid-2023", "2023-05-01", "2023-09-01"),
        ("late 2023", "late 2023", "2023-09-01", "2024-01-01"),
        ("photos of 2021", "of 2021", "2021-01-01", "2022-01-01"),
        ("what happened on 2023-05-08?", "on 2023-05-08", "2023-05-08", "2023-05-09"),
        ("2023-05-08", "2023-05-08", "2023-05-08", "2023-05-09"),
        ("the 2023-05 report", "2023-05", "2023-05-01", "2023-06-01"),
    ]);
}

#[test]
fn a_date_without_its_year_is_the_latest_the_memory_can_hold() {
    // Asked on 15 June 2023 of a store whose newest memory is from 20 October 2020: the
    // latest July begun by the anchor (2022) lies beyond what any memory can speak of.
    let newest = at("2020-10-20T09:00:00Z");
    let read = |question: &str, anchor: Timestamp, newest: Option<Timestamp>| match find_time_expression_knowing(
        question, anchor, newest,
    ) {
        Some(FoundTime { expression: TimeExpression::Range { range }, .. }) => range,
        other => panic!("{question:?}: no range: {other:?}"),
    };
    for (question, start, end) in [
        ("when did we go camping in July?", "2020-07-01", "2020-08-01"),
        ("what happened on Aug 15th", "2020-08-15", "2020-08-16"),
        ("who came in October", "2020-10-01", "2020-11-01"),
        ("in November", "2019-11-01", "2019-12-01"),
        ("during the summer", "2020-06-01", "2020-09-01"),
        // A day without its month: the latest begun by the newest memory.
        ("what did we do on the 25th?", "2020-09-25", "2020-09-26"),
        // A year, or a time relative to now, is what it says.
        ("in July 2022", "2022-07-01", "2022-08-01"),
        ("last week", "2023-06-05", "2023-06-12"),
    ] {
        assert_eq!(read(question, anchor(), Some(newest)), range(start, end), "{question:?}");
    }
    // Within a year of the newest memory, a memory may have planned it: asked on 2 July of
    // a store whose newest memory (28 June) says "Rome on July 20", July is this July.
    let asked = at("2023-07-02T00:00:00Z");
    assert_eq!(read("what are we doing in July?", asked, Some(at("2023-06-28"))), range("2023-07-01", "2023-08-01"));
    assert_eq!(read("in May", anchor(), Some(at("2022-12-01"))), range("2023-05-01", "2023-06-01"));
    // A store with newer memories than the anchor (an as_of in the past) changes nothing.
    assert_eq!(read("in July", anchor(), Some(at("2024-01-01"))), read("in July", anchor(), None));
    // February 29th is the latest there was, not none.
    assert_eq!(read("what happened on Feb 29?", anchor(), None), range("2020-02-29", "2020-03-01"));
    // Only a date without its year needs the newest memory looked up.
    for (question, depends) in [("in July", true), ("on the 3rd", true), ("last week", false), ("in July 2022", false)]
    {
        assert_eq!(depends_on_newest(question, anchor()), depends, "{question:?}");
    }
}

#[test]
fn seasons() {
    check(&[
        ("summer 2023", "summer 2023", "2023-06-01", "2023-09-01"),
        ("in the summer of 2022", "in the summer of 2022", "2022-06-01", "2022-09-01"),
        ("winter 2022", "winter 2022", "2022-12-01", "2023-03-01"),
        ("fall 2021", "fall 2021", "2021-09-01", "2021-12-01"),
        ("in the spring", "in the spring", "2023-03-01", "2023-06-01"),
        ("in autumn", "in autumn", "2022-09-01", "2022-12-01"),
        ("what did we do last summer", "last summer", "2022-06-01", "2022-09-01"),
        ("this summer", "this summer", "2023-06-01", "2023-09-01"),
    ]);
}

#[test]
fn open_ended_and_spans() {
    check(&[
        ("what did I do before May 2023", "before May 2023", "", "2023-05-01"),
        ("after May 2023", "after May 2023", "2023-06-01", ""),
        ("since May 2023", "since May 2023", "2023-05-01", ""),
        ("until 2023", "until 2023", "", "2024-01-01"),
        ("till yesterday", "till yesterday", "", "2023-06-15"),
        ("since last week", "since last week", "2023-06-05", ""),
        ("prior to 2020", "prior to 2020", "", "2020-01-01"),
        ("before the summer", "before the summer", "", "2023-06-01"),
        ("after the 8th of May", "after the 8th of May", "2023-05-09", ""),
        ("between 2021 and 2022", "between 2021 and 2022", "2021-01-01", "2023-01-01"),
        ("between May 2022 and March 2023", "between May 2022 and March 2023", "2022-05-01", "2023-04-01"),
        ("from March to May", "from March to May", "2023-03-01", "2023-06-01"),
        ("photos from 2019", "from 2019", "2019-01-01", "2020-01-01"),
    ]);
}

#[test]
fn an_inverted_span_is_no_range() {
    // "from May to July 2022" reads May 2023 (no year given, latest begun) to July 2022: inverted,
    // so the span is dropped and the shorter "from May" wins.
    let (read, phrase) = found_range("from May to July 2022").unwrap();
    assert_eq!(phrase, "from May");
    assert_eq!(read, range("2023-05-01", "2023-06-01"));
}

#[test]
fn events() {
    let cases: &[(&str, &str, Relation, &str)] = &[
        ("where did we live before the move?", "before the move", Relation::Before, "the move"),
        ("After the wedding, who visited?", "After the wedding", Relation::After, "the wedding"),
        ("what did I do before she went to Paris", "before she went to Paris", Relation::Before, "she went to Paris"),
        ("after we met Jane", "after we met Jane", Relation::After, "we met Jane"),
        ("prior to   the  launch ;", "prior to   the  launch", Relation::Before, "the  launch"),
        (
            "before one two three four five six seven eight nine ten",
            "before one two three four five six seven eight",
            Relation::Before,
            "one two three four five six seven eight",
        ),
    ];
    for &(question, phrase, relation, event) in cases {
        let got = find_time_expression(question, anchor());
        let expected = FoundTime {
            expression: TimeExpression::RelativeToEvent { relation, event: event.to_string() },
            phrase: phrase.to_string(),
        };
        assert_eq!(got, Some(expected), "{question:?}");
    }
}

#[test]
fn no_time_expression() {
    let questions = [
        "",
        "May I ask what you like?",
        // Ordinals that count, and lists or spans of days left unread rather than cut short.
        "what changed in the 19th century",
        "who lives on the 2nd and 3rd floors",
        "what did we do on the 15th and 16th?",
        "what did we do on the 2nd last try",
        "what did she say recently",
        "how many days did it take",
        "have you seen it ever before",
        "have we met before?",
        "what happened the day before the move",
        "a week before the wedding",
        "who will look after the kids",
        "she was named after her grandmother",
        "after all, what is it",
        "what did we do before that",
        "the last may be first",
        "May 5 people come?",
        "How early may I arrive?",
        "in the last days of the war",
        "in the past 999999999 years",
        "in 1500 words or less",
        "in the past, what did we do",
        "what is 2023 minus 5",
        "march on the capital",
        "999999999 days ago",
        "99999999999999999999 days ago",
        "2023-13-45",
        "9999-12-31",
        "ünïcödé 日本語 — ¿qué pasó?",
    ];
    for question in questions {
        let got = find_time_expression(question, anchor());
        assert_eq!(got, None, "{question:?}");
    }
}

#[test]
fn earliest_expression_wins() {
    check(&[
        ("yesterday or last week?", "yesterday", "2023-06-14", "2023-06-15"),
        ("last week or yesterday?", "last week", "2023-06-05", "2023-06-12"),
    ]);
    let found = find_time_expression("after the move in May 2023", anchor()).unwrap();
    assert!(matches!(found.expression, TimeExpression::RelativeToEvent { .. }));
}

#[test]
fn contains_is_half_open() {
    let may = range("2023-05-01", "2023-06-01");
    assert!(may.contains(at("2023-05-01")));
    assert!(may.contains(at("2023-05-31T23:59:59Z")));
    assert!(!may.contains(at("2023-06-01")));
    assert!(!may.contains(at("2023-04-30T23:59:59Z")));
    assert!(range("", "2023-06-01").contains(at("1970-01-01")));
    assert!(range("2023-06-01", "").contains(at("2099-01-01")));
}

#[test]
fn describe_prints_dates_or_instants() {
    assert_eq!(range("2023-05-01", "2023-06-01").describe(), "2023-05-01..2023-06-01");
    assert_eq!(range("", "2023-05-01").describe(), "..2023-05-01");
    assert_eq!(range("2023-06-01", "").describe(), "2023-06-01..");
    assert_eq!(
        range("2023-06-12T12:00:00Z", "2023-06-15T12:00:00Z").describe(),
        "2023-06-12T12:00:00Z..2023-06-15T12:00:00Z"
    );
}

#[test]
fn range_around_an_event() {
    let moved = at("2023-03-01");
    assert_eq!(Relation::Before.range_around(moved), range("", "2023-03-01"));
    assert_eq!(Relation::After.range_around(moved), range("2023-03-01", ""));
}

#[test]
fn serializes_with_a_kind_tag() {
    let found = find_time_expression("in May 2023", anchor()).unwrap();
    let json = serde_json::to_value(&found).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "expression": {
                "kind": "range",
                "range": { "start": "2023-05-01T00:00:00Z", "end": "2023-06-01T00:00:00Z" }
            },
            "phrase": "in May 2023"
        })
    );
    let event = find_time_expression("before the move", anchor()).unwrap();
    assert_eq!(
        serde_json::to_value(&event.expression).unwrap(),
        serde_json::json!({ "kind": "relative_to_event", "relation": "before", "event": "the move" })
    );
}

fn assert_well_formed(found: &Option<FoundTime>) {
    if let Some(FoundTime { expression: TimeExpression::Range { range }, .. }) = found {
        assert!(range.is_well_formed(), "{range:?}");
        assert!(range.start.is_some() || range.end.is_some(), "{range:?}");
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn never_panics_on_any_text(question in any::<String>(), anchor in timestamp()) {
        assert_well_formed(&find_time_expression(&question, anchor));
    }

    #[test]
    fn never_panics_on_time_like_text(
        question in r"(?i)((in|on|before|after|since|until|between|and|from|to|the|of|last|this|next|early|mid|late|a|few|couple|ago|days?|weeks?|months?|years?|may|june|dec|summer|winter|today|yesterday|[0-9]{1,12}|-|,|\?) ?){0,10}",
        anchor in timestamp(),
    ) {
        assert_well_formed(&find_time_expression(&question, anchor));
    }

    #[test]
    fn anchor_relative_ranges_never_start_after_the_anchor(
        phrase in prop_oneof![
            Just("last week".to_string()),
            Just("last month".to_string()),
            Just("last weekend".to_string()),
            Just("this week".to_string()),
            Just("yesterday".to_string()),
            Just("a few days ago".to_string()),
            Just("in the last few weeks".to_string()),
            (0u32..5000, prop_oneof![Just("days"), Just("weeks"), Just("months"), Just("years")])
                .prop_map(|(n, unit)| format!("{n} {unit} ago")),
        ],
        anchor in timestamp(),
    ) {
        let found = find_time_expression(&phrase, anchor);
        let Some(FoundTime { expression: TimeExpression::Range { range }, .. }) = found else {
            panic!("{phrase:?} should read as a range");
        };
        prop_assert!(range.start.is_some_and(|start| start <= anchor), "{phrase:?}: {range:?}");
        prop_assert!(range.is_well_formed());
    }
}
