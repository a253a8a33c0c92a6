//! Compensation rules (`compensatedBy`, `usedForCompensation`, `compensate: true`).
//!
//! Compensation tasks form a separate part of their scope: they run only when an end or a
//! transition with `compensate: true` undoes the tasks that completed, each chain starting at the
//! task a `compensatedBy` names and following transitions among compensation tasks until it ends.
//! So a `compensatedBy` must name a compensation task of the same scope that is not compensated
//! itself, no transition may cross between the two parts, no compensation task starts a scope,
//! and compensation does not nest. Reachability (`reachability.rs`) enters compensation tasks
//! from the tasks named by `compensatedBy`, see [`entries`].

use super::{Context, ScopeInfo, suggest};
use crate::diagnostic::{Code, Diagnostics};
use crate::graph::ScopeGraph;
use crate::ir::{Scope, Task};
use crate::source::Spanned;

#[cfg(test)]
mod tests;

/// Every compensation rule for the scope at `index`.
pub(super) fn check_scope(cx: &Context<'_>, index: usize, diags: &mut Diagnostics) {
    let (Some(info), Some(graph)) = (cx.scope(index), cx.graph(index)) else {
        return;
    };
    let tasks = &info.scope.tasks;
    let named = named(info.scope, graph);
    for (position, task) in tasks.iter().enumerate() {
        if let Some(target) = &task.compensated_by {
            check_reference(cx, index, info, graph, task, target, diags);
        }
        if task.used_for_compensation {
            check_compensation_task(info, task, named.contains(&position), diags);
        }
        for transition in task.transitions() {
            let Some(next) = graph.resolve(&transition.next.value) else {
                continue;
            };
            if let Some(next_task) = tasks.get(next) {
                check_crossing(task, next_task, &transition.next, diags);
            }
        }
    }
}

/// The compensation tasks where compensation chains begin: every task of the scope that some
/// `compensatedBy` names and that is marked `usedForCompensation`, in document order. `None` when
/// a `compensatedBy` names no task of the scope: that is reported, and the chains are then not
/// the ones the user meant, so which compensation tasks never run is not worth reporting.
pub(super) fn entries(scope: &Scope, graph: &ScopeGraph) -> Option<Vec<usize>> {
    let dangling = scope
        .tasks
        .iter()
        .filter_map(|t| t.compensated_by.as_ref())
        .any(|target| graph.resolve(&target.value).is_none());
    if dangling {
        return None;
    }
    let found = named(scope, graph)
        .into_iter()
        .filter(|&t| scope.tasks.get(t).is_some_and(|t| t.used_for_compensation))
        .collect();
    Some(found)
}

/// Every task of the scope that some `compensatedBy` names, ascending, each once.
fn named(scope: &Scope, graph: &ScopeGraph) -> Vec<usize> {
    let mut found: Vec<usize> = scope
        .tasks
        .iter()
        .filter_map(|t| t.compensated_by.as_ref())
        .filter_map(|target| graph.resolve(&target.value))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// UNREACHABLE for a compensation task that no compensation chain reaches.
pub(super) fn unreachable(info: &ScopeInfo<'_>, task: &Task, diags: &mut Diagnostics) {
    let name = &task.name.value;
    diags
        .error(
            Code::UNREACHABLE,
            task.name.span,
            format!(
                "compensation task `{name}` never runs: no `compensatedBy` of {} names it, and no \
                 compensation task that one names transitions to it",
                info.owner.describe()
            ),
        )
        .help(format!(
            "add `compensatedBy: {name}` to the task it undoes, or remove `{name}`"
        ));
}

/// BAD_COMPENSATION: the target must be a task of this scope, marked `usedForCompensation`, and
/// not compensated itself.
fn check_reference(
    cx: &Context<'_>,
    index: usize,
    info: &ScopeInfo<'_>,
    graph: &ScopeGraph,
    task: &Task,
    target: &Spanned<String>,
    diags: &mut Diagnostics,
) {
    let name = &task.name.value;
    let wanted = &target.value;
    let scope = info.owner.describe();
    let Some(found) = graph.resolve(wanted).and_then(|t| info.scope.tasks.get(t)) else {
        let help = match cx.scope_with_task(wanted, index).and_then(|s| cx.scope(s)) {
            Some(elsewhere) => format!(
                "`{wanted}` is a task of {}: compensation runs within one scope, so move the \
                 compensation task into {scope}",
                elsewhere.owner.describe()
            ),
            None => {
                let candidates: Vec<&str> = info
                    .scope
                    .tasks
                    .iter()
                    .filter(|t| t.used_for_compensation)
                    .map(|t| t.name.as_str())
                    .collect();
                match suggest::closest(wanted, candidates.iter().copied()) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None if candidates.is_empty() => format!(
                        "add the task that undoes `{name}` to {scope}, with \
                         `usedForCompensation: true`"
                    ),
                    None => format!(
                        "name one of the compensation tasks of {scope}: {}",
                        suggest::list(candidates)
                    ),
                }
            }
        };
        diags
            .error(
                Code::BAD_COMPENSATION,
                target.span,
                format!(
                    "`compensatedBy` of task `{name}` names `{wanted}`, but {scope} has no task \
                     with that name or id"
                ),
            )
            .help(help);
        return;
    };
    let found_name = &found.name.value;
    if !found.used_for_compensation {
        diags
            .error(
                Code::BAD_COMPENSATION,
                target.span,
                format!(
                    "`compensatedBy` of task `{name}` names `{found_name}`, which is not marked \
                     `usedForCompensation: true`"
                ),
            )
            .help(format!(
                "add `usedForCompensation: true` to task `{found_name}` (line {}) if it only \
                 undoes other tasks, or name the task that does",
                found.name.span.line
            ));
    } else if let Some(further) = &found.compensated_by {
        diags
            .error(
                Code::BAD_COMPENSATION,
                target.span,
                format!(
                    "`compensatedBy` of task `{name}` names `{found_name}`, which is itself \
                     compensated by `{}` (line {})",
                    further.value, further.span.line
                ),
            )
            .help(format!(
                "a compensation is not undone in turn: remove `compensatedBy` from \
                 `{found_name}`"
            ));
    }
}

