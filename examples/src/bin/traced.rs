//! The order workflow (`workflows/order.sw.yaml`, whose payment service is busy once) run
//! under an OpenTelemetry tracer that prints every span to stdout: the `workflow` span of the
//! run, a `task` span per step, an `action` span per call, with the retry as a span event.
//!
//! ```sh
//! cargo run -p swf-examples --features otel --bin traced
//! ```
//!
//! A service would send the spans to its collector instead (an OTLP exporter in place of
//! `opentelemetry-stdout`); the subscriber set-up is the same.

use std::sync::atomic::{AtomicU32, Ordering};

use opentelemetry::trace::TracerProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use swf_runtime::{FunctionError, Value, json};
use tracing_subscriber::layer::SubscriberExt;

swf_runtime::workflow!("workflows/order.sw.yaml");

/// Stand-ins for the real services; the payment service is busy on the first call.
struct Services {
    payment_calls: AtomicU32,
}

impl OrderFunctions for Services {
    async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"available": true, "warehouse": "north"}))
    }

    async fn charge_card(&self, args: Value) -> Result<Value, FunctionError> {
        if self.payment_calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(FunctionError::named(
                "PaymentServiceBusy",
                "the payment service is busy, try again",
            ));
        }
        Ok(json!({"transaction": "tx-42", "charged": args["amount"]}))
    }

    async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"carrier": "swift-post", "tracking": "SP-1001"}))
    }
}

#[tokio::main]
async fn main() {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(opentelemetry_stdout::SpanExporter::default())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("swf-example")));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let workflow = OrderWorkflow::new(Services {
        payment_calls: AtomicU32::new(0),
    });
    let input = json!({
        "order": {"sku": "BOOK-7", "quantity": 2, "total": 40, "address": "1 Main Street"}
    });
    let outcome = workflow.run(input).await;
    if let Err(error) = provider.shutdown() {
        eprintln!("the tracer did not shut down cleanly: {error}");
    }
    match outcome {
        Ok(output) => println!("output: {output}"),
        Err(error) => {
            eprintln!("{error}\ndata: {}", error.data());
            std::process::exit(1);
        }
    }
}
