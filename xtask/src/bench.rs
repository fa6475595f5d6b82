//! `cargo xtask bench`: builds `arbor` in release and runs `arbor bench` once per store size,
//! each in a fresh process, then prints the figures side by side and saves them as JSON.
//!
//! Stores are kept until every size has run: ext4 skips inodes freed in the last half
//! minute when it allocates new ones, so deleting one run's ten thousand files right before
//! the next run's would slow the next run's body writes by several times.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, step, tidy};

const USAGE: &str = "usage: cargo xtask bench [--sizes 10000,100000] [--queries 1000] [--keep]";

struct Options {
    sizes: Vec<usize>,
    queries: usize,
    keep: bool,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options { sizes: vec![10_000, 100_000], queries: 1_000, keep: false };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().with_context(|| format!("{name} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--sizes" => {
                options.sizes = value("--sizes")?
                    .split(',')
                    .map(|s| s.trim().replace('_', "").parse::<usize>())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("--sizes takes comma-separated counts\n{USAGE}"))?;
            }
            "--queries" => {
                options.queries =
                    value("--queries")?.parse().with_context(|| format!("--queries: a count\n{USAGE}"))?;
            }
            "--keep" => options.keep = true,
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    if options.sizes.is_empty() || options.sizes.contains(&0) || options.queries == 0 {
        bail!("sizes and queries must be positive\n{USAGE}");
    }
    Ok(options)
}

fn target_dir(root: &Path) -> Result<PathBuf> {
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

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = tidy::workspace_root();
    let mut build = cargo();
    build.args(["build", "--release", "--locked", "--bin", "arbor"]);
    step("cargo build --release --bin arbor", build)?;
    let target = target_dir(&root)?;
    let arbor = target.join("release").join("arbor");
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let stores = target.join("bench").join(format!("run-{stamp}"));
    std::fs::create_dir_all(&stores).with_context(|| format!("creating {}", stores.display()))?;

    let mut reports = Vec::new();
    for &size in &options.sizes {
        println!("\n==> arbor bench --leaves {size} --queries {}", options.queries);
        let output = Command::new(&arbor)
            .args(["bench", "--json", "--leaves", &size.to_string(), "--queries", &options.queries.to_string()])
            .arg("--dir")
            .arg(stores.join(size.to_string()))
            .output()
            .with_context(|| format!("running {}", arbor.display()))?;
        if !output.status.success() {
            bail!("arbor bench --leaves {size} failed:\n{}", String::from_utf8_lossy(&output.stderr));
        }
        let report: Value = serde_json::from_slice(&output.stdout).context("parsing arbor bench output")?;
        println!("{}", row(&report));
        reports.push(report);
    }

    println!("\n{}", table(&reports));
    let saved = target.join("bench").join("latest.json");
    std::fs::write(&saved, serde_json::to_vec_pretty(&reports)?)
        .with_context(|| format!("writing {}", saved.display()))?;
    println!("figures saved to {}", saved.display());
    if options.keep {
        println!("stores kept in {}", stores.display());
    } else {
        std::fs::remove_dir_all(&stores).with_context(|| format!("removing {}", stores.display()))?;
    }
    Ok(())
}

fn number(report: &Value, path: &[&str]) -> f64 {
    path.iter().fold(report, |value, key| &value[*key]).as_f64().unwrap_or(f64::NAN)
}

fn row(r: &Value) -> String {
    let pair = |a: &[&str], b: &[&str], digits: usize| format!("{:.digits$} / {:.digits$}", number(r, a), number(r, b));
    format!(
        "| {:>7} | {:>8.0} | {:>6.1} | {:>19} | {:>18} | {:>20} | {:>13} | {:>7.0} |",
        number(r, &["leaves"]),
        number(r, &["ingest_leaves_per_second"]),
        number(r, &["seal_seconds"]),
        pair(&["retrieve", "p50_ms"], &["retrieve", "p95_ms"], 2),
        pair(&["floor_text", "p50_ms"], &["floor_text", "p95_ms"], 2),
        pair(&["floor_vector", "p50_ms"], &["floor_vector", "p95_ms"], 2),
        pair(&["ratio_p50"], &["ratio_p95"], 2),
        number(r, &["peak_rss_mib"]),
    )
}

fn table(reports: &[Value]) -> String {
    let mut out = String::from(
        "|  leaves | ingest/s | seal s | retrieve ms p50/p95 | FTS5 floor p50/p95 | vector floor p50/p95 | ratio p50/p95 | RSS MiB |\n\
         |--------:|---------:|-------:|--------------------:|-------------------:|---------------------:|--------------:|--------:|",
    );
    for report in reports {
        out.push('\n');
        out.push_str(&row(report));
    }
    out.push_str(
        "\n\nretrieve: Arbor's whole retrieval (scope, filters, both searches, fusion, store check, \
         verified bodies, pack), query embedding excluded.\nfloor: the same queries straight to FTS5 \
         (BM25, top 50) plus the vector index (top 50), no filter; ratio = retrieve / floor.",
    );
    out
}
