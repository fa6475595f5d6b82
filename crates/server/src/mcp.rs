//! The MCP server (`rmcp`): eight memory tools over stdio or streamable HTTP, and two views as
//! resources a host attaches when a session resumes, which cost a conversation nothing until
//! read: the daily view (`arbor://daily`, `arbor://daily/{date}`) and the profile of what memory
//! believes now (`arbor://profile`, `arbor://profile/{subject}`). Each takes a JSON
//! schema'd input (slimmed for a model: no validation patterns, which the server checks
//! anyway) and answers with one text: the compact pack's lines for `memory_retrieve`, compact
//! JSON for the rest. Tool failures come back as tool errors (`isError`) whose text is
//! `{"error": {"code", "message"}}`, so an agent can read and act on them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, Extensions, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::binding::Binding;
use crate::serve_error::ServeError;
use crate::service::{ApiError, ApiResult, Service};
use crate::wire;

const INSTRUCTIONS: &str = "Arbor is this agent's long-term memory, already scoped to the current \
user, project and conversation. Call memory_retrieve before answering anything about the user, \
their preferences, projects, people or past conversations, and cite the evidence ids it returns. \
Call memory_save when the user states a durable fact, preference, decision or constraint. Use \
memory_correct (with the version you read) when the user corrects something memory holds, and \
memory_forget when the user asks for something to be forgotten. memory_catalog shows what memory \
holds in one bounded digest; memory_browse and memory_read open trees and nodes by id. The resource \
arbor://daily is what was remembered today, highlights first, for resuming work; arbor://profile/{subject} \
is what memory believes now about the user (`me`), a person or a thing, with what each value replaced.";

/// The memory tools: bound to one service (and so to one read chain) over stdio; over HTTP,
/// to whatever the request's bearer token is bound to ([`Binding`], which the HTTP layer puts
/// in the request's extensions after checking the token), request by request.
#[derive(Debug, Clone)]
pub(crate) struct MemoryTools {
    service: Option<Arc<Service>>,
    tool_router: ToolRouter<MemoryTools>,
}

/// A call that reached the tools without a binding (the HTTP layer lets none through; this is
/// the guard behind it).
fn unbound() -> CallToolResult {
    tool_error(ApiError::new(401, "unauthorized", "a valid bearer token is required"))
}

fn tool_error(error: ApiError) -> CallToolResult {
    let body = serde_json::to_string(&error.body()).unwrap_or_else(|_| error.to_string());
    CallToolResult::error(vec![ContentBlock::text(body)])
}

/// A result as one compact JSON text: what a model reads, sent once. (Structured content
/// beside it would be the same bytes again, and output schemas would cost every conversation
/// their size before its first word; HTTP clients have the OpenAPI document.)
fn as_text<T: serde::Serialize>(result: ApiResult<T>) -> CallToolResult {
    let text = result.and_then(|value| {
        serde_json::to_string(&value)
            .map_err(|error| ApiError::new(500, "internal", format!("could not serialize a result: {error}")))
    });
    match text {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(error) => tool_error(error),
    }
}

