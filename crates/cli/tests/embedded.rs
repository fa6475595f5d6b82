//! The embedded store end to end, through the `arbor` binary as a user runs it: forgetting
//! leaves no byte of the text anywhere under the store; a SIGKILL in the middle of a batch
//! ingest loses nothing acknowledged and leaves `fsck` clean; bad input gets a clear error.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{arbor, arbor_stdin, failure, ok};

fn new_store() -> (tempfile::TempDir, PathBuf) {
    support::new_store(None)
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn holders(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|f| std::fs::read(f).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes()))
        .collect()
}

fn leaf_ids(stdout: &str) -> Vec<String> {
    stdout.split_whitespace().filter(|w| w.starts_with("leaf-")).map(str::to_owned).collect()
}

#[test]
fn forgetting_leaves_no_byte_of_the_text_in_the_store_directory() {
    let (_dir, root) = new_store();
    let secret = "the spare key hides under the quokka statue";
    let mut events = String::new();
    for i in 0..20 {
        events.push_str(&format!("{{\"text\":\"Garden note {i}: water the tomatoes.\"}}\n"));
    }
    events.push_str(&format!("{{\"text\":\"Remember: {secret}.\"}}\n"));
    let stdout = ok(&arbor_stdin(&root, &["ingest"], events.as_bytes()));
    let leaf = leaf_ids(&stdout).pop().expect("the secret became a leaf");
    ok(&arbor(&root, &["jobs", "run"]));
    assert!(!holders(&root, "quokka").is_empty(), "the text is stored before the forget");
    // A recorded question that quotes it: the record goes with the leaf it found.
    let recorded = ok(&arbor(&root, &["--json", "retrieve", "--record", "where is the spare key? quokka statue?"]));
    let recorded: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    let retrieval = recorded["retrieval_id"].as_str().expect("recorded").to_owned();
    ok(&arbor(&root, &["show-retrieval", &retrieval]));

    let receipt = ok(&arbor(&root, &["--json", "forget", &leaf]));
    let receipt: serde_json::Value = serde_json::from_str(&receipt).unwrap();
    assert!(receipt["receipt"]["bodies_deleted"].as_u64().unwrap() >= 1, "{receipt}");
    for needle in [secret, "quokka", "spare key"] {
        assert_eq!(holders(&root, needle), Vec::<PathBuf>::new(), "{needle:?} survives the forget");
    }
    let error = failure(&arbor(&root, &["show-retrieval", &retrieval]));
    assert!(error.contains("no recorded retrieval"), "{error}");
    let pack = ok(&arbor(&root, &["--json", "retrieve", "quokka statue"]));
    let pack: serde_json::Value = serde_json::from_str(&pack).unwrap();
    assert!(!pack["evidence"].to_string().contains("quokka"), "{pack}");
    ok(&arbor(&root, &["fsck"]));
}

