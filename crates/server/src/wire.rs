//! The wire contract of the agent interfaces: every tool input and output of the MCP server
//! and every request and response body of the HTTP API, with JSON schemas derived from these
//! types (served in the MCP tool list and in `/openapi.json`).
//!
//! No input names a namespace, a read chain or a path: those come from how the server was
//! started. Inputs refuse unknown fields, so an argument like `namespace` is an error, never
//! silently ignored. Outputs mirror the app's own serialization (the pack is the contract);
//! tests check that each mirror reads back exactly what the app writes.

use arbor_domain::model::MemoryKind;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};

/// Text with something in it and no NUL (what event validation accepts), as a JSON Schema
/// pattern. ECMA's `\s` and Rust's whitespace differ only in U+FEFF (ECMA's) and U+0085
/// (Rust's), so both are excluded from the character that must be there.
const SOME_TEXT: &str = r"^[^\x00]*[^\s\x00\x85][^\x00]*$";

/// Any text without a NUL, empty too (a chat message's content may be empty).
const NO_NUL: &str = r"^[^\x00]*$";

/// A title: [`SOME_TEXT`] without control characters.
const TITLE: &str = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";

/// A host reference (message id): no control characters.
const REFERENCE: &str = r"^[^\x00-\x1f\x7f-\x9f]+$";

/// A date-time in the years every store can hold (1678-2261, what a 64-bit nanosecond count
/// spans), less the first and last: a pattern sees the written year, not the instant, and a
/// UTC offset moves `1678-01-01T00:00+05:00` into 1677. So the schema promises 1679-2260, and
/// the server accepts the whole range.
pub(crate) const STORABLE_YEAR: &str =
    r"^(1679|16[89][0-9]|1[7-9][0-9][0-9]|20[0-9][0-9]|21[0-9][0-9]|22[0-5][0-9]|2260)-";

/// A calendar date in the years the schema promises ([`STORABLE_YEAR`]); that the day exists
/// (no 30 February) is the server's to say.
pub(crate) const DAY: &str = r"^(1679|16[89][0-9]|1[7-9][0-9][0-9]|20[0-9][0-9]|21[0-9][0-9]|22[0-5][0-9]|2260)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// Whether `date` has the shape [`DAY`] states: a year the schema promises, a month 01-12 and a
/// day 01-31.
pub(crate) fn has_day_shape(date: &str) -> bool {
    let number = |part: &str| part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse::<u32>().ok()).flatten();
    let parts: Vec<&str> = date.split('-').collect();
    match parts.as_slice() {
        [year, month, day] if year.len() == 4 && month.len() == 2 && day.len() == 2 => {
            matches!((number(year), number(month), number(day)), (Some(1679..=2260), Some(1..=12), Some(1..=31)))
        }
        _ => false,
    }
}

/// A UTC offset as `domain::daily::parse_offset` reads it.
pub(crate) const UTC_OFFSET: &str = r"^(Z|z|UTC|utc|\+(0[0-9]|1[0-4]):?[0-5][0-9]|-(0[0-9]|1[0-2]):?[0-5][0-9])$";

/// A tree id: `<category>:<slug>`.
pub(crate) const TREE_ID: &str = r"^(interaction|integration):[a-z0-9]+(-[a-z0-9]+)*$";

/// A leaf or summary id.
pub(crate) const NODE_ID: &str = r"^(leaf|sum)-[0-9a-z]{26}$";

/// The first key that appears twice in one object anywhere in the JSON `bytes`. `None` also
/// when the bytes are not JSON: the decoder that reads them next says what is wrong with them.
pub(crate) fn first_duplicate_key(bytes: &[u8]) -> Option<String> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

    /// Walks a value, noting in `.0` the first key an object repeats.
    struct Walk<'a>(&'a mut Option<String>);

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let found = self.0;
            while seq.next_element_seed(Walk(&mut *found))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let found = self.0;
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if found.is_none() && !keys.insert(key.clone()) {
                    *found = Some(key);
                }
                map.next_value_seed(Walk(&mut *found))?;
            }
            Ok(())
        }
    }

    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    Walk(&mut found).deserialize(&mut deserializer).ok()?;
    found
}

/// Whether `value` matches [`SOME_TEXT`]: the same rule in Rust.
pub(crate) fn is_some_text(value: &str) -> bool {
    !value.contains('\0') && value.chars().any(|c| !c.is_whitespace() && c != '\u{feff}')
}

/// Whether `value` matches [`TITLE`] (or [`REFERENCE`], which asks less).
pub(crate) fn is_title(value: &str) -> bool {
    is_some_text(value) && !value.chars().any(char::is_control)
}

