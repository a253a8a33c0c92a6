//! States: the fields every state has (name, type, the start and end flags, the filter), then
//! the fields of its type; scopes and how their start state is chosen.

use super::{Kebab, not_allowed, placeholder_transition};
use crate::diagnostic::Code;
use crate::ir::{
    ActionMode, Branch, Completion, End, EndKind, EndStatus, ErrorHandler, JsonPath,
    ParallelOutput, Scope, Start, StartKind, Task, TaskDataFilter, TaskKind, Transition,
};
use crate::parse::reader::{self, MapReader, closest};
use crate::parse::yaml::{Node, NodeKind};
use crate::source::{Span, Spanned};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StateType {
    Event,
    Operation,
    Switch,
    Delay,
    Parallel,
    End,
}

impl StateType {
    fn word(self) -> &'static str {
        match self {
            StateType::Event => "EVENT",
            StateType::Operation => "OPERATION",
            StateType::Switch => "SWITCH",
            StateType::Delay => "DELAY",
            StateType::Parallel => "PARALLEL",
            StateType::End => "END",
        }
    }
}

const STATE_TYPES: &[(&str, StateType)] = &[
    ("EVENT", StateType::Event),
    ("OPERATION", StateType::Operation),
    ("SWITCH", StateType::Switch),
    ("DELAY", StateType::Delay),
    ("PARALLEL", StateType::Parallel),
    ("END", StateType::End),
];

/// What a state's `filter` says: the state's data filter, and the result path its actions use
/// unless they give their own.
#[derive(Default)]
pub(super) struct StateFilter {
    pub data_filter: TaskDataFilter,
    pub results_path: Option<JsonPath>,
    /// Where `result-path` was written, for states that have no actions to apply it to.
    pub results_span: Option<Span>,
}

/// What the type-specific part of a state lowers to.
pub(super) struct Lowered {
    pub kind: TaskKind,
    pub transition: Option<Transition>,
    /// The handlers taking the `next-state` of the actions' retries, with each action's position.
    pub retries: Vec<(Span, ErrorHandler)>,
    /// An END state's end.
    pub end: Option<End>,
}

impl Lowered {
    fn of(kind: TaskKind) -> Self {
        Lowered {
            kind,
            transition: None,
            retries: Vec::new(),
            end: None,
        }
    }
}

