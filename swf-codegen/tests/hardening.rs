//! Regressions of issue 9 (hardening): inputs on which `check` and `gen` disagreed, forms of the
//! drafts that were refused, one problem reported several times. Each test names the defect.

use swf_codegen::diagnostic::Diagnostic;
use swf_codegen::source::SourceFile;

/// The codes of `check`'s errors and warnings for `text`, in order.
fn codes(name: &str, text: &str) -> Vec<&'static str> {
    diagnostics(name, text).iter().map(|d| d.code.0).collect()
}

/// The one diagnostic of `text`, which must have `code`.
fn only(name: &str, text: &str, code: &str) -> Diagnostic {
    let found = diagnostics(name, text);
    let codes: Vec<_> = found.iter().map(|d| d.code.0).collect();
    assert_eq!(codes, vec![code], "{name}: {found:#?}");
    found[0].clone()
}

fn diagnostics(name: &str, text: &str) -> Vec<Diagnostic> {
    let source = SourceFile::new(name, text.to_owned());
    let (_, diags) = swf_codegen::check(&source);
    let checked = diags.into_sorted();
    // `gen` never disagrees with `check`: code exactly when there are no errors.
    let compiled = swf_codegen::compile(&source);
    let errors = checked
        .iter()
        .any(|d| d.severity == swf_codegen::diagnostic::Severity::Error);
    assert_eq!(compiled.tokens.is_some(), !errors, "{checked:#?}");
    if let Some(tokens) = compiled.tokens {
        assert!(
            !tokens.to_string().contains("compile_error"),
            "check accepted what gen cannot compile"
        );
    }
    checked
}

/// `nextTask: ""` passed `check` in every dialect, then `gen` emitted `compile_error!`.
#[test]
fn empty_transition_targets_are_refused_in_every_dialect() {
    let tasks = "id: e\nname: e\nversion: '1.0'\ntasks:\n  - name: A\n    type: inject\n    start: {kind: default}\n    data: {}\n    transition: {nextTask: \"\"}\n";
    let states = "id: e\nname: e\nversion: '1.0'\nstates:\n  - name: A\n    type: inject\n    start: {kind: default}\n    data: {}\n    transition: {nextState: ''}\n";
    let v01 = "id: e\nname: e\nversion: '1.0'\nstartsAt: A\nstates:\n  - name: A\n    type: RELAY\n    transition: {nextState: ''}\n";
    let second = "id: e\nname: e\nstarts-at: A\nstates:\n  - name: A\n    type: DELAY\n    time-delay: PT1S\n    next-state: \"\"\n";
    for (name, text) in [
        ("tasks.yaml", tasks),
        ("states.yaml", states),
        ("v01.yaml", v01),
        ("second.yaml", second),
    ] {
        let found = only(name, text, "E0124");
        assert!(found.message.contains("is empty"), "{name}");
    }
}

const HEADER: &str = "id: s\nname: s\nversion: '1.0'\n";

/// The tasks draft: "These are exclusive, meaning that a switch task can define one or the
/// other condition type, not both". Both were accepted.
#[test]
fn a_switch_with_data_and_event_conditions_is_refused_once() {
    let text = format!(
        "{HEADER}events:\n  - {{name: Go, source: s, type: t}}\ntasks:\n  - name: Pick\n    type: switch\n    start: {{kind: default}}\n    dataConditions:\n      - {{path: $.x, value: '1', operator: equals, transition: {{nextTask: Done}}}}\n    eventConditions:\n      - {{eventRef: Go, transition: {{nextTask: Done}}}}\n    default: {{nextTask: Done}}\n  - {{name: Done, type: inject, data: {{}}, end: {{kind: default}}}}\n"
    );
    let found = diagnostics("both.yaml", &text);
    assert_eq!(codes("both.yaml", &text), vec!["E0132"], "{found:#?}");
    assert!(found[0].message.contains("not both"));
    assert_eq!(found[0].span.line, 13);
}

/// An unknown operator also reported "has no conditions" and "cannot be reached".
#[test]
fn an_unknown_operator_is_reported_once() {
    let text = format!(
        "{HEADER}tasks:\n  - name: Pick\n    type: switch\n    start: {{kind: default}}\n    dataConditions:\n      - {{path: $.x, value: '1', operator: equalz, transition: {{nextTask: Done}}}}\n    default: {{nextTask: Other}}\n  - {{name: Done, type: inject, data: {{}}, end: {{kind: default}}}}\n  - {{name: Other, type: inject, data: {{}}, end: {{kind: default}}}}\n"
    );
    assert_eq!(codes("op.yaml", &text), vec!["E0005"]);
}

