//! How the ports the composition root implements ([`crate::Tokens`], [`crate::SettingsFile`])
//! report a failure: any error with its causes, which this crate logs whole and answers as
//! "unavailable" without showing a caller.

use std::error::Error;

/// A failure inside a port's implementation (a store that would not open, a file that could
/// not be read). This crate cannot know the implementor's error type, only that it is one.
pub type PortFailure = Box<dyn Error + Send + Sync + 'static>;

/// `error` and each of its causes, joined by ": ", for the server's log.
pub(crate) fn with_causes(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        // Some errors repeat their source in their own message; say it once.
        if !text.ends_with(&said) {
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
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_failure_is_logged_with_every_cause() {
        let error = Outer(std::io::Error::other("disk full"));
        assert_eq!(with_causes(&error), "could not open tenant acme: disk full");
    }
}
