//! The branches of a parallel task.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use super::ScopeEnd;
use crate::error::{ErrorObject, WorkflowError};

/// A running nested scope: a branch, or one iteration of a foreach body.
pub type ScopeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ScopeEnd, WorkflowError>> + Send + 'a>>;

/// How the branches of a parallel task ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// Per branch, in branch order: its output if it completed before the task did, `None` if it
    /// was cancelled.
    pub outputs: Vec<Option<Value>>,
    /// The output of the branch that reached a `terminate` end, which ends the instance.
    pub terminated: Option<Value>,
}

/// Runs `branches` concurrently until `needed` of them completed (`and`: all of them, `xor`: 1,
/// `n_of_m`: n; more than there are means all), then drops (cancels) the others, which stop at
/// their current await point.
///
/// It returns at once, cancelling the others, when a branch reaches a `terminate` end (with
/// [`Joined::terminated`] set) or fails (with its error). A branch still running
/// `branch_timeout` after the task began fails with a `TimeoutError`; that error carries
/// `task`, but no workflow id (empty) and no data (`null`): the caller handles it with the
/// task's `retry`/`onError` and its own data, as for any error of the task.
///
/// # Errors
/// The first branch error, or the timeout of a branch.
pub async fn join_branches<'a>(
    branches: Vec<ScopeFuture<'a>>,
    needed: usize,
    branch_timeout: Option<Duration>,
    task: &str,
) -> Result<Joined, WorkflowError> {
    let needed = needed.min(branches.len());
    let mut outputs: Vec<Option<Value>> = branches.iter().map(|_| None).collect();
    let mut running: FuturesUnordered<_> = branches
        .into_iter()
        .enumerate()
        .map(|(index, branch)| async move { (index, within(branch, branch_timeout).await) })
        .collect();
    let mut completed = 0;
    while completed < needed {
        let Some((index, end)) = running.next().await else {
            break;
        };
        match end {
            None => return Err(timed_out(task, index, branch_timeout)),
            Some(Err(error)) => return Err(error),
            Some(Ok(ScopeEnd::Terminated(output))) => {
                return Ok(Joined {
                    outputs,
                    terminated: Some(output),
                });
            }
            Some(Ok(ScopeEnd::Completed(output))) => {
                if let Some(slot) = outputs.get_mut(index) {
                    *slot = Some(output);
                }
                completed += 1;
            }
        }
    }
    Ok(Joined {
        outputs,
        terminated: None,
    })
}

/// `scope`'s end, or `None` when it is still running after `timeout`.
async fn within(
    scope: ScopeFuture<'_>,
    timeout: Option<Duration>,
) -> Option<Result<ScopeEnd, WorkflowError>> {
    match timeout {
        None => Some(scope.await),
        Some(limit) => tokio::time::timeout(limit, scope).await.ok(),
    }
}

