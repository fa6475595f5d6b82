//! `arbor` with the LanceDB index (`arbor init --index lance`): the same commands, the index in
//! `<root>/lance`; a forget leaves the forgotten words in no file of the dataset, and a rebuild
//! from the store answers with the same memories.

use std::path::Path;
use std::process::Command;

fn arbor(root: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .env("ARBOR_EMBEDDER", "hashing")
        .env_remove("ARBOR_LOG")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("arbor runs");
    assert!(output.status.success(), "arbor {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// Whether any file under `dir` holds `needle`'s bytes.
fn any_file_holds(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().any(|entry| {
        let path = entry.unwrap().path();
        if path.is_dir() {
            any_file_holds(&path, needle)
        } else {
            std::fs::read(&path).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes())
        }
    })
}

fn evidence(pack: &serde_json::Value) -> Vec<String> {
    pack["evidence"].as_array().unwrap().iter().map(|e| e["node_id"]["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn forgotten_words_leave_every_file_of_the_lance_dataset_and_a_rebuild_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    arbor(&root, &["init", "--index", "lance"]);
    let config = std::fs::read_to_string(root.join("arbor.json")).unwrap();
    assert!(config.contains("\"index\": \"lance\""), "{config}");
    let events = dir.path().join("events.jsonl");
    let lines: Vec<String> = [
        "My locker code word is quokkaberry.",
        "The harbour ferry leaves at seven.",
        "Dana prefers tea over coffee.",
        "The ferry timetable changes in winter.",
    ]
    .iter()
    .enumerate()
    .map(|(i, text)| format!(r#"{{"text":"{text}","source":{{"type":"message","message_id":"m{i}"}}}}"#))
    .collect();
    std::fs::write(&events, lines.join("\n")).unwrap();
    arbor(&root, &["ingest", events.to_str().unwrap(), "--conversation", "c1"]);
    arbor(&root, &["jobs", "run"]);

    let output = arbor(&root, &["--json", "retrieve", "locker code word", "--conversation", "c1"]);
    // Lance warns on every search that names its columns but not the score; a question must
    // not print warnings its asker can do nothing about.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("WARN"), "{stderr}");
    let found = json(&output);
    assert!(found["evidence"][0]["text"].as_str().unwrap().contains("quokkaberry"), "{found}");
    let id = found["evidence"][0]["node_id"]["id"].as_str().unwrap().to_owned();
    assert!(any_file_holds(&root.join("lance"), "quokkaberry"), "the words are in the dataset before the forget");

    arbor(&root, &["forget", &id, "--conversation", "c1"]);
    assert!(!any_file_holds(&root.join("lance"), "quokkaberry"), "a file of the Lance dataset keeps forgotten words");
    assert!(!any_file_holds(&root, "quokkaberry"), "a file of the store keeps forgotten words");
    let after = json(&arbor(&root, &["--json", "retrieve", "locker code word", "--conversation", "c1"]));
    assert!(evidence(&after).iter().all(|e| e != &id));

    // Rebuilt from the authoritative store, the index answers with the same memories.
    let before = evidence(&json(&arbor(&root, &["--json", "retrieve", "ferry", "--conversation", "c1"])));
    assert!(!before.is_empty());
    arbor(&root, &["jobs", "reindex"]);
    let rebuilt = evidence(&json(&arbor(&root, &["--json", "retrieve", "ferry", "--conversation", "c1"])));
    assert_eq!(rebuilt, before);
}

#[test]
fn the_lance_index_is_chosen_at_init_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    arbor(&root, &["init"]);
    let config = std::fs::read_to_string(root.join("arbor.json")).unwrap();
    assert!(!config.contains("\"index\""), "the default index is the store's own: {config}");
    assert!(!root.join("lance").exists());
}
