//! The v0.1 front end: every construct of the draft lowered to the IR, with positions, and its
//! mistakes reported with their code, position and help.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::ir::*;
use crate::source::{SourceFile, Span};
use serde_json::json;

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

/// Every diagnostic of the front end and of validation, in file order.
fn check(text: &str) -> Vec<Diagnostic> {
    crate::pipeline::check(&SourceFile::new("wf.yaml", text))
        .1
        .into_sorted()
}

/// The one diagnostic there is, which must have `code`.
fn only(diags: &[Diagnostic], code: Code) -> Diagnostic {
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].code, code, "{diags:#?}");
    diags[0].clone()
}

fn help(d: &Diagnostic) -> &str {
    d.help.as_deref().unwrap_or("")
}

/// `text` wrapped into a workflow whose only state (or the first) is given by `states`.
fn workflow(states: &str) -> String {
    format!(
        "id: w\nname: W\nstartsAt: A\nfunctions:\n  - {{name: f, resource: r}}\nstates:\n{states}"
    )
}

fn task<'w>(wf: &'w Workflow, name: &str) -> &'w Task {
    wf.scope
        .tasks
        .iter()
        .find(|t| t.name.value == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

fn next(transition: Option<&Transition>) -> Option<&str> {
    transition.map(|t| t.next.value.as_str())
}

// ---------------------------------------------------------------------------------------------
// The workflow definition
// ---------------------------------------------------------------------------------------------

const TOP: &str = r#"id: orders
name: Orders
description: Handles orders
version: "1.0"
schemaVersion: "0.1"
startsAt: Second
execStatus: success
expressionLanguage: spel
metadata: {team: core}
extensions: [{kind: tracing}]
triggers:
  - name: OrderCreated
    source: shop
    type: order.created
    correlationToken: orderid
functions:
  - name: charge
    resource: payments
    type: rest
states:
  - name: First
    type: RELAY
    end: true
  - name: Second
    id: second-id
    type: relay
    transition: {nextState: First}
"#;

#[test]
fn the_workflow_definition_lowers_with_its_positions() {
    let wf = parse_ok(TOP);
    assert_eq!(wf.dialect, Dialect::V01);
    assert_eq!(wf.id.value, "orders");
    assert_eq!(wf.id.span, Span::new(1, 5));
    assert_eq!(wf.name.value, "Orders");
    assert_eq!(wf.description.as_deref(), Some("Handles orders"));
    assert_eq!(wf.version.as_ref().map(|v| v.value.as_str()), Some("1.0"));
    assert_eq!(
        wf.expression_language.as_ref().map(|l| l.value.as_str()),
        Some("spel")
    );
    assert_eq!(wf.metadata, Some(json!({"team": "core"})));
    assert_eq!(wf.extensions, Some(json!([{"kind": "tracing"}])));

    let [trigger] = &wf.events[..] else {
        panic!("one trigger")
    };
    assert_eq!(trigger.name.value, "OrderCreated");
    assert_eq!(trigger.span, Span::new(12, 5));
    assert_eq!(trigger.source.as_ref().unwrap().value, "shop");
    assert_eq!(trigger.event_type.as_ref().unwrap().value, "order.created");
    let token = trigger.correlation_token.as_ref().unwrap();
    assert_eq!(
        (token.value.as_str(), token.span),
        ("orderid", Span::new(15, 23))
    );

    let [function] = &wf.functions[..] else {
        panic!("one function")
    };
    assert_eq!(function.name.value, "charge");
    assert_eq!(function.resource.as_ref().unwrap().value, "payments");
    assert_eq!(function.kind.as_deref(), Some("rest"));

    // `startsAt` gives the start to the state it names, positioned at its value.
    let first = task(&wf, "First");
    let second = task(&wf, "Second");
    assert!(first.start.is_none());
    let start = second.start.as_ref().expect("Second starts");
    assert_eq!(start.kind, StartKind::Default);
    assert_eq!(start.span, Span::new(6, 11));
    assert_eq!(second.id.as_ref().unwrap().value, "second-id");
    assert_eq!(second.span, Span::new(24, 5));
    assert_eq!(
        first
            .end
            .as_ref()
            .map(|e| (&e.kind, e.status.clone(), e.span)),
        Some((&EndKind::Default, None, Span::new(23, 10)))
    );
}

#[test]
fn starts_at_may_name_a_state_by_its_id() {
    let wf = parse_ok(&TOP.replace("startsAt: Second", "startsAt: second-id"));
    assert!(task(&wf, "Second").start.is_some());
    assert!(task(&wf, "First").start.is_none());
}

#[test]
fn starts_at_that_names_no_state_is_one_error_with_a_suggestion() {
    let diags = check(&TOP.replace("startsAt: Second", "startsAt: Secnd"));
    let d = only(&diags, Code::UNKNOWN_TARGET);
    assert_eq!(d.span, Span::new(6, 11));
    assert!(
        d.message.contains("`startsAt` names `Secnd`"),
        "{}",
        d.message
    );
    assert_eq!(help(&d), "did you mean `Second`?");
}

/// Without a near miss, the help names the first few states, not every one: it listed all of
/// them, two megabytes of help for 200,000 states.
#[test]
fn starts_at_that_names_nothing_close_lists_a_few_states() {
    let states: String = (0..20)
        .map(|i| format!("  - {{name: Stage{i}, type: RELAY, end: true}}\n"))
        .collect();
    let diags = check(&workflow(&states).replace("startsAt: A", "startsAt: Zzz"));
    let d = diags
        .iter()
        .find(|d| d.code == Code::UNKNOWN_TARGET)
        .expect("the unknown start");
    assert!(help(d).ends_with("`Stage7` and 12 more"), "{}", help(d));
}

#[test]
fn starts_at_far_from_every_state_lists_them() {
    let diags = check(&TOP.replace("startsAt: Second", "startsAt: Zebra"));
    let d = only(&diags, Code::UNKNOWN_TARGET);
    assert!(help(&d).contains("`First`, `Second`"), "{}", help(&d));
}

#[test]
fn a_missing_starts_at_is_reported_once() {
    let diags = check(&TOP.replace("startsAt: Second\n", ""));
    let d = only(&diags, Code::MISSING_FIELD);
    assert!(d.message.contains("`startsAt`"), "{}", d.message);
}

#[test]
fn starts_at_naming_a_state_that_did_not_lower_adds_nothing() {
    // Second has no type: that is the one problem.
    let diags = check(&TOP.replace("    type: relay\n", ""));
    let d = only(&diags, Code::MISSING_FIELD);
    assert!(d.message.contains("`type`"), "{}", d.message);
}

#[test]
fn exec_status_is_checked_against_the_draft_s_values() {
    let (_, diags) = parse(&TOP.replace("execStatus: success", "execStatus: Succes"));
    let d = only(diags.items(), Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(7, 13));
    assert!(help(&d).contains("did you mean `Success`"), "{}", help(&d));
}

#[test]
fn a_v01_file_without_id_or_name_is_told_so() {
    let (_, diags) = parse("startsAt: A\nstates:\n  - {name: A, type: RELAY, end: true}\n");
    let messages: Vec<&str> = diags.items().iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("no `id`"))
            && messages.iter().any(|m| m.contains("no `name`")),
        "{messages:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// OPERATION states, actions, filters, transitions
// ---------------------------------------------------------------------------------------------

#[test]
fn an_operation_state_lowers_its_actions_and_filters() {
    let wf = parse_ok(&workflow(
        r#"  - name: A
    type: Operation
    actionMode: PARALLEL
    filter:
      inputPath: $.order
      resultPath: $.results
      outputPath: $.results
    actions:
      - functionref:
          refname: f
          parameters: {id: $.id, fixed: 3}
        timeout: PT10S
        filter:
          inputPath: $.customer
          resultPath: $.charged
          outputPath: $.receipt
      - functionref: {refname: f}
    transition: B
  - name: B
    type: RELAY
    end: true
"#,
    ));
    let a = task(&wf, "A");
    let TaskKind::Operation {
        action_mode,
        actions,
    } = &a.kind
    else {
        panic!("operation")
    };
    assert_eq!(*action_mode, ActionMode::Parallel);
    assert_eq!(a.data_filter.input.as_ref().unwrap().text, "$.order");
    assert_eq!(
        a.data_filter.input.as_ref().unwrap().span,
        Span::new(11, 18)
    );
    assert_eq!(a.data_filter.output.as_ref().unwrap().text, "$.results");

    let [first, second] = &actions[..] else {
        panic!("two actions")
    };
    assert_eq!(first.span, Span::new(15, 9));
    let function = first.function.as_ref().unwrap();
    assert_eq!(function.ref_name.value, "f");
    assert_eq!(function.ref_name.span, Span::new(16, 20));
    let Some(Param::Object(params)) = &function.parameters else {
        panic!("parameters")
    };
    assert!(matches!(&params[0], (key, Param::Path(p)) if key == "id" && p.text == "$.id"));
    assert_eq!(params[1], ("fixed".to_owned(), Param::Literal(json!(3))));
    assert_eq!(first.timeout.as_ref().unwrap().millis, 10_000);
    assert_eq!(first.input_path.as_ref().unwrap().text, "$.customer");
    assert_eq!(first.results_path.as_ref().unwrap().text, "$.charged");
    assert_eq!(first.result_selection.as_ref().unwrap().text, "$.receipt");
    // The state filter's resultPath places the results of the action that has none.
    assert_eq!(second.results_path.as_ref().unwrap().text, "$.results");
    assert_eq!(
        second.results_path.as_ref().unwrap().span,
        Span::new(12, 19)
    );
    assert!(second.result_selection.is_none());
    assert_eq!(next(a.transition.as_ref()), Some("B"));
    assert_eq!(a.transition.as_ref().unwrap().span, Span::new(24, 17));
}

#[test]
fn action_mode_defaults_to_sequential() {
    let wf = parse_ok(&workflow(
        "  - name: A\n    type: OPERATION\n    actions: [{functionref: {refname: f}}]\n    end: true\n",
    ));
    assert!(matches!(
        task(&wf, "A").kind,
        TaskKind::Operation {
            action_mode: ActionMode::Sequential,
            ..
        }
    ));
}

#[test]
fn a_transition_condition_keeps_its_language_and_position() {
    let wf = parse_ok(&workflow(
        r##"  - name: A
    type: OPERATION
    actions: [{functionref: {refname: f}}]
    transition:
      nextState: B
      condition:
        expressionLanguage: spel
        body: "#jsonPath(stateOutputData,'$..user.title') eq 'MANAGER'"
  - name: B
    type: RELAY
    end: true
"##,
    ));
    let transition = task(&wf, "A").transition.as_ref().unwrap();
    assert_eq!(transition.next.value, "B");
    assert_eq!(transition.next.span, Span::new(11, 18));
    let condition = transition.condition.as_ref().unwrap();
    assert_eq!(condition.language, ExprLanguage::Spel);
    assert_eq!(condition.span, Span::new(14, 15));
    assert!(matches!(
        condition.ast,
        Expr::Compare {
            op: CompareOp::Eq,
            ..
        }
    ));
}

#[test]
fn a_transition_condition_in_the_workflow_s_language() {
    let text = workflow(
        "  - name: A\n    type: RELAY\n    transition: {nextState: B, condition: {body: $.ok}}\n  - name: B\n    type: RELAY\n    end: true\n",
    )
    .replace("states:", "expressionLanguage: jsonpath\nstates:");
    let wf = parse_ok(&text);
    let condition = task(&wf, "A")
        .transition
        .as_ref()
        .unwrap()
        .condition
        .as_ref()
        .unwrap();
    assert_eq!(condition.language, ExprLanguage::JsonPath);
}

#[test]
fn end_and_transition_together_are_left_to_validation() {
    let diags = check(&workflow(
        "  - name: A\n    type: RELAY\n    end: true\n    transition: B\n  - name: B\n    type: RELAY\n    end: true\n",
    ));
    let d = only(&diags, Code::TRANSITION_AND_END);
    assert_eq!(d.span, Span::new(10, 17));
}

#[test]
fn state_types_are_read_in_any_case() {
    let wf = parse_ok(&workflow(
        "  - {name: A, type: delay, timeDelay: PT1M, transition: B}\n  - {name: B, type: Relay, end: true}\n",
    ));
    assert_eq!(task(&wf, "A").type_name(), "delay");
    assert_eq!(task(&wf, "B").type_name(), "inject");
}

// ---------------------------------------------------------------------------------------------
// Retries and onError
// ---------------------------------------------------------------------------------------------

const RETRIES: &str = r#"  - name: A
    type: OPERATION
    actions:
      - functionref: {refname: f}
        retry:
          - condition: {body: "name eq 'TimeoutError'"}
            interval: R5/PT15M
            max: 3
            transition: {nextState: Slow}
      - functionref: {refname: f}
        retry:
          - condition: "name eq 'Other'"
    onError:
      - condition: {expressionLanguage: spel, body: "$.error.name matches '^\\w+Exception$'"}
        filter: {inputPath: $.error, resultPath: $.trace, outputPath: $.stateerror}
        transition: {nextState: Failed}
    transition: Done
  - {name: Slow, type: RELAY, end: true}
  - {name: Failed, type: RELAY, end: true}
  - {name: Done, type: RELAY, end: true}
"#;

#[test]
fn retries_written_on_actions_stay_on_their_actions_in_document_order() {
    let wf = parse_ok(&workflow(RETRIES));
    let a = task(&wf, "A");
    assert!(a.retry.is_empty());
    let retries: Vec<&crate::ir::Retry> = a.actions().iter().flat_map(|x| &x.retry).collect();
    let [first, second] = retries[..] else {
        panic!("two retries")
    };
    assert_eq!(first.span, Span::new(12, 13));
    assert_eq!(first.max_attempts, 3);
    let interval = first.interval.as_ref().unwrap();
    assert_eq!(
        (interval.millis, interval.repeat),
        (15 * 60 * 1000, Some(5))
    );
    assert_eq!(first.effective_attempts(), 3);
    assert!(first.multiplier.is_none());
    assert_eq!(
        first.condition.as_ref().unwrap().body,
        "name eq 'TimeoutError'"
    );
    // `max` defaults to 0: no retries.
    assert_eq!(second.max_attempts, 0);
    assert_eq!(second.condition.as_ref().unwrap().span, Span::new(18, 24));
}

#[test]
fn a_retry_s_transition_becomes_the_first_error_handler() {
    let wf = parse_ok(&workflow(RETRIES));
    let a = task(&wf, "A");
    let [from_retry, own] = &a.on_error[..] else {
        panic!("two handlers: {:#?}", a.on_error)
    };
    assert_eq!(from_retry.condition, a.actions()[0].retry[0].condition);
    assert_eq!(next(from_retry.transition.as_ref()), Some("Slow"));
    // Only for its own action's failures; the state's own handler for any.
    assert_eq!((from_retry.action, own.action), (Some(0), None));
    assert_eq!(from_retry.span, Span::new(12, 13));
    assert!(from_retry.error_data_filter.is_none());

    assert_eq!(own.span, Span::new(20, 9));
    assert_eq!(next(own.transition.as_ref()), Some("Failed"));
    assert_eq!(own.error_data_filter.as_ref().unwrap().text, "$.error");
    assert_eq!(own.error_results_path.as_ref().unwrap().text, "$.trace");
    assert_eq!(own.output_path.as_ref().unwrap().text, "$.stateerror");
    let condition = own.condition.as_ref().unwrap();
    assert!(
        matches!(condition.ast, Expr::Matches { .. }),
        "{:?}",
        condition.ast
    );
}

#[test]
fn workflow_level_handlers_follow_each_top_level_state_s_own() {
    let text = workflow(RETRIES).replace(
        "states:",
        "onError:\n  - condition: \"name eq 'Any'\"\n    transition: Failed\nstates:",
    );
    let wf = parse_ok(&text);
    let a = task(&wf, "A");
    let targets: Vec<Option<&str>> = a
        .on_error
        .iter()
        .map(|h| next(h.transition.as_ref()))
        .collect();
    assert_eq!(targets, [Some("Slow"), Some("Failed"), Some("Failed")]);
    assert_eq!(a.on_error[2].span, Span::new(7, 5));
    for name in ["Slow", "Failed", "Done"] {
        let handlers = &task(&wf, name).on_error;
        assert_eq!(handlers.len(), 1, "{name}");
        assert_eq!(handlers[0], a.on_error[2]);
    }
}

#[test]
fn a_broken_workflow_level_handler_is_reported_once() {
    let text = workflow(RETRIES).replace(
        "states:",
        "onError:\n  - condition: \"name eq\"\n    transition: Nowhere\nstates:",
    );
    let diags = check(&text);
    let codes: Vec<(Code, Span)> = diags.iter().map(|d| (d.code, d.span)).collect();
    assert_eq!(
        codes,
        [
            (Code::BAD_EXPRESSION, Span::new(7, 16)),
            (Code::UNKNOWN_TARGET, Span::new(8, 17)),
        ],
        "{diags:#?}"
    );
}

#[test]
fn a_workflow_level_handler_to_an_unknown_state_is_reported_once() {
    let text = workflow(RETRIES).replace(
        "states:",
        "onError:\n  - condition: \"name eq 'X'\"\n    transition: Nowhere\nstates:",
    );
    let diags = check(&text);
    let d = only(&diags, Code::UNKNOWN_TARGET);
    assert_eq!(d.span, Span::new(8, 17));
}

#[test]
fn handlers_and_retries_without_a_condition_are_reported_in_v01_words() {
    let diags = check(&workflow(
        r#"  - name: A
    type: OPERATION
    actions:
      - functionref: {refname: f}
        retry: [{max: 2}]
    onError: [{transition: B}]
    transition: B
  - {name: B, type: RELAY, end: true}
"#,
    ));
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags.iter().all(|d| d.code == Code::MISSING_FIELD));
    assert!(
        diags.iter().all(|d| d.message.contains("no `condition`")),
        "{diags:#?}"
    );
    assert_eq!(diags[0].span, Span::new(11, 17));
    assert_eq!(diags[1].span, Span::new(12, 15));
}

