//! `cargo xtask bench`: builds `arbor-bench` in release and runs `arbor-bench synthetic` once per store size
//! and backend, each in a fresh process, then prints the figures side by side and saves them
//! as JSON. With `--backend postgres` every size runs on SQLite and on a throwaway Postgres
//! (durable settings) in the same run, with their ratio, followed by concurrent ingest from
//! several `arbor ingest` processes into one Postgres store, checked for lost or duplicated
//! leaves. With `--lance` every size also runs with a LanceDB index over the very store the
//! SQLite run built, side by side with SQLite's own index (retrieval p50/p95, and rebuilding
//! the index from the store), with their ratio.
//!
//! Stores are kept until every size has run: ext4 skips inodes freed in the last half
//! minute when it allocates new ones, so deleting one run's ten thousand files right before
//! the next run's would slow the next run's body writes by several times.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::postgres::{Durability, Server};
use crate::{cargo, step, tidy};

/// `cargo xtask bench`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct Options {
    /// Store sizes, comma-separated (underscores allowed: 1_000_000).
    #[arg(long, value_delimiter = ',', value_parser = positive, default_values_t = [10_000, 100_000])]
    sizes: Vec<usize>,
    /// Retrievals timed per size.
    #[arg(long, value_parser = positive, default_value_t = 1_000)]
    queries: usize,
    /// Keep the stores built (their paths are printed).
    #[arg(long)]
    keep: bool,
    /// `postgres` (or `all`) also runs every size on a throwaway Postgres, side by side with
    /// SQLite, and the concurrent ingest.
    #[arg(long, value_parser = ["sqlite", "postgres", "all"], default_value = "sqlite")]
    backend: String,
    /// Also run every size on SQLite with the LanceDB index.
    #[arg(long)]
    lance: bool,
    /// Each size runs once per embedder: `hashing` (no model) and/or `local` (all-MiniLM-L6-v2).
    #[arg(long, value_delimiter = ',', value_parser = ["hashing", "local"], default_value = "hashing")]
    embedders: Vec<String>,
    /// Processes of the concurrent ingest into one Postgres store.
    #[arg(long, value_parser = positive, default_value_t = 4)]
    processes: usize,
    /// Events each of those processes ingests.
    #[arg(long, value_parser = positive, default_value_t = 5_000)]
    per_process: usize,
}

impl Options {
    /// Whether every size also runs on Postgres (and the concurrent ingest runs).
    fn postgres(&self) -> bool {
        self.backend != "sqlite"
    }
}

/// A count above zero, with `_` allowed between digits.
fn positive(text: &str) -> Result<usize, String> {
    match text.trim().replace('_', "").parse::<usize>() {
        Ok(0) => Err("must be above zero".to_owned()),
        Ok(count) => Ok(count),
        Err(_) => Err(format!("{text:?} is not a count")),
    }
}

pub(crate) fn target_dir(root: &Path) -> Result<PathBuf> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).context("parsing cargo metadata")?;
    Ok(metadata["target_directory"].as_str().map(PathBuf::from).unwrap_or_else(|| root.join("target")))
}

