//! The two kebab-case drafts, compiled by the macro and run: switch choices of every form with
//! every operator on real data, delays in seconds and in ISO 8601 (paused time), retries that
//! hand over to their `next-state` once spent, and parallel states whose output is the array of
//! their branches' outputs.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use swf_runtime::{FunctionError, Value, json};
use tokio::time::Instant;

mod second_route {
    swf_runtime::workflow!("workflows/kebab/second-route.sw.yaml");
}
mod second_flow {
    swf_runtime::workflow!("workflows/kebab/second-flow.sw.yaml");
}
mod first_route {
    swf_runtime::workflow!("workflows/kebab/first-route.sw.yaml");
}
mod first_flow {
    swf_runtime::workflow!("workflows/kebab/first-flow.sw.yaml");
}

use first_flow::FirstFlowWorkflow;
use first_route::FirstRouteWorkflow;
use second_flow::SecondFlowWorkflow;
use second_route::SecondRouteWorkflow;

// ---------------------------------------------------------------------------------------------
// Switch choices

/// `mark` returns its arguments, so the route a run took is in its output.
struct Echo;

impl second_route::SecondRouteFunctions for Echo {
    async fn mark(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

impl first_route::FirstRouteFunctions for Echo {
    async fn mark(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

#[tokio::test]
async fn second_draft_choices_on_numbers_and_strings() {
    let cases = [
        // `StrGT`: "95" > "9" as text.
        (json!({"n": 95}), "StrGreater"),
        // "10" < "9" as text; as numbers every comparison of the `and` holds.
        (json!({"n": 10}), "Numbers"),
        (json!({"n": 10.0}), "Numbers"),
        // A string "10" compares as text: "10" > "9" fails, and `or` and `not` decide.
        (json!({"n": "10"}), "Neither"),
        (json!({"s": "b"}), "Strings"),
        (json!({"s": "ba"}), "Neither"),
        (json!({"legacy": 7}), "Legacy"),
        (json!({"legacy": 4}), "Neither"),
        (json!({"n": 150}), "Either"),
        (json!({"s": "z"}), "Either"),
        // `not` fails once one of its comparisons holds.
        (json!({"n": -1}), "Otherwise"),
        (json!({"s": "A"}), "Otherwise"),
    ];
    for (input, route) in cases {
        let output = SecondRouteWorkflow::new(Echo)
            .run(input.clone())
            .await
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        let mut expected = input.clone();
        expected["route"] = json!(route);
        assert_eq!(output, expected, "{input}");
    }
}

#[tokio::test]
async fn first_draft_conditions_nest() {
    let cases = [
        (json!({"n": 10}), "Ten"),
        (json!({"n": 50}), "Small"),
        (json!({"n": 5000}), "BigOrEarly"),
        (json!({"n": 50, "s": "b"}), "BigOrEarly"),
        // `not (s == a or n < 0)` fails: the last choice takes it.
        (json!({"n": 50, "s": "a"}), "Small"),
        (json!({"n": -3, "s": "b"}), "Small"),
        (json!({"n": -10, "s": "b"}), "Other"),
        // A string "50" compares as text: not <= "100", but >= "1000".
        (json!({"n": "50"}), "BigOrEarly"),
    ];
    for (input, route) in cases {
        let output = FirstRouteWorkflow::new(Echo)
            .run(input.clone())
            .await
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        let mut expected = input.clone();
        expected["route"] = json!(route);
        assert_eq!(output, expected, "{input}");
    }
}

// ---------------------------------------------------------------------------------------------
// Delays, retries, parallel states

/// Functions that record when they were called; `charge` declines a set number of times.
struct Shop {
    epoch: Instant,
    declines: AtomicU32,
    charge_takes: Duration,
    calls: Mutex<Vec<(&'static str, Value, u64)>>,
}

impl Shop {
    fn new(declines: u32) -> Self {
        Shop {
            epoch: Instant::now(),
            declines: AtomicU32::new(declines),
            charge_takes: Duration::ZERO,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, function: &'static str, args: Value) {
        let at = self.epoch.elapsed().as_secs();
        self.calls.lock().unwrap().push((function, args, at));
    }

    /// When each call of `function` started, in whole seconds.
    fn times_of(&self, function: &str) -> Vec<u64> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|c| c.0 == function)
            .map(|c| c.2)
            .collect()
    }

    fn args_of(&self, function: &str) -> Vec<Value> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|c| c.0 == function)
            .map(|c| c.1.clone())
            .collect()
    }

    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("charge", args);
        tokio::time::sleep(self.charge_takes).await;
        let declined = self
            .declines
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if declined {
            return Err(FunctionError::named("CardDeclined", "insufficient funds"));
        }
        Ok(json!({"id": "p1"}))
    }

    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("receipt", args);
        tokio::time::sleep(Duration::from_secs(2)).await;
        Ok(json!({"receipt": "r1"}))
    }

    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("ship", args);
        Ok(json!({"shipped": true}))
    }

    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("notify", args.clone());
        Ok(json!({"notified": args["reason"]}))
    }
}

