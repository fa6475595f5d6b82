//! The local sentence embedder: a BERT sentence-transformer (all-MiniLM-L6-v2 by default) run
//! on the CPU by candle, WordPiece by `tokenizers`, mean pooling over real tokens and L2
//! normalization — the same recipe as sentence-transformers, so vectors match its reference
//! values. Model files come from a local directory only; nothing is downloaded at run time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_ports::{Embedder, EmbedderId, Locality};
use async_trait::async_trait;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::error::{ModelError, to_port_error};

/// Longest input, in tokens, before truncation. The packaged `tokenizer.json` truncates at
/// 128; the model was trained with up to 256 and handles them well, so more of a long memory
/// counts.
pub const MAX_TOKENS: usize = 256;

/// How many texts go through the model at once. Inputs are sorted by length first, so a
/// batch pads to similar lengths.
pub const BATCH_SIZE: usize = 32;

/// The files a model directory must hold.
const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// A sentence embedder running in this process.
#[derive(Clone)]
pub struct LocalEmbedder {
    inner: Arc<Inner>,
    id: EmbedderId,
    dir: PathBuf,
}

struct Inner {
    model: BertModel,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder").field("id", &self.id).field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    /// Loads a sentence-transformer from `dir` (`config.json`, `tokenizer.json`,
    /// `model.safetensors`), named `name` in embedder ids.
    pub fn load(dir: &Path, name: &str) -> Result<LocalEmbedder, ModelError> {
        for file in MODEL_FILES {
            if !dir.join(file).is_file() {
                return Err(ModelError::ModelFiles {
                    dir: dir.to_path_buf(),
                    reason: format!("{file} is missing (install a model with `arbor models install`)"),
                });
            }
        }
        let files = |reason: String| ModelError::ModelFiles { dir: dir.to_path_buf(), reason };
        let config_text =
            std::fs::read_to_string(dir.join("config.json")).map_err(|e| files(format!("config.json: {e}")))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|e| files(format!("config.json is not a BERT config: {e}")))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| files(format!("tokenizer.json: {e}")))?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        // Pad each batch only to its longest input, and truncate at MAX_TOKENS, whatever the
        // packaged tokenizer says (it pads and truncates everything to 128).
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token: "[PAD]".to_owned(),
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..TruncationParams::default() }))
            .map_err(|e| files(format!("tokenizer.json: {e}")))?;
        let weights =
            std::fs::read(dir.join("model.safetensors")).map_err(|e| files(format!("model.safetensors: {e}")))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| files(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| files(format!("not a BERT model: {e}")))?;
        let dimensions = u32::try_from(config.hidden_size).map_err(|_| files("hidden_size is too large".into()))?;
        Ok(LocalEmbedder {
            inner: Arc::new(Inner { model, tokenizer }),
            id: EmbedderId { name: name.to_owned(), dimensions },
            dir: dir.to_path_buf(),
        })
    }

    /// Where the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Embeds `texts` on this thread (CPU-bound; async callers use [`Embedder::embed`], which
    /// runs this on the blocking pool).
    pub fn embed_now(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        self.inner.embed(texts, self.id.dimensions as usize)
    }
}

impl Inner {
    fn embed(&self, texts: &[String], dimensions: usize) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut vectors = vec![Vec::new(); texts.len()];
        // Blank inputs have nothing to embed: the zero vector, by the port's contract.
        let mut order: Vec<usize> = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            if text.trim().is_empty() {
                vectors[i] = vec![0.0; dimensions];
            } else {
                order.push(i);
            }
        }
        // Similar lengths together: each batch pads to its longest member.
        order.sort_by_key(|&i| texts[i].len());
        for batch in order.chunks(BATCH_SIZE) {
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in batch.iter().zip(self.embed_batch(&inputs)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encodings =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| ModelError::Inference(e.to_string()))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (rows, width), device)?;
        let mask = Tensor::from_vec(mask, (rows, width), device)?;
        let token_types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &token_types, Some(&mask))?;
        // Mean over real tokens only: padding must not pull short inputs toward each other.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn id(&self) -> EmbedderId {
        self.id.clone()
    }

    fn locality(&self) -> Locality {
        Locality::Local
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_now(&texts))
            .await
            .map_err(|e| to_port_error("local embedder", ModelError::Inference(e.to_string())))?
            .map_err(|e| to_port_error("local embedder", e))
    }
}
