//! `arbor eval updates`: whether the engine knows what is current when memories arrive the way
//! people say them. Each case's events are written in order into its namespace as a person's
//! own entries (no hints, no kind, no subject), all cases into one store; what waits for a person
//! is confirmed (a person entering their own memories would); the jobs run; then each probe is
//! asked by a reader of that namespace (the conversation itself, a conversation of the project,
//! or any conversation for `global`). A probe passes when the pack — its evidence, known facts,
//! constraints and recent items, not the echo of the question — holds every `must_contain`
//! string and none of the `must_not_contain` ones. Probes with a `must_not_contain` are update
//! probes (the stale fact must not be offered as current); the others are keep probes (a distinct
//! fact must survive).

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use arbor_app::{Arbor, RetrievalPack, RetrieveRequest};
use arbor_compose::{self as compose, EmbedderChoice};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::namespace::{Namespace, NamespaceKind};
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use arbor_domain::time::Timestamp;
use serde::{Deserialize, Serialize};

/// What to evaluate, and how.
#[derive(Debug, Clone)]
pub struct UpdatesOptions {
    /// The cases: a JSON list of `{id, namespace, events: [{observed_at, text}], probes: [{query,
    /// must_contain, must_not_contain}]}`.
    pub data: PathBuf,
    /// Where to build the store (a new or empty directory, kept); `None`: a temporary one,
    /// removed afterwards.
    pub dir: Option<PathBuf>,
    pub embedder: EmbedderChoice,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    namespace: String,
    events: Vec<CaseEvent>,
    probes: Vec<Probe>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEvent {
    observed_at: Timestamp,
    text: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Probe {
    query: String,
    must_contain: Vec<String>,
    #[serde(default)]
    must_not_contain: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ProbeResult {
    case: String,
    namespace: String,
    #[serde(flatten)]
    probe: Probe,
    /// An update probe (it has something that must not be offered as current).
    update: bool,
    passed: bool,
    /// The `must_contain` strings the pack lacked.
    missing: Vec<String>,
    /// The `must_not_contain` strings the pack offered.
    offered_stale: Vec<String>,
    /// The evidence, best first, as titles.
    evidence: Vec<String>,
}

/// How many probes of one kind passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub passed: usize,
    pub total: usize,
}

/// A run's outcome: the update and keep tallies, and each probe's result.
#[derive(Debug, Serialize)]
pub struct UpdatesReport {
    cases: usize,
    events: usize,
    embedder: String,
    reasoner: String,
    confirmed: usize,
    /// Candidates confirming refused (they wait for another decision).
    left_for_review: usize,
    pub update_probes: Tally,
    pub keep_probes: Tally,
    results: Vec<ProbeResult>,
}

/// Writes every case's events into one new store, then asks every probe.
pub async fn run(args: &UpdatesOptions) -> Result<UpdatesReport> {
    let text = std::fs::read_to_string(&args.data).with_context(|| format!("reading {}", args.data.display()))?;
    let cases: Vec<Case> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a list of update cases", args.data.display()))?;
    if cases.is_empty() {
        bail!("{} holds no cases", args.data.display());
    }
    // Every case is checked before anything is written, so a bad case costs no store.
    let mut namespaces = Vec::with_capacity(cases.len());
    for case in &cases {
        let namespace = Namespace::parse(&case.namespace)
            .with_context(|| format!("case {}: {:?} is not a namespace", case.id, case.namespace))?;
        reader_of(&namespace).with_context(|| format!("case {}", case.id))?;
        if case.events.iter().any(|e| e.text.trim().is_empty()) || case.probes.iter().any(|p| p.query.trim().is_empty())
        {
            bail!("case {}: an event's text or a probe's query is empty", case.id);
        }
        namespaces.push(namespace);
    }
    let (root, _temp) = crate::store_dir(args.dir.as_deref(), "arbor-updates-")?;
    let options = compose::InitOptions { embedder: args.embedder, ..compose::InitOptions::default() };
    compose::init(&root, &options).await.with_context(|| format!("creating a store at {}", root.display()))?;
    let arbor = compose::open(&root).await?.arbor;

    let mut events = 0;
    let mut writers = Vec::with_capacity(cases.len());
    for (case, namespace) in cases.iter().zip(namespaces) {
        let writer = arbor.read_chain(&TrustedContext::Only { namespace: namespace.clone() })?;
        for event in &case.events {
            let mut entry = Event::user_message(event.text.clone());
            entry.observed_at = Some(event.observed_at);
            arbor
                .ingest(&writer, entry)
                .await
                .with_context(|| format!("case {}: writing {:?}", case.id, event.text))?;
            events += 1;
        }
        writers.push((namespace, writer));
    }
    let (confirmed, left_for_review) = confirm_everything(&arbor, &writers).await?;
    let jobs = arbor.run_jobs(None).await?;
    if jobs.failed > 0 {
        bail!("{} jobs failed", jobs.failed);
    }

    let mut results = Vec::new();
    for (case, (namespace, _)) in cases.iter().zip(&writers) {
        let reader = arbor.read_chain(&reader_of(namespace)?)?;
        for probe in &case.probes {
            let pack = arbor.retrieve(&reader, &RetrieveRequest::new(probe.query.clone())).await?;
            results.push(judge(case, probe, &pack));
        }
    }
    let tally = |update: bool| Tally {
        passed: results.iter().filter(|r| r.update == update && r.passed).count(),
        total: results.iter().filter(|r| r.update == update).count(),
    };
    Ok(UpdatesReport {
        cases: cases.len(),
        events,
        embedder: arbor.ports().embedder.id().to_string(),
        reasoner: arbor.ports().reasoner.id(),
        confirmed,
        left_for_review,
        update_probes: tally(true),
        keep_probes: tally(false),
        results,
    })
}

/// Confirms every candidate in the cases' namespaces, as the person who entered them would;
/// returns how many were confirmed and how many were refused (a conflict that needs a decision
/// other than confirming stays, and is reported).
async fn confirm_everything(arbor: &Arbor, writers: &[(Namespace, ReadChain)]) -> Result<(usize, usize)> {
    let (mut confirmed, mut refused) = (0, 0);
    let mut seen = BTreeSet::new();
    for (namespace, writer) in writers {
        if !seen.insert(namespace.to_string()) {
            continue;
        }
        for item in arbor.pending_review(writer).await? {
            match arbor.confirm(writer, &item.leaf.id).await {
                Ok(_) => confirmed += 1,
                Err(error) => {
                    tracing::info!(leaf = %item.leaf.id, %error, "a candidate could not be confirmed");
                    refused += 1;
                }
            }
        }
    }
    Ok((confirmed, refused))
}

/// A conversation whose chain reads `namespace`: the conversation itself, a conversation of the
/// project, or any conversation for the global layer.
fn reader_of(namespace: &Namespace) -> Result<TrustedContext> {
    let reader = ScopeId::parse("updates-reader")?;
    let (kind, id) = (namespace.kind(), namespace.scope());
    Ok(match (kind, id) {
        (NamespaceKind::Conversation, Some(id)) => {
            TrustedContext::Conversation { conversation: id.clone(), project: None, agent: None }
        }
        (NamespaceKind::Project, Some(id)) => {
            TrustedContext::Conversation { conversation: reader, project: Some(id.clone()), agent: None }
        }
        (NamespaceKind::Global, _) => TrustedContext::Conversation { conversation: reader, project: None, agent: None },
        _ => bail!("no conversation reads {namespace}: cases live in global, a project or a conversation"),
    })
}

/// What the pack offers as memory: evidence, known facts, constraints and recent items (not the
/// question, nor the reasons given for choices, which can quote it).
fn offered(pack: &RetrievalPack) -> String {
    let mut text = String::new();
    for item in &pack.evidence {
        text.push_str(&item.title);
        text.push('\n');
        text.push_str(&item.text);
        text.push('\n');
    }
    for line in pack.known_facts.iter().chain(&pack.constraints).chain(&pack.recent) {
        text.push_str(line);
        text.push('\n');
    }
    text
}

fn judge(case: &Case, probe: &Probe, pack: &RetrievalPack) -> ProbeResult {
    let offered = offered(pack).to_lowercase();
    let holds = |needle: &String| offered.contains(&needle.to_lowercase());
    let missing: Vec<String> = probe.must_contain.iter().filter(|n| !holds(n)).cloned().collect();
    let offered_stale: Vec<String> = probe.must_not_contain.iter().filter(|n| holds(n)).cloned().collect();
    ProbeResult {
        case: case.id.clone(),
        namespace: case.namespace.clone(),
        probe: probe.clone(),
        update: !probe.must_not_contain.is_empty(),
        passed: missing.is_empty() && offered_stale.is_empty(),
        missing,
        offered_stale,
        evidence: pack.evidence.iter().map(|e| e.title.clone()).collect(),
    }
}

impl UpdatesReport {
    /// The report as text for people: the failed probes, then both tallies.
    pub fn render(&self) -> String {
        render(self)
    }
}

fn render(report: &UpdatesReport) -> String {
    let mut out = String::new();
    for result in report.results.iter().filter(|r| !r.passed) {
        out.push_str(&format!("FAIL {} {:?}", result.case, result.probe.query));
        if !result.missing.is_empty() {
            out.push_str(&format!("  missing {:?}", result.missing));
        }
        if !result.offered_stale.is_empty() {
            out.push_str(&format!("  offered as current {:?}", result.offered_stale));
        }
        out.push('\n');
    }
    let tally = |t: &Tally| match t.total {
        0 => "none in the data".to_string(),
        total => format!("{} of {total} pass ({:.0}%)", t.passed, 100.0 * t.passed as f64 / total as f64),
    };
    out.push_str(&format!(
        "{} cases, {} events, {} confirmed, {} left for review; embedder {}, reasoner {}\nupdate probes: {}\nkeep probes:   {}\n",
        report.cases,
        report.events,
        report.confirmed,
        report.left_for_review,
        report.embedder,
        report.reasoner,
        tally(&report.update_probes),
        tally(&report.keep_probes),
    ));
    out
}
