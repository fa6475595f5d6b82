//! `arbor tokens` (the operator issues, lists and revokes the bearer tokens of tenants) and the
//! token book a multi-tenant server (`arbor serve --tenants`) binds requests with: a token's
//! record names its tenant, context, speaker and role; the tenant's store is opened on first use
//! and kept open, its background jobs running beside it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context, Result};
use arbor_app::Arbor;
use arbor_compose as compose;
use arbor_compose::IssuedToken;
use arbor_domain::read_chain::{ReadChain, ReadChainPolicy};
use arbor_server::{Binding, Role, Service};

use crate::output::outln;
use crate::scope::ScopeArgs;
use crate::speaker::Speaker;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum TokensCommand {
    /// Issue a bearer token bound to a tenant and a context in it (the tenant's store is made on
    /// its first token). The token is printed once and stored only as its SHA-256.
    Create(CreateArgs),
    /// List the issued tokens (never the tokens themselves).
    List,
    /// Revoke a token by its id (`tok_…`); a running server refuses it from its next request.
    Revoke {
        #[arg(value_name = "ID")]
        id: String,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// The tenant: 1 to 40 of a-z, 0-9 and _. Each tenant is a store of its own.
    #[arg(long, value_name = "NAME")]
    tenant: String,
    /// An operator's token: besides memory, it lists, confirms and rejects what waits for a
    /// person in its read chain, and reads /metrics.
    #[arg(long)]
    operator: bool,
    /// Who the words sent with this token are from (see `arbor serve --speaker`).
    #[arg(long, value_enum, default_value = "agent")]
    speaker: Speaker,
    /// A note for the operator's list, e.g. the app or person it was issued to.
    #[arg(long, value_name = "TEXT")]
    label: Option<String>,
    /// The trusted context every request with this token acts in, inside its tenant.
    #[command(flatten)]
    scope: ScopeArgs,
}

pub(crate) async fn run(root: &Path, command: TokensCommand, json: bool) -> Result<()> {
    match command {
        TokensCommand::Create(args) => {
            if !args.scope.is_given() {
                anyhow::bail!(
                    "a token needs the context it acts in: --conversation, --project, --automation/--experiment with --run, or --namespace"
                );
            }
            let context = args.scope.context()?;
            // Refused now rather than at the first request: a context no chain can be built for.
            ReadChain::resolve(&context, &ReadChainPolicy::default())?;
            let new = compose::NewToken {
                tenant: args.tenant,
                operator: args.operator,
                speaker: args.speaker.actor(),
                context,
                label: args.label,
            };
            let (issued, token) = compose::issue_token(root, new).await?;
            if json {
                let mut value = serde_json::to_value(&issued)?;
                value["token"] = serde_json::Value::String(token);
                outln!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                outln!("{} for tenant {} ({}):", issued.id, issued.tenant, describe(&issued));
                outln!("{token}");
                outln!("It is shown once and stored only as its hash; pass it as `Authorization: Bearer <token>`.");
            }
        }
        TokensCommand::List => {
            let tokens = compose::list_tokens(root)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&tokens)?);
            } else if tokens.is_empty() {
                outln!("no tokens; issue one with `arbor tokens create --tenant NAME --conversation ID`");
            } else {
                for token in &tokens {
                    let label = token.label.as_deref().map(|l| format!(" \"{l}\"")).unwrap_or_default();
                    outln!("{}  {}  {}  {}{label}", token.id, token.tenant, token.created_at, describe(token));
                }
            }
        }
        TokensCommand::Revoke { id } => {
            let revoked = compose::revoke_token(root, &id)?;
            if !revoked {
                anyhow::bail!("no token {id}; `arbor tokens list` shows the issued ones");
            }
            if json {
                outln!("{}", serde_json::json!({ "revoked": id }));
            } else {
                outln!("revoked {id}");
            }
        }
    }
    Ok(())
}

