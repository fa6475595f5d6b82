//! Saving: one memory, a batch, or chat messages, and the receipts that say what each became
//! (and what it replaced or may have outdated).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::errors::ErrorDetail;
use super::shapes::{NO_NUL, REFERENCE, SOME_TEXT, STORABLE_YEAR, TITLE, optional_kind_schema};

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
