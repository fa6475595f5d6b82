//! Importers [design §export]: what people bring from the tools they leave, read into events
//! that go through the ordinary write path (admission, approval, dedup, reconciliation), so an
//! import is judged like anything else said. Each record becomes an event or a clear error of
//! its own; one bad record never costs the others.
//!
//! - ChatGPT's `conversations.json`: each conversation's main thread (from its current message
//!   back to the first), the person's messages only — an assistant's answers are not facts
//!   about the person — observed when they were sent.
//! - Mem0's export: a list of memories (or `{"results": [...]}`, as its API returns them),
//!   each a memory a model inferred (held to the namespace's approval policy, like an agent's
//!   save), observed when Mem0 created it.
//! - A markdown folder (an Obsidian vault): each note cut at its headings, a section a memory
//!   titled by the note and the heading, with the note's path as its source; wiki links read
//!   as the words they show.

use arbor_domain::event::{Event, MAX_EVENT_TEXT_BYTES};
use arbor_domain::model::{Actor, MAX_TITLE_CHARS, SourceRef};
use arbor_domain::text::truncate_chars;
use arbor_domain::time::{Timestamp, is_storable};
use serde_json::Value;

/// One record of an import: where it came from, for messages, and its event or why not.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRecord {
    /// e.g. `conversation 2 ("Trip planning"), message 5`, `memory 3`, `notes/dana.md § Work`.
    pub label: String,
    pub event: Result<Event, String>,
}

/// What an importer read: the records, and what it passed over on purpose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub records: Vec<ImportRecord>,
    /// Messages left out as not the person's own (assistant, system and tool turns) or not text.
    pub passed_over: usize,
}

/// The events of one record: its text cut at paragraphs into pieces an event can hold
/// (labelled `part k` when there are several), said at `at` unless that is after `now` (a date
/// that has not come yet is not when anything was said).
fn records(
    label: String,
    text: &str,
    actor: Actor,
    origin: String,
    at: Option<Timestamp>,
    now: Timestamp,
) -> Vec<ImportRecord> {
    let pieces = pieces(text, MAX_EVENT_TEXT_BYTES);
    let count = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(k, piece)| {
            let mut event = Event::user_message(piece);
            event.actor = actor;
            event.source = SourceRef::Import { origin: origin.clone() };
            event.observed_at = at.filter(|at| is_storable(*at) && *at <= now);
            let event = event.validate().map(|()| event).map_err(|error| error.to_string());
            let label = if count > 1 { format!("{label}, part {}", k + 1) } else { label.clone() };
            ImportRecord { label, event }
        })
        .collect()
}

