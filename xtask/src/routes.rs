//! The tidy rule that the HTTP routes are one list: every route the router serves under
//! `/api/v1/memory` (the agent API and the operator's) and every probe (`/metrics`, `/healthz`,
//! `/readyz`) is in the OpenAPI document, the document names no route the router lacks, and
//! `docs/serving.md` names each one. The router is the list; the others are checked against it.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Where the API is nested.
const API_PREFIX: &str = "/api/v1/memory";

/// The router's routes, the OpenAPI document's paths and the serving guide, compared.
pub(crate) fn check_routes(root: &Path) -> Result<Vec<String>> {
    let served = served_routes(root)?;
    let document = read(root, "crates/server/openapi.json")?;
    let document: Value = serde_json::from_str(&document).context("reading crates/server/openapi.json")?;
    let documented: BTreeSet<String> =
        document["paths"].as_object().map(|paths| paths.keys().cloned().collect()).unwrap_or_default();
    let guide = read(root, "docs/serving.md")?;
    let mut problems = Vec::new();
    for route in served.difference(&documented) {
        problems.push(format!("the router serves {route}, which crates/server/openapi.json does not describe"));
    }
    for route in documented.difference(&served) {
        problems.push(format!("crates/server/openapi.json describes {route}, which the router does not serve"));
    }
    for route in &served {
        if !names_route(&guide, route) {
            problems.push(format!("docs/serving.md does not name {route}"));
        }
    }
    Ok(problems)
}

/// Whether `guide` names `route` whole: neither as the start of a longer one (`/review` in
/// `/review/confirm`) nor as the end of one (`/metrics` in `/foo/metrics`).
fn names_route(guide: &str, route: &str) -> bool {
    let in_a_path = |c: char| c.is_alphanumeric() || matches!(c, '_' | '/' | '-');
    guide.match_indices(route).any(|(at, _)| {
        let before = guide[..at].chars().next_back();
        let after = guide[at + route.len()..].chars().next();
        // A port may come before a path (`localhost:7300/api/…`), a letter or a slash may not.
        !before.is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '/' | '-' | '.'))
            && !after.is_some_and(in_a_path)
    })
}

/// `code` without its `//` comments (a route commented out is not served).
fn without_comments(code: &str) -> String {
    code.lines().map(|line| line.split_once("//").map_or(line, |(code, _)| code)).collect::<Vec<_>>().join("\n")
}

fn read(root: &Path, file: &str) -> Result<String> {
    std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))
}

/// The routes `crates/server` serves that a client calls: the API router's and the
/// operator's (both nested under [`API_PREFIX`]), and the probes.
fn served_routes(root: &Path) -> Result<BTreeSet<String>> {
    let router = without_comments(&read(root, "crates/server/src/http/mod.rs")?);
    let centre = without_comments(&read(root, "crates/server/src/centre.rs")?);
    let api = between(&router, "let api = Router::new()", ".merge(crate::centre::operator_routes())")?;
    let operator = between(&centre, "pub(crate) fn operator_routes() -> Router {", "\n}")?;
    let probes = between(&router, "let mut app = guarded", ";")?;
    let mut routes: BTreeSet<String> =
        route_paths(api).into_iter().chain(route_paths(operator)).map(|path| format!("{API_PREFIX}{path}")).collect();
    routes.extend(route_paths(probes));
    if routes.len() < 10 {
        bail!("found only {} routes in crates/server: has the router moved? (xtask/src/routes.rs)", routes.len());
    }
    Ok(routes)
}

/// The text of `text` from `start` to the first `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Result<&'a str> {
    let from = text.find(start).with_context(|| format!("no `{start}` in the router (xtask/src/routes.rs)"))?;
    let rest = &text[from + start.len()..];
    let to = rest.find(end).with_context(|| format!("no `{end}` after `{start}` (xtask/src/routes.rs)"))?;
    Ok(&rest[..to])
}

/// The paths of every `.route("…", …)` in `code`.
fn route_paths(code: &str) -> Vec<String> {
    code.match_indices(".route(\"")
        .filter_map(|(at, opening)| {
            let rest = &code[at + opening.len()..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_read_from_route_calls_and_named_whole() {
        let code = r#"Router::new().route("/retrieve", post(retrieve))
            .route("/review/confirm", post(confirm))"#;
        assert_eq!(route_paths(code), ["/retrieve", "/review/confirm"]);
        assert!(names_route("`POST /api/v1/memory/review`, then", "/api/v1/memory/review"));
        assert!(!names_route("`/api/v1/memory/review/confirm`", "/api/v1/memory/review"));
        assert!(names_route("ends with /healthz", "/healthz"));
        assert!(!names_route("see /foo/metrics", "/metrics"), "the end of another path");
        assert_eq!(
            route_paths(&without_comments("// .route(\"/old\", get(old))\n.route(\"/new\", get(new))")),
            ["/new"]
        );
    }

    #[test]
    fn the_routes_are_one_list() {
        let root = crate::tidy::workspace_root();
        assert_eq!(check_routes(&root).unwrap(), Vec::<String>::new());
    }
}
