//! Driving an instance in memory: step after step, waiting between them (for an event or a
//! deadline, on the instance's `Io`) when a step cannot run. Generated `run`, `step` and the
//! in-memory host use these; a durable host steps instances itself and drops them while they
//! wait.

use std::future::Future;
use std::pin::Pin;

use crate::concurrent::{ScopeEnd, ScopeState};
use crate::error::{ErrorObject, WorkflowError};
use crate::events::{EventSpec, Io, Registration};
use crate::progress::{Progress, Wait};
use crate::trace;
use serde_json::Value;

/// Steps `$state` until a step runs, and evaluates to the state after it: [`step_until_ran`]'s
/// work, written out where it is used (`?` and `return` leave the function around it) rather
/// than awaited as a future of its own. That future was made anew for every step of
/// [`run_to_end`], which copied it whole as it started it, its step's future inside: 1.6% of
/// the instructions of a run of ten steps, and about 4% of its time (issue 10).
///
/// Only a host's router needs to know what the instance listens for: a standalone `Io`'s
/// registration does nothing, and asking the state what it waits for costs a walk of it. A
/// state that waits for events alone that can no longer come (its host's events channel
/// closed) makes the function return the `HostError` of [`stranded`], and one that waits for
/// nothing at all that of [`waits_for_nothing`].
macro_rules! step_in_place {
    ($workflow:expr, $state:expr, $io:expr, $events:expr, $advance:expr) => {{
        let mut state = $state;
        let io: &Io = $io;
        let mut listening = io
            .is_hosted()
            .then(|| io.listen($events, &state.listening()));
        loop {
            let seen = io.arrivals();
            io.begin_step();
            let stepped = trace::in_span!($advance(state), trace::task_span(&state), ?);
            match stepped {
                Progress::Ran(next) => break next,
                Progress::Waiting(same, wait) => {
                    if wait.is_forever() {
                        let saved = serde_json::to_value(&same).unwrap_or(Value::Null);
                        return Err(waits_for_nothing($workflow, &same, saved));
                    }
                    if let Some(listening) = &mut listening {
                        listening.update(&wait);
                    }
                    if !io.wait_for(&wait, seen).await {
                        let saved = serde_json::to_value(&same).unwrap_or(Value::Null);
                        return Err(stranded($workflow, &same, &wait, saved));
                    }
                    state = same;
                }
            }
        }
    }};
}

/// Steps `state` until a step runs, and returns the state after it. While a step cannot run,
/// it waits on `io` for what the step waits for, registered with a host's router (`events`
/// being the workflow's definitions) from before the first step, so that no event for it is
/// routed elsewhere meanwhile. An ended state is returned unchanged.
///
/// # Errors
/// The error of the step that failed; a `HostError` of `workflow` when the state can never go
/// on (it waits for events alone and its host's events channel closed, or for nothing at all),
/// with the state, saved, as its data.
pub async fn step_until_ran<S, F, Fut>(
    workflow: &'static str,
    state: S,
    io: &Io,
    events: &'static [EventSpec],
    advance: F,
) -> Result<S, WorkflowError>
where
    S: ScopeState + serde::Serialize,
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    let mut advance = advance;
    Ok(step_in_place!(workflow, state, io, events, advance))
}

/// Tells a standalone `io` the event definitions of `workflow` before `state` is stepped on it
/// (see [`Io::learn_events`]): what the generated `step_with` does first, since the `Io` may be
/// a new one for a state saved earlier.
///
/// # Errors
/// The `EventError` of [`Io::learn_events`], at the state's position, with the state itself
/// (serialized) as the data, so that the caller keeps it.
pub fn learn_events<S: ScopeState + serde::Serialize>(
    io: &Io,
    workflow: &'static str,
    events: &'static [EventSpec],
    state: &S,
) -> Result<(), WorkflowError> {
    io.learn_events(workflow, events).map_err(|error| {
        let data = serde_json::to_value(state).unwrap_or(Value::Null);
        WorkflowError::new(workflow, state.position(), error, data)
    })
}