/// `text` cut into pieces of at most `limit` bytes: at blank lines, then at line ends, then at
/// character boundaries, whichever a piece needs.
fn pieces(text: &str, limit: usize) -> Vec<String> {
    if text.len() <= limit {
        return vec![text.to_owned()];
    }
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    let push = |part: &str, current: &mut String, pieces: &mut Vec<String>| {
        if current.len() + part.len() > limit && !current.is_empty() {
            pieces.push(std::mem::take(current));
        }
        current.push_str(part);
    };
    for paragraph in text.split_inclusive("\n\n") {
        if paragraph.len() <= limit {
            push(paragraph, &mut current, &mut pieces);
            continue;
        }
        for line in paragraph.split_inclusive('\n') {
            let mut rest = line;
            while rest.len() > limit {
                let mut cut = limit;
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                push(&rest[..cut], &mut current, &mut pieces);
                rest = &rest[cut..];
            }
            push(rest, &mut current, &mut pieces);
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn seconds(value: Option<&Value>) -> Option<Timestamp> {
    let seconds = value?.as_f64()?;
    if !seconds.is_finite() {
        return None;
    }
    Timestamp::from_millisecond((seconds * 1000.0).round() as i64).ok()
}

/// ChatGPT's `conversations.json` (a list of conversations).
pub fn from_chatgpt(json: &str, now: Timestamp) -> Result<Imported, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let conversations = value
        .as_array()
        .ok_or("expected ChatGPT's conversations.json: a list of conversations, each with a `mapping` of messages")?;
    let mut imported = Imported::default();
    for (at, conversation) in conversations.iter().enumerate() {
        let title = conversation.get("title").and_then(Value::as_str).unwrap_or("untitled");
        let name = format!("conversation {} ({:?})", at + 1, truncate_chars(title, 40));
        let id = conversation.get("conversation_id").or_else(|| conversation.get("id")).and_then(Value::as_str);
        let Some(mapping) = conversation.get("mapping").and_then(Value::as_object) else {
            imported.records.push(ImportRecord { label: name, event: Err("it has no `mapping` of messages".into()) });
            continue;
        };
        // The thread shown last: from the current message back through its parents. Edited
        // or regenerated branches are not the conversation as it ended.
        let mut thread = Vec::new();
        let mut node = conversation.get("current_node").and_then(Value::as_str);
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = node {
            if !seen.insert(key) {
                break;
            }
            let Some(entry) = mapping.get(key) else { break };
            thread.push(entry);
            node = entry.get("parent").and_then(Value::as_str);
        }
        if thread.is_empty() {
            // No current message named: every message, oldest first.
            let mut all: Vec<&Value> = mapping.values().collect();
            all.sort_by(|a, b| {
                let at = |v: &Value| v.pointer("/message/create_time").and_then(Value::as_f64).unwrap_or(0.0);
                at(a).total_cmp(&at(b))
            });
            thread = all.into_iter().rev().collect();
        }
        thread.reverse();
        let started = seconds(conversation.get("create_time"));
        for (number, entry) in thread.into_iter().filter_map(|e| e.get("message").filter(|m| !m.is_null())).enumerate()
        {
            let role = message_role(entry);
            let parts: Vec<&str> = entry
                .pointer("/content/parts")
                .and_then(Value::as_array)
                .map(|parts| parts.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let text = parts.join("\n");
            if role != Some("user") || text.trim().is_empty() {
                imported.passed_over += 1;
                continue;
            }
            let message = entry.get("id").and_then(Value::as_str).unwrap_or("");
            let origin = format!("chatgpt:{}/{}", id.unwrap_or("-"), message);
            let at = seconds(entry.get("create_time")).filter(|at| *at <= now).or(started);
            let label = format!("{name}, message {}", number + 1);
            imported.records.extend(records(label, &text, Actor::User, origin, at, now));
        }
    }
    Ok(imported)
}

fn message_role(message: &Value) -> Option<&str> {
    message.pointer("/author/role").and_then(Value::as_str)
}

/// Mem0's export: a list of memories, or an object holding one under `results` or `memories`.
/// Memories of several users or agents are never imported together: one person's memories
/// into another's scope would be a leak, so `only` names the owner (`user_id` or `agent_id`)
/// to import, and an export of several owners without it is refused.
pub fn from_mem0(json: &str, only: Option<&str>, now: Timestamp) -> Result<Imported, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let list = match &value {
        Value::Array(list) => list,
        Value::Object(object) => object
            .get("results")
            .or_else(|| object.get("memories"))
            .and_then(Value::as_array)
            .ok_or("expected Mem0's export: a list of memories, or an object with `results`")?,
        _ => return Err("expected Mem0's export: a list of memories, or an object with `results`".into()),
    };
    let owner = |item: &Value| -> String {
        ["user_id", "agent_id", "run_id"]
            .iter()
            .find_map(|key| item.get(*key).and_then(Value::as_str))
            .unwrap_or("")
            .to_owned()
    };
    // Memories that name no owner are the export's own: only named owners can be several.
    let owners: std::collections::BTreeSet<String> = list.iter().map(owner).filter(|o| !o.is_empty()).collect();
    if only.is_none() && owners.len() > 1 {
        let named: Vec<&str> = owners.iter().take(5).map(String::as_str).collect();
        return Err(format!(
            "the export holds the memories of {} users or agents ({}): import one at a time, naming it with \
             --owner",
            owners.len(),
            named.join(", ")
        ));
    }
    let mut imported = Imported::default();
    for (at, item) in list.iter().enumerate() {
        if only.is_some_and(|only| owner(item) != only) {
            imported.passed_over += 1;
            continue;
        }
        let label = format!("memory {}", at + 1);
        let Some(text) = item.get("memory").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) else {
            imported.records.push(ImportRecord { label, event: Err("it has no `memory` text".into()) });
            continue;
        };
        let id = item.get("id").and_then(Value::as_str).unwrap_or("-");
        let created = match item.get("created_at").and_then(Value::as_str) {
            None => None,
            Some(created) => match parse_loose_instant(created) {
                Some(at) => Some(at),
                None => {
                    let event = Err(format!("`created_at` {created:?} is not a date and time"));
                    imported.records.push(ImportRecord { label, event });
                    continue;
                }
            },
        };
        // A model chose to remember these from conversations: inferred, not the person's words
        // and not a system of record, so the namespace's approval policy decides, as for an
        // agent's deliberate save.
        imported.records.extend(records(label, text, Actor::Agent, format!("mem0:{id}"), created, now));
    }
    Ok(imported)
}

/// RFC 3339, or the same without an offset (read as UTC), as exports write them.
fn parse_loose_instant(text: &str) -> Option<Timestamp> {
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(at);
    }
    let civil: jiff::civil::DateTime = text.trim_end_matches('Z').parse().ok()?;
    jiff::tz::TimeZone::UTC.to_timestamp(civil).ok()
}

