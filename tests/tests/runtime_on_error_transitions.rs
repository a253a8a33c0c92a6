//! An onError definition whose transition has a condition: the condition is checked on the data
//! handed to the target (the task data with the error merged in), and a false one halts the run
//! with a `TransitionConditionError`.
//!
//! Kept apart from `runtime_errors.rs` because such a workflow did not compile (the generated
//! code wrote `return let outcome = …`), which would have hidden every other error test.

use std::sync::Mutex;

use swf_runtime::{FunctionError, Value, json};

mod guarded {
    swf_runtime::workflow!("workflows/runtime/on-error-guarded.sw.yaml");
}

use guarded::OnErrorGuardedWorkflow;

/// A `work` function that fails with `Guarded` and records its arguments.
#[derive(Default)]
struct Failing {
    calls: Mutex<Vec<Value>>,
}

impl guarded::OnErrorGuardedFunctions for Failing {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.lock().unwrap().push(args);
        Err(FunctionError::named("Guarded", "g"))
    }
}

#[tokio::test]
async fn a_true_condition_lets_the_handler_transition_proceed() {
    let workflow = OnErrorGuardedWorkflow::new(Failing::default());
    let output = workflow.run(json!({"allowed": true})).await.unwrap();
    assert_eq!(
        output,
        json!({
            "allowed": true,
            "error": {"name": "Guarded", "message": "g", "trace": ""},
            "handled": true
        })
    );
    assert_eq!(
        *workflow.functions().calls.lock().unwrap(),
        [json!({"allowed": true})]
    );
}

#[tokio::test]
async fn a_false_condition_halts_the_run() {
    let workflow = OnErrorGuardedWorkflow::new(Failing::default());
    let err = workflow.run(json!({"allowed": false})).await.unwrap_err();
    assert_eq!(err.workflow(), "on-error-guarded");
    assert_eq!(err.task(), "Work");
    assert_eq!(err.error().name, "TransitionConditionError");
    assert_eq!(
        err.error().message,
        "the condition `$.allowed eq true and $.error.message eq 'g'` of the transition from \
         `Work` to `Handle` is false"
    );
    assert_eq!(
        err.data(),
        &json!({
            "allowed": false,
            "error": {"name": "Guarded", "message": "g", "trace": ""}
        })
    );
}
