//! A recording mock of an OpenAI-compatible server, on loopback: every request's path, bearer
//! token and body is kept for the test to inspect, and a script the test writes answers each
//! one (status, headers, body, delay).

#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub authorization: Option<String>,
    pub body: String,
}

impl Recorded {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("requests are JSON")
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub retry_after: Option<u64>,
    pub delay: Duration,
}

impl Reply {
    pub fn json(body: Value) -> Reply {
        Reply { status: 200, body: body.to_string(), retry_after: None, delay: Duration::ZERO }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply { status, body: body.to_owned(), retry_after: None, delay: Duration::ZERO }
    }

    pub fn raw(body: &str) -> Reply {
        Reply { status: 200, body: body.to_owned(), retry_after: None, delay: Duration::ZERO }
    }

    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    pub fn retry_after(mut self, seconds: u64) -> Reply {
        self.retry_after = Some(seconds);
        self
    }

    /// A chat completion whose message content is `content` (a JSON answer, usually).
    pub fn chat(content: &str) -> Reply {
        Reply::chat_finished(content, "stop")
    }

    pub fn chat_finished(content: &str, finish_reason: &str) -> Reply {
        Reply::json(json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": content },
                "finish_reason": finish_reason,
            }],
        }))
    }
}

/// An endpoint on `server` for tests: a 5 s timeout, 2 retries 10 ms apart.
pub fn endpoint(server: &MockServer) -> arbor_adapters_models::EndpointConfig {
    let mut config = arbor_adapters_models::EndpointConfig::new(&server.base_url, "test-model");
    config.timeout = Duration::from_secs(5);
    config.backoff = Duration::from_millis(10);
    config.max_retries = 2;
    config
}

/// Decides the reply to the `n`th request (0-based) from its path and JSON body.
pub type Script = dyn Fn(usize, &str, &Value) -> Reply + Send + Sync;

#[derive(Clone)]
struct Shared {
    recorded: Arc<Mutex<Vec<Recorded>>>,
    script: Arc<Script>,
}

/// A running mock server; stops when dropped.
pub struct MockServer {
    pub base_url: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    pub async fn start(script: impl Fn(usize, &str, &Value) -> Reply + Send + Sync + 'static) -> MockServer {
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { recorded: recorded.clone(), script: Arc::new(script) };
        let app = Router::new().fallback(handle).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("mock server");
        });
        MockServer { base_url: format!("http://{address}/v1"), recorded, task }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.recorded.lock().unwrap().len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(shared): State<Shared>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body = String::from_utf8_lossy(&body).into_owned();
    let path = uri.path().to_owned();
    let n = {
        let mut recorded = shared.recorded.lock().unwrap();
        recorded.push(Recorded {
            path: path.clone(),
            authorization: headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned),
            body: body.clone(),
        });
        recorded.len() - 1
    };
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let reply = (shared.script)(n, &path, &value);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let status = StatusCode::from_u16(reply.status).unwrap();
    let mut response = (status, [("content-type", "application/json")], reply.body).into_response();
    if let Some(seconds) = reply.retry_after {
        response.headers_mut().insert("retry-after", seconds.to_string().parse().unwrap());
    }
    response
}

/// The `embeddings` answer for a request: a deterministic vector per input (`dims` values,
/// not normalized, so the client's normalization is exercised), listed in reverse order.
pub fn embeddings_reply(body: &Value, dims: usize) -> Reply {
    let inputs = body["input"].as_array().cloned().unwrap_or_default();
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, input)| {
            let text = input.as_str().unwrap_or_default();
            let mut vector = vec![0.0f32; dims];
            for (i, byte) in text.bytes().enumerate() {
                vector[(i + byte as usize) % dims] += 1.0;
            }
            json!({ "object": "embedding", "index": index, "embedding": vector })
        })
        .collect();
    data.reverse();
    Reply::json(json!({ "object": "list", "data": data, "model": body["model"] }))
}
