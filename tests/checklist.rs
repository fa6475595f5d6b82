//! The acceptance checklist [design §acceptance], one named test per line, written once and run on
//! every backend: each backend's test file expands [`acceptance_checklist!`](crate::acceptance_checklist)
//! with its own fresh ports, so `memory_backend::`, `sqlite_backend::` and `postgres_backend::`
//! each hold the same twelve tests.
//!
//! | checklist line | test |
//! | --- | --- |
//! | an ordinary conversation reads only global, its project and itself | [`a_conversation_reads_only_global_its_project_and_itself`] |
//! | an automation run reads only the namespaces its run binds | [`an_automation_run_reads_only_what_its_binding_names`] |
//! | an experiment run cannot read other runs' messages or memories | [`an_experiment_run_reads_neither_other_runs_nor_anything_after_its_freeze`] |
//! | every non-manual memory has a traceable source | [`every_inferred_memory_has_a_traceable_source`] |
//! | candidates and rejected memories stay out of ordinary context | [`candidates_and_rejected_memories_never_reach_context`] |
//! | global and project promotion needs explicit confirmation or evaluation | [`global_and_project_memories_need_confirmation_and_promotion_a_reason`] |
//! | conflicting facts are not silently overwritten | [`conflicting_facts_are_never_silently_overwritten`] |
//! | the currently valid fact is chosen by validity | [`the_fact_valid_at_the_asked_time_is_the_one_chosen`] |
//! | context assembly holds each layer's and the total character budget | [`context_assembly_holds_every_layer_and_the_total_budget`] |
//! | the memories a run actually used can be shown | [`a_run_shows_which_memories_it_actually_used`] |
//! | after delete or forget, text, index and cache no longer retrieve | [`forgotten_text_is_retrievable_from_nowhere`] |
//! | restricted memories are never generated nor sent to a remote embedder | [`restricted_memories_are_never_generated_nor_sent_to_a_remote_embedder`] |
//!
//! Beside them, on every backend too: experiment settlement and reruns [design §experiments],
//! [`settlement_proposes_only_successful_runs_with_evidence_and_reruns_choose_their_snapshot`];
//! decay and archival [design §lifecycle], [`decay_demotes_old_episodes_but_never_preferences`] and
//! [`unused_candidates_are_archived_never_summarized_and_can_be_restored`]; knowing what is current
//! when updates are phrased in passing, [`updates_phrased_in_passing_replace_only_what_they_update`],
//! [`no_decision_depends_on_the_embedder`],
//! [`an_automatic_retirement_is_listed_undone_and_stays_undone`],
//! [`the_profile_says_what_is_current_and_what_it_replaced`] and
//! [`disagreeing_current_memories_rank_the_newer_first_and_flag_the_older`]; the same in Chinese,
//! [`chinese_is_searched_by_its_words_kept_refused_and_updated`]; consolidation,
//! [`consolidation_catches_what_writes_missed_once_never_deletes_and_reports_every_change`]; one tree
//! per subject in hindsight, [`an_entity_brings_the_memories_filed_before_it_into_its_tree`]; markdown
//! a person edits, [`an_edited_document_becomes_the_memorys_next_version_and_history_keeps_the_old`].

use std::sync::{Arc, Mutex};

use arbor_app::{Arbor, IngestOutcome, Ports, Promotion, RetrievalPack, RetrieveRequest};
use arbor_domain::conflict::{ConflictCause, ConflictResolution};
use arbor_domain::event::Event;
use arbor_domain::experiment::{NotSettled, RunOutcome, SnapshotChoice};
use arbor_domain::id::{LeafId, NodeId, ScopeId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Actor, MemoryKind, SourceRef, SubjectKey};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use arbor_domain::sensitivity::Sensitivity;
use arbor_domain::time::{Timestamp, Validity};
use arbor_ports::{Embedder, EmbedderId, HashingEmbedder, Locality, ManualClock};

use crate::{engine, engine_with, start};

/// Expands the checklist into `#[tokio::test]`s over `$fresh`, an async function returning
/// fresh `(Ports, guard)` for each test (the guard keeps its directory or schema alive).
#[macro_export]
macro_rules! acceptance_checklist {
    ($fresh:path) => {
        $crate::acceptance_checklist!(@tests $fresh;
            a_conversation_reads_only_global_its_project_and_itself,
            an_automation_run_reads_only_what_its_binding_names,
            an_experiment_run_reads_neither_other_runs_nor_anything_after_its_freeze,
            every_inferred_memory_has_a_traceable_source,
            candidates_and_rejected_memories_never_reach_context,
            global_and_project_memories_need_confirmation_and_promotion_a_reason,
            conflicting_facts_are_never_silently_overwritten,
            the_fact_valid_at_the_asked_time_is_the_one_chosen,
            context_assembly_holds_every_layer_and_the_total_budget,
            a_run_shows_which_memories_it_actually_used,
            forgotten_text_is_retrievable_from_nowhere,
            restricted_memories_are_never_generated_nor_sent_to_a_remote_embedder,
            // Beyond the checklist [design §experiments, §lifecycle]: settlement and reruns, decay and archival.
            settlement_proposes_only_successful_runs_with_evidence_and_reruns_choose_their_snapshot,
            decay_demotes_old_episodes_but_never_preferences,
            unused_candidates_are_archived_never_summarized_and_can_be_restored,
            // Knowing what is current when updates come as people phrase them.
            updates_phrased_in_passing_replace_only_what_they_update,
            no_decision_depends_on_the_embedder,
            an_automatic_retirement_is_listed_undone_and_stays_undone,
            the_profile_says_what_is_current_and_what_it_replaced,
            disagreeing_current_memories_rank_the_newer_first_and_flag_the_older,
            chinese_is_searched_by_its_words_kept_refused_and_updated,
            consolidation_catches_what_writes_missed_once_never_deletes_and_reports_every_change,
            an_entity_brings_the_memories_filed_before_it_into_its_tree,
            // What the store's owner sees of its state [design §health].
            health_counts_duplicates_history_stale_summaries_waiting_suggestions_and_bytes,
            the_daily_view_holds_one_day_of_what_the_chain_reads,
            // Markdown a person can edit [design §memory-centre].
            an_edited_document_becomes_the_memorys_next_version_and_history_keeps_the_old
        );
    };
    (@tests $fresh:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let (ports, _guard) = $fresh().await;
                $crate::checklist::$name(ports).await;
            }
        )*
    };
}

fn scope(id: &str) -> ScopeId {
    ScopeId::parse(id).expect("a valid scope id")
}

fn chain(arbor: &Arbor, context: TrustedContext) -> ReadChain {
    arbor.read_chain(&context).expect("a valid context")
}

fn conversation(arbor: &Arbor, conversation: &str, project: &str) -> ReadChain {
    chain(
        arbor,
        TrustedContext::Conversation { conversation: scope(conversation), project: Some(scope(project)), agent: None },
    )
}

/// Run `run` of automation a1 in project p1.
fn automation_run(arbor: &Arbor, run: &str) -> ReadChain {
    chain(
        arbor,
        TrustedContext::AutomationRun {
            run: scope(run),
            automation: scope("a1"),
            conversation: None,
            project: Some(scope("p1")),
        },
    )
}

fn only(arbor: &Arbor, namespace: &str) -> ReadChain {
    chain(arbor, TrustedContext::Only { namespace: Namespace::parse(namespace).expect("a valid namespace") })
}

fn message(text: &str, id: &str) -> Event {
    let mut event = Event::user_message(text);
    event.source = SourceRef::Message { conversation: None, message_id: id.to_owned() };
    event
}

/// Ingests one event and returns its leaf and status.
async fn remember(arbor: &Arbor, chain: &ReadChain, event: Event) -> (LeafId, LeafStatus) {
    let report = arbor.ingest(chain, event).await.expect("ingest");
    match &report.chunks[0].outcome {
        IngestOutcome::Created { leaf_id, status } | IngestOutcome::Superseding { leaf_id, status, .. } => {
            (leaf_id.clone(), *status)
        }
        other => panic!("expected a new leaf, got {other:?}"),
    }
}

/// A person's own entry: active wherever it is written.
async fn note(arbor: &Arbor, chain: &ReadChain, text: &str) -> LeafId {
    let (id, status) = remember(arbor, chain, Event::user_message(text)).await;
    assert_eq!(status, LeafStatus::Active, "{text}");
    id
}

async fn ask(arbor: &Arbor, chain: &ReadChain, query: &str) -> RetrievalPack {
    arbor.retrieve(chain, &RetrieveRequest::new(query)).await.expect("retrieve")
}

async fn ask_as_of(arbor: &Arbor, chain: &ReadChain, query: &str, as_of: Timestamp) -> RetrievalPack {
    let request = RetrieveRequest { as_of: Some(as_of), ..RetrieveRequest::new(query) };
    arbor.retrieve(chain, &request).await.expect("retrieve")
}

/// Every word the pack could put in front of a model.
fn pack_text(pack: &RetrievalPack) -> String {
    let mut all: Vec<&str> = Vec::new();
    all.extend(pack.evidence.iter().flat_map(|e| [e.title.as_str(), e.text.as_str()]));
    all.extend(pack.known_facts.iter().chain(&pack.constraints).chain(&pack.recent).map(String::as_str));
    all.join("\n")
}

fn evidence_ids(pack: &RetrievalPack) -> Vec<String> {
    pack.evidence.iter().map(|e| e.node_id.to_string()).collect()
}

fn minutes(clock: &ManualClock, n: i64) -> Timestamp {
    clock.advance_seconds(n * 60);
    arbor_ports::Clock::now(clock)
}

/// Writes one distinctive memory into each namespace of a small world, returning
/// (namespace, word) pairs.
async fn populate(arbor: &Arbor, clock: &ManualClock) -> Vec<(&'static str, &'static str)> {
    let world = [
        ("global", "marigold", "Remember the marigold protocol for every project."),
        ("project:p1", "juniper", "Project p1 keeps its runbook in the juniper wiki."),
        ("project:p2", "tamarind", "Project p2 deploys from the tamarind branch."),
        ("conversation:c1", "hazelnut", "In this chat we call the build server hazelnut."),
        ("conversation:c2", "quokka", "The other chat named its printer quokka."),
        ("automation:a1", "saffron", "The nightly job reads the saffron feed."),
        ("automation:a2", "cardamom", "The weekly job reads the cardamom feed."),
        ("run:r1", "obsidian", "This run found the obsidian cache warm."),
        ("run:r2", "basalt", "That run found the basalt cache cold."),
        ("experiment:e1", "vermilion", "The experiment tunes the vermilion threshold."),
        ("run:r3", "cobalt", "Run three measured the cobalt latency."),
        ("run:r4", "magenta", "Run four measured the magenta latency."),
    ];
    let mut words = Vec::new();
    for (namespace, word, text) in world {
        minutes(clock, 1);
        note(arbor, &only(arbor, namespace), text).await;
        words.push((namespace, word));
    }
    words
}

/// Asks `chain` for every word of the world and returns the namespaces whose word came back.
async fn readable_namespaces(
    arbor: &Arbor,
    chain: &ReadChain,
    world: &[(&'static str, &'static str)],
) -> Vec<&'static str> {
    let mut seen = Vec::new();
    for (namespace, word) in world {
        let pack = ask(arbor, chain, word).await;
        for item in &pack.evidence {
            assert!(chain.contains(&item.namespace), "{} from {} is outside the chain", item.node_id, item.namespace);
        }
        if pack_text(&pack).contains(word) {
            seen.push(*namespace);
        }
    }
    seen
}

pub async fn a_conversation_reads_only_global_its_project_and_itself(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let world = populate(&arbor, &clock).await;
    let c1 = conversation(&arbor, "c1", "p1");
    let layers: Vec<String> = c1.namespaces().map(|n| n.to_string()).collect();
    assert_eq!(layers, ["conversation:c1", "project:p1", "global"]);
    assert_eq!(readable_namespaces(&arbor, &c1, &world).await, ["global", "project:p1", "conversation:c1"]);
}

pub async fn an_automation_run_reads_only_what_its_binding_names(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let world = populate(&arbor, &clock).await;
    let run = automation_run(&arbor, "r1");
    assert_eq!(readable_namespaces(&arbor, &run, &world).await, ["global", "project:p1", "automation:a1", "run:r1"]);
    // Bound to a conversation too, it reads that conversation and still nothing else.
    let bound = chain(
        &arbor,
        TrustedContext::AutomationRun {
            run: scope("r1"),
            automation: scope("a1"),
            conversation: Some(scope("c1")),
            project: Some(scope("p1")),
        },
    );
    assert_eq!(
        readable_namespaces(&arbor, &bound, &world).await,
        ["global", "project:p1", "conversation:c1", "automation:a1", "run:r1"]
    );
}

pub async fn an_experiment_run_reads_neither_other_runs_nor_anything_after_its_freeze(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let world = populate(&arbor, &clock).await;
    let frozen_at = minutes(&clock, 1);
    let run = |id: &str| {
        chain(
            &arbor,
            TrustedContext::ExperimentRun {
                run: scope(id),
                experiment: scope("e1"),
                project: Some(scope("p1")),
                frozen_at,
            },
        )
    };
    let (r3, r4) = (run("r3"), run("r4"));
    assert_eq!(readable_namespaces(&arbor, &r3, &world).await, ["global", "project:p1", "experiment:e1", "run:r3"]);
    assert_eq!(readable_namespaces(&arbor, &r4, &world).await, ["global", "project:p1", "experiment:e1", "run:r4"]);

    // What a run writes during the experiment (a message and the assistant's own candidate)
    // is its own: the sibling run sees neither.
    minutes(&clock, 1);
    note(&arbor, &r3, "Run three saw the indigo retry storm.").await;
    let mut inferred = message("The best setting is the chartreuse preset.", "r3-m2");
    inferred.actor = Actor::Assistant;
    let (candidate, status) = remember(&arbor, &r3, inferred).await;
    assert_eq!(status, LeafStatus::Candidate);
    assert!(pack_text(&ask(&arbor, &r3, "indigo retry storm").await).contains("indigo"));
    for word in ["indigo", "chartreuse"] {
        assert!(!pack_text(&ask(&arbor, &r4, word).await).contains(word), "run four read {word}");
    }
    assert!(
        arbor.confirm(&r4, &candidate).await.unwrap_err().is_not_found(),
        "another run's candidate is not even found"
    );

    // The long-term layers are a snapshot: what the project learns after the freeze is not
    // read by the experiment's runs, while an ordinary conversation sees it.
    minutes(&clock, 1);
    note(&arbor, &only(&arbor, "project:p1"), "Project p1 moved its runbook to the walnut portal.").await;
    assert!(!pack_text(&ask(&arbor, &r3, "walnut portal runbook").await).contains("walnut"));
    assert!(
        pack_text(&ask(&arbor, &conversation(&arbor, "c1", "p1"), "walnut portal runbook").await).contains("walnut")
    );
}

