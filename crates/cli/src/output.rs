//! Standard output and error the way a Unix tool writes them. A reader that went away (`arbor
//! audit | head -1`) ends the process quietly, with the status of a tool stopped by SIGPIPE,
//! instead of a panic; and text meant for people has its control characters shown rather than
//! sent, so words in a memory (an agent can write any) cannot move the cursor, retitle the
//! window or hide what follows. JSON is written as it is: its strings are escaped by JSON.
//!
//! The rest of the crate prints through [`outln!`], [`out!`], [`errln!`] and [`print_raw`].

use std::io::Write;

/// The status a shell reports for a process ended by SIGPIPE (128 + 13).
const BROKEN_PIPE_STATUS: i32 = 141;

/// Which stream to write to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// Writes `text` to `stream` as it is; a closed reader ends the process quietly.
pub(crate) fn write(stream: Stream, text: &str) {
    let written = match stream {
        Stream::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|()| out.flush())
        }
        Stream::Stderr => {
            let mut err = std::io::stderr().lock();
            err.write_all(text.as_bytes()).and_then(|()| err.flush())
        }
    };
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(BROKEN_PIPE_STATUS),
        // Nowhere left to say it: a full disk under a redirect, say. Give up on the output,
        // not on the work; the exit status still tells.
        Err(_) => {}
    }
}

/// `value` as pretty JSON on standard output: what `--json` prints.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    print_raw(&(serde_json::to_string_pretty(value)? + "\n"));
    Ok(())
}

/// Machine-readable output (JSON, JSON Lines), written byte for byte.
pub(crate) fn print_raw(text: &str) {
    write(Stream::Stdout, text);
}

/// Text for people on standard output, control characters shown, with a newline.
macro_rules! outln {
    () => { $crate::output::write($crate::output::Stream::Stdout, "\n") };
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        let mut safe = arbor_domain::text::terminal_safe(&text).into_owned();
        safe.push('\n');
        $crate::output::write($crate::output::Stream::Stdout, &safe);
    }};
}

/// Text for people on standard output, control characters shown.
macro_rules! out {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        $crate::output::write($crate::output::Stream::Stdout, &arbor_domain::text::terminal_safe(&text));
    }};
}

/// Text for people on standard error, control characters shown, with a newline.
macro_rules! errln {
    () => { $crate::output::write($crate::output::Stream::Stderr, "\n") };
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        let mut safe = arbor_domain::text::terminal_safe(&text).into_owned();
        safe.push('\n');
        $crate::output::write($crate::output::Stream::Stderr, &safe);
    }};
}

/// Text for people on standard error, control characters shown.
macro_rules! err {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        $crate::output::write($crate::output::Stream::Stderr, &arbor_domain::text::terminal_safe(&text));
    }};
}

pub(crate) use {err, errln, out, outln};
