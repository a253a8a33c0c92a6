use super::super::test_support::*;
use crate::diagnostic::Code;
use crate::ir::{SwitchConditions, Task};

/// `compensatedBy: target` on the task, its value at `L+5:24`.
fn compensated_by(mut task: Task, target: &str) -> Task {
    task.compensated_by = Some(text(target, task.span.line + 5, 24));
    task
}

fn for_compensation(mut task: Task) -> Task {
    task.used_for_compensation = true;
    task
}

/// `compensate: true` on the task's transition and end, if it has them.
fn compensating(mut task: Task) -> Task {
    if let Some(transition) = &mut task.transition {
        transition.compensate = true;
    }
    if let Some(end) = &mut task.end {
        end.compensate = true;
    }
    task
}

/// A valid saga: `Book` is undone by `Cancel` → `Refund`; `Pay` asks for compensation.
fn saga() -> Vec<Task> {
    vec![
        compensated_by(task(10, "Book", inject()).start().next("Pay"), "Cancel"),
        compensating(task(20, "Pay", inject()).end()),
        for_compensation(task(30, "Cancel", inject()).next("Refund")),
        for_compensation(task(40, "Refund", inject()).end()),
    ]
}

#[test]
fn a_valid_saga_passes_and_its_chain_is_reachable() {
    assert_eq!(check(&workflow(saga())), Vec::new());
}

#[test]
fn unknown_target_suggests_a_compensation_task() {
    let mut tasks = saga();
    tasks[0] = compensated_by(task(10, "Book", inject()).start().next("Pay"), "Cancle");
    tasks.push(task(50, "Cancellation", inject()).end());
    let found = check(&workflow(tasks));
    let d = only(&found, Code::BAD_COMPENSATION);
    assert_eq!(d.span, sp(15, 24));
    assert_mentions(
        &d,
        &[
            "task `Book`",
            "`Cancle`",
            "the workflow",
            "did you mean `Cancel`?",
        ],
    );
    // No cascade: `Cancel` is no longer named, but that follows from the misspelling; the
    // normal task `Cancellation` is unreachable as usual.
    let unreachable = only(&found, Code::UNREACHABLE);
    assert_mentions(&unreachable, &["task `Cancellation` cannot be reached"]);
}

#[test]
fn unknown_target_without_compensation_tasks_says_how_to_add_one() {
    let wf = workflow(vec![compensated_by(
        task(10, "Book", inject()).start().end(),
        "Zebra",
    )]);
    let d = only(&check(&wf), Code::BAD_COMPENSATION);
    assert_mentions(&d, &["`Zebra`", "usedForCompensation: true"]);
}

#[test]
fn target_in_another_scope_is_named() {
    let branch_tasks = vec![compensated_by(
        task(40, "B1", inject()).start().end(),
        "Undo",
    )];
    let wf = workflow(vec![
        task(10, "P", parallel(vec![branch(30, "left", branch_tasks)]))
            .start()
            .end(),
        for_compensation(task(20, "Undo", inject()).end()),
    ]);
    let found = check(&wf);
    let d = only(&found, Code::BAD_COMPENSATION);
    assert_eq!(d.span, sp(45, 24));
    assert_mentions(
        &d,
        &[
            "branch `left` of parallel task `P`",
            "`Undo` is a task of the workflow",
            "within one scope",
        ],
    );
}

#[test]
fn target_not_marked_for_compensation() {
    let wf = workflow(vec![
        compensated_by(task(10, "Book", inject()).start().next("Cancel"), "Cancel"),
        task(20, "Cancel", inject()).end(),
    ]);
    let d = only(&check(&wf), Code::BAD_COMPENSATION);
    assert_eq!(d.span, sp(15, 24));
    assert_mentions(
        &d,
        &[
            "names `Cancel`",
            "not marked `usedForCompensation: true`",
            "(line 20)",
        ],
    );
}

#[test]
fn target_that_is_compensated_itself() {
    let mut tasks = saga();
    tasks[2] = compensated_by(tasks[2].clone(), "Refund");
    let found = check(&workflow(tasks));
    let d = only(&found, Code::BAD_COMPENSATION);
    assert_eq!(d.span, sp(15, 24));
    assert_mentions(
        &d,
        &["names `Cancel`", "itself compensated by `Refund` (line 35)"],
    );
    // Reported once, at the task that names it.
    assert!(with_code(&found, Code::NESTED_COMPENSATION).is_empty());
}

