//! Required fields the IR keeps optional (so one missing field does not hide the rest of the
//! file), and the parallel completion count.
//!
//! Each problem is reported at the most precise place that exists: the condition, handler or
//! definition missing the field, else the task's name.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{
    Action, Branch, Comparison, Completion, DataCondition, EndKind, EventCondition, Operator,
    StartKind, Switch, SwitchConditions, Task, TaskKind,
};
use crate::source::{Span, Spanned};

pub(super) fn check_task(task: &Task, diags: &mut Diagnostics) {
    check_kind(task, diags);
    for action in task.actions() {
        check_action(task, action, diags);
    }
    check_start_and_end(task, diags);
    check_handlers(task, diags);
}

fn missing(diags: &mut Diagnostics, span: Span, message: String, help: impl Into<String>) {
    diags.error(Code::MISSING_FIELD, span, message).help(help);
}

/// Fields each task type requires. The example says what to add.
fn check_kind(task: &Task, diags: &mut Diagnostics) {
    match &task.kind {
        // `actions` is required by the parsers (an absent key is reported there) but may be
        // empty: the drafts' schemas set no minimum.
        TaskKind::Operation { .. } => {}
        TaskKind::Event { events_actions, .. } => {
            require(
                task,
                &[(
                    "eventsActions",
                    events_actions.is_empty(),
                    "`eventsActions: [{eventRefs: [...], actions: [...]}]` saying which events \
                     to wait for",
                )],
                diags,
            );
            for entry in events_actions.iter().filter(|e| e.event_refs.is_empty()) {
                missing(
                    diags,
                    entry.span,
                    format!(
                        "an `eventsActions` entry of task `{}` has no `eventRefs`",
                        task.name.value
                    ),
                    "add `eventRefs: [...]` naming at least one of the workflow's `events`",
                );
            }
        }
        TaskKind::Switch(switch) => check_switch(task, switch, diags),
        TaskKind::Delay { time_delay } => require(
            task,
            &[(
                "timeDelay",
                time_delay.is_none(),
                "`timeDelay` with an ISO 8601 duration, such as `timeDelay: PT15M`",
            )],
            diags,
        ),
        TaskKind::Parallel {
            branches,
            completion,
            n,
            ..
        } => check_parallel(task, branches, *completion, n.as_ref(), diags),
        TaskKind::SubFlow { workflow_id, .. } => require(
            task,
            &[(
                "workflowId",
                workflow_id.is_none(),
                "`workflowId` with the id of the workflow to run",
            )],
            diags,
        ),
        TaskKind::Inject { .. } => {}
        TaskKind::ForEach {
            input_collection,
            input_parameter,
            element_as_input,
            scope,
            ..
        } => require(
            task,
            &[
                (
                    "inputCollection",
                    input_collection.is_none(),
                    "`inputCollection` selecting the array to iterate, such as `$.items`",
                ),
                (
                    "inputParameter",
                    input_parameter.is_none() && !element_as_input,
                    "`inputParameter` naming where each element goes, such as `$.item`",
                ),
                (
                    "tasks",
                    scope.tasks.is_empty(),
                    "`tasks` to run for each element, one of them with `start: {kind: default}`",
                ),
            ],
            diags,
        ),
        TaskKind::Callback {
            action,
            event_ref,
            timeout,
            ..
        } => require(
            task,
            &[
                (
                    "action",
                    action.is_none(),
                    "`action: {functionRef: {refName: ...}}` to run before waiting",
                ),
                (
                    "eventRef",
                    event_ref.is_none(),
                    "`eventRef` naming the callback event to wait for",
                ),
                (
                    "timeout",
                    timeout.is_none(),
                    "`timeout` with an ISO 8601 duration, such as `timeout: PT15M`",
                ),
            ],
            diags,
        ),
    }
}

/// MISSING_FIELD at the task's name for each `(key, absent, what to add)` that is absent.
fn require(task: &Task, fields: &[(&str, bool, &str)], diags: &mut Diagnostics) {
    for (key, _, example) in fields.iter().filter(|(_, absent, _)| *absent) {
        missing(
            diags,
            task.name.span,
            format!(
                "{} task `{}` has no `{key}`",
                task.type_name(),
                task.name.value
            ),
            format!("add {example}"),
        );
    }
}

