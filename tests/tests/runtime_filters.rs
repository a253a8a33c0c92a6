//! Runtime semantics of data: task input and output filters, action input filters, function
//! parameters, results paths and the merge rules (README "Semantics decisions": Filters,
//! Results, Merging, Function arguments).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use swf_runtime::{FunctionError, Value, WorkflowError, json};

mod filters {
    swf_runtime::workflow!("workflows/runtime/filters.sw.yaml");
}
mod merges {
    swf_runtime::workflow!("workflows/runtime/merges.sw.yaml");
}
mod results {
    swf_runtime::workflow!("workflows/runtime/results.sw.yaml");
}
mod merge_then_output {
    swf_runtime::workflow!("workflows/runtime/merge-then-output.sw.yaml");
}
mod merge_then_output_compensated {
    swf_runtime::workflow!("workflows/runtime/merge-then-output-compensated.sw.yaml");
}
mod draft {
    swf_runtime::workflow!("workflows/runtime/draft-filters.sw.yaml");
}

use filters::{FiltersState, FiltersWorkflow};
use merges::MergesWorkflow;
use results::ResultsWorkflow;

// ---------------------------------------------------------------------------------------------
// Scripted functions

/// Functions that answer from a queue of results per function (the last one repeats; a
/// function with no queue echoes its arguments) and record every call.
#[derive(Default)]
struct Script {
    replies: Mutex<HashMap<&'static str, VecDeque<Result<Value, FunctionError>>>>,
    calls: Mutex<Vec<(&'static str, Value)>>,
}

impl Script {
    fn new() -> Self {
        Self::default()
    }

    fn ok(self, function: &'static str, value: Value) -> Self {
        self.replies
            .lock()
            .unwrap()
            .entry(function)
            .or_default()
            .push_back(Ok(value));
        self
    }

    fn call(&self, function: &'static str, args: Value) -> Result<Value, FunctionError> {
        self.calls.lock().unwrap().push((function, args.clone()));
        let mut replies = self.replies.lock().unwrap();
        match replies.get_mut(function) {
            None => Ok(args),
            Some(queue) if queue.len() > 1 => queue.pop_front().unwrap(),
            Some(queue) => queue.front().cloned().unwrap(),
        }
    }

    fn calls(&self) -> Vec<(&'static str, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl filters::FiltersFunctions for Script {
    async fn greet(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("greet", args)
    }
    async fn echo(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("echo", args)
    }
}

impl merge_then_output::MergeThenOutputFunctions for Script {
    async fn give(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("give", args)
    }
}

impl merge_then_output_compensated::MergeThenOutputCompensatedFunctions for Script {
    async fn note(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("note", args)
    }

