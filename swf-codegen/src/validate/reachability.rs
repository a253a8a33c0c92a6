//! Graph rules: every task is reachable from the start (a compensation task from the tasks that
//! `compensatedBy` names), and no cycle traps execution.

use super::{ScopeInfo, compensation};
use crate::diagnostic::{Code, Diagnostics};
use crate::graph::ScopeGraph;
use crate::ir::Task;

/// UNREACHABLE and NO_EXIT for one scope.
pub(super) fn check_scope(info: &ScopeInfo<'_>, graph: &ScopeGraph, diags: &mut Diagnostics) {
    // Without a unique start or with dangling targets, the graph is not the one the user meant:
    // those problems are already reported, and graph findings would only repeat them.
    let Some(start) = graph.start() else {
        return;
    };
    if !graph.unresolved().is_empty() {
        return;
    }
    let tasks = &info.scope.tasks;
    let start_name = tasks.get(start).map_or("", |t| t.name.as_str());
    // Compensation chains are entered from compensation, not from the start.
    let entries = compensation::entries(info.scope, graph);
    let mut roots = vec![start];
    roots.extend(entries.iter().flatten());
    let reachable = graph.reachable_from(&roots);
    // A task the parser recovered (an unknown type) may lead where fields nobody could read
    // say (a misspelt switch's choices): once it runs, graph findings would be guesses about a
    // problem reported already.
    if tasks
        .iter()
        .zip(&reachable)
        .any(|(task, seen)| task.recovered && *seen)
    {
        return;
    }
    for (task, _) in tasks.iter().zip(&reachable).filter(|(_, seen)| !**seen) {
        if task.used_for_compensation {
            if entries.is_some() {
                compensation::unreachable(info, task, diags);
            }
        } else {
            unreachable(info, task, start_name, diags);
        }
    }
    for cycle in graph.cycles_without_exit() {
        // Unreachable cycles are already reported task by task.
        if cycle
            .iter()
            .any(|&t| reachable.get(t).copied().unwrap_or(false))
        {
            no_exit(tasks, &cycle, diags);
        }
    }
}

fn unreachable(info: &ScopeInfo<'_>, task: &Task, start: &str, diags: &mut Diagnostics) {
    let name = &task.name.value;
    diags
        .error(
            Code::UNREACHABLE,
            task.name.span,
            format!(
                "task `{name}` cannot be reached from `{start}`, the start task of {}",
                info.owner.describe()
            ),
        )
        .help(format!(
            "add a transition to `{name}` (`nextTask: {name}`) from a task that runs, or remove it"
        ));
}

fn no_exit(tasks: &[Task], cycle: &[usize], diags: &mut Diagnostics) {
    let Some(first) = cycle.first().and_then(|&t| tasks.get(t)) else {
        return;
    };
    let names: Vec<String> = cycle
        .iter()
        .filter_map(|&t| tasks.get(t))
        .map(|t| format!("`{}`", t.name.value))
        .collect();
    let message = match names.as_slice() {
        [only] => format!("task {only} only transitions to itself and never reaches an end"),
        _ => format!(
            "tasks {} → `{}` form a cycle that never reaches an end",
            names.join(" → "),
            first.name.value
        ),
    };
    diags.error(Code::NO_EXIT, first.name.span, message).help(
        "let one of these tasks leave the cycle, through a switch condition or `default` or an \
         `onError` transition, to a task that leads to an `end`",
    );
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;
    use crate::ir::SwitchConditions;

    #[test]
    fn unreachable_tasks_are_reported_each() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().end(),
            task(20, "Lost", inject()).next("AlsoLost"),
            task(30, "AlsoLost", inject()).end(),
        ]);
        let found = with_code(&check(&wf), Code::UNREACHABLE);
        let spans: Vec<_> = found.iter().map(|d| d.span).collect();
        assert_eq!(spans, vec![sp(20, 11), sp(30, 11)]);
        assert_mentions(
            &found[0],
            &["`Lost`", "from `A`", "the workflow", "nextTask: Lost"],
        );
    }

    #[test]
    fn on_error_and_switch_transitions_make_tasks_reachable() {
        let conditions = SwitchConditions::Data(vec![data_condition(22, "C")]);
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B").on_error(15, "D"),
            task(20, "B", switch(conditions, Some(transition(23, "D")))),
            task(30, "C", inject()).end(),
            task(40, "D", inject()).end(),
        ]);
        assert_eq!(check(&wf), Vec::new());
    }

    #[test]
    fn cycle_without_exit_is_reported_once() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B"),
            task(20, "B", inject()).next("C"),
            task(30, "C", inject()).next("B"),
        ]);
        let d = only(&check(&wf), Code::NO_EXIT);
        assert_eq!(d.span, sp(20, 11));
        assert_eq!(
            d.message,
            "tasks `B` → `C` → `B` form a cycle that never reaches an end"
        );
    }

    #[test]
    fn self_loop_without_exit() {
        let wf = workflow(vec![task(10, "A", inject()).start().next("A")]);
        let d = only(&check(&wf), Code::NO_EXIT);
        assert_mentions(&d, &["`A` only transitions to itself"]);
    }

    #[test]
    fn cycle_with_an_exit_is_fine() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B"),
            task(20, "B", inject()).next("A").on_error(25, "Done"),
            task(30, "Done", inject()).end(),
        ]);
        assert_eq!(check(&wf), Vec::new());
    }

    #[test]
    fn graph_rules_are_skipped_for_broken_scopes_only() {
        let body = vec![
            task(40, "In", inject()).start().next("Nowhere"),
            task(50, "Orphan", inject()).end(),
        ];
        let wf = workflow(vec![
            task(10, "A", foreach(body)).start().end(),
            task(20, "Lost", inject()).end(),
        ]);
        let found = check(&wf);
        let unreachable = with_code(&found, Code::UNREACHABLE);
        assert_eq!(unreachable.len(), 1, "only the workflow's graph is checked");
        assert_mentions(&unreachable[0], &["`Lost`"]);
        assert_eq!(with_code(&found, Code::UNKNOWN_TARGET).len(), 1);
    }

    #[test]
    fn scopes_without_unique_start_skip_graph_rules() {
        let wf = workflow(vec![
            task(10, "A", inject()).next("A"),
            task(20, "B", inject()).end(),
        ]);
        let found = check(&wf);
        assert_eq!(with_code(&found, Code::NO_START).len(), 1);
        assert!(with_code(&found, Code::UNREACHABLE).is_empty());
        assert!(with_code(&found, Code::NO_EXIT).is_empty());
    }
}