pub async fn every_inferred_memory_has_a_traceable_source(ports: Ports) {
    let (arbor, _clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let sources = [
        SourceRef::Message { conversation: Some(scope("c1")), message_id: "m-17".into() },
        SourceRef::Task { task_id: "t-3".into(), event_id: Some("e-9".into()) },
        SourceRef::Run { run: scope("r1") },
        SourceRef::Import { origin: "notes-2025.md".into() },
        SourceRef::Integration { system: "crm".into(), record_id: "acct-42".into() },
    ];
    let texts = [
        "Dana approved the lilac budget.",
        "The deploy task pinned the copper image.",
        "The run cached the silver manifest.",
        "Old notes say the bronze vendor is slow.",
        "The CRM lists Acme on the platinum plan.",
    ];
    for (source, text) in sources.iter().zip(texts) {
        let event = Event { source: source.clone(), ..Event::user_message(text) };
        let (id, _) = remember(&arbor, &c1, event).await;
        let leaf =
            arbor.ports().store.leaf(&[Namespace::parse("conversation:c1").unwrap()], &id).await.unwrap().unwrap();
        assert_eq!(&leaf.provenance.source, source, "{text}: its source is kept as given");
        assert!(!arbor_domain::admission::is_manual_entry(leaf.provenance.actor, &leaf.provenance.source));
        assert_eq!(leaf.provenance.source_sha256, arbor_domain::model::ContentHash::of(text.as_bytes()), "{text}");
        assert!(!leaf.provenance.extractor.is_empty() && !leaf.provenance.policy_version.is_empty());
        // The pack names the source of what it quotes.
        let pack = ask(&arbor, &c1, text).await;
        let item = pack.evidence.iter().find(|e| e.node_id.to_string() == id.to_string()).expect("found");
        assert!(item.source.as_deref().is_some_and(|s| !s.is_empty()), "{text}: evidence without a source");
    }
    // An event may not claim a source only Arbor writes.
    let forged = Event {
        source: SourceRef::Promotion {
            from: LeafId::parse("leaf-1").unwrap(),
            from_namespace: Namespace::global(),
            reason: "trust me".into(),
            evaluation: None,
            operator: "model".into(),
        },
        ..Event::user_message("The gold standard applies.")
    };
    assert!(arbor.ingest(&c1, forged).await.is_err());
}

pub async fn candidates_and_rejected_memories_never_reach_context(ports: Ports) {
    let (arbor, _clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let mut suggestion = message("Dana probably prefers the teal dashboard.", "a-1");
    suggestion.actor = Actor::Assistant;
    let (candidate, status) = remember(&arbor, &c1, suggestion.clone()).await;
    assert_eq!(status, LeafStatus::Candidate);
    arbor.run_jobs(None).await.unwrap();
    assert!(!pack_text(&ask(&arbor, &c1, "teal dashboard").await).contains("teal"), "a candidate reached context");
    assert!(
        evidence_ids(&ask(&arbor, &c1, "Dana dashboard preference").await).iter().all(|id| id != candidate.as_str())
    );

    let receipt = arbor.reject(&c1, &candidate).await.unwrap();
    assert_eq!(receipt.status, LeafStatus::Rejected);
    arbor.run_jobs(None).await.unwrap();
    assert!(
        !pack_text(&ask(&arbor, &c1, "teal dashboard").await).contains("teal"),
        "a rejected memory reached context"
    );
    // The same suggestion again is a duplicate of the rejection, never proposed anew.
    let again = arbor.ingest(&c1, suggestion).await.unwrap();
    assert!(
        matches!(
            &again.chunks[0].outcome,
            IngestOutcome::NoopDuplicate { existing, existing_status: LeafStatus::Rejected } if existing == &candidate
        ),
        "{:?}",
        again.chunks[0].outcome
    );
    assert!(arbor.pending_review(&c1).await.unwrap().is_empty());

    // A confirmed one does reach context.
    let mut other = message("Dana asked for the amber report every Monday.", "a-2");
    other.actor = Actor::Assistant;
    let (second, _) = remember(&arbor, &c1, other).await;
    assert_eq!(arbor.confirm(&c1, &second).await.unwrap().status, LeafStatus::Active);
    assert!(pack_text(&ask(&arbor, &c1, "amber report").await).contains("amber"));
}

pub async fn global_and_project_memories_need_confirmation_and_promotion_a_reason(ports: Ports) {
    let (arbor, _clock) = engine(ports);
    let project = chain(&arbor, TrustedContext::Project { project: scope("p1") });
    let global = only(&arbor, "global");
    // Observed in the project and global layers, nothing becomes current without a person.
    for (layer, text, id) in
        [(&project, "The team uses the ochre lint profile.", "m1"), (&global, "Everyone uses the sepia font.", "m2")]
    {
        let (leaf, status) = remember(&arbor, layer, message(text, id)).await;
        assert_eq!(status, LeafStatus::Candidate, "{text}");
        assert!(!pack_text(&ask(&arbor, layer, text).await).contains(text));
        assert_eq!(arbor.confirm(layer, &leaf).await.unwrap().status, LeafStatus::Active);
        assert!(pack_text(&ask(&arbor, layer, text).await).contains(text));
    }

    // Promotion walks run -> automation -> project, one layer at a time, each step a
    // candidate with its reason that a person confirms.
    let run = automation_run(&arbor, "r1");
    let learned = note(&arbor, &run, "Releases go out on the russet train.").await;
    let unreasoned = Promotion { id: learned.clone(), reason: "  ".into(), evaluation: None, operator: "dana".into() };
    assert_eq!(arbor.promote(&run, &unreasoned).await.unwrap_err().code(), "invalid", "a promotion needs a reason");
    let promotion = |id: &LeafId| Promotion {
        id: id.clone(),
        reason: "held for three releases".into(),
        evaluation: Some("3/3 releases used it".into()),
        operator: "dana".into(),
    };
    let to_automation = arbor.promote(&run, &promotion(&learned)).await.unwrap();
    assert_eq!(
        (to_automation.namespace.to_string().as_str(), to_automation.status),
        ("automation:a1", LeafStatus::Candidate)
    );
    arbor.confirm(&run, &to_automation.leaf_id).await.unwrap();
    let to_project = arbor.promote(&run, &promotion(&to_automation.leaf_id)).await.unwrap();
    assert_eq!((to_project.namespace.to_string().as_str(), to_project.status), ("project:p1", LeafStatus::Candidate));
    let other = conversation(&arbor, "c2", "p1");
    assert!(!pack_text(&ask(&arbor, &other, "russet train").await).contains("russet"), "unconfirmed promotion read");
    arbor.confirm(&project, &to_project.leaf_id).await.unwrap();
    assert!(pack_text(&ask(&arbor, &other, "russet train").await).contains("russet"));
    let promoted = arbor
        .ports()
        .store
        .leaf(&[Namespace::parse("project:p1").unwrap()], &to_project.leaf_id)
        .await
        .unwrap()
        .unwrap();
    match promoted.provenance.source {
        SourceRef::Promotion { from, from_namespace, reason, evaluation, operator } => {
            assert_eq!(
                (from, from_namespace.to_string(), reason.as_str(), evaluation.as_deref(), operator.as_str()),
                (
                    to_automation.leaf_id,
                    "automation:a1".to_owned(),
                    "held for three releases",
                    Some("3/3 releases used it"),
                    "dana"
                )
            );
        }
        other => panic!("a promotion's source is {other:?}"),
    }
    // The original stays where it was, with its own source.
    let original = arbor.ports().store.leaf(&[Namespace::parse("run:r1").unwrap()], &learned).await.unwrap().unwrap();
    assert_eq!((original.status, original.provenance.source), (LeafStatus::Active, SourceRef::UserEntry));
}

pub async fn conflicting_facts_are_never_silently_overwritten(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    minutes(&clock, 60);
    let (green, _) = remember(&arbor, &c1, message("My favorite color is green.", "m1")).await;

    // An older, less authoritative statement about the same subject waits as a conflict.
    let imported = |text: &str, hours_ago: i64| {
        let mut event = Event::user_message(text);
        event.source = SourceRef::Import { origin: "old-profile.json".into() };
        event.observed_at =
            Some(arbor_ports::Clock::now(&*clock).checked_sub(jiff::SignedDuration::from_hours(hours_ago)).unwrap());
        event
    };
    let report = arbor.ingest(&c1, imported("My favorite color is blue.", 1)).await.unwrap();
    let blue = match &report.chunks[0].outcome {
        IngestOutcome::Superseding { leaf_id, replaces, status: LeafStatus::Candidate, .. } if replaces == &green => {
            leaf_id.clone()
        }
        other => panic!("expected a conflict candidate, got {other:?}"),
    };
    assert!(report.chunks[0].approval.is_some_and(|r| r.starts_with("conflict")), "{:?}", report.chunks[0].approval);
    let pack = ask(&arbor, &c1, "favorite color").await;
    assert!(pack_text(&pack).contains("green") && !pack_text(&pack).contains("blue"), "the current fact stays current");
    // The review shows both sides and why.
    let review = arbor.pending_review(&c1).await.unwrap();
    let item = review.iter().find(|i| i.leaf.id == blue).expect("listed");
    assert_eq!(item.would_supersede.iter().map(|l| &l.id).collect::<Vec<_>>(), [&green]);
    assert_eq!(item.conflict, Some(ConflictCause::LessAuthoritative));

    // Keep both: both hold, neither replaced.
    let kept = arbor.resolve_conflict(&c1, &blue, ConflictResolution::KeepBoth).await.unwrap();
    assert_eq!((kept.status, kept.superseded.len()), (LeafStatus::Active, 0));
    let both = pack_text(&ask(&arbor, &c1, "favorite color green blue").await);
    assert!(both.contains("green") && both.contains("blue"), "{both}");

    // Set validity: an older fact placed before the current one is history, read `as_of`.
    let (home, _) = remember(&arbor, &c1, message("I live in Lisbon now.", "m2")).await;
    let lisbon_from = arbor
        .ports()
        .store
        .leaf(&c1.namespaces().cloned().collect::<Vec<_>>(), &home)
        .await
        .unwrap()
        .unwrap()
        .validity
        .valid_from
        .unwrap();
    let report = arbor.ingest(&c1, imported("I live in Berlin now.", 2)).await.unwrap();
    let berlin = report.chunks[0].outcome.leaf_id().unwrap().clone();
    let berlin_years = Validity::new(Some(start()), Some(lisbon_from)).unwrap();
    let placed =
        arbor.resolve_conflict(&c1, &berlin, ConflictResolution::SetValidity { validity: berlin_years }).await.unwrap();
    assert_eq!(placed.status, LeafStatus::Superseded);
    let now = pack_text(&ask(&arbor, &c1, "where do I live").await);
    assert!(now.contains("Lisbon") && !now.contains("Berlin"), "{now}");
    let then =
        ask_as_of(&arbor, &c1, "where do I live", start().checked_add(jiff::SignedDuration::from_mins(5)).unwrap())
            .await;
    assert!(pack_text(&then).contains("Berlin") && !pack_text(&then).contains("Lisbon"), "{}", pack_text(&then));
    // A validity that would have both hold at once is refused, and nothing changes.
    let report = arbor.ingest(&c1, imported("I live in Porto now.", 3)).await.unwrap();
    let porto = report.chunks[0].outcome.leaf_id().unwrap().clone();
    let overlapping = Validity::new(Some(start()), None).unwrap();
    let refused = arbor.resolve_conflict(&c1, &porto, ConflictResolution::SetValidity { validity: overlapping }).await;
    assert_eq!(refused.unwrap_err().code(), "invalid");
    // Reject: the newcomer is gone for good, the current fact untouched.
    assert_eq!(
        arbor.resolve_conflict(&c1, &porto, ConflictResolution::Reject).await.unwrap().status,
        LeafStatus::Rejected
    );
    assert!(!pack_text(&ask(&arbor, &c1, "where do I live").await).contains("Porto"));

    // Supersede: the person says the newcomer is right; the old fact stays as history with its
    // validity closed, and the pack marks the replacement.
    let report = arbor.ingest(&c1, imported("I live in Madrid now.", 4)).await.unwrap();
    let madrid = report.chunks[0].outcome.leaf_id().unwrap().clone();
    let superseded = arbor.resolve_conflict(&c1, &madrid, ConflictResolution::Supersede).await.unwrap();
    assert_eq!(superseded.superseded, std::slice::from_ref(&home));
    let pack = ask(&arbor, &c1, "where do I live").await;
    let item = pack.evidence.iter().find(|e| e.text.contains("Madrid")).expect("the new fact");
    assert_eq!(item.supersedes.as_ref(), Some(&home));
    let old = arbor.ports().store.leaf(&c1.namespaces().cloned().collect::<Vec<_>>(), &home).await.unwrap().unwrap();
    assert_eq!((old.status, old.superseded_by.as_ref()), (LeafStatus::Superseded, Some(&madrid)));
    // Madrid claims to hold from before Lisbon began: saying it was right means Lisbon never
    // held. At every instant since, exactly Madrid answers.
    let since_lisbon = lisbon_from.checked_add(jiff::SignedDuration::from_mins(1)).unwrap();
    let then = pack_text(&ask_as_of(&arbor, &c1, "where do I live", since_lisbon).await);
    assert!(then.contains("Madrid") && !then.contains("Lisbon"), "{then}");
    // It takes over from Lisbon's start, not reaching back over the Berlin years.
    let berlin_then = start().checked_add(jiff::SignedDuration::from_mins(5)).unwrap();
    let earlier = pack_text(&ask_as_of(&arbor, &c1, "where do I live", berlin_then).await);
    assert!(earlier.contains("Berlin") && !earlier.contains("Madrid"), "{earlier}");

    // A person's own newer statement is an update, never a conflict — and still no overwrite:
    // the old version stays, superseded.
    minutes(&clock, 5);
    let report = arbor.ingest(&c1, message("My favorite color is red.", "m9")).await.unwrap();
    assert!(matches!(&report.chunks[0].outcome, IngestOutcome::Superseding { status: LeafStatus::Active, .. }));
    let green_now =
        arbor.ports().store.leaf(&c1.namespaces().cloned().collect::<Vec<_>>(), &green).await.unwrap().unwrap();
    assert_eq!(green_now.status, LeafStatus::Superseded);
}

pub async fn the_fact_valid_at_the_asked_time_is_the_one_chosen(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let t0 = minutes(&clock, 10);
    // The host names the subject both statements are about.
    let about_the_ship_date = |text: &str, id: &str| {
        let mut event = message(text, id);
        event.hints.subject = Some(SubjectKey::parse("alpha-ship-date").unwrap());
        event
    };
    remember(&arbor, &c1, about_the_ship_date("Project Alpha ships in August.", "m1")).await;
    let t1 = minutes(&clock, 60);
    let report = arbor.ingest(&c1, about_the_ship_date("Project Alpha ships in September.", "m2")).await.unwrap();
    assert!(matches!(&report.chunks[0].outcome, IngestOutcome::Superseding { status: LeafStatus::Active, .. }));
    minutes(&clock, 10);
    let when = |pack: &RetrievalPack| {
        let text = pack_text(pack);
        (text.contains("August"), text.contains("September"))
    };
    assert_eq!(when(&ask(&arbor, &c1, "when does Project Alpha ship").await), (false, true), "now: the current fact");
    let between = t0.checked_add(jiff::SignedDuration::from_mins(30)).unwrap();
    assert_eq!(when(&ask_as_of(&arbor, &c1, "when does Project Alpha ship", between).await), (true, false));
    assert_eq!(when(&ask_as_of(&arbor, &c1, "when does Project Alpha ship", t1).await), (false, true), "valid from t1");
    let before = t0.checked_sub(jiff::SignedDuration::from_mins(1)).unwrap();
    assert_eq!(when(&ask_as_of(&arbor, &c1, "when does Project Alpha ship", before).await), (false, false));

    // A fact whose validity has ended is not current, though nothing replaced it.
    let mut lapsed = message("The beta discount code works this week.", "m3");
    let now = arbor_ports::Clock::now(&*clock);
    lapsed.hints.valid_from = Some(now.checked_sub(jiff::SignedDuration::from_hours(3)).unwrap());
    lapsed.hints.valid_to = Some(now.checked_sub(jiff::SignedDuration::from_hours(1)).unwrap());
    remember(&arbor, &c1, lapsed).await;
    assert!(!pack_text(&ask(&arbor, &c1, "beta discount code").await).contains("discount"));
    let during = now.checked_sub(jiff::SignedDuration::from_hours(2)).unwrap();
    assert!(pack_text(&ask_as_of(&arbor, &c1, "beta discount code", during).await).contains("discount"));
}

pub async fn context_assembly_holds_every_layer_and_the_total_budget(ports: Ports) {
    let (arbor, clock) = engine(ports);
    const FACTS: [&str; 20] = [
        "cranes in Oslo were repainted yellow after the storm season ended",
        "Lima customs cleared forty containers of citrus before noon",
        "Kyoto pilots asked for a second tugboat on windy mornings",
        "Accra dock workers voted to move the night shift one hour earlier",
        "Quito inland depot reports rail delays because of landslides",
        "Perth berth seven is closed for dredging until the spring tides",
        "Dakar ferry timetable now includes a Sunday crossing to the island",
        "Hanoi warehouse replaced its forklifts with electric models",
        "Turin logistics partner renegotiated fuel surcharges for trucks",
        "Fargo grain elevators shipped record soybean volumes downriver",
        "Malmo bridge inspection found corrosion on two expansion joints",
        "Cusco mountain route trucks need chains from June to August",
        "Sapporo fishing fleet unloads at pier three during the crab season",
        "Tunis port authority introduced digital manifests for every vessel",
        "Bergen cruise terminal limits visitors to eight thousand per day",
        "Mombasa container scanners were upgraded to detect lithium batteries",
        "Hobart research icebreaker refuels only at the southern jetty",
        "Austin distribution hub added a cold chain room for vaccines",
        "Leeds canal barges carry recycled glass twice a week",
        "Valparaiso hillside funicular reopened after the earthquake repairs",
    ];
    for (namespace, role) in [("conversation:c1", "chat"), ("project:p1", "project"), ("global", "company")] {
        let layer = only(&arbor, namespace);
        for fact in FACTS {
            minutes(&clock, 1);
            note(&arbor, &layer, &format!("Harbor news for the {role}: {fact}.")).await;
        }
    }
    arbor.run_jobs(None).await.unwrap();
    let c1 = conversation(&arbor, "c1", "p1");
    let budget = arbor.policy().budget.clone();
    for request in [
        RetrieveRequest::new("harbor migration status notes"),
        RetrieveRequest { max_results: Some(50), ..RetrieveRequest::new("what was done in the harbor migration") },
        RetrieveRequest { max_chars: Some(400), ..RetrieveRequest::new("harbor migration checklist") },
    ] {
        let pack = arbor.retrieve(&c1, &request).await.unwrap();
        assert!(!pack.evidence.is_empty());
        let mut per_layer: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for item in &pack.evidence {
            let entry = per_layer.entry(item.namespace.to_string()).or_default();
            entry.0 += 1;
            entry.1 += item.text.chars().count();
        }
        for (namespace, (items, chars)) in &per_layer {
            let limit = budget.layer(Namespace::parse(namespace).unwrap().kind());
            assert!(
                *items <= limit.max_items && *chars <= limit.max_chars,
                "{namespace}: {items} items / {chars} chars over {limit:?}"
            );
        }
        let total: usize = pack.evidence.iter().map(|e| e.text.chars().count()).sum();
        let max_chars = request.max_chars.unwrap_or(usize::MAX).min(budget.total.max_chars);
        assert!(total <= max_chars, "{total} chars over {max_chars}");
        assert!(pack.evidence.len() <= budget.total.max_items);
        if request.max_results == Some(50) {
            // Sixty matching memories: the budgets, not the supply, decided what came back.
            assert_eq!(pack.evidence.len(), budget.total.max_items, "{per_layer:?}");
            assert!(
                per_layer
                    .iter()
                    .any(|(ns, (items, _))| *items == budget.layer(Namespace::parse(ns).unwrap().kind()).max_items),
                "no layer filled its budget: {per_layer:?}"
            );
        }
    }
}

pub async fn a_run_shows_which_memories_it_actually_used(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let project = only(&arbor, "project:p1");
    let runbook = note(&arbor, &project, "The deploy runbook says to drain the umber queue first.").await;
    minutes(&clock, 1);
    let run = automation_run(&arbor, "r1");
    let request = RetrieveRequest { record: true, ..RetrieveRequest::new("how do I drain the umber queue") };
    let pack = arbor.retrieve(&run, &request).await.unwrap();
    let id = pack.retrieval_id.clone().expect("a recorded retrieval has an id");
    let explanation = arbor.show_retrieval(&run, &id).await.unwrap().expect("readable by the run");
    let used: Vec<_> =
        explanation.snapshot.access_records().filter(|r| r.entered_context).map(|r| r.node.to_string()).collect();
    assert!(used.contains(&runbook.to_string()), "{used:?}");
    assert_eq!(used, evidence_ids(&pack), "what entered the context is exactly the pack's evidence");
    let usage = arbor.usage(&run, runbook.as_str(), 10).await.unwrap();
    assert_eq!((usage.retrievals, usage.entered_context), (1, 1));
    assert_eq!(usage.records[0].retrieval, id);
    // Another conversation of another project cannot read that record.
    assert!(arbor.show_retrieval(&conversation(&arbor, "c9", "p9"), &id).await.unwrap().is_none());
}

pub async fn forgotten_text_is_retrievable_from_nowhere(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let mut secret_ish = None;
    for (i, line) in [
        "My locker code hint is the periwinkle tune.",
        "Dana likes long walks.",
        "The team picked Rust.",
        "Standup is at nine.",
    ]
    .iter()
    .enumerate()
    {
        minutes(&clock, 1);
        let (id, _) = remember(&arbor, &c1, message(line, &format!("m{i}"))).await;
        secret_ish.get_or_insert(id);
    }
    arbor.run_jobs(None).await.unwrap();
    let id = secret_ish.unwrap();
    assert!(pack_text(&ask(&arbor, &c1, "periwinkle tune").await).contains("periwinkle"));
    let receipt = arbor.forget(&c1, &id).await.unwrap();
    assert!(receipt.bodies_deleted >= 1);
    // Immediately: no retrieval, and no copy anywhere — store, index (text and vectors), bodies.
    assert!(!pack_text(&ask(&arbor, &c1, "periwinkle tune").await).contains("periwinkle"));
    let ports = arbor.ports();
    assert!(!ports.store.contains_text("periwinkle").await.unwrap(), "store");
    assert!(!ports.index.contains_text("periwinkle").await.unwrap(), "index");
    assert!(!ports.bodies.contains_text("periwinkle").await.unwrap(), "bodies");
    // Summaries re-sealed after the forget do not bring it back either.
    arbor.run_jobs(None).await.unwrap();
    assert!(!ports.store.contains_text("periwinkle").await.unwrap());
    assert!(!pack_text(&ask(&arbor, &c1, "tell me everything about this chat").await).contains("periwinkle"));
    // A memory promoted up the chain is forgotten with its copies: the words leave every layer.
    let run = automation_run(&arbor, "r1");
    let learned = note(&arbor, &run, "The mulberry token rotates on Sundays.").await;
    let promotion = Promotion {
        id: learned.clone(),
        reason: "every run needs it".into(),
        evaluation: None,
        operator: "dana".into(),
    };
    let copy = arbor.promote(&run, &promotion).await.unwrap();
    arbor.confirm(&run, &copy.leaf_id).await.unwrap();
    arbor.run_jobs(None).await.unwrap();
    let sibling = automation_run(&arbor, "r2");
    assert!(
        pack_text(&ask(&arbor, &sibling, "mulberry token").await).contains("mulberry"),
        "the copy serves other runs"
    );
    let receipts = arbor.forget_with_copies(&run, &learned).await.unwrap();
    assert_eq!(receipts.iter().map(|r| r.leaf_id.clone()).collect::<Vec<_>>(), [learned, copy.leaf_id]);
    arbor.run_jobs(None).await.unwrap();
    assert!(!pack_text(&ask(&arbor, &sibling, "mulberry token").await).contains("mulberry"));
    for found in [
        ports.store.contains_text("mulberry").await,
        ports.index.contains_text("mulberry").await,
        ports.bodies.contains_text("mulberry").await,
    ] {
        assert!(!found.unwrap());
    }
    // A memory is its whole lineage: forgetting the corrected version with its copies takes
    // the copy promotion made of the version before the correction too.
    let first = note(&arbor, &run, "The quince badge opens door four.").await;
    let promotion = Promotion { id: first.clone(), ..promotion };
    let early_copy = arbor.promote(&run, &promotion).await.unwrap();
    arbor.confirm(&run, &early_copy.leaf_id).await.unwrap();
    let correction = arbor_app::Correction::by_person(first, Version::FIRST, "The quince badge opens door five.");
    let corrected = arbor.correct(&run, &correction).await.unwrap();
    let receipts = arbor.forget_with_copies(&run, &corrected.leaf_id).await.unwrap();
    assert!(receipts.iter().any(|r| r.leaf_id == early_copy.leaf_id), "the earlier version's copy: {receipts:?}");
    arbor.run_jobs(None).await.unwrap();
    for found in [
        ports.store.contains_text("quince").await,
        ports.index.contains_text("quince").await,
        ports.bodies.contains_text("quince").await,
    ] {
        assert!(!found.unwrap());
    }
    // The audit keeps the event, with ids and hashes only.
    let audit = arbor.audit_log(&c1, 100).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|e| e.action == "leaf.forgotten" && e.node.as_ref().is_some_and(|n| n.to_string() == id.to_string()))
    );
    assert!(!format!("{audit:?}").contains("periwinkle"));
}

