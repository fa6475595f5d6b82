//! Arbor's promises where a careless user or an attacker would test them, through the `arbor`
//! binary (issue 18): who is speaking comes from the trusted caller, a lost database never
//! costs the bodies, forget leaves no word behind, bad input costs only itself, a dead job
//! runner blocks nothing, damage is reported as damage, output cannot drive a terminal, and a
//! read-only store can be read. Each test is named for the defect it guards against.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::{arbor, arbor_stdin, entries, failure, ok, traces};

fn command(root: &Path, args: &[&str]) -> Command {
    support::command(root, None, args)
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(output)).expect("JSON on stdout")
}

fn new_store() -> (tempfile::TempDir, PathBuf) {
    support::new_store(None)
}

fn leaf_ids(report: &serde_json::Value) -> Vec<String> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["report"]["chunks"][0]["leaf_id"].as_str().map(str::to_owned))
        .collect()
}

/// The host name Arbor records in owner strings (the kernel's, as `uname -n` prints it).
fn hostname() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// Defect 1: an event an assistant, a tool or the system says, with no `source`, is an
/// inference — a candidate in a project — never a person's entry made active.
#[test]
fn an_agents_statement_without_a_source_is_never_a_persons_entry() {
    let (_dir, root) = new_store();
    for (actor, text) in [
        ("assistant", "The user prefers dark mode."),
        ("tool", "The user's laptop runs Fedora Linux."),
        ("system", "The user works from the Porto office on Mondays."),
    ] {
        let event = format!("{{\"text\":\"{text}\",\"actor\":\"{actor}\"}}\n");
        let report = json(&arbor_stdin(&root, &["--json", "ingest", "--project", "p1"], event.as_bytes()));
        let chunk = &report["results"][0]["report"]["chunks"][0];
        assert_eq!(chunk["status"], "candidate", "{actor}: {chunk}");
        assert_ne!(chunk["approval"], "entered by a person", "{actor}: {chunk}");
    }
    let pending = json(&arbor(&root, &["--json", "review", "list", "--project", "p1"]));
    assert_eq!(pending.as_array().unwrap().len(), 3, "all three wait for a person: {pending}");
    // A person's own entry (the default actor and source) is still taken at its word.
    let mine =
        json(&arbor_stdin(&root, &["--json", "ingest", "--project", "p1"], b"{\"text\":\"We ship on Fridays.\"}\n"));
    assert_eq!(mine["results"][0]["report"]["chunks"][0]["status"], "active");
}

/// Defect 3: a missing or emptied database is refused while the bodies exist (never made anew
/// over them), `fsck --repair` keeps the bodies, and `--rebuild-from-bodies` brings the
/// memories back, no more visible than they were written.
#[test]
fn a_lost_database_is_refused_and_rebuilt_from_the_bodies() {
    let (dir, root) = new_store();
    let events = concat!(
        "{\"text\":\"Dana lives in Lisbon.\",\"hints\":{\"subject\":\"dana home\"}}\n",
        "{\"text\":\"The deploy window is Tuesday mornings.\"}\n",
        "{\"text\":\"The user likes green tea, I think.\",\"actor\":\"assistant\"}\n",
    );
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], events.as_bytes()));
    let ids = leaf_ids(&report);
    let corrected =
        json(&arbor(&root, &["--json", "correct", &ids[0], "--version", "1", "--text", "Dana lives in Berlin now."]));
    assert_eq!(corrected["version"], 2);
    let bodies_before = entries(&root.join("memory")).into_iter().filter(|p| p.is_file()).count();

    // Emptied in place, then removed: refused both ways, and nothing is created.
    let database = root.join("arbor.db");
    std::fs::write(&database, b"").unwrap();
    for emptied in [true, false] {
        for args in [&["stats"][..], &["retrieve", "Dana"][..], &["jobs", "run"][..], &["ingest"][..]] {
            let error = failure(&arbor_stdin(&root, args, b"{\"text\":\"a new memory\"}\n"));
            assert!(error.contains("--rebuild-from-bodies"), "{args:?}: {error}");
        }
        let error = failure(&arbor(&root, &["init"]));
        assert!(error.contains("still holds their bodies"), "init does not paper over it: {error}");
        if emptied {
            assert_eq!(std::fs::metadata(&database).unwrap().len(), 0, "the emptied file was not written to");
            std::fs::remove_file(&database).unwrap();
        }
    }
    assert!(!database.exists(), "no command made a new, empty database");

    // fsck says what it sees; --repair deletes none of the bodies.
    std::fs::write(&database, b"").unwrap();
    let error = failure(&arbor(&root, &["fsck", "--repair"]));
    assert!(error.contains("--rebuild-from-bodies"), "{error}");
    let bodies_after = entries(&root.join("memory")).into_iter().filter(|p| p.is_file()).count();
    assert_eq!(bodies_after, bodies_before, "every body survives");

    let rebuilt = json(&arbor(&root, &["--json", "fsck", "--rebuild-from-bodies"]));
    assert_eq!(rebuilt["rebuilt"]["leaves"], 4, "{rebuilt}");
    assert_eq!(rebuilt["rebuilt"]["active"], 2, "the corrected version and the deploy window: {rebuilt}");
    assert_eq!(rebuilt["rebuilt"]["candidates"], 1, "the assistant's guess waits again: {rebuilt}");
    let pack = json(&arbor(&root, &["--json", "retrieve", "where does Dana live?"]));
    assert!(pack["evidence"][0]["text"].as_str().unwrap().contains("Berlin"), "{pack}");
    assert!(!pack.to_string().contains("Lisbon"), "the replaced version is history: {pack}");
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "{fsck}");
    let listed = json(&arbor(&root, &["--json", "review", "list"]));
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    drop(dir);
}

