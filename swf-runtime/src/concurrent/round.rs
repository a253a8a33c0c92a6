//! One round of a parallel or foreach task: every branch or iteration runs, concurrently, step
//! after step, until each one waits or ends. A member that waits stays in the round and goes on
//! when what it waits for comes while the others still run; the round is over when every
//! member waits at the same time (or has ended), so a slow member never holds up a fast one and
//! the task's state is saved whenever the whole task waits.

use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use futures_util::stream::{FuturesUnordered, StreamExt};
use jiff::Timestamp;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

use super::{ScopeEnd, ScopeState};
use crate::error::{ErrorObject, WorkflowError};
use crate::events::Io;
use crate::progress::{Progress, Wait};

/// One branch's part in a round, as [`round`] runs it: the future that runs the branch, under
/// the round's [`Control`], which it borrows (one allocation per branch: the round's control
/// is the task's local, not shared, and the branch's future is made at once rather than by a
/// boxed closure given the control later).
pub type StepFuture<'a> = Pin<Box<dyn Future<Output = Stepped> + Send + 'a>>;

/// What one branch or iteration did in a round (its state is already written back).
#[derive(Debug, Clone, PartialEq)]
pub enum Stepped {
    /// It had nothing to run (it had completed, or was stopped).
    Idle,
    /// It ran steps and now waits.
    Ran,
    /// It could not run at all: it waits for this.
    Blocked(Wait),
    /// It completed (its output is kept where its state was).
    Completed,
    /// It reached a `terminate` end with this output: the whole instance ends.
    Terminated(Value),
    /// It failed with this error (the task's retry and onError decide), or ran out of time.
    Failed(ErrorObject),
}

/// How a round ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundEnd {
    /// Some step ran: save the state and go on.
    Ran,
    /// Nothing could run: the task waits for this.
    Waiting(Wait),
    /// As many completed as the task needs: the steps still running were dropped.
    Enough,
    /// A `terminate` end was reached, with this output: the rest were dropped.
    Terminated(Value),
}

/// Who in a round still runs. The round is over once no member runs: from then on a member
/// that waits stays waiting (the round's futures complete and the task's state is saved).
/// A parallel task makes one for each round, for its branches' [`step_slot`](super::step_slot)s
/// and the [`round`] to share.
///
/// The count is read and written with plain loads and stores, never a read-modify-write: the
/// members of a round are futures that borrow the round's control and are polled by the round,
/// on the task that polls it, one at a time, so no two of them ever update it at once. (It
/// is atomic only because those futures must be `Send`.) A `Mutex` took two locked
/// instructions to join and two to leave, four per foreach iteration: each one a full memory
/// barrier on x86 (issue 10).
pub struct Control {
    /// How many members run, with [`OVER`] set once the round is over and [`LISTENED`] once a
    /// member listened for it.
    members: AtomicUsize,
    over: Notify,
}

/// The bit of [`Control`]'s count that says the round is over.
const OVER: usize = 1 << (usize::BITS - 1);

/// The bit of [`Control`]'s count that says a member listens for the round's end: without it,
/// the last member to leave does not call `Notify::notify_waiters`, which takes a lock and
/// walks an empty list (most rounds have no member that waits; issue 10).
const LISTENED: usize = 1 << (usize::BITS - 2);

/// The bits of [`Control`]'s count that are not the count.
const FLAGS: usize = OVER | LISTENED;

impl Default for Control {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members = self.members.load(Ordering::Relaxed);
        f.debug_struct("Control")
            .field("running", &(members & !FLAGS))
            .field("over", &(members & OVER != 0))
            .finish()
    }
}

impl Control {
    /// The control of a round in which nothing runs yet.
    #[must_use]
    pub fn new() -> Self {
        Self {
            members: AtomicUsize::new(0),
            over: Notify::new(),
        }
    }

    /// Counts a member that starts running; false when the round is already over.
    pub(crate) fn join(&self) -> bool {
        let members = self.members.load(Ordering::Relaxed);
        if members & OVER != 0 {
            return false;
        }
        self.members.store(members + 1, Ordering::Relaxed);
        true
    }

    /// Whether the round is over.
    pub(crate) fn is_over(&self) -> bool {
        self.members.load(Ordering::Relaxed) & OVER != 0
    }

