//! The error a caller gets when a workflow instance halts.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ErrorObject;

/// A workflow instance halted on an error that no `retry` or `onError` definition handled.
///
/// It keeps the data the instance held when it failed, so a caller can log, inspect or resume
/// from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowError {
    /// The name of the workflow that failed.
    pub workflow: String,
    /// The name of the task (state) in which it failed.
    pub task: String,
    /// The error that halted it.
    pub error: ErrorObject,
    /// The data the instance held when it failed.
    pub data: Value,
}

impl WorkflowError {
    /// A failure of `workflow` in `task` with `error`, keeping the instance's `data`.
    pub fn new(
        workflow: impl Into<String>,
        task: impl Into<String>,
        error: ErrorObject,
        data: Value,
    ) -> Self {
        Self {
            workflow: workflow.into(),
            task: task.into(),
            error,
            data,
        }
    }
}

impl fmt::Display for WorkflowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "workflow `{}` failed in task `{}`: {}: {}",
            self.workflow, self.task, self.error.name, self.error.message
        )
    }
}

// The error object is already part of the display text, so it is deliberately not also reported
// as a `source` (error reporters would print it twice).
impl std::error::Error for WorkflowError {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn display_names_workflow_task_and_error() {
        let err = WorkflowError::new(
            "order",
            "CheckInventory",
            ErrorObject::new(ErrorObject::TIMEOUT, "too slow"),
            json!({"orderId": 7}),
        );
        assert_eq!(
            err.to_string(),
            "workflow `order` failed in task `CheckInventory`: TimeoutError: too slow"
        );
    }

    #[test]
    fn serde_round_trips() {
        let err = WorkflowError::new("w", "t", ErrorObject::new("E", "m"), json!([1]));
        let value = serde_json::to_value(&err).unwrap_or_default();
        assert_eq!(
            serde_json::from_value::<WorkflowError>(value).ok(),
            Some(err)
        );
    }
}
