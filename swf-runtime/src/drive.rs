//! Driving an instance in memory: step after step, waiting between them (for an event or a
//! deadline, on the instance's `Io`) when a step cannot run. Generated `run`, `step` and the
//! in-memory host use these; a durable host steps instances itself and drops them while they
//! wait.

use std::future::Future;

use crate::concurrent::{ScopeEnd, ScopeState};
use crate::error::WorkflowError;
use crate::events::{EventSpec, Io};
use crate::progress::Progress;
use crate::trace;
use tracing::Instrument;

/// Steps `state` until a step runs, and returns the state after it. While a step cannot run,
/// it waits on `io` for what the step waits for, registered with a host's router (`events`
/// being the workflow's definitions) from before the first step, so that no event for it is
/// routed elsewhere meanwhile. An ended state is returned unchanged.
///
/// # Errors
/// The error of the step that failed.
pub async fn step_until_ran<S, F, Fut>(
    state: S,
    io: &Io,
    events: &'static [EventSpec],
    mut advance: F,
) -> Result<S, WorkflowError>
where
    S: ScopeState,
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    let mut listening = io.listen(events, &state.listening());
    let mut state = state;
    loop {
        let seen = io.arrivals();
        io.begin_step();
        let span = trace::task_span(&state);
        match advance(state).instrument(span).await? {
            Progress::Ran(next) => return Ok(next),
            Progress::Waiting(same, wait) => {
                listening.update(&wait);
                io.wait_for(&wait, seen).await;
                state = same;
            }
        }
    }
}

/// Steps `state` to its end (see [`step_until_ran`]). Every step gives the tokio scheduler its
/// turn, so that an instance retrying without pause does not starve the others.
///
/// # Errors
/// The error of the step that failed.
pub async fn run_to_end<S, F, Fut>(
    state: S,
    io: &Io,
    events: &'static [EventSpec],
    mut advance: F,
) -> Result<ScopeEnd, WorkflowError>
where
    S: ScopeState,
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
{
    let mut state = state;
    loop {
        match state.end() {
            Ok(end) => return Ok(end),
            Err(running) => state = step_until_ran(running, io, events, &mut advance).await?,
        }
        tokio::task::consume_budget().await;
    }
}
