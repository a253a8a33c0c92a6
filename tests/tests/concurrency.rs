//! Concurrency, end to end: parallel branches (completion types, merging in branch order,
//! cancelling the losers, failures handled by the task's retry and onError, branch and state
//! timeouts), foreach (collections, parameters, outputs in element order, `max`, `timeDelay`, a
//! nested scope), `end: terminate` inside a branch, an iteration and a sub-flow, sub-flows that
//! are waited for or detached, and the four forms of a scheduled start.
//!
//! Every function is scripted by its arguments (`who`, `secs`, `failTimes`, `errorName`,
//! `result`): it records when it starts, sleeps `secs` of virtual time, records when it ends and
//! answers `result` (else its arguments), so that each test asserts exact data, calls and times.
//! A cancelled call records its start but never its end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swf_runtime::{
    FunctionError, Io, ManualClock, ScopeState, Timestamp, Value, WorkflowError, json,
};
use tokio::time::Instant;

mod branches {
    swf_runtime::workflow!("workflows/concurrency/branches.sw.yaml");
}
mod completion {
    swf_runtime::workflow!("workflows/concurrency/completion.sw.yaml");
}
mod failing {
    swf_runtime::workflow!("workflows/concurrency/failing.sw.yaml");
}
mod timeouts {
    swf_runtime::workflow!("workflows/concurrency/timeouts.sw.yaml");
}
mod within {
    swf_runtime::workflow!("workflows/concurrency/within.sw.yaml");
}
mod fan_out {
    swf_runtime::workflow!("workflows/events/parallel.sw.yaml");
}
mod terminate {
    swf_runtime::workflow!("workflows/events/terminate.sw.yaml");
}
mod terminate_late {
    swf_runtime::workflow!("workflows/concurrency/terminate-late.sw.yaml");
}
mod orders {
    swf_runtime::workflow!("workflows/events/orders.sw.yaml");
}
mod foreach {
    swf_runtime::workflow!("workflows/concurrency/foreach.sw.yaml");
}
mod foreach_max {
    swf_runtime::workflow!("workflows/concurrency/foreach-max.sw.yaml");
}
mod foreach_shared {
    swf_runtime::workflow!("workflows/concurrency/foreach-shared.sw.yaml");
}
mod parallel_shared {
    swf_runtime::workflow!("workflows/concurrency/parallel-shared.sw.yaml");
}
mod foreach_bench {
    swf_runtime::workflow!("benches/for_each.sw.yaml");
}
mod foreach_delay {
    swf_runtime::workflow!("workflows/concurrency/foreach-delay.sw.yaml");
}
mod foreach_terminate {
    swf_runtime::workflow!("workflows/concurrency/foreach-terminate.sw.yaml");
}
mod waiting_branches {
    swf_runtime::workflow!("workflows/concurrency/waiting-branches.sw.yaml");
}
mod nested {
    swf_runtime::workflow!(
        "workflows/concurrency/nested.sw.yaml",
        "workflows/concurrency/quit-child.sw.yaml"
    );
}
mod branch_schedule {
    swf_runtime::workflow!("workflows/concurrency/branch-schedule.sw.yaml");
}
mod flows {
    swf_runtime::workflow!(
        "workflows/events/parent.sw.yaml",
        "workflows/events/child.sw.yaml"
    );
}
mod quitting {
    swf_runtime::workflow!(
        "workflows/concurrency/quit-parent.sw.yaml",
        "workflows/concurrency/quit-child.sw.yaml"
    );
}
mod start_end {
    swf_runtime::workflow!("workflows/concurrency/scheduled-start-end.sw.yaml");
}
mod start_duration {
    swf_runtime::workflow!("workflows/concurrency/scheduled-start-duration.sw.yaml");
}
mod duration_end {
    swf_runtime::workflow!("workflows/concurrency/scheduled-duration-end.sw.yaml");
}
mod duration {
    swf_runtime::workflow!("workflows/concurrency/scheduled-duration.sw.yaml");
}
mod scheduled_caller {
    swf_runtime::workflow!(
        "workflows/concurrency/scheduled-caller.sw.yaml",
        "workflows/concurrency/scheduled-start-end.sw.yaml"
    );
}

// ---------------------------------------------------------------------------------------------
// Scripted functions

/// One call of a function, when it started.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    function: &'static str,
    args: Value,
    at: Duration,
}

struct Records {
    epoch: Instant,
    /// Every call, when it started.
    calls: Mutex<Vec<Call>>,
    /// `who` and time of every call that ran to its end (successfully or not).
    ends: Mutex<Vec<(String, Duration)>>,
}

/// The functions of every workflow here. Cloning shares the records (detached sub-flows need
/// functions that are `Clone + 'static`).
#[derive(Clone)]
struct Lab(Arc<Records>);

impl Lab {
    fn new() -> Self {
        Lab(Arc::new(Records {
            epoch: Instant::now(),
            calls: Mutex::new(Vec::new()),
            ends: Mutex::new(Vec::new()),
        }))
    }

    /// Records the call, sleeps `args.secs`, records its end, then fails while `who` has been
    /// called no more than `args.failTimes` times (with `args.errorName`), else answers
    /// `args.result`, or the arguments themselves without one.
    async fn perform(&self, function: &'static str, args: Value) -> Result<Value, FunctionError> {
        let who = who(function, &args);
        let earlier = {
            let mut calls = self.0.calls.lock().unwrap();
            let earlier = calls.iter().filter(|call| who_of(call) == who).count() as u64;
            calls.push(Call {
                function,
                args: args.clone(),
                at: self.0.epoch.elapsed(),
            });
            earlier
        };
        let secs = args.get("secs").and_then(Value::as_u64).unwrap_or(0);
        tokio::time::sleep(Duration::from_secs(secs)).await;
        self.0
            .ends
            .lock()
            .unwrap()
            .push((who.clone(), self.0.epoch.elapsed()));
        let fail_times = args.get("failTimes").and_then(Value::as_u64).unwrap_or(0);
        if earlier < fail_times {
            let name = args
                .get("errorName")
                .and_then(Value::as_str)
                .unwrap_or("Boom");
            return Err(FunctionError::named(name, format!("{who} failed")));
        }
        Ok(args.get("result").cloned().unwrap_or(args))
    }

    /// Records a call that takes `secs` and answers `result`, whatever its arguments.
    async fn fixed(
        &self,
        function: &'static str,
        args: Value,
        secs: u64,
        result: Value,
    ) -> Result<Value, FunctionError> {
        self.0.calls.lock().unwrap().push(Call {
            function,
            args,
            at: self.0.epoch.elapsed(),
        });
        tokio::time::sleep(Duration::from_secs(secs)).await;
        self.0
            .ends
            .lock()
            .unwrap()
            .push((function.to_owned(), self.0.epoch.elapsed()));
        Ok(result)
    }

