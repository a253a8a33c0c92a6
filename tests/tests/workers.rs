//! Many machines: three `durable-worker` processes share one PostgreSQL database and run 1,000
//! orders of the quick order workflow (a retry, a delay, a correlated event, a
//! parallel task, a foreach, an end event). One worker is killed with SIGKILL mid-run; the
//! others take its instances over when their leases expire. Every order must complete with the
//! expected output, and its history must show each transition committed exactly once.
//!
//! Skipped with a note when the server at `127.0.0.1:5432` cannot be reached, except in CI.
#![cfg(unix)]

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use swf_runtime::store::{HistoryKind, ListFilter, Status, Store};
use swf_tests::shop::order_output;
use swf_tests::stores;

const ORDERS: u64 = 1_000;
const ITEMS: u64 = 2;

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_durable-worker"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("a worker starts")
}

fn wait(mut child: Child, what: &str, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("a worker can be waited for") {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} ran for more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn completed<S: Store>(store: &S) -> usize {
    let filter = ListFilter {
        statuses: vec![Status::Completed],
        limit: ORDERS as usize,
        ..ListFilter::default()
    };
    store.list(&filter).await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_a_thousand_orders_and_one_is_killed() {
    let Some((store, schema)) = stores::postgres().await else {
        return;
    };
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_string_lossy().into_owned();
    let orders = ORDERS.to_string();
    let items = ITEMS.to_string();
    let common = [
        "--store",
        stores::POSTGRES_URL,
        "--schema",
        &schema.name,
        "--orders",
        &orders,
        "--items",
        &items,
        "--log",
        &log_dir,
        "--lease-ms",
        "1000",
    ];
    let start = wait(
        spawn(&[&["start"], &common[..]].concat()),
        "start",
        Duration::from_secs(120),
    );
    assert!(start.success(), "start: {start}");

    let workers: Vec<Child> = ["w1", "w2", "w3"]
        .iter()
        .map(|name| spawn(&[&["run", "--worker", name], &common[..]].concat()))
        .collect();
    let mut workers = workers.into_iter();
    let (first, mut doomed, third) = (
        workers.next().unwrap(),
        workers.next().unwrap(),
        workers.next().unwrap(),
    );

    // Mid-run: some orders done, most not.
    let started = Instant::now();
    loop {
        let done = completed(&store).await;
        if done >= 50 {
            assert!(
                done < ORDERS as usize,
                "every order finished before a worker could be killed"
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no order completed in two minutes"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    doomed.kill().unwrap(); // SIGKILL
    let died = doomed.wait().unwrap();
    assert!(!died.success(), "w2 was killed: {died}");

    for (worker, name) in [(first, "w1"), (third, "w3")] {
        let status =
            tokio::task::spawn_blocking(move || wait(worker, name, Duration::from_secs(300)))
                .await
                .unwrap();
        assert!(status.success(), "{name}: {status}");
    }

    // Every order completed with its output; each transition is committed once.
    let all = ListFilter {
        statuses: Vec::new(),
        limit: 2 * ORDERS as usize,
        ..ListFilter::default()
    };
    let instances = store.list(&all).await.unwrap();
    assert_eq!(instances.len(), ORDERS as usize);
    let mut seen = BTreeSet::new();
    for summary in &instances {
        let record = store.instance(summary.id).await.unwrap().unwrap().record;
        assert_eq!(record.status, Status::Completed, "{record:?}");
        let output = record.outcome.unwrap();
        let order = output["orderId"].as_u64().unwrap();
        assert!(seen.insert(order), "order {order} twice");
        assert_eq!(output, order_output(order, ITEMS), "order {order}");

        let history = store.history(summary.id).await.unwrap();
        stores::assert_committed_once(&history, &format!("order {order}"));
        let consumed: Vec<&String> = history.iter().flat_map(|e| &e.consumed).collect();
        assert_eq!(
            consumed,
            [&format!("warehouse ship-{order}")],
            "order {order}"
        );
        // Every task was passed through (a takeover skipped nothing), and it started once.
        let visited: BTreeSet<&str> = history.iter().map(|entry| entry.from.as_str()).collect();
        for task in ["Charge", "Pack", "AwaitShipping", "Paperwork", "PickAll"] {
            assert!(visited.contains(task), "order {order} skipped {task}");
        }
        let kinds = history
            .iter()
            .filter(|e| e.kind == HistoryKind::Started)
            .count();
        assert_eq!(kinds, 1, "order {order} started once");
    }

    // Every order's end event was sent, and copies sent again after the kill keep its id.
    let produced = std::fs::read_to_string(log.path().join("produced")).unwrap_or_default();
    let mut ids: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for line in produced.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        ids.entry(words[3].parse().unwrap())
            .or_default()
            .insert(words[0]);
    }
    assert_eq!(ids.len(), ORDERS as usize, "an end event per order");
    assert!(
        ids.values().all(|ids| ids.len() == 1),
        "an event sent again keeps its id"
    );
}
