//! A durable worker process, for the tests that kill one for real (`tests/tests/crash.rs`,
//! `tests/tests/workers.rs`). It runs the quick order workflow on the store its command line
//! names:
//!
//! ```text
//! durable-worker start --store URL [--schema S] --orders N --items K
//! durable-worker run   --store URL [--schema S] --orders N --items K --worker NAME --log DIR
//!                      [--lease-ms L] [--crash POINT]
//! ```
//!
//! `start` creates orders 1 to N (each correlated by its order id). `run` steps instances until
//! no instance of the store is runnable or waiting (then sends what is left in the outbox), and
//! delivers each order's `Shipped` event:
//! odd orders' at once (before they wait for it), even orders' once they wait for it. The store
//! drops the copies that another run or worker already delivered. Every function call is
//! appended to `DIR/calls` (with the run's worker name and the call's idempotency key) and every
//! produced event to `DIR/produced`, one line per write, so a line survives a SIGKILL.
//!
//! The workflow is the quick order (`workflows/durable/quick-order.sw.yaml`): its waits are
//! short enough to run on the real clock, which leases are read from too.
//!
//! `--crash POINT` kills this process with SIGKILL at that point: `step:N`, `commit:N`,
//! `committed:N` (the Nth time the host reaches that probe point), `stored:N` (events stored, not
//! yet acknowledged), `sent:N` (a produced event sent, not yet marked delivered),
//! `call:FUNCTION:N` (inside the Nth call of that function) or `waiting:TASK` (once an instance
//! waits at that task, as the store says).

use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use swf_runtime::store::postgres::PostgresStore;
use swf_runtime::store::{AnyStore, ListFilter, Status, Store};
use swf_runtime::{
    CallContext, CloudEvent, DurableConfig, DurableHost, EventSink, InstanceId, ProbePoint, json,
};
use swf_tests::shop::quick::{QuickOrderEvent, QuickOrderWorkflow};
use swf_tests::shop::{Shop, order_input};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match Options::parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("durable-worker: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(options.execute()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("durable-worker: {message}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    command: String,
    store: String,
    schema: Option<String>,
    orders: u64,
    items: u64,
    worker: String,
    log: PathBuf,
    lease: Duration,
    crash: Option<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let (command, rest) = args.split_first().ok_or("give a command: start or run")?;
        let mut values: HashMap<&str, &str> = HashMap::new();
        for pair in rest.chunks(2) {
            match pair {
                [key, value] if key.starts_with("--") => {
                    values.insert(&key[2..], value);
                }
                _ => return Err(format!("expected `--option value`, found {pair:?}")),
            }
        }
        let number = |key: &str, default: u64| -> Result<u64, String> {
            values.get(key).map_or(Ok(default), |text| {
                text.parse().map_err(|_| format!("--{key} takes a number"))
            })
        };
        Ok(Self {
            command: command.clone(),
            store: values
                .get("store")
                .ok_or("--store is required")?
                .to_string(),
            schema: values.get("schema").map(ToString::to_string),
            orders: number("orders", 1)?,
            items: number("items", 2)?,
            worker: values.get("worker").unwrap_or(&"worker").to_string(),
            log: PathBuf::from(values.get("log").unwrap_or(&".")),
            lease: Duration::from_millis(number("lease-ms", 30_000)?),
            crash: values.get("crash").map(ToString::to_string),
        })
    }

    async fn open_store(&self) -> Result<AnyStore, String> {
        match &self.schema {
            Some(schema) => PostgresStore::open_in_schema(&self.store, schema)
                .await
                .map(AnyStore::Postgres),
            None => AnyStore::open(&self.store).await,
        }
        .map_err(|error| format!("cannot open the store: {error}"))
    }

    async fn execute(self) -> Result<(), String> {
        let store = self.open_store().await?;
        let crash = Arc::new(Crash::parse(self.crash.as_deref())?);
        let shop = Shop::busy_on_first_attempt().with_hook({
            let calls = Log::open(&self.log.join("calls"))?;
            let worker = self.worker.clone();
            let crash = Arc::clone(&crash);
            Arc::new(move |function: &'static str, context: &CallContext| {
                calls.line(&format!(
                    "{worker} {function} {}",
                    context.idempotency_key()
                ));
                crash.at_call(function);
            })
        });
        let config = DurableConfig::default()
            .worker(self.worker.clone())
            .lease(self.lease)
            .poll(Duration::from_millis(20))
            .probe({
                let crash = Arc::clone(&crash);
                move |point| crash.at_probe(point)
            });
        let host = DurableHost::open(QuickOrderWorkflow::new(shop), store.clone(), config)
            .await
            .map_err(|error| format!("cannot open the host: {error}"))?;
        match self.command.as_str() {
            "start" => {
                for order in 1..=self.orders {
                    let correlation = [(String::from("orderid"), order.to_string())].into();
                    host.start_correlated(order_input(order, self.items), correlation)
                        .await
                        .map_err(|error| format!("cannot start order {order}: {error}"))?;
                }
                Ok(())
            }
            "run" => {
                // Odd orders are shipped before they wait for it (the store keeps the event
                // for them); even orders once they wait (the event wakes a passivated one).
                // The early ones go before this worker steps anything: an event that reaches
                // an instance while it is being stepped wakes it once more when it waits, an
                // extra transition that would make runs differ.
                for order in (1..=self.orders).filter(|order| order % 2 == 1) {
                    deliver(&host, order).await?;
                }
                let sink = FileSink(Log::open(&self.log.join("produced"))?);
                let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
                let worker = tokio::spawn({
                    let host = host.clone();
                    async move {
                        host.run(sink, async {
                            let _ = stopped.await;
                        })
                        .await;
                    }
                });
                // What goes wrong shows on stderr, for the test's output.
                let mut reports = host.reports();
                let name = self.worker.clone();
                tokio::spawn(async move {
                    while let Ok(report) = reports.recv().await {
                        if !matches!(report, swf_runtime::Report::Ended { .. }) {
                            eprintln!("durable-worker {name}: {report:?}");
                        }
                    }
                });
                if let Some(task) = crash.waiting_at() {
                    tokio::spawn(kill_once_waiting_at(store.clone(), task));
                }
                let mut shipped = BTreeSet::new();
                while !all_ended(&store).await? {
                    for order in awaiting_shipping(&store, &mut shipped).await? {
                        deliver(&host, order).await?;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // A worker killed after claiming produced events leaves them leased: stay
                // long enough for those leases to expire, so they are sent before this one
                // stops, as a worker that runs on would.
                tokio::time::sleep(self.lease * 2).await;
                let _ = stop.send(());
                worker
                    .await
                    .map_err(|error| format!("the worker failed: {error}"))
            }
            other => Err(format!("unknown command `{other}`: use start or run")),
        }
    }
}

