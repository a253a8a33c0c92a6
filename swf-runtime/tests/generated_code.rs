//! The runtime used the way generated code uses it: only through `__private`, with paths and
//! regular expressions as `static`s, and state enums deriving serde through the re-export.

use swf_runtime::__private::expr::{self, CompareOp, LazyRegex};
use swf_runtime::__private::switch::{self, Comparison, ConditionOp};
use swf_runtime::__private::{
    self as rt, Duration, ErrorObject, JsonPath, RetryPolicy, RetryProgress, Segment, Value,
};
use swf_runtime::{FunctionError, json};

static INPUT: JsonPath = JsonPath::definite("$.order", &[Segment::Key("order")]);
static RESULT: JsonPath = JsonPath::definite("$.stock", &[Segment::Key("stock")]);
static ERROR_NAME: JsonPath = JsonPath::definite(
    "$.error.name",
    &[Segment::Key("error"), Segment::Key("name")],
);
static CHEAP: JsonPath = JsonPath::query("$.order.items[?(@.price < 10)]");
static SKU: LazyRegex = LazyRegex::new(r"^[A-Z]{3}-\d+$");
static RETRY: RetryPolicy = RetryPolicy::new(Duration::from_secs(1), Duration::from_secs(1), 2);

/// What a generated state enum looks like: serde through the runtime's re-export.
#[derive(Debug, PartialEq, rt::serde::Serialize, rt::serde::Deserialize)]
#[serde(crate = "swf_runtime::__private::serde")]
enum State {
    Check { data: Value, retry: RetryProgress },
    Done { data: Value },
}

async fn check_inventory(args: Value, fail_first: &mut bool) -> Result<Value, FunctionError> {
    if std::mem::take(fail_first) {
        return Err(FunctionError::new("inventory service unavailable"));
    }
    Ok(json!({"available": args["items"].as_array().map_or(0, Vec::len)}))
}

/// One task: input, an action with a results path, a retry on `FunctionExecutionError`.
async fn step(state: State, fail_first: &mut bool) -> Result<State, rt::WorkflowError> {
    let State::Check { mut data, retry } = state else {
        return Ok(state);
    };
    retry.wait().await;
    let args = rt::select_or_null(&INPUT, &data).map_err(|e| fail(e, &data))?;
    let call = check_inventory(args, fail_first);
    match rt::call_action(
        call,
        Some(Duration::from_secs(5)),
        "PT5S",
        "Check",
        "inventory",
    )
    .await
    {
        Ok(result) => {
            RESULT
                .write(&mut data, result)
                .map_err(|e| fail(e, &data))?;
            Ok(State::Done { data })
        }
        Err(error) => {
            rt::merge_data(&mut data, error.wrapped(), "Check", "error data")
                .map_err(|e| fail(e, &data))?;
            let name = expr::operand_path(&ERROR_NAME, &data).map_err(|e| fail(e, &data))?;
            let matches = expr::compare(
                CompareOp::Eq,
                &name,
                &json!(ErrorObject::FUNCTION_EXECUTION),
            );
            match retry.next(0, &RETRY) {
                Some(retry) if matches => Ok(State::Check { data, retry }),
                _ => Err(fail(error, &data)),
            }
        }
    }
}

fn fail(error: ErrorObject, data: &Value) -> rt::WorkflowError {
    rt::WorkflowError {
        workflow: "order".into(),
        task: "Check".into(),
        error,
        data: data.clone(),
    }
}

#[tokio::test(start_paused = true)]
async fn a_task_retries_then_writes_its_result() {
    let input =
        json!({"order": {"items": [{"sku": "ABC-1", "price": 5}, {"sku": "XYZ-2", "price": 50}]}});
    let data = rt::workflow_input("order", "Check", input).unwrap_or_default();
    let mut state = State::Check {
        data,
        retry: RetryProgress::default(),
    };
    let mut fail_first = true;
    let started = rt::tokio::time::Instant::now();
    while matches!(state, State::Check { .. }) {
        // Save and resume at every step, as a durable executor would.
        let saved = rt::serde_json::to_string(&state).unwrap_or_default();
        state = rt::serde_json::from_str(&saved).unwrap_or(State::Done { data: Value::Null });
        state = match step(state, &mut fail_first).await {
            Ok(next) => next,
            Err(err) => panic!("{err}"),
        };
    }
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    let State::Done { data } = state else {
        unreachable!()
    };
    assert_eq!(data["stock"], json!({"available": 2}));
    assert_eq!(data["error"]["name"], json!("FunctionExecutionError"));

    let cheap = rt::select_or_null(&CHEAP, &data).unwrap_or_default();
    assert_eq!(cheap, json!([{"sku": "ABC-1", "price": 5}]));
    let sku = cheap[0].get("sku");
    let condition = switch::data_condition(
        ConditionOp::Matches,
        Comparison::Auto,
        sku,
        SKU.pattern(),
        Some(&SKU),
    );
    assert_eq!(condition, Ok(true));
    let map: rt::Map = rt::Map::new();
    assert!(expr::truthy(&Value::Object(map)));
}

#[test]
fn refused_transitions_and_bad_input_are_workflow_errors() {
    let err = rt::transition_refused("order", "Check", "Ship", "$.paid", json!({}));
    assert_eq!(err.error.name, ErrorObject::CONDITION);
    let err = rt::workflow_input("order", "Check", json!("text"));
    assert_eq!(
        err.map_err(|e| e.error.name),
        Err(ErrorObject::DATA.to_string())
    );
}
