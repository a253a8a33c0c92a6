//! Runtime semantics of errors: action timeouts, retries (intervals, the `R<n>/` form,
//! multipliers, `maxAttempts`, the first matching definition deciding, restarting from the task
//! input) and onError (conditions, error data filters, the error merged into the data of the
//! handler's target, unhandled errors).
//!
//! Every function is scripted: it records its arguments and the virtual time of the call, waits a
//! scripted time and returns a scripted result, so that each test asserts exact data, errors and
//! elapsed time.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use swf_runtime::{Clock, FunctionError, SystemClock, Value, WorkflowError, json};
use tokio::time::Instant;

mod timeouts {
    swf_runtime::workflow!("workflows/runtime/timeouts.sw.yaml");
}
mod retries {
    swf_runtime::workflow!("workflows/runtime/retries.sw.yaml");
}
mod on_error {
    swf_runtime::workflow!("workflows/runtime/on-error.sw.yaml");
}

use on_error::{OnErrorState, OnErrorWorkflow};
use retries::RetriesWorkflow;
use timeouts::TimeoutsWorkflow;

// ---------------------------------------------------------------------------------------------
// Scripted functions

#[derive(Clone)]
struct Reply {
    after: Duration,
    result: Result<Value, FunctionError>,
}

#[derive(Debug, Clone, PartialEq)]
struct Call {
    function: &'static str,
    args: Value,
    at: Duration,
}

/// Functions that answer from a queue of replies per function (the last one repeats), record
/// each call when it starts and each function that ran to its end.
struct Script {
    epoch: Instant,
    replies: Mutex<HashMap<&'static str, VecDeque<Reply>>>,
    calls: Mutex<Vec<Call>>,
    finished: Mutex<Vec<&'static str>>,
    prepared: AtomicU32,
}

impl Script {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            replies: Mutex::new(HashMap::new()),
            calls: Mutex::new(Vec::new()),
            finished: Mutex::new(Vec::new()),
            prepared: AtomicU32::new(0),
        }
    }

    fn ok(self, function: &'static str, after_secs: u64, value: Value) -> Self {
        self.push(function, Duration::from_secs(after_secs), Ok(value))
    }

    fn err(self, function: &'static str, after_secs: u64, error: FunctionError) -> Self {
        self.push(function, Duration::from_secs(after_secs), Err(error))
    }

    fn push(
        self,
        function: &'static str,
        after: Duration,
        result: Result<Value, FunctionError>,
    ) -> Self {
        self.replies
            .lock()
            .unwrap()
            .entry(function)
            .or_default()
            .push_back(Reply { after, result });
        self
    }

    async fn call(&self, function: &'static str, args: Value) -> Result<Value, FunctionError> {
        let reply = {
            let mut replies = self.replies.lock().unwrap();
            let queue = replies
                .get_mut(function)
                .unwrap_or_else(|| panic!("no reply scripted for `{function}`"));
            if queue.len() > 1 {
                queue.pop_front().unwrap()
            } else {
                queue.front().cloned().unwrap()
            }
        };
        self.calls.lock().unwrap().push(Call {
            function,
            args,
            at: self.epoch.elapsed(),
        });
        tokio::time::sleep(reply.after).await;
        self.finished.lock().unwrap().push(function);
        reply.result
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn calls_of(&self, function: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.function == function)
            .collect()
    }

    /// When `function` was called, in whole seconds.
    fn times_of(&self, function: &str) -> Vec<u64> {
        self.calls_of(function)
            .iter()
            .map(|c| c.at.as_secs())
            .collect()
    }

    fn finished(&self) -> Vec<&'static str> {
        self.finished.lock().unwrap().clone()
    }
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

impl timeouts::TimeoutsFunctions for Script {
    async fn fetch(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("fetch", args).await
    }
    async fn backup(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("backup", args).await
    }
}

