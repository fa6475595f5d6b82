//! `arbor eval updates`: whether the engine knows what is current when memories arrive the way
//! people say them. Each case's events are written in order into its namespace as a person's
//! own entries (no hints, no kind, no subject), all cases into one store; what waits for a person
//! is confirmed (a person entering their own memories would); the jobs run; then each probe is
//! asked by a reader of that namespace (the conversation itself, a conversation of the project,
//! or any conversation for `global`).
//!
//! What the pack offers (its evidence, known facts, constraints and recent items, not the echo
//! of the question) is read in two parts: what it offers as current, and the evidence it marks
//! as possibly outdated (`possibly_outdated_by`). Probes with a `must_not_contain` are update
//! probes, the others keep probes, and each gets one [`Verdict`]:
//! - an update probe is **lost** when a `must_contain` string (the current value) is nowhere
//!   in the pack, **offered** when a `must_not_contain` string (the stale value) is offered as
//!   current, **flagged** when the stale value is there only marked as possibly outdated, and
//!   **retired** when it is not there at all;
//! - a keep probe is **kept** when every `must_contain` string is offered as current,
//!   **doubted** when one is there only marked, and **hidden** when one is missing.
//!
//! Hidden is the count that matters most: a hidden fact is a true fact no later question finds.

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
    /// A store whose configured reasoner (`arbor models use-reasoner`, served on this machine)
    /// judges the pairs, and nothing else (`pair_judge`); `None`: the deterministic rules.
    pub reasoner_of: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    namespace: String,
    /// How the case is written ("note", "chat", "transcript", …), for the breakdowns.
    #[serde(default)]
    style: Option<String>,
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
    /// "update" or "keep", when the set states it; it must agree with `must_not_contain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<ProbeKind>,
    /// What the question is about ("residence", "instrument", …), for the breakdowns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attribute: Option<String>,
    /// The trap a keep probe sets ("other-attribute", "plan-or-wish", …), for the breakdowns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trap: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
enum ProbeKind {
    Update,
    Keep,
}

/// What became of one probe (the module docs say how each is decided).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Retired,
    Flagged,
    Offered,
    Lost,
    Kept,
    Doubted,
    Hidden,
}

impl Verdict {
    pub const ALL: [Verdict; 7] = [
        Verdict::Retired,
        Verdict::Flagged,
        Verdict::Offered,
        Verdict::Lost,
        Verdict::Kept,
        Verdict::Doubted,
        Verdict::Hidden,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Retired => "retired",
            Verdict::Flagged => "flagged",
            Verdict::Offered => "offered",
            Verdict::Lost => "lost",
            Verdict::Kept => "kept",
            Verdict::Doubted => "doubted",
            Verdict::Hidden => "hidden",
        }
    }

    /// Whether the probe passes: the stale value is not offered as current and the current one
    /// is there (an update probe), or the fact is there (a keep probe), marked or not.
    pub fn passes(self) -> bool {
        matches!(self, Verdict::Retired | Verdict::Flagged | Verdict::Kept | Verdict::Doubted)
    }
}

/// How many probes got each verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub retired: usize,
    pub flagged: usize,
    pub offered: usize,
    pub lost: usize,
    pub kept: usize,
    pub doubted: usize,
    pub hidden: usize,
}

impl Counts {
    fn add(&mut self, verdict: Verdict) {
        *self.slot(verdict) += 1;
    }

    fn slot(&mut self, verdict: Verdict) -> &mut usize {
        match verdict {
            Verdict::Retired => &mut self.retired,
            Verdict::Flagged => &mut self.flagged,
            Verdict::Offered => &mut self.offered,
            Verdict::Lost => &mut self.lost,
            Verdict::Kept => &mut self.kept,
            Verdict::Doubted => &mut self.doubted,
            Verdict::Hidden => &mut self.hidden,
        }
    }

    pub fn get(&self, verdict: Verdict) -> usize {
        match verdict {
            Verdict::Retired => self.retired,
            Verdict::Flagged => self.flagged,
            Verdict::Offered => self.offered,
            Verdict::Lost => self.lost,
            Verdict::Kept => self.kept,
            Verdict::Doubted => self.doubted,
            Verdict::Hidden => self.hidden,
        }
    }

    pub fn updates(&self) -> usize {
        self.retired + self.flagged + self.offered + self.lost
    }

    pub fn keeps(&self) -> usize {
        self.kept + self.doubted + self.hidden
    }
}

