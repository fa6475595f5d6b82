//! The reads: retrieve and ask, search, read a node, browse, the catalogue, the daily digest,
//! the profile, consolidation reports and the status.

use std::time::Instant;

use arbor_app::{CompactOptions, Disclosure, NodeView, RetrieveMode, RetrieveRequest};
use arbor_domain::sensitivity::Sensitivity;

use super::Service;
use super::errors::{ApiError, ApiResult};
use super::fields::{in_range, kind, mirror, text_field, timestamp, tree};
use crate::wire;

/// A model's token budget for an answer from memory, when it names none: five memories of a
/// paragraph each, with room to spare.
pub(super) const DEFAULT_ASK_TOKENS: usize = 1_000;

pub(super) fn compact(pack: &arbor_app::RetrievalPack, options: CompactOptions) -> ApiResult<wire::CompactPack> {
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

/// The evidence a token budget asks for, within what a request may ask (100 to 100,000
/// characters).
fn max_chars_for_tokens(tokens: usize) -> usize {
    arbor_domain::budget::chars_for_tokens(tokens).clamp(100, 100_000)
}

impl Service {
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
        request.max_chars = request.max_chars.or(max_tokens.map(max_chars_for_tokens));
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
        // The rendering's own lines are then fitted to the budget by the compact pack.
        request.max_chars = Some(max_chars_for_tokens(max_tokens));
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
}
