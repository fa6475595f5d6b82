//! [`CoalescingEmbedder`]: one embedding call for many concurrent callers. A server answering
//! many questions at once embeds each question on its own; a model embeds a batch of 32 short
//! texts for little more than the price of one. Calls that arrive while a batch is running are
//! gathered into the next one — no timer, so a lone call waits for nothing.

use std::sync::Arc;

use arbor_ports::{Embedder, EmbedderId, Locality, Result};
use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

/// The batch size servers coalesce to: the local embedder's own batch.
pub const COALESCED_BATCH: usize = 32;

/// Calls that may wait for a batch before new callers wait to join the queue.
const QUEUED_CALLS: usize = 1024;

/// One caller's texts and where its vectors go.
struct Pending {
    texts: Vec<String>,
    reply: oneshot::Sender<Result<Vec<Vec<f32>>>>,
}

/// Any [`Embedder`], with concurrent calls merged into batches of about `max_batch` texts (a
/// caller's texts are never split). Each caller gets one vector per text, in order, from the
/// inner embedder; a batch refused as invalid is retried call by call, so one caller's bad text
/// is never another's failure. Batches run one at a time, in arrival order.
#[derive(Debug, Clone)]
pub struct CoalescingEmbedder {
    id: EmbedderId,
    locality: Locality,
    instant: bool,
    queue: mpsc::Sender<Pending>,
}

impl CoalescingEmbedder {
    /// Wraps `inner`; must be called inside a tokio runtime (it starts the batching task, which
    /// ends when the last clone of this embedder is dropped).
    pub fn new(inner: Arc<dyn Embedder>, max_batch: usize) -> CoalescingEmbedder {
        // Bounded: under more load than the model can take, callers wait to be queued.
        let (queue, calls) = mpsc::channel(QUEUED_CALLS);
        let (id, locality, instant) = (inner.id(), inner.locality(), inner.is_instant());
        tokio::spawn(run_batches(inner, calls, max_batch.max(1)));
        CoalescingEmbedder { id, locality, instant, queue }
    }
}

async fn run_batches(inner: Arc<dyn Embedder>, mut calls: mpsc::Receiver<Pending>, max_batch: usize) {
    while let Some(first) = calls.recv().await {
        let mut size = first.texts.len();
        let mut group = vec![first];
        while size < max_batch {
            match calls.try_recv() {
                Ok(next) => {
                    size += next.texts.len();
                    group.push(next);
                }
                Err(_) => break,
            }
        }
        // Callers that gave up (a client that disconnected) are not embedded for nothing.
        group.retain(|pending| !pending.reply.is_closed());
        if group.is_empty() {
            continue;
        }
        // Each batch in its own task: a panic in the model fails that batch, not the batcher.
        let batch = tokio::spawn(embed_group(inner.clone(), group));
        if let Err(error) = batch.await {
            tracing::error!(%error, "an embedding batch panicked; its callers got an error");
        }
    }
}

/// Embeds a group's texts in one call and hands each caller its own vectors. If the call is
/// refused as invalid, some caller's text is to blame: each is embedded alone, so only that
/// caller fails. Any other failure (the model is down, a timeout) is every caller's.
async fn embed_group(inner: Arc<dyn Embedder>, group: Vec<Pending>) {
    if let [_] = group.as_slice() {
        let Some(Pending { texts, reply }) = group.into_iter().next() else { return };
        let _ = reply.send(inner.embed(&texts).await);
        return;
    }
    let all: Vec<String> = group.iter().flat_map(|p| p.texts.iter().cloned()).collect();
    match inner.embed(&all).await {
        Ok(vectors) if vectors.len() == all.len() => {
            let mut vectors = vectors.into_iter();
            for pending in group {
                let mine: Vec<Vec<f32>> = vectors.by_ref().take(pending.texts.len()).collect();
                let _ = pending.reply.send(Ok(mine));
            }
        }
        Err(arbor_ports::Error::Invalid { .. }) => {
            for Pending { texts, reply } in group {
                let _ = reply.send(inner.embed(&texts).await);
            }
        }
        other => {
            let reason = match other {
                Ok(vectors) => format!("{} vectors for {} texts", vectors.len(), all.len()),
                Err(error) => error.to_string(),
            };
            for pending in group {
                let failed = arbor_ports::Error::Unavailable { backend: "embedder", source: reason.clone().into() };
                let _ = pending.reply.send(Err(failed));
            }
        }
    }
}

#[async_trait]
impl Embedder for CoalescingEmbedder {
    fn id(&self) -> EmbedderId {
        self.id.clone()
    }

    fn locality(&self) -> Locality {
        self.locality
    }

    fn is_instant(&self) -> bool {
        self.instant
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = oneshot::channel();
        let gone = || arbor_ports::Error::Unavailable {
            backend: "embedding batcher",
            source: "the batching task has stopped".into(),
        };
        self.queue.send(Pending { texts: texts.to_vec(), reply }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_ports::HashingEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts calls and how many texts each had.
    #[derive(Debug, Default)]
    struct Counting {
        inner: HashingEmbedder,
        calls: AtomicUsize,
        fail_on: Option<&'static str>,
    }

    #[async_trait]
    impl Embedder for Counting {
        fn id(&self) -> EmbedderId {
            self.inner.id()
        }
        fn locality(&self) -> Locality {
            Locality::Local
        }
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            if let Some(bad) = self.fail_on
                && texts.iter().any(|t| t == bad)
            {
                return Err(arbor_ports::Error::invalid("text", "refused by the test"));
            }
            self.inner.embed(texts).await
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_calls_share_batches_and_get_exactly_their_own_vectors() {
        let counting = Arc::new(Counting::default());
        let coalescing = CoalescingEmbedder::new(counting.clone(), 32);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..40 {
            let embedder = coalescing.clone();
            tasks.spawn(async move {
                let texts = vec![format!("question {i}"), format!("other {i}")];
                (texts.clone(), embedder.embed(&texts).await.unwrap())
            });
        }
        let reference = HashingEmbedder::default();
        while let Some(done) = tasks.join_next().await {
            let (texts, vectors) = done.unwrap();
            assert_eq!(vectors, reference.embed(&texts).await.unwrap(), "each caller gets its own vectors");
        }
        let calls = counting.calls.load(Ordering::SeqCst);
        assert!(calls < 40, "40 concurrent calls were merged into {calls} batches");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_callers_failure_is_not_anothers() {
        let counting = Arc::new(Counting { fail_on: Some("poison"), ..Counting::default() });
        let coalescing = CoalescingEmbedder::new(counting, 32);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..10 {
            let embedder = coalescing.clone();
            tasks.spawn(async move {
                let text = if i == 5 { "poison".to_owned() } else { format!("fine {i}") };
                (i, embedder.embed(&[text]).await)
            });
        }
        while let Some(done) = tasks.join_next().await {
            let (i, result) = done.unwrap();
            assert_eq!(result.is_err(), i == 5, "call {i}");
        }
    }
}
