//! `arbor-bench synthetic`: builds a store of synthetic memories on a backend (SQLite by default, or
//! Postgres), with the store's own index or a LanceDB one, and measures ingest throughput,
//! sealing, rebuilding the index from the store, retrieval latency (query embedding
//! excluded, then included), broad questions answered summary-first (latency and body files
//! hydrated per question), peak memory and — on SQLite, side by side in the same run — the
//! same queries issued straight to the text and vector indexes with no filter and no policy layer (the
//! floor). `cargo xtask bench` runs it per size and backend in fresh processes and prints the
//! table.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use arbor_adapters_sqlite::SqliteIndex;
use arbor_app::{Arbor, RetrieveMode, RetrieveRequest};
use arbor_compose::{self as compose, Backend, Database, EmbedderChoice, IndexBackend, InitOptions};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::model::SourceRef;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;
use arbor_eval::Latency;
use arbor_ports::{Embedder, Embedding};
use serde::Serialize;

use crate::choice;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// How many memories to build the store with.
    #[arg(long, default_value_t = 10_000, value_parser = at_least_one)]
    leaves: usize,
    /// How many queries to time.
    #[arg(long, default_value_t = 300, value_parser = at_least_one)]
    queries: usize,
    /// Events per ingest batch.
    #[arg(long, default_value_t = 1_000, value_parser = at_least_one)]
    batch: usize,
    /// Where to build the store (a new directory); default: a temporary one, removed after.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Time queries against the store already in --dir (built by an earlier run) instead of
    /// building one; with a different --index, the store is switched to it and the index
    /// built from the store's rows.
    #[arg(long, requires = "dir", hide = true)]
    reuse: bool,
    /// Where the rows live.
    #[arg(long, value_parser = choice(Backend::CHOICES), default_value = "sqlite")]
    backend: Backend,
    /// Where the search index lives: the store's own, or LanceDB (needs `--features lance`).
    #[arg(long, value_parser = choice(IndexBackend::CHOICES), default_value = "store")]
    index: IndexBackend,
    /// The Postgres server for `--backend postgres` (else ARBOR_DATABASE_URL).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// The Postgres schema to build the store in (default: a new one per run).
    #[arg(long, value_name = "NAME")]
    schema: Option<String>,
    /// The embedder: hashing (no model) or the installed local model.
    #[arg(long, value_parser = choice(EmbedderChoice::CHOICES), default_value = "hashing")]
    embedder: EmbedderChoice,
    /// Sentences embedded one at a time, then in batches of 64, to measure the embedder alone.
    #[arg(long, default_value_t = 256)]
    embed_sentences: usize,
    /// After the queries, write this many new memories (a fifth of them moves and the older homes
    /// they replace, imported out of order) and
    /// time a consolidation pass over them; 0 skips it.
    #[arg(long, default_value_t = 1_000)]
    consolidate_new: usize,
}

/// A count that must be positive: a bench of nothing has no percentiles.
fn at_least_one(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(error) => Err(error.to_string()),
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub backend: Backend,
    pub index: IndexBackend,
    pub embedder: String,
    pub embedding: Option<EmbedThroughput>,
    pub leaves: usize,
    pub events: usize,
    pub batch: usize,
    pub ingest_seconds: f64,
    /// None when the store was reused, not built.
    pub ingest_leaves_per_second: Option<f64>,
    pub seal_seconds: f64,
    /// Nodes (leaves and summaries) the job run after ingest indexed: with an embedder that is
    /// a model, the vectors writes left to it.
    pub jobs_indexed: usize,
    /// `jobs_indexed` per second of that run (sealing included): a lower bound on how fast
    /// the runner embeds in the background, to set beside the embedder's own batched rate.
    pub jobs_indexed_per_second: f64,
    /// Rebuilding the whole index from the store (`arbor jobs reindex`): every body read and
    /// embedded again, the index built and optimized.
    pub index_build_seconds: f64,
    pub summaries: usize,
    pub trees: usize,
    pub queries: usize,
    /// Exact questions, query embedding excluded (computed up front).
    pub retrieve: Latency,
    /// The same questions with the query embedded inside the retrieval, as a caller sees it.
    pub retrieve_with_embedding: Latency,
    /// Broad questions ("what do we know about …"), summary-first, query embedding included.
    pub broad: BroadQuestions,
    /// The floor (the SQLite index only: the BM25 top k and the vector scan over every
    /// namespace, no filter, no policy layer).
    pub floor_text: Option<Latency>,
    pub floor_vector: Option<Latency>,
    pub floor: Option<Latency>,
    pub ratio_p50: Option<f64>,
    pub ratio_p95: Option<f64>,
    pub mean_evidence: f64,
    /// The evidence each timed exact question got, node ids in pack order: two runs over the
    /// same store (the SQLite index and the LanceDB index) are compared by what they answered.
    pub answers: Vec<Vec<String>>,
    /// A consolidation pass over the memories written after the store was built.
    pub consolidation: Option<ConsolidationTiming>,
    pub peak_rss_mib: f64,
    /// Resident memory after the questions: what the store costs to keep open, beside the
    /// peak its building reached.
    pub rss_after_mib: f64,
    /// The SQLite index's in-memory search engine, by part (the SQLite index only).
    pub mirror_mib: Option<MirrorMib>,
}

