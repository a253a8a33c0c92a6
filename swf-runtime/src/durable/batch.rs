//! Group commit across instances: requests of one kind from every instance a host steps are
//! queued and sent to the store together, so that many transitions share one transaction and
//! one disk sync. A batch goes out as soon as the previous one is done: a lone request waits
//! for nothing, and under load batches grow by themselves.

use std::future::Future;

use tokio::sync::{mpsc, oneshot};

use crate::store::{StoreError, StoreErrorKind};

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A queue of requests answered in batches by one task.
pub(super) struct Batcher<Request, Answer> {
    queue: mpsc::UnboundedSender<(Request, Reply<Answer>)>,
}

impl<Request, Answer> Clone for Batcher<Request, Answer> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
        }
    }
}

impl<Request, Answer> Batcher<Request, Answer>
where
    Request: Send + 'static,
    Answer: Send + 'static,
{
    /// Spawns the task that answers batches of at most `max` requests with `answer`, which
    /// returns one answer per request, in order. It ends when every clone is dropped.
    pub(super) fn spawn<F, Fut>(max: usize, answer: F) -> Self
    where
        F: Fn(Vec<Request>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Vec<Answer>, StoreError>> + Send,
    {
        let (queue, mut requests) = mpsc::unbounded_channel::<(Request, Reply<Answer>)>();
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while requests.recv_many(&mut batch, max.max(1)).await > 0 {
                let (asked, replies): (Vec<Request>, Vec<Reply<Answer>>) =
                    std::mem::take(&mut batch).into_iter().unzip();
                let count = asked.len();
                match answer(asked).await {
                    Ok(answers) if answers.len() == count => {
                        for (reply, answer) in replies.into_iter().zip(answers) {
                            // A requester that went away no longer needs its answer.
                            let _ = reply.send(Ok(answer));
                        }
                    }
                    Ok(answers) => {
                        let error = StoreError::new(
                            StoreErrorKind::Incompatible,
                            format!(
                                "the store answered {} of {count} requests of a batch",
                                answers.len()
                            ),
                        );
                        for reply in replies {
                            let _ = reply.send(Err(error.clone()));
                        }
                    }
                    Err(error) => {
                        for reply in replies {
                            let _ = reply.send(Err(error.clone()));
                        }
                    }
                }
            }
        });
        Self { queue }
    }

    /// Queues `request` and waits for its answer.
    pub(super) async fn ask(&self, request: Request) -> Result<Answer, StoreError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || StoreError::new(StoreErrorKind::Unavailable, "the host has stopped");
        self.queue.send((request, reply)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn requests_queued_together_go_out_together_and_get_their_own_answers() {
        let batches = Arc::new(AtomicUsize::new(0));
        let counted = batches.clone();
        let doubler = Batcher::spawn(100, move |numbers: Vec<u32>| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(numbers.into_iter().map(|n| n * 2).collect()) }
        });
        let asks: Vec<_> = (0..50).map(|n| doubler.ask(n)).collect();
        let answers = futures_util::future::join_all(asks).await;
        let answers: Vec<u32> = answers.into_iter().map(|a| a.unwrap_or(0)).collect();
        assert_eq!(answers, (0..50).map(|n| n * 2).collect::<Vec<_>>());
        // All 50 were queued before the task ran: far fewer batches than requests.
        assert!(batches.load(Ordering::SeqCst) < 50);
    }

    #[tokio::test]
    async fn a_failed_batch_fails_each_of_its_requests() {
        let failing = Batcher::spawn(10, |_: Vec<u32>| async {
            Err::<Vec<u32>, _>(StoreError::new(StoreErrorKind::Unavailable, "down"))
        });
        let answer = failing.ask(1).await;
        assert_eq!(answer.map_err(|e| e.kind), Err(StoreErrorKind::Unavailable));
    }
}
