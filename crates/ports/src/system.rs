//! Time and identity: the clock and the source of fresh ids, as ports so tests and snapshots
//! can be deterministic.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_domain::time::Timestamp;

/// The current time.
///
/// # Contract
/// Returns the present instant in UTC. Successive calls never go backwards.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> Timestamp;
}

/// Randomness for generated ids.
///
/// # Contract
/// Returns 80 or more bits of randomness per call, never the same value twice within a process.
pub trait IdSource: Send + Sync + fmt::Debug {
    fn random(&self) -> u128;
}

/// The system clock, made monotonic.
#[derive(Debug, Default)]
pub struct SystemClock {
    last: Mutex<Option<Timestamp>>,
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let now = Timestamp::now();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let now = match *last {
            Some(previous) if previous > now => previous,
            _ => now,
        };
        *last = Some(now);
        now
    }
}

/// A clock that moves only when told to. For tests and reproducible runs.
#[derive(Debug)]
pub struct ManualClock {
    nanos: Mutex<i128>,
}

impl ManualClock {
    pub fn new(start: Timestamp) -> ManualClock {
        ManualClock { nanos: Mutex::new(start.as_nanosecond()) }
    }

    pub fn set(&self, at: Timestamp) {
        *self.nanos.lock().unwrap_or_else(|e| e.into_inner()) = at.as_nanosecond();
    }

    pub fn advance_seconds(&self, seconds: i64) {
        *self.nanos.lock().unwrap_or_else(|e| e.into_inner()) += i128::from(seconds) * 1_000_000_000;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        let nanos = *self.nanos.lock().unwrap_or_else(|e| e.into_inner());
        Timestamp::from_nanosecond(nanos).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

/// Ids from the operating system's random source.
#[derive(Debug, Default)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn random(&self) -> u128 {
        let mut bytes = [0u8; 16];
        // The OS random source failing is not something a memory engine can recover from.
        getrandom::fill(&mut bytes).expect("the operating system's random source is available");
        u128::from_le_bytes(bytes)
    }
}

/// Ids from a counter: reproducible output for tests and snapshots.
///
/// One source stands for one process's random source. An engine takes one value as the
/// suffix of the first id it mints in a millisecond and counts up from it for the rest of that
/// millisecond (ULID's monotonic mode), so two engines sharing one counter in one millisecond
/// mint the same ids — the second engine's first id is the first engine's second — which two
/// processes with random sources never do. A test that runs a second engine beside the first
/// (a restarted process) gives it [`SequentialIds::for_process`].
#[derive(Debug, Default)]
pub struct SequentialIds {
    /// Where this source's values start: process n's are n·2⁴⁸ + 1, n·2⁴⁸ + 2, ….
    base: u128,
    next: AtomicU64,
}

impl SequentialIds {
    /// The source of the n-th process of a test (the default is process 0): its values are
    /// 2⁴⁸ away from every other process's, more than any engine counts up in a millisecond.
    /// Every base stays below 2⁶⁴, well inside the 79 bits the engine keeps of a first suffix,
    /// so no two processes' values alias once masked.
    pub fn for_process(process: u16) -> Self {
        Self { base: u128::from(process) << 48, next: AtomicU64::new(0) }
    }
}

impl IdSource for SequentialIds {
    fn random(&self) -> u128 {
        let count = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        // Past 2⁴⁸ values this process would run into the next one's.
        assert!(count < 1 << 48, "a SequentialIds source gave out 2⁴⁸ values");
        self.base + u128::from(count)
    }
}