    fn calls(&self) -> Vec<Call> {
        self.0.calls.lock().unwrap().clone()
    }

    /// `who` and start time of every call, by time then `who`.
    fn starts(&self) -> Vec<(String, Duration)> {
        let mut starts: Vec<_> = self
            .calls()
            .iter()
            .map(|call| (who_of(call), call.at))
            .collect();
        starts.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        starts
    }

    /// `who` and end time of every call that ran to its end, by time then `who`.
    fn ends(&self) -> Vec<(String, Duration)> {
        let mut ends = self.0.ends.lock().unwrap().clone();
        ends.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        ends
    }
}

fn who(function: &str, args: &Value) -> String {
    args.get("who")
        .and_then(Value::as_str)
        .unwrap_or(function)
        .to_owned()
}

fn who_of(call: &Call) -> String {
    who(call.function, &call.args)
}

/// `(who, seconds)` pairs, as [`Lab::starts`] and [`Lab::ends`] return them.
fn log(entries: &[(&str, u64)]) -> Vec<(String, Duration)> {
    entries
        .iter()
        .map(|(who, at)| ((*who).to_owned(), secs(*at)))
        .collect()
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Lets a long virtual time pass, so that a call that was not cancelled would have ended.
async fn settle() {
    tokio::time::sleep(secs(1_000)).await;
}

/// Implements functions traits whose every method is [`Lab::perform`].
macro_rules! scripted {
    ($($functions:path => [$($method:ident),*];)*) => {$(
        impl $functions for Lab {
            $(
                async fn $method(&self, args: Value) -> Result<Value, FunctionError> {
                    self.perform(stringify!($method), args).await
                }
            )*
        }
    )*};
}

scripted! {
    branches::BranchesFunctions => [work];
    completion::CompletionFunctions => [work];
    failing::FailingFunctions => [work];
    timeouts::ParallelTimeoutsFunctions => [work];
    within::WithinLimitsFunctions => [work];
    fan_out::FanOutFunctions => [quote];
    terminate_late::TerminateLateFunctions => [work];
    orders::ConfirmOrdersFunctions => [send_confirmation_function];
    foreach::ForeachFunctions => [work];
    foreach_max::ForeachMaxFunctions => [work];
    foreach_delay::ForeachDelayFunctions => [work];
    foreach_shared::ForeachSharedFunctions => [work];
    parallel_shared::ParallelSharedFunctions => [work];
    foreach_terminate::ForeachTerminateFunctions => [work];
    quitting::QuitParentFunctions => [work];
    quitting::QuitChildFunctions => [chore];
    nested::NestedFunctions => [work];
    nested::QuitChildFunctions => [chore];
    branch_schedule::BranchScheduleFunctions => [work];
    start_end::ScheduledStartEndFunctions => [work];
    start_duration::ScheduledStartDurationFunctions => [work];
    duration_end::ScheduledDurationEndFunctions => [work];
    duration::ScheduledDurationFunctions => [work];
    scheduled_caller::ScheduledStartEndFunctions => [work];
}

impl scheduled_caller::ScheduledCallerFunctions for Lab {}
impl waiting_branches::WaitingBranchesFunctions for Lab {}

impl terminate::TerminateRaceFunctions for Lab {
    /// Works for a minute.
    async fn slow(&self, args: Value) -> Result<Value, FunctionError> {
        self.fixed("slow", args, 60, json!({"slow": "done"})).await
    }
}

impl flows::ChildFunctions for Lab {
    /// Takes 5 s to double `n`.
    async fn double(&self, args: Value) -> Result<Value, FunctionError> {
        let n = args.get("n").and_then(Value::as_i64).unwrap_or(0);
        self.fixed("double", args, 5, json!(n * 2)).await
    }
}

impl flows::ParentFunctions for Lab {
    async fn audit(&self, args: Value) -> Result<Value, FunctionError> {
        self.fixed("audit", args, 0, json!("audited")).await
    }
}

fn error_of(result: Result<Value, WorkflowError>) -> WorkflowError {
    match result {
        Ok(output) => panic!("expected the run to fail, it output {output}"),
        Err(error) => error,
    }
}

// ---------------------------------------------------------------------------------------------
// Parallel

#[tokio::test(start_paused = true)]
async fn branches_get_a_copy_of_the_data_and_merge_in_branch_order() {
    let lab = Lab::new();
    let started = Instant::now();
    let output = branches::BranchesWorkflow::new(lab.clone())
        .run(json!({"marks": ["x"], "n": 1}))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(3));
    // Branch `slowest` (3 s) ran its two tasks, `fastest` (1 s) one, `middle` (2 s) started at
    // its declared start task and transitioned to the one listed before it. Each saw only the
    // task data (`sawA`, `sawB`: null, `sawMarks` without the others' marks); their outputs
    // merged in branch order, so the last branch's `winner` wins and the marks are a, b, c
    // although the branches finished b, c, a.
    let from_a = json!({"who": "a", "secs": 3, "sawB": null, "sawMarks": ["x", "a"]});
    assert_eq!(
        output,
        json!({
            "marks": ["x", "a", "b", "c"],
            "n": 1,
            "winner": "c",
            "fromA": from_a,
            "fromB": true,
            "fromC": true,
            "after": {"who": "after", "winner": "c", "marks": ["x", "a", "b", "c"]},
        })
    );
    let calls = lab.calls();
    let b = calls.iter().find(|call| who_of(call) == "b").unwrap();
    assert_eq!(
        b.args,
        json!({
            "who": "b", "secs": 1, "sawA": null, "sawMarks": ["x"],
            "result": {"marks": ["b"], "winner": "b", "fromB": true},
        })
    );
    assert_eq!(
        lab.starts(),
        log(&[("a", 0), ("b", 0), ("c", 0), ("after", 3)])
    );
    assert_eq!(
        lab.ends(),
        log(&[("b", 1), ("c", 2), ("a", 3), ("after", 3)])
    );
}

/// Runs the completion workflow's parallel task for `mode`: its output, how long it took, and
/// the functions' records once every branch that was not cancelled had time to end.
async fn complete(mode: &str) -> (Value, Duration, Lab) {
    let lab = Lab::new();
    let started = Instant::now();
    let output = completion::CompletionWorkflow::new(lab.clone())
        .run(json!({"mode": mode}))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    settle().await;
    assert_eq!(
        lab.starts(),
        log(&[("one", 0), ("three", 0), ("two", 0)]),
        "{mode}: every branch starts at once"
    );
    (output, elapsed, lab)
}

