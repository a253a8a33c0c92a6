//! The tasks front end: both spellings, YAML and JSON, enum values in any case, positions on
//! every node, verbatim metadata.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{ActionMode, EndKind, Operator, PathKind, SwitchConditions, TaskKind, Workflow};
use crate::source::{SourceFile, Span};

fn parse(text: &str) -> (Option<Workflow>, Diagnostics) {
    let mut diags = Diagnostics::new("wf.yaml");
    let workflow = crate::parse::parse(&SourceFile::new("wf.yaml", text), &mut diags);
    (workflow, diags)
}

fn parse_ok(text: &str) -> Workflow {
    let (workflow, diags) = parse(text);
    assert!(diags.items().is_empty(), "{:#?}", diags.items());
    workflow.expect("a workflow")
}

const TASKS_SPELLING: &str = "id: w
name: W
metadata: {team: core, nested: {a: [1, 2]}}
functions:
  - {name: f, resource: r}
tasks:
  - name: A
    type: OPERATION
    actionMode: Parallel
    start: {kind: DEFAULT}
    taskDataFilter: {dataInputPath: $.x}
    actions:
      - functionRef: {refName: f, parameters: {p: $.y, q: 3}}
    transition: {nextTask: B}
  - name: B
    type: Switch
    dataConditions:
      - {path: $.n, operator: GreaterThanOrEquals, value: '3', transition: {nextTask: C}}
    default: {nextTask: C}
  - name: C
    type: inject
    end: {kind: Terminate}
";

#[test]
fn the_tasks_spelling_lowers_with_positions_and_any_case() {
    let wf = parse_ok(TASKS_SPELLING);
    assert_eq!(wf.file, "wf.yaml");
    assert_eq!(wf.id.value, "w");
    assert_eq!(
        wf.metadata,
        Some(serde_json::json!({"team": "core", "nested": {"a": [1, 2]}}))
    );
    let [a, b, c] = &wf.scope.tasks[..] else {
        panic!("three tasks")
    };
    assert_eq!(a.name.span, Span::new(7, 11));
    assert_eq!(a.span, Span::new(7, 5));
    let TaskKind::Operation {
        action_mode,
        actions,
    } = &a.kind
    else {
        panic!("operation")
    };
    assert_eq!(*action_mode, ActionMode::Parallel);
    assert_eq!(actions[0].span, Span::new(13, 9));
    assert_eq!(
        a.transition.as_ref().map(|t| t.next.value.as_str()),
        Some("B")
    );
    assert!(matches!(
        a.data_filter.input.as_ref().map(|p| &p.kind),
        Some(PathKind::Definite(_))
    ));
    let TaskKind::Switch(switch) = &b.kind else {
        panic!("switch")
    };
    let SwitchConditions::Data(conditions) = &switch.conditions else {
        panic!("data conditions")
    };
    let comparison = conditions[0].comparison().expect("one comparison");
    assert_eq!(comparison.operator.value, Operator::GreaterThanOrEquals);
    assert_eq!(comparison.operator.span, Span::new(18, 31));
    assert!(matches!(
        c.end.as_ref().map(|e| &e.kind),
        Some(EndKind::Terminate)
    ));
}

#[test]
fn the_states_spelling_means_the_same() {
    let states = TASKS_SPELLING
        .replace("tasks:", "states:")
        .replace("nextTask", "nextState")
        .replace("taskDataFilter", "stateDataFilter");
    let a = parse_ok(TASKS_SPELLING);
    let b = parse_ok(&states);
    // The spellings have different lengths, so only positions may differ.
    assert_eq!(a.scope.tasks.len(), b.scope.tasks.len());
    for (x, y) in a.scope.tasks.iter().zip(&b.scope.tasks) {
        assert_eq!(x.type_name(), y.type_name());
        assert_eq!(x.name.value, y.name.value);
        assert_eq!(
            x.transition.as_ref().map(|t| &t.next.value),
            y.transition.as_ref().map(|t| &t.next.value)
        );
        assert_eq!(x.data_filter.input.is_some(), y.data_filter.input.is_some());
    }
}

