//! Compensation: which completed tasks are to be undone.
//!
//! A task with `compensatedBy` that completes is recorded in its scope's [`CompensationLog`],
//! which the scope's state carries from task to task (so a saved state keeps it). When an end
//! or a transition with `compensate: true` is taken, generated code runs the compensation of
//! every recorded task, most recent first, and clears the log.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorObject, WorkflowError};

/// The name of the error raised when compensation cannot run as recorded: a saved state whose
/// log names a task that has no compensation in the workflow as compiled now.
pub const COMPENSATION_ERROR: &str = "CompensationError";

/// The tasks of one scope (the workflow, a parallel branch, a foreach iteration) that completed
/// and declare `compensatedBy`, in the order they completed, since the last compensation.
///
/// It serializes as the array of their names, so a saved state shows what a compensation would
/// undo. A task that completes several times (in a loop) is recorded each time, and compensated
/// each time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CompensationLog {
    completed: Vec<String>,
}

impl CompensationLog {
    /// An empty log: nothing to compensate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `task` completed.
    pub fn record(&mut self, task: &str) {
        self.completed.push(task.to_owned());
    }

    /// The recorded tasks, in the order they completed.
    pub fn tasks(&self) -> &[String] {
        &self.completed
    }

    /// Whether no task is waiting to be compensated.
    pub fn is_empty(&self) -> bool {
        self.completed.is_empty()
    }

    /// How many completions are recorded.
    pub fn len(&self) -> usize {
        self.completed.len()
    }

    /// The recorded tasks, most recent first: the order in which they are compensated.
    pub fn into_latest_first(self) -> impl Iterator<Item = String> {
        self.completed.into_iter().rev()
    }

    /// Removes and returns the most recent record: the next task to compensate.
    pub fn pop_latest(&mut self) -> Option<String> {
        let task = self.completed.pop()?;
        crate::trace::compensating(&task);
        Some(task)
    }
}

/// A compensation in progress in one scope, carried by the state of the compensation task
/// that runs (so that a saved instance resumes it): which completed task it compensates, the
/// records still to compensate after it, and where the scope goes once every record is
/// compensated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compensating {
    /// The completed task whose compensation runs now.
    pub task: String,
    /// The records still to compensate, most recent last.
    #[serde(default, skip_serializing_if = "CompensationLog::is_empty")]
    pub remaining: CompensationLog,
    /// Which of the scope's ends or transitions asked for the compensation (numbered by the
    /// code generator), taken once it is done.
    pub resume: u32,
    /// The error handled by the onError transition that asked for it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<ErrorObject>,
}

impl Compensating {
    /// Marks a failure of the compensation task as one that happened while compensating.
    #[must_use]
    pub fn mark(&self, failure: WorkflowError) -> WorkflowError {
        failure.with_compensation(&self.task, self.cause.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compensation_order_is_the_reverse_of_completion() {
        let mut log = CompensationLog::new();
        assert!(log.is_empty());
        for task in ["Book", "Pay", "Book", "Ship"] {
            log.record(task);
        }
        assert_eq!(log.len(), 4);
        assert_eq!(log.tasks(), ["Book", "Pay", "Book", "Ship"]);
        let order: Vec<String> = log.into_latest_first().collect();
        assert_eq!(order, ["Ship", "Book", "Pay", "Book"]);
    }

    #[test]
    fn serializes_as_the_array_of_names() {
        let mut log = CompensationLog::new();
        log.record("Book");
        log.record("Pay");
        let value = serde_json::to_value(&log).unwrap_or_default();
        assert_eq!(value, json!(["Book", "Pay"]));
        assert_eq!(
            serde_json::from_value::<CompensationLog>(value).ok(),
            Some(log)
        );
    }
}
