//! Compensation (`compensatedBy`, `usedForCompensation`, `compensate: true`): completed tasks are
//! undone in reverse order of completion, each by a chain of compensation tasks whose output is
//! the data, when an end, a transition or an onError transition asks for it; per scope; across
//! saved states; and a failure during compensation reports both errors with the data.

use std::sync::Mutex;

use swf_runtime::{ErrorObject, FunctionError, Io, Value, json, serde_json};

mod saga {
    swf_runtime::workflow!("workflows/compensation/saga.sw.yaml");
}
mod scopes {
    swf_runtime::workflow!("workflows/compensation/scopes.sw.yaml");
}
mod halt {
    swf_runtime::workflow!("workflows/compensation/halt.sw.yaml");
}
mod combos {
    swf_runtime::workflow!("workflows/compensation/combos.sw.yaml");
}

use saga::{SagaState, SagaWorkflow};

/// Books and cancels by name, records every call in order; `charge` declines when the mode is
/// `decline`; `cancel` fails for the item named in `failing_cancel`.
#[derive(Default)]
struct Travel {
    calls: Mutex<Vec<String>>,
    failing_cancel: Option<&'static str>,
}

impl Travel {
    fn failing(item: &'static str) -> Self {
        Travel {
            failing_cancel: Some(item),
            ..Travel::default()
        }
    }

    fn note(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

fn what(args: &Value) -> String {
    args["what"].as_str().unwrap_or("?").to_owned()
}

impl saga::SagaFunctions for Travel {
    async fn book(&self, args: Value) -> Result<Value, FunctionError> {
        self.note(format!("book {}", what(&args)));
        Ok(json!({"booked": [what(&args)]}))
    }

    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.note("charge".to_owned());
        if args["mode"] == "decline" {
            return Err(FunctionError::named("CardDeclined", "no funds"));
        }
        Ok(json!({"charged": true}))
    }

    async fn cancel(&self, args: Value) -> Result<Value, FunctionError> {
        let item = what(&args);
        self.note(format!("cancel {item}"));
        if self.failing_cancel == Some(item.as_str()) {
            return Err(FunctionError::new(format!("cannot cancel the {item}")));
        }
        Ok(json!({"cancelled": [item]}))
    }
}

const BOOKINGS: [&str; 2] = ["book flight", "book hotel"];

fn calls(list: &[&str]) -> Vec<String> {
    list.iter().map(|c| (*c).to_owned()).collect()
}

#[tokio::test]
async fn without_compensation_nothing_is_undone() {
    let workflow = SagaWorkflow::new(Travel::default());
    let output = workflow.run(json!({"mode": "keep"})).await.unwrap();
    assert_eq!(
        output,
        json!({"mode": "keep", "booked": ["flight", "hotel"], "charged": true})
    );
    assert_eq!(
        workflow.functions().calls(),
        calls(&[BOOKINGS[0], BOOKINGS[1], "charge"])
    );
}

#[tokio::test]
async fn an_end_with_compensate_undoes_in_reverse_order_through_the_chains() {
    let workflow = SagaWorkflow::new(Travel::default());
    let output = workflow.run(json!({"mode": "undo-at-end"})).await.unwrap();
    // The hotel, booked last, is cancelled first; its chain goes on to RefundDeposit; then the
    // flight. Each chain's output is the next one's input, and the last one's is the output.
    assert_eq!(
        workflow.functions().calls(),
        calls(&[
            BOOKINGS[0],
            BOOKINGS[1],
            "charge",
            "cancel hotel",
            "cancel flight"
        ])
    );
    assert_eq!(
        output,
        json!({
            "mode": "undo-at-end",
            "booked": ["flight", "hotel"],
            "charged": true,
            "calledOff": true,
            "cancelled": ["hotel", "flight"],
            "deposit": "refunded"
        })
    );
}

#[tokio::test]
async fn a_transition_with_compensate_undoes_before_entering_its_target() {
    let workflow = SagaWorkflow::new(Travel::default());
    let output = workflow
        .run(json!({"mode": "undo-by-transition"}))
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({
            "mode": "undo-by-transition",
            "booked": ["flight", "hotel"],
            "charged": true,
            "cancelled": ["hotel", "flight"],
            "deposit": "refunded",
            "tripCancelled": true
        })
    );
    assert_eq!(
        workflow.functions().calls()[3..],
        calls(&["cancel hotel", "cancel flight"])
    );
}

