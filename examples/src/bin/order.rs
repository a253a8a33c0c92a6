//! Runs the order workflow (`workflows/order.sw.yaml`) end to end and prints its output.
//! The payment service is busy on the first call, so the workflow retries it once.

use std::sync::atomic::{AtomicU32, Ordering};
use swf_runtime::{FunctionError, Value, json};

swf_runtime::workflow!("workflows/order.sw.yaml");

/// Stand-ins for the real services.
struct Services {
    payment_calls: AtomicU32,
}

impl OrderFunctions for Services {
    async fn check_inventory(&self, args: Value) -> Result<Value, FunctionError> {
        println!("checkInventory({args})");
        Ok(json!({"available": true, "warehouse": "north"}))
    }

    async fn charge_card(&self, args: Value) -> Result<Value, FunctionError> {
        let call = self.payment_calls.fetch_add(1, Ordering::SeqCst) + 1;
        println!("chargeCard({args}) attempt {call}");
        if call == 1 {
            return Err(FunctionError::named(
                "PaymentServiceBusy",
                "the payment service is busy, try again",
            ));
        }
        Ok(json!({"transaction": "tx-42", "charged": args["amount"]}))
    }

    async fn ship_order(&self, args: Value) -> Result<Value, FunctionError> {
        println!("shipOrder({args})");
        Ok(json!({"carrier": "swift-post", "tracking": "SP-1001"}))
    }
}

#[tokio::main]
async fn main() {
    let workflow = OrderWorkflow::new(Services {
        payment_calls: AtomicU32::new(0),
    });
    let input = json!({
        "order": {"sku": "BOOK-7", "quantity": 2, "total": 40, "address": "1 Main Street"}
    });
    match workflow.run(input).await {
        Ok(output) => println!("output: {output}"),
        Err(error) => {
            eprintln!("{error}\ndata: {}", error.data());
            std::process::exit(1);
        }
    }
}