/// An unknown task type also reported the transitions naming the task (E0104) and its keys.
#[test]
fn an_unknown_task_type_is_reported_once() {
    let text = format!(
        "{HEADER}tasks:\n  - {{name: A, type: inject, start: {{kind: default}}, data: {{}}, transition: {{nextTask: B}}}}\n  - {{name: B, type: injekt, data: {{}}, transition: {{nextTask: C}}}}\n  - {{name: C, type: inject, data: {{}}, end: {{kind: default}}}}\n"
    );
    assert_eq!(codes("type.yaml", &text), vec!["E0005"]);
}

/// An event condition that cannot be waited for also reported that the entry had no condition.
#[test]
fn an_event_condition_that_cannot_be_waited_for_is_reported_once() {
    let text = "id: v\nname: v\nversion: '1.0'\nstartsAt: Wait\ntriggers:\n  - {name: OrderPlaced, source: shop, type: order.placed}\nstates:\n  - name: Wait\n    type: EVENT\n    eventActions:\n      - condition: {body: \"not OrderPlaced\"}\n        actions: []\n        transition: {nextState: Done}\n  - {name: Done, type: RELAY, inject: {status: shipped}, end: true}\n";
    assert_eq!(codes("cond.yaml", text), vec!["E0133"]);
}

/// A first-draft file whose states are all END states has no kebab-case key: it was read as
/// the tasks draft, with three errors.
#[test]
fn a_first_draft_file_of_end_states_only_is_the_first_draft() {
    let text = "name: only-end\nstates:\n  - name: Done\n    type: END\n    start: true\n    status: SUCCESS\n";
    let source = SourceFile::new("end.yaml", text.to_owned());
    let (workflow, diags) = swf_codegen::check(&source);
    assert!(!diags.has_errors(), "{:?}", diags.items());
    assert_eq!(
        workflow.expect("parses").dialect,
        swf_codegen::ir::Dialect::First
    );
}

/// `actions: []` is a valid operation (the drafts' schemas set no minimum); a missing
/// `actions` is still reported.
#[test]
fn an_operation_may_have_no_actions_but_must_say_so() {
    let empty = format!(
        "{HEADER}tasks:\n  - {{name: A, type: operation, start: {{kind: default}}, actions: [], end: {{kind: default}}}}\n"
    );
    assert_eq!(codes("empty.yaml", &empty), Vec::<&str>::new());
    let missing = format!(
        "{HEADER}tasks:\n  - {{name: A, type: operation, start: {{kind: default}}, end: {{kind: default}}}}\n"
    );
    assert_eq!(codes("missing.yaml", &missing), vec!["E0004"]);
}

/// Jayway member names with dashes were refused.
#[test]
fn jsonpath_member_names_may_hold_dashes() {
    let text = format!(
        "{HEADER}tasks:\n  - name: Pick\n    type: switch\n    start: {{kind: default}}\n    dataConditions:\n      - {{path: $.exit-code, value: '0', operator: equals, transition: {{nextTask: Done}}}}\n      - {{path: \"$.steps.flip-coin.outputs\", value: heads, operator: equals, transition: {{nextTask: Done}}}}\n    default: {{nextTask: Done}}\n  - {{name: Done, type: inject, data: {{}}, end: {{kind: default}}}}\n"
    );
    assert_eq!(codes("dash.yaml", &text), Vec::<&str>::new());
}

/// Found by the smoke fuzz run: a task whose `name` and `type` were lost (`- na   type: x`)
/// was dropped without a word, and gen then indexed the empty branch (a panic).
#[test]
fn a_task_without_name_and_type_is_reported_not_dropped() {
    let text = format!(
        "{HEADER}tasks:\n  - name: Fan\n    type: parallel\n    start: {{kind: default}}\n    branches:\n      - name: b\n        tasks:\n          - na        type: operation\n            start: {{kind: default}}\n            actions: []\n            end: {{kind: default}}\n    end: {{kind: default}}\n"
    );
    assert_eq!(codes("lost.yaml", &text), vec!["E0004", "E0004"]);
}

