//! How a task leaves: `transition` or `end` (a switch only through its conditions and default),
//! and whether every `nextTask` names a task of the same scope.

use super::{Context, ScopeInfo, suggest};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Task, TaskKind, Transition};
use crate::source::Spanned;

pub(super) fn check_task(cx: &Context<'_>, scope: usize, task: &Task, diags: &mut Diagnostics) {
    check_exit(task, diags);
    for transition in task.transitions() {
        check_target(cx, scope, transition, diags);
    }
}

/// SWITCH_END, TRANSITION_AND_END, NO_TRANSITION_OR_END.
fn check_exit(task: &Task, diags: &mut Diagnostics) {
    let name = &task.name.value;
    match (&task.kind, &task.transition, &task.end) {
        (TaskKind::Switch(_), _, Some(end)) => {
            diags
                .error(
                    Code::SWITCH_END,
                    end.span,
                    format!("switch task `{name}` is declared as an end"),
                )
                .help(
                    "a switch always moves on through a condition or its `default`: remove \
                     `end` here and put it on the tasks the switch leads to",
                );
        }
        (TaskKind::Switch(_), _, None) => {}
        (_, Some(transition), Some(_)) => {
            diags
                .error(
                    Code::TRANSITION_AND_END,
                    transition.span,
                    format!("task `{name}` has both a `transition` and an `end`"),
                )
                .help(format!(
                    "remove `end` if `{name}` should continue to `{}`, or remove `transition` if \
                     it should finish",
                    transition.next.value
                ));
        }
        (_, None, None) if leaves_through_entries(task) => {}
        // A task whose type is unknown may well leave through fields nobody could read (a
        // switch's choices): its error is reported already.
        (_, None, None) if task.recovered => {}
        (TaskKind::Event { events_actions, .. }, None, None)
            if events_actions.iter().any(|e| e.transition.is_some()) =>
        {
            // The earlier drafts: each entry leaves through its own transition.
            for entry in events_actions.iter().filter(|e| e.transition.is_none()) {
                diags
                    .error(
                        Code::NO_TRANSITION_OR_END,
                        entry.span,
                        format!("an entry of event task `{name}` has no transition"),
                    )
                    .help(
                        "add `transition: {nextTask: ...}` to this entry, naming the task that \
                         runs after its actions",
                    );
            }
        }
        (_, None, None) => {
            diags
                .error(
                    Code::NO_TRANSITION_OR_END,
                    task.name.span,
                    format!("task `{name}` has neither a `transition` nor an `end`"),
                )
                .help(
                    "add `transition: {nextTask: ...}` naming the task that runs next, or \
                     `end: {kind: default}` if execution finishes here",
                );
        }
        (_, Some(_), None) | (_, None, Some(_)) => {}
    }
}

/// The earlier drafts' event tasks leave through the transitions of their entries.
fn leaves_through_entries(task: &Task) -> bool {
    matches!(&task.kind, TaskKind::Event { events_actions, .. }
        if !events_actions.is_empty() && events_actions.iter().all(|e| e.transition.is_some()))
}

/// UNKNOWN_TARGET or TARGET_OUT_OF_SCOPE when `nextTask` names no task of this scope.
fn check_target(cx: &Context<'_>, scope: usize, transition: &Transition, diags: &mut Diagnostics) {
    let (Some(info), Some(graph)) = (cx.scope(scope), cx.graph(scope)) else {
        return;
    };
    let target = &transition.next;
    // An empty target stands for a transition whose `nextTask` is missing or misspelled: the
    // parser has reported it already.
    if target.value.is_empty() || graph.resolve(&target.value).is_some() {
        return;
    }
    match cx.scope_with_task(&target.value, scope) {
        Some(elsewhere) => out_of_scope(cx, scope, elsewhere, target, diags),
        None => unknown_target(info, target, diags),
    }
}

fn unknown_target(info: &ScopeInfo<'_>, target: &Spanned<String>, diags: &mut Diagnostics) {
    let scope = info.owner.describe();
    let tasks = &info.scope.tasks;
    // Transitions accept ids as well as names, so both are candidates.
    let candidates = tasks.iter().map(|t| t.name.as_str()).chain(
        tasks
            .iter()
            .filter_map(|t| t.id.as_ref().map(Spanned::as_str)),
    );
    let help = match suggest::closest(&target.value, candidates) {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!(
            "name one of the tasks of {scope}: {}",
            suggest::list(tasks.iter().map(|t| t.name.as_str()))
        ),
    };
    diags
        .error(
            Code::UNKNOWN_TARGET,
            target.span,
            format!(
                "`nextTask` names `{}`, but {scope} has no task with that name or id",
                target.value
            ),
        )
        .help(help);
}