/// A tool's input schema as a model needs it: the fields, their types, ranges and what they
/// mean. The validation patterns (control characters, storable years) and titles stay with the
/// server, which checks every input anyway; in the schema they cost each conversation
/// thousands of characters.
fn slim(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            for key in ["$schema", "title", "pattern"] {
                // A property may be named like a keyword (`title` is one): a keyword's value is
                // a string, a property's a schema.
                if map.get(key).is_some_and(serde_json::Value::is_string) {
                    map.remove(key);
                }
            }
            // What serde's defaults and Rust's integer types add says nothing to a model: an
            // absent optional field is null or empty, and no count here nears 2^32.
            if map.get("default").is_some_and(|d| d.is_null() || d.as_array().is_some_and(Vec::is_empty)) {
                map.remove("default");
            }
            if map.get("format").and_then(serde_json::Value::as_str).is_some_and(|f| f.starts_with("uint")) {
                map.remove("format");
                if map.get("maximum").and_then(serde_json::Value::as_u64) == Some(u64::from(u32::MAX)) {
                    map.remove("maximum");
                }
            }
            // Values given as instances (a default, an enum's members, examples) are data, not
            // schemas: a key named `title` in them is the data's.
            for (key, value) in map.iter_mut() {
                if !matches!(key.as_str(), "default" | "enum" | "const" | "examples") {
                    slim(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(slim),
        _ => {}
    }
}

#[tool_router]
impl MemoryTools {
    /// The tools of one service, for stdio.
    pub(crate) fn new(service: Arc<Service>) -> MemoryTools {
        MemoryTools { service: Some(service), ..MemoryTools::per_request() }
    }

    /// The tools over HTTP: each call acts as the binding its request authenticated as.
    pub(crate) fn per_request() -> MemoryTools {
        let mut tool_router = Self::tool_router();
        for route in tool_router.map.values_mut() {
            let mut schema = serde_json::Value::Object((*route.attr.input_schema).clone());
            slim(&mut schema);
            if let serde_json::Value::Object(slimmed) = schema {
                route.attr.input_schema = Arc::new(slimmed);
            }
        }
        MemoryTools { service: None, tool_router }
    }

    /// The service a call acts as: its request's binding, over HTTP; the one given, over stdio.
    fn bound(&self, extensions: &Extensions) -> Option<Arc<Service>> {
        let parts = extensions.get::<axum::http::request::Parts>();
        match parts.and_then(|parts| parts.extensions.get::<Binding>()) {
            Some(binding) => Some(binding.service.clone()),
            None => self.service.clone(),
        }
    }

    /// The default path: ask memory before answering.
    #[tool(
        description = "Answer from long-term memory. Call before answering anything about the user, their preferences, people, projects or past conversations. Returns the relevant memories as lines (date, id, version, why), or says memory holds nothing relevant. Cite the ids.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_retrieve(
        &self,
        Parameters(input): Parameters<wire::AskInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        // The compact pack's lines of text, not its JSON: what a model reads best, and least.
        match service.ask(input).await {
            Ok(pack) => CallToolResult::success(vec![ContentBlock::text(pack.text)]),
            Err(error) => tool_error(error),
        }
    }

    #[tool(
        description = "List the memory trees (one per person, project or topic) in scope, or outline one tree's summaries and leaves by tree id.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_browse(
        &self,
        Parameters(input): Parameters<wire::BrowseInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.browse(input).await)
    }

    #[tool(
        description = "Read one memory (leaf-…) or summary (sum-…) by id, with its full text, version and status.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_read(
        &self,
        Parameters(input): Parameters<wire::ReadInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.read(input, false).await)
    }

    #[tool(
        description = "Save a durable fact, preference, decision, constraint or event the user stated. Arbor decides whether to keep it, files it under its person or topic, and replaces an older version of the same fact. The result says whether it is retrievable now or waits for a person.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_save(
        &self,
        Parameters(input): Parameters<wire::SaveInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.save(input).await)
    }

    #[tool(
        description = "Correct a memory the user says is wrong: a new version with the corrected text; the old one stays as history. Pass the id and the version you read; if memory changed since, it fails with precondition_failed: read it again.",
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
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.correct(input, None, false).await)
    }

    #[tool(
        description = "Forget a memory the user wants gone: every version leaves memory for good (ids and hashes stay as proof). Only memories this scope writes.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(
        &self,
        Parameters(input): Parameters<wire::ForgetInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.forget(input, false).await)
    }

    #[tool(
        description = "What consolidation passes changed in memory in scope, newest first: merges, replacements and what waits for a person. Read-only.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_dream(
        &self,
        Parameters(input): Parameters<wire::DreamInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.dream(input).await)
    }

    #[tool(
        description = "A bounded digest of what memory holds: one line per tree with its size, last update and newest titles. Cheap.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_catalog(
        &self,
        Parameters(input): Parameters<wire::CatalogInput>,
        extensions: Extensions,
    ) -> CallToolResult {
        let Some(service) = self.bound(&extensions) else { return unbound() };
        as_text(service.catalog(input).await)
    }
}

