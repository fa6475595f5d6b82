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
/// The n-th value is n·2⁴⁰, not n. An engine takes one value as the suffix of the first id it
/// mints in a millisecond and counts up from it for the rest of that millisecond (ULID's
/// monotonic mode), so with values 1, 2, 3, … two engines on one source in one millisecond —
/// a process and the one restarted after it — minted the same ids: the second engine's first
/// id was the first engine's second. With values 2⁴⁰ apart, an engine would have to mint 2⁴⁰
/// ids in one millisecond to reach the next one's, as random suffixes make it for real.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

/// How far apart [`SequentialIds`]' values are: room for an engine's count in one millisecond.
const SEQUENTIAL_ID_SPACING: u32 = 40;

impl IdSource for SequentialIds {
    fn random(&self) -> u128 {
        u128::from(self.next.fetch_add(1, Ordering::Relaxed) + 1) << SEQUENTIAL_ID_SPACING
    }
}
