//! The README's Rust snippets, compiled. Each one is written below between a `// README {` and
//! a `// README }` line, inside what it needs to compile (the workflow it names, a functions
//! implementation, the variables it uses), and the first test checks that the README's ```rust
//! blocks are exactly these, in order: a snippet that stops compiling, or a README edited
//! without this file, fails the suite.
#![allow(clippy::unused_async)]

use std::error::Error;

type Outcome<T> = Result<T, Box<dyn Error>>;

#[rustfmt::skip]
mod macro_snippet {
    use swf_runtime::{FunctionError, Value, json};

    pub async fn run() -> super::Outcome<Value> {
        // README {
        swf_runtime::workflow!("workflows/order.sw.yaml"); // relative to the crate's Cargo.toml

        struct Services;

        impl OrderFunctions for Services {                  // one method per function definition
            async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
                Ok(json!({"available": true}))
            }
            async fn charge_card(&self, args: Value) -> Result<Value, FunctionError> {
                Ok(json!({"charged": args["amount"]}))
            }
            async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
                Ok(json!({"tracking": "SP-1001"}))
            }
        }

        let output = OrderWorkflow::new(Services).run(json!({"order": {"total": 40}})).await?;
        // README }
        Ok(output)
    }
}

#[rustfmt::skip]
#[allow(dead_code)]
mod build_rs_snippet {
    // README {
    // build.rs (add swf-codegen to [build-dependencies])
    fn main() {
        swf_codegen::Builder::new()
            .file("workflows/order.sw.yaml")
            .compile()
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // README }
}

#[rustfmt::skip]
#[allow(dead_code)]
mod include_snippet {
    // README {
    // src/lib.rs
    swf_runtime::include_workflow!("order"); // OUT_DIR/order.rs
    // README }
}

#[rustfmt::skip]
mod events_snippet {
    use swf_runtime::{FunctionError, Io, Value, json};

    swf_runtime::workflow!("workflows/events/greeting.sw.yaml");

    struct Greeter;

    impl GreetingFunctions for Greeter {
        async fn greeting_function(&self, args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"greeting": format!("{} {}", args["greeting"], args["customerName"])}))
        }
    }

    pub async fn run() -> super::Outcome<Value> {
        // README {
        let machine = GreetingWorkflow::new(Greeter);
        let io = Io::standalone_for(&machine);           // one instance, driven by hand
        let arrival = GreetingEvent::CustomerArrivesEvent.event("e1", json!({"customer": {"name": "Ann"}}))?;
        io.deliver(arrival).await?;                      // what matches no definition comes back at once
        let output = machine.run_with(json!({"hello": {"spanish": "Hola"}}), &io).await?;
        // README }
        Ok(output)
    }
}

#[rustfmt::skip]
#[allow(dead_code)]
mod host_snippet {
    use swf_runtime::{FunctionError, Host, HostConfig, Value, json};

    swf_runtime::workflow!("workflows/events/patient.sw.yaml");

    struct Records;

    impl PatientVitalsFunctions for Records {
        async fn record_vitals(&self, args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"recorded": args}))
        }
    }

    async fn run() -> super::Outcome<()> {
        let heart_rate_reading = PatientVitalsEvent::HeartRateReadingEvent
            .correlated("h-1", "patient-7", json!({"value": "70bpm"}))?;
        // README {
        let (host, channels) = Host::new(PatientVitalsWorkflow::new(Records), HostConfig::default());
        tokio::spawn(host.run());
        channels.events.send(heart_rate_reading).await?;   // starts an instance for that patient
        // README }
        Ok(())
    }
}

#[rustfmt::skip]
#[allow(dead_code)]
mod durable_snippet {
    use swf_runtime::{CloudEvent, FunctionError, Value, json};

    swf_runtime::workflow!("workflows/order.sw.yaml");

    pub(crate) struct Services;

    impl OrderFunctions for Services {
        async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"available": true}))
        }
        async fn charge_card(&self, args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"charged": args["amount"]}))
        }
        async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"tracking": "SP-1001"}))
        }
    }

    async fn run(cloud_event: CloudEvent) -> super::Outcome<()> {
        let shutdown = std::future::pending::<()>();
        // README {
        use swf_runtime::store::sqlite::SqliteStore;            // feature `sqlite`
        use swf_runtime::{DurableConfig, DurableHost, Discard};

        let store = SqliteStore::open("orders.db").await?;      // created and migrated on open
        let host = DurableHost::open(OrderWorkflow::new(Services), store, DurableConfig::default()).await?;
        tokio::spawn({ let host = host.clone(); async move { host.run(Discard, shutdown).await } });
        let id = host.start(json!({"order": {"total": 40}})).await?;
        host.deliver(cloud_event).await?;                        // stored (deduplicated) before it returns
        let ended = host.wait(id).await?;                        // Ended::Completed(output) | Failed | Cancelled
        // README }
        let _ = ended;
        Ok(())
    }
}

