//! How the ports the composition root implements ([`crate::Tokens`], [`crate::SettingsFile`])
//! report a failure: any error with its causes, which this crate logs whole
//! ([`arbor_ports::with_causes`]) and answers as "unavailable" without showing a caller.

use std::error::Error;

/// A failure inside a port's implementation (a store that would not open, a file that could
/// not be read). This crate cannot know the implementor's error type, only that it is one.
pub type PortFailure = Box<dyn Error + Send + Sync + 'static>;