/// A remote embedder that records every text it is asked to embed.
#[derive(Debug, Default)]
struct RecordingRemoteEmbedder {
    inner: HashingEmbedder,
    seen: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Embedder for RecordingRemoteEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId { name: "recording-remote".into(), ..self.inner.id() }
    }

    fn locality(&self) -> Locality {
        Locality::Remote
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        self.seen.lock().unwrap().extend(texts.iter().cloned());
        self.inner.embed(texts).await
    }
}

pub async fn restricted_memories_are_never_generated_nor_sent_to_a_remote_embedder(mut ports: Ports) {
    let remote = Arc::new(RecordingRemoteEmbedder::default());
    ports.embedder = remote.clone();
    let (arbor, clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");

    // Never generated: not from a message declaring it, not from the assistant, and a secret
    // in a message is refused outright.
    let mut declared = message("My therapist is Dr. Saffron Vale.", "m1");
    declared.hints.sensitivity = Some(Sensitivity::Restricted);
    let refused = arbor.ingest(&c1, declared).await.unwrap();
    assert!(matches!(refused.chunks[0].outcome, IngestOutcome::NotAdmitted { .. }), "{:?}", refused.chunks[0].outcome);
    let mut assistant = declared_by_assistant("The user's PIN is kept under the Vale account.");
    assistant.hints.sensitivity = Some(Sensitivity::Restricted);
    let refused = arbor.ingest(&c1, assistant).await.unwrap();
    assert!(matches!(refused.chunks[0].outcome, IngestOutcome::NotAdmitted { .. }));
    let secret = arbor.ingest(&c1, message("my password is hunter2-Vale", "m2")).await.unwrap();
    assert!(matches!(secret.chunks[0].outcome, IngestOutcome::NotAdmitted { .. }));

    // A person may save one by hand; it is stored, indexed for full text, never embedded remotely.
    let mut by_hand = Event::user_message("My therapist is Dr. Saffron Vale.");
    by_hand.hints.sensitivity = Some(Sensitivity::Restricted);
    let (_restricted, status) = remember(&arbor, &c1, by_hand).await;
    assert_eq!(status, LeafStatus::Active);
    minutes(&clock, 1);
    note(&arbor, &c1, "My dentist is Dr. Amber Lake.").await;
    arbor.run_jobs(None).await.unwrap();
    arbor.reembed().await.unwrap();
    // Read only when the trusted caller enables it.
    // (The questions avoid the restricted words: a question is sent to the embedder as asked.)
    assert!(!pack_text(&ask(&arbor, &c1, "who is my therapist").await).contains("Saffron"));
    let enabled = RetrieveRequest { include_restricted: true, ..RetrieveRequest::new("who is my therapist") };
    assert!(pack_text(&arbor.retrieve(&c1, &enabled).await.unwrap()).contains("Saffron"));

    let seen = remote.seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|t| t.contains("Amber Lake")),
        "the remote embedder was used for normal memories: {seen:?}"
    );
    assert!(seen.iter().all(|t| !t.contains("Saffron") && !t.contains("Vale") && !t.contains("hunter2")), "{seen:?}");
}