fn timed_out(task: &str, index: usize, timeout: Option<Duration>) -> WorkflowError {
    let limit = timeout.map(crate::iso::duration).unwrap_or_default();
    let error = ErrorObject::new(
        ErrorObject::TIMEOUT,
        format!(
            "branch {} of task `{task}` did not complete within {limit}",
            index + 1
        ),
    );
    WorkflowError::new("", task, error, Value::Null)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;
    use tokio::time::{Instant, sleep};

    use super::*;

    /// A branch that sleeps `secs`, records that it finished, then ends with `end`.
    fn branch(
        secs: u64,
        finished: &Arc<AtomicUsize>,
        end: Result<ScopeEnd, WorkflowError>,
    ) -> ScopeFuture<'static> {
        let finished = finished.clone();
        Box::pin(async move {
            sleep(Duration::from_secs(secs)).await;
            finished.fetch_add(1, Ordering::SeqCst);
            end
        })
    }

    fn done(value: i64) -> Result<ScopeEnd, WorkflowError> {
        Ok(ScopeEnd::Completed(json!(value)))
    }

    /// Lets every cancelled branch's deadline pass: none may have finished.
    async fn later(finished: &Arc<AtomicUsize>) -> usize {
        sleep(Duration::from_secs(1_000)).await;
        finished.load(Ordering::SeqCst)
    }

    #[tokio::test(start_paused = true)]
    async fn all_waits_for_every_branch() {
        let finished = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let branches = vec![
            branch(3, &finished, done(1)),
            branch(1, &finished, done(2)),
            branch(2, &finished, done(3)),
        ];
        let joined = join_branches(branches, 3, None, "Split").await;
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        assert_eq!(
            joined,
            Ok(Joined {
                outputs: vec![Some(json!(1)), Some(json!(2)), Some(json!(3))],
                terminated: None,
            })
        );
    }

    #[tokio::test(start_paused = true)]
    async fn first_cancels_the_rest() {
        let finished = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let branches = vec![
            branch(5, &finished, done(1)),
            branch(2, &finished, done(2)),
            branch(9, &finished, done(3)),
        ];
        let joined = join_branches(branches, 1, None, "Race").await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(
            joined,
            Ok(Joined {
                outputs: vec![None, Some(json!(2)), None],
                terminated: None,
            })
        );
        assert_eq!(later(&finished).await, 1, "cancelled branches never finish");
    }

    #[tokio::test(start_paused = true)]
    async fn at_least_n_returns_at_the_nth() {
        let finished = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let branches = vec![
            branch(4, &finished, done(1)),
            branch(1, &finished, done(2)),
            branch(6, &finished, done(3)),
            branch(3, &finished, done(4)),
        ];
        let joined = join_branches(branches, 2, None, "Quorum").await;
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        assert_eq!(
            joined.map(|joined| joined.outputs),
            Ok(vec![None, Some(json!(2)), None, Some(json!(4))])
        );
        assert_eq!(later(&finished).await, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn terminate_ends_at_once() {
        let finished = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let branches = vec![
            branch(1, &finished, done(1)),
            branch(
                2,
                &finished,
                Ok(ScopeEnd::Terminated(json!({"stop": true}))),
            ),
            branch(3, &finished, done(3)),
        ];
        let joined = join_branches(branches, 3, None, "Split").await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(
            joined,
            Ok(Joined {
                outputs: vec![Some(json!(1)), None, None],
                terminated: Some(json!({"stop": true})),
            })
        );
        assert_eq!(later(&finished).await, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_error_ends_at_once() {
        let finished = Arc::new(AtomicUsize::new(0));
        let failure = WorkflowError::new(
            "wf",
            "Inner",
            ErrorObject::new("Boom", "failed"),
            json!({"x": 1}),
        );
        let started = Instant::now();
        let branches = vec![
            branch(5, &finished, done(1)),
            branch(2, &finished, Err(failure.clone())),
        ];
        let joined = join_branches(branches, 2, None, "Split").await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(joined, Err(failure));
        assert_eq!(later(&finished).await, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_branch_times_out_exactly() {
        let finished = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let branches = vec![
            branch(1, &finished, done(1)),
            branch(60, &finished, done(2)),
        ];
        let joined = join_branches(branches, 2, Some(Duration::from_secs(30)), "Split").await;
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        let Err(error) = joined else {
            panic!("the second branch is too slow");
        };
        assert_eq!(error.task(), "Split");
        assert_eq!(
            *error.error(),
            ErrorObject::new(
                ErrorObject::TIMEOUT,
                "branch 2 of task `Split` did not complete within PT30S"
            )
        );
        assert_eq!(later(&finished).await, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn no_branches_or_more_needed_than_there_are() {
        assert_eq!(
            join_branches(Vec::new(), 1, None, "Empty").await,
            Ok(Joined {
                outputs: Vec::new(),
                terminated: None,
            })
        );
        let finished = Arc::new(AtomicUsize::new(0));
        let joined = join_branches(vec![branch(1, &finished, done(1))], 5, None, "Few").await;
        assert_eq!(
            joined.map(|joined| joined.outputs),
            Ok(vec![Some(json!(1))])
        );
    }

    #[test]
    fn the_join_is_send_when_its_branches_borrow() {
        fn assert_send<T: Send>(_: &T) {}
        let data = json!({"borrowed": true});
        let borrowed: ScopeFuture<'_> = Box::pin(async { Ok(ScopeEnd::Completed(data.clone())) });
        let join = join_branches(vec![borrowed], 1, None, "Send");
        assert_send(&join);
    }
}
