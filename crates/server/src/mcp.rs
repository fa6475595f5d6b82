//! The MCP server (`rmcp`): six memory tools over stdio or streamable HTTP, each with JSON
//! schemas for its input and output. Tool failures come back as tool errors (`isError`) whose
//! text is `{"error": {"code", "message"}}`, so an agent can read and act on them.

use std::sync::Arc;

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::service::{ApiError, Service};
use crate::wire;

const INSTRUCTIONS: &str = "Arbor is this agent's long-term memory, already scoped to the current \
user, project and conversation. Call memory_retrieve before answering anything about the user, \
their preferences, projects, people or past conversations, and cite the evidence ids it returns. \
Call memory_save when the user states a durable fact, preference, decision or constraint. Use \
memory_correct (with the version you read) when the user corrects something memory holds. \
memory_catalog shows what memory holds in one bounded digest; memory_browse and memory_read \
open trees and nodes by id.";

/// The memory tools, bound to one service (and so to one read chain).
#[derive(Debug, Clone)]
pub(crate) struct MemoryTools {
    service: Arc<Service>,
    tool_router: ToolRouter<MemoryTools>,
}

fn tool_error(error: ApiError) -> CallToolResult {
    let body = serde_json::to_string(&error.body()).unwrap_or_else(|_| error.to_string());
    CallToolResult::error(vec![ContentBlock::text(body)])
}

// Tool methods spell out `Result<Json<T>, CallToolResult>`: the `tool` macro reads the return
// type to publish the output schema, and an alias would hide it.

#[tool_router]
impl MemoryTools {
    pub(crate) fn new(service: Arc<Service>) -> MemoryTools {
        MemoryTools { service, tool_router: Self::tool_router() }
    }

    /// The default path: ask memory before answering.
    #[tool(
        description = "Answer a question from long-term memory. Call this before answering any question about the user, their preferences, people, projects or earlier conversations. Returns a bounded, explained retrieval pack: known facts, constraints, recent items, gaps, and evidence items with ids, versions, sources and why each was picked. Scope is fixed by the server; do not try to name namespaces.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_retrieve(
        &self,
        Parameters(input): Parameters<wire::RetrieveInput>,
    ) -> Result<Json<wire::Pack>, CallToolResult> {
        self.service.retrieve(input).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "List the memory trees (one per person, project or topic) this agent can read, or outline one tree (its summaries and leaves) by tree id. Use it to explore what memory holds when a question is broad.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_browse(
        &self,
        Parameters(input): Parameters<wire::BrowseInput>,
    ) -> Result<Json<wire::Browse>, CallToolResult> {
        self.service.browse(input).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "Read one memory (leaf-…) or summary (sum-…) by the id a pack, search or outline gave, with its full text, version and status. Pass the version back to memory_correct.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_read(
        &self,
        Parameters(input): Parameters<wire::ReadInput>,
    ) -> Result<Json<wire::Node>, CallToolResult> {
        self.service.read(input).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "Save something worth remembering: a durable fact, preference, decision, constraint or event the user stated. Arbor decides whether it is kept, files it under the right person or topic, and supersedes an older version of the same fact. Inferred memories may land as candidates awaiting confirmation.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_save(
        &self,
        Parameters(input): Parameters<wire::SaveInput>,
    ) -> Result<Json<wire::SaveResult>, CallToolResult> {
        self.service.save(input).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "Correct a memory the user says is wrong: writes a new version with the corrected text, keeping the old one as history. Requires the id and the version you read (memory_read or a pack); if memory changed since, it fails with code precondition_failed and you should read it again. Pass message_id of the message that asked for the fix, for provenance. Whether the correction is current at once or waits for a person's confirmation is decided by how this server was started, not by the call.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn memory_correct(
        &self,
        Parameters(input): Parameters<wire::CorrectInput>,
    ) -> Result<Json<wire::Corrected>, CallToolResult> {
        self.service.correct(input, None).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "What consolidation (\"dream\") passes changed in this agent's memory, newest first: memories merged, superseded or invalidated in hindsight, and what waits for a person, by id and rule. Read-only.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_dream(
        &self,
        Parameters(input): Parameters<wire::DreamInput>,
    ) -> Result<Json<wire::Dream>, CallToolResult> {
        self.service.dream(input).await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "A bounded digest of everything memory holds for this agent: one line per tree with its size, last update and most recent titles. Cheap; use it to decide what to retrieve or browse.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_catalog(
        &self,
        Parameters(input): Parameters<wire::CatalogInput>,
    ) -> Result<Json<wire::Catalog>, CallToolResult> {
        self.service.catalog(input).await.map(Json).map_err(tool_error)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("arbor", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Serves the tools over stdin/stdout until the client closes them.
pub async fn serve_stdio(service: Arc<Service>) -> Result<()> {
    let running = MemoryTools::new(service)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialization failed: {e}"))?;
    running.waiting().await?;
    Ok(())
}
