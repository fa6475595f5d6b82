//! End-to-end scenarios of the app over the in-memory reference adapters: ingest, seal,
//! retrieve, supersede, forget.

mod common;

use arbor_app::{IngestOutcome, RetrieveMode, RetrieveRequest};
use arbor_domain::admission::AdmissionRefusal;
use arbor_domain::lifecycle::LeafStatus;
use arbor_ports::{BodyStore, MetadataStore, SearchIndex};
use common::{conversation_chain, harness, message, message_at};

#[tokio::test]
async fn a_conversation_becomes_a_sealed_tree_and_answers_questions() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", Some("p1"));
    let lines = [
        "Dana prefers morning meetings before 10am.",
        "Dana is leading the migration to Postgres.",
        "The team decided to ship the beta on 12 June.",
        "I live in Lisbon now.",
        "My favorite color is green.",
        "Dana has a dog called Miso.",
        "We agreed to use Rust for the ingest service.",
        "Dana wants weekly status notes on Fridays.",
        "The staging cluster runs in Frankfurt.",
        "I moved to Lisbon from Berlin last year.",
        "The quarterly review is on the first Monday of July.",
        "Our CI runs on two cores, so builds are slow.",
        "The design doc lives in the shared drive under specs.",
        "We keep release notes in the changelog file.",
    ];
    for (i, line) in lines.iter().enumerate() {
        h.clock.advance_seconds(60);
        let report = h.arbor.ingest(&chain, message(line, &format!("m{i}"))).await.unwrap();
        assert_eq!(report.chunks.len(), 1);
    }
    let jobs = h.arbor.run_jobs(None).await.unwrap();
    assert_eq!(jobs.failed, 0, "{jobs:?}");
    assert!(jobs.summaries_sealed >= 1, "a full buffer was sealed: {jobs:?}");
    assert!(jobs.roots_refreshed >= 1);

    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when does Dana like meetings?")).await.unwrap();
    assert_eq!(pack.intent.mode, RetrieveMode::ExactEvidence);
    assert!(pack.evidence[0].text.contains("morning meetings"), "{:#?}", pack.evidence);
    insta::assert_json_snapshot!("dana_meetings_pack", pack);

    let broad = h.arbor.retrieve(&chain, &RetrieveRequest::new("tell me about Dana")).await.unwrap();
    assert_eq!(broad.intent.mode, RetrieveMode::BroadSummary);
    assert!(broad.evidence.iter().any(|e| e.node == arbor_domain::visibility::NodeKind::Summary), "{broad:#?}");
}

/// Fourteen statements of a small team's conversation, a minute apart, sealed.
async fn team_conversation(h: &common::Harness, chain: &arbor_domain::read_chain::ReadChain) {
    let lines = [
        "Dana prefers morning meetings before 10am.",
        "Dana is leading the migration to Postgres.",
        "The team decided to ship the beta on 12 June.",
        "Dana has a dog called Miso.",
        "We agreed to use Rust for the ingest service.",
        "Dana wants weekly status notes on Fridays.",
        "The staging cluster runs in Frankfurt.",
        "I moved to Lisbon from Berlin last year.",
        "Our CI runs on two cores, so builds are slow.",
    ];
    for (i, line) in lines.iter().enumerate() {
        h.clock.advance_seconds(60);
        h.arbor.ingest(chain, message(line, &format!("m{i}"))).await.unwrap();
    }
    assert_eq!(h.arbor.run_jobs(None).await.unwrap().failed, 0);
}

/// A question memory knows nothing about is answered "nothing relevant", not with whatever lies
/// closest; one it knows about gets each memory once, with its date, id, version and why, in a
/// few lines a model reads, within the tokens it is given.
#[tokio::test]
async fn unrelated_questions_find_nothing_relevant_and_the_compact_pack_is_small() {
    use arbor_app::{Answer, CompactOptions, estimated_tokens};
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", Some("p1"));
    team_conversation(&h, &chain).await;

    for question in ["What is the capital of France?", "How tall is Mount Everest?"] {
        let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new(question)).await.unwrap();
        assert_eq!((pack.answer, pack.evidence.len()), (Answer::NothingRelevant, 0), "{question}: {pack:#?}");
        assert!(pack.degraded.is_empty(), "nothing failed: {:?}", pack.degraded);
        assert_eq!(pack.compact(CompactOptions::default()).render(), "Nothing relevant in memory for this question.\n");
        // Without the floor, the nearest memories would have been offered as an answer.
        let mut unfloored = RetrieveRequest::new(question);
        unfloored.relevance_floor = false;
        assert!(!h.arbor.retrieve(&chain, &unfloored).await.unwrap().evidence.is_empty(), "{question}");
    }

    // A time window is something memory knows about: what lies in it bears on the question,
    // whatever the words.
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("What did we talk about today?")).await.unwrap();
    assert_eq!(pack.answer, Answer::Found, "{pack:#?}");
    assert!(pack.evidence.len() >= 3, "{pack:#?}");

    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when does Dana like meetings?")).await.unwrap();
    assert_eq!(pack.answer, Answer::Found);
    let compact = pack.compact(CompactOptions::default());
    let text = compact.render();
    assert!(text.lines().nth(1).unwrap().contains("morning meetings"), "{text}");
    insta::assert_snapshot!("dana_meetings_compact", text);
    insta::assert_json_snapshot!("dana_meetings_compact_json", compact);

    // A budget of tokens keeps the best memories and counts the rest.
    let tight = pack.compact(CompactOptions { max_tokens: Some(60), include_skipped: false });
    let rendered = tight.render();
    assert!(estimated_tokens(&rendered) <= 60 + 20, "{rendered}");
    assert!(!tight.memories.is_empty() && tight.memories.len() < compact.memories.len(), "{rendered}");
    assert_eq!(tight.more, compact.more + compact.memories.len() - tight.memories.len());
    assert!(rendered.contains("left out by the budget"), "{rendered}");

    // Too small a budget is not "nothing relevant": memory holds an answer that did not fit.
    let mut starved = RetrieveRequest::new("when does Dana like meetings?");
    starved.max_chars = Some(10);
    let pack = h.arbor.retrieve(&chain, &starved).await.unwrap();
    assert_eq!((pack.answer, pack.evidence.len()), (Answer::Found, 0), "{pack:#?}");
    assert!(pack.gaps.iter().any(|g| g.contains("none fit the budget")), "{:?}", pack.gaps);
}

/// An embedder that fails every call once told to, like a remote model that went down.
#[derive(Debug, Default)]
struct FailingEmbedder {
    inner: arbor_ports::HashingEmbedder,
    down: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl arbor_ports::Embedder for FailingEmbedder {
    fn id(&self) -> arbor_ports::EmbedderId {
        self.inner.id()
    }

    fn locality(&self) -> arbor_ports::Locality {
        self.inner.locality()
    }

    fn is_instant(&self) -> bool {
        self.inner.is_instant()
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        if self.down.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(arbor_ports::Error::Unavailable { backend: "embedder", source: "connection refused".into() });
        }
        self.inner.embed(texts).await
    }
}