fn check_switch(task: &Task, switch: &Switch, diags: &mut Diagnostics) {
    let name = &task.name.value;
    let (no_conditions, default_use) = match &switch.conditions {
        SwitchConditions::Data(conditions) => {
            for condition in conditions {
                check_data_condition(name, condition, diags);
            }
            (conditions.is_empty(), "when no condition matches")
        }
        SwitchConditions::Event(conditions) => {
            for condition in conditions {
                check_event_condition(name, condition, diags);
            }
            // The draft requires `eventTimeout` with event conditions: without it the default
            // transition could never be taken.
            if !conditions.is_empty() && switch.event_timeout.is_none() {
                missing(
                    diags,
                    task.name.span,
                    format!("switch task `{name}` waits for events but has no `eventTimeout`"),
                    "add `eventTimeout`, such as `eventTimeout: PT15M`, after which `default` is taken",
                );
            }
            (conditions.is_empty(), "when no event arrives in time")
        }
    };
    if no_conditions {
        missing(
            diags,
            task.name.span,
            format!("switch task `{name}` has no conditions"),
            "add `dataConditions` (or `eventConditions`) with at least one condition",
        );
    }
    if switch.default.is_none() {
        missing(
            diags,
            task.name.span,
            format!("switch task `{name}` has no `default` transition"),
            format!("add `default: {{nextTask: ...}}` naming the task to run {default_use}"),
        );
    }
}

fn check_data_condition(task: &str, condition: &DataCondition, diags: &mut Diagnostics) {
    for comparison in condition.test.comparisons() {
        check_comparison(task, comparison, diags);
    }
    if condition.transition.is_none() {
        missing(
            diags,
            condition.span,
            format!("a data condition of switch task `{task}` has no `transition`"),
            "add `transition: {nextTask: ...}` naming the task to run when the condition holds",
        );
    }
}

fn check_comparison(task: &str, condition: &Comparison, diags: &mut Diagnostics) {
    let at = condition.span;
    if condition.path.is_none() {
        missing(
            diags,
            at,
            format!("a data condition of switch task `{task}` has no `path`"),
            "add `path` with the JSONPath of the value to test, such as `path: $.age`",
        );
    }
    if condition.value.is_none() && needs_value(condition.operator.value) {
        missing(
            diags,
            at,
            format!("a data condition of switch task `{task}` has no `value` to compare with"),
            "add `value` (only `exists`, `notexists`, `null` and `notnull` need none)",
        );
    }
}

/// The operators that only test presence or nullness compare with nothing.
fn needs_value(operator: Operator) -> bool {
    !matches!(
        operator,
        Operator::Exists | Operator::NotExists | Operator::Null | Operator::NotNull
    )
}

fn check_event_condition(task: &str, condition: &EventCondition, diags: &mut Diagnostics) {
    if condition.event_ref.is_none() {
        missing(
            diags,
            condition.span,
            format!("an event condition of switch task `{task}` has no `eventRef`"),
            "add `eventRef` naming the event this condition waits for",
        );
    }
    if condition.transition.is_none() {
        missing(
            diags,
            condition.span,
            format!("an event condition of switch task `{task}` has no `transition`"),
            "add `transition: {nextTask: ...}` naming the task to run when the event arrives",
        );
    }
}

fn check_parallel(
    task: &Task,
    branches: &[Branch],
    completion: Completion,
    n: Option<&Spanned<u64>>,
    diags: &mut Diagnostics,
) {
    let name = &task.name.value;
    require(
        task,
        &[(
            "branches",
            branches.is_empty(),
            "`branches: [{name: ..., tasks: [...]}]` with at least one branch",
        )],
        diags,
    );
    for branch in branches.iter().filter(|b| b.scope.tasks.is_empty()) {
        missing(
            diags,
            branch.span,
            format!(
                "branch `{}` of parallel task `{name}` has no tasks",
                branch.name.value
            ),
            "add `tasks` to the branch, one of them with `start: {kind: default}`",
        );
    }
    check_completion(task, branches.len(), completion, n, diags);
}