    async fn give(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("give", args)
    }
}

impl merges::MergesFunctions for Script {
    async fn give(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("give", args)
    }
}

impl results::ResultsFunctions for Script {
    async fn give(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("give", args)
    }
}

struct NoFunctions;

impl draft::DraftFiltersFunctions for NoFunctions {}

// ---------------------------------------------------------------------------------------------
// Task and action filters, parameters

fn order_input() -> Value {
    json!({
        "order": {
            "id": 3,
            "customer": {"name": "Ann", "address": {"city": "Lyon"}}
        },
        "other": 1
    })
}

#[tokio::test]
async fn filters_parameters_and_results_paths() {
    let workflow = FiltersWorkflow::new(Script::new().ok("greet", json!("Hello Ann")));
    let output = workflow.run(order_input()).await.unwrap();
    let summary = json!({"greeting": {"text": "Hello Ann"}, "address": {"city": "Lyon"}});
    // `Keep`'s input and output paths and its action's input path select nothing: no filtering.
    let mut expected = summary.clone();
    expected["copy"] = summary.clone();
    assert_eq!(output, expected);

    assert_eq!(
        workflow.functions().calls(),
        [
            (
                "greet",
                json!({
                    // `$` strings select from the action's input (`$.order.customer`).
                    "name": "Ann",
                    // Everything else is passed as written.
                    "salutation": "Hello",
                    "times": 2,
                    "vip": true,
                    "nothing": null,
                    // A path that selects nothing passes `null`.
                    "missing": null,
                    "whole": {"name": "Ann", "address": {"city": "Lyon"}},
                    // An indefinite path passes the array of its matches.
                    "cities": ["Lyon"],
                    "zips": null,
                    "list": ["Ann", "literal", 3],
                    "nested": {"city": "Lyon", "price": "costs $5"}
                })
            ),
            // No parameters: the function receives the action's input.
            ("echo", json!({"city": "Lyon"})),
            // An action input path that selects nothing: the whole task data.
            ("echo", summary),
        ]
    );
}

#[tokio::test]
async fn the_input_filter_applies_when_the_task_is_entered() {
    let workflow = FiltersWorkflow::new(Script::new().ok("greet", json!("Hi")));
    let state = workflow.start(order_input()).unwrap();
    assert_eq!(
        state,
        FiltersState::Pick {
            data: json!({"id": 3, "customer": {"name": "Ann", "address": {"city": "Lyon"}}})
        }
    );
    // The output filter keeps only `$.summary`; `Keep`'s input path selects nothing.
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        FiltersState::Keep {
            data: json!({"greeting": {"text": "Hi"}, "address": {"city": "Lyon"}})
        }
    );
}

#[tokio::test]
async fn an_input_path_that_selects_nothing_leaves_the_input_unfiltered() {
    // No `$.order`: `Pick` works on the whole input.
    let workflow = FiltersWorkflow::new(Script::new().ok("greet", json!("Hi")));
    let input = json!({"customer": {"name": "Bob", "address": {"city": "Oslo"}}});
    let state = workflow.start(input.clone()).unwrap();
    assert_eq!(state, FiltersState::Pick { data: input });
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        FiltersState::Keep {
            data: json!({"greeting": {"text": "Hi"}, "address": {"city": "Oslo"}})
        }
    );
}

#[tokio::test]
async fn an_output_path_that_selects_nothing_leaves_the_output_unfiltered() {
    // `Keep` runs on data without `$.alsoAbsent`.
    let workflow = FiltersWorkflow::new(Script::new());
    let state = FiltersState::Keep {
        data: json!({"only": "this"}),
    };
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        FiltersState::Completed {
            output: json!({"only": "this", "copy": {"only": "this"}})
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The draft's task data filter examples

fn produce() -> Value {
    json!({
        "fruits": ["apple", "orange", "pear"],
        "vegetables": [
            {"veggieName": "potato", "veggieLike": true},
            {"veggieName": "broccoli", "veggieLike": false}
        ]
    })
}

#[tokio::test]
async fn draft_example_vegetables_with_input_and_output_paths() {
    let mut input = produce();
    input["example"] = json!("veggies");
    let output = draft::DraftFiltersWorkflow::new(NoFunctions)
        .run(input)
        .await
        .unwrap();
    // Task data may be any JSON value after an output filter.
    assert_eq!(
        output,
        json!([{"veggieName": "potato", "veggieLike": true}])
    );
}

#[tokio::test]
async fn draft_example_veggie_like_with_one_input_path() {
    let mut input = produce();
    input["example"] = json!("veggie-like");
    let output = draft::DraftFiltersWorkflow::new(NoFunctions)
        .run(input)
        .await
        .unwrap();
    assert_eq!(
        output,
        json!([{"veggieName": "potato", "veggieLike": true}])
    );
}

#[tokio::test]
async fn draft_example_fruits_only() {
    // The tasks draft: "The task data output then would include only the fruits data." An
    // inject task without `data` injects nothing, whatever the kind of its input.
    let mut input = produce();
    input["example"] = json!("fruits");
    let output = draft::DraftFiltersWorkflow::new(NoFunctions)
        .run(input)
        .await
        .unwrap();
    assert_eq!(output, json!(["apple", "orange", "pear"]));
}

// ---------------------------------------------------------------------------------------------
// Results paths

#[tokio::test]
async fn results_paths_create_missing_objects_and_write_into_arrays() {
    let workflow = ResultsWorkflow::new(
        Script::new()
            .ok("give", json!({"deep": true}))
            .ok("give", json!("second")),
    );
    let output = workflow
        .run(json!({"a": {"keep": 1}, "list": [{"x": 0}, {"x": 1}]}))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({
            "a": {"keep": 1, "b": {"c": {"deep": true}}},
            "list": [{"x": 0}, {"x": 1, "value": "second"}]
        })
    );
    assert_eq!(
        workflow.functions().calls(),
        [
            ("give", json!({"which": "deep"})),
            ("give", json!({"which": "indexed"}))
        ]
    );
}

#[tokio::test]
async fn a_results_path_replaces_a_null_and_overwrites_what_was_there() {
    let workflow = ResultsWorkflow::new(
        Script::new()
            .ok("give", json!([1, 2]))
            .ok("give", json!(null)),
    );
    let output = workflow
        .run(json!({"a": {"b": null}, "list": [0, {"value": "old"}]}))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({"a": {"b": {"c": [1, 2]}}, "list": [0, {"value": null}]})
    );
}

