//! Where words start and end: a word character after a non-word one, and in Chinese, which
//! writes no spaces, where the segmenter cut the text into words.

/// Byte offsets where a word starts: a word character after a non-word character (or the start).
/// Chinese writes no spaces, so there a word starts where the segmenter cut one ("小王*上个月*
/// 搬到…"; not the 下 of "一下周末" or the 上 of "晚上月亮"), and a digit after Han starts one
/// ("在*2023年*").
pub(super) fn word_starts<'t>(text: &'t str, words: &'t HanWords) -> impl Iterator<Item = usize> + 't {
    let mut previous_is_word = false;
    let mut previous_is_han = false;
    text.char_indices().filter_map(move |(at, c)| {
        let is_word = is_word_char(c);
        let is_han = crate::han::is_han(c);
        let starts =
            if is_han { words.starts.contains(&at) } else { is_word && (!previous_is_word || previous_is_han) };
        previous_is_word = is_word;
        previous_is_han = is_han;
        starts.then_some(at)
    })
}

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the segmenter's words start and end in a text with Chinese in it: a Chinese time
/// expression starts and ends where words do, so "三年前端经验" holds no "三年前" (three years
/// ago) and "这周一直" no "这周一" (this Monday).
#[derive(Debug, Default)]
pub(super) struct HanWords {
    /// The start of the text, as an address: a form reads a slice of it.
    base: usize,
    pub(super) starts: std::collections::BTreeSet<usize>,
    ends: std::collections::BTreeSet<usize>,
}

impl HanWords {
    pub(super) fn of(text: &str) -> HanWords {
        if !crate::han::has_han(text) {
            return HanWords::default();
        }
        let words = crate::han::words(text);
        HanWords {
            base: text.as_ptr() as usize,
            starts: words.iter().map(|w| w.span.start).collect(),
            ends: words.iter().map(|w| w.span.end).collect(),
        }
    }

    /// Whether a form read `len` bytes into `rest` (a slice of the text) ends where a word
    /// does, when it ends between two Han characters.
    pub(super) fn ends_a_word(&self, rest: &str, len: usize) -> bool {
        let inside = rest[..len].chars().next_back().is_some_and(crate::han::is_han)
            && rest[len..].chars().next().is_some_and(crate::han::is_han);
        !inside || self.ends.contains(&(rest.as_ptr() as usize - self.base + len))
    }
}
