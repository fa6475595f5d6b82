//! Reading the workspace's own Rust sources: finding the files, and their code with comments,
//! strings and character literals blanked.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// `text` with comments, strings and character literals blanked (newlines kept).
pub(crate) fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        // A raw string: r"…", r#"…"#, with as many hashes closing it as opened it.
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == 'r' && !after_ident && matches!(next, Some('"' | '#')) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                i += 2 + hashes;
                while i < chars.len() && !chars[i..].starts_with(&closing) {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += closing.len();
                out.push_str("\"\"");
                continue;
            }
        }
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                } else if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
            continue;
        }
        // A character literal ('{', '\'', '\u{7d}') but not a lifetime ('a).
        if c == '\'' && next == Some('\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
            continue;
        }
        if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Every `.rs` file under `dir`, but in `target` and hidden folders.
pub(crate) fn collect_rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                collect_rs_files(&path, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Where the inline test module a file ends with starts: the last `#[cfg(test)]` before a
/// `mod tests {` (or `pub(crate) mod tests {`). A `mod tests;` declaration is no end: its
/// tests are in a file of their own.
pub(crate) fn inline_tests_at(text: &str) -> Option<usize> {
    ["#[cfg(test)]\nmod tests {", "#[cfg(test)]\npub(crate) mod tests {"]
        .iter()
        .filter_map(|start| text.rfind(start))
        .max()
}
