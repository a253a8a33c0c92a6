//! What this version of the code generator can run. Constructs outside it parse and validate,
//! then are refused here with a diagnostic at their position, before any code is emitted.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{EndKind, StartKind, SwitchConditions, Task, TaskKind, Transition, Workflow};

pub fn check_supported(workflow: &Workflow, diags: &mut Diagnostics) {
    for task in &workflow.scope.tasks {
        check_task(task, diags);
    }
}

fn refuse(diags: &mut Diagnostics, span: crate::source::Span, what: &str) {
    diags
        .error(
            Code::NOT_YET_COMPILED,
            span,
            format!("{what} cannot be compiled yet: this version runs operation, inject, switch (data conditions) and delay tasks"),
        )
        .help("events, callbacks, parallel branches, foreach, sub-flows, scheduled starts and produced events arrive with the events and concurrency work");
}

fn check_task(task: &Task, diags: &mut Diagnostics) {
    let span = task.name.span;
    match &task.kind {
        TaskKind::Operation { .. } | TaskKind::Inject { .. } | TaskKind::Delay { .. } => {}
        TaskKind::Switch(switch) => {
            if let SwitchConditions::Event(conditions) = &switch.conditions
                && !conditions.is_empty()
            {
                refuse(diags, span, "a switch on event conditions");
            }
        }
        other => refuse(diags, span, &format!("a `{}` task", other.type_name())),
    }
    if let Some(start) = &task.start
        && let StartKind::Scheduled { .. } = start.kind
    {
        refuse(diags, start.span, "a scheduled start");
    }
    if let Some(end) = &task.end
        && let EndKind::Event { .. } = end.kind
    {
        refuse(diags, end.span, "an end that produces an event");
    }
    for transition in task.transitions() {
        check_transition(transition, diags);
    }
}

fn check_transition(transition: &Transition, diags: &mut Diagnostics) {
    if let Some(produce) = &transition.produce_event {
        refuse(diags, produce.span, "a transition that produces an event");
    }
}
