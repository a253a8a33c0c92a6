//! The durable host against the in-memory one, in the same run: committed transitions per
//! second for many seq10 instances at once (`tests/benches/ten_steps.sw.yaml`: ten tasks, each
//! calling a function that adds a number), the time one transition takes when a single
//! instance steps alone, what one commit takes, and the bytes an instance leaves in the store.
//!
//! Run with `cargo bench -p swf-tests --bench durable`; it prints its measurements.
//! `SWF_BENCH_INSTANCES` sets how many instances run at once (default 2,000), `SWF_BENCH_ROUNDS`
//! how many times (default 3, the median is reported). PostgreSQL is the server of the tests
//! (`postgres://postgres@127.0.0.1:5432/test`), in a fresh schema dropped afterwards; the
//! PostgreSQL rows are skipped with a note when it cannot be reached. `SWF_BENCH_DEBUG=1` also
//! prints the spread (10th, 50th, 90th percentile) of the single-instance timings.
//! `SWF_BENCH_HISTORY_LIMIT=n` runs the durable hosts with `DurableConfig::history_limit(n)`
//! (1: every commit of an instance but its first also drops a history entry, the most a limit
//! costs).
//!
//! A seq10 instance is 11 committed transitions: its creation (revision 0) and one step per
//! task, the last of which completes it. The in-memory rows count the same 11 per instance.

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use swf_runtime::store::postgres::PostgresStore;
use swf_runtime::store::sqlite::SqliteStore;
use swf_runtime::store::{HistoryKind, Status, Store};
use swf_runtime::{
    DurableConfig, DurableHost, Ended, FunctionError, Host, HostConfig, Report, Value, json,
};
use swf_tests::stores;
use tokio::task::JoinSet;

use common::{Commits, median, mib, postgres_bytes, sqlite_bytes, thousands};

swf_runtime::workflow!("benches/ten_steps.sw.yaml");

/// The function every task calls: `{"total": total + n}`, nothing else.
#[derive(Clone)]
struct Adder;

impl TenStepsFunctions for Adder {
    async fn step(&self, args: Value) -> Result<Value, FunctionError> {
        let total = args["total"].as_i64().unwrap_or(0) + args["n"].as_i64().unwrap_or(0);
        Ok(json!({ "total": total }))
    }
}

/// Committed transitions of one seq10 instance: its creation and ten steps.
const TRANSITIONS: u64 = 11;
/// Steps of one instance (its commits after the creation).
const STEPS: u64 = 10;
/// Instances run one after the other for the latency rows.
const ALONE: usize = 200;

fn input() -> Value {
    json!({"total": 0})
}

fn output() -> Value {
    json!({"total": 55})
}

/// What one kind of host measured.
struct Measured {
    name: &'static str,
    /// Transitions per second of each round, many instances at once.
    rates: Vec<f64>,
    /// Median wall time of one transition of an instance stepping alone (start to end / 11).
    alone: Duration,
    /// Median time of one commit (step about to be committed → store answered); durable only.
    commit: Option<Duration>,
    /// Median time `start` took (the creation's commit); durable only.
    creation: Option<Duration>,
    /// Store bytes per completed instance, and how they were measured.
    bytes: Vec<(String, f64)>,
}

impl Measured {
    fn rate(&self) -> f64 {
        let mut rates = self.rates.clone();
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied().unwrap_or(0.0)
    }
}

async fn in_memory(instances: usize, rounds: usize) -> Measured {
    let config = HostConfig {
        outcomes_capacity: instances + ALONE + 1,
        ..HostConfig::default()
    };
    let (host, mut channels) = Host::new(TenStepsWorkflow::new(Adder), config);
    let router = tokio::spawn(host.clone().run());

    let mut alone = Vec::with_capacity(ALONE);
    for _ in 0..ALONE {
        let started = Instant::now();
        host.start_instance(input()).expect("a started instance");
        let outcome = channels.outcomes.recv().await.expect("an outcome");
        alone.push(started.elapsed() / TRANSITIONS as u32);
        assert_eq!(outcome.result.ok(), Some(output()));
    }

    let mut rates = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..instances {
            host.start_instance(input()).expect("a started instance");
        }
        for _ in 0..instances {
            let outcome = channels.outcomes.recv().await.expect("an outcome");
            assert_eq!(outcome.result.ok(), Some(output()));
        }
        let elapsed = started.elapsed();
        rates.push((instances as u64 * TRANSITIONS) as f64 / elapsed.as_secs_f64());
    }
    drop(channels.events);
    router.await.expect("the router");
    Measured {
        name: "in memory (`Host`)",
        rates,
        alone: median(&mut alone),
        commit: None,
        creation: None,
        bytes: Vec::new(),
    }
}

