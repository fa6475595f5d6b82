//! The project's own rules, checked by machine (`cargo xtask tidy`, and as a test under
//! `cargo test`):
//!
//! - every `.rs` file opens with a `//!` line saying what it is for;
//! - `arbor-domain`'s dependency tree holds nothing that does IO or async (read from
//!   `cargo metadata`, so a transitive dependency cannot sneak one in);
//! - the crate-level nevers ([`check_crate_boundaries`]): only `adapters-*` crates name database
//!   or model crates; only `compose` (and the bench, the tests and xtask) depends on an adapter;
//!   no adapter depends on another adapter or on anything above the ports; the app depends on
//!   no adapter and no product; only `server` names HTTP servers and MCP; only the binaries
//!   (`cli`, `bench`, `xtask`) name argument parsing; only `bench` turns on the floor searches;
//! - `.ci/run` runs exactly the test command the README gives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::sources::{code_only, collect_rs_files, inline_tests_at};

/// Crates that do IO or async, and may never appear in the domain's dependency tree. A name
/// ending in `-` matches every crate with that prefix.
const NOT_IN_DOMAIN: &[&str] = &[
    "tokio",
    "tokio-",
    "async-trait",
    "async-std",
    "futures-io",
    "mio",
    "sqlx",
    "sqlx-",
    "rusqlite",
    "libsqlite3-sys",
    "lancedb",
    "lance",
    "lance-",
    "arrow",
    "arrow-",
    "reqwest",
    "hyper",
    "hyper-",
    "axum",
    "tonic",
    "rmcp",
    "getrandom",
    "candle-",
    "tokenizers",
];

/// Database and model crates only the adapter crates may depend on directly.
const ADAPTER_ONLY: &[&str] = &[
    "sqlx",
    "rusqlite",
    "lancedb",
    "arrow",
    "arrow-array",
    "arrow-schema",
    "candle-core",
    "candle-nn",
    "candle-transformers",
    "tokenizers",
    "reqwest",
];

/// HTTP-server and MCP crates only `arbor-server` may depend on directly.
const SERVER_ONLY: &[&str] = &["axum", "hyper", "hyper-util", "http-body-util", "rmcp", "tower-http", "schemars"];

/// Argument parsing belongs to the binaries.
const BINARIES: &[&str] = &["arbor-cli", "arbor-bench", "xtask"];

/// The crates that may build on adapters: the composition root, the benchmark (which times an
/// adapter's floor searches), the cross-backend tests, and xtask (which installs models).
const MAY_NAME_ADAPTERS: &[&str] = &["arbor-compose", "arbor-bench", "arbor-tests", "xtask"];

/// The workspace crates above the ports, which neither the app nor an adapter may depend on.
const PRODUCTS: &[&str] = &["arbor-compose", "arbor-server", "arbor-eval", "arbor-cli", "arbor-bench"];

/// The crates whose feature [`FLOOR_FEATURE`] compiles unfiltered searches, and the one crate
/// allowed to enable it (a floor crate's own feature of that name may pass it on to another).
const FLOOR_CRATES: &[&str] = &["arbor-search", "arbor-adapters-sqlite"];
const FLOOR_FEATURE: &str = "bench";
const FLOOR_USER: &str = "arbor-bench";

/// The workspace this xtask was started in. `cargo run` sets `CARGO_MANIFEST_DIR` for the run
/// itself; that one wins over the directory baked in at compile time, because a target directory
/// shared between clones (as `.ci/run` shares one) can hand a clone an xtask built in another.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

pub(crate) fn run(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    problems.extend(check_headers(root)?);
    let metadata = cargo_metadata(root)?;
    problems.extend(check_domain_purity(&metadata)?);
    problems.extend(check_crate_boundaries(&metadata)?);
    problems.extend(check_ci_runs_readme_command(root)?);
    problems.extend(check_design_references(root)?);
    problems.extend(check_app_shape(root)?);
    problems.extend(check_adapter_status_literals(root)?);
    problems.extend(check_unsafe(root)?);
    problems.extend(check_file_lengths(root)?);
    problems.extend(crate::module_loops::check_module_loops(root)?);
    problems.extend(crate::routes::check_routes(root)?);
    if problems.is_empty() {
        println!("tidy: ok");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("tidy: {problem}");
    }
    bail!("{} tidy problem(s)", problems.len())
}

