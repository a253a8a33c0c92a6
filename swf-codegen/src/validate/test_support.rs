//! Compact builders for IR values in unit tests (there is no parser to go through yet).
//!
//! Positions follow one convention so tests can assert them: a task written at line `L` has its
//! mapping at `L:5`, its name at `L:11`, its `id` at `L+1:9`, `start` at `L+2:9`, `transition`
//! at `L+3:9` (its `nextTask` value at `L+3:21`) and `end` at `L+4:9`. Other nodes take the line
//! they are given.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::ir::*;
use crate::source::{Span, Spanned};
use serde_json::Value;

pub fn sp(line: u32, col: u32) -> Span {
    Span::new(line, col)
}

pub fn text(value: &str, line: u32, col: u32) -> Spanned<String> {
    Spanned::new(value.to_owned(), sp(line, col))
}

/// A task with the given kind and nothing else.
pub fn task(line: u32, name: &str, kind: TaskKind) -> Task {
    Task {
        compensated_by: None,
        used_for_compensation: false,
        schemas: crate::ir::DataSchemas::default(),
        name: text(name, line, 11),
        id: None,
        kind,
        data_filter: TaskDataFilter::default(),
        retry: Vec::new(),
        on_error: Vec::new(),
        start: None,
        transition: None,
        end: None,
        metadata: None,
        recovered: false,
        span: sp(line, 5),
    }
}

/// The task's name line, from which the other positions derive.
fn line_of(task: &Task) -> u32 {
    task.span.line
}

/// Chainable additions to a task under construction.
pub trait TaskExt: Sized {
    fn start(self) -> Task;
    fn end(self) -> Task;
    fn next(self, target: &str) -> Task;
    fn id(self, id: &str) -> Task;
    fn on_error(self, line: u32, target: &str) -> Task;
}

impl TaskExt for Task {
    fn start(mut self) -> Task {
        self.start = Some(Start {
            kind: StartKind::Default,
            span: sp(line_of(&self) + 2, 9),
        });
        self
    }

    fn end(mut self) -> Task {
        self.end = Some(End {
            compensate: false,
            status: None,
            kind: EndKind::Default,
            span: sp(line_of(&self) + 4, 9),
        });
        self
    }

    fn next(mut self, target: &str) -> Task {
        self.transition = Some(transition(line_of(&self) + 3, target));
        self
    }

    fn id(mut self, id: &str) -> Task {
        self.id = Some(text(id, line_of(&self) + 1, 9));
        self
    }

    fn on_error(mut self, line: u32, target: &str) -> Task {
        self.on_error.push(ErrorHandler {
            action: None,
            error_results_path: None,
            output_path: None,
            condition: Some(expression(line)),
            error_data_filter: None,
            transition: Some(transition(line, target)),
            span: sp(line, 9),
        });
        self
    }
}

/// `transition: {nextTask: target}` at `line:9`, its value at `line:21`.
pub fn transition(line: u32, target: &str) -> Transition {
    Transition {
        compensate: false,
        next: text(target, line, 21),
        condition: None,
        produce_event: None,
        span: sp(line, 9),
    }
}

pub fn expression(line: u32) -> Expression {
    Expression {
        language: ExprLanguage::Spel,
        body: "name eq 'E'".to_owned(),
        ast: Expr::Truthy(Operand::Name("name".to_owned())),
        span: sp(line, 20),
    }
}

/// `count` inject tasks `s0`, `s1`…, each leading to the one before (`s0` ends): only the last
/// is no task's target, as a scope without a named start finds it.
pub fn chain_back(count: u32) -> Vec<Task> {
    (0..count)
        .map(|i| {
            let state = task(i + 1, &format!("s{i}"), inject());
            if i == 0 {
                state.end()
            } else {
                state.next(&format!("s{}", i - 1))
            }
        })
        .collect()
}

pub fn inject() -> TaskKind {
    TaskKind::Inject { data: Value::Null }
}

pub fn operation(actions: Vec<Action>) -> TaskKind {
    TaskKind::Operation {
        action_mode: ActionMode::Sequential,
        actions,
    }
}

/// An action at `line:11` calling `function` (its refName at `line:30`).
pub fn action(line: u32, function: &str) -> Action {
    Action {
        retry: Vec::new(),
        result_selection: None,
        name: None,
        function: Some(FunctionRef {
            ref_name: text(function, line, 30),
            parameters: None,
            span: sp(line, 20),
        }),
        timeout: None,
        input_path: None,
        results_path: None,
        span: sp(line, 11),
    }
}

pub fn duration(line: u32) -> DurationSpec {
    DurationSpec {
        text: "PT1M".to_owned(),
        millis: 60_000,
        span: sp(line, 20),
    }
}

pub fn definite_path(text_: &str, line: u32) -> JsonPath {
    JsonPath {
        text: text_.to_owned(),
        kind: PathKind::Definite(Vec::new()),
        span: sp(line, 20),
        strict: false,
    }
}

