//! The cross-crate property test on the in-memory backend.

use arbor_app::Ports;
use arbor_tests::{engine, operations, run_sequence};
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
            let (arbor, clock) = engine(Ports::in_memory());
            run_sequence(&arbor, &clock, &ops).await
        });
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}
