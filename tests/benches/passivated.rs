//! Passivated instances on SQLite: N instances of `tests/benches/waiting.sw.yaml` (each started
//! by a correlated `Opened` event, then waiting for `Closed` with the same key) become waiting
//! rows of the store, not futures. Measures the host process's memory while they all wait, the
//! store bytes per waiting instance, and how fast correlated events reach them (each `Closed`
//! event completes its instance: stored, routed through the correlation index, the instance
//! claimed, loaded, stepped and committed as completed). The in-memory `Host` runs the same
//! workflow afterwards, in the same process, as the baseline.
//!
//! Run with `cargo bench -p swf-tests --bench passivated`; `SWF_BENCH_INSTANCES` sets N
//! (default 100,000), `SWF_BENCH_MEMORY_INSTANCES` the in-memory baseline's count (default the
//! smaller of N and 20,000: each instance there holds about 6 KB and a task),
//! `SWF_BENCH_IN_FLIGHT` the durable host's `max_in_flight` (default 512).

#[path = "common/mod.rs"]
mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use swf_runtime::store::sqlite::SqliteStore;
use swf_runtime::store::{ListFilter, Routed, Status, Store};
use swf_runtime::{CloudEvent, DurableConfig, DurableHost, Host, HostConfig};
use tokio::task::JoinSet;

use common::{Commits, Counted, mib, proc_status_bytes, sqlite_bytes, thousands};

swf_runtime::workflow!("benches/waiting.sw.yaml");

#[global_allocator]
static ALLOCATOR: common::Counting = common::Counting;

#[derive(Clone)]
struct NoFunctions;
impl WaitingBenchFunctions for NoFunctions {}

/// Deliveries in flight at once (the host groups them into store transactions of up to 512).
const FEEDERS: usize = 2_048;

fn opened(key: &str) -> CloudEvent {
    WaitingBenchEvent::Opened
        .correlated(&format!("open-{key}"), key, swf_runtime::json!({}))
        .expect("a valid event")
}

fn closed(key: &str) -> CloudEvent {
    WaitingBenchEvent::Closed
        .correlated(&format!("close-{key}"), key, swf_runtime::json!({}))
        .expect("a valid event")
}

fn live_heap() -> i64 {
    common::live_bytes() as i64
}

/// Delivers `make(i)` for every `i` below `count`, `FEEDERS` at a time, checking each routing.
async fn feed<S: Store>(
    host: &DurableHost<WaitingBenchWorkflow<NoFunctions>, S>,
    count: usize,
    make: fn(&str) -> CloudEvent,
    check: fn(&Routed) -> bool,
) {
    let mut feeders = JoinSet::new();
    for first in 0..FEEDERS.min(count) {
        let host = host.clone();
        feeders.spawn(async move {
            for i in (first..count).step_by(FEEDERS) {
                let routed = host
                    .deliver(make(&i.to_string()))
                    .await
                    .expect("a stored event");
                assert!(check(&routed), "event {i}: {routed:?}");
            }
        });
    }
    while let Some(done) = feeders.join_next().await {
        done.expect("no panic");
    }
}