async fn deliver<M: swf_runtime::Machine>(
    host: &DurableHost<M, AnyStore>,
    order: u64,
) -> Result<(), String> {
    let event = QuickOrderEvent::Shipped
        .correlated(
            &format!("ship-{order}"),
            &order.to_string(),
            json!({"tracking": format!("TRK-{order}")}),
        )
        .map_err(|error| format!("cannot build order {order}'s event: {error}"))?;
    host.deliver(event)
        .await
        .map(drop)
        .map_err(|error| format!("cannot deliver order {order}'s event: {error}"))
}

/// The orders of the instances waiting for their `Shipped` event that this process has not
/// shipped yet (`shipped` holds the instances it has).
async fn awaiting_shipping(
    store: &AnyStore,
    shipped: &mut BTreeSet<InstanceId>,
) -> Result<Vec<u64>, String> {
    let filter = ListFilter {
        statuses: vec![Status::Waiting],
        limit: 10_000,
        ..ListFilter::default()
    };
    let waiting = store
        .list(&filter)
        .await
        .map_err(|error| format!("cannot list instances: {error}"))?;
    let mut orders = Vec::new();
    for summary in waiting.iter().filter(|s| s.position == "AwaitShipping") {
        if !shipped.insert(summary.id) {
            continue;
        }
        let Ok(Some(claimed)) = store.instance(summary.id).await else {
            continue;
        };
        orders.extend(
            claimed
                .record
                .correlation
                .iter()
                .filter(|(key, _)| key == "orderid")
                .filter_map(|(_, value)| value.parse::<u64>().ok()),
        );
    }
    Ok(orders)
}

