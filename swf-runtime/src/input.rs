//! Checking the input a workflow instance starts with.

use serde_json::{Map, Value};

use crate::data::kind::with_article;
use crate::error::{ErrorObject, WorkflowError};

/// The data a new instance of `workflow` starts with: `input` when it is a JSON object, `{}` when
/// no input (`null`) was given.
///
/// # Errors
/// A [`WorkflowError`] in `start_task` with an `InvalidInputError` when the input is anything else; it
/// keeps the input that was given as its data.
#[allow(
    clippy::result_large_err,
    reason = "`run` returns `WorkflowError` by value so callers can match on it; failing here is \
              the cold path, once per instance"
)]
pub fn workflow_input(
    workflow: &str,
    start_task: &str,
    input: Value,
) -> Result<Value, WorkflowError> {
    match input {
        Value::Object(_) => Ok(input),
        Value::Null => Ok(Value::Object(Map::new())),
        other => {
            let error = ErrorObject::new(
                ErrorObject::INVALID_INPUT,
                format!(
                    "the input of workflow `{workflow}` must be a JSON object, but {} was given",
                    with_article(&other)
                ),
            );
            Err(WorkflowError::new(workflow, start_task, error, other))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_pass_and_null_becomes_empty() {
        assert_eq!(
            workflow_input("order", "Start", json!({"id": 7})),
            Ok(json!({"id": 7}))
        );
        assert_eq!(workflow_input("order", "Start", Value::Null), Ok(json!({})));
    }

    #[test]
    fn anything_else_is_refused_with_the_input_kept() {
        let Err(err) = workflow_input("order", "Start", json!([1, 2])) else {
            panic!("an array is not a valid workflow input");
        };
        assert_eq!(err.workflow(), "order");
        assert_eq!(err.task(), "Start");
        assert_eq!(err.error().name, ErrorObject::INVALID_INPUT);
        assert_eq!(
            err.error().message,
            "the input of workflow `order` must be a JSON object, but an array was given"
        );
        assert_eq!(*err.data(), json!([1, 2]));
    }
}