fn declared_by_assistant(text: &str) -> Event {
    let mut event = message(text, "a-1");
    event.actor = Actor::Assistant;
    event
}

pub async fn settlement_proposes_only_successful_runs_with_evidence_and_reruns_choose_their_snapshot(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let e1 = scope("e1");
    let first = arbor.start_experiment(&e1, &scope("r3"), SnapshotChoice::New).await.unwrap();
    assert!(first.new_snapshot);
    let frozen_at = first.frozen_at;
    for sibling in ["r4", "r5"] {
        let started = arbor.start_experiment(&e1, &scope(sibling), SnapshotChoice::Latest).await.unwrap();
        assert_eq!((started.frozen_at, started.new_snapshot), (frozen_at, false));
    }
    let run = |id: &str, frozen_at| {
        chain(
            &arbor,
            TrustedContext::ExperimentRun {
                run: scope(id),
                experiment: e1.clone(),
                project: Some(scope("p1")),
                frozen_at,
            },
        )
    };
    minutes(&clock, 1);
    let learned = note(&arbor, &run("r3", frozen_at), "Warm caches cut the ochre benchmark by a third.").await;
    let mut guess = message("Maybe the teal flag helps too.", "r3-a1");
    guess.actor = Actor::Assistant;
    remember(&arbor, &run("r3", frozen_at), guess).await;
    note(&arbor, &run("r4", frozen_at), "Cold caches made the sienna benchmark flaky.").await;
    note(&arbor, &run("r5", frozen_at), "The umber variant crashed on start.").await;

    let outcomes = [
        RunOutcome { run: scope("r3"), succeeded: true, evidence: vec!["bench/881: -34% p50".into()] },
        RunOutcome { run: scope("r4"), succeeded: true, evidence: Vec::new() },
        RunOutcome { run: scope("r5"), succeeded: false, evidence: vec!["ci/77 red".into()] },
    ];
    let settled = arbor.settle_experiment(&e1, Some(scope("p1")), frozen_at, &outcomes, "dana").await.unwrap();
    assert_eq!(settled.proposed.len(), 1, "only r3's one active memory: {settled:?}");
    let proposal = &settled.proposed[0];
    assert_eq!(
        (proposal.from.clone(), proposal.namespace.to_string(), proposal.status),
        (learned.clone(), "experiment:e1".to_owned(), LeafStatus::Candidate)
    );
    assert_eq!(settled.not_settled, [(scope("r4"), NotSettled::NoEvidence), (scope("r5"), NotSettled::Failed)]);
    let stored =
        arbor.ports().store.leaf(&[Namespace::experiment(e1.clone())], &proposal.leaf_id).await.unwrap().unwrap();
    match &stored.provenance.source {
        SourceRef::Promotion { from, from_namespace, evaluation, operator, .. } => {
            assert_eq!((from, from_namespace.to_string().as_str(), operator.as_str()), (&learned, "run:r3", "dana"));
            assert!(evaluation.as_deref().is_some_and(|e| e.contains("bench/881")));
        }
        other => panic!("a settled memory's source is {other:?}"),
    }
    // Settling again proposes nothing new; a snapshot that was never taken is refused.
    let again = arbor.settle_experiment(&e1, Some(scope("p1")), frozen_at, &outcomes, "dana").await.unwrap();
    assert_eq!((again.proposed.len(), again.already_held.len()), (0, 1));
    let unknown = frozen_at.checked_add(jiff::SignedDuration::from_secs(1)).unwrap();
    assert_eq!(arbor.settle_experiment(&e1, None, unknown, &outcomes, "dana").await.unwrap_err().code(), "invalid");
    // A run never started in this experiment (another experiment's, an automation's) settles
    // nothing, and the whole settlement is refused before anything is written.
    note(&arbor, &run("r8", frozen_at), "Run eight tried the jade cache.").await;
    let stranger = [RunOutcome { run: scope("r8"), succeeded: true, evidence: vec!["bench/9".into()] }];
    let refused = arbor.settle_experiment(&e1, Some(scope("p1")), frozen_at, &stranger, "dana").await;
    assert_eq!(refused.unwrap_err().code(), "invalid");
    assert!(
        arbor
            .pending_review(&only(&arbor, "experiment:e1"))
            .await
            .unwrap()
            .iter()
            .all(|i| !i.leaf.summary.contains("jade"))
    );

    // Nothing is current until a person confirms it; then a rerun on the same snapshot still
    // reads the experiment as it was, and only a new snapshot reads the conclusion.
    let experiment = only(&arbor, "experiment:e1");
    assert!(!pack_text(&ask(&arbor, &experiment, "ochre benchmark").await).contains("ochre"));
    minutes(&clock, 1);
    arbor.confirm(&experiment, &proposal.leaf_id).await.unwrap();
    assert!(pack_text(&ask(&arbor, &experiment, "ochre benchmark").await).contains("ochre"));
    let rerun = arbor.start_experiment(&e1, &scope("r6"), SnapshotChoice::Reuse { at: frozen_at }).await.unwrap();
    assert_eq!((rerun.frozen_at, rerun.new_snapshot), (frozen_at, false));
    assert!(!pack_text(&ask(&arbor, &run("r6", rerun.frozen_at), "ochre benchmark").await).contains("ochre"));
    minutes(&clock, 1);
    let fresh = arbor.start_experiment(&e1, &scope("r7"), SnapshotChoice::New).await.unwrap();
    assert!(fresh.new_snapshot && fresh.frozen_at > frozen_at);
    assert!(pack_text(&ask(&arbor, &run("r7", fresh.frozen_at), "ochre benchmark").await).contains("ochre"));
    assert_eq!(arbor.experiment_snapshots(&e1).await.unwrap(), [frozen_at, fresh.frozen_at]);
    assert_eq!(
        arbor.start_experiment(&e1, &scope("r9"), SnapshotChoice::Latest).await.unwrap().frozen_at,
        fresh.frozen_at
    );
    let never = arbor.start_experiment(&e1, &scope("r10"), SnapshotChoice::Reuse { at: unknown }).await;
    assert_eq!(never.unwrap_err().code(), "invalid");
}

pub async fn decay_demotes_old_episodes_but_never_preferences(ports: Ports) {
    let (arbor, clock) = engine_with(ports, |policy| policy.decay = arbor_domain::decay::DecayPolicy::episodes_age());
    let c1 = conversation(&arbor, "c1", "p1");
    let three_years_ago =
        arbor_ports::Clock::now(&*clock).checked_sub(jiff::SignedDuration::from_hours(3 * 365 * 24)).unwrap();
    // The older memory is the closer match to the question; only its age can demote it.
    let said = |text: &str, id: &str, kind: MemoryKind, observed_at: Option<Timestamp>| {
        let mut event = message(text, id);
        event.hints.kind = Some(kind);
        event.observed_at = observed_at;
        event
    };
    for (kind, prefix) in [(MemoryKind::Event, "e"), (MemoryKind::Preference, "p")] {
        let (old_text, new_text) = match kind {
            MemoryKind::Event => ("We had a picnic by the lake.", "We had a picnic by the river."),
            _ => ("I like tea by the lake.", "I like tea by the river."),
        };
        let (old, _) = remember(&arbor, &c1, said(old_text, &format!("{prefix}1"), kind, Some(three_years_ago))).await;
        minutes(&clock, 1);
        let (new, _) = remember(&arbor, &c1, said(new_text, &format!("{prefix}2"), kind, None)).await;
        let query = if kind == MemoryKind::Event { "picnic by the lake" } else { "tea by the lake" };
        let ids = evidence_ids(&ask(&arbor, &c1, query).await);
        let position = |id: &LeafId| ids.iter().position(|e| e == id.as_str()).expect("both memories answer");
        match kind {
            MemoryKind::Event => assert!(position(&new) < position(&old), "an old episode decays: {ids:?}"),
            _ => assert!(position(&old) < position(&new), "a preference does not decay by time: {ids:?}"),
        }
        // Asked as of three years ago, the old episode has not aged at all.
        let then =
            ask_as_of(&arbor, &c1, query, three_years_ago.checked_add(jiff::SignedDuration::from_hours(1)).unwrap())
                .await;
        assert_eq!(evidence_ids(&then).first().map(String::as_str), Some(old.as_str()));
    }
}

pub async fn unused_candidates_are_archived_never_summarized_and_can_be_restored(ports: Ports) {
    // Any salience short of certain counts as low here, so the heuristic's score is no factor.
    let (arbor, clock) = engine_with(ports, |policy| {
        policy.decay.archive_below_salience = arbor_domain::model::Confidence::saturating(1.0)
    });
    let c1 = conversation(&arbor, "c1", "p1");
    let mut guess = message("Perhaps the user likes the saffron theme.", "a-1");
    guess.actor = Actor::Assistant;
    let (candidate, status) = remember(&arbor, &c1, guess).await;
    assert_eq!(status, LeafStatus::Candidate);
    // Not yet: too recent.
    assert!(arbor.archive_unused_candidates().await.unwrap().is_empty());
    clock.advance_seconds(i64::from(arbor.policy().decay.archive_candidates_after_days) * 86_400);
    assert_eq!(arbor.archive_unused_candidates().await.unwrap(), std::slice::from_ref(&candidate));
    assert!(arbor.pending_review(&c1).await.unwrap().is_empty(), "out of the review queue");
    // Never part of its tree: sealing everything around it does not bring its words back.
    for i in 0..6 {
        minutes(&clock, 1);
        note(
            &arbor,
            &c1,
            &format!(
                "Theme note {i}: the dashboard uses a {} layout.",
                ["grid", "list", "card", "flow", "tile", "stack"][i]
            ),
        )
        .await;
    }
    arbor.run_jobs(None).await.unwrap();
    assert!(!pack_text(&ask(&arbor, &c1, "saffron theme").await).contains("saffron"));
    assert!(!pack_text(&ask(&arbor, &c1, "tell me about the dashboard themes").await).contains("saffron"));
    let scope_of_c1: Vec<Namespace> = c1.namespaces().cloned().collect();
    let set_aside = arbor.ports().store.leaf(&scope_of_c1, &candidate).await.unwrap().unwrap();
    let (namespace, tree) = (set_aside.namespace.clone(), set_aside.tree_id.clone());
    assert!(!arbor.ports().store.tree_summaries(&namespace, &tree).await.unwrap().is_empty(), "its tree was sealed");
    let frontier = arbor.ports().store.frontier(&namespace, &tree).await.unwrap();
    assert!(frontier.iter().all(|node| node.node.to_string() != candidate.to_string()));
    // Brought back, its words are a new candidate (it never was current), freshly proposed so
    // the next pass leaves it, and a person decides; the archived record stays as it was.
    let restored = arbor.restore_archived(&c1, &candidate).await.unwrap();
    assert_eq!(restored.status, LeafStatus::Candidate);
    assert_ne!(restored.leaf_id, candidate);
    let pending: Vec<LeafId> = arbor.pending_review(&c1).await.unwrap().into_iter().map(|i| i.leaf.id).collect();
    assert_eq!(pending, std::slice::from_ref(&restored.leaf_id));
    assert!(arbor.archive_unused_candidates().await.unwrap().is_empty());
    assert_eq!(arbor.ports().store.leaf(&scope_of_c1, &candidate).await.unwrap().unwrap(), set_aside);
    assert_eq!(
        arbor.restore_archived(&c1, &candidate).await.unwrap_err().code(),
        "invalid",
        "its words are live again"
    );
    arbor.confirm(&c1, &restored.leaf_id).await.unwrap();
    assert!(pack_text(&ask(&arbor, &c1, "saffron theme").await).contains("saffron"));
}

/// An embedder that places a text by the topics its words name, under the default model's
/// name (so nothing keyed to the real model is skipped), with similarities a test can reason
/// about (the same topic 1, another 0). With `failing` set, every call fails, as a model that
/// crashed after the earlier statements were indexed.
#[derive(Debug, Default)]
struct TopicEmbedder {
    failing: std::sync::atomic::AtomicBool,
}

