//! Human-readable rendering of results. JSON output uses the types' own serialization; this
//! is the text a person reads in a terminal.

use std::fmt::Write;

use arbor_app::{EvidenceItem, IngestOutcome, IngestReport, RetrievalPack, RetrieveMode};
use arbor_domain::text::truncate_chars;
use arbor_domain::visibility::NodeKind;

pub(crate) fn pack(pack: &RetrievalPack) -> String {
    let mut out = String::new();
    let mode = match pack.intent.mode {
        RetrieveMode::BroadSummary => "broad summary",
        RetrieveMode::ExactEvidence => "exact evidence",
        RetrieveMode::Auto => "auto",
    };
    let _ = writeln!(out, "Query:      {}", pack.query);
    let _ = writeln!(out, "Intent:     {mode} — {}", pack.intent.reason);
    let _ = writeln!(out, "Read chain: {}", pack.coverage.namespaces.join(" -> "));
    if let Some(as_of) = pack.as_of {
        let _ = writeln!(out, "As of:      {as_of}");
    }
    let _ = writeln!(
        out,
        "Evidence:   {} selected of {} candidates ({} chars, {} bodies read and verified)",
        pack.coverage.selected, pack.coverage.candidates, pack.coverage.chars, pack.coverage.bodies_read
    );
    for (i, item) in pack.evidence.iter().enumerate() {
        evidence(&mut out, i + 1, item);
    }
    section(&mut out, "Known facts", &pack.known_facts);
    section(&mut out, "Constraints", &pack.constraints);
    section(&mut out, "Recent", &pack.recent);
    section(&mut out, "Gaps", &pack.gaps);
    if let Some(next) = &pack.recommended_next_source {
        let _ = writeln!(out, "\nNext:       {next}");
    }
    out
}

fn evidence(out: &mut String, n: usize, item: &EvidenceItem) {
    let label = match (item.node, item.kind) {
        (NodeKind::Summary, _) => "summary".to_owned(),
        (NodeKind::Leaf, Some(kind)) => kind.to_string(),
        (NodeKind::Leaf, None) => "leaf".to_owned(),
    };
    let _ = writeln!(out, "\n {n:>2}. [{label}] {}", truncate_chars(&item.text.replace('\n', " "), 160));
    let mut meta = vec![item.namespace.to_string(), item.tree_id.to_string(), item.node_id.to_string()];
    if let Some(version) = item.version {
        meta.push(format!("v{version}"));
    }
    meta.push(format!("observed {}", item.observed_at.strftime("%Y-%m-%d")));
    if let Some(source) = &item.source {
        meta.push(source.clone());
    }
    let _ = writeln!(out, "     {}", meta.join(" · "));
    let _ = writeln!(out, "     why: {}", item.why);
    if let Some(old) = &item.supersedes {
        let _ = writeln!(out, "     supersedes {old}");
    }
    if let Some(winner) = &item.overridden_by {
        let _ = writeln!(out, "     overridden by {winner}");
    }
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for line in lines {
        let _ = writeln!(out, "  - {line}");
    }
}

/// One line per chunk of an ingest report.
pub(crate) fn ingest_line(report: &IngestReport) -> Vec<String> {
    report
        .chunks
        .iter()
        .map(|chunk| {
            let tree = chunk.tree_id.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".to_owned());
            let last = match &chunk.outcome {
                IngestOutcome::NotAdmitted { reason } => reason.clone(),
                outcome => outcome.leaf_id().map(ToString::to_string).unwrap_or_default(),
            };
            format!("{:<15} {:<34} {:<16} {}", chunk.outcome.label(), tree, chunk.entity_decision.label(), last)
        })
        .collect()
}
