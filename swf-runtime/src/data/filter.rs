//! Data filters: input and output paths of tasks, actions, events and errors.

use serde_json::Value;

use crate::error::{ErrorObject, WorkflowError};
use crate::path::JsonPath;

/// A task's output: its data `data` filtered by its output path `path` (see
/// [`filter_in_place`]).
///
/// An expression rather than statements that return, so that the success of a task with an
/// output filter is still an expression of its data: such a task's step can then be described
/// by data (see `calls::CallStep`).
///
/// # Errors
/// The filter's failure, as the failure of task `task` of workflow `workflow`, with the data
/// as it was.
pub fn filter_output(
    path: &JsonPath,
    mut data: Value,
    workflow: &'static str,
    task: &'static str,
) -> Result<Value, WorkflowError> {
    match filter_in_place(path, &mut data) {
        Ok(()) => Ok(data),
        Err(error) => Err(WorkflowError::new(workflow, task, error, data)),
    }
}

/// Applies an input or output path in place: `data` becomes the selection, or stays as it was
/// when the path selects nothing.
///
/// The tasks draft says so for task data filters ("if it does not select any parts of the task's
/// data input, the data input is not filtered"); the runtime applies it to every input and output
/// path so that a path that misses never silently empties the task data.
///
/// # Errors
/// A `DataError` when the query engine fails; `data` is then left as it was, so the caller can
/// report the error with it.
pub fn filter_in_place(path: &JsonPath, data: &mut Value) -> Result<(), ErrorObject> {
    if let Some(selected) = path.take_selected(data)? {
        // What the filter leaves behind is kept for a later copy (see `spare`).
        super::spare::keep(std::mem::replace(data, selected));
    }
    Ok(())
}

/// An action's `result` written at `results` (`dataResultsPath`), then the task's output
/// filter `output` ([`filter_in_place`]), for the task's last action: `data` becomes the
/// task's output. Where both name the same top-level member of data that is an object (or
/// `null`, which the write makes one), the output is the result itself: it is not entered into
/// the data only to be taken out again. The output, the errors, and the data an error
/// carries are those of the write followed by the filter.
///
/// # Errors
/// As [`JsonPath::write`] and [`filter_in_place`].
pub fn write_result_then_filter(
    data: &mut Value,
    result: Value,
    results: &JsonPath,
    output: &JsonPath,
) -> Result<(), ErrorObject> {
    let same_member = results
        .top_level_key()
        .is_some_and(|key| output.top_level_key() == Some(key));
    if same_member && matches!(data, Value::Object(_) | Value::Null) {
        // What the filter leaves behind is kept for a later copy, as it keeps it.
        super::spare::keep(std::mem::replace(data, result));
        return Ok(());
    }
    results.write(data, result)?;
    filter_in_place(output, data)
}

/// An action's input: what `path` selects in the task data, or a copy of all of it when the
/// path selects nothing.
///
/// # Errors
/// A `DataError` when the query engine fails.
pub fn select_input(path: &JsonPath, data: &Value) -> Result<Value, ErrorObject> {
    Ok(path.select(data)?.unwrap_or_else(|| data.clone()))
}

/// The task data as retry and onError conditions see it: `{"error": {...}}` merged in. Data
/// that is not an object (a filter may have made it an array) is seen as `{"error": {...}}`.
pub fn data_with_error(data: &Value, error: &ErrorObject) -> Value {
    match data {
        Value::Object(members) => {
            let mut members = members.clone();
            members.insert("error".to_owned(), error.to_json());
            Value::Object(members)
        }
        _ => error.wrapped(),
    }
}