/// A token's role, speaker and read chain, in a few words.
fn describe(token: &IssuedToken) -> String {
    let chain = ReadChain::resolve(&token.context, &ReadChainPolicy::default())
        .map(|chain| chain.namespaces().map(ToString::to_string).collect::<Vec<_>>().join(" -> "))
        .unwrap_or_else(|error| format!("unusable context: {error}"));
    let role = if token.operator { "operator" } else { "agent" };
    let speaker = serde_json::to_value(token.speaker).ok().and_then(|v| v.as_str().map(str::to_owned));
    format!("{role}, speaks as {}, reads {chain}", speaker.unwrap_or_default())
}

/// The operator's token book as a server reads it: re-read when the file changes, so a token
/// issued or revoked while the server runs counts from the next request; a tenant's store is
/// opened on its first request (without holding up anyone else's) and closed once no token
/// names the tenant any more.
#[derive(Debug)]
pub(crate) struct TokenBook {
    root: PathBuf,
    state: tokio::sync::Mutex<BookState>,
}

/// What identifies one version of the token file: a rewrite (a rename over it) changes the
/// inode even within the file system's timestamp granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        let metadata = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileStamp { modified: metadata.modified().ok(), len: metadata.len(), inode })
    }

    /// Whether the file changed so recently that a second change could share its timestamp
    /// (coarse clocks on some file systems): then it is read again regardless.
    fn is_fresh(&self) -> bool {
        self.modified.and_then(|m| m.elapsed().ok()).is_none_or(|age| age < std::time::Duration::from_secs(2))
    }
}

#[derive(Debug, Default)]
struct BookState {
    /// The version of the file last read; `None` before the first read.
    read: Option<Option<FileStamp>>,
    by_digest: HashMap<String, IssuedToken>,
    /// Each tenant's store slot, opened once by the first request that needs it.
    tenants: HashMap<String, Arc<TenantSlot>>,
    /// Each token's binding once built, by digest, with the record it was built from.
    bindings: HashMap<String, (IssuedToken, Binding)>,
}

/// A tenant's store, opened on first use; its job loop stops when the slot is dropped.
#[derive(Debug, Default)]
struct TenantSlot {
    open: tokio::sync::OnceCell<(Arc<Arbor>, JobLoop)>,
}

/// A tenant's store being opened.
type Opening = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(Arc<Arbor>, JobLoop)>> + Send>>;

/// The background jobs of a tenant's store, stopped when dropped.
#[derive(Debug)]
struct JobLoop(tokio::task::AbortHandle);

impl Drop for JobLoop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl TokenBook {
    pub(crate) fn new(root: &Path) -> Result<TokenBook> {
        // Read once now, so a broken token file stops the server at start, not at a request.
        compose::list_tokens(root)?;
        Ok(TokenBook { root: root.to_path_buf(), state: Default::default() })
    }

    /// Re-reads the token file if it changed. A file that no longer reads (a bad hand edit)
    /// leaves the last good book in force, loudly; before any good read it is an error.
    fn reload_if_changed(&self, state: &mut BookState) -> Result<()> {
        let stamp = FileStamp::of(&self.root.join(compose::TOKENS_FILE));
        if state.read == Some(stamp) && !stamp.is_some_and(|s| s.is_fresh()) {
            return Ok(());
        }
        let tokens = match compose::list_tokens(&self.root) {
            Ok(tokens) => tokens,
            Err(error) if state.read.is_some() => {
                let error = anyhow::Error::from(error);
                tracing::error!(error = %format!("{error:#}"), "the token file does not read; the last good one stays in force");
                return Ok(());
            }
            Err(error) => return Err(error.into()),
        };
        state.read = Some(stamp);
        state.by_digest = tokens.into_iter().map(|t| (t.sha256.clone(), t)).collect();
        let live = &state.by_digest;
        state.bindings.retain(|digest, (record, _)| live.get(digest) == Some(record));
        let tenants: std::collections::HashSet<&String> = live.values().map(|t| &t.tenant).collect();
        state.tenants.retain(|tenant, _| tenants.contains(tenant));
        Ok(())
    }

