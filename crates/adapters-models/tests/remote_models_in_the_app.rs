//! The real app with remote models (the OpenAI-compatible embedder and reasoner) pointed at a
//! recording mock server: restricted memories never reach it, whatever path they take (assess,
//! duplicate judgement, sealing, indexing, retrieval), and unusable answers fall back to the
//! deterministic reasoner, are counted, and never invent an entity; a subject key the model
//! makes up never retires a memory.
#![cfg(feature = "openai")]

mod support;

use std::sync::Arc;

use arbor_adapters_models::{JsonOutput, OpenAiEmbedder, OpenAiReasoner};
use arbor_app::{Arbor, Options, Policy, Ports, RetrieveRequest};
use arbor_domain::entity::EntityType;
use arbor_domain::event::{EntityHint, Event};
use arbor_domain::id::ScopeId;
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use arbor_domain::sensitivity::Sensitivity;
use arbor_ports::HashingEmbedder;
use serde_json::{Value, json};
use support::{MockServer, Reply, embeddings_reply, endpoint};

const DIMS: usize = 16;

/// Words that appear only in restricted memories (and in a question holding a secret).
const RESTRICTED_MARKERS: [&str; 5] = ["Nightshade", "31-07-44", "Hunter2Falcon", "quartermaster", "sk-live-"];

fn engine(server: &MockServer) -> Arbor {
    engine_with(server, Options::default())
}

fn engine_with(server: &MockServer, options: Options) -> Arbor {
    let mut ports = Ports::in_memory();
    ports.embedder = Arc::new(OpenAiEmbedder::new(endpoint(server), DIMS as u32, 8).unwrap());
    ports.reasoner = Arc::new(OpenAiReasoner::new(endpoint(server), JsonOutput::Schema).unwrap());
    Arbor::new(ports, Policy::default(), options)
}

fn chain(arbor: &Arbor) -> ReadChain {
    arbor.read_chain(&TrustedContext::Project { project: ScopeId::parse("lumen").unwrap() }).unwrap()
}

/// Which task a chat request is, from its system prompt.
fn task(body: &Value) -> &'static str {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    if system.contains("worth remembering") {
        "assess"
    } else if system.contains("Compare the new") {
        "duplicate"
    } else if system.contains("summary of a branch") {
        "summary"
    } else if system.contains("Read the `question`") {
        "intent"
    } else if system.contains("Order the `candidates`") {
        "rerank"
    } else if system.contains("just said") {
        "pairs"
    } else {
        "unknown"
    }
}

/// The first shortlisted entity's id in an assess request, if any.
fn first_shortlisted(body: &Value) -> Option<String> {
    let input: Value = serde_json::from_str(body["messages"][1]["content"].as_str()?).ok()?;
    input["shortlist"][0]["id"].as_str().map(str::to_owned)
}

/// The labels of the candidates a rerank request shows, in the order shown.
fn shown_candidates(body: &Value) -> Vec<String> {
    let input: Value =
        serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or("{}")).unwrap_or_default();
    input["candidates"].as_array().into_iter().flatten().filter_map(|c| c["id"].as_str().map(str::to_owned)).collect()
}

/// A well-behaved model: files everything under Project Lumen.
fn good_answer(body: &Value) -> Reply {
    let content = match task(body) {
        "assess" => {
            let entity = match first_shortlisted(body) {
                Some(id) => {
                    json!({ "action": "match_existing", "entity_id": id, "name": null, "entity_type": null, "confidence": 0.95 })
                }
                None => {
                    json!({ "action": "create_new", "entity_id": null, "name": "Project Lumen", "entity_type": "project", "confidence": 0.95 })
                }
            };
            json!({
                "admission": 0.9, "kind": "fact", "title": "A Lumen fact", "subject": null, "labels": ["lumen"],
                "sensitivity": "normal", "salience": 0.6, "entity": entity, "secondary_entities": [],
            })
        }
        "duplicate" => json!({ "verdict": "distinct", "leaf_id": null, "confidence": 0.9 }),
        "summary" => json!({ "title": "Lumen notes", "text": "Notes about Project Lumen.", "labels": ["lumen"] }),
        "intent" => json!({ "scope": "specific", "focus": "general", "reason": "the model read it as specific" }),
        // The candidates in reverse: a reranker that plainly disagrees with the fusion.
        "rerank" => json!({ "order": shown_candidates(body).into_iter().rev().collect::<Vec<_>>() }),
        // No opinion on any pair: the rules decide.
        "pairs" => json!({ "judgements": [] }),
        _ => json!({}),
    };
    Reply::chat(&content.to_string())
}

