//! Background work of a serving store: its jobs on a tick, and adopting memory documents a
//! person edited by hand.

use super::Service;

/// How often a server runs its queued jobs.
pub(super) const JOB_TICK: std::time::Duration = std::time::Duration::from_secs(2);

/// Every how many job ticks a server looks for memory documents a person edited (a minute):
/// each look reads every body once, so it is not done on every tick, and an edit a person
/// saved shows in retrieval as the new version within a minute.
pub(super) const ADOPT_EVERY_TICKS: u64 = 30;

impl Service {
    /// Runs jobs until the server stops: what is saved gets indexed, sealed and summarized
    /// without anyone calling sync.
    pub async fn run_jobs_in_background(self: std::sync::Arc<Self>) {
        let mut ticks: u64 = 0;
        loop {
            tokio::time::sleep(JOB_TICK).await;
            if let Err(error) = self.arbor.run_jobs(Some(100)).await {
                tracing::warn!(error = %arbor_ports::with_causes(&error), "background jobs failed; retrying");
            }
            ticks += 1;
            if ticks.is_multiple_of(ADOPT_EVERY_TICKS) {
                self.adopt_edits().await;
            }
        }
    }

    /// Turns each memory document edited in the chain's namespaces into a suggestion for the
    /// person (the memory centre's Pending tab): a server cannot tell who changed a file, so
    /// it never adopts an edit as the person's own (`arbor fsck --adopt-edits` at the store's
    /// command line does). What it did and did not adopt goes to the log.
    async fn adopt_edits(&self) {
        let namespaces: Vec<_> = self.chain.live_namespaces().cloned().collect();
        let found = arbor_app::acting_as("hand-edit", self.arbor.adopt_edits(&namespaces, arbor_app::EditsBy::Unknown));
        match found.await {
            Ok(adoptions) => {
                for adoption in adoptions {
                    match adoption {
                        // Reported once a minute until the file changes: debug, not a warning flood.
                        arbor_app::Adoption::NotAdopted { leaf_id, path, reason } => {
                            tracing::debug!(%leaf_id, %path, %reason, "an edited memory document was not adopted")
                        }
                        done => tracing::info!(adoption = ?done, "adopted a hand-edited memory document"),
                    }
                }
            }
            Err(error) => tracing::warn!(
                error = %arbor_ports::with_causes(&error),
                "could not look for hand-edited memory documents; retrying later"
            ),
        }
    }
}