fn check_headers(root: &Path) -> Result<Vec<String>> {
    Ok(rust_sources(root)?
        .into_iter()
        .filter(|(_, text)| !text.starts_with("//!"))
        .map(|(shown, _)| format!("{shown} does not open with a `//!` line saying what it is for"))
        .collect())
}

/// Every Rust file of the workspace's own code: its crates, xtask and the cross-crate tests.
fn rust_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "tests"] {
        collect_rs_files(&root.join(dir), &mut files)?;
    }
    Ok(files)
}

/// Each of [`rust_files`] as problems name it (relative to `root`, `/`-separated), with its text.
fn rust_sources(root: &Path) -> Result<Vec<(String, String)>> {
    rust_files(root)?
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string().replace('\\', "/");
            Ok((shown, text))
        })
        .collect()
}

/// The one file allowed `unsafe`, and how many `unsafe` blocks it may hold: the mirror's int8
/// dot product calls its AVX2 build after detecting AVX2. The workspace lint is `deny`, which a
/// crate could lift with an `allow`; this keeps the exception to the one call it was made for.
const UNSAFE_ALLOWED: (&str, usize) = ("crates/search/src/vectors.rs", 1);

/// `unsafe` (as a keyword, outside comments and strings) and `allow(unsafe_code)` appear only
/// where [`UNSAFE_ALLOWED`] says, and no more often.
fn check_unsafe(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for (shown, text) in rust_sources(root)? {
        let code = code_only(&text);
        let keywords = unsafe_keywords(&code);
        let allowed = if shown == UNSAFE_ALLOWED.0 { UNSAFE_ALLOWED.1 } else { 0 };
        if keywords > allowed {
            problems.push(format!(
                "{shown} uses `unsafe` {keywords} time(s) where {allowed} is allowed (see UNSAFE_ALLOWED in tidy.rs)"
            ));
        }
        if code.matches("allow(unsafe_code)").count() > allowed.min(1) {
            problems.push(format!("{shown} allows `unsafe_code`, which only {} may", UNSAFE_ALLOWED.0));
        }
    }
    Ok(problems)
}

/// The longest a file of the workspace's own code may be, in lines, leaving out its tests (a
/// test file, or a file's `#[cfg(test)] mod tests` at its end): past this a file holds more
/// than one concern, and a newcomer cannot find their way in it.
const MAX_FILE_LINES: usize = 900;

/// No file's own code (tests left out) is longer than [`MAX_FILE_LINES`].
fn check_file_lengths(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for (shown, text) in rust_sources(root)? {
        if is_test_file(&shown) {
            continue;
        }
        let lines = lines_before_tests(&text);
        if lines > MAX_FILE_LINES {
            problems.push(format!(
                "{shown} is {lines} lines (tests left out); cut it into files of one concern (at most {MAX_FILE_LINES})"
            ));
        }
    }
    Ok(problems)
}

/// A file of tests: under a `tests` folder, a `tests.rs`, or a bench.
fn is_test_file(shown: &str) -> bool {
    let parts: Vec<&str> = shown.split('/').collect();
    let (name, folders) = parts.split_last().unwrap_or((&"", &[]));
    *name == "tests.rs" || folders.iter().any(|folder| matches!(*folder, "tests" | "benches"))
}

/// How many lines `text` has before the inline test module it ends with, if any.
fn lines_before_tests(text: &str) -> usize {
    let code = inline_tests_at(text).map_or(text, |at| &text[..at]);
    code.lines().count()
}

/// How many times `unsafe` appears as a keyword in `code` (comments and strings removed).
fn unsafe_keywords(code: &str) -> usize {
    code.match_indices("unsafe")
        .filter(|(at, _)| {
            let before = code[..*at].chars().next_back();
            let after = code[at + "unsafe".len()..].chars().next();
            let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !is_word(before) && !is_word(after)
        })
        .count()
}