async fn all_ended(store: &AnyStore) -> Result<bool, String> {
    let filter = ListFilter {
        statuses: vec![Status::Runnable, Status::Waiting],
        limit: 1,
        ..ListFilter::default()
    };
    store
        .list(&filter)
        .await
        .map(|open| open.is_empty())
        .map_err(|error| format!("cannot list instances: {error}"))
}

async fn kill_once_waiting_at(store: AnyStore, task: String) {
    let filter = ListFilter {
        statuses: vec![Status::Waiting],
        limit: 1_000,
        ..ListFilter::default()
    };
    loop {
        if let Ok(waiting) = store.list(&filter).await
            && waiting.iter().any(|instance| instance.position == task)
        {
            kill_this_process();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Where this process dies.
#[derive(Default)]
struct Crash {
    probe: Option<(String, u32)>,
    call: Option<(String, u32)>,
    waiting: Option<String>,
    seen: Mutex<HashMap<String, u32>>,
    calls: AtomicU32,
}

impl Crash {
    fn parse(spec: Option<&str>) -> Result<Self, String> {
        let Some(spec) = spec else {
            return Ok(Self::default());
        };
        let parts: Vec<&str> = spec.split(':').collect();
        let nth = |text: &str| {
            text.parse::<u32>()
                .map_err(|_| format!("`{spec}`: `{text}` is not a count"))
        };
        match parts.as_slice() {
            ["call", function, n] => Ok(Self {
                call: Some(((*function).to_owned(), nth(n)?)),
                ..Self::default()
            }),
            ["waiting", task] => Ok(Self {
                waiting: Some((*task).to_owned()),
                ..Self::default()
            }),
            [
                kind @ ("step" | "commit" | "committed" | "stored" | "sent"),
                n,
            ] => Ok(Self {
                probe: Some(((*kind).to_owned(), nth(n)?)),
                ..Self::default()
            }),
            _ => Err(format!("`{spec}` is not a crash point")),
        }
    }

    fn waiting_at(&self) -> Option<String> {
        self.waiting.clone()
    }

    fn count(&self, kind: &str) -> u32 {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let count = seen.entry(kind.to_owned()).or_default();
        *count += 1;
        *count
    }

    fn at_probe(&self, point: ProbePoint) {
        let Some((kind, nth)) = &self.probe else {
            return;
        };
        let name = match point {
            ProbePoint::Step(..) => "step",
            ProbePoint::Commit(..) => "commit",
            ProbePoint::Committed(..) => "committed",
            ProbePoint::Stored => "stored",
            ProbePoint::Sent(_) => "sent",
        };
        if name == kind && self.count(name) == *nth {
            kill_this_process();
        }
    }

    fn at_call(&self, function: &str) {
        if let Some((name, nth)) = &self.call
            && name == function
            && self.calls.fetch_add(1, Ordering::SeqCst) + 1 == *nth
        {
            kill_this_process();
        }
    }
}

/// SIGKILL, as an OOM killer or a pulled plug would: no destructor, no flush, no unwinding.
fn kill_this_process() -> ! {
    // SAFETY: kill(2) on our own pid with a constant signal; it has no memory effects.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // The signal is delivered before kill returns to a process that sends it to itself.
    std::process::abort()
}

/// An append-only file written one line per `write`, so what was written survives a SIGKILL
/// whole.
#[derive(Clone)]
struct Log(Arc<Mutex<File>>);

impl Log {
    fn open(path: &Path) -> Result<Self, String> {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(|file| Self(Arc::new(Mutex::new(file))))
            .map_err(|error| format!("cannot open {}: {error}", path.display()))
    }

    fn line(&self, text: &str) {
        let mut file = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A failed write shows as a missing line, which the test reports.
        let _ = file.write_all(format!("{text}\n").as_bytes());
    }
}

/// Produced events, appended as `id source type orderid`.
struct FileSink(Log);

impl EventSink for FileSink {
    async fn send(&self, event: &CloudEvent) -> Result<(), String> {
        use swf_runtime::AttributesReader;
        let order = swf_runtime::context_attribute(event, "orderid").unwrap_or_default();
        self.0.line(&format!(
            "{} {} {} {order}",
            event.id(),
            event.source(),
            event.ty()
        ));
        Ok(())
    }
}