pub fn query_path(text_: &str, line: u32) -> JsonPath {
    JsonPath {
        text: text_.to_owned(),
        kind: PathKind::Query(text_.to_owned()),
        span: sp(line, 20),
        strict: false,
    }
}

pub fn switch(conditions: SwitchConditions, default: Option<Transition>) -> TaskKind {
    TaskKind::Switch(Switch {
        conditions,
        default,
        event_timeout: None,
    })
}

/// A data condition at `line:11` (`path` at `line:20`) transitioning to `target`.
pub fn data_condition(line: u32, target: &str) -> DataCondition {
    DataCondition {
        test: DataTest::Compare(Comparison {
            path: Some(definite_path("$.a", line)),
            value: Some(text("1", line, 40)),
            operator: Spanned::new(Operator::Equals, sp(line, 50)),
            span: sp(line, 11),
        }),
        transition: Some(transition(line, target)),
        metadata: None,
        span: sp(line, 11),
    }
}

pub fn branch(line: u32, name: &str, tasks: Vec<Task>) -> Branch {
    Branch {
        wait_for_completion: true,
        name: text(name, line, 15),
        scope: Scope { tasks },
        span: sp(line, 9),
    }
}

pub fn parallel(branches: Vec<Branch>) -> TaskKind {
    TaskKind::Parallel {
        output: crate::ir::ParallelOutput::Merge,
        branches,
        completion: Completion::And,
        n: None,
        state_timeout: None,
        branch_timeout: None,
    }
}

pub fn foreach(tasks: Vec<Task>) -> TaskKind {
    TaskKind::ForEach {
        completion_condition: None,
        element_as_input: false,
        input_collection: Some(definite_path("$.items", 1)),
        input_parameter: Some(definite_path("$.item", 1)),
        output_collection: None,
        max: None,
        time_delay: None,
        scope: Scope { tasks },
    }
}

pub fn function(line: u32, name: &str) -> FunctionDef {
    FunctionDef {
        name: text(name, line, 13),
        resource: Some(text("http://example.invalid", line, 40)),
        kind: None,
        metadata: None,
        span: sp(line, 5),
    }
}

pub fn event(line: u32, name: &str) -> EventDef {
    EventDef {
        name: text(name, line, 13),
        source: Some(text("src", line, 40)),
        event_type: Some(text("type", line, 50)),
        correlation_token: None,
        metadata: None,
        span: sp(line, 5),
    }
}

pub fn produce(line: u32, event: &str) -> ProduceEvent {
    ProduceEvent {
        event_ref: text(event, line, 30),
        data: None,
        span: sp(line, 15),
    }
}

/// A workflow at `1:1` with the given tasks and no definitions.
pub fn workflow(tasks: Vec<Task>) -> Workflow {
    Workflow {
        file: "wf.yaml".into(),
        dialect: Dialect::Tasks,
        id: text("wf", 2, 5),
        name: text("Workflow", 3, 7),
        version: None,
        description: None,
        expression_language: None,
        functions: Vec::new(),
        events: Vec::new(),
        scope: Scope { tasks },
        metadata: None,
        extensions: None,
        schemas: crate::ir::DataSchemas::default(),
        span: sp(1, 1),
    }
}

pub fn scope(tasks: Vec<Task>) -> Scope {
    Scope { tasks }
}

/// Runs every rule and returns what was recorded, in recording order.
pub fn check(workflow: &Workflow) -> Vec<Diagnostic> {
    let mut diags = Diagnostics::new("wf.yaml");
    super::validate(workflow, &mut diags);
    diags.items().to_vec()
}

/// The diagnostics with the given code.
pub fn with_code(diagnostics: &[Diagnostic], code: Code) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.code == code)
        .cloned()
        .collect()
}

/// The single diagnostic with the given code; fails the test with all of them otherwise.
pub fn only(diagnostics: &[Diagnostic], code: Code) -> Diagnostic {
    let found = with_code(diagnostics, code);
    assert_eq!(
        found.len(),
        1,
        "expected one {code:?}, got: {:#?}",
        diagnostics.iter().map(|d| d.one_line()).collect::<Vec<_>>()
    );
    found[0].clone()
}

/// Asserts the diagnostic's message and help contain every word given.
pub fn assert_mentions(diagnostic: &Diagnostic, words: &[&str]) {
    let all = format!(
        "{} {}",
        diagnostic.message,
        diagnostic.help.as_deref().unwrap_or("")
    );
    for word in words {
        assert!(all.contains(word), "`{word}` missing from: {all}");
    }
}

/// A valid two-task workflow: `A` (line 10) starts and goes to `B` (line 20), which ends.
pub fn valid_pair() -> Workflow {
    workflow(vec![
        task(10, "A", inject()).start().next("B"),
        task(20, "B", inject()).end(),
    ])
}
