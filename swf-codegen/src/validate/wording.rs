//! The validation rules speak the tasks draft (`nextTask`, `start: {kind: default}`); a user of an
//! earlier draft must be told what to write in theirs. The rules stay dialect-free and their
//! messages are reworded here, phrase by phrase, for the file's dialect.

use crate::diagnostic::Diagnostic;
use crate::ir::Dialect;

/// Longer phrases first: each is replaced before any shorter one it contains.
const V01: &[(&str, &str)] = &[
    (
        "`tasks`, and give the task that runs first `start: {kind: default}`",
        "`states`, and name the state that runs first in `startsAt`",
    ),
    (
        "add `start: {kind: default}` to the task that runs first",
        "name the state that runs first in `startsAt`",
    ),
    (
        "one of them with `start: {kind: default}`",
        "naming the one that runs first in `startsAt`",
    ),
    ("add `tasks` to the branch", "add `states` to the branch"),
    (
        "`transition: {nextTask: ...}`",
        "`transition: {nextState: ...}`",
    ),
    ("`default: {nextTask: ...}`", "`default: {nextState: ...}`"),
    ("`end: {kind: default}`", "`end: true`"),
    ("`nextTask: ", "`nextState: "),
    ("`nextTask`", "`nextState`"),
    (
        "`actions: [{functionRef: {refName: ...}}]`",
        "`actions: [{functionref: {refname: ...}}]`",
    ),
    (
        "`functionRef: {refName: ...}`",
        "`functionref: {refname: ...}`",
    ),
    ("`functionRef`", "`functionref`"),
    (
        "`eventsActions: [{eventRefs: [...], actions: [...]}]`",
        "`eventActions: [{condition: {body: ...}, actions: [...], transition: {nextState: ...}}]`",
    ),
    (
        "`branches: [{name: ..., tasks: [...]}]`",
        "`branches: [{name: ..., startsAt: ..., states: [...], waitForCompletion: true}]`",
    ),
    ("`eventsActions`", "`eventActions`"),
    ("`eventRefs: [...]`", "`condition: {body: ...}`"),
    ("`eventRefs`", "`condition`"),
    ("`events: [{name:", "`triggers: [{name:"),
    ("to `events`", "to `triggers`"),
    ("no events", "no triggers"),
    ("workflow's `events`", "workflow's `triggers`"),
    STATE_WORDS[0],
    STATE_WORDS[1],
    STATE_WORDS[2],
    STATE_WORDS[3],
    STATE_WORDS[4],
    STATE_WORDS[5],
    STATE_WORDS[6],
    STATE_WORDS[7],
    STATE_WORDS[8],
];

const SECOND: &[(&str, &str)] = &[
    (
        "`tasks`, and give the task that runs first `start: {kind: default}`",
        "`states`, and name the state that runs first in `starts-at`",
    ),
    (
        "add `start: {kind: default}` to the task that runs first",
        "name the state that runs first in `starts-at`",
    ),
    (
        "one of them with `start: {kind: default}`",
        "naming the one that runs first in `starts-at`",
    ),
    ("add `tasks` to the branch", "add `states` to the branch"),
    ("`transition: {nextTask: ...}`", "`next-state: ...`"),
    ("`default: {nextTask: ...}`", "`default: ...`"),
    ("`end: {kind: default}`", "`end: true`"),
    ("`nextTask: ", "`next-state: "),
    ("`nextTask`", "`next-state`"),
    (
        "`actions: [{functionRef: {refName: ...}}]`",
        "`actions: [{function: {name: ..., type: ...}}]`",
    ),
    (
        "`functionRef: {refName: ...}`",
        "`function: {name: ..., type: ...}`",
    ),
    ("`functionRef`", "`function`"),
    (
        "`eventsActions: [{eventRefs: [...], actions: [...]}]`",
        "`events: [{event-expression: ..., actions: [...], next-state: ...}]`",
    ),
    (
        "`branches: [{name: ..., tasks: [...]}]`",
        "`branches: [{name: ..., starts-at: ..., states: [...], wait-for-completion: true}]`",
    ),
    ("`eventsActions`", "`events`"),
    ("`eventRefs: [...]`", "`event-expression: ...`"),
    ("`eventRefs`", "`event-expression`"),
    ("`events: [{name:", "`trigger-defs: [{name:"),
    ("to `events`", "to `trigger-defs`"),
    ("no events", "no trigger-defs"),
    ("workflow's `events`", "workflow's `trigger-defs`"),
    // The kebab-case drafts' states have no ids.
    ("with that name or id", "with that name"),
    STATE_WORDS[0],
    STATE_WORDS[1],
    STATE_WORDS[2],
    STATE_WORDS[3],
    STATE_WORDS[4],
    STATE_WORDS[5],
    STATE_WORDS[6],
    STATE_WORDS[7],
    STATE_WORDS[8],
];

