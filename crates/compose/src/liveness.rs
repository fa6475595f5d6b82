//! Whether the process behind an owner string is alive: what lets recovery and the job runner
//! tell a crashed writer from a running one.

use std::path::Path;

use arbor_app::ProcessState;
use arbor_domain::time::Timestamp;
use arbor_ports::BodyIntent;

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// This process, as recorded on body intents.
pub(crate) fn owner() -> String {
    format!("{}/{}", hostname(), std::process::id())
}

/// Whether the process an owner string (`<host>/<pid>`) names is running: on this host, by its
/// pid; another host's, or where that cannot be told, is unknown.
pub(crate) fn process_state(owner: &str) -> ProcessState {
    let Some((host, pid)) = owner.rsplit_once('/') else { return ProcessState::Unknown };
    if host != hostname() || !cfg!(target_os = "linux") {
        return ProcessState::Unknown;
    }
    match pid.parse::<u32>() {
        Ok(pid) if pid == std::process::id() => ProcessState::Alive,
        Ok(pid) if Path::new(&format!("/proc/{pid}")).exists() => ProcessState::Alive,
        Ok(_) => ProcessState::Gone,
        Err(_) => ProcessState::Unknown,
    }
}

/// Whether the process that announced an intent is gone: on this host, by its pid; elsewhere
/// (or where that cannot be told), once the intent is an hour old.
pub fn writer_is_dead(intent: &BodyIntent) -> bool {
    let stale = Timestamp::now().duration_since(intent.created_at) > jiff::SignedDuration::from_hours(1);
    match process_state(&intent.owner) {
        ProcessState::Gone => true,
        ProcessState::Alive => false,
        ProcessState::Unknown => stale,
    }
}
