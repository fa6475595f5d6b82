//! `arbor init`: a new store, with the backend, embedder and settings its flags choose.

use std::path::Path;

use anyhow::Result;
use arbor_compose as compose;
use serde::Serialize;

use crate::output::print_json;

/// `arbor init`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InitArgs {
    /// Where rows live.
    #[arg(long, value_parser = crate::choice(compose::Backend::CHOICES), default_value = "sqlite")]
    backend: compose::Backend,
    /// The Postgres server (`postgres://user:password@host/db`), saved in arbor.json; or set
    /// ARBOR_DATABASE_URL, which is read on every run and never saved.
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// The Postgres schema for this store's tables (one database can hold several stores);
    /// default `arbor`.
    #[arg(long, value_name = "NAME")]
    schema: Option<String>,
    /// How text becomes vectors: the local model when installed (`arbor models install`),
    /// else feature hashing.
    #[arg(long, value_parser = crate::choice(compose::EmbedderChoice::CHOICES), env = "ARBOR_EMBEDDER", default_value = "auto")]
    embedder: compose::EmbedderChoice,
    /// Where the search index lives: the store's own database, or a LanceDB dataset beside it.
    #[arg(long, value_parser = crate::choice(compose::IndexBackend::CHOICES), default_value = "store")]
    index: compose::IndexBackend,
}

impl From<InitArgs> for compose::InitOptions {
    fn from(args: InitArgs) -> compose::InitOptions {
        compose::InitOptions {
            backend: args.backend,
            database_url: args.database_url,
            schema: args.schema,
            embedder: args.embedder,
            index: args.index,
        }
    }
}

pub(crate) async fn init(root: &Path, options: &compose::InitOptions, json: bool) -> Result<()> {
    let (config, initialized) = compose::init(root, options).await?;
    if json {
        #[derive(Serialize)]
        struct Output<'a> {
            root: String,
            created: bool,
            database_recreated: bool,
            config: &'a compose::StoreConfig,
        }
        return print_json(&Output {
            root: root.display().to_string(),
            created: initialized == compose::Initialized::Created,
            database_recreated: initialized == compose::Initialized::DatabaseRecreated,
            config: &config,
        });
    }
    if initialized == compose::Initialized::DatabaseRecreated {
        crate::output::outln!(
            "{} is an Arbor store whose database was missing or empty; it held no memories, so a new database was made",
            root.display()
        );
    } else if initialized == compose::Initialized::Created {
        match &config.postgres {
            Some(pg) => {
                crate::output::outln!(
                    "created an Arbor store at {} (rows in Postgres, schema {})",
                    root.display(),
                    pg.schema
                )
            }
            None => crate::output::outln!("created an Arbor store at {}", root.display()),
        }
    } else {
        crate::output::outln!("{} is already an Arbor store", root.display());
    }
    Ok(())
}
