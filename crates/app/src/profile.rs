//! The profile of what a chain's memories say now ([`claims::profile`]): the current memories
//! the chain can retrieve, read through the claims they were written with, and the memories
//! rules retired, as history. Built on request from the store, so it is never staler than the
//! memories themselves. One subject's profile reads only the memories filed under claims about
//! it; everyone's reads every current memory, a page at a time.

use arbor_domain::claims::profile::{self, Profile, Retired};
use arbor_domain::model::LeafRecord;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::reconcile::{Filing, claims_about};
use arbor_domain::visibility::{NodeFacts, NodeKind, VisibilityFilter};
use arbor_ports::{FiledQuery, Page};

use crate::{AppResult, Arbor};

/// How many current memories a profile of everyone reads: a bounded read whatever the store
/// holds; a store with more is profiled from its newest memories.
const PROFILE_MEMORIES_READ: usize = 50_000;

/// How many memories with claims about one subject a profile reads, per namespace.
const SUBJECT_MEMORIES_READ: usize = 2_000;

const PAGE: usize = 1_000;

/// How many automatic retirements a profile's history reads.
const PROFILE_RETIREMENTS_READ: usize = 1_000;

impl Arbor {
    /// What `chain`'s memories say now about `subject` (the speaker for "me", "I" or "the user";
    /// a person or a thing by name), or about every subject when `None`: each attribute's
    /// current value with when and where it was said, and what it replaced.
    pub async fn profile(&self, chain: &ReadChain, subject: Option<&str>) -> AppResult<Profile> {
        let subject = subject.map(str::trim).filter(|s| !s.is_empty());
        let mut filter = VisibilityFilter::for_chain(chain, self.now());
        filter.node_kinds = vec![NodeKind::Leaf];
        let current = match subject {
            Some(subject) => self.current_about(chain, &filter, subject).await?,
            None => self.every_current(&filter).await?,
        };
        // One subject's history reads only the memories that were about it.
        let about = |leaf: &LeafRecord| {
            subject.is_none_or(|asked| leaf.claims.claims.iter().any(|c| profile::is_about(asked, &c.subject)))
        };
        let retired = self.retired_where(chain, None, PROFILE_RETIREMENTS_READ, about).await?;
        let history: Vec<Retired<'_>> =
            retired.iter().map(|item| Retired { leaf: &item.leaf, by: item.by.as_ref() }).collect();
        Ok(profile::build(&current, &history, subject))
    }

    async fn every_current(&self, filter: &VisibilityFilter) -> AppResult<Vec<LeafRecord>> {
        let mut current: Vec<LeafRecord> = Vec::new();
        let mut read = 0;
        while read < PROFILE_MEMORIES_READ {
            let leaves = self.ports.store.list_leaves(filter, Page { offset: read, limit: PAGE }).await?;
            let done = leaves.len() < PAGE;
            read += leaves.len();
            current.extend(leaves.into_iter().filter(|leaf| !leaf.claims.claims.is_empty()));
            if done {
                break;
            }
        }
        Ok(current)
    }

    async fn current_about(
        &self,
        chain: &ReadChain,
        filter: &VisibilityFilter,
        subject: &str,
    ) -> AppResult<Vec<LeafRecord>> {
        let keys = claims_about(&profile::asked_subject_key(subject));
        let query =
            FiledQuery::new(Filing { keys, words: Default::default() }, SUBJECT_MEMORIES_READ, SUBJECT_MEMORIES_READ);
        let mut current = Vec::new();
        for namespace in chain.namespaces() {
            let filed = self.ports.store.leaves_filed_under(namespace, &query).await?;
            current.extend(filed.into_iter().filter(|leaf| filter.admits(&NodeFacts::of_leaf(leaf))));
        }
        current.sort_by(|a, b| a.id.cmp(&b.id));
        current.dedup_by(|a, b| a.id == b.id);
        Ok(current)
    }
}
