//! Data schemas at run time (issue 12): the workflow's input and output and a task's input and
//! output are validated against the JSON Schemas the workflow names; a violation is a
//! `DataSchemaError` naming the JSON pointer, the keyword and whose data it was, handled by
//! onError like any error, with the data kept.

use std::sync::atomic::{AtomicUsize, Ordering};

use swf_runtime::{FunctionError, SCHEMA_ERROR, Value, json};

swf_runtime::workflow!("workflows/schemas/orders.sw.yaml");

/// Prices an order: 10% on top, except a total of 13, priced in the wrong shape.
#[derive(Default)]
struct Pricing {
    calls: AtomicUsize,
}

impl SchemaOrdersFunctions for Pricing {
    async fn price(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let total = args["total"].as_f64().unwrap_or_default();
        if (total - 13.0).abs() < f64::EPSILON {
            return Ok(json!({"cost": 13}));
        }
        Ok(json!({"amount": total * 1.5}))
    }
}

async fn run(input: Value) -> (Result<Value, swf_runtime::WorkflowError>, usize) {
    let machine = SchemaOrdersWorkflow::new(Pricing::default());
    let result = machine.run(input).await;
    (result, machine.functions().calls.load(Ordering::SeqCst))
}

#[tokio::test]
async fn data_that_matches_every_schema_runs_through() {
    let (result, calls) = run(json!({"order": {"total": 4}})).await;
    let output = result.expect("every schema holds");
    assert_eq!(output["status"], json!("approved"));
    assert_eq!(output["priced"], json!({"amount": 6.0}));
    assert_eq!(calls, 1);
}

#[tokio::test]
async fn a_workflow_input_that_breaks_its_schema_is_refused_with_the_input_kept() {
    let input = json!({"order": {"total": "999"}});
    let (result, calls) = run(input.clone()).await;
    let error = result.expect_err("a string total is refused");
    assert_eq!(error.error().name, SCHEMA_ERROR);
    assert_eq!(error.task(), "Price");
    assert_eq!(error.data(), &input);
    let message = &error.error().message;
    assert!(
        message.starts_with(
            "the workflow's input does not match the schema `workflows/schemas/order-input.json`: at `/order/total`: "
        ),
        "{message}"
    );
    assert!(message.ends_with("(keyword `type`)"), "{message}");
    assert_eq!(calls, 0, "nothing ran");
}

#[tokio::test]
async fn a_missing_member_names_the_required_keyword_at_the_root() {
    let (result, _) = run(json!({"orders": []})).await;
    let error = result.expect_err("`order` is required");
    let message = &error.error().message;
    assert!(message.contains("at `/`:"), "{message}");
    assert!(message.contains("(keyword `required`)"), "{message}");
}

#[tokio::test]
async fn a_task_input_violation_is_handled_by_on_error_before_any_call() {
    // The workflow's schema allows any number; the task's (YAML) schema wants it ≥ 0.
    let (result, calls) = run(json!({"order": {"total": -1}})).await;
    let output = result.expect("onError handles the violation");
    assert_eq!(output["status"], json!("rejected"));
    assert_eq!(output["order"], json!({"total": -1}), "the data is kept");
    let error = &output["error"];
    assert_eq!(error["name"], json!(SCHEMA_ERROR));
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "the data input of task `Price` does not match the schema `workflows/schemas/priceable.yaml`: at `/order/total`:"
        ),
        "{message}"
    );
    assert!(message.ends_with("(keyword `minimum`)"), "{message}");
    assert_eq!(
        calls, 0,
        "the task's input was refused before its action ran"
    );
}

#[tokio::test]
async fn a_task_output_violation_is_handled_by_on_error_with_the_data_kept() {
    let (result, calls) = run(json!({"order": {"total": 13}})).await;
    let output = result.expect("onError handles the violation");
    assert_eq!(output["status"], json!("rejected"));
    assert_eq!(
        output["priced"],
        json!({"cost": 13}),
        "what the action gave is kept"
    );
    let message = output["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the data output of task `Price` does not match the schema"),
        "{message}"
    );
    assert!(message.contains("at `/priced`"), "{message}");
    assert_eq!(calls, 1);
}

