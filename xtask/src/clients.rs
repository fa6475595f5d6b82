//! `cargo xtask clients` and `cargo xtask load`: the agent interfaces driven by real clients —
//! the repository's Python client (`clients/python`, installed with pip), the official Python
//! MCP SDK over stdio and streamable HTTP, and schemathesis against the served OpenAPI document
//! — and a load of concurrent retrievals over HTTP on loopback.
//!
//! The clients live in a Python virtual environment (`$ARBOR_PY_ENV`, default
//! `~/.cache/arbor-py`) built from `tests/clients/requirements.txt` (pinned, from PyPI) and
//! rebuilt when that file changes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{cargo, step, tidy};

const REQUIREMENTS: &str = "tests/clients/requirements.txt";

/// The virtual environment's Python, created or refreshed to match the requirements.
fn python_env(root: &Path) -> Result<PathBuf> {
    let env = std::env::var_os("ARBOR_PY_ENV").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
        home.join(".cache").join("arbor-py")
    });
    let python = env.join("bin").join("python");
    let requirements = std::fs::read_to_string(root.join(REQUIREMENTS)).context("reading the client requirements")?;
    let stamp = env.join("arbor-requirements.txt");
    if python.exists() && std::fs::read_to_string(&stamp).is_ok_and(|installed| installed == requirements) {
        return Ok(python);
    }
    println!("\n==> python clients ({}) into {}", REQUIREMENTS, env.display());
    let mut venv = Command::new("python3");
    venv.args(["-m", "venv", "--clear"]).arg(&env);
    step("python3 -m venv", venv)?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"]).arg(root.join(REQUIREMENTS));
    step("pip install the MCP SDK and schemathesis", pip)?;
    std::fs::write(&stamp, requirements).context("recording the installed requirements")?;
    Ok(python)
}

/// Builds the `arbor` binary (debug) and returns its path. Built the way `ci` builds (the same
/// selection and settings): after its build step this compiles nothing.
fn arbor_binary(root: &Path) -> Result<PathBuf> {
    let mut build = crate::ci_cargo();
    build.args(["nextest", "run", "--no-run"]).args(crate::CI_SELECTION);
    step("build arbor (as ci does)", build)?;
    Ok(crate::bench::target_dir(root)?.join("debug").join("arbor"))
}

/// A server started for a client; stopped when dropped.
struct Server {
    child: Child,
    addr: String,
    /// The owner's token an open loopback server made for its memory centre.
    operator: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `arbor serve --http` on a free loopback port, bound to the quickstart's scope.
fn serve(arbor: &Path, store: &Path, extra: &[&str]) -> Result<Server> {
    let scope = ["--conversation", "quickstart", "--project", "lumen-platform"];
    serve_with(arbor, store, &[&scope[..], extra].concat())
}

/// Starts `arbor serve --http` on a free loopback port with `args`.
fn serve_with(arbor: &Path, store: &Path, args: &[&str]) -> Result<Server> {
    let mut child = Command::new(arbor)
        .arg("--root")
        .arg(store)
        .args(["serve", "--http", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .context("starting arbor serve")?;
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().context("server stdout")?);
    stdout.read_line(&mut line)?;
    let mut centre = String::new();
    stdout.read_line(&mut centre)?;
    // A loopback server keeps the owner's token it made beside the store.
    let operator = std::fs::read_to_string(store.join("centre-token")).ok().map(|t| t.trim().to_owned());
    let addr = line
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split(": ").next())
        .map(str::to_owned)
        .with_context(|| format!("unexpected first line from arbor serve: {line:?}"))?;
    Ok(Server { child, addr, operator })
}

fn quickstart(arbor: &Path, store: &Path, embedder: &str) -> Result<()> {
    let mut quickstart = Command::new(arbor);
    quickstart.args(["quickstart", "--embedder", embedder, "--dir"]).arg(store).stdout(Stdio::null());
    step("arbor quickstart (the store the clients talk to)", quickstart)
}

pub(crate) fn clients() -> Result<()> {
    let root = tidy::workspace_root();
    let python = python_env(&root)?;
    let arbor = arbor_binary(&root)?;

    // The Python client, installed as a user installs it, and tested against the real server.
    let mut install = Command::new(&python);
    install.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--force-reinstall"]);
    install.arg(root.join("clients/python"));
    step("pip install ./clients/python", install)?;
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("clients/python/tests"))
        .env("ARBOR_BIN", &arbor);
    step("the Python client against arbor serve --tenants", pytest)?;

    let mut mcp = Command::new(&python);
    mcp.arg(root.join("tests/clients/mcp_client.py")).arg("--arbor").arg(&arbor);
    step("MCP: the official Python SDK drives arbor serve --mcp (stdio and streamable HTTP)", mcp)?;

    // The memory centre in a real headless browser: Debian's chromium, driven by Playwright
    // (from PyPI; it downloads no browser of its own here). Screenshots of every tab are the
    // run's artifacts.
    let chromium = ensure_chromium()?;
    let artifacts = root.join("artifacts").join("centre");
    let mut centre = Command::new(&python);
    centre
        .arg(root.join("tests/clients/centre_browser.py"))
        .arg("--arbor")
        .arg(&arbor)
        .arg("--artifacts")
        .arg(&artifacts)
        .arg("--chromium")
        .arg(&chromium);
    step("the memory centre in headless chromium (screenshots in artifacts/centre)", centre)?;