impl retries::RetriesFunctions for Script {
    /// Returns `{"steps": ["prepare-<n>"]}` for its n-th call, so that the data of each attempt
    /// shows whether the attempt restarted from the task input.
    async fn prepare(&self, args: Value) -> Result<Value, FunctionError> {
        let n = self.prepared.fetch_add(1, Ordering::SeqCst) + 1;
        self.calls.lock().unwrap().push(Call {
            function: "prepare",
            args,
            at: self.epoch.elapsed(),
        });
        Ok(json!({"steps": [format!("prepare-{n}")]}))
    }
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("charge", args).await
    }
}

impl on_error::OnErrorFunctions for Script {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("work", args).await
    }
    async fn inspect(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("inspect", args).await
    }
}

// ---------------------------------------------------------------------------------------------
// Action timeouts

fn timeout_error() -> Value {
    json!({
        "name": "TimeoutError",
        "message": "action `fetch` of task `Fetch` did not complete within PT5S",
        "trace": ""
    })
}

#[tokio::test(start_paused = true)]
async fn an_action_within_its_timeout_completes() {
    let workflow = TimeoutsWorkflow::new(Script::new().ok("fetch", 4, json!("fetched")).ok(
        "backup",
        2,
        json!("backed up"),
    ));
    let started = Instant::now();
    let output = workflow.run(json!({"id": 1})).await.unwrap();
    assert_eq!(started.elapsed(), secs(6));
    assert_eq!(
        output,
        json!({"id": 1, "result": "fetched", "backup": "backed up"})
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_retried() {
    let workflow = TimeoutsWorkflow::new(
        Script::new()
            .ok("fetch", 60, json!("too late"))
            .ok("fetch", 4, json!("fetched"))
            .ok("backup", 0, json!("backed up")),
    );
    let started = Instant::now();
    let output = workflow.run(json!({"id": 2})).await.unwrap();
    // 5 s until the timeout, 1 s retry interval, 4 s for the second call.
    assert_eq!(started.elapsed(), secs(10));
    assert_eq!(
        output,
        json!({"id": 2, "result": "fetched", "backup": "backed up"})
    );
    assert_eq!(workflow.functions().times_of("fetch"), [0, 6]);
    // The call that timed out was cancelled: it never ran to its end.
    assert_eq!(workflow.functions().finished(), ["fetch", "backup"]);
}

#[tokio::test(start_paused = true)]
async fn timeouts_past_the_retries_go_to_on_error() {
    let workflow = TimeoutsWorkflow::new(Script::new().ok("fetch", 60, json!("too late")));
    let started = Instant::now();
    let output = workflow.run(json!({"id": 3})).await.unwrap();
    // Three attempts of 5 s with 1 s between them.
    assert_eq!(started.elapsed(), secs(17));
    assert_eq!(workflow.functions().times_of("fetch"), [0, 6, 12]);
    assert_eq!(
        output,
        json!({"id": 3, "error": timeout_error(), "fallback": true})
    );
    assert!(workflow.functions().finished().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_unhandled_timeout_fails_the_run_naming_the_task() {
    let workflow = TimeoutsWorkflow::new(Script::new().ok("fetch", 1, json!("fetched")).ok(
        "backup",
        10,
        json!("too late"),
    ));
    let started = Instant::now();
    let err = workflow.run(json!({"id": 4})).await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::from_millis(3_500));
    assert_eq!(err.workflow(), "timeouts");
    assert_eq!(err.task(), "Unguarded");
    assert_eq!(err.error().name, "TimeoutError");
    assert_eq!(
        err.error().message,
        "action `backup call` of task `Unguarded` did not complete within PT2.5S"
    );
    assert_eq!(err.error().trace, "");
    assert_eq!(err.data(), &json!({"id": 4, "result": "fetched"}));
    assert_eq!(
        err.to_string(),
        "workflow `timeouts` failed in task `Unguarded`: TimeoutError: action `backup call` of \
         task `Unguarded` did not complete within PT2.5S"
    );
}

// ---------------------------------------------------------------------------------------------
// Retries

fn payment() -> Value {
    json!({"payment": {"amount": 5}, "other": "dropped by the input filter"})
}

/// The task data of attempt `n`: the filtered input and that attempt's `prepare` result only.
fn attempt_data(n: u32) -> Value {
    json!({"amount": 5, "steps": [format!("prepare-{n}")]})
}

fn error_json(name: &str, message: &str) -> Value {
    json!({"name": name, "message": message, "trace": ""})
}

async fn run_retries(
    script: Script,
    input: Value,
) -> (
    RetriesWorkflow<Script>,
    Duration,
    Result<Value, WorkflowError>,
) {
    let workflow = RetriesWorkflow::new(script);
    let started = Instant::now();
    let outcome = workflow.run(input).await;
    let elapsed = started.elapsed();
    (workflow, elapsed, outcome)
}

#[tokio::test(start_paused = true)]
async fn interval_and_multiplier_wait_1_3_5_and_7_minutes_then_on_error() {
    let busy = FunctionError::named("Busy", "try later");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, busy), payment()).await;
    // The tasks draft's example: R4/PT1M, multiplier PT2M, maxAttempts 4.
    assert_eq!(
        workflow.functions().times_of("charge"),
        [0, 60, 60 + 180, 60 + 180 + 300, 60 + 180 + 300 + 420]
    );
    assert_eq!(elapsed, secs(960));
    // Exhausted: onError takes the data of the last attempt, with the error merged in.
    let mut expected = attempt_data(5);
    expected["error"] = error_json("Busy", "try later");
    expected["recovered"] = json!(true);
    assert_eq!(outcome.unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn each_retry_restarts_from_the_task_input() {
    let busy = FunctionError::named("Busy", "try later");
    let (workflow, elapsed, outcome) = run_retries(
        Script::new()
            .err("charge", 0, busy.clone())
            .err("charge", 0, busy)
            .ok("charge", 0, json!({"charged": true})),
        payment(),
    )
    .await;
    assert_eq!(elapsed, secs(240));
    let charges: Vec<Value> = workflow
        .functions()
        .calls_of("charge")
        .into_iter()
        .map(|c| c.args)
        .collect();
    assert_eq!(charges, [attempt_data(1), attempt_data(2), attempt_data(3)]);
    let prepares: Vec<Value> = workflow
        .functions()
        .calls_of("prepare")
        .into_iter()
        .map(|c| c.args)
        .collect();
    assert_eq!(
        prepares,
        [
            json!({"amount": 5}),
            json!({"amount": 5}),
            json!({"amount": 5})
        ]
    );
    let mut expected = attempt_data(3);
    expected["charged"] = json!(true);
    assert_eq!(outcome.unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn the_repeat_count_of_the_interval_caps_max_attempts() {
    // R2/PT1M with maxAttempts 5: two retries.
    let flaky = FunctionError::named("Flaky", "flaked");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, flaky), payment()).await;
    assert_eq!(workflow.functions().times_of("charge"), [0, 60, 120]);
    assert_eq!(elapsed, secs(120));
    let mut expected = attempt_data(3);
    expected["error"] = error_json("Flaky", "flaked");
    expected["recovered"] = json!(true);
    assert_eq!(outcome.unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn max_attempts_caps_the_repeat_count_of_the_interval() {
    // R5/PT10S with maxAttempts 2: two retries; no onError matches `Capped`.
    let capped = FunctionError::named("Capped", "capped").with_trace("at charge.rs:7");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, capped), payment()).await;
    assert_eq!(workflow.functions().times_of("charge"), [0, 10, 20]);
    assert_eq!(elapsed, secs(20));
    let err = outcome.unwrap_err();
    assert_eq!(err.workflow(), "retries");
    assert_eq!(err.task(), "Charge");
    assert_eq!(err.error().name, "Capped");
    assert_eq!(err.error().message, "capped");
    assert_eq!(err.error().trace, "at charge.rs:7");
    assert_eq!(err.data(), &attempt_data(3));
}

#[tokio::test(start_paused = true)]
async fn max_attempts_zero_means_no_retry_even_when_a_later_definition_matches() {
    let never = FunctionError::named("Never", "do not retry");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, never), payment()).await;
    assert_eq!(workflow.functions().times_of("charge"), [0]);
    assert_eq!(elapsed, Duration::ZERO);
    // The error data filter `$.error` merges the error's members themselves.
    let mut expected = attempt_data(1);
    expected["name"] = json!("Never");
    expected["message"] = json!("do not retry");
    expected["trace"] = json!("");
    expected["recovered"] = json!(true);
    assert_eq!(outcome.unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn max_attempts_defaults_to_one() {
    let once = FunctionError::named("Once", "only once");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, once), payment()).await;
    assert_eq!(workflow.functions().times_of("charge"), [0, 3]);
    assert_eq!(elapsed, secs(3));
    let err = outcome.unwrap_err();
    assert_eq!(err.task(), "Charge");
    assert_eq!(err.error().name, "Once");
    assert_eq!(err.data(), &attempt_data(2));
}

#[tokio::test(start_paused = true)]
async fn retry_conditions_read_the_task_data_and_the_error() {
    // `$.policy eq 'patient' and name eq 'Slow'`: one retry after 7 s.
    let slow = FunctionError::named("Slow", "slow");
    let (workflow, elapsed, outcome) = run_retries(
        Script::new().err("charge", 0, slow.clone()),
        json!({"payment": {"amount": 5, "policy": "patient"}}),
    )
    .await;
    assert_eq!(workflow.functions().times_of("charge"), [0, 7]);
    assert_eq!(elapsed, secs(7));
    assert_eq!(outcome.unwrap_err().error().name, "Slow");

    // Without the policy, the catch-all definition decides: three retries an hour apart.
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, slow), payment()).await;
    assert_eq!(
        workflow.functions().times_of("charge"),
        [0, 3600, 7200, 10800]
    );
    assert_eq!(elapsed, secs(10800));
    let err = outcome.unwrap_err();
    assert_eq!(err.error().name, "Slow");
    assert_eq!(err.data(), &attempt_data(4));
}