async fn until_status<S: Store>(store: &S, id: swf_runtime::InstanceId, status: Status) {
    for _ in 0..10_000 {
        let record = store
            .instance(id)
            .await
            .expect("the store")
            .expect("it")
            .record;
        if record.status == status && record.lease.is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("instance {id} never became {status:?}");
}

/// The time from `start` until no instance has one of `statuses` any more. The probe's count
/// of commits reaching `target` says when to look (looking costs a scan of the instances,
/// which would slow the store down if done all the time); the store has the last word: when
/// the first look finds none, the work was done when the count was reached, else when a later
/// look finds none. Looks every 5 s meanwhile, in case the count is never reached.
async fn all_done<S: Store>(
    store: &S,
    commits: &Commits,
    target: u64,
    start: Instant,
    statuses: &[Status],
) -> Duration {
    let filter = ListFilter {
        statuses: statuses.to_vec(),
        limit: 1,
        ..ListFilter::default()
    };
    let mut look = Instant::now();
    while commits.committed() < target {
        tokio::time::sleep(Duration::from_micros(500)).await;
        if look.elapsed() > Duration::from_secs(5) {
            if store.list(&filter).await.expect("a listing").is_empty() {
                eprintln!(
                    "all done with {} of the {target} commits counted",
                    commits.committed()
                );
                return start.elapsed();
            }
            look = Instant::now();
        }
    }
    let reached = start.elapsed();
    let mut first = true;
    loop {
        let left = store.list(&filter).await.expect("a listing");
        if left.is_empty() {
            return if first { reached } else { start.elapsed() };
        }
        if first {
            eprintln!(
                "the commits counted are done but instance {} is still {}: waiting for it",
                left[0].id, left[0].status
            );
        }
        first = false;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn started(routed: &Routed) -> bool {
    matches!(routed, Routed::Started { .. })
}

fn woke_one(routed: &Routed) -> bool {
    matches!(routed, Routed::Delivered { instances, woken, .. } if instances.len() == 1 && woken.len() == 1)
}

struct Durable {
    instances: usize,
    created: Duration,
    rss: u64,
    hwm_waiting: u64,
    heap: i64,
    bytes: (u64, u64),
    delivered: Duration,
    hwm_end: u64,
    creating: String,
    delivering: String,
    cpu_creating: Duration,
    cpu_delivering: Duration,
    process_cpu_delivering: Duration,
}

async fn durable(instances: usize) -> Durable {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("passivated.db");
    let store = Counted::new(SqliteStore::open(&path).await.expect("a SQLite store"));
    let commits = Commits::new();
    let host = DurableHost::open(
        WaitingBenchWorkflow::new(NoFunctions),
        store.clone(),
        commits.probe(
            DurableConfig::default()
                .worker("bench")
                .max_in_flight(common::env_number("SWF_BENCH_IN_FLIGHT", 512)),
        ),
    )
    .await
    .expect("a durable host");
    let odd_reports = common::watch_reports(host.reports());
    let worker = common::Worker::start(&host);
    tokio::time::sleep(Duration::from_millis(50)).await;

    // One instance first, to learn how many commits take an instance to its wait and from its
    // wait to its end.
    let Routed::Started { instance: warm, .. } =
        host.deliver(opened("warm")).await.expect("stored")
    else {
        panic!("the first event did not start an instance");
    };
    until_status(&store, warm, Status::Waiting).await;
    // The probe counts a commit once the store's answer is back, a little after the store shows
    // it: let the count catch up.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let to_wait = commits.committed();
    assert!(woke_one(
        &host.deliver(closed("warm")).await.expect("stored")
    ));
    until_status(&store, warm, Status::Completed).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let to_end = commits.committed() - to_wait;
    tokio::time::sleep(Duration::from_millis(100)).await;

    let (db, wal) = sqlite_bytes(&path);
    let empty = db + wal;
    store.reset();
    let cpu_before = common::thread_cpu("swf-sqlite");
    let heap_before = live_heap();
    let base = commits.committed();
    let start = Instant::now();
    feed(&host, instances, opened, started).await;
    let created = all_done(
        &store,
        &commits,
        base + instances as u64 * to_wait,
        start,
        &[Status::Runnable],
    )
    .await;
    let creating = store.breakdown();
    let cpu_creating = common::thread_cpu("swf-sqlite") - cpu_before;
    // Let what the steps left behind go (finished tasks, the batchers' buffers).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss = proc_status_bytes("VmRSS");
    let hwm_waiting = proc_status_bytes("VmHWM");
    let heap = live_heap() - heap_before;
    let (db, wal) = sqlite_bytes(&path);
    let bytes = (db + wal - empty, db - empty.min(db));
    eprintln!(
        "reports other than ends so far: {}",
        odd_reports.load(Ordering::Relaxed)
    );
    for i in (0..instances).step_by((instances / 50).max(1)) {
        // Ids are handed out in order; the warm-up instance had the first.
        let id = swf_runtime::InstanceId::new(i as u64 + 2);
        let record = store.instance(id).await.expect("the store").expect("it");
        assert_eq!(record.record.status, Status::Waiting, "{:?}", record.record);
    }

    store.reset();
    let cpu_before = common::thread_cpu("swf-sqlite");
    let process_cpu_before = common::process_cpu();
    let base = commits.committed();
    let start = Instant::now();
    feed(&host, instances, closed, woke_one).await;
    let delivered = all_done(
        &store,
        &commits,
        base + instances as u64 * to_end,
        start,
        &[Status::Runnable, Status::Waiting],
    )
    .await;
    let delivering = store.breakdown();
    let cpu_delivering = common::thread_cpu("swf-sqlite") - cpu_before;
    let process_cpu_delivering = common::process_cpu() - process_cpu_before;
    for i in (0..instances).step_by((instances / 50).max(1)) {
        let id = swf_runtime::InstanceId::new(i as u64 + 2);
        let record = store.instance(id).await.expect("the store").expect("it");
        assert_eq!(
            record.record.status,
            Status::Completed,
            "{:?}",
            record.record
        );
    }
    let hwm_end = proc_status_bytes("VmHWM");
    worker.stop().await;
    drop(host);
    drop(store);
    Durable {
        instances,
        created,
        rss,
        hwm_waiting,
        heap,
        bytes,
        delivered,
        hwm_end,
        creating,
        delivering,
        cpu_creating,
        cpu_delivering,
        process_cpu_delivering,
    }
}

struct InMemory {
    instances: usize,
    created: Duration,
    heap: i64,
    delivered: Duration,
}

async fn in_memory(instances: usize) -> InMemory {
    let config = HostConfig {
        events_capacity: 4096,
        outcomes_capacity: instances + 1,
        ..HostConfig::default()
    };
    let (host, mut channels) = Host::new(WaitingBenchWorkflow::new(NoFunctions), config);
    let router = tokio::spawn(host.run());
    let before = live_heap();
    let start = Instant::now();
    for i in 0..instances {
        channels
            .events
            .send(opened(&i.to_string()))
            .await
            .expect("router running");
    }
    // Every instance is waiting once the router and instances have gone quiet.
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let created = start.elapsed();
    let heap = live_heap() - before;
    let start = Instant::now();
    let sender = channels.events.clone();
    let feeder = tokio::spawn(async move {
        for i in 0..instances {
            sender
                .send(closed(&i.to_string()))
                .await
                .expect("router running");
        }
    });
    for _ in 0..instances {
        let outcome = channels.outcomes.recv().await.expect("outcomes");
        assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    }
    let delivered = start.elapsed();
    feeder.await.expect("feeder");
    drop(channels.events);
    router.await.expect("router");
    InMemory {
        instances,
        created,
        heap,
        delivered,
    }
}

fn per_second(count: usize, took: Duration) -> String {
    thousands((count as f64 / took.as_secs_f64()) as u64)
}

fn main() {
    let instances = common::env_number("SWF_BENCH_INSTANCES", 100_000).max(1);
    let memory_instances =
        common::env_number("SWF_BENCH_MEMORY_INSTANCES", instances.min(20_000)).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let rss_at_start = proc_status_bytes("VmRSS");
        let d = durable(instances).await;
        let m = in_memory(memory_instances).await;
        let n = d.instances as f64;
        println!(
            "{} instances waiting on a correlated event, SQLite (RSS at start {:.1} MiB)",
            thousands(d.instances as u64),
            mib(rss_at_start)
        );
        println!();
        println!("| measurement | durable, SQLite | in memory (`Host`) |");
        println!("|---|---|---|");
        println!(
            "| instances | {} | {} |",
            thousands(d.instances as u64),
            thousands(m.instances as u64)
        );
        println!(
            "| started and waiting (per second, `Opened` delivered → waiting) | {} ({:.1} s) | {} (upper bound: includes 1 s of settling) |",
            per_second(d.instances, d.created),
            d.created.as_secs_f64(),
            per_second(m.instances, m.created),
        );
        println!(
            "| process RSS with all of them waiting | {:.0} MiB (peak so far {:.0} MiB) | — |",
            mib(d.rss),
            mib(d.hwm_waiting)
        );
        println!(
            "| live heap per waiting instance | {:.1} bytes | {:.0} bytes |",
            d.heap as f64 / n,
            m.heap as f64 / m.instances as f64
        );
        println!(
            "| store bytes per waiting instance (file + WAL growth) | {} | — |",
            thousands((d.bytes.0 as f64 / n) as u64)
        );
        println!(
            "| store bytes per waiting instance (file growth alone) | {} | — |",
            thousands((d.bytes.1 as f64 / n) as u64)
        );
        println!(
            "| correlated events delivered per second, each completing its instance | {} ({:.1} s) | {} ({:.2} s) |",
            per_second(d.instances, d.delivered),
            d.delivered.as_secs_f64(),
            per_second(m.instances, m.delivered),
            m.delivered.as_secs_f64()
        );
        println!(
            "| peak RSS of the durable run (VmHWM) | {:.0} MiB | — |",
            mib(d.hwm_end)
        );
        println!(
            "| CPU time of the store's thread per instance started and waiting | {:.0} µs ({:.0}% of the phase's wall time) | — |",
            d.cpu_creating.as_secs_f64() * 1e6 / n,
            100.0 * d.cpu_creating.as_secs_f64() / d.created.as_secs_f64()
        );
        println!(
            "| CPU time of the store's thread per event delivered | {:.0} µs ({:.0}% of the phase's wall time) | — |",
            d.cpu_delivering.as_secs_f64() * 1e6 / n,
            100.0 * d.cpu_delivering.as_secs_f64() / d.delivered.as_secs_f64()
        );
        println!(
            "| CPU time of the whole process per event delivered (the bench's feeders included) | {:.0} µs ({:.2} cores) | — |",
            d.process_cpu_delivering.as_secs_f64() * 1e6 / n,
            d.process_cpu_delivering.as_secs_f64() / d.delivered.as_secs_f64()
        );
        println!();
        println!("Store calls while the instances were started and reached their wait:");
        print!("{}", d.creating);
        println!("Store calls while the events were delivered and the instances completed:");
        print!("{}", d.delivering);
    });
}