/// Defect 3, the other half: a store that lost its database while holding no memory gets a
/// new one from `init`, and `fsck --repair` never deletes a leaf body it cannot prove is
/// garbage.
#[test]
fn init_remakes_a_lost_database_only_when_no_memory_would_hide() {
    let (_dir, root) = new_store();
    std::fs::remove_file(root.join("arbor.db")).unwrap();
    let error = failure(&arbor(&root, &["stats"]));
    assert!(error.contains("`arbor --root"), "{error}");
    let remade = ok(&arbor(&root, &["init"]));
    assert!(remade.contains("a new database was made"), "{remade}");
    ok(&arbor(&root, &["stats"]));
}

/// Defect 4a: forgetting a memory forgets every version of it — the words of the version a
/// correction replaced too — unless only one version is asked for.
#[test]
fn forgetting_a_corrected_memory_forgets_every_version() {
    let (_dir, root) = new_store();
    let report =
        json(&arbor_stdin(&root, &["--json", "ingest"], b"{\"text\":\"My locker code is in the zeppelin drawer.\"}\n"));
    let v1 = leaf_ids(&report).remove(0);
    let v2 = json(&arbor(
        &root,
        &["--json", "correct", &v1, "--version", "1", "--text", "My locker code is in the walrus box."],
    ));
    let v2 = v2["leaf_id"].as_str().unwrap().to_owned();
    let v3 = json(&arbor(
        &root,
        &["--json", "correct", &v2, "--version", "2", "--text", "My locker code is in the narwhal tin."],
    ));
    let v3 = v3["leaf_id"].as_str().unwrap().to_owned();
    ok(&arbor(&root, &["jobs", "run"]));
    let receipt = json(&arbor(&root, &["--json", "forget", &v3]));
    assert_eq!(receipt["receipt"]["versions"].as_array().unwrap().len(), 3, "{receipt}");
    for word in ["zeppelin", "walrus", "narwhal"] {
        assert_eq!(traces(&root, word), Vec::<String>::new(), "{word} survives the forget");
    }
    for id in [&v1, &v2] {
        let shown = arbor(&root, &["show", id]);
        let text = String::from_utf8_lossy(&shown.stdout).to_string() + &String::from_utf8_lossy(&shown.stderr);
        assert!(!text.contains("walrus") && !text.contains("zeppelin"), "{id}: {text}");
    }

    // Only this version: the earlier one stays, as history.
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], b"{\"text\":\"The spare bike lock is orange.\"}\n"));
    let first = leaf_ids(&report).remove(0);
    let second =
        json(&arbor(&root, &["--json", "correct", &first, "--version", "1", "--text", "The spare bike lock is teal."]));
    let second = second["leaf_id"].as_str().unwrap().to_owned();
    let receipt = json(&arbor(&root, &["--json", "forget", &second, "--only-this-version"]));
    assert_eq!(receipt["receipt"]["versions"].as_array().unwrap().len(), 1, "{receipt}");
    assert!(traces(&root, "teal").is_empty());
    assert!(!traces(&root, "orange").is_empty(), "the other version was kept");
    ok(&arbor(&root, &["fsck"]));
}