/// Where [`run_until_waiting`] stopped stepping an instance.
pub(crate) enum Paused<S> {
    /// It ended.
    Ended(ScopeEnd),
    /// A step found nothing to do and the state waits for events alone (no deadline): its
    /// caller holds it as data until an event arrives after `seen` (its reading of
    /// [`Io::arrivals`] before that step), its `registration` kept meanwhile.
    Waiting {
        state: S,
        wait: Wait,
        seen: u64,
        registration: Registration,
    },
}

/// Steps `state` until it ends or waits for events alone, with the registration of
/// [`step_until_ran`] (`registration`: the one kept when it stopped waiting before, else a new
/// one). A wait with a deadline is waited here, as in [`run_to_end`]: only a wait for events
/// alone gives the instance back, since nothing but an event can end it. Every step after the
/// first gives the tokio scheduler its turn (a host may step the instance inline on its router,
/// whose budget this spends: an instance that steps without end goes to a task of its own and
/// the router goes on).
///
/// # Errors
/// The error of the step that failed, or the `HostError` of [`waits_for_nothing`] (its
/// registration ended, the state saved as its data): parked, it would wait until the events
/// channel closed.
pub(crate) async fn run_until_waiting<S, F, Fut>(
    workflow: &'static str,
    state: S,
    io: &Io,
    events: &'static [EventSpec],
    registration: Option<Registration>,
    mut advance: F,
) -> Result<Paused<S>, WorkflowError>
where
    S: ScopeState + serde::Serialize,
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    let mut state = state;
    let mut kept = registration;
    let mut first = true;
    loop {
        let mut running = match state.end() {
            Ok(end) => return Ok(Paused::Ended(end)),
            Err(running) => running,
        };
        if !first {
            tokio::task::consume_budget().await;
        }
        first = false;
        let mut listening = match kept.take() {
            Some(registration) => io.resume_listening(events, registration),
            None => io.listen(events, &running.listening()),
        };
        state = loop {
            let seen = io.arrivals();
            io.begin_step();
            let stepped = trace::in_span!(advance(running), trace::task_span(&running), ?);
            match stepped {
                Progress::Ran(next) => break next,
                Progress::Waiting(same, wait) => {
                    if wait.is_forever() {
                        let saved = serde_json::to_value(&same).unwrap_or(Value::Null);
                        return Err(waits_for_nothing(workflow, &same, saved));
                    }
                    listening.update(&wait);
                    if wait.until.is_none() {
                        return Ok(Paused::Waiting {
                            state: same,
                            wait,
                            seen,
                            registration: listening.detach(),
                        });
                    }
                    io.wait_for(&wait, seen).await;
                    running = same;
                }
            }
        };
        // The next state registers what it listens for itself.
        drop(listening);
    }
}

/// Steps `state` to its end (see [`step_until_ran`]). Every step gives the tokio scheduler its
/// turn, so that an instance retrying without pause does not starve the others.
///
/// The future is boxed: it holds the future of a step of the largest task, kilobytes that
/// every future around it (the caller's `run`, the executor's) would otherwise copy each time
/// it is moved.
///
/// # Errors
/// The error of the step that failed, or a `HostError` with the saved state when it can never
/// go on.
pub fn run_to_end<S, F, Fut>(
    workflow: &'static str,
    state: S,
    io: &Io,
    events: &'static [EventSpec],
    advance: F,
) -> Pin<Box<impl Future<Output = Result<ScopeEnd, WorkflowError>>>>
where
    S: ScopeState + serde::Serialize,
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    crate::boxed::pinned!(async move {
        let mut state = state;
        let mut advance = advance;
        loop {
            let running = match state.end() {
                Ok(end) => return Ok(end),
                Err(running) => running,
            };
            state = step_in_place!(workflow, running, io, events, advance);
            tokio::task::consume_budget().await;
        }
    })
}