/// The same with plain `run` (no host): each instance a future on its own task.
async fn plain_run(instances: usize, rounds: usize) -> Measured {
    let machine = Arc::new(TenStepsWorkflow::new(Adder));
    let mut alone = Vec::with_capacity(ALONE);
    for _ in 0..ALONE {
        let started = Instant::now();
        let result = machine.run(input()).await;
        alone.push(started.elapsed() / TRANSITIONS as u32);
        assert_eq!(result.ok(), Some(output()));
    }
    let mut rates = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        let mut running = JoinSet::new();
        for _ in 0..instances {
            let machine = Arc::clone(&machine);
            running.spawn(async move { machine.run(input()).await });
        }
        while let Some(result) = running.join_next().await {
            assert_eq!(result.expect("no panic").ok(), Some(output()));
        }
        let elapsed = started.elapsed();
        rates.push((instances as u64 * TRANSITIONS) as f64 / elapsed.as_secs_f64());
    }
    Measured {
        name: "in memory (plain `run`, a task each)",
        rates,
        alone: median(&mut alone),
        commit: None,
        creation: None,
        bytes: Vec::new(),
    }
}

/// A durable host on `store`, its worker running until the returned sender is used.
async fn durable<S: Store>(
    store: S,
    name: &'static str,
    instances: usize,
    rounds: usize,
) -> Measured {
    let commits = Commits::new();
    let limited = std::env::var("SWF_BENCH_HISTORY_LIMIT").ok().map(|limit| {
        limit
            .parse::<u64>()
            .expect("SWF_BENCH_HISTORY_LIMIT is a whole number")
    });
    let mut config = DurableConfig::default().worker("bench");
    if let Some(limit) = limited {
        config = config.history_limit(limit);
    }
    let config = commits.probe(config);
    let host = DurableHost::open(TenStepsWorkflow::new(Adder), store.clone(), config)
        .await
        .expect("a durable host");
    let odd_reports = common::watch_reports(host.reports());
    let worker = common::Worker::start(&host);
    // Let the worker loop start (instances created before it runs wait for its first poll).
    tokio::time::sleep(Duration::from_millis(50)).await;

    // One instance at a time: what a transition takes, what a commit takes.
    let mut reports = host.reports();
    let mut alone = Vec::with_capacity(ALONE);
    let mut creations = Vec::with_capacity(ALONE);
    commits.time_commits(true);
    let mut last = None;
    for _ in 0..ALONE {
        let started = Instant::now();
        let id = host.start(input()).await.expect("a started instance");
        creations.push(started.elapsed());
        loop {
            match reports.recv().await.expect("reports") {
                Report::Ended { instance, ended } if instance == id => {
                    assert_eq!(ended, Ended::Completed(output()));
                    break;
                }
                _ => {}
            }
        }
        alone.push(started.elapsed() / TRANSITIONS as u32);
        last = Some(id);
    }
    commits.time_commits(false);
    let mut commit_times = commits.take_latencies();
    if std::env::var("SWF_BENCH_DEBUG").is_ok() {
        let mut a = alone.clone();
        a.sort();
        let mut c = commit_times.clone();
        c.sort();
        eprintln!(
            "{name}: alone p10 {:?} p50 {:?} p90 {:?}; start() median {:?}; commit p10 {:?} p50 {:?} p90 {:?}",
            a[a.len() / 10],
            a[a.len() / 2],
            a[a.len() * 9 / 10],
            median(&mut creations.clone()),
            c[c.len() / 10],
            c[c.len() / 2],
            c[c.len() * 9 / 10]
        );
    }
    assert_eq!(commit_times.len(), ALONE * STEPS as usize);
    drop(reports);

    // Each instance is 11 transitions in the store's history, less what a limit dropped.
    let history = store
        .history(last.expect("an instance"))
        .await
        .expect("a history");
    if limited.is_none() {
        assert_eq!(history.len() as u64, TRANSITIONS, "{history:#?}");
    }
    assert_eq!(history[0].kind, HistoryKind::Started);
    let completed = history.last().expect("entries");
    assert_eq!(completed.kind, HistoryKind::Completed);
    assert_eq!(completed.revision, TRANSITIONS - 1);

    // Many at once: the worker steps up to `max_in_flight` of them, their commits grouped.
    let mut rates = Vec::with_capacity(rounds);
    let mut ids = Vec::new();
    for _ in 0..rounds {
        let before = commits.committed();
        let started = Instant::now();
        let mut starting = JoinSet::new();
        for _ in 0..instances {
            let host = host.clone();
            starting.spawn(async move { host.start(input()).await.expect("a started instance") });
        }
        commits.until(before + instances as u64 * STEPS).await;
        let elapsed = started.elapsed();
        rates.push((instances as u64 * TRANSITIONS) as f64 / elapsed.as_secs_f64());
        while let Some(id) = starting.join_next().await {
            ids.push(id.expect("no panic"));
        }
    }
    // Every one of them completed with the right output.
    for &id in ids.iter().step_by(97) {
        let record = store
            .instance(id)
            .await
            .expect("the store")
            .expect("the instance")
            .record;
        assert_eq!(record.status, Status::Completed);
        assert_eq!(record.outcome, Some(output()));
    }
    worker.stop().await;
    let odd = odd_reports.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(odd, 0, "{name}: reports other than ends (printed above)");
    Measured {
        name,
        rates,
        alone: median(&mut alone),
        commit: Some(median(&mut commit_times)),
        creation: Some(median(&mut creations)),
        bytes: Vec::new(),
    }
}