#[tokio::test(start_paused = true)]
async fn the_first_matching_definition_decides_even_when_exhausted() {
    // `Once` also matches the catch-all (`name ne 'Unmatched'`, 3 retries an hour apart), but
    // its own definition came first: once exhausted, onError decides (and none matches).
    let once = FunctionError::named("Once", "only once");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, once), payment()).await;
    assert_eq!(workflow.functions().calls_of("charge").len(), 2);
    assert_eq!(elapsed, secs(3));
    assert!(outcome.is_err());
}

#[tokio::test(start_paused = true)]
async fn an_error_no_definition_matches_is_not_retried() {
    let unmatched = FunctionError::named("Unmatched", "nobody handles this");
    let (workflow, elapsed, outcome) =
        run_retries(Script::new().err("charge", 0, unmatched), payment()).await;
    assert_eq!(workflow.functions().times_of("charge"), [0]);
    assert_eq!(elapsed, Duration::ZERO);
    let err = outcome.unwrap_err();
    assert_eq!(err.task(), "Charge");
    assert_eq!(
        err.error(),
        &swf_runtime::ErrorObject::new("Unmatched", "nobody handles this")
    );
    assert_eq!(err.data(), &attempt_data(1));
}

#[tokio::test(start_paused = true)]
async fn the_retry_state_records_attempts_and_the_pending_wait() {
    let workflow = RetriesWorkflow::new(
        Script::new()
            .err("charge", 0, FunctionError::named("Busy", "1"))
            .err("charge", 0, FunctionError::named("Flaky", "2"))
            .err("charge", 0, FunctionError::named("Busy", "3"))
            .ok("charge", 0, json!({"charged": true})),
    );
    let started = Instant::now();
    let origin = SystemClock.now();
    let at = |seconds: u64| {
        swf_runtime::serde_json::to_value(origin.checked_add(secs(seconds)).unwrap()).unwrap()
    };
    let state = workflow.start(payment()).unwrap();
    let mut saved = Vec::new();
    let mut state = workflow.step(state).await.unwrap();
    while state.output().is_none() {
        saved.push(swf_runtime::serde_json::to_value(&state).unwrap());
        state = workflow.step(state).await.unwrap();
    }
    // Each definition counts its own retries; the wait is saved as the instant it ends.
    assert_eq!(
        saved,
        [
            json!({"Charge": {"data": {"amount": 5}, "retry": {"attempts": [1], "not_before": at(60)}}}),
            json!({"Charge": {"data": {"amount": 5}, "retry": {"attempts": [1, 1], "not_before": at(120)}}}),
            json!({"Charge": {"data": {"amount": 5}, "retry": {"attempts": [2, 1], "not_before": at(300)}}}),
        ]
    );
    assert_eq!(started.elapsed(), secs(300));
    let mut expected = attempt_data(4);
    expected["charged"] = json!(true);
    assert_eq!(state.output(), Some(&expected));
}

