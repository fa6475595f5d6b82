//! `arbor health` [design §health]: each namespace's and tree's figures — duplicates, history,
//! summaries waiting to be sealed again, suggestions waiting for a person, bytes per current
//! memory — counted from the rows and the bodies, with the warnings the store's
//! `HealthThresholds` raise. For the store's owner: it reads every namespace it is given,
//! whatever chain could read it.

use arbor_domain::consolidation::SameMemory;
use arbor_domain::health::{Figures, HealthThresholds, Said, Warning, repeating};
use arbor_domain::lifecycle::LeafStatus;
use arbor_domain::model::{LeafRecord, SummaryStatus, TreeId};
use arbor_domain::namespace::Namespace;
use arbor_domain::paths::BodyPath;
use arbor_domain::reconcile::Claim;
use arbor_domain::time::Timestamp;
use arbor_ports::{Error, TreeLeafQuery};
use serde::Serialize;

use crate::{AppResult, Arbor};

/// The health of every namespace asked about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealthReport {
    pub at: Timestamp,
    pub thresholds: HealthThresholds,
    pub namespaces: Vec<NamespaceHealth>,
    /// Every namespace's figures added up.
    pub total: Figures,
    /// Trees and bodies that could not be read, with why; the report went on past
    /// them, counting them as empty (`arbor fsck` says more).
    pub unreadable: Vec<(String, String)>,
}

impl HealthReport {
    /// How many warnings were raised, over namespaces and trees.
    pub fn warning_count(&self) -> usize {
        self.namespaces
            .iter()
            .map(|ns| ns.warnings.len() + ns.trees.iter().map(|t| t.warnings.len()).sum::<usize>())
            .sum()
    }
}

/// One namespace: its trees' figures added up (duplicates counted across its trees), and each
/// tree's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamespaceHealth {
    pub namespace: Namespace,
    pub figures: Figures,
    pub warnings: Vec<Warning>,
    pub trees: Vec<TreeHealth>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeHealth {
    pub tree_id: TreeId,
    pub figures: Figures,
    pub warnings: Vec<Warning>,
}

impl Arbor {
    /// The health of `namespaces` (every namespace the store holds when empty).
    pub async fn health(&self, namespaces: &[Namespace]) -> AppResult<HealthReport> {
        let store = &self.ports.store;
        let namespaces = if namespaces.is_empty() { store.namespaces().await? } else { namespaces.to_vec() };
        let thresholds = self.policy.health;
        let now = self.now();
        let mut report = HealthReport {
            at: now,
            thresholds,
            namespaces: Vec::new(),
            total: Figures::default(),
            unreadable: Vec::new(),
        };
        for namespace in namespaces {
            let mut trees: Vec<(TreeId, Figures)> = Vec::new();
            // Every current memory of the namespace, with its tree's position in `trees`:
            // a memory filed in two trees is still said twice.
            let mut current: Vec<(usize, Said)> = Vec::new();
            for tree in store.trees(std::slice::from_ref(&namespace)).await? {
                let Some((figures, said)) = self.tree_figures(&namespace, &tree.tree_id, &mut report.unreadable).await
                else {
                    continue;
                };
                current.extend(said.into_iter().map(|said| (trees.len(), said)));
                trees.push((tree.tree_id, figures));
            }
            let said: Vec<Said> = current.iter().map(|(_, said)| said.clone()).collect();
            for at in repeating(&said) {
                trees[current[at].0].1.duplicates += 1;
            }
            let mut figures = Figures::default();
            let trees: Vec<TreeHealth> = trees
                .into_iter()
                .map(|(tree_id, tree)| {
                    figures.absorb(&tree);
                    TreeHealth { tree_id, warnings: thresholds.warnings(&tree, now), figures: tree }
                })
                .collect();
            report.total.absorb(&figures);
            report.namespaces.push(NamespaceHealth {
                namespace,
                warnings: thresholds.warnings(&figures, now),
                figures,
                trees,
            });
        }
        Ok(report)
    }

    /// One tree's figures (its duplicates aside, which are counted over the namespace) and its
    /// current memories as the duplicate count reads them; `None`, noted in `unreadable`, when
    /// its rows cannot be read.
    async fn tree_figures(
        &self,
        namespace: &Namespace,
        tree_id: &TreeId,
        unreadable: &mut Vec<(String, String)>,
    ) -> Option<(Figures, Vec<Said>)> {
        let store = &self.ports.store;
        let rows = async {
            let leaves = store.tree_leaves(namespace, tree_id, &TreeLeafQuery::default()).await?;
            Ok::<_, Error>((leaves, store.tree_summaries(namespace, tree_id).await?))
        };
        let (leaves, summaries) = match rows.await {
            Ok(rows) => rows,
            Err(error) => {
                unreadable.push((format!("{namespace}/{tree_id}"), error.to_string()));
                return None;
            }
        };
        let mut figures = Figures::default();
        let mut current = Vec::new();
        for leaf in &leaves {
            count_leaf(&mut figures, leaf);
            if leaf.status != LeafStatus::Tombstone {
                figures.body_bytes += self.body_size(&leaf.body_path, unreadable).await;
            }
            // Only what consolidation reads could be merged by it.
            if arbor_domain::consolidation::reads(leaf) {
                let reading = SameMemory::of(&Claim::read(&leaf.summary), &leaf.summary, &leaf.fingerprint);
                current.push(Said { reading, observed_at: leaf.observed_at });
            }
        }
        for summary in &summaries {
            match summary.status {
                SummaryStatus::Current => figures.summaries += 1,
                SummaryStatus::Stale | SummaryStatus::Purged => {
                    figures.summaries += 1;
                    figures.summaries_awaiting_reseal += 1;
                }
                SummaryStatus::Retired => {}
            }
            if summary.status != SummaryStatus::Purged {
                figures.body_bytes += self.body_size(&summary.body_path, unreadable).await;
            }
        }
        Some((figures, current))
    }

    /// A body's bytes; a missing one holds none (`arbor fsck` reports it), and one that cannot
    /// be measured is noted in `unreadable` and counted as none.
    async fn body_size(&self, path: &BodyPath, unreadable: &mut Vec<(String, String)>) -> u64 {
        match self.ports.bodies.size(path).await {
            Ok(bytes) => bytes,
            Err(Error::NotFound { .. }) => 0,
            Err(other) => {
                unreadable.push((path.to_string(), other.to_string()));
                0
            }
        }
    }
}

fn count_leaf(figures: &mut Figures, leaf: &LeafRecord) {
    match leaf.status {
        LeafStatus::Active => figures.active += 1,
        LeafStatus::Superseded => figures.superseded += 1,
        LeafStatus::Candidate => {
            figures.candidates += 1;
            figures.oldest_candidate =
                Some(figures.oldest_candidate.map_or(leaf.created_at, |at| at.min(leaf.created_at)));
        }
        LeafStatus::Archived => figures.archived += 1,
        LeafStatus::Rejected | LeafStatus::Tombstone => {}
    }
}