async fn on_sqlite(instances: usize, rounds: usize) -> Measured {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("bench.db");
    let store = SqliteStore::open(&path).await.expect("a SQLite store");
    let (db, wal) = sqlite_bytes(&path);
    let empty = db + wal;
    let mut measured = durable(store, "SQLite", instances, rounds).await;
    let total = (ALONE + instances * rounds) as f64;
    let (db, wal) = sqlite_bytes(&path);
    measured.bytes.push((
        String::from("file + WAL growth, store open"),
        (db + wal - empty) as f64 / total,
    ));
    // The last handle is gone once the host's tasks ended: SQLite checkpoints the log into the
    // file and removes it on close.
    for _ in 0..200 {
        if sqlite_bytes(&path).1 == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (db, wal) = sqlite_bytes(&path);
    if wal == 0 {
        measured.bytes.push((
            String::from("file growth, store closed (log checkpointed)"),
            (db - empty) as f64 / total,
        ));
    }
    measured
}

async fn on_postgres(instances: usize, rounds: usize) -> Option<Measured> {
    let (store, schema): (PostgresStore, stores::Schema) = stores::postgres().await?;
    let empty = postgres_bytes(stores::POSTGRES_URL, &schema.name).await;
    let mut measured = durable(store, "PostgreSQL", instances, rounds).await;
    let total = (ALONE + instances * rounds) as f64;
    let used = postgres_bytes(stores::POSTGRES_URL, &schema.name).await;
    measured.bytes.push((
        String::from("`pg_total_relation_size` growth over the schema's tables"),
        (used - empty) as f64 / total,
    ));
    drop(schema);
    Some(measured)
}

fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

fn main() {
    let instances = common::env_number("SWF_BENCH_INSTANCES", 2_000);
    let rounds = common::env_number("SWF_BENCH_ROUNDS", 3).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let baseline = in_memory(instances, rounds).await;
        let plain = plain_run(instances, rounds).await;
        let sqlite = on_sqlite(instances, rounds).await;
        let postgres = on_postgres(instances, rounds).await;
        if postgres.is_none() {
            println!(
                "note: PostgreSQL at {} cannot be reached: its rows are skipped",
                stores::POSTGRES_URL
            );
        }
        let base = baseline.rate();
        println!(
            "seq10 instances ({TRANSITIONS} transitions each): {} at once, {rounds} rounds \
             (median); {ALONE} alone",
            thousands(instances as u64)
        );
        println!();
        println!(
            "| host | transitions/s, {} instances at once | vs in memory | one transition, instance alone (median) | one commit (median) | `start`, instance alone (median) |",
            thousands(instances as u64)
        );
        println!("|---|---|---|---|---|---|");
        let rows = [Some(&baseline), Some(&plain), Some(&sqlite), postgres.as_ref()];
        for measured in rows.into_iter().flatten() {
            let rate = measured.rate();
            println!(
                "| {} | {} | {:.3}× | {} | {} | {} |",
                measured.name,
                thousands(rate as u64),
                rate / base,
                micros(measured.alone),
                measured.commit.map_or_else(|| String::from("—"), micros),
                measured.creation.map_or_else(|| String::from("—"), micros),
            );
        }
        println!();
        for measured in [Some(&sqlite), postgres.as_ref()].into_iter().flatten() {
            let rounds: Vec<String> = measured
                .rates
                .iter()
                .map(|rate| thousands(*rate as u64))
                .collect();
            println!("{} rounds: {} transitions/s", measured.name, rounds.join(", "));
        }
        println!();
        println!("| store | bytes per completed seq10 instance | measured as |");
        println!("|---|---|---|");
        for measured in [Some(&sqlite), postgres.as_ref()].into_iter().flatten() {
            for (how, bytes) in &measured.bytes {
                println!(
                    "| {} | {} | {how} |",
                    measured.name,
                    thousands(*bytes as u64)
                );
            }
        }
        let rss = common::proc_status_bytes("VmHWM");
        println!();
        println!("peak RSS of this process: {:.0} MiB", mib(rss));
    });
}
