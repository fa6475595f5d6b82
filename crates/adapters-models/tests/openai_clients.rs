//! The OpenAI-compatible embedder and reasoner against a recording mock server on loopback:
//! success, batching, malformed answers, timeouts, 429 and 5xx with retries, and answers that
//! name things the model was not shown.
#![cfg(feature = "openai")]

mod support;

use std::time::{Duration, Instant};

use arbor_adapters_models::{EndpointConfig, JsonOutput, ModelError, OpenAiEmbedder, OpenAiReasoner};
use arbor_domain::decision::EntityProposal;
use arbor_domain::entity::{Entity, EntitySlug, EntityType};
use arbor_domain::event::EventHints;
use arbor_domain::id::{EntityId, LeafId, ScopeId};
use arbor_domain::model::{Actor, MemoryKind, TreeId};
use arbor_domain::namespace::{Namespace, NamespaceKind};
use arbor_domain::supersession::DuplicateJudgement;
use arbor_domain::time::Timestamp;
use arbor_ports::{
    AssessRequest, DuplicateCandidate, DuplicateRequest, PairCandidate, PairJudgement, PairRequest, PairVerdict,
    QueryFocus, QueryRequest, RerankCandidate, RerankRequest, SummarizeRequest, SummaryInput,
};
use serde_json::json;
use support::{MockServer, Reply, embeddings_reply};

use support::endpoint as config;

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("memory number {i}")).collect()
}

#[tokio::test]
async fn embeddings_are_batched_ordered_and_normalized() {
    let server = MockServer::start(|_, _, body| embeddings_reply(body, 8)).await;
    let mut config = config(&server);
    config.api_key = Some("sk-test".to_owned());
    let embedder = OpenAiEmbedder::new(config, 8, 2).unwrap();
    let inputs = vec!["alpha".to_owned(), String::new(), "beta".to_owned(), "gamma".to_owned(), "delta".to_owned()];
    let vectors = embedder.embed_texts(&inputs).await.unwrap();

    assert_eq!(vectors.len(), 5);
    // Blank input: the zero vector, and never sent.
    assert!(vectors[1].iter().all(|v| *v == 0.0));
    for i in [0, 2, 3, 4] {
        let norm: f32 = vectors[i].iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "vector {i} has norm {norm}");
    }
    // The server answered in reverse order; the vectors are matched by index, so the same
    // text alone gives the same vector.
    let alone = embedder.embed_texts(&["gamma".to_owned()]).await.unwrap();
    assert_eq!(alone[0], vectors[3]);

    let requests = server.requests();
    let sent: Vec<usize> = requests.iter().take(3).map(|r| r.json()["input"].as_array().unwrap().len()).collect();
    assert_eq!(sent, vec![1, 2, 1], "batches of at most 2, blank inputs left out");
    assert!(requests.iter().all(|r| r.path == "/v1/embeddings"));
    assert!(requests.iter().all(|r| r.authorization.as_deref() == Some("Bearer sk-test")));
    assert_eq!(requests[0].json()["model"], "test-model");
}

#[tokio::test]
async fn malformed_json_is_an_error_without_retries() {
    let server = MockServer::start(|_, _, _| Reply::raw("{\"data\": [ not json")).await;
    let embedder = OpenAiEmbedder::new(config(&server), 8, 16).unwrap();
    let error = embedder.embed_texts(&texts(2)).await.unwrap_err();
    assert!(matches!(error, ModelError::Malformed(_)), "{error}");
    assert_eq!(server.request_count(), 1, "a malformed answer is not retried");
}

#[tokio::test]
async fn wrong_counts_and_dimensions_are_refused() {
    let short = MockServer::start(|_, _, body| {
        let mut reply = embeddings_reply(body, 8);
        let mut value: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
        value["data"].as_array_mut().unwrap().pop();
        reply.body = value.to_string();
        reply
    })
    .await;
    let error = OpenAiEmbedder::new(config(&short), 8, 16).unwrap().embed_texts(&texts(3)).await.unwrap_err();
    assert!(error.to_string().contains("2 embeddings for 3 inputs"), "{error}");

    let wide = MockServer::start(|_, _, body| embeddings_reply(body, 12)).await;
    let error = OpenAiEmbedder::new(config(&wide), 8, 16).unwrap().embed_texts(&texts(1)).await.unwrap_err();
    assert!(error.to_string().contains("has 12 values; this embedder is configured for 8"), "{error}");
}

