//! The HTTP client shared by the OpenAI-compatible embedder and reasoner: one JSON POST with a
//! timeout, a rate limit, bounded concurrency, and bounded retries with exponential backoff
//! on the failures that retrying can fix (connection errors, timeouts, 429 and 5xx).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

use crate::error::ModelError;

/// Where an OpenAI-compatible endpoint is and how to talk to it. Works with OpenAI, Ollama
/// (`http://localhost:11434/v1`), vLLM, llama.cpp's server and anything else that speaks
/// `/v1/embeddings` and `/v1/chat/completions`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointConfig {
    /// The API root, including `/v1`: requests go to `{base_url}/embeddings` and
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer token when set. Never written to a store's configuration; the CLI
    /// reads it from an environment variable.
    #[serde(skip)]
    pub api_key: Option<String>,
    /// The longest a single request may take.
    pub timeout: Duration,
    /// How many times a failed request is tried again (so at most `1 + max_retries` tries).
    pub max_retries: u32,
    /// The first retry waits this long; each further one twice as long (at most 30 s), or what
    /// the server's `Retry-After` asks, whichever is longer.
    pub backoff: Duration,
    /// At most this many requests start per second (0: no limit).
    pub requests_per_second: f64,
    /// At most this many requests in flight at once.
    pub max_concurrent: usize,
}

impl std::fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("requests_per_second", &self.requests_per_second)
            .field("max_concurrent", &self.max_concurrent)
            .finish()
    }
}

impl EndpointConfig {
    /// Defaults for `model` at `base_url`: 30 s timeout, 3 retries from 500 ms, 4 in flight,
    /// no rate limit.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> EndpointConfig {
        EndpointConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
            max_retries: 3,
            backoff: Duration::from_millis(500),
            requests_per_second: 0.0,
            max_concurrent: 4,
        }
    }

    fn validate(&self) -> Result<(), ModelError> {
        let url = self.base_url.trim_end_matches('/');
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < "http://x".len() {
            return Err(ModelError::Config(format!("base URL {:?} is not an http(s) URL", self.base_url)));
        }
        if self.model.trim().is_empty() {
            return Err(ModelError::Config("the model name is empty".into()));
        }
        if self.timeout.is_zero() {
            return Err(ModelError::Config("the timeout must be positive".into()));
        }
        if !(self.requests_per_second.is_finite() && self.requests_per_second >= 0.0) {
            return Err(ModelError::Config("requests per second must be zero (no limit) or positive".into()));
        }
        if self.max_concurrent == 0 {
            return Err(ModelError::Config("at least one request must be allowed in flight".into()));
        }
        Ok(())
    }
}

/// A client for one endpoint.
#[derive(Debug)]
pub(crate) struct Client {
    http: reqwest::Client,
    config: EndpointConfig,
    in_flight: Semaphore,
    /// When the next request may start, under the rate limit.
    next_start: Mutex<Instant>,
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Error bodies are quoted in errors up to this many characters.
const QUOTED_BODY_CHARS: usize = 300;

impl Client {
    pub(crate) fn new(config: EndpointConfig) -> Result<Client, ModelError> {
        config.validate()?;
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("arbor/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Config(format!("building the HTTP client: {e}")))?;
        let in_flight = Semaphore::new(config.max_concurrent);
        Ok(Client { http, config, in_flight, next_start: Mutex::new(Instant::now()) })
    }

    pub(crate) fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// POSTs `body` to `{base_url}/{path}` and reads the answer as JSON, retrying what can be
    /// retried.
    pub(crate) async fn post<B: Serialize, A: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<A, ModelError> {
        let url = format!("{}/{}", self.config.base_url.trim_end_matches('/'), path);
        let _permit = self.in_flight.acquire().await.map_err(|e| ModelError::Inference(e.to_string()))?;
        let mut attempt = 0;
        loop {
            self.wait_for_rate_limit().await;
            let (error, retry_after) = match self.try_post(&url, body).await {
                Ok(text) => {
                    return serde_json::from_str(&text).map_err(|e| {
                        ModelError::malformed(format!("{url} answered with unexpected JSON: {e}: {}", quote(&text)))
                    });
                }
                Err(failure) => failure,
            };
            if attempt >= self.config.max_retries || !retryable(&error) {
                return Err(error);
            }
            let backoff = self.config.backoff.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
            let wait = retry_after.map_or(backoff, |asked| asked.min(MAX_BACKOFF).max(backoff));
            tracing::debug!(%url, attempt, ?wait, %error, "retrying a model request");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// One try: the answer's text on success; else the error and any `Retry-After` the server
    /// asked for.
    async fn try_post<B: Serialize>(&self, url: &str, body: &B) -> Result<String, (ModelError, Option<Duration>)> {
        let mut request = self.http.post(url).json(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| (self.transport_error(url, &e), None))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().await.map_err(|e| (self.transport_error(url, &e), None))?;
        if !status.is_success() {
            let error = ModelError::Status { url: url.to_owned(), status: status.as_u16(), body: quote(&text) };
            return Err((error, retry_after));
        }
        Ok(text)
    }

    fn transport_error(&self, url: &str, error: &reqwest::Error) -> ModelError {
        if error.is_timeout() {
            ModelError::Timeout { url: url.to_owned(), timeout: self.config.timeout }
        } else {
            // The whole chain: reqwest's own message is only "error sending request".
            let mut reason = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                reason.push_str(": ");
                reason.push_str(&cause.to_string());
                source = cause.source();
            }
            ModelError::Unreachable { url: url.to_owned(), reason }
        }
    }

    async fn wait_for_rate_limit(&self) {
        if self.config.requests_per_second <= 0.0 {
            return;
        }
        let interval = Duration::from_secs_f64(1.0 / self.config.requests_per_second);
        let start = {
            let mut next = self.next_start.lock().await;
            let start = (*next).max(Instant::now());
            *next = start + interval;
            start
        };
        tokio::time::sleep_until(start).await;
    }
}

/// Whether trying again may help: the network, a timeout, rate limiting, or a server error.
fn retryable(error: &ModelError) -> bool {
    match error {
        ModelError::Unreachable { .. } | ModelError::Timeout { .. } => true,
        ModelError::Status { status, .. } => *status == 429 || *status == 408 || (500..600).contains(status),
        _ => false,
    }
}

fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTED_BODY_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}
