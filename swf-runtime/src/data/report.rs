//! Merges whose conflicts become workflow errors naming the task and what was being merged.

use serde_json::Value;

use super::kind::article;
use super::merge::{MergeConflict, merge, merge_action_result};
use crate::error::ErrorObject;

/// Merges the result of `action` into the task data of `task` (an action without a results path).
///
/// # Errors
/// A `DataError` naming the task, the action, the place and the two kinds, and suggesting a
/// results path so the result gets a place of its own.
pub fn merge_result(
    target: &mut Value,
    incoming: Value,
    task: &str,
    action: &str,
) -> Result<(), ErrorObject> {
    merge_action_result(target, incoming).map_err(|conflict| {
        let what = format!("the result of action `{action}`");
        conflict_error(
            task,
            &what,
            &conflict,
            "add `actionDataFilter.dataResultsPath` (for example `$.result`) to write the \
             result at a place of its own instead of merging it",
        )
    })
}

/// Merges other incoming data (`what` is for example `inject data`, `event data` or
/// `error data`) into the task data of `task`.
///
/// # Errors
/// A `DataError` naming the task, what was merged, the place and the two kinds.
pub fn merge_data(
    target: &mut Value,
    incoming: Value,
    task: &str,
    what: &str,
) -> Result<(), ErrorObject> {
    merge(target, incoming).map_err(|conflict| {
        let what = format!("the {what}");
        conflict_error(
            task,
            &what,
            &conflict,
            "make both hold the same kind of value there, or use a data filter to select the \
             part that fits",
        )
    })
}

// Cold, as `WorkflowError::new`: made only when a merge fails.
#[cold]
fn conflict_error(task: &str, what: &str, conflict: &MergeConflict, hint: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::DATA,
        format!(
            "task `{task}`: cannot merge {what} into the task data: at {} the task data holds {} \
             but {what} holds {}, and merging never replaces a value by one of another kind; {hint}",
            conflict.location(),
            article(conflict.existing),
            article(conflict.incoming),
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_result_merges_and_reports_conflicts() {
        let mut data = json!({"customer": "John"});
        assert_eq!(
            merge_result(&mut data, json!({"greeting": "Hola"}), "Greet", "greet"),
            Ok(())
        );
        assert_eq!(data, json!({"customer": "John", "greeting": "Hola"}));

        let Err(err) = merge_result(&mut data, json!("Hola John"), "Greet", "greet") else {
            panic!("a string cannot merge into an object");
        };
        assert_eq!(err.name, ErrorObject::DATA);
        assert_eq!(
            err.message,
            "task `Greet`: cannot merge the result of action `greet` into the task data: at the \
             root the task data holds an object but the result of action `greet` holds a string, \
             and merging never replaces a value by one of another kind; add \
             `actionDataFilter.dataResultsPath` (for example `$.result`) to write the result at a \
             place of its own instead of merging it"
        );
    }

    #[test]
    fn merge_data_names_what_was_merged() {
        let mut data = json!({"items": [1]});
        let Err(err) = merge_data(&mut data, json!({"items": {"a": 1}}), "Seed", "inject data")
        else {
            panic!("an object cannot merge into an array");
        };
        assert_eq!(err.name, ErrorObject::DATA);
        assert!(
            err.message.starts_with(
                "task `Seed`: cannot merge the inject data into the task data: at `/items` the \
                 task data holds an array but the inject data holds an object"
            ),
            "{}",
            err.message
        );
        assert_eq!(data, json!({"items": [1]}));
    }
}
