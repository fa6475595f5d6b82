//! The writes: save (one, a batch, chat messages), correct, forget, the review queue and sync,
//! and the receipts that say what each did.

use arbor_app::{Correction, Disclosure, NodeView};
use arbor_domain::event::{Event, EventHints};
use arbor_domain::id::{LeafId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Actor, Label, SourceRef};
use arbor_domain::sensitivity::Sensitivity;

use super::errors::{ApiError, ApiResult};
use super::fields::{
    MAX_BATCH, at_item, checked, in_range, kind, message_id_field, mirror, text_field, timestamp, title_field,
};
use super::{ReviewBy, Service};
use crate::wire;

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

/// What an ingest made of each chunk of a save (before [`Service::saved`] hides duplicates the
/// caller cannot read).
pub(super) fn chunks_of(report: arbor_app::IngestReport) -> Vec<wire::Saved> {
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
                O::NotAdmitted { refusal } => (None, None, None, Some(refusal.to_string())),
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
pub(super) fn saved_from(message_id: Option<String>) -> SourceRef {
    match message_id {
        Some(message_id) => SourceRef::Message { conversation: None, message_id },
        None => SourceRef::Save,
    }
}

/// One sentence on what a save did, for an agent to act on or pass on: retrievable now, waiting
/// for a person (and how a person confirms it), already known, or not kept and why.
pub(super) fn save_message(chunks: &[wire::Saved], review: ReviewBy) -> String {
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

    /// Runs pending jobs now (the server also runs them in the background). The queue is the
    /// store's, so the answer says only whether it is drained, nothing about what other scopes
    /// had queued.
    pub(crate) async fn sync(&self, input: wire::SyncInput) -> ApiResult<wire::Synced> {
        let max = in_range("max_jobs", input.max_jobs, 1, 10_000)?.unwrap_or(1_000);
        let report = self.arbor.run_jobs(Some(max)).await?;
        Ok(wire::Synced { idle: report.completed + report.failed < max })
    }
}