/// The selection of `path` in `data`, or `null` when it selects nothing (for values passed on,
/// such as function arguments, where "nothing" must still be a value).
///
/// # Errors
/// A `DataError` when the query engine fails.
pub fn select_or_null(path: &JsonPath, data: &Value) -> Result<Value, ErrorObject> {
    Ok(path.select(data)?.unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::path::Segment;

    static FRUITS: JsonPath = JsonPath::definite("$.fruits", &[Segment::Key("fruits")]);
    static MISSING: JsonPath = JsonPath::definite("$.bread", &[Segment::Key("bread")]);
    static NO_MATCH: JsonPath = JsonPath::query("$.fruits[?@ == 'kiwi']");

    /// A result written at the member the output filter keeps is the output, as the write
    /// followed by the filter makes it, errors and data alike: data of every kind, the same
    /// member or another, a deeper path, a strict one.
    #[test]
    fn writing_then_filtering_in_one_is_the_write_then_the_filter() {
        static N: JsonPath = JsonPath::definite("$.n", &[Segment::Key("n")]);
        static N_STRICT: JsonPath = JsonPath::definite_strict("$.n", &[Segment::Key("n")]);
        static M: JsonPath = JsonPath::definite("$.m", &[Segment::Key("m")]);
        static N_X: JsonPath = JsonPath::definite("$.n.x", &[Segment::Key("n"), Segment::Key("x")]);
        let data = [
            json!({}),
            json!({"n": 1, "m": {"x": 2}}),
            json!({"n": {"x": 1}}),
            json!(null),
            json!([1]),
            json!("text"),
        ];
        let results = [json!(3), json!({"x": 4}), json!(null), json!([5])];
        let paths = [&N, &N_STRICT, &M, &N_X];
        for before in &data {
            for result in &results {
                for results_path in paths {
                    for output in paths {
                        let mut expected_data = before.clone();
                        let expected = results_path
                            .write(&mut expected_data, result.clone())
                            .and_then(|()| filter_in_place(output, &mut expected_data));
                        let mut fused = before.clone();
                        let outcome = write_result_then_filter(
                            &mut fused,
                            result.clone(),
                            results_path,
                            output,
                        );
                        let case =
                            format!("{results_path:?} then {output:?} on {before} with {result}");
                        assert_eq!(outcome, expected, "{case}");
                        assert_eq!(fused, expected_data, "{case}");
                    }
                }
            }
        }
    }

    fn filtered(path: &JsonPath, mut data: Value) -> Result<Value, ErrorObject> {
        filter_in_place(path, &mut data).map(|()| data)
    }

    fn data() -> Value {
        json!({"fruits": ["apple", "orange", "pear"], "vegetables": []})
    }

    #[test]
    fn a_selecting_path_filters() {
        assert_eq!(
            filtered(&FRUITS, data()),
            Ok(json!(["apple", "orange", "pear"]))
        );
        assert_eq!(
            select_input(&FRUITS, &data()),
            Ok(json!(["apple", "orange", "pear"]))
        );
        assert_eq!(
            select_or_null(&FRUITS, &data()),
            Ok(json!(["apple", "orange", "pear"]))
        );
    }

    #[test]
    fn a_path_that_selects_nothing_keeps_the_data() {
        assert_eq!(filtered(&MISSING, data()), Ok(data()));
        assert_eq!(filtered(&NO_MATCH, data()), Ok(data()));
        assert_eq!(select_input(&MISSING, &data()), Ok(data()));
    }

    #[test]
    fn a_nested_selection_is_taken_and_a_failed_one_leaves_the_data() {
        static SECOND: JsonPath =
            JsonPath::definite("$.fruits[1]", &[Segment::Key("fruits"), Segment::Index(1)]);
        static STRICT: JsonPath = JsonPath::definite_strict("$.bread", &[Segment::Key("bread")]);
        assert_eq!(filtered(&SECOND, data()), Ok(json!("orange")));
        let mut kept = data();
        let error = filter_in_place(&STRICT, &mut kept);
        assert!(error.is_err_and(|error| error.message.contains("has no member `bread`")));
        assert_eq!(kept, data());
    }

    #[test]
    fn a_tasks_output_is_its_filtered_data_or_its_failure_with_the_data() {
        static STRICT: JsonPath = JsonPath::definite_strict("$.bread", &[Segment::Key("bread")]);
        assert_eq!(
            filter_output(&FRUITS, data(), "shop", "Pick"),
            Ok(json!(["apple", "orange", "pear"]))
        );
        let failure = filter_output(&STRICT, data(), "shop", "Pick").unwrap_err();
        assert_eq!((failure.workflow(), failure.task()), ("shop", "Pick"));
        assert!(failure.error().message.contains("has no member `bread`"));
        assert_eq!(failure.data(), &data());
    }

    #[test]
    fn errors_are_seen_merged_into_object_data() {
        let error = ErrorObject::new("TimeoutError", "too slow");
        let seen = data_with_error(&json!({"a": 1, "error": "old"}), &error);
        assert_eq!(seen["a"], json!(1));
        assert_eq!(seen["error"]["name"], json!("TimeoutError"));
        assert_eq!(data_with_error(&json!([1]), &error), error.wrapped());
    }

    #[test]
    fn select_or_null_gives_null_for_nothing() {
        assert_eq!(select_or_null(&MISSING, &data()), Ok(Value::Null));
        assert_eq!(select_or_null(&NO_MATCH, &data()), Ok(Value::Null));
    }

    #[test]
    fn the_tasks_draft_vegetables_example() {
        // dataInputPath `$.vegetables`, then dataOutputPath `$.[?(@.veggieLike)]` normalized.
        static VEGETABLES: JsonPath =
            JsonPath::definite("$.vegetables", &[Segment::Key("vegetables")]);
        static LIKED: JsonPath = JsonPath::query("$[?(@.veggieLike == true)]");
        let input = json!({
            "fruits": ["apple"],
            "vegetables": [
                {"veggieName": "potato", "veggieLike": true},
                {"veggieName": "broccoli", "veggieLike": false}
            ]
        });
        let task_data = filtered(&VEGETABLES, input);
        let output = task_data.and_then(|data| filtered(&LIKED, data));
        assert_eq!(
            output,
            Ok(json!([{"veggieName": "potato", "veggieLike": true}]))
        );
    }
}
