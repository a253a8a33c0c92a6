//! Hostile names (issue 9): ids, task, function and event names with quotes, `}`, `*/`, `"#`,
//! a line separator, keywords, leading digits, empty strings, names equal after case folding or
//! punctuation, and the names of the generated terminal variants, and newlines and CRs in the
//! texts that are not names (the workflow's display name, a resource, an event source). Every
//! one compiles (this file would not build otherwise) and keeps its meaning: the tasks run in
//! the order the names say, each doing what its definition says. (A control character in a
//! name is refused, E0147.)

use swf_runtime::{FunctionError, Value, json};

mod printer {
    // Before the naming pass, the id `3d-printer` panicked the macro (`"3dPrinterFunctions" is
    // not a valid Ident`), and the nested scope types of `Foo`/`FooBodyX` and `P`/`P Branch1 Q`
    // were defined twice.
    swf_runtime::workflow!("workflows/hostile/3d-printer.sw.yaml");
}

mod nameless {
    // `***` and a file with no id named `unnamed` both give the types `Unnamed*`.
    swf_runtime::workflow!(
        "workflows/hostile/symbols-a.sw.yaml",
        "workflows/hostile/unnamed.sw.yaml"
    );
}

struct Printer;

impl printer::Workflow3dPrinterFunctions for Printer {
    async fn type_(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!("typed"))
    }
    async fn f_3rd(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!("third"))
    }
    async fn say_hi(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!("hi"))
    }
}

#[tokio::test]
async fn hostile_names_compile_and_keep_their_meaning() {
    let machine = printer::Workflow3dPrinterWorkflow::new(Printer);
    let output = machine
        .run(json!({"items": [1, 2]}))
        .await
        .expect("runs to its end");
    assert_eq!(output["type"], json!("typed"));
    assert_eq!(output["third"], json!("third"));
    assert_eq!(output["said"], json!("hi"));
    for (key, value) in [
        ("quote", json!(1)),
        ("charge1", json!(1)),
        ("charge2", json!(2)),
        ("charge3", json!(3)),
        ("ab1", json!(1)),
        ("ab2", json!(2)),
        ("self", json!(true)),
        ("terminated", json!(false)),
    ] {
        assert_eq!(output[key], value, "{key} in {output}");
    }
    // The foreach body ran its own `X` (not the top-level `FooBodyX`) once per item.
    assert_eq!(output["foo"].as_array().map(Vec::len), Some(2), "{output}");
    assert_eq!(output["foo"][0]["nested"], json!("foreach"), "{output}");
    // The top-level parallel tasks ran after the nested ones, last writer winning.
    assert_eq!(output["flat"], json!("pBranch1Q"), "{output}");
    assert_eq!(output["deep"], json!("pq"), "{output}");
}

#[test]
fn names_of_tasks_and_states_are_the_definitions_own() {
    let machine = printer::Workflow3dPrinterWorkflow::new(Printer);
    let state = machine.start(json!({"items": []})).expect("starts");
    assert_eq!(state.task_name(), Some("type"));
    assert!(state.output().is_none());
}

#[tokio::test]
async fn a_task_named_like_an_end_is_a_task() {
    let machine = printer::Workflow3dPrinterWorkflow::new(Printer);
    let mut state = machine.start(json!({"items": []})).expect("starts");
    let mut seen = Vec::new();
    while let Some(name) = state.task_name() {
        seen.push(name.to_owned());
        state = machine.step(state).await.expect("steps");
    }
    assert_eq!(seen[2], "Completed");
    assert_eq!(
        seen[3],
        "quote \" brace } comment */ raw \"# \u{2028} line separator"
    );
    assert_eq!(seen.last().map(String::as_str), Some("Terminated"));
    assert!(matches!(
        state,
        printer::Workflow3dPrinterState::Completed { .. }
    ));
}

mod ends {
    swf_runtime::workflow!("workflows/hostile/ends.sw.yaml");
}

/// A task's position (what hosts and traces show) is its saved name: its own name, or
/// `~name` for a name an end's saved form uses.
#[tokio::test]
async fn positions_are_saved_names_and_end_names_are_escaped() {
    use swf_runtime::ScopeState;
    let machine = ends::EndsWorkflow::new(NoFunctions);
    let mut state = machine.start(json!({})).expect("starts");
    let mut seen = Vec::new();
    while let Some(name) = state.task_name() {
        let saved = swf_runtime::serde_json::to_value(&state).expect("saves");
        seen.push((name.to_owned(), ScopeState::position(&state), saved));
        state = machine.step(state).await.expect("steps");
    }
    let positions: Vec<(&str, &str)> = seen
        .iter()
        .map(|(name, position, _)| (name.as_str(), position.as_str()))
        .collect();
    assert_eq!(
        positions,
        [
            ("completed", "~completed"),
            ("terminated", "~terminated"),
            ("plain", "plain"),
        ]
    );
    for (_, position, saved) in &seen {
        assert!(saved.get(position).is_some(), "{position}: {saved}");
    }
    assert_eq!(ScopeState::position(&state), "completed");
}

struct NoFunctions;
impl ends::EndsFunctions for NoFunctions {}
impl nameless::UnnamedFunctions for NoFunctions {}
impl nameless::Unnamed2Functions for NoFunctions {}

#[tokio::test]
async fn workflows_without_usable_ids_get_names_of_their_own() {
    let stars = nameless::UnnamedWorkflow::new(NoFunctions)
        .run(json!({}))
        .await
        .expect("runs");
    assert_eq!(stars["from"], json!("stars"));
    let none = nameless::Unnamed2Workflow::new(NoFunctions)
        .run(json!({}))
        .await
        .expect("runs");
    assert_eq!(none["from"], json!("nameless"));
}

/// Items of the user's module named like the short names the machine's private block imports
/// (`rt`, `Value`, `Ok`, `Result`, `String`...): the block's own imports shadow them, so the
/// generated code means the same (this module would not build otherwise).
mod shadowing {
    #![allow(dead_code, non_camel_case_types)]
    pub struct Ok;
    pub struct Err;
    pub struct Some;
    pub struct Value;
    pub struct Io;
    pub struct Attempt;
    pub struct Step;
    pub struct Infallible;
    pub struct String;
    pub type Result = ();
    pub mod rt {}
    pub static PATH_TOTAL: u8 = 0;
    swf_runtime::workflow!("workflows/order.sw.yaml");
}

struct Shop;

impl shadowing::OrderFunctions for Shop {
    async fn check_inventory(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"inStock": true}))
    }
    async fn charge_card(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"charged": true}))
    }
    async fn ship_order(&self, _args: Value) -> Result<Value, FunctionError> {
        Ok(json!({"shipped": true}))
    }
}

#[tokio::test]
async fn user_items_named_like_the_generated_short_names_change_nothing() {
    let output = shadowing::OrderWorkflow::new(Shop)
        .run(json!({"order": {"id": 7, "total": 20}}))
        .await
        .expect("the order completes");
    assert_eq!(output["shipped"], json!(true), "{output}");
}