pub(crate) fn run(options: Options) -> Result<()> {
    let root = tidy::workspace_root();
    // Two builds, so features do not unify across them: `arbor` as users build it (the
    // concurrent ingest below runs the shipping binary), and `arbor-bench`, the only binary
    // with the floor searches.
    let bench_features = if options.lance { "postgres,lance" } else { "postgres" };
    for (package, binary, features) in
        [("arbor-cli", "arbor", "postgres"), ("arbor-bench", "arbor-bench", bench_features)]
    {
        let mut build = cargo();
        build.args(["build", "--release", "--locked", "-p", package, "--bin", binary, "--features", features]);
        step(&format!("cargo build --release -p {package} --bin {binary} --features {features}"), build)?;
    }
    let target = target_dir(&root)?;
    let arbor = target.join("release").join("arbor");
    let arbor_bench = target.join("release").join("arbor-bench");
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let stores = target.join("bench").join(format!("run-{stamp}"));
    std::fs::create_dir_all(&stores).with_context(|| format!("creating {}", stores.display()))?;
    let server = if options.postgres() { Some(Server::start(Durability::Durable)?) } else { None };

    let mut reports = Vec::new();
    for &size in &options.sizes {
        // (rows, index, server)
        let mut backends = vec![("sqlite", "store", None)];
        if options.lance {
            backends.push(("sqlite", "lance", None));
        }
        if let Some(server) = &server {
            backends.push(("postgres", "store", Some(server.url.as_str())));
        }
        for ((backend, index, url), embedder) in
            backends.into_iter().flat_map(|b| options.embedders.iter().map(move |e| (b, e)))
        {
            println!(
                "\n==> arbor-bench synthetic --backend {backend} --index {index} --embedder {embedder} --leaves {size} --queries {}",
                options.queries
            );
            let mut command = Command::new(&arbor_bench);
            command
                .args(["synthetic", "--json", "--backend", backend, "--index", index, "--leaves", &size.to_string()])
                .args(["--queries", &options.queries.to_string(), "--embedder", embedder]);
            if options.lance && backend == "sqlite" {
                // The Lance run reuses this store and must answer over the very rows this run
                // answered over: no consolidation pass adds memories after the questions.
                command.args(["--consolidate-new", "0"]);
            }
            if index == "lance" {
                // The same rows as the SQLite-index run just built: only the index is built
                // anew (from the store, timed), so both indexes answer over identical stores.
                command.arg("--reuse").arg("--dir").arg(stores.join(format!("{backend}-store-{embedder}-{size}")));
            } else {
                command.arg("--dir").arg(stores.join(format!("{backend}-{index}-{embedder}-{size}")));
            }
            if let Some(url) = url {
                command.args(["--database-url", url, "--schema", &format!("bench_{embedder}_{size}")]);
            }
            let output = command.output().with_context(|| format!("running {}", arbor_bench.display()))?;
            if !output.status.success() {
                bail!("arbor-bench synthetic --leaves {size} failed:\n{}", String::from_utf8_lossy(&output.stderr));
            }
            let report: Value = serde_json::from_slice(&output.stdout).context("parsing arbor-bench output")?;
            println!("{}", row(&report));
            reports.push(report);
        }
    }
    let concurrent = match &server {
        Some(server) => Some(concurrent_ingest(&arbor, &server.url, &stores.join("concurrent"), &options)?),
        None => None,
    };
    drop(server);

    println!("\n{}", table(&reports));
    println!("\n{}", questions_table(&reports));
    println!("\n{}", embedder_table(&reports));
    if options.postgres() {
        println!("\n{}", ratios(&reports));
    }
    if options.lance {
        println!("\n{}", index_ratios(&reports));
    }
    if let Some(concurrent) = &concurrent {
        println!("\n{}", concurrent_table(concurrent));
    }
    let saved = target.join("bench").join("latest.json");
    let figures = serde_json::json!({ "runs": reports, "concurrent_ingest": concurrent });
    std::fs::write(&saved, serde_json::to_vec_pretty(&figures)?)
        .with_context(|| format!("writing {}", saved.display()))?;
    println!("figures saved to {}", saved.display());
    if options.keep {
        println!("stores kept in {}", stores.display());
    } else {
        std::fs::remove_dir_all(&stores).with_context(|| format!("removing {}", stores.display()))?;
    }
    Ok(())
}

/// Distinct synthetic memories for one process: ten words each from a vocabulary of 4,096, so
/// no two are near-duplicates of each other (which Arbor would rightly fold together).
fn events(process: usize, count: usize) -> String {
    const SYLLABLES: &[&str] =
        &["ka", "lo", "mi", "ren", "sa", "tor", "vel", "qu", "bri", "den", "fa", "gor", "hin", "ju", "nex", "pol"];
    let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ ((process as u64 + 1) << 32);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::new();
    for i in 0..count {
        let words: Vec<String> = (0..10)
            .map(|_| {
                let n = next();
                (0..3).map(|k| SYLLABLES[((n >> (4 * k)) & 15) as usize]).collect()
            })
            .collect();
        let event = serde_json::json!({
            "text": format!("Writer {process} recorded note {i}: {}.", words.join(" ")),
            "source": { "type": "message", "message_id": format!("p{process}-m{i}") },
        });
        out.push_str(&event.to_string());
        out.push('\n');
    }
    out
}

