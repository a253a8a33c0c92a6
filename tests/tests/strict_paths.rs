//! Strict paths (issue 12, point 4): the same workflow compiled with `strict_paths = true` and
//! without. By default (SEMANTICS.md) a parameter path that selects nothing passes `null` and a
//! comparison on it is false; strict, it is a `DataError` that names the path and the members
//! the data has where it stops, handled by onError like any error.

use swf_runtime::{ErrorObject, FunctionError, Value, json};

mod lenient {
    swf_runtime::workflow!("workflows/runtime/strict-paths.sw.yaml");
}

mod strict {
    swf_runtime::workflow!(
        "workflows/runtime/strict-paths.sw.yaml",
        strict_paths = true
    );
}

struct Echo;

impl lenient::StrictPathsFunctions for Echo {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

impl strict::StrictPathsFunctions for Echo {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

#[tokio::test]
async fn by_default_a_typo_passes_null() {
    let output = lenient::StrictPathsWorkflow::new(Echo)
        .run(json!({"order": {"total": 5, "priority": "low"}}))
        .await
        .expect("runs");
    assert_eq!(output["charged"]["amount"], Value::Null);
}

#[tokio::test]
async fn strict_a_typo_is_a_data_error_naming_the_members_there() {
    let output = strict::StrictPathsWorkflow::new(Echo)
        .run(json!({"order": {"total": 5, "priority": "low"}}))
        .await
        .expect("onError handles it");
    assert_eq!(output["failed"], json!(true));
    assert_eq!(output["error"]["name"], json!(ErrorObject::DATA));
    assert_eq!(
        output["error"]["message"],
        json!(
            "the JSONPath `$.order.totl` selects nothing (strict paths): `$.order` has no member `totl`; it has `total`, `priority`"
        )
    );
}

#[tokio::test]
async fn strict_a_comparison_on_a_missing_member_fails_the_run_with_its_data() {
    let input = json!({"order": {"total": 5}});
    let error = strict::StrictPathsWorkflow::new(Echo)
        .run(input.clone())
        .await
        .expect_err("`$.order.priority` is compared but absent");
    assert_eq!(error.task(), "Route");
    assert_eq!(error.error().name, ErrorObject::DATA);
    assert!(
        error
            .error()
            .message
            .contains("`$.order.priority` selects nothing"),
        "{}",
        error.error().message
    );
    assert_eq!(error.data(), &input, "the data is kept");
}

#[tokio::test]
async fn strict_existence_tests_and_queries_keep_their_meaning() {
    // `$.coupon` is only tested for existence, and `$.order.lines[*]` is a query: neither
    // is strict. The coupon routes to Charge before the priority is compared.
    let output = strict::StrictPathsWorkflow::new(Echo)
        .run(json!({"coupon": "X", "order": {"totl": 3}}))
        .await
        .expect("runs");
    assert_eq!(output["charged"], json!({"amount": 3, "items": null}));
}
