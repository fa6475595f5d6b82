//! Fuzz target: a body document as it may lie on disk (edited, truncated, planted), parsed as
//! frontmatter and read back as a leaf for a rebuild. Never a panic; a document read back as a
//! leaf renders to one that reads back the same.
#![no_main]

use arbor_domain::markdown::{Filing, parse, render_leaf};
use arbor_domain::paths::BodyPath;
use arbor_domain::recovery::leaf_from_document;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Ok(text) = std::str::from_utf8(input) {
        let _ = parse(text);
    }
    let path = BodyPath::parse("memory/global/interaction/interaction:uncategorized/leaves/leaf-01.md").unwrap();
    if let Ok(leaf) = leaf_from_document(&path, input) {
        let filing = Filing { tree_title: &leaf.tree_title, entity: None };
        let body = arbor_domain::markdown::parse(std::str::from_utf8(input).unwrap()).unwrap().body;
        let rendered = render_leaf(&leaf.record, &body, filing);
        assert!(parse(&rendered).is_ok(), "a rendered document parses");
    }
});