    let scratch = tempfile_dir("arbor-openapi")?;
    let store = scratch.join("store");
    quickstart(&arbor, &store, "hashing")?;
    let server = serve(&arbor, &store, &[])?;
    let mut schemathesis = Command::new(python.with_file_name("schemathesis"));
    schemathesis
        .arg("--config-file")
        .arg(root.join("tests/clients/schemathesis.toml"))
        .arg("run")
        .arg(format!("http://{}/openapi.json", server.addr))
        .args(["--checks", "all", "--max-examples", "40", "--workers", "1", "--seed", "20261130"]);
    // As the store's owner, so the memory centre's operator endpoints are exercised too.
    if let Some(token) = &server.operator {
        schemathesis.arg("-H").arg(format!("Authorization: Bearer {token}"));
    }
    let outcome = step("OpenAPI conformance: schemathesis against /openapi.json", schemathesis);
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// `cargo xtask load`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct LoadArgs {
    /// Retrievals to send.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), default_value_t = 200)]
    requests: u64,
    /// Retrievals in flight at once.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), default_value_t = 200)]
    concurrency: u64,
    /// Synthetic memories in the store served.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), default_value_t = 2_000)]
    memories: u64,
}

/// `cargo xtask load [--requests N] [--concurrency N] [--memories N]`: a release build serving
/// a store of synthetic memories (the local embedder when installed), and N retrievals with
/// that many in flight at once; prints errors, throughput and p50/p95/p99 latency.
pub(crate) fn load(args: LoadArgs) -> Result<()> {
    let LoadArgs { requests, concurrency, memories } = args;
    let (requests, concurrency, memories) = (requests.to_string(), concurrency.to_string(), memories.to_string());
    let root = tidy::workspace_root();
    let python = python_env(&root)?;
    let mut build = cargo();
    build.args(["build", "--release", "--locked", "--bin", "arbor"]);
    step("cargo build --release --bin arbor", build)?;
    let arbor = crate::bench::target_dir(&root)?.join("release").join("arbor");

    let scratch = tempfile_dir("arbor-load")?;
    let store = scratch.join("store");
    quickstart(&arbor, &store, "auto")?;
    let mut fill = Command::new(&python);
    fill.arg(root.join("tests/clients/load.py"))
        .args(["memories", "--count", &memories, "--arbor"])
        .arg(&arbor)
        .arg("--root")
        .arg(&store);
    step("ingest synthetic memories", fill)?;
    // Side by side on the same store: concurrent questions embedded in shared batches (how
    // `arbor serve` runs), then each on its own.
    let mut outcome = Ok(());
    let configurations: [(&str, &[&str]); 2] =
        [("batched embeddings", &[]), ("one embedding call per question", &["--embed-one-at-a-time"])];
    for (name, extra) in configurations {
        let server = serve(&arbor, &store, extra)?;
        let mut run = Command::new(&python);
        run.arg(root.join("tests/clients/load.py"));
        run.args(["retrieve", "--requests", &requests, "--concurrency", &concurrency, "--addr", &server.addr]);
        outcome = outcome.and(step(&format!("concurrent retrievals over HTTP: {name}"), run));
        drop(server);
    }
    // One server for 20 tenants, the same memories spread over their stores: the questions come
    // from every tenant in turn, and any answer holding another tenant's memory is an error.
    let operator_store = scratch.join("tenants");
    let mut init = Command::new(&arbor);
    init.arg("--root").arg(&operator_store).arg("init").stdout(Stdio::null());
    step("arbor init (the operator's store)", init)?;
    let tokens = scratch.join("tokens.json");
    let mut fill = Command::new(&python);
    fill.arg(root.join("tests/clients/load.py"))
        .args(["memories", "--count", &memories, "--tenants", "20", "--arbor"])
        .arg(&arbor)
        .arg("--root")
        .arg(&operator_store)
        .arg("--tokens")
        .arg(&tokens);
    step("ingest synthetic memories for 20 tenants", fill)?;
    let server = serve_with(&arbor, &operator_store, &["--tenants"])?;
    let mut run = Command::new(&python);
    run.arg(root.join("tests/clients/load.py"));
    run.args(["retrieve", "--requests", &requests, "--concurrency", &concurrency, "--addr", &server.addr]);
    run.arg("--tokens").arg(&tokens);
    outcome = outcome.and(step("concurrent retrievals over HTTP: 20 tenants, one server", run));
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// Debian's chromium (`ARBOR_CHROMIUM` names another build), installed with apt when it is
/// missing and this runs as root: Playwright drives it and downloads no browser itself.
fn ensure_chromium() -> Result<PathBuf> {
    if let Some(named) = std::env::var_os("ARBOR_CHROMIUM") {
        return Ok(PathBuf::from(named));
    }
    let installed = PathBuf::from("/usr/bin/chromium");
    if installed.exists() {
        return Ok(installed);
    }
    if !crate::is_root() {
        bail!("chromium is missing: install Debian's `chromium` package, or name a build with ARBOR_CHROMIUM");
    }
    let mut update = Command::new("apt-get");
    update.arg("update");
    step("apt-get update", update)?;
    let mut install = Command::new("apt-get");
    install.args(["install", "-y", "--no-install-recommends", "chromium"]);
    install.env("DEBIAN_FRONTEND", "noninteractive");
    step("installing chromium (for the memory centre's browser test)", install)?;
    Ok(installed)
}

fn tempfile_dir(prefix: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}
