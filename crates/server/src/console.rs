//! What the memory centre reads and changes beyond the agent API: health, a memory's use by
//! retrievals, the audit log, restoring a replaced version, what rules retired (and undoing
//! it) and the store's settings file (through the [`SettingsFile`](crate::SettingsFile) port).
//! Each is an operator's (the HTTP layer checks the role) and runs in the binding's read chain,
//! through the same app use cases as the command line.

use arbor_domain::id::LeafId;

use crate::service::{ApiError, ApiResult, Service, in_range, kind, mirror, tree};
use crate::settings::SettingsRefused;
use crate::wire;
use arbor_ports::with_causes;

fn leaf_id(id: &str) -> ApiResult<LeafId> {
    LeafId::parse(id).map_err(|_| ApiError::invalid(format!("{id:?} is not a leaf id")))
}

fn figures(figures: &arbor_domain::health::Figures) -> wire::HealthFigures {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    wire::HealthFigures {
        active: count(figures.active),
        superseded: count(figures.superseded),
        candidates: count(figures.candidates),
        oldest_candidate: figures.oldest_candidate.map(|at| at.to_string()),
        archived: count(figures.archived),
        duplicates: count(figures.duplicates),
        summaries: count(figures.summaries),
        summaries_awaiting_reseal: count(figures.summaries_awaiting_reseal),
        body_bytes: figures.body_bytes,
    }
}

fn advice(warnings: &[arbor_domain::health::Warning]) -> Vec<String> {
    warnings.iter().map(arbor_domain::health::Warning::advice).collect()
}

impl Service {
    /// The current memories the chain reads, newest first, restricted ones too (the owner's).
    pub(crate) async fn memories(&self, input: wire::MemoriesInput) -> ApiResult<wire::Memories> {
        let limit = in_range("limit", input.limit, 1, 500)?.unwrap_or(100);
        let listing = arbor_app::MemoryListing {
            tree: input.tree.as_deref().map(tree).transpose()?,
            kinds: input.kind.as_deref().map(kind).transpose()?.into_iter().collect(),
            offset: in_range("offset", input.offset, 0, 100_000)?.unwrap_or(0),
            // One more than shown says whether more follow.
            limit: limit + 1,
        };
        let mut leaves = self.arbor().current_memories(self.chain(), &listing).await?;
        let more = leaves.len() > limit;
        leaves.truncate(limit);
        let memories = leaves
            .iter()
            .map(|leaf| {
                Ok(wire::MemoryRow {
                    id: leaf.id.to_string(),
                    version: leaf.version.get(),
                    namespace: leaf.namespace.to_string(),
                    tree_id: leaf.tree_id.to_string(),
                    kind: leaf.kind.as_str().to_owned(),
                    title: leaf.title.clone(),
                    summary: leaf.summary.clone(),
                    sensitivity: mirror(&leaf.sensitivity)?,
                    status: leaf.status.as_str().to_owned(),
                    observed_at: leaf.observed_at.to_string(),
                    validity: mirror(&leaf.validity)?,
                    confidence: leaf.confidence.get(),
                    salience: mirror(&leaf.salience)?,
                    actor: mirror(&leaf.provenance.actor)?,
                    source: leaf.provenance.source.short(),
                    supersedes: leaf.supersedes.as_ref().map(ToString::to_string),
                })
            })
            .collect::<ApiResult<_>>()?;
        Ok(wire::Memories { memories, more })
    }

    /// The health of every namespace the chain reads.
    pub(crate) async fn health(&self) -> ApiResult<wire::Health> {
        let namespaces: Vec<_> = self.chain().namespaces().cloned().collect();
        let report = self.arbor().health(&namespaces).await?;
        let namespaces = report
            .namespaces
            .iter()
            .map(|ns| wire::NamespaceHealth {
                namespace: ns.namespace.to_string(),
                figures: figures(&ns.figures),
                warnings: advice(&ns.warnings),
                trees: ns
                    .trees
                    .iter()
                    .map(|tree| wire::TreeHealth {
                        tree_id: tree.tree_id.to_string(),
                        figures: figures(&tree.figures),
                        warnings: advice(&tree.warnings),
                    })
                    .collect(),
            })
            .collect();
        let unreadable = report.unreadable.iter().map(|(what, why)| format!("{what}: {why}")).collect();
        Ok(wire::Health { at: report.at.to_string(), namespaces, unreadable })
    }

    /// How one memory or summary the chain reads was used by recorded retrievals.
    pub(crate) async fn usage(&self, input: wire::UsageInput) -> ApiResult<wire::Usage> {
        let limit = in_range("limit", input.limit, 1, 1000)?.unwrap_or(100);
        let usage = self.arbor().usage(self.chain(), &input.id, limit).await?;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(wire::Usage {
            id: usage.node.to_string(),
            retrievals: count(usage.retrievals),
            entered_context: count(usage.entered_context),
            last_used: usage.last_used.map(|at| at.to_string()),
            records: usage
                .records
                .iter()
                .map(|record| wire::UsageRecord {
                    retrieval: record.retrieval.to_string(),
                    at: record.at.to_string(),
                    entered_context: record.entered_context,
                })
                .collect(),
        })
    }

