//! What the HTTP server tells its operator: `/metrics` in Prometheus' text format (requests by
//! route and status, latency histograms by route, and per open store its jobs and memories),
//! and one log line per request at `-v` (method, route, status, milliseconds: never a query
//! string, a body or a token).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arbor_app::Arbor;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// Upper bounds of the latency buckets, in seconds: from a cached answer (a millisecond) to a
/// request that waited on a busy store.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The route a request is counted under: the router's pattern it matched (so every route
/// the router has is counted by its own name, and no list here can miss one), `/mcp` for the
/// MCP endpoint and anything under it (matched or not), and `other` for whatever matched no route — so a
/// scanner trying paths cannot grow the metrics without bound.
fn route_of(path: &str, matched: Option<&MatchedPath>) -> Arc<str> {
    // The MCP endpoint is a service nested whole (its own paths match no route pattern).
    if path == "/mcp" || path.starts_with("/mcp/") {
        return Arc::from("/mcp");
    }
    matched.map_or_else(|| Arc::from("other"), |matched| Arc::from(matched.as_str()))
}

#[derive(Debug, Default)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bucket, bound) in self.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }
}

/// Counts since the server started.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    requests: Mutex<BTreeMap<(Arc<str>, u16), u64>>,
    latency: Mutex<BTreeMap<Arc<str>, Histogram>>,
}

impl Metrics {
    fn record(&self, route: Arc<str>, status: u16, took: Duration) {
        *self.requests.lock().unwrap_or_else(PoisonError::into_inner).entry((route.clone(), status)).or_default() += 1;
        let mut latency = self.latency.lock().unwrap_or_else(PoisonError::into_inner);
        latency.entry(route).or_default().observe(took.as_secs_f64());
    }

    /// The text format, with each open store's figures (`stores`: a label and its engine).
    pub(crate) async fn render(&self, stores: &[(String, Arc<Arbor>)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP arbor_http_requests_total HTTP requests answered, by route and status.\n");
        out.push_str("# TYPE arbor_http_requests_total counter\n");
        for ((route, status), count) in self.requests.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            let _ = writeln!(out, "arbor_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}");
        }
        out.push_str("# HELP arbor_http_request_duration_seconds Time to answer a request, by route.\n");
        out.push_str("# TYPE arbor_http_request_duration_seconds histogram\n");
        for (route, histogram) in self.latency.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            let name = "arbor_http_request_duration_seconds";
            for (bound, count) in BUCKETS.iter().zip(histogram.buckets) {
                let _ = writeln!(out, "{name}_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}");
            }
            let _ = writeln!(out, "{name}_bucket{{route=\"{route}\",le=\"+Inf\"}} {}", histogram.count);
            let _ = writeln!(out, "{name}_sum{{route=\"{route}\"}} {}", histogram.sum);
            let _ = writeln!(out, "{name}_count{{route=\"{route}\"}} {}", histogram.count);
        }
        let mut jobs = String::new();
        let mut failed = String::new();
        let mut memories = String::new();
        for (store, arbor) in stores {
            let store = escape(store);
            match arbor.ports().store.counts().await {
                Ok(counts) => {
                    let _ = writeln!(jobs, "arbor_jobs_pending{{store=\"{store}\"}} {}", counts.jobs_pending);
                    let _ = writeln!(failed, "arbor_jobs_failed{{store=\"{store}\"}} {}", counts.jobs_dead);
                    for (status, count) in &counts.leaves_by_status {
                        let status = status.as_str();
                        let _ = writeln!(memories, "arbor_memories{{store=\"{store}\",status=\"{status}\"}} {count}");
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %arbor_ports::with_causes(&error), %store, "could not count a store for /metrics")
                }
            }
        }
        out.push_str("# HELP arbor_jobs_pending Background jobs (indexing, sealing, purging) waiting to run.\n");
        out.push_str("# TYPE arbor_jobs_pending gauge\n");
        out.push_str(&jobs);
        out.push_str("# HELP arbor_jobs_failed Background jobs that failed every retry.\n");
        out.push_str("# TYPE arbor_jobs_failed gauge\n");
        out.push_str(&failed);
        out.push_str("# HELP arbor_memories Memories held, by status.\n");
        out.push_str("# TYPE arbor_memories gauge\n");
        out.push_str(&memories);
        out
    }
}

/// A label value as the text format writes it.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Counts and times every request, and logs it at info level (`-v`).
pub(crate) async fn observe(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = route_of(request.uri().path(), request.extensions().get::<MatchedPath>());
    let method = request.method().clone();
    let response = next.run(request).await;
    let took = started.elapsed();
    let status = response.status().as_u16();
    tracing::info!(%method, route = &*route, status, ms = %format!("{:.1}", took.as_secs_f64() * 1000.0), "request");
    metrics.record(route, status, took);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route the router has is counted by its own pattern, the operator's routes, the
    /// daily view and the memory centre's page too (a hand-kept list missed them); what matches
    /// no route is one `other`.
    #[tokio::test]
    async fn every_route_is_counted_by_its_pattern_and_the_rest_as_other() {
        use axum::Router;
        use axum::routing::get;
        use tower::ServiceExt;
        let metrics = Arc::new(Metrics::default());
        let api =
            Router::new().route("/daily", get(|| async { "ok" })).route("/retired/restore", get(|| async { "ok" }));
        let app = Router::new()
            .route("/", get(|| async { "page" }))
            .nest("/api/v1/memory", api)
            .nest("/mcp", Router::new().fallback(|| async { "mcp" }))
            .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "no") })
            .layer(axum::middleware::from_fn_with_state(metrics.clone(), observe));
        for path in
            ["/", "/api/v1/memory/daily", "/api/v1/memory/retired/restore", "/mcp", "/mcp/x", "/wp-admin/login.php"]
        {
            let request = axum::http::Request::get(path).body(axum::body::Body::empty()).unwrap();
            app.clone().oneshot(request).await.unwrap();
        }
        let text = metrics.render(&[]).await;
        for (route, status, count) in [
            ("/", 200, 1),
            ("/api/v1/memory/daily", 200, 1),
            ("/api/v1/memory/retired/restore", 200, 1),
            ("/mcp", 200, 2),
            ("other", 404, 1),
        ] {
            let line = format!("arbor_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}");
            assert!(text.contains(&line), "{line} missing from\n{text}");
        }
    }

    #[tokio::test]
    async fn the_text_format_counts_and_buckets() {
        let metrics = Metrics::default();
        metrics.record("/api/v1/memory/retrieve".into(), 200, Duration::from_millis(3));
        metrics.record("/api/v1/memory/retrieve".into(), 200, Duration::from_millis(30));
        metrics.record("other".into(), 404, Duration::from_micros(200));
        let text = metrics.render(&[]).await;
        assert!(
            text.contains("arbor_http_requests_total{route=\"/api/v1/memory/retrieve\",status=\"200\"} 2"),
            "{text}"
        );
        assert!(text.contains("arbor_http_requests_total{route=\"other\",status=\"404\"} 1"), "{text}");
        let bucket = |le: &str| {
            format!("arbor_http_request_duration_seconds_bucket{{route=\"/api/v1/memory/retrieve\",le=\"{le}\"}}")
        };
        assert!(text.contains(&format!("{} 0", bucket("0.001"))), "{text}");
        assert!(text.contains(&format!("{} 1", bucket("0.005"))), "{text}");
        assert!(text.contains(&format!("{} 2", bucket("0.05"))), "{text}");
        assert!(text.contains(&format!("{} 2", bucket("+Inf"))), "{text}");
    }
}