/// Ingests from several processes at once into one Postgres store (each then drains the job
/// queue), and checks that every event became exactly one leaf.
fn concurrent_ingest(arbor: &Path, url: &str, root: &Path, options: &Options) -> Result<Value> {
    let (processes, per_process) = (options.processes, options.per_process);
    println!("\n==> concurrent ingest: {processes} processes x {per_process} events into one Postgres store");
    let init = Command::new(arbor)
        .arg("--root")
        .arg(root)
        .args(["init", "--backend", "postgres", "--schema", "bench_concurrent", "--database-url", url])
        .output()?;
    if !init.status.success() {
        bail!("arbor init failed: {}", String::from_utf8_lossy(&init.stderr));
    }
    let mut files = Vec::new();
    for process in 0..processes {
        let file = root.with_extension(format!("events-{process}.jsonl"));
        std::fs::write(&file, events(process, per_process))?;
        files.push(file);
    }
    let began = std::time::Instant::now();
    // Output goes to files, not pipes: a pipe read only after another child finishes would
    // fill up and stall its writer (while it holds locks the others wait for).
    let children = files
        .iter()
        .map(|file| {
            let child = Command::new(arbor)
                .arg("--root")
                .arg(root)
                .arg("ingest")
                .arg(file)
                .args(["--conversation", "bench", "--batch", "500", "--json"])
                .stdout(std::fs::File::create(file.with_extension("out"))?)
                .stderr(std::fs::File::create(file.with_extension("err"))?)
                .spawn()
                .context("starting arbor ingest")?;
            Ok((file, child))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut created = 0;
    let mut duplicates = 0;
    let mut failed = 0;
    for (file, mut child) in children {
        let status = child.wait()?;
        if !status.success() {
            let stderr = std::fs::read_to_string(file.with_extension("err")).unwrap_or_default();
            bail!("a concurrent arbor ingest failed: {stderr}");
        }
        let stdout = std::fs::read(file.with_extension("out"))?;
        let report: Value = serde_json::from_slice(&stdout).context("parsing arbor ingest output")?;
        created += report["totals"]["created"].as_u64().unwrap_or(0);
        duplicates += report["totals"]["duplicates"].as_u64().unwrap_or(0);
        failed += report["totals"]["failed"].as_u64().unwrap_or(0);
    }
    let seconds = began.elapsed().as_secs_f64();
    // A job that lost a race to another process (two seals of one tree: the second's
    // compare-and-set fails) is retried after a short backoff; keep draining, as a
    // long-running worker would, until nothing is pending.
    let mut stats = Value::Null;
    for _ in 0..60 {
        let drain = Command::new(arbor).arg("--root").arg(root).args(["jobs", "run"]).output()?;
        if !drain.status.success() {
            bail!("arbor jobs run failed: {}", String::from_utf8_lossy(&drain.stderr));
        }
        let output = Command::new(arbor).arg("--root").arg(root).args(["stats", "--json"]).output()?;
        stats = serde_json::from_slice(&output.stdout).context("parsing arbor stats output")?;
        if stats["counts"]["jobs_pending"] == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    let leaves: u64 = stats["counts"]["leaves_by_status"]
        .as_array()
        .map(|by| by.iter().filter_map(|pair| pair[1].as_u64()).sum())
        .unwrap_or(0);
    let fsck = Command::new(arbor).arg("--root").arg(root).arg("fsck").output()?;
    let expected = (processes * per_process) as u64;
    let report = serde_json::json!({
        "processes": processes,
        "events": expected,
        "created": created,
        "leaves": leaves,
        "lost": expected.saturating_sub(leaves),
        "extra": leaves.saturating_sub(expected),
        "duplicates": duplicates,
        "failed": failed,
        "seconds": seconds,
        "leaves_per_second": leaves as f64 / seconds,
        "jobs_pending": stats["counts"]["jobs_pending"],
        "fsck_clean": fsck.status.success(),
    });
    if leaves != expected || created != expected || failed > 0 || !fsck.status.success() || report["jobs_pending"] != 0
    {
        bail!("concurrent ingest lost, duplicated or damaged leaves: {report:#}");
    }
    Ok(report)
}

fn concurrent_table(report: &Value) -> String {
    format!(
        "| processes | events | leaves | lost | duplicated | seconds | leaves/s | fsck |\n\
         |----------:|-------:|-------:|-----:|-----------:|--------:|---------:|:-----|\n\
         | {} | {} | {} | {} | {} | {:.1} | {:.0} | {} |\n\nconcurrent ingest: one Postgres store, \
         every process ingesting distinct events into the same conversation and then draining the job queue.",
        report["processes"],
        report["events"],
        report["leaves"],
        report["lost"],
        report["extra"],
        report["seconds"].as_f64().unwrap_or(f64::NAN),
        report["leaves_per_second"].as_f64().unwrap_or(f64::NAN),
        if report["fsck_clean"].as_bool() == Some(true) { "clean" } else { "NOT clean" },
    )
}

/// Postgres / SQLite for each size, from the runs side by side.
fn ratios(reports: &[Value]) -> String {
    let mut out = String::from(
        "|  leaves | ingest/s pg/sqlite | seal s pg/sqlite | retrieve p50 pg/sqlite | retrieve p95 pg/sqlite |\n\
         |--------:|-------------------:|-----------------:|-----------------------:|-----------------------:|",
    );
    for sqlite in reports.iter().filter(|r| r["backend"] == "sqlite" && r["index"] != "lance") {
        let Some(pg) = reports.iter().find(|r| {
            r["backend"] == "postgres" && r["events"] == sqlite["events"] && r["embedder"] == sqlite["embedder"]
        }) else {
            continue;
        };
        let ratio = |path: &[&str]| number(pg, path) / number(sqlite, path);
        out.push_str(&format!(
            "\n| {:>7} | {:>18.2} | {:>16.2} | {:>22.2} | {:>22.2} |",
            number(sqlite, &["leaves"]),
            ratio(&["ingest_leaves_per_second"]),
            ratio(&["seal_seconds"]),
            ratio(&["retrieve", "p50_ms"]),
            ratio(&["retrieve", "p95_ms"]),
        ));
    }
    out
}

/// LanceDB index / SQLite index for each size and embedder, from the runs side by side.
fn index_ratios(reports: &[Value]) -> String {
    let mut out = String::from(
        "|  leaves |               embedder | retrieve p50 lance/sqlite | retrieve p95 lance/sqlite | index build lance/sqlite | identical packs | evidence overlap |\n\
         |--------:|-----------------------:|--------------------------:|--------------------------:|-------------------------:|----------------:|-----------------:|",
    );
    for sqlite in reports.iter().filter(|r| r["backend"] == "sqlite" && r["index"] == "store") {
        let Some(lance) = reports.iter().find(|r| {
            r["backend"] == "sqlite"
                && r["index"] == "lance"
                && r["events"] == sqlite["events"]
                && r["embedder"] == sqlite["embedder"]
        }) else {
            continue;
        };
        let ratio = |path: &[&str]| number(lance, path) / number(sqlite, path);
        let agreement = Agreement::of(&sqlite["answers"], &lance["answers"]);
        out.push_str(&format!(
            "\n| {:>7} | {:>22} | {:>25.2} | {:>25.2} | {:>24.2} | {:>14.1}% | {:>15.1}% |",
            number(sqlite, &["leaves"]),
            sqlite["embedder"].as_str().unwrap_or("?"),
            ratio(&["retrieve", "p50_ms"]),
            ratio(&["retrieve", "p95_ms"]),
            ratio(&["index_build_seconds"]),
            agreement.identical * 100.0,
            agreement.overlap * 100.0,
        ));
    }
    out.push_str(
        "\n\nidentical packs: questions whose evidence was the same nodes in the same order under both \
         indexes.\nevidence overlap: shared evidence over the larger of the two packs, averaged over questions.",
    );
    out
}

/// How alike two runs' answers to the same questions were (each answer: evidence node ids in
/// pack order). Differences come from the vector search turning approximate (IVF-PQ) and from
/// the two full-text engines scoring ties differently.
struct Agreement {
    /// Share of questions answered with the same nodes in the same order.
    identical: f64,
    /// Mean over questions of shared nodes / the larger pack (1 when both are empty).
    overlap: f64,
}

impl Agreement {
    fn of(left: &Value, right: &Value) -> Agreement {
        let ids = |answer: &Value| -> Vec<String> {
            answer.as_array().into_iter().flatten().filter_map(|id| id.as_str().map(str::to_owned)).collect()
        };
        let (left, right) =
            (left.as_array().cloned().unwrap_or_default(), right.as_array().cloned().unwrap_or_default());
        let questions = left.len().min(right.len());
        if questions == 0 {
            return Agreement { identical: f64::NAN, overlap: f64::NAN };
        }
        let (mut identical, mut overlap) = (0usize, 0.0);
        for (a, b) in left.iter().zip(&right) {
            let (a, b) = (ids(a), ids(b));
            identical += usize::from(a == b);
            let shared = a.iter().filter(|id| b.contains(id)).count();
            overlap += match a.len().max(b.len()) {
                0 => 1.0,
                larger => shared as f64 / larger as f64,
            };
        }
        Agreement { identical: identical as f64 / questions as f64, overlap: overlap / questions as f64 }
    }
}

/// Where a run's rows and index lived: `sqlite`, `postgres`, or `sqlite+lance`.
fn stores_label(report: &Value) -> String {
    let backend = report["backend"].as_str().unwrap_or("?");
    match report["index"].as_str() {
        Some("lance") => format!("{backend}+lance"),
        _ => backend.to_owned(),
    }
}

/// A figure a run may not have (a reused store was not ingested): `-` when it has none.
fn optional(report: &Value, path: &[&str], digits: usize) -> String {
    match path.iter().fold(report, |value, key| &value[*key]).as_f64() {
        Some(value) => format!("{value:.digits$}"),
        None => "-".to_owned(),
    }
}

fn number(report: &Value, path: &[&str]) -> f64 {
    path.iter().fold(report, |value, key| &value[*key]).as_f64().unwrap_or(f64::NAN)
}

fn row(r: &Value) -> String {
    let pair = |a: &[&str], b: &[&str], digits: usize| {
        if r[a[0]].is_null() {
            return "-".to_owned();
        }
        format!("{:.digits$} / {:.digits$}", number(r, a), number(r, b))
    };
    format!(
        "| {:>7} | {:>12} | {:>22} | {:>8} | {:>6.1} | {:>13.1} | {:>19} | {:>18} | {:>20} | {:>13} | {:>7.0} |",
        number(r, &["leaves"]),
        stores_label(r),
        r["embedder"].as_str().unwrap_or("?"),
        optional(r, &["ingest_leaves_per_second"], 0),
        number(r, &["seal_seconds"]),
        number(r, &["index_build_seconds"]),
        pair(&["retrieve", "p50_ms"], &["retrieve", "p95_ms"], 2),
        pair(&["floor_text", "p50_ms"], &["floor_text", "p95_ms"], 2),
        pair(&["floor_vector", "p50_ms"], &["floor_vector", "p95_ms"], 2),
        pair(&["ratio_p50"], &["ratio_p95"], 2),
        number(r, &["peak_rss_mib"]),
    )
}

fn table(reports: &[Value]) -> String {
    let mut out = String::from(
        "|  leaves |       stores |               embedder | ingest/s | seal s | index build s | retrieve ms p50/p95 | text floor p50/p95 | vector floor p50/p95 | ratio p50/p95 | RSS MiB |\n\
         |--------:|-------------:|-----------------------:|---------:|-------:|--------------:|--------------------:|-------------------:|---------------------:|--------------:|--------:|",
    );
    for report in reports {
        out.push('\n');
        out.push_str(&row(report));
    }
    out.push_str(
        "\n\nretrieve: Arbor's whole retrieval (scope, filters, both searches, fusion, store check, \
         verified bodies, pack), query embedding excluded.\nindex build: rebuilding the whole index from \
         the store (`arbor jobs reindex`: every body read and embedded again, the index built and optimized).\nfloor: the same queries straight to the text index \
         (BM25, top 50) plus the vector index (top 50), no filter; ratio = retrieve / floor.",
    );
    out
}

/// Retrieval as a caller sees it: exact questions with the query embedding excluded and
/// included, and broad questions answered summary-first, with the body files each hydrates.
fn questions_table(reports: &[Value]) -> String {
    let mut out = String::from(
        "|  leaves |       stores |               embedder | exact ms p50/p95, embedding excluded | exact ms p50/p95, included | broad ms p50/p95 | files hydrated per broad question mean/max | summaries in a broad pack |\n\
         |--------:|-------------:|-----------------------:|-------------------------------------:|---------------------------:|-----------------:|-------------------------------------------:|--------------------------:|",
    );
    for r in reports {
        let pair = |path: &[&str]| {
            let at = |q: &str| number(r, &[path, &[q]].concat());
            format!("{:.2} / {:.2}", at("p50_ms"), at("p95_ms"))
        };
        out.push_str(&format!(
            "\n| {:>7} | {:>12} | {:>22} | {:>36} | {:>26} | {:>16} | {:>42} | {:>25.1} |",
            number(r, &["leaves"]),
            stores_label(r),
            r["embedder"].as_str().unwrap_or("?"),
            pair(&["retrieve"]),
            pair(&["retrieve_with_embedding"]),
            pair(&["broad", "latency"]),
            format!("{:.1} / {}", number(r, &["broad", "bodies_read_mean"]), number(r, &["broad", "bodies_read_max"])),
            number(r, &["broad", "summaries_mean"]),
        ));
    }
    out
}

/// The embedders alone, as each run measured them before building its store (memories per
/// second embedded one at a time and 64 at a time), beside what the run's writes were
/// acknowledged at, how fast its job runner then indexed (embedding what writes left it),
/// and how fast the reindex embedded the very same texts (titles and bodies, and summaries:
/// longer than the bare memories, so slower) in batches with nothing else to do.
fn embedder_table(reports: &[Value]) -> String {
    let mut out = String::from(
        "|               embedder | run (leaves, backend) | batch 1 memories/s | batch 64 memories/s | ingest acknowledged/s | job runner indexed/s | reindex embedded/s | runner / reindex |\n\
         |-----------------------:|----------------------:|-------------------:|--------------------:|----------------------:|---------------------:|-------------------:|-----------------:|",
    );
    for r in reports.iter().filter(|r| !r["embedding"].is_null()) {
        let runner = number(r, &["jobs_indexed_per_second"]);
        let reindex = (number(r, &["leaves"]) + number(r, &["summaries"])) / number(r, &["index_build_seconds"]);
        out.push_str(&format!(
            "\n| {:>22} | {:>21} | {:>18.1} | {:>19.1} | {:>21.0} | {:>20.1} | {:>18.1} | {:>16.2} |",
            r["embedder"].as_str().unwrap_or("?"),
            format!("{}, {}", number(r, &["leaves"]), r["backend"].as_str().unwrap_or("?")),
            number(r, &["embedding", "batch_1_per_second"]),
            number(r, &["embedding", "batch_64_per_second"]),
            number(r, &["ingest_leaves_per_second"]),
            runner,
            reindex,
            runner / reindex,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_identical_packs_and_shared_evidence() {
        let sqlite = serde_json::json!([["a", "b"], ["c", "d"], [], ["e"]]);
        let lance = serde_json::json!([["a", "b"], ["d", "x"], [], ["e", "f"]]);
        let agreement = Agreement::of(&sqlite, &lance);
        // Identical: the first and the empty third; order matters, so ["c","d"] vs ["d","x"] is not.
        assert_eq!(agreement.identical, 0.5);
        // Overlaps: 2/2, 1/2, 1 (both empty), 1/2.
        assert_eq!(agreement.overlap, (1.0 + 0.5 + 1.0 + 0.5) / 4.0);
        assert!(Agreement::of(&serde_json::json!([]), &lance).overlap.is_nan(), "no questions, no figure");
    }
}