/// A leaf or summary id, as the API accepts it.
pub(crate) fn is_node_id(value: &str) -> bool {
    let Some((prefix, rest)) = value.split_once('-') else { return false };
    matches!(prefix, "leaf" | "sum")
        && rest.len() == 26
        && rest.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

fn kind_names() -> Vec<&'static str> {
    MemoryKind::ALL.iter().map(|k| k.as_str()).collect()
}

fn kind_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": kind_names() })
}

fn optional_kind_schema(_: &mut SchemaGenerator) -> Schema {
    let mut names: Vec<serde_json::Value> = kind_names().into_iter().map(Into::into).collect();
    names.push(serde_json::Value::Null);
    json_schema!({ "type": ["string", "null"], "enum": names, "default": null })
}

fn kinds_schema(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": kind_schema(generator), "maxItems": 16, "default": [] })
}

/// A number as JSON writes it, or as a query string does.
#[derive(Deserialize)]
#[serde(untagged)]
enum NumberOrText {
    Number(serde_json::Number),
    Text(String),
}

/// An optional whole number: JSON Schema's `integer` includes `25.0`, so the server does too;
/// in a query string it arrives as text.
fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let number = match Option::<NumberOrText>::deserialize(deserializer)? {
        None => return Ok(None),
        Some(NumberOrText::Number(number)) => number,
        Some(NumberOrText::Text(text)) => {
            return text.parse::<u32>().map(Some).map_err(|_| {
                serde::de::Error::custom(format!("expected a whole number from 0 to {}, got {text:?}", u32::MAX))
            });
        }
    };
    if let Some(n) = number.as_u64() {
        return u32::try_from(n).map(Some).map_err(|_| serde::de::Error::custom(format!("{n} is too large")));
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => Ok(Some(f as u32)),
        _ => Err(serde::de::Error::custom(format!("expected a whole number from 0 to {}, got {number}", u32::MAX))),
    }
}

/// Like [`whole_number`], for a required field.
fn required_whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    whole_number(deserializer)?.ok_or_else(|| serde::de::Error::custom("expected a whole number, got null"))
}

/// How a question should be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Decide from the question.
    #[default]
    Auto,
    /// Summaries first: "what do we know about…".
    BroadSummary,
    /// Leaves only: "when did…", "what is the…".
    ExactEvidence,
}

/// Ask memory a question. Returns the retrieval pack: known facts, constraints, gaps and the
/// evidence behind them, each item with its id, version, tree and why it was picked.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetrieveInput {
    /// The question, in the user's words.
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    #[serde(default)]
    pub mode: Mode,
    /// At most this many evidence items (1-100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 100))]
    pub max_results: Option<u32>,
    /// At most this many characters of evidence in total (100-100000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 100, max = 100000))]
    pub max_chars: Option<u32>,
    /// Answer as of this instant (RFC 3339, in the years a store holds): facts valid then,
    /// including since-replaced ones.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub as_of: Option<String>,
    /// Only this tree, e.g. `interaction:dana`.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// Only these kinds of memory.
    #[serde(default)]
    #[schemars(schema_with = "kinds_schema")]
    pub kinds: Vec<String>,
    /// Keep an explanation of this retrieval; the pack's `retrieval_id` names it.
    #[serde(default)]
    pub record: bool,
    /// `full` (default): the explained pack; `compact`: each memory once with a short why,
    /// and the text a model reads.
    #[serde(default)]
    pub format: PackFormat,
    /// About this many tokens at most (50-20000): the evidence text (unless `max_chars` says
    /// otherwise), and for a compact pack its whole text.
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 50, max = 20000))]
    pub max_tokens: Option<u32>,
    /// With `compact`: also list the candidates the budget left out (a full pack always does).
    #[serde(default)]
    pub include_skipped: bool,
}

/// How a pack is returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PackFormat {
    #[default]
    Full,
    Compact,
}

/// Ask memory a question, as a model does: the answer comes back as a few lines of text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskInput {
    /// The question, in the user's words.
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    /// Token budget (default 1000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 50, max = 20000))]
    pub max_tokens: Option<u32>,
    /// Answer as of this instant (RFC 3339).
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub as_of: Option<String>,
}

/// Full-text and semantic search over current memories; a flat list of hits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchInput {
    #[schemars(length(min = 1, max = 4096), pattern(SOME_TEXT))]
    pub query: String,
    /// At most this many hits (1-100, default 10).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// List the trees memory holds, or outline one of them.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BrowseInput {
    /// A tree id from the listing or a pack (e.g. `interaction:dana`); without it, list trees.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// How many levels of the outline to show (1-8, default 3).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 8))]
    pub depth: Option<u32>,
}

