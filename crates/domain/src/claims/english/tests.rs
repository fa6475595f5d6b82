//! Table tests of the English reader: each row a text and the claims it must give.

use super::super::{Hold, ME, Polarity, read};

fn shown(text: &str) -> (Vec<String>, Vec<String>) {
    let reading = read(text);
    let show = |c: &crate::claims::Claim| {
        let ended = if c.polarity == Polarity::Ended { " ended" } else { "" };
        format!("{}|{}|{}{ended}", c.subject.key, c.attribute, c.value.clone().unwrap_or_default())
    };
    let claims = reading.claims.iter().map(show).collect();
    let held = reading.held.iter().map(|(c, h)| format!("{} ({h:?})", show(c))).collect();
    (claims, held)
}

fn check(rows: &[(&str, &[&str])]) {
    let mut failures = Vec::new();
    for (text, expected) in rows {
        let (mut got, held) = shown(text);
        got.sort();
        let mut want: Vec<String> = expected.iter().map(|e| e.replace("@me", ME)).collect();
        want.sort();
        if got != want {
            failures.push(format!("{text:?}\n   want {want:?}\n    got {got:?}\n   held {held:?}"));
        }
    }
    assert!(failures.is_empty(), "{} rows failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn statements_of_where_people_live_and_work() {
    check(&[
        ("Maya lives in Porto with her two cats.", &["maya|residence|Porto", "maya|~amount|two cats"]),
        ("Maya just moved to Amsterdam for her new job.", &["maya|residence|Amsterdam"]),
        ("Elif works at the Ankara branch.", &["elif|workplace|Ankara branch"]),
        ("Elif got transferred to the Izmir branch in June.", &["elif|workplace|Izmir branch"]),
        ("Tom works as a backend engineer at Stripe.", &["tom|role|backend engineer", "tom|employer|Stripe"]),
        (
            "Tom left Stripe and now works at Anthropic on the infrastructure team.",
            &["tom|*|Stripe ended", "tom|employer|Anthropic", "tom|team|infrastructure team"],
        ),
        ("I moved to Denver last weekend!", &["@me|residence|Denver"]),
        ("The user lives in Porto.", &["@me|residence|Porto"]),
        ("User's manager is Rui.", &["@me|has:manager|Rui"]),
        ("Rui is my manager now.", &["@me|has:manager|Rui"]),
        ("After the reorg Omar reports to Daniel Wu.", &["omar|has:manager|Daniel Wu"]),
        ("Omar's sister moved to Lyon.", &["omar's sister|residence|Lyon"]),
        ("moved to Denver last weekend", &["@me|residence|Denver"]),
        ("Kofi and Ama both live in Accra.", &["kofi|residence|Accra", "ama|residence|Accra"]),
        (
            "Nora and Felix broke up in August.",
            &[
                "nora|relationship|broke up",
                "felix|relationship|broke up",
                "nora|has:partner|Felix ended",
                "felix|has:partner|Nora ended",
            ],
        ),
    ]);
}

#[test]
fn things_people_have_one_of_and_several_of() {
    check(&[
        ("Bruno uses IntelliJ for Java work.", &["bruno|editor|IntelliJ"]),
        ("Bruno has been on Neovim full time since spring.", &["bruno|editor|Neovim"]),
        ("Jonah plays bass in a jazz trio.", &["jonah|instruments|bass"]),
        ("Jonah moved the trio rehearsals to Wednesdays.", &["trio rehearsals|when|Wednesdays"]),
        ("Kofi speaks Twi and English.", &["kofi|languages|Twi", "kofi|languages|English"]),
        ("Kofi is learning Portuguese now.", &["kofi|learning|Portuguese"]),
        ("Maya is allergic to tree nuts.", &["maya|allergies|tree nuts"]),
        ("Maya switched to almond-free granola.", &[]),
        ("Sam quit smoking last year.", &["sam|habits|smoking ended"]),
        ("Sam finally sold the Golf.", &["sam|car|Golf ended"]),
        ("I drive a blue Subaru.", &["@me|car|blue Subaru"]),
        // A car as people describe one: colour, year, make and model.
        ("The user drives a black 2021 Subaru Outback.", &["@me|car|black 2021 Subaru Outback"]),
        ("User now uses a Zipcar membership for errands.", &[]),
        ("I rent a studio in Oakland.", &["@me|residence|Oakland"]),
        ("i teach year 5 at a primary school", &["@me|grade|year 5"]),
        // An ending that names only the attribute's noun ends whatever value it holds.
        ("User sold their car in July.", &["@me|car| ended"]),
        ("Maya uses a blue inhaler twice a day.", &["maya|medication|blue inhaler"]),
        ("Maya takes metformin for her diabetes.", &["maya|medication|metformin"]),
        // A model number written onto the make.
        ("User drives a silver 2016 Mazda3.", &["@me|car|silver 2016 Mazda3"]),
        ("he got a new job driving a truck", &[]),
        // "ev" is a car; "every" is not.
        ("Project Atlas has the rollback drill every Friday.", &["project atlas|~when|Friday"]),
        ("Priya is vegetarian.", &["priya|diet|vegetarian"]),
        ("Priya isn't vegetarian anymore.", &["priya|diet|vegetarian ended"]),
        ("Lena no longer works at Spotify.", &["lena|employer|Spotify ended"]),
        // "is no longer", the ending of what "is" says.
        ("Maya is no longer allergic to tree nuts.", &["maya|allergies|tree nuts ended"]),
        ("Priya is no longer vegetarian.", &["priya|diet|vegetarian ended"]),
        ("I'm not pescatarian anymore.", &["@me|diet|pescatarian ended"]),
        // Chat drops the apostrophe of a contraction.
        ("im a pescatarian", &["@me|diet|pescatarian"]),
        ("i dont smoke anymore", &["@me|habits|smokes ended"]),
        ("Send me an IM when you land.", &[]),
    ]);
}

#[test]
fn events_and_things() {
    check(&[
        ("Standup is at 10am.", &["standup|when|10am"]),
        ("Our standup is at 9:30 these days.", &["standup|when|9:30"]),
        ("The Atlas launch moved to June 3.", &["atlas launch|when|June 3"]),
        ("Rent is now $1,450 a month.", &["rent|price|$1,450 a month"]),
        ("The Orion API is on v2.3.", &["orion api|version|v2.3"]),
        ("Priya took over the billing migration.", &["billing migration|lead|Priya"]),
        ("We moved Helix to Postgres.", &["helix|stack|Postgres"]),
    ]);
}

#[test]
fn what_is_held_back_decides_nothing() {
    check(&[
        ("Maya is thinking about moving to Berlin.", &[]),
        ("Is Maya still in Porto?", &[]),
        ("Sam did NOT move, the Boston thing was a rumour.", &[]),
        ("Back in 2019 Lena lived in Oslo.", &[]),
        ("This week standup is at 11 because of the offsite.", &[]),
        ("Tom also works at a bakery on weekends.", &[]),
        ("Maya might switch to Linear.", &[]),
    ]);
    let (_, held) = shown("Back in 2019 Lena lived in Oslo.");
    assert!(held.iter().any(|h| h.contains("Past")), "{held:?}");
    assert!(read("This week standup is at 11 because of the offsite.").held.iter().any(|(_, h)| *h == Hold::Exception));
}

#[test]
fn transcript_lines_speak_for_their_speaker() {
    check(&[
        ("Ana: I live in Lisbon", &["ana|residence|Lisbon"]),
        ("Ben: I moved to Porto", &["ben|residence|Porto"]),
        ("user: just moved to Denver", &["@me|residence|Denver"]),
        ("Assistant: you live in Porto, right?", &[]),
    ]);
}

#[test]
fn a_memory_that_says_more_than_its_claims_is_known() {
    assert!(read("Maya lives in Porto with her two cats.").says_more());
    assert!(!read("Maya lives in Porto.").says_more());
    assert!(!read("Elif got transferred to the Izmir branch in June.").says_more());
}

proptest::proptest! {
    /// Whatever arrives, reading it never panics: any characters, any mix of scripts.
    #[test]
    fn any_text_reads_without_panicking(text in "\\PC{0,120}") {
        let _ = read(&text);
    }

    /// Words of the forms in any order, with punctuation and odd characters between them.
    #[test]
    fn form_words_in_any_order_read_without_panicking(
        words in proptest::collection::vec(proptest::sample::select(vec![
            "I", "my", "the", "user's", "Maya", "moved", "to", "lives", "in", "works", "at", "no", "longer", "anymore",
            "quit", "switched", "from", "İstanbul", "€980", "9:30", "am", "is", "on", "v2.3", "'s", "—", ",", "and",
            "now", "not", "used", "favourite", "manager", "Rui", "搬到", "杭州", "了", "我", "?", "!", "(", ")",
        ]), 0..24)
    ) {
        let _ = read(&words.join(" "));
        let _ = read(&words.concat());
    }
}
