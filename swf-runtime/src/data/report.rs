//! Merges whose conflicts become workflow errors naming the task and what was being merged.

use serde_json::Value;

use super::kind::article;
use super::merge::{MergeConflict, merge, merge_action_result, merged_member};
use crate::error::ErrorObject;
use crate::path::JsonPath;

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

/// [`merge_result`], then the task's output filter `output`
/// ([`filter_in_place`](super::filter_in_place)), for the
/// task's last action: `data` becomes the task's output. Where the filter keeps one top-level
/// member that the result holds, only that member is merged (see `merge::merged_member`); the
/// output is the same either way, as are the errors (a conflict anywhere in the result, a
/// filter that fails), `data` left as the merge or the filter leaves it.
///
/// # Errors
/// As [`merge_result`] and [`filter_in_place`](super::filter_in_place).
pub fn merge_result_then_filter(
    data: &mut Value,
    result: Value,
    output: &JsonPath,
    task: &str,
    action: &str,
) -> Result<(), ErrorObject> {
    let result = match output.top_level_key() {
        Some(key) => match merged_member(data, result, key) {
            Ok(member) => {
                // What the filter leaves behind is kept for a later copy, as it keeps it.
                super::spare::keep(std::mem::replace(data, member));
                return Ok(());
            }
            Err(result) => result,
        },
        None => result,
    };
    merge_result(data, result, task, action)?;
    super::filter_in_place(output, data)
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
    use crate::path::Segment;

    static N: JsonPath = JsonPath::definite("$.n", &[Segment::Key("n")]);
    static N_STRICT: JsonPath = JsonPath::definite_strict("$.n", &[Segment::Key("n")]);
    static N_X: JsonPath = JsonPath::definite("$.n.x", &[Segment::Key("n"), Segment::Key("x")]);
    static ITEMS: JsonPath = JsonPath::definite("$.items", &[Segment::Key("items")]);
    static QUERY: JsonPath = JsonPath::query("$.items[?(@ > 1)]");

    /// The task's last call applying its output filter gives what the merge followed by the
    /// filter gives, output, errors and data alike, whether or not it takes the shortcut:
    /// members there or not, of one kind or of two, conflicts elsewhere in the result,
    /// data that is not an object, filters of one member, deeper, strict, or a query.
    #[test]
    fn merging_then_filtering_in_one_is_the_merge_then_the_filter() {
        let data = [
            json!({}),
            json!({"items": [1, 2, 3], "item": 2}),
            json!({"n": 1, "m": "x"}),
            json!({"n": {"x": 1, "y": [1]}, "m": 2}),
            json!({"n": [1, 2], "items": {"a": 1}}),
            json!({"n": null}),
            json!(null),
            json!([1, 2]),
            json!(7),
            Value::Object((0..12).map(|i| (format!("k{i}"), json!(i))).collect()),
        ];
        let results = [
            json!({"n": 4}),
            json!({"n": {"x": 2, "z": 3}}),
            json!({"n": [2, 3]}),
            json!({"n": null}),
            json!({"n": 4, "items": 5}),
            json!({"n": 4, "items": [4]}),
            json!({"m": 3}),
            json!({"n": 4, "k3": {"a": 1}}),
            json!({}),
            json!(null),
            json!(5),
            json!([9]),
        ];
        for path in [&N, &N_STRICT, &N_X, &ITEMS, &QUERY] {
            for before in &data {
                for result in &results {
                    let mut merged = before.clone();
                    let expected = merge_result(&mut merged, result.clone(), "T", "a")
                        .and_then(|()| super::super::filter_in_place(path, &mut merged));
                    let mut fused = before.clone();
                    let outcome =
                        merge_result_then_filter(&mut fused, result.clone(), path, "T", "a");
                    assert_eq!(outcome, expected, "{path:?} on {before} with {result}");
                    // The output, or on failure the data the run fails with.
                    assert_eq!(fused, merged, "{path:?} on {before} with {result}");
                }
            }
        }
    }

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
