//! What one step of an instance did: it ran (the next state is to be saved), or it could not
//! run yet and says what it waits for. A step never blocks on an event or a deadline: the
//! caller (a driver loop in memory, or a durable host that drops the instance until then)
//! decides how to wait.

use std::convert::Infallible;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::after;
use crate::concurrent::ScopeState;
use crate::error::{ErrorObject, WorkflowError};
use crate::events::{EventSpec, Io};
use crate::retry::RetryProgress;

/// The result of one step of a compiled state machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress<S> {
    /// The step ran: `S` is the state to save (possibly an end).
    Ran(S),
    /// Nothing could run yet: `S` is the state as it was, waiting for what [`Wait`] says. The
    /// step had no effect (it called no function, consumed and produced no event).
    Waiting(S, Wait),
}

impl<S> Progress<S> {
    /// The state, whether the step ran or waits.
    pub fn into_state(self) -> S {
        match self {
            Progress::Ran(state) | Progress::Waiting(state, _) => state,
        }
    }

    /// What the state waits for, when the step could not run.
    pub fn wait(&self) -> Option<&Wait> {
        match self {
            Progress::Ran(_) => None,
            Progress::Waiting(_, wait) => Some(wait),
        }
    }
}

/// What a waiting instance waits for: any event of some definitions, and a deadline at which
/// it must be stepped even if none comes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Wait {
    /// The earliest deadline (a timeout, the end of a delay or of a retry wait).
    pub until: Option<Timestamp>,
    /// The event definitions any of whose events may let it go on, each once, in the order
    /// first named. (A sub-flow's definitions are its own workflow's.)
    pub events: Vec<&'static EventSpec>,
}

impl Wait {
    /// A wait for `events` until `until`.
    pub fn new(until: Option<Timestamp>, events: &[&'static EventSpec]) -> Self {
        let mut wait = Self {
            until,
            events: Vec::with_capacity(events.len()),
        };
        wait.add_events(events);
        wait
    }

    /// A wait for a deadline only.
    pub fn until(until: Timestamp) -> Self {
        Self {
            until: Some(until),
            events: Vec::new(),
        }
    }

    /// Waits for what either waits for: the union of the events, the earlier deadline.
    pub fn merge(&mut self, other: &Wait) {
        self.until = match (self.until, other.until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.add_events(&other.events);
    }

    fn add_events(&mut self, events: &[&'static EventSpec]) {
        for event in events {
            if !self.events.contains(event) {
                self.events.push(event);
            }
        }
    }

    /// Whether it can never end: no event and no deadline.
    pub fn is_forever(&self) -> bool {
        self.until.is_none() && self.events.is_empty()
    }
}

/// How a task attempt ended, inside the generated `run_*` method of a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempt<P> {
    /// The task is done: take exit `n` (a switch's choice, an event entry, else 0).
    Exit(usize),
    /// A nested scope ended the whole instance (`terminate`), its output in the task data.
    Terminate,
    /// The task is not done: it keeps running with `P` (its branches, iterations, callback
    /// phase...). `Some(wait)`: nothing could run, it waits for that; `None`: it made progress.
    Stay(P, Option<Wait>),
}

/// The end of one step of a task that finishes within the step and has no retry or onError:
/// the state `exit` builds from the exit taken and the task's data, the scope's `terminated`
/// state when a nested scope ended the instance, else the run's failure with the task's data.
///
/// Generated `run_*` methods of such tasks (most of a workflow's) call this instead of each
/// spelling out the same match (issue 10: ~20 lines a simple task).
///
/// # Errors
/// The task's failure, with its data, or what `exit` refuses.
pub fn settle<S: ScopeState>(
    attempt: Result<Attempt<Infallible>, ErrorObject>,
    data: Value,
    workflow: &'static str,
    task: &'static str,
    exit: impl FnOnce(usize, Value) -> Result<S, WorkflowError>,
) -> Result<Progress<S>, WorkflowError> {
    let next = match attempt {
        Ok(Attempt::Exit(taken)) => exit(taken, data),
        Ok(Attempt::Terminate) => Ok(S::terminated(data)),
        Ok(Attempt::Stay(never, _)) => match never {},
        Err(error) => Err(WorkflowError::new(workflow, task, error, data)),
    };
    next.map(Progress::Ran)
}

/// The step that ran to `next`, or the run's failure.
///
/// # Errors
/// `next`'s.
pub fn ran<S>(next: Result<S, WorkflowError>) -> Result<Progress<S>, WorkflowError> {
    next.map(Progress::Ran)
}

/// `now + duration`, stopping at the largest representable instant.
pub fn deadline(io: &Io, duration: Duration) -> Timestamp {
    after(io.now(), duration)
}

/// `Some(now + duration)` for a duration, `None` without one.
pub fn deadline_of(io: &Io, duration: Option<Duration>) -> Option<Timestamp> {
    duration.map(|duration| deadline(io, duration))
}

/// [`deadline`] of a task that `retry` restarts: counted from when the retry's attempt
/// starts, the end of its wait, since a task's timeout and delay run "from when the task
/// becomes active" (the tasks draft), not from the failure that scheduled the retry.
pub fn retried_deadline(io: &Io, retry: &RetryProgress, duration: Duration) -> Timestamp {
    after(retry.starts_at(io.now()), duration)
}

/// [`deadline_of`] of a task that `retry` restarts (see [`retried_deadline`]).
pub fn retried_deadline_of(
    io: &Io,
    retry: &RetryProgress,
    duration: Option<Duration>,
) -> Option<Timestamp> {
    duration.map(|duration| retried_deadline(io, retry, duration))
}

/// Whether `deadline` (if any) has come.
pub fn passed(io: &Io, deadline: Option<Timestamp>) -> bool {
    deadline.is_some_and(|deadline| io.now() >= deadline)
}

/// The state's progress: `Waiting` when `wait` is set, else `Ran`.
pub fn progress<S>(state: S, wait: Option<Wait>) -> Progress<S> {
    match wait {
        Some(wait) => Progress::Waiting(state, wait),
        None => Progress::Ran(state),
    }
}

/// Where a callback task is: calling its action, or waiting for the callback event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallbackPhase {
    /// About to call its action.
    #[default]
    Call,
    /// The action ran: waiting for the event until `until` (then the task goes on without it).
    Wait {
        /// When the wait ends without the event.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<Timestamp>,
        /// The task's input, kept when the task may be retried (a retry calls the action again
        /// with it). Written only when kept, so that a `null` input kept reads back as kept.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "kept"
        )]
        input: Option<Value>,
    },
}