    /// A member stops running (it ended, or it waits); the last one ends the round.
    pub(crate) fn leave(&self) {
        let members = self.members.load(Ordering::Relaxed);
        let running = (members & !FLAGS).saturating_sub(1);
        if running == 0 && members & OVER == 0 {
            self.members
                .store(members & LISTENED | OVER, Ordering::Relaxed);
            if members & LISTENED != 0 {
                self.over.notify_waiters();
            }
        } else {
            self.members
                .store(members & FLAGS | running, Ordering::Relaxed);
        }
    }

    /// What completes once the round is over (the round's last member to leave wakes it, if it
    /// was enabled by then).
    fn listen(&self) -> Notified<'_> {
        let members = self.members.load(Ordering::Relaxed);
        self.members.store(members | LISTENED, Ordering::Relaxed);
        self.over.notified()
    }

    /// A member waits for `wait` (having read `seen` arrivals before its step). True when it
    /// came while the round still ran: the member runs again. False when the round is over.
    async fn wait(&self, io: &Io, wait: &Wait, seen: u64) -> bool {
        let mut over = pin!(self.listen());
        over.as_mut().enable();
        self.leave();
        if self.is_over() {
            return false;
        }
        tokio::select! {
            progressed = io.wait_for(wait, seen) => {
                if !progressed {
                    // Nothing can reach it any more: it waits out the round.
                    over.await;
                    return false;
                }
            }
            () = &mut over => return false,
        }
        self.join()
    }
}

/// How one member's run in a round ended.
pub(crate) enum MemberEnd<S> {
    /// It waits for `Wait`; `bool`: whether it ran any step first. Its count of steps is
    /// updated. The wait is boxed: a member that waits is rare, and every member's end is
    /// moved from its future to its round (a foreach iteration's, 136 bytes with the wait
    /// inline, was moved three times per iteration, each by a call of `memcpy`; issue 10).
    Waiting(S, Box<Wait>, bool),
    /// It ended.
    Ended(ScopeEnd),
    /// It failed.
    Failed(WorkflowError),
}

/// Where a member's steps count from: the step its task started its members in, and its own
/// count of steps that ran (saved with its state).
pub(crate) struct Counted<'a> {
    pub(crate) origin: u64,
    pub(crate) steps: &'a mut u32,
}

/// Runs one member (already counted by [`Control::join`]) step after step until it ends, or
/// waits when the round is over.
///
/// Each branch's and iteration's boxed step holds this future, so it is kept small (issue 10;
/// 840 bytes for a branch of one task, now 384): the step's outcome is taken apart before
/// anything else is awaited (a `match` on it would keep it across those awaits), and the wait
/// for the round, which most members never reach, is boxed; and it is not an `async fn`, which
/// would hold its arguments (the state among them) twice.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn holds its arguments twice"
)]
pub(crate) fn run_member<'a, S, Fut>(
    mut state: S,
    io: &'a Io,
    control: &'a Control,
    counted: Counted<'a>,
    mut step: impl FnMut(S) -> Fut + 'a,
) -> impl Future<Output = MemberEnd<S>> + 'a
where
    S: ScopeState + 'a,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    async move {
        let mut ran = false;
        let Counted { origin, steps } = counted;
        loop {
            let seen = io.arrivals();
            // Only steps that ran count: a step that found nothing to do has no calls, and may or
            // may not happen when the round runs again.
            let span = crate::trace::task_span(&state);
            let stepping = crate::action::member_step(origin, *steps, || step(state));
            let stepped = crate::trace::in_span!(stepping, span);
            // The state to go on from, and what it waits for if it could not run.
            let (next, waiting) = match stepped {
                Err(failure) => {
                    control.leave();
                    return MemberEnd::Failed(failure);
                }
                Ok(Progress::Ran(next)) => {
                    ran = true;
                    *steps = steps.saturating_add(1);
                    match next.end() {
                        Ok(end) => {
                            control.leave();
                            return MemberEnd::Ended(end);
                        }
                        Err(next) => (next, None),
                    }
                }
                Ok(Progress::Waiting(same, wait)) => (same, Some(wait)),
            };
            state = next;
            match waiting {
                // A member that never waits must not starve the others of the thread.
                None => tokio::task::consume_budget().await,
                Some(wait) => {
                    if !Box::pin(control.wait(io, &wait, seen)).await {
                        return MemberEnd::Waiting(state, Box::new(wait), ran);
                    }
                }
            }
        }
    }
}