/// Read one memory (leaf) or summary by id, with its full text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// A `leaf-…` or `sum-…` id from a pack, a search hit or an outline.
    #[schemars(pattern(NODE_ID))]
    pub id: String,
}

/// Something worth remembering. Arbor decides whether to keep it, what it is about and whether
/// it replaces an older memory.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SaveInput {
    /// What happened or was said, in plain words.
    #[schemars(length(min = 1, max = 16384), pattern(SOME_TEXT))]
    pub text: String,
    /// When it happened (RFC 3339); default now.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub observed_at: Option<String>,
    /// The id of the message it came from, for provenance only (who speaks is the server's
    /// binding, never a field).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), pattern(REFERENCE))]
    pub message_id: Option<String>,
    /// The kind, if the host knows it.
    #[serde(default)]
    #[schemars(schema_with = "optional_kind_schema")]
    pub kind: Option<String>,
    /// A short title, if the host has one.
    #[serde(default)]
    #[schemars(length(min = 1, max = arbor_domain::model::MAX_TITLE_CHARS), pattern(TITLE))]
    pub title: Option<String>,
    /// Labels, e.g. `["billing"]`.
    #[serde(default)]
    #[schemars(length(max = 32), inner(length(min = 1, max = 64), pattern(TITLE)))]
    pub labels: Vec<String>,
    /// Since when it holds, if earlier than said (RFC 3339); never later than `observed_at`.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub valid_from: Option<String>,
}

/// Several saves at once: one plan, one durable write, one commit.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchInput {
    /// 1 to 100 saves, each as `upsert` takes it.
    #[schemars(length(min = 1, max = 100))]
    pub items: Vec<SaveInput>,
}

/// Who wrote a chat message, as OpenAI-style clients say it. It can only lower the authority
/// the server's binding gives: a `user` message is the binding's speaker's, an `assistant`
/// one the assistant's (a suggestion until a person confirms it), a `tool` (or `function`) one
/// a tool's; a `system` or `developer` message is a prompt, not something that happened, and is
/// not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChatRole {
    User,
    Assistant,
    Tool,
    Function,
    System,
    Developer,
}

impl ChatRole {
    /// The role as the domain's rule of who speaks reads it.
    pub(crate) fn domain(self) -> arbor_domain::model::ChatRole {
        use arbor_domain::model::ChatRole as Role;
        match self {
            ChatRole::User => Role::User,
            ChatRole::Assistant => Role::Assistant,
            ChatRole::Tool | ChatRole::Function => Role::Tool,
            ChatRole::System | ChatRole::Developer => Role::Prompt,
        }
    }
}

/// One message of a conversation, as a chat client holds it. Fields such clients add
/// (`name`, `tool_calls`, `tool_call_id`, `refusal`, …) are accepted and not used: a `name`
/// is what the client chose to call a speaker, never who the server says spoke.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub(crate) struct ChatMessage {
    pub role: ChatRole,
    /// The text, or content parts of which the `text` ones are kept. Empty or `null` (an
    /// assistant's tool call): nothing to keep.
    #[serde(default)]
    pub content: Option<ChatContent>,
    /// The client's id of the message, for provenance.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), pattern(REFERENCE))]
    pub id: Option<String>,
}

/// A message's content: a string, or parts (`{"type": "text", "text": …}`; images and other
/// parts are passed over).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ChatContent {
    Text(#[schemars(length(max = 16384), pattern(NO_NUL))] String),
    Parts(#[schemars(length(max = 16))] Vec<ContentPart>),
}

/// One part of a message's content.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub(crate) struct ContentPart {
    /// `text` parts are kept; any other type is passed over.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = 64))]
    pub kind: String,
    #[serde(default)]
    #[schemars(length(max = 1000), pattern(NO_NUL))]
    pub text: Option<String>,
}

impl ChatContent {
    /// The text to keep: the string, or the text parts joined by blank lines (16 parts of at
    /// most 1,000 characters join within a message's 16,384). A part breaking the schema is
    /// refused, as any input breaking it is.
    pub(crate) fn text(self) -> Result<String, String> {
        match self {
            ChatContent::Text(text) => Ok(text),
            ChatContent::Parts(parts) => {
                if parts.len() > 16 {
                    return Err("`content` has more than 16 parts".into());
                }
                let mut texts = Vec::new();
                for part in parts {
                    if part.kind.is_empty() || part.kind.chars().count() > 64 {
                        return Err("a content part's `type` must be 1 to 64 characters".into());
                    }
                    if let Some(text) = &part.text
                        && (text.chars().count() > 1000 || text.contains('\0'))
                    {
                        return Err("a content part's `text` must be at most 1000 characters, without NUL".into());
                    }
                    if part.kind == "text" {
                        texts.extend(part.text);
                    }
                }
                Ok(texts.join("\n\n"))
            }
        }
    }
}

