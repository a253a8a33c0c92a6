//! Exactly one start task per scope (the workflow, each parallel branch, each foreach body).

use super::{Owner, ScopeInfo};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::Task;

/// NO_START at the scope's owner, MANY_STARTS at each start after the first.
pub(super) fn check_scope(info: &ScopeInfo<'_>, diags: &mut Diagnostics) {
    let tasks = &info.scope.tasks;
    let starts: Vec<&Task> = tasks.iter().filter(|t| t.start.is_some()).collect();
    match starts.split_first() {
        None if tasks.is_empty() => no_tasks(info, diags),
        None => no_start(info, diags),
        Some((first, extra)) => {
            for task in extra {
                many_starts(info, first, task, diags);
            }
        }
    }
}

/// An empty branch or body is already reported as missing its tasks; only the workflow itself
/// has no other rule that would say so.
fn no_tasks(info: &ScopeInfo<'_>, diags: &mut Diagnostics) {
    if let Owner::Workflow(_) = info.owner {
        diags
            .error(
                Code::NO_START,
                info.owner.span(),
                "the workflow has no tasks, so it has no start task",
            )
            .help("add `tasks`, and give the task that runs first `start: {kind: default}`");
    }
}

fn no_start(info: &ScopeInfo<'_>, diags: &mut Diagnostics) {
    let scope = info.owner.describe();
    let first = info.scope.tasks.first().map(|t| t.name.as_str());
    let help = match first {
        Some(first) => format!(
            "add `start: {{kind: default}}` to the task that runs first (the first task listed \
             is `{first}`)"
        ),
        None => "add `start: {kind: default}` to the task that runs first".to_owned(),
    };
    diags
        .error(
            Code::NO_START,
            info.owner.span(),
            format!("{scope} has no start task"),
        )
        .help(help);
}

fn many_starts(info: &ScopeInfo<'_>, first: &Task, extra: &Task, diags: &mut Diagnostics) {
    let Some(start) = &extra.start else {
        return;
    };
    let scope = info.owner.describe();
    diags
        .error(
            Code::MANY_STARTS,
            start.span,
            format!(
                "task `{}` declares `start`, but `{}` (line {}) already starts {scope}",
                extra.name.value, first.name.value, first.name.span.line
            ),
        )
        .help(format!(
            "keep `start` on one task of {scope} and remove it from the others"
        ));
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;

    #[test]
    fn workflow_without_start() {
        let wf = workflow(vec![
            task(10, "A", inject()).next("B"),
            task(20, "B", inject()).end(),
        ]);
        let d = only(&check(&wf), Code::NO_START);
        assert_eq!(d.span, sp(1, 1));
        assert_mentions(&d, &["the workflow", "start: {kind: default}", "`A`"]);
    }

    #[test]
    fn empty_workflow_has_no_start() {
        let d = only(&check(&workflow(Vec::new())), Code::NO_START);
        assert_mentions(&d, &["no tasks"]);
    }

    #[test]
    fn branch_and_body_without_start() {
        let branch_tasks = vec![task(40, "B1", inject()).end()];
        let body = vec![task(60, "F1", inject()).end()];
        let wf = workflow(vec![
            task(10, "P", parallel(vec![branch(30, "left", branch_tasks)]))
                .start()
                .next("F"),
            task(50, "F", foreach(body)).end(),
        ]);
        let found = with_code(&check(&wf), Code::NO_START);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].span, sp(30, 9));
        assert_mentions(&found[0], &["branch `left` of parallel task `P`"]);
        assert_eq!(found[1].span, sp(50, 5));
        assert_mentions(&found[1], &["foreach task `F`"]);
    }

    #[test]
    fn each_extra_start_is_reported() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B"),
            task(20, "B", inject()).start().next("C"),
            task(30, "C", inject()).start().end(),
        ]);
        let found = with_code(&check(&wf), Code::MANY_STARTS);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].span, sp(22, 9));
        assert_eq!(found[1].span, sp(32, 9));
        assert_mentions(&found[1], &["`C`", "`A` (line 10)"]);
    }
}
