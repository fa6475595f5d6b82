//! Who speaks through a server, for every request it serves: chosen by whoever starts it
//! (`arbor serve --speaker`, or the operator issuing a token), never by a request.

/// Who speaks through a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Speaker {
    Agent,
    User,
    Integration,
}

impl Speaker {
    pub(crate) fn actor(self) -> arbor_domain::model::Actor {
        use arbor_domain::model::Actor;
        match self {
            Speaker::Agent => Actor::Agent,
            Speaker::User => Actor::User,
            Speaker::Integration => Actor::Integration,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Speaker::Agent => "agent",
            Speaker::User => "user",
            Speaker::Integration => "integration",
        }
    }
}