/// A conversation's messages, oldest first, as a chat client holds them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessagesInput {
    /// 1 to 100 messages.
    #[schemars(length(min = 1, max = 100))]
    pub messages: Vec<ChatMessage>,
    /// When they were said (RFC 3339); default now.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub observed_at: Option<String>,
}

/// What became of each item of a batch, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct BatchResult {
    pub results: Vec<BatchItem>,
}

/// One item of a batch: what it became, why it was passed over, or — rarely, as every item is
/// checked before anything is written — why the engine refused it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct BatchItem {
    /// Its place in the request, from 0.
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SaveResult>,
    /// Why nothing was saved for it: a prompt, or a message with no text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// Forget a memory: every version of it, from rows, bodies, index and summaries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetInput {
    /// The memory's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// What a forget removed: ids and counts, none of the words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Forgotten {
    pub leaf_id: String,
    pub namespace: String,
    /// How many versions of the memory were forgotten (all of them).
    pub versions: u32,
    /// The fingerprint of the forgotten text, kept on the tombstone so the forget can be
    /// verified later. What else went (summaries purged, files deleted, a tree left empty) is
    /// the store's business: it could tell about memories the caller cannot read.
    pub fingerprint: String,
}

/// What waits for a person in the binding's read chain, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pending {
    pub items: Vec<PendingItem>,
}

/// A candidate, and what confirming it would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct PendingItem {
    pub id: String,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// The start of its text.
    pub summary: String,
    pub sensitivity: String,
    /// Who said it: `user`, `agent`, `assistant`, `tool`, …
    pub actor: String,
    pub source: String,
    pub created_at: String,
    /// Current memories confirming it would replace.
    pub would_supersede: Vec<String>,
    /// Why it waits as a conflict instead of having replaced one of them, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
}

/// A review decision on one candidate.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewInput {
    /// The candidate's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// Confirm or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Confirm,
    Reject,
}

/// What a review decision changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Reviewed {
    pub leaf_id: String,
    pub namespace: String,
    /// `active` (confirmed) or `rejected`.
    pub status: String,
    /// Memories the confirmation replaced.
    pub superseded: Vec<String>,
}

/// A correction: the new text of a memory, bound to the version the caller read.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorrectInput {
    /// The memory's `leaf-…` id, as read.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// The version read (over HTTP, `If-Match` must agree).
    #[serde(deserialize_with = "required_whole_number")]
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub version: u32,
    /// What the memory should say.
    #[schemars(length(min = 1, max = 16384), pattern(SOME_TEXT))]
    pub text: String,
    #[serde(default)]
    #[schemars(length(min = 1, max = arbor_domain::model::MAX_TITLE_CHARS), pattern(TITLE))]
    pub title: Option<String>,
    /// The id of the message that asked for the correction, for provenance only.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), pattern(REFERENCE))]
    pub message_id: Option<String>,
}

/// The catalog's size.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CatalogInput {
    /// At most this many characters (200-20000, default 4000, about 1000 tokens).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 200, max = 20000))]
    pub budget_chars: Option<u32>,
}

/// Which day's memories to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DailyInput {
    /// The day, YYYY-MM-DD (default: today at `utc_offset`).
    #[serde(default)]
    #[schemars(length(max = 10), pattern(DAY))]
    pub date: Option<String>,
    /// The reader's offset from UTC, e.g. `+08:00` (default `+00:00`): the day runs from
    /// midnight to midnight there.
    #[serde(default)]
    #[schemars(length(max = 6), pattern(UTC_OFFSET))]
    pub utc_offset: Option<String>,
    /// At most this many memories, newest first (1-500, default 200).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// Whose profile to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileInput {
    /// A person's or a thing's name, or `me` for the speaker (default: every subject).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub subject: Option<String>,
}

/// How many consolidation reports to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DreamInput {
    /// At most this many, newest first (1-20, default 3).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// What consolidation passes ("dream") changed in this agent's memory: merged, superseded and
/// invalidated memories, and what waits for a person, by id and rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Dream {
    pub reports: Vec<DreamReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DreamReport {
    /// The report's file name: when the pass ran.
    pub name: String,
    /// The report in markdown, with the sections of this agent's namespaces only.
    pub markdown: String,
}

/// Run background work now (sealing summaries, indexing).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SyncInput {
    /// At most this many jobs (1-10000, default 1000).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_jobs: Option<u32>,
}

