//! Replays an update set (`arbor eval updates`' format) through the claims reader and the
//! decision alone, with no store and no retrieval, and prints what would become of each probe:
//! a fast way to see the rules' decisions on a set before running the whole pipeline.
//! `cargo run -p arbor-domain --example simulate -- crates/eval/sets/updates-blind-en-tune.json [-v]`

use arbor_domain::claims::{self, Claim, decide::Current};

#[derive(serde::Deserialize)]
struct Case {
    id: String,
    events: Vec<Event>,
    probes: Vec<Probe>,
}

#[derive(serde::Deserialize)]
struct Event {
    text: String,
}

#[derive(serde::Deserialize)]
struct Probe {
    query: String,
    must_contain: Vec<String>,
    #[serde(default)]
    must_not_contain: Vec<String>,
    #[serde(default)]
    trap: Option<String>,
}

struct Memory {
    text: String,
    claims: Vec<Claim>,
    says_more: bool,
    retired: bool,
    flagged: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for path in args.iter().filter(|a| !a.starts_with('-')) {
        let cases: Vec<Case> = serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("parse");
        for case in cases {
            let mut memories: Vec<Memory> = Vec::new();
            let mut log = Vec::new();
            for event in &case.events {
                let reading = claims::read(&event.text);
                let current: Vec<Current<'_, usize>> = memories
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| !m.retired)
                    .map(|(i, m)| Current { item: i, claims: &m.claims, says_more: m.says_more })
                    .collect();
                let decision = claims::decide(&reading.claims, &current);
                for (i, r) in &decision.retire {
                    log.push(format!("    RETIRE [{}] by {:?} ({})", memories[*i].text, r.rule, r.attribute));
                }
                for (i, d) in &decision.flag {
                    log.push(format!("    FLAG   [{}] {:?} ({})", memories[*i].text, d.reason, d.attribute));
                }
                for (i, _) in &decision.retire {
                    memories[*i].retired = true;
                }
                for (i, _) in &decision.flag {
                    memories[*i].flagged = true;
                }
                let shown: Vec<String> = reading
                    .claims
                    .iter()
                    .map(|c| {
                        format!(
                            "{}|{}|{}{}",
                            c.subject.key,
                            c.attribute,
                            c.value.clone().unwrap_or_default(),
                            if c.polarity == claims::Polarity::Ended { "✗" } else { "" }
                        )
                    })
                    .collect();
                let held: Vec<String> =
                    reading.held.iter().map(|(c, h)| format!("{}|{}({h:?})", c.subject.key, c.attribute)).collect();
                log.push(format!(
                    "  {:?}\n      {shown:?} {held:?}{}",
                    event.text,
                    if reading.says_more() { " +more" } else { "" }
                ));
                let says_more = reading.says_more();
                memories.push(Memory {
                    text: event.text.clone(),
                    claims: reading.claims,
                    says_more,
                    retired: false,
                    flagged: false,
                });
            }
            for probe in &case.probes {
                let has = |m: &Memory, needle: &String| m.text.to_lowercase().contains(&needle.to_lowercase());
                let live = |needle: &String| memories.iter().any(|m| !m.retired && !m.flagged && has(m, needle));
                let marked = |needle: &String| memories.iter().any(|m| !m.retired && m.flagged && has(m, needle));
                let verdict = if probe.must_not_contain.is_empty() {
                    if probe.must_contain.iter().all(&live) {
                        "kept"
                    } else if probe.must_contain.iter().all(|n| live(n) || marked(n)) {
                        "doubted"
                    } else {
                        "hidden"
                    }
                } else if !probe.must_contain.iter().all(|n| live(n) || marked(n)) {
                    "lost"
                } else if probe.must_not_contain.iter().any(live) {
                    "offered"
                } else if probe.must_not_contain.iter().any(marked) {
                    "flagged"
                } else {
                    "retired"
                };
                *counts.entry(verdict).or_default() += 1;
                let show = match verdict {
                    "kept" | "retired" => verbose && args.iter().any(|a| a == "-a"),
                    _ => verbose,
                };
                if show {
                    println!("{} {} {:?} trap={:?}", verdict.to_uppercase(), case.id, probe.query, probe.trap);
                    for line in &log {
                        println!("{line}");
                    }
                }
            }
        }
    }
    let updates: usize =
        ["retired", "flagged", "offered", "lost"].iter().map(|v| counts.get(v).copied().unwrap_or(0)).sum();
    let keeps: usize = ["kept", "doubted", "hidden"].iter().map(|v| counts.get(v).copied().unwrap_or(0)).sum();
    let share = |v: &str, of: usize| {
        format!(
            "{v} {} ({:.1}%)",
            counts.get(v).copied().unwrap_or(0),
            100.0 * counts.get(v).copied().unwrap_or(0) as f64 / of.max(1) as f64
        )
    };
    println!(
        "updates {updates}: {}, {}, {}, {}",
        share("retired", updates),
        share("flagged", updates),
        share("offered", updates),
        share("lost", updates)
    );
    println!("keeps {keeps}: {}, {}, {}", share("kept", keeps), share("doubted", keeps), share("hidden", keeps));
}
