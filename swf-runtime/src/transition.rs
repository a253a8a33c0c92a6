//! The error for a transition whose condition is false.

use serde_json::Value;

use crate::error::{ErrorObject, WorkflowError};

/// The error that halts `workflow` when the transition from `task` to `next` is refused because
/// its `condition` is false: the drafts' stated default.
pub fn transition_refused(
    workflow: &str,
    task: &str,
    next: &str,
    condition: &str,
    data: Value,
) -> WorkflowError {
    let error = ErrorObject::new(
        ErrorObject::CONDITION,
        format!("the condition `{condition}` of the transition from `{task}` to `{next}` is false"),
    );
    WorkflowError::new(workflow, task, error, data)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_task_target_and_condition() {
        let err = transition_refused(
            "order",
            "Check",
            "Ship",
            "$.paid eq true",
            json!({"paid": false}),
        );
        assert_eq!(err.error().name, "TransitionConditionError");
        assert_eq!(
            err.to_string(),
            "workflow `order` failed in task `Check`: TransitionConditionError: the condition \
             `$.paid eq true` of the transition from `Check` to `Ship` is false"
        );
        assert_eq!(*err.data(), json!({"paid": false}));
    }
}