/// A channel that fails costs that channel, not the answer, and the pack says so: "found
/// nothing" and "could not look" never read alike.
#[tokio::test]
async fn a_failed_channel_degrades_the_pack_and_says_so() {
    use arbor_app::{Answer, CompactOptions};
    let embedder = std::sync::Arc::new(FailingEmbedder::default());
    let h = common::harness_embedding_with(embedder.clone(), Default::default(), Default::default());
    let chain = conversation_chain(&h.arbor, "c1", None);
    team_conversation(&h, &chain).await;
    embedder.down.store(true, std::sync::atomic::Ordering::SeqCst);

    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when does Dana like meetings?")).await.unwrap();
    assert_eq!(pack.answer, Answer::Found);
    assert!(pack.evidence[0].text.contains("morning meetings"), "full text still answers: {pack:#?}");
    assert_eq!(pack.degraded.len(), 1, "{:?}", pack.degraded);
    assert!(pack.degraded[0].part.starts_with("vector:hashing-v1"), "{:?}", pack.degraded);
    // The cause stays in the server's log: a pack reaches callers who need only the fact.
    assert!(!pack.degraded[0].reason.contains("connection refused"), "{:?}", pack.degraded);
    let nothing = h.arbor.retrieve(&chain, &RetrieveRequest::new("What is the capital of France?")).await.unwrap();
    assert_eq!(nothing.answer, Answer::NothingRelevant);
    let text = nothing.compact(CompactOptions::default()).render();
    assert!(text.starts_with("Retrieval was degraded (vector:hashing-v1"), "{text}");
    assert!(text.contains("Nothing relevant in memory"), "{text}");
}

/// An embedder the engine must treat as a model (it does not say it is instant), recording
/// how many texts each call embeds.
#[derive(Debug, Default)]
struct ModelLikeEmbedder {
    inner: arbor_ports::HashingEmbedder,
    calls: std::sync::Mutex<Vec<usize>>,
}

#[async_trait::async_trait]
impl arbor_ports::Embedder for ModelLikeEmbedder {
    fn id(&self) -> arbor_ports::EmbedderId {
        self.inner.id()
    }

    fn locality(&self) -> arbor_ports::Locality {
        arbor_ports::Locality::Local
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        self.calls.lock().unwrap().push(texts.len());
        self.inner.embed(texts).await
    }
}

/// With a model for an embedder, a write returns once rows, bodies and full text are durable:
/// the memory is found by its words at once, the pack says vectors are pending, and the job
/// runner embeds what many writes left, in batches, after which the memory is found by meaning
/// and the pack says nothing more.
#[tokio::test]
async fn a_write_leaves_its_vectors_to_the_runner_which_embeds_them_in_batches() {
    use arbor_domain::namespace::Namespace;
    use arbor_domain::visibility::VisibilityFilter;
    use arbor_ports::{Clock, Embedder, Embedding, VectorQuery};

    let embedder = std::sync::Arc::new(ModelLikeEmbedder::default());
    let h = common::harness_embedding_with(embedder.clone(), Default::default(), Default::default());
    let chain = conversation_chain(&h.arbor, "c1", None);
    let batch =
        (0..100).map(|i| message(&format!("Crate {i} of the harbour cargo holds {i} lanterns."), &format!("b{i}")));
    h.arbor.ingest_batch(&chain, batch.collect()).await.unwrap();
    for i in 0..30 {
        h.clock.advance_seconds(60);
        h.arbor
            .ingest(&chain, message(&format!("Walrus {i} sings at dawn on pier {i}."), &format!("m{i}")))
            .await
            .unwrap();
    }
    assert!(embedder.calls.lock().unwrap().is_empty(), "no write waited for the model");

    let question = "which walrus sings on pier 7?";
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new(question)).await.unwrap();
    assert!(
        pack.evidence.iter().any(|e| e.text == "Walrus 7 sings at dawn on pier 7."),
        "found by its words: {pack:#?}"
    );
    let pending: Vec<_> = pack.degraded.iter().filter(|d| d.part == "index").collect();
    assert_eq!(pending.len(), 1, "{:?}", pack.degraded);
    assert!(pending[0].reason.contains("by meaning once their vectors are computed"), "{:?}", pending[0]);
    let namespace = Namespace::conversation(common::scope("c1"));
    let by_meaning = || async {
        let values = embedder.inner.embed_one("Walrus 7 sings at dawn on pier 7.");
        let query = VectorQuery {
            filter: VisibilityFilter::current_leaves_of(&namespace, h.clock.now(), false),
            embedding: Embedding { embedder: embedder.id(), values },
            limit: 3,
        };
        h.index.search_vector(&query).await.unwrap()
    };
    assert!(by_meaning().await.is_empty(), "no vector before the runner computes it");
    let calls_before = embedder.calls.lock().unwrap().len();

    let report = h.arbor.run_jobs(None).await.unwrap();
    assert_eq!(report.failed, 0, "{report:?}");
    let calls: Vec<usize> = embedder.calls.lock().unwrap()[calls_before..].to_vec();
    let embedded: usize = calls.iter().sum();
    assert!(embedded >= 130, "every leaf embedded: {calls:?}");
    assert!(calls.iter().all(|n| *n <= 64), "batches of at most 64: {calls:?}");
    assert!(calls.len() * 8 < embedded, "batched, not a call per write: {calls:?}");
    assert!(!by_meaning().await.is_empty(), "found by meaning once embedded");
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new(question)).await.unwrap();
    assert!(pack.degraded.is_empty(), "{:?}", pack.degraded);
    // The question was embedded when first asked; asked again, its vector is remembered.
    assert_eq!(embedder.calls.lock().unwrap().len(), calls_before + calls.len(), "asked again, not embedded again");
    h.arbor.retrieve(&chain, &RetrieveRequest::new("and which walrus sings at dusk?")).await.unwrap();
    assert_eq!(embedder.calls.lock().unwrap().len(), calls_before + calls.len() + 1, "a new question is embedded");
}

