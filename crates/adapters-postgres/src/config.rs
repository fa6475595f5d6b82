//! [`PgConfig`] and [`PgDatabase`]: connecting to Postgres, checking for pgvector, creating
//! Arbor's schema and bringing it up to date. A connection pool is shared by the store and the
//! index; every connection's `search_path` points at Arbor's schema first.

use std::str::FromStr;
use std::time::Duration;

use arbor_ports::{Error, Result};
use arbor_search::Mirror;
use log::LevelFilter;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool, Row};

use crate::error::sql_error;
use crate::schema::{MIGRATIONS, migrate, refile_lookup_keys};

/// Where Arbor's tables live on a Postgres server.
#[derive(Clone, PartialEq, Eq)]
pub struct PgConfig {
    /// `postgres://user:password@host:port/database`.
    pub url: String,
    /// The schema holding Arbor's tables (created if missing), so one database can host
    /// several stores.
    pub schema: String,
    pub max_connections: u32,
}

impl std::fmt::Debug for PgConfig {
    // The URL may carry a password: show where, never how.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConfig")
            .field("url", &redacted(&self.url))
            .field("schema", &self.schema)
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

/// A database URL with any password replaced by `***`, for messages and logs.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let Some((credentials, host)) = rest.split_once('@') else { return url.to_owned() };
    match credentials.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

impl PgConfig {
    /// The default schema name, `arbor`.
    pub const DEFAULT_SCHEMA: &'static str = "arbor";

    pub fn new(url: impl Into<String>) -> PgConfig {
        PgConfig { url: url.into(), schema: PgConfig::DEFAULT_SCHEMA.to_owned(), max_connections: 8 }
    }

    #[must_use]
    pub fn with_schema(mut self, schema: impl Into<String>) -> PgConfig {
        self.schema = schema.into();
        self
    }

    fn options(&self) -> Result<PgConnectOptions> {
        if !(self.url.starts_with("postgres://") || self.url.starts_with("postgresql://")) {
            return Err(Error::invalid(
                "database URL",
                format!("{} is not a Postgres URL (postgres://user:password@host:port/database)", redacted(&self.url)),
            ));
        }
        PgConnectOptions::from_str(&self.url)
            .map_err(|e| Error::invalid("database URL", format!("{} is not a Postgres URL: {e}", redacted(&self.url))))
    }
}

/// A schema name Arbor accepts: a plain lowercase SQL identifier, so it never needs quoting.
pub(crate) fn validate_schema(schema: &str) -> Result<()> {
    let mut chars = schema.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    if !first_ok || schema.len() > 63 || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        return Err(Error::invalid(
            "schema name",
            format!("{schema:?}: use 1-63 lowercase letters, digits and underscores, not starting with a digit"),
        ));
    }
    Ok(())
}

/// An open Arbor schema on a Postgres server.
#[derive(Debug)]
pub struct PgDatabase {
    pool: PgPool,
    schema: String,
    /// The in-memory search mirror of the index, shared by every
    /// [`PgIndex`](crate::PgIndex) on this database.
    pub(crate) mirror: tokio::sync::Mutex<Mirror>,
}

impl PgDatabase {
    /// Connects, checks for pgvector (creating the extension if the role may), creates the
    /// schema if needed and migrates it. Refuses a schema newer than this build.
    pub async fn connect(config: &PgConfig) -> Result<PgDatabase> {
        validate_schema(&config.schema)?;
        let options = config.options()?;
        let mut conn = PgConnection::connect_with(&options).await.map_err(|e| unreachable(config, e))?;
        let extension_schema = ensure_pgvector(&mut conn).await?;
        sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {}", config.schema))
            .execute(&mut conn)
            .await
            .map_err(sql_error)?;
        // No spaces: the value travels in the startup packet's space-separated options.
        let search_path = format!("{},{extension_schema}", config.schema);
        sqlx::query("SELECT set_config('search_path', $1, false)")
            .bind(&search_path)
            .execute(&mut conn)
            .await
            .map_err(sql_error)?;
        migrate(&mut conn, MIGRATIONS).await?;
        refile_lookup_keys(&mut conn).await?;
        conn.close().await.map_err(sql_error)?;
        let pool = PgPoolOptions::new()
            .max_connections(config.max_connections.max(1))
            .acquire_timeout(Duration::from_secs(30))
            // A broken connection fails its query, which reports it; a ping before every
            // query would double the round trips.
            .test_before_acquire(false)
            // Slow statements are worth a debug line, not a warning carrying a 100 KB statement.
            .connect_with(options.log_slow_statements(LevelFilter::Debug, Duration::from_secs(1)).options([
                ("search_path", search_path.as_str()),
                // Names the store in pg_stat_activity.
                ("application_name", config.schema.as_str()),
                // Listings bind their filter as parameters; a generic plan, chosen
                // blind to them, scans far more than a plan for the values at hand.
                ("plan_cache_mode", "force_custom_plan"),
            ]))
            .await
            .map_err(|e| unreachable(config, e))?;
        Ok(PgDatabase { pool, schema: config.schema.clone(), mirror: tokio::sync::Mutex::new(Mirror::default()) })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Closes every pooled connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn unreachable(config: &PgConfig, error: sqlx::Error) -> Error {
    let context = |source: arbor_ports::BoxError| -> arbor_ports::BoxError {
        format!("cannot connect to {}: {source}", redacted(&config.url)).into()
    };
    match sql_error(error) {
        Error::Unavailable { backend, source } => Error::Unavailable { backend, source: context(source) },
        Error::Backend { backend, source } => Error::Backend { backend, source: context(source) },
        other => other,
    }
}

/// Makes sure pgvector is installed in the database; returns the schema its types live in.
async fn ensure_pgvector(conn: &mut PgConnection) -> Result<String> {
    let find = "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'vector'";
    if let Some(row) = sqlx::query(find).fetch_optional(&mut *conn).await.map_err(sql_error)? {
        return Ok(row.get(0));
    }
    if let Err(error) = sqlx::query("CREATE EXTENSION IF NOT EXISTS vector").execute(&mut *conn).await {
        // Another process may have created it at the same moment (IF NOT EXISTS is not atomic).
        if let Some(row) = sqlx::query(find).fetch_optional(&mut *conn).await.map_err(sql_error)? {
            return Ok(row.get(0));
        }
        let available = matches!(&error, sqlx::Error::Database(db) if db.code().as_deref() != Some("0A000"));
        tracing::warn!(%error, "cannot create the pgvector extension");
        return Err(Error::Unsupported {
            operation: if available {
                "vector search (pgvector is not installed in this database and this role may not create it: run CREATE EXTENSION vector as its owner)"
            } else {
                "vector search (the pgvector extension is not available on this server)"
            },
            backend: crate::error::BACKEND,
        });
    }
    let row = sqlx::query(find).fetch_one(&mut *conn).await.map_err(sql_error)?;
    Ok(row.get(0))
}
