//! An error as logs and reports print it: its message, then each cause below it, once.

use std::error::Error;

/// `error` and each of its causes, joined by ": " ("opening the database in ./memory: database
/// is locked"), as `anyhow` prints `{:#}`. A cause an error already ends its own message with
/// (`#[error("… {0}")]` over its source, or `#[error("{0}")]` over it) is not said twice.
pub fn with_causes(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if text != said && !text.ends_with(&format!(": {said}")) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("could not open tenant acme")]
    struct Opening(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("the session ended: {0}")]
    struct Repeating(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Transparent(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("reading the file full")]
    struct EndsLikeItsCause(#[source] std::io::Error);

    #[test]
    fn every_cause_is_said_once() {
        assert_eq!(with_causes(&Opening(std::io::Error::other("disk full"))), "could not open tenant acme: disk full");
        assert_eq!(with_causes(&Repeating(std::io::Error::other("disk full"))), "the session ended: disk full");
        assert_eq!(with_causes(&Transparent(std::io::Error::other("disk full"))), "disk full");
        // A message that merely ends with the cause's words still gets the cause.
        assert_eq!(with_causes(&EndsLikeItsCause(std::io::Error::other("full"))), "reading the file full: full");
    }
}