#[tokio::test]
async fn a_new_fact_supersedes_the_old_one_and_history_stays_available() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let first = h.arbor.ingest(&chain, message("My favorite color is green.", "m1")).await.unwrap();
    h.clock.advance_seconds(3_600);
    let second = h.arbor.ingest(&chain, message("My favorite color is blue.", "m2")).await.unwrap();
    let old = first.chunks[0].outcome.leaf_id().unwrap().clone();
    match &second.chunks[0].outcome {
        IngestOutcome::Superseding { replaces, status, .. } => {
            assert_eq!(replaces, &old);
            assert_eq!(*status, LeafStatus::Active);
        }
        other => panic!("expected superseding, got {other:?}"),
    }
    // Saying the same thing again is a no-op.
    let again = h.arbor.ingest(&chain, message("my favorite  color is BLUE.", "m3")).await.unwrap();
    assert_eq!(again.chunks[0].outcome.label(), "noop_duplicate");

    let now = h.arbor.retrieve(&chain, &RetrieveRequest::new("favorite color")).await.unwrap();
    let texts: Vec<&str> = now.evidence.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, vec!["My favorite color is blue."], "only the current fact");
    assert_eq!(now.evidence[0].supersedes.as_ref(), Some(&old));
    assert_eq!(now.evidence[0].version, Some(2));

    let mut past = RetrieveRequest::new("favorite color");
    past.as_of = Some(common::start().checked_add(jiff::SignedDuration::from_secs(60)).unwrap());
    let then = h.arbor.retrieve(&chain, &past).await.unwrap();
    let texts: Vec<&str> = then.evidence.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, vec!["My favorite color is green."], "as_of asks for the past");
}

#[tokio::test]
async fn forgetting_leaves_no_text_anywhere() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let needle = "Zanzibar";
    let mut forget_me = None;
    for i in 0..9 {
        h.clock.advance_seconds(10);
        let text = if i == 4 {
            format!("I am planning a trip to {needle} in March.")
        } else {
            format!("Note number {i} about the garden.")
        };
        let report = h.arbor.ingest(&chain, message(&text, &format!("m{i}"))).await.unwrap();
        if i == 4 {
            forget_me = report.chunks[0].outcome.leaf_id().cloned();
        }
    }
    h.arbor.run_jobs(None).await.unwrap();
    let counts = h.store.counts().await.unwrap();
    assert!(counts.summaries_current >= 2, "a sealed summary and a root exist: {counts:?}");
    assert!(h.store.contains_text(needle).await.unwrap(), "summaries quote the leaf before the forget");

    let receipt = h.arbor.forget(&chain, forget_me.as_ref().unwrap()).await.unwrap();
    assert_eq!(receipt.bodies_deleted, 1 + receipt.purged_summaries.len(), "{receipt:?}");
    assert!(!receipt.purged_summaries.is_empty());
    // Immediately: nothing anywhere holds the words.
    assert!(!h.store.contains_text(needle).await.unwrap(), "store");
    assert!(!h.index.contains_text(needle).await.unwrap(), "index");
    assert!(!h.bodies.contains_text(needle).await.unwrap(), "bodies");
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("trip to Zanzibar")).await.unwrap();
    assert!(pack.evidence.iter().all(|e| !e.text.contains(needle)));

    // The jobs re-seal the tree without it; still nothing holds the words.
    let jobs = h.arbor.run_jobs(None).await.unwrap();
    assert_eq!(jobs.failed, 0);
    assert!(jobs.summaries_resealed >= 1, "{jobs:?}");
    let counts = h.store.counts().await.unwrap();
    assert_eq!((counts.summaries_stale, counts.summaries_purged), (0, 0), "{counts:?}");
    assert!(!h.store.contains_text(needle).await.unwrap());
    assert!(!h.bodies.contains_text(needle).await.unwrap());
    // Forgetting again is refused clearly, and a leaf outside the chain is simply not found.
    let again = h.arbor.forget(&chain, forget_me.as_ref().unwrap()).await.unwrap_err();
    assert_eq!(again.to_string(), "the memory was already forgotten");
    let elsewhere = conversation_chain(&h.arbor, "c2", None);
    let hidden = h.arbor.forget(&elsewhere, &receipt.leaf_id).await.unwrap_err();
    assert!(hidden.is_not_found());
}

#[tokio::test]
async fn conversations_never_read_each_other() {
    let h = harness();
    let a = conversation_chain(&h.arbor, "alice-chat", Some("shared"));
    let b = conversation_chain(&h.arbor, "bob-chat", Some("shared"));
    h.arbor.ingest(&a, message("Alice's locker code hint is the blue door.", "m1")).await.unwrap();
    h.arbor.ingest(&b, message("Bob keeps his bike by the blue door.", "m2")).await.unwrap();
    h.arbor.run_jobs(None).await.unwrap();
    for (chain, own) in [(&a, "Alice"), (&b, "Bob")] {
        let pack = h.arbor.retrieve(chain, &RetrieveRequest::new("blue door")).await.unwrap();
        assert_eq!(pack.evidence.len(), 1, "{pack:#?}");
        assert!(pack.evidence[0].text.starts_with(own));
    }
}

#[tokio::test]
async fn candidates_never_reach_retrieval() {
    let h = harness();
    let project = h
        .arbor
        .read_chain(&arbor_domain::read_chain::TrustedContext::Project { project: common::scope("p1") })
        .unwrap();
    // Inferred memories in a project need confirmation: they land as candidates.
    let report = h.arbor.ingest(&project, message("The deploy window is Tuesday night.", "m1")).await.unwrap();
    assert!(matches!(report.chunks[0].outcome, IngestOutcome::Created { status: LeafStatus::Candidate, .. }));
    h.arbor.run_jobs(None).await.unwrap();
    let pack = h.arbor.retrieve(&project, &RetrieveRequest::new("deploy window")).await.unwrap();
    assert!(pack.evidence.is_empty(), "{pack:#?}");
    assert_eq!(h.store.counts().await.unwrap().summaries_current, 0, "candidates are not summarized");

    // The positive control: the same question finds it once a person confirms it, so the empty
    // pack above was the candidate rule and not a question that finds nothing.
    let id = report.chunks[0].outcome.leaf_id().unwrap().clone();
    h.arbor.confirm(&project, &id).await.unwrap();
    let pack = h.arbor.retrieve(&project, &RetrieveRequest::new("deploy window")).await.unwrap();
    assert_eq!(pack.evidence.iter().map(|e| e.node_id.to_string()).collect::<Vec<_>>(), vec![id.to_string()]);
}

/// With a model for an embedder, a person's decision about a node the index already holds (a
/// candidate confirmed) reaches the index with the decision, not once the job runner next
/// runs: only new nodes' vectors wait, never the facts that decide what may be seen.
#[tokio::test]
async fn a_confirmed_candidate_is_found_at_once_with_a_model_embedder() {
    let embedder = std::sync::Arc::new(ModelLikeEmbedder::default());
    let h = common::harness_embedding_with(embedder, Default::default(), Default::default());
    let project = h
        .arbor
        .read_chain(&arbor_domain::read_chain::TrustedContext::Project { project: common::scope("p1") })
        .unwrap();
    let report = h.arbor.ingest(&project, message("The deploy window is Tuesday night.", "m1")).await.unwrap();
    h.arbor.run_jobs(None).await.unwrap();
    let id = report.chunks[0].outcome.leaf_id().unwrap().clone();
    h.arbor.confirm(&project, &id).await.unwrap();
    let pack = h.arbor.retrieve(&project, &RetrieveRequest::new("deploy window")).await.unwrap();
    assert_eq!(pack.evidence.iter().map(|e| e.node_id.to_string()).collect::<Vec<_>>(), vec![id.to_string()]);
}