impl second_flow::SecondFlowFunctions for Shop {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::charge(self, args).await
    }
    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::receipt(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::notify(self, args).await
    }
}

impl first_flow::FirstFlowFunctions for Shop {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::charge(self, args).await
    }
    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::receipt(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::notify(self, args).await
    }
}

/// What each branch outputs when the charge went through: its copy of the data, with its own
/// result merged in.
fn branch_outputs() -> Value {
    let paid = json!({"amount": 5, "payment": {"id": "p1"}});
    let mut receipt = paid.clone();
    receipt["receipt"] = json!("r1");
    let mut shipping = paid;
    shipping["shipped"] = json!(true);
    json!([receipt, shipping])
}

#[tokio::test(start_paused = true)]
async fn second_draft_delay_retry_and_parallel_array() {
    let shop = Shop::new(2);
    let workflow = SecondFlowWorkflow::new(shop);
    let started = Instant::now();
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    // PT1M, then two declines 10 s apart, then the slower branch's PT5S.
    assert_eq!(started.elapsed(), Duration::from_secs(60 + 20 + 5));
    let shop = workflow.functions();
    assert_eq!(shop.times_of("charge"), [60, 70, 80]);
    assert_eq!(shop.args_of("charge")[0], json!({"amount": 5}));
    // Both branches start together; the output array is in branch order, not finishing order.
    assert_eq!(shop.times_of("receipt"), [80]);
    assert_eq!(shop.times_of("ship"), [85]);
    assert_eq!(output, branch_outputs());
    assert!(shop.times_of("notify").is_empty());
}

#[tokio::test(start_paused = true)]
async fn second_draft_spent_retries_take_their_next_state() {
    let workflow = SecondFlowWorkflow::new(Shop::new(u32::MAX));
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    let shop = workflow.functions();
    // `R3/PT10S`: three retries, ten seconds apart; then the retry's `next-state`.
    assert_eq!(shop.times_of("charge"), [60, 70, 80, 90]);
    assert_eq!(shop.times_of("notify"), [90]);
    assert_eq!(shop.args_of("notify"), [json!({"reason": "CardDeclined"})]);
    assert_eq!(output["notified"], json!("CardDeclined"));
    assert_eq!(output["error"]["name"], json!("CardDeclined"));
    assert!(shop.times_of("receipt").is_empty());
}

#[tokio::test(start_paused = true)]
async fn second_draft_action_timeout_is_not_the_retried_error() {
    let mut shop = Shop::new(0);
    shop.charge_takes = Duration::from_secs(31);
    let workflow = SecondFlowWorkflow::new(shop);
    let error = workflow.run(json!({"amount": 5})).await.unwrap_err();
    assert_eq!(error.task(), "Charge");
    assert_eq!(error.error().name, "TimeoutError");
    assert_eq!(workflow.functions().times_of("charge"), [60]);
}

#[tokio::test(start_paused = true)]
async fn first_draft_delay_retry_and_parallel_array() {
    let workflow = FirstFlowWorkflow::new(Shop::new(1));
    let started = Instant::now();
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    // 60 s, one decline and a retry 10 s later, then the 5 s branch.
    assert_eq!(started.elapsed(), Duration::from_secs(60 + 10 + 5));
    let shop = workflow.functions();
    assert_eq!(shop.times_of("charge"), [60, 70]);
    assert_eq!(shop.times_of("ship"), [75]);
    assert_eq!(output, branch_outputs());
}

#[tokio::test(start_paused = true)]
async fn first_draft_spent_retries_take_their_next_state() {
    let workflow = FirstFlowWorkflow::new(Shop::new(u32::MAX));
    // `Failed` is an END state with status FAILURE; what the run returns for it is checked
    // below with the other END states.
    let _ = workflow.run(json!({"amount": 5})).await;
    let shop = workflow.functions();
    // `max-retry: 2`, `retry-interval: 10` (seconds).
    assert_eq!(shop.times_of("charge"), [60, 70, 80]);
    assert_eq!(shop.args_of("notify"), [json!({"reason": "CardDeclined"})]);
    assert_eq!(shop.times_of("notify"), [80]);
}
