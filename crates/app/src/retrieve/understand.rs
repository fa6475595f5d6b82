//! Query understanding [design §retrieval]: what a question asks for (its intent), when (a time range its
//! words set, relative to its `as_of`), and about whom (known entities it names).

use arbor_domain::entity::Entity;
use arbor_domain::id::LeafId;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::sensitivity::may_be_given_to;
use arbor_domain::text::tokenize;
use arbor_domain::time::Timestamp;
use arbor_domain::time_expr::{
    TimeExpression, TimeRange, depends_on_newest, find_time_expression, find_time_expression_knowing,
};
use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::{EntityQuery, Page, QueryRequest, TermSelection, TextQuery};
use serde::Serialize;

use super::{Intent, RetrieveMode, RetrieveRequest};
use crate::{AppResult, Arbor};

/// At most this many named entities get a channel of their own.
pub(super) const MAX_ENTITY_CHANNELS: usize = 3;

/// The time a retrieval was limited to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnderstoodTime {
    /// The words that set it ("last week", "before the move"), or `requested` when the caller
    /// passed a time range.
    pub phrase: String,
    pub range: TimeRange,
    /// False when the question's time matched nothing and the search was widened to any time
    /// (the pack's gaps say so). A requested range is never widened.
    pub applied: bool,
}

/// What the question was understood to ask beyond its intent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Understood {
    pub time: Option<UnderstoodTime>,
    /// Known entities the question names, as `name (namespace)`.
    pub entities: Vec<String>,
}

impl Understood {
    /// The understanding in words, one line per filter or channel it added.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(time) = &self.time {
            let state = if time.applied { "" } else { " (matched nothing; widened to any time)" };
            lines.push(format!("time \"{}\" = {}{state}", time.phrase, time.range.describe()));
        }
        lines.extend(self.entities.iter().map(|e| format!("entity {e}")));
        lines
    }
}

impl Arbor {
    /// The question's intent: as the caller asked, else as the reasoner reads it (the
    /// deterministic one when the question may not leave the machine or the answer is
    /// unusable).
    pub(super) async fn classify(&self, request: &RetrieveRequest) -> Intent {
        let query = QueryRequest { query: request.query.clone() };
        let reasoner = &self.ports.reasoner;
        let read = match request.mode {
            // The caller chose the mode; the question's focus is still read, locally.
            RetrieveMode::BroadSummary | RetrieveMode::ExactEvidence => {
                let focus = arbor_domain::heuristics::classify_query(&query).focus;
                return Intent { mode: request.mode, focus, reason: "requested".into() };
            }
            RetrieveMode::Auto if !may_be_given_to(reasoner.locality(), None, &request.query) => {
                arbor_domain::heuristics::classify_query(&query)
            }
            RetrieveMode::Auto => match self.ask_reasoner("classify_query", reasoner.classify_query(&query)).await {
                Some(intent) => intent,
                None => arbor_domain::heuristics::classify_query(&query),
            },
        };
        let mode = if read.broad { RetrieveMode::BroadSummary } else { RetrieveMode::ExactEvidence };
        Intent { mode, focus: read.focus, reason: read.reason }
    }

    /// The time range the question's words set, read relative to `anchor` (its `as_of`, or
    /// now). An event ("before the move") is placed at the best full-text match for its words
    /// among the leaves `filter` admits; an event nothing matches adds a gap instead.
    pub(super) async fn time_in_question(
        &self,
        query: &str,
        filter: &VisibilityFilter,
        anchor: Timestamp,
        gaps: &mut Vec<String>,
    ) -> AppResult<Option<UnderstoodTime>> {
        let Some(mut found) = find_time_expression(query, anchor) else { return Ok(None) };
        // Only a question naming a date without its year pays for this lookup: such a date is
        // read against the newest memory in scope when the anchor's is beyond its reach.
        if depends_on_newest(query, anchor) {
            let newest = self.newest_observation(filter).await?;
            found = find_time_expression_knowing(query, anchor, newest).unwrap_or(found);
        }
        let range = match found.expression {
            TimeExpression::Range { range } => range,
            TimeExpression::RelativeToEvent { relation, event } => match self.place_event(&event, filter).await? {
                Some(at) => relation.range_around(at),
                None => {
                    gaps.push(format!("could not place \"{event}\" in time: nothing in memory matches it"));
                    return Ok(None);
                }
            },
        };
        Ok(Some(UnderstoodTime { phrase: found.phrase, range, applied: true }))
    }