#[tokio::test]
async fn secrets_and_bad_events_are_refused_without_a_trace() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let report = h.arbor.ingest(&chain, message("my password is hunter22", "m1")).await.unwrap();
    match &report.chunks[0].outcome {
        IngestOutcome::NotAdmitted { refusal } => {
            assert!(matches!(refusal, AdmissionRefusal::Secret { .. }), "{refusal}");
            assert!(refusal.to_string().contains("password"), "{refusal}");
        }
        other => panic!("a password was admitted: {other:?}"),
    }
    let empty = h.arbor.ingest(&chain, message("   ", "m2")).await.unwrap_err();
    assert_eq!(empty.to_string(), "invalid event: field `text` is empty");
    assert!(h.bodies.list("memory/").await.unwrap().is_empty());
    assert!(!h.store.contains_text("hunter22").await.unwrap());
    assert_eq!(h.index.count().await.unwrap(), 0);
}

/// A week of notes, one a day (oldest first), each observed on its day; the clock ends on the
/// last day.
async fn a_week_of_notes(h: &common::Harness, chain: &arbor_domain::read_chain::ReadChain) {
    let notes = [
        "We moved the office to the harbour building.",
        "The garden project got a new budget for seeds.",
        "Kai reviewed the garden irrigation design.",
        "The garden irrigation pump was ordered.",
        "Lena planted tomatoes in the garden beds.",
        "The garden irrigation pump arrived broken.",
        "Kai returned the garden irrigation pump.",
    ];
    for (day, text) in notes.iter().enumerate() {
        if day > 0 {
            h.clock.advance_seconds(24 * 3600);
        }
        let mut event = message(text, &format!("d{day}"));
        event.observed_at =
            Some(common::start().checked_add(jiff::SignedDuration::from_hours(24 * day as i64)).unwrap());
        h.arbor.ingest(chain, event).await.unwrap();
    }
    h.arbor.run_jobs(None).await.unwrap();
}

fn sources(pack: &arbor_app::RetrievalPack) -> Vec<String> {
    pack.evidence.iter().filter_map(|e| e.source.clone()).collect()
}

/// "Last night", said on 4 May, is about 3 May: a question about 3 May finds it though it was
/// observed the next day (and says why), and never what another conversation said of that day.
#[tokio::test]
async fn a_question_about_a_day_finds_the_memory_that_mentions_it() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let other = conversation_chain(&h.arbor, "c2", None);
    let at = |text: &str| -> arbor_domain::time::Timestamp { text.parse().unwrap() };
    let said = message_at;
    h.arbor
        .ingest(&chain, said("We cooked lasagna for dinner with Ana last night.", "m1", "2023-05-04T10:00:00Z"))
        .await
        .unwrap();
    h.arbor.ingest(&chain, said("The canteen served fish soup.", "m2", "2023-05-03T12:00:00Z")).await.unwrap();
    h.arbor.ingest(&chain, said("We planted tomatoes in the garden.", "m3", "2023-05-20T12:00:00Z")).await.unwrap();
    h.arbor
        .ingest(&other, said("We cooked dinner with grandma last night.", "x1", "2023-05-04T10:00:00Z"))
        .await
        .unwrap();
    assert_eq!(h.arbor.run_jobs(None).await.unwrap().failed, 0);

    let mut request = RetrieveRequest::new("Who did I have dinner with on May 3, 2023?");
    request.as_of = Some(at("2023-06-01T00:00:00Z"));
    let pack = h.arbor.retrieve(&chain, &request).await.unwrap();
    assert!(pack.understood.time.as_ref().is_some_and(|t| t.applied), "{:?}", pack.understood);
    let mentioned = pack.evidence.iter().find(|e| e.source.as_deref() == Some("message:m1"));
    let mentioned = mentioned.unwrap_or_else(|| panic!("the mention of 3 May is found: {:?}", sources(&pack)));
    assert!(mentioned.scores.time_rank.is_some(), "{:?}", mentioned.scores);
    assert!(mentioned.why.contains("mentions the time asked about"), "{}", mentioned.why);
    // Outside the window and mentioning nothing in it: not found.
    assert!(!sources(&pack).contains(&"message:m3".to_owned()), "{:?}", sources(&pack));
    assert!(!sources(&pack).contains(&"message:x1".to_owned()), "another conversation: {:?}", sources(&pack));

    // A window the caller sets means when memories were observed, and is not widened by mentions.
    let mut requested = RetrieveRequest::new("what did we have for dinner or at the canteen?");
    requested.time_range = Some((Some(at("2023-05-03T00:00:00Z")), Some(at("2023-05-03T23:59:59Z"))));
    let pack = h.arbor.retrieve(&chain, &requested).await.unwrap();
    assert_eq!(sources(&pack), ["message:m2"]);
}

#[tokio::test]
async fn a_month_without_a_year_is_the_latest_one_the_conversation_holds() {
    // The clock reads May 2026; the conversation ended in 2023. "In July" is July 2023, the
    // latest July it can say anything about, read from its own memories only: another
    // conversation's newer memories neither move the window nor show.
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let other = conversation_chain(&h.arbor, "c2", None);
    let said = message_at;
    h.arbor
        .ingest(&chain, said("We went camping by the lake with the kids.", "m1", "2023-07-09T10:00:00Z"))
        .await
        .unwrap();
    h.arbor.ingest(&chain, said("We went camping in the snow, freezing.", "m2", "2023-02-11T10:00:00Z")).await.unwrap();
    h.arbor.ingest(&chain, said("Painted the fence blue.", "m3", "2023-10-20T10:00:00Z")).await.unwrap();
    h.arbor.ingest(&other, said("We went camping in the desert.", "x1", "2025-07-12T10:00:00Z")).await.unwrap();
    assert_eq!(h.arbor.run_jobs(None).await.unwrap().failed, 0);

    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("When did we go camping in July?")).await.unwrap();
    let time = pack.understood.time.as_ref().expect("the question names a time");
    assert!(time.applied, "{time:?}");
    assert_eq!(time.range.describe(), "2023-07-01..2023-08-01");
    assert_eq!(sources(&pack), ["message:m1"]);
}

