//! The OpenAPI 3.1 document of the HTTP API, built from the wire types' JSON schemas (so the
//! document cannot drift from what the server accepts and returns). The same document is
//! checked in at `crates/server/openapi.json`; a test fails when the two differ.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::wire;

/// Every component schema, named by type, with references in OpenAPI's place for them.
fn components() -> (Map<String, Value>, impl Fn(&str) -> Value) {
    let settings = SchemaSettings::draft2020_12().with(|s| s.definitions_path = "#/components/schemas".into());
    let mut generator = SchemaGenerator::new(settings);
    fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
        generator.subschema_for::<T>();
    }
    add::<wire::RetrieveInput>(&mut generator);
    add::<wire::SearchInput>(&mut generator);
    add::<wire::SaveInput>(&mut generator);
    add::<wire::CorrectInput>(&mut generator);
    add::<wire::ForgetInput>(&mut generator);
    add::<wire::BatchInput>(&mut generator);
    add::<wire::MessagesInput>(&mut generator);
    add::<wire::BatchResult>(&mut generator);
    add::<wire::SyncInput>(&mut generator);
    add::<wire::Retrieved>(&mut generator);
    add::<wire::SearchResult>(&mut generator);
    add::<wire::Node>(&mut generator);
    add::<wire::Browse>(&mut generator);
    add::<wire::SaveResult>(&mut generator);
    add::<wire::Corrected>(&mut generator);
    add::<wire::Forgotten>(&mut generator);
    add::<wire::ReviewInput>(&mut generator);
    add::<wire::Pending>(&mut generator);
    add::<wire::Reviewed>(&mut generator);
    add::<wire::Catalog>(&mut generator);
    add::<wire::Dream>(&mut generator);
    add::<wire::Daily>(&mut generator);
    add::<wire::Profile>(&mut generator);
    add::<wire::Status>(&mut generator);
    add::<wire::Synced>(&mut generator);
    add::<wire::Memories>(&mut generator);
    add::<wire::Health>(&mut generator);
    add::<wire::Usage>(&mut generator);
    add::<wire::Audit>(&mut generator);
    add::<wire::RestoreInput>(&mut generator);
    add::<wire::RetiredList>(&mut generator);
    add::<wire::RestoreRetiredInput>(&mut generator);
    add::<wire::RestoredRetired>(&mut generator);
    add::<wire::EditCandidateInput>(&mut generator);
    add::<wire::Settings>(&mut generator);
    add::<wire::SettingsInput>(&mut generator);
    add::<wire::ErrorBody>(&mut generator);
    let schemas = generator.take_definitions(true);
    (schemas, |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") }))
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorBody" } } }
    })
}

/// The responses every operation may give besides its own.
fn common_errors(responses: &mut Map<String, Value>) {
    responses.insert("400".into(), error_response("Invalid request (code `invalid_request`)."));
    responses.insert("401".into(), error_response("Missing or wrong bearer token (code `unauthorized`)."));
    responses.insert(
        "403".into(),
        error_response(
            "Unknown Host name or foreign Origin, or a write to a layer this server only reads (code `forbidden`).",
        ),
    );
    responses.insert(
        "404".into(),
        error_response(
            "Not found, or not readable by this server's scope (code `not_found`): the two are indistinguishable.",
        ),
    );
    responses.insert("405".into(), error_response("Method not allowed (code `method_not_allowed`)."));
    responses.insert("500".into(), error_response("Internal error (code `internal`)."));
    responses.insert("503".into(), error_response("The store is busy or unavailable (code `unavailable`); retry."));
}

fn operation(summary: &str, id: &str, request: Option<Value>, ok: Value, extra: &[(&str, &str)]) -> Value {
    let mut responses = Map::new();
    responses.insert("200".into(), json!({ "description": "OK", "content": { "application/json": { "schema": ok } } }));
    common_errors(&mut responses);
    for (status, description) in extra {
        responses.insert((*status).into(), error_response(description));
    }
    let mut op = json!({ "summary": summary, "operationId": id, "responses": responses });
    if let Some(schema) = request {
        op["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": schema } } });
        op["responses"]["413"] = error_response("Request body too large (code `payload_too_large`).");
        op["responses"]["415"] = error_response("The body is not application/json (code `unsupported_media_type`).");
    }
    op
}