#[tokio::test]
async fn a_slow_server_times_out_after_bounded_retries() {
    let server = MockServer::start(|_, _, body| embeddings_reply(body, 8).after(Duration::from_secs(3))).await;
    let mut config = config(&server);
    config.timeout = Duration::from_millis(200);
    config.max_retries = 1;
    let embedder = OpenAiEmbedder::new(config, 8, 16).unwrap();
    let error = embedder.embed_texts(&texts(1)).await.unwrap_err();
    assert!(matches!(error, ModelError::Timeout { .. }), "{error}");
    assert_eq!(server.request_count(), 2, "one try and one retry");
}

#[tokio::test]
async fn rate_limited_and_failing_requests_are_retried() {
    // 429 (asking for no wait), then 503, then success.
    let server = MockServer::start(|n, _, body| match n {
        0 => Reply::status(429, r#"{"error":{"message":"slow down"}}"#).retry_after(0),
        1 => Reply::status(503, "overloaded"),
        _ => embeddings_reply(body, 8),
    })
    .await;
    let embedder = OpenAiEmbedder::new(config(&server), 8, 16).unwrap();
    let vectors = embedder.embed_texts(&texts(2)).await.unwrap();
    assert_eq!(vectors.len(), 2);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn retries_are_bounded_and_client_errors_are_not_retried() {
    let failing = MockServer::start(|_, _, _| Reply::status(500, "boom")).await;
    let error = OpenAiEmbedder::new(config(&failing), 8, 16).unwrap().embed_texts(&texts(1)).await.unwrap_err();
    assert!(matches!(error, ModelError::Status { status: 500, .. }), "{error}");
    assert_eq!(failing.request_count(), 3, "1 try + max_retries 2");

    let refusing = MockServer::start(|_, _, _| Reply::status(400, r#"{"error":"bad model"}"#)).await;
    let error = OpenAiEmbedder::new(config(&refusing), 8, 16).unwrap().embed_texts(&texts(1)).await.unwrap_err();
    assert!(error.to_string().contains("400"), "{error}");
    assert!(error.to_string().contains("bad model"), "the server's reason is quoted: {error}");
    assert_eq!(refusing.request_count(), 1);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_clear_error() {
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = EndpointConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    config.max_retries = 1;
    config.backoff = Duration::from_millis(5);
    let error = OpenAiEmbedder::new(config, 8, 16).unwrap().embed_texts(&texts(1)).await.unwrap_err();
    assert!(matches!(error, ModelError::Unreachable { .. }), "{error}");
}

#[tokio::test]
async fn requests_are_spaced_by_the_rate_limit() {
    let server = MockServer::start(|_, _, body| embeddings_reply(body, 8)).await;
    let mut config = config(&server);
    config.requests_per_second = 20.0;
    let embedder = OpenAiEmbedder::new(config, 8, 1).unwrap();
    let began = Instant::now();
    embedder.embed_texts(&texts(5)).await.unwrap();
    // Five requests at 20/s: the last starts at least 4 × 50 ms after the first.
    assert!(began.elapsed() >= Duration::from_millis(195), "took {:?}", began.elapsed());
    assert_eq!(server.request_count(), 5);
}

#[test]
fn bad_configurations_are_refused() {
    let refuse = |config: EndpointConfig| OpenAiEmbedder::new(config, 8, 16).unwrap_err().to_string();
    assert!(refuse(EndpointConfig::new("localhost:11434", "m")).contains("not an http(s) URL"));
    assert!(refuse(EndpointConfig::new("http://localhost:11434/v1", " ")).contains("model name is empty"));
    let mut zero = EndpointConfig::new("http://localhost/v1", "m");
    zero.timeout = Duration::ZERO;
    assert!(refuse(zero).contains("timeout"));
    assert!(OpenAiEmbedder::new(EndpointConfig::new("http://x/v1", "m"), 0, 16).is_err());
}

fn entity(id: &str, name: &str) -> Entity {
    Entity {
        id: EntityId::parse(id).unwrap(),
        namespace: Namespace::project(ScopeId::parse("lumen").unwrap()),
        entity_type: EntityType::Project,
        slug: EntitySlug::from_name(name),
        name: name.to_owned(),
        aliases: Vec::new(),
        created_at: Timestamp::from_second(1_700_000_000).unwrap(),
    }
}

fn assess_request() -> AssessRequest {
    AssessRequest {
        text: "Atlas ships to the EU region on June 3".to_owned(),
        actor: Actor::User,
        namespace: NamespaceKind::Project,
        hints: EventHints::default(),
        shortlist: vec![entity("ent-atlas", "Project Atlas")],
    }
}

fn assessment_json(entity: serde_json::Value) -> String {
    json!({
        "admission": 0.9,
        "kind": "fact",
        "title": "Atlas EU launch date",
        "subject": "atlas_eu_launch",
        "labels": ["Launch", "launch", "  "],
        "sensitivity": "normal",
        "salience": 0.7,
        "entity": entity,
        "secondary_entities": [],
    })
    .to_string()
}

#[tokio::test]
async fn an_assessment_is_asked_for_with_a_strict_schema_and_read_back() {
    let answer = assessment_json(
        json!({ "action": "match_existing", "entity_id": "ent-atlas", "name": null, "entity_type": null, "confidence": 0.92 }),
    );
    let server = MockServer::start(move |_, _, _| Reply::chat(&answer)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let assessment = reasoner.assess_chunk(&assess_request()).await.unwrap();
    assert_eq!(assessment.kind, MemoryKind::Fact);
    assert_eq!(assessment.title, "Atlas EU launch date");
    assert_eq!(
        assessment.entity,
        EntityProposal::MatchExisting { entity_id: "ent-atlas".to_owned(), confidence: 0.92 }
    );
    assert_eq!(assessment.labels.len(), 1, "tags are normalized, deduplicated, and blank ones dropped");

    let request = server.requests()[0].json();
    assert_eq!(request["response_format"]["type"], "json_schema");
    assert_eq!(request["response_format"]["json_schema"]["strict"], true);
    assert_eq!(request["temperature"], 0.0);
    let shown = request["messages"][1]["content"].as_str().unwrap();
    assert!(
        shown.contains("ent-atlas") && shown.contains("Atlas ships to the EU"),
        "the prompt carries chunk and shortlist"
    );
}

#[tokio::test]
async fn json_object_mode_puts_the_schema_in_the_prompt() {
    let answer = assessment_json(
        json!({ "action": "fallback", "entity_id": null, "name": null, "entity_type": null, "confidence": 0.0 }),
    );
    let fenced = format!("```json\n{answer}\n```");
    let server = MockServer::start(move |_, _, _| Reply::chat(&fenced)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Object).unwrap();
    let assessment = reasoner.assess_chunk(&assess_request()).await.unwrap();
    assert_eq!(assessment.entity, EntityProposal::Fallback);
    let request = server.requests()[0].json();
    assert_eq!(request["response_format"]["type"], "json_object");
    assert!(request["messages"][0]["content"].as_str().unwrap().contains("\"secondary_entities\""));
}

#[tokio::test]
async fn unusable_assessments_are_errors() {
    let cases = [
        // An entity it was not shown.
        assessment_json(
            json!({ "action": "match_existing", "entity_id": "ent-invented", "name": null, "entity_type": null, "confidence": 0.9 }),
        ),
        // An entity type outside the vocabulary.
        assessment_json(
            json!({ "action": "create_new", "entity_id": null, "name": "Zed", "entity_type": "spaceship", "confidence": 0.9 }),
        ),
        // Out-of-range confidence.
        assessment_json(
            json!({ "action": "fallback", "entity_id": null, "name": null, "entity_type": null, "confidence": 7.0 }),
        ),
        // Not the schema.
        json!({ "admission": 0.9 }).to_string(),
        // Not JSON.
        "I think this is a fact about Atlas.".to_owned(),
    ];
    for (i, answer) in cases.into_iter().enumerate() {
        let server = MockServer::start(move |_, _, _| Reply::chat(&answer)).await;
        let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
        let error = reasoner.assess_chunk(&assess_request()).await.unwrap_err();
        assert!(matches!(error, ModelError::Malformed(_)), "case {i}: {error}");
    }
}

#[tokio::test]
async fn a_truncated_answer_is_an_error() {
    let server =
        MockServer::start(|_, _, _| Reply::chat_finished("{\"admission\": 0.9, \"kind\": \"fa", "length")).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let error = reasoner.assess_chunk(&assess_request()).await.unwrap_err();
    assert!(error.to_string().contains("cut off"), "{error}");
}

fn duplicate_request() -> DuplicateRequest {
    DuplicateRequest {
        text: "Atlas now ships to the EU on June 10".to_owned(),
        subject: None,
        candidates: vec![DuplicateCandidate {
            id: LeafId::parse("lf-01J0000000000000000000000A").unwrap(),
            title: "Atlas EU launch".to_owned(),
            text: "Atlas ships to the EU on June 3".to_owned(),
        }],
    }
}

#[tokio::test]
async fn duplicate_judgements_name_only_candidates() {
    let id = duplicate_request().candidates[0].id.as_str().to_owned();
    let good = json!({ "verdict": "supersedes", "leaf_id": id, "confidence": 0.8 }).to_string();
    let server = MockServer::start(move |_, _, _| Reply::chat(&good)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let judgement = reasoner.judge(&duplicate_request()).await.unwrap();
    assert_eq!(judgement, DuplicateJudgement::Supersedes { leaf_id: id, confidence: 0.8 });

    let invented =
        json!({ "verdict": "same_memory", "leaf_id": "lf-01J9999999999999999999999Z", "confidence": 0.9 }).to_string();
    let server = MockServer::start(move |_, _, _| Reply::chat(&invented)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let error = reasoner.judge(&duplicate_request()).await.unwrap_err();
    assert!(error.to_string().contains("was not a candidate"), "{error}");
}

fn pair_request() -> PairRequest {
    let candidate = |id: &str, text: &str| PairCandidate {
        id: LeafId::parse(id).unwrap(),
        text: text.to_owned(),
        attributes: vec!["residence".to_owned()],
    };
    PairRequest {
        text: "Maya moved to Amsterdam".to_owned(),
        attributes: vec!["residence".to_owned()],
        candidates: vec![
            candidate("lf-01J0000000000000000000000A", "Maya lives in Porto"),
            candidate("lf-01J0000000000000000000000B", "Maya speaks Portuguese"),
        ],
    }
}

async fn judged_pairs(answer: serde_json::Value) -> Result<Vec<PairJudgement>, ModelError> {
    let answer = answer.to_string();
    let server = MockServer::start(move |_, _, _| Reply::chat(&answer)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let judged = reasoner.judge_candidate_pairs(&pair_request()).await;
    let sent = server.requests()[0].json();
    assert_eq!(sent["response_format"]["json_schema"]["name"], "pair_judgements");
    let shown: serde_json::Value = serde_json::from_str(sent["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(shown["candidates"][1]["id"], "c2", "candidates are shown by short labels");
    assert!(shown["attributes"].as_array().unwrap().iter().any(|a| a["id"] == "residence" && a["holds"] == "one"));
    judged
}

#[tokio::test]
async fn pair_judgements_name_shown_candidates_and_catalogue_attributes() {
    let good = json!({ "judgements": [
        { "id": "c1", "verdict": "updates", "attribute": "Residence" },
        { "id": "c2", "verdict": "keeps", "attribute": null },
    ] });
    let judged = judged_pairs(good).await.unwrap();
    let request = pair_request();
    assert_eq!(
        judged,
        vec![
            PairJudgement {
                leaf_id: request.candidates[0].id.clone(),
                verdict: PairVerdict::Updates { attribute: "residence".to_owned() }
            },
            PairJudgement { leaf_id: request.candidates[1].id.clone(), verdict: PairVerdict::Keeps },
        ]
    );
    for (bad, why) in [
        (json!({ "judgements": [{ "id": "c3", "verdict": "keeps", "attribute": null }] }), "not a candidate"),
        (
            json!({ "judgements": [{ "id": "c1", "verdict": "keeps", "attribute": null }, { "id": "c1", "verdict": "keeps", "attribute": null }] }),
            "judged twice",
        ),
        (
            json!({ "judgements": [{ "id": "c1", "verdict": "updates", "attribute": "vibe" }] }),
            "not a catalogue attribute",
        ),
        (json!({ "judgements": [{ "id": "c1", "verdict": "updates", "attribute": null }] }), "naming no attribute"),
    ] {
        let error = judged_pairs(bad).await.unwrap_err();
        assert!(error.to_string().contains(why), "{error}");
    }
}

#[tokio::test]
async fn summaries_are_read_and_checked() {
    let request = SummarizeRequest {
        tree: TreeId::parse("interaction:atlas").unwrap(),
        height: 1,
        children: vec![SummaryInput {
            id: LeafId::parse("lf-01J0000000000000000000000A").unwrap().into(),
            title: "Atlas EU launch".to_owned(),
            text: "Atlas ships to the EU on June 3".to_owned(),
            observed_at: Timestamp::from_second(1_700_000_000).unwrap(),
        }],
    };
    let good =
        json!({ "title": "Atlas launch plans", "text": "Atlas ships to the EU on June 3.", "labels": ["launch"] })
            .to_string();
    let server = MockServer::start(move |_, _, _| Reply::chat(&good)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let draft = reasoner.summarize_children(&request).await.unwrap();
    assert_eq!(draft.title, "Atlas launch plans");

    let empty = json!({ "title": "Atlas", "text": "  ", "labels": [] }).to_string();
    let server = MockServer::start(move |_, _, _| Reply::chat(&empty)).await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    assert!(reasoner.summarize_children(&request).await.is_err());
}

#[tokio::test]
async fn questions_are_classified_broad_or_specific() {
    let server = MockServer::start(|n, _, _| match n {
        0 => {
            Reply::chat(&json!({ "scope": "broad", "focus": "general", "reason": "asks for an overview" }).to_string())
        }
        1 => Reply::chat(&json!({ "scope": "specific", "focus": "temporal", "reason": "asks for a date" }).to_string()),
        2 => Reply::chat(&json!({ "scope": "specific", "focus": "gossip", "reason": "?" }).to_string()),
        _ => Reply::chat(&json!({ "scope": "everything", "focus": "general", "reason": "?" }).to_string()),
    })
    .await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let ask = |query: &str| QueryRequest { query: query.to_owned() };
    let broad = reasoner.classify(&ask("catch me up on Atlas")).await.unwrap();
    assert!(broad.broad);
    assert_eq!(broad.reason, "asks for an overview");
    let when = reasoner.classify(&ask("when does Atlas ship?")).await.unwrap();
    assert!(!when.broad);
    assert_eq!(when.focus, QueryFocus::Temporal);
    let error = reasoner.classify(&ask("any gossip?")).await.unwrap_err();
    assert!(error.to_string().contains("not a question focus"), "{error}");
    let error = reasoner.classify(&ask("anything")).await.unwrap_err();
    assert!(error.to_string().contains("not a question scope"), "{error}");
    assert_eq!(server.requests()[0].json()["response_format"]["json_schema"]["name"], "query_intent");
}

#[tokio::test]
async fn candidates_are_reranked_by_the_labels_they_were_shown_as() {
    let server = MockServer::start(|n, _, _| match n {
        0 => Reply::chat(&json!({ "order": ["c3", "c1"] }).to_string()),
        1 => Reply::chat(&json!({ "order": ["c1", "c9"] }).to_string()),
        _ => Reply::chat(&json!({ "order": ["c2", "c2"] }).to_string()),
    })
    .await;
    let reasoner = OpenAiReasoner::new(config(&server), JsonOutput::Schema).unwrap();
    let id = |n: &str| arbor_domain::id::NodeId::Leaf(arbor_domain::id::LeafId::parse(n).unwrap());
    let request = RerankRequest {
        query: "which release shipped?".to_owned(),
        candidates: ["leaf-a", "leaf-b", "leaf-c"]
            .iter()
            .map(|n| RerankCandidate { id: id(n), text: format!("{n} shipped") })
            .collect(),
    };
    assert_eq!(reasoner.rank_candidates(&request).await.unwrap(), vec![id("leaf-c"), id("leaf-a")]);
    let error = reasoner.rank_candidates(&request).await.unwrap_err();
    assert!(error.to_string().contains("not a candidate it was shown"), "{error}");
    let error = reasoner.rank_candidates(&request).await.unwrap_err();
    assert!(error.to_string().contains("ranked twice"), "{error}");
    let shown = server.requests()[0].json();
    assert_eq!(shown["response_format"]["json_schema"]["name"], "rerank");
    let input: serde_json::Value = serde_json::from_str(shown["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(input["candidates"][2], json!({ "id": "c3", "text": "leaf-c shipped" }));
}