#[tokio::test]
async fn time_in_the_question_narrows_the_evidence_relative_to_as_of() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    a_week_of_notes(&h, &chain).await;
    let day = |n: i64| common::start().checked_add(jiff::SignedDuration::from_hours(24 * n)).unwrap();

    // Without a time, every garden note competes.
    let all = h.arbor.retrieve(&chain, &RetrieveRequest::new("garden irrigation pump")).await.unwrap();
    assert!(all.understood.time.is_none());
    assert!(sources(&all).contains(&"message:d2".to_owned()), "{:?}", sources(&all));

    // "in the last 2 days", asked on day 6 at noon: days 4 and 5 (and 6 itself) only.
    let mut recent = RetrieveRequest::new("garden irrigation pump in the last 2 days");
    recent.as_of = Some(day(6).checked_add(jiff::SignedDuration::from_hours(12)).unwrap());
    let pack = h.arbor.retrieve(&chain, &recent).await.unwrap();
    let time = pack.understood.time.as_ref().expect("a time was read");
    assert_eq!((time.phrase.as_str(), time.applied), ("in the last 2 days", true));
    assert!(!pack.evidence.is_empty());
    assert!(pack.evidence.iter().all(|e| e.observed_at >= day(4)), "{:?}", sources(&pack));

    // "before the move" is placed at the note about the move (day 0): nothing lies before it,
    // so the search widens and the pack says so.
    let before =
        h.arbor.retrieve(&chain, &RetrieveRequest::new("garden budget before we moved the office")).await.unwrap();
    let time = before.understood.time.as_ref().expect("an event was placed");
    assert!(!time.applied, "nothing is older than the move");
    assert!(before.gaps.iter().any(|g| g.contains("the evidence is from any time")), "{:?}", before.gaps);
    assert!(!before.evidence.is_empty());

    // "after the pump was ordered" keeps only what came after day 3.
    let after =
        h.arbor.retrieve(&chain, &RetrieveRequest::new("irrigation pump after the pump was ordered")).await.unwrap();
    assert!(after.understood.time.as_ref().is_some_and(|t| t.applied));
    assert!(!after.evidence.is_empty());
    assert!(after.evidence.iter().all(|e| e.observed_at >= day(3)), "{:?}", sources(&after));

    // A time the caller passes is never widened, even when nothing lies in it.
    let mut empty = RetrieveRequest::new("garden");
    empty.time_range = Some((Some(day(30)), None));
    let pack = h.arbor.retrieve(&chain, &empty).await.unwrap();
    assert!(pack.evidence.is_empty());
    assert!(pack.understood.time.as_ref().is_some_and(|t| t.phrase == "requested" && t.applied));
}

#[tokio::test]
async fn a_recorded_retrieval_explains_itself_inside_its_scope_only() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    a_week_of_notes(&h, &chain).await;
    let mut request = RetrieveRequest::new("what happened to the irrigation pump?");
    request.record = true;
    let pack = h.arbor.retrieve(&chain, &request).await.unwrap();
    let id = pack.retrieval_id.clone().expect("recorded");
    let explained = h.arbor.show_retrieval(&chain, &id).await.unwrap().expect("readable by its caller");
    let snapshot = &explained.snapshot;
    assert_eq!(snapshot.query, request.query);
    let selected: Vec<_> = snapshot
        .considered
        .iter()
        .filter(|c| c.outcome == arbor_ports::CandidateOutcome::Selected)
        .map(|c| c.node.clone())
        .collect();
    assert_eq!(selected, pack.evidence.iter().map(|e| e.node_id.clone()).collect::<Vec<_>>());
    let access = h.store.access_records(&[chain.layers()[0].namespace.clone()], &selected[0], 5).await.unwrap();
    assert!(access.len() == 1 && access[0].entered_context && access[0].retrieval == id);
    insta::assert_json_snapshot!("recorded_retrieval", explained);

    // Another conversation cannot read it, and cannot tell it exists.
    let other = conversation_chain(&h.arbor, "c2", None);
    assert!(h.arbor.show_retrieval(&other, &id).await.unwrap().is_none());
}

#[tokio::test]
async fn a_preference_question_gets_a_channel_over_preferences_and_constraints() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    for (i, line) in
        ["Dana prefers tea over coffee.", "Dana drank coffee at the offsite.", "Dana must not get coffee after 4pm."]
            .iter()
            .enumerate()
    {
        h.arbor.ingest(&chain, message(line, &format!("m{i}"))).await.unwrap();
    }
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("does Dana like coffee?")).await.unwrap();
    assert_eq!(pack.intent.focus, arbor_ports::QueryFocus::PreferenceOrConstraint, "{:?}", pack.intent);
    let by_kind: Vec<_> = pack.evidence.iter().filter(|e| e.scores.kind_rank.is_some()).collect();
    assert!(!by_kind.is_empty(), "{:#?}", pack.evidence);
    assert!(by_kind.iter().all(|e| matches!(
        e.kind,
        Some(arbor_domain::model::MemoryKind::Preference | arbor_domain::model::MemoryKind::Constraint)
    )));
    assert!(
        pack.evidence[0].scores.kind_rank.is_some(),
        "a preference or constraint comes first: {:#?}",
        pack.evidence
    );
}

/// A constraint a newer memory may have replaced is still listed among the pack's constraints,
/// marked, not dropped: following a rule that may no longer hold costs less than forgetting one.
#[tokio::test]
async fn a_constraint_that_may_be_outdated_stays_among_the_constraints_marked() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    for (i, line) in
        ["Maya is allergic to tree nuts and must never eat them.", "Maya is no longer allergic to tree nuts."]
            .iter()
            .enumerate()
    {
        h.clock.advance_seconds(60);
        h.arbor.ingest(&chain, message(line, &format!("m{i}"))).await.unwrap();
    }
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("Can Maya eat tree nuts?")).await.unwrap();
    let old = pack.evidence.iter().find(|e| e.text.contains("must never")).expect("found");
    assert_eq!(old.kind, Some(arbor_domain::model::MemoryKind::Constraint), "{old:?}");
    assert!(old.possibly_outdated_by.is_some(), "the test is about a doubted constraint: {old:?}");
    assert!(
        pack.constraints.iter().any(|c| c.ends_with("(may be outdated)")),
        "listed, marked: {:?}",
        pack.constraints
    );
}