/// The daily view's resources: today's (`arbor://daily`) and any day's
/// (`arbor://daily/2026-05-08`), each at UTC unless `?utc_offset=+08:00` says whose day it is.
const DAILY: &str = "arbor://daily";

/// The day and offset a daily resource's URI names, or why it names none.
fn daily_input(uri: &str) -> Result<wire::DailyInput, String> {
    let rest = uri.strip_prefix(DAILY).ok_or_else(|| format!("no resource {uri:?}: try {DAILY}"))?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let date = match path {
        "" | "/" | "/today" => None,
        date => Some(date.strip_prefix('/').ok_or_else(|| format!("no resource {uri:?}: try {DAILY}/YYYY-MM-DD"))?),
    };
    let mut utc_offset = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            // `+` in a URI query is often sent as `%2B`, and `:` as `%3A`.
            Some(("utc_offset", value)) => {
                utc_offset = Some(value.replace("%2B", "+").replace("%2b", "+").replace("%3A", ":").replace("%3a", ":"))
            }
            _ => return Err(format!("{uri:?}: the only parameter is utc_offset, e.g. ?utc_offset=%2B08:00")),
        }
    }
    Ok(wire::DailyInput { date: date.map(str::to_owned), utc_offset, limit: None })
}

/// The profile's resources: every subject's (`arbor://profile`) and one subject's
/// (`arbor://profile/Kofi`, `arbor://profile/me`), what memory believes now.
const PROFILE: &str = "arbor://profile";

/// The subject a profile resource's URI names (`None` for every subject), or why it names none.
fn profile_input(uri: &str) -> Result<wire::ProfileInput, String> {
    let rest = uri.strip_prefix(PROFILE).ok_or_else(|| format!("no resource {uri:?}: try {PROFILE}"))?;
    let subject = match rest {
        "" | "/" => None,
        path => {
            let name = path.strip_prefix('/').ok_or_else(|| format!("no resource {uri:?}: try {PROFILE}/NAME"))?;
            if name.contains(['?', '#', '/']) {
                return Err(format!("{uri:?}: a profile takes a name only, e.g. {PROFILE}/Kofi"));
            }
            Some(percent_decoded(name).ok_or_else(|| format!("{uri:?}: the name is not valid percent-encoded UTF-8"))?)
        }
    };
    Ok(wire::ProfileInput { subject })
}

