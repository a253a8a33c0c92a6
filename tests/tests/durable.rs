//! The durable host on both stores: an order that pauses in every way a workflow can (a retry
//! wait, a delay, a correlated event, a parallel task, a foreach) runs to the same output as in
//! memory, with every transition committed once; a new host resumes where an old one stopped;
//! deadlines are absolute; a changed definition refuses what it cannot resume.
//!
//! Time is a `ManualClock` that only the test moves, so nothing wakes before its deadline.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use swf_runtime::store::postgres::PostgresStore;
use swf_runtime::store::{
    HistoryKind, InstanceRecord, ListFilter, NewInstance, Purged, Routed, Status, Store,
    StoreErrorKind,
};
use swf_runtime::{
    CloudEvent, DurableConfig, DurableHost, Ended, InstanceId, ManualClock, Report, StartError,
    Timestamp, Value, json,
};
use swf_tests::shop::{DurableOrderWorkflow, Shop, order_input, order_output, shipped};
use swf_tests::stores;
use tokio::sync::{mpsc, oneshot};

mod v2 {
    swf_runtime::workflow!("workflows/durable/order-v2.sw.yaml");

    impl DurableOrderFunctions for swf_tests::shop::Shop {
        async fn charge(
            &self,
            args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            swf_tests::shop::DurableOrderFunctions::charge(self, args).await
        }
        async fn invoice(
            &self,
            args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            swf_tests::shop::DurableOrderFunctions::invoice(self, args).await
        }
        async fn notify(
            &self,
            args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            swf_tests::shop::DurableOrderFunctions::notify(self, args).await
        }
        async fn pick(
            &self,
            args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            swf_tests::shop::DurableOrderFunctions::pick(self, args).await
        }
    }
}

const SECOND: Duration = Duration::from_secs(1);
const HOUR: Duration = Duration::from_secs(3600);

fn epoch() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

fn plus(at: Timestamp, by: Duration) -> Timestamp {
    at.checked_add(by).unwrap()
}

fn config(clock: &Arc<ManualClock>, worker: &str) -> DurableConfig {
    DurableConfig::default()
        .worker(worker)
        .clock(clock.clone())
        .poll(Duration::from_millis(10))
}

/// A worker running in the background until stopped, sending produced events to a channel.
struct Running {
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    produced: mpsc::Receiver<CloudEvent>,
}

impl Running {
    fn start<M: swf_runtime::Machine, S: Store>(host: &DurableHost<M, S>) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let (sink, produced) = mpsc::channel(64);
        let host = host.clone();
        let done = tokio::spawn(async move {
            host.run(sink, async {
                let _ = stopped.await;
            })
            .await;
        });
        Self {
            stop: Some(stop),
            done,
            produced,
        }
    }

    async fn stop(mut self) -> mpsc::Receiver<CloudEvent> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.done).await;
        self.produced
    }
}