#[tokio::test]
async fn a_correction_is_a_new_version_bound_to_the_version_the_caller_saw() {
    use arbor_app::{AppError, Correction};
    use arbor_domain::id::Version;
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", Some("p1"));
    let saved = h.arbor.ingest(&chain, message("Dana's birthday is on May 3.", "m1")).await.unwrap();
    let first = saved.chunks[0].outcome.leaf_id().unwrap().clone();
    h.clock.advance_seconds(60);
    let fix = |id: &arbor_domain::id::LeafId, version: u32, text: &str| {
        Correction::by_person(id.clone(), Version::new(version).unwrap(), text)
    };
    let receipt = h.arbor.correct(&chain, &fix(&first, 1, "Dana's birthday is on May 13.")).await.unwrap();
    assert_eq!((receipt.version, receipt.replaced_version), (2, 1));
    assert_eq!(receipt.replaces, first);

    // Whoever still holds version 1 is told it is stale, and nothing is written.
    let stale = h.arbor.correct(&chain, &fix(&first, 1, "Dana's birthday is on May 30.")).await.unwrap_err();
    assert_eq!(stale.code(), "stale_version", "{stale}");
    assert!(stale.to_string().contains(&receipt.leaf_id.to_string()), "names the current version: {stale}");
    let wrong = h.arbor.correct(&chain, &fix(&receipt.leaf_id, 1, "Dana's birthday is on May 30.")).await.unwrap_err();
    assert_eq!(wrong.code(), "stale_version", "{wrong}");

    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("when is Dana's birthday?")).await.unwrap();
    let texts: Vec<&str> = pack.evidence.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, vec!["Dana's birthday is on May 13."], "only the corrected version is current");
    assert_eq!(pack.evidence[0].version, Some(2));

    // A correction that repeats what the memory (or another of its tree) says changes nothing.
    let same = h.arbor.correct(&chain, &fix(&receipt.leaf_id, 2, "Dana's birthday is on May 13.")).await.unwrap_err();
    assert!(matches!(same, AppError::Correction(_)) && same.to_string().contains("nothing to correct"), "{same}");

    // Another conversation cannot correct it and learns nothing about it.
    let stranger = conversation_chain(&h.arbor, "c2", Some("p2"));
    let hidden = h.arbor.correct(&stranger, &fix(&receipt.leaf_id, 2, "It is in June.")).await.unwrap_err();
    let missing_id = arbor_domain::id::LeafId::parse("leaf-01JZ0000000000000000000009").unwrap();
    let missing = h.arbor.correct(&stranger, &fix(&missing_id, 2, "It is in June.")).await.unwrap_err();
    assert!(hidden.is_not_found() && missing.is_not_found());
    assert_eq!(
        hidden.to_string().replace(&receipt.leaf_id.to_string(), "ID"),
        missing.to_string().replace(&missing_id.to_string(), "ID")
    );

    // A correction is admitted like any write: no secrets slipped in as a "fix".
    let mut agent_fix = fix(&receipt.leaf_id, 2, "Dana's birthday is May 13; her password is hunter2");
    agent_fix.source = arbor_domain::model::SourceRef::Import { origin: "test".into() };
    let secret = h.arbor.correct(&chain, &agent_fix).await.unwrap_err();
    assert!(secret.to_string().contains("refused"), "{secret}");

    // A project memory is read-only to a conversation of that project.
    let project = h
        .arbor
        .read_chain(&arbor_domain::read_chain::TrustedContext::Project {
            project: arbor_domain::id::ScopeId::parse("p1").unwrap(),
        })
        .unwrap();
    // Typed in by a person, so active (an inferred project memory would wait as a candidate,
    // which a conversation cannot even see).
    let shared = h
        .arbor
        .ingest(&project, arbor_domain::event::Event::user_message("The release train leaves on Thursdays."))
        .await
        .unwrap();
    assert_eq!(shared.chunks[0].outcome.label(), "created");
    let shared = shared.chunks[0].outcome.leaf_id().unwrap().clone();
    let refused = h.arbor.correct(&chain, &fix(&shared, 1, "The release train leaves on Fridays.")).await.unwrap_err();
    assert!(matches!(refused, AppError::ReadOnlyLayer { .. }), "{refused}");
    let empty = h.arbor.correct(&chain, &fix(&receipt.leaf_id, 2, "")).await.unwrap_err();
    assert_eq!(empty.code(), "invalid");
}

#[tokio::test]
async fn the_catalog_is_one_bounded_line_per_readable_tree() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    for (i, line) in
        ["Dana prefers morning meetings.", "Dana has a dog called Miso.", "The staging cluster runs in Frankfurt."]
            .iter()
            .enumerate()
    {
        h.clock.advance_seconds(60);
        h.arbor.ingest(&chain, message(line, &format!("m{i}"))).await.unwrap();
    }
    let other = conversation_chain(&h.arbor, "c2", None);
    h.arbor.ingest(&other, message("Zed keeps a secret garden.", "z1")).await.unwrap();

    let catalog = h.arbor.catalog(&chain, arbor_app::DEFAULT_CATALOG_CHARS).await.unwrap();
    assert!(!catalog.entries.is_empty());
    assert!(!catalog.text.contains("Zed"), "another conversation's trees are not listed: {}", catalog.text);
    assert!(catalog.text.contains("Dana"), "{}", catalog.text);
    assert_eq!(
        catalog.text,
        h.arbor.catalog(&chain, arbor_app::DEFAULT_CATALOG_CHARS).await.unwrap().text,
        "deterministic"
    );
    let small = h.arbor.catalog(&chain, 10).await.unwrap();
    assert!(small.text.chars().count() <= 10 && small.omitted_trees == catalog.entries.len());
}