/// A server whose embeddings and answers are all good.
async fn well_behaved_server() -> MockServer {
    MockServer::start(
        |_, path, body| {
            if path.ends_with("/embeddings") { embeddings_reply(body, DIMS) } else { good_answer(body) }
        },
    )
    .await
}

fn lumen_event(text: &str) -> Event {
    let mut event = Event::user_message(text);
    event.hints.entity = Some(EntityHint { name: "Project Lumen".to_owned(), entity_type: EntityType::Project });
    event
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_memories_never_reach_a_remote_model() {
    let server = well_behaved_server().await;
    let arbor = engine(&server);
    let chain = chain(&arbor);

    let mut events = Vec::new();
    for i in 0..12 {
        events.push(lumen_event(&format!("Lumen sprint {i}: the team shipped the search page and fixed bug {i}")));
    }
    // Restricted by the host's declaration, in the same tree as normal memories, so they are
    // duplicate candidates for them and children of the same summaries.
    let mut declared =
        lumen_event("Lumen sprint 5: the Nightshade vault combination is 31-07-44, kept by the quartermaster");
    declared.hints.sensitivity = Some(Sensitivity::Restricted);
    events.push(declared);
    // A restricted memory about an entity of its own: the entity's name is restricted text too.
    let mut own_entity = Event::user_message("The Nightshade vault opens only for the quartermaster");
    own_entity.hints.sensitivity = Some(Sensitivity::Restricted);
    own_entity.hints.entity =
        Some(EntityHint { name: "Nightshade Vault".to_owned(), entity_type: EntityType::Project });
    events.push(own_entity);
    // Restricted because it holds a secret, declared or not.
    events.push(lumen_event("Lumen sprint 6: the staging database password is Hunter2Falcon"));
    for i in 12..20 {
        events.push(lumen_event(&format!("Lumen sprint {i}: the team shipped the search page and fixed bug {i}")));
    }
    for outcome in arbor.ingest_batch(&chain, events).await.unwrap() {
        outcome.unwrap();
    }
    // One at a time too: each is judged against the restricted ones already stored.
    arbor.ingest(&chain, lumen_event("Lumen sprint 5: the team also reviewed the vault design")).await.unwrap();
    arbor.ingest(&chain, lumen_event("Lumen sprint 14: the team shipped the search page, fixed bug 14")).await.unwrap();
    let jobs = arbor.run_jobs(None).await.unwrap();
    assert!(jobs.summaries_sealed > 0, "the tree was sealed, so summaries were written: {jobs:?}");

    let mut request = RetrieveRequest::new("what is the vault combination");
    request.include_restricted = true;
    let pack = arbor.retrieve(&chain, &request).await.unwrap();
    assert!(
        pack.evidence.iter().any(|e| e.text.contains("31-07-44")),
        "the restricted memory is still found locally (full text) when the caller enables it"
    );
    assert_eq!(pack.intent.reason, "the model read it as specific", "the remote reasoner read the question");
    // A question holding a secret is read by the deterministic reasoner and embedded by no one.
    let secret = arbor
        .retrieve(&chain, &RetrieveRequest::new("is the api key sk-live-4f9a8b7c6d5e4f3a2b1c still valid"))
        .await
        .unwrap();
    assert_ne!(secret.intent.reason, "the model read it as specific");

    let requests = server.requests();
    let embeddings = requests.iter().filter(|r| r.path.ends_with("/embeddings")).count();
    let chats: Vec<&'static str> =
        requests.iter().filter(|r| r.path.ends_with("/chat/completions")).map(|r| task(&r.json())).collect();
    assert!(embeddings > 0, "normal memories and the query were embedded remotely");
    for expected in ["assess", "duplicate", "summary", "intent", "rerank"] {
        assert!(chats.contains(&expected), "the remote reasoner was asked to {expected}: {chats:?}");
    }
    for request in &requests {
        for marker in RESTRICTED_MARKERS {
            assert!(
                !request.body.contains(marker),
                "restricted text {marker:?} was sent to {}: {}",
                request.path,
                request.body
            );
        }
    }
    assert_eq!(arbor.reasoner_fallbacks(), 0, "a well-behaved model is never overruled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_answers_fall_back_to_the_deterministic_reasoner_and_are_counted() {
    // Every kind of bad answer, in turn: not JSON, an entity it was not shown, an invented
    // entity type, a cut-off answer, the wrong shape, a server error.
    let server = MockServer::start(|n, path, body| {
        if path.ends_with("/embeddings") {
            return embeddings_reply(body, DIMS);
        }
        let invented = json!({
            "admission": 0.9, "kind": "fact", "title": "t", "subject": null, "labels": [],
            "sensitivity": "normal", "salience": 0.5, "secondary_entities": [],
            "entity": { "action": "match_existing", "entity_id": "ent-invented", "name": null, "entity_type": null, "confidence": 0.99 },
        });
        let spaceship = json!({
            "admission": 0.9, "kind": "fact", "title": "t", "subject": null, "labels": [],
            "sensitivity": "normal", "salience": 0.5, "secondary_entities": [],
            "entity": { "action": "create_new", "entity_id": null, "name": "Zorg Armada", "entity_type": "spaceship", "confidence": 0.99 },
        });
        match n % 6 {
            0 => Reply::chat("Sure! This looks like a fact about Lumen."),
            1 => Reply::chat(&invented.to_string()),
            2 => Reply::chat(&spaceship.to_string()),
            3 => Reply::chat_finished("{\"admission\": 0.9, \"kind\": \"fa", "length"),
            4 => Reply::chat("{\"title\": 42}"),
            _ => Reply::status(500, "model crashed"),
        }
    })
    .await;
    let arbor = engine(&server);
    let chain = chain(&arbor);
    let mut created = 0;
    for i in 0..18 {
        let report = arbor
            .ingest(&chain, lumen_event(&format!("Lumen decision {i}: the API freezes on day {i} of the release")))
            .await
            .expect("a bad model answer never fails a write");
        created += report.chunks.len();
    }
    let jobs = arbor.run_jobs(None).await.unwrap();
    assert_eq!(jobs.failed, 0, "sealing survives unusable summaries: {jobs:?}");
    assert!(created >= 18);

    let chats = server.requests().iter().filter(|r| r.path.ends_with("/chat/completions")).count();
    // Every answer the model gave was unusable (retried server errors count once).
    assert!(arbor.reasoner_fallbacks() > 0);
    assert!(
        arbor.reasoner_fallbacks() as usize <= chats,
        "{} fallbacks for {chats} requests",
        arbor.reasoner_fallbacks()
    );
    let counts = arbor.ports().store.counts().await.unwrap();
    assert_eq!(counts.entities, 1, "only the host's Project Lumen exists: no invented entity");
    let pack = arbor.retrieve(&chain, &RetrieveRequest::new("when does the API freeze")).await.unwrap();
    assert!(!pack.evidence.is_empty(), "memories filed by the fallback are retrievable");
    for evidence in &pack.evidence {
        assert!(!evidence.text.contains("Zorg"), "nothing the model invented was stored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_memories_get_local_vectors_when_configured() {
    let server = well_behaved_server().await;
    let arbor = engine(&server).with_restricted_embedder(Arc::new(HashingEmbedder::default())).unwrap();
    let chain = chain(&arbor);
    arbor.ingest(&chain, lumen_event("Lumen sprint 1: the team shipped the search page")).await.unwrap();
    let mut secret = lumen_event("The Nightshade vault combination is 31-07-44");
    secret.hints.sensitivity = Some(Sensitivity::Restricted);
    arbor.ingest(&chain, secret).await.unwrap();
    // A remote embedder is a model, so the writes left their vectors to the job runner.
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);

    let mut request = RetrieveRequest::new("vault combination");
    request.include_restricted = true;
    let pack = arbor.retrieve(&chain, &request).await.unwrap();
    let found = pack.evidence.iter().find(|e| e.text.contains("31-07-44")).expect("the restricted memory is found");
    assert!(found.scores.vector_rank.is_some(), "it has a local vector: {:?}", found.scores);
    // Without restricted memories in the request, its vectors are not searched at all.
    let pack = arbor.retrieve(&chain, &RetrieveRequest::new("vault combination")).await.unwrap();
    assert!(pack.evidence.iter().all(|e| !e.text.contains("31-07-44")));
    for request in server.requests() {
        assert!(!request.body.contains("Nightshade"), "restricted text reached {}", request.path);
    }
    // A remote embedder cannot be the one for restricted text.
    let remote = Arc::new(OpenAiEmbedder::new(endpoint(&server), DIMS as u32, 8).unwrap());
    assert!(engine(&server).with_restricted_embedder(remote).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_model_cannot_hold_up_a_write_past_the_deadline() {
    let server = MockServer::start(|_, path, body| {
        if path.ends_with("/embeddings") {
            embeddings_reply(body, DIMS)
        } else {
            good_answer(body).after(std::time::Duration::from_secs(3))
        }
    })
    .await;
    let options = Options { reasoner_deadline: std::time::Duration::from_millis(200), ..Options::default() };
    let arbor = engine_with(&server, options);
    let chain = chain(&arbor);
    let began = std::time::Instant::now();
    let report = arbor.ingest(&chain, lumen_event("Lumen sprint 2: the API froze on Tuesday")).await.unwrap();
    assert!(
        began.elapsed() < std::time::Duration::from_secs(3),
        "the write waited for the model: {:?}",
        began.elapsed()
    );
    assert_eq!(report.chunks.len(), 1);
    assert!(arbor.reasoner_fallbacks() >= 1, "the late answer was counted as a fallback");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_reasoner_reranks_what_may_leave_and_nothing_else() {
    let server = well_behaved_server().await;
    let arbor = engine(&server);
    let chain = chain(&arbor);
    let mut events: Vec<Event> =
        (0..6).map(|i| lumen_event(&format!("Lumen search release {i}: the ranking team shipped it"))).collect();
    let mut restricted = lumen_event("Lumen search release 9: the Nightshade rollout key stays with the quartermaster");
    restricted.hints.sensitivity = Some(Sensitivity::Restricted);
    events.push(restricted);
    for outcome in arbor.ingest_batch(&chain, events).await.unwrap() {
        outcome.unwrap();
    }
    let mut request = RetrieveRequest::new("which Lumen search release did the ranking team ship?");
    request.include_restricted = true;
    let pack = arbor.retrieve(&chain, &request).await.unwrap();

    let reranked: Vec<usize> = pack.evidence.iter().filter_map(|e| e.scores.model_rank).collect();
    assert!(reranked.len() >= 2, "the model ordered the shareable candidates: {:#?}", pack.evidence);
    assert!(reranked.windows(2).all(|w| w[0] < w[1]), "evidence follows the model's order: {reranked:?}");
    let restricted = pack.evidence.iter().find(|e| e.text.contains("Nightshade"));
    assert!(
        restricted.is_some_and(|e| e.scores.model_rank.is_none()),
        "restricted evidence is found locally, never shown"
    );
    let reranks: Vec<_> = server.requests().into_iter().filter(|r| task(&r.json()) == "rerank").collect();
    assert_eq!(reranks.len(), 1);
    assert!(RESTRICTED_MARKERS.iter().all(|m| !reranks[0].body.contains(m)), "{}", reranks[0].body);
    assert_eq!(arbor.reasoner_fallbacks(), 0);
}

/// A subject key a model makes up never retires anything: the model files both memories under
/// "kofi_languages", and the languages Kofi speaks stay current beside what he is learning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subject_key_the_model_chose_never_retires_a_memory() {
    let server = MockServer::start(|_, path, body| {
        if path.ends_with("/embeddings") {
            return embeddings_reply(body, DIMS);
        }
        if task(body) != "assess" {
            return good_answer(body);
        }
        let reply: Value = serde_json::from_str(&good_answer(body).body).unwrap();
        let mut answer: Value =
            serde_json::from_str(reply["choices"][0]["message"]["content"].as_str().unwrap()).unwrap();
        answer["subject"] = json!("kofi_languages");
        Reply::chat(&answer.to_string())
    })
    .await;
    let arbor = engine(&server);
    let chain = chain(&arbor);
    let first = arbor.ingest(&chain, lumen_event("Kofi speaks Twi and English.")).await.unwrap();
    let first = first.chunks[0].outcome.leaf_id().cloned().unwrap();
    let second = arbor.ingest(&chain, lumen_event("Kofi is learning Portuguese now.")).await.unwrap();
    assert_eq!(second.chunks[0].outcome.label(), "created", "{:?}", second.chunks[0]);
    let pack = arbor.retrieve(&chain, &RetrieveRequest::new("Which languages does Kofi speak?")).await.unwrap();
    let twi = pack.evidence.iter().find(|e| e.text.contains("Twi")).expect("the languages he speaks are still found");
    assert!(
        twi.possibly_outdated_by.is_none() || second.chunks[0].doubted.iter().any(|d| d.leaf_id == first),
        "{twi:?}"
    );
}