/// The v0.1 and kebab-case front ends dropped a state of unknown type, so the transitions naming
/// it (E0104) and the states after it ("cannot be reached") were reported too. Like the tasks
/// draft's, they keep it (recovered) with its name and transitions: one diagnostic.
#[test]
fn an_unknown_state_type_is_reported_once_in_every_dialect() {
    let v01 = "id: u\nname: u\nversion: '1.0'\nstartsAt: A\nstates:\n  - {name: A, type: RELAY, transition: {nextState: B}}\n  - {name: B, type: RELAYY, transition: {nextState: C}}\n  - {name: C, type: RELAY, end: true}\n";
    let first = "name: u\nstates:\n  - {name: A, type: DELAY, start: true, time-delay: 1, next-state: B}\n  - {name: B, type: DELAYY, time-delay: 1, next-state: C}\n  - {name: C, type: END, status: SUCCESS}\n";
    let second = "id: u\nname: u\nstarts-at: A\nstates:\n  - {name: A, type: DELAY, time-delay: PT1S, next-state: B}\n  - {name: B, type: DELAYY, time-delay: PT1S, next-state: C}\n  - {name: C, type: DELAY, time-delay: PT1S, end: true}\n";
    for (name, text, line) in [
        ("v01.yaml", v01, 7),
        ("first.yaml", first, 4),
        ("second.yaml", second, 6),
    ] {
        assert_eq!(only(name, text, "E0005").span.line, line, "{name}");
    }
}

/// A state of unknown type that is the start, or ends the workflow, or has no transition at
/// all: still one diagnostic (what it would have needed cannot be known).
#[test]
fn an_unknown_state_type_at_the_start_or_the_end_is_reported_once() {
    let v01_start = "id: u\nname: u\nversion: '1.0'\nstartsAt: A\nstates:\n  - {name: A, type: RELAYY, transition: {nextState: B}}\n  - {name: B, type: RELAY, end: true}\n";
    let v01_last = "id: u\nname: u\nversion: '1.0'\nstartsAt: A\nstates:\n  - {name: A, type: RELAY, transition: {nextState: B}}\n  - {name: B, type: SWITCHH, choices: []}\n";
    let v01_end = "id: u\nname: u\nversion: '1.0'\nstartsAt: A\nstates:\n  - {name: A, type: RELAY, transition: {nextState: B}}\n  - {name: B, type: RELAYY, end: true}\n";
    let first_last = "name: u\nstates:\n  - {name: A, type: DELAY, start: true, time-delay: 1, next-state: B}\n  - {name: B, type: SWITCHH, choices: []}\n";
    let second_start = "id: u\nname: u\nstarts-at: A\nstates:\n  - {name: A, type: DELAYY, next-state: B}\n  - {name: B, type: DELAY, time-delay: PT1S, end: true}\n";
    // Where a misspelt switch leads is in fields nobody could read: its targets are not
    // reported as unreachable.
    let v01_switch = "id: u\nname: u\nversion: '1.0'\nstartsAt: A\nstates:\n  - {name: A, type: RELAY, transition: {nextState: B}}\n  - name: B\n    type: SWITCHH\n    choices:\n      - {path: $.n, value: '1', operator: Equals, transition: {nextState: C}}\n    default: {nextState: D}\n  - {name: C, type: RELAY, end: true}\n  - {name: D, type: RELAY, end: true}\n";
    let tasks_switch = format!(
        "{HEADER}tasks:\n  - {{name: A, type: inject, start: {{kind: default}}, data: {{}}, transition: {{nextTask: B}}}}\n  - name: B\n    type: swich\n    dataConditions:\n      - {{path: $.n, value: '1', operator: equals, transition: {{nextTask: C}}}}\n    default: {{nextTask: D}}\n  - {{name: C, type: inject, data: {{}}, end: {{kind: default}}}}\n  - {{name: D, type: inject, data: {{}}, end: {{kind: default}}}}\n"
    );
    for (name, text) in [
        ("v01_switch.yaml", v01_switch),
        ("tasks_switch.yaml", tasks_switch.as_str()),
        ("v01_start.yaml", v01_start),
        ("v01_last.yaml", v01_last),
        ("v01_end.yaml", v01_end),
        ("first_last.yaml", first_last),
        ("second_start.yaml", second_start),
    ] {
        only(name, text, "E0005");
    }
}
