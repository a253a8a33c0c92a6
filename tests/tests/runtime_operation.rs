//! Runtime semantics of the task types compiled today (operation, inject, delay), the ends, the
//! workflow input, and step-by-step execution with the state saved as JSON between steps.
//!
//! Every function is scripted (`Script`): it records its arguments and the virtual time of the
//! call, waits a scripted time and returns a scripted result, so that each test can assert the
//! exact data, the exact errors and the exact elapsed time.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use swf_runtime::{
    Clock, FunctionError, SystemClock, Timestamp, Value, WorkflowError, json, serde_json,
};
use tokio::time::Instant;

mod seq {
    swf_runtime::workflow!("workflows/runtime/sequential.sw.yaml");
}
mod par {
    swf_runtime::workflow!("workflows/runtime/parallel.sw.yaml");
}
mod inject {
    swf_runtime::workflow!("workflows/runtime/inject.sw.yaml");
}
mod delay {
    swf_runtime::workflow!("workflows/runtime/delay.sw.yaml");
}
mod ends {
    swf_runtime::workflow!("workflows/runtime/ends.sw.yaml");
}
mod durable {
    swf_runtime::workflow!("workflows/runtime/durable.sw.yaml");
}
mod guards {
    swf_runtime::workflow!("workflows/runtime/guards.sw.yaml");
}

use durable::{DurableState, DurableWorkflow};
use ends::{EndsState, EndsWorkflow};

// ---------------------------------------------------------------------------------------------
// Scripted functions

/// What one call of a scripted function does: wait `after`, then return `result`.
#[derive(Clone)]
struct Reply {
    after: Duration,
    result: Result<Value, FunctionError>,
}

/// One recorded call: which function, its arguments, and when (virtual time since the script
/// was made).
#[derive(Debug, Clone, PartialEq)]
struct Call {
    function: &'static str,
    args: Value,
    at: Duration,
}

/// Functions that answer from a script. Each function has a queue of replies; the last one
/// repeats forever.
struct Script {
    epoch: Instant,
    replies: Mutex<HashMap<&'static str, VecDeque<Reply>>>,
    calls: Mutex<Vec<Call>>,
}

impl Script {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            replies: Mutex::new(HashMap::new()),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn ok(self, function: &'static str, after_secs: u64, value: Value) -> Self {
        self.push(function, after_secs, Ok(value))
    }

    fn err(self, function: &'static str, after_secs: u64, error: FunctionError) -> Self {
        self.push(function, after_secs, Err(error))
    }