/// Polls the store until instance `id`'s record satisfies `done`.
async fn until<S: Store>(
    store: &S,
    id: InstanceId,
    what: &str,
    done: impl Fn(&InstanceRecord) -> bool,
) -> InstanceRecord {
    for _ in 0..2_000 {
        let record = store.instance(id).await.unwrap().unwrap().record;
        if done(&record) {
            return record;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let record = store.instance(id).await.unwrap().unwrap().record;
    panic!("instance {id} never {what}: {record:?}");
}

async fn waiting_at<S: Store>(store: &S, id: InstanceId, position: &str) -> InstanceRecord {
    until(store, id, &format!("waited at {position}"), |record| {
        record.status == Status::Waiting && record.position == position
    })
    .await
}

fn correlated(order: u64) -> BTreeMap<String, String> {
    BTreeMap::from([(String::from("orderid"), order.to_string())])
}

/// A host of the durable order on `store` as worker `w1`, on a manual clock at [`epoch`], its
/// shop busy `busy` times.
async fn order_host<S: Store>(
    store: &S,
    busy: u32,
) -> (
    Arc<ManualClock>,
    Shop,
    DurableHost<DurableOrderWorkflow<Shop>, S>,
) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let shop = Shop::new(busy);
    let host = DurableHost::open(
        DurableOrderWorkflow::new(shop.clone()),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    (clock, shop, host)
}

async fn an_order_survives_every_pause<S: Store>(store: S) {
    let (clock, shop, host) = order_host(&store, 1).await;
    let worker = Running::start(&host);
    let id = host
        .start_correlated(order_input(7, 3), correlated(7))
        .await
        .unwrap();

    // The card network is busy: the retry waits, as a row with an absolute deadline.
    let record = waiting_at(&store, id, "Charge").await;
    assert_eq!(record.wake_at, Some(plus(epoch(), 10 * SECOND)));
    assert!(record.lease.is_none(), "a waiting instance is not held");
    clock.advance(10 * SECOND);
    let record = waiting_at(&store, id, "Pack").await;
    assert_eq!(record.wake_at, Some(plus(epoch(), 10 * SECOND + HOUR)));
    // The event may come early: it is kept in the instance's inbox until it waits for it.
    let routed = host.deliver(shipped(7)).await.unwrap();
    assert!(matches!(&routed, Routed::Delivered { instances, .. } if instances == &[id]));
    assert_eq!(
        host.deliver(shipped(7)).await.unwrap(),
        Routed::Duplicate { seq: routed.seq() },
        "the same source and id again"
    );
    clock.advance(HOUR);
    let ended = host.wait(id).await.unwrap();
    assert_eq!(ended, Ended::Completed(order_output(7, 3)));

    let mut produced = worker.stop().await;
    let event = produced.recv().await.unwrap();
    assert_eq!(
        swf_runtime::event_data(&event),
        json!({"paid": 70}),
        "the end event carries the payment"
    );
    assert_eq!(
        swf_runtime::context_attribute(&event, "orderid").as_deref(),
        Some("7")
    );

    // Every function ran once per attempt, each call under its own key.
    let calls = shop.calls();
    let count = |name: &str| calls.iter().filter(|c| c.function == name).count();
    assert_eq!(
        (
            count("charge"),
            count("invoice"),
            count("notify"),
            count("pick")
        ),
        (2, 1, 1, 3)
    );
    let mut keys: Vec<&str> = calls.iter().map(|c| c.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), calls.len(), "{calls:#?}");
    let charges = shop.calls_of("charge");
    assert!(
        charges[0].key.ends_with("/Charge/charge card#1"),
        "{}",
        charges[0].key
    );
    assert!(
        charges[1].key.ends_with("/Charge/charge card#2"),
        "{}",
        charges[1].key
    );

    // The history: one entry per committed transition, revisions 0, 1, 2... each once.
    let history = store.history(id).await.unwrap();
    let revisions: Vec<u64> = history.iter().map(|entry| entry.revision).collect();
    assert_eq!(revisions, (0..history.len() as u64).collect::<Vec<_>>());
    assert_eq!(history[0].kind, HistoryKind::Started);
    assert_eq!(history.last().unwrap().kind, HistoryKind::Completed);
    let took_event: Vec<_> = history
        .iter()
        .filter(|entry| !entry.consumed.is_empty())
        .collect();
    assert_eq!(took_event.len(), 1);
    assert_eq!(took_event[0].consumed, ["warehouse ship-7"]);
    assert_eq!(took_event[0].from, "AwaitShipping");
    let produced_by: Vec<_> = history
        .iter()
        .filter(|entry| !entry.produced.is_empty())
        .collect();
    assert_eq!(produced_by.len(), 1);
    assert!(produced_by[0].produced[0].starts_with("shop durable-order-"));
    let record = store.instance(id).await.unwrap().unwrap().record;
    assert_eq!(record.status, Status::Completed);
    assert_eq!(record.definition.version.as_deref(), Some("1.0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_survives_every_pause_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    an_order_survives_every_pause(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_survives_every_pause_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    an_order_survives_every_pause(store).await;
}

async fn a_new_host_resumes_where_the_old_one_stopped<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let first_shop = Shop::new(0);
    let first = DurableHost::open(
        DurableOrderWorkflow::new(first_shop.clone()),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let worker = Running::start(&first);
    let id = first
        .start_correlated(order_input(3, 2), correlated(3))
        .await
        .unwrap();
    waiting_at(&store, id, "Pack").await;
    worker.stop().await;
    drop(first);

    // Half the delay passes while no worker runs; a new one (a new release of the same
    // definition, new functions) wakes the instance when the delay ends, not an hour later.
    clock.advance(HOUR / 2);
    let second_shop = Shop::new(0);
    let second = DurableHost::open(
        DurableOrderWorkflow::new(second_shop.clone()),
        store.clone(),
        config(&clock, "w2"),
    )
    .await
    .unwrap();
    let worker = Running::start(&second);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        waiting_at(&store, id, "Pack").await.wake_at,
        Some(plus(epoch(), HOUR))
    );
    clock.advance(HOUR / 2);
    waiting_at(&store, id, "AwaitShipping").await;
    second.deliver(shipped(3)).await.unwrap();
    assert_eq!(
        second.wait(id).await.unwrap(),
        Ended::Completed(order_output(3, 2))
    );
    worker.stop().await;
    assert_eq!(first_shop.calls_of("charge").len(), 1);
    assert!(
        second_shop.calls_of("charge").is_empty(),
        "a committed step never runs again"
    );
    assert_eq!(second_shop.calls_of("pick").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_host_resumes_where_the_old_one_stopped_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_new_host_resumes_where_the_old_one_stopped(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_host_resumes_where_the_old_one_stopped_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_new_host_resumes_where_the_old_one_stopped(store).await;
}

/// A stored state that waits for nothing (a foreach whose two started iterations are neither
/// running nor done: no state the workflow makes, but one a store can hold after a hand edit
/// or a bad migration) fails its instance when a worker steps it, with that state as the
/// error's data and as the state a redrive starts from, instead of being stored as waiting
/// for ever.
async fn a_stored_state_that_waits_for_nothing_fails<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(1)),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let started = host
        .start_correlated(order_input(7, 2), correlated(7))
        .await
        .unwrap();
    let definition = waiting_at(&store, started, "Charge").await.definition;
    let data = json!({"orderId": 8, "items": ["a", "b"]});
    let stuck = json!({"PickAll": {
        "data": data,
        "each": {"total": 2, "started": 2, "running": [], "outputs": [null, null], "origin": 1},
    }});
    let ids = store
        .create(
            vec![NewInstance {
                definition,
                state: stuck.to_string(),
                position: String::from("PickAll"),
                status: Status::Runnable,
                wake_at: None,
                waits: Vec::new(),
                correlation: Vec::new(),
                inbox: Vec::new(),
                parent: None,
                lease: None,
                detail: json!({}),
                start_key: None,
            }],
            epoch(),
        )
        .await
        .unwrap();
    // Stored as waiting for ever, it never ended: the timeout fails the test instead.
    let ended = tokio::time::timeout(Duration::from_secs(30), host.wait(ids[0]))
        .await
        .expect("the instance ends");
    let Ended::Failed(error) = ended.unwrap() else {
        panic!("the instance failed");
    };
    assert_eq!(error.error().name, "HostError");
    assert!(
        error
            .error()
            .message
            .contains("waits at `PickAll` for nothing that can come"),
        "{error}"
    );
    assert_eq!(error.data(), &stuck);
    let record = store.instance(ids[0]).await.unwrap().unwrap().record;
    assert_eq!(record.status, Status::Failed);
    let kept: swf_runtime::Value = swf_runtime::serde_json::from_str(&record.state).unwrap();
    assert_eq!(kept, stuck, "its last committed state");
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_state_that_waits_for_nothing_fails_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_stored_state_that_waits_for_nothing_fails(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_state_that_waits_for_nothing_fails_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_stored_state_that_waits_for_nothing_fails(store).await;
}

async fn a_changed_definition_refuses_what_it_cannot_resume<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let v1 = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "v1"),
    )
    .await
    .unwrap();
    let worker = Running::start(&v1);
    let at_shipping = v1
        .start_correlated(order_input(2, 1), correlated(2))
        .await
        .unwrap();
    waiting_at(&store, at_shipping, "Pack").await;
    clock.advance(HOUR);
    waiting_at(&store, at_shipping, "AwaitShipping").await;
    let at_pack = v1
        .start_correlated(order_input(1, 1), correlated(1))
        .await
        .unwrap();
    waiting_at(&store, at_pack, "Pack").await;
    worker.stop().await;

    // Version 2 renamed `Pack` to `Packing`. The instance waiting for its event resumes under
    // it (its position exists there); the one saved at `Pack` is refused and left as it was.
    let v2 = DurableHost::open(
        v2::DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "v2").lease(Duration::from_secs(3600)),
    )
    .await
    .unwrap();
    let mut reports = v2.reports();
    let worker = Running::start(&v2);
    v2.deliver(shipped(2)).await.unwrap();
    assert_eq!(
        v2.wait(at_shipping).await.unwrap(),
        Ended::Completed(order_output(2, 1))
    );
    let finished = store.instance(at_shipping).await.unwrap().unwrap().record;
    assert_eq!(finished.definition.version.as_deref(), Some("2.0"));

    let before = store.instance(at_pack).await.unwrap().unwrap().record;
    clock.advance(HOUR);
    let (instance, reason) = loop {
        match reports.recv().await.unwrap() {
            Report::Refused { instance, reason } => break (instance, reason),
            _ => continue,
        }
    };
    worker.stop().await;
    assert_eq!(instance, at_pack);
    assert!(
        reason.contains("was saved at `Pack` by workflow `durable-order` version 1.0"),
        "{reason}"
    );
    assert!(reason.contains("version 2.0"), "{reason}");
    assert!(reason.contains("unknown variant `Pack`"), "{reason}");
    let after = store.instance(at_pack).await.unwrap().unwrap().record;
    assert_eq!(
        (&after.state, after.revision, after.status, &after.position),
        (
            &before.state,
            before.revision,
            before.status,
            &before.position
        ),
        "left untouched"
    );
    assert_eq!(after.definition.version.as_deref(), Some("1.0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_definition_refuses_what_it_cannot_resume_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_changed_definition_refuses_what_it_cannot_resume(store).await;
}

/// Workers pinned to their version: an instance started by version 1 is left, woken, by a
/// worker of version 2 (which would resume it: its position exists there) and runs to its end
/// on version 1 once a worker of it comes back, while version 2 runs its own.
async fn pinned_workers_run_the_instances_of_their_version<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let v1 = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "v1").pinned(),
    )
    .await
    .unwrap();
    let worker = Running::start(&v1);
    let old = v1
        .start_correlated(order_input(2, 1), correlated(2))
        .await
        .unwrap();
    waiting_at(&store, old, "Pack").await;
    clock.advance(HOUR);
    waiting_at(&store, old, "AwaitShipping").await;
    worker.stop().await;

    let v2 = DurableHost::open(
        v2::DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "v2").pinned(),
    )
    .await
    .unwrap();
    let worker = Running::start(&v2);
    // The event for the old instance comes through a worker of version 2: stored and the
    // instance woken, not taken.
    v2.deliver(shipped(2)).await.unwrap();
    let new = v2
        .start_correlated(order_input(3, 1), correlated(3))
        .await
        .unwrap();
    waiting_at(&store, new, "Packing").await;
    clock.advance(HOUR);
    waiting_at(&store, new, "AwaitShipping").await;
    v2.deliver(shipped(3)).await.unwrap();
    assert_eq!(
        v2.wait(new).await.unwrap(),
        Ended::Completed(order_output(3, 1))
    );
    worker.stop().await;
    let left = store.instance(old).await.unwrap().unwrap().record;
    assert_eq!(
        (
            left.status,
            left.position.as_str(),
            left.definition.version.as_deref(),
            left.lease
        ),
        (Status::Runnable, "AwaitShipping", Some("1.0"), None),
        "version 2 left it"
    );

    let worker = Running::start(&v1);
    assert_eq!(
        v1.wait(old).await.unwrap(),
        Ended::Completed(order_output(2, 1))
    );
    worker.stop().await;
    let finished = store.instance(old).await.unwrap().unwrap().record;
    assert_eq!(finished.definition.version.as_deref(), Some("1.0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_workers_run_the_instances_of_their_version_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    pinned_workers_run_the_instances_of_their_version(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_workers_run_the_instances_of_their_version_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    pinned_workers_run_the_instances_of_their_version(store).await;
}

/// A worker loop whose future is dropped (its task aborted) no longer counts as running here:
/// an instance started afterwards is not leased to it, and another worker steps it.
async fn a_dropped_worker_loop_leases_nothing<S: Store>(store: S) {
    let (clock, _shop, host) = order_host(&store, 0).await;
    let (sink, _produced) = mpsc::channel(64);
    let looping = tokio::spawn({
        let host = host.clone();
        async move { host.run(sink, std::future::pending()).await }
    });
    let before = host
        .start_correlated(order_input(1, 1), correlated(1))
        .await
        .unwrap();
    waiting_at(&store, before, "Pack").await;
    looping.abort();
    assert!(looping.await.unwrap_err().is_cancelled());

    let after = host
        .start_correlated(order_input(2, 1), correlated(2))
        .await
        .unwrap();
    let created = store.instance(after).await.unwrap().unwrap().record;
    assert_eq!(created.lease, None, "leased to a loop that no longer runs");
    let other = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "w2"),
    )
    .await
    .unwrap();
    let worker = Running::start(&other);
    waiting_at(&store, after, "Pack").await;
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_worker_loop_leases_nothing_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_dropped_worker_loop_leases_nothing(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_worker_loop_leases_nothing_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_dropped_worker_loop_leases_nothing(store).await;
}

