//! `arbor serve --tenants`: one process serving many tenants, each request bound by its bearer
//! token to the tenant, context, speaker and role the operator issued it for. Over real
//! loopback sockets: tokens issued and revoked while the server runs, operators' review, and a
//! property test in which random requests of several tenants never see another's memory or
//! learn that it exists.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use proptest::prelude::*;
use serde_json::{Value, json};

fn arbor(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .env("ARBOR_EMBEDDER", "hashing")
        .env_remove("ARBOR_API_TOKEN")
        .env_remove("ARBOR_LOG")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("arbor runs")
}

/// A store for tenants: the operator's, at `root`.
fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let output = arbor(&dir.path().join("store"), &["init"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    dir
}

/// Issues a token for `tenant` with `args` (scope, role) and returns (id, token).
fn issue(root: &Path, tenant: &str, args: &[&str]) -> (String, String) {
    let mut all = vec!["--json", "tokens", "create", "--tenant", tenant];
    all.extend_from_slice(args);
    let output = arbor(root, &all);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let issued: Value = serde_json::from_slice(&output.stdout).unwrap();
    (issued["id"].as_str().unwrap().to_owned(), issued["token"].as_str().unwrap().to_owned())
}

/// The administrator's token of [`serve_tenants`]' server: it reads /metrics and nothing else.
const ADMIN: &str = "the-administrators-own-token";

fn serve_tenants(root: &Path) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command.env("ARBOR_API_TOKEN", ADMIN).arg("--root").arg(root);
    command.args(["serve", "--http", "--mcp", "--listen", "127.0.0.1:0", "--tenants"]);
    let server = support::serve(&mut command);
    Server { base: format!("{}/api/v1/memory", server.base), _process: server }
}

/// The server, and its API's base address.
struct Server {
    base: String,
    _process: support::Server,
}

