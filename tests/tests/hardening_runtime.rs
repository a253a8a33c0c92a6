//! Runtime faults of issue 9: a panicking function, a retry loop that never waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use swf_runtime::{FunctionError, Value, json};

mod spin {
    swf_runtime::workflow!("workflows/hardening/spin.sw.yaml");
}

mod panics {
    swf_runtime::workflow!("workflows/hardening/panics.sw.yaml");
}

struct AlwaysAgain(Arc<AtomicU64>);

impl spin::SpinFunctions for AlwaysAgain {
    async fn fail(&self, _args: Value) -> Result<Value, FunctionError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Err(FunctionError::named("Again", "once more"))
    }
}

/// `maxAttempts: 4294967295` with `PT0S` starved every other task of a current-thread runtime:
/// a timeout around the run must fire, and another task must run meanwhile. Runs on its own
/// thread, so that a starving loop fails the test instead of hanging it.
#[test]
fn a_retry_loop_without_interval_yields_to_the_scheduler() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let outcome = runtime.block_on(async {
            let attempts = Arc::new(AtomicU64::new(0));
            let ticks = Arc::new(AtomicU64::new(0));
            let ticker = {
                let ticks = Arc::clone(&ticks);
                tokio::spawn(async move {
                    loop {
                        ticks.fetch_add(1, Ordering::Relaxed);
                        tokio::task::yield_now().await;
                    }
                })
            };
            let machine = spin::SpinWorkflow::new(AlwaysAgain(Arc::clone(&attempts)));
            let run = tokio::time::timeout(Duration::from_millis(200), machine.run(json!({})));
            let timed_out = run.await.is_err();
            ticker.abort();
            (
                timed_out,
                attempts.load(Ordering::Relaxed),
                ticks.load(Ordering::Relaxed),
            )
        });
        let _ = done.send(outcome);
    });
    let (timed_out, attempts, ticks) = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the retry loop starved the runtime: the timeout never fired");
    assert!(timed_out);
    assert!(attempts > 1, "{attempts} attempts");
    assert!(ticks > 1, "the other task never ran ({ticks} ticks)");
}

struct Explodes(Arc<AtomicU64>);

impl panics::PanicsFunctions for Explodes {
    async fn explode(&self, _args: Value) -> Result<Value, FunctionError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("card reader on fire");
    }
}

/// A panicking function unwound through `run()` to the caller; it is a `FunctionPanic` error,
/// retried and then handled by onError, with the task's data kept.
#[tokio::test(start_paused = true)]
async fn a_panicking_function_is_an_error_that_retry_and_on_error_handle() {
    let calls = Arc::new(AtomicU64::new(0));
    let machine = panics::PanicsWorkflow::new(Explodes(Arc::clone(&calls)));
    let output = machine
        .run(json!({"order": 7}))
        .await
        .expect("handled by onError");
    assert_eq!(output["order"], json!(7), "{output}");
    assert_eq!(output["recovered"], json!(true), "{output}");
    assert_eq!(output["error"]["name"], json!("FunctionPanic"), "{output}");
    assert_eq!(calls.load(Ordering::Relaxed), 3, "one call and two retries");
}

mod blocking {
    swf_runtime::workflow!("workflows/hardening/blocking.sw.yaml");
}

struct BlocksOffTheRuntime;

impl blocking::BlockingFunctions for BlocksOffTheRuntime {
    async fn slow(&self, _args: Value) -> Result<Value, FunctionError> {
        // The README's rule: blocking work goes to `spawn_blocking`, awaited.
        tokio::task::spawn_blocking(|| {
            std::thread::sleep(Duration::from_millis(1500));
            json!("late")
        })
        .await
        .map_err(|error| FunctionError::new(error.to_string()))
    }
}

/// A function that blocks its thread for 1.5 s under `timeout: PT1S` returned its result; with
/// its blocking work in `spawn_blocking`, the timeout wins after 1 s.
#[tokio::test]
async fn the_timeout_wins_over_a_function_that_blocks_off_the_runtime() {
    let error = blocking::BlockingWorkflow::new(BlocksOffTheRuntime)
        .run(json!({}))
        .await
        .expect_err("times out");
    // The function would return "late" after 1.5 s: a `TimeoutError` is the timeout winning
    // (no wall-clock assertion, which the machine's load would make flaky).
    assert!(error.to_string().contains("TimeoutError"), "{error}");
}

mod greeting {
    swf_runtime::workflow!("workflows/events/greeting.sw.yaml");
}

struct Greets;