/// A save whose `valid_from` is later than when it is said: well-formed, but not a fact yet.
const LATER_VALIDITY: (&str, &str) =
    ("422", "`valid_from` is later than `observed_at` (or now); a plan belongs in the text (code `unprocessable`).");

fn query_parameter(name: &str, description: &str, schema: Value, required: bool) -> Value {
    json!({ "name": name, "in": "query", "required": required, "description": description, "schema": schema })
}

/// The whole document.
/// The memory centre's operator endpoints (`crate::centre`): an operator's token only.
fn centre_paths(schema: &impl Fn(&str) -> Value) -> Vec<(&'static str, Value)> {
    const OPERATOR_ONLY: (&str, &str) = ("403", "This token is not an operator's (code `forbidden`).");
    let integer = |min: u32, max: u32| json!({ "type": "integer", "minimum": min, "maximum": max });
    let kinds: Vec<&str> = arbor_domain::model::MemoryKind::ALL.iter().map(|k| k.as_str()).collect();
    let mut memories = operation(
        "The current memories in scope, newest first, restricted ones too (an operator's token only).",
        "memories",
        None,
        schema("Memories"),
        &[OPERATOR_ONLY],
    );
    memories["parameters"] = json!([
        query_parameter(
            "tree",
            "Only this tree's.",
            json!({ "type": "string", "maxLength": 60, "pattern": wire::TREE_ID }),
            false
        ),
        query_parameter("kind", "Only this kind.", json!({ "type": "string", "enum": kinds }), false),
        query_parameter("offset", "Skip this many (0-100000).", integer(0, 100_000), false),
        query_parameter("limit", "At most this many (1-500, default 100).", integer(1, 500), false),
    ]);
    let health = operation(
        "Duplicate rate, history share, stale summaries, waiting suggestions and bytes per memory of each namespace and tree in scope, with warnings (an operator's token only).",
        "health",
        None,
        schema("Health"),
        &[OPERATOR_ONLY],
    );
    let mut usage = operation(
        "How recorded retrievals used one memory or summary (an operator's token only).",
        "usage",
        None,
        schema("Usage"),
        &[OPERATOR_ONLY],
    );
    usage["parameters"] = json!([
        query_parameter("id", "A leaf-… or sum-… id.", json!({ "type": "string", "pattern": wire::NODE_ID }), true),
        query_parameter("limit", "Of the latest this many retrievals (1-1000, default 100).", integer(1, 1000), false),
    ]);
    let mut audit = operation(
        "What was done to memory in scope, newest first: action, node, who (an operator's token only).",
        "audit",
        None,
        schema("Audit"),
        &[OPERATOR_ONLY],
    );
    audit["parameters"] =
        json!([query_parameter("limit", "At most this many (1-1000, default 100).", integer(1, 1000), false)]);
    let restore = operation(
        "Make a replaced version current again, bound to the memory's version read (an operator's token only).",
        "restore",
        Some(schema("RestoreInput")),
        schema("Corrected"),
        &[
            OPERATOR_ONLY,
            ("409", "It cannot be restored, e.g. it is current (code `conflict`)."),
            ("412", "Stale version (code `precondition_failed`)."),
        ],
    );
    let mut retired = operation(
        "What rules retired automatically, newest first: each memory with its rule, attribute, both values and what replaced it (an operator's token only).",
        "retired",
        None,
        schema("RetiredList"),
        &[OPERATOR_ONLY, ("422", "`since` of the right shape that is not a time (code `unprocessable`).")],
    );
    retired["parameters"] = json!([
        query_parameter(
            "since",
            "Only those retired since this time (RFC 3339).",
            json!({ "type": "string", "maxLength": 40, "format": "date-time", "pattern": wire::STORABLE_YEAR }),
            false
        ),
        query_parameter("limit", "At most this many (1-500, default 50).", integer(1, 500), false),
    ]);
    let restore_retired = operation(
        "Undo an automatic retirement: the memory is current again beside the one that retired it, and no rule retires either for the other again (an operator's token only).",
        "restore_retired",
        Some(schema("RestoreRetiredInput")),
        schema("RestoredRetired"),
        &[OPERATOR_ONLY, ("409", "No rule retired it, or it was restored already (code `conflict`).")],
    );
    let read_settings = operation(
        "The store's settings file, arbor.json (an operator's token only).",
        "settings",
        None,
        schema("Settings"),
        &[OPERATOR_ONLY],
    );
    let write_settings = operation(
        "Replace arbor.json, checked as arbor checks it on opening the store; applies on restart (an operator's token only).",
        "write_settings",
        Some(schema("SettingsInput")),
        schema("Settings"),
        &[
            OPERATOR_ONLY,
            ("422", "Settings arbor would refuse, or a change only a command may make (code `unprocessable`)."),
        ],
    );
    let edit = operation(
        "New words for a suggestion: an edited suggestion replaces it, still waiting (an operator's token only).",
        "review_edit",
        Some(schema("EditCandidateInput")),
        schema("Reviewed"),
        &[OPERATOR_ONLY, ("409", "It is not a suggestion, or another memory says this (code `conflict`).")],
    );
    let keep_both = operation(
        "Both are true: a suggestion in conflict becomes current on its own, replacing nothing (an operator's token only).",
        "review_keep_both",
        Some(schema("ReviewInput")),
        schema("Reviewed"),
        &[OPERATOR_ONLY, ("409", "It is not a suggestion (code `conflict`).")],
    );
    vec![
        ("/api/v1/memory/review/edit", json!({ "post": edit })),
        ("/api/v1/memory/review/keep_both", json!({ "post": keep_both })),
        ("/api/v1/memory/memories", json!({ "get": memories })),
        ("/api/v1/memory/health", json!({ "get": health })),
        ("/api/v1/memory/usage", json!({ "get": usage })),
        ("/api/v1/memory/audit", json!({ "get": audit })),
        ("/api/v1/memory/restore", json!({ "post": restore })),
        ("/api/v1/memory/retired", json!({ "get": retired })),
        ("/api/v1/memory/retired/restore", json!({ "post": restore_retired })),
        ("/api/v1/memory/settings", json!({ "get": read_settings, "put": write_settings })),
    ]
}

