//! A 10-task sequential workflow compiled by `workflow!` against the same ten steps written by
//! hand in async Rust: each step calls the function with `{n, total}` and merges its result
//! (`{"total": total + n}`) into the data. Also a switch on a number followed by one such call,
//! against the same `if` and call by hand. Run with `cargo bench -p swf-tests --bench
//! sequential`.

mod ratio;

use std::future::Future;
use swf_runtime::{FunctionError, Value, json};

swf_runtime::workflow!("benches/ten_steps.sw.yaml");

mod switch_then_call {
    swf_runtime::workflow!("benches/switch.sw.yaml");
}

struct Adder;

fn add(args: &Value) -> Value {
    let total = args["total"].as_i64().unwrap_or(0) + args["n"].as_i64().unwrap_or(0);
    json!({ "total": total })
}

impl TenStepsFunctions for Adder {
    async fn step(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(add(&args))
    }
}

impl switch_then_call::SwitchThenCallFunctions for Adder {
    async fn step(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(add(&args))
    }
}

/// The switch workflow by hand: the same test of `total`, then the call and the merge.
async fn switch_by_hand(functions: &Adder, input: Value) -> Result<Value, FunctionError> {
    let mut data = input;
    let n = if data["total"].as_f64().is_some_and(|total| total > 5.0) {
        1
    } else {
        2
    };
    let args = json!({ "n": n, "total": data["total"].clone() });
    let result = functions.step(args).await?;
    if let (Value::Object(data), Value::Object(result)) = (&mut data, result) {
        data.extend(result);
    }
    Ok(data)
}

/// The same work as the workflow, by hand: build the arguments, call, merge the result.
async fn hand_written(functions: &Adder, input: Value) -> Result<Value, FunctionError> {
    let mut data = input;
    for n in 1..=10 {
        let args = json!({ "n": n, "total": data["total"].clone() });
        let result = functions.step(args).await?;
        if let (Value::Object(data), Value::Object(result)) = (&mut data, result) {
            data.extend(result);
        }
    }
    Ok(data)
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
        .block_on(future)
}

#[divan::bench]
fn compiled_workflow(bencher: divan::Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let machine = TenStepsWorkflow::new(Adder);
    bencher.bench_local(|| runtime.block_on(machine.run(json!({"total": 0}))));
}

#[divan::bench]
fn hand_written_async(bencher: divan::Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    bencher.bench_local(|| runtime.block_on(hand_written(&Adder, json!({"total": 0}))));
}

#[divan::bench]
fn switch_then_call_compiled(bencher: divan::Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let machine = switch_then_call::SwitchThenCallWorkflow::new(Adder);
    bencher.bench_local(|| runtime.block_on(machine.run(json!({"total": 7}))));
}

#[divan::bench]
fn switch_then_call_by_hand(bencher: divan::Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    bencher.bench_local(|| runtime.block_on(switch_by_hand(&Adder, json!({"total": 7}))));
}

fn main() {
    // Both versions must compute the same thing for the comparison to mean anything.
    let compiled = block_on(TenStepsWorkflow::new(Adder).run(json!({"total": 0})));
    let by_hand = block_on(hand_written(&Adder, json!({"total": 0})));
    assert_eq!(compiled.ok(), by_hand.ok());
    for total in [7, 3] {
        let machine = switch_then_call::SwitchThenCallWorkflow::new(Adder);
        let compiled = block_on(machine.run(json!({ "total": total })));
        let by_hand = block_on(switch_by_hand(&Adder, json!({ "total": total })));
        assert_eq!(compiled.ok(), by_hand.ok());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let ten = TenStepsWorkflow::new(Adder);
    ratio::compare(
        "seq10",
        31,
        2_000,
        || json!({"total": 0}),
        |input| drop(runtime.block_on(ten.run(input))),
        |input| drop(runtime.block_on(hand_written(&Adder, input))),
    );
    let switch = switch_then_call::SwitchThenCallWorkflow::new(Adder);
    ratio::compare(
        "switch + 1 call",
        31,
        5_000,
        || json!({"total": 7}),
        |input| drop(runtime.block_on(switch.run(input))),
        |input| drop(runtime.block_on(switch_by_hand(&Adder, input))),
    );
    divan::main();
}
