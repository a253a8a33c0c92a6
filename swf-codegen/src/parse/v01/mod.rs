//! v0.1 (`001`): camelCase states, `startsAt`, `triggers`, `functions`, `eventActions` with a
//! condition over triggers, `filter` and `loop` on states, workflow-level `onError`.
//!
//! The draft's states lower onto the tasks the IR shares with every dialect: a RELAY is an
//! inject task, a state with a `loop` is a foreach task around a copy of itself, retries written
//! on actions become the task's retries, and the workflow's `onError` is appended to every
//! top-level state's own (state level first, so it wins).

mod common;
mod event;
mod state;
mod switch;

use super::lowering::{EventDefinitions, Header, Lowering, header};
use super::reader::{self, MapReader};
use super::yaml::{Node, NodeKind};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Dialect, ErrorHandler, ExprLanguage, Scope, Start, StartKind, Task, Workflow};
use crate::source::{Span, Spanned};
use crate::syntax;

/// The front end's state while lowering one file.
struct V01<'d> {
    cx: Lowering<'d>,
    /// The workflow-level `onError`, lowered once and appended to every top-level state.
    workflow_handlers: Vec<ErrorHandler>,
    /// The names of the triggers, for event conditions.
    triggers: Vec<String>,
}

/// The values of the draft's `execStatus`. The runtime reports the status of a run on its
/// result; a status written in the definition is only checked.
const EXEC_STATUSES: &[(&str, ())] = &[
    ("Success", ()),
    ("Fail", ()),
    ("Timeout", ()),
    ("Invalid", ()),
];

pub(super) fn lower(file: &str, root: &Node, diags: &mut Diagnostics) -> Option<Workflow> {
    let mut map = MapReader::new(root, "workflow definition", diags)?;
    let Header {
        id,
        name,
        version,
        description,
    } = header(&mut map, diags, true);
    map.verbatim(&["schemaVersion"]);
    let starts_at = map
        .require(&["startsAt"])
        .and_then(|n| reader::string(n, "startsAt", diags));
    if let Some(status) = map.take(&["execStatus"]) {
        reader::enumerated(status, "execStatus", EXEC_STATUSES, diags);
    }
    let expression_language = map
        .take(&["expressionLanguage"])
        .and_then(|n| reader::string(n, "expressionLanguage", diags));
    let default_language = expression_language
        .as_ref()
        .and_then(|l| syntax::expr::parse_language(&l.value, l.span, diags))
        .unwrap_or(ExprLanguage::Spel);
    let triggers = map.take(&["triggers"]);
    let functions = map.take(&["functions"]);
    let states = map.require(&["states"]);
    let on_error = map.take(&["onError"]);
    let extensions = map.verbatim(&["extensions"]);
    let metadata = map.verbatim(&["metadata"]);
    let span = map.span();
    map.finish(diags);

    let mut v01 = V01 {
        cx: Lowering {
            diags,
            default_language,
            recovered: false,
        },
        workflow_handlers: Vec::new(),
        triggers: Vec::new(),
    };
    let functions = functions
        .map(|n| v01.cx.function_definitions(n))
        .unwrap_or_default();
    let events = triggers
        .map(|n| {
            v01.cx.event_definitions(
                n,
                &EventDefinitions {
                    list: "triggers",
                    item: "trigger definition",
                    correlation: "correlationToken",
                },
            )
        })
        .unwrap_or_default();
    v01.triggers = events.iter().map(|e| e.name.value.clone()).collect();
    v01.workflow_handlers = on_error.map(|n| v01.error_handlers(n)).unwrap_or_default();
    let scope = states
        .map(|n| v01.scope(n, starts_at.as_ref(), true))
        .unwrap_or_default();

    Some(Workflow {
        file: file.to_owned(),
        dialect: Dialect::V01,
        id: id.unwrap_or_else(|| Spanned::new(String::new(), span)),
        name: name.unwrap_or_else(|| Spanned::new(String::new(), span)),
        version,
        description,
        expression_language,
        functions,
        events,
        scope,
        metadata,
        extensions,
        schemas: crate::ir::DataSchemas::default(),
        span,
    })
}

