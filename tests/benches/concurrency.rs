//! Parallel branches and foreach iterations compiled by `workflow!`, against the same work
//! written by hand in async Rust. Run with `cargo bench -p swf-tests --bench concurrency`.
//! Before the benches, one foreach over a large collection (`SWF_BENCH_ITEMS`, default
//! 1,000,000 items) reports its time and the process's peak memory.

mod ratio;
mod shapes;

use std::time::{Duration, Instant};

use swf_runtime::{FunctionError, Value, json};

use shapes::{
    Work, fan_out, fan_out_by_hand, for_each, for_each_by_hand, for_each_by_hand_copying,
    thousand_items,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

#[divan::bench]
fn parallel_4_branches_compiled(bencher: divan::Bencher) {
    let runtime = runtime();
    let machine = fan_out::FanOutBenchWorkflow::new(Work);
    bencher.bench_local(|| runtime.block_on(machine.run(json!({}))));
}

#[divan::bench]
fn parallel_4_branches_by_hand(bencher: divan::Bencher) {
    let runtime = runtime();
    bencher.bench_local(|| runtime.block_on(fan_out_by_hand(Work, json!({}))));
}

#[divan::bench]
fn foreach_1000_items_compiled(bencher: divan::Bencher) {
    let runtime = runtime();
    let machine = for_each::ForEachBenchWorkflow::new(Work);
    bencher
        .with_inputs(thousand_items)
        .bench_local_values(|input| runtime.block_on(machine.run(input)));
}

#[divan::bench]
fn foreach_1000_items_by_hand(bencher: divan::Bencher) {
    let runtime = runtime();
    bencher
        .with_inputs(thousand_items)
        .bench_local_values(|input| runtime.block_on(for_each_by_hand(Work, input)));
}

#[divan::bench]
fn foreach_1000_items_by_hand_copying(bencher: divan::Bencher) {
    let runtime = runtime();
    bencher
        .with_inputs(thousand_items)
        .bench_local_values(|input| runtime.block_on(for_each_by_hand_copying(Work, input)));
}

/// The CPU time of the process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// A memory figure of this process from `/proc/self/status` (`VmRSS`: resident now, `VmHWM`:
/// the peak), in bytes.
fn memory(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// One run of the foreach bench workflow over `SWF_BENCH_ITEMS` items: wall and CPU time, and
/// how far the peak resident memory rose above what the process held with its input.
fn large_foreach() {
    let items: i64 = std::env::var("SWF_BENCH_ITEMS")
        .ok()
        .and_then(|value| value.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let runtime = runtime();
    let before = memory("VmRSS");
    let input = json!({ "items": (0..items).collect::<Vec<i64>>() });
    let with_input = memory("VmRSS");
    let cpu = cpu_time();
    let wall = Instant::now();
    let output = runtime
        .block_on(for_each::ForEachBenchWorkflow::new(Work).run(input))
        .expect("the large foreach completes");
    let (wall, cpu) = (wall.elapsed(), cpu_time() - cpu);
    let peak = memory("VmHWM");
    let results = output["results"].as_array().map_or(0, Vec::len);
    assert_eq!(results, usize::try_from(items).unwrap_or(0));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!(
        "foreach over {items} items: {wall:.2?} wall, {cpu:.2?} CPU ({:.0} ns per item); \
         resident memory: {:.0} MiB for the input, peak {:.0} MiB above what the process held \
         before the input",
        cpu.as_nanos() as f64 / items.max(1) as f64,
        mib(with_input.saturating_sub(before)),
        mib(peak.saturating_sub(before)),
    );
}

/// Task data holding an array of 10,000 numbers that parallel4's branches do not read.
fn large_data() -> Value {
    json!({ "items": (0..10_000).collect::<Vec<i64>>() })
}

/// The foreach bench's function, answering after a 1 ms sleep: every iteration waits.
struct Sleepy;

impl for_each::ForEachBenchFunctions for Sleepy {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok(json!({ "n": args["n"] }))
    }
}

/// A foreach over 20,000 items whose calls all wait (1 ms each, concurrently): the cost of
/// starting iterations that wait, as the median CPU time of five runs.
fn waiting_foreach() {
    let runtime = runtime();
    let machine = for_each::ForEachBenchWorkflow::new(Sleepy);
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let input = json!({ "items": (0..20_000).collect::<Vec<i64>>() });
            let cpu = cpu_time();
            let output = runtime.block_on(machine.run(input));
            assert!(output.is_ok(), "the waiting foreach completes");
            cpu_time() - cpu
        })
        .collect();
    times.sort_unstable();
    println!(
        "foreach over 20000 items whose calls each wait 1 ms: {:.2?} CPU (median of 5 runs)",
        times[2]
    );
}

fn main() {
    large_foreach();
    waiting_foreach();
    // Each pair must compute the same thing for the comparison to mean anything.
    let runtime = runtime();
    let compiled = runtime.block_on(fan_out::FanOutBenchWorkflow::new(Work).run(json!({})));
    let by_hand = runtime.block_on(fan_out_by_hand(Work, json!({})));
    assert_eq!(compiled.ok(), by_hand.ok());
    let compiled =
        runtime.block_on(for_each::ForEachBenchWorkflow::new(Work).run(thousand_items()));
    let by_hand = runtime.block_on(for_each_by_hand(Work, thousand_items()));
    let copying = runtime.block_on(for_each_by_hand_copying(Work, thousand_items()));
    assert_eq!(by_hand.as_ref().ok(), copying.as_ref().ok());
    assert_eq!(compiled.ok(), by_hand.ok());
    let compiled = runtime.block_on(fan_out::FanOutBenchWorkflow::new(Work).run(large_data()));
    let by_hand = runtime.block_on(fan_out_by_hand(Work, large_data()));
    assert_eq!(compiled.ok(), by_hand.ok());
    let fan_out = fan_out::FanOutBenchWorkflow::new(Work);
    ratio::compare(
        "parallel4",
        31,
        2_000,
        || json!({}),
        |input| drop(runtime.block_on(fan_out.run(input))),
        |input| drop(runtime.block_on(fan_out_by_hand(Work, input))),
    );
    ratio::compare(
        "parallel4 over task data holding 10,000 numbers",
        11,
        20,
        large_data,
        |input| drop(runtime.block_on(fan_out.run(input))),
        |input| drop(runtime.block_on(fan_out_by_hand(Work, input))),
    );
    let for_each = for_each::ForEachBenchWorkflow::new(Work);
    ratio::compare(
        "foreach1000",
        21,
        10,
        thousand_items,
        |input| drop(runtime.block_on(for_each.run(input))),
        |input| drop(runtime.block_on(for_each_by_hand(Work, input))),
    );
    ratio::compare(
        "foreach1000 against the copying loop",
        21,
        10,
        thousand_items,
        |input| drop(runtime.block_on(for_each.run(input))),
        |input| drop(runtime.block_on(for_each_by_hand_copying(Work, input))),
    );
    divan::main();
}
