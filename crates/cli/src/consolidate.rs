//! `arbor consolidate`: one consolidation pass ("dream") over what was written since the last
//! one, under the store's lock, with its report written under `reports/consolidation/`;
//! `--dry-run` prints the plan and changes nothing; `--reports` lists the reports.

use std::path::Path;

use anyhow::{Context, Result};
use arbor_compose as compose;
use arbor_domain::namespace::Namespace;

use crate::output::print_json;
use crate::output::{errln, outln};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print what the pass would change, and change nothing (no report is written).
    #[arg(long, conflicts_with = "reports")]
    dry_run: bool,
    /// List the reports of earlier passes, newest last, instead of running one.
    #[arg(long)]
    reports: bool,
    /// Consolidate only this namespace (repeatable); default: every namespace of the store.
    #[arg(long = "namespace", value_name = "NAMESPACE", value_parser = parse_namespace)]
    namespaces: Vec<Namespace>,
    /// With a model reasoner: the most calls the pass makes to it (0: none) [default: 100].
    #[arg(long, value_name = "N")]
    model_calls: Option<usize>,
}

fn parse_namespace(value: &str) -> Result<Namespace, String> {
    Namespace::parse(value).map_err(|e| e.to_string())
}

pub(crate) async fn run(root: &Path, args: Args, json: bool) -> Result<()> {
    if args.reports {
        return list(root, json);
    }
    let opened = compose::open(root).await?;
    let options = compose::PassOptions {
        namespaces: (!args.namespaces.is_empty()).then_some(args.namespaces),
        dry_run: args.dry_run,
        min_new: None,
        model_calls: args.model_calls,
    };
    let pass = compose::consolidation_pass(&opened.arbor, root, options).await?.context("the pass did not run")?;
    let (run, report) = (pass.run, pass.report);
    if args.model_calls.is_some() && run.model.is_none() {
        errln!("note: --model-calls has no effect: no model reasoner is configured (the rules decide alone)");
    }
    let read: usize = run.namespaces.iter().map(|n| n.read).sum();
    if json {
        let mut value = serde_json::to_value(&run)?;
        value["report"] = serde_json::json!(report.as_ref().map(|p| p.display().to_string()));
        return print_json(&value);
    }
    if args.dry_run {
        outln!("{}", run.to_markdown());
        return Ok(());
    }
    match report {
        Some(path) => outln!(
            "{} applied, {} left for review; {read} memories read. Report: {}",
            plural(run.applied(), "change"),
            run.left_for_review(),
            path.display()
        ),
        None => outln!("nothing was written since the last pass; nothing to consolidate"),
    }
    Ok(())
}

fn list(root: &Path, json: bool) -> Result<()> {
    let reports = compose::list_reports(root)?;
    if json {
        let paths: Vec<String> = reports.iter().map(|r| r.path.display().to_string()).collect();
        return print_json(&paths);
    }
    if reports.is_empty() {
        outln!("no consolidation reports yet (run `arbor consolidate`)");
    }
    for report in reports {
        let text =
            std::fs::read_to_string(&report.path).with_context(|| format!("reading {}", report.path.display()))?;
        // The summary line: the first after the title.
        let summary = text.lines().skip_while(|l| !l.starts_with("# ")).nth(2).unwrap_or_default();
        outln!("{}  {summary}", report.path.display());
    }
    Ok(())
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
