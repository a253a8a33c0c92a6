//! The host: memory held per instance waiting on an event, and correlated events delivered per
//! second, each completing its instance. Run with `cargo bench -p swf-tests --bench host`; it
//! prints its measurements.
//!
//! Each round starts `SWF_BENCH_INSTANCES` instances (20,000 by default) by a correlated event,
//! lets every one reach its wait for the second event, reads the live heap, then sends the
//! second events and times them until every instance has ended. `SWF_BENCH_ROUNDS` rounds (3 by
//! default) run on a current-thread runtime, the figure that does not depend on the other
//! cores' load (with the runtime thread's CPU time per event, from `/proc/thread-self/schedstat`,
//! which load does not inflate), then as many on a two-thread runtime. `SWF_BENCH_ORDER=shuffled`
//! closes the instances in a shuffled order instead of the order they were opened in.

use std::time::{Duration, Instant};
use swf_runtime::{Host, HostConfig, Machine};

swf_runtime::workflow!("benches/waiting.sw.yaml");

#[path = "common/mod.rs"]
mod common;

/// Counts the bytes currently allocated, to measure what waiting instances hold.
#[global_allocator]
static ALLOCATOR: common::Counting = common::Counting;

struct NoFunctions;
impl WaitingBenchFunctions for NoFunctions {}

/// What one round measured.
struct Round {
    per_instance: f64,
    per_second: f64,
    elapsed: Duration,
    /// CPU time of the calling thread during the delivery phase (a current-thread runtime runs
    /// everything on it), if the platform tells.
    cpu: Option<Duration>,
}

/// Nanoseconds the calling thread has run on a CPU (Linux).
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// One round; `cpu`: whether the calling thread runs the whole host (a current-thread runtime).
async fn round(instances: usize, cpu: bool) -> Round {
    let config = HostConfig {
        events_capacity: 4096,
        outcomes_capacity: instances + 1,
        ..HostConfig::default()
    };
    let (host, mut channels) = Host::new(WaitingBenchWorkflow::new(NoFunctions), config);
    let router = tokio::spawn(host.run());
    let opened = |i: usize| {
        WaitingBenchEvent::Opened
            .correlated(
                &format!("open-{i}"),
                &format!("key-{i}"),
                swf_runtime::json!({}),
            )
            .expect("a valid event")
    };
    let closed = |i: usize| {
        WaitingBenchEvent::Closed
            .correlated(
                &format!("close-{i}"),
                &format!("key-{i}"),
                swf_runtime::json!({}),
            )
            .expect("a valid event")
    };

    // Memory: start every instance, let each reach its wait for `Closed`.
    let before = common::live_bytes();
    for i in 0..instances {
        channels
            .events
            .send(opened(i))
            .await
            .expect("router running");
    }
    // Every instance is waiting once the router and instances have gone quiet.
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let after = common::live_bytes();
    let per_instance = (after - before) as f64 / instances as f64;

    // Throughput: one correlated event per waiting instance, each completing it. The events
    // are built before the clock starts: their construction is the sender's cost.
    // Shuffled, the instances are closed in another order, but the events are still built in
    // the order they are sent (their memory in that order, as events read off the wire are).
    let mut order: Vec<usize> = (0..instances).collect();
    if shuffled() {
        shuffle(&mut order);
    }
    let events: Vec<_> = order.into_iter().map(closed).collect();
    let cpu_before = if cpu { thread_cpu() } else { None };
    let started = Instant::now();
    let sender = channels.events.clone();
    let feeder = tokio::spawn(async move {
        for event in events {
            sender.send(event).await.expect("router running");
        }
    });
    let mut finished = 0;
    while finished < instances {
        let outcome = channels.outcomes.recv().await.expect("outcomes");
        assert!(outcome.result.is_ok(), "{:?}", outcome.result);
        finished += 1;
    }
    let elapsed = started.elapsed();
    let cpu = thread_cpu().zip(cpu_before).map(|(end, start)| end - start);
    feeder.await.expect("feeder");
    drop(channels.events);
    router.await.expect("router");
    Round {
        per_instance,
        per_second: instances as f64 / elapsed.as_secs_f64(),
        elapsed,
        cpu,
    }
}

/// Whether `SWF_BENCH_ORDER=shuffled` asks for the instances to be closed in a shuffled order
/// rather than the order they were opened in (which keeps the registry's and the inboxes'
/// memory in cache far more than a real host's traffic would).
fn shuffled() -> bool {
    std::env::var("SWF_BENCH_ORDER").is_ok_and(|order| order == "shuffled")
}

/// Fisher-Yates with a fixed linear congruential sequence: the same order in every run.
fn shuffle<T>(items: &mut [T]) {
    let mut state: u64 = 0x853c_49e6_748f_ea9b;
    for i in (1..items.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let bound = u64::try_from(i + 1).unwrap_or(u64::MAX);
        let j = usize::try_from((state >> 33) % bound).unwrap_or(0);
        items.swap(i, j);
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn report(flavor: &str, instances: usize, rounds: &[Round]) {
    println!(
        "{flavor}: {instances} instances waiting on an event, {} rounds",
        rounds.len()
    );
    for (n, round) in rounds.iter().enumerate() {
        let cpu = round.cpu.map_or(String::from("-"), |cpu| {
            format!("{:.2} µs", cpu.as_secs_f64() * 1e6 / instances as f64)
        });
        println!(
            "  round {}: {:.0} bytes per waiting instance; {:.0} events/s ({:.1} ms); CPU of the runtime thread per event: {cpu}",
            n + 1,
            round.per_instance,
            round.per_second,
            round.elapsed.as_secs_f64() * 1000.0
        );
    }
    let bytes = median(rounds.iter().map(|r| r.per_instance).collect());
    let rate = median(rounds.iter().map(|r| r.per_second).collect());
    println!("  median: {bytes:.0} bytes per waiting instance, {rate:.0} correlated events/s");
}

fn main() {
    let instances = common::env_number("SWF_BENCH_INSTANCES", 20_000);
    let count = common::env_number("SWF_BENCH_ROUNDS", 3).max(1);
    type State = <WaitingBenchWorkflow<NoFunctions> as Machine>::State;
    println!(
        "the instance's own data: its state value, {} bytes inline",
        std::mem::size_of::<State>()
    );

    let current = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let rounds: Vec<Round> = (0..count)
        .map(|_| current.block_on(round(instances, true)))
        .collect();
    report("current-thread runtime (one core)", instances, &rounds);

    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a runtime");
    let rounds: Vec<Round> = (0..count)
        .map(|_| multi.block_on(round(instances, false)))
        .collect();
    report("multi-thread runtime, 2 workers", instances, &rounds);
}
