//! Reports on the store: `stats`, `daily`, `health`, `audit` and `usage`.

use std::path::Path;

use anyhow::{Context, Result};
use arbor_compose as compose;
use arbor_domain::namespace::Namespace;
use arbor_domain::time::Timestamp;

use crate::output::print_json;
use crate::render;
use crate::scope::ScopeArgs;

pub(crate) async fn stats(root: &Path, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let stats = opened.arbor.stats().await?;
    if json {
        return print_json(&stats);
    }
    crate::output::out!("{}", render::stats(&opened.root, &stats));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct DailyArgs {
    /// The day, YYYY-MM-DD; today by default.
    #[arg(long)]
    date: Option<String>,
    /// Your offset from UTC (`+08:00`, `-05:00`): the day runs midnight to midnight there.
    #[arg(long, value_name = "OFFSET", default_value = "+00:00", allow_hyphen_values = true)]
    utc_offset: String,
    /// At most this many memories, newest first (1-10000).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    limit: u16,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor daily`: what the scope's chain can read that was observed on one day, across trees.
pub(crate) async fn daily(root: &Path, args: DailyArgs, json: bool) -> Result<()> {
    let day = arbor_domain::daily::Day::asked(args.date.as_deref(), Some(&args.utc_offset), Timestamp::now())
        .map_err(anyhow::Error::msg)?;
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let view = opened.arbor.daily(&chain, day, usize::from(args.limit)).await?;
    if json {
        return print_json(&view);
    }
    crate::output::out!("{}", render::daily(&view));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct HealthArgs {
    /// Only these namespaces (e.g. `project:p1`); every namespace the store holds by default.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    namespaces: Vec<String>,
}

/// `arbor health`: the store owner's view of every namespace (or those named), whatever chain
/// could read it, like `stats` and `fsck`.
pub(crate) async fn health(root: &Path, args: HealthArgs, json: bool) -> Result<()> {
    let namespaces = args
        .namespaces
        .iter()
        .map(|name| Namespace::parse(name).with_context(|| format!("--namespace {name:?}")))
        .collect::<Result<Vec<_>>>()?;
    let opened = compose::open_for_reading(root).await?;
    let report = opened.arbor.health(&namespaces).await?;
    if json {
        return print_json(&report);
    }
    crate::output::out!("{}", render::health(&report));
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// At most this many events, newest first.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor audit`: the state changes in scope — who, what, when, ids and hashes, never content.
pub(crate) async fn audit(root: &Path, args: AuditArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let events = opened.arbor.audit_log(&chain, args.limit).await?;
    if json {
        return print_json(&events);
    }
    for event in &events {
        let node = event.node.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".to_owned());
        let hash = event.content_sha256.as_ref().map(ToString::to_string).unwrap_or_default();
        crate::output::outln!(
            "{}  {:<18} {:<30} {}  by {}  {}",
            event.at,
            event.action,
            node,
            event.namespace,
            event.actor,
            hash
        );
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct UsageArgs {
    /// The leaf or summary.
    id: String,
    /// Look at the latest this many recorded retrievals of it.
    #[arg(long, default_value_t = 100)]
    limit: usize,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// `arbor usage`: how recorded retrievals (`retrieve --record`) used one memory.
pub(crate) async fn usage(root: &Path, args: UsageArgs, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let usage = opened.arbor.usage(&chain, &args.id, args.limit).await?;
    if json {
        return print_json(&usage);
    }
    let last = usage.last_used.map(|t| t.to_string()).unwrap_or_else(|| "never".to_owned());
    crate::output::outln!(
        "{}: considered by {} recorded retrievals, in the context of {}; last used {last}",
        usage.node,
        usage.retrievals,
        usage.entered_context
    );
    for record in &usage.records {
        let fate = if record.entered_context { "in context" } else { "considered" };
        crate::output::outln!("  {}  {}  {fate}  ({})", record.at, record.retrieval, record.namespace);
    }
    Ok(())
}