/// Defect 4b: when a forgotten memory was the last thing about someone, their name leaves the
/// store too: the entity, its words, the tree's id and title, and its directory.
#[test]
fn forgetting_the_last_memory_about_someone_removes_their_name_everywhere() {
    let (_dir, root) = new_store();
    let events = concat!(
        "{\"text\":\"Quentin Blackwood keeps bees.\",\"hints\":{\"entity\":{\"name\":\"Quentin Blackwood\",\"entity_type\":\"person\"}}}\n",
        "{\"text\":\"Maren Sol plays the oboe.\",\"hints\":{\"entity\":{\"name\":\"Maren Sol\",\"entity_type\":\"person\"}}}\n",
    );
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], events.as_bytes()));
    let ids = leaf_ids(&report);
    assert!(report["results"][0]["report"]["chunks"][0]["tree_id"].as_str().unwrap().contains("quentin"), "{report}");
    ok(&arbor(&root, &["jobs", "run"]));
    assert!(!traces(&root, "quentin").is_empty(), "the name is stored before the forget");
    let receipt = json(&arbor(&root, &["--json", "forget", &ids[0]]));
    assert_eq!(receipt["receipt"]["tree_dissolved"], true, "{receipt}");
    for word in ["quentin", "blackwood", "bees"] {
        assert_eq!(traces(&root, word), Vec::<String>::new(), "{word} survives the forget");
    }
    assert!(!traces(&root, "maren").is_empty(), "someone else's tree is untouched");
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "{fsck}");
    // Quentin can be remembered again, from scratch.
    let again = json(&arbor_stdin(&root, &["--json", "ingest"], events.lines().next().unwrap().as_bytes()));
    assert_eq!(again["results"][0]["report"]["chunks"][0]["outcome"], "created", "{again}");
}