#[test]
fn json_files_parse_with_positions() {
    let wf = parse_ok(
        r#"{
  "id": "j",
  "name": "J",
  "states": [
    {
      "name": "Only",
      "type": "inject",
      "start": {"kind": "default"},
      "data": {"a": 1},
      "end": {"kind": "default"}
    }
  ]
}"#,
    );
    let only = &wf.scope.tasks[0];
    assert_eq!(only.name.span, Span::new(6, 15));
    assert_eq!(
        only.kind,
        TaskKind::Inject {
            data: serde_json::json!({"a": 1})
        }
    );
}

#[test]
fn every_unknown_key_is_reported_with_a_suggestion() {
    let (_, diags) = parse(
        "id: w
name: W
tasks:
  - name: A
    type: inject
    strat: {kind: default}
    transition: {nextTak: B}
    colour: blue
",
    );
    let sorted = diags.into_sorted();
    let unknown: Vec<_> = sorted
        .iter()
        .filter(|d| d.code == Code::UNKNOWN_KEY)
        .collect();
    assert_eq!(unknown.len(), 3, "{unknown:#?}");
    assert!(
        unknown[0].message.contains("did you mean `start`"),
        "{}",
        unknown[0].message
    );
    assert!(unknown[1].message.contains("did you mean `nextTask`"));
    assert!(unknown[2].message.contains("unknown key `colour`"));
    assert_eq!(unknown[2].span, Span::new(8, 5));
}

#[test]
fn a_v01_file_is_lowered_by_the_v01_front_end() {
    let workflow = parse_ok(
        "id: old\nname: Old\nstartsAt: A\nstates:\n  - {name: A, type: RELAY, end: true}\n",
    );
    assert_eq!(workflow.dialect, crate::ir::Dialect::V01);
    assert_eq!(workflow.scope.tasks[0].type_name(), "inject");
}

#[test]
fn wrong_kinds_of_values_are_reported() {
    let (_, diags) = parse(
        "id: w
name: W
tasks:
  - name: A
    type: delay
    start: {kind: default}
    timeDelay: [PT1M]
    end: {kind: default}
",
    );
    let d = &diags.items()[0];
    assert_eq!(d.code, Code::WRONG_TYPE);
    assert_eq!(d.span, Span::new(7, 16));
}

const COMPENSATION: &str = "id: w
name: W
tasks:
  - name: Book
    type: inject
    start: true
    compensatedBy: Cancel
    transition: {nextTask: Pay, compensate: TRUE}
  - name: Pay
    type: inject
    onError:
      - transition: {nextTask: Pay, compensate: true}
    end: {kind: default, compensate: true}
  - name: Cancel
    type: inject
    usedForCompensation: true
    end: true
";

#[test]
fn compensation_fields_lower_with_their_positions() {
    let wf = parse_ok(COMPENSATION);
    let [book, pay, cancel] = &wf.scope.tasks[..] else {
        panic!("three tasks")
    };
    let by = book.compensated_by.as_ref().expect("compensatedBy");
    assert_eq!((by.value.as_str(), by.span), ("Cancel", Span::new(7, 20)));
    assert!(!book.used_for_compensation);
    let transition = book.transition.as_ref().expect("transition");
    assert!(transition.compensate);
    assert_eq!(transition.span, Span::new(8, 17));
    let end = pay.end.as_ref().expect("end");
    assert!(end.compensate);
    assert_eq!(end.span, Span::new(13, 10));
    let handler = pay.on_error[0]
        .transition
        .as_ref()
        .expect("onError transition");
    assert!(handler.compensate);
    assert_eq!(handler.span, Span::new(12, 21));
    assert!(cancel.used_for_compensation && cancel.compensated_by.is_none());
    let plain = cancel.end.as_ref().expect("end: true");
    assert!(!plain.compensate);
}

