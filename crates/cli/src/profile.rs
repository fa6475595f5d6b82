//! `arbor profile [SUBJECT]`: what the store believes now, subject by subject — each
//! attribute's current value, when and where it was said, and what it replaced — read from the
//! claims the current memories were written with.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use arbor_compose as compose;
use arbor_domain::claims::profile::{Profile, ProfileFact, ProfileValue};
use arbor_domain::han::mostly_han;

use crate::output::print_json;
use crate::scope::ScopeArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Whom or what to profile: a person's or a thing's name, or `me` for the speaker; every
    /// subject when left out.
    subject: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub(crate) async fn run(root: &Path, args: Args, json: bool) -> Result<()> {
    let opened = compose::open_for_reading(root).await?;
    let chain = opened.arbor.read_chain(&args.scope.context()?)?;
    let profile = opened.arbor.profile(&chain, args.subject.as_deref()).await?;
    if json {
        return print_json(&profile);
    }
    crate::output::print_raw(&render(&profile, args.subject.as_deref()));
    Ok(())
}

/// The profile as text: a block per subject, a line per current value, and an indented line
/// for each value it replaced.
pub(crate) fn render(profile: &Profile, asked: Option<&str>) -> String {
    let mut out = String::new();
    if profile.subjects.is_empty() {
        let about = asked.map(|s| format!(" about {s}")).unwrap_or_default();
        let _ = writeln!(out, "nothing known{about} yet: no current memory in scope says an attribute of it");
        return out;
    }
    for (n, subject) in profile.subjects.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", subject.subject.name);
        for fact in &subject.facts {
            render_fact(&mut out, fact);
        }
    }
    out
}

fn render_fact(out: &mut String, fact: &ProfileFact) {
    let chinese = fact
        .current
        .iter()
        .map(|v| &v.value)
        .chain(fact.history.iter().filter_map(|h| h.value.as_ref()))
        .any(|v| mostly_han(v));
    let name = if chinese { &fact.name_zh } else { &fact.name };
    match fact.current.as_slice() {
        [] => {
            let _ = writeln!(out, "  {name}: nothing current");
        }
        [only] => {
            let _ = writeln!(out, "  {name}: {}", said(only));
        }
        values => {
            let _ = writeln!(out, "  {name}:");
            for value in values {
                let _ = writeln!(out, "    {}", said(value));
            }
        }
    }
    for change in &fact.history {
        let value = change.value.as_deref().map_or_else(|| "(no value named)".to_owned(), |v| format!("\"{v}\""));
        let how = if change.rule == "ended" { "ended" } else { "replaced" };
        if change.leaf == change.changed_by {
            // An ending said of a value no memory in scope held.
            let _ = writeln!(
                out,
                "    {how}: {value} · said {} · {}",
                change.changed_at.strftime("%Y-%m-%d"),
                change.changed_by
            );
            continue;
        }
        let _ = writeln!(
            out,
            "    was {value} ({}, {}) · {how} {} by {}",
            change.said_at.strftime("%Y-%m-%d"),
            change.leaf,
            change.changed_at.strftime("%Y-%m-%d"),
            change.changed_by
        );
    }
}

fn said(value: &ProfileValue) -> String {
    let since = value.since.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default();
    let doubt = value.possibly_outdated_by.as_ref().map(|by| format!(" · may be outdated by {by}")).unwrap_or_default();
    format!(
        "{}{since} · said {} · {} · {}{doubt}",
        value.value,
        value.said_at.strftime("%Y-%m-%d"),
        value.source,
        value.leaf
    )
}