impl V01<'_> {
    /// A list of states (the workflow's or a branch's) whose start is the state `starts_at`
    /// names. `top`: the workflow's own states, which also get the workflow-level `onError`.
    fn scope(&mut self, node: &Node, starts_at: Option<&Spanned<String>>, top: bool) -> Scope {
        let items = reader::list(node, "states", self.cx.diags);
        let mut tasks: Vec<Task> = items.iter().filter_map(|item| self.state(item)).collect();
        if top {
            for task in &mut tasks {
                task.on_error.extend(self.workflow_handlers.iter().cloned());
            }
        }
        let owner = if top { "the workflow" } else { "this branch" };
        self.mark_start(&mut tasks, items, starts_at, owner);
        Scope { tasks }
    }

    /// Gives the state `startsAt` names (by name, else by id) the scope's start.
    ///
    /// When `startsAt` is missing or names no state, that is reported once, and the state most
    /// likely meant still gets the start (the closest name, else the first state no other one
    /// transitions to): the scope then has exactly one, so validation does not add reports
    /// ("no start task", "cannot be reached") about the same mistake.
    fn mark_start(
        &mut self,
        tasks: &mut [Task],
        items: &[Node],
        starts_at: Option<&Spanned<String>>,
        owner: &str,
    ) {
        if tasks.is_empty() {
            // Validation reports a scope without states.
            return;
        }
        let index = starts_at.and_then(|wanted| {
            tasks
                .iter()
                .position(|t| t.name.value == wanted.value)
                .or_else(|| {
                    tasks
                        .iter()
                        .position(|t| t.id.as_ref().is_some_and(|id| id.value == wanted.value))
                })
        });
        let index = match (index, starts_at) {
            (Some(index), _) => index,
            (None, None) => likely_start(tasks),
            (None, Some(wanted)) => {
                let names: Vec<&str> = tasks
                    .iter()
                    .map(|t| t.name.as_str())
                    .chain(
                        tasks
                            .iter()
                            .filter_map(|t| t.id.as_ref().map(|i| i.as_str())),
                    )
                    .collect();
                let close = super::closest(&wanted.value, &names).map(str::to_owned);
                // A state that did not lower (its own problem is reported) may be the one meant.
                if !written_names(items).contains(&wanted.value.as_str()) {
                    unknown_start(self.cx.diags, wanted, owner, close.as_deref(), &names);
                }
                close
                    .and_then(|c| {
                        tasks.iter().position(|t| {
                            t.name.value == c || t.id.as_ref().is_some_and(|id| id.value == c)
                        })
                    })
                    .unwrap_or_else(|| likely_start(tasks))
            }
        };
        let span = starts_at.map_or(tasks[index].name.span, |s| s.span);
        tasks[index].start = Some(Start {
            kind: StartKind::Default,
            span,
        });
    }
}

/// The first state that no state of the scope transitions to (else the first state): where a
/// workflow whose start is unknown most likely begins.
fn likely_start(tasks: &[Task]) -> usize {
    // A set: one look-up per state keeps this linear in the number of states.
    let targets: std::collections::HashSet<&str> = tasks
        .iter()
        .flat_map(Task::transitions)
        .map(|t| t.next.as_str())
        .collect();
    let is_target = |task: &Task| {
        targets.contains(&task.name.as_str())
            || task
                .id
                .as_ref()
                .is_some_and(|id| targets.contains(&id.as_str()))
    };
    tasks.iter().position(|t| !is_target(t)).unwrap_or(0)
}

/// UNKNOWN_TARGET at the `startsAt` value, with the closest state name as a suggestion.
fn unknown_start(
    diags: &mut Diagnostics,
    wanted: &Spanned<String>,
    owner: &str,
    close: Option<&str>,
    names: &[&str],
) {
    let help = match close {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!(
            "name one of the states of {owner}: {}",
            crate::validate::suggest::list(names.iter().copied())
        ),
    };
    diags
        .error(
            Code::UNKNOWN_TARGET,
            wanted.span,
            format!(
                "`startsAt` names `{}`, but {owner} has no state with that name or id",
                wanted.value
            ),
        )
        .help(help);
}

/// The `name` and `id` written on each state mapping, including states that did not lower.
fn written_names(items: &[Node]) -> Vec<&str> {
    let mut out = Vec::new();
    for item in items {
        let NodeKind::Map(entries) = &item.kind else {
            continue;
        };
        for entry in entries {
            if (entry.key.eq_ignore_ascii_case("name") || entry.key.eq_ignore_ascii_case("id"))
                && let NodeKind::Scalar(s) = &entry.value.kind
            {
                out.push(s.text.as_str());
            }
        }
    }
    out
}

/// The position a lowered value falls back to when its own is unknown.
fn fallback(span: Span) -> Spanned<String> {
    Spanned::new(String::new(), span)
}

#[cfg(test)]
mod tests;
