//! `arbor serve`: the server's flags, and the trusted binding they make — the store opened by
//! the composition root, the read chain and write namespace from `--conversation`/`--project`/…,
//! who speaks — handed to `arbor-server`, which knows MCP and HTTP.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arbor_compose as compose;
use arbor_server::{Access, Binding, DEFAULT_MAX_BODY_BYTES, HttpOptions, Role, Service};

use crate::scope::ScopeArgs;
use crate::speaker::Speaker;

/// Every `minutes`, a consolidation pass over the live namespaces this server reads, when at least
/// `min_new` memories were written there since the last one and no other pass holds the
/// store's lock.
async fn consolidate_on_schedule(
    service: Arc<Service>,
    root: std::path::PathBuf,
    namespaces: Vec<arbor_domain::namespace::Namespace>,
    (minutes, min_new): (u32, usize),
) {
    let every = std::time::Duration::from_secs(u64::from(minutes) * 60);
    loop {
        tokio::time::sleep(every).await;
        let options =
            compose::PassOptions { namespaces: Some(namespaces.clone()), min_new: Some(min_new), ..Default::default() };
        match compose::consolidation_pass(service.arbor(), &root, options).await {
            Ok(Some(pass)) => tracing::info!(
                applied = pass.run.applied(),
                left_for_review = pass.run.left_for_review(),
                report = ?pass.report,
                "scheduled consolidation pass"
            ),
            Ok(None) => tracing::debug!("scheduled consolidation: too little new, or another pass is running"),
            Err(error) => {
                tracing::warn!(error = %error.with_causes(), "scheduled consolidation failed; trying again next time")
            }
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Serve the MCP tools: over stdio, or over streamable HTTP at `/mcp` with --listen.
    #[arg(long, required_unless_present = "http")]
    mcp: bool,
    /// Serve the HTTP API under `/api/v1/memory/` (needs --listen).
    #[arg(long, requires = "listen")]
    http: bool,
    /// Address to listen on, e.g. `127.0.0.1:7300` (port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Bearer token required on every request. Mandatory when listening on anything but
    /// loopback. With --tenants, the server administrator's: it reads /metrics and nothing else.
    #[arg(long, env = "ARBOR_API_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The store owner's token: it opens the memory centre at `/` (with --http) and the
    /// operator endpoints (review, health, settings…), which --token and an open loopback
    /// server do not; a multi-tenant server ignores it (its operators hold issued tokens). On
    /// loopback without it, a fresh one is made at start and kept in `<root>/centre-token`
    /// (this user only), and shown in the centre's address when the server runs in a terminal.
    #[arg(long, env = "ARBOR_OPERATOR_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
    /// Embed each question on its own instead of batching concurrent ones (for measuring what
    /// batching buys; `cargo xtask load` runs both).
    #[arg(long, hide = true)]
    embed_one_at_a_time: bool,
    /// Another name clients use for this server in the `Host` header (repeatable), e.g. when it
    /// listens on a non-loopback address. Loopback names and the listening address are always
    /// allowed; any other `Host` is refused, so a web page cannot reach the server by rebinding
    /// a domain name to it.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Consolidate ("dream") the store every this many minutes, beside serving: a pass over
    /// what was written since the last one (see `arbor consolidate`). Off by default.
    #[arg(long = "consolidate-every", value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..=10_080))]
    consolidate_every_minutes: Option<u32>,
    /// A scheduled pass runs only when at least this many memories were written since the last.
    #[arg(
        long = "consolidate-min-new",
        default_value_t = 20,
        value_name = "N",
        requires = "consolidate_every_minutes"
    )]
    consolidate_min_new: usize,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES, value_name = "BYTES")]
    max_body_bytes: usize,
    /// How long a client may take to send a request's headers (and an idle connection stays
    /// open), in milliseconds. For tests; the default suits real clients.
    #[arg(long, hide = true, default_value_t = arbor_server::HEADER_READ_TIMEOUT.as_millis() as u64, value_name = "MS")]
    header_read_timeout_ms: u64,
    /// How long a client may take to send a request's body once its headers are in, in
    /// milliseconds. For tests; the default suits real clients.
    #[arg(long, hide = true, default_value_t = arbor_server::BODY_READ_TIMEOUT.as_millis() as u64, value_name = "MS")]
    body_read_timeout_ms: u64,
    /// How many MCP sessions may be open at once over HTTP; a client past it is told to retry
    /// (idle sessions close after ten minutes).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=100_000), value_name = "N")]
    max_mcp_sessions: u32,
    /// Who the words sent to this server are from, for every request: `agent` (the agent's own
    /// saves and corrections, marked as the agent's), `user` (a host relaying what its user
    /// said) — either is current at once in a conversation and waits for a person in a project
    /// or the global layer — or `integration` (a system of record syncing its records).
    /// Requests cannot say otherwise.
    #[arg(long, value_enum, default_value = "agent")]
    speaker: Speaker,
    /// Serve many tenants: every request must carry a bearer token from `arbor tokens create`,
    /// and acts as the tenant, context, speaker and role that token was issued for (each tenant
    /// is a store of its own under `<root>/tenants/`). Needs --listen; takes no scope flags.
    /// With --token, that token is the server administrator's and reads /metrics only.
    #[arg(long, requires = "listen", conflicts_with_all = ["speaker", "consolidate_every_minutes"])]
    tenants: bool,
    /// The trusted context this server acts as, for every request.
    #[command(flatten)]
    scope: ScopeArgs,
}

