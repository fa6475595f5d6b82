//! Contention: eight `arbor` processes on one store at once — four writers ingesting, two
//! readers asking, two job runners sealing — bounded in time. No process reports an error
//! (a busy store is waited for), no event is lost or stored twice, every job gets done, and
//! `fsck` is clean afterwards. On SQLite (one file) and, with the `postgres` feature, on the
//! server `ARBOR_TEST_DATABASE_URL` names.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::{assert_clean, command, exported_ids, new_store, ok};

const WRITERS: usize = 4;
const EVENTS_PER_WRITER: usize = 120;
const READERS: usize = 2;
const RUNNERS: usize = 2;
/// A run that has not finished by then has hung.
const LIMIT: Duration = Duration::from_secs(300);

/// Runs the eight processes; returns how many operations they made, and every leaf the
/// writers were acknowledged with.
fn contend(root: &Path, url: Option<&str>) -> (usize, BTreeSet<String>) {
    let started = Instant::now();
    let writers_done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for reader in 0..READERS + RUNNERS {
        let (root, url, done) = (root.to_path_buf(), url.map(str::to_owned), writers_done.clone());
        readers.push(std::thread::spawn(move || {
            let mut operations = 0;
            while !done.load(Ordering::SeqCst) {
                let args: &[&str] = if reader < READERS {
                    &["retrieve", "which shipment carries the token?"]
                } else {
                    &["jobs", "run"]
                };
                let output = command(&root, url.as_deref(), args).output().unwrap();
                assert!(
                    output.status.success(),
                    "{args:?} failed under contention: {}\n{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
                operations += 1;
            }
            operations
        }));
    }
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let (root, url) = (root.to_path_buf(), url.map(str::to_owned));
        writers.push(std::thread::spawn(move || {
            let events: String = (0..EVENTS_PER_WRITER)
                .map(|i| format!("{{\"text\":\"Shipment {i} from writer {writer} carries token zq{writer}w{i}x.\"}}\n"))
                .collect();
            let mut child = command(&root, url.as_deref(), &["--json", "ingest", "--batch", "8"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(events.as_bytes()).unwrap();
            let output = child.wait_with_output().unwrap();
            let stdout = ok(&output);
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(report["totals"]["failed"], 0, "writer {writer}: {}", report["totals"]);
            assert!(report.get("jobs_error").is_none(), "writer {writer}: {report}");
            // Every event is acknowledged as a leaf: a new one, or the one it repeats.
            let results = report["results"].as_array().unwrap();
            assert_eq!(results.len(), EVENTS_PER_WRITER);
            results
                .iter()
                .map(|r| {
                    let chunk = &r["report"]["chunks"][0];
                    // A new leaf, or the one it repeats.
                    let id = chunk["leaf_id"].as_str().or(chunk["existing"].as_str());
                    id.unwrap_or_else(|| panic!("acknowledged as a leaf: {chunk}")).to_owned()
                })
                .collect::<Vec<String>>()
        }));
    }
    let mut acknowledged = BTreeSet::new();
    let mut operations = 0;
    for writer in writers {
        let ids = writer.join().unwrap();
        operations += ids.len().div_ceil(8);
        acknowledged.extend(ids);
    }
    writers_done.store(true, Ordering::SeqCst);
    operations += readers.into_iter().map(|r| r.join().unwrap()).sum::<usize>();
    assert!(started.elapsed() < LIMIT, "the contention run took {:?}", started.elapsed());
    (operations, acknowledged)
}

fn check_after(root: &Path, url: Option<&str>, acknowledged: &BTreeSet<String>) {
    ok(&command(root, url, &["jobs", "run"]).output().unwrap());
    assert_clean(root, url, "after contention");
    let ids = exported_ids(root, url);
    let unique: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(unique.len(), ids.len(), "no memory is stored twice");
    assert_eq!(&unique, acknowledged, "every acknowledged leaf is stored, and nothing else");
    assert!(unique.len() > WRITERS * EVENTS_PER_WRITER * 9 / 10, "the events are mostly distinct: {}", unique.len());
    let stats = ok(&command(root, url, &["--json", "stats"]).output().unwrap());
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["counts"]["jobs_pending"], 0, "every job is done: {stats}");
    assert_eq!(stats["counts"]["jobs_dead"], 0, "no job gave up: {stats}");
}

#[test]
fn eight_processes_on_one_sqlite_store() {
    let (_dir, root) = new_store(None);
    let (operations, acknowledged) = contend(&root, None);
    check_after(&root, None, &acknowledged);
    println!(
        "contention on sqlite: {} processes, {operations} operations, lost 0, duplicated 0, errors 0",
        WRITERS + READERS + RUNNERS
    );
}

#[cfg(feature = "postgres")]
#[test]
fn eight_processes_on_one_postgres_store() {
    let (url, schema, _guard) = support::postgres_schema();
    let (_dir, root) = new_store(Some((&url, &schema)));
    let (operations, acknowledged) = contend(&root, Some(&url));
    check_after(&root, Some(&url), &acknowledged);
    println!(
        "contention on postgres: {} processes, {operations} operations, lost 0, duplicated 0, errors 0",
        WRITERS + READERS + RUNNERS
    );
}
