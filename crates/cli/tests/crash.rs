//! The crash campaign: `arbor` killed with SIGKILL at random points of ingests, sealing,
//! forgets and reindexing, on one store that lives through all of them. After each kill the
//! next command that writes recovers (a dead writer's bodies cleaned up, its job leases taken
//! back), `fsck` is clean, and every event an ingest acknowledged is still there; a forget
//! that printed its receipt (or, killed before it could, was run again) left no byte of its
//! memory in the store's directory.
//!
//! `ARBOR_CRASH_POINTS` sets how many kills each backend takes (CI: a bounded number;
//! `cargo xtask crash`: 200 or more). Postgres runs with the `postgres` feature, on the server
//! `ARBOR_TEST_DATABASE_URL` names.

mod support;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use support::{Rng, acknowledged, assert_clean, command, exported_ids, new_store, ok, traces};

fn crash_points() -> usize {
    std::env::var("ARBOR_CRASH_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

/// What the campaign did, printed at the end (the figures `cargo xtask crash` reports).
#[derive(Debug, Default)]
struct Figures {
    kills: usize,
    killed_mid_run: usize,
    by_operation: [usize; 4],
    acknowledged: usize,
    /// Forgets checked for leftover words (after running again those the kill interrupted).
    forgets_checked: usize,
}

const OPERATIONS: [&str; 4] = ["ingest", "seal", "forget", "reindex"];

/// Runs the campaign on the store at `root`; `seed` picks the points.
fn campaign(root: &Path, url: Option<&str>, points: usize, seed: u64) -> Figures {
    let mut rng = Rng::new(seed);
    let mut figures = Figures::default();
    // Acknowledged and not forgotten, with the number of the shipment each one carries (a
    // forget, even killed, may have landed: its leaf leaves this list before it runs).
    let mut alive: Vec<(String, usize)> = Vec::new();
    let mut next_event = 0usize;
    // How long each operation takes, to spread the kills over it.
    let mut estimate = [Duration::from_millis(400); 4];
    for point in 0..points {
        let mut operation = rng.below(4) as usize;
        // Nothing to forget yet: a reindex instead, and counted as one.
        if operation == 2 && alive.is_empty() {
            operation = 3;
        }
        let first_event = next_event;
        let mut forgotten = None;
        let (args, input): (Vec<String>, String) = match operation {
            // A batch ingest: many small batches, so the kill lands between, inside and after
            // commits.
            0 | 1 => {
                let count = 40 + rng.below(80) as usize;
                let mut events = String::new();
                for _ in 0..count {
                    events.push_str(&format!(
                        "{{\"text\":\"Shipment {next_event} carries crate token zq{next_event}x to the depot.\"}}\n"
                    ));
                    next_event += 1;
                }
                let mut args = vec!["ingest".to_owned(), "--batch".to_owned(), (1 + rng.below(12)).to_string()];
                // Seal work left for a `jobs run` that is killed instead.
                if operation == 1 {
                    args.push("--defer-jobs".to_owned());
                }
                (args, events)
            }
            2 => {
                let (victim, shipment) = alive.swap_remove(rng.below(alive.len() as u64) as usize);
                forgotten = Some(shipment);
                (vec!["forget".to_owned(), victim], String::new())
            }
            _ => (vec!["jobs".to_owned(), "reindex".to_owned()], String::new()),
        };
        // Seal: the deferred work of the ingest before is what this run is killed in.
        let (args, input) = if operation == 1 {
            let output = command(root, url, &args.iter().map(String::as_str).collect::<Vec<_>>())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write;
                    child.stdin.take().unwrap().write_all(input.as_bytes())?;
                    child.wait_with_output()
                })
                .unwrap();
            let stdout = ok(&output);
            let acked = acknowledged(&stdout);
            figures.acknowledged += acked.len();
            alive.extend(acked.into_iter().map(|(line, id)| (id, first_event + line - 1)));
            (vec!["jobs".to_owned(), "run".to_owned()], String::new())
        } else {
            (args, input)
        };
        figures.by_operation[operation] += 1;
        let mut child = command(root, url, &args.iter().map(String::as_str).collect::<Vec<_>>())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        });
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        // A point anywhere in the run: uniform over how long this operation took when last it
        // ran to the end (the store grows, so the estimate follows).
        let started = std::time::Instant::now();
        let deadline = Duration::from_micros(rng.below(estimate[operation].as_micros() as u64 * 11 / 10 + 1));
        let mut finished = false;
        while started.elapsed() < deadline {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                estimate[operation] = started.elapsed().max(Duration::from_millis(5));
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        writer.join().unwrap();
        let printed = reader.join().unwrap();
        figures.kills += 1;
        figures.killed_mid_run += usize::from(!finished);
        let at = format!("point {point}: {} killed after {:?}", OPERATIONS[operation], args);
        // A run the kill came too late for ended as it would have without one.
        assert!(!finished || status.success(), "{at}: it finished, but with {status}");
        if operation == 0 {
            let acked = acknowledged(&printed);
            figures.acknowledged += acked.len();
            alive.extend(acked.into_iter().map(|(line, id)| (id, first_event + line - 1)));
        }
        // The next writer recovers; then everything agrees and nothing acknowledged is lost.
        ok(&command(root, url, &["jobs", "run"]).output().unwrap());
        assert_clean(root, url, &at);
        // A forget that printed its receipt left no byte of its memory in the store's
        // directory (the database and its log too, on SQLite); one killed before it could is
        // run again, as its user would, and then the same holds.
        if let Some(shipment) = forgotten {
            if !printed.starts_with("forgot ") {
                let again = command(root, url, &args.iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
                let error = String::from_utf8_lossy(&again.stderr);
                assert!(
                    again.status.success() || error.contains("not found") || error.contains("already forgotten"),
                    "{at}: the forget again: {error}"
                );
            }
            let token = format!("zq{shipment}x");
            assert_eq!(traces(root, &token), Vec::<String>::new(), "{at}: the forgotten {token} survives");
            figures.forgets_checked += 1;
        }
        if point % 8 == 7 || point + 1 == points {
            let present: BTreeSet<String> = exported_ids(root, url).into_iter().collect();
            for (id, _) in &alive {
                assert!(present.contains(id), "{at}: acknowledged {id} is gone");
            }
        }
    }
    figures
}

fn report(backend: &str, figures: &Figures) {
    println!(
        "crash campaign on {backend}: {} kills ({} mid-run; ingest {}, seal {}, forget {}, reindex {}), {} acknowledged events, lost 0; {} forgets left no word",
        figures.kills,
        figures.killed_mid_run,
        figures.by_operation[0],
        figures.by_operation[1],
        figures.by_operation[2],
        figures.by_operation[3],
        figures.acknowledged,
        figures.forgets_checked
    );
}

#[test]
fn killed_at_random_points_sqlite_loses_nothing_acknowledged() {
    let (_dir, root) = new_store(None);
    let figures = campaign(&root, None, crash_points(), 0x5eed_0001);
    assert!(figures.acknowledged > 0, "some events were acknowledged before the kills");
    report("sqlite", &figures);
}

#[cfg(feature = "postgres")]
#[test]
fn killed_at_random_points_postgres_loses_nothing_acknowledged() {
    let (url, schema, _guard) = support::postgres_schema();
    let (_dir, root) = new_store(Some((&url, &schema)));
    let figures = campaign(&root, Some(&url), crash_points(), 0x5eed_0002);
    assert!(figures.acknowledged > 0, "some events were acknowledged before the kills");
    report("postgres", &figures);
}
