//! Checks of the [`Embedder`] contract.

use crate::model_ports::Embedder;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// One vector per text, of the declared dimension, unit length (zero for empty input).
pub async fn one_unit_vector_per_text(embedder: &dyn Embedder) {
    let texts = vec!["the cat sits on the mat".to_owned(), String::new(), "stock markets fell today".to_owned()];
    let vectors = embedder.embed(&texts).await.unwrap();
    assert_eq!(vectors.len(), texts.len());
    for (text, vector) in texts.iter().zip(&vectors) {
        assert_eq!(vector.len(), embedder.id().dimensions as usize);
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        if text.is_empty() {
            assert!(norm == 0.0 || (norm - 1.0).abs() < 1e-3, "norm {norm}");
        } else {
            assert!((norm - 1.0).abs() < 1e-3, "vector for {text:?} has norm {norm}");
        }
    }
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
}

/// The same text always gives the same vector.
pub async fn embeddings_are_deterministic(embedder: &dyn Embedder) {
    let texts = vec!["Caroline joined a support group".to_owned()];
    let a = embedder.embed(&texts).await.unwrap();
    let b = embedder.embed(&texts).await.unwrap();
    assert_eq!(a, b);
}

/// Texts about the same thing are closer than unrelated ones.
pub async fn similar_texts_are_closer(embedder: &dyn Embedder) {
    let texts: Vec<String> =
        ["the cat sits on the mat", "a cat sitting on the mat", "stock markets fell today"].map(String::from).to_vec();
    let v = embedder.embed(&texts).await.unwrap();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]), "similar texts should be closer");
}
