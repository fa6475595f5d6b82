//! The tidy rule that no two files of a crate import each other in a loop: `a` uses `b` and
//! `b` (or something `b` uses) uses `a`. A loop means neither file can be read, changed or
//! moved without the other; the one thing in the wrong file is what to move.
//!
//! A module's own children and ancestors do not count: a parent that declares and re-exports
//! its children, and children that use their parent's types, are one room with its alcoves.
//! Tests (a `tests` module or file) do not count either. Paths are read from the code alone
//! (`crate::…` and `super::…`, grouped imports too); a re-export is seen where it is written,
//! so `crate::Name` counts as the crate root, not as the file `Name` comes from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::sources::{code_only, collect_rs_files, inline_tests_at};

/// A module, as the path of names from its crate's root (`["http", "guards"]`).
type Module = Vec<String>;

/// Every crate of the workspace (its `src`) whose modules import each other in a loop, each
/// loop named with the modules in it.
pub(crate) fn check_module_loops(root: &Path) -> Result<Vec<String>> {
    let mut sources: Vec<PathBuf> = vec![root.join("xtask/src")];
    let crates = root.join("crates");
    for entry in std::fs::read_dir(&crates).with_context(|| format!("listing {}", crates.display()))? {
        let src = entry?.path().join("src");
        if src.is_dir() {
            sources.push(src);
        }
    }
    sources.sort();
    let mut problems = Vec::new();
    for src in sources {
        let shown = src.strip_prefix(root).unwrap_or(&src).display().to_string().replace('\\', "/");
        for members in loops(&imports(&src)?) {
            let named: Vec<String> = members.iter().map(module_name).collect();
            problems.push(format!(
                "{shown}: {} import each other in a loop; move the one thing in the wrong file",
                named.join(", ")
            ));
        }
    }
    Ok(problems)
}

fn module_name(module: &Module) -> String {
    if module.is_empty() { "the crate root".to_owned() } else { module.join("::") }
}

/// For each module of the crate under `src`, the modules it imports (neither itself nor an
/// ancestor or descendant of it).
fn imports(src: &Path) -> Result<BTreeMap<Module, BTreeSet<Module>>> {
    let mut files = Vec::new();
    collect_rs_files(src, &mut files)?;
    let modules: BTreeMap<Module, PathBuf> =
        files.into_iter().filter_map(|file| module_of(src, &file).map(|module| (module, file))).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &modules {
        if module.last().is_some_and(|name| name == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let code = code_only(&text);
        let code = inline_tests_at(&code).map_or(code.as_str(), |at| &code[..at]);
        for path in paths_used(code) {
            let Some(full) = path.resolve(module) else { continue };
            let Some(target) = (0..=full.len()).rev().map(|n| &full[..n]).find(|m| modules.contains_key(*m)) else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(target);
            if !related {
                edges.entry(module.clone()).or_default().insert(target.to_vec());
            }
        }
    }
    Ok(edges)
}

/// The module a file under `src` holds: `lib.rs` and `main.rs` the root, `a/mod.rs` and
/// `a.rs` the module `a`.
fn module_of(src: &Path, file: &Path) -> Option<Module> {
    let relative = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Module = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    match parts.last().map(String::as_str) {
        Some("lib" | "main") if parts.len() == 1 => parts.clear(),
        Some("mod") => {
            parts.pop();
        }
        _ => {}
    }
    Some(parts)
}

/// A path as written: from the crate root, or `ups` levels above the module it is written in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UsedPath {
    /// `None` for `crate::`, else how many `super::` open it.
    ups: Option<usize>,
    names: Vec<String>,
}

impl UsedPath {
    fn resolve(&self, within: &Module) -> Option<Module> {
        let base = match self.ups {
            None => &within[..0],
            Some(ups) => within.get(..within.len().checked_sub(ups)?)?,
        };
        Some(base.iter().chain(&self.names).cloned().collect())
    }
}