// ---- outputs: mirrors of the app's serialization ----

/// A node reference as the pack writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NodeRef {
    /// `leaf` or `summary`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Intent {
    pub mode: Mode,
    /// `general`, `temporal` or `preference_or_constraint`.
    pub focus: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TimeRange {
    pub start: Option<String>,
    pub end: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UnderstoodTime {
    pub phrase: String,
    pub range: TimeRange,
    pub applied: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Understood {
    pub time: Option<UnderstoodTime>,
    pub entities: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Validity {
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

/// Per-channel ranks (1 is best) and the fused score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Scores {
    pub text_rank: Option<u32>,
    pub vector_rank: Option<u32>,
    pub entity_rank: Option<u32>,
    pub kind_rank: Option<u32>,
    /// Among the memories that mention the time window the question names.
    pub time_rank: Option<u32>,
    pub context_of_rank: Option<u32>,
    pub model_rank: Option<u32>,
    /// The best vector similarity to the question, when a vector channel found it.
    pub similarity: Option<f64>,
    pub fused: f64,
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Evidence {
    pub node_id: NodeRef,
    /// `leaf` or `summary`.
    pub node: String,
    pub version: Option<u32>,
    pub namespace: String,
    /// 0 is the caller's own layer; higher numbers are broader layers.
    pub layer: u32,
    pub tree_id: String,
    pub kind: Option<String>,
    pub title: String,
    pub text: String,
    pub observed_at: String,
    pub validity: Validity,
    /// Where it came from, e.g. `message:m12`.
    pub source: Option<String>,
    /// `normal`, `sensitive` or `restricted`.
    pub sensitivity: String,
    pub scores: Scores,
    pub why: String,
    pub supersedes: Option<String>,
    pub overridden_by: Option<String>,
    /// A newer memory in this pack that seems to replace this one: it ranks after it and is
    /// not offered as a fact.
    pub possibly_outdated_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Skipped {
    pub node_id: NodeRef,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Coverage {
    pub namespaces: Vec<String>,
    pub candidates: u32,
    pub dropped_by_store_check: u32,
    pub selected: u32,
    pub chars: u32,
    pub bodies_read: u32,
    pub unread: u32,
    /// Candidates the vectors alone found below their relevance floor, left out.
    pub below_relevance_floor: u32,
    pub skipped: Vec<Skipped>,
}

/// A part of retrieval that did not run as configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Degradation {
    /// `vector:<embedder>`, `rerank` or `body:<leaf id>`.
    pub part: String,
    pub reason: String,
}

/// One memory of a compact pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CompactMemory {
    /// What to cite, read or correct: `leaf-…` or `sum-…`.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// `YYYY-MM-DD`.
    pub date: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub text: String,
    pub why: String,
}

/// The pack as a model reads it: each memory once, nothing null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CompactPack {
    /// `found` or `nothing_relevant`.
    pub answer: String,
    /// What memory believes now about the subject a question asks everything about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<CompactMemory>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<Degradation>,
    /// Relevant memories the budget left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// The same, as the few lines of text a model reads.
    pub text: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The retrieval pack: what memory knows about the question, bounded and explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pack {
    pub retrieval_id: Option<String>,
    pub query: String,
    /// `found` or `nothing_relevant`.
    pub answer: String,
    /// What did not run as configured; empty when retrieval ran whole.
    pub degraded: Vec<Degradation>,
    pub as_of: Option<String>,
    pub intent: Intent,
    pub understood: Understood,
    /// For a question about a whole subject ("what do you know about Kofi?"), what memory
    /// believes about it now, one line per attribute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
    pub known_facts: Vec<String>,
    pub constraints: Vec<String>,
    pub recent: Vec<String>,
    pub gaps: Vec<String>,
    pub recommended_next_source: Option<String>,
    pub evidence: Vec<Evidence>,
    pub coverage: Coverage,
}

/// A retrieval's answer, in the format asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Retrieved {
    Full(Box<Pack>),
    Compact(CompactPack),
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchHit {
    pub id: String,
    /// `leaf` or `summary`.
    pub node: String,
    pub version: Option<u32>,
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub text: String,
    pub observed_at: String,
    pub score: f64,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchResult {
    pub hits: Vec<SearchHit>,
}

/// A leaf or summary with its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Node {
    pub id: String,
    /// `leaf` or `summary`.
    pub node: String,
    /// Leaves: the version within the memory's lineage; pass it back to correct it.
    pub version: Option<u32>,
    /// Leaves: the first version's id.
    pub lineage: Option<String>,
    pub namespace: String,
    pub tree_id: String,
    pub kind: Option<String>,
    pub title: String,
    /// e.g. `active`, `superseded`, `candidate`; summaries: `current`, `stale`.
    pub status: String,
    pub observed_at: Option<String>,
    pub validity: Option<Validity>,
    pub sensitivity: Option<String>,
    /// Who said it, for a leaf: `user`, `agent` (saved through these tools), `assistant`,
    /// `tool`, `system` or `integration`.
    pub actor: Option<String>,
    pub source: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    /// Summaries: their level (1 is a tree's root).
    pub level: Option<u32>,
    /// The text; absent when it was forgotten or replaced.
    pub body: Option<String>,
    /// For the store's owner (an operator's token) only: the prose of `body`, without its
    /// frontmatter and title line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A tree at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TreeSummary {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub root_title: Option<String>,
    pub active_leaves: u32,
    pub leaves: u32,
    pub summaries: u32,
}

/// One node of an outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OutlineNode {
    pub id: NodeRef,
    /// `L1` for the root, `L2`… below it, `leaf` for leaves.
    pub level: String,
    pub title: String,
    pub status: String,
    pub children: Vec<OutlineNode>,
    pub hidden_children: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Outline {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub nodes: Vec<OutlineNode>,
}

/// Either the list of trees or one tree's outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Browse {
    pub trees: Vec<TreeSummary>,
    pub outline: Option<Outline>,
}

/// What happened to one chunk of a saved event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Saved {
    pub chunk: u32,
    /// `created`, `superseding`, `noop_duplicate` or `not_admitted`.
    pub outcome: String,
    /// The memory it became (or already was).
    pub leaf_id: Option<String>,
    /// `active` or `candidate` (awaiting a person).
    pub status: Option<String>,
    pub replaces: Option<String>,
    pub tree_id: Option<String>,
    pub namespace: String,
    /// Why it was not admitted, or why it is active or a candidate.
    pub reason: Option<String>,
    /// The current memories it retired (a rule proved them replaced): what to tell the person
    /// ("I've updated where Elif works").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<ReplacedMemory>,
    /// The current memories it may have replaced, unproven: they stay current, marked as
    /// possibly outdated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub possibly_outdated: Vec<OutdatedMemory>,
}

/// A memory a save retired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ReplacedMemory {
    pub leaf_id: String,
    /// The attribute both speak of (`residence`, `employer`, `has:manager`, …).
    pub attribute: String,
    /// `one_value` (another value of an attribute that holds one), `ended`, or `judged` (a model
    /// reasoner proved what the rules only doubted).
    pub rule: String,
    /// What the old memory said of it, and what the save says.
    pub was: Option<String>,
    pub now: Option<String>,
}

/// A memory a save may have replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OutdatedMemory {
    pub leaf_id: String,
    pub attribute: String,
    /// Why it was not retired (`maybe_same_subject`, `values_unclear`, `says_more`,
    /// `judges_disagree`, `judged_update`, …).
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SaveResult {
    /// What happened, in one sentence an agent can pass on: saved and retrievable now, or
    /// waiting for a person (and how they confirm it), or why nothing was kept.
    pub message: String,
    pub chunks: Vec<Saved>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Corrected {
    pub leaf_id: String,
    pub version: u32,
    /// `active`, or `candidate` (an agent's own correction, awaiting a person).
    pub status: String,
    pub replaces: String,
    pub replaced_version: u32,
    pub namespace: String,
    pub tree_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CatalogEntry {
    pub namespace: String,
    pub tree_id: String,
    pub title: String,
    pub memories: u32,
    pub last_updated: Option<String>,
    pub recent_titles: Vec<String>,
    pub line: String,
}

/// A bounded one-line-per-tree digest of what memory holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Catalog {
    pub entries: Vec<CatalogEntry>,
    pub omitted_trees: u32,
    pub budget_chars: u32,
    pub text: String,
}

/// A calendar day as its reader lives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Day {
    /// YYYY-MM-DD.
    pub date: String,
    /// e.g. `+08:00`.
    pub utc_offset: String,
}

/// One memory of the day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DayMemory {
    pub id: String,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// Its words, at most a few lines (`memory_read` opens the rest).
    pub text: String,
    pub observed_at: String,
    pub salience: f32,
}

