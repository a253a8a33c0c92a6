//! Rules across the workflows compiled together: unique ids, sub-flows that name one of them,
//! and no workflow that runs itself again through its sub-flows.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{EventDef, Scope, TaskKind, Workflow};
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
    check_sub_flow_events(workflows, &ids, diags);
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

/// A sub-flow that a workflow waits for runs inside the workflow's instance, where a host
/// (`Host`, `DurableHost`) routes events by the workflow's own definitions: an event that the
/// sub-flow, or a sub-flow it waits for in turn, waits for can reach it only if the workflow
/// defines it as the sub-flow does. A warning, not an error: the plain `run`, given events
/// through its `Io`, matches them by the sub-flow's own definitions.
fn check_sub_flow_events(
    workflows: &[Option<&Workflow>],
    ids: &[Option<&str>],
    diags: &mut [Diagnostics],
) {
    for (index, workflow) in workflows.iter().enumerate() {
        let Some(workflow) = workflow else { continue };
        for called in waited_sub_flows(&workflow.scope) {
            let Some(target) = ids.iter().position(|id| *id == Some(called.value.as_str())) else {
                continue;
            };
            let mut visited = vec![index];
            let mut reported: Vec<&str> = Vec::new();
            for (owner, event) in waited_events(workflows, ids, target, &mut visited) {
                let defined = workflow
                    .events
                    .iter()
                    .any(|own| same_definition(own, event));
                if defined || reported.contains(&event.name.value.as_str()) {
                    continue;
                }
                reported.push(&event.name.value);
                diags[index]
                    .warning(
                        Code::SUB_FLOW_EVENT_UNDEFINED,
                        called.span,
                        format!(
                            "sub-flow `{}` waits for event `{}`, which `{}` does not define as `{owner}` does: under a host, events reach a sub-flow through the definitions of the workflow that runs it, so none can reach it",
                            called.value, event.name.value, workflow.id.value
                        ),
                    )
                    .help(format!(
                        "add `{}` to the `events` of `{}`",
                        describe(event),
                        workflow.id.value
                    ));
            }
        }
    }
}

/// The event definitions that workflow `index` waits for, and those of the sub-flows it waits
/// for in turn, each with the id of the workflow that defines it. `visited` guards against a
/// cycle (reported on its own, `E0128`).
fn waited_events<'w>(
    workflows: &[Option<&'w Workflow>],
    ids: &[Option<&str>],
    index: usize,
    visited: &mut Vec<usize>,
) -> Vec<(&'w str, &'w EventDef)> {
    if visited.contains(&index) {
        return Vec::new();
    }
    visited.push(index);
    let Some(workflow) = workflows[index] else {
        return Vec::new();
    };
    let mut out: Vec<(&str, &EventDef)> = waited_refs(&workflow.scope)
        .into_iter()
        .filter_map(|name| workflow.events.iter().find(|e| e.name.value == name.value))
        .map(|event| (workflow.id.value.as_str(), event))
        .collect();
    for called in waited_sub_flows(&workflow.scope) {
        if let Some(target) = ids.iter().position(|id| *id == Some(called.value.as_str())) {
            out.extend(waited_events(workflows, ids, target, visited));
        }
    }
    out
}

/// Whether two definitions make the same event spec at run time.
fn same_definition(one: &EventDef, other: &EventDef) -> bool {
    let text = |field: &Option<Spanned<String>>| field.as_ref().map(|f| f.value.clone());
    one.name.value == other.name.value
        && text(&one.source) == text(&other.source)
        && text(&one.event_type) == text(&other.event_type)
        && text(&one.correlation_token) == text(&other.correlation_token)
}

/// `{name: N, source: S, type: T, correlationToken: C}`, as the definition has them.
fn describe(event: &EventDef) -> String {
    let mut fields = vec![format!("name: {}", event.name.value)];
    for (key, field) in [
        ("source", &event.source),
        ("type", &event.event_type),
        ("correlationToken", &event.correlation_token),
    ] {
        if let Some(field) = field {
            fields.push(format!("{key}: {}", field.value));
        }
    }
    format!("{{{}}}", fields.join(", "))
}

/// The `workflowId` of every subflow task the workflow waits for, nested scopes included.
fn waited_sub_flows(scope: &Scope) -> Vec<&Spanned<String>> {
    sub_flow_calls(scope)
        .into_iter()
        .filter_map(|(id, waited)| waited.then_some(id))
        .collect()
}

/// The event names the scope's tasks wait for (event tasks, event conditions, callbacks),
/// nested scopes included.
fn waited_refs(scope: &Scope) -> Vec<&Spanned<String>> {
    let mut out = Vec::new();
    for task in &scope.tasks {
        out.extend(task.waited_event_refs());
        for nested in task.nested_scopes() {
            out.extend(waited_refs(nested));
        }
    }
    out
}

/// The `workflowId` of every subflow task, in document order, nested scopes included.
pub fn sub_flows(scope: &Scope) -> Vec<&Spanned<String>> {
    sub_flow_calls(scope)
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// Each subflow task's `workflowId` and whether the task waits for it, in document order,
/// nested scopes included.
fn sub_flow_calls(scope: &Scope) -> Vec<(&Spanned<String>, bool)> {
    let mut out = Vec::new();
    for task in &scope.tasks {
        if let TaskKind::SubFlow {
            workflow_id: Some(id),
            wait_for_completion,
        } = &task.kind
        {
            out.push((id, *wait_for_completion));
        }
        for nested in task.nested_scopes() {
            out.extend(sub_flow_calls(nested));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Code;
    use crate::source::SourceFile;

    const CHILD: &str = "id: approval\nname: Approval\nversion: '1.0'\nevents:\n  - {name: Approved, source: reviewer, type: request.approved}\ntasks:\n  - name: Await\n    type: event\n    start: {kind: default}\n    eventsActions:\n      - eventRefs: [Approved]\n    end: {kind: default}\n";

    /// The W0005 warnings of the parent `events` (YAML list, may be empty) calling `approval`,
    /// waited for or not.
    fn warnings(events: &str, wait: bool) -> Vec<String> {
        let parent = format!(
            "id: asks\nname: Asks\nversion: '1.0'\nevents: {events}\ntasks:\n  - name: Ask\n    type: subflow\n    start: {{kind: default}}\n    workflowId: approval\n    waitForCompletion: {wait}\n    end: {{kind: default}}\n"
        );
        let compiled = crate::compile_all(&[
            SourceFile::new("asks.sw.yaml", parent),
            SourceFile::new("approval.sw.yaml", CHILD.to_owned()),
        ]);
        assert!(compiled.iter().all(|c| !c.has_errors()), "{compiled:?}");
        compiled[0]
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::SUB_FLOW_EVENT_UNDEFINED)
            .map(|d| format!("{} / {}", d.message, d.help.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_waited_sub_flows_events_must_be_the_callers_too() {
        let found = warnings("[]", true);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("sub-flow `approval` waits for event `Approved`, which `asks` does not define")
                && found[0].contains("add `{name: Approved, source: reviewer, type: request.approved}` to the `events` of `asks`"),
            "{found:?}"
        );
        // Defined otherwise (another type) is not defined.
        let other = "[{name: Approved, source: reviewer, type: request.denied}]";
        assert_eq!(warnings(other, true).len(), 1);
        let same = "[{name: Approved, source: reviewer, type: request.approved}]";
        assert!(warnings(same, true).is_empty());
        // A detached sub-flow is an instance of its own workflow, routed by its own host.
        assert!(warnings("[]", false).is_empty());
    }
}