#[test]
fn compensation_values_of_the_wrong_kind_are_reported_at_the_value() {
    let (_, diags) = parse(
        "id: w
name: W
tasks:
  - name: A
    type: inject
    start: true
    compensatedBy: [Undo]
    usedForCompensation: maybe
    end: {compensate: 3}
",
    );
    let spans: Vec<(Code, Span)> = diags
        .into_sorted()
        .iter()
        .map(|d| (d.code, d.span))
        .collect();
    assert_eq!(
        spans,
        vec![
            (Code::WRONG_TYPE, Span::new(7, 20)),
            (Code::WRONG_TYPE, Span::new(8, 26)),
            (Code::WRONG_TYPE, Span::new(9, 23)),
        ]
    );
}

/// Every diagnostic of the front end and of validation, in file order.
fn check(text: &str) -> Vec<crate::diagnostic::Diagnostic> {
    crate::pipeline::check(&SourceFile::new("wf.yaml", text))
        .1
        .into_sorted()
}

const SWITCH_WITH_TRANSITION: &str = "id: w
name: W
tasks:
  - name: A
    type: switch
    start: {kind: default}
    dataConditions:
      - {path: $.n, operator: equals, value: '1', transition: {nextTask: B}}
    default: {nextTask: B}
    transition: {nextTask: C}
  - name: B
    type: inject
    end: {kind: default}
  - name: C
    type: inject
    end: {kind: default}
";

#[test]
fn a_switch_task_has_no_transition_of_its_own() {
    let diags = check(SWITCH_WITH_TRANSITION);
    let found: Vec<(Code, Span)> = diags.iter().map(|d| (d.code, d.span)).collect();
    // Refused, the transition leads nowhere: only it would have reached C.
    assert_eq!(
        found,
        [
            (Code::NOT_ALLOWED_HERE, Span::new(10, 5)),
            (Code::UNREACHABLE, Span::new(14, 11)),
        ],
        "{diags:#?}"
    );
    let d = &diags[0];
    assert!(d.message.contains("no `transition` of its own"), "{d:#?}");
    assert!(
        d.help.as_deref().unwrap_or("").contains("`default`"),
        "{d:#?}"
    );
    let wf = parse(SWITCH_WITH_TRANSITION).0.expect("a workflow");
    assert!(wf.scope.tasks[0].transition.is_none());
}

