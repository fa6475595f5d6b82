//! The catalogue's attributes as English says them with a verb: each form an attribute, a polarity,
//! a value class and a pattern anchored at the predicate's start ("lives in", "moved to", "works
//! at", "quit").

use std::sync::LazyLock;

use regex::Regex;

use super::classes::{CARS, DIETS, EDITORS, INSTRUMENTS, LANGUAGES, PETS, PHONES, ROLE_TITLES, SPORTS, SYSTEMS, TECH};
use crate::claims::Polarity;

/// Adverbs and auxiliaries a predicate may open with before its verb.
pub(super) const ADVERBS: &str = r"(?:(?:just|recently|finally|now|officially|already|actually|currently|eventually|then|really|definitely|basically|mostly|still|also|fully|newly|happily|permanently|only|even|apparently|somehow|quietly|formally|technically|full[- ]time|has|have|had|'s|'ve|been|is|are|was|were|am|'m|'re|got|gotten|did|does|do)\s+)*";

/// A form: a pattern over a predicate whose group `v` is the value, the attribute it fills,
/// and whether it says the value holds or ended.
pub(super) struct Form {
    pub(super) attribute: &'static str,
    pub(super) polarity: Polarity,
    pub(super) pattern: Regex,
    /// What the value must look like, if anything.
    pub(super) class: Class,
    /// Whether the form reads the past tense of a state (it held once, not now).
    pub(super) past: bool,
}

/// What a captured value must look like for the form to count.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Any,
    /// Not a time, a day or a date (a place, an organisation).
    NotATime,
    /// A time, a day or a date.
    Time,
    /// An amount of money.
    Money,
    /// A version number.
    Version,
    /// A person's name (capitalised).
    Name,
    /// A phone number.
    PhoneNumber,
    /// An email address.
    Email,
    /// A group's name: ending in a group noun once cut where the value ends ("design team",
    /// "M&A team"; not "Berlin *with her dance group*").
    GroupName,
    /// A place to live: not a time, and not a group within an organisation.
    Place,
}

pub(super) fn compile(attribute: &'static str, polarity: Polarity, class: Class, past: bool, pattern: &str) -> Form {
    let pattern = pattern
        .replace("{A}", ADVERBS)
        .replace("{THE}", r"(?:(?:the|a|an|his|her|their|my|our|your|its|this|that|some|new|old|brand new|used|second-hand|secondhand)\s+)*")
        .replace("{V}", r"(?P<v>.+)")
        .replace("{GROUP}", &format!("(?:{})", crate::lexicon::english::TEAM_NOUNS.join("|")))
        .replace("{LANG}", LANGUAGES)
        .replace("{INSTRUMENT}", INSTRUMENTS)
        .replace("{SPORT}", SPORTS)
        .replace("{PET}", PETS)
        .replace("{EDITOR}", EDITORS)
        .replace("{OS}", SYSTEMS)
        .replace("{PHONE}", PHONES)
        .replace("{CAR}", CARS)
        .replace("{DIET}", DIETS)
        .replace("{TECH}", TECH)
        .replace("{ROLE}", ROLE_TITLES);
    Form {
        attribute,
        polarity,
        pattern: Regex::new(&format!("(?i)^{pattern}"))
            .unwrap_or_else(|e| panic!("form for {attribute} compiles: {e}")),
        class,
        past,
    }
}

use Class::{Any, GroupName, Money, Name, NotATime, Place, Time, Version};
use Polarity::{Ended, Holds};

