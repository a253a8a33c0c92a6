//! Crash tests on SQLite: a real worker process (`durable-worker`) runs three orders of the
//! quick order workflow (a retry, a delay, a correlated event, a parallel task, a
//! foreach, an event produced at the end) and is killed with SIGKILL at one of 22 points: inside
//! a function call, mid-parallel, mid-foreach, during the delay, while instances wait for their
//! event, before and after a commit, between storing an incoming event and acknowledging it, and
//! between sending a produced event and marking it sent. A new worker then finishes the work.
//!
//! Against an uninterrupted run, every scenario must end with the same outputs, the same history
//! of transitions (each committed once: no step repeated, none lost), every event taken, every
//! produced event sent (again only with the same id), and the same idempotency keys (a step that
//! ran again called its functions under the keys it had; nothing committed ran twice).
#![cfg(unix)]

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use swf_runtime::Value;
use swf_runtime::store::sqlite::SqliteStore;
use swf_runtime::store::{HistoryEntry, HistoryKind, ListFilter, Status, Store};
use swf_tests::shop::order_output;

const ORDERS: u64 = 3;
const ITEMS: u64 = 2;
/// The signal a killed worker must have died of.
const SIGKILL: i32 = 9;

/// Runs `durable-worker` with `args` and waits for it (at most a minute).
fn worker(args: &[&str]) -> std::process::ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_durable-worker"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the worker can be waited for") {
            return status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("worker {args:?} ran for more than a minute");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a scenario ended with, order by order.
#[derive(Debug, PartialEq)]
struct Order {
    output: Value,
    /// Each transition that moved it (see [`transition`]).
    history: Vec<String>,
    /// The id of the end event its history says it produced.
    end_event: String,
}

struct Outcome {
    orders: BTreeMap<u64, Order>,
    /// Every function call as (worker, key).
    calls: Vec<(String, String)>,
    /// Every produced event sent, as (order, event id).
    produced: Vec<(u64, String)>,
}

/// A transition that moved the instance, without its revision (a resumed instance that finds
/// its deadline passed does not commit the wait an uninterrupted one commits, so later
/// revisions differ) and without what it produced (event ids count steps too).
fn transition(entry: &HistoryEntry) -> Option<String> {
    (entry.kind != HistoryKind::Waiting).then(|| {
        format!(
            "{:?} {} -> {} took {:?} made {}",
            entry.kind,
            entry.from,
            entry.to,
            entry.consumed,
            entry.produced.len()
        )
    })
}

/// An idempotency key without its step number: `instance/scope/task/action#attempt`.
fn without_step(key: &str) -> String {
    let mut parts: Vec<&str> = key.splitn(3, '/').collect();
    parts.remove(1);
    parts.join("/")
}

/// Starts the orders, runs a worker that dies at `crash` (when given; it must die there), then a
/// worker that finishes, and reads what the store and the logs hold.
async fn scenario(crash: Option<&str>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("swf.db");
    let store = format!("sqlite:{}", db.display());
    let log = dir.path().to_string_lossy().into_owned();
    let orders = ORDERS.to_string();
    let items = ITEMS.to_string();
    let common = [
        "--store",
        &store,
        "--orders",
        &orders,
        "--items",
        &items,
        "--log",
        &log,
        // A worker renews its leases every third of this: a worker stalled for more than two
        // thirds of it (a loaded machine) loses a lease and runs that step again, which this
        // test counts as a repeat. With 400 ms, one full test run in eight on this 2-core
        // machine failed so (2026-11-27: the survivor called one key twice; not reproduced
        // in seven runs of this test alone); 800 ms doubles the stall it tolerates.
        "--lease-ms",
        "800",
    ];
    let start = worker(&[&["start"], &common[..]].concat());
    assert!(start.success(), "start: {start}");
    if let Some(crash) = crash {
        let died = worker(
            &[
                &["run", "--worker", "doomed", "--crash", crash],
                &common[..],
            ]
            .concat(),
        );
        assert_eq!(
            died.signal(),
            Some(SIGKILL),
            "the worker never reached {crash}: {died}"
        );
    }
    let finished = worker(&[&["run", "--worker", "survivor"], &common[..]].concat());
    assert!(finished.success(), "after {crash:?}: {finished}");
    read(&db, dir.path()).await
}

async fn read(db: &Path, dir: &Path) -> Outcome {
    let store = SqliteStore::open(db).await.unwrap();
    let all = ListFilter {
        statuses: Vec::new(),
        limit: 100,
        ..ListFilter::default()
    };
    let mut orders = BTreeMap::new();
    for summary in store.list(&all).await.unwrap() {
        let record = store.instance(summary.id).await.unwrap().unwrap().record;
        assert_eq!(record.status, Status::Completed, "{record:?}");
        let output = record.outcome.clone().unwrap();
        let order = output["orderId"].as_u64().unwrap();
        let history = store.history(summary.id).await.unwrap();
        swf_tests::stores::assert_committed_once(&history, &format!("order {order}"));
        let made: Vec<&String> = history.iter().flat_map(|entry| &entry.produced).collect();
        assert_eq!(made.len(), 1, "order {order} produced its end event once");
        orders.insert(
            order,
            Order {
                output,
                history: history.iter().filter_map(transition).collect(),
                end_event: made[0]
                    .split_once(' ')
                    .map_or(String::new(), |(_, id)| id.to_owned()),
            },
        );
    }
    let calls = lines(&dir.join("calls"))
        .map(|line| {
            let mut words = line.splitn(3, ' ');
            let worker = words.next().unwrap().to_owned();
            let _function = words.next();
            (worker, words.next().unwrap().to_owned())
        })
        .collect();
    let produced = lines(&dir.join("produced"))
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            (words[3].parse().unwrap(), words[0].to_owned())
        })
        .collect();
    Outcome {
        orders,
        calls,
        produced,
    }
}