    /// Opens `tenant`'s store and starts its jobs. The opening runs on a blocking thread of the
    /// runtime: the compiler cannot show that every adapter's opening future is `Send` (sqlx's
    /// are not provably so behind a generic cell), and there it need not be.
    fn open_tenant(&self, tenant: &str) -> Opening {
        let (root, tenant) = (self.root.clone(), tenant.to_owned());
        Box::pin(async move {
            let runtime = tokio::runtime::Handle::current();
            let name = tenant.clone();
            let opened = tokio::task::spawn_blocking(move || {
                let root = compose::tenant_root(&root, &name)?;
                let actor = format!("tenant:{name}:http");
                runtime
                    .block_on(compose::open_with(&root, compose::Embedders::Coalesced, &actor))
                    .with_context(|| format!("opening tenant {name}'s store"))
            })
            .await
            .context("the thread opening a tenant's store failed")??;
            let arbor = Arc::new(opened.arbor);
            let jobs = tokio::spawn(run_jobs(arbor.clone(), tenant)).abort_handle();
            Ok((arbor, JobLoop(jobs)))
        })
    }
}

/// A tenant's background jobs (indexing, sealing, summaries), as a single-scope server runs
/// its own.
async fn run_jobs(arbor: Arc<Arbor>, tenant: String) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        if let Err(error) = arbor.run_jobs(Some(100)).await {
            tracing::warn!(%error, %tenant, "background jobs failed; retrying");
        }
    }
}

#[async_trait::async_trait]
impl arbor_server::Tokens for TokenBook {
    async fn bind(&self, token: &str) -> std::result::Result<Option<Binding>, arbor_server::PortFailure> {
        let digest = compose::token_digest(token);
        let (issued, slot) = {
            let mut state = self.state.lock().await;
            self.reload_if_changed(&mut state)?;
            let Some(issued) = state.by_digest.get(&digest).cloned() else { return Ok(None) };
            if let Some((record, binding)) = state.bindings.get(&digest)
                && record == &issued
            {
                return Ok(Some(binding.clone()));
            }
            let slot = state.tenants.entry(issued.tenant.clone()).or_default().clone();
            (issued, slot)
        };
        // Opened outside the book's lock: a slow or failing store holds up its own tenant only.
        let (arbor, _) = slot.open.get_or_try_init(|| self.open_tenant(&issued.tenant)).await?;
        let chain = arbor.read_chain(&issued.context)?;
        let reports = compose::tenant_root(&self.root, &issued.tenant)?.join(compose::REPORTS_DIR);
        let service = Service::new(arbor.clone(), chain, issued.speaker).with_reports(reports).reviewed_by_operators();
        let role = if issued.operator { Role::Operator } else { Role::Agent };
        let binding = Binding { service: Arc::new(service), role };
        let mut state = self.state.lock().await;
        // Kept only if the token is still what it was (a revocation may have come meanwhile).
        if state.by_digest.get(&digest) == Some(&issued) {
            state.bindings.insert(digest, (issued, binding.clone()));
        }
        Ok(Some(binding))
    }

    async fn open_stores(&self) -> Vec<(String, Arc<Arbor>)> {
        let state = self.state.lock().await;
        let mut stores: Vec<_> = state
            .tenants
            .iter()
            .filter_map(|(name, slot)| slot.open.get().map(|(arbor, _)| (name.clone(), arbor.clone())))
            .collect();
        stores.sort_by(|a, b| a.0.cmp(&b.0));
        stores
    }

    async fn ready(&self) -> std::result::Result<(), arbor_server::PortFailure> {
        Ok(compose::list_tokens(&self.root).map(|_| ())?)
    }
}