const TOPICS: &[&[&str]] =
    &[&["desk", "sales", "renewals", "support"], &["sourdough", "starter", "bread"], &["bike", "car", "commute"]];

#[async_trait::async_trait]
impl Embedder for TopicEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId { name: "all-minilm-l6-v2".into(), dimensions: TOPICS.len() as u32 }
    }

    fn locality(&self) -> Locality {
        Locality::Local
    }

    /// A table lookup, not a model: the comparison by meaning these tests exercise finds the
    /// earlier statements' vectors in the index as soon as they are written.
    fn is_instant(&self) -> bool {
        true
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(arbor_ports::Error::Unavailable { backend: "topic", source: "the model crashed".into() });
        }
        Ok(texts
            .iter()
            .map(|text| {
                let lower = text.to_lowercase();
                let counts: Vec<f32> =
                    TOPICS.iter().map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32).collect();
                let norm = counts.iter().map(|c| c * c).sum::<f32>().sqrt();
                counts.iter().map(|c| if norm > 0.0 { c / norm } else { 0.0 }).collect()
            })
            .collect())
    }
}

/// No decision depends on the embedder or on what the index has caught up with: an update said
/// in words no form reads ("ended up in sales") replaces nothing, with an embedder that would
/// find it close and with one that fails, and the same events give the same outcomes either way.
pub async fn no_decision_depends_on_the_embedder(ports: Ports) {
    // One store, a namespace per run.
    let run = |fail: bool, ports: Ports, namespace: &'static str| async move {
        let embedder = Arc::new(TopicEmbedder::default());
        let mut ports = ports;
        ports.embedder = embedder.clone();
        let (arbor, clock) = engine(ports);
        let global = only(&arbor, namespace);
        minutes(&clock, 1);
        let desk = note(&arbor, &global, "Farah runs the support desk for the Lisbon office.").await;
        note(&arbor, &global, "Farah lives in Braga.").await;
        arbor.run_jobs(None).await.unwrap();
        embedder.failing.store(fail, std::sync::atomic::Ordering::SeqCst);
        minutes(&clock, 60 * 24 * 30);
        let mut outcomes = Vec::new();
        for text in ["Farah ended up in sales, she handles renewals.", "Farah moved to Porto in May."] {
            outcomes.push(write(&arbor, &global, text, None).await.label());
        }
        (outcomes, stored(&arbor, namespace, &desk).await.status)
    };
    let close = run(false, ports.clone(), "project:close").await;
    assert_eq!(close, (vec!["created", "superseding"], LeafStatus::Active), "the desk stays current");
    assert_eq!(run(true, ports, "project:failing").await, close, "the same outcomes whatever the embedder does");
}

/// What a write of `text` into `chain` came to.
async fn write(arbor: &Arbor, chain: &ReadChain, text: &str, observed_at: Option<Timestamp>) -> IngestOutcome {
    let mut event = Event::user_message(text);
    event.observed_at = observed_at;
    arbor.ingest(chain, event).await.expect("ingest").chunks.remove(0).outcome
}

async fn stored(arbor: &Arbor, namespace: &str, id: &LeafId) -> arbor_domain::model::LeafRecord {
    let namespace = Namespace::parse(namespace).expect("a valid namespace");
    arbor.ports().store.leaf(&[namespace], id).await.expect("read").expect("stored")
}

/// Every automatic retirement is listed with its rule and both values, and a person can undo
/// it: the old memory is current again beside the one that retired it, and neither a write
/// nor a consolidation pass retires it for that one again; a restored retirement leaves the
/// list, and a memory no rule retired is refused.
pub async fn an_automatic_retirement_is_listed_undone_and_stays_undone(ports: Ports) {
    use arbor_app::ConsolidateRequest;

    let (arbor, clock) = engine(ports);
    let global = only(&arbor, "global");
    let reader = conversation(&arbor, "c1", "p1");
    minutes(&clock, 1);
    let ankara = note(&arbor, &global, "Elif works at the Ankara branch.").await;
    let languages = note(&arbor, &global, "Elif speaks Turkish and German.").await;
    minutes(&clock, 60 * 24);
    let moved = write_chunk(&arbor, &global, "Elif got transferred to the Izmir branch in June.").await;
    let izmir = moved.outcome.leaf_id().cloned().unwrap();
    assert_eq!(
        moved.replaced.iter().map(|r| (&r.leaf_id, r.attribute.as_str())).collect::<Vec<_>>(),
        [(&ankara, "workplace")]
    );

    let listed = arbor.retired(&global, None, 10).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let item = &listed[0];
    assert_eq!((&item.leaf.id, item.rule, item.attribute.as_str()), (&ankara, "one_value", "workplace"));
    assert_eq!((item.was.as_deref(), item.now.as_deref()), (Some("Ankara branch"), Some("Izmir branch")));
    assert_eq!(item.by.as_ref().map(|b| &b.id), Some(&izmir));
    // Nothing else is retired, and only a rule's retirement can be undone this way.
    assert!(arbor.restore_retired(&global, &languages).await.is_err());

    minutes(&clock, 5);
    let receipt = arbor.restore_retired(&global, &ankara).await.unwrap();
    assert_eq!((&receipt.restored, &receipt.kept_with), (&ankara, &izmir));
    let restored = stored(&arbor, "global", &receipt.leaf_id).await;
    assert_eq!(restored.status, LeafStatus::Active);
    assert_eq!(stored(&arbor, "global", &izmir).await.status, LeafStatus::Active, "both hold");
    assert!(arbor.retired(&global, None, 10).await.unwrap().is_empty(), "undone, no longer listed");
    assert!(arbor.restore_retired(&global, &ankara).await.is_err(), "restored once");
    let pack = pack_text(&ask(&arbor, &reader, "Where does Elif work?").await);
    assert!(pack.contains("Ankara") && pack.contains("Izmir"), "{pack}");

    // It sticks: a pass in hindsight retires neither for the other.
    arbor.run_jobs(None).await.unwrap();
    let pass = arbor.consolidate(&ConsolidateRequest::new(vec![(Namespace::global(), None)], false)).await.unwrap();
    let retiring: Vec<_> =
        pass.namespaces.iter().flat_map(|n| &n.proposals).filter(|p| p.proposal.retire == receipt.leaf_id).collect();
    assert!(retiring.is_empty(), "{pass:#?}");
    assert_eq!(stored(&arbor, "global", &receipt.leaf_id).await.status, LeafStatus::Active);
}

/// The profile: what the memories say now, subject by subject, from their claims — a value a
/// later memory of the same batch replaced is history (and listed as retired), another
/// attribute and an added value stay current, a person's relative is another subject, the
/// subject asked for is the only one answered, and a reader outside the namespace learns
/// nothing.
pub async fn the_profile_says_what_is_current_and_what_it_replaced(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let project = conversation(&arbor, "c1", "p1");
    let outsider = conversation(&arbor, "c2", "p2");
    // Said over the last weeks, a week apart, in one batch.
    let now = minutes(&clock, 60 * 24 * 60);
    let day = |d: i64| Some(now - jiff::SignedDuration::from_hours(24 * 7 * (7 - d)));
    let said = [
        ("Elif works at the Ankara branch.", day(1)),
        ("Kofi speaks Twi and English.", day(2)),
        ("Kofi's sister lives in Kumasi.", day(2)),
        ("I live in Leeds.", day(3)),
        ("Kofi is learning Portuguese now.", day(4)),
        ("Elif got transferred to the Izmir branch in June.", day(6)),
    ];
    let events =
        said.iter().map(|(text, at)| Event { observed_at: *at, ..Event::user_message(*text) }).collect::<Vec<_>>();
    let written = arbor.ingest_batch(&project, events).await.expect("ingest");
    assert!(written.iter().all(Result::is_ok), "{written:?}");

    let profile = arbor.profile(&project, None).await.unwrap();
    let keys: Vec<&str> = profile.subjects.iter().map(|s| s.subject.key.as_str()).collect();
    assert_eq!(keys, ["@me", "elif", "kofi", "kofi's sister"], "{profile:#?}");
    let fact = |subject: &str, attribute: &str| {
        let subject = profile.subjects.iter().find(|s| s.subject.key == subject).unwrap();
        subject.facts.iter().find(|f| f.attribute == attribute).cloned().unwrap()
    };
    let work = fact("elif", "workplace");
    assert_eq!(work.current.iter().map(|v| v.value.as_str()).collect::<Vec<_>>(), ["Izmir branch"]);
    assert_eq!(work.history.iter().map(|h| h.value.as_deref()).collect::<Vec<_>>(), [Some("Ankara branch")]);
    assert_eq!(work.history[0].changed_at, day(6).unwrap());
    let mut languages: Vec<String> = fact("kofi", "languages").current.into_iter().map(|v| v.value).collect();
    languages.sort();
    assert_eq!(languages, ["English", "Twi"], "learning Portuguese adds, and replaces nothing");
    assert_eq!(fact("kofi's sister", "residence").current[0].value, "Kumasi");
    assert_eq!(fact("@me", "residence").current[0].value, "Leeds");
    // The in-batch retirement is listed and undoable like any other.
    let retired = arbor.retired(&project, None, 10).await.unwrap();
    assert_eq!(retired.iter().map(|r| r.was.as_deref()).collect::<Vec<_>>(), [Some("Ankara branch")]);

    let kofi = arbor.profile(&project, Some("Kofi")).await.unwrap();
    assert_eq!(kofi.subjects.iter().map(|s| s.subject.key.as_str()).collect::<Vec<_>>(), ["kofi"]);
    // A question about the whole subject gets the profile at the top of its pack; one about an
    // attribute does not.
    let pack = ask(&arbor, &project, "What do you know about Kofi?").await;
    assert!(
        pack.profile.iter().any(|l| l.contains("Twi")) && pack.profile.iter().any(|l| l.contains("Portuguese")),
        "{:?}",
        pack.profile
    );
    assert!(pack.compact(Default::default()).render().starts_with("What memory believes now"));
    assert!(ask(&arbor, &project, "Where does Kofi's sister live?").await.profile.is_empty());
    assert!(ask(&arbor, &outsider, "What do you know about Kofi?").await.profile.is_empty());
    assert!(arbor.profile(&outsider, None).await.unwrap().subjects.is_empty(), "nothing outside the chain");
    assert!(arbor.profile(&outsider, Some("Elif")).await.unwrap().subjects.is_empty());
}

/// What a write of `text` into `chain` came to, whole: the outcome with what it replaced and
/// what it doubted.
async fn write_chunk(arbor: &Arbor, chain: &ReadChain, text: &str) -> arbor_app::ChunkResult {
    arbor.ingest(chain, Event::user_message(text)).await.expect("ingest").chunks.remove(0)
}