/// The error of an instance of `workflow` whose step at `state` waits for nothing that can
/// come: no event and no deadline. No state a workflow makes does (a task waits for its
/// events, its deadline or both); a saved state changed since, or saved by another version of
/// the workflow, can (a foreach whose started iterations are neither running nor done), and
/// waiting on it would hang the run, or keep the instance parked or stored for ever. `data` is
/// what the caller keeps of it (its saved state, where the caller has it).
// Cold, as `WorkflowError::new`: made only when a run fails.
#[cold]
pub(crate) fn waits_for_nothing<S: ScopeState>(
    workflow: &str,
    state: &S,
    data: Value,
) -> WorkflowError {
    let position = state.position();
    WorkflowError::new(
        workflow,
        position.clone(),
        ErrorObject::new(
            crate::host::HOST_ERROR,
            format!(
                "the instance waits at `{position}` for nothing that can come (no event, no \
                 deadline), so it can never go on: its state is not one the workflow makes (saved \
                 by another version of it, or changed since)"
            ),
        ),
        data,
    )
}

/// The names of the definitions `wait` waits for, quoted for a message.
fn waited_names(wait: &Wait) -> Vec<String> {
    wait.events
        .iter()
        .map(|spec| format!("`{}`", spec.name))
        .collect()
}

/// The error of an instance of `workflow` that waits at `state`, with no deadline, for `wait`'s
/// events alone, none of which `workflow` defines (a sub-flow's own definitions): a host routes
/// by its workflow's definitions, so none can reach it. `data` is its saved state.
// Cold, as `WorkflowError::new`: made only when a run fails.
#[cold]
pub(crate) fn waits_for_unroutable<S: ScopeState>(
    workflow: &str,
    state: &S,
    wait: &Wait,
    data: Value,
) -> WorkflowError {
    let position = state.position();
    let names = waited_names(wait);
    WorkflowError::new(
        workflow,
        position.clone(),
        ErrorObject::new(
            crate::host::HOST_ERROR,
            format!(
                "the instance waits at `{position}`, with no timeout, for {}, which workflow \
                 `{workflow}` does not define (a sub-flow's own events): the host routes events by \
                 its workflow's definitions, so none can reach it; define them in `{workflow}` \
                 as the sub-flow does",
                names.join(", ")
            ),
        ),
        data,
    )
}