/// One consolidation pass over `new` memories written into a store of `leaves`.
#[derive(Debug, Serialize)]
pub(crate) struct ConsolidationTiming {
    pub new: usize,
    pub read: usize,
    pub applied: usize,
    pub left_for_review: usize,
    pub seconds: f64,
}

/// Broad questions: how long they take and how many body files each hydrates. Summary-first
/// traversal and the budgets keep the files bounded however large the corpus grows.
#[derive(Debug, Serialize)]
pub(crate) struct BroadQuestions {
    pub latency: Latency,
    pub bodies_read_mean: f64,
    pub bodies_read_max: usize,
    pub summaries_mean: f64,
    pub candidates_mean: f64,
}

/// How many of the commonest generated words play the part of function words.
const FUNCTION_WORD_RANKS: usize = 50;

/// A small deterministic generator of English-like memories.
struct Corpus {
    state: u64,
    vocabulary: Vec<String>,
}

const NAMES: &[&str] = &[
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Gus", "Hana", "Ivan", "Jade", "Kofi", "Lena", "Mateo", "Nia",
    "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara",
];
const VERBS: &[&str] =
    &["prefers", "visited", "decided", "mentioned", "booked", "finished", "started", "moved", "bought", "planned"];

impl Corpus {
    fn new(seed: u64) -> Corpus {
        let syllables =
            ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "qu", "bri", "den", "fa", "gor", "hin", "ju", "nex", "pol"];
        let mut corpus = Corpus { state: seed.max(1), vocabulary: Vec::new() };
        for _ in 0..8_000 {
            let n = 2 + corpus.below(2);
            let word: String = (0..n).map(|_| syllables[corpus.below(syllables.len())]).collect();
            corpus.vocabulary.push(word);
        }
        corpus
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// The rank of a word drawn with a Zipf-like distribution: a few are common, most rare.
    fn rank(&mut self) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = ((self.vocabulary.len() as f64).powf(u) - 1.0) as usize;
        rank.min(self.vocabulary.len() - 1)
    }

    fn word(&mut self) -> &str {
        let rank = self.rank();
        &self.vocabulary[rank]
    }

    /// A word as a question would use it. The head of this distribution is as frequent as
    /// English function words (the commonest is in most memories), which real questions lose
    /// to stopword removal; questions are made of the content words below it.
    fn content_word(&mut self) -> &str {
        let rank = loop {
            let rank = self.rank();
            if rank >= FUNCTION_WORD_RANKS {
                break rank;
            }
        };
        &self.vocabulary[rank]
    }

    fn memory(&mut self, i: usize) -> String {
        let name = NAMES[self.below(NAMES.len())];
        let verb = VERBS[self.below(VERBS.len())];
        let n = 6 + self.below(12);
        let words: Vec<String> = (0..n).map(|_| self.word().to_owned()).collect();
        format!("{name} {verb} the {} near {} (note {i}).", words.join(" "), self.word())
    }

    fn query(&mut self) -> String {
        let n = 2 + self.below(3);
        (0..n).map(|_| self.content_word().to_owned()).collect::<Vec<_>>().join(" ")
    }
}

fn peak_rss_mib() -> f64 {
    rss_mib("VmHWM:")
}

/// The process's resident memory now, in MiB, beside its peak ([`peak_rss_mib`]).
fn current_rss_mib() -> f64 {
    rss_mib("VmRSS:")
}

