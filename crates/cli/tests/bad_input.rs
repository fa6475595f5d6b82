//! The bad-input corpus (`tests/bad_input/`): inputs shaped the way careless or hostile callers
//! send them — oversized, not UTF-8, NUL and control characters, path tricks, 10,000-deep
//! nesting, huge numbers, dates no store holds, duplicated fields, text asking to widen its
//! scope. Each file goes through `arbor ingest` on a fresh store: exactly the lines
//! `expected.tsv` names are refused, each with its clear error; every other line is stored, in
//! the caller's own namespace; and the store is clean afterwards.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{assert_clean, command, new_store, ok};

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bad_input"))
}

/// `expected.tsv`: file -> (line -> what its error says).
fn expectations() -> BTreeMap<String, BTreeMap<u64, String>> {
    let text = std::fs::read_to_string(corpus().join("expected.tsv")).unwrap();
    let mut out: BTreeMap<String, BTreeMap<u64, String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut fields = line.splitn(3, '\t');
        let (file, number, error) = (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
        out.entry(file.to_owned()).or_default().insert(number.parse().unwrap(), error.to_owned());
    }
    out
}

#[test]
fn every_bad_input_gets_its_clear_error_and_the_rest_lands() {
    let expected = expectations();
    let mut files: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), expected.len(), "every case file has its expectations, and only those");
    for file in files {
        let refused = &expected[&file];
        let (_dir, root) = new_store(None);
        let path = corpus().join(&file);
        let output =
            command(&root, None, &["--json", "ingest", path.to_str().unwrap(), "--batch", "2"]).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{file}: some lines are refused, so the status says so");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{file}: {e}: {}", String::from_utf8_lossy(&output.stderr)));
        let mut seen = BTreeMap::new();
        for result in report["results"].as_array().unwrap() {
            let line = result["line"].as_u64().unwrap();
            match result["status"].as_str().unwrap() {
                "failed" => {
                    let error = result["error"].as_str().unwrap();
                    let want = refused.get(&line).unwrap_or_else(|| panic!("{file}: line {line} was refused: {error}"));
                    assert!(error.contains(want.as_str()), "{file}: line {line}: {error:?} does not say {want:?}");
                    seen.insert(line, ());
                }
                _ => {
                    for chunk in result["report"]["chunks"].as_array().unwrap() {
                        assert_eq!(
                            chunk["namespace"], "conversation:default",
                            "{file}: line {line} stayed in its scope"
                        );
                    }
                }
            }
        }
        let missing: Vec<&u64> = refused.keys().filter(|l| !seen.contains_key(*l)).collect();
        assert!(missing.is_empty(), "{file}: lines {missing:?} were not refused: {report}");
        // Nothing landed outside the caller's scope, and nothing is half-written.
        let global = ok(&command(&root, None, &["--json", "browse", "--namespace", "global"]).output().unwrap());
        assert_eq!(global.trim(), "[]", "{file}: nothing reached the global layer");
        assert_clean(&root, None, &file);
    }
}