#[tokio::test(start_paused = true)]
async fn and_all_of_and_the_default_wait_for_every_branch() {
    for mode in ["and", "allOf", "default"] {
        let (output, elapsed, lab) = complete(mode).await;
        assert_eq!(elapsed, secs(5), "{mode}");
        assert_eq!(
            output,
            json!({
                "mode": mode,
                "done": ["one", "two", "three"],
                "one": mode, "two": mode, "three": mode,
            }),
            "{mode}"
        );
        assert_eq!(
            lab.ends(),
            log(&[("three", 1), ("two", 3), ("one", 5)]),
            "{mode}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn xor_takes_the_first_branch_and_cancels_the_others() {
    let (output, elapsed, lab) = complete("xor").await;
    assert_eq!(elapsed, secs(1));
    assert_eq!(
        output,
        json!({"mode": "xor", "done": ["three"], "three": "xor"})
    );
    // The losers' calls started but never ended, even 1000 s later.
    assert_eq!(lab.ends(), log(&[("three", 1)]));
}

#[tokio::test(start_paused = true)]
async fn n_of_m_and_at_least_take_n_branches_and_merge_them_in_branch_order() {
    for mode in ["n_of_m", "atLeast"] {
        let (output, elapsed, lab) = complete(mode).await;
        assert_eq!(elapsed, secs(3), "{mode}");
        // Branch three finished first, yet branch two's output merges before it.
        assert_eq!(
            output,
            json!({"mode": mode, "done": ["two", "three"], "two": mode, "three": mode}),
            "{mode}"
        );
        assert_eq!(lab.ends(), log(&[("three", 1), ("two", 3)]), "{mode}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_branch_reruns_the_whole_task_then_on_error_takes_over() {
    let lab = Lab::new();
    let started = Instant::now();
    let output = failing::FailingWorkflow::new(lab.clone())
        .run(json!({"round": 1}))
        .await
        .unwrap();
    // Fan: flaky fails at 1 s, cancelling steady; the retry waits 10 s and reruns both branches
    // from the task input (11 s), which end at 12 s and 13 s. Fragile: broken fails at 17 s,
    // cancelling patient; no retry matches and onError goes to Recover.
    assert_eq!(started.elapsed(), secs(17));
    assert_eq!(
        output,
        json!({
            "round": 1,
            "steady": [1],
            "flaky": "ok",
            "error": {"name": "Broken", "message": "broken failed", "trace": ""},
            "recovered": true,
        })
    );
    assert_eq!(
        lab.starts(),
        log(&[
            ("flaky", 0),
            ("steady", 0),
            ("flaky", 11),
            ("steady", 11),
            ("broken", 13),
            ("patient", 13),
        ])
    );
    settle().await;
    assert_eq!(
        lab.ends(),
        log(&[("flaky", 1), ("flaky", 12), ("steady", 13), ("broken", 17)]),
        "the first steady call and patient were cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn branch_and_state_timeouts_raise_timeout_errors_on_time() {
    let lab = Lab::new();
    let started = Instant::now();
    let error = error_of(
        timeouts::ParallelTimeoutsWorkflow::new(lab.clone())
            .run(json!({}))
            .await,
    );
    // BranchLimit: branch 2 (8 s) passes branchExecTimeout PT5S at 5 s; onError goes to
    // StateLimit, whose branches each stay under PT8S but are still running at PT7S (12 s).
    assert_eq!(started.elapsed(), secs(12));
    assert_eq!(error.workflow(), "parallel-timeouts");
    assert_eq!(error.task(), "StateLimit");
    assert_eq!(error.error().name, "TimeoutError");
    assert_eq!(
        error.error().message,
        "parallel task `StateLimit` did not complete within PT7S"
    );
    assert_eq!(
        error.data()["error"],
        json!({
            "name": "TimeoutError",
            "message": "branch 2 of task `BranchLimit` did not complete within PT5S",
            "trace": "",
        })
    );
    assert_eq!(
        lab.starts(),
        log(&[
            ("late", 0),
            ("quick", 0),
            ("short", 5),
            ("step-one", 5),
            ("step-two", 9)
        ])
    );
    settle().await;
    assert_eq!(
        lab.ends(),
        log(&[("quick", 2), ("short", 6), ("step-one", 9)]),
        "late and step-two were cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn a_total_state_timeout_lets_quick_branches_complete_and_stops_slow_ones() {
    let lab = Lab::new();
    let workflow = within::WithinLimitsWorkflow::new(lab.clone());
    let started = Instant::now();
    let output = workflow
        .run(json!({"secs": {"one": 4, "two": 2}}))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(4));
    assert_eq!(
        output,
        json!({"secs": {"one": 4, "two": 2}, "one": "done", "two": "done"})
    );
    // Branch one (7 s) is under branchExecTimeout PT8S but past stateExecTimeout.total PT6S.
    let started = Instant::now();
    let error = error_of(workflow.run(json!({"secs": {"one": 7, "two": 2}})).await);
    assert_eq!(started.elapsed(), secs(6));
    assert_eq!(error.task(), "Bounded");
    assert_eq!(error.error().name, "TimeoutError");
    assert_eq!(
        error.error().message,
        "parallel task `Bounded` did not complete within PT6S"
    );
    settle().await;
    assert_eq!(
        lab.ends(),
        log(&[("two", 2), ("one", 4), ("two", 6)]),
        "the 7 s call was cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn the_fan_out_example_writes_each_result_at_its_path() {
    let lab = Lab::new();
    let output = fan_out::FanOutWorkflow::new(lab.clone())
        .run(json!({"item": "book"}))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({"item": "book", "fast": {"who": "fast"}, "slow": {"who": "slow"}})
    );
    assert_eq!(lab.starts(), log(&[("fast", 0), ("slow", 0)]));
}

#[tokio::test(start_paused = true)]
async fn terminate_in_a_branch_ends_the_instance_at_once() {
    use terminate::{TerminateRaceState, TerminateRaceWorkflow};
    let lab = Lab::new();
    let workflow = TerminateRaceWorkflow::new(lab.clone());
    let started = Instant::now();
    let state = workflow.start(json!({"keep": 1})).unwrap();
    assert_eq!(state.task_name(), Some("Race"));
    let state = workflow.step(state).await.unwrap();
    assert_eq!(started.elapsed(), secs(0));
    assert_eq!(
        state,
        TerminateRaceState::Terminated {
            output: json!({"keep": 1, "quit": true})
        }
    );
    settle().await;
    // The quitter ends without waiting for anything, so the worker branch is cancelled before
    // it even calls its function (`terminate_after_work_cancels_the_running_branch` cancels a
    // running call).
    assert!(lab.calls().is_empty(), "the slow function never runs");
    assert!(lab.ends().is_empty());
    let output = workflow.run(json!({"keep": 2})).await.unwrap();
    assert_eq!(output, json!({"keep": 2, "quit": true}));
}

#[tokio::test(start_paused = true)]
async fn terminate_after_work_cancels_the_running_branch() {
    use terminate_late::{TerminateLateState, TerminateLateWorkflow};
    let lab = Lab::new();
    let workflow = TerminateLateWorkflow::new(lab.clone());
    let started = Instant::now();
    let state = workflow.start(json!({})).unwrap();
    let state = workflow.step(state).await.unwrap();
    assert_eq!(started.elapsed(), secs(1));
    assert_eq!(
        state,
        TerminateLateState::Terminated {
            output: json!({"thought": true, "quit": true})
        }
    );
    settle().await;
    assert_eq!(lab.starts(), log(&[("quitter", 0), ("worker", 0)]));
    assert_eq!(lab.ends(), log(&[("quitter", 1)]));
}

// ---------------------------------------------------------------------------------------------
// ForEach

#[tokio::test(start_paused = true)]
async fn the_drafts_orders_example_sends_two_confirmations() {
    let lab = Lab::new();
    let input = json!({
        "orders": [
            {"orderNumber": "1234", "completed": true, "email": "firstBuyer@buyer.com"},
            {"orderNumber": "5678", "completed": true, "email": "secondBuyer@buyer.com"},
            {"orderNumber": "9910", "completed": false, "email": "thirdBuyer@buyer.com"},
        ]
    });
    let output = orders::ConfirmOrdersWorkflow::new(lab.clone())
        .run(input.clone())
        .await
        .unwrap();
    assert_eq!(
        output, input,
        "without outputCollection the data is unchanged"
    );
    assert_eq!(
        lab.calls(),
        vec![
            Call {
                function: "send_confirmation_function",
                args: json!({"orderNumber": "1234", "email": "firstBuyer@buyer.com"}),
                at: secs(0),
            },
            Call {
                function: "send_confirmation_function",
                args: json!({"orderNumber": "5678", "email": "secondBuyer@buyer.com"}),
                at: secs(0),
            },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn foreach_collections_parameters_and_outputs_in_element_order() {
    let lab = Lab::new();
    let items = json!([
        {"name": "a", "secs": 3},
        {"name": "b", "secs": 1},
        {"name": "c", "secs": 2},
        {"name": "d", "secs": 0},
    ]);
    let started = Instant::now();
    let output = foreach::ForeachWorkflow::new(lab.clone())
        .run(json!({"items": items}))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(3));
    let report = |name: &str, secs: u64| json!({"who": name, "secs": secs, "stage": "prepared"});
    let long = |name: &str, secs: u64| json!({"one": {"name": name, "secs": secs}, "result": {"named": name}});
    assert_eq!(
        output,
        json!({
            "items": items,
            // Element order, though they finished d, b, c, a; each iteration ran Prepare then
            // Process (its stage is in the report).
            "reports": [report("a", 3), report("b", 1), report("c", 2), report("d", 0)],
            // The query's matches, each at the nested inputParameter `$.long.one`.
            "summary": {"long": [long("a", 3), long("c", 2)]},
        })
    );
    assert_eq!(
        lab.starts(),
        log(&[("a", 0), ("b", 0), ("c", 0), ("d", 0), ("a", 3), ("c", 3)]),
        "max 0: no limit"
    );
    assert_eq!(
        lab.ends(),
        log(&[("d", 0), ("b", 1), ("c", 2), ("a", 3), ("a", 3), ("c", 3)])
    );
}

#[tokio::test(start_paused = true)]
async fn foreach_max_runs_two_iterations_at_a_time() {
    let lab = Lab::new();
    let items = json!(["i1", "i2", "i3", "i4", "i5"]);
    let started = Instant::now();
    let output = foreach_max::ForeachMaxWorkflow::new(lab.clone())
        .run(json!({"items": items}))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(30));
    assert_eq!(output, json!({"items": items, "done": items}));
    assert_eq!(
        lab.starts(),
        log(&[("i1", 0), ("i2", 0), ("i3", 10), ("i4", 10), ("i5", 20)])
    );
    assert_eq!(
        lab.ends(),
        log(&[("i1", 10), ("i2", 10), ("i3", 20), ("i4", 20), ("i5", 30)])
    );
}

#[tokio::test(start_paused = true)]
async fn foreach_input_collection_that_is_not_an_array_is_a_data_error() {
    let error = error_of(
        foreach_max::ForeachMaxWorkflow::new(Lab::new())
            .run(json!({"items": 3}))
            .await,
    );
    assert_eq!(error.task(), "TwoAtATime");
    assert_eq!(error.error().name, "DataError");
    assert_eq!(
        error.error().message,
        "the inputCollection `$.items` of foreach task `TwoAtATime` selects a number, not an array"
    );
}

#[tokio::test(start_paused = true)]
async fn foreach_iterations_share_the_arrays_their_body_does_not_read() {
    use foreach_shared::{ForeachSharedState, ForeachSharedWorkflow};
    let items: Vec<Value> = (0..200)
        .map(|n| json!({"name": format!("i{n}"), "result": {"kept": n}}))
        .collect();
    let input = json!({"items": items, "tags": ["a", "b"]});
    let workflow = ForeachSharedWorkflow::new(Lab::new());
    let state = workflow.start(input.clone()).unwrap();
    let state = workflow.step(state).await.unwrap();
    let ForeachSharedState::Each {
        each: Some(each), ..
    } = &state
    else {
        panic!("expected the iterations to run, found {state:?}");
    };
    assert_eq!(each.positions().count(), 50, "max 50, all pausing");
    // The saved state holds the task data once, not once per running iteration.
    let saved = swf_runtime::serde_json::to_string(&state).unwrap().len();
    let data = input.to_string().len();
    assert!(
        saved < 3 * data,
        "a state of {saved} bytes for {data} bytes of task data"
    );
    let output = workflow.run(input.clone()).await.unwrap();
    assert_eq!(output["outputs"], json!((0..200).collect::<Vec<u64>>()));
    assert_eq!(output["items"], input["items"]);
}

#[tokio::test(start_paused = true)]
async fn a_shared_iteration_still_sees_its_own_copy_of_the_task_data() {
    use foreach_shared::ForeachSharedWorkflow;
    // The function's answers are merged into each iteration's data; `$.kept` selects nothing,
    // so each output is that data whole: the arrays it did not read, with what was merged.
    let input = json!({
        "items": [
            {"name": "a", "result": {"items": [1, {"name": "b"}], "tags": ["x"]}},
            {"name": "b", "result": {"items": [2], "tags": []}},
        ],
        "tags": ["x", "y"],
    });
    let output = ForeachSharedWorkflow::new(Lab::new())
        .run(input.clone())
        .await
        .unwrap();
    let items = &input["items"];
    assert_eq!(
        output,
        json!({
            "items": items,
            "tags": ["x", "y"],
            "outputs": [
                {
                    // `{"name": "b"}` is not an element of items: `{"name": "b", ...}` is.
                    "items": [items[0], items[1], 1, {"name": "b"}],
                    "tags": ["x", "y"],
                    "item": items[0],
                },
                {"items": [items[0], items[1], 2], "tags": ["x", "y"], "item": items[1]},
            ],
        })
    );
    // Merging a value of another kind into an array it did not read fails as on the array.
    let error = error_of(
        ForeachSharedWorkflow::new(Lab::new())
            .run(json!({"items": [{"name": "a", "result": {"tags": "x"}}], "tags": ["y"]}))
            .await,
    );
    assert_eq!(error.task(), "Each");
    let message = &error.error().message;
    assert!(
        message.contains("at `/tags` the task data holds an array but"),
        "{message}"
    );
}

/// The round is over when its last running branch starts to wait: the branch that waited
/// first is woken to give its state back, and the step returns with both waiting.
#[tokio::test(start_paused = true)]
async fn a_step_returns_once_every_branch_waits_for_its_event() {
    use waiting_branches::{WaitingBranchesEvent, WaitingBranchesWorkflow};
    let workflow = WaitingBranchesWorkflow::new(Lab::new());
    let io = Io::standalone();
    let state = workflow.start_with(json!({"n": 1}), &io).unwrap();
    let state = tokio::time::timeout(secs(86_400), workflow.step_with(state, &io))
        .await
        .expect("the step returns once both branches wait")
        .unwrap();
    assert_eq!(
        state.position(),
        "Both/left/AwaitLeft | Both/right/AwaitRight"
    );
    for event in [WaitingBranchesEvent::Right, WaitingBranchesEvent::Left] {
        io.deliver(event.event("e", json!({})).unwrap())
            .await
            .unwrap();
    }
    let mut state = state;
    for _ in 0..3 {
        state = workflow.step_with(state, &io).await.unwrap();
    }
    assert_eq!(state.position(), "completed");
}

#[tokio::test(start_paused = true)]
async fn parallel_branches_share_the_arrays_they_do_not_read() {
    use parallel_shared::{ParallelSharedState, ParallelSharedWorkflow};
    let items: Vec<Value> = (0..200)
        .map(|n| json!({"n": n, "name": format!("i{n}")}))
        .collect();
    let input = json!({
        "items": items,
        "left": {"name": "l", "result": {"l": 1}},
        "right": {"name": "r", "result": {"r": 2}},
    });
    let workflow = ParallelSharedWorkflow::new(Lab::new());
    let state = workflow.start(input.clone()).unwrap();
    let state = workflow.step(state).await.unwrap();
    assert!(
        matches!(
            &state,
            ParallelSharedState::Both {
                branches: Some(_),
                ..
            }
        ),
        "expected the left branch to wait, found {state:?}"
    );
    // The saved state holds the task data once, not once more per branch (the left one
    // waiting with its data, the right one done with its output).
    let saved = swf_runtime::serde_json::to_string(&state).unwrap().len();
    let data = input.to_string().len();
    assert!(
        saved < 2 * data,
        "a state of {saved} bytes for {data} bytes of task data"
    );
    let output = workflow.run(input.clone()).await.unwrap();
    let mut expected = input.clone();
    expected["l"] = json!(1);
    expected["r"] = json!(2);
    assert_eq!(output, expected);
}

#[tokio::test(start_paused = true)]
async fn a_shared_branch_still_sees_its_own_copy_of_the_task_data() {
    use parallel_shared::ParallelSharedWorkflow;
    // What each branch's function answers is merged into the branch's data, arrays it did
    // not read included; the outputs then merge back in branch order, as full copies would.
    let input = json!({
        "items": [1, {"name": "b"}],
        "tags": ["x"],
        "left": {"name": "l", "result": {"items": [3, 1, 4], "tags": ["x", "y"]}},
        "right": {"name": "r", "result": {"items": [4, 5, {"name": "b"}], "tags": []}},
    });
    let output = ParallelSharedWorkflow::new(Lab::new())
        .run(input.clone())
        .await
        .unwrap();
    let mut expected = input.clone();
    expected["items"] = json!([1, {"name": "b"}, 3, 4, 5]);
    expected["tags"] = json!(["x", "y"]);
    assert_eq!(output, expected);
    // Merging a value of another kind into an array it did not read fails as on the array,
    // with the task data it had.
    let input = json!({
        "items": [1],
        "left": {"name": "l", "result": {"items": {"a": 1}}},
        "right": {"name": "r"},
    });
    let error = error_of(
        ParallelSharedWorkflow::new(Lab::new())
            .run(input.clone())
            .await,
    );
    assert_eq!(error.task(), "Both");
    assert_eq!(error.data(), &input);
    let message = &error.error().message;
    assert!(
        message.contains("at `/items` the task data holds an array but"),
        "{message}"
    );
}

/// Doubles `n`, recording nothing (the scripted functions' records are quadratic in calls).
struct Doubler;

impl foreach_bench::ForEachBenchFunctions for Doubler {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"n": args["n"].as_i64().unwrap_or(0) * 2}))
    }
}

#[tokio::test]
async fn a_foreach_over_100_000_items_completes() {
    // Each iteration's data holds the collection: copied per iteration, this took 111 s.
    let count = 100_000_i64;
    let output = foreach_bench::ForEachBenchWorkflow::new(Doubler)
        .run(json!({"items": (0..count).collect::<Vec<i64>>()}))
        .await
        .unwrap();
    let results = output["results"].as_array().unwrap();
    assert_eq!(results.len(), 100_000);
    assert!(
        results
            .iter()
            .zip(0..count)
            .all(|(result, n)| result.as_i64() == Some(2 * n))
    );
}

/// Records, per call, how many times another task on the same thread has run so far.
struct Watching(Arc<AtomicUsize>);

impl foreach_bench::ForEachBenchFunctions for Watching {
    async fn work(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"n": self.0.load(Ordering::Relaxed)}))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_foreach_that_never_waits_still_lets_other_tasks_run() {
    // On a host's thread, a large foreach whose calls complete at once must not keep every
    // other instance waiting until it ends: it gives the thread back as tokio's budget runs out.
    let ticks = Arc::new(AtomicUsize::new(0));
    let ticking = tokio::spawn({
        let ticks = Arc::clone(&ticks);
        async move {
            loop {
                ticks.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        }
    });
    let output = foreach_bench::ForEachBenchWorkflow::new(Watching(Arc::clone(&ticks)))
        .run(json!({"items": (0..10_000).collect::<Vec<i64>>()}))
        .await
        .unwrap();
    ticking.abort();
    let seen = output["results"].as_array().unwrap();
    assert!(
        seen.last().and_then(Value::as_u64) > Some(10),
        "the other task ran {} times during 10,000 iterations",
        seen.last().unwrap()
    );
}

#[tokio::test(start_paused = true)]
async fn foreach_time_delay_spaces_the_iteration_starts() {
    let lab = Lab::new();
    let started = Instant::now();
    let output = foreach_delay::ForeachDelayWorkflow::new(lab.clone())
        .run(json!({"items": [
            {"name": "a", "secs": 1},
            {"name": "b", "secs": 5},
            {"name": "c", "secs": 1},
        ]}))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(8));
    assert_eq!(output["done"], json!(["a", "b", "c"]));
    assert_eq!(lab.starts(), log(&[("a", 0), ("b", 3), ("c", 6)]));
    assert_eq!(lab.ends(), log(&[("a", 1), ("c", 7), ("b", 8)]));
}

/// An iteration whose output is `null` keeps its place in the collection when the state is
/// saved and read back between steps, as a durable host does: it was read back as an
/// iteration not done yet, and left out.
#[tokio::test(start_paused = true)]
async fn a_null_iteration_output_survives_a_save_between_steps() {
    let input = json!({"items": [{"name": null, "secs": 1}, {"name": "b", "secs": 1}]});
    let ran = foreach_delay::ForeachDelayWorkflow::new(Lab::new())
        .run(input.clone())
        .await
        .unwrap();
    assert_eq!(ran["done"], json!([null, "b"]));

    let workflow = foreach_delay::ForeachDelayWorkflow::new(Lab::new());
    let mut state = workflow.start(input).unwrap();
    let mut saves = 0;
    while state.output().is_none() {
        let saved = swf_runtime::serde_json::to_string(&state).unwrap();
        state = swf_runtime::serde_json::from_str(&saved).unwrap();
        saves += 1;
        state = workflow.step(state).await.unwrap();
    }
    // Saved before the first step, and between the first iteration's end and the second's
    // start (the `timeDelay`).
    assert_eq!(saves, 2);
    assert_eq!(state.output().unwrap()["done"], json!([null, "b"]));
}

/// A saved foreach state that no run makes (both iterations started, neither running nor
/// done) fails the step with a `HostError` naming the workflow and the task, rather than
/// waiting for ever.
#[tokio::test(start_paused = true)]
async fn a_saved_state_that_waits_for_nothing_fails_the_step() {
    let workflow = foreach_shared::ForeachSharedWorkflow::new(Lab::new());
    let state: foreach_shared::ForeachSharedState =
        swf_runtime::serde_json::from_value(json!({"Each": {
            "data": {"items": [1, 2]},
            "each": {"total": 2, "started": 2, "running": [], "outputs": [null, null]},
        }}))
        .unwrap();
    let stepped = tokio::time::timeout(Duration::from_secs(86_400), workflow.step(state))
        .await
        .expect("the step returns");
    let error = stepped.unwrap_err();
    assert_eq!(
        error.data(),
        &json!({"Each": {
            "data": {"items": [1, 2]},
            "each": {"total": 2, "started": 2, "running": [], "outputs": [null, null], "origin": 0},
        }}),
        "its state, saved"
    );
    assert_eq!(
        error.to_string(),
        "workflow `foreach-shared` failed in task `Each`: HostError: the instance waits at \
         `Each` for nothing that can come (no event, no deadline), so it can never go on: its \
         state is not one the workflow makes (saved by another version of it, or changed since)"
    );
}

#[tokio::test(start_paused = true)]
async fn terminate_in_an_iteration_ends_the_instance() {
    use foreach_terminate::{ForeachTerminateState, ForeachTerminateWorkflow};
    let lab = Lab::new();
    let workflow = ForeachTerminateWorkflow::new(lab.clone());
    let items = json!([
        {"name": "one", "secs": 5},
        {"name": "two", "secs": 2, "stop": true},
        {"name": "three", "secs": 9},
        {"name": "four", "secs": 1},
    ]);
    let started = Instant::now();
    let state = workflow.start(json!({"items": items})).unwrap();
    let state = workflow.step(state).await.unwrap();
    assert_eq!(started.elapsed(), secs(2));
    assert_eq!(
        state,
        ForeachTerminateState::Terminated {
            output: json!({
                "items": items,
                "item": {"name": "two", "secs": 2, "stop": true},
                "worked": "two",
                "stopped": true,
            })
        }
    );
    settle().await;
    // max 2: three and four never start; one is cancelled; After never runs.
    assert_eq!(lab.starts(), log(&[("one", 0), ("two", 0)]));
    assert_eq!(lab.ends(), log(&[("two", 2)]));
    // Without a stop, every iteration completes and After runs.
    let lab = Lab::new();
    let output = ForeachTerminateWorkflow::new(lab.clone())
        .run(json!({"items": [{"name": "one", "secs": 1}, {"name": "two", "secs": 2}]}))
        .await
        .unwrap();
    let done = |name: &str, secs: u64| {
        json!({
            "items": [{"name": "one", "secs": 1}, {"name": "two", "secs": 2}],
            "item": {"name": name, "secs": secs},
            "worked": name,
            "fine": true,
        })
    };
    assert_eq!(output["done"], json!([done("one", 1), done("two", 2)]));
    assert_eq!(lab.starts(), log(&[("one", 0), ("two", 0), ("after", 2)]));
}

#[tokio::test(start_paused = true)]
async fn nested_scopes_run_and_a_terminate_three_levels_down_ends_everything() {
    use nested::{NestedState, NestedWorkflow};
    let lab = Lab::new();
    let io = Io::standalone();
    let workflow = NestedWorkflow::new(lab.clone());
    let started = Instant::now();
    let items = json!([{"name": "a", "secs": 3}, {"name": "c", "secs": 1}]);
    let output = workflow
        .run_with(json!({"items": items}), &io)
        .await
        .unwrap();
    assert_eq!(started.elapsed(), secs(3));
    // Each iteration's parallel task merged both branches, then its output filter kept `worked`.
    assert_eq!(output["done"], json!(["a", "c"]));
    assert_eq!(
        lab.starts(),
        log(&[("a", 0), ("c", 0), ("side", 0), ("side", 0), ("after", 3)])
    );

    // Item b calls the child, which terminates after its 2 s chore: the whole instance ends.
    let lab = Lab::new();
    let workflow = NestedWorkflow::new(lab.clone());
    let items = json!([
        {"name": "a", "secs": 3},
        {"name": "b", "quit": true},
        {"name": "c", "secs": 1},
    ]);
    let started = Instant::now();
    let state = workflow.start_with(json!({"items": items}), &io).unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(started.elapsed(), secs(2));
    assert_eq!(
        state,
        NestedState::Terminated {
            output: json!({
                "items": items,
                "item": {"name": "b", "quit": true},
                "chore": "done",
                "quit": true,
            })
        }
    );
    settle().await;
    assert_eq!(
        lab.starts(),
        log(&[
            ("a", 0),
            ("c", 0),
            ("chore", 0),
            ("side", 0),
            ("side", 0),
            ("side", 0)
        ])
    );
    assert_eq!(
        lab.ends(),
        log(&[
            ("c", 1),
            ("side", 1),
            ("side", 1),
            ("side", 1),
            ("chore", 2)
        ]),
        "a was cancelled, After never ran"
    );
}

// ---------------------------------------------------------------------------------------------
// Sub-flows

#[tokio::test(start_paused = true)]
async fn a_waited_sub_flow_gives_its_output_and_a_detached_one_runs_on_its_own() {
    let lab = Lab::new();
    let io = Io::standalone();
    let started = Instant::now();
    let output = flows::ParentWorkflow::new(lab.clone())
        .run_with(json!({"n": 3}), &io)
        .await
        .unwrap();
    // CallChild waits 5 s for the child, whose output {n: 6} becomes the task data;
    // FireAndForget continues at once with its input; Audit sees {n: 6}.
    assert_eq!(started.elapsed(), secs(5));
    assert_eq!(output, json!({"n": 6, "audited": "audited"}));
    settle().await;
    // The detached child started at 5 s with {n: 6} and ran to its end.
    let mut calls = lab.calls();
    calls.sort_by_key(|call| (call.at, call.function));
    assert_eq!(
        calls,
        vec![
            Call {
                function: "double",
                args: json!({"n": 3}),
                at: secs(0)
            },
            Call {
                function: "audit",
                args: json!({"n": 6}),
                at: secs(5)
            },
            Call {
                function: "double",
                args: json!({"n": 6}),
                at: secs(5)
            },
        ]
    );
    assert_eq!(
        lab.ends(),
        log(&[("audit", 5), ("double", 5), ("double", 10)])
    );
}

#[tokio::test(start_paused = true)]
async fn terminate_in_a_sub_flow_ends_the_calling_instance() {
    use quitting::{QuitParentState, QuitParentWorkflow};
    let lab = Lab::new();
    let io = Io::standalone();
    let workflow = QuitParentWorkflow::new(lab.clone());
    let started = Instant::now();
    let state = workflow.start_with(json!({"via": "direct"}), &io).unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(state.task_name(), Some("Direct"));
    // Each step of the calling task is one step of the called workflow, saved in the
    // caller's state: the chore, then the terminating inject.
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(ScopeState::position(&state), "Direct/Quit");
    assert_eq!(started.elapsed(), secs(2));
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(
        state,
        QuitParentState::Terminated {
            output: json!({"via": "direct", "chore": "done", "quit": true})
        }
    );
    settle().await;
    assert_eq!(lab.starts(), log(&[("chore", 0)]), "After never runs");
}

#[tokio::test(start_paused = true)]
async fn terminate_in_a_sub_flow_called_from_a_branch_ends_everything() {
    use quitting::{QuitParentState, QuitParentWorkflow};
    let lab = Lab::new();
    let io = Io::standalone();
    let workflow = QuitParentWorkflow::new(lab.clone());
    let started = Instant::now();
    let state = workflow.start_with(json!({"via": "branch"}), &io).unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(state.task_name(), Some("InBranch"));
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(started.elapsed(), secs(2));
    assert_eq!(
        state,
        QuitParentState::Terminated {
            output: json!({"via": "branch", "chore": "done", "quit": true})
        }
    );
    settle().await;
    assert_eq!(lab.starts(), log(&[("chore", 0), ("slow", 0)]));
    assert_eq!(lab.ends(), log(&[("chore", 2)]), "slow was cancelled");
}

// ---------------------------------------------------------------------------------------------
// Scheduled starts

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// The refusal of `start_with`: a `ScheduleError` of the start task, with the input as data.
fn refusal<S: std::fmt::Debug>(started: Result<S, WorkflowError>) -> String {
    let error = match started {
        Ok(state) => panic!("expected a refusal, got {state:?}"),
        Err(error) => error,
    };
    assert_eq!(error.task(), "Open");
    assert_eq!(error.error().name, "ScheduleError");
    assert_eq!(*error.data(), json!({"x": 1}));
    error.error().message.clone()
}

const NOT_YET: &str = "the start task is not active yet: its schedule opens at ";
const CLOSED: &str = "the start task is no longer active: its schedule closed at ";

#[tokio::test(start_paused = true)]
async fn scheduled_start_and_end() {
    use start_end::ScheduledStartEndWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    let clock = Arc::new(ManualClock::new(at("2020-03-20T12:59:59Z")));
    let io = Io::standalone_with_clock(clock.clone());
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{NOT_YET}2020-03-20T13:00:00Z")
    );
    for inside in ["2020-03-20T13:00:00Z", "2021-05-11T15:29:59Z"] {
        clock.set(at(inside));
        let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
        assert_eq!(output, json!({"x": 1, "ran": true}), "{inside}");
    }
    clock.set(at("2021-05-11T15:30:00Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{CLOSED}2021-05-11T15:30:00Z")
    );
    let error = error_of(workflow.run_with(json!({"x": 1}), &io).await);
    assert_eq!(error.error().name, "ScheduleError");
    assert_eq!(lab.calls().len(), 2, "only the two instances inside ran");
}

