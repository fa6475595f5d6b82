//! Whether the process behind an owner string is alive: what lets recovery and the job runner
//! tell a crashed writer from a running one.

use arbor_app::ProcessState;
use arbor_domain::time::Timestamp;
use arbor_ports::BodyIntent;

/// This host's name, as the kernel gives it to this process (what `uname -n` prints; a
/// container has its own): not an environment variable a process may set for itself.
fn hostname() -> String {
    let name = rustix::system::uname().nodename().to_string_lossy().into_owned();
    if name.is_empty() { "localhost".to_owned() } else { name }
}

/// The name earlier versions wrote into owner strings (`/etc/hostname`, else `$HOSTNAME`,
/// else "localhost"): an intent or a lease an earlier version left on this host is still
/// this host's.
fn earlier_hostname() -> String {
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
    if host != hostname() && host != earlier_hostname() {
        return ProcessState::Unknown;
    }
    let Some(pid) = pid.parse::<i32>().ok().and_then(rustix::process::Pid::from_raw) else {
        return ProcessState::Unknown;
    };
    // Signal 0 checks without signalling: no such process is gone; one we may not signal (it
    // is another user's) is alive; any other answer (a sandbox that forbids the call) tells
    // nothing, so the intent's age decides.
    match rustix::process::test_kill_process(pid) {
        Ok(()) => ProcessState::Alive,
        Err(rustix::io::Errno::SRCH) => ProcessState::Gone,
        Err(rustix::io::Errno::PERM) => ProcessState::Alive,
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
