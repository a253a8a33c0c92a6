//! One of the four shapes of issue 10 run `SWF_RUNS` times (default 1,000; foreach1000: 20),
//! compiled (`SWF_SIDE=compiled`, the default) or by hand (`SWF_SIDE=by-hand`), on a
//! current-thread runtime, for callgrind to count its instructions: a figure that, unlike time,
//! the machine's load does not change. Without `SWF_SHAPE` it says how to use it and does
//! nothing (so `cargo bench` passes over it).
//!
//! ```text
//! cargo bench -p swf-tests --bench instructions --no-run   # prints the binary's path
//! SWF_SHAPE=foreach1000 valgrind --tool=callgrind target/release/deps/instructions-<hash>
//! ```
//!
//! Divide the total by the runs (and foreach1000's by its 1,000 items for a figure per
//! iteration); the runtime's creation and the inputs are counted too, a few thousand
//! instructions in all.

mod shapes;

use std::future::Future;

use swf_runtime::{Value, json};

use shapes::switch_then_call::SwitchThenCallWorkflow;
use shapes::ten_steps::TenStepsWorkflow;
use shapes::{Adder, Work, fan_out::FanOutBenchWorkflow, for_each::ForEachBenchWorkflow};

/// Runs `runs` times what `run` makes of a fresh `input()`.
fn repeat<F: Future>(runs: usize, input: impl Fn() -> Value, run: impl Fn(Value) -> F) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    for _ in 0..runs {
        drop(runtime.block_on(run(input())));
    }
}

fn refuse(message: &str) -> ! {
    eprintln!("instructions: {message}");
    std::process::exit(2)
}

fn main() {
    let Ok(shape) = std::env::var("SWF_SHAPE") else {
        println!(
            "instructions: set SWF_SHAPE to seq10, switch, parallel4 or foreach1000 (SWF_SIDE: \
             compiled or by-hand; SWF_RUNS) and run under valgrind --tool=callgrind"
        );
        return;
    };
    let by_hand = match std::env::var("SWF_SIDE").as_deref() {
        Ok("by-hand") => true,
        Ok("compiled") | Err(_) => false,
        Ok(other) => refuse(&format!("SWF_SIDE is compiled or by-hand, not {other}")),
    };
    let runs = |default: usize| {
        std::env::var("SWF_RUNS")
            .ok()
            .and_then(|runs| runs.parse().ok())
            .unwrap_or(default)
    };
    let total = || json!({"total": 0});
    let seven = || json!({"total": 7});
    let empty = || json!({});
    match (shape.as_str(), by_hand) {
        ("seq10", false) => {
            let machine = TenStepsWorkflow::new(Adder);
            repeat(runs(1_000), total, |input| machine.run(input));
        }
        ("seq10", true) => repeat(runs(1_000), total, |input| {
            shapes::seq10_by_hand(&Adder, input)
        }),
        ("switch", false) => {
            let machine = SwitchThenCallWorkflow::new(Adder);
            repeat(runs(1_000), seven, |input| machine.run(input));
        }
        ("switch", true) => repeat(runs(1_000), seven, |input| {
            shapes::switch_by_hand(&Adder, input)
        }),
        ("parallel4", false) => {
            let machine = FanOutBenchWorkflow::new(Work);
            repeat(runs(1_000), empty, |input| machine.run(input));
        }
        ("parallel4", true) => repeat(runs(1_000), empty, |input| {
            shapes::fan_out_by_hand(Work, input)
        }),
        ("foreach1000", false) => {
            let machine = ForEachBenchWorkflow::new(Work);
            repeat(runs(20), shapes::thousand_items, |input| machine.run(input));
        }
        ("foreach1000", true) => repeat(runs(20), shapes::thousand_items, |input| {
            shapes::for_each_by_hand(Work, input)
        }),
        (other, _) => refuse(&format!(
            "SWF_SHAPE is seq10, switch, parallel4 or foreach1000, not {other}"
        )),
    }
}
