//! `arbor eval beam`: knowing what is current on BEAM (Tavakoli et al., arXiv 2510.27246), a
//! benchmark of long chats written outside this project. Each chat's user turns go into a
//! conversation namespace of their own through the normal write path, as the person's messages
//! (the message id is BEAM's chat id; the time is the chat's latest time anchor, a minute per
//! turn after it), the jobs run, and each probing question is asked through the normal
//! retrieval path in exact-evidence mode.
//!
//! For a `knowledge_update` question, which names the turn holding the original fact and the
//! one holding its update, it counts whether the update ranks above the original, and whether
//! the original is *offered as current* above it (ranked higher and not marked as possibly
//! outdated). For a `contradiction_resolution` question, which names two statements that
//! disagree, it counts whether both come back, and whether one is marked as disputed by the
//! other (`possibly_outdated_by`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use arbor_app::{EvidenceItem, RetrieveMode, RetrieveRequest};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::model::SourceRef;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::NodeKind;
use serde::Serialize;
use serde_json::Value;

use arbor_compose::{self as compose, EmbedderChoice};

/// How many leaves each question's ranking holds: where the two turns stand in it.
const RANKED: usize = 50;

/// What to evaluate, and how.
#[derive(Debug, Clone)]
pub struct BeamOptions {
    /// BEAM's `chats/100K` directory (one numbered directory per chat).
    pub data: PathBuf,
    /// The chats to use, by number.
    pub chats: Vec<u32>,
    pub dir: Option<PathBuf>,
    pub embedder: EmbedderChoice,
}

impl BeamOptions {
    /// The chats this project measures on; the rest of BEAM is held out.
    pub const DEFAULT_CHATS: [u32; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
}

/// One question's outcome.
#[derive(Debug, Serialize)]
struct QuestionResult {
    chat: u32,
    kind: &'static str,
    question: String,
    /// The chat ids of the earlier statement (the original fact, the first statement) and of
    /// the later one (the update, the second statement).
    earlier: Vec<u64>,
    later: Vec<u64>,
    /// Their best places in the ranking (1-based), if there.
    earlier_rank: Option<usize>,
    later_rank: Option<usize>,
    /// Whether the earlier statement's best-ranked leaf is marked as possibly outdated.
    earlier_marked: bool,
    /// Whether the later statement's best-ranked leaf is.
    later_marked: bool,
}

impl QuestionResult {
    fn later_above(&self) -> bool {
        self.later_rank.is_some_and(|later| self.earlier_rank.is_none_or(|earlier| later < earlier))
    }

