//! `arbor-eval`: quality measured through the real pipeline, the way `arbor eval` runs it.
//!
//! - [`locomo`]: retrieval recall (R@k) on LoCoMo-format conversations, every turn written
//!   through the normal write path and every question asked through the normal retrieval path;
//! - [`updates`]: whether memories written the way people say them, with no hints, replace what
//!   they update and keep what they do not;
//! - [`beam`]: on BEAM's long chats, whether an update ranks above the fact it updates, and
//!   whether two statements that disagree both come back, one marked.
//!
//! Each builds a store of its own (in a temporary directory, or one the caller names and
//! keeps), says which embedder and reasoner it ran with, and returns a report that serializes
//! to JSON and renders as text. Nothing here parses a command line or prints.

pub mod beam;
pub mod locomo;
pub mod pair_judge;
pub mod updates;

use serde::Serialize;

/// Percentiles and mean of a run's latencies, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub mean_ms: f64,
}

impl Latency {
    /// Percentiles and mean of `samples`, in milliseconds; all zero when there are none.
    pub fn of(mut samples: Vec<f64>) -> Latency {
        if samples.is_empty() {
            return Latency { p50_ms: 0.0, p95_ms: 0.0, mean_ms: 0.0 };
        }
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
        Latency { p50_ms: at(0.50), p95_ms: at(0.95), mean_ms: samples.iter().sum::<f64>() / samples.len() as f64 }
    }
}

/// A store for one run: in `dir` when the caller names one (kept), else in a temporary
/// directory removed with the returned guard. A named directory must be new or empty: a run
/// measures a store it built itself, and never writes its cases into someone's memory.
fn store_dir(dir: Option<&std::path::Path>, prefix: &str) -> anyhow::Result<(std::path::PathBuf, tempfile::TempDir)> {
    if let Some(dir) = dir
        && let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        anyhow::bail!("{} is not empty: name a new or empty directory for the run's store", dir.display());
    }
    let temp = tempfile::Builder::new().prefix(prefix).tempdir()?;
    let root = dir.map(std::path::Path::to_path_buf).unwrap_or_else(|| temp.path().join("store"));
    Ok((root, temp))
}
