//! How many units: "three days ago", "a few weeks ago", "the past several months".

/// How many units back: one number, or a vague spread read as nearest and farthest.
#[derive(Debug, Clone, Copy)]
pub(super) struct Count {
    pub(super) fewest: i64,
    pub(super) most: i64,
}

impl Count {
    pub(super) fn parse(text: &str) -> Option<Count> {
        let lower = text.to_ascii_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        let exactly = |n| Some(Count { fewest: n, most: n });
        match words.as_slice() {
            // "a few days ago" is usually not yesterday and rarely more than a week.
            ["a", "few"] | ["few"] => Some(Count { fewest: 2, most: 7 }),
            ["a", "couple", ..] | ["couple", ..] => Some(Count { fewest: 2, most: 3 }),
            ["several"] => Some(Count { fewest: 3, most: 7 }),
            ["a" | "an" | "one"] => exactly(1),
            [word] => match crate::lexicon::english::number_word(word) {
                Some(value) => exactly(i64::from(value)),
                None => exactly(word.parse().ok()?),
            },
            _ => None,
        }
    }
}