/// Runs `steps` (made with `control`) concurrently. It ends early, dropping the steps still
/// running, when one terminates or fails, or when `completed + ` the number completing in this
/// round reaches `needed`; and, with a deadline `until` (a parallel task's `stateExecTimeout`),
/// when it comes first, with a `TimeoutError` saying `timeout_message`.
///
/// # Errors
/// The first failure of a step, or the timeout.
pub async fn round(
    steps: Vec<StepFuture<'_>>,
    control: &Control,
    completed: usize,
    needed: usize,
    io: &Io,
    until: Option<Timestamp>,
    timeout_message: &str,
) -> Result<RoundEnd, ErrorObject> {
    let timed_out = || {
        crate::trace::timed_out("task", timeout_message);
        ErrorObject::new(ErrorObject::TIMEOUT, timeout_message)
    };
    if until.is_some_and(|until| io.now() >= until) {
        return Err(timed_out());
    }
    // Made where it is awaited (see `step_slot`).
    match until {
        None => run_round(steps, control, completed, needed).await,
        Some(until) => tokio::select! {
            end = run_round(steps, control, completed, needed) => end,
            () = io.clock().sleep_until(until) => Err(timed_out()),
        },
    }
    .map(|end| match end {
        RoundEnd::Waiting(mut wait) => {
            wait.merge(&Wait {
                until,
                events: Vec::new(),
            });
            RoundEnd::Waiting(wait)
        }
        other => other,
    })
}

async fn run_round(
    steps: Vec<StepFuture<'_>>,
    control: &Control,
    mut completed: usize,
    needed: usize,
) -> Result<RoundEnd, ErrorObject> {
    if completed >= needed {
        return Ok(RoundEnd::Enough);
    }
    // Every member counts as running before any runs, so that the first to wait does not find
    // itself alone.
    for _ in &steps {
        control.join();
    }
    // Made when a member first waits: most rounds have none that does, and the set allocates
    // its queue when made (issue 10).
    let mut running: Option<FuturesUnordered<StepFuture<'_>>> = None;
    let mut ran = false;
    let mut wait = Wait::default();
    let mut members = steps.into_iter();
    loop {
        // Each member is polled once here first, in order: one that does not wait is done
        // without the queue and the wakers of the FuturesUnordered.
        let stepped = match members.next() {
            Some(mut future) => match super::poll_once(future.as_mut()).await {
                Poll::Ready(stepped) => stepped,
                Poll::Pending => {
                    running
                        .get_or_insert_with(FuturesUnordered::new)
                        .push(future);
                    continue;
                }
            },
            None => match &mut running {
                Some(running) => match running.next().await {
                    Some(stepped) => stepped,
                    None => break,
                },
                None => break,
            },
        };
        match stepped {
            Stepped::Idle => {}
            Stepped::Ran => ran = true,
            Stepped::Blocked(blocked) => wait.merge(&blocked),
            Stepped::Completed => {
                ran = true;
                completed += 1;
                if completed >= needed {
                    return Ok(RoundEnd::Enough);
                }
            }
            Stepped::Terminated(output) => return Ok(RoundEnd::Terminated(output)),
            Stepped::Failed(error) => return Err(error),
        }
    }
    Ok(if ran {
        RoundEnd::Ran
    } else {
        RoundEnd::Waiting(wait)
    })
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;

    #[test]
    fn the_last_member_to_leave_ends_the_round_and_wakes_the_waiting() {
        let control = Control::new();
        let mut over = pin!(control.listen());
        over.as_mut().enable();
        assert!(control.join());
        assert!(control.join());
        // Listening is a flag beside the count, not a member.
        assert_eq!(
            format!("{control:?}"),
            "Control { running: 2, over: false }"
        );
        control.leave();
        assert!(!control.is_over());
        let mut context = Context::from_waker(Waker::noop());
        assert!(over.as_mut().poll(&mut context).is_pending());
        control.leave();
        assert!(control.is_over());
        assert_eq!(over.as_mut().poll(&mut context), Poll::Ready(()));
        // Nobody joins a round that is over, and it stays over.
        assert!(!control.join());
        control.leave();
        assert!(control.is_over());
        assert_eq!(format!("{control:?}"), "Control { running: 0, over: true }");
    }

    #[test]
    fn a_round_counts_its_members_until_none_runs() {
        let control = Control::new();
        for _ in 0..3 {
            assert!(control.join());
        }
        assert_eq!(
            format!("{control:?}"),
            "Control { running: 3, over: false }"
        );
        for _ in 0..2 {
            control.leave();
            assert!(!control.is_over());
        }
        control.leave();
        assert!(control.is_over());
    }
}
