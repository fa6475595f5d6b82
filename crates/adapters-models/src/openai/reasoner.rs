//! A reasoner behind an OpenAI-compatible `/v1/chat/completions` endpoint. Each judgement is
//! one chat request whose answer is constrained to a JSON schema (or JSON mode, for servers
//! without schemas); the answer is read strictly and checked against what the model was shown
//! — an entity or leaf it was not offered, a truncated or malformed answer is an error, and
//! the app then falls back to the deterministic reasoner for that step and counts it. The
//! domain's rules validate whatever gets through.

use arbor_domain::claims::{CATALOGUE, Holds, definition};
use arbor_domain::decision::EntityProposal;
use arbor_domain::entity::EntityType;
use arbor_domain::id::NodeId;
use arbor_domain::model::{Confidence, Label, MAX_SUMMARY_CHARS, MAX_TITLE_CHARS, MemoryKind, SubjectKey};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::supersession::DuplicateJudgement;
use arbor_ports::{
    AssessRequest, Assessment, DuplicateRequest, Locality, PairJudgement, PairRequest, PairVerdict, QueryFocus,
    QueryIntent, QueryRequest, Reasoner, RerankRequest, SummarizeRequest, SummaryDraft,
};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ModelError, to_port_error};
use crate::openai::client::{Client, EndpointConfig};

const BACKEND: &str = "openai reasoner";
/// Each text shown to the model is cut at this many characters.
const MAX_SHOWN_CHARS: usize = 2_000;

/// How the answer's shape is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonOutput {
    /// `response_format: {"type": "json_schema", ...}` (OpenAI, vLLM, Ollama, llama.cpp).
    #[default]
    Schema,
    /// `response_format: {"type": "json_object"}`, the schema given in the prompt instead.
    Object,
}

/// A remote reasoner. Its locality is `Remote`, so the app never shows it restricted text.
#[derive(Debug)]
pub struct OpenAiReasoner {
    client: Client,
    output: JsonOutput,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: [Message; 2],
    temperature: f32,
    response_format: Value,
}

#[derive(Serialize)]
struct Message {
    role: &'static str,
    content: String,
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

impl OpenAiReasoner {
    pub fn new(config: EndpointConfig, output: JsonOutput) -> Result<OpenAiReasoner, ModelError> {
        Ok(OpenAiReasoner { client: Client::new(config)?, output })
    }

    pub fn config(&self) -> &EndpointConfig {
        self.client.config()
    }

    /// One chat turn whose answer must match `schema`, read as `A`.
    async fn ask<A: DeserializeOwned>(
        &self,
        task: &str,
        name: &str,
        schema: Value,
        input: Value,
    ) -> Result<A, ModelError> {
        let system = format!(
            "{SYSTEM_PROMPT}\n\nTask: {task}\nAnswer with one JSON object and nothing else.{}",
            match self.output {
                JsonOutput::Schema => String::new(),
                JsonOutput::Object => format!(" It must match this JSON schema: {schema}"),
            }
        );
        let response_format = match self.output {
            JsonOutput::Schema => json!({
                "type": "json_schema",
                "json_schema": { "name": name, "strict": true, "schema": schema },
            }),
            JsonOutput::Object => json!({ "type": "json_object" }),
        };
        let request = ChatRequest {
            model: &self.client.config().model,
            messages: [
                Message { role: "system", content: system },
                Message { role: "user", content: serde_json::to_string_pretty(&input).unwrap_or_default() },
            ],
            temperature: 0.0,
            response_format,
        };
        let response: ChatResponse = self.client.post("chat/completions", &request).await?;
        let choice = response.choices.into_iter().next().ok_or_else(|| ModelError::malformed("no choices"))?;
        if choice.finish_reason.as_deref() == Some("length") {
            return Err(ModelError::malformed("the answer was cut off (finish_reason: length)"));
        }
        let content = choice.message.content.ok_or_else(|| ModelError::malformed("the answer has no content"))?;
        serde_json::from_str(strip_code_fence(&content))
            .map_err(|e| ModelError::malformed(format!("the {name} answer does not match its schema: {e}")))
    }