/// Every design reference in the code and the docs — `[design §anchor]` in Rust, a link to
/// `docs/design.md#anchor` in markdown — names a heading of `docs/design.md`, and no reference
/// to a document outside the repository (`[001 §9]`, `SPEC §5`) is left.
fn check_design_references(root: &Path) -> Result<Vec<String>> {
    let design = std::fs::read_to_string(root.join("docs/design.md")).context("reading docs/design.md")?;
    let anchors = heading_anchors(&design);
    let mut files = rust_files(root)?;
    files.extend(["README.md", "ARCHITECTURE.md"].map(|name| root.join(name)));
    for entry in std::fs::read_dir(root.join("docs")).context("listing docs/")? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    // This file describes the forms it checks.
    files.retain(|file| !file.ends_with("xtask/src/tidy.rs"));
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        for (line_number, line) in text.lines().enumerate() {
            let at = format!("{shown}:{}", line_number + 1);
            for anchor in design_references(line) {
                if !anchors.contains(&anchor) {
                    problems.push(format!("{at} cites design §{anchor}, which docs/design.md has no heading for"));
                }
            }
            if let Some(old) = outside_reference(line) {
                problems.push(format!("{at} cites {old}, a document outside the repository; cite docs/design.md"));
            }
        }
    }
    Ok(problems)
}

/// The anchors markdown gives `text`'s headings: lower case, spaces as dashes, other
/// punctuation dropped.
fn heading_anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    text.lines()
        .filter(|line| {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            !in_code
        })
        .filter_map(|line| line.strip_prefix('#').map(|rest| rest.trim_start_matches('#').trim()))
        .map(|title| {
            title
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The anchors `line` cites: `[design §a]`, `[design §a, §b]`, `docs/design.md#a`.
fn design_references(line: &str) -> Vec<String> {
    let anchor_at = |rest: &str| {
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect::<String>()
    };
    let mut found = Vec::new();
    for (start, _) in line.match_indices("[design ") {
        let cited = &line[start + "[design ".len()..];
        let cited = &cited[..cited.find(']').unwrap_or(cited.len())];
        for part in cited.split(", ") {
            if let Some(rest) = part.strip_prefix('§') {
                found.push(anchor_at(rest));
            }
        }
    }
    for (start, _) in line.match_indices("docs/design.md#") {
        found.push(anchor_at(&line[start + "docs/design.md#".len()..]));
    }
    found
}

/// A citation of the seed documents or the spec (`[000 §7]`, `001 §19`, `SPEC §5`), which the
/// repository does not hold.
fn outside_reference(line: &str) -> Option<&str> {
    for (at, _) in line.match_indices(" §") {
        let before = line[..at].trim_end_matches(['[', '(']);
        let word_start = before.rfind(|c: char| !c.is_ascii_alphanumeric()).map_or(0, |i| i + 1);
        let word = &before[word_start..];
        if word == "SPEC" || (word.len() == 3 && word.bytes().all(|b| b.is_ascii_digit())) {
            return Some(&line[word_start..(at + " §".len() + 3).min(line.len())]);
        }
    }
    None
}

/// No adapter's query names a status or a node state by hand: the conditions come from
/// `arbor_ports::rows::status_sql` and `VisibilityFilter::visible_states`, written from the
/// domain's rules, so a rule changed there reaches every store.
fn check_adapter_status_literals(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for adapter in ["crates/adapters-sqlite/src", "crates/adapters-postgres/src", "crates/adapters-lance/src"] {
        let mut files = Vec::new();
        collect_rs_files(&root.join(adapter), &mut files)?;
        for file in files {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            if let Some(literal) = status_literal(&text) {
                let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
                problems.push(format!(
                    "{shown}: `{literal}…` names a status in a query; use arbor_ports::rows::status_sql or \
                     VisibilityFilter::visible_states"
                ));
            }
        }
    }
    Ok(problems)
}

/// The first status or state literal in a query of `text` (its test module and comment lines
/// aside), read with whitespace and case ignored so a condition split over lines is seen too.
fn status_literal(text: &str) -> Option<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    let compact: String = code
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .flat_map(|line| line.chars())
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    for column in ["status", "state"] {
        for operator in ["in('", "notin('", "='", "<>'", "!='", "=any(array['"] {
            let pattern = format!("{column}{operator}");
            if let Some(at) = compact.find(&pattern) {
                return Some(compact[at..(at + pattern.len() + 8).min(compact.len())].to_owned());
            }
        }
    }
    None
}

/// The longest a function of `crates/app` may be, in lines: a use case reads as a short list
/// of named steps, each of which fits on a screen.
const MAX_APP_FUNCTION_LINES: usize = 80;

/// `crates/app` keeps the shape its map promises: no function longer than
/// [`MAX_APP_FUNCTION_LINES`], and no retry loop but `Arbor::replanning` (only `write/mod.rs`
/// reads `max_write_attempts`).
fn check_app_shape(root: &Path) -> Result<Vec<String>> {
    let app = root.join("crates/app/src");
    let mut files = Vec::new();
    collect_rs_files(&app, &mut files)?;
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        for (name, line, length) in function_lengths(&text) {
            if length > MAX_APP_FUNCTION_LINES {
                problems.push(format!(
                    "{shown}:{line}: `{name}` is {length} lines; split it into named steps (at most {MAX_APP_FUNCTION_LINES})"
                ));
            }
        }
        for (line, set) in record_overrides(&text) {
            problems.push(format!(
                "{shown}:{line}: sets `{set}` by hand in a struct update; a rule of the domain says what a new \
                 version's status and known span are (`next_version`, `waiting_for_a_person`, `as_earlier_history`, …)"
            ));
        }
        let own_loop = !file.ends_with("write/mod.rs") && !file.ends_with("app/src/lib.rs");
        if own_loop && text.contains("max_write_attempts") {
            problems.push(format!("{shown} retries a write itself; go through `Arbor::replanning`"));
        }
    }
    Ok(problems)
}