/// Every `crate::…` and `super::…` path in `code` (comments and strings blanked), a grouped
/// import `crate::{a, b::c}` giving one path per member.
fn paths_used(code: &str) -> Vec<UsedPath> {
    let mut found = Vec::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    for keyword in ["crate::", "super::"] {
        for (at, _) in code.match_indices(keyword) {
            if code[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let mut rest = &code[at + keyword.len()..];
            let mut ups = (keyword == "super::").then_some(1);
            while let Some(more) = rest.strip_prefix("super::") {
                ups = ups.map(|n| n + 1);
                rest = more;
            }
            for names in expanded(Vec::new(), rest) {
                found.push(UsedPath { ups, names });
            }
        }
    }
    found
}

/// The members of a `{…}` group whose opening brace was just read, up to its closing brace.
fn group_members(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut members) = (0usize, 0usize, Vec::new());
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                members.push(&group[start..at]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    members
}

/// The paths `text` starts with, after `prefix`: `a::b::C` of `a::b::C::new(…)` (all of its
/// names; the longest that is a module is the one imported), one per member of a group
/// (`a::{b, c::{d, e}}`: `a::b`, `a::c::d`, `a::c::e`).
fn expanded(prefix: Vec<String>, text: &str) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut names = prefix;
    let mut rest = text.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            return group_members(group).into_iter().flat_map(|member| expanded(names.clone(), member)).collect();
        }
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        names.push(name);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    vec![names]
}

/// The strongly connected parts of `edges` with more than one module: each a loop.
fn loops(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let mut found = Vec::new();
    let mut assigned: BTreeSet<&Module> = BTreeSet::new();
    for start in edges.keys() {
        if assigned.contains(start) {
            continue;
        }
        let from_start = reachable(edges, start);
        let members: Vec<Module> = from_start
            .into_iter()
            .filter(|&other| other != start && reachable(edges, other).contains(start))
            .chain(std::iter::once(start))
            .cloned()
            .collect();
        if members.len() > 1 {
            let mut members = members;
            members.sort();
            for member in &members {
                if let Some((key, _)) = edges.get_key_value(member) {
                    assigned.insert(key);
                }
            }
            found.push(members);
        }
    }
    found
}

/// Every module `start` imports, directly or through others.
fn reachable<'a>(edges: &'a BTreeMap<Module, BTreeSet<Module>>, start: &'a Module) -> BTreeSet<&'a Module> {
    let mut seen: BTreeSet<&Module> = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(module) = stack.pop() {
        for next in edges.get(module).into_iter().flatten() {
            if seen.insert(next) {
                stack.push(next);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(path: &str) -> Module {
        path.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect()
    }

    #[test]
    fn paths_are_read_grouped_or_not_and_relative_to_their_module() {
        let code = "use crate::{a::B, c::{d, e}};\nuse super::super::f::G;\nlet x = crate::h::i::J::new();";
        let paths = paths_used(code);
        let resolved: Vec<Module> = paths.iter().filter_map(|p| p.resolve(&module("x::y::z"))).collect();
        assert_eq!(
            resolved,
            [module("a::B"), module("c::d"), module("c::e"), module("h::i::J::new"), module("x::f::G")],
            "crate paths first, then super paths"
        );
        assert_eq!(UsedPath { ups: Some(2), names: vec![] }.resolve(&module("a")), None, "above the root");
    }

    #[test]
    fn a_loop_between_siblings_is_found_and_a_parent_with_its_children_is_not() {
        let edges: BTreeMap<Module, BTreeSet<Module>> = [
            (module("http"), BTreeSet::from([module("mcp")])),
            (module("mcp"), BTreeSet::from([module("wire"), module("http")])),
            (module("wire"), BTreeSet::new()),
        ]
        .into_iter()
        .collect();
        assert_eq!(loops(&edges), [vec![module("http"), module("mcp")]]);
        let src = Path::new("src");
        assert_eq!(module_of(src, Path::new("src/lib.rs")), Some(module("")));
        assert_eq!(module_of(src, Path::new("src/http/mod.rs")), Some(module("http")));
        assert_eq!(module_of(src, Path::new("src/http/guards.rs")), Some(module("http::guards")));
    }

    #[test]
    fn the_workspace_has_no_module_loops() {
        let root = crate::tidy::workspace_root();
        assert_eq!(check_module_loops(&root).unwrap(), Vec::<String>::new());
    }
}