/// What was remembered on one day, across every tree in scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Daily {
    pub day: Day,
    /// The observation times covered, both ends included.
    pub from: String,
    pub to: String,
    /// Newest first.
    pub memories: Vec<DayMemory>,
    /// More were observed that day than `limit` let through (the oldest are left out).
    pub more: bool,
    pub trees: u32,
    /// What to read first when resuming: positions in `memories`, best first (decisions,
    /// tasks and constraints, then salience, then the latest).
    pub highlights: Vec<u32>,
}

/// What memory believes now, subject by subject, from the claims of the current memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Profile {
    /// The speaker first, then everyone and everything else by name.
    pub subjects: Vec<ProfileSubject>,
}

/// One subject's attributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileSubject {
    pub subject: ProfileName,
    pub facts: Vec<ProfileFact>,
}

/// Whom or what a profile is of: `key` as subjects are compared (`@me` for the speaker), `name`
/// as a memory named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileName {
    pub key: String,
    pub name: String,
}

/// One attribute: what holds now, newest first, and what it replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileFact {
    /// The catalogue id (`residence`, `has:dentist`).
    pub attribute: String,
    /// Its name in English and in Chinese.
    pub name: String,
    pub name_zh: String,
    /// `one` (a new value replaces the old) or `many` (values join).
    pub holds: String,
    pub current: Vec<ProfileValue>,
    pub history: Vec<ProfileChange>,
}