/// Reconciliation by claims at write time, with no hints: a change of one person's attribute
/// that holds one value, phrased in passing, retires the current memory wherever it was filed
/// (history kept, its validity closed where the new one starts, the retirement marked with
/// its rule) and the save's reply names it; a memory that says more than the replaced claim
/// ("with her two cats") stays current, marked as possibly outdated, and comes back after the
/// newer one; saying it again is a no-op; an older statement waits as a conflict; an additive
/// fact, a visit, a hedge and another person's similar fact replace and doubt nothing.
pub async fn updates_phrased_in_passing_replace_only_what_they_update(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let global = only(&arbor, "global");
    let reader = conversation(&arbor, "c1", "p1");
    minutes(&clock, 1);
    let porto = note(&arbor, &global, "Maya lives in Porto with her two cats.").await;
    let peanuts = note(&arbor, &global, "Maya is allergic to peanuts.").await;
    let jazz = note(&arbor, &global, "Bea likes jazz.").await;
    let dublin = note(&arbor, &global, "Grace lives in Dublin.").await;
    let manager = note(&arbor, &global, "Omar's manager is Linda Park.").await;
    minutes(&clock, 60 * 24 * 30);

    // Proof, and more said than the proof covers: doubted, not retired.
    let moved = write_chunk(&arbor, &global, "Maya just moved to Amsterdam for her new job.").await;
    let amsterdam = moved.outcome.leaf_id().cloned().unwrap();
    assert!(matches!(moved.outcome, IngestOutcome::Created { status: LeafStatus::Active, .. }), "{moved:?}");
    assert_eq!(moved.doubted.iter().map(|d| &d.leaf_id).collect::<Vec<_>>(), [&porto], "{moved:?}");
    let old = stored(&arbor, "global", &porto).await;
    assert_eq!(old.status, LeafStatus::Active, "the cats are still true");
    assert_eq!(old.claims.doubt.as_ref().map(|d| (&d.by, d.attribute.as_str())), Some((&amsterdam, "residence")));
    // Proof of one value replaced: retired, marked, and named in the reply.
    let (hedge, visit) = ("Grace might move to Cork next year.", "Grace visited Berlin for a conference in February.");
    for text in [hedge, visit] {
        let outcome = write_chunk(&arbor, &global, text).await;
        assert!(outcome.replaced.is_empty() && outcome.doubted.is_empty(), "{text}: {outcome:?}");
    }
    let galway = write_chunk(&arbor, &global, "Grace moved to Galway in March.").await;
    match &galway.outcome {
        IngestOutcome::Superseding { replaces, status: LeafStatus::Active, because, .. } => {
            assert_eq!(replaces, &dublin);
            let arbor_app::Because::Retired(retirement) = because else { panic!("a rule, not a hint: {because}") };
            assert_eq!((retirement.old.subject.key.as_str(), retirement.attribute.as_str()), ("grace", "residence"));
            assert!(because.to_string().starts_with("grace · residence: was"), "{because}");
        }
        other => panic!("expected Dublin to be replaced, got {other:?}"),
    }
    assert_eq!(galway.replaced[0].was.as_deref(), Some("Dublin"), "{galway:?}");
    let (new, old) =
        (stored(&arbor, "global", galway.outcome.leaf_id().unwrap()).await, stored(&arbor, "global", &dublin).await);
    assert_eq!(old.status, LeafStatus::Superseded);
    assert_eq!(old.validity.valid_to, new.validity.valid_from, "history ends where the update starts");
    let mark = old.claims.retired.as_ref().expect("the retirement is marked");
    assert_eq!((mark.rule.as_str(), mark.attribute.as_str()), ("one_value", "residence"));
    // A single-valued attribute given a new value replaces it without a cue.
    match write(&arbor, &global, "After the reorg Omar reports to Daniel Wu.", None).await {
        IngestOutcome::Superseding { replaces, status: LeafStatus::Active, .. } => assert_eq!(replaces, manager),
        other => panic!("expected the manager to be replaced, got {other:?}"),
    }

    // Noop: the same words again.
    let again = write(&arbor, &global, "Maya just moved to Amsterdam for her new job.", None).await;
    assert!(matches!(&again, IngestOutcome::NoopDuplicate { existing, .. } if existing == &amsterdam), "{again:?}");

    // Conflict: a statement observed before the current one waits for a person.
    let earlier = stored(&arbor, "global", &amsterdam)
        .await
        .observed_at
        .checked_sub(jiff::SignedDuration::from_hours(24 * 7))
        .unwrap();
    match write(&arbor, &global, "Maya moved to Paris for a while.", Some(earlier)).await {
        IngestOutcome::Superseding { replaces, status: LeafStatus::Candidate, .. } => assert_eq!(replaces, amsterdam),
        other => panic!("expected a conflict candidate, got {other:?}"),
    }

    // Add: what only adds or is about someone else replaces nothing.
    for text in [
        "Bea also likes classical music, especially Bach.",
        "Ivo just moved to Amsterdam too, for a new job.",
        "Ivo's sister moved to Porto last spring.",
    ] {
        let outcome = write_chunk(&arbor, &global, text).await;
        assert!(
            matches!(outcome.outcome, IngestOutcome::Created { status: LeafStatus::Active, .. }),
            "{text}: {outcome:?}"
        );
        assert!(outcome.doubted.is_empty(), "{text}: {outcome:?}");
    }
    for id in [&peanuts, &jazz, &amsterdam, &porto] {
        assert_eq!(stored(&arbor, "global", id).await.status, LeafStatus::Active, "{id} stays current");
    }

    // Both come back, the newer first, the older marked.
    let lives = ask(&arbor, &reader, "Where does Maya live?").await;
    let at = |id: &LeafId| lives.evidence.iter().position(|e| e.node_id == NodeId::Leaf(id.clone()));
    assert!(at(&amsterdam) < at(&porto) && at(&porto).is_some(), "{:?}", evidence_ids(&lives));
    let marked = &lives.evidence[at(&porto).unwrap()];
    assert_eq!(marked.possibly_outdated_by.as_ref(), Some(&amsterdam));
    assert_eq!(marked.outdated_attribute.as_deref(), Some("residence"));
    assert!(!pack_text(&lives).contains("Paris"), "a conflict waits for a person");
    let allergy = pack_text(&ask(&arbor, &reader, "Is Maya allergic to anything?").await);
    assert!(allergy.contains("peanuts"), "{allergy}");
    let boss = pack_text(&ask(&arbor, &reader, "Who is Omar's manager?").await);
    assert!(boss.contains("Daniel Wu") && !boss.contains("Linda Park"), "{boss}");
}

/// Chinese through the whole pipeline on every backend: memories found by their words (the
/// one analyzer cuts them with the segmenter), a change said in passing replacing what it
/// updates and nothing else, a secret and a conversation's chit-chat not kept, a sensitive
/// matter marked, and a question naming a day finding the memory that mentions it.
pub async fn chinese_is_searched_by_its_words_kept_refused_and_updated(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let global = only(&arbor, "global");
    let reader = conversation(&arbor, "c1", "p1");
    minutes(&clock, 1);
    let beijing = note(&arbor, &global, "王芳住在北京，在一家律所上班。").await;
    let tennis = note(&arbor, &global, "陈默每周六上午打网球。").await;
    note(&arbor, &global, "星河项目的发布日期定在9月3日。").await;
    let run_day = minutes(&clock, 60 * 24 * 10);
    note(&arbor, &global, "小李昨天在西湖边跑了十公里。").await;
    minutes(&clock, 60 * 24 * 20);

    // Entities come from Chinese names: 王芳's memories share a tree of hers.
    let her_tree = stored(&arbor, "global", &beijing).await.tree_id;
    assert_ne!(her_tree.as_str(), "interaction:uncategorized", "a tree for 王芳");
    let lives = pack_text(&ask(&arbor, &reader, "王芳住在哪里？").await);
    assert!(lives.contains("北京"), "{lives}");
    let release = pack_text(&ask(&arbor, &reader, "星河什么时候发布？").await);
    assert!(release.contains("9月3日"), "{release}");

    // 王芳's memory says where she works too: the move doubts it, and retires nothing.
    let moved = write_chunk(&arbor, &global, "王芳上个月搬去了成都。").await;
    assert_eq!(
        moved.doubted.iter().map(|d| (&d.leaf_id, d.attribute.as_str())).collect::<Vec<_>>(),
        [(&beijing, "residence")],
        "{moved:?}"
    );
    // A memory of one fact is retired by the next value.
    let shenzhen = note(&arbor, &global, "陈默住在深圳。").await;
    match write(&arbor, &global, "陈默搬到了广州。", None).await {
        IngestOutcome::Superseding { replaces, status: LeafStatus::Active, because, .. } => {
            assert_eq!(replaces, shenzhen);
            let arbor_app::Because::Retired(retirement) = &because else { panic!("a rule, not a hint: {because}") };
            assert_eq!((retirement.old.subject.key.as_str(), retirement.attribute.as_str()), ("陈默", "residence"));
        }
        other => panic!("expected Shenzhen to be replaced, got {other:?}"),
    }
    // A plan, an addition, and someone else's move replace nothing.
    for text in ["王芳下个月可能去上海出差。", "陈默也喜欢游泳。", "王芳的妹妹搬到了杭州。"]
    {
        let outcome = write(&arbor, &global, text, None).await;
        assert!(matches!(outcome, IngestOutcome::Created { status: LeafStatus::Active, .. }), "{text}: {outcome:?}");
    }
    assert_eq!(stored(&arbor, "global", &tennis).await.status, LeafStatus::Active);
    let doubted = stored(&arbor, "global", &beijing).await;
    assert_eq!((doubted.tree_id, doubted.status), (her_tree, LeafStatus::Active), "kept in her tree, current");
    let lives = ask(&arbor, &reader, "王芳现在住在哪里？").await;
    assert!(pack_text(&lives).contains("成都"), "{}", pack_text(&lives));
    let beijing_item = lives.evidence.iter().find(|e| e.node_id == NodeId::Leaf(beijing.clone()));
    assert!(beijing_item.is_none_or(|e| e.possibly_outdated_by.is_some()), "Beijing only marked: {lives:?}");
    let chen = pack_text(&ask(&arbor, &reader, "陈默住在哪里？").await);
    assert!(chen.contains("广州") && !chen.contains("深圳"), "{chen}");

    // A password is refused as in English; chit-chat in a conversation is not kept.
    for text in ["我的密码是 hunter2xyz", "好的谢谢"] {
        let report = arbor.ingest(&reader, message(text, &format!("m-{}", text.len()))).await.expect("ingest");
        assert!(matches!(report.chunks[0].outcome, IngestOutcome::NotAdmitted { .. }), "{text}: {report:?}");
    }
    let health = note(&arbor, &global, "医生诊断我有轻度抑郁。").await;
    assert_eq!(stored(&arbor, "global", &health).await.sensitivity, Sensitivity::Sensitive);

    // "前天", asked the day after the run was mentioned as "昨天", is the day of the run.
    let asked = run_day.checked_add(jiff::SignedDuration::from_hours(24)).unwrap();
    let ran = pack_text(&ask_as_of(&arbor, &reader, "小李前天做了什么？", asked).await);
    assert!(ran.contains("十公里"), "{ran}");
}

/// An assistant's suggestion, a candidate until a person confirms it.
async fn suggest(arbor: &Arbor, chain: &ReadChain, text: &str, id: &str) -> LeafId {
    let mut suggestion = message(text, id);
    suggestion.actor = Actor::Assistant;
    let (leaf, status) = remember(arbor, chain, suggestion).await;
    assert_eq!(status, LeafStatus::Candidate, "{text}");
    leaf
}

/// When reconciliation has not caught up — here an assistant's suggestion, waiting for a
/// person when the update was written (so nothing current was there to replace), is confirmed
/// afterwards — two current memories about one entity's attribute that disagree come back
/// newest first, the older marked as possibly outdated by the newer and not offered as a known
/// fact.
pub async fn disagreeing_current_memories_rank_the_newer_first_and_flag_the_older(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let global = only(&arbor, "global");
    let reader = conversation(&arbor, "c1", "p1");
    minutes(&clock, 1);
    let older = suggest(&arbor, &global, "Omar's manager is Linda Park.", "a-1").await;
    minutes(&clock, 60 * 24);
    let newer = note(&arbor, &global, "After the reorg Omar reports to Daniel Wu.").await;
    minutes(&clock, 5);
    assert_eq!(arbor.confirm(&global, &older).await.unwrap().status, LeafStatus::Active);
    let jobs = arbor.run_jobs(None).await.unwrap();
    assert_eq!(jobs.failed, 0, "{jobs:?}");

    let pack = ask(&arbor, &reader, "Who is Omar's manager?").await;
    let at = |id: &LeafId| pack.evidence.iter().position(|e| e.node_id.as_leaf() == Some(id));
    let (new_at, old_at) = (at(&newer).expect("the newer is evidence"), at(&older).expect("the older too"));
    assert!(new_at < old_at, "the newer ranks first: {:#?}", pack.evidence);
    assert_eq!(pack.evidence[old_at].possibly_outdated_by.as_ref(), Some(&newer));
    assert_eq!(pack.evidence[new_at].possibly_outdated_by, None);
    assert!(pack.known_facts.iter().all(|f| !f.contains("Linda Park")), "{:?}", pack.known_facts);
    assert!(pack.gaps.iter().any(|g| g.contains("may be outdated") && g.contains(newer.as_str())), "{:?}", pack.gaps);
}

/// An engine whose writes are indexed only by the job runner, so a write's duplicate judgement
/// (which searches its tree's full text) cannot find the one before it.
fn engine_indexing_later(mut ports: Ports) -> (Arbor, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(start()));
    ports.clock = clock.clone();
    ports.ids = Arc::new(arbor_ports::SequentialIds::default());
    let options = arbor_app::Options { index_inline: false, ..arbor_app::Options::default() };
    (Arbor::new(ports, arbor_app::Policy::default(), options), clock)
}