/// The earlier drafts call tasks states and events triggers; applied after the phrases above.
const STATE_WORDS: [(&str, &str); 9] = [
    ("task `", "state `"),
    ("no task ", "no state "),
    ("the task ", "the state "),
    ("a task ", "a state "),
    ("start task", "start state"),
    ("has no tasks", "has no states"),
    ("of the tasks", "of the states"),
    ("on one task", "on one state"),
    ("event `", "trigger `"),
];

const FIRST: &[(&str, &str)] = &[
    (
        "`tasks`, and give the task that runs first `start: {kind: default}`",
        "`states`, and give the state that runs first `start: true`",
    ),
    ("`start: {kind: default}`", "`start: true`"),
    (
        "`branches: [{name: ..., tasks: [...]}]`",
        "`branches: [{name: ..., states: [...], wait-for-completion: true}]`",
    ),
    ("add `tasks` to the branch", "add `states` to the branch"),
    (
        "or `end: {kind: default}` if execution finishes here",
        "or an `END` state if execution finishes here",
    ),
    ("`end: {kind: default}`", "an `END` state"),
];

/// Rewords the diagnostics validation recorded for a file in `dialect`.
pub(super) fn reword(dialect: Dialect, diagnostics: &mut [Diagnostic]) {
    let tables: &[&[(&str, &str)]] = match dialect {
        Dialect::Tasks => return,
        Dialect::V01 => &[V01],
        Dialect::Second => &[SECOND],
        // The first draft words its starts and ends its own way, the rest as the second does.
        Dialect::First => &[FIRST, SECOND],
    };
    for diagnostic in diagnostics {
        for table in tables {
            diagnostic.message = replace_all(&diagnostic.message, table);
            if let Some(help) = &diagnostic.help {
                diagnostic.help = Some(replace_all(help, table));
            }
        }
    }
}

fn replace_all(text: &str, table: &[(&str, &str)]) -> String {
    let mut out = text.to_owned();
    for (from, to) in table {
        if out.contains(from) {
            out = out.replace(from, to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Code, Diagnostics};
    use crate::source::Span;

    fn reworded(dialect: Dialect, help: &str) -> String {
        let mut diags = Diagnostics::new("t.yaml");
        diags
            .error(Code::NO_TRANSITION_OR_END, Span::new(1, 1), "m")
            .help(help);
        let mut items = diags.into_sorted();
        reword(dialect, &mut items);
        items[0].help.clone().unwrap_or_default()
    }

    #[test]
    fn a_v01_file_is_told_about_next_state_not_next_task() {
        let text = "id: w\nname: w\nversion: '1'\nstartsAt: A\nstates:\n\
                    - {name: A, type: RELAY, transition: {nextState: Nowhere}}\n";
        let (_, diags) = crate::check(&crate::source::SourceFile::new("w.yaml", text));
        let found = diags.into_sorted();
        let unknown = found
            .iter()
            .find(|d| d.code == Code::UNKNOWN_TARGET)
            .expect("the unknown target is reported");
        assert!(
            unknown.message.contains("`nextState` names `Nowhere`"),
            "{}",
            unknown.message
        );
        assert!(!unknown.message.contains("nextTask"), "{}", unknown.message);
    }

    #[test]
    fn each_dialect_is_told_what_to_write_in_its_own_words() {
        let help = "add `transition: {nextTask: ...}` naming the task that runs next, or \
                    `end: {kind: default}` if execution finishes here";
        assert_eq!(reworded(Dialect::Tasks, help), help);
        assert_eq!(
            reworded(Dialect::V01, help),
            "add `transition: {nextState: ...}` naming the state that runs next, or `end: true` \
             if execution finishes here"
        );
        assert_eq!(
            reworded(Dialect::Second, help),
            "add `next-state: ...` naming the state that runs next, or `end: true` if execution \
             finishes here"
        );
        assert_eq!(
            reworded(Dialect::First, help),
            "add `next-state: ...` naming the state that runs next, or an `END` state if \
             execution finishes here"
        );
        assert_eq!(
            reworded(
                Dialect::First,
                "add `start: {kind: default}` to the task that runs first"
            ),
            "add `start: true` to the state that runs first"
        );
        assert_eq!(
            reworded(
                Dialect::First,
                "`nextTask` names `X`, but the workflow has no task with that name or id; event \
                 `E` is not defined"
            ),
            "`next-state` names `X`, but the workflow has no state with that name; trigger `E` \
             is not defined"
        );
        assert_eq!(
            reworded(
                Dialect::Second,
                "add `eventsActions: [{eventRefs: [...], actions: [...]}]`; the workflow defines \
                 no events: add `events: [{name: A}]`"
            ),
            "add `events: [{event-expression: ..., actions: [...], next-state: ...}]`; the \
             workflow defines no trigger-defs: add `trigger-defs: [{name: A}]`"
        );
        assert_eq!(
            reworded(Dialect::V01, "(`nextTask: Lost`) from a task that runs"),
            "(`nextState: Lost`) from a state that runs"
        );
    }
}