// ---------------------------------------------------------------------------------------------
// EVENT states
// ---------------------------------------------------------------------------------------------

const EVENTS: &str = r#"id: w
name: W
startsAt: Wait
triggers:
  - {name: a, source: s, type: t.a}
  - {name: b, source: s, type: t.b}
  - {name: c, source: s, type: t.c}
functions:
  - {name: f, resource: r}
states:
  - name: Wait
    type: EVENT
    eventActions:
      - condition: {body: (a or b) and c}
        timeout: PT1H
        actionMode: Parallel
        actions:
          - functionref: {refname: f}
            retry: [{condition: "name eq 'E'", transition: Late}]
        filter: {inputPath: $.payload, resultPath: $.received}
        transition: {nextState: Done}
      - condition: "a or b or (c or a)"
        actions: []
        transition: Late
    filter: {resultPath: $.called}
  - {name: Done, type: RELAY, end: true}
  - {name: Late, type: RELAY, end: true}
"#;

#[test]
fn event_actions_wait_for_a_condition_over_trigger_names() {
    let wf = parse_ok(EVENTS);
    let wait = task(&wf, "Wait");
    assert!(wait.transition.is_none());
    let TaskKind::Event {
        exclusive,
        events_actions,
        timeout,
    } = &wait.kind
    else {
        panic!("event")
    };
    assert!(*exclusive);
    assert!(timeout.is_none());
    let [first, second] = &events_actions[..] else {
        panic!("two entries")
    };
    let at = Span::new(14, 27);
    let name = |n: &str| EventExpr::Event(crate::source::Spanned::new(n.to_owned(), at));
    assert_eq!(
        first.condition,
        Some(EventExpr::All(vec![
            EventExpr::Any(vec![name("a"), name("b")]),
            name("c"),
        ]))
    );
    let refs: Vec<&str> = first.event_refs.iter().map(|r| r.as_str()).collect();
    assert_eq!(refs, ["a", "b", "c"]);
    assert_eq!(first.event_refs[0].span, at);
    assert_eq!(first.timeout.as_ref().unwrap().millis, 3_600_000);
    assert_eq!(first.action_mode, ActionMode::Parallel);
    assert_eq!(first.event_data_filter.as_ref().unwrap().text, "$.payload");
    assert_eq!(
        first.event_results_path.as_ref().unwrap().text,
        "$.received"
    );
    assert_eq!(next(first.transition.as_ref()), Some("Done"));
    assert_eq!(first.span, Span::new(14, 9));
    // The state filter's resultPath places the entry's action results.
    assert_eq!(
        first.actions[0].results_path.as_ref().unwrap().text,
        "$.called"
    );

    // `or` lists are flattened; names are listed once, in order of appearance.
    let at = Span::new(22, 20);
    let name = |n: &str| EventExpr::Event(crate::source::Spanned::new(n.to_owned(), at));
    assert_eq!(
        second.condition,
        Some(EventExpr::Any(vec![
            name("a"),
            name("b"),
            name("c"),
            name("a")
        ]))
    );
    let refs: Vec<&str> = second.event_refs.iter().map(|r| r.as_str()).collect();
    assert_eq!(refs, ["a", "b", "c"]);
    assert_eq!(second.action_mode, ActionMode::Sequential);
    assert!(second.timeout.is_none());
    assert_eq!(next(second.transition.as_ref()), Some("Late"));

    // The action keeps its retry; its transition becomes the first handler, for that action.
    assert!(wait.retry.is_empty());
    assert_eq!(
        wait.actions().iter().map(|a| a.retry.len()).sum::<usize>(),
        1
    );
    assert_eq!(next(wait.on_error[0].transition.as_ref()), Some("Late"));
    assert!(wait.on_error[0].action.is_some());
}

