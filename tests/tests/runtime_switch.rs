//! Runtime semantics of control flow: switch data conditions (all 13 operators, numeric and
//! string comparison, first match, default) and conditional transitions (spel, jsonpath, a
//! refused transition halting the run).

use std::sync::Mutex;

use swf_runtime::{CustomCondition, FunctionError, Value, WorkflowError, json};

mod ops {
    swf_runtime::workflow!("workflows/runtime/switch-ops.sw.yaml");
}
mod route {
    swf_runtime::workflow!("workflows/runtime/switch-route.sw.yaml");
}
mod last {
    swf_runtime::workflow!("workflows/runtime/switch-last.sw.yaml");
}
mod transitions {
    swf_runtime::workflow!("workflows/runtime/transitions.sw.yaml");
}
mod jsonpath_default {
    swf_runtime::workflow!("workflows/runtime/jsonpath-default.sw.yaml");
}

use ops::{SwitchOpsState, SwitchOpsWorkflow};
use transitions::TransitionsWorkflow;

// ---------------------------------------------------------------------------------------------
// All operators

/// What a `custom` predicate was given.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    task: String,
    path: String,
    selected: Option<Value>,
    value: String,
    metadata: Value,
}

/// A `custom` predicate: true when the selection is an even number.
#[derive(Default)]
struct Even {
    seen: Mutex<Vec<Seen>>,
}

impl ops::SwitchOpsFunctions for Even {
    fn custom_condition(&self, c: CustomCondition<'_>) -> bool {
        self.seen.lock().unwrap().push(Seen {
            task: c.task.to_owned(),
            path: c.path.to_owned(),
            selected: c.selected.cloned(),
            value: c.value.to_owned(),
            metadata: c.metadata.clone(),
        });
        c.selected
            .and_then(Value::as_u64)
            .is_some_and(|n| n % 2 == 0)
    }
}

/// The operators whose condition held for `input`, in document order.
async fn hits(input: Value) -> Vec<String> {
    let workflow = SwitchOpsWorkflow::new(Even::default());
    let output = workflow.run(input.clone()).await.unwrap();
    let hits: Vec<String> = match output.get("hits") {
        Some(hits) => serde_hits(hits),
        None => Vec::new(),
    };
    // The switches themselves leave the data as it was.
    let mut without_hits = output;
    without_hits.as_object_mut().unwrap().remove("hits");
    assert_eq!(without_hits, input);
    hits
}