/// `n_of_m` and `atLeast` need a count, and one no larger than the number of branches.
fn check_completion(
    task: &Task,
    branch_count: usize,
    completion: Completion,
    n: Option<&Spanned<u64>>,
    diags: &mut Diagnostics,
) {
    let (field, kind) = match completion {
        Completion::NOfM => ("n", "n_of_m"),
        Completion::AtLeast => ("numCompleted", "atLeast"),
        Completion::And | Completion::Xor | Completion::AllOf => return,
    };
    let name = &task.name.value;
    let Some(n) = n else {
        missing(
            diags,
            task.name.span,
            format!("parallel task `{name}` completes with `{kind}` but has no `{field}`"),
            format!("add `{field}` with how many branches must complete"),
        );
        return;
    };
    if n.value == 0 {
        diags
            .error(
                Code::INVALID_VALUE,
                n.span,
                format!("`{field}` of parallel task `{name}` is 0, so it would complete before any branch ran"),
            )
            .help(format!("set `{field}` to how many branches must complete, at least 1"));
        return;
    }
    // With no branches at all, the missing branches are the problem to report.
    let too_large = usize::try_from(n.value).map_or(true, |n| n > branch_count);
    if branch_count > 0 && too_large {
        diags
            .error(
                Code::N_TOO_LARGE,
                n.span,
                format!(
                    "`{field}` is {}, but parallel task `{name}` has only {branch_count} {}",
                    n.value,
                    if branch_count == 1 {
                        "branch"
                    } else {
                        "branches"
                    }
                ),
            )
            .help(format!(
                "lower `{field}` to at most {branch_count}, or add branches; otherwise the task \
                 could never complete"
            ));
    }
}

fn check_action(task: &Task, action: &Action, diags: &mut Diagnostics) {
    if action.function.is_some() {
        return;
    }
    let which = match &action.name {
        Some(name) => format!("action `{}`", name.value),
        None => "an action".to_owned(),
    };
    missing(
        diags,
        action.span,
        format!("{which} of task `{}` has no `functionRef`", task.name.value),
        "add `functionRef: {refName: ...}` naming one of the workflow's `functions`",
    );
}

fn check_start_and_end(task: &Task, diags: &mut Diagnostics) {
    let name = &task.name.value;
    if let Some(start) = &task.start
        && let StartKind::Scheduled { interval: None } = start.kind
    {
        missing(
            diags,
            start.span,
            format!("the scheduled start of task `{name}` has no `schedule.interval`"),
            "add `schedule: {interval: ...}` with an ISO 8601 interval, such as \
             `2020-03-20T13:00:00Z/PT2H`",
        );
    }
    if let Some(end) = &task.end
        && let EndKind::Event { produce: None } = end.kind
    {
        missing(
            diags,
            end.span,
            format!("the event end of task `{name}` has no `produceEvent`"),
            "add `produceEvent: {eventRef: ...}` naming the event to produce",
        );
    }
}