#[tokio::test]
async fn an_on_error_transition_with_compensate_undoes_what_completed() {
    let workflow = SagaWorkflow::new(Travel::default());
    let output = workflow.run(json!({"mode": "decline"})).await.unwrap();
    assert_eq!(
        output,
        json!({
            "mode": "decline",
            "booked": ["flight", "hotel"],
            "error": {"name": "CardDeclined", "message": "no funds", "trace": ""},
            "cancelled": ["hotel", "flight"],
            "deposit": "refunded",
            "failed": true
        })
    );
    assert_eq!(
        workflow.functions().calls(),
        calls(&[
            BOOKINGS[0],
            BOOKINGS[1],
            "charge",
            "cancel hotel",
            "cancel flight"
        ])
    );
}

#[tokio::test]
async fn a_failure_during_compensation_reports_both_errors_with_the_data() {
    let workflow = SagaWorkflow::new(Travel::failing("flight"));
    let err = workflow.run(json!({"mode": "decline"})).await.unwrap_err();
    assert_eq!(err.workflow(), "saga");
    assert_eq!(err.task(), "CancelFlight");
    assert_eq!(err.compensated_task(), Some("BookFlight"));
    assert_eq!(err.error().name, ErrorObject::FUNCTION_EXECUTION);
    assert_eq!(err.error().message, "cannot cancel the flight");
    assert_eq!(
        err.compensating(),
        Some(&ErrorObject::new("CardDeclined", "no funds"))
    );
    // The data when the compensation failed: the hotel's chain had run.
    assert_eq!(
        err.data(),
        &json!({
            "mode": "decline",
            "booked": ["flight", "hotel"],
            "error": {"name": "CardDeclined", "message": "no funds", "trace": ""},
            "cancelled": ["hotel"],
            "deposit": "refunded"
        })
    );
    assert_eq!(
        err.to_string(),
        "workflow `saga` failed in task `CancelFlight` while compensating `BookFlight`: \
         FunctionExecutionError: cannot cancel the flight (the compensation followed \
         CardDeclined: no funds)"
    );
}

#[tokio::test]
async fn a_failure_in_a_compensation_asked_by_an_end_has_no_original_error() {
    let workflow = SagaWorkflow::new(Travel::failing("hotel"));
    let err = workflow
        .run(json!({"mode": "undo-at-end"}))
        .await
        .unwrap_err();
    assert_eq!(err.task(), "CancelHotel");
    assert_eq!(err.compensated_task(), Some("BookHotel"));
    assert_eq!(err.compensating(), None);
    assert_eq!(err.error().message, "cannot cancel the hotel");
    assert_eq!(err.data()["calledOff"], json!(true));
    // The flight is not cancelled once the hotel's compensation failed.
    assert_eq!(workflow.functions().calls()[3..], calls(&["cancel hotel"]));
}

#[tokio::test]
async fn a_saved_state_carries_the_log_and_still_compensates() {
    let workflow = SagaWorkflow::new(Travel::default());
    let mut state = workflow
        .start(json!({"mode": "undo-by-transition"}))
        .unwrap();
    let mut saved_logs = Vec::new();
    while state.output().is_none() {
        // Save and restore between every two steps, as a durable caller would.
        let text = serde_json::to_string(&state).unwrap();
        let saved: Value = serde_json::from_str(&text).unwrap();
        if let Some((task, fields)) = saved.as_object().and_then(|o| o.iter().next()) {
            let mut fields = fields.clone();
            if let Some(fields) = fields.as_object_mut() {
                fields.remove("data");
            }
            saved_logs.push(json!({task: fields}));
        }
        state = serde_json::from_str::<SagaState>(&text).unwrap();
        state = workflow.step(state).await.unwrap();
    }
    // The log as saved before each task ran: each booking as it completed; then each
    // compensation task is a saved step of its own (a crash resumes the compensation where it
    // was, with the tasks still to compensate); after it, the target starts with an empty log.
    let in_compensation = |task: &str, remaining: &[&str]| {
        let mut compensating = json!({"task": task, "resume": 1});
        if !remaining.is_empty() {
            compensating["remaining"] = json!(remaining);
        }
        json!({"compensating": compensating})
    };
    assert_eq!(
        saved_logs,
        [
            json!({"BookFlight": {"compensations": []}}),
            json!({"BookHotel": {"compensations": ["BookFlight"]}}),
            json!({"Charge": {"compensations": ["BookFlight", "BookHotel"]}}),
            json!({"Decide": {"compensations": ["BookFlight", "BookHotel"]}}),
            json!({"CancelHotel": in_compensation("BookHotel", &["BookFlight"])}),
            json!({"RefundDeposit": in_compensation("BookHotel", &["BookFlight"])}),
            json!({"CancelFlight": in_compensation("BookFlight", &[])}),
            json!({"Cancelled": {"compensations": []}}),
        ]
    );
    assert_eq!(state.output().unwrap()["tripCancelled"], json!(true));
    assert_eq!(
        workflow.functions().calls()[3..],
        calls(&["cancel hotel", "cancel flight"])
    );
}

