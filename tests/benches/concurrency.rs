//! Parallel branches and foreach iterations compiled by `workflow!`, against the same work
//! written by hand in async Rust. Run with `cargo bench -p swf-tests --bench concurrency`.
//! Before the benches, one foreach over a large collection (`SWF_BENCH_ITEMS`, default
//! 1,000,000 items) reports its time and the process's peak memory.

mod ratio;

use std::time::{Duration, Instant};

use swf_runtime::{FunctionError, Value, json};

mod fan_out {
    swf_runtime::workflow!("benches/fan_out.sw.yaml");
}
mod for_each {
    swf_runtime::workflow!("benches/for_each.sw.yaml");
}

#[derive(Clone, Copy)]
struct Work;

fn work(args: &Value) -> Value {
    json!({ "n": args["n"].as_i64().unwrap_or(0) * 2 })
}

impl fan_out::FanOutBenchFunctions for Work {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(work(&args))
    }
}

impl for_each::ForEachBenchFunctions for Work {
    async fn work(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(work(&args))
    }
}

/// Four concurrent calls, each result written into the data under its own key.
async fn fan_out_by_hand(functions: Work, input: Value) -> Result<Value, FunctionError> {
    use fan_out::FanOutBenchFunctions;
    let (a, b, c, d) = tokio::join!(
        functions.work(json!({"n": 1})),
        functions.work(json!({"n": 2})),
        functions.work(json!({"n": 3})),
        functions.work(json!({"n": 4})),
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
async fn for_each_by_hand(functions: Work, input: Value) -> Result<Value, FunctionError> {
    use for_each::ForEachBenchFunctions;
    let items = input["items"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        let result = functions.work(json!({ "n": item })).await?;
        results.push(result["n"].clone());
    }
    let mut data = input;
    if let Value::Object(members) = &mut data {
        members.insert("results".to_owned(), Value::Array(results));
    }
    Ok(data)
}

/// The same, giving each call what a foreach iteration gets by the draft's rule: a copy of the
/// whole task data with the item added. This is the copy the compiled version pays for.
async fn for_each_by_hand_copying(functions: Work, input: Value) -> Result<Value, FunctionError> {
    use for_each::ForEachBenchFunctions;
    let items = input["items"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        let mut iteration = input.clone();
        if let Value::Object(members) = &mut iteration {
            members.insert("item".to_owned(), item);
        }
        let result = functions.work(json!({ "n": iteration["item"] })).await?;
        results.push(result["n"].clone());
    }
    let mut data = input;
    if let Value::Object(members) = &mut data {
        members.insert("results".to_owned(), Value::Array(results));
    }
    Ok(data)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

fn thousand_items() -> Value {
    json!({ "items": (0..1000).collect::<Vec<i64>>() })
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

fn main() {
    large_foreach();
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
    let fan_out = fan_out::FanOutBenchWorkflow::new(Work);
    ratio::compare(
        "parallel4",
        31,
        2_000,
        || json!({}),
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