#[test]
fn event_and_error_filters_write_only_to_definite_paths() {
    let text = EVENTS
        .replace("resultPath: $.received", "resultPath: \"$.received[*]\"")
        .replace(
            "    eventActions:",
            "    onError:\n      - condition: \"name eq 'E'\"\n        filter: {resultPath: \"$..error\"}\n        transition: Late\n    eventActions:",
        );
    let diags = check(&text);
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags.iter().all(|d| d.code == Code::INDEFINITE_TARGET));
    assert_eq!(diags[0].span, Span::new(15, 30));
    assert!(diags[0].message.contains("`$..error`"), "{diags:#?}");
    assert_eq!(diags[1].span, Span::new(24, 52));
    assert!(diags[1].message.contains("`$.received[*]`"), "{diags:#?}");
}

#[test]
fn an_event_state_that_leaves_through_its_entries_validates() {
    assert_eq!(check(EVENTS), []);
}

#[test]
fn an_event_state_that_ends_cannot_also_transition_from_its_entries() {
    let diags = check(&EVENTS.replace("    filter: {resultPath: $.called}\n", "    end: true\n"));
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags.iter().all(|d| d.code == Code::TRANSITION_AND_END));
    assert_eq!(diags[0].span, Span::new(21, 21));
    assert!(
        diags[0]
            .message
            .contains("EVENT state `Wait` ends (`end: true` at line 25)"),
        "{}",
        diags[0].message
    );
    assert!(
        help(&diags[0]).contains("continue to `Done`"),
        "{}",
        help(&diags[0])
    );
}

