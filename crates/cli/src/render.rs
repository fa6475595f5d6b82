//! Human-readable rendering of results. JSON output uses the types' own serialization; this
//! is the text a person reads in a terminal.

use std::fmt::Write;

use arbor_app::{
    EvidenceItem, FsckReport, IngestOutcome, IngestReport, OutlineNode, RetrievalExplanation, RetrievalPack,
    RetrieveMode, Stats, TreeOutline, TreeOverview,
};
use arbor_domain::text::truncate_chars;
use arbor_domain::visibility::NodeKind;
use arbor_ports::CandidateOutcome;

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
    for line in pack.understood.lines() {
        let _ = writeln!(out, "Understood: {line}");
    }
    if let Some(id) = &pack.retrieval_id {
        let _ = writeln!(out, "Recorded:   {id} (arbor show-retrieval {id})");
    }
    if !pack.profile.is_empty() {
        let _ = writeln!(out, "Believed now:");
        for line in &pack.profile {
            let _ = writeln!(out, "  - {line}");
        }
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

/// A recorded retrieval: the question, how it was read, the versions that shaped it, and every
/// candidate with its channels and fate.
pub(crate) fn retrieval(explanation: &RetrievalExplanation) -> String {
    let s = &explanation.snapshot;
    let mut out = String::new();
    let _ = writeln!(out, "Retrieval:  {} at {} by {}", s.id, s.at, s.actor);
    let _ = writeln!(out, "Query:      {}", s.query);
    let _ = writeln!(out, "Intent:     {} — {}", s.intent.replace('_', " "), s.intent_reason);
    let _ = writeln!(out, "Read chain: {}", s.read_chain.join(" -> "));
    if let Some(as_of) = s.as_of {
        let _ = writeln!(out, "As of:      {as_of}");
    }
    for line in &s.understood {
        let _ = writeln!(out, "Understood: {line}");
    }
    let v = &s.versions;
    let _ = writeln!(
        out,
        "Versions:   {} · embedders {} · reasoner {} · {}",
        v.retriever,
        v.embedders.join(", "),
        v.reasoner,
        v.policy
    );
    let count = |outcome| s.considered.iter().filter(|c| c.outcome == outcome).count();
    let _ = writeln!(
        out,
        "Considered: {} candidates: {} selected, {} skipped, {} dropped by the store check, {} unread",
        s.considered.len(),
        count(CandidateOutcome::Selected),
        count(CandidateOutcome::Skipped),
        count(CandidateOutcome::Dropped),
        count(CandidateOutcome::Unread)
    );
    for (i, c) in s.considered.iter().enumerate() {
        let fate = match c.outcome {
            CandidateOutcome::Selected => "selected",
            CandidateOutcome::Skipped => "skipped",
            CandidateOutcome::Dropped => "dropped",
            CandidateOutcome::Unread => "unread",
        };
        let channels: Vec<String> = c.channels.iter().map(|(name, rank)| format!("{name} #{rank}")).collect();
        let title =
            explanation.titles.get(&c.node.to_string()).map(|t| truncate_chars(t, 80)).unwrap_or_else(|| "-".into());
        let _ = writeln!(out, "\n {:>3}. {fate:<8} {} {:.4}  {title}", i + 1, c.node, c.fused);
        // A selected candidate's reason already names its channels.
        match c.outcome {
            CandidateOutcome::Selected => _ = writeln!(out, "      {}", c.reason),
            _ => _ = writeln!(out, "      {} — {}", channels.join(", "), c.reason),
        }
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
    if let Some(newer) = &item.possibly_outdated_by {
        let _ = writeln!(out, "     possibly outdated by {newer}");
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
pub(crate) fn ingest_lines(report: &IngestReport) -> Vec<String> {
    let mut lines = Vec::new();
    for chunk in &report.chunks {
        let tree = chunk.tree_id.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".to_owned());
        let last = match &chunk.outcome {
            IngestOutcome::NotAdmitted { refusal } => refusal.to_string(),
            outcome => outcome.leaf_id().map(ToString::to_string).unwrap_or_default(),
        };
        lines.push(format!(
            "{:<15} {:<34} {:<16} {}",
            chunk.outcome.label(),
            tree,
            chunk.entity_decision.label(),
            last
        ));
        // What it replaced (for the person to hear) and what it only may have replaced.
        for replaced in &chunk.replaced {
            let name = arbor_domain::claims::catalogue::english_name(&replaced.attribute);
            let values = match (&replaced.was, &replaced.now) {
                (Some(was), Some(now)) => format!(": \"{was}\" -> \"{now}\""),
                (Some(was), None) => format!(": \"{was}\" ended"),
                _ => String::new(),
            };
            lines.push(format!(
                "  replaced {} ({name}{values}; undo: arbor review restore {})",
                replaced.leaf_id, replaced.leaf_id
            ));
        }
        for doubted in &chunk.doubted {
            let name = arbor_domain::claims::catalogue::english_name(&doubted.attribute);
            lines.push(format!(
                "  may replace {} ({name}; {}), both kept",
                doubted.leaf_id,
                doubted.reason.replace('_', " ")
            ));
        }
    }
    lines
}

pub(crate) fn trees(trees: &[TreeOverview]) -> String {
    let mut out = String::new();
    if trees.is_empty() {
        out.push_str("no trees in this scope yet\n");
        return out;
    }
    let _ =
        writeln!(out, "{:<26} {:<36} {:>7} {:>7} {:>9}  root", "namespace", "tree", "leaves", "active", "summaries");
    for t in trees {
        let _ = writeln!(
            out,
            "{:<26} {:<36} {:>7} {:>7} {:>9}  {}",
            t.tree.namespace.to_string(),
            t.tree.tree_id.to_string(),
            t.leaves,
            t.active_leaves,
            t.summaries,
            t.root_title.as_deref().map(|r| truncate_chars(r, 60)).unwrap_or_else(|| "-".to_owned())
        );
    }
    out
}

pub(crate) fn outline(outline: &TreeOutline) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} / {} — {}", outline.tree.namespace, outline.tree.tree_id, outline.tree.title);
    if outline.nodes.is_empty() {
        out.push_str("  (empty)\n");
    }
    for node in &outline.nodes {
        outline_node(&mut out, node, 1);
    }
    out
}

fn outline_node(out: &mut String, node: &OutlineNode, depth: usize) {
    let status =
        if node.status == "active" || node.status == "current" { String::new() } else { format!(" [{}]", node.status) };
    let _ = writeln!(
        out,
        "{}{} {} {}{}",
        "  ".repeat(depth),
        node.level,
        node.id,
        truncate_chars(&node.title.replace('\n', " "), 80),
        status
    );
    for child in &node.children {
        outline_node(out, child, depth + 1);
    }
    if node.hidden_children > 0 {
        let _ = writeln!(out, "{}… {} more (use --depth)", "  ".repeat(depth + 1), node.hidden_children);
    }
}

/// What `fsck --adopt-edits` did with each edited document.
pub(crate) fn adoptions(adoptions: &[arbor_app::Adoption]) -> String {
    use arbor_app::Adoption;
    let mut out = String::new();
    if adoptions.is_empty() {
        let _ = writeln!(out, "no memory document was edited by hand");
    }
    for adoption in adoptions {
        let _ = match adoption {
            Adoption::Adopted { replaced, leaf_id, version, path, history_exact } => writeln!(
                out,
                "adopted {path}: {leaf_id} is version {version}; {replaced} is kept as history{}",
                if *history_exact { "" } else { " (its first 280 characters: the edit overwrote the rest)" }
            ),
            Adoption::Suggested { replaces, leaf_id, path } => {
                writeln!(out, "suggested {path}: {leaf_id} waits for the person to replace {replaces}")
            }
            Adoption::HistoryRestored { leaf_id, path } => {
                writeln!(out, "restored {path}: {leaf_id}'s document, after an adoption cut short")
            }
            Adoption::NotAdopted { leaf_id, path, reason } => writeln!(out, "not adopted {path} ({leaf_id}): {reason}"),
        };
    }
    out
}

pub(crate) fn fsck(report: &FsckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "checked {} namespaces, {} trees, {} leaves, {} summaries, {} body files, {} index documents",
        report.namespaces, report.trees, report.leaves, report.summaries, report.bodies, report.index_documents
    );
    for finding in &report.findings {
        let kind =
            serde_json::to_value(finding.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let repaired = if finding.repaired { " (repaired)" } else { "" };
        let _ = writeln!(out, "  {kind}: {}: {}{repaired}", finding.subject, finding.detail);
        if let Some(remedy) = &finding.remedy {
            let _ = writeln!(out, "      to fix: {remedy}");
        }
    }
    let _ = writeln!(
        out,
        "{}",
        match (report.findings.is_empty(), report.is_clean()) {
            (true, _) => "clean",
            (false, true) => "clean after repairs",
            (false, false) if report.is_damaged() => {
                "NOT clean: the database itself is damaged; writes are refused until it is restored or rebuilt"
            }
            (false, false) => "NOT clean: `arbor fsck --repair` fixes what can be fixed; the rest says how above",
        }
    );
    out
}

pub(crate) fn stats(root: &std::path::Path, stats: &Stats) -> String {
    let mut out = String::new();
    let c = &stats.counts;
    let _ = writeln!(out, "store:      {} ({} + {} index)", root.display(), stats.store_backend, stats.index_backend);
    let _ = writeln!(out, "namespaces: {}   trees: {}   entities: {}", c.namespaces, c.trees, c.entities);
    let leaves: Vec<String> = c.leaves_by_status.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let _ = writeln!(out, "leaves:     {}", if leaves.is_empty() { "none".to_owned() } else { leaves.join(", ") });
    let _ = writeln!(
        out,
        "summaries:  {} current, {} stale, {} purged, {} retired",
        c.summaries_current, c.summaries_stale, c.summaries_purged, c.summaries_retired
    );
    let _ = writeln!(out, "bodies:     {} files   index: {} documents", stats.bodies, stats.index_documents);
    let _ = writeln!(
        out,
        "jobs:       {} pending, {} dead   audit events: {}",
        c.jobs_pending, c.jobs_dead, c.audit_events
    );
    out
}

/// `arbor health`: one line per namespace and tree, the namespace's warnings under it, then
/// each tree's.
pub(crate) fn health(report: &arbor_app::HealthReport) -> String {
    let mut out = String::new();
    let warnings = report.warning_count();
    let plural = if warnings == 1 { "" } else { "s" };
    let _ = writeln!(out, "health at {:.0}: {warnings} warning{plural}", report.at);
    if report.namespaces.is_empty() {
        let _ = writeln!(out, "the store holds no memories");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<44} {:>7} {:>6} {:>8} {:>9} {:>15} {:>9}",
        "namespace / tree", "active", "dup", "history", "stale sum", "waiting", "bytes/mem"
    );
    let line = |out: &mut String, name: &str, figures: &arbor_domain::health::Figures| {
        let waiting = match figures.oldest_candidate_days(report.at) {
            Some(days) => format!("{} ({days} d)", figures.candidates),
            None => "0".to_owned(),
        };
        let _ = writeln!(
            out,
            "{:<44} {:>7} {:>5.0}% {:>7.0}% {:>9} {:>15} {:>9}",
            truncate_chars(name, 44),
            figures.active,
            figures.duplicate_rate() * 100.0,
            figures.superseded_share() * 100.0,
            format!("{}/{}", figures.summaries_awaiting_reseal, figures.summaries),
            waiting,
            figures.bytes_per_active(),
        );
    };
    for namespace in &report.namespaces {
        line(&mut out, &namespace.namespace.to_string(), &namespace.figures);
        for warning in &namespace.warnings {
            let _ = writeln!(out, "  ! {}", warning.advice());
        }
        for tree in &namespace.trees {
            line(&mut out, &format!("  {}", tree.tree_id), &tree.figures);
            for warning in &tree.warnings {
                let _ = writeln!(out, "    ! {}", warning.advice());
            }
        }
    }
    for (what, why) in &report.unreadable {
        let _ = writeln!(out, "not read: {what}: {why}");
    }
    out
}

/// `arbor daily`: the highlights, then every memory of the day by tree, oldest first in each.
pub(crate) fn daily(view: &arbor_app::DailyView) -> String {
    let mut out = String::new();
    let offset = arbor_domain::daily::offset_string(view.day.utc_offset);
    let count = view.memories.len();
    let more = if view.more { " (the newest; there are more)" } else { "" };
    let trees = if view.trees == 1 { "tree" } else { "trees" };
    if count == 0 {
        let _ = writeln!(out, "{} (UTC{offset}): nothing remembered that day", view.day.date);
        return out;
    }
    let _ = writeln!(out, "{} (UTC{offset}): {count} memories{more} in {} {trees}", view.day.date, view.trees);
    let time = |at: arbor_domain::time::Timestamp| {
        let local = view.day.utc_offset.to_datetime(at);
        format!("{:02}:{:02}", local.hour(), local.minute())
    };
    let _ = writeln!(out, "\nHighlights:");
    for &at in &view.highlights {
        let memory = &view.memories[at];
        let _ = writeln!(out, "  {}  [{}] {}", time(memory.observed_at), memory.kind, one_line(&memory.text));
    }
    let mut by_tree: Vec<&arbor_app::DayMemory> = view.memories.iter().collect();
    by_tree.sort_by(|a, b| {
        (&a.namespace, &a.tree_id, a.observed_at, &a.id).cmp(&(&b.namespace, &b.tree_id, b.observed_at, &b.id))
    });
    let mut current = None;
    for memory in by_tree {
        if current != Some((&memory.namespace, &memory.tree_id)) {
            current = Some((&memory.namespace, &memory.tree_id));
            let _ = writeln!(out, "\n{} ({})", memory.tree_id, memory.namespace);
        }
        let _ = writeln!(out, "  {}  {}  {}", time(memory.observed_at), memory.id, one_line(&memory.text));
    }
    out
}

/// A memory's words on one line of a listing.
fn one_line(text: &str) -> String {
    truncate_chars(&text.split_whitespace().collect::<Vec<_>>().join(" "), 160)
}
