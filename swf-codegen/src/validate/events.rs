//! Rules about events that the host relies on.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{TaskKind, Workflow};

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
}