#[tokio::test]
async fn candidates_wait_for_a_person_and_a_rejection_is_remembered() {
    use arbor_domain::model::Actor;
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let subject = arbor_domain::model::SubjectKey::parse("favorite color").unwrap();
    let mut stated = message("My favorite color is green.", "m1");
    stated.hints.subject = Some(subject.clone());
    let said = h.arbor.ingest(&chain, stated).await.unwrap();
    let green = said.chunks[0].outcome.leaf_id().unwrap().clone();
    h.clock.advance_seconds(60);
    // The assistant's own statements are candidates: never retrieved until confirmed.
    let mut inferred = message("My favorite color is blue.", "m2");
    inferred.actor = Actor::Assistant;
    inferred.hints.subject = Some(subject);
    let report = h.arbor.ingest(&chain, inferred).await.unwrap();
    let blue = report.chunks[0].outcome.leaf_id().unwrap().clone();
    let mut guess = message("The user probably likes jazz.", "m3");
    guess.actor = Actor::Assistant;
    let jazz = h.arbor.ingest(&chain, guess.clone()).await.unwrap().chunks[0].outcome.leaf_id().unwrap().clone();
    let texts = |pack: &arbor_app::RetrievalPack| pack.evidence.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
    let before = h.arbor.retrieve(&chain, &RetrieveRequest::new("favorite color")).await.unwrap();
    assert_eq!(texts(&before), vec!["My favorite color is green.".to_owned()], "candidates are not retrieved");

    // The queue shows each candidate with what confirming it would replace.
    let pending = h.arbor.pending_review(&chain).await.unwrap();
    let ids: Vec<_> = pending.iter().map(|item| item.leaf.id.clone()).collect();
    assert_eq!(ids, vec![blue.clone(), jazz.clone()]);
    let replaced: Vec<_> = pending[0].would_supersede.iter().map(|l| l.id.clone()).collect();
    assert_eq!(replaced, vec![green.clone()], "the conflict is shown before it is decided");

    h.clock.advance_seconds(60);
    let confirmed = h.arbor.confirm(&chain, &blue).await.unwrap();
    assert_eq!((confirmed.status, confirmed.superseded.clone()), (LeafStatus::Active, vec![green.clone()]));
    let after = h.arbor.retrieve(&chain, &RetrieveRequest::new("favorite color")).await.unwrap();
    assert_eq!(texts(&after), vec!["My favorite color is blue.".to_owned()], "confirmed, and the old fact replaced");

    let rejected = h.arbor.reject(&chain, &jazz).await.unwrap();
    assert_eq!(rejected.status, LeafStatus::Rejected);
    let again = h.arbor.ingest(&chain, guess).await.unwrap();
    assert_eq!(again.chunks[0].outcome.label(), "noop_duplicate", "a rejected suggestion is not proposed again");
    assert!(h.arbor.pending_review(&chain).await.unwrap().is_empty());
    let jazz_pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("jazz")).await.unwrap();
    assert!(jazz_pack.evidence.is_empty(), "{:?}", jazz_pack.evidence);

    // Decisions are for candidates only, and only inside the chain.
    assert_eq!(h.arbor.confirm(&chain, &blue).await.unwrap_err().code(), "illegal_transition");
    assert_eq!(h.arbor.reject(&chain, &green).await.unwrap_err().code(), "illegal_transition");
    let stranger = conversation_chain(&h.arbor, "c2", None);
    assert!(h.arbor.confirm(&stranger, &jazz).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn restoring_an_old_version_makes_a_new_one() {
    use arbor_app::Correction;
    use arbor_domain::id::Version;
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let saved = h.arbor.ingest(&chain, message("The wifi password hint is the dog's name.", "m1")).await.unwrap();
    let first = saved.chunks[0].outcome.leaf_id().unwrap().clone();
    h.clock.advance_seconds(60);
    let correction = Correction::by_person(first.clone(), Version::FIRST, "The wifi password hint is the cat's name.");
    let second = h.arbor.correct(&chain, &correction).await.unwrap();
    h.clock.advance_seconds(60);

    let v2 = Version::new(2).unwrap();
    let restored = h.arbor.restore(&chain, &first, v2).await.unwrap();
    assert_eq!((restored.version, restored.replaces.clone()), (3, second.leaf_id.clone()));
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("wifi password hint")).await.unwrap();
    assert_eq!(pack.evidence[0].text, "The wifi password hint is the dog's name.");
    assert_eq!(pack.evidence[0].version, Some(3));

    // Bound to the current version, like any correction; only history can be restored.
    let stale = h.arbor.restore(&chain, &first, v2).await.unwrap_err();
    assert_eq!(stale.code(), "stale_version", "{stale}");
    let current = h.arbor.restore(&chain, &restored.leaf_id, Version::new(3).unwrap()).await.unwrap_err();
    assert!(current.to_string().contains("only a replaced (superseded) version can be restored"), "{current}");
    let stranger = conversation_chain(&h.arbor, "c2", None);
    assert!(h.arbor.restore(&stranger, &first, Version::new(3).unwrap()).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn promotion_proposes_a_memory_one_layer_up_and_can_be_rolled_back() {
    use arbor_app::Promotion;
    use arbor_domain::id::ScopeId;
    use arbor_domain::model::SourceRef;
    use arbor_domain::read_chain::TrustedContext;
    let h = harness();
    let run = |name: &str| {
        h.arbor
            .read_chain(&TrustedContext::AutomationRun {
                run: ScopeId::parse(name).unwrap(),
                automation: ScopeId::parse("nightly").unwrap(),
                conversation: None,
                project: Some(ScopeId::parse("p1").unwrap()),
            })
            .unwrap()
    };
    let (first_run, second_run) = (run("r1"), run("r2"));
    let learned =
        h.arbor.ingest(&first_run, message("Retry the flaky upload step twice before failing.", "m1")).await.unwrap();
    let original = learned.chunks[0].outcome.leaf_id().unwrap().clone();
    let ask = || RetrieveRequest::new("flaky upload step");
    assert!(h.arbor.retrieve(&second_run, &ask()).await.unwrap().evidence.is_empty(), "runs do not share memory");

    let promotion = Promotion {
        id: original.clone(),
        reason: "worked in three nightly runs".into(),
        evaluation: Some("3/3 green".into()),
        operator: "dana".into(),
    };
    let promoted = h.arbor.promote(&first_run, &promotion).await.unwrap();
    assert_eq!(promoted.namespace.to_string(), "automation:nightly");
    assert_eq!(promoted.status, LeafStatus::Candidate);
    assert!(h.arbor.retrieve(&second_run, &ask()).await.unwrap().evidence.is_empty(), "a candidate until confirmed");
    let again = h.arbor.promote(&first_run, &promotion).await.unwrap_err();
    assert!(again.to_string().contains("already holds this memory"), "{again}");

    h.arbor.confirm(&second_run, &promoted.leaf_id).await.unwrap();
    let shared = h.arbor.retrieve(&second_run, &ask()).await.unwrap();
    assert_eq!(
        shared.evidence[0].node_id.to_string(),
        promoted.leaf_id.to_string(),
        "every run of the automation sees it"
    );
    let row = h
        .arbor
        .ports()
        .store
        .leaf(std::slice::from_ref(&promoted.namespace), &promoted.leaf_id)
        .await
        .unwrap()
        .unwrap();
    match &row.provenance.source {
        SourceRef::Promotion { from, reason, operator, evaluation, .. } => {
            assert_eq!((from, reason.as_str(), operator.as_str()), (&original, "worked in three nightly runs", "dana"));
            assert_eq!(evaluation.as_deref(), Some("3/3 green"));
        }
        other => panic!("provenance should name the promotion, not {other:?}"),
    }
    let kept = h
        .arbor
        .ports()
        .store
        .leaf(std::slice::from_ref(first_run.write_namespace()), &original)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.status, LeafStatus::Active, "the original stays where it was");

    let rolled_back = h.arbor.rollback_promotion(&second_run, &promoted.leaf_id).await.unwrap();
    assert_eq!(rolled_back.status, LeafStatus::Archived);
    assert!(h.arbor.retrieve(&second_run, &ask()).await.unwrap().evidence.is_empty(), "rolled back");
    // An unconfirmed promotion taken back is rejected: it never joins the target tree.
    let mut note = Promotion { id: original.clone(), ..promotion.clone() };
    note.reason = "second try".into();
    let learned2 = h.arbor.ingest(&first_run, message("Pin the base image digest.", "m3")).await.unwrap();
    note.id = learned2.chunks[0].outcome.leaf_id().unwrap().clone();
    let pending = h.arbor.promote(&first_run, &note).await.unwrap();
    let taken_back = h.arbor.rollback_promotion(&first_run, &pending.leaf_id).await.unwrap();
    assert_eq!(taken_back.status, LeafStatus::Rejected);
    let jobs = h.arbor.run_jobs(None).await.unwrap();
    assert_eq!(jobs.failed, 0);
    let tree = h.arbor.ports().store.frontier(&pending.namespace, &pending.tree_id).await.unwrap();
    assert!(tree.iter().all(|n| n.node.to_string() != pending.leaf_id.to_string()), "not a tree member");

    let not_promoted = h.arbor.rollback_promotion(&first_run, &original).await.unwrap_err();
    assert!(not_promoted.to_string().contains("was not promoted"), "{not_promoted}");

    // A conversation's memories have no promotion path; a note is required.
    let chat = conversation_chain(&h.arbor, "c1", Some("p1"));
    let said = h.arbor.ingest(&chat, message("I like short standups.", "m2")).await.unwrap();
    let said = said.chunks[0].outcome.leaf_id().unwrap().clone();
    let refused = h.arbor.promote(&chat, &Promotion { id: said, ..promotion.clone() }).await.unwrap_err();
    assert!(refused.to_string().contains("are not promoted"), "{refused}");
    let unexplained = h.arbor.promote(&first_run, &Promotion { reason: " ".into(), ..promotion }).await.unwrap_err();
    assert!(unexplained.to_string().contains("needs a reason"), "{unexplained}");
}

#[tokio::test]
async fn a_candidate_is_edited_into_a_new_candidate_and_the_original_suggestion_is_rejected() {
    use arbor_domain::model::Actor;
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let mut guess = message("The user likes jazz.", "m1");
    guess.actor = Actor::Assistant;
    let suggested = h.arbor.ingest(&chain, guess.clone()).await.unwrap();
    let suggested = suggested.chunks[0].outcome.leaf_id().unwrap().clone();
    h.clock.advance_seconds(60);

    let edited = h.arbor.edit_candidate(&chain, &suggested, "The user likes jazz and blues.", None).await.unwrap();
    assert_eq!(edited.status, LeafStatus::Candidate);
    let pending: Vec<_> = h.arbor.pending_review(&chain).await.unwrap().into_iter().map(|i| i.leaf).collect();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].id.clone(), pending[0].version.get()), (edited.leaf_id.clone(), 2));
    assert!(h.arbor.retrieve(&chain, &RetrieveRequest::new("jazz")).await.unwrap().evidence.is_empty());

    h.arbor.confirm(&chain, &edited.leaf_id).await.unwrap();
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("jazz")).await.unwrap();
    let texts: Vec<&str> = pack.evidence.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, vec!["The user likes jazz and blues."]);
    let again = h.arbor.ingest(&chain, guess).await.unwrap();
    assert_eq!(again.chunks[0].outcome.label(), "noop_duplicate", "the unedited suggestion was rejected");

    let current = h.arbor.edit_candidate(&chain, &edited.leaf_id, "Something else.", None).await.unwrap_err();
    assert!(current.to_string().contains("only a candidate is edited"), "{current}");
    let stranger = conversation_chain(&h.arbor, "c2", None);
    assert!(h.arbor.edit_candidate(&stranger, &suggested, "x y z", None).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn sensitive_memories_are_flagged_wherever_a_pack_quotes_them() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let mut health = arbor_domain::event::Event::user_message("Dana is allergic to penicillin.");
    health.hints.sensitivity = Some(arbor_domain::sensitivity::Sensitivity::Sensitive);
    let report = h.arbor.ingest(&chain, health).await.unwrap();
    assert_eq!(report.chunks[0].outcome.label(), "created");
    let pack = h.arbor.retrieve(&chain, &RetrieveRequest::new("what is Dana allergic to?")).await.unwrap();
    assert_eq!(pack.evidence[0].sensitivity, arbor_domain::sensitivity::Sensitivity::Sensitive);
    for line in pack.known_facts.iter().chain(&pack.recent) {
        assert!(line.ends_with("(sensitive)"), "{line}");
    }
    assert!(pack.gaps.iter().any(|g| g.contains("sensitive")), "{:?}", pack.gaps);
}