    pub async fn assess_chunk(&self, request: &AssessRequest) -> Result<Assessment, ModelError> {
        let shortlist: Vec<Value> = request
            .shortlist
            .iter()
            .map(|e| json!({ "id": e.id.as_str(), "name": e.name, "type": e.entity_type.as_str(), "aliases": e.aliases }))
            .collect();
        let input = json!({
            "text": shown(&request.text),
            "actor": request.actor,
            "namespace": request.namespace,
            "hints": request.hints,
            "entity_types": EntityType::ALL.map(EntityType::as_str),
            "memory_kinds": MemoryKind::ALL.map(MemoryKind::as_str),
            "shortlist": shortlist,
        });
        let answer: AssessAnswer = self.ask(ASSESS_TASK, "assessment", assess_schema(), input).await?;
        answer.into_assessment(request)
    }

    pub async fn judge(&self, request: &DuplicateRequest) -> Result<DuplicateJudgement, ModelError> {
        let candidates: Vec<Value> = request
            .candidates
            .iter()
            .map(|c| json!({ "leaf_id": c.id.as_str(), "title": c.title, "text": shown(&c.text) }))
            .collect();
        let input = json!({
            "text": shown(&request.text),
            "subject": request.subject.as_ref().map(SubjectKey::as_str),
            "candidates": candidates,
        });
        let answer: DuplicateAnswer =
            self.ask(DUPLICATE_TASK, "duplicate_judgement", duplicate_schema(), input).await?;
        answer.into_judgement(request)
    }

    pub async fn summarize_children(&self, request: &SummarizeRequest) -> Result<SummaryDraft, ModelError> {
        let children: Vec<Value> = request
            .children
            .iter()
            .map(|c| {
                json!({
                    "id": c.id.to_string(),
                    "title": c.title,
                    "text": shown(&c.text),
                    "observed_at": c.observed_at.to_string(),
                })
            })
            .collect();
        let input = json!({ "tree": request.tree.as_str(), "height": request.height, "children": children });
        let answer: SummaryAnswer = self.ask(SUMMARY_TASK, "summary", summary_schema(), input).await?;
        answer.into_draft()
    }

    /// The candidates best answer first, as the model orders them. Candidates are shown as
    /// `c1`, `c2`, … (short labels a model copies reliably); an answer naming any other label,
    /// or one twice, is unusable.
    pub async fn rank_candidates(&self, request: &RerankRequest) -> Result<Vec<NodeId>, ModelError> {
        let candidates: Vec<Value> = request
            .candidates
            .iter()
            .enumerate()
            .map(|(i, c)| json!({ "id": candidate_label(i), "text": shown(&c.text) }))
            .collect();
        let input = json!({ "question": shown(&request.query), "candidates": candidates });
        let answer: RerankAnswer = self.ask(RERANK_TASK, "rerank", rerank_schema(), input).await?;
        let mut labels = Labels::new(request.candidates.len(), "ranked");
        let mut order = Vec::with_capacity(answer.order.len());
        for given in &answer.order {
            order.push(request.candidates[labels.position_of(given)?].id.clone());
        }
        Ok(order)
    }

