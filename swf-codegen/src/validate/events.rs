//! Rules about events that the host relies on.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Scope, SwitchConditions, Task, TaskKind, Workflow};

/// A non-exclusive starting event task groups its events by correlation value, so they must
/// all be correlated by the same attribute (or all not at all).
pub fn check_starting_events(workflow: &Workflow, diags: &mut Diagnostics) {
    let Some(task) = workflow.scope.tasks.iter().find(|t| t.start.is_some()) else {
        return;
    };
    let TaskKind::Event {
        exclusive: false,
        events_actions,
        ..
    } = &task.kind
    else {
        return;
    };
    let mut first: Option<(&str, Option<&str>)> = None;
    for reference in events_actions.iter().flat_map(|e| &e.event_refs) {
        let Some(definition) = workflow
            .events
            .iter()
            .find(|e| e.name.value == reference.value)
        else {
            continue;
        };
        let token = definition
            .correlation_token
            .as_ref()
            .map(|t| t.value.as_str());
        match first {
            None => first = Some((&definition.name.value, token)),
            Some((first_name, first_token)) if first_token != token => {
                let describe = |t: Option<&str>| {
                    t.map_or("no correlationToken".to_owned(), |t| {
                        format!("correlationToken `{t}`")
                    })
                };
                diags
                    .error(
                        Code::MIXED_CORRELATION,
                        reference.span,
                        format!(
                            "start task `{}` waits for all of its events, but `{}` has {} and `{first_name}` has {}",
                            task.name.value,
                            definition.name.value,
                            describe(token),
                            describe(first_token)
                        ),
                    )
                    .help("give the starting events the same correlationToken, or make the task `exclusive: true`");
            }
            Some(_) => {}
        }
    }
}

/// A branch the parallel task does not wait for runs detached, with an inbox nothing routes to:
/// a task in it that waits for events would wait forever.
pub fn check_detached_waits(scope: &Scope, diags: &mut Diagnostics) {
    for task in &scope.tasks {
        if let TaskKind::Parallel { branches, .. } = &task.kind {
            for branch in branches.iter().filter(|b| !b.wait_for_completion) {
                if let Some(waiting) = first_waiting(&branch.scope) {
                    diags
                        .error(
                            Code::DETACHED_WAIT,
                            branch.span,
                            format!(
                                "branch `{}` of parallel task `{}` is not waited for, yet its task \
                                 `{}` waits for events: nothing routes events to a branch that \
                                 runs on its own",
                                branch.name.value, task.name.value, waiting.name.value
                            ),
                        )
                        .help(
                            "wait for the branch (`waitForCompletion: true`), or wait for the \
                             events before or after the parallel task",
                        );
                }
            }
        }
        for nested in task.nested_scopes() {
            check_detached_waits(nested, diags);
        }
    }
}

/// The first task (depth first, in document order) that waits for events.
fn first_waiting(scope: &Scope) -> Option<&Task> {
    scope.tasks.iter().find_map(|task| {
        let waits = match &task.kind {
            TaskKind::Event { .. } | TaskKind::Callback { .. } => true,
            TaskKind::Switch(switch) => matches!(switch.conditions, SwitchConditions::Event(_)),
            _ => false,
        };
        if waits {
            return Some(task);
        }
        task.nested_scopes().into_iter().find_map(first_waiting)
    })
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Code;
    use crate::source::SourceFile;

    fn diagnostics(text: &str) -> Vec<crate::diagnostic::Diagnostic> {
        let source = SourceFile::new("wf.yaml", text);
        crate::check(&source).1.into_sorted()
    }

    const WORKFLOW: &str = "id: w
name: W
events:
  - {name: A, source: s, type: a, correlationToken: patientId}
  - {name: B, source: s, type: b, correlationToken: TOKEN}
tasks:
  - name: Start
    type: event
    start: {kind: default}
    exclusive: EXCLUSIVE
    eventsActions:
      - {eventRefs: [A, B], actions: []}
    end: {kind: default}
";

    #[test]
    fn non_exclusive_starting_events_share_their_correlation() {
        let mixed = diagnostics(
            &WORKFLOW
                .replace("TOKEN", "visitId")
                .replace("EXCLUSIVE", "false"),
        );
        assert_eq!(mixed.len(), 1, "{mixed:#?}");
        assert_eq!(mixed[0].code, Code::MIXED_CORRELATION);
        assert_eq!(mixed[0].span.line, 12);
        assert!(
            mixed[0]
                .message
                .contains("`B` has correlationToken `visitId`")
        );
        let same = diagnostics(
            &WORKFLOW
                .replace("TOKEN", "patientId")
                .replace("EXCLUSIVE", "false"),
        );
        assert!(same.is_empty(), "{same:#?}");
        let exclusive = diagnostics(
            &WORKFLOW
                .replace("TOKEN", "visitId")
                .replace("EXCLUSIVE", "true"),
        );
        assert!(exclusive.is_empty(), "{exclusive:#?}");
    }

    #[test]
    fn a_branch_not_waited_for_cannot_wait_for_events() {
        let text = "id: w
name: w
version: '1'
startsAt: Fork
triggers: [{name: A, source: s, type: a}]
states:
  - name: Fork
    type: PARALLEL
    branches:
      - name: background
        startsAt: W
        waitForCompletion: false
        states:
          - {name: W, type: EVENT, eventActions: [{condition: A, actions: [], transition: {nextState: E}}]}
          - {name: E, type: RELAY, end: true}
    end: true
";
        let found = diagnostics(text);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::DETACHED_WAIT);
        assert_eq!(found[0].span.line, 10);
        assert!(
            found[0].message.contains("its state `W` waits for events"),
            "{}",
            found[0].message
        );
        let waited =
            diagnostics(&text.replace("waitForCompletion: false", "waitForCompletion: true"));
        assert!(waited.is_empty(), "{waited:#?}");
    }
}