#[tokio::test]
async fn a_saved_log_naming_an_unknown_task_fails_with_a_compensation_error() {
    let workflow = SagaWorkflow::new(Travel::default());
    let saved = json!({"CallOff": {"data": {"x": 1}, "compensations": ["Gone"]}});
    let state: SagaState = serde_json::from_value(saved).unwrap();
    let err = workflow.step(state).await.unwrap_err();
    assert_eq!(err.error().name, swf_runtime::COMPENSATION_ERROR);
    assert_eq!(err.task(), "Gone");
    assert!(err.error().message.contains("`Gone`"), "{err}");
    assert_eq!(err.data(), &json!({"x": 1, "calledOff": true}));
}

/// Records the `undo` argument of each call and returns its `result`.
#[derive(Default)]
struct Notes(Mutex<Vec<String>>);

impl scopes::ScopesFunctions for Notes {
    async fn note(&self, args: Value) -> Result<Value, FunctionError> {
        let undo = args["undo"].as_str().unwrap_or("?").to_owned();
        self.0.lock().unwrap().push(undo);
        Ok(args["result"].clone())
    }
}

#[tokio::test]
async fn each_scope_compensates_its_own_tasks() {
    let workflow = scopes::ScopesWorkflow::new(Notes::default());
    let output = workflow.run(json!({})).await.unwrap();
    assert_eq!(output, json!({"outer": "undone", "inner": "undone"}));
    // The branch's end undid `Inner` only; the workflow's end undid `Outer` only.
    assert_eq!(*workflow.functions().0.lock().unwrap(), ["inner", "outer"]);
}

#[tokio::test]
async fn a_compensation_that_terminates_ends_the_instance() {
    struct NoFunctions;
    impl halt::HaltFunctions for NoFunctions {}
    let workflow = halt::HaltWorkflow::new(NoFunctions);
    let io = Io::standalone();
    let mut state = workflow.start_with(json!({}), &io).unwrap();
    while state.output().is_none() {
        state = workflow.step_with(state, &io).await.unwrap();
    }
    assert_eq!(
        state,
        halt::HaltState::Terminated {
            output: json!({"worked": true, "finished": true, "aborted": true})
        }
    );
}

/// `flaky`: each step fails with `Busy` on its first call; `release` then fails with `Gone`
/// when `release_gone` is set. Records every call.
#[derive(Default)]
struct Flaky {
    calls: Mutex<Vec<String>>,
    release_gone: bool,
}

impl combos::CombosFunctions for Flaky {
    async fn flaky(&self, args: Value) -> Result<Value, FunctionError> {
        let step = args["step"].as_str().unwrap_or("?").to_owned();
        let attempt = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(step.clone());
            calls.iter().filter(|c| **c == step).count()
        };
        match (step.as_str(), attempt) {
            (_, 1) => Err(FunctionError::named("Busy", "try again")),
            ("release", _) if self.release_gone => Err(FunctionError::named("Gone", "nothing")),
            _ => Ok(json!({ step: true })),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn compensation_works_with_retries_handlers_iterations_and_events() {
    for release_gone in [false, true] {
        let workflow = combos::CombosWorkflow::new(Flaky {
            release_gone,
            ..Flaky::default()
        });
        let io = Io::standalone();
        let output = workflow
            .run_with(json!({"items": ["ok", "bad"]}), &io)
            .await
            .unwrap();
        // Each iteration compensates only its own `Take`: the `bad` one is undone.
        assert_eq!(output["results"][0]["taken"], json!(true));
        assert_eq!(output["results"][1]["taken"], json!(false));
        // The end's compensation ran `Release` (retried once) and its chain.
        assert_eq!(output["released"], json!(true));
        assert_eq!(output["reserve"], json!(true));
        let (release, gone) = if release_gone {
            (json!(null), json!("Gone"))
        } else {
            (json!(true), json!(null))
        };
        assert_eq!(output["release"], release);
        assert_eq!(output["error"]["name"], gone);
        // The event is produced after the compensation, with its output.
        let produced = io.take_produced();
        assert_eq!(produced.len(), 1);
        assert_eq!(swf_runtime::event_data(&produced[0]), output);
        assert_eq!(
            *workflow.functions().calls.lock().unwrap(),
            ["reserve", "reserve", "release", "release"]
        );
    }
}