    /// The model's verdict on each pair of the new memory and a current one. Candidates are
    /// shown as `c1`, `c2`, … with the attributes their claims fill; the attributes an answer
    /// may name are the catalogue's. A label it was not shown, one judged twice, an `updates`
    /// naming no attribute, or an attribute the catalogue does not hold makes the whole answer
    /// unusable (the rules' decision stands).
    pub async fn judge_candidate_pairs(&self, request: &PairRequest) -> Result<Vec<PairJudgement>, ModelError> {
        let candidates: Vec<Value> = request
            .candidates
            .iter()
            .enumerate()
            .map(|(i, c)| json!({ "id": candidate_label(i), "text": shown(&c.text), "attributes": c.attributes }))
            .collect();
        let catalogue: Vec<Value> =
            CATALOGUE.iter().map(|def| json!({ "id": def.id, "means": def.english, "holds": match def.holds { Holds::One => "one", Holds::Many => "many" } })).collect();
        let input = json!({
            "new_memory": shown(&request.text),
            "new_attributes": request.attributes,
            "candidates": candidates,
            "attributes": catalogue,
        });
        let answer: PairsAnswer = self.ask(PAIRS_TASK, "pair_judgements", pairs_schema(), input).await?;
        let mut labels = Labels::new(request.candidates.len(), "judged");
        let mut judgements = Vec::with_capacity(answer.judgements.len());
        for given in answer.judgements {
            let position = labels.position_of(&given.id)?;
            let verdict = match (given.verdict.as_str(), given.attribute) {
                ("updates", Some(attribute)) => {
                    let attribute = attribute.trim().to_lowercase();
                    if definition(&attribute).is_none() {
                        return Err(ModelError::malformed(format!("{attribute:?} is not a catalogue attribute")));
                    }
                    PairVerdict::Updates { attribute }
                }
                ("updates", None) => return Err(ModelError::malformed("an update naming no attribute")),
                ("keeps", _) => PairVerdict::Keeps,
                ("repeats", _) => PairVerdict::Repeats,
                (other, _) => return Err(ModelError::malformed(format!("{other:?} is not a pair verdict"))),
            };
            judgements.push(PairJudgement { leaf_id: request.candidates[position].id.clone(), verdict });
        }
        Ok(judgements)
    }

    pub async fn classify(&self, request: &QueryRequest) -> Result<QueryIntent, ModelError> {
        let input = json!({ "question": shown(&request.query) });
        let answer: IntentAnswer = self.ask(INTENT_TASK, "query_intent", intent_schema(), input).await?;
        let broad = match answer.scope.as_str() {
            "broad" => true,
            "specific" => false,
            other => return Err(ModelError::malformed(format!("{other:?} is not a question scope"))),
        };
        let focus = QueryFocus::parse(&answer.focus)
            .ok_or_else(|| ModelError::malformed(format!("{:?} is not a question focus", answer.focus)))?;
        let reason = answer.reason.split_whitespace().collect::<Vec<_>>().join(" ");
        if reason.is_empty() || reason.chars().count() > MAX_TITLE_CHARS {
            return Err(ModelError::malformed("the reason is empty or too long"));
        }
        Ok(QueryIntent { broad, focus, reason })
    }
}

const SYSTEM_PROMPT: &str = "You make judgement calls for Arbor, the long-term memory of an AI agent. \
You are shown one task and its input as JSON. Base every answer only on that input; never invent \
identifiers: an id you give must be one you were shown.";

const ASSESS_TASK: &str = "Decide whether `text` is worth remembering long-term and how to file it. \
admission: 0..1, how clearly it holds a durable fact, preference, decision, constraint, procedure, event \
or relationship (greetings and filler are near 0). kind: one of memory_kinds. title: a short title \
(under 80 characters). subject: a stable snake_case key for what the memory is about when a later \
memory could replace it (e.g. \"atlas_eu_launch_date\"), else null. labels: up to 5 lowercase tags. \
sensitivity: normal, sensitive (personal or confidential) or restricted (secrets, credentials). \
salience: 0..1, how much it matters. entity: which entity the memory is about: \
{\"action\": \"match_existing\", \"entity_id\": an id from shortlist} when one of them is meant; \
{\"action\": \"create_new\", \"name\", \"entity_type\": one of entity_types} for a clearly named \
entity not on the shortlist; {\"action\": \"fallback\"} when unsure. Unused entity fields are null. \
confidence: 0..1. secondary_entities: ids of other shortlist entities the text mentions.";

const DUPLICATE_TASK: &str = "Compare the new `text` with each candidate memory. verdict: \
\"same_memory\" when a candidate already says the same thing, \"supersedes\" when the new text \
updates or replaces a candidate (a changed date, a new decision on the same matter), else \
\"distinct\". leaf_id: the candidate's leaf_id for same_memory or supersedes, else null. \
confidence: 0..1.";

const PAIRS_TASK: &str = "A person's memory holds the `candidates`; `new_memory` was just said. \
For each candidate, judge whether the new memory changes what it says. verdict: \"updates\" only \
when both speak of the same person or thing and the same attribute, the attribute holds one \
value at a time (holds: one), and the new memory gives it another value or ends it (a move, a new \
job, a changed date); \"keeps\" when both can be true at once (another attribute, an addition to \
something that holds several values, another person, a plan, a wish, a one-off exception, a \
past event); \"repeats\" when it says the same again. attribute: for updates, the `id` of the \
catalogue attribute in `attributes`, else null. When unsure, answer keeps. Judge every \
candidate once, by its id.";

const SUMMARY_TASK: &str = "Write the summary of a branch of a memory tree from its children. \
title: a short title for the branch (under 80 characters). text: a faithful, dense summary of \
what the children say, naming people, projects, dates and decisions, in under 150 words; add \
nothing they do not say. labels: up to 5 lowercase tags.";

const INTENT_TASK: &str = "Read the `question` someone asks their memory. scope: \"broad\" when it asks \
for an overview, a catch-up, a history or everything about something (answered from summaries), \
\"specific\" when it asks for a particular fact, date, decision or detail (answered from individual \
memories). focus: \"temporal\" when it asks when something happened or what happened in a period, \
\"preference_or_constraint\" when it asks what someone prefers or likes or what rule must hold, else \
\"general\". reason: a few words on why.";

const RERANK_TASK: &str = "Order the `candidates` (memories found for the `question`) by how well \
each helps answer it, best first. order: the ids of the candidates that help, best first; leave out \
those that do not help at all. Use only the ids shown.";

/// How the `i`th candidate is shown to a model: `c1`, `c2`, … (short labels a model copies
/// reliably, where ids invite typos).
fn candidate_label(i: usize) -> String {
    format!("c{}", i + 1)
}

/// The candidate labels an answer names, read back: each must be one the model was shown, and
/// none may come twice.
struct Labels {
    shown: usize,
    seen: std::collections::BTreeSet<usize>,
    /// What naming one twice is called in the error ("ranked", "judged").
    twice: &'static str,
}

impl Labels {
    fn new(shown: usize, twice: &'static str) -> Labels {
        Labels { shown, seen: std::collections::BTreeSet::new(), twice }
    }

