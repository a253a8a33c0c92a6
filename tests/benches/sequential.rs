//! A 10-task sequential workflow compiled by `workflow!` against the same ten steps written by
//! hand in async Rust: each step calls the function with `{n, total}` and merges its result
//! (`{"total": total + n}`) into the data. Run with `cargo bench -p swf-tests`.

use std::future::Future;
use swf_runtime::{FunctionError, Value, json};

swf_runtime::workflow!("benches/ten_steps.sw.yaml");

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

fn main() {
    // Both versions must compute the same thing for the comparison to mean anything.
    let compiled = block_on(TenStepsWorkflow::new(Adder).run(json!({"total": 0})));
    let by_hand = block_on(hand_written(&Adder, json!({"total": 0})));
    assert_eq!(compiled.ok(), by_hand.ok());
    divan::main();
}
