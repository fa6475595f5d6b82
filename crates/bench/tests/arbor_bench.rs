//! The `arbor-bench` binary: `synthetic`'s refusal of empty runs (its figures are measured by
//! `cargo xtask bench`).

use std::process::{Command, Output};

/// `arbor-bench <command> <args>`.
fn bench(command: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-bench"))
        .arg(command)
        .args(args)
        .env("ARBOR_EMBEDDER", "hashing")
        .env_remove("ARBOR_LOG")
        .output()
        .expect("arbor-bench runs")
}

#[test]
fn a_bench_of_nothing_is_a_usage_error() {
    for flag in ["--leaves", "--queries", "--batch"] {
        let output = bench("synthetic", &[flag, "0"]);
        assert_eq!(output.status.code(), Some(2), "{flag} 0");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("must be at least 1"), "{stderr}");
    }
}