    /// The position of the candidate `given` names.
    fn position_of(&mut self, given: &str) -> Result<usize, ModelError> {
        let position = (0..self.shown)
            .find(|&i| candidate_label(i) == given)
            .ok_or_else(|| ModelError::malformed(format!("{given:?} is not a candidate it was shown")))?;
        if !self.seen.insert(position) {
            return Err(ModelError::malformed(format!("{given:?} is {} twice", self.twice)));
        }
        Ok(position)
    }
}

fn rerank_schema() -> Value {
    object(json!({
        "order": { "type": "array", "items": { "type": "string" } },
    }))
}

fn intent_schema() -> Value {
    object(json!({
        "scope": { "type": "string", "enum": ["broad", "specific"] },
        "focus": { "type": "string", "enum": ["general", "temporal", "preference_or_constraint"] },
        "reason": { "type": "string" },
    }))
}

fn confidence_schema() -> Value {
    json!({ "type": "number", "minimum": 0, "maximum": 1 })
}

fn nullable_string() -> Value {
    json!({ "type": ["string", "null"] })
}

fn object(properties: Value) -> Value {
    let required: Vec<String> = properties.as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

fn assess_schema() -> Value {
    object(json!({
        "admission": confidence_schema(),
        "kind": { "type": "string", "enum": MemoryKind::ALL.map(MemoryKind::as_str) },
        "title": { "type": "string" },
        "subject": nullable_string(),
        "labels": { "type": "array", "items": { "type": "string" } },
        "sensitivity": { "type": "string", "enum": ["normal", "sensitive", "restricted"] },
        "salience": confidence_schema(),
        "entity": object(json!({
            "action": { "type": "string", "enum": ["match_existing", "create_new", "fallback"] },
            "entity_id": nullable_string(),
            "name": nullable_string(),
            "entity_type": nullable_string(),
            "confidence": confidence_schema(),
        })),
        "secondary_entities": { "type": "array", "items": { "type": "string" } },
    }))
}

fn duplicate_schema() -> Value {
    object(json!({
        "verdict": { "type": "string", "enum": ["same_memory", "supersedes", "distinct"] },
        "leaf_id": nullable_string(),
        "confidence": confidence_schema(),
    }))
}

fn pairs_schema() -> Value {
    let judgement = object(json!({
        "id": { "type": "string" },
        "verdict": { "type": "string", "enum": ["updates", "keeps", "repeats"] },
        "attribute": nullable_string(),
    }));
    object(json!({ "judgements": { "type": "array", "items": judgement } }))
}

fn summary_schema() -> Value {
    object(json!({
        "title": { "type": "string" },
        "text": { "type": "string" },
        "labels": { "type": "array", "items": { "type": "string" } },
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssessAnswer {
    admission: f32,
    kind: String,
    title: String,
    subject: Option<String>,
    labels: Vec<String>,
    sensitivity: Sensitivity,
    salience: f32,
    entity: EntityAnswer,
    secondary_entities: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntityAnswer {
    action: String,
    entity_id: Option<String>,
    name: Option<String>,
    entity_type: Option<String>,
    confidence: f32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DuplicateAnswer {
    verdict: String,
    leaf_id: Option<String>,
    confidence: f32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairsAnswer {
    judgements: Vec<PairAnswer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairAnswer {
    id: String,
    verdict: String,
    attribute: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RerankAnswer {
    order: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentAnswer {
    scope: String,
    focus: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryAnswer {
    title: String,
    text: String,
    labels: Vec<String>,
}

fn confidence(what: &str, value: f32) -> Result<Confidence, ModelError> {
    Confidence::new(value).map_err(|_| ModelError::malformed(format!("{what} {value} is not between 0 and 1")))
}

fn title(value: &str) -> Result<String, ModelError> {
    let title = value.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ModelError::malformed(format!("title {value:?} is empty or too long")));
    }
    Ok(title)
}

/// Tags the model gave, normalized; ones that cannot be labels are dropped, not fatal.
fn labels(values: &[String]) -> Vec<Label> {
    let mut labels: Vec<Label> = values.iter().filter_map(|l| Label::parse(&l.trim().to_lowercase()).ok()).collect();
    labels.sort();
    labels.dedup();
    labels.truncate(8);
    labels
}

impl AssessAnswer {
    fn into_assessment(self, request: &AssessRequest) -> Result<Assessment, ModelError> {
        let offered = |id: &str| request.shortlist.iter().any(|e| e.id.as_str() == id);
        let kind = MemoryKind::parse(&self.kind)
            .ok_or_else(|| ModelError::malformed(format!("{:?} is not a memory kind", self.kind)))?;
        let entity = match self.entity.action.as_str() {
            "match_existing" => {
                let id = self
                    .entity
                    .entity_id
                    .ok_or_else(|| ModelError::malformed("match_existing without an entity_id"))?;
                if !offered(&id) {
                    return Err(ModelError::malformed(format!("entity {id:?} was not on the shortlist")));
                }
                EntityProposal::MatchExisting { entity_id: id, confidence: self.entity.confidence }
            }
            "create_new" => {
                let (Some(name), Some(entity_type)) = (self.entity.name, self.entity.entity_type) else {
                    return Err(ModelError::malformed("create_new without a name and entity_type"));
                };
                if EntityType::parse(entity_type.trim()).is_none() {
                    return Err(ModelError::malformed(format!("{entity_type:?} is not an allowed entity type")));
                }
                EntityProposal::CreateNew { name, entity_type, confidence: self.entity.confidence }
            }
            "fallback" => EntityProposal::Fallback,
            other => return Err(ModelError::malformed(format!("{other:?} is not an entity action"))),
        };
        confidence("entity confidence", self.entity.confidence)?;
        if let Some(id) = self.secondary_entities.iter().find(|id| !offered(id)) {
            return Err(ModelError::malformed(format!("secondary entity {id:?} was not on the shortlist")));
        }
        Ok(Assessment {
            admission: confidence("admission", self.admission)?,
            kind,
            title: title(&self.title)?,
            subject: self.subject.as_deref().and_then(|s| SubjectKey::parse(s).ok()),
            labels: labels(&self.labels),
            sensitivity: self.sensitivity,
            salience: confidence("salience", self.salience)?,
            entity,
            secondary_entities: self.secondary_entities,
        })
    }
}

impl DuplicateAnswer {
    fn into_judgement(self, request: &DuplicateRequest) -> Result<DuplicateJudgement, ModelError> {
        let confidence = confidence("confidence", self.confidence)?.get();
        let leaf = || -> Result<String, ModelError> {
            let id = self.leaf_id.clone().ok_or_else(|| ModelError::malformed("a verdict without a leaf_id"))?;
            if !request.candidates.iter().any(|c| c.id.as_str() == id) {
                return Err(ModelError::malformed(format!("leaf {id:?} was not a candidate")));
            }
            Ok(id)
        };
        match self.verdict.as_str() {
            "same_memory" => Ok(DuplicateJudgement::SameMemory { leaf_id: leaf()?, confidence }),
            "supersedes" => Ok(DuplicateJudgement::Supersedes { leaf_id: leaf()?, confidence }),
            "distinct" => Ok(DuplicateJudgement::Distinct),
            other => Err(ModelError::malformed(format!("{other:?} is not a verdict"))),
        }
    }
}

impl SummaryAnswer {
    fn into_draft(self) -> Result<SummaryDraft, ModelError> {
        let text = self.text.trim();
        if text.is_empty() || text.chars().count() > MAX_SUMMARY_CHARS {
            return Err(ModelError::malformed("the summary text is empty or too long"));
        }
        Ok(SummaryDraft { title: title(&self.title)?, text: text.to_owned(), labels: labels(&self.labels) })
    }
}

/// A text as shown to the model: at most [`MAX_SHOWN_CHARS`] characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// JSON mode servers sometimes wrap the object in a markdown code fence.
fn strip_code_fence(content: &str) -> &str {
    let trimmed = content.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return trimmed };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[async_trait]
impl Reasoner for OpenAiReasoner {
    fn id(&self) -> String {
        format!("openai:{}", self.client.config().model)
    }

    fn locality(&self) -> Locality {
        Locality::Remote
    }

    async fn assess(&self, request: &AssessRequest) -> arbor_ports::Result<Assessment> {
        self.assess_chunk(request).await.map_err(|e| to_port_error(BACKEND, e))
    }

    async fn judge_duplicate(&self, request: &DuplicateRequest) -> arbor_ports::Result<DuplicateJudgement> {
        self.judge(request).await.map_err(|e| to_port_error(BACKEND, e))
    }

    async fn judge_pairs(&self, request: &PairRequest) -> arbor_ports::Result<Vec<PairJudgement>> {
        self.judge_candidate_pairs(request).await.map_err(|e| to_port_error(BACKEND, e))
    }

    async fn summarize(&self, request: &SummarizeRequest) -> arbor_ports::Result<SummaryDraft> {
        self.summarize_children(request).await.map_err(|e| to_port_error(BACKEND, e))
    }

    async fn classify_query(&self, request: &QueryRequest) -> arbor_ports::Result<QueryIntent> {
        self.classify(request).await.map_err(|e| to_port_error(BACKEND, e))
    }

    async fn rerank(&self, request: &RerankRequest) -> arbor_ports::Result<Vec<NodeId>> {
        self.rank_candidates(request).await.map_err(|e| to_port_error(BACKEND, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_fences_are_stripped() {
        assert_eq!(strip_code_fence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_code_fence("  {\"a\":1} "), "{\"a\":1}");
    }

    #[test]
    fn long_texts_are_cut_on_a_character_boundary() {
        let text = "é".repeat(MAX_SHOWN_CHARS + 5);
        let cut = shown(&text);
        assert_eq!(cut.chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn strict_schemas_require_every_property() {
        let schema = assess_schema();
        let required = schema["required"].as_array().unwrap().len();
        assert_eq!(required, schema["properties"].as_object().unwrap().len());
        assert_eq!(schema["properties"]["entity"]["additionalProperties"], json!(false));
    }
}