/// The verb forms of the catalogue's attributes, most specific first: where two forms read
/// the same words, the first wins.
pub(super) static VERB_FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    let f = |a, p, c, pat: &str| compile(a, p, c, false, pat);
    let past = |a, p, c, pat: &str| compile(a, p, c, true, pat);
    vec![
        // Endings first: "no longer works at", "quit smoking", "sold the Golf".
        f(
            "habits",
            Ended,
            Any,
            r"{A}(?:quit|stopped|gave up|given up|kicked|ditched|dropped) (?P<v>smoking|vaping|drinking|alcohol|booze|caffeine|coffee|sugar|soda|energy drinks|cigarettes|weed|gambling|nicotine|chewing gum|gum|nail biting|biting (?:his|her|my|their) nails|junk food|meat|red meat|dairy|gluten|carbs)\b",
        ),
        f(
            "habits",
            Ended,
            Any,
            r"{A}(?:went|is|'s|am|'m|are|'re) (?:now )?(?P<v>sober|teetotal|alcohol[- ]free|caffeine[- ]free|smoke[- ]free|nicotine[- ]free)\b",
        ),
        f(
            "employer",
            Ended,
            Any,
            r"{A}(?:quit|left|lost|resigned from|walked away from) (?:his|her|their|my|the|a|this|that) (?:old )?(?:job|position|role)\b",
        ),
        f("employer", Ended, Any, r"{A}(?:was|got|been) (?:laid off|let go|fired|made redundant)\b"),
        f("employer", Ended, Any, r"{A}(?:retired|resigned)\s*$"),
        f("has:partner", Ended, Name, r"{A}(?:broke up|split up|split|separated) (?:with|from) {V}"),
        f("has:partner", Ended, Name, r"{A}(?:divorced|dumped) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\s*$"),
        f("relationship", Holds, Any, r"{A}(?P<v>broke up|split up|got divorced|got separated)\b"),
        f(
            "car",
            Ended,
            Any,
            r"{A}(?:sold|got rid of|gave away|scrapped|totaled|totalled|wrote off|returned) {THE}(?P<v>car|ride|(?:\w+ )?{CAR}(?: \w+)?)\b",
        ),
        f(
            "pets",
            Ended,
            Any,
            r"{A}(?:gave away|rehomed|re-homed|lost|had to put down|put down) {THE}(?P<v>(?:\w+ )?{PET}(?: [A-Z]\w+)?)\b",
        ),
        f(
            "instruments",
            Ended,
            Any,
            r"{A}(?:stopped playing|quit playing|gave up playing|gave up|quit|sold|no longer plays|doesn't play|does not play) {THE}(?P<v>{INSTRUMENT})\b",
        ),
        f(
            "activities",
            Ended,
            Any,
            r"{A}(?:stopped|quit|gave up|dropped out of|no longer does|doesn't do) (?:playing |doing |going )?(?P<v>{SPORT})\b",
        ),
        f(
            "learning",
            Ended,
            Any,
            r"{A}(?:stopped|quit|gave up(?: on)?|dropped) (?:learning |studying |taking )?(?P<v>{LANG})(?: lessons| classes)?\b",
        ),
        f(
            "medication",
            Ended,
            Any,
            r"{A}(?:stopped taking|quit taking|came off|went off|got off|is off|'s off|stopped|weaned off|tapered off) (?:of )?(?P<v>[\w\- ]{3,40}?)(?: now|$|\s+(?:after|because|since|last|this|in|a|two|three|for)\b)",
        ),
        f(
            "allergies",
            Ended,
            Any,
            r"{A}(?:outgrew|outgrown|grew out of) (?:his|her|their|my|the)? ?(?P<v>[\w\- ]+?) allerg(?:y|ies)",
        ),
        f(
            "subscriptions",
            Ended,
            Any,
            r"{A}(?:cancell?ed|unsubscribed from|ended|dropped|let) {THE}(?P<v>[A-Z][\w+\-]*(?: [A-Z+][\w+\-]*)?)(?: subscription| membership| account| plan)?(?: lapse| expire)?\b",
        ),
        f(
            "tools",
            Ended,
            Any,
            r"{A}(?:stopped using|no longer uses|doesn't use|quit using|uninstalled|deleted|ditched|dropped|abandoned) {THE}(?P<v>[\w+.#\- ]{2,30}?)(?: for| because| after| since|$)",
        ),
        f(
            "*",
            Ended,
            Any,
            r"{A}(?:switched|moved|migrated|went|changed|converted) (?:away )?(?:over )?from {THE}(?P<v>[\w+.#\- ]{2,30}?) (?:to|over to|onto) ",
        ),
        f("*", Ended, Any, r"{A}(?:replaced|swapped) {THE}(?P<v>[\w+.#\- ]{2,30}?) (?:with|for) "),
        f("*", Ended, Any, r"{A}(?:traded|sold) (?:in )?{THE}(?P<v>[\w+.#\- ]{2,30}?) (?:in )?for "),
        f(
            "*",
            Ended,
            NotATime,
            r"{A}(?:left|quit|moved out of|moved away from|resigned from|retired from|was laid off from|got laid off from|got fired from|dropped out of|graduated from|withdrew from|withdrawn from|pulled out of|dropped out of|backed out of|sold|cancell?ed|ditched|dumped|abandoned|closed|returned|gave away) {THE}(?P<v>(?-i:\p{Lu}[\w'&.\-]*(?: (?:\p{Lu}[\w'&.\-]*|of|de|&))*))",
        ),
        // Where someone lives.
        f("address", Holds, Any, r"{A}(?:lives|live|living|is living) at (?P<v>\d.+)"),
        past("residence", Holds, Place, r"{A}(?:lived) (?:in|at) {V}"),
        f(
            "residence",
            Holds,
            Place,
            r"{A}(?:lives|live|living|resides|reside|is living|are living|settled(?: down)?|is settled|is based|are based|based|is now based|'s based) (?:in|at|out of) {V}",
        ),
        // A team before a home: "moved to the design team" is a team, not a place to live.
        f(
            "team",
            Holds,
            GroupName,
            r"{A}(?:got |been |was |were )?(?:transferred|moved|switched|reassigned|joined|is on|'s on|is in|'s in|on|in|part of|is part of|works on|working on) (?:to |over to )?(?:the |a )?(?P<v>[\w&\- ]+? {GROUP})\b",
        ),
        f(
            "residence",
            Holds,
            Place,
            r"{A}(?:moved|relocated|moves|relocates|has moved|finally moved|just moved|moved back|moved over|emigrated|immigrated) (?:back |over |out |up |down )?(?:to|into|in) {V}",
        ),
        f("residence", Holds, Place, r"{A}calls (?P<v>.+?) home\b"),
        f(
            "residence",
            Holds,
            Place,
            r"{A}(?:bought|rented|renting|rents|rent|owns|own|got|found) (?:a |an |the )?(?:new )?(?:little |tiny |small )?(?:house|flat|apartment|place|condo|home|studio) (?:in|near) {V}",
        ),
        // Work.
        f(
            "workplace",
            Holds,
            Any,
            r"{A}(?:works?|working|worked|is working|based|is based|sits|sitting) (?:at|from|out of|in) (?:the |our |their )?(?P<v>[\w'&.\- ]+? (?:office|branch|site|campus|store|location|hq|headquarters|clinic|hospital|lab|plant|depot|warehouse|studio|factory|school|ward|station))\b",
        ),
        f(
            "workplace",
            Holds,
            Any,
            r"{A}(?:got |been |was |were )?(?:transferred|moved|relocated|reassigned|posted|sent) (?:over )?to (?:the |our |their )?(?P<v>[\w'&.\- ]+? (?:office|branch|site|campus|store|location|hq|headquarters|clinic|hospital|lab|plant|depot|warehouse|studio|factory|ward|station))\b",
        ),
        f("role", Holds, Any, r"{A}(?:got |been |was )?promoted to {V}"),
        f(
            "role",
            Holds,
            Any,
            r"{A}(?:works?|working|is working|is employed|started|starts|began|now works|took a job|got a job|was hired|got hired|signed on|joined) as (?:a |an |the |our |their )?{V}",
        ),
        past("role", Holds, Any, r"{A}(?:worked|was employed) as (?:a |an |the )?{V}"),
        f(
            "role",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|became|become|becomes|turned|is now|'s now) (?:now )?(?:a |an |the |our |their |lead |head )(?P<v>(?:[\w\-]+ ){0,3}{ROLE})\b",
        ),
        f(
            "employer",
            Holds,
            NotATime,
            r"{A}(?:works?|working|is working|'s working|been working|is employed|employed|interns?|interning) (?:at|for|with) {V}",
        ),
        past("employer", Holds, NotATime, r"{A}(?:worked|was employed|interned) (?:at|for|with) {V}"),
        f(
            "employer",
            Holds,
            NotATime,
            r"{A}(?:joined|started at|started with|started working at|started working for|started a (?:new )?job at|started a new role at|got (?:a |the )?(?:new )?(?:job|position|role|offer|gig) (?:at|with)|took (?:a |the )?(?:new )?(?:job|position|role|offer|gig) (?:at|with)|accepted (?:a |an |the )?(?:job|offer|position|role) (?:at|from|with)|was hired (?:at|by)|got hired (?:at|by)|signed with|landed (?:a |the )?(?:job|role|position) at|is now at|'s now at|went to work (?:at|for)) (?P<v>[A-Z][\w'&.\-]*(?: (?:[A-Z][\w'&.\-]*|of|&))*|a [\w\- ]+?(?:startup|company|firm|agency|bank|hospital|school|bakery|restaurant|studio|lab|clinic|nonprofit))",
        ),
        f(
            "school",
            Holds,
            Any,
            r"{A}(?:studies|is studying|studying|is a student|'s a student|is enrolled|enrolled|attends|is attending|started (?:kindergarten|school|college|university|uni|preschool|daycare|nursery|middle school|high school) at|goes to (?:school|college|uni|university|kindergarten|daycare|preschool) at|transferred to|got into|was accepted (?:at|to|into)|got accepted (?:at|to|into)) (?:at |in )?{V}",
        ),
        f(
            "school",
            Holds,
            Any,
            r"{A}goes to (?P<v>[\w'\- ]+? (?:school|college|university|academy|elementary|kindergarten|preschool|daycare|nursery|high|montessori))\b",
        ),
        f(
            "grade",
            Holds,
            Any,
            r"{A}(?:is|'s|are|am|started|starts|moved up to|is in|'s in|in|is now in|'s now in|teaches|teach|is teaching|'m teaching) (?:now )?(?:in )?(?P<v>(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) grade|grade \d{1,2}|year \d{1,2}|kindergarten|preschool|pre-k|reception)\b",
        ),
        f("grade", Holds, Any, r"{A}(?:is|'s|are|am) (?:now )?a (?P<v>freshman|sophomore|junior|senior)\b"),
        f("school", Ended, Any, r"{A}(?P<v>graduated)\b"),
        // People in someone's life.
        f("has:manager", Holds, Name, r"{A}(?:reports|reporting|report|now reports) (?:directly )?to {V}"),
        f(
            "has:partner",
            Holds,
            Name,
            r"{A}(?:is |'s |are |'re |am |'m )?(?:now )?(?:dating|seeing|engaged to|married to|in a relationship with|going out with) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        ),
        f(
            "has:partner",
            Holds,
            Name,
            r"{A}(?:married|got married to|got engaged to|proposed to|moved in with) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        ),
        f(
            "relationship",
            Holds,
            Any,
            r"{A}(?:is|'s|are|'re|am|'m|got|just got|recently got|became) (?:now )?(?P<v>single|married|engaged|divorced|separated|widowed|in a relationship|hitched)\b",
        ),
        // Things someone uses.
        f(
            "phone",
            Holds,
            Any,
            r"{A}(?:uses|use|using|has|have|got|bought|switched to|upgraded to|moved to|went to|is using|'s using|carries|picked up|is on|'s on|on|rocking|rocks) {THE}(?P<v>{PHONE})",
        ),
        f(
            "car",
            Holds,
            Any,
            r"{A}(?:drives|drive|driving|is driving|got|bought|leased|leases|owns|picked up|switched to|upgraded to|has|have) {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)",
        ),
        past("car", Holds, Any, r"{A}drove {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)"),
        f("car", Holds, Any, r"{A}traded .{1,40}? (?:in )?for {THE}(?P<v>(?:[\w\-]+ ){0,3}{CAR}\d*\b(?: [\w\-]+)?)"),
        f(
            "editor",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is using|'s using|codes in|writes code in|works in|switched to|moved to|moved over to|went back to|switched back to|is back on|back on|is on|'s on|been on|on|lives in|swears by|prefers|picked up|tried) (?P<v>{EDITOR})\b",
        ),
        f(
            "os",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is using|'s using|runs|switched to|moved to|went back to|is on|'s on|been on|on|daily drives|daily-drives) (?P<v>{OS})\b",
        ),
        f(
            "commute",
            Holds,
            Any,
            r"{A}(?P<v>bikes|cycles|walks|drives|runs|skates|scooters|carpools|takes the (?:train|bus|subway|tube|metro|tram|ferry|light rail)|rides (?:the|a|his|her|my) \w+|commutes by \w+(?: \w+)?) to (?:work|the office|school)\b",
        ),
        f("commute", Holds, Any, r"{A}commutes by (?P<v>\w+(?: \w+)?)"),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|'re|went|gone|has gone|became|become|turned|eats|eating|stays|keeps) (?:fully |strictly |mostly |now |a |an |100% )*(?P<v>{DIET})\b",
        ),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:follows|is on|'s on|started|does|is doing|tries|sticks to) (?:a |an |the )?(?P<v>[\w\- ]+?) diet\b",
        ),
        f(
            "diet",
            Holds,
            Any,
            r"{A}(?:started eating|eats|is eating|eating) (?P<v>meat|fish|chicken|pork|beef|everything|anything) (?:again|now)\b",
        ),
        f(
            "age",
            Holds,
            Any,
            r"{A}(?:is|'s|turned|just turned|will be|is now|'s now) (?P<v>\d{1,3})(?: years old| yrs old| yo)?\s*(?:now|today|yesterday|last \w+|this \w+)?\s*$",
        ),
        f(
            "activities",
            Holds,
            Any,
            r"{A}(?:is |'s |am |'m |are |'re )?(?:training for|signed up for|registered for|entered|is doing|doing) {THE}(?P<v>[A-Z][\w'\-]*(?: [\w'\-]+){0,4}? (?:marathon|10k|5k|triathlon|race|ride|challenge|trek|tournament|open|cup))\b",
        ),
        f(
            "children_count",
            Holds,
            Any,
            r"{A}(?:has|have|had|now has|now have) (?P<v>(?:one|two|three|four|five|six|\d+) (?:child|children|kids?|sons?|daughters?))\b",
        ),
        // Many values.
        f(
            "languages",
            Holds,
            Any,
            r"{A}(?:speaks|speak|is fluent in|'s fluent in|fluent in|is native in|is bilingual in|knows|can speak|grew up speaking|speaks fluent|is a native (?:\w+ )?speaker of) (?P<v>{LANG}(?:(?:,| and| &| as well as|, and) {LANG})*)",
        ),
        past("languages", Holds, Any, r"{A}spoke (?P<v>{LANG}(?:(?:,| and| &) {LANG})*)"),
        f(
            "learning",
            Holds,
            Any,
            r"{A}(?:is |'s |am |'m |are |'re )?(?:now )?(?:learning|studying|taking (?:a |an )?(?:class|classes|lessons|course) in|started learning|began learning|picked up|started|takes) (?P<v>{LANG})(?: lessons| classes)?\b",
        ),
        f(
            "instruments",
            Holds,
            Any,
            r"{A}(?:plays|play|playing|is playing|'s playing|started playing|took up|picked up|is learning|learning|started learning|has been playing|practices|practises) (?:the )?(?P<v>{INSTRUMENT})\b",
        ),
        past("instruments", Holds, Any, r"{A}played (?:the )?(?P<v>{INSTRUMENT})\b"),
        f(
            "activities",
            Holds,
            Any,
            r"{A}(?:plays|play|playing|is playing|started playing|took up|picked up|does|do|is into|'s into|got into|into|loves|enjoys|goes|started|practices|practises|trains|competes in) (?P<v>{SPORT})\b",
        ),
        f(
            "pets",
            Holds,
            Any,
            r"{A}(?:has|have|got|adopted|owns|rescued|took in|brought home|fosters|welcomed) (?:a |an |two |three |four |\d+ |a new |another |a little |a rescue |an adorable )?(?P<v>(?:[\w\-]+ )?{PET}s?(?: (?:named|called) [A-Z]\w+)?)",
        ),
        f(
            "children",
            Holds,
            Any,
            r"{A}(?:has|have|had|welcomed) (?:a |an |one |two |three |four |\d+ |a new |another |baby )?(?:new |baby |little |newborn )?(?P<v>sons?|daughters?|kids|children|child|baby(?: boy| girl)?|twins|boy|girl)\b",
        ),
        f(
            "allergies",
            Holds,
            Any,
            r"{A}(?:is|'s|am|'m|are|'re|turned out to be|found out (?:she|he|they) (?:is|are)) (?:severely |mildly |very |deathly |super |really |highly |slightly |quite |now |also )*allergic to {V}",
        ),
        f(
            "allergies",
            Holds,
            Any,
            r"{A}(?:has|have|developed|got) (?:a |an )?(?:severe |mild |bad |serious )?(?P<v>[\w\- ]+?) allerg(?:y|ies)\b",
        ),
        f(
            "conditions",
            Holds,
            Any,
            r"{A}(?:was |got |has been |is |been )?(?:diagnosed with|suffers from|is living with|lives with|has|have) (?P<v>asthma|diabetes|type [12] diabetes|adhd|autism|migraines?|eczema|celiac|coeliac(?: disease)?|ibs|crohn's|arthritis|high blood pressure|hypertension|anxiety|depression|epilepsy|lupus|ms|pcos|endometriosis|insomnia|sleep apnea|sleep apnoea|long covid|tinnitus|gout|psoriasis|a heart condition|hypothyroidism|hyperthyroidism|anemia|anaemia|glaucoma|dyslexia|a bad back|back pain|a thyroid condition)\b",
        ),
        f("conditions", Holds, Any, r"{A}(?:was |got |has been |been )?diagnosed with {V}"),
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:takes|take|taking|is taking|'s taking|is on|'s on|started taking|started on|was put on|got put on|was prescribed|got prescribed|is prescribed) (?P<v>[\w\- ]{3,30}?) (?:for|daily|every|twice|once|each|at night|in the morning|\d)",
        ),
        // "Uses a … for …" is mostly not medicine ("uses a Zipcar membership for errands"):
        // only what is used as medicine.
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:uses|use|is using|'s using|started using) (?:an? |the |her |his |their |my )?(?P<v>(?:[\w\-]+ )?(?:inhaler|nasal spray|eye drops|cpap(?: machine)?|insulin pump|nicotine patch(?:es)?))\b",
        ),
        f(
            "medication",
            Holds,
            Any,
            r"{A}(?:takes|take|taking|is taking|'s taking|is on|'s on|started taking|started on|was put on|got put on|was prescribed|got prescribed) (?P<v>metformin|insulin|ibuprofen|aspirin|lexapro|zoloft|prozac|sertraline|adderall|ritalin|levothyroxine|synthroid|prednisone|melatonin|lisinopril|warfarin|statins?|atorvastatin|antidepressants|antibiotics|birth control|the pill|an inhaler|vitamin [a-z]\d?|iron supplements?|omeprazole|amlodipine|metoprolol|gabapentin|wellbutrin|bupropion|lithium|ozempic|wegovy)\b",
        ),
        f("habits", Holds, Any, r"{A}(?P<v>smokes|vapes|is a smoker|'s a smoker|drinks coffee|drinks alcohol)\b"),
        f(
            "subscriptions",
            Holds,
            Any,
            r"{A}(?:subscribes to|is subscribed to|subscribed to|pays for|signed up for|has a subscription to|got a subscription to) (?P<v>[A-Z][\w+\-]*(?: [A-Z+][\w+\-]*)?)",
        ),
        // Things and events, about an object the subject acts on ("moved the trio rehearsals
        // to Wednesdays") come from `object_forms`; here, their own predicates.
        f(
            "when",
            Holds,
            Time,
            r"{A}(?:been |got |was |were |is |are )?(?:moved|pushed(?: back| out)?|shifted|changed|rescheduled|bumped|switched|slipped|postponed|delayed|brought forward|moved up|pulled in|pulled forward|reset) (?:back )?(?:to|until|till|for) {V}",
        ),
        f(
            "when",
            Holds,
            Time,
            r"{A}(?:is|'s|are|happens|runs|takes place|starts|begins|meets|will be|kicks off|falls|lands|ships|launches|goes live|is due|due|ends|closes|opens|is scheduled|is set|is planned|'s scheduled|is scheduled to \w+|is due to \w+|is set to \w+|now opens|now starts|opens|starts) (?:now |always |usually |normally |still |officially |set |scheduled )?(?:at|on|for|from|every|by|in)? ?{V}",
        ),
        f(
            "cadence",
            Holds,
            Any,
            r"{A}(?:is|'s|are|happens|runs|meets|ship|ships|go out|goes out|are released|is released|moved to|moves to|moving to|switched to|changed to|went|goes|going|now happens|happen) (?:now )?(?:a |an )?(?P<v>daily|weekly|biweekly|bi-weekly|fortnightly|monthly|quarterly|yearly|annually|every (?:other |two |three |four |\d+ )?(?:day|week|month|quarter|year|weekday)s?|twice a (?:week|month|year)|once a (?:week|month|year)|three times a week)\b",
        ),
        f(
            "lead",
            Holds,
            Name,
            r"{A}(?:is |'s |are |was |has been |been |got )?(?:now )?(?:led|owned|run|managed|handled|driven|coordinated|headed|chaired|hosted|taken over|picked up) by {V}",
        ),
        f(
            "lead",
            Holds,
            Name,
            r"{A}(?:been |was |got |is |has been )?(?:handed|passed|given|transferred|reassigned|assigned|moved) (?:over |off )?to {V}",
        ),
        f(
            "version",
            Holds,
            Version,
            r"{A}(?:is |'s |are |'re )?(?:now )?(?:on|at|running|runs|uses|pinned to|locked to|bumped to|upgraded to|updated to|moved to|released|shipped|rolled out|cut|tagged) (?:version |release )?{V}",
        ),
        f(
            "price",
            Holds,
            Money,
            r"{A}(?:is|'s|are|costs|cost|runs|goes for|sells for|is priced at|'s priced at|comes to|now costs|went up to|went down to|rose to|fell to|dropped to|increased to|decreased to|jumped to|climbed to|was raised to|got raised to|was cut to|is going up to|will be|charges|bills|is billed at) (?:now |only |just |about |around )?(?:at |to )?{V}",
        ),
        f(
            "tier",
            Holds,
            Any,
            r"{A}(?:is|'s|are|'re|am|'m|got|been|was) (?:now )?(?:on|moved to|upgraded to|downgraded to|switched to) (?:the |a )?(?P<v>[\w+\- ]+?) (?:plan|tier|subscription|package|license|licence|membership)\b",
        ),
        f(
            "tier",
            Holds,
            Any,
            r"{A}(?:upgraded|downgraded|switched|moved|changed|went) (?:to |from [\w\-+ ]+? to )(?:the )?(?P<v>[\w+\- ]+?) (?:plan|tier|subscription|package|license|licence)\b",
        ),
        f(
            "status",
            Holds,
            Any,
            r"{A}(?:is |'s |are |was |has been |got |been |just |now )*(?:now |officially )?(?P<v>on hold|paused|cancell?ed|shelved|scrapped|killed|live|launched|shipped|done|complete|completed|finished|in beta|in review|blocked|deprecated|archived|sunset|sunsetted|frozen|approved|rejected|signed|closed|in progress|underway|green-?lit|out|delayed|postponed)\b\s*(?:now)?\s*$",
        ),
        f(
            "stack",
            Holds,
            Any,
            r"{A}(?:uses|use|using|is built (?:on|with|in)|built (?:on|with|in)|runs on|is written in|written in|is hosted on|hosted on|is deployed (?:on|to)|deployed (?:on|to)|lives on|sits on|is on|'s on|moved to|migrated to|switched to|ported to|rewritten in|rewrote (?:it )?in|moved over to|is now on|now on|now runs on|runs) (?P<v>{TECH})\b",
        ),
        f(
            "stack",
            Holds,
            Any,
            r"{A}(?:stores|keeps|puts|saves|logs|writes|are|is) (?:its |their |the |our )?[\w\- ]{0,20}?(?:in|on|to) (?P<v>{TECH})\b",
        ),
        f(
            "for",
            Holds,
            Any,
            r"{A}(?:prefers|uses|likes|relies on|swears by|switched to|has switched to|moved to|went with|picked|chose|codes in|writes) (?P<v>[A-Z][\w+#.\-]*(?: [A-Z0-9][\w+#.\-]*)?) for (?P<p>(?:all |most |everything |any )?(?:her |his |their |my |the )?[\w\- ]{3,30}?)\s*(?:;|,|\.|$|now|these days)",
        ),
        f(
            "location",
            Holds,
            NotATime,
            r"{A}(?:is|'s|are) (?:now )?(?:located )?(?:at|on) (?P<v>\d+\s.+|[A-Z][\w'\-]*(?: [A-Z][\w'\-]*)* (?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|square|plaza|place)\b.*)",
        ),
    ]
});

