//! Nested scopes: the branches of a parallel task and the iterations of a foreach task.
//!
//! Their states are part of the task's state ([`Slot`]s of branches, [`Iterations`]), so a
//! saved instance keeps the branches and iterations that finished. Each step of the task runs
//! one round: every branch or iteration runs step after step, concurrently, on the instance's
//! own tokio task (the futures borrow the machine and the [`Io`](crate::Io), so they are not
//! spawned), until all of them wait at once; so the task's state is saved whenever it waits as
//! a whole. A round that has all it needs (enough branches completed, an iteration that
//! terminated or failed) drops the steps still running: they are cancelled at their current
//! await point, and their functions may have been called (calls are at least once).

mod iterations;
mod round;
mod slot;

pub use iterations::{Iteration, Iterations};
pub use round::{Control, RoundEnd, round};
pub use slot::{Slot, step_slot};

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde_json::Value;

use crate::progress::Wait;

/// Polls `future` once, in the calling task's context (its waker is the task's, so a future
/// that is not ready yet wakes the task as if it had been awaited): how a round runs a member
/// where it starts, and takes in members that ended, without waiting for any.
fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) -> impl Future<Output = Poll<F::Output>> {
    std::future::poll_fn(move |cx| Poll::Ready(future.as_mut().poll(cx)))
}

/// How a nested scope (a branch, an iteration, a sub-flow) ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ScopeEnd {
    /// It reached an end of kind `default` (or `event`) with this output.
    Completed(Value),
    /// It reached an end of kind `terminate` with this output: the whole instance ends.
    Terminated(Value),
}

impl ScopeEnd {
    /// The output, however it ended.
    pub fn into_output(self) -> Value {
        match self {
            ScopeEnd::Completed(output) | ScopeEnd::Terminated(output) => output,
        }
    }
}

/// What the runtime asks of a scope's state enum (generated for every scope).
pub trait ScopeState: Sized + Send {
    /// How the scope ended, or the state itself when it has not.
    ///
    /// # Errors
    /// The state itself, when it has not ended.
    fn end(self) -> Result<ScopeEnd, Self>;

    /// What the state listens for: the events it would take and its earliest deadline.
    fn listening(&self) -> Wait;

    /// Where it is, for people: the task names down to the running tasks of nested scopes
    /// (`Fork/Branch A/Charge | Fork/Branch B/Ship`), or `completed`/`terminated`.
    fn position(&self) -> String;

    /// The type of the task it is at (`operation`, `switch`...), empty once it ended: for
    /// tracing.
    fn task_type(&self) -> &'static str {
        ""
    }

    /// The state of a scope that an `end: {kind: terminate}` (its own or a nested scope's)
    /// ended, with `output`.
    fn terminated(output: serde_json::Value) -> Self;
}

/// How many nested positions a position shows before it only counts the rest.
const POSITIONS_SHOWN: usize = 4;

/// `task` followed by the positions of its running nested scopes (`label/position`), joined.
pub fn nested_position(task: &str, running: impl Iterator<Item = String>) -> String {
    let mut shown: Vec<String> = Vec::new();
    let mut more = 0_usize;
    for position in running {
        if shown.len() < POSITIONS_SHOWN {
            shown.push(format!("{task}/{position}"));
        } else {
            more += 1;
        }
    }
    if shown.is_empty() {
        return task.to_owned();
    }
    let mut text = shown.join(" | ");
    if more > 0 {
        text.push_str(&format!(" | {more} more"));
    }
    text
}
