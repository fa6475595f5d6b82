//! `cargo xtask test [--quick]`: the tests a contributor runs while working, on the default
//! features (SQLite and the in-memory reference; Postgres and LanceDB are `ci`'s and
//! `conformance`'s).
//!
//! `--quick` turns every campaign knob down and leaves out the campaigns that start and kill
//! processes, so a loop of change-and-test stays in minutes:
//!
//! | knob | what it sets | default | quick |
//! |---|---|---|---|
//! | `ARBOR_SEQUENCES` | random operation sequences per backend (property test, checklist) | 256 | 16 |
//! | `ARBOR_FAULT_SEQUENCES` | faulty sequences per backend (fault campaign) | 128 | 8 |
//! | `ARBOR_QUICK=1` | the domain's proptest cases down to 64, unless `PROPTEST_CASES` asks (for 1,000 or more) | unset | set |
//!
//! A knob already set in the environment wins. Left out by `--quick`: `crash` (killing `arbor`
//! at random points) and `contention` (eight processes on one store).

use std::time::Instant;

use anyhow::Result;

use crate::{cargo, ensure_model, ensure_nextest, step};

/// The quick loop's settings, each unless the environment sets it already.
const QUICK_KNOBS: &[(&str, &str)] = &[("ARBOR_SEQUENCES", "16"), ("ARBOR_FAULT_SEQUENCES", "8"), ("ARBOR_QUICK", "1")];

/// The tests the quick loop leaves out: the campaigns that start and kill processes.
const QUICK_FILTER: &str = "not (package(arbor-cli) & (binary(crash) | binary(contention)))";

/// `cargo xtask test`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Campaign knobs down, process campaigns left out: the inner loop.
    #[arg(long)]
    quick: bool,
}

pub(crate) fn run(args: TestArgs) -> Result<()> {
    let TestArgs { quick } = args;
    ensure_nextest()?;
    // The local embedder's tests need its model, as `ci` does: a fresh machine gets it here too.
    ensure_model()?;
    let started = Instant::now();
    let mut tests = cargo();
    tests.args(["nextest", "run", "--workspace", "--locked", "--no-fail-fast"]);
    if quick {
        tests.args(["-E", QUICK_FILTER]);
        for (knob, value) in QUICK_KNOBS {
            if std::env::var_os(knob).is_none() {
                tests.env(knob, value);
            }
        }
    }
    let name = if quick { "the quick loop: every test but the process campaigns, knobs down" } else { "every test" };
    step(name, tests)?;
    println!("\ntest: passed in {} s", started.elapsed().as_secs());
    Ok(())
}
