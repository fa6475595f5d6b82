//! The `arbor-bench` binary: `locomo` on a small LoCoMo-format fixture written for this test
//! (the whole pipeline runs: ingest per conversation, jobs, exact-evidence retrieval; recall is
//! counted the LoCoMo way; bad files get clear errors), `updates` on a fixture of its own, and
//! `synthetic`'s refusal of empty runs.

use std::path::Path;
use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/locomo-mini.json");

/// `arbor-bench <command> <args>`; the fixtures are about counting, not about a model: feature
/// hashing.
fn bench(command: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-bench"))
        .arg(command)
        .args(args)
        .env("ARBOR_EMBEDDER", "hashing")
        .env_remove("ARBOR_LOG")
        .output()
        .expect("arbor-bench runs")
}

fn eval(args: &[&str]) -> Output {
    bench("locomo", args)
}

#[test]
fn the_fixture_is_evaluated_through_the_real_pipeline() {
    let output = eval(&["--json", "--data", FIXTURE, "--k", "1,5"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["conversations"], 2);
    assert_eq!(report["turns"], 9);
    assert_eq!(report["questions"], 8);
    assert_eq!(report["k"], serde_json::json!([1, 5]));
    assert_eq!(report["embedder"], "hashing-v1/256d");
    let results = report["results"].as_array().unwrap();
    let by_question = |q: &str| results.iter().find(|r| r["question"] == q).unwrap();

    // Distinctive words: the evidence turn is the first leaf.
    let vespa = by_question("What was Tomas restoring in his garage?");
    assert_eq!(vespa["retrieved"][0], "D1:2", "{vespa}");
    assert_eq!(vespa["recall"][0], 1.0);
    // Retrieval never leaves the question's conversation: mini-2's turns are never offered
    // for mini-1's questions (their ids would collide, so check the text-distinct ones).
    let race = by_question("Which race is Bo training for?");
    assert_eq!(race["conversation"], "mini-2");
    assert!(race["retrieved"].as_array().unwrap().len() <= 2, "only mini-2's two turns: {race}");
    // No evidence: recall 1 by definition. Malformed evidence: never matched.
    assert_eq!(by_question("What does Ines think of the weather?")["recall"][1], 1.0);
    assert_eq!(by_question("What did Ada plant?")["recall"][1], 0.0);
    // Every category is reported, adversarial included in the overall mean.
    for category in ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"] {
        assert!(report["by_category"][category]["questions"].as_u64().unwrap() >= 1, "{category}");
    }
    let mean_at_5 = results.iter().map(|r| r["recall"][1].as_f64().unwrap()).sum::<f64>() / 8.0;
    let overall = report["overall"]["recall_percent"][1].as_f64().unwrap();
    assert!((overall - 100.0 * mean_at_5).abs() < 1e-9, "overall {overall} vs mean {mean_at_5}");
}

#[test]
fn the_table_names_the_embedder_and_the_latency() {
    let output = eval(&["--data", FIXTURE]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("embedder hashing-v1/256d, reasoner heuristic/1"), "{stdout}");
    assert!(stdout.contains("|    R@5 |   R@10 |   R@25 |   R@50 |"), "{stdout}");
    assert!(stdout.contains("| overall      |         8 |"), "{stdout}");
    assert!(stdout.contains("retrieve latency (query embedding included): p50"), "{stdout}");
}

#[test]
fn bad_files_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cases = [
        (write("empty.json", "[]"), "holds no conversations"),
        (write("object.json", "{}"), "expected a JSON list of conversations"),
        (write("nojson.json", "not json"), "not JSON"),
        (
            write(
                "baddate.json",
                r#"[{"sample_id":"c","conversation":{"session_1_date_time":"someday","session_1":[]},"qa":[]}]"#,
            ),
            "session_1_date_time \"someday\"",
        ),
        (write("noqa.json", r#"[{"sample_id":"c","conversation":{}}]"#), "missing \"qa\""),
    ];
    for (path, expected) in cases {
        let output = eval(&["--data", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{} was accepted", path.display());
        assert!(stderr.contains(expected), "{}: {stderr}", path.display());
    }
    let missing = eval(&["--data", Path::new("/nonexistent/locomo.json").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("reading /nonexistent/locomo.json"));
    let zero = eval(&["--data", FIXTURE, "--k", "0,5"]);
    assert!(String::from_utf8_lossy(&zero.stderr).contains("positive cut-offs"));
}

#[test]
fn a_bench_of_nothing_is_a_usage_error() {
    for flag in ["--leaves", "--queries", "--batch"] {
        let output = bench("synthetic", &[flag, "0"]);
        assert_eq!(output.status.code(), Some(2), "{flag} 0");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("must be at least 1"), "{stderr}");
    }
}

const UPDATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/updates-mini.json");

fn updates(args: &[&str]) -> Output {
    bench("updates", args)
}

/// Every probe is asked and judged by what the pack offers; the two kinds are counted apart,
/// and a distinct fact about the same person survives.
#[test]
fn update_cases_are_scored_probe_by_probe() {
    let output = updates(&["--json", "--data", UPDATES]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((report["cases"].as_u64(), report["events"].as_u64()), (Some(12), Some(34)));
    // The fixture's updates are phrased unlike the development set's, with its precision cases
    // (a sister's move, a visit, a hedge, an additive "also", two people in one city): every
    // update is caught and every distinct fact survives.
    assert_eq!(report["update_probes"], serde_json::json!({ "passed": 10, "total": 10 }), "{report:#}");
    assert_eq!(report["keep_probes"], serde_json::json!({ "passed": 10, "total": 10 }), "{report:#}");
    for result in report["results"].as_array().unwrap() {
        let clean =
            result["missing"].as_array().unwrap().is_empty() && result["offered_stale"].as_array().unwrap().is_empty();
        assert_eq!(result["passed"].as_bool(), Some(clean), "{result}");
        assert!(!result["evidence"].as_array().unwrap().is_empty(), "each probe finds something: {result}");
    }
    let text = updates(&["--data", UPDATES]);
    let shown = String::from_utf8(text.stdout).unwrap();
    assert!(shown.contains("update probes: 10 of 10 pass (100%)"), "{shown}");
    assert!(shown.contains("keep probes:   10 of 10 pass (100%)"), "{shown}");
}

#[test]
fn bad_update_files_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (body, expected) in [
        ("{}", "is not a list of update cases"),
        ("[]", "holds no cases"),
        (r#"[{"id":"x","namespace":"planet:mars","events":[],"probes":[]}]"#, "is not a namespace"),
    ] {
        let path = dir.path().join("cases.json");
        std::fs::write(&path, body).unwrap();
        let output = updates(&["--data", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1), "{body}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{body}: {stderr}");
    }
}
