//! Fresh, throwaway schemas for tests: each test gets its own schema on the server named by
//! `ARBOR_TEST_DATABASE_URL` (which `cargo xtask conformance --backend postgres` starts and
//! sets), dropped again when the test is done.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::{PgConfig, PgDatabase};

/// The environment variable naming the test server.
pub const TEST_DATABASE_URL: &str = "ARBOR_TEST_DATABASE_URL";

/// The test server's URL. Panics with instructions when it is not set: a Postgres test that
/// silently skipped would check nothing.
pub fn test_database_url() -> String {
    std::env::var(TEST_DATABASE_URL).unwrap_or_else(|_| {
        panic!(
            "{TEST_DATABASE_URL} is not set: run `cargo xtask conformance --backend postgres`, which starts a \
             throwaway server, or point {TEST_DATABASE_URL} at a Postgres with pgvector"
        )
    })
}

/// Drops its schema (and everything in it) when dropped.
#[derive(Debug)]
pub struct SchemaGuard {
    url: String,
    schema: String,
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // Drop may run inside an async runtime, which cannot be blocked on: use a thread.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&url).await.ok()?;
                // Connections of the test's pool may still be open (its runtime may not have
                // run their shutdown yet); they would hold the schema's locks.
                sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1")
                    .bind(&schema)
                    .execute(&mut conn)
                    .await
                    .ok()?;
                sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).execute(&mut conn).await.ok()?;
                conn.close().await.ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            tracing::warn!(schema = %self.schema, "could not drop a test schema");
        }
    }
}

/// A database on a schema no other test uses.
pub async fn fresh_database() -> (Arc<PgDatabase>, SchemaGuard) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let url = test_database_url();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let schema = format!("arbor_test_{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let config = PgConfig { max_connections: 4, ..PgConfig::new(url.clone()).with_schema(schema.clone()) };
    let db = PgDatabase::connect(&config).await.unwrap_or_else(|e| panic!("the test database opens: {e:?}"));
    (Arc::new(db), SchemaGuard { url, schema })
}
