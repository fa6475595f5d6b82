//! Framing inbound events: a stream of lines, as a host sends them, cut into events — JSON Lines,
//! pretty-printed objects spanning lines, or one JSON array — each judged on its own.
//!
//! What a host sends is not always well formed, so every rule here is about keeping one bad
//! event from taking others with it:
//! - each event is decoded alone and reported with the line it starts on (for an array, its
//!   element number), so an invalid event costs only itself;
//! - a value spanning lines is only ever held up to [`MAX_EVENT_BYTES`], and its lines are
//!   remembered, so when it turns out broken (a missing `}`, an unterminated string) the
//!   lines after the point where it broke are read again as events of their own — a broken
//!   first line never swallows the valid lines behind it;
//! - bytes are judged per line: one invalid UTF-8 byte refuses its line, not the input;
//! - memory is bounded by the largest event, never by the input.
//!
//! The framer is fed lines and hands back what they completed; reading them is the caller's
//! business.

use std::collections::VecDeque;

use crate::event::Event;

/// The most bytes one event may take in its JSON form (a 64 KiB text escaped as `\uXXXX`
/// runs to six times that, plus hints); a line or value longer than this is refused unread.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// One framed event, or why the bytes at that position are not one.
#[derive(Debug, Clone, PartialEq)]
pub struct Framed {
    /// 1-based: the line an event starts on, or its element number in a JSON array.
    pub position: usize,
    pub event: Result<Event, String>,
}

/// Whether the input is JSON Lines (and pretty objects) or one JSON array: decided by its
/// first non-blank character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Undecided,
    Lines,
    /// Inside the array; `element` counts the elements seen so far.
    Array {
        element: usize,
    },
    /// The array ended, or broke and nothing after it can be placed.
    ArrayDone,
}

/// Where a scan of JSON text is: nesting depth and whether it is inside a string.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Scan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Advances over one character. Returns false when a closing bracket has nothing to close.
    fn step(&mut self, ch: char) -> bool {
        if self.in_string {
            match (self.escaped, ch) {
                (true, _) => self.escaped = false,
                (false, '\\') => self.escaped = true,
                (false, '"') => self.in_string = false,
                _ => {}
            }
            return true;
        }
        match ch {
            '"' => self.in_string = true,
            '{' | '[' => self.depth += 1,
            '}' | ']' => match self.depth.checked_sub(1) {
                Some(depth) => self.depth = depth,
                None => return false,
            },
            _ => {}
        }
        true
    }
}

/// Cuts lines into events. Feed it every line with [`push_line`](Self::push_line) (or
/// [`push_unreadable`](Self::push_unreadable) for a line that could not be read), then call
/// [`finish`](Self::finish).
#[derive(Debug)]
pub struct EventFramer {
    shape: Shape,
    /// The lines of a value still open, with their numbers, kept so they can be read again.
    block: VecDeque<(usize, String)>,
    block_bytes: usize,
    scan: Scan,
    /// The element being read in array mode, with the line it started on.
    element: String,
    element_line: usize,
    /// Inside a value too large to hold: its lines are scanned, not kept, until it closes.
    skipping: Option<Scan>,
}

impl Default for EventFramer {
    fn default() -> Self {
        EventFramer::new()
    }
}

impl EventFramer {
    pub fn new() -> EventFramer {
        EventFramer {
            shape: Shape::Undecided,
            block: VecDeque::new(),
            block_bytes: 0,
            scan: Scan::default(),
            element: String::new(),
            element_line: 0,
            skipping: None,
        }
    }

    /// A line that could not be taken as text (invalid UTF-8, longer than the limit): its
    /// position is reported with `why`, and framing goes on after it.
    pub fn push_unreadable(&mut self, line: usize, why: String) -> Vec<Framed> {
        let mut out = Vec::new();
        match self.shape {
            Shape::Array { .. } => {
                out.push(Framed { position: self.next_element(), event: Err(format!("line {line}: {why}")) });
                out.push(self.array_broken(line, "after an unreadable line"));
            }
            Shape::ArrayDone => {}
            Shape::Undecided | Shape::Lines => {
                // An unreadable line inside a value breaks that value; the lines before it that
                // were held are read again on their own.
                if !self.block.is_empty() {
                    out.extend(self.break_block(None));
                }
                self.shape = Shape::Lines;
                out.push(Framed { position: line, event: Err(why) });
            }
        }
        out
    }

