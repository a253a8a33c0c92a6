//! The kebab-case front end: every construct of both drafts with its positions, and every
//! mistake with its code, position and help.

use crate::diagnostic::{Code, Diagnostic, Diagnostics, Severity};
use crate::ir::{
    ActionMode, Completion, DataTest, Dialect, EndKind, EndStatus, EventActions, EventExpr,
    ParallelOutput, Param, PathKind, SwitchConditions, Task, TaskKind, Workflow,
};
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

/// The only diagnostic with `code`.
fn only(diags: &Diagnostics, code: Code) -> Diagnostic {
    let found: Vec<&Diagnostic> = diags.items().iter().filter(|d| d.code == code).collect();
    assert_eq!(found.len(), 1, "{:#?}", diags.items());
    found[0].clone()
}

/// The single diagnostic of a file with one mistake, parsed and validated: validation adds
/// nothing to what the front end reports.
fn single(text: &str) -> Diagnostic {
    let (_, diags) = crate::pipeline::check(&SourceFile::new("wf.yaml", text));
    assert_eq!(diags.items().len(), 1, "{:#?}", diags.items());
    diags.items()[0].clone()
}

fn help(d: &Diagnostic) -> &str {
    d.help.as_deref().unwrap_or("")
}

fn task<'a>(wf: &'a Workflow, name: &str) -> &'a Task {
    wf.scope
        .tasks
        .iter()
        .find(|t| t.name.value == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

fn next(task: &Task) -> Option<&str> {
    task.transition.as_ref().map(|t| t.next.value.as_str())
}

fn entries(task: &Task) -> &[EventActions] {
    match &task.kind {
        TaskKind::Event {
            exclusive,
            events_actions,
            timeout,
        } => {
            assert!(*exclusive);
            assert_eq!(*timeout, None);
            events_actions
        }
        other => panic!("not an event state: {other:?}"),
    }
}

fn ev(name: &str) -> EventExpr {
    EventExpr::Event(crate::source::Spanned::new(
        name.to_owned(),
        Span::default(),
    ))
}

/// The condition with every position erased, to compare shapes.
fn shape(expr: &EventExpr) -> EventExpr {
    match expr {
        EventExpr::Event(name) => ev(&name.value),
        EventExpr::All(items) => EventExpr::All(items.iter().map(shape).collect()),
        EventExpr::Any(items) => EventExpr::Any(items.iter().map(shape).collect()),
    }
}

// ---------------------------------------------------------------------------------------------
// Top level

const SECOND: &str = "id: second-sample
name: Second sample
description: Every top-level key
version: '1.0'
schema-version: '0.2'
starts-at: Wait
exec-status: Success
trigger-defs:
  - name: Bid
    source: auction
    type: bid.placed
    correlation-token: auctionid
  - {name: Closed, source: auction, type: auction.closed}
states:
  - name: Pause
    type: DELAY
    time-delay: PT1M
    end: true
  - name: Wait
    type: delay
    time-delay: PT2S
    next-state: Pause
";

#[test]
fn second_draft_top_level() {
    let wf = parse_ok(SECOND);
    assert_eq!(wf.dialect, Dialect::Second);
    assert_eq!(wf.id.value, "second-sample");
    assert_eq!(wf.id.span, Span::new(1, 5));
    assert_eq!(wf.name.value, "Second sample");
    assert_eq!(wf.description.as_deref(), Some("Every top-level key"));
    assert_eq!(wf.version.as_ref().map(|v| v.value.as_str()), Some("1.0"));
    let [bid, closed] = &wf.events[..] else {
        panic!("two trigger definitions")
    };
    assert_eq!(bid.name.value, "Bid");
    assert_eq!(bid.name.span, Span::new(9, 11));
    assert_eq!(bid.source.as_ref().map(|s| s.as_str()), Some("auction"));
    assert_eq!(
        bid.event_type.as_ref().map(|s| s.as_str()),
        Some("bid.placed")
    );
    let token = bid.correlation_token.as_ref().expect("correlation token");
    assert_eq!(
        (token.as_str(), token.span),
        ("auctionid", Span::new(12, 24))
    );
    assert_eq!(closed.correlation_token, None);
    assert_eq!(closed.span, Span::new(13, 5));
    // `starts-at` marks the state it names, at the value's position.
    let wait = task(&wf, "Wait");
    assert_eq!(wait.start.as_ref().map(|s| s.span), Some(Span::new(6, 12)));
    assert_eq!(task(&wf, "Pause").start, None);
    assert_eq!(wf.scope.tasks[0].span, Span::new(15, 5));
}

const FIRST: &str = "name: first-sample
exec-status: SYS.Success
trigger-defs:
  - {name: Bid, source: auction, type: bid.placed, correlation-token: auctionid}
states:
  - name: Wait
    type: DELAY
    start: true
    time-delay: 2
    next-state: Done
  - name: Done
    type: END
    start: false
    status: SUCCESS
";

#[test]
fn first_draft_top_level() {
    let wf = parse_ok(FIRST);
    assert_eq!(wf.dialect, Dialect::First);
    // No id in the first draft: the name identifies the workflow, at its own position.
    assert_eq!(wf.id.value, "first-sample");
    assert_eq!(wf.id.span, Span::new(1, 7));
    assert_eq!(wf.name, wf.id);
    assert_eq!(wf.version, None);
    assert_eq!(wf.events[0].name.value, "Bid");
    assert_eq!(
        wf.events[0].correlation_token.as_ref().map(|t| t.as_str()),
        Some("auctionid")
    );
    let wait = task(&wf, "Wait");
    assert_eq!(wait.start.as_ref().map(|s| s.span), Some(Span::new(8, 12)));
    assert_eq!(task(&wf, "Done").start, None);
}

#[test]
fn exec_status_is_checked_against_each_drafts_values() {
    let d = single(&SECOND.replace("exec-status: Success", "exec-status: Succes"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(7, 14));
    assert!(help(&d).contains("did you mean `Success`"), "{}", help(&d));
    // The first draft's values are prefixed with `SYS.`; any case is accepted.
    parse_ok(&FIRST.replace("SYS.Success", "sys.fail"));
    let d = single(&FIRST.replace("SYS.Success", "Success"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(2, 14));
    assert!(help(&d).contains("SYS.Success"), "{}", help(&d));
}

#[test]
fn starts_at_naming_no_state_is_an_error_at_the_value() {
    let (wf, diags) = parse(&SECOND.replace("starts-at: Wait", "starts-at: Wiat"));
    let d = only(&diags, Code::UNKNOWN_TARGET);
    assert_eq!(d.span, Span::new(6, 12));
    assert!(d.message.contains("`Wiat`"), "{}", d.message);
    assert_eq!(help(&d), "did you mean `Wait`?");
    assert_eq!(diags.items().len(), 1, "{:#?}", diags.items());
    // The likely meaning is taken, so nothing else is reported because of the typo.
    assert!(task(&wf.expect("workflow"), "Wait").start.is_some());

    let (_, diags) = parse(&SECOND.replace("starts-at: Wait", "starts-at: Elsewhere"));
    let d = only(&diags, Code::UNKNOWN_TARGET);
    assert!(help(&d).contains("`Pause` and `Wait`"), "{}", help(&d));
}

#[test]
fn the_second_draft_requires_id_and_starts_at() {
    let (_, diags) = parse(
        &SECOND
            .replace("id: second-sample\n", "")
            .replace("starts-at: Wait\n", ""),
    );
    let missing: Vec<&Diagnostic> = diags
        .items()
        .iter()
        .filter(|d| d.code == Code::MISSING_FIELD)
        .collect();
    assert_eq!(missing.len(), 2, "{:#?}", diags.items());
    assert!(missing[0].message.contains("`id`"));
    assert!(missing[1].message.contains("`starts-at`"));
    assert_eq!(missing[1].span, Span::new(1, 1));
}

#[test]
fn each_draft_refuses_the_other_drafts_start_and_end() {
    // `start: true` in the second draft.
    let text = SECOND.replace(
        "    time-delay: PT2S\n",
        "    time-delay: PT2S\n    start: true\n",
    );
    let d = single(&text);
    assert_eq!(d.code, Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(22, 5));
    assert!(help(&d).contains("`starts-at`"), "{}", help(&d));
    // `end: true` in the first draft.
    let text = FIRST.replace("    time-delay: 2\n", "    time-delay: 2\n    end: true\n");
    let d = single(&text);
    assert_eq!(d.code, Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(10, 5));
    assert!(help(&d).contains("END"), "{}", help(&d));
    // END states in the second draft.
    let text = SECOND.replace("type: DELAY\n    time-delay: PT1M\n", "type: END\n");
    let d = single(&text);
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(16, 11));
    assert!(help(&d).contains("`end: true`"), "{}", help(&d));
}

#[test]
fn camel_case_keys_in_a_kebab_case_file() {
    // A key that tells another dialect: reported by dialect detection.
    let (wf, diags) = parse(&SECOND.replace("starts-at: Wait", "startsAt: Wait"));
    assert!(wf.is_none());
    let d = only(&diags, Code::MIXED_DIALECT);
    assert_eq!(d.span, Span::new(6, 1));
    assert!(help(&d).contains("`starts-at`"), "{}", help(&d));
    // `nextState` belongs to two camelCase dialects, so it tells none: it is an unknown key
    // with its kebab-case spelling suggested, and the state does not also lack a `next-state`.
    let d = single(&FIRST.replace("next-state: Done", "nextState: Done"));
    assert_eq!(d.code, Code::UNKNOWN_KEY);
    assert_eq!(d.span, Span::new(10, 5));
    assert!(
        d.message.contains("did you mean `next-state`"),
        "{}",
        d.message
    );
}

#[test]
fn an_unknown_state_type_is_reported_once() {
    let d = single(&FIRST.replace("type: DELAY", "type: SLEEP"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(7, 11));
    assert!(help(&d).contains("DELAY"), "{}", help(&d));
}

// ---------------------------------------------------------------------------------------------
// EVENT states and event expressions

const EVENTS: &str = "id: auction
name: Auction
starts-at: Bidding
trigger-defs:
  - {name: Bid, source: s, type: bid, correlation-token: auctionid}
  - {name: Offer, source: s, type: offer}
  - {name: close-auction, source: s, type: close}
states:
  - name: Bidding
    type: EVENT
    events:
      - event-expression: (Bid or Offer) and close-auction
        timeout: PT10M
        action-mode: Parallel
        actions:
          - function: {name: record, type: rest}
          - function: {name: notify, type: rest}
        next-state: Done
      - event-expression: Bid and Bid or Offer or Bid
        timeout: 30
        actions: []
        next-state: Done
  - name: Done
    type: DELAY
    time-delay: PT0S
    end: true
";

#[test]
fn event_states_wait_for_their_expressions() {
    let wf = parse_ok(EVENTS);
    let bidding = task(&wf, "Bidding");
    assert_eq!(bidding.transition, None);
    assert_eq!(bidding.end, None);
    let [first, second] = entries(bidding) else {
        panic!("two entries")
    };
    // Trigger names that are not identifiers (`close-auction`) are names too.
    assert_eq!(
        first.condition.as_ref().map(shape),
        Some(EventExpr::All(vec![
            EventExpr::Any(vec![ev("Bid"), ev("Offer")]),
            ev("close-auction")
        ]))
    );
    let refs: Vec<&str> = first.event_refs.iter().map(|r| r.as_str()).collect();
    assert_eq!(refs, ["Bid", "Offer", "close-auction"]);
    assert_eq!(first.event_refs[2].span, Span::new(12, 27));
    assert_eq!(first.action_mode, ActionMode::Parallel);
    assert_eq!(first.actions.len(), 2);
    assert_eq!(first.actions[1].span, Span::new(17, 13));
    let timeout = first.timeout.as_ref().expect("timeout");
    assert_eq!((timeout.millis, timeout.span), (600_000, Span::new(13, 18)));
    let to = first.transition.as_ref().expect("next-state");
    assert_eq!((to.next.as_str(), to.span), ("Done", Span::new(18, 21)));
    assert_eq!(first.span, Span::new(12, 9));
    // Operators flatten, and each name is waited for once.
    assert_eq!(
        second.condition.as_ref().map(shape),
        Some(EventExpr::Any(vec![
            EventExpr::All(vec![ev("Bid"), ev("Bid")]),
            ev("Offer"),
            ev("Bid")
        ]))
    );
    let refs: Vec<&str> = second.event_refs.iter().map(|r| r.as_str()).collect();
    assert_eq!(refs, ["Bid", "Offer"]);
    // Integer seconds are accepted in the second draft too.
    assert_eq!(second.timeout.as_ref().map(|t| t.millis), Some(30_000));
    assert_eq!(second.action_mode, ActionMode::Sequential);
    // Functions are declared inline.
    let functions: Vec<&str> = wf.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(functions, ["record", "notify"]);
}

#[test]
fn an_event_expression_that_cannot_be_waited_for_is_refused() {
    for (expression, found) in [
        ("not Bid", "`not`"),
        ("Bid and $.price > 3", "a comparison"),
        ("Bid or $.open", "a JSONPath"),
        ("Bid and true", "a literal value"),
    ] {
        let text = EVENTS.replace("Bid and Bid or Offer or Bid", &format!("\"{expression}\""));
        let (_, diags) = parse(&text);
        let d = only(&diags, Code::BAD_EVENT_CONDITION);
        assert_eq!(d.span, Span::new(19, 27), "{expression}");
        assert!(d.message.contains(found), "{}", d.message);
        assert!(
            help(&d).contains("`and`, `or` and parentheses"),
            "{}",
            help(&d)
        );
        assert_eq!(diags.items().len(), 1, "{:#?}", diags.items());
    }
    // A syntax error is the expression parser's, and the entry still waits for what it names.
    let (wf, diags) = parse(&EVENTS.replace("Bid and Bid or Offer or Bid", "(Bid or Offer"));
    let d = only(&diags, Code::BAD_EXPRESSION);
    assert_eq!(d.span, Span::new(19, 27));
    assert_eq!(diags.items().len(), 1);
    let refs: Vec<String> = entries(task(&wf.expect("workflow"), "Bidding"))[1]
        .event_refs
        .iter()
        .map(|r| r.value.clone())
        .collect();
    assert_eq!(refs, ["Bid", "Offer"]);
}

#[test]
fn event_entries_require_their_fields() {
    let text = EVENTS.replace(
        "      - event-expression: Bid and Bid or Offer or Bid\n        timeout: 30\n        actions: []\n        next-state: Done\n",
        "      - timeout: 30\n",
    );
    let (_, diags) = parse(&text);
    let missing: Vec<&Diagnostic> = diags.items().iter().collect();
    assert_eq!(missing.len(), 3, "{missing:#?}");
    assert!(missing.iter().all(|d| d.code == Code::MISSING_FIELD));
    assert!(missing.iter().all(|d| d.span == Span::new(19, 9)));
    let messages: Vec<&str> = missing.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("`next-state`")),
        "{messages:?}"
    );
    assert!(messages.iter().any(|m| m.contains("`event-expression`")));
    assert!(messages.iter().any(|m| m.contains("`actions`")));
}

#[test]
fn event_entry_filters() {
    let text = EVENTS.replace(
        "        timeout: 30\n",
        "        timeout: 30\n        filter: {input-path: $.bid, result-path: $.received, output-path: $}\n",
    );
    let wf = parse_ok(&text);
    let entry = &entries(task(&wf, "Bidding"))[1];
    let input = entry.event_data_filter.as_ref().expect("input path");
    assert_eq!(
        (input.text.as_str(), input.span),
        ("$.bid", Span::new(21, 30))
    );
    assert_eq!(
        entry.event_results_path.as_ref().map(|p| p.text.as_str()),
        Some("$.received")
    );
    // An event has no output of its own: only the default `$` is accepted.
    let d = single(&text.replace("output-path: $}", "OutputPath: $.x}"));
    assert_eq!(d.code, Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(21, 62));
    assert!(help(&d).contains("`input-path`"), "{}", help(&d));
}

// ---------------------------------------------------------------------------------------------
// OPERATION states, inline functions, timeouts, retries, filters

const OPERATIONS: &str = "name: operations
states:
  - name: Charge
    type: OPERATION
    start: true
    action-mode: SEQUENTIAL
    filter: {InputPath: $.order, result-path: $.results, output-path: $}
    actions:
      - function:
          name: charge
          type: rest
          parameters: {amount: $.total, currency: EUR}
        timeout: 30
        retry: {match: CardDeclined, retry-interval: 2, max-retry: 3, next-state: Declined}
      - function: {name: charge, type: REST}
        timeout: PT1M
        filter: {input-path: $.second, result-path: $.charged, output-path: $.receipt}
        retry: {match: \"it's down\", next-state: Declined}
    next-state: Done
  - name: Declined
    type: END
    status: FAILURE
  - name: Done
    type: END
    status: SUCCESS
";

#[test]
fn operation_states_declare_their_functions_inline() {
    let wf = parse_ok(OPERATIONS);
    // The first declaration of a name defines it; the same type in another case is the same.
    let [charge] = &wf.functions[..] else {
        panic!("one function: {:?}", wf.functions)
    };
    assert_eq!(charge.name.value, "charge");
    assert_eq!(charge.kind.as_deref(), Some("rest"));
    assert_eq!(charge.span, Span::new(10, 11));
    let task = task(&wf, "Charge");
    assert_eq!(next(task), Some("Done"));
    let TaskKind::Operation {
        action_mode,
        actions,
    } = &task.kind
    else {
        panic!("operation")
    };
    assert_eq!(*action_mode, ActionMode::Sequential);
    let [first, second] = &actions[..] else {
        panic!("two actions")
    };
    let function = first.function.as_ref().expect("function");
    assert_eq!(function.ref_name.as_str(), "charge");
    assert_eq!(function.ref_name.span, Span::new(10, 17));
    let Some(Param::Object(params)) = &function.parameters else {
        panic!("parameters: {:?}", function.parameters)
    };
    assert!(matches!(&params[0], (key, Param::Path(_)) if key == "amount"));
    assert!(
        matches!(&params[1], (key, Param::Literal(v)) if key == "currency" && *v == json!("EUR"))
    );
    let timeout = first.timeout.as_ref().expect("timeout");
    assert_eq!((timeout.millis, timeout.span), (30_000, Span::new(13, 18)));
    assert_eq!(second.timeout.as_ref().map(|t| t.millis), Some(60_000));
    // The state's filter: its data filter, and the result path of actions without their own.
    assert_eq!(
        task.data_filter.input.as_ref().map(|p| p.text.as_str()),
        Some("$.order")
    );
    assert_eq!(task.data_filter.output, None, "`$` is no filter");
    assert_eq!(
        first.results_path.as_ref().map(|p| p.text.as_str()),
        Some("$.results")
    );
    assert_eq!(first.input_path, None);
    assert_eq!(first.result_selection, None);
    // An action's filter: input, result path, and what of the result is kept.
    assert_eq!(
        second.input_path.as_ref().map(|p| p.text.as_str()),
        Some("$.second")
    );
    assert_eq!(
        second.results_path.as_ref().map(|p| p.text.as_str()),
        Some("$.charged")
    );
    let selection = second.result_selection.as_ref().expect("output path");
    assert_eq!(selection.text, "$.receipt");
    assert!(matches!(selection.kind, PathKind::Definite(_)));
}

#[test]
fn retries_move_to_the_state_with_a_handler_for_their_next_state() {
    let wf = parse_ok(OPERATIONS);
    let task = task(&wf, "Charge");
    // Each action keeps its own retry; the state retries nothing as a whole.
    assert!(task.retry.is_empty());
    let retries: Vec<&crate::ir::Retry> = task.actions().iter().flat_map(|a| &a.retry).collect();
    let [declined, down] = retries[..] else {
        panic!("two retries")
    };
    let condition = declined.condition.as_ref().expect("condition");
    assert_eq!(condition.body, "name eq 'CardDeclined'");
    assert_eq!(condition.span, Span::new(14, 24));
    // Integer seconds (the first draft): no repeat count.
    let interval = declined.interval.as_ref().expect("interval");
    assert_eq!((interval.millis, interval.repeat), (2_000, None));
    assert_eq!(declined.max_attempts, 3);
    assert_eq!(declined.span, Span::new(14, 16));
    // Quotes in `match` are escaped; `max-retry` defaults to 0.
    assert_eq!(
        down.condition.as_ref().map(|c| c.body.as_str()),
        Some("name eq 'it''s down'")
    );
    assert!(
        down.condition
            .as_ref()
            .is_some_and(|c| c.ast != crate::ir::Expr::Invalid)
    );
    assert_eq!(down.max_attempts, 0);
    assert_eq!(down.interval, None);
    // Each retry's handler: the same condition, taking the retry's `next-state`.
    let [first, second] = &task.on_error[..] else {
        panic!("two handlers")
    };
    assert_eq!(first.condition, declined.condition);
    assert_eq!(second.condition, down.condition);
    // Each handler takes only its own action's failures.
    assert_eq!((first.action, second.action), (Some(0), Some(1)));
    let to = first.transition.as_ref().expect("transition");
    assert_eq!((to.next.as_str(), to.span), ("Declined", Span::new(14, 83)));
    assert_eq!(first.span, declined.span);
}

#[test]
fn retry_intervals_in_iso_8601() {
    let text = OPERATIONS
        .replace(
            "retry-interval: 2, max-retry: 3",
            "retry-interval: R5/PT15M",
        )
        .replace(
            "retry: {match: \"it's down\"",
            "retry: {match: Down, retry-interval: R5/PT1M, max-retry: 2",
        );
    let wf = parse_ok(&text);
    let retries: Vec<&crate::ir::Retry> = task(&wf, "Charge")
        .actions()
        .iter()
        .flat_map(|a| &a.retry)
        .collect();
    let [declined, down] = retries[..] else {
        panic!("two retries")
    };
    let interval = declined.interval.as_ref().expect("interval");
    assert_eq!((interval.millis, interval.repeat), (900_000, Some(5)));
    // Without `max-retry`, `R5/` says how many times.
    assert_eq!(declined.max_attempts, 5);
    assert_eq!(down.max_attempts, 2);
    assert_eq!(down.effective_attempts(), 2);

    let d = single(&OPERATIONS.replace("retry-interval: 2", "retry-interval: R5/15M"));
    assert_eq!(d.code, Code::BAD_INTERVAL);
    assert_eq!(d.span, Span::new(14, 54));
    let d = single(&OPERATIONS.replace("retry-interval: 2", "retry-interval: -2"));
    assert_eq!(d.code, Code::WRONG_TYPE);
    assert!(help(&d).contains("R5/PT15M"), "{}", help(&d));
}

#[test]
fn a_function_declared_again_with_another_type_is_refused() {
    let text = OPERATIONS.replace("{name: charge, type: REST}", "{name: charge, type: grpc}");
    let d = single(&text);
    assert_eq!(d.code, Code::DUPLICATE_DEFINITION);
    assert_eq!(d.span, Span::new(15, 40));
    assert!(
        d.message.contains("`grpc`") && d.message.contains("(line 10) has type `rest`"),
        "{}",
        d.message
    );
    assert!(help(&d).contains("use type `rest` here"), "{}", help(&d));
}

#[test]
fn actions_and_functions_require_their_fields() {
    let d = single(&OPERATIONS.replace("{name: charge, type: REST}", "{name: charge}"));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(15, 19));
    assert!(d.message.contains("`type`"));
    let d = single(&OPERATIONS.replace(
        "          parameters: {amount: $.total, currency: EUR}",
        "          parameters: [1]",
    ));
    assert_eq!(d.code, Code::WRONG_TYPE);
    assert_eq!(d.span, Span::new(12, 23));
    let d = single(&OPERATIONS.replace("timeout: PT1M", "timeout: 1 minute"));
    assert_eq!(d.code, Code::BAD_DURATION);
    assert_eq!(d.span, Span::new(16, 18));
    assert!(help(&d).contains("PT1M"), "{}", help(&d));
    let d = single(&OPERATIONS.replace(
        ", next-state: Declined}\n      - function",
        "}\n      - function",
    ));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`next-state`"));
    assert_eq!(d.span, Span::new(14, 16));
}

#[test]
fn a_state_without_actions_has_no_result_path() {
    let text = FIRST.replace(
        "    time-delay: 2\n",
        "    time-delay: 2\n    filter: {input-path: $, result-path: $.x}\n",
    );
    let d = single(&text);
    assert_eq!(d.code, Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(10, 29));
    assert!(d.message.contains("DELAY"), "{}", d.message);
    // Its default, `$`, is fine anywhere.
    parse_ok(&text.replace("result-path: $.x", "ResultPath: $"));
}

#[test]
fn a_missing_next_state_says_how_each_draft_ends() {
    let d = single(&FIRST.replace("    next-state: Done\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(6, 5));
    assert!(help(&d).contains("END state"), "{}", help(&d));
    let d = single(&SECOND.replace("    next-state: Pause\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(19, 5));
    assert!(help(&d).contains("`end: true`"), "{}", help(&d));
}

// ---------------------------------------------------------------------------------------------
// SWITCH states

const SECOND_SWITCH: &str = "id: switch
name: Switch
starts-at: Route
states:
  - name: Route
    type: switch
    choices:
      - single: [{path: $.age, value: '18', operator: GTEQ}]
        next-state: Adult
      - and:
          - {path: $.name, value: Ann, operator: StrEQ}
          - {path: $.age, value: 3.5, operator: lt}
        next-state: Adult
      - or:
          - {path: $.a, value: x, operator: StrLT}
          - {path: $.a, value: y, operator: StrLTEQ}
          - {path: $.a, value: z, operator: StrGT}
          - {path: $.a, value: w, operator: StrGTEQ}
        next-state: Adult
      - not:
          - {path: $.n, value: '1', operator: EQ}
          - {path: $.n, value: '2', operator: GT}
          - {path: $.n, value: '-3', operator: LTEQ}
        next-state: Adult
      - single: [{path: $.v01, value: x, operator: lessthanequals}]
        next-state: Adult
    default: Minor
  - name: Adult
    type: DELAY
    time-delay: PT0S
    end: true
  - name: Minor
    type: DELAY
    time-delay: PT0S
    end: true
";

fn conditions(task: &Task) -> &[crate::ir::DataCondition] {
    let TaskKind::Switch(switch) = &task.kind else {
        panic!("switch")
    };
    let SwitchConditions::Data(conditions) = &switch.conditions else {
        panic!("data conditions")
    };
    conditions
}

/// A test with positions erased: `op(path, value)` leaves, `all`/`any`/`not` nodes.
fn describe(test: &DataTest) -> String {
    match test {
        DataTest::Compare(c) => format!(
            "{:?}({},{})",
            c.operator.value,
            c.path.as_ref().map_or("", |p| p.text.as_str()),
            c.value.as_ref().map_or("", |v| v.as_str())
        ),
        DataTest::All(items) => format!(
            "all[{}]",
            items.iter().map(describe).collect::<Vec<_>>().join(" ")
        ),
        DataTest::Any(items) => format!(
            "any[{}]",
            items.iter().map(describe).collect::<Vec<_>>().join(" ")
        ),
        DataTest::Not(inner) => format!("not {}", describe(inner)),
    }
}

#[test]
fn second_draft_choices() {
    let wf = parse_ok(SECOND_SWITCH);
    let route = task(&wf, "Route");
    let described: Vec<String> = conditions(route)
        .iter()
        .map(|c| describe(&c.test))
        .collect();
    assert_eq!(
        described,
        [
            "GreaterThanOrEquals($.age,18)",
            "all[StrEquals($.name,Ann) LessThan($.age,3.5)]",
            "any[StrLessThan($.a,x) StrLessThanOrEquals($.a,y) StrGreaterThan($.a,z) StrGreaterThanOrEquals($.a,w)]",
            // `not` holds when none of its comparisons does.
            "not any[Equals($.n,1) GreaterThan($.n,2) LessThanOrEquals($.n,-3)]",
            "LessThanOrEquals($.v01,x)",
        ]
    );
    let first = &conditions(route)[0];
    assert_eq!(first.span, Span::new(8, 9));
    let comparison = first.comparison().expect("comparison");
    assert_eq!(comparison.span, Span::new(8, 18));
    assert_eq!(comparison.operator.span, Span::new(8, 55));
    assert_eq!(
        comparison.value.as_ref().map(|v| v.span),
        Some(Span::new(8, 39))
    );
    let to = first.transition.as_ref().expect("next-state");
    assert_eq!((to.next.as_str(), to.span), ("Adult", Span::new(9, 21)));
    let TaskKind::Switch(switch) = &route.kind else {
        panic!("switch")
    };
    let default = switch.default.as_ref().expect("default");
    assert_eq!(
        (default.next.as_str(), default.span),
        ("Minor", Span::new(27, 14))
    );
    assert_eq!(switch.event_timeout, None);
}

#[test]
fn single_holds_exactly_one_comparison() {
    let text = SECOND_SWITCH.replace(
        "single: [{path: $.age, value: '18', operator: GTEQ}]",
        "single: [{path: $.age, value: '18', operator: GTEQ}, {path: $.b, value: '1', operator: EQ}]",
    );
    let d = single(&text);
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(8, 62));
    assert!(d.message.contains("holds 2"), "{}", d.message);
    assert!(
        help(&d).contains("`and`") && help(&d).contains("`or`"),
        "{}",
        help(&d)
    );
}

#[test]
fn choice_mistakes() {
    // An unknown operator: did you mean.
    let d = single(&SECOND_SWITCH.replace("operator: GTEQ", "operator: GTE"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(8, 55));
    assert!(help(&d).contains("did you mean `GTEQ`"), "{}", help(&d));
    // A numeric operator with a value that is not a number.
    let d = single(&SECOND_SWITCH.replace("value: '18'", "value: eighteen"));
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(8, 39));
    assert!(
        d.message.contains("`GTEQ` compares numbers"),
        "{}",
        d.message
    );
    assert!(help(&d).contains("`StrGTEQ`"), "{}", help(&d));
    // Two combinators in one choice.
    let d = single(&SECOND_SWITCH.replace(
        "      - single: [{path: $.v01",
        "      - and: [{path: $.x, value: '1', operator: EQ}]\n        single: [{path: $.v01",
    ));
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(26, 9));
    assert!(
        d.message.contains("both `and` and `single`"),
        "{}",
        d.message
    );
    // None at all.
    let d = single(
        &SECOND_SWITCH
            .replace(
                "      - single: [{path: $.v01, value: x, operator: lessthanequals}]\n",
                "      - next-state: Adult\n",
            )
            .replace(
                "      - next-state: Adult\n        next-state: Adult\n",
                "      - next-state: Adult\n",
            ),
    );
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(25, 9));
    // An empty list.
    let d = single(&SECOND_SWITCH.replace(
        "single: [{path: $.v01, value: x, operator: lessthanequals}]",
        "or: []",
    ));
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(25, 13));
    // A comparison without a value (only `Exists` needs none) or a path: validation says so.
    let d = single(&SECOND_SWITCH.replace(
        "value: x, operator: lessthanequals",
        "operator: lessthanequals",
    ));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`value`"));
    assert_eq!(d.span, Span::new(25, 18));
    let d = single(&SECOND_SWITCH.replace("{path: $.v01, value", "{value"));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`path`"));
    parse_ok(&SECOND_SWITCH.replace("value: x, operator: lessthanequals", "operator: EXISTS"));
    // `default` and `next-state` are required.
    let d = single(&SECOND_SWITCH.replace("    default: Minor\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`default`"));
}

const FIRST_SWITCH: &str = "name: switch
states:
  - name: Route
    type: SWITCH
    start: true
    choices:
      - condition: {path: $.age, value: '18', operator: GreaterThanEquals}
        next-state: Adult
      - condition:
          and:
            - {path: $.name, value: Ann, operator: Equals}
            - or:
                - {path: $.a, operator: exists}
                - not: {path: $.b, value: '2', operator: LessThan}
        next-state: Adult
      - condition:
          not:
            not: {path: $.c, value: '1', operator: StrEQ}
        next-state: Adult
    default: Minor
  - name: Adult
    type: END
  - name: Minor
    type: END
";

#[test]
fn first_draft_conditions_nest() {
    let wf = parse_ok(FIRST_SWITCH);
    let described: Vec<String> = conditions(task(&wf, "Route"))
        .iter()
        .map(|c| describe(&c.test))
        .collect();
    assert_eq!(
        described,
        [
            "GreaterThanOrEquals($.age,18)",
            "all[Equals($.name,Ann) any[Exists($.a,) not LessThan($.b,2)]]",
            "not not StrEquals($.c,1)",
        ]
    );
    let first = conditions(task(&wf, "Route"))[0]
        .comparison()
        .expect("comparison");
    assert_eq!(first.span, Span::new(7, 20));
    assert_eq!(first.operator.span, Span::new(7, 57));
}

#[test]
fn first_draft_condition_mistakes() {
    let d = single(&FIRST_SWITCH.replace("operator: exists}", "operator: exist}"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert_eq!(d.span, Span::new(13, 41));
    assert!(help(&d).contains("did you mean `Exists`"), "{}", help(&d));
    let d = single(&FIRST_SWITCH.replace(
        "          not:\n            not:",
        "          not: {path: $.x, value: '1', operator: EQ}\n          or:\n            - not:",
    ).replace("            - not: {path: $.c, value: '1', operator: StrEQ}", "            - {path: $.c, value: '1', operator: StrEQ}"));
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(18, 11));
    // The second draft's form is not a first-draft choice.
    let d = single(&FIRST_SWITCH.replace(
        "      - condition: {path: $.age, value: '18', operator: GreaterThanEquals}",
        "      - condition: {path: $.age, value: '18', operator: GreaterThanEquals}\n        single: []",
    ));
    assert_eq!(d.code, Code::UNKNOWN_KEY);
    assert_eq!(d.span, Span::new(8, 9));
}

// ---------------------------------------------------------------------------------------------
// DELAY, PARALLEL and END states; end flags

fn delay_millis(task: &Task) -> Option<u64> {
    match &task.kind {
        TaskKind::Delay { time_delay } => time_delay.as_ref().map(|d| d.millis),
        other => panic!("not a delay: {other:?}"),
    }
}

#[test]
fn delays_in_seconds_or_iso_8601_in_both_drafts() {
    let first = parse_ok(FIRST);
    assert_eq!(delay_millis(task(&first, "Wait")), Some(2_000));
    let first = parse_ok(&FIRST.replace("time-delay: 2", "time-delay: PT1.5S"));
    assert_eq!(delay_millis(task(&first, "Wait")), Some(1_500));
    let first = parse_ok(&FIRST.replace("time-delay: 2", "time-delay: '7'"));
    assert_eq!(delay_millis(task(&first, "Wait")), Some(7_000));
    let second = parse_ok(SECOND);
    assert_eq!(delay_millis(task(&second, "Wait")), Some(2_000));
    let wait = task(&second, "Wait");
    let TaskKind::Delay {
        time_delay: Some(delay),
    } = &wait.kind
    else {
        panic!("delay")
    };
    assert_eq!(
        (delay.text.as_str(), delay.span),
        ("PT2S", Span::new(21, 17))
    );
    let second = parse_ok(&SECOND.replace("time-delay: PT2S", "time-delay: 3"));
    assert_eq!(delay_millis(task(&second, "Wait")), Some(3_000));

    let d = single(&SECOND.replace("time-delay: PT2S", "time-delay: 2 seconds"));
    assert_eq!(d.code, Code::BAD_DURATION);
    assert_eq!(d.span, Span::new(21, 17));
    let d = single(&FIRST.replace("time-delay: 2", "time-delay: -2"));
    assert_eq!(d.code, Code::WRONG_TYPE);
    assert!(help(&d).contains("seconds"), "{}", help(&d));
    let d = single(&FIRST.replace("    time-delay: 2\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`time-delay`"));
}

const SECOND_PARALLEL: &str = "id: fork
name: Fork
starts-at: Fork
states:
  - name: Fork
    type: PARALLEL
    branches:
      - name: left
        starts-at: L2
        wait-for-completion: true
        states:
          - {name: L1, type: DELAY, time-delay: PT1S, end: true}
          - {name: L2, type: DELAY, time-delay: PT1S, next-state: L1}
      - name: right
        starts-at: R1
        wait-for-completion: false
        states:
          - {name: R1, type: DELAY, time-delay: PT1S, end: true}
    next-state: After
  - {name: After, type: DELAY, time-delay: PT0S, end: true}
";

const FIRST_PARALLEL: &str = "name: fork
states:
  - name: Fork
    type: PARALLEL
    start: true
    branches:
      - name: left
        wait-for-completion: true
        states:
          - {name: L1, type: END, status: SUCCESS}
          - {name: L2, type: DELAY, time-delay: 1, next-state: L1, start: true}
      - name: right
        wait-for-completion: false
        states:
          - {name: R1, type: END, start: true}
    next-state: After
  - {name: After, type: END}
";

#[test]
fn parallel_states_output_an_array_of_their_branches() {
    for (text, left_span, left_start) in [
        (SECOND_PARALLEL, Span::new(8, 9), Span::new(9, 20)),
        (FIRST_PARALLEL, Span::new(7, 9), Span::new(11, 75)),
    ] {
        let wf = parse_ok(text);
        let fork = task(&wf, "Fork");
        assert_eq!(next(fork), Some("After"));
        let TaskKind::Parallel {
            branches,
            completion,
            output,
            n,
            state_timeout,
            branch_timeout,
        } = &fork.kind
        else {
            panic!("parallel")
        };
        assert_eq!(*output, ParallelOutput::Array);
        assert_eq!(*completion, Completion::AllOf);
        assert_eq!((n, state_timeout, branch_timeout), (&None, &None, &None));
        let [left, right] = &branches[..] else {
            panic!("two branches")
        };
        assert_eq!(left.name.value, "left");
        assert_eq!(left.span, left_span);
        assert!(left.wait_for_completion);
        assert!(!right.wait_for_completion);
        let starts: Vec<&str> = left
            .scope
            .tasks
            .iter()
            .filter(|t| t.start.is_some())
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(starts, ["L2"]);
        assert_eq!(
            left.scope.tasks[1].start.as_ref().map(|s| s.span),
            Some(left_start)
        );
        assert!(right.scope.tasks[0].start.is_some());
    }
}

#[test]
fn branch_mistakes() {
    let (wf, diags) = crate::pipeline::check(&SourceFile::new(
        "wf.yaml",
        SECOND_PARALLEL.replace("starts-at: L2", "starts-at: L3"),
    ));
    let d = single(&SECOND_PARALLEL.replace("starts-at: L2", "starts-at: L3"));
    assert_eq!(d.code, Code::UNKNOWN_TARGET);
    assert_eq!(d.span, Span::new(9, 20));
    assert!(
        d.message.contains("branch `left` has no state"),
        "{}",
        d.message
    );
    assert!(help(&d).contains("`L1` and `L2`"), "{}", help(&d));
    // Without a likely meaning, the state nothing leads to is taken as the start, so that
    // validation does not report the missing start again.
    assert_eq!(diags.items().len(), 1);
    let wf = wf.expect("workflow");
    let TaskKind::Parallel { branches, .. } = &task(&wf, "Fork").kind else {
        panic!("parallel")
    };
    assert_eq!(branches[0].scope.tasks[1].name.value, "L2");
    assert!(branches[0].scope.tasks[1].start.is_some());

    let d = single(&FIRST_PARALLEL.replace("        wait-for-completion: false\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(12, 9));
    assert!(d.message.contains("`wait-for-completion`"), "{}", d.message);
    let d = single(&SECOND_PARALLEL.replace("        starts-at: R1\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert!(d.message.contains("`starts-at`"), "{}", d.message);
    assert_eq!(d.span, Span::new(14, 9));
}

#[test]
fn end_states_end_with_their_status() {
    let wf = parse_ok(OPERATIONS);
    for (name, status, at) in [
        ("Declined", Some(EndStatus::Failure), Span::new(21, 11)),
        ("Done", Some(EndStatus::Success), Span::new(24, 11)),
    ] {
        let end_state = task(&wf, name);
        assert_eq!(end_state.kind, TaskKind::Inject { data: json!({}) });
        assert_eq!(end_state.transition, None);
        let end = end_state.end.as_ref().expect("end");
        assert_eq!(end.kind, EndKind::Default);
        assert!(!end.compensate);
        assert_eq!(end.span, at);
        assert_eq!(end.status.as_ref().map(|s| s.value), status);
    }
    // Without a status.
    let wf = parse_ok(FIRST_PARALLEL);
    let end = task(&wf, "After").end.as_ref().expect("end");
    assert_eq!(end.status, None);
    // SUCCESS or FAILURE, in any case.
    let wf = parse_ok(&OPERATIONS.replace("status: FAILURE", "status: failure"));
    let end = task(&wf, "Declined").end.as_ref().expect("end");
    assert_eq!(
        end.status.as_ref().map(|s| (s.value, s.span)),
        Some((EndStatus::Failure, Span::new(22, 13)))
    );
    let d = single(&OPERATIONS.replace("status: FAILURE", "status: FAILED"));
    assert_eq!(d.code, Code::UNKNOWN_VALUE);
    assert!(help(&d).contains("FAILURE"), "{}", help(&d));
}

#[test]
fn an_end_state_cannot_transition() {
    let text = OPERATIONS.replace(
        "    status: FAILURE\n",
        "    status: FAILURE\n    next-state: Done\n",
    );
    let d = single(&text);
    assert_eq!(d.code, Code::NOT_ALLOWED_HERE);
    assert_eq!(d.span, Span::new(23, 5));
    assert!(d.message.contains("END state"), "{}", d.message);
    assert!(help(&d).contains("remove `next-state`"), "{}", help(&d));
}

#[test]
fn end_flags_end_and_ignore_next_state_with_a_warning() {
    let text = SECOND.replace("    end: true\n", "    end: true\n    next-state: Wait\n");
    let (wf, diags) = parse(&text);
    let d = single(&text);
    assert_eq!(d.code, Code::IGNORED_NEXT_STATE);
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(d.span, Span::new(19, 5));
    assert!(d.message.contains("`next-state` `Wait`"), "{}", d.message);
    assert!(help(&d).contains("remove `next-state`"), "{}", help(&d));
    assert!(!diags.has_errors());
    let pause = task(wf.as_ref().expect("workflow"), "Pause");
    assert_eq!(pause.transition, None);
    let end = pause.end.as_ref().expect("end");
    assert_eq!(
        (end.kind.clone(), end.status.clone(), end.span),
        (EndKind::Default, None, Span::new(18, 10))
    );
    // `end: false` is no end.
    let wf = parse_ok(&text.replace("end: true", "end: false"));
    assert_eq!(next(task(&wf, "Pause")), Some("Wait"));
    assert_eq!(task(&wf, "Pause").end, None);
    // On an event state, every entry's `next-state` is ignored.
    let text = EVENTS.replace("    type: EVENT\n", "    type: EVENT\n    end: true\n");
    let (wf, diags) = parse(&text);
    let warnings: Vec<Span> = diags
        .items()
        .iter()
        .map(|d| {
            assert_eq!(
                (d.code, d.severity),
                (Code::IGNORED_NEXT_STATE, Severity::Warning)
            );
            d.span
        })
        .collect();
    assert_eq!(warnings, [Span::new(19, 9), Span::new(23, 9)]);
    let bidding = task(wf.as_ref().expect("workflow"), "Bidding");
    assert!(entries(bidding).iter().all(|e| e.transition.is_none()));
    assert!(bidding.end.is_some());
}

#[test]
fn a_warning_does_not_stop_compilation() {
    let text = SECOND.replace("    end: true\n", "    end: true\n    next-state: Wait\n");
    let compiled = crate::pipeline::compile(&SourceFile::new("wf.yaml", text));
    assert_eq!(compiled.diagnostics.len(), 1, "{:#?}", compiled.diagnostics);
    assert_eq!(compiled.diagnostics[0].code, Code::IGNORED_NEXT_STATE);
    assert!(!compiled.has_errors());
    assert!(compiled.tokens.is_some());
}

#[test]
fn both_drafts_compile_through_the_whole_pipeline() {
    for text in [
        FIRST,
        SECOND,
        OPERATIONS,
        SECOND_SWITCH,
        FIRST_SWITCH,
        SECOND_PARALLEL,
        FIRST_PARALLEL,
        EVENTS,
    ] {
        let compiled = crate::pipeline::compile(&SourceFile::new("wf.yaml", text));
        assert!(
            compiled.diagnostics.is_empty(),
            "{text}\n{:#?}",
            compiled.diagnostics
        );
        assert!(compiled.tokens.is_some());
    }
}

#[test]
fn the_first_draft_needs_a_start_flag_in_each_scope() {
    let d = single(&FIRST.replace("    start: true\n", ""));
    assert_eq!(d.code, Code::NO_START);
    assert_eq!(d.span, Span::new(1, 1));
    assert!(
        d.message.contains("the workflow has no start state"),
        "{}",
        d.message
    );
    assert!(
        help(&d).contains("`start: true`") && help(&d).contains("`Wait`"),
        "{}",
        help(&d)
    );
    let d = single(&FIRST_PARALLEL.replace("next-state: L1, start: true}", "next-state: L1}"));
    assert_eq!(d.code, Code::NO_START);
    assert_eq!(d.span, Span::new(7, 9));
    assert!(d.message.contains("branch `left`"), "{}", d.message);
    assert!(help(&d).contains("`L1`"), "{}", help(&d));
}

#[test]
fn states_without_a_name_or_type() {
    let d = single(&FIRST.replace("    type: DELAY\n", ""));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(6, 5));
    assert!(
        help(&d).contains("EVENT, OPERATION, SWITCH, DELAY, PARALLEL, END"),
        "{}",
        help(&d)
    );
    let d = single(&SECOND.replace("    type: delay\n", ""));
    assert!(help(&d).ends_with("DELAY, PARALLEL"), "{}", help(&d));
    // The start state without a name: only the name is missing.
    let d = single(&FIRST.replace("  - name: Wait\n    type: DELAY\n", "  - type: DELAY\n"));
    assert_eq!(d.code, Code::MISSING_FIELD);
    assert_eq!(d.span, Span::new(6, 5));
    assert!(d.message.contains("`name`"), "{}", d.message);
}

#[test]
fn an_empty_state_name_is_reported_and_the_start_stays_where_it_is() {
    // The start state's name is empty: reported at the name, and no other state is taken for
    // the start (`Other`, which nothing leads to, would have been, and `Done` unreachable).
    let text = format!(
        "{}  - {{name: Other, type: END, status: SUCCESS}}\n",
        FIRST.replace("  - name: Wait\n", "  - name: \"\"\n")
    );
    let d = single(&text);
    assert_eq!(d.code, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(6, 11));
    assert!(d.message.contains("`name` is empty"), "{}", d.message);
    assert!(help(&d).contains("give the state a name"), "{}", help(&d));
    let wf = parse(&text).0.expect("workflow");
    let starts: Vec<&str> = wf
        .scope
        .tasks
        .iter()
        .filter(|t| t.start.is_some())
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(starts, [""]);

    // Any other state with an empty name is reported too, at its name.
    let (_, diags) = parse(&FIRST.replace("  - name: Done\n", "  - name: ''\n"));
    let d = only(&diags, Code::INVALID_VALUE);
    assert_eq!(d.span, Span::new(11, 11));
}

// ---------------------------------------------------------------------------------------------
// The representative workflows of the tests crate

#[test]
fn the_representative_workflows_lower() {
    let second = include_str!("../../../../tests/workflows/kebab/second.sw.yaml");
    let (wf, diags) = parse(second);
    // Only the warning for `end: true` with `next-state`.
    let codes: Vec<(Code, Severity)> = diags.items().iter().map(|d| (d.code, d.severity)).collect();
    assert_eq!(codes, [(Code::IGNORED_NEXT_STATE, Severity::Warning)]);
    let wf = wf.expect("workflow");
    assert_eq!(wf.dialect, Dialect::Second);
    let functions: Vec<&str> = wf.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        functions,
        ["recordBid", "charge", "register", "ship", "notify"]
    );
    let tokens: Vec<Option<&str>> = wf
        .events
        .iter()
        .map(|e| e.correlation_token.as_ref().map(|t| t.as_str()))
        .collect();
    assert_eq!(tokens, [Some("auctionid"); 4]);
    let bidding = entries(task(&wf, "Bidding"));
    assert_eq!(
        bidding[0].condition.as_ref().map(shape),
        Some(EventExpr::All(vec![
            EventExpr::Any(vec![ev("BidPlaced"), ev("OfferMade")]),
            ev("auction-closed")
        ]))
    );
    assert_eq!(
        bidding[1].timeout.as_ref().map(|t| t.millis),
        Some(7_200_000)
    );

    let first = include_str!("../../../../tests/workflows/kebab/first.sw.yaml");
    let wf = parse_ok(first);
    assert_eq!(wf.dialect, Dialect::First);
    assert_eq!(wf.id.value, "car-auction");
    let bidding = task(&wf, "Bidding");
    assert!(bidding.start.is_some());
    assert_eq!(
        entries(bidding)[1].timeout.as_ref().map(|t| t.millis),
        Some(7_200_000)
    );
    // `$` paths are the defaults: no filter at all.
    assert_eq!(entries(bidding)[0].event_data_filter, None);
    assert_eq!(entries(bidding)[0].event_results_path, None);
    let statuses: Vec<Option<EndStatus>> = ["Sold", "Failed"]
        .iter()
        .map(|name| {
            task(&wf, name)
                .end
                .as_ref()
                .and_then(|e| e.status.as_ref())
                .map(|s| s.value)
        })
        .collect();
    assert_eq!(
        statuses,
        [Some(EndStatus::Success), Some(EndStatus::Failure)]
    );
}
