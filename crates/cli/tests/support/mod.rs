//! What the process-level campaigns share: running `arbor` against a store (SQLite in its
//! directory, or Postgres when the store was made so), a small deterministic random source,
//! and the checks every campaign ends with.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `arbor --root <root> <args>` with the test settings: feature hashing, no logs, and the
/// Postgres URL when the campaign runs there.
pub(crate) fn command(root: &Path, database_url: Option<&str>, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command
        .env("ARBOR_EMBEDDER", "hashing")
        .env("USER", "tester")
        .env_remove("ARBOR_LOG")
        .env_remove("ARBOR_ROOT")
        .env_remove("ARBOR_DATABASE_URL")
        .arg("--root")
        .arg(root)
        .args(args);
    if let Some(url) = database_url {
        command.env("ARBOR_DATABASE_URL", url);
    }
    command
}

/// `arbor --root <root> <args>` (SQLite), run to the end.
pub(crate) fn arbor(root: &Path, args: &[&str]) -> Output {
    command(root, None, args).output().expect("arbor runs")
}

/// [`arbor`] with `input` on its standard input.
pub(crate) fn arbor_stdin(root: &Path, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command(root, None, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arbor starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread of its own: a large input would otherwise fill the pipe while
    // arbor's output fills the other one.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// Standard error of a run that failed with status 1 (a refusal, not a usage error).
pub(crate) fn failure(output: &Output) -> String {
    assert!(!output.status.success(), "arbor should have failed: {}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A fresh schema on the Postgres server `ARBOR_TEST_DATABASE_URL` names, dropped when the
/// guard goes; with the server's URL.
#[cfg(feature = "postgres")]
pub(crate) fn postgres_schema() -> (String, String, arbor_adapters_postgres::testing::SchemaGuard) {
    use arbor_adapters_postgres::testing::{fresh_database, test_database_url};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (db, guard) = runtime.block_on(fresh_database());
    let schema = db.schema().to_owned();
    runtime.block_on(db.close());
    (test_database_url(), schema, guard)
}

pub(crate) fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "arbor failed ({}):\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A store in a fresh temporary directory: SQLite, or rows in `schema` of the Postgres server.
pub(crate) fn new_store(postgres: Option<(&str, &str)>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let output = match postgres {
        None => command(&root, None, &["init"]).output().unwrap(),
        Some((url, schema)) => {
            command(&root, Some(url), &["init", "--backend", "postgres", "--schema", schema]).output().unwrap()
        }
    };
    ok(&output);
    (dir, root)
}

/// xorshift64*, seeded: the same points on every run of a seed.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Leaf ids an `arbor ingest` text output acknowledged, with the line each came from.
pub(crate) fn acknowledged(stdout: &str) -> Vec<(usize, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = words.get(1)?.parse::<usize>().ok()?;
            let leaf = words.iter().find(|w| w.starts_with("leaf-"))?;
            (words.first() == Some(&"line")).then(|| (number, (*leaf).to_owned()))
        })
        .collect()
}

/// The ids of every current memory of the store's default scope (`arbor export`).
pub(crate) fn exported_ids(root: &Path, database_url: Option<&str>) -> Vec<String> {
    let output = ok(&command(root, database_url, &["export"]).output().unwrap());
    output
        .lines()
        .map(|line| {
            let memory: serde_json::Value = serde_json::from_str(line).expect("export is JSON Lines");
            memory["id"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// `arbor fsck` says the store is clean.
pub(crate) fn assert_clean(root: &Path, database_url: Option<&str>, after: &str) {
    let output = command(root, database_url, &["fsck"]).output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && report.trim_end().ends_with("clean"),
        "{after}: fsck:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every file and directory under `dir`, recursively.
pub(crate) fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.push(path.clone());
        if path.is_dir() {
            out.extend(entries(&path));
        }
    }
    out
}

/// Where `needle` (any case) is under `dir`: files whose bytes hold it, and paths that name it.
pub(crate) fn traces(dir: &Path, needle: &str) -> Vec<String> {
    let lower = needle.to_lowercase();
    let upper = needle.to_uppercase();
    let mut found = Vec::new();
    for path in entries(dir) {
        let name = path.strip_prefix(dir).unwrap().to_string_lossy().to_lowercase();
        if name.contains(&lower) {
            found.push(format!("path {name}"));
        }
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            let holds = |n: &str| bytes.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n.as_bytes()));
            if holds(needle) || holds(&upper) {
                found.push(format!("bytes of {name}"));
            }
        }
    }
    found
}

/// A running `arbor serve`; stopped when dropped.
pub(crate) struct Server {
    pub(crate) child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (an `arbor serve … --listen 127.0.0.1:0` command line) and waits for the
/// address it prints first.
pub(crate) fn serve(command: &mut Command) -> Server {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("arbor serve starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line
        .strip_prefix("listening on ")
        .map(|rest| rest.split(':').take(2).collect::<Vec<_>>().join(":"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    Server { child, base: format!("http://{addr}") }
}