/// `Kofi%20Mensah` as `Kofi Mensah`; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            // Two hex digits, strictly: `from_str_radix` alone would take "%+1".
            let hex = bytes.get(at + 1..at + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("arbor", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let today = Resource::new(DAILY, "daily")
            .with_title("Today in memory")
            .with_description("What was remembered today (UTC; ?utc_offset=%2B08:00 for another day's edge), highlights first: read it when resuming work.")
            .with_mime_type("application/json");
        let profile = Resource::new(PROFILE, "profile")
            .with_title("What memory believes now")
            .with_description("For the user, each person and each thing in scope: each attribute's current value, when and where it was said, and what it replaced.")
            .with_mime_type("application/json");
        Ok(ListResourcesResult::with_all_items(vec![today, profile]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let day = ResourceTemplate::new(format!("{DAILY}/{{date}}"), "day")
            .with_title("A day in memory")
            .with_description(
                "What was remembered on a day (YYYY-MM-DD), across every tree in scope, highlights first.",
            )
            .with_mime_type("application/json");
        let subject = ResourceTemplate::new(format!("{PROFILE}/{{subject}}"), "subject-profile")
            .with_title("What memory believes about one subject")
            .with_description("A person's or a thing's name, or `me` for the user: each attribute's current value and what it replaced.")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![day, subject]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(service) = self.bound(&context.extensions) else {
            return Err(ErrorData::invalid_request("a valid bearer token is required", None));
        };
        let failed = |error: ApiError| ErrorData::invalid_params(error.to_string(), None);
        let serialized = |error: serde_json::Error| {
            ErrorData::internal_error(format!("could not serialize a result: {error}"), None)
        };
        let text = if request.uri.starts_with(PROFILE) {
            let input = profile_input(&request.uri).map_err(|why| ErrorData::resource_not_found(why, None))?;
            serde_json::to_string(&service.profile(input).await.map_err(failed)?).map_err(serialized)?
        } else {
            let input = daily_input(&request.uri).map_err(|why| ErrorData::resource_not_found(why, None))?;
            serde_json::to_string(&service.daily(input).await.map_err(failed)?).map_err(serialized)?
        };
        let contents = ResourceContents::text(text, request.uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Serves the tools over stdin/stdout until the client closes them.
pub async fn serve_stdio(service: Arc<Service>) -> Result<(), ServeError> {
    let running = MemoryTools::new(service)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::McpInitialization(e.to_string()))?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_percent_decoded_strictly() {
        assert_eq!(percent_decoded("Kofi%20Mensah").as_deref(), Some("Kofi Mensah"));
        assert_eq!(percent_decoded("%E5%B0%8F%E7%BE%8E").as_deref(), Some("小美"));
        assert_eq!(percent_decoded("小美").as_deref(), Some("小美"));
        for broken in ["%", "%2", "%zz", "%+1", "%-1", "%FF"] {
            assert_eq!(percent_decoded(broken), None, "{broken}");
        }
    }

    #[test]
    fn the_day_shape_is_the_schemas() {
        for good in ["2026-05-08", "1679-01-01", "2260-12-31", "2026-02-30"] {
            assert!(wire::has_day_shape(good), "{good}");
        }
        for bad in [
            "2026-5-08",
            "1678-12-31",
            "2261-01-01",
            "2026-13-01",
            "2026-00-10",
            "2026-01-32",
            "+026-01-01",
            "20260508",
        ] {
            assert!(!wire::has_day_shape(bad), "{bad}");
        }
    }

    #[test]
    fn daily_resources_name_a_day_and_an_offset() {
        let today = daily_input("arbor://daily").unwrap();
        assert_eq!((today.date, today.utc_offset), (None, None));
        let day = daily_input("arbor://daily/2026-05-08?utc_offset=%2B08%3A00").unwrap();
        assert_eq!((day.date.as_deref(), day.utc_offset.as_deref()), (Some("2026-05-08"), Some("+08:00")));
        assert!(daily_input("arbor://daily?utc_offset=-05:00").unwrap().utc_offset.as_deref() == Some("-05:00"));
        for bad in ["arbor://nightly", "file:///etc/passwd", "arbor://daily?namespace=global", "arbor://dailyx"] {
            assert!(daily_input(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn profile_resources_name_a_subject_or_everyone() {
        assert_eq!(profile_input("arbor://profile").unwrap().subject, None);
        assert_eq!(profile_input("arbor://profile/").unwrap().subject, None);
        assert_eq!(profile_input("arbor://profile/me").unwrap().subject.as_deref(), Some("me"));
        assert_eq!(profile_input("arbor://profile/Kofi%20Mensah").unwrap().subject.as_deref(), Some("Kofi Mensah"));
        assert_eq!(profile_input("arbor://profile/%E5%BC%A0%E4%BC%9F").unwrap().subject.as_deref(), Some("张伟"));
        for bad in [
            "arbor://profiles",
            "arbor://profile/a/b",
            "arbor://profile/x?namespace=global",
            "arbor://profile/%ZZ",
            "arbor://profile/%FF",
        ] {
            assert!(profile_input(bad).is_err(), "{bad}");
        }
    }

    /// Keywords go; a property named like one stays, and so does data given as an instance.
    #[test]
    fn slimming_strips_keywords_not_data() {
        let mut schema = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "SaveInput",
            "properties": {
                "title": { "type": "string", "pattern": "^x$", "title": "Title" },
                "labels": { "type": "array", "default": [] },
                "style": { "type": "object", "default": { "title": "kept", "pattern": "kept" } },
                "count": { "type": "integer", "format": "uint32", "maximum": 4294967295u64 }
            }
        });
        slim(&mut schema);
        assert_eq!(
            schema,
            serde_json::json!({
                "properties": {
                    "title": { "type": "string" },
                    "labels": { "type": "array" },
                    "style": { "type": "object", "default": { "title": "kept", "pattern": "kept" } },
                    "count": { "type": "integer" }
                }
            })
        );
    }
}
