//! `arbor eval locomo`: retrieval recall on the LoCoMo benchmark through the real pipeline.
//! Each conversation goes into its own conversation namespace through the normal write path
//! (one event per turn, its `dia_id` as the message id, observed at its session's date), the
//! jobs run, and every question is asked through the normal retrieval path in exact-evidence
//! mode. R@k is the LoCoMo paper's: the share of a question's evidence turns among the top k
//! leaves, averaged per category and overall (see `../shared/eval/README.md`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use arbor_app::{Arbor, RetrieveMode, RetrieveRequest};
use arbor_domain::budget::LayerBudget;
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::model::SourceRef;
use arbor_domain::namespace::NamespaceKind;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;
use arbor_domain::visibility::NodeKind;
use serde::Serialize;
use serde_json::Value;

use arbor_compose::{self as compose, EmbedderChoice};

use crate::Latency;

/// What to evaluate, and how.
#[derive(Debug, Clone)]
pub struct LocomoOptions {
    /// The LoCoMo JSON file (a list of conversations with their questions).
    pub data: PathBuf,
    /// The cut-offs to report (positive).
    pub k: Vec<usize>,
    /// Where to build the store (a new or empty directory, kept); `None`: a temporary one,
    /// removed afterwards.
    pub dir: Option<PathBuf>,
    pub embedder: EmbedderChoice,
}

impl LocomoOptions {
    /// The published cut-offs.
    pub const DEFAULT_K: [usize; 4] = [5, 10, 25, 50];
}

/// The question categories of LoCoMo, by their number in the data.
fn category_name(category: u64) -> &'static str {
    match category {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    }
}

/// One conversation as read from the file.
#[derive(Debug)]
struct Conversation {
    sample_id: String,
    /// Sessions in order: their start time and turns.
    sessions: Vec<(Timestamp, Vec<Turn>)>,
    questions: Vec<Question>,
}

#[derive(Debug)]
struct Turn {
    speaker: String,
    dia_id: String,
    text: String,
}

#[derive(Debug, Clone)]
struct Question {
    question: String,
    evidence: Vec<String>,
    category: u64,
}

/// A leaf's rank in the full-text channel and in the vector channel (`None`: not found by it),
/// and its vector similarity to the question.
type ChannelRanks = (Option<usize>, Option<usize>, Option<f32>);

/// The channel that put an evidence turn among the retrieved: the first of full text, vectors,
/// a named entity's trees, the kind asked for, a mention of the time asked about, and the neighbours of a strong hit that found
/// it (in that order, so a turn both the words and the vectors found counts for the words), or
/// `missed` when it is not in the ranking at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
enum FoundBy {
    FullText,
    Vector,
    Entity,
    Kind,
    Time,
    Tree,
    Missed,
}

impl FoundBy {
    const ALL: [FoundBy; 7] = [
        FoundBy::FullText,
        FoundBy::Vector,
        FoundBy::Entity,
        FoundBy::Kind,
        FoundBy::Time,
        FoundBy::Tree,
        FoundBy::Missed,
    ];

    fn of(scores: &arbor_app::EvidenceScores) -> FoundBy {
        if scores.text_rank.is_some() {
            FoundBy::FullText
        } else if scores.vector_rank.is_some() {
            FoundBy::Vector
        } else if scores.entity_rank.is_some() {
            FoundBy::Entity
        } else if scores.kind_rank.is_some() {
            FoundBy::Kind
        } else if scores.time_rank.is_some() {
            FoundBy::Time
        } else {
            FoundBy::Tree
        }
    }

    fn name(self) -> &'static str {
        match self {
            FoundBy::FullText => "full text",
            FoundBy::Vector => "vector",
            FoundBy::Entity => "entity",
            FoundBy::Kind => "kind",
            FoundBy::Time => "time",
            FoundBy::Tree => "tree",
            FoundBy::Missed => "missed",
        }
    }
}

