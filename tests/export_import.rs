//! Export and import round-trip [design §export]: a store's memories exported with their
//! history and imported into an empty store of the same backend answer every question the
//! same — the same leaves, versions, validity and provenance, and what a correction or a
//! consolidation pass replaced replaced again.

use arbor_app::{Arbor, ConsolidateRequest, Correction, ExportOptions, ImportedMemory, Ports, RetrieveRequest};
use arbor_domain::event::Event;
use arbor_domain::id::{LeafId, ScopeId, Version};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{Actor, SourceRef};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::{ReadChain, TrustedContext};

use crate::engine;

fn c1(arbor: &Arbor) -> ReadChain {
    let context = TrustedContext::Conversation {
        conversation: ScopeId::parse("c1").unwrap(),
        project: Some(ScopeId::parse("p1").unwrap()),
        agent: None,
    };
    arbor.read_chain(&context).unwrap()
}

async fn say(arbor: &Arbor, chain: &ReadChain, text: &str, id: &str) -> LeafId {
    let mut event = Event::user_message(text);
    event.source = SourceRef::Message { conversation: None, message_id: id.to_owned() };
    let report = arbor.ingest(chain, event).await.unwrap();
    report.chunks[0].outcome.leaf_id().expect("kept").clone()
}

/// Builds history in `source` (a correction, a passing update, a merge by consolidation, a
/// suggestion that is not exported), exports it, imports it into `target`, and compares.
pub async fn round_trip(source: Ports, target: Ports) {
    // Indexed by the job runner, so a repeat written before its twin is indexed gets in, for
    // consolidation to merge.
    let (before, clock) = {
        let (engine, clock) = engine(source);
        let options = arbor_app::Options { index_inline: false, ..engine.options().clone() };
        (Arbor::new(engine.ports().clone(), engine.policy().clone(), options), clock)
    };
    let chain = c1(&before);
    let project = before.read_chain(&TrustedContext::Project { project: ScopeId::parse("p1").unwrap() }).unwrap();
    say(&before, &chain, "Dana prefers morning meetings before 10am.", "m1").await;
    let atlas = say(&before, &chain, "Project Atlas launches on June 3.", "m2").await;
    say(&before, &project, "The p1 runbook lives in the juniper wiki.", "m3").await;
    let peanuts = say(&before, &chain, "Maya and Tom are allergic to peanuts.", "m4").await;
    say(&before, &chain, "Tom and Maya are allergic to peanuts.", "m4b").await;
    clock.advance_seconds(3600);
    let fix = Correction::by_person(atlas, Version::FIRST, "Project Atlas launches on June 10.");
    before.correct(&chain, &fix).await.unwrap();
    say(&before, &chain, "Dana moved to Lisbon last month.", "m5").await;
    clock.advance_seconds(3600);
    say(&before, &chain, "Dana now lives in Porto.", "m6").await;
    let mut suggestion = Event::user_message("Maybe Dana would like a standing desk.");
    suggestion.actor = Actor::Assistant;
    suggestion.source = SourceRef::Message { conversation: None, message_id: "a1".to_owned() };
    before.ingest(&chain, suggestion).await.unwrap();
    // A suggestion a person confirmed: its document was written while it waited.
    let mut confirmed = Event::user_message("Dana's team standup moved to 9:30.");
    confirmed.actor = Actor::Assistant;
    confirmed.source = SourceRef::Message { conversation: None, message_id: "a2".to_owned() };
    let report = before.ingest(&chain, confirmed).await.unwrap();
    let confirmed = report.chunks[0].outcome.leaf_id().expect("kept").clone();
    assert_eq!(before.confirm(&chain, &confirmed).await.unwrap().status, LeafStatus::Active);
    assert_eq!(before.run_jobs(None).await.unwrap().failed, 0);
    let pass = ConsolidateRequest::new(vec![(Namespace::parse("conversation:c1").unwrap(), None)], false);
    assert!(before.consolidate(&pass).await.unwrap().applied() >= 1);
    assert_eq!(before.run_jobs(None).await.unwrap().failed, 0);

    let history = ExportOptions { include_history: true, ..ExportOptions::default() };
    let exported = before.export(&chain, history).await.unwrap();
    assert!(exported.unreadable.is_empty());
    let merged = exported.memories.iter().find(|m| m.id == peanuts).expect("exported with its history");
    assert_eq!(merged.status, LeafStatus::Superseded, "merged into its repeat by consolidation");
    assert_ne!(merged.superseded_by.as_ref(), Some(&merged.lineage), "by another memory, not a version");
    assert!(!exported.memories.iter().any(|m| m.text.contains("standing desk")), "suggestions are not");
    let imported: Vec<ImportedMemory> = exported
        .memories
        .iter()
        .map(|m| ImportedMemory {
            id: m.id.clone(),
            status: m.status,
            validity: m.validity,
            superseded_by: m.superseded_by.clone(),
            path: m.path.clone(),
            document: m.document.clone(),
            embedder: Some(m.embedder.clone()),
            claims: Some(m.claims.clone()),
        })
        .collect();

    let (after, after_clock) = engine(target);
    after_clock.advance_seconds(2 * 3600);
    // A record whose document is not its own refuses the whole import, naming it.
    let mut wrong = imported.clone();
    wrong[1].document = wrong[0].document.clone();
    let refused = after.import_export(&wrong).await.unwrap_err().to_string();
    assert!(refused.contains("record 2") && refused.contains("nothing was imported"), "{refused}");
    // So does a validity that ends before it starts.
    let mut inverted = imported.clone();
    let start = inverted[0].validity.valid_from.expect("said at a time");
    inverted[0].validity.valid_to = Some(start - jiff::SignedDuration::from_hours(1));
    let refused = after.import_export(&inverted).await.unwrap_err().to_string();
    assert!(refused.contains("record 1: its validity"), "{refused}");
    assert!(after.ports().store.namespaces().await.unwrap().is_empty(), "nothing was written");

    let report = after.import_export(&imported).await.unwrap();
    assert!(report.unreadable.is_empty(), "{report:?}");
    assert_eq!(report.leaves, imported.len());
    assert_eq!(after.run_jobs(None).await.unwrap().failed, 0);
    let chain_after = c1(&after);
    let again = after.export(&chain_after, history).await.unwrap();
    assert_eq!(again.memories, exported.memories, "the same memories, versions, validity and provenance");
    let back = after.ports().store.leaf(&[Namespace::parse("conversation:c1").unwrap()], &confirmed).await.unwrap();
    assert_eq!(back.map(|l| l.status), Some(LeafStatus::Active), "confirmed, as exported");

    for question in [
        "when does Atlas launch?",
        "where does Dana live?",
        "who is allergic to peanuts?",
        "where does the p1 runbook live?",
    ] {
        let ids = |pack: arbor_app::RetrievalPack| -> Vec<(String, u32)> {
            pack.evidence.iter().map(|e| (e.node_id.to_string(), e.version.unwrap_or(0))).collect()
        };
        let was = ids(before.retrieve(&chain, &RetrieveRequest::new(question)).await.unwrap());
        let is = ids(after.retrieve(&chain_after, &RetrieveRequest::new(question)).await.unwrap());
        assert!(!was.is_empty(), "{question}");
        assert_eq!(is, was, "{question}");
    }
    // A second import into the now full store is refused.
    let full = after.import_export(&imported).await.unwrap_err().to_string();
    assert!(full.contains("already holds memories"), "{full}");
}
