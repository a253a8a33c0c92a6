//! The four shapes of issue 10, each a workflow compiled by `workflow!` with the functions it
//! calls, and the same work written by hand in async Rust: seq10 (ten calls, each merging its
//! result), switch + 1 call, parallel4 (four branches, one call each) and foreach1000 (one call
//! per element). Shared by the benches that time them (`sequential`, `concurrency`) and by
//! `instructions`, which runs one of them for callgrind to count.

#![allow(dead_code, reason = "each bench uses some of the shapes")]

use swf_runtime::{FunctionError, Value, json};

pub mod ten_steps {
    swf_runtime::workflow!("benches/ten_steps.sw.yaml");
}
pub mod switch_then_call {
    swf_runtime::workflow!("benches/switch.sw.yaml");
}
pub mod fan_out {
    swf_runtime::workflow!("benches/fan_out.sw.yaml");
}
pub mod for_each {
    swf_runtime::workflow!("benches/for_each.sw.yaml");
}

use fan_out::FanOutBenchFunctions;
use for_each::ForEachBenchFunctions;
use switch_then_call::SwitchThenCallFunctions;
use ten_steps::TenStepsFunctions;

/// The function of seq10 and of the switch: `{"total": total + n}`.
pub struct Adder;

fn add(args: &Value) -> Value {
    let total = args["total"].as_i64().unwrap_or(0) + args["n"].as_i64().unwrap_or(0);
    json!({ "total": total })
}

impl TenStepsFunctions for Adder {
    async fn step(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(add(&args))
    }
}

impl SwitchThenCallFunctions for Adder {
    async fn step(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(add(&args))
    }
}

/// The function of parallel4 and foreach1000: `{"n": 2 × n}`.
#[derive(Clone, Copy)]
pub struct Work;

fn work(args: &Value) -> Value {
    json!({ "n": args["n"].as_i64().unwrap_or(0) * 2 })
}

impl FanOutBenchFunctions for Work {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(work(&args))
    }
}

impl ForEachBenchFunctions for Work {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(work(&args))
    }
}

/// seq10 by hand: build the arguments, call, merge the result, ten times.
pub async fn seq10_by_hand(functions: &Adder, input: Value) -> Result<Value, FunctionError> {
    let mut data = input;
    for n in 1..=10 {
        let args = json!({ "n": n, "total": data["total"].clone() });
        let result = TenStepsFunctions::step(functions, args).await?;
        if let (Value::Object(data), Value::Object(result)) = (&mut data, result) {
            data.extend(result);
        }
    }
    Ok(data)
}

/// The switch workflow by hand: the same test of `total`, then the call and the merge.
pub async fn switch_by_hand(functions: &Adder, input: Value) -> Result<Value, FunctionError> {
    let mut data = input;
    let n = if data["total"].as_f64().is_some_and(|total| total > 5.0) {
        1
    } else {
        2
    };
    let args = json!({ "n": n, "total": data["total"].clone() });
    let result = SwitchThenCallFunctions::step(functions, args).await?;
    if let (Value::Object(data), Value::Object(result)) = (&mut data, result) {
        data.extend(result);
    }
    Ok(data)
}

/// Four concurrent calls, each result written into the data under its own key.
pub async fn fan_out_by_hand(functions: Work, input: Value) -> Result<Value, FunctionError> {
    let (a, b, c, d) = tokio::join!(
        FanOutBenchFunctions::work(&functions, json!({"n": 1})),
        FanOutBenchFunctions::work(&functions, json!({"n": 2})),
        FanOutBenchFunctions::work(&functions, json!({"n": 3})),
        FanOutBenchFunctions::work(&functions, json!({"n": 4})),
    );
    let mut data = input;
    for (key, result) in [("a", a?), ("b", b?), ("c", c?), ("d", d?)] {
        if let Value::Object(members) = &mut data {
            members.insert(key.to_owned(), result);
        }
    }
    Ok(data)
}

/// One call per item, the doubled values collected in item order.
pub async fn for_each_by_hand(functions: Work, input: Value) -> Result<Value, FunctionError> {
    let items = input["items"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        let result = ForEachBenchFunctions::work(&functions, json!({ "n": item })).await?;
        results.push(result["n"].clone());
    }
    let mut data = input;
    if let Value::Object(members) = &mut data {
        members.insert("results".to_owned(), Value::Array(results));
    }
    Ok(data)
}

/// The same, giving each call what a foreach iteration gets by the draft's rule: a copy of the
/// whole task data with the item added. This is the copy the compiled version would pay for
/// without sharing the collection.
pub async fn for_each_by_hand_copying(
    functions: Work,
    input: Value,
) -> Result<Value, FunctionError> {
    let items = input["items"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        let mut iteration = input.clone();
        if let Value::Object(members) = &mut iteration {
            members.insert("item".to_owned(), item);
        }
        let result =
            ForEachBenchFunctions::work(&functions, json!({ "n": iteration["item"] })).await?;
        results.push(result["n"].clone());
    }
    let mut data = input;
    if let Value::Object(members) = &mut data {
        members.insert("results".to_owned(), Value::Array(results));
    }
    Ok(data)
}

/// foreach1000's input: `{"items": [0, 1, ..., 999]}`.
pub fn thousand_items() -> Value {
    json!({ "items": (0..1000).collect::<Vec<i64>>() })
}
