//! The cross-crate property test on the embedded backend: SQLite store and index, bodies on
//! disk, a fresh directory per sequence.

use arbor_tests::{engine, operations, run_sequence, sqlite_ports};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("ARBOR_SEQUENCES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_every_promise(ops in operations(40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(async {
            let (ports, _dir) = sqlite_ports();
            let (arbor, clock) = engine(ports);
            run_sequence(&arbor, &clock, &ops).await
        });
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}
