//! The composition root: builds an [`Arbor`] from adapters chosen by configuration.

use std::sync::Arc;

use arbor_app::{Arbor, Options, Policy, Ports};
use arbor_domain::time::Timestamp;
use arbor_ports::{ManualClock, SequentialIds};

/// Adapters for a throwaway in-memory store: nothing touches the disk.
pub(crate) fn in_memory(deterministic: bool) -> Arbor {
    let mut ports = Ports::in_memory();
    if deterministic {
        // A fixed clock and counter ids make the output identical on every run (for tests).
        let start = Timestamp::from_second(1_780_000_000).unwrap_or(Timestamp::UNIX_EPOCH);
        ports.clock = Arc::new(ManualClock::new(start));
        ports.ids = Arc::new(SequentialIds::default());
    }
    Arbor::new(ports, Policy::default(), Options::default())
}