#[test]
fn a_switch_s_conditions_under_two_spellings_are_reported_and_both_read() {
    let diags = check(
        "id: w
name: W
tasks:
  - name: A
    type: switch
    start: {kind: default}
    dataConditions:
      - {path: $.n, operator: equals, value: '1', transition: {nextTask: B}}
    conditions:
      - {path: $.n, operator: equals, value: '2', transition: {nextTask: C}}
    default: {nextTask: B}
  - name: B
    type: inject
    end: {kind: default}
  - name: C
    type: inject
    end: {kind: default}
",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!((d.code, d.span), (Code::DUPLICATE_KEY, Span::new(9, 5)));
    assert!(
        d.message.contains(
            "data conditions are given twice, as `dataConditions` (at line 7) and as `conditions`"
        ),
        "{d:#?}"
    );

    // Event conditions, `conditions` first: the second key in the file is the one pointed at.
    let (wf, diags) = parse(
        "id: w
name: W
events:
  - {name: a, source: s, type: t}
  - {name: b, source: s, type: t}
tasks:
  - name: A
    type: switch
    start: {kind: default}
    eventTimeout: PT1M
    conditions:
      - {eventRef: a, transition: {nextTask: B}}
    eventConditions:
      - {eventRef: b, transition: {nextTask: B}}
    default: {nextTask: B}
  - name: B
    type: inject
    end: {kind: default}
",
    );
    let items = diags.items();
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(
        (items[0].code, items[0].span),
        (Code::DUPLICATE_KEY, Span::new(13, 5))
    );
    let wf = wf.expect("a workflow");
    let TaskKind::Switch(switch) = &wf.scope.tasks[0].kind else {
        panic!("switch")
    };
    let SwitchConditions::Event(conditions) = &switch.conditions else {
        panic!("event conditions")
    };
    let refs: Vec<&str> = conditions
        .iter()
        .filter_map(|c| c.event_ref.as_ref().map(|r| r.as_str()))
        .collect();
    assert_eq!(refs, ["a", "b"]);
}

/// A workflow whose one task `A` (line 6) starts with `start` and ends with `end`.
fn start_and_end(start: &str, end: &str) -> String {
    format!(
        "id: w
name: W
events:
  - {{name: Done, source: s, type: t}}
tasks:
  - name: A
    type: inject
    start: {start}
    end: {end}
"
    )
}

#[test]
fn an_end_definition_needs_its_kind() {
    let diags = check(&start_and_end("{kind: default}", "{}"));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!((d.code, d.span), (Code::MISSING_FIELD, Span::new(9, 10)));
    assert!(d.message.contains("no `kind`"), "{d:#?}");

    // Missing beside a `produceEvent`, the end is read as an event end: its reference is checked.
    let diags = check(&start_and_end(
        "{kind: default}",
        "{produceEvent: {eventRef: Dne}}",
    ));
    let found: Vec<(Code, Span)> = diags.iter().map(|d| (d.code, d.span)).collect();
    assert_eq!(
        found,
        [
            (Code::MISSING_FIELD, Span::new(9, 10)),
            (Code::UNDEFINED_EVENT, Span::new(9, 36)),
        ],
        "{diags:#?}"
    );

    // The later fragment's end object has no kind: `compensate` alone is the default end.
    let wf = parse_ok(&start_and_end("{kind: default}", "{compensate: false}"));
    assert!(matches!(
        wf.scope.tasks[0].end.as_ref().map(|e| &e.kind),
        Some(EndKind::Default)
    ));
}

#[test]
fn produce_event_belongs_to_an_event_end_only() {
    for kind in ["default", "terminate"] {
        let diags = check(&start_and_end(
            "{kind: default}",
            &format!("{{kind: {kind}, produceEvent: {{eventRef: Done}}}}"),
        ));
        assert_eq!(diags.len(), 1, "{diags:#?}");
        let d = &diags[0];
        assert_eq!(d.code, Code::NOT_ALLOWED_HERE, "{d:#?}");
        assert_eq!(d.span, Span::new(9, 19 + kind.len() as u32));
        assert!(
            d.message
                .contains(&format!("end of kind `{kind}` produces no event")),
            "{d:#?}"
        );
        assert!(d.help.as_deref().unwrap_or("").contains("`kind: event`"));
    }
    parse_ok(&start_and_end(
        "{kind: default}",
        "{kind: event, produceEvent: {eventRef: Done}}",
    ));
}

#[test]
fn a_default_start_has_no_schedule() {
    let diags = check(&start_and_end(
        "{kind: default, schedule: {interval: PT1H}}",
        "{kind: default}",
    ));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!((d.code, d.span), (Code::NOT_ALLOWED_HERE, Span::new(8, 28)));
    assert!(d.message.contains("`default` has no `schedule`"), "{d:#?}");
    assert!(
        d.help
            .as_deref()
            .unwrap_or("")
            .contains("`kind: scheduled`")
    );
}

/// `stateExecTimeout.single` was read and dropped without a word: it is a warning at its key.
#[test]
fn a_single_state_timeout_is_a_warning_that_it_is_not_applied() {
    let text = "id: w
name: W
version: '1.0'
tasks:
  - name: Both
    type: parallel
    start: {kind: default}
    timeouts:
      stateExecTimeout: {total: PT1M, single: PT10S}
    branches:
      - name: a
        tasks:
          - {name: A, type: inject, start: {kind: default}, data: {}, end: {kind: default}}
    end: {kind: default}
";
    let diags = check(text);
    let found: Vec<(Code, Span)> = diags.iter().map(|d| (d.code, d.span)).collect();
    assert_eq!(
        found,
        [(Code::IGNORED_SINGLE_TIMEOUT, Span::new(9, 39))],
        "{diags:#?}"
    );
    assert_eq!(diags[0].severity, crate::diagnostic::Severity::Warning);
}
