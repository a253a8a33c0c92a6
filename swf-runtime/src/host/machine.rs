//! What a [`Host`](crate::Host) needs from a compiled workflow.

use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::concurrent::ScopeState;
use crate::error::WorkflowError;
use crate::events::{EventSpec, Io};
use crate::progress::Progress;

/// A compiled workflow, as a host drives it: generated code implements it for each workflow's
/// machine type.
pub trait Machine: Send + Sync + 'static {
    /// Where an instance is: the task it is at (with its branches, iterations, waits), or how
    /// it ended.
    type State: Serialize + DeserializeOwned + ScopeState + Send + Sync + 'static;

    /// The workflow's `id`.
    fn workflow_id(&self) -> &'static str;

    /// The workflow's `version`, if it has one.
    fn version(&self) -> Option<&'static str>;

    /// The workflow's `name` (its id when it has none).
    fn workflow_name(&self) -> &'static str {
        self.workflow_id()
    }

    /// The workflow's id, name and version, as traces name them.
    fn info(&self) -> crate::trace::WorkflowInfo {
        crate::trace::WorkflowInfo {
            id: self.workflow_id(),
            name: self.workflow_name(),
            version: self.version(),
        }
    }

    /// A hash of the definition the machine was compiled from.
    fn definition_hash(&self) -> &'static str;

    /// Every event definition of the workflow, in document order; waits and produced events
    /// refer to them by index.
    fn events(&self) -> &'static [EventSpec];

    /// When the start task is an event task: which events create instances.
    fn start_on_events(&self) -> Option<StartOnEvents>;

    /// The first state of an instance created from `input`, or why it cannot be created (input
    /// that is not an object, a scheduled start outside its window).
    ///
    /// # Errors
    /// The refusal, which the host returns to the caller or reports with the starting events.
    fn start(&self, input: Value, io: &Io) -> Result<Self::State, WorkflowError>;

    /// Runs one step of `state`: `Progress::Ran` with the state to save, or `Progress::Waiting`
    /// (nothing done) with what it waits for. See the generated `advance`.
    fn step<'a>(
        &'a self,
        state: Self::State,
        io: &'a Io,
    ) -> impl Future<Output = Result<Progress<Self::State>, WorkflowError>> + Send + 'a;

    /// The workflow output once `state` is an end (completed or terminated), else `None`.
    fn output(state: &Self::State) -> Option<&Value>;
}

/// The events that create instances of a workflow whose start task is an event task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartOnEvents {
    /// Indexes into [`Machine::events`] of the events the start task consumes.
    pub events: &'static [usize],
    /// `true`: any one of them creates an instance; `false`: one of each is needed.
    pub exclusive: bool,
    /// With `exclusive: false`, how long after each of a group's events the next must arrive
    /// (the draft's rule for starting event tasks); ignored when exclusive.
    pub timeout: Option<Duration>,
}