    /// Feeds one line (without its line ending); returns the events it completed.
    pub fn push_line(&mut self, line: usize, text: &str) -> Vec<Framed> {
        let mut out = Vec::new();
        let mut pending = VecDeque::from([(line, text.to_owned())]);
        while let Some((number, text)) = pending.pop_front() {
            self.feed(number, &text, &mut out, &mut pending);
        }
        out
    }

    /// The input ended: whatever is still open is reported.
    pub fn finish(&mut self) -> Vec<Framed> {
        let mut out = Vec::new();
        match self.shape {
            Shape::Array { .. } => {
                if !self.element.trim().is_empty() {
                    let element = self.next_element();
                    out.push(Framed { position: element, event: Err("the JSON array is not closed".into()) });
                } else {
                    out.push(Framed {
                        position: self.next_element(),
                        event: Err("the JSON array is not closed with `]`".into()),
                    });
                }
                self.shape = Shape::ArrayDone;
            }
            Shape::Undecided | Shape::Lines | Shape::ArrayDone => {
                let mut pending = VecDeque::new();
                if !self.block.is_empty() {
                    out.extend(self.resolve_block(&mut pending));
                }
                while let Some((number, text)) = pending.pop_front() {
                    self.feed(number, &text, &mut out, &mut pending);
                    if pending.is_empty() && !self.block.is_empty() {
                        out.extend(self.resolve_block(&mut pending));
                    }
                }
            }
        }
        out
    }

    fn feed(&mut self, number: usize, text: &str, out: &mut Vec<Framed>, pending: &mut VecDeque<(usize, String)>) {
        if self.shape == Shape::Undecided {
            match text.trim_start().chars().next() {
                None => return,
                Some('[') => {
                    self.shape = Shape::Array { element: 0 };
                    let opened = text.trim_start().strip_prefix('[').unwrap_or_default().to_owned();
                    self.scan = Scan::default();
                    self.element.clear();
                    self.element_line = number;
                    self.feed_array(number, &opened, out);
                    return;
                }
                Some(_) => self.shape = Shape::Lines,
            }
        }
        match self.shape {
            Shape::Array { .. } => self.feed_array(number, text, out),
            Shape::ArrayDone => {
                if !text.trim().is_empty() {
                    out.push(Framed { position: number, event: Err("text after the end of the JSON array".into()) });
                }
            }
            Shape::Undecided | Shape::Lines => self.feed_lines(number, text, out, pending),
        }
    }

    fn feed_lines(
        &mut self,
        number: usize,
        text: &str,
        out: &mut Vec<Framed>,
        pending: &mut VecDeque<(usize, String)>,
    ) {
        if let Some(scan) = &mut self.skipping {
            let mut closed = false;
            for ch in text.chars() {
                closed |= !scan.step(ch) || scan.depth == 0;
            }
            if closed || scan.in_string {
                self.skipping = None;
            }
            return;
        }
        if self.block.is_empty() {
            if text.trim().is_empty() {
                return;
            }
            self.scan = Scan::default();
        }
        self.block.push_back((number, text.to_owned()));
        self.block_bytes += text.len() + 1;
        let mut unbalanced = false;
        for ch in text.chars() {
            if !self.scan.step(ch) {
                unbalanced = true;
            }
        }
        // A raw line break inside a string is never JSON: the value ends broken here.
        let complete = self.scan.depth == 0 || self.scan.in_string || unbalanced;
        if complete || self.block_bytes > MAX_EVENT_BYTES {
            let still_open = (!complete).then_some(self.scan);
            out.extend(self.resolve_block(pending));
            // Too large to hold and not broken: the rest of it is skipped unread, up to where
            // it closes (a break found in what was held was handed back to be read again).
            if let Some(scan) = still_open
                && pending.is_empty()
            {
                self.skipping = Some(scan);
            }
        }
    }

