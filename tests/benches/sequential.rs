//! A 10-task sequential workflow compiled by `workflow!` against the same ten steps written by
//! hand in async Rust: each step calls the function with `{n, total}` and merges its result
//! (`{"total": total + n}`) into the data. Also a switch on a number followed by one such call,
//! against the same `if` and call by hand. Run with `cargo bench -p swf-tests --bench
//! sequential`.

mod ratio;
mod shapes;

use std::future::Future;
use swf_runtime::json;

use shapes::ten_steps::TenStepsWorkflow;
use shapes::{Adder, seq10_by_hand, switch_by_hand, switch_then_call};

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
    bencher.bench_local(|| runtime.block_on(seq10_by_hand(&Adder, json!({"total": 0}))));
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
    let by_hand = block_on(seq10_by_hand(&Adder, json!({"total": 0})));
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
        |input| drop(runtime.block_on(seq10_by_hand(&Adder, input))),
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
