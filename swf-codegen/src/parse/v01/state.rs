//! One state: the fields every state has, the fields of its type, and its `loop`.

use super::V01;
use super::common::{Filter, Retries};
use crate::diagnostic::Code;
use crate::ir::{
    Action, Branch, Completion, End, EndKind, ParallelOutput, Scope, Start, StartKind, Task,
    TaskDataFilter, TaskKind,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Entry, Node};
use crate::source::Spanned;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateType {
    Event,
    Operation,
    Switch,
    Delay,
    Parallel,
    SubFlow,
    Relay,
}

const STATE_TYPES: &[(&str, StateType)] = &[
    ("EVENT", StateType::Event),
    ("OPERATION", StateType::Operation),
    ("SWITCH", StateType::Switch),
    ("DELAY", StateType::Delay),
    ("PARALLEL", StateType::Parallel),
    ("SUBFLOW", StateType::SubFlow),
    ("RELAY", StateType::Relay),
];

impl StateType {
    /// "an EVENT state", "a RELAY state", for messages.
    fn a_state(self) -> String {
        let word = STATE_TYPES
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("", |(word, _)| word);
        let article = if word.starts_with(['E', 'O']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {word} state")
    }

    /// The states whose type names where they go next in other fields (event entries, choices).
    fn has_own_transitions(self) -> bool {
        matches!(self, StateType::Event | StateType::Switch)
    }
}

impl V01<'_> {
    pub(super) fn state(&mut self, node: &Node) -> Option<Task> {
        let mut map = MapReader::new(node, "state", self.cx.diags)?;
        let name = map
            .require(&["name"])
            .and_then(|n| reader::string(n, "name", self.cx.diags));
        let id = map
            .take(&["id"])
            .and_then(|n| reader::string(n, "id", self.cx.diags));
        let state_type = map
            .require(&["type"])
            .and_then(|n| reader::enumerated(n, "state type", STATE_TYPES, self.cx.diags))
            .map(|t| t.value);
        let end = map.take(&["end"]).and_then(|n| self.end(n));
        let transition_entry = map.take_entry(&["transition"]);
        let filter = map
            .take(&["filter"])
            .map(|n| self.filter(n, "state filter"))
            .unwrap_or_default();
        let loop_entry = map.take_entry(&["loop"]);
        let on_error = map
            .take(&["onError"])
            .map(|n| self.error_handlers(n))
            .unwrap_or_default();
        let metadata = map.verbatim(&["metadata"]);

        let transition = match (transition_entry, state_type) {
            (Some(entry), Some(t)) if t.has_own_transitions() => {
                self.own_transitions(entry, t);
                None
            }
            (Some(entry), _) => self.transition(&entry.value),
            (None, _) => None,
        };
        let mut retries = Retries::default();
        let mut kind = match state_type {
            Some(t) => {
                let kind = self.state_kind(t, &mut map, &mut retries);
                map.finish(self.cx.diags);
                kind
            }
            // An unknown (or missing) type is reported: the state stays, with its name and
            // transition, so that nothing that names it or follows it is reported too; its
            // other keys are not checked against a schema nobody knows.
            None => {
                map.finish_missing_only(self.cx.diags);
                self.cx.recovered = true;
                TaskKind::Inject {
                    data: serde_json::Value::Object(serde_json::Map::new()),
                }
            }
        };
        self.place_results(&mut kind, &filter, state_type);
        if let (Some(end), Some(name)) = (&end, &name) {
            self.ending_entries(&kind, end, name);
        }
        let looping = loop_entry.and_then(|entry| self.looping(entry, state_type));

        let mut task = Task {
            name: name?,
            id,
            kind,
            data_filter: TaskDataFilter {
                input: filter.input,
                output: filter.output,
            },
            retry: Vec::new(),
            on_error,
            start: None,
            transition,
            end,
            compensated_by: None,
            used_for_compensation: false,
            schemas: crate::ir::DataSchemas::default(),
            metadata,
            recovered: std::mem::take(&mut self.cx.recovered),
            span: node.span,
        };
        // Once an action's retries are spent, the handler its retry's transition became
        // decides, before the state's own handlers.
        crate::parse::lowering::attach_retry_handlers(&mut task, retries.handlers);
        Some(match looping {
            Some(looping) => wrap_in_loop(task, looping),
            None => task,
        })
    }