// ---------------------------------------------------------------------------------------------
// onError

/// The first step's result, written at `$.result.first`.
fn first_step() -> Value {
    json!("done")
}

/// A `work` function whose first step succeeds and whose second step fails with `error`.
fn second_fails(error: FunctionError) -> Script {
    Script::new()
        .ok("work", 0, first_step())
        .err("work", 0, error)
        .ok("inspect", 0, json!("seen"))
}

/// What `Inspect` received: the data `onError` passed to it.
fn inspected(workflow: &OnErrorWorkflow<Script>) -> Value {
    let calls = workflow.functions().calls_of("inspect");
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls[0].args.clone()
}

#[tokio::test]
async fn on_error_merges_the_error_into_the_data_of_its_target() {
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named("Declined", "no funds")));
    let output = workflow.run(json!({"x": 1})).await.unwrap();
    // The data when the task failed (the first step's result included), the error merged in;
    // the task's output filter (`$.result`) is not applied on this path.
    let handed = json!({
        "x": 1,
        "result": {"first": "done"},
        "error": {"name": "Declined", "message": "no funds", "trace": ""}
    });
    assert_eq!(inspected(&workflow), handed);
    let mut expected = handed;
    expected["inspected"] = json!("seen");
    assert_eq!(output, expected);
}