fn assert_write_error(err: &WorkflowError, message: &str, data: &Value) {
    assert_eq!(err.workflow(), "results");
    assert_eq!(err.task(), "Write");
    assert_eq!(err.error().name, "DataError");
    assert_eq!(err.error().message, message);
    assert_eq!(err.data(), data);
}

#[tokio::test]
async fn a_results_path_through_a_value_of_another_kind_is_a_data_error() {
    let workflow = ResultsWorkflow::new(Script::new().ok("give", json!(1)));
    let input = json!({"a": {"b": "text"}});
    let err = workflow.run(input.clone()).await.unwrap_err();
    assert_write_error(
        &err,
        "the JSONPath `$.a.b.c` cannot be written to: `$.a.b` holds a string, not an object",
        &input,
    );

    // The first action wrote its result before the second failed.
    let err = workflow.run(json!({"list": [7]})).await.unwrap_err();
    assert_write_error(
        &err,
        "the JSONPath `$.list[1].value` cannot be written to: index 1 is past the end of the \
         array at `$.list`, which has 1 element(s)",
        &json!({"list": [7], "a": {"b": {"c": 1}}}),
    );

    let err = workflow.run(json!({})).await.unwrap_err();
    assert_write_error(
        &err,
        "the JSONPath `$.list[1].value` cannot be written to: there is no array at `$.list` to \
         index into",
        &json!({"a": {"b": {"c": 1}}}),
    );
}

// ---------------------------------------------------------------------------------------------
// Merging action results

async fn merged(data: Value, result: Value) -> Result<Value, WorkflowError> {
    let workflow = MergesWorkflow::new(Script::new().ok("give", result));
    let outcome = workflow.run(data).await;
    // `parameters: {}` passes an empty object, not the task data.
    assert_eq!(workflow.functions().calls(), [("give", json!({}))]);
    outcome
}

#[tokio::test]
async fn objects_merge_recursively_and_the_incoming_scalar_wins() {
    let output = merged(
        json!({"a": {"x": 1, "deep": {"p": 1}}, "keep": true, "s": "old", "n": null}),
        json!({"a": {"y": 2, "deep": {"q": 2}}, "s": "new", "n": {"now": "object"}}),
    )
    .await
    .unwrap();
    assert_eq!(
        output,
        json!({
            "a": {"x": 1, "y": 2, "deep": {"p": 1, "q": 2}},
            "keep": true,
            "s": "new",
            "n": {"now": "object"}
        })
    );
}

#[tokio::test]
async fn arrays_concatenate_keeping_unique_elements() {
    let output = merged(
        json!({"l": [1, 2, {"k": 1}], "m": []}),
        json!({"l": [2, 3, {"k": 1}, {"k": 2}], "m": ["x", "x"]}),
    )
    .await
    .unwrap();
    assert_eq!(
        output,
        json!({"l": [1, 2, {"k": 1}, 3, {"k": 2}], "m": ["x"]})
    );
}

#[tokio::test]
async fn a_null_result_changes_nothing() {
    let data = json!({"a": {"x": 1}, "l": [1]});
    assert_eq!(merged(data.clone(), Value::Null).await.unwrap(), data);
}

/// A task whose output filter keeps one member: its call merges only that member when the
/// result holds it, and the output and the errors are those of the whole merge filtered.
#[tokio::test]
async fn an_output_filter_of_one_member_sees_the_whole_merge() {
    output_filter_of_one_member(|data, result| async move {
        merge_then_output::MergeThenOutputWorkflow::new(Script::new().ok("give", result))
            .run(data)
            .await
    })
    .await;
}