/// A current value, and the memory that says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileValue {
    pub value: String,
    pub leaf: String,
    pub said_at: String,
    /// `user-entry`, `message:<id>`, …
    pub source: String,
    /// The time the text says it holds from, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// A newer memory that gives the attribute another value, unproven: both are shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub possibly_outdated_by: Option<String>,
}

/// A value a newer memory replaced or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProfileChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub leaf: String,
    pub said_at: String,
    pub changed_by: String,
    pub changed_at: String,
    /// `one_value`, `ended` or `judged`.
    pub rule: String,
}

/// What the server is bound to and how much the store holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Status {
    pub version: String,
    /// The namespaces this server reads, most specific first; fixed at start-up.
    pub read_chain: Vec<String>,
    /// Where saves and corrections go.
    pub write_namespace: String,
    pub store_backend: String,
    pub index_backend: String,
    pub embedder: String,
    /// Trees and current memories this server can read.
    pub trees: u32,
    pub active_leaves: u32,
}

/// What a sync did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Synced {
    /// Whether the job queue was drained (false: more remain; call again).
    pub idle: bool,
}

// ---- the memory centre's (an operator's) reads and writes ----

/// Counts of one namespace or tree ([`Health`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HealthFigures {
    /// Current memories.
    pub active: u32,
    /// Replaced versions, kept as history.
    pub superseded: u32,
    /// Suggestions waiting for a person, and when the longest-waiting was written.
    pub candidates: u32,
    pub oldest_candidate: Option<String>,
    pub archived: u32,
    /// Current memories that say again what another current memory says.
    pub duplicates: u32,
    pub summaries: u32,
    /// Summaries something below changed under, waiting to be sealed again.
    pub summaries_awaiting_reseal: u32,
    /// Bytes of every body document kept (every version, suggestion and summary).
    pub body_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TreeHealth {
    pub tree_id: String,
    pub figures: HealthFigures,
    /// What is past its threshold, and what to do about it.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NamespaceHealth {
    pub namespace: String,
    pub figures: HealthFigures,
    pub warnings: Vec<String>,
    pub trees: Vec<TreeHealth>,
}

/// The health of every namespace the read chain reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Health {
    pub at: String,
    pub namespaces: Vec<NamespaceHealth>,
    /// Trees or bodies that could not be read (`arbor fsck` says more), with why.
    pub unreadable: Vec<String>,
}

/// Which memory's use to show.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsageInput {
    /// A `leaf-…` or `sum-…` id.
    #[schemars(pattern(NODE_ID))]
    pub id: String,
    /// Of the latest this many recorded retrievals (1-1000, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// One recorded retrieval that considered a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UsageRecord {
    pub retrieval: String,
    pub at: String,
    /// Whether it went into the context the retrieval returned.
    pub entered_context: bool,
}

/// How a memory has been used by retrievals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Usage {
    pub id: String,
    pub retrievals: u32,
    pub entered_context: u32,
    pub last_used: Option<String>,
    /// Newest first.
    pub records: Vec<UsageRecord>,
}

/// How many audit events to return.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditInput {
    /// At most this many, newest first (1-1000, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// One thing done to memory in scope: what, to which node, by whom. No words of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AuditEntry {
    pub at: String,
    /// e.g. `leaf.created`, `leaf.superseded`, `leaf.forgotten`, `summary.sealed`.
    pub action: String,
    pub namespace: String,
    pub node: Option<String>,
    pub actor: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Audit {
    pub events: Vec<AuditEntry>,
}

