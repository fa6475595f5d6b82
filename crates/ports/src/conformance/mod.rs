//! The conformance suite: plain async functions that check one port's contract, exported so
//! every adapter crate runs exactly the same checks.
//!
//! Each adapter's tests invoke one macro per port it implements, with a factory that returns a
//! fresh, empty instance wrapped in a [`Fixture`] (which may also hold a guard such as a
//! temporary directory or a throwaway database):
//!
//! ```ignore
//! arbor_ports::metadata_store_conformance!(|| async { Fixture::new(Arc::new(MyStore::open_fresh().await)) });
//! ```
//!
//! The macro expands to one `#[test]` per check, so a failure names the rule that broke. To
//! add a check: write the function in the port's module and add its name to the macro.

pub mod bodies;
pub mod embedder;
pub mod fixtures;
pub mod index;
pub mod store;

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

/// A fresh instance under test, plus whatever must live as long as it.
pub struct Fixture<P: ?Sized> {
    pub subject: Arc<P>,
    _guard: Box<dyn Any + Send>,
}

impl<P: ?Sized> std::fmt::Debug for Fixture<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture").finish_non_exhaustive()
    }
}

impl<P: ?Sized> Fixture<P> {
    pub fn new(subject: Arc<P>) -> Fixture<P> {
        Fixture { subject, _guard: Box::new(()) }
    }

    /// Keeps `guard` (a temporary directory, a database handle) alive until the check ends.
    pub fn with_guard(subject: Arc<P>, guard: impl Any + Send) -> Fixture<P> {
        Fixture { subject, _guard: Box::new(guard) }
    }
}

/// Runs a check on a fresh single-threaded runtime.
pub fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime starts").block_on(future)
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($module:ident, $factory:expr, [$($check:ident),* $(,)?]) => {
        $(
            #[test]
            fn $check() {
                $crate::conformance::block_on(async {
                    let fixture = ($factory)().await;
                    $crate::conformance::$module::$check(&*fixture.subject).await;
                });
            }
        )*
    };
}

/// Every [`MetadataStore`](crate::MetadataStore) check, one test each.
#[macro_export]
macro_rules! metadata_store_conformance {
    ($factory:expr) => {
        $crate::__conformance_tests!(
            store,
            $factory,
            [
                commit_then_read,
                reads_never_cross_namespaces,
                failed_precondition_leaves_nothing,
                supersede_is_atomic,
                duplicate_ids_are_refused,
                a_run_of_new_rows_lands_whole_or_not_at_all,
                live_fingerprints_are_unique_per_tree,
                reviving_a_twin_is_refused,
                listings_are_ordered_by_name,
                leaves_are_listed_in_the_order_written,
                leaves_are_found_by_what_they_are_filed_under,
                versions_are_listed_by_lineage,
                entity_slugs_are_unique_per_namespace,
                entity_shortlist_matches_names_and_aliases,
                root_swap_is_compare_and_set,
                frontier_lists_unsealed_members,
                summaries_awaiting_reseal_are_listed,
                jobs_claim_lease_retry_complete,
                tombstone_leaves_no_text,
                visibility_pushdown_matches_domain,
                audit_is_scoped_and_newest_first,
                retrievals_are_recorded_scoped_and_unique,
                counts_reflect_contents,
                body_intents_round_trip,
                tree_summaries_lists_every_status,
                dissolving_a_tree_removes_every_row_of_it,
                an_entity_goes_with_its_last_reference,
                leases_are_listed_released_and_deferred,
                pending_jobs_are_listed_by_kind_and_scope,
                a_sound_store_checks_clean,
            ]
        );
    };
}

/// Every [`SearchIndex`](crate::SearchIndex) check, one test each.
#[macro_export]
macro_rules! search_index_conformance {
    ($factory:expr) => {
        $crate::__conformance_tests!(
            index,
            $factory,
            [
                text_search_finds_and_ranks,
                rarest_terms_select_what_is_matched,
                text_search_never_crosses_the_filter,
                vector_search_ranks_nearest_first,
                vector_search_never_mixes_embedders,
                upsert_replaces_the_document,
                a_read_sees_what_was_written_before_it,
                insert_missing_keeps_what_is_held,
                set_facts_changes_visibility,
                remove_leaves_no_text,
                filter_pushdown_matches_domain,
                sparse_vectors_rank_as_exhaustive_search,
                optimize_changes_no_answer,
                clear_empties_the_index,
            ]
        );
    };
}

/// Every [`BodyStore`](crate::BodyStore) check, one test each.
#[macro_export]
macro_rules! body_store_conformance {
    ($factory:expr) => {
        $crate::__conformance_tests!(
            bodies,
            $factory,
            [
                put_then_get,
                put_many_then_get,
                create_many_never_replaces,
                get_verifies_the_hash,
                put_replaces_whole_documents,
                delete_is_idempotent_and_leaves_no_text,
                list_by_prefix,
                size_is_the_length_in_bytes,
            ]
        );
    };
}

/// Every [`Embedder`](crate::Embedder) check, one test each.
#[macro_export]
macro_rules! embedder_conformance {
    ($factory:expr) => {
        $crate::__conformance_tests!(
            embedder,
            $factory,
            [one_unit_vector_per_text, embeddings_are_deterministic, similar_texts_are_closer,]
        );
    };
}

#[cfg(test)]
mod tests {
    /// Every check a module defines is run by its port's macro: a check that is written but
    /// not listed would silently never run.
    #[test]
    fn every_check_is_in_its_macro() {
        let macros = include_str!("mod.rs");
        let modules = [
            ("store", include_str!("store/writes.rs")),
            ("store", include_str!("store/listings.rs")),
            ("store", include_str!("store/trees.rs")),
            ("store", include_str!("store/jobs.rs")),
            ("store", include_str!("store/reads.rs")),
            ("index", include_str!("index.rs")),
            ("bodies", include_str!("bodies.rs")),
            ("embedder", include_str!("embedder.rs")),
        ];
        for (module, source) in modules {
            for line in source.lines() {
                let Some(rest) = line.strip_prefix("pub async fn ") else { continue };
                let name = rest.split('(').next().unwrap_or_default();
                assert!(
                    macros.contains(&format!("{name},")),
                    "conformance check {module}::{name} is not listed in its macro"
                );
            }
        }
    }
}