#[rustfmt::skip]
#[allow(dead_code)]
mod idempotency_snippet {
    use swf_runtime::{CallContext, FunctionError, Value, json};

    swf_runtime::workflow!("workflows/order.sw.yaml");

    /// A payment service's client that takes an idempotency key.
    struct Payments;

    struct Charge {
        id: String,
    }

    #[derive(Debug)]
    struct Declined;

    impl std::fmt::Display for Declined {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("declined")
        }
    }

    impl Error for Declined {}

    use std::error::Error;

    impl Payments {
        async fn charge(&self, amount: u64, key: &str) -> Result<Charge, Declined> {
            Ok(Charge { id: format!("ch-{amount}-{}", key.len()) })
        }
    }

    struct Shop {
        payments: Payments,
    }

    impl OrderFunctions for Shop {
        async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"available": true}))
        }
        // README {
        async fn charge_card(&self, args: Value) -> Result<Value, FunctionError> {
            let key = CallContext::current().map(|call| call.idempotency_key()).unwrap_or_default();
            // Stripe, Adyen and most payment APIs take such a key; a second request with it returns
            // the first charge instead of charging again.
            let charge = self.payments.charge(args["amount"].as_u64().unwrap_or(0), &key).await?;
            Ok(json!({"charge": charge.id}))
        }
        // README }
        async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"tracking": "SP-1001"}))
        }
    }
}

/// The lines of `text`, without the indentation they all share, without trailing spaces.
fn dedented(lines: &[&str]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or("").trim_end().to_owned())
        .collect()
}

/// The blocks of `text` between a line `open` and a line `close` (compared trimmed),
/// dedented.
fn blocks(text: &str, open: &str, close: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim() == open => current = Some(Vec::new()),
            Some(block) if line.trim() == close => {
                blocks.push(dedented(block));
                current = None;
            }
            Some(block) => block.push(line),
            None => {}
        }
    }
    blocks
}

#[test]
fn the_readme_s_rust_snippets_are_the_ones_compiled_here() {
    let readme = blocks(include_str!("../../README.md"), "```rust", "```");
    let compiled = blocks(include_str!("readme.rs"), "// README {", "// README }");
    assert_eq!(
        readme.len(),
        compiled.len(),
        "the README has {} Rust snippets, this file compiles {}",
        readme.len(),
        compiled.len()
    );
    for (index, (shown, built)) in readme.iter().zip(&compiled).enumerate() {
        assert_eq!(
            shown,
            built,
            "README snippet {} differs from the compiled one",
            index + 1
        );
    }
}

/// The build.rs route (`include_workflow!`) and the macro name the same workflow file's items
/// alike, and compile the same definition.
#[test]
fn include_workflow_and_the_macro_agree_on_names() {
    struct Nothing;
    impl include_snippet::OrderFunctions for Nothing {
        async fn check_inventory(
            &self,
            _args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            Ok(swf_runtime::Value::Null)
        }
        async fn charge_card(
            &self,
            _args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            Ok(swf_runtime::Value::Null)
        }
        async fn ship_order(
            &self,
            _args: swf_runtime::Value,
        ) -> Result<swf_runtime::Value, swf_runtime::FunctionError> {
            Ok(swf_runtime::Value::Null)
        }
    }
    let built = include_snippet::OrderWorkflow::<Nothing>::DEFINITION_HASH;
    let expanded = durable_snippet::OrderWorkflow::<durable_snippet::Services>::DEFINITION_HASH;
    assert_eq!(built, expanded);
    assert_eq!(
        include_snippet::OrderWorkflow::<Nothing>::INFO,
        swf_runtime::WorkflowInfo {
            id: "order",
            name: "Order fulfilment",
            version: Some("1.0"),
        }
    );
}

#[tokio::test(start_paused = true)]
async fn the_macro_snippet_runs() {
    let output = macro_snippet::run().await.expect("the order runs");
    // The order ships: its output is the shipment (the last task's output filter).
    assert_eq!(output, swf_runtime::json!({"tracking": "SP-1001"}));
}

#[tokio::test(start_paused = true)]
async fn the_events_snippet_runs() {
    let output = events_snippet::run().await.expect("the greeting runs");
    assert!(output.to_string().contains("Ann"), "{output}");
}