/// Forms where the clause's subject acts on an object that the claim is about: "moved *the
/// trio rehearsals* to Wednesdays", "handed *billing* over to Priya", "raised *the rent* to
/// $1,500", "we moved *Helix* to Postgres".
pub(super) static OBJECT_FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    let f = |a, c, pat: &str| compile(a, Holds, c, false, pat);
    vec![
        f(
            "when",
            Time,
            r"{A}(?:moved|pushed(?: back| out)?|shifted|changed|rescheduled|bumped|switched|postponed|delayed|brought forward|moved up|pulled in) (?P<o>(?:the |our |his |her |their |my |this week's |next week's )?[\w'\- ]{2,40}?) (?:back )?(?:to|until|till) {V}",
        ),
        f(
            "lead",
            Name,
            r"{A}(?:handed|passed|gave|transferred|reassigned|assigned) (?:over |off )?(?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,40}?) (?:over |off )?to {V}",
        ),
        f(
            "price",
            Money,
            r"{A}(?:pays|pay|paying|paid|spends|spend|spending|is paying|'s paying) (?P<v>(?:[$£€¥]\s?[\d,.]+|[\d,.]+\s?(?:dollars|euros|pounds|bucks))(?:\s?(?:a|per|/)\s?(?:month|mo|week|wk|year|yr))?) (?:a month |per month |monthly |a year |each month )?(?:for|on|to) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,30}?)\s*$",
        ),
        f(
            "price",
            Money,
            r"{A}(?:raised|increased|cut|lowered|reduced|bumped|dropped|hiked|changed) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,30}?) (?:up |down )?to {V}",
        ),
        f(
            "stack",
            Any,
            r"{A}(?:moved|migrated|switched|ported|rewrote|rebuilt|rewritten) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) (?:over )?(?:to|onto|in|into) (?P<v>{TECH})\b",
        ),
        f(
            "~",
            Any,
            r"{A}(?:raised|increased|cut|lowered|reduced|bumped|dropped|hiked|changed|upped|doubled|halved|capped|set|extended|shortened) (?P<o>(?:the |our |his |her |their |my )?[\w'\- ]{2,40}?) (?:up |down )?to {V}",
        ),
        f(
            "*",
            Any,
            r"{A}(?:finished |completed |done )?(?:migrating|moving|migrated|moved|switched|switching) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) (?:off|away from|off of|from) (?P<v>{TECH})\b",
        ),
        f(
            "version",
            Version,
            r"{A}(?:upgraded|bumped|updated|moved|pinned) (?P<o>(?:the |our |their )?[\w'\- ]{2,30}?) to (?:version |v)?{V}",
        ),
    ]
});

/// Forms where the predicate names who has the subject: "Rui is *my* manager", "Priya is the
/// new lead on Atlas", "Priya took over billing", "Pho is my favourite food".
pub(super) static INVERSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:is|'s|has become|became) (?:now )?(?P<owner>my|his|her|their|the user's|our|[A-Z][\w'-]*'s) (?:new |current |all-time |absolute )?(?P<role>[\w\- ]+?)(?:\s+(?:now|these days|since \w+|as of \w+))?\s*$")
        .expect("inverse pattern compiles")
});

pub(super) static TAKES_OVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:just |now |officially |has |have |'s )*(?:took over|taken over|takes over|leads|owns|runs|is leading|is running|is in charge of|is responsible for|now owns|now leads|is (?:now )?the (?:new )?(?:lead|owner|pm|point of contact|dri|tech lead|product owner|manager) (?:of|for|on)) (?P<o>(?:the )?[\w'\- ]{2,40}?)\s*$")
        .expect("takes-over pattern compiles")
});
