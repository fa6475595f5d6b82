//! `arbor serve --http --mcp` as a client sees it, over real loopback sockets: the trusted
//! binding (nothing outside the chain is readable, and nothing says whether it exists),
//! stable error codes, version preconditions, limits, auth, and 200 concurrent retrievals.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn arbor(root: &Path, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .env("ARBOR_EMBEDDER", "hashing")
        .env_remove("ARBOR_API_TOKEN")
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arbor runs");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

/// Ingests `lines` as `scope` and returns the (leaf id, tree id) of each, in order.
fn ingest(root: &Path, scope: &[&str], lines: &[&str]) -> Vec<(String, String)> {
    let events: String = lines.iter().map(|l| format!("{}\n", json!({ "text": l }))).collect();
    let mut args = vec!["--json", "ingest"];
    args.extend_from_slice(scope);
    let output = arbor(root, &args, Some(&events));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let chunk = &r["report"]["chunks"][0];
            (chunk["leaf_id"].as_str().expect("admitted").to_owned(), chunk["tree_id"].as_str().unwrap().to_owned())
        })
        .collect()
}

const BOUND: &[&str] = &["--conversation", "c1", "--project", "p1"];
const OTHER: &[&str] = &["--conversation", "c2", "--project", "p2"];

/// A store with memories in the bound scope and in another one.
struct Fixture {
    dir: tempfile::TempDir,
    mine: Vec<(String, String)>,
    theirs: Vec<(String, String)>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    assert!(arbor(&root, &["init"], None).status.success());
    let mine = ingest(
        &root,
        BOUND,
        &[
            "Dana prefers morning meetings before 10am.",
            "Dana is leading the migration to Postgres.",
            "My favorite editor is Zed.",
        ],
    );
    let theirs = ingest(&root, OTHER, &["Quentin keeps bees in Porto.", "Quentin's door code is 4417."]);
    assert!(arbor(&root, &["jobs", "run"], None).status.success());
    Fixture { dir, mine, theirs }
}

impl Fixture {
    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("store")
    }
}

use support::Server;