pub(crate) async fn run(root: &Path, args: Args) -> Result<()> {
    if args.tenants {
        return serve_tenants(root, args).await;
    }
    if !args.scope.is_given() {
        bail!(
            "arbor serve needs the scope it serves: --conversation, --project, --automation/--experiment with --run, or --namespace"
        );
    }
    // Concurrent questions share embedding batches.
    let embedders =
        if args.embed_one_at_a_time { compose::Embedders::OneCallerAtATime } else { compose::Embedders::Coalesced };
    // The audit log names the binding and the transport: `agent:mcp`, `user:http`, …
    let actor = format!("{}:{}", args.speaker.as_str(), if args.http { "http" } else { "mcp" });
    let opened = compose::open_with(root, embedders, &actor).await?;
    let context = args.scope.context()?;
    let chain = opened.arbor.read_chain(&context)?;
    let reports = root.join(arbor_compose::REPORTS_DIR);
    let settings = Arc::new(StoreSettings { root: root.to_path_buf() });
    let service = Service::new(opened.arbor, chain, args.speaker.actor()).with_reports(reports).with_settings(settings);
    let service = Arc::new(service);
    tokio::spawn(service.clone().run_jobs_in_background());
    if let Some(minutes) = args.consolidate_every_minutes {
        // Never a frozen layer: an experiment's snapshot stays as it was when it started.
        let namespaces: Vec<_> = service.chain().live_namespaces().cloned().collect();
        let schedule = (minutes, args.consolidate_min_new);
        tokio::spawn(consolidate_on_schedule(service.clone(), root.to_path_buf(), namespaces, schedule));
    }
    match args.listen {
        None => {
            if args.http {
                bail!("--http needs --listen");
            }
            Ok(arbor_server::serve_stdio(service).await?)
        }
        Some(addr) => {
            let binding = Binding { service, role: Role::Agent };
            let access = match args.token.clone() {
                Some(token) => Access::Token { token, binding },
                None => Access::Open(binding),
            };
            listen(addr, access, &args, root).await
        }
    }
}

/// One server for every tenant an operator issued tokens for ([`crate::tokens::TokenBook`]).
async fn serve_tenants(root: &Path, args: Args) -> Result<()> {
    if args.scope.is_given() {
        bail!("--tenants takes each request's scope from its token; drop the scope flags");
    }
    let Some(addr) = args.listen else { bail!("--tenants needs --listen") };
    // The store at the root is the operator's: tenants are made like it, and its token book is here.
    compose::StoreConfig::load(root)?;
    let book = crate::tokens::TokenBook::new(root)?;
    let access = Access::Tenants { tokens: Arc::new(book), admin: args.token.clone() };
    listen(addr, access, &args, root).await
}

