//! The service's own checks: internal faults say nothing of their detail, and the wire mirrors
//! read back exactly what the app writes.

use arbor_app::{AppError, Arbor, Disclosure, RetrieveMode, RetrieveRequest};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::model::SourceRef;
use arbor_domain::read_chain::TrustedContext;

use super::{ApiError, mirror};
use crate::wire;

/// A fault inside the engine is the server's (500, its detail only in the log), never a
/// caller's bad request.
#[test]
fn internal_faults_are_the_servers_and_say_nothing_of_their_detail() {
    let internal = ApiError::from(AppError::Internal("stored body path: ../etc".into()));
    assert_eq!((internal.status, internal.code), (500, "internal"));
    assert!(!internal.message.contains("etc"), "{}", internal.message);
    let invalid = ApiError::from(AppError::InvalidRequest("`title` is empty".into()));
    assert_eq!((invalid.status, invalid.code), (400, "invalid_request"));
}

/// The wire mirrors read back exactly what the app writes, so their schemas describe the
/// real output (a field the app adds or renames fails here before any client sees it).
#[tokio::test]
async fn wire_mirrors_are_exact() {
    let arbor = Arbor::in_memory();
    let context = TrustedContext::Conversation {
        conversation: ScopeId::parse("c1").unwrap(),
        project: Some(ScopeId::parse("p1").unwrap()),
        agent: None,
    };
    let chain = arbor.read_chain(&context).unwrap();
    for (i, text) in [
        "Dana prefers morning meetings before 10am.",
        "Dana is leading the migration to Postgres.",
        "My favorite color is green.",
        "My favorite color is blue.",
        "We never deploy on Fridays.",
        "Dana has a dog called Miso.",
        "The staging cluster runs in Frankfurt.",
        "Dana wants weekly status notes.",
        "Dana moved the review to Thursday last week.",
    ]
    .iter()
    .enumerate()
    {
        let mut event = Event::user_message(*text);
        event.source = SourceRef::Message { conversation: None, message_id: format!("m{i}") };
        arbor.ingest(&chain, event).await.unwrap();
    }
    arbor.run_jobs(None).await.unwrap();
    for (query, mode) in [
        ("when does Dana like meetings?", RetrieveMode::Auto),
        ("what happened last week?", RetrieveMode::ExactEvidence),
        ("tell me about Dana", RetrieveMode::BroadSummary),
    ] {
        let mut request = RetrieveRequest::new(query);
        request.mode = mode;
        request.record = true;
        let pack = arbor.retrieve(&chain, &request).await.unwrap();
        assert!(!pack.evidence.is_empty());
        let wire: wire::Pack = mirror(&pack).unwrap();
        assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&pack).unwrap(), "{query}");
    }
    let catalog = arbor.catalog(&chain, 4000).await.unwrap();
    let wire: wire::Catalog = mirror(&catalog).unwrap();
    assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&catalog).unwrap());
    let tree = arbor.browse(&chain, Disclosure::Retrievable).await.unwrap().remove(0).tree.tree_id;
    let outline = arbor.browse_tree(&chain, &tree, 8, Disclosure::Retrievable).await.unwrap();
    let wire: Vec<wire::OutlineNode> = mirror(&outline.nodes).unwrap();
    assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&outline.nodes).unwrap());
    let today = arbor_domain::daily::Day::asked(None, Some("+08:00"), arbor.ports().clock.now()).unwrap();
    let daily = arbor.daily(&chain, today, 200).await.unwrap();
    assert!(!daily.memories.is_empty() && !daily.highlights.is_empty());
    let wire: wire::Daily = mirror(&daily).unwrap();
    assert_eq!(serde_json::to_value(&wire).unwrap(), serde_json::to_value(&daily).unwrap());
}