/// Defect 5: every event is judged alone, line by line: an instant no store holds, a line
/// that is not UTF-8, a broken first line, each costs only itself, in every batch.
#[test]
fn one_bad_line_costs_only_itself() {
    let (dir, root) = new_store();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"text\": \"the broken first line\n");
    for i in 0..12 {
        input.extend_from_slice(
            format!("{{\"text\":\"Delivery {i} brings crate zq{i}x to the orchard.\"}}\n").as_bytes(),
        );
        match i {
            2 => input.extend_from_slice(b"{\"text\":\"too old\",\"observed_at\":\"1500-01-01T00:00:00Z\"}\n"),
            5 => input.extend_from_slice(b"{\"text\":\"caf\xe9 au lait\"}\n"),
            8 => input
                .extend_from_slice(b"{\"text\":\"far future\",\"hints\":{\"valid_to\":\"2300-01-01T00:00:00Z\"}}\n"),
            _ => {}
        }
    }
    let file = dir.path().join("events.jsonl");
    std::fs::write(&file, &input).unwrap();
    let output = arbor(&root, &["--json", "ingest", file.to_str().unwrap(), "--batch", "2"]);
    assert_eq!(output.status.code(), Some(1), "some events failed");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let totals = &report["totals"];
    assert_eq!(
        (totals["events"].as_u64(), totals["created"].as_u64(), totals["failed"].as_u64()),
        (Some(16), Some(12), Some(4)),
        "{totals}"
    );
    let failed: Vec<(u64, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "failed")
        .map(|r| (r["line"].as_u64().unwrap(), r["error"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(failed.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![1, 5, 9, 13], "{failed:?}");
    assert!(failed[1].1.contains("outside the range of instants Arbor stores"), "{failed:?}");
    assert!(failed[2].1.contains("not valid UTF-8"), "{failed:?}");
    assert!(failed[3].1.contains("hints.valid_to"), "{failed:?}");
    ok(&arbor(&root, &["fsck"]));
}

/// Defect 7: a job runner killed mid-job blocks nothing: its leases are taken back at once; a
/// live runner's are named, with who holds them until when.
#[test]
fn a_dead_runners_leases_are_taken_back_and_a_live_ones_are_named() {
    let (_dir, root) = new_store();
    ok(&arbor_stdin(&root, &["ingest", "--defer-jobs"], b"{\"text\":\"The kiln reaches 1200 degrees.\"}\n"));
    let gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    let mut gone = gone;
    gone.wait().unwrap();
    let lease = |worker: &str| {
        let db = rusqlite::Connection::open(root.join("arbor.db")).unwrap();
        let until = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 300)
            as i64
            * 1_000_000_000;
        db.execute("UPDATE jobs SET lease_worker = ?1, lease_until = ?2", rusqlite::params![worker, until]).unwrap()
    };
    assert!(lease(&format!("{}/{gone_pid}", hostname())) > 0, "there are jobs to lease");
    let fsck = arbor(&root, &["fsck"]);
    assert!(String::from_utf8_lossy(&fsck.stdout).contains("stale_lease"), "{fsck:?}");
    let ran = ok(&arbor(&root, &["jobs", "run"]));
    assert!(ran.contains("took back"), "{ran}");
    assert!(!ran.starts_with("0 jobs completed"), "{ran}");

    ok(&arbor_stdin(&root, &["ingest", "--defer-jobs"], b"{\"text\":\"The glaze needs cone 6.\"}\n"));
    lease(&format!("{}/{}", hostname(), std::process::id()));
    let waited = ok(&arbor(&root, &["jobs", "run"]));
    assert!(waited.contains(&format!("is being run by {}/{}", hostname(), std::process::id())), "{waited}");
    assert!(waited.contains("leased until"), "{waited}");
}

/// Defect 8: one row that does not decode is reported by fsck, which goes on past it; export
/// exports the rest and says what it left out; a file that fails SQLite's own check is
/// reported, and writers refuse it from then on while readers still read.
#[test]
fn damage_is_reported_row_by_row_and_a_damaged_file_takes_no_writes() {
    let (_dir, root) = new_store();
    let mut events = String::new();
    for i in 0..40 {
        events.push_str(&format!("{{\"text\":\"Inventory line {i}: {} jars of quince jam.\"}}\n", i * 3));
    }
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], events.as_bytes()));
    let ids = leaf_ids(&report);
    let created = report["totals"]["created"].as_u64().unwrap();
    {
        let db = rusqlite::Connection::open(root.join("arbor.db")).unwrap();
        db.execute("UPDATE leaves SET kind = 'rumour' WHERE id = ?", [&ids[3]]).unwrap();
    }
    let fsck = arbor(&root, &["fsck"]);
    let text = String::from_utf8_lossy(&fsck.stdout);
    assert_eq!(fsck.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("damaged_row: leaves {}", ids[3])), "{text}");
    let export = arbor(&root, &["export"]);
    assert_eq!(export.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&export.stderr).contains("could not be read"), "{export:?}");
    {
        let db = rusqlite::Connection::open(root.join("arbor.db")).unwrap();
        db.execute("UPDATE leaves SET kind = 'fact' WHERE id = ?", [&ids[3]]).unwrap();
    }

    // Damage SQLite itself finds: a page of the file overwritten.
    let file = root.join("arbor.db");
    let mut bytes = std::fs::read(&file).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "a file of several pages");
    for byte in &mut bytes[3 * page..4 * page] {
        *byte = 0x5a;
    }
    std::fs::write(&file, &bytes).unwrap();
    let fsck = arbor(&root, &["fsck"]);
    let text = String::from_utf8_lossy(&fsck.stdout).to_string() + &String::from_utf8_lossy(&fsck.stderr);
    assert_eq!(fsck.status.code(), Some(1), "{text}");
    assert!(text.contains("damaged"), "{text}");
    let error = failure(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"one more jar\"}\n"));
    assert!(error.contains("damaged") && error.contains("--rebuild-from-bodies"), "{error}");
    // The bodies are whole: the rows come back from them.
    let rebuilt = json(&arbor(&root, &["--json", "fsck", "--rebuild-from-bodies"]));
    assert_eq!(rebuilt["rebuilt"]["leaves"].as_u64(), Some(created), "{rebuilt}");
    let aside = PathBuf::from(rebuilt["damaged_database_moved_to"].as_str().expect("set aside"));
    ok(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"one more jar\"}\n"));
    // The set-aside copy is named until a person deletes it: it holds what it held.
    let fsck = arbor(&root, &["fsck"]);
    let report = String::from_utf8_lossy(&fsck.stdout);
    assert_eq!(fsck.status.code(), Some(1), "{report}");
    assert!(report.contains("set_aside_database") && report.contains("rm "), "{report}");
    std::fs::remove_file(&aside).unwrap();
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "{fsck}");
}