/// Listens on `addr` and serves `access` as `args` say.
async fn listen(addr: SocketAddr, access: Access, args: &Args, root: &Path) -> Result<()> {
    if args.token.as_deref().is_some_and(|t| t.len() < 16) {
        bail!("--token must be at least 16 characters");
    }
    if !addr.ip().is_loopback() && matches!(access, Access::Open(_)) {
        bail!("listening on {addr}, which is not loopback, needs --token (or ARBOR_API_TOKEN) or --tenants");
    }
    let (operator_token, made) = owner_token(addr, args, root)?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("could not listen on {addr}"))?;
    let bound = listener.local_addr()?;
    let options = HttpOptions {
        mcp: args.mcp,
        api: args.http,
        max_body_bytes: args.max_body_bytes,
        host: bound,
        allowed_hosts: args.allowed_hosts.clone(),
        max_mcp_sessions: args.max_mcp_sessions as usize,
        header_read_timeout: std::time::Duration::from_millis(args.header_read_timeout_ms.max(1)),
        body_read_timeout: std::time::Duration::from_millis(args.body_read_timeout_ms.max(1)),
        operator_token,
    };
    // The address on stdout, so a parent process that asked for port 0 can find it.
    let mut served = Vec::new();
    if args.http {
        served.push(format!("http://{bound}/api/v1/memory/"));
    }
    if args.mcp {
        served.push(format!("MCP at http://{bound}/mcp"));
    }
    // One write for every line: a parent that reads the first and closes the pipe cannot
    // catch the server between two.
    let mut banner = format!("listening on {bound}: {}", served.join(", "));
    if args.http {
        banner.push('\n');
        banner.push_str(&match (&made, &options.operator_token) {
            // A person at a terminal gets the address to open; anything else that started the
            // server (an agent's harness, a service manager's log) is not told the token. After
            // `#`, it never reaches a server or a proxy's log; the page moves it out of the bar.
            (Some(token), _) if std::io::stdout().is_terminal() => {
                format!("memory centre at http://{bound}/#operator={token}")
            }
            (Some(_), _) => format!(
                "memory centre at http://{bound}/ (its token is in {}, readable by this user only)",
                root.join(CENTRE_TOKEN_FILE).display()
            ),
            (None, Some(_)) => format!("memory centre at http://{bound}/ (sign in with the operator token)"),
            (None, None) if args.tenants => {
                format!("memory centre at http://{bound}/ (sign in with an operator token)")
            }
            (None, None) => "memory centre: closed off loopback until started with --operator-token".to_owned(),
        });
    }
    crate::output::outln!("{banner}");
    Ok(arbor_server::serve_http(listener, access, options).await?)
}

/// Where a loopback server keeps the owner's token it made, in the store's directory.
pub(crate) const CENTRE_TOKEN_FILE: &str = "centre-token";

/// The owner's token for the memory centre, and the one made here if it was. Made only for a
/// loopback listener, and kept in [`CENTRE_TOKEN_FILE`] (owner-only permissions); off loopback,
/// the owner names one (`--operator-token`, better `ARBOR_OPERATOR_TOKEN`: a flag shows in
/// the process list) or the centre stays closed.
fn owner_token(addr: SocketAddr, args: &Args, root: &Path) -> Result<(Option<String>, Option<String>)> {
    if args.tenants || !args.http {
        return Ok((None, None));
    }
    if let Some(given) = args.operator_token.clone() {
        if given.len() < 16 {
            bail!("--operator-token must be at least 16 characters");
        }
        if args.token.as_deref() == Some(given.as_str()) {
            bail!("--operator-token must differ from --token: an agent holding --token would be the owner");
        }
        return Ok((Some(given), None));
    }
    if !addr.ip().is_loopback() {
        return Ok((None, None));
    }
    let made = compose::new_secret()?;
    compose::write_private(&root.join(CENTRE_TOKEN_FILE), made.as_bytes())?;
    Ok((Some(made.clone()), Some(made)))
}

/// The store's `arbor.json`, for the memory centre's Settings tab: read as it is, replaced
/// only through [`compose::replace_settings`], the check `arbor` makes when it opens the store.
#[derive(Debug)]
struct StoreSettings {
    root: std::path::PathBuf,
}

impl arbor_server::SettingsFile for StoreSettings {
    fn read(&self) -> std::result::Result<String, arbor_server::PortFailure> {
        Ok(compose::settings_for_display(&self.root)?)
    }

    fn write(&self, text: &str) -> std::result::Result<(), arbor_server::SettingsRefused> {
        use arbor_server::SettingsRefused;
        match compose::replace_settings(&self.root, text) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(why)) => Err(SettingsRefused::Invalid(why)),
            Err(error) => Err(SettingsRefused::Failed(Box::new(error))),
        }
    }
}