fn check_handlers(task: &Task, diags: &mut Diagnostics) {
    let name = &task.name.value;
    for handler in &task.on_error {
        if handler.condition.is_none() {
            missing(
                diags,
                handler.span,
                format!("an `onError` entry of task `{name}` has no `expression`"),
                "add `expression` saying which errors it handles, such as \
                 `expression: {language: spel, body: \"name eq 'TimeoutError'\"}`",
            );
        }
        if handler.transition.is_none() {
            missing(
                diags,
                handler.span,
                format!("an `onError` entry of task `{name}` has no `transition`"),
                "add `transition: {nextTask: ...}` naming the task that handles the error",
            );
        }
    }
    for retry in task.retry.iter().filter(|r| r.condition.is_none()) {
        missing(
            diags,
            retry.span,
            format!("a `retry` entry of task `{name}` has no `expression`"),
            "add `expression` saying which errors are retried",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::{Code, Diagnostic};
    use crate::ir::*;
    use crate::source::Spanned;

    /// A workflow whose only task, `T` at line 10, has the given kind and ends.
    fn single(kind: TaskKind) -> Vec<Diagnostic> {
        let mut wf = workflow(vec![task(10, "T", kind).start().end()]);
        wf.functions = vec![function(3, "f")];
        wf.events = vec![event(4, "e")];
        with_code(&check(&wf), Code::MISSING_FIELD)
    }

    fn messages(found: &[Diagnostic]) -> Vec<String> {
        found.iter().map(|d| d.message.clone()).collect()
    }

    #[test]
    fn operation_needs_actions_and_function_refs() {
        // `actions: []` is allowed: the drafts' schemas set no minimum (an absent key is
        // reported by the parsers).
        assert!(single(operation(Vec::new())).is_empty());

        let mut unnamed = action(11, "f");
        unnamed.function = None;
        let found = single(operation(vec![unnamed]));
        assert_eq!(found[0].span, sp(11, 11));
        assert_mentions(&found[0], &["`functionRef`", "refName"]);
    }

    #[test]
    fn event_task_needs_events_actions_with_refs() {
        let kind = |events_actions| TaskKind::Event {
            exclusive: true,
            events_actions,
            timeout: None,
        };
        assert_mentions(&single(kind(Vec::new()))[0], &["`eventsActions`"]);
        let entry = EventActions {
            timeout: None,
            condition: None,
            event_results_path: None,
            transition: None,
            event_refs: Vec::new(),
            action_mode: ActionMode::Sequential,
            actions: Vec::new(),
            event_data_filter: None,
            span: sp(11, 9),
        };
        let found = single(kind(vec![entry]));
        assert_eq!(found[0].span, sp(11, 9));
        assert_mentions(&found[0], &["`eventRefs`"]);
    }

    #[test]
    fn delay_subflow_foreach_and_callback_fields() {
        let found = single(TaskKind::Delay { time_delay: None });
        assert_mentions(&found[0], &["`timeDelay`", "PT15M"]);
        let found = single(TaskKind::SubFlow {
            workflow_id: None,
            wait_for_completion: true,
        });
        assert_mentions(&found[0], &["`workflowId`"]);
        let found = single(TaskKind::ForEach {
            completion_condition: None,
            element_as_input: false,
            input_collection: None,
            input_parameter: None,
            output_collection: None,
            max: None,
            time_delay: None,
            scope: Scope::default(),
        });
        assert_eq!(
            messages(&found),
            vec![
                "foreach task `T` has no `inputCollection`",
                "foreach task `T` has no `inputParameter`",
                "foreach task `T` has no `tasks`",
            ]
        );
        let found = single(TaskKind::Callback {
            action: None,
            event_ref: None,
            timeout: None,
            event_data_filter: None,
        });
        assert_eq!(found.len(), 3);
        assert!(found.iter().all(|d| d.span == sp(10, 11)));
        assert_mentions(&found[2], &["`timeout`"]);
    }

    #[test]
    fn parallel_needs_branches_with_tasks() {
        assert_mentions(&single(parallel(Vec::new()))[0], &["has no `branches`"]);
        let found = single(parallel(vec![branch(11, "empty", Vec::new())]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].span, sp(11, 9));
        assert_mentions(&found[0], &["branch `empty`", "no tasks"]);
    }

    fn counted(completion: Completion, n: Option<u64>) -> TaskKind {
        let branches = (0..2)
            .map(|i| {
                let line = 20 + 10 * i;
                let name = format!("b{i}");
                branch(
                    line,
                    &name,
                    vec![task(line + 1, "X", inject()).start().end()],
                )
            })
            .collect();
        TaskKind::Parallel {
            output: crate::ir::ParallelOutput::Merge,
            branches,
            completion,
            n: n.map(|n| Spanned::new(n, sp(12, 12))),
            state_timeout: None,
            branch_timeout: None,
        }
    }

    #[test]
    fn n_of_m_needs_n_within_the_branch_count() {
        let mut wf = workflow(vec![
            task(10, "P", counted(Completion::NOfM, Some(3)))
                .start()
                .end(),
        ]);
        let d = only(&check(&wf), Code::N_TOO_LARGE);
        assert_eq!(d.span, sp(12, 12));
        assert_mentions(&d, &["`n` is 3", "only 2 branches", "at most 2"]);

        wf.scope.tasks[0].kind = counted(Completion::AtLeast, None);
        let d = only(&check(&wf), Code::MISSING_FIELD);
        assert_eq!(d.span, sp(10, 11));
        assert_mentions(&d, &["`atLeast`", "`numCompleted`"]);

        wf.scope.tasks[0].kind = counted(Completion::AtLeast, Some(2));
        assert_eq!(check(&wf), Vec::new());
    }

    #[test]
    fn switch_needs_conditions_and_default() {
        let found = single(switch(SwitchConditions::Data(Vec::new()), None));
        assert_eq!(
            messages(&found),
            vec![
                "switch task `T` has no conditions",
                "switch task `T` has no `default` transition",
            ]
        );
        assert_eq!(found[1].span, sp(10, 11));
        assert_mentions(&found[1], &["default: {nextTask: ...}"]);
    }

    #[test]
    fn conditions_need_their_fields() {
        let mut no_path = data_condition(11, "T");
        no_path.comparison_mut().expect("comparison").path = None;
        no_path.transition = None;
        let mut exists = data_condition(12, "T");
        let test = exists.comparison_mut().expect("comparison");
        test.operator.value = Operator::Exists;
        test.value = None;
        let mut equals = data_condition(13, "T");
        equals.comparison_mut().expect("comparison").value = None;
        let data = SwitchConditions::Data(vec![no_path, exists, equals]);
        let found = single(switch(data, Some(transition(14, "T"))));
        let spans: Vec<_> = found.iter().map(|d| d.span).collect();
        assert_eq!(spans, vec![sp(11, 11), sp(11, 11), sp(13, 11)]);
        assert_mentions(&found[0], &["`path`"]);
        assert_mentions(&found[1], &["`transition`"]);
        assert_mentions(&found[2], &["`value`"]);

        let event = SwitchConditions::Event(vec![EventCondition {
            event_ref: None,
            transition: None,
            event_data_filter: None,
            span: sp(11, 9),
        }]);
        let found = single(switch(event, Some(transition(14, "T"))));
        assert_eq!(
            messages(&found),
            vec![
                "an event condition of switch task `T` has no `eventRef`",
                "an event condition of switch task `T` has no `transition`",
                "switch task `T` waits for events but has no `eventTimeout`",
            ]
        );
    }

    #[test]
    fn start_end_and_handlers_need_their_fields() {
        let mut t = task(10, "T", inject());
        t.start = Some(Start {
            kind: StartKind::Scheduled { interval: None },
            span: sp(12, 9),
        });
        t.end = Some(End {
            compensate: false,
            status: None,
            kind: EndKind::Event { produce: None },
            span: sp(14, 9),
        });
        t.on_error.push(ErrorHandler {
            action: None,
            error_results_path: None,
            output_path: None,
            condition: None,
            error_data_filter: None,
            transition: None,
            span: sp(15, 9),
        });
        t.retry.push(Retry {
            condition: None,
            interval: None,
            multiplier: None,
            max_attempts: 1,
            span: sp(16, 9),
        });
        let found = with_code(&check(&workflow(vec![t])), Code::MISSING_FIELD);
        let spans: Vec<_> = found.iter().map(|d| d.span).collect();
        assert_eq!(
            spans,
            vec![sp(12, 9), sp(14, 9), sp(15, 9), sp(15, 9), sp(16, 9)]
        );
        assert_mentions(&found[0], &["schedule.interval"]);
        assert_mentions(&found[1], &["`produceEvent`"]);
        assert_mentions(&found[2], &["`onError`", "`expression`"]);
        assert_mentions(&found[3], &["`onError`", "`transition`"]);
        assert_mentions(&found[4], &["`retry`", "`expression`"]);
    }
}