    fn earlier_offered_above(&self) -> bool {
        !self.earlier_marked
            && self.earlier_rank.is_some_and(|earlier| self.later_rank.is_none_or(|later| earlier < later))
    }
}

/// The counts of one kind of question.
#[derive(Debug, Default, Serialize)]
struct KindCounts {
    questions: usize,
    /// The later statement above the earlier (or the earlier not found).
    later_above: usize,
    /// The earlier statement above the later and not marked: offered as current.
    earlier_offered_above: usize,
    /// Both statements among the ranked.
    both_found: usize,
    /// One of them marked as possibly outdated by the other.
    marked: usize,
    later_missing: usize,
}

/// A run's outcome.
#[derive(Debug, Serialize)]
pub struct BeamReport {
    data: String,
    embedder: String,
    chats: Vec<u32>,
    user_turns: usize,
    knowledge_update: KindCounts,
    contradiction_resolution: KindCounts,
    ingest_seconds: f64,
    results: Vec<QuestionResult>,
}

struct Chat {
    number: u32,
    events: Vec<Event>,
    /// (kind, question, earlier ids, later ids)
    questions: Vec<(&'static str, String, Vec<u64>, Vec<u64>)>,
}

/// Builds a store from the chats' user turns and asks their update and contradiction questions,
/// telling `progress` of each chat ingested (its number and user turns).
pub async fn run(options: &BeamOptions, progress: impl Fn(u32, usize)) -> Result<BeamReport> {
    if options.chats.is_empty() {
        bail!("name at least one chat");
    }
    let chats: Vec<Chat> = options.chats.iter().map(|&n| read_chat(&options.data, n)).collect::<Result<_>>()?;
    let (root, _temp) = crate::store_dir(options.dir.as_deref(), "arbor-beam-")?;
    let init = compose::InitOptions { embedder: options.embedder, ..compose::InitOptions::default() };
    compose::init(&root, &init).await.with_context(|| format!("creating a store at {}", root.display()))?;
    let opened = compose::open(&root).await?;
    let arbor = crate::locomo::with_room_for(opened.arbor, RANKED);

    let began = Instant::now();
    let mut user_turns = 0;
    for chat in &chats {
        let chain = arbor.read_chain(&context(chat.number)?)?;
        user_turns += chat.events.len();
        for batch in chat.events.chunks(64) {
            for outcome in arbor.ingest_batch(&chain, batch.to_vec()).await? {
                outcome?;
            }
        }
        progress(chat.number, chat.events.len());
    }
    let jobs = arbor.run_jobs(None).await?;
    if jobs.failed > 0 {
        bail!("{} jobs failed while sealing the chats", jobs.failed);
    }
    let ingest_seconds = began.elapsed().as_secs_f64();

    let mut results = Vec::new();
    for chat in &chats {
        let chain = arbor.read_chain(&context(chat.number)?)?;
        for (kind, question, earlier, later) in &chat.questions {
            let mut request = RetrieveRequest::new(question.clone());
            request.mode = RetrieveMode::ExactEvidence;
            request.max_results = Some(RANKED);
            request.max_chars = Some(usize::MAX / 2);
            let pack = arbor.retrieve(&chain, &request).await?;
            let leaves: Vec<&EvidenceItem> = pack.evidence.iter().filter(|e| e.node == NodeKind::Leaf).collect();
            let best = |ids: &[u64]| {
                leaves
                    .iter()
                    .position(|e| message_id(e).is_some_and(|id| ids.contains(&id)))
                    .map(|at| (at + 1, leaves[at]))
            };
            let (earlier_best, later_best) = (best(earlier), best(later));
            results.push(QuestionResult {
                chat: chat.number,
                kind,
                question: question.clone(),
                earlier: earlier.clone(),
                later: later.clone(),
                earlier_rank: earlier_best.map(|(rank, _)| rank),
                later_rank: later_best.map(|(rank, _)| rank),
                earlier_marked: earlier_best.is_some_and(|(_, e)| e.possibly_outdated_by.is_some()),
                later_marked: later_best.is_some_and(|(_, e)| e.possibly_outdated_by.is_some()),
            });
        }
    }
    let counts = |kind: &str| {
        let rows: Vec<&QuestionResult> = results.iter().filter(|r| r.kind == kind).collect();
        KindCounts {
            questions: rows.len(),
            later_above: rows.iter().filter(|r| r.later_above()).count(),
            earlier_offered_above: rows.iter().filter(|r| r.earlier_offered_above()).count(),
            both_found: rows.iter().filter(|r| r.earlier_rank.is_some() && r.later_rank.is_some()).count(),
            marked: rows.iter().filter(|r| r.earlier_marked || r.later_marked).count(),
            later_missing: rows.iter().filter(|r| r.later_rank.is_none()).count(),
        }
    };
    Ok(BeamReport {
        data: options.data.display().to_string(),
        embedder: arbor.ports().embedder.id().to_string(),
        chats: options.chats.clone(),
        user_turns,
        knowledge_update: counts("knowledge_update"),
        contradiction_resolution: counts("contradiction_resolution"),
        ingest_seconds,
        results,
    })
}

fn message_id(evidence: &EvidenceItem) -> Option<u64> {
    evidence.source.as_deref()?.strip_prefix("message:")?.parse().ok()
}

fn context(chat: u32) -> Result<TrustedContext> {
    Ok(TrustedContext::Conversation {
        conversation: ScopeId::parse(&format!("beam-{chat}"))?,
        project: None,
        agent: None,
    })
}

/// A chat's user turns as events and its update and contradiction questions.
fn read_chat(data: &Path, number: u32) -> Result<Chat> {
    let dir = data.join(number.to_string());
    let read = |path: PathBuf| -> Result<Value> {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
    };
    let chat = read(dir.join("chat.json"))?;
    let scope = ScopeId::parse(&format!("beam-{number}"))?;
    let mut events = Vec::new();
    let mut anchor: Option<Timestamp> = None;
    let batches = chat.as_array().with_context(|| format!("chat {number}: expected a list of batches"))?;
    for message in batches
        .iter()
        .flat_map(|b| b["turns"].as_array().into_iter().flatten())
        .flat_map(|t| t.as_array().into_iter().flatten())
    {
        if message["role"] != "user" {
            continue;
        }
        let id = message["id"].as_u64().with_context(|| format!("chat {number}: a user turn without an id"))?;
        if let Some(text) = message["time_anchor"].as_str() {
            anchor = Some(parse_anchor(text).with_context(|| format!("chat {number}, turn {id}"))?);
        }
        let start = anchor.with_context(|| format!("chat {number}: turn {id} comes before any time anchor"))?;
        let content = message["content"].as_str().with_context(|| format!("chat {number}, turn {id}: no content"))?;
        // Each turn ends with its batch position ("->-> 1,1"), which is BEAM's bookkeeping.
        let text = content.rsplit_once("->->").map_or(content, |(text, _)| text).trim();
        if text.is_empty() {
            continue;
        }
        let mut event = Event::user_message(text);
        event.observed_at = Some(start.checked_add(jiff::SignedDuration::from_secs(60 * id as i64))?);
        event.source = SourceRef::Message { conversation: Some(scope.clone()), message_id: id.to_string() };
        events.push(event);
    }
    let probing = read(dir.join("probing_questions").join("probing_questions.json"))?;
    let ids =
        |value: &Value| -> Vec<u64> { value.as_array().into_iter().flatten().filter_map(Value::as_u64).collect() };
    let mut questions = Vec::new();
    for (kind, earlier, later) in [
        ("knowledge_update", "original_info", "updated_info"),
        ("contradiction_resolution", "first_statement", "second_statement"),
    ] {
        for question in probing[kind].as_array().into_iter().flatten() {
            let text = question["question"]
                .as_str()
                .with_context(|| format!("chat {number}: a {kind} question without text"))?;
            let sources = &question["source_chat_ids"];
            let (earlier, later) = (ids(&sources[earlier]), ids(&sources[later]));
            // BEAM's contradictions name the statements in either order: the one said later
            // is the later.
            let (earlier, later) =
                if earlier.iter().max() > later.iter().max() { (later, earlier) } else { (earlier, later) };
            questions.push((kind, text.to_owned(), earlier, later));
        }
    }
    Ok(Chat { number, events, questions })
}

/// "March-15-2024" as that day's start, UTC.
fn parse_anchor(text: &str) -> Result<Timestamp> {
    let date = jiff::civil::Date::strptime("%B-%d-%Y", text).with_context(|| format!("time anchor {text:?}"))?;
    Ok(jiff::tz::Offset::UTC.to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))?)
}