/// Which current memories to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoriesInput {
    /// Only this tree's.
    #[serde(default)]
    #[schemars(length(max = 60), pattern(TREE_ID))]
    pub tree: Option<String>,
    /// Only this kind (`fact`, `preference`, `decision`, …).
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub kind: Option<String>,
    /// Skip this many (0-100000, default 0).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(max = 100000))]
    pub offset: Option<u32>,
    /// At most this many, newest first (1-500, default 100).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// A current memory as its owner sees it in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MemoryRow {
    pub id: String,
    pub version: u32,
    pub namespace: String,
    pub tree_id: String,
    pub kind: String,
    pub title: String,
    /// The start of its text.
    pub summary: String,
    pub sensitivity: String,
    pub status: String,
    pub observed_at: String,
    pub validity: Validity,
    pub confidence: f32,
    pub salience: f32,
    /// Who said it.
    pub actor: String,
    pub source: String,
    /// The version it replaced, if any.
    pub supersedes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Memories {
    pub memories: Vec<MemoryRow>,
    /// More follow (ask again with a larger `offset`).
    pub more: bool,
}

/// New words for a suggestion before anyone confirms it: it stays a suggestion.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditCandidateInput {
    /// The candidate's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// What it should say.
    #[schemars(length(min = 1, max = 16384), pattern(SOME_TEXT))]
    pub text: String,
    #[serde(default)]
    #[schemars(length(min = 1, max = arbor_domain::model::MAX_TITLE_CHARS), pattern(TITLE))]
    pub title: Option<String>,
}

/// Make a replaced version current again.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestoreInput {
    /// The replaced version's `leaf-…` id.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
    /// The memory's current (or latest) version as read: the restore is bound to it.
    #[serde(deserialize_with = "required_whole_number")]
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub current_version: u32,
}

/// Which automatic retirements to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetiredInput {
    /// Only those retired since this time (RFC 3339).
    #[serde(default)]
    #[schemars(length(max = 40), extend("format" = "date-time"), pattern(STORABLE_YEAR))]
    pub since: Option<String>,
    /// At most this many, newest first (1-500, default 50).
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// What rules retired automatically, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredList {
    pub items: Vec<RetiredEntry>,
}

/// A memory a rule retired: what it said, by which rule, on which attribute, and what replaced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredEntry {
    pub leaf_id: String,
    pub namespace: String,
    pub text: String,
    pub said_at: String,
    pub retired_at: String,
    /// `one_value`, `ended` or `judged`.
    pub rule: String,
    pub attribute: String,
    pub attribute_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// The memory that retired it, when the chain can read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<RetiredBy>,
}

/// The memory that retired another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RetiredBy {
    pub leaf_id: String,
    pub text: String,
}

/// Undo an automatic retirement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestoreRetiredInput {
    /// The retired memory's `leaf-…` id, as the list gives it.
    #[schemars(pattern(r"^leaf-[0-9a-z]{26}$"))]
    pub id: String,
}

/// What undoing a retirement did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RestoredRetired {
    /// The retired memory.
    pub restored: String,
    /// Its words, current again as a memory of their own.
    pub leaf_id: String,
    pub namespace: String,
    /// The memory that had retired it, current beside it.
    pub kept_with: String,
}

/// The store's settings file (`arbor.json`), as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Settings {
    /// The file's JSON, as written.
    pub text: String,
    /// Whether a change written here takes effect only when the server starts again.
    pub applies_on_restart: bool,
}

/// New settings: the whole file, checked as `arbor` checks it when it opens the store.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SettingsInput {
    #[schemars(length(min = 2, max = 65536))]
    pub text: String,
}

/// An error, with a stable machine-readable code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ErrorDetail {
    /// One of: invalid_request, unauthorized, forbidden, not_found, method_not_allowed,
    /// precondition_failed, payload_too_large, unsupported_media_type, conflict, unavailable,
    /// internal.
    pub code: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::first_duplicate_key;

    #[test]
    fn a_key_given_twice_in_one_object_is_found_at_any_depth() {
        let twice = |json: &str| first_duplicate_key(json.as_bytes());
        assert_eq!(twice(r#"{"text":"zsh","text":"fish"}"#).as_deref(), Some("text"));
        assert_eq!(twice(r#"{"params":{"arguments":{"a":1,"b":[{"c":1,"c":2}]}}}"#).as_deref(), Some("c"));
        assert_eq!(twice(r#"{"te\u0078t":"a","text":"b"}"#).as_deref(), Some("text"), "escapes decode first");
        assert_eq!(twice(r#"{"a":{"k":1},"b":{"k":1}}"#), None, "one key per object");
        assert_eq!(twice(r#"[{"a":1},{"a":2}]"#), None);
        assert_eq!(twice("not json"), None, "the decoder reports that");
    }
}