#[test]
fn a_sigkill_mid_batch_loses_nothing_acknowledged_and_leaves_fsck_clean() {
    let (dir, root) = new_store();
    let input = dir.path().join("events.jsonl");
    let mut file = std::fs::File::create(&input).unwrap();
    let total = 4_000;
    for i in 0..total {
        writeln!(file, "{{\"text\":\"Shipment {i} carries crate token zq{i}x to the depot.\"}}").unwrap();
    }
    drop(file);

    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        // These tests are about the store, not the model: feature hashing, fast and exact.
        .env("ARBOR_EMBEDDER", "hashing")
        .arg("--root")
        .arg(&root)
        .args(["ingest", input.to_str().unwrap(), "--batch", "50", "--defer-jobs"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read acknowledgements until well into the run, then kill without warning.
    let mut acknowledged: Vec<(usize, String)> = Vec::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while acknowledged.len() < 700 && reader.read_line(&mut line).unwrap() > 0 {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let (Some(n), Some(leaf)) = (words.get(1), words.iter().find(|w| w.starts_with("leaf-"))) {
            acknowledged.push((n.parse::<usize>().unwrap() - 1, (*leaf).to_owned()));
        }
        line.clear();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(acknowledged.len() >= 700, "the ingest ran long enough to be killed mid-way");

    // The next command that writes recovers; nothing is half-written.
    ok(&arbor(&root, &["jobs", "run"]));
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "{fsck}");
    // Every acknowledged event is there and retrievable.
    for (i, leaf) in acknowledged.iter().step_by(35).chain(acknowledged.iter().rev().take(3)) {
        let pack = ok(&arbor(&root, &["--json", "retrieve", &format!("zq{i}x"), "--max-results", "1"]));
        let pack: serde_json::Value = serde_json::from_str(&pack).unwrap();
        assert_eq!(pack["evidence"][0]["node_id"]["id"], leaf.as_str(), "event {i} was acknowledged as {leaf}");
    }

    // Running the ingest again completes it: acknowledged events are duplicates, the rest new.
    let rerun = ok(&arbor(&root, &["--json", "ingest", input.to_str().unwrap(), "--batch", "500"]));
    let rerun: serde_json::Value = serde_json::from_str(&rerun).unwrap();
    let totals = &rerun["totals"];
    assert_eq!(totals["failed"], 0);
    assert!(totals["duplicates"].as_u64().unwrap() >= acknowledged.len() as u64, "{totals}");
    assert_eq!(totals["created"].as_u64().unwrap() + totals["duplicates"].as_u64().unwrap(), total as u64);
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "{fsck}");
}

#[test]
fn fsck_finds_hand_edits_and_orphans_and_repairs_what_it_can() {
    let (_dir, root) = new_store();
    let stdout = ok(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"The boiler was serviced in March.\"}\n"));
    let leaf = leaf_ids(&stdout).pop().unwrap();
    let body = files(&root.join("memory")).into_iter().find(|f| f.to_string_lossy().contains(&leaf)).unwrap();
    let edited = std::fs::read_to_string(&body).unwrap().replace("March", "April");
    std::fs::write(&body, edited).unwrap();
    let orphan = body.with_file_name("leaf-orphan.md");
    std::fs::write(&orphan, "---\nid: \"leaf-orphan\"\n---\n\nstray\n").unwrap();

    // The body of a forgotten memory, put back from somewhere: provably garbage.
    let forgotten =
        ok(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"The vault code is kept in the garden shed.\"}\n"));
    let forgotten = leaf_ids(&forgotten).pop().unwrap();
    let forgotten_body =
        files(&root.join("memory")).into_iter().find(|f| f.to_string_lossy().contains(&forgotten)).unwrap();
    let copy = std::fs::read(&forgotten_body).unwrap();
    ok(&arbor(&root, &["forget", &forgotten, "--only-this-version"]));
    std::fs::write(&forgotten_body, copy).unwrap();

    let output = arbor(&root, &["fsck"]);
    let report = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains(&format!("edited_body: {leaf}")), "{report}");
    assert!(report.contains("foreign_file: memory/"), "not an Arbor body: {report}");
    assert!(report.contains(&format!("leftover_body: {forgotten}")), "{report}");

    let output = arbor(&root, &["fsck", "--repair"]);
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(!forgotten_body.exists(), "the forgotten memory's body was removed");
    assert!(orphan.exists(), "a file that is not an Arbor body is left alone");
    assert!(body.exists(), "an edited body is reported, never deleted");
    assert!(report.contains("leftover_body") && report.contains("(repaired)"), "{report}");
    assert!(report.contains("to fix:"), "what is not repaired says how: {report}");

    // A memory whose row the database lost (restored from an older backup, say): its body is
    // kept, and said to be recoverable.
    let lost = ok(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"The canoe is stored at the north dock.\"}\n"));
    let lost = leaf_ids(&lost).pop().unwrap();
    let lost_body = files(&root.join("memory")).into_iter().find(|f| f.to_string_lossy().contains(&lost)).unwrap();
    let db = rusqlite::Connection::open(root.join("arbor.db")).unwrap();
    db.execute("DELETE FROM leaves WHERE id = ?", [&lost]).unwrap();
    drop(db);
    let output = arbor(&root, &["fsck", "--repair"]);
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(report.contains("recoverable_body") && report.contains("--rebuild-from-bodies"), "{report}");
    assert!(lost_body.exists(), "a memory's body is never deleted as an orphan");
}

#[test]
fn bad_input_gets_a_clear_error_and_leaves_nothing_behind() {
    let (dir, root) = new_store();

    // Oversized and malformed events: refused one by one, the good one stored.
    let big = format!("{{\"text\":\"{}\"}}\n", "x".repeat(70_000));
    let input = format!(
        "{{\"text\":\"a fine event about gardening\"}}\n{big}{{\"text\":\"x\",\"hints\":{{\"kind\":\"rumour\"}}}}\n"
    );
    let output = arbor_stdin(&root, &["ingest"], input.as_bytes());
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("line 2     error: invalid event: field `text` is 70000 bytes; the limit is 65536 bytes"),
        "{stdout}"
    );
    assert!(stdout.contains("line 3     error: unknown variant `rumour`"), "{stdout}");
    assert!(stdout.contains("3 events into conversation:default: 1 created"), "{stdout}");
    let output = arbor_stdin(&root, &["ingest"], b"{\"text\":\"caf\xe9\"}\n");
    assert!(String::from_utf8(output.stdout).unwrap().contains("line 1     error: the line is not valid UTF-8"));

    // Scopes and ids that are not allowed.
    let error = failure(&arbor(&root, &["retrieve", "x", "--namespace", "team:alpha"]));
    assert!(error.contains("unknown namespace kind \"team\""), "{error}");
    let error = failure(&arbor(&root, &["retrieve", "x", "--conversation", "../escape"]));
    assert!(error.contains("scope id \"../escape\" contains '/'"), "{error}");
    let error = failure(&arbor(&root, &["show", "../../etc/passwd"]));
    assert!(error.contains("is not a leaf or summary id"), "{error}");
    let error = failure(&arbor(&root, &["forget", "leaf-..x"]));
    assert!(error.contains("contains \"..\""), "{error}");
    let error = failure(&arbor(&root, &["show", "leaf-doesnotexist"]));
    assert!(error.contains("node leaf-doesnotexist was not found"), "{error}");

    // A directory that is not a store, and stores from a newer arbor.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let error = failure(&arbor(&elsewhere, &["stats"]));
    assert!(error.contains("is not an Arbor store: it has no arbor.json"), "{error}");
    let error = failure(&arbor(&dir.path().join("missing"), &["stats"]));
    assert!(error.contains("the directory does not exist"), "{error}");
    std::fs::write(elsewhere.join("notes.txt"), "mine").unwrap();
    let error = failure(&arbor(&elsewhere, &["init"]));
    assert!(error.contains("is not empty and is not an Arbor store"), "{error}");

    let config = root.join("arbor.json");
    let original = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, original.replace("\"format_version\": 1", "\"format_version\": 99")).unwrap();
    let error = failure(&arbor(&root, &["stats"]));
    assert!(error.contains("written by a newer arbor (format 99)"), "{error}");
    std::fs::write(&config, &original).unwrap();
    let db = rusqlite::Connection::open(root.join("arbor.db")).unwrap();
    db.pragma_update(None, "user_version", 99).unwrap();
    drop(db);
    let error = failure(&arbor(&root, &["stats"]));
    assert!(
        error.contains(&format!(
            "schema version 99; this build understands up to {}; upgrade arbor",
            arbor_adapters_sqlite::SCHEMA_VERSION
        )),
        "{error}"
    );
}

