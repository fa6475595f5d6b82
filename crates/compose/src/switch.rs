//! Pointing a store at another embedder: checked, saved, and a re-embedding started when the
//! store has vectors.

use std::path::Path;

use crate::error::{ComposeError, DoingWith, Result};

use crate::config::{StoreConfig, save_config};
use crate::model_config::EmbedderConfig;
use crate::open::{Database, open_index};

/// What pointing a store at another embedder did.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedderSwitch {
    /// The store already used it.
    Unchanged(StoreConfig),
    /// Saved; `documents_to_reembed` index documents still carry the previous embedder's
    /// vectors (kept as `previous_embedder` and searched until `arbor jobs reindex` finishes).
    Switched { saved: StoreConfig, embedder_id: arbor_ports::EmbedderId, documents_to_reembed: usize },
}

/// Points the store at `root` at the embedder `config` names, checking that it loads and that
/// its vectors can be told apart from the current ones; a store with vectors starts a
/// re-embedding, and a store still re-embedding is refused.
pub async fn switch_embedder(root: &Path, config: EmbedderConfig) -> Result<EmbedderSwitch> {
    let mut store_config = StoreConfig::load(root)?;
    let embedder = config.build()?;
    if store_config.embedder == config {
        return Ok(EmbedderSwitch::Unchanged(store_config));
    }
    // Vectors are told apart by embedder id alone: a different model under the same id would
    // be compared with the old one's vectors.
    if let Ok(current) = store_config.embedder.build()
        && current.id() == embedder.id()
    {
        return Err(ComposeError::Refused(format!(
            "{} has the same embedder id ({}) as the store's current embedder, so their vectors could not be told \
             apart; keep the model in a directory of another name",
            config.describe(),
            embedder.id()
        )));
    }
    if let Some(previous) = &store_config.previous_embedder {
        return Err(ComposeError::Refused(format!(
            "the store is still re-embedding from {}; finish with `arbor jobs reindex` before changing the embedder again",
            previous.describe()
        )));
    }
    let database = Database::open(root, &store_config, arbor_adapters_sqlite::OpenMode::Existing).await?;
    let documents = open_index(root, &store_config, &database)
        .await?
        .count()
        .await
        .backend(|| format!("counting the index's documents in {}", root.display()))?;
    if documents > 0 {
        store_config.previous_embedder = Some(store_config.embedder.clone());
    }
    store_config.embedder = config;
    save_config(root, &store_config)?;
    Ok(EmbedderSwitch::Switched { saved: store_config, embedder_id: embedder.id(), documents_to_reembed: documents })
}