    fn push(
        self,
        function: &'static str,
        after_secs: u64,
        result: Result<Value, FunctionError>,
    ) -> Self {
        self.replies
            .lock()
            .unwrap()
            .entry(function)
            .or_default()
            .push_back(Reply {
                after: Duration::from_secs(after_secs),
                result,
            });
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
        reply.result
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

fn call(function: &'static str, args: Value, at_secs: u64) -> Call {
    Call {
        function,
        args,
        at: Duration::from_secs(at_secs),
    }
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

impl seq::SequentialFunctions for Script {
    async fn first(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("first", args).await
    }
    async fn second(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("second", args).await
    }
}

impl par::ParallelActionsFunctions for Script {
    async fn slow(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("slow", args).await
    }
    async fn fast(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("fast", args).await
    }
}

impl durable::DurableFunctions for Script {
    async fn fetch(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("fetch", args).await
    }
    async fn approve(&self, args: Value) -> Result<Value, FunctionError> {
        self.call("approve", args).await
    }
}

/// Nothing to call: workflows without functions still need an implementation of their trait.
struct NoFunctions;

impl inject::InjectFunctions for NoFunctions {}
impl delay::DelayFunctions for NoFunctions {}
impl ends::EndsFunctions for NoFunctions {}
impl guards::GuardsFunctions for NoFunctions {}

// ---------------------------------------------------------------------------------------------
// Operation tasks

#[tokio::test(start_paused = true)]
async fn sequential_actions_run_one_after_the_other_and_see_earlier_results() {
    let script = Script::new().ok("first", 10, json!({"stock": 3})).ok(
        "second",
        5,
        json!({"shipped": true}),
    );
    let workflow = seq::SequentialWorkflow::new(script);
    let started = Instant::now();
    let output = workflow.run(json!({"order": {"id": 7}})).await.unwrap();
    assert_eq!(started.elapsed(), secs(15));
    assert_eq!(
        output,
        json!({"order": {"id": 7}, "stock": 3, "shipped": true})
    );
    assert_eq!(
        workflow.functions().calls(),
        [
            // `parameters` with a `$` path.
            call("first", json!({"order": {"id": 7}}), 0),
            // No `parameters`: the function receives the action's input, the task data with the
            // first action's result already merged.
            call("second", json!({"order": {"id": 7}, "stock": 3}), 10),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn parallel_actions_run_concurrently() {
    let script = Script::new()
        .ok("slow", 10, json!({"slow": 1}))
        .ok("fast", 10, json!({"fast": 2}))
        .ok("fast", 0, json!({"fast": 2}));
    let workflow = par::ParallelActionsWorkflow::new(script);
    let started = Instant::now();
    let output = workflow.run(json!({"x": 0})).await.unwrap();
    // Two actions of 10 s each take 10 s, not 20 s (the last task's call takes no time).
    assert_eq!(started.elapsed(), secs(10));
    assert_eq!(
        output,
        json!({"x": 0, "slow": 1, "fast": 2, "after": {"fast": 2}})
    );
    let calls = workflow.functions().calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls[2],
        call("fast", json!({"x": 0, "slow": 1, "fast": 2}), 10)
    );
    // Both parallel calls start at once, with the same task data.
    let mut parallel = calls[..2].to_vec();
    parallel.sort_by_key(|c| c.function);
    assert_eq!(
        parallel,
        [
            call("fast", json!({"x": 0}), 0),
            call("slow", json!({"x": 0}), 0)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn parallel_results_merge_in_document_order_not_completion_order() {
    // `fast` finishes first but is second in the document, so its value wins the merge.
    let script = Script::new()
        .ok("slow", 10, json!({"winner": "slow", "tags": ["s"]}))
        .ok("fast", 4, json!({"winner": "fast", "tags": ["f"]}))
        .ok("fast", 0, json!("ignored"));
    let workflow = par::ParallelActionsWorkflow::new(script);
    let started = Instant::now();
    let output = workflow.run(json!({"tags": ["input"]})).await.unwrap();
    assert_eq!(started.elapsed(), secs(10));
    assert_eq!(
        output,
        json!({"tags": ["input", "s", "f"], "winner": "fast", "after": "ignored"})
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_parallel_action_fails_the_task() {
    let script = Script::new()
        .err("slow", 3, FunctionError::new("slow is down"))
        .ok("fast", 1, json!({"fast": true}));
    let workflow = par::ParallelActionsWorkflow::new(script);
    let err = workflow.run(json!({"x": 1})).await.unwrap_err();
    assert_eq!(err.workflow(), "parallel-actions");
    assert_eq!(err.task(), "Fan");
    assert_eq!(err.error().name, "FunctionExecutionError");
    assert_eq!(err.error().message, "slow is down");
    assert_eq!(err.error().trace, "");
    // The task never reached `After`.
    assert_eq!(workflow.functions().calls().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Inject

#[tokio::test]
async fn inject_merges_its_data_into_the_input() {
    let workflow = inject::InjectWorkflow::new(NoFunctions);
    let output = workflow
        .run(json!({
            "customer": {"name": "Ann", "address": {"street": "1 rue Neuve"}},
            "tags": ["a", "b"],
            "count": 1,
            "note": "keep me?"
        }))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({
            // Objects merge recursively.
            "customer": {
                "name": "Ann",
                "tier": "gold",
                "address": {"street": "1 rue Neuve", "city": "Lyon"}
            },
            // Arrays concatenate, keeping unique elements.
            "tags": ["a", "b", "c"],
            // Scalars: the incoming one wins, an incoming null included.
            "count": 2,
            "note": null
        })
    );
}

#[tokio::test]
async fn inject_into_empty_input_gives_its_data() {
    let workflow = inject::InjectWorkflow::new(NoFunctions);
    let output = workflow.run(json!({})).await.unwrap();
    assert_eq!(
        output,
        json!({
            "customer": {"tier": "gold", "address": {"city": "Lyon"}},
            "tags": ["b", "c"],
            "count": 2,
            "note": null
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Delay

#[tokio::test(start_paused = true)]
async fn delays_wait_exactly_their_duration() {
    let workflow = delay::DelayWorkflow::new(NoFunctions);
    let started = Instant::now();
    let state = workflow
        .start(json!({"keep": {"a": 1}, "drop": 2}))
        .unwrap();
    assert_eq!(state.task_name(), Some("Short"));
    assert_eq!(started.elapsed(), Duration::ZERO);

    let state = workflow.step(state).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(90_500)); // PT1M30.5S
    assert_eq!(state.task_name(), Some("Long"));

    let state = workflow.step(state).await.unwrap();
    // P1DT2H: a day counts as 24 hours.
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(90_500) + secs(26 * 3600)
    );
    assert_eq!(state.task_name(), Some("Done"));
    assert_eq!(
        state,
        delay::DelayState::Done {
            data: json!({"a": 1})
        }
    );

    let state = workflow.step(state).await.unwrap();
    assert_eq!(
        state,
        delay::DelayState::Completed {
            output: json!({"a": 1, "done": true})
        }
    );
}

#[tokio::test(start_paused = true)]
async fn run_waits_for_every_delay() {
    let workflow = delay::DelayWorkflow::new(NoFunctions);
    let started = Instant::now();
    let output = workflow.run(json!({"keep": {"b": 2}})).await.unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(90_500 + 26 * 3600 * 1000)
    );
    assert_eq!(output, json!({"b": 2, "done": true}));
}

// ---------------------------------------------------------------------------------------------
// Ends

async fn run_by_steps(workflow: &EndsWorkflow<NoFunctions>, input: Value) -> Vec<EndsState> {
    let mut states = vec![workflow.start(input).unwrap()];
    while states.last().unwrap().output().is_none() {
        let next = workflow.step(states.last().unwrap().clone()).await.unwrap();
        states.push(next);
    }
    states
}

#[tokio::test]
async fn end_kind_default_completes() {
    let workflow = EndsWorkflow::new(NoFunctions);
    let states = run_by_steps(&workflow, json!({"how": "normally"})).await;
    let names: Vec<_> = states.iter().map(EndsState::task_name).collect();
    assert_eq!(names, [Some("Begin"), Some("Choose"), Some("Finish"), None]);
    let expected = json!({"how": "normally", "began": true, "ended": "default"});
    assert_eq!(
        states.last().unwrap(),
        &EndsState::Completed {
            output: expected.clone()
        }
    );
    assert_eq!(states.last().unwrap().output(), Some(&expected));
    assert_eq!(
        workflow.run(json!({"how": "normally"})).await.unwrap(),
        expected
    );
}

#[tokio::test]
async fn end_kind_terminate_terminates() {
    let workflow = EndsWorkflow::new(NoFunctions);
    let states = run_by_steps(&workflow, json!({"how": "terminate"})).await;
    let names: Vec<_> = states.iter().map(EndsState::task_name).collect();
    assert_eq!(names, [Some("Begin"), Some("Choose"), Some("Stop"), None]);
    let expected = json!({"how": "terminate", "began": true, "ended": "terminate"});
    assert_eq!(
        states.last().unwrap(),
        &EndsState::Terminated {
            output: expected.clone()
        }
    );
    assert_eq!(states.last().unwrap().output(), Some(&expected));
    // `run` returns the output of a terminated instance like that of a completed one.
    assert_eq!(
        workflow.run(json!({"how": "terminate"})).await.unwrap(),
        expected
    );
}

#[tokio::test]
async fn end_true_means_default() {
    let workflow = EndsWorkflow::new(NoFunctions);
    let states = run_by_steps(&workflow, json!({"how": "short"})).await;
    assert_eq!(
        states.last().unwrap(),
        &EndsState::Completed {
            output: json!({"how": "short", "began": true, "ended": "short"})
        }
    );
}

#[tokio::test]
async fn stepping_an_ended_instance_changes_nothing() {
    let workflow = EndsWorkflow::new(NoFunctions);
    for ended in [
        EndsState::Completed {
            output: json!({"a": 1}),
        },
        EndsState::Terminated { output: json!([1]) },
    ] {
        assert_eq!(workflow.step(ended.clone()).await.unwrap(), ended);
    }
}

// ---------------------------------------------------------------------------------------------
// Workflow input

#[tokio::test]
async fn null_input_means_an_empty_object() {
    let workflow = EndsWorkflow::new(NoFunctions);
    assert_eq!(
        workflow.start(Value::Null).unwrap(),
        EndsState::Begin { data: json!({}) }
    );
    assert_eq!(
        workflow.run(Value::Null).await.unwrap(),
        json!({"began": true, "ended": "default"})
    );
}

fn assert_input_refused(err: &WorkflowError, given: &Value, kind: &str) {
    assert_eq!(err.workflow(), "ends");
    assert_eq!(err.task(), "Begin");
    assert_eq!(err.error().name, "InvalidInputError");
    assert_eq!(err.status(), swf_runtime::ExecStatus::Invalid);
    assert_eq!(
        err.error().message,
        format!("the input of workflow `ends` must be a JSON object, but {kind} was given")
    );
    assert_eq!(err.data(), given);
}

#[tokio::test]
async fn input_that_is_not_an_object_is_refused_as_invalid() {
    let workflow = EndsWorkflow::new(NoFunctions);
    let array = json!([1, 2]);
    assert_input_refused(
        &workflow.run(array.clone()).await.unwrap_err(),
        &array,
        "an array",
    );
    assert_input_refused(
        &workflow.start(array.clone()).unwrap_err(),
        &array,
        "an array",
    );
    let text = json!("hello");
    assert_input_refused(
        &workflow.run(text.clone()).await.unwrap_err(),
        &text,
        "a string",
    );
}

// ---------------------------------------------------------------------------------------------
// Step by step, with the state saved as JSON between steps

fn durable_script(price: u64) -> Script {
    Script::new()
        .err("fetch", 2, FunctionError::named("Busy", "try later"))
        .err("fetch", 2, FunctionError::named("Busy", "try later"))
        .ok("fetch", 2, json!({"price": price}))
        .ok("approve", 1, json!({"by": "boss"}))
}

/// Runs an instance one step at a time, saving the state as JSON text and loading it back
/// between every two steps; returns every saved state and the elapsed time after each step.
async fn run_saved(
    workflow: &DurableWorkflow<Script>,
    input: Value,
) -> (Vec<Value>, Vec<Duration>) {
    let started = Instant::now();
    let mut saved = serde_json::to_string(&workflow.start(input).unwrap()).unwrap();
    let mut states = vec![serde_json::from_str::<Value>(&saved).unwrap()];
    let mut times = vec![started.elapsed()];
    loop {
        let state: DurableState = serde_json::from_str(&saved).unwrap();
        if state.output().is_some() {
            return (states, times);
        }
        let next = workflow.step(state).await.unwrap();
        saved = serde_json::to_string(&next).unwrap();
        states.push(serde_json::from_str(&saved).unwrap());
        times.push(started.elapsed());
    }
}

/// The instant `seconds` after `origin`, as a saved state writes it.
fn saved_at(origin: Timestamp, seconds: u64) -> Value {
    serde_json::to_value(origin.checked_add(secs(seconds)).unwrap()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn saved_states_between_steps_give_the_same_run() {
    let reference = DurableWorkflow::new(durable_script(150));
    let started = Instant::now();
    let output = reference.run(json!({"id": 5})).await.unwrap();
    let run_time = started.elapsed();
    // 2 s failing, 10 s wait, 2 s failing, 15 s wait, 2 s, 60 s delay, 1 s approval.
    assert_eq!(run_time, secs(92));
    let expected = json!({"id": 5, "item": {"price": 150}, "approval": {"by": "boss"}});
    assert_eq!(output, expected);

    let workflow = DurableWorkflow::new(durable_script(150));
    let origin = SystemClock.now();
    let (states, times) = run_saved(&workflow, json!({"id": 5})).await;
    // Every wait is saved as the instant it ends, not as a length of time.
    assert_eq!(
        states,
        [
            json!({"Fetch": {"data": {"id": 5}, "retry": {}}}),
            json!({"Fetch": {"data": {"id": 5}, "retry": {"attempts": [1], "not_before": saved_at(origin, 12)}}}),
            json!({"Fetch": {"data": {"id": 5}, "retry": {"attempts": [2], "not_before": saved_at(origin, 29)}}}),
            json!({"Wait": {"data": {"id": 5, "item": {"price": 150}}, "until": saved_at(origin, 91)}}),
            json!({"Route": {"data": {"id": 5, "item": {"price": 150}}}}),
            json!({"Expensive": {"data": {"id": 5, "item": {"price": 150}}}}),
            json!({"terminated": {"output": expected}}),
        ]
    );
    assert_eq!(
        times,
        [
            secs(0),
            secs(2),
            secs(14),
            secs(31),
            secs(91),
            secs(91),
            secs(92)
        ]
    );
    assert_eq!(workflow.functions().calls(), reference.functions().calls());
    assert_eq!(
        reference.functions().calls(),
        [
            call("fetch", json!({"id": 5}), 0),
            call("fetch", json!({"id": 5}), 12),
            call("fetch", json!({"id": 5}), 29),
            call("approve", json!({"price": 150}), 91),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn saved_states_reach_the_default_end_too() {
    let workflow = DurableWorkflow::new(durable_script(40));
    let (states, times) = run_saved(&workflow, json!({"id": 6})).await;
    assert_eq!(
        states.last().unwrap(),
        &json!({"completed": {"output": {"id": 6, "item": {"price": 40}, "approval": "auto"}}})
    );
    assert_eq!(times.last().unwrap(), &secs(91));
}

/// The state saved while waiting before the third and last retry of `Fetch`, whose wait ends
/// at `not_before`.
fn waiting_for_the_last_retry(not_before: Value) -> DurableState {
    serde_json::from_value(json!(
        {"Fetch": {"data": {"id": 9}, "retry": {"attempts": [3], "not_before": not_before}}}
    ))
    .unwrap()
}

fn still_busy() -> DurableWorkflow<Script> {
    DurableWorkflow::new(
        Script::new()
            .err("fetch", 2, FunctionError::named("Busy", "still busy"))
            .ok("approve", 1, json!({})),
    )
}

#[tokio::test(start_paused = true)]
async fn a_saved_retry_wait_is_honoured_by_a_new_machine() {
    // As if the process restarted 20 s before the wait ends.
    let state = waiting_for_the_last_retry(saved_at(SystemClock.now(), 20));
    let workflow = still_busy();
    let started = Instant::now();
    let err = workflow.step(state).await.unwrap_err();
    assert_eq!(started.elapsed(), secs(22));
    assert_eq!(
        workflow.functions().calls(),
        [call("fetch", json!({"id": 9}), 20)]
    );
    // That was the third retry of `maxAttempts: 3`, so the error is no longer retried.
    assert_eq!(err.task(), "Fetch");
    assert_eq!(err.error().name, "Busy");
    assert_eq!(err.error().message, "still busy");
    assert_eq!(err.data(), &json!({"id": 9}));
}

#[tokio::test(start_paused = true)]
async fn a_retry_wait_that_ended_while_no_process_ran_resumes_at_once() {
    // The wait ended a minute ago (the process was down): the retry runs now, not a full
    // interval later.
    let origin = SystemClock.now();
    let ended = serde_json::to_value(origin.checked_sub(secs(60)).unwrap()).unwrap();
    let workflow = still_busy();
    let started = Instant::now();
    let err = workflow
        .step(waiting_for_the_last_retry(ended))
        .await
        .unwrap_err();
    assert_eq!(
        workflow.functions().calls(),
        [call("fetch", json!({"id": 9}), 0)]
    );
    assert_eq!(started.elapsed(), secs(2));
    assert_eq!(err.error().name, "Busy");
}

#[tokio::test(start_paused = true)]
async fn a_saved_state_without_retry_progress_starts_afresh() {
    // `RetryProgress` fields default, so a state saved without them still loads.
    let state: DurableState =
        serde_json::from_str(r#"{"Fetch": {"data": {"id": 1}, "retry": {}}}"#).unwrap();
    let workflow = DurableWorkflow::new(Script::new().ok("fetch", 3, json!({"price": 1})));
    let started = Instant::now();
    let next = workflow.step(state).await.unwrap();
    assert_eq!(started.elapsed(), secs(3));
    // The delay's end is saved, counted from when it began (by the system clock).
    assert_eq!(
        next,
        DurableState::Wait {
            data: json!({"id": 1, "item": {"price": 1}}),
            until: SystemClock.now().checked_add(secs(60)).unwrap(),
        }
    );
}

// ---------------------------------------------------------------------------------------------
// onError on inject, delay and switch tasks; guarded switch transitions

#[tokio::test(start_paused = true)]
async fn a_guarded_switch_transition_proceeds_when_its_condition_holds() {
    let workflow = guards::GuardsWorkflow::new(NoFunctions);
    let started = Instant::now();
    let output = workflow.run(json!({"vip": true})).await.unwrap();
    assert_eq!(started.elapsed(), secs(1));
    assert_eq!(
        output,
        json!({"vip": true, "customer": {"tier": "gold"}, "gold": true})
    );
}

#[tokio::test(start_paused = true)]
async fn a_guarded_switch_transition_refused_halts_the_run_despite_on_error() {
    let workflow = guards::GuardsWorkflow::new(NoFunctions);
    let err = workflow.run(json!({"vip": false})).await.unwrap_err();
    assert_eq!(err.task(), "Route");
    assert_eq!(err.error().name, "TransitionConditionError");
    assert_eq!(
        err.error().message,
        "the condition `$.vip eq true` of the transition from `Route` to `Gold` is false"
    );
    assert_eq!(
        err.data(),
        &json!({"vip": false, "customer": {"tier": "gold"}})
    );
}

#[tokio::test(start_paused = true)]
async fn an_inject_merge_conflict_is_handled_by_on_error() {
    let workflow = guards::GuardsWorkflow::new(NoFunctions);
    let output = workflow
        .run(json!({"customer": "bronze", "vip": 1}))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({
            "customer": "bronze",
            "vip": 1,
            "name": "DataError",
            "message": "task `Seed`: cannot merge the inject data into the task data: at \
                        `/customer` the task data holds a string but the inject data holds an \
                        object, and merging never replaces a value by one of another kind; make \
                        both hold the same kind of value there, or use a data filter to select \
                        the part that fits",
            "trace": "",
            // `$.customer.tier` selects nothing in a string: the default transition.
            "other": true
        })
    );
}

#[tokio::test(start_paused = true)]
async fn a_guarded_default_transition_refused_halts_the_run() {
    let workflow = guards::GuardsWorkflow::new(NoFunctions);
    let err = workflow
        .run(json!({"customer": "bronze"}))
        .await
        .unwrap_err();
    assert_eq!(err.task(), "Route");
    assert_eq!(err.error().name, "TransitionConditionError");
    assert_eq!(
        err.error().message,
        "the condition `$.vip` of the transition from `Route` to `Other` is false"
    );
}
