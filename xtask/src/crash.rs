//! `cargo xtask crash [--points N] [--server-kills K]`: the crash campaign at full size.
//!
//! - `arbor` killed with SIGKILL at N random points (default 200) of ingests, sealing, forgets
//!   and reindexing, on SQLite and on Postgres (`crates/cli/tests/crash.rs`, which CI runs
//!   with a bounded count);
//! - the Postgres server itself killed (`pg_ctl stop -m immediate`: no checkpoint, transactions
//!   in flight cut off) K times (default 8) in the middle of an ingest, and started again:
//!   afterwards the next command recovers, `fsck` is clean, and every event the ingest
//!   acknowledged before the server went down is there.
//!
//! The server runs durably (fsync on), as a real one does, so "acknowledged" means committed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::postgres::{Durability, Server};
use crate::{step, tidy};

fn arbor(binary: &Path, root: &Path, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .env("ARBOR_EMBEDDER", "hashing")
        .env("ARBOR_DATABASE_URL", url)
        .env_remove("ARBOR_LOG")
        .arg("--root")
        .arg(root)
        .args(args);
    command
}

fn checked(mut command: Command, what: &str) -> Result<String> {
    let output = command.output().with_context(|| format!("could not run {what}"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `cargo xtask crash`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct CrashArgs {
    /// Random points at which `arbor` is killed, on SQLite and on Postgres.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), default_value_t = 200)]
    points: u64,
    /// Times the Postgres server is killed mid-ingest.
    #[arg(long, default_value_t = 8)]
    server_kills: usize,
}

pub(crate) fn run(args: CrashArgs) -> Result<()> {
    let CrashArgs { points, server_kills } = args;
    let points = points.to_string();
    let root = tidy::workspace_root();
    // Built as ci builds, so after ci nothing is compiled.
    let mut build = crate::ci_cargo();
    build.args(["nextest", "run", "--no-run"]).args(crate::CI_SELECTION);
    step("build arbor and the tests (as ci does)", build)?;
    let binary = crate::bench::target_dir(&root)?.join("debug").join("arbor");

    let server = Server::start(Durability::Durable)?;
    let mut campaign = crate::ci_cargo();
    campaign
        .args(["nextest", "run", "--no-capture"])
        .args(crate::CI_SELECTION)
        .args(["-E", "package(arbor-cli) & binary(crash)"])
        .env("ARBOR_CRASH_POINTS", &points)
        .env("ARBOR_TEST_DATABASE_URL", &server.url);
    step(&format!("arbor killed at {points} random points, on SQLite and on Postgres"), campaign)?;

    println!("\n==> the Postgres server killed mid-ingest, {server_kills} times");
    let scratch = std::env::temp_dir().join(format!("arbor-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let store = scratch.join("store");
    checked(
        arbor(&binary, &store, &server.url, &["init", "--backend", "postgres", "--schema", "crash_server"]),
        "init",
    )?;
    let mut acknowledged: Vec<String> = Vec::new();
    let mut next = 0usize;
    for kill in 0..server_kills {
        let events: String = (0..400)
            .map(|_| {
                next += 1;
                format!("{{\"text\":\"Shipment {next} carries crate token zq{next}x to the depot.\"}}\n")
            })
            .collect();
        let mut child = arbor(&binary, &store, &server.url, &["ingest", "--batch", "4", "--defer-jobs"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting an ingest")?;
        let mut stdin = child.stdin.take().context("stdin")?;
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(events.as_bytes());
        });
        // Kill the server somewhere in the ingest's first seconds.
        std::thread::sleep(Duration::from_millis(150 + (kill as u64 * 211) % 900));
        server.kill()?;
        let killed_at = Instant::now();
        let output = child.wait_with_output()?;
        let _ = writer.join();
        let printed = String::from_utf8_lossy(&output.stdout);
        let acked: Vec<String> = printed
            .lines()
            .filter(|line| line.starts_with("line "))
            .filter_map(|line| line.split_whitespace().find(|w| w.starts_with("leaf-")).map(str::to_owned))
            .collect();
        let refused_clearly = output.status.success() || !output.stderr.is_empty();
        if !refused_clearly {
            bail!("kill {kill}: the ingest failed without saying why");
        }
        acknowledged.extend(acked.iter().cloned());
        server.start_again()?;
        // The next command recovers; everything agrees; nothing acknowledged is lost.
        checked(arbor(&binary, &store, &server.url, &["jobs", "run"]), "jobs run after the restart")?;
        let fsck = checked(arbor(&binary, &store, &server.url, &["fsck"]), "fsck after the restart")?;
        if !fsck.trim_end().ends_with("clean") {
            bail!("kill {kill}: fsck after the restart:\n{fsck}");
        }
        let exported = checked(arbor(&binary, &store, &server.url, &["export"]), "export")?;
        let present: std::collections::BTreeSet<String> = exported
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter_map(|memory| memory["id"].as_str().map(str::to_owned))
            .collect();
        if let Some(lost) = acknowledged.iter().find(|id| !present.contains(*id)) {
            bail!("kill {kill}: acknowledged {lost} is gone after the server restarted");
        }
        println!(
            "kill {kill}: the ingest had {} events acknowledged when the server died ({} ms to exit); recovered, fsck clean",
            acked.len(),
            killed_at.elapsed().as_millis()
        );
    }
    println!(
        "\ncrash: {points} kills of arbor per backend, {server_kills} kills of the Postgres server, {} events acknowledged across them, lost 0",
        acknowledged.len()
    );
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