    /// Decodes the held block: one event, or an error at its first line and its later lines
    /// handed back to be read again from where it broke.
    fn resolve_block(&mut self, pending: &mut VecDeque<(usize, String)>) -> Vec<Framed> {
        let lines: Vec<(usize, String)> = self.block.drain(..).collect();
        let oversized = self.block_bytes > MAX_EVENT_BYTES;
        self.block_bytes = 0;
        self.scan = Scan::default();
        let Some(&(start, _)) = lines.first() else { return Vec::new() };
        let joined = lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
        // Straight into an event (not through a JSON value, which would keep only the last of
        // two `text` fields): a duplicated field is refused, never silently chosen.
        match serde_json::from_str::<Event>(&joined) {
            Ok(event) => vec![Framed { position: start, event: Ok(event) }],
            Err(error) if oversized && (error.is_data() || error.is_eof() || error.line() <= 1) => vec![Framed {
                position: start,
                event: Err(format!(
                    "a value starting here runs past {MAX_EVENT_BYTES} bytes; events are smaller, and the rest of \
                     it is skipped"
                )),
            }],
            // Well-formed JSON that is not an event: said as such.
            Err(error) if error.is_data() => {
                vec![Framed { position: start, event: Err(not_an_event(&joined, &error)) }]
            }
            Err(error) => {
                let why = if oversized && error.is_eof() {
                    format!("a value starting here runs past {} bytes; events are smaller", MAX_EVENT_BYTES)
                } else {
                    error.to_string()
                };
                // Where it broke: lines from there on may be events of their own. A break at
                // the very start of a later line (a `{` where a `,` or `}` was due) is that
                // line's beginning; a break inside a line spoils that line too.
                if !error.is_eof() && error.line() > 1 {
                    let broken_at = error.line() - 1;
                    let first_kept = match lines.get(broken_at) {
                        Some((_, line)) if line.len() - line.trim_start().len() + 1 >= error.column() => broken_at,
                        _ => broken_at + 1,
                    };
                    for line in lines.into_iter().skip(first_kept).rev() {
                        pending.push_front(line);
                    }
                }
                vec![Framed { position: start, event: Err(why) }]
            }
        }
    }

    /// A held block interrupted by an unreadable line: reported, its later lines read again.
    fn break_block(&mut self, _at: Option<usize>) -> Vec<Framed> {
        let mut pending = VecDeque::new();
        let mut out = self.resolve_block(&mut pending);
        while let Some((number, text)) = pending.pop_front() {
            self.feed(number, &text, &mut out, &mut pending);
        }
        if !self.block.is_empty() {
            let mut again = VecDeque::new();
            out.extend(self.resolve_block(&mut again));
        }
        out
    }

    fn next_element(&mut self) -> usize {
        match &mut self.shape {
            Shape::Array { element } => {
                *element += 1;
                *element
            }
            _ => 0,
        }
    }

    fn array_broken(&mut self, line: usize, how: &str) -> Framed {
        self.shape = Shape::ArrayDone;
        Framed {
            position: line,
            event: Err(format!("the JSON array breaks at line {line} ({how}); nothing after it was read")),
        }
    }

    fn feed_array(&mut self, number: usize, text: &str, out: &mut Vec<Framed>) {
        for ch in text.chars() {
            if !matches!(self.shape, Shape::Array { .. }) {
                if !ch.is_whitespace() {
                    out.push(Framed { position: number, event: Err("text after the end of the JSON array".into()) });
                    return;
                }
                continue;
            }
            if self.element.trim().is_empty() {
                self.element_line = number;
            }
            let at_top = self.scan.depth == 0 && !self.scan.in_string;
            if at_top && (ch == ',' || ch == ']') {
                let element = std::mem::take(&mut self.element);
                if !(ch == ']' && element.trim().is_empty()) {
                    let position = self.next_element();
                    out.push(Framed { position, event: decode_element(&element) });
                }
                if ch == ']' {
                    self.shape = Shape::ArrayDone;
                }
                continue;
            }
            if !self.scan.step(ch) {
                let broken = self.array_broken(number, "a closing bracket with nothing to close");
                out.push(broken);
                return;
            }
            self.element.push(ch);
            if self.element.len() > MAX_EVENT_BYTES {
                let position = self.next_element();
                out.push(Framed {
                    position,
                    event: Err(format!("the element is larger than {MAX_EVENT_BYTES} bytes")),
                });
                out.push(self.array_broken(number, "an element too large to read"));
                return;
            }
        }
        if matches!(self.shape, Shape::Array { .. }) {
            if self.scan.in_string {
                let position = self.next_element();
                out.push(Framed { position, event: Err("a string runs past the end of its line".into()) });
                out.push(self.array_broken(number, "an unterminated string"));
                return;
            }
            self.element.push('\n');
        }
    }
}

fn decode_element(element: &str) -> Result<Event, String> {
    serde_json::from_str::<Event>(element).map_err(|error| match error.is_data() {
        true => not_an_event(element, &error),
        false => error.to_string(),
    })
}

