//! References to definitions: `functionRef.refName` to `functions`, every `eventRef` to `events`.
//! Names match exactly, as the drafts compare them; a near miss is offered in the help.

use super::{Context, suggest};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{EndKind, Task};
use crate::source::Spanned;

pub(super) fn check_task(cx: &Context<'_>, task: &Task, diags: &mut Diagnostics) {
    for action in task.actions() {
        if let Some(function) = &action.function {
            check_function(cx, &function.ref_name, diags);
        }
    }
    for event in event_refs(task) {
        check_event(cx, event, diags);
    }
}

/// Every event name the task refers to: consumed events first, then produced ones.
fn event_refs(task: &Task) -> Vec<&Spanned<String>> {
    let mut out = task.waited_event_refs();
    let produced = task
        .transitions()
        .into_iter()
        .filter_map(|t| t.produce_event.as_ref());
    out.extend(produced.map(|p| &p.event_ref));
    if let Some(end) = &task.end
        && let EndKind::Event {
            produce: Some(produce),
        } = &end.kind
    {
        out.push(&produce.event_ref);
    }
    out
}

fn check_function(cx: &Context<'_>, name: &Spanned<String>, diags: &mut Diagnostics) {
    if cx.functions.contains(&name.as_str()) {
        return;
    }
    let help = undefined_help(
        &name.value,
        &cx.functions,
        "functions",
        &format!("{{name: {}, resource: ...}}", name.value),
    );
    diags
        .error(
            Code::UNDEFINED_FUNCTION,
            name.span,
            format!("function `{}` is not defined", name.value),
        )
        .help(help);
}

fn check_event(cx: &Context<'_>, name: &Spanned<String>, diags: &mut Diagnostics) {
    if cx.events.contains(&name.as_str()) {
        return;
    }
    let help = undefined_help(
        &name.value,
        &cx.events,
        "events",
        &format!("{{name: {}, source: ..., type: ...}}", name.value),
    );
    diags
        .error(
            Code::UNDEFINED_EVENT,
            name.span,
            format!("event `{}` is not defined", name.value),
        )
        .help(help);
}

/// A near miss when there is one, else how to define the name.
fn undefined_help(wanted: &str, defined: &[&str], section: &str, example: &str) -> String {
    if let Some(close) = suggest::closest(wanted, defined.iter().copied()) {
        return format!("did you mean `{close}`?");
    }
    if defined.is_empty() {
        return format!("the workflow defines no {section}: add `{section}: [{example}]`");
    }
    format!(
        "add `{example}` to `{section}`, or use one of {}",
        suggest::list(defined.iter().copied())
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;
    use crate::ir::*;

    #[test]
    fn undefined_function_with_suggestion() {
        let mut wf = workflow(vec![
            task(10, "A", operation(vec![action(11, "chekCredit")]))
                .start()
                .end(),
        ]);
        wf.functions = vec![function(3, "checkCredit")];
        let d = only(&check(&wf), Code::UNDEFINED_FUNCTION);
        assert_eq!(d.span, sp(11, 30));
        assert_mentions(&d, &["`chekCredit`", "did you mean `checkCredit`?"]);
    }

    #[test]
    fn undefined_function_without_any_functions() {
        let wf = workflow(vec![
            task(10, "A", operation(vec![action(11, "f")]))
                .start()
                .end(),
        ]);
        let d = only(&check(&wf), Code::UNDEFINED_FUNCTION);
        assert_mentions(&d, &["defines no functions", "{name: f, resource: ...}"]);
    }

    #[test]
    fn function_names_match_exactly() {
        let mut wf = workflow(vec![
            task(10, "A", operation(vec![action(11, "CHECK")]))
                .start()
                .end(),
        ]);
        wf.functions = vec![function(3, "check")];
        let d = only(&check(&wf), Code::UNDEFINED_FUNCTION);
        assert_mentions(&d, &["did you mean `check`?"]);
    }

    #[test]
    fn every_kind_of_event_reference_is_checked() {
        let events_actions = vec![EventActions {
            timeout: None,
            condition: None,
            event_results_path: None,
            transition: None,
            event_refs: vec![text("Consumed", 11, 20), text("Known", 11, 40)],
            action_mode: ActionMode::Sequential,
            actions: Vec::new(),
            event_data_filter: None,
            span: sp(11, 9),
        }];
        let event_task = TaskKind::Event {
            exclusive: true,
            events_actions,
            timeout: None,
        };
        let conditions = SwitchConditions::Event(vec![EventCondition {
            event_ref: Some(text("Awaited", 22, 20)),
            transition: Some(transition(22, "C")),
            event_data_filter: None,
            span: sp(22, 9),
        }]);
        let callback = TaskKind::Callback {
            action: Some(action(31, "f")),
            event_ref: Some(text("CalledBack", 32, 20)),
            timeout: Some(duration(33)),
            event_data_filter: None,
        };
        let mut first = task(10, "A", event_task).start().next("B");
        if let Some(t) = first.transition.as_mut() {
            t.produce_event = Some(produce(13, "OnTheWay"));
        }
        let mut last = task(30, "C", callback);
        last.end = Some(End {
            compensate: false,
            status: None,
            kind: EndKind::Event {
                produce: Some(produce(34, "Finished")),
            },
            span: sp(34, 9),
        });
        let mut wf = workflow(vec![
            first,
            task(20, "B", switch(conditions, Some(transition(23, "C")))),
            last,
        ]);
        wf.functions = vec![function(3, "f")];
        wf.events = vec![event(4, "Known")];
        let found = with_code(&check(&wf), Code::UNDEFINED_EVENT);
        let spans: Vec<_> = found.iter().map(|d| d.span).collect();
        assert_eq!(
            spans,
            vec![sp(11, 20), sp(13, 30), sp(22, 20), sp(32, 20), sp(34, 30)]
        );
        assert_mentions(&found[0], &["event `Consumed`", "`Known`"]);
    }
}
