//! An embedder behind an OpenAI-compatible `/v1/embeddings` endpoint: inputs go in batches,
//! answers are checked (one vector per input, the configured dimension, finite values) and
//! normalized to unit length, since not every server normalizes.

use arbor_ports::{Embedder, EmbedderId, Locality};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, to_port_error};
use crate::openai::client::{Client, EndpointConfig};

const BACKEND: &str = "openai embedder";

/// A remote embedder. Its locality is `Remote`, so the app never gives it restricted text.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    client: Client,
    dimensions: u32,
    batch: usize,
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [String],
    encoding_format: &'static str,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingRow>,
}

#[derive(Deserialize)]
struct EmbeddingRow {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    /// An embedder of `dimensions` values per vector, sending at most `batch` texts a request.
    pub fn new(config: EndpointConfig, dimensions: u32, batch: usize) -> Result<OpenAiEmbedder, ModelError> {
        if dimensions == 0 || dimensions > 16_384 {
            return Err(ModelError::Config(format!("{dimensions} is not a usable vector dimension")));
        }
        if batch == 0 {
            return Err(ModelError::Config("the batch size must be at least 1".into()));
        }
        Ok(OpenAiEmbedder { client: Client::new(config)?, dimensions, batch })
    }

    pub fn config(&self) -> &EndpointConfig {
        self.client.config()
    }

    /// Embeds `texts`, in requests of at most the batch size.
    pub async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch) {
            vectors.extend(self.embed_batch(batch).await?);
        }
        Ok(vectors)
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let dimensions = self.dimensions as usize;
        // Servers refuse empty inputs; their vector is zero by the port's contract anyway.
        let sent: Vec<usize> = (0..texts.len()).filter(|&i| !texts[i].trim().is_empty()).collect();
        let mut vectors = vec![vec![0.0; dimensions]; texts.len()];
        if sent.is_empty() {
            return Ok(vectors);
        }
        let input: Vec<String> = sent.iter().map(|&i| texts[i].clone()).collect();
        let request = EmbeddingsRequest { model: &self.client.config().model, input: &input, encoding_format: "float" };
        let response: EmbeddingsResponse = self.client.post("embeddings", &request).await?;
        if response.data.len() != input.len() {
            return Err(ModelError::malformed(format!(
                "{} embeddings for {} inputs",
                response.data.len(),
                input.len()
            )));
        }
        let mut filled = vec![false; input.len()];
        for row in response.data {
            let Some(&slot) = sent.get(row.index) else {
                return Err(ModelError::malformed(format!("embedding index {} is out of range", row.index)));
            };
            if std::mem::replace(&mut filled[row.index], true) {
                return Err(ModelError::malformed(format!("embedding index {} appears twice", row.index)));
            }
            vectors[slot] = unit(row.embedding, dimensions)?;
        }
        Ok(vectors)
    }
}

/// Checks a vector's length and values and scales it to unit length.
fn unit(mut vector: Vec<f32>, dimensions: usize) -> Result<Vec<f32>, ModelError> {
    if vector.len() != dimensions {
        return Err(ModelError::malformed(format!(
            "an embedding has {} values; this embedder is configured for {dimensions}",
            vector.len()
        )));
    }
    if vector.iter().any(|v| !v.is_finite()) {
        return Err(ModelError::malformed("an embedding holds a non-finite value"));
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|v| *v /= norm);
    }
    Ok(vector)
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId { name: format!("openai:{}", self.client.config().model), dimensions: self.dimensions }
    }

    fn locality(&self) -> Locality {
        Locality::Remote
    }

    async fn embed(&self, texts: &[String]) -> arbor_ports::Result<Vec<Vec<f32>>> {
        self.embed_texts(texts).await.map_err(|e| to_port_error(BACKEND, e))
    }
}