mod family {
    swf_runtime::workflow!(
        "workflows/events/parent.sw.yaml",
        "workflows/events/child.sw.yaml"
    );

    #[derive(Clone)]
    pub struct Maths;

    impl ChildFunctions for Maths {
        async fn double(
            &self,
            args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            Ok(swf_runtime::json!(args["n"].as_i64().unwrap_or(0) * 2))
        }
    }

    impl ParentFunctions for Maths {
        async fn audit(
            &self,
            _args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            Ok(swf_runtime::json!(true))
        }
    }
}

/// A worker whose slots are all taken leases no instance started in its process: it would
/// hold it (its lease renewed) until a slot frees, where another worker can step it now.
async fn a_busy_worker_leases_no_new_instance<S: Store>(store: S) {
    use std::sync::Mutex;
    use std::sync::mpsc;
    let clock = Arc::new(ManualClock::new(epoch()));
    let (entered, in_charge) = mpsc::channel::<()>();
    let (release, released) = mpsc::channel::<()>();
    let released = Mutex::new(released);
    let first = AtomicBool::new(true);
    // The first charge blocks its thread until released: the worker's one slot stays taken.
    let hook: swf_tests::shop::Hook = Arc::new(move |function, _| {
        if function == "charge" && first.swap(false, Ordering::SeqCst) {
            let _ = entered.send(());
            let _ = released
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(10));
        }
    });
    let busy = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0).with_hook(hook)),
        store.clone(),
        config(&clock, "w1").max_in_flight(1),
    )
    .await
    .unwrap();
    let idle = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "w2"),
    )
    .await
    .unwrap();
    let busy_worker = Running::start(&busy);
    let idle_worker = Running::start(&idle);
    let charging = busy
        .start_correlated(order_input(1, 1), correlated(1))
        .await
        .unwrap();
    tokio::task::spawn_blocking(move || in_charge.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the first charge began");
    let next = busy
        .start_correlated(order_input(2, 1), correlated(2))
        .await
        .unwrap();
    // (The idle worker may have claimed it already; the busy one must not have.)
    let created = store.instance(next).await.unwrap().unwrap().record;
    assert_ne!(
        created.lease.map(|lease| lease.worker),
        Some(String::from("w1")),
        "leased to a worker with no free slot"
    );
    waiting_at(&store, next, "Pack").await;
    release.send(()).unwrap();
    waiting_at(&store, charging, "Pack").await;
    busy_worker.stop().await;
    idle_worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_worker_leases_no_new_instance_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_busy_worker_leases_no_new_instance(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_worker_leases_no_new_instance_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_busy_worker_leases_no_new_instance(store).await;
}

/// Starts made at once in a process whose worker has one free slot lease one instance to it,
/// not every one: each takes its slot before the store answers.
async fn starts_at_once_share_the_free_slots<S: Store>(store: S) {
    use std::sync::{Condvar, Mutex};
    let clock = Arc::new(ManualClock::new(epoch()));
    // Every charge blocks its thread until the gate opens: the worker's slots stay taken.
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let charging = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let hook: swf_tests::shop::Hook = Arc::new({
        let (gate, charging) = (Arc::clone(&gate), Arc::clone(&charging));
        move |function, _| {
            if function == "charge" {
                charging.fetch_add(1, Ordering::SeqCst);
                let (open, opened) = &*gate;
                let open = open.lock().unwrap();
                let _ = opened
                    .wait_timeout_while(open, Duration::from_secs(10), |open| !*open)
                    .unwrap();
            }
        }
    });
    let host = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0).with_hook(hook)),
        store.clone(),
        config(&clock, "w1").max_in_flight(2),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let first = host
        .start_correlated(order_input(1, 1), correlated(1))
        .await
        .unwrap();
    while charging.load(Ordering::SeqCst) < 1 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // One slot left, and six starts at once.
    let mut starts = tokio::task::JoinSet::new();
    for order in 2..8 {
        let host = host.clone();
        starts.spawn(async move {
            host.start_correlated(order_input(order, 1), correlated(order))
                .await
        });
    }
    let started: Vec<InstanceId> = starts
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let mut leased = 0;
    for id in &started {
        let record = store.instance(*id).await.unwrap().unwrap().record;
        if record.lease.is_some_and(|lease| lease.worker == "w1") {
            leased += 1;
        }
    }
    // One at its start; at most one more, claimed from the store before the first was handed
    // over (then the worker has no free slot).
    assert!(
        leased <= 2,
        "{leased} of 6 leased to a worker with one free slot"
    );
    {
        let (open, opened) = &*gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
    for id in std::iter::once(&first).chain(&started) {
        waiting_at(&store, *id, "Pack").await;
    }
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starts_at_once_share_the_free_slots_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    starts_at_once_share_the_free_slots(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starts_at_once_share_the_free_slots_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    starts_at_once_share_the_free_slots(store).await;
}

// The compiler warns of this pair (W0005: the parent does not define the event its sub-flow
// waits for); the test is what a durable host does with it anyway.
#[allow(deprecated)]
mod approval {
    swf_runtime::workflow!(
        "workflows/durable/approver.sw.yaml",
        "workflows/durable/approval.sw.yaml"
    );

    #[derive(Clone)]
    pub struct Nothing;

    impl DurableApproverFunctions for Nothing {}
    impl DurableApprovalFunctions for Nothing {}
}

/// A sub-flow waiting, with no timeout, for an event its parent does not define would be stored
/// waiting for ever (the host routes by the parent's definitions): the instance fails instead,
/// saying which events and what to do.
async fn a_wait_no_event_can_reach_fails<S: Store>(store: S) {
    use approval::{DurableApproverWorkflow, Nothing};
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        DurableApproverWorkflow::new(Nothing),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let id = host.start(json!({})).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), host.wait(id))
        .await
        .expect("stored waiting for ever")
        .unwrap();
    worker.stop().await;
    let Ended::Failed(error) = ended else {
        panic!("not failed: {ended:?}");
    };
    let message = &error.error().message;
    assert!(
        message.contains("for `Approved`, which workflow `durable-approver` does not define"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_no_event_can_reach_fails_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_wait_no_event_can_reach_fails(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_no_event_can_reach_fails_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_wait_no_event_can_reach_fails(store).await;
}

async fn a_detached_sub_flow_becomes_an_instance_of_its_own<S: Store>(store: S) {
    use family::{ChildWorkflow, Maths, ParentWorkflow};
    use swf_runtime::store::ListFilter;
    let clock = Arc::new(ManualClock::new(epoch()));
    let parents = DurableHost::open(
        ParentWorkflow::new(Maths),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let children = DurableHost::open(
        ChildWorkflow::new(Maths),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let parent_worker = Running::start(&parents);
    let child_worker = Running::start(&children);
    let parent = parents.start(json!({"n": 2})).await.unwrap();
    assert_eq!(
        parents.wait(parent).await.unwrap(),
        Ended::Completed(json!({"n": 4, "audited": true}))
    );
    // Created with the parent's step that started it, run by the child workflow's host.
    let listed = store
        .list(&ListFilter {
            workflow: Some(String::from("child")),
            limit: 10,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    let child = listed[0].id;
    assert_eq!(
        children.wait(child).await.unwrap(),
        Ended::Completed(json!({"n": 8}))
    );
    let record = store.instance(child).await.unwrap().unwrap().record;
    assert_eq!(record.parent, Some(parent));
    parent_worker.stop().await;
    child_worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_sub_flow_becomes_an_instance_of_its_own_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_detached_sub_flow_becomes_an_instance_of_its_own(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_sub_flow_becomes_an_instance_of_its_own_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_detached_sub_flow_becomes_an_instance_of_its_own(store).await;
}

/// An event nobody takes is stored and answered with why (the host says it once the store found
/// no taker): the definition it matched with its correlation value, or that it matches none.
async fn an_event_nobody_takes_says_why<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(1)),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let Routed::Unmatched { reason, .. } = host.deliver(shipped(404)).await.unwrap() else {
        panic!("no instance waits for order 404");
    };
    assert!(
        reason.contains("no instance of `durable-order` waits for `Shipped` (orderid `404`)"),
        "{reason}"
    );
    let stranger = CloudEvent::default();
    let Routed::Unmatched { reason, .. } = host.deliver(stranger).await.unwrap() else {
        panic!("an event of no definition reaches nobody");
    };
    assert!(reason.contains("matches no event definition"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_nobody_takes_says_why_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    an_event_nobody_takes_says_why(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_nobody_takes_says_why_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    an_event_nobody_takes_says_why(store).await;
}

/// `count` letters that do not compress (PostgreSQL compresses a long text before it indexes
/// it: a repeated letter would fit).
fn letters(count: usize) -> String {
    let mut state: u32 = 0x9E37_79B9;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            char::from(b'a' + u8::try_from(state % 26).unwrap())
        })
        .collect()
}

/// An event, a correlation or a worker name holding U+0000 (CloudEvents does not allow it in a
/// string, PostgreSQL's text cannot hold it), and an event id, source or correlation longer than
/// the stores index, are refused as `Invalid` on every store alike, and alone: the events and
/// starts that go to the store in the same batch are not failed with them.
async fn text_no_store_holds_is_refused_alone<S: Store>(store: S) {
    use swf_runtime::{EventBuilder, EventBuilderV10, MAX_STORED_KEY_BYTES};
    use swf_tests::shop::DurableOrderEvent;

    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let nul_id = DurableOrderEvent::Shipped
        .correlated("ship-1\u{0}", "1", json!({}))
        .unwrap();
    let nul_source = EventBuilderV10::new()
        .id("ship-2")
        .source("ware\u{0}house")
        .ty("order.shipped")
        .extension("orderid", "2")
        .build()
        .unwrap();
    let nul_value = DurableOrderEvent::Shipped
        .correlated("ship-3", "3\u{0}", json!({}))
        .unwrap();
    let nul_binding = BTreeMap::from([(String::from("orderid"), String::from("6\u{0}"))]);
    // JSON data under a content type the CloudEvents reader takes for text: stored, it could
    // not be read back, and every claim of the instance whose inbox held it would fail.
    let json_as_text = EventBuilderV10::new()
        .id("ship-7")
        .source("warehouse")
        .ty("order.shipped")
        .extension("orderid", "7")
        .data("text/plain", json!({"carrier": "post"}))
        .build()
        .unwrap();
    let (by_id, by_source, by_value, by_data, fine, refused_start, started) = tokio::join!(
        host.deliver(nul_id),
        host.deliver(nul_source),
        host.deliver(nul_value),
        host.deliver(json_as_text),
        host.deliver(shipped(404)),
        host.start_correlated(order_input(6, 1), nul_binding),
        host.start(order_input(5, 1)),
    );
    for (refused, field) in [
        (
            by_id,
            "the event \"ship-1\\0\" from \"warehouse\" is refused: its id holds",
        ),
        (
            by_source,
            "from \"ware\\0house\" is refused: its source holds",
        ),
        (by_value, "its correlation attribute `orderid` holds"),
    ] {
        let error = refused.expect_err("refused");
        assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
        assert!(
            error.message.contains(field) && error.message.contains("U+0000"),
            "{}",
            error.message
        );
    }
    let error = by_data.expect_err("JSON data as text refused");
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
    assert!(
        error.message.contains("its content type is \"text/plain\"")
            && error
                .message
                .contains("give it the content type application/json"),
        "{}",
        error.message
    );
    assert!(
        matches!(fine.unwrap(), Routed::Unmatched { .. }),
        "nobody waits for order 404"
    );
    match refused_start {
        Err(StartError::Store(error)) if error.kind == StoreErrorKind::Invalid => {
            assert!(
                error.message.contains("\"orderid\" = \"6\\0\" is refused"),
                "{}",
                error.message
            );
        }
        other => panic!("a correlation holding U+0000 was not refused: {other:?}"),
    }
    let id = started.unwrap();
    assert_eq!(store.instance(id).await.unwrap().unwrap().record.id, id);

    // The stores index ids, sources and correlation values: at most MAX_STORED_KEY_BYTES each,
    // whatever their text (letters that do not compress fill a PostgreSQL index entry).
    let at_most = MAX_STORED_KEY_BYTES;
    let long_id = EventBuilderV10::new()
        .id(letters(at_most + 1))
        .source("warehouse")
        .ty("order.shipped")
        .build()
        .unwrap();
    let long_value = DurableOrderEvent::Shipped
        .correlated("ship-8", &letters(20_000), json!({}))
        .unwrap();
    let long_binding = BTreeMap::from([(String::from("orderid"), letters(at_most + 1))]);
    let longest = EventBuilderV10::new()
        .id(letters(at_most))
        .source(letters(at_most))
        .ty("order.shipped")
        .build()
        .unwrap();
    let longest_binding = BTreeMap::from([(String::from("orderid"), letters(at_most))]);
    let (by_id, by_value, refused_start, fine, started) = tokio::join!(
        host.deliver(long_id),
        host.deliver(long_value),
        host.start_correlated(order_input(9, 1), long_binding),
        host.deliver(longest),
        host.start_correlated(order_input(10, 1), longest_binding),
    );
    for (refused, what) in [
        (
            by_id,
            "its id is 1025 bytes long, and the stores index at most 1024",
        ),
        (
            by_value,
            "its correlation attribute `orderid` is 20000 bytes long",
        ),
    ] {
        let error = refused.expect_err("refused");
        assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
        assert!(error.message.contains(what), "{}", error.message);
        assert!(
            error.message.len() < 400,
            "a message that quotes it all: {}",
            error.message
        );
    }
    match refused_start {
        Err(StartError::Store(error)) if error.kind == StoreErrorKind::Invalid => {
            assert!(
                error.message.contains("is 1025 bytes long"),
                "{}",
                error.message
            );
        }
        other => panic!("a correlation of 1025 bytes was not refused: {other:?}"),
    }
    assert!(matches!(fine.unwrap(), Routed::Unmatched { .. }));
    started.expect("a correlation value of MAX_STORED_KEY_BYTES is stored");

    // A worker writes its name with every lease it takes.
    let Err(refused) = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "w\u{0}2"),
    )
    .await
    else {
        panic!("a worker name holding U+0000 was not refused");
    };
    assert_eq!(refused.kind, StoreErrorKind::Invalid, "{}", refused.message);
    assert!(
        refused
            .message
            .contains("the worker name \"w\\02\" is refused"),
        "{}",
        refused.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_no_store_holds_is_refused_alone_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    text_no_store_holds_is_refused_alone(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_no_store_holds_is_refused_alone_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    text_no_store_holds_is_refused_alone(store).await;
}

/// An event whose data is JSON text under a JSON content type is read as that JSON, by the step
/// that takes it from the store as by one given it in memory: stored as the text, it came back
/// as a JSON string, so an order whose step read it from its inbox (it came while the order
/// was packing) failed to merge a string into its data.
async fn json_text_reads_the_same_once_stored<S: Store>(store: S) {
    let (clock, _shop, host) = order_host(&store, 0).await;
    let worker = Running::start(&host);
    let id = host
        .start_correlated(order_input(8, 1), correlated(8))
        .await
        .unwrap();
    waiting_at(&store, id, "Pack").await;
    let mut event = shipped(8);
    event.set_data("application/json", String::from(r#"{"tracking": "TRK-8"}"#));
    host.deliver(event).await.unwrap();
    clock.advance(HOUR);
    assert_eq!(
        host.wait(id).await.unwrap(),
        Ended::Completed(order_output(8, 1))
    );
    drop(worker.stop().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_text_reads_the_same_once_stored_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    json_text_reads_the_same_once_stored(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_text_reads_the_same_once_stored_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    json_text_reads_the_same_once_stored(store).await;
}

/// A wait ends at its deadline, however late the step that finds it runs: the shipping notice
/// that came an hour after the day the order waited for it, while no worker ran, is not taken
/// by the step that runs when a worker comes back; the wait times out (the order goes on
/// without tracking) and the notice stays in the inbox.
async fn an_event_after_the_deadline_does_not_end_the_wait<S: Store>(store: S) {
    let (clock, _shop, host) = order_host(&store, 0).await;
    let worker = Running::start(&host);
    let id = host
        .start_correlated(order_input(9, 1), correlated(9))
        .await
        .unwrap();
    waiting_at(&store, id, "Pack").await;
    clock.advance(HOUR);
    waiting_at(&store, id, "AwaitShipping").await;
    drop(worker.stop().await);
    // The day passes with no worker; the notice comes an hour late.
    clock.advance(25 * HOUR);
    host.deliver(shipped(9)).await.unwrap();
    clock.advance(HOUR);
    let worker = Running::start(&host);
    let mut expected = order_output(9, 1);
    let untracked = |data: &mut Value| data.as_object_mut().map(|data| data.remove("tracking"));
    untracked(&mut expected);
    for picked in expected["picked"].as_array_mut().unwrap() {
        untracked(picked);
    }
    assert_eq!(host.wait(id).await.unwrap(), Ended::Completed(expected));
    drop(worker.stop().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_after_the_deadline_does_not_end_the_wait_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    an_event_after_the_deadline_does_not_end_the_wait(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_after_the_deadline_does_not_end_the_wait_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    an_event_after_the_deadline_does_not_end_the_wait(store).await;
}

/// Cuts every connection of the store whose `application_name` is `name`, every few
/// milliseconds until stopped; gives back how many it cut.
fn cut_connections(name: String, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<u64> {
    tokio::spawn(async move {
        let (client, connection) =
            tokio_postgres::connect(stores::POSTGRES_URL, tokio_postgres::NoTls)
                .await
                .expect("an administration connection");
        tokio::spawn(connection);
        let mut cut = 0;
        while !stop.load(Ordering::SeqCst) {
            let rows = client
                .query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = $1",
                    &[&name],
                )
                .await
                .expect("the administration connection is not cut");
            cut += rows.len() as u64;
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        cut
    })
}

/// The server cutting the store's connections (a restart, a failover, a proxy's idle timeout),
/// again and again while orders start and run: every order starts once and completes with its
/// output, every transition is committed once, each event is taken once, and each produced
/// event keeps its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_cuts_lose_nothing_on_postgres() {
    if !stores::postgres_available().await {
        return;
    }
    let schema = stores::Schema::fresh();
    let url = format!("{}?application_name={}", stores::POSTGRES_URL, schema.name);
    let store = PostgresStore::open_in_schema(&url, &schema.name)
        .await
        .unwrap();
    let (clock, _shop, host) = order_host(&store, 0).await;
    let mut reports = host.reports();
    let worker = Running::start(&host);
    let orders: Vec<u64> = (1..=12).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let cutter = cut_connections(schema.name.clone(), stop.clone());
    let mut failed_calls = 0;
    let mut ids = Vec::new();
    for &order in &orders {
        // A start that fails may have started its instance: retried with its key, it starts
        // it once.
        let key = format!("order-{order}");
        loop {
            let started = host
                .start_keyed(&key, order_input(order, 2), correlated(order))
                .await;
            match started {
                Ok(id) => break ids.push(id),
                Err(StartError::Store(error)) => {
                    assert_eq!(error.kind, StoreErrorKind::Unavailable, "{error}");
                    failed_calls += 1;
                    assert!(failed_calls < 1_000, "order {order} never started: {error}");
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Err(other) => panic!("order {order}: {other:?}"),
            }
        }
    }
    for &order in &orders {
        // What a caller does with `Unavailable`: try again. A retry of a delivery that was
        // stored before its answer was lost is a duplicate.
        loop {
            match host.deliver(shipped(order)).await {
                Ok(_) => break,
                Err(error) => {
                    assert_eq!(error.kind, StoreErrorKind::Unavailable, "{error}");
                    failed_calls += 1;
                    assert!(
                        failed_calls < 1_000,
                        "order {order}'s event never stored: {error}"
                    );
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
        }
    }
    clock.advance(HOUR + SECOND);
    // The orders run on under the cuts for a while, then the outage ends.
    tokio::time::sleep(Duration::from_millis(600)).await;
    stop.store(true, Ordering::SeqCst);
    let cut = cutter.await.unwrap();
    // A claim the store committed but whose answer the cut lost leaves its instance leased to
    // this worker, which does not know it holds it: it is taken over when the lease expires,
    // as a dead worker's would be (then its delay starts, from that hour). Time passes until
    // every order has ended.
    for _ in 0..6 {
        clock.advance(HOUR + SECOND);
        let all = async {
            for &id in &ids {
                host.wait(id).await.is_ok().then_some(())?;
            }
            Some(())
        };
        if let Ok(Some(())) = tokio::time::timeout(Duration::from_secs(5), all).await {
            break;
        }
    }
    for (&order, &id) in orders.iter().zip(&ids) {
        // The outage is over: the store answers, and `outcome` with it.
        let record = store.instance(id).await;
        let ended = host.outcome(id).await.unwrap();
        let ended = ended.unwrap_or_else(|| panic!("order {order} never ended: {record:?}"));
        assert_eq!(
            ended,
            Ended::Completed(order_output(order, 2)),
            "order {order}"
        );
    }
    let mut produced = worker.stop().await;
    let mut failures = 0;
    while let Ok(report) = reports.try_recv() {
        if matches!(report, Report::StoreFailed { .. }) {
            failures += 1;
        }
    }
    eprintln!(
        "{cut} connections cut; {failures} store failures reported, {failed_calls} calls failed"
    );
    assert!(
        cut > 0 && failures + failed_calls > 0,
        "the host met no outage: the test tested nothing"
    );

    for (&order, &id) in orders.iter().zip(&ids) {
        let history = store.history(id).await.unwrap();
        stores::assert_committed_once(&history, &format!("order {order}"));
        let took: Vec<&String> = history.iter().flat_map(|entry| &entry.consumed).collect();
        assert_eq!(took, [&format!("warehouse ship-{order}")], "order {order}");
    }
    let mut ends = BTreeMap::new();
    while let Ok(event) = produced.try_recv() {
        let order = swf_runtime::context_attribute(&event, "orderid").unwrap();
        let id = swf_runtime::AttributesReader::id(&event).to_owned();
        let first = ends.entry(order.clone()).or_insert_with(|| id.clone());
        assert_eq!(
            *first, id,
            "order {order}'s end event sent again with another id"
        );
    }
    assert_eq!(ends.len(), orders.len(), "{ends:?}");
    let all = store
        .list(&ListFilter {
            limit: 100,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        all.len(),
        orders.len(),
        "one instance per start key: {all:?}"
    );
}

/// A start retried with its key starts one instance; another input under the key is refused.
async fn a_keyed_start_starts_once<S: Store>(store: S) {
    let (clock, shop, host) = order_host(&store, 0).await;
    let worker = Running::start(&host);
    let first = host
        .start_keyed("order-7", order_input(7, 2), correlated(7))
        .await
        .unwrap();
    let again = host
        .start_keyed("order-7", order_input(7, 2), correlated(7))
        .await
        .unwrap();
    assert_eq!(first, again);
    match host
        .start_keyed("order-7", order_input(8, 5), correlated(8))
        .await
    {
        Err(StartError::KeyTaken { key, instance }) => {
            assert_eq!((key.as_str(), instance), ("order-7", first));
        }
        unexpected => panic!("another input under a taken key: {unexpected:?}"),
    }
    let other = host
        .start_keyed("order-8", order_input(8, 1), correlated(8))
        .await
        .unwrap();
    assert_ne!(first, other);
    match host
        .start_keyed("order\0", order_input(9, 1), correlated(9))
        .await
    {
        Err(StartError::Store(error)) => {
            assert_eq!(error.kind, StoreErrorKind::Invalid, "{error}");
            assert!(error.message.contains("start key"), "{error}");
        }
        unexpected => panic!("a key holding U+0000 was taken: {unexpected:?}"),
    }
    waiting_at(&store, first, "Pack").await;
    host.deliver(shipped(7)).await.unwrap();
    clock.advance(HOUR + SECOND);
    let ended = host.wait(first).await.unwrap();
    assert_eq!(
        ended,
        Ended::Completed(order_output(7, 2)),
        "the first input"
    );
    // After the end too, the key is the ended instance's.
    let ended_again = host
        .start_keyed("order-7", order_input(7, 2), correlated(7))
        .await
        .unwrap();
    assert_eq!(ended_again, first);
    drop(worker.stop().await);
    assert_eq!(
        shop.calls_of("charge").len(),
        2,
        "orders 7 and 8, once each"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_start_starts_once_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_keyed_start_starts_once(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_start_starts_once_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_keyed_start_starts_once(store).await;
}

mod meter {
    swf_runtime::workflow!("workflows/durable/meter.sw.yaml");

    /// The meter calls no function.
    #[derive(Clone)]
    pub struct NoFunctions;

    impl MeterFunctions for NoFunctions {}
}

/// A reading of meter `m1`, the last one when `last`.
fn reading(n: u32, last: bool) -> CloudEvent {
    meter::MeterEvent::Reading
        .correlated(&format!("reading-{n}"), "m1", json!({"n": n, "last": last}))
        .unwrap_or_default()
}

/// The revisions of instance `id`'s history, oldest first.
async fn history_revisions<S: Store>(store: &S, id: InstanceId) -> Vec<u64> {
    let history = store.history(id).await.unwrap();
    assert_eq!(history[0].kind, HistoryKind::Started, "the input stays");
    history.iter().map(|entry| entry.revision).collect()
}

/// A worker with a history limit keeps an instance that steps for ever to its first entry and
/// its latest ones, while it runs and once it ends.
async fn a_history_limit_bounds_what_a_long_run_keeps<S: Store>(store: S) {
    const LIMIT: u64 = 16;
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        meter::MeterWorkflow::new(meter::NoFunctions),
        store.clone(),
        config(&clock, "w1").history_limit(LIMIT),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let correlation = BTreeMap::from([(String::from("meterid"), String::from("m1"))]);
    let id = host.start_correlated(json!({}), correlation).await.unwrap();
    let mut revision = waiting_at(&store, id, "AwaitReading").await.revision;
    // Each reading taken before the next comes: three commits a reading (the event taken,
    // the switch, the wait), 73 in all, of which the limit keeps the latest 16 or 17.
    for n in 0..24 {
        host.deliver(reading(n, false)).await.unwrap();
        revision = until(&store, id, "took the reading", |record| {
            record.revision > revision && record.status == Status::Waiting
        })
        .await
        .revision;
    }
    assert!(revision > 2 * LIMIT, "{revision} steps");
    // Dropped every `LIMIT / 8` = 2 commits: at an even revision the latest `LIMIT` stay, at an
    // odd one also the one before them.
    let kept = |revision: u64| {
        let first = revision + 1 - LIMIT - revision % 2;
        std::iter::once(0)
            .chain(first..=revision)
            .collect::<Vec<u64>>()
    };
    assert_eq!(history_revisions(&store, id).await, kept(revision));

    host.deliver(reading(24, true)).await.unwrap();
    // Fails within seconds, rather than waiting for ever, should the last reading not end it.
    until(&store, id, "completed", |record| {
        record.status == Status::Completed
    })
    .await;
    assert_eq!(
        host.wait(id).await.unwrap(),
        Ended::Completed(json!({"n": 24, "last": true, "done": true}))
    );
    let ended = store.instance(id).await.unwrap().unwrap().record;
    assert_eq!(history_revisions(&store, id).await, kept(ended.revision));
    let history = store.history(id).await.unwrap();
    assert_eq!(history.last().unwrap().kind, HistoryKind::Completed);
    drop(worker.stop().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_limit_bounds_what_a_long_run_keeps_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_history_limit_bounds_what_a_long_run_keeps(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_limit_bounds_what_a_long_run_keeps_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_history_limit_bounds_what_a_long_run_keeps(store).await;
}

/// A worker with a retention removes what outlived it: the order that ended, the events no
/// instance holds (an event purged is new again); the order still waiting stays.
async fn a_retention_purges_what_ended<S: Store>(store: S) {
    const DAY: Duration = Duration::from_secs(86_400);
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        DurableOrderWorkflow::new(Shop::new(0)),
        store.clone(),
        config(&clock, "w1").retention(DAY),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let ended = host
        .start_correlated(order_input(7, 1), correlated(7))
        .await
        .unwrap();
    waiting_at(&store, ended, "Pack").await;
    host.deliver(shipped(7)).await.unwrap();
    let stray = host.deliver(shipped(404)).await.unwrap();
    clock.advance(HOUR + SECOND);
    host.wait(ended).await.unwrap();
    let waiting = host
        .start_correlated(order_input(8, 1), correlated(8))
        .await
        .unwrap();
    waiting_at(&store, waiting, "Pack").await;
    let mut produced = worker.stop().await;
    assert!(produced.recv().await.is_some(), "the end event was sent");

    // A day later the next worker's first sweep removes the order and both events.
    clock.advance(DAY + SECOND);
    let mut reports = host.reports();
    let worker = Running::start(&host);
    let purged = loop {
        match reports.recv().await.unwrap() {
            Report::Purged { purged } => break purged,
            Report::StoreFailed { error, .. } => panic!("{error}"),
            _ => {}
        }
    };
    assert_eq!(
        purged,
        Purged {
            instances: 1,
            events: 2
        }
    );
    assert!(store.instance(ended).await.unwrap().is_none());
    assert!(store.history(ended).await.unwrap().is_empty());
    let error = host.outcome(ended).await.unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::NotFound);
    assert!(error.message.contains("purged"), "{error}");
    assert!(
        store.instance(waiting).await.unwrap().is_some(),
        "an instance that had not ended stays"
    );
    let again = host.deliver(shipped(404)).await.unwrap();
    assert!(
        matches!(again, Routed::Unmatched { seq, .. } if seq > stray.seq()),
        "a purged event is new again: {again:?}"
    );
    drop(worker.stop().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retention_purges_what_ended_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_retention_purges_what_ended(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retention_purges_what_ended_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_retention_purges_what_ended(store).await;
}

mod labels {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use swf_runtime::{FunctionError, Value, json};

    swf_runtime::workflow!("workflows/durable/label.sw.yaml");

    /// `label` fails its first call (the printer jams), then prints the tracking number.
    #[derive(Clone, Default)]
    pub struct Printer {
        calls: Arc<AtomicU32>,
    }

    impl DurableLabelFunctions for Printer {
        async fn label(&self, args: Value) -> Result<Value, FunctionError> {
            if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
                return Err(FunctionError::new("the printer jammed"));
            }
            let tracking = args["tracking"].as_str().unwrap_or_default();
            Ok(json!(format!("LBL-{tracking}")))
        }
    }
}

/// A step that took an event and failed in the call after it is not committed: the failed
/// instance keeps the event in its inbox, and its binding; nothing is reported unmatched; a
/// redrive runs the step again, which takes the event again and completes with its data.
async fn a_redriven_step_takes_its_event_again<S: Store>(store: S) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        labels::DurableLabelWorkflow::new(labels::Printer::default()),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let mut reports = host.reports();
    let worker = Running::start(&host);
    let id = host
        .start_correlated(json!({"orderId": 7}), correlated(7))
        .await
        .unwrap();
    waiting_at(&store, id, "AwaitShipping").await;
    let shipped = host.deliver(shipped(7)).await.unwrap();
    let Ended::Failed(error) = host.wait(id).await.unwrap() else {
        panic!("the first label fails the instance");
    };
    assert!(error.to_string().contains("the printer jammed"), "{error}");
    let failed = store.instance(id).await.unwrap().unwrap();
    assert_eq!(failed.record.position, "AwaitShipping");
    assert_eq!(
        failed
            .inbox
            .iter()
            .map(|event| event.seq)
            .collect::<Vec<_>>(),
        vec![shipped.seq()],
        "the event the failed step took is kept"
    );
    assert_eq!(
        failed.record.correlation,
        vec![(String::from("orderid"), String::from("7"))]
    );

    store.redrive(id, epoch()).await.unwrap();
    // Without its event, the step would wait for it for ever.
    let ended = tokio::time::timeout(Duration::from_secs(30), host.wait(id))
        .await
        .expect("the redriven instance ends")
        .unwrap();
    assert_eq!(
        ended,
        Ended::Completed(json!({
            "orderId": 7,
            "accepted": true,
            "tracking": "TRK-7",
            "label": "LBL-TRK-7",
        }))
    );
    worker.stop().await;
    while let Ok(report) = reports.try_recv() {
        assert!(
            !matches!(report, Report::Unmatched { .. }),
            "the failed instance gave up no event: {report:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redriven_step_takes_its_event_again_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_redriven_step_takes_its_event_again(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redriven_step_takes_its_event_again_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_redriven_step_takes_its_event_again(store).await;
}

/// `wait` on a cancelled instance answers the reason it was cancelled for.
async fn a_cancelled_instance_says_why<S: Store>(store: S) {
    let (_clock, _shop, host) = order_host(&store, 1).await;
    let worker = Running::start(&host);
    let id = host
        .start_correlated(order_input(7, 1), correlated(7))
        .await
        .unwrap();
    waiting_at(&store, id, "Charge").await;
    store.cancel(id, "customer left", epoch()).await.unwrap();
    assert_eq!(
        host.wait(id).await.unwrap(),
        Ended::Cancelled(String::from("customer left"))
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_instance_says_why_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_cancelled_instance_says_why(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_instance_says_why_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_cancelled_instance_says_why(store).await;
}

mod greeting {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use swf_runtime::{FunctionError, Value, json};
    use tokio::sync::Semaphore;

    swf_runtime::workflow!("workflows/events/greeting.sw.yaml");

    /// Greets once the test lets it (one permit per greeting), counting the greetings begun.
    #[derive(Clone)]
    pub struct Gate {
        pub begun: Arc<AtomicUsize>,
        pub permits: Arc<Semaphore>,
    }

    impl GreetingFunctions for Gate {
        async fn greeting_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.begun.fetch_add(1, Ordering::SeqCst);
            let permit = self.permits.acquire().await;
            drop(permit);
            Ok(json!(format!(
                "Hello {}!",
                args["customerName"].as_str().unwrap_or("?")
            )))
        }
    }
}

/// A customer arriving while the first one is greeted starts an instance of its own: the
/// first instance, which took its event and runs its action, no longer waits for one.
async fn a_customer_arriving_during_a_greeting_is_greeted_too<S: Store>(store: S) {
    use greeting::{Gate, GreetingEvent, GreetingWorkflow};
    let gate = Gate {
        begun: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        permits: Arc::new(tokio::sync::Semaphore::new(0)),
    };
    let clock = Arc::new(ManualClock::new(epoch()));
    let host = DurableHost::open(
        GreetingWorkflow::new(gate.clone()),
        store.clone(),
        config(&clock, "w1"),
    )
    .await
    .unwrap();
    let worker = Running::start(&host);
    let arrival = |id: &str| {
        GreetingEvent::CustomerArrivesEvent
            .event(id, json!({"customer": {"name": id}}))
            .unwrap()
    };
    let first = host.deliver(arrival("c-1")).await.unwrap();
    let Routed::Started {
        instance: first, ..
    } = first
    else {
        panic!("c-1 starts an instance: {first:?}");
    };
    for _ in 0..2_000 {
        if gate.begun.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        gate.begun.load(Ordering::SeqCst),
        1,
        "the first greeting began"
    );
    let second = host.deliver(arrival("c-2")).await.unwrap();
    gate.permits.add_permits(2);
    let Routed::Started {
        instance: second, ..
    } = second
    else {
        panic!("c-2 starts an instance of its own: {second:?}");
    };
    for (id, name) in [(first, "c-1"), (second, "c-2")] {
        assert_eq!(
            host.wait(id).await.unwrap(),
            Ended::Completed(json!(format!("Hello {name}!")))
        );
    }
    drop(worker.stop().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customer_arriving_during_a_greeting_is_greeted_too_on_sqlite() {
    let (store, _dir) = stores::sqlite().await;
    a_customer_arriving_during_a_greeting_is_greeted_too(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customer_arriving_during_a_greeting_is_greeted_too_on_postgres() {
    let Some((store, _schema)) = stores::postgres().await else {
        return;
    };
    a_customer_arriving_during_a_greeting_is_greeted_too(store).await;
}
