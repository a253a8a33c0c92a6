//! Names that must be unique: task names and ids within a scope, function and event names within
//! the workflow. Each repeat is reported at the repeat, pointing back at the first occurrence.
//! And names that must be short, visible text: no control character in any of them, and at most
//! [`MAX_NAME_BYTES`].

use super::{Owner, ScopeInfo};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::Workflow;
use crate::source::{Span, Spanned};
use std::collections::BTreeMap;

/// DUPLICATE_DEFINITION for functions and events.
pub(super) fn check_definitions(workflow: &Workflow, diags: &mut Diagnostics) {
    let functions = workflow.functions.iter().map(|f| Some(&f.name));
    for (first, repeat) in repeats(functions) {
        diags
            .error(
                Code::DUPLICATE_DEFINITION,
                repeat.span,
                format!(
                    "function `{}` is defined twice (first at line {})",
                    repeat.value, first.span.line
                ),
            )
            .help("functions are referenced by name: rename or remove one of the definitions");
    }
    let events = workflow.events.iter().map(|e| Some(&e.name));
    for (first, repeat) in repeats(events) {
        diags
            .error(
                Code::DUPLICATE_DEFINITION,
                repeat.span,
                format!(
                    "event `{}` is defined twice (first at line {})",
                    repeat.value, first.span.line
                ),
            )
            .help("events are referenced by name: rename or remove one of the definitions");
    }
}

/// NAME_CLASH for functions whose names become the same trait method (`notify` and `Notify`):
/// they are the API users implement, so they are not renamed behind their back.
pub(super) fn check_methods(workflow: &Workflow, diags: &mut Diagnostics) {
    let mut methods: BTreeMap<String, &Spanned<String>> = BTreeMap::new();
    for function in &workflow.functions {
        let method = crate::emit::names::method_name(&function.name.value);
        match methods.get(&method) {
            // Equal names are DUPLICATE_DEFINITION.
            Some(first) if first.value != function.name.value => {
                diags
                    .error(
                        Code::NAME_CLASH,
                        function.name.span,
                        format!(
                            "functions `{}` and `{}` (line {}) would both become the trait method `{method}`",
                            function.name.value, first.value, first.span.line
                        ),
                    )
                    .help("rename one of the functions so their snake_case forms differ");
            }
            Some(_) => {}
            None => {
                methods.insert(method, &function.name);
            }
        }
    }
}

/// DUPLICATE_TASK for task names and task ids of one scope.
pub(super) fn check_scope(info: &ScopeInfo<'_>, diags: &mut Diagnostics) {
    let scope = info.owner.describe();
    let names = info.scope.tasks.iter().map(|t| Some(&t.name));
    for (first, repeat) in repeats(names) {
        diags
            .error(
                Code::DUPLICATE_TASK,
                repeat.span,
                format!(
                    "task name `{}` is already used by the task at line {}",
                    repeat.value, first.span.line
                ),
            )
            .help(format!(
                "rename one of them: `nextTask` refers to tasks by name, so names must be unique \
                 within {scope}"
            ));
    }
    let ids = info.scope.tasks.iter().map(|t| t.id.as_ref());
    for (first, repeat) in repeats(ids) {
        diags
            .error(
                Code::DUPLICATE_TASK,
                repeat.span,
                format!(
                    "task id `{}` is already used by the task at line {}",
                    repeat.value, first.span.line
                ),
            )
            .help(format!(
                "give each task its own id: `nextTask` may refer to tasks by id, so ids must be \
                 unique within {scope}"
            ));
    }
}

/// Each later occurrence of a name with its first occurrence, in document order.
fn repeats<'a>(
    names: impl Iterator<Item = Option<&'a Spanned<String>>>,
) -> Vec<(&'a Spanned<String>, &'a Spanned<String>)> {
    let mut first_seen: BTreeMap<&str, &Spanned<String>> = BTreeMap::new();
    let mut out = Vec::new();
    for name in names.flatten() {
        match first_seen.get(name.as_str()) {
            Some(first) => out.push((*first, name)),
            None => {
                first_seen.insert(name.as_str(), name);
            }
        }
    }
    out
}