#[derive(Debug, Serialize)]
struct ProbeResult {
    case: String,
    namespace: String,
    #[serde(flatten)]
    probe: Probe,
    /// An update probe (it has something that must not be offered as current).
    update: bool,
    verdict: Verdict,
    passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    style: Option<String>,
    /// The `must_contain` strings the pack lacked.
    missing: Vec<String>,
    /// The `must_not_contain` strings the pack offered as current.
    offered_stale: Vec<String>,
    /// The strings the pack held only in evidence marked as possibly outdated.
    marked: Vec<String>,
    /// The evidence, best first, as titles.
    evidence: Vec<String>,
    /// The evidence, best first, as the pack gave it: enough to see why a probe failed.
    evidence_detail: Vec<EvidenceDetail>,
}

/// One evidence item of a probe's pack, as `--json` reports it.
#[derive(Debug, Serialize)]
struct EvidenceDetail {
    observed_at: String,
    /// Its similarity to the question in a vector channel, when one found it.
    similarity: Option<f32>,
    /// Marked as possibly outdated (the newer memory's id).
    possibly_outdated_by: Option<String>,
    text: String,
}

/// How many probes of one kind passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub passed: usize,
    pub total: usize,
}

/// How a run used a model (`--reasoner-of`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ModelCalls {
    pub calls: u64,
    pub fallbacks: u64,
}