    /// The latest things done to memory in the chain's namespaces, newest first.
    pub(crate) async fn audit(&self, input: wire::AuditInput) -> ApiResult<wire::Audit> {
        let limit = in_range("limit", input.limit, 1, 1000)?.unwrap_or(100);
        let events = self.arbor().audit_log(self.chain(), limit).await?;
        let events = events
            .into_iter()
            .map(|event| wire::AuditEntry {
                at: event.at.to_string(),
                action: event.action,
                namespace: event.namespace.to_string(),
                node: event.node.map(|node| node.to_string()),
                actor: event.actor,
            })
            .collect();
        Ok(wire::Audit { events })
    }

    /// New words for a suggestion (it is replaced by an edited suggestion, still waiting).
    pub(crate) async fn edit_candidate(&self, input: wire::EditCandidateInput) -> ApiResult<wire::Reviewed> {
        let id = leaf_id(&input.id)?;
        let receipt = self.arbor().edit_candidate(self.chain(), &id, &input.text, input.title).await?;
        Ok(wire::Reviewed::from(receipt))
    }

    /// A suggestion in conflict with a current memory, and both are true: it becomes current
    /// on its own, replacing nothing.
    pub(crate) async fn keep_both(&self, input: wire::ReviewInput) -> ApiResult<wire::Reviewed> {
        let id = leaf_id(&input.id)?;
        let resolution = arbor_domain::conflict::ConflictResolution::KeepBoth;
        Ok(wire::Reviewed::from(self.arbor().resolve_conflict(self.chain(), &id, resolution).await?))
    }

    /// Makes a replaced version current again, as a person's decision.
    pub(crate) async fn restore(&self, input: wire::RestoreInput) -> ApiResult<wire::Corrected> {
        let id = leaf_id(&input.id)?;
        let expected = arbor_domain::id::Version::new(input.current_version)
            .ok_or_else(|| ApiError::invalid("`current_version` starts at 1"))?;
        let receipt = self.arbor().restore(self.chain(), &id, expected).await?;
        Ok(wire::Corrected::from(receipt))
    }

    /// What rules retired automatically, newest first: each memory with its rule, attribute and
    /// both values, for a person to check and undo.
    pub(crate) async fn retired(&self, input: wire::RetiredInput) -> ApiResult<wire::RetiredList> {
        let limit = in_range("limit", input.limit, 1, 500)?.unwrap_or(50);
        let since = input
            .since
            .as_deref()
            .map(|s| s.parse::<arbor_domain::time::Timestamp>())
            .transpose()
            .map_err(|e| ApiError::new(422, "unprocessable", format!("since: not a time: {e}")))?;
        let items = self.arbor().retired(self.chain(), since, limit).await?;
        let items = items
            .into_iter()
            .map(|item| wire::RetiredEntry {
                leaf_id: item.leaf.id.to_string(),
                namespace: item.leaf.namespace.to_string(),
                text: item.leaf.summary.clone(),
                said_at: item.leaf.observed_at.to_string(),
                retired_at: item.at.to_string(),
                rule: item.rule.to_owned(),
                attribute_name: arbor_domain::claims::catalogue::english_name(&item.attribute),
                attribute: item.attribute,
                was: item.was,
                now: item.now,
                by: item.by.as_ref().map(|by| wire::RetiredBy { leaf_id: by.id.to_string(), text: by.summary.clone() }),
            })
            .collect();
        Ok(wire::RetiredList { items })
    }

    /// Undoes an automatic retirement: the old memory is current again beside the one that
    /// retired it, and no rule retires either for the other again.
    pub(crate) async fn restore_retired(&self, input: wire::RestoreRetiredInput) -> ApiResult<wire::RestoredRetired> {
        let id = leaf_id(&input.id)?;
        let receipt = self.arbor().restore_retired(self.chain(), &id).await?;
        Ok(wire::RestoredRetired {
            restored: receipt.restored.to_string(),
            leaf_id: receipt.leaf_id.to_string(),
            namespace: receipt.namespace.to_string(),
            kept_with: receipt.kept_with.to_string(),
        })
    }

    pub(crate) fn settings(&self) -> ApiResult<wire::Settings> {
        let file = self.settings_file().ok_or_else(no_settings)?;
        let text = file.read().map_err(|error| {
            tracing::error!(error = %with_causes(&*error), "could not read the settings file");
            ApiError::new(500, "internal", "the server could not read its settings file; see its log")
        })?;
        Ok(wire::Settings { text, applies_on_restart: true })
    }

    pub(crate) fn write_settings(&self, input: wire::SettingsInput) -> ApiResult<wire::Settings> {
        let file = self.settings_file().ok_or_else(no_settings)?;
        match file.write(&input.text) {
            Ok(()) => self.settings(),
            Err(SettingsRefused::Invalid(why)) => Err(ApiError::new(422, "unprocessable", why)),
            Err(SettingsRefused::Failed(error)) => {
                tracing::error!(error = %with_causes(&*error), "could not write the settings file");
                Err(ApiError::new(503, "unavailable", "the settings file could not be written; nothing changed"))
            }
        }
    }
}

fn no_settings() -> ApiError {
    ApiError::new(404, "not_found", "this server does not serve its store's settings")
}