/// A `/proc/self/status` figure in kB, as MiB (0 where there is none).
fn rss_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

/// Where the SQLite index's in-memory search engine keeps its heap, in MiB.
#[derive(Debug, Serialize)]
pub(crate) struct MirrorMib {
    pub documents: f64,
    pub posting_lists: f64,
    pub document_terms: f64,
    pub vectors: f64,
}

impl MirrorMib {
    fn of(footprint: arbor_adapters_sqlite::Footprint) -> MirrorMib {
        let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
        MirrorMib {
            documents: mib(footprint.documents),
            posting_lists: mib(footprint.posting_lists),
            document_terms: mib(footprint.document_terms),
            vectors: mib(footprint.vectors),
        }
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

pub(crate) async fn run(args: Args, json: bool) -> Result<()> {
    let temp = tempfile::Builder::new().prefix("arbor-bench-").tempdir()?;
    let root = args.dir.clone().unwrap_or_else(|| temp.path().join("store"));
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let options = InitOptions {
        backend: args.backend,
        database_url: args.database_url.clone(),
        schema: (args.backend == Backend::Postgres)
            .then(|| args.schema.clone().unwrap_or_else(|| format!("arbor_bench_{stamp}_{}", std::process::id()))),
        embedder: args.embedder,
        index: args.index,
    };
    if !args.reuse {
        compose::init(&root, &options).await.with_context(|| format!("creating a store at {}", root.display()))?;
    }
    let config = compose::StoreConfig::load(&root)?;
    if args.reuse && config.index != args.index {
        // The rows stay; the index is built from them below, and that is what is timed.
        compose::update_config(&root, |config| config.index = args.index)?;
    }
    // The store as every command opens it: the floor searches are timed on its own database.
    let opened = compose::open(&root).await?;
    let floor_index = match (&opened.database, opened.config.index) {
        (Database::Sqlite(db), IndexBackend::Store) => Some(SqliteIndex::new(db.clone())),
        _ => None,
    };
    let arbor = opened.arbor;
    let config = opened.config;
    let embedder = arbor.ports().embedder.clone();
    let embedding = embed_throughput(&embedder, args.embed_sentences).await?;
    let chain = arbor.read_chain(&TrustedContext::Conversation {
        conversation: ScopeId::parse("bench")?,
        project: None,
        agent: None,
    })?;

    // Ingest.
    let mut corpus = Corpus::new(0x5EED);
    let start = Timestamp::from_second(1_700_000_000)?;
    // Each batch is generated as it is sent, so the peak RSS measures the store, not a copy of
    // every event held by the generator (a reused store's events are generated all the same:
    // the questions come from the generator's state after them).
    let mut ingest_seconds = 0.0;
    let mut next = 0;
    while next < args.leaves {
        let end = (next + args.batch).min(args.leaves);
        let batch: Vec<Event> = (next..end)
            .map(|i| {
                let mut event = Event::user_message(corpus.memory(i));
                event.source = SourceRef::Message { conversation: None, message_id: format!("m{i}") };
                event.observed_at = start.checked_add(jiff::SignedDuration::from_secs(i as i64 * 60)).ok();
                event
            })
            .collect();
        next = end;
        if args.reuse {
            continue;
        }
        let began = Instant::now();
        for outcome in arbor.ingest_batch(&chain, batch).await? {
            outcome?;
        }
        ingest_seconds += began.elapsed().as_secs_f64();
    }
    let began = Instant::now();
    let jobs = arbor.run_jobs(None).await?;
    let seal_seconds = began.elapsed().as_secs_f64();
    let began = Instant::now();
    arbor.rebuild_index().await?;
    let index_build_seconds = began.elapsed().as_secs_f64();
    let counts = arbor.ports().store.counts().await?;
    let leaves: usize = counts.leaves_by_status.iter().map(|(_, n)| n).sum();

    // Queries, with their embeddings computed up front: embedding is not what is timed.
    let queries: Vec<String> = (0..args.queries + 20).map(|_| corpus.query()).collect();
    let embeddings = embedder.embed(&queries).await?;
    let mut retrieve = Vec::new();
    let mut evidence = 0usize;
    let mut answers = Vec::with_capacity(args.queries);
    for (i, (query, embedding)) in queries.iter().zip(&embeddings).enumerate() {
        let mut request = RetrieveRequest::new(query.clone());
        request.mode = RetrieveMode::ExactEvidence;
        request.query_embedding = Some(embedding.clone());
        let began = Instant::now();
        let pack = arbor.retrieve(&chain, &request).await?;
        if i >= 20 {
            retrieve.push(ms(began));
            evidence += pack.evidence.len();
            answers.push(pack.evidence.iter().map(|item| item.node_id.to_string()).collect());
        }
    }
    let (mut floor_text, mut floor_vector, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(index) = &floor_index {
        for (i, (query, values)) in queries.iter().zip(&embeddings).enumerate() {
            let embedding = Embedding { embedder: embedder.id(), values: values.clone() };
            let began = Instant::now();
            index.floor_text_search(query, 50)?;
            let text = ms(began);
            let began = Instant::now();
            index.floor_vector_search(&embedding, 50)?;
            let vector = ms(began);
            if i >= 20 {
                floor_text.push(text);
                floor_vector.push(vector);
                floor.push(text + vector);
            }
        }
    }
    // The same questions as a caller asks them: the query is embedded inside the retrieval.
    let mut with_embedding = Vec::new();
    for (i, query) in queries.iter().enumerate() {
        let mut request = RetrieveRequest::new(query.clone());
        request.mode = RetrieveMode::ExactEvidence;
        let began = Instant::now();
        arbor.retrieve(&chain, &request).await?;
        if i >= 20 {
            with_embedding.push(ms(began));
        }
    }
    let broad = broad_questions(&arbor, &chain, &mut corpus, args.queries).await?;
    let consolidation = match args.consolidate_new {
        0 => None,
        new => Some(consolidation_pass(&arbor, &chain, &mut corpus, args.leaves, new).await?),
    };
    let retrieve = Latency::of(retrieve);
    let floor = floor_index.is_some().then(|| Latency::of(floor));
    let report = Report {
        backend: args.backend,
        index: config.index,
        embedder: embedder.id().to_string(),
        embedding,
        leaves,
        events: args.leaves,
        batch: args.batch,
        ingest_seconds,
        ingest_leaves_per_second: (!args.reuse).then(|| leaves as f64 / ingest_seconds),
        seal_seconds,
        jobs_indexed: jobs.indexed,
        jobs_indexed_per_second: jobs.indexed as f64 / seal_seconds.max(1e-9),
        index_build_seconds,
        summaries: counts.summaries_current,
        trees: counts.trees,
        queries: args.queries,
        ratio_p50: floor.as_ref().map(|f| retrieve.p50_ms / f.p50_ms),
        ratio_p95: floor.as_ref().map(|f| retrieve.p95_ms / f.p95_ms),
        retrieve,
        retrieve_with_embedding: Latency::of(with_embedding),
        broad,
        floor_text: floor_index.is_some().then(|| Latency::of(floor_text)),
        floor_vector: floor_index.is_some().then(|| Latency::of(floor_vector)),
        floor,
        mean_evidence: evidence as f64 / args.queries as f64,
        answers,
        consolidation,
        peak_rss_mib: peak_rss_mib(),
        rss_after_mib: current_rss_mib(),
        mirror_mib: floor_index.as_ref().map(|index| MirrorMib::of(index.footprint())),
    };
    if json {
        crate::print(&(serde_json::to_string_pretty(&report)? + "\n"));
    } else {
        crate::print(&format!("{report:#?}\n"));
    }
    Ok(())
}

/// Writes `new` memories after the store was built, then times one consolidation pass from the
/// mark just before them: the work a scheduled pass does, which must follow what changed, not
/// the store's size. A fifth of them are history imported out of order, the case a pass exists
/// for: a move ("Dana just moved to Lyon for a new job.") written before the older statement
/// of where that person lived ("Dana lives in Porto.", observed a month earlier), which no
/// write could replace, since it arrived second.
async fn consolidation_pass(
    arbor: &Arbor,
    chain: &arbor_domain::read_chain::ReadChain,
    corpus: &mut Corpus,
    built: usize,
    new: usize,
) -> Result<ConsolidationTiming> {
    let mark = arbor_ports::WriteMark { at: arbor.ports().clock.now(), id: arbor_domain::id::LeafId::parse("leaf-0")? };
    let now = arbor.ports().clock.now();
    let month_ago = now.checked_sub(jiff::SignedDuration::from_hours(24 * 30))?;
    let place = |corpus: &mut Corpus| {
        let word = corpus.content_word().to_owned();
        word[..1].to_uppercase() + &word[1..]
    };
    let events: Vec<Event> = (0..new)
        .map(|i| {
            let name = NAMES[i / 10 % NAMES.len()];
            let (text, observed_at) = match i % 10 {
                0 => (format!("{name} just moved to {} for a new job.", place(corpus)), now),
                1 => (format!("{name} lives in {}.", place(corpus)), month_ago),
                _ => (corpus.memory(built + i), now),
            };
            let mut event = Event::user_message(text);
            event.observed_at = Some(observed_at);
            event.source = SourceRef::Message { conversation: None, message_id: format!("n{i}") };
            event
        })
        .collect();
    for batch in events.chunks(100) {
        for outcome in arbor.ingest_batch(chain, batch.to_vec()).await? {
            outcome?;
        }
    }
    // No margin before the mark: the store was built moments ago, and the default margin would
    // re-read the last ten minutes of its build, which a pass on a store in use does not meet.
    let request = arbor_app::ConsolidateRequest {
        namespaces: vec![(chain.write_namespace().clone(), Some(mark))],
        dry_run: false,
        resume_margin: jiff::SignedDuration::ZERO,
        model_calls: 0,
        max_read: arbor_app::MAX_READ_PER_PASS,
    };
    let began = Instant::now();
    let run = arbor.consolidate(&request).await?;
    let seconds = began.elapsed().as_secs_f64();
    Ok(ConsolidationTiming {
        new,
        read: run.namespaces.iter().map(|n| n.read).sum(),
        applied: run.applied(),
        left_for_review: run.left_for_review(),
        seconds,
    })
}

/// Broad questions about the corpus's people, with the default budgets: latency (query
/// embedding included) and the body files each one hydrates.
async fn broad_questions(
    arbor: &Arbor,
    chain: &arbor_domain::read_chain::ReadChain,
    corpus: &mut Corpus,
    queries: usize,
) -> Result<BroadQuestions> {
    let (mut latency, mut bodies, mut summaries, mut candidates) = (Vec::new(), Vec::new(), 0usize, 0usize);
    for i in 0..queries.min(200) {
        let name = NAMES[i % NAMES.len()];
        let request = RetrieveRequest::new(format!("what do we know about {name} and {}", corpus.content_word()));
        let began = Instant::now();
        let pack = arbor.retrieve(chain, &request).await?;
        latency.push(ms(began));
        anyhow::ensure!(pack.intent.mode == RetrieveMode::BroadSummary, "{:?} was not read as broad", request.query);
        bodies.push(pack.coverage.bodies_read);
        summaries += pack.evidence.iter().filter(|e| e.node == arbor_domain::visibility::NodeKind::Summary).count();
        candidates += pack.coverage.candidates;
    }
    let n = bodies.len().max(1) as f64;
    Ok(BroadQuestions {
        latency: Latency::of(latency),
        bodies_read_mean: bodies.iter().sum::<usize>() as f64 / n,
        bodies_read_max: bodies.iter().copied().max().unwrap_or(0),
        summaries_mean: summaries as f64 / n,
        candidates_mean: candidates as f64 / n,
    })
}

/// The embedder alone: sentences per second one at a time, and in batches of 64.
#[derive(Debug, Serialize)]
pub(crate) struct EmbedThroughput {
    pub sentences: usize,
    pub batch_1_per_second: f64,
    pub batch_64_per_second: f64,
}

async fn embed_throughput(embedder: &Arc<dyn Embedder>, sentences: usize) -> Result<Option<EmbedThroughput>> {
    if sentences == 0 {
        return Ok(None);
    }
    let mut corpus = Corpus::new(0xE3BED);
    let texts: Vec<String> = (0..sentences).map(|i| corpus.memory(i)).collect();
    // One warm-up call: the first pays for allocating the model's buffers.
    embedder.embed(&texts[..1]).await?;
    let began = Instant::now();
    for text in &texts {
        embedder.embed(std::slice::from_ref(text)).await?;
    }
    let batch_1_per_second = sentences as f64 / began.elapsed().as_secs_f64();
    let began = Instant::now();
    for batch in texts.chunks(64) {
        embedder.embed(batch).await?;
    }
    let batch_64_per_second = sentences as f64 / began.elapsed().as_secs_f64();
    Ok(Some(EmbedThroughput { sentences, batch_1_per_second, batch_64_per_second }))
}
