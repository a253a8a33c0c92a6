//! Validation rules over the IR.
//!
//! [`validate`] runs every rule and records every problem in the [`Diagnostics`] collector; none
//! stops the others. Rules are grouped by subject in the submodules. The walk is deterministic:
//! definitions first, then each scope in document order (the workflow, then the branches and
//! foreach bodies, depth first), and inside a scope each task in document order.

mod compensation;
mod data_shape;
mod events;
mod names;
mod paths;
mod reachability;
mod references;
mod required;
mod set;
mod starts;
pub(crate) mod suggest;
mod transitions;
mod wording;

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

use crate::diagnostic::Diagnostics;
use crate::graph::ScopeGraph;
use crate::ir::{Branch, Scope, Task, TaskKind, Workflow};
use crate::source::Span;

pub use set::{sub_flows, validate_set};

/// Checks the workflow against every rule, recording each problem found.
pub fn validate(workflow: &Workflow, diags: &mut Diagnostics) {
    let before = diags.items().len();
    check(workflow, diags);
    wording::reword(workflow.dialect, diags.recorded_since(before));
}

fn check(workflow: &Workflow, diags: &mut Diagnostics) {
    names::check_definitions(workflow, diags);
    names::check_methods(workflow, diags);
    names::check_workflow_names(workflow, diags);
    events::check_starting_events(workflow, diags);
    events::check_detached_waits(&workflow.scope, diags);
    let cx = Context::new(workflow);
    for (index, (info, graph)) in cx.scopes.iter().zip(&cx.graphs).enumerate() {
        names::check_scope(info, diags);
        names::check_scope_names(info, diags);
        starts::check_scope(info, diags);
        for task in &info.scope.tasks {
            transitions::check_task(&cx, index, task, diags);
            if !task.recovered {
                required::check_task(task, diags);
            }
            references::check_task(&cx, task, diags);
            paths::check_task(task, diags);
        }
        compensation::check_scope(&cx, index, diags);
        reachability::check_scope(info, graph, diags);
    }
    data_shape::check(workflow, diags);
}

/// What every rule may need to look at: the workflow, all its scopes with their graphs, and the
/// defined names in document order.
pub(crate) struct Context<'a> {
    scopes: Vec<ScopeInfo<'a>>,
    /// `graphs[i]` is the graph of `scopes[i]`.
    graphs: Vec<ScopeGraph>,
    functions: Vec<&'a str>,
    events: Vec<&'a str>,
}

impl<'a> Context<'a> {
    fn new(workflow: &'a Workflow) -> Context<'a> {
        let mut scopes = Vec::new();
        collect_scopes(
            &workflow.scope,
            Owner::Workflow(workflow),
            None,
            &mut scopes,
        );
        let graphs = scopes
            .iter()
            .map(|info| ScopeGraph::new(info.scope))
            .collect();
        Context {
            scopes,
            graphs,
            functions: workflow.functions.iter().map(|f| f.name.as_str()).collect(),
            events: workflow.events.iter().map(|e| e.name.as_str()).collect(),
        }
    }

    fn scope(&self, index: usize) -> Option<&ScopeInfo<'a>> {
        self.scopes.get(index)
    }

    fn graph(&self, index: usize) -> Option<&ScopeGraph> {
        self.graphs.get(index)
    }

    /// The first scope in document order, other than `except`, with a task of that name or id.
    fn scope_with_task(&self, name: &str, except: usize) -> Option<usize> {
        self.graphs
            .iter()
            .enumerate()
            .find(|(index, graph)| *index != except && graph.resolve(name).is_some())
            .map(|(index, _)| index)
    }

    /// When `inner` lies (at any depth) inside a task of scope `outer`, that task.
    fn enclosing_task(&self, outer: usize, inner: usize) -> Option<&'a Task> {
        let mut current = self.scope(inner)?;
        loop {
            let (parent, task) = current.parent?;
            if parent == outer {
                return self.scope(parent)?.scope.tasks.get(task);
            }
            current = self.scope(parent)?;
        }
    }
}

/// One scope together with what owns it.
pub(crate) struct ScopeInfo<'a> {
    scope: &'a Scope,
    owner: Owner<'a>,
    /// The enclosing scope's index and the index in it of the task owning this scope.
    parent: Option<(usize, usize)>,
}

/// What a scope belongs to; it names the scope in messages and carries the span of problems
/// that concern the whole scope.
#[derive(Clone, Copy)]
pub(crate) enum Owner<'a> {
    Workflow(&'a Workflow),
    Branch { task: &'a Task, branch: &'a Branch },
    ForEach(&'a Task),
}

impl<'a> Owner<'a> {
    fn span(&self) -> Span {
        match self {
            Owner::Workflow(workflow) => workflow.span,
            Owner::Branch { branch, .. } => branch.span,
            Owner::ForEach(task) => task.span,
        }
    }

    /// The scope as a phrase: "the workflow", "branch `b` of parallel task `p`", ...
    fn describe(&self) -> String {
        match self {
            Owner::Workflow(_) => "the workflow".to_owned(),
            Owner::Branch { task, branch } => format!(
                "branch `{}` of parallel task `{}`",
                branch.name.value, task.name.value
            ),
            Owner::ForEach(task) => format!("the body of foreach task `{}`", task.name.value),
        }
    }

    /// The task owning a nested scope (none for the workflow).
    fn task(&self) -> Option<&'a Task> {
        match self {
            Owner::Workflow(_) => None,
            Owner::Branch { task, .. } | Owner::ForEach(task) => Some(task),
        }
    }
}

/// Lists `scope` and every scope nested in it, depth first in document order.
fn collect_scopes<'a>(
    scope: &'a Scope,
    owner: Owner<'a>,
    parent: Option<(usize, usize)>,
    out: &mut Vec<ScopeInfo<'a>>,
) {
    let index = out.len();
    out.push(ScopeInfo {
        scope,
        owner,
        parent,
    });
    for (task_index, task) in scope.tasks.iter().enumerate() {
        for (nested, nested_owner) in nested_scopes(task) {
            collect_scopes(nested, nested_owner, Some((index, task_index)), out);
        }
    }
}

/// Like [`Task::nested_scopes`], with the owner of each scope.
fn nested_scopes(task: &Task) -> Vec<(&Scope, Owner<'_>)> {
    match &task.kind {
        TaskKind::Parallel { branches, .. } => branches
            .iter()
            .map(|branch| (&branch.scope, Owner::Branch { task, branch }))
            .collect(),
        TaskKind::ForEach { scope, .. } => vec![(scope, Owner::ForEach(task))],
        _ => Vec::new(),
    }
}
