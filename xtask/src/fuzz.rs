//! `cargo xtask fuzz [--runs N] [--target NAME]`: the coverage-guided fuzz targets in `fuzz/`
//! (cargo fuzz, libFuzzer) — event streams, body documents, time expressions, agent requests —
//! each run from its seeds (`fuzz/seeds/<target>`) for N executions (default 1,000,000),
//! printing how many ran. A crash stops with the input that caused it, saved under
//! `fuzz/artifacts/`; once fixed, the input belongs in the seeds and in a regression test.
//!
//! Built without a sanitizer (`-s none`): the toolchain here is stable, and the code is safe
//! Rust, so what the fuzzer looks for is panics, which libFuzzer catches without one.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, step, tidy};

/// Every fuzz target, by the name `cargo fuzz` knows it by.
pub(crate) const TARGETS: &[&str] = &["events", "markdown", "time_expr", "wire"];

/// Installs cargo-fuzz from crates.io if this machine does not have it.
fn ensure_cargo_fuzz() -> Result<()> {
    let present = cargo().args(["fuzz", "--version"]).output().is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    let mut install = cargo();
    install.args(["install", "cargo-fuzz", "--locked"]);
    step("installing cargo-fuzz", install)
}

/// Copies the seeds of `target` into its working corpus (which the fuzzer then grows).
fn seed_corpus(root: &Path, target: &str) -> Result<std::path::PathBuf> {
    let seeds = root.join("fuzz/seeds").join(target);
    let corpus = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus).with_context(|| format!("creating {}", corpus.display()))?;
    for entry in std::fs::read_dir(&seeds).with_context(|| format!("reading {}", seeds.display()))? {
        let entry = entry?;
        std::fs::copy(entry.path(), corpus.join(entry.file_name()))?;
    }
    Ok(corpus)
}

/// `cargo xtask fuzz`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct FuzzArgs {
    /// Executions of each target.
    #[arg(long, default_value_t = 1_000_000)]
    runs: u64,
    /// Run only this target.
    #[arg(long)]
    target: Option<String>,
}

impl FuzzArgs {
    /// Every target, `runs` executions each.
    pub(crate) fn runs(runs: u64) -> FuzzArgs {
        FuzzArgs { runs, target: None }
    }
}

/// Runs the fuzz targets; returns the executions of each.
pub(crate) fn run(args: FuzzArgs) -> Result<()> {
    let FuzzArgs { runs, target: only } = args;
    ensure_cargo_fuzz()?;
    let root = tidy::workspace_root();
    let targets: Vec<&str> = match &only {
        Some(name) if TARGETS.contains(&name.as_str()) => vec![name.as_str()],
        Some(name) => bail!("unknown fuzz target {name}; expected one of {}", TARGETS.join(", ")),
        None => TARGETS.to_vec(),
    };
    let mut build = cargo();
    build.current_dir(root.join("fuzz")).args(["fuzz", "build", "-s", "none"]);
    step("cargo fuzz build (instrumented, no sanitizer)", build)?;
    let mut figures = Vec::new();
    for target in targets {
        let corpus = seed_corpus(&root, target)?;
        println!("\n==> fuzz {target}: {runs} executions");
        let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .current_dir(root.join("fuzz"))
            .args(["fuzz", "run", "-s", "none", target])
            .arg(&corpus)
            .args(["--", &format!("-runs={runs}"), "-max_len=8192", "-print_final_stats=1"])
            .output()
            .with_context(|| format!("could not start the fuzz target {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            bail!(
                "fuzz target {target} failed ({}):\n{}",
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        let executed = log
            .lines()
            .find_map(|line| line.strip_prefix("stat::number_of_executed_units:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        println!("{target}: {executed} executions, no failure");
        figures.push((target, executed));
    }
    println!("\nfuzz: {}", figures.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join(", "));
    Ok(())
}
