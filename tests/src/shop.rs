//! The durable order workflow (`workflows/durable/order.sw.yaml`) and functions for it that
//! record every call with its idempotency key, for the durable host's tests, its crash tests
//! (in a worker process) and its benchmarks.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use swf_runtime::{CallContext, FunctionError, Value, json};

swf_runtime::workflow!("workflows/durable/order.sw.yaml");

/// The same order with short waits (`workflows/durable/quick-order.sw.yaml`), for worker
/// processes on the real clock.
pub mod quick {
    use swf_runtime::{FunctionError, Value};

    swf_runtime::workflow!("workflows/durable/quick-order.sw.yaml");

    impl QuickOrderFunctions for super::Shop {
        async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
            super::DurableOrderFunctions::charge(self, args).await
        }
        async fn invoice(&self, args: Value) -> Result<Value, FunctionError> {
            super::DurableOrderFunctions::invoice(self, args).await
        }
        async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
            super::DurableOrderFunctions::notify(self, args).await
        }
        async fn pick(&self, args: Value) -> Result<Value, FunctionError> {
            super::DurableOrderFunctions::pick(self, args).await
        }
    }
}

/// One call of a function.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function.
    pub function: &'static str,
    /// Its arguments.
    pub args: Value,
    /// The call's idempotency key.
    pub key: String,
}

/// Called when a function starts, with the function's name and its call context: a crash test
/// stops the worker there.
pub type Hook = Arc<dyn Fn(&'static str, &CallContext) + Send + Sync>;

/// The shop's functions. `charge` answers `Busy` a set number of times first, or, for the
/// crash tests, on the first attempt of every instance (so a worker that restarts does not
/// change what an instance sees).
#[derive(Clone)]
pub struct Shop {
    busy: Arc<AtomicU32>,
    busy_first_attempt: bool,
    calls: Arc<Mutex<Vec<Call>>>,
    hook: Option<Hook>,
}

impl Shop {
    /// Functions whose `charge` is busy `busy` times before it succeeds.
    pub fn new(busy: u32) -> Self {
        Self {
            busy: Arc::new(AtomicU32::new(busy)),
            busy_first_attempt: false,
            calls: Arc::default(),
            hook: None,
        }
    }

    /// Functions whose `charge` is busy on the first attempt of every instance.
    pub fn busy_on_first_attempt() -> Self {
        Self {
            busy_first_attempt: true,
            ..Self::new(0)
        }
    }

    /// The same, calling `hook` at the start of every function.
    #[must_use]
    pub fn with_hook(mut self, hook: Hook) -> Self {
        self.hook = Some(hook);
        self
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The calls of `function`.
    pub fn calls_of(&self, function: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|call| call.function == function)
            .collect()
    }

    fn record(&self, function: &'static str, args: &Value) {
        let context = CallContext::current();
        if let (Some(hook), Some(context)) = (&self.hook, &context) {
            hook(function, context);
        }
        let key = context.map(|c| c.idempotency_key()).unwrap_or_default();
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Call {
                function,
                args: args.clone(),
                key,
            });
    }
}

impl DurableOrderFunctions for Shop {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("charge", &args);
        let busy = if self.busy_first_attempt {
            CallContext::current().is_some_and(|context| context.attempt == 1)
        } else {
            self.busy
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        };
        if busy {
            return Err(FunctionError::named("Busy", "the card network is busy"));
        }
        Ok(json!({"paid": args["amount"]}))
    }

    async fn invoice(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("invoice", &args);
        Ok(json!(format!("INV-{}", args["order"])))
    }

    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("notify", &args);
        Ok(json!(true))
    }

    async fn pick(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("pick", &args);
        Ok(json!({"picked": args["item"]}))
    }
}

/// The input of order `order`, with `items` items.
pub fn order_input(order: u64, items: u64) -> Value {
    json!({
        "orderId": order,
        "amount": 10 * order,
        "items": (1..=items).map(|item| format!("item-{order}-{item}")).collect::<Vec<_>>(),
    })
}

/// The `Shipped` event of order `order`.
pub fn shipped(order: u64) -> swf_runtime::CloudEvent {
    DurableOrderEvent::Shipped
        .correlated(
            &format!("ship-{order}"),
            &order.to_string(),
            json!({"tracking": format!("TRK-{order}")}),
        )
        .unwrap_or_default()
}

/// The output an uninterrupted run of order `order` with `items` items ends with.
pub fn order_output(order: u64, items: u64) -> Value {
    let mut output = order_input(order, items);
    output["payment"] = json!({"paid": 10 * order});
    output["tracking"] = json!(format!("TRK-{order}"));
    output["invoice"] = json!(format!("INV-{order}"));
    output["notified"] = json!(true);
    output["picked"] = Value::Array(
        (1..=items)
            .map(|item| {
                let mut iteration = order_input(order, items);
                iteration["payment"] = json!({"paid": 10 * order});
                iteration["tracking"] = json!(format!("TRK-{order}"));
                iteration["invoice"] = json!(format!("INV-{order}"));
                iteration["notified"] = json!(true);
                let name = format!("item-{order}-{item}");
                iteration["item"] = json!(name);
                iteration["pick"] = json!({"picked": name});
                iteration
            })
            .collect(),
    );
    output
}
