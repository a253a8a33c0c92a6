//! Group commit across callers: commits queued while earlier ones are being written go to the
//! database together, in one transaction, so that many instances' transitions share one
//! WAL flush and a handful of statements.

use std::sync::Arc;

use jiff::Timestamp;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::Core;
use super::commits::commit_prepared;
use crate::store::codec::unavailable;
use crate::store::{Commit, CommitResult, StoreError};

/// How many groups are written at once (each holds one pooled connection).
const CONCURRENT_GROUPS: usize = 4;

/// Most commits in one group.
const MAX_GROUP: usize = 2000;

/// One caller's commits, and whom to answer.
struct Queued {
    commits: Vec<(Commit, Timestamp)>,
    reply: oneshot::Sender<Result<Vec<CommitResult>, StoreError>>,
}

/// Where callers queue commits. Dropping it (with the last store clone) ends the task that
/// writes them, once the queue is empty.
pub(super) struct CommitQueue {
    sender: mpsc::UnboundedSender<Queued>,
}

impl CommitQueue {
    /// Starts the task that writes queued commits through `core`.
    pub(super) fn start(core: Core) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(write_groups(core, receiver));
        Self { sender }
    }

    /// Commits `commits` with whatever else is queued.
    pub(super) async fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let commits = commits.into_iter().map(|commit| (commit, now)).collect();
        self.sender
            .send(Queued { commits, reply })
            .map_err(|_| unavailable("PostgreSQL: the commit task has stopped"))?;
        answer
            .await
            .map_err(|_| unavailable("PostgreSQL: the commit task stopped before answering"))?
    }
}

/// Takes every request queued (once a connection is free for it) and writes them as one group.
async fn write_groups(core: Core, mut receiver: mpsc::UnboundedReceiver<Queued>) {
    let writers = Arc::new(Semaphore::new(CONCURRENT_GROUPS));
    loop {
        let Ok(permit) = writers.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = receiver.recv().await else {
            return;
        };
        let mut size = first.commits.len();
        let mut group = vec![first];
        while size < MAX_GROUP {
            match receiver.try_recv() {
                Ok(queued) => {
                    size += queued.commits.len();
                    group.push(queued);
                }
                Err(_) => break,
            }
        }
        let core = core.clone();
        tokio::spawn(async move {
            write_group(&core, group).await;
            drop(permit);
        });
    }
}

/// How writing a group failed.
enum Failure {
    /// Before the transaction was asked to commit: nothing was written.
    Before(StoreError),
    /// While it committed: it may or may not have been written.
    Committing(StoreError),
}

/// Writes a group and answers each caller. When the group fails before committing (one caller's
/// invalid commit, a deadlock), each caller's commits are written again on their own, so that
/// one caller's failure is not another's.
async fn write_group(core: &Core, group: Vec<Queued>) {
    if group.len() == 1 {
        for queued in group {
            let outcome = write(core, &queued.commits)
                .await
                .map_err(Failure::into_error);
            let _ = queued.reply.send(outcome);
        }
        return;
    }
    let mut all = Vec::new();
    let mut callers = Vec::with_capacity(group.len());
    for queued in group {
        callers.push((queued.commits.len(), queued.reply));
        all.extend(queued.commits);
    }
    match write(core, &all).await {
        Ok(mut results) => {
            for (count, reply) in callers {
                let rest = results.split_off(count.min(results.len()));
                let _ = reply.send(Ok(results));
                results = rest;
            }
        }
        Err(Failure::Committing(error)) => {
            for (_, reply) in callers {
                let _ = reply.send(Err(error.clone()));
            }
        }
        Err(Failure::Before(_)) => {
            let mut start = 0;
            for (count, reply) in callers {
                let own = &all[start..start + count];
                start += count;
                let _ = reply.send(write(core, own).await.map_err(Failure::into_error));
            }
        }
    }
}

impl Failure {
    fn into_error(self) -> StoreError {
        match self {
            Failure::Before(error) | Failure::Committing(error) => error,
        }
    }
}

/// Writes commits in one transaction.
async fn write(core: &Core, commits: &[(Commit, Timestamp)]) -> Result<Vec<CommitResult>, Failure> {
    let mut client = core.client().await.map_err(Failure::Before)?;
    let prepared = core
        .prepare_commits(&client, commits)
        .await
        .map_err(Failure::Before)?;
    let transaction = client
        .transaction()
        .await
        .map_err(|error| Failure::Before(error.into()))?;
    let results = commit_prepared(&transaction, &prepared)
        .await
        .map_err(Failure::Before)?;
    transaction
        .commit()
        .await
        .map_err(|error| Failure::Committing(error.into()))?;
    Ok(results)
}