/// Why well-formed JSON is not an event: not an object at all, or the event's own complaint.
fn not_an_event(json: &str, error: &serde_json::Error) -> String {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(value) if !value.is_object() => format!("expected an event object, found {}", json_kind(&value)),
        _ => error.to_string(),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Frames a whole input held in memory: lines split on `\n` (a `\r` before it dropped), each
/// judged on its own. For tests and small inputs; streams feed [`EventFramer`] line by line.
pub fn frame_all(input: &[u8]) -> Vec<Framed> {
    let mut framer = EventFramer::new();
    let mut out = Vec::new();
    for (index, raw) in input.split(|b| *b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match std::str::from_utf8(raw) {
            Ok(text) => out.extend(framer.push_line(index + 1, text)),
            Err(error) => out.extend(framer.push_unreadable(index + 1, not_utf8(&error))),
        }
    }
    out.extend(framer.finish());
    out
}

/// The message for a line that is not UTF-8.
pub fn not_utf8(error: &std::str::Utf8Error) -> String {
    format!("the line is not valid UTF-8 (an invalid byte at column {})", error.valid_up_to() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    fn outcome(input: &str) -> Vec<(usize, Result<String, String>)> {
        frame_all(input.as_bytes()).into_iter().map(|f| (f.position, f.event.map(|e| e.text))).collect()
    }

    fn oks(input: &str) -> Vec<(usize, String)> {
        outcome(input).into_iter().filter_map(|(p, e)| e.ok().map(|t| (p, t))).collect()
    }

    #[test]
    fn json_lines_one_event_each() {
        let framed = outcome("{\"text\":\"a\"}\n\n{\"text\":\"b\"}\r\n{\"txt\":\"typo\"}\n");
        assert_eq!(framed[0], (1, Ok("a".into())));
        assert_eq!(framed[1], (3, Ok("b".into())));
        assert_eq!(framed[2].0, 4);
        assert!(framed[2].1.as_ref().unwrap_err().starts_with("unknown field `txt`"));
    }

    #[test]
    fn a_broken_first_line_keeps_the_valid_lines_behind_it() {
        // Unterminated string: the line breaks alone.
        let input = "{\"text\": \"abc\n{\"text\":\"b\"}\n{\"text\":\"c\"}\n";
        assert_eq!(oks(input), vec![(2, "b".into()), (3, "c".into())]);
        assert!(outcome(input)[0].1.is_err());
        // A missing closing brace: the next line starts where it broke.
        let input = "{\"text\": \"a\"\n{\"text\":\"b\"}\n{\"text\":\"c\"}\n";
        assert_eq!(oks(input), vec![(2, "b".into()), (3, "c".into())]);
        let errors: Vec<usize> = outcome(input).into_iter().filter(|(_, e)| e.is_err()).map(|(p, _)| p).collect();
        assert_eq!(errors, vec![1]);
        // A lone opening brace.
        assert_eq!(oks("{\n{\"text\":\"b\"}\n"), vec![(2, "b".into())]);
    }

    #[test]
    fn pretty_objects_and_arrays() {
        let pretty = "{\n  \"text\": \"pretty\",\n  \"hints\": {\"labels\": [\"a\"]}\n}\n{\"text\":\"next\"}\n";
        assert_eq!(oks(pretty), vec![(1, "pretty".into()), (5, "next".into())]);
        let array = "[\n  {\"text\":\"a\"},\n  {\"nope\": 1},\n  {\"text\":\"c, with ] and , inside\"}\n]\n";
        let framed = outcome(array);
        assert_eq!(framed[0], (1, Ok("a".into())));
        assert!(framed[1].1.as_ref().unwrap_err().starts_with("unknown field `nope`"));
        assert_eq!(framed[2], (3, Ok("c, with ] and , inside".into())));
        assert_eq!(framed.len(), 3);
        assert_eq!(oks("[{\"text\":\"one\"},{\"text\":\"two\"}]"), vec![(1, "one".into()), (2, "two".into())]);
        assert!(outcome("[]").is_empty());
        assert!(outcome("[{\"text\":\"a\"}").last().unwrap().1.is_err(), "an unclosed array is said");
    }

    #[test]
    fn bad_bytes_cost_only_their_line() {
        let framed = frame_all(b"{\"text\":\"a\"}\n{\"text\":\"caf\xe9\"}\n{\"text\":\"c\"}\n");
        assert_eq!(framed.len(), 3);
        assert!(framed[0].event.is_ok() && framed[2].event.is_ok());
        assert_eq!(framed[1].position, 2);
        assert!(framed[1].event.as_ref().unwrap_err().starts_with("the line is not valid UTF-8"));
    }

    #[test]
    fn a_field_given_twice_is_refused_not_chosen() {
        let framed = outcome("{\"text\":\"first\",\"text\":\"second\"}\n{\"text\":\"ok\"}\n");
        assert!(framed[0].1.as_ref().unwrap_err().contains("duplicate field `text`"), "{framed:?}");
        assert_eq!(framed[1], (2, Ok("ok".into())));
        assert!(outcome("[{\"text\":\"a\",\"text\":\"b\"}]")[0].1.as_ref().unwrap_err().contains("duplicate field"));
    }

    #[test]
    fn values_that_are_not_objects_are_refused_by_kind() {
        let framed = outcome("\"just a string\"\n42\nnull\n");
        assert_eq!(framed.len(), 3);
        for (_, event) in framed {
            assert!(event.unwrap_err().starts_with("expected an event object"));
        }
    }

    #[test]
    fn an_oversized_value_is_refused_and_the_rest_read() {
        let mut input = String::from("{\"text\": [\n");
        for _ in 0..(MAX_EVENT_BYTES / 10 + 10) {
            input.push_str("\"xxxxxxx\",\n");
        }
        input.push_str("\"end\"]}\n{\"text\":\"after\"}\n");
        let framed = outcome(&input);
        assert!(framed[0].1.as_ref().unwrap_err().contains("runs past"), "{:?}", framed[0]);
        assert_eq!(framed.last().unwrap().1, Ok("after".into()));
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Whatever garbage sits between them, every valid event line comes through, at its
        /// line, and the framer never panics.
        #[test]
        fn valid_lines_always_come_through(garbage in proptest::collection::vec("[{}\\[\\]\",: a-z\\\\]{0,12}", 0..12),
                                           valid in proptest::collection::vec(0usize..12, 1..6)) {
            // JSON Lines (an input whose first line opens an array is an array, tested apart).
            let mut lines: Vec<String> = vec!["{\"text\":\"first\"}".to_owned()];
            lines.extend(garbage.clone());
            let mut expected = Vec::new();
            for (inserted, slot) in valid.into_iter().enumerate() {
                let at = (slot + 1).min(lines.len());
                lines.insert(at, format!("{{\"text\":\"valid {inserted}\"}}"));
            }
            for (i, line) in lines.iter().enumerate() {
                if line.starts_with("{\"text\":\"valid ") {
                    expected.push(i + 1);
                }
            }
            // Garbage can open a value that swallows a valid line only if it is itself valid
            // JSON up to there; the promise is about lines that follow a break.
            let input = lines.join("\n");
            let framed = frame_all(input.as_bytes());
            let found: Vec<usize> = framed.iter()
                .filter(|f| f.event.as_ref().is_ok_and(|e| e.text.starts_with("valid ")))
                .map(|f| f.position).collect();
            // Valid lines start at a depth-0 position unless garbage before them opened a
            // value; either way they are never lost silently: each is found or inside an error.
            for line in &expected {
                let reported = found.contains(line) || framed.iter().any(|f| f.event.is_err() && f.position < *line);
                prop_assert!(reported, "line {} vanished: {:?}", line, framed);
            }
        }

        /// Garbage that opens no value (no `{` or `[`) never costs a valid line anything.
        #[test]
        fn flat_garbage_costs_only_itself(garbage in proptest::collection::vec("[}\\]\",: a-z\\\\]{1,12}", 0..12),
                                          valid in proptest::collection::vec(0usize..12, 1..6)) {
            let mut lines: Vec<String> = garbage;
            for (n, slot) in valid.iter().enumerate() {
                let at = (*slot).min(lines.len());
                lines.insert(at, format!("{{\"text\":\"valid {n}\"}}"));
            }
            let expected: Vec<usize> =
                lines.iter().enumerate().filter(|(_, l)| l.starts_with("{\"text\":\"valid ")).map(|(i, _)| i + 1).collect();
            let framed = frame_all(lines.join("\n").as_bytes());
            let found: Vec<usize> = framed.iter()
                .filter(|f| f.event.as_ref().is_ok_and(|e| e.text.starts_with("valid ")))
                .map(|f| f.position).collect();
            prop_assert_eq!(found, expected);
        }
    }
}