/// Consolidation ("dream") over what was written since the last pass, catching what writes
/// missed — suggestions a person confirmed after their update was written, a repeat written
/// before its twin was indexed: it merges the repeat, supersedes an update and invalidates
/// what a later memory ends, all as history (nothing deleted, validity closed where the
/// successor starts); a replacement from a memory said to hold from before the one it would
/// replace waits for a person; a dry run changes nothing; a second pass changes nothing; the
/// report names every change; fsck stays clean.
pub async fn consolidation_catches_what_writes_missed_once_never_deletes_and_reports_every_change(ports: Ports) {
    use arbor_app::ConsolidateRequest;

    let (arbor, clock) = engine_indexing_later(ports);
    let global = only(&arbor, "global");
    let namespace = Namespace::global();
    minutes(&clock, 1);
    let porto = suggest(&arbor, &global, "Maya lives in Porto.", "a-1").await;
    let peanuts = note(&arbor, &global, "Maya and Tom are allergic to peanuts.").await;
    let dating = suggest(&arbor, &global, "Nora is dating Felix.", "a-2").await;
    let manager = suggest(&arbor, &global, "Omar's manager is Linda Park.", "a-3").await;
    minutes(&clock, 60 * 24);
    let amsterdam = note(&arbor, &global, "Maya just moved to Amsterdam for her new job.").await;
    let single = note(&arbor, &global, "Nora and Felix broke up in August; she is single now.").await;
    // A repeat written before its twin was indexed, and a replacement said to hold from before
    // the fact it would replace.
    let repeat = note(&arbor, &global, "Tom and Maya are allergic to peanuts.").await;
    let mut backdated = Event::user_message("After the reorg Omar reports to Daniel Wu.");
    backdated.hints.valid_from = Some(start().checked_sub(jiff::SignedDuration::from_hours(24 * 30)).unwrap());
    let (reorg, status) = remember(&arbor, &global, backdated).await;
    assert_eq!(status, LeafStatus::Active);
    minutes(&clock, 5);
    for suggestion in [&porto, &dating, &manager] {
        assert_eq!(arbor.confirm(&global, suggestion).await.unwrap().status, LeafStatus::Active);
    }
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let before = arbor.ports().store.counts().await.unwrap();
    let everything = [&porto, &peanuts, &dating, &manager, &amsterdam, &single, &repeat, &reorg];

    let request = |mark| ConsolidateRequest::new(vec![(namespace.clone(), mark)], false);
    let dry = arbor.consolidate(&ConsolidateRequest { dry_run: true, ..request(None) }).await.unwrap();
    assert_eq!((dry.applied(), dry.left_for_review()), (3, 1), "{dry:#?}");
    for id in everything {
        assert_eq!(stored(&arbor, "global", id).await.status, LeafStatus::Active, "a dry run changes nothing");
    }

    let run = arbor.consolidate(&request(None)).await.unwrap();
    let pass = &run.namespaces[0];
    let changes: Vec<(&str, &LeafId, &LeafId, bool)> = pass
        .proposals
        .iter()
        .map(|p| (p.proposal.kind.as_str(), &p.proposal.retire, &p.proposal.keep, p.applied))
        .collect();
    assert_eq!(
        changes,
        [
            ("update", &porto, &amsterdam, true),
            ("merge", &peanuts, &repeat, true),
            ("invalidate", &dating, &single, true),
            ("update", &manager, &reorg, false),
        ]
    );
    for (old, new) in [(&porto, &amsterdam), (&peanuts, &repeat), (&dating, &single)] {
        let (old, new) = (stored(&arbor, "global", old).await, stored(&arbor, "global", new).await);
        assert_eq!((old.status, old.superseded_by.as_ref()), (LeafStatus::Superseded, Some(&new.id)));
        assert_eq!(old.validity.valid_to, new.validity.valid_from, "history ends where its successor starts");
        assert_eq!(new.status, LeafStatus::Active);
    }
    assert_eq!(stored(&arbor, "global", &manager).await.status, LeafStatus::Active, "the import waits for a person");
    let after = arbor.ports().store.counts().await.unwrap();
    let total = |counts: &arbor_ports::StoreCounts| counts.leaves_by_status.iter().map(|(_, n)| n).sum::<usize>();
    assert_eq!(total(&after), total(&before), "nothing is deleted");

    // The report names every change, and holds none of the memories' words.
    let report = run.to_markdown();
    for id in everything {
        assert!(report.contains(id.as_str()), "{id} is named: {report}");
    }
    assert!(report.contains("Left for review") && report.contains("holds from before"), "{report}");
    for word in ["Porto", "Amsterdam", "peanuts", "Felix", "Linda", "Daniel"] {
        assert!(!report.contains(word), "the report holds no memory text ({word}): {report}");
    }
    let marks = arbor_app::report_marks(&report).expect("a report");
    assert_eq!(marks, vec![(namespace.clone(), pass.through.clone().unwrap())]);

    // From the mark, a pass re-reads only the last minutes before it (writes committed late)
    // and changes nothing; from the start, it changes nothing either.
    let again = arbor.consolidate(&request(pass.through.clone())).await.unwrap();
    assert_eq!((again.applied(), again.left_for_review()), (0, 1), "{again:#?}");
    assert!(again.namespaces[0].read < pass.read, "{again:#?}");
    let from_scratch = arbor.consolidate(&request(None)).await.unwrap();
    assert_eq!((from_scratch.applied(), from_scratch.left_for_review()), (0, 1), "{from_scratch:#?}");
    assert_eq!(total(&arbor.ports().store.counts().await.unwrap()), total(&before));

    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let fsck = arbor.fsck(false, &|_| true).await.unwrap();
    assert!(fsck.is_clean(), "{:?}", fsck.findings);
    let pack = pack_text(&ask(&arbor, &conversation(&arbor, "c1", "p1"), "Where does Maya live?").await);
    assert!(pack.contains("Amsterdam") && !pack.contains("lives in Porto"), "{pack}");

    // A person who finds a retirement wrong restores the retired memory: a new version of it,
    // current again, beside the memory that retired it (another memory, which stays as it is);
    // a caller who saw another version is refused.
    let retired = stored(&arbor, "global", &porto).await;
    let stale = arbor.restore(&global, &porto, arbor_domain::id::Version::new(7).unwrap()).await.unwrap_err();
    assert_eq!(stale.code(), "stale_version", "{stale}");
    let restored = arbor.restore(&global, &porto, retired.version).await.unwrap();
    assert_eq!(
        (restored.status, restored.version, &restored.replaces),
        (LeafStatus::Active, retired.version.get() + 1, &porto)
    );
    assert_eq!(stored(&arbor, "global", &restored.leaf_id).await.lineage, retired.lineage);
    assert_eq!(stored(&arbor, "global", &amsterdam).await.status, LeafStatus::Active, "the other memory stays");
    assert_eq!(stored(&arbor, "global", &porto).await, retired, "history is not rewritten");
    // Revived, the memory has a current version again: restoring the old one once more
    // corrects that version (never a second revival beside it), bound to it.
    let again = arbor.restore(&global, &porto, retired.version).await.unwrap_err();
    assert_eq!(again.code(), "stale_version", "{again}");
    let twice = arbor.restore(&global, &porto, arbor_domain::id::Version::new(restored.version).unwrap()).await;
    let unchanged = twice.unwrap_err();
    assert!(unchanged.to_string().contains("the same as"), "the same text again: {unchanged}");
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let pack = pack_text(&ask(&arbor, &conversation(&arbor, "c1", "p1"), "Where does Maya live?").await);
    assert!(pack.contains("lives in Porto") && pack.contains("Amsterdam"), "{pack}");
}

/// One tree per subject, even in hindsight: memories that name someone before anyone is a
/// subject land in the fallback bucket; when the entity comes into being, they move into its
/// tree as new versions (the old placement kept as history, validity untouched), one current
/// leaf each; a memory filed under another entity stays; the jobs seal both trees again and
/// fsck is clean.
pub async fn an_entity_brings_the_memories_filed_before_it_into_its_tree(ports: Ports) {
    let (arbor, clock) = engine(ports);
    let global = only(&arbor, "global");
    minutes(&clock, 1);
    let (early, _) = remember(&arbor, &global, Event::user_message("Omar's manager is Linda Park.")).await;
    let (aside, _) = remember(&arbor, &global, Event::user_message("the team offsite is in Lisbon")).await;
    let bucket = stored(&arbor, "global", &early).await.tree_id;
    assert!(bucket.is_uncategorized(), "no subject yet: {bucket}");
    let (_, _) = remember(&arbor, &global, Event::user_message("Dana prefers morning meetings with Omar.")).await;
    minutes(&clock, 5);
    let report = arbor.ingest(&global, Event::user_message("Omar prefers tea to coffee.")).await.unwrap();
    let omar_tree = report.chunks[0].tree_id.clone().expect("filed");
    assert_eq!(omar_tree.slug(), "omar");

    let old = stored(&arbor, "global", &early).await;
    assert_eq!(old.status, LeafStatus::Superseded, "the old placement is history");
    assert_eq!(old.validity.valid_to, old.validity.valid_from, "the new placement holds it for all its time");
    let moved = stored(&arbor, "global", old.superseded_by.as_ref().expect("moved")).await;
    assert_eq!((moved.tree_id.clone(), moved.status, moved.version.get()), (omar_tree.clone(), LeafStatus::Active, 2));
    assert_eq!(
        (moved.lineage.clone(), moved.observed_at, moved.validity.valid_from, moved.validity.valid_to),
        (old.lineage.clone(), old.observed_at, old.validity.valid_from, None)
    );
    assert_eq!(stored(&arbor, "global", &aside).await.status, LeafStatus::Active, "what does not name him stays");

    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let fsck = arbor.fsck(false, &|_| true).await.unwrap();
    assert!(fsck.is_clean(), "{:?}", fsck.findings);
    let pack = ask(&arbor, &conversation(&arbor, "c1", "p1"), "Who is Omar's manager?").await;
    let found: Vec<_> = pack.evidence.iter().filter(|e| e.text.contains("Linda Park")).collect();
    assert_eq!(found.len(), 1, "one current leaf: {:#?}", pack.evidence);
    assert_eq!(found[0].tree_id, omar_tree);

    // Forgetting the memory forgets its placement in the fallback bucket too: every version,
    // in whichever tree it lies.
    let receipt = arbor.forget(&global, &moved.id).await.unwrap();
    assert!(receipt.versions.contains(&old.id), "{receipt:?}");
    arbor.run_jobs(None).await.unwrap();
    let ports = arbor.ports();
    for found in [
        ports.store.contains_text("Linda Park").await,
        ports.index.contains_text("Linda Park").await,
        ports.bodies.contains_text("Linda Park").await,
    ] {
        assert!(!found.unwrap(), "no word of a forgotten memory is left");
    }
}

/// Health [design §health] on a store built to have known figures: a repeat written before its
/// twin was indexed is a duplicate (the later one), a correction leaves one version of
/// history, a suggestion waits for a person and is warned about once it has waited past the
/// threshold, a forget under a sealed summary leaves that summary waiting to be sealed again
/// until the job runner has run, every body's bytes are counted, and a consolidation pass
/// takes the duplicate away.
pub async fn health_counts_duplicates_history_stale_summaries_waiting_suggestions_and_bytes(ports: Ports) {
    use arbor_domain::health::Warning;

    let clock = Arc::new(ManualClock::new(start()));
    let mut ports = ports;
    ports.clock = clock.clone();
    ports.ids = Arc::new(arbor_ports::SequentialIds::default());
    let policy = arbor_app::Policy {
        seal: arbor_domain::seal::SealPolicy::new(3).expect("valid"),
        ..arbor_app::Policy::default()
    };
    let options = arbor_app::Options { index_inline: false, ..arbor_app::Options::default() };
    let arbor = Arbor::new(ports, policy, options);
    let global = only(&arbor, "global");
    let namespace = Namespace::global();

    minutes(&clock, 1);
    let peanuts = note(&arbor, &global, "Maya and Tom are allergic to peanuts.").await;
    let restarts = note(&arbor, &global, "The staging database restarts every night at two.").await;
    let billing = note(&arbor, &global, "The billing service ships on Fridays after lunch.").await;
    note(&arbor, &global, "The backups are copied to the cold bucket every Sunday.").await;
    minutes(&clock, 1);
    let repeat = note(&arbor, &global, "Tom and Maya are allergic to peanuts.").await;
    let _waiting = suggest(&arbor, &global, "The office coffee machine is broken again.", "a-1").await;
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let correction = arbor_app::Correction::by_person(
        restarts.clone(),
        Version::FIRST,
        "The staging database restarts every night at three.",
    );
    arbor.correct(&global, &correction).await.unwrap();
    // The correction changed a sealed leaf: its summary waits to be sealed again.
    let report = arbor.health(&[]).await.unwrap();
    assert_eq!(report.namespaces.len(), 1);
    let figures = &report.namespaces[0].figures;
    assert_eq!(report.namespaces[0].namespace, namespace);
    assert_eq!(
        (figures.active, figures.superseded, figures.candidates, figures.duplicates, figures.summaries_awaiting_reseal),
        (5, 1, 1, 1, 1),
        "{report:#?}"
    );
    assert_eq!(figures.duplicate_rate(), 0.2);
    assert!(figures.summaries >= 1);
    assert_eq!(figures.body_bytes, bytes_of_every_body(&arbor).await, "every body, every version");
    let kinds = |warnings: &[Warning]| warnings.iter().map(std::mem::discriminant).collect::<Vec<_>>();
    let duplicates = std::mem::discriminant(&Warning::Duplicates { rate: 0.0, duplicates: 0 });
    let stale = std::mem::discriminant(&Warning::StaleSummaries { share: 0.0, awaiting: 0 });
    assert_eq!(kinds(&report.namespaces[0].warnings), [duplicates, stale], "{report:#?}");
    let mut trees = arbor_domain::health::Figures::default();
    for tree in &report.namespaces[0].trees {
        trees.absorb(&tree.figures);
    }
    assert_eq!(&trees, figures, "a namespace is the sum of its trees");
    assert_eq!(&report.total, figures);

    // Twenty days on, the job runner has sealed again; the suggestion has waited too long.
    minutes(&clock, 20 * 24 * 60);
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let report = arbor.health(&[]).await.unwrap();
    let figures = &report.namespaces[0].figures;
    assert_eq!(figures.summaries_awaiting_reseal, 0, "{report:#?}");
    assert_eq!(
        report.namespaces[0].warnings,
        [
            Warning::Duplicates { rate: 0.2, duplicates: 1 },
            Warning::WaitingCandidates { oldest_days: 20, candidates: 1 }
        ]
    );

    // A consolidation pass merges the repeat (history grows); a forget takes its bytes along.
    let pass = arbor_app::ConsolidateRequest::new(vec![(namespace.clone(), None)], false);
    assert_eq!(arbor.consolidate(&pass).await.unwrap().applied(), 1);
    arbor.forget(&global, &billing).await.unwrap();
    assert_eq!(arbor.run_jobs(None).await.unwrap().failed, 0);
    let report = arbor.health(std::slice::from_ref(&namespace)).await.unwrap();
    let figures = &report.namespaces[0].figures;
    assert_eq!((figures.active, figures.superseded, figures.duplicates), (3, 2, 0), "{report:#?}");
    assert_eq!(figures.body_bytes, bytes_of_every_body(&arbor).await);
    assert_eq!(stored(&arbor, "global", &peanuts).await.status, LeafStatus::Superseded, "merged into its repeat");
    assert_eq!(stored(&arbor, "global", &repeat).await.status, LeafStatus::Active);

    // A namespace the store does not hold is empty, not an error.
    let other = arbor.health(&[Namespace::parse("project:nothing-here").unwrap()]).await.unwrap();
    assert_eq!(other.namespaces[0].figures, arbor_domain::health::Figures::default());
}

/// The bytes of every body document the store holds.
async fn bytes_of_every_body(arbor: &Arbor) -> u64 {
    let bodies = &arbor.ports().bodies;
    let mut total = 0;
    for path in bodies.list(arbor_domain::paths::MEMORY_DIR).await.unwrap() {
        total += bodies.read_unverified(&path).await.unwrap().len() as u64;
    }
    total
}

