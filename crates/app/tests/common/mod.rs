//! Shared setup for the app's scenario tests: in-memory ports with a manual clock and
//! sequential ids, so every run (and every snapshot) is identical.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use arbor_app::{Arbor, Options, Policy, Ports};
use arbor_domain::event::Event;
use arbor_domain::id::ScopeId;
use arbor_domain::model::SourceRef;
use arbor_domain::read_chain::{ReadChain, TrustedContext};
use arbor_domain::time::Timestamp;
use arbor_ports::faults::MaskedIndex;
use arbor_ports::memory::{InMemoryBodyStore, InMemoryMetadataStore, InMemorySearchIndex};
use arbor_ports::{HashingEmbedder, HeuristicReasoner, IndexCapabilities, ManualClock, SearchIndex, SequentialIds};

pub struct Harness {
    pub arbor: Arbor,
    pub clock: Arc<ManualClock>,
    pub store: Arc<InMemoryMetadataStore>,
    pub index: Arc<InMemorySearchIndex>,
    pub bodies: Arc<InMemoryBodyStore>,
}

pub fn start() -> Timestamp {
    Timestamp::from_second(1_780_000_000).unwrap()
}

pub fn harness() -> Harness {
    harness_with(Policy::default(), Options::default())
}

pub fn harness_with(policy: Policy, options: Options) -> Harness {
    harness_embedding_with(Arc::new(HashingEmbedder::default()), policy, options)
}

pub fn harness_embedding_with(embedder: Arc<dyn arbor_ports::Embedder>, policy: Policy, options: Options) -> Harness {
    build(embedder, policy, options, None)
}

/// [`harness`] over an index that reports only `capabilities`, and refuses the searches it
/// says it lacks (`harness.index` is the whole index under it).
pub fn harness_masked(capabilities: IndexCapabilities) -> Harness {
    build(Arc::new(HashingEmbedder::default()), Policy::default(), Options::default(), Some(capabilities))
}

fn build(
    embedder: Arc<dyn arbor_ports::Embedder>,
    policy: Policy,
    options: Options,
    mask: Option<IndexCapabilities>,
) -> Harness {
    let clock = Arc::new(ManualClock::new(start()));
    let store = Arc::new(InMemoryMetadataStore::new());
    let index = Arc::new(InMemorySearchIndex::new());
    let bodies = Arc::new(InMemoryBodyStore::new());
    let ports_index: Arc<dyn SearchIndex> = match mask {
        Some(capabilities) => Arc::new(MaskedIndex::new(index.clone(), capabilities)),
        None => index.clone(),
    };
    let ports = Ports {
        store: store.clone(),
        index: ports_index,
        bodies: bodies.clone(),
        embedder,
        reasoner: Arc::new(HeuristicReasoner),
        clock: clock.clone(),
        ids: Arc::new(SequentialIds::default()),
    };
    Harness { arbor: Arbor::new(ports, policy, options), clock, store, index, bodies }
}

pub fn scope(id: &str) -> ScopeId {
    ScopeId::parse(id).unwrap()
}

pub fn conversation_chain(arbor: &Arbor, conversation: &str, project: Option<&str>) -> ReadChain {
    arbor
        .read_chain(&TrustedContext::Conversation {
            conversation: scope(conversation),
            project: project.map(scope),
            agent: None,
        })
        .unwrap()
}

pub fn message(text: &str, id: &str) -> Event {
    let mut event = Event::user_message(text);
    event.source = SourceRef::Message { conversation: None, message_id: id.to_owned() };
    event
}

/// [`message`], said at `when` (an RFC 3339 timestamp).
pub fn message_at(text: &str, id: &str, when: &str) -> Event {
    let mut event = message(text, id);
    event.observed_at = Some(when.parse().expect("an RFC 3339 timestamp"));
    event
}
