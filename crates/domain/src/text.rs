//! Text normalization, stable chunk fingerprints, tokenization and chunking: the first step of
//! the write path (event → chunks) [design §events].

use std::borrow::Cow;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::han;
use crate::values::{ContentHash, Fingerprint};

/// Collapses runs of spaces and tabs, trims every line, and keeps at most one blank line
/// between paragraphs. What a leaf's body holds.
pub fn normalize_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_lines = 0usize;
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank_lines += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_lines > 0 { "\n\n" } else { "\n" });
        }
        blank_lines = 0;
        out.push_str(&line);
    }
    out
}

/// What a fingerprint is computed over: lowercase, all whitespace collapsed to single spaces.
/// Formatting changes (case, line wrapping, spacing) therefore do not make a new memory.
pub fn normalize_for_fingerprint(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The stable fingerprint of a chunk.
pub fn fingerprint(text: &str) -> Fingerprint {
    ContentHash::of(normalize_for_fingerprint(text).as_bytes())
}

/// Lowercase word tokens: runs of letters and digits; Chinese as words cut by the segmenter,
/// with bigrams and characters where it cut single characters ([`han::index_words`]); kana and
/// hangul (which jieba does not know) as character bigrams and characters. Mixed text is cut
/// by script: "北斗用 MySQL" is 北斗, 用 and mysql.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut cjk_from: Option<usize> = None;
    for (at, ch) in text.char_indices() {
        if is_cjk(ch) {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            cjk_from.get_or_insert(at);
            continue;
        }
        if let Some(from) = cjk_from.take() {
            cjk_tokens(&text[from..at], &mut tokens);
        }
        if ch.is_alphanumeric() {
            current.extend(ch.to_lowercase());
        } else if !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
    }
    if let Some(from) = cjk_from {
        cjk_tokens(&text[from..], &mut tokens);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// The tokens of a run of CJK characters: Han by the segmenter, other scripts by bigrams.
fn cjk_tokens(run: &str, tokens: &mut Vec<String>) {
    let mut from = 0;
    let mut pieces = Vec::new();
    let mut han_piece = None;
    for (at, ch) in run.char_indices() {
        let han = han::is_han(ch);
        if han_piece.is_some_and(|was| was != han) {
            pieces.push((&run[from..at], han_piece == Some(true)));
            from = at;
        }
        han_piece = Some(han);
    }
    pieces.push((&run[from..], han_piece == Some(true)));
    for (piece, han) in pieces {
        if han {
            tokens.extend(han::index_words(piece));
            continue;
        }
        let chars: Vec<char> = piece.chars().collect();
        tokens.extend(chars.windows(2).map(|pair| pair.iter().collect::<String>()));
        tokens.extend(chars.iter().map(char::to_string));
    }
}

/// Words too common to search by: they match most texts and say nothing about any of them.
pub const STOPWORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by",
    "can", "could", "d", "did", "do", "does", "for", "from", "get", "got", "had", "has", "have", "he", "her", "here",
    "his", "how", "i", "if", "in", "is", "it", "its", "just", "ll", "m", "me", "more", "most", "my", "no", "not", "of",
    "on", "or", "our", "out", "re", "really", "s", "she", "should", "so", "some", "t", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "ve", "very", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "yes", "you", "your",
];

pub fn is_stopword(token: &str) -> bool {
    STOPWORDS.binary_search(&token).is_ok() || (!token.is_ascii() && han::is_stopword(token))
}

/// The terms a full-text search looks for: the query's tokens without stopwords, each as its
/// stem ([`index_tokens`]) and, where that differs, as written, each once, in order of first
/// appearance. Every index uses this, so all backends search for the same words. The written
/// form keeps an index built before stemming (by Arbor 0.1's analyzer) answering until
/// `arbor jobs reindex` rewrites it; in a current index it matches nothing and costs one lookup.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    tokenize(query)
        .into_iter()
        .filter(|t| !is_stopword(t))
        .flat_map(|t| [stem(&t).into_owned(), t])
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// The tokens a full-text index stores for `text`: [`tokenize`], each reduced to its stem, so
/// "camped", "camping" and "camps" are one term and a question finds an answer worded in
/// another form of the same word. Measured with plain BM25 on the LoCoMo development split:
/// R@10 60.2 -> 62.9 overall, multi-hop 27.7 -> 35.6.
pub fn index_tokens(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| stem(&t).into_owned()).collect()
}

/// The English Snowball stem of a token of ASCII letters; any other token (numbers, other
/// scripts, mixed) as it is, since the English rules would only mangle it.
pub fn stem(token: &str) -> Cow<'_, str> {
    static ENGLISH: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_lowercase()) {
        return Cow::Borrowed(token);
    }
    ENGLISH.stem(token)
}

