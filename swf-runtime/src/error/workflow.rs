//! The error a caller gets when a workflow instance halts.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ErrorObject;

/// A workflow instance halted on an error that no `retry` or `onError` definition handled.
///
/// It keeps the data the instance held when it failed, so a caller can log, inspect or resume
/// from it. The details are boxed so that `Result<_, WorkflowError>` stays one pointer wide on
/// the success path of every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkflowError {
    details: Box<Details>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Details {
    workflow: String,
    task: String,
    error: ErrorObject,
    data: Value,
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
            details: Box::new(Details {
                workflow: workflow.into(),
                task: task.into(),
                error,
                data,
            }),
        }
    }

    /// The id of the workflow that failed.
    pub fn workflow(&self) -> &str {
        &self.details.workflow
    }

    /// The name of the task in which it failed.
    pub fn task(&self) -> &str {
        &self.details.task
    }

    /// The error that halted it: `name`, `message` and `trace`.
    pub fn error(&self) -> &ErrorObject {
        &self.details.error
    }

    /// The data the instance held when it failed.
    pub fn data(&self) -> &Value {
        &self.details.data
    }

    /// Takes the data the instance held when it failed.
    pub fn into_data(self) -> Value {
        self.details.data
    }
}

impl fmt::Display for WorkflowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "workflow `{}` failed in task `{}`: {}: {}",
            self.details.workflow,
            self.details.task,
            self.details.error.name,
            self.details.error.message
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