#[tokio::test]
async fn a_workflow_output_that_breaks_its_schema_fails_the_run_with_the_output_kept() {
    let (result, _) = run(json!({"order": {"total": 1}, "outputBroken": true})).await;
    let error = result.expect_err("the output's `outputBroken` must be false");
    assert_eq!(error.error().name, SCHEMA_ERROR);
    assert_eq!(error.task(), "Approve", "the task that ended the instance");
    assert_eq!(
        error.data()["status"],
        json!("approved"),
        "the output is kept"
    );
    let message = &error.error().message;
    assert!(
        message.starts_with(
            "the workflow's output does not match the schema `workflows/schemas/order-output.json`: at `/outputBroken`"
        ),
        "{message}"
    );
    assert!(message.ends_with("(keyword `const`)"), "{message}");
}

#[tokio::test]
async fn the_typed_entry_point_takes_and_gives_the_schemas_types() {
    use schema_orders_data::{
        SchemaOrdersInput, SchemaOrdersInputOrder, SchemaOrdersOutput, SchemaOrdersOutputStatus,
    };
    let machine = SchemaOrdersWorkflow::new(Pricing::default());
    let input = SchemaOrdersInput {
        order: SchemaOrdersInputOrder {
            total: 4.0,
            currency: Some("EUR".into()),
        },
        output_broken: None,
    };
    let output: SchemaOrdersOutput = machine.run_typed(input).await.expect("runs");
    assert_eq!(output.status, SchemaOrdersOutputStatus::Approved);

    // A violation inside the run comes back as from `run`, with the data.
    let rejected = machine
        .run_typed(SchemaOrdersInput {
            order: SchemaOrdersInputOrder {
                total: -1.0,
                currency: None,
            },
            output_broken: None,
        })
        .await
        .expect("onError handles the task's input violation");
    assert_eq!(rejected.status, SchemaOrdersOutputStatus::Rejected);
}

/// A titled input schema and an output schema of `{}`: typify names the first after its title
/// and makes no type for the second; `run_typed` still takes and gives them, by the names it
/// gives them (the workflow did not build: it named types typify never made).
mod titled {
    use swf_runtime::{FunctionError, Value, json};

    swf_runtime::workflow!("workflows/schemas/titled.sw.yaml");

    struct Scales;

    impl SchemaTitledFunctions for Scales {
        async fn weigh(&self, args: Value) -> Result<Value, FunctionError> {
            Ok(json!(args["weight"].as_f64().unwrap_or_default() * 1000.0))
        }
    }

    #[tokio::test]
    async fn types_named_otherwise_are_known_by_the_typed_names() {
        let input: schema_titled_data::SchemaTitledInput =
            schema_titled_data::Parcel { weight: 1.5 };
        let output: schema_titled_data::SchemaTitledOutput = SchemaTitledWorkflow::new(Scales)
            .run_typed(input)
            .await
            .expect("runs");
        assert_eq!(output, json!({"weight": 1.5, "grams": 1500.0}));
    }
}

mod plain_output {
    use swf_runtime::{FunctionError, SCHEMA_ERROR, Value, json};

    swf_runtime::workflow!("workflows/schemas/plain_output.sw.yaml");

    /// Decides the status it is asked for.
    struct Echo;

    impl SchemaPlainOutputFunctions for Echo {
        async fn decide(&self, args: Value) -> Result<Value, FunctionError> {
            Ok(json!({"status": args["status"].clone()}))
        }
    }

    /// A task of plain calls is a `CallStep` that `advance` awaits after its `match`: the
    /// workflow's output is checked after it as after any other step.
    #[tokio::test]
    async fn the_output_of_a_task_of_plain_calls_is_checked_against_the_schema() {
        let machine = SchemaPlainOutputWorkflow::new(Echo);
        let output = machine.run(json!({"wanted": "approved"})).await;
        assert_eq!(
            output.expect("the schema holds"),
            json!({"wanted": "approved", "status": "approved"})
        );

        let error = machine
            .run(json!({"wanted": "maybe"}))
            .await
            .expect_err("`maybe` is not a status");
        assert_eq!(error.error().name, SCHEMA_ERROR);
        assert_eq!(error.task(), "Decide");
        assert_eq!(error.data(), &json!({"wanted": "maybe", "status": "maybe"}));
        let message = &error.error().message;
        assert!(message.contains("(keyword `enum`)"), "{message}");
    }
}