impl BeamReport {
    /// The counts as text for people.
    pub fn render(&self) -> String {
        let ku = &self.knowledge_update;
        let cr = &self.contradiction_resolution;
        let share = |n: usize, of: usize| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
        format!(
            "BEAM 100K chats {:?}: {} user turns, embedder {}; ingest and jobs {:.1} s\n\n\
             knowledge_update: {} questions\n  \
             update above the original:            {} ({:.1}%)\n  \
             original offered as current above it: {} ({:.1}%)\n  \
             update not found:                     {}\n\n\
             contradiction_resolution: {} questions\n  \
             both statements found:                {} ({:.1}%)\n  \
             one marked as disputed by the other:  {} ({:.1}%)\n",
            self.chats,
            self.user_turns,
            self.embedder,
            self.ingest_seconds,
            ku.questions,
            ku.later_above,
            share(ku.later_above, ku.questions),
            ku.earlier_offered_above,
            share(ku.earlier_offered_above, ku.questions),
            ku.later_missing,
            cr.questions,
            cr.both_found,
            share(cr.both_found, cr.questions),
            cr.marked,
            share(cr.marked, cr.questions),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_anchors_are_days() {
        assert_eq!(parse_anchor("March-15-2024").unwrap().to_string(), "2024-03-15T00:00:00Z");
        assert!(parse_anchor("15/03/2024").is_err());
    }
}