#[test]
fn a_single_trigger_is_a_condition() {
    let wf = parse_ok(&EVENTS.replace("(a or b) and c", "c"));
    let TaskKind::Event { events_actions, .. } = &task(&wf, "Wait").kind else {
        panic!("event")
    };
    assert!(matches!(&events_actions[0].condition, Some(EventExpr::Event(n)) if n.value == "c"));
}

#[test]
fn an_event_condition_with_a_comparison_is_refused_at_its_body() {
    let (wf, diags) = parse(&EVENTS.replace("(a or b) and c", "a and $.bid > 100"));
    let d = only(diags.items(), Code::BAD_EVENT_CONDITION);
    assert_eq!(d.span, Span::new(14, 27));
    assert!(
        d.message
            .contains("it has a comparison, which cannot be waited for"),
        "{}",
        d.message
    );
    assert!(
        help(&d).contains("(event1 or event2) and event3"),
        "{}",
        help(&d)
    );
    // The names it does mention are still checked against the triggers.
    let wf = wf.unwrap();
    let TaskKind::Event { events_actions, .. } = &task(&wf, "Wait").kind else {
        panic!("event")
    };
    assert_eq!(events_actions[0].condition, None);
    assert_eq!(events_actions[0].event_refs[0].value, "a");
}

#[test]
fn not_and_paths_are_not_event_conditions() {
    for (body, what) in [
        ("not a", "`not`"),
        ("$.a", "a JSONPath"),
        ("a or 'b'", "a literal"),
    ] {
        let (_, diags) = parse(&EVENTS.replace("(a or b) and c", body));
        let d = only(diags.items(), Code::BAD_EVENT_CONDITION);
        assert!(d.message.contains(what), "{body}: {}", d.message);
    }
}