fn lines(path: &PathBuf) -> impl Iterator<Item = String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect::<Vec<_>>()
        .into_iter()
}

fn distinct_keys(outcome: &Outcome) -> BTreeSet<String> {
    outcome
        .calls
        .iter()
        .map(|(_, key)| without_step(key))
        .collect()
}

/// The produced event ids sent for each order, deduplicated.
fn produced_ids(outcome: &Outcome) -> BTreeMap<u64, BTreeSet<&str>> {
    let mut ids: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for (order, id) in &outcome.produced {
        ids.entry(*order).or_default().insert(id);
    }
    ids
}

/// Every order's end event was sent, and sent again only under the id its history names.
fn check_produced(outcome: &Outcome, point: &str) {
    let ids = produced_ids(outcome);
    for (order, ended) in &outcome.orders {
        assert_eq!(
            ids.get(order),
            Some(&BTreeSet::from([ended.end_event.as_str()])),
            "{point}: order {order}'s end event"
        );
    }
}

const POINTS: [&str; 22] = [
    "step:1",
    "step:5",
    "step:11",
    "commit:1",
    "commit:6",
    "commit:14",
    "committed:1",
    "committed:7",
    "committed:16",
    "stored:1",
    "stored:2",
    "sent:1",
    "sent:3",
    "call:charge:1",
    "call:charge:5",
    "call:invoice:2",
    "call:notify:1",
    "call:pick:1",
    "call:pick:4",
    "call:pick:6",
    "waiting:Pack",
    "waiting:AwaitShipping",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_anywhere_loses_nothing_and_repeats_nothing() {
    let clean = scenario(None).await;
    assert_eq!(clean.orders.len(), ORDERS as usize);
    for (order, ended) in &clean.orders {
        assert_eq!(ended.output, order_output(*order, ITEMS), "order {order}");
    }
    assert_eq!(
        distinct_keys(&clean).len(),
        clean.calls.len(),
        "an uninterrupted run calls each key once"
    );
    check_produced(&clean, "uninterrupted");

    for point in POINTS {
        let crashed = scenario(Some(point)).await;
        for (order, ended) in &clean.orders {
            let resumed = &crashed.orders[order];
            assert_eq!(
                resumed.output, ended.output,
                "killed at {point}: order {order}"
            );
            assert_eq!(
                resumed.history, ended.history,
                "killed at {point}: order {order}'s transitions"
            );
        }
        assert_eq!(
            distinct_keys(&crashed),
            distinct_keys(&clean),
            "killed at {point}: the same calls, attempt by attempt"
        );
        for worker in ["doomed", "survivor"] {
            let keys: Vec<&str> = crashed
                .calls
                .iter()
                .filter(|(by, _)| by == worker)
                .map(|(_, key)| key.as_str())
                .collect();
            let distinct: BTreeSet<&str> = keys.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                keys.len(),
                "killed at {point}: {worker} called a key twice"
            );
        }
        check_produced(&crashed, point);
    }
}