/// Each place in `text` that sets a record's status or known span to a fixed value — in a
/// `LeafRecord { … }` or `Approval { … }` struct update, or by assignment (`record.status =
/// LeafStatus::…`): its line and what it sets. Such a place restates a rule of the domain at a
/// call site (a record built whole, with no `..`, is a new record and is left).
fn record_overrides(text: &str) -> Vec<(usize, String)> {
    let code = code_only(text);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for opening in ["LeafRecord {", "Approval {"] {
        for (start, _) in code.match_indices(opening) {
            // A return type (`-> LeafRecord {`) opens a function body, not a literal.
            if code[..start].trim_end().ends_with("->") {
                continue;
            }
            let body_start = start + opening.len() - 1;
            let mut depth = 0usize;
            let mut end = code.len();
            for (offset, c) in code[body_start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = body_start + offset;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let literal = &code[body_start..end];
            let is_update = literal.contains("..") || opening == "Approval {";
            for set in ["status: LeafStatus::", "known: KnownSpan::"] {
                if is_update && literal.contains(set) {
                    found.push((line_of(start), set.trim_end_matches("::").to_owned()));
                }
            }
        }
    }
    for set in [".status = LeafStatus::", ".known = KnownSpan::"] {
        for (at, _) in code.match_indices(set) {
            found.push((line_of(at), set.trim_start_matches('.').trim_end_matches("::").to_owned()));
        }
    }
    found.sort();
    found
}

/// Every function in `text` with a body: its name, the line it starts on and how many lines it
/// spans. Braces in comments, strings and character literals are not counted.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let mut found = Vec::new();
    for (start, _) in code.match_indices("fn ") {
        if start > 0 && code[..start].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[start + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let mut depth = 0usize;
        let mut end = None;
        for (offset, c) in code[start..].char_indices() {
            match c {
                ';' if depth == 0 => break,
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(start + offset);
                        break;
                    }
                }
                _ => {}
            }
        }
        if let Some(end) = end {
            let first = code[..start].matches('\n').count() + 1;
            let last = code[..end].matches('\n').count() + 1;
            found.push((name, first, last - first + 1));
        }
    }
    found
}

fn cargo_metadata(root: &Path) -> Result<Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    serde_json::from_slice(&output.stdout).context("parsing cargo metadata")
}

fn forbidden_in_domain(name: &str) -> bool {
    NOT_IN_DOMAIN.iter().any(|rule| match rule.strip_suffix('-') {
        Some(prefix) => name.starts_with(&format!("{prefix}-")),
        None => name == *rule,
    })
}

/// Walks the resolved graph from `arbor-domain` along normal (non-dev, non-build) edges.
fn check_domain_purity(metadata: &Value) -> Result<Vec<String>> {
    let packages: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .context("metadata has packages")?
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .context("metadata has a resolve graph")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let domain = packages
        .iter()
        .find(|(_, name)| **name == "arbor-domain")
        .map(|(id, _)| *id)
        .context("arbor-domain is in the workspace")?;
    let mut seen = BTreeSet::new();
    let mut stack = vec![(domain, vec!["arbor-domain".to_owned()])];
    let mut problems = Vec::new();
    while let Some((id, path)) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(node) = nodes.get(id) else { continue };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"].as_array().into_iter().flatten().any(|k| k["kind"].is_null());
            let Some(dep_id) = dep["pkg"].as_str() else { continue };
            if !normal {
                continue;
            }
            let name = packages.get(dep_id).copied().unwrap_or(dep_id);
            let mut dep_path = path.clone();
            dep_path.push(name.to_owned());
            if forbidden_in_domain(name) {
                problems.push(format!(
                    "arbor-domain must stay pure, but its dependency tree holds {name} ({})",
                    dep_path.join(" -> ")
                ));
            }
            stack.push((dep_id, dep_path));
        }
    }
    Ok(problems)
}