#[tokio::test]
async fn on_error_state_after_a_handled_error() {
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named("Declined", "no funds")));
    let state = workflow.start(json!({"x": 1})).unwrap();
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        OnErrorState::Inspect {
            data: json!({
                "x": 1,
                "result": {"first": "done"},
                "error": {"name": "Declined", "message": "no funds", "trace": ""}
            })
        }
    );
}

#[tokio::test]
async fn without_an_error_the_output_filter_applies() {
    let workflow = OnErrorWorkflow::new(
        Script::new()
            .ok("work", 0, first_step())
            .ok("work", 0, json!({"ok": true}))
            .ok("inspect", 0, json!("seen")),
    );
    let output = workflow.run(json!({"x": 1})).await.unwrap();
    assert_eq!(inspected(&workflow), json!({"first": "done"}));
    assert_eq!(output, json!({"first": "done", "inspected": "seen"}));
    assert_eq!(
        workflow.functions().calls_of("work")[1].args,
        json!({"step": 2})
    );
}

#[tokio::test]
async fn spel_conditions_on_error_paths_and_the_error_data_filter() {
    // `$.error.message matches '^filter'`; `errorDataFilter: $.error` merges the members of the
    // error object into the data.
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::new("filter me")));
    workflow.run(json!({"x": 1})).await.unwrap();
    assert_eq!(
        inspected(&workflow),
        json!({
            "x": 1,
            "result": {"first": "done"},
            "name": "FunctionExecutionError",
            "message": "filter me",
            "trace": ""
        })
    );
}

#[tokio::test]
async fn the_first_matching_on_error_definition_decides() {
    // `Declined` matches the first and the second definitions; the first has no error data
    // filter, so the error is merged as `{"error": {...}}`.
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named("Declined", "x")));
    workflow.run(json!({})).await.unwrap();
    let handed = inspected(&workflow);
    assert_eq!(handed["error"]["name"], json!("Declined"));
    assert_eq!(handed.get("name"), None);
}

