//! [`one_read`]: several searches that answer one question, seen by the index as one read.
//!
//! A question runs a handful of searches (full text, each vector channel, each named entity's
//! trees). On a backend whose index lives in memory but whose writes may come from other
//! processes (Postgres), each search first asks the server whether anything changed: a round
//! trip that costs more than the search. The answer is the same for every search of a
//! question as long as it is asked after the question began, so the index may ask once per
//! read. The read's start is carried as a task-local, so the port's signatures stay as they
//! are, and a search outside any read is checked on its own, as before.

use std::future::Future;
use std::time::Instant;

tokio::task_local! {
    static READ_BEGAN: Instant;
}

/// Runs `read` as one read of the index: every search in it sees every change committed
/// before `one_read` was called, and may answer from the state an earlier search of the same
/// read brought in (see the **Fresh** rule of [`SearchIndex`](crate::SearchIndex)).
pub async fn one_read<F: Future>(read: F) -> F::Output {
    match read_began() {
        // Already inside a read: the outer one's start holds, which is earlier.
        Some(_) => read.await,
        None => READ_BEGAN.scope(Instant::now(), read).await,
    }
}

/// When the read the current search belongs to began, if it is part of one.
pub fn read_began() -> Option<Instant> {
    READ_BEGAN.try_with(|began| *began).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_read_carries_its_start_and_a_nested_read_keeps_the_outer_one() {
        assert_eq!(read_began(), None, "no read outside one_read");
        let before = Instant::now();
        let (outer, inner) = one_read(async {
            let outer = read_began().expect("inside a read");
            let inner = one_read(async { read_began().expect("inside a read") }).await;
            (outer, inner)
        })
        .await;
        assert!(outer >= before);
        assert_eq!(inner, outer, "a nested read is part of the outer one");
        assert_eq!(read_began(), None, "the read ends with its future");
    }
}