pub(crate) fn document() -> Value {
    let (schemas, schema) = components();
    let centre = centre_paths(&schema);
    let mut get_node = operation(
        "Read one memory or summary by id, with its text. Leaves carry an ETag: their version.",
        "get",
        None,
        schema("Node"),
        &[("409", "The memory's file changed on disk since it was written (code `conflict`).")],
    );
    get_node["parameters"] = json!([query_parameter(
        "id",
        "A leaf-… or sum-… id.",
        json!({ "type": "string", "pattern": wire::NODE_ID }),
        true
    )]);
    get_node["responses"]["200"]["headers"] =
        json!({ "ETag": { "description": "The leaf's version, for If-Match.", "schema": { "type": "string" } } });
    let mut browse = operation("List the trees in scope, or outline one.", "browse", None, schema("Browse"), &[]);
    browse["parameters"] = json!([
        query_parameter(
            "tree",
            "A tree id; without it, list the trees.",
            json!({ "type": "string", "maxLength": 60, "pattern": wire::TREE_ID }),
            false
        ),
        query_parameter(
            "depth",
            "Outline depth (1-8, default 3).",
            json!({ "type": "integer", "minimum": 1, "maximum": 8 }),
            false
        ),
    ]);
    let mut catalog =
        operation("A bounded one-line-per-tree digest of memory in scope.", "catalog", None, schema("Catalog"), &[]);
    catalog["parameters"] = json!([query_parameter(
        "budget_chars",
        "At most this many characters (200-20000, default 4000).",
        json!({ "type": "integer", "minimum": 200, "maximum": 20000 }),
        false
    )]);
    let mut dream = operation(
        "What consolidation passes changed in memory in scope, newest first (read-only).",
        "dream",
        None,
        schema("Dream"),
        &[],
    );
    dream["parameters"] = json!([query_parameter(
        "limit",
        "At most this many reports (1-20, default 3).",
        json!({ "type": "integer", "minimum": 1, "maximum": 20 }),
        false
    )]);
    let mut daily = operation(
        "What was remembered on one day across every tree in scope, newest first, with the day's highlights.",
        "daily",
        None,
        schema("Daily"),
        &[("422", "A date of the right shape that is not in the calendar, e.g. 2026-02-30 (code `unprocessable`).")],
    );
    daily["parameters"] = json!([
        query_parameter(
            "date",
            "The day, YYYY-MM-DD (default: today at `utc_offset`).",
            json!({ "type": "string", "maxLength": 10, "pattern": wire::DAY }),
            false
        ),
        query_parameter(
            "utc_offset",
            "The reader's offset from UTC, e.g. +08:00 (default +00:00).",
            json!({ "type": "string", "maxLength": 6, "pattern": wire::UTC_OFFSET }),
            false
        ),
        query_parameter(
            "limit",
            "At most this many memories, newest first (1-500, default 200).",
            json!({ "type": "integer", "minimum": 1, "maximum": 500 }),
            false
        ),
    ]);
    let mut profile = operation(
        "What memory believes now: per subject (the speaker, each person and thing), each attribute's current value, when and where it was said, and what it replaced.",
        "profile",
        None,
        schema("Profile"),
        &[("422", "A blank `subject` (code `unprocessable`): leave it out for every subject.")],
    );
    profile["parameters"] = json!([query_parameter(
        "subject",
        "A person's or a thing's name, or `me` for the speaker (default: every subject).",
        json!({ "type": "string", "minLength": 1, "maxLength": 200 }),
        false
    )]);
    let mut correct = operation(
        "Correct a memory: a new version bound to the version read (`version`, and If-Match if sent).",
        "correct",
        Some(schema("CorrectInput")),
        schema("Corrected"),
        &[
            ("403", "The memory is in a broader layer this server reads but does not write (code `forbidden`)."),
            ("409", "The memory cannot be corrected, e.g. it is a candidate or history (code `conflict`)."),
            (
                "412",
                "Stale version: the memory changed since it was read, or If-Match and `version` disagree (code `precondition_failed`).",
            ),
        ],
    );
    correct["parameters"] = json!([{
        "name": "If-Match", "in": "header", "required": false,
        "description": "The ETag of the version read, e.g. \"2\"; must agree with `version`.",
        "schema": { "type": "string", "pattern": "^(\\*|\"[1-9][0-9]{0,8}\")$" }
    }]);
    let forget = operation(
        "Forget a memory of this server's write scope: every version, from rows, bodies, index and summaries.",
        "forget",
        Some(schema("ForgetInput")),
        schema("Forgotten"),
        &[("403", "The memory is in a broader layer this server reads but does not write (code `forbidden`).")],
    );
    const OPERATOR_ONLY: (&str, &str) = ("403", "This token is not an operator's (code `forbidden`).");
    let pending = operation(
        "What waits for a person in this token's read chain, oldest first (an operator's token only).",
        "review_list",
        None,
        schema("Pending"),
        &[OPERATOR_ONLY],
    );
    let decide = |summary: &str, id: &str| {
        operation(
            summary,
            id,
            Some(schema("ReviewInput")),
            schema("Reviewed"),
            &[OPERATOR_ONLY, ("409", "It is not a candidate (code `conflict`).")],
        )
    };
    let confirm = decide("Confirm a candidate: it becomes current (an operator's token only).", "review_confirm");
    let reject = decide("Reject a candidate: it is never retrieved (an operator's token only).", "review_reject");
    let probe = |summary: &str, id: &str, status: &str| {
        json!({
            "summary": summary, "operationId": id, "security": [{}],
            "responses": {
                "200": { "description": "OK", "content": { "application/json": { "schema": {
                    "type": "object", "required": ["status"],
                    "properties": { "status": { "type": "string", "const": status } }
                } } } },
                "503": error_response("Not ready: the store does not answer yet (code `unavailable`).")
            }
        })
    };
    let healthz = probe("Liveness: the process answers. Needs no token.", "healthz", "ok");
    let readyz = probe("Readiness: the store (or the token book) answers too. Needs no token.", "readyz", "ready");
    let mut metrics = operation(
        "Prometheus metrics: requests by route and status, latency histograms, jobs and memories per open store. On a multi-tenant server, the administrator's token (`--token`) only.",
        "metrics",
        None,
        json!({}),
        &[("403", "A multi-tenant server started without an administrator's token (code `forbidden`).")],
    );
    metrics["responses"]["200"] = json!({ "description": "The text exposition format.", "content": { "text/plain": { "schema": { "type": "string" } } } });
    let mut sync =
        operation("Run pending background jobs now.", "sync", Some(schema("SyncInput")), schema("Synced"), &[]);
    sync["requestBody"]["required"] = json!(false);

    let mut document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Arbor memory API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Long-term memory for agents. Every request runs in the scope its bearer token (or the server's own binding) was issued for; no request can name a namespace or a tenant."
        },
        "servers": [{ "url": "/" }],
        "security": [{}, { "bearer": [] }],
        "paths": {
            "/api/v1/memory/retrieve": { "post": operation("Answer a question with a retrieval pack: the full, explained pack, or with `\"format\": \"compact\"` each memory once and the text a model reads.", "retrieve", Some(schema("RetrieveInput")), schema("Retrieved"), &[]) },
            "/api/v1/memory/search": { "post": operation("Search current memories; a flat list of hits.", "search", Some(schema("SearchInput")), schema("SearchResult"), &[]) },
            "/api/v1/memory/get": { "get": get_node },
            "/api/v1/memory/upsert": { "post": operation("Save an event; Arbor decides what to keep.", "upsert", Some(schema("SaveInput")), schema("SaveResult"), &[LATER_VALIDITY]) },
            "/api/v1/memory/upsert_batch": { "post": operation("Save up to 100 events in one write: a refused item refuses the request, so nothing is half-written; each item's outcome, in order.", "upsert_batch", Some(schema("BatchInput")), schema("BatchResult"), &[LATER_VALIDITY]) },
            "/api/v1/memory/messages": { "post": operation("Save a conversation's messages ([{role, content}]); a role only lowers the server's speaker, system prompts are not kept.", "messages", Some(schema("MessagesInput")), schema("BatchResult"), &[]) },
            "/api/v1/memory/correct": { "post": correct },
            "/api/v1/memory/forget": { "post": forget },
            "/api/v1/memory/browse": { "get": browse },
            "/api/v1/memory/catalog": { "get": catalog },
            "/api/v1/memory/dream": { "get": dream },
            "/api/v1/memory/daily": { "get": daily },
            "/api/v1/memory/profile": { "get": profile },
            "/api/v1/memory/status": { "get": operation("What this server is bound to, and sizes in scope.", "status", None, schema("Status"), &[]) },
            "/api/v1/memory/sync": { "post": sync },
            "/api/v1/memory/review": { "get": pending },
            "/api/v1/memory/review/confirm": { "post": confirm },
            "/api/v1/memory/review/reject": { "post": reject },
            "/metrics": { "get": metrics },
            "/healthz": { "get": healthz },
            "/readyz": { "get": readyz }
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } }
        }
    });
    for (path, item) in centre {
        document["paths"][path] = item;
    }
    document
}

