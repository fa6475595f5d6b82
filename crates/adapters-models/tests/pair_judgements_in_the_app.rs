//! The real app with the OpenAI-compatible reasoner judging the pairs its claims found, against
//! a recording mock server: a model that says "keeps" vetoes a rules retirement (both stay
//! current, the older marked), one that says "updates" proves a doubt the rules could not
//! settle (retired by rule `judged`, named in the save's reply), a lone "updates" only marks,
//! a broken answer leaves the rules' decision, and a batch asks no more than its budget.
#![cfg(feature = "openai")]

mod support;

use std::sync::Arc;

use arbor_adapters_models::{JsonOutput, OpenAiReasoner};
use arbor_app::{Arbor, IngestReport, Options, Policy, Ports, RetrieveRequest};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use serde_json::{Value, json};
use support::{MockServer, Reply, endpoint};

fn engine(server: &MockServer, options: Options) -> Arbor {
    let mut ports = Ports::in_memory();
    ports.reasoner = Arc::new(OpenAiReasoner::new(endpoint(server), JsonOutput::Schema).unwrap());
    Arbor::new(ports, Policy::default(), options)
}

fn chain(arbor: &Arbor) -> ReadChain {
    arbor.read_chain(&TrustedContext::Project { project: ScopeId::parse("home").unwrap() }).unwrap()
}

fn is_pairs(body: &Value) -> bool {
    body["messages"][0]["content"].as_str().unwrap_or_default().contains("just said")
}

/// The candidate labels a pair request shows.
fn labels(body: &Value) -> Vec<String> {
    let input: Value =
        serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or("{}")).unwrap_or_default();
    input["candidates"].as_array().into_iter().flatten().filter_map(|c| c["id"].as_str().map(str::to_owned)).collect()
}

/// A server that gives `verdict` (with `attribute`) on every pair it is shown, and an unusable
/// answer to everything else (so the deterministic reasoner assesses and the test is about
/// pairs alone).
async fn judge(verdict: &'static str, attribute: Option<&'static str>) -> MockServer {
    MockServer::start(move |_, _, body| {
        if !is_pairs(body) {
            return Reply::chat("not json");
        }
        let judgements: Vec<Value> = labels(body)
            .into_iter()
            .map(|id| json!({ "id": id, "verdict": verdict, "attribute": attribute }))
            .collect();
        Reply::chat(&json!({ "judgements": judgements }).to_string())
    })
    .await
}

async fn save(arbor: &Arbor, text: &str) -> IngestReport {
    arbor.ingest(&chain(arbor), Event::user_message(text)).await.unwrap()
}

fn pair_requests(server: &MockServer) -> usize {
    server.requests().iter().filter(|r| r.path.ends_with("/chat/completions") && is_pairs(&r.json())).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_keeps_both_vetoes_the_rules_retirement() {
    let server = judge("keeps", None).await;
    let arbor = engine(&server, Options::default());
    save(&arbor, "Maya lives in Porto.").await;
    let report = save(&arbor, "Maya lives in Amsterdam now.").await;
    let chunk = &report.chunks[0];
    assert!(chunk.replaced.is_empty(), "the veto retires nothing: {:?}", chunk.replaced);
    assert_eq!(chunk.doubted.len(), 1, "the old memory is marked instead");
    assert_eq!(chunk.doubted[0].reason, "judges_disagree");
    assert_eq!(pair_requests(&server), 1, "the pair was shown once");

    let pack = arbor.retrieve(&chain(&arbor), &RetrieveRequest::new("Where does Maya live?")).await.unwrap();
    let porto = pack.evidence.iter().find(|e| e.text.contains("Porto")).expect("the old memory is still found");
    assert!(porto.possibly_outdated_by.is_some(), "and shown marked: {porto:?}");
    assert!(pack.evidence.iter().any(|e| e.text.contains("Amsterdam")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_proves_a_doubt_on_a_one_valued_attribute_and_the_reply_says_so() {
    let server = judge("updates", Some("residence")).await;
    let arbor = engine(&server, Options::default());
    save(&arbor, "Maya lives in Porto.").await;
    let report = save(&arbor, "Maya Chen lives in Amsterdam now.").await;
    let chunk = &report.chunks[0];
    assert_eq!(chunk.replaced.len(), 1, "retired on the model's word: {chunk:?}");
    assert_eq!((chunk.replaced[0].rule, chunk.replaced[0].attribute.as_str()), ("judged", "residence"));

    let pack = arbor.retrieve(&chain(&arbor), &RetrieveRequest::new("Where does Maya live?")).await.unwrap();
    assert!(pack.evidence.iter().all(|e| !e.text.contains("Porto")), "the old address is no longer current");
    let retired = arbor.retired(&chain(&arbor), None, 50).await.unwrap();
    assert!(retired.iter().any(|r| r.rule == "judged"), "review retired lists it, to undo: {retired:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_update_verdict_marks_and_never_retires() {
    let server = judge("updates", Some("instrument")).await;
    let arbor = engine(&server, Options::default());
    save(&arbor, "Jonah plays bass in a jazz trio.").await;
    let report = save(&arbor, "Jonah moved the trio rehearsals to Wednesdays.").await;
    assert!(report.chunks[0].replaced.is_empty(), "{:?}", report.chunks[0]);
    let pack = arbor.retrieve(&chain(&arbor), &RetrieveRequest::new("What instrument does Jonah play?")).await.unwrap();
    assert!(pack.evidence.iter().any(|e| e.text.contains("bass")), "the bass is still found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_answer_leaves_the_rules_decision() {
    let server = MockServer::start(|_, _, body| {
        if is_pairs(body) {
            // A label it was not shown.
            return Reply::chat(
                &json!({ "judgements": [{ "id": "c9", "verdict": "keeps", "attribute": null }] }).to_string(),
            );
        }
        Reply::chat("not json")
    })
    .await;
    let arbor = engine(&server, Options::default());
    save(&arbor, "Maya lives in Porto.").await;
    let report = save(&arbor, "Maya lives in Amsterdam now.").await;
    assert_eq!(report.chunks[0].replaced.len(), 1, "the rules retire the move as without a model");
    assert_eq!(report.chunks[0].replaced[0].rule, "one_value");
    assert!(arbor.reasoner_fallbacks() > 0, "and the fallback is counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_asks_no_more_than_its_budget() {
    for (budget, asked) in [(32, 2), (1, 1)] {
        let server = judge("keeps", None).await;
        let arbor = engine(&server, Options { pair_judgements_per_batch: budget, ..Options::default() });
        let olds = ["Maya lives in Porto.", "Kofi lives in Accra."].map(Event::user_message).to_vec();
        arbor.ingest_batch(&chain(&arbor), olds).await.unwrap();
        let moves = ["Maya lives in Amsterdam now.", "Kofi lives in Kumasi now."].map(Event::user_message).to_vec();
        let results = arbor.ingest_batch(&chain(&arbor), moves).await.unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(pair_requests(&server), asked, "budget {budget}: then the rules alone");
    }
}
