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
use crate::serve::Speaker;

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

/// The operator's token book as a server reads it: reloaded when the file changes, so a token
/// issued or revoked while the server runs counts from the next request.
#[derive(Debug)]
pub(crate) struct TokenBook {
    root: PathBuf,
    state: tokio::sync::Mutex<BookState>,
}

#[derive(Debug, Default)]
struct BookState {
    /// When the token file was last read; `None` before the first read.
    read: Option<Option<SystemTime>>,
    by_digest: HashMap<String, IssuedToken>,
    /// Each open tenant's store, shared by its tokens.
    tenants: HashMap<String, Arc<Arbor>>,
    /// Each token's binding once built, by token id.
    bindings: HashMap<String, Binding>,
}

impl TokenBook {
    pub(crate) fn new(root: &Path) -> Result<TokenBook> {
        // Read once now, so a broken token file stops the server at start, not at a request.
        compose::list_tokens(root)?;
        Ok(TokenBook { root: root.to_path_buf(), state: Default::default() })
    }

    fn reload_if_changed(&self, state: &mut BookState) -> Result<()> {
        let modified = compose::tokens_modified(&self.root);
        if state.read == Some(modified) {
            return Ok(());
        }
        let (modified, tokens) = compose::load_tokens(&self.root)?;
        state.read = Some(modified);
        state.by_digest = tokens.into_iter().map(|t| (t.sha256.clone(), t)).collect();
        let live: Vec<&String> = state.by_digest.values().map(|t| &t.id).collect();
        state.bindings.retain(|id, _| live.contains(&id));
        Ok(())
    }

    /// The tenant's store, opened on its first request and kept, with its jobs running.
    async fn tenant(&self, state: &mut BookState, tenant: &str) -> Result<Arc<Arbor>> {
        if let Some(arbor) = state.tenants.get(tenant) {
            return Ok(arbor.clone());
        }
        let root = compose::tenant_root(&self.root, tenant)?;
        let actor = format!("tenant:{tenant}:http");
        let opened = compose::open_with(&root, compose::Embedders::Coalesced, &actor)
            .await
            .with_context(|| format!("opening tenant {tenant}'s store"))?;
        let arbor = Arc::new(opened.arbor);
        tokio::spawn(run_jobs(arbor.clone(), tenant.to_owned()));
        state.tenants.insert(tenant.to_owned(), arbor.clone());
        Ok(arbor)
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
    async fn bind(&self, token: &str) -> Result<Option<Binding>> {
        let digest = compose::token_digest(token);
        let mut state = self.state.lock().await;
        self.reload_if_changed(&mut state)?;
        let Some(issued) = state.by_digest.get(&digest).cloned() else { return Ok(None) };
        if let Some(binding) = state.bindings.get(&issued.id) {
            return Ok(Some(binding.clone()));
        }
        let arbor = self.tenant(&mut state, &issued.tenant).await?;
        let chain = arbor.read_chain(&issued.context)?;
        let reports = compose::tenant_root(&self.root, &issued.tenant)?.join(compose::REPORTS_DIR);
        let service = Arc::new(Service::new(arbor, chain, issued.speaker).with_reports(reports));
        let role = if issued.operator { Role::Operator } else { Role::Agent };
        let binding = Binding { service, role };
        state.bindings.insert(issued.id.clone(), binding.clone());
        Ok(Some(binding))
    }

    async fn open_stores(&self) -> Vec<(String, Arc<Arbor>)> {
        let state = self.state.lock().await;
        let mut stores: Vec<_> = state.tenants.iter().map(|(name, arbor)| (name.clone(), arbor.clone())).collect();
        stores.sort_by(|a, b| a.0.cmp(&b.0));
        stores
    }

    async fn ready(&self) -> Result<()> {
        compose::list_tokens(&self.root).map(|_| ())
    }
}