/// Where one evidence turn ended up: its place in the ranking (1-based) and the channel that
/// found it.
#[derive(Debug, Serialize)]
struct EvidenceFate {
    dia_id: String,
    rank: Option<usize>,
    found_by: FoundBy,
}

/// One question's outcome.
#[derive(Debug, Serialize)]
struct QuestionResult {
    conversation: String,
    question: String,
    category: &'static str,
    evidence: Vec<String>,
    /// The `dia_id`s of the ranked leaves, best first.
    retrieved: Vec<String>,
    /// Each retrieved leaf's rank in the full-text and the vector channel (null: not found by it).
    channel_ranks: Vec<ChannelRanks>,
    /// Each evidence turn's place in the ranking and the channel that found it.
    evidence_found: Vec<EvidenceFate>,
    /// R@k for each cut-off, in the order of `k`.
    recall: Vec<f64>,
    /// The same, without the relevance floor.
    recall_without_floor: Vec<f64>,
    /// Whether the pack said nothing in memory bears on the question.
    nothing_relevant: bool,
    latency_ms: f64,
}

/// A run's outcome: recall per category and overall, and each question's ranking.
#[derive(Debug, Serialize)]
pub struct LocomoReport {
    data: String,
    embedder: String,
    reasoner: String,
    conversations: usize,
    turns: usize,
    turns_not_admitted: usize,
    turns_folded_as_duplicates: usize,
    questions: usize,
    k: Vec<usize>,
    /// Mean R@k per category (in percent), in the order of `k`.
    by_category: BTreeMap<&'static str, CategoryRecall>,
    overall: CategoryRecall,
    /// The same questions asked without the relevance floor, side by side.
    without_relevance_floor: BTreeMap<&'static str, CategoryRecall>,
    overall_without_relevance_floor: CategoryRecall,
    /// Per category, how many evidence turns were in the top 10 by the channel that found
    /// them, and how many were not (`missed` counts both those ranked below 10 and those not
    /// ranked at all).
    found_in_top_10: BTreeMap<&'static str, BTreeMap<FoundBy, usize>>,
    /// Per question, query embedding included.
    retrieve: Latency,
    ingest_seconds: f64,
    jobs_seconds: f64,
    results: Vec<QuestionResult>,
}

#[derive(Debug, Serialize)]
struct CategoryRecall {
    questions: usize,
    recall_percent: Vec<f64>,
    /// Questions answered "nothing relevant in memory".
    nothing_relevant: usize,
}

