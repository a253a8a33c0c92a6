//! Whole-workflow tests: many problems at once, reported completely and in a stable order.

use super::test_support::*;
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Completion, SwitchConditions, TaskKind, Workflow};
use crate::source::{Span, Spanned};

/// One workflow with a problem of nearly every kind, in several scopes.
fn broken() -> Workflow {
    let mut start_action = action(11, "g");
    start_action.results_path = None;
    let mut typed_action = action(12, "f");
    typed_action.results_path = Some(query_path("$.out[*]", 12));
    let mut pathless = data_condition(22, "Done");
    pathless.comparison_mut().expect("comparison").path = None;
    let branch_tasks = vec![task(80, "X", inject()).next("Done")];
    let body = vec![
        task(100, "L1", inject()).start().next("L2"),
        task(110, "L2", inject()).next("L1"),
        task(120, "Orphan", inject()).end(),
    ];
    let mut wf = workflow(vec![
        task(10, "Begin", operation(vec![start_action, typed_action]))
            .start()
            .next("Chek"),
        task(
            20,
            "Check",
            switch(SwitchConditions::Data(vec![pathless]), None),
        )
        .end(),
        task(30, "Check", inject()).next("Done"),
        task(40, "Done", inject()).start().end(),
        task(
            50,
            "P",
            TaskKind::Parallel {
                output: crate::ir::ParallelOutput::Merge,
                branches: vec![branch(70, "b", branch_tasks)],
                completion: Completion::NOfM,
                n: Some(Spanned::new(5, sp(51, 12))),
                state_timeout: None,
                branch_timeout: None,
            },
        )
        .end(),
        task(60, "F", foreach(body)).end(),
        task(90, "Wait", TaskKind::Delay { time_delay: None }),
    ]);
    wf.functions = vec![function(3, "f"), function(4, "f")];
    wf.events = vec![event(5, "e")];
    wf
}

fn summary(workflow: &Workflow) -> Vec<(&'static str, Span)> {
    check(workflow).iter().map(|d| (d.code.0, d.span)).collect()
}

#[test]
fn every_problem_is_reported_in_walk_order() {
    let expected = vec![
        // Definitions.
        (Code::DUPLICATE_DEFINITION.0, sp(4, 13)),
        // The workflow: names, starts, then task by task.
        (Code::DUPLICATE_TASK.0, sp(30, 11)),
        (Code::MANY_STARTS.0, sp(42, 9)),
        (Code::UNKNOWN_TARGET.0, sp(13, 21)),
        (Code::UNDEFINED_FUNCTION.0, sp(11, 30)),
        (Code::INDEFINITE_TARGET.0, sp(12, 20)),
        (Code::SWITCH_END.0, sp(24, 9)),
        (Code::MISSING_FIELD.0, sp(22, 11)),
        (Code::MISSING_FIELD.0, sp(20, 11)),
        (Code::N_TOO_LARGE.0, sp(51, 12)),
        (Code::NO_TRANSITION_OR_END.0, sp(90, 11)),
        (Code::MISSING_FIELD.0, sp(90, 11)),
        // No graph rules for the workflow: it has two starts and a dangling target.
        // Branch `b`: no start, a transition out of the branch, no graph rules.
        (Code::NO_START.0, sp(70, 9)),
        (Code::TARGET_OUT_OF_SCOPE.0, sp(83, 21)),
        // The foreach body: graph rules run.
        (Code::UNREACHABLE.0, sp(120, 11)),
        (Code::NO_EXIT.0, sp(100, 11)),
    ];
    assert_eq!(summary(&broken()), expected);
}

#[test]
fn messages_name_what_is_wrong() {
    let found = check(&broken());
    let unknown = only(&found, Code::UNKNOWN_TARGET);
    assert_mentions(&unknown, &["`Chek`", "did you mean `Check`?"]);
    let cycle = only(&found, Code::NO_EXIT);
    assert_eq!(
        cycle.message,
        "tasks `L1` → `L2` → `L1` form a cycle that never reaches an end"
    );
    assert!(
        found.iter().all(|d| d.help.is_some()),
        "every problem says what to do"
    );
}

#[test]
fn output_is_stable() {
    let first = check(&broken());
    for _ in 0..10 {
        assert_eq!(check(&broken()), first);
    }
    let mut diags = Diagnostics::new("wf.yaml");
    super::validate(&broken(), &mut diags);
    let sorted = diags.into_sorted();
    assert_eq!(sorted.len(), first.len());
    assert_eq!(
        sorted.first().map(|d| d.code),
        Some(Code::DUPLICATE_DEFINITION)
    );
}