/// The daily view [design §daily] on every backend: one day's current memories across the
/// trees and layers a chain reads — not another conversation's, not a suggestion waiting for a
/// person, not the day before or after, not a version since replaced — the day taken at the
/// reader's UTC offset, and decisions and tasks first among its highlights.
pub async fn the_daily_view_holds_one_day_of_what_the_chain_reads(ports: Ports) {
    use arbor_domain::daily::Day;

    let (arbor, _clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let c2 = conversation(&arbor, "c2", "p1");
    let p1 = chain(&arbor, TrustedContext::Project { project: scope("p1") });
    let said = |text: &str, at: &str| {
        let mut event = Event::user_message(text);
        event.observed_at = Some(at.parse().unwrap());
        event
    };
    let (dana, _) =
        remember(&arbor, &c1, said("Dana prefers morning meetings before 10am.", "2026-05-08T09:00:00Z")).await;
    let (decided, _) =
        remember(&arbor, &c1, said("We decided to ship Atlas behind a flag per region.", "2026-05-08T11:00:00Z")).await;
    let (runbook, _) =
        remember(&arbor, &p1, said("The p1 runbook lives in the juniper wiki.", "2026-05-08T13:00:00Z")).await;
    let (late, _) =
        remember(&arbor, &c1, said("The quarterly review went well overall.", "2026-05-08T23:30:00Z")).await;
    // Not that day's, or not the chain's, or not current.
    remember(&arbor, &c1, said("The staging cluster was rebuilt from scratch.", "2026-05-07T23:59:00Z")).await;
    remember(&arbor, &c1, said("The billing service ships on Fridays.", "2026-05-09T00:00:01Z")).await;
    // The day's last instant is the day's; the next midnight is the next day's.
    let (last, _) =
        remember(&arbor, &c1, said("The night build finished green.", "2026-05-08T23:59:59.999999999Z")).await;
    remember(&arbor, &c1, said("The office opens late on the ninth.", "2026-05-09T00:00:00Z")).await;
    // A restricted memory of that day is not shown.
    let mut private = said("My therapist moved our session to Friday.", "2026-05-08T16:00:00Z");
    private.hints.sensitivity = Some(Sensitivity::Restricted);
    remember(&arbor, &c1, private).await;
    remember(&arbor, &c2, said("Quentin keeps bees in Porto.", "2026-05-08T10:00:00Z")).await;
    let mut suggestion = said("Maybe the team should try pair programming.", "2026-05-08T12:00:00Z");
    suggestion.actor = Actor::Assistant;
    suggestion.source = SourceRef::Message { conversation: None, message_id: "a-1".to_owned() };
    let (waiting, status) = remember(&arbor, &c1, suggestion).await;
    assert_eq!(status, LeafStatus::Candidate);
    let (replaced, _) =
        remember(&arbor, &c1, said("The office plant needs water every Monday.", "2026-05-08T15:00:00Z")).await;
    let fix =
        arbor_app::Correction::by_person(replaced.clone(), Version::FIRST, "The office plant needs water on Tuesdays.");
    let corrected = arbor.correct(&c1, &fix).await.unwrap().leaf_id;

    let view = arbor.daily(&c1, Day::parse("2026-05-08", None).unwrap(), 50).await.unwrap();
    let listed: Vec<&LeafId> = view.memories.iter().map(|m| &m.id).collect();
    // The correction is observed when the person made it, not on the 8th.
    assert_eq!(listed, [&last, &late, &runbook, &decided, &dana], "newest first: {view:#?}");
    assert!(!format!("{view:?}").contains("therapist"), "restricted memories stay out");
    assert!(!listed.contains(&&waiting) && !listed.contains(&&replaced) && !listed.contains(&&corrected));
    assert!(!format!("{view:?}").contains("Quentin"), "another conversation's day is not this one's");
    assert_eq!(view.memories[view.highlights[0]].id, decided, "a decision leads the highlights");
    assert!(!view.more);
    let layers: Vec<String> = view.memories.iter().map(|m| m.namespace.to_string()).collect();
    assert!(layers.contains(&"project:p1".to_owned()) && layers.contains(&"conversation:c1".to_owned()));

    // Another conversation of the project sees the project's memory of that day, not c1's.
    let theirs = arbor.daily(&c2, Day::parse("2026-05-08", None).unwrap(), 50).await.unwrap();
    let theirs: Vec<&str> = theirs.memories.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(theirs, ["The p1 runbook lives in the juniper wiki.", "Quentin keeps bees in Porto."]);

    // In Shanghai (UTC+8) the 8th ended at 16:00 UTC: the evening memory is the 9th's there,
    // and the memory said just before midnight UTC on the 7th is the 8th's.
    let shanghai = arbor.daily(&c1, Day::parse("2026-05-08", Some("+08:00")).unwrap(), 50).await.unwrap();
    let texts: Vec<&str> = shanghai.memories.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "The p1 runbook lives in the juniper wiki.",
            "We decided to ship Atlas behind a flag per region.",
            "Dana prefers morning meetings before 10am.",
            "The staging cluster was rebuilt from scratch.",
        ]
    );
    // A limit keeps the newest and says there are more.
    let two = arbor.daily(&c1, Day::parse("2026-05-08", None).unwrap(), 2).await.unwrap();
    assert_eq!((two.memories.len(), two.more), (2, true));
    assert_eq!(two.memories[1].id, late);
    assert!(arbor.daily(&c1, Day::parse("2026-05-08", None).unwrap(), 0).await.is_err());
}

/// Someone edits a memory's markdown in an editor. Until the edit is adopted, retrieval answers
/// from what the store recorded and says so (never a silent drop). Seen by a server, which
/// cannot tell who changed the file, the edit is a suggestion the person confirms, once, after
/// which the replaced version's document is history again; run by the person, it is their
/// correction at once. History keeps every word up to 280 characters, the start beyond. What a
/// file cannot change (its kind, broken frontmatter), an unchanged text, and edited history are
/// reported and left exactly as written; a raised sensitivity is honoured.
pub async fn an_edited_document_becomes_the_memorys_next_version_and_history_keeps_the_old(ports: Ports) {
    use arbor_app::{Adoption, EditsBy};

    let (arbor, _clock) = engine(ports);
    let c1 = conversation(&arbor, "c1", "p1");
    let ns = [Namespace::conversation(scope("c1"))];
    let store = arbor.ports().store.clone();
    let bodies = arbor.ports().bodies.clone();
    let edit = |id: LeafId, from: &'static str, to: &'static str| {
        let (store, bodies, ns) = (store.clone(), bodies.clone(), ns.clone());
        async move {
            let leaf = store.leaf(&ns, &id).await.unwrap().unwrap();
            let document = String::from_utf8(bodies.read_unverified(&leaf.body_path).await.unwrap()).unwrap();
            assert!(document.contains(from), "{document}");
            let edited = document.replace(from, to);
            bodies.put(&leaf.body_path, edited.as_bytes()).await.unwrap();
            (leaf, document, edited)
        }
    };
    let said = |text: &str| {
        let mut event = Event::user_message(text);
        event.source = SourceRef::Message { conversation: None, message_id: format!("m-{}", text.len()) };
        event
    };
    let (dana, _) = remember(&arbor, &c1, said("Dana lives in Porto with her two cats.")).await;
    let long_text =
        format!("The Atlas runbook says: {}", "check the replication lag before every cut-over. ".repeat(8));
    let (runbook, _) = remember(&arbor, &c1, said(long_text.trim())).await;
    let (broken, _) = remember(&arbor, &c1, said("The staging cluster is rebuilt on Sundays.")).await;
    let (kind, _) = remember(&arbor, &c1, said("The billing service ships on Fridays.")).await;
    let (layout, _) = remember(&arbor, &c1, said("The office plant needs water on Mondays.")).await;
    let (salary, _) = remember(&arbor, &c1, said("Quentin's team meets on Thursdays.")).await;

    // Seen by a server: a suggestion, and the memory stays as recorded meanwhile.
    let (dana_v1, dana_document, _) = edit(dana.clone(), "in Porto", "in Lisbon").await;
    let pack = ask(&arbor, &c1, "Where does Dana live?").await;
    assert!(pack.evidence.iter().any(|e| e.node_id == arbor_domain::id::NodeId::Leaf(dana.clone())), "{pack:?}");
    assert!(pack.gaps.iter().any(|g| g.contains(dana.as_str()) && g.contains("adopt-edits")), "{:?}", pack.gaps);
    let seen = arbor.adopt_edits(&ns, EditsBy::Unknown).await.unwrap();
    let suggestion = match seen.as_slice() {
        [Adoption::Suggested { replaces, leaf_id, .. }] if replaces == &dana => leaf_id.clone(),
        other => panic!("one suggestion, got {other:?}"),
    };
    assert!(!pack_text(&ask(&arbor, &c1, "Where does Dana live?").await).contains("Lisbon"), "not before the person");
    let again = arbor.adopt_edits(&ns, EditsBy::Unknown).await.unwrap();
    assert!(
        matches!(again.as_slice(), [Adoption::NotAdopted { reason, .. }] if reason.contains("already suggests")),
        "{again:?}"
    );
    arbor.confirm(&c1, &suggestion).await.unwrap();
    let restored = arbor.adopt_edits(&ns, EditsBy::Unknown).await.unwrap();
    assert!(
        matches!(restored.as_slice(), [Adoption::HistoryRestored { leaf_id, .. }] if leaf_id == &dana),
        "{restored:?}"
    );
    let text = pack_text(&ask(&arbor, &c1, "Where does Dana live?").await);
    assert!(text.contains("Lisbon") && !text.contains("Porto"), "{text}");
    let old = store.leaf(&ns, &dana).await.unwrap().unwrap();
    assert_eq!((old.status, old.superseded_by.as_ref()), (LeafStatus::Superseded, Some(&suggestion)));
    assert_eq!(bodies.get(&old.body_path, &old.body_sha256).await.unwrap(), dana_document.as_bytes());
    assert_eq!(old.body_sha256, dana_v1.body_sha256, "history as first written");

    // Run by the person: each edit decided on its own.
    edit(runbook.clone(), "every cut-over", "every cut-over and after it").await;
    edit(broken.clone(), "kind: \"", "kind: ").await;
    let (_, _, kind_edited) = edit(kind.clone(), "kind: \"fact\"", "kind: \"decision\"").await;
    let (_, _, layout_edited) = edit(layout.clone(), "on Mondays.\n", "on Mondays.\n\n\n").await;
    edit(salary.clone(), "sensitivity: \"normal\"", "sensitivity: \"sensitive\"").await;
    edit(salary.clone(), "meets on Thursdays.\n", "meets on Wednesdays.\n").await;
    edit(dana.clone(), "in Porto", "in Faro").await;
    let adoptions = arbor.adopt_edits(&[], EditsBy::Person).await.unwrap();
    let outcome = |id: &LeafId| {
        adoptions
            .iter()
            .find(|a| match a {
                Adoption::Adopted { replaced, .. } => replaced == id,
                Adoption::NotAdopted { leaf_id, .. } => leaf_id == id,
                _ => false,
            })
            .unwrap_or_else(|| panic!("{id} in {adoptions:?}"))
    };
    assert!(matches!(outcome(&runbook), Adoption::Adopted { history_exact: false, version: 2, .. }), "{adoptions:?}");
    let not_adopted = |id: &LeafId, why: &str| {
        assert!(
            matches!(outcome(id), Adoption::NotAdopted { reason, .. } if reason.contains(why)),
            "{id}: {adoptions:?}"
        );
    };
    not_adopted(&broken, "line");
    not_adopted(&kind, "`kind`");
    not_adopted(&layout, "its words are what the memory says");
    not_adopted(&dana, "superseded");
    let Adoption::Adopted { leaf_id: salary_v2, history_exact: true, .. } = outcome(&salary) else {
        panic!("{adoptions:?}")
    };
    let salary_v2 = store.leaf(&ns, salary_v2).await.unwrap().unwrap();
    assert_eq!((salary_v2.sensitivity, salary_v2.provenance.actor), (Sensitivity::Sensitive, Actor::User));
    let runbook_old = store.leaf(&ns, &runbook).await.unwrap().unwrap();
    let kept = bodies.get(&runbook_old.body_path, &runbook_old.body_sha256).await.expect("history reads intact");
    assert!(String::from_utf8(kept).unwrap().contains("The Atlas runbook says: check the replication lag"));
    // What was not adopted is exactly as the person left it.
    for (id, edited) in [(&kind, &kind_edited), (&layout, &layout_edited)] {
        let leaf = store.leaf(&ns, id).await.unwrap().unwrap();
        assert_eq!((leaf.status, leaf.version.get()), (LeafStatus::Active, 1));
        assert_eq!(bodies.read_unverified(&leaf.body_path).await.unwrap(), edited.as_bytes());
    }
    let report = arbor.fsck(false, &|_| false).await.unwrap();
    let edited: Vec<_> = report.findings.iter().filter(|f| f.kind == arbor_app::FindingKind::EditedBody).collect();
    assert_eq!(edited.len(), 4, "the four documents left as edited, and nothing else: {report:?}");
}

#[cfg(test)]
mod tests {
    /// From this file's text: the checks (`pub async fn`s), the names the macro expands, and
    /// the tests the checklist table names.
    fn names(source: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
        let checks = source
            .lines()
            .filter_map(|l| l.strip_prefix("pub async fn "))
            .map(|rest| rest.split('(').next().unwrap_or_default().to_owned())
            .collect();
        let macro_list = source
            .split("acceptance_checklist!(@tests $fresh;")
            .nth(1)
            .and_then(|rest| rest.split(");").next())
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().trim_end_matches(','))
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(str::to_owned)
            .collect();
        let table = source
            .lines()
            .filter(|l| l.starts_with("//! | ") && l.contains("[`"))
            .filter_map(|l| l.split("[`").nth(1).and_then(|rest| rest.split('`').next()))
            .map(str::to_owned)
            .collect();
        (checks, macro_list, table)
    }

    /// Every check written here runs on every backend, and every checklist line names one: a
    /// test added without its macro line (or a line left without its test) fails here.
    #[test]
    fn every_check_is_expanded_on_every_backend_and_every_line_has_one() {
        let (checks, macro_list, table) = names(include_str!("checklist.rs"));
        assert_eq!(checks.len(), 26, "{checks:?}");
        let mut sorted_checks = checks.clone();
        sorted_checks.sort();
        let mut sorted_macro = macro_list.clone();
        sorted_macro.sort();
        assert_eq!(sorted_checks, sorted_macro, "the macro must expand every check, and only checks");
        assert_eq!(table.len(), 12, "twelve checklist lines: {table:?}");
        for name in &table {
            assert!(checks.contains(name), "the table names {name}, which is not a check");
        }
    }
}