impl Kebab<'_> {
    /// The states of the workflow or of a branch. `starts_at` is the second draft's start; the
    /// first draft flags its start state itself. `owner` names the scope in messages.
    pub(super) fn scope(
        &mut self,
        node: &Node,
        starts_at: Option<&Spanned<String>>,
        owner: &str,
        owner_span: Span,
    ) -> Scope {
        let mut tasks: Vec<Task> = reader::list(node, "states", self.cx.diags)
            .iter()
            .filter_map(|item| self.state(item))
            .collect();
        // A state without a name (reported) is left out: nothing can transition to it. Unless
        // it is the start: then it stays, recovered, so that the scope starts where the file
        // says rather than at a state taken in its place, and no graph finding follows from a
        // guess.
        for task in tasks
            .iter_mut()
            .filter(|t| t.name.value.is_empty() && t.start.is_some())
        {
            task.recovered = true;
        }
        tasks.retain(|t| !t.name.value.is_empty() || t.start.is_some());
        let started = match starts_at {
            Some(starts_at) => self.mark_start(&mut tasks, starts_at, owner),
            // The second draft's missing `starts-at` is reported where it is missing.
            None if self.second() => false,
            None => {
                tasks.iter().any(|t| t.start.is_some())
                    || self.no_start_flag(&tasks, owner, owner_span)
            }
        };
        if !started && let Some(index) = likely_start(&tasks) {
            // Error recovery: the problem is reported; starting from the state nothing leads to
            // keeps validation from reporting the missing start again.
            let span = tasks[index].name.span;
            tasks[index].start = Some(Start {
                kind: StartKind::Default,
                span,
            });
        }
        Scope { tasks }
    }

    /// Reports the first draft's scope without a `start: true` state. Always false: nothing
    /// starts yet.
    fn no_start_flag(&mut self, tasks: &[Task], owner: &str, owner_span: Span) -> bool {
        let Some(first) = tasks.first() else {
            return false;
        };
        self.cx
            .diags
            .error(
                Code::NO_START,
                owner_span,
                format!("{owner} has no start state"),
            )
            .help(format!(
                "add `start: true` to the state that runs first (the first state listed is `{}`)",
                first.name.value
            ));
        false
    }

    /// Sets `start` on the state `starts-at` names; false when there is none. An unknown name
    /// is reported with the closest state name; when there is one it is taken as the start, so
    /// that nothing else is reported because of the typo.
    fn mark_start(&mut self, tasks: &mut [Task], starts_at: &Spanned<String>, owner: &str) -> bool {
        let start = Start {
            kind: StartKind::Default,
            span: starts_at.span,
        };
        if let Some(task) = tasks.iter_mut().find(|t| t.name.value == starts_at.value) {
            task.start = Some(start);
            return true;
        }
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        let suggestion = closest(&starts_at.value, &names).map(str::to_owned);
        let help = match &suggestion {
            Some(close) => format!("did you mean `{close}`?"),
            None if names.is_empty() => format!("add the states of {owner} under `states`"),
            None => format!(
                "name one of the states of {owner}: {}",
                crate::validate::suggest::list(names.iter().copied())
            ),
        };
        self.cx
            .diags
            .error(
                Code::UNKNOWN_TARGET,
                starts_at.span,
                format!(
                    "`starts-at` names `{}`, but {owner} has no state with that name",
                    starts_at.value
                ),
            )
            .help(help);
        if let Some(close) = suggestion
            && let Some(task) = tasks.iter_mut().find(|t| t.name.value == close)
        {
            task.start = Some(start);
            return true;
        }
        false
    }

    fn state(&mut self, node: &Node) -> Option<Task> {
        let mut map = MapReader::new(node, "state", self.cx.diags)?;
        // Reported here rather than by `finish`, which a state of unknown type skips.
        let name = match map.take(&["name"]) {
            Some(n) => {
                let name = reader::string(n, "name", self.cx.diags);
                if name.as_ref().is_some_and(|name| name.value.is_empty()) {
                    self.cx
                        .diags
                        .error(Code::INVALID_VALUE, n.span, "this state's `name` is empty")
                        .help(
                            "give the state a name, unique among the states of its scope: \
                             transitions and the start name states by it",
                        );
                }
                name
            }
            None => {
                self.cx
                    .diags
                    .error(Code::MISSING_FIELD, node.span, "this state has no `name`")
                    .help("add `name`, unique among the states of its scope");
                None
            }
        };
        let state_type = match map.take(&["type"]) {
            Some(n) => self.state_type(n),
            None => {
                let words = self.state_type_words();
                self.cx
                    .diags
                    .error(Code::MISSING_FIELD, node.span, "this state has no `type`")
                    .help(format!("add `type`: one of {words}"));
                None
            }
        };
        let start = self.start_flag(&mut map);
        let end = self.end_flag(&mut map);
        let filter = map
            .take(&["filter"])
            .map(|n| self.state_filter(n))
            .unwrap_or_default();
        let metadata = map.verbatim(&["metadata"]);

        let Some(state_type) = state_type else {
            // The type is missing or unknown (already reported): its fields cannot be told from
            // mistakes, so they are not reported, and a placeholder keeps the state's name
            // known to the transitions that lead to it.
            self.cx.recovered = true;
            let transition = match map.take(&["next-state"]) {
                _ if end.is_some() => None,
                Some(n) => self.next_state(n),
                None => Some(placeholder_transition(node.span)),
            };
            return Some(Task {
                name: name.unwrap_or_else(|| Spanned::new(String::new(), node.span)),
                id: None,
                kind: TaskKind::Inject {
                    data: serde_json::Value::Object(Default::default()),
                },
                data_filter: filter.data_filter,
                retry: Vec::new(),
                on_error: Vec::new(),
                start,
                transition,
                end,
                compensated_by: None,
                used_for_compensation: false,
                schemas: crate::ir::DataSchemas::default(),
                metadata,
                span: node.span,
                recovered: std::mem::take(&mut self.cx.recovered),
            });
        };

        let ends = end.is_some();
        let mut lowered = match state_type.value {
            StateType::Event => self.event_state(&mut map, ends),
            StateType::Operation => self.operation_state(&mut map, node, ends),
            StateType::Switch => Lowered::of(TaskKind::Switch(self.switch(&mut map))),
            StateType::Delay => self.delay_state(&mut map, node, ends),
            StateType::Parallel => self.parallel_state(&mut map, node, ends),
            StateType::End => self.end_state(&mut map, state_type.span),
        };
        map.finish(self.cx.diags);

        if let Some(results_path) = &filter.results_path
            && !apply_results_path(&mut lowered.kind, results_path)
            && let Some(span) = filter.results_span
        {
            not_allowed(
                self.cx.diags,
                span,
                format!(
                    "a {} state has no actions, so its filter has no `result-path`",
                    state_type.value.word()
                ),
                "remove `result-path` (a state's result path says where its actions' results \
                     go), or leave it at the default `$`",
            );
        }
        let mut task = Task {
            name: name.unwrap_or_else(|| Spanned::new(String::new(), node.span)),
            id: None,
            kind: lowered.kind,
            data_filter: filter.data_filter,
            retry: Vec::new(),
            on_error: Vec::new(),
            start,
            transition: lowered.transition,
            end: lowered.end.or(end),
            compensated_by: None,
            used_for_compensation: false,
            schemas: crate::ir::DataSchemas::default(),
            metadata,
            recovered: std::mem::take(&mut self.cx.recovered),
            span: node.span,
        };
        // Once an action's retries are spent, its handler takes the retry's `next-state`.
        crate::parse::lowering::attach_retry_handlers(&mut task, lowered.retries);
        Some(task)
    }

    /// The state types of this draft, for messages.
    fn state_type_words(&self) -> String {
        STATE_TYPES
            .iter()
            .filter(|(_, t)| !(self.second() && *t == StateType::End))
            .map(|(word, _)| *word)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `type`, in any case. END states exist only in the first draft.
    fn state_type(&mut self, node: &Node) -> Option<Spanned<StateType>> {
        let state_type = reader::enumerated(node, "state type", STATE_TYPES, self.cx.diags)?;
        if state_type.value == StateType::End && self.second() {
            self.cx
                .diags
                .error(
                    Code::UNKNOWN_VALUE,
                    node.span,
                    "the second draft has no END state",
                )
                .help(
                    "mark the state the workflow ends in with `end: true` (END states belong to \
                     the first draft, which marks its start with `start: true`)",
                );
            return None;
        }
        Some(state_type)
    }

    /// The first draft's `start: true`. The second draft names its start with `starts-at`.
    fn start_flag(&mut self, map: &mut MapReader<'_>) -> Option<Start> {
        let entry = map.take_entry(&["start"])?;
        if self.second() {
            not_allowed(
                self.cx.diags,
                entry.key_span,
                "the second draft has no `start` flag on states",
                "name the start state with `starts-at` (on the workflow, or on the branch)",
            );
            return None;
        }
        reader::boolean(&entry.value, "start", self.cx.diags)
            .filter(|start| *start)
            .map(|_| Start {
                kind: StartKind::Default,
                span: entry.value.span,
            })
    }

    /// The second draft's `end: true`. The first draft ends in END states.
    fn end_flag(&mut self, map: &mut MapReader<'_>) -> Option<End> {
        let entry = map.take_entry(&["end"])?;
        if !self.second() {
            not_allowed(
                self.cx.diags,
                entry.key_span,
                "the first draft has no `end` flag on states",
                "transition to a state of type END (`status: SUCCESS` or `FAILURE`) to end the \
                 workflow",
            );
            return None;
        }
        reader::boolean(&entry.value, "end", self.cx.diags)
            .filter(|end| *end)
            .map(|_| End {
                kind: EndKind::Default,
                status: None,
                compensate: false,
                span: entry.value.span,
            })
    }

    /// A state's `next-state`. On a state marked `end: true` it is ignored with a warning (the
    /// schemas require it even there); elsewhere it is required.
    pub(super) fn state_next(
        &mut self,
        map: &mut MapReader<'_>,
        node: &Node,
        ends: bool,
        what: &str,
    ) -> Option<Transition> {
        let entry = map.take_entry(&["next-state"]);
        match (entry, ends) {
            (Some(entry), true) => {
                let target = reader::string(&entry.value, "next-state", self.cx.diags);
                let target = target.map_or_else(String::new, |t| format!(" `{}`", t.value));
                self.cx
                    .diags
                    .warning(
                        Code::IGNORED_NEXT_STATE,
                        entry.key_span,
                        format!(
                            "the state ends here (`end: true`), so the `next-state`{target} of \
                             this {what} is ignored"
                        ),
                    )
                    .help(
                        "remove `next-state`, or remove `end: true` if the workflow should go on \
                         to that state",
                    );
                None
            }
            (Some(entry), false) => self.next_state(&entry.value),
            (None, true) => None,
            // A misspelled `next-state` is reported as such when the map is finished.
            (None, false) if misspells(node, "next-state") => {
                Some(placeholder_transition(map.span()))
            }
            (None, false) => {
                let help = if self.second() {
                    "add `next-state` naming the state that runs next, or `end: true` if the \
                     workflow ends here"
                } else {
                    "add `next-state` naming the state that runs next (the workflow ends by \
                     transitioning to an END state)"
                };
                self.cx
                    .diags
                    .error(
                        Code::MISSING_FIELD,
                        map.span(),
                        format!("this {what} has no `next-state`"),
                    )
                    .help(help);
                Some(placeholder_transition(map.span()))
            }
        }
    }

    fn operation_state(&mut self, map: &mut MapReader<'_>, node: &Node, ends: bool) -> Lowered {
        let action_mode = map
            .take(&["action-mode"])
            .map_or(ActionMode::Sequential, |n| self.action_mode(n));
        let mut retries = Vec::new();
        // Required, but may be empty (`actions: []`): the schemas set no minimum.
        let actions = match map.take(&["actions"]) {
            Some(n) => self.actions(n, &mut retries),
            None => {
                reader::missing_actions(map.span(), "OPERATION state", self.cx.diags);
                Vec::new()
            }
        };
        let transition = self.state_next(map, node, ends, "OPERATION state");
        Lowered {
            kind: TaskKind::Operation {
                action_mode,
                actions,
            },
            transition,
            retries,
            end: None,
        }
    }

    fn delay_state(&mut self, map: &mut MapReader<'_>, node: &Node, ends: bool) -> Lowered {
        // When it is missing or wrong (and reported), the placeholder keeps validation from
        // reporting it again.
        let time_delay = map
            .require(&["time-delay"])
            .and_then(|n| self.seconds_or_iso(n, "time-delay"))
            .or_else(|| {
                Some(crate::ir::DurationSpec {
                    text: String::new(),
                    millis: 0,
                    span: map.span(),
                })
            });
        let transition = self.state_next(map, node, ends, "DELAY state");
        Lowered {
            transition,
            ..Lowered::of(TaskKind::Delay { time_delay })
        }
    }

    fn parallel_state(&mut self, map: &mut MapReader<'_>, node: &Node, ends: bool) -> Lowered {
        let branches = map
            .take(&["branches"])
            .map(|n| self.branches(n))
            .unwrap_or_default();
        let transition = self.state_next(map, node, ends, "PARALLEL state");
        Lowered {
            transition,
            ..Lowered::of(TaskKind::Parallel {
                branches,
                completion: Completion::AllOf,
                // Both drafts: "an output array in which each element is the output for a branch".
                output: ParallelOutput::Array,
                n: None,
                state_timeout: None,
                branch_timeout: None,
            })
        }
    }

    fn branches(&mut self, node: &Node) -> Vec<Branch> {
        let mut out = Vec::new();
        for item in reader::list(node, "branches", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "branch", self.cx.diags) else {
                continue;
            };
            let name = map
                .require(&["name"])
                .and_then(|n| reader::string(n, "name", self.cx.diags));
            let starts_at = if self.second() {
                map.require(&["starts-at"])
                    .and_then(|n| reader::string(n, "starts-at", self.cx.diags))
            } else {
                None
            };
            let states = map.require(&["states"]);
            // Required by both schemas; their default (false) would run the branch detached.
            let wait_for_completion = map
                .require(&["wait-for-completion"])
                .and_then(|n| reader::boolean(n, "wait-for-completion", self.cx.diags))
                .unwrap_or(true);
            let span = map.span();
            map.finish(self.cx.diags);
            let name = name.unwrap_or_else(|| Spanned::new(String::new(), span));
            let owner = format!("branch `{}`", name.value);
            let scope = states
                .map(|n| self.scope(n, starts_at.as_ref(), &owner, span))
                .unwrap_or_default();
            out.push(Branch {
                name,
                scope,
                wait_for_completion,
                span,
            });
        }
        out
    }

    /// The first draft's END state: it ends the workflow with its `status`, and cannot
    /// transition anywhere.
    fn end_state(&mut self, map: &mut MapReader<'_>, type_span: Span) -> Lowered {
        let status = map.take(&["status"]).and_then(|n| {
            reader::enumerated(
                n,
                "END status",
                &[
                    ("SUCCESS", EndStatus::Success),
                    ("FAILURE", EndStatus::Failure),
                ],
                self.cx.diags,
            )
        });
        if let Some(entry) = map.take_entry(&["next-state"]) {
            not_allowed(
                self.cx.diags,
                entry.key_span,
                "an END state ends the workflow, so it has no `next-state`",
                "remove `next-state`, or give the state another type if the workflow should go on",
            );
        }
        Lowered {
            end: Some(End {
                kind: EndKind::Default,
                status,
                compensate: false,
                span: type_span,
            }),
            ..Lowered::of(TaskKind::Inject {
                data: serde_json::Value::Object(Default::default()),
            })
        }
    }

    /// `filter: {input-path, result-path, output-path}` on a state (the drafts' InputPath,
    /// ResultPath and OutputPath, in either spelling).
    fn state_filter(&mut self, node: &Node) -> StateFilter {
        let Some(mut map) = MapReader::new(node, "state filter", self.cx.diags) else {
            return StateFilter::default();
        };
        let input = map
            .take(super::actions::INPUT_PATH)
            .and_then(|n| self.filter_path(n, "input-path"));
        let results = map.take_entry(super::actions::RESULT_PATH);
        let output = map
            .take(super::actions::OUTPUT_PATH)
            .and_then(|n| self.filter_path(n, "output-path"));
        map.finish(self.cx.diags);
        let results_path = results.and_then(|e| self.filter_path(&e.value, "result-path"));
        StateFilter {
            data_filter: TaskDataFilter { input, output },
            results_span: results.map(|e| e.key_span),
            results_path,
        }
    }
}

