//! The snapshot files are real code: they compile here warning-free and run.
#![deny(warnings)]

mod order {
    include!("../snapshots/order.rs");
}
mod filters {
    include!("../snapshots/filters.rs");
}
mod switches {
    include!("../snapshots/switches.rs");
}
mod approval {
    include!("../snapshots/approval.rs");
}
mod nested {
    include!("../snapshots/nested.rs");
    include!("../snapshots/nested_child.rs");
}
mod v01_events {
    include!("../snapshots/v01_events.rs");
}
mod kebab_first {
    include!("../snapshots/kebab_first.rs");
}
mod saga {
    include!("../snapshots/saga.rs");
}

use swf_runtime::{CustomCondition, FunctionError, Value, json};

struct Switches;

impl switches::SwitchesFunctions for Switches {
    fn custom_condition(&self, condition: CustomCondition<'_>) -> bool {
        condition.selected == Some(&json!("gold")) && condition.metadata["predicate"] == "isPremium"
    }
}

#[tokio::test]
async fn the_switch_snapshot_routes_by_each_operator() {
    let machine = switches::SwitchesWorkflow::new(Switches);
    let group = |input: Value| {
        let machine = &machine;
        async move { machine.run(input).await.map(|out| out["group"].clone()) }
    };
    assert_eq!(group(json!({"age": 12})).await, Ok(json!("minor")));
    assert_eq!(
        group(json!({"age": 40, "email": "ann@example.com"})).await,
        Ok(json!("staff"))
    );
    assert_eq!(
        group(json!({"age": 40, "tier": "gold"})).await,
        Ok(json!("premium"))
    );
    assert_eq!(
        group(json!({"age": 40, "tier": "tin"})).await,
        Ok(json!("other"))
    );
}

struct People;

impl filters::FiltersFunctions for People {
    async fn lookup(&self, args: Value) -> Result<Value, FunctionError> {
        assert_eq!(args["first"], json!("Ann"));
        assert_eq!(args["fields"], json!(["email", "phone"]));
        Ok(json!({"who": args["young"][0], "email": "ann@example.com"}))
    }

    async fn score(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!(7))
    }
}

#[tokio::test(start_paused = true)]
async fn the_filters_snapshot_runs() {
    let started = tokio::time::Instant::now();
    let out = filters::FiltersWorkflow::new(People).run(json!({})).await;
    assert_eq!(out, Ok(json!({"who": "Ann", "email": "ann@example.com"})));
    assert_eq!(
        started.elapsed(),
        std::time::Duration::from_secs(60),
        "the final delay"
    );
}

struct Shop;

impl order::OrderFunctions for Shop {
    async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"available": true}))
    }

    async fn charge_card(&self, _args: Value) -> Result<Value, FunctionError> {
        Err(FunctionError::named("CardDeclined", "insufficient funds"))
    }

    async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"tracking": "T1"}))
    }
}

#[tokio::test]
async fn the_order_snapshot_routes_a_declined_card() {
    let machine = order::OrderWorkflow::new(Shop);
    let mut state = machine
        .start(json!({"order": {"total": 5}}))
        .expect("valid input");
    while state.output().is_none() {
        state = machine.step(state).await.expect("handled by onError");
    }
    assert!(matches!(state, order::OrderState::Terminated { .. }));
    let output = state.output().expect("ended");
    assert_eq!(output["status"], json!("declined"));
    assert_eq!(output["error"]["name"], json!("CardDeclined"));
}

/// Instances can run on a multi-threaded runtime: the futures `run` and `step` return are `Send`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machines_run_on_spawned_tasks() {
    let handle = tokio::spawn(async {
        let machine = switches::SwitchesWorkflow::new(Switches);
        machine.run(json!({"age": 3})).await
    });
    let output = handle.await.expect("the task completes");
    assert_eq!(output.map(|o| o["group"].clone()), Ok(json!("minor")));
}

struct Approvals;

impl approval::ApprovalFunctions for Approvals {
    async fn ask_manager(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"asked": true}))
    }
}

/// The events snapshot runs: no decision within the hour, then no outcome within 30 minutes.
#[tokio::test(start_paused = true)]
async fn the_approval_snapshot_expires_without_events() {
    let io = swf_runtime::Io::standalone();
    let machine = approval::ApprovalWorkflow::new(Approvals);
    let started = tokio::time::Instant::now();
    let out = machine.run_with(json!({}), &io).await;
    assert_eq!(out, Ok(json!({"asked": true, "status": "expired"})));
    assert_eq!(started.elapsed(), std::time::Duration::from_secs(90 * 60));
    assert!(io.take_produced().is_empty());
}

#[derive(Clone, Copy)]
struct Logs;

impl nested::NestedChildFunctions for Logs {
    async fn log(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"child": args["item"]}))
    }
}

impl nested::NestedFunctions for Logs {
    async fn log(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"parent": args["what"]}))
    }
}

/// Names that could clash (`With`, `Self`, `Run`/`Iteration`, a function both workflows
/// define) compile, and each workflow calls its own `log`.
#[tokio::test]
async fn the_nested_snapshot_keeps_every_name_apart() {
    let io = swf_runtime::Io::standalone();
    let machine = nested::NestedWorkflow::new(Logs);
    let out = machine
        .run_with(json!({"items": [1, 2, 3]}), &io)
        .await
        .expect("runs");
    assert_eq!(
        out["done"],
        json!([{"child": 1}, {"child": 2}, {"child": 3}])
    );
    assert_eq!(out["first"], json!(true));
}