/// Defect 9: a reader that goes away ends arbor quietly, like any Unix tool, with nothing
/// half-written.
#[test]
fn a_closed_pipe_ends_quietly() {
    let (_dir, root) = new_store();
    let mut events = String::new();
    for i in 0..2000 {
        events.push_str(&format!("{{\"text\":\"Crane {i} lifts container zq{i}x at the harbour.\"}}\n"));
    }
    // More output than a pipe holds (64 KiB), so the writer meets the closed end.
    ok(&arbor_stdin(&root, &["ingest"], events.as_bytes()));
    for args in [&["ingest", "--batch", "16"][..], &["audit", "--limit", "2000"][..], &["--json", "export"][..]] {
        let mut child =
            command(&root, args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = if args[0] == "ingest" { events.clone() } else { String::new() };
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        // The reader is gone now (its end of the pipe dropped).
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        writer.join().unwrap();
        assert!(!first.is_empty(), "{args:?} printed something first");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert!(status.success() || status.code() == Some(141), "{args:?}: {status}");
    }
    let fsck = ok(&arbor(&root, &["fsck"]));
    assert!(fsck.trim_end().ends_with("clean"), "nothing half-written: {fsck}");
}

/// Defect 10: a line far larger than any event is refused by its length without being held,
/// and the events around it land.
#[test]
fn an_enormous_line_is_refused_without_being_held() {
    let (_dir, root) = new_store();
    let mut input = b"{\"text\":\"before the flood\"}\n{\"text\":\"".to_vec();
    input.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    input.extend_from_slice(b"\"}\n{\"text\":\"after the flood\"}\n");
    let output = arbor_stdin(&root, &["--json", "ingest"], &input);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["totals"]["created"], 2, "{}", report["totals"]);
    let error = report["results"][1]["error"].as_str().unwrap();
    assert!(error.contains("10485771 bytes; an event is at most"), "{error}");
}

/// Defect 11: a memory whose body file is gone is damage, said as damage (not "forgotten").
#[test]
fn a_missing_body_is_damage_not_a_forget() {
    let (_dir, root) = new_store();
    let report =
        json(&arbor_stdin(&root, &["--json", "ingest"], b"{\"text\":\"The boiler was serviced in March.\"}\n"));
    let id = leaf_ids(&report).remove(0);
    let body = entries(&root.join("memory")).into_iter().find(|p| p.to_string_lossy().contains(&id)).unwrap();
    std::fs::remove_file(body).unwrap();
    let error = failure(&arbor(&root, &["show", &id]));
    assert!(error.contains("missing") && error.contains("fsck"), "{error}");
    assert!(!error.contains("forgotten or replaced"), "{error}");
    // A retrieval that meets it counts it as a gap, not as a body it read and verified.
    let pack = json(&arbor(&root, &["--json", "retrieve", "When was the boiler serviced?"]));
    assert_eq!(pack["coverage"]["bodies_read"], 0, "{pack}");
    assert!(pack.to_string().contains("could not be read intact"), "{pack}");
}