/// The state a scope most likely starts with: the first one no transition leads to, else the
/// first one.
fn likely_start(tasks: &[Task]) -> Option<usize> {
    // A set: one look-up per state keeps this linear in the number of states.
    let targets: std::collections::HashSet<&str> = tasks
        .iter()
        .flat_map(Task::transitions)
        .map(|t| t.next.as_str())
        .collect();
    tasks
        .iter()
        .position(|t| !targets.contains(&t.name.as_str()))
        .or(if tasks.is_empty() { None } else { Some(0) })
}

/// True when `node` has a key that is not `key` but close enough to be a misspelling of it.
fn misspells(node: &Node, key: &'static str) -> bool {
    match &node.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .any(|e| !e.key.eq_ignore_ascii_case(key) && closest(&e.key, &[key]).is_some()),
        _ => false,
    }
}

/// Gives every action of the state without a result path of its own the state's one. False
/// when the state has no actions to give it to.
fn apply_results_path(kind: &mut TaskKind, path: &JsonPath) -> bool {
    let actions: Vec<&mut crate::ir::Action> = match kind {
        TaskKind::Operation { actions, .. } => actions.iter_mut().collect(),
        TaskKind::Event { events_actions, .. } => events_actions
            .iter_mut()
            .flat_map(|e| e.actions.iter_mut())
            .collect(),
        _ => return false,
    };
    for action in actions {
        if action.results_path.is_none() {
            action.results_path = Some(path.clone());
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::likely_start;
    use crate::validate::test_support::chain_back;

    #[test]
    fn the_likely_start_of_a_huge_scope_is_found_in_linear_time() {
        // Only the last of 200,000 states is no state's target. A look-up in a list of targets
        // per state would compare 2·10^10 names.
        const STATES: u32 = 200_000;
        assert_eq!(likely_start(&chain_back(STATES)), Some(STATES as usize - 1));
    }
}
