//! The branches of a parallel task, each in a [`Slot`].

use std::future::Future;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::round::{Control, Counted, MemberEnd, StepFuture, Stepped, run_member};
use super::{ScopeEnd, ScopeState};
use crate::error::{ErrorObject, WorkflowError};
use crate::events::Io;
use crate::progress::{Progress, Wait};

/// One branch of a parallel task, as the task's state keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot<S> {
    /// It runs; `until` is its `branchExecTimeout` deadline.
    Running {
        /// Where the branch is.
        state: S,
        /// When it must have completed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<Timestamp>,
        /// How many of its steps ran: its calls' keys count from it.
        #[serde(default, skip_serializing_if = "is_zero")]
        steps: u32,
    },
    /// It completed with this output.
    Done {
        /// The branch's output.
        output: Value,
    },
    /// It does not run here: cancelled once the task had what it needed, or a branch the task
    /// does not wait for (it runs on its own).
    Stopped,
}

impl<S: ScopeState> Slot<S> {
    /// A running branch starting at `state`, with its deadline.
    pub fn start(state: S, until: Option<Timestamp>) -> Self {
        Slot::Running {
            state,
            until,
            steps: 0,
        }
    }

    /// The branch's output, if it completed.
    pub fn output(&self) -> Option<&Value> {
        match self {
            Slot::Done { output } => Some(output),
            _ => None,
        }
    }

    /// Takes the branch's output (if it completed), leaving it stopped.
    pub fn take_output(&mut self) -> Option<Value> {
        match std::mem::replace(self, Slot::Stopped) {
            Slot::Done { output } => Some(output),
            _ => None,
        }
    }

    /// Whether it completed.
    pub fn is_done(&self) -> bool {
        matches!(self, Slot::Done { .. })
    }

    /// Where a running branch is (`label/position`).
    pub fn position(&self, label: &str) -> Option<String> {
        match self {
            Slot::Running { state, .. } => Some(format!("{label}/{}", state.position())),
            _ => None,
        }
    }

    /// What a running branch listens for (its deadline included).
    pub fn listening(&self) -> Wait {
        match self {
            Slot::Running { state, until, .. } => {
                let mut wait = state.listening();
                wait.merge(&Wait {
                    until: *until,
                    events: Vec::new(),
                });
                wait
            }
            _ => Wait::default(),
        }
    }
}

/// The branch in `slot`, for a `round` under `control`: `step` runs one step of the branch's
/// scope, as often as the round lets it. The slot holds the branch's new state when it returns;
/// a branch dropped before it returns (the round ended without it) leaves the slot stopped. A
/// branch past its deadline fails with a `TimeoutError` naming it (`label`, `timeout_text`).
/// `origin` is the instance's step in which the task started its branches (see
/// [`step_origin`](crate::action::step_origin)).
#[allow(
    clippy::too_many_arguments,
    reason = "the branch's settings, as generated"
)]
#[allow(
    clippy::let_and_return,
    reason = "the box's type must be the future's before it becomes the return type's `dyn`"
)]
pub fn step_slot<'a, S, F, Fut>(
    slot: &'a mut Slot<S>,
    control: &'a Control,
    origin: u64,
    io: &'a Io,
    label: &'a str,
    timeout_text: &'a str,
    step: F,
) -> StepFuture<'a>
where
    S: ScopeState + 'a,
    F: FnMut(S) -> Fut + Send + 'a,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>> + Send + 'a,
{
    // Bound first (see the `allow`).
    let step = crate::boxed::pinned!(async move {
        let (state, until, mut steps) = match std::mem::replace(slot, Slot::Stopped) {
            Slot::Running {
                state,
                until,
                steps,
            } => (state, until, steps),
            // A branch that completed or stopped keeps its slot as it was.
            settled => {
                *slot = settled;
                control.leave();
                return Stepped::Idle;
            }
        };
        let timed_out = || {
            crate::trace::timed_out(label, timeout_text);
            Stepped::Failed(ErrorObject::new(
                ErrorObject::TIMEOUT,
                format!("{label} did not complete within {timeout_text}"),
            ))
        };
        let counted = Counted {
            origin,
            steps: &mut steps,
        };
        // Made where it is awaited: made first and awaited later, it was copied into the
        // await's place (issue 10).
        let end = match until {
            None => run_member(state, io, control, counted, step).await,
            Some(deadline) if io.now() >= deadline => {
                control.leave();
                return timed_out();
            }
            Some(deadline) => tokio::select! {
                end = run_member(state, io, control, counted, step) => end,
                () = io.clock().sleep_until(deadline) => {
                    control.leave();
                    return timed_out();
                }
            },
        };
        match end {
            MemberEnd::Failed(failure) => Stepped::Failed(failure.error().clone()),
            MemberEnd::Waiting(state, mut wait, ran) => {
                *slot = Slot::Running {
                    state,
                    until,
                    steps,
                };
                if ran {
                    return Stepped::Ran;
                }
                wait.merge(&Wait {
                    until,
                    events: Vec::new(),
                });
                Stepped::Blocked(*wait)
            }
            MemberEnd::Ended(ScopeEnd::Completed(output)) => {
                *slot = Slot::Done { output };
                Stepped::Completed
            }
            MemberEnd::Ended(ScopeEnd::Terminated(output)) => Stepped::Terminated(output),
        }
    });
    step
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}