    /// TRANSITION_AND_END for each entry transition of an EVENT state that ends: the state would
    /// end, and the entry's transition would never be taken.
    fn ending_entries(&mut self, kind: &TaskKind, end: &End, name: &Spanned<String>) {
        let TaskKind::Event { events_actions, .. } = kind else {
            return;
        };
        for transition in events_actions.iter().filter_map(|e| e.transition.as_ref()) {
            self.cx
                .diags
                .error(
                    Code::TRANSITION_AND_END,
                    transition.span,
                    format!(
                        "EVENT state `{}` ends (`end: true` at line {}), but this entry has a \
                         `transition`",
                        name.value, end.span.line
                    ),
                )
                .help(format!(
                    "remove `end: true` if the state should continue to `{}`, or remove the \
                     entries' transitions if it should finish",
                    transition.next.value
                ));
        }
    }

    /// E0132 for a `transition` on a state whose type transitions through other fields.
    fn own_transitions(&mut self, entry: &Entry, state_type: StateType) {
        let (what, help) = match state_type {
            StateType::Event => (
                "an EVENT state has no `transition` of its own",
                "give each `eventActions` entry its `transition`: the entry whose condition \
                 holds decides where the workflow goes",
            ),
            _ => (
                "a SWITCH state has no `transition` of its own",
                "give each choice its `transition`, and the state a `default` transition for \
                 when no choice matches",
            ),
        };
        self.not_allowed(entry.key_span, what.to_owned(), help);
    }

    fn state_kind(
        &mut self,
        state_type: StateType,
        map: &mut MapReader<'_>,
        retries: &mut Retries,
    ) -> TaskKind {
        match state_type {
            StateType::Event => self.event_state(map, retries),
            StateType::Operation => {
                let action_mode = self.action_mode(map.take(&["actionMode"]));
                // Required, but may be empty: the schema sets no minimum.
                let actions = match map.take(&["actions"]) {
                    Some(n) => self.actions(n, retries),
                    None => {
                        reader::missing_actions(map.span(), "OPERATION state", self.cx.diags);
                        Vec::new()
                    }
                };
                TaskKind::Operation {
                    action_mode,
                    actions,
                }
            }
            StateType::Switch => TaskKind::Switch(self.switch(map)),
            StateType::Delay => TaskKind::Delay {
                time_delay: map
                    .take(&["timeDelay"])
                    .and_then(|n| self.cx.duration(n, "timeDelay")),
            },
            StateType::Parallel => TaskKind::Parallel {
                branches: map
                    .take(&["branches"])
                    .map(|n| self.branches(n))
                    .unwrap_or_default(),
                completion: Completion::AllOf,
                output: ParallelOutput::Merge,
                n: None,
                state_timeout: None,
                branch_timeout: None,
            },
            StateType::SubFlow => TaskKind::SubFlow {
                workflow_id: map
                    .take(&["workflowId"])
                    .and_then(|n| reader::string(n, "workflowId", self.cx.diags)),
                // The table calls it required, the schema gives it a default of false.
                wait_for_completion: map
                    .take(&["waitForCompletion"])
                    .and_then(|n| reader::boolean(n, "waitForCompletion", self.cx.diags))
                    .unwrap_or(false),
            },
            StateType::Relay => self.relay(map),
        }
    }