fn serde_hits(hits: &Value) -> Vec<String> {
    hits.as_array()
        .unwrap()
        .iter()
        .map(|hit| hit.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn operators_on_a_number_equal_to_the_value() {
    assert_eq!(
        hits(json!({"a": 1, "n": 10, "s": "abbbc", "c": 4})).await,
        [
            "exists",
            "notnull",
            "equals",
            "lessthanorequals",
            "greaterthanorequals",
            "matches",
            "custom"
        ]
    );
}

#[tokio::test]
async fn operators_on_null_and_a_smaller_number() {
    // `exists`: the path selects something (null); `null`: it selects null. 9 < 10 numerically.
    assert_eq!(
        hits(json!({"a": null, "n": 9, "s": "abd", "c": 3})).await,
        [
            "exists",
            "null",
            "notequals",
            "lessthan",
            "lessthanorequals",
            "notmatches"
        ]
    );
}

#[tokio::test]
async fn operators_when_nothing_is_selected() {
    assert_eq!(
        hits(json!({})).await,
        ["notexists", "null", "notequals", "notmatches"]
    );
}

#[tokio::test]
async fn numbers_compare_numerically_whatever_their_representation() {
    assert_eq!(
        hits(json!({"n": 10.0})).await,
        [
            "notexists",
            "null",
            "equals",
            "lessthanorequals",
            "greaterthanorequals",
            "notmatches"
        ]
    );
    assert_eq!(
        hits(json!({"n": 10.5})).await,
        [
            "notexists",
            "null",
            "notequals",
            "greaterthan",
            "greaterthanorequals",
            "notmatches"
        ]
    );
    // 100 > 10 and -5 < 10 numerically (as text, "-5" < "10" too, but "100" > "10" either way;
    // 9 above is the discriminating case).
    assert_eq!(
        hits(json!({"n": -5})).await,
        [
            "notexists",
            "null",
            "notequals",
            "lessthan",
            "lessthanorequals",
            "notmatches"
        ]
    );
}

#[tokio::test]
async fn a_string_selection_compares_as_a_string_even_when_it_looks_like_a_number() {
    // "9" > "10" as text, where 9 < 10 as numbers.
    assert_eq!(
        hits(json!({"n": "9"})).await,
        [
            "notexists",
            "null",
            "notequals",
            "greaterthan",
            "greaterthanorequals",
            "notmatches"
        ]
    );
    assert_eq!(
        hits(json!({"n": "10"})).await,
        [
            "notexists",
            "null",
            "equals",
            "lessthanorequals",
            "greaterthanorequals",
            "notmatches"
        ]
    );
}

#[tokio::test]
async fn matches_searches_with_the_regular_expression() {
    assert_eq!(
        hits(json!({"a": 0, "s": "abc"})).await,
        ["exists", "notnull", "notequals", "matches"]
    );
    assert_eq!(
        hits(json!({"a": 0, "s": "xabc"})).await,
        ["exists", "notnull", "notequals", "notmatches"]
    );
}

#[tokio::test]
async fn custom_conditions_call_the_predicate_with_everything_the_condition_declares() {
    let workflow = SwitchOpsWorkflow::new(Even::default());
    let output = workflow.run(json!({"c": 8})).await.unwrap();
    assert_eq!(
        serde_hits(&output["hits"]),
        ["notexists", "null", "notequals", "notmatches", "custom"]
    );
    assert_eq!(
        *workflow.functions().seen.lock().unwrap(),
        [Seen {
            task: "Test_custom".into(),
            path: "$.c".into(),
            selected: Some(json!(8)),
            value: "cv".into(),
            metadata: json!({"rule": "even"}),
        }]
    );

    let workflow = SwitchOpsWorkflow::new(Even::default());
    workflow.run(json!({})).await.unwrap();
    assert_eq!(workflow.functions().seen.lock().unwrap()[0].selected, None);
}

#[tokio::test]
async fn a_switch_transitions_without_changing_the_data() {
    let workflow = SwitchOpsWorkflow::new(Even::default());
    let state = workflow.start(json!({"a": 1})).unwrap();
    assert_eq!(state.task_name(), Some("Test_exists"));
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        SwitchOpsState::HitExists {
            data: json!({"a": 1})
        }
    );
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        SwitchOpsState::TestNotexists {
            data: json!({"a": 1, "hits": ["exists"]})
        }
    );
    // `notexists` is false: the default transition.
    let state = workflow.step(state).await.unwrap();
    assert_eq!(state.task_name(), Some("Test_null"));
}

// ---------------------------------------------------------------------------------------------
// First match, default, input filter

struct NoFunctions;

impl route::SwitchRouteFunctions for NoFunctions {}