#[test]
fn a_valid_workflow_has_no_diagnostics() {
    let inner = vec![task(40, "In", inject()).start().end()];
    let mut wf = workflow(vec![
        task(10, "A", operation(vec![action(11, "f")]))
            .start()
            .next("P"),
        task(20, "P", parallel(vec![branch(30, "only", inner)])).next("B"),
        task(50, "B", inject()).end(),
    ]);
    wf.functions = vec![function(3, "f")];
    assert_eq!(check(&wf), Vec::new());
}

/// Functions whose names become one trait method were refused only by `gen`, so `check`
/// accepted what did not compile: `check` refuses them now.
#[test]
fn functions_that_become_one_method_are_refused_by_check() {
    let mut wf = workflow(vec![
        task(10, "A", operation(vec![action(11, "send-mail")]))
            .start()
            .end(),
    ]);
    wf.functions = vec![function(3, "send-mail"), function(4, "SendMail")];
    let codes: Vec<&str> = check(&wf).iter().map(|d| d.code.0).collect();
    assert_eq!(codes, vec![Code::NAME_CLASH.0]);
}

/// A control character in a name the runtime shows and the stores keep is refused where it is
/// (the version too, which had no position and was shown at the file's start), once per name,
/// whatever kind of name and whichever control character (C0, DEL, C1). Before, a task named
/// `"a\0b"` compiled, and every commit of its instances failed on PostgreSQL.
#[test]
fn names_with_control_characters_are_refused_where_they_are() {
    let text = "id: \"w\\0\"\nname: w\nversion: \"1\\e\"\n\
                functions:\n  - {name: \"f\\nx\", resource: r}\n\
                events:\n  - {name: \"e\\a\", source: s, type: t}\n\
                tasks:\n  - name: \"Fork\\N\"\n    type: parallel\n    start: {kind: default}\n\
                \x20   branches:\n      - name: \"b\\r\"\n        tasks:\n\
                \x20         - {name: \"Call\\x7f\", type: operation, start: {kind: default}, \
                end: {kind: default}, actions: [{functionRef: {refName: \"f\\nx\"}}]}\n\
                \x20   end: {kind: default}\n";
    let (_, diags) = crate::check(&crate::source::SourceFile::new("w.sw.yaml", text));
    let refused: Vec<(String, u32, u32)> = diags
        .items()
        .iter()
        .filter(|d| d.code == Code::CONTROL_CHARACTER)
        .map(|d| (d.message.clone(), d.span.line, d.span.col))
        .collect();
    let expected = [
        (
            "the workflow id \"w\\0\" holds the control character U+0000",
            1,
            5,
        ),
        (
            "the workflow version \"1\\u{1b}\" holds the control character U+001B",
            3,
            10,
        ),
        (
            "function name \"f\\nx\" holds the control character U+000A",
            5,
            12,
        ),
        (
            "event name \"e\\u{7}\" holds the control character U+0007",
            7,
            12,
        ),
        (
            "task name \"Fork\\u{85}\" holds the control character U+0085",
            9,
            11,
        ),
        (
            "branch name \"b\\r\" holds the control character U+000D",
            13,
            15,
        ),
        (
            "task name \"Call\\u{7f}\" holds the control character U+007F",
            15,
            20,
        ),
    ];
    let expected: Vec<(String, u32, u32)> = expected
        .iter()
        .map(|(message, line, col)| ((*message).to_owned(), *line, *col))
        .collect();
    assert_eq!(refused, expected);
    assert_eq!(diags.items().len(), expected.len(), "{:?}", diags.items());
}

/// A name longer than the stores index is refused at the name (E0145), whatever kind it is.
#[test]
fn names_longer_than_the_stores_index_are_refused() {
    let long = "n".repeat(super::names::MAX_NAME_BYTES + 1);
    let fits = "n".repeat(super::names::MAX_NAME_BYTES);
    let text = format!(
        "id: {long}\nname: w\nversion: {long}\n\
         events:\n  - {{name: {fits}, source: s, type: t, correlationToken: {long}}}\n\
         tasks:\n  - {{name: {long}, type: inject, start: {{kind: default}}, data: {{}}, \
         end: {{kind: default}}}}\n"
    );
    let (_, diags) = crate::check(&crate::source::SourceFile::new("w.sw.yaml", text));
    let refused: Vec<(&str, u32)> = diags
        .items()
        .iter()
        .map(|d| (d.code.0, d.span.line))
        .collect();
    assert_eq!(
        refused,
        [
            (Code::LIMIT.0, 1),
            (Code::LIMIT.0, 3),
            (Code::LIMIT.0, 5),
            (Code::LIMIT.0, 7)
        ],
        "{:?}",
        diags.items()
    );
    assert!(
        diags.items()[0]
            .message
            .starts_with("the workflow id is 513 bytes long, more than the 512"),
        "{}",
        diags.items()[0].message
    );
}
