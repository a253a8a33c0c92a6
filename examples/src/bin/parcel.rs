//! A parcel workflow (`workflows/parcel.sw.yaml`) run durably on a SQLite file: every
//! transition is committed, so an interrupted run (Ctrl-C, `kill -9`, a power cut) loses
//! nothing. Run it, interrupt it while it packs, run it again: it resumes where it was, and the
//! delay ends when it would have.
//!
//! ```sh
//! cargo run -p swf-examples --bin parcel              # the store is ./swf-example.db
//! cargo run -p swf-examples --bin parcel -- other.db  # or another file
//! ```
//!
//! The card is charged once whatever happens: the payment "service" here keeps one charge per
//! idempotency key (in `<store>.payments`), as a real one would.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use swf_runtime::store::sqlite::SqliteStore;
use swf_runtime::store::{ListFilter, Status, Store};
use swf_runtime::{
    CallContext, Discard, DurableConfig, DurableHost, Ended, FunctionError, InstanceId, Value, json,
};

swf_runtime::workflow!("workflows/parcel.sw.yaml");

/// Stand-ins for the real services.
struct Services {
    payments: PathBuf,
}

impl ParcelFunctions for Services {
    async fn reserve(&self, args: Value) -> Result<Value, FunctionError> {
        println!("  reserve {} × {}", args["quantity"], args["sku"]);
        Ok(json!({"warehouse": "north"}))
    }

    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        // The same for this attempt however often the step runs again (after a crash, say);
        // another for a retry.
        let key = CallContext::current()
            .map(|call| call.idempotency_key())
            .unwrap_or_default();
        let charged = std::fs::read_to_string(&self.payments).unwrap_or_default();
        if let Some(line) = charged
            .lines()
            .find(|line| line.starts_with(&format!("{key} ")))
        {
            println!("  charge: already charged under {key}, not charging again");
            let receipt = line.rsplit(' ').next().unwrap_or_default();
            return Ok(json!({"receipt": receipt, "amount": args["amount"]}));
        }
        let receipt = format!("rcpt-{}", charged.lines().count() + 1);
        std::fs::write(&self.payments, format!("{charged}{key} {receipt}\n"))
            .map_err(|error| FunctionError::named("PaymentFailed", error.to_string()))?;
        println!("  charge {} (idempotency key {key})", args["amount"]);
        Ok(json!({"receipt": receipt, "amount": args["amount"]}))
    }

    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        println!("  ship {}", args["sku"]);
        Ok(json!({"courier": "swift-post", "tracking": "SP-1001"}))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("swf-example.db"), PathBuf::from);
    let store = SqliteStore::open(&path).await?;
    let services = Services {
        payments: path.with_extension("payments"),
    };
    // A short lease, so that a run killed with `kill -9` (which cannot let go of the instance
    // it was stepping) is taken over two seconds later rather than thirty.
    let config = DurableConfig::default()
        .worker("parcel-example")
        .lease(Duration::from_secs(2));
    let host = DurableHost::open(ParcelWorkflow::new(services), store.clone(), config).await?;

    let id = match unfinished(&store).await? {
        Some(id) => {
            let record = store
                .instance(id)
                .await?
                .ok_or("the instance vanished")?
                .record;
            println!(
                "resuming parcel {id} from {} at `{}` (revision {}), where the last run stopped",
                path.display(),
                record.position,
                record.revision
            );
            id
        }
        None => {
            let input = json!({"sku": "BOOK-7", "quantity": 2, "total": 40});
            let id = host.start(input).await?;
            println!(
                "started parcel {id}, saved in {}: interrupt me (Ctrl-C or kill -9) and run me again",
                path.display()
            );
            id
        }
    };

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut worker = tokio::spawn({
        let host = host.clone();
        async move {
            host.run(Discard, async {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = stopped => {}
                }
            })
            .await;
        }
    });
    let follow = tokio::spawn(follow(store.clone(), id));

    let ended = tokio::select! {
        ended = host.wait(id) => ended?,
        _ = &mut worker => {
            follow.abort();
            let record = store.instance(id).await?.ok_or("the instance vanished")?.record;
            println!(
                "interrupted: parcel {id} is saved at `{}`; run me again to resume it",
                record.position
            );
            return Ok(());
        }
    };
    follow.abort();
    let _ = stop.send(());
    let _ = worker.await;

    match ended {
        Ended::Completed(output) => println!("completed: {output}"),
        Ended::Failed(error) => println!("failed: {error}\ndata: {}", error.data()),
        Ended::Cancelled(reason) => println!("cancelled: {reason}"),
    }
    println!("history of parcel {id}:");
    for entry in store.history(id).await? {
        println!(
            "  {:>2} {} {:<9} {} -> {}",
            entry.revision,
            entry.at.strftime("%H:%M:%S%.3f"),
            format!("{:?}", entry.kind).to_lowercase(),
            if entry.from.is_empty() {
                "(start)"
            } else {
                &entry.from
            },
            entry.to
        );
    }
    println!(
        "(`cargo run -p swf-runtime --features cli --bin swf -- --store {} list` lists every run)",
        display(&path)
    );
    Ok(())
}

/// The newest parcel that has not ended, if any.
async fn unfinished(store: &SqliteStore) -> Result<Option<InstanceId>, Box<dyn Error>> {
    let filter = ListFilter {
        workflow: Some("parcel".into()),
        statuses: vec![Status::Runnable, Status::Waiting],
        limit: 1,
        ..ListFilter::default()
    };
    Ok(store.list(&filter).await?.first().map(|summary| summary.id))
}

/// Prints where the instance is each time that changes, as the store has it.
async fn follow(store: SqliteStore, id: InstanceId) {
    let mut last = None;
    loop {
        if let Ok(Some(claimed)) = store.instance(id).await {
            let record = claimed.record;
            let now = (record.position.clone(), record.status, record.wake_at);
            if last.as_ref() != Some(&now) {
                if record.status == Status::Waiting {
                    match record.wake_at {
                        Some(until) => println!(
                            "  at `{}`, waiting until {} (a row in the store, not a future)",
                            record.position,
                            until.strftime("%H:%M:%S%.3f")
                        ),
                        None => println!("  at `{}`, waiting", record.position),
                    }
                }
                last = Some(now);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