/// Builds a store from `args.data`'s conversations and asks every question.
pub async fn run(args: &LocomoOptions) -> Result<LocomoReport> {
    if args.k.is_empty() || args.k.contains(&0) {
        bail!("the cut-offs (k) must be positive, e.g. 5,10,25,50");
    }
    let text = std::fs::read_to_string(&args.data).with_context(|| format!("reading {}", args.data.display()))?;
    let conversations = parse_locomo(&text).with_context(|| format!("{} is not LoCoMo data", args.data.display()))?;

    let (root, _temp) = crate::store_dir(args.dir.as_deref(), "arbor-eval-")?;
    let options = compose::InitOptions { embedder: args.embedder, ..compose::InitOptions::default() };
    compose::init(&root, &options).await.with_context(|| format!("creating a store at {}", root.display()))?;
    let opened = compose::open(&root).await?;
    let kmax = args.k.iter().copied().max().unwrap_or(10);
    let arbor = with_room_for(opened.arbor, kmax);

    let (mut turns, mut not_admitted, mut folded) = (0, 0, 0);
    let began = Instant::now();
    for conversation in &conversations {
        let chain = arbor.read_chain(&context(&conversation.sample_id)?)?;
        let events = events(conversation)?;
        turns += events.len();
        for batch in events.chunks(256) {
            for outcome in arbor.ingest_batch(&chain, batch.to_vec()).await? {
                for chunk in outcome?.chunks {
                    match chunk.outcome {
                        arbor_app::IngestOutcome::NotAdmitted { .. } => not_admitted += 1,
                        arbor_app::IngestOutcome::NoopDuplicate { .. } => folded += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    let ingest_seconds = began.elapsed().as_secs_f64();
    let began = Instant::now();
    let jobs = arbor.run_jobs(None).await?;
    if jobs.failed > 0 {
        bail!("{} jobs failed while sealing the conversations", jobs.failed);
    }
    let jobs_seconds = began.elapsed().as_secs_f64();

    let mut results = Vec::new();
    for conversation in &conversations {
        let chain = arbor.read_chain(&context(&conversation.sample_id)?)?;
        for question in &conversation.questions {
            let mut request = RetrieveRequest::new(question.question.clone());
            request.mode = RetrieveMode::ExactEvidence;
            request.max_results = Some(kmax);
            request.max_chars = Some(usize::MAX / 2);
            let began = Instant::now();
            let pack = arbor.retrieve(&chain, &request).await?;
            let latency_ms = began.elapsed().as_secs_f64() * 1e3;
            // Side by side: what the relevance floor costs and what it buys.
            request.relevance_floor = false;
            let unfloored = arbor.retrieve(&chain, &request).await?;
            let (retrieved, channel_ranks, found_by) = ranked_turns(&pack);
            let (unfloored, _, _) = ranked_turns(&unfloored);
            let evidence_found = question
                .evidence
                .iter()
                .map(|dia_id| {
                    let at = retrieved.iter().position(|r| r == dia_id);
                    let found_by = at.map_or(FoundBy::Missed, |at| found_by[at]);
                    EvidenceFate { dia_id: dia_id.clone(), rank: at.map(|at| at + 1), found_by }
                })
                .collect();
            results.push(QuestionResult {
                conversation: conversation.sample_id.clone(),
                question: question.question.clone(),
                category: category_name(question.category),
                recall: args.k.iter().map(|&k| recall_at(&question.evidence, &retrieved, k)).collect(),
                recall_without_floor: args.k.iter().map(|&k| recall_at(&question.evidence, &unfloored, k)).collect(),
                nothing_relevant: pack.answer == arbor_app::Answer::NothingRelevant,
                evidence: question.evidence.clone(),
                retrieved,
                channel_ranks,
                evidence_found,
                latency_ms,
            });
        }
    }
    Ok(summarize(
        args,
        &arbor,
        &conversations,
        Counts { turns, not_admitted, folded },
        (ingest_seconds, jobs_seconds),
        results,
    ))
}

/// The `dia_id`s of a pack's leaves, best first, with their channel ranks and the channel
/// that found each.
fn ranked_turns(pack: &arbor_app::RetrievalPack) -> (Vec<String>, Vec<ChannelRanks>, Vec<FoundBy>) {
    let mut turns = (Vec::new(), Vec::new(), Vec::new());
    for evidence in pack.evidence.iter().filter(|e| e.node == NodeKind::Leaf) {
        let Some(dia_id) = evidence.source.as_deref().and_then(|s| s.strip_prefix("message:")) else { continue };
        let scores = &evidence.scores;
        turns.0.push(dia_id.to_owned());
        turns.1.push((scores.text_rank, scores.vector_rank, scores.similarity));
        turns.2.push(FoundBy::of(scores));
    }
    turns
}

struct Counts {
    turns: usize,
    not_admitted: usize,
    folded: usize,
}

fn summarize(
    args: &LocomoOptions,
    arbor: &Arbor,
    conversations: &[Conversation],
    counts: Counts,
    (ingest_seconds, jobs_seconds): (f64, f64),
    results: Vec<QuestionResult>,
) -> LocomoReport {
    let mean_of = |rows: &[&QuestionResult], floored: bool| CategoryRecall {
        questions: rows.len(),
        recall_percent: (0..args.k.len())
            .map(|i| {
                let recall = |r: &QuestionResult| if floored { r.recall[i] } else { r.recall_without_floor[i] };
                100.0 * rows.iter().map(|r| recall(r)).sum::<f64>() / rows.len().max(1) as f64
            })
            .collect(),
        nothing_relevant: if floored { rows.iter().filter(|r| r.nothing_relevant).count() } else { 0 },
    };
    let mean = |rows: &[&QuestionResult]| mean_of(rows, true);
    let mut by_category: BTreeMap<&'static str, Vec<&QuestionResult>> = BTreeMap::new();
    for result in &results {
        by_category.entry(result.category).or_default().push(result);
    }
    let all: Vec<&QuestionResult> = results.iter().collect();
    let found_in_top_10 = by_category
        .iter()
        .map(|(name, rows)| {
            let mut counts: BTreeMap<FoundBy, usize> = FoundBy::ALL.iter().map(|f| (*f, 0)).collect();
            for fate in rows.iter().flat_map(|r| &r.evidence_found) {
                let found_by = if fate.rank.is_some_and(|rank| rank <= 10) { fate.found_by } else { FoundBy::Missed };
                *counts.entry(found_by).or_default() += 1;
            }
            (*name, counts)
        })
        .collect();
    LocomoReport {
        data: args.data.display().to_string(),
        embedder: arbor.ports().embedder.id().to_string(),
        reasoner: arbor.ports().reasoner.id(),
        conversations: conversations.len(),
        turns: counts.turns,
        turns_not_admitted: counts.not_admitted,
        turns_folded_as_duplicates: counts.folded,
        questions: results.len(),
        k: args.k.clone(),
        by_category: by_category.iter().map(|(name, rows)| (*name, mean(rows))).collect(),
        overall: mean(&all),
        without_relevance_floor: by_category.iter().map(|(name, rows)| (*name, mean_of(rows, false))).collect(),
        overall_without_relevance_floor: mean_of(&all, false),
        found_in_top_10,
        retrieve: Latency::of(results.iter().map(|r| r.latency_ms).collect()),
        ingest_seconds,
        jobs_seconds,
        results,
    }
}

impl LocomoReport {
    /// The overall mean R@k, in percent, for the cut-off `k` (if it was asked for).
    pub fn overall_recall(&self, k: usize) -> Option<f64> {
        let at = self.k.iter().position(|&c| c == k)?;
        self.overall.recall_percent.get(at).copied()
    }

    /// The report as text for people: a table of recall per category.
    pub fn render(&self) -> String {
        render(self)
    }
}

fn render(report: &LocomoReport) -> String {
    let mut out = format!(
        "LoCoMo retrieval recall: {} conversations, {} turns ({} not admitted, {} folded as duplicates), {} questions\n\
         embedder {}, reasoner {}; ingest {:.1} s, jobs {:.1} s\n\n",
        report.conversations,
        report.turns,
        report.turns_not_admitted,
        report.turns_folded_as_duplicates,
        report.questions,
        report.embedder,
        report.reasoner,
        report.ingest_seconds,
        report.jobs_seconds,
    );
    let header: Vec<String> = report.k.iter().map(|k| format!("{:>6}", format!("R@{k}"))).collect();
    out.push_str(&format!("| {:<12} | {:>9} | {} |\n", "category", "questions", header.join(" | ")));
    out.push_str(&format!("|{:-<14}|{:->11}|{}|\n", "", "", vec!["-------:"; report.k.len()].join("|")));
    let row = |out: &mut String, name: &str, recall: &CategoryRecall| {
        let cells: Vec<String> = recall.recall_percent.iter().map(|r| format!("{r:>6.1}")).collect();
        out.push_str(&format!("| {:<12} | {:>9} | {} |\n", name, recall.questions, cells.join(" | ")));
    };
    for (name, recall) in &report.by_category {
        row(&mut out, name, recall);
    }
    row(&mut out, "overall", &report.overall);
    out.push_str("\nwithout the relevance floor (the same questions, side by side):\n");
    for (name, recall) in &report.without_relevance_floor {
        row(&mut out, name, recall);
    }
    row(&mut out, "overall", &report.overall_without_relevance_floor);
    let nothing: Vec<String> =
        report.by_category.iter().map(|(name, recall)| format!("{name} {}", recall.nothing_relevant)).collect();
    out.push_str(&format!(
        "\nanswered \"nothing relevant in memory\": {} of {} ({})\n",
        report.overall.nothing_relevant,
        report.questions,
        nothing.join(", ")
    ));
    out.push_str("\nevidence turns in the top 10, by the channel that found them:\n");
    let names: Vec<String> = FoundBy::ALL.iter().map(|f| format!("{:>9}", f.name())).collect();
    out.push_str(&format!("| {:<12} | {} |\n", "category", names.join(" | ")));
    out.push_str(&format!("|{:-<14}|{}|\n", "", vec!["----------:"; FoundBy::ALL.len()].join("|")));
    for (name, counts) in &report.found_in_top_10 {
        let cells: Vec<String> = FoundBy::ALL.iter().map(|f| format!("{:>9}", counts.get(f).unwrap_or(&0))).collect();
        out.push_str(&format!("| {:<12} | {} |\n", name, cells.join(" | ")));
    }
    out.push_str(&format!(
        "\nretrieve latency (query embedding included): p50 {:.2} ms, p95 {:.2} ms\n",
        report.retrieve.p50_ms, report.retrieve.p95_ms
    ));
    out
}

/// The evaluation reads deeper than an agent's context budget: up to `k` leaves from the one
/// conversation layer, however long they are. Only the budget changes; every rule is the
/// store's own.
pub(crate) fn with_room_for(arbor: Arbor, k: usize) -> Arbor {
    let mut policy = arbor.policy().clone();
    let room = LayerBudget { max_items: k, max_chars: usize::MAX / 2 };
    policy.budget.per_layer.insert(NamespaceKind::Conversation, room);
    policy.budget.total = room;
    arbor.with_policy(policy)
}

fn context(sample_id: &str) -> Result<TrustedContext> {
    let conversation = ScopeId::parse(sample_id).with_context(|| format!("sample_id {sample_id:?}"))?;
    Ok(TrustedContext::Conversation { conversation, project: None, agent: None })
}

/// One event per turn: "<speaker>: <text>", with an image's caption, observed at its session's
/// start plus 30 s per turn (so turns keep their order).
fn events(conversation: &Conversation) -> Result<Vec<Event>> {
    let scope = ScopeId::parse(&conversation.sample_id)?;
    let mut events = Vec::new();
    for (start, turns) in &conversation.sessions {
        for (i, turn) in turns.iter().enumerate() {
            let mut event = Event::user_message(format!("{}: {}", turn.speaker, turn.text));
            event.observed_at = Some(start.checked_add(jiff::SignedDuration::from_secs(30 * i as i64))?);
            event.source = SourceRef::Message { conversation: Some(scope.clone()), message_id: turn.dia_id.clone() };
            events.push(event);
        }
    }
    Ok(events)
}

/// `|evidence ∩ top k| / |evidence|`, 1 when there is no evidence (the LoCoMo paper's count:
/// a malformed evidence string simply never matches).
fn recall_at(evidence: &[String], retrieved: &[String], k: usize) -> f64 {
    let wanted: BTreeSet<&str> = evidence.iter().map(String::as_str).collect();
    if wanted.is_empty() {
        return 1.0;
    }
    let top: BTreeSet<&str> = retrieved.iter().take(k).map(String::as_str).collect();
    wanted.intersection(&top).count() as f64 / wanted.len() as f64
}

fn parse_locomo(text: &str) -> Result<Vec<Conversation>> {
    let value: Value = serde_json::from_str(text).context("not JSON")?;
    let list = value.as_array().context("expected a JSON list of conversations")?;
    let mut conversations = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, item) in list.iter().enumerate() {
        let conversation = parse_conversation(item).with_context(|| format!("conversation #{}", index + 1))?;
        if !seen.insert(conversation.sample_id.clone()) {
            bail!("sample_id {:?} appears twice", conversation.sample_id);
        }
        conversations.push(conversation);
    }
    if conversations.is_empty() {
        bail!("the file holds no conversations");
    }
    Ok(conversations)
}

fn parse_conversation(item: &Value) -> Result<Conversation> {
    let sample_id = item["sample_id"].as_str().context("missing \"sample_id\"")?.to_owned();
    let body = item["conversation"].as_object().context("missing \"conversation\"")?;
    let mut numbers: Vec<u32> =
        body.keys().filter_map(|k| k.strip_prefix("session_")).filter_map(|rest| rest.parse::<u32>().ok()).collect();
    numbers.sort_unstable();
    let mut sessions = Vec::new();
    for n in numbers {
        let turns = body[&format!("session_{n}")].as_array().with_context(|| format!("session_{n} is not a list"))?;
        let when = body
            .get(&format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .with_context(|| format!("session_{n} has no session_{n}_date_time"))?;
        let start = parse_session_time(when).with_context(|| format!("session_{n}_date_time {when:?}"))?;
        let turns = turns
            .iter()
            .enumerate()
            .map(|(i, t)| parse_turn(t).with_context(|| format!("session_{n} turn {}", i + 1)))
            .collect::<Result<Vec<_>>>()?;
        if !turns.is_empty() {
            sessions.push((start, turns));
        }
    }
    let questions = item["qa"]
        .as_array()
        .context("missing \"qa\"")?
        .iter()
        .enumerate()
        .map(|(i, q)| parse_question(q).with_context(|| format!("question {}", i + 1)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Conversation { sample_id, sessions, questions })
}

fn parse_turn(value: &Value) -> Result<Turn> {
    let field = |name: &str| value[name].as_str().with_context(|| format!("missing \"{name}\""));
    let mut text = field("text")?.trim().to_owned();
    if let Some(caption) = value["blip_caption"].as_str().filter(|c| !c.trim().is_empty()) {
        text = format!("{text} [shares a photo: {}]", caption.trim());
    }
    Ok(Turn { speaker: field("speaker")?.to_owned(), dia_id: field("dia_id")?.to_owned(), text })
}

fn parse_question(value: &Value) -> Result<Question> {
    let question = value["question"].as_str().context("missing \"question\"")?.to_owned();
    let category = value["category"].as_u64().context("missing or non-numeric \"category\"")?;
    let evidence = value["evidence"]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(Question { question, evidence, category })
}

/// "1:56 pm on 8 May, 2023" (LoCoMo's session dates), read as UTC.
fn parse_session_time(text: &str) -> Result<Timestamp> {
    // The month written out ("May", "January"), or shortened ("Feb").
    let civil = ["%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"]
        .into_iter()
        .find_map(|format| jiff::civil::DateTime::strptime(format, text.trim()).ok())
        .context("expected \"<h:mm am|pm> on <day> <Month>, <year>\"")?;
    Ok(jiff::tz::Offset::UTC.to_timestamp(civil)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_times_parse_like_locomo_writes_them() {
        let t = parse_session_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(t.to_string(), "2023-05-08T13:56:00Z");
        assert_eq!(parse_session_time("12:04 am on 20 January, 2023").unwrap().to_string(), "2023-01-20T00:04:00Z");
        assert_eq!(parse_session_time("12:30 pm on 1 Feb, 2024").unwrap().to_string(), "2024-02-01T12:30:00Z");
        for bad in ["yesterday", "13:00 pm on 8 May, 2023", "1:56 pm on 8 Maytember, 2023", "1:56 on 8 May, 2023"] {
            assert!(parse_session_time(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn recall_counts_evidence_in_the_top_k() {
        let ids = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let retrieved = ids(&["D1:2", "D1:5", "D2:1", "D3:4"]);
        assert_eq!(recall_at(&ids(&["D1:5", "D3:4"]), &retrieved, 2), 0.5);
        assert_eq!(recall_at(&ids(&["D1:5", "D3:4"]), &retrieved, 4), 1.0);
        assert_eq!(recall_at(&[], &retrieved, 1), 1.0);
        // A malformed evidence string never matches, as in the official count.
        assert_eq!(recall_at(&ids(&["D1:2; D1:5"]), &retrieved, 4), 0.0);
    }
}