/// `arbor consolidate` as a person runs it: two suggestions confirmed in the wrong order are both
/// current until a pass supersedes the older; `--dry-run` changes nothing; the report lands
/// under `reports/consolidation/`, is listed by `--reports` and holds no memory text (a forget
/// leaves no byte of it behind); a second pass finds nothing new; while another pass holds the
/// lock, a pass refuses to start.
#[test]
fn consolidate_supersedes_in_hindsight_reports_and_takes_turns() {
    let (_dir, root) = new_store();
    let events = concat!(
        r#"{"text":"Maya lives in Porto Quokkaville.","actor":"assistant","observed_at":"2026-01-01T00:00:00Z"}"#,
        "\n",
        r#"{"text":"Maya just moved to Amsterdam for her new job.","actor":"assistant","observed_at":"2026-05-01T00:00:00Z"}"#,
        "\n",
    );
    ok(&arbor_stdin(&root, &["ingest"], events.as_bytes()));
    let pending = ok(&arbor(&root, &["review", "list"]));
    for leaf in leaf_ids(&pending) {
        ok(&arbor(&root, &["review", "confirm", &leaf]));
    }
    let both = ok(&arbor(&root, &["retrieve", "where does Maya live?"]));
    assert!(both.contains("Porto") && both.contains("possibly outdated"), "{both}");
    let pack: serde_json::Value =
        serde_json::from_str(&ok(&arbor(&root, &["--json", "retrieve", "where does Maya live?"]))).unwrap();
    let porto = pack["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"].as_str().unwrap().contains("Porto"))
        .and_then(|e| e["node_id"]["id"].as_str())
        .expect("the older memory is evidence")
        .to_owned();

    let plan = ok(&arbor(&root, &["consolidate", "--dry-run"]));
    assert!(plan.contains("**update**") && plan.contains("would be applied"), "{plan}");
    assert!(ok(&arbor(&root, &["consolidate", "--reports"])).contains("no consolidation reports yet"));

    std::fs::create_dir_all(root.join("reports/consolidation")).unwrap();
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join("reports/consolidation/.lock"));
    let lock = lock.unwrap();
    lock.try_lock().unwrap();
    let refused = failure(&arbor(&root, &["consolidate"]));
    assert!(refused.contains("another consolidation pass is running"), "{refused}");
    lock.unlock().unwrap();

    let done = ok(&arbor(&root, &["consolidate"]));
    assert!(done.contains("1 change applied, 0 left for review"), "{done}");
    // The report records what a rebuild from the bodies must retire again.
    let reports: Vec<PathBuf> = files(&root.join("reports/consolidation"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    let report = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(report.lines().any(|l| l.starts_with("retired: ") && l.contains(&porto)), "{report}");
    let listed = ok(&arbor(&root, &["consolidate", "--reports"]));
    assert!(listed.contains("reports/consolidation/") && listed.contains("1 change applied"), "{listed}");
    let now = ok(&arbor(&root, &["retrieve", "where does Maya live?"]));
    assert!(now.contains("Amsterdam") && !now.contains("Porto"), "{now}");
    assert!(ok(&arbor(&root, &["consolidate"])).contains("nothing to consolidate"));

    // The superseded memory is history; forgetting it leaves no byte of it, reports included.
    ok(&arbor(&root, &["forget", &porto]));
    ok(&arbor(&root, &["jobs", "run"]));
    assert_eq!(holders(&root, "Quokkaville"), Vec::<PathBuf>::new());
    ok(&arbor(&root, &["fsck"]));
}