/// CONTROL_CHARACTER and LIMIT for the workflow's id and version, its function and event names
/// and its events' correlation attributes.
pub(super) fn check_workflow_names(workflow: &Workflow, diags: &mut Diagnostics) {
    check_name(
        "the workflow id",
        &workflow.id.value,
        workflow.id.span,
        diags,
    );
    if let Some(version) = &workflow.version {
        check_name("the workflow version", &version.value, version.span, diags);
    }
    for function in &workflow.functions {
        check_name(
            "function name",
            &function.name.value,
            function.name.span,
            diags,
        );
    }
    for event in &workflow.events {
        check_name("event name", &event.name.value, event.name.span, diags);
        if let Some(attribute) = &event.correlation_token {
            check_name(
                "correlation attribute",
                &attribute.value,
                attribute.span,
                diags,
            );
        }
    }
}

/// CONTROL_CHARACTER and LIMIT for the names of a scope's tasks and of the branch it is.
pub(super) fn check_scope_names(info: &ScopeInfo<'_>, diags: &mut Diagnostics) {
    if let Owner::Branch { branch, .. } = info.owner {
        check_name("branch name", &branch.name.value, branch.name.span, diags);
    }
    for task in &info.scope.tasks {
        check_name("task name", &task.name.value, task.name.span, diags);
    }
}

/// The longest name, in bytes: the durable stores index names, and PostgreSQL's index entries
/// hold at most 2,704 bytes.
pub(crate) const MAX_NAME_BYTES: usize = 512;

/// CONTROL_CHARACTER when `text` (`what`, at `span`) holds one; LIMIT when it is longer than
/// [`MAX_NAME_BYTES`].
fn check_name(what: &str, text: &str, span: Span, diags: &mut Diagnostics) {
    if text.len() > MAX_NAME_BYTES {
        diags
            .error(
                Code::LIMIT,
                span,
                format!(
                    "{what} is {} bytes long, more than the {MAX_NAME_BYTES} a name may have",
                    text.len()
                ),
            )
            .help("shorten it: names are shown in messages and traces, and the durable stores index them");
    }
    if let Some(control) = text.chars().find(|c| c.is_control()) {
        diags
            .error(
                Code::CONTROL_CHARACTER,
                span,
                format!(
                    "{what} {text:?} holds the control character U+{:04X}",
                    u32::from(control)
                ),
            )
            .help("write the name with visible characters and spaces: messages, traces and the stores show it as it is");
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;

    #[test]
    fn duplicate_task_name_is_reported_at_the_second() {
        let mut wf = valid_pair();
        wf.scope.tasks.push(task(30, "A", inject()).end());
        let d = only(&check(&wf), Code::DUPLICATE_TASK);
        assert_eq!(d.span, sp(30, 11));
        assert_mentions(&d, &["`A`", "line 10", "rename", "the workflow"]);
    }

    #[test]
    fn duplicate_task_id_is_reported_at_the_second() {
        let wf = workflow(vec![
            task(10, "A", inject()).start().next("B").id("x"),
            task(20, "B", inject()).end().id("x"),
        ]);
        let d = only(&check(&wf), Code::DUPLICATE_TASK);
        assert_eq!(d.span, sp(21, 9));
        assert_mentions(&d, &["id `x`", "line 11"]);
    }

    #[test]
    fn same_name_in_different_scopes_is_fine() {
        let body = vec![task(40, "A", inject()).start().end()];
        let wf = workflow(vec![
            task(10, "A", foreach(body)).start().next("B"),
            task(20, "B", inject()).end(),
        ]);
        assert!(with_code(&check(&wf), Code::DUPLICATE_TASK).is_empty());
    }

    #[test]
    fn duplicate_definitions() {
        let mut wf = valid_pair();
        wf.functions = vec![function(50, "f"), function(51, "g"), function(52, "f")];
        wf.events = vec![event(60, "e"), event(61, "e")];
        let found = with_code(&check(&wf), Code::DUPLICATE_DEFINITION);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].span, sp(52, 13));
        assert_mentions(&found[0], &["function `f`", "line 50"]);
        assert_eq!(found[1].span, sp(61, 13));
        assert_mentions(&found[1], &["event `e`", "line 60"]);
    }
}