/// Defect 12: text output shows control characters instead of sending them to the terminal;
/// JSON keeps them escaped.
#[test]
fn memory_text_cannot_drive_the_terminal() {
    let (_dir, root) = new_store();
    let event = "{\"text\":\"Evil \\u001b]0;owned\\u0007 title \\u001b[2J wipe \\u009b31m red\",\"hints\":{\"entity\":{\"name\":\"Eve \\u001b[5m\",\"entity_type\":\"person\"}}}\n";
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], event.as_bytes()));
    let id = leaf_ids(&report).remove(0);
    ok(&arbor(&root, &["jobs", "run"]));
    for args in
        [&["show", id.as_str()][..], &["browse"][..], &["retrieve", "evil title wipe"][..], &["review", "list"][..]]
    {
        let output = arbor(&root, args);
        let raw = output.stdout.iter().chain(&output.stderr).copied().collect::<Vec<u8>>();
        assert!(
            !raw.contains(&0x1b) && !raw.contains(&0x07),
            "{args:?} sent a control character: {:?}",
            String::from_utf8_lossy(&raw)
        );
        assert!(!String::from_utf8_lossy(&raw).contains('\u{9b}'), "{args:?} sent a C1 control");
    }
    let shown = ok(&arbor(&root, &["show", &id]));
    assert!(shown.contains("\\u{1b}]0;owned"), "shown, not sent: {shown}");
    let as_json = ok(&arbor(&root, &["--json", "show", &id]));
    assert!(as_json.contains("\\u001b"), "JSON escapes it: {as_json}");
}

/// Defect 13: a store on a read-only filesystem can be read (and a read writes nothing).
#[test]
fn a_read_only_store_can_be_read() {
    let (dir, root) = new_store();
    ok(&arbor_stdin(&root, &["ingest"], b"{\"text\":\"The lighthouse keeper is Ana.\"}\n"));
    let snapshot = |root: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        entries(root).into_iter().filter(|p| p.is_file()).map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
    };
    let mount = dir.path().join("ro");
    std::fs::create_dir(&mount).unwrap();
    let bound = Command::new("mount").arg("--bind").arg(&root).arg(&mount).status().is_ok_and(|s| s.success())
        && Command::new("mount").args(["-o", "remount,bind,ro"]).arg(&mount).status().is_ok_and(|s| s.success());
    let target = if bound { mount.clone() } else { root.clone() };
    // Without the privilege to mount, a user who is not root is kept from writing by the
    // files' modes instead (root is not, so for root the promise is checked from the other
    // side only: reading writes nothing, so it needs no write access).
    let by_modes = !bound && !running_as_root();
    if by_modes {
        set_writable(&root, false);
    } else if !bound {
        eprintln!("a_read_only_store_can_be_read: cannot mount read-only here; checking that reads write nothing");
    }
    let before = snapshot(&root);
    for args in [
        &["stats"][..],
        &["retrieve", "lighthouse keeper"][..],
        &["browse"][..],
        &["export"][..],
        &["fsck"][..],
        &["audit"][..],
    ] {
        let output = ok(&arbor(&target, args));
        if args[0] == "retrieve" {
            assert!(output.contains("Ana"), "{output}");
        }
    }
    let after = snapshot(&root);
    assert_eq!(after.iter().map(|(p, _)| p).collect::<Vec<_>>(), before.iter().map(|(p, _)| p).collect::<Vec<_>>());
    assert!(after == before, "reading changed no byte of the store");
    if bound || by_modes {
        let writing = arbor_stdin(&target, &["ingest"], b"{\"text\":\"A write.\"}\n");
        assert!(!writing.status.success(), "a write to a read-only store fails");
        let error = String::from_utf8_lossy(&writing.stderr);
        assert!(error.contains("cannot be written") || error.contains("cannot be opened for writing"), "{error}");
    }
    if bound {
        let _ = Command::new("umount").arg(&mount).status();
    }
    if by_modes {
        set_writable(&root, true);
    }
}

fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Takes write permission from (or gives it back to) every file and directory under `dir`.
fn set_writable(dir: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mut paths = entries(dir);
    paths.push(dir.to_path_buf());
    for path in paths {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        let mode = if writable { mode | 0o200 } else { mode & !0o222 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

// What a hostile review of the fixes above found next to them.

/// A rebuild sets the damaged database aside inside the store; a later forget of a memory that
/// copy holds removes the copy (it cannot be edited), and keeps copies that never held it.
#[test]
fn a_forget_reaches_the_damaged_copy_a_rebuild_set_aside() {
    let (_dir, root) = new_store();
    let mut events = String::new();
    for i in 0..40 {
        events.push_str(&format!("{{\"text\":\"Ledger entry {i}: the wombat{i} crate went north.\"}}\n"));
    }
    let ids = leaf_ids(&json(&arbor_stdin(&root, &["--json", "ingest"], events.as_bytes())));
    let file = root.join("arbor.db");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[3 * 4096..4 * 4096].fill(0x5a);
    std::fs::write(&file, &bytes).unwrap();
    let rebuilt = json(&arbor(&root, &["--json", "fsck", "--rebuild-from-bodies"]));
    let aside = PathBuf::from(rebuilt["damaged_database_moved_to"].as_str().expect("moved aside"));
    assert!(aside.exists());

    // A memory written after the rebuild is not in the copy: forgetting it leaves the copy.
    let later = leaf_ids(&json(&arbor_stdin(
        &root,
        &["--json", "ingest"],
        b"{\"text\":\"The quokka ferry leaves at noon.\"}\n",
    )));
    let receipt = json(&arbor(&root, &["--json", "forget", &later[0]]));
    assert_eq!(receipt["damaged_copies_removed"], serde_json::json!([]), "{receipt}");
    assert!(aside.exists(), "a copy that never held the memory stays");

    assert!(!traces(&root, "wombat29 ").is_empty(), "the words are stored before the forget");
    let receipt = json(&arbor(&root, &["--json", "forget", &ids[29]]));
    assert_eq!(receipt["damaged_copies_removed"].as_array().map(Vec::len), Some(1), "{receipt}");
    assert!(!aside.exists());
    assert_eq!(traces(&root, "wombat29 "), Vec::<String>::new(), "the forgotten words survive");
    let text = ok(&arbor(&root, &["forget", &ids[30]]));
    assert!(!text.contains("damaged copy"), "nothing left to remove: {text}");
}

/// What a write killed between its temporary file and the rename leaves holds the body's
/// text: `fsck` reports it, `--repair` removes it once its writer is gone, and a forget of the
/// body takes it along.
#[test]
fn an_interrupted_write_is_found_repaired_and_forgotten() {
    let (_dir, root) = new_store();
    let events = b"{\"text\":\"The walrus choir rehearses on Tuesdays.\"}\n{\"text\":\"The heron count was 41.\"}\n";
    let ids = leaf_ids(&json(&arbor_stdin(&root, &["--json", "ingest"], events)));
    let body_of = |id: &str| {
        entries(&root.join("memory")).into_iter().find(|p| p.to_string_lossy().ends_with(&format!("{id}.md"))).unwrap()
    };
    let walrus = body_of(&ids[0]);
    let text = std::fs::read(&walrus).unwrap();
    // No process has pid 4194304 (above Linux's pid_max), so the writer is known gone.
    let leftover = walrus.with_file_name(format!(".arbor-tmp-4194304-3-{}.md.tmp", ids[0]));
    let old_style = walrus.with_file_name(".arbor-tmp-4194304-4");
    std::fs::write(&leftover, &text).unwrap();
    std::fs::write(&old_style, &text).unwrap();

    let fsck = arbor(&root, &["fsck"]);
    let report = String::from_utf8_lossy(&fsck.stdout);
    assert_eq!(fsck.status.code(), Some(1), "{report}");
    assert_eq!(report.matches("interrupted_write").count(), 2, "{report}");
    let repaired = ok(&arbor(&root, &["fsck", "--repair"]));
    assert!(repaired.trim_end().ends_with("clean after repairs"), "{repaired}");
    assert!(!leftover.exists() && !old_style.exists());

    std::fs::write(&leftover, &text).unwrap();
    ok(&arbor(&root, &["forget", &ids[0]]));
    assert_eq!(traces(&root, "walrus"), Vec::<String>::new(), "the forgotten words survive");
    assert!(!traces(&root, "heron").is_empty(), "the other memory stays");
}

/// A summary's body without a row (a database restored from before a seal, say) is judged as a
/// summary, not as a leaf whose body looks foreign: in a tree the store has, it is a leftover
/// the next seal made needless, and `--repair` removes it.
#[test]
fn a_summary_body_without_its_row_is_judged_as_a_summary() {
    let (_dir, root) = new_store();
    let events = concat!(
        "{\"text\":\"Thaddeus Wimbleton collects brass sextants.\",\"hints\":{\"entity\":{\"name\":\"Thaddeus Wimbleton\",\"entity_type\":\"person\"}}}\n",
        "{\"text\":\"Thaddeus Wimbleton sails on Sundays.\",\"hints\":{\"entity\":{\"name\":\"Thaddeus Wimbleton\",\"entity_type\":\"person\"}}}\n",
    );
    ok(&arbor_stdin(&root, &["--json", "ingest"], events.as_bytes()));
    ok(&arbor(&root, &["jobs", "run"]));
    let summary = entries(&root.join("memory"))
        .into_iter()
        .find(|p| p.is_file() && p.to_string_lossy().contains("/summaries/"))
        .expect("the tree was sealed");
    let id = summary.file_stem().unwrap().to_string_lossy().into_owned();
    let unknown = "sum-01zzzzzzzzzzzzzzzzzzzzzzzz";
    let stray = summary.with_file_name(format!("{unknown}.md"));
    std::fs::write(&stray, std::fs::read_to_string(&summary).unwrap().replace(&id, unknown)).unwrap();

    let fsck = arbor(&root, &["fsck"]);
    let report = String::from_utf8_lossy(&fsck.stdout);
    assert!(report.contains(&format!("orphan_body: {}", stray.strip_prefix(&root).unwrap().display())), "{report}");
    assert!(!report.contains("foreign_file"), "{report}");
    let repaired = ok(&arbor(&root, &["fsck", "--repair"]));
    assert!(repaired.trim_end().ends_with("clean after repairs"), "{repaired}");
    assert!(!stray.exists() && summary.exists(), "only the stray summary goes");
}

/// Secrets written in Chinese are refused with the same sentence as in English: a password
/// after 密码 with no space to set it off, a resident ID number (its check character holds), a
/// card number beside Han characters. What only mentions a password is kept; health and a
/// mobile number are kept and marked sensitive.
#[test]
fn secrets_written_in_chinese_are_refused_as_in_english() {
    let (_dir, root) = new_store();
    let lines = [
        r#"{"text":"my password is hunter2xyz"}"#,
        r#"{"text":"我的密码是 hunter2xyz"}"#,
        r#"{"text":"我的身份证号是110101199003074514"}"#,
        r#"{"text":"我的卡号是6222600260001072444"}"#,
        r#"{"text":"我忘记密码了，明天去银行重置"}"#,
        r#"{"text":"医生诊断是轻度抑郁"}"#,
        r#"{"text":"有事打我手机 13812345678"}"#,
    ];
    let input = lines.join("\n") + "\n";
    let report = json(&arbor_stdin(&root, &["--json", "ingest"], input.as_bytes()));
    let reason = |line: usize| -> String {
        let chunk = &report["results"][line]["report"]["chunks"][0];
        assert_eq!(chunk["outcome"], "not_admitted", "line {line}: {report}");
        chunk["reason"].as_str().unwrap().to_owned()
    };
    let english = reason(0);
    assert_eq!(reason(1), english, "the same sentence in both languages");
    assert!(reason(2).contains("an identity number") && reason(3).contains("a card number"), "{report}");
    assert_eq!(report["results"][4]["report"]["chunks"][0]["outcome"], "created", "{report}");
    assert!(!report.to_string().contains("hunter2xyz") && !report.to_string().contains("110101199003074514"));
    // Health and a mobile number are kept, marked sensitive; a forgotten password is not.
    let sensitivity = |line: usize| {
        let id = report["results"][line]["report"]["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
        json(&command(&root, &["--json", "show", &id]).output().unwrap())["record"]["sensitivity"].clone()
    };
    assert_eq!(sensitivity(4), "normal");
    assert_eq!(sensitivity(5), "sensitive");
    assert_eq!(sensitivity(6), "sensitive");
}