fn out_of_scope(
    cx: &Context<'_>,
    scope: usize,
    elsewhere: usize,
    target: &Spanned<String>,
    diags: &mut Diagnostics,
) {
    let (Some(here), Some(there)) = (cx.scope(scope), cx.scope(elsewhere)) else {
        return;
    };
    let here_text = here.owner.describe();
    let help = match (cx.enclosing_task(scope, elsewhere), here.owner.task()) {
        // The target is nested inside a task of this scope: that task is the way in.
        (Some(enclosing), _) => format!(
            "tasks inside {} only run as part of {} task `{}`: transition to `{}` instead",
            there.owner.describe(),
            enclosing.type_name(),
            enclosing.name.value,
            enclosing.name.value
        ),
        // This scope is a branch or body: it must end, and its owner moves on.
        (None, Some(owner)) => format!(
            "{here_text} cannot transition out of itself: end it here with \
             `end: {{kind: default}}` and put the transition on {} task `{}`",
            owner.type_name(),
            owner.name.value
        ),
        (None, None) => "a transition may only name a task of its own scope".to_owned(),
    };
    diags
        .error(
            Code::TARGET_OUT_OF_SCOPE,
            target.span,
            format!(
                "`nextTask` names `{}`, which is a task of {}, not of {here_text}",
                target.value,
                there.owner.describe()
            ),
        )
        .help(help);
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;
    use crate::ir::SwitchConditions;

    #[test]
    fn switch_declared_as_end() {
        let conditions = SwitchConditions::Data(vec![data_condition(12, "B")]);
        let wf = workflow(vec![
            task(10, "S", switch(conditions, Some(transition(13, "B"))))
                .start()
                .end(),
            task(20, "B", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::SWITCH_END);
        assert_eq!(d.span, sp(14, 9));
        assert_mentions(&d, &["switch task `S`", "remove `end`"]);
        assert!(with_code(&check(&wf), Code::TRANSITION_AND_END).is_empty());
    }

    #[test]
    fn transition_and_end() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B").end(),
            task(20, "B", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::TRANSITION_AND_END);
        assert_eq!(d.span, sp(13, 9));
        assert_mentions(&d, &["`A`", "`transition`", "`end`", "`B`"]);
    }

    #[test]
    fn neither_transition_nor_end() {
        let wf = workflow(vec![task(10, "A", inject()).start()]);
        let d = only(&check(&wf), Code::NO_TRANSITION_OR_END);
        assert_eq!(d.span, sp(10, 11));
        assert_mentions(&d, &["`A`", "nextTask", "end: {kind: default}"]);
    }

    #[test]
    fn switch_needs_no_transition_or_end() {
        let conditions = SwitchConditions::Data(vec![data_condition(12, "B")]);
        let wf = workflow(vec![
            task(10, "S", switch(conditions, Some(transition(13, "B")))).start(),
            task(20, "B", inject()).end(),
        ]);
        assert_eq!(check(&wf), Vec::new());
    }

    #[test]
    fn unknown_target_suggests_the_closest_name() {
        let wf = workflow(vec![
            task(10, "CheckCredit", inject()).start().next("Aprove"),
            task(20, "Approve", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::UNKNOWN_TARGET);
        assert_eq!(d.span, sp(13, 21));
        assert_mentions(&d, &["`Aprove`", "the workflow", "did you mean `Approve`?"]);
    }

    #[test]
    fn unknown_target_without_close_name_lists_tasks() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("Zebra"),
            task(20, "B", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::UNKNOWN_TARGET);
        assert_mentions(&d, &["`Zebra`", "`A` and `B`"]);
    }

    #[test]
    fn targets_resolve_by_id_too() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("b-id"),
            task(20, "B", inject()).end().id("b-id"),
        ]);
        assert_eq!(check(&wf), Vec::new());
    }

    #[test]
    fn switch_and_on_error_targets_are_checked() {
        let conditions = SwitchConditions::Data(vec![data_condition(12, "Nope")]);
        let wf = workflow(vec![
            task(10, "S", switch(conditions, Some(transition(13, "Gone"))))
                .start()
                .on_error(15, "Missing"),
        ]);
        let found = with_code(&check(&wf), Code::UNKNOWN_TARGET);
        let spans: Vec<_> = found.iter().map(|d| d.span).collect();
        assert_eq!(spans, vec![sp(12, 21), sp(13, 21), sp(15, 21)]);
    }

    #[test]
    fn branch_task_cannot_leave_its_branch() {
        let branch_tasks = vec![task(40, "B1", inject()).start().next("After")];
        let wf = workflow(vec![
            task(10, "P", parallel(vec![branch(30, "left", branch_tasks)]))
                .start()
                .next("After"),
            task(20, "After", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::TARGET_OUT_OF_SCOPE);
        assert_eq!(d.span, sp(43, 21));
        assert_mentions(
            &d,
            &[
                "`After`",
                "a task of the workflow",
                "not of branch `left` of parallel task `P`",
                "put the transition on parallel task `P`",
            ],
        );
        assert!(with_code(&check(&wf), Code::UNKNOWN_TARGET).is_empty());
    }

    #[test]
    fn outside_task_cannot_enter_a_body() {
        let body = vec![task(40, "Inner", inject()).start().end()];
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("Inner"),
            task(20, "F", foreach(body)).end(),
        ]);
        let d = only(&check(&wf), Code::TARGET_OUT_OF_SCOPE);
        assert_eq!(d.span, sp(13, 21));
        assert_mentions(
            &d,
            &["the body of foreach task `F`", "transition to `F` instead"],
        );
    }

    #[test]
    fn sibling_branches_are_separate_scopes() {
        let left = vec![task(40, "L", inject()).start().next("R")];
        let right = vec![task(60, "R", inject()).start().end()];
        let wf = workflow(vec![
            task(
                10,
                "P",
                parallel(vec![branch(30, "left", left), branch(50, "right", right)]),
            )
            .start()
            .end(),
        ]);
        let d = only(&check(&wf), Code::TARGET_OUT_OF_SCOPE);
        assert_mentions(&d, &["branch `right`", "not of branch `left`"]);
    }
}