/// The same for a task whose step is an `async fn` (a compensation log reaches it).
#[tokio::test]
async fn an_output_filter_of_one_member_sees_the_whole_merge_in_a_compensated_task() {
    output_filter_of_one_member(|data, result| async move {
        // `note` returns nothing, so the compensation leaves any output as it is.
        merge_then_output_compensated::MergeThenOutputCompensatedWorkflow::new(
            Script::new().ok("give", result).ok("note", Value::Null),
        )
        .run(data)
        .await
    })
    .await;
}

async fn output_filter_of_one_member<F, R>(run: F)
where
    F: Fn(Value, Value) -> R,
    R: std::future::Future<Output = Result<Value, WorkflowError>>,
{
    // The member merged as the merge would: objects member by member, arrays appended.
    let output = run(
        json!({"n": {"x": 1, "l": [1]}, "m": 1}),
        json!({"n": {"y": 2, "l": [1, 2]}, "other": 3}),
    )
    .await
    .unwrap();
    assert_eq!(output, json!({"x": 1, "l": [1, 2], "y": 2}));
    // The filter applies once: an output with a member of the same name is the output.
    assert_eq!(
        run(json!({"n": {"n": 5}}), json!({"n": {"m": 1}}))
            .await
            .unwrap(),
        json!({"n": 5, "m": 1})
    );
    // A scalar replaced, a member the data lacked.
    assert_eq!(
        run(json!({"n": 1}), json!({"n": "two"})).await.unwrap(),
        json!("two")
    );
    assert_eq!(run(json!({}), json!({"n": [3]})).await.unwrap(), json!([3]));
    // A result without the member: the data's own, or all of it when neither has it.
    assert_eq!(
        run(json!({"n": 1, "m": 2}), json!({"other": 3}))
            .await
            .unwrap(),
        json!(1)
    );
    assert_eq!(
        run(json!({"m": 2}), json!({"other": 3})).await.unwrap(),
        json!({"m": 2, "other": 3})
    );
    // A conflict elsewhere in the result fails the task, the data as it was.
    let data = json!({"n": 1, "l": [1]});
    let err = run(data.clone(), json!({"n": 2, "l": {"x": 1}}))
        .await
        .unwrap_err();
    assert_eq!(err.task(), "Merge");
    assert_eq!(err.error().name, "DataError");
    assert!(
        err.error()
            .message
            .contains("at `/l` the task data holds an array"),
        "{}",
        err.error().message
    );
    assert_eq!(err.data(), &data);
}

fn assert_conflict(err: &WorkflowError, location: &str, existing: &str, incoming: &str) {
    assert_eq!(err.workflow(), "merges");
    assert_eq!(err.task(), "Merge");
    assert_eq!(err.error().name, "DataError");
    assert_eq!(
        err.error().message,
        format!(
            "task `Merge`: cannot merge the result of action `give` into the task data: at \
             {location} the task data holds {existing} but the result of action `give` holds \
             {incoming}, and merging never replaces a value by one of another kind; add \
             `actionDataFilter.dataResultsPath` (for example `$.result`) to write the result at \
             a place of its own instead of merging it"
        )
    );
}

#[tokio::test]
async fn merging_values_of_different_kinds_is_a_data_error() {
    let data = json!({"a": [1], "b": {"c": 1}, "s": "text"});

    let err = merged(data.clone(), json!({"a": {"b": 1}}))
        .await
        .unwrap_err();
    assert_conflict(&err, "`/a`", "an array", "an object");
    // Nothing was merged: the data is as it was before the action.
    assert_eq!(err.data(), &data);

    let err = merged(data.clone(), json!({"b": {"c": [2]}}))
        .await
        .unwrap_err();
    assert_conflict(&err, "`/b/c`", "a number", "an array");
    assert_eq!(err.data(), &data);

    let err = merged(data.clone(), json!({"s": {"t": 1}}))
        .await
        .unwrap_err();
    assert_conflict(&err, "`/s`", "a string", "an object");

    let err = merged(data.clone(), json!("a string")).await.unwrap_err();
    assert_conflict(&err, "the root", "an object", "a string");

    let err = merged(data.clone(), json!([1, 2])).await.unwrap_err();
    assert_conflict(&err, "the root", "an object", "an array");
    assert_eq!(err.data(), &data);
}