#[test]
fn compensated_compensation_task_reached_by_a_chain() {
    let mut tasks = saga();
    tasks[3] = compensated_by(tasks[3].clone(), "Cancel");
    let found = check(&workflow(tasks));
    let d = only(&found, Code::NESTED_COMPENSATION);
    assert_eq!(d.span, sp(45, 24));
    assert_mentions(&d, &["`Refund` cannot itself be compensated by `Cancel`"]);
    assert!(with_code(&found, Code::BAD_COMPENSATION).is_empty());
}

#[test]
fn compensation_task_cannot_ask_for_compensation() {
    let mut tasks = saga();
    tasks[2] = compensating(tasks[2].clone());
    tasks[3] = compensating(tasks[3].clone());
    let found = with_code(&check(&workflow(tasks)), Code::NESTED_COMPENSATION);
    let spans: Vec<_> = found.iter().map(|d| d.span).collect();
    assert_eq!(spans, vec![sp(33, 9), sp(44, 9)]);
    assert_mentions(&found[0], &["`Cancel` asks for compensation"]);
}

#[test]
fn transitions_may_not_cross_between_normal_and_compensation_tasks() {
    let conditions = SwitchConditions::Data(vec![data_condition(22, "Cancel")]);
    let wf = workflow(vec![
        compensated_by(task(10, "Book", inject()).start().next("Check"), "Cancel")
            .on_error(16, "Refund"),
        task(
            20,
            "Check",
            switch(conditions, Some(transition(23, "Done"))),
        ),
        task(30, "Done", inject()).end(),
        for_compensation(task(40, "Cancel", inject()).next("Done")),
        for_compensation(task(50, "Refund", inject()).end()),
    ]);
    let found = with_code(&check(&wf), Code::COMPENSATION_CROSSING);
    let spans: Vec<_> = found.iter().map(|d| d.span).collect();
    assert_eq!(spans, vec![sp(16, 21), sp(22, 21), sp(43, 21)]);
    assert_mentions(
        &found[0],
        &["task `Book` transitions to `Refund`, a compensation task"],
    );
    assert_mentions(&found[1], &["`Check` transitions to `Cancel`"]);
    assert_mentions(
        &found[2],
        &["compensation task `Cancel` transitions to `Done`, a normal task"],
    );
}

#[test]
fn compensation_task_cannot_start() {
    let wf = workflow(vec![
        for_compensation(task(10, "Undo", inject()).start().end()),
        compensated_by(task(20, "Work", inject()).end(), "Undo"),
    ]);
    let found = check(&wf);
    let d = only(&found, Code::COMPENSATION_CROSSING);
    assert_eq!(d.span, sp(12, 9));
    assert_mentions(&d, &["`Undo` cannot start the workflow", "remove `start`"]);
}

#[test]
fn unnamed_compensation_chain_is_unreachable_and_its_cycles_are_checked() {
    let wf = workflow(vec![
        compensated_by(task(10, "Book", inject()).start().end(), "Cancel"),
        for_compensation(task(20, "Cancel", inject()).next("Again")),
        for_compensation(task(30, "Again", inject()).next("Cancel")),
        for_compensation(task(40, "Spare", inject()).end()),
    ]);
    let found = check(&wf);
    let d = only(&found, Code::UNREACHABLE);
    assert_eq!(d.span, sp(40, 11));
    assert_mentions(
        &d,
        &[
            "compensation task `Spare` never runs",
            "compensatedBy: Spare",
        ],
    );
    let cycle = only(&found, Code::NO_EXIT);
    assert_mentions(&cycle, &["`Cancel` → `Again` → `Cancel`"]);
}

#[test]
fn every_problem_is_reported_in_every_scope() {
    let body = vec![
        task(60, "In", inject()).start().end(),
        for_compensation(task(70, "Lonely", inject()).end()),
    ];
    let mut tasks = saga();
    tasks[1] = compensated_by(compensating(task(20, "Pay", inject()).next("Loop")), "Book");
    tasks.push(task(50, "Loop", foreach(body)).end());
    let found = check(&workflow(tasks));
    assert_eq!(with_code(&found, Code::BAD_COMPENSATION).len(), 1);
    let unreachable = only(&found, Code::UNREACHABLE);
    assert_mentions(
        &unreachable,
        &["`Lonely`", "the body of foreach task `Loop`"],
    );
}
