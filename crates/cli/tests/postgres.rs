//! The `arbor` binary on the Postgres backend, as a team runs it: a store directory for the
//! bodies, rows in a schema of the server `ARBOR_TEST_DATABASE_URL` names (run by `cargo xtask
//! conformance --backend postgres`). Built only with the `postgres` feature.
#![cfg(feature = "postgres")]

use std::path::Path;
use std::process::{Command, Output};

use arbor_adapters_postgres::testing::{SchemaGuard, fresh_database, test_database_url};

/// A fresh schema (migrated by the adapter, as a first `arbor init` would) and its name.
fn schema() -> (String, SchemaGuard) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (db, guard) = runtime.block_on(fresh_database());
    let name = db.schema().to_owned();
    runtime.block_on(db.close());
    (name, guard)
}

fn arbor(root: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    // These tests are about the backend, not the model: feature hashing, fast and exact.
    command.env("ARBOR_EMBEDDER", "hashing");
    command.arg("--root").arg(root).args(args).env_remove("ARBOR_LOG").env_remove("ARBOR_DATABASE_URL");
    if let Some(url) = url {
        command.env("ARBOR_DATABASE_URL", url);
    }
    command.output().expect("arbor runs")
}

fn json(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

fn evidence_texts(pack: &serde_json::Value) -> Vec<String> {
    pack["evidence"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn ingest_retrieve_forget_and_fsck_on_postgres() {
    let (schema, _guard) = schema();
    let url = test_database_url();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let scope = ["--conversation", "qs", "--project", "lumen"];

    let init = arbor(&root, Some(&url), &["init", "--backend", "postgres", "--schema", &schema, "--json"]);
    assert_eq!(json(&init)["config"]["backend"], "postgres");
    let saved = std::fs::read_to_string(root.join("arbor.json")).unwrap();
    assert!(!saved.contains("postgres://"), "a URL from the environment is never written down: {saved}");

    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/quickstart.jsonl");
    let ingest = json(&arbor(&root, Some(&url), &[&["ingest", sample, "--json"][..], &scope].concat()));
    assert_eq!(ingest["totals"]["failed"], 0, "{ingest}");
    assert!(ingest["totals"]["created"].as_u64().unwrap() >= 10, "{ingest}");

    let question = "Where do the Project Atlas dashboards live?";
    let pack = json(&arbor(&root, Some(&url), &[&["retrieve", question, "--json"][..], &scope].concat()));
    let grafana = pack["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"].as_str().unwrap().contains("Grafana"))
        .unwrap_or_else(|| panic!("the dashboards fact is found: {pack}"));
    let leaf = grafana["node_id"]["id"].as_str().unwrap().to_owned();

    let forget = arbor(&root, Some(&url), &[&["forget", &leaf][..], &scope].concat());
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));
    let pack = json(&arbor(&root, Some(&url), &[&["retrieve", question, "--json"][..], &scope].concat()));
    assert!(evidence_texts(&pack).iter().all(|t| !t.contains("Grafana")), "forgotten, yet retrieved: {pack}");

    let fsck = arbor(&root, Some(&url), &["fsck"]);
    assert!(
        fsck.status.success(),
        "{}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );

    // Another chain sees none of it.
    let other = json(&arbor(&root, Some(&url), &["retrieve", question, "--conversation", "elsewhere", "--json"]));
    assert!(evidence_texts(&other).is_empty(), "{other}");
}

#[test]
fn a_postgres_store_without_a_server_url_says_how_to_name_one() {
    let (schema, _guard) = schema();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let url = test_database_url();
    assert!(arbor(&root, Some(&url), &["init", "--backend", "postgres", "--schema", &schema]).status.success());
    let output = arbor(&root, None, &["stats"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("set ARBOR_DATABASE_URL"), "{stderr}");
}

#[test]
fn bad_postgres_settings_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let url = test_database_url();
    let root = dir.path().join("bad-schema");
    let output = arbor(&root, Some(&url), &["init", "--backend", "postgres", "--schema", "Robert'); DROP TABLE x;--"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid schema name"));
    assert!(!root.exists(), "a refused init leaves no directory");

    let root = dir.path().join("bad-url");
    let output = arbor(&root, None, &["init", "--backend", "postgres", "--database-url", "mysql://nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a Postgres URL"));
    assert!(!root.exists(), "a refused init leaves no directory");
}
