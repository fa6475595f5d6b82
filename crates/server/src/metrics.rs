//! What the HTTP server tells its operator: `/metrics` in Prometheus' text format (requests by
//! route and status, latency histograms by route, and per open store its jobs and memories),
//! and one log line per request at `-v` (method, route, status, milliseconds: never a query
//! string, a body or a token).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arbor_app::Arbor;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// Upper bounds of the latency buckets, in seconds: from a cached answer (a millisecond) to a
/// request that waited on a busy store.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The routes requests are counted under; anything else is `other`, so a scanner trying paths
/// cannot grow the metrics without bound.
const ROUTES: &[&str] = &[
    "/api/v1/memory/retrieve",
    "/api/v1/memory/search",
    "/api/v1/memory/get",
    "/api/v1/memory/upsert",
    "/api/v1/memory/upsert_batch",
    "/api/v1/memory/messages",
    "/api/v1/memory/correct",
    "/api/v1/memory/forget",
    "/api/v1/memory/browse",
    "/api/v1/memory/catalog",
    "/api/v1/memory/dream",
    "/api/v1/memory/status",
    "/api/v1/memory/sync",
    "/api/v1/memory/review",
    "/api/v1/memory/review/confirm",
    "/api/v1/memory/review/reject",
    "/openapi.json",
    "/metrics",
    "/healthz",
    "/readyz",
];

fn route_of(path: &str) -> &'static str {
    if path == "/mcp" || path.starts_with("/mcp/") {
        return "/mcp";
    }
    ROUTES.iter().find(|route| **route == path).copied().unwrap_or("other")
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
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    latency: Mutex<BTreeMap<&'static str, Histogram>>,
}

impl Metrics {
    fn record(&self, route: &'static str, status: u16, took: Duration) {
        *self.requests.lock().unwrap_or_else(PoisonError::into_inner).entry((route, status)).or_default() += 1;
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
                Err(error) => tracing::warn!(%error, %store, "could not count a store for /metrics"),
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
    let route = route_of(request.uri().path());
    let method = request.method().clone();
    let response = next.run(request).await;
    let took = started.elapsed();
    let status = response.status().as_u16();
    metrics.record(route, status, took);
    tracing::info!(%method, route, status, ms = %format!("{:.1}", took.as_secs_f64() * 1000.0), "request");
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_paths_are_one_route() {
        assert_eq!(route_of("/api/v1/memory/retrieve"), "/api/v1/memory/retrieve");
        assert_eq!(route_of("/mcp"), "/mcp");
        assert_eq!(route_of("/wp-admin/login.php"), "other");
        assert_eq!(route_of("/api/v1/memory/retrieve/x"), "other");
    }

    #[tokio::test]
    async fn the_text_format_counts_and_buckets() {
        let metrics = Metrics::default();
        metrics.record("/api/v1/memory/retrieve", 200, Duration::from_millis(3));
        metrics.record("/api/v1/memory/retrieve", 200, Duration::from_millis(30));
        metrics.record("other", 404, Duration::from_micros(200));
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
