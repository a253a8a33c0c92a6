//! Following the shape of the data through the tasks of a scope: each task's incoming shape is
//! the union of what its predecessors hand over, computed to a fixed point, then each task's
//! paths are checked against it.

use super::checks;
use super::shape::Shape;
use crate::diagnostic::Diagnostics;
use crate::ir::{PathKind, SchemaRef, Scope, SwitchConditions, Task, TaskKind};

pub(super) fn check_scope(scope: &Scope, start: Shape, diags: &mut Diagnostics) {
    let Some(incoming) = incoming_shapes(scope, start) else {
        return;
    };
    for (task, shape) in scope.tasks.iter().zip(incoming) {
        let Some(shape) = shape else { continue };
        if task.recovered {
            continue;
        }
        let data = checks::check_task(task, &shape, diags);
        for (nested, start) in nested_starts(task, &data) {
            check_scope(nested, start, diags);
        }
    }
}

/// The shape each task of `scope` starts from (`None`: no path reaches it); `None` when no
/// fixed point was reached in time (nothing is checked then, rather than something wrongly).
fn incoming_shapes(scope: &Scope, start: Shape) -> Option<Vec<Option<Shape>>> {
    let count = scope.tasks.len();
    let targets = scope.targets();
    let mut incoming: Vec<Option<Shape>> = vec![None; count];
    let starts: Vec<usize> = scope
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, task)| task.start.is_some())
        .map(|(index, _)| index)
        .collect();
    for index in if starts.is_empty() { vec![0] } else { starts } {
        if let Some(slot) = incoming.get_mut(index) {
            *slot = Some(start.clone());
        }
    }
    for _ in 0..count + 8 {
        let mut changed = false;
        for (index, task) in scope.tasks.iter().enumerate() {
            let Some(shape) = incoming[index].clone() else {
                continue;
            };
            let output = output_shape(task, &shape);
            let handed = task
                .success_transitions()
                .into_iter()
                .map(|t| (t, output.clone()))
                .chain(
                    task.on_error
                        .iter()
                        .filter_map(|h| h.transition.as_ref())
                        .map(|t| (t, Shape::Any)),
                );
            for (transition, shape) in handed {
                let Some(&target) = targets.get(transition.next.value.as_str()) else {
                    continue;
                };
                let joined = match &incoming[target] {
                    Some(existing) => existing.union(&shape),
                    None => shape,
                };
                if incoming[target].as_ref() != Some(&joined) {
                    incoming[target] = Some(joined);
                    changed = true;
                }
            }
        }
        if !changed {
            return Some(incoming);
        }
    }
    None
}

/// The shape of a declared schema, when it was read.
pub(super) fn declared(schema: Option<&SchemaRef>) -> Option<Shape> {
    schema
        .and_then(|s| s.document.as_ref())
        .map(|document| Shape::from_schema(&document.json))
}

/// The task's data once it begins: its input filter applied, then its input schema (which the
/// run checks) taken as what is known.
pub(super) fn task_data(task: &Task, incoming: &Shape) -> Shape {
    if let Some(shape) = declared(task.schemas.input.as_ref()) {
        return shape;
    }
    match &task.data_filter.input {
        None => incoming.clone(),
        Some(path) => selected(incoming, &path.kind),
    }
}

/// What a filter path selects of data of `shape`; unknown unless it surely selects a
/// member (a filter that selects nothing leaves the data whole).
fn selected(shape: &Shape, kind: &PathKind) -> Shape {
    match kind {
        PathKind::Definite(segments) => match shape.lookup(segments) {
            super::shape::Lookup::Found(found) => found.clone(),
            _ => Shape::Any,
        },
        _ => Shape::Any,
    }
}

/// The task's output, as the next task receives it.
fn output_shape(task: &Task, incoming: &Shape) -> Shape {
    let data = task_data(task, incoming);
    let done = declared(task.schemas.output.as_ref()).unwrap_or_else(|| work_done(task, &data));
    match &task.data_filter.output {
        None => done,
        Some(path) => selected(&done, &path.kind),
    }
}

/// The task's data when its work is done.
pub(super) fn work_done(task: &Task, data: &Shape) -> Shape {
    match &task.kind {
        TaskKind::Inject { data: injected } => data.merged(&Shape::of_value(injected)),
        TaskKind::Operation { actions, .. } => {
            actions.iter().fold(data.clone(), |shape, action| {
                written(&shape, action.results_path.as_ref().map(|p| &p.kind))
            })
        }
        TaskKind::Event { events_actions, .. } => {
            events_actions.iter().fold(data.clone(), |shape, entry| {
                let with_event =
                    written(&shape, entry.event_results_path.as_ref().map(|p| &p.kind));
                entry.actions.iter().fold(with_event, |shape, action| {
                    written(&shape, action.results_path.as_ref().map(|p| &p.kind))
                })
            })
        }
        TaskKind::Switch(switch) => match switch.conditions {
            SwitchConditions::Data(_) => data.clone(),
            SwitchConditions::Event(_) => Shape::Any,
        },
        TaskKind::Delay { .. } => data.clone(),
        TaskKind::SubFlow {
            wait_for_completion: false,
            ..
        } => data.clone(),
        TaskKind::ForEach {
            output_collection, ..
        } => match output_collection.as_ref().map(|p| &p.kind) {
            Some(PathKind::Definite(segments)) => data.with_written(segments, Shape::Any),
            Some(_) => Shape::Any,
            None => data.clone(),
        },
        TaskKind::Parallel { .. } | TaskKind::SubFlow { .. } | TaskKind::Callback { .. } => {
            Shape::Any
        }
    }
}

/// The data after a result of unknown shape is written at `path` (merged without one).
fn written(shape: &Shape, path: Option<&PathKind>) -> Shape {
    match path {
        Some(PathKind::Definite(segments)) => shape.with_written(segments, Shape::Any),
        _ => Shape::Any,
    }
}

/// The scopes nested in `task` with the shape each starts from, given the task's data.
fn nested_starts<'a>(task: &'a Task, data: &Shape) -> Vec<(&'a Scope, Shape)> {
    match &task.kind {
        TaskKind::Parallel { branches, .. } => branches
            .iter()
            .map(|branch| (&branch.scope, data.clone()))
            .collect(),
        TaskKind::ForEach {
            input_collection,
            input_parameter,
            element_as_input,
            scope,
            ..
        } => {
            let element = match input_collection.as_ref().map(|p| &p.kind) {
                Some(PathKind::Definite(segments)) => match data.lookup(segments) {
                    super::shape::Lookup::Found(Shape::Known(known)) => {
                        known.items.as_deref().cloned().unwrap_or_default()
                    }
                    _ => Shape::Any,
                },
                _ => Shape::Any,
            };
            let start = match (element_as_input, input_parameter.as_ref().map(|p| &p.kind)) {
                (true, _) => element,
                (false, Some(PathKind::Definite(segments))) => data.with_written(segments, element),
                _ => Shape::Any,
            };
            vec![(scope, start)]
        }
        _ => Vec::new(),
    }
}
