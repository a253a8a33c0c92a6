//! The earlier drafts' constructs whose semantics go beyond one front end: events an entry did
//! not need, retries that belong to one action, branches not waited for. Timed tests run on
//! tokio's paused clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use swf_runtime::{FunctionError, Io, Value, json};
use tokio::time::Instant;

mod leftover {
    swf_runtime::workflow!("workflows/earlier/leftover_events.sw.yaml");
}

struct NoFunctions;

impl leftover::LeftoverFunctions for NoFunctions {}

#[tokio::test(start_paused = true)]
async fn events_an_entry_did_not_name_stay_for_the_next_wait() {
    use leftover::LeftoverEvent as Event;
    let io = Io::standalone();
    for (kind, id) in [(Event::A, "a"), (Event::C, "c")] {
        io.deliver(kind.event(id, json!({})).expect("event builds"))
            .await
            .expect("delivered");
    }
    let started = tokio::time::Instant::now();
    let output = leftover::LeftoverWorkflow::new(NoFunctions)
        .run_with(json!({}), &io)
        .await
        .expect("runs");
    assert_eq!(output["ended"], json!("gotA"));
    assert_eq!(started.elapsed(), std::time::Duration::ZERO);
}

mod event_retry {
    swf_runtime::workflow!("workflows/earlier/event_retry.sw.yaml");
}

/// Fails with `Flaky` the first `failures` times, then succeeds.
struct Flaky {
    failures: usize,
    calls: AtomicUsize,
}

impl event_retry::EventRetryFunctions for Flaky {
    async fn flaky(&self, _args: Value) -> Result<Value, FunctionError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if call < self.failures {
            Err(FunctionError::named("Flaky", "try again"))
        } else {
            Ok(json!({"calls": call + 1}))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_action_of_an_event_state_retries_without_waiting_for_its_event_again() {
    use event_retry::EventRetryEvent as Event;
    let io = Io::standalone();
    io.deliver(Event::A.event("a", json!({})).expect("event builds"))
        .await
        .expect("delivered");
    let started = Instant::now();
    let machine = event_retry::EventRetryWorkflow::new(Flaky {
        failures: 2,
        calls: AtomicUsize::new(0),
    });
    let output = machine.run_with(json!({}), &io).await.expect("runs");
    assert_eq!(output["calls"], json!(3));
    // Two retries, one second apart each: no wait for another event.
    assert_eq!(started.elapsed(), Duration::from_secs(2));

    // Spent after three retries: the retry's next-state, an END state with FAILURE.
    let io = Io::standalone();
    io.deliver(Event::A.event("a", json!({})).expect("event builds"))
        .await
        .expect("delivered");
    let machine = event_retry::EventRetryWorkflow::new(Flaky {
        failures: 10,
        calls: AtomicUsize::new(0),
    });
    let failed = machine.run_with(json!({}), &io).await.expect_err("fails");
    assert_eq!(failed.task(), "Failed");
    assert_eq!(machine.functions().calls.load(Ordering::SeqCst), 4);
}

mod action_retries {
    swf_runtime::workflow!("workflows/earlier/action_retries.sw.yaml");
}

/// `first` fails with E `first_failures` times; `second` fails with E `second_failures` times.
struct TwoActions {
    first_failures: usize,
    second_failures: usize,
    first_calls: AtomicUsize,
    second_calls: AtomicUsize,
}

impl TwoActions {
    fn new(first_failures: usize, second_failures: usize) -> Self {
        Self {
            first_failures,
            second_failures,
            first_calls: AtomicUsize::new(0),
            second_calls: AtomicUsize::new(0),
        }
    }

    fn calls(&self) -> (usize, usize) {
        (
            self.first_calls.load(Ordering::SeqCst),
            self.second_calls.load(Ordering::SeqCst),
        )
    }
}

fn answer(calls: &AtomicUsize, failures: usize) -> Result<Value, FunctionError> {
    if calls.fetch_add(1, Ordering::SeqCst) < failures {
        Err(FunctionError::named("E", "failed"))
    } else {
        Ok(json!({}))
    }
}

impl action_retries::ActionRetriesFunctions for TwoActions {
    async fn first(&self, _args: Value) -> Result<Value, FunctionError> {
        answer(&self.first_calls, self.first_failures)
    }
    async fn second(&self, _args: Value) -> Result<Value, FunctionError> {
        answer(&self.second_calls, self.second_failures)
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_belongs_to_its_own_action() {
    // The first action recovers on its second retry; the second runs once.
    let machine = action_retries::ActionRetriesWorkflow::new(TwoActions::new(2, 0));
    let output = machine.run(json!({})).await.expect("runs");
    assert_eq!(output["ended"], json!("done"));
    assert_eq!(machine.functions().calls(), (3, 1));

    // The first action's retries spent: its transition.
    let machine = action_retries::ActionRetriesWorkflow::new(TwoActions::new(5, 0));
    let output = machine.run(json!({})).await.expect("handled");
    assert_eq!(output["ended"], json!("fromFirst"));
    assert_eq!(output["error"]["name"], json!("E"));
    assert_eq!(machine.functions().calls(), (3, 0));

    // The second action's failure is not the first's to retry or hand over: the run fails,
    // and the first action ran once.
    let machine = action_retries::ActionRetriesWorkflow::new(TwoActions::new(0, 5));
    let failed = machine.run(json!({})).await.expect_err("fails");
    assert_eq!(failed.task(), "Op");
    assert_eq!(failed.error().name, "E");
    assert_eq!(machine.functions().calls(), (1, 1));
}

mod detached {
    swf_runtime::workflow!("workflows/earlier/detached_branch.sw.yaml");
}

/// Counts its calls; cloned into the detached branch, which owns its copy.
#[derive(Clone, Default)]
struct Recorder {
    calls: std::sync::Arc<AtomicUsize>,
}

impl detached::DetachedFunctions for Recorder {
    async fn record(&self, _args: Value) -> Result<Value, FunctionError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(json!({}))
    }
}

#[tokio::test(start_paused = true)]
async fn a_branch_not_waited_for_runs_on_after_the_state_moved_on() {
    let recorder = Recorder::default();
    let started = Instant::now();
    let output = detached::DetachedWorkflow::new(recorder.clone())
        .run(json!({}))
        .await
        .expect("runs");
    // The state waited for `waited` only: no minute passed, `background` has not recorded yet.
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(output["quick"], json!("done"));
    assert_eq!(recorder.calls.load(Ordering::SeqCst), 0);
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert_eq!(recorder.calls.load(Ordering::SeqCst), 1);
}

mod inline_choices {
    swf_runtime::workflow!("workflows/earlier/inline_choices.sw.yaml");
}

impl inline_choices::InlineChoicesFunctions for NoFunctions {}

/// The first draft's choices with their condition inline (issue 9: refused before), a JSONPath
/// member name with a dash, and an OPERATION state without actions.
#[tokio::test]
async fn inline_choices_pick_the_state_their_condition_names() {
    let machine = inline_choices::InlineChoicesWorkflow::new(NoFunctions);
    for (code, expected) in [
        (0, vec!["Check", "Fine"]),
        (3, vec!["Check", "Retry", "Done"]),
        (42, vec!["Check", "Broken"]),
    ] {
        let mut state = machine.start(json!({"exit-code": code})).expect("starts");
        let mut seen = Vec::new();
        while let Some(name) = state.task_name() {
            seen.push(name.to_owned());
            state = match machine.step(state).await {
                Ok(next) => next,
                Err(_) => break,
            };
        }
        assert_eq!(seen, expected, "exit-code {code}");
    }
}
