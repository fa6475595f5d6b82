//! The operations both servers offer, bound to one read chain: wire inputs in, app calls,
//! wire outputs or an [`ApiError`] with a stable code out.

use std::time::Instant;

use arbor_app::{AppError, Arbor, CompactOptions, Correction, Disclosure, NodeView, RetrieveMode, RetrieveRequest};
use arbor_domain::event::{Event, EventHints};
use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Actor, Label, MAX_TITLE_CHARS, MemoryKind, SourceRef, TreeId};
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::wire;

/// An error a client can act on: an HTTP status, a stable code, and a message that never
/// says whether something outside the caller's scope exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub(crate) fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "invalid_request", message)
    }

    pub(crate) fn body(&self) -> wire::ErrorBody {
        wire::ErrorBody { error: wire::ErrorDetail { code: self.code.to_owned(), message: self.message.clone() } }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl From<AppError> for ApiError {
    fn from(error: AppError) -> ApiError {
        use arbor_ports::Error as Port;
        match &error {
            AppError::Port(Port::NotFound { .. }) => ApiError::new(404, "not_found", error.to_string()),
            AppError::Port(Port::Invalid { .. }) | AppError::InvalidEvent(_) | AppError::InvalidRequest(_) => {
                ApiError::invalid(error.to_string())
            }
            AppError::Correction(refusal) if refusal.is_stale() => {
                ApiError::new(412, "precondition_failed", error.to_string())
            }
            AppError::Correction(_)
            | AppError::Transition(_)
            | AppError::NotNow(_)
            | AppError::Port(Port::Conflict { .. } | Port::AlreadyExists { .. }) => {
                ApiError::new(409, "conflict", error.to_string())
            }
            AppError::ReadOnlyLayer { .. } | AppError::NeedsPerson { .. } | AppError::ReadChain(_) => {
                ApiError::new(403, "forbidden", error.to_string())
            }
            // A file changed on disk since it was written (edited by hand): the store's, not the
            // caller's, to settle; its path stays in the log.
            AppError::Port(Port::Integrity { .. }) => ApiError::new(
                409,
                "conflict",
                "this memory's file changed on disk since it was written; the store's owner adopts the edit \
                 (`arbor fsck --adopt-edits`, or Pending in the memory centre) or puts the file back",
            ),
            AppError::Contention { .. } | AppError::Port(Port::Unavailable { .. }) => {
                ApiError::new(503, "unavailable", error.to_string())
            }
            _ => {
                // Storage internals (paths, SQL) stay in the server's log.
                tracing::error!(error = %format!("{error:#}"), "request failed");
                ApiError::new(500, "internal", "the server could not complete the request; see its log")
            }
        }
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

// Receipts on the wire (here, not in `wire`: the fuzz targets compile `wire` without the app).
impl From<arbor_app::CorrectionReceipt> for wire::Corrected {
    fn from(receipt: arbor_app::CorrectionReceipt) -> wire::Corrected {
        wire::Corrected {
            leaf_id: receipt.leaf_id.to_string(),
            version: receipt.version,
            status: receipt.status.as_str().to_owned(),
            replaces: receipt.replaces.to_string(),
            replaced_version: receipt.replaced_version,
            namespace: receipt.namespace.to_string(),
            tree_id: receipt.tree_id.to_string(),
        }
    }
}

impl From<arbor_app::ReviewReceipt> for wire::Reviewed {
    fn from(receipt: arbor_app::ReviewReceipt) -> wire::Reviewed {
        wire::Reviewed {
            leaf_id: receipt.leaf_id.to_string(),
            namespace: receipt.namespace.to_string(),
            status: receipt.status.as_str().to_owned(),
            superseded: receipt.superseded.iter().map(ToString::to_string).collect(),
        }
    }
}

/// How often a server runs its queued jobs.
const JOB_TICK: std::time::Duration = std::time::Duration::from_secs(2);

/// Every how many job ticks a server looks for memory documents a person edited (a minute):
/// each look reads every body once, so it is not done on every tick, and an edit a person
/// saved shows in retrieval as the new version within a minute.
const ADOPT_EVERY_TICKS: u64 = 30;

/// The engine, and the read chain and speaker every request runs under.
#[derive(Debug)]
pub struct Service {
    /// Shared by every binding to the same store (a tenant's tokens).
    arbor: std::sync::Arc<Arbor>,
    chain: ReadChain,
    /// Who the words sent to this server are from, fixed when it starts.
    speaker: Actor,
    /// Where the store keeps its consolidation reports, when it has any.
    reports: Option<std::path::PathBuf>,
    /// How a person confirms what waits: at the store's command line, or (a multi-tenant
    /// server's stores) with an operator's token over HTTP.
    review: ReviewBy,
    /// The store's settings file, for the memory centre, when this server may change it.
    settings: Option<std::sync::Arc<dyn crate::console::SettingsFile>>,
}

/// Where a candidate is confirmed, for the sentence a save answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewBy {
    CommandLine,
    OperatorToken,
}

/// Reads the app's serialization of `value` as the wire mirror `T`.
pub(crate) fn mirror<T: DeserializeOwned>(value: &impl Serialize) -> ApiResult<T> {
    let failed = |error: serde_json::Error| {
        tracing::error!(%error, "a result does not fit its wire type");
        ApiError::new(500, "internal", "the server could not complete the request; see its log")
    };
    serde_json::from_value(serde_json::to_value(value).map_err(failed)?).map_err(failed)
}

fn timestamp(field: &str, value: Option<&str>) -> ApiResult<Option<Timestamp>> {
    value
        .map(|v| {
            arbor_domain::time::parse_storable_instant(v).map_err(|e| ApiError::invalid(format!("`{field}`: {e}")))
        })
        .transpose()
}

pub(crate) fn kind(value: &str) -> ApiResult<MemoryKind> {
    MemoryKind::parse(value).ok_or_else(|| {
        let known: Vec<&str> = MemoryKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::invalid(format!("unknown kind {value:?}; expected one of {}", known.join(", ")))
    })
}

pub(crate) fn tree(value: &str) -> ApiResult<TreeId> {
    TreeId::parse(value).map_err(|e| ApiError::invalid(format!("`tree`: {e}")))
}

fn title_field(title: Option<&str>) -> ApiResult<()> {
    match title {
        Some(title) if !wire::is_title(title) || title.chars().count() > MAX_TITLE_CHARS => {
            Err(ApiError::invalid(format!(
                "`title` must be 1 to {MAX_TITLE_CHARS} characters, not all whitespace, without control characters"
            )))
        }
        _ => Ok(()),
    }
}

pub(crate) fn in_range(field: &str, value: Option<u32>, min: u32, max: u32) -> ApiResult<Option<usize>> {
    match value {
        Some(v) if !(min..=max).contains(&v) => {
            Err(ApiError::invalid(format!("`{field}` must be between {min} and {max}, not {v}")))
        }
        other => Ok(other.map(|v| v as usize)),
    }
}

fn text_field(field: &str, value: &str, max_chars: usize) -> ApiResult<()> {
    if !wire::is_some_text(value) {
        return Err(ApiError::invalid(format!("`{field}` is empty or holds a NUL character")));
    }
    if value.chars().count() > max_chars {
        return Err(ApiError::invalid(format!("`{field}` is longer than {max_chars} characters")));
    }
    Ok(())
}

/// A model's token budget for an answer from memory, when it names none: five memories of a
/// paragraph each, with room to spare.
const DEFAULT_ASK_TOKENS: usize = 1_000;

fn compact(pack: &arbor_app::RetrievalPack, options: CompactOptions) -> ApiResult<wire::CompactPack> {
    let compact = pack.compact(options);
    let mut value = serde_json::to_value(&compact).map_err(|error| {
        tracing::error!(%error, "a compact pack does not serialize");
        ApiError::new(500, "internal", "the server could not complete the request; see its log")
    })?;
    value["text"] = serde_json::Value::String(compact.render());
    serde_json::from_value(value).map_err(|error| {
        tracing::error!(%error, "a compact pack does not fit its wire type");
        ApiError::new(500, "internal", "the server could not complete the request; see its log")
    })
}

/// An event the engine will take: every rule of `Event::validate` (sizes, control characters
/// in references, storable instants) checked before anything is written, so one bad item of a
/// batch refuses the request instead of landing as a per-item error beside written ones.
fn checked(event: Event) -> ApiResult<Event> {
    event.validate().map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok(event)
}

/// A refused item of a batch, named by its place: the whole request is refused, so nothing
/// of it is half-written.
fn at_item(field: &str, index: usize, error: ApiError) -> ApiError {
    ApiError { message: format!("`{field}[{index}]`: {}", error.message), ..error }
}

/// The most items a batch of saves or chat messages holds: one write, bounded.
const MAX_BATCH: usize = 100;

/// A message id as the schema states it, checked even for a message nothing is kept of.
fn message_id_field(message_id: Option<&str>) -> ApiResult<()> {
    if message_id.is_some_and(|m| m.is_empty() || m.chars().count() > 64 || m.chars().any(char::is_control)) {
        return Err(ApiError::invalid("a message id must be 1 to 64 characters, without control characters"));
    }
    Ok(())
}

/// What an ingest made of each chunk of a save (before [`Service::saved`] hides duplicates the
/// caller cannot read).
fn chunks_of(report: arbor_app::IngestReport) -> Vec<wire::Saved> {
    use arbor_app::IngestOutcome as O;
    report
        .chunks
        .into_iter()
        .map(|chunk| {
            let (leaf_id, status, replaces, reason) = match &chunk.outcome {
                O::Created { leaf_id, status } => (Some(leaf_id), Some(*status), None, None),
                O::Superseding { leaf_id, replaces, status, .. } => {
                    (Some(leaf_id), Some(*status), Some(replaces), None)
                }
                O::NoopDuplicate { existing, existing_status } => (Some(existing), Some(*existing_status), None, None),
                O::NotAdmitted { reason } => (None, None, None, Some(reason.clone())),
            };
            wire::Saved {
                chunk: chunk.chunk as u32,
                outcome: chunk.outcome.label().to_owned(),
                leaf_id: leaf_id.map(ToString::to_string),
                status: status.map(|s| s.as_str().to_owned()),
                replaces: replaces.map(ToString::to_string),
                tree_id: chunk.tree_id.map(|t| t.to_string()),
                namespace: chunk.namespace.to_string(),
                reason: reason.or(chunk.approval.map(str::to_owned)),
                replaced: chunk
                    .replaced
                    .iter()
                    .map(|r| wire::ReplacedMemory {
                        leaf_id: r.leaf_id.to_string(),
                        attribute: r.attribute.clone(),
                        rule: r.rule.to_owned(),
                        was: r.was.clone(),
                        now: r.now.clone(),
                    })
                    .collect(),
                possibly_outdated: chunk
                    .doubted
                    .iter()
                    .map(|d| wire::OutdatedMemory {
                        leaf_id: d.leaf_id.to_string(),
                        attribute: d.attribute.clone(),
                        reason: d.reason.to_owned(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The source of what a caller saves or corrects: the message it names, else a save through
/// these tools. Either is an observation; neither says who spoke (the binding does).
fn saved_from(message_id: Option<String>) -> SourceRef {
    match message_id {
        Some(message_id) => SourceRef::Message { conversation: None, message_id },
        None => SourceRef::Save,
    }
}

/// One sentence on what a save did, for an agent to act on or pass on: retrievable now, waiting
/// for a person (and how a person confirms it), already known, or not kept and why.
fn save_message(chunks: &[wire::Saved], review: ReviewBy) -> String {
    let ids = |status: &str| -> Vec<&str> {
        let with = chunks.iter().filter(|c| c.status.as_deref() == Some(status) && c.outcome != "noop_duplicate");
        with.filter_map(|c| c.leaf_id.as_deref()).collect()
    };
    let (active, waiting) = (ids("active"), ids("candidate"));
    let duplicates: Vec<&wire::Saved> = chunks.iter().filter(|c| c.outcome == "noop_duplicate").collect();
    let known: Vec<&str> = duplicates.iter().filter_map(|c| c.leaf_id.as_deref()).collect();
    let namespace = chunks.first().map_or("", |c| c.namespace.as_str());
    let mut sentences = Vec::new();
    if !active.is_empty() {
        sentences.push(format!("Saved to {namespace} as {}; it is retrievable now.", active.join(", ")));
    }
    if !waiting.is_empty() {
        let why = chunks.iter().find(|c| c.status.as_deref() == Some("candidate")).and_then(|c| c.reason.as_deref());
        sentences.push(format!(
            "Saved to {namespace} as a candidate ({}), which is not retrieved until a person confirms it ({}){}.",
            waiting.join(", "),
            match review {
                ReviewBy::CommandLine => format!("`arbor review confirm {} --namespace {namespace}`", waiting[0]),
                ReviewBy::OperatorToken => "with an operator's token: POST /api/v1/memory/review/confirm".to_owned(),
            },
            why.map(|why| format!(": {why}")).unwrap_or_default(),
        ));
    }
    if !known.is_empty() {
        sentences.push(format!("Already in memory as {}; nothing new was written.", known.join(", ")));
    } else if !duplicates.is_empty() {
        sentences.push("Already known (not retrievable here); nothing new was written.".to_owned());
    }
    // What it replaced, so an agent can tell the person ("I've updated where Elif works").
    for replaced in chunks.iter().flat_map(|c| &c.replaced) {
        let name = arbor_domain::claims::catalogue::english_name(&replaced.attribute);
        let values = match (&replaced.was, &replaced.now) {
            (Some(was), Some(now)) => format!(": was \"{was}\", now \"{now}\""),
            (Some(was), None) => format!(": \"{was}\" ended"),
            _ => String::new(),
        };
        sentences.push(format!("It replaced {} ({name}{values}), kept as history.", replaced.leaf_id));
    }
    let doubted: Vec<String> = chunks
        .iter()
        .flat_map(|c| &c.possibly_outdated)
        .map(|d| format!("{} ({})", d.leaf_id, arbor_domain::claims::catalogue::english_name(&d.attribute)))
        .collect();
    if !doubted.is_empty() {
        sentences.push(format!(
            "It may replace {}; not proven, so both stay current, the older marked as possibly outdated.",
            doubted.join(", ")
        ));
    }
    if sentences.is_empty() {
        let why = chunks.iter().find_map(|c| c.reason.as_deref()).unwrap_or("nothing in it was worth keeping");
        let why = why.strip_prefix("refused: ").unwrap_or(why).trim_end_matches('.');
        sentences.push(format!("Not saved: {why}."));
    }
    sentences.join(" ")
}

impl Service {
    pub fn new(arbor: impl Into<std::sync::Arc<Arbor>>, chain: ReadChain, speaker: Actor) -> Service {
        Service { arbor: arbor.into(), chain, speaker, reports: None, review: ReviewBy::CommandLine, settings: None }
    }

    /// The engine this service answers from, for the maintenance its host schedules beside it.
    pub fn arbor(&self) -> &Arbor {
        &self.arbor
    }

    /// The engine, shared with every other binding to the same store.
    pub fn shared_arbor(&self) -> std::sync::Arc<Arbor> {
        self.arbor.clone()
    }

    /// The read chain every request is answered in.
    pub fn chain(&self) -> &ReadChain {
        &self.chain
    }

    /// Says that candidates are confirmed with an operator's token over HTTP (a tenant's store,
    /// which no person reaches at the command line through the server's root).
    #[must_use]
    pub fn reviewed_by_operators(self) -> Service {
        Service { review: ReviewBy::OperatorToken, ..self }
    }

    /// Serves the consolidation reports in `dir` (read-only, each cut to the chain's sections).
    #[must_use]
    pub fn with_reports(self, dir: std::path::PathBuf) -> Service {
        Service { reports: Some(dir), ..self }
    }

    /// Lets the memory centre read and rewrite the store's settings file.
    #[must_use]
    pub fn with_settings(self, settings: std::sync::Arc<dyn crate::console::SettingsFile>) -> Service {
        Service { settings: Some(settings), ..self }
    }

    pub(crate) fn settings_file(&self) -> Option<&std::sync::Arc<dyn crate::console::SettingsFile>> {
        self.settings.as_ref()
    }

    pub(crate) async fn dream(&self, input: wire::DreamInput) -> ApiResult<wire::Dream> {
        let limit = in_range("limit", input.limit, 1, 20)?.unwrap_or(3);
        // A frozen layer is seen as of the chain's start: what passes changed there since is
        // not the caller's to read.
        let namespaces: Vec<_> = self.chain.live_namespaces().cloned().collect();
        let Some(dir) = self.reports.clone() else { return Ok(wire::Dream { reports: Vec::new() }) };
        // Reading files blocks: off the async workers.
        let read = tokio::task::spawn_blocking(move || Self::read_reports(&dir, &namespaces, limit));
        let reports =
            read.await.map_err(|_| ApiError::new(500, "internal", "the server could not read its reports"))??;
        Ok(wire::Dream { reports })
    }

    fn read_reports(
        dir: &std::path::Path,
        namespaces: &[arbor_domain::namespace::Namespace],
        limit: usize,
    ) -> ApiResult<Vec<wire::DreamReport>> {
        let mut reports = Vec::new();
        let mut names: Vec<String> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
                .collect(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                tracing::error!(%error, dir = %dir.display(), "could not list the consolidation reports");
                return Err(ApiError::new(500, "internal", "the server could not read its reports; see its log"));
            }
        };
        names.sort_unstable_by(|a, b| b.cmp(a));
        for name in names {
            if reports.len() == limit {
                break;
            }
            let Ok(text) = std::fs::read_to_string(dir.join(&name)) else { continue };
            if let Some(markdown) = arbor_app::report_for(&text, namespaces) {
                reports.push(wire::DreamReport { name, markdown });
            }
        }
        Ok(reports)
    }

    fn request(&self, query: &str, mode: wire::Mode) -> ApiResult<RetrieveRequest> {
        text_field("query", query, 4096)?;
        let mut request = RetrieveRequest::new(query);
        request.mode = match mode {
            wire::Mode::Auto => RetrieveMode::Auto,
            wire::Mode::BroadSummary => RetrieveMode::BroadSummary,
            wire::Mode::ExactEvidence => RetrieveMode::ExactEvidence,
        };
        Ok(request)
    }

    pub(crate) async fn retrieve(&self, input: wire::RetrieveInput) -> ApiResult<wire::Retrieved> {
        let started = Instant::now();
        let mut request = self.request(&input.query, input.mode)?;
        request.max_results = in_range("max_results", input.max_results, 1, 100)?;
        request.max_chars = in_range("max_chars", input.max_chars, 100, 100_000)?;
        let max_tokens = in_range("max_tokens", input.max_tokens, 50, 20_000)?;
        // Evidence text runs about four characters a token.
        request.max_chars = request.max_chars.or(max_tokens.map(|tokens| (tokens * 4).clamp(100, 100_000)));
        request.as_of = timestamp("as_of", input.as_of.as_deref())?;
        request.tree = input.tree.as_deref().map(tree).transpose()?;
        if input.kinds.len() > 16 {
            return Err(ApiError::invalid("`kinds` has more than 16 entries"));
        }
        request.kinds = input.kinds.iter().map(|k| kind(k)).collect::<ApiResult<_>>()?;
        request.record = input.record;
        let pack = self.arbor.retrieve(&self.chain, &request).await?;
        tracing::debug!(ms = started.elapsed().as_millis(), items = pack.evidence.len(), "retrieve");
        match input.format {
            wire::PackFormat::Full => Ok(wire::Retrieved::Full(Box::new(mirror(&pack)?))),
            wire::PackFormat::Compact => {
                let options = CompactOptions { max_tokens, include_skipped: input.include_skipped };
                Ok(wire::Retrieved::Compact(compact(&pack, options)?))
            }
        }
    }

    /// A question as a model asks it: the compact pack, within a token budget.
    pub(crate) async fn ask(&self, input: wire::AskInput) -> ApiResult<wire::CompactPack> {
        let mut request = self.request(&input.query, wire::Mode::Auto)?;
        let max_tokens = in_range("max_tokens", input.max_tokens, 50, 20_000)?.unwrap_or(DEFAULT_ASK_TOKENS);
        // Evidence text runs about four characters a token; the rendering's own lines are then
        // fitted to the budget by the compact pack.
        request.max_chars = Some((max_tokens * 4).clamp(100, 100_000));
        request.as_of = timestamp("as_of", input.as_of.as_deref())?;
        let pack = self.arbor.retrieve(&self.chain, &request).await?;
        compact(&pack, CompactOptions { max_tokens: Some(max_tokens), include_skipped: false })
    }

    pub(crate) async fn search(&self, input: wire::SearchInput) -> ApiResult<wire::SearchResult> {
        let mut request = self.request(&input.query, wire::Mode::ExactEvidence)?;
        request.max_results = Some(in_range("limit", input.limit, 1, 100)?.unwrap_or(10));
        let pack = self.arbor.retrieve(&self.chain, &request).await?;
        let pack: wire::Pack = mirror(&pack)?;
        let hits = pack
            .evidence
            .into_iter()
            .map(|e| wire::SearchHit {
                id: e.node_id.id,
                node: e.node,
                version: e.version,
                namespace: e.namespace,
                tree_id: e.tree_id,
                title: e.title,
                text: e.text,
                observed_at: e.observed_at,
                score: e.scores.fused,
                why: e.why,
            })
            .collect();
        Ok(wire::SearchResult { hits })
    }

    /// A node by id. Restricted memories are not served to agents at all: they are answered
    /// like ids that do not exist. The owner (`by_person`, an operator's token) sees every
    /// status and sensitivity the chain's namespaces hold, and the prose apart from the
    /// document (`text`), as the memory centre corrects it.
    pub(crate) async fn read(&self, input: wire::ReadInput, by_person: bool) -> ApiResult<wire::Node> {
        if !wire::is_node_id(&input.id) {
            return Err(ApiError::invalid(format!("{:?} is not a leaf or summary id", input.id)));
        }
        let not_found = || ApiError::new(404, "not_found", format!("node {} not found", input.id));
        let disclosure = if by_person { Disclosure::Everything } else { Disclosure::Retrievable };
        let view = match self.arbor.show(&self.chain, &input.id, disclosure).await {
            Ok(view) => view,
            Err(error) if error.is_not_found() => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        let hidden = |sensitivity: Sensitivity| !by_person && sensitivity == Sensitivity::Restricted;
        let prose = |body: &Option<String>| body.as_deref().filter(|_| by_person).map(arbor_domain::markdown::prose);
        let node = match view {
            NodeView::Leaf { record, body } => {
                if hidden(record.sensitivity) {
                    return Err(not_found());
                }
                wire::Node {
                    id: record.id.to_string(),
                    node: "leaf".into(),
                    version: Some(record.version.get()),
                    lineage: Some(record.lineage.to_string()),
                    namespace: record.namespace.to_string(),
                    tree_id: record.tree_id.to_string(),
                    kind: Some(record.kind.as_str().to_owned()),
                    title: record.title.clone(),
                    status: record.status.as_str().to_owned(),
                    observed_at: Some(record.observed_at.to_string()),
                    validity: Some(mirror(&record.validity)?),
                    sensitivity: Some(mirror(&record.sensitivity)?),
                    source: Some(record.provenance.source.short()),
                    actor: Some(mirror(&record.provenance.actor)?),
                    supersedes: record.supersedes.as_ref().map(ToString::to_string),
                    superseded_by: record.superseded_by.as_ref().map(ToString::to_string),
                    level: None,
                    text: prose(&body),
                    body,
                }
            }
            NodeView::Summary { record, body } => {
                if hidden(record.sensitivity) {
                    return Err(not_found());
                }
                wire::Node {
                    id: record.id.to_string(),
                    node: "summary".into(),
                    version: None,
                    lineage: None,
                    namespace: record.namespace.to_string(),
                    tree_id: record.tree_id.to_string(),
                    kind: None,
                    title: record.title.clone(),
                    status: record.status.as_str().to_owned(),
                    observed_at: record.time_range_end.map(|t| t.to_string()),
                    validity: None,
                    sensitivity: Some(mirror(&record.sensitivity)?),
                    source: None,
                    actor: None,
                    supersedes: None,
                    superseded_by: None,
                    level: Some(u32::from(record.level())),
                    text: prose(&body),
                    body,
                }
            }
        };
        Ok(node)
    }

    pub(crate) async fn browse(&self, input: wire::BrowseInput) -> ApiResult<wire::Browse> {
        let depth = in_range("depth", input.depth, 1, 8)?.unwrap_or(3);
        match input.tree.as_deref() {
            None => {
                let trees = self.arbor.browse(&self.chain, Disclosure::Retrievable).await?;
                let trees = trees
                    .into_iter()
                    .map(|t| wire::TreeSummary {
                        namespace: t.tree.namespace.to_string(),
                        tree_id: t.tree.tree_id.to_string(),
                        title: t.tree.title,
                        root_title: t.root_title,
                        active_leaves: t.active_leaves as u32,
                        leaves: t.leaves as u32,
                        summaries: t.summaries as u32,
                    })
                    .collect();
                Ok(wire::Browse { trees, outline: None })
            }
            Some(id) => {
                let outline = self.arbor.browse_tree(&self.chain, &tree(id)?, depth, Disclosure::Retrievable).await?;
                let nodes = mirror(&outline.nodes)?;
                Ok(wire::Browse {
                    trees: Vec::new(),
                    outline: Some(wire::Outline {
                        namespace: outline.tree.namespace.to_string(),
                        tree_id: outline.tree.tree_id.to_string(),
                        title: outline.tree.title,
                        nodes,
                    }),
                })
            }
        }
    }

    pub(crate) async fn save(&self, input: wire::SaveInput) -> ApiResult<wire::SaveResult> {
        let event = self.save_event(input)?;
        self.saved(self.arbor.ingest(&self.chain, event).await?).await
    }

    /// What a save did, and the sentence that says it. A duplicate of a memory the caller could
    /// not open by id (a candidate waiting for a person, a rejected or restricted one) is not
    /// named: its id would tell what it is.
    async fn saved(&self, report: arbor_app::IngestReport) -> ApiResult<wire::SaveResult> {
        let mut chunks = chunks_of(report);
        for chunk in chunks.iter_mut().filter(|c| c.outcome == "noop_duplicate") {
            let Some(id) = chunk.leaf_id.clone() else { continue };
            let readable = match self.arbor.show(&self.chain, &id, Disclosure::Retrievable).await {
                Ok(NodeView::Leaf { record, .. }) => record.sensitivity != Sensitivity::Restricted,
                Ok(NodeView::Summary { .. }) => false,
                Err(error) if error.is_not_found() => false,
                Err(error) => return Err(error.into()),
            };
            if !readable || chunk.status.as_deref() != Some(LeafStatus::Active.as_str()) {
                (chunk.leaf_id, chunk.status) = (None, None);
            }
        }
        Ok(wire::SaveResult { message: save_message(&chunks, self.review), chunks })
    }

    /// A save as an event: checked, and spoken by the binding's speaker (never a field the
    /// caller fills in). Never `UserEntry`: that is a person typing into Arbor, which admission
    /// and approval trust; an API save is held to the policy like any other inferred memory.
    fn save_event(&self, input: wire::SaveInput) -> ApiResult<Event> {
        text_field("text", &input.text, 16_384)?;
        title_field(input.title.as_deref())?;
        message_id_field(input.message_id.as_deref())?;
        if input.labels.len() > arbor_domain::event::MAX_LABELS {
            let limit = arbor_domain::event::MAX_LABELS;
            return Err(ApiError::invalid(format!("`labels` has more than {limit} entries")));
        }
        let labels = (input.labels.iter())
            .map(|l| Label::parse(l).map_err(|e| ApiError::invalid(format!("`labels`: {e}"))))
            .collect::<ApiResult<Vec<_>>>()?;
        let observed_at = timestamp("observed_at", input.observed_at.as_deref())?;
        let valid_from = timestamp("valid_from", input.valid_from.as_deref())?;
        // A fact that starts being true later than it is said would replace the current one
        // and leave nothing current until then: a plan is said as text ("from March, …").
        if let Some(from) = valid_from
            && from > observed_at.unwrap_or_else(|| self.arbor.ports().clock.now())
        {
            return Err(ApiError::new(
                422,
                "unprocessable",
                "`valid_from` may not be later than when it is said (`observed_at`, or now); say a plan in the text",
            ));
        }
        checked(Event {
            text: input.text,
            actor: self.speaker,
            observed_at,
            source: saved_from(input.message_id),
            hints: EventHints {
                kind: input.kind.as_deref().map(kind).transpose()?,
                title: input.title,
                labels,
                valid_from,
                ..EventHints::default()
            },
        })
    }

    /// Several saves in one write. Every item is checked first: one that is refused refuses the
    /// request, so nothing of it is half-written.
    pub(crate) async fn save_batch(&self, input: wire::BatchInput) -> ApiResult<wire::BatchResult> {
        if input.items.is_empty() || input.items.len() > MAX_BATCH {
            return Err(ApiError::invalid(format!("`items` must hold 1 to {MAX_BATCH} saves")));
        }
        let events = (input.items.into_iter().enumerate())
            .map(|(i, item)| self.save_event(item).map(Ok).map_err(|e| at_item("items", i, e)))
            .collect::<ApiResult<_>>()?;
        self.ingest_each(events).await
    }

    /// A conversation's messages as a chat client holds them. A role can only lower the
    /// binding's authority ([`wire::ChatRole`]); a prompt is not kept, nor a message without
    /// text. Each message is a millisecond after the one before it, so their order holds.
    pub(crate) async fn save_messages(&self, input: wire::MessagesInput) -> ApiResult<wire::BatchResult> {
        if input.messages.is_empty() || input.messages.len() > MAX_BATCH {
            return Err(ApiError::invalid(format!("`messages` must hold 1 to {MAX_BATCH} messages")));
        }
        let start =
            timestamp("observed_at", input.observed_at.as_deref())?.unwrap_or_else(|| self.arbor.ports().clock.now());
        let items = (input.messages.into_iter().enumerate())
            .map(|(i, message)| {
                // Every message is held to its schema, kept or not: a request is valid or not
                // whatever its roles.
                message_id_field(message.id.as_deref()).map_err(|e| at_item("messages", i, e))?;
                let text = match message.content.map(wire::ChatContent::text).transpose() {
                    Ok(text) => text.unwrap_or_default(),
                    Err(refusal) => return Err(at_item("messages", i, ApiError::invalid(refusal))),
                };
                if text.contains('\0') || text.chars().count() > 16_384 {
                    let refusal = ApiError::invalid("`content` is longer than 16384 characters or holds a NUL");
                    return Err(at_item("messages", i, refusal));
                }
                let Some(actor) = message.role.domain().actor(self.speaker) else {
                    return Ok(Err("a prompt, not something that happened"));
                };
                if text.trim().is_empty() {
                    return Ok(Err("no text"));
                }
                let observed_at = start
                    .checked_add(std::time::Duration::from_millis(i as u64))
                    .map_err(|e| at_item("messages", i, ApiError::invalid(format!("`observed_at`: {e}"))))?;
                let source = saved_from(message.id);
                let event = Event { text, actor, observed_at: Some(observed_at), source, hints: EventHints::default() };
                checked(event).map(Ok).map_err(|e| at_item("messages", i, e))
            })
            .collect::<ApiResult<_>>()?;
        self.ingest_each(items).await
    }

    /// Ingests checked events in one batch (`Err(why)`: passed over, saving nothing) and
    /// answers for every item in order: what it became, or why it was passed over. Every item
    /// was checked before this, so a refusal by the engine is a fault, not a caller's error.
    async fn ingest_each(&self, items: Vec<Result<Event, &'static str>>) -> ApiResult<wire::BatchResult> {
        let mut results: Vec<wire::BatchItem> = Vec::with_capacity(items.len());
        let mut events = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            let skipped = item.as_ref().err().map(|why| (*why).to_owned());
            results.push(wire::BatchItem { index: index as u32, saved: None, skipped, error: None });
            events.extend(item.ok());
        }
        if events.is_empty() {
            return Ok(wire::BatchResult { results });
        }
        let mut reports = self.arbor.ingest_batch(&self.chain, events).await?.into_iter();
        for result in results.iter_mut().filter(|r| r.skipped.is_none()) {
            match reports.next() {
                Some(Ok(report)) => result.saved = Some(self.saved(report).await?),
                Some(Err(error)) => result.error = Some(ApiError::from(error).body().error),
                None => {
                    tracing::error!("a batch came back with fewer reports than events");
                    return Err(ApiError::new(
                        500,
                        "internal",
                        "the server could not complete the request; see its log",
                    ));
                }
            }
        }
        Ok(wire::BatchResult { results })
    }

    /// A correction bound to the version read. `if_match` is a second statement of it (HTTP's
    /// `If-Match`); when the two disagree, one of them is stale.
    /// An operator's correction (`by_person`) is the person's own; anyone else's is the
    /// binding's speaker's, and waits for a person if approval says so.
    pub(crate) async fn correct(
        &self,
        input: wire::CorrectInput,
        if_match: Option<u32>,
        by_person: bool,
    ) -> ApiResult<wire::Corrected> {
        let not_found = || ApiError::new(404, "not_found", format!("leaf {} not found", input.id));
        if !(wire::is_node_id(&input.id) && input.id.starts_with("leaf-")) {
            return Err(ApiError::invalid(format!("{:?} is not a leaf id", input.id)));
        }
        let id = LeafId::parse(&input.id).map_err(|_| ApiError::invalid(format!("{:?} is not a leaf id", input.id)))?;
        let expected_version =
            Version::new(input.version).ok_or_else(|| ApiError::invalid("`version` starts at 1".to_owned()))?;
        text_field("text", &input.text, 16_384)?;
        title_field(input.title.as_deref())?;
        if let Some(tag) = if_match.filter(|&tag| tag != input.version) {
            // Existence first, so the answer for an unreadable id stays "not found".
            return match self.arbor.show(&self.chain, &input.id, Disclosure::Retrievable).await {
                Ok(_) => Err(ApiError::new(
                    412,
                    "precondition_failed",
                    format!(
                        "If-Match names version {tag} but `version` is {}; at most one of them is current",
                        input.version
                    ),
                )),
                Err(error) if error.is_not_found() => Err(not_found()),
                Err(error) => Err(error.into()),
            };
        }
        message_id_field(input.message_id.as_deref())?;
        // The binding says who speaks (an agent's own correction waits for a person); the
        // message, if named, is provenance.
        // The owner's own correction (the memory centre) is a person's entry, which approval
        // never holds for the person to confirm again.
        let (actor, source) = match (by_person, input.message_id) {
            (true, None) => (Actor::User, SourceRef::UserEntry),
            (true, message_id) => (Actor::User, saved_from(message_id)),
            (false, message_id) => (self.speaker, saved_from(message_id)),
        };
        let correction =
            Correction { title: input.title, source, actor, ..Correction::by_person(id, expected_version, input.text) };
        let receipt = match self.arbor.correct(&self.chain, &correction).await {
            Ok(receipt) => receipt,
            Err(error) if error.is_not_found() => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        Ok(wire::Corrected::from(receipt))
    }

    /// Forgets a memory of the binding's write namespace. What the chain could not open by id
    /// is not found, like an id that never existed; a broader layer's memory is forbidden; and
    /// unless `by_person` (an operator's token), only where an agent's writes stand without a
    /// person.
    pub(crate) async fn forget(&self, input: wire::ForgetInput, by_person: bool) -> ApiResult<wire::Forgotten> {
        let id = LeafId::parse(&input.id).map_err(|_| ApiError::invalid(format!("{:?} is not a leaf id", input.id)))?;
        let forgotten = match by_person {
            true => self.arbor.forget_as_person(&self.chain, &id).await,
            false => self.arbor.forget_own(&self.chain, &id).await,
        };
        let receipt = match forgotten {
            Ok(receipt) => receipt,
            Err(error) if error.is_not_found() => {
                return Err(ApiError::new(404, "not_found", format!("leaf {} not found", input.id)));
            }
            Err(error) => return Err(error.into()),
        };
        Ok(wire::Forgotten {
            leaf_id: receipt.leaf_id.to_string(),
            namespace: receipt.namespace.to_string(),
            versions: receipt.versions.len() as u32,
            fingerprint: receipt.fingerprint.to_string(),
        })
    }

    /// What waits for a person in the chain (an operator's view).
    pub(crate) async fn pending(&self) -> ApiResult<wire::Pending> {
        let items = self.arbor.pending_review(&self.chain).await?;
        let items = items
            .into_iter()
            .map(|item| {
                let leaf = item.leaf;
                Ok(wire::PendingItem {
                    id: leaf.id.to_string(),
                    namespace: leaf.namespace.to_string(),
                    tree_id: leaf.tree_id.to_string(),
                    kind: leaf.kind.as_str().to_owned(),
                    title: leaf.title.clone(),
                    summary: leaf.summary.clone(),
                    sensitivity: mirror(&leaf.sensitivity)?,
                    actor: mirror(&leaf.provenance.actor)?,
                    source: leaf.provenance.source.short(),
                    created_at: leaf.created_at.to_string(),
                    would_supersede: item.would_supersede.iter().map(|l| l.id.to_string()).collect(),
                    conflict: item.conflict.map(|cause| mirror(&cause)).transpose()?,
                })
            })
            .collect::<ApiResult<_>>()?;
        Ok(wire::Pending { items })
    }

    /// Confirms or rejects a candidate in the chain (an operator's decision). What the chain
    /// cannot read is not found.
    pub(crate) async fn review(&self, input: wire::ReviewInput, decision: wire::Decision) -> ApiResult<wire::Reviewed> {
        let id = LeafId::parse(&input.id).map_err(|_| ApiError::invalid(format!("{:?} is not a leaf id", input.id)))?;
        let receipt = match decision {
            wire::Decision::Confirm => self.arbor.confirm(&self.chain, &id).await,
            wire::Decision::Reject => self.arbor.reject(&self.chain, &id).await,
        };
        let receipt = match receipt {
            Ok(receipt) => receipt,
            Err(error) if error.is_not_found() => {
                return Err(ApiError::new(404, "not_found", format!("leaf {} not found", input.id)));
            }
            Err(error) => return Err(error.into()),
        };
        Ok(wire::Reviewed::from(receipt))
    }

    pub(crate) async fn catalog(&self, input: wire::CatalogInput) -> ApiResult<wire::Catalog> {
        let budget =
            in_range("budget_chars", input.budget_chars, 200, 20_000)?.unwrap_or(arbor_app::DEFAULT_CATALOG_CHARS);
        mirror(&self.arbor.catalog(&self.chain, budget).await?)
    }

    /// What the chain can read that was observed on one day, across its trees.
    pub(crate) async fn daily(&self, input: wire::DailyInput) -> ApiResult<wire::Daily> {
        let limit = in_range("limit", input.limit, 1, 500)?.unwrap_or(arbor_app::DEFAULT_DAY_LIMIT);
        let now = self.arbor.ports().clock.now();
        if let Some(offset) = input.utc_offset.as_deref() {
            arbor_domain::daily::parse_offset(offset).map_err(ApiError::invalid)?;
        }
        // The schema states the shape of a date (`wire::DAY`); one of that shape that is not in
        // the calendar (2026-02-30) is well-formed but names no day.
        let day = arbor_domain::daily::Day::asked(input.date.as_deref(), input.utc_offset.as_deref(), now).map_err(
            |why| {
                if input.date.as_deref().is_some_and(wire::has_day_shape) {
                    ApiError::new(422, "unprocessable", why)
                } else {
                    ApiError::invalid(why)
                }
            },
        )?;
        mirror(&self.arbor.daily(&self.chain, day, limit).await?)
    }

    /// What the chain's memories say now about one subject, or every subject.
    pub(crate) async fn profile(&self, input: wire::ProfileInput) -> ApiResult<wire::Profile> {
        let subject = input.subject.as_deref().map(str::trim);
        match subject {
            Some("") => {
                return Err(ApiError::new(422, "unprocessable", "subject: blank; leave it out for every subject"));
            }
            Some(s) if s.chars().count() > 200 => return Err(ApiError::invalid("subject: at most 200 characters")),
            _ => {}
        }
        mirror(&self.arbor.profile(&self.chain, subject).await?)
    }

    pub(crate) async fn status(&self) -> ApiResult<wire::Status> {
        // Sizes within the chain only, as the chain may see them: store-wide counts would tell
        // about other scopes.
        let trees = self.arbor.browse(&self.chain, Disclosure::Retrievable).await?;
        let leaves = trees.iter().map(|t| t.active_leaves).sum::<usize>();
        let ports = self.arbor.ports();
        Ok(wire::Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            read_chain: self.chain.namespaces().map(ToString::to_string).collect(),
            write_namespace: self.chain.write_namespace().to_string(),
            store_backend: ports.store.backend().to_owned(),
            index_backend: ports.index.backend().to_owned(),
            embedder: ports.embedder.id().to_string(),
            trees: trees.len() as u32,
            active_leaves: leaves as u32,
        })
    }

    /// Runs pending jobs now (the server also runs them in the background). The queue is the
    /// store's, so the answer says only whether it is drained, nothing about what other scopes
    /// had queued.
    pub(crate) async fn sync(&self, input: wire::SyncInput) -> ApiResult<wire::Synced> {
        let max = in_range("max_jobs", input.max_jobs, 1, 10_000)?.unwrap_or(1_000);
        let report = self.arbor.run_jobs(Some(max)).await?;
        Ok(wire::Synced { idle: report.completed + report.failed < max })
    }

    /// Runs jobs until the server stops: what is saved gets indexed, sealed and summarized
    /// without anyone calling sync.
    pub async fn run_jobs_in_background(self: std::sync::Arc<Self>) {
        let mut ticks: u64 = 0;
        loop {
            tokio::time::sleep(JOB_TICK).await;
            if let Err(error) = self.arbor.run_jobs(Some(100)).await {
                tracing::warn!(%error, "background jobs failed; retrying");
            }
            ticks += 1;
            if ticks.is_multiple_of(ADOPT_EVERY_TICKS) {
                self.adopt_edits().await;
            }
        }
    }

    /// Turns each memory document edited in the chain's namespaces into a suggestion for the
    /// person (the memory centre's Pending tab): a server cannot tell who changed a file, so
    /// it never adopts an edit as the person's own (`arbor fsck --adopt-edits` at the store's
    /// command line does). What it did and did not adopt goes to the log.
    async fn adopt_edits(&self) {
        let namespaces: Vec<_> = self.chain.live_namespaces().cloned().collect();
        let found = arbor_app::acting_as("hand-edit", self.arbor.adopt_edits(&namespaces, arbor_app::EditsBy::Unknown));
        match found.await {
            Ok(adoptions) => {
                for adoption in adoptions {
                    match adoption {
                        // Reported once a minute until the file changes: debug, not a warning flood.
                        arbor_app::Adoption::NotAdopted { leaf_id, path, reason } => {
                            tracing::debug!(%leaf_id, %path, %reason, "an edited memory document was not adopted")
                        }
                        done => tracing::info!(adoption = ?done, "adopted a hand-edited memory document"),
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "could not look for hand-edited memory documents; retrying later"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_domain::id::ScopeId;
    use arbor_domain::read_chain::TrustedContext;

    /// A fault inside the engine is the server's (500, its detail only in the log), never a
    /// caller's bad request.
    #[test]
    fn internal_faults_are_the_servers_and_say_nothing_of_their_detail() {
        let internal = ApiError::from(AppError::Internal("stored body path: ../etc".into()));
        assert_eq!((internal.status, internal.code), (500, "internal"));
        assert!(!internal.message.contains("etc"), "{}", internal.message);
        let invalid = ApiError::from(AppError::InvalidRequest("`title` is empty".into()));
        assert_eq!((invalid.status, invalid.code), (400, "invalid_request"));
    }

    /// The wire mirrors read back exactly what the app writes, so their schemas describe the
    /// real output (a field the app adds or renames fails here before any client sees it).
    #[tokio::test]
    async fn wire_mirrors_are_exact() {
        let arbor = Arbor::in_memory();
        let context = TrustedContext::Conversation {
            conversation: ScopeId::parse("c1").unwrap(),
            project: Some(ScopeId::parse("p1").unwrap()),
            agent: None,
        };
        let chain = arbor.read_chain(&context).unwrap();
        for (i, text) in [
            "Dana prefers morning meetings before 10am.",
            "Dana is leading the migration to Postgres.",
            "My favorite color is green.",
            "My favorite color is blue.",
            "We never deploy on Fridays.",
            "Dana has a dog called Miso.",
            "The staging cluster runs in Frankfurt.",
            "Dana wants weekly status notes.",
            "Dana moved the review to Thursday last week.",
        ]
        .iter()
        .enumerate()
        {
            let mut event = Event::user_message(*text);
            event.source = SourceRef::Message { conversation: None, message_id: format!("m{i}") };
            arbor.ingest(&chain, event).await.unwrap();
        }
        arbor.run_jobs(None).await.unwrap();
        for (query, mode) in [
            ("when does Dana like meetings?", RetrieveMode::Auto),
            ("what happened last week?", RetrieveMode::ExactEvidence),
            ("tell me about Dana", RetrieveMode::BroadSummary),
        ] {
            let mut request = RetrieveRequest::new(query);
            request.mode = mode;
            request.record = true;
            let pack = arbor.retrieve(&chain, &request).await.unwrap();
            assert!(!pack.evidence.is_empty());
            let wire: wire::Pack = mirror(&pack).unwrap();
            assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&pack).unwrap(), "{query}");
        }
        let catalog = arbor.catalog(&chain, 4000).await.unwrap();
        let wire: wire::Catalog = mirror(&catalog).unwrap();
        assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&catalog).unwrap());
        let tree = arbor.browse(&chain, Disclosure::Retrievable).await.unwrap().remove(0).tree.tree_id;
        let outline = arbor.browse_tree(&chain, &tree, 8, Disclosure::Retrievable).await.unwrap();
        let wire: Vec<wire::OutlineNode> = mirror(&outline.nodes).unwrap();
        assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&outline.nodes).unwrap());
        let today = arbor_domain::daily::Day::asked(None, Some("+08:00"), arbor.ports().clock.now()).unwrap();
        let daily = arbor.daily(&chain, today, 200).await.unwrap();
        assert!(!daily.memories.is_empty() && !daily.highlights.is_empty());
        let wire: wire::Daily = mirror(&daily).unwrap();
        assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&daily).unwrap());
    }
}
