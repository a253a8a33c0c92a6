//! The error a caller gets when a workflow instance halts.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ErrorObject;

/// A workflow instance halted on an error that no `retry` or `onError` definition handled.
///
/// It keeps the data the instance held when it failed, so a caller can log, inspect or resume
/// from it. A failure while compensating completed tasks also says which task was being
/// compensated ([`WorkflowError::compensated_task`]) and, when an onError transition asked for
/// the compensation, the error that led there ([`WorkflowError::compensating`]). The details are boxed so that `Result<_, WorkflowError>` stays one pointer wide on
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compensation: Option<Compensation>,
}

/// What was being compensated when the failure happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Compensation {
    /// The completed task whose compensation failed.
    compensated: String,
    /// The error the onError transition that asked for the compensation handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cause: Option<ErrorObject>,
}

impl WorkflowError {
    /// A failure of `workflow` in `task` with `error`, keeping the instance's `data`.
    // Cold: made only when a run fails. The hint lets the compiler move the code that makes
    // it out of the lines a step runs through (issue 10: the instruction cache).
    #[cold]
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
                compensation: None,
            }),
        }
    }

    /// Marks this failure as one that happened while compensating the completed task
    /// `compensated`; `cause` is the error handled by the onError transition that asked for the
    /// compensation (`None` when a normal end or transition asked). The error object's trace
    /// gains a line saying so, so that the context survives where only the error object travels
    /// on (a failing branch or iteration). A failure already marked keeps its first marking.
    #[must_use]
    pub fn with_compensation(mut self, compensated: &str, cause: Option<&ErrorObject>) -> Self {
        if self.details.compensation.is_some() {
            return self;
        }
        let mut context = format!("while compensating `{compensated}`");
        if let Some(cause) = cause {
            context.push_str(&format!(", after {cause}"));
        }
        let trace = &mut self.details.error.trace;
        if !trace.is_empty() {
            trace.push('\n');
        }
        trace.push_str(&context);
        self.details.compensation = Some(Compensation {
            compensated: compensated.to_owned(),
            cause: cause.cloned(),
        });
        self
    }

    /// When the failure happened during a compensation started by an onError transition
    /// (`compensate: true`): the error that transition handled, which led to the compensation.
    /// [`WorkflowError::error`] is then the compensation's own error.
    pub fn compensating(&self) -> Option<&ErrorObject> {
        self.details
            .compensation
            .as_ref()
            .and_then(|c| c.cause.as_ref())
    }

    /// When the failure happened while compensating: the completed task whose compensation
    /// failed. [`WorkflowError::task`] is the compensation task that failed.
    pub fn compensated_task(&self) -> Option<&str> {
        self.details
            .compensation
            .as_ref()
            .map(|c| c.compensated.as_str())
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
        let details = &self.details;
        write!(
            f,
            "workflow `{}` failed in task `{}`",
            details.workflow, details.task
        )?;
        if let Some(compensation) = &details.compensation {
            write!(f, " while compensating `{}`", compensation.compensated)?;
        }
        write!(f, ": {}: {}", details.error.name, details.error.message)?;
        match details.compensation.as_ref().and_then(|c| c.cause.as_ref()) {
            Some(cause) => write!(f, " (the compensation followed {cause})"),
            None => Ok(()),
        }
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
    fn a_compensation_failure_carries_both_errors() {
        let cause = ErrorObject::new("CardDeclined", "no funds");
        let err = WorkflowError::new(
            "trip",
            "CancelHotel",
            ErrorObject::new(ErrorObject::FUNCTION_EXECUTION, "hotel down").with_trace("at x"),
            json!({"booked": true}),
        )
        .with_compensation("BookHotel", Some(&cause));
        assert_eq!(err.compensating(), Some(&cause));
        assert_eq!(err.compensated_task(), Some("BookHotel"));
        assert_eq!(err.error().message, "hotel down");
        assert_eq!(
            err.error().trace,
            "at x\nwhile compensating `BookHotel`, after CardDeclined: no funds"
        );
        assert_eq!(*err.data(), json!({"booked": true}));
        assert_eq!(
            err.to_string(),
            "workflow `trip` failed in task `CancelHotel` while compensating `BookHotel`: \
             FunctionExecutionError: hotel down (the compensation followed CardDeclined: no funds)"
        );
        // Marked once: an outer compensation does not overwrite the inner one.
        let again = err.clone().with_compensation("Other", None);
        assert_eq!(again, err);
        let value = serde_json::to_value(&err).unwrap_or_default();
        assert_eq!(
            serde_json::from_value::<WorkflowError>(value).ok(),
            Some(err)
        );
    }

    #[test]
    fn a_compensation_asked_by_a_normal_end_has_no_cause() {
        let err = WorkflowError::new("w", "Undo", ErrorObject::new("E", "m"), json!({}))
            .with_compensation("Do", None);
        assert_eq!(err.compensating(), None);
        assert_eq!(err.compensated_task(), Some("Do"));
        assert_eq!(err.error().trace, "while compensating `Do`");
        assert_eq!(
            err.to_string(),
            "workflow `w` failed in task `Undo` while compensating `Do`: E: m"
        );
        let plain = WorkflowError::new("w", "t", ErrorObject::new("E", "m"), json!({}));
        assert_eq!(plain.compensating(), None);
        assert_eq!(plain.compensated_task(), None);
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