/// A JSON value written with every object's keys in order, whatever order the map keeps: the
/// checked-in document must read the same from every build (a dependency may switch
/// `serde_json` to keep insertion order).
struct SortedKeys<'a>(&'a Value);

impl serde::Serialize for SortedKeys<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    out.serialize_entry(key, &SortedKeys(&map[key]))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&SortedKeys(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// The document as checked in: pretty, keys sorted.
pub(crate) fn canonical_document() -> String {
    serde_json::to_string_pretty(&SortedKeys(&document())).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in document is what the server serves; regenerate it with
    /// `ARBOR_UPDATE_OPENAPI=1 cargo test -p arbor-server openapi`.
    #[test]
    fn the_checked_in_openapi_document_is_the_served_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
        let served = canonical_document();
        if std::env::var_os("ARBOR_UPDATE_OPENAPI").is_some() {
            std::fs::write(path, &served).unwrap();
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == served,
            "crates/server/openapi.json is out of date: run ARBOR_UPDATE_OPENAPI=1 cargo test -p arbor-server openapi"
        );
    }

    #[test]
    fn every_reference_resolves_and_no_input_names_a_scope() {
        let document = document();
        let text = document.to_string();
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = piece.split('"').next().unwrap();
            assert!(schemas.contains_key(name), "dangling reference to {name}");
        }
        for input in ["RetrieveInput", "SearchInput", "SaveInput", "CorrectInput", "SyncInput"] {
            let schema = &schemas[input];
            assert_eq!(schema["additionalProperties"], false, "{input} refuses unknown fields");
            let fields = schema["properties"].as_object().unwrap();
            for scope in ["namespace", "namespaces", "read_chain", "path", "conversation", "project", "run"] {
                assert!(!fields.contains_key(scope), "{input} must not take `{scope}`");
            }
        }
    }
}
