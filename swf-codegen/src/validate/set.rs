//! Rules across the workflows compiled together: unique ids, sub-flows that name one of them,
//! and no workflow that runs itself again through its sub-flows.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Scope, TaskKind, Workflow};
use crate::source::Spanned;
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// `workflows[i]` is the IR of file `i` (if it parsed); its diagnostics go to `diags[i]`.
pub fn validate_set(workflows: &[Option<&Workflow>], diags: &mut [Diagnostics]) {
    let ids: Vec<Option<&str>> = workflows
        .iter()
        .map(|w| w.map(|w| w.id.value.as_str()).filter(|id| !id.is_empty()))
        .collect();
    // Ids also name the generated types, so two ids that differ only in case or punctuation
    // (`order-v2`, `orderV2`) clash as well.
    let bases: Vec<Option<String>> = ids
        .iter()
        .map(|id| id.map(|id| crate::emit::PublicNames::from_id(id).base))
        .collect();
    for (index, workflow) in workflows.iter().enumerate() {
        let Some(workflow) = workflow else { continue };
        let Some(first) = bases[..index]
            .iter()
            .position(|base| base.is_some() && *base == bases[index])
        else {
            continue;
        };
        let other = workflows[first].map_or("", |w| w.file.as_str());
        let base = bases[index].as_deref().unwrap_or("");
        let message = match ids[first] {
            Some(id) if id == workflow.id.value => {
                format!("`{id}` is also the id of the workflow in {other}")
            }
            other_id => format!(
                "ids `{}` and `{}` (in {other}) both name the generated types `{base}Workflow`, `{base}State`, ...",
                workflow.id.value,
                other_id.unwrap_or("")
            ),
        };
        diags[index]
            .error(Code::DUPLICATE_WORKFLOW, workflow.id.span, message)
            .help("give each workflow compiled together its own `id`");
    }

    let mut graph = DiGraph::<usize, Spanned<String>>::new();
    let nodes: Vec<_> = (0..workflows.len()).map(|i| graph.add_node(i)).collect();
    for (index, workflow) in workflows.iter().enumerate() {
        let Some(workflow) = workflow else { continue };
        for called in sub_flows(&workflow.scope) {
            match ids.iter().position(|id| *id == Some(called.value.as_str())) {
                Some(target) => {
                    graph.add_edge(nodes[index], nodes[target], called.clone());
                }
                None => {
                    let known: Vec<&str> = ids.iter().flatten().copied().collect();
                    let diagnostic = diags[index].error(
                        Code::UNKNOWN_WORKFLOW,
                        called.span,
                        format!(
                            "`workflowId` names `{}`, which is not the id of a workflow compiled with this one",
                            called.value
                        ),
                    );
                    match crate::parse::closest(&called.value, &known) {
                        Some(close) => diagnostic.help(format!(
                            "did you mean `{close}`? Otherwise compile the called workflow's file together with this one"
                        )),
                        None => diagnostic.help(
                            "compile the called workflow's file together with this one: list both in `workflow!(...)` or the same `Builder`",
                        ),
                    };
                }
            }
        }
    }
    for component in tarjan_scc(&graph) {
        let cyclic = component.len() > 1 || graph.contains_edge(component[0], component[0]);
        if !cyclic {
            continue;
        }
        let mut members: Vec<usize> = component.iter().map(|n| graph[*n]).collect();
        members.sort_unstable();
        let first = members[0];
        let names: Vec<String> = members
            .iter()
            .filter_map(|m| workflows[*m].map(|w| format!("`{}`", w.id.value)))
            .collect();
        let span = graph
            .edges(nodes[first])
            .find(|e| members.contains(&graph[petgraph::visit::EdgeRef::target(e)]))
            .map(|e| e.weight().span);
        if let (Some(span), Some(_)) = (span, workflows[first]) {
            diags[first]
                .error(
                    Code::SUBFLOW_CYCLE,
                    span,
                    format!(
                        "workflows {} call each other through sub-flows",
                        names.join(", ")
                    ),
                )
                .help(
                    "a workflow must not run itself again through its sub-flows: break the cycle",
                );
        }
    }
}

/// The `workflowId` of every subflow task, in document order, nested scopes included.
pub fn sub_flows(scope: &Scope) -> Vec<&Spanned<String>> {
    let mut out = Vec::new();
    for task in &scope.tasks {
        if let TaskKind::SubFlow {
            workflow_id: Some(id),
            ..
        } = &task.kind
        {
            out.push(id);
        }
        for nested in task.nested_scopes() {
            out.extend(sub_flows(nested));
        }
    }
    out
}