/// One markdown note (`path` relative to the folder), cut at its headings.
pub fn from_markdown_note(path: &str, text: &str, modified: Option<Timestamp>, now: Timestamp) -> Imported {
    let (front, body) = split_front_matter(text);
    let dated = front.and_then(|front| {
        front.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key.trim(), "date" | "created" | "created_at")
                .then(|| parse_loose_instant(value.trim().trim_matches(['"', '\''])).or_else(|| day_start(value)))?
        })
    });
    let at = dated.filter(|at| *at <= now).or(modified);
    let note = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md").trim_end_matches(".markdown");
    let mut imported = Imported::default();
    let mut heading: Option<String> = None;
    let mut section = String::new();
    let flush = |heading: &Option<String>, section: &mut String, imported: &mut Imported| {
        let words = readable(section);
        section.clear();
        if words.trim().is_empty() {
            return;
        }
        let title = match heading {
            Some(heading) => format!("{note} — {heading}"),
            None => note.to_owned(),
        };
        let label = match heading {
            Some(heading) => format!("{path} § {heading}"),
            None => path.to_owned(),
        };
        for mut record in records(label, &words, Actor::User, format!("markdown:{path}"), at, now) {
            if let Ok(event) = &mut record.event {
                event.hints.title = Some(truncate_chars(&title, MAX_TITLE_CHARS));
            }
            imported.records.push(record);
        }
    };
    // A heading is `#` to `######` and a space, indented less than a code block (four spaces),
    // outside a fence (``` or ~~~).
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        for marker in ["```", "~~~"] {
            if indent < 4 && trimmed.starts_with(marker) {
                fence = match fence {
                    None => Some(marker),
                    Some(open) if open == marker => None,
                    other => other,
                };
            }
        }
        let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
        let is_heading =
            fence.is_none() && indent < 4 && (1..=6).contains(&hashes) && trimmed[hashes..].starts_with([' ', '\t']);
        if is_heading {
            flush(&heading, &mut section, &mut imported);
            heading = Some(trimmed.trim_start_matches('#').trim().to_owned()).filter(|h| !h.is_empty());
            continue;
        }
        section.push_str(line);
        section.push('\n');
    }
    flush(&heading, &mut section, &mut imported);
    imported
}

fn day_start(value: &str) -> Option<Timestamp> {
    let date: jiff::civil::Date = value.trim().trim_matches(['"', '\'']).parse().ok()?;
    jiff::tz::TimeZone::UTC.to_timestamp(date.to_datetime(jiff::civil::Time::midnight())).ok()
}

/// The YAML front matter between `---` lines at the very top, and the rest.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else { return (None, text) };
    match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            (Some(&rest[..end]), after.split_once('\n').map_or("", |(_, body)| body))
        }
        None => (None, text),
    }
}