fn serve(root: &Path, extra: &[&str]) -> Server {
    let mut args = vec!["serve", "--http", "--mcp", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(BOUND);
    args.extend_from_slice(extra);
    serve_with(root, &args)
}

/// Starts `arbor --root root <args>` (a `serve` command line) and waits for its address.
fn serve_with(root: &Path, args: &[&str]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command.env_remove("ARBOR_API_TOKEN").env("ARBOR_EMBEDDER", "hashing").arg("--root").arg(root).args(args);
    support::serve(&mut command)
}

async fn call(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

fn masked(body: &Value, id: &str) -> String {
    body.to_string().replace(id, "<ID>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reads_outside_the_bound_chain_or_learns_what_exists_there() {
    let f = fixture();
    let server = serve(&f.root(), &[]);
    let c = reqwest::Client::new();
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let never = "leaf-01m8q900000000000000000000";

    // Ids from another scope: answered exactly like ids that do not exist.
    for (theirs, _) in &f.theirs {
        let (status, body) = call(c.get(api("get")).query(&[("id", theirs)])).await;
        let (never_status, never_body) = call(c.get(api("get")).query(&[("id", never)])).await;
        assert_eq!((status, never_status), (404, 404));
        assert_eq!(masked(&body, theirs), masked(&never_body, never), "no existence leak");

        let fix = |id: &str| json!({ "id": id, "version": 1, "text": "Quentin keeps wasps." });
        let (status, body) = call(c.post(api("correct")).json(&fix(theirs))).await;
        let (_, never_body) = call(c.post(api("correct")).json(&fix(never))).await;
        assert_eq!(status, 404);
        assert_eq!(masked(&body, theirs), masked(&never_body, never));
    }
    // Their trees are not found, like trees that do not exist; a tree id both scopes use
    // shows ours only.
    for (_, tree) in &f.theirs {
        let (status, body) = call(c.get(api("browse")).query(&[("tree", tree)])).await;
        assert!(!body.to_string().contains("Quentin"), "{body}");
        if f.mine.iter().any(|(_, t)| t == tree) {
            assert_eq!(status, 200, "{body}");
        } else {
            let (never_status, never_body) = call(c.get(api("browse")).query(&[("tree", "interaction:nobody")])).await;
            assert_eq!((status, never_status), (404, 404));
            assert_eq!(masked(&body, tree), masked(&never_body, "interaction:nobody"));
        }
    }

    // Questions about their memories find nothing of theirs, on every channel.
    for query in ["Quentin bees Porto", "what is the door code?", "tell me everything"] {
        for path in ["retrieve", "search"] {
            let (status, mut body) = call(c.post(api(path)).json(&json!({ "query": query }))).await;
            assert_eq!(status, 200, "{body}");
            // The pack echoes the question; everything else must be ours.
            body.as_object_mut().unwrap().remove("query");
            let text = body.to_string();
            assert!(!text.contains("Quentin") && !text.contains("4417") && !text.contains(":c2"), "{text}");
        }
    }
    let (_, catalog) = call(c.get(api("catalog"))).await;
    let (_, trees) = call(c.get(api("browse"))).await;
    let (_, status) = call(c.get(api("status"))).await;
    // The day both scopes wrote on shows ours only.
    let (_, ours) = call(c.get(api("get")).query(&[("id", &f.mine[0].0)])).await;
    let day = &ours["observed_at"].as_str().unwrap()[..10];
    let (daily_status, daily) = call(c.get(api("daily")).query(&[("date", day)])).await;
    assert_eq!(daily_status, 200, "{daily}");
    assert_eq!(daily["memories"].as_array().unwrap().len(), 3, "{daily}");
    // ":c2" (the other scope's namespace), not "c2", which a leaf id may hold by chance.
    for body in [&catalog, &trees, &status, &daily] {
        assert!(!body.to_string().contains(":c2") && !body.to_string().contains("Quentin"), "{body}");
    }
    for bad in [
        [("date", "yesterday")],
        [("utc_offset", "Asia/Shanghai")],
        [("limit", "0")],
        [("namespace", "conversation:c2")],
    ] {
        let (status, body) = call(c.get(api("daily")).query(&bad)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{bad:?}: {body}");
    }
    // A date of the right shape that is not in the calendar is well-formed, and names no day.
    let (code, body) = call(c.get(api("daily")).query(&[("date", "2026-02-30")])).await;
    assert_eq!((code, body["error"]["code"].as_str()), (422, Some("unprocessable")), "{body}");
    assert_eq!(status["read_chain"], json!(["conversation:c1", "project:p1", "global"]));
    assert_eq!(status["active_leaves"], 3, "sizes are counted inside the chain only");

    // A request cannot name a namespace, a chain or a path.
    for (path, payload) in [
        ("retrieve", json!({ "query": "Quentin", "namespace": "conversation:c2" })),
        ("search", json!({ "query": "Quentin", "read_chain": ["conversation:c2"] })),
        ("upsert", json!({ "text": "I like tea.", "namespace": "global" })),
    ] {
        let (status, body) = call(c.post(api(path)).json(&payload)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
    }
    let (status, _) = call(c.get(api("browse")).query(&[("namespace", "conversation:c2")])).await;
    assert_eq!(status, 400);
    for path in ["../../arbor.json", "memory/conversation/c2/interaction/uncategorized/leaves/x.md", "/etc/passwd"] {
        let (status, body) = call(c.get(api("get")).query(&[("id", path)])).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
        assert!(!body.to_string().contains("No such file"), "{body}");
    }

    // Our own memories are readable, and a save lands in the bound write namespace.
    let (status, node) = call(c.get(api("get")).query(&[("id", &f.mine[0].0)])).await;
    assert_eq!(status, 200, "{node}");
    assert_eq!(node["namespace"], "conversation:c1");
    let (status, saved) = call(c.post(api("upsert")).json(&json!({ "text": "My favorite tea is sencha." }))).await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["chunks"][0]["namespace"], "conversation:c1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_stable_codes_and_corrections_need_the_current_version() {
    let f = fixture();
    let server = serve(&f.root(), &["--max-body-bytes", "4096"]);
    let c = reqwest::Client::new();
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let code = |body: &Value| body["error"]["code"].as_str().map(str::to_owned);

    let response = c.get(api("get")).query(&[("id", &f.mine[2].0)]).send().await.unwrap();
    assert_eq!(response.headers()["etag"], "\"1\"");
    let fix = json!({ "id": f.mine[2].0, "text": "My favorite editor is Helix." });
    let (status, body) = call(c.post(api("correct")).json(&fix)).await;
    assert_eq!((status, code(&body).as_deref()), (400, Some("invalid_request")), "no version: {body}");
    assert!(body.to_string().contains("version"), "{body}");
    // Through an agent's server bound to a conversation, a correction is current at once (the
    // conversation auto-approves) and marked as the agent's.
    let own = json!({ "id": f.mine[2].0, "version": 1, "text": "My favorite editor is Helix, I think.", "message_id": "m-8" });
    let (status, body) = call(c.post(api("correct")).json(&own)).await;
    assert_eq!((status, body["status"].as_str(), body["version"].as_u64()), (200, Some("active"), Some(2)), "{body}");
    let second = body["leaf_id"].as_str().unwrap().to_owned();
    let (_, node) = call(c.get(api("get")).query(&[("id", &second)])).await;
    assert_eq!((node["actor"].as_str(), node["source"].as_str()), (Some("agent"), Some("message:m-8")), "{node}");
    drop(server);
    // A host that relays its user's words is bound as the user.
    let server = serve(&f.root(), &["--max-body-bytes", "4096", "--speaker", "user"]);
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let fix = json!({ "id": second, "version": 2, "text": "My favorite editor is Helix.", "message_id": "m-9" });
    let (status, body) = call(c.post(api("correct")).header("if-match", "\"2\"").json(&fix)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["version"].as_u64(), body["replaces"].as_str()), (Some(3), Some(second.as_str())));
    // The same version again is stale: 412, and nothing is written.
    let (status, body) = call(c.post(api("correct")).header("if-match", "\"2\"").json(&fix)).await;
    assert_eq!((status, code(&body).as_deref()), (412, Some("precondition_failed")), "{body}");
    let (status, body) = call(
        c.post(api("correct"))
            .header("if-match", "\"3\"")
            .json(&json!({ "id": second, "version": 2, "text": "x y z" })),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_deref()),
        (412, Some("precondition_failed")),
        "If-Match and version disagree: {body}"
    );
    let (_, pack) = call(c.post(api("retrieve")).json(&json!({ "query": "favorite editor" }))).await;
    assert_eq!(pack["evidence"][0]["text"], "My favorite editor is Helix.");
    assert_eq!(pack["evidence"][0]["version"], 3);
    let (_, corrected) =
        call(c.get(api("get")).query(&[("id", pack["evidence"][0]["node_id"]["id"].as_str().unwrap())])).await;
    assert_eq!(corrected["source"], "message:m-9", "a correction says where it came from");

    let (status, body) =
        call(c.post(api("retrieve")).header("content-type", "text/plain").body("{\"query\":\"x\"}")).await;
    assert_eq!((status, code(&body).as_deref()), (415, Some("unsupported_media_type")));
    let (status, body) = call(c.post(api("upsert")).json(&json!({ "text": "a".repeat(10_000) }))).await;
    assert_eq!((status, code(&body).as_deref()), (413, Some("payload_too_large")));
    let (status, body) = call(c.post(api("retrieve")).json(&json!({ "query": "" }))).await;
    assert_eq!((status, code(&body).as_deref()), (400, Some("invalid_request")));
    let far = json!({ "text": "The probe lands on Titan.", "observed_at": "2300-01-01T00:00:00Z" });
    let (status, body) = call(c.post(api("upsert")).json(&far)).await;
    assert_eq!((status, code(&body).as_deref()), (400, Some("invalid_request")), "no store holds 2300: {body}");
    let (status, body) = call(c.post(api("retrieve")).json(&json!({ "query": "x", "max_results": 0 }))).await;
    assert_eq!((status, code(&body).as_deref()), (400, Some("invalid_request")));
    let (status, body) = call(c.get(format!("{}/api/v1/memory/nothing", server.base))).await;
    assert_eq!((status, code(&body).as_deref()), (404, Some("not_found")));
    let (status, body) = call(c.get(api("retrieve"))).await;
    assert_eq!((status, code(&body).as_deref()), (405, Some("method_not_allowed")));
    let (status, document) = call(c.get(format!("{}/openapi.json", server.base))).await;
    assert_eq!((status, document["openapi"].as_str()), (200, Some("3.1.0")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_everything_but_the_openapi_document() {
    let f = fixture();
    let token = "a-long-enough-test-token";
    let server = serve(&f.root(), &["--token", token]);
    let c = reqwest::Client::new();
    let status_url = format!("{}/api/v1/memory/status", server.base);
    let (status, body) = call(c.get(&status_url)).await;
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")));
    let (status, _) = call(c.get(&status_url).bearer_auth("wrong-token-of-some-length")).await;
    assert_eq!(status, 401);
    let (status, _) = call(c.get(&status_url).bearer_auth("a-long-enough-test-tokeN")).await;
    assert_eq!(status, 401, "same length, one byte off");
    let (status, _) = call(c.get(&status_url).bearer_auth(token)).await;
    assert_eq!(status, 200);
    let (status, _) = call(c.get(&status_url).header("authorization", format!("bearer {token}"))).await;
    assert_eq!(status, 200, "the scheme name is case-insensitive");
    let (status, _) = call(c.get(format!("{}/openapi.json", server.base))).await;
    assert_eq!(status, 200);
    let response = c.post(format!("{}/mcp", server.base)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401, "the MCP endpoint is guarded too");

    // Off loopback, a token is not optional.
    let output = arbor(&f.root(), &["serve", "--http", "--listen", "0.0.0.0:0", "--conversation", "c1"], None);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("needs --token"), "{output:?}");
    // And a server is always told whom it serves.
    let output = arbor(&f.root(), &["serve", "--mcp"], None);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("needs the scope"), "{output:?}");
}

/// A web page cannot reach a loopback server by rebinding its own domain name to 127.0.0.1,
/// nor post to it from another origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_host_names_and_origins_are_refused() {
    let f = fixture();
    let server = serve(&f.root(), &[]);
    let c = reqwest::Client::new();
    let status_url = format!("{}/api/v1/memory/status", server.base);
    let (status, body) = call(c.get(&status_url).header("host", "evil.example:80")).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");
    let (status, _) = call(c.get(&status_url).header("origin", "https://evil.example")).await;
    assert_eq!(status, 403);
    let (status, _) = call(c.get(&status_url).header("origin", server.base.as_str())).await;
    assert_eq!(status, 200, "the server's own origin is fine");
    let sync = format!("{}/api/v1/memory/sync", server.base);
    let (status, _) = call(c.post(&sync).header("content-type", "application/x-www-form-urlencoded")).await;
    assert_eq!(status, 415, "a form post is not a sync");
    let (status, body) = call(c.post(&sync)).await;
    assert_eq!((status, body["idle"].as_bool()), (200, Some(true)), "{body}");
}

/// What an agent may not see — restricted, forgotten, a broader layer's memory to write — is
/// answered like what does not exist, or refused for what it is; two corrections of one
/// version cannot both win.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_memories_stay_hidden_and_one_version_has_one_correction() {
    let f = fixture();
    let root = f.root();
    let events = [
        json!({ "text": "Dana's salary is 91k.", "hints": { "sensitivity": "restricted" } }),
        json!({ "text": "Dana's old locker number is 42." }),
    ];
    let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
    let mut args = vec!["--json", "ingest"];
    args.extend_from_slice(BOUND);
    let output = arbor(&root, &args, Some(&lines));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let id = |i: usize| report["results"][i]["report"]["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    let (restricted, forgotten) = (id(0), id(1));
    let mut forget = vec!["forget", forgotten.as_str()];
    forget.extend_from_slice(BOUND);
    assert!(arbor(&root, &forget, None).status.success());
    let project = ingest(&root, &["--project", "p1"], &["The p1 release train leaves on Thursdays."]);

    let server = serve(&root, &["--speaker", "user"]);
    let c = reqwest::Client::new();
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let never = "leaf-01m8q900000000000000000000";
    let (_, never_get) = call(c.get(api("get")).query(&[("id", never)])).await;
    let fix = |id: &str, version: u32| json!({ "id": id, "version": version, "text": "Something else entirely." });
    let (_, never_fix) = call(c.post(api("correct")).json(&fix(never, 1))).await;
    for hidden in [&restricted, &forgotten] {
        let (status, body) = call(c.get(api("get")).query(&[("id", hidden)])).await;
        assert_eq!((status, masked(&body, hidden)), (404, masked(&never_get, never)));
        let (status, body) = call(c.post(api("correct")).json(&fix(hidden, 1))).await;
        assert_eq!((status, masked(&body, hidden)), (404, masked(&never_fix, never)));
        let (status, body) = call(c.post(api("correct")).header("if-match", "\"7\"").json(&fix(hidden, 1))).await;
        assert_eq!((status, masked(&body, hidden)), (404, masked(&never_fix, never)), "the If-Match path too");
    }
    for path in ["catalog", "browse", "status"] {
        let (_, body) = call(c.get(api(path))).await;
        assert!(!body.to_string().contains("salary") && !body.to_string().contains("locker"), "{path}: {body}");
    }
    let (_, status) = call(c.get(api("status"))).await;
    assert_eq!(status["active_leaves"], 4, "3 of c1 and 1 of p1; the restricted one is not counted: {status}");

    // A project memory is read, not written, by a conversation of the project.
    let (status, body) = call(c.post(api("correct")).json(&fix(&project[0].0, 1))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");

    // Two corrections of the same version at once: exactly one wins, the other is stale.
    let (a, b) = tokio::join!(
        call(c.post(api("correct")).json(
            &json!({ "id": f.mine[0].0, "version": 1, "text": "Dana prefers meetings after 2pm.", "message_id": "m-1" })
        )),
        call(c.post(api("correct")).json(
            &json!({ "id": f.mine[0].0, "version": 1, "text": "Dana prefers meetings at noon.", "message_id": "m-2" })
        )),
    );
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 412], "{a:?} {b:?}");
    let (_, node) = call(c.get(api("get")).query(&[("id", &f.mine[0].0)])).await;
    assert_eq!(node["status"], "superseded");
    let winner = if a.0 == 200 { &a.1 } else { &b.1 };
    let (_, current) = call(c.get(api("get")).query(&[("id", winner["leaf_id"].as_str().unwrap())])).await;
    assert_eq!((current["version"].as_u64(), current["superseded_by"].as_str()), (Some(2), None), "{current}");
}

/// Forget over HTTP takes only what the binding writes and can read: a memory of its write
/// namespace goes (every version, with a receipt of ids and counts); one of a broader layer it
/// reads is forbidden; another scope's memory, a candidate, or a memory already forgotten is
/// not found, exactly like an id that never existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forget_takes_only_what_the_binding_writes() {
    let f = fixture();
    let project = ingest(&f.root(), &["--project", "p1"], &["The p1 launch is set for March."]);
    let server = serve(&f.root(), &[]);
    let c = reqwest::Client::new();
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let masked = |body: &Value, id: &str| body.to_string().replace(id, "<ID>");

    let (status, receipt) = call(c.post(api("forget")).json(&json!({ "id": f.mine[2].0 }))).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!((receipt["leaf_id"].as_str(), receipt["versions"].as_u64()), (Some(f.mine[2].0.as_str()), Some(1)));
    assert!(!receipt.to_string().contains("Zed"), "a receipt holds no words: {receipt}");
    let (_, pack) =
        call(c.post(api("retrieve")).json(&json!({ "query": "favorite editor", "format": "compact" }))).await;
    assert!(!pack.to_string().contains("Zed"), "{pack}");

    let (status, body) = call(c.post(api("forget")).json(&json!({ "id": project[0].0 }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");
    // An assistant's remark in the bound conversation waits for a person: not the agent's to see.
    let remark = r#"{"text":"The user probably likes jazz.","actor":"assistant","source":{"type":"message","message_id":"a-1"}}"#;
    let output = arbor(&f.root(), &["--json", "ingest", "--conversation", "c1", "--project", "p1"], Some(remark));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let candidate = &report["results"][0]["report"]["chunks"][0];
    assert_eq!(candidate["status"], "candidate", "{report}");
    // Saying the same words does not name the memory the agent cannot read.
    let (status, again) = call(c.post(api("upsert")).json(&json!({ "text": "The user probably likes jazz." }))).await;
    assert_eq!(status, 200, "{again}");
    let candidate_id = candidate["leaf_id"].as_str().unwrap();
    assert!(!again.to_string().contains(candidate_id), "a duplicate names a hidden memory: {again}");
    let never = "leaf-01m8q900000000000000000000";
    let (never_status, never_body) = call(c.post(api("forget")).json(&json!({ "id": never }))).await;
    assert_eq!(never_status, 404, "{never_body}");
    for id in [&f.theirs[0].0, &f.mine[2].0, candidate["leaf_id"].as_str().unwrap()] {
        let (status, body) = call(c.post(api("forget")).json(&json!({ "id": id }))).await;
        assert_eq!(status, 404, "{id}: {body}");
        assert_eq!(masked(&body, id), masked(&never_body, never), "{id} leaks existence");
    }
    let (status, body) = call(c.post(api("forget")).json(&json!({ "id": "../../arbor.json" }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
    drop(server);

    // Bound to the project itself, the agent writes there, but what a person confirmed there
    // only a person takes away.
    let server = serve_with(&f.root(), &["serve", "--http", "--listen", "127.0.0.1:0", "--project", "p1"]);
    let url = format!("{}/api/v1/memory/forget", server.base);
    let (status, body) = call(c.post(url).json(&json!({ "id": project[0].0 }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("only a person may forget"), "{body}");
}

/// A chat client's messages and a batch of saves: one write, an answer per item in order; a
/// bad item is refused alone; a role only lowers who the binding says speaks, so a `user`
/// message through an agent's server is still the agent's, and a system prompt is not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_messages_and_batches_save_item_by_item() {
    let f = fixture();
    let c = reqwest::Client::new();
    for (binding, user_actor) in [(&[][..], "agent"), (&["--speaker", "user"][..], "user")] {
        let server = serve(&f.root(), binding);
        let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
        // As an OpenAI-style client holds them: content parts, a `name` the client chose, a
        // tool call with no content and its answer.
        let chat = json!({ "messages": [
            { "role": "system", "content": "You are a helpful travel assistant." },
            { "role": "user", "content": format!("I moved to Lisbon last month ({user_actor})."), "id": "u-1", "name": "admin" },
            { "role": "assistant", "content": format!("You might enjoy the Alfama district ({user_actor})."), "refusal": null },
            { "role": "developer", "content": [{ "type": "text", "text": "Answer briefly." }] },
            { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function" }] },
            { "role": "tool", "tool_call_id": "call_1", "content": [
                { "type": "text", "text": format!("Weather in Lisbon: 21C, sunny ({user_actor}).") },
                { "type": "image_url", "image_url": { "url": "data:," } },
            ] },
        ] });
        let (status, body) = call(c.post(api("messages")).json(&chat)).await;
        assert_eq!(status, 200, "{body}");
        let results = body["results"].as_array().unwrap();
        assert_eq!(results.len(), 6, "{body}");
        for (index, why) in [(0, "a prompt"), (3, "a prompt"), (4, "no text")] {
            assert!(results[index].get("saved").is_none() && results[index].get("error").is_none(), "{body}");
            assert!(results[index]["skipped"].as_str().unwrap().starts_with(why), "{body}");
        }
        assert_eq!(results[5]["saved"]["chunks"][0]["status"], "candidate", "a tool's words wait: {body}");
        let said = &results[1]["saved"]["chunks"][0];
        assert_eq!(said["status"], "active", "{body}");
        let (_, node) = call(c.get(api("get")).query(&[("id", said["leaf_id"].as_str().unwrap())])).await;
        assert_eq!(
            (node["actor"].as_str(), node["source"].as_str()),
            (Some(user_actor), Some("message:u-1")),
            "{node}"
        );
        assert_eq!(results[2]["saved"]["chunks"][0]["status"], "candidate", "the assistant's suggestion: {body}");

        // One bad item refuses the request, naming the item; nothing of it is written.
        let balcony = json!({ "text": format!("The Lisbon flat has a balcony ({user_actor}).") });
        let bad = json!({ "items": [balcony, { "text": "   " }] });
        let (status, body) = call(c.post(api("upsert_batch")).json(&bad)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().starts_with("`items[1]`"), "{body}");
        let (_, pack) = call(c.post(api("retrieve")).json(&json!({ "query": "Lisbon flat balcony" }))).await;
        let written = pack["evidence"].to_string().contains(&format!("balcony ({user_actor})"));
        assert!(!written, "nothing half-written: {pack}");
        let floor =
            json!({ "text": format!("The Lisbon flat is on the third floor ({user_actor})."), "labels": ["home"] });
        let (status, body) = call(c.post(api("upsert_batch")).json(&json!({ "items": [balcony, floor] }))).await;
        assert_eq!(status, 200, "{body}");
        for result in body["results"].as_array().unwrap() {
            assert_eq!(result["saved"]["chunks"][0]["status"], "active", "{body}");
        }
        for empty in [json!({ "messages": [] }), json!({ "items": [] })] {
            let path = if empty.get("items").is_some() { "upsert_batch" } else { "messages" };
            let (status, body) = call(c.post(api(path)).json(&empty)).await;
            assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
        }
    }
}

/// A pack for a model: with `"format": "compact"`, each memory once with a short why, nothing
/// null, and the text a model reads; a question memory knows nothing about says so.
/// A save's reply names what it replaced, with the attribute and both values, so an agent
/// can tell the person ("I've updated where Elif works"); and what it may have replaced but
/// did not, which stays current. The replaced memory is listed with its rule in the review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_says_what_it_replaced() {
    let f = fixture();
    let c = reqwest::Client::new();
    let server = serve(&f.root(), &["--speaker", "user"]);
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let (_, first) = call(c.post(api("upsert")).json(&json!({"text": "Elif works at the Ankara branch."}))).await;
    let ankara = first["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    let (status, moved) =
        call(c.post(api("upsert")).json(&json!({"text": "Elif got transferred to the Izmir branch in June."}))).await;
    assert_eq!(status, 200, "{moved}");
    let replaced = &moved["chunks"][0]["replaced"][0];
    assert_eq!(replaced["leaf_id"], ankara.as_str(), "{moved}");
    assert_eq!((replaced["attribute"].as_str(), replaced["rule"].as_str()), (Some("workplace"), Some("one_value")));
    assert_eq!((replaced["was"].as_str(), replaced["now"].as_str()), (Some("Ankara branch"), Some("Izmir branch")));
    let message = moved["message"].as_str().unwrap();
    assert!(message.contains(&format!("It replaced {ankara}")) && message.contains("Izmir branch"), "{message}");
    // Unproven: the older memory says more than where Elif works, so it is only marked.
    let (_, with_more) =
        call(c.post(api("upsert")).json(&json!({"text": "Omar lives in Porto with his sister and their dog."}))).await;
    let porto = with_more["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    let (_, doubted) = call(c.post(api("upsert")).json(&json!({"text": "Omar moved to Lyon."}))).await;
    assert_eq!(doubted["chunks"][0]["possibly_outdated"][0]["leaf_id"], porto.as_str(), "{doubted}");
    assert!(doubted["message"].as_str().unwrap().contains("both stay current"), "{doubted}");

    // The profile says what is current now and what it replaced, for the subject asked.
    let (status, elif) = call(c.get(api("profile")).query(&[("subject", "Elif")])).await;
    assert_eq!(status, 200, "{elif}");
    assert_eq!(elif["subjects"].as_array().map(Vec::len), Some(1), "{elif}");
    let work = &elif["subjects"][0]["facts"][0];
    assert_eq!(
        (work["attribute"].as_str(), work["current"][0]["value"].as_str()),
        (Some("workplace"), Some("Izmir branch"))
    );
    assert_eq!(work["history"][0]["value"], "Ankara branch", "{elif}");
    assert_eq!(work["history"][0]["leaf"], ankara.as_str(), "{elif}");
    let (_, everyone) = call(c.get(api("profile"))).await;
    let names: Vec<&str> =
        everyone["subjects"].as_array().unwrap().iter().filter_map(|s| s["subject"]["key"].as_str()).collect();
    assert!(names.contains(&"elif") && names.contains(&"omar"), "{everyone}");
    let (status, bad) = call(c.get(api("profile")).query(&[("subject", "x".repeat(201))])).await;
    assert_eq!((status, bad["error"]["code"].as_str()), (400, Some("invalid_request")), "{bad}");
    let (status, unknown) = call(c.get(api("profile")).query(&[("who", "Elif")])).await;
    assert_eq!(status, 400, "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_packs_are_small_and_say_when_nothing_is_relevant() {
    let f = fixture();
    let server = serve(&f.root(), &[]);
    let c = reqwest::Client::new();
    let retrieve = format!("{}/api/v1/memory/retrieve", server.base);
    let ask = |query: &str| json!({ "query": query, "format": "compact" });
    let (status, full) = call(c.post(&retrieve).json(&json!({ "query": "when does Dana like meetings?" }))).await;
    assert_eq!(status, 200, "{full}");
    let (status, compact) = call(c.post(&retrieve).json(&ask("when does Dana like meetings?"))).await;
    assert_eq!(status, 200, "{compact}");
    assert_eq!(compact["answer"], "found");
    assert_eq!(compact["memories"][0]["id"], full["evidence"][0]["node_id"]["id"]);
    assert!(compact["text"].as_str().unwrap().contains("morning meetings"), "{compact}");
    assert!(!compact.to_string().contains("null"), "nothing null: {compact}");
    let (full_size, compact_size) = (full.to_string().len(), compact["text"].as_str().unwrap().len());
    assert!(compact_size * 4 < full_size, "compact {compact_size} vs full {full_size} characters");

    let (_, nothing) = call(c.post(&retrieve).json(&ask("What is the capital of France?"))).await;
    assert_eq!(nothing["answer"], "nothing_relevant", "{nothing}");
    assert!(nothing.get("memories").is_none(), "{nothing}");
    // A token budget bounds a full pack's evidence too.
    let (status, body) = call(c.post(&retrieve).json(&json!({ "query": "Dana", "max_tokens": 50 }))).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["coverage"]["chars"].as_u64().unwrap() <= 200, "{body}");
    let (status, body) = call(c.post(&retrieve).json(&json!({ "query": "Dana", "max_tokens": 20 }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
}

/// Who is speaking is the server's binding: no request field makes a save a person's or an
/// integration's, so nothing an agent sends skips review in a project (issue 18, defect 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_choose_who_is_speaking() {
    let f = fixture();
    let code = |body: &Value| body["error"]["code"].as_str().map(str::to_owned);
    for binding in [&[][..], &["--speaker", "user"][..]] {
        let mut args = vec!["serve", "--http", "--listen", "127.0.0.1:0", "--project", "p1"];
        args.extend_from_slice(binding);
        let server = serve_with(&f.root(), &args);
        let c = reqwest::Client::new();
        let upsert = format!("{}/api/v1/memory/upsert", server.base);
        for actor in ["integration", "user", "agent"] {
            let claim = json!({ "text": format!("The p1 budget is frozen ({actor})."), "actor": actor });
            let (status, body) = call(c.post(&upsert).json(&claim)).await;
            assert_eq!((status, code(&body).as_deref()), (400, Some("invalid_request")), "{actor}: {body}");
            assert!(body["error"]["message"].as_str().unwrap().contains("unknown field `actor`"), "{body}");
        }
        let quoted = json!({ "text": format!("The p1 budget is frozen {binding:?}."), "message_id": "m-1" });
        let (status, body) = call(c.post(&upsert).json(&quoted)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["chunks"][0]["status"], "candidate", "{binding:?}: a project save waits for a person: {body}");
    }
}

/// Sends `request` as raw bytes on a new connection and returns what came back before the
/// server closed it (or after `wait`).
fn raw_exchange(base: &str, request: &[u8], wait: Duration) -> String {
    use std::io::Read;
    let addr = base.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// Defect 14: headers that decide who may ask must come once; a client that never finishes
/// its headers is cut off; MCP sessions are bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_server_bounds_what_clients_can_hold_and_refuses_doubled_headers() {
    let f = fixture();
    let server = serve(&f.root(), &["--header-read-timeout-ms", "400", "--max-mcp-sessions", "2"]);
    let host = server.base.strip_prefix("http://").unwrap().to_owned();
    for doubled in [
        format!("Host: {host}\r\nHost: evil.example"),
        format!("Host: {host}\r\nOrigin: http://{host}\r\nOrigin: https://evil.example"),
        format!("Host: {host}\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b"),
    ] {
        let request = format!("GET /api/v1/memory/status HTTP/1.1\r\n{doubled}\r\nConnection: close\r\n\r\n");
        let answer = raw_exchange(&server.base, request.as_bytes(), Duration::from_secs(5));
        assert!(answer.starts_with("HTTP/1.1 400"), "{doubled:?}: {answer}");
        assert!(answer.contains("more than one"), "{answer}");
    }
    // Half-open connections: headers begun and never finished are closed after the deadline.
    let started = Instant::now();
    let stalled: Vec<_> = (0..40)
        .map(|_| {
            let base = server.base.clone();
            std::thread::spawn(move || {
                raw_exchange(&base, b"GET /api/v1/memory/status HTTP/1.1\r\nHost: x", Duration::from_secs(20))
            })
        })
        .collect();
    for connection in stalled {
        connection.join().unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(10), "stalled connections were held for {:?}", started.elapsed());
    // The server still answers.
    let c = reqwest::Client::new();
    let (status, _) = call(c.get(format!("{}/api/v1/memory/status", server.base))).await;
    assert_eq!(status, 200);

    // MCP sessions past the limit are refused with a way out, not piled up.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    });
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = c
            .post(format!("{}/mcp", server.base))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        if response.status().as_u16() == 503 {
            assert!(response.headers().contains_key("retry-after"));
            let body: Value = response.json().await.unwrap();
            assert!(body["error"]["message"].as_str().unwrap().contains("MCP sessions"), "{body}");
        }
    }
    assert_eq!(statuses, [200, 200, 503], "two sessions, then a refusal");
}

/// What a hostile review found beside the bounds above: a body dripped after quick headers, a
/// key given twice (over the API and over MCP), an `Origin` whose port is left out, and many
/// sessions opened at once racing past the session limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_bounded_in_time_keys_come_once_origins_carry_their_port_and_sessions_cannot_race_the_limit() {
    let f = fixture();
    let token = "a-token-long-enough-to-be-accepted";
    let args = ["--body-read-timeout-ms", "3000", "--max-mcp-sessions", "3", "--token", token];
    let server = serve(&f.root(), &[&args[..], &["--allowed-host", "proxy.example"]].concat());
    let host = server.base.strip_prefix("http://").unwrap().to_owned();
    let post = |authorization: &str, length: usize| {
        format!(
            "POST /api/v1/memory/upsert HTTP/1.1\r\nHost: {host}\r\n{authorization}Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{\"text\":"
        )
    };
    // Without the token, nothing of the body is waited for.
    let started = Instant::now();
    let answer = raw_exchange(&server.base, post("", 200_000).as_bytes(), Duration::from_secs(20));
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(started.elapsed() < Duration::from_millis(1500), "an unauthorized body was waited for");
    let bearer = format!("Authorization: Bearer {token}\r\n");
    // A body announced too large is refused before it is read.
    let started = Instant::now();
    let answer = raw_exchange(&server.base, post(&bearer, 10_000_000).as_bytes(), Duration::from_secs(20));
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(started.elapsed() < Duration::from_millis(1500), "a body announced too large was waited for");
    // A body dripped after quick headers is cut off at the deadline.
    let started = Instant::now();
    let answer = raw_exchange(&server.base, post(&bearer, 200_000).as_bytes(), Duration::from_secs(20));
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(10), "a dripped body held the connection {:?}", started.elapsed());

    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    let c = reqwest::Client::builder().default_headers(headers).build().unwrap();
    let doubled = r#"{"text":"The shell is zsh.","text":"The shell is fish."}"#;
    let (status, body) = call(
        c.post(format!("{}/api/v1/memory/upsert", server.base))
            .header("content-type", "application/json")
            .body(doubled),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("\"text\" twice"), "{body}");
    let doubled_tool = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","id":2,"params":{}}"#;
    let response = c
        .post(format!("{}/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(doubled_tool)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);

    for origin in ["http://localhost", "http://127.0.0.1", "null", "http://evil.example:80"] {
        let (status, _) = call(c.get(format!("{}/api/v1/memory/status", server.base)).header("origin", origin)).await;
        assert_eq!(status, 403, "{origin} is another origin than {host}");
    }
    let (status, _) =
        call(c.get(format!("{}/api/v1/memory/status", server.base)).header("origin", format!("http://{host}"))).await;
    assert_eq!(status, 200);
    // A configured name is a proxy's, which browsers reach on their scheme's default port.
    let status_via = |origin: &'static str| {
        c.get(format!("{}/api/v1/memory/status", server.base)).header("host", "proxy.example").header("origin", origin)
    };
    for origin in ["https://proxy.example", "http://proxy.example", "https://proxy.example:443"] {
        assert_eq!(call(status_via(origin)).await.0, 200, "{origin}");
    }
    assert_eq!(call(status_via("https://proxy.example:8443")).await.0, 403, "another port is another origin");

    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    });
    let racing: Vec<_> = (0..30)
        .map(|_| {
            let c = c.clone();
            let url = format!("{}/mcp", server.base);
            let initialize = initialize.clone();
            tokio::spawn(async move {
                let response = c
                    .post(url)
                    .header("accept", "application/json, text/event-stream")
                    .json(&initialize)
                    .send()
                    .await
                    .unwrap();
                response.status().as_u16()
            })
        })
        .collect();
    let mut opened = 0;
    for racer in racing {
        match racer.await.unwrap() {
            200 => opened += 1,
            503 => {}
            other => panic!("status {other}"),
        }
    }
    assert!((1..=3).contains(&opened), "{opened} sessions opened against a limit of 3");
}

/// Correctness under load, not a timing: every one of 200 concurrent retrievals succeeds with
/// a full pack. (Latency figures come from `cargo xtask load`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_retrievals_all_succeed() {
    let f = fixture();
    let server = serve(&f.root(), &[]);
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build().unwrap();
    let url = format!("{}/api/v1/memory/retrieve", server.base);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let (client, url) = (client.clone(), url.clone());
        tasks.spawn(async move {
            let query = ["when does Dana like meetings?", "who leads the migration?", "favorite editor"][i % 3];
            let response = client.post(&url).json(&json!({ "query": query })).send().await?;
            let status = response.status().as_u16();
            let pack: Value = response.json().await?;
            Ok::<_, reqwest::Error>((status, pack))
        });
    }
    let mut answered = 0;
    while let Some(done) = tasks.join_next().await {
        let (status, pack) = done.unwrap().expect("no transport error");
        assert_eq!(status, 200, "{pack}");
        assert!(!pack["evidence"].as_array().unwrap().is_empty(), "{pack}");
        answered += 1;
    }
    assert_eq!(answered, 200);
    assert!(started.elapsed() < Duration::from_secs(120), "no request hung");
}

/// `GET /dream` (and the MCP `memory_dream` tool): the consolidation reports cut to the bound
/// chain — another scope's changes, and the run's totals across scopes, stay out; bad limits
/// are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dream_shows_only_the_bound_chains_consolidation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    assert!(arbor(&root, &["init"], None).status.success());
    for (scope, name) in [(BOUND, "Maya"), (OTHER, "Quentin")] {
        let events = format!(
            "{}\n{}\n",
            json!({ "text": format!("{name} lives in Porto."), "actor": "assistant", "observed_at": "2026-01-01T00:00:00Z" }),
            json!({ "text": format!("{name} just moved to Amsterdam."), "actor": "assistant", "observed_at": "2026-05-01T00:00:00Z" }),
        );
        let mut args = vec!["ingest"];
        args.extend_from_slice(scope);
        assert!(arbor(&root, &args, Some(&events)).status.success());
        let mut list = vec!["--json", "review", "list"];
        list.extend_from_slice(scope);
        let pending: Value = serde_json::from_slice(&arbor(&root, &list, None).stdout).unwrap();
        for item in pending.as_array().unwrap() {
            let mut confirm = vec!["review", "confirm", item["leaf"]["id"].as_str().unwrap()];
            confirm.extend_from_slice(scope);
            assert!(arbor(&root, &confirm, None).status.success());
        }
    }
    let done = arbor(&root, &["consolidate"], None);
    assert!(String::from_utf8_lossy(&done.stdout).contains("2 changes applied"), "{done:?}");

    let server = serve(&root, &[]);
    let c = reqwest::Client::new();
    let api = |path: &str| format!("{}/api/v1/memory/{path}", server.base);
    let (status, body) = call(c.get(api("dream"))).await;
    assert_eq!(status, 200, "{body}");
    let reports = body["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{body}");
    let markdown = reports[0]["markdown"].as_str().unwrap();
    assert!(markdown.contains("## conversation:c1") && markdown.contains("superseded by"), "{markdown}");
    // (Leaf ids are random letters, so the other scope is looked for by its full name.)
    let other = !markdown.contains("conversation:c2") && !markdown.contains("2 changes");
    assert!(other, "nothing of another scope: {markdown}");
    let (status, body) = call(c.get(api("dream")).query(&[("limit", "0")])).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
}

/// The memory centre is the store owner's: its page holds no data and is served to anyone, with
/// a policy that forbids inline script and framing; its operator endpoints open only with the
/// owner's token — never with the agent's token or on an open loopback port — read only the
/// bound chain, and write settings only as `arbor` would open them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_centre_opens_only_for_the_owner_and_only_on_the_bound_chain() {
    let f = fixture();
    // A memory its person marked restricted: the owner sees it, no agent ever does.
    let restricted = r#"{"text": "My therapist moved our session to Friday.", "hints": {"sensitivity": "restricted"}}"#;
    let mut args = vec!["--json", "ingest"];
    args.extend_from_slice(BOUND);
    let output = arbor(&f.root(), &args, Some(&format!("{restricted}\n")));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let private = report["results"][0]["report"]["chunks"][0]["leaf_id"].as_str().expect("kept").to_owned();
    let (agent, owner) = ("the-agents-own-token-0001", "the-owners-own-token-0002");
    let server = serve(&f.root(), &["--token", agent, "--operator-token", owner]);
    let c = reqwest::Client::new();
    let page = c.get(format!("{}/", server.base)).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.unwrap();
    assert!(html.contains("memory centre") && !html.contains("Dana"), "the page holds no memory");

    let api = |path: &str| format!("{}/api/v1/memory{path}", server.base);
    for path in ["/memories", "/health", "/audit", "/settings", "/review"] {
        let (status, body) = call(c.get(api(path)).bearer_auth(agent)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{path} with the agent's token");
        let (status, _) = call(c.get(api(path))).await;
        assert_eq!(status, 401, "{path} without a token");
    }
    // The role is checked before the body is read: an agent's token is refused alike whatever
    // it sends, and learns nothing of what the body would have meant.
    for path in
        ["/review/confirm", "/review/reject", "/review/edit", "/review/keep_both", "/restore", "/retired/restore"]
    {
        let bad = c.post(api(path)).bearer_auth(agent).header("content-type", "text/plain").body("not json");
        let (status, body) = call(bad).await;
        assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "{path}: {body}");
    }
    let bad = c.put(api("/settings")).bearer_auth(agent).json(&json!({"no": "such field"}));
    let (status, body) = call(bad).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")), "settings: {body}");
    let (mine, _) = &f.mine[1];
    let (status, _) = call(c.get(api(&format!("/usage?id={mine}"))).bearer_auth(agent)).await;
    assert_eq!(status, 403);
    let writes = [
        ("/restore", json!({"id": mine, "current_version": 1})),
        ("/review/edit", json!({"id": mine, "text": "Dana leads nothing."})),
        ("/review/keep_both", json!({"id": mine})),
    ];
    for (path, request) in &writes {
        let (status, body) = call(c.post(api(path)).bearer_auth(agent).json(request)).await;
        assert_eq!(status, 403, "{path} with the agent's token: {body}");
    }

    // A suggestion the agent made: the owner edits it (still waiting), then keeps it beside
    // what is current.
    let (_, saved) = call(
        c.post(api("/upsert"))
            .bearer_auth(agent)
            .json(&json!({"text": "Dana mentors Quentin.", "kind": "relationship"})),
    )
    .await;
    let suggestion = saved["chunks"][0]["leaf_id"].as_str().unwrap().to_owned();
    assert_eq!(saved["chunks"][0]["status"], "candidate", "{saved}");
    let edit = json!({"id": suggestion, "text": "Dana mentors Quentin and Priya."});
    let (status, edited) = call(c.post(api("/review/edit")).bearer_auth(owner).json(&edit)).await;
    assert_eq!((status, edited["status"].as_str()), (200, Some("candidate")), "{edited}");
    let edited_id = edited["leaf_id"].as_str().unwrap();
    assert_ne!(edited_id, suggestion);
    let keep = json!({"id": edited_id});
    let (status, body) = call(c.post(api("/review/keep_both")).bearer_auth(owner).json(&keep)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("conflict")),
        "keeping both needs a conflict: {body}"
    );
    let (status, _) = call(c.post(api("/review/confirm")).bearer_auth(owner).json(&keep)).await;
    assert_eq!(status, 200);
    // An older statement of the agent's about a current memory's subject waits as a conflict;
    // both may be true, and the owner keeps both.
    let (editor, _) = &f.mine[2];
    let older = json!({"text": "My favorite editor is Vim.", "observed_at": "2020-01-01T00:00:00Z"});
    let (_, saved) = call(c.post(api("/upsert")).bearer_auth(agent).json(&older)).await;
    let chunk = &saved["chunks"][0];
    assert_eq!(
        (chunk["status"].as_str(), chunk["replaces"].as_str()),
        (Some("candidate"), Some(editor.as_str())),
        "{saved}"
    );
    let (_, pending) = call(c.get(api("/review")).bearer_auth(owner)).await;
    let conflict = chunk["leaf_id"].as_str().unwrap();
    let item = pending["items"].as_array().unwrap().iter().find(|i| i["id"] == conflict).expect("listed");
    assert!(item["conflict"].is_string(), "{item}");
    let (status, kept) = call(c.post(api("/review/keep_both")).bearer_auth(owner).json(&json!({"id": conflict}))).await;
    assert_eq!((status, kept["status"].as_str()), (200, Some("active")), "{kept}");
    assert!(kept["superseded"].as_array().unwrap().is_empty(), "{kept}");
    let (_, node) = call(c.get(api(&format!("/get?id={editor}"))).bearer_auth(agent)).await;
    assert_eq!(node["status"], "active", "the current memory stays current: {node}");

    // The owner lists the bound chain's memories and nothing of another scope's.
    let (status, listed) = call(c.get(api("/memories")).bearer_auth(owner)).await;
    assert_eq!(status, 200, "{listed}");
    let ids: Vec<&str> = listed["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    for (id, _) in &f.mine {
        assert!(ids.contains(&id.as_str()), "{id} listed");
    }
    for (id, _) in &f.theirs {
        assert!(!ids.contains(&id.as_str()), "another scope's {id} is not listed");
        let (status, body) = call(c.get(api(&format!("/get?id={id}"))).bearer_auth(owner)).await;
        assert_eq!(status, 404, "{body}");
        let (status, _) = call(c.get(api(&format!("/usage?id={id}"))).bearer_auth(owner)).await;
        assert_eq!(status, 404, "the owner's token reads the bound chain only");
    }
    assert!(ids.contains(&private.as_str()), "the owner's list holds the restricted memory");
    let (status, node) = call(c.get(api(&format!("/get?id={private}"))).bearer_auth(owner)).await;
    assert_eq!((status, node["sensitivity"].as_str()), (200, Some("restricted")), "{node}");
    let (status, _) = call(c.get(api(&format!("/get?id={private}"))).bearer_auth(agent)).await;
    assert_eq!(status, 404, "an agent never reads a restricted memory");
    let (_, node) = call(c.get(api(&format!("/get?id={mine}"))).bearer_auth(owner)).await;
    assert_eq!(node["text"], "Dana is leading the migration to Postgres.", "the prose, for correcting");
    let (_, as_agent) = call(c.get(api(&format!("/get?id={mine}"))).bearer_auth(agent)).await;
    assert!(as_agent.get("text").is_none(), "agents read the document only");
    let (status, health) = call(c.get(api("/health")).bearer_auth(owner)).await;
    assert_eq!(status, 200, "{health}");
    assert!(!health.to_string().contains("conversation:c2"), "health of the bound chain only: {health}");
    let (status, audit) = call(c.get(api("/audit?limit=5")).bearer_auth(owner)).await;
    assert_eq!(status, 200, "{audit}");
    let events = audit["events"].as_array().unwrap();
    assert!(!events.is_empty() && events.len() <= 5, "{audit}");
    assert!(!audit.to_string().contains("conversation:c2"), "the audit log of the bound chain only: {audit}");
    let by_owner = audit["events"].as_array().unwrap().iter().filter(|e| e["actor"] == "operator:http").count();
    assert!(by_owner >= 2, "the owner's confirmation and keep-both are audited as the owner's: {audit}");

    // Settings: refused edits change nothing; a good one is written whole.
    let config_path = f.root().join("arbor.json");
    let before = std::fs::read_to_string(&config_path).unwrap();
    let (status, settings) = call(c.get(api("/settings")).bearer_auth(owner)).await;
    assert_eq!(status, 200, "{settings}");
    let shown: Value = serde_json::from_str(settings["text"].as_str().unwrap()).unwrap();
    assert_eq!(shown, serde_json::from_str::<Value>(&before).unwrap(), "the file's settings");
    let (status, _) = call(c.put(api("/settings")).bearer_auth(agent).json(&json!({"text": before}))).await;
    assert_eq!(status, 403, "an agent never writes settings");
    let mut moved: Value = serde_json::from_str(&before).unwrap();
    moved["backend"] = json!("postgres");
    let refusals = [
        (json!({"text": moved.to_string()}), "cannot be changed here"),
        (json!({"text": "{not json"}), "not valid JSON"),
        (json!({"text": before.replace("\"format\"", "\"formt\"")}), "not an Arbor store configuration"),
    ];
    for (request, expected) in refusals {
        let (status, body) = call(c.put(api("/settings")).bearer_auth(owner).json(&request)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (422, Some("unprocessable")), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains(expected), "{body}");
        assert_eq!(std::fs::read_to_string(&config_path).unwrap(), before, "a refused edit changes nothing");
    }
    let mut stricter: Value = serde_json::from_str(&before).unwrap();
    stricter["health"] = json!({"max_candidate_wait_days": 3});
    let form = c
        .put(api("/settings"))
        .bearer_auth(owner)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("text={stricter}"));
    assert_eq!(call(form).await.0, 415, "a form (what another site could make a browser send) is refused");
    let foreign = c
        .put(api("/settings"))
        .bearer_auth(owner)
        .header("origin", "http://evil.example")
        .json(&json!({"text": stricter.to_string()}));
    assert_eq!(call(foreign).await.0, 403, "a foreign origin is refused");
    let (status, saved) =
        call(c.put(api("/settings")).bearer_auth(owner).json(&json!({"text": stricter.to_string()}))).await;
    assert_eq!(status, 200, "{saved}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    assert_eq!(written["health"]["max_candidate_wait_days"], 3);
    drop(server);

    // The owner's token cannot be the agent's, and an open loopback server makes one and
    // prints it in the centre's address, once, after `#`.
    let output = arbor(
        &f.root(),
        &[
            "serve",
            "--http",
            "--listen",
            "127.0.0.1:0",
            "--conversation",
            "c1",
            "--token",
            agent,
            "--operator-token",
            agent,
        ],
        None,
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("must differ from --token"), "{output:?}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command.env_remove("ARBOR_API_TOKEN").env_remove("ARBOR_OPERATOR_TOKEN").env("ARBOR_EMBEDDER", "hashing");
    command.arg("--root").arg(f.root()).args(["serve", "--http", "--listen", "127.0.0.1:0"]).args(BOUND);
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    let centre = lines.next().unwrap().unwrap();
    let _stop = support::Server { child, base: String::new() };
    let base = format!("http://{}", first.strip_prefix("listening on ").unwrap().split(": ").next().unwrap());
    assert!(
        centre.contains("centre-token") && !centre.contains("#operator="),
        "not a terminal: no token printed: {centre}"
    );
    let token_file = f.root().join("centre-token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o077, 0, "the owner's alone");
    }
    let made = std::fs::read_to_string(&token_file).unwrap();
    assert!(made.len() >= 32, "{made}");
    let review = format!("{base}/api/v1/memory/review");
    assert_eq!(call(c.get(&review)).await.0, 403, "an open loopback port is an agent's, not the owner's");
    assert_eq!(call(c.get(&review).bearer_auth(&made)).await.0, 200);
}
