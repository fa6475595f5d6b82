//! Audit and usage [design §audit]: the append-only log of every state change (who, what,
//! when, ids and hashes — never content), and how a memory has been used: which recorded
//! retrievals found it, whether it entered their context, how often and when last.

use arbor_domain::id::{LeafId, NodeId, SummaryId};
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::ReadChain;
use arbor_domain::time::Timestamp;
use arbor_ports::{AccessRecord, AuditEvent, Error};
use serde::Serialize;

use crate::{AppError, AppResult, Arbor};

/// How one memory has been used by recorded retrievals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    pub node: NodeId,
    /// Recorded retrievals that considered it (of the latest `limit`).
    pub retrievals: usize,
    /// Of those, how many put it into the context they returned.
    pub entered_context: usize,
    pub last_used: Option<Timestamp>,
    /// The access records, newest first.
    pub records: Vec<AccessRecord>,
}

impl Arbor {
    /// The latest `limit` audit events of the chain's namespaces, newest first.
    pub async fn audit_log(&self, chain: &ReadChain, limit: usize) -> AppResult<Vec<AuditEvent>> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        Ok(self.ports.store.audit_events(&scope, limit).await?)
    }

    /// How the node `id` (a leaf or summary readable through `chain`) has been used by the
    /// latest `limit` recorded retrievals. An id outside the chain is not found.
    pub async fn usage(&self, chain: &ReadChain, id: &str, limit: usize) -> AppResult<Usage> {
        let scope: Vec<Namespace> = chain.namespaces().cloned().collect();
        let store = &self.ports.store;
        let node = if let Ok(leaf) = LeafId::parse(id)
            && store.leaf(&scope, &leaf).await?.is_some()
        {
            NodeId::Leaf(leaf)
        } else if let Ok(summary) = SummaryId::parse(id)
            && store.summary(&scope, &summary).await?.is_some()
        {
            NodeId::Summary(summary)
        } else if LeafId::parse(id).is_err() && SummaryId::parse(id).is_err() {
            return Err(AppError::InvalidRequest(format!("{id:?} is not a leaf or summary id")));
        } else {
            return Err(Error::not_found("node", id).into());
        };
        let records = store.access_records(&scope, &node, limit).await?;
        Ok(Usage {
            retrievals: records.len(),
            entered_context: records.iter().filter(|r| r.entered_context).count(),
            last_used: records.iter().filter(|r| r.entered_context).map(|r| r.at).max(),
            node,
            records,
        })
    }
}