impl greeting::GreetingFunctions for Greets {
    async fn greeting_function(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!(format!(
            "{} {}",
            args["greeting"], args["customerName"]
        )))
    }
}

/// An event of the right source but the wrong type: no definition of `greeting` matches it.
fn stray(id: &str) -> swf_runtime::CloudEvent {
    use swf_runtime::{EventBuilder, EventBuilderV10};
    EventBuilderV10::new()
        .id(id)
        .source("customer-arrival-event-source")
        .ty("customer-departure-type")
        .build()
        .expect("an event")
}

fn arrival(id: &str) -> swf_runtime::CloudEvent {
    greeting::GreetingEvent::CustomerArrivesEvent
        .event(id, json!({"customer": {"name": "Ann"}}))
        .expect("an event")
}

fn greetings() -> Value {
    json!({"hello": {"spanish": "Hola"}})
}

/// The reason names the event's source and type and the closest definition.
fn assert_names_the_stray(message: &str) {
    for part in [
        "customer-arrival-event-source",
        "customer-departure-type",
        "`CustomerArrivesEvent`",
        "`greeting`",
    ] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }
}

/// `Io::standalone()` took an event no definition matches, and the run waited forever: an `Io`
/// made for the machine gives it back at once, with the reason.
#[tokio::test(start_paused = true)]
async fn an_io_made_for_a_machine_gives_back_an_event_that_matches_nothing() {
    let machine = greeting::GreetingWorkflow::new(Greets);
    let io = swf_runtime::Io::standalone_for(&machine);
    let refused = io.deliver(stray("s-1")).await.expect_err("refused");
    assert_eq!(swf_runtime::AttributesReader::id(&refused.event), "s-1");
    let swf_runtime::Refusal::MatchesNoDefinition(reason) = &refused.reason else {
        panic!("{refused}");
    };
    assert_names_the_stray(reason);
    io.deliver(arrival("a-1")).await.expect("a matching event");
    let output = machine.run_with(greetings(), &io).await.expect("runs");
    assert_eq!(output, json!("\"Hola\" \"Ann\""));
}

/// A plain `Io::standalone()` learns the definitions when the run starts: an event delivered
/// before is checked then (the run refuses to start, naming it), and one delivered after is
/// given back at once.
#[tokio::test(start_paused = true)]
async fn a_standalone_io_checks_its_events_when_the_run_starts() {
    let machine = greeting::GreetingWorkflow::new(Greets);
    let io = swf_runtime::Io::standalone();
    io.deliver(stray("early"))
        .await
        .expect("held: the definitions are not known yet");
    let started = tokio::time::Instant::now();
    let error = machine
        .run_with(greetings(), &io)
        .await
        .expect_err("refused at once rather than waiting forever");
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(error.error().name, swf_runtime::EVENT_ERROR);
    assert_names_the_stray(&error.error().message);
    assert!(error.error().message.contains("`early`"), "{error}");
    assert_eq!(error.data(), &greetings(), "the input is kept");

    let io = swf_runtime::Io::standalone();
    let state = machine.start_with(greetings(), &io).expect("starts");
    let refused = io.deliver(stray("late")).await.expect_err("known now");
    assert_names_the_stray(&refused.reason.to_string());
    io.deliver(arrival("a-1")).await.expect("a matching event");
    let done = machine.step_with(state, &io).await.expect("steps");
    assert_eq!(
        done,
        greeting::GreetingState::Completed {
            output: json!("\"Hola\" \"Ann\"")
        }
    );
    assert!(
        io.deliver(arrival("a-2")).await.is_ok(),
        "a standalone instance's inbox only ends with its host"
    );
}

/// A saved state stepped with a new `Io` that holds an event no definition matches: the step
/// refuses, keeping the state as the error's data.
#[tokio::test(start_paused = true)]
async fn a_state_stepped_on_a_new_io_keeps_its_data_when_a_held_event_matches_nothing() {
    let machine = greeting::GreetingWorkflow::new(Greets);
    let state = machine
        .start_with(greetings(), &swf_runtime::Io::standalone())
        .expect("starts");
    let saved = swf_runtime::serde_json::to_value(&state).expect("a state serializes");
    let io = swf_runtime::Io::standalone();
    io.deliver(stray("held")).await.expect("held");
    let error = machine.step_with(state, &io).await.expect_err("refused");
    assert_eq!(error.error().name, swf_runtime::EVENT_ERROR);
    assert_eq!(error.data(), &saved);
    assert_eq!(error.task(), "WaitForCustomerToArrive");
}
