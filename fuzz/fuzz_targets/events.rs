//! Fuzz target: a byte stream as a host might send it to `arbor ingest`, framed into events.
//! Never a panic; every event reported at a position inside the input (a line, or an element
//! of a JSON array); what is framed as an event serializes and reads back the same.
#![no_main]

use arbor_domain::event_stream::frame_all;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let lines = input.split(|b| *b == b'\n').count();
    // A JSON array's events are numbered by element, everything else by line; the first line
    // that is not blank decides (an unreadable one means lines).
    let array = input
        .split(|b| *b == b'\n')
        .map(std::str::from_utf8)
        .find(|line| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .is_some_and(|line| line.is_ok_and(|l| l.trim_start().starts_with('[')));
    let framed_all = frame_all(input);
    let count = framed_all.len();
    for framed in framed_all {
        assert!(framed.position >= 1, "positions are 1-based");
        let bound = if array { count.max(lines) + 1 } else { lines + 1 };
        assert!(framed.position <= bound, "position {} past {bound}", framed.position);
        if let Ok(event) = framed.event {
            // What is framed as an event is one: it serializes and reads back the same.
            let again: arbor_domain::event::Event =
                serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
            assert_eq!(again, event);
        }
    }
});