/// A note's text as its reader sees it: `[[Page|shown]]` and `[[Page]]` as the words shown,
/// embeds (`![[image.png]]`) left out.
fn readable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let embed = rest[..start].ends_with('!');
        out.push_str(&rest[..start - usize::from(embed)]);
        let after = &rest[start + 2..];
        match after.find("]]") {
            Some(end) => {
                let link = &after[..end];
                if !embed {
                    let shown = link.split_once('|').map_or(link, |(_, shown)| shown);
                    out.push_str(shown.split_once('#').map_or(shown, |(page, _)| page));
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-12-01T00:00:00Z".parse().unwrap()
    }

    fn texts(imported: &Imported) -> Vec<&str> {
        imported.records.iter().filter_map(|r| r.event.as_ref().ok()).map(|e| e.text.as_str()).collect()
    }

    #[test]
    fn chatgpt_keeps_the_persons_messages_of_the_thread_shown() {
        let json = r#"[
          {"title": "Trip", "conversation_id": "c-1", "create_time": 1714000000.0, "current_node": "m4",
           "mapping": {
             "root": {"id": "root", "message": null, "parent": null},
             "m1": {"id": "m1", "parent": "root", "message": {"id": "m1", "author": {"role": "system"},
                    "content": {"content_type": "text", "parts": [""]}}},
             "m2": {"id": "m2", "parent": "m1", "message": {"id": "m2", "author": {"role": "user"},
                    "create_time": 1714000100.5, "content": {"content_type": "text", "parts": ["I'm vegetarian, plan dinners for Lisbon."]}}},
             "m2b": {"id": "m2b", "parent": "m1", "message": {"id": "m2b", "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": ["An edited-away draft."]}}},
             "m3": {"id": "m3", "parent": "m2", "message": {"id": "m3", "author": {"role": "assistant"},
                    "content": {"content_type": "text", "parts": ["Here are five places."]}}},
             "m4": {"id": "m4", "parent": "m3", "message": {"id": "m4", "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": ["My sister Ana joins on Friday."]}}}
           }},
          {"title": "Broken"}
        ]"#;
        let imported = from_chatgpt(json, now()).unwrap();
        assert_eq!(texts(&imported), ["I'm vegetarian, plan dinners for Lisbon.", "My sister Ana joins on Friday."]);
        let first = imported.records[0].event.as_ref().unwrap();
        assert_eq!(first.observed_at, Timestamp::from_millisecond(1_714_000_100_500).ok());
        assert_eq!(first.source, SourceRef::Import { origin: "chatgpt:c-1/m2".into() });
        assert_eq!(first.actor, Actor::User);
        let second = imported.records[1].event.as_ref().unwrap();
        assert_eq!(second.observed_at, Timestamp::from_second(1_714_000_000).ok(), "the conversation's start");
        assert_eq!(imported.passed_over, 2, "the system prompt and the assistant's answer");
        let broken = &imported.records[2];
        assert!(broken.label.starts_with("conversation 2 (\"Broken\")"), "{}", broken.label);
        assert!(broken.event.as_ref().unwrap_err().contains("mapping"));
        assert!(from_chatgpt("{\"not\": \"a list\"}", now()).unwrap_err().contains("list of conversations"));
        assert!(from_chatgpt("[{", now()).unwrap_err().starts_with("not JSON"));
    }

    #[test]
    fn mem0_memories_each_or_their_own_error() {
        let json = r#"{"results": [
          {"id": "a1", "memory": "Is allergic to peanuts", "created_at": "2024-07-20T10:00:00-07:00", "user_id": "alex"},
          {"id": "a2", "memory": "   "},
          {"id": "a3", "memory": "Prefers window seats", "created_at": "2024-07-21T09:30:00.123456"},
          {"id": "a4", "memory": "Works at Globex", "created_at": "last tuesday"}
        ]}"#;
        let imported = from_mem0(json, None, now()).unwrap();
        assert_eq!(texts(&imported), ["Is allergic to peanuts", "Prefers window seats"]);
        let first = imported.records[0].event.as_ref().unwrap();
        assert_eq!(first.observed_at, "2024-07-20T17:00:00Z".parse().ok());
        assert_eq!((first.actor, &first.source), (Actor::Agent, &SourceRef::Import { origin: "mem0:a1".into() }));
        assert_eq!(imported.records[2].event.as_ref().unwrap().observed_at, "2024-07-21T09:30:00.123456Z".parse().ok());
        assert!(imported.records[1].event.as_ref().unwrap_err().contains("no `memory`"));
        assert!(imported.records[3].event.as_ref().unwrap_err().contains("last tuesday"));
        assert_eq!(texts(&from_mem0(r#"[{"memory": "Likes jazz"}]"#, None, now()).unwrap()), ["Likes jazz"]);
        assert!(from_mem0("42", None, now()).unwrap_err().contains("list of memories"));
    }

    #[test]
    fn a_note_is_cut_at_its_headings_and_links_read_as_words() {
        let note = "---\ntags: [people]\ncreated: 2024-03-05\n---\nMet [[Dana Smith|Dana]] at the offsite.\n\n\
                    ## Work\nDana leads [[Project Atlas]] now. ![[whiteboard.png]]\n\n```\n# not a heading\n```\n\
                    ## Empty\n\n# Home\nLives in [[Lisbon#Alfama]].\n";
        let imported = from_markdown_note("people/dana.md", note, None, now());
        assert_eq!(
            texts(&imported),
            [
                "Met Dana at the offsite.",
                "Dana leads Project Atlas now. \n\n```\n# not a heading\n```",
                "Lives in Lisbon."
            ]
        );
        let labels: Vec<&str> = imported.records.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["people/dana.md", "people/dana.md § Work", "people/dana.md § Home"]);
        let work = imported.records[1].event.as_ref().unwrap();
        assert_eq!(work.hints.title.as_deref(), Some("dana — Work"));
        assert_eq!(work.source, SourceRef::Import { origin: "markdown:people/dana.md".into() });
        assert_eq!(work.observed_at, "2024-03-05T00:00:00Z".parse().ok(), "the note's own date");
        let undated = from_markdown_note("a.md", "Just a line.", Timestamp::from_second(1_700_000_000).ok(), now());
        assert_eq!(undated.records[0].event.as_ref().unwrap().observed_at, Timestamp::from_second(1_700_000_000).ok());
        assert!(from_markdown_note("empty.md", "---\ntitle: x\n---\n\n", None, now()).records.is_empty());
        let long = from_markdown_note(&format!("{}.md", "x".repeat(300)), "Text.", None, now());
        assert!(long.records[0].event.is_err(), "a source longer than a reference may be is refused");
    }

    #[test]
    fn long_texts_are_cut_at_paragraphs_and_future_dates_are_not_when_it_was_said() {
        let paragraph = "word ".repeat(4000);
        let long = format!("{paragraph}\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}");
        let note = format!("---\ndate: 2099-01-01\n---\n{long}");
        let imported = from_markdown_note("long.md", &note, Timestamp::from_second(1_700_000_000).ok(), now());
        assert!(imported.records.len() >= 2, "{}", imported.records.len());
        for record in &imported.records {
            let event = record.event.as_ref().expect("each piece fits an event");
            assert!(event.text.len() <= MAX_EVENT_TEXT_BYTES);
            assert_eq!(event.observed_at, Timestamp::from_second(1_700_000_000).ok(), "2099 has not come");
        }
        assert!(imported.records[1].label.ends_with("part 2"), "{}", imported.records[1].label);
        let rebuilt: String = imported.records.iter().map(|r| r.event.as_ref().unwrap().text.clone()).collect();
        assert_eq!(rebuilt.split_whitespace().count(), 16_000, "no word lost");
        let one_line = "é".repeat(40_000);
        assert!(pieces(&one_line, 1000).iter().all(|p| p.len() <= 1000 && !p.is_empty()));
        assert_eq!(pieces(&one_line, 1000).concat(), one_line);
    }

    #[test]
    fn headings_are_not_in_fences_or_code_blocks() {
        let note =
            "Intro.\n~~~\n# in a tilde fence\n~~~\n    # indented code\n#hashtag line\n####### seven\n## Real\nBody.";
        let imported = from_markdown_note("n.md", note, None, now());
        let labels: Vec<&str> = imported.records.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["n.md", "n.md § Real"]);
    }

    #[test]
    fn a_mem0_export_of_several_owners_is_imported_one_owner_at_a_time() {
        let json = r#"[{"memory": "Likes jazz", "user_id": "alex"}, {"memory": "Likes tea", "user_id": "sam"},
                       {"memory": "Runs on Fridays", "agent_id": "planner"}]"#;
        let refused = from_mem0(json, None, now()).unwrap_err();
        assert!(refused.contains("3 users or agents") && refused.contains("--owner"), "{refused}");
        let sam = from_mem0(json, Some("sam"), now()).unwrap();
        assert_eq!((texts(&sam), sam.passed_over), (vec!["Likes tea"], 2));
        let future =
            from_mem0(r#"[{"memory": "Likes jazz", "created_at": "2099-01-01T00:00:00Z"}]"#, None, now()).unwrap();
        assert_eq!(future.records[0].event.as_ref().unwrap().observed_at, None, "said when imported");
    }
}
