//! The host: memory held per instance waiting on an event, and correlated events delivered per
//! second. Run with `cargo bench -p swf-tests --bench host`; it prints its measurements.

use std::time::Instant;
use swf_runtime::{Host, HostConfig};

swf_runtime::workflow!("benches/waiting.sw.yaml");

#[path = "common/mod.rs"]
mod common;

/// Counts the bytes currently allocated, to measure what waiting instances hold.
#[global_allocator]
static ALLOCATOR: common::Counting = common::Counting;

struct NoFunctions;
impl WaitingBenchFunctions for NoFunctions {}

const INSTANCES: usize = 20_000;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let config = HostConfig {
            events_capacity: 4096,
            outcomes_capacity: INSTANCES + 1,
            ..HostConfig::default()
        };
        let (host, mut channels) = Host::new(WaitingBenchWorkflow::new(NoFunctions), config);
        let router = tokio::spawn(host.run());
        let opened = |i: usize| {
            WaitingBenchEvent::Opened
                .correlated(&format!("open-{i}"), &format!("key-{i}"), swf_runtime::json!({}))
                .expect("a valid event")
        };
        let closed = |i: usize| {
            WaitingBenchEvent::Closed
                .correlated(&format!("close-{i}"), &format!("key-{i}"), swf_runtime::json!({}))
                .expect("a valid event")
        };

        // Memory: start every instance, let each reach its wait for `Closed`.
        let before = common::live_bytes();
        for i in 0..INSTANCES {
            channels.events.send(opened(i)).await.expect("router running");
        }
        // Every instance is waiting once the router and instances have gone quiet.
        for _ in 0..200 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let after = common::live_bytes();
        let per_instance = (after - before) as f64 / INSTANCES as f64;

        // Throughput: one correlated event per waiting instance, each completing it.
        let started = Instant::now();
        let sender = channels.events.clone();
        let feeder = tokio::spawn(async move {
            for i in 0..INSTANCES {
                sender.send(closed(i)).await.expect("router running");
            }
        });
        let mut finished = 0;
        while finished < INSTANCES {
            let outcome = channels.outcomes.recv().await.expect("outcomes");
            assert!(outcome.result.is_ok(), "{:?}", outcome.result);
            finished += 1;
        }
        let elapsed = started.elapsed();
        feeder.await.expect("feeder");
        let per_second = INSTANCES as f64 / elapsed.as_secs_f64();
        drop(channels.events);
        router.await.expect("router");

        println!("instances waiting on an event: {INSTANCES}");
        println!("memory per waiting instance:   {per_instance:.0} bytes");
        println!(
            "correlated events delivered:   {per_second:.0} per second ({INSTANCES} in {:.1} ms, each completing its instance)",
            elapsed.as_secs_f64() * 1000.0
        );
    });
}
