//! Standard output and error the way a Unix tool writes them. A reader that went away (`arbor
//! audit | head -1`) ends the process quietly, with the status of a tool stopped by SIGPIPE,
//! instead of a panic; and text meant for people has its control characters shown rather than
//! sent, so words in a memory (an agent can write any) cannot move the cursor, retitle the
//! window or hide what follows. JSON is written as it is: its strings are escaped by JSON.
//!
//! The rest of the crate prints through [`outln!`], [`out!`], [`errln!`] and [`print_raw`].

use std::borrow::Cow;
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

/// Machine-readable output (JSON, JSON Lines), written byte for byte.
pub(crate) fn print_raw(text: &str) {
    write(Stream::Stdout, text);
}

/// `text` with every character a terminal would act on shown as an escape instead: C0 and C1
/// control characters (but newline and tab) and the invisible bidirectional overrides that
/// reorder what a line seems to say.
pub(crate) fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        if acts_on_terminal(ch) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(ch)));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

fn acts_on_terminal(ch: char) -> bool {
    (ch.is_control() && ch != '\n' && ch != '\t')
        || matches!(ch, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text for people on standard output, control characters shown, with a newline.
macro_rules! outln {
    () => { $crate::output::write($crate::output::Stream::Stdout, "\n") };
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        let mut safe = $crate::output::terminal_safe(&text).into_owned();
        safe.push('\n');
        $crate::output::write($crate::output::Stream::Stdout, &safe);
    }};
}

/// Text for people on standard output, control characters shown.
macro_rules! out {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        $crate::output::write($crate::output::Stream::Stdout, &$crate::output::terminal_safe(&text));
    }};
}

/// Text for people on standard error, control characters shown, with a newline.
macro_rules! errln {
    () => { $crate::output::write($crate::output::Stream::Stderr, "\n") };
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        let mut safe = $crate::output::terminal_safe(&text).into_owned();
        safe.push('\n');
        $crate::output::write($crate::output::Stream::Stderr, &safe);
    }};
}

/// Text for people on standard error, control characters shown.
macro_rules! err {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        $crate::output::write($crate::output::Stream::Stderr, &$crate::output::terminal_safe(&text));
    }};
}

pub(crate) use {err, errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_would_drive_a_terminal_is_shown_not_sent() {
        assert_eq!(terminal_safe("plain\ttext\nnext line"), "plain\ttext\nnext line");
        assert_eq!(terminal_safe("\u{1b}]0;pwned\u{7}title"), "\\u{1b}]0;pwned\\u{7}title");
        assert_eq!(terminal_safe("red \u{1b}[31mtext"), "red \\u{1b}[31mtext");
        assert_eq!(terminal_safe("c1 \u{9b}31m"), "c1 \\u{9b}31m");
        assert_eq!(terminal_safe("carriage\rreturn"), "carriage\\u{d}return");
        assert_eq!(terminal_safe("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert!(matches!(terminal_safe("日本語 ok"), Cow::Borrowed(_)));
    }
}