/// A compensation task cannot start its scope, cannot ask for compensation and is not itself
/// compensated (when no `compensatedBy` names it directly; otherwise the naming task reports it).
fn check_compensation_task(
    info: &ScopeInfo<'_>,
    task: &Task,
    named: bool,
    diags: &mut Diagnostics,
) {
    let name = &task.name.value;
    if let Some(start) = &task.start {
        diags
            .error(
                Code::COMPENSATION_CROSSING,
                start.span,
                format!(
                    "compensation task `{name}` cannot start {}",
                    info.owner.describe()
                ),
            )
            .help(format!(
                "compensation tasks only run to undo completed tasks: remove `start` here, or \
                 remove `usedForCompensation` if `{name}` is a normal task"
            ));
    }
    if let Some(further) = &task.compensated_by
        && !named
    {
        diags
            .error(
                Code::NESTED_COMPENSATION,
                further.span,
                format!(
                    "compensation task `{name}` cannot itself be compensated by `{}`",
                    further.value
                ),
            )
            .help("a compensation is not undone in turn: remove `compensatedBy` here");
    }
    let asks = task
        .transitions()
        .into_iter()
        .filter(|t| t.compensate)
        .map(|t| t.span)
        .chain(task.end.iter().filter(|e| e.compensate).map(|e| e.span));
    for span in asks {
        diags
            .error(
                Code::NESTED_COMPENSATION,
                span,
                format!("compensation task `{name}` asks for compensation (`compensate: true`)"),
            )
            .help(
                "compensation runs the compensation of every completed task once; a compensation \
                 task cannot start another one: remove `compensate: true` here",
            );
    }
}

/// COMPENSATION_CROSSING for a transition from a normal task to a compensation task or back.
fn check_crossing(from: &Task, to: &Task, next: &Spanned<String>, diags: &mut Diagnostics) {
    let (from_name, to_name) = (&from.name.value, &to.name.value);
    match (from.used_for_compensation, to.used_for_compensation) {
        (false, true) => {
            diags
                .error(
                    Code::COMPENSATION_CROSSING,
                    next.span,
                    format!(
                        "task `{from_name}` transitions to `{to_name}`, a compensation task \
                         (`usedForCompensation: true`)"
                    ),
                )
                .help(format!(
                    "compensation tasks run only when an end or transition with `compensate: \
                     true` undoes the tasks that completed: name a normal task here, or remove \
                     `usedForCompensation` from `{to_name}`"
                ));
        }
        (true, false) => {
            diags
                .error(
                    Code::COMPENSATION_CROSSING,
                    next.span,
                    format!(
                        "compensation task `{from_name}` transitions to `{to_name}`, a normal \
                         task"
                    ),
                )
                .help(
                    "a compensation ends with `end` (its output becomes the data the end or \
                     transition that asked for compensation continues with): transition only to \
                     other compensation tasks",
                );
        }
        _ => {}
    }
}