#[test]
fn an_event_condition_in_another_language_is_refused_at_the_language() {
    let (_, diags) = parse(&EVENTS.replace(
        "{body: (a or b) and c}",
        "{expressionLanguage: jsonpath, body: $.a}",
    ));
    let d = only(diags.items(), Code::BAD_EVENT_CONDITION);
    assert_eq!(d.span, Span::new(14, 41));
}

#[test]
fn an_event_condition_that_does_not_parse_is_one_error() {
    let (_, diags) = parse(&EVENTS.replace("(a or b) and c", "(a or"));
    let d = only(diags.items(), Code::BAD_EXPRESSION);
    assert_eq!(d.span, Span::new(14, 27));
}

#[test]
fn an_event_filter_has_no_output_path() {
    let (_, diags) = parse(&EVENTS.replace("resultPath: $.received", "outputPath: $.received"));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(20, 40));
    assert!(help(&d).contains("inputPath"), "{}", help(&d));
}

#[test]
fn an_event_state_has_no_transition_of_its_own() {
    let (_, diags) = parse(&EVENTS.replace(
        "    filter: {resultPath: $.called}\n",
        "    transition: Done\n",
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(25, 5));
    assert!(help(&d).contains("eventActions"), "{}", help(&d));
}

// ---------------------------------------------------------------------------------------------
// SWITCH states
// ---------------------------------------------------------------------------------------------

const SWITCH: &str = r#"  - name: A
    type: SWITCH
    choices:
      - {path: $.age, value: "18", operator: greaterthanequals, transition: {nextState: B}}
      - and:
          - {path: $.age, value: "65", operator: LessThan}
          - {path: $.member, operator: Exists}
        transition: B
      - or:
          - {path: $.a, value: x, operator: Equals}
          - {path: $.b, value: "2", operator: LESSTHANEQUALS}
        transition: B
      - not: {path: $.c, value: "1", operator: GreaterThan}
        transition: B
    default: {nextState: B}
  - {name: B, type: RELAY, end: true}
"#;

fn compare(test: &DataTest) -> (&str, Option<&str>, Operator) {
    let DataTest::Compare(c) = test else {
        panic!("a comparison: {test:?}")
    };
    (
        c.path.as_ref().map_or("", |p| p.text.as_str()),
        c.value.as_ref().map(|v| v.as_str()),
        c.operator.value,
    )
}

#[test]
fn choices_single_and_or_not_lower_to_data_tests() {
    let wf = parse_ok(&workflow(SWITCH));
    let a = task(&wf, "A");
    let TaskKind::Switch(switch) = &a.kind else {
        panic!("switch")
    };
    assert_eq!(next(switch.default.as_ref()), Some("B"));
    assert!(switch.event_timeout.is_none());
    let SwitchConditions::Data(choices) = &switch.conditions else {
        panic!("data conditions")
    };
    let [single, and, or, not] = &choices[..] else {
        panic!("four choices")
    };
    assert_eq!(
        compare(&single.test),
        ("$.age", Some("18"), Operator::GreaterThanOrEquals)
    );
    let comparison = single.comparison().unwrap();
    assert_eq!(comparison.operator.span, Span::new(10, 46));
    assert_eq!(single.span, Span::new(10, 9));
    assert_eq!(next(single.transition.as_ref()), Some("B"));

    let DataTest::All(items) = &and.test else {
        panic!("and")
    };
    assert_eq!(
        compare(&items[0]),
        ("$.age", Some("65"), Operator::LessThan)
    );
    assert_eq!(compare(&items[1]), ("$.member", None, Operator::Exists));
    assert_eq!(and.span, Span::new(11, 9));
    assert_eq!(next(and.transition.as_ref()), Some("B"));

    let DataTest::Any(items) = &or.test else {
        panic!("or")
    };
    assert_eq!(compare(&items[0]), ("$.a", Some("x"), Operator::Equals));
    assert_eq!(
        compare(&items[1]),
        ("$.b", Some("2"), Operator::LessThanOrEquals)
    );

    let DataTest::Not(inner) = &not.test else {
        panic!("not")
    };
    assert_eq!(compare(inner), ("$.c", Some("1"), Operator::GreaterThan));
}

#[test]
fn a_default_may_be_a_state_name() {
    let wf = parse_ok(&workflow(
        &SWITCH.replace("default: {nextState: B}", "default: B"),
    ));
    let TaskKind::Switch(switch) = &task(&wf, "A").kind else {
        panic!("switch")
    };
    assert_eq!(
        switch.default.as_ref().unwrap().next.span,
        Span::new(21, 14)
    );
}

#[test]
fn an_unknown_operator_is_one_error_with_a_suggestion() {
    let diags = check(&workflow(
        &SWITCH.replace("operator: LessThan}", "operator: LessThen}"),
    ));
    let d = only(&diags, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(12, 50));
    assert!(
        d.message
            .contains("`LessThen` is not a valid choice operator"),
        "{}",
        d.message
    );
    assert!(
        help(&d).starts_with("did you mean `LessThan`?"),
        "{}",
        help(&d)
    );
}

#[test]
fn a_lone_unknown_operator_leaves_no_empty_switch_behind() {
    let diags = check(&workflow(
        "  - name: A\n    type: SWITCH\n    choices: [{path: $.a, value: '1', operator: Bigger, transition: B}]\n    default: B\n  - {name: B, type: RELAY, end: true}\n",
    ));
    only(&diags, Code::UNKNOWN_VALUE);
}

#[test]
fn comparison_fields_on_an_and_choice_belong_inside_its_list() {
    let (_, diags) = parse(&workflow(
        &SWITCH.replace("      - and:\n", "      - path: $.age\n        and:\n"),
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(11, 9));
    assert!(
        d.message
            .contains("`path` does not belong on an `and` choice"),
        "{}",
        d.message
    );
    assert!(
        help(&d).contains("inside each item of the list"),
        "{}",
        help(&d)
    );
}

#[test]
fn a_choice_is_one_of_and_or_not() {
    let (_, diags) = parse(&workflow(&SWITCH.replace(
        "        transition: B\n      - not:",
        "        not: {path: $.c, operator: Exists}\n        transition: B\n      - not:",
    )));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(18, 9));
    assert!(
        d.message.contains("already an `or` choice"),
        "{}",
        d.message
    );
}

#[test]
fn a_switch_state_has_no_transition_of_its_own() {
    let (_, diags) = parse(&workflow(
        &SWITCH.replace("    default:", "    transition: B\n    default:"),
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(21, 5));
}

// ---------------------------------------------------------------------------------------------
// DELAY, PARALLEL, SUBFLOW, RELAY
// ---------------------------------------------------------------------------------------------

#[test]
fn a_delay_state_waits_its_time_delay() {
    let wf = parse_ok(&workflow(
        "  - {name: A, type: DELAY, timeDelay: P2DT3H4M, end: true}\n",
    ));
    let TaskKind::Delay { time_delay } = &task(&wf, "A").kind else {
        panic!("delay")
    };
    let delay = time_delay.as_ref().unwrap();
    assert_eq!(delay.millis, ((2 * 24 + 3) * 60 + 4) * 60 * 1000);
    assert_eq!(delay.span, Span::new(7, 39));
}

const PARALLEL: &str = r#"  - name: A
    type: PARALLEL
    branches:
      - name: left
        startsAt: L2
        waitForCompletion: true
        states:
          - {name: L1, type: RELAY, end: true}
          - {name: L2, type: RELAY, transition: L1}
      - name: right
        startsAt: R
        waitForCompletion: false
        states:
          - {name: R, type: SUBFLOW, workflowId: child, waitForCompletion: true, end: true}
    end: true
"#;

#[test]
fn a_parallel_state_runs_branches_with_their_own_start() {
    let text = workflow(PARALLEL).replace(
        "states:\n  - name: A",
        "onError: [{condition: \"name eq 'X'\", transition: A}]\nstates:\n  - name: A",
    );
    let wf = parse_ok(&text);
    let a = task(&wf, "A");
    let TaskKind::Parallel {
        branches,
        completion,
        output,
        n,
        state_timeout,
        branch_timeout,
    } = &a.kind
    else {
        panic!("parallel")
    };
    assert_eq!(*completion, Completion::AllOf);
    assert_eq!(*output, ParallelOutput::Merge);
    assert!(n.is_none() && state_timeout.is_none() && branch_timeout.is_none());
    let [left, right] = &branches[..] else {
        panic!("two branches")
    };
    assert_eq!(left.name.value, "left");
    assert_eq!(left.span, Span::new(11, 9));
    assert!(left.wait_for_completion);
    assert!(!right.wait_for_completion);
    let [l1, l2] = &left.scope.tasks[..] else {
        panic!("two states")
    };
    assert!(l1.start.is_none());
    assert_eq!(l2.start.as_ref().unwrap().span, Span::new(12, 19));
    // The workflow's handlers apply to its own states, not to those of branches.
    assert_eq!(a.on_error.len(), 1);
    assert!(l1.on_error.is_empty() && l2.on_error.is_empty());
    assert_eq!(
        right.scope.tasks[0].kind,
        TaskKind::SubFlow {
            workflow_id: Some(crate::source::Spanned::new(
                "child".to_owned(),
                Span::new(21, 50)
            )),
            wait_for_completion: true,
        }
    );
}

#[test]
fn a_branch_must_say_whether_it_is_waited_for() {
    let (_, diags) = parse(&workflow(
        &PARALLEL.replace("        waitForCompletion: false\n", ""),
    ));
    let d = only(diags.items(), Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(16, 9));
    assert!(d.message.contains("`waitForCompletion`"), "{}", d.message);
}

#[test]
fn a_branch_s_starts_at_must_name_one_of_its_states() {
    let text = workflow(&PARALLEL.replace("startsAt: L2", "startsAt: L3")).replace(
        "type: SUBFLOW, workflowId: child, waitForCompletion: true",
        "type: RELAY",
    );
    let d = only(&check(&text), Code::UNKNOWN_TARGET);
    assert_eq!(d.span, Span::new(11, 19));
    assert!(
        d.message.contains("this branch has no state"),
        "{}",
        d.message
    );
}

#[test]
fn a_subflow_does_not_wait_unless_told() {
    let wf = parse_ok(&workflow(
        "  - {name: A, type: SUBFLOW, workflowId: child, end: true}\n",
    ));
    assert!(matches!(
        &task(&wf, "A").kind,
        TaskKind::SubFlow { wait_for_completion: false, workflow_id: Some(id) } if id.value == "child"
    ));
}

#[test]
fn a_relay_state_injects_its_data() {
    let wf = parse_ok(&workflow(
        "  - name: A\n    type: RELAY\n    inject: {person: {age: 40}}\n    transition: B\n  - {name: B, type: RELAY, end: true}\n",
    ));
    assert_eq!(
        task(&wf, "A").kind,
        TaskKind::Inject {
            data: json!({"person": {"age": 40}})
        }
    );
    assert_eq!(task(&wf, "B").kind, TaskKind::Inject { data: json!({}) });
}

#[test]
fn a_relay_state_with_actions_is_refused_at_the_key() {
    let (_, diags) = parse(&workflow(
        "  - name: A\n    type: RELAY\n    actions: [{functionref: {refname: f}}]\n    end: true\n",
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(9, 5));
    assert_eq!(d.message, "a RELAY state performs no actions");
    assert!(help(&d).contains("OPERATION"), "{}", help(&d));
}

#[test]
fn relay_data_must_be_a_mapping() {
    let (_, diags) = parse(&workflow(
        "  - {name: A, type: RELAY, inject: [1], end: true}\n",
    ));
    let d = only(diags.items(), Code::WRONG_TYPE);
    assert_eq!(d.span, Span::new(7, 36));
}

#[test]
fn a_result_path_on_a_state_without_actions_is_refused() {
    let (_, diags) = parse(&workflow(
        "  - {name: A, type: DELAY, timeDelay: PT1S, filter: {resultPath: $.x}, end: true}\n",
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(7, 54));
    assert!(
        d.message.contains("a DELAY state performs no actions"),
        "{}",
        d.message
    );
}

#[test]
fn compensation_keys_are_not_v01() {
    let (_, diags) = parse(&workflow(
        "  - {name: A, type: RELAY, end: true, usedForCompensation: true}\n",
    ));
    only(diags.items(), Code::UNKNOWN_KEY);
}

// ---------------------------------------------------------------------------------------------
// Loops
// ---------------------------------------------------------------------------------------------

const LOOP: &str = r#"  - name: A
    id: a-id
    type: OPERATION
    actions:
      - functionref: {refname: f}
        retry: [{condition: "name eq 'E'", max: 2, transition: Failed}]
    filter: {inputPath: $.shop, outputPath: $.sent}
    loop:
      inputCollection: $.orders[?(@.completed == true)]
      outputCollection: $.sent
      completionCondition: $.last == true
      timeDelay: PT1S
    onError: [{condition: "name eq 'X'", transition: Failed}]
    transition: Done
  - {name: Done, type: RELAY, end: true}
  - {name: Failed, type: RELAY, end: true}
"#;

#[test]
fn a_looping_state_is_a_foreach_around_a_copy_of_itself() {
    let text = workflow(LOOP).replace(
        "states:",
        "onError: [{condition: \"name eq 'W'\", transition: Failed}]\nstates:",
    );
    let wf = parse_ok(&text);
    let a = task(&wf, "A");
    assert_eq!(a.id.as_ref().unwrap().value, "a-id");
    assert_eq!(a.span, Span::new(8, 5));
    assert_eq!(a.start.as_ref().unwrap().span, Span::new(3, 11));
    assert_eq!(a.data_filter.input.as_ref().unwrap().text, "$.shop");
    assert_eq!(a.data_filter.output.as_ref().unwrap().text, "$.sent");
    assert_eq!(next(a.transition.as_ref()), Some("Done"));
    assert!(a.end.is_none());
    // The retry's handler, the state's, then the workflow's.
    let targets: Vec<&str> = a
        .on_error
        .iter()
        .map(|h| h.condition.as_ref().unwrap().body.as_str())
        .collect();
    assert_eq!(targets, ["name eq 'E'", "name eq 'X'", "name eq 'W'"]);
    assert!(a.retry.is_empty());

    let TaskKind::ForEach {
        input_collection,
        input_parameter,
        element_as_input,
        output_collection,
        max,
        time_delay,
        completion_condition,
        scope,
    } = &a.kind
    else {
        panic!("foreach: {:?}", a.kind)
    };
    let collection = input_collection.as_ref().unwrap();
    assert_eq!(collection.text, "$.orders[?(@.completed == true)]");
    assert_eq!(collection.span, Span::new(16, 24));
    assert!(matches!(collection.kind, PathKind::Query(_)));
    assert!(input_parameter.is_none());
    assert!(*element_as_input);
    assert_eq!(output_collection.as_ref().unwrap().text, "$.sent");
    assert!(max.is_none());
    assert_eq!(time_delay.as_ref().unwrap().millis, 1000);
    let condition = completion_condition.as_ref().unwrap();
    assert_eq!(condition.span, Span::new(18, 28));
    assert!(matches!(condition.ast, Expr::Compare { .. }));

    // The body: the same state, once per element, ending there.
    let [body] = &scope.tasks[..] else {
        panic!("one state in the body")
    };
    assert_eq!(body.name, a.name);
    assert_eq!(body.span, a.span);
    assert_eq!(body.start.as_ref().unwrap().span, Span::new(8, 5));
    assert_eq!(body.end.as_ref().unwrap().kind, EndKind::Default);
    assert_eq!(body.data_filter, TaskDataFilter::default());
    assert!(body.transition.is_none() && body.on_error.is_empty());
    // The body's action retries itself; out of the loop, its handler takes any failure.
    assert!(
        matches!(body.kind, TaskKind::Operation { ref actions, .. } if actions[0].retry.len() == 1)
    );
    assert!(a.on_error.iter().all(|h| h.action.is_none()));
    assert!(matches!(body.kind, TaskKind::Operation { ref actions, .. } if actions.len() == 1));
}

#[test]
fn a_looping_end_state_ends_from_the_loop() {
    let wf = parse_ok(&workflow(
        "  - {name: A, type: RELAY, end: true, loop: {inputCollection: $.items}}\n",
    ));
    let a = task(&wf, "A");
    assert!(a.end.is_some());
    assert!(
        matches!(a.kind, TaskKind::ForEach { ref completion_condition, .. } if completion_condition.is_none())
    );
    assert!(
        check(&workflow(
            "  - {name: A, type: RELAY, end: true, loop: {inputCollection: $.items}}\n"
        ))
        .is_empty()
    );
}

#[test]
fn a_loop_needs_an_input_collection() {
    let (_, diags) = parse(&workflow(
        "  - {name: A, type: RELAY, end: true, loop: {timeDelay: PT1S}}\n",
    ));
    let d = only(diags.items(), Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(7, 45));
}

#[test]
fn switch_and_event_states_cannot_loop() {
    let (_, diags) = parse(&workflow(&SWITCH.replace(
        "    default:",
        "    loop: {inputCollection: $.a}\n    default:",
    )));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(21, 5));
    assert!(
        d.message.contains("a SWITCH state cannot have a `loop`"),
        "{}",
        d.message
    );

    let (_, diags) = parse(&EVENTS.replace(
        "    filter: {resultPath: $.called}\n",
        "    loop: {inputCollection: $.a}\n",
    ));
    let d = only(diags.items(), Code::NOT_ALLOWED_HERE);
    assert!(
        d.message.contains("an EVENT state cannot have a `loop`"),
        "{}",
        d.message
    );
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

#[test]
fn a_kebab_case_key_in_a_v01_file_is_an_error_at_that_key() {
    let (workflow, diags) = parse(&workflow(
        "  - name: A\n    type: RELAY\n    next-state: B\n  - {name: B, type: RELAY, end: true}\n",
    ));
    assert!(workflow.is_none());
    let d = only(diags.items(), Code::MIXED_DIALECT);
    assert_eq!(d.span, Span::new(9, 5));
}

#[test]
fn an_empty_and_or_or_list_is_a_mistake_not_a_constant() {
    for word in ["and", "or"] {
        let diags = check(&workflow(&format!(
            "  - name: A\n    type: SWITCH\n    choices: [{{{word}: [], transition: B}}]\n    default: B\n  - {{name: B, type: RELAY, end: true}}\n"
        )));
        let d = only(&diags, Code::INVALID_VALUE);
        assert!(
            d.message.contains(&format!("`{word}` holds no comparison")),
            "{}",
            d.message
        );
    }
}

#[test]
fn an_entry_without_a_transition_is_reported_at_the_entry_in_v01_words() {
    let text = EVENTS.replace("        transition: Late\n", "");
    let diags = check(&text);
    let d = only(&diags, Code::NO_TRANSITION_OR_END);
    assert_eq!(d.span, Span::new(22, 9));
    assert_eq!(
        d.message,
        "an entry of event state `Wait` has no transition"
    );
    assert!(
        help(&d).starts_with("add `transition: {nextState: ...}` to this entry"),
        "{}",
        help(&d)
    );
}

#[test]
fn trigger_names_with_dashes_can_be_waited_for() {
    let text = EVENTS
        .replace("{name: a, source", "{name: order-placed, source")
        .replace("(a or b) and c", "(order-placed or b) and c");
    let wf = parse_ok(&text);
    let TaskKind::Event { events_actions, .. } = &task(&wf, "Wait").kind else {
        panic!("event")
    };
    let names: Vec<&str> = events_actions[0]
        .event_refs
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(names, ["order-placed", "b", "c"]);
}

#[test]
fn the_likely_start_of_a_huge_scope_is_found_in_linear_time() {
    // Only the last of 200,000 states is no state's target. A look-up in a list of targets per
    // state would compare 2·10^10 names.
    const STATES: u32 = 200_000;
    let tasks = crate::validate::test_support::chain_back(STATES);
    assert_eq!(super::likely_start(&tasks), STATES as usize - 1);
}