#[tokio::test]
async fn a_merge_conflict_is_an_error_on_error_can_handle() {
    let workflow = OnErrorWorkflow::new(
        Script::new()
            .ok("work", 0, first_step())
            .ok("work", 0, json!("not an object"))
            .ok("inspect", 0, json!("seen")),
    );
    workflow.run(json!({"x": 1})).await.unwrap();
    assert_eq!(
        inspected(&workflow),
        json!({
            "x": 1,
            "result": {"first": "done"},
            "error": {
                "name": "DataError",
                "message": "task `Work`: cannot merge the result of action `second step` into \
                            the task data: at the root the task data holds an object but the \
                            result of action `second step` holds a string, and merging never \
                            replaces a value by one of another kind; add \
                            `actionDataFilter.dataResultsPath` (for example `$.result`) to \
                            write the result at a place of its own instead of merging it",
                "trace": ""
            }
        })
    );
}

#[tokio::test]
async fn error_data_that_cannot_merge_fails_the_run() {
    // `errorDataFilter: $.error.message` selects a string, which cannot merge into an object.
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named("Picky", "picky")));
    let err = workflow.run(json!({"x": 1})).await.unwrap_err();
    assert_eq!(err.task(), "Work");
    assert_eq!(err.error().name, "DataError");
    assert!(
        err.error().message.starts_with(
            "task `Work`: cannot merge the error data into the task data: at the root the task \
             data holds an object but the error data holds a string"
        ),
        "{}",
        err.error().message
    );
    // The error it handled is not lost.
    assert!(
        err.error()
            .message
            .ends_with("(while handling Picky: picky)"),
        "{}",
        err.error().message
    );
    assert!(workflow.functions().calls_of("inspect").is_empty());
}

#[tokio::test]
async fn on_error_can_lead_to_a_terminate_end() {
    let workflow = OnErrorWorkflow::new(second_fails(
        FunctionError::named("Odd", "odd").with_trace("line 1\nline 2"),
    ));
    let state = workflow.start(json!({})).unwrap();
    let state = workflow.step(state).await.unwrap();
    assert_eq!(state.task_name(), Some("Traced"));
    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        OnErrorState::Terminated {
            output: json!({
                "result": {"first": "done"},
                "error": {"name": "Odd", "message": "odd", "trace": "line 1\nline 2"},
                "traced": true
            })
        }
    );
}

#[tokio::test]
async fn an_error_no_on_error_matches_fails_the_run_with_the_task_error_and_data() {
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named(
        "Other",
        "nobody expects this",
    )));
    let err = workflow.run(json!({"x": 1})).await.unwrap_err();
    assert_eq!(err.workflow(), "on-error");
    assert_eq!(err.task(), "Work");
    assert_eq!(
        err.error(),
        &swf_runtime::ErrorObject::new("Other", "nobody expects this")
    );
    // The data the instance had: the first step's result, without the error merged in.
    assert_eq!(err.data(), &json!({"x": 1, "result": {"first": "done"}}));
    assert_eq!(
        err.to_string(),
        "workflow `on-error` failed in task `Work`: Other: nobody expects this"
    );
}

#[tokio::test]
async fn a_failing_first_action_keeps_the_task_input_as_data() {
    let workflow = OnErrorWorkflow::new(Script::new().err(
        "work",
        0,
        FunctionError::named("Other", "at once"),
    ));
    let err = workflow.run(json!({"x": 2})).await.unwrap_err();
    assert_eq!(err.data(), &json!({"x": 2}));
    assert_eq!(workflow.functions().calls_of("work").len(), 1);
}

#[tokio::test]
async fn an_error_data_filter_that_selects_nothing_merges_the_whole_error() {
    let workflow = OnErrorWorkflow::new(second_fails(FunctionError::named("Unselected", "u")));
    workflow.run(json!({"x": 1})).await.unwrap();
    assert_eq!(
        inspected(&workflow),
        json!({
            "x": 1,
            "result": {"first": "done"},
            "error": {"name": "Unselected", "message": "u", "trace": ""}
        })
    );
}
