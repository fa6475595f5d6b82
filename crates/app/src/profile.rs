//! The profile of what a chain's memories say now ([`claims::profile`]): every current memory
//! the chain can retrieve, read through the claims it was written with, and the memories rules
//! retired, as history. Built on request from the store, so it is never staler than the
//! memories themselves.

use arbor_domain::claims::profile::{self, Profile, Retired};
use arbor_domain::model::LeafRecord;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Page;

use crate::{AppResult, Arbor};

/// How many current memories a profile reads, a page at a time: a bounded read whatever the
/// store holds; a store with more is profiled from its newest memories.
const PROFILE_MEMORIES_READ: usize = 50_000;

const PAGE: usize = 1_000;

/// How many automatic retirements a profile's history reads.
const PROFILE_RETIREMENTS_READ: usize = 1_000;

impl Arbor {
    /// What `chain`'s memories say now about `subject` (the speaker for "me", "I" or "the user";
    /// a person or a thing by name), or about every subject when `None`: each attribute's
    /// current value with when and where it was said, and what it replaced.
    pub async fn profile(&self, chain: &ReadChain, subject: Option<&str>) -> AppResult<Profile> {
        let mut filter = VisibilityFilter::for_chain(chain, self.now());
        filter.node_kinds = vec![NodeKind::Leaf];
        let mut current: Vec<LeafRecord> = Vec::new();
        let mut read = 0;
        while read < PROFILE_MEMORIES_READ {
            let page = Page { offset: read, limit: PAGE };
            let leaves = self.ports.store.list_leaves(&filter, page).await?;
            let done = leaves.len() < PAGE;
            read += leaves.len();
            current.extend(leaves.into_iter().filter(|leaf| !leaf.claims.claims.is_empty()));
            if done {
                break;
            }
        }
        let retired = self.retired(chain, None, PROFILE_RETIREMENTS_READ).await?;
        let history: Vec<Retired<'_>> =
            retired.iter().map(|item| Retired { leaf: &item.leaf, by: item.by.as_ref() }).collect();
        Ok(profile::build(&current, &history, subject.map(str::trim).filter(|s| !s.is_empty())))
    }
}