/// A request as `token`, and its status and JSON body.
async fn call(client: &reqwest::Client, token: &str, method: &str, url: String, body: Option<Value>) -> (u16, Value) {
    let request = match method {
        "GET" => client.get(url),
        _ => client.post(url).json(&body.unwrap_or(json!({}))),
    };
    let response = request.bearer_auth(token).send().await.expect("the server answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

const NEVER: &str = "leaf-01m8q900000000000000000000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_token_acts_as_its_tenant_context_and_role() {
    let dir = store();
    let root = dir.path().join("store");
    let (_, acme) = issue(&root, "acme", &["--conversation", "c1", "--project", "p1"]);
    let (_, globex) = issue(&root, "globex", &["--conversation", "c1", "--project", "p1"]);
    let (_, operator) = issue(&root, "acme", &["--project", "p1", "--operator"]);
    let server = serve_tenants(&root);
    let c = reqwest::Client::new();
    let url = |path: &str| format!("{}/{path}", server.base);

    let (status, saved) =
        call(&c, &acme, "POST", url("upsert"), Some(json!({ "text": "Acme's launch codename is Bluebird." }))).await;
    assert_eq!(status, 200, "{saved}");
    let bluebird = saved["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    // The same conversation and project names in another tenant are another store.
    for path in ["retrieve", "search"] {
        let (status, body) = call(&c, &globex, "POST", url(path), Some(json!({ "query": "Bluebird codename" }))).await;
        assert_eq!(status, 200, "{body}");
        let mut body = body;
        body.as_object_mut().unwrap().remove("query");
        assert!(!body.to_string().contains("Bluebird"), "{path}: {body}");
    }
    let (_, never) = call(&c, &globex, "GET", url(&format!("get?id={NEVER}")), None).await;
    let (status, theirs) = call(&c, &globex, "GET", url(&format!("get?id={bluebird}")), None).await;
    assert_eq!(status, 404);
    assert_eq!(theirs.to_string().replace(&bluebird, "<ID>"), never.to_string().replace(NEVER, "<ID>"));
    let (status, _) = call(&c, &globex, "POST", url("forget"), Some(json!({ "id": bluebird }))).await;
    assert_eq!(status, 404);

    // No token, a wrong one, or one revoked while the server runs: refused.
    let (status, body) = call(&c, "", "GET", url("status"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{body}");
    let (status, _) = call(&c, &format!("{acme}x"), "GET", url("status"), None).await;
    assert_eq!(status, 401);
    let (late_id, late) = issue(&root, "globex", &["--conversation", "c9"]);
    let (status, body) = call(&c, &late, "GET", url("status"), None).await;
    assert_eq!((status, body["write_namespace"].as_str()), (200, Some("conversation:c9")), "a new token works at once");
    assert!(arbor(&root, &["tokens", "revoke", &late_id]).status.success());
    let (status, _) = call(&c, &late, "GET", url("status"), None).await;
    assert_eq!(status, 401, "a revoked token is refused from the next request");

    // Reviewing is an operator's: an agent's save in the project waits; the operator confirms
    // it; then the tenant's agents read it, and the other tenant still does not.
    let (status, body) = call(&c, &acme, "GET", url("review"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");
    let (_, saved) =
        call(&c, &operator, "POST", url("upsert"), Some(json!({ "text": "Acme deploys on Tuesdays." }))).await;
    assert_eq!(saved["chunks"][0]["status"], "candidate", "{saved}");
    let candidate = saved["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    let (status, pending) = call(&c, &operator, "GET", url("review"), None).await;
    assert_eq!(status, 200, "{pending}");
    assert_eq!(pending["items"][0]["id"], candidate.as_str(), "{pending}");
    let (status, body) = call(&c, &acme, "POST", url("review/confirm"), Some(json!({ "id": candidate }))).await;
    assert_eq!(status, 403, "an agent cannot confirm: {body}");
    let (status, body) = call(&c, &globex, "POST", url("review/confirm"), Some(json!({ "id": candidate }))).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = call(&c, &operator, "POST", url("review/confirm"), Some(json!({ "id": candidate }))).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("active")), "{body}");
    let ask = json!({ "query": "when does Acme deploy?", "format": "compact" });
    let (_, pack) = call(&c, &acme, "POST", url("retrieve"), Some(ask.clone())).await;
    assert!(pack["text"].as_str().unwrap().contains("Tuesdays"), "{pack}");
    let (_, pack) = call(&c, &globex, "POST", url("retrieve"), Some(ask)).await;
    assert!(!pack["text"].as_str().unwrap().contains("Tuesdays"), "{pack}");
    let (status, _) = call(&c, &operator, "POST", url("review/reject"), Some(json!({ "id": NEVER }))).await;
    assert_eq!(status, 404);

    // An operator forgets what a person confirmed; an agent may not.
    let (status, body) = call(&c, &acme, "POST", url("forget"), Some(json!({ "id": candidate }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");
    let (status, body) = call(&c, &operator, "POST", url("forget"), Some(json!({ "id": candidate }))).await;
    assert_eq!((status, body["versions"].as_u64()), (200, Some(1)), "{body}");
    let (_, saved) =
        call(&c, &operator, "POST", url("upsert"), Some(json!({ "text": "Acme deploys on Tuesdays." }))).await;
    assert_eq!(saved["chunks"][0]["status"], "candidate", "{saved}");

    // Probes need no token; metrics name every tenant, so they are the administrator's alone.
    let root_url = server.base.trim_end_matches("/api/v1/memory").to_owned();
    for (probe, word) in [("healthz", "ok"), ("readyz", "ready")] {
        let (status, body) = call(&c, "", "GET", format!("{root_url}/{probe}"), None).await;
        assert_eq!((status, body["status"].as_str()), (200, Some(word)), "{body}");
    }
    for tenant_token in [&acme, &operator] {
        let (status, _) = call(&c, tenant_token, "GET", format!("{root_url}/metrics"), None).await;
        assert_eq!(status, 401, "a tenant's token does not read metrics");
    }
    let (status, _) = call(&c, ADMIN, "GET", url("status"), None).await;
    assert_eq!(status, 401, "the administrator's token reads metrics and nothing else");
    let metrics = c.get(format!("{root_url}/metrics")).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(metrics.status().as_u16(), 200);
    let text = metrics.text().await.unwrap();
    for line in [
        r#"arbor_http_requests_total{route="/api/v1/memory/upsert",status="200"} 3"#,
        r#"arbor_http_requests_total{route="/api/v1/memory/status",status="401"} 4"#,
        r#"arbor_jobs_failed{store="acme"} 0"#,
        r#"arbor_memories{store="acme",status="active"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
    }
    assert!(!text.contains("Bluebird"), "metrics hold no words: {text}");

    // An MCP session belongs to the token that opened it: another tenant's token, valid as it
    // is, cannot use it.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    });
    let mcp = format!("{root_url}/mcp");
    let opened = c
        .post(&mcp)
        .bearer_auth(&acme)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let attempt = |token: String| {
        c.post(&mcp)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .json(&list)
            .send()
    };
    assert_eq!(attempt(globex.clone()).await.unwrap().status().as_u16(), 404, "not globex's session");
    assert_ne!(attempt(acme.clone()).await.unwrap().status().as_u16(), 404, "acme's own session");
}

/// What a tenant's random request does.
#[derive(Debug, Clone)]
enum Request {
    Save {
        word: usize,
    },
    Ask {
        word: usize,
    },
    Search {
        word: usize,
    },
    /// Reads, corrects or forgets the `pick`-th memory saved so far, whichever tenant saved it.
    Get {
        pick: usize,
    },
    Correct {
        pick: usize,
    },
    Forget {
        pick: usize,
    },
    Browse,
    Catalog,
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        3 => (0..WORDS.len()).prop_map(|word| Request::Save { word }),
        2 => (0..WORDS.len()).prop_map(|word| Request::Ask { word }),
        1 => (0..WORDS.len()).prop_map(|word| Request::Search { word }),
        2 => any::<usize>().prop_map(|pick| Request::Get { pick }),
        1 => any::<usize>().prop_map(|pick| Request::Correct { pick }),
        1 => any::<usize>().prop_map(|pick| Request::Forget { pick }),
        1 => Just(Request::Browse),
        1 => Just(Request::Catalog),
    ]
}

/// Words every tenant uses, so that questions of one tenant match the others' memories word
/// for word: only the store boundary keeps them apart.
const WORDS: &[&str] = &["bluebird", "budget", "launch", "Dana", "Lisbon", "Postgres"];
const TENANTS: &[&str] = &["t0", "t1", "t2"];

/// The mark each tenant's texts carry; another tenant's response must never hold it.
fn mark(tenant: usize) -> String {
    format!("zq{}q", TENANTS[tenant])
}

/// Reads, corrects or forgets `id` as `request` says, as `tenant`.
async fn probe(
    client: &reqwest::Client,
    token: &str,
    base: &str,
    request: &Request,
    id: &str,
    tenant: usize,
) -> (u16, Value) {
    match request {
        Request::Get { .. } => call(client, token, "GET", format!("{base}/get?id={id}"), None).await,
        Request::Correct { .. } => {
            let fix = json!({ "id": id, "version": 1, "text": format!("Corrected note of {}.", mark(tenant)) });
            call(client, token, "POST", format!("{base}/correct"), Some(fix)).await
        }
        _ => call(client, token, "POST", format!("{base}/forget"), Some(json!({ "id": id }))).await,
    }
}

/// Random requests from several tenants, over one server, with the same scope names in every
/// tenant: no response holds another tenant's words, and another tenant's id is answered
/// exactly like an id that never existed.
#[test]
fn random_requests_of_several_tenants_never_cross() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = store();
    let root = dir.path().join("store");
    let tokens: Vec<String> =
        TENANTS.iter().map(|tenant| issue(&root, tenant, &["--conversation", "c1", "--project", "p1"]).1).collect();
    let server = serve_tenants(&root);
    let client = reqwest::Client::new();
    // Every memory saved, with the tenant that saved it: shared across cases, so later cases
    // probe ids of earlier ones too.
    let saved: std::sync::Mutex<Vec<(String, usize)>> = Default::default();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let crossed = std::sync::atomic::AtomicUsize::new(0);
    let config = ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let strategy = proptest::collection::vec((0..TENANTS.len(), request()), 1..25);
    let result = runner.run(&strategy, |requests| {
        runtime.block_on(async {
            for (tenant, request) in requests {
                let token = &tokens[tenant];
                let url = |path: &str| format!("{}/{path}", server.base);
                let pick = |n: usize| {
                    let saved = saved.lock().unwrap();
                    (!saved.is_empty()).then(|| saved[n % saved.len()].clone())
                };
                let (status, body, probed) = match request {
                    Request::Save { word } => {
                        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let text = format!("Note {n} of {} about {}.", mark(tenant), WORDS[word]);
                        let (status, body) =
                            call(&client, token, "POST", url("upsert"), Some(json!({ "text": text }))).await;
                        if let Some(id) = body["chunks"][0]["leaf_id"].as_str() {
                            saved.lock().unwrap().push((id.to_owned(), tenant));
                        }
                        (status, body, None)
                    }
                    Request::Ask { word } => {
                        let query = json!({ "query": format!("what about {}?", WORDS[word]), "format": "compact" });
                        let (status, body) = call(&client, token, "POST", url("retrieve"), Some(query)).await;
                        (status, body, None)
                    }
                    Request::Search { word } => {
                        let (status, mut body) =
                            call(&client, token, "POST", url("search"), Some(json!({ "query": WORDS[word] }))).await;
                        body.as_object_mut().map(|b| b.remove("query"));
                        (status, body, None)
                    }
                    Request::Get { pick: n } | Request::Correct { pick: n } | Request::Forget { pick: n } => {
                        let Some((id, owner)) = pick(n) else { continue };
                        let (status, body) = probe(&client, token, &server.base, &request, &id, tenant).await;
                        (status, body, Some((id, owner)))
                    }
                    Request::Browse => {
                        let (status, body) = call(&client, token, "GET", url("browse"), None).await;
                        (status, body, None)
                    }
                    Request::Catalog => {
                        let (status, body) = call(&client, token, "GET", url("catalog"), None).await;
                        (status, body, None)
                    }
                };
                prop_assert!(status < 500, "{status}: {body}");
                let text = body.to_string();
                for other in (0..TENANTS.len()).filter(|&other| other != tenant) {
                    prop_assert!(
                        !text.contains(&mark(other)),
                        "{} read {}'s words: {text}",
                        TENANTS[tenant],
                        TENANTS[other]
                    );
                }
                if let Some((id, owner)) = probed
                    && owner != tenant
                {
                    crossed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let (never_status, never) = probe(&client, token, &server.base, &request, NEVER, tenant).await;
                    prop_assert_eq!((status, never_status), (404, 404), "{}", text);
                    let masked = |body: &Value, id: &str| body.to_string().replace(id, "<ID>");
                    prop_assert_eq!(masked(&body, &id), masked(&never, NEVER));
                }
            }
            Ok(())
        })
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    // Not vacuous: memories were saved, and other tenants' ids were probed.
    let (saves, probes) = (saved.lock().unwrap().len(), crossed.load(std::sync::atomic::Ordering::SeqCst));
    assert!(saves >= 20 && probes >= 20, "{saves} saves, {probes} cross-tenant probes");
}