/// The crate-level nevers, read from each workspace crate's normal (non-dev) dependencies and
/// its feature table.
fn check_crate_boundaries(metadata: &Value) -> Result<Vec<String>> {
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .context("workspace members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut problems = Vec::new();
    for package in metadata["packages"].as_array().context("packages")? {
        let (Some(id), Some(name)) = (package["id"].as_str(), package["name"].as_str()) else { continue };
        if !members.contains(id) {
            continue;
        }
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let features: Vec<&str> =
                dep["features"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            problems.extend(dependency_problem(name, dep_name, &features));
        }
        for (feature, enables) in package["features"].as_object().into_iter().flatten() {
            let enables: Vec<&str> = enables.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            problems.extend(feature_problem(name, feature, &enables));
        }
    }
    Ok(problems)
}

/// What is wrong with workspace crate `name` having a feature that turns on `enables`: only
/// the bench may turn on the adapter's floor searches (`dep/feature` or `dep?/feature`).
fn feature_problem(name: &str, feature: &str, enables: &[&str]) -> Option<String> {
    let floor = enables.iter().find_map(|e| {
        e.split_once('/')
            .map(|(dep, f)| (dep.trim_end_matches('?'), f))
            .filter(|(dep, f)| FLOOR_CRATES.contains(dep) && *f == FLOOR_FEATURE)
    });
    let passed_on = FLOOR_CRATES.contains(&name) && feature == FLOOR_FEATURE;
    let (dep, _) = floor?;
    (name != FLOOR_USER && !passed_on).then(|| {
        format!(
            "{name}'s feature `{feature}` enables {dep}/{FLOOR_FEATURE}; only {FLOOR_USER} searches outside the filter"
        )
    })
}

/// What is wrong with workspace crate `name` depending on `dep` (with `features` turned on).
fn dependency_problem(name: &str, dep: &str, features: &[&str]) -> Option<String> {
    let is_adapter = |crate_name: &str| crate_name.starts_with("arbor-adapters-");
    if ADAPTER_ONLY.contains(&dep) && !is_adapter(name) {
        return Some(format!("{name} depends on {dep}; only adapters-* crates may name database and model crates"));
    }
    if SERVER_ONLY.contains(&dep) && name != "arbor-server" {
        return Some(format!("{name} depends on {dep}; only the server crate knows HTTP servers and MCP"));
    }
    if dep == "clap" && !BINARIES.contains(&name) {
        return Some(format!("{name} depends on clap; only the binaries ({}) parse arguments", BINARIES.join(", ")));
    }
    if is_adapter(dep) && is_adapter(name) {
        return Some(format!("{name} depends on {dep}; no adapter builds on another"));
    }
    if is_adapter(dep) && !MAY_NAME_ADAPTERS.contains(&name) {
        return Some(format!(
            "{name} depends on {dep}; adapters are chosen in the composition root (arbor-compose) alone"
        ));
    }
    if (is_adapter(name) || name == "arbor-app") && (dep == "arbor-app" || PRODUCTS.contains(&dep)) {
        return Some(format!(
            "{name} depends on {dep}; it may build on the domain, the ports and the search engine only"
        ));
    }
    if name == "arbor-server" && PRODUCTS.contains(&dep) {
        return Some(format!(
            "{name} depends on {dep}; a server is handed an opened store and builds on the app alone"
        ));
    }
    if FLOOR_CRATES.contains(&dep) && features.contains(&FLOOR_FEATURE) && name != FLOOR_USER {
        return Some(format!(
            "{name} enables {dep}'s `{FLOOR_FEATURE}` feature; only {FLOOR_USER} searches outside the filter"
        ));
    }
    None
}

#[cfg(test)]
mod boundary_tests {
    use super::{dependency_problem, feature_problem};

    /// Each never, broken once, is reported; the wiring as it stands is not.
    #[test]
    fn every_crate_never_is_caught() {
        for (name, dep, features) in [
            ("arbor-app", "arbor-adapters-sqlite", &[][..]),
            ("arbor-server", "arbor-compose", &[]),
            ("arbor-server", "arbor-adapters-postgres", &[]),
            ("arbor-cli", "arbor-adapters-sqlite", &[]),
            ("arbor-adapters-lance", "arbor-adapters-sqlite", &[]),
            ("arbor-adapters-sqlite", "arbor-app", &[]),
            ("arbor-cli", "axum", &[]),
            ("arbor-compose", "clap", &[]),
            ("arbor-app", "rusqlite", &[]),
            ("arbor-compose", "arbor-adapters-sqlite", &["bench"]),
            ("arbor-adapters-postgres", "arbor-search", &["bench"]),
        ] {
            assert!(dependency_problem(name, dep, features).is_some(), "{name} -> {dep} {features:?}");
        }
        for (name, dep, features) in [
            ("arbor-compose", "arbor-adapters-sqlite", &[][..]),
            ("arbor-bench", "arbor-adapters-sqlite", &["bench"]),
            ("arbor-server", "axum", &[]),
            ("arbor-cli", "clap", &[]),
            ("arbor-cli", "arbor-server", &[]),
            ("arbor-adapters-sqlite", "rusqlite", &[]),
            ("arbor-adapters-postgres", "arbor-search", &[]),
        ] {
            assert_eq!(dependency_problem(name, dep, features), None, "{name} -> {dep}");
        }
        assert!(feature_problem("arbor-cli", "fast", &["arbor-adapters-sqlite/bench"]).is_some());
        assert!(feature_problem("arbor-compose", "x", &["arbor-adapters-sqlite?/bench"]).is_some());
        assert!(feature_problem("arbor-app", "bench", &["arbor-search/bench"]).is_some());
        assert!(feature_problem("arbor-adapters-sqlite", "fast", &["arbor-search/bench"]).is_some());
        assert_eq!(feature_problem("arbor-adapters-sqlite", "bench", &["arbor-search/bench"]), None);
        assert_eq!(feature_problem("arbor-bench", "default", &["arbor-adapters-sqlite/bench"]), None);
        assert_eq!(feature_problem("arbor-cli", "lance", &["arbor-compose/lance"]), None);
    }

    /// Status literals are found however a query is laid out; the generated conditions and
    /// test modules are not flagged.
    #[test]
    fn status_literals_are_found_however_written() {
        use super::status_literal;
        for query in [
            "\"SELECT 1 FROM leaves WHERE status = 'active'\"",
            "\"... AND STATUS IN ('stale', 'purged')\"",
            "\"... AND status NOT IN\n    ('tombstone')\"",
            "\"... state='current'\"",
        ] {
            assert!(status_literal(query).is_some(), "{query}");
        }
        for clean in [
            "format!(\"... AND {}\", status_sql::leaves_unless(LeafStatus::has_content))",
            "// status = 'active' in a comment",
            "fn f() {}\n#[cfg(test)]\nmod tests { const Q: &str = \"status = 'active'\"; }",
        ] {
            assert_eq!(status_literal(clean), None, "{clean}");
        }
    }
}

/// The README marks its test command with `<!-- test-command -->` followed by a code block;
/// `.ci/run` must run that exact command.
fn check_ci_runs_readme_command(root: &Path) -> Result<Vec<String>> {
    let readme = std::fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let Some(command) = readme_test_command(&readme) else {
        return Ok(vec!["README.md has no `<!-- test-command -->` block naming the test command".to_owned()]);
    };
    let ci = std::fs::read_to_string(root.join(".ci/run")).context("reading .ci/run")?;
    if ci.lines().any(|line| line.trim() == command) {
        Ok(Vec::new())
    } else {
        Ok(vec![format!(".ci/run does not run the README's test command `{command}` on a line of its own")])
    }
}

fn readme_test_command(readme: &str) -> Option<String> {
    let after = readme.split_once("<!-- test-command -->")?.1;
    let block = after.split_once("```")?.1;
    let body = block.split_once('\n')?.1;
    body.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy() {
        run(&workspace_root()).expect("tidy finds no problems");
    }

    #[test]
    fn unsafe_is_counted_as_a_keyword_only() {
        assert_eq!(unsafe_keywords(&code_only("let x = unsafe { f() };")), 1);
        assert_eq!(unsafe_keywords(&code_only("#![forbid(unsafe_code)] // unsafe here\nlet s = \"unsafe\";")), 0);
        assert_eq!(unsafe_keywords(&code_only("unsafe fn a() {}\nunsafe impl Send for X {}")), 2);
    }

    #[test]
    fn forbidden_names_match_exactly_or_by_prefix() {
        assert!(forbidden_in_domain("tokio"));
        assert!(forbidden_in_domain("tokio-macros"));
        assert!(forbidden_in_domain("arrow-array"));
        assert!(forbidden_in_domain("candle-core"));
        assert!(!forbidden_in_domain("lancer"), "a prefix rule needs its dash");
        assert!(!forbidden_in_domain("regex"));
    }

    #[test]
    fn design_references_are_read_and_outside_ones_found() {
        assert_eq!(design_references("x [design §write-path] y"), ["write-path"]);
        assert_eq!(design_references("[design §experiments, §lifecycle]: z"), ["experiments", "lifecycle"]);
        assert_eq!(design_references("see [here](docs/design.md#read-chains)."), ["read-chains"]);
        assert_eq!(
            heading_anchors("# Title\n## Read chains\n```sh\n# not a heading\n```\n### Filter first\ntext"),
            ["title", "read-chains", "filter-first"]
        );
        assert_eq!(design_references("[design §sealing2]"), ["sealing2"], "a typo is not cut back to a real anchor");
        assert!(outside_reference("/// the upsert [000 §7 step 2]").is_some());
        assert!(outside_reference("checklist (001 §19)").is_some());
        assert!(outside_reference("retrieval of SPEC §5").is_some());
        assert!(outside_reference("[design §supersession]").is_none());
    }

    #[test]
    fn functions_are_measured_with_their_bodies_only() {
        let text = "/// fn not_this() {\nfn short() {\n    let s = \"}{\";\n    let c = '}';\n}\n\nfn decl();\n\nasync fn longer<'a>(x: &'a str) -> bool {\n    if x.is_empty() {\n        r#\"}\"#.is_empty()\n    } else {\n        '\\u{7d}' == 'x'\n    }\n}\n";
        assert_eq!(
            function_lengths(text),
            vec![("short".to_owned(), 2, 4), ("longer".to_owned(), 9, 7)],
            "comments, strings, char literals and declarations without a body are not functions' lines"
        );
    }

    #[test]
    fn fixed_statuses_in_struct_updates_are_found() {
        let text = "let a = LeafRecord { status: LeafStatus::Candidate, ..old };\nlet b = LeafRecord { status: old.status.apply(t)?, ..old };\nlet c = Approval { status: LeafStatus::Active, reason };\nrecord.known = KnownSpan::NEVER;\nfn f() -> LeafRecord {\n    let e = LeafExpect { status: LeafStatus::Active };\n    g(0..2)\n}";
        assert_eq!(
            record_overrides(text),
            [
                (1, "status: LeafStatus".to_owned()),
                (3, "status: LeafStatus".to_owned()),
                (4, "known = KnownSpan".to_owned())
            ]
        );
    }

    #[test]
    fn file_lengths_leave_out_tests() {
        assert!(is_test_file("crates/cli/tests/cli.rs"));
        assert!(is_test_file("tests/lib.rs"));
        assert!(is_test_file("crates/domain/src/time_expr/tests.rs"));
        assert!(is_test_file("crates/search/benches/recall.rs"));
        assert!(!is_test_file("crates/domain/src/claims/english.rs"));
        assert!(!is_test_file("crates/ports/src/conformance/store.rs"));
        assert_eq!(lines_before_tests("a\nb\n#[cfg(test)]\nmod tests {\n    x\n}\n"), 2);
        assert_eq!(lines_before_tests("a\n#[cfg(test)]\nfn only_in_tests() {}\nb\n"), 4);
        assert_eq!(lines_before_tests("#[cfg(test)]\nmod tests;\na\nb\n"), 4, "a test module of its own file");
        let two = "a\n#[cfg(test)]\nmod tests {}\nb\n#[cfg(test)]\npub(crate) mod tests {\n}\n";
        assert_eq!(lines_before_tests(two), 4, "the last inline test module ends the code");
    }

    #[test]
    fn finds_the_readme_test_command() {
        let readme = "intro\n<!-- test-command -->\n```sh\n# comment\ncargo xtask ci\n```\n";
        assert_eq!(readme_test_command(readme).as_deref(), Some("cargo xtask ci"));
    }
}
