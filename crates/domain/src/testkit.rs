//! Shared helpers for the domain's own tests: the proptest configuration and value generators.

use proptest::prelude::*;
use proptest::test_runner::Config;

/// At least 1,000 generated cases per property; `PROPTEST_CASES` may ask for more, never fewer.
/// Without it, the quick loop (`ARBOR_QUICK=1`, set by `cargo xtask test --quick`) runs
/// [`QUICK_CASES`].
pub(crate) fn proptest_config() -> Config {
    let from_env = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse::<u32>().ok());
    let quick = std::env::var("ARBOR_QUICK").is_ok_and(|v| v == "1");
    let cases = match from_env {
        Some(asked) => asked.max(1000),
        None if quick => QUICK_CASES,
        None => 1000,
    };
    Config { cases, ..Config::default() }
}

/// Cases per property in the quick loop: enough to catch a rule broken outright, in seconds.
const QUICK_CASES: u32 = 64;

/// A timestamp within a few years around 2026, at second resolution.
pub(crate) fn timestamp() -> impl Strategy<Value = jiff::Timestamp> {
    (1_700_000_000i64..1_900_000_000i64).prop_map(|s| jiff::Timestamp::from_second(s).unwrap())
}