/// A field present in a saved state, `null` included: `Option<Value>` would read a `null` as
/// absent.
fn kept<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Where a task of the earlier drafts resumes after one of its actions failed and its own retry
/// definition asked to call it again: the action (by position in the task), and the action's
/// retry progress (its count and when it may run again). The task's data at that point is the
/// state's data; the actions before it are not called again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResume {
    /// The position of the action in the task (every entry's actions, in document order).
    pub action: usize,
    /// The action's retries so far.
    #[serde(default)]
    pub retry: RetryProgress,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concurrent::ScopeEnd;
    use serde_json::json;

    /// A callback's kept input comes back from a save as it was: a `null` one was read as none
    /// kept, and a retry would have started from the task's data instead.
    #[test]
    fn a_kept_null_input_survives_a_save() {
        for input in [Some(Value::Null), Some(json!({"a": 1})), None] {
            let phase = CallbackPhase::Wait { until: None, input };
            let saved = serde_json::to_value(&phase).unwrap();
            let back: CallbackPhase = serde_json::from_value(saved.clone()).unwrap();
            assert_eq!(back, phase, "{saved}");
        }
        let saved = json!({"wait": {}});
        let back: CallbackPhase = serde_json::from_value(saved).unwrap();
        assert_eq!(
            back,
            CallbackPhase::Wait {
                until: None,
                input: None
            }
        );
    }

    /// A scope's state as `settle` sees it: where it went, or how it ended.
    #[derive(Debug, PartialEq)]
    enum Settled {
        Next(usize, Value),
        Terminated(Value),
    }

    impl ScopeState for Settled {
        fn end(self) -> Result<ScopeEnd, Self> {
            Err(self)
        }

        fn listening(&self) -> Wait {
            Wait::default()
        }

        fn position(&self) -> String {
            String::new()
        }

        fn terminated(output: Value) -> Self {
            Settled::Terminated(output)
        }
    }

    #[test]
    fn settle_takes_the_exit_terminates_or_fails_with_the_tasks_data() {
        let next = |exit: usize, data: Value| Ok(Settled::Next(exit, data));
        let taken = settle(Ok(Attempt::Exit(2)), json!({"n": 1}), "wf", "Task", next);
        assert_eq!(taken, Ok(Progress::Ran(Settled::Next(2, json!({"n": 1})))));
        let ended = settle(Ok(Attempt::Terminate), json!([1]), "wf", "Task", next);
        assert_eq!(ended, Ok(Progress::Ran(Settled::Terminated(json!([1])))));
        let failed = settle(
            Err(ErrorObject::new("Boom", "it broke")),
            json!({"kept": true}),
            "wf",
            "Task",
            next,
        )
        .expect_err("the attempt failed");
        assert_eq!(failed.task(), "Task");
        assert_eq!(failed.error().name, "Boom");
        assert_eq!(failed.data(), &json!({"kept": true}));
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    const fn spec(name: &'static str) -> EventSpec {
        EventSpec {
            name,
            source: "s",
            event_type: name,
            correlation: None,
        }
    }

    static A: EventSpec = spec("a");
    static B: EventSpec = spec("b");
    static C: EventSpec = spec("c");

    #[test]
    fn merging_takes_the_union_and_the_earlier_deadline() {
        let mut wait = Wait::new(Some(at(20)), &[&C, &A, &C]);
        assert_eq!(wait.events, [&C, &A]);
        wait.merge(&Wait::new(Some(at(10)), &[&B]));
        wait.merge(&Wait::new(None, &[&A]));
        assert_eq!(wait, Wait::new(Some(at(10)), &[&C, &A, &B]));
        let mut deadline_only = Wait::default();
        assert!(deadline_only.is_forever());
        deadline_only.merge(&Wait::until(at(5)));
        assert_eq!(deadline_only.until, Some(at(5)));
        assert!(!deadline_only.is_forever());
    }
}