#[tokio::test(start_paused = true)]
async fn scheduled_start_and_duration() {
    use start_duration::ScheduledStartDurationWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    let clock = Arc::new(ManualClock::new(at("2020-03-20T12:59:59Z")));
    let io = Io::standalone_with_clock(clock.clone());
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{NOT_YET}2020-03-20T13:00:00Z")
    );
    // 2020-03-20T13:00Z + P1Y2M10DT2H30M = 2021-05-30T15:30Z.
    for inside in ["2020-03-20T13:00:00Z", "2021-05-30T15:29:59Z"] {
        clock.set(at(inside));
        let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
        assert_eq!(output, json!({"x": 1, "ran": true}), "{inside}");
    }
    clock.set(at("2021-05-30T15:30:00Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{CLOSED}2021-05-30T15:30:00Z")
    );
    assert_eq!(lab.calls().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn scheduled_duration_and_end() {
    use duration_end::ScheduledDurationEndWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    // Deployed 2020-01-01: P1Y2M10DT2H30M would last into 2021, the end comes first.
    let clock = Arc::new(ManualClock::new(at("2020-01-01T00:00:00Z")));
    let io = Io::standalone_with_clock(clock.clone());
    clock.set(at("2019-12-31T23:59:59Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{NOT_YET}2020-01-01T00:00:00Z")
    );
    for inside in ["2020-01-01T00:00:00Z", "2020-05-11T15:29:59Z"] {
        clock.set(at(inside));
        let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
        assert_eq!(output, json!({"x": 1, "ran": true}), "{inside}");
    }
    clock.set(at("2020-05-11T15:30:00Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{CLOSED}2020-05-11T15:30:00Z")
    );
    // Deployed 2019-01-01: the duration ends first, on 2020-03-11T02:30Z.
    let clock = Arc::new(ManualClock::new(at("2019-01-01T00:00:00Z")));
    let io = Io::standalone_with_clock(clock.clone());
    clock.set(at("2020-03-11T02:29:59Z"));
    assert!(workflow.start_with(json!({"x": 1}), &io).is_ok());
    clock.set(at("2020-03-11T02:30:00Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{CLOSED}2020-03-11T02:30:00Z")
    );
    assert_eq!(lab.calls().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn scheduled_duration_counts_from_the_deployment() {
    use duration::ScheduledDurationWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    // P1DT2H from the Io's creation.
    let clock = Arc::new(ManualClock::new(at("2024-06-01T00:00:00Z")));
    let io = Io::standalone_with_clock(clock.clone());
    for inside in ["2024-06-01T00:00:00Z", "2024-06-02T01:59:59Z"] {
        clock.set(at(inside));
        let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
        assert_eq!(output, json!({"x": 1, "ran": true}), "{inside}");
    }
    clock.set(at("2024-06-02T02:00:00Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{CLOSED}2024-06-02T02:00:00Z")
    );
    clock.set(at("2024-05-31T23:59:59Z"));
    assert_eq!(
        refusal(workflow.start_with(json!({"x": 1}), &io)),
        format!("{NOT_YET}2024-06-01T00:00:00Z")
    );
    // Another deployment, another window.
    let later = Io::standalone_with_clock(Arc::new(ManualClock::new(at("2024-06-03T00:00:00Z"))));
    let output = workflow.run_with(json!({"x": 1}), &later).await.unwrap();
    assert_eq!(output, json!({"x": 1, "ran": true}));
    assert_eq!(lab.calls().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_sub_flow_whose_schedule_is_not_active_completes_with_its_input() {
    use scheduled_caller::ScheduledCallerWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    let clock = Arc::new(ManualClock::new(at("2022-01-01T00:00:00Z")));
    let io = Io::standalone_with_clock(clock.clone());
    let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
    assert_eq!(output, json!({"x": 1}));
    assert!(lab.calls().is_empty());
    clock.set(at("2021-01-01T00:00:00Z"));
    let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
    assert_eq!(output, json!({"x": 1, "ran": true}));
    assert_eq!(lab.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_branch_whose_scheduled_start_is_not_active_completes_at_once() {
    use branch_schedule::BranchScheduleWorkflow as Workflow;
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    let clock = Arc::new(ManualClock::new(at("2030-06-01T00:00:00Z")));
    let io = Io::standalone_with_clock(clock.clone());
    let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
    assert_eq!(output, json!({"x": 1, "always": true, "window": true}));
    assert_eq!(lab.starts(), log(&[("always", 0), ("window", 0)]));
    // Outside the branch's window: the tasks draft ("Start Definition", case 1) says the
    // workflow does not wait for it to open and just completes the branch, with its input.
    let lab = Lab::new();
    let workflow = Workflow::new(lab.clone());
    clock.set(at("2024-06-01T00:00:00Z"));
    let output = workflow.run_with(json!({"x": 1}), &io).await.unwrap();
    assert_eq!(
        lab.starts(),
        log(&[("always", 0)]),
        "the window branch does not run"
    );
    assert_eq!(output, json!({"x": 1, "always": true}));
}

mod chain {
    swf_runtime::workflow!(
        "workflows/concurrency/chain-top.sw.yaml",
        "workflows/concurrency/chain-middle.sw.yaml",
        "workflows/concurrency/chain-bottom.sw.yaml"
    );
}

/// Functions shared by the three workflows of the chain; cloned into the detached sub-flow.
#[derive(Clone, Default)]
struct Touches(Arc<Mutex<u32>>);

impl chain::ChainBottomFunctions for Touches {
    async fn touch(&self, _args: Value) -> Result<Value, FunctionError> {
        if let Ok(mut count) = self.0.lock() {
            *count += 1;
        }
        Ok(json!({}))
    }
}
impl chain::ChainMiddleFunctions for Touches {}
impl chain::ChainTopFunctions for Touches {}

/// A workflow waiting for a sub-flow that starts another one detached compiles (its functions
/// are owned all the way up) and the detached one runs.
#[tokio::test]
async fn a_waited_sub_flow_may_start_a_detached_one() {
    let touches = Touches::default();
    let machine = chain::ChainTopWorkflow::new(touches.clone());
    let output = machine.run_with(json!({}), &Io::standalone()).await;
    assert_eq!(output, Ok(json!({"middle": true})));
    for _ in 0..100 {
        if touches.0.lock().map(|c| *c).unwrap_or(0) == 1 {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the detached sub-flow did not run");
}

/// Outside a tokio runtime, starting a detached sub-flow is an error, not a panic.
#[test]
fn a_detached_sub_flow_outside_tokio_is_an_error() {
    let machine = chain::ChainMiddleWorkflow::new(Touches::default());
    let io = Io::standalone();
    let state = machine.start_with(json!({}), &io).expect("starts");
    let step = block_on_without_runtime(machine.step_with(state, &io));
    let error = step.expect_err("no tokio runtime");
    assert_eq!(error.error().name, "RuntimeError");
    assert_eq!(error.task(), "StartBottom");
}

/// Polls a future to completion on this thread, without any runtime.
fn block_on_without_runtime<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}
