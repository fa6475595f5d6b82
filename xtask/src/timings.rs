//! Per-test timings kept from each `cargo xtask ci` run: nextest's JUnit report (written to
//! its store, `<workspace>/target/nextest/default/junit.xml`, whatever the target directory)
//! copied to `<target directory>/test-timings/ci-<unix seconds>.xml` — outside a CI clone, so
//! they outlive it — and the slowest tests printed, so a test that grew slow is seen in the
//! run that made it so.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// How many of the slowest tests a run prints.
const SLOWEST_SHOWN: usize = 10;

/// How many runs' reports are kept; older ones are removed.
const RUNS_KEPT: usize = 30;

/// Where nextest writes the report: its store, under the workspace root (`[store] dir`).
fn report_path(workspace: &Path) -> PathBuf {
    workspace.join("target/nextest/default/junit.xml")
}

/// Removes the report an earlier run left, so a run that writes none keeps no stale one.
pub(crate) fn forget_last(workspace: &Path) {
    let _ = std::fs::remove_file(report_path(workspace));
}

/// Copies the report of the run that just ended beside the earlier ones and prints its slowest
/// tests. A run without a report (nextest stopped before writing it) is said, not an error.
pub(crate) fn keep(workspace: &Path, target_dir: &Path) -> Result<()> {
    let report = report_path(workspace);
    let Ok(text) = std::fs::read_to_string(&report) else {
        println!("(no test timings: {} was not written)", report.display());
        return Ok(());
    };
    let kept_dir = target_dir.join("test-timings");
    std::fs::create_dir_all(&kept_dir).with_context(|| format!("creating {}", kept_dir.display()))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let kept: PathBuf = kept_dir.join(format!("ci-{now}.xml"));
    std::fs::write(&kept, &text).with_context(|| format!("writing {}", kept.display()))?;
    prune(&kept_dir)?;
    let mut cases = test_times(&text);
    cases.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("\n==> slowest tests (all timings in {})", kept.display());
    for (name, seconds) in cases.iter().take(SLOWEST_SHOWN) {
        println!("{seconds:>8.1} s  {name}");
    }
    Ok(())
}

/// Removes all but the newest [`RUNS_KEPT`] reports (their names sort by time).
fn prune(kept_dir: &Path) -> Result<()> {
    let mut reports: Vec<PathBuf> = std::fs::read_dir(kept_dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "xml"))
        .collect();
    reports.sort();
    let excess = reports.len().saturating_sub(RUNS_KEPT);
    for old in &reports[..excess] {
        let _ = std::fs::remove_file(old);
    }
    Ok(())
}

/// Each `<testcase name=… classname=… time=…>` of a JUnit report: the test (`class name`) and
/// its seconds.
fn test_times(report: &str) -> Vec<(String, f64)> {
    report
        .split("<testcase ")
        .skip(1)
        .filter_map(|case| {
            let attribute = |key: &str| {
                let opening = format!(" {key}=\"");
                let start = format!(" {case}").find(&opening)? + opening.len() - 1;
                case[start..].find('"').map(|end| &case[start..start + end])
            };
            let seconds = attribute("time")?.parse().ok()?;
            let name = format!("{} {}", attribute("classname").unwrap_or_default(), attribute("name")?);
            Some((name, seconds))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_times_are_read_from_a_junit_report() {
        let report = r#"<testsuites><testsuite name="arbor-domain"><testcase name="a::b" classname="arbor-domain" time="0.25"></testcase><testcase name="slow" classname="arbor-cli::crash" time="12.5"/></testsuite></testsuites>"#;
        assert_eq!(
            super::test_times(report),
            [("arbor-domain a::b".to_owned(), 0.25), ("arbor-cli::crash slow".to_owned(), 12.5)]
        );
    }
}