struct Warehouse;

impl v01_events::V01EventsFunctions for Warehouse {
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"tracking": format!("T-{}", args["id"]), "carrier": "post"}))
    }
}

#[tokio::test(start_paused = true)]
async fn the_v01_snapshot_ships_once_order_and_payment_arrived() {
    use v01_events::V01EventsEvent as Event;
    let io = swf_runtime::Io::standalone();
    let order = Event::OrderPlaced.event("o", json!({"order": {"id": 7}}));
    let payment = Event::PaymentReceived.event("p", json!({"paid": true}));
    for event in [order, payment] {
        io.deliver(event.expect("event builds"))
            .await
            .expect("delivered");
    }
    let output = v01_events::V01EventsWorkflow::new(Warehouse)
        .run_with(json!({}), &io)
        .await
        .expect("runs");
    assert_eq!(output["shipment"], json!("T-7"));
    assert_eq!(output["status"], json!("shipped"));
    assert_eq!(output["paid"], json!(true));
}

struct Auction;

impl kebab_first::CarAuctionFunctions for Auction {
    async fn record_bid(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
    async fn charge(&self, _args: Value) -> Result<Value, FunctionError> {
        Err(FunctionError::named("CardDeclined", "no funds"))
    }
    async fn register(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({}))
    }
    async fn ship(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({}))
    }
    async fn notify(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({}))
    }
}

#[tokio::test(start_paused = true)]
async fn the_first_draft_snapshot_ends_in_failure_when_nothing_is_bid() {
    let io = swf_runtime::Io::standalone();
    let failed = kebab_first::CarAuctionWorkflow::new(Auction)
        .run_with(json!({}), &io)
        .await
        .expect_err("no bid within the timeout ends in the FAILURE END state");
    assert_eq!(failed.task(), "Failed");
    assert_eq!(failed.error().name, "EndStateFailure");
    assert_eq!(failed.status(), swf_runtime::ExecStatus::Fail);
}

struct Travel;

impl saga::SagaFunctions for Travel {
    async fn book(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"booked": [args["what"].clone()]}))
    }
    async fn charge(&self, _args: Value) -> Result<Value, FunctionError> {
        Err(FunctionError::named("CardDeclined", "no funds"))
    }
    async fn cancel(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"cancelled": [args["what"].clone()]}))
    }
}

#[tokio::test]
async fn the_saga_snapshot_undoes_the_bookings_most_recent_first() {
    let output = saga::SagaWorkflow::new(Travel)
        .run(json!({}))
        .await
        .expect("the declined charge is handled");
    assert_eq!(output["cancelled"], json!(["hotel", "flight"]));
    assert_eq!(output["deposit"], json!("refunded"));
    assert_eq!(output["failed"], json!(true));
}

/// The saved form of a state is serde's externally tagged enum, as the derive wrote it before
/// the state enums' serde impls were generated by hand (issue 10): states saved by earlier builds
/// still load, and what a task of another kind saved is still refused.
#[test]
fn states_are_saved_and_read_in_the_derived_form() {
    use order::OrderState;
    use swf_runtime::serde_json::{from_value, to_value};

    let charging = OrderState::ChargeCard {
        data: json!({"order": {"total": 5}}),
        retry: swf_runtime::RetryProgress::default(),
    };
    let saved = to_value(&charging).expect("a state saves");
    assert_eq!(saved["ChargeCard"]["data"], json!({"order": {"total": 5}}));
    assert_eq!(
        from_value::<OrderState>(saved).expect("reads back"),
        charging
    );
    // A field with a default may be missing; the task's variant is found by its name.
    assert_eq!(
        from_value::<OrderState>(json!({"ChargeCard": {"data": {"n": 1}}})).expect("reads"),
        OrderState::ChargeCard {
            data: json!({"n": 1}),
            retry: swf_runtime::RetryProgress::default(),
        }
    );
    assert_eq!(
        to_value(OrderState::Ship { data: json!({}) }).expect("saves"),
        json!({"Ship": {"data": {}}})
    );
    let ended = OrderState::Terminated { output: json!([1]) };
    assert_eq!(
        to_value(&ended).expect("saves"),
        json!({"terminated": {"output": [1]}})
    );
    assert_eq!(
        from_value::<OrderState>(json!({"completed": {"output": 2}})).expect("reads"),
        OrderState::Completed { output: json!(2) }
    );

    // A retry saved at a task that has none, an unknown task, a missing `data`: refused.
    let other_kind = from_value::<OrderState>(json!({"Ship": {"data": {}, "retry": {}}}))
        .expect_err("a field of another kind of task");
    assert!(
        other_kind.to_string().starts_with("unknown field `retry`"),
        "{other_kind}"
    );
    let gone = from_value::<OrderState>(json!({"Gone": {"data": {}}})).expect_err("unknown task");
    assert!(
        gone.to_string()
            .starts_with("unknown variant `Gone`, expected one of `CheckInventory`"),
        "{gone}"
    );
    let no_data = from_value::<OrderState>(json!({"Route": {}})).expect_err("no data");
    assert!(
        no_data.to_string().starts_with("missing field `data`"),
        "{no_data}"
    );

    // An optional progress field is left out while `None`, and read as `None` when missing.
    let waiting = nested::NestedState::With {
        data: json!({}),
        branches: None,
    };
    let saved = to_value(&waiting).expect("saves");
    assert_eq!(saved, json!({"With": {"data": {}}}));
    assert_eq!(
        from_value::<nested::NestedState>(saved).expect("reads"),
        waiting
    );
}