async fn grade(input: Value) -> Value {
    route::SwitchRouteWorkflow::new(NoFunctions)
        .run(input)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_first_true_condition_decides() {
    // Both `>= 90` and `>= 50` hold; the first one in the document wins.
    assert_eq!(
        grade(json!({"student": {"score": 95, "name": "zed"}, "class": 1})).await,
        json!({"score": 95, "name": "zed", "grade": "A"})
    );
    assert_eq!(
        grade(json!({"student": {"score": 60, "name": "abc"}})).await,
        json!({"score": 60, "name": "abc", "grade": "B"})
    );
}

#[tokio::test]
async fn strings_compare_lexicographically() {
    assert_eq!(
        grade(json!({"student": {"score": 10, "name": "abc"}})).await,
        json!({"score": 10, "name": "abc", "grade": "early"})
    );
    assert_eq!(
        grade(json!({"student": {"score": 10, "name": "abe"}})).await,
        json!({"score": 10, "name": "abe", "grade": "C"})
    );
}

#[tokio::test]
async fn no_true_condition_takes_the_default_transition() {
    assert_eq!(grade(json!({"student": {}})).await, json!({"grade": "C"}));
    // No `$.student`: the input filter leaves the data unfiltered, and `score` is read there.
    assert_eq!(
        grade(json!({"score": 50})).await,
        json!({"score": 50, "grade": "B"})
    );
}

// The route workflow has no `custom` condition, so its trait has no predicate to implement.
#[test]
fn a_workflow_without_custom_conditions_needs_no_predicate() {
    fn assert_implements<T: route::SwitchRouteFunctions>() {}
    assert_implements::<NoFunctions>();
}

impl last::SwitchLastFunctions for NoFunctions {}

/// `$.readings[-1].value` compares the last reading's value, whatever the readings before it.
#[tokio::test]
async fn a_condition_on_the_last_element_compares_its_value() {
    let workflow = last::SwitchLastWorkflow::new(NoFunctions);
    for (readings, level) in [
        (json!([{"value": 5}, {"value": 120}]), "high"),
        (json!([{"value": 120}, {"value": 5}]), "normal"),
        (json!([]), "normal"),
    ] {
        let output = workflow
            .run(json!({"readings": readings}))
            .await
            .expect("runs");
        assert_eq!(output["level"], level, "{readings}");
    }
}

// ---------------------------------------------------------------------------------------------
// Conditional transitions

#[derive(Default)]
struct Services {
    lookup: Mutex<Option<Result<Value, FunctionError>>>,
    approve: Mutex<Option<Value>>,
    calls: Mutex<Vec<(&'static str, Value)>>,
}

impl Services {
    fn new(lookup: Result<Value, FunctionError>, approve: Value) -> Self {
        Self {
            lookup: Mutex::new(Some(lookup)),
            approve: Mutex::new(Some(approve)),
            calls: Mutex::default(),
        }
    }

    fn calls(&self) -> Vec<(&'static str, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl transitions::TransitionsFunctions for Services {
    async fn lookup(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.lock().unwrap().push(("lookup", args));
        self.lookup.lock().unwrap().clone().unwrap()
    }
    async fn approve(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.lock().unwrap().push(("approve", args));
        Ok(self.approve.lock().unwrap().clone().unwrap())
    }
}

fn manager() -> Value {
    json!({"applicant": {"user": {"title": "MANAGER"}}})
}

#[tokio::test]
async fn true_conditions_let_the_transitions_proceed() {
    let workflow = TransitionsWorkflow::new(Services::new(
        Ok(manager()),
        json!({"approved": true, "status": "ok"}),
    ));
    let output = workflow.run(json!({"request": 1})).await.unwrap();
    // `Approve` outputs only its decision; `Check` reaches `Done` by its id.
    assert_eq!(
        output,
        json!({"approved": true, "status": "ok", "checked": true, "done": true})
    );
    assert_eq!(
        workflow.functions().calls(),
        [
            ("lookup", json!({"request": 1})),
            (
                "approve",
                json!({"request": 1, "applicant": {"user": {"title": "MANAGER"}}})
            ),
        ]
    );
}

fn assert_refused(err: &WorkflowError, task: &str, next: &str, condition: &str, data: &Value) {
    assert_eq!(err.workflow(), "transitions");
    assert_eq!(err.task(), task);
    assert_eq!(err.error().name, "TransitionConditionError");
    assert_eq!(
        err.error().message,
        format!("the condition `{condition}` of the transition from `{task}` to `{next}` is false")
    );
    assert_eq!(err.error().trace, "");
    assert_eq!(err.data(), data);
}

#[tokio::test]
async fn a_false_condition_halts_the_run_and_is_not_handled_by_on_error() {
    let workflow = TransitionsWorkflow::new(Services::new(
        Ok(json!({"applicant": {"user": {"title": "CLERK"}}})),
        json!({}),
    ));
    let err = workflow.run(json!({"request": 2})).await.unwrap_err();
    assert_refused(
        &err,
        "Lookup",
        "Approve",
        "#jsonPath(taskOutputData,'$..user.title') eq 'MANAGER'",
        &json!({"request": 2, "applicant": {"user": {"title": "CLERK"}}}),
    );
    // `Lookup`'s catch-all onError did not run, nor did `Approve`.
    assert_eq!(workflow.functions().calls().len(), 1);
}

#[tokio::test]
async fn the_on_error_handler_catches_errors_of_the_task_itself() {
    // The contrast for the test above: the same onError does handle a failing function.
    let workflow = TransitionsWorkflow::new(Services::new(
        Err(FunctionError::new("lookup failed")),
        json!({}),
    ));
    let output = workflow.run(json!({"request": 3})).await.unwrap();
    assert_eq!(
        output,
        json!({
            "request": 3,
            "error": {"name": "FunctionExecutionError", "message": "lookup failed", "trace": ""},
            "handled": true
        })
    );
}

#[tokio::test]
async fn a_jsonpath_condition_is_evaluated_on_the_filtered_task_output() {
    for approved in [json!(false), json!(null)] {
        let decision = json!({"approved": approved, "status": "ok"});
        let workflow = TransitionsWorkflow::new(Services::new(Ok(manager()), decision.clone()));
        let err = workflow.run(json!({})).await.unwrap_err();
        assert_refused(&err, "Approve", "Check", "$.approved", &decision);
    }
    let decision = json!({"status": "ok"});
    let workflow = TransitionsWorkflow::new(Services::new(Ok(manager()), decision.clone()));
    let err = workflow.run(json!({})).await.unwrap_err();
    assert_refused(&err, "Approve", "Check", "$.approved", &decision);

    // Any value but `false` and `null` is true.
    let workflow = TransitionsWorkflow::new(Services::new(
        Ok(manager()),
        json!({"approved": 0, "status": "ok"}),
    ));
    assert_eq!(
        workflow.run(json!({})).await.unwrap(),
        json!({"approved": 0, "status": "ok", "checked": true, "done": true})
    );
}

#[tokio::test]
async fn bare_names_in_a_transition_read_the_task_output() {
    let workflow = TransitionsWorkflow::new(Services::new(
        Ok(manager()),
        json!({"approved": "yes", "status": "pending"}),
    ));
    let err = workflow.run(json!({})).await.unwrap_err();
    assert_refused(
        &err,
        "Check",
        "done-id",
        "status eq 'ok' and $.checked eq true",
        &json!({"approved": "yes", "status": "pending", "checked": true}),
    );
}

// ---------------------------------------------------------------------------------------------
// The workflow's default expression language

struct Nothing;

impl jsonpath_default::JsonpathDefaultFunctions for Nothing {}

#[tokio::test]
async fn expression_language_jsonpath_applies_to_transitions() {
    let workflow = jsonpath_default::JsonpathDefaultWorkflow::new(Nothing);
    let input = json!({"items": [{"ok": false}, {"ok": true}]});
    let output = workflow.run(input).await.unwrap();
    assert_eq!(
        output,
        json!({"items": [{"ok": false}, {"ok": true}], "started": true})
    );

    for input in [json!({"items": [{"ok": false}]}), json!({})] {
        let err = workflow.run(input.clone()).await.unwrap_err();
        assert_eq!(err.workflow(), "jsonpath-default");
        assert_eq!(err.task(), "Start");
        assert_eq!(err.error().name, "TransitionConditionError");
        assert_eq!(
            err.error().message,
            "the condition `$.items[?(@.ok == true)]` of the transition from `Start` to \
             `Finish` is false"
        );
        let mut data = input;
        data["started"] = json!(true);
        assert_eq!(err.data(), &data);
    }
}

// ---------------------------------------------------------------------------------------------
// spel on transitions

mod spel {
    swf_runtime::workflow!("workflows/runtime/spel.sw.yaml");
}

impl spel::SpelFunctions for Nothing {}

const SPEL_CONDITIONS: [&str; 10] = [
    "$.n gt 5 and $.n le 10",
    "$.n == 10.0 && !($.s eq 'x')",
    "$.missing eq null or $.flag == true",
    "$.s matches '^[a-c]+$'",
    "#jsonPath(taskOutputData, '$.list[?(@ > 2)]') eq 3",
    "$.s ne 'abc' || $.n < 0 || $.n >= 10",
    "$.s < 'abd' and $.s > 'abb'",
    "$.n ne '10' and not ($.n eq '10')",
    "$.t eq true and $.flag != true and $.flag eq false",
    "(level eq 'high' or level eq 'low') and count ge 2",
];

fn spel_input() -> Value {
    json!({
        "n": 10,
        "s": "abc",
        "flag": false,
        "list": [1, 3],
        "t": true,
        "level": "high",
        "count": 2
    })
}

#[tokio::test]
async fn spel_conditions_that_hold_let_every_transition_proceed() {
    let workflow = spel::SpelWorkflow::new(Nothing);
    let output = workflow.run(spel_input()).await.unwrap();
    let mut expected = spel_input();
    expected["passed"] = json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert_eq!(output, expected);
}

#[tokio::test]
async fn each_spel_condition_can_refuse_its_transition() {
    let cases: [(&str, Value, usize); 11] = [
        ("n", json!(11), 1),
        // A string never equals or orders against a number.
        ("n", json!("10"), 1),
        ("s", json!("x"), 2),
        ("missing", json!(1), 3),
        ("s", json!("abd"), 4),
        // Two matches: the operand is the array of both, which is not 3.
        ("list", json!([1, 3, 4]), 5),
        ("list", json!([1]), 5),
        ("s", json!("abb"), 7),
        ("t", json!("true"), 9),
        ("level", json!("mid"), 10),
        ("count", json!(1), 10),
    ];
    let workflow = spel::SpelWorkflow::new(Nothing);
    for (key, value, step) in cases {
        let mut input = spel_input();
        input[key] = value.clone();
        let err = workflow.run(input.clone()).await.unwrap_err();
        let context = format!("{key} = {value}");
        assert_eq!(err.task(), format!("Step{step}"), "{context}");
        assert_eq!(err.error().name, "TransitionConditionError", "{context}");
        assert_eq!(
            err.error().message,
            format!(
                "the condition `{}` of the transition from `Step{step}` to `Step{}` is false",
                SPEL_CONDITIONS[step - 1],
                step + 1
            ),
            "{context}"
        );
        let mut data = input;
        data["passed"] = json!((1..=step).collect::<Vec<_>>());
        assert_eq!(err.data(), &data, "{context}");
    }
}