/// The error of an instance of `workflow` that waits at `state` for `wait`'s events alone,
/// none of which can reach it any more; `data` is what the caller keeps of it (its saved
/// state, for a host).
// Cold, as `WorkflowError::new`: made only when a run fails.
#[cold]
pub(crate) fn stranded<S: ScopeState>(
    workflow: &str,
    state: &S,
    wait: &Wait,
    data: Value,
) -> WorkflowError {
    let position = state.position();
    let names = waited_names(wait);
    let waited = if names.is_empty() {
        String::from("events")
    } else {
        names.join(", ")
    };
    WorkflowError::new(
        workflow,
        position.clone(),
        ErrorObject::new(
            crate::host::HOST_ERROR,
            format!(
                "the host's events channel closed while the instance waited at `{position}` for \
                 {waited} with no timeout: nothing can reach it any more (its saved state is the \
                 error's data)"
            ),
        ),
        data,
    )
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A scope that runs one step, then waits for events alone.
    #[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
    enum Stage {
        First,
        Waiting,
        Done,
    }

    impl ScopeState for Stage {
        fn end(self) -> Result<ScopeEnd, Self> {
            match self {
                Stage::Done => Ok(ScopeEnd::Completed(Value::Null)),
                other => Err(other),
            }
        }

        fn listening(&self) -> Wait {
            Wait::default()
        }

        fn position(&self) -> String {
            format!("{self:?}")
        }

        fn terminated(_output: Value) -> Self {
            Stage::Done
        }
    }

    /// The event `Stage::Waiting` waits for.
    static GO: EventSpec = EventSpec {
        name: "go",
        source: "test",
        event_type: "go",
        correlation: None,
    };

    /// A step of `Stage`, counting the steps it was asked for; a waiting stage waits for `wait`.
    fn advance_waiting_for(
        steps: &Cell<u32>,
        wait: Wait,
    ) -> impl FnMut(Stage) -> std::future::Ready<Result<Progress<Stage>, WorkflowError>> + '_ {
        move |stage| {
            steps.set(steps.get() + 1);
            std::future::ready(Ok(match stage {
                Stage::First => Progress::Ran(Stage::Waiting),
                other => Progress::Waiting(other, wait.clone()),
            }))
        }
    }

    /// A step of `Stage` whose waiting stage waits for the event `GO` alone.
    fn advance(
        steps: &Cell<u32>,
    ) -> impl FnMut(Stage) -> std::future::Ready<Result<Progress<Stage>, WorkflowError>> + '_ {
        advance_waiting_for(steps, Wait::new(None, &[&GO]))
    }

    /// A step that waits for nothing (no event, no deadline: a saved state no workflow makes)
    /// fails the run and the single step at once, rather than waiting for ever on an `Io` that
    /// could still get events; a step that ran first is kept.
    #[tokio::test(start_paused = true)]
    async fn a_state_that_waits_for_nothing_fails_at_once() {
        let io = Io::standalone();
        let steps = Cell::new(0);
        let never = std::time::Duration::from_secs(3600);
        let run = run_to_end(
            "stages",
            Stage::First,
            &io,
            &[],
            advance_waiting_for(&steps, Wait::default()),
        );
        let failure = tokio::time::timeout(never, run)
            .await
            .expect("the run ends")
            .unwrap_err();
        assert_eq!(failure.error().name, crate::host::HOST_ERROR);
        assert_eq!((failure.workflow(), failure.task()), ("stages", "Waiting"));
        assert!(
            failure
                .error()
                .message
                .contains("for nothing that can come"),
            "{failure}"
        );
        assert_eq!(
            failure.data(),
            &serde_json::json!("Waiting"),
            "its state, saved"
        );
        assert_eq!(steps.get(), 2);

        let step = step_until_ran(
            "stages",
            Stage::Waiting,
            &io,
            &[],
            advance_waiting_for(&steps, Wait::default()),
        );
        let failure = tokio::time::timeout(never, step)
            .await
            .expect("the step ends")
            .unwrap_err();
        assert!(failure.error().message.contains("`Waiting`"), "{failure}");
    }

    /// A state that waits for events alone on an `Io` that will never get another ends the
    /// run, and the single step, with the host's error naming where it waits, rather than
    /// waiting for ever; a step that ran first is kept.
    #[tokio::test]
    async fn a_state_that_can_never_go_on_fails_with_a_host_error() {
        let io = Io::standalone();
        io.seal();
        let steps = Cell::new(0);
        let failure = run_to_end("stages", Stage::First, &io, &[], advance(&steps))
            .await
            .unwrap_err();
        assert_eq!(failure.error().name, crate::host::HOST_ERROR);
        assert_eq!((failure.workflow(), failure.task()), ("stages", "Waiting"));
        assert_eq!(
            failure.data(),
            &serde_json::json!("Waiting"),
            "its state, saved"
        );
        assert_eq!(
            steps.get(),
            2,
            "the first step ran, the second found it waiting"
        );

        let ran = step_until_ran("stages", Stage::First, &io, &[], advance(&steps)).await;
        assert_eq!(ran.unwrap(), Stage::Waiting);
        let failure = step_until_ran("stages", Stage::Waiting, &io, &[], advance(&steps))
            .await
            .unwrap_err();
        assert_eq!(failure.error().name, crate::host::HOST_ERROR);
        assert!(failure.error().message.contains("`Waiting`"), "{failure}");
    }
}