/// A bulk import writes more within the resume margin than one pass reads: the next pass goes
/// on past the mark instead of reading the same page again, and one after it finds nothing.
#[tokio::test]
async fn consolidation_gets_past_a_bulk_import() {
    use arbor_app::ConsolidateRequest;
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let events = (0..14).map(|i| message(&format!("Imported note {i} about crate zq{i}."), &format!("m{i}"))).collect();
    for result in h.arbor.ingest_batch(&chain, events).await.unwrap() {
        result.unwrap();
    }
    let namespace = chain.write_namespace().clone();
    // A page of 10: what a pass reads at most, as MAX_READ_PER_PASS is for a real store.
    let pass =
        |mark| ConsolidateRequest { max_read: 10, ..ConsolidateRequest::new(vec![(namespace.clone(), mark)], false) };
    let first = h.arbor.consolidate(&pass(None)).await.unwrap().namespaces.remove(0);
    assert_eq!((first.new, first.more), (10, true));
    let second = h.arbor.consolidate(&pass(first.through.clone())).await.unwrap().namespaces.remove(0);
    assert_eq!((second.new, second.more), (4, false), "the second pass reads what the first left");
    assert!(second.through > first.through);
    let third = h.arbor.consolidate(&pass(second.through.clone())).await.unwrap().namespaces.remove(0);
    assert_eq!((third.new, third.more), (0, false));
}

/// A batch that replaces a memory and then restates it word for word: the restatement is
/// current again (a new version) and the batch commits. The stored copy of those words is
/// superseded in the same commit that writes them anew, so the commit must retire it before
/// the new copy goes in, or the store refuses two live leaves with one fingerprint (and the
/// write, replanned the same way each time, gave up as contention).
#[tokio::test]
async fn a_batch_that_replaces_a_memory_and_restates_it_commits() {
    let h = harness();
    let chain = conversation_chain(&h.arbor, "c1", None);
    let first = h.arbor.ingest(&chain, message("My favorite color is green.", "m1")).await.unwrap();
    let original = first.chunks[0].outcome.leaf_id().unwrap().clone();
    h.clock.advance_seconds(3_600);
    let batch = vec![message("My favorite color is blue.", "m2"), message("My favorite color is green.", "m3")];
    let outcomes: Vec<IngestOutcome> = h
        .arbor
        .ingest_batch(&chain, batch)
        .await
        .unwrap()
        .into_iter()
        .map(|report| report.unwrap().chunks[0].outcome.clone())
        .collect();
    let labels: Vec<&str> = outcomes.iter().map(IngestOutcome::label).collect();
    assert_eq!(labels, ["superseding", "superseding"]);
    let restated = outcomes[1].leaf_id().unwrap();
    assert_ne!(restated, &original, "the restatement is a new leaf, the original stays history");

    let now = h.arbor.retrieve(&chain, &RetrieveRequest::new("favorite color")).await.unwrap();
    let texts: Vec<&str> = now.evidence.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, vec!["My favorite color is green."], "only the restated fact is current");
}