/// A run's outcome: the update and keep tallies, and each probe's result.
#[derive(Debug, Serialize)]
pub struct UpdatesReport {
    cases: usize,
    events: usize,
    embedder: String,
    reasoner: String,
    /// With `--reasoner-of`: the pair judgements asked of the model, and the steps where its
    /// answer was unusable or late and the rules' decision stood.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<ModelCalls>,
    confirmed: usize,
    /// Candidates confirming refused (they wait for another decision).
    left_for_review: usize,
    pub update_probes: Tally,
    pub keep_probes: Tally,
    /// The seven verdicts over every probe.
    pub counts: Counts,
    /// The verdicts by the probes' `attribute`, by their `trap`, and by the cases' `style`.
    pub by_attribute: std::collections::BTreeMap<String, Counts>,
    pub by_trap: std::collections::BTreeMap<String, Counts>,
    pub by_style: std::collections::BTreeMap<String, Counts>,
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
        for probe in &case.probes {
            let update = !probe.must_not_contain.is_empty();
            if probe.kind.is_some_and(|kind| (kind == ProbeKind::Update) != update) {
                bail!(
                    "case {}: probe {:?} says it is of one kind and has the strings of the other",
                    case.id,
                    probe.query
                );
            }
            if probe.must_contain.is_empty() {
                bail!("case {}: probe {:?} names nothing it must contain", case.id, probe.query);
            }
        }
        namespaces.push(namespace);
    }
    let (root, _temp) = crate::store_dir(args.dir.as_deref(), "arbor-updates-")?;
    let options = compose::InitOptions { embedder: args.embedder, ..compose::InitOptions::default() };
    compose::init(&root, &options).await.with_context(|| format!("creating a store at {}", root.display()))?;
    let mut arbor = compose::open(&root).await?.arbor;
    let mut pair_judge = None;
    if let Some(other) = &args.reasoner_of {
        let config = compose::StoreConfig::load(other)
            .with_context(|| format!("reading the reasoner of the store at {}", other.display()))?
            .reasoner;
        let judge = std::sync::Arc::new(crate::pair_judge::PairJudgeOnly::new(config.build()?, &config)?);
        pair_judge = Some(judge.clone());
        let mut ports = arbor.ports().clone();
        ports.reasoner = judge;
        arbor = arbor_app::Arbor::new(ports, arbor.policy().clone(), arbor.options().clone());
    }

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
    let mut counts = Counts::default();
    let (mut by_attribute, mut by_trap, mut by_style) = Default::default();
    for result in &results {
        counts.add(result.verdict);
        let count_under = |map: &mut std::collections::BTreeMap<String, Counts>, key: &Option<String>| {
            if let Some(key) = key {
                map.entry(key.clone()).or_default().add(result.verdict);
            }
        };
        count_under(&mut by_attribute, &result.probe.attribute);
        count_under(&mut by_trap, &result.probe.trap);
        count_under(&mut by_style, &result.style);
    }
    Ok(UpdatesReport {
        cases: cases.len(),
        events,
        embedder: arbor.ports().embedder.id().to_string(),
        reasoner: arbor.ports().reasoner.id(),
        model: pair_judge.map(|judge| ModelCalls { calls: judge.calls(), fallbacks: arbor.reasoner_fallbacks() }),
        confirmed,
        left_for_review,
        update_probes: tally(true),
        keep_probes: tally(false),
        counts,
        by_attribute,
        by_trap,
        by_style,
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

/// What the pack offers as memory, in two parts: what it offers as current (evidence not
/// marked as possibly outdated, known facts, constraints and recent items), and the evidence it
/// marks as possibly outdated. Neither holds the question, nor the reasons given for choices,
/// which can quote it.
fn offered(pack: &RetrievalPack) -> (String, String) {
    let (mut current, mut marked) = (String::new(), String::new());
    for item in &pack.evidence {
        let text = if item.possibly_outdated_by.is_some() { &mut marked } else { &mut current };
        text.push_str(&item.title);
        text.push('\n');
        text.push_str(&item.text);
        text.push('\n');
    }
    for line in pack.known_facts.iter().chain(&pack.constraints).chain(&pack.recent) {
        current.push_str(line);
        current.push('\n');
    }
    (current.to_lowercase(), marked.to_lowercase())
}

fn judge(case: &Case, probe: &Probe, pack: &RetrievalPack) -> ProbeResult {
    let (current, marked) = offered(pack);
    let in_current = |needle: &String| current.contains(&needle.to_lowercase());
    let in_marked = |needle: &String| marked.contains(&needle.to_lowercase());
    let missing: Vec<String> = probe.must_contain.iter().filter(|n| !in_current(n) && !in_marked(n)).cloned().collect();
    let offered_stale: Vec<String> = probe.must_not_contain.iter().filter(|n| in_current(n)).cloned().collect();
    let update = !probe.must_not_contain.is_empty();
    let only_marked: Vec<String> = if update {
        probe.must_not_contain.iter().filter(|n| !in_current(n) && in_marked(n)).cloned().collect()
    } else {
        probe.must_contain.iter().filter(|n| !in_current(n) && in_marked(n)).cloned().collect()
    };
    let verdict = match (update, missing.is_empty()) {
        (true, false) => Verdict::Lost,
        (true, true) if !offered_stale.is_empty() => Verdict::Offered,
        (true, true) if !only_marked.is_empty() => Verdict::Flagged,
        (true, true) => Verdict::Retired,
        (false, false) => Verdict::Hidden,
        (false, true) if !only_marked.is_empty() => Verdict::Doubted,
        (false, true) => Verdict::Kept,
    };
    ProbeResult {
        case: case.id.clone(),
        namespace: case.namespace.clone(),
        probe: probe.clone(),
        update,
        verdict,
        passed: verdict.passes(),
        style: case.style.clone(),
        missing,
        offered_stale,
        marked: only_marked,
        evidence: pack.evidence.iter().map(|e| e.title.clone()).collect(),
        evidence_detail: pack
            .evidence
            .iter()
            .map(|e| EvidenceDetail {
                observed_at: e.observed_at.to_string(),
                similarity: e.scores.similarity,
                possibly_outdated_by: e.possibly_outdated_by.as_ref().map(ToString::to_string),
                text: e.text.chars().take(300).collect(),
            })
            .collect(),
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
    for result in report.results.iter().filter(|r| !matches!(r.verdict, Verdict::Retired | Verdict::Kept)) {
        out.push_str(&format!(
            "{:<7} {} {:?}",
            result.verdict.as_str().to_uppercase(),
            result.case,
            result.probe.query
        ));
        if !result.missing.is_empty() {
            out.push_str(&format!("  missing {:?}", result.missing));
        }
        if !result.offered_stale.is_empty() {
            out.push_str(&format!("  offered as current {:?}", result.offered_stale));
        }
        if !result.marked.is_empty() {
            out.push_str(&format!("  marked as possibly outdated {:?}", result.marked));
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
    if let Some(model) = report.model {
        out.push_str(&format!(
            "model: {} pair judgements asked, {} unusable or late (the rules' decision stood)\n",
            model.calls, model.fallbacks
        ));
    }
    out.push_str(&counts_line(&report.counts));
    out
}

/// The seven verdicts as two lines, each with its share of its kind of probe.
pub fn counts_line(counts: &Counts) -> String {
    let share = |verdict: Verdict, of: usize| {
        let n = counts.get(verdict);
        match of {
            0 => format!("{} {n}", verdict.as_str()),
            of => format!("{} {n} ({:.1}%)", verdict.as_str(), 100.0 * n as f64 / of as f64),
        }
    };
    let line = |verdicts: &[Verdict], of: usize| verdicts.iter().map(|v| share(*v, of)).collect::<Vec<_>>().join(", ");
    format!(
        "  of {} update probes: {}\n  of {} keep probes:   {}\n",
        counts.updates(),
        line(&Verdict::ALL[..4], counts.updates()),
        counts.keeps(),
        line(&Verdict::ALL[4..], counts.keeps()),
    )
}
