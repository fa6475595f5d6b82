//! The vectors of recent questions, so a question asked again (an agent re-asking each turn,
//! a dashboard refreshing, a test suite) is not embedded again: with a model that is most of
//! an exact question's cost (12–15 ms with all-MiniLM-L6-v2 on two cores, where the search
//! takes one or two).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use arbor_ports::EmbedderId;

/// How many questions are remembered: the working set of one agent's session and then some,
/// at 1.5 KiB a 384-dimension vector.
pub(crate) const REMEMBERED_QUESTIONS: usize = 512;

/// Question vectors by embedder and exact text; the oldest goes first when it is full.
#[derive(Debug, Default)]
pub(crate) struct QueryVectors {
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    vectors: HashMap<(EmbedderId, String), Vec<f32>>,
    order: VecDeque<(EmbedderId, String)>,
}

impl QueryVectors {
    pub(crate) fn get(&self, embedder: &EmbedderId, question: &str) -> Option<Vec<f32>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.vectors.get(&(embedder.clone(), question.to_owned())).cloned()
    }

    pub(crate) fn put(&self, embedder: &EmbedderId, question: &str, vector: Vec<f32>) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let key = (embedder.clone(), question.to_owned());
        if held.vectors.insert(key.clone(), vector).is_none() {
            held.order.push_back(key);
        }
        while held.order.len() > REMEMBERED_QUESTIONS {
            if let Some(oldest) = held.order.pop_front() {
                held.vectors.remove(&oldest);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).vectors.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_question_goes_first_when_full() {
        let cache = QueryVectors::default();
        let embedder = EmbedderId { name: "e".into(), dimensions: 1 };
        for i in 0..REMEMBERED_QUESTIONS + 3 {
            cache.put(&embedder, &format!("q{i}"), vec![i as f32]);
        }
        assert_eq!(cache.len(), REMEMBERED_QUESTIONS);
        assert_eq!(cache.get(&embedder, "q0"), None);
        assert_eq!(cache.get(&embedder, "q3"), Some(vec![3.0]));
        let other = EmbedderId { name: "other".into(), dimensions: 1 };
        assert_eq!(cache.get(&other, "q3"), None, "another embedder's vectors are never served");
    }
}
