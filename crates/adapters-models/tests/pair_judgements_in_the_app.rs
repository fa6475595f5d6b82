//! The real app with the OpenAI-compatible reasoner judging the pairs its claims found, against
//! a recording mock server: a model that says "keeps" vetoes a rules retirement (both stay
//! current, the older marked), one that says "updates" proves a doubt the rules could not
//! settle (retired by rule `judged`, named in the save's reply), a lone "updates" only marks,
//! a broken answer leaves the rules' decision, and a batch asks no more than its budget. A veto
//! lasts through later doubts and consolidation; the write path's older duplicate judgement
//! ("supersedes") only marks, too.
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

/// A duplicate judgement that the new memory supersedes the first candidate it was shown,
/// confidently; an unusable answer to any request that shows no candidate ids.
fn supersedes_the_first_candidate(body: &Value) -> Reply {
    let input: Value =
        serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or("{}")).unwrap_or_default();
    match input["candidates"][0]["leaf_id"].as_str() {
        Some(first) => {
            Reply::chat(&json!({ "verdict": "supersedes", "leaf_id": first, "confidence": 0.99 }).to_string())
        }
        None => Reply::chat("not json"),
    }
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

/// The veto lasts: a later doubt that replaces the old memory's mark, then a consolidation pass
/// whose rules see a proof and whose model (asked in hindsight) says "supersedes", still leave
/// both memories current.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_veto_outlasts_a_later_doubt_and_a_consolidation_pass() {
    let server = MockServer::start(|_, _, body| {
        if is_pairs(body) {
            let judgements: Vec<Value> =
                labels(body).into_iter().map(|id| json!({ "id": id, "verdict": "keeps", "attribute": null })).collect();
            return Reply::chat(&json!({ "judgements": judgements }).to_string());
        }
        // A judgement in hindsight: the model would retire the first candidate.
        supersedes_the_first_candidate(body)
    })
    .await;
    let arbor = engine(&server, Options::default());
    let porto = save(&arbor, "Maya lives in Porto.").await.chunks[0].outcome.leaf_id().cloned().unwrap();
    let vetoed = save(&arbor, "Maya lives in Amsterdam now.").await;
    assert_eq!(vetoed.chunks[0].doubted[0].reason, "judges_disagree");
    // Another memory that may replace Porto, on other grounds: the doubt mark is now its.
    let later = save(&arbor, "Maya Chen lives in Lisbon.").await;
    assert!(later.chunks[0].doubted.iter().any(|d| d.leaf_id == porto), "{later:?}");

    let namespace = chain(&arbor).namespaces().next().cloned().unwrap();
    let request = arbor_app::ConsolidateRequest::new(vec![(namespace, None)], false);
    let run = arbor.consolidate(&request).await.unwrap();
    let retiring_porto: Vec<_> =
        run.namespaces.iter().flat_map(|p| &p.proposals).filter(|p| p.proposal.retire == porto).collect();
    assert!(retiring_porto.is_empty(), "nothing retires the vetoed memory: {retiring_porto:#?}");
    let pack = arbor.retrieve(&chain(&arbor), &RetrieveRequest::new("Where does Maya live?")).await.unwrap();
    assert!(pack.evidence.iter().any(|e| e.text.contains("Porto")), "still found: {:#?}", pack.evidence);
}

/// The older duplicate judgement at write time ("does this repeat or replace a memory of its
/// tree?") proves nothing by itself either: a confident "supersedes" keeps both current and
/// marks the old one, as a doubt the reply names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_replaces_at_write_time_marks_and_never_retires() {
    let server = MockServer::start(|_, _, body| supersedes_the_first_candidate(body)).await;
    let arbor = engine(&server, Options::default());
    let first = save(&arbor, "The Helix pipeline runs nightly builds for the mobile app.").await;
    let first = first.chunks[0].outcome.leaf_id().cloned().unwrap();
    let report = save(&arbor, "The Helix pipeline runs continuous builds for the mobile app these days.").await;
    let chunk = &report.chunks[0];
    assert_eq!(chunk.outcome.label(), "created", "{chunk:?}");
    assert!(chunk.replaced.is_empty(), "{chunk:?}");
    let doubt = chunk.doubted.iter().find(|d| d.leaf_id == first).expect("the old memory is marked");
    assert_eq!((doubt.attribute.as_str(), doubt.reason), ("memory", "judged_update"));

    let pack = arbor.retrieve(&chain(&arbor), &RetrieveRequest::new("How often does the Helix pipeline build?")).await;
    let pack = pack.unwrap();
    let old = pack.evidence.iter().find(|e| e.text.contains("nightly")).expect("the old memory is still found");
    assert!(old.possibly_outdated_by.is_some(), "and shown marked: {old:?}");
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