    /// RELAY: `inject` is merged into the state's data (nothing when absent).
    fn relay(&mut self, map: &mut MapReader<'_>) -> TaskKind {
        if let Some(actions) = map.take_entry(&["actions"]) {
            self.not_allowed(
                actions.key_span,
                "a RELAY state performs no actions".to_owned(),
                "use an OPERATION state (`type: OPERATION`) to call functions, or remove \
                 `actions` to only relay (and `inject`) data",
            );
        }
        let data = match map.take(&["inject"]) {
            Some(n) => {
                let data = n.to_json();
                if !data.is_object() {
                    reader::wrong_type(n, "inject", "a mapping", self.cx.diags);
                }
                data
            }
            None => serde_json::Value::Object(Default::default()),
        };
        TaskKind::Inject { data }
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
            let starts_at = map
                .require(&["startsAt"])
                .and_then(|n| reader::string(n, "startsAt", self.cx.diags));
            let states = map.require(&["states"]);
            // Required by both the table and the schema: whether the parallel state waits for
            // the branch is too consequential to default.
            let wait_for_completion = map
                .require(&["waitForCompletion"])
                .and_then(|n| reader::boolean(n, "waitForCompletion", self.cx.diags))
                .unwrap_or(true);
            let span = map.span();
            map.finish(self.cx.diags);
            let scope = states
                .map(|n| self.scope(n, starts_at.as_ref(), false))
                .unwrap_or_default();
            out.push(Branch {
                name: name.unwrap_or_else(|| super::fallback(span)),
                scope,
                wait_for_completion,
                span,
            });
        }
        out
    }

    /// The state filter's `resultPath` places the results of the state's actions: it becomes
    /// the results path of each action that has none. A state without actions has no result to
    /// place.
    fn place_results(
        &mut self,
        kind: &mut TaskKind,
        filter: &Filter,
        state_type: Option<StateType>,
    ) {
        let (Some(result), Some(key)) = (&filter.result, filter.result_key) else {
            return;
        };
        let actions: Vec<&mut Action> = match kind {
            TaskKind::Operation { actions, .. } => actions.iter_mut().collect(),
            TaskKind::Event { events_actions, .. } => events_actions
                .iter_mut()
                .flat_map(|e| e.actions.iter_mut())
                .collect(),
            _ => {
                let state = state_type.map_or_else(|| "this state".to_owned(), StateType::a_state);
                self.not_allowed(
                    key,
                    format!("{state} performs no actions, so its filter has no `resultPath`"),
                    "remove `resultPath`: `inputPath` selects the state's input and \
                     `outputPath` its output",
                );
                return;
            }
        };
        for action in actions {
            if action.results_path.is_none() {
                action.results_path = Some(result.clone());
            }
        }
    }

    /// `loop: {inputCollection, outputCollection, completionCondition, timeDelay}`, as the
    /// foreach task that will run the state (its `scope` filled in by [`wrap_in_loop`]).
    fn looping(&mut self, entry: &Entry, state_type: Option<StateType>) -> Option<TaskKind> {
        if let Some(t) = state_type.filter(|t| t.has_own_transitions()) {
            let why = match t {
                StateType::Event => {
                    "each iteration could take a different entry's transition; loop over an \
                     OPERATION state that follows the EVENT state instead"
                }
                _ => {
                    "a SWITCH state only chooses where to go next; loop over the states it leads to"
                }
            };
            self.not_allowed(
                entry.key_span,
                format!("{} cannot have a `loop`", t.a_state()),
                why,
            );
            return None;
        }
        let mut map = MapReader::new(&entry.value, "loop", self.cx.diags)?;
        let input_collection = map
            .require(&["inputCollection"])
            .and_then(|n| self.cx.path(n, "inputCollection"));
        let output_collection = map
            .take(&["outputCollection"])
            .and_then(|n| self.cx.path(n, "outputCollection"));
        let completion_condition = map
            .take(&["completionCondition"])
            .and_then(|n| self.expression(n));
        let time_delay = map
            .take(&["timeDelay"])
            .and_then(|n| self.cx.duration(n, "timeDelay"));
        map.finish(self.cx.diags);
        Some(TaskKind::ForEach {
            input_collection,
            input_parameter: None,
            element_as_input: true,
            output_collection,
            max: None,
            time_delay,
            completion_condition,
            scope: Scope::default(),
        })
    }
}

/// A looping state becomes a foreach task of the same name that keeps everything about how the
/// state is entered and left (start, filter, transition, end, onError), around a copy of the
/// state that runs once per element and ends there. The actions' retries stay with the copy, so
/// each call is retried on its own.
fn wrap_in_loop(state: Task, mut kind: TaskKind) -> Task {
    let body = Task {
        start: Some(Start {
            kind: StartKind::Default,
            span: state.span,
        }),
        end: Some(End {
            kind: EndKind::Default,
            status: None,
            compensate: false,
            span: state.span,
        }),
        data_filter: TaskDataFilter::default(),
        transition: None,
        on_error: Vec::new(),
        ..state.clone()
    };
    if let TaskKind::ForEach { scope, .. } = &mut kind {
        scope.tasks.push(body);
    }
    // Out of the loop, a failure is the body's: the handlers of the body's actions apply to it.
    let on_error = state
        .on_error
        .iter()
        .cloned()
        .map(|handler| crate::ir::ErrorHandler {
            action: None,
            ..handler
        })
        .collect();
    Task {
        kind,
        retry: Vec::new(),
        on_error,
        ..state
    }
}