    /// When the newest leaf `filter` admits (at any time) was observed.
    async fn newest_observation(&self, filter: &VisibilityFilter) -> AppResult<Option<Timestamp>> {
        let mut leaves = filter.clone();
        leaves.node_kinds = vec![NodeKind::Leaf];
        leaves.time_range = None;
        let newest = self.ports.store.list_leaves(&leaves, Page::first(1)).await?;
        Ok(newest.first().map(|leaf| leaf.observed_at))
    }

    /// When the leaf that best matches `event` was observed.
    async fn place_event(&self, event: &str, filter: &VisibilityFilter) -> AppResult<Option<Timestamp>> {
        if !self.ports.index.capabilities().full_text {
            return Ok(None);
        }
        let mut leaves_only = filter.clone();
        leaves_only.node_kinds = vec![NodeKind::Leaf];
        let query =
            TextQuery { filter: leaves_only.clone(), text: event.to_owned(), limit: 1, terms: TermSelection::All };
        let Some(best) = self.ports.index.search_text(&query).await?.into_iter().next() else { return Ok(None) };
        let Some(id) = best.id.as_leaf().cloned() else { return Ok(None) };
        let scope = [best.namespace];
        let leaf = self.ports.store.leaves(&scope, std::slice::from_ref::<LeafId>(&id)).await?.pop();
        Ok(leaf.filter(|l| leaves_only.admits(&arbor_domain::visibility::NodeFacts::of_leaf(l))).map(|l| l.observed_at))
    }

    /// Known entities of the chain's namespaces whose name or an alias the question contains
    /// as whole words, most specific layer first, at most [`MAX_ENTITY_CHANNELS`].
    pub(super) async fn entities_named_in(&self, chain: &ReadChain, query: &str) -> AppResult<Vec<Entity>> {
        let words = tokenize(query);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        // One lookup per layer, all at once: on a server backend each is a round trip, and
        // they do not depend on each other. The results come back in the chain's order.
        let shortlist = EntityQuery { terms: vec![query.to_owned()], limit: 8 };
        let lookups = chain.namespaces().map(|namespace| self.ports.store.find_entities(namespace, &shortlist));
        let mut named = Vec::new();
        for entity in futures::future::try_join_all(lookups).await?.into_iter().flatten() {
            if named.len() < MAX_ENTITY_CHANNELS && is_named_in(&words, &entity) {
                named.push(entity);
            }
        }
        Ok(named)
    }
}

/// Whether the entity's name or one of its aliases occurs in `words` as consecutive whole words.
fn is_named_in(words: &[String], entity: &Entity) -> bool {
    std::iter::once(&entity.name).chain(&entity.aliases).any(|name| {
        let name = tokenize(name);
        !name.is_empty() && words.windows(name.len()).any(|window| window == name.as_slice())
    })
}

#[cfg(test)]
mod tests {
    use arbor_domain::entity::{EntitySlug, EntityType};
    use arbor_domain::id::EntityId;
    use arbor_domain::namespace::Namespace;

    use super::*;

    fn entity(name: &str, aliases: &[&str]) -> Entity {
        Entity {
            id: EntityId::parse("ent-1").unwrap(),
            namespace: Namespace::global(),
            entity_type: EntityType::Person,
            slug: EntitySlug::from_name(name),
            name: name.to_owned(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn entities_are_named_by_whole_words() {
        let words = tokenize("What did Project Alpha decide about Dana's budget?");
        assert!(is_named_in(&words, &entity("Project Alpha", &[])));
        assert!(is_named_in(&words, &entity("Dana Scully", &["Dana"])), "by an alias");
        assert!(!is_named_in(&words, &entity("Alpha Project", &[])), "order matters");
        assert!(!is_named_in(&words, &entity("Dan", &[])), "no partial words");
        assert!(!is_named_in(&words, &entity("!!!", &[])), "a name with no words names nothing");
    }
}
