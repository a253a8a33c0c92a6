//! Paths that name a place to write to must be definite: a query selects any number of places.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{JsonPath, PathKind, Task, TaskKind};

/// INDEFINITE_TARGET for the paths written to: action results paths, where an event entry
/// places its event data and an error handler its error, and a foreach task's `inputParameter`
/// and `outputCollection`.
pub(super) fn check_task(task: &Task, diags: &mut Diagnostics) {
    let mut targets: Vec<(&str, &JsonPath)> = task
        .actions()
        .into_iter()
        .filter_map(|a| a.results_path.as_ref())
        .map(|p| ("results path", p))
        .collect();
    if let TaskKind::Event { events_actions, .. } = &task.kind {
        targets.extend(
            events_actions
                .iter()
                .filter_map(|e| e.event_results_path.as_ref())
                .map(|p| ("event results path", p)),
        );
    }
    targets.extend(
        task.on_error
            .iter()
            .filter_map(|h| h.error_results_path.as_ref())
            .map(|p| ("error results path", p)),
    );
    if let TaskKind::ForEach {
        input_parameter,
        output_collection,
        ..
    } = &task.kind
    {
        targets.extend(input_parameter.iter().map(|p| ("inputParameter", p)));
        targets.extend(output_collection.iter().map(|p| ("outputCollection", p)));
    }
    // Invalid paths were reported by the parser; only well-formed queries are reported here.
    for (what, path) in targets
        .into_iter()
        .filter(|(_, p)| matches!(p.kind, PathKind::Query(_)))
    {
        diags
            .error(
                Code::INDEFINITE_TARGET,
                path.span,
                format!(
                    "{what} `{}` may select several places, so what is written there has no \
                     single place to go",
                    path.text
                ),
            )
            .help(
                "use a path of names and indexes only, such as `$.result` or `$.items[0]`, \
                 without filters, wildcards, slices or `..`",
            );
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::diagnostic::Code;
    use crate::ir::{ActionMode, EventActions, TaskKind};

    #[test]
    fn query_results_path_is_refused() {
        let mut good = action(11, "f");
        good.results_path = Some(definite_path("$.a", 11));
        let mut bad = action(12, "f");
        bad.results_path = Some(query_path("$.items[*]", 12));
        let mut wf = workflow(vec![
            task(10, "A", operation(vec![good, bad])).start().end(),
        ]);
        wf.functions = vec![function(3, "f")];
        let d = only(&check(&wf), Code::INDEFINITE_TARGET);
        assert_eq!(d.span, sp(12, 20));
        assert_mentions(&d, &["`$.items[*]`", "names and indexes"]);
    }

    #[test]
    fn query_event_results_path_is_refused() {
        let entry = EventActions {
            timeout: None,
            condition: None,
            event_results_path: Some(query_path("$..seen", 12)),
            transition: None,
            event_refs: vec![text("e", 11, 20)],
            action_mode: ActionMode::Sequential,
            actions: Vec::new(),
            event_data_filter: None,
            span: sp(11, 9),
        };
        let kind = TaskKind::Event {
            exclusive: true,
            events_actions: vec![entry],
            timeout: None,
        };
        let mut wf = workflow(vec![task(10, "A", kind).start().end()]);
        wf.events = vec![event(3, "e")];
        let d = only(&check(&wf), Code::INDEFINITE_TARGET);
        assert_eq!(d.span, sp(12, 20));
        assert_mentions(
            &d,
            &["event results path", "`$..seen`", "names and indexes"],
        );
    }

    #[test]
    fn query_error_results_path_is_refused() {
        let mut wf = workflow(vec![
            task(10, "A", inject()).start().next("B").on_error(30, "B"),
            task(20, "B", inject()).end(),
        ]);
        wf.scope.tasks[0].on_error[0].error_results_path = Some(query_path("$.errs[?(@.x)]", 31));
        let d = only(&check(&wf), Code::INDEFINITE_TARGET);
        assert_eq!(d.span, sp(31, 20));
        assert_mentions(&d, &["error results path", "`$.errs[?(@.x)]`"]);
    }
}