fn is_cjk(ch: char) -> bool {
    matches!(ch as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Splits normalized text into chunks of at most `max_chars` characters: whole paragraphs where
/// they fit, sentences where a paragraph is too long, and a hard cut (at a character
/// boundary) only for a single overlong sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunker {
    pub max_chars: usize,
}

impl Default for Chunker {
    fn default() -> Self {
        Chunker { max_chars: 2_000 }
    }
}

impl Chunker {
    pub fn split(&self, text: &str) -> Vec<String> {
        let max = self.max_chars.max(1);
        let normalized = normalize_text(text);
        let mut pieces: Vec<String> = Vec::new();
        for paragraph in normalized.split("\n\n") {
            if paragraph.chars().count() <= max {
                pieces.push(paragraph.to_owned());
                continue;
            }
            for sentence in split_sentences(paragraph) {
                if sentence.chars().count() <= max {
                    pieces.push(sentence.to_owned());
                } else {
                    let chars: Vec<char> = sentence.chars().collect();
                    pieces.extend(chars.chunks(max).map(|c| c.iter().collect::<String>()));
                }
            }
        }
        // Pack pieces greedily back together up to the limit.
        let mut chunks: Vec<String> = Vec::new();
        for piece in pieces.into_iter().filter(|p| !p.trim().is_empty()) {
            match chunks.last_mut() {
                Some(last) if last.chars().count() + 2 + piece.chars().count() <= max => {
                    last.push_str("\n\n");
                    last.push_str(&piece);
                }
                _ => chunks.push(piece),
            }
        }
        chunks
    }
}

fn split_sentences(paragraph: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = paragraph.char_indices().collect();
    for (i, &(at, ch)) in bytes.iter().enumerate() {
        let boundary = matches!(ch, '.' | '!' | '?' | '。' | '！' | '？')
            && bytes.get(i + 1).is_none_or(|&(_, next)| next.is_whitespace() || !next.is_ascii());
        if boundary {
            let end = at + ch.len_utf8();
            let sentence = paragraph[start..end].trim();
            if !sentence.is_empty() {
                out.push(sentence);
            }
            start = end;
        }
    }
    let rest = paragraph[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// A statement's sentences, for the readers of what it says: split after `.`, `!`, `?`, `;`,
/// `。`, `！` or `？` followed by a space or the end, and at line ends — but not after an
/// abbreviation or an initial ("Dr.", "St.", "J.") nor inside a number ("v2.3", "9.30").
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let stop = matches!(c, '.' | '!' | '?' | ';' | '。' | '！' | '？') && next_is_space;
        if !(c == '\n' || stop) || (c == '.' && ends_an_abbreviation(&text[start..at], &text[at + 1..])) {
            continue;
        }
        let end = at + c.len_utf8();
        if !text[start..end].trim().is_empty() {
            out.push(&text[start..end]);
        }
        start = end;
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// `text` with every character a terminal would act on shown as an escape instead: C0 and C1
/// control characters (but newline and tab) and the invisible bidirectional overrides that
/// reorder what a line seems to say. What every binary writes for people goes through this, so
/// words in a memory (an agent can write any) cannot move the cursor, retitle the window or
/// hide what follows.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
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

/// Cuts `text` to at most `max_chars` characters at a character boundary, adding `…` when it
/// had to cut. For titles and one-line digests.
pub fn truncate_chars(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// The first sentence of the first line of `text`, cut to `max_chars`: a title or a digest
/// line. A sentence ends at `.`, `!` or `?` followed by a space or the line's end (so a
/// decimal point, a version or a model number — "4.19%", "v2.1", "ID.3" — never ends one),
/// unless the word before a full stop is an abbreviation or an initial ("Dr.", "St.", "J.");
/// `。！？` always end one. Nothing in the first 8 bytes ends a sentence ("Hi. …" is no title).
pub fn first_sentence(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut end = line.len();
    for (at, &(byte, ch)) in chars.iter().enumerate() {
        if byte <= 8 {
            continue;
        }
        let ends = match ch {
            '。' | '！' | '？' => true,
            '.' | '!' | '?' => {
                // Closing quotes, brackets and emphasis may stand between the stop and the space.
                let after = chars[at + 1..].iter().map(|&(_, c)| c).find(|&c| !CLOSERS.contains(&c));
                after.is_none_or(char::is_whitespace)
                    && (ch != '.' || !ends_an_abbreviation(&line[..byte], &line[byte + 1..]))
            }
            _ => false,
        };
        if ends {
            end = byte + ch.len_utf8();
            break;
        }
    }
    let end = line[end..].char_indices().find(|&(_, c)| !CLOSERS.contains(&c)).map_or(line.len(), |(at, _)| end + at);
    truncate_chars(line[..end].trim(), max_chars)
}

/// What may close a sentence after its full stop: quotes, brackets, emphasis.
const CLOSERS: &[char] = &['"', '\'', ')', ']', '”', '’', '」', '』', '）', '*', '_'];

/// Whether the word `before` ends with is one a full stop abbreviates, given what comes
/// `after` the stop: a title, a street or a Latin abbreviation, or a single letter (an
/// initial); "No." before a number ("No. 5"); and a company suffix or "etc." unless a new
/// sentence visibly starts — a personal pronoun, or a capitalised word written in mixed case
/// ("Acme Inc. He starts Monday", "Acme Inc. Sarah lives in Leeds"). A word in capitals proves
/// nothing ("Acme Inc. HQ", any shouted text), and "Co." before a capital is a county ("Co.
/// Cork") unless a pronoun follows.
fn ends_an_abbreviation(before: &str, after: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or_default();
    let word = word.trim_start_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let after = after.trim_start();
    if SENTENCE_FINAL_ABBREVIATIONS.contains(&word.as_str()) {
        let next = after.split(|c: char| !c.is_alphanumeric() && c != '\'').next().unwrap_or_default();
        let pronoun = CLAUSE_OPENING_PRONOUNS.contains(&next.to_lowercase().as_str());
        let capitalised = next.chars().next().is_some_and(char::is_uppercase) && next.chars().any(char::is_lowercase);
        return !(pronoun || (capitalised && word != "co"));
    }
    if word == "no" {
        return after.starts_with(|c: char| c.is_ascii_digit());
    }
    word.chars().count() == 1 && word.chars().all(char::is_alphabetic) || ABBREVIATIONS.contains(&word.as_str())
}

/// Abbreviations that end a sentence as often as not: company suffixes and "etc.".
const SENTENCE_FINAL_ABBREVIATIONS: &[&str] = &["inc", "ltd", "co", "corp", "etc"];

/// Pronouns that open a clause as its subject, after which such an abbreviation ended one.
const CLAUSE_OPENING_PRONOUNS: &[&str] =
    &["i", "i'm", "i've", "he", "he's", "she", "she's", "we", "we're", "they", "they're", "it's", "you"];

/// Words a full stop shortens in running text, lowercased and without that full stop.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "st", "rd", "ave", "mt", "jr", "sr", "vs", "e.g", "i.e", "approx", "dept", "fig",
    "vol", "ca", "appt",
];

#[cfg(test)]
mod tests {
    #[test]
    fn forms_of_a_word_share_one_index_term() {
        assert_eq!(super::index_tokens("Camped, camping; CAMPS!"), ["camp", "camp", "camp"]);
        assert_eq!(
            super::index_tokens("Researching 2023 日本 naïve"),
            ["research", "2023", "日本", "日", "本", "naïve"]
        );
        assert_eq!(
            super::query_terms("Where has Melanie camped?"),
            ["melani", "melanie", "camp", "camped"],
            "stems first, then the written form where it differs"
        );
    }

    use super::*;

    #[test]
    fn a_title_is_the_first_sentence_and_no_number_ends_one() {
        for (text, title) in [
            (
                "User's mortgage rate is fixed at 4.19% until 2027.",
                "User's mortgage rate is fixed at 4.19% until 2027.",
            ),
            ("Disney+ £4.99/mo, renews in May. Cancel before then.", "Disney+ £4.99/mo, renews in May."),
            ("we've been on the ID.3 since june! loving it", "we've been on the ID.3 since june!"),
            ("Halyard v2.1 shipped on Friday. Next: v2.2", "Halyard v2.1 shipped on Friday."),
            ("Therapy with Dr. Lim on King St. at 6pm. In person.", "Therapy with Dr. Lim on King St. at 6pm."),
            ("Call J. Smith about the lease. Soon.", "Call J. Smith about the lease."),
            ("张伟搬到了杭州。他很喜欢那里。", "张伟搬到了杭州。"),
            ("Hi. The user moved to Utrecht.", "Hi. The user moved to Utrecht."),
            ("She said \"we moved.\" Then she left.", "She said \"we moved.\""),
            ("The rate is 4.2% (fixed.) The term is 2 years.", "The rate is 4.2% (fixed.)"),
            ("The answer was no. We asked twice.", "The answer was no."),
            ("Locker No. 5 is hers. The key is blue.", "Locker No. 5 is hers."),
            ("Tom joined Acme Inc. He starts Monday.", "Tom joined Acme Inc."),
            ("Tom joined Acme Inc. as a designer. He starts Monday.", "Tom joined Acme Inc. as a designer."),
            ("No full stop at all", "No full stop at all"),
            ("first line\nsecond line", "first line"),
        ] {
            assert_eq!(first_sentence(text, 200), title, "{text}");
        }
        assert_eq!(first_sentence("The user lives in a very long sentence", 10), "The user…");
    }

    #[test]
    fn sentences_end_at_stops_but_not_after_abbreviations() {
        for (text, expected) in [
            ("Dr. Lim moved. She likes it.", &["Dr. Lim moved.", " She likes it."][..]),
            ("Locker No. 5 is hers. I said no. Fine.", &["Locker No. 5 is hers.", " I said no.", " Fine."]),
            ("Tom joined Acme Inc. He starts Monday.", &["Tom joined Acme Inc.", " He starts Monday."]),
            ("Acme Inc. hired Tom; he starts Monday.", &["Acme Inc. hired Tom;", " he starts Monday."]),
            ("RAJ LEFT ACME INC. AT 8PM", &["RAJ LEFT ACME INC. AT 8PM"]),
            ("Raj left Acme Inc. HQ at 8pm.", &["Raj left Acme Inc. HQ at 8pm."]),
            ("Maya lives in Co. Cork. She likes it.", &["Maya lives in Co. Cork.", " She likes it."]),
            (
                "The user works at Acme Inc. The user's manager is Tom Baker.",
                &["The user works at Acme Inc.", " The user's manager is Tom Baker."],
            ),
            ("Tom works at Acme Inc. Sarah lives in Leeds.", &["Tom works at Acme Inc.", " Sarah lives in Leeds."]),
            ("Pens, paper etc. are in the drawer.", &["Pens, paper etc. are in the drawer."]),
        ] {
            assert_eq!(sentences(text), expected, "{text}");
        }
    }

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
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn fingerprints_ignore_formatting() {
        assert_eq!(fingerprint("I like  tea.\n"), fingerprint("i like tea."));
        assert_ne!(fingerprint("I like tea."), fingerprint("I like coffee."));
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(query_terms("What did Caroline do in the park? Caroline!"), vec!["carolin", "caroline", "park"]);
    }

    #[test]
    fn tokens() {
        assert_eq!(
            tokenize("Caroline's LGBTQ group, May-2023!"),
            vec!["caroline", "s", "lgbtq", "group", "may", "2023"]
        );
    }

    /// Chinese is cut into words and their characters, function words left out; where the
    /// dictionary cut single characters, their pairs too; other scripts by their own rules.
    #[test]
    fn chinese_and_mixed_text_is_cut_into_words() {
        let table: &[(&str, &[&str])] = &[
            ("我喜欢茶 tea", &["喜欢", "喜", "欢", "茶", "tea"]),
            (
                "张伟在腾讯做后端开发",
                &["张伟", "张", "伟", "腾讯", "腾", "讯", "做后", "后端", "做", "后", "端", "开发", "开", "发"],
            ),
            ("北斗用 MySQL", &["北斗", "北", "斗", "用", "mysql"]),
            ("她特别喜欢画马", &["喜欢", "喜", "欢", "画马", "画", "马"]),
            ("东京タワー", &["东京", "东", "京", "タワ", "ワー", "タ", "ワ", "ー"]),
        ];
        for (text, expected) in table {
            assert_eq!(tokenize(text), *expected, "{text}");
        }
        // A question and a memory cut differently still meet: 字节跳动 is two dictionary words.
        let memory = index_tokens("字节跳动的面试安排在下周三");
        assert!(query_terms("字节跳动").iter().all(|t| memory.contains(t)), "{memory:?}");
        assert!(query_terms("的了吗").is_empty(), "function words are not searched for");
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Chunks respect the size limit, and no words are lost or invented by chunking.
        #[test]
        fn chunking_bounds_and_preserves_words(text in "(\\PC{0,60}[.!?\n ]){0,30}", max in 1usize..300) {
            let chunks = Chunker { max_chars: max }.split(&text);
            for chunk in &chunks {
                prop_assert!(chunk.chars().count() <= max, "{} > {}", chunk.chars().count(), max);
                prop_assert!(!chunk.trim().is_empty());
            }
            let before: String = normalize_text(&text).chars().filter(|c| !c.is_whitespace()).collect();
            let after: String = chunks.concat().chars().filter(|c| !c.is_whitespace()).collect();
            prop_assert_eq!(before, after);
        }

        /// Any text, in any mix of scripts, is cut into non-empty lowercase tokens.
        #[test]
        fn any_text_tokenizes(text in "[a-zA-Z0-9 张伟在腾讯的了画马タワー한국어，。!?]{0,60}") {
            for token in tokenize(&text) {
                prop_assert!(!token.is_empty());
                prop_assert_eq!(token.to_lowercase(), token.clone());
            }
        }

        #[test]
        fn truncation_bounds(text in "\\PC{0,100}", max in 1usize..50) {
            prop_assert!(truncate_chars(&text, max).chars().count() <= max);
        }
    }
}
